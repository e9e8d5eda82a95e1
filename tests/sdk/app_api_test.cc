// The app C API (c_api/graft_app.h) through the built libgraft.so: loading,
// signatures, tensor descriptions, copy and zero-copy I/O against the
// generated models' reference outputs, resizing, reports, the profile,
// on-device compile and apply with the example vendor, and the errors.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/test_support.h"
#include "dispatch/npy.h"
#include "graft_app.h"
#include "gtest/gtest.h"
#include "sdk_test_config.h"

namespace {

using graft::testing::SourceDir;
using graft::testing::TempDir;

std::string Generated(const std::string& name) {
  return SourceDir() + "/test_models/generated/" + name;
}

// The status's message, released; "" for OK.
std::string Take(graft_status_t* st) {
  std::string message = st == nullptr ? "" : st->message;
  graft_status_release(st);
  return message;
}

#define ASSERT_GRAFT_OK(expr)             \
  do {                                    \
    graft_status_t* st_ = (expr);         \
    ASSERT_EQ(st_, nullptr) << Take(st_); \
  } while (0)

// Expects `expr` to fail with `code` and a message containing `text`.
void ExpectError(graft_status_t* st, graft_status_code_t code,
                 const std::string& text) {
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, code) << st->message;
  EXPECT_NE(std::string(st->message).find(text), std::string::npos)
      << st->message;
  graft_status_release(st);
}

std::vector<float> Floats(const graft::NpyArray& a) {
  std::vector<float> out(a.data.size() / sizeof(float));
  std::memcpy(out.data(), a.data.data(), a.data.size());
  return out;
}

void ExpectNear(const void* data, size_t size, const std::vector<float>& want) {
  ASSERT_EQ(size, want.size() * sizeof(float));
  const float* got = static_cast<const float*>(data);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::fabs(want[i])) << i;
  }
}

struct ModelDeleter {
  void operator()(graft_model_t* m) const { graft_model_destroy(m); }
};
using ModelPtr = std::unique_ptr<graft_model_t, ModelDeleter>;

ModelPtr Open(const std::string& path, const graft_model_options_t* options) {
  graft_model_t* m = nullptr;
  graft_status_t* st = graft_model_create_from_file(path.c_str(), options, &m);
  EXPECT_EQ(st, nullptr) << Take(st);
  return ModelPtr(m);
}

TEST(AppApi, ReportsItsVersions) {
  EXPECT_EQ(graft_app_api_version(), GRAFT_APP_API_VERSION);
  EXPECT_STREQ(graft_version(), GRAFT_TEST_PROJECT_VERSION);
  // The build tree's libgraft.so sits beside vendor_libs/.
  EXPECT_NE(std::string(graft_default_vendor_dir()).find("vendor_libs"),
            std::string::npos)
      << graft_default_vendor_dir();
}

TEST(AppApi, RunsASignatureByNameAgainstTheReference) {
  ModelPtr model = Open(Generated("two_signatures_float.tflite"), nullptr);
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(graft_model_signature_count(model.get()), 2u);
  graft_signature_t* sig = nullptr;
  ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), "encode", &sig));
  EXPECT_STREQ(graft_signature_key(sig), "encode");
  size_t in = 9, out = 9;
  ASSERT_GRAFT_OK(graft_signature_find_input(sig, "x", &in));
  ASSERT_GRAFT_OK(graft_signature_find_output(sig, "code", &out));
  EXPECT_EQ(in, 0u);
  EXPECT_EQ(out, 0u);

  const graft_tensor_info_t* info = nullptr;
  ASSERT_GRAFT_OK(graft_signature_get_input_info(sig, in, &info));
  EXPECT_STREQ(info->name, "x");
  EXPECT_EQ(info->element_type, GRAFT_ELEMENT_TYPE_FLOAT32);
  ASSERT_EQ(info->num_dims, 2u);
  EXPECT_EQ(info->dims[0], 1);
  EXPECT_EQ(info->dims[1], 8);
  EXPECT_EQ(info->byte_size, 8 * sizeof(float));
  EXPECT_EQ(info->quantization, nullptr);

  auto x = graft::ReadNpy(Generated("two_signatures_float/encode/input_x.npy"));
  auto code =
      graft::ReadNpy(Generated("two_signatures_float/encode/output_code.npy"));
  ASSERT_TRUE(x.ok() && code.ok());
  ASSERT_GRAFT_OK(
      graft_signature_set_input(sig, in, x->data.data(), x->data.size()));
  ASSERT_GRAFT_OK(graft_signature_invoke(sig));
  const void* data = nullptr;
  size_t size = 0;
  ASSERT_GRAFT_OK(graft_signature_get_output_buffer(sig, out, &data, &size));
  ExpectNear(data, size, Floats(*code));
}

