/* Graft C ABI: what a vendor COMPILER PLUGIN exports.
 *
 * A compiler plugin is a shared library (by convention named
 * libgraft_compiler_plugin_<vendor>.so) that exports the functions below, by
 * name, with C linkage. The host dlopen()s it, looks each name up with dlsym
 * (the *_SYMBOL macros) and calls it through the matching *_fn typedef.
 * The plugin links no Graft library: it includes these headers and receives
 * the host's services (statuses, logging, memory) as a graft_host_api_t.
 *
 *   name (graft_compiler_plugin_...)   required   purpose
 *   abi_version                        yes        ABI version, checked first
 *   create / destroy                   yes        plugin instance lifecycle
 *   get_info                           yes        vendor, version, SoC models
 *   check_compatibility                no         can this SoC model be built?
 *   partition                          yes        which ops it takes; why not
 *   compile                            yes        partitions -> bytecode
 *   compiled_result_destroy            yes        frees a compile's result
 *
 * Life of a plugin, as the host drives it:
 *
 *   v = graft_compiler_plugin_abi_version();       // reject another MAJOR
 *   graft_compiler_plugin_create(&host, options, n, &plugin);
 *   graft_compiler_plugin_get_info(plugin, &info);  // vendor, SoC models...
 *   graft_compiler_plugin_check_compatibility(plugin, "soc");  // if exported
 *   graft_compiler_plugin_partition(plugin, &subgraph_view, "soc", &decisions);
 *   ... the host groups the taken ops into partitions and outlines them ...
 *   graft_compiler_plugin_compile(plugin, "soc", views, n, &result);
 *   ... the host embeds result->modules, result->calls, result->stamp ...
 *   graft_compiler_plugin_compiled_result_destroy(result);
 *   graft_compiler_plugin_destroy(plugin);
 *
 * Thread-safety. abi_version and get_info may be called from any thread at
 * any time. Distinct plugin instances are independent and may be used from
 * different threads concurrently, so a plugin keeps no unsynchronized
 * global mutable state. The host never calls check_compatibility, partition
 * or compile concurrently ON THE SAME instance, and calls destroy only after
 * every other call on it has returned and every compiled result it produced
 * has been destroyed. A compiled result is immutable; the host may read it
 * from any thread.
 *
 * Errors and ownership follow graft_common.h: NULL status means OK; every
 * fallible function validates its arguments and answers NULL pointers,
 * wrong struct sizes and unknown SoC models with a status (never a crash);
 * on error, out-params are untouched and nothing leaks.
 *
 * Optional functions may be absent (dlsym returns NULL); the default the
 * host applies is written beside each. Future minors append optional
 * functions only.
 */
#ifndef GRAFT_C_API_GRAFT_COMPILER_PLUGIN_H_
#define GRAFT_C_API_GRAFT_COMPILER_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#include "graft_common.h"
#include "graft_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A plugin instance; defined by each plugin, opaque to the host. */
typedef struct graft_compiler_plugin_t graft_compiler_plugin_t;

/* ------------------------------------------------------------------------ */
/* Identity                                                                   */
/* ------------------------------------------------------------------------ */

/* graft_compiler_plugin_info_t.flags bits. */
typedef uint32_t graft_compiler_plugin_flags_t;
enum graft_compiler_plugin_flag_bits_e {
  /* The plugin's toolchain ingests .tflite: the host fills
   * graft_graph_view_t.tflite_buffer in partition calls (the original file)
   * and in compile calls (each partition as a standalone .tflite model).
   * Without it the host does not spend time serializing partitions. */
  GRAFT_COMPILER_PLUGIN_FLAG_WANTS_TFLITE_BUFFERS = 1 << 0
};

/* Who the plugin is and what it targets. Filled by the plugin, owned by the
 * plugin instance, immutable and valid until graft_compiler_plugin_destroy.
 * Extensible: the host reads a member only if struct_size covers it. */
typedef struct graft_compiler_plugin_info_t {
  /* sizeof(graft_compiler_plugin_info_t) as the plugin was compiled. */
  size_t struct_size;
  /* The packed GRAFT_ABI_VERSION the plugin was built with. */
  uint32_t abi_version;
  /* GRAFT_COMPILER_PLUGIN_FLAG_* bits. */
  graft_compiler_plugin_flags_t flags;
  /* The vendor name, [a-z0-9_]+, e.g. "example". It names the dispatch
   * library that runs this plugin's bytecode and is recorded in every
   * compiled model; never NULL. */
  const char* vendor;
  /* The plugin's version, e.g. "1.0.0"; never NULL. A new version that
   * changes the bytecode it emits for the same input must change this
   * string (hosts key compile caches on it). */
  const char* plugin_version;
  /* One line for users; never NULL, may be "". */
  const char* description;
  /* The SoC models the plugin compiles for, e.g. {"example-soc-1",
   * "example-soc-2"}; at least one. soc_models[0] is the default the host
   * uses when the user names none. */
  const char* const* soc_models;
  size_t num_soc_models;
  /* GRAFT_HARDWARE_KIND_* bits the bytecode runs on. */
  graft_hardware_kinds_t hardware_kinds;
  /* The bytecode format version compile emits (repeated in every stamp). */
  uint32_t bytecode_format_version;
  /* The options create accepts (documentation for users and tools); may be
   * empty. */
  const graft_option_info_t* options;
  size_t num_options;
} graft_compiler_plugin_info_t;

