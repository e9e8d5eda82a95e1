// Unary kernels (activations.cc, unary_math.cc, cast.cc) against std:: math
// over random data, including tensors large enough to be split over threads.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/unary.h"

#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;

struct UnaryCase {
  tfl::BuiltinOperator op;
  std::function<float(float)> f;
  float lo = -4, hi = 4;
};

template <typename Options>
std::vector<float> RunUnary(tfl::BuiltinOperator op, const Options* options,
                       const std::vector<float>& x, int threads) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  const int32_t n = static_cast<int32_t>(x.size());
  TensorId in = g.Input("x", F32, {n});
  OpBuilder b = g.Op(op).In(in);
  if (options) b.Options(*options);
  g.Output(b.Out("y", F32, {n}));
  auto rt = testing::LoadBuilt(mb, threads);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  testing::SetInput(**rt, 0, x);
  EXPECT_TRUE((*rt)->Invoke().ok());
  return testing::GetOutput<float>(**rt, 0);
}

TEST(UnaryTest, FloatOpsMatchStdMath) {
  std::mt19937 rng = testing::SeededRng();
  const std::vector<UnaryCase> cases = {
      {tfl::BuiltinOperator_RELU, [](float x) { return std::max(x, 0.f); }},
      {tfl::BuiltinOperator_RELU6, [](float x) { return std::min(std::max(x, 0.f), 6.f); }, -8, 8},
      {tfl::BuiltinOperator_RELU_N1_TO_1, [](float x) { return std::min(std::max(x, -1.f), 1.f); }},
      {tfl::BuiltinOperator_RELU_0_TO_1, [](float x) { return std::min(std::max(x, 0.f), 1.f); }},
      {tfl::BuiltinOperator_LOGISTIC, [](float x) { return 1 / (1 + std::exp(-x)); }},
      {tfl::BuiltinOperator_TANH, [](float x) { return std::tanh(x); }},
      {tfl::BuiltinOperator_HARD_SWISH, [](float x) { return x * std::min(std::max(x + 3, 0.f), 6.f) / 6; }},
      {tfl::BuiltinOperator_ELU, [](float x) { return x < 0 ? std::exp(x) - 1 : x; }},
      {tfl::BuiltinOperator_EXP, [](float x) { return std::exp(x); }},
      {tfl::BuiltinOperator_LOG, [](float x) { return std::log(x); }, 0.01f, 9},
      {tfl::BuiltinOperator_SQRT, [](float x) { return std::sqrt(x); }, 0, 9},
      {tfl::BuiltinOperator_RSQRT, [](float x) { return 1 / std::sqrt(x); }, 0.01f, 9},
      {tfl::BuiltinOperator_SIN, [](float x) { return std::sin(x); }},
      {tfl::BuiltinOperator_COS, [](float x) { return std::cos(x); }},
      {tfl::BuiltinOperator_ABS, [](float x) { return std::fabs(x); }},
      {tfl::BuiltinOperator_NEG, [](float x) { return -x; }},
      {tfl::BuiltinOperator_FLOOR, [](float x) { return std::floor(x); }},
      {tfl::BuiltinOperator_CEIL, [](float x) { return std::ceil(x); }},
      {tfl::BuiltinOperator_ROUND, [](float x) { return std::nearbyint(x); }},
      {tfl::BuiltinOperator_SIGN, [](float x) { return float((x > 0) - (x < 0)); }},
      {tfl::BuiltinOperator_SQUARE, [](float x) { return x * x; }},
  };
  for (const UnaryCase& c : cases) {
    const int n = RandomInt(rng, 0, 1) ? RandomInt(rng, 1, 100) : 40000;
    auto x = testing::RandomFloats(rng, n, c.lo, c.hi);
    if (c.op == tfl::BuiltinOperator_ROUND) x[0] = 2.5f, x[n > 1 ? 1 : 0] = -0.5f;
    std::vector<float> want(n);
    for (int i = 0; i < n; ++i) want[i] = c.f(x[i]);
    testing::ExpectNear(RunUnary<tfl::AddOptionsT>(c.op, nullptr, x, RandomInt(rng, 1, 3)), want, 1,
                        EnumNameBuiltinOperator(c.op));
  }
}

// HARD_SWISH's vector builds against its scalar formula, bit for bit, on
// every length tail of the 8-float blocks, special values included, each
// build forced and shown to run.
TEST(UnaryTest, HardSwishVectorPathsMatchTheScalarFormula) {
  std::mt19937 rng = testing::SeededRng(21);
  const float specials[] = {0.0f, -0.0f, -3.0f, 3.0f, -2.9999998f, 2.9999998f,
                            1e-40f, -1e-40f, 3e38f, -3e38f, INFINITY,
                            -INFINITY, NAN};
  testing::ForEachForcedIsa({kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2},
                            [&](kernels::CpuIsa isa) {
    const int64_t before = kernels::HardSwishCallsForTesting(isa);
    for (int iter = 0; iter < 60; ++iter) {
      const int n = iter < 20 ? iter + 1 : RandomInt(rng, 1, 3000);
      std::vector<float> x = testing::RandomFloats(rng, n, -8, 8);
      for (float& v : x) {
        if (RandomInt(rng, 0, 9) == 0) {
          v = specials[RandomInt(rng, 0, std::size(specials) - 1)];
        }
      }
      for (int threads : {1, 2}) {
        const std::vector<float> got = RunUnary<tfl::AddOptionsT>(
            tfl::BuiltinOperator_HARD_SWISH, nullptr, x, threads);
        ASSERT_EQ(got.size(), x.size());
        for (int i = 0; i < n; ++i) {
          const float want = x[i] * std::min(std::max(x[i] + 3, 0.f), 6.f) / 6;
          ASSERT_TRUE(std::isnan(want) ? std::isnan(got[i])
                                       : std::memcmp(&want, &got[i],
                                                     sizeof(float)) == 0)
              << kernels::CpuIsaName(isa) << " x=" << x[i] << " got "
              << got[i] << " want " << want << " n=" << n;
        }
      }
    }
    EXPECT_GT(kernels::HardSwishCallsForTesting(isa), before)
        << kernels::CpuIsaName(isa) << " path not taken";
  });
}