TEST(AppApi, ZeroCopyThroughTheRuntimeBufferAndTheCallersMemory) {
  ModelPtr model = Open(Generated("two_signatures_float.tflite"), nullptr);
  ASSERT_NE(model, nullptr);
  graft_signature_t* sig = nullptr;
  ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), "encode", &sig));
  auto x = graft::ReadNpy(Generated("two_signatures_float/encode/input_x.npy"));
  auto code =
      graft::ReadNpy(Generated("two_signatures_float/encode/output_code.npy"));
  ASSERT_TRUE(x.ok() && code.ok());

  // Fill the runtime's own input buffer in place.
  void* in = nullptr;
  size_t in_size = 0;
  ASSERT_GRAFT_OK(graft_signature_get_input_buffer(sig, 0, &in, &in_size));
  ASSERT_EQ(in_size, x->data.size());
  std::memcpy(in, x->data.data(), in_size);
  ASSERT_GRAFT_OK(graft_signature_invoke(sig));
  const void* out = nullptr;
  size_t out_size = 0;
  ASSERT_GRAFT_OK(graft_signature_get_output_buffer(sig, 0, &out, &out_size));
  ExpectNear(out, out_size, Floats(*code));

  // Bound caller memory: the runtime reads and writes it directly.
  std::vector<float> mine_in = Floats(*x), mine_out(4, -1.0f);
  ASSERT_GRAFT_OK(graft_signature_bind_input(sig, 0, mine_in.data(),
                                             mine_in.size() * sizeof(float)));
  ASSERT_GRAFT_OK(graft_signature_bind_output(sig, 0, mine_out.data(),
                                              mine_out.size() * sizeof(float)));
  ASSERT_GRAFT_OK(graft_signature_invoke(sig));
  ExpectNear(mine_out.data(), mine_out.size() * sizeof(float), Floats(*code));
  ASSERT_GRAFT_OK(graft_signature_get_output_buffer(sig, 0, &out, &out_size));
  EXPECT_EQ(out, mine_out.data());

  ExpectError(graft_signature_bind_output(sig, 0, mine_out.data(), 3),
              GRAFT_STATUS_INVALID_ARGUMENT, "");
}

TEST(AppApi, LoadsFromMemory) {
  std::ifstream f(Generated("two_signatures_float.tflite"), std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)),
                          std::istreambuf_iterator<char>());
  graft_model_t* m = nullptr;
  ASSERT_GRAFT_OK(graft_model_create_from_memory(bytes.data(), bytes.size(),
                                                 "mine", nullptr, &m));
  ModelPtr model(m);
  // The caller's copy may go away at once.
  std::fill(bytes.begin(), bytes.end(), 0);
  graft_signature_t* sig = nullptr;
  ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), "decode", &sig));
  auto in = graft::ReadNpy(Generated("two_signatures_float/input_0.npy"));
  ASSERT_TRUE(in.ok());
  ASSERT_GRAFT_OK(
      graft_signature_set_input(sig, 0, in->data.data(), in->data.size()));
  ASSERT_GRAFT_OK(graft_signature_invoke(sig));

  graft_model_options_t opts;
  graft_model_options_init(&opts);
  opts.plugin_dir = "/nonexistent";
  graft_model_t* untouched = nullptr;
  ExpectError(graft_model_create_from_memory(bytes.data(), bytes.size(), "mine",
                                             &opts, &untouched),
              GRAFT_STATUS_INVALID_ARGUMENT, "needs a model file");
  EXPECT_EQ(untouched, nullptr);
}

