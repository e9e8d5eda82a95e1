// Quantized ADD, SUB, MUL (and PRELU, INT8) against a tiny real-arithmetic
// reference:
// dequantize, compute in double, requantize. TFLite's integer path
// approximates that within 1 LSB, so the kernels must too (random scales,
// zero points and broadcast shapes, seeded).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;

template <typename T>
void RunCase(tfl::BuiltinOperator op, tfl::TensorType type, std::mt19937& rng,
             int iter) {
  const int n = RandomInt(rng, 1, 4), c = RandomInt(rng, 1, 9);
  const bool broadcast = RandomInt(rng, 0, 1) == 1;
  const std::vector<int32_t> sa = {n, 3, c}, sb = broadcast ? std::vector<int32_t>{c} : sa;
  std::uniform_real_distribution<float> sd(0.005f, 0.05f);
  const bool i16 = type == tfl::TensorType_INT16;
  const float s1 = sd(rng), s2 = sd(rng);
  float so = sd(rng) * (op == tfl::BuiltinOperator_MUL ? 0.05f : 2.0f);
  // An INT16 product needs a real multiplier below 1: above it TFLite's
  // left shift overflows int32 (as Graft's, on purpose, does too).
  if (i16 && op == tfl::BuiltinOperator_MUL) so = s1 * s2 * (2.0f + sd(rng) * 1000);
  const int z1 = i16 ? 0 : RandomInt(rng, -20, 20), z2 = i16 ? 0 : RandomInt(rng, -20, 20),
            zo = i16 ? 0 : RandomInt(rng, -20, 20);
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", type, sa), b = g.Input("b", type, sb);
  g.Quantize(a, s1, z1).Quantize(b, s2, z2);
  TensorId y = g.Op(op).In(a, b).Out("y", type, sa);
  g.Quantize(y, so, zo).Output(y);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  const int64_t na = int64_t{n} * 3 * c, nb = broadcast ? c : na;
  const int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::vector<T> va(na), vb(nb);
  for (auto& v : va) v = static_cast<T>(RandomInt(rng, lo, hi));
  for (auto& v : vb) v = static_cast<T>(RandomInt(rng, lo, hi));
  testing::SetInput(**rt, 0, va);
  testing::SetInput(**rt, 1, vb);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<T> got = testing::GetOutput<T>(**rt, 0);
  for (int64_t i = 0; i < na; ++i) {
    const double x = s1 * (double(va[i]) - z1);
    const double w = s2 * (double(vb[broadcast ? i % c : i]) - z2);
    const double r = op == tfl::BuiltinOperator_ADD   ? x + w
                     : op == tfl::BuiltinOperator_SUB ? x - w
                     : op == tfl::BuiltinOperator_PRELU
                         ? (x >= 0 ? x : x * w)
                         : x * w;
    const double q = std::min<double>(hi, std::max<double>(lo, std::round(r / so) + zo));
    ASSERT_LE(std::abs(got[i] - q), 1.0)
        << "iteration " << iter << " element " << i;
  }
}

TEST(QuantizedElementwiseTest, Int8MatchesRealArithmeticWithin1Lsb) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 30; ++iter) {
    for (auto op : {tfl::BuiltinOperator_ADD, tfl::BuiltinOperator_SUB,
                    tfl::BuiltinOperator_MUL, tfl::BuiltinOperator_PRELU}) {
      RunCase<int8_t>(op, tfl::TensorType_INT8, rng, iter);
    }
  }
}

TEST(QuantizedElementwiseTest, Int16MatchesRealArithmeticWithin1Lsb) {
  std::mt19937 rng = testing::SeededRng(1);
  for (int iter = 0; iter < 30; ++iter) {
    for (auto op : {tfl::BuiltinOperator_ADD, tfl::BuiltinOperator_SUB,
                    tfl::BuiltinOperator_MUL}) {
      RunCase<int16_t>(op, tfl::TensorType_INT16, rng, iter);
    }
  }
}

