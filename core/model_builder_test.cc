#include "core/model_builder.h"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/model_io.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Serializes `model`, loads the image back and expects the two to compare
// equal.
void ExpectRoundTrips(const Model& model) {
  absl::StatusOr<std::vector<uint8_t>> image = SerializeModel(model);
  ASSERT_TRUE(image.ok()) << image.status();
  absl::StatusOr<Model> loaded =
      LoadModelFromBytes(Bytes::Own(*std::move(image)), "round_trip");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  absl::Status same = CompareModels(model, *loaded);
  EXPECT_TRUE(same.ok()) << same;
}

std::vector<float> Iota(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(ModelBuilderTest, BuildsFullyConnectedGraph) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 8});
  TensorId w = g.Constant<float>("w", {4, 8}, Iota(32));
  tfl::FullyConnectedOptionsT fc;
  fc.fused_activation_function = tfl::ActivationFunctionType_RELU;
  TensorId h = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Options(fc)
                   .Out("h", tfl::TensorType_FLOAT32, {1, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_RELU)
                   .In(h)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4});
  g.Output(y);
  b.Signature("serving_default", {{"x", x}}, {{"y", y}});

  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->subgraphs.size(), 1u);
  const Subgraph& sg = m->subgraphs[0];
  EXPECT_EQ(sg.name, "main");
  EXPECT_EQ(sg.tensors.size(), 4u);
  EXPECT_EQ(sg.inputs, (std::vector<int32_t>{x}));
  EXPECT_EQ(sg.outputs, (std::vector<int32_t>{y}));
  ASSERT_EQ(sg.ops.size(), 2u);
  EXPECT_EQ(sg.ops[0].inputs, (std::vector<int32_t>{x, w, kNoTensor}));
  EXPECT_EQ(sg.ops[0].outputs, (std::vector<int32_t>{h}));
  ASSERT_NE(sg.ops[0].builtin_options.AsFullyConnectedOptions(), nullptr);
  EXPECT_EQ(sg.ops[0]
                .builtin_options.AsFullyConnectedOptions()
                ->fused_activation_function,
            tfl::ActivationFunctionType_RELU);
  EXPECT_EQ(OpName(*m, sg.ops[1]), "RELU");

  // Buffer 0 is the sentinel; only the constant has data.
  ASSERT_EQ(m->buffers.size(), 2u);
  EXPECT_TRUE(m->buffers[0].data.empty());
  EXPECT_EQ(sg.tensors[w].buffer, 1u);
  EXPECT_EQ(m->buffers[1].data.size(), 32 * sizeof(float));
  EXPECT_EQ(sg.tensors[x].buffer, 0u);

  ASSERT_EQ(m->signature_defs.size(), 1u);
  EXPECT_EQ(m->signature_defs[0].signature_key, "serving_default");
  EXPECT_EQ(m->signature_defs[0].inputs[0]->name, "x");
  EXPECT_EQ(m->signature_defs[0].outputs[0]->tensor_index,
            static_cast<uint32_t>(y));
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, SharesOperatorCodesBetweenOpsOfOneKind) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  TensorId t = g.Input("x", tfl::TensorType_FLOAT32, {2});
  for (int i = 0; i < 3; ++i) {
    t = g.Op(tfl::BuiltinOperator_RELU)
            .In(t)
            .Out("r" + std::to_string(i), tfl::TensorType_FLOAT32, {2});
  }
  t = g.Op(tfl::BuiltinOperator_RELU, /*version=*/2)
          .In(t)
          .Out("r_v2", tfl::TensorType_FLOAT32, {2});
  t = g.CustomOp("MyOp").In(t).Out("c", tfl::TensorType_FLOAT32, {2});
  g.Output(t);
  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  // RELU v1, RELU v2, CUSTOM:MyOp.
  ASSERT_EQ(m->operator_codes.size(), 3u);
  const auto& ops = m->subgraphs[0].ops;
  EXPECT_EQ(ops[0].opcode_index, ops[2].opcode_index);
  EXPECT_NE(ops[2].opcode_index, ops[3].opcode_index);
  EXPECT_EQ(OpName(*m, ops[4]), "CUSTOM:MyOp");
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, BuildsQuantizedTensors) {
  ModelBuilder b;
  auto& g = b.Subgraph("q");
  TensorId x = g.Input("x", tfl::TensorType_INT8, {1, 4, 4, 2});
  g.Quantize(x, 0.5f, 3);
  std::vector<int8_t> weights(3 * 1 * 1 * 2, 1);
  TensorId w = g.Constant<int8_t>("w", {3, 1, 1, 2}, weights);
  g.QuantizePerChannel(w, {0.1f, 0.2f, 0.3f}, {0, 0, 0}, /*axis=*/0);
  TensorId bias = g.Constant<int32_t>("b", {3}, {1, 2, 3});
  tfl::Conv2DOptionsT conv;
  conv.padding = tfl::Padding_SAME;
  conv.stride_w = 1;
  conv.stride_h = 1;
  TensorId y = g.Op(tfl::BuiltinOperator_CONV_2D, 3)
                   .In(x, w, bias)
                   .Options(conv)
                   .Out("y", tfl::TensorType_INT8, {1, 4, 4, 3});
  g.Quantize(y, 0.25f, -1).Output(y);

  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  const auto& tensors = m->subgraphs[0].tensors;
  ASSERT_NE(tensors[x].quantization, nullptr);
  EXPECT_EQ(tensors[x].quantization->scale, (std::vector<float>{0.5f}));
  EXPECT_EQ(tensors[x].quantization->zero_point, (std::vector<int64_t>{3}));
  ASSERT_NE(tensors[w].quantization, nullptr);
  EXPECT_EQ(tensors[w].quantization->scale,
            (std::vector<float>{0.1f, 0.2f, 0.3f}));
  EXPECT_EQ(tensors[w].quantization->quantized_dimension, 0);
  EXPECT_EQ(tensors[bias].type, tfl::TensorType_INT32);
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, BuildsMultiOutputOps) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {4, 6});
  TensorId axis = g.Constant<int32_t>("axis", {}, {1});
  tfl::SplitOptionsT split;
  split.num_splits = 3;
  std::vector<TensorId> parts =
      g.Op(tfl::BuiltinOperator_SPLIT)
          .In(axis, x)
          .Options(split)
          .Outs({{"a", tfl::TensorType_FLOAT32, {4, 2}},
                 {"b", tfl::TensorType_FLOAT32, {4, 2}},
                 {"c", tfl::TensorType_FLOAT32, {4, 2}}});
  ASSERT_EQ(parts.size(), 3u);

  // The same with Out() called once per output.
  OpBuilder unpack = g.Op(tfl::BuiltinOperator_UNPACK).In(parts[0]);
  TensorId u0 = unpack.Out("u0", tfl::TensorType_FLOAT32, {4});
  TensorId u1 = unpack.Out("u1", tfl::TensorType_FLOAT32, {4});
  tfl::UnpackOptionsT unpack_options;
  unpack_options.num = 2;
  unpack_options.axis = 1;
  unpack.Options(unpack_options);
  for (TensorId t : {parts[1], parts[2], u0, u1}) g.Output(t);

  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  const auto& ops = m->subgraphs[0].ops;
  EXPECT_EQ(ops[0].outputs,
            (std::vector<int32_t>{parts[0], parts[1], parts[2]}));
  EXPECT_EQ(ops[1].outputs, (std::vector<int32_t>{u0, u1}));
  EXPECT_EQ(ops[1].builtin_options.AsUnpackOptions()->num, 2);
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, BuildsCustomOpsMetadataAndDescription) {
  ModelBuilder b;
  b.Description("built by a test");
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {3});
  TensorId y = g.CustomOp("MyOp")
                   .In(x)
                   .CustomOptions(std::string("\x01\x02\x03", 3))
                   .Out("y", tfl::TensorType_FLOAT32, {3});
  g.Output(y);
  b.Metadata("min_runtime_version", "1.5.0");

  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->description, "built by a test");
  EXPECT_EQ(m->subgraphs[0].ops[0].custom_options,
            (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(m->subgraphs[0].ops[0].custom_options_format,
            tfl::CustomOptionsFormat_FLEXBUFFERS);
  ASSERT_EQ(m->metadata.size(), 1u);
  EXPECT_EQ(m->buffers[m->metadata[0].buffer].data.view(), "1.5.0");
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, BuildsSeveralSubgraphs) {
  ModelBuilder b;
  auto& main = b.Subgraph("main");
  auto& body = b.Subgraph("body");
  TensorId bx = body.Input("bx", tfl::TensorType_FLOAT32, {2});
  TensorId by = body.Op(tfl::BuiltinOperator_RELU)
                    .In(bx)
                    .Out("by", tfl::TensorType_FLOAT32, {2});
  body.Output(by);

  TensorId x = main.Input("x", tfl::TensorType_FLOAT32, {2});
  TensorId y = main.Op(tfl::BuiltinOperator_TANH)
                   .In(x)
                   .Out("y", tfl::TensorType_FLOAT32, {2});
  main.Output(y);
  EXPECT_EQ(main.id(), 0);
  EXPECT_EQ(body.id(), 1);
  b.Signature("body", {{"in", bx}}, {{"out", by}}, body.id());

  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->subgraphs.size(), 2u);
  EXPECT_EQ(m->subgraphs[1].name, "body");
  EXPECT_EQ(m->signature_defs[0].subgraph_index, 1u);
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, EmptyModelHasSentinelBuffer) {
  ModelBuilder b;
  b.Subgraph("main");
  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->buffers.size(), 1u);
  EXPECT_TRUE(m->buffers[0].data.empty());
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, RejectsConstantOfWrongSize) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  g.Constant<float>("w", {2, 3}, {1.0f, 2.0f});
  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(m.status().message()).find("'w'"), std::string::npos)
      << m.status().message();
  EXPECT_NE(std::string(m.status().message()).find("needs 24 bytes, got 8"),
            std::string::npos)
      << m.status().message();
}

