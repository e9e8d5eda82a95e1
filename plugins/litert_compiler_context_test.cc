// Graft's LiteRtCompilerContext over small graphs, called through the
// table's function pointers as a LiteRT plugin calls them.
#include "plugins/litert_compiler_context.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

const LiteRtCompilerContext& C() { return *LiteRtHostCompilerContext(); }

LiteRtOp OpAt(LiteRtSubgraph s, size_t i) {
  LiteRtOp op = nullptr;
  EXPECT_EQ(C().get_subgraph_op(s, i, &op), kLiteRtStatusOk);
  return op;
}
LiteRtTensor InputOf(LiteRtOp op, size_t i) {
  LiteRtTensor t = nullptr;
  EXPECT_EQ(C().get_op_input(op, i, &t), kLiteRtStatusOk);
  return t;
}
LiteRtTensor OutputOf(LiteRtOp op, size_t i) {
  LiteRtTensor t = nullptr;
  EXPECT_EQ(C().get_op_output(op, i, &t), kLiteRtStatusOk);
  return t;
}
std::string NameOf(LiteRtTensor t) {
  const char* name = nullptr;
  EXPECT_EQ(C().get_tensor_name(t, &name), kLiteRtStatusOk);
  return name == nullptr ? "<null>" : name;
}
int CodeOf(LiteRtOp op) {
  LiteRtOpCode code = -1;
  EXPECT_EQ(C().get_op_code(op, &code), kLiteRtStatusOk);
  return code;
}
size_t NumOps(LiteRtSubgraph s) {
  LiteRtParamIndex n = 0;
  EXPECT_EQ(C().get_num_subgraph_ops(s, &n), kLiteRtStatusOk);
  return n;
}
size_t NumInputs(LiteRtOp op) {
  LiteRtParamIndex n = 0;
  EXPECT_EQ(C().get_num_op_inputs(op, &n), kLiteRtStatusOk);
  return n;
}

// main: x -> CONV_2D(x, w, no bias) -> c -> ADD(c, c) -> y
// second: a, b -> MUL -> m
Model ConvAddAndMul() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 3});
  g.MutableTensor(x)->shape_signature = {-1, 4, 4, 3};
  g.MutableTensor(x)->has_rank = true;
  TensorId w =
      g.Constant<float>("w", {2, 3, 3, 3}, std::vector<float>(54, 0.5f));
  tfl::Conv2DOptionsT conv;
  conv.padding = tfl::Padding_SAME;
  conv.stride_w = 2;
  conv.stride_h = 1;
  conv.dilation_w_factor = 1;
  conv.dilation_h_factor = 3;
  conv.fused_activation_function = tfl::ActivationFunctionType_RELU6;
  TensorId c = g.Op(tfl::BuiltinOperator_CONV_2D)
                   .In(x, w, kNoTensor)
                   .Options(conv)
                   .Out("c", tfl::TensorType_FLOAT32, {1, 4, 2, 2});
  tfl::AddOptionsT add;
  add.fused_activation_function = tfl::ActivationFunctionType_RELU;
  TensorId y = g.Op(tfl::BuiltinOperator_ADD)
                   .In(c, c)
                   .Options(add)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4, 2, 2});
  g.Output(y);
  auto& s = b.Subgraph("second");
  TensorId a = s.Input("a", tfl::TensorType_FLOAT32, {2});
  TensorId bb = s.Input("b", tfl::TensorType_FLOAT32, {2});
  TensorId m = s.Op(tfl::BuiltinOperator_MUL)
                   .In(a, bb)
                   .Out("m", tfl::TensorType_FLOAT32, {2});
  s.Output(m);
  absl::StatusOr<Model> model = std::move(b).Build();
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

TEST(LiteRtCompilerContextTest, EnumeratesTheGivenSubgraphsInOrder) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {1, 0});
  LiteRtParamIndex n = 0;
  ASSERT_EQ(C().get_num_model_subgraphs(graph.model(), &n), kLiteRtStatusOk);
  EXPECT_EQ(n, 2u);
  LiteRtSubgraph first = nullptr, second = nullptr, none = nullptr;
  ASSERT_EQ(C().get_model_subgraph(graph.model(), 0, &first), kLiteRtStatusOk);
  ASSERT_EQ(C().get_model_subgraph(graph.model(), 1, &second), kLiteRtStatusOk);
  EXPECT_EQ(first, graph.subgraph(0));
  EXPECT_EQ(second, graph.subgraph(1));
  EXPECT_EQ(C().get_model_subgraph(graph.model(), 2, &none),
            kLiteRtStatusErrorIndexOOB);
  EXPECT_EQ(none, nullptr);
  // Model subgraph 1 ("second") comes first: one MUL.
  ASSERT_EQ(NumOps(first), 1u);
  EXPECT_EQ(CodeOf(OpAt(first, 0)), tfl::BuiltinOperator_MUL);
  ASSERT_EQ(NumOps(second), 2u);
  EXPECT_EQ(CodeOf(OpAt(second, 0)), tfl::BuiltinOperator_CONV_2D);
  EXPECT_EQ(CodeOf(OpAt(second, 1)), tfl::BuiltinOperator_ADD);
  LiteRtOp op = nullptr;
  EXPECT_EQ(C().get_subgraph_op(second, 2, &op), kLiteRtStatusErrorIndexOOB);
}

TEST(LiteRtCompilerContextTest, SubgraphAndOpInputsAndOutputs) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {1});
  LiteRtSubgraph s = graph.subgraph(0);
  LiteRtParamIndex n = 0;
  ASSERT_EQ(C().get_num_subgraph_inputs(s, &n), kLiteRtStatusOk);
  ASSERT_EQ(n, 2u);
  LiteRtTensor t = nullptr;
  ASSERT_EQ(C().get_subgraph_input(s, 1, &t), kLiteRtStatusOk);
  EXPECT_EQ(NameOf(t), "b");
  EXPECT_EQ(C().get_subgraph_input(s, 2, &t), kLiteRtStatusErrorIndexOOB);
  ASSERT_EQ(C().get_num_subgraph_outputs(s, &n), kLiteRtStatusOk);
  ASSERT_EQ(n, 1u);
  ASSERT_EQ(C().get_subgraph_output(s, 0, &t), kLiteRtStatusOk);
  EXPECT_EQ(NameOf(t), "m");
  EXPECT_EQ(C().get_subgraph_output(s, 1, &t), kLiteRtStatusErrorIndexOOB);

  LiteRtOp mul = OpAt(s, 0);
  ASSERT_EQ(NumInputs(mul), 2u);
  EXPECT_EQ(NameOf(InputOf(mul, 0)), "a");
  EXPECT_EQ(NameOf(InputOf(mul, 1)), "b");
  EXPECT_EQ(C().get_op_input(mul, 2, &t), kLiteRtStatusErrorIndexOOB);
  ASSERT_EQ(C().get_num_op_outputs(mul, &n), kLiteRtStatusOk);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(NameOf(OutputOf(mul, 0)), "m");
  EXPECT_EQ(C().get_op_output(mul, 1, &t), kLiteRtStatusErrorIndexOOB);
  // A subgraph input is the same handle as the op input it feeds.
  LiteRtTensor a = nullptr;
  ASSERT_EQ(C().get_subgraph_input(s, 0, &a), kLiteRtStatusOk);
  EXPECT_EQ(a, InputOf(mul, 0));
}

