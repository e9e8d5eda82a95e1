/* Graft C ABI: what a vendor DISPATCH LIBRARY exports.
 *
 * A dispatch library is the vendor's run-time half (its HAL): a shared
 * library named libgraft_dispatch_<vendor>.so that runs the bytecode the
 * vendor's compiler plugin produced. It exports the functions below, by
 * name, with C linkage. The host dlopen()s it, looks each name up with dlsym
 * (the *_SYMBOL macros) and calls it through the matching *_fn typedef. The
 * library links no Graft library: it includes these headers and receives
 * the host's services (statuses, logging, memory) as a graft_host_api_t.
 *
 *   name (graft_dispatch_...)          required   purpose
 *   abi_version                        yes        ABI version, checked first
 *   create / destroy                   yes        library instance lifecycle
 *   get_info                           yes        vendor, version, formats,
 *                                                 capabilities
 *   check_compatibility                yes        can this bytecode run here?
 *   device_context_create / _destroy   yes        one accelerator context
 *   invocation_create / _destroy       yes        one entry point, prepared
 *   invocation_get_buffer_requirements yes        size/alignment per in/out
 *   invocation_attach_host_memory      yes        bind an input or output
 *   invocation_invoke                  yes        run, synchronously
 *   invocation_invoke_async            no (ASYNC)      start a run
 *   invocation_wait                    no (ASYNC)      finish a started run
 *   invocation_get_profile             no (PROFILING)  timings of the last run
 *
 * Objects, each created from its parent and destroyed before it:
 *
 *   graft_dispatch_t                      one instance of the library
 *     graft_dispatch_device_context_t     one accelerator (queue, session)
 *       graft_dispatch_invocation_t       one entry point of one bytecode
 *                                         module, ready to run again and again
 *
 * Life of a dispatch library, as the host drives it:
 *
 *   v = graft_dispatch_abi_version();              // reject another MAJOR
 *   graft_dispatch_create(&host, options, n, &dispatch);
 *   graft_dispatch_get_info(dispatch, &info);      // vendor must match the
 *                                                  // model's manifest
 *   graft_dispatch_check_compatibility(dispatch, &stamp);  // per model
 *   graft_dispatch_device_context_create(dispatch, NULL, 0, &context);
 *   for each dispatch op of the model, at load time:
 *     graft_dispatch_invocation_create(context, &desc, &invocation);
 *     graft_dispatch_invocation_get_buffer_requirements(invocation, ...);
 *   for each run:
 *     graft_dispatch_invocation_attach_host_memory(invocation, INPUT, i, ...);
 *     graft_dispatch_invocation_attach_host_memory(invocation, OUTPUT, j, ...);
 *     graft_dispatch_invocation_invoke(invocation);
 *   graft_dispatch_invocation_destroy(invocation);
 *   graft_dispatch_device_context_destroy(context);
 *   graft_dispatch_destroy(dispatch);
 *
 * Cost model. Everything expensive (parsing and validating bytecode,
 * allocating intermediate memory, uploading weights, building command
 * buffers) belongs in invocation_create, which the host calls once per
 * dispatch op when it loads a model. attach_host_memory and invoke are the
 * hot path: they should not allocate, format strings or take global locks
 * (an error status is the exception), so that a run costs the host well
 * under a microsecond per dispatch op beyond the vendor's own work.
 * Attachments persist across invokes: the host re-attaches only the buffers
 * whose address changed.
 *
 * Thread-safety. abi_version and get_info may be called from any thread at
 * any time. Distinct instances are independent. The host never calls
 * check_compatibility, device_context_create/_destroy or
 * invocation_create/_destroy concurrently on objects of the SAME instance.
 * The host never calls two functions concurrently on the same invocation,
 * but DIFFERENT invocations (also of one device context) may be attached,
 * invoked and waited on from different threads at the same time, including
 * while another thread creates or destroys other invocations: the library
 * synchronizes whatever device state invocations share.
 *
 * Errors and ownership follow graft_common.h: NULL status means OK; every
 * fallible function validates its arguments and answers NULL pointers, wrong
 * struct sizes, out-of-range indices and malformed bytecode with a status
 * (never a crash); on error, out-params are untouched and nothing leaks.
 * Messages name the library, e.g. "example dispatch: ...".
 *
 * Optional functions may be absent (dlsym returns NULL); the host uses them
 * only when they are exported AND info->capabilities has their bit, and
 * otherwise applies the default written beside each. Future minors append
 * optional functions only (registered device buffers are the next planned
 * one: host memory first).
 */
