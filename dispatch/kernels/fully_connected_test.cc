// FULLY_CONNECTED and BATCH_MATMUL against naive reference loops: sizes
// around the GEMM tile edges, keep_num_dims, bias, activations, computed
// weights, adj_x/adj_y, batch broadcasting, threads. Hybrid FULLY_CONNECTED
// (FLOAT32 input; INT8 weights per tensor or per channel, or blockwise INT4
// weights) against hand-computed values and TFLite's EvalHybridDense and
// EvalBlockwise4Bit arithmetic written out.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;

TEST(FullyConnectedTest, MatchesReference) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 40; ++iter) {
    const int batch = RandomInt(rng, 1, 3), rows = RandomInt(rng, 1, 20);
    const int k = RandomInt(rng, 1, 70), n = RandomInt(rng, 1, 40);
    const bool keep = iter % 2, has_bias = iter % 3 != 0, const_w = iter % 4 != 1;
    const auto act = iter % 5 == 0 ? tfl::ActivationFunctionType_RELU
                                   : tfl::ActivationFunctionType_NONE;
    auto in = testing::RandomFloats(rng, int64_t(batch) * rows * k);
    auto w = testing::RandomFloats(rng, int64_t(n) * k);
    auto b = testing::RandomFloats(rng, n);
    const int m = batch * rows;
    std::vector<float> want(size_t(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = has_bias ? b[j] : 0;
        for (int kk = 0; kk < k; ++kk) acc += in[size_t(i) * k + kk] * w[size_t(j) * k + kk];
        want[size_t(i) * n + j] = act == tfl::ActivationFunctionType_RELU
                                      ? std::max(float(acc), 0.f) : float(acc);
      }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId x = g.Input("x", F32, {batch, rows, k});
    TensorId tw = const_w ? g.Constant<float>("w", {n, k}, w) : g.Input("w", F32, {n, k});
    TensorId tb = has_bias ? g.Constant<float>("b", {n}, b) : kNoTensor;
    tfl::FullyConnectedOptionsT o;
    o.keep_num_dims = keep, o.fused_activation_function = act;
    std::vector<int32_t> out_shape = keep ? std::vector<int32_t>{batch, rows, n}
                                          : std::vector<int32_t>{m, n};
    g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, tw, tb).Options(o).Out(
        "y", F32, out_shape));
    auto rt = testing::LoadBuilt(mb, RandomInt(rng, 1, 3));
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, in);
    if (!const_w) testing::SetInput(**rt, 1, w);
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), out_shape);
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want, k,
                        absl::StrCat("iteration ", iter));
  }
}

TEST(BatchMatMulTest, MatchesReferenceWithAdjointsAndBroadcast) {
  std::mt19937 rng = testing::SeededRng(1);
  for (int iter = 0; iter < 40; ++iter) {
    const int m = RandomInt(rng, 1, 15), k = RandomInt(rng, 1, 30), n = RandomInt(rng, 1, 20);
    const bool adj_x = RandomInt(rng, 0, 1), adj_y = RandomInt(rng, 0, 1);
    const bool const_rhs = iter % 3 == 0;
    // Batch dims: lhs [b0, b1], rhs [b0 or 1, b1] or fewer dims.
    const int b0 = RandomInt(rng, 1, 3), b1 = RandomInt(rng, 1, 3);
    std::vector<int32_t> lb = {b0, b1}, rb = {RandomInt(rng, 0, 1) ? b0 : 1, b1};
    if (iter % 4 == 3) rb = {b1};
    std::vector<int32_t> lshape = lb, rshape = rb;
    lshape.push_back(adj_x ? k : m), lshape.push_back(adj_x ? m : k);
    rshape.push_back(adj_y ? n : k), rshape.push_back(adj_y ? k : n);
    int64_t lcount = int64_t(b0) * b1 * m * k, rcount = k * n;
    for (int32_t d : rb) rcount *= d;
    auto lhs = testing::RandomFloats(rng, lcount), rhs = testing::RandomFloats(rng, rcount);
    std::vector<float> want(size_t(b0) * b1 * m * n);
    for (int i0 = 0; i0 < b0; ++i0)
      for (int i1 = 0; i1 < b1; ++i1) {
        const float* a = lhs.data() + (size_t(i0) * b1 + i1) * m * k;
        size_t rb_index = rb.size() == 1 ? i1 : (size_t(rb[0] == 1 ? 0 : i0) * b1 + i1);
        const float* bm = rhs.data() + rb_index * k * n;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double acc = 0;
            for (int kk = 0; kk < k; ++kk)
              acc += (adj_x ? a[size_t(kk) * m + i] : a[size_t(i) * k + kk]) *
                     (adj_y ? bm[size_t(j) * k + kk] : bm[size_t(kk) * n + j]);
            want[((size_t(i0) * b1 + i1) * m + i) * n + j] = float(acc);
          }
      }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId a = g.Input("a", F32, lshape);
    TensorId b = const_rhs ? g.Constant<float>("b", rshape, rhs) : g.Input("b", F32, rshape);
    tfl::BatchMatMulOptionsT o;
    o.adj_x = adj_x, o.adj_y = adj_y;
    g.Output(g.Op(tfl::BuiltinOperator_BATCH_MATMUL).In(a, b).Options(o).Out(
        "y", F32, {b0, b1, m, n}));
    auto rt = testing::LoadBuilt(mb, RandomInt(rng, 1, 3));
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, lhs);
    if (!const_rhs) testing::SetInput(**rt, 1, rhs);
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), (std::vector<int32_t>{b0, b1, m, n}));
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want, k,
                        absl::StrCat("iteration ", iter));
  }
}

