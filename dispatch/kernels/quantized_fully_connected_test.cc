// INT8 / UINT8 FULLY_CONNECTED (the GEMM path) against a naive loop with
// TFLite's reference integer semantics: outputs must match exactly over
// random shapes (K off the vector width, N off the panel width, several
// rows), per-tensor weights with a zero point and per-channel weights,
// constant and run-time weights, fused activations, 1 and 3 threads.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;

struct FcCase {
  int rows = 1, k = 1, n = 1;
  bool per_channel = false, const_weights = true, has_bias = true;
  bool keep_dims = false;
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  int threads = 1;
  bool wild_input_zp = false;  // outside the type's range (no GEMM)
};

template <typename T>
void RunFc(const FcCase& c, std::mt19937& rng, int iter) {
  const tfl::TensorType type =
      std::is_same_v<T, int8_t> ? tfl::TensorType_INT8 : tfl::TensorType_UINT8;
  const int lo = std::numeric_limits<T>::min();
  const int hi = std::numeric_limits<T>::max();
  const int mid = (lo + hi + 1) / 2;
  const float in_s = 0.03f,
              out_s = std::uniform_real_distribution<float>(0.02f, 0.3f)(rng);
  const int in_zp = c.wild_input_zp ? RandomInt(rng, 300, 400)
                                    : RandomInt(rng, mid - 20, mid + 20);
  const int out_zp = RandomInt(rng, mid - 20, mid + 20);
  const int nscales = c.per_channel ? c.n : 1;
  std::vector<float> ws(nscales);
  for (auto& s : ws) {
    s = std::uniform_real_distribution<float>(0.001f, 0.02f)(rng);
  }
  const int w_zp = c.per_channel ? 0 : RandomInt(rng, mid - 30, mid + 30);
  std::vector<T> wv(int64_t{c.n} * c.k), xv(int64_t{c.rows} * c.k);
  for (auto& v : wv) v = static_cast<T>(RandomInt(rng, lo, hi));
  for (auto& v : xv) v = static_cast<T>(RandomInt(rng, lo, hi));
  std::vector<int32_t> bv(c.n, 0);
  if (c.has_bias) {
    for (auto& v : bv) v = RandomInt(rng, -3000, 3000);
  }

  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  // Two leading dims when keep_num_dims, so rows fold several dims.
  const int b0 = c.keep_dims && c.rows % 2 == 0 ? 2 : 1;
  const std::vector<int32_t> xs =
      c.keep_dims ? std::vector<int32_t>{b0, c.rows / b0, c.k}
                  : std::vector<int32_t>{c.rows, c.k};
  TensorId x = g.Input("x", type, xs);
  TensorId tw = c.const_weights ? g.Constant<T>("w", {c.n, c.k}, wv)
                                : g.Input("w", type, {c.n, c.k});
  TensorId tb = c.has_bias ? g.Constant<int32_t>("b", {c.n}, bv) : kNoTensor;
  g.Quantize(x, in_s, in_zp);
  std::vector<float> bs(nscales);
  for (int i = 0; i < nscales; ++i) bs[i] = in_s * ws[i];
  if (c.per_channel) {
    std::vector<int64_t> zeros(c.n, 0);
    g.QuantizePerChannel(tw, ws, zeros, 0);
    if (c.has_bias) g.QuantizePerChannel(tb, bs, zeros, 0);
  } else {
    g.Quantize(tw, ws[0], w_zp);
    if (c.has_bias) g.Quantize(tb, bs[0], 0);
  }
  tfl::FullyConnectedOptionsT o;
  o.fused_activation_function = c.act;
  o.keep_num_dims = c.keep_dims;
  std::vector<int32_t> ys = xs;
  ys.back() = c.n;
  if (!c.keep_dims) ys = {c.rows, c.n};
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, tw, tb)
                   .Options(o)
                   .Out("y", type, ys);
  g.Quantize(y, out_s, out_zp).Output(y);
  auto rt = testing::LoadBuilt(mb, c.threads);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput(**rt, 0, xv);
  if (!c.const_weights) testing::SetInput(**rt, 1, wv);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<T> got = testing::GetOutput<T>(**rt, 0);
  ASSERT_EQ(got.size(), static_cast<size_t>(c.rows) * c.n);

  int32_t act_min = 0, act_max = 0;
  ASSERT_TRUE(kernels::ActivationRangeQuantized(c.act, type, out_s, out_zp,
                                                &act_min, &act_max)
                  .ok());
  for (int j = 0; j < c.n; ++j) {
    const kernels::QuantizedMultiplier m = kernels::QuantizeMultiplier(
        static_cast<double>(in_s) *
        static_cast<double>(ws[c.per_channel ? j : 0]) /
        static_cast<double>(out_s));
    for (int r = 0; r < c.rows; ++r) {
      int32_t acc = 0;
      for (int i = 0; i < c.k; ++i) {
        acc += (int32_t{wv[int64_t{j} * c.k + i]} - w_zp) *
               (int32_t{xv[int64_t{r} * c.k + i]} - in_zp);
      }
      acc += bv[j];
      int32_t v = kernels::MultiplyByQuantizedMultiplierSingleRounding(
                      acc, m.multiplier, m.shift) +
                  out_zp;
      v = std::min(act_max, std::max(act_min, v));
      ASSERT_EQ(int{got[int64_t{r} * c.n + j]}, v)
          << "iteration " << iter << " rows " << c.rows << " k " << c.k << " n "
          << c.n << " per_channel " << c.per_channel << " const "
          << c.const_weights << " threads " << c.threads << " at row " << r
          << " column " << j;
    }
  }
}

