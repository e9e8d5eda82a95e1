#include "dispatch/vendor_dispatch.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "core/vendor_library.h"
#include "dispatch/dispatch_abi_table.h"

namespace graft {

// The loaded library and its instance. Destroyed after the last device
// context (each holds a reference), so the vendor code stays mapped while
// anything of it is alive.
struct DispatchLibrary::State {
  // The exports; invoke_async, wait and get_profile are non-null only
  // when exported AND backed by a capability bit.
  using Api = DispatchAbiTable;

  ~State() {
    if (instance != nullptr) api.destroy(instance);
  }

  // Declared first, destroyed last: the code must outlive every call.
  std::unique_ptr<DynamicLibrary> library;
  std::unique_ptr<HostApi> host;
  Api api;
  graft_dispatch_t* instance = nullptr;
  DispatchInfo info;
  std::string label;
  // The ABI forbids concurrent check/create/destroy calls on one instance.
  mutable std::mutex mu;
};

struct DeviceContext::State {
  ~State() {
    std::lock_guard<std::mutex> lock(library->mu);
    library->api.device_context_destroy(handle);
  }
  std::shared_ptr<DispatchLibrary::State> library;
  graft_dispatch_device_context_t* handle = nullptr;
};

namespace {

constexpr char kFilePrefix[] = "libgraft_dispatch_";
constexpr char kFileSuffix[] = ".so";

bool IsValidVendorName(absl::string_view v) {
  if (v.empty() || v.size() > 64) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::vector<graft_key_value_t> KeyValues(
    const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<graft_key_value_t> kv;
  kv.reserve(options.size());
  for (const auto& [k, v] : options) kv.push_back({k.c_str(), v.c_str()});
  return kv;
}

const char* IoName(IoKind kind) {
  return kind == IoKind::kInput ? "input" : "output";
}

}  // namespace

// ---------------------------------------------------------------------------
// DispatchLibrary

absl::StatusOr<std::unique_ptr<DispatchLibrary>> DispatchLibrary::Load(
    const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& options) {
  auto state = std::make_shared<State>();
  GRAFT_ASSIGN_OR_RETURN(state->library, DynamicLibrary::Open(path));
  const DynamicLibrary& lib = *state->library;
  State::Api& api = state->api;

  const std::vector<std::string> missing = LookUpDispatchAbiTable(lib, &api);
  if (api.abi_version == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a Graft dispatch library: it does not export ",
                     GRAFT_DISPATCH_ABI_VERSION_SYMBOL));
  }
  // Nothing else is called before the version is known to be compatible.
  const uint32_t version = api.abi_version();
  if (GRAFT_ABI_VERSION_GET_MAJOR(version) != GRAFT_ABI_VERSION_MAJOR) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": built for Graft dispatch ABI ",
        GRAFT_ABI_VERSION_GET_MAJOR(version), ".",
        GRAFT_ABI_VERSION_GET_MINOR(version), ", but this Graft speaks ",
        GRAFT_ABI_VERSION_MAJOR, ".x; rebuild the library against this "
        "Graft's c_api headers"));
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": incomplete Graft dispatch library: missing required ",
        "function(s) ", absl::StrJoin(missing, ", ")));
  }

  const std::string file = std::filesystem::path(path).filename().string();
  state->host = std::make_unique<HostApi>(file);
  std::vector<graft_key_value_t> kv = KeyValues(options);
  graft_dispatch_t* instance = nullptr;
  GRAFT_RETURN_IF_ERROR(TakeStatus(
      api.create(state->host->table(), kv.data(), kv.size(), &instance),
      absl::StrCat(path, ": create")));
  if (instance == nullptr) {
    return absl::InternalError(
        absl::StrCat(path, ": create returned OK but no instance"));
  }
  state->instance = instance;

  const graft_dispatch_info_t* raw = nullptr;
  GRAFT_RETURN_IF_ERROR(TakeStatus(api.get_info(instance, &raw),
                                   absl::StrCat(path, ": get_info")));
  if (raw == nullptr ||
      !GRAFT_STRUCT_HAS_MEMBER(raw, graft_dispatch_info_t, num_options)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": get_info returned ", raw ? "a truncated" : "no",
        " graft_dispatch_info_t"));
  }
  DispatchInfo& info = state->info;
  info.path = path;
  info.vendor = VendorString(raw->vendor);
  if (!IsValidVendorName(info.vendor)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": invalid vendor name '", info.vendor,
                     "' (expected 1-64 characters of [a-z0-9_])"));
  }
  if (absl::StartsWith(file, kFilePrefix) && absl::EndsWith(file, kFileSuffix) &&
      file != DispatchLibraryFileName(info.vendor)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the library says it serves vendor '", info.vendor,
        "', but its file name says otherwise; name it ",
        DispatchLibraryFileName(info.vendor)));
  }
  info.library_version = VendorString(raw->library_version);
  info.build_id = VendorString(raw->build_id);
  info.description = VendorString(raw->description);
  info.abi_version = raw->abi_version;
  info.hardware_kinds = raw->hardware_kinds;
  info.min_bytecode_format_version = raw->min_bytecode_format_version;
  info.max_bytecode_format_version = raw->max_bytecode_format_version;
  if (info.min_bytecode_format_version > info.max_bytecode_format_version) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": vendor '", info.vendor, "' declares bytecode format versions ",
        info.min_bytecode_format_version, " to ",
        info.max_bytecode_format_version, " (min above max)"));
  }
  info.capabilities = raw->capabilities;
  if ((info.capabilities & GRAFT_DISPATCH_CAPABILITY_ASYNC) != 0 &&
      (api.invoke_async == nullptr || api.wait == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": vendor '", info.vendor, "' declares the ASYNC capability but "
        "does not export ", GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL,
        " and ", GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL));
  }
  if ((info.capabilities & GRAFT_DISPATCH_CAPABILITY_PROFILING) != 0 &&
      api.get_profile == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": vendor '", info.vendor, "' declares the PROFILING capability "
        "but does not export ", GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL));
  }
  // Exported without the capability bit: present but not promised to work.
  if ((info.capabilities & GRAFT_DISPATCH_CAPABILITY_ASYNC) == 0) {
    api.invoke_async = nullptr;
    api.wait = nullptr;
  }
  if ((info.capabilities & GRAFT_DISPATCH_CAPABILITY_PROFILING) == 0) {
    api.get_profile = nullptr;
  }
  if (raw->options != nullptr && raw->num_options < 4096) {
    for (size_t i = 0; i < raw->num_options; ++i) {
      info.options.push_back({VendorString(raw->options[i].name),
                              VendorString(raw->options[i].default_value),
                              VendorString(raw->options[i].description)});
    }
  }
  state->label = absl::StrCat(info.vendor, " dispatch (", file, ")");
  return std::unique_ptr<DispatchLibrary>(new DispatchLibrary(std::move(state)));
}