TEST(LiteRtCompilerContextTest, SkipsOmittedOptionalInputsAsLiteRtsLoader) {
  Model model = ConvAddAndMul();
  ASSERT_EQ(model.subgraphs[0].ops[0].inputs.size(), 3u);
  LiteRtGraph graph(model, {0});
  LiteRtOp conv = OpAt(graph.subgraph(0), 0);
  EXPECT_EQ(NumInputs(conv), 2u);
  EXPECT_EQ(NameOf(InputOf(conv, 0)), "x");
  EXPECT_EQ(NameOf(InputOf(conv, 1)), "w");
  LiteRtTensor t = nullptr;
  EXPECT_EQ(C().get_op_input(conv, 2, &t), kLiteRtStatusErrorIndexOOB);
}

TEST(LiteRtCompilerContextTest, TensorUsesAndDefiningOps) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {0});
  LiteRtOp conv = OpAt(graph.subgraph(0), 0);
  LiteRtOp add = OpAt(graph.subgraph(0), 1);
  LiteRtTensor c = OutputOf(conv, 0);
  // ADD(c, c): two uses, argument 0 and 1.
  LiteRtParamIndex n = 0;
  ASSERT_EQ(C().get_num_tensor_uses(c, &n), kLiteRtStatusOk);
  ASSERT_EQ(n, 2u);
  for (LiteRtParamIndex i = 0; i < 2; ++i) {
    LiteRtOp user = nullptr;
    LiteRtParamIndex arg = 99;
    ASSERT_EQ(C().get_tensor_use(c, i, &user, &arg), kLiteRtStatusOk);
    EXPECT_EQ(user, add);
    EXPECT_EQ(arg, i);
  }
  LiteRtOp user = nullptr;
  LiteRtParamIndex arg = 0;
  EXPECT_EQ(C().get_tensor_use(c, 2, &user, &arg), kLiteRtStatusErrorIndexOOB);

  bool has = false;
  LiteRtTensorDefiningOp def{nullptr, 99};
  ASSERT_EQ(C().get_tensor_defining_op(c, &has, &def), kLiteRtStatusOk);
  EXPECT_TRUE(has);
  EXPECT_EQ(def.op, conv);
  EXPECT_EQ(def.op_output_index, 0u);
  // A graph input and a constant have none.
  for (LiteRtTensor t : {InputOf(conv, 0), InputOf(conv, 1)}) {
    has = true;
    ASSERT_EQ(C().get_tensor_defining_op(t, &has, &def), kLiteRtStatusOk);
    EXPECT_FALSE(has) << NameOf(t);
  }
  // The output y has no uses.
  ASSERT_EQ(C().get_num_tensor_uses(OutputOf(add, 0), &n), kLiteRtStatusOk);
  EXPECT_EQ(n, 0u);
}

TEST(LiteRtCompilerContextTest, DefiningOpOfSecondOutput) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId axis = g.Constant<int32_t>("axis", {}, {1});
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  tfl::SplitOptionsT split;
  split.num_splits = 2;
  std::vector<TensorId> outs =
      g.Op(tfl::BuiltinOperator_SPLIT)
          .In(axis, x)
          .Options(split)
          .Outs({{"lo", tfl::TensorType_FLOAT32, {1, 2}},
                 {"hi", tfl::TensorType_FLOAT32, {1, 2}}});
  g.Output(outs[0]).Output(outs[1]);
  Model model = std::move(b).BuildUnverified();
  LiteRtGraph graph(model, {0});
  LiteRtOp op = OpAt(graph.subgraph(0), 0);
  bool has = false;
  LiteRtTensorDefiningOp def{nullptr, 0};
  ASSERT_EQ(C().get_tensor_defining_op(OutputOf(op, 1), &has, &def),
            kLiteRtStatusOk);
  EXPECT_TRUE(has);
  EXPECT_EQ(def.op, op);
  EXPECT_EQ(def.op_output_index, 1u);
  int32_t num_splits = 0;
  EXPECT_EQ(C().get_split_num_splits_option(op, &num_splits), kLiteRtStatusOk);
  EXPECT_EQ(num_splits, 2);
}

TEST(LiteRtCompilerContextTest, NamesIndicesAndRankedTypes) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {0});
  LiteRtOp conv = OpAt(graph.subgraph(0), 0);
  LiteRtTensor x = InputOf(conv, 0);
  LiteRtTensor w = InputOf(conv, 1);
  uint32_t index = 99;
  ASSERT_EQ(C().get_tensor_index(x, &index), kLiteRtStatusOk);
  EXPECT_EQ(index, 0u);
  ASSERT_EQ(C().get_tensor_index(w, &index), kLiteRtStatusOk);
  EXPECT_EQ(index, 1u);
  LiteRtTensorTypeId id = kLiteRtUnrankedTensorType;
  ASSERT_EQ(C().get_tensor_type_id(x, &id), kLiteRtStatusOk);
  EXPECT_EQ(id, kLiteRtRankedTensorType);
  LiteRtRankedTensorType type;
  std::memset(&type, 0xff, sizeof(type));
  ASSERT_EQ(C().get_ranked_tensor_type(x, &type), kLiteRtStatusOk);
  EXPECT_EQ(type.element_type, kLiteRtElementTypeFloat32);
  ASSERT_EQ(type.layout.rank, 4u);
  EXPECT_FALSE(type.layout.has_strides);
  // shape_signature's dynamic batch, not shape's 1, since x has_rank.
  EXPECT_EQ(type.layout.dimensions[0], -1);
  EXPECT_EQ(type.layout.dimensions[1], 4);
  EXPECT_EQ(type.layout.dimensions[2], 4);
  EXPECT_EQ(type.layout.dimensions[3], 3);
  for (int i = 4; i < LITERT_TENSOR_MAX_RANK; ++i) {
    EXPECT_EQ(type.layout.dimensions[i], 0) << i;
  }
  LiteRtUnrankedTensorType unranked;
  EXPECT_EQ(C().get_unranked_tensor_type(x, &unranked),
            kLiteRtStatusErrorInvalidIrType);
}

