#include "core/inline.h"

#include <string>
#include <vector>

#include "core/model_builder.h"
#include "core/model_io.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

constexpr auto kF32 = tfl::TensorType_FLOAT32;

// main: x -> COMPOSITE(decomposition 1) -> y -> ABS -> z, and a signature.
// 1 "impl": a -> MUL(a, a) -> m -> ADD(m, c) -> r (c constant).
// 2 "other": an unrelated subgraph called by main's WHILE-free CALL_ONCE.
Model CompositeModel() {
  ModelBuilder b;
  auto& main = b.Subgraph("main");
  auto& impl = b.Subgraph("impl");
  auto& other = b.Subgraph("other");
  TensorId x = main.Input("x", kF32, {2, 3});
  tfl::StableHLOCompositeOptionsT comp;
  comp.name = "odml.square_plus";
  comp.decomposition_subgraph_index = impl.id();
  TensorId y = main.Op(tfl::BuiltinOperator_STABLEHLO_COMPOSITE)
                   .In(x)
                   .Options(comp)
                   .Out("y", kF32, {2, 3});
  tfl::CallOnceOptionsT once;
  once.init_subgraph_index = other.id();
  main.Op(tfl::BuiltinOperator_CALL_ONCE).Options(once);
  TensorId z = main.Op(tfl::BuiltinOperator_ABS).In(y).Out("z", kF32, {2, 3});
  main.Output(z);
  TensorId a = impl.Input("a", kF32, {2, 3});
  TensorId m =
      impl.Op(tfl::BuiltinOperator_MUL).In(a, a).Out("m", kF32, {2, 3});
  TensorId c = impl.Constant<float>("c", {1}, {0.5f});
  TensorId r =
      impl.Op(tfl::BuiltinOperator_ADD).In(m, c).Out("r", kF32, {2, 3});
  impl.Output(r);
  (void)other;
  b.Signature("serving_default", {{"x", x}}, {{"z", z}});
  absl::StatusOr<Model> model = std::move(b).Build();
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

TEST(InlineCallTest, ReplacesTheCallByTheCalleesOpsMappedAsLiteRtMapsThem) {
  Model model = CompositeModel();
  const size_t tensors_before = model.subgraphs[0].tensors.size();
  absl::StatusOr<size_t> n = InlineCall(model, 0, 0, 1);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 2u);
  const Subgraph& main = model.subgraphs[0];
  ASSERT_EQ(main.ops.size(), 4u);  // MUL, ADD, CALL_ONCE, ABS
  EXPECT_EQ(OpName(model, main.ops[0]), "MUL");
  EXPECT_EQ(OpName(model, main.ops[1]), "ADD");
  EXPECT_EQ(OpName(model, main.ops[2]), "CALL_ONCE");
  // The callee's input is the caller's x.
  EXPECT_EQ(main.ops[0].inputs, (std::vector<TensorId>{0, 0}));
  // The composite's output keeps its id (ABS still reads it) and takes the
  // callee output's record.
  EXPECT_EQ(main.ops[1].outputs[0], 1);
  EXPECT_EQ(main.tensors[1].name, "r");
  EXPECT_EQ(main.ops[3].inputs[0], 1);
  // m and c are appended; c keeps its buffer.
  ASSERT_EQ(main.tensors.size(), tensors_before + 2);
  EXPECT_EQ(main.tensors[main.ops[0].outputs[0]].name, "m");
  const tfl::TensorT& c = main.tensors[main.ops[1].inputs[1]];
  EXPECT_EQ(c.name, "c");
  EXPECT_EQ(c.buffer, model.subgraphs[1].tensors[2].buffer);
  EXPECT_TRUE(VerifyModel(model).ok()) << VerifyModel(model);
}

TEST(InlineCallTest, RefusesACalleeOfAnotherShapeAndLeavesTheModelAlone) {
  Model model = CompositeModel();
  model.subgraphs[1].tensors[0].shape = {3, 2};
  absl::StatusOr<size_t> n = InlineCall(model, 0, 0, 1);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("input 0 is 'x' (FLOAT32 2x3) against "
                                      "'a' (FLOAT32 3x2)"),
            std::string::npos)
      << n.status();
  EXPECT_EQ(model.subgraphs[0].ops.size(), 3u);
}

TEST(InlineCallTest, RefusesAnOutputThatIsAnInputOfTheCallee) {
  Model model = CompositeModel();
  model.subgraphs[1].outputs = {0};  // r -> a: a pass-through
  absl::StatusOr<size_t> n = InlineCall(model, 0, 0, 1);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.status().message().find("not computed by its ops"),
            std::string::npos)
      << n.status();
}

TEST(InlineCallTest, RefusesACalleeWithVariables) {
  Model model = CompositeModel();
  model.subgraphs[1].tensors[1].is_variable = true;
  EXPECT_FALSE(InlineCall(model, 0, 0, 1).ok());
}

TEST(RemoveSubgraphsTest, RenumbersCallsAndSignatures) {
  Model model = CompositeModel();
  ASSERT_TRUE(InlineCall(model, 0, 0, 1).ok());
  ASSERT_TRUE(RemoveSubgraphs(model, {1}).ok());
  ASSERT_EQ(model.subgraphs.size(), 2u);
  EXPECT_EQ(model.subgraphs[1].name, "other");
  const auto* once =
      model.subgraphs[0].ops[2].builtin_options.AsCallOnceOptions();
  ASSERT_NE(once, nullptr);
  EXPECT_EQ(once->init_subgraph_index, 1);
  EXPECT_EQ(model.signature_defs[0].subgraph_index, 0u);
  EXPECT_TRUE(VerifyModel(model).ok()) << VerifyModel(model);
}

TEST(RemoveSubgraphsTest, RefusesASubgraphStillCalled) {
  Model model = CompositeModel();
  absl::Status st = RemoveSubgraphs(model, {1});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("op 0 of subgraph 0 calls it "
                              "(decomposition_subgraph_index)"),
            std::string::npos)
      << st;
  EXPECT_EQ(model.subgraphs.size(), 3u);
  EXPECT_FALSE(RemoveSubgraphs(model, {0}).ok());  // the signature runs it
}

}  // namespace
}  // namespace graft
