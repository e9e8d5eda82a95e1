// Conformance of the xnnpack vendor: every model of the third-party corpus
// and of the generated corpus (test_models/generated/) is compiled with the
// xnnpack plugin and run with its dispatch library; its outputs must match
// Graft's CPU kernels on the original model, fed the same seeded random
// inputs. Float outputs use dispatch/tolerance.h; int8 outputs are compared
// in units in the last place against kXnnpackInt8ModelMaxLsb
// (xnnpack_test_support.h), since XNNPACK requantizes with its own rounding.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model_io.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "dispatch/tolerance.h"
#include "xnnpack_test_support.h"

namespace graft {
namespace {

namespace fs = std::filesystem;
using xnnpack_test::kXnnpackInt8ModelMaxLsb;
using xnnpack_test::Outcome;
using xnnpack_test::RunModel;
using xnnpack_test::Seed;

std::vector<std::string> ModelFiles(const std::string& dir) {
  std::vector<std::string> paths;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return paths;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".tflite") {
      paths.push_back(e.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

struct Totals {
  int compared = 0, with_partitions = 0, skipped = 0;
  int64_t ops_total = 0, ops_taken = 0;
  int max_lsb = -1;
  std::vector<std::string> mismatches;
};

Totals RunCorpus(const std::vector<std::string>& paths) {
  const uint32_t seed = Seed();
  std::printf("[ seed     ] GRAFT_TEST_SEED=%u\n", seed);
  Totals t;
  for (const std::string& path : paths) {
    Outcome o = RunModel(path, seed, kXnnpackInt8ModelMaxLsb);
    if (!o.skipped.empty()) {
      ++t.skipped;
      continue;
    }
    ++t.compared;
    t.ops_total += o.ops_total;
    t.ops_taken += o.ops_taken;
    t.with_partitions += o.partitions > 0;
    t.max_lsb = std::max(t.max_lsb, o.max_lsb);
    std::printf("  %s: %lld/%lld ops taken, %zu partitions", path.c_str(),
                static_cast<long long>(o.ops_taken),
                static_cast<long long>(o.ops_total), o.partitions);
    if (o.partitions > 0) {
      if (o.max_lsb >= 0) {
        std::printf(", int8 max %d LSB (mean %.3f)", o.max_lsb, o.mean_lsb);
      }
      std::printf(", float max |diff| %.3g", o.max_float_diff);
    }
    std::printf("%s\n", o.mismatch.empty() ? "" : "  MISMATCH");
    if (!o.mismatch.empty()) {
      t.mismatches.push_back(absl::StrCat(path, ": ", o.mismatch));
    }
  }
  std::printf(
      "%d models compared (%d skipped), %d with xnnpack partitions; "
      "%lld/%lld ops taken; int8 max %d LSB; %zu mismatched\n",
      t.compared, t.skipped, t.with_partitions,
      static_cast<long long>(t.ops_taken), static_cast<long long>(t.ops_total),
      t.max_lsb, t.mismatches.size());
  std::fflush(stdout);
  return t;
}

TEST(XnnpackConformanceTest, ThirdPartyCorpusMatchesCpuKernels) {
  GRAFT_SKIP_IF_NO_CORPUS();
  Totals t = RunCorpus(ModelFiles(testing::ThirdPartyModelsDir()));
  for (const std::string& m : t.mismatches) ADD_FAILURE() << m;
  EXPECT_GT(t.compared, 100);
  EXPECT_GT(t.with_partitions, 30);
}

TEST(XnnpackConformanceTest, GeneratedCorpusMatchesCpuKernels) {
  const std::string dir = testing::SourceDir() + "/test_models/generated";
  std::vector<std::string> paths = ModelFiles(dir);
  if (paths.empty()) GTEST_SKIP() << "no generated models in " << dir;
  Totals t = RunCorpus(paths);
  for (const std::string& m : t.mismatches) ADD_FAILURE() << m;
  EXPECT_GT(t.with_partitions, 0);
}

// The generated models compiled with xnnpack against the reference
// interpreter's own outputs (test_models/generated/<name>/, BUILTIN_REF on
// the committed inputs): float within tolerance.h's rule, int8 within
// kXnnpackInt8ModelLsb (tolerance.h, with its reasons).
TEST(XnnpackConformanceTest, GeneratedCorpusMatchesReferenceInterpreter) {
  const std::string dir = testing::SourceDir() + "/test_models/generated";
  int compared = 0;
  for (const std::string& path : ModelFiles(dir)) {
    const std::string ref = path.substr(0, path.size() - 7);  // ".tflite"
    if (!fs::exists(ref + "/output_0.npy")) continue;  // per-signature only
    SCOPED_TRACE(path);
    auto model = LoadModel(path);
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE(xnnpack_test::ApplyXnnpack(*model).ok());
    testing::TempDir tmp;
    const std::string compiled = tmp.Join("compiled.tflite");
    ASSERT_TRUE(SaveModel(*model, compiled).ok());
    RuntimeOptions options;
    options.dispatch_dirs = {xnnpack_test::VendorLibDir()};
    auto rt = Runtime::Load(compiled, options);
    ASSERT_TRUE(rt.ok()) << rt.status();
    for (size_t i = 0; i < (*rt)->num_inputs(); ++i) {
      auto in = ReadNpy(absl::StrCat(ref, "/input_", i, ".npy"));
      ASSERT_TRUE(in.ok()) << in.status();
      Tensor* t = (*rt)->input(i);
      ASSERT_EQ(in->data.size(), t->bytes) << "input " << i;
      std::memcpy(t->raw_data, in->data.data(), t->bytes);
    }
    ASSERT_TRUE((*rt)->Invoke().ok());
    const int64_t k = (*rt)->Report().MaxReductionLength();
    for (size_t i = 0; i < (*rt)->num_outputs(); ++i) {
      auto want = ReadNpy(absl::StrCat(ref, "/output_", i, ".npy"));
      ASSERT_TRUE(want.ok()) << want.status();
      EXPECT_EQ(CompareToReference(*(*rt)->output(i), *want, k,
                                   kXnnpackInt8ModelLsb),
                "")
          << "output " << i;
    }
    ++compared;
  }
  std::printf("%d generated models compared with the reference interpreter\n",
              compared);
  EXPECT_GE(compared, 10);
}

}  // namespace
}  // namespace graft
