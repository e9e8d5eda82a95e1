/* The dispatch library of tests/check's "broken" vendor: runs
 * broken_plugin.c's bytecode ("broken v1 add <n>\n": out = in0 + in1 over
 * n floats). Correct as built plainly; with a fault per build:
 *   BROKEN_TRUNCATED_CRASH  reads a 16-byte header without checking the
 *                           bytecode's size (SIGSEGV, as an overread would)
 *   BROKEN_WRONG_RESULT     adds 0.5 to every output */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graft_dispatch.h"

static graft_status_t k_null =
    GRAFT_STATUS_INITIALIZER(GRAFT_STATUS_INVALID_ARGUMENT,
                             "broken dispatch: a required argument is NULL");
static graft_status_t k_bad_host = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION, "broken dispatch: unusable host table");

struct graft_dispatch_t {
  const graft_host_api_t* host;
  graft_dispatch_info_t info;
};
struct graft_dispatch_device_context_t {
  graft_dispatch_t* dispatch;
};
struct graft_dispatch_invocation_t {
  graft_dispatch_t* dispatch;
  long long n;
  float* io[3];
};

static graft_status_t* fail(graft_dispatch_t* d, int32_t code,
                            const char* message) {
  return d->host->status_create(d->host, code, message);
}

GRAFT_EXPORT uint32_t graft_dispatch_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out) {
  graft_dispatch_t* d;
  (void)options;
  if (host == NULL) return &k_null;
  if (host->struct_size < sizeof(graft_host_api_t) ||
      GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR) {
    return &k_bad_host;
  }
  if (out == NULL) return &k_null;
  if (num_options > 0) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "broken dispatch: takes no options");
  }
  d = calloc(1, sizeof(*d));
  if (d == NULL) return &k_bad_host;
  d->host = host;
  d->info.struct_size = sizeof(d->info);
  d->info.abi_version = GRAFT_ABI_VERSION;
  d->info.vendor = "broken";
  d->info.library_version = "1.0.0";
  d->info.build_id = "";
  d->info.description = "tests/check: a dispatch library with one fault";
  d->info.hardware_kinds = GRAFT_HARDWARE_KIND_NPU;
  d->info.min_bytecode_format_version = 1;
  d->info.max_bytecode_format_version = 1;
  *out = d;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_destroy(graft_dispatch_t* d) { free(d); }

