/* Graft C ABI: types shared by every vendor library (compiler plugins and
 * dispatch libraries) and by the host that loads them.
 *
 * Pure C99, self-contained: includes only <stddef.h> and <stdint.h>, depends
 * on nothing else in Graft. Vendor libraries include this header (through
 * graft_compiler_plugin.h or the dispatch header) and never link a Graft
 * library; everything they need from the host arrives in graft_host_api_t.
 *
 * ==========================================================================
 * OWNERSHIP RULES (written once, for every graft_* C ABI function)
 * ==========================================================================
 *
 * 1. create -> the caller owns. An object returned through an out_* parameter
 *    of a *_create or *_compile function belongs to the caller, who releases
 *    it exactly once with the matching *_destroy function. Release functions
 *    return void, accept NULL (a no-op) and never fail.
 *
 * 2. get -> borrowed. A pointer returned by a *_get_* function, and every
 *    pointer reachable from a struct the callee filled (strings, arrays,
 *    spans), stays owned by the callee. It stays valid for the lifetime
 *    stated in the function's comment, by default until the object it was
 *    obtained from is destroyed. The caller never frees it and never writes
 *    through it.
 *
 * 3. Call arguments are borrowed for the duration of the call only. A callee
 *    that needs an argument (a string, an options array, a graph view, a
 *    host-provided buffer) after it returns copies what it needs. The one
 *    standing exception is the host table (graft_host_api_t): the host keeps
 *    it valid and unchanged until the object created with it is destroyed.
 *
 * 4. Statuses. A fallible function returns graft_status_t*; NULL means OK.
 *    A non-NULL status is owned by the RECEIVER (whoever the function
 *    returned it to), who reads code and message and then releases it with
 *    graft_status_release() exactly once. Vendor libraries create statuses
 *    through the host table (graft_host_api_t.status_create), so the memory
 *    is the host's and the host's own release function frees it; a library
 *    that has no usable host table (a NULL or too-small table, a NULL object
 *    argument) returns a static status whose release member is NULL.
 *    Messages are one line of UTF-8 without a trailing period and name the
 *    library ("example vendor: ...") so users know who is speaking.
 *
 * 5. On error, out_* parameters are left untouched and nothing leaks: the
 *    callee frees whatever it allocated before returning the status. Where a
 *    function writes into a buffer the caller provided, its comment says what
 *    the buffer holds after an error.
 *
 * 6. Nothing throws across the boundary. C++ implementations catch
 *    everything at the boundary and turn it into a status.
 *
 * ==========================================================================
 * VERSIONING AND EXTENSION RULES
 * ==========================================================================
 *
 * - The ABI version is MAJOR.MINOR (GRAFT_ABI_VERSION). A host loads only
 *   vendor libraries of its own MAJOR; MINOR may differ in both directions.
 * - Every table and extensible struct begins with `size_t struct_size`, set
 *   by whoever fills the struct to sizeof() of the struct as that side was
 *   compiled. Members are only ever appended, never reordered, resized or
 *   removed. A reader touches a member only if struct_size covers it (see
 *   GRAFT_STRUCT_HAS_MEMBER); a member that is not covered, or is NULL where
 *   the comment allows NULL, takes the default written beside it.
 * - Small records that travel in arrays (attributes, per-op decisions, calls,
 *   debug map entries, key/value pairs) have no struct_size: their layout is
 *   frozen forever. New per-record data arrives as a new parallel array
 *   appended to the extensible struct that carries the array.
 * - Enumerations are typedef'd to fixed-width integers (the enum itself only
 *   names the values), so their size never depends on the compiler. New
 *   enumerators are only appended; readers treat unknown values as "not
 *   supported" rather than as errors of the producer.
 * - Released layouts are frozen by static_asserts in tests/abi/layout_test.cc.
 * - Nothing in a public type depends on the preprocessor. The only
 *   conditionals in these headers are the include guard, the C++ linkage
 *   guard and the spelling of GRAFT_EXPORT, none of which changes a type.
 *
 * ==========================================================================
 * CONVENTIONS
 * ==========================================================================
 *
 * Strings are NUL-terminated UTF-8 (`const char*`); "never NULL" means an
 * absent string is "". Every array is paired with a size_t count named
 * num_<array>; a zero count allows a NULL array pointer. Dimensions are
 * int64_t; tensor and op indices are int32_t (TFLite's own width), with -1
 * meaning "absent". Booleans in structs are uint8_t/int32_t holding 0 or 1.
 */
