// TFLite's quantized-multiplier arithmetic: known multipliers and shifts,
// the rounding of MultiplyByQuantizedMultiplier against an exact reference,
// and fused-activation ranges.
#include "dispatch/kernels/quantization_util.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/quantized_gemm.h"
#include "gtest/gtest.h"

namespace graft::kernels {
namespace {

TEST(QuantizeMultiplierTest, MatchesTfliteFrexpRounding) {
  EXPECT_EQ(QuantizeMultiplier(0.5).multiplier, 1 << 30);
  EXPECT_EQ(QuantizeMultiplier(0.5).shift, 0);
  EXPECT_EQ(QuantizeMultiplier(1.0).multiplier, 1 << 30);
  EXPECT_EQ(QuantizeMultiplier(1.0).shift, 1);
  EXPECT_EQ(QuantizeMultiplier(0.25).shift, -1);
  // A mantissa that rounds up to 2^31 carries into the exponent.
  const QuantizedMultiplier carry = QuantizeMultiplier(1.0 - std::ldexp(1, -40));
  EXPECT_EQ(carry.multiplier, 1 << 30);
  EXPECT_EQ(carry.shift, 1);
  // Below 2^-31 flushes to zero.
  EXPECT_EQ(QuantizeMultiplier(std::ldexp(1, -40)).multiplier, 0);
  EXPECT_EQ(QuantizeMultiplier(std::ldexp(1, -40)).shift, 0);
  EXPECT_EQ(QuantizeMultiplier(0.0).multiplier, 0);
}

// Exact reference of TFLite's double rounding with 128-bit integers: the
// doubling high multiply rounds half up (floor(p / 2^31 + 1/2)), the
// power-of-two division then rounds half away from zero.
int32_t ReferenceMultiply(int32_t x, int32_t m, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const __int128 p = static_cast<__int128>(int64_t{x} * (int64_t{1} << left)) * m;
  const __int128 num = p + (__int128{1} << 30), den = __int128{1} << 31;
  const __int128 q = num >= 0 ? num / den : -((-num + den - 1) / den);
  if (right == 0) return static_cast<int32_t>(q);
  const __int128 d = __int128{1} << right;
  const __int128 mag = ((q >= 0 ? q : -q) + d / 2) / d;
  return static_cast<int32_t>(q >= 0 ? mag : -mag);
}

TEST(MultiplyByQuantizedMultiplierTest, MatchesExactDoubleRounding) {
  std::mt19937 rng = testing::SeededRng();
  for (int i = 0; i < 20000; ++i) {
    const int32_t x = testing::RandomInt(rng, -(1 << 20), 1 << 20);
    const double real = std::ldexp(
        std::uniform_real_distribution<double>(0.5, 1.0)(rng),
        testing::RandomInt(rng, -20, 0));
    const QuantizedMultiplier m = QuantizeMultiplier(real);
    ASSERT_EQ(MultiplyByQuantizedMultiplier(x, m),
              ReferenceMultiply(x, m.multiplier, m.shift))
        << "x=" << x << " m=" << m.multiplier << " shift=" << m.shift;
    // And it approximates the real product to within 1.
    ASSERT_LE(std::abs(MultiplyByQuantizedMultiplier(x, m) - x * real), 1.0);
  }
  // The doubling high multiply rounds ties up (-1.5 -> -1), the shift
  // rounds them away from zero (-0.75 * 2 = -1.5 -> -2).
  EXPECT_EQ(MultiplyByQuantizedMultiplier(3, QuantizeMultiplier(0.5)), 2);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-3, QuantizeMultiplier(0.5)), -1);
  EXPECT_EQ(MultiplyByQuantizedMultiplier(-6, QuantizeMultiplier(0.25)), -2);
}