DispatchLibrary::~DispatchLibrary() = default;

const DispatchInfo& DispatchLibrary::info() const { return state_->info; }

const std::string& DispatchLibrary::label() const { return state_->label; }

absl::Status DispatchLibrary::CheckStamp(const ManifestVendor& manifest) const {
  graft_compatibility_stamp_t stamp{};
  stamp.struct_size = sizeof(stamp);
  stamp.abi_version = manifest.compiler_abi_version;
  stamp.bytecode_format_version = manifest.bytecode_format_version;
  stamp.vendor = manifest.vendor.c_str();
  stamp.plugin_version = manifest.plugin_version.c_str();
  stamp.soc_model = manifest.soc_model.c_str();
  const std::string context = absl::StrCat(
      state_->label, ": cannot run the model's '", manifest.vendor,
      "' bytecode (plugin ", manifest.plugin_name, " ",
      manifest.plugin_version, ", SoC ", manifest.soc_model,
      ", bytecode format v", manifest.bytecode_format_version, ")");
  graft_status_t* status;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    status = state_->api.check_compatibility(state_->instance, &stamp);
  }
  GRAFT_RETURN_IF_ERROR(TakeStatus(status, context));
  // The library said yes; still refuse what its own info rules out, so a
  // lenient library cannot run another vendor's bytecode.
  const DispatchInfo& info = state_->info;
  if (manifest.vendor != info.vendor) {
    return absl::FailedPreconditionError(absl::StrCat(
        context, ": the bytecode is for vendor '", manifest.vendor,
        "', but this is the dispatch library of '", info.vendor,
        "' (it accepted the stamp wrongly)"));
  }
  if (manifest.bytecode_format_version < info.min_bytecode_format_version ||
      manifest.bytecode_format_version > info.max_bytecode_format_version) {
    return absl::FailedPreconditionError(absl::StrCat(
        context, ": the library declares bytecode format versions ",
        info.min_bytecode_format_version, " to ",
        info.max_bytecode_format_version, " (it accepted the stamp wrongly)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DeviceContext>>
DispatchLibrary::CreateDeviceContext(
    const std::vector<std::pair<std::string, std::string>>& options) {
  std::vector<graft_key_value_t> kv = KeyValues(options);
  graft_dispatch_device_context_t* handle = nullptr;
  graft_status_t* status;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    status = state_->api.device_context_create(state_->instance, kv.data(),
                                               kv.size(), &handle);
  }
  GRAFT_RETURN_IF_ERROR(TakeStatus(
      status, absl::StrCat(state_->label, ": device_context_create")));
  if (handle == nullptr) {
    return absl::InternalError(absl::StrCat(
        state_->label, ": device_context_create returned OK but no context"));
  }
  auto context = std::make_shared<DeviceContext::State>();
  context->library = state_;
  context->handle = handle;
  return std::unique_ptr<DeviceContext>(new DeviceContext(std::move(context)));
}

// ---------------------------------------------------------------------------
// DeviceContext

DeviceContext::~DeviceContext() = default;

const std::string& DeviceContext::label() const {
  return state_->library->label;
}

absl::StatusOr<std::unique_ptr<Invocation>> DeviceContext::CreateInvocation(
    const InvocationSpec& spec) {
  const DispatchLibrary::State& library = *state_->library;
  const std::string label =
      absl::StrCat(library.label, " entry '", spec.entry_point, "'");
  if (spec.bytecode.empty() || spec.entry_point.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": an invocation needs bytecode and an entry point"));
  }
  if (!spec.model.empty() &&
      (spec.bytecode.data() < spec.model.data() ||
       spec.bytecode.size() > spec.model.size() ||
       static_cast<size_t>(spec.bytecode.data() - spec.model.data()) >
           spec.model.size() - spec.bytecode.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": the bytecode does not lie inside the model mapping"));
  }
  graft_dispatch_invocation_desc_t desc{};
  desc.struct_size = sizeof(desc);
  desc.bytecode = {spec.bytecode.data(), spec.bytecode.size()};
  desc.entry_point = spec.entry_point.c_str();
  desc.num_inputs = spec.num_inputs;
  desc.num_outputs = spec.num_outputs;
  desc.model = {spec.model.empty() ? nullptr : spec.model.data(),
                spec.model.size()};
  desc.model_fd = spec.model_fd;
  if (spec.model_buffers != nullptr) {
    desc.model_buffers = spec.model_buffers->data();
    desc.num_model_buffers = spec.model_buffers->size();
  }
  const bool profiling =
      spec.profiling && library.api.get_profile != nullptr;
  desc.flags = profiling ? GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING : 0;

  graft_dispatch_invocation_t* handle = nullptr;
  graft_status_t* status;
  {
    std::lock_guard<std::mutex> lock(library.mu);
    status = library.api.invocation_create(state_->handle, &desc, &handle);
  }
  GRAFT_RETURN_IF_ERROR(TakeStatus(status, label));
  if (handle == nullptr) {
    return absl::InternalError(
        absl::StrCat(label, ": invocation_create returned OK but no handle"));
  }
  // Owned from here on: an error below destroys it.
  std::unique_ptr<Invocation> invocation(new Invocation());
  invocation->context_ = state_;
  invocation->handle_ = handle;
  invocation->attach_ = library.api.attach_host_memory;
  invocation->invoke_ = library.api.invoke;
  invocation->invoke_async_ = library.api.invoke_async;
  invocation->wait_ = library.api.wait;
  invocation->get_profile_ = library.api.get_profile;
  invocation->profiling_ = profiling;
  invocation->keep_alive_ = spec.keep_alive;
  invocation->model_buffers_ = spec.model_buffers;
  invocation->label_ = label;
  invocation->inputs_.resize(spec.num_inputs);
  invocation->outputs_.resize(spec.num_outputs);
  for (IoKind kind : {IoKind::kInput, IoKind::kOutput}) {
    std::vector<Invocation::Io>& ios =
        kind == IoKind::kInput ? invocation->inputs_ : invocation->outputs_;
    for (size_t i = 0; i < ios.size(); ++i) {
      graft_dispatch_buffer_requirements_t raw{};
      raw.struct_size = sizeof(raw);
      GRAFT_RETURN_IF_ERROR(TakeStatus(
          library.api.get_buffer_requirements(
              handle, static_cast<graft_dispatch_io_kind_t>(kind), i, &raw),
          absl::StrCat(label, ": buffer requirements of ", IoName(kind), " ",
                       i)));
      if (raw.alignment == 0 || (raw.alignment & (raw.alignment - 1)) != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            label, ": ", IoName(kind), " ", i, " requires alignment ",
            raw.alignment, ", which is not a power of two"));
      }
      ios[i].requirements = {raw.size, raw.alignment, raw.element_type};
    }
  }
  return invocation;
}