#ifndef GRAFT_C_API_GRAFT_COMMON_H_
#define GRAFT_C_API_GRAFT_COMMON_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* ABI version                                                                */
/* ------------------------------------------------------------------------ */

/* The ABI version these headers describe. MAJOR changes only when a released
 * layout or contract changes incompatibly (never, we hope); MINOR when
 * members or optional functions are appended. */
#define GRAFT_ABI_VERSION_MAJOR 1
#define GRAFT_ABI_VERSION_MINOR 1

/* A packed version: MAJOR in the high 16 bits, MINOR in the low 16 bits, so
 * packed versions compare with < and >. */
#define GRAFT_ABI_VERSION_PACK(major, minor) \
  ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor) & 0xFFFFu)))
#define GRAFT_ABI_VERSION_GET_MAJOR(packed) ((uint32_t)(packed) >> 16)
#define GRAFT_ABI_VERSION_GET_MINOR(packed) ((uint32_t)(packed) & 0xFFFFu)
#define GRAFT_ABI_VERSION \
  GRAFT_ABI_VERSION_PACK(GRAFT_ABI_VERSION_MAJOR, GRAFT_ABI_VERSION_MINOR)

/* True when the extensible struct at `ptr` (whose first member is
 * struct_size) is large enough to contain `member` of `type`. Use it before
 * reading any member appended after the first release of a struct. */
#define GRAFT_STRUCT_HAS_MEMBER(ptr, type, member) \
  ((ptr)->struct_size >=                           \
   offsetof(type, member) + sizeof(((const type*)0)->member))

/* Marks the functions a vendor library exports. Vendor libraries build with
 * -fvisibility=hidden, so exactly the functions declared with GRAFT_EXPORT
 * are visible; tests/abi checks the exported set of every vendor library. */
#ifndef GRAFT_EXPORT
#if defined(_WIN32)
#define GRAFT_EXPORT __declspec(dllexport)
#else
#define GRAFT_EXPORT __attribute__((visibility("default")))
#endif
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                     */
/* ------------------------------------------------------------------------ */

/* Status codes. Same values and meanings as absl::StatusCode (and gRPC), so
 * the host converts with a cast. Codes vendor libraries commonly return:
 *   INVALID_ARGUMENT   a NULL or malformed argument, an unknown option
 *   NOT_FOUND          an unknown SoC model
 *   FAILED_PRECONDITION  the call is not allowed in the object's state, or
 *                      the host table is of another ABI major
 *   RESOURCE_EXHAUSTED allocation failed, a hardware limit was exceeded
 *   UNIMPLEMENTED      the entry point exists but does nothing yet
 *   INTERNAL           a bug in the vendor library or its toolchain */
typedef int32_t graft_status_code_t;
enum graft_status_code_e {
  GRAFT_STATUS_OK = 0,
  GRAFT_STATUS_CANCELLED = 1,
  GRAFT_STATUS_UNKNOWN = 2,
  GRAFT_STATUS_INVALID_ARGUMENT = 3,
  GRAFT_STATUS_DEADLINE_EXCEEDED = 4,
  GRAFT_STATUS_NOT_FOUND = 5,
  GRAFT_STATUS_ALREADY_EXISTS = 6,
  GRAFT_STATUS_PERMISSION_DENIED = 7,
  GRAFT_STATUS_RESOURCE_EXHAUSTED = 8,
  GRAFT_STATUS_FAILED_PRECONDITION = 9,
  GRAFT_STATUS_ABORTED = 10,
  GRAFT_STATUS_OUT_OF_RANGE = 11,
  GRAFT_STATUS_UNIMPLEMENTED = 12,
  GRAFT_STATUS_INTERNAL = 13,
  GRAFT_STATUS_UNAVAILABLE = 14,
  GRAFT_STATUS_DATA_LOSS = 15,
  GRAFT_STATUS_UNAUTHENTICATED = 16
};

