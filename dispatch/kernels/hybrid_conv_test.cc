// Hybrid CONV_2D and DEPTHWISE_CONV_2D (FLOAT32 input, INT8 weights:
// dynamic-range quantization) against hand-computed values and against
// TFLite's arithmetic written out here on its own: reference_ops::
// HybridConvPerChannel after NeonAsymmetricQuantizeFloats for per-channel
// scales, optimized_ops::HybridConv after NeonSymmetricQuantizeFloats for one
// scale (x86, through the NEON-to-SSE translation), and reference_integer_ops::
// DepthwiseConvHybridPerChannel, compared bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/hybrid_util.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;

constexpr auto F32 = tfl::TensorType_FLOAT32;

struct ConvParams {
  int n = 1, h = 1, w = 1, cin = 1, cout = 1, kh = 1, kw = 1;
  int sh = 1, sw = 1, dh = 1, dw = 1;
  tfl::Padding padding = tfl::Padding_VALID;
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
};

int OutSize(const ConvParams& p, int in, int k, int s, int d) {
  const int eff = (k - 1) * d + 1;
  return p.padding == tfl::Padding_SAME ? (in + s - 1) / s : (in + s - eff) / s;
}

// A CONV_2D with INT8 weights [cout, kh, kw, cin], one scale per output
// channel (or one per tensor), zero points `zero_point`.
absl::StatusOr<std::unique_ptr<Runtime>> BuildAndLoad(
    const ConvParams& p, const std::vector<int8_t>& w,
    const std::vector<float>& scales, const std::vector<float>& bias,
    int threads = 1, int64_t zero_point = 0, int filter_cin = 0) {
  if (filter_cin == 0) filter_cin = p.cin;
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {p.n, p.h, p.w, p.cin});
  TensorId tw = g.Constant<int8_t>("w", {p.cout, p.kh, p.kw, filter_cin}, w);
  g.QuantizePerChannel(tw, scales,
                       std::vector<int64_t>(scales.size(), zero_point), 0);
  TensorId tb =
      bias.empty() ? kNoTensor : g.Constant<float>("b", {p.cout}, bias);
  tfl::Conv2DOptionsT o;
  o.padding = p.padding, o.stride_h = p.sh, o.stride_w = p.sw;
  o.dilation_h_factor = p.dh, o.dilation_w_factor = p.dw;
  o.fused_activation_function = p.act;
  const int oh = OutSize(p, p.h, p.kh, p.sh, p.dh);
  const int ow = OutSize(p, p.w, p.kw, p.sw, p.dw);
  g.Output(g.Op(tfl::BuiltinOperator_CONV_2D)
               .In(x, tw, tb)
               .Options(o)
               .Out("y", F32, {p.n, oh, ow, p.cout}));
  return testing::LoadBuilt(mb, threads);
}

float Activate(float v, tfl::ActivationFunctionType act) {
  switch (act) {
    case tfl::ActivationFunctionType_RELU:
      return std::max(v, 0.0f);
    case tfl::ActivationFunctionType_RELU6:
      return std::min(std::max(v, 0.0f), 6.0f);
    case tfl::ActivationFunctionType_RELU_N1_TO_1:
      return std::min(std::max(v, -1.0f), 1.0f);
    default:
      return v;
  }
}

// x86 TFLite rounds x / scale by +-0.5 and truncation in the SIMD groups of
// 8 and with std::round in the k % 8 tail.
int32_t TfliteRound(float v, int64_t i, int64_t k) {
  if (i < (k / 8) * 8) return static_cast<int32_t>(v + (v < 0 ? -0.5f : 0.5f));
  return static_cast<int32_t>(std::round(v));
}

