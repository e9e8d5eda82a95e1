// LiteRT compiler plugins through LoadCompilerPlugin and the apply
// pipeline: the fake plugin (litert_fake_plugin.c) and its misbehaving
// variants, and the five real plugins of the ai-edge-litert wheel, which are
// skipped, saying so, when the wheel is not installed.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/file_util.h"
#include "core/litert_format.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace graft {
namespace {

using testing::BinaryDir;
using ::testing::HasSubstr;

constexpr char kFakeFile[] = "libLiteRtCompilerPlugin_Fakeco.so";
constexpr char kFakeLabel[] =
    "Fakeco LiteRT plugin (libLiteRtCompilerPlugin_Fakeco.so)";

std::string Fake(const std::string& variant) {
  return BinaryDir() + "/tests/plugins/litert_fake/" + variant + "/" +
         kFakeFile;
}

std::unique_ptr<CompilerPlugin> LoadOrDie(
    const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& options = {}) {
  auto p = LoadCompilerPlugin(path, options);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? std::move(*p) : nullptr;
}

// x -> ADD(x, k; RELU) -> MUL(a, a) -> ABS -> ADD(b, k) -> y: the fake
// plugin takes both ADDs and the MUL; ABS splits them into two partitions.
Model AddMulAbsAdd() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  TensorId k = g.Constant<float>("k", {1, 4}, {1, 2, 3, 4});
  tfl::AddOptionsT relu;
  relu.fused_activation_function = tfl::ActivationFunctionType_RELU;
  TensorId a = g.Op(tfl::BuiltinOperator_ADD)
                   .In(x, k)
                   .Options(relu)
                   .Out("a", tfl::TensorType_FLOAT32, {1, 4});
  TensorId m = g.Op(tfl::BuiltinOperator_MUL)
                   .In(a, a)
                   .Options(tfl::MulOptionsT())
                   .Out("m", tfl::TensorType_FLOAT32, {1, 4});
  TensorId n = g.Op(tfl::BuiltinOperator_ABS)
                   .In(m)
                   .Out("n", tfl::TensorType_FLOAT32, {1, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_ADD)
                   .In(n, k)
                   .Options(tfl::AddOptionsT())
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4});
  g.Output(y);
  absl::StatusOr<Model> model = std::move(b).Build();
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

absl::StatusOr<ApplyReport> Apply(CompilerPlugin& plugin, Model& model,
                                  const std::string& soc = "") {
  CompilerPlugin* raw = &plugin;
  ApplyOptions options;
  options.soc_model = soc;
  return ApplyPlugins(model, {&raw, 1}, options);
}

TEST(LiteRtFakePluginTest, LoadsAsALiteRtPlugin) {
  auto plugin = LoadOrDie(Fake("ok"));
  ASSERT_NE(plugin, nullptr);
  const PluginInfo& info = plugin->info();
  EXPECT_EQ(info.abi, PluginInfo::Abi::kLiteRt);
  EXPECT_EQ(info.vendor, "Fakeco");
  EXPECT_EQ(info.soc_models,
            (std::vector<std::string>{"fake_soc_a", "fake_soc_b"}));
  EXPECT_EQ(
      info.hardware_kinds,
      static_cast<uint32_t>(GRAFT_HARDWARE_KIND_NPU | GRAFT_HARDWARE_KIND_CPU));
  EXPECT_EQ(info.sdk_version, "fakeco-sdk-1.2");
  EXPECT_EQ(info.plugin_version, "fakeco-sdk-1.2");
  EXPECT_EQ(info.abi_version, GRAFT_ABI_VERSION_PACK(0, 1));
  EXPECT_EQ(info.path, Fake("ok"));
  EXPECT_EQ(plugin->label(), kFakeLabel);
  // Only Intel's options are known to Graft.
  EXPECT_TRUE(info.options.empty());
}

TEST(LiteRtFakePluginTest, FindPluginFilesListsIt) {
  auto files = FindPluginFiles(BinaryDir() + "/tests/plugins/litert_fake/ok");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(*files, std::vector<std::string>{Fake("ok")});
}

