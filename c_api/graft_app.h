/* Graft app API: load and run .tflite models, and compile them ahead of time,
 * from C (or any language with a C FFI). Implemented by libgraft.so
 * (tools/libgraft), which exports exactly the functions declared here.
 *
 * Pure C99, self-contained: includes graft_common.h (statuses, element
 * types), graft_graph.h (the quantization record) and <string.h> (memset),
 * nothing else. The ownership, versioning and extension rules at the top of
 * graft_common.h apply to every function here, with the host being libgraft
 * and the caller the app:
 *
 * - Fallible functions return graft_status_t*: NULL is OK; a non-NULL status
 *   carries a code and a one-line message ("model.tflite: op 3 (CONV_2D):
 *   ...") and is the caller's, released with graft_status_release(). On
 *   error out_* parameters are untouched and nothing leaks.
 * - *_create and graft_apply return objects the caller owns and releases
 *   with the matching *_destroy (NULL allowed, never fails).
 * - *_get_* results are borrowed from the object they came from, valid for
 *   the lifetime written beside the function.
 * - Arguments (strings, arrays, option structs) are borrowed for the call.
 * - Option structs begin with struct_size, which the caller sets to sizeof()
 *   as it was compiled (the *_init functions do that); members the library
 *   does not know of, or a smaller caller does not have, take their
 *   defaults. Structs the library fills begin with struct_size as the
 *   library was compiled: check GRAFT_STRUCT_HAS_MEMBER before reading a
 *   member appended after the version you built with.
 *
 * A minimal run (error handling elided; every status must be checked):
 *
 *   graft_model_options_t opts;
 *   graft_model_options_init(&opts);
 *   graft_model_t* model = NULL;
 *   graft_model_create_from_file("model.tflite", &opts, &model);
 *   graft_signature_t* sig = NULL;
 *   graft_model_find_signature(model, NULL, &sig);        (subgraph 0)
 *   graft_signature_set_input(sig, 0, pixels, sizeof(pixels));
 *   graft_signature_invoke(sig);
 *   const void* out; size_t out_size;
 *   graft_signature_get_output_buffer(sig, 0, &out, &out_size);
 *   graft_model_destroy(model);
 *
 * Thread-safety: a model and everything obtained from it is used by one
 * thread at a time; different models may be used concurrently. graft_apply,
 * graft_version, graft_app_api_version and graft_default_vendor_dir may be
 * called from any thread, also concurrently.
 */
#ifndef GRAFT_C_API_GRAFT_APP_H_
#define GRAFT_C_API_GRAFT_APP_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graft_common.h"
#include "graft_graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Declares a function libgraft.so exports. */
#ifndef GRAFT_APP_API
#define GRAFT_APP_API GRAFT_EXPORT
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                   */
/* ------------------------------------------------------------------------ */

/* The app API version this header describes, packed like GRAFT_ABI_VERSION
 * (GRAFT_ABI_VERSION_PACK). MAJOR changes only when a released function or
 * layout changes incompatibly (and the library's soname with it); MINOR
 * when functions or members are appended. */
#define GRAFT_APP_API_VERSION_MAJOR 0
#define GRAFT_APP_API_VERSION_MINOR 1
#define GRAFT_APP_API_VERSION                         \
  GRAFT_ABI_VERSION_PACK(GRAFT_APP_API_VERSION_MAJOR, \
                         GRAFT_APP_API_VERSION_MINOR)

/* The packed app API version of the loaded library. An app built against
 * MINOR m runs with a library of the same MAJOR and MINOR >= m. */
GRAFT_APP_API uint32_t graft_app_api_version(void);

/* The library's release, "0.1.0". Static string. */
GRAFT_APP_API const char* graft_version(void);

/* The installed vendor directory: where an installed Graft keeps the
 * in-tree vendors' compiler plugins and dispatch libraries
 * (<libdir>/graft/vendors beside libgraft.so, or vendor_libs/ beside it in
 * a build tree), found relative to the loaded library. "" when there is
 * none. Static string, valid while the library is loaded. It is the
 * default dispatch directory of graft_model_create_* and the default plugin
 * directory of graft_apply. */
GRAFT_APP_API const char* graft_default_vendor_dir(void);

/* ------------------------------------------------------------------------ */
/* Loading a model                                                            */
/* ------------------------------------------------------------------------ */

