// Quantized CONV_2D (INT8 per-channel and 16x8) and FULLY_CONNECTED
// against a tiny real-arithmetic reference: the integer kernels must land
// within 1 LSB of round(real result / output scale) + zero point. Then the
// INT8 CONV_2D's AVX-512 VNNI path without im2col (taps of a padded copy)
// against the baseline path over drawn shapes: bit-exact.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/quantized_gemm.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;

template <typename T, typename B>
void RunConv(bool fc, std::mt19937& rng, int iter) {
  constexpr bool k16 = sizeof(T) == 2;
  const tfl::TensorType type = k16 ? tfl::TensorType_INT16 : tfl::TensorType_INT8;
  const int h = RandomInt(rng, 1, 6), w = RandomInt(rng, 1, 6);
  const int cin = RandomInt(rng, 1, 5), cout = RandomInt(rng, 1, 5);
  const int k = fc ? 1 : RandomInt(rng, 1, 3);
  const bool same = RandomInt(rng, 0, 1) == 1;
  const float in_s = 0.02f, out_s = k16 ? 0.005f : 0.05f;
  const int in_zp = k16 ? 0 : RandomInt(rng, -10, 10), out_zp = k16 ? 0 : RandomInt(rng, -10, 10);
  std::vector<float> ws(cout);
  for (auto& s : ws) s = std::uniform_real_distribution<float>(0.002f, 0.01f)(rng);
  std::vector<int8_t> wv(int64_t{cout} * k * k * cin);
  for (auto& v : wv) v = static_cast<int8_t>(RandomInt(rng, -127, 127));
  std::vector<B> bv(cout);
  for (auto& v : bv) v = RandomInt(rng, -500, 500);
  const int oh = fc ? 1 : (same ? h : h - k + 1), ow = fc ? 1 : (same ? w : w - k + 1);
  if (oh <= 0 || ow <= 0) return;
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  const std::vector<int32_t> xs = fc ? std::vector<int32_t>{2, cin} : std::vector<int32_t>{1, h, w, cin};
  TensorId x = g.Input("x", type, xs);
  TensorId tw = fc ? g.Constant<int8_t>("w", {cout, cin}, wv)
                   : g.Constant<int8_t>("w", {cout, k, k, cin}, wv);
  TensorId tb = g.Constant<B>("b", {cout}, bv);
  g.Quantize(x, in_s, in_zp);
  std::vector<float> bs(cout);
  for (int c = 0; c < cout; ++c) bs[c] = in_s * ws[c];
  std::vector<int64_t> zeros(cout, 0);
  g.QuantizePerChannel(tw, ws, zeros, 0).QuantizePerChannel(tb, bs, zeros, 0);
  TensorId y;
  if (fc) {
    y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, tw, tb)
            .Options(tfl::FullyConnectedOptionsT{}).Out("y", type, {2, cout});
  } else {
    tfl::Conv2DOptionsT o;
    o.stride_h = o.stride_w = 1;
    o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
    y = g.Op(tfl::BuiltinOperator_CONV_2D).In(x, tw, tb).Options(o)
            .Out("y", type, {1, oh, ow, cout});
  }
  g.Quantize(y, out_s, out_zp).Output(y);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  const int64_t nx = fc ? 2 * cin : int64_t{h} * w * cin;
  std::vector<T> xv(nx);
  for (auto& v : xv) v = static_cast<T>(RandomInt(rng, k16 ? -300 : -128, k16 ? 300 : 127));
  testing::SetInput(**rt, 0, xv);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<T> got = testing::GetOutput<T>(**rt, 0);
  const int rows = fc ? 2 : oh * ow;
  const int pad = same ? (k - 1) / 2 : 0;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cout; ++c) {
      double acc = bv[c] * double(bs[c]);
      const int oy = fc ? 0 : r / ow, ox = fc ? 0 : r % ow;
      for (int ky = 0; ky < k; ++ky) {
        for (int kx = 0; kx < k; ++kx) {
          const int iy = oy + ky - pad, ix = ox + kx - pad;
          if (!fc && (iy < 0 || iy >= h || ix < 0 || ix >= w)) continue;
          for (int i = 0; i < cin; ++i) {
            const int64_t xi = fc ? int64_t{r} * cin + i : (int64_t{iy} * w + ix) * cin + i;
            acc += in_s * (double(xv[xi]) - in_zp) * ws[c] *
                   wv[((int64_t{c} * k + ky) * k + kx) * cin + i];
          }
        }
      }
      const double lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
      const double q = std::min(hi, std::max(lo, std::round(acc / out_s) + out_zp));
      ASSERT_LE(std::abs(got[r * cout + c] - q), 1.0)
          << (fc ? "FC" : "CONV") << " iteration " << iter << " row " << r << " channel " << c;
    }
  }
}

