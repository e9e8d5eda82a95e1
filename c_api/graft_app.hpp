/* graft_app.hpp: a header-only C++17 wrapper of the app API (graft_app.h)
 * for apps that prefer objects that release themselves and errors as
 * values. It adds no symbols and no ABI: every function is inline over the
 * C functions libgraft.so exports, so an app built with any C++17 compiler
 * links libgraft.so alone, as a C app does. It never throws.
 *
 *   graft::ModelOptions options;
 *   options.dispatch_dirs = {"/opt/acme/lib"};
 *   options.fallback_policy = GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS;
 *   graft::Expected<graft::Model> model = graft::Model::Load(path, options);
 *   if (!model) { fprintf(stderr, "%s\n", model.error().message().c_str()); }
 *   graft::Expected<graft::Signature> sig = model->signature("serving_default");
 *   sig->set_input("x", pixels);                     // std::vector<float>
 *   graft::Status st = sig->invoke();
 *   graft::Expected<graft::Span<const float>> y = sig->output<float>("y");
 *
 * Lifetimes are the C API's: a Signature, a Span and a report borrowed from
 * a Model are valid while the Model lives (and until the events graft_app.h
 * names beside each function). */
#ifndef GRAFT_C_API_GRAFT_APP_HPP_
#define GRAFT_C_API_GRAFT_APP_HPP_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graft_app.h"

namespace graft {

/* A failed call: graft_app.h's status code and Graft's message. An OK
 * Status has code GRAFT_STATUS_OK and an empty message. */
class Status {
 public:
  Status() = default;
  Status(graft_status_code_t code, std::string message)
      : code_(code), message_(std::move(message)) {}
  /* Takes ownership of a C status (NULL is OK) and releases it. */
  static Status FromC(graft_status_t* status) {
    if (status == nullptr) return Status();
    Status out(graft_status_code(status),
               status->message != nullptr ? status->message : "");
    graft_status_release(status);
    return out;
  }
  bool ok() const { return code_ == GRAFT_STATUS_OK; }
  explicit operator bool() const { return ok(); }
  graft_status_code_t code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  graft_status_code_t code_ = GRAFT_STATUS_OK;
  std::string message_;
};

/* A value or the Status that prevented it. */
template <typename T>
class Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}  // NOLINT: implicit
  Expected(Status error) : error_(std::move(error)) {}  // NOLINT: implicit
  bool ok() const { return error_.ok(); }
  explicit operator bool() const { return ok(); }
  /* The Status: OK when there is a value. */
  const Status& error() const { return error_; }
  /* The value; only when ok(). */
  T& value() { return value_; }
  const T& value() const { return value_; }
  T* operator->() { return &value_; }
  const T* operator->() const { return &value_; }
  T& operator*() { return value_; }
  const T& operator*() const { return value_; }

 private:
  T value_{};
  Status error_;
};

/* Borrowed contiguous elements (std::span's shape, for C++17). */
template <typename T>
struct Span {
  T* data = nullptr;
  size_t size = 0;
  T* begin() const { return data; }
  T* end() const { return data + size; }
  T& operator[](size_t i) const { return data[i]; }
};

namespace internal {

/* C string arrays for the C option structs: pointers into `strings`, which
 * must outlive the call. */
inline std::vector<const char*> CStrings(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  out.reserve(v.size());
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
}
inline const char* OrNull(const std::string& s) {
  return s.empty() ? nullptr : s.c_str();
}

}  // namespace internal

/* graft_model_options_t with owned strings; empty members take the defaults
 * graft_app.h writes beside each. */
struct ModelOptions {
  int32_t num_threads = 0;
  graft_fallback_policy_t fallback_policy = GRAFT_FALLBACK_POLICY_ALLOW_CPU;
  graft_model_flags_t flags = 0;
  std::vector<std::string> dispatch_dirs;
  std::vector<std::string> dispatch_paths;
  std::string plugin_dir;
  std::string cache_dir;
  std::string soc_model;
  std::vector<std::string> plugin_options;
  std::vector<std::string> vendors;
};

/* One entry point of a Model (graft_signature_t), borrowed from it. Inputs
 * and outputs are named as the signature names them. */
class Signature {
 public:
  Signature() = default;
  explicit Signature(graft_signature_t* sig) : sig_(sig) {}
  graft_signature_t* get() const { return sig_; }
  std::string key() const { return graft_signature_key(sig_); }

  std::vector<std::string> input_names() const { return Names(true); }
  std::vector<std::string> output_names() const { return Names(false); }

