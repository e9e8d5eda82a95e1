// Composites through the apply pipeline (plugins/apply.h): a composite no
// plugin takes is inlined so its ops join their neighbours' partition, an
// odml.cpu_call composite is neither taken nor inlined, and both models still
// compute what the original computes.
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "core/test_support.h"
#include "dispatch/runtime.h"
#include "gtest/gtest.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace graft {
namespace {

constexpr auto kF32 = tfl::TensorType_FLOAT32;

// main: x -> ADD(x, c) -> a -> COMPOSITE(name) -> y
// decomposition: p -> MUL(p, p) -> q -> ADD(q, d) -> r
Model CompositeModel(const std::string& name) {
  ModelBuilder b;
  auto& main = b.Subgraph("main");
  auto& impl = b.Subgraph("impl");
  TensorId x = main.Input("x", kF32, {1, 4});
  TensorId c = main.Constant<float>("c", {4}, {0.5f, -1.0f, 2.0f, 0.0f});
  TensorId a = main.Op(tfl::BuiltinOperator_ADD)
                   .In(x, c)
                   .Options(tfl::AddOptionsT{})
                   .Out("a", kF32, {1, 4});
  tfl::StableHLOCompositeOptionsT comp;
  comp.name = name;
  comp.decomposition_subgraph_index = impl.id();
  TensorId y = main.Op(tfl::BuiltinOperator_STABLEHLO_COMPOSITE)
                   .In(a)
                   .Options(comp)
                   .Out("y", kF32, {1, 4});
  main.Output(y);
  TensorId p = impl.Input("p", kF32, {1, 4});
  TensorId q = impl.Op(tfl::BuiltinOperator_MUL)
                   .In(p, p)
                   .Options(tfl::MulOptionsT{})
                   .Out("q", kF32, {1, 4});
  TensorId d = impl.Constant<float>("d", {1}, {3.0f});
  TensorId r = impl.Op(tfl::BuiltinOperator_ADD)
                   .In(q, d)
                   .Options(tfl::AddOptionsT{})
                   .Out("r", kF32, {1, 4});
  impl.Output(r);
  b.Signature("serving_default", {{"x", x}}, {{"y", y}});
  absl::StatusOr<Model> m = std::move(b).Build();
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

std::vector<float> RunOnCpu(Model model) {
  auto rt = Runtime::LoadModel(std::move(model));
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  const std::vector<float> x = {1.0f, 2.0f, -3.0f, 0.25f};
  std::copy(x.begin(), x.end(), (*rt)->input(0)->data<float>());
  EXPECT_TRUE((*rt)->Invoke().ok());
  const float* y = (*rt)->output(0)->data<float>();
  return std::vector<float>(y, y + 4);
}

class ApplyCompositeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = LoadCompilerPlugin(testing::ExampleVendorDir() +
                                "/libgraft_compiler_plugin_example.so");
    ASSERT_TRUE(p.ok()) << p.status();
    plugin_ = std::move(*p);
  }
  absl::StatusOr<ApplyReport> Apply(Model& model) {
    CompilerPlugin* raw = plugin_.get();
    ApplyOptions options;
    options.mode = ApplyMode::kApply;
    return ApplyPlugins(model, {&raw, 1}, options);
  }
  std::unique_ptr<CompilerPlugin> plugin_;
};

TEST_F(ApplyCompositeTest, CompositeNobodyTakesIsInlinedIntoOnePartition) {
  Model model = CompositeModel("odml.square_plus");
  const std::vector<float> expected = RunOnCpu(CompositeModel("odml.x"));
  absl::StatusOr<ApplyReport> report = Apply(model);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->inlined_composites,
            std::vector<std::string>{"odml.square_plus"});
  EXPECT_NE(report->Summary().find("inlined 1 composite op no plugin took"),
            std::string::npos)
      << report->Summary();
  // ADD, MUL, ADD in one partition; the decomposition subgraph is gone.
  ASSERT_EQ(report->partitions.size(), 1u);
  EXPECT_EQ(report->partitions[0].ops.size(), 3u);
  EXPECT_EQ(report->ops_taken, 3);
  ASSERT_EQ(model.subgraphs.size(), 2u);  // main and the partition
  EXPECT_EQ(model.subgraphs[0].ops.size(), 1u);
  EXPECT_EQ(RunOnCpu(std::move(model)), expected);
}

TEST_F(ApplyCompositeTest, CpuCallCompositeIsNeitherTakenNorInlined) {
  Model model = CompositeModel("odml.cpu_call");
  const std::vector<float> expected = RunOnCpu(CompositeModel("odml.x"));
  absl::StatusOr<ApplyReport> report = Apply(model);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->inlined_composites.empty());
  // Only main's ADD is offered and taken; the decomposition is not offered
  // on its own and stays, called by the composite.
  ASSERT_EQ(report->partitions.size(), 1u);
  EXPECT_EQ(report->partitions[0].ops.size(), 1u);
  ASSERT_EQ(model.subgraphs.size(), 3u);
  EXPECT_EQ(model.subgraphs[1].name, "impl");
  bool reported = false;
  for (const OpApplyReport& op : report->ops) {
    if (op.subgraph == 1) {
      ASSERT_FALSE(op.refusals.empty());
      EXPECT_NE(op.refusals[0].reason.find("composite's decomposition"),
                std::string::npos);
      reported = true;
    }
  }
  EXPECT_TRUE(reported);
  EXPECT_EQ(RunOnCpu(std::move(model)), expected);
}

}  // namespace
}  // namespace graft