// Outputs large enough to be split over the pool: the same bytes at 2 and
// 3 threads as at 1, broadcast or not.
TEST(QuantizedElementwiseTest, Int8SplitOverThreadsMatchesOneThread) {
  std::mt19937 rng = testing::SeededRng(2);
  for (int iter = 0; iter < 12; ++iter) {
    const int c = RandomInt(rng, 33, 64);
    const bool broadcast = iter % 2 == 1;
    const std::vector<int32_t> sa = {8, 64, c};
    const std::vector<int32_t> sb = broadcast ? std::vector<int32_t>{c} : sa;
    const auto op = iter % 3 == 0 ? tfl::BuiltinOperator_MUL
                                  : tfl::BuiltinOperator_ADD;
    std::vector<int8_t> va(int64_t{8} * 64 * c), vb(broadcast ? c : va.size());
    for (auto& v : va) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
    for (auto& v : vb) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
    std::vector<int8_t> want;
    for (int threads : {1, 2, 3}) {
      ModelBuilder mb;
      auto& g = mb.Subgraph("main");
      TensorId a = g.Input("a", tfl::TensorType_INT8, sa);
      TensorId b = g.Input("b", tfl::TensorType_INT8, sb);
      g.Quantize(a, 0.02f, 3).Quantize(b, 0.03f, -5);
      TensorId y = g.Op(op).In(a, b).Out("y", tfl::TensorType_INT8, sa);
      g.Quantize(y, op == tfl::BuiltinOperator_MUL ? 0.01f : 0.05f, 1)
          .Output(y);
      auto rt = testing::LoadBuilt(mb, threads);
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, va);
      testing::SetInput(**rt, 1, vb);
      ASSERT_TRUE((*rt)->Invoke().ok());
      const std::vector<int8_t> got = testing::GetOutput<int8_t>(**rt, 0);
      if (threads == 1) {
        want = got;
      } else {
        ASSERT_EQ(got, want) << threads << " threads, iteration " << iter;
      }
    }
  }
}

// One 8-bit binary op over `n` elements, run with KernelIsa() capped at
// `isa` (the path is chosen at prepare); returns its output.
template <typename T>
std::vector<T> RunBinary8(kernels::CpuIsa isa, tfl::BuiltinOperator op,
                          tfl::ActivationFunctionType act, int n,
                          const float (&scale)[3], const int (&zero)[3],
                          const std::vector<T>& va, const std::vector<T>& vb) {
  testing::IsaCap cap(isa);
  const tfl::TensorType type =
      std::is_same_v<T, int8_t> ? tfl::TensorType_INT8 : tfl::TensorType_UINT8;
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", type, {n}), b = g.Input("b", type, {n});
  g.Quantize(a, scale[0], zero[0]).Quantize(b, scale[1], zero[1]);
  OpBuilder ob = g.Op(op).In(a, b);
  if (op == tfl::BuiltinOperator_ADD) {
    tfl::AddOptionsT o;
    o.fused_activation_function = act;
    ob.Options(o);
  } else if (op == tfl::BuiltinOperator_SUB) {
    tfl::SubOptionsT o;
    o.fused_activation_function = act;
    ob.Options(o);
  } else if (op == tfl::BuiltinOperator_MUL) {
    tfl::MulOptionsT o;
    o.fused_activation_function = act;
    ob.Options(o);
  }
  TensorId y = ob.Out("y", type, {n});
  g.Quantize(y, scale[2], zero[2]).Output(y);
  auto rt = testing::LoadBuilt(mb);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  testing::SetInput(**rt, 0, va);
  testing::SetInput(**rt, 1, vb);
  EXPECT_TRUE((*rt)->Invoke().ok());
  return testing::GetOutput<T>(**rt, 0);
}

