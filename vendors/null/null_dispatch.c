/* The null dispatch library: the skeleton a new vendor copies.
 *
 * Every entry point of graft_dispatch.h is here. The ones that carry a
 * vendor's real work return UNIMPLEMENTED, through the host's table, with a
 * message naming the function; the rest (ABI version, create, destroy,
 * info) already work, so the host can load, list and unload this library.
 *
 * To start a vendor: copy this folder and rename "null" throughout, file
 * names included (README.md has the recipe), then fill in every
 * TODO(vendor) below: the info, check_compatibility, the device context and
 * the invocation functions (docs/vendor_guide/acme_dispatch.c is a small
 * one, vendors/example a full one). The optional async and profiling
 * functions are here so that the set is complete; delete the ones you do not
 * implement and leave their capability bits clear. Keep the argument checks: the ABI promises a
 * status, never a crash, for NULL arguments. */
#include <stdlib.h>

#include "graft_dispatch.h"

#define NULL_VENDOR "null"

struct graft_dispatch_t {
  /* Borrowed from create; valid until destroy. */
  const graft_host_api_t* host;
  graft_dispatch_info_t info;
};

/* TODO(vendor): your device handle. */
struct graft_dispatch_device_context_t {
  graft_dispatch_t* dispatch;
};

/* TODO(vendor): the prepared program and the attached buffers. */
struct graft_dispatch_invocation_t {
  const graft_host_api_t* host;
};

/* Statuses for the paths where no host table is reachable. */
static graft_status_t k_null_dispatch_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "null dispatch: dispatch is NULL");
static graft_status_t k_null_context_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "null dispatch: device context is NULL");
static graft_status_t k_null_invocation_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "null dispatch: invocation is NULL");
static graft_status_t k_null_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "null dispatch: host table is NULL");
static graft_status_t k_bad_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION,
    "null dispatch: host table is of another ABI major or too small");
static graft_status_t k_bad_create_args_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT,
    "null dispatch: create needs out_dispatch, and options when "
    "num_options > 0");
static graft_status_t k_out_of_memory_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_RESOURCE_EXHAUSTED, "null dispatch: out of memory");

static graft_status_t* null_unimplemented(const graft_host_api_t* host,
                                          const char* function) {
  return host->status_create_formatted(
      host, GRAFT_STATUS_UNIMPLEMENTED,
      "null dispatch: %s is not implemented; copy vendors/null and fill it in",
      function);
}

GRAFT_EXPORT uint32_t graft_dispatch_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out_dispatch) {
  graft_dispatch_t* dispatch;
  if (host == NULL) return &k_null_host_status;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      host->struct_size < sizeof(graft_host_api_t)) {
    return &k_bad_host_status;
  }
  if (out_dispatch == NULL || (options == NULL && num_options > 0)) {
    return &k_bad_create_args_status;
  }
  if (num_options > 0) {
    /* TODO(vendor): parse your options here (graft_vendor_helper.h) and
     * list them in info.options; the skeleton has none. */
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "null dispatch: unknown option '%s' (the null vendor takes none)",
        options[0].key != NULL ? options[0].key : "(NULL)");
  }
  dispatch = (graft_dispatch_t*)calloc(1, sizeof(*dispatch));
  if (dispatch == NULL) return &k_out_of_memory_status;
  dispatch->host = host;
  dispatch->info.struct_size = sizeof(dispatch->info);
  dispatch->info.abi_version = GRAFT_ABI_VERSION;
  /* TODO(vendor): who you are: the compiler plugin's vendor name, your
   * library version, the bytecode format versions you run, and
   * GRAFT_DISPATCH_CAPABILITY_* bits only for what works. */
  dispatch->info.capabilities = 0;
  dispatch->info.vendor = NULL_VENDOR;
  dispatch->info.library_version = "0.0.0";
  dispatch->info.build_id = "";
  dispatch->info.description =
      "skeleton dispatch library: every fallible entry is UNIMPLEMENTED";
  dispatch->info.hardware_kinds = GRAFT_HARDWARE_KIND_NPU;
  /* The null compiler plugin's bytecode_format_version. */
  dispatch->info.min_bytecode_format_version = 0;
  dispatch->info.max_bytecode_format_version = 0;
  dispatch->info.options = NULL;
  dispatch->info.num_options = 0;
  *out_dispatch = dispatch;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_destroy(graft_dispatch_t* dispatch) {
  free(dispatch);
}

