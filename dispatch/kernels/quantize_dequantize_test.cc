// QUANTIZE FLOAT32 -> INT16 / INT8 against values TFLite (ai-edge-litert
// 2.3.0, BUILTIN_REF) gives: x / scale is divided in float, then rounded
// half away from zero. In double these inputs fall just short of the tie
// and would round toward zero.
#include <cstdint>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

template <typename T>
std::vector<T> Quantize(tfl::TensorType type, float scale, int64_t zero_point,
                        const std::vector<float>& x) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  const int32_t n = static_cast<int32_t>(x.size());
  TensorId in = g.Input("x", tfl::TensorType_FLOAT32, {n});
  TensorId y = g.Op(tfl::BuiltinOperator_QUANTIZE).In(in).Out("y", type, {n});
  g.Quantize(y, scale, zero_point).Output(y);
  auto rt = testing::LoadBuilt(mb);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  testing::SetInput(**rt, 0, x);
  EXPECT_TRUE((*rt)->Invoke().ok());
  return testing::GetOutput<T>(**rt, 0);
}

TEST(QuantizeTest, DividesInFloatAsTflite) {
  // A 16x8 MobileNetV2's input quantization: -0.17946407 / 3.0518506e-05
  // is -5880.49995 in double, -5880.5 in float.
  EXPECT_EQ(Quantize<int16_t>(tfl::TensorType_INT16, 3.0518506e-05f, 0,
                              {-0.17946407f, -0.9766685f, -0.2510605f, 0.5f,
                               2.0f}),
            (std::vector<int16_t>{-5881, -32003, -8227, 16384, 32767}));
  // INT8 with a zero point: 0.3 / 0.1 rounds to 3 either way; -0.25 / 0.1
  // is -2.5 in float, a tie rounded away to -3, but -2.49999996 in double.
  EXPECT_EQ(Quantize<int8_t>(tfl::TensorType_INT8, 0.1f, -3,
                             {0.3f, -0.25f, 100.0f, -100.0f}),
            (std::vector<int8_t>{0, -6, 127, -128}));
}

}  // namespace
}  // namespace graft
