// DispatchLibrary: one loaded vendor dispatch library (a shared library
// exporting the functions of c_api/graft_dispatch.h) and one instance of it,
// with RAII wrappers for its device contexts and invocations. This is the
// only code that calls into a dispatch library: it checks the ABI version
// before anything else, validates the info and every answer, and converts
// statuses (core/vendor_library.h), so the runtime sees checked C++ values.
//
// Ownership: a DeviceContext keeps its library loaded and an Invocation keeps
// its device context alive, so objects may be destroyed in any order; the
// vendor sees them destroyed children first, as its ABI requires.
//
// Use from a runtime: at load, CheckStamp() once per model, one
// DeviceContext, and one Invocation per dispatch op (CreateInvocation, then
// read its buffer requirements). Per run: AttachInput/AttachOutput for each
// buffer (free when the pointer did not change: the last attachment is
// remembered) and Invoke(). The run path allocates nothing and formats no
// string unless it fails.
//
// Thread-safety: DispatchLibrary and DeviceContext may be used from several
// threads (calls into the vendor that create, destroy or check are
// serialized per library instance, as the ABI requires). One Invocation is
// used by one thread at a time; different invocations run concurrently.
#ifndef GRAFT_DISPATCH_VENDOR_DISPATCH_H_
#define GRAFT_DISPATCH_VENDOR_DISPATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/compiled_format.h"
#include "graft_dispatch.h"

namespace graft {

// What a dispatch library says about itself (graft_dispatch_info_t), copied
// and checked at load.
struct DispatchInfo {
  std::string vendor;
  std::string library_version;
  std::string build_id;
  std::string description;
  uint32_t abi_version = 0;
  // GRAFT_DISPATCH_CAPABILITY_* bits, kept only where the library exports
  // the functions they promise.
  uint32_t capabilities = 0;
  uint32_t hardware_kinds = 0;
  uint32_t min_bytecode_format_version = 0;
  uint32_t max_bytecode_format_version = 0;
  struct Option {
    std::string name, default_value, description;
  };
  std::vector<Option> options;
  // The library file.
  std::string path;
};

enum class IoKind : int32_t {
  kInput = GRAFT_DISPATCH_IO_KIND_INPUT,
  kOutput = GRAFT_DISPATCH_IO_KIND_OUTPUT,
};

// What one input or output of an invocation needs (checked: alignment is a
// power of two).
struct BufferRequirements {
  size_t size = 0;
  size_t alignment = 1;
  int32_t element_type = GRAFT_ELEMENT_TYPE_FLOAT32;
};

struct ProfileEvent {
  std::string name;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  // The instruction's location in the vendor's debug-map unit; 0 for none.
  uint64_t vendor_location = 0;
};

// What to prepare: one entry point of one bytecode module.
struct InvocationSpec {
  // The module, zero-copy from the mapped model; never empty.
  absl::Span<const uint8_t> bytecode;
  // The entry point in the module (DispatchOpOptions::entry_point).
  std::string entry_point;
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  // The whole mapped model (base, size) and its file descriptor, so the
  // vendor can use weights in place by file offset; empty / -1 when the
  // bytecode is not in a mapped file. `bytecode` must lie inside `model`
  // when both are given.
  absl::Span<const uint8_t> model;
  int model_fd = -1;
  // The model's buffers by buffer id (graft_dispatch_invocation_desc_t::
  // model_buffers); null when there is no model. Shared by the model's
  // invocations and kept alive by each.
  std::shared_ptr<const std::vector<graft_byte_span_t>> model_buffers;
  // Record per-run timings (only if the library has the PROFILING
  // capability; ignored otherwise).
  bool profiling = false;
  // Keeps `bytecode`, `model` and `model_fd` valid for as long as the
  // invocation lives (the ABI lets the vendor use them in place), e.g. the
  // model's MappedFile. May be null when the caller guarantees that itself.
  std::shared_ptr<const void> keep_alive;
};

class DeviceContext;
class Invocation;

class DispatchLibrary {
 public:
  // Loads the dispatch library at `path` and creates an instance with
  // `options`. Checks, in order: loadable; exports
  // graft_dispatch_abi_version; of this Graft's ABI major (before anything
  // else is called); every required function present; create succeeds;
  // info complete and consistent (valid vendor name matching the file name
  // libgraft_dispatch_<vendor>.so, min <= max bytecode format version,
  // capabilities backed by exported functions). Errors name the file.
  static absl::StatusOr<std::unique_ptr<DispatchLibrary>> Load(
      const std::string& path,
      const std::vector<std::pair<std::string, std::string>>& options = {});
  ~DispatchLibrary();
  DispatchLibrary(const DispatchLibrary&) = delete;
  DispatchLibrary& operator=(const DispatchLibrary&) = delete;

  const DispatchInfo& info() const;
  // "example dispatch (libgraft_dispatch_example.so)", for messages.
  const std::string& label() const;
  bool HasCapability(uint32_t capability_bit) const {
    return (info().capabilities & capability_bit) != 0;
  }

  // Asks the library whether it runs the bytecode a model's manifest entry
  // describes (vendor, bytecode format version, SoC model...). The error
  // carries the library's explanation, prefixed with this library's label
  // and what the manifest says.
  absl::Status CheckStamp(const ManifestVendor& manifest) const;

