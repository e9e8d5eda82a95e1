// Test support for the ABI suite: a minimal host table, a dlopen'ed plugin
// library, and a fluent builder of graph views.
//
// Deliberately independent of every Graft library: these tests talk to the
// vendor .so files exactly as a third-party host would, through the C headers
// and dlopen only.
#ifndef GRAFT_TESTS_ABI_ABI_TEST_SUPPORT_H_
#define GRAFT_TESTS_ABI_ABI_TEST_SUPPORT_H_

#include <dlfcn.h>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graft_common.h"
#include "graft_compiler_plugin.h"
#include "graft_graph.h"

namespace graft::abi_test {

// A host table that counts live statuses and allocations, so tests can
// assert that a plugin leaks nothing and that every status was released.
class TestHost {
 public:
  TestHost() {
    std::memset(&api_, 0, sizeof(api_));
    api_.struct_size = sizeof(api_);
    api_.abi_version = GRAFT_ABI_VERSION;
    api_.host_context = this;
    api_.status_create = &StatusCreate;
    api_.status_create_formatted = &StatusCreateFormatted;
    api_.log_message = &LogMessage;
    api_.allocate = &Allocate;
    api_.deallocate = &Deallocate;
  }
  TestHost(const TestHost&) = delete;
  TestHost& operator=(const TestHost&) = delete;

  const graft_host_api_t* api() const { return &api_; }
  graft_host_api_t* mutable_api() { return &api_; }
  int64_t live_allocations() const { return live_allocations_.load(); }
  int64_t live_statuses() const { return live_statuses_.load(); }
  std::vector<std::string> logs() const {
    std::lock_guard<std::mutex> lock(mu_);
    return logs_;
  }

 private:
  struct OwnedStatus {
    graft_status_t base;  // First: the pointer handed out converts back.
    TestHost* host;
    std::string message;
  };

  static TestHost* Self(const graft_host_api_t* host) {
    return static_cast<TestHost*>(host->host_context);
  }

  static void ReleaseStatus(graft_status_t* status) {
    OwnedStatus* owned = reinterpret_cast<OwnedStatus*>(status);
    owned->host->live_statuses_.fetch_sub(1);
    delete owned;
  }

  static graft_status_t* MakeStatus(const graft_host_api_t* host,
                                    graft_status_code_t code,
                                    std::string message) {
    if (code == GRAFT_STATUS_OK) return nullptr;
    OwnedStatus* owned = new OwnedStatus;
    owned->host = Self(host);
    owned->message = std::move(message);
    owned->base.struct_size = sizeof(graft_status_t);
    owned->base.code = code;
    owned->base.message = owned->message.c_str();
    owned->base.release = &ReleaseStatus;
    owned->host->live_statuses_.fetch_add(1);
    return &owned->base;
  }

  static graft_status_t* StatusCreate(const graft_host_api_t* host,
                                      graft_status_code_t code,
                                      const char* message) {
    return MakeStatus(host, code, message != nullptr ? message : "");
  }

  static graft_status_t* StatusCreateFormatted(const graft_host_api_t* host,
                                               graft_status_code_t code,
                                               const char* format, ...) {
    if (format == nullptr) return MakeStatus(host, code, "");
    va_list args;
    va_start(args, format);
    va_list copy;
    va_copy(copy, args);
    int length = std::vsnprintf(nullptr, 0, format, copy);
    va_end(copy);
    std::string message(length > 0 ? static_cast<size_t>(length) : 0, '\0');
    if (length > 0) {
      std::vsnprintf(&message[0], message.size() + 1, format, args);
    }
    va_end(args);
    return MakeStatus(host, code, std::move(message));
  }

  static void LogMessage(const graft_host_api_t* host, graft_log_level_t level,
                         const char* message) {
    if (message == nullptr) return;
    TestHost* self = Self(host);
    std::lock_guard<std::mutex> lock(self->mu_);
    self->logs_.push_back(std::to_string(level) + ": " + message);
  }

  static void* Allocate(const graft_host_api_t* host, size_t size,
                        size_t alignment) {
    if (size == 0) return nullptr;
    void* ptr = nullptr;
    if (alignment <= alignof(std::max_align_t)) {
      ptr = std::malloc(size);
    } else if (posix_memalign(&ptr, alignment, size) != 0) {
      ptr = nullptr;
    }
    if (ptr != nullptr) Self(host)->live_allocations_.fetch_add(1);
    return ptr;
  }