// NeonAsymmetricQuantizeFloats: range [min(0, lo), max(0, hi)] (its width
// in float), scale and zero point in double, the zero point taken from the end
// with the smaller error.
void QuantizeAsymmetric(const float* x, int64_t k, std::vector<int32_t>* q,
                        float* scale, int32_t* zp) {
  const float lo = std::min(0.0f, *std::min_element(x, x + k));
  const float hi = std::max(0.0f, *std::max_element(x, x + k));
  q->assign(k, 0);
  if (lo == hi) {
    *scale = 1, *zp = 0;
    return;
  }
  const double s = static_cast<double>(hi - lo) / 255;  // float difference
  const double from_min = -128 - lo / s, from_max = 127 - hi / s;
  const double err_min = 128 + std::fabs(lo / s),
               err_max = 127 + std::fabs(hi / s);
  const double z = err_min < err_max ? from_min : from_max;
  *zp = z <= -128 ? -128 : z >= 127 ? 127 : static_cast<int32_t>(std::round(z));
  *scale = static_cast<float>(s);
  const float inv = static_cast<float>(1.0 / *scale);
  for (int64_t i = 0; i < k; ++i) {
    (*q)[i] =
        std::min(127, std::max(-128, *zp + TfliteRound(x[i] * inv, i, k)));
  }
}

// NeonSymmetricQuantizeFloats: scale = max|x| / 127, values in [-127, 127].
void QuantizeSymmetric(const float* x, int64_t k, std::vector<int32_t>* q,
                       float* scale) {
  float range = 0;
  for (int64_t i = 0; i < k; ++i) range = std::max(range, std::fabs(x[i]));
  q->assign(k, 0);
  if (range == 0) {
    *scale = 1;
    return;
  }
  *scale = range / 127.0f;
  const float inv = 127.0f / range;
  for (int64_t i = 0; i < k; ++i) {
    (*q)[i] = std::min(127, std::max(-127, TfliteRound(x[i] * inv, i, k)));
  }
}

// TFLite's hybrid convolution: per-channel scales (not all equal) through
// reference_ops::HybridConvPerChannel, else optimized_ops::HybridConv.
std::vector<float> RefHybridConv(const ConvParams& p,
                                 const std::vector<float>& in,
                                 const std::vector<int8_t>& w,
                                 const std::vector<float>& scales,
                                 const std::vector<float>& bias) {
  const bool per_channel = std::any_of(scales.begin(), scales.end(),
                                       [&](float s) { return s != scales[0]; });
  const int oh = OutSize(p, p.h, p.kh, p.sh, p.dh);
  const int ow = OutSize(p, p.w, p.kw, p.sw, p.dw);
  const int pad_h =
      std::max(0, (oh - 1) * p.sh + (p.kh - 1) * p.dh + 1 - p.h) / 2;
  const int pad_w =
      std::max(0, (ow - 1) * p.sw + (p.kw - 1) * p.dw + 1 - p.w) / 2;
  const int64_t image = int64_t{p.h} * p.w * p.cin;
  std::vector<float> out;
  for (int b = 0; b < p.n; ++b) {
    std::vector<int32_t> q;
    float scale = 1;
    int32_t zp = 0;
    if (per_channel) {
      QuantizeAsymmetric(in.data() + b * image, image, &q, &scale, &zp);
    } else {
      QuantizeSymmetric(in.data() + b * image, image, &q, &scale);
    }
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        for (int o = 0; o < p.cout; ++o) {
          int32_t acc = 0;
          for (int ky = 0; ky < p.kh; ++ky) {
            for (int kx = 0; kx < p.kw; ++kx) {
              const int y = oy * p.sh - pad_h + ky * p.dh;
              const int x = ox * p.sw - pad_w + kx * p.dw;
              if (y < 0 || y >= p.h || x < 0 || x >= p.w) continue;
              for (int c = 0; c < p.cin; ++c) {
                acc += w[((o * p.kh + ky) * p.kw + kx) * p.cin + c] *
                       (q[(y * p.w + x) * p.cin + c] - zp);
              }
            }
          }
          const float wscale = scales[scales.size() > 1 ? o : 0];
          float v = per_channel ? acc * wscale * scale : acc * (scale * wscale);
          if (!bias.empty()) v += bias[o];
          out.push_back(Activate(v, p.act));
        }
      }
    }
  }
  return out;
}