// ---------------------------------------------------------------------------
// Invocation

Invocation::~Invocation() {
  if (handle_ == nullptr) return;
  const DispatchLibrary::State& library = *context_->library;
  if (in_flight_ && wait_ != nullptr) {
    graft_status_release(wait_(handle_, GRAFT_DISPATCH_TIMEOUT_INFINITE));
  }
  std::lock_guard<std::mutex> lock(library.mu);
  library.api.invocation_destroy(handle_);
}

absl::Status Invocation::Attach(IoKind kind, size_t index, void* data,
                                size_t size) {
  std::vector<Io>& ios = kind == IoKind::kInput ? inputs_ : outputs_;
  if (index >= ios.size()) {
    return absl::OutOfRangeError(absl::StrCat(label_, ": ", IoName(kind), " ",
                                              index, " of ", ios.size()));
  }
  Io& io = ios[index];
  if (io.attached && io.data == data && io.size == size && !in_flight_) {
    return absl::OkStatus();
  }
  // The alignment the library asked for is a promise, checked whenever a
  // buffer changes (a caller's bound buffer may be aligned only to its
  // element size).
  if (reinterpret_cast<uintptr_t>(data) % io.requirements.alignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        label_, ": ", IoName(kind), " ", index, " needs ",
        io.requirements.alignment, "-byte aligned memory, and the buffer at ",
        absl::Hex(reinterpret_cast<uintptr_t>(data)),
        " is not; bind a buffer aligned so"));
  }
  graft_status_t* status =
      attach_(handle_, static_cast<graft_dispatch_io_kind_t>(kind), index,
              data, size);
  if (status != nullptr) {
    return TakeStatus(status, absl::StrCat(label_, ": attach ", IoName(kind),
                                           " ", index));
  }
  io.data = data;
  io.size = size;
  io.attached = true;
  return absl::OkStatus();
}

