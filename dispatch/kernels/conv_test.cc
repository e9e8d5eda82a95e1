// CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV against naive reference
// loops: random shapes, paddings, strides, dilations, groups, activations,
// constant and computed weights, 1 and several threads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/gemm.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;

struct ConvParams {
  int n, h, w, cin, cout, kh, kw, sh, sw, dh, dw, groups, mult;
  tfl::Padding padding;
  tfl::ActivationFunctionType act;
};

int OutSize(tfl::Padding p, int in, int k, int s, int d) {
  int eff = (k - 1) * d + 1;
  return p == tfl::Padding_SAME ? (in + s - 1) / s : (in - eff + s) / s;
}
int Pad(int in, int k, int s, int d, int out) {
  return std::max(0, ((out - 1) * s + (k - 1) * d + 1 - in) / 2);
}
float Act(float v, tfl::ActivationFunctionType a) {
  if (a == tfl::ActivationFunctionType_RELU) return std::max(v, 0.f);
  if (a == tfl::ActivationFunctionType_RELU6) return std::min(std::max(v, 0.f), 6.f);
  if (a == tfl::ActivationFunctionType_RELU_N1_TO_1) return std::min(std::max(v, -1.f), 1.f);
  return v;
}

// Makes `y` (shape `shape`) the output of `g`; with `hard_swish`, y through
// a HARD_SWISH instead, then a RESHAPE to the same shape (the runtime fuses
// a HARD_SWISH only where its output is not the model's).
void OutputThroughHardSwish(SubgraphBuilder& g, TensorId y,
                            const std::vector<int32_t>& shape, bool hard_swish) {
  if (!hard_swish) {
    g.Output(y);
    return;
  }
  TensorId z = g.Op(tfl::BuiltinOperator_HARD_SWISH).In(y).Out("z", F32, shape);
  TensorId dims =
      g.Constant<int32_t>("dims", {static_cast<int32_t>(shape.size())}, shape);
  g.Output(g.Op(tfl::BuiltinOperator_RESHAPE).In(z, dims).Out("out", F32, shape));
}

// Runs `mb` on `threads` threads with inputs `inputs` and returns output 0.
// With `fused`, the runtime must have fused op 1 (a HARD_SWISH) into op 0.
std::vector<float> RunFloatModel(ModelBuilder& mb, int threads,
                                 const std::vector<std::vector<float>>& inputs,
                                 bool fused) {
  auto rt = testing::LoadBuilt(mb, threads);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  for (size_t i = 0; i < inputs.size(); ++i) testing::SetInput(**rt, i, inputs[i]);
  absl::Status st = (*rt)->Invoke();
  EXPECT_TRUE(st.ok()) << st;
  if (fused) {
    const RuntimeReport report = (*rt)->Report();
    const std::vector<OpReport>& ops = report.subgraphs[0].ops;
    EXPECT_EQ(ops.size(), 3u);
    if (ops.size() == 3) {
      EXPECT_THAT(ops[1].detail, ::testing::HasSubstr("fused into op 0"));
    }
  }
  return testing::GetOutput<float>(**rt, 0);
}

// The fused result must be TFLite's HARD_SWISH of the unfused one, bit for
// bit (NaN included: none arise from these inputs).
void ExpectHardSwishOf(const std::vector<float>& fused,
                       const std::vector<float>& plain, const std::string& what) {
  ASSERT_EQ(fused.size(), plain.size()) << what;
  for (size_t i = 0; i < plain.size(); ++i) {
    const float want = kernels::HardSwish(plain[i]);
    ASSERT_EQ(std::memcmp(&fused[i], &want, sizeof(float)), 0)
        << what << ": element " << i << " is " << fused[i] << ", HARD_SWISH("
        << plain[i] << ") is " << want;
  }
}