std::vector<float> Invoke(Runtime& rt, const std::vector<float>& in) {
  testing::SetInput(rt, 0, in);
  EXPECT_TRUE(rt.Invoke().ok());
  return testing::GetOutput<float>(rt, 0);
}

// Input {-2, 1.984375, 0.5, -0.25}: asymmetric, its range is 255/64 wide
// with zero point 0, so q = 64 x = {-128, 127, 32, -16}. Filters {1, -2, 3,
// 4} (scale 0.5) and {-1, 0, 2, 1} (0.25), VALID 2x2:
//   0.5 * (-128 - 254 + 96 - 64) / 64 + 0.5 = -2.234375,
//   0.25 * (128 + 0 + 64 - 16) / 64 - 1 = -0.3125.
// With one scale 0.5 and input {-1.984375, 1, 0.5, -0.25}: symmetric, step
// 1/64, q = {-127, 64, 32, -16}:
//   (-127 - 128 + 96 - 64) / 128 + 0.5 = -1.2421875,
//   (127 + 0 + 64 - 16) / 128 - 1 = 0.3671875.
TEST(Conv2DHybridTest, MatchesHandComputedValues) {
  ConvParams p;
  p.h = p.w = 2, p.cout = 2, p.kh = p.kw = 2;
  const std::vector<int8_t> w = {1, -2, 3, 4, -1, 0, 2, 1};
  const std::vector<float> bias = {0.5f, -1.0f};
  {
    auto rt = BuildAndLoad(p, w, {0.5f, 0.25f}, bias);
    ASSERT_TRUE(rt.ok()) << rt.status();
    EXPECT_EQ(Invoke(**rt, {-2, 1.984375f, 0.5f, -0.25f}),
              (std::vector<float>{-2.234375f, -0.3125f}));
    EXPECT_NE((*rt)->Report().ToString().find("Conv2DHybrid"),
              std::string::npos);
  }
  {
    auto rt = BuildAndLoad(p, w, {0.5f}, bias);
    ASSERT_TRUE(rt.ok()) << rt.status();
    EXPECT_EQ(Invoke(**rt, {-1.984375f, 1, 0.5f, -0.25f}),
              (std::vector<float>{-1.2421875f, 0.3671875f}));
  }
  // An activation clamps the first, a zero input gives the bias.
  p.act = tfl::ActivationFunctionType_RELU_N1_TO_1;
  auto rt = BuildAndLoad(p, w, {0.5f, 0.25f}, bias);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(Invoke(**rt, {-2, 1.984375f, 0.5f, -0.25f}),
            (std::vector<float>{-1.0f, -0.3125f}));
  EXPECT_EQ(Invoke(**rt, {0, 0, 0, 0}), (std::vector<float>{0.5f, -1.0f}));
}

// One random case of the MatchesTfliteArithmetic tests: a shape, strides,
// dilations, padding and activation by iteration; weights; per-channel
// scales (for CONV_2D every 5th case one scale or all equal, TFLite's
// per-tensor path); a bias, except every 3rd case; an input shifted off
// zero (nonzero zero points), every 7th all zeros. False when the window
// does not fit the image.
struct RandomCase {
  ConvParams p;
  std::vector<int8_t> w;
  std::vector<float> scales, bias, in;
  int threads = 1;
};