TEST(LiteRtFakePluginTest, TakesTheOpsItPushesAndReportsTheRest) {
  auto plugin = LoadOrDie(Fake("ok"));
  ASSERT_NE(plugin, nullptr);
  Model model = AddMulAbsAdd();
  auto report = Apply(*plugin, model);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->ops_total, 4);
  EXPECT_EQ(report->ops_taken, 3);
  ASSERT_EQ(report->ops.size(), 4u);
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(report->ops[i].taken_by, "Fakeco") << i;
  }
  const OpApplyReport& abs = report->ops[2];
  EXPECT_EQ(abs.taken_by, "");
  ASSERT_EQ(abs.refusals.size(), 1u);
  EXPECT_EQ(abs.refusals[0].vendor, "Fakeco");
  EXPECT_THAT(abs.refusals[0].reason,
              HasSubstr("not selected by the Fakeco plugin"));
  // ABS splits the taken ops into two partitions, one module each.
  ASSERT_EQ(report->partitions.size(), 2u);
  EXPECT_EQ(report->partitions[0].ops, (std::vector<OpId>{0, 1}));
  EXPECT_EQ(report->partitions[1].ops, (std::vector<OpId>{3}));
  EXPECT_EQ(report->partitions[0].entry_point, "partition_0");
  EXPECT_EQ(report->partitions[1].entry_point, "partition_1");
  ASSERT_EQ(report->modules.size(), 2u);
  EXPECT_EQ(report->modules[0].bytes.view(),
            "fakeco bytecode v1\n"
            "soc fake_soc_a\n"
            "options partition_strategy = 0;max_partitions = 0;\n"
            "partition_0 2 ops\n"
            "  ADD RELU\n"
            "  MUL NONE\n");
  EXPECT_EQ(report->modules[1].bytes.view(),
            "fakeco bytecode v1\n"
            "soc fake_soc_a\n"
            "options partition_strategy = 0;max_partitions = 0;\n"
            "partition_1 1 ops\n"
            "  ADD NONE\n");
}

TEST(LiteRtFakePluginTest, CompilesForTheSocModelAsked) {
  auto plugin = LoadOrDie(Fake("ok"));
  ASSERT_NE(plugin, nullptr);
  Model model = AddMulAbsAdd();
  auto report = Apply(*plugin, model, "fake_soc_b");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->modules.empty());
  EXPECT_THAT(std::string(report->modules[0].bytes.view()),
              HasSubstr("soc fake_soc_b\n"));
  auto stamp = ReadLiteRtStamp(model);
  ASSERT_TRUE(stamp.ok()) << stamp.status();
  EXPECT_EQ(stamp->soc_model, "fake_soc_b");
}

TEST(LiteRtFakePluginTest, RefusesAnUnknownSocModelListingItsOwn) {
  auto plugin = LoadOrDie(Fake("ok"));
  ASSERT_NE(plugin, nullptr);
  Model model = AddMulAbsAdd();
  auto report = Apply(*plugin, model, "fake_soc_z");
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("'fake_soc_z'; it supports: fake_soc_a, fake_soc_b"));
}

// The output is in LiteRT's compiled format: DISPATCH_OPs whose
// bytecode_offset, once saved, points at the module's bytes in the file,
// and the LiteRtStamp.
TEST(LiteRtFakePluginTest, WritesLiteRtsFormatWithFileOffsets) {
  auto plugin = LoadOrDie(Fake("ok"));
  ASSERT_NE(plugin, nullptr);
  Model model = AddMulAbsAdd();
  auto report = Apply(*plugin, model);
  ASSERT_TRUE(report.ok()) << report.status();
  testing::TempDir dir;
  const std::string path = dir.Join("fake_compiled.tflite");
  ASSERT_TRUE(SaveModel(model, path).ok());
  auto file = ReadFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto loaded = LoadModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();

  auto stamp = ReadLiteRtStamp(*loaded);
  ASSERT_TRUE(stamp.ok()) << stamp.status();
  EXPECT_EQ(stamp->soc_manufacturer, "Fakeco");
  EXPECT_EQ(stamp->soc_model, "fake_soc_a");

  const Subgraph& main = loaded->subgraphs[0];
  std::vector<std::string> names;
  for (const tfl::OperatorT& op : main.ops) {
    if (!IsLiteRtDispatchOp(*loaded, op)) continue;
    auto options = DecodeLiteRtDispatchOpOptions(op.custom_options);
    ASSERT_TRUE(options.ok()) << options.status();
    names.push_back(options->name);
    ASSERT_GT(options->bytecode_offset, 0u);
    ASSERT_LE(options->bytecode_offset + options->bytecode_size, file->size());
    const std::string bytes =
        file->substr(options->bytecode_offset, options->bytecode_size);
    EXPECT_TRUE(absl::StartsWith(bytes, "fakeco bytecode v1\n")) << bytes;
    EXPECT_THAT(bytes, HasSubstr(options->name + " ")) << bytes;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"partition_0", "partition_1"}));
  // ABS stays a CPU op between the two dispatch ops.
  ASSERT_EQ(main.ops.size(), 3u);
  EXPECT_FALSE(IsLiteRtDispatchOp(*loaded, main.ops[1]));
}

