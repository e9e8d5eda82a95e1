// Drives the example and null dispatch libraries through the C ABI exactly
// as a third-party host would: dlopen, a hand-made host table that counts
// allocations and statuses, and bytecode made by the example compiler plugin
// itself. No Graft library is linked.
//
// What it shows: the plugin's output runs on the dispatch library and gives
// the documented results; profile locations match the plugin's debug map;
// nothing leaks on any path; the run path allocates nothing; truncated or
// mutated bytecode is refused with a status, never a crash (run it under
// GRAFT_SANITIZE=ON); NULL arguments are statuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "abi_test_support.h"
#include "graft_dispatch.h"

namespace graft::abi_test {
namespace {

// A dispatch library opened with dlopen, every entry point looked up by the
// names the header declares.
class DispatchLibrary {
 public:
  static std::unique_ptr<DispatchLibrary> Open(const char* env_var,
                                               const std::string& default_path,
                                               std::string* error) {
    const char* override_path = std::getenv(env_var);
    std::string path = override_path != nullptr && *override_path != '\0'
                           ? override_path
                           : default_path;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* message = dlerror();
      *error = "dlopen " + path + ": " + (message ? message : "?");
      return nullptr;
    }
    std::unique_ptr<DispatchLibrary> lib(new DispatchLibrary(handle));
    lib->abi_version = lib->Find<graft_dispatch_abi_version_fn>(
        GRAFT_DISPATCH_ABI_VERSION_SYMBOL);
    lib->create = lib->Find<graft_dispatch_create_fn>(
        GRAFT_DISPATCH_CREATE_SYMBOL);
    lib->destroy = lib->Find<graft_dispatch_destroy_fn>(
        GRAFT_DISPATCH_DESTROY_SYMBOL);
    lib->get_info = lib->Find<graft_dispatch_get_info_fn>(
        GRAFT_DISPATCH_GET_INFO_SYMBOL);
    lib->check_compatibility = lib->Find<graft_dispatch_check_compatibility_fn>(
        GRAFT_DISPATCH_CHECK_COMPATIBILITY_SYMBOL);
    lib->device_context_create =
        lib->Find<graft_dispatch_device_context_create_fn>(
            GRAFT_DISPATCH_DEVICE_CONTEXT_CREATE_SYMBOL);
    lib->device_context_destroy =
        lib->Find<graft_dispatch_device_context_destroy_fn>(
            GRAFT_DISPATCH_DEVICE_CONTEXT_DESTROY_SYMBOL);
    lib->invocation_create = lib->Find<graft_dispatch_invocation_create_fn>(
        GRAFT_DISPATCH_INVOCATION_CREATE_SYMBOL);
    lib->invocation_destroy = lib->Find<graft_dispatch_invocation_destroy_fn>(
        GRAFT_DISPATCH_INVOCATION_DESTROY_SYMBOL);
    lib->get_buffer_requirements =
        lib->Find<graft_dispatch_invocation_get_buffer_requirements_fn>(
            GRAFT_DISPATCH_INVOCATION_GET_BUFFER_REQUIREMENTS_SYMBOL);
    lib->attach = lib->Find<graft_dispatch_invocation_attach_host_memory_fn>(
        GRAFT_DISPATCH_INVOCATION_ATTACH_HOST_MEMORY_SYMBOL);
    lib->invoke = lib->Find<graft_dispatch_invocation_invoke_fn>(
        GRAFT_DISPATCH_INVOCATION_INVOKE_SYMBOL);
    lib->invoke_async = lib->Find<graft_dispatch_invocation_invoke_async_fn>(
        GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL);
    lib->wait = lib->Find<graft_dispatch_invocation_wait_fn>(
        GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL);
    lib->get_profile = lib->Find<graft_dispatch_invocation_get_profile_fn>(
        GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL);
    if (lib->abi_version == nullptr || lib->create == nullptr ||
        lib->destroy == nullptr || lib->get_info == nullptr ||
        lib->check_compatibility == nullptr ||
        lib->device_context_create == nullptr ||
        lib->device_context_destroy == nullptr ||
        lib->invocation_create == nullptr ||
        lib->invocation_destroy == nullptr ||
        lib->get_buffer_requirements == nullptr || lib->attach == nullptr ||
        lib->invoke == nullptr) {
      *error = path + ": a required entry point is missing";
      return nullptr;
    }
    return lib;
  }