TEST(QuantizedConvTest, Int8PerChannelConvWithin1LsbOfReal) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 40; ++iter) RunConv<int8_t, int32_t>(false, rng, iter);
}

TEST(QuantizedConvTest, Int16x8ConvWithInt64BiasWithin1LsbOfReal) {
  std::mt19937 rng = testing::SeededRng(1);
  for (int iter = 0; iter < 40; ++iter) RunConv<int16_t, int64_t>(false, rng, iter);
}

TEST(QuantizedConvTest, Int8PerChannelFullyConnectedWithin1LsbOfReal) {
  std::mt19937 rng = testing::SeededRng(2);
  for (int iter = 0; iter < 40; ++iter) RunConv<int8_t, int32_t>(true, rng, iter);
}

// One drawn INT8 CONV_2D: every axis of the window drawn on its own
// (filter, stride and dilation per axis, SAME or VALID), odd channel
// counts, batch up to 3, input zero points often at the ends of the INT8
// range, inputs often saturated, biases sometimes large enough that the
// sums leave the 32-bit requantization's range.
struct ConvCase {
  int batch, h, w, cin, cout, kh, kw, sh, sw, dh, dw;
  bool same, relu6;
  int in_zp, out_zp;
  std::vector<float> ws;
  std::vector<int8_t> wv, xv;
  std::vector<int32_t> bv;
  int oh = 0, ow = 0;
};