TEST(LiteRtFakePluginTest, OptionsOfOtherNamespacesAreNotItsOwn) {
  // Intel's and Graft-ABI plugins' options do not reach the Fakeco plugin.
  auto plugin = LoadOrDie(
      Fake("ok"), {{"intel_openvino_graph_backends", "cpu"}, {"groups", "2"}});
  EXPECT_NE(plugin, nullptr);
}

TEST(LiteRtFakePluginTest, ModelWithNothingItTakesIsLeftAsIs) {
  auto plugin = LoadOrDie(Fake("ok"));
  ASSERT_NE(plugin, nullptr);
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {4});
  g.Output(g.Op(tfl::BuiltinOperator_ABS)
               .In(x)
               .Out("y", tfl::TensorType_FLOAT32, {4}));
  auto model = std::move(b).Build();
  ASSERT_TRUE(model.ok());
  auto report = Apply(*plugin, *model);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->ops_taken, 0);
  EXPECT_TRUE(report->modules.empty());
  EXPECT_FALSE(ReadLiteRtStamp(*model).ok());
}

TEST(LiteRtFakePluginTest, RefusesAnotherApiVersionNamingTheFile) {
  auto p = LoadCompilerPlugin(Fake("api1"));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr(Fake("api1")));
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("built for LiteRT API 1.0.0"));
}

TEST(LiteRtFakePluginTest, RefusesAMissingCompileNamingIt) {
  auto p = LoadCompilerPlugin(Fake("nocompile"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr(Fake("nocompile")));
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("missing required function(s) "
                        "LiteRtCompilerPluginCompile"));
}

TEST(LiteRtFakePluginTest, NoisySocModelIsRefusedShownSanitized) {
  auto p = LoadCompilerPlugin(Fake("noisysoc"));
  ASSERT_FALSE(p.ok());
  const std::string msg(p.status().message());
  EXPECT_THAT(msg, HasSubstr(absl::StrCat(
                       kFakeLabel, ": SoC model 0 'fake\\x1b[31m_soc\\n' is "
                                   "not a printable name")));
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(LiteRtPluginLoadTest, DlopenErrorIsShownSanitized) {
  // A plugin file whose name holds a terminal escape and whose bytes are
  // no ELF: the loader's message quotes the name; Graft shows it escaped.
  testing::TempDir dir;
  const std::string path =
      dir.Join("libLiteRtCompilerPlugin_Evil\x1b[2J\n.so");
  const absl::Span<const uint8_t> junk[] = {
      {reinterpret_cast<const uint8_t*>("not an ELF file"), 15}};
  ASSERT_TRUE(WriteFileAtomically(path, junk).ok());
  auto p = LoadCompilerPlugin(path);
  ASSERT_FALSE(p.ok());
  const std::string msg(p.status().message());
  EXPECT_THAT(msg, HasSubstr("cannot load shared library"));
  EXPECT_THAT(msg, HasSubstr("libLiteRtCompilerPlugin_Evil\\x1b[2J\\n.so"));
  EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(LiteRtFakePluginTest, CreateFailingIsAnErrorNamingThePlugin) {
  auto p = LoadCompilerPlugin(Fake("createfails"));
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr(absl::StrCat(kFakeLabel,
                                     ": create failed: "
                                     "kLiteRtStatusErrorRuntime"
                                     "Failure (3)")));
}

TEST(LiteRtFakePluginTest, IncompatibleSocIsAnErrorNamingThePlugin) {
  auto plugin = LoadOrDie(Fake("incompatible"));
  ASSERT_NE(plugin, nullptr);
  Model model = AddMulAbsAdd();
  auto report = Apply(*plugin, model);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr(absl::StrCat(
                  kFakeLabel,
                  ": compatibility check for SoC model 'fake_soc_a' failed: "
                  "kLiteRtStatusErrorUnsupportedCompilerVersion")));
}

