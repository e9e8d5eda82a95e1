/* The example dispatch library: the teaching vendor's run time.
 *
 * A small virtual accelerator. At invocation creation it has one entry
 * point of the example compiler plugin's text bytecode (BYTECODE.md)
 * parsed and validated completely (example_dispatch_parse.c: declarations,
 * data flow, shapes, constant data) into a flat instruction list over a
 * table of tensor slots, and lays out their storage; malformed bytecode is
 * an INVALID_ARGUMENT status naming the line, never a crash. At invoke it
 * runs that list on the attached host memory. This file holds the storage
 * layout, the running and the exported functions.
 *
 * The arithmetic uses exactly the formulas of Graft's CPU kernels
 * (dispatch/kernels/): the same operation order, 1 / (1 + expf(-x)) for
 * logistic, tanhf, fully connected accumulated in float from the bias in
 * input order, activations as min(max(v, lo), hi) with NaN passing through,
 * so both paths agree to the last bit on the same libm.
 *
 * Written against the C headers only (no Graft library), in plain C99 plus
 * POSIX clock_gettime for profiling, the way a vendor would. Memory comes
 * from the host's allocator; invoke allocates nothing. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example_dispatch_internal.h"

#define EXD_LIBRARY_VERSION "1.0.0"
/* The default device is the newest SoC model (exb_soc_models), which runs
 * bytecode for every model. */
#define EXD_DEFAULT_SOC 1

static const graft_option_info_t k_options[] = {
    {"soc_model", "example-soc-2",
     "the SoC model the virtual device is: example-soc-2 runs bytecode for "
     "example-soc-1 and example-soc-2, example-soc-1 only its own"},
};

/* Statuses for the paths where no host table is reachable. */
static graft_status_t k_null_dispatch_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "example dispatch: dispatch is NULL");
static graft_status_t k_null_context_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "example dispatch: device context is NULL");
static graft_status_t k_null_invocation_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "example dispatch: invocation is NULL");
static graft_status_t k_null_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "example dispatch: host table is NULL");
static graft_status_t k_bad_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION,
    "example dispatch: host table is of another ABI major or too small");
static graft_status_t k_bad_create_args_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT,
    "example dispatch: create needs out_dispatch, and options when "
    "num_options > 0");