/* ------------------------------------------------------------------------ */
/* Partition answers                                                          */
/* ------------------------------------------------------------------------ */

/* Why an op was not taken. Users see the code's name and the text. */
typedef int32_t graft_partition_reason_t;
enum graft_partition_reason_e {
  /* No reason given (also the value of an op the plugin did not answer). */
  GRAFT_PARTITION_REASON_UNSPECIFIED = 0,
  /* The operator (or custom code) is not supported at all. */
  GRAFT_PARTITION_REASON_UNSUPPORTED_OP = 1,
  /* The operator is supported, but not in this version. */
  GRAFT_PARTITION_REASON_UNSUPPORTED_OP_VERSION = 2,
  /* An input or output element type is not supported. */
  GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE = 3,
  /* A shape is not supported: rank, size, dynamic dimensions, broadcasting. */
  GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE = 4,
  /* An attribute value (op option) is not supported. */
  GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE = 5,
  /* The quantization scheme is not supported. */
  GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION = 6,
  /* An input must be constant (e.g. weights) but is computed at run time. */
  GRAFT_PARTITION_REASON_NOT_CONSTANT = 7,
  /* Supported by the vendor, but not on the requested SoC model. */
  GRAFT_PARTITION_REASON_UNSUPPORTED_ON_SOC = 8,
  /* Supported, but the plugin judges the CPU faster for it. */
  GRAFT_PARTITION_REASON_NOT_PROFITABLE = 9,
  /* A hardware limit would be exceeded (memory, tensor size...). */
  GRAFT_PARTITION_REASON_RESOURCE_LIMIT = 10,
  /* Excluded by a user option given at create. */
  GRAFT_PARTITION_REASON_DISABLED_BY_OPTION = 11
};

/* The plugin's answer for one op. Frozen layout. The host zero-fills the
 * array before the call, so an op the plugin does not touch reads as "not
 * taken, UNSPECIFIED, no text". */
typedef struct graft_op_decision_t {
  /* 1: the plugin takes the op; 0: it does not. */
  int32_t taken;
  /* Taken ops only, >= 0. Taken ops with different group ids never share a
   * partition; ops with the same id MAY share one (the host still splits
   * where grouping would create a cycle or the ops are not connected). Use
   * a single id unless the hardware needs separate programs. */
  int32_t group_id;
  /* Not-taken ops only: a GRAFT_PARTITION_REASON_* value. */
  graft_partition_reason_t reason_code;
  /* Explicit padding; zero. */
  int32_t reserved0;
  /* Not-taken ops only: one line of UTF-8 saying precisely why, e.g.
   * "op CONV_2D not supported by the example vendor"; NULL for none.
   * Owned by the PLUGIN: it stays valid until the next call of partition
   * on the same instance or its destroy, whichever is first; the host
   * copies what it keeps when partition returns. */
  const char* reason;
} graft_op_decision_t;

/* Where partition writes its answers. The HOST owns this struct and the
 * decisions array, sizes decisions to the view's num_ops and zero-fills it;
 * the plugin writes decisions[i] for op i of the view. Extensible: answers
 * added in later minors arrive as new parallel arrays appended here, which a
 * plugin writes only if struct_size covers them. */
typedef struct graft_partition_result_t {
  /* sizeof(graft_partition_result_t) as the host was compiled. */
  size_t struct_size;
  /* num_decisions == graph->num_ops entries, host-owned. */
  graft_op_decision_t* decisions;
  size_t num_decisions;
} graft_partition_result_t;

/* ------------------------------------------------------------------------ */
/* Compile answers                                                            */
/* ------------------------------------------------------------------------ */

/* How the runtime invokes one compiled partition. Frozen layout. */
typedef struct graft_compiled_call_t {
  /* The entry point's name inside the module, e.g. "partition_0"; never
   * NULL. The runtime passes it, with the module's bytes, to the dispatch
   * library. Unique within a module. */
  const char* entry_point;
  /* Index into graft_compiled_result_t.modules. Several calls may name the
   * same module (its bytes are then stored once). */
  size_t module_index;
} graft_compiled_call_t;