/* What to do with ops that would run on the CPU (graft_model_options_t). */
typedef int32_t graft_fallback_policy_t;
enum graft_fallback_policy_e {
  /* Ops no vendor runs use Graft's CPU kernels; a dispatch op (compiled for
   * a vendor) that falls back to the CPU is a warning in the report and on
   * stderr. The default. */
  GRAFT_FALLBACK_POLICY_ALLOW_CPU = 0,
  /* Loading fails, listing them, if a dispatch op would run its fallback on
   * the CPU (its vendor's library is missing or refuses it); ops no vendor
   * took still run on the CPU. */
  GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS = 1,
  /* Loading fails, listing them, unless every op runs on a vendor's
   * backend (ops computed once at load from constants do not count). */
  GRAFT_FALLBACK_POLICY_REQUIRE_ACCELERATOR = 2
};

/* Model flags (graft_model_options_t.flags). */
typedef uint32_t graft_model_flags_t;
enum graft_model_flag_bits_e {
  /* Time every op of every invoke (graft_model_get_profile). Off, timing
   * costs nothing. */
  GRAFT_MODEL_FLAG_PROFILING = 1u << 0,
  /* Do not add graft_default_vendor_dir() to the dispatch directories when
   * dispatch_dirs is empty: only dispatch_dirs and dispatch_paths are
   * searched. */
  GRAFT_MODEL_FLAG_NO_DEFAULT_DISPATCH_DIR = 1u << 1
};

/* How to load a model. Extensible: set struct_size (graft_model_options_init
 * does) and leave members you do not use zero; every zero member means the
 * default written beside it. Strings and arrays are borrowed for the call. */
typedef struct graft_model_options_t {
  /* sizeof(graft_model_options_t) as the caller was compiled. */
  size_t struct_size;
  /* Threads for CPU kernels, counting the invoking thread; 0: 1. */
  int32_t num_threads;
  /* A GRAFT_FALLBACK_POLICY_* value; 0: ALLOW_CPU. */
  graft_fallback_policy_t fallback_policy;
  /* GRAFT_MODEL_FLAG_* bits. */
  graft_model_flags_t flags;
  /* Explicit padding; zero. */
  uint32_t reserved0;
  /* Directories searched for the dispatch library of each vendor the model
   * was compiled for (libgraft_dispatch_<vendor>.so, and LiteRT's
   * libLiteRtDispatch_<Vendor>.so). Empty: graft_default_vendor_dir()
   * (unless GRAFT_MODEL_FLAG_NO_DEFAULT_DISPATCH_DIR). A named directory
   * that does not exist fails the load (NOT_FOUND). */
  const char* const* dispatch_dirs;
  size_t num_dispatch_dirs;
  /* Dispatch library files, in addition to the directories. */
  const char* const* dispatch_paths;
  size_t num_dispatch_paths;
  /* On-device compile: when not NULL, a model that is not compiled yet is
   * compiled at load by the compiler plugins in this directory, as
   * graft_apply would, and then run. NULL: models run as they are. Only for
   * graft_model_create_from_file. */
  const char* plugin_dir;
  /* On-device compile: compiled models are cached here (created if
   * missing), so the next load maps the compiled file. NULL: no cache. */
  const char* cache_dir;
  /* On-device compile: the SoC model to compile for. NULL: each plugin's
   * first. */
  const char* soc_model;
  /* On-device compile: "KEY=VALUE" options for every plugin's create, as
   * `graft run --plugin-option` (LiteRT plugins take apply_plugin's flag
   * names). */
  const char* const* plugin_options;
  size_t num_plugin_options;
  /* Vendor priority, highest first: on-device compile uses only the plugins
   * of these vendors, and an op several of them take goes to the first
   * named; the dispatch libraries of vendors not named are not loaded, so
   * ops compiled for them fall back to the CPU (a warning each) or, under
   * REQUIRE_VENDOR_OPS, fail the load. Names no plugin, library or model
   * has are ignored, so one list can serve many devices. Empty: every
   * vendor found, plugins in Graft's default order (accelerators, NPU then
   * GPU then DSP, before CPU backends; then by name). */
  const char* const* vendors;
  size_t num_vendors;
} graft_model_options_t;