// The 8-bit ADD, SUB, MUL and SQUARED_DIFFERENCE give the baseline's bytes
// on every path (AVX2 gathers; AVX-512 VBMI lookups, 64 at a time) over
// drawn lengths (every tail of a 64-byte block), scales spread wide enough
// to take both the short and the general rescale, zero points anywhere in
// the type and fused activations; a counter shows each path ran.
template <typename T>
void CheckEveryPath(std::mt19937& rng, int iter) {
  using kernels::CpuIsa;
  const bool i8 = std::is_same_v<T, int8_t>;
  const tfl::BuiltinOperator ops[] = {
      tfl::BuiltinOperator_ADD, tfl::BuiltinOperator_SUB,
      tfl::BuiltinOperator_MUL, tfl::BuiltinOperator_SQUARED_DIFFERENCE};
  const tfl::BuiltinOperator op = ops[RandomInt(rng, 0, i8 ? 3 : 2)];
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  const tfl::ActivationFunctionType act =
      op == tfl::BuiltinOperator_SQUARED_DIFFERENCE ? acts[0]
                                                    : acts[RandomInt(rng, 0, 3)];
  const int n = RandomInt(rng, 1, 300);
  auto log_uniform = [&](double lo, double hi) {
    return static_cast<float>(std::exp2(
        std::uniform_real_distribution<double>(lo, hi)(rng)));
  };
  const float sa = log_uniform(-10, -2), sb = log_uniform(-10, -2);
  const double big = std::max(sa, sb);
  // The output scale against the op's own multiplier: from far below
  // (a left shift, the general rescale) to far above.
  const float so =
      op == tfl::BuiltinOperator_MUL ? sa * sb * log_uniform(-8, 10)
      : op == tfl::BuiltinOperator_SQUARED_DIFFERENCE
          ? static_cast<float>(big * big) * log_uniform(-22, 4)
          : static_cast<float>(big) * log_uniform(-24, 4);
  const int zlo = i8 ? -128 : 0, zhi = i8 ? 127 : 255;
  const float scale[3] = {sa, sb, so};
  const int zero[3] = {RandomInt(rng, zlo, zhi), RandomInt(rng, zlo, zhi),
                       RandomInt(rng, zlo, zhi)};
  std::vector<T> va(n), vb(n);
  for (auto& v : va) v = static_cast<T>(RandomInt(rng, zlo, zhi));
  for (auto& v : vb) v = static_cast<T>(RandomInt(rng, zlo, zhi));
  const std::vector<T> want = RunBinary8<T>(CpuIsa::kBaseline, op, act, n,
                                            scale, zero, va, vb);
  testing::ForEachForcedIsa(
      {CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}, [&](CpuIsa isa) {
        const CpuIsa path = isa == CpuIsa::kAvx512Vnni &&
                                    !kernels::KernelHasAvx512Vbmi()
                                ? CpuIsa::kAvx2
                                : isa;
        const int64_t before = kernels::QuantizedBinaryCallsForTesting(path);
        const std::vector<T> got =
            RunBinary8<T>(isa, op, act, n, scale, zero, va, vb);
        EXPECT_GT(kernels::QuantizedBinaryCallsForTesting(path), before)
            << kernels::CpuIsaName(path) << " path not taken";
        ASSERT_EQ(got.size(), want.size());
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(want[i]))
              << kernels::CpuIsaName(isa) << ", iteration " << iter << ", "
              << tfl::EnumNameBuiltinOperator(op) << ", act "
              << static_cast<int>(act) << ", n " << n << ", element " << i
              << " of " << static_cast<int>(va[i]) << ", "
              << static_cast<int>(vb[i]) << " (zero points " << zero[0]
              << ", " << zero[1] << ", " << zero[2] << "; scales " << sa
              << ", " << sb << ", " << so << ")";
        }
      });
}

TEST(QuantizedElementwiseTest, Int8EveryPathGivesTheBaselineBytes) {
  if (!kernels::KernelHasAvx512Vbmi()) {
    std::printf("no AVX-512 VBMI here: its path is not run\n");
  }
  std::mt19937 rng = testing::SeededRng(3);
  for (int iter = 0; iter < 60 && !HasFatalFailure(); ++iter) {
    CheckEveryPath<int8_t>(rng, iter);
  }
}

TEST(QuantizedElementwiseTest, Uint8EveryPathGivesTheBaselineBytes) {
  std::mt19937 rng = testing::SeededRng(4);
  for (int iter = 0; iter < 40 && !HasFatalFailure(); ++iter) {
    CheckEveryPath<uint8_t>(rng, iter);
  }
}

