// ApplyOptions::cpu_fallback (graft apply --cpu-fallback=false): the
// compiled model keeps only the bytecode, runs on the vendor as the model
// with a fallback does, and refuses to load, saying why, without the
// vendor's dispatch library.
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/status.h"
#include "core/test_support.h"
#include "dispatch/runtime.h"
#include "gtest/gtest.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace graft {
namespace {

constexpr auto kF32 = tfl::TensorType_FLOAT32;

// x -> ADD(x, w) -> MUL(., w) -> y, with a 64 KiB constant w.
Model TwoOps() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", kF32, {1, 16384});
  std::vector<float> weights(16384);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.001f * i;
  TensorId w = g.Constant<float>("w", {16384}, weights);
  TensorId a = g.Op(tfl::BuiltinOperator_ADD)
                   .In(x, w)
                   .Options(tfl::AddOptionsT{})
                   .Out("a", kF32, {1, 16384});
  TensorId y = g.Op(tfl::BuiltinOperator_MUL)
                   .In(a, w)
                   .Options(tfl::MulOptionsT{})
                   .Out("y", kF32, {1, 16384});
  g.Output(y);
  b.Signature("serving_default", {{"x", x}}, {{"y", y}});
  absl::StatusOr<Model> m = std::move(b).Build();
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

absl::StatusOr<std::vector<uint8_t>> Compile(bool cpu_fallback) {
  GRAFT_ASSIGN_OR_RETURN(
      std::unique_ptr<CompilerPlugin> plugin,
      LoadCompilerPlugin(testing::ExampleVendorDir() +
                         "/libgraft_compiler_plugin_example.so"));
  Model model = TwoOps();
  CompilerPlugin* raw = plugin.get();
  ApplyOptions options;
  options.cpu_fallback = cpu_fallback;
  GRAFT_ASSIGN_OR_RETURN(ApplyReport report,
                         ApplyPlugins(model, {&raw, 1}, options));
  if (report.partitions.size() != 1) {
    return absl::InternalError("expected one partition");
  }
  return SerializeModel(model);
}

std::vector<float> RunModel(const std::string& path, RuntimeOptions options) {
  auto rt = Runtime::Load(path, options);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  float* x = (*rt)->input(0)->data<float>();
  for (int i = 0; i < 16384; ++i) x[i] = 0.5f - 0.0001f * i;
  EXPECT_TRUE((*rt)->Invoke().ok());
  const float* y = (*rt)->output(0)->data<float>();
  return std::vector<float>(y, y + 16384);
}

TEST(ApplyFallbackTest, WithoutFallbackTheFileHoldsOnlyTheBytecode) {
  absl::StatusOr<std::vector<uint8_t>> with = Compile(true);
  absl::StatusOr<std::vector<uint8_t>> without = Compile(false);
  ASSERT_TRUE(with.ok()) << with.status();
  ASSERT_TRUE(without.ok()) << without.status();
  // The 64 KiB of weights went with the fallback subgraph.
  EXPECT_LT(without->size() + 60 * 1024, with->size());
  absl::StatusOr<Model> m =
      LoadModelFromBytes(Bytes::Own(std::vector<uint8_t>(*without)), "without");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->subgraphs.size(), 1u);

  testing::TempDir dir;
  const std::string with_path = dir.Join("with.tflite");
  const std::string without_path = dir.Join("without.tflite");
  ASSERT_TRUE(WriteFileAtomically(with_path, {*with}).ok());
  ASSERT_TRUE(WriteFileAtomically(without_path, {*without}).ok());
  RuntimeOptions on_vendor;
  on_vendor.dispatch_dirs = {testing::ExampleVendorDir()};
  on_vendor.policy = AcceleratorPolicy::kRequireVendorOps;
  EXPECT_EQ(RunModel(without_path, on_vendor), RunModel(with_path, on_vendor));

  RuntimeOptions no_vendor;
  no_vendor.dispatch_dirs = {dir.path()};
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::Load(without_path, no_vendor);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("example"), std::string::npos)
      << rt.status();
}

}  // namespace
}  // namespace graft