static uint64_t exd_now_ns(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 0;
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* Storage                                                                    */
/* ------------------------------------------------------------------------ */

static void exd_invocation_free(graft_dispatch_invocation_t* inv) {
  const graft_host_api_t* host = inv->host;
  size_t i;
  for (i = 0; i < inv->num_tensors; ++i) {
    exd_free(host, inv->tensors[i].values);
  }
  graft_status_release(inv->async_status);
  exd_free(host, inv->tensors);
  exd_free(host, inv->by_id);
  exd_free(host, inv->instrs);
  exd_free(host, inv->inputs);
  exd_free(host, inv->outputs);
  exd_free(host, inv->output_in_place);
  exd_free(host, inv->slots);
  exd_free(host, inv->output_buffers);
  exd_free(host, inv->attached);
  exd_free(host, inv->arena);
  exd_free(host, inv->events);
  exd_free(host, inv);
}

/* Lays out storage once the entry is parsed: intermediates in one arena,
 * outputs written in place where possible, slot and attachment tables. */
static graft_status_t* exd_plan(graft_dispatch_invocation_t* inv) {
  const graft_host_api_t* host = inv->host;
  const size_t num_io = inv->num_inputs + inv->num_outputs;
  size_t arena_bytes = 0, i;
  inv->slots = (float**)exd_alloc(host, inv->num_tensors * sizeof(float*), 0);
  inv->output_buffers =
      (float**)exd_alloc(host, inv->num_outputs * sizeof(float*), 0);
  inv->output_in_place = (unsigned char*)exd_alloc(host, inv->num_outputs, 0);
  inv->attached = (unsigned char*)exd_alloc(host, num_io, 0);
  if (inv->slots == NULL || inv->output_buffers == NULL ||
      inv->output_in_place == NULL || inv->attached == NULL) {
    return exd_out_of_memory(host);
  }
  memset(inv->slots, 0, inv->num_tensors * sizeof(float*));
  memset(inv->output_buffers, 0, inv->num_outputs * sizeof(float*));
  memset(inv->attached, 0, num_io);
  inv->num_unattached = num_io;
  /* The first output naming a written tensor receives it in place; inputs
   * and repeated outputs are copied after the run. */
  inv->num_copies = 0;
  for (i = 0; i < inv->num_outputs; ++i) {
    exd_tensor_t* tensor = &inv->tensors[inv->outputs[i]];
    inv->output_in_place[i] = 0;
    if (tensor->role == EXD_ROLE_TENSOR && !tensor->in_output) {
      tensor->in_output = 1;
      inv->output_in_place[i] = 1;
    } else {
      ++inv->num_copies;
    }
  }
  for (i = 0; i < inv->num_tensors; ++i) {
    exd_tensor_t* tensor = &inv->tensors[i];
    size_t bytes;
    if (tensor->role == EXD_ROLE_CONST) {
      /* Constants are never written (only 'tensor's are destinations). */
      inv->slots[i] =
          tensor->in_place != NULL ? (float*)tensor->in_place : tensor->values;
      continue;
    }
    if (tensor->role != EXD_ROLE_TENSOR || tensor->written_line == 0 ||
        tensor->in_output) {
      continue;
    }
    bytes = (tensor->numel * sizeof(float) + EXD_ARENA_ALIGNMENT - 1) /
            EXD_ARENA_ALIGNMENT * EXD_ARENA_ALIGNMENT;
    if (bytes > EXD_MAX_ARENA_BYTES - arena_bytes) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
          "example dispatch: intermediate values need more than the device's "
          "%zu bytes",
          (size_t)EXD_MAX_ARENA_BYTES);
    }
    tensor->arena_offset = arena_bytes;
    arena_bytes += bytes;
  }
  if (arena_bytes > 0) {
    inv->arena = exd_alloc(host, arena_bytes, EXD_ARENA_ALIGNMENT);
    if (inv->arena == NULL) return exd_out_of_memory(host);
    for (i = 0; i < inv->num_tensors; ++i) {
      exd_tensor_t* tensor = &inv->tensors[i];
      if (tensor->role == EXD_ROLE_TENSOR && tensor->written_line != 0 &&
          !tensor->in_output) {
        inv->slots[i] =
            (float*)(void*)((unsigned char*)inv->arena + tensor->arena_offset);
      }
    }
  }
  if (inv->profiling) {
    size_t count = inv->num_instrs + (inv->num_copies > 0 ? 1 : 0);
    if (count > 0) {
      inv->events = (graft_dispatch_profile_event_t*)exd_alloc(
          host, count * sizeof(graft_dispatch_profile_event_t), 0);
      if (inv->events == NULL) return exd_out_of_memory(host);
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Running                                                                    */
/* ------------------------------------------------------------------------ */

/* std::max / std::min as Graft's CPU kernels use them: a NaN first
 * argument is returned unchanged. */
static float exd_max(float a, float b) { return a < b ? b : a; }
static float exd_min(float a, float b) { return b < a ? b : a; }

static float exd_activate(float v, exb_act_t act) {
  switch (act) {
    case EXB_ACT_NONE:
      return v;
    case EXB_ACT_RELU:
      return exd_max(v, 0.0f);
    case EXB_ACT_RELU6:
      return exd_min(exd_max(v, 0.0f), 6.0f);
  }
  return v;
}

/* d[i] = act(EXPR(a[i mod n_a], b[i mod n_b])), with x and y the operands.
 * The running indices avoid a division per element. */
#define EXD_BINARY_LOOP(EXPR)             \
  do {                                    \
    size_t i_, ia_ = 0, ib_ = 0;          \
    for (i_ = 0; i_ < n; ++i_) {          \
      const float x = a[ia_], y = b[ib_]; \
      d[i_] = exd_activate((EXPR), act);  \
      if (++ia_ == n_a) ia_ = 0;          \
      if (++ib_ == n_b) ib_ = 0;          \
    }                                     \
  } while (0)

static void exd_run_instruction(const exd_instr_t* instr, float* const* slots) {
  float* d = slots[instr->dest];
  const float* a = slots[instr->a];
  const size_t n = instr->n;
  const exb_act_t act = instr->act;
  size_t i;
  switch (instr->op) {
    case EXB_OP_ADD:
    case EXB_OP_SUB:
    case EXB_OP_MUL:
    case EXB_OP_DIV: {
      const float* b = slots[instr->b];
      const size_t n_a = instr->n_a, n_b = instr->n_b;
      if (instr->op == EXB_OP_ADD) EXD_BINARY_LOOP(x + y);
      if (instr->op == EXB_OP_SUB) EXD_BINARY_LOOP(x - y);
      if (instr->op == EXB_OP_MUL) EXD_BINARY_LOOP(x * y);
      if (instr->op == EXB_OP_DIV) EXD_BINARY_LOOP(x / y);
      break;
    }
    case EXB_OP_RELU:
      for (i = 0; i < n; ++i) d[i] = exd_max(a[i], 0.0f);
      break;
    case EXB_OP_RELU6:
      for (i = 0; i < n; ++i) d[i] = exd_min(exd_max(a[i], 0.0f), 6.0f);
      break;
    case EXB_OP_LOGISTIC:
      for (i = 0; i < n; ++i) d[i] = 1.0f / (1.0f + expf(-a[i]));
      break;
    case EXB_OP_TANH:
      for (i = 0; i < n; ++i) d[i] = tanhf(a[i]);
      break;
    case EXB_OP_FULLY_CONNECTED: {
      const float* w = slots[instr->b];
      const float* bias =
          instr->bias != EXD_NO_TENSOR ? slots[instr->bias] : NULL;
      const size_t units = instr->units, depth = instr->depth;
      size_t row, u, k;
      for (row = 0; row < instr->batch; ++row) {
        const float* x = a + row * depth;
        for (u = 0; u < units; ++u) {
          const float* wu = w + u * depth;
          /* From the bias, in input order, in float: as the CPU GEMM. */
          float sum = bias != NULL ? bias[u] : 0.0f;
          for (k = 0; k < depth; ++k) sum += wu[k] * x[k];
          d[row * units + u] = exd_activate(sum, act);
        }
      }
      break;
    }
  }
}

/* NULL when every input and output is attached and no async run is in
 * flight; else FAILED_PRECONDITION naming what is missing. */
static graft_status_t* exd_check_ready(const graft_dispatch_invocation_t* inv) {
  const graft_host_api_t* host = inv->host;
  size_t i;
  if (inv->in_flight) {
    return host->status_create(host, GRAFT_STATUS_FAILED_PRECONDITION,
                               "example dispatch: a run started with "
                               "invoke_async has not been waited for");
  }
  if (inv->num_unattached == 0) return NULL;
  for (i = 0; i < inv->num_inputs + inv->num_outputs; ++i) {
    if (!inv->attached[i]) break;
  }
  return host->status_create_formatted(
      host, GRAFT_STATUS_FAILED_PRECONDITION,
      "example dispatch: %s %zu is not attached (attach every input and "
      "output before invoke)",
      i < inv->num_inputs ? "input" : "output",
      i < inv->num_inputs ? i : i - inv->num_inputs);
}

static void exd_run(graft_dispatch_invocation_t* inv) {
  size_t i, event = 0;
  for (i = 0; i < inv->num_instrs; ++i) {
    if (inv->profiling) {
      inv->events[event].name = inv->instrs[i].name;
      inv->events[event].vendor_location = inv->instrs[i].line;
      inv->events[event].start_ns = exd_now_ns();
    }
    exd_run_instruction(&inv->instrs[i], inv->slots);
    if (inv->profiling) inv->events[event++].end_ns = exd_now_ns();
  }
  if (inv->num_copies > 0) {
    if (inv->profiling) {
      inv->events[event].name = "copy outputs";
      inv->events[event].vendor_location = 0;
      inv->events[event].start_ns = exd_now_ns();
    }
    for (i = 0; i < inv->num_outputs; ++i) {
      const float* source = inv->slots[inv->outputs[i]];
      size_t bytes = inv->tensors[inv->outputs[i]].numel * sizeof(float);
      if (inv->output_in_place[i] || bytes == 0) continue;
      /* memmove: a host may pass the same buffer for an input and the
       * output that copies it. */
      memmove(inv->output_buffers[i], source, bytes);
    }
    if (inv->profiling) inv->events[event++].end_ns = exd_now_ns();
  }
  inv->num_events = event;
}

/* ------------------------------------------------------------------------ */
/* Exported: library                                                          */
/* ------------------------------------------------------------------------ */

GRAFT_EXPORT uint32_t graft_dispatch_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out_dispatch) {
  graft_dispatch_t* dispatch;
  size_t device_soc = EXD_DEFAULT_SOC, i;
  if (host == NULL) return &k_null_host_status;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      host->struct_size < sizeof(graft_host_api_t)) {
    return &k_bad_host_status;
  }
  if (out_dispatch == NULL || (options == NULL && num_options > 0)) {
    return &k_bad_create_args_status;
  }
  for (i = 0; i < num_options; ++i) {
    const char* key = options[i].key;
    const char* value = options[i].value;
    if (key == NULL || value == NULL) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example dispatch: option %zu has a NULL key or value", i);
    }
    if (strcmp(key, "soc_model") == 0) {
      int soc = exd_find_soc(value, strlen(value));
      if (soc < 0) {
        return host->status_create_formatted(
            host, GRAFT_STATUS_INVALID_ARGUMENT,
            "example dispatch: option soc_model must be example-soc-1 or "
            "example-soc-2, got '%s'",
            value);
      }
      device_soc = (size_t)soc;
    } else {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example dispatch: unknown option '%s' (known: soc_model)", key);
    }
  }
  dispatch = (graft_dispatch_t*)exd_alloc(host, sizeof(*dispatch), 0);
  if (dispatch == NULL) return exd_out_of_memory(host);
  memset(dispatch, 0, sizeof(*dispatch));
  dispatch->host = host;
  dispatch->device_soc = device_soc;
  dispatch->info.struct_size = sizeof(dispatch->info);
  dispatch->info.abi_version = GRAFT_ABI_VERSION;
  dispatch->info.capabilities =
      GRAFT_DISPATCH_CAPABILITY_ASYNC | GRAFT_DISPATCH_CAPABILITY_PROFILING;
  dispatch->info.vendor = EXB_VENDOR;
  dispatch->info.library_version = EXD_LIBRARY_VERSION;
  dispatch->info.build_id = "example-dispatch-" EXD_LIBRARY_VERSION "-c99";
  dispatch->info.description =
      "teaching vendor: interprets the example text bytecode on host memory";
  dispatch->info.hardware_kinds = GRAFT_HARDWARE_KIND_CPU;
  dispatch->info.min_bytecode_format_version = EXB_FORMAT_VERSION;
  dispatch->info.max_bytecode_format_version = EXB_FORMAT_VERSION;
  dispatch->info.options = k_options;
  dispatch->info.num_options = sizeof(k_options) / sizeof(k_options[0]);
  *out_dispatch = dispatch;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_destroy(graft_dispatch_t* dispatch) {
  if (dispatch == NULL) return;
  exd_free(dispatch->host, dispatch);
}

