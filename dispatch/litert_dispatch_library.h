// LiteRtDispatchLibrary: one loaded LiteRT dispatch library
// (libLiteRtDispatch_<Vendor>.so, the ABI of litert_dispatch_abi.h) and the
// host side LiteRT's runtime would otherwise provide: the runtime-context
// table, and the host-owned objects the library reaches through it (tensor
// buffers over host memory, buffer requirements, empty environment and
// options). This is the only code that calls a LiteRT dispatch library's
// functions or converts its statuses; litert_backend.h builds the runtime's
// DispatchBackend on it.
//
// Load checks, in order: the file loads; it exports LiteRtDispatchGetApi;
// the API version it fills is exactly 0.1.0 (before any other call); the
// interface is present with every function this host calls; the library
// accepts this host (check_runtime_compatibility, when present); initialize
// succeeds; its vendor id is a non-empty string; it has the Basic
// capability. Errors name the file and what to do.
//
// Runtime-context slots this host does not provide (events, delegates,
// external buffer contexts, GPU environments, metrics) are never null: each
// answers kLiteRtStatusErrorUnsupported and is remembered, so a failing
// vendor call's error says which host function the library missed.
//
// A library is loaded once per process and file (Load returns the instance
// already loaded) and never unloaded: LiteRT's libraries keep process-wide
// state (Intel's holds an OpenVINO core) that initialize sets up once.
//
// Thread-safety: Load may be called from any thread. Calls into one
// library's functions are serialized by the caller (LiteRtBackend holds
// mutex() around them).
#ifndef GRAFT_DISPATCH_LITERT_DISPATCH_LIBRARY_H_
#define GRAFT_DISPATCH_LITERT_DISPATCH_LIBRARY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/vendor_library.h"
#include "dispatch/litert_dispatch_abi.h"

namespace graft {

// The host-owned objects behind LiteRT's opaque handles. Created and
// destroyed only by this host (directly or through the runtime-context
// functions the library calls).
namespace litert_abi {

struct LiteRtTensorBufferRequirementsT {
  std::vector<LiteRtTensorBufferType> supported_types;
  size_t buffer_size = 0;
  std::vector<uint32_t> strides;  // empty: dense
  size_t alignment = kLiteRtHostMemoryBufferAlignment;
};

// A host-memory tensor buffer over memory someone else owns (or, for one
// the library creates as "managed", memory this buffer owns).
struct LiteRtTensorBufferT {
  LiteRtTensorBufferType buffer_type = kLiteRtTensorBufferTypeHostMemory;
  // A custom buffer's memory, made by the library's handlers (null for host
  // memory).
  HwMemoryInfoPtr hw_memory = nullptr;
  LiteRtRankedTensorType tensor_type = {};
  void* host_memory = nullptr;
  size_t size = 0;
  LiteRtHostMemoryDeallocator deallocator = nullptr;
  bool owns_memory = false;
};

}  // namespace litert_abi

// A copy of what a library's buffer requirements say.
struct LiteRtBufferRequirements {
  size_t size = 0;
  size_t alignment = litert_abi::kLiteRtHostMemoryBufferAlignment;
  std::vector<litert_abi::LiteRtTensorBufferType> supported_types;
  std::vector<uint32_t> strides;
  bool SupportsHostMemory() const;
};

class LiteRtDispatchLibrary {
 public:
  // Loads the library at `path` (see the checks above), or returns the one
  // this process already loaded from that file.
  static absl::StatusOr<std::shared_ptr<LiteRtDispatchLibrary>> Load(
      const std::string& path);

  LiteRtDispatchLibrary(const LiteRtDispatchLibrary&) = delete;
  LiteRtDispatchLibrary& operator=(const LiteRtDispatchLibrary&) = delete;

  const std::string& path() const { return library_->path(); }
  // The library's own vendor id ("Intel_Openvino"), build id, capability
  // bits (kLiteRtDispatchCapabilities*) and API version.
  const std::string& vendor_id() const { return vendor_id_; }
  const std::string& build_id() const { return build_id_; }
  int capabilities() const { return capabilities_; }
  litert_abi::LiteRtApiVersion api_version() const { return version_; }
  // "LiteRT dispatch Intel_Openvino (libLiteRtDispatch_IntelOpenvino.so)".
  const std::string& label() const { return label_; }

  // The library's functions (every one this host calls is non-null) and the
  // host's table and handles to pass them.
  const litert_abi::LiteRtDispatchInterface& api() const { return api_; }
  const litert_abi::LiteRtRuntimeContext* runtime_context() const;
  litert_abi::LiteRtOptions options() const;
  litert_abi::LiteRtEnvironment environment() const;
  // The library's custom tensor-buffer handlers (create, destroy, lock and
  // unlock all set), or null.
  const litert_abi::LiteRtCustomTensorBufferHandlersDef* handlers() const {
    return has_handlers_ ? &handlers_ : nullptr;
  }

  // Serializes calls into the library.
  std::mutex& mutex() const { return mutex_; }

  // Converts the status of the library's `function` into an absl::Status
  // naming the library and `what` it was doing; adds the runtime-context
  // function the library last asked for and this host does not provide,
  // when there is one.
  absl::Status Check(litert_abi::LiteRtStatus status, const char* function,
                     absl::string_view what) const;

 private:
  LiteRtDispatchLibrary() = default;
  std::unique_ptr<DynamicLibrary> library_;
  litert_abi::LiteRtDispatchInterface api_ = {};
  litert_abi::LiteRtApiVersion version_ = {};
  std::string vendor_id_, build_id_, label_;
  int capabilities_ = 0;
  litert_abi::LiteRtCustomTensorBufferHandlersDef handlers_ = {};
  bool has_handlers_ = false;
  mutable std::mutex mutex_;
};

// The runtime-context table this host hands every LiteRT dispatch library
// (a process-wide constant).
const litert_abi::LiteRtRuntimeContext* LiteRtHostRuntimeContext();

// Host-memory tensor buffers and requirements, for the backend.
litert_abi::LiteRtTensorBuffer NewHostTensorBuffer(
    const litert_abi::LiteRtRankedTensorType& type, void* data, size_t size);
void DeleteTensorBuffer(litert_abi::LiteRtTensorBuffer buffer);
// Reads and destroys `requirements` (which the library created through the
// runtime context); InvalidArgument for a null or foreign handle.
absl::StatusOr<LiteRtBufferRequirements> TakeRequirements(
    litert_abi::LiteRtTensorBufferRequirements requirements);

// The name of a LiteRtStatus code ("kLiteRtStatusErrorUnsupported").
const char* LiteRtStatusName(litert_abi::LiteRtStatus status);

}  // namespace graft

#endif  // GRAFT_DISPATCH_LITERT_DISPATCH_LIBRARY_H_
