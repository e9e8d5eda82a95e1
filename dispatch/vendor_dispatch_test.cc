// DispatchLibrary, DeviceContext and Invocation driving the example and null
// dispatch libraries (built in vendors/, paths from the generated config)
// with hand-written example bytecode (vendors/example/BYTECODE.md).
#include "dispatch/vendor_dispatch.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/status.h"
#include "dispatch/vendor_backend.h"
#include "dispatch/vendor_dispatch_test_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::HasSubstr;

// The bit pattern of `value` as the 8 hex digits the bytecode uses.
std::string Hex(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  char text[9];
  std::snprintf(text, sizeof(text), "%08x", static_cast<unsigned>(bits));
  return text;
}

// "    data w0 ... w7\n" lines for `values`.
std::string Data(const std::vector<float>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    out += (i % 8 == 0 ? "    data " : " ") + Hex(values[i]);
    if (i % 8 == 7 || i + 1 == values.size()) out += "\n";
  }
  return out;
}

std::vector<float> RandomFloats(std::mt19937& rng, size_t n, float lo = -3,
                                float hi = 3) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Relative-or-absolute closeness; the example library uses Graft's CPU
// formulas, so on one platform the results are normally bit-identical.
void ExpectClose(const std::vector<float>& actual,
                 const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i],
                1e-5f * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

ManifestVendor ExampleManifest() {
  ManifestVendor m;
  m.vendor = "example";
  m.plugin_name = "libgraft_compiler_plugin_example.so";
  m.plugin_version = "1.0.0";
  m.soc_model = "example-soc-1";
  m.compiler_abi_version = GRAFT_ABI_VERSION;
  m.bytecode_format_version = 1;
  return m;
}

constexpr char kHeader[] = "example-bytecode v1\nsoc example-soc-1\n";

class ExampleDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = DispatchLibrary::Load(GRAFT_EXAMPLE_DISPATCH_LIBRARY);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = std::move(*library);
    auto context = library_->CreateDeviceContext();
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::move(*context);
  }

  // An invocation of `entry` in `bytecode`; the text is kept alive by the
  // invocation itself.
  absl::StatusOr<std::unique_ptr<Invocation>> Create(
      const std::string& bytecode, size_t num_inputs, size_t num_outputs,
      const std::string& entry = "partition_0", bool profiling = false) {
    auto text = std::make_shared<const std::string>(bytecode);
    InvocationSpec spec;
    spec.bytecode = {reinterpret_cast<const uint8_t*>(text->data()),
                     text->size()};
    spec.entry_point = entry;
    spec.num_inputs = num_inputs;
    spec.num_outputs = num_outputs;
    spec.profiling = profiling;
    spec.keep_alive = text;
    return context_->CreateInvocation(spec);
  }

  // Creates, attaches `inputs` and output buffers of the required sizes,
  // invokes, and returns the outputs.
  std::vector<std::vector<float>> Run(
      const std::string& bytecode, const std::vector<std::vector<float>>& inputs,
      size_t num_outputs) {
    auto invocation = Create(bytecode, inputs.size(), num_outputs);
    EXPECT_TRUE(invocation.ok()) << invocation.status();
    if (!invocation.ok()) return {};
    std::vector<std::vector<float>> outputs(num_outputs);
    for (size_t i = 0; i < inputs.size(); ++i) {
      EXPECT_EQ((*invocation)->input_requirements(i).size,
                inputs[i].size() * sizeof(float));
      EXPECT_TRUE((*invocation)
                      ->AttachInput(i, inputs[i].data(),
                                    inputs[i].size() * sizeof(float))
                      .ok());
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      outputs[i].assign((*invocation)->output_requirements(i).size / 4, NAN);
      EXPECT_TRUE((*invocation)
                      ->AttachOutput(i, outputs[i].data(),
                                     outputs[i].size() * sizeof(float))
                      .ok());
    }
    absl::Status status = (*invocation)->Invoke();
    EXPECT_TRUE(status.ok()) << status;
    return outputs;
  }

  std::unique_ptr<DispatchLibrary> library_;
  std::unique_ptr<DeviceContext> context_;
};

// ---------------------------------------------------------------------------
// Loading

TEST_F(ExampleDispatchTest, LoadsAndReportsItsInfo) {
  const DispatchInfo& info = library_->info();
  EXPECT_EQ(info.vendor, "example");
  EXPECT_EQ(info.library_version, "1.0.0");
  EXPECT_EQ(info.abi_version, GRAFT_ABI_VERSION);
  EXPECT_EQ(info.min_bytecode_format_version, 1u);
  EXPECT_EQ(info.max_bytecode_format_version, 1u);
  EXPECT_TRUE(library_->HasCapability(GRAFT_DISPATCH_CAPABILITY_ASYNC));
  EXPECT_TRUE(library_->HasCapability(GRAFT_DISPATCH_CAPABILITY_PROFILING));
  EXPECT_EQ(info.hardware_kinds, uint32_t{GRAFT_HARDWARE_KIND_CPU});
  ASSERT_EQ(info.options.size(), 1u);
  EXPECT_EQ(info.options[0].name, "soc_model");
  EXPECT_EQ(library_->label(), "example dispatch (libgraft_dispatch_example.so)");
}