#ifndef GRAFT_C_API_GRAFT_DISPATCH_H_
#define GRAFT_C_API_GRAFT_DISPATCH_H_

#include <stddef.h>
#include <stdint.h>

#include "graft_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A library instance; defined by each library, opaque to the host. */
typedef struct graft_dispatch_t graft_dispatch_t;
/* An accelerator context; defined by each library, opaque to the host. */
typedef struct graft_dispatch_device_context_t graft_dispatch_device_context_t;
/* A prepared entry point; defined by each library, opaque to the host. */
typedef struct graft_dispatch_invocation_t graft_dispatch_invocation_t;

/* ------------------------------------------------------------------------ */
/* Identity                                                                   */
/* ------------------------------------------------------------------------ */

/* graft_dispatch_info_t.capabilities bits. A bit promises that the library
 * exports the optional functions named beside it and that they work. */
typedef uint32_t graft_dispatch_capabilities_t;
enum graft_dispatch_capability_bits_e {
  /* graft_dispatch_invocation_invoke_async and graft_dispatch_invocation_wait
   * are exported: the host may overlap a run with its own work. */
  GRAFT_DISPATCH_CAPABILITY_ASYNC = 1 << 0,
  /* graft_dispatch_invocation_get_profile is exported and the library honours
   * GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING. */
  GRAFT_DISPATCH_CAPABILITY_PROFILING = 1 << 1
};

/* Who the library is and what it runs. Filled by the library, owned by the
 * instance, immutable and valid until graft_dispatch_destroy. Extensible:
 * the host reads a member only if struct_size covers it. */
typedef struct graft_dispatch_info_t {
  /* sizeof(graft_dispatch_info_t) as the library was compiled. */
  size_t struct_size;
  /* The packed GRAFT_ABI_VERSION the library was built with. */
  uint32_t abi_version;
  /* GRAFT_DISPATCH_CAPABILITY_* bits. */
  graft_dispatch_capabilities_t capabilities;
  /* The vendor name, [a-z0-9_]+, e.g. "example"; never NULL. EQUAL to the
   * vendor name of the compiler plugin whose bytecode it runs (the name in
   * the compatibility stamp and the compiled model's manifest), and to the
   * <vendor> of the file name libgraft_dispatch_<vendor>.so. */
  const char* vendor;
  /* The library's version, e.g. "1.0.0"; never NULL. */
  const char* library_version;
  /* A build identifier for bug reports (commit, date, toolchain), never
   * NULL, may be "". */
  const char* build_id;
  /* One line for users; never NULL, may be "". */
  const char* description;
  /* GRAFT_HARDWARE_KIND_* bits the library drives. */
  graft_hardware_kinds_t hardware_kinds;
  /* The bytecode format versions the library runs: every version v with
   * min <= v <= max (graft_compatibility_stamp_t.bytecode_format_version).
   * min <= max. */
  uint32_t min_bytecode_format_version;
  uint32_t max_bytecode_format_version;
  /* Explicit padding; zero. */
  uint32_t reserved0;
  /* The options create accepts (documentation for users and tools); may be
   * empty. */
  const graft_option_info_t* options;
  size_t num_options;
} graft_dispatch_info_t;

/* ------------------------------------------------------------------------ */
/* Invocations                                                                */
/* ------------------------------------------------------------------------ */

/* graft_dispatch_invocation_desc_t.flags bits. A library ignores bits it
 * does not know. */
typedef uint32_t graft_dispatch_invocation_flags_t;
enum graft_dispatch_invocation_flag_bits_e {
  /* Record per-run timings for graft_dispatch_invocation_get_profile. Set
   * only for a library with GRAFT_DISPATCH_CAPABILITY_PROFILING. Without it
   * a run records nothing and costs nothing extra. */
  GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING = 1 << 0
};