// As LiteRT 2.3.0's loader: without has_rank (files of older converters,
// such as tflite-micro's simple_add_model), the static shape, not
// shape_signature's dynamic dims.
TEST(LiteRtCompilerContextTest, StaticShapeWithoutHasRank) {
  Model model = ConvAddAndMul();
  model.subgraphs[0].tensors[0].has_rank = false;
  LiteRtGraph graph(model, {0});
  LiteRtTensor x = InputOf(OpAt(graph.subgraph(0), 0), 0);
  LiteRtRankedTensorType type;
  ASSERT_EQ(C().get_ranked_tensor_type(x, &type), kLiteRtStatusOk);
  ASSERT_EQ(type.layout.rank, 4u);
  EXPECT_EQ(type.layout.dimensions[0], 1);
}

TEST(LiteRtCompilerContextTest, ElementTypesAreTfLiteTypesNotSchemaTypes) {
  const std::pair<tfl::TensorType, LiteRtElementType> cases[] = {
      {tfl::TensorType_FLOAT32, kLiteRtElementTypeFloat32},
      {tfl::TensorType_FLOAT16, kLiteRtElementTypeFloat16},
      {tfl::TensorType_INT32, kLiteRtElementTypeInt32},
      {tfl::TensorType_UINT8, kLiteRtElementTypeUInt8},
      {tfl::TensorType_INT64, kLiteRtElementTypeInt64},
      {tfl::TensorType_BOOL, kLiteRtElementTypeBool},
      {tfl::TensorType_INT16, kLiteRtElementTypeInt16},
      {tfl::TensorType_INT8, kLiteRtElementTypeInt8},
      {tfl::TensorType_FLOAT64, kLiteRtElementTypeFloat64},
      {tfl::TensorType_UINT32, kLiteRtElementTypeUInt32},
      {tfl::TensorType_UINT16, kLiteRtElementTypeUInt16},
      {tfl::TensorType_INT4, kLiteRtElementTypeInt4},
      {tfl::TensorType_BFLOAT16, kLiteRtElementTypeBFloat16},
  };
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId prev = kNoTensor;
  for (const auto& c : cases) {
    TensorId t = g.Input("t", c.first, {2});
    prev = g.Op(tfl::BuiltinOperator_CAST).In(t).Out("o", c.first, {2});
  }
  g.Output(prev);
  Model model = std::move(b).BuildUnverified();
  LiteRtGraph graph(model, {0});
  for (size_t i = 0; i < std::size(cases); ++i) {
    LiteRtRankedTensorType type;
    ASSERT_EQ(C().get_ranked_tensor_type(InputOf(OpAt(graph.subgraph(0), i), 0),
                                         &type),
              kLiteRtStatusOk);
    EXPECT_EQ(type.element_type, cases[i].second)
        << tfl::EnumNameTensorType(cases[i].first);
    EXPECT_EQ(type.layout.rank, 1u);
    EXPECT_EQ(type.layout.dimensions[0], 2);
  }
}

TEST(LiteRtCompilerContextTest, PerTensorAndPerChannelQuantization) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT8, {1, 3});
  g.Quantize(x, 0.5f, -7);
  TensorId w = g.Constant<int8_t>("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  g.QuantizePerChannel(w, std::vector<float>{0.25f, 0.125f},
                       std::vector<int64_t>{0, -3}, 0);
  TensorId f = g.Input("f", tfl::TensorType_FLOAT32, {1});
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Out("y", tfl::TensorType_INT8, {1, 2});
  g.Quantize(y, 1.0f, 0);
  g.Output(y);
  TensorId z = g.Op(tfl::BuiltinOperator_ABS)
                   .In(f)
                   .Out("z", tfl::TensorType_FLOAT32, {1});
  g.Output(z);
  Model model = std::move(b).BuildUnverified();
  LiteRtGraph graph(model, {0});
  LiteRtTensor xt = InputOf(OpAt(graph.subgraph(0), 0), 0);
  LiteRtTensor wt = InputOf(OpAt(graph.subgraph(0), 0), 1);
  LiteRtTensor ft = InputOf(OpAt(graph.subgraph(0), 1), 0);

  LiteRtQuantizationTypeId q = kLiteRtQuantizationBlockWise;
  ASSERT_EQ(C().get_quantization_type_id(xt, &q), kLiteRtStatusOk);
  EXPECT_EQ(q, kLiteRtQuantizationPerTensor);
  LiteRtQuantizationPerTensor pt{0, 0};
  ASSERT_EQ(C().get_per_tensor_quantization(xt, &pt), kLiteRtStatusOk);
  EXPECT_EQ(pt.scale, 0.5f);
  EXPECT_EQ(pt.zero_point, -7);

  ASSERT_EQ(C().get_quantization_type_id(wt, &q), kLiteRtStatusOk);
  EXPECT_EQ(q, kLiteRtQuantizationPerChannel);
  LiteRtQuantizationPerChannel pc{};
  ASSERT_EQ(C().get_per_channel_quantization(wt, &pc), kLiteRtStatusOk);
  EXPECT_EQ(pc.quantized_dimension, 0);
  ASSERT_EQ(pc.num_channels, 2u);
  EXPECT_EQ(pc.scales[0], 0.25f);
  EXPECT_EQ(pc.scales[1], 0.125f);
  EXPECT_EQ(pc.zero_points[0], 0);
  EXPECT_EQ(pc.zero_points[1], -3);

  ASSERT_EQ(C().get_quantization_type_id(ft, &q), kLiteRtStatusOk);
  EXPECT_EQ(q, kLiteRtQuantizationNone);
  // The getter of another kind refuses.
  EXPECT_EQ(C().get_per_channel_quantization(xt, &pc),
            kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(C().get_per_tensor_quantization(wt, &pt),
            kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(C().get_per_tensor_quantization(ft, &pt),
            kLiteRtStatusErrorInvalidArgument);
  LiteRtQuantizationBlockWise bw{};
  EXPECT_EQ(C().get_block_wise_quantization(wt, &bw),
            kLiteRtStatusErrorInvalidArgument);
}

TEST(LiteRtCompilerContextTest, BlockWiseQuantizationNamesTensorsOfTheGraph) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 64});
  TensorId w = g.Constant<int8_t>("w", {2, 64}, std::vector<int8_t>(128, 1));
  TensorId scales =
      g.Constant<float>("scales", {2, 2}, {0.5f, 0.25f, 0.125f, 1.0f});
  TensorId zps = g.Constant<int8_t>("zps", {2, 2}, {0, 0, 0, 0});
  tfl::BlockwiseQuantizationT bq;
  bq.scales = scales;
  bq.zero_points = zps;
  bq.block_size = 32;
  auto q = std::make_unique<tfl::QuantizationParametersT>();
  q->details.Set(std::move(bq));
  g.MutableTensor(w)->quantization = std::move(q);
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 2});
  g.Output(y);
  Model model = std::move(b).BuildUnverified();
  LiteRtGraph graph(model, {0});
  LiteRtTensor wt = InputOf(OpAt(graph.subgraph(0), 0), 1);
  LiteRtQuantizationTypeId id = kLiteRtQuantizationNone;
  ASSERT_EQ(C().get_quantization_type_id(wt, &id), kLiteRtStatusOk);
  EXPECT_EQ(id, kLiteRtQuantizationBlockWise);
  LiteRtQuantizationBlockWise bw{};
  ASSERT_EQ(C().get_block_wise_quantization(wt, &bw), kLiteRtStatusOk);
  EXPECT_EQ(bw.block_size, 32);
  ASSERT_NE(bw.scales, nullptr);
  ASSERT_NE(bw.zero_points, nullptr);
  EXPECT_EQ(NameOf(bw.scales), "scales");
  EXPECT_EQ(NameOf(bw.zero_points), "zps");
  LiteRtQuantizationPerTensor pt;
  EXPECT_EQ(C().get_per_tensor_quantization(wt, &pt),
            kLiteRtStatusErrorInvalidArgument);
}