  ~DispatchLibrary() { dlclose(handle_); }
  DispatchLibrary(const DispatchLibrary&) = delete;
  DispatchLibrary& operator=(const DispatchLibrary&) = delete;

  graft_dispatch_abi_version_fn abi_version = nullptr;
  graft_dispatch_create_fn create = nullptr;
  graft_dispatch_destroy_fn destroy = nullptr;
  graft_dispatch_get_info_fn get_info = nullptr;
  graft_dispatch_check_compatibility_fn check_compatibility = nullptr;
  graft_dispatch_device_context_create_fn device_context_create = nullptr;
  graft_dispatch_device_context_destroy_fn device_context_destroy = nullptr;
  graft_dispatch_invocation_create_fn invocation_create = nullptr;
  graft_dispatch_invocation_destroy_fn invocation_destroy = nullptr;
  graft_dispatch_invocation_get_buffer_requirements_fn get_buffer_requirements =
      nullptr;
  graft_dispatch_invocation_attach_host_memory_fn attach = nullptr;
  graft_dispatch_invocation_invoke_fn invoke = nullptr;
  graft_dispatch_invocation_invoke_async_fn invoke_async = nullptr;
  graft_dispatch_invocation_wait_fn wait = nullptr;
  graft_dispatch_invocation_get_profile_fn get_profile = nullptr;