GRAFT_EXPORT graft_status_t* graft_dispatch_get_info(
    const graft_dispatch_t* dispatch, const graft_dispatch_info_t** out_info) {
  if (dispatch == NULL) return &k_null_dispatch_status;
  if (out_info == NULL) {
    return dispatch->host->status_create(
        dispatch->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: get_info: out_info is NULL");
  }
  *out_info = &dispatch->info;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_check_compatibility(
    graft_dispatch_t* dispatch, const graft_compatibility_stamp_t* stamp) {
  const graft_host_api_t* host;
  if (dispatch == NULL) return &k_null_dispatch_status;
  host = dispatch->host;
  if (stamp == NULL ||
      !GRAFT_STRUCT_HAS_MEMBER(stamp, graft_compatibility_stamp_t, soc_model) ||
      stamp->vendor == NULL || stamp->soc_model == NULL) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: check_compatibility: the "
                               "stamp is NULL, truncated or has NULL strings");
  }
  if (strcmp(stamp->vendor, EXB_VENDOR) != 0) {
    char vendor[72];
    exd_excerpt(stamp->vendor, strlen(stamp->vendor), vendor, sizeof(vendor));
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "example dispatch: bytecode is for vendor '%s', not 'example'; it "
        "needs that vendor's libgraft_dispatch_%s.so",
        vendor, vendor);
  }
  if (GRAFT_ABI_VERSION_GET_MAJOR(stamp->abi_version) !=
      GRAFT_ABI_VERSION_MAJOR) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "example dispatch: bytecode was made by a compiler plugin of ABI "
        "%u.%u; this library runs bytecode of ABI %u.x plugins",
        (unsigned)GRAFT_ABI_VERSION_GET_MAJOR(stamp->abi_version),
        (unsigned)GRAFT_ABI_VERSION_GET_MINOR(stamp->abi_version),
        (unsigned)GRAFT_ABI_VERSION_MAJOR);
  }
  if (stamp->bytecode_format_version <
          dispatch->info.min_bytecode_format_version ||
      stamp->bytecode_format_version >
          dispatch->info.max_bytecode_format_version) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "example dispatch: bytecode format version %u not supported (this "
        "library runs %u to %u); recompile the model with an example plugin "
        "that emits it, or update the dispatch library",
        (unsigned)stamp->bytecode_format_version,
        (unsigned)dispatch->info.min_bytecode_format_version,
        (unsigned)dispatch->info.max_bytecode_format_version);
  }
  return exd_check_soc(dispatch, stamp->soc_model, strlen(stamp->soc_model));
}