  Expected<size_t> input_index(const std::string& name) const {
    size_t index = 0;
    Status st = Status::FromC(
        graft_signature_find_input(sig_, name.c_str(), &index));
    if (!st) return st;
    return index;
  }
  Expected<size_t> output_index(const std::string& name) const {
    size_t index = 0;
    Status st = Status::FromC(
        graft_signature_find_output(sig_, name.c_str(), &index));
    if (!st) return st;
    return index;
  }
  /* Shape, element type and quantization (graft_tensor_info_t). */
  Expected<const graft_tensor_info_t*> input_info(const std::string& name) {
    Expected<size_t> index = input_index(name);
    if (!index) return index.error();
    const graft_tensor_info_t* info = nullptr;
    Status st = Status::FromC(
        graft_signature_get_input_info(sig_, *index, &info));
    if (!st) return st;
    return info;
  }
  Expected<const graft_tensor_info_t*> output_info(const std::string& name) {
    Expected<size_t> index = output_index(name);
    if (!index) return index.error();
    const graft_tensor_info_t* info = nullptr;
    Status st = Status::FromC(
        graft_signature_get_output_info(sig_, *index, &info));
    if (!st) return st;
    return info;
  }

  /* Copies `values` into the input (exactly its byte size). */
  template <typename T>
  Status set_input(const std::string& name, const std::vector<T>& values) {
    return set_input(name, values.data(), values.size() * sizeof(T));
  }
  Status set_input(const std::string& name, const void* data, size_t size) {
    Expected<size_t> index = input_index(name);
    if (!index) return index.error();
    return Status::FromC(graft_signature_set_input(sig_, *index, data, size));
  }
  /* Zero copy: the runtime's own input buffer, filled in place. */
  template <typename T>
  Expected<Span<T>> input_buffer(const std::string& name) {
    Expected<size_t> index = input_index(name);
    if (!index) return index.error();
    void* data = nullptr;
    size_t size = 0;
    Status st = Status::FromC(
        graft_signature_get_input_buffer(sig_, *index, &data, &size));
    if (!st) return st;
    return Span<T>{static_cast<T*>(data), size / sizeof(T)};
  }
  /* An output after invoke(), read in place. */
  template <typename T>
  Expected<Span<const T>> output(const std::string& name) const {
    Expected<size_t> index = output_index(name);
    if (!index) return index.error();
    const void* data = nullptr;
    size_t size = 0;
    Status st = Status::FromC(
        graft_signature_get_output_buffer(sig_, *index, &data, &size));
    if (!st) return st;
    return Span<const T>{static_cast<const T*>(data), size / sizeof(T)};
  }
  /* Zero copy with the caller's memory (graft_signature_bind_*): `values`
   * must stay alive and unresized while bound. */
  template <typename T>
  Status bind_input(const std::string& name, std::vector<T>& values) {
    Expected<size_t> index = input_index(name);
    if (!index) return index.error();
    return Status::FromC(graft_signature_bind_input(
        sig_, *index, values.data(), values.size() * sizeof(T)));
  }
  template <typename T>
  Status bind_output(const std::string& name, std::vector<T>& values) {
    Expected<size_t> index = output_index(name);
    if (!index) return index.error();
    return Status::FromC(graft_signature_bind_output(
        sig_, *index, values.data(), values.size() * sizeof(T)));
  }
  Status resize_input(const std::string& name,
                      const std::vector<int64_t>& dims) {
    Expected<size_t> index = input_index(name);
    if (!index) return index.error();
    return Status::FromC(graft_signature_resize_input(sig_, *index,
                                                      dims.data(), dims.size()));
  }
  Status invoke() { return Status::FromC(graft_signature_invoke(sig_)); }

 private:
  std::vector<std::string> Names(bool inputs) const {
    std::vector<std::string> out;
    size_t n = inputs ? graft_signature_input_count(sig_)
                      : graft_signature_output_count(sig_);
    for (size_t i = 0; i < n; ++i) {
      const graft_tensor_info_t* info = nullptr;
      graft_status_t* st =
          inputs ? graft_signature_get_input_info(sig_, i, &info)
                 : graft_signature_get_output_info(sig_, i, &info);
      if (st != nullptr) {
        graft_status_release(st);
        continue;
      }
      out.emplace_back(info->name);
    }
    return out;
  }

  graft_signature_t* sig_ = nullptr;
};

/* A loaded, prepared model (graft_model_t), released on destruction. */
class Model {
 public:
  Model() = default;

  static Expected<Model> Load(const std::string& path,
                              const ModelOptions& options = {}) {
    return Create(options, [&](const graft_model_options_t* c,
                               graft_model_t** out) {
      return graft_model_create_from_file(path.c_str(), c, out);
    });
  }
  /* The bytes are copied; `name` names the model in messages. */
  static Expected<Model> FromMemory(const void* data, size_t size,
                                    const std::string& name = "",
                                    const ModelOptions& options = {}) {
    return Create(options, [&](const graft_model_options_t* c,
                               graft_model_t** out) {
      return graft_model_create_from_memory(data, size,
                                            internal::OrNull(name), c, out);
    });
  }

  graft_model_t* get() const { return model_.get(); }

