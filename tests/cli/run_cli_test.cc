// `graft run` as a user would: what it says when a compiled op cannot run
// where it was compiled for, and when a directory it was given is wrong.
#include <filesystem>
#include <string>
#include <vector>

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

// residual_mlp compiled with the example vendor, in `dir`.
std::string CompiledModel(const testing::TempDir& dir) {
  const std::string plugins = dir.Join("plugins");
  std::filesystem::create_directory(plugins);
  std::filesystem::create_symlink(
      testing::ExampleVendorDir() + "/libgraft_compiler_plugin_example.so",
      plugins + "/libgraft_compiler_plugin_example.so");
  const std::string out = dir.Join("compiled.tflite");
  Result apply =
      RunGraft({"apply", SourceDir() + "/test_models/residual_mlp.tflite", "-o",
                out, "--plugin-dir=" + plugins});
  EXPECT_EQ(apply.exit_code, 0) << apply.err;
  return out;
}

TEST(RunCli, AFallbackToTheCpuIsAWarningNamingTheVendor) {
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  const std::string empty = dir.Join("no_dispatch_libraries");
  std::filesystem::create_directory(empty);
  Result r = RunGraft({"run", model, "--dispatch-dir=" + empty});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("graft: warning: subgraph 0 op"));
  EXPECT_THAT(r.err, HasSubstr("runs on the CPU"));
  EXPECT_THAT(r.err, HasSubstr("vendor 'example'"));
  EXPECT_THAT(r.out, HasSubstr("warning: "));  // And in the report.
}