/* Sets `options` to the defaults and its struct_size to the caller's
 * sizeof. */
static inline void graft_model_options_init(graft_model_options_t* options) {
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(graft_model_options_t);
}

/* A loaded, prepared model: the runtime, its signatures and its tensors.
 * Opaque. */
typedef struct graft_model_t graft_model_t;

/* Loads the .tflite model at `path` (compiled by Graft or LiteRT's tools,
 * or not compiled), memory-mapping it: weights and bytecode are used in
 * place. Prepares every entry point (kernel choice, shapes, memory plan) and
 * creates the vendor contexts its dispatch ops need, so invoking allocates
 * nothing.
 *   path         in: the model file.
 *   options      in: NULL for the defaults.
 *   out_model    out: the model, owned by the caller
 *                (graft_model_destroy).
 * Errors: NOT_FOUND (no such file or dispatch directory), INVALID_ARGUMENT
 * (a malformed model, a bad option), UNIMPLEMENTED (an op without a
 * kernel), FAILED_PRECONDITION (the fallback policy refused: the message
 * lists the ops), or the vendor's own status (naming the vendor). */
GRAFT_APP_API graft_status_t* graft_model_create_from_file(
    const char* path, const graft_model_options_t* options,
    graft_model_t** out_model);

/* As graft_model_create_from_file for a model image in memory. The bytes
 * are copied (into 64-byte aligned memory), so `data` may be freed when the
 * call returns; to load without a copy, load from a file. options->plugin_dir
 * must be NULL (on-device compile reads a file): INVALID_ARGUMENT
 * otherwise.
 *   data, size   in: the .tflite image.
 *   name         in: names the model in messages; NULL: "<memory>". */
GRAFT_APP_API graft_status_t* graft_model_create_from_memory(
    const void* data, size_t size, const char* name,
    const graft_model_options_t* options, graft_model_t** out_model);

/* Releases the model, its signatures, tensors, reports and vendor
 * contexts. NULL is a no-op. Every pointer obtained from the model is
 * invalid afterwards, bound caller buffers are no longer touched. */
GRAFT_APP_API void graft_model_destroy(graft_model_t* model);

/* ------------------------------------------------------------------------ */
/* Signatures and tensors                                                     */
/* ------------------------------------------------------------------------ */

/* One entry point of a model: a signature ("serving_default", "encode"), or
 * subgraph 0's own inputs and outputs. Borrowed from its model: valid until
 * graft_model_destroy. Opaque. */
typedef struct graft_signature_t graft_signature_t;

/* The number of signatures the model declares (0 for models without). */
GRAFT_APP_API size_t graft_model_signature_count(const graft_model_t* model);

/* The signature at `index` (model order).
 * Errors: OUT_OF_RANGE for index >= graft_model_signature_count. */
GRAFT_APP_API graft_status_t* graft_model_get_signature(
    graft_model_t* model, size_t index, graft_signature_t** out_signature);

/* The signature named `key`; NULL (or "") for subgraph 0's own entry point,
 * whose input and output names are its tensor names. Errors: NOT_FOUND,
 * the message listing the keys there are. */
GRAFT_APP_API graft_status_t* graft_model_find_signature(
    graft_model_t* model, const char* key, graft_signature_t** out_signature);

/* The signature's key; "" for subgraph 0's entry point. Borrowed. */
GRAFT_APP_API const char* graft_signature_key(const graft_signature_t* sig);

GRAFT_APP_API size_t graft_signature_input_count(const graft_signature_t* sig);
GRAFT_APP_API size_t graft_signature_output_count(const graft_signature_t* sig);

/* The index of the input / output named `name` (the signature's names, e.g.
 * "x", or tensor names for subgraph 0's entry point). Errors: NOT_FOUND,
 * the message listing the names there are. */
GRAFT_APP_API graft_status_t* graft_signature_find_input(
    const graft_signature_t* sig, const char* name, size_t* out_index);
GRAFT_APP_API graft_status_t* graft_signature_find_output(
    const graft_signature_t* sig, const char* name, size_t* out_index);

