// Quantized MAX_POOL_2D (INT8, UINT8, INT16) against the reference's loop
// (per channel, the window's in-bounds maximum from the type's lowest
// value, then the activation clamp) over drawn shapes: channel counts with
// every tail of the 16-byte blocks, strides, SAME and VALID padding; each
// build of the kernel forced and shown to run.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <vector>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;

template <typename T>
void RunMaxPool(std::mt19937& rng, int iter, tfl::TensorType type) {
  // A quarter of the draws one column wide (1-D pools along H, which run
  // as one row).
  const int h = RandomInt(rng, 1, 9);
  const int w = RandomInt(rng, 0, 3) == 0 ? 1 : RandomInt(rng, 1, 24);
  const int c = RandomInt(rng, 1, 70);
  const int kh = RandomInt(rng, 1, 4), kw = RandomInt(rng, 1, 4);
  const int stride = RandomInt(rng, 1, 3);
  const bool same = RandomInt(rng, 0, 1) == 1;
  const bool relu6 = RandomInt(rng, 0, 1) == 1;
  const int oh = same ? (h + stride - 1) / stride : (h - kh) / stride + 1;
  const int ow = same ? (w + stride - 1) / stride : (w - kw) / stride + 1;
  if (!same && (h < kh || w < kw)) return;  // no output
  const int zp = sizeof(T) == 2 ? 0
                                : RandomInt(rng, -20, 20) +
                                      (std::is_unsigned_v<T> ? 128 : 0);
  const float scale = 0.05f;
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", type, {1, h, w, c});
  g.Quantize(x, scale, zp);
  tfl::Pool2DOptionsT o;
  o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
  o.filter_height = kh, o.filter_width = kw;
  o.stride_h = o.stride_w = stride;
  o.fused_activation_function = relu6 ? tfl::ActivationFunctionType_RELU6
                                      : tfl::ActivationFunctionType_NONE;
  TensorId y = g.Op(tfl::BuiltinOperator_MAX_POOL_2D)
                   .In(x)
                   .Options(o)
                   .Out("y", type, {1, oh, ow, c});
  g.Quantize(y, scale, zp).Output(y);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  std::vector<T> xv(int64_t{h} * w * c);
  const int lo = std::numeric_limits<T>::lowest(),
            hi = std::numeric_limits<T>::max();
  for (auto& v : xv) v = static_cast<T>(RandomInt(rng, lo, hi));
  testing::SetInput(**rt, 0, xv);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<T> got = testing::GetOutput<T>(**rt, 0);
  ASSERT_EQ(got.size(), static_cast<size_t>(oh) * ow * c)
      << "iteration " << iter << " h " << h << " w " << w << " c " << c << " k "
      << kh << "x" << kw << " stride " << stride << " same " << same
      << " relu6 " << relu6;
  // TFLite's activation range for RELU6: [zp, zp + round(6 / scale)] within
  // the type.
  int act_min = lo, act_max = hi;
  if (relu6) {
    act_min = std::max(lo, zp);
    act_max = std::min(hi, zp + static_cast<int>(std::round(6.0f / scale)));
  }
  const int pad_h = same ? std::max(0, ((oh - 1) * stride + kh - h) / 2) : 0;
  const int pad_w = same ? std::max(0, ((ow - 1) * stride + kw - w) / 2) : 0;
  for (int oy = 0; oy < oh; ++oy) {
    for (int ox = 0; ox < ow; ++ox) {
      for (int ch = 0; ch < c; ++ch) {
        int acc = lo;
        for (int fy = 0; fy < kh; ++fy) {
          for (int fx = 0; fx < kw; ++fx) {
            const int iy = oy * stride - pad_h + fy,
                      ix = ox * stride - pad_w + fx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            acc = std::max(acc, int{xv[(int64_t{iy} * w + ix) * c + ch]});
          }
        }
        acc = std::min(act_max, std::max(act_min, acc));
        ASSERT_EQ(int{got[(int64_t{oy} * ow + ox) * c + ch]}, acc)
            << "iteration " << iter << " at " << oy << "," << ox << "," << ch;
      }
    }
  }
}

// Each build (baseline, AVX2) forced in turn, and shown to run.
template <typename T>
void RunMaxPoolOnEveryPath(uint32_t salt, tfl::TensorType type) {
  for (kernels::CpuIsa isa :
       {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2}) {
    if (static_cast<int>(kernels::DetectedCpuIsa()) < static_cast<int>(isa)) {
      std::printf("skipping the %s path: this CPU has %s\n",
                  kernels::CpuIsaName(isa),
                  kernels::CpuIsaName(kernels::DetectedCpuIsa()));
      continue;
    }
    const kernels::CpuIsa old_cap = kernels::SetKernelIsaCapForTesting(isa);
    const int64_t before = kernels::QuantizedMaxPoolCallsForTesting(isa);
    std::mt19937 rng = testing::SeededRng(salt);
    for (int i = 0; i < 120; ++i) {
      RunMaxPool<T>(rng, i, type);
      if (::testing::Test::HasFatalFailure()) break;
    }
    EXPECT_GT(kernels::QuantizedMaxPoolCallsForTesting(isa), before)
        << kernels::CpuIsaName(isa) << " path not taken";
    kernels::SetKernelIsaCapForTesting(old_cap);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(QuantizedMaxPoolTest, Int8MatchesReferenceLoop) {
  RunMaxPoolOnEveryPath<int8_t>(1, tfl::TensorType_INT8);
}

TEST(QuantizedMaxPoolTest, Uint8MatchesReferenceLoop) {
  RunMaxPoolOnEveryPath<uint8_t>(2, tfl::TensorType_UINT8);
}

TEST(QuantizedMaxPoolTest, Int16MatchesReferenceLoop) {
  RunMaxPoolOnEveryPath<int16_t>(3, tfl::TensorType_INT16);
}

}  // namespace
}  // namespace graft
