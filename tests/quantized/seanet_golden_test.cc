// The TFLite Micro seanet integration models (INT16 activations, 16x8
// convolutions, one op each) run through graft::Runtime and compared with
// the golden outputs TFLite Micro wrote beside them. Every output must
// match exactly: the quantized kernels reproduce TFLite's integer
// arithmetic.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/test_support.h"
#include "dispatch/runtime.h"
#include "dispatch/tensor.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

namespace fs = std::filesystem;

std::vector<int64_t> ReadCsv(const fs::path& path) {
  std::ifstream f(path);
  std::vector<int64_t> v;
  std::string tok;
  while (std::getline(f, tok, ',')) {
    std::stringstream ss(tok);
    int64_t x;
    if (ss >> x) v.push_back(x);
  }
  return v;
}

// The one CSV file named <stem>_<what>_<dtype>.csv, or empty.
fs::path FindCsv(const fs::path& dir, const std::string& stem,
                 const std::string& what) {
  const std::string prefix = stem + "_" + what + "_";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && e.path().extension() == ".csv") {
      return e.path();
    }
  }
  return {};
}

bool WriteInts(Tensor* t, const std::vector<int64_t>& v, std::string* why) {
  if (static_cast<int64_t>(v.size()) != t->num_elements()) {
    *why = "input size mismatch";
    return false;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t->type) {
      case tfl::TensorType_INT8: t->data<int8_t>()[i] = v[i]; break;
      case tfl::TensorType_INT16: t->data<int16_t>()[i] = v[i]; break;
      case tfl::TensorType_INT32: t->data<int32_t>()[i] = v[i]; break;
      default: *why = "unexpected input dtype"; return false;
    }
  }
  return true;
}

int64_t ReadInt(const Tensor& t, size_t i) {
  switch (t.type) {
    case tfl::TensorType_INT8: return t.data<int8_t>()[i];
    case tfl::TensorType_INT16: return t.data<int16_t>()[i];
    case tfl::TensorType_INT32: return t.data<int32_t>()[i];
    default: return INT64_MIN;
  }
}

TEST(SeanetGolden, EveryModelMatchesTfliteMicroGolden) {
  GRAFT_SKIP_IF_NO_CORPUS();
  const fs::path root =
      fs::path(testing::ThirdPartyModelsDir()) /
      "tflite-micro/tensorflow/lite/micro/integration_tests/seanet";
  if (!fs::is_directory(root)) GTEST_SKIP() << "no seanet models in corpus";
  int matched = 0, mismatched = 0;
  std::map<std::string, std::vector<std::string>> not_runnable;
  std::vector<fs::path> models;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().extension() == ".tflite") models.push_back(e.path());
  }
  std::sort(models.begin(), models.end());
  for (const fs::path& model : models) {
    const std::string stem = model.stem().string();
    const fs::path dir = model.parent_path();
    const fs::path golden = FindCsv(dir, stem, "golden");
    if (golden.empty()) {
      not_runnable["no golden file"].push_back(stem);
      continue;
    }
    auto rt = Runtime::Load(model.string());
    if (!rt.ok()) {
      not_runnable[std::string(rt.status().message())].push_back(stem);
      continue;
    }
    std::string why;
    bool ok = true;
    for (size_t i = 0; i < (*rt)->num_inputs() && ok; ++i) {
      const fs::path in = FindCsv(dir, stem, "input" + std::to_string(i));
      ok = !in.empty() && WriteInts((*rt)->input(i), ReadCsv(in), &why);
      if (in.empty()) why = "no input file";
    }
    if (!ok) {
      not_runnable[why].push_back(stem);
      continue;
    }
    const absl::Status st = (*rt)->Invoke();
    if (!st.ok()) {
      not_runnable[std::string(st.message())].push_back(stem);
      continue;
    }
    const std::vector<int64_t> want = ReadCsv(golden);
    const Tensor& out = *(*rt)->output(0);
    ASSERT_EQ(static_cast<int64_t>(want.size()), out.num_elements()) << stem;
    int64_t diffs = 0, max_diff = 0, first = -1;
    for (size_t i = 0; i < want.size(); ++i) {
      const int64_t d = std::abs(ReadInt(out, i) - want[i]);
      if (d != 0) {
        ++diffs;
        if (first < 0) first = static_cast<int64_t>(i);
      }
      max_diff = std::max(max_diff, d);
    }
    if (diffs == 0) {
      ++matched;
    } else {
      ++mismatched;
      ADD_FAILURE() << stem << ": " << diffs << " of " << want.size()
                    << " outputs differ (max |diff| " << max_diff
                    << ", first at " << first << ": got "
                    << ReadInt(out, first) << ", want " << want[first] << ")";
    }
  }
  int unrunnable = 0;
  std::ostringstream reasons;
  for (const auto& [reason, stems] : not_runnable) {
    unrunnable += static_cast<int>(stems.size());
    reasons << "\n  " << stems.size() << " x " << reason << " (e.g. "
            << stems.front() << ")";
  }
  std::cout << matched << " seanet models matched, " << mismatched
            << " mismatched, " << unrunnable << " not yet runnable"
            << reasons.str() << std::endl;
  EXPECT_EQ(mismatched, 0);
  EXPECT_EQ(unrunnable, 0);
  EXPECT_GT(matched, 0);
}

}  // namespace
}  // namespace graft