/* An input's or output's description, filled by the library. */
typedef struct graft_tensor_info_t {
  /* sizeof(graft_tensor_info_t) as the library was compiled. */
  size_t struct_size;
  /* The signature's name for it; never NULL. */
  const char* name;
  /* Its element type (TFLite's numbering, graft_common.h). */
  graft_element_type_t element_type;
  /* Explicit padding; zero. */
  int32_t reserved0;
  /* The current shape, outermost first (empty for a scalar). An output
   * whose shape depends on input values has its shape after the last
   * invoke. */
  const int64_t* dims;
  size_t num_dims;
  /* The model's declared shape: -1 marks a dimension that may be resized
   * (graft_signature_resize_input). Same count as dims. */
  const int64_t* dims_signature;
  /* The bytes of its data: what set_input and bind expect, what
   * get_*_buffer returns. STRING tensors are sized by their values. */
  size_t byte_size;
  /* NULL when the tensor is not quantized. */
  const graft_quantization_t* quantization;
} graft_tensor_info_t;

/* Describes input / output `index`.
 *   out_info  out: borrowed from the signature; valid until the next call
 *             of the same function for the same index, a resize, or
 *             graft_model_destroy.
 * Errors: OUT_OF_RANGE. */
GRAFT_APP_API graft_status_t* graft_signature_get_input_info(
    graft_signature_t* sig, size_t index, const graft_tensor_info_t** out_info);
GRAFT_APP_API graft_status_t* graft_signature_get_output_info(
    graft_signature_t* sig, size_t index, const graft_tensor_info_t** out_info);

/* Resizes input `index` to `dims` (TFLite's ResizeInputTensor): only
 * dimensions the model declares -1 may change, the rank may not. The entry
 * point is prepared again (kernels, memory plan): it allocates, so do it
 * before a series of invokes, not between them. On success every buffer,
 * info and binding of this signature (and of others running the same
 * subgraph) is reset: get and bind them again. On error nothing changes.
 * Errors: OUT_OF_RANGE, INVALID_ARGUMENT (a fixed dimension, another rank;
 * the message names the input). */
GRAFT_APP_API graft_status_t* graft_signature_resize_input(
    graft_signature_t* sig, size_t index, const int64_t* dims, size_t num_dims);

/* ------------------------------------------------------------------------ */
/* Running                                                                    */
/* ------------------------------------------------------------------------ */

/* Copies `size` bytes into input `index`: exactly its byte_size, in its
 * element type, row-major. (A STRING input takes TFLite's packed string
 * layout, one string per element.)
 * Errors: OUT_OF_RANGE, INVALID_ARGUMENT (another size). */
GRAFT_APP_API graft_status_t* graft_signature_set_input(graft_signature_t* sig,
                                                        size_t index,
                                                        const void* data,
                                                        size_t size);

/* Zero-copy input: the runtime's own buffer of input `index`, to be filled
 * in place.
 *   out_data  out: writable, aligned for the element type; borrowed, valid
 *             until a resize, a bind of this input or graft_model_destroy.
 *   out_size  out: its byte_size.
 * Errors: OUT_OF_RANGE. */
GRAFT_APP_API graft_status_t* graft_signature_get_input_buffer(
    graft_signature_t* sig, size_t index, void** out_data, size_t* out_size);

/* Zero-copy output: output `index` after a successful invoke, read in
 * place.
 *   out_data  out: read-only; borrowed, valid until the next invoke, resize,
 *             bind of this output or graft_model_destroy.
 *   out_size  out: its byte_size.
 * Errors: OUT_OF_RANGE. */
GRAFT_APP_API graft_status_t* graft_signature_get_output_buffer(
    graft_signature_t* sig, size_t index, const void** out_data,
    size_t* out_size);

/* Zero-copy with the caller's memory: the runtime reads input `index` from
 * / writes output `index` to `data` at every invoke, instead of its own
 * buffer. `data` must hold exactly the tensor's byte_size, be aligned to
 * its element size, and stay valid (the exception to ownership rule 3)
 * until rebound, a resize or graft_model_destroy. NULL (size 0) restores the
 * runtime's buffer. STRING tensors and outputs whose shape depends on input
 * values cannot be bound.
 * Errors: OUT_OF_RANGE, INVALID_ARGUMENT (size, alignment, type). */
GRAFT_APP_API graft_status_t* graft_signature_bind_input(graft_signature_t* sig,
                                                         size_t index,
                                                         void* data,
                                                         size_t size);