TEST(ModelBuilderTest, RejectsUnknownTensorIdsWithoutCrashing) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1});
  g.Op(tfl::BuiltinOperator_ADD)
      .In(x, 42)
      .Out("y", tfl::TensorType_FLOAT32, {1});
  g.Quantize(-7, 1.0f, 0);
  EXPECT_EQ(g.MutableTensor(99), nullptr);
  g.Output(1234);
  EXPECT_FALSE(b.status().ok());
  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_FALSE(m.ok());
  // The first misuse is the one reported.
  EXPECT_NE(
      std::string(m.status().message()).find("input of op 0: no tensor 42"),
      std::string::npos)
      << m.status().message();
}

TEST(ModelBuilderTest, BuildRunsVerifyModel) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1});
  g.Output(x);
  // Tensor 5 does not exist; only VerifyModel sees it.
  b.Signature("s", {{"x", 5}}, {});
  absl::StatusOr<Model> m = std::move(b).Build();
  EXPECT_FALSE(m.ok());
}

TEST(ModelBuilderTest, BuildUnverifiedKeepsInvalidModels) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1});
  g.Output(x);
  b.Signature("s", {{"x", 5}}, {});
  Model m = std::move(b).BuildUnverified();
  EXPECT_EQ(m.signature_defs.size(), 1u);
  EXPECT_FALSE(VerifyModel(m).ok());
}