TEST(AppApi, ErrorsNameWhatThereIs) {
  graft_model_t* m = nullptr;
  graft_status_t* st =
      graft_model_create_from_file("/nonexistent/model.tflite", nullptr, &m);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(st->message).find("/nonexistent/model.tflite"),
            std::string::npos)
      << st->message;
  graft_status_release(st);
  EXPECT_EQ(m, nullptr);

  ModelPtr model = Open(Generated("two_signatures_float.tflite"), nullptr);
  ASSERT_NE(model, nullptr);
  graft_signature_t* sig = nullptr;
  ExpectError(graft_model_find_signature(model.get(), "nope", &sig),
              GRAFT_STATUS_NOT_FOUND, "'decode', 'encode'");
  ExpectError(graft_model_get_signature(model.get(), 2, &sig),
              GRAFT_STATUS_OUT_OF_RANGE, "signature 2");
  EXPECT_EQ(sig, nullptr);
  ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), "encode", &sig));
  size_t index = 7;
  ExpectError(graft_signature_find_input(sig, "y", &index),
              GRAFT_STATUS_NOT_FOUND, "its inputs: 'x'");
  EXPECT_EQ(index, 7u);
  const graft_tensor_info_t* info = nullptr;
  ExpectError(graft_signature_get_output_info(sig, 1, &info),
              GRAFT_STATUS_OUT_OF_RANGE, "output 1");
  std::vector<float> small(3);
  ExpectError(graft_signature_set_input(sig, 0, small.data(), 12),
              GRAFT_STATUS_INVALID_ARGUMENT, "");

  graft_model_options_t opts;
  graft_model_options_init(&opts);
  opts.fallback_policy = 77;
  ExpectError(graft_model_create_from_file(
                  Generated("two_signatures_float.tflite").c_str(), &opts, &m),
              GRAFT_STATUS_INVALID_ARGUMENT, "fallback_policy 77");
  graft_model_options_init(&opts);
  const char* dirs[] = {"/nonexistent/dispatch"};
  opts.dispatch_dirs = dirs;
  opts.num_dispatch_dirs = 1;
  ExpectError(graft_model_create_from_file(
                  Generated("two_signatures_float.tflite").c_str(), &opts, &m),
              GRAFT_STATUS_NOT_FOUND, "/nonexistent/dispatch");
  opts.struct_size = 0;
  ExpectError(graft_model_create_from_file(
                  Generated("two_signatures_float.tflite").c_str(), &opts, &m),
              GRAFT_STATUS_INVALID_ARGUMENT, "struct_size");
}

TEST(AppApi, OldCallersOptionsTakeTheDefaultsForMembersTheyLack) {
  graft_model_options_t opts;
  graft_model_options_init(&opts);
  opts.num_threads = 2;
  opts.flags = GRAFT_MODEL_FLAG_PROFILING;
  // As if compiled before plugin_dir and later members existed: garbage
  // past struct_size must not be read.
  opts.plugin_dir = "/nonexistent";
  opts.struct_size = offsetof(graft_model_options_t, plugin_dir);
  ModelPtr model = Open(Generated("two_signatures_float.tflite"), &opts);
  ASSERT_NE(model, nullptr);
  const graft_profile_t* profile = nullptr;
  ASSERT_GRAFT_OK(graft_model_get_profile(model.get(), &profile));
}

TEST(AppApi, ResizesADynamicBatch) {
  ModelPtr model = Open(Generated("dynamic_batch_float.tflite"), nullptr);
  ASSERT_NE(model, nullptr);
  graft_signature_t* sig = nullptr;
  ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), nullptr, &sig));
  const graft_tensor_info_t* info = nullptr;
  ASSERT_GRAFT_OK(graft_signature_get_input_info(sig, 0, &info));
  ASSERT_EQ(info->num_dims, 4u);
  EXPECT_EQ(info->dims_signature[0], -1);
  EXPECT_EQ(info->dims_signature[1], 16);

  const int64_t three[] = {3, 16, 16, 3};
  ASSERT_GRAFT_OK(graft_signature_resize_input(sig, 0, three, 4));
  ASSERT_GRAFT_OK(graft_signature_get_input_info(sig, 0, &info));
  EXPECT_EQ(info->dims[0], 3);
  EXPECT_EQ(info->byte_size, 3 * 16 * 16 * 3 * sizeof(float));
  // Each batch row gives the reference output of the one-image model.
  auto in = graft::ReadNpy(Generated("dynamic_batch_float/input_0.npy"));
  auto want = graft::ReadNpy(Generated("dynamic_batch_float/output_0.npy"));
  ASSERT_TRUE(in.ok() && want.ok());
  std::vector<uint8_t> batch;
  for (int i = 0; i < 3; ++i) {
    batch.insert(batch.end(), in->data.begin(), in->data.end());
  }
  ASSERT_GRAFT_OK(
      graft_signature_set_input(sig, 0, batch.data(), batch.size()));
  ASSERT_GRAFT_OK(graft_signature_invoke(sig));
  const void* out = nullptr;
  size_t out_size = 0;
  ASSERT_GRAFT_OK(graft_signature_get_output_buffer(sig, 0, &out, &out_size));
  std::vector<float> rows;
  for (int i = 0; i < 3; ++i) {
    std::vector<float> one = Floats(*want);
    rows.insert(rows.end(), one.begin(), one.end());
  }
  ExpectNear(out, out_size, rows);

  const int64_t fixed[] = {3, 8, 16, 3};
  ExpectError(graft_signature_resize_input(sig, 0, fixed, 4),
              GRAFT_STATUS_INVALID_ARGUMENT, "");
}