FcCase RandomCase(std::mt19937& rng) {
  FcCase c;
  c.rows = RandomInt(rng, 1, 20);
  c.k = RandomInt(rng, 1, 70);
  c.n = RandomInt(rng, 1, 50);
  c.per_channel = RandomInt(rng, 0, 1) == 1;
  c.const_weights = RandomInt(rng, 0, 2) != 0;
  c.has_bias = RandomInt(rng, 0, 3) != 0;
  c.keep_dims = RandomInt(rng, 0, 3) == 0;
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  c.act = acts[RandomInt(rng, 0, 3)];
  c.threads = RandomInt(rng, 0, 1) == 1 ? 3 : 1;
  return c;
}

TEST(QuantizedFullyConnectedTest, Int8MatchesNaiveLoopExactly) {
  std::mt19937 rng = testing::SeededRng(10);
  for (int iter = 0; iter < 150; ++iter) {
    RunFc<int8_t>(RandomCase(rng), rng, iter);
    if (HasFatalFailure()) return;
  }
}

TEST(QuantizedFullyConnectedTest, Uint8MatchesNaiveLoopExactly) {
  std::mt19937 rng = testing::SeededRng(11);
  for (int iter = 0; iter < 60; ++iter) {
    FcCase c = RandomCase(rng);
    c.per_channel = false;  // UINT8 weights are per-tensor
    RunFc<uint8_t>(c, rng, iter);
    if (HasFatalFailure()) return;
  }
}

TEST(QuantizedFullyConnectedTest, ZeroPointOutsideTypeRangeMatchesNaiveLoop) {
  std::mt19937 rng = testing::SeededRng(14);
  for (int iter = 0; iter < 10; ++iter) {
    FcCase c = RandomCase(rng);
    c.wild_input_zp = true;
    RunFc<int8_t>(c, rng, iter);
    if (HasFatalFailure()) return;
  }
}

TEST(QuantizedFullyConnectedTest, LargeShapesMatchNaiveLoopExactly) {
  std::mt19937 rng = testing::SeededRng(12);
  for (int iter = 0; iter < 6; ++iter) {
    FcCase c = RandomCase(rng);
    c.rows = RandomInt(rng, 40, 130);
    c.k = RandomInt(rng, 100, 300);
    c.n = RandomInt(rng, 60, 200);
    RunFc<int8_t>(c, rng, iter);
    if (HasFatalFailure()) return;
  }
}