 private:
  explicit DispatchLibrary(void* handle) : handle_(handle) {}
  template <typename Fn>
  Fn Find(const char* name) {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }
  void* handle_;
};

// Counts calls of the host's allocate, to prove the run path makes none.
std::atomic<int64_t> g_allocate_calls{0};
void* (*g_forward_allocate)(const graft_host_api_t*, size_t, size_t) = nullptr;

void* CountingAllocate(const graft_host_api_t* host, size_t size,
                       size_t alignment) {
  g_allocate_calls.fetch_add(1);
  return g_forward_allocate(host, size, alignment);
}

// x[1,4] -> ADD c[4] -> RELU -> FULLY_CONNECTED(w[3,4], b[3], RELU6), the
// partition the host would outline (as in example_plugin_test.cc).
void BuildAddReluFc(GraphBuilder& g, const std::vector<float>& c,
                    const std::vector<float>& w, const std::vector<float>& b) {
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t ct = g.Constant("c", {4}, c, 1);
  int32_t a = g.Tensor("a", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t r = g.Tensor("r", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t wt = g.Constant("w", {3, 4}, w, 2);
  int32_t bt = g.Constant("b", {3}, b, 3);
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 3});
  g.Op(kOpAdd, "ADD", {x, ct}, {a}, {Attribute::Activation("NONE")}, 0);
  g.Op(kOpRelu, "RELU", {a}, {r}, {}, 1);
  g.Op(kOpFullyConnected, "FULLY_CONNECTED", {r, wt, bt}, {y},
       {Attribute::Activation("RELU6"),
        Attribute::Enum("weights_format", 0, "DEFAULT"),
        Attribute::Bool("keep_num_dims", false)},
       2);
  g.Output(y);
}

std::vector<float> AddReluFcReference(const std::vector<float>& x,
                                      const std::vector<float>& c,
                                      const std::vector<float>& w,
                                      const std::vector<float>& b) {
  float r[4];
  for (int k = 0; k < 4; ++k) r[k] = std::max(x[k] + c[k], 0.0f);
  std::vector<float> y(3);
  for (int u = 0; u < 3; ++u) {
    float sum = b[u];
    for (int k = 0; k < 4; ++k) sum += w[u * 4 + k] * r[k];
    y[u] = std::min(std::max(sum, 0.0f), 6.0f);
  }
  return y;
}

// x[2,3] -> TANH -> MUL(x, RELU) -> LOGISTIC.
void BuildTanhMulLogistic(GraphBuilder& g) {
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  int32_t t = g.Tensor("t", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  int32_t m = g.Tensor("m", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  int32_t s = g.Tensor("s", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  g.Op(kOpTanh, "TANH", {x}, {t}, {}, 3);
  g.Op(kOpMul, "MUL", {t, x}, {m}, {Attribute::Activation("RELU")}, 4);
  g.Op(kOpLogistic, "LOGISTIC", {m}, {s}, {}, 5);
  g.Output(s);
}

class ExampleDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    plugin_lib_ = PluginLibrary::Open("GRAFT_EXAMPLE_COMPILER_PLUGIN",
                                      GRAFT_EXAMPLE_COMPILER_PLUGIN_PATH,
                                      &error);
    ASSERT_NE(plugin_lib_, nullptr) << error;
    lib_ = DispatchLibrary::Open("GRAFT_EXAMPLE_DISPATCH",
                                 GRAFT_EXAMPLE_DISPATCH_PATH, &error);
    ASSERT_NE(lib_, nullptr) << error;
    g_forward_allocate = host_.api()->allocate;
    host_.mutable_api()->allocate = &CountingAllocate;
    ASSERT_TRUE(Take(lib_->create(host_.api(), nullptr, 0, &dispatch_)).ok());
    ASSERT_TRUE(Take(lib_->device_context_create(dispatch_, nullptr, 0,
                                                 &context_))
                    .ok());
  }

  void TearDown() override {
    for (graft_dispatch_invocation_t* inv : invocations_) {
      lib_->invocation_destroy(inv);
    }
    for (graft_compiled_result_t* result : results_) {
      plugin_lib_->compiled_result_destroy(result);
    }
    if (plugin_ != nullptr) plugin_lib_->destroy(plugin_);
    if (lib_ != nullptr) {
      lib_->device_context_destroy(context_);
      lib_->destroy(dispatch_);
    }
    EXPECT_EQ(host_.live_allocations(), 0) << "a library leaked memory";
    EXPECT_EQ(host_.live_statuses(), 0) << "a status was not released";
  }

  // Compiles `views` with the example plugin (options as given).
  const graft_compiled_result_t* Compile(
      std::vector<const graft_graph_view_t*> views,
      std::vector<graft_key_value_t> options = {}) {
    if (plugin_ == nullptr) {
      EXPECT_TRUE(Take(plugin_lib_->create(host_.api(), options.data(),
                                           options.size(), &plugin_))
                      .ok());
    }
    graft_compiled_result_t* result = nullptr;
    Status status = Take(plugin_lib_->compile(plugin_, "example-soc-1",
                                              views.data(), views.size(),
                                              &result));
    EXPECT_TRUE(status.ok()) << status.message;
    if (result != nullptr) results_.push_back(result);
    return result;
  }

  // invocation_create on `bytecode`; owned by the fixture on success.
  Status CreateInvocation(graft_byte_span_t bytecode, const char* entry,
                          size_t num_inputs, size_t num_outputs,
                          graft_dispatch_invocation_t** out,
                          uint32_t flags = 0) {
    graft_dispatch_invocation_desc_t desc{};
    desc.struct_size = sizeof(desc);
    desc.bytecode = bytecode;
    desc.entry_point = entry;
    desc.num_inputs = num_inputs;
    desc.num_outputs = num_outputs;
    desc.model = {nullptr, 0};
    desc.model_fd = -1;
    desc.flags = flags;
    *out = nullptr;
    Status status = Take(lib_->invocation_create(context_, &desc, out));
    if (*out != nullptr) invocations_.push_back(*out);
    return status;
  }

  // Attaches `input` and an output buffer of the required size, invokes and
  // returns the output.
  std::vector<float> RunOne(graft_dispatch_invocation_t* inv,
                            const std::vector<float>& input) {
    graft_dispatch_buffer_requirements_t req{};
    req.struct_size = sizeof(req);
    EXPECT_TRUE(Take(lib_->get_buffer_requirements(
                         inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, 0, &req))
                    .ok());
    std::vector<float> output(req.size / sizeof(float), NAN);
    EXPECT_TRUE(Take(lib_->attach(inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0,
                                  const_cast<float*>(input.data()),
                                  input.size() * sizeof(float)))
                    .ok());
    EXPECT_TRUE(Take(lib_->attach(inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, 0,
                                  output.data(),
                                  output.size() * sizeof(float)))
                    .ok());
    Status status = Take(lib_->invoke(inv));
    EXPECT_TRUE(status.ok()) << status.message;
    return output;
  }

  TestHost host_;
  std::unique_ptr<PluginLibrary> plugin_lib_;
  std::unique_ptr<DispatchLibrary> lib_;
  graft_compiler_plugin_t* plugin_ = nullptr;
  graft_dispatch_t* dispatch_ = nullptr;
  graft_dispatch_device_context_t* context_ = nullptr;
  std::vector<graft_dispatch_invocation_t*> invocations_;
  std::vector<graft_compiled_result_t*> results_;
};

TEST_F(ExampleDispatchTest, InfoNamesTheSameVendorAsThePlugin) {
  EXPECT_EQ(lib_->abi_version(), GRAFT_ABI_VERSION);
  const graft_dispatch_info_t* info = nullptr;
  ASSERT_TRUE(Take(lib_->get_info(dispatch_, &info)).ok());
  ASSERT_NE(info, nullptr);
  ASSERT_GE(info->struct_size, sizeof(graft_dispatch_info_t));
  EXPECT_EQ(info->abi_version, GRAFT_ABI_VERSION);
  EXPECT_STREQ(info->vendor, "example");
  EXPECT_STREQ(info->library_version, "1.0.0");
  EXPECT_EQ(info->capabilities, uint32_t{GRAFT_DISPATCH_CAPABILITY_ASYNC |
                                         GRAFT_DISPATCH_CAPABILITY_PROFILING});
  EXPECT_EQ(info->min_bytecode_format_version, 1u);
  EXPECT_EQ(info->max_bytecode_format_version, 1u);
  EXPECT_EQ(info->reserved0, 0u);

  graft_compiler_plugin_t* plugin = nullptr;
  ASSERT_TRUE(Take(plugin_lib_->create(host_.api(), nullptr, 0, &plugin)).ok());
  const graft_compiler_plugin_info_t* plugin_info = nullptr;
  ASSERT_TRUE(Take(plugin_lib_->get_info(plugin, &plugin_info)).ok());
  EXPECT_STREQ(info->vendor, plugin_info->vendor);
  EXPECT_GE(plugin_info->bytecode_format_version,
            info->min_bytecode_format_version);
  EXPECT_LE(plugin_info->bytecode_format_version,
            info->max_bytecode_format_version);
  plugin_lib_->destroy(plugin);
}

TEST_F(ExampleDispatchTest, RunsWhatTheExamplePluginCompiled) {
  const unsigned seed = 7;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    return v;
  };
  const std::vector<float> c = random(4), w = random(12), b = random(3);
  GraphBuilder partition("partition_0");
  BuildAddReluFc(partition, c, w, b);
  const graft_compiled_result_t* result = Compile({partition.view()});
  ASSERT_NE(result, nullptr);

  // The stamp the plugin wrote is one this library runs.
  EXPECT_TRUE(Take(lib_->check_compatibility(dispatch_, result->stamp)).ok());

  graft_dispatch_invocation_t* inv = nullptr;
  Status status = CreateInvocation(result->modules[0],
                                   result->calls[0].entry_point, 1, 1, &inv);
  ASSERT_TRUE(status.ok()) << status.message;
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<float> x = random(4);
    const std::vector<float> expected = AddReluFcReference(x, c, w, b);
    const std::vector<float> y = RunOne(inv, x);
    ASSERT_EQ(y.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(y[i], expected[i], 1e-6f) << "trial " << trial << " [" << i
                                            << "]";
    }
  }
}

