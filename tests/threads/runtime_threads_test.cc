// The supported way to run one model on several threads (dispatch/runtime.h,
// Thread-safety): one Runtime per thread, all built from one mapping of the
// file and sharing the vendor's backend. 8 threads x 200 invokes, each
// thread on its own seeded input, every output bit-identical to the one a
// single runtime computed for that input first. On CPU kernels, compiled for
// the example vendor and compiled for XNNPACK (skipped when not built).
#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/mapped_file.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/runtime.h"
#include "dispatch/vendor_backend.h"
#include "dispatch/vendor_dispatch.h"
#include "gtest/gtest.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace graft {
namespace {

constexpr int kThreads = 8;
constexpr int kInvokes = 200;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

struct Variant {
  const char* name;
  // Empty: run the model as it is, on CPU kernels.
  std::string plugin, dispatch;
};

std::vector<Variant> Variants() {
  const std::string example = testing::ExampleVendorDir();
  const std::string libs = testing::BinaryDir() + "/vendor_libs";
  return {
      {"cpu", "", ""},
      {"example", example + "/libgraft_compiler_plugin_example.so",
       example + "/libgraft_dispatch_example.so"},
      {"xnnpack", libs + "/libgraft_compiler_plugin_xnnpack.so",
       libs + "/libgraft_dispatch_xnnpack.so"},
  };
}

class RuntimeThreadsTest : public ::testing::TestWithParam<Variant> {};

// Input i's bytes for thread `seed`: floats in [-1, 1].
std::vector<std::vector<uint8_t>> Inputs(Runtime& rt, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < rt.num_inputs(); ++i) {
    const Tensor* t = rt.input(i);
    std::vector<float> v(t->bytes / sizeof(float));
    for (float& f : v) f = dist(rng);
    std::vector<uint8_t> bytes(t->bytes);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    out.push_back(std::move(bytes));
  }
  return out;
}

// Sets `inputs`, invokes, returns every output's bytes.
absl::StatusOr<std::vector<std::vector<uint8_t>>> SetAndInvoke(
    Runtime& rt, const std::vector<std::vector<uint8_t>>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (absl::Status st = rt.SetInputData(i, inputs[i]); !st.ok()) return st;
  }
  if (absl::Status st = rt.Invoke(); !st.ok()) return st;
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < rt.num_outputs(); ++i) {
    const Tensor* t = rt.output(i);
    out.emplace_back(t->raw_data, t->raw_data + t->bytes);
  }
  return out;
}

TEST_P(RuntimeThreadsTest, RuntimePerThreadGivesIdenticalOutputs) {
  const Variant& v = GetParam();
  if (!v.plugin.empty() && !Exists(v.plugin)) {
    GTEST_SKIP() << v.name << " vendor not built (" << v.plugin << ")";
  }
  const std::string source =
      testing::SourceDir() + "/test_models/residual_mlp.tflite";
  testing::TempDir tmp;
  std::string path = source;
  RuntimeOptions options;
  if (!v.plugin.empty()) {
    auto model = LoadModel(source);
    ASSERT_TRUE(model.ok()) << model.status();
    auto plugin = LoadCompilerPlugin(v.plugin);
    ASSERT_TRUE(plugin.ok()) << plugin.status();
    CompilerPlugin* raw = plugin->get();
    auto report = ApplyPlugins(*model, {&raw, 1}, {});
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_GT(report->ops_taken, 0);
    path = tmp.Join("compiled.tflite");
    ASSERT_TRUE(SaveModel(*model, path).ok());
    // One backend (one library instance, one device context) for all.
    auto library = DispatchLibrary::Load(v.dispatch);
    ASSERT_TRUE(library.ok()) << library.status();
    auto backend = VendorBackend::Create(*std::move(library));
    ASSERT_TRUE(backend.ok()) << backend.status();
    options.dispatch_backends = {*backend};
    options.policy = AcceleratorPolicy::kRequireVendorOps;
  }
  // One mapping of the file for every runtime.
  auto file = MappedFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto load = [&]() -> absl::StatusOr<std::unique_ptr<Runtime>> {
    absl::StatusOr<Model> model =
        LoadModelFromBytes(Bytes::View((*file)->span(), *file), path);
    if (!model.ok()) return model.status();
    model->file = *file;
    return Runtime::LoadModel(*std::move(model), options);
  };

  // The expected outputs: one runtime, one thread, each thread's input.
  auto reference = load();
  ASSERT_TRUE(reference.ok()) << reference.status();
  if (!v.plugin.empty()) {
    ASSERT_GT((*reference)->Report().CountOps(OpReport::Where::kVendor), 0);
  }
  std::vector<std::vector<std::vector<uint8_t>>> inputs, expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(Inputs(**reference, 1000 + t));
    auto out = SetAndInvoke(**reference, inputs.back());
    ASSERT_TRUE(out.ok()) << out.status();
    expected.push_back(*std::move(out));
  }

  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto rt = load();  // loads run concurrently too
      if (!rt.ok()) {
        failures[t] = std::string(rt.status().message());
        return;
      }
      for (int k = 0; k < kInvokes; ++k) {
        auto out = SetAndInvoke(**rt, inputs[t]);
        if (!out.ok()) {
          failures[t] = std::string(out.status().message());
          return;
        }
        if (*out != expected[t]) {
          failures[t] = "outputs differ at invoke " + std::to_string(k);
          return;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], "") << v.name << " thread " << t;
  }
}

INSTANTIATE_TEST_SUITE_P(Vendors, RuntimeThreadsTest,
                         ::testing::ValuesIn(Variants()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace graft
