// SigmoidVector, TanhVector, ExpVector and GeluErfVector (vector_math.cc),
// each build forced and shown to run, against double precision: within a
// few units in the last place (GELU: a few float epsilons of |x|) over
// drawn values of every magnitude, every tail length, and the special
// values.
#include "dispatch/kernels/vector_math.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using kernels::CpuIsa;
using testing::RandomInt;

// Position of f on the number line of floats, so two floats' distance is
// their difference in units in the last place.
int64_t Ordinal(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof(i));
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

// Values of every magnitude: uniform in [-20, 20], log-uniform from 1e-30
// to 200 with either sign, and special values.
std::vector<float> DrawInputs(std::mt19937& rng, int n) {
  const float specials[] = {0.0f, -0.0f, 0.55f, -0.55f, 0.5499999f,
                            9.0f, -9.0f, 87.3f, -87.3f, 88.3f, -88.3f,
                            100.0f, -100.0f, 1e-40f, -1e-40f, 1e-30f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  std::uniform_real_distribution<float> uniform(-20.0f, 20.0f);
  std::uniform_real_distribution<float> log_mag(-30.0f, 2.3f);
  std::vector<float> x(n);
  for (float& v : x) {
    switch (RandomInt(rng, 0, 9)) {
      case 0:
        v = specials[RandomInt(rng, 0, std::size(specials) - 1)];
        break;
      case 1: case 2: case 3:
        v = std::pow(10.0f, log_mag(rng)) * (RandomInt(rng, 0, 1) ? 1 : -1);
        break;
      default:
        v = uniform(rng);
    }
  }
  return x;
}

// Whether `got` is within `ulps` of the double-precision value `want`; a
// sigmoid below 1e-37 (x < -85) counts as 0, which the AVX2 build's clamp
// at -88.3 gives to float precision of the sum it feeds.
bool Close(float got, double want, int ulps) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::fabs(want) < 1e-37 && std::fabs(got) < 1e-37f) return true;
  return std::llabs(Ordinal(got) - Ordinal(static_cast<float>(want))) <= ulps;
}

TEST(VectorMathTest, SigmoidAndTanhWithinThreeUlpsOnEveryBuild) {
  std::mt19937 rng = testing::SeededRng(7);
  testing::ForEachForcedIsa({CpuIsa::kBaseline, CpuIsa::kAvx2},
                            [&](CpuIsa isa) {
    const int64_t before = kernels::VectorMathCallsForTesting(isa);
    for (int iter = 0; iter < 40; ++iter) {
      // Every tail of the 8-float blocks, then long runs.
      const int n = iter < 17 ? iter : RandomInt(rng, 1, 60000);
      const std::vector<float> x = DrawInputs(rng, n);
      std::vector<float> s(n), t(n), in_place = x;
      kernels::SigmoidVector(x.data(), s.data(), n);
      kernels::TanhVector(x.data(), t.data(), n);
      kernels::TanhVector(in_place.data(), in_place.data(), n);
      for (int i = 0; i < n; ++i) {
        const double xd = x[i];
        ASSERT_TRUE(Close(s[i], 1.0 / (1.0 + std::exp(-xd)), 3))
            << kernels::CpuIsaName(isa) << " sigmoid(" << x[i] << ") = "
            << s[i];
        ASSERT_TRUE(Close(t[i], std::tanh(xd), 3))
            << kernels::CpuIsaName(isa) << " tanh(" << x[i] << ") = " << t[i];
        ASSERT_EQ(std::memcmp(&t[i], &in_place[i], sizeof(float)), 0)
            << "in place differs at " << x[i];
        if (x[i] == 0) {  // tanh keeps the sign of zero
          EXPECT_EQ(std::signbit(t[i]), std::signbit(x[i]));
        }
      }
    }
    EXPECT_GT(kernels::VectorMathCallsForTesting(isa), before)
        << kernels::CpuIsaName(isa) << " path not taken";
  });
}

// exp within 1 ulp down to subnormal results (e^-103.9) and up to
// overflow; GELU within 4 float epsilons of |x| (its exact form cancels in
// 1 + erf for negative x, in TFLite's float reference as here, so the
// error is measured against the input's size), NaN and infinities as the
// double formula gives them.
TEST(VectorMathTest, ExpAndGeluOnEveryBuild) {
  std::mt19937 rng = testing::SeededRng(8);
  const double eps = std::numeric_limits<float>::epsilon();
  testing::ForEachForcedIsa({CpuIsa::kBaseline, CpuIsa::kAvx2},
                            [&](CpuIsa isa) {
    const int64_t before = kernels::VectorMathCallsForTesting(isa);
    std::uniform_real_distribution<float> deep(-110.0f, -80.0f);
    for (int iter = 0; iter < 40; ++iter) {
      const int n = iter < 17 ? iter : RandomInt(rng, 1, 60000);
      std::vector<float> x = DrawInputs(rng, n);
      // Exponents near the subnormal range and the overflow limit.
      for (float& v : x) {
        if (RandomInt(rng, 0, 9) == 0) {
          v = RandomInt(rng, 0, 1) ? deep(rng) : 88.0f + v / 25;
        }
      }
      std::vector<float> e(n), g(n), in_place = x;
      kernels::ExpVector(x.data(), e.data(), n);
      kernels::GeluErfVector(x.data(), g.data(), n);
      kernels::ExpVector(in_place.data(), in_place.data(), n);
      for (int i = 0; i < n; ++i) {
        const double xd = x[i];
        const float want_e = static_cast<float>(std::exp(xd));
        ASSERT_TRUE(std::isnan(want_e)
                        ? std::isnan(e[i])
                        : std::llabs(Ordinal(e[i]) - Ordinal(want_e)) <= 1)
            << kernels::CpuIsaName(isa) << " exp(" << x[i] << ") = " << e[i]
            << ", want " << want_e;
        ASSERT_EQ(std::memcmp(&e[i], &in_place[i], sizeof(float)), 0)
            << "in place differs at " << x[i];
        const double want_g = 0.5 * xd * (1 + std::erf(xd / std::sqrt(2.0)));
        if (std::isnan(want_g) || std::isinf(want_g)) {
          ASSERT_EQ(std::isnan(g[i]), std::isnan(want_g)) << x[i];
          if (std::isinf(want_g)) {
            ASSERT_EQ(g[i], want_g) << x[i];
          }
          continue;
        }
        ASSERT_LE(std::fabs(g[i] - want_g), 4 * eps * std::fabs(xd) + 1e-45)
            << kernels::CpuIsaName(isa) << " gelu(" << x[i] << ") = " << g[i]
            << ", want " << want_g;
      }
    }
    EXPECT_GT(kernels::VectorMathCallsForTesting(isa), before)
        << kernels::CpuIsaName(isa) << " path not taken";
  });
}

}  // namespace
}  // namespace graft
