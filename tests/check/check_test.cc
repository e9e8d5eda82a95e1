// `graft check` as a vendor runs it: it passes on the example and xnnpack
// vendors and on the "broken" vendor built correctly, and names each fault
// of the broken builds (broken_plugin.c, broken_dispatch.c) with a failed
// check and a reproduction command, exiting 1.
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/test_support.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::BinaryDir;

struct Result {
  int exit_code = -1;
  std::string output;
};

// Runs `graft check ARGS` (stdout and stderr together).
Result Check(const std::string& args) {
  const std::string cmd = BinaryDir() + "/graft check " + args + " 2>&1";
  Result r;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), f)) r.output.append(buf, n);
  const int status = pclose(f);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The report line of check `id`, which starts with its outcome.
bool Reports(const Result& r, const std::string& outcome,
             const std::string& id) {
  return r.output.find(absl::StrCat(outcome, "  ", id, " ")) !=
         std::string::npos;
}

std::string Broken(const std::string& kind, const std::string& variant) {
  const std::string file = kind == "plugin"
                               ? "libgraft_compiler_plugin_broken.so"
                               : "libgraft_dispatch_broken.so";
  return absl::StrCat(BinaryDir(), "/tests/check/broken/", kind, "_", variant,
                      "/", file);
}

std::string BrokenPair(const std::string& plugin,
                       const std::string& dispatch = "ok") {
  return absl::StrCat("--plugin=", Broken("plugin", plugin),
                      " --dispatch=", Broken("dispatch", dispatch));
}

// A fixed seed: the suite is reproducible; `graft check` prints it anyway.
constexpr char kSeed[] = " --seed=20261126";

TEST(CheckTest, PassesOnTheExampleVendor) {
  const std::string dir = testing::ExampleVendorDir();
  Result r = Check(absl::StrCat(
      "--plugin=", dir, "/libgraft_compiler_plugin_example.so --dispatch=", dir,
      "/libgraft_dispatch_example.so --draws=2", kSeed));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
  for (const char* id :
       {"abi.plugin.exports", "abi.plugin.needed", "abi.plugin.version",
        "abi.plugin.load", "abi.plugin.destroy", "abi.dispatch.exports",
        "abi.dispatch.load", "identity.plugin", "identity.stamp",
        "identity.dispatch", "promise.models", "promise.ops", "determinism",
        "misuse.plugin", "misuse.dispatch", "dispatch.bytecode",
        "dispatch.buffers", "dispatch.threads"}) {
    EXPECT_TRUE(Reports(r, "pass", id)) << id << "\n" << r.output;
  }
  // It took ops (so the promise was tested, not vacuous).
  EXPECT_EQ(r.output.find("the plugin took 0"), std::string::npos);
  EXPECT_NE(r.output.find("FULLY_CONNECTED"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("not compared"), std::string::npos) << r.output;
}

#ifdef GRAFT_CHECK_HAVE_XNNPACK
TEST(CheckTest, PassesOnXnnpack) {
  const std::string dir = BinaryDir() + "/vendor_libs";
  Result r = Check(absl::StrCat(
      "--plugin=", dir, "/libgraft_compiler_plugin_xnnpack.so --dispatch=", dir,
      "/libgraft_dispatch_xnnpack.so --draws=1", kSeed));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "promise.ops")) << r.output;
  EXPECT_NE(r.output.find("CONV_2D/int8"), std::string::npos) << r.output;
  // Every model it took was compared with Graft's CPU kernels.
  EXPECT_EQ(r.output.find("not compared"), std::string::npos) << r.output;
}
#endif

TEST(CheckTest, PassesOnTheBrokenVendorBuiltCorrectly) {
  Result r = Check(BrokenPair("ok") + " --ops=ADD --draws=4" + kSeed);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "promise.models")) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "dispatch.bytecode")) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "dispatch.threads")) << r.output;
}

TEST(CheckTest, NamesACrashInPartition) {
  Result r = Check(BrokenPair("crash_partition") + " --ops=ADD" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "promise.models")) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "promise.ops")) << r.output;
  // The crash (under ASan its SIGSEGV handler ends the child instead).
  EXPECT_TRUE(r.output.find("crashed with SIG") != std::string::npos ||
              r.output.find("before answering") != std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("reproduce: graft check --plugin="),
            std::string::npos)
      << r.output;
  // The ABI itself is fine, and graft check lived to say so.
  EXPECT_TRUE(Reports(r, "pass", "abi.plugin.load")) << r.output;
}

TEST(CheckTest, NamesANondeterministicCompile) {
  Result r = Check(BrokenPair("nondeterministic") + " --ops=ADD" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "determinism")) << r.output;
  EXPECT_NE(r.output.find("first differ at byte"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--only=determinism --seed=20261126"),
            std::string::npos)
      << r.output;
}