TEST(UnaryTest, ParameterizedActivations) {
  std::mt19937 rng = testing::SeededRng(1);
  auto x = testing::RandomFloats(rng, 257, -5, 5);
  tfl::LeakyReluOptionsT leaky;
  leaky.alpha = 0.1f;
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = x[i] > 0 ? x[i] : 0.1f * x[i];
  testing::ExpectNear(RunUnary(tfl::BuiltinOperator_LEAKY_RELU, &leaky, x, 1), want);
  tfl::GeluOptionsT exact, approx;
  approx.approximate = true;
  for (size_t i = 0; i < x.size(); ++i) want[i] = 0.5f * x[i] * (1 + std::erf(x[i] / std::sqrt(2.f)));
  testing::ExpectNear(RunUnary(tfl::BuiltinOperator_GELU, &exact, x, 2), want, 1, "gelu");
  for (size_t i = 0; i < x.size(); ++i) {
    float v = x[i];
    want[i] = 0.5f * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715f * v * v * v)));
  }
  testing::ExpectNear(RunUnary(tfl::BuiltinOperator_GELU, &approx, x, 1), want, 1, "gelu approx");
}

TEST(UnaryTest, IntegerAbsNegAndRelu) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT32, {4});
  TensorId a = g.Op(tfl::BuiltinOperator_ABS).In(x).Out("a", tfl::TensorType_INT32, {4});
  TensorId n = g.Op(tfl::BuiltinOperator_NEG).In(a).Out("n", tfl::TensorType_INT32, {4});
  g.Output(n);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<int32_t>(**rt, 0, {-3, 0, 5, -7});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<int32_t>(**rt, 0), (std::vector<int32_t>{-3, 0, -5, -7}));
}

TEST(CastTest, ConvertsBetweenDtypesLikeCpp) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {5});
  auto cast = [&](TensorId in, tfl::TensorType to, const char* name) {
    return g.Op(tfl::BuiltinOperator_CAST).In(in).Out(name, to, {5});
  };
  TensorId i32 = cast(x, tfl::TensorType_INT32, "i32");
  TensorId b = cast(x, tfl::TensorType_BOOL, "b");
  TensorId u8 = cast(i32, tfl::TensorType_UINT8, "u8");
  TensorId i64 = cast(b, tfl::TensorType_INT64, "i64");
  TensorId f = cast(i64, F32, "f");
  g.Output(i32).Output(b).Output(u8).Output(f);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<float>(**rt, 0, {-1.7f, 0.f, 0.5f, 2.9f, 200.2f});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<int32_t>(**rt, 0), (std::vector<int32_t>{-1, 0, 0, 2, 200}));
  EXPECT_EQ(testing::GetOutput<uint8_t>(**rt, 1), (std::vector<uint8_t>{1, 0, 1, 1, 1}));
  EXPECT_EQ(testing::GetOutput<uint8_t>(**rt, 2), (std::vector<uint8_t>{255, 0, 0, 2, 200}));
  EXPECT_EQ(testing::GetOutput<float>(**rt, 3), (std::vector<float>{1, 0, 1, 1, 1}));
}

// DEQUANTIZE FLOAT16 -> FLOAT32 over every half value, against the binary16
// definition: (-1)^s * 2^(e-15) * (1 + m/1024), subnormals 2^-14 * m/1024.
TEST(DequantizeTest, HalfToFloatIsExactForEveryValue) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  constexpr int32_t kN = 1 << 16;
  TensorId x = g.Input("x", tfl::TensorType_FLOAT16, {kN});
  g.Output(g.Op(tfl::BuiltinOperator_DEQUANTIZE).In(x).Out("y", F32, {kN}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  std::vector<uint16_t> halves(kN);
  for (int32_t i = 0; i < kN; ++i) halves[i] = static_cast<uint16_t>(i);
  testing::SetInput(**rt, 0, halves);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<float> got = testing::GetOutput<float>(**rt, 0);
  for (int32_t i = 0; i < kN; ++i) {
    const int sign = (i >> 15) ? -1 : 1;
    const int e = (i >> 10) & 0x1f;
    const int m = i & 0x3ff;
    if (e == 0x1f) {
      if (m == 0) {
        EXPECT_EQ(got[i], sign * INFINITY) << "half 0x" << std::hex << i;
      } else {
        EXPECT_TRUE(std::isnan(got[i])) << "half 0x" << std::hex << i;
      }
      continue;
    }
    const double want = e == 0 ? sign * std::ldexp(m, -24)
                               : sign * std::ldexp(1024 + m, e - 25);
    ASSERT_EQ(got[i], static_cast<float>(want)) << "half 0x" << std::hex << i;
    ASSERT_EQ(std::signbit(got[i]), sign < 0) << "half 0x" << std::hex << i;
  }
}

}  // namespace
}  // namespace graft