/* What to prepare: one entry point of one bytecode module, and the model it
 * lives in. Filled and owned by the HOST; borrowed for the duration of
 * invocation_create, EXCEPT the memory and descriptor it points to (see
 * `bytecode`, `model`, `model_fd`). Extensible: the library reads a member
 * only if struct_size covers it. */
typedef struct graft_dispatch_invocation_desc_t {
  /* sizeof(graft_dispatch_invocation_desc_t) as the host was compiled. */
  size_t struct_size;
  /* The bytecode module, as the compiler plugin emitted it; never empty.
   * In a compiled model it lies inside `model` (zero-copy in the mapped
   * file) and starts 64-byte aligned. LIFETIME: the host keeps these bytes
   * valid and unchanged until the invocation is destroyed, so the library
   * may use them in place instead of copying (an exception to ownership
   * rule 3 of graft_common.h). */
  graft_byte_span_t bytecode;
  /* The entry point to prepare, from the compiled call
   * (graft_compiled_call_t.entry_point); never NULL; borrowed for the call.
   * An entry point the module lacks is NOT_FOUND. */
  const char* entry_point;
  /* How many inputs and outputs the host will attach, in the order of the
   * compiled partition's inputs and outputs. A library whose entry point
   * has other counts answers INVALID_ARGUMENT. */
  size_t num_inputs;
  size_t num_outputs;
  /* The whole model file, mapped read-only from file offset 0, so that the
   * file offset of a byte p inside it is p - model.data: bytecode may refer
   * to weights stored elsewhere in the file by offset and use them in place.
   * {NULL, 0} when the bytecode does not come from a mapped file (e.g. it
   * was compiled at load time into memory). Same LIFETIME as `bytecode`. */
  graft_byte_span_t model;
  /* A read-only file descriptor of that file, for libraries that map or
   * DMA ranges of it themselves; -1 when there is none. Borrowed: valid
   * until the invocation is destroyed; the library dup()s it if it needs it
   * longer and never closes it. */
  int32_t model_fd;
  /* GRAFT_DISPATCH_INVOCATION_FLAG_* bits. */
  graft_dispatch_invocation_flags_t flags;
  /* Since ABI 1.1 (check with GRAFT_STRUCT_HAS_MEMBER). The model's buffers
   * (the .tflite Model.buffers table), indexed by buffer id:
   * model_buffers[i] is the data of buffer i, {NULL, 0} when it is empty.
   * These are the ids the compiler plugin saw as graft_tensor_t.buffer_id
   * (the host keeps buffer ids when it writes a compiled model), so
   * bytecode may name a weight by buffer id and use it in place, also when
   * the model was compiled at load time into memory. Same LIFETIME as
   * `bytecode`. */
  const graft_byte_span_t* model_buffers;
  size_t num_model_buffers;
} graft_dispatch_invocation_desc_t;

/* Selects an input or an output of an invocation. */
typedef int32_t graft_dispatch_io_kind_t;
enum graft_dispatch_io_kind_e {
  GRAFT_DISPATCH_IO_KIND_INPUT = 0,
  GRAFT_DISPATCH_IO_KIND_OUTPUT = 1
};

/* What one input or output needs from the memory the host attaches. Owned
 * by the HOST, which sets struct_size and passes it to
 * graft_dispatch_invocation_get_buffer_requirements; the library writes the
 * members struct_size covers. Extensible. */
typedef struct graft_dispatch_buffer_requirements_t {
  /* sizeof(graft_dispatch_buffer_requirements_t) as the host was compiled. */
  size_t struct_size;
  /* Bytes the library reads (input) or writes (output): exactly the
   * tensor's element count times its element size. An attached buffer
   * must be at least this large. May be 0 for an empty tensor. */
  size_t size;
  /* The alignment, in bytes, attached memory must have: a power of two,
   * at least 1. */
  size_t alignment;
  /* The element type the library reads or writes, so the host can check it
   * against the model's tensor. */
  graft_element_type_t element_type;
  /* Explicit padding; zero. */
  uint32_t reserved0;
} graft_dispatch_buffer_requirements_t;

