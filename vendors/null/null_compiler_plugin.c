/* The null compiler plugin: the skeleton a new vendor copies.
 *
 * Every entry point of graft_compiler_plugin.h is here. The ones that carry
 * a vendor's real work return UNIMPLEMENTED, through the host's table, with a
 * message naming the function; the rest (ABI version, create, destroy,
 * info) already work, so the host can load, list and unload this library.
 *
 * To start a vendor: copy this folder and rename "null" throughout, file
 * names included (README.md has the recipe), then fill in every
 * TODO(vendor) below: the info, partition, compile and its result
 * (docs/vendor_guide.md walks through a small one, vendors/example a full
 * one). Keep the argument checks: the ABI promises a status, never a crash,
 * for NULL arguments. */
#include <stdlib.h>

#include "graft_compiler_plugin.h"

#define NULL_VENDOR "null"

struct graft_compiler_plugin_t {
  /* Borrowed from create; valid until destroy. */
  const graft_host_api_t* host;
  /* TODO(vendor): your compiler's state: parsed options, reason strings of
   * the last partition call (they must live until the next one). */
  graft_compiler_plugin_info_t info;
};

/* TODO(vendor): the SoC models you compile for; the first is the default. */
static const char* const k_soc_models[] = {"null-soc"};

/* Statuses for the paths where no host table is reachable. */
static graft_status_t k_null_plugin_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "null vendor: plugin is NULL");
static graft_status_t k_null_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "null vendor: host table is NULL");
static graft_status_t k_bad_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION,
    "null vendor: host table is of another ABI major or too small");
static graft_status_t k_bad_create_args_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT,
    "null vendor: create needs out_plugin, and options when num_options > 0");
static graft_status_t k_out_of_memory_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_RESOURCE_EXHAUSTED, "null vendor: out of memory");

static graft_status_t* null_error(const graft_compiler_plugin_t* plugin,
                                  graft_status_code_t code,
                                  const char* message) {
  return plugin->host->status_create(plugin->host, code, message);
}

GRAFT_EXPORT uint32_t graft_compiler_plugin_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin) {
  graft_compiler_plugin_t* plugin;
  if (host == NULL) return &k_null_host_status;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      host->struct_size < sizeof(graft_host_api_t)) {
    return &k_bad_host_status;
  }
  if (out_plugin == NULL || (options == NULL && num_options > 0)) {
    return &k_bad_create_args_status;
  }
  if (num_options > 0) {
    /* TODO(vendor): parse your options here (graft_vendor_helper.h's
     * graft_vendor_check_options and graft_vendor_option_int do the work)
     * and list them in info.options; the skeleton has none. */
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "null vendor: unknown option '%s' (the null vendor takes none)",
        options[0].key != NULL ? options[0].key : "(NULL)");
  }
  plugin = (graft_compiler_plugin_t*)calloc(1, sizeof(*plugin));
  if (plugin == NULL) return &k_out_of_memory_status;
  plugin->host = host;
  plugin->info.struct_size = sizeof(plugin->info);
  plugin->info.abi_version = GRAFT_ABI_VERSION;
  plugin->info.flags = 0;
  /* TODO(vendor): who you are. The vendor name ([a-z0-9_]+) is shared with
   * your dispatch library and recorded in every compiled model; change
   * plugin_version whenever your bytecode changes. */
  plugin->info.vendor = NULL_VENDOR;
  plugin->info.plugin_version = "0.0.0";
  plugin->info.description =
      "skeleton compiler plugin: every fallible entry is UNIMPLEMENTED";
  plugin->info.soc_models = k_soc_models;
  plugin->info.num_soc_models = sizeof(k_soc_models) / sizeof(k_soc_models[0]);
  plugin->info.hardware_kinds = GRAFT_HARDWARE_KIND_NPU;
  plugin->info.bytecode_format_version = 0;
  plugin->info.options = NULL;
  plugin->info.num_options = 0;
  *out_plugin = plugin;
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_destroy(
    graft_compiler_plugin_t* plugin) {
  free(plugin);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_get_info(
    const graft_compiler_plugin_t* plugin,
    const graft_compiler_plugin_info_t** out_info) {
  if (plugin == NULL) return &k_null_plugin_status;
  if (out_info == NULL) {
    return null_error(plugin, GRAFT_STATUS_INVALID_ARGUMENT,
                      "null vendor: get_info: out_info is NULL");
  }
  *out_info = &plugin->info;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_check_compatibility(
    graft_compiler_plugin_t* plugin, const char* soc_model) {
  if (plugin == NULL) return &k_null_plugin_status;
  if (soc_model == NULL) {
    return null_error(plugin, GRAFT_STATUS_INVALID_ARGUMENT,
                      "null vendor: check_compatibility: soc_model is NULL");
  }
  /* TODO(vendor): can this SoC model be built here (a toolchain present)?
   * Or delete this function: the host then accepts your listed models. */
  return null_error(plugin, GRAFT_STATUS_UNIMPLEMENTED,
                    "null vendor: check_compatibility is not implemented; "
                    "copy vendors/null and fill it in");
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_partition(
    graft_compiler_plugin_t* plugin, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out_result) {
  if (plugin == NULL) return &k_null_plugin_status;
  if (graph == NULL || soc_model == NULL || out_result == NULL) {
    return null_error(
        plugin, GRAFT_STATUS_INVALID_ARGUMENT,
        "null vendor: partition: graph, soc_model and out_result are "
        "required");
  }
  /* TODO(vendor): for each op of graph, out_result->decisions[i]: taken
   * with a group id, or a reason code and one line of text. */
  return null_error(plugin, GRAFT_STATUS_UNIMPLEMENTED,
                    "null vendor: partition is not implemented; copy "
                    "vendors/null and fill it in");
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_compile(
    graft_compiler_plugin_t* plugin, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t num_partitions,
    graft_compiled_result_t** out_result) {
  if (plugin == NULL) return &k_null_plugin_status;
  if (soc_model == NULL || partitions == NULL || num_partitions == 0 ||
      out_result == NULL) {
    return null_error(
        plugin, GRAFT_STATUS_INVALID_ARGUMENT,
        "null vendor: compile: soc_model, partitions (at least one) and "
        "out_result are required");
  }
  /* TODO(vendor): compile each partition view into a module; fill a
   * graft_compiled_result_t with modules, one call per partition and a
   * stamp with every field set (vendor, plugin version, SoC model, ABI and
   * bytecode format versions). Deterministic: same input, same bytes. */
  return null_error(plugin, GRAFT_STATUS_UNIMPLEMENTED,
                    "null vendor: compile is not implemented; copy "
                    "vendors/null and fill it in");
}

GRAFT_EXPORT void graft_compiler_plugin_compiled_result_destroy(
    graft_compiled_result_t* result) {
  /* TODO(vendor): free what compile allocated for `result`. The skeleton's
   * compile never produces one, so there is nothing to free. */
  (void)result;
}