TEST(AppApi, DescribesQuantizedTensors) {
  ModelPtr model = Open(Generated("resnet_cnn_int8.tflite"), nullptr);
  ASSERT_NE(model, nullptr);
  graft_signature_t* sig = nullptr;
  ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), nullptr, &sig));
  const graft_tensor_info_t* info = nullptr;
  ASSERT_GRAFT_OK(graft_signature_get_input_info(sig, 0, &info));
  EXPECT_EQ(info->element_type, GRAFT_ELEMENT_TYPE_INT8);
  ASSERT_NE(info->quantization, nullptr);
  EXPECT_EQ(info->quantization->kind, GRAFT_QUANTIZATION_KIND_PER_TENSOR);
  ASSERT_EQ(info->quantization->num_scales, 1u);
  EXPECT_GT(info->quantization->scales[0], 0.0f);
  ASSERT_EQ(info->quantization->num_zero_points, 1u);
}

TEST(AppApi, ReportsPlacementAndProfile) {
  graft_model_options_t opts;
  graft_model_options_init(&opts);
  opts.flags = GRAFT_MODEL_FLAG_PROFILING;
  ModelPtr model = Open(Generated("two_signatures_float.tflite"), &opts);
  ASSERT_NE(model, nullptr);
  const graft_model_report_t* report = nullptr;
  ASSERT_GRAFT_OK(graft_model_get_report(model.get(), &report));
  EXPECT_GE(report->struct_size, sizeof(graft_model_report_t));
  EXPECT_EQ(report->ops_vendor, 0);
  EXPECT_GT(report->ops_cpu, 0);
  EXPECT_EQ(report->compiled_on_device, 0);
  EXPECT_NE(std::string(report->json).find("\"where\":\"cpu\""),
            std::string::npos)
      << report->json;

  graft_signature_t* sig = nullptr;
  ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), "encode", &sig));
  for (int i = 0; i < 3; ++i) ASSERT_GRAFT_OK(graft_signature_invoke(sig));
  const graft_profile_t* profile = nullptr;
  ASSERT_GRAFT_OK(graft_model_get_profile(model.get(), &profile));
  EXPECT_EQ(profile->runs, 3);
  EXPECT_GT(profile->total_ns, 0);
  EXPECT_NE(std::string(profile->json).find("FULLY_CONNECTED"),
            std::string::npos)
      << profile->json;
  graft_model_reset_profile(model.get());
  ASSERT_GRAFT_OK(graft_model_get_profile(model.get(), &profile));
  EXPECT_EQ(profile->runs, 0);

  ModelPtr plain = Open(Generated("two_signatures_float.tflite"), nullptr);
  ExpectError(graft_model_get_profile(plain.get(), &profile),
              GRAFT_STATUS_FAILED_PRECONDITION, "PROFILING");
}

