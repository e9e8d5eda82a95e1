// LiteRT's vendor dispatch C ABI, as the host side sees it: Graft's own
// declarations, written from LiteRT's public headers
// (litert/vendors/c/litert_dispatch.h and litert_dispatch_api.h,
// litert/c/internal/litert_runtime_context.h and litert_abi_header.h,
// litert/c/litert_common.h, litert_model_types.h, litert_layout.h,
// litert_tensor_buffer_types.h) and checked against the library that
// ai-edge-litert 2.3.0 ships (libLiteRtDispatch_IntelOpenvino.so, read with
// objdump): nothing here is LiteRT code. Layouts are frozen by
// litert_dispatch_abi_test.cc.
//
// The ABI in one paragraph. A dispatch library exports one function,
// LiteRtDispatchGetApi, which fills a LiteRtDispatchApi: 8 bytes of ABI
// header (2.3.0's libraries leave it zero), the API version the library
// was built for (0.1.0; LiteRT's runtime accepts exactly its own), and
// pointers to an interface of 26 functions (initialize ... invoke, metrics,
// compatibility check, per-invocation options), an optional async
// interface, an optional graph interface and an optional set of custom
// tensor-buffer handlers. The host hands the library a LiteRtRuntimeContext
// at initialize, device-context and invocation-context creation: a table
// of host functions (tensor buffers, buffer requirements, options, events)
// through which the library reaches the objects the host owns, so it never
// links LiteRT's runtime. Every handle type below is owned by one side: the
// library owns device/invocation contexts and metrics; the host owns
// tensor buffers, requirements, environment and options, whose layouts the
// library never sees.
//
// Every name is LiteRT's, inside namespace graft::litert_abi; the plain
// types both vendor-ABI sides share (status codes, element types, the
// layout, the API version) are core/litert_abi.h's, brought in by using.
#ifndef GRAFT_DISPATCH_LITERT_DISPATCH_ABI_H_
#define GRAFT_DISPATCH_LITERT_DISPATCH_ABI_H_

#include <cstddef>
#include <cstdint>

#include "core/litert_abi.h"