TEST(DispatchLibraryLoadTest, RejectsAMissingFileNamingIt) {
  auto library = DispatchLibrary::Load("/nonexistent/libgraft_dispatch_x.so");
  ASSERT_FALSE(library.ok());
  EXPECT_THAT(std::string(library.status().message()),
              HasSubstr("/nonexistent/libgraft_dispatch_x.so"));
}

TEST(DispatchLibraryLoadTest, RejectsACompilerPluginAsNotADispatchLibrary) {
  auto library = DispatchLibrary::Load(GRAFT_EXAMPLE_COMPILER_PLUGIN_LIBRARY);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(library.status().message()),
              HasSubstr("not a Graft dispatch library: it does not export "
                        "graft_dispatch_abi_version"));
}

TEST(DispatchLibraryLoadTest, RejectsAnUnknownOptionNamingIt) {
  auto library =
      DispatchLibrary::Load(GRAFT_EXAMPLE_DISPATCH_LIBRARY, {{"colour", "1"}});
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(library.status().message()),
              HasSubstr("unknown option 'colour' (known: soc_model)"));
}

TEST(DispatchLibraryLoadTest, RejectsALibraryWhoseFileNameNamesAnotherVendor) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      absl::StrCat("graft_vendor_dispatch_test_", ::getpid());
  std::filesystem::create_directories(dir);
  const std::filesystem::path copy = dir / "libgraft_dispatch_other.so";
  std::filesystem::copy_file(GRAFT_EXAMPLE_DISPATCH_LIBRARY, copy,
                             std::filesystem::copy_options::overwrite_existing);
  auto library = DispatchLibrary::Load(copy.string());
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(library.ok());
  EXPECT_THAT(std::string(library.status().message()),
              HasSubstr("serves vendor 'example', but its file name says "
                        "otherwise; name it libgraft_dispatch_example.so"));
}

TEST(DispatchLibraryLoadTest, NullSkeletonLoadsAndAnswersUnimplemented) {
  auto library = DispatchLibrary::Load(GRAFT_NULL_DISPATCH_LIBRARY);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->info().vendor, "null");
  EXPECT_EQ((*library)->info().capabilities, 0u);
  ManifestVendor manifest = ExampleManifest();
  manifest.vendor = "null";
  absl::Status check = (*library)->CheckStamp(manifest);
  EXPECT_EQ(check.code(), absl::StatusCode::kUnimplemented);
  auto context = (*library)->CreateDeviceContext();
  ASSERT_FALSE(context.ok());
  EXPECT_EQ(context.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(context.status().message()),
              HasSubstr("null dispatch: device_context_create is not "
                        "implemented; copy vendors/null and fill it in"));
}

// ---------------------------------------------------------------------------
// Finding libraries

TEST(FindDispatchLibraryTest, FindsTheVendorsFileInTheFirstDirHoldingIt) {
  const std::string dir =
      std::filesystem::path(GRAFT_EXAMPLE_DISPATCH_LIBRARY).parent_path();
  auto path = FindDispatchLibrary({"/nonexistent", dir}, "example");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(std::filesystem::path(*path).filename(),
            "libgraft_dispatch_example.so");
  auto library = LoadDispatchLibraryForVendor({dir}, "example");
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->info().vendor, "example");
}

TEST(LoadVendorBackendsTest, PassesEachVendorItsDeviceContextOptions) {
  const std::string dir =
      std::filesystem::path(GRAFT_EXAMPLE_DISPATCH_LIBRARY).parent_path();
  Manifest manifest;
  manifest.vendors.push_back(ExampleManifest());
  std::vector<std::string> missing;
  auto plain = LoadVendorBackends(manifest, {dir}, {}, {}, 4, &missing);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_EQ(plain->size(), 1u);
  // The example library lists no num_threads option, so it gets none; an
  // option given for it reaches its device context (which refuses this one).
  VendorOptions options;
  options["example"] = {{"no_such_option", "1"}};
  options["other_vendor"] = {{"ignored", "1"}};
  auto refused = LoadVendorBackends(manifest, {dir}, {}, options, 4, &missing);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("no_such_option"));
  EXPECT_TRUE(missing.empty());
}

TEST(FindDispatchLibraryTest, SaysWhereItLookedAndWhatToDo) {
  auto path = FindDispatchLibrary({"/a", "/b"}, "example2");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(path.status().message(),
            "no dispatch library for vendor 'example2' in [/a, /b] (looked "
            "for libgraft_dispatch_example2.so): build vendors/example2 or "
            "pass --dispatch-dir");
}

TEST(FindDispatchLibraryTest, RejectsVendorNamesThatCouldEscapeTheDir) {
  auto path = FindDispatchLibrary({"/tmp"}, "../evil");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// Compatibility stamps

TEST_F(ExampleDispatchTest, AcceptsTheExamplePluginsStamp) {
  EXPECT_TRUE(library_->CheckStamp(ExampleManifest()).ok());
  ManifestVendor soc2 = ExampleManifest();
  soc2.soc_model = "example-soc-2";
  EXPECT_TRUE(library_->CheckStamp(soc2).ok());
}

TEST_F(ExampleDispatchTest, ExplainsAStampOfAnotherVendor) {
  ManifestVendor manifest = ExampleManifest();
  manifest.vendor = "acme";
  absl::Status status = library_->CheckStamp(manifest);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("example dispatch (libgraft_dispatch_example.so): "
                        "cannot run the model's 'acme' bytecode"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("bytecode is for vendor 'acme', not 'example'; it "
                        "needs that vendor's libgraft_dispatch_acme.so"));
}

TEST_F(ExampleDispatchTest, ExplainsAnUnsupportedBytecodeFormatVersion) {
  ManifestVendor manifest = ExampleManifest();
  manifest.bytecode_format_version = 2;
  absl::Status status = library_->CheckStamp(manifest);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("bytecode format version 2 not supported (this "
                        "library runs 1 to 1)"));
}