TEST_F(ExampleDispatchTest, RunsEveryEntryOfASingleModule) {
  GraphBuilder first("partition_0"), second("partition_1");
  BuildAddReluFc(first, {1, -2, 3, -4},
                 {0.5f, 0.25f, -1, 2, 1.5f, 0, 0.125f, -0.5f, 3, -2.5f, 1,
                  0.75f},
                 {0.1f, -0.2f, 0.3f});
  BuildTanhMulLogistic(second);
  graft_key_value_t option = {"single_module", "1"};
  const graft_compiled_result_t* result =
      Compile({first.view(), second.view()}, {option});
  ASSERT_NE(result, nullptr);
  ASSERT_EQ(result->num_modules, 1u);
  ASSERT_EQ(result->num_calls, 2u);

  graft_dispatch_invocation_t* inv1 = nullptr;
  Status status = CreateInvocation(result->modules[result->calls[1].module_index],
                                   result->calls[1].entry_point, 1, 1, &inv1);
  ASSERT_TRUE(status.ok()) << status.message;
  const std::vector<float> x = {-1.5f, -0.5f, 0, 0.5f, 1, 2};
  const std::vector<float> y = RunOne(inv1, x);
  ASSERT_EQ(y.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    float m = std::max(std::tanh(x[i]) * x[i], 0.0f);
    EXPECT_EQ(y[i], 1.0f / (1.0f + std::exp(-m))) << i;
  }

  graft_dispatch_invocation_t* inv0 = nullptr;
  status = CreateInvocation(result->modules[result->calls[0].module_index],
                            result->calls[0].entry_point, 1, 1, &inv0);
  ASSERT_TRUE(status.ok()) << status.message;
  const std::vector<float> y0 = RunOne(inv0, {1, 1, 1, 1});
  const std::vector<float> expected0 = AddReluFcReference(
      {1, 1, 1, 1}, {1, -2, 3, -4},
      {0.5f, 0.25f, -1, 2, 1.5f, 0, 0.125f, -0.5f, 3, -2.5f, 1, 0.75f},
      {0.1f, -0.2f, 0.3f});
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(y0[i], expected0[i], 1e-6f);
}