std::vector<float> RefConv(const ConvParams& p, const std::vector<float>& in,
                           const std::vector<float>& w,
                           const std::vector<float>* bias, int oh, int ow) {
  const int gin = p.cin / p.groups, gout = p.cout / p.groups;
  const int ph = Pad(p.h, p.kh, p.sh, p.dh, oh), pw = Pad(p.w, p.kw, p.sw, p.dw, ow);
  std::vector<float> out(size_t(p.n) * oh * ow * p.cout);
  for (int b = 0; b < p.n; ++b)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x)
        for (int oc = 0; oc < p.cout; ++oc) {
          const int g = oc / gout;
          double acc = bias ? (*bias)[oc] : 0;
          for (int ky = 0; ky < p.kh; ++ky)
            for (int kx = 0; kx < p.kw; ++kx)
              for (int ic = 0; ic < gin; ++ic) {
                int iy = y * p.sh - ph + ky * p.dh, ix = x * p.sw - pw + kx * p.dw;
                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
                acc += in[((size_t(b) * p.h + iy) * p.w + ix) * p.cin + g * gin + ic] *
                       w[((size_t(oc) * p.kh + ky) * p.kw + kx) * gin + ic];
              }
          out[((size_t(b) * oh + y) * ow + x) * p.cout + oc] = Act(float(acc), p.act);
        }
  return out;
}

// Draws one CONV_2D case (iteration `iter` picks the kind: groups, 1x1,
// dilation), runs it on 1 to 3 threads and compares with RefConv. `wide`
// draws up to 24 input and 40 output channels per group (every tail of the
// 16-column panel and the 8-column one) on up to 20 x 20 inputs. With
// `hard_swish`, runs it again followed by a HARD_SWISH, which the runtime
// fuses into the convolution (ExpectHardSwishOf).
void CheckConv2D(std::mt19937& rng, int iter, bool wide,
                 const std::string& what, bool hard_swish = false) {
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6, tfl::ActivationFunctionType_RELU_N1_TO_1};
  ConvParams p;
  p.groups = iter % 5 == 4 ? RandomInt(rng, 2, 3) : 1;
  const int max_hw = wide ? 20 : 12;
  p.n = RandomInt(rng, 1, 2), p.h = RandomInt(rng, 1, max_hw), p.w = RandomInt(rng, 1, max_hw);
  p.cin = RandomInt(rng, 1, wide ? 24 : 6) * p.groups;
  p.cout = RandomInt(rng, 1, wide ? 40 : 20) * p.groups;
  p.kh = RandomInt(rng, 1, 4), p.kw = RandomInt(rng, 1, 4);
  p.sh = RandomInt(rng, 1, 3), p.sw = RandomInt(rng, 1, 3);
  p.dh = iter % 7 == 3 ? 2 : 1, p.dw = iter % 7 == 3 ? 2 : 1;
  p.padding = RandomInt(rng, 0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
  if (iter % 6 == 0) p.kh = p.kw = p.sh = p.sw = p.dh = p.dw = 1;  // 1x1 path
  p.act = acts[RandomInt(rng, 0, 3)];
  const int oh = OutSize(p.padding, p.h, p.kh, p.sh, p.dh);
  const int ow = OutSize(p.padding, p.w, p.kw, p.sw, p.dw);
  if (oh <= 0 || ow <= 0) return;
  auto in = testing::RandomFloats(rng, int64_t(p.n) * p.h * p.w * p.cin);
  auto w = testing::RandomFloats(rng, int64_t(p.cout) * p.kh * p.kw * (p.cin / p.groups));
  auto bias = testing::RandomFloats(rng, p.cout);
  const bool has_bias = iter % 3 != 1, const_w = iter % 4 != 2;
  auto model = [&](ModelBuilder& mb, bool with_hard_swish) {
    auto& g = mb.Subgraph("main");
    TensorId x = g.Input("x", F32, {p.n, p.h, p.w, p.cin});
    std::vector<int32_t> wshape = {p.cout, p.kh, p.kw, p.cin / p.groups};
    TensorId tw = const_w ? g.Constant<float>("w", wshape, w) : g.Input("w", F32, wshape);
    TensorId tb = has_bias ? g.Constant<float>("b", {p.cout}, bias) : kNoTensor;
    tfl::Conv2DOptionsT o;
    o.padding = p.padding, o.stride_h = p.sh, o.stride_w = p.sw;
    o.dilation_h_factor = p.dh, o.dilation_w_factor = p.dw;
    o.fused_activation_function = p.act;
    const std::vector<int32_t> out_shape = {p.n, oh, ow, p.cout};
    OutputThroughHardSwish(
        g, g.Op(tfl::BuiltinOperator_CONV_2D).In(x, tw, tb).Options(o).Out("y", F32, out_shape),
        out_shape, with_hard_swish);
  };
  const int threads = RandomInt(rng, 1, 3);
  std::vector<std::vector<float>> inputs = {in};
  if (!const_w) inputs.push_back(w);
  const std::string label =
      absl::StrCat(what, "iteration ", iter, ": ", p.n, "x", p.h, "x", p.w, "x", p.cin,
                   " -> ", p.cout, " k ", p.kh, "x", p.kw, " s ", p.sh, "x", p.sw, " d ",
                   p.dh, " groups ", p.groups);
  ModelBuilder plain_mb;
  model(plain_mb, false);
  const std::vector<float> plain = RunFloatModel(plain_mb, threads, inputs, false);
  testing::ExpectNear(plain, RefConv(p, in, w, has_bias ? &bias : nullptr, oh, ow),
                      int64_t(p.kh) * p.kw * p.cin, label,
                      /*term_scale=*/1.0);  // inputs, weights in [-1, 1]
  if (!hard_swish) return;
  ModelBuilder fused_mb;
  model(fused_mb, true);
  ExpectHardSwishOf(RunFloatModel(fused_mb, threads, inputs, true), plain, label);
}