TEST(CheckTest, NamesAStampWithMissingFields) {
  Result r = Check(BrokenPair("stamp") + " --ops=ADD" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "identity.stamp")) << r.output;
  EXPECT_NE(r.output.find("stamp's abi_version is 0.0 (unset)"),
            std::string::npos)
      << r.output;
}

TEST(CheckTest, NamesAnOpThePluginTakesButCannotCompile) {
  Result r = Check(BrokenPair("claims_mul") +
                   " --only=promise.ops --ops=MUL --draws=60" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "promise.ops")) << r.output;
  EXPECT_NE(r.output.find("cannot compile MUL"), std::string::npos) << r.output;
  // The reproduction names the op and the draw's own seed.
  EXPECT_NE(r.output.find("--only=promise.ops --ops=MUL --seed="),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--draws=1"), std::string::npos) << r.output;
}

TEST(CheckTest, NamesAWrongAbiVersion) {
  Result r = Check(BrokenPair("abi2") + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "abi.plugin.version")) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "abi.plugin.load")) << r.output;
  EXPECT_NE(r.output.find("built for Graft ABI 2.0"), std::string::npos)
      << r.output;
  EXPECT_TRUE(Reports(r, "skip", "promise.ops")) << r.output;
}

TEST(CheckTest, NamesACrashOnANullArgument) {
  Result r = Check(BrokenPair("null_crash") + " --only=misuse" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "misuse.plugin")) << r.output;
  EXPECT_NE(r.output.find("get_info(plugin=NULL)"), std::string::npos)
      << r.output;
  EXPECT_TRUE(Reports(r, "pass", "misuse.dispatch")) << r.output;
}

TEST(CheckTest, NamesACrashInDestroyAndStillReports) {
  Result r = Check(BrokenPair("crash_destroy") + " --ops=ADD" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "abi.plugin.destroy")) << r.output;
  EXPECT_NE(r.output.find("plugin: destroy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" failed, "), std::string::npos) << r.output;
}

TEST(CheckTest, NamesADispatchLibraryThatCrashesOnTruncatedBytecode) {
  Result r = Check(BrokenPair("ok", "truncated_crash") + " --ops=ADD" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "dispatch.bytecode")) << r.output;
  EXPECT_NE(r.output.find("bytecode truncated to 1 of"), std::string::npos)
      << r.output;
  // Running its own bytecode works.
  EXPECT_TRUE(Reports(r, "pass", "promise.models")) << r.output;
}

TEST(CheckTest, NamesWrongResultsOfTheDispatchLibrary) {
  Result r = Check(BrokenPair("ok", "wrong_result") + " --ops=ADD" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "promise.models")) << r.output;
  EXPECT_NE(r.output.find("differs from Graft's CPU kernels"),
            std::string::npos)
      << r.output;
}

// --precision=bf16 widens the float32 tolerance to bfloat16's, no further:
// 0.5 added to every output still fails.
TEST(CheckTest, StillNamesWrongResultsAtBf16Precision) {
  Result r = Check(BrokenPair("ok", "wrong_result") +
                   " --ops=ADD --precision=bf16" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "promise.models")) << r.output;
  EXPECT_NE(r.output.find("precision: bf16"), std::string::npos) << r.output;
  // The reproduction keeps the precision.
  EXPECT_NE(r.output.find("--precision=bf16 --only=promise.models"),
            std::string::npos)
      << r.output;
}