TEST_F(ExampleDispatchTest, ProfileLocationsAreThePluginsDebugMapLocations) {
  GraphBuilder partition("partition_0");
  BuildTanhMulLogistic(partition);
  const graft_compiled_result_t* result = Compile({partition.view()});
  ASSERT_NE(result, nullptr);
  graft_dispatch_invocation_t* inv = nullptr;
  ASSERT_TRUE(CreateInvocation(result->modules[0], "partition_0", 1, 1, &inv,
                               GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING)
                  .ok());
  RunOne(inv, {1, 2, 3, 4, 5, 6});
  const graft_dispatch_profile_event_t* events = nullptr;
  size_t num_events = 0;
  ASSERT_TRUE(Take(lib_->get_profile(inv, &events, &num_events)).ok());
  ASSERT_EQ(num_events, result->num_debug_map_entries);
  std::set<uint64_t> debug_lines, profile_lines;
  for (size_t i = 0; i < result->num_debug_map_entries; ++i) {
    debug_lines.insert(result->debug_map[i].vendor_location);
  }
  for (size_t i = 0; i < num_events; ++i) {
    profile_lines.insert(events[i].vendor_location);
    EXPECT_LE(events[i].start_ns, events[i].end_ns);
    EXPECT_NE(events[i].name, nullptr);
  }
  EXPECT_EQ(debug_lines, profile_lines);
}