TEST(ConvTest, Conv2DMatchesReference) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 40; ++iter) {
    CheckConv2D(rng, iter, /*wide=*/false, "");
    if (HasFatalFailure()) return;
  }
}

// The float GEMM's builds (baseline, AVX2+FMA, AVX-512 VL) forced in turn, on wider
// shapes; every convolution that is not 1x1 / stride 1 / unpadded must read
// its input through the indirection table (no im2col). Every other case
// also runs with a HARD_SWISH fused into the convolution's tiles.
TEST(ConvTest, Conv2DMatchesReferenceOnEveryFloatGemmPath) {
  using kernels::CpuIsa;
  testing::ForEachForcedIsa({CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}, [&](CpuIsa isa) {
    const int64_t calls = kernels::GemmCallsForTesting(isa);
    const int64_t indirect = kernels::IndirectGemmCallsForTesting();
    std::mt19937 rng = testing::SeededRng(10 + static_cast<int>(isa));
    for (int iter = 0; iter < 60; ++iter) {
      CheckConv2D(rng, iter, /*wide=*/true, absl::StrCat(kernels::CpuIsaName(isa), " "),
                  /*hard_swish=*/iter % 2 == 1);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(kernels::GemmCallsForTesting(isa), calls) << kernels::CpuIsaName(isa);
    EXPECT_GT(kernels::IndirectGemmCallsForTesting(), indirect) << kernels::CpuIsaName(isa);
  });
}

// A MUL by a per-channel vector (a squeeze-and-excite scale) feeding a 1x1
// CONV_2D: the runtime folds it into the convolution's weights
// (KernelState::AbsorbInputScale), so the product is never written and
// each weight row is scaled instead; the result is the convolution of the
// product within its float tolerance. `variant` 0 is the absorbed case;
// the others must run the MUL: 1 a 3x3 convolution, 2 the MUL's output
// also a model output, 3 a MUL with a fused RELU, 4 a scale of the
// input's whole shape. x is computed (a RELU of the input), so it lives in
// the arena and must stay live until the convolution reads it.
void CheckMulIntoConv(std::mt19937& rng, int iter, int variant,
                      const std::string& what) {
  ConvParams p;
  p.groups = 1, p.mult = 1;
  p.n = RandomInt(rng, 1, 2);
  p.h = RandomInt(rng, 1, 12);
  p.w = RandomInt(rng, 1, 12);
  p.cin = RandomInt(rng, 1, 40);
  p.cout = RandomInt(rng, 1, 40);
  if (variant == 4) p.h = std::max(p.h, 2);  // else the scale is per channel
  p.kh = p.kw = variant == 1 ? 3 : 1;
  p.sh = p.sw = p.dh = p.dw = 1;
  p.padding = tfl::Padding_SAME;
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU6};
  p.act = acts[RandomInt(rng, 0, 1)];
  const std::vector<int32_t> x_shape = {p.n, p.h, p.w, p.cin};
  const std::vector<int32_t> scale_shape =
      variant == 4 ? x_shape
      : iter % 2   ? std::vector<int32_t>{p.cin}
                   : std::vector<int32_t>{1, 1, 1, p.cin};
  auto in = testing::RandomFloats(rng, int64_t(p.n) * p.h * p.w * p.cin);
  auto scale =
      testing::RandomFloats(rng, variant == 4 ? int64_t(in.size()) : p.cin);
  auto w = testing::RandomFloats(rng, int64_t(p.cout) * p.kh * p.kw * p.cin);
  auto bias = testing::RandomFloats(rng, p.cout);
  const bool has_bias = iter % 3 != 1, scale_first = iter % 4 >= 2;
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId input = g.Input("in", F32, x_shape);
  TensorId s = g.Input("scale", F32, scale_shape);
  TensorId x = g.Op(tfl::BuiltinOperator_RELU).In(input).Out("x", F32, x_shape);
  tfl::MulOptionsT mo;
  if (variant == 3)
    mo.fused_activation_function = tfl::ActivationFunctionType_RELU;
  TensorId m = g.Op(tfl::BuiltinOperator_MUL)
                   .In(scale_first ? s : x, scale_first ? x : s)
                   .Options(mo)
                   .Out("m", F32, x_shape);
  TensorId tw = g.Constant<float>("w", {p.cout, p.kh, p.kw, p.cin}, w);
  TensorId tb = has_bias ? g.Constant<float>("b", {p.cout}, bias) : kNoTensor;
  tfl::Conv2DOptionsT o;
  o.padding = p.padding, o.stride_h = o.stride_w = 1;
  o.fused_activation_function = p.act;
  g.Output(g.Op(tfl::BuiltinOperator_CONV_2D)
               .In(m, tw, tb)
               .Options(o)
               .Out("y", F32, {p.n, p.h, p.w, p.cout}));
  if (variant == 2) g.Output(m);
  const int threads = RandomInt(rng, 1, 3);
  auto rt = testing::LoadBuilt(mb, threads);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput(**rt, 0, in);
  testing::SetInput(**rt, 1, scale);
  ASSERT_TRUE((*rt)->Invoke().ok());
  // The reference convolves the product the MUL would have written.
  std::vector<float> product(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    float v = std::max(in[i], 0.0f) * scale[variant == 4 ? i : i % p.cin];
    product[i] = variant == 3 ? std::max(v, 0.0f) : v;
  }
  const std::string label = absl::StrCat(
      what, "variant ", variant, " iteration ", iter, ": ", p.n, "x", p.h, "x",
      p.w, "x", p.cin, " -> ", p.cout, " threads ", threads);
  testing::ExpectNear(
      testing::GetOutput<float>(**rt, 0),
      RefConv(p, product, w, has_bias ? &bias : nullptr, p.h, p.w),
      int64_t(p.kh) * p.kw * p.cin, label, /*term_scale=*/1.0);
  const RuntimeReport report = (*rt)->Report();
  const std::string& mul_detail = report.subgraphs[0].ops[1].detail;
  if (variant == 0) {
    EXPECT_THAT(mul_detail, ::testing::HasSubstr("fused into op 2 (CONV_2D)"))
        << label;
  } else {
    EXPECT_THAT(mul_detail, ::testing::Not(::testing::HasSubstr("fused")))
        << label;
  }
}

