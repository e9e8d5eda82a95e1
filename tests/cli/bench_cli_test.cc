// `graft bench` run as a user would: the structure of its report (one row
// per configuration and thread count, in text and JSON) and its errors.
// Never its timings.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_test_util.h"

namespace graft {
namespace {

using ::graft::testing::BinaryDir;
using ::graft::testing::HavePython;
using ::graft::testing::JsonSatisfies;
using ::graft::testing::Result;
using ::graft::testing::RunGraft;
using ::graft::testing::SourceDir;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

std::string SmallModel() {
  return SourceDir() + "/test_models/residual_mlp.tflite";
}
// A vendor_libs/ holding only the example vendor's two libraries, so the
// rows below do not depend on which other vendors the build has.
std::string VendorLibs() {
  static testing::TempDir dir;
  static const std::string libs = [] {
    const std::string path = dir.Join("vendor_libs");
    std::filesystem::create_directory(path);
    for (const char* name : {"libgraft_compiler_plugin_example.so",
                             "libgraft_dispatch_example.so"}) {
      std::filesystem::create_symlink(testing::ExampleVendorDir() + "/" + name,
                                      path + "/" + name);
    }
    return path;
  }();
  return libs;
}

TEST(BenchCli, OneRowPerConfigurationAndThreadCount) {
  Result r = RunGraft({"bench", SmallModel(), "--threads=1,2", "--warmup=0",
                       "--iterations=2", "--plugin-dir=" + VendorLibs()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ContainsRegex("^machine: .*cores.*load average"));
  EXPECT_THAT(r.out, HasSubstr("model: " + SmallModel() + "\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n  cpu +1 [^\n]* 1\\.00x  6 cpu\n"));
  EXPECT_THAT(r.out, ContainsRegex("\n  cpu +2 [^\n]*x  6 cpu\n"));
  // The example vendor takes all but the SOFTMAX.
  for (const char* threads : {"1", "2"}) {
    EXPECT_THAT(r.out, ContainsRegex(absl::StrCat(
                           "\n  plugins:[^ ]*vendor_libs +", threads,
                           " [^\n]*x  1 cpu, 1 vendor \\(example\\)\n")));
  }
  EXPECT_THAT(r.out, HasSubstr("on-device compile took"));
  EXPECT_EQ(r.err, "");
}

TEST(BenchCli, JsonHasEveryConfiguration) {
  Result r =
      RunGraft({"bench", SmallModel(), "--threads=1,2", "--warmup=0",
                "--iterations=3", "--plugin-dir=" + VendorLibs(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (!HavePython()) GTEST_SKIP() << "python3 is needed to read the JSON";
  EXPECT_TRUE(JsonSatisfies(r.out, R"(
      'load average' in d['machine'] and d['iterations'] == 3 and
      len(d['models']) == 1 and not d['models'][0]['compiled'] and
      [(c['name'].split(':')[0], c['threads'])
       for c in d['models'][0]['configs']] ==
          [('cpu', 1), ('cpu', 2), ('plugins', 1), ('plugins', 2)] and
      all(c['ok'] and c['runs'] == 3 and
          0 < c['min_ms'] <= c['median_ms'] <= c['p90_ms'] and
          c['load_ms'] > 0 and c['first_run_ms'] > 0
          for c in d['models'][0]['configs']) and
      d['models'][0]['configs'][0]['ratio'] == 1 and
      d['models'][0]['configs'][2]['vendors'] == ['example'] and
      d['models'][0]['configs'][2]['vendor_ops'] == 1 and
      'compile_ms' in d['models'][0]['configs'][2])"))
      << r.out;
}

TEST(BenchCli, RunsACompiledModelAsItIs) {
  testing::TempDir dir;
  const std::string compiled = dir.Join("compiled.tflite");
  Result apply = RunGraft(
      {"apply", SmallModel(), "-o", compiled, "--plugin-dir=" + VendorLibs()});
  ASSERT_EQ(apply.exit_code, 0) << apply.err;
  Result r = RunGraft({"bench", compiled, "--warmup=0", "--iterations=2",
                       "--dispatch-dir=" + VendorLibs()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("model: " + compiled + " (compiled)\n"));
  EXPECT_THAT(r.out,
              ContainsRegex("\n  dispatch:[^ ]*vendor_libs +1 [^\n]* 1\\.00x"
                            "  1 cpu, 1 vendor \\(example\\)\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("\n  cpu ")));
}

TEST(BenchCli, MissingModelFailsWithExit1NamingIt) {
  Result r = RunGraft(
      {"bench", "/nonexistent/model.tflite", SmallModel(), "--iterations=1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("graft bench: error: "));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/model.tflite"));
  // The other model is still measured.
  EXPECT_THAT(r.out, HasSubstr("model: " + SmallModel() + "\n"));
}

TEST(BenchCli, BadCommandLinesExit2) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"bench", SmallModel(), "--no-such-flag"},
           {"bench", SmallModel(), "--threads=1,zero"},
           {"bench", SmallModel(), "--threads=0"},
           {"bench", SmallModel(), "--iterations=0"},
           {"bench"}}) {
    Result r = RunGraft(args);
    SCOPED_TRACE(args.back());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("graft bench: error: "));
    EXPECT_EQ(r.out, "");
  }
}

TEST(BenchCli, HelpExits0) {
  Result r = RunGraft({"help", "bench"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("graft bench MODEL..."));
  EXPECT_THAT(r.out, HasSubstr("--threads"));
}

}  // namespace
}  // namespace graft