/* One debug map entry: a vendor instruction traced back to the op it came
 * from. Frozen layout. */
typedef struct graft_debug_map_entry_t {
  /* Index into graft_compiled_result_t.modules. */
  size_t module_index;
  /* Where in the module, in the vendor's own unit (instruction index, byte
   * offset, text line...); the plugin's documentation says which. */
  uint64_t vendor_location;
  /* graft_op_t.original_op_index of the op the instruction implements. */
  int32_t original_op_index;
  /* The index in compile's `partitions` of that op's partition, which
   * names the subgraph original_op_index refers to. */
  int32_t partition_index;
} graft_debug_map_entry_t;

/* Everything one compile call produced. Filled and owned by the plugin,
 * immutable, valid (with everything it points to) until
 * graft_compiler_plugin_compiled_result_destroy. Extensible: the host reads a
 * member only if struct_size covers it. A plugin typically embeds this
 * struct as the first member of its own result struct. */
typedef struct graft_compiled_result_t {
  /* sizeof(graft_compiled_result_t) as the plugin was compiled. */
  size_t struct_size;
  /* What the bytecode was built by and for; never NULL. */
  const graft_compatibility_stamp_t* stamp;
  /* The bytecode modules, at least one. The host copies each into the
   * compiled model (64-byte aligned, stored once), so dispatch libraries
   * receive modules 64-byte aligned even if these bytes are not. */
  const graft_byte_span_t* modules;
  size_t num_modules;
  /* calls[i] runs partitions[i] of the compile call; num_calls equals
   * num_partitions. */
  const graft_compiled_call_t* calls;
  size_t num_calls;
  /* Optional; may be empty. Entries in any order. */
  const graft_debug_map_entry_t* debug_map;
  size_t num_debug_map_entries;
} graft_compiled_result_t;

/* ------------------------------------------------------------------------ */
/* Exported functions                                                         */
/* ------------------------------------------------------------------------ */

/* Symbol names, for dlsym. */
#define GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL \
  "graft_compiler_plugin_abi_version"
#define GRAFT_COMPILER_PLUGIN_CREATE_SYMBOL "graft_compiler_plugin_create"
#define GRAFT_COMPILER_PLUGIN_DESTROY_SYMBOL "graft_compiler_plugin_destroy"
#define GRAFT_COMPILER_PLUGIN_GET_INFO_SYMBOL "graft_compiler_plugin_get_info"
#define GRAFT_COMPILER_PLUGIN_CHECK_COMPATIBILITY_SYMBOL \
  "graft_compiler_plugin_check_compatibility"
#define GRAFT_COMPILER_PLUGIN_PARTITION_SYMBOL "graft_compiler_plugin_partition"
#define GRAFT_COMPILER_PLUGIN_COMPILE_SYMBOL "graft_compiler_plugin_compile"
#define GRAFT_COMPILER_PLUGIN_COMPILED_RESULT_DESTROY_SYMBOL \
  "graft_compiler_plugin_compiled_result_destroy"

/* REQUIRED. The packed GRAFT_ABI_VERSION the plugin was built with; always
 * return GRAFT_ABI_VERSION. The host calls it before anything else and
 * unloads a plugin of another MAJOR without calling anything more. Never
 * fails; thread-safe; no side effects. */
typedef uint32_t (*graft_compiler_plugin_abi_version_fn)(void);
GRAFT_EXPORT uint32_t graft_compiler_plugin_abi_version(void);

/* REQUIRED. Creates a plugin instance.
 *   host         in: the host table; must stay valid until destroy. The
 *                plugin refuses a NULL table, one of another ABI MAJOR, or
 *                one smaller than it needs, with a static INVALID_ARGUMENT /
 *                FAILED_PRECONDITION status (it cannot use status_create).
 *   options      in: num_options user options, borrowed for the call; NULL
 *                allowed when num_options is 0. The plugin copies what it
 *                keeps and rejects unknown keys and bad values with
 *                INVALID_ARGUMENT naming the key.
 *   out_plugin   out: the new instance, owned by the caller, released with
 *                graft_compiler_plugin_destroy. Untouched on error.
 * Cheap: heavy toolchain set-up belongs in the first compile. Thread-safe. */
typedef graft_status_t* (*graft_compiler_plugin_create_fn)(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin);
GRAFT_EXPORT graft_status_t* graft_compiler_plugin_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin);

/* REQUIRED. Destroys `plugin` (NULL: no-op) and everything it owns: info,
 * partition reasons. Every compiled result it produced must already be
 * destroyed. Never fails. */
typedef void (*graft_compiler_plugin_destroy_fn)(
    graft_compiler_plugin_t* plugin);
GRAFT_EXPORT void graft_compiler_plugin_destroy(
    graft_compiler_plugin_t* plugin);