ConvCase DrawConvCase(std::mt19937& rng) {
  ConvCase c;
  c.batch = RandomInt(rng, 1, 3);
  c.h = RandomInt(rng, 1, 14), c.w = RandomInt(rng, 1, 14);
  c.cin =
      RandomInt(rng, 0, 3) == 0 ? RandomInt(rng, 1, 4) : RandomInt(rng, 1, 40);
  c.cout = RandomInt(rng, 1, 70);
  c.kh = RandomInt(rng, 1, 5), c.kw = RandomInt(rng, 1, 5);
  c.sh = RandomInt(rng, 1, 3), c.sw = RandomInt(rng, 1, 3);
  c.dh = RandomInt(rng, 1, 3), c.dw = RandomInt(rng, 1, 3);
  c.same = RandomInt(rng, 0, 1) == 1;
  c.relu6 = RandomInt(rng, 0, 1) == 1;
  const int zp_kind = RandomInt(rng, 0, 3);
  c.in_zp = zp_kind == 0   ? -128
            : zp_kind == 1 ? 127
                           : RandomInt(rng, -128, 127);
  c.out_zp = RandomInt(rng, -128, 127);
  const int ekh = (c.kh - 1) * c.dh + 1, ekw = (c.kw - 1) * c.dw + 1;
  c.oh = c.same ? (c.h + c.sh - 1) / c.sh : (c.h - ekh) / c.sh + 1;
  c.ow = c.same ? (c.w + c.sw - 1) / c.sw : (c.w - ekw) / c.sw + 1;
  c.ws.resize(c.cout);
  for (auto& s : c.ws)
    s = std::uniform_real_distribution<float>(0.001f, 0.01f)(rng);
  c.wv.resize(int64_t{c.cout} * c.kh * c.kw * c.cin);
  for (auto& v : c.wv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  c.bv.resize(c.cout);
  const int bias_max = RandomInt(rng, 0, 3) == 0 ? 1 << 29 : 5000;
  for (auto& v : c.bv) v = RandomInt(rng, -bias_max, bias_max);
  c.xv.resize(int64_t{c.batch} * c.h * c.w * c.cin);
  const bool saturated = RandomInt(rng, 0, 3) == 0;
  for (auto& v : c.xv) {
    v = static_cast<int8_t>(saturated ? (RandomInt(rng, 0, 1) ? 127 : -128)
                                      : RandomInt(rng, -128, 127));
  }
  return c;
}

// Draws c's filter and input again for the shape it was changed to; the
// channels it gained have scale 0.005 and no bias.
void RedrawForShape(std::mt19937& rng, ConvCase* c) {
  c->wv.resize(int64_t{c->cout} * c->kh * c->kw * c->cin);
  for (auto& v : c->wv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  c->xv.resize(int64_t{c->batch} * c->h * c->w * c->cin);
  for (auto& v : c->xv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  c->ws.resize(c->cout, 0.005f), c->bv.resize(c->cout, 0);
}

// The case's shape, for a failure's message.
std::string Describe(const ConvCase& c) {
  return absl::StrCat("batch ", c.batch, " ", c.h, "x", c.w, "x", c.cin, " -> ",
                      c.cout, ", filter ", c.kh, "x", c.kw, " stride ", c.sh,
                      ",", c.sw, " dilation ", c.dh, ",", c.dw,
                      c.same ? " SAME" : " VALID", " zero point ", c.in_zp);
}

// Runs `c` with KernelIsa() capped at `isa` on `threads` threads.
std::vector<int8_t> RunConvCase(const ConvCase& c, kernels::CpuIsa isa,
                                int threads) {
  testing::IsaCap cap(isa);
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT8, {c.batch, c.h, c.w, c.cin});
  TensorId tw = g.Constant<int8_t>("w", {c.cout, c.kh, c.kw, c.cin}, c.wv);
  TensorId tb = g.Constant<int32_t>("b", {c.cout}, c.bv);
  const float in_s = 0.05f;
  g.Quantize(x, in_s, c.in_zp);
  std::vector<float> bs(c.cout);
  for (int i = 0; i < c.cout; ++i) bs[i] = in_s * c.ws[i];
  std::vector<int64_t> zeros(c.cout, 0);
  g.QuantizePerChannel(tw, c.ws, zeros, 0).QuantizePerChannel(tb, bs, zeros, 0);
  tfl::Conv2DOptionsT o;
  o.stride_h = c.sh, o.stride_w = c.sw;
  o.dilation_h_factor = c.dh, o.dilation_w_factor = c.dw;
  o.padding = c.same ? tfl::Padding_SAME : tfl::Padding_VALID;
  o.fused_activation_function = c.relu6 ? tfl::ActivationFunctionType_RELU6
                                        : tfl::ActivationFunctionType_NONE;
  TensorId y =
      g.Op(tfl::BuiltinOperator_CONV_2D)
          .In(x, tw, tb)
          .Options(o)
          .Out("y", tfl::TensorType_INT8, {c.batch, c.oh, c.ow, c.cout});
  g.Quantize(y, 0.1f, c.out_zp).Output(y);
  auto rt = testing::LoadBuilt(mb, threads);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  testing::SetInput(**rt, 0, c.xv);
  EXPECT_TRUE((*rt)->Invoke().ok());
  return testing::GetOutput<int8_t>(**rt, 0);
}

// Runs `c` with the VNNI path forced (where the CPU has it) on 1 and 2
// threads: the baseline path's bytes (the int16 GEMM, bit-exact with
// TFLite's reference kernels) each time, and `expect(threads, n)` on the n
// calls `count` counted meanwhile.
void ExpectVnniMatchesBaseline(
    const ConvCase& c, int iter, int64_t (*count)(),
    const std::function<void(int threads, int64_t n)>& expect) {
  const std::vector<int8_t> want =
      RunConvCase(c, kernels::CpuIsa::kBaseline, 1);
  testing::ForEachForcedIsa({kernels::CpuIsa::kAvx512Vnni},
                            [&](kernels::CpuIsa isa) {
                              for (int threads : {1, 2}) {
                                const int64_t before = count();
                                ASSERT_EQ(RunConvCase(c, isa, threads), want)
                                    << "iteration " << iter << ", " << threads
                                    << " threads: " << Describe(c);
                                expect(threads, count() - before);
                              }
                            });
}

// The VNNI path without im2col takes every INT8 CONV_2D but the 1x1
// stride-1 unpadded ones; its outputs equal the baseline path's (the int16
// GEMM, bit-exact with TFLite's reference kernels) on 1 and 2 threads.
TEST(QuantizedConvTest, Int8VnniTapsMatchesBaselinePath) {
  std::mt19937 rng = testing::SeededRng(3);
  int ran = 0;
  for (int iter = 0; iter < 80; ++iter) {
    const ConvCase c = DrawConvCase(rng);
    if (c.oh <= 0 || c.ow <= 0) continue;
    ++ran;
    const bool pointwise = c.kh == 1 && c.kw == 1 && c.sh == 1 && c.sw == 1;
    ExpectVnniMatchesBaseline(
        c, iter, kernels::QConvVnniTapsCallsForTesting, [&](int, int64_t n) {
          EXPECT_EQ(n, pointwise ? 0 : 1) << "iteration " << iter;
        });
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(ran, 40);
}

// Few output pixels, many channels and a filter of 16 KiB or more: on 2
// threads the VNNI paths (1x1 and taps) split the channels, not the
// pixels; the outputs equal the baseline path's, on 1 thread (no split)
// and on 2.
TEST(QuantizedConvTest, Int8VnniColumnSplitMatchesBaselinePath) {
  std::mt19937 rng = testing::SeededRng(5);
  for (int iter = 0; iter < 24; ++iter) {
    ConvCase c = DrawConvCase(rng);
    c.h = RandomInt(rng, 1, 4), c.w = RandomInt(rng, 1, 4);
    c.kh = c.kw = iter % 2 == 0 ? 1 : 3;
    c.sh = c.sw = c.dh = c.dw = 1;
    c.same = true;
    c.oh = c.h, c.ow = c.w;
    // A filter (cin * kh * kw * cout bytes) over 16 KiB.
    c.cin = c.kh == 1 ? RandomInt(rng, 120, 200) : RandomInt(rng, 14, 60);
    c.cout = RandomInt(rng, 140, 400);
    RedrawForShape(rng, &c);
    ExpectVnniMatchesBaseline(c, iter, kernels::QConvColumnSplitCallsForTesting,
                              [&](int threads, int64_t n) {
                                EXPECT_EQ(n, threads == 2 ? 1 : 0)
                                    << "iteration " << iter;
                              });
    if (HasFatalFailure()) return;
  }
}

// 1x1 convolutions to eight channels or fewer (MobileNetV2's narrow
// projections): the VNNI path computes two pixels per panel
// (QGemmVnniPackPairedRows) where the requantization can take it, with
// the baseline path's outputs on 1 and 2 threads (chunks of odd pixel
// counts leave a pair half empty).
TEST(QuantizedConvTest, Int8VnniPairedRowsMatchBaselinePath) {
  std::mt19937 rng = testing::SeededRng(9);
  for (int iter = 0; iter < 40; ++iter) {
    ConvCase c = DrawConvCase(rng);
    c.kh = c.kw = c.sh = c.sw = c.dh = c.dw = 1;
    c.oh = c.h, c.ow = c.w;
    c.cout = RandomInt(rng, 1, kernels::kQGemmVnniPairedNr);
    RedrawForShape(rng, &c);
    ExpectVnniMatchesBaseline(
        c, iter, kernels::QGemmVnniPairedCallsForTesting, [&](int, int64_t n) {
          EXPECT_GT(n, 0) << "iteration " << iter << ": " << Describe(c);
        });
    if (HasFatalFailure()) return;
  }
}

// The first convolution of an image network (3 input channels, 3x3
// stride 2 SAME, whole filter rows of 9 bytes read as 12 against zero
// weights) and a 5x5 VALID one reading to the last byte of its input.
TEST(QuantizedConvTest, Int8VnniTapsReadsToTheLastInputByte) {
  std::mt19937 rng = testing::SeededRng(4);
  for (int shape = 0; shape < 2; ++shape) {
    ConvCase c = DrawConvCase(rng);
    c.batch = 2, c.cin = 3, c.cout = 16;
    c.h = shape == 0 ? 33 : 9, c.w = shape == 0 ? 31 : 7;
    c.kh = c.kw = shape == 0 ? 3 : 5;
    c.sh = c.sw = shape == 0 ? 2 : 1;
    c.dh = c.dw = 1;
    c.same = shape == 0;
    c.oh = c.same ? (c.h + 1) / 2 : c.h - 4;
    c.ow = c.same ? (c.w + 1) / 2 : c.w - 4;
    RedrawForShape(rng, &c);
    const std::vector<int8_t> want =
        RunConvCase(c, kernels::CpuIsa::kBaseline, 1);
    testing::ForEachForcedIsa(
        {kernels::CpuIsa::kAvx512Vnni}, [&](kernels::CpuIsa isa) {
          const int64_t before = kernels::QConvVnniTapsCallsForTesting();
          EXPECT_EQ(RunConvCase(c, isa, 2), want) << "shape " << shape;
          EXPECT_EQ(kernels::QConvVnniTapsCallsForTesting() - before, 1);
        });
  }
}

}  // namespace
}  // namespace graft

// INT8 DEPTHWISE_CONV_2D on every kernel path (baseline, AVX2, AVX-512
// VNNI) against TFLite's reference_integer_ops::DepthwiseConvPerChannel,
// bit for bit, over drawn shapes: odd channel counts (the VNNI kernel's
// 16- and 32-wide blocks and their masked tails), filters up to 7x7,
// strides, dilation, SAME and VALID, inputs small enough that every
// output pixel's window leaves them, batches, zero points at the INT8
// limits, fused activations, and multipliers and biases that take each of
// the requantization's three forms.
namespace graft {
namespace {
namespace dw_paths {

using testing::DepthwiseCase;
using testing::DescribeDepthwise;
using testing::RandomInt;
using testing::ReferenceDepthwise;
using testing::RunDepthwise;

DepthwiseCase Draw(std::mt19937& rng) {
  DepthwiseCase d;
  do {
    d.batch = RandomInt(rng, 0, 4) == 0 ? RandomInt(rng, 2, 3) : 1;
    // A quarter tiny (every pixel border), the rest up to 14.
    const bool tiny = RandomInt(rng, 0, 3) == 0;
    d.h = tiny ? RandomInt(rng, 1, 3) : RandomInt(rng, 1, 14);
    d.w = tiny ? RandomInt(rng, 1, 3) : RandomInt(rng, 1, 14);
    d.c = RandomInt(rng, 0, 2) == 0 ? 2 * RandomInt(rng, 0, 34) + 1
                                    : RandomInt(rng, 1, 70);
    static constexpr int kSizes[] = {1, 2, 3, 3, 3, 5, 5, 7};
    d.kh = kSizes[RandomInt(rng, 0, 7)];
    d.kw = RandomInt(rng, 0, 3) == 0 ? kSizes[RandomInt(rng, 0, 7)] : d.kh;
    d.stride_h = RandomInt(rng, 1, 2), d.stride_w = RandomInt(rng, 1, 2);
    d.dil_h = RandomInt(rng, 0, 3) == 0 ? 2 : 1;
    d.dil_w = RandomInt(rng, 0, 3) == 0 ? 2 : 1;
    d.same = RandomInt(rng, 0, 2) != 0;
    const int eh = (d.kh - 1) * d.dil_h + 1, ew = (d.kw - 1) * d.dil_w + 1;
    d.oh = d.same ? (d.h + d.stride_h - 1) / d.stride_h
                  : (d.h - eh + d.stride_h) / d.stride_h;
    d.ow = d.same ? (d.w + d.stride_w - 1) / d.stride_w
                  : (d.w - ew + d.stride_w) / d.stride_w;
  } while (d.oh <= 0 || d.ow <= 0);
  static constexpr tfl::ActivationFunctionType kActs[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6};
  d.act = kActs[RandomInt(rng, 0, 2)];
  const int zp_kind = RandomInt(rng, 0, 3);
  d.in_zp = zp_kind == 0   ? -128
            : zp_kind == 1 ? 127
                           : RandomInt(rng, -128, 127);
  d.out_zp = RandomInt(rng, -128, 127);
  // Mostly the fast requantization's shifts; sometimes multipliers near
  // or above 1 (a left shift or none), which take the general one.
  const bool big = RandomInt(rng, 0, 4) == 0;
  d.ws.resize(d.c);
  for (auto& s : d.ws) {
    s = big ? std::uniform_real_distribution<float>(0.5f, 4.0f)(rng)
            : std::uniform_real_distribution<float>(0.001f, 0.02f)(rng);
  }
  d.wv.resize(int64_t{d.kh} * d.kw * d.c);
  for (auto& v : d.wv) v = static_cast<int8_t>(RandomInt(rng, -127, 127));
  d.bv.resize(d.c);
  for (auto& v : d.bv) v = RandomInt(rng, -20000, 20000);
  // Sometimes one bias past 2^30: the op's sums plus biases are then not
  // known to fit the requantization's 32-bit finish (rq.small_sums), and
  // the other channels take its 64-bit form unsaturated.
  if (RandomInt(rng, 0, 5) == 0) {
    d.bv[RandomInt(rng, 0, d.c - 1)] =
        (RandomInt(rng, 0, 1) ? 1 : -1) *
        RandomInt(rng, 1 << 30, (1 << 30) + (1 << 29));
  }
  d.xv.resize(int64_t{d.batch} * d.h * d.w * d.c);
  for (auto& v : d.xv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  return d;
}

TEST(QuantizedDepthwiseTest, EveryPathBitExactWithReferenceOverDrawnShapes) {
  std::mt19937 rng = testing::SeededRng(27);
  std::vector<DepthwiseCase> cases;
  for (int i = 0; i < 120; ++i) cases.push_back(Draw(rng));
  testing::ForEachForcedIsa(
      {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2,
       kernels::CpuIsa::kAvx512Vnni},
      [&](kernels::CpuIsa isa) {
        const int64_t calls_before = kernels::QDepthwiseCallsForTesting(isa);
        for (size_t i = 0; i < cases.size(); ++i) {
          const std::vector<int8_t> want = ReferenceDepthwise(cases[i]);
          for (int threads : {1, 2}) {
            ASSERT_EQ(RunDepthwise(cases[i], threads), want)
                << kernels::CpuIsaName(isa) << ", " << threads
                << " threads, case " << i << ": "
                << DescribeDepthwise(cases[i]);
          }
        }
        // Each case's op ran on this path, not a lower one.
        EXPECT_GE(kernels::QDepthwiseCallsForTesting(isa) - calls_before,
                  static_cast<int64_t>(2 * cases.size()))
            << kernels::CpuIsaName(isa) << " depthwise path not taken";
      });
}

// The VNNI kernel's block widths and tails, one channel count at a time,
// on a small input with a 3x3 SAME filter (border and interior pixels,
// a chunk of 16 pixels and a partial one) and a 7x7 one whose window
// leaves the input at every pixel.
TEST(QuantizedDepthwiseTest, EveryChannelCountBitExactOnVnni) {
  std::mt19937 rng = testing::SeededRng(28);
  testing::ForEachForcedIsa(
      {kernels::CpuIsa::kAvx512Vnni}, [&](kernels::CpuIsa isa) {
        for (int c = 1; c <= 70; ++c) {
          for (int k : {3, 7}) {
            DepthwiseCase d = Draw(rng);
            d.batch = 2, d.h = k == 3 ? 5 : 4, d.w = k == 3 ? 19 : 3, d.c = c;
            d.kh = d.kw = k, d.stride_h = d.stride_w = 1, d.dil_h = d.dil_w = 1;
            d.same = true, d.oh = d.h, d.ow = d.w;
            d.ws.resize(c);
            for (auto& s : d.ws) {
              s = std::uniform_real_distribution<float>(0.001f, 0.02f)(rng);
            }
            d.wv.resize(int64_t{k} * k * c);
            for (auto& v : d.wv)
              v = static_cast<int8_t>(RandomInt(rng, -127, 127));
            d.bv.resize(c);
            for (auto& v : d.bv) v = RandomInt(rng, -20000, 20000);
            d.xv.resize(int64_t{d.batch} * d.h * d.w * c);
            for (auto& v : d.xv)
              v = static_cast<int8_t>(RandomInt(rng, -128, 127));
            const int64_t calls_before =
                kernels::QDepthwiseCallsForTesting(isa);
            ASSERT_EQ(RunDepthwise(d, 1), ReferenceDepthwise(d))
                << DescribeDepthwise(d);
            EXPECT_GT(kernels::QDepthwiseCallsForTesting(isa), calls_before);
          }
        }
      });
}

}  // namespace dw_paths
}  // namespace
}  // namespace graft