// A FULLY_CONNECTED with INT4 weights [n, k] (packed bytes, low nibble
// first) quantized blockwise with FLOAT16 scales [n, k / block] (bits).
void BuildBlockwiseFc(ModelBuilder& mb, std::vector<int32_t> in_shape, int n,
                      int k, int block, std::vector<uint8_t> packed,
                      std::vector<uint16_t> half_scales,
                      const std::vector<float>& bias,
                      tfl::ActivationFunctionType act) {
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, in_shape);
  TensorId w = g.Constant("w", tfl::TensorType_INT4, {n, k},
                          Bytes::Own(std::move(packed)));
  std::vector<uint8_t> scale_bytes(half_scales.size() * 2);
  std::memcpy(scale_bytes.data(), half_scales.data(), scale_bytes.size());
  TensorId sc = g.Constant("scales", tfl::TensorType_FLOAT16,
                           {n, static_cast<int32_t>(half_scales.size() / n)},
                           Bytes::Own(std::move(scale_bytes)));
  tfl::BlockwiseQuantizationT bq;
  bq.scales = sc, bq.zero_points = -1, bq.block_size = block;
  auto q = std::make_unique<tfl::QuantizationParametersT>();
  q->details.Set(std::move(bq));
  g.MutableTensor(w)->quantization = std::move(q);
  TensorId tb = bias.empty() ? kNoTensor : g.Constant<float>("b", {n}, bias);
  tfl::FullyConnectedOptionsT o;
  o.keep_num_dims = true, o.asymmetric_quantize_inputs = true;
  o.fused_activation_function = act;
  std::vector<int32_t> out_shape = in_shape;
  out_shape.back() = n;
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, w, tb).Options(o).Out(
      "y", F32, out_shape));
}

// Rows of 4 in 2 blocks of 2. Each input row has a range whose int8
// quantization step is exactly 1/64, so the arithmetic is exact and the
// result is sum_b scale_b * dot(w_b, x') + bias, with x' the input
// quantized: 0.3 -> 19/64, 0.1 -> 6/64.
TEST(FullyConnectedHybridTest, BlockwiseInt4MatchesHandComputedValues) {
  // Weights {1, -2, 3, 7}, {-8, 0, 5, -1}, {2, 2, -3, 4}, two per byte,
  // the even element in the low nibble.
  const std::vector<uint8_t> packed = {0xe1, 0x73, 0x08, 0xf5, 0x22, 0x4d};
  // Block scales {0.5, 0.25}, {1, 0.125}, {2, 0.5} as binary16.
  const std::vector<uint16_t> scales = {0x3800, 0x3400, 0x3c00,
                                        0x3000, 0x4000, 0x3800};
  const std::vector<float> bias = {0.5f, -1.0f, 0.25f};
  const std::vector<float> x = {1, 0.5f, 3.984375f, 0.3f,      // step 1/64, zp -128
                                0, 0, 0, 0,                    // all zero: bias only
                                -2, 1.984375f, -0.5f, 0.1f};   // step 1/64, zp 0
  // Row 0, output 0: 0.5 * (1 - 1) + 0.25 * (3 * 3.984375 + 7 * 19/64) + 0.5.
  const std::vector<float> want = {4.0078125f, -6.546875f, 0.8671875f,
                                   0.5f, -1.0f, 0.25f,
                                   -2.6953125f, 14.67578125f, 1.125f};
  for (auto act : {tfl::ActivationFunctionType_NONE,
                   tfl::ActivationFunctionType_RELU6}) {
    ModelBuilder mb;
    BuildBlockwiseFc(mb, {1, 3, 4}, 3, 4, 2, packed, scales, bias, act);
    auto rt = testing::LoadBuilt(mb);
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, x);
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape),
              (std::vector<int32_t>{1, 3, 3}));
    std::vector<float> expected = want;
    if (act == tfl::ActivationFunctionType_RELU6) {
      for (float& v : expected) v = std::min(std::max(v, 0.0f), 6.0f);
    }
    EXPECT_EQ(testing::GetOutput<float>(**rt, 0), expected);
  }
}