bool MakeRandomCase(std::mt19937& rng, int iter, bool depthwise,
                    RandomCase* c) {
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  ConvParams& p = c->p;
  p.n = RandomInt(rng, 1, 3), p.h = RandomInt(rng, 1, 9);
  p.w = RandomInt(rng, 1, 9);
  if (depthwise) {  // channels around the kernel's 64-channel blocks
    p.cin = RandomInt(rng, 1, 80);
    p.cout = p.cin * (iter % 4 == 1 ? RandomInt(rng, 2, 3) : 1);
  } else {
    p.cin = RandomInt(rng, 1, 11), p.cout = RandomInt(rng, 1, 9);
  }
  p.kh = RandomInt(rng, 1, 3), p.kw = RandomInt(rng, 1, 3);
  p.sh = RandomInt(rng, 1, 3), p.sw = RandomInt(rng, 1, 3);
  p.dh = RandomInt(rng, 1, 2), p.dw = RandomInt(rng, 1, 2);
  p.padding = iter % 2 ? tfl::Padding_SAME : tfl::Padding_VALID;
  p.act = acts[iter % 4];
  if (OutSize(p, p.h, p.kh, p.sh, p.dh) <= 0 ||
      OutSize(p, p.w, p.kw, p.sw, p.dw) <= 0) {
    return false;
  }
  const int64_t nw =
      int64_t{p.cout} * p.kh * p.kw * (depthwise ? 1 : p.cin);
  for (int32_t v : testing::RandomInts(rng, nw, -127, 127)) {
    c->w.push_back(static_cast<int8_t>(v));
  }
  c->scales = testing::RandomFloats(rng, p.cout, 0.001f, 0.02f);
  if (!depthwise && iter % 5 == 0) {
    c->scales.assign(iter % 10 ? p.cout : 1, c->scales[0]);
  }
  if (iter % 3 != 1) c->bias = testing::RandomFloats(rng, p.cout, -0.5f, 0.5f);
  const float shift = (iter % 4) * 0.3f;
  c->in = testing::RandomFloats(rng, int64_t{p.n} * p.h * p.w * p.cin,
                                -1 + shift, 1 + shift);
  if (iter % 7 == 3) std::fill(c->in.begin(), c->in.end(), 0.0f);
  c->threads = RandomInt(rng, 1, 3);
  return true;
}

// Draws c's weights (about minus128 percent of them -128, the rest in
// [-128, 127]), scales (one shared by all channels every fifth
// iteration), bias (where it has one) and input again for a CONV_2D whose
// shape c->p was changed after MakeRandomCase.
void RedrawConvValues(std::mt19937& rng, int iter, int minus128,
                      RandomCase* c) {
  const ConvParams& p = c->p;
  const int64_t nw = int64_t{p.cout} * p.kh * p.kw * p.cin;
  c->w.clear();
  for (int64_t i = 0; i < nw; ++i) {
    c->w.push_back(static_cast<int8_t>(
        RandomInt(rng, 0, 99) < minus128 ? -128
                                          : RandomInt(rng, -128, 127)));
  }
  c->scales = testing::RandomFloats(rng, p.cout, 0.001f, 0.02f);
  if (iter % 5 == 0) c->scales.assign(p.cout, c->scales[0]);
  if (!c->bias.empty()) {
    c->bias = testing::RandomFloats(rng, p.cout, -0.5f, 0.5f);
  }
  const float shift = (iter % 4) * 0.3f;
  c->in = testing::RandomFloats(rng, int64_t{p.n} * p.h * p.w * p.cin,
                                -1 + shift, 1 + shift);
  if (iter % 7 == 3) std::fill(c->in.begin(), c->in.end(), 0.0f);
}

// Random shapes, strides, dilations, paddings, activations, batches and
// thread counts against RefHybridConv, bit for bit.
TEST(Conv2DHybridTest, MatchesTfliteArithmetic) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 60; ++iter) {
    RandomCase c;
    if (!MakeRandomCase(rng, iter, /*depthwise=*/false, &c)) continue;
    auto rt = BuildAndLoad(c.p, c.w, c.scales, c.bias, c.threads);
    ASSERT_TRUE(rt.ok()) << rt.status();
    EXPECT_EQ(Invoke(**rt, c.in), RefHybridConv(c.p, c.in, c.w, c.scales,
                                                c.bias))
        << "iteration " << iter;
  }
}