TEST(CheckTest, WarnsOfALiteRtPluginLiteRtsHostWouldRefuse) {
  const std::string plugin =
      BinaryDir() +
      "/tests/plugins/litert_fake/ok/libLiteRtCompilerPlugin_Fakeco.so";
  Result r = Check("--plugin=" + plugin + " --only=abi" + kSeed);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Reports(r, "warn", "abi.plugin.exports")) << r.output;
  EXPECT_NE(r.output.find("LiteRT 2.3.0's own host refuses a plugin without "
                          "it"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(Reports(r, "pass", "abi.plugin.load")) << r.output;
}

// The directory of LiteRT's Intel OpenVINO pair in the ai-edge-litert wheel
// (as tests/litert_dispatch finds it), or "" when the wheel is missing.
std::string IntelOpenVinoDir() {
  std::string out;
  FILE* p = popen(
      "python3 -c 'import ai_edge_litert,os;"
      "print(os.path.dirname(ai_edge_litert.__file__))' 2>/dev/null",
      "r");
  char buf[4096];
  while (p != nullptr && fgets(buf, sizeof(buf), p) != nullptr) out += buf;
  if (p != nullptr) pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  const std::string dir = out + "/vendors/intel_openvino";
  if (out.empty() ||
      !std::filesystem::exists(
          dir + "/compiler/libLiteRtCompilerPlugin_IntelOpenvino.so")) {
    return "";
  }
  return dir;
}

// "--plugin=... --dispatch=... (CPU backend)" of the Intel pair.
std::string IntelOpenVinoPair(const std::string& dir) {
  return "--plugin=" + dir +
         "/compiler/libLiteRtCompilerPlugin_IntelOpenvino.so --dispatch=" +
         dir +
         "/dispatch/libLiteRtDispatch_IntelOpenvino.so "
         "--plugin-option=intel_openvino_graph_backends=cpu";
}

#ifdef GRAFT_CHECK_SANITIZE
#define SKIP_UNDER_SANITIZERS()                                        \
  GTEST_SKIP() << "OpenVINO's libraries are not built for sanitizers " \
                  "(tests/litert_plugins skips them there too)"
#else
#define SKIP_UNDER_SANITIZERS() (void)0
#endif

#define SKIP_WITHOUT_THE_WHEEL(dir)                                  \
  if ((dir).empty()) {                                               \
    GTEST_SKIP() << "the ai-edge-litert wheel (with Intel OpenVINO's " \
                    "libraries) is not installed";                   \
  }

// LiteRT's own Intel OpenVINO pair, from the ai-edge-litert wheel when it
// is installed: the ABI of both libraries and the plugin's identity.
TEST(CheckTest, ChecksTheAbiOfLiteRtsIntelOpenVinoPair) {
  SKIP_UNDER_SANITIZERS();
  const std::string dir = IntelOpenVinoDir();
  SKIP_WITHOUT_THE_WHEEL(dir);
  const std::string plugin =
      dir + "/compiler/libLiteRtCompilerPlugin_IntelOpenvino.so";
  Result r = Check("--plugin=" + plugin + " --dispatch=" + dir +
                   "/dispatch/libLiteRtDispatch_IntelOpenvino.so "
                   "--only=abi,identity.plugin" +
                   kSeed);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "abi.plugin.exports")) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "abi.plugin.load")) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "abi.dispatch.load")) << r.output;
  EXPECT_NE(r.output.find("vendor id Intel_Openvino"), std::string::npos)
      << r.output;
}

// The misuse and robustness probes on Intel's real libraries: they crash on
// NULL arguments LiteRT's ABI leaves undefined (warned, and graft check
// carries on), and survive every probe LiteRT defines (truncated and
// mutated modules, unknown SoC models, bad indices).
TEST(CheckTest, ProbesLiteRtsIntelOpenVinoPairAndWarnsOfItsCrashes) {
  SKIP_UNDER_SANITIZERS();
  const std::string dir = IntelOpenVinoDir();
  SKIP_WITHOUT_THE_WHEEL(dir);
  Result r = Check(IntelOpenVinoPair(dir) +
                   " --only=misuse,dispatch --ops=ADD --draws=1" + kSeed);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* id : {"misuse.plugin", "misuse.dispatch",
                         "dispatch.bytecode", "dispatch.buffers"}) {
    EXPECT_TRUE(Reports(r, "warn", id) || Reports(r, "pass", id))
        << id << "\n"
        << r.output;
  }
  EXPECT_TRUE(Reports(r, "skip", "dispatch.threads")) << r.output;
  // Found in ai-edge-litert 2.3.0: create with a NULL context segfaults.
  EXPECT_NE(r.output.find("create(context=NULL): crashed with SIGSEGV"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("LiteRT's ABI leaves this call undefined: warned"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("truncated, mutated and misdescribed variants of "
                          "the module"),
            std::string::npos)
      << r.output;
}

// Intel's OpenVINO CPU path computes float32 models in bf16 on a CPU with
// avx512_bf16 or AMX: its results fail the float32 tolerance and pass
// bf16's.
TEST(CheckTest, ComparesAVendorThatComputesInBf16UnderBf16Tolerances) {
  SKIP_UNDER_SANITIZERS();
  const std::string dir = IntelOpenVinoDir();
  SKIP_WITHOUT_THE_WHEEL(dir);
  std::string flags;
  {
    FILE* f = fopen("/proc/cpuinfo", "r");
    char buf[8192];
    while (f != nullptr && fgets(buf, sizeof(buf), f) != nullptr) {
      if (strncmp(buf, "flags", 5) == 0) {
        flags = buf;
        break;
      }
    }
    if (f != nullptr) fclose(f);
  }
  if (flags.find(" avx512_bf16") == std::string::npos &&
      flags.find(" amx_bf16") == std::string::npos) {
    GTEST_SKIP() << "this CPU has no bf16: OpenVINO computes in float32";
  }
  const std::string args = IntelOpenVinoPair(dir) +
                           " --only=promise --ops=FULLY_CONNECTED,CONV_2D "
                           "--draws=2" +
                           kSeed;
  Result fp32 = Check(args);
  EXPECT_EQ(fp32.exit_code, 1) << fp32.output;
  EXPECT_TRUE(Reports(fp32, "FAIL", "promise.ops")) << fp32.output;
  Result bf16 = Check(args + " --precision=bf16");
  EXPECT_EQ(bf16.exit_code, 0) << bf16.output;
  EXPECT_TRUE(Reports(bf16, "pass", "promise.ops")) << bf16.output;
  EXPECT_TRUE(Reports(bf16, "pass", "promise.models")) << bf16.output;
  EXPECT_NE(bf16.output.find("the plugin took 2 (CONV_2D, FULLY_CONNECTED)"),
            std::string::npos)
      << bf16.output;
}

// A LiteRT-ABI plugin is probed too: tests/plugins' fake plugin answers
// every probe LiteRT defines (warned where it answers OK for an unknown SoC
// model); the same plugin crashing on an unknown SoC model fails.
TEST(CheckTest, ProbesALiteRtPlugin) {
  const std::string plugin =
      BinaryDir() +
      "/tests/plugins/litert_fake/ok/libLiteRtCompilerPlugin_Fakeco.so";
  Result r = Check("--plugin=" + plugin + " --only=misuse" + kSeed);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Reports(r, "warn", "misuse.plugin") ||
              Reports(r, "pass", "misuse.plugin"))
      << r.output;
  EXPECT_NE(r.output.find("0 failed where LiteRT defines the call"),
            std::string::npos)
      << r.output;
}