/* One timed span of a run, for profilers. Frozen layout. */
typedef struct graft_dispatch_profile_event_t {
  /* What ran, e.g. "fully_connected t6"; never NULL. Owned by the
   * invocation (see graft_dispatch_invocation_get_profile for how long). */
  const char* name;
  /* Start and end on a monotonic clock, in nanoseconds from an epoch of the
   * library's choosing (the same for every event of one invocation);
   * start_ns <= end_ns. */
  uint64_t start_ns;
  uint64_t end_ns;
  /* The vendor location of the instruction the span covers, in the unit of
   * the compiler plugin's debug map (graft_debug_map_entry_t
   * .vendor_location), so the host can name the model op; 0 for spans that
   * cover no single instruction. */
  uint64_t vendor_location;
} graft_dispatch_profile_event_t;

/* For graft_dispatch_invocation_wait: wait as long as the run takes. */
#define GRAFT_DISPATCH_TIMEOUT_INFINITE UINT64_MAX

/* ------------------------------------------------------------------------ */
/* Exported functions                                                         */
/* ------------------------------------------------------------------------ */

/* Symbol names, for dlsym. */
#define GRAFT_DISPATCH_ABI_VERSION_SYMBOL "graft_dispatch_abi_version"
#define GRAFT_DISPATCH_CREATE_SYMBOL "graft_dispatch_create"
#define GRAFT_DISPATCH_DESTROY_SYMBOL "graft_dispatch_destroy"
#define GRAFT_DISPATCH_GET_INFO_SYMBOL "graft_dispatch_get_info"
#define GRAFT_DISPATCH_CHECK_COMPATIBILITY_SYMBOL \
  "graft_dispatch_check_compatibility"
#define GRAFT_DISPATCH_DEVICE_CONTEXT_CREATE_SYMBOL \
  "graft_dispatch_device_context_create"
#define GRAFT_DISPATCH_DEVICE_CONTEXT_DESTROY_SYMBOL \
  "graft_dispatch_device_context_destroy"
#define GRAFT_DISPATCH_INVOCATION_CREATE_SYMBOL \
  "graft_dispatch_invocation_create"
#define GRAFT_DISPATCH_INVOCATION_DESTROY_SYMBOL \
  "graft_dispatch_invocation_destroy"
#define GRAFT_DISPATCH_INVOCATION_GET_BUFFER_REQUIREMENTS_SYMBOL \
  "graft_dispatch_invocation_get_buffer_requirements"
#define GRAFT_DISPATCH_INVOCATION_ATTACH_HOST_MEMORY_SYMBOL \
  "graft_dispatch_invocation_attach_host_memory"
#define GRAFT_DISPATCH_INVOCATION_INVOKE_SYMBOL \
  "graft_dispatch_invocation_invoke"
#define GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL \
  "graft_dispatch_invocation_invoke_async"
#define GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL "graft_dispatch_invocation_wait"
#define GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL \
  "graft_dispatch_invocation_get_profile"

/* REQUIRED. The packed GRAFT_ABI_VERSION the library was built with; always
 * return GRAFT_ABI_VERSION. The host calls it before anything else and
 * unloads a library of another MAJOR without calling anything more. Never
 * fails; thread-safe; no side effects. */
typedef uint32_t (*graft_dispatch_abi_version_fn)(void);
GRAFT_EXPORT uint32_t graft_dispatch_abi_version(void);

/* REQUIRED. Creates a library instance (typically one per process and
 * vendor; a host may create several).
 *   host          in: the host table; must stay valid until destroy. The
 *                 library refuses a NULL table, one of another ABI MAJOR,
 *                 or one smaller than it needs, with a static
 *                 INVALID_ARGUMENT / FAILED_PRECONDITION status (it cannot
 *                 use status_create).
 *   options       in: num_options user options, borrowed for the call; NULL
 *                 allowed when num_options is 0. The library copies what it
 *                 keeps and rejects unknown keys and bad values with
 *                 INVALID_ARGUMENT naming the key.
 *   out_dispatch  out: the new instance, owned by the caller, released with
 *                 graft_dispatch_destroy. Untouched on error.
 * Cheap: opening the device belongs in device_context_create. Errors also
 * UNAVAILABLE when the vendor's driver is missing. Thread-safe. */