  // Opens a device context with `options` (vendor-defined keys).
  absl::StatusOr<std::unique_ptr<DeviceContext>> CreateDeviceContext(
      const std::vector<std::pair<std::string, std::string>>& options = {});

  // Shared with DeviceContext and Invocation; defined in the .cc file.
  struct State;

 private:
  explicit DispatchLibrary(std::shared_ptr<State> state)
      : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

// An open device context of one dispatch library.
class DeviceContext {
 public:
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  // Prepares `spec.entry_point` of `spec.bytecode`: the vendor parses and
  // validates the bytecode here. Then reads the buffer requirements of
  // every input and output. Errors name the library, the entry point and,
  // for malformed bytecode, the vendor's account of where it is wrong.
  absl::StatusOr<std::unique_ptr<Invocation>> CreateInvocation(
      const InvocationSpec& spec);

  const std::string& label() const;

  // Owns the vendor's context handle; shared with its invocations.
  struct State;

 private:
  explicit DeviceContext(std::shared_ptr<State> state)
      : state_(std::move(state)) {}
  friend class DispatchLibrary;
  std::shared_ptr<State> state_;
};

// One prepared entry point. Not thread-safe: one thread at a time.
class Invocation {
 public:
  ~Invocation();
  Invocation(const Invocation&) = delete;
  Invocation& operator=(const Invocation&) = delete;

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const BufferRequirements& input_requirements(size_t index) const {
    return inputs_[index].requirements;
  }
  const BufferRequirements& output_requirements(size_t index) const {
    return outputs_[index].requirements;
  }

  // Binds host memory to input / output `index` for every later run, until
  // re-attached. Re-attaching the pointer and size already attached does not
  // call the vendor. Inputs are only read (read-only memory is fine).
  absl::Status AttachInput(size_t index, const void* data, size_t size);
  absl::Status AttachOutput(size_t index, void* data, size_t size);

  // Runs once, synchronously; every input and output must be attached.
  absl::Status Invoke();

  // Starts a run and returns; Wait() finishes it. Libraries without the
  // ASYNC capability run synchronously in InvokeAsync and Wait reports the
  // result, so callers need no second code path. Until Wait returns
  // something other than DEADLINE_EXCEEDED, attached memory belongs to the
  // run and the invocation accepts no other call.
  absl::Status InvokeAsync();
  absl::Status Wait(uint64_t timeout_ns = GRAFT_DISPATCH_TIMEOUT_INFINITE);

  // The spans of the last completed run of an invocation created with
  // `profiling`; FailedPrecondition if it was not, or the library cannot.
  absl::StatusOr<std::vector<ProfileEvent>> Profile() const;

  // "example dispatch (libgraft_dispatch_example.so) entry 'partition_0'".
  const std::string& label() const { return label_; }

 private:
  friend class DeviceContext;
  struct Io {
    BufferRequirements requirements;
    // The last successful attachment, so unchanged buffers skip the call.
    const void* data = nullptr;
    size_t size = 0;
    bool attached = false;
  };
  Invocation() = default;
  absl::Status Attach(IoKind kind, size_t index, void* data, size_t size);

  std::shared_ptr<DeviceContext::State> context_;
  graft_dispatch_invocation_t* handle_ = nullptr;
  // Copied from the library's table for the run path.
  graft_dispatch_invocation_attach_host_memory_fn attach_ = nullptr;
  graft_dispatch_invocation_invoke_fn invoke_ = nullptr;
  graft_dispatch_invocation_invoke_async_fn invoke_async_ = nullptr;
  graft_dispatch_invocation_wait_fn wait_ = nullptr;
  graft_dispatch_invocation_get_profile_fn get_profile_ = nullptr;
  std::vector<Io> inputs_;
  std::vector<Io> outputs_;
  bool profiling_ = false;
  bool in_flight_ = false;
  // The result of a synchronous stand-in for an async run.
  absl::Status emulated_result_;
  std::shared_ptr<const void> keep_alive_;
  std::shared_ptr<const std::vector<graft_byte_span_t>> model_buffers_;
  std::string label_;
};

// "libgraft_dispatch_<vendor>.so".
std::string DispatchLibraryFileName(absl::string_view vendor);

// The path of vendor `vendor`'s dispatch library: the first of `dirs` that
// holds libgraft_dispatch_<vendor>.so. NotFound says which file was looked
// for where, and what to do ("build vendors/<vendor> or pass
// --dispatch-dir"); InvalidArgument for a vendor name outside [a-z0-9_]+.
absl::StatusOr<std::string> FindDispatchLibrary(
    absl::Span<const std::string> dirs, absl::string_view vendor);

// FindDispatchLibrary + DispatchLibrary::Load, checking that the library
// found serves `vendor`.
absl::StatusOr<std::unique_ptr<DispatchLibrary>> LoadDispatchLibraryForVendor(
    absl::Span<const std::string> dirs, absl::string_view vendor,
    const std::vector<std::pair<std::string, std::string>>& options = {});

}  // namespace graft

#endif  // GRAFT_DISPATCH_VENDOR_DISPATCH_H_
