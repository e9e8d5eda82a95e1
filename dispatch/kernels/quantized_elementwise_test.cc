// Quantized ADD, SUB, MUL (and PRELU, INT8) against a tiny real-arithmetic
// reference:
// dequantize, compute in double, requantize. TFLite's integer path
// approximates that within 1 LSB, so the kernels must too (random scales,
// zero points and broadcast shapes, seeded).
#include <cmath>
#include <cstdint>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
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