TEST(MultiplyByQuantizedMultiplierTest, Int64VersionApproximatesProduct) {
  std::mt19937 rng = testing::SeededRng(1);
  for (int i = 0; i < 10000; ++i) {
    const int64_t x = static_cast<int64_t>(testing::RandomInt(rng, -(1 << 30), 1 << 30)) * 64;
    const double real = std::ldexp(0.75, testing::RandomInt(rng, -30, -10));
    const QuantizedMultiplier m = QuantizeMultiplier(real);
    const double got = MultiplyByQuantizedMultiplier(x, m.multiplier, m.shift);
    ASSERT_LE(std::abs(got - x * real), 1.0 + std::abs(x * real) * 1e-4);
  }
}

// The vector high multiply (quantized_gemm.h) against the scalar
// SaturatingRoundingDoublingHighMul: edge values of x and every multiplier
// shape the requantization uses (m >= 0), then random pairs.
TEST(HighMulV4Test, MatchesScalarSaturatingRoundingDoublingHighMul) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const int32_t kMax = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> xs = {kMin, kMin + 1, -65536, -2, -1, 0, 1, 2,
                             65535, kMax - 1, kMax};
  std::vector<int32_t> ms = {0, 1, 2, 1 << 30, (1 << 30) + 1, kMax - 1, kMax};
  std::mt19937 rng = testing::SeededRng(3);
  for (int i = 0; i < 2000; ++i) {
    xs.push_back(static_cast<int32_t>(rng()));
    ms.push_back(static_cast<int32_t>(rng() >> 1));
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    for (size_t j = 0; j < ms.size(); j += (i < 11 ? 1 : 97)) {
      const V4i x = {xs[i], xs[(i + 1) % xs.size()], xs[i] / -2, xs[i] / 3};
      const V4i m = {ms[j], ms[j], ms[(j + 1) % ms.size()], ms[j] / 5};
      const V4i got = HighMulV4(x, m);
      for (int lane = 0; lane < 4; ++lane) {
        ASSERT_EQ(got[lane], SaturatingRoundingDoublingHighMul(x[lane], m[lane]))
            << "x=" << x[lane] << " m=" << m[lane];
      }
    }
  }
}

TEST(ActivationRangeQuantizedTest, ClampsToQuantizedReluBounds) {
  int32_t lo, hi;
  ASSERT_TRUE(ActivationRangeQuantized(tfl::ActivationFunctionType_NONE,
                                       tfl::TensorType_INT8, 0.1f, 3, &lo, &hi)
                  .ok());
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  ASSERT_TRUE(ActivationRangeQuantized(tfl::ActivationFunctionType_RELU6,
                                       tfl::TensorType_INT8, 0.1f, 3, &lo, &hi)
                  .ok());
  EXPECT_EQ(lo, 3);
  EXPECT_EQ(hi, 63);
  ASSERT_TRUE(ActivationRangeQuantized(tfl::ActivationFunctionType_RELU_N1_TO_1,
                                       tfl::TensorType_INT16, 0.25f, 0, &lo,
                                       &hi)
                  .ok());
  EXPECT_EQ(lo, -4);
  EXPECT_EQ(hi, 4);
  EXPECT_FALSE(ActivationRangeQuantized(tfl::ActivationFunctionType_TANH,
                                        tfl::TensorType_INT8, 1.f, 0, &lo, &hi)
                   .ok());
}

// A scale so small that 1 / scale passes int32: the bounds clamp to the
// type (they wrapped into an empty range, which pinned every output to
// one value).
TEST(ActivationRangeQuantizedTest, TinyScalesClampInsteadOfWrapping) {
  int32_t lo, hi;
  ASSERT_TRUE(ActivationRangeQuantized(tfl::ActivationFunctionType_RELU_N1_TO_1,
                                       tfl::TensorType_INT8, 3.5e-10f, 29, &lo,
                                       &hi)
                  .ok());
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
  ASSERT_TRUE(ActivationRangeQuantized(tfl::ActivationFunctionType_RELU6,
                                       tfl::TensorType_UINT8, 1e-12f, 7, &lo,
                                       &hi)
                  .ok());
  EXPECT_EQ(lo, 7);
  EXPECT_EQ(hi, 255);
}

}  // namespace
}  // namespace graft::kernels