typedef graft_status_t* (*graft_dispatch_create_fn)(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out_dispatch);
GRAFT_EXPORT graft_status_t* graft_dispatch_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out_dispatch);

/* REQUIRED. Destroys `dispatch` (NULL: no-op) and its info. Every device
 * context it created must already be destroyed. Never fails. */
typedef void (*graft_dispatch_destroy_fn)(graft_dispatch_t* dispatch);
GRAFT_EXPORT void graft_dispatch_destroy(graft_dispatch_t* dispatch);

/* REQUIRED. Describes the library.
 *   dispatch  in: the instance.
 *   out_info  out: the info, BORROWED: owned by the instance, immutable,
 *             valid until destroy. Untouched on error.
 * Errors: INVALID_ARGUMENT for NULL arguments. Thread-safe. */
typedef graft_status_t* (*graft_dispatch_get_info_fn)(
    const graft_dispatch_t* dispatch, const graft_dispatch_info_t** out_info);
GRAFT_EXPORT graft_status_t* graft_dispatch_get_info(
    const graft_dispatch_t* dispatch, const graft_dispatch_info_t** out_info);

/* REQUIRED. Says whether bytecode made as `stamp` describes can run here,
 * returning NULL if so and otherwise a status whose message explains the
 * mismatch and what to do about it. The host calls it once per model and
 * vendor, with the stamp rebuilt from the model's manifest, before creating
 * any invocation for that model.
 *   dispatch  in: the instance.
 *   stamp     in: borrowed for the call; strings never NULL from a correct
 *             host. Read members only as far as stamp->struct_size covers.
 * Errors:
 *   FAILED_PRECONDITION  the bytecode cannot run here: another vendor,
 *                        a bytecode format version outside
 *                        [min, max]_bytecode_format_version, a SoC model
 *                        this device does not run, a plugin version known
 *                        to be bad. The message names both sides, e.g.
 *                        "bytecode format version 3 not supported (this
 *                        library runs 1 to 2)".
 *   INVALID_ARGUMENT     NULL arguments or a truncated stamp.
 *   UNAVAILABLE          the device is absent or busy for good. */
typedef graft_status_t* (*graft_dispatch_check_compatibility_fn)(
    graft_dispatch_t* dispatch, const graft_compatibility_stamp_t* stamp);
GRAFT_EXPORT graft_status_t* graft_dispatch_check_compatibility(
    graft_dispatch_t* dispatch, const graft_compatibility_stamp_t* stamp);

/* REQUIRED. Creates a device context: the accelerator session invocations
 * run on (open device, queue, memory pools).
 *   dispatch     in: the instance.
 *   options      in: num_options context options (e.g. a performance mode),
 *                borrowed for the call; NULL allowed when num_options is 0.
 *                Unknown keys are INVALID_ARGUMENT naming the key.
 *   out_context  out: the new context, owned by the caller, released with
 *                graft_dispatch_device_context_destroy. Untouched on error.
 * Errors: INVALID_ARGUMENT; UNAVAILABLE when the device cannot be opened;
 * RESOURCE_EXHAUSTED. */
typedef graft_status_t* (*graft_dispatch_device_context_create_fn)(
    graft_dispatch_t* dispatch, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_device_context_t** out_context);
GRAFT_EXPORT graft_status_t* graft_dispatch_device_context_create(
    graft_dispatch_t* dispatch, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_device_context_t** out_context);

/* REQUIRED. Destroys `context` (NULL: no-op). Every invocation created on it
 * must already be destroyed. Never fails. */
typedef void (*graft_dispatch_device_context_destroy_fn)(
    graft_dispatch_device_context_t* context);
GRAFT_EXPORT void graft_dispatch_device_context_destroy(
    graft_dispatch_device_context_t* context);