TEST_F(ExampleDispatchTest, ExplainsASocMismatch) {
  ManifestVendor manifest = ExampleManifest();
  manifest.soc_model = "example-soc-9";
  absl::Status status = library_->CheckStamp(manifest);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("compiled for unknown SoC model 'example-soc-9'"));

  auto soc1 = DispatchLibrary::Load(GRAFT_EXAMPLE_DISPATCH_LIBRARY,
                                    {{"soc_model", "example-soc-1"}});
  ASSERT_TRUE(soc1.ok()) << soc1.status();
  manifest.soc_model = "example-soc-2";
  status = (*soc1)->CheckStamp(manifest);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("compiled for SoC model 'example-soc-2' cannot run on "
                        "this device (example-soc-1)"));
}

// ---------------------------------------------------------------------------
// Running

// x[2,4] -> add c[4] -> relu -> fully_connected(w[3,4], b[3], relu6).
TEST_F(ExampleDispatchTest, RunsAddReluFullyConnectedLikeADirectComputation) {
  const unsigned seed = 20240611;
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 rng(seed);
  const std::vector<float> x = RandomFloats(rng, 8);
  const std::vector<float> c = RandomFloats(rng, 4);
  const std::vector<float> w = RandomFloats(rng, 12, -1, 1);
  const std::vector<float> b = RandomFloats(rng, 3);
  const std::string bytecode = absl::StrCat(
      kHeader,
      "entry partition_0\n"
      "  input t0 f32[2,4]\n"
      "  const t1 f32[4]\n",
      Data(c), "  const t4 f32[3,4]\n", Data(w), "  const t5 f32[3]\n",
      Data(b),
      "  tensor t2 f32[2,4]\n"
      "  tensor t3 f32[2,4]\n"
      "  tensor t6 f32[2,3]\n"
      "  add t2 = t0, t1 act=none\n"
      "  relu t3 = t2\n"
      "  fully_connected t6 = t3, t4, t5 act=relu6\n"
      "  output t6\n"
      "end\n");

  std::vector<float> expected(6);
  for (int n = 0; n < 2; ++n) {
    float r[4];
    for (int k = 0; k < 4; ++k) r[k] = std::max(x[n * 4 + k] + c[k], 0.0f);
    for (int u = 0; u < 3; ++u) {
      float sum = b[u];
      for (int k = 0; k < 4; ++k) sum += w[u * 4 + k] * r[k];
      expected[n * 3 + u] = std::min(std::max(sum, 0.0f), 6.0f);
    }
  }
  std::vector<std::vector<float>> out = Run(bytecode, {x}, 1);
  ASSERT_EQ(out.size(), 1u);
  ExpectClose(out[0], expected);
}

TEST_F(ExampleDispatchTest, BroadcastsScalarsAndTrailingRows) {
  const std::vector<float> a = {1, -2, 3, -4, 5, -6};
  const std::string bytecode = absl::StrCat(
      kHeader,
      "entry partition_0\n"
      "  input t0 f32[2,3]\n"
      "  const t1 f32[1,3]\n",
      Data({10, 20, 30}), "  const t2 f32[]\n", Data({2}),
      "  tensor t3 f32[2,3]\n"
      "  tensor t4 f32[2,3]\n"
      "  tensor t5 f32[2,3]\n"
      "  tensor t6 f32[2,3]\n"
      "  sub t3 = t1, t0 act=none\n"
      "  mul t4 = t3, t2 act=relu\n"
      "  div t5 = t4, t1 act=relu6\n"
      "  add t6 = t2, t5 act=none\n"
      "  output t6\n"
      "  output t3\n"
      "end\n");
  std::vector<float> sub(6), result(6);
  const float row[3] = {10, 20, 30};
  for (int i = 0; i < 6; ++i) {
    sub[i] = row[i % 3] - a[i];
    float mul = std::max(sub[i] * 2.0f, 0.0f);
    float div = std::min(std::max(mul / row[i % 3], 0.0f), 6.0f);
    result[i] = 2.0f + div;
  }
  std::vector<std::vector<float>> out = Run(bytecode, {a}, 2);
  ASSERT_EQ(out.size(), 2u);
  ExpectClose(out[0], result);
  ExpectClose(out[1], sub);
}

TEST_F(ExampleDispatchTest, RunsActivationsWithTheCpuKernelsFormulas) {
  const std::vector<float> x = {-20, -3, -0.5f, 0, 0.25f, 2, 7, 30, NAN};
  const std::string bytecode = absl::StrCat(
      kHeader,
      "entry partition_0\n"
      "  input t0 f32[9]\n"
      "  tensor t1 f32[9]\n"
      "  tensor t2 f32[9]\n"
      "  tensor t3 f32[9]\n"
      "  tensor t4 f32[9]\n"
      "  logistic t1 = t0\n"
      "  tanh t2 = t0\n"
      "  relu t3 = t0\n"
      "  relu6 t4 = t0\n"
      "  output t1\n"
      "  output t2\n"
      "  output t3\n"
      "  output t4\n"
      "end\n");
  std::vector<std::vector<float>> out = Run(bytecode, {x}, 4);
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    EXPECT_EQ(out[0][i], 1.0f / (1.0f + std::exp(-x[i]))) << i;
    EXPECT_EQ(out[1][i], std::tanh(x[i])) << i;
    EXPECT_EQ(out[2][i], std::max(x[i], 0.0f)) << i;
    EXPECT_EQ(out[3][i], std::min(std::max(x[i], 0.0f), 6.0f)) << i;
  }
  // NaN passes through the activations, as std::max / std::min let it.
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(std::isnan(out[k][8])) << k;
}