TEST(LiteRtCompilerContextTest, WeightsAreZeroCopyAndShareBufferIds) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {4});
  TensorId k1 = g.Constant<float>("k1", {4}, {1, 2, 3, 4});
  TensorId k2 = g.Tensor("k2", tfl::TensorType_FLOAT32, {4});
  TensorId k3 = g.Constant<float>("k3", {4}, {1, 2, 3, 4});
  g.MutableTensor(k2)->buffer = g.MutableTensor(k1)->buffer;
  TensorId a = g.Op(tfl::BuiltinOperator_ADD)
                   .In(x, k1)
                   .Out("a", tfl::TensorType_FLOAT32, {4});
  TensorId m = g.Op(tfl::BuiltinOperator_MUL)
                   .In(a, k2)
                   .Out("m", tfl::TensorType_FLOAT32, {4});
  TensorId s = g.Op(tfl::BuiltinOperator_SUB)
                   .In(m, k3)
                   .Out("s", tfl::TensorType_FLOAT32, {4});
  g.Output(s);
  Model model = std::move(b).BuildUnverified();
  const uint32_t k1_buffer = model.subgraphs[0].tensors[k1].buffer;
  LiteRtGraph graph(model, {0});
  LiteRtSubgraph sg = graph.subgraph(0);
  auto weights = [](LiteRtTensor t, int32_t* id, const void** addr,
                    size_t* size) {
    LiteRtWeights w = nullptr;
    ASSERT_EQ(C().get_tensor_weights(t, &w), kLiteRtStatusOk);
    ASSERT_NE(w, nullptr);
    ASSERT_EQ(C().get_weights_buffer_id(w, id), kLiteRtStatusOk);
    ASSERT_EQ(C().get_weights_bytes(w, addr, size), kLiteRtStatusOk);
  };
  int32_t id1 = 0, id2 = 0, id3 = 0, idx = 0;
  const void *p1 = nullptr, *p2 = nullptr, *p3 = nullptr, *px = &idx;
  size_t n1 = 0, n2 = 0, n3 = 0, nx = 99;
  weights(InputOf(OpAt(sg, 0), 1), &id1, &p1, &n1);
  weights(InputOf(OpAt(sg, 1), 1), &id2, &p2, &n2);
  weights(InputOf(OpAt(sg, 2), 1), &id3, &p3, &n3);
  weights(InputOf(OpAt(sg, 0), 0), &idx, &px, &nx);
  // The model's own bytes, not a copy.
  EXPECT_EQ(p1, model.buffers[k1_buffer].data.data());
  EXPECT_EQ(n1, 16u);
  float first = 0;
  std::memcpy(&first, p1, sizeof(first));
  EXPECT_EQ(first, 1.0f);
  // Same buffer, same id and bytes; equal contents in another buffer: not.
  EXPECT_EQ(id1, id2);
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(n2, 16u);
  EXPECT_NE(id1, id3);
  EXPECT_NE(p1, p3);
  // A tensor without data.
  EXPECT_EQ(nx, 0u);
  EXPECT_EQ(px, nullptr);
  EXPECT_NE(idx, id1);
}

// One op per option getter of slots 37-127 (and 174): its options with the
// getter's member set to 2 (true for bools), then the same op kind with no
// options. Every getter reads its value back, answers InvalidArgument on
// the bare op and on an op of another kind, and refuses null pointers.
class OptionGettersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
    other_ = g.Op(tfl::BuiltinOperator_ABS)
                 .In(x)
                 .Out("abs", tfl::TensorType_FLOAT32, {1, 4});