/* REQUIRED. Prepares one entry point for running: parses and validates the
 * bytecode, allocates what runs need, uploads weights. Expensive work
 * belongs here, not in invoke.
 *   context         in: the device context to run on.
 *   desc            in: what to prepare; the struct is borrowed for the
 *                   call, the bytecode, model and descriptor it points to
 *                   until the invocation is destroyed (see
 *                   graft_dispatch_invocation_desc_t).
 *   out_invocation  out: the new invocation, owned by the caller, released
 *                   with graft_dispatch_invocation_destroy, with nothing
 *                   attached yet. Untouched on error.
 * Errors:
 *   INVALID_ARGUMENT     NULL arguments, a truncated desc, MALFORMED
 *                        bytecode (the message says where: line, offset or
 *                        instruction, and what is wrong; malformed bytecode
 *                        never crashes the library), input/output counts
 *                        that differ from the entry point's.
 *   NOT_FOUND            the module has no such entry point.
 *   FAILED_PRECONDITION  well-formed bytecode this library or device does
 *                        not run (another format version or SoC model).
 *   RESOURCE_EXHAUSTED   memory or another device limit. */
typedef graft_status_t* (*graft_dispatch_invocation_create_fn)(
    graft_dispatch_device_context_t* context,
    const graft_dispatch_invocation_desc_t* desc,
    graft_dispatch_invocation_t** out_invocation);
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_create(
    graft_dispatch_device_context_t* context,
    const graft_dispatch_invocation_desc_t* desc,
    graft_dispatch_invocation_t** out_invocation);

/* REQUIRED. Destroys `invocation` (NULL: no-op). A run started with
 * invoke_async must have been waited for. Afterwards the library no longer
 * touches the bytecode, the model, its descriptor or attached memory. Never
 * fails. */
typedef void (*graft_dispatch_invocation_destroy_fn)(
    graft_dispatch_invocation_t* invocation);
GRAFT_EXPORT void graft_dispatch_invocation_destroy(
    graft_dispatch_invocation_t* invocation);

/* REQUIRED. Says what memory input or output `index` needs.
 *   invocation        in: the invocation.
 *   kind              in: GRAFT_DISPATCH_IO_KIND_INPUT or _OUTPUT.
 *   index             in: < desc.num_inputs or desc.num_outputs.
 *   out_requirements  in/out: host-owned, struct_size set by the host; the
 *                     library fills the members struct_size covers.
 *                     Unspecified on error.
 * The answer never changes for an invocation; hosts query it once, at load.
 * Errors: INVALID_ARGUMENT for NULL arguments, a truncated struct, an
 * unknown kind or an index out of range. */
typedef graft_status_t* (*graft_dispatch_invocation_get_buffer_requirements_fn)(
    const graft_dispatch_invocation_t* invocation,
    graft_dispatch_io_kind_t kind, size_t index,
    graft_dispatch_buffer_requirements_t* out_requirements);
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_buffer_requirements(
    const graft_dispatch_invocation_t* invocation,
    graft_dispatch_io_kind_t kind, size_t index,
    graft_dispatch_buffer_requirements_t* out_requirements);

/* REQUIRED. Binds host memory to input or output `index`, replacing what
 * was attached there before. HOT PATH: must not allocate.
 *   invocation  in: the invocation.
 *   kind        in: GRAFT_DISPATCH_IO_KIND_INPUT or _OUTPUT.
 *   index       in: < desc.num_inputs or desc.num_outputs.
 *   data        in: host memory, at least the required size and aligned as
 *               required; may be NULL only when size is 0. The library
 *               NEVER WRITES through an input's pointer, so an input may be
 *               read-only memory (e.g. a constant in the mapped model).
 *   size        in: bytes available at data; >= the required size.
 * The memory stays BORROWED by the invocation until it is re-attached or
 * the invocation is destroyed: every later run reads the input's bytes as
 * they are when the run starts and writes the output's bytes before the
 * run completes. During a run (invoke, or invoke_async until wait returns)
 * the host neither reads outputs nor writes inputs. An output never
 * overlaps another output or an input; inputs may overlap each other.
 * Errors: INVALID_ARGUMENT for a NULL invocation, an unknown kind, an index
 * out of range, NULL data with a non-zero size, memory that is too small or
 * misaligned (the message gives required and given size or alignment);
 * FAILED_PRECONDITION during a run started with invoke_async. On error the
 * earlier attachment (if any) stays in place. */
