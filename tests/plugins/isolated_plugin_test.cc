// IsolatePlugin (plugins/isolated_plugin.h) with a plugin that crashes,
// aborts, exits or hangs in partition or compile: each is an error naming
// the vendor, the call and the signal or time-out, Graft goes on, and
// `graft apply` leaves no output file. A well-behaved plugin gives the same
// compiled model isolated as in process.
#include "plugins/isolated_plugin.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "gtest/gtest.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace graft {
namespace {

std::string Misbehaving() {
  return testing::BinaryDir() +
         "/tests/plugins/misbehaving/ok/"
         "libgraft_compiler_plugin_misbehaving.so";
}

// x -> RELU -> RELU -> y
Model TwoRelus() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId t = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  for (int i = 0; i < 2; ++i) {
    t = g.Op(tfl::BuiltinOperator_RELU)
            .In(t)
            .Out(absl::StrCat("t", i), tfl::TensorType_FLOAT32, {1, 4});
  }
  g.Output(t);
  return *std::move(b).Build();
}

absl::StatusOr<ApplyReport> ApplyIsolated(const std::string& misbehave,
                                          Model& model) {
  auto loaded = LoadCompilerPlugin(Misbehaving(), {{"misbehave", misbehave}});
  if (!loaded.ok()) return loaded.status();
  IsolationLimits limits;
  limits.partition = absl::Seconds(1);
  limits.compile = absl::Seconds(1);
  std::unique_ptr<CompilerPlugin> plugin =
      IsolatePlugin(*std::move(loaded), limits);
  CompilerPlugin* raw = plugin.get();
  return ApplyPlugins(model, {&raw, 1}, {});
}

struct Fault {
  const char* option;
  const char* call;
  const char* how;
};

class IsolatedPluginTest : public ::testing::TestWithParam<Fault> {};

TEST_P(IsolatedPluginTest, FaultIsAnErrorNamingVendorCallAndCause) {
  Model model = TwoRelus();
  absl::StatusOr<ApplyReport> report = ApplyIsolated(GetParam().option, model);
  ASSERT_FALSE(report.ok());
  const std::string msg(report.status().message());
  EXPECT_NE(msg.find("misbehaving plugin"), std::string::npos) << msg;
  EXPECT_NE(msg.find(GetParam().call), std::string::npos) << msg;
  EXPECT_NE(msg.find(GetParam().how), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Faults, IsolatedPluginTest,
    ::testing::Values(
        // Under ASan the SIGSEGV handler aborts: "SIG" covers both.
        Fault{"crash_partition", "partition of subgraph 0", "crashed with SIG"},
        Fault{"hang_partition", "partition of subgraph 0",
              "still running after 1s"},
        Fault{"abort_compile", "compile of 1 partition(s)",
              "crashed with SIGABRT"},
        Fault{"exit_compile", "compile of 1 partition(s)",
              "exited with status 0 before answering"}),
    [](const auto& info) { return std::string(info.param.option); });

TEST(IsolatedPluginTest, SameModelAsInProcess) {
  Model isolated = TwoRelus();
  ASSERT_TRUE(ApplyIsolated("none", isolated).ok());
  auto plugin = LoadCompilerPlugin(Misbehaving(), {{"misbehave", "none"}});
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  CompilerPlugin* raw = plugin->get();
  Model in_process = TwoRelus();
  ASSERT_TRUE(ApplyPlugins(in_process, {&raw, 1}, {}).ok());
  auto a = SerializeModel(isolated);
  auto b = SerializeModel(in_process);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(IsolatedPluginTest, GraftApplyLeavesNoOutputAfterACrash) {
  testing::TempDir dir;
  const std::string model = dir.Join("m.tflite");
  const std::string out = dir.Join("out.tflite");
  ASSERT_TRUE(SaveModel(TwoRelus(), model).ok());
  const std::string cmd = absl::StrCat(
      testing::BinaryDir(), "/graft apply ", model, " --plugin=", Misbehaving(),
      " --plugin-option=misbehave=abort_compile -o ", out, " 2>",
      dir.Join("err.txt"));
  const int rc = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << rc;
  EXPECT_FALSE(std::filesystem::exists(out));
  auto err = ReadFile(dir.Join("err.txt"));
  ASSERT_TRUE(err.ok());
  EXPECT_NE(err->find("compile of 1 partition(s): crashed with SIGABRT"),
            std::string::npos)
      << *err;
}

TEST(IsolatedPluginTest, CrashInDestroyIsAnErrorOfClose) {
  auto loaded = LoadCompilerPlugin(Misbehaving(), {{"misbehave", "crash_destroy"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::unique_ptr<CompilerPlugin> plugin = IsolatePlugin(*std::move(loaded));
  Model model = TwoRelus();
  CompilerPlugin* raw = plugin.get();
  ASSERT_TRUE(ApplyPlugins(model, {&raw, 1}, {}).ok());
  const absl::Status closed = plugin->Close();
  ASSERT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find("misbehaving plugin"), std::string::npos)
      << closed;
  EXPECT_NE(closed.message().find("destroy: crashed with SIG"),
            std::string::npos)
      << closed;
  EXPECT_TRUE(plugin->Close().ok());  // once only; the destructor does nothing
}

TEST(IsolatedPluginTest, CrashInDestroyWithoutCloseOnlyWarns) {
  auto loaded = LoadCompilerPlugin(Misbehaving(), {{"misbehave", "crash_destroy"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::unique_ptr<CompilerPlugin> plugin = IsolatePlugin(*std::move(loaded));
  plugin.reset();  // this process goes on
  SUCCEED();
}

TEST(IsolatedPluginTest, GraftApplyLeavesNoOutputAfterACrashInDestroy) {
  testing::TempDir dir;
  const std::string model = dir.Join("m.tflite");
  const std::string out = dir.Join("out.tflite");
  ASSERT_TRUE(SaveModel(TwoRelus(), model).ok());
  const std::string cmd = absl::StrCat(
      testing::BinaryDir(), "/graft apply ", model, " --plugin=", Misbehaving(),
      " --plugin-option=misbehave=crash_destroy -o ", out, " 2>",
      dir.Join("err.txt"));
  const int rc = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 1) << rc;
  EXPECT_FALSE(std::filesystem::exists(out));
  auto err = ReadFile(dir.Join("err.txt"));
  ASSERT_TRUE(err.ok());
  EXPECT_NE(err->find("destroy: crashed with SIG"), std::string::npos) << *err;
}

}  // namespace
}  // namespace graft