// TFLite's quantization of one input row to int8 as ai-edge-litert 2.3.0
// runs it on x86: NeonSymmetricQuantizeFloats or NeonAsymmetricQuantizeFloats
// (through NEON_2_SSE), whose vector loop (groups of 8) rounds with
// RoundToNearest (+-0.5, then truncation) and whose tail uses TfLiteRound.
struct TfliteQuantizedRow {
  std::vector<int8_t> q;
  float scale = 1;
  int32_t zero_point = 0;
};
TfliteQuantizedRow TfliteQuantizeRow(const float* row, int k, bool asymmetric) {
  TfliteQuantizedRow r;
  r.q.assign(k, 0);
  auto round = [&](float v, int i) {
    return i < (k & ~7) ? int32_t(v + (v < 0 ? -0.5f : 0.5f))
                        : int32_t(std::round(v));
  };
  if (!asymmetric) {
    auto mm = std::minmax_element(row, row + k);
    const float range = std::max(std::abs(*mm.first), std::abs(*mm.second));
    if (range == 0) return r;
    r.scale = range / 127;
    const float inv = 127 / range;
    for (int i = 0; i < k; ++i) {
      r.q[i] = std::min(127, std::max(-127, round(inv * row[i], i)));
    }
    return r;
  }
  const float rmin = std::min(0.0f, *std::min_element(row, row + k));
  const float rmax = std::max(0.0f, *std::max_element(row, row + k));
  if (rmin == rmax) return r;
  const double s = (rmax - rmin) / 255.0;
  const double zmin = -128 - rmin / s, zmax = 127 - rmax / s;
  const double z = 128 + std::abs(rmin / s) < 127 + std::abs(rmax / s) ? zmin : zmax;
  r.zero_point = z <= -128 ? -128 : z >= 127 ? 127 : static_cast<int8_t>(std::round(z));
  r.scale = static_cast<float>(s);
  const float inv = 1.0 / r.scale;
  for (int i = 0; i < k; ++i) {
    r.q[i] = std::min(127, std::max(-128, r.zero_point + round(inv * row[i], i)));
  }
  return r;
}

// TFLite's EvalBlockwise4Bit (tflite/kernels/fully_connected.cc), as written
// there: nibbles read from the packed rows; input rows quantized
// asymmetrically.
std::vector<float> TfliteBlockwise4Bit(const std::vector<float>& x, int m,
                                       int n, int k, int block,
                                       const std::vector<uint8_t>& kernel,
                                       const std::vector<float>& scales,
                                       const std::vector<float>& bias) {
  std::vector<float> out(size_t(m) * n, 0.0f);
  for (int mi = 0; mi < m; ++mi) {
    const TfliteQuantizedRow row =
        TfliteQuantizeRow(x.data() + size_t(mi) * k, k, /*asymmetric=*/true);
    const std::vector<int8_t>& q = row.q;
    for (int ni = 0; ni < n; ++ni) {
      float& o = out[size_t(mi) * n + ni];
      float kfsum = 0;
      for (int bi = 0; bi < k / block; ++bi) {
        int32_t ksum = 0, acc = 0;
        for (int ki = 0; ki < block; ++ki) {
          const int idx = bi * block + ki;
          const uint8_t byte = kernel[(size_t(ni) * k + idx) / 2];
          const int v = (((idx % 2 == 0) ? (byte & 0xf) : (byte >> 4)) ^ 8) - 8;
          ksum += v;
          acc += q[idx] * v;
        }
        const float sc = scales[size_t(ni) * (k / block) + bi];
        o += acc * sc;
        kfsum += sc * ksum;
      }
      o -= row.zero_point * kfsum;
      o *= row.scale;
      if (!bias.empty()) o += bias[ni];
    }
  }
  return out;
}