GRAFT_EXPORT graft_status_t* graft_dispatch_get_info(
    const graft_dispatch_t* d, const graft_dispatch_info_t** out) {
  if (d == NULL || out == NULL) return &k_null;
  *out = &d->info;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_check_compatibility(
    graft_dispatch_t* d, const graft_compatibility_stamp_t* stamp) {
  if (d == NULL) return &k_null;
  if (stamp == NULL || stamp->struct_size < sizeof(*stamp) ||
      stamp->vendor == NULL || strcmp(stamp->vendor, "broken") != 0 ||
      GRAFT_ABI_VERSION_GET_MAJOR(stamp->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      stamp->bytecode_format_version != 1) {
    return fail(d, GRAFT_STATUS_FAILED_PRECONDITION,
                "broken dispatch: not broken v1 bytecode");
  }
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_device_context_create(
    graft_dispatch_t* d, const graft_key_value_t* options, size_t num_options,
    graft_dispatch_device_context_t** out) {
  graft_dispatch_device_context_t* c;
  (void)options;
  if (d == NULL) return &k_null;
  if (out == NULL) return fail(d, GRAFT_STATUS_INVALID_ARGUMENT, "NULL out");
  if (num_options > 0) {
    return fail(d, GRAFT_STATUS_INVALID_ARGUMENT, "takes no options");
  }
  c = calloc(1, sizeof(*c));
  if (c == NULL) return fail(d, GRAFT_STATUS_RESOURCE_EXHAUSTED, "oom");
  c->dispatch = d;
  *out = c;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_device_context_destroy(
    graft_dispatch_device_context_t* c) {
  free(c);
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_create(
    graft_dispatch_device_context_t* c,
    const graft_dispatch_invocation_desc_t* desc,
    graft_dispatch_invocation_t** out) {
  graft_dispatch_t* d;
  graft_dispatch_invocation_t* inv;
  char text[64];
  long long n = 0;
  char tail = 0;
  if (c == NULL) return &k_null;
  d = c->dispatch;
  if (desc == NULL || out == NULL || desc->struct_size < sizeof(*desc) ||
      desc->bytecode.data == NULL || desc->entry_point == NULL) {
    return fail(d, GRAFT_STATUS_INVALID_ARGUMENT, "bad arguments");
  }
#ifdef BROKEN_TRUNCATED_CRASH
  if (desc->bytecode.size < 16) raise(SIGSEGV);
#endif
  if (desc->bytecode.size >= sizeof(text)) {
    return fail(d, GRAFT_STATUS_INVALID_ARGUMENT, "bytecode too long");
  }
  memcpy(text, desc->bytecode.data, desc->bytecode.size);
  text[desc->bytecode.size] = '\0';
  if (sscanf(text, "broken v1 add %lld%c", &n, &tail) != 2 || tail != '\n' ||
      n <= 0 || n > (1 << 24) || strlen(text) != desc->bytecode.size) {
    return fail(d, GRAFT_STATUS_INVALID_ARGUMENT, "malformed bytecode");
  }
  if (strcmp(desc->entry_point, "main") != 0) {
    return fail(d, GRAFT_STATUS_NOT_FOUND, "no such entry point");
  }
  if (desc->num_inputs != 2 || desc->num_outputs != 1) {
    return fail(d, GRAFT_STATUS_INVALID_ARGUMENT, "main has 2 in, 1 out");
  }
  inv = calloc(1, sizeof(*inv));
  if (inv == NULL) return fail(d, GRAFT_STATUS_RESOURCE_EXHAUSTED, "oom");
  inv->dispatch = d;
  inv->n = n;
  *out = inv;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_invocation_destroy(
    graft_dispatch_invocation_t* inv) {
  free(inv);
}

static int slot(graft_dispatch_io_kind_t kind, size_t index) {
  if (kind == GRAFT_DISPATCH_IO_KIND_INPUT && index < 2) return (int)index;
  if (kind == GRAFT_DISPATCH_IO_KIND_OUTPUT && index == 0) return 2;
  return -1;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_buffer_requirements(
    const graft_dispatch_invocation_t* inv, graft_dispatch_io_kind_t kind,
    size_t index, graft_dispatch_buffer_requirements_t* req) {
  if (inv == NULL) return &k_null;
  if (req == NULL || req->struct_size < sizeof(*req) || slot(kind, index) < 0) {
    return fail(inv->dispatch, GRAFT_STATUS_INVALID_ARGUMENT, "bad request");
  }
  req->size = (size_t)inv->n * sizeof(float);
  req->alignment = sizeof(float);
  req->element_type = GRAFT_ELEMENT_TYPE_FLOAT32;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_attach_host_memory(
    graft_dispatch_invocation_t* inv, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size) {
  int s;
  if (inv == NULL) return &k_null;
  s = slot(kind, index);
  if (s < 0 || data == NULL || size < (size_t)inv->n * sizeof(float)) {
    return fail(inv->dispatch, GRAFT_STATUS_INVALID_ARGUMENT, "bad buffer");
  }
  inv->io[s] = (float*)data;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke(
    graft_dispatch_invocation_t* inv) {
  long long i;
  if (inv == NULL) return &k_null;
  if (!inv->io[0] || !inv->io[1] || !inv->io[2]) {
    return fail(inv->dispatch, GRAFT_STATUS_FAILED_PRECONDITION,
                "attach every input and output first");
  }
  for (i = 0; i < inv->n; ++i) {
    inv->io[2][i] = inv->io[0][i] + inv->io[1][i];
#ifdef BROKEN_WRONG_RESULT
    inv->io[2][i] += 0.5f;
#endif
  }
  return NULL;
}