TEST(ConvTest, APerChannelMulGoesIntoTheWeightsOfA1x1Conv2D) {
  using kernels::CpuIsa;
  testing::ForEachForcedIsa(
      {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}, [&](CpuIsa isa) {
        std::mt19937 rng = testing::SeededRng(20 + static_cast<int>(isa));
        for (int iter = 0; iter < 40; ++iter) {
          CheckMulIntoConv(rng, iter, /*variant=*/0,
                           absl::StrCat(kernels::CpuIsaName(isa), " "));
          if (HasFatalFailure()) return;
        }
      });
}

TEST(ConvTest, AMulThatCannotGoIntoTheConv2DRunsAsItself) {
  std::mt19937 rng = testing::SeededRng(25);
  for (int iter = 0; iter < 40; ++iter) {
    CheckMulIntoConv(rng, iter, /*variant=*/1 + iter % 4, "");
    if (HasFatalFailure()) return;
  }
}

// Draws one DEPTHWISE_CONV_2D case and compares with RefConv. `wide` draws
// channels that are mostly multiples of 8 (the multi-pixel path) on inputs
// up to 24 wide.
void CheckDepthwise(std::mt19937& rng, int iter, bool wide, const std::string& what,
                    bool hard_swish = false) {
  ConvParams p;
  const int max_hw = wide ? 24 : 10;
  p.n = RandomInt(rng, 1, 2), p.h = RandomInt(rng, 1, max_hw), p.w = RandomInt(rng, 1, max_hw);
  // Multiplier 1 runs in blocks of 16 and 8 channels and a remainder:
  // every third case has enough channels for all three.
  if (wide) {
    p.cin = iter % 4 == 3 ? RandomInt(rng, 1, 40) : 8 * RandomInt(rng, 1, 6);
  } else {
    p.cin = iter % 3 == 0 ? RandomInt(rng, 17, 40) : RandomInt(rng, 1, 9);
  }
  p.mult = iter % 3 == 2 && !wide ? RandomInt(rng, 2, 3) : 1;
  p.cout = p.cin * p.mult, p.groups = p.cin;
  p.kh = RandomInt(rng, 1, 3), p.kw = RandomInt(rng, 1, 3);
  if (wide && iter % 5 == 4) p.kh = RandomInt(rng, 4, 7), p.kw = RandomInt(rng, 4, 7);
  p.sh = RandomInt(rng, 1, 2), p.sw = RandomInt(rng, 1, 2);
  p.dh = p.dw = iter % 5 == 1 ? 2 : 1;
  p.padding = RandomInt(rng, 0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
  p.act = RandomInt(rng, 0, 1) ? tfl::ActivationFunctionType_RELU6
                               : tfl::ActivationFunctionType_NONE;
  if (wide && iter % 6 == 0) {
    // Every sixth wide case: a 3x3 SAME filter over at least 8 columns and
    // whole blocks of 8 channels, so each forced build runs the groups of
    // pixels at the left and right edges; every other one of them dilated
    // vertically only (the column-reusing kernel takes any vertical
    // dilation).
    p.kh = p.kw = 3, p.dw = 1, p.padding = tfl::Padding_SAME;
    p.dh = iter % 12 == 0 ? 2 : 1;
    p.w = std::max(p.w, 8);
    p.cin = p.cout = p.groups = std::max(8, p.cin / 8 * 8);
  }
  if (wide && iter % 6 == 3) {
    // Every sixth wide case from the fourth: hundreds of channels (whole
    // blocks of 8), a filter 3 or 5 wide and SAME over at least 8
    // columns, so that what a group of pixels reads over all channels
    // outgrows L1 and each output row goes over spans of channels.
    p.kw = RandomInt(rng, 0, 1) ? 3 : 5, p.dw = 1;
    p.padding = tfl::Padding_SAME;
    p.h = std::min(p.h, 6), p.w = RandomInt(rng, 8, 14);
    p.cin = p.cout = p.groups = 8 * RandomInt(rng, 30, 80);
  }
  const int oh = OutSize(p.padding, p.h, p.kh, p.sh, p.dh);
  const int ow = OutSize(p.padding, p.w, p.kw, p.sw, p.dw);
  if (oh <= 0 || ow <= 0) return;
  auto in = testing::RandomFloats(rng, int64_t(p.n) * p.h * p.w * p.cin);
  auto w = testing::RandomFloats(rng, int64_t(p.kh) * p.kw * p.cout);
  auto bias = testing::RandomFloats(rng, p.cout);
  const bool has_bias = iter % 4 != 1;
  // Reference: a grouped conv with one input channel per group, weights
  // rearranged from [1, kh, kw, cout] to [cout, kh, kw, 1].
  std::vector<float> w_ohwi(w.size());
  for (int ky = 0; ky < p.kh; ++ky)
    for (int kx = 0; kx < p.kw; ++kx)
      for (int oc = 0; oc < p.cout; ++oc)
        w_ohwi[(size_t(oc) * p.kh + ky) * p.kw + kx] = w[(size_t(ky) * p.kw + kx) * p.cout + oc];
  auto model = [&](ModelBuilder& mb, bool with_hard_swish) {
    auto& g = mb.Subgraph("main");
    TensorId x = g.Input("x", F32, {p.n, p.h, p.w, p.cin});
    TensorId tw = g.Constant<float>("w", {1, p.kh, p.kw, p.cout}, w);
    TensorId tb = has_bias ? g.Constant<float>("b", {p.cout}, bias) : kNoTensor;
    tfl::DepthwiseConv2DOptionsT o;
    o.padding = p.padding, o.stride_h = p.sh, o.stride_w = p.sw;
    o.dilation_h_factor = p.dh, o.dilation_w_factor = p.dw;
    o.depth_multiplier = p.mult, o.fused_activation_function = p.act;
    const std::vector<int32_t> out_shape = {p.n, oh, ow, p.cout};
    OutputThroughHardSwish(g,
                           g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D)
                               .In(x, tw, tb)
                               .Options(o)
                               .Out("y", F32, out_shape),
                           out_shape, with_hard_swish);
  };
  const int threads = RandomInt(rng, 1, 2);
  const std::string label =
      absl::StrCat(what, "iteration ", iter, ": ", p.n, "x", p.h, "x", p.w, "x", p.cin,
                   " mult ", p.mult, " k ", p.kh, "x", p.kw, " s ", p.sh, "x", p.sw,
                   " d ", p.dh, "x", p.dw);
  ModelBuilder plain_mb;
  model(plain_mb, false);
  const std::vector<float> plain = RunFloatModel(plain_mb, threads, {in}, false);
  testing::ExpectNear(plain, RefConv(p, in, w_ohwi, has_bias ? &bias : nullptr, oh, ow),
                      p.kh * p.kw, label,
                      /*term_scale=*/1.0);  // inputs, weights in [-1, 1]
  if (!hard_swish) return;
  ModelBuilder fused_mb;
  model(fused_mb, true);
  ExpectHardSwishOf(RunFloatModel(fused_mb, threads, {in}, true), plain, label);
}