TEST_F(ExampleDispatchTest, CopiesAnInputThatIsAlsoAnOutput) {
  const std::string bytecode = absl::StrCat(kHeader,
                                            "entry partition_0\n"
                                            "  input t0 f32[3]\n"
                                            "  input t1 f32[3]\n"
                                            "  tensor t2 f32[3]\n"
                                            "  add t2 = t0, t1 act=none\n"
                                            "  output t2\n"
                                            "  output t1\n"
                                            "end\n");
  std::vector<std::vector<float>> out =
      Run(bytecode, {{1, 2, 3}, {10, 20, 30}}, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(out[1], (std::vector<float>{10, 20, 30}));
}

TEST_F(ExampleDispatchTest, PicksTheEntryPointOfAModuleWithSeveral) {
  const std::string bytecode = absl::StrCat(kHeader,
                                            "entry partition_0\n"
                                            "  input t0 f32[2]\n"
                                            "  tensor t1 f32[2]\n"
                                            "  relu t1 = t0\n"
                                            "  output t1\n"
                                            "end\n"
                                            "# a comment, and a blank line\n"
                                            "\n"
                                            "entry partition_1\n"
                                            "  input t0 f32[2]\n"
                                            "  tensor t1 f32[2]\n"
                                            "  tanh t1 = t0\n"
                                            "  output t1\n"
                                            "end\n");
  auto invocation = Create(bytecode, 1, 1, "partition_1");
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  const float in[2] = {-1, 0.5f};
  float out[2] = {0, 0};
  ASSERT_TRUE((*invocation)->AttachInput(0, in, sizeof(in)).ok());
  ASSERT_TRUE((*invocation)->AttachOutput(0, out, sizeof(out)).ok());
  ASSERT_TRUE((*invocation)->Invoke().ok());
  EXPECT_EQ(out[0], std::tanh(-1.0f));
  EXPECT_EQ(out[1], std::tanh(0.5f));

  auto missing = Create(bytecode, 1, 1, "partition_7");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("entry point 'partition_7' is not in the module (it "
                        "has: partition_0, partition_1)"));
}

constexpr char kReluProgram[] =
    "example-bytecode v1\n"
    "soc example-soc-1\n"
    "entry partition_0\n"
    "  input t0 f32[4]\n"
    "  tensor t1 f32[4]\n"
    "  relu t1 = t0\n"
    "  output t1\n"
    "end\n";

TEST_F(ExampleDispatchTest, ReattachedBuffersAreUsedByTheNextRun) {
  auto invocation = Create(kReluProgram, 1, 1);
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  Invocation& inv = **invocation;
  float in_a[4] = {-1, 2, -3, 4}, in_b[4] = {5, -6, 7, -8};
  float out_a[4] = {}, out_b[4] = {};
  ASSERT_TRUE(inv.AttachInput(0, in_a, sizeof(in_a)).ok());
  ASSERT_TRUE(inv.AttachOutput(0, out_a, sizeof(out_a)).ok());
  ASSERT_TRUE(inv.Invoke().ok());
  EXPECT_EQ(std::vector<float>(out_a, out_a + 4),
            (std::vector<float>{0, 2, 0, 4}));
  // Same pointers again: no call into the library, same result.
  ASSERT_TRUE(inv.AttachInput(0, in_a, sizeof(in_a)).ok());
  ASSERT_TRUE(inv.AttachInput(0, in_b, sizeof(in_b)).ok());
  ASSERT_TRUE(inv.AttachOutput(0, out_b, sizeof(out_b)).ok());
  ASSERT_TRUE(inv.Invoke().ok());
  EXPECT_EQ(std::vector<float>(out_b, out_b + 4),
            (std::vector<float>{5, 0, 7, 0}));
  EXPECT_EQ(std::vector<float>(out_a, out_a + 4),
            (std::vector<float>{0, 2, 0, 4}));
  // Inputs are rewritten in place between runs.
  in_b[1] = 9;
  ASSERT_TRUE(inv.Invoke().ok());
  EXPECT_EQ(out_b[1], 9);
}

TEST_F(ExampleDispatchTest, RefusesToInvokeBeforeEverythingIsAttached) {
  auto invocation = Create(kReluProgram, 1, 1);
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  float in[4] = {};
  ASSERT_TRUE((*invocation)->AttachInput(0, in, sizeof(in)).ok());
  absl::Status status = (*invocation)->Invoke();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("entry 'partition_0': invoke: example dispatch: "
                        "output 0 is not attached"));
}

