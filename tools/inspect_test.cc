#include "tools/inspect.h"

#include <sstream>
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/op_options.h"

namespace graft::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// x -> CONV_2D(w, b) -> y -> RELU -> z, plus a custom op, a signature and
// metadata.
Model ConvModel() {
  ModelBuilder b;
  b.Description("inspect test");
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 96, 96, 3});
  TensorId w = g.Constant<float>("w", {16, 3, 3, 3},
                                 std::vector<float>(16 * 3 * 3 * 3, 0.5f));
  TensorId bias = g.Constant<float>("b", {16}, std::vector<float>(16, 0.0f));
  tfl::Conv2DOptionsT conv;
  conv.padding = tfl::Padding_SAME;
  conv.stride_w = 2;
  conv.stride_h = 2;
  conv.fused_activation_function = tfl::ActivationFunctionType_RELU6;
  TensorId y = g.Op(tfl::BuiltinOperator_CONV_2D)
                   .In(x, w, bias)
                   .Options(conv)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 48, 48, 16});
  TensorId q = g.Op(tfl::BuiltinOperator_QUANTIZE)
                   .In(y)
                   .Out("q", tfl::TensorType_INT8, {1, 48, 48, 16});
  g.Quantize(q, 0.5f, 3);
  TensorId c = g.CustomOp("MyOp")
                   .In(q)
                   .CustomOptions(std::string(5, '\x07'))
                   .Out("c", tfl::TensorType_INT8, {1, 48, 48, 16});
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  for (int i = 0; i < 16; ++i) {
    scales.push_back(0.1f * static_cast<float>(i + 1));
    zero_points.push_back(i);
  }
  g.QuantizePerChannel(c, scales, zero_points, 3);
  g.Output(c);
  b.Signature("serving_default", {{"image", x}}, {{"out", c}});
  b.Metadata("min_runtime_version", std::string("1.5.0\0\0\0", 8));
  b.Metadata("blob", std::string("\x01\x02\xff", 3));
  absl::StatusOr<Model> m = std::move(b).Build();
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : Model{};
}

TEST(InspectTest, PrintsSummaryAndOpLines) {
  Model model = ConvModel();
  absl::StatusOr<std::string> text = InspectModel(model, "m.tflite", {});
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("file:"));
  EXPECT_THAT(*text, HasSubstr("m.tflite"));
  EXPECT_THAT(*text, HasSubstr("\"inspect test\""));
  EXPECT_THAT(*text, HasSubstr("1 subgraphs, 3 ops, 6 tensors"));
  EXPECT_THAT(*text, HasSubstr("[x:1x96x96x3 f32, w:16x3x3x3 f32 (const), "
                               "b:16 f32 (const)] -> [y:1x48x48x16 f32]"));
  // Options come from the schema's reflection tables; SAME is the default
  // padding and so is left out.
  EXPECT_THAT(*text, HasSubstr("stride_w=2 stride_h=2 "
                               "fused_activation_function=RELU6"));
  EXPECT_THAT(*text, Not(HasSubstr("padding=")));
  EXPECT_THAT(*text, HasSubstr("CUSTOM:MyOp"));
  EXPECT_THAT(*text, HasSubstr("custom_options=5B"));
  EXPECT_THAT(*text, HasSubstr("\"serving_default\" (subgraph 0)"));
  EXPECT_THAT(*text, HasSubstr("image"));
  EXPECT_THAT(*text, HasSubstr("\"1.5.0\""));
  EXPECT_THAT(*text, HasSubstr("(binary)"));
  EXPECT_THAT(*text, HasSubstr("custom ops:"));
  // Tensor and buffer tables only on request.
  EXPECT_THAT(*text, Not(HasSubstr("quantization")));
  EXPECT_THAT(*text, Not(HasSubstr("buffers:")));
}

TEST(InspectTest, AllOptionsIncludesDefaults) {
  Model model = ConvModel();
  InspectOptions options;
  options.all_options = true;
  absl::StatusOr<std::string> text = InspectModel(model, "m", options);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("padding=SAME stride_w=2"));
  EXPECT_THAT(*text, HasSubstr("dilation_w_factor=1"));
}

TEST(InspectTest, PrintsTensorAndBufferTables) {
  Model model = ConvModel();
  InspectOptions options;
  options.tensors = true;
  options.buffers = true;
  absl::StatusOr<std::string> text = InspectModel(model, "m", options);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("quantization"));
  EXPECT_THAT(*text, HasSubstr("scale=0.5 zp=3"));
  EXPECT_THAT(*text,
              HasSubstr("per-channel axis=3 n=16 scale=[0.1,0.2,0.3,...] "
                        "zp=[0,1,2,...]"));
  EXPECT_THAT(*text, HasSubstr("buffers: 5"));
  EXPECT_THAT(*text, HasSubstr("1728"));  // w: 16*3*3*3 floats.
}