/* A failed call's status: a code and a message, carried across the boundary
 * as a pointer. NULL means OK; a non-NULL status never has code OK.
 *
 * Created by graft_host_api_t.status_create (host memory, release set by the
 * host) or, only where no host table is usable, a static object with release
 * NULL (see GRAFT_STATUS_INITIALIZER). Read-only for everyone but its
 * creator. Owned by the receiver, who calls graft_status_release() once.
 * Statuses are independent objects: any thread may read or release one,
 * and creating one touches no thread-local or global state. */
typedef struct graft_status_t graft_status_t;
struct graft_status_t {
  /* sizeof(graft_status_t) as the creator was compiled. */
  size_t struct_size;
  /* A GRAFT_STATUS_* value other than GRAFT_STATUS_OK. */
  graft_status_code_t code;
  /* One line of UTF-8; never NULL; owned by the status. */
  const char* message;
  /* Frees the status and its message; NULL for a static status. Called only
   * through graft_status_release(). */
  void (*release)(graft_status_t* status);
};

/* Initializer for a static status, for the rare path where a library has no
 * usable host table:
 *   static graft_status_t k_no_host = GRAFT_STATUS_INITIALIZER(
 *       GRAFT_STATUS_INVALID_ARGUMENT, "example vendor: host is NULL");
 * Returning a pointer to it is safe: graft_status_release() does nothing for
 * a status whose release is NULL, and receivers never write to statuses. */
#define GRAFT_STATUS_INITIALIZER(code, message) \
  { sizeof(graft_status_t), (code), (message), NULL }

/* Releases `status` (NULL allowed: OK needs no release). After the call the
 * status and its message are invalid. Thread-safe. */
static inline void graft_status_release(graft_status_t* status) {
  if (status != NULL && status->release != NULL) status->release(status);
}

/* The code of `status`: GRAFT_STATUS_OK for NULL. Does not release. */
static inline graft_status_code_t graft_status_code(
    const graft_status_t* status) {
  if (status == NULL) return GRAFT_STATUS_OK;
  return status->code;
}

/* ------------------------------------------------------------------------ */
/* Plain data shared by the ABIs                                              */
/* ------------------------------------------------------------------------ */

/* A read-only run of bytes. {NULL, 0} is the empty span. Ownership and
 * lifetime are those of the struct or call that carries it. No alignment is
 * promised unless the carrier says so: read multi-byte values with memcpy. */
typedef struct graft_byte_span_t {
  const uint8_t* data;
  size_t size;
} graft_byte_span_t;

/* One named option, as given by the user (e.g. `--plugin-option
 * single_module=1`). key and value are never NULL. A library documents the
 * keys it accepts (graft_option_info_t) and rejects unknown keys with
 * GRAFT_STATUS_INVALID_ARGUMENT so that typos surface. Frozen layout. */
typedef struct graft_key_value_t {
  const char* key;
  const char* value;
} graft_key_value_t;

/* Describes one option a library accepts, for `graft plugin info` and error
 * messages. All three strings never NULL. Frozen layout. */
typedef struct graft_option_info_t {
  /* The key, e.g. "single_module". */
  const char* name;
  /* The value used when the option is not given, e.g. "0". */
  const char* default_value;
  /* One line for users, e.g. "1: emit all partitions into one module". */
  const char* description;
} graft_option_info_t;