#define GRAFT_ADD_OPS(field, op, options, member, type) \
  {                                                     \
    tfl::options##T o;                                  \
    o.member = static_cast<decltype(o.member)>(2);      \
    g.Op(tfl::BuiltinOperator_##op)                     \
        .In(x)                                          \
        .Options(std::move(o))                          \
        .Out(#field, tfl::TensorType_FLOAT32, {1, 4});  \
    g.Op(tfl::BuiltinOperator_##op)                     \
        .In(x)                                          \
        .Out("bare", tfl::TensorType_FLOAT32, {1, 4});  \
  }
    LITERT_OPTION_GETTERS_A(GRAFT_ADD_OPS)
    LITERT_OPTION_GETTERS_B(GRAFT_ADD_OPS)
    GRAFT_ADD_OPS(get_split_v_num_splits_option, SPLIT_V, SplitVOptions,
                  num_splits, int32_t)
#undef GRAFT_ADD_OPS
    model_ = std::move(b).BuildUnverified();
    graph_ = std::make_unique<LiteRtGraph>(model_, std::vector<SubgraphId>{0});
  }

  Model model_;
  std::unique_ptr<LiteRtGraph> graph_;
  TensorId other_;
};

TEST_F(OptionGettersTest, EveryGetterReadsBackAndRefusesWrongOps) {
  LiteRtSubgraph s = graph_->subgraph(0);
  LiteRtOp other = OpAt(s, 0);
  size_t next = 1;
  int checked = 0;
#define GRAFT_CHECK_GETTER(field, op, options, member, type)                  \
  {                                                                           \
    SCOPED_TRACE(#field);                                                     \
    LiteRtOp with = OpAt(s, next++);                                          \
    LiteRtOp bare = OpAt(s, next++);                                          \
    type value{};                                                             \
    EXPECT_EQ(C().field(with, &value), kLiteRtStatusOk);                      \
    EXPECT_EQ(value, static_cast<type>(2));                                   \
    EXPECT_EQ(C().field(bare, &value), kLiteRtStatusErrorInvalidArgument);    \
    EXPECT_EQ(C().field(other, &value), kLiteRtStatusErrorInvalidArgument);   \
    EXPECT_EQ(C().field(nullptr, &value), kLiteRtStatusErrorInvalidArgument); \
    EXPECT_EQ(C().field(with, nullptr), kLiteRtStatusErrorInvalidArgument);   \
    ++checked;                                                                \
  }
  LITERT_OPTION_GETTERS_A(GRAFT_CHECK_GETTER)
  LITERT_OPTION_GETTERS_B(GRAFT_CHECK_GETTER)
  GRAFT_CHECK_GETTER(get_split_v_num_splits_option, SPLIT_V, SplitVOptions,
                     num_splits, int32_t)
#undef GRAFT_CHECK_GETTER
  // Slots 37-127 less the two array getters, plus slot 174.
  EXPECT_EQ(checked, 127 - 37 + 1 - 2 + 1);
  EXPECT_EQ(next, NumOps(s));
}

TEST(LiteRtCompilerContextTest, ConvAndFullyConnectedOptionValues) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {0});
  LiteRtOp conv = OpAt(graph.subgraph(0), 0);
  LiteRtOp add = OpAt(graph.subgraph(0), 1);
  uint32_t u = 99;
  int32_t i = 99;
  ASSERT_EQ(C().get_conv_2d_padding_option(conv, &u), kLiteRtStatusOk);
  EXPECT_EQ(u, static_cast<uint32_t>(tfl::Padding_SAME));
  ASSERT_EQ(C().get_conv_2d_stride_w_option(conv, &i), kLiteRtStatusOk);
  EXPECT_EQ(i, 2);
  ASSERT_EQ(C().get_conv_2d_stride_h_option(conv, &i), kLiteRtStatusOk);
  EXPECT_EQ(i, 1);
  ASSERT_EQ(C().get_conv_2d_dilation_h_option(conv, &i), kLiteRtStatusOk);
  EXPECT_EQ(i, 3);
  ASSERT_EQ(C().get_conv_2d_fused_activation_option(conv, &u), kLiteRtStatusOk);
  EXPECT_EQ(u, static_cast<uint32_t>(tfl::ActivationFunctionType_RELU6));
  ASSERT_EQ(C().get_add_fused_activation_option(add, &u), kLiteRtStatusOk);
  EXPECT_EQ(u, static_cast<uint32_t>(tfl::ActivationFunctionType_RELU));
  // Another op kind's getter.
  EXPECT_EQ(C().get_add_fused_activation_option(conv, &u),
            kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(C().get_conv_2d_padding_option(add, &u),
            kLiteRtStatusErrorInvalidArgument);

  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {2, 8});
  TensorId w = g.Constant<float>("w", {4, 8}, std::vector<float>(32, 1.0f));
  tfl::FullyConnectedOptionsT fc;
  fc.fused_activation_function = tfl::ActivationFunctionType_TANH;
  fc.keep_num_dims = true;
  fc.weights_format = tfl::FullyConnectedOptionsWeightsFormat_SHUFFLED4x16INT8;
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Options(fc)
                   .Out("y", tfl::TensorType_FLOAT32, {2, 4});
  g.Output(y);
  Model fc_model = std::move(b).BuildUnverified();
  LiteRtGraph fc_graph(fc_model, {0});
  LiteRtOp op = OpAt(fc_graph.subgraph(0), 0);
  bool flag = false;
  ASSERT_EQ(C().get_fully_connected_fused_activation_option(op, &u),
            kLiteRtStatusOk);
  EXPECT_EQ(u, static_cast<uint32_t>(tfl::ActivationFunctionType_TANH));
  ASSERT_EQ(C().get_fully_connected_keep_num_dims_option(op, &flag),
            kLiteRtStatusOk);
  EXPECT_TRUE(flag);
  ASSERT_EQ(C().get_fully_connected_weights_format_option(op, &u),
            kLiteRtStatusOk);
  EXPECT_EQ(u, static_cast<uint32_t>(
                   tfl::FullyConnectedOptionsWeightsFormat_SHUFFLED4x16INT8));
  EXPECT_EQ(C().get_fully_connected_asymmetric_quantize_input_option(op, &flag),
            kLiteRtStatusOk);
  EXPECT_FALSE(flag);
}

// RESHAPE: shape from options; without options, from a constant shape
// input (as LiteRT's loader fills the option in); else size -1.
struct ReshapeCase {
  Model model;
  LiteRtOp op(LiteRtGraph& g, size_t i) { return OpAt(g.subgraph(0), i); }
};

Model Reshapes() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {16});
  tfl::ReshapeOptionsT with;
  with.new_shape = {2, 8};
  TensorId shape32 = g.Constant<int32_t>("shape32", {2}, {4, 4});
  TensorId shape64 = g.Constant<int64_t>("shape64", {3}, {2, 2, -1});
  TensorId dynamic_shape = g.Input("dyn", tfl::TensorType_INT32, {2});
  TensorId o0 = g.Op(tfl::BuiltinOperator_RESHAPE)
                    .In(x, shape32)
                    .Options(with)
                    .Out("o0", tfl::TensorType_FLOAT32, {2, 8});
  TensorId o1 = g.Op(tfl::BuiltinOperator_RESHAPE)
                    .In(x, shape32)
                    .Out("o1", tfl::TensorType_FLOAT32, {4, 4});
  TensorId o2 = g.Op(tfl::BuiltinOperator_RESHAPE)
                    .In(x, shape64)
                    .Out("o2", tfl::TensorType_FLOAT32, {2, 2, 4});
  TensorId o3 = g.Op(tfl::BuiltinOperator_RESHAPE)
                    .In(x, dynamic_shape)
                    .Out("o3", tfl::TensorType_FLOAT32, {4, 4});
  tfl::SqueezeOptionsT squeeze;
  squeeze.squeeze_dims = {0, 2};
  TensorId o4 = g.Op(tfl::BuiltinOperator_SQUEEZE)
                    .In(o2)
                    .Options(squeeze)
                    .Out("o4", tfl::TensorType_FLOAT32, {2, 4});
  TensorId o5 = g.Op(tfl::BuiltinOperator_SQUEEZE)
                    .In(o2)
                    .Out("o5", tfl::TensorType_FLOAT32, {2, 2, 4});
  for (TensorId o : {o0, o1, o3, o4, o5}) g.Output(o);
  return std::move(b).BuildUnverified();
}