GRAFT_EXPORT graft_status_t* graft_dispatch_device_context_create(
    graft_dispatch_t* dispatch, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_device_context_t** out_context) {
  const graft_host_api_t* host;
  graft_dispatch_device_context_t* context;
  if (dispatch == NULL) return &k_null_dispatch_status;
  host = dispatch->host;
  if (out_context == NULL || (options == NULL && num_options > 0)) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: device_context_create needs "
                               "out_context, and options when num_options > 0");
  }
  if (num_options > 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: unknown device context option '%s' (the example "
        "device takes none)",
        options[0].key != NULL ? options[0].key : "(NULL)");
  }
  context =
      (graft_dispatch_device_context_t*)exd_alloc(host, sizeof(*context), 0);
  if (context == NULL) return exd_out_of_memory(host);
  context->dispatch = dispatch;
  *out_context = context;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_device_context_destroy(
    graft_dispatch_device_context_t* context) {
  if (context == NULL) return;
  exd_free(context->dispatch->host, context);
}

/* ------------------------------------------------------------------------ */
/* Exported: invocations                                                      */
/* ------------------------------------------------------------------------ */

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_create(
    graft_dispatch_device_context_t* context,
    const graft_dispatch_invocation_desc_t* desc,
    graft_dispatch_invocation_t** out_invocation) {
  const graft_host_api_t* host;
  graft_dispatch_invocation_t* inv;
  graft_status_t* status;
  if (context == NULL) return &k_null_context_status;
  host = context->dispatch->host;
  if (desc == NULL || out_invocation == NULL ||
      !GRAFT_STRUCT_HAS_MEMBER(desc, graft_dispatch_invocation_desc_t, flags) ||
      desc->entry_point == NULL) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: invocation_create needs a "
                               "complete desc with an entry point, and "
                               "out_invocation");
  }
  if (desc->bytecode.data == NULL || desc->bytecode.size == 0) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: invocation_create: the "
                               "bytecode is empty");
  }
  if (desc->model.data != NULL &&
      (desc->bytecode.data < desc->model.data ||
       desc->bytecode.size > desc->model.size ||
       (size_t)(desc->bytecode.data - desc->model.data) >
           desc->model.size - desc->bytecode.size)) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: invocation_create: the "
                               "bytecode does not lie inside the model "
                               "mapping");
  }
  inv = (graft_dispatch_invocation_t*)exd_alloc(host, sizeof(*inv), 0);
  if (inv == NULL) return exd_out_of_memory(host);
  memset(inv, 0, sizeof(*inv));
  inv->host = host;
  inv->profiling =
      (desc->flags & GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING) != 0;

  status = exd_parse(inv, context->dispatch, desc);
  if (status == NULL) status = exd_plan(inv);
  if (status != NULL) {
    exd_invocation_free(inv);
    return status;
  }
  *out_invocation = inv;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_invocation_destroy(
    graft_dispatch_invocation_t* invocation) {
  if (invocation == NULL) return;
  exd_invocation_free(invocation);
}

