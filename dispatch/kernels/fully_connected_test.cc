// FULLY_CONNECTED and BATCH_MATMUL against naive reference loops: sizes
// around the GEMM tile edges, keep_num_dims, bias, activations, computed
// weights, adj_x/adj_y, batch broadcasting, threads. Hybrid FULLY_CONNECTED
// (FLOAT32 input, blockwise INT4 weights) against hand-computed values and
// TFLite's EvalBlockwise4Bit loop.
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

TEST(FullyConnectedTest, RefusesFloatInputWithInt8Weights) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2});
  TensorId w = g.Constant<int8_t>("w", {1, 2}, {1, 2});
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, w).Out("y", F32, {1, 1}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("FLOAT32 input with INT8 weights"),
            absl::string_view::npos) << rt.status();
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

// TFLite's EvalBlockwise4Bit (tflite/kernels/fully_connected.cc), as written
// there: nibbles read from the packed rows; input rows quantized by
// NeonAsymmetricQuantizeFloats, which ai-edge-litert 2.3.0 runs on x86.
std::vector<float> TfliteBlockwise4Bit(const std::vector<float>& x, int m,
                                       int n, int k, int block,
                                       const std::vector<uint8_t>& kernel,
                                       const std::vector<float>& scales,
                                       const std::vector<float>& bias) {
  std::vector<float> out(size_t(m) * n, 0.0f);
  for (int mi = 0; mi < m; ++mi) {
    const float* row = x.data() + size_t(mi) * k;
    const float rmin = std::min(0.0f, *std::min_element(row, row + k));
    const float rmax = std::max(0.0f, *std::max_element(row, row + k));
    float scale = 1;
    int32_t zp = 0;
    std::vector<int8_t> q(k, 0);
    if (rmin != rmax) {
      const double s = (rmax - rmin) / 255.0;
      const double zmin = -128 - rmin / s, zmax = 127 - rmax / s;
      const double z = 128 + std::abs(rmin / s) < 127 + std::abs(rmax / s) ? zmin : zmax;
      zp = z <= -128 ? -128 : z >= 127 ? 127 : static_cast<int8_t>(std::round(z));
      scale = static_cast<float>(s);
      const float inv = 1.0 / scale;
      for (int i = 0; i < k; ++i) {
        const float v = inv * row[i];
        // Vector part: RoundToNearest without vcvtaq; tail: TfLiteRound.
        const int32_t r = i < (k & ~7) ? int32_t(v + (v < 0 ? -0.5f : 0.5f))
                                       : int32_t(std::round(v));
        q[i] = std::min(127, std::max(-128, zp + r));
      }
    }
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
      o -= zp * kfsum;
      o *= scale;
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

}  // namespace
}  // namespace graft