TEST(FullyConnectedHybridTest, BlockwiseInt4MatchesTfliteLoopAcrossThreads) {
  std::mt19937 rng = testing::SeededRng(2);
  for (int iter = 0; iter < 6; ++iter) {
    // Block 6: depths that are not multiples of 8 (a rounding tail).
    const int block = iter % 2 ? 32 : 6, blocks = RandomInt(rng, 1, 8);
    const int k = block * blocks, n = RandomInt(rng, 1, 70), m = RandomInt(rng, 1, 4);
    std::vector<uint8_t> packed(size_t(n) * k / 2);
    for (uint8_t& b : packed) b = static_cast<uint8_t>(RandomInt(rng, 0, 255));
    // Scales k * 2^-e with small k: exact in binary16 and binary32.
    std::vector<uint16_t> half(size_t(n) * blocks);
    std::vector<float> scales(half.size());
    for (size_t i = 0; i < half.size(); ++i) {
      const int mant = RandomInt(rng, 0, 1023), exp = RandomInt(rng, 8, 14);
      half[i] = static_cast<uint16_t>(exp << 10 | mant);
      scales[i] = std::ldexp(1.0f + mant / 1024.0f, exp - 15);
    }
    const std::vector<float> bias = iter % 3 ? testing::RandomFloats(rng, n)
                                             : std::vector<float>{};
    const std::vector<float> x = testing::RandomFloats(rng, int64_t(m) * k, -2, 3);
    const std::vector<float> want =
        TfliteBlockwise4Bit(x, m, n, k, block, packed, scales, bias);
    for (int threads : {1, 3}) {
      ModelBuilder mb;
      BuildBlockwiseFc(mb, {m, k}, n, k, block, packed, half, bias,
                       tfl::ActivationFunctionType_NONE);
      auto rt = testing::LoadBuilt(mb, threads);
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, x);
      ASSERT_TRUE((*rt)->Invoke().ok());
      EXPECT_EQ(testing::GetOutput<float>(**rt, 0), want)
          << "iteration " << iter << ", " << threads << " threads";
    }
  }
}

// TFLite takes any block size and indexes the scales with k / block_size
// blocks per row, dropping the remainder; Graft refuses the model.
TEST(FullyConnectedHybridTest, RefusesBlockSizeNotDividingDepth) {
  ModelBuilder mb;
  BuildBlockwiseFc(mb, {1, 4}, 1, 4, 3, {0x11, 0x11}, {0x3c00, 0x3c00}, {},
                   tfl::ActivationFunctionType_NONE);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find(
                "block size 3 does not divide the input depth 4"),
            absl::string_view::npos) << rt.status();
}

TEST(FullyConnectedHybridTest, RefusesInt4WeightsNotQuantizedBlockwise) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2});
  TensorId w = g.Constant("w", tfl::TensorType_INT4, {1, 2}, Bytes::Own({0x21}));
  g.QuantizePerChannel(w, std::vector<float>{0.5f}, std::vector<int64_t>{0}, 0);
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, w).Out("y", F32, {1, 1}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find(
                "FLOAT32 input with INT4 weights not quantized blockwise"),
            absl::string_view::npos) << rt.status();
}