/* The tensor behind input or output `index`, or NULL with *out_status set. */
static const exd_tensor_t* exd_io_tensor(const graft_dispatch_invocation_t* inv,
                                         graft_dispatch_io_kind_t kind,
                                         size_t index,
                                         graft_status_t** out_status) {
  const graft_host_api_t* host = inv->host;
  if (kind == GRAFT_DISPATCH_IO_KIND_INPUT && index < inv->num_inputs) {
    return &inv->tensors[inv->inputs[index]];
  }
  if (kind == GRAFT_DISPATCH_IO_KIND_OUTPUT && index < inv->num_outputs) {
    return &inv->tensors[inv->outputs[index]];
  }
  if (kind != GRAFT_DISPATCH_IO_KIND_INPUT &&
      kind != GRAFT_DISPATCH_IO_KIND_OUTPUT) {
    *out_status = host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: unknown io kind %d", (int)kind);
  } else {
    *out_status = host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: %s index %zu out of range (the entry has %zu)",
        kind == GRAFT_DISPATCH_IO_KIND_INPUT ? "input" : "output", index,
        kind == GRAFT_DISPATCH_IO_KIND_INPUT ? inv->num_inputs
                                             : inv->num_outputs);
  }
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_buffer_requirements(
    const graft_dispatch_invocation_t* invocation,
    graft_dispatch_io_kind_t kind, size_t index,
    graft_dispatch_buffer_requirements_t* out_requirements) {
  const exd_tensor_t* tensor;
  graft_status_t* status = NULL;
  if (invocation == NULL) return &k_null_invocation_status;
  if (out_requirements == NULL ||
      !GRAFT_STRUCT_HAS_MEMBER(out_requirements,
                               graft_dispatch_buffer_requirements_t,
                               element_type)) {
    return invocation->host->status_create(
        invocation->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: get_buffer_requirements: out_requirements is NULL "
        "or truncated");
  }
  tensor = exd_io_tensor(invocation, kind, index, &status);
  if (tensor == NULL) return status;
  out_requirements->size = tensor->numel * sizeof(float);
  out_requirements->alignment = sizeof(float);
  out_requirements->element_type = GRAFT_ELEMENT_TYPE_FLOAT32;
  if (GRAFT_STRUCT_HAS_MEMBER(
          out_requirements, graft_dispatch_buffer_requirements_t, reserved0)) {
    out_requirements->reserved0 = 0;
  }
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_attach_host_memory(
    graft_dispatch_invocation_t* invocation, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size) {
  const graft_host_api_t* host;
  const exd_tensor_t* tensor;
  graft_status_t* status = NULL;
  size_t required, slot;
  if (invocation == NULL) return &k_null_invocation_status;
  host = invocation->host;
  tensor = exd_io_tensor(invocation, kind, index, &status);
  if (tensor == NULL) return status;
  if (invocation->in_flight) {
    return host->status_create(host, GRAFT_STATUS_FAILED_PRECONDITION,
                               "example dispatch: attach during a run started "
                               "with invoke_async");
  }
  required = tensor->numel * sizeof(float);
  if ((data == NULL && size > 0) || size < required ||
      (uintptr_t)data % sizeof(float) != 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: %s %zu needs %zu bytes aligned to %zu, got %zu "
        "bytes at %p",
        kind == GRAFT_DISPATCH_IO_KIND_INPUT ? "input" : "output", index,
        required, sizeof(float), size, data);
  }
  if (kind == GRAFT_DISPATCH_IO_KIND_INPUT) {
    slot = index;
    invocation->slots[invocation->inputs[index]] = (float*)data;
  } else {
    slot = invocation->num_inputs + index;
    invocation->output_buffers[index] = (float*)data;
    if (invocation->output_in_place[index]) {
      invocation->slots[invocation->outputs[index]] = (float*)data;
    }
  }
  if (!invocation->attached[slot]) {
    invocation->attached[slot] = 1;
    --invocation->num_unattached;
  }
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke(
    graft_dispatch_invocation_t* invocation) {
  graft_status_t* status;
  if (invocation == NULL) return &k_null_invocation_status;
  status = exd_check_ready(invocation);
  if (status != NULL) return status;
  exd_run(invocation);
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke_async(
    graft_dispatch_invocation_t* invocation) {
  graft_status_t* status;
  if (invocation == NULL) return &k_null_invocation_status;
  status = exd_check_ready(invocation);
  if (status != NULL) return status;
  /* The virtual device has no queue: the run happens now and wait reports
   * it. A real device would submit here and block in wait. */
  exd_run(invocation);
  invocation->in_flight = 1;
  invocation->async_status = NULL;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_wait(
    graft_dispatch_invocation_t* invocation, uint64_t timeout_ns) {
  graft_status_t* status;
  (void)timeout_ns;
  if (invocation == NULL) return &k_null_invocation_status;
  if (!invocation->in_flight) {
    return invocation->host->status_create(
        invocation->host, GRAFT_STATUS_FAILED_PRECONDITION,
        "example dispatch: wait without a run started by invoke_async");
  }
  status = invocation->async_status;
  invocation->async_status = NULL;
  invocation->in_flight = 0;
  return status;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_profile(
    const graft_dispatch_invocation_t* invocation,
    const graft_dispatch_profile_event_t** out_events, size_t* out_num_events) {
  const graft_host_api_t* host;
  if (invocation == NULL) return &k_null_invocation_status;
  host = invocation->host;
  if (out_events == NULL || out_num_events == NULL) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: get_profile: out_events and "
                               "out_num_events are required");
  }
  if (!invocation->profiling) {
    return host->status_create(host, GRAFT_STATUS_FAILED_PRECONDITION,
                               "example dispatch: get_profile: the invocation "
                               "was created without "
                               "GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING");
  }
  if (invocation->in_flight) {
    return host->status_create(host, GRAFT_STATUS_FAILED_PRECONDITION,
                               "example dispatch: get_profile during a run "
                               "started with invoke_async");
  }
  *out_events = invocation->events;
  *out_num_events = invocation->num_events;
  return NULL;
}
