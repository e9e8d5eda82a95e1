#include "dispatch/litert_dispatch_library.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status.h"
#include "core/vendor_library.h"

namespace graft {

using namespace litert_abi;  // NOLINT: the ABI's names are its own prefix

namespace {

// Marks objects this host made, so a handle the library hands back that is
// not ours is refused instead of read.
constexpr uint32_t kRequirementsMagic = 0x4c525251;  // "LRRQ"

struct Requirements : LiteRtTensorBufferRequirementsT {
  uint32_t magic = kRequirementsMagic;
};

// The empty environment, environment options, options and opaque options
// this host passes: Graft has no LiteRT options to give, so every lookup
// answers NotFound and the library uses its defaults.
}  // namespace
}  // namespace graft

struct graft::litert_abi::LiteRtEnvironmentT {};
struct graft::litert_abi::LiteRtEnvironmentOptionsT {};
struct graft::litert_abi::LiteRtOptionsT {};
struct graft::litert_abi::LiteRtOpaqueOptionsT {};

namespace graft {
namespace {

LiteRtEnvironmentT g_environment;
LiteRtEnvironmentOptionsT g_environment_options;
LiteRtOptionsT g_options;
LiteRtOpaqueOptionsT g_opaque_options;

// The runtime-context slot names, in slot order, for messages.
constexpr const char* kSlotNames[] = {
    "create_tensor_buffer_requirements",
    "get_external_litert_buffer_context_tensor_buffer",
    "external_litert_buffer_context_create_tensor_buffer",
    "external_litert_buffer_context_register_tensor_buffer",
    "external_litert_buffer_context_unregister_tensor_buffer",
    "external_litert_buffer_context_register_buffer_requirements",
    "external_litert_buffer_context_get_environment",
    "external_litert_buffer_context_is_async_execution_mode",
    "external_litert_buffer_context_destroy",
    "get_opaque_options",
    "find_opaque_options_data",
    "destroy_options",
    "get_environment_options",
    "get_environment_options_value",
    "environment_has_gpu_environment",
    "add_environment_options",
    "gpu_environment_create",
    "wrap_delegate",
    "unwrap_delegate",
    "create_tensor_buffer_from_host_memory",
    "create_managed_tensor_buffer",
    "destroy_tensor_buffer",
    "get_tensor_buffer_type",
    "get_tensor_buffer_tensor_type",
    "get_tensor_buffer_size",
    "get_tensor_buffer_packed_size",
    "get_tensor_buffer_offset",
    "lock_tensor_buffer",
    "unlock_tensor_buffer",
    "get_tensor_buffer_host_memory",
    "get_tensor_buffer_opencl_memory",
    "get_tensor_buffer_gl_buffer",
    "get_tensor_buffer_custom_tensor_buffer_handle",
    "get_tensor_buffer_ahwb",
    "get_tensor_buffer_dma_buf_buffer",
    "get_tensor_buffer_fast_rpc_buffer",
    "has_tensor_buffer_event",
    "get_tensor_buffer_event",
    "set_tensor_buffer_event",
    "create_managed_event",
    "create_event_from_sync_fence_fd",
    "get_event_event_type",
    "get_event_sync_fence_fd",
    "create_event_from_opencl_event",
    "get_event_opencl_event",
    "set_custom_event",
    "get_custom_event",
    "wait_event",
    "external_litert_buffer_context_get_run_options",
    "get_options_hardware_accelerators",
    "append_metric",
};
constexpr size_t kNumSlots = sizeof(kSlotNames) / sizeof(kSlotNames[0]);
static_assert(sizeof(LiteRtRuntimeContext) ==
                  sizeof(LiteRtAbiHeader) + kNumSlots * sizeof(void*),
              "one name per runtime-context slot");

// The last slot asked for that this host does not provide (-1: none).
std::atomic<int> g_last_unsupported{-1};

// A typed function for slot `Offset` that answers "unsupported".
template <size_t Offset, typename Fn>
struct Unsupported;
template <size_t Offset, typename R, typename... Args>
struct Unsupported<Offset, R (*)(Args...)> {
  static R Call(Args...) {
    g_last_unsupported.store(
        static_cast<int>((Offset - sizeof(LiteRtAbiHeader)) / sizeof(void*)),
        std::memory_order_relaxed);
    if constexpr (!std::is_void_v<R>) return kLiteRtStatusErrorUnsupported;
  }
};
#define GRAFT_LITERT_UNSUPPORTED(ctx, slot)                      \
  (ctx).slot = Unsupported<offsetof(LiteRtRuntimeContext, slot), \
                           decltype(LiteRtRuntimeContext::slot)>::Call

// --- the slots this host provides ---

LiteRtStatus CreateRequirements(int num_types,
                                const LiteRtTensorBufferType* types,
                                size_t buffer_size, int num_strides,
                                const uint32_t* strides,
                                LiteRtTensorBufferRequirements* out) {
  if (out == nullptr || num_types < 0 || num_strides < 0 ||
      (num_types > 0 && types == nullptr) ||
      (num_strides > 0 && strides == nullptr)) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  auto* r = new Requirements();
  r->supported_types.assign(types, types + num_types);
  r->buffer_size = buffer_size;
  if (num_strides > 0) r->strides.assign(strides, strides + num_strides);
  *out = r;
  return kLiteRtStatusOk;
}

LiteRtStatus GetOpaqueOptions(LiteRtOptions options, LiteRtOpaqueOptions* out) {
  if (options == nullptr || out == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *out = &g_opaque_options;
  return kLiteRtStatusOk;
}

LiteRtStatus FindOpaqueOptionsData(LiteRtOpaqueOptions, const char*,
                                   void** data) {
  if (data == nullptr) return kLiteRtStatusErrorInvalidArgument;
  return kLiteRtStatusErrorNotFound;
}

void DestroyOptions(LiteRtOptions) {}  // the host's, never the library's

LiteRtStatus GetEnvironmentOptions(LiteRtEnvironment env,
                                   LiteRtEnvironmentOptions* out) {
  if (env == nullptr || out == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *out = &g_environment_options;
  return kLiteRtStatusOk;
}

LiteRtStatus GetEnvironmentOptionsValue(LiteRtEnvironmentOptions,
                                        LiteRtEnvOptionTag, LiteRtAny* value) {
  if (value == nullptr) return kLiteRtStatusErrorInvalidArgument;
  return kLiteRtStatusErrorNotFound;
}

void EnvironmentHasGpuEnvironment(LiteRtEnvironment, bool* has) {
  if (has != nullptr) *has = false;
}

LiteRtStatus CreateHostBuffer(const LiteRtRankedTensorType* type, void* data,
                              size_t size,
                              LiteRtHostMemoryDeallocator deallocator,
                              LiteRtTensorBuffer* out) {
  if (type == nullptr || out == nullptr || (data == nullptr && size > 0)) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  LiteRtTensorBuffer b = NewHostTensorBuffer(*type, data, size);
  b->deallocator = deallocator;
  *out = b;
  return kLiteRtStatusOk;
}

LiteRtStatus CreateManagedBuffer(LiteRtEnvironment,
                                 LiteRtTensorBufferType buffer_type,
                                 const LiteRtRankedTensorType* type,
                                 size_t size, LiteRtTensorBuffer* out) {
  if (type == nullptr || out == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  if (buffer_type != kLiteRtTensorBufferTypeHostMemory) {
    g_last_unsupported.store(20, std::memory_order_relaxed);
    return kLiteRtStatusErrorUnsupported;
  }
  const size_t a = kLiteRtHostMemoryBufferAlignment;
  void* data = std::aligned_alloc(a, (size + a - 1) / a * a + a);
  if (data == nullptr) return kLiteRtStatusErrorMemoryAllocationFailure;
  LiteRtTensorBuffer b = NewHostTensorBuffer(*type, data, size);
  b->owns_memory = true;
  *out = b;
  return kLiteRtStatusOk;
}

LiteRtStatus GetBufferType(LiteRtTensorBuffer b, LiteRtTensorBufferType* out) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = b->buffer_type;
  return kLiteRtStatusOk;
}

LiteRtStatus GetCustomHandle(LiteRtTensorBuffer b, HwMemoryHandle* out) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  if (b->hw_memory == nullptr) return kLiteRtStatusErrorUnsupported;
  *out = b->hw_memory->memory_handle;
  return kLiteRtStatusOk;
}

LiteRtStatus GetBufferTensorType(LiteRtTensorBuffer b,
                                 LiteRtRankedTensorType* out) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = b->tensor_type;
  return kLiteRtStatusOk;
}

LiteRtStatus GetBufferSize(LiteRtTensorBuffer b, size_t* out) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = b->size;
  return kLiteRtStatusOk;
}

LiteRtStatus GetBufferOffset(LiteRtTensorBuffer b, size_t* out) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = 0;
  return kLiteRtStatusOk;
}