TEST_F(ExampleDispatchTest, TheRunPathAllocatesNothing) {
  GraphBuilder partition("partition_0");
  BuildTanhMulLogistic(partition);
  const graft_compiled_result_t* result = Compile({partition.view()});
  ASSERT_NE(result, nullptr);
  graft_dispatch_invocation_t* inv = nullptr;
  ASSERT_TRUE(CreateInvocation(result->modules[0], "partition_0", 1, 1, &inv,
                               GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING)
                  .ok());
  std::vector<float> x(6, 0.5f), y(6);
  const int64_t before = g_allocate_calls.load();
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(Take(lib_->attach(inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0,
                                  x.data(), x.size() * sizeof(float)))
                    .ok());
    ASSERT_TRUE(Take(lib_->attach(inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, 0,
                                  y.data(), y.size() * sizeof(float)))
                    .ok());
    ASSERT_TRUE(Take(lib_->invoke(inv)).ok());
    ASSERT_TRUE(Take(lib_->invoke_async(inv)).ok());
    ASSERT_TRUE(
        Take(lib_->wait(inv, GRAFT_DISPATCH_TIMEOUT_INFINITE)).ok());
  }
  EXPECT_EQ(g_allocate_calls.load(), before);
}

// Every prefix of a real module, and seeded single-byte mutations of it, are
// either refused with a status or run; never a crash, never a leak.
TEST_F(ExampleDispatchTest, TruncatedAndMutatedBytecodeNeverCrashes) {
  GraphBuilder first("partition_0"), second("partition_1");
  BuildAddReluFc(first, {1, -2, 3, -4},
                 {0.5f, 0.25f, -1, 2, 1.5f, 0, 0.125f, -0.5f, 3, -2.5f, 1,
                  0.75f},
                 {0.1f, -0.2f, 0.3f});
  BuildTanhMulLogistic(second);
  graft_key_value_t option = {"single_module", "1"};
  const graft_compiled_result_t* result =
      Compile({first.view(), second.view()}, {option});
  ASSERT_NE(result, nullptr);
  const std::string text(reinterpret_cast<const char*>(result->modules[0].data),
                         result->modules[0].size);

  size_t accepted = 0, refused = 0;
  auto attempt = [&](const std::string& bytecode, const char* entry) {
    // A private copy, so a read past the end is an ASan error.
    std::unique_ptr<uint8_t[]> copy(new uint8_t[bytecode.size() + 1]);
    std::memcpy(copy.get(), bytecode.data(), bytecode.size());
    graft_dispatch_invocation_desc_t desc{};
    desc.struct_size = sizeof(desc);
    desc.bytecode = {copy.get(), bytecode.size()};
    desc.entry_point = entry;
    desc.num_inputs = 1;
    desc.num_outputs = 1;
    desc.model_fd = -1;
    graft_dispatch_invocation_t* inv = nullptr;
    Status status = Take(lib_->invocation_create(context_, &desc, &inv));
    if (!status.ok()) {
      ++refused;
      EXPECT_EQ(inv, nullptr);
      EXPECT_NE(status.code, GRAFT_STATUS_INTERNAL) << status.message;
      EXPECT_EQ(status.message.find('\n'), std::string::npos);
      return;
    }
    ++accepted;
    graft_dispatch_buffer_requirements_t in{}, out{};
    in.struct_size = out.struct_size = sizeof(in);
    ASSERT_TRUE(Take(lib_->get_buffer_requirements(
                         inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0, &in))
                    .ok());
    ASSERT_TRUE(Take(lib_->get_buffer_requirements(
                         inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, 0, &out))
                    .ok());
    std::vector<float> x(in.size / sizeof(float) + 1, 1.0f);
    std::vector<float> y(out.size / sizeof(float) + 1, 0.0f);
    EXPECT_TRUE(Take(lib_->attach(inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0,
                                  x.data(), in.size))
                    .ok());
    EXPECT_TRUE(Take(lib_->attach(inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, 0,
                                  y.data(), out.size))
                    .ok());
    EXPECT_TRUE(Take(lib_->invoke(inv)).ok());
    lib_->invocation_destroy(inv);
  };

  for (size_t length = 0; length <= text.size(); ++length) {
    attempt(text.substr(0, length), "partition_1");
  }
  const unsigned seed = 1234;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937 rng(seed);
  const char kAlphabet[] = " \n\t,=#-[]0123456789abcdeftxf32\x01\xff";
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = text;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      mutated[rng() % mutated.size()] =
          kAlphabet[rng() % (sizeof(kAlphabet) - 1)];
    }
    attempt(mutated, i % 2 == 0 ? "partition_0" : "partition_1");
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(accepted, 0u);
}