using testing::IsaCap;

// Every ISA path the machine has, forced, against RefHybridConv over wider
// shapes than above: channel counts around the 16-column panels and the
// VNNI path's groups of four, 1x1 stride-1 convolutions (the VNNI path's
// direct rows), row counts around its 8-row tiles, weights holding -128
// (the convolution's products are exact: no quirk) and not. The VNNI path
// must be the one taken where it is forced.
TEST(Conv2DHybridTest, MatchesTfliteArithmeticOnEveryIsa) {
  std::mt19937 rng = testing::SeededRng(7);
  const kernels::CpuIsa detected = kernels::DetectedCpuIsa();
  for (kernels::CpuIsa isa :
       {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2,
        kernels::CpuIsa::kAvx512Vnni}) {
    if (static_cast<int>(isa) > static_cast<int>(detected)) continue;
    IsaCap cap(isa);
    const int64_t vnni0 = kernels::HybridVnniCallsForTesting();
    for (int iter = 0; iter < 40; ++iter) {
      RandomCase c;
      if (!MakeRandomCase(rng, iter, /*depthwise=*/false, &c)) continue;
      ConvParams& p = c.p;
      p.cin = RandomInt(rng, 1, 40), p.cout = RandomInt(rng, 1, 40);
      if (iter % 3 == 0) {  // 1x1, stride 1, channels in fours
        p.kh = p.kw = 1, p.sh = p.sw = 1;
        p.cin = 4 * RandomInt(rng, 1, 10);
        p.h = RandomInt(rng, 1, 12), p.w = RandomInt(rng, 1, 12);
      }
      if (iter % 10 == 4) {  // over 1M multiply-adds: split over threads
        p.n = 1, p.h = RandomInt(rng, 18, 24), p.w = RandomInt(rng, 18, 24);
        p.cin = RandomInt(rng, 24, 40), p.cout = RandomInt(rng, 30, 40);
        p.kh = p.kw = 3, p.sh = p.sw = 1, p.dh = p.dw = 1;
        c.threads = 3;
      }
      if (iter % 10 == 7) {  // the same, 1x1 direct
        p.n = 2, p.h = RandomInt(rng, 30, 40), p.w = RandomInt(rng, 30, 40);
        p.cin = 4 * RandomInt(rng, 8, 12), p.cout = RandomInt(rng, 20, 40);
        p.kh = p.kw = 1, p.sh = p.sw = 1, p.dh = p.dw = 1;
        c.threads = 2;
      }
      RedrawConvValues(rng, iter, iter % 2 ? RandomInt(rng, 1, 30) : 0, &c);
      auto rt = BuildAndLoad(p, c.w, c.scales, c.bias, c.threads);
      ASSERT_TRUE(rt.ok()) << rt.status();
      EXPECT_EQ(Invoke(**rt, c.in),
                RefHybridConv(p, c.in, c.w, c.scales, c.bias))
          << kernels::CpuIsaName(isa) << " iteration " << iter;
    }
    if (isa == kernels::CpuIsa::kAvx512Vnni) {
      EXPECT_GT(kernels::HybridVnniCallsForTesting(), vnni0);
    } else {
      EXPECT_EQ(kernels::HybridVnniCallsForTesting(), vnni0);
    }
  }
}