/* Element types. The values are EQUAL to TFLite's TensorType enum
 * (tensorflow/lite/schema/schema.fbs), so converting from a .tflite tensor is
 * a cast and the numbers can be looked up in either place. New TFLite types
 * are appended here with TFLite's number. */
typedef int32_t graft_element_type_t;
enum graft_element_type_e {
  GRAFT_ELEMENT_TYPE_FLOAT32 = 0,
  GRAFT_ELEMENT_TYPE_FLOAT16 = 1,
  GRAFT_ELEMENT_TYPE_INT32 = 2,
  GRAFT_ELEMENT_TYPE_UINT8 = 3,
  GRAFT_ELEMENT_TYPE_INT64 = 4,
  GRAFT_ELEMENT_TYPE_STRING = 5,
  GRAFT_ELEMENT_TYPE_BOOL = 6,
  GRAFT_ELEMENT_TYPE_INT16 = 7,
  GRAFT_ELEMENT_TYPE_COMPLEX64 = 8,
  GRAFT_ELEMENT_TYPE_INT8 = 9,
  GRAFT_ELEMENT_TYPE_FLOAT64 = 10,
  GRAFT_ELEMENT_TYPE_COMPLEX128 = 11,
  GRAFT_ELEMENT_TYPE_UINT64 = 12,
  GRAFT_ELEMENT_TYPE_RESOURCE = 13,
  GRAFT_ELEMENT_TYPE_VARIANT = 14,
  GRAFT_ELEMENT_TYPE_UINT32 = 15,
  GRAFT_ELEMENT_TYPE_UINT16 = 16,
  GRAFT_ELEMENT_TYPE_INT4 = 17,
  GRAFT_ELEMENT_TYPE_BFLOAT16 = 18,
  GRAFT_ELEMENT_TYPE_INT2 = 19,
  GRAFT_ELEMENT_TYPE_UINT4 = 20,
  GRAFT_ELEMENT_TYPE_FLOAT8_E4M3FN = 21,
  GRAFT_ELEMENT_TYPE_FLOAT8_E5M2 = 22
};

/* The printable name of an element type, spelled as in TFLite's schema
 * ("FLOAT32", "INT8"); "UNKNOWN" for a value this header does not know. The
 * returned string is static. */
static inline const char* graft_element_type_name(graft_element_type_t type) {
  switch (type) {
    case GRAFT_ELEMENT_TYPE_FLOAT32: return "FLOAT32";
    case GRAFT_ELEMENT_TYPE_FLOAT16: return "FLOAT16";
    case GRAFT_ELEMENT_TYPE_INT32: return "INT32";
    case GRAFT_ELEMENT_TYPE_UINT8: return "UINT8";
    case GRAFT_ELEMENT_TYPE_INT64: return "INT64";
    case GRAFT_ELEMENT_TYPE_STRING: return "STRING";
    case GRAFT_ELEMENT_TYPE_BOOL: return "BOOL";
    case GRAFT_ELEMENT_TYPE_INT16: return "INT16";
    case GRAFT_ELEMENT_TYPE_COMPLEX64: return "COMPLEX64";
    case GRAFT_ELEMENT_TYPE_INT8: return "INT8";
    case GRAFT_ELEMENT_TYPE_FLOAT64: return "FLOAT64";
    case GRAFT_ELEMENT_TYPE_COMPLEX128: return "COMPLEX128";
    case GRAFT_ELEMENT_TYPE_UINT64: return "UINT64";
    case GRAFT_ELEMENT_TYPE_RESOURCE: return "RESOURCE";
    case GRAFT_ELEMENT_TYPE_VARIANT: return "VARIANT";
    case GRAFT_ELEMENT_TYPE_UINT32: return "UINT32";
    case GRAFT_ELEMENT_TYPE_UINT16: return "UINT16";
    case GRAFT_ELEMENT_TYPE_INT4: return "INT4";
    case GRAFT_ELEMENT_TYPE_BFLOAT16: return "BFLOAT16";
    case GRAFT_ELEMENT_TYPE_INT2: return "INT2";
    case GRAFT_ELEMENT_TYPE_UINT4: return "UINT4";
    case GRAFT_ELEMENT_TYPE_FLOAT8_E4M3FN: return "FLOAT8_E4M3FN";
    case GRAFT_ELEMENT_TYPE_FLOAT8_E5M2: return "FLOAT8_E5M2";
    default: return "UNKNOWN";
  }
}