absl::Status Invocation::AttachInput(size_t index, const void* data,
                                     size_t size) {
  // The ABI promises inputs are never written through.
  return Attach(IoKind::kInput, index, const_cast<void*>(data), size);
}

absl::Status Invocation::AttachOutput(size_t index, void* data, size_t size) {
  return Attach(IoKind::kOutput, index, data, size);
}

absl::Status Invocation::Invoke() {
  graft_status_t* status = invoke_(handle_);
  if (status == nullptr) return absl::OkStatus();
  return TakeStatus(status, absl::StrCat(label_, ": invoke"));
}

absl::Status Invocation::InvokeAsync() {
  if (in_flight_) {
    return absl::FailedPreconditionError(
        absl::StrCat(label_, ": a run is already in flight; Wait() first"));
  }
  if (invoke_async_ == nullptr) {
    emulated_result_ = Invoke();
    in_flight_ = true;
    return absl::OkStatus();
  }
  graft_status_t* status = invoke_async_(handle_);
  if (status != nullptr) {
    return TakeStatus(status, absl::StrCat(label_, ": invoke_async"));
  }
  in_flight_ = true;
  return absl::OkStatus();
}

absl::Status Invocation::Wait(uint64_t timeout_ns) {
  if (!in_flight_) {
    return absl::FailedPreconditionError(
        absl::StrCat(label_, ": Wait() without a run started by InvokeAsync()"));
  }
  if (wait_ == nullptr) {
    in_flight_ = false;
    return std::exchange(emulated_result_, absl::OkStatus());
  }
  graft_status_t* status = wait_(handle_, timeout_ns);
  if (status != nullptr && status->code == GRAFT_STATUS_DEADLINE_EXCEEDED) {
    return TakeStatus(status, absl::StrCat(label_, ": wait"));
  }
  in_flight_ = false;
  if (status == nullptr) return absl::OkStatus();
  return TakeStatus(status, absl::StrCat(label_, ": wait"));
}