typedef graft_status_t* (*graft_dispatch_invocation_attach_host_memory_fn)(
    graft_dispatch_invocation_t* invocation, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size);
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_attach_host_memory(
    graft_dispatch_invocation_t* invocation, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size);

/* REQUIRED. Runs the entry point once, synchronously: reads every attached
 * input, writes every attached output, and returns when the outputs are in
 * host memory. HOT PATH: must not allocate on success.
 *   invocation  in: the invocation; every input and output attached.
 * Errors: FAILED_PRECONDITION when an input or output is not attached
 * (naming which) or a run started with invoke_async has not been waited
 * for; INTERNAL / UNAVAILABLE / DEADLINE_EXCEEDED for device failures. On
 * error the outputs hold unspecified values; the invocation stays usable. */
typedef graft_status_t* (*graft_dispatch_invocation_invoke_fn)(
    graft_dispatch_invocation_t* invocation);
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke(
    graft_dispatch_invocation_t* invocation);

/* OPTIONAL (GRAFT_DISPATCH_CAPABILITY_ASYNC). Starts a run like invoke and
 * returns without waiting for it; at most one run per invocation is in
 * flight. Every start that returns NULL is followed by exactly one
 * graft_dispatch_invocation_wait that completes (returns other than
 * DEADLINE_EXCEEDED) before the invocation is attached, invoked or
 * destroyed again. A library may do the work at start or in wait.
 *   invocation  in: the invocation; every input and output attached.
 * Errors: as invoke for a run that could not start (nothing is then in
 * flight, and no wait follows).
 * Default when absent: the host calls invoke. */
typedef graft_status_t* (*graft_dispatch_invocation_invoke_async_fn)(
    graft_dispatch_invocation_t* invocation);
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke_async(
    graft_dispatch_invocation_t* invocation);

/* OPTIONAL (GRAFT_DISPATCH_CAPABILITY_ASYNC). Waits for the run started by
 * invoke_async and returns its result.
 *   invocation  in: the invocation.
 *   timeout_ns  in: how long to wait: 0 polls, GRAFT_DISPATCH_TIMEOUT_INFINITE
 *               waits for as long as the run takes.
 * Returns NULL when the run completed and the outputs are in host memory;
 * DEADLINE_EXCEEDED when it is still running after timeout_ns (it stays in
 * flight: call wait again); otherwise the run's error, as invoke would
 * return it (the run is then over). FAILED_PRECONDITION when no run is in
 * flight. */
typedef graft_status_t* (*graft_dispatch_invocation_wait_fn)(
    graft_dispatch_invocation_t* invocation, uint64_t timeout_ns);
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_wait(
    graft_dispatch_invocation_t* invocation, uint64_t timeout_ns);

/* OPTIONAL (GRAFT_DISPATCH_CAPABILITY_PROFILING). The timed spans of the
 * most recently completed run of an invocation created with
 * GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING, in start order.
 *   invocation      in: the invocation.
 *   out_events      out: BORROWED: owned by the invocation, valid (with
 *                   their names) until its next run starts or it is
 *                   destroyed. NULL allowed when *out_num_events is 0.
 *   out_num_events  out: the number of events; 0 before the first run.
 * Both untouched on error.
 * Errors: INVALID_ARGUMENT for NULL arguments; FAILED_PRECONDITION when the
 * invocation was created without the profiling flag or a run is in flight.
 * Default when absent: no profile (the host reports the whole invoke's
 * wall time only). */
typedef graft_status_t* (*graft_dispatch_invocation_get_profile_fn)(
    const graft_dispatch_invocation_t* invocation,
    const graft_dispatch_profile_event_t** out_events, size_t* out_num_events);
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_profile(
    const graft_dispatch_invocation_t* invocation,
    const graft_dispatch_profile_event_t** out_events, size_t* out_num_events);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAFT_C_API_GRAFT_DISPATCH_H_ */