TEST(InspectTest, RestrictsToOneSubgraph) {
  ModelBuilder b;
  auto& g0 = b.Subgraph("first");
  g0.Output(g0.Input("a", tfl::TensorType_FLOAT32, {1}));
  auto& g1 = b.Subgraph("second");
  g1.Output(g1.Input("b", tfl::TensorType_FLOAT32, {1}));
  absl::StatusOr<Model> m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  InspectOptions options;
  options.subgraph = 1;
  absl::StatusOr<std::string> text = InspectModel(*m, "m", options);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("subgraph 1 \"second\""));
  EXPECT_THAT(*text, Not(HasSubstr("subgraph 0 \"first\"")));
  options.subgraph = 2;
  EXPECT_FALSE(InspectModel(*m, "m", options).ok());
}

TEST(InspectTest, JsonHasExpectedKeys) {
  Model model = ConvModel();
  InspectOptions options;
  options.json = true;
  options.buffers = true;
  absl::StatusOr<std::string> json = InspectModel(model, "m.tflite", options);
  ASSERT_TRUE(json.ok()) << json.status();
  for (const char* key :
       {"\"file\": \"m.tflite\"", "\"counts\"", "\"op_histogram\"",
        "\"signatures\"", "\"subgraphs\"", "\"tensors\"", "\"buffers\"",
        "\"metadata\"", "\"custom_ops\"", "\"stride_w\": 2",
        "\"fused_activation_function\": \"RELU6\"", "\"text\": \"1.5.0\"",
        "\"custom_code\": \"MyOp\"", "\"quantized_dimension\": 3"}) {
    EXPECT_THAT(*json, HasSubstr(key));
  }
}

TEST(InspectTest, OptionFieldsReadGenericallyIncludingVectors) {
  tfl::OperatorT op;
  tfl::ReshapeOptionsT reshape;
  reshape.new_shape = {1, -1, 4};
  op.builtin_options.Set(reshape);
  EXPECT_EQ(FormatOptionFields(OpOptionFields(op)), "new_shape=[1,-1,4]");

  tfl::OperatorT hlo;
  tfl::StablehloSliceOptionsT slice;
  slice.start_indices = {0, 1};
  hlo.builtin_options_2.Set(slice);
  EXPECT_EQ(FormatOptionFields(OpOptionFields(hlo)), "start_indices=[0,1]");

  EXPECT_TRUE(OpOptionFields(tfl::OperatorT{}).empty());
}

TEST(InspectTest, ShortTypeNames) {
  EXPECT_EQ(ShortTypeName(tfl::TensorType_FLOAT32), "f32");
  EXPECT_EQ(ShortTypeName(tfl::TensorType_INT8), "i8");
  EXPECT_EQ(ShortTypeName(tfl::TensorType_BOOL), "bool");
  EXPECT_EQ(ShortTypeName(static_cast<tfl::TensorType>(120)), "unknown(120)");
}

TEST(InspectCommandTest, InspectsSavedModel) {
  testing::TempDir dir;
  std::string path = dir.Join("conv.tflite");
  ASSERT_TRUE(SaveModel(ConvModel(), path).ok());
  std::ostringstream out, err;
  int rc = RunInspectCommand({path, "--buffers"}, out, err);
  EXPECT_EQ(rc, 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("CONV_2D"));
  EXPECT_THAT(out.str(), HasSubstr("inline @0x"));
  EXPECT_EQ(err.str(), "");
}

TEST(InspectCommandTest, MissingFileIsError1NamingPath) {
  std::ostringstream out, err;
  int rc = RunInspectCommand({"/nonexistent/dir/model.tflite"}, out, err);
  EXPECT_EQ(rc, 1);
  EXPECT_THAT(err.str(), HasSubstr("graft inspect: error: "));
  EXPECT_THAT(err.str(), HasSubstr("/nonexistent/dir/model.tflite"));
  EXPECT_EQ(out.str(), "");
}

TEST(InspectCommandTest, UsageErrorsAreExit2) {
  std::ostringstream out, err;
  EXPECT_EQ(RunInspectCommand({}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("missing MODEL"));
  err.str("");
  EXPECT_EQ(RunInspectCommand({"a", "--bogus"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("unknown flag --bogus"));
  err.str("");
  EXPECT_EQ(RunInspectCommand({"a", "b"}, out, err), 2);
}

TEST(InspectCommandTest, HelpIsExit0) {
  std::ostringstream out, err;
  EXPECT_EQ(RunInspectCommand({"--help"}, out, err), 0);
  EXPECT_THAT(out.str(), HasSubstr("usage: graft inspect MODEL"));
  EXPECT_THAT(out.str(), HasSubstr("--subgraph"));
}

}  // namespace
}  // namespace graft::tools