absl::StatusOr<std::vector<ProfileEvent>> Invocation::Profile() const {
  if (!profiling_) {
    return absl::FailedPreconditionError(absl::StrCat(
        label_, ": no profile: the invocation was created without profiling ",
        "or the library lacks the PROFILING capability"));
  }
  const graft_dispatch_profile_event_t* events = nullptr;
  size_t count = 0;
  GRAFT_RETURN_IF_ERROR(TakeStatus(get_profile_(handle_, &events, &count),
                                   absl::StrCat(label_, ": get_profile")));
  if (count > 0 && events == nullptr) {
    return absl::InternalError(absl::StrCat(
        label_, ": get_profile returned ", count, " events but no array"));
  }
  std::vector<ProfileEvent> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    out.push_back({VendorString(events[i].name), events[i].start_ns,
                   events[i].end_ns, events[i].vendor_location});
  }
  return out;
}

// ---------------------------------------------------------------------------
// Finding libraries

std::string DispatchLibraryFileName(absl::string_view vendor) {
  return absl::StrCat(kFilePrefix, vendor, kFileSuffix);
}

absl::StatusOr<std::string> FindDispatchLibrary(
    absl::Span<const std::string> dirs, absl::string_view vendor) {
  if (!IsValidVendorName(vendor)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid vendor name '", vendor,
        "' (expected 1-64 characters of [a-z0-9_])"));
  }
  const std::string file = DispatchLibraryFileName(vendor);
  for (const std::string& dir : dirs) {
    std::error_code ec;
    const std::filesystem::path candidate = std::filesystem::path(dir) / file;
    if (std::filesystem::is_regular_file(candidate, ec)) {
      return candidate.string();
    }
  }
  return absl::NotFoundError(absl::StrCat(
      "no dispatch library for vendor '", vendor, "' in [",
      absl::StrJoin(dirs, ", "), "] (looked for ", file, "): build vendors/",
      vendor, " or pass --dispatch-dir"));
}

absl::StatusOr<std::unique_ptr<DispatchLibrary>> LoadDispatchLibraryForVendor(
    absl::Span<const std::string> dirs, absl::string_view vendor,
    const std::vector<std::pair<std::string, std::string>>& options) {
  GRAFT_ASSIGN_OR_RETURN(std::string path, FindDispatchLibrary(dirs, vendor));
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<DispatchLibrary> library,
                         DispatchLibrary::Load(path, options));
  if (library->info().vendor != vendor) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": found as the dispatch library of vendor '", vendor,
        "', but it serves '", library->info().vendor, "'"));
  }
  return library;
}

}  // namespace graft