TEST(AppApi, AppliesAheadOfTimeAndRunsOnTheVendor) {
  TempDir tmp;
  const std::string out = tmp.Join("resnet.compiled.tflite");
  graft_apply_options_t opts;
  graft_apply_options_init(&opts);
  opts.plugin_dir = GRAFT_TEST_EXAMPLE_VENDOR_DIR;
  const char* vendors[] = {"example"};
  opts.vendors = vendors;
  opts.num_vendors = 1;
  graft_apply_report_t* report = nullptr;
  ASSERT_GRAFT_OK(graft_apply(Generated("resnet_cnn_float.tflite").c_str(),
                              out.c_str(), &opts, &report));
  ASSERT_NE(report, nullptr);
  EXPECT_GT(report->ops_taken, 0);
  EXPECT_GE(report->ops_total, report->ops_taken);
  EXPECT_GE(report->num_partitions, 1);
  EXPECT_EQ(report->num_ops, static_cast<size_t>(report->ops_total));
  size_t taken = 0;
  for (size_t i = 0; i < report->num_ops; ++i) {
    if (std::strcmp(report->ops[i].taken_by, "example") == 0)
      ++taken;
    else
      EXPECT_STRNE(report->ops[i].refusals, "") << i;
  }
  EXPECT_EQ(taken, static_cast<size_t>(report->ops_taken));
  EXPECT_NE(std::string(report->summary).find("ops taken"), std::string::npos)
      << report->summary;
  graft_apply_report_destroy(report);

  graft_model_options_t mo;
  graft_model_options_init(&mo);
  const char* dirs[] = {GRAFT_TEST_EXAMPLE_VENDOR_DIR};
  mo.dispatch_dirs = dirs;
  mo.num_dispatch_dirs = 1;
  mo.fallback_policy = GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS;
  ModelPtr model = Open(out, &mo);
  ASSERT_NE(model, nullptr);
  const graft_model_report_t* placed = nullptr;
  ASSERT_GRAFT_OK(graft_model_get_report(model.get(), &placed));
  EXPECT_GT(placed->ops_vendor, 0);
  EXPECT_EQ(placed->ops_fallback, 0);

  // Without the vendor's library, requiring vendor ops fails the load.
  mo.flags = GRAFT_MODEL_FLAG_NO_DEFAULT_DISPATCH_DIR;
  mo.num_dispatch_dirs = 0;
  graft_model_t* m = nullptr;
  ExpectError(graft_model_create_from_file(out.c_str(), &mo, &m),
              GRAFT_STATUS_FAILED_PRECONDITION, "example");

  // A priority list without the vendor: its library is not loaded.
  graft_model_options_init(&mo);
  mo.dispatch_dirs = dirs;
  mo.num_dispatch_dirs = 1;
  mo.fallback_policy = GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS;
  const char* others[] = {"xnnpack"};
  mo.vendors = others;
  mo.num_vendors = 1;
  ExpectError(graft_model_create_from_file(out.c_str(), &mo, &m),
              GRAFT_STATUS_FAILED_PRECONDITION, "example");
  EXPECT_EQ(m, nullptr);

  // An already compiled model is refused, and nothing is written.
  const std::string again = tmp.Join("again.tflite");
  graft_apply_report_t* none = nullptr;
  ExpectError(graft_apply(out.c_str(), again.c_str(), &opts, &none),
              GRAFT_STATUS_FAILED_PRECONDITION, "already compiled");
  EXPECT_EQ(none, nullptr);
  EXPECT_FALSE(std::ifstream(again).good());
}

TEST(AppApi, CompilesOnTheDeviceWithACache) {
  TempDir tmp;
  graft_model_options_t opts;
  graft_model_options_init(&opts);
  opts.plugin_dir = GRAFT_TEST_EXAMPLE_VENDOR_DIR;
  const std::string cache = tmp.Join("cache");
  opts.cache_dir = cache.c_str();
  const char* dirs[] = {GRAFT_TEST_EXAMPLE_VENDOR_DIR};
  opts.dispatch_dirs = dirs;
  opts.num_dispatch_dirs = 1;
  for (int load = 0; load < 2; ++load) {
    ModelPtr model = Open(Generated("two_signatures_float.tflite"), &opts);
    ASSERT_NE(model, nullptr);
    const graft_model_report_t* report = nullptr;
    ASSERT_GRAFT_OK(graft_model_get_report(model.get(), &report));
    EXPECT_EQ(report->compiled_on_device, 1);
    EXPECT_EQ(report->compile_cache_hit, load == 1);
    EXPECT_GT(report->ops_vendor, 0);

    graft_signature_t* sig = nullptr;
    ASSERT_GRAFT_OK(graft_model_find_signature(model.get(), "encode", &sig));
    auto x =
        graft::ReadNpy(Generated("two_signatures_float/encode/input_x.npy"));
    auto code = graft::ReadNpy(
        Generated("two_signatures_float/encode/output_code.npy"));
    ASSERT_TRUE(x.ok() && code.ok());
    ASSERT_GRAFT_OK(
        graft_signature_set_input(sig, 0, x->data.data(), x->data.size()));
    ASSERT_GRAFT_OK(graft_signature_invoke(sig));
    const void* out = nullptr;
    size_t size = 0;
    ASSERT_GRAFT_OK(graft_signature_get_output_buffer(sig, 0, &out, &size));
    ExpectNear(out, size, Floats(*code));
  }
}

}  // namespace