/* Bits per element of an element type (sub-byte types pack little-endian
 * within a byte, as in TFLite); 0 for STRING, RESOURCE, VARIANT and unknown
 * values, whose elements have no fixed size. */
static inline uint32_t graft_element_type_bit_width(
    graft_element_type_t type) {
  switch (type) {
    case GRAFT_ELEMENT_TYPE_INT2: return 2;
    case GRAFT_ELEMENT_TYPE_INT4:
    case GRAFT_ELEMENT_TYPE_UINT4: return 4;
    case GRAFT_ELEMENT_TYPE_UINT8:
    case GRAFT_ELEMENT_TYPE_BOOL:
    case GRAFT_ELEMENT_TYPE_INT8:
    case GRAFT_ELEMENT_TYPE_FLOAT8_E4M3FN:
    case GRAFT_ELEMENT_TYPE_FLOAT8_E5M2: return 8;
    case GRAFT_ELEMENT_TYPE_FLOAT16:
    case GRAFT_ELEMENT_TYPE_INT16:
    case GRAFT_ELEMENT_TYPE_UINT16:
    case GRAFT_ELEMENT_TYPE_BFLOAT16: return 16;
    case GRAFT_ELEMENT_TYPE_FLOAT32:
    case GRAFT_ELEMENT_TYPE_INT32:
    case GRAFT_ELEMENT_TYPE_UINT32: return 32;
    case GRAFT_ELEMENT_TYPE_INT64:
    case GRAFT_ELEMENT_TYPE_UINT64:
    case GRAFT_ELEMENT_TYPE_FLOAT64:
    case GRAFT_ELEMENT_TYPE_COMPLEX64: return 64;
    case GRAFT_ELEMENT_TYPE_COMPLEX128: return 128;
    default: return 0;
  }
}

/* Kinds of hardware a library drives, as a bitmask (graft_hardware_kinds_t).
 * Informational: shown to users and usable by hosts to order vendors. */
typedef uint32_t graft_hardware_kinds_t;
enum graft_hardware_kind_bits_e {
  GRAFT_HARDWARE_KIND_CPU = 1 << 0,
  GRAFT_HARDWARE_KIND_GPU = 1 << 1,
  GRAFT_HARDWARE_KIND_DSP = 1 << 2,
  GRAFT_HARDWARE_KIND_NPU = 1 << 3
};

/* What compiled bytecode was made by and for. The compiler plugin fills one
 * per compile (graft_compiled_result_t.stamp); the host records it in the
 * compiled model's manifest; the dispatch library checks it before running
 * the bytecode. Extensible; strings never NULL. */
typedef struct graft_compatibility_stamp_t {
  /* sizeof(graft_compatibility_stamp_t) as the filler was compiled. */
  size_t struct_size;
  /* The packed GRAFT_ABI_VERSION the producing library was built with. */
  uint32_t abi_version;
  /* The vendor's own version of its bytecode format; a dispatch library
   * states which versions it runs. */
  uint32_t bytecode_format_version;
  /* The vendor name, [a-z0-9_]+, e.g. "example"; also names the dispatch
   * library that runs the bytecode. */
  const char* vendor;
  /* The producing plugin's version, e.g. "1.0.0". */
  const char* plugin_version;
  /* The SoC model the bytecode was compiled for, e.g. "example-soc-1". */
  const char* soc_model;
} graft_compatibility_stamp_t;

