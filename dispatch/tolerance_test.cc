// The per-precision float tolerances of tolerance.h: which one a name
// selects, and that each accepts its format's rounding and no more.
#include "dispatch/tolerance.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace graft {
namespace {

// `x` rounded to bfloat16 (round to nearest even on the upper 16 bits).
float RoundToBf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7fff + ((u >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&x, &u, 4);
  return x;
}

TEST(ToleranceTest, ParsesEachPrecisionByItsName) {
  for (FloatPrecision p : {FloatPrecision::kFloat32, FloatPrecision::kFloat16,
                           FloatPrecision::kBfloat16}) {
    FloatPrecision got = FloatPrecision::kFloat32;
    ASSERT_TRUE(ParseFloatPrecision(FloatPrecisionName(p), &got));
    EXPECT_EQ(got, p);
  }
  FloatPrecision untouched = FloatPrecision::kFloat16;
  EXPECT_FALSE(ParseFloatPrecision("bfloat16", &untouched));
  EXPECT_FALSE(ParseFloatPrecision("", &untouched));
  EXPECT_EQ(untouched, FloatPrecision::kFloat16);
}

TEST(ToleranceTest, Float32ToleranceIsTheFloat32Precision) {
  const FloatTolerance a = Float32Tolerance(27, 3.0);
  const FloatTolerance b = FloatToleranceFor(FloatPrecision::kFloat32, 27, 3.0);
  EXPECT_EQ(a.rtol, b.rtol);
  EXPECT_EQ(a.atol, b.atol);
}

TEST(ToleranceTest, NarrowerFormatsAreLooser) {
  EXPECT_LT(FloatToleranceFor(FloatPrecision::kFloat32, 1, 1).rtol,
            FloatToleranceFor(FloatPrecision::kFloat16, 1, 1).rtol);
  EXPECT_LT(FloatToleranceFor(FloatPrecision::kFloat16, 1, 1).rtol,
            FloatToleranceFor(FloatPrecision::kBfloat16, 1, 1).rtol);
}

// A dot product of K terms whose inputs were rounded to bf16, accumulated
// in float32 (what OpenVINO's bf16 CPU kernels do): bf16's tolerance takes
// it, float32's does not; and a 5% error fails both.
TEST(ToleranceTest, Bf16AcceptsBf16RoundedInputsAndFloat32DoesNot) {
  const int k = 64;
  double want = 0, got = 0, max_abs = 0;
  for (int i = 0; i < k; ++i) {
    // Within bf16's spacing above 1 (2^-7) and below 1 (2^-8): each is
    // rounded by up to half a step.
    const float a = 1.003f + 0.0001f * (i % 7), b = 0.9985f - 0.0001f * (i % 5);
    want += double{a} * b;
    got += double{RoundToBf16(a)} * RoundToBf16(b);
  }
  max_abs = std::fabs(want);
  const FloatTolerance bf16 =
      FloatToleranceFor(FloatPrecision::kBfloat16, k, max_abs);
  const FloatTolerance fp32 =
      FloatToleranceFor(FloatPrecision::kFloat32, k, max_abs);
  EXPECT_TRUE(bf16.Accepts(got, want)) << got << " vs " << want;
  EXPECT_FALSE(fp32.Accepts(got, want)) << got << " vs " << want;
  EXPECT_FALSE(FloatToleranceFor(FloatPrecision::kBfloat16, 1, 1)
                   .Accepts(1.05, 1.0));
}

}  // namespace
}  // namespace graft