  std::vector<std::string> signature_keys() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < graft_model_signature_count(get()); ++i) {
      graft_signature_t* sig = nullptr;
      graft_status_t* st = graft_model_get_signature(get(), i, &sig);
      if (st != nullptr) {
        graft_status_release(st);
        continue;
      }
      out.emplace_back(graft_signature_key(sig));
    }
    return out;
  }
  /* The signature named `key`; "" for subgraph 0's own entry point. */
  Expected<Signature> signature(const std::string& key = "") {
    graft_signature_t* sig = nullptr;
    Status st = Status::FromC(
        graft_model_find_signature(get(), key.c_str(), &sig));
    if (!st) return st;
    return Signature(sig);
  }
  /* What ran where; borrowed (graft_model_get_report). */
  Expected<const graft_model_report_t*> report() {
    const graft_model_report_t* report = nullptr;
    Status st = Status::FromC(graft_model_get_report(get(), &report));
    if (!st) return st;
    return report;
  }
  /* Per-op timings; needs GRAFT_MODEL_FLAG_PROFILING. Borrowed. */
  Expected<const graft_profile_t*> profile() {
    const graft_profile_t* profile = nullptr;
    Status st = Status::FromC(graft_model_get_profile(get(), &profile));
    if (!st) return st;
    return profile;
  }
  void reset_profile() { graft_model_reset_profile(get()); }

 private:
  struct Deleter {
    void operator()(graft_model_t* m) const { graft_model_destroy(m); }
  };

  template <typename CreateFn>
  static Expected<Model> Create(const ModelOptions& o, CreateFn create) {
    std::vector<const char*> dispatch_dirs = internal::CStrings(o.dispatch_dirs);
    std::vector<const char*> dispatch_paths =
        internal::CStrings(o.dispatch_paths);
    std::vector<const char*> plugin_options =
        internal::CStrings(o.plugin_options);
    std::vector<const char*> vendors = internal::CStrings(o.vendors);
    graft_model_options_t c;
    graft_model_options_init(&c);
    c.num_threads = o.num_threads;
    c.fallback_policy = o.fallback_policy;
    c.flags = o.flags;
    c.dispatch_dirs = dispatch_dirs.data();
    c.num_dispatch_dirs = dispatch_dirs.size();
    c.dispatch_paths = dispatch_paths.data();
    c.num_dispatch_paths = dispatch_paths.size();
    c.plugin_dir = internal::OrNull(o.plugin_dir);
    c.cache_dir = internal::OrNull(o.cache_dir);
    c.soc_model = internal::OrNull(o.soc_model);
    c.plugin_options = plugin_options.data();
    c.num_plugin_options = plugin_options.size();
    c.vendors = vendors.data();
    c.num_vendors = vendors.size();
    graft_model_t* raw = nullptr;
    Status st = Status::FromC(create(&c, &raw));
    if (!st) return st;
    Model model;
    model.model_.reset(raw);
    return model;
  }

  std::unique_ptr<graft_model_t, Deleter> model_;
};

/* graft_apply_options_t with owned strings. */
struct ApplyOptions {
  graft_apply_mode_t mode = GRAFT_APPLY_MODE_APPLY;
  std::vector<std::string> plugin_paths;
  std::string plugin_dir;
  std::vector<std::string> vendors;
  std::vector<std::string> plugin_options;
  std::string soc_model;
};

/* graft_apply's report, released on destruction. */
class ApplyReport {
 public:
  ApplyReport() = default;
  explicit ApplyReport(graft_apply_report_t* report) : report_(report) {}
  const graft_apply_report_t* get() const { return report_.get(); }
  const graft_apply_report_t* operator->() const { return report_.get(); }
  Span<const graft_apply_op_t> ops() const {
    return {report_->ops, report_->num_ops};
  }

 private:
  struct Deleter {
    void operator()(graft_apply_report_t* r) const {
      graft_apply_report_destroy(r);
    }
  };
  std::unique_ptr<graft_apply_report_t, Deleter> report_;
};

/* Compiles `model_path` into `output_path` ahead of time (graft_apply). */
inline Expected<ApplyReport> Apply(const std::string& model_path,
                                   const std::string& output_path,
                                   const ApplyOptions& o = {}) {
  std::vector<const char*> plugin_paths = internal::CStrings(o.plugin_paths);
  std::vector<const char*> vendors = internal::CStrings(o.vendors);
  std::vector<const char*> plugin_options =
      internal::CStrings(o.plugin_options);
  graft_apply_options_t c;
  graft_apply_options_init(&c);
  c.mode = o.mode;
  c.plugin_paths = plugin_paths.data();
  c.num_plugin_paths = plugin_paths.size();
  c.plugin_dir = internal::OrNull(o.plugin_dir);
  c.vendors = vendors.data();
  c.num_vendors = vendors.size();
  c.plugin_options = plugin_options.data();
  c.num_plugin_options = plugin_options.size();
  c.soc_model = internal::OrNull(o.soc_model);
  graft_apply_report_t* raw = nullptr;
  Status st = Status::FromC(
      graft_apply(model_path.c_str(), output_path.c_str(), &c, &raw));
  if (!st) {
    graft_apply_report_destroy(raw);
    return st;
  }
  return ApplyReport(raw);
}

}  // namespace graft

#endif /* GRAFT_C_API_GRAFT_APP_HPP_ */