TEST_F(ExampleDispatchTest, RefusesBuffersThatAreTooSmallMisalignedOrOutOfRange) {
  auto invocation = Create(kReluProgram, 1, 1);
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  Invocation& inv = **invocation;
  EXPECT_EQ(inv.input_requirements(0).size, 16u);
  EXPECT_EQ(inv.input_requirements(0).alignment, 4u);
  EXPECT_EQ(inv.input_requirements(0).element_type, GRAFT_ELEMENT_TYPE_FLOAT32);
  alignas(8) float buffer[8] = {};
  absl::Status small = inv.AttachInput(0, buffer, 12);
  EXPECT_EQ(small.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(small.message()),
              HasSubstr("input 0 needs 16 bytes aligned to 4, got 12 bytes"));
  absl::Status misaligned = inv.AttachOutput(
      0, reinterpret_cast<char*>(buffer) + 1, sizeof(buffer) - 1);
  EXPECT_EQ(misaligned.code(), absl::StatusCode::kInvalidArgument);
  // Refused by the host from the stated alignment, before the library sees
  // the pointer (issue 17).
  EXPECT_THAT(std::string(misaligned.message()),
              HasSubstr("output 0 needs 4-byte aligned memory"));
  EXPECT_EQ(inv.AttachInput(1, buffer, sizeof(buffer)).code(),
            absl::StatusCode::kOutOfRange);
}

TEST_F(ExampleDispatchTest, RunsAsynchronouslyThroughInvokeAsyncAndWait) {
  auto invocation = Create(kReluProgram, 1, 1);
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  Invocation& inv = **invocation;
  EXPECT_EQ(inv.Wait().code(), absl::StatusCode::kFailedPrecondition);
  float in[4] = {-1, 1, -2, 2}, out[4] = {};
  ASSERT_TRUE(inv.AttachInput(0, in, sizeof(in)).ok());
  ASSERT_TRUE(inv.AttachOutput(0, out, sizeof(out)).ok());
  ASSERT_TRUE(inv.InvokeAsync().ok());
  EXPECT_EQ(inv.InvokeAsync().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(inv.Wait().ok());
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{0, 1, 0, 2}));
  // Left in flight: the destructor waits before destroying.
  ASSERT_TRUE(inv.InvokeAsync().ok());
}

TEST_F(ExampleDispatchTest, ProfilesEachInstructionWithItsLine) {
  const std::string bytecode = absl::StrCat(kHeader,
                                            "entry partition_0\n"
                                            "  input t0 f32[4]\n"
                                            "  tensor t1 f32[4]\n"
                                            "  tensor t2 f32[4]\n"
                                            "  relu t1 = t0\n"
                                            "  tanh t2 = t1\n"
                                            "  output t2\n"
                                            "  output t0\n"
                                            "end\n");
  auto invocation = Create(bytecode, 1, 2, "partition_0", /*profiling=*/true);
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  Invocation& inv = **invocation;
  auto before = inv.Profile();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_TRUE(before->empty());
  float in[4] = {1, 2, 3, 4}, out0[4], out1[4];
  ASSERT_TRUE(inv.AttachInput(0, in, sizeof(in)).ok());
  ASSERT_TRUE(inv.AttachOutput(0, out0, sizeof(out0)).ok());
  ASSERT_TRUE(inv.AttachOutput(1, out1, sizeof(out1)).ok());
  ASSERT_TRUE(inv.Invoke().ok());
  auto events = inv.Profile();
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0].name, "relu t1");
  EXPECT_EQ((*events)[0].vendor_location, 7u);
  EXPECT_EQ((*events)[1].name, "tanh t2");
  EXPECT_EQ((*events)[1].vendor_location, 8u);
  EXPECT_EQ((*events)[2].name, "copy outputs");
  EXPECT_EQ((*events)[2].vendor_location, 0u);
  for (const ProfileEvent& e : *events) EXPECT_LE(e.start_ns, e.end_ns);

  auto plain = Create(bytecode, 1, 2);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->Profile().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(ExampleDispatchTest, InvocationsKeepTheirLibraryAlive) {
  auto invocation = Create(kReluProgram, 1, 1);
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  context_.reset();
  library_.reset();
  float in[4] = {-1, 1, -1, 1}, out[4] = {};
  ASSERT_TRUE((*invocation)->AttachInput(0, in, sizeof(in)).ok());
  ASSERT_TRUE((*invocation)->AttachOutput(0, out, sizeof(out)).ok());
  ASSERT_TRUE((*invocation)->Invoke().ok());
  EXPECT_EQ(out[1], 1);
}

TEST_F(ExampleDispatchTest, UsesBytecodeInPlaceInsideTheMappedModel) {
  // A stand-in for a mapped compiled model: the module at a 64-byte offset.
  std::vector<uint8_t> model(64, 0);
  model.insert(model.end(), kReluProgram, kReluProgram + sizeof(kReluProgram) - 1);
  model.resize(model.size() + 32, 0);
  InvocationSpec spec;
  spec.bytecode = {model.data() + 64, sizeof(kReluProgram) - 1};
  spec.model = {model.data(), model.size()};
  spec.entry_point = "partition_0";
  spec.num_inputs = 1;
  spec.num_outputs = 1;
  auto invocation = context_->CreateInvocation(spec);
  ASSERT_TRUE(invocation.ok()) << invocation.status();

  std::vector<uint8_t> elsewhere(kReluProgram,
                                 kReluProgram + sizeof(kReluProgram) - 1);
  spec.bytecode = {elsewhere.data(), elsewhere.size()};
  auto outside = context_->CreateInvocation(spec);
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(std::string(outside.status().message()),
              HasSubstr("the bytecode does not lie inside the model mapping"));
}