TEST(RunCli, RequireVendorOpsFailsInsteadOfFallingBack) {
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  const std::string empty = dir.Join("no_dispatch_libraries");
  std::filesystem::create_directory(empty);
  Result r = RunGraft(
      {"run", model, "--dispatch-dir=" + empty, "--require-vendor-ops"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("policy kRequireVendorOps: 1 dispatch op(s)"));
  EXPECT_THAT(r.err, HasSubstr("vendor 'example'"));
}

// --vendor (RuntimeOptions::vendor_priority) limits the dispatch libraries
// used: a vendor left out is said so, and its op runs its fallback.
TEST(RunCli, VendorListLeavesOtherVendorsDispatchLibrariesUnused) {
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  const std::string libs = testing::ExampleVendorDir();
  Result listed =
      RunGraft({"run", model, "--dispatch-dir=" + libs, "--vendor=example"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr("vendor (example)"));
  EXPECT_THAT(listed.err, Not(HasSubstr("warning")));
  Result left_out =
      RunGraft({"run", model, "--dispatch-dir=" + libs, "--vendor=xnnpack"});
  ASSERT_EQ(left_out.exit_code, 0) << left_out.err;
  EXPECT_THAT(left_out.err,
              HasSubstr("vendor 'example', which is not in the vendor "
                        "priority list (xnnpack"));
  EXPECT_THAT(left_out.out, HasSubstr("cpu fallback"));
}

// The teaching vendor is opt-in: the default directory does not hold it.
TEST(RunCli, TheDefaultDirectoryDoesNotHoldTheExampleVendor) {
  EXPECT_FALSE(std::filesystem::exists(
      BinaryDir() + "/vendor_libs/libgraft_compiler_plugin_example.so"));
  EXPECT_FALSE(std::filesystem::exists(
      BinaryDir() + "/vendor_libs/libgraft_dispatch_example.so"));
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  Result r = RunGraft({"run", model});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("vendor 'example'"));
}

TEST(RunCli, ADispatchDirThatDoesNotExistIsAnError) {
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  Result r = RunGraft({"run", model, "--dispatch-dir=/nonexistent/graft"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--dispatch-dir /nonexistent/graft: no such "
                               "directory"));
}

// A converter-made model: subgraph 0's input is the tensor
// "serving_default_image:0", its signature calls it "image".
std::string SignedModel() {
  return SourceDir() + "/test_models/generated/resnet_cnn_float.tflite";
}

TEST(RunCli, TakesTheDefaultSignaturesInputNamesWithoutSignature) {
  Result r = RunGraft({"run", SignedModel(), "--input-shape=image=1x64x64x3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(RunCli, AnUnknownInputListsTheValidOnes) {
  Result r = RunGraft({"run", SignedModel(), "--input-shape=imag=1x64x64x3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the model has no input 'imag'; its inputs "
                               "(by index or name): 0 "
                               "'serving_default_image:0'"));
}

TEST(RunCli, OutputFileNamesAreSafeOnEveryFilesystem) {
  testing::TempDir dir;
  Result r = RunGraft({"run", SignedModel(), "--output-dir=" + dir.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      std::filesystem::exists(dir.Join("StatefulPartitionedCall_0.npy")));
}

// --json: where every op ran (a compiled op falling back says so), the
// warnings, the outputs and the latency, for machines.
TEST(RunCli, JsonHasPlacementWarningsOutputsAndLatency) {
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  const std::string empty = dir.Join("no_dispatch_libraries");
  std::filesystem::create_directory(empty);
  Result r = RunGraft(
      {"run", model, "--dispatch-dir=" + empty, "--json", "--iterations=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (!HavePython()) GTEST_SKIP() << "python3 is needed to read the JSON";
  EXPECT_TRUE(JsonSatisfies(r.out, R"(
      d['load_ms'] > 0 and len(d['inputs']) == 1 and
      d['inputs'][0]['source'] == 'random, seed 1' and
      len(d['outputs']) == 1 and d['outputs'][0]['type'] == 'FLOAT32' and
      d['placement']['cpu fallback'] == 1 and
      any(o['where'] == 'cpu fallback' and 'example' in o['detail']
          for o in d['subgraphs'][0]['ops']) and
      len(d['warnings']) == 1 and 'runs on the CPU' in d['warnings'][0] and
      d['latency_ms']['runs'] >= 2 and
      0 < d['latency_ms']['min'] <= d['latency_ms']['median'])"))
      << r.out;
}

// --profile's placement map: each of residual_mlp's six original ops, by
// its index in the model apply was given, with where it ran and its time.
// On the vendor, each op has the vendor's own time: the example dispatch
// library reports a span per instruction, which the plugin's debug map (in
// the manifest) names the op of ('=', measured); run as a fallback, each op
// has its own measured time.
TEST(RunCli, ProfileMapsADispatchOpsTimeBackToTheOriginalOps) {
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  Result r =
      RunGraft({"run", model, "--dispatch-dir=" + testing::ExampleVendorDir(),
                "--iterations=3", "--profile"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("placement map of subgraph 0 'main': 6 original "
                               "ops"));
  EXPECT_THAT(r.out, ContainsRegex("\n +0  FULLY_CONNECTED +fc1 +example +op "
                                   "0 example:partition_0 \\(5 ops\\) +="));
  EXPECT_THAT(r.out, ContainsRegex("\n +5  SOFTMAX +y +cpu +op 1 SOFTMAX "));
  EXPECT_THAT(r.out, HasSubstr("by place:  example 5 ops"));
  EXPECT_THAT(r.out,
              ContainsRegex("op 0 example:partition_0 \\(example\\) replaced "
                            "ops 0-4; [0-9.]+ us/run, of which the vendor's "
                            "events measure [0-9.]+\n"));

  if (!HavePython()) GTEST_SKIP() << "python3 is needed to read the JSON";
  Result j =
      RunGraft({"run", model, "--dispatch-dir=" + testing::ExampleVendorDir(),
                "--iterations=3", "--profile", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_TRUE(JsonSatisfies(j.out, R"(
      d['placement_map']['origins'] == 'manifest' and d['placement_map']['time_attribution'] == 'vendor_events' and
      d['placement_map']['runs'] == 3 and
      [o['op'] for o in d['placement_map']['ops']] == list(range(6)) and
      [o['name'] for o in d['placement_map']['ops']] == ['FULLY_CONNECTED', 'RELU',
          'FULLY_CONNECTED', 'ADD', 'MUL', 'SOFTMAX'] and
      all(o['where'] == 'vendor' and o['vendor'] == 'example' and
          not o['attributed'] and o['time_source'] == 'vendor' and
          o['ms_per_run'] > 0 and o['group_size'] == 5 and o['compiled_op'] == 0
          for o in d['placement_map']['ops'][:5]) and
      d['placement_map']['ops'][5]['where'] == 'cpu' and not d['placement_map']['ops'][5]['attributed'] and
      d['placement_map']['ops'][5]['time_source'] == 'host' and
      d['placement_map']['ops'][1]['inputs_from'] == [0] and
      0 < sum(o['ms_per_run'] for o in d['placement_map']['ops'][:5]) <=
          d['placement_map']['dispatch_ops'][0]['ms_per_run'] * 1.0001 and
      [(x['compiled_op'], x['vendor'], [o['op'] for o in x['original_ops']],
        x['original_ops'][4]['name'])
       for x in d['placement_map']['dispatch_ops']] ==
          [(0, 'example', [0, 1, 2, 3, 4], 'MUL')] and
      0 < sum(o['share'] for o in d['placement_map']['ops']) <= 1.0001)"))
      << j.out;

  const std::string empty = dir.Join("no_dispatch_libraries");
  std::filesystem::create_directory(empty);
  Result fb = RunGraft({"run", model, "--dispatch-dir=" + empty,
                        "--iterations=3", "--profile", "--json"});
  ASSERT_EQ(fb.exit_code, 0) << fb.err;
  EXPECT_TRUE(JsonSatisfies(fb.out, R"(
      all(o['where'] == 'cpu fallback' and not o['attributed'] and
          o['ms_per_run'] > 0 for o in d['placement_map']['ops'][:5]))"))
      << fb.out;
}

// Without --profile the map still says where each op ran, with no times.
TEST(RunCli, JsonHasAPlacementMapWithoutTimesWhenNotProfiling) {
  if (!HavePython()) GTEST_SKIP() << "python3 is needed to read the JSON";
  Result r = RunGraft(
      {"run", SourceDir() + "/test_models/residual_mlp.tflite", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(JsonSatisfies(r.out, R"(
      d['placement_map']['origins'] == 'identity' and d['placement_map']['runs'] == 0 and
      len(d['placement_map']['ops']) == 6 and
      all(o['where'] == 'cpu' and o['ms_per_run'] is None for o in d['placement_map']['ops']))"))
      << r.out;
}

// --report-html: one self-contained page, a row per original op coloured by
// where it ran, the totals, and nothing fetched from elsewhere.
TEST(RunCli, ReportHtmlIsOneSelfContainedPageWithARowPerOriginalOp) {
  testing::TempDir dir;
  const std::string model = CompiledModel(dir);
  const std::string page = dir.Join("map.html");
  Result r =
      RunGraft({"run", model, "--dispatch-dir=" + testing::ExampleVendorDir(),
                "--iterations=2", "--profile", "--report-html=" + page});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = testing::ReadFile(page);
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_THAT(html, HasSubstr("</html>"));
  size_t rows = 0, vendor_rows = 0;
  for (size_t at = html.find("<tr data-where="); at != std::string::npos;
       at = html.find("<tr data-where=", at + 1)) {
    ++rows;
    const std::string vendor_row = "<tr data-where=\"example\"><td";
    vendor_rows += html.compare(at, vendor_row.size(), vendor_row) == 0;
  }
  EXPECT_EQ(rows, 6u) << html;
  EXPECT_EQ(vendor_rows, 5u) << html;
  EXPECT_THAT(html, HasSubstr("class=\"num measured\""));
  EXPECT_THAT(html, HasSubstr("</span>op 0 example:partition_0 (example): "
                              "original ops 0-4; "));
  // The graph: a box per original op, classed by where it ran.
  size_t boxes = 0, vendor_boxes = 0;
  for (size_t at = html.find("<g class=\"op "); at != std::string::npos;
       at = html.find("<g class=\"op ", at + 1)) {
    ++boxes;
    vendor_boxes += html.compare(at, 29, "<g class=\"op place-v-example ") == 0;
  }
  EXPECT_EQ(boxes, 6u) << html;
  EXPECT_EQ(vendor_boxes, 5u) << html;
  for (const char* external : {"<script", "src=", "href=", "@import", "url("}) {
    EXPECT_THAT(html, Not(HasSubstr(external))) << external;
  }
  // A model not compiled by Graft: the map of the model as it is.
  Result cpu =
      RunGraft({"run", SourceDir() + "/test_models/residual_mlp.tflite",
                "--report-html=" + page});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  EXPECT_THAT(testing::ReadFile(page), HasSubstr("<tr data-where=\"cpu\">"));
}

}  // namespace
}  // namespace graft