GRAFT_APP_API graft_status_t* graft_signature_bind_output(
    graft_signature_t* sig, size_t index, void* data, size_t size);

/* Runs the entry point once on the current inputs. Allocates nothing
 * (except for outputs whose shape depends on input values). Errors: a
 * vendor's failure (naming it), or a shape error of a value-dependent op;
 * the outputs are then unspecified. */
GRAFT_APP_API graft_status_t* graft_signature_invoke(graft_signature_t* sig);

/* ------------------------------------------------------------------------ */
/* What ran where, and how long it took                                       */
/* ------------------------------------------------------------------------ */

/* Where a loaded model's ops run, filled by the library. */
typedef struct graft_model_report_t {
  /* sizeof(graft_model_report_t) as the library was compiled. */
  size_t struct_size;
  /* Ops by where they run, over every prepared entry point and the
   * subgraphs they call: Graft's CPU kernels, computed once at load from
   * constants, a vendor's dispatch library, the CPU fallback of a dispatch
   * op, and call ops (whose callees' ops are counted too). */
  int64_t ops_cpu;
  int64_t ops_folded;
  int64_t ops_vendor;
  int64_t ops_fallback;
  int64_t ops_call;
  /* On-device compile: 1 when the model was compiled at load, and then
   * whether the cache held it. */
  int32_t compiled_on_device;
  int32_t compile_cache_hit;
  /* What the app should know (a dispatch op falling back to the CPU, a
   * vendor computing below the model's precision, a plugin that could not
   * load), one line each. */
  const char* const* warnings;
  size_t num_warnings;
  /* All of it as one JSON document: {"placement": {where: count},
   * "subgraphs": [{"subgraph", "name", "arena_bytes", "ops": [{"op",
   * "name", "where", "detail", "callee": [...]}]}], "warnings": [...],
   * "on_device_compile": {...} or null}. */
  const char* json;
} graft_model_report_t;

/* What ran where.
 *   out_report  out: borrowed from the model; valid until the next
 *               graft_model_get_report, a resize or graft_model_destroy. */
GRAFT_APP_API graft_status_t* graft_model_get_report(
    graft_model_t* model, const graft_model_report_t** out_report);

/* Per-op timings of the invokes since load or the last reset, filled by
 * the library. */
typedef struct graft_profile_t {
  /* sizeof(graft_profile_t) as the library was compiled. */
  size_t struct_size;
  /* Invokes timed, over all signatures, and their total wall time. */
  int64_t runs;
  int64_t total_ns;
  /* One JSON document: {"subgraphs": [{"subgraph", "name", "runs",
   * "total_ns", "median_ns", "ops": [{"subgraph", "op", "name", "where",
   * "detail", "depth", "calls", "total_ns", "median_ns",
   * "vendor_total_ns"}]}]} (vendor times -1 where the vendor reports none). */
  const char* json;
  /* The same as a table for people (graft run --profile's). */
  const char* text;
} graft_profile_t;

/* The profile of the invokes since load or graft_model_reset_profile.
 *   out_profile  out: borrowed from the model; valid until the next
 *                graft_model_get_profile or graft_model_destroy.
 * Errors: FAILED_PRECONDITION without GRAFT_MODEL_FLAG_PROFILING. */
GRAFT_APP_API graft_status_t* graft_model_get_profile(
    graft_model_t* model, const graft_profile_t** out_profile);

/* Drops the timings recorded so far (e.g. after warm-up invokes). */
GRAFT_APP_API void graft_model_reset_profile(graft_model_t* model);

/* ------------------------------------------------------------------------ */
/* Ahead-of-time compile                                                      */
/* ------------------------------------------------------------------------ */

/* What graft_apply produces. */
typedef int32_t graft_apply_mode_t;
enum graft_apply_mode_e {
  /* Partition, compile and embed: the compiled model. The default. */
  GRAFT_APPLY_MODE_APPLY = 0,
  /* Partition and outline only, no compiling: the per-op report, and a
   * model whose partitions run on the CPU. */
  GRAFT_APPLY_MODE_PARTITION = 1
};

/* How to compile. Extensible like graft_model_options_t: zero members take
 * the defaults written beside them. */