TEST_F(ExampleDispatchTest, ReadsBufferConstantsInPlaceFromTheModelBuffers) {
  // "const t1 f32[4] buffer 2": the values are the model's buffer 2, which
  // the host passes by id (graft_dispatch_invocation_desc_t.model_buffers).
  const std::string bytecode = absl::StrCat(kHeader,
                                            "entry partition_0\n"
                                            "  input t0 f32[4]\n"
                                            "  const t1 f32[4] buffer 2\n"
                                            "  tensor t2 f32[4]\n"
                                            "  mul t2 = t0, t1 act=none\n"
                                            "  output t2\n"
                                            "end\n");
  alignas(16) float weights[5] = {2, -3, 0.5f, 10, 99};
  auto text = std::make_shared<const std::string>(bytecode);
  // Creates an invocation whose buffer `buffer_id` of 3 is `values`; then
  // calls `before_run` and runs it on {1, 2, 3, 4}.
  auto run = [&](const std::string& code, const float* values, size_t bytes,
                 const std::function<void()>& before_run =
                     [] {}) -> absl::StatusOr<std::vector<float>> {
    auto buffers = std::make_shared<std::vector<graft_byte_span_t>>(3);
    (*buffers)[2] = {reinterpret_cast<const uint8_t*>(values), bytes};
    InvocationSpec spec;
    spec.bytecode = {reinterpret_cast<const uint8_t*>(code.data()),
                     code.size()};
    spec.entry_point = "partition_0";
    spec.num_inputs = spec.num_outputs = 1;
    spec.model_buffers = buffers;
    GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<Invocation> inv,
                           context_->CreateInvocation(spec));
    before_run();
    float in[4] = {1, 2, 3, 4};
    std::vector<float> out(4, NAN);
    GRAFT_RETURN_IF_ERROR(inv->AttachInput(0, in, sizeof(in)));
    GRAFT_RETURN_IF_ERROR(inv->AttachOutput(0, out.data(), 16));
    GRAFT_RETURN_IF_ERROR(inv->Invoke());
    return out;
  };
  auto result = run(bytecode, weights, 16);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, (std::vector<float>{2, -6, 1.5f, 40}));
  // In place: a change to the buffer after create shows in the run.
  result = run(bytecode, weights, 16, [&] { weights[0] = 5; });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, (std::vector<float>{5, -6, 1.5f, 40}));
  weights[0] = 2;

  // A misaligned buffer is copied at create, with the same result.
  alignas(16) uint8_t shifted[17];
  std::memcpy(shifted + 1, weights, 16);
  result = run(bytecode, reinterpret_cast<const float*>(shifted + 1), 16,
               [&] { shifted[1] ^= 0xff; });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, (std::vector<float>{2, -6, 1.5f, 40}));

  result = run(bytecode, weights, 20);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("model buffer 2 holds 20 bytes, the constant needs 16"));
  result = run(absl::StrReplaceAll(bytecode, {{"buffer 2", "buffer 7"}}),
               weights, 16);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("refers to model buffer 7, but the model has 3"));

  // A host that passes no buffers (before ABI 1.1) gets a clear refusal.
  auto missing = Create(bytecode, 1, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("passed no model buffers"));
}

// A backend shared by several runtimes builds the model-buffer table once
// per load, keyed by DispatchOpInfo::load_id, never by the Model's address:
// two loads of one Model object (the same address, as a freed and
// reallocated Model may have) with different buffers each see their own.
TEST(VendorBackendTest, GivesEachLoadItsOwnModelBuffers) {
  auto library = DispatchLibrary::Load(GRAFT_EXAMPLE_DISPATCH_LIBRARY);
  ASSERT_TRUE(library.ok()) << library.status();
  auto backend = VendorBackend::Create(std::move(*library));
  ASSERT_TRUE(backend.ok()) << backend.status();
  const std::string code = absl::StrCat(kHeader,
                                        "entry partition_0\n"
                                        "  input t0 f32[4]\n"
                                        "  const t1 f32[4] buffer 1\n"
                                        "  tensor t2 f32[4]\n"
                                        "  mul t2 = t0, t1 act=none\n"
                                        "  output t2\n"
                                        "end\n");
  DispatchOpOptions options;
  options.vendor = "example";
  options.entry_point = "partition_0";
  alignas(16) float in_data[4] = {1, 2, 3, 4};
  Tensor in, out;
  in.shape = out.shape = {4};
  in.bytes = out.bytes = sizeof(in_data);
  in.raw_data = reinterpret_cast<uint8_t*>(in_data);
  Model model;
  model.buffers.resize(2);
  auto run = [&](uint64_t load_id,
                 std::vector<float> weights) -> absl::StatusOr<std::vector<float>> {
    model.buffers[1].data = Bytes::Own(std::vector<uint8_t>(
        reinterpret_cast<const uint8_t*>(weights.data()),
        reinterpret_cast<const uint8_t*>(weights.data() + weights.size())));
    const Tensor* ins[] = {&in};
    const Tensor* outs[] = {&out};
    DispatchOpInfo info;
    info.options = &options;
    info.module = Bytes::Copy(absl::MakeConstSpan(
        reinterpret_cast<const uint8_t*>(code.data()), code.size()));
    info.inputs = ins;
    info.outputs = outs;
    info.model = &model;
    info.load_id = load_id;
    GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<DispatchExecutable> exe,
                           (*backend)->Prepare(info));
    std::vector<float> result(4, NAN);
    out.raw_data = reinterpret_cast<uint8_t*>(result.data());
    Tensor* out_ptrs[] = {&out};
    GRAFT_RETURN_IF_ERROR(exe->Execute(ins, out_ptrs));
    return result;
  };
  auto first = run(1, {2, 2, 2, 2});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first, (std::vector<float>{2, 4, 6, 8}));
  auto second = run(2, {-1, 0, 1, 10});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*second, (std::vector<float>{-1, 0, 3, 40}));
}