// A FULLY_CONNECTED with INT8 weights [n, k] quantized symmetrically with
// one scale (per tensor) or n (per output channel): dynamic-range
// quantization.
void BuildHybridInt8Fc(ModelBuilder& mb, std::vector<int32_t> in_shape, int n,
                       const std::vector<int8_t>& w,
                       const std::vector<float>& scales,
                       const std::vector<float>& bias, bool asymmetric,
                       bool keep_num_dims, tfl::ActivationFunctionType act,
                       int64_t zero_point = 0) {
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, in_shape);
  const int k = in_shape.back();
  TensorId tw = g.Constant<int8_t>("w", {n, k}, w);
  g.QuantizePerChannel(tw, scales,
                       std::vector<int64_t>(scales.size(), zero_point), 0);
  TensorId tb = bias.empty() ? kNoTensor : g.Constant<float>("b", {n}, bias);
  tfl::FullyConnectedOptionsT o;
  o.keep_num_dims = keep_num_dims, o.asymmetric_quantize_inputs = asymmetric;
  o.fused_activation_function = act;
  int32_t m = 1;
  for (size_t i = 0; i + 1 < in_shape.size(); ++i) m *= in_shape[i];
  std::vector<int32_t> out_shape = keep_num_dims ? in_shape
                                                 : std::vector<int32_t>{m, n};
  out_shape.back() = n;
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, tw, tb).Options(o).Out(
      "y", F32, out_shape));
}

float Clamp(float v, tfl::ActivationFunctionType act) {
  if (act == tfl::ActivationFunctionType_RELU) return std::max(v, 0.0f);
  if (act == tfl::ActivationFunctionType_RELU6) return std::min(std::max(v, 0.0f), 6.0f);
  if (act == tfl::ActivationFunctionType_RELU_N1_TO_1)
    return std::min(std::max(v, -1.0f), 1.0f);
  return v;
}

// Weights {1, -2, 3, 7}, {-8, 0, 5, -1}, {2, 2, -3, 4} with channel scales
// {0.5, 0.25, 2}. Each input row's int8 step is exactly 1/64, so the result
// is exact: bias + scale_n * dot(w_n, x') with x' the quantized input.
// Symmetric: 1.984375 = 127/64 is the largest magnitude; 0.3 -> 19/64,
// 0.1 -> 6/64. Asymmetric: each row's range [min(0, lo), max(0, hi)] is
// 255/64 wide, zero points -128 and 0.
TEST(FullyConnectedHybridTest, Int8MatchesHandComputedValues) {
  const std::vector<int8_t> w = {1, -2, 3, 7, -8, 0, 5, -1, 2, 2, -3, 4};
  const std::vector<float> scales = {0.5f, 0.25f, 2.0f};
  const std::vector<float> bias = {0.5f, -1.0f, 0.25f};
  struct Case {
    bool asymmetric;
    std::vector<float> x, want;
  };
  const Case cases[] = {
      // Row 0, output 0: 0.5 * (127 - 64 - 192 + 133) / 64 + 0.5.
      {false,
       {1.984375f, 0.5f, -1, 0.3f,  0, 0, 0, 0,  -1.984375f, 0.25f, 0.1f, 1},
       {0.53125f, -6.29296875f, 18.5625f,  0.5f, -1.0f, 0.25f,
        2.8984375f, 2.8359375f, 0.75f}},
      // Row 0, output 0: 0.5 * (64 - 64 + 765 + 133) / 64 + 0.5.
      {true,
       {1, 0.5f, 3.984375f, 0.3f,  0, 0, 0, 0,  -2, 1.984375f, -0.5f, 0.1f},
       {7.515625f, 1.90625f, -15.28125f,  0.5f, -1.0f, 0.25f,
        -2.90625f, 2.3515625f, 3.9375f}},
  };
  for (const Case& c : cases) {
    for (auto act : {tfl::ActivationFunctionType_NONE,
                     tfl::ActivationFunctionType_RELU}) {
      ModelBuilder mb;
      BuildHybridInt8Fc(mb, {1, 3, 4}, 3, w, scales, bias, c.asymmetric,
                        /*keep_num_dims=*/true, act);
      auto rt = testing::LoadBuilt(mb);
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, c.x);
      ASSERT_TRUE((*rt)->Invoke().ok());
      EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape),
                (std::vector<int32_t>{1, 3, 3}));
      std::vector<float> expected = c.want;
      for (float& v : expected) v = Clamp(v, act);
      EXPECT_EQ(testing::GetOutput<float>(**rt, 0), expected)
          << (c.asymmetric ? "asymmetric" : "symmetric");
    }
  }
}