  static void Deallocate(const graft_host_api_t* host, void* ptr) {
    if (ptr == nullptr) return;
    Self(host)->live_allocations_.fetch_sub(1);
    std::free(ptr);
  }

  graft_host_api_t api_;
  std::atomic<int64_t> live_allocations_{0};
  std::atomic<int64_t> live_statuses_{0};
  mutable std::mutex mu_;
  std::vector<std::string> logs_;
};

// A status taken from a call: its code and message, released at once.
struct Status {
  graft_status_code_t code = GRAFT_STATUS_OK;
  std::string message;
  bool ok() const { return code == GRAFT_STATUS_OK; }
};

inline Status Take(graft_status_t* status) {
  Status result;
  if (status == nullptr) return result;
  result.code = status->code;
  result.message = status->message != nullptr ? status->message : "(null)";
  graft_status_release(status);
  return result;
}

// A compiler plugin library opened with dlopen, with every entry point
// looked up by the names the header declares.
class PluginLibrary {
 public:
  // The library at the path in environment variable `env_var` if set, else
  // `default_path`. Returns nullptr and sets *error on failure.
  static std::unique_ptr<PluginLibrary> Open(const char* env_var,
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
    std::unique_ptr<PluginLibrary> library(new PluginLibrary(handle, path));
    library->abi_version = library->Find<graft_compiler_plugin_abi_version_fn>(
        GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL);
    library->create = library->Find<graft_compiler_plugin_create_fn>(
        GRAFT_COMPILER_PLUGIN_CREATE_SYMBOL);
    library->destroy = library->Find<graft_compiler_plugin_destroy_fn>(
        GRAFT_COMPILER_PLUGIN_DESTROY_SYMBOL);
    library->get_info = library->Find<graft_compiler_plugin_get_info_fn>(
        GRAFT_COMPILER_PLUGIN_GET_INFO_SYMBOL);
    library->check_compatibility =
        library->Find<graft_compiler_plugin_check_compatibility_fn>(
            GRAFT_COMPILER_PLUGIN_CHECK_COMPATIBILITY_SYMBOL);
    library->partition = library->Find<graft_compiler_plugin_partition_fn>(
        GRAFT_COMPILER_PLUGIN_PARTITION_SYMBOL);
    library->compile = library->Find<graft_compiler_plugin_compile_fn>(
        GRAFT_COMPILER_PLUGIN_COMPILE_SYMBOL);
    library->compiled_result_destroy =
        library->Find<graft_compiler_plugin_compiled_result_destroy_fn>(
            GRAFT_COMPILER_PLUGIN_COMPILED_RESULT_DESTROY_SYMBOL);
    if (library->abi_version == nullptr || library->create == nullptr ||
        library->destroy == nullptr || library->get_info == nullptr ||
        library->partition == nullptr || library->compile == nullptr ||
        library->compiled_result_destroy == nullptr) {
      *error = path + ": a required entry point is missing";
      return nullptr;
    }
    return library;
  }

  ~PluginLibrary() { dlclose(handle_); }
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::string& path() const { return path_; }

  graft_compiler_plugin_abi_version_fn abi_version = nullptr;
  graft_compiler_plugin_create_fn create = nullptr;
  graft_compiler_plugin_destroy_fn destroy = nullptr;
  graft_compiler_plugin_get_info_fn get_info = nullptr;
  graft_compiler_plugin_check_compatibility_fn check_compatibility = nullptr;
  graft_compiler_plugin_partition_fn partition = nullptr;
  graft_compiler_plugin_compile_fn compile = nullptr;
  graft_compiler_plugin_compiled_result_destroy_fn compiled_result_destroy =
      nullptr;

 private:
  PluginLibrary(void* handle, std::string path)
      : handle_(handle), path_(std::move(path)) {}

  template <typename Fn>
  Fn Find(const char* name) {
    return reinterpret_cast<Fn>(dlsym(handle_, name));
  }