LiteRtStatus LockBuffer(LiteRtTensorBuffer b, void** out,
                        LiteRtTensorBufferLockMode) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  if (b->hw_memory != nullptr) return kLiteRtStatusErrorUnsupported;
  *out = b->host_memory;
  return kLiteRtStatusOk;
}

LiteRtStatus UnlockBuffer(LiteRtTensorBuffer b) {
  return b == nullptr ? kLiteRtStatusErrorInvalidArgument : kLiteRtStatusOk;
}

LiteRtStatus GetBufferHostMemory(LiteRtTensorBuffer b, void** out) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  if (b->hw_memory != nullptr) return kLiteRtStatusErrorUnsupported;
  *out = b->host_memory;
  return kLiteRtStatusOk;
}

LiteRtStatus HasBufferEvent(LiteRtTensorBuffer b, bool* out) {
  if (b == nullptr || out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = false;  // Graft runs dispatch ops synchronously
  return kLiteRtStatusOk;
}

LiteRtStatus GetHardwareAccelerators(LiteRtOptions options,
                                     LiteRtHwAcceleratorSet* out) {
  if (options == nullptr || out == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *out = 4;  // kLiteRtHwAcceleratorNpu: the dispatch path is LiteRT's NPU
  return kLiteRtStatusOk;
}

LiteRtRuntimeContext MakeRuntimeContext() {
  LiteRtRuntimeContext c = {};
  c.abi_header.struct_size = sizeof(LiteRtRuntimeContext);
  c.abi_header.major_version = kLiteRtRuntimeContextMajor;
  c.abi_header.minor_version = kLiteRtRuntimeContextMinor;
  c.create_tensor_buffer_requirements = CreateRequirements;
  GRAFT_LITERT_UNSUPPORTED(c, get_external_litert_buffer_context_tensor_buffer);
  GRAFT_LITERT_UNSUPPORTED(c,
                           external_litert_buffer_context_create_tensor_buffer);
  GRAFT_LITERT_UNSUPPORTED(
      c, external_litert_buffer_context_register_tensor_buffer);
  GRAFT_LITERT_UNSUPPORTED(
      c, external_litert_buffer_context_unregister_tensor_buffer);
  GRAFT_LITERT_UNSUPPORTED(
      c, external_litert_buffer_context_register_buffer_requirements);
  GRAFT_LITERT_UNSUPPORTED(c, external_litert_buffer_context_get_environment);
  GRAFT_LITERT_UNSUPPORTED(
      c, external_litert_buffer_context_is_async_execution_mode);
  GRAFT_LITERT_UNSUPPORTED(c, external_litert_buffer_context_destroy);
  c.get_opaque_options = GetOpaqueOptions;
  c.find_opaque_options_data = FindOpaqueOptionsData;
  c.destroy_options = DestroyOptions;
  c.get_environment_options = GetEnvironmentOptions;
  c.get_environment_options_value = GetEnvironmentOptionsValue;
  c.environment_has_gpu_environment = EnvironmentHasGpuEnvironment;
  GRAFT_LITERT_UNSUPPORTED(c, add_environment_options);
  GRAFT_LITERT_UNSUPPORTED(c, gpu_environment_create);
  GRAFT_LITERT_UNSUPPORTED(c, wrap_delegate);
  GRAFT_LITERT_UNSUPPORTED(c, unwrap_delegate);
  c.create_tensor_buffer_from_host_memory = CreateHostBuffer;
  c.create_managed_tensor_buffer = CreateManagedBuffer;
  c.destroy_tensor_buffer = DeleteTensorBuffer;
  c.get_tensor_buffer_type = GetBufferType;
  c.get_tensor_buffer_tensor_type = GetBufferTensorType;
  c.get_tensor_buffer_size = GetBufferSize;
  c.get_tensor_buffer_packed_size = GetBufferSize;
  c.get_tensor_buffer_offset = GetBufferOffset;
  c.lock_tensor_buffer = LockBuffer;
  c.unlock_tensor_buffer = UnlockBuffer;
  c.get_tensor_buffer_host_memory = GetBufferHostMemory;
  GRAFT_LITERT_UNSUPPORTED(c, get_tensor_buffer_opencl_memory);
  GRAFT_LITERT_UNSUPPORTED(c, get_tensor_buffer_gl_buffer);
  c.get_tensor_buffer_custom_tensor_buffer_handle = GetCustomHandle;
  GRAFT_LITERT_UNSUPPORTED(c, get_tensor_buffer_ahwb);
  GRAFT_LITERT_UNSUPPORTED(c, get_tensor_buffer_dma_buf_buffer);
  GRAFT_LITERT_UNSUPPORTED(c, get_tensor_buffer_fast_rpc_buffer);
  c.has_tensor_buffer_event = HasBufferEvent;
  GRAFT_LITERT_UNSUPPORTED(c, get_tensor_buffer_event);
  GRAFT_LITERT_UNSUPPORTED(c, set_tensor_buffer_event);
  GRAFT_LITERT_UNSUPPORTED(c, create_managed_event);
  GRAFT_LITERT_UNSUPPORTED(c, create_event_from_sync_fence_fd);
  GRAFT_LITERT_UNSUPPORTED(c, get_event_event_type);
  GRAFT_LITERT_UNSUPPORTED(c, get_event_sync_fence_fd);
  GRAFT_LITERT_UNSUPPORTED(c, create_event_from_opencl_event);
  GRAFT_LITERT_UNSUPPORTED(c, get_event_opencl_event);
  GRAFT_LITERT_UNSUPPORTED(c, set_custom_event);
  GRAFT_LITERT_UNSUPPORTED(c, get_custom_event);
  GRAFT_LITERT_UNSUPPORTED(c, wait_event);
  GRAFT_LITERT_UNSUPPORTED(c, external_litert_buffer_context_get_run_options);
  c.get_options_hardware_accelerators = GetHardwareAccelerators;
  GRAFT_LITERT_UNSUPPORTED(c, append_metric);
  return c;
}

const LiteRtRuntimeContext g_runtime_context = MakeRuntimeContext();

std::string ApiVersionString(const LiteRtApiVersion& v) {
  return absl::StrFormat("%d.%d.%d", v.major, v.minor, v.patch);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool LiteRtBufferRequirements::SupportsHostMemory() const {
  for (LiteRtTensorBufferType t : supported_types) {
    if (t == kLiteRtTensorBufferTypeHostMemory) return true;
  }
  return false;
}

LiteRtTensorBuffer NewHostTensorBuffer(const LiteRtRankedTensorType& type,
                                       void* data, size_t size) {
  auto* b = new LiteRtTensorBufferT();
  b->tensor_type = type;
  b->host_memory = data;
  b->size = size;
  return b;
}

void DeleteTensorBuffer(LiteRtTensorBuffer buffer) {
  if (buffer == nullptr) return;
  if (buffer->owns_memory) std::free(buffer->host_memory);
  if (buffer->deallocator != nullptr) buffer->deallocator(buffer->host_memory);
  delete buffer;
}

absl::StatusOr<LiteRtBufferRequirements> TakeRequirements(
    LiteRtTensorBufferRequirements requirements) {
  auto* r = static_cast<Requirements*>(requirements);
  if (r == nullptr || r->magic != kRequirementsMagic) {
    return absl::InvalidArgumentError(
        "the library returned buffer requirements it did not create through "
        "the runtime context");
  }
  LiteRtBufferRequirements out;
  out.size = r->buffer_size;
  out.alignment = r->alignment;
  out.supported_types = std::move(r->supported_types);
  out.strides = std::move(r->strides);
  r->magic = 0;
  delete r;
  return out;
}

const char* LiteRtStatusName(LiteRtStatus status) {
  switch (status) {
#define GRAFT_CASE(x) \
  case x:             \
    return #x;
    GRAFT_CASE(kLiteRtStatusOk)
    GRAFT_CASE(kLiteRtStatusErrorInvalidArgument)
    GRAFT_CASE(kLiteRtStatusErrorMemoryAllocationFailure)
    GRAFT_CASE(kLiteRtStatusErrorRuntimeFailure)
    GRAFT_CASE(kLiteRtStatusErrorMissingInputTensor)
    GRAFT_CASE(kLiteRtStatusErrorUnsupported)
    GRAFT_CASE(kLiteRtStatusErrorNotFound)
    GRAFT_CASE(kLiteRtStatusErrorTimeoutExpired)
    GRAFT_CASE(kLiteRtStatusErrorWrongVersion)
    GRAFT_CASE(kLiteRtStatusErrorUnknown)
    GRAFT_CASE(kLiteRtStatusErrorAlreadyExists)
    GRAFT_CASE(kLiteRtStatusCancelled)
    GRAFT_CASE(kLiteRtStatusErrorFileIO)
    GRAFT_CASE(kLiteRtStatusErrorInvalidFlatbuffer)
    GRAFT_CASE(kLiteRtStatusErrorDynamicLoading)
    GRAFT_CASE(kLiteRtStatusErrorSerialization)
    GRAFT_CASE(kLiteRtStatusErrorCompilation)
    GRAFT_CASE(kLiteRtStatusErrorIndexOOB)
    GRAFT_CASE(kLiteRtStatusErrorInvalidIrType)
    GRAFT_CASE(kLiteRtStatusErrorInvalidGraphInvariant)
    GRAFT_CASE(kLiteRtStatusErrorGraphModification)
    GRAFT_CASE(kLiteRtStatusErrorInvalidToolConfig)
    GRAFT_CASE(kLiteRtStatusLegalizeNoMatch)
    GRAFT_CASE(kLiteRtStatusErrorInvalidLegalization)
    GRAFT_CASE(kLiteRtStatusPatternNoMatch)
    GRAFT_CASE(kLiteRtStatusInvalidTransformation)
    GRAFT_CASE(kLiteRtStatusErrorUnsupportedRuntimeVersion)
    GRAFT_CASE(kLiteRtStatusErrorUnsupportedCompilerVersion)
    GRAFT_CASE(kLiteRtStatusErrorIncompatibleByteCodeVersion)
    GRAFT_CASE(kLiteRtStatusErrorUnsupportedOpShapeInferer)
    GRAFT_CASE(kLiteRtStatusErrorShapeInferenceFailed)
#undef GRAFT_CASE
  }
  return "an unknown LiteRtStatus";
}

const LiteRtRuntimeContext* LiteRtHostRuntimeContext() {
  return &g_runtime_context;
}

const LiteRtRuntimeContext* LiteRtDispatchLibrary::runtime_context() const {
  return &g_runtime_context;
}

LiteRtOptions LiteRtDispatchLibrary::options() const { return &g_options; }

LiteRtEnvironment LiteRtDispatchLibrary::environment() const {
  return &g_environment;
}

absl::Status LiteRtDispatchLibrary::Check(LiteRtStatus status,
                                          const char* function,
                                          absl::string_view what) const {
  if (status == kLiteRtStatusOk) return absl::OkStatus();
  std::string message =
      absl::StrFormat("%s: %s failed (%s, %d) %s", label_, function,
                      LiteRtStatusName(status), static_cast<int>(status), what);
  const int slot = g_last_unsupported.exchange(-1, std::memory_order_relaxed);
  if (slot >= 0 && slot < static_cast<int>(kNumSlots)) {
    absl::StrAppend(&message,
                    " (the library had asked for the runtime-context "
                    "function '",
                    kSlotNames[slot], "', which Graft does not provide)");
  }
  return absl::InternalError(message);
}

absl::StatusOr<std::shared_ptr<LiteRtDispatchLibrary>>
LiteRtDispatchLibrary::Load(const std::string& path) {
  static std::mutex loaded_mutex;
  static auto* loaded =
      new std::map<std::string, std::shared_ptr<LiteRtDispatchLibrary>>();
  std::lock_guard<std::mutex> lock(loaded_mutex);
  if (auto it = loaded->find(path); it != loaded->end()) return it->second;
  const std::string file = BaseName(path);
  auto fail = [&](absl::string_view why) {
    return absl::FailedPreconditionError(
        absl::StrCat("LiteRT dispatch library ", path, ": ", why));
  };
  std::shared_ptr<LiteRtDispatchLibrary> lib(new LiteRtDispatchLibrary());
  GRAFT_ASSIGN_OR_RETURN(lib->library_, DynamicLibrary::Open(path));
  auto get_api = reinterpret_cast<LiteRtDispatchGetApiFn>(
      lib->library_->Symbol(kLiteRtDispatchGetApiSymbol));
  if (get_api == nullptr) {
    return fail(
        "exports no LiteRtDispatchGetApi: not a LiteRT dispatch library");
  }
  LiteRtDispatchApi table = {};
  const LiteRtStatus got = get_api(&table);
  if (got != kLiteRtStatusOk) {
    return fail(absl::StrCat("LiteRtDispatchGetApi failed (",
                             LiteRtStatusName(got), ")"));
  }
  // The version first: nothing else in the table means anything until it
  // matches (LiteRT's runtime also takes exactly its own).
  if (table.version.major != kLiteRtApiVersion.major ||
      table.version.minor != kLiteRtApiVersion.minor ||
      table.version.patch != kLiteRtApiVersion.patch) {
    return fail(absl::StrCat(
        "LiteRT dispatch API version ", ApiVersionString(table.version),
        "; Graft hosts exactly ", ApiVersionString(kLiteRtApiVersion),
        " (ai-edge-litert 2.x): use the library built for that version"));
  }
  if (table.interface == nullptr) {
    return fail("LiteRtDispatchGetApi gave no dispatch interface");
  }
  lib->api_ = *table.interface;
  if (const LiteRtCustomTensorBufferHandlersDef* h =
          table.tensor_buffer_handlers_def) {
    if (h->create_func != nullptr && h->destroy_func != nullptr &&
        h->lock_func != nullptr && h->unlock_func != nullptr &&
        h->num_supported_buffer_types <= 16) {
      lib->handlers_ = *h;
      lib->has_handlers_ = true;
    }
  }
  lib->version_ = table.version;
  const LiteRtDispatchInterface& api = lib->api_;
  struct Required {
    const void* fn;
    const char* name;
  };
  const Required required[] = {
      {reinterpret_cast<const void*>(api.initialize), "initialize"},
      {reinterpret_cast<const void*>(api.get_vendor_id), "get_vendor_id"},
      {reinterpret_cast<const void*>(api.get_capabilities), "get_capabilities"},
      {reinterpret_cast<const void*>(api.device_context_create),
       "device_context_create"},
      {reinterpret_cast<const void*>(api.device_context_destroy),
       "device_context_destroy"},
      {reinterpret_cast<const void*>(api.get_input_requirements),
       "get_input_requirements"},
      {reinterpret_cast<const void*>(api.get_output_requirements),
       "get_output_requirements"},
      {reinterpret_cast<const void*>(api.register_tensor_buffer),
       "register_tensor_buffer"},
      {reinterpret_cast<const void*>(api.unregister_tensor_buffer),
       "unregister_tensor_buffer"},
      {reinterpret_cast<const void*>(api.invocation_context_create),
       "invocation_context_create"},
      {reinterpret_cast<const void*>(api.invocation_context_destroy),
       "invocation_context_destroy"},
      {reinterpret_cast<const void*>(api.attach_input), "attach_input"},
      {reinterpret_cast<const void*>(api.attach_output), "attach_output"},
      {reinterpret_cast<const void*>(api.invoke), "invoke"},
  };
  for (const Required& r : required) {
    if (r.fn == nullptr) {
      return fail(absl::StrCat("its dispatch interface has no ", r.name,
                               ", which Graft needs to run bytecode"));
    }
  }
  lib->label_ = absl::StrCat("LiteRT dispatch library ", file);
  if (api.check_runtime_compatibility != nullptr) {
    GRAFT_RETURN_IF_ERROR(
        lib->Check(api.check_runtime_compatibility(
                       kLiteRtApiVersion, &g_environment_options, &g_options),
                   "check_runtime_compatibility",
                   "for LiteRT API 0.1.0: the library refuses this host"));
  }
  GRAFT_RETURN_IF_ERROR(
      lib->Check(api.initialize(&g_runtime_context, &g_environment, &g_options),
                 "initialize", ""));
  const char* vendor = nullptr;
  GRAFT_RETURN_IF_ERROR(
      lib->Check(api.get_vendor_id(&vendor), "get_vendor_id", ""));
  if (vendor == nullptr || vendor[0] == '\0') {
    return fail("get_vendor_id gave no vendor id");
  }
  lib->vendor_id_ = VendorString(vendor);
  if (api.get_build_id != nullptr) {
    const char* build = nullptr;
    if (api.get_build_id(&build) == kLiteRtStatusOk && build != nullptr) {
      lib->build_id_ = VendorString(build);
    }
  }
  GRAFT_RETURN_IF_ERROR(lib->Check(api.get_capabilities(&lib->capabilities_),
                                   "get_capabilities", ""));
  if ((lib->capabilities_ & kLiteRtDispatchCapabilitiesBasic) == 0) {
    return fail(absl::StrFormat(
        "capabilities %d lack Basic (synchronous invoke), the only way "
        "Graft runs LiteRT dispatch libraries",
        lib->capabilities_));
  }
  lib->label_ =
      absl::StrCat("LiteRT dispatch ", lib->vendor_id_, " (", file, ")");
  (*loaded)[path] = lib;
  return lib;
}

}  // namespace graft