// TFLite's EvalHybridDense (tflite/kernels/fully_connected.cc) with its x86
// tensor_utils, as written there: the output starts as the bias (and stays
// so when the whole input is zero); rows quantized (TfliteQuantizeRow); the
// filter scale folded into the row's scale (per tensor) or multiplied by it
// per row (per channel); the row sums of SseReductionSumVector (pairs of
// weights into eight int16 lanes per 16, then 8 more one per lane, then the
// rest in int32); out += float(dot - zero_point * row_sum) * scale.
std::vector<float> TfliteHybridDense(const std::vector<float>& x, int m, int n,
                                     int k, const std::vector<int8_t>& w,
                                     const std::vector<float>& scales,
                                     const std::vector<float>& bias,
                                     bool asymmetric,
                                     tfl::ActivationFunctionType act) {
  std::vector<float> out(size_t(m) * n, 0.0f);
  for (int b = 0; b < m; ++b) {
    for (int j = 0; j < n && !bias.empty(); ++j) out[size_t(b) * n + j] = bias[j];
  }
  const bool all_zero = std::all_of(x.begin(), x.end(), [](float v) { return v == 0; });
  if (!all_zero) {
    std::vector<int32_t> row_sums(n);
    for (int j = 0; j < n; ++j) {
      const int8_t* row = w.data() + size_t(j) * k;
      int16_t lanes[8] = {};
      int c = 0;
      for (; c < (k & ~15); c += 16)
        for (int l = 0; l < 8; ++l)
          lanes[l] = static_cast<int16_t>(lanes[l] + (row[c + 2 * l] + row[c + 2 * l + 1]));
      if (c < (k & ~7)) {
        for (int l = 0; l < 8; ++l) lanes[l] = static_cast<int16_t>(lanes[l] + row[c + l]);
        c += 8;
      }
      int32_t sum = 0;
      for (int16_t v : lanes) sum += v;
      for (; c < k; ++c) sum += row[c];
      row_sums[j] = sum;
    }
    for (int b = 0; b < m; ++b) {
      TfliteQuantizedRow r = TfliteQuantizeRow(x.data() + size_t(b) * k, k, asymmetric);
      if (!asymmetric) r.zero_point = 0;
      if (scales.size() == 1) r.scale *= scales[0];
      for (int j = 0; j < n; ++j) {
        const float row_scale = scales.size() > 1 ? scales[j] * r.scale : r.scale;
        int32_t sum = 0;
        for (int c = 0; c < k; ++c) sum += w[size_t(j) * k + c] * r.q[c];
        if (r.zero_point != 0) sum -= r.zero_point * row_sums[j];
        out[size_t(b) * n + j] += sum * row_scale;
      }
    }
  }
  for (float& v : out) v = Clamp(v, act);
  return out;
}

TEST(FullyConnectedHybridTest, Int8MatchesTfliteLoopAcrossThreads) {
  std::mt19937 rng = testing::SeededRng(3);
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  for (int iter = 0; iter < 32; ++iter) {
    const bool per_channel = iter % 2, asymmetric = iter / 2 % 2;
    const bool has_bias = iter % 3 != 0, keep = iter % 5 < 2;
    const auto act = acts[iter % 4];
    // Depths around the quantizers' groups of 8 and the sums' groups of 16.
    const int k = iter < 8 ? RandomInt(rng, 1, 20) : RandomInt(rng, 1, 150);
    const int n = RandomInt(rng, 1, 40), batch = RandomInt(rng, 1, 2);
    const int rows = RandomInt(rng, 1, 4), m = batch * rows;
    std::vector<int8_t> w(size_t(n) * k);
    for (int8_t& v : w) v = static_cast<int8_t>(RandomInt(rng, -127, 127));
    std::vector<float> scales = testing::RandomFloats(rng, per_channel ? n : 1, 1e-3f, 0.05f);
    const std::vector<float> bias = has_bias ? testing::RandomFloats(rng, n)
                                             : std::vector<float>{};
    std::vector<float> x = testing::RandomFloats(rng, int64_t(m) * k, -2, 3);
    if (m > 1) std::fill(x.begin() + k, x.begin() + 2 * k, 0.0f);  // a zero row
    if (iter == 31) std::fill(x.begin(), x.end(), 0.0f);           // all zero
    const std::vector<float> want =
        TfliteHybridDense(x, m, n, k, w, scales, bias, asymmetric, act);
    for (int threads : {1, 3}) {
      ModelBuilder mb;
      BuildHybridInt8Fc(mb, {batch, rows, k}, n, w, scales, bias, asymmetric,
                        keep, act);
      auto rt = testing::LoadBuilt(mb, threads);
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, x);
      ASSERT_TRUE((*rt)->Invoke().ok());
      EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape),
                keep ? (std::vector<int32_t>{batch, rows, n})
                     : (std::vector<int32_t>{m, n}));
      EXPECT_EQ(testing::GetOutput<float>(**rt, 0), want)
          << "iteration " << iter << ", " << threads << " threads";
    }
  }
}