typedef struct graft_apply_options_t {
  /* sizeof(graft_apply_options_t) as the caller was compiled. */
  size_t struct_size;
  /* A GRAFT_APPLY_MODE_* value. */
  graft_apply_mode_t mode;
  /* Explicit padding; zero. */
  int32_t reserved0;
  /* Compiler plugin files (libgraft_compiler_plugin_<vendor>.so or LiteRT's
   * libLiteRtCompilerPlugin_<Vendor>.so); each must load. Empty: every
   * plugin in plugin_dir that loads. */
  const char* const* plugin_paths;
  size_t num_plugin_paths;
  /* The directory searched when plugin_paths is empty. NULL:
   * graft_default_vendor_dir(). */
  const char* plugin_dir;
  /* Vendor priority, highest first, as graft_model_options_t.vendors (and
   * `graft apply --vendor`): only these vendors' plugins, each must load. */
  const char* const* vendors;
  size_t num_vendors;
  /* "[VENDOR:]KEY=VALUE" options, one per entry, as `graft apply
   * --plugin-option`: without VENDOR for every plugin. */
  const char* const* plugin_options;
  size_t num_plugin_options;
  /* The SoC model to compile for. NULL: each plugin's first. */
  const char* soc_model;
} graft_apply_options_t;

/* Sets `options` to the defaults and its struct_size to the caller's
 * sizeof. */
static inline void graft_apply_options_init(graft_apply_options_t* options) {
  memset(options, 0, sizeof(*options));
  options->struct_size = sizeof(graft_apply_options_t);
}

/* What happened to one op of the input model. Frozen layout. */
typedef struct graft_apply_op_t {
  /* The op's subgraph and index in the input model. */
  int32_t subgraph;
  int32_t op;
  /* "CONV_2D", "CUSTOM:MyOp"; never NULL. */
  const char* name;
  /* The vendor that took it; "" when none did. */
  const char* taken_by;
  /* Its partition (0-based, in report order); -1 when not taken. */
  int32_t partition;
  /* Explicit padding; zero. */
  int32_t reserved0;
  /* Why each plugin that did not take it refused it, "vendor: REASON_CODE:
   * text" joined by "; "; "" when taken. */
  const char* refusals;
} graft_apply_op_t;

/* graft_apply's result, filled by the library; owned by the caller, who
 * releases it with graft_apply_report_destroy. */
typedef struct graft_apply_report_t {
  /* sizeof(graft_apply_report_t) as the library was compiled. */
  size_t struct_size;
  /* Ops of the input model, ops taken by a vendor, partitions, bytecode
   * modules and their total bytes. */
  int64_t ops_total;
  int64_t ops_taken;
  int64_t num_partitions;
  int64_t num_modules;
  int64_t bytecode_bytes;
  /* Wall time of the pipeline (partition to embed), in seconds. */
  double seconds;
  /* One entry per op of the input model. */
  const graft_apply_op_t* ops;
  size_t num_ops;
  /* Plugin files found in the directory that could not be loaded, with
   * why; the others compiled. One line each. */
  const char* const* skipped_plugins;
  size_t num_skipped_plugins;
  /* `graft apply`'s summary: "12/15 ops taken (80%) in 2 partitions; ...",
   * then the ops no vendor took, grouped by reason. */
  const char* summary;
  /* `graft apply --json`'s document: plugins, partitions, every op with its
   * refusals. */
  const char* json;
} graft_apply_report_t;

/* Compiles the model at `model_path` with vendor compiler plugins and
 * writes the result to `output_path` (atomically: on error nothing is
 * written), as `graft apply` does.
 *   options     in: NULL for the defaults.
 *   out_report  out: the report, owned by the caller
 *               (graft_apply_report_destroy); may be NULL when not wanted.
 * Errors: NOT_FOUND (the model, no usable plugin, a vendor not found),
 * INVALID_ARGUMENT (a malformed model or option), FAILED_PRECONDITION (the
 * model is already compiled), or a plugin's failure (naming the vendor). */
GRAFT_APP_API graft_status_t* graft_apply(const char* model_path,
                                          const char* output_path,
                                          const graft_apply_options_t* options,
                                          graft_apply_report_t** out_report);

/* Releases a report and everything it points to. NULL is a no-op. */
GRAFT_APP_API void graft_apply_report_destroy(graft_apply_report_t* report);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GRAFT_C_API_GRAFT_APP_H_ */