std::vector<int32_t> ArrayOption(
    LiteRtStatus (*getter)(LiteRtOp, const int32_t**, int32_t*), LiteRtOp op,
    LiteRtStatus expected_status = kLiteRtStatusOk) {
  const int32_t* data = nullptr;
  int32_t size = -7;
  EXPECT_EQ(getter(op, &data, &size), expected_status);
  if (size < 0) return {size};
  return std::vector<int32_t>(data, data + size);
}

TEST(LiteRtCompilerContextTest, ReshapeNewShape) {
  Model model = Reshapes();
  LiteRtGraph graph(model, {0});
  auto get = C().get_reshape_new_shape_option;
  LiteRtSubgraph s = graph.subgraph(0);
  EXPECT_EQ(ArrayOption(get, OpAt(s, 0)), (std::vector<int32_t>{2, 8}));
  EXPECT_EQ(ArrayOption(get, OpAt(s, 1)), (std::vector<int32_t>{4, 4}));
  EXPECT_EQ(ArrayOption(get, OpAt(s, 2)), (std::vector<int32_t>{2, 2, -1}));
  // No options, no constant shape: size -1 and InvalidArgument, as LiteRT's
  // getter answers an op without options; plugins then read the shape
  // input.
  EXPECT_EQ(ArrayOption(get, OpAt(s, 3), kLiteRtStatusErrorInvalidArgument),
            (std::vector<int32_t>{-1}));
  // Another op kind: refused, size untouched.
  EXPECT_EQ(ArrayOption(get, OpAt(s, 4), kLiteRtStatusErrorInvalidArgument),
            (std::vector<int32_t>{-7}));
  const int32_t* data = nullptr;
  int32_t size = 0;
  EXPECT_EQ(get(OpAt(s, 0), nullptr, &size), kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(get(OpAt(s, 0), &data, nullptr), kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(get(nullptr, &data, &size), kLiteRtStatusErrorInvalidArgument);
}

TEST(LiteRtCompilerContextTest, SqueezeDims) {
  Model model = Reshapes();
  LiteRtGraph graph(model, {0});
  auto get = C().get_squeeze_dims_option;
  LiteRtSubgraph s = graph.subgraph(0);
  EXPECT_EQ(ArrayOption(get, OpAt(s, 4)), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(ArrayOption(get, OpAt(s, 5), kLiteRtStatusErrorInvalidArgument),
            (std::vector<int32_t>{-1}));
  EXPECT_EQ(ArrayOption(get, OpAt(s, 0), kLiteRtStatusErrorInvalidArgument),
            (std::vector<int32_t>{-7}));
}

TEST(LiteRtCompilerContextTest, CompositeCustomCodeAndCustomOptions) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {4});
  tfl::StableHLOCompositeOptionsT composite;
  composite.name = "odml.rms_norm";
  composite.decomposition_subgraph_index = 1;
  composite.composite_attributes = {0xa1, 0xb2, 0xc3};
  composite.version = 3;
  TensorId y = g.Op(tfl::BuiltinOperator_STABLEHLO_COMPOSITE)
                   .In(x)
                   .Options(composite)
                   .Out("y", tfl::TensorType_FLOAT32, {4});
  TensorId z = g.CustomOp("MyVendorOp")
                   .In(y)
                   .CustomOptions(std::string("\x01\x02\x03\x04", 4))
                   .Out("z", tfl::TensorType_FLOAT32, {4});
  g.Output(z);
  auto& d = b.Subgraph("decomposition");
  TensorId dx = d.Input("dx", tfl::TensorType_FLOAT32, {4});
  d.Output(d.Op(tfl::BuiltinOperator_ABS)
               .In(dx)
               .Out("dy", tfl::TensorType_FLOAT32, {4}));
  Model model = std::move(b).BuildUnverified();
  LiteRtGraph graph(model, {0});
  LiteRtOp comp = OpAt(graph.subgraph(0), 0);
  LiteRtOp custom = OpAt(graph.subgraph(0), 1);

  const char* name = nullptr;
  ASSERT_EQ(C().get_shlo_composite_op_name(comp, &name), kLiteRtStatusOk);
  EXPECT_STREQ(name, "odml.rms_norm");
  int32_t i = 0;
  ASSERT_EQ(C().get_shlo_composite_op_decomposition_subgraph_index(comp, &i),
            kLiteRtStatusOk);
  EXPECT_EQ(i, 1);
  ASSERT_EQ(C().get_shlo_composite_op_version(comp, &i), kLiteRtStatusOk);
  EXPECT_EQ(i, 3);
  const uint8_t* attrs = nullptr;
  int32_t size = 0;
  ASSERT_EQ(C().get_shlo_composite_op_attributes(comp, &attrs, &size),
            kLiteRtStatusOk);
  ASSERT_EQ(size, 3);
  EXPECT_EQ(std::vector<uint8_t>(attrs, attrs + size),
            (std::vector<uint8_t>{0xa1, 0xb2, 0xc3}));
  // Not a composite.
  EXPECT_EQ(C().get_shlo_composite_op_name(custom, &name),
            kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(C().get_shlo_composite_op_version(custom, &i),
            kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(C().get_shlo_composite_op_attributes(custom, &attrs, &size),
            kLiteRtStatusErrorInvalidArgument);
  EXPECT_EQ(C().get_shlo_composite_op_decomposition_subgraph_index(custom, &i),
            kLiteRtStatusErrorInvalidArgument);

  EXPECT_EQ(CodeOf(custom), tfl::BuiltinOperator_CUSTOM);
  const char* code = nullptr;
  ASSERT_EQ(C().get_custom_code(custom, &code), kLiteRtStatusOk);
  EXPECT_STREQ(code, "MyVendorOp");
  EXPECT_EQ(C().get_custom_code(comp, &code),
            kLiteRtStatusErrorInvalidArgument);
  const uint8_t* data = nullptr;
  ASSERT_EQ(C().get_custom_options(custom, &data, &size), kLiteRtStatusOk);
  ASSERT_EQ(size, 4);
  EXPECT_EQ(data[0], 1);
  EXPECT_EQ(data[3], 4);
  // A builtin op has none.
  ASSERT_EQ(C().get_custom_options(comp, &data, &size), kLiteRtStatusOk);
  EXPECT_EQ(size, 0);
}

TEST(LiteRtCompilerContextTest, PushOpRecordsOpAndPartitionInOrder) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {0, 1});
  LiteRtOpList list = graph.op_list(0);
  LiteRtOp conv = OpAt(graph.subgraph(0), 0);
  LiteRtOp add = OpAt(graph.subgraph(0), 1);
  EXPECT_EQ(C().push_op(list, add, 0), kLiteRtStatusOk);
  EXPECT_EQ(C().push_op(list, conv, 3), kLiteRtStatusOk);
  auto pushed = graph.pushed(0);
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(*pushed, (std::vector<std::pair<OpId, size_t>>{{1, 0}, {0, 3}}));
  // A fresh op list for the same subgraph starts empty.
  graph.op_list(0);
  pushed = graph.pushed(0);
  ASSERT_TRUE(pushed.ok());
  EXPECT_TRUE(pushed->empty());
}

TEST(LiteRtCompilerContextTest, PushOpRefusesAnOpOfAnotherSubgraph) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {0, 1});
  LiteRtOpList list = graph.op_list(0);
  LiteRtOp mul = OpAt(graph.subgraph(1), 0);
  EXPECT_EQ(C().push_op(list, mul, 0), kLiteRtStatusErrorInvalidArgument);
  // Even if the plugin ignores the status, the host sees the error.
  auto pushed = graph.pushed(0);
  ASSERT_FALSE(pushed.ok());
  EXPECT_NE(pushed.status().message().find("another subgraph"),
            std::string::npos)
      << pushed.status();
  // The other subgraph's list is unaffected.
  EXPECT_TRUE(graph.pushed(1).ok());
  // An op of the same subgraph index in another graph is another subgraph.
  LiteRtGraph other(model, {0});
  EXPECT_EQ(C().push_op(graph.op_list(0), OpAt(other.subgraph(0), 0), 0),
            kLiteRtStatusErrorInvalidArgument);
}