// With asymmetric inputs TFLite subtracts zero_point * row sum, and on x86
// its row sums wrap in int16 lanes: 4104 weights of 127 sum to -3080, not
// 521208 (measured against ai-edge-litert 2.3.0). An input of ones is
// quantized with scale 1/255 and zero point -128 to 127s, so the corrected
// dot product is 4104 * 127 * 127 - 128 * 3080 = 65799176.
TEST(FullyConnectedHybridTest, Int8RowSumsWrapAsTflitesDo) {
  const int k = 4104;
  ModelBuilder mb;
  BuildHybridInt8Fc(mb, {1, k}, 1, std::vector<int8_t>(k, 127), {1.0f}, {},
                    /*asymmetric=*/true, false, tfl::ActivationFunctionType_NONE);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput(**rt, 0, std::vector<float>(k, 1.0f));
  ASSERT_TRUE((*rt)->Invoke().ok());
  const float input_scale = static_cast<float>(1.0 / 255.0);
  EXPECT_EQ(testing::GetOutput<float>(**rt, 0),
            std::vector<float>{65799176.0f * input_scale});
}

// TFLite's quantizers round the groups of 8 by adding +-0.5 and truncating,
// the rest with std::round: with the row's scale exactly 1, 0.49999997 is 1
// at index 1 (0.49999997 + 0.5 rounds to 1 in float) and 0 at index 8.
TEST(FullyConnectedHybridTest, Int8RoundsGroupsOf8AsTflitesDo) {
  const float v = 0.49999997f;
  std::vector<int8_t> w(2 * 9, 0);
  w[1] = 1, w[9 + 8] = 1;  // output 0 reads index 1, output 1 index 8
  for (bool asymmetric : {false, true}) {
    ModelBuilder mb;
    BuildHybridInt8Fc(mb, {1, 9}, 2, w, {1.0f}, {}, asymmetric, false,
                      tfl::ActivationFunctionType_NONE);
    auto rt = testing::LoadBuilt(mb);
    ASSERT_TRUE(rt.ok()) << rt.status();
    // Symmetric: scale 127 / 127; asymmetric: range [0, 255], scale 1, zero
    // point -128.
    testing::SetInput(**rt, 0, std::vector<float>{asymmetric ? 255.0f : 127.0f,
                                                  v, 0, 0, 0, 0, 0, 0, v});
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(testing::GetOutput<float>(**rt, 0), (std::vector<float>{1, 0}))
        << (asymmetric ? "asymmetric" : "symmetric");
  }
}

// TFLite's hybrid path ignores the weights' zero point (it computes as if it
// were 0); Graft refuses rather than use the wrong weights.
TEST(FullyConnectedHybridTest, RefusesInt8WeightsWithAZeroPoint) {
  ModelBuilder mb;
  BuildHybridInt8Fc(mb, {1, 2}, 1, {1, 2}, {0.5f}, {}, false, false,
                    tfl::ActivationFunctionType_NONE, /*zero_point=*/3);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find(
                "FLOAT32 input with INT8 weights with a zero point"),
            absl::string_view::npos) << rt.status();
}

TEST(FullyConnectedHybridTest, RefusesUnquantizedInt8Weights) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2});
  TensorId w = g.Constant<int8_t>("w", {1, 2}, {1, 2});
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, w).Out("y", F32, {1, 1}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("FLOAT32 input with INT8 weights not quantized"),
            absl::string_view::npos) << rt.status();
}

TEST(FullyConnectedHybridTest, RefusesInt8WeightsComputedAtRunTime) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2});
  TensorId w = g.Input("w", tfl::TensorType_INT8, {1, 2});
  g.Quantize(w, 0.5f, 0);
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, w).Out("y", F32, {1, 1}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find(
                "FLOAT32 input with INT8 weights computed at run time"),
            absl::string_view::npos) << rt.status();
}

}  // namespace
}  // namespace graft
