// INT8 / UINT8 FULLY_CONNECTED (the GEMM path) against a naive loop with
// TFLite's reference integer semantics: outputs must match exactly over
// random shapes (K off the vector width, N off the panel width, several
// rows), per-tensor weights with a zero point and per-channel weights,
// constant and run-time weights, fused activations, 1 and 3 threads.
// Quantized BATCH_MATMUL (INT8, and INT16 x INT8 with per-channel rhs,
// adjoints and broadcast batch dims) against TFLite's reference arithmetic.
#include <algorithm>
#include <cmath>
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

// 16x8: the rescale rounds once, half away from zero (ai-edge-litert's
// reference FULLY_CONNECTED), so exact ties go outward in both directions.
TEST(QuantizedFullyConnectedTest, Int16TiesRoundAwayFromZero) {
  for (bool per_channel : {false, true}) {
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId x = g.Input("x", tfl::TensorType_INT16, {4, 1});
    TensorId w = g.Constant<int8_t>("w", {2, 1}, {1, 3});
    TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED, 7)
                     .In(x, w)
                     .Out("y", tfl::TensorType_INT16, {4, 2});
    g.Quantize(x, 1.0f, 0).Quantize(y, 1.0f, 0).Output(y);
    if (per_channel) {
      g.QuantizePerChannel(w, {1.0f / 128, 1.0f / 128}, {0, 0}, 0);
    } else {
      g.Quantize(w, 1.0f / 128, 0);
    }
    auto rt = testing::LoadBuilt(mb);
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput<int16_t>(**rt, 0, {-64, 64, -192, 1});
    ASSERT_TRUE((*rt)->Invoke().ok());
    // x * w / 128: -0.5, -1.5 | 0.5, 1.5 | -1.5, -4.5 | 1/128, 3/128.
    EXPECT_EQ(testing::GetOutput<int16_t>(**rt, 0),
              (std::vector<int16_t>{-1, -2, 1, 2, -2, -5, 0, 0}))
        << "per_channel " << per_channel;
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
  // TFLite multiplies the two scales in float
  // (GetQuantizedConvolutionMultipler).
  const kernels::QuantizedMultiplier mult = kernels::QuantizeMultiplier(
      static_cast<double>(ls * rs) / static_cast<double>(os));
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

// INT16 x INT8 -> INT16 BATCH_MATMUL (zero points 0) against TFLite's
// reference arithmetic: int64 sums, the int64 MultiplyByQuantizedMultiplier
// of (float) lhs_scale * rhs_scale / output_scale, the int16 clamp. An rhs
// with several scales counts with TFLite's legacy per-tensor scale, 0.
struct Bmm16x8Case {
  int m = 1, k = 1, n = 1;
  std::vector<int32_t> lhs_batch, rhs_batch;  // broadcast against each other
  bool adj_x = false, adj_y = false;
  bool const_rhs = true;
  bool extreme = false;  // every value at its type's minimum
  int threads = 1;
};

void RunBatchMatMul16x8(const Bmm16x8Case& c, std::mt19937& rng, int iter) {
  // Output batch dims, and each operand's batch index per output batch.
  const size_t rank = std::max(c.lhs_batch.size(), c.rhs_batch.size());
  auto extend = [&](std::vector<int32_t> d) {
    d.insert(d.begin(), rank - d.size(), 1);
    return d;
  };
  const std::vector<int32_t> lb = extend(c.lhs_batch), rb = extend(c.rhs_batch);
  std::vector<int32_t> ob(rank);
  for (size_t d = 0; d < rank; ++d) ob[d] = std::max(lb[d], rb[d]);
  int64_t nb = 1, lnb = 1, rnb = 1;
  for (size_t d = 0; d < rank; ++d) nb *= ob[d], lnb *= lb[d], rnb *= rb[d];

  const float ls = 3.0518506e-05f;
  const float rs = std::uniform_real_distribution<float>(1e-3f, 1e-2f)(rng);
  const float os = std::uniform_real_distribution<float>(0.5f, 4.0f)(rng) *
                   1e-4f * std::sqrt(static_cast<float>(c.k));
  std::vector<int16_t> lv(lnb * c.m * c.k);
  std::vector<int8_t> rv(rnb * c.k * c.n);
  for (auto& v : lv) {
    v = static_cast<int16_t>(c.extreme ? -32768
                                       : RandomInt(rng, -32768, 32767));
  }
  for (auto& v : rv) {
    v = static_cast<int8_t>(c.extreme ? -128 : RandomInt(rng, -128, 127));
  }

  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  auto with = [](std::vector<int32_t> batch, int a, int b) {
    batch.push_back(a);
    batch.push_back(b);
    return batch;
  };
  TensorId x = g.Input(
      "x", tfl::TensorType_INT16,
      c.adj_x ? with(c.lhs_batch, c.k, c.m) : with(c.lhs_batch, c.m, c.k));
  const std::vector<int32_t> ys =
      c.adj_y ? with(c.rhs_batch, c.n, c.k) : with(c.rhs_batch, c.k, c.n);
  TensorId y = c.const_rhs ? g.Constant<int8_t>("y", ys, rv)
                           : g.Input("y", tfl::TensorType_INT8, ys);
  g.Quantize(x, ls, 0).Quantize(y, rs, 0);
  tfl::BatchMatMulOptionsT o;
  o.adj_x = c.adj_x, o.adj_y = c.adj_y;
  TensorId z = g.Op(tfl::BuiltinOperator_BATCH_MATMUL)
                   .In(x, y)
                   .Options(o)
                   .Out("z", tfl::TensorType_INT16, with(ob, c.m, c.n));
  g.Quantize(z, os, 0).Output(z);
  auto rt = testing::LoadBuilt(mb, c.threads);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput(**rt, 0, lv);
  if (!c.const_rhs) testing::SetInput(**rt, 1, rv);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<int16_t> got = testing::GetOutput<int16_t>(**rt, 0);
  ASSERT_EQ(got.size(), static_cast<size_t>(nb * c.m * c.n));

  // The scales' product in float, as TFLite's GetQuantizedConvolutionMultipler.
  const kernels::QuantizedMultiplier mult = kernels::QuantizeMultiplier(
      static_cast<double>(ls * rs) / static_cast<double>(os));
  for (int64_t b = 0; b < nb; ++b) {
    // The operands' flat batch indices (a batch dim of 1 broadcasts).
    int64_t rem = b, li = 0, ri = 0, lstride = 1, rstride = 1;
    for (int d = static_cast<int>(rank) - 1; d >= 0; --d) {
      const int64_t idx = rem % ob[d];
      rem /= ob[d];
      li += (lb[d] == 1 ? 0 : idx) * lstride;
      ri += (rb[d] == 1 ? 0 : idx) * rstride;
      lstride *= lb[d];
      rstride *= rb[d];
    }
    for (int i = 0; i < c.m; ++i) {
      for (int j = 0; j < c.n; ++j) {
        int64_t acc = 0;
        for (int kk = 0; kk < c.k; ++kk) {
          const int16_t a =
              lv[li * c.m * c.k +
                 (c.adj_x ? int64_t{kk} * c.m + i : int64_t{i} * c.k + kk)];
          const int8_t w =
              rv[ri * c.k * c.n +
                 (c.adj_y ? int64_t{j} * c.k + kk : int64_t{kk} * c.n + j)];
          acc += int64_t{a} * int64_t{w};
        }
        const int32_t v = std::min(
            32767, std::max(-32768, kernels::MultiplyByQuantizedMultiplier(
                                        acc, mult.multiplier, mult.shift)));
        ASSERT_EQ(int{got[(b * c.m + i) * c.n + j]}, v)
            << "iteration " << iter << " batch " << b << " row " << i
            << " column " << j << " m " << c.m << " k " << c.k << " n " << c.n
            << " adj " << c.adj_x << c.adj_y
            << " const " << c.const_rhs << " threads " << c.threads;
      }
    }
  }
}

Bmm16x8Case RandomBmm16x8Case(std::mt19937& rng) {
  Bmm16x8Case c;
  c.m = RandomInt(rng, 1, 40);
  c.k = RandomInt(rng, 1, 90);
  c.n = RandomInt(rng, 1, 30);
  // Up to two batch dims; either side may have 1s (broadcast) or fewer
  // dims (a 2-D rhs, the einsum case, serves every lhs batch).
  const int rank = RandomInt(rng, 0, 2);
  for (int d = 0; d < rank; ++d) {
    const int dim = RandomInt(rng, 1, 3);
    c.lhs_batch.push_back(RandomInt(rng, 0, 2) == 0 ? 1 : dim);
    c.rhs_batch.push_back(RandomInt(rng, 0, 2) == 0 ? 1 : dim);
  }
  if (rank > 0 && RandomInt(rng, 0, 2) == 0) {
    c.rhs_batch.erase(c.rhs_batch.begin(),
                      c.rhs_batch.begin() + RandomInt(rng, 1, rank));
  }
  c.adj_x = RandomInt(rng, 0, 1) == 1;
  c.adj_y = RandomInt(rng, 0, 1) == 1;
  c.const_rhs = RandomInt(rng, 0, 2) != 0;
  c.threads = RandomInt(rng, 0, 1) == 1 ? 3 : 1;
  return c;
}

TEST(QuantizedBatchMatMulTest, Int16Int8MatchesReferenceArithmeticExactly) {
  std::mt19937 rng = testing::SeededRng(15);
  for (int iter = 0; iter < 120; ++iter) {
    RunBatchMatMul16x8(RandomBmm16x8Case(rng), rng, iter);
    if (HasFatalFailure()) return;
  }
}

// Sums past int32 (k * 2^22 with every value at its minimum, and k past
// the 2048-step lane blocks) are summed in int64 as the reference does.
TEST(QuantizedBatchMatMulTest, Int16Int8LongSumsDoNotOverflow) {
  std::mt19937 rng = testing::SeededRng(17);
  for (int iter = 0; iter < 4; ++iter) {
    Bmm16x8Case c;
    c.m = RandomInt(rng, 1, 5);
    c.n = RandomInt(rng, 1, 9);
    // Past 4096: without the lane blocks, a lane would sum over 512
    // products of 2^22.
    c.k = RandomInt(rng, 4200, 5000);
    c.extreme = iter < 2;
    c.adj_y = iter % 2 == 1;
    c.threads = iter % 2 == 0 ? 1 : 3;
    RunBatchMatMul16x8(c, rng, iter);
    if (HasFatalFailure()) return;
  }
}

// TFLite reads a per-channel rhs's legacy scale, 0, and outputs the zero
// point everywhere: refused at load instead, for INT8 and INT16 lhs.
TEST(QuantizedBatchMatMulTest, RefusesAPerChannelRhsSayingWhy) {
  for (tfl::TensorType t : {tfl::TensorType_INT8, tfl::TensorType_INT16}) {
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId x = g.Input("x", t, {2, 5, 16});
    TensorId y = g.Input("y", tfl::TensorType_INT8, {16, 3});
    g.Quantize(x, 0.02f, 0);
    g.QuantizePerChannel(y, std::vector<float>{0.01f, 0.02f, 0.03f},
                         std::vector<int64_t>{0, 0, 0}, 1);
    TensorId z = g.Op(tfl::BuiltinOperator_BATCH_MATMUL)
                     .In(x, y)
                     .Out("z", t, {2, 5, 3});
    g.Quantize(z, 0.05f, 0).Output(z);
    auto rt = testing::LoadBuilt(mb);
    ASSERT_FALSE(rt.ok());
    EXPECT_EQ(rt.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_NE(rt.status().message().find(
                  "per-channel quantized rhs: TFLite's BATCH_MATMUL reads its "
                  "legacy per-tensor scale, 0"),
              absl::string_view::npos)
        << rt.status();
  }
}

TEST(QuantizedBatchMatMulTest, RefusesInt8LhsWithInt16RhsNamingDtypes) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT8, {2, 3});
  TensorId y = g.Input("y", tfl::TensorType_INT16, {3, 4});
  g.Quantize(x, 0.5f, 0).Quantize(y, 0.5f, 0);
  TensorId z = g.Op(tfl::BuiltinOperator_BATCH_MATMUL)
                   .In(x, y)
                   .Out("z", tfl::TensorType_INT8, {2, 4});
  g.Quantize(z, 0.5f, 0).Output(z);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), absl::StatusCode::kUnimplemented)
      << rt.status();
  EXPECT_NE(
      rt.status().message().find("no CPU kernel for INT8 lhs with INT16 rhs"),
      absl::string_view::npos)
      << rt.status();
}

}  // namespace
}  // namespace graft