// The VNNI path's taps (KernelIsa() kAvx512Vnni forced) against
// RefHybridConv over drawn shapes: input depths 1, 3, 5, 8, 16 and others
// (a tap rounded up to four bytes with zero weights, reading past a pixel
// and past the image), output channels around the 16-column panels and
// their pairs, kernels, strides, dilations (2 in width: one tap per filter
// pixel), SAME and VALID padding (VALID without padding reads the image
// itself), output rows of 1 to 12 pixels (8-row tiles running across
// rows, every tail), batches and threads. Every case runs the epilogue in
// registers (HybridVnniConvTaps); with dilation 1 in width, taps are whole
// filter rows, counted per case.
TEST(Conv2DHybridTest, VnniTapsMatchTfliteArithmetic) {
  if (kernels::DetectedCpuIsa() != kernels::CpuIsa::kAvx512Vnni) {
    GTEST_SKIP() << "no AVX-512 VNNI on this machine";
  }
  IsaCap cap(kernels::CpuIsa::kAvx512Vnni);
  std::mt19937 rng = testing::SeededRng(13);
  const int depths[] = {1, 3, 5, 8, 16};
  int ran = 0;
  for (int iter = 0; iter < 80; ++iter) {
    RandomCase c;
    if (!MakeRandomCase(rng, iter, /*depthwise=*/false, &c)) continue;
    ConvParams& p = c.p;
    p.cin = iter % 7 < 5 ? depths[iter % 7] : RandomInt(rng, 1, 40);
    p.cout = RandomInt(rng, 1, 40);
    p.kh = RandomInt(rng, 1, 4), p.kw = RandomInt(rng, 1, 4);
    p.h = RandomInt(rng, 1, 12), p.w = RandomInt(rng, 1, 12);
    p.sh = RandomInt(rng, 1, 2), p.sw = RandomInt(rng, 1, 2);
    p.dh = RandomInt(rng, 1, 2), p.dw = iter % 5 == 2 ? 2 : 1;
    if (iter % 9 == 0) p.kh = p.kw = 1, p.sh = p.sw = 1;  // direct
    if (OutSize(p, p.h, p.kh, p.sh, p.dh) <= 0 ||
        OutSize(p, p.w, p.kw, p.sw, p.dw) <= 0) {
      continue;
    }
    RedrawConvValues(rng, iter, /*minus128=*/0, &c);
    const bool direct = p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1;
    const int64_t conv0 = kernels::HybridVnniConvCallsForTesting();
    const int64_t row_taps0 = kernels::HybridConvRowTapsCallsForTesting();
    auto rt = BuildAndLoad(p, c.w, c.scales, c.bias, c.threads);
    ASSERT_TRUE(rt.ok()) << rt.status();
    EXPECT_EQ(Invoke(**rt, c.in), RefHybridConv(p, c.in, c.w, c.scales, c.bias))
        << "iteration " << iter;
    EXPECT_GT(kernels::HybridVnniConvCallsForTesting(), conv0)
        << "iteration " << iter;
    EXPECT_EQ(kernels::HybridConvRowTapsCallsForTesting() - row_taps0,
              !direct && p.dw == 1 ? 1 : 0)
        << "iteration " << iter;
    ++ran;
  }
  EXPECT_GE(ran, 40);
}

TEST(Conv2DHybridTest, RefusesWeightsWithAZeroPoint) {
  ConvParams p;
  p.cout = 2;
  auto rt = BuildAndLoad(p, {1, 2}, {0.5f, 0.25f}, {}, 1, /*zero_point=*/3);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find(
                "no CPU kernel for FLOAT32 input with INT8 weights"),
            absl::string_view::npos)
      << rt.status();
}

TEST(Conv2DHybridTest, RefusesGroupedConvolution) {
  ConvParams p;
  p.cin = 4, p.cout = 2;
  auto rt = BuildAndLoad(p, {1, 2, 3, 4}, {0.5f, 0.25f}, {}, 1, 0,
                         /*filter_cin=*/2);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("no CPU kernel"),
            absl::string_view::npos)
      << rt.status();
}

TEST(Conv2DHybridTest, RefusesFusedTanh) {
  ConvParams p;
  p.act = tfl::ActivationFunctionType_TANH;
  auto rt = BuildAndLoad(p, {1}, {0.5f}, {});
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("no CPU kernel"),
            absl::string_view::npos)
      << rt.status();
}

// --- DEPTHWISE_CONV_2D -----------------------------------------------------
// ConvParams' cout is cin * depth multiplier here.