TEST_F(ExampleDispatchTest, CreateRefusesAHostOfAnotherMajorOrTooSmall) {
  graft_dispatch_t* dispatch = nullptr;
  host_.mutable_api()->abi_version =
      GRAFT_ABI_VERSION_PACK(GRAFT_ABI_VERSION_MAJOR + 1, 0);
  EXPECT_EQ(Take(lib_->create(host_.api(), nullptr, 0, &dispatch)).code,
            GRAFT_STATUS_FAILED_PRECONDITION);
  host_.mutable_api()->abi_version = GRAFT_ABI_VERSION;
  host_.mutable_api()->struct_size = offsetof(graft_host_api_t, allocate);
  EXPECT_EQ(Take(lib_->create(host_.api(), nullptr, 0, &dispatch)).code,
            GRAFT_STATUS_FAILED_PRECONDITION);
  host_.mutable_api()->struct_size = sizeof(graft_host_api_t);
  EXPECT_EQ(Take(lib_->create(nullptr, nullptr, 0, &dispatch)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dispatch, nullptr);
}

TEST_F(ExampleDispatchTest, CreateRejectsUnknownOptionsAndBadValues) {
  graft_dispatch_t* dispatch = nullptr;
  graft_key_value_t unknown = {"turbo", "1"};
  Status status = Take(lib_->create(host_.api(), &unknown, 1, &dispatch));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "example dispatch: unknown option 'turbo' (known: soc_model)");
  graft_key_value_t bad = {"soc_model", "example-soc-3"};
  status = Take(lib_->create(host_.api(), &bad, 1, &dispatch));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(dispatch, nullptr);
  graft_dispatch_device_context_t* context = nullptr;
  status = Take(lib_->device_context_create(dispatch_, &unknown, 1, &context));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(context, nullptr);
}