GRAFT_EXPORT graft_status_t* graft_dispatch_get_info(
    const graft_dispatch_t* dispatch, const graft_dispatch_info_t** out_info) {
  if (dispatch == NULL) return &k_null_dispatch_status;
  if (out_info == NULL) {
    return dispatch->host->status_create(
        dispatch->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "null dispatch: get_info: out_info is NULL");
  }
  *out_info = &dispatch->info;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_check_compatibility(
    graft_dispatch_t* dispatch, const graft_compatibility_stamp_t* stamp) {
  if (dispatch == NULL) return &k_null_dispatch_status;
  if (stamp == NULL) {
    return dispatch->host->status_create(
        dispatch->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "null dispatch: check_compatibility: stamp is NULL");
  }
  /* TODO(vendor): compare stamp->vendor, bytecode_format_version and
   * soc_model with what you run, and say which differs. */
  return null_unimplemented(dispatch->host, "check_compatibility");
}

GRAFT_EXPORT graft_status_t* graft_dispatch_device_context_create(
    graft_dispatch_t* dispatch, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_device_context_t** out_context) {
  if (dispatch == NULL) return &k_null_dispatch_status;
  if (out_context == NULL || (options == NULL && num_options > 0)) {
    return dispatch->host->status_create(
        dispatch->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "null dispatch: device_context_create needs out_context, and options "
        "when num_options > 0");
  }
  /* TODO(vendor): open your device. */
  return null_unimplemented(dispatch->host, "device_context_create");
}

GRAFT_EXPORT void graft_dispatch_device_context_destroy(
    graft_dispatch_device_context_t* context) {
  free(context);
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_create(
    graft_dispatch_device_context_t* context,
    const graft_dispatch_invocation_desc_t* desc,
    graft_dispatch_invocation_t** out_invocation) {
  const graft_host_api_t* host;
  if (context == NULL) return &k_null_context_status;
  host = context->dispatch->host;
  if (desc == NULL || out_invocation == NULL) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "null dispatch: invocation_create needs desc "
                               "and out_invocation");
  }
  /* TODO(vendor): parse and validate desc->bytecode for desc->entry_point,
   * check the input and output counts, allocate: everything expensive
   * happens here, once. */
  return null_unimplemented(host, "invocation_create");
}

GRAFT_EXPORT void graft_dispatch_invocation_destroy(
    graft_dispatch_invocation_t* invocation) {
  free(invocation);
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_buffer_requirements(
    const graft_dispatch_invocation_t* invocation,
    graft_dispatch_io_kind_t kind, size_t index,
    graft_dispatch_buffer_requirements_t* out_requirements) {
  (void)kind;
  (void)index;
  if (invocation == NULL) return &k_null_invocation_status;
  if (out_requirements == NULL) {
    return invocation->host->status_create(
        invocation->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "null dispatch: get_buffer_requirements: out_requirements is NULL");
  }
  /* TODO(vendor): size, alignment and element type of input or output
   * `index`. */
  return null_unimplemented(invocation->host, "get_buffer_requirements");
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_attach_host_memory(
    graft_dispatch_invocation_t* invocation, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size) {
  (void)kind;
  (void)index;
  (void)data;
  (void)size;
  if (invocation == NULL) return &k_null_invocation_status;
  /* TODO(vendor): remember `data` for input or output `index`; no
   * allocation here. */
  return null_unimplemented(invocation->host, "attach_host_memory");
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke(
    graft_dispatch_invocation_t* invocation) {
  if (invocation == NULL) return &k_null_invocation_status;
  /* TODO(vendor): run the prepared program on the attached buffers. */
  return null_unimplemented(invocation->host, "invoke");
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke_async(
    graft_dispatch_invocation_t* invocation) {
  if (invocation == NULL) return &k_null_invocation_status;
  return null_unimplemented(invocation->host, "invoke_async");
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_wait(
    graft_dispatch_invocation_t* invocation, uint64_t timeout_ns) {
  (void)timeout_ns;
  if (invocation == NULL) return &k_null_invocation_status;
  return null_unimplemented(invocation->host, "wait");
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_profile(
    const graft_dispatch_invocation_t* invocation,
    const graft_dispatch_profile_event_t** out_events, size_t* out_num_events) {
  if (invocation == NULL) return &k_null_invocation_status;
  if (out_events == NULL || out_num_events == NULL) {
    return invocation->host->status_create(
        invocation->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "null dispatch: get_profile: out_events and out_num_events are "
        "required");
  }
  return null_unimplemented(invocation->host, "get_profile");
}
