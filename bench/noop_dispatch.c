/* A dispatch library that does nothing, for measuring what the host costs
 * per dispatch op (bench/dispatch_bench.cc). Bench-only: it is built into
 * <build>/bench/, never into vendor_libs/, and runs no model meaningfully.
 *
 * Vendor "bench_noop". Its "bytecode" is the decimal element count of every
 * input and output, all FLOAT32 (e.g. "16"); any entry point is accepted.
 * Attaching stores nothing but the fact; invoke checks that everything was
 * attached once and returns. Links the c_api headers only. */
#include <stdlib.h>

#include "graft_dispatch.h"

struct graft_dispatch_t {
  const graft_host_api_t* host;
  graft_dispatch_info_t info;
};

struct graft_dispatch_device_context_t {
  graft_dispatch_t* dispatch;
};

struct graft_dispatch_invocation_t {
  const graft_host_api_t* host;
  size_t num_inputs;
  size_t num_outputs;
  size_t elements;
  /* Inputs and outputs not attached yet; invoke refuses to run before all
   * are. `attached` has num_inputs + num_outputs flags. */
  size_t unattached;
  unsigned char* attached;
};

static graft_status_t k_null_argument_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "bench_noop dispatch: NULL argument");
static graft_status_t k_bad_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION,
    "bench_noop dispatch: host table is of another ABI major or too small");
static graft_status_t k_out_of_memory_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_RESOURCE_EXHAUSTED, "bench_noop dispatch: out of memory");

GRAFT_EXPORT uint32_t graft_dispatch_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out_dispatch) {
  graft_dispatch_t* dispatch;
  if (host == NULL || out_dispatch == NULL) return &k_null_argument_status;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      host->struct_size < sizeof(graft_host_api_t)) {
    return &k_bad_host_status;
  }
  if (num_options > 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "bench_noop dispatch: unknown option '%s' (it takes none)",
        options != NULL && options[0].key != NULL ? options[0].key : "");
  }
  dispatch = (graft_dispatch_t*)calloc(1, sizeof(*dispatch));
  if (dispatch == NULL) return &k_out_of_memory_status;
  dispatch->host = host;
  dispatch->info.struct_size = sizeof(dispatch->info);
  dispatch->info.abi_version = GRAFT_ABI_VERSION;
  dispatch->info.vendor = "bench_noop";
  dispatch->info.library_version = "1.0.0";
  dispatch->info.build_id = "";
  dispatch->info.description = "does nothing, for overhead benchmarks";
  dispatch->info.hardware_kinds = GRAFT_HARDWARE_KIND_NPU;
  dispatch->info.min_bytecode_format_version = 1;
  dispatch->info.max_bytecode_format_version = 1;
  *out_dispatch = dispatch;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_destroy(graft_dispatch_t* dispatch) {
  free(dispatch);
}

GRAFT_EXPORT graft_status_t* graft_dispatch_get_info(
    const graft_dispatch_t* dispatch, const graft_dispatch_info_t** out_info) {
  if (dispatch == NULL || out_info == NULL) return &k_null_argument_status;
  *out_info = &dispatch->info;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_check_compatibility(
    graft_dispatch_t* dispatch, const graft_compatibility_stamp_t* stamp) {
  if (dispatch == NULL || stamp == NULL) return &k_null_argument_status;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_device_context_create(
    graft_dispatch_t* dispatch, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_device_context_t** out_context) {
  graft_dispatch_device_context_t* context;
  (void)options;
  if (dispatch == NULL || out_context == NULL) return &k_null_argument_status;
  if (num_options > 0) {
    return dispatch->host->status_create(
        dispatch->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "bench_noop dispatch: device contexts take no options");
  }
  context = (graft_dispatch_device_context_t*)calloc(1, sizeof(*context));
  if (context == NULL) return &k_out_of_memory_status;
  context->dispatch = dispatch;
  *out_context = context;
  return NULL;
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
  graft_dispatch_invocation_t* invocation;
  size_t elements = 0, i;
  if (context == NULL || desc == NULL || out_invocation == NULL) {
    return &k_null_argument_status;
  }
  host = context->dispatch->host;
  for (i = 0; i < desc->bytecode.size; ++i) {
    const unsigned char c = desc->bytecode.data[i];
    if (c < '0' || c > '9' || elements > ((size_t)-1 - 9) / 10) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "bench_noop dispatch: bytecode byte %zu: expected a decimal "
          "element count",
          i);
    }
    elements = elements * 10 + (size_t)(c - '0');
  }
  invocation = (graft_dispatch_invocation_t*)calloc(1, sizeof(*invocation));
  if (invocation == NULL) return &k_out_of_memory_status;
  invocation->attached =
      (unsigned char*)calloc(desc->num_inputs + desc->num_outputs + 1, 1);
  if (invocation->attached == NULL) {
    free(invocation);
    return &k_out_of_memory_status;
  }
  invocation->host = host;
  invocation->num_inputs = desc->num_inputs;
  invocation->num_outputs = desc->num_outputs;
  invocation->elements = elements;
  invocation->unattached = desc->num_inputs + desc->num_outputs;
  *out_invocation = invocation;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_invocation_destroy(
    graft_dispatch_invocation_t* invocation) {
  if (invocation == NULL) return;
  free(invocation->attached);
  free(invocation);
}

/* The slot of input or output `index`, or -1 when out of range. */
static long slot_of(const graft_dispatch_invocation_t* invocation,
                    graft_dispatch_io_kind_t kind, size_t index) {
  if (kind == GRAFT_DISPATCH_IO_KIND_INPUT && index < invocation->num_inputs) {
    return (long)index;
  }
  if (kind == GRAFT_DISPATCH_IO_KIND_OUTPUT &&
      index < invocation->num_outputs) {
    return (long)(invocation->num_inputs + index);
  }
  return -1;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_buffer_requirements(
    const graft_dispatch_invocation_t* invocation,
    graft_dispatch_io_kind_t kind, size_t index,
    graft_dispatch_buffer_requirements_t* out_requirements) {
  if (invocation == NULL || out_requirements == NULL) {
    return &k_null_argument_status;
  }
  if (slot_of(invocation, kind, index) < 0 ||
      out_requirements->struct_size <
          sizeof(graft_dispatch_buffer_requirements_t)) {
    return invocation->host->status_create(
        invocation->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "bench_noop dispatch: get_buffer_requirements: bad kind, index or "
        "struct size");
  }
  out_requirements->size = invocation->elements * sizeof(float);
  out_requirements->alignment = sizeof(float);
  out_requirements->element_type = GRAFT_ELEMENT_TYPE_FLOAT32;
  out_requirements->reserved0 = 0;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_attach_host_memory(
    graft_dispatch_invocation_t* invocation, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size) {
  long slot;
  if (invocation == NULL) return &k_null_argument_status;
  slot = slot_of(invocation, kind, index);
  if (slot < 0 || size < invocation->elements * sizeof(float) ||
      (data == NULL && size > 0)) {
    return invocation->host->status_create(
        invocation->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "bench_noop dispatch: attach_host_memory: bad kind, index, data or "
        "size");
  }
  if (!invocation->attached[slot]) {
    invocation->attached[slot] = 1;
    --invocation->unattached;
  }
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke(
    graft_dispatch_invocation_t* invocation) {
  if (invocation == NULL) return &k_null_argument_status;
  if (invocation->unattached > 0) {
    return invocation->host->status_create(
        invocation->host, GRAFT_STATUS_FAILED_PRECONDITION,
        "bench_noop dispatch: invoke before every input and output was "
        "attached");
  }
  return NULL;
}
