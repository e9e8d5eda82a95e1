// Hostile window geometry (strides, dilations, padding, output shapes) of
// the convolutions whose kernels compute indices in int: CONV_3D,
// CONV_3D_TRANSPOSE and TRANSPOSE_CONV (float and int8). Each used to
// overflow its index arithmetic (undefined behaviour; a wrapped index can
// land inside the buffer) or cut a 64-bit output_shape to 32 bits; each is
// now a load error naming the op. Run under ASan + UBSan too.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I8 = tfl::TensorType_INT8;
constexpr int32_t kHuge = std::numeric_limits<int32_t>::max();

std::string LoadError(ModelBuilder& mb) {
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  if (rt.ok()) return "loaded";
  return std::string(rt.status().message());
}

std::vector<float> Zeros(size_t n) { return std::vector<float>(n, 0.0f); }

// CONV_3D, SAME padding, a 3-tap filter in depth dilated by `dil`.
ModelBuilder& Conv3D(ModelBuilder& mb, int32_t stride, int32_t dil) {
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 4, 4, 4, 1});
  TensorId w = g.Constant<float>("w", {3, 1, 1, 1, 1}, Zeros(3));
  tfl::Conv3DOptionsT o;
  o.padding = tfl::Padding_SAME;
  o.stride_d = stride, o.stride_h = o.stride_w = 1;
  o.dilation_d_factor = dil, o.dilation_h_factor = o.dilation_w_factor = 1;
  g.Output(g.Op(tfl::BuiltinOperator_CONV_3D).In(x, w).Options(o).Out(
      "y", F32, {1, 4, 4, 4, 1}));
  return mb;
}

TEST(WindowTest, Conv3DRefusesADilationBeyondIntArithmetic) {
  ModelBuilder mb;
  EXPECT_THAT(LoadError(Conv3D(mb, 1, kHuge / 2)),
              AllOf(HasSubstr("op 0 (CONV_3D)"),
                    HasSubstr("exceeds 32-bit index arithmetic")));
}

TEST(WindowTest, Conv3DRefusesAStrideBeyondIntArithmetic) {
  ModelBuilder mb;
  EXPECT_THAT(LoadError(Conv3D(mb, kHuge, 1)),
              HasSubstr("exceeds 32-bit index arithmetic"));
}

TEST(WindowTest, Conv3DStillLoadsAnOrdinaryWindow) {
  ModelBuilder mb;
  EXPECT_EQ(LoadError(Conv3D(mb, 2, 2)), "loaded");
}

TEST(WindowTest, Conv3DTransposeRefusesADilationBeyondIntArithmetic) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 1, 2, 2, 1});
  TensorId shape = g.Constant<int32_t>("shape", {5}, {1, 4, 2, 2, 1});
  TensorId w = g.Constant<float>("w", {3, 1, 1, 1, 1}, Zeros(3));
  tfl::Conv3DOptionsT o;
  o.padding = tfl::Padding_SAME;
  o.stride_d = 4, o.stride_h = o.stride_w = 1;
  o.dilation_d_factor = kHuge / 2, o.dilation_h_factor = 1;
  o.dilation_w_factor = 1;
  g.Output(g.Op(tfl::BuiltinOperator_CONV_3D_TRANSPOSE)
               .In(shape, w, x)
               .Options(o)
               .Out("y", F32, {1, 4, 2, 2, 1}));
  EXPECT_THAT(LoadError(mb),
              AllOf(HasSubstr("op 0 (CONV_3D_TRANSPOSE)"),
                    HasSubstr("exceeds 32-bit index arithmetic")));
}

// TRANSPOSE_CONV of a [1, 4, 4, 1] input with a 2x2 filter; the output
// shape a constant of `shape_type`.
template <typename ShapeT>
ModelBuilder& TransposeConv(ModelBuilder& mb, tfl::TensorType type,
                            std::vector<ShapeT> out_shape, int32_t stride) {
  auto& g = mb.Subgraph("main");
  TensorId shape = g.Constant<ShapeT>("shape", {4}, out_shape);
  TensorId w, x;
  if (type == F32) {
    w = g.Constant<float>("w", {1, 2, 2, 1}, Zeros(4));
    x = g.Input("x", F32, {1, 4, 4, 1});
  } else {
    w = g.Constant<int8_t>("w", {1, 2, 2, 1}, {1, 2, 3, 4});
    g.QuantizePerChannel(w, {0.5f}, {0}, 0);
    x = g.Input("x", I8, {1, 4, 4, 1});
    g.Quantize(x, 0.25f, 0);
  }
  tfl::TransposeConvOptionsT o;
  o.padding = tfl::Padding_SAME;
  o.stride_h = o.stride_w = stride;
  TensorId y = g.Op(tfl::BuiltinOperator_TRANSPOSE_CONV)
                   .In(shape, w, x)
                   .Options(o)
                   .Out("y", type, {1, 8, 8, 1});
  if (type != F32) g.Quantize(y, 0.5f, 0);
  g.Output(y);
  return mb;
}

TEST(WindowTest, TransposeConvRefusesAStrideBeyondIntArithmetic) {
  for (tfl::TensorType type : {F32, I8}) {
    ModelBuilder mb;
    EXPECT_THAT(
        LoadError(TransposeConv<int32_t>(mb, type, {1, 8, 8, 1}, kHuge / 2)),
        AllOf(HasSubstr("op 0 (TRANSPOSE_CONV)"),
              HasSubstr("exceeds 32-bit index arithmetic")))
        << TensorTypeName(type);
  }
}

TEST(WindowTest, TransposeConvRefusesAWideOutputShapeValue) {
  // 2^32 + 8 used to be cut to 8: a model whose meaning depends on how the
  // runtime truncates.
  for (tfl::TensorType type : {F32, I8}) {
    ModelBuilder mb;
    EXPECT_THAT(LoadError(TransposeConv<int64_t>(
                    mb, type, {1, (int64_t{1} << 32) + 8, 8, 1}, 2)),
                HasSubstr("output_shape dimension 4294967304 is out of range"))
        << TensorTypeName(type);
  }
}

TEST(WindowTest, TransposeConvRefusesANegativeOutputShape) {
  // The int8 kernel sized its scratch from the element count before the
  // shape was checked: -1 elements became SIZE_MAX bytes.
  for (tfl::TensorType type : {F32, I8}) {
    ModelBuilder mb;
    EXPECT_THAT(
        LoadError(TransposeConv<int32_t>(mb, type, {1, -8, 8, 1}, 2)),
        HasSubstr("output_shape dimension -8 is out of range"))
        << TensorTypeName(type);
  }
}

TEST(WindowTest, TransposeConvStillLoadsAnOrdinaryWindow) {
  for (tfl::TensorType type : {F32, I8}) {
    ModelBuilder mb;
    EXPECT_EQ(LoadError(TransposeConv<int32_t>(mb, type, {1, 8, 8, 1}, 2)),
              "loaded")
        << TensorTypeName(type);
  }
}

}  // namespace
}  // namespace graft
