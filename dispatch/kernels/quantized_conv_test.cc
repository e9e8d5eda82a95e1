// Quantized CONV_2D (INT8 per-channel and 16x8) and FULLY_CONNECTED
// against a tiny real-arithmetic reference: the integer kernels must land
// within 1 LSB of round(real result / output scale) + zero point.
#include <cmath>
#include <cstdint>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
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

}  // namespace
}  // namespace graft