// Misuse: NULL arguments answer INVALID_ARGUMENT, leave out-params alone and
// never crash.
TEST_F(ExampleDispatchTest, NullArgumentsAreInvalidArgumentNotCrashes) {
  const graft_dispatch_info_t* info = nullptr;
  EXPECT_EQ(Take(lib_->get_info(nullptr, &info)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->get_info(dispatch_, nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(info, nullptr);
  graft_compatibility_stamp_t stamp{};
  EXPECT_EQ(Take(lib_->check_compatibility(nullptr, &stamp)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->check_compatibility(dispatch_, nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  stamp.struct_size = offsetof(graft_compatibility_stamp_t, soc_model);
  stamp.vendor = "example";
  EXPECT_EQ(Take(lib_->check_compatibility(dispatch_, &stamp)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  graft_dispatch_device_context_t* context = nullptr;
  EXPECT_EQ(Take(lib_->device_context_create(nullptr, nullptr, 0, &context))
                .code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->device_context_create(dispatch_, nullptr, 0, nullptr))
                .code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(context, nullptr);

  graft_dispatch_invocation_desc_t desc{};
  desc.struct_size = sizeof(desc);
  desc.entry_point = "partition_0";
  graft_dispatch_invocation_t* inv = nullptr;
  EXPECT_EQ(Take(lib_->invocation_create(nullptr, &desc, &inv)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->invocation_create(context_, nullptr, &inv)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->invocation_create(context_, &desc, nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  // Empty bytecode, and a desc too small to hold the flags.
  EXPECT_EQ(Take(lib_->invocation_create(context_, &desc, &inv)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  desc.struct_size = offsetof(graft_dispatch_invocation_desc_t, flags);
  EXPECT_EQ(Take(lib_->invocation_create(context_, &desc, &inv)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(inv, nullptr);

  graft_dispatch_buffer_requirements_t req{};
  req.struct_size = sizeof(req);
  EXPECT_EQ(Take(lib_->get_buffer_requirements(
                     nullptr, GRAFT_DISPATCH_IO_KIND_INPUT, 0, &req))
                .code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->attach(nullptr, GRAFT_DISPATCH_IO_KIND_INPUT, 0,
                              nullptr, 0))
                .code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->invoke(nullptr)).code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->invoke_async(nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->wait(nullptr, 0)).code, GRAFT_STATUS_INVALID_ARGUMENT);
  const graft_dispatch_profile_event_t* events = nullptr;
  size_t num_events = 0;
  EXPECT_EQ(Take(lib_->get_profile(nullptr, &events, &num_events)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);

  // With a real invocation: bad kinds, indices and out-params.
  GraphBuilder partition("partition_0");
  BuildTanhMulLogistic(partition);
  const graft_compiled_result_t* result = Compile({partition.view()});
  ASSERT_NE(result, nullptr);
  ASSERT_TRUE(
      CreateInvocation(result->modules[0], "partition_0", 1, 1, &inv).ok());
  EXPECT_EQ(Take(lib_->get_buffer_requirements(inv, 7, 0, &req)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->get_buffer_requirements(
                     inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, 1, &req))
                .code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->get_buffer_requirements(
                     inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, 0, nullptr))
                .code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->attach(inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0, nullptr,
                              24))
                .code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->get_profile(inv, nullptr, &num_events)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(lib_->get_profile(inv, &events, &num_events)).code,
            GRAFT_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(Take(lib_->wait(inv, 0)).code, GRAFT_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(events, nullptr);

  // Release functions accept NULL.
  lib_->invocation_destroy(nullptr);
  lib_->device_context_destroy(nullptr);
  lib_->destroy(nullptr);
}

class NullDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    lib_ = DispatchLibrary::Open("GRAFT_NULL_DISPATCH",
                                 GRAFT_NULL_DISPATCH_PATH, &error);
    ASSERT_NE(lib_, nullptr) << error;
    ASSERT_TRUE(Take(lib_->create(host_.api(), nullptr, 0, &dispatch_)).ok());
  }
  void TearDown() override {
    if (lib_ != nullptr) lib_->destroy(dispatch_);
    EXPECT_EQ(host_.live_statuses(), 0);
  }

  TestHost host_;
  std::unique_ptr<DispatchLibrary> lib_;
  graft_dispatch_t* dispatch_ = nullptr;
};

TEST_F(NullDispatchTest, VersionAndInfoWork) {
  EXPECT_EQ(lib_->abi_version(), GRAFT_ABI_VERSION);
  const graft_dispatch_info_t* info = nullptr;
  ASSERT_TRUE(Take(lib_->get_info(dispatch_, &info)).ok());
  EXPECT_STREQ(info->vendor, "null");
  EXPECT_EQ(info->capabilities, 0u);
}

TEST_F(NullDispatchTest, WorkIsUnimplementedWithAMessage) {
  graft_compatibility_stamp_t stamp{};
  stamp.struct_size = sizeof(stamp);
  Status status = Take(lib_->check_compatibility(dispatch_, &stamp));
  EXPECT_EQ(status.code, GRAFT_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(status.message,
            "null dispatch: check_compatibility is not implemented; copy "
            "vendors/null and fill it in");
  graft_dispatch_device_context_t* context = nullptr;
  status = Take(lib_->device_context_create(dispatch_, nullptr, 0, &context));
  EXPECT_EQ(status.code, GRAFT_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(context, nullptr);
  EXPECT_EQ(Take(lib_->invoke(nullptr)).code, GRAFT_STATUS_INVALID_ARGUMENT);
  lib_->invocation_destroy(nullptr);
  lib_->device_context_destroy(nullptr);
}

}  // namespace
}  // namespace graft::abi_test