absl::StatusOr<std::unique_ptr<Runtime>> BuildAndLoadDepthwise(
    const ConvParams& p, const std::vector<int8_t>& w,
    const std::vector<float>& scales, const std::vector<float>& bias,
    int threads = 1) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {p.n, p.h, p.w, p.cin});
  TensorId tw = g.Constant<int8_t>("w", {1, p.kh, p.kw, p.cout}, w);
  g.QuantizePerChannel(tw, scales, std::vector<int64_t>(scales.size(), 0), 3);
  TensorId tb =
      bias.empty() ? kNoTensor : g.Constant<float>("b", {p.cout}, bias);
  tfl::DepthwiseConv2DOptionsT o;
  o.padding = p.padding, o.stride_h = p.sh, o.stride_w = p.sw;
  o.dilation_h_factor = p.dh, o.dilation_w_factor = p.dw;
  o.depth_multiplier = p.cout / p.cin;
  o.fused_activation_function = p.act;
  const int oh = OutSize(p, p.h, p.kh, p.sh, p.dh);
  const int ow = OutSize(p, p.w, p.kw, p.sw, p.dw);
  g.Output(g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D)
               .In(x, tw, tb)
               .Options(o)
               .Out("y", F32, {p.n, oh, ow, p.cout}));
  return testing::LoadBuilt(mb, threads);
}

// reference_integer_ops::DepthwiseConvHybridPerChannel after
// NeonAsymmetricQuantizeFloats of each image.
std::vector<float> RefHybridDepthwise(const ConvParams& p,
                                      const std::vector<float>& in,
                                      const std::vector<int8_t>& w,
                                      const std::vector<float>& scales,
                                      const std::vector<float>& bias) {
  const int mult = p.cout / p.cin;
  const int oh = OutSize(p, p.h, p.kh, p.sh, p.dh);
  const int ow = OutSize(p, p.w, p.kw, p.sw, p.dw);
  const int pad_h =
      std::max(0, (oh - 1) * p.sh + (p.kh - 1) * p.dh + 1 - p.h) / 2;
  const int pad_w =
      std::max(0, (ow - 1) * p.sw + (p.kw - 1) * p.dw + 1 - p.w) / 2;
  const int64_t image = int64_t{p.h} * p.w * p.cin;
  std::vector<float> out;
  for (int b = 0; b < p.n; ++b) {
    std::vector<int32_t> q;
    float scale = 1;
    int32_t zp = 0;
    QuantizeAsymmetric(in.data() + b * image, image, &q, &scale, &zp);
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        for (int o = 0; o < p.cout; ++o) {
          int32_t acc = 0;
          for (int ky = 0; ky < p.kh; ++ky) {
            for (int kx = 0; kx < p.kw; ++kx) {
              const int y = oy * p.sh - pad_h + ky * p.dh;
              const int x = ox * p.sw - pad_w + kx * p.dw;
              if (y < 0 || y >= p.h || x < 0 || x >= p.w) continue;
              acc += w[(ky * p.kw + kx) * p.cout + o] *
                     (q[(y * p.w + x) * p.cin + o / mult] - zp);
            }
          }
          float v = static_cast<float>(acc) * (scales[o] * scale);
          if (!bias.empty()) v += bias[o];
          out.push_back(Activate(v, p.act));
        }
      }
    }
  }
  return out;
}