// Regression: push_op read the op's record before checking it was one of
// the subgraph's, so a handle the host never handed out crashed the host.
TEST(LiteRtCompilerContextTest, PushOpRefusesHandlesItDidNotHandOut) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {0});
  LiteRtOp add = OpAt(graph.subgraph(0), 1);
  const LiteRtOp bogus[] = {
      reinterpret_cast<LiteRtOp>(uintptr_t{16}),
      reinterpret_cast<LiteRtOp>(reinterpret_cast<uintptr_t>(add) + 1),
      reinterpret_cast<LiteRtOp>(&graph),
  };
  for (LiteRtOp op : bogus) {
    LiteRtOpList list = graph.op_list(0);
    EXPECT_EQ(C().push_op(list, op, 0), kLiteRtStatusErrorInvalidArgument);
    EXPECT_FALSE(graph.pushed(0).ok());
  }
  LiteRtOpList list = graph.op_list(0);
  EXPECT_EQ(C().push_op(list, add, 2), kLiteRtStatusOk);
  auto pushed = graph.pushed(0);
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(*pushed, (std::vector<std::pair<OpId, size_t>>{{1, 2}}));
}

TEST(LiteRtCompilerContextTest, NullHandlesAndOutPointersAreInvalidArgument) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {0});
  LiteRtModel m = graph.model();
  LiteRtSubgraph s = graph.subgraph(0);
  LiteRtOp op = OpAt(s, 0);
  LiteRtTensor t = InputOf(op, 1);
  LiteRtWeights w = nullptr;
  ASSERT_EQ(C().get_tensor_weights(t, &w), kLiteRtStatusOk);
  constexpr LiteRtStatus kBad = kLiteRtStatusErrorInvalidArgument;
  LiteRtParamIndex n;
  LiteRtSubgraph sg;
  LiteRtOp o;
  LiteRtTensor tt;
  EXPECT_EQ(C().get_num_model_subgraphs(nullptr, &n), kBad);
  EXPECT_EQ(C().get_num_model_subgraphs(m, nullptr), kBad);
  EXPECT_EQ(C().get_model_subgraph(nullptr, 0, &sg), kBad);
  EXPECT_EQ(C().get_model_subgraph(m, 0, nullptr), kBad);
  EXPECT_EQ(C().get_num_subgraph_ops(nullptr, &n), kBad);
  EXPECT_EQ(C().get_num_subgraph_ops(s, nullptr), kBad);
  EXPECT_EQ(C().get_subgraph_op(nullptr, 0, &o), kBad);
  EXPECT_EQ(C().get_subgraph_op(s, 0, nullptr), kBad);
  EXPECT_EQ(C().get_num_subgraph_inputs(s, nullptr), kBad);
  EXPECT_EQ(C().get_subgraph_input(s, 0, nullptr), kBad);
  EXPECT_EQ(C().get_num_subgraph_outputs(s, nullptr), kBad);
  EXPECT_EQ(C().get_subgraph_output(nullptr, 0, &tt), kBad);
  EXPECT_EQ(C().get_op_code(op, nullptr), kBad);
  EXPECT_EQ(C().get_op_code(nullptr, nullptr), kBad);
  EXPECT_EQ(C().get_custom_code(op, nullptr), kBad);
  EXPECT_EQ(C().get_num_op_inputs(nullptr, &n), kBad);
  EXPECT_EQ(C().get_op_input(op, 0, nullptr), kBad);
  EXPECT_EQ(C().get_num_op_outputs(op, nullptr), kBad);
  EXPECT_EQ(C().get_op_output(nullptr, 0, &tt), kBad);
  EXPECT_EQ(C().get_tensor_name(t, nullptr), kBad);
  EXPECT_EQ(C().get_tensor_name(nullptr, nullptr), kBad);
  EXPECT_EQ(C().get_tensor_index(t, nullptr), kBad);
  EXPECT_EQ(C().get_tensor_type_id(t, nullptr), kBad);
  EXPECT_EQ(C().get_ranked_tensor_type(t, nullptr), kBad);
  EXPECT_EQ(C().get_ranked_tensor_type(nullptr, nullptr), kBad);
  EXPECT_EQ(C().get_unranked_tensor_type(t, nullptr), kBad);
  EXPECT_EQ(C().get_quantization_type_id(t, nullptr), kBad);
  EXPECT_EQ(C().get_per_tensor_quantization(t, nullptr), kBad);
  EXPECT_EQ(C().get_per_channel_quantization(t, nullptr), kBad);
  EXPECT_EQ(C().get_block_wise_quantization(t, nullptr), kBad);
  EXPECT_EQ(C().get_num_tensor_uses(t, nullptr), kBad);
  LiteRtParamIndex arg;
  EXPECT_EQ(C().get_tensor_use(t, 0, nullptr, &arg), kBad);
  EXPECT_EQ(C().get_tensor_use(t, 0, &o, nullptr), kBad);
  bool has;
  LiteRtTensorDefiningOp def;
  EXPECT_EQ(C().get_tensor_defining_op(t, nullptr, &def), kBad);
  EXPECT_EQ(C().get_tensor_defining_op(t, &has, nullptr), kBad);
  EXPECT_EQ(C().get_tensor_weights(t, nullptr), kBad);
  EXPECT_EQ(C().get_tensor_weights(nullptr, &w), kBad);
  EXPECT_EQ(C().get_weights_buffer_id(w, nullptr), kBad);
  EXPECT_EQ(C().get_weights_buffer_id(nullptr, nullptr), kBad);
  const void* addr;
  size_t size;
  EXPECT_EQ(C().get_weights_bytes(w, nullptr, &size), kBad);
  EXPECT_EQ(C().get_weights_bytes(w, &addr, nullptr), kBad);
  const char* str;
  int32_t i32;
  const uint8_t* bytes;
  EXPECT_EQ(C().get_shlo_composite_op_name(op, nullptr), kBad);
  EXPECT_EQ(C().get_shlo_composite_op_name(nullptr, &str), kBad);
  EXPECT_EQ(C().get_shlo_composite_op_version(op, nullptr), kBad);
  EXPECT_EQ(C().get_shlo_composite_op_decomposition_subgraph_index(op, nullptr),
            kBad);
  EXPECT_EQ(C().get_shlo_composite_op_attributes(op, nullptr, &i32), kBad);
  EXPECT_EQ(C().get_custom_options(op, nullptr, &i32), kBad);
  EXPECT_EQ(C().get_custom_options(op, &bytes, nullptr), kBad);
  EXPECT_EQ(C().push_op(nullptr, op, 0), kBad);
  EXPECT_EQ(C().push_op(graph.op_list(0), nullptr, 0), kBad);
  LiteRtOpaqueOptions opaque;
  void* payload;
  EXPECT_EQ(C().get_opaque_options(nullptr, &opaque), kBad);
  EXPECT_EQ(C().find_opaque_options_data(nullptr, "x", &payload), kBad);
  uint8_t* buf;
  size_t offset;
  EXPECT_EQ(C().serialize_model_with_signatures(nullptr, &buf, &size, &offset,
                                                false, nullptr, 0, {0}),
            kBad);
  EXPECT_EQ(C().serialize_model_with_signatures(m, nullptr, &size, &offset,
                                                false, nullptr, 0, {0}),
            kBad);
  EXPECT_EQ(C().serialize_model_with_signatures(m, &buf, &size, nullptr, false,
                                                nullptr, 0, {0}),
            kBad);
}