TEST(ModelBuilderTest, MutableTensorEditsUnusualFields) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  g.MutableTensor(x)->shape_signature = {-1, 4};
  TensorId y = g.Op(tfl::BuiltinOperator_RELU)
                   .In(x)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4});
  g.MutableTensor(y)->shape_signature = {-1, 4};
  g.Output(y);
  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->subgraphs[0].tensors[x].shape_signature,
            (std::vector<int32_t>{-1, 4}));
  ExpectRoundTrips(*m);
}

TEST(ModelBuilderTest, StablehloOptionsGoToBuiltinOptions2) {
  ModelBuilder b;
  auto& g = b.Subgraph();
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {4, 4});
  tfl::StablehloSliceOptionsT slice;
  slice.start_indices = {0, 0};
  slice.limit_indices = {2, 2};
  slice.strides = {1, 1};
  TensorId y = g.Op(tfl::BuiltinOperator_STABLEHLO_SLICE)
                   .In(x)
                   .Options(slice)
                   .Out("y", tfl::TensorType_FLOAT32, {2, 2});
  g.Output(y);
  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  const tfl::OperatorT& op = m->subgraphs[0].ops[0];
  EXPECT_EQ(op.builtin_options.type, tfl::BuiltinOptions_NONE);
  ASSERT_NE(op.builtin_options_2.AsStablehloSliceOptions(), nullptr);
  EXPECT_EQ(op.builtin_options_2.AsStablehloSliceOptions()->limit_indices,
            (std::vector<int64_t>{2, 2}));
  ExpectRoundTrips(*m);
}

}  // namespace
}  // namespace graft