// Input {-2, 1.984375} (one pixel, 2 channels): asymmetric, q = 64 x =
// {-128, 127}, zero point 0. Depth multiplier 2, 1x1 filter {1, -2, 3, 4}
// with scales {0.5, 0.25, 0.5, 0.25}: channel 0 feeds outputs 0 and 1,
// channel 1 outputs 2 and 3:
//   0.5 * -128 / 64 = -1,  0.25 * 256 / 64 = 1,
//   0.5 * 381 / 64 = 2.9765625,  0.25 * 508 / 64 + 1 = 2.984375.
TEST(DepthwiseConv2DHybridTest, MatchesHandComputedValues) {
  ConvParams p;
  p.cin = 2, p.cout = 4;
  auto rt = BuildAndLoadDepthwise(p, {1, -2, 3, 4}, {0.5f, 0.25f, 0.5f, 0.25f},
                                  {0, 0, 0, 1});
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(Invoke(**rt, {-2, 1.984375f}),
            (std::vector<float>{-1, 1, 2.9765625f, 2.984375f}));
  EXPECT_NE((*rt)->Report().ToString().find("DepthwiseConv2DHybrid"),
            std::string::npos);
  EXPECT_EQ(Invoke(**rt, {0, 0}), (std::vector<float>{0, 0, 0, 1}));
}

// Random shapes, multipliers, strides, dilations, paddings, activations,
// batches and thread counts against RefHybridDepthwise, bit for bit.
TEST(DepthwiseConv2DHybridTest, MatchesTfliteArithmetic) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 60; ++iter) {
    RandomCase c;
    if (!MakeRandomCase(rng, iter, /*depthwise=*/true, &c)) continue;
    auto rt = BuildAndLoadDepthwise(c.p, c.w, c.scales, c.bias, c.threads);
    ASSERT_TRUE(rt.ok()) << rt.status();
    EXPECT_EQ(Invoke(**rt, c.in), RefHybridDepthwise(c.p, c.in, c.w, c.scales,
                                                     c.bias))
        << "iteration " << iter;
  }
}

// One scale for several output channels: TFLite's kernel would read scales
// past the end, so it is refused, saying why.
// Every ISA path the machine has, forced, against RefHybridDepthwise: the
// AVX-512 path (multiplier 1) over channel counts around its 16-channel
// vectors, weights holding -128 and not; it must be the one taken where
// forced, and only there.
TEST(DepthwiseConv2DHybridTest, MatchesTfliteArithmeticOnEveryIsa) {
  std::mt19937 rng = testing::SeededRng(11);
  const kernels::CpuIsa detected = kernels::DetectedCpuIsa();
  for (kernels::CpuIsa isa :
       {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2,
        kernels::CpuIsa::kAvx512Vnni}) {
    if (static_cast<int>(isa) > static_cast<int>(detected)) continue;
    IsaCap cap(isa);
    const int64_t calls0 = kernels::HybridDepthwiseAvx512CallsForTesting();
    for (int iter = 0; iter < 40; ++iter) {
      RandomCase c;
      if (!MakeRandomCase(rng, iter, /*depthwise=*/true, &c)) continue;
      if (iter % 2) {
        for (int8_t& v : c.w) {
          if (RandomInt(rng, 0, 9) == 0) v = -128;
        }
      }
      auto rt = BuildAndLoadDepthwise(c.p, c.w, c.scales, c.bias, c.threads);
      ASSERT_TRUE(rt.ok()) << rt.status();
      EXPECT_EQ(Invoke(**rt, c.in),
                RefHybridDepthwise(c.p, c.in, c.w, c.scales, c.bias))
          << kernels::CpuIsaName(isa) << " iteration " << iter;
    }
    if (isa == kernels::CpuIsa::kAvx512Vnni) {
      EXPECT_GT(kernels::HybridDepthwiseAvx512CallsForTesting(), calls0);
    } else {
      EXPECT_EQ(kernels::HybridDepthwiseAvx512CallsForTesting(), calls0);
    }
  }
}

TEST(DepthwiseConv2DHybridTest, RefusesOneScaleForSeveralChannels) {
  ConvParams p;
  p.cin = p.cout = 2;
  auto rt = BuildAndLoadDepthwise(p, {1, 2}, {0.5f}, {});
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find(
                "FLOAT32 input with INT8 weights with 1 scales along "
                "dimension 3; TFLite's hybrid depthwise convolution takes one "
                "per output channel (2, dimension 3)"),
            absl::string_view::npos)
      << rt.status();
}

}  // namespace
}  // namespace graft