namespace graft {
namespace litert_abi {

extern "C" {

// --- litert_common.h ------------------------------------------------------

// Shared with the compiler side (core/litert_abi.h).
using ::LiteRtApiVersion;
using ::LiteRtHwAcceleratorSet;
using ::LiteRtStatus;

// The API version of the dispatch ABI declared here (LITERT_API_VERSION_*).
inline constexpr LiteRtApiVersion kLiteRtApiVersion = {
    LITERT_HOST_API_VERSION_MAJOR, LITERT_HOST_API_VERSION_MINOR,
    LITERT_HOST_API_VERSION_PATCH};

enum LiteRtTensorBufferLockMode : int {
  kLiteRtTensorBufferLockModeRead = 0,
  kLiteRtTensorBufferLockModeWrite = 1,
  kLiteRtTensorBufferLockModeReadWrite = 2,
};

// Opaque handles. Host-owned: the host defines these structs (in
// litert_dispatch_library.cc); the library only passes pointers back.
typedef struct LiteRtEnvironmentT* LiteRtEnvironment;
typedef struct LiteRtEnvironmentOptionsT* LiteRtEnvironmentOptions;
typedef struct LiteRtOptionsT* LiteRtOptions;
typedef struct LiteRtOpaqueOptionsT* LiteRtOpaqueOptions;
typedef struct LiteRtTensorBufferT* LiteRtTensorBuffer;
typedef struct LiteRtTensorBufferRequirementsT* LiteRtTensorBufferRequirements;
// Host-owned objects this host never creates (events, delegates, external
// buffer contexts, metrics lists): the slots that take them answer
// kLiteRtStatusErrorUnsupported.
typedef struct LiteRtEventT* LiteRtEvent;
typedef struct LiteRtDelegateWrapperT* LiteRtDelegateWrapper;
typedef struct LiteRtExternalLiteRtBufferContextT*
    LiteRtExternalLiteRtBufferContext;
typedef struct LiteRtMetricsT* LiteRtMetrics;
// Library-owned.
typedef struct LiteRtDispatchDeviceContextT* LiteRtDispatchDeviceContext;
typedef struct LiteRtDispatchInvocationContextT*
    LiteRtDispatchInvocationContext;
typedef struct LiteRtDispatchMetricsT* LiteRtDispatchMetrics;
typedef struct LiteRtDispatchGraphT* LiteRtDispatchGraph;
// Types only passed through by pointer in slots this host leaves
// unsupported; never dereferenced here.
struct LiteRtAny;
struct LiteRtEnvOption;
struct LiteRtMetric;
struct LiteRtSchedulingInfo;
struct TfLiteTensor;
struct TfLiteOpaqueDelegate;
struct AHardwareBuffer;
typedef int LiteRtEnvOptionTag;
typedef int LiteRtEventType;
typedef void* LiteRtClMem;
typedef void* LiteRtClEvent;
typedef void* LiteRtCustomEvent;
typedef void* HwMemoryHandle;
typedef uint32_t LiteRtGLenum;
typedef uint32_t LiteRtGLuint;

// --- litert_model_types.h, litert_layout.h --------------------------------

using ::LiteRtElementType;
using ::LiteRtLayout;
using ::LiteRtRankedTensorType;
inline constexpr int kLiteRtTensorMaxRank = LITERT_TENSOR_MAX_RANK;

// --- litert_tensor_buffer_types.h -----------------------------------------

enum LiteRtTensorBufferType : int {
  kLiteRtTensorBufferTypeUnknown = 0,
  kLiteRtTensorBufferTypeHostMemory = 1,
  kLiteRtTensorBufferTypeAhwb = 2,
  kLiteRtTensorBufferTypeIon = 3,
  kLiteRtTensorBufferTypeDmaBuf = 4,
  kLiteRtTensorBufferTypeFastRpc = 5,
  kLiteRtTensorBufferTypeGlBuffer = 6,
  kLiteRtTensorBufferTypeGlTexture = 7,
  kLiteRtTensorBufferTypeOpenClBuffer = 10,
  kLiteRtTensorBufferTypeOpenClBufferFp16 = 11,
  kLiteRtTensorBufferTypeOpenClTexture = 12,
  kLiteRtTensorBufferTypeOpenClTextureFp16 = 13,
  kLiteRtTensorBufferTypeOpenClBufferPacked = 14,
};

// LiteRT's alignment of host-memory tensor buffers
// (LITERT_HOST_MEMORY_BUFFER_ALIGNMENT): the alignment of requirements the
// library creates through create_tensor_buffer_requirements, which takes
// none.
inline constexpr size_t kLiteRtHostMemoryBufferAlignment = 64;

typedef void (*LiteRtHostMemoryDeallocator)(void* addr);

// --- litert_abi_header.h --------------------------------------------------

// First member of every versioned table.
struct LiteRtAbiHeader {
  uint16_t struct_size;  // of the whole table, this header included
  uint16_t major_version;
  uint16_t minor_version;
  uint16_t reserved;
};

// --- litert_dispatch.h ----------------------------------------------------

typedef uint64_t LiteRtTensorBufferHandle;

enum LiteRtDispatchCapabilities : int {
  kLiteRtDispatchCapabilitiesNone = 0,
  kLiteRtDispatchCapabilitiesBasic = 1,
  kLiteRtDispatchCapabilitiesAsync = 2,
  kLiteRtDispatchCapabilitiesGraph = 4,
};

enum LiteRtDispatchExecutableType : int {
  kLiteRtDispatchExecutableTypeUnknown = 0,
  kLiteRtDispatchExecutableTypeDspLibrary = 1,
  kLiteRtDispatchExecutableTypeMlModel = 2,
};

// A byte range: [base_addr + offset, + size), and the file descriptor it
// was mapped from (-1: none).
struct LiteRtMemBuffer {
  int fd;
  const void* base_addr;
  size_t offset;
  size_t size;
};

// --- litert_runtime_context.h ---------------------------------------------

// The host's table, in slot order. 2.3.0's runtime passes version 1.2,
// 416 bytes: the public header's 1.1 (408 bytes, 50 functions) plus
// append_metric. Slots this host does not serve answer
// kLiteRtStatusErrorUnsupported (litert_dispatch_library.cc), never null.
struct LiteRtRuntimeContext {
  LiteRtAbiHeader abi_header;
  // 0
  LiteRtStatus (*create_tensor_buffer_requirements)(
      int num_supported_tensor_buffer_types,
      const LiteRtTensorBufferType* supported_tensor_buffer_types,
      size_t buffer_size, int num_strides, const uint32_t* strides,
      LiteRtTensorBufferRequirements* requirements);
  // 1-8: external buffer contexts (LiteRT's delegate path).
  LiteRtStatus (*get_external_litert_buffer_context_tensor_buffer)(
      LiteRtExternalLiteRtBufferContext context, const TfLiteTensor* tensor,
      LiteRtTensorBuffer* tensor_buffer);
  LiteRtStatus (*external_litert_buffer_context_create_tensor_buffer)(
      LiteRtExternalLiteRtBufferContext context, const TfLiteTensor* tensor,
      LiteRtTensorBuffer* buffer);
  LiteRtStatus (*external_litert_buffer_context_register_tensor_buffer)(
      LiteRtExternalLiteRtBufferContext context, const TfLiteTensor* tensor,
      LiteRtTensorBuffer buffer);
  LiteRtStatus (*external_litert_buffer_context_unregister_tensor_buffer)(
      LiteRtExternalLiteRtBufferContext context, const TfLiteTensor* tensor);
  LiteRtStatus (*external_litert_buffer_context_register_buffer_requirements)(
      LiteRtExternalLiteRtBufferContext context, const TfLiteTensor* tensor,
      LiteRtTensorBufferRequirements buffer_requirements);
  LiteRtStatus (*external_litert_buffer_context_get_environment)(
      LiteRtExternalLiteRtBufferContext context, LiteRtEnvironment* env);
  LiteRtStatus (*external_litert_buffer_context_is_async_execution_mode)(
      LiteRtExternalLiteRtBufferContext context, bool* is_async_execution_mode);
  void (*external_litert_buffer_context_destroy)(
      LiteRtExternalLiteRtBufferContext context);
  // 9-16: options and environment.
  LiteRtStatus (*get_opaque_options)(LiteRtOptions options,
                                     LiteRtOpaqueOptions* opaque_options);
  LiteRtStatus (*find_opaque_options_data)(LiteRtOpaqueOptions options,
                                           const char* payload_identifier,
                                           void** payload_data);
  void (*destroy_options)(LiteRtOptions options);
  LiteRtStatus (*get_environment_options)(LiteRtEnvironment env,
                                          LiteRtEnvironmentOptions* options);
  LiteRtStatus (*get_environment_options_value)(
      LiteRtEnvironmentOptions options, LiteRtEnvOptionTag tag,
      LiteRtAny* option_value);
  void (*environment_has_gpu_environment)(LiteRtEnvironment environment,
                                          bool* has_gpu_environment);
  LiteRtStatus (*add_environment_options)(LiteRtEnvironment environment,
                                          int num_options,
                                          const LiteRtEnvOption* options,
                                          bool overwrite);
  LiteRtStatus (*gpu_environment_create)(LiteRtEnvironment environment,
                                         int num_options,
                                         const LiteRtEnvOption* options);
  // 17-18
  LiteRtStatus (*wrap_delegate)(TfLiteOpaqueDelegate* delegate,
                                void (*deleter)(TfLiteOpaqueDelegate*),
                                LiteRtDelegateWrapper* wrapper);
  LiteRtStatus (*unwrap_delegate)(LiteRtDelegateWrapper wrapper,
                                  TfLiteOpaqueDelegate** delegate);
  // 19-40: tensor buffers.
  LiteRtStatus (*create_tensor_buffer_from_host_memory)(
      const LiteRtRankedTensorType* tensor_type, void* host_buffer_addr,
      size_t host_buffer_size, LiteRtHostMemoryDeallocator deallocator,
      LiteRtTensorBuffer* buffer);
  LiteRtStatus (*create_managed_tensor_buffer)(
      LiteRtEnvironment env, LiteRtTensorBufferType buffer_type,
      const LiteRtRankedTensorType* tensor_type, size_t buffer_size,
      LiteRtTensorBuffer* buffer);
  void (*destroy_tensor_buffer)(LiteRtTensorBuffer buffer);
  LiteRtStatus (*get_tensor_buffer_type)(LiteRtTensorBuffer tensor_buffer,
                                         LiteRtTensorBufferType* buffer_type);
  LiteRtStatus (*get_tensor_buffer_tensor_type)(
      LiteRtTensorBuffer tensor_buffer, LiteRtRankedTensorType* tensor_type);
  LiteRtStatus (*get_tensor_buffer_size)(LiteRtTensorBuffer tensor_buffer,
                                         size_t* buffer_size);
  LiteRtStatus (*get_tensor_buffer_packed_size)(
      LiteRtTensorBuffer tensor_buffer, size_t* size);
  LiteRtStatus (*get_tensor_buffer_offset)(LiteRtTensorBuffer tensor_buffer,
                                           size_t* offset);
  LiteRtStatus (*lock_tensor_buffer)(LiteRtTensorBuffer tensor_buffer,
                                     void** host_mem_addr,
                                     LiteRtTensorBufferLockMode mode);
  LiteRtStatus (*unlock_tensor_buffer)(LiteRtTensorBuffer tensor_buffer);
  LiteRtStatus (*get_tensor_buffer_host_memory)(
      LiteRtTensorBuffer tensor_buffer, void** host_memory_addr);
  LiteRtStatus (*get_tensor_buffer_opencl_memory)(
      LiteRtTensorBuffer tensor_buffer, LiteRtClMem* cl_mem_addr);
  LiteRtStatus (*get_tensor_buffer_gl_buffer)(LiteRtTensorBuffer tensor_buffer,
                                              LiteRtGLenum* target,
                                              LiteRtGLuint* id,
                                              size_t* size_bytes,
                                              size_t* offset);
  LiteRtStatus (*get_tensor_buffer_custom_tensor_buffer_handle)(
      LiteRtTensorBuffer tensor_buffer, HwMemoryHandle* hw_memory_handle);
  LiteRtStatus (*get_tensor_buffer_ahwb)(LiteRtTensorBuffer tensor_buffer,
                                         AHardwareBuffer** ahwb);
  LiteRtStatus (*get_tensor_buffer_dma_buf_buffer)(
      LiteRtTensorBuffer tensor_buffer, void** dmabuf_buffer_addr,
      int* dmabuf_buffer_fd);
  LiteRtStatus (*get_tensor_buffer_fast_rpc_buffer)(
      LiteRtTensorBuffer tensor_buffer, void** host_buffer_addr, int* fd);
  LiteRtStatus (*has_tensor_buffer_event)(LiteRtTensorBuffer tensor_buffer,
                                          bool* has_event);
  LiteRtStatus (*get_tensor_buffer_event)(LiteRtTensorBuffer tensor_buffer,
                                          LiteRtEvent* event);
  LiteRtStatus (*set_tensor_buffer_event)(LiteRtTensorBuffer tensor_buffer,
                                          LiteRtEvent event);
  // 41-49: events, run options.
  LiteRtStatus (*create_managed_event)(LiteRtEnvironment env,
                                       LiteRtEventType event_type,
                                       LiteRtEvent* event);
  LiteRtStatus (*create_event_from_sync_fence_fd)(LiteRtEnvironment env,
                                                  int sync_fence_fd,
                                                  bool owns_fd,
                                                  LiteRtEvent* event);
  LiteRtStatus (*get_event_event_type)(LiteRtEvent event,
                                       LiteRtEventType* type);
  LiteRtStatus (*get_event_sync_fence_fd)(LiteRtEvent event,
                                          int* sync_fence_fd);
  LiteRtStatus (*create_event_from_opencl_event)(LiteRtEnvironment env,
                                                 LiteRtClEvent cl_event,
                                                 LiteRtEvent* event);
  LiteRtStatus (*get_event_opencl_event)(LiteRtEvent event,
                                         LiteRtClEvent* cl_event);
  LiteRtStatus (*set_custom_event)(LiteRtEvent event,
                                   LiteRtCustomEvent custom_event);
  LiteRtStatus (*get_custom_event)(LiteRtEvent event,
                                   LiteRtCustomEvent* custom_event);
  LiteRtStatus (*wait_event)(LiteRtEvent event, int64_t timeout_in_ms);
  LiteRtStatus (*external_litert_buffer_context_get_run_options)(
      LiteRtExternalLiteRtBufferContext context, LiteRtOptions* run_options);
  // 50: version 1.1.
  LiteRtStatus (*get_options_hardware_accelerators)(
      LiteRtOptions options, LiteRtHwAcceleratorSet* hardware_accelerators);
  // 51: version 1.2 (2.3.0).
  LiteRtStatus (*append_metric)(LiteRtMetrics metrics,
                                const LiteRtMetric* metric);
};

// What this host passes: version 1.2, sizeof(LiteRtRuntimeContext).
inline constexpr uint16_t kLiteRtRuntimeContextMajor = 1;
inline constexpr uint16_t kLiteRtRuntimeContextMinor = 2;

// --- litert_dispatch_api.h ------------------------------------------------

struct LiteRtDispatchInterface {
  LiteRtStatus (*initialize)(const LiteRtRuntimeContext* runtime_context,
                             LiteRtEnvironment environment,
                             LiteRtOptions options);
  LiteRtStatus (*get_vendor_id)(const char** vendor_id);
  LiteRtStatus (*get_build_id)(const char** build_id);
  LiteRtStatus (*get_capabilities)(int* capabilities);
  LiteRtStatus (*device_context_create)(
      const LiteRtRuntimeContext* runtime_context, LiteRtOptions options,
      LiteRtDispatchDeviceContext* device_context);
  LiteRtStatus (*device_context_destroy)(
      LiteRtDispatchDeviceContext device_context);
  LiteRtStatus (*get_input_requirements)(
      LiteRtDispatchInvocationContext invocation_context, int input_index,
      const LiteRtRankedTensorType* tensor_type,
      LiteRtTensorBufferRequirements* tensor_buffer_requirements);
  LiteRtStatus (*get_output_requirements)(
      LiteRtDispatchInvocationContext invocation_context, int output_index,
      const LiteRtRankedTensorType* tensor_type,
      LiteRtTensorBufferRequirements* tensor_buffer_requirements);
  LiteRtStatus (*register_tensor_buffer)(
      LiteRtDispatchDeviceContext device_context,
      LiteRtTensorBuffer tensor_buffer,
      LiteRtTensorBufferHandle* tensor_buffer_handle);
  LiteRtStatus (*unregister_tensor_buffer)(
      LiteRtDispatchDeviceContext device_context,
      LiteRtTensorBufferHandle handle);
  LiteRtStatus (*invocation_context_create)(
      const LiteRtRuntimeContext* runtime_context,
      LiteRtDispatchDeviceContext device_context,
      LiteRtDispatchExecutableType exec_type,
      const LiteRtMemBuffer* exec_bytecode_buffer, const char* function_name,
      int num_inputs, int num_outputs,
      LiteRtDispatchInvocationContext* invocation_context);
  LiteRtStatus (*invocation_context_destroy)(
      LiteRtDispatchInvocationContext invocation_context);
  LiteRtStatus (*invocation_context_set_scheduling_info)(
      LiteRtDispatchInvocationContext invocation_context,
      const LiteRtSchedulingInfo* scheduling_info);
  LiteRtStatus (*attach_input)(
      LiteRtDispatchInvocationContext invocation_context, int graph_input_index,
      LiteRtTensorBufferHandle tensor_buffer_handle);
  LiteRtStatus (*attach_output)(
      LiteRtDispatchInvocationContext invocation_context,
      int graph_output_index, LiteRtTensorBufferHandle tensor_buffer_handle);
  LiteRtStatus (*detach_input)(
      LiteRtDispatchInvocationContext invocation_context, int graph_input_index,
      LiteRtTensorBufferHandle tensor_buffer_handle);
  LiteRtStatus (*detach_output)(
      LiteRtDispatchInvocationContext invocation_context,
      int graph_output_index, LiteRtTensorBufferHandle tensor_buffer_handle);
  LiteRtStatus (*invoke)(LiteRtDispatchInvocationContext invocation_context);
  LiteRtStatus (*start_metrics_collection)(
      LiteRtDispatchInvocationContext invocation_context, int detail_level);
  LiteRtStatus (*stop_metrics_collection)(
      LiteRtDispatchInvocationContext invocation_context,
      LiteRtDispatchMetrics* metrics);
  LiteRtStatus (*get_num_metrics)(LiteRtDispatchMetrics metrics,
                                  int* num_metrics);
  LiteRtStatus (*get_metric)(LiteRtDispatchMetrics metrics, int metric_index,
                             LiteRtMetric* metric);
  LiteRtStatus (*destroy_metrics)(LiteRtDispatchMetrics metrics);
  LiteRtStatus (*check_runtime_compatibility)(LiteRtApiVersion api_version,
                                              LiteRtEnvironmentOptions env,
                                              LiteRtOptions options);
  LiteRtStatus (*invocation_context_set_options)(
      LiteRtDispatchInvocationContext invocation_context,
      LiteRtOptions options);
  // Slot 25: present in 2.3.0's table (26 slots; Intel leaves it null),
  // absent from the public header read; never called here.
  void (*reserved_25)(void);
};

// The async and graph interfaces are only pointed to: this host runs
// libraries synchronously through LiteRtDispatchInterface and never reads
// them (Intel's library provides neither).
struct LiteRtDispatchAsyncInterface;
struct LiteRtDispatchGraphInterface;

// Custom tensor buffers (litert_custom_tensor_buffer.h): memory of a
// library's own buffer type, which the host allocates and maps through the
// library's handlers, then registers like any tensor buffer. Intel's
// library asks for its type 100 (an OpenVINO tensor) and never for host
// memory, so this host uses them.
struct HwMemoryInfo {
  HwMemoryHandle memory_handle;
  void* raw_handle;
};
typedef HwMemoryInfo* HwMemoryInfoPtr;
typedef void* LiteRtGpuDeviceId;
typedef void* LiteRtGpuQueueId;

// 136 bytes in 2.3.0: the public header read has no abi_header (128).
// Intel's: abi_header zero, create/destroy/lock/unlock set, clear and import
// null, device and queue tags 255, one supported type (100). The handlers'
// signatures are 2.3.0's, read from Intel's code: create takes seven
// arguments (the result through the stack), the others the memory info
// first and no environment.
struct LiteRtCustomTensorBufferHandlersDef {
  LiteRtAbiHeader abi_header;
  LiteRtStatus (*create_func)(LiteRtGpuDeviceId device_id,
                              LiteRtGpuQueueId queue_id,
                              const LiteRtRankedTensorType* tensor_type,
                              LiteRtTensorBufferType buffer_type, size_t bytes,
                              size_t packed_bytes,
                              HwMemoryInfoPtr* hw_memory_info);
  LiteRtStatus (*destroy_func)(HwMemoryInfoPtr hw_memory_info);
  LiteRtStatus (*lock_func)(HwMemoryInfoPtr hw_memory_info,
                            LiteRtTensorBufferLockMode mode,
                            void** host_memory_ptr);
  LiteRtStatus (*unlock_func)(HwMemoryInfoPtr hw_memory_info);
  void (*clear_func)(void);   // never called here
  void (*import_func)(void);  // never called here
  LiteRtEnvOptionTag device_tag;
  LiteRtEnvOptionTag queue_tag;
  size_t num_supported_buffer_types;
  LiteRtTensorBufferType supported_buffer_types[16];
};

// What LiteRtDispatchGetApi fills: 56 bytes in 2.3.0 (the public header
// read has no abi_header and 48 bytes).
struct LiteRtDispatchApi {
  LiteRtAbiHeader abi_header;
  LiteRtApiVersion version;
  LiteRtDispatchInterface* interface;
  LiteRtDispatchAsyncInterface* async_interface;
  LiteRtDispatchGraphInterface* graph_interface;
  LiteRtCustomTensorBufferHandlersDef* tensor_buffer_handlers_def;
};

typedef LiteRtStatus (*LiteRtDispatchGetApiFn)(LiteRtDispatchApi* api);
inline constexpr char kLiteRtDispatchGetApiSymbol[] = "LiteRtDispatchGetApi";

}  // extern "C"

}  // namespace litert_abi
}  // namespace graft

#endif  // GRAFT_DISPATCH_LITERT_DISPATCH_ABI_H_