  void* handle_;
  std::string path_;
};

// One attribute, owning its strings and arrays until the view is built.
struct Attribute {
  static Attribute Int(std::string name, int64_t value) {
    Attribute a(std::move(name), GRAFT_ATTRIBUTE_TYPE_INT);
    a.int_value = value;
    return a;
  }
  static Attribute Bool(std::string name, bool value) {
    Attribute a(std::move(name), GRAFT_ATTRIBUTE_TYPE_BOOL);
    a.int_value = value ? 1 : 0;
    return a;
  }
  static Attribute Enum(std::string name, int64_t value, std::string label) {
    Attribute a(std::move(name), GRAFT_ATTRIBUTE_TYPE_ENUM);
    a.int_value = value;
    a.string_value = std::move(label);
    return a;
  }
  // TFLite ActivationFunctionType, as the host presents it.
  static Attribute Activation(const std::string& label) {
    static const char* const kNames[] = {"NONE",  "RELU", "RELU_N1_TO_1",
                                         "RELU6", "TANH", "SIGN_BIT"};
    for (int64_t i = 0; i < 6; ++i) {
      if (label == kNames[i]) {
        return Enum("fused_activation_function", i, label);
      }
    }
    return Enum("fused_activation_function", -1, label);
  }

  std::string name;
  graft_attribute_type_t type;
  int64_t int_value = 0;
  std::string string_value;

 private:
  Attribute(std::string n, graft_attribute_type_t t)
      : name(std::move(n)), type(t) {}
};

// Builds a graft_graph_view_t by hand. Add everything first, then call
// view(); the view stays valid while the builder lives and nothing more is
// added.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "main") : name_(std::move(name)) {}

  int32_t Tensor(std::string name, graft_element_type_t type,
                 std::vector<int64_t> dims) {
    TensorSpec spec;
    spec.name = std::move(name);
    spec.type = type;
    spec.signature = dims;
    spec.dims = std::move(dims);
    tensors_.push_back(std::move(spec));
    return static_cast<int32_t>(tensors_.size() - 1);
  }
  int32_t Input(std::string name, graft_element_type_t type,
                std::vector<int64_t> dims) {
    int32_t index = Tensor(std::move(name), type, std::move(dims));
    inputs_.push_back(index);
    return index;
  }
  int32_t Constant(std::string name, std::vector<int64_t> dims,
                   const std::vector<float>& values, int64_t buffer_id) {
    int32_t index =
        Tensor(std::move(name), GRAFT_ELEMENT_TYPE_FLOAT32, std::move(dims));
    TensorSpec& spec = tensors_[static_cast<size_t>(index)];
    spec.data.resize(values.size() * sizeof(float));
    if (!values.empty()) {
      std::memcpy(spec.data.data(), values.data(), spec.data.size());
    }
    spec.constant = true;
    spec.buffer_id = buffer_id;
    return index;
  }
  // Marks a dimension of tensor `index` dynamic in its shape signature.
  GraphBuilder& Dynamic(int32_t index, size_t dim) {
    tensors_[static_cast<size_t>(index)].signature[dim] = -1;
    return *this;
  }
  GraphBuilder& Output(int32_t index) {
    outputs_.push_back(index);
    return *this;
  }
  // Adds an op; original_op_index defaults to the op's own index.
  GraphBuilder& Op(int32_t builtin_code, std::string op_name,
                   std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                   std::vector<Attribute> attributes = {},
                   int32_t original_op_index = -1) {
    OpSpec spec;
    spec.builtin_code = builtin_code;
    spec.name = std::move(op_name);
    spec.inputs = std::move(inputs);
    spec.outputs = std::move(outputs);
    spec.attributes = std::move(attributes);
    spec.original_op_index = original_op_index >= 0
                                 ? original_op_index
                                 : static_cast<int32_t>(ops_.size());
    ops_.push_back(std::move(spec));
    return *this;
  }

