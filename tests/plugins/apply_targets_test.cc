// `graft apply --target=VENDOR[:SOC_MODEL]...`: several targets in one run,
// with the in-tree xnnpack and example plugins and, where the ai-edge-litert
// wheel and openvino are installed, Intel's LiteRT plugin with its two SoC
// models. Each output is the file a one-target apply writes, loads and
// runs on its vendor; a failing target is named and the others are
// written; bad specs are command-line errors.
#include "tools/apply_targets.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/compiled_format.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_test_util.h"

namespace graft {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::BinaryDir;
using testing::Result;
using testing::RunGraft;
using testing::SourceDir;

std::string Model() { return SourceDir() + "/test_models/residual_mlp.tflite"; }

std::string ExamplePlugin() {
  return testing::ExampleVendorDir() + "/libgraft_compiler_plugin_example.so";
}
std::string XnnpackPlugin() {
  return BinaryDir() + "/vendor_libs/libgraft_compiler_plugin_xnnpack.so";
}

// The xnnpack vendor is built only where Debian's XNNPACK is installed.
#define GRAFT_SKIP_IF_NO_XNNPACK()                                        \
  if (!std::filesystem::exists(XnnpackPlugin())) {                        \
    GTEST_SKIP() << "the xnnpack vendor is not built (no " << XnnpackPlugin() \
                 << "; install libxnnpack-dev, see tools/scripts/setup.sh)"; \
  }

// A plugin directory in `dir` holding links to the example and xnnpack
// plugins.
std::string TwoVendorPluginDir(testing::TempDir& dir) {
  const std::string plugins = dir.Join("plugins");
  std::filesystem::create_directory(plugins);
  for (const std::string& file : {ExamplePlugin(), XnnpackPlugin()}) {
    std::filesystem::create_symlink(
        file, plugins + "/" + std::filesystem::path(file).filename().string());
  }
  return plugins;
}

std::set<std::string> FilesIn(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// Runs `compiled` with the example and xnnpack dispatch libraries, every
// dispatch op required on its vendor, and checks the outputs against the
// CPU's on the same input.
void ExpectRunsOnItsVendor(const std::string& compiled) {
  SCOPED_TRACE(compiled);
  auto cpu = Runtime::Load(Model());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  RuntimeOptions options;
  options.dispatch_dirs = {testing::ExampleVendorDir(),
                           BinaryDir() + "/vendor_libs"};
  options.policy = AcceleratorPolicy::kRequireVendorOps;
  auto vendor = Runtime::Load(compiled, options);
  ASSERT_TRUE(vendor.ok()) << vendor.status();
  EXPECT_GE((*vendor)->Report().CountOps(OpReport::Where::kVendor), 1)
      << (*vendor)->Report().ToString();
  for (int i = 0; i < 16; ++i) {
    const float v = 0.125f * static_cast<float>(i) - 1.0f;
    (*cpu)->input(0)->data<float>()[i] = v;
    (*vendor)->input(0)->data<float>()[i] = v;
  }
  ASSERT_TRUE((*cpu)->Invoke().ok());
  ASSERT_TRUE((*vendor)->Invoke().ok());
  for (int i = 0; i < 16; ++i) {
    EXPECT_NEAR((*vendor)->output(0)->data<float>()[i],
                (*cpu)->output(0)->data<float>()[i], 1e-5f)
        << i;
  }
}

TEST(ApplyTargetsCliTest, SeveralTargetsWriteOneRunnableOutputEach) {
  GRAFT_SKIP_IF_NO_XNNPACK();
  testing::TempDir dir;
  const std::string plugins = TwoVendorPluginDir(dir);
  const std::string out = dir.Join("out");
  Result r = RunGraft({"apply", Model(), "--plugin-dir=" + plugins,
                       "--target=xnnpack", "--target=example:all", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
  const std::string xnnpack = "residual_mlp_xnnpack_xnnpack-cpu.compiled.tflite";
  const std::string soc1 = "residual_mlp_example_example-soc-1.compiled.tflite";
  const std::string soc2 = "residual_mlp_example_example-soc-2.compiled.tflite";
  // One file per target, no temporary left.
  EXPECT_EQ(FilesIn(out), (std::set<std::string>{xnnpack, soc1, soc2}));
  EXPECT_THAT(r.out, HasSubstr("residual_mlp.tflite, 3 targets\n"));
  EXPECT_THAT(r.out, HasSubstr("[1/3] xnnpack:xnnpack-cpu -> " + out + "/" +
                               xnnpack + "\n"));
  EXPECT_THAT(r.out, HasSubstr("[3/3] example:example-soc-2 -> "));
  EXPECT_THAT(r.out, HasSubstr("3 of 3 targets written\n"));
  const std::vector<std::pair<std::string, std::string>> expected = {
      {xnnpack, "xnnpack"}, {soc1, "example"}, {soc2, "example"}};
  for (const auto& [file, vendor] : expected) {
    auto model = LoadModel(out + "/" + file);
    ASSERT_TRUE(model.ok()) << model.status();
    auto manifest = ReadManifest(*model);
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    ASSERT_EQ(manifest->vendors.size(), 1u) << file;
    EXPECT_EQ(manifest->vendors[0].vendor, vendor);
    EXPECT_TRUE(absl::StrContains(file, manifest->vendors[0].soc_model))
        << file << " holds " << manifest->vendors[0].soc_model;
    ExpectRunsOnItsVendor(out + "/" + file);
  }
  // Each output is byte for byte what a one-target apply writes.
  const std::string single = dir.Join("single.tflite");
  Result one = RunGraft({"apply", Model(), "--plugin-dir=" + plugins,
                         "--vendor=example", "--soc-model=example-soc-1",
                         "-o", single});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(testing::ReadFile(single), testing::ReadFile(out + "/" + soc1));
  EXPECT_NE(testing::ReadFile(out + "/" + soc1),
            testing::ReadFile(out + "/" + soc2));
}

TEST(ApplyTargetsCliTest, DefaultOutputsGoBesideTheModel) {
  GRAFT_SKIP_IF_NO_XNNPACK();
  testing::TempDir dir;
  const std::string plugins = TwoVendorPluginDir(dir);
  const std::string model = dir.Join("mlp.tflite");
  std::filesystem::copy_file(Model(), model);
  Result r = RunGraft({"apply", model, "--plugin-dir=" + plugins,
                       "--target=example:example-soc-2,xnnpack"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(
      dir.Join("mlp_example_example-soc-2.compiled.tflite")));
  EXPECT_TRUE(
      std::filesystem::exists(dir.Join("mlp_xnnpack_xnnpack-cpu.compiled.tflite")));
}

TEST(ApplyTargetsCliTest, PatternNamesEachOutput) {
  testing::TempDir dir;
  const std::string plugins = TwoVendorPluginDir(dir);
  Result r = RunGraft({"apply", Model(), "--plugin-dir=" + plugins,
                       "--target=example:all", "--mode=partition", "-o",
                       dir.Join("parts/{soc_model}/{model}.{vendor}.tflite")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* soc : {"example-soc-1", "example-soc-2"}) {
    const std::string path =
        dir.Join(absl::StrCat("parts/", soc, "/residual_mlp.example.tflite"));
    auto model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status();
  }
}

TEST(ApplyTargetsCliTest, AFailingTargetIsNamedAndTheOthersAreWritten) {
  GRAFT_SKIP_IF_NO_XNNPACK();
  testing::TempDir dir;
  const std::string plugins = TwoVendorPluginDir(dir);
  const std::string out = dir.Join("out");
  Result r = RunGraft({"apply", Model(), "--plugin-dir=" + plugins,
                       "--target=example:no-such-soc,xnnpack", "--target=acme",
                       "-o", out});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("graft apply: error: target "
                               "example:no-such-soc: "));
  EXPECT_THAT(r.err, HasSubstr("unknown SoC model 'no-such-soc'"));
  EXPECT_THAT(r.err, HasSubstr("graft apply: error: target acme: no compiler "
                               "plugin for vendor 'acme'"));
  EXPECT_THAT(r.out, HasSubstr("[1/3] example:no-such-soc FAILED: "));
  EXPECT_THAT(r.out, HasSubstr("1 of 3 targets written; failed: "
                               "example:no-such-soc, acme\n"));
  // Only the target that compiled is written; nothing else, no temporary.
  EXPECT_EQ(FilesIn(out),
            (std::set<std::string>{
                "residual_mlp_xnnpack_xnnpack-cpu.compiled.tflite"}));
  ExpectRunsOnItsVendor(out + "/residual_mlp_xnnpack_xnnpack-cpu.compiled.tflite");
}

TEST(ApplyTargetsCliTest, BadTargetSpecsExitTwoNamingThem) {
  testing::TempDir dir;
  const std::string plugins = TwoVendorPluginDir(dir);
  const std::string out = dir.Join("out");
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--target=xnnpack:"}, "--target 'xnnpack:': no SoC model after ':'"},
      {{"--target=:example-soc-1"},
       "--target ':example-soc-1': no vendor before ':'"},
      {{"--target=example:a:b"}, "--target 'example:a:b': more than one ':'"},
      {{"--target=example,,xnnpack"}, "--target '': empty target"},
      {{"--target=exam ple"}, "--target 'exam ple': a vendor name holds"},
      {{"--target=example", "--target=example"},
       "--target 'example': given twice"},
      {{"--target=example:all", "--target=example:example-soc-2"},
       "--target: example:example-soc-2 is named twice (as example:all and "
       "as example:example-soc-2)"},
      {{"--target=example", "--vendor=example"},
       "does not combine with --vendor or --soc-model"},
      {{"--target=example", "--mode=noop"}, "--target needs --mode="},
      {{"--target=example", "--mode=info"}, "--target needs --mode="},
      {{"--target=example", "-o", out + "/{soc}.tflite"},
       "unknown placeholder '{soc}'"},
      {{"--target=example:all", "-o", out + "/{model}_{vendor}.tflite"},
       "targets example:example-soc-1 and example:example-soc-2 both write"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"apply", Model(),
                                     "--plugin-dir=" + plugins};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    if (std::find(c.flags.begin(), c.flags.end(), "-o") == c.flags.end()) {
      args.insert(args.end(), {"-o", out});
    }
    Result r = RunGraft(args);
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_FALSE(std::filesystem::exists(out)) << c.message;
  }
}

TEST(ApplyTargetsCliTest, JsonReportHasASectionPerTargetAndTotals) {
  GRAFT_SKIP_IF_NO_XNNPACK();
  testing::TempDir dir;
  const std::string plugins = TwoVendorPluginDir(dir);
  const std::string out = dir.Join("out");
  Result r = RunGraft({"apply", Model(), "--plugin-dir=" + plugins,
                       "--target=xnnpack,example:nope,example", "-o", out,
                       "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  if (!testing::HavePython()) GTEST_SKIP() << "python3 is needed for JSON";
  EXPECT_TRUE(testing::JsonSatisfies(r.out, R"(
      d['mode'] == 'apply' and d['model'].endswith('residual_mlp.tflite') and
      [t['target'] for t in d['targets']] ==
          ['xnnpack:xnnpack-cpu', 'example:nope', 'example:example-soc-1'] and
      [t['ok'] for t in d['targets']] == [True, False, True] and
      all(t['output'].endswith('_' + t['vendor'] + '_' + t['soc_model'] +
                               '.compiled.tflite') for t in d['targets']) and
      'unknown SoC model' in d['targets'][1]['error'] and
      'ops' not in d['targets'][1] and
      all(t['ops_total'] == 6 and t['ops_taken'] > 0 and
          len(t['ops']) == 6 and len(t['partitions']) >= 1 and
          t['plugins'][0]['vendor'] == t['vendor'] and
          t['plugins'][0]['soc_model'] == t['soc_model'] and
          t['job_seconds']['total'] >= t['job_seconds']['apply'] > 0
          for t in d['targets'] if t['ok']) and
      d['totals'] == {'targets': 3, 'written': 2, 'failed': 1,
                      'failed_targets': ['example:nope'],
                      'bytecode_bytes': d['targets'][0]['bytecode_bytes'] +
                                        d['targets'][2]['bytecode_bytes']} and
      d['job_seconds']['total'] >= d['job_seconds']['load'] > 0)"))
      << r.out;
}

// The wheel's package directory ($GRAFT_LITERT_WHEEL_DIR, else asked of
// python3); "" when absent.
std::string WheelDir() {
  if (const char* env = std::getenv("GRAFT_LITERT_WHEEL_DIR")) return env;
  std::string out;
  if (FILE* f = popen(
          "python3 -c \"import ai_edge_litert,os;"
          "print(os.path.dirname(ai_edge_litert.__file__))\" 2>/dev/null",
          "r")) {
    char buf[1024];
    while (size_t n = fread(buf, 1, sizeof(buf), f)) out.append(buf, n);
    pclose(f);
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

// Intel's LiteRT plugin lists two SoC models: IntelOpenVINO:all compiles
// one file for each, stamped with it, each what a one-target apply writes
// and each running on Intel's dispatch library.
TEST(ApplyTargetsCliTest, IntelPluginCompilesEachOfItsSocModels) {
  GRAFT_SKIP_IF_SANITIZED("Intel's OpenVINO plugin");
  const std::string wheel = WheelDir();
  const std::string plugin =
      wheel +
      "/vendors/intel_openvino/compiler/libLiteRtCompilerPlugin_IntelOpenvino.so";
  if (wheel.empty() || !std::filesystem::exists(plugin)) {
    GTEST_SKIP() << "ai-edge-litert wheel not installed (no " << plugin
                 << "); pip install ai-edge-litert==2.3.0 openvino==2026.3.1";
  }
  testing::TempDir dir;
  const std::string out = dir.Join("out");
  const std::string backend = "--plugin-option=intel_openvino_graph_backends=cpu";
  Result r = RunGraft({"apply", Model(), "--plugin=" + plugin,
                       "--target=IntelOpenVINO:all", backend, "-o", out});
  if (r.exit_code != 0 && absl::StrContains(r.err, "libopenvino")) {
    GTEST_SKIP() << "openvino not installed: " << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string ptl = out + "/residual_mlp_IntelOpenVINO_PTL.compiled.tflite";
  const std::string lnl = out + "/residual_mlp_IntelOpenVINO_LNL.compiled.tflite";
  EXPECT_EQ(FilesIn(out),
            (std::set<std::string>{std::filesystem::path(ptl).filename(),
                                   std::filesystem::path(lnl).filename()}));
  for (const auto& [path, soc] : {std::pair{ptl, "PTL"}, std::pair{lnl, "LNL"}}) {
    auto model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status();
    auto stamp = ReadLiteRtStamp(*model);
    ASSERT_TRUE(stamp.ok()) << stamp.status();
    EXPECT_EQ(stamp->soc_manufacturer, "IntelOpenVINO");
    EXPECT_EQ(stamp->soc_model, soc);
    Result run = RunGraft(
        {"run", path, "--require-vendor-ops",
         "--dispatch-dir=" + wheel + "/vendors/intel_openvino/dispatch"});
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_THAT(run.out, HasSubstr("IntelOpenVINO")) << run.out;
  }
  const std::string single = dir.Join("lnl.tflite");
  Result one = RunGraft({"apply", Model(), "--plugin=" + plugin,
                         "--soc-model=LNL", backend, "-o", single});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(testing::ReadFile(single), testing::ReadFile(lnl));
}

TEST(ApplyTargetsTest, ParsesListsAndRepeats) {
  auto t = tools::ParseTargets({"xnnpack,example:example-soc-1", "acme:all"});
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0].Name(), "xnnpack");
  EXPECT_EQ((*t)[1].vendor, "example");
  EXPECT_EQ((*t)[1].soc_model, "example-soc-1");
  EXPECT_EQ((*t)[2].soc_model, tools::kAllSocModels);
  EXPECT_FALSE(tools::ParseTargets({}).ok());
}

TEST(ApplyTargetsTest, OutputNamesAreSafeFileNames) {
  EXPECT_EQ(tools::TargetOutputPath("", "/m/net.tflite", "acme", "npu:2/x",
                                    ApplyMode::kApply),
            "/m/net_acme_npu_2_x.compiled.tflite");
  EXPECT_EQ(tools::TargetOutputPath("out", "net.tflite", "acme", "s1",
                                    ApplyMode::kCompile),
            "out/net_acme_s1.modules");
  EXPECT_EQ(tools::TargetOutputPath("o/{target}-{model}{x", "a/net.tflite",
                                    "acme", "s 1", ApplyMode::kApply),
            "o/acme_s_1-net{x");
  EXPECT_TRUE(tools::CheckOutputPattern("o/{model}/{soc_model}.tflite").ok());
  EXPECT_FALSE(tools::CheckOutputPattern("o/{model").ok());
}

}  // namespace
}  // namespace graft