// ---------------------------------------------------------------------------
// Malformed bytecode: a clear status naming the line, never a crash

struct MalformedCase {
  const char* name;
  std::string body;  // after the header (lines 1-2); line 3 is "entry ..."
  absl::StatusCode code;
  std::string message;
  size_t num_inputs = 1;
};

class MalformedBytecodeTest
    : public ExampleDispatchTest,
      public ::testing::WithParamInterface<MalformedCase> {};

TEST_P(MalformedBytecodeTest, IsRefusedWithAClearMessage) {
  const MalformedCase& c = GetParam();
  auto invocation = Create(kHeader + c.body, c.num_inputs, 1);
  ASSERT_FALSE(invocation.ok());
  EXPECT_EQ(invocation.status().code(), c.code) << invocation.status();
  EXPECT_THAT(std::string(invocation.status().message()), HasSubstr(c.message));
  EXPECT_THAT(std::string(invocation.status().message()),
              HasSubstr("example dispatch (libgraft_dispatch_example.so) "
                        "entry 'partition_0': example dispatch:"));
}

const MalformedCase kMalformedCases[] = {
    {"UnknownInstruction",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  conv t1 = t0\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "bytecode line 6 ('conv t1 = t0'): unknown instruction 'conv'"},
    {"UndeclaredTensor",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  add t1 = t0, t9 act=none\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "bytecode line 6 ('add t1 = t0, t9 act=none'): t9 is not declared"},
    {"ReadBeforeWrite",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  tensor t2 f32[4]\n  relu t2 = t1\n  relu t1 = t0\n  output t2\nend\n",
     absl::StatusCode::kInvalidArgument,
     "line 7 ('relu t2 = t1'): reads t1 before any instruction writes it"},
    {"WrittenTwice",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  relu t1 = t0\n  tanh t1 = t0\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "line 7 ('tanh t1 = t0'): t1 is written twice (first at line 6)"},
    {"WritesAnInput",
     "entry partition_0\n  input t0 f32[4]\n  relu t0 = t0\n  output t0\n"
     "end\n",
     absl::StatusCode::kInvalidArgument,
     "writes t0, which is an input; instructions write only values declared "
     "with 'tensor'"},
    {"TooFewConstValues",
     "entry partition_0\n  input t0 f32[4]\n  const t1 f32[4]\n"
     "    data 3f800000 3f800000\n  tensor t2 f32[4]\n"
     "  add t2 = t0, t1 act=none\n  output t2\nend\n",
     absl::StatusCode::kInvalidArgument,
     "line 5 ('const t1 f32[4]'): const t1 has 2 values, expected 4"},
    {"TooManyConstValues",
     "entry partition_0\n  input t0 f32[4]\n  const t1 f32[1]\n"
     "    data 3f800000 3f800000\n  tensor t2 f32[4]\n"
     "  add t2 = t0, t1 act=none\n  output t2\nend\n",
     absl::StatusCode::kInvalidArgument,
     "line 6 ('data 3f800000 3f800000'): more values than the 1 of const t1"},
    {"BadHexWord",
     "entry partition_0\n  input t0 f32[4]\n  const t1 f32[1]\n"
     "    data 3f80zz00\n  tensor t2 f32[4]\n"
     "  add t2 = t0, t1 act=none\n  output t2\nend\n",
     absl::StatusCode::kInvalidArgument,
     "'3f80zz00' is not a float32 bit pattern (8 hex digits)"},
    {"ConstValuesBeyondTheModule",
     "entry partition_0\n  input t0 f32[4]\n  const t1 f32[100000000]\n",
     absl::StatusCode::kInvalidArgument,
     "declares 100000000 values, but only 0 bytes of bytecode follow"},
    {"HugeTensor",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[65536,65536]\n"
     "  relu t1 = t0\n  output t1\nend\n",
     absl::StatusCode::kResourceExhausted, "line 5 ('tensor t1 f32[65536,65536]')"},
    {"OverflowingDimension",
     "entry partition_0\n  input t0 f32[99999999999999999999999]\n"
     "  output t0\nend\n",
     absl::StatusCode::kResourceExhausted, "dimension too large"},
    {"UnsupportedElementType",
     "entry partition_0\n  input t0 i8[4]\n  output t0\nend\n",
     absl::StatusCode::kInvalidArgument,
     "element type 'i8' not supported (f32 only)"},
    {"MalformedShape",
     "entry partition_0\n  input t0 f32[4,]\n  output t0\nend\n",
     absl::StatusCode::kInvalidArgument, "malformed shape"},
    {"BadTensorId",
     "entry partition_0\n  input x0 f32[4]\n  output x0\nend\n",
     absl::StatusCode::kInvalidArgument,
     "'x0' is not a tensor id (t<number>)"},
    {"DeclaredTwice",
     "entry partition_0\n  input t0 f32[4]\n  tensor t0 f32[4]\n"
     "  output t0\nend\n",
     absl::StatusCode::kInvalidArgument,
     "line 5 ('tensor t0 f32[4]'): t0 is declared twice (first at line 4)"},
    {"DeclarationAfterInstruction",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  relu t1 = t0\n  tensor t2 f32[4]\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "declaration after the first instruction"},
    {"InstructionAfterOutput",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  output t0\n  relu t1 = t0\nend\n",
     absl::StatusCode::kInvalidArgument, "instruction after an output line"},
    {"OutputNeverWritten",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "output t1 is never written; an output must be an input or written by "
     "an instruction"},
    {"NoOutput",
     "entry partition_0\n  input t0 f32[4]\nend\n",
     absl::StatusCode::kInvalidArgument, "the entry has no output line"},
    {"MissingEnd",
     "entry partition_0\n  input t0 f32[4]\n  output t0\n",
     absl::StatusCode::kInvalidArgument,
     "the entry starting at line 3 has no 'end' (the module ends first)"},
    {"MissingEndBeforeNextEntry",
     "entry partition_0\n  input t0 f32[4]\n  output t0\n"
     "entry partition_1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "line 6 ('entry partition_1'): the entry starting at line 3 has no "
     "'end' before the next entry"},
    {"DuplicateEntryName",
     "entry partition_0\n  input t0 f32[4]\n  output t0\nend\n"
     "entry partition_0\n  input t0 f32[4]\n  output t0\nend\n",
     absl::StatusCode::kInvalidArgument,
     "line 7 ('entry partition_0'): entry name used twice in one module"},
    {"WrongOperandCount",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  add t1 = t0 act=none\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument, "expected 'add tD = tA, tB act=A'"},
    {"UnknownActivation",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[4]\n"
     "  add t1 = t0, t0 act=tanh\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "expected act=none, act=relu or act=relu6 as the last field"},
    {"BroadcastOutsideTheRule",
     "entry partition_0\n  input t0 f32[1,4]\n  const t1 f32[4,1]\n"
     "    data 00000000 00000000 00000000 00000000\n  tensor t2 f32[4,4]\n"
     "  add t2 = t0, t1 act=none\n  output t2\nend\n",
     absl::StatusCode::kInvalidArgument,
     "operand shapes [1,4] and [4,1] do not broadcast to [4,4]"},
    {"UnaryShapeMismatch",
     "entry partition_0\n  input t0 f32[4]\n  tensor t1 f32[2,2]\n"
     "  tanh t1 = t0\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "destination shape [2,2] differs from source shape [4]"},
    {"FullyConnectedWeightsNotConstant",
     "entry partition_0\n  input t0 f32[1,4]\n  tensor t1 f32[1,4]\n"
     "  fully_connected t1 = t0, t0, - act=none\n  output t1\nend\n",
     absl::StatusCode::kInvalidArgument,
     "weights t0 must be a constant of shape [units,depth]"},
    {"FullyConnectedWrongOutputShape",
     "entry partition_0\n  input t0 f32[2,2]\n  const t1 f32[3,2]\n"
     "    data 00000000 00000000 00000000 00000000 00000000 00000000\n"
     "  tensor t2 f32[4,3]\n"
     "  fully_connected t2 = t0, t1, - act=none\n  output t2\nend\n",
     absl::StatusCode::kInvalidArgument,
     "destination shape [4,3], expected [2,3]"},
    {"InputCountDiffersFromTheDispatchOp",
     "entry partition_0\n  input t0 f32[4]\n  output t0\nend\n",
     absl::StatusCode::kInvalidArgument,
     "entry 'partition_0' has 1 input(s) and 1 output(s), but the dispatch "
     "op passes 2 and 1",
     2},
    {"NoEntry", "", absl::StatusCode::kInvalidArgument,
     "bytecode module has no entry"},
    {"GarbageBytes",
     std::string("entry partition_0\n  input t0 f32[4]\n  \x01\xff\x7f\n"
                 "end\n"),
     absl::StatusCode::kInvalidArgument,
     "line 5 ('?\?\?'): unknown instruction '?\?\?'"},
};

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedBytecodeTest, ::testing::ValuesIn(kMalformedCases),
    [](const ::testing::TestParamInfo<MalformedCase>& info) {
      return std::string(info.param.name);
    });

TEST_F(ExampleDispatchTest, RefusesAnotherHeaderOrFormatVersion) {
  auto other = Create("protobuf\n", 1, 1);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(other.status().message()),
              HasSubstr("bytecode line 1 ('protobuf'): not example bytecode"));

  auto v2 = Create("example-bytecode v2\nsoc example-soc-1\n", 1, 1);
  ASSERT_FALSE(v2.ok());
  EXPECT_EQ(v2.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(v2.status().message()),
              HasSubstr("bytecode format v2 not supported (this library runs "
                        "v1)"));

  auto soc = Create("example-bytecode v1\nsoc acme-soc\n", 1, 1);
  ASSERT_FALSE(soc.ok());
  EXPECT_EQ(soc.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(soc.status().message()),
              HasSubstr("unknown SoC model 'acme-soc'"));
}

}  // namespace
}  // namespace graft