TEST(LiteRtCompilerContextTest, SerializeGivesALoadableModelOfTheSubgraphs) {
  Model model = ConvAddAndMul();
  LiteRtGraph graph(model, {1});
  uint8_t* buf = nullptr;
  size_t size = 0, offset = 99;
  ASSERT_EQ(C().serialize_model_with_signatures(
                graph.model(), &buf, &size, &offset, false, nullptr, 0, {1}),
            kLiteRtStatusOk);
  ASSERT_NE(buf, nullptr);
  ASSERT_GT(size, offset);
  absl::StatusOr<Model> loaded = LoadModelFromBytes(
      Bytes::Copy(absl::MakeConstSpan(buf + offset, size - offset)),
      "serialized");
  delete[] buf;
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->subgraphs.size(), 1u);
  ASSERT_EQ(loaded->subgraphs[0].ops.size(), 1u);
  EXPECT_EQ(loaded->subgraphs[0].tensors.size(), 3u);
  EXPECT_EQ(loaded->subgraphs[0].name, "second");
}

TEST(LiteRtHostOptionsTest, PayloadsByIdentifierAndNoEnvironmentOptions) {
  LiteRtHostOptions host;
  host.SetPayload("intel_openvino", "performance_mode = 0\n");
  LiteRtOpaqueOptions opaque = nullptr;
  ASSERT_EQ(C().get_opaque_options(host.options(), &opaque), kLiteRtStatusOk);
  void* data = nullptr;
  ASSERT_EQ(C().find_opaque_options_data(opaque, "intel_openvino", &data),
            kLiteRtStatusOk);
  EXPECT_STREQ(static_cast<const char*>(data), "performance_mode = 0\n");
  // Replacing a payload.
  host.SetPayload("intel_openvino", "x");
  ASSERT_EQ(C().find_opaque_options_data(opaque, "intel_openvino", &data),
            kLiteRtStatusOk);
  EXPECT_STREQ(static_cast<const char*>(data), "x");
  data = nullptr;
  EXPECT_EQ(C().find_opaque_options_data(opaque, "qualcomm", &data),
            kLiteRtStatusErrorNotFound);
  EXPECT_EQ(data, nullptr);
  EXPECT_EQ(C().find_opaque_options_data(opaque, nullptr, &data),
            kLiteRtStatusErrorInvalidArgument);
  // The host owns the options: a plugin's destroy is a no-op.
  C().destroy_options(host.options());
  ASSERT_EQ(C().find_opaque_options_data(opaque, "intel_openvino", &data),
            kLiteRtStatusOk);

  LiteRtAny* any = reinterpret_cast<LiteRtAny*>(&data);
  for (LiteRtEnvOptionTag tag : {0, 1, 5, 1000}) {
    EXPECT_EQ(C().get_environment_options_value(host.environment(), tag, any),
              kLiteRtStatusErrorNotFound)
        << tag;
  }
  EXPECT_EQ(C().get_environment_options_value(host.environment(), 0, nullptr),
            kLiteRtStatusErrorInvalidArgument);
}

}  // namespace
}  // namespace graft