struct Malformed {
  const char* variant;
  const char* expected;
};

class LiteRtMisbehavingPluginTest : public ::testing::TestWithParam<Malformed> {
};

TEST_P(LiteRtMisbehavingPluginTest, ApplyFailsNamingThePlugin) {
  auto plugin = LoadOrDie(Fake(GetParam().variant));
  ASSERT_NE(plugin, nullptr);
  Model model = AddMulAbsAdd();
  auto report = Apply(*plugin, model);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()), HasSubstr(kFakeLabel));
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Variants, LiteRtMisbehavingPluginTest,
    ::testing::Values(
        Malformed{"badcallcount",
                  "compile returned a malformed result: 3 calls for 2 "
                  "partitions"},
        Malformed{"badmoduleindex",
                  "compile returned a malformed result: the call for "
                  "partition 0 names module 7 of 2"},
        Malformed{"pushforeign",
                  "partition of subgraph 0 ('main'): pushed an op handle that "
                  "is not an op of the subgraph being partitioned"}),
    [](const auto& info) { return std::string(info.param.variant); });

TEST(LiteRtPluginLoadTest, AFileOfNeitherAbiIsRefusedNamingBoth) {
  auto p = LoadCompilerPlugin("libm.so.6");
  ASSERT_FALSE(p.ok());
  const std::string msg(p.status().message());
  EXPECT_THAT(msg, HasSubstr("libm.so.6: not a compiler plugin"));
  EXPECT_THAT(msg, HasSubstr("graft_compiler_plugin_abi_version"));
  EXPECT_THAT(msg, HasSubstr("LiteRtCreateCompilerPlugin"));
}

// The real plugins of the ai-edge-litert 2.3.0 wheel
// (../shared/litert/FACTS.md): which load on a machine without vendor SDKs,
// and that those that cannot load, or cannot partition, say why and name
// themselves.

// The wheel's package directory: $GRAFT_LITERT_WHEEL_DIR, else asked of
// python3; "" when absent.
const std::string& WheelDir() {
  static const std::string* dir = [] {
    if (const char* env = std::getenv("GRAFT_LITERT_WHEEL_DIR")) {
      return new std::string(env);
    }
    std::string out;
    if (FILE* f = popen(
            "python3 -c \"import ai_edge_litert,os;"
            "print(os.path.dirname(ai_edge_litert.__file__))\" 2>/dev/null",
            "r")) {
      char buf[1024];
      while (size_t n = fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
      pclose(f);
    }
    return new std::string(absl::StripAsciiWhitespace(out));
  }();
  return *dir;
}

// The path of the wheel's plugin for `vendor`, or skips the test.
#define GRAFT_REAL_PLUGIN_OR_SKIP(var, vendor, file)                         \
  const std::string var = WheelDir() + "/vendors/" vendor "/compiler/" file; \
  if (WheelDir().empty() || !std::filesystem::exists(var)) {                 \
    GTEST_SKIP() << "ai-edge-litert wheel not installed (no " << var         \
                 << "); pip install ai-edge-litert==2.3.0 to run this";      \
  }

// One ADD, which every plugin would take.
Model OneAdd() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 8});
  TensorId y = g.Input("y", tfl::TensorType_FLOAT32, {1, 8});
  g.Output(g.Op(tfl::BuiltinOperator_ADD)
               .In(x, y)
               .Options(tfl::AddOptionsT())
               .Out("z", tfl::TensorType_FLOAT32, {1, 8}));
  return *std::move(b).Build();
}