// INT8 BATCH_MATMUL against the reference loop (double rounding, no
// activation), with adjoints and a broadcast rhs.
void RunBatchMatMul(std::mt19937& rng, int iter, int threads) {
  const int batch = RandomInt(rng, 1, 4), m = RandomInt(rng, 1, 20);
  const int k = RandomInt(rng, 1, 40), n = RandomInt(rng, 1, 40);
  const bool adj_x = RandomInt(rng, 0, 1) == 1;
  const bool adj_y = RandomInt(rng, 0, 1) == 1;
  const int rhs_batch = RandomInt(rng, 0, 1) == 1 ? batch : 1;
  const float ls = 0.05f, rs = 0.04f,
              os = std::uniform_real_distribution<float>(0.05f, 0.5f)(rng);
  const int lzp = RandomInt(rng, -20, 20), rzp = RandomInt(rng, -20, 20);
  const int ozp = RandomInt(rng, -20, 20);
  std::vector<int8_t> lv(int64_t{batch} * m * k),
      rv(int64_t{rhs_batch} * k * n);
  for (auto& v : lv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  for (auto& v : rv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT8,
                       adj_x ? std::vector<int32_t>{batch, k, m}
                             : std::vector<int32_t>{batch, m, k});
  TensorId y = g.Input("y", tfl::TensorType_INT8,
                       adj_y ? std::vector<int32_t>{rhs_batch, n, k}
                             : std::vector<int32_t>{rhs_batch, k, n});
  g.Quantize(x, ls, lzp).Quantize(y, rs, rzp);
  tfl::BatchMatMulOptionsT o;
  o.adj_x = adj_x, o.adj_y = adj_y;
  TensorId z = g.Op(tfl::BuiltinOperator_BATCH_MATMUL)
                   .In(x, y)
                   .Options(o)
                   .Out("z", tfl::TensorType_INT8, {batch, m, n});
  g.Quantize(z, os, ozp).Output(z);
  auto rt = testing::LoadBuilt(mb, threads);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput(**rt, 0, lv);
  testing::SetInput(**rt, 1, rv);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<int8_t> got = testing::GetOutput<int8_t>(**rt, 0);
  ASSERT_EQ(got.size(), static_cast<size_t>(batch) * m * n);
  const kernels::QuantizedMultiplier mult = kernels::QuantizeMultiplier(
      static_cast<double>(ls) * static_cast<double>(rs) /
      static_cast<double>(os));
  for (int b = 0; b < batch; ++b) {
    const int rb = rhs_batch == 1 ? 0 : b;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        int32_t acc = 0;
        for (int kk = 0; kk < k; ++kk) {
          const int8_t a =
              lv[int64_t{b} * m * k +
                 (adj_x ? int64_t{kk} * m + i : int64_t{i} * k + kk)];
          const int8_t w =
              rv[int64_t{rb} * k * n +
                 (adj_y ? int64_t{j} * k + kk : int64_t{kk} * n + j)];
          acc += (int32_t{a} - lzp) * (int32_t{w} - rzp);
        }
        const int32_t v =
            std::min(127, std::max(-128, kernels::MultiplyByQuantizedMultiplier(
                                             acc, mult.multiplier, mult.shift) +
                                             ozp));
        ASSERT_EQ(int{got[(int64_t{b} * m + i) * n + j]}, v)
            << "iteration " << iter << " batch " << b << " row " << i
            << " column " << j << " m " << m << " k " << k << " n " << n
            << " adj " << adj_x << adj_y << " threads " << threads;
      }
    }
  }
}

TEST(QuantizedBatchMatMulTest, Int8MatchesNaiveLoopExactly) {
  std::mt19937 rng = testing::SeededRng(13);
  for (int iter = 0; iter < 80; ++iter) {
    RunBatchMatMul(rng, iter, iter % 2 == 0 ? 1 : 3);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace graft
