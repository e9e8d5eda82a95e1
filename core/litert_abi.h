// LiteRT's vendor C ABI as Graft hosts it: the plain types shared by its
// compiler-plugin side (plugins/litert_compiler_abi.h) and its dispatch side
// (dispatch/), declared here from LiteRT's public headers
// (litert/c/litert_common.h, litert_model_types.h, litert_layout.h,
// litert/c/internal/litert_abi_header.h) at the layouts the ai-edge-litert
// 2.3.0 libraries use. Declarations only: Graft links no LiteRT code.
//
// Handles (pointers to host-defined structs) are declared by each side,
// since each side's host defines the structs behind the handles it hands
// out: plugins/litert_compiler_abi.h, dispatch/litert_dispatch_abi.h.
//
// Layouts are frozen by static_asserts in plugins/litert_compiler_abi_test.cc
// and dispatch/litert_dispatch_abi_test.cc.
#ifndef GRAFT_CORE_LITERT_ABI_H_
#define GRAFT_CORE_LITERT_ABI_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// The API version every 2.3.0 plugin and dispatch library reports.
#define LITERT_HOST_API_VERSION_MAJOR 0
#define LITERT_HOST_API_VERSION_MINOR 1
#define LITERT_HOST_API_VERSION_PATCH 0

typedef struct LiteRtApiVersion {
  int major;
  int minor;
  int patch;
} LiteRtApiVersion;

// The first member of LiteRT's versioned tables (8 bytes).
typedef struct LiteRtAbiHeader {
  uint16_t struct_size;
  uint16_t major_version;
  uint16_t minor_version;
  uint16_t reserved;
} LiteRtAbiHeader;

typedef enum {
  kLiteRtStatusOk = 0,
  kLiteRtStatusErrorInvalidArgument = 1,
  kLiteRtStatusErrorMemoryAllocationFailure = 2,
  kLiteRtStatusErrorRuntimeFailure = 3,
  kLiteRtStatusErrorMissingInputTensor = 4,
  kLiteRtStatusErrorUnsupported = 5,
  kLiteRtStatusErrorNotFound = 6,
  kLiteRtStatusErrorTimeoutExpired = 7,
  kLiteRtStatusErrorWrongVersion = 8,
  kLiteRtStatusErrorUnknown = 9,
  kLiteRtStatusErrorAlreadyExists = 10,
  kLiteRtStatusCancelled = 100,
  kLiteRtStatusErrorFileIO = 500,
  kLiteRtStatusErrorInvalidFlatbuffer = 501,
  kLiteRtStatusErrorDynamicLoading = 502,
  kLiteRtStatusErrorSerialization = 503,
  kLiteRtStatusErrorCompilation = 504,
  kLiteRtStatusErrorIndexOOB = 1000,
  kLiteRtStatusErrorInvalidIrType = 1001,
  kLiteRtStatusErrorInvalidGraphInvariant = 1002,
  kLiteRtStatusErrorGraphModification = 1003,
  kLiteRtStatusErrorInvalidToolConfig = 1500,
  kLiteRtStatusLegalizeNoMatch = 2000,
  kLiteRtStatusErrorInvalidLegalization = 2001,
  kLiteRtStatusPatternNoMatch = 3000,
  kLiteRtStatusInvalidTransformation = 3001,
  kLiteRtStatusErrorUnsupportedRuntimeVersion = 4000,
  kLiteRtStatusErrorUnsupportedCompilerVersion = 4001,
  kLiteRtStatusErrorIncompatibleByteCodeVersion = 4002,
  kLiteRtStatusErrorUnsupportedOpShapeInferer = 5000,
  kLiteRtStatusErrorShapeInferenceFailed = 5001,
} LiteRtStatus;

// Bit set of hardware kinds (LiteRtHwAccelerators).
typedef int LiteRtHwAcceleratorSet;
#define LITERT_HW_ACCELERATOR_CPU 1
#define LITERT_HW_ACCELERATOR_GPU 2
#define LITERT_HW_ACCELERATOR_NPU 4

// Indexes and counts.
typedef size_t LiteRtParamIndex;

// Element types: TfLiteType's values (equal to the .tflite schema's
// TensorType only for some; convert with the functions in
// plugins/litert_compiler_context.cc).
typedef enum {
  kLiteRtElementTypeNone = 0,
  kLiteRtElementTypeFloat32 = 1,
  kLiteRtElementTypeInt32 = 2,
  kLiteRtElementTypeUInt8 = 3,
  kLiteRtElementTypeInt64 = 4,
  kLiteRtElementTypeTfString = 5,
  kLiteRtElementTypeBool = 6,
  kLiteRtElementTypeInt16 = 7,
  kLiteRtElementTypeComplex64 = 8,
  kLiteRtElementTypeInt8 = 9,
  kLiteRtElementTypeFloat16 = 10,
  kLiteRtElementTypeFloat64 = 11,
  kLiteRtElementTypeComplex128 = 12,
  kLiteRtElementTypeUInt64 = 13,
  kLiteRtElementTypeTfResource = 14,
  kLiteRtElementTypeTfVariant = 15,
  kLiteRtElementTypeUInt32 = 16,
  kLiteRtElementTypeUInt16 = 17,
  kLiteRtElementTypeInt4 = 18,
  kLiteRtElementTypeBFloat16 = 19,
  kLiteRtElementTypeInt2 = 20,
} LiteRtElementType;

#define LITERT_TENSOR_MAX_RANK 8

// 68 bytes: a 7-bit rank and a stride flag in one 32-bit word, then the
// dimensions (negative: dynamic) and the strides.
typedef struct {
  unsigned int rank : 7;
  bool has_strides : 1;
  int32_t dimensions[LITERT_TENSOR_MAX_RANK];
  uint32_t strides[LITERT_TENSOR_MAX_RANK];
} LiteRtLayout;

typedef struct {
  LiteRtElementType element_type;
} LiteRtUnrankedTensorType;

typedef struct {
  LiteRtElementType element_type;
  LiteRtLayout layout;
} LiteRtRankedTensorType;

typedef enum {
  kLiteRtRankedTensorType = 0,
  kLiteRtUnrankedTensorType = 1,
} LiteRtTensorTypeId;

#ifdef __cplusplus
}
#endif

#endif  // GRAFT_CORE_LITERT_ABI_H_
