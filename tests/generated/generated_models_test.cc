// The generated corpus (test_models/generated/, made by the TensorFlow Lite
// converter, see test_models/generate/) against its committed reference
// outputs, without TensorFlow. For every model:
//
//   LoadsAndRoundTrips      load, verify, serialize → load → structurally
//                           equal, and serializing is a fixed point;
//   MatchesReference        runs on Graft's CPU kernels on the committed
//                           input and agrees with the reference interpreter's
//                           outputs under dispatch/tolerance.h (per
//                           signature too, for multi-signature models);
//   CompilesWithExampleVendor  ApplyPlugins with the example plugin; the
//                           compiled model runs its dispatch ops on the
//                           example dispatch library with the CPU's outputs.
//
// Models the runtime cannot load yet are listed in kNotYetRunnable with the
// load error expected; a listed model that loads fails the test (shrink the
// list), and so does an unlisted one that does not.

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "dispatch/tolerance.h"
#include "gtest/gtest.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace graft {
namespace {

namespace fs = std::filesystem;

// Model name → a substring of the error Runtime::Load gives today (the
// first op without a CPU kernel).
const std::map<std::string, std::string>& NotYetRunnable() {
  // Empty today: every generated model runs on the CPU kernels.
  static const auto* table = new std::map<std::string, std::string>{};
  return *table;
}

std::string GeneratedDir() {
  return testing::SourceDir() + "/test_models/generated";
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(GeneratedDir(), ec)) {
    if (e.path().extension() == ".tflite") {
      names.push_back(e.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ModelPath(const std::string& name) {
  return GeneratedDir() + "/" + name + ".tflite";
}
std::string RefDir(const std::string& name) {
  return GeneratedDir() + "/" + name;
}

// The signatures with reference data: subdirectories of the model's
// reference directory (multi-signature models only).
std::vector<std::string> SignatureKeys(const std::string& name) {
  std::vector<std::string> keys;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(RefDir(name), ec)) {
    if (e.is_directory()) keys.push_back(e.path().filename().string());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Copies a reference input into the runtime's input tensor; "" or what is
// wrong.
std::string Feed(Tensor* t, const std::string& npy_path) {
  absl::StatusOr<NpyArray> in = ReadNpy(npy_path);
  if (!in.ok()) return std::string(in.status().message());
  if (in->type != t->type || in->data.size() != t->bytes) {
    return absl::StrCat(npy_path, ": reference fed ",
                        tfl::EnumNameTensorType(in->type), " x ",
                        in->data.size(), " bytes, Graft expects ",
                        tfl::EnumNameTensorType(t->type), " x ", t->bytes);
  }
  std::memcpy(t->raw_data, in->data.data(), t->bytes);
  return "";
}

// The integer tolerance for a model's outputs: the largest that any kernel
// it runs is allowed (tolerance.h).
int IntegerLsb(const RuntimeReport& report) {
  int lsb = 0;
  for (const SubgraphReport& sg : report.subgraphs) {
    for (const OpReport& op : sg.ops) {
      lsb = std::max(lsb, QuantizedLsbTolerance(op.detail));
    }
  }
  return lsb;
}

class GeneratedModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GeneratedModelTest, LoadsAndRoundTrips) {
  auto model = LoadModel(ModelPath(GetParam()));
  ASSERT_TRUE(model.ok()) << model.status();
  auto image = SerializeModel(*model);
  ASSERT_TRUE(image.ok()) << image.status();
  auto reloaded =
      LoadModelFromBytes(Bytes::Copy(absl::MakeConstSpan(*image)), "image");
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  absl::Status same = CompareModels(*model, *reloaded);
  EXPECT_TRUE(same.ok()) << same;
  auto image2 = SerializeModel(*reloaded);
  ASSERT_TRUE(image2.ok()) << image2.status();
  EXPECT_TRUE(*image == *image2) << "re-serializing a loaded image changes it";
}

TEST_P(GeneratedModelTest, MatchesReference) {
  const std::string& name = GetParam();
  auto rt = Runtime::Load(ModelPath(name));
  auto listed = NotYetRunnable().find(name);
  if (listed != NotYetRunnable().end()) {
    ASSERT_FALSE(rt.ok()) << name << " now loads: remove it from "
                          << "kNotYetRunnable in " << __FILE__;
    EXPECT_NE(rt.status().message().find(listed->second), std::string::npos)
        << "expected \"" << listed->second << "\", got: " << rt.status();
    GTEST_SKIP() << "not yet runnable: " << rt.status();
  }
  ASSERT_TRUE(rt.ok()) << rt.status();
  const RuntimeReport report = (*rt)->Report();
  const int64_t k = report.MaxReductionLength();
  const int lsb = IntegerLsb(report);
  for (size_t i = 0; i < (*rt)->num_inputs(); ++i) {
    std::string problem = Feed((*rt)->input(i), absl::StrCat(
                                   RefDir(name), "/input_", i, ".npy"));
    ASSERT_EQ(problem, "");
  }
  ASSERT_TRUE((*rt)->Invoke().ok());
  for (size_t i = 0; i < (*rt)->num_outputs(); ++i) {
    auto want = ReadNpy(absl::StrCat(RefDir(name), "/output_", i, ".npy"));
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(CompareToReference(*(*rt)->output(i), *want, k, lsb), "")
        << "output " << i << " (reduction length " << k << ")";
  }

  for (const std::string& key : SignatureKeys(name)) {
    SCOPED_TRACE("signature " + key);
    auto sig = (*rt)->signature(key);
    ASSERT_TRUE(sig.ok()) << sig.status();
    const std::string dir = RefDir(name) + "/" + key;
    for (size_t i = 0; i < (*sig)->num_inputs(); ++i) {
      std::string problem =
          Feed((*sig)->input(i),
               absl::StrCat(dir, "/input_", (*sig)->input_name(i), ".npy"));
      ASSERT_EQ(problem, "");
    }
    ASSERT_TRUE((*sig)->Invoke().ok());
    for (size_t i = 0; i < (*sig)->num_outputs(); ++i) {
      auto want = ReadNpy(
          absl::StrCat(dir, "/output_", (*sig)->output_name(i), ".npy"));
      ASSERT_TRUE(want.ok()) << want.status();
      EXPECT_EQ(CompareToReference(*(*sig)->output(i), *want, k, lsb), "")
          << "output " << (*sig)->output_name(i);
    }
  }
}

// On 2 threads every invoke gives the bytes 1 thread gives: however a
// kernel splits its work over the threads (rows, channels, tiles), each
// output element is computed the same way.
TEST_P(GeneratedModelTest, TwoThreadsGiveOneThreadsBytes) {
  const std::string& name = GetParam();
  if (NotYetRunnable().count(name)) GTEST_SKIP() << "not yet runnable";
  RuntimeOptions one, two;
  one.num_threads = 1;
  two.num_threads = 2;
  auto rt1 = Runtime::Load(ModelPath(name), one);
  ASSERT_TRUE(rt1.ok()) << rt1.status();
  auto rt2 = Runtime::Load(ModelPath(name), two);
  ASSERT_TRUE(rt2.ok()) << rt2.status();
  for (size_t i = 0; i < (*rt1)->num_inputs(); ++i) {
    const std::string in = absl::StrCat(RefDir(name), "/input_", i, ".npy");
    ASSERT_EQ(Feed((*rt1)->input(i), in), "");
    ASSERT_EQ(Feed((*rt2)->input(i), in), "");
  }
  for (int run = 0; run < 3; ++run) {
    // Both each time: a model may keep state from run to run.
    ASSERT_TRUE((*rt1)->Invoke().ok());
    ASSERT_TRUE((*rt2)->Invoke().ok());
    for (size_t i = 0; i < (*rt1)->num_outputs(); ++i) {
      const Tensor& want = *(*rt1)->output(i);
      const Tensor& got = *(*rt2)->output(i);
      ASSERT_EQ(got.bytes, want.bytes);
      EXPECT_EQ(std::memcmp(got.raw_data, want.raw_data, want.bytes), 0)
          << "output " << i << ", run " << run << " on 2 threads";
    }
  }
}

TEST_P(GeneratedModelTest, CompilesWithExampleVendor) {
  const std::string& name = GetParam();
  const std::string vendor_libs = testing::ExampleVendorDir();
  auto plugin = LoadCompilerPlugin(vendor_libs +
                                     "/libgraft_compiler_plugin_example.so");
  ASSERT_TRUE(plugin.ok()) << plugin.status();
  auto model = LoadModel(ModelPath(name));
  ASSERT_TRUE(model.ok()) << model.status();
  CompilerPlugin* raw = plugin->get();
  auto report = ApplyPlugins(*model, {&raw, 1}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  std::cout << name << ": " << report->Summary() << "\n";
  testing::TempDir dir;
  const std::string compiled = dir.Join("compiled.tflite");
  ASSERT_TRUE(SaveModel(*model, compiled).ok());
  ASSERT_TRUE(LoadModel(compiled).ok());

  auto cpu = Runtime::Load(ModelPath(name));
  if (NotYetRunnable().count(name)) {
    // MatchesReference checks the error; the compiled model's CPU part
    // cannot run either.
    ASSERT_FALSE(cpu.ok());
    GTEST_SKIP() << "not yet runnable: " << cpu.status();
  }
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  RuntimeOptions options;
  options.dispatch_dirs = {vendor_libs};
  auto npu = Runtime::Load(compiled, options);
  ASSERT_TRUE(npu.ok()) << npu.status();
  RuntimeReport npu_report = (*npu)->Report();
  // Every partition runs on the vendor, none falls back.
  EXPECT_EQ(npu_report.CountOps(OpReport::Where::kFallback), 0)
      << npu_report.ToString();
  EXPECT_EQ(npu_report.CountOps(OpReport::Where::kVendor),
            static_cast<int>(report->partitions.size()))
      << npu_report.ToString();

  ASSERT_EQ((*npu)->num_inputs(), (*cpu)->num_inputs());
  for (size_t i = 0; i < (*cpu)->num_inputs(); ++i) {
    const std::string in = absl::StrCat(RefDir(name), "/input_", i, ".npy");
    ASSERT_EQ(Feed((*cpu)->input(i), in), "");
    ASSERT_EQ(Feed((*npu)->input(i), in), "");
  }
  ASSERT_TRUE((*cpu)->Invoke().ok());
  ASSERT_TRUE((*npu)->Invoke().ok());
  // Float ops the vendor ran may sum in another order than the CPU
  // kernels: tolerance.h's float rule; integer outputs exactly equal (the
  // example vendor takes no quantized op).
  const int64_t k = (*cpu)->Report().MaxReductionLength();
  ASSERT_EQ((*npu)->num_outputs(), (*cpu)->num_outputs());
  for (size_t i = 0; i < (*cpu)->num_outputs(); ++i) {
    EXPECT_EQ(CompareToReference(*(*npu)->output(i),
                                 TensorToNpy(*(*cpu)->output(i)), k),
              "")
        << "output " << i;
  }
}

// The table names only models that exist, so it cannot outlive them.
// The dynamic-batch model (batch dimension -1) resized to batch 3: row 0
// is the reference input and must give the reference output; rows 1 and 2
// (scaled and mirrored copies) must give what a batch-1 runtime gives for
// them alone. A fixed dimension cannot be resized.
TEST(GeneratedModelsTest, DynamicBatchModelResizesToBatchThree) {
  const std::string name = "dynamic_batch_float";
  auto rt = Runtime::Load(ModelPath(name));
  ASSERT_TRUE(rt.ok()) << rt.status();
  auto one = Runtime::Load(ModelPath(name));
  ASSERT_TRUE(one.ok()) << one.status();
  auto ref_in = ReadNpy(RefDir(name) + "/input_0.npy");
  auto ref_out = ReadNpy(RefDir(name) + "/output_0.npy");
  ASSERT_TRUE(ref_in.ok() && ref_out.ok());
  const size_t row_in = ref_in->data.size();

  absl::Status fixed = (*rt)->ResizeInputs({{3, 16, 16, 4}});
  EXPECT_FALSE(fixed.ok());
  EXPECT_NE(fixed.message().find("dimension 3 is fixed at 3"), std::string::npos)
      << fixed;
  ASSERT_TRUE((*rt)->ResizeInputs({{3, 16, 16, 3}}).ok());
  Tensor* in = (*rt)->input(0);
  ASSERT_EQ(in->shape, (Shape{3, 16, 16, 3}));
  ASSERT_EQ(in->bytes, 3 * row_in);
  std::vector<std::vector<float>> rows(3);
  const auto* base = reinterpret_cast<const float*>(ref_in->data.data());
  const size_t n = row_in / sizeof(float);
  for (size_t i = 0; i < n; ++i) {
    rows[0].push_back(base[i]);
    rows[1].push_back(base[i] * 0.5f);
    rows[2].push_back(base[n - 1 - i]);
  }
  for (int r = 0; r < 3; ++r) {
    std::memcpy(in->raw_data + r * row_in, rows[r].data(), row_in);
  }
  ASSERT_TRUE((*rt)->Invoke().ok());
  const Tensor* out = (*rt)->output(0);
  ASSERT_EQ(out->shape, (Shape{3, 10}));
  const int64_t k = (*rt)->Report().MaxReductionLength();
  for (int r = 0; r < 3; ++r) {
    Tensor row = *out;
    row.shape = {1, 10};
    row.bytes = out->bytes / 3;
    row.raw_data = out->raw_data + r * row.bytes;
    NpyArray want = *ref_out;
    if (r > 0) {
      std::memcpy((*one)->input(0)->raw_data, rows[r].data(), row_in);
      ASSERT_TRUE((*one)->Invoke().ok());
      want = TensorToNpy(*(*one)->output(0));
    }
    EXPECT_EQ(CompareToReference(row, want, k, 0), "") << "row " << r;
  }
}

TEST(GeneratedModelsTest, NotYetRunnableNamesExistingModels) {
  std::vector<std::string> names = ModelNames();
  for (const auto& [name, error] : NotYetRunnable()) {
    EXPECT_TRUE(std::count(names.begin(), names.end(), name)) << name;
  }
}

TEST(GeneratedModelsTest, CorpusIsPresent) {
  EXPECT_GE(ModelNames().size(), 14u) << "in " << GeneratedDir();
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string s;
  for (char c : info.param) s += std::isalnum(static_cast<unsigned char>(c))
                                     ? c : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Generated, GeneratedModelTest,
                         ::testing::ValuesIn(ModelNames()), TestName);

}  // namespace
}  // namespace graft