// ADD and SUB with RELU, RELU6, or no activation and the type's lowest
// output zero point take the AVX-512 VBMI build's sum of lookups
// (PrepareSplitSum): over drawn scales (the output's from a quarter of the
// larger input scale to four times the two together) and zero points, all
// 65536 pairs of input bytes give the baseline's outputs, and a counter
// shows the path ran.
template <typename T>
void CheckSplitSum(std::mt19937& rng, int iter) {
  using kernels::CpuIsa;
  const bool i8 = std::is_same_v<T, int8_t>;
  const bool sub = RandomInt(rng, 0, 1) == 1;
  const tfl::BuiltinOperator op =
      sub ? tfl::BuiltinOperator_SUB : tfl::BuiltinOperator_ADD;
  const tfl::ActivationFunctionType acts[] = {tfl::ActivationFunctionType_RELU,
                                              tfl::ActivationFunctionType_RELU6,
                                              tfl::ActivationFunctionType_NONE};
  const tfl::ActivationFunctionType act = acts[RandomInt(rng, 0, 2)];
  auto log_uniform = [&](double lo, double hi) {
    return static_cast<float>(
        std::exp2(std::uniform_real_distribution<double>(lo, hi)(rng)));
  };
  const float sa = log_uniform(-10, -2), sb = log_uniform(-10, -2);
  const float so = std::max(sa, sb) * log_uniform(-2, 2) +
                   (RandomInt(rng, 0, 1) == 1 ? sa + sb : 0.0f);
  const int zlo = i8 ? -128 : 0, zhi = i8 ? 127 : 255;
  const float scale[3] = {sa, sb, so};
  const int zero[3] = {
      RandomInt(rng, zlo, zhi), RandomInt(rng, zlo, zhi),
      act == tfl::ActivationFunctionType_NONE ? zlo : RandomInt(rng, zlo, zhi)};
  const int n = 65536;
  std::vector<T> va(n), vb(n);
  for (int i = 0; i < n; ++i) {
    va[i] = static_cast<T>(i & 255), vb[i] = static_cast<T>(i >> 8);
  }
  const std::vector<T> want =
      RunBinary8<T>(CpuIsa::kBaseline, op, act, n, scale, zero, va, vb);
  const int64_t before = kernels::QuantizedSplitSumCallsForTesting();
  const std::vector<T> got =
      RunBinary8<T>(CpuIsa::kAvx512Vnni, op, act, n, scale, zero, va, vb);
  EXPECT_GT(kernels::QuantizedSplitSumCallsForTesting(), before)
      << "iteration " << iter << ": the sum of lookups was not taken";
  ASSERT_EQ(got.size(), want.size());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(static_cast<int>(got[i]), static_cast<int>(want[i]))
        << "iteration " << iter << ", " << tfl::EnumNameBuiltinOperator(op)
        << ", act " << static_cast<int>(act) << ", inputs "
        << static_cast<int>(va[i]) << ", " << static_cast<int>(vb[i])
        << " (zero points " << zero[0] << ", " << zero[1] << ", " << zero[2]
        << "; scales " << sa << ", " << sb << ", " << so << ")";
  }
}

TEST(QuantizedElementwiseTest, SplitSumGivesTheBaselineOnEveryPair) {
  if (!kernels::KernelHasAvx512Vbmi()) {
    GTEST_SKIP() << "no AVX-512 VBMI here: the sum of lookups is not run";
  }
  std::mt19937 rng = testing::SeededRng(5);
  for (int iter = 0; iter < 30 && !HasFatalFailure(); ++iter) {
    if (iter % 2) {
      CheckSplitSum<int8_t>(rng, iter);
    } else {
      CheckSplitSum<uint8_t>(rng, iter);
    }
  }
}

// TFLite's ADD gives its output the inputs' type whatever the model says:
// a quantized output declared FLOAT32 (add_quantized_int8.bin) is INT8.
TEST(QuantizedElementwiseTest, AddOutputDeclaredFloatTakesTheInputType) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT8, {4});
  TensorId a = g.Op(tfl::BuiltinOperator_ADD)
                   .In(x, x)
                   .Out("a", tfl::TensorType_FLOAT32, {4});
  TensorId y = g.Op(tfl::BuiltinOperator_ADD)
                   .In(a, x)
                   .Out("y", tfl::TensorType_INT8, {4});
  g.Quantize(x, 0.5f, 0).Quantize(a, 0.5f, 0).Quantize(y, 0.5f, 0).Output(y);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<int8_t>(**rt, 0, {1, -2, 30, 100});
  ASSERT_TRUE((*rt)->Invoke().ok());
  // 3x, saturated at 127.
  EXPECT_EQ(testing::GetOutput<int8_t>(**rt, 0),
            (std::vector<int8_t>{3, -6, 90, 127}));
}

}  // namespace
}  // namespace graft