// The LiteRT dispatch probes without the wheel (and under sanitizers):
// tests/check's fake LiteRT dispatch library runs the fake plugin's modules
// and answers every probe with a status; built to crash on a module shorter
// than its magic line, dispatch.bytecode fails.
std::string FakeLiteRtPair(const std::string& dispatch_variant) {
  return absl::StrCat(
      "--plugin=", BinaryDir(),
      "/tests/plugins/litert_fake/ok/libLiteRtCompilerPlugin_Fakeco.so "
      "--dispatch=",
      BinaryDir(), "/tests/check/broken/litert_dispatch_", dispatch_variant,
      "/libLiteRtDispatch_Fakeco.so");
}

TEST(CheckTest, ProbesALiteRtDispatchLibrary) {
  Result r = Check(FakeLiteRtPair("ok") + " --only=misuse.dispatch,dispatch" +
                   kSeed);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "misuse.dispatch")) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "dispatch.buffers")) << r.output;
  EXPECT_TRUE(Reports(r, "pass", "dispatch.bytecode") ||
              Reports(r, "warn", "dispatch.bytecode"))
      << r.output;
  EXPECT_TRUE(Reports(r, "skip", "dispatch.threads")) << r.output;
}

TEST(CheckTest, NamesALiteRtDispatchLibraryThatCrashesOnATruncatedModule) {
  Result r = Check(FakeLiteRtPair("truncated_crash") +
                   " --only=misuse.dispatch,dispatch" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "dispatch.bytecode")) << r.output;
  EXPECT_NE(r.output.find("module truncated to 1 of"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("crashed with SIGABRT"), std::string::npos)
      << r.output;
  EXPECT_TRUE(Reports(r, "pass", "misuse.dispatch")) << r.output;
}

TEST(CheckTest, NamesALiteRtPluginThatCrashesOnAnUnknownSocModel) {
  const std::string plugin =
      BinaryDir() +
      "/tests/check/broken/litert_plugin_crash_unknown_soc/"
      "libLiteRtCompilerPlugin_Fakeco.so";
  Result r = Check("--plugin=" + plugin + " --only=misuse" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(Reports(r, "FAIL", "misuse.plugin")) << r.output;
  EXPECT_NE(r.output.find("partition(an unknown SoC model): crashed"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--only=misuse.plugin"), std::string::npos)
      << r.output;
}

TEST(CheckTest, OnlyRunsTheNamedChecksAndJsonSaysWhetherItPassed) {
  Result r = Check(BrokenPair("nondeterministic") +
                   " --only=determinism --ops=ADD --json" + kSeed);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("\"passed\": false"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"id\": \"determinism\""), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\"outcome\": \"fail\""), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("abi.plugin"), std::string::npos) << r.output;
}

TEST(CheckTest, BadCommandLinesExitTwo) {
  EXPECT_EQ(Check("").exit_code, 2);
  EXPECT_EQ(Check(BrokenPair("ok") + " --ops=NO_SUCH_OP").exit_code, 2);
  EXPECT_EQ(Check(BrokenPair("ok") + " --draws=0").exit_code, 2);
  EXPECT_EQ(Check(BrokenPair("ok") + " --precision=fp8").exit_code, 2);
  Result help = Check("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("dispatch.threads"), std::string::npos);
}

}  // namespace
}  // namespace graft