TEST(ConvTest, DepthwiseConv2DMatchesReference) {
  std::mt19937 rng = testing::SeededRng(1);
  for (int iter = 0; iter < 30; ++iter) {
    CheckDepthwise(rng, iter, /*wide=*/false, "");
    if (HasFatalFailure()) return;
  }
}

// The float depthwise builds (baseline, AVX2+FMA, AVX-512 VL) forced in
// turn, on wider inputs with channels mostly multiples of 8: the path
// computing several output pixels together must be taken, also on rows
// whose window the top or bottom edge cuts and over spans of channels. Every
// other case also runs with a HARD_SWISH fused into the convolution's rows.
TEST(ConvTest, DepthwiseConv2DMatchesReferenceOnEveryFloatPath) {
  using kernels::CpuIsa;
  testing::ForEachForcedIsa({CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}, [&](CpuIsa isa) {
    const int64_t groups = kernels::FloatDepthwisePixelGroupsForTesting(isa);
    const int64_t cut = kernels::FloatDepthwiseCutRowGroupsForTesting();
    const int64_t row_kernel = kernels::FloatDepthwiseRowKernelGroupsForTesting();
    const int64_t edge = kernels::FloatDepthwiseEdgeGroupsForTesting();
    const int64_t spans = kernels::FloatDepthwiseChannelSpanRowsForTesting();
    std::mt19937 rng = testing::SeededRng(20 + static_cast<int>(isa));
    for (int iter = 0; iter < 60; ++iter) {
      CheckDepthwise(rng, iter, /*wide=*/true, absl::StrCat(kernels::CpuIsaName(isa), " "),
                     /*hard_swish=*/iter % 2 == 1);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(kernels::FloatDepthwisePixelGroupsForTesting(isa), groups)
        << kernels::CpuIsaName(isa);
    EXPECT_GT(kernels::FloatDepthwiseCutRowGroupsForTesting(), cut)
        << kernels::CpuIsaName(isa);
    EXPECT_GT(kernels::FloatDepthwiseRowKernelGroupsForTesting(), row_kernel)
        << kernels::CpuIsaName(isa);
    EXPECT_GT(kernels::FloatDepthwiseEdgeGroupsForTesting(), edge)
        << kernels::CpuIsaName(isa);
    EXPECT_GT(kernels::FloatDepthwiseChannelSpanRowsForTesting(), spans)
        << kernels::CpuIsaName(isa);
  });
}

TEST(ConvTest, TransposeConvMatchesReference) {
  std::mt19937 rng = testing::SeededRng(2);
  for (int iter = 0; iter < 20; ++iter) {
    const int h = RandomInt(rng, 1, 6), w = RandomInt(rng, 1, 6);
    const int cin = RandomInt(rng, 1, 5), cout = RandomInt(rng, 1, 12);
    const int k = RandomInt(rng, 1, 4), s = RandomInt(rng, 1, 3);
    const auto padding = RandomInt(rng, 0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
    const int oh = padding == tfl::Padding_SAME ? h * s : (h - 1) * s + k;
    const int ow = padding == tfl::Padding_SAME ? w * s : (w - 1) * s + k;
    auto in = testing::RandomFloats(rng, int64_t(h) * w * cin);
    auto wt = testing::RandomFloats(rng, int64_t(cout) * k * k * cin);
    auto bias = testing::RandomFloats(rng, cout);
    const bool has_bias = iter % 2 == 0, const_w = iter % 3 != 1;
    // Reference scatter, TFLite's padding rule (conv from output to input).
    const int conv_out_h = OutSize(padding, oh, k, s, 1), conv_out_w = OutSize(padding, ow, k, s, 1);
    const int ph = Pad(oh, k, s, 1, conv_out_h), pw = Pad(ow, k, s, 1, conv_out_w);
    std::vector<double> acc(size_t(oh) * ow * cout, 0);
    for (int iy = 0; iy < h; ++iy)
      for (int ix = 0; ix < w; ++ix)
        for (int ic = 0; ic < cin; ++ic)
          for (int fy = 0; fy < k; ++fy)
            for (int fx = 0; fx < k; ++fx) {
              int oy = iy * s + fy - ph, ox = ix * s + fx - pw;
              if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
              for (int oc = 0; oc < cout; ++oc)
                acc[(size_t(oy) * ow + ox) * cout + oc] +=
                    in[(size_t(iy) * w + ix) * cin + ic] * wt[((size_t(oc) * k + fy) * k + fx) * cin + ic];
            }
    std::vector<float> want(acc.size());
    for (size_t i = 0; i < acc.size(); ++i) want[i] = float(acc[i] + (has_bias ? bias[i % cout] : 0));
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId shape = g.Constant<int32_t>("shape", {4}, {1, oh, ow, cout});
    TensorId tw = const_w ? g.Constant<float>("w", {cout, k, k, cin}, wt)
                          : g.Input("w", F32, {cout, k, k, cin});
    TensorId x = g.Input("x", F32, {1, h, w, cin});
    TensorId tb = has_bias ? g.Constant<float>("b", {cout}, bias) : kNoTensor;
    tfl::TransposeConvOptionsT o;
    o.padding = padding, o.stride_h = o.stride_w = s;
    g.Output(g.Op(tfl::BuiltinOperator_TRANSPOSE_CONV).In(shape, tw, x, tb).Options(o).Out(
        "y", F32, {1, oh, ow, cout}));
    auto rt = testing::LoadBuilt(mb, RandomInt(rng, 1, 2));
    ASSERT_TRUE(rt.ok()) << rt.status();
    if (const_w) {
      testing::SetInput(**rt, 0, in);
    } else {
      testing::SetInput(**rt, 0, wt);
      testing::SetInput(**rt, 1, in);
    }
    ASSERT_TRUE((*rt)->Invoke().ok());
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want, int64_t(cin) * k * k,
                        absl::StrCat("iteration ", iter));
  }
}

// CONV_3D: NDHWC input, DHWIO filter, against a naive 8-deep loop.
TEST(ConvTest, Conv3DMatchesReference) {
  std::mt19937 rng = testing::SeededRng(3);
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6};
  for (int iter = 0; iter < 24; ++iter) {
    const int n = RandomInt(rng, 1, 2), cin = RandomInt(rng, 1, 5),
              cout = RandomInt(rng, 1, 12);
    int in[3], k[3], st[3], dil[3], out[3], pad[3];
    const tfl::Padding padding =
        iter % 2 ? tfl::Padding_SAME : tfl::Padding_VALID;
    bool empty = false;
    for (int a = 0; a < 3; ++a) {
      in[a] = RandomInt(rng, 1, 7), k[a] = RandomInt(rng, 1, 3);
      st[a] = RandomInt(rng, 1, 2), dil[a] = iter % 5 == 2 ? 2 : 1;
      out[a] = OutSize(padding, in[a], k[a], st[a], dil[a]);
      pad[a] = Pad(in[a], k[a], st[a], dil[a], out[a]);
      empty |= out[a] <= 0;
    }
    if (empty) continue;
    const auto act = acts[RandomInt(rng, 0, 2)];
    const bool has_bias = iter % 3 != 1, const_w = iter % 4 != 2;
    auto x = testing::RandomFloats(rng, int64_t(n) * in[0] * in[1] * in[2] * cin);
    auto w = testing::RandomFloats(rng, int64_t(k[0]) * k[1] * k[2] * cin * cout);
    auto bias = testing::RandomFloats(rng, cout);
    std::vector<float> want(size_t(n) * out[0] * out[1] * out[2] * cout);
    size_t at = 0;
    for (int b = 0; b < n; ++b)
      for (int z = 0; z < out[0]; ++z)
        for (int y = 0; y < out[1]; ++y)
          for (int xo = 0; xo < out[2]; ++xo)
            for (int oc = 0; oc < cout; ++oc) {
              double acc = has_bias ? bias[oc] : 0;
              for (int kz = 0; kz < k[0]; ++kz)
                for (int ky = 0; ky < k[1]; ++ky)
                  for (int kx = 0; kx < k[2]; ++kx) {
                    const int iz = z * st[0] - pad[0] + kz * dil[0];
                    const int iy = y * st[1] - pad[1] + ky * dil[1];
                    const int ix = xo * st[2] - pad[2] + kx * dil[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] ||
                        ix < 0 || ix >= in[2]) {
                      continue;
                    }
                    for (int ic = 0; ic < cin; ++ic) {
                      acc += x[(((size_t(b) * in[0] + iz) * in[1] + iy) * in[2] + ix) * cin + ic] *
                             w[(((size_t(kz) * k[1] + ky) * k[2] + kx) * cin + ic) * cout + oc];
                    }
                  }
              want[at++] = Act(float(acc), act);
            }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId tx = g.Input("x", F32, {n, in[0], in[1], in[2], cin});
    std::vector<int32_t> wshape = {k[0], k[1], k[2], cin, cout};
    TensorId tw = const_w ? g.Constant<float>("w", wshape, w) : g.Input("w", F32, wshape);
    TensorId tb = has_bias ? g.Constant<float>("b", {cout}, bias) : kNoTensor;
    tfl::Conv3DOptionsT o;
    o.padding = padding;
    o.stride_d = st[0], o.stride_h = st[1], o.stride_w = st[2];
    o.dilation_d_factor = dil[0], o.dilation_h_factor = dil[1];
    o.dilation_w_factor = dil[2];
    o.fused_activation_function = act;
    g.Output(g.Op(tfl::BuiltinOperator_CONV_3D).In(tx, tw, tb).Options(o).Out(
        "y", F32, {n, out[0], out[1], out[2], cout}));
    auto rt = testing::LoadBuilt(mb, RandomInt(rng, 1, 3));
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, x);
    if (!const_w) testing::SetInput(**rt, 1, w);
    ASSERT_TRUE((*rt)->Invoke().ok());
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want,
                        int64_t(k[0]) * k[1] * k[2] * cin,
                        absl::StrCat("iteration ", iter));
  }
}

TEST(ConvTest, Conv3DRefusesMismatchedFilterDepth) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2, 3, 3, 4});
  TensorId w = g.Constant<float>("w", {1, 1, 1, 3, 2}, std::vector<float>(6, 1));
  tfl::Conv3DOptionsT o;
  o.stride_d = o.stride_h = o.stride_w = 1;
  g.Output(g.Op(tfl::BuiltinOperator_CONV_3D).In(x, w).Options(o).Out("y", F32, {}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("filter depth 3 does not match 4 input channels"));
}

TEST(ConvTest, RefusesInt16InputWithInt8WeightsNamingDtypes) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT16, {1, 2, 2, 1});
  TensorId w = g.Constant<int8_t>("w", {1, 1, 1, 1}, {1});
  tfl::Conv2DOptionsT o;
  o.stride_h = o.stride_w = 1;
  g.Output(g.Op(tfl::BuiltinOperator_CONV_2D).In(x, w).Options(o).Out(
      "y", tfl::TensorType_INT16, {1, 2, 2, 1}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find(
                "op 0 (CONV_2D): no CPU kernel for INT16 input with INT8 weights"),
            absl::string_view::npos)
      << rt.status();
}

}  // namespace
}  // namespace graft