/* REQUIRED. Describes the plugin.
 *   plugin    in: the instance.
 *   out_info  out: the plugin's info, BORROWED: owned by the instance,
 *             immutable, valid until destroy. Untouched on error.
 * Errors: INVALID_ARGUMENT for NULL arguments. Thread-safe. */
typedef graft_status_t* (*graft_compiler_plugin_get_info_fn)(
    const graft_compiler_plugin_t* plugin,
    const graft_compiler_plugin_info_t** out_info);
GRAFT_EXPORT graft_status_t* graft_compiler_plugin_get_info(
    const graft_compiler_plugin_t* plugin,
    const graft_compiler_plugin_info_t** out_info);

/* OPTIONAL. Says whether the plugin can compile for `soc_model` here and
 * now (known model, toolchain present, licence...), returning NULL if so and
 * otherwise a status explaining why not: NOT_FOUND for an unknown model,
 * FAILED_PRECONDITION / UNAVAILABLE for a missing toolchain.
 *   plugin     in: the instance.
 *   soc_model  in: a SoC model name, borrowed for the call.
 * Default when absent: the host accepts exactly the names in
 * info->soc_models and answers others with NOT_FOUND. A plugin may accept
 * more names than it lists (aliases, families). */
typedef graft_status_t* (*graft_compiler_plugin_check_compatibility_fn)(
    graft_compiler_plugin_t* plugin, const char* soc_model);
GRAFT_EXPORT graft_status_t* graft_compiler_plugin_check_compatibility(
    graft_compiler_plugin_t* plugin, const char* soc_model);

/* REQUIRED. Decides, for every op of `graph`, whether the plugin takes it.
 *   plugin      in: the instance.
 *   graph       in: a whole model subgraph, borrowed for the call.
 *   soc_model   in: the SoC model to target, borrowed for the call; one the
 *               plugin accepts (the host checked), never NULL from a correct
 *               host.
 *   out_result  in/out: host-owned; decisions[i] receives the answer for
 *               graph->ops[i]. num_decisions must equal graph->num_ops.
 *               Reason strings are plugin-owned (see graft_op_decision_t).
 * Answers should depend only on the graph, the SoC model and create's
 * options, so that the same model partitions the same way every time.
 * Errors: INVALID_ARGUMENT for NULL arguments, a view that breaks its
 * invariants or a decisions array of the wrong size; NOT_FOUND for an
 * unknown SoC model. On error the decisions array holds unspecified values
 * and the host discards it; nothing is owned by the host afterwards, so
 * nothing leaks. An unsupported op is NOT an error: it is a decision. */
typedef graft_status_t* (*graft_compiler_plugin_partition_fn)(
    graft_compiler_plugin_t* plugin, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out_result);
GRAFT_EXPORT graft_status_t* graft_compiler_plugin_partition(
    graft_compiler_plugin_t* plugin, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out_result);

/* REQUIRED. Compiles partitions into bytecode.
 *   plugin          in: the instance.
 *   soc_model       in: the SoC model to target, borrowed for the call.
 *   partitions      in: num_partitions (>= 1) partition views, each one
 *                   outlined group of ops the plugin took, borrowed for the
 *                   call (see graft_graph_view_t for what a partition view
 *                   guarantees). The plugin copies what the result needs.
 *   out_result      out: the result, owned by the caller, released with
 *                   graft_compiler_plugin_compiled_result_destroy;
 *                   calls[i] runs partitions[i]. Untouched on error.
 * Output must be deterministic: the same partitions, SoC model and options
 * give byte-identical modules (no timestamps, addresses or random ids).
 * Errors: INVALID_ARGUMENT for NULL arguments, malformed views or an op the
 * plugin does not take (the host must not send one; the message names the
 * partition and op); NOT_FOUND for an unknown SoC model; RESOURCE_EXHAUSTED;
 * INTERNAL for toolchain failures, with the toolchain's message. */
typedef graft_status_t* (*graft_compiler_plugin_compile_fn)(
    graft_compiler_plugin_t* plugin, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t num_partitions,
    graft_compiled_result_t** out_result);
GRAFT_EXPORT graft_status_t* graft_compiler_plugin_compile(
    graft_compiler_plugin_t* plugin, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t num_partitions,
    graft_compiled_result_t** out_result);

/* REQUIRED. Destroys a result from compile (NULL: no-op), with everything it
 * points to. Must be called before destroying the plugin that produced it.
 * Thread-safe with respect to other results. Never fails. */
typedef void (*graft_compiler_plugin_compiled_result_destroy_fn)(
    graft_compiled_result_t* result);
GRAFT_EXPORT void graft_compiler_plugin_compiled_result_destroy(
    graft_compiled_result_t* result);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAFT_C_API_GRAFT_COMPILER_PLUGIN_H_ */