TEST(LiteRtRealPluginTest, IntelLoadsWithItsSocModels) {
  GRAFT_REAL_PLUGIN_OR_SKIP(path, "intel_openvino",
                            "libLiteRtCompilerPlugin_IntelOpenvino.so");
  auto plugin = LoadCompilerPlugin(path);
  if (!plugin.ok() &&
      absl::StrContains(plugin.status().message(), "libopenvino")) {
    GTEST_SKIP() << "openvino not installed: " << plugin.status();
  }
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  const PluginInfo& info = (*plugin)->info();
  EXPECT_EQ(info.abi, PluginInfo::Abi::kLiteRt);
  EXPECT_EQ(info.vendor, "IntelOpenVINO");
  EXPECT_EQ(info.soc_models, (std::vector<std::string>{"PTL", "LNL"}));
  EXPECT_EQ(info.options.size(), 5u);
}

TEST(LiteRtRealPluginTest, MediaTekLoadsButCannotPartitionWithoutNeuroPilot) {
  GRAFT_SKIP_IF_SANITIZED("MediaTek's plugin (partition)");
  GRAFT_REAL_PLUGIN_OR_SKIP(path, "mediatek",
                            "libLiteRtCompilerPlugin_MediaTek.so");
  auto plugin = LoadCompilerPlugin(path);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  const PluginInfo& info = (*plugin)->info();
  EXPECT_EQ(info.vendor, "MediaTek");
  ASSERT_EQ(info.soc_models.size(), 16u);
  EXPECT_EQ(info.soc_models.front(), "mt6853");
  EXPECT_EQ(info.soc_models.back(), "mt8189");
  Model model = OneAdd();
  auto report = Apply(**plugin, model);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("MediaTek LiteRT plugin "
                        "(libLiteRtCompilerPlugin_MediaTek.so): partition"));
  // It cannot load NeuroPilot's libneuron_adapter.
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("kLiteRtStatusErrorDynamicLoading"));
}

TEST(LiteRtRealPluginTest, GoogleTensorLoadsButCannotCompileWithoutItsSdk) {
  GRAFT_REAL_PLUGIN_OR_SKIP(path, "google_tensor",
                            "libLiteRtCompilerPlugin_google_tensor.so");
  auto plugin = LoadCompilerPlugin(path);
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  const PluginInfo& info = (*plugin)->info();
  EXPECT_EQ(info.vendor, "Google");
  EXPECT_EQ(info.soc_models,
            (std::vector<std::string>{"Tensor_G3", "Tensor_G4", "Tensor_G5",
                                      "Tensor_G6"}));
  Model model = OneAdd();
  auto report = Apply(**plugin, model);
  ASSERT_FALSE(report.ok());
  EXPECT_THAT(std::string(report.status().message()),
              HasSubstr("Google LiteRT plugin "
                        "(libLiteRtCompilerPlugin_google_tensor.so)"));
}

TEST(LiteRtRealPluginTest, QualcommCannotLoadWithoutQairt) {
  GRAFT_REAL_PLUGIN_OR_SKIP(path, "qualcomm",
                            "libLiteRtCompilerPlugin_Qualcomm.so");
  auto plugin = LoadCompilerPlugin(path);
  ASSERT_FALSE(plugin.ok());
  const std::string msg(plugin.status().message());
  EXPECT_THAT(msg, HasSubstr("libLiteRtCompilerPlugin_Qualcomm.so"));
  EXPECT_THAT(msg, HasSubstr("libQnnHtp.so"));
}

TEST(LiteRtRealPluginTest, SamsungCannotLoadNamingTheUndefinedSymbol) {
  GRAFT_REAL_PLUGIN_OR_SKIP(path, "samsung",
                            "libLiteRtCompilerPlugin_Samsung.so");
  auto plugin = LoadCompilerPlugin(path);
  ASSERT_FALSE(plugin.ok());
  const std::string msg(plugin.status().message());
  EXPECT_THAT(msg, HasSubstr("libLiteRtCompilerPlugin_Samsung.so"));
  EXPECT_THAT(msg, HasSubstr("undefined symbol: "
                             "_ZN11flatbuffers13ClassicLocale9instance_E"));
}

}  // namespace
}  // namespace graft