  // The view; rebuilt on every call.
  const graft_graph_view_t* view() {
    tensor_records_.assign(tensors_.size(), graft_tensor_t{});
    tensor_pointers_.clear();
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const TensorSpec& spec = tensors_[i];
      graft_tensor_t& t = tensor_records_[i];
      t.struct_size = sizeof(graft_tensor_t);
      t.name = spec.name.c_str();
      t.element_type = spec.type;
      t.flags = spec.constant ? GRAFT_TENSOR_FLAG_CONSTANT : 0;
      t.dims = spec.dims.empty() ? nullptr : spec.dims.data();
      t.rank = spec.dims.size();
      t.shape_signature =
          spec.signature.empty() ? nullptr : spec.signature.data();
      t.quantization = nullptr;
      t.data.data = spec.data.empty() ? nullptr : spec.data.data();
      t.data.size = spec.data.size();
      t.buffer_id = spec.constant ? spec.buffer_id : -1;
      tensor_pointers_.push_back(&t);
    }
    op_records_.assign(ops_.size(), graft_op_t{});
    attribute_records_.assign(ops_.size(), {});
    op_pointers_.clear();
    for (size_t i = 0; i < ops_.size(); ++i) {
      const OpSpec& spec = ops_[i];
      std::vector<graft_attribute_t>& attributes = attribute_records_[i];
      for (const Attribute& a : spec.attributes) {
        graft_attribute_t record{};
        record.name = a.name.c_str();
        record.type = a.type;
        record.int_value = a.int_value;
        record.string_value = a.type == GRAFT_ATTRIBUTE_TYPE_ENUM ||
                                      a.type == GRAFT_ATTRIBUTE_TYPE_STRING
                                  ? a.string_value.c_str()
                                  : nullptr;
        attributes.push_back(record);
      }
      graft_op_t& op = op_records_[i];
      op.struct_size = sizeof(graft_op_t);
      op.builtin_code = spec.builtin_code;
      op.version = 1;
      op.name = spec.name.c_str();
      op.custom_code = spec.builtin_code == GRAFT_BUILTIN_CUSTOM
                           ? spec.name.c_str()
                           : nullptr;
      op.inputs = spec.inputs.data();
      op.num_inputs = spec.inputs.size();
      op.outputs = spec.outputs.data();
      op.num_outputs = spec.outputs.size();
      op.attributes = attributes.empty() ? nullptr : attributes.data();
      op.num_attributes = attributes.size();
      op.original_op_index = spec.original_op_index;
      op_pointers_.push_back(&op);
    }
    view_ = graft_graph_view_t{};
    view_.struct_size = sizeof(graft_graph_view_t);
    view_.name = name_.c_str();
    view_.subgraph_index = 0;
    view_.tensors = tensor_pointers_.data();
    view_.num_tensors = tensor_pointers_.size();
    view_.ops = op_pointers_.data();
    view_.num_ops = op_pointers_.size();
    view_.inputs = inputs_.data();
    view_.num_inputs = inputs_.size();
    view_.outputs = outputs_.data();
    view_.num_outputs = outputs_.size();
    return &view_;
  }

 private:
  struct TensorSpec {
    std::string name;
    graft_element_type_t type = GRAFT_ELEMENT_TYPE_FLOAT32;
    std::vector<int64_t> dims;
    std::vector<int64_t> signature;
    std::vector<uint8_t> data;
    bool constant = false;
    int64_t buffer_id = -1;
  };
  struct OpSpec {
    int32_t builtin_code = 0;
    std::string name;
    std::vector<int32_t> inputs;
    std::vector<int32_t> outputs;
    std::vector<Attribute> attributes;
    int32_t original_op_index = 0;
  };

  std::string name_;
  std::vector<TensorSpec> tensors_;
  std::vector<OpSpec> ops_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;

  std::vector<graft_tensor_t> tensor_records_;
  std::vector<const graft_tensor_t*> tensor_pointers_;
  std::vector<graft_op_t> op_records_;
  std::vector<std::vector<graft_attribute_t>> attribute_records_;
  std::vector<const graft_op_t*> op_pointers_;
  graft_graph_view_t view_{};
};

// TFLite BuiltinOperator numbers used by the tests.
enum : int32_t {
  kOpAdd = 0,
  kOpConv2d = 3,
  kOpFullyConnected = 9,
  kOpLogistic = 14,
  kOpMul = 18,
  kOpRelu = 19,
  kOpRelu6 = 21,
  kOpTanh = 28,
  kOpSub = 41,
  kOpDiv = 42,
};

}  // namespace graft::abi_test

#endif  // GRAFT_TESTS_ABI_ABI_TEST_SUPPORT_H_