/* ------------------------------------------------------------------------ */
/* Host table                                                                 */
/* ------------------------------------------------------------------------ */

/* Log severities for graft_host_api_t.log_message. */
typedef int32_t graft_log_level_t;
enum graft_log_level_e {
  GRAFT_LOG_LEVEL_VERBOSE = 0,
  GRAFT_LOG_LEVEL_INFO = 1,
  GRAFT_LOG_LEVEL_WARNING = 2,
  GRAFT_LOG_LEVEL_ERROR = 3
};

/* The services the host offers a vendor library: status creation, logging,
 * memory. The host passes it at create; the library keeps the pointer and
 * uses it until its object is destroyed (ownership rule 3), so a vendor
 * library never links against Graft.
 *
 * Every function receives the table itself as `host`, so a host can reach
 * its own state (host_context) and a library can hold several hosts' tables
 * at once. Every function is thread-safe and may be called from any thread,
 * also concurrently. All members of ABI 1.0 are non-NULL; members appended
 * later may be NULL (check with GRAFT_STRUCT_HAS_MEMBER and for NULL), with
 * the default behaviour written beside them. */
typedef struct graft_host_api_t graft_host_api_t;
struct graft_host_api_t {
  /* sizeof(graft_host_api_t) as the host was compiled. A library refuses a
   * table smaller than the one it was compiled with, minus members it
   * documents as optional. */
  size_t struct_size;
  /* The host's packed GRAFT_ABI_VERSION. A library refuses another MAJOR. */
  uint32_t abi_version;
  /* Explicit padding; zero. */
  uint32_t reserved0;
  /* The host's own state; opaque to libraries, which never touch it. */
  void* host_context;

  /* Creates a status with `code` and a copy of `message`.
   *   host     in: this table.
   *   code     in: a GRAFT_STATUS_* value. GRAFT_STATUS_OK returns NULL.
   *   message  in: UTF-8, borrowed for the call; NULL is treated as "".
   * Returns a status the caller owns (see ownership rule 4); normally
   * returned straight to the host, or released with graft_status_release()
   * if the library decides not to report it. Never returns NULL for a code
   * other than OK: if the host is out of memory it returns a static
   * RESOURCE_EXHAUSTED status. */
  graft_status_t* (*status_create)(const graft_host_api_t* host,
                                   graft_status_code_t code,
                                   const char* message);

  /* As status_create, with the message formatted like printf(format, ...)
   * (C99 conversions). `format` is borrowed for the call; NULL is treated as
   * "". The host does not limit the message length. */
  graft_status_t* (*status_create_formatted)(const graft_host_api_t* host,
                                             graft_status_code_t code,
                                             const char* format, ...);

  /* Writes one line to the host's log, tagged with the library's vendor.
   *   level    in: a GRAFT_LOG_LEVEL_* value; the host may drop low levels.
   *   message  in: one line of UTF-8, borrowed for the call; NULL ignored.
   * Never fails. Use it for warnings and progress, never to report an
   * error that a status should carry. */
  void (*log_message)(const graft_host_api_t* host, graft_log_level_t level,
                      const char* message);

  /* Allocates `size` bytes aligned to `alignment` from the host, so the host
   * can account for a library's memory. Optional to use: libraries may use
   * their own allocator instead.
   *   size       in: bytes; 0 returns NULL.
   *   alignment  in: a power of two, or 0 for alignof(max_align_t).
   * Returns memory the caller owns and frees with deallocate, or NULL when
   * out of memory (the library then returns RESOURCE_EXHAUSTED). */
  void* (*allocate)(const graft_host_api_t* host, size_t size,
                    size_t alignment);

  /* Frees memory from allocate. NULL is a no-op. */
  void (*deallocate)(const graft_host_api_t* host, void* ptr);
};

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAFT_C_API_GRAFT_COMMON_H_ */
