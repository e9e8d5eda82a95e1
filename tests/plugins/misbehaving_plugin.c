/* A compiler plugin that misbehaves on request, for tests/plugins.
 *
 * Option "misbehave" picks the fault:
 *   taken_2            partition answers taken=2 for op 0
 *   negative_group     partition gives op 0 group id -1
 *   partition_error    partition fails with INTERNAL
 *   wrong_call_count   compile returns one call fewer than partitions
 *   bad_module_index   compile's first call names module 7 of 1
 *   huge_module        compile claims a 1 TiB module
 *   empty_module       compile returns a 0-byte module
 *   wrong_vendor       the stamp names another vendor
 *   duplicate_entry    two calls share one entry point in one module
 *   fail_partition_1   compile fails for partition 1 with a message
 *   module_4gib        compile claims a module of exactly 4 GiB
 *   short_stamp        the stamp's struct_size stops before its strings
 *   stamp_two_fields   the stamp sets only struct_size and vendor (issue 19)
 *   stamp_no_version   the stamp's plugin_version is ""
 *   stamp_other_format the stamp's bytecode format differs from get_info's
 *   noisy_error        partition fails with a 64 KiB message holding a
 *                      newline and a terminal escape
 *   crash_partition    partition dies of SIGSEGV (raised, so sanitizers
 *                      see the signal, not undefined behaviour)
 *   hang_partition     partition never returns
 *   abort_compile      compile calls abort()
 *   exit_compile       compile calls exit(0)
 *   crash_destroy      destroy dies of SIGSEGV
 * Option "groups" (default 1): taken op i gets group i % groups, forcing
 * splits. Built three times (see CMakeLists.txt): as is, with another ABI
 * major (MISBEHAVE_ABI_MAJOR), and without compile (MISBEHAVE_NO_COMPILE). */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graft_compiler_plugin.h"

#ifndef MISBEHAVE_ABI_MAJOR
#define MISBEHAVE_ABI_MAJOR GRAFT_ABI_VERSION_MAJOR
#endif

struct graft_compiler_plugin_t {
  const graft_host_api_t* host;
  char misbehave[64];
  int groups;
  graft_compiler_plugin_info_t info;
};

typedef struct {
  graft_compiled_result_t base;
  graft_compatibility_stamp_t stamp;
  graft_byte_span_t* modules;
  graft_compiled_call_t* calls;
  char** names;
  size_t num_names;
  uint8_t* bytes;
} result_t;

static const char* const k_socs[] = {"bad-soc"};

GRAFT_EXPORT uint32_t graft_compiler_plugin_abi_version(void) {
  return GRAFT_ABI_VERSION_PACK(MISBEHAVE_ABI_MAJOR, 0);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin) {
  size_t i;
  graft_compiler_plugin_t* p = calloc(1, sizeof(*p));
  if (p == NULL) {
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED, "oom");
  }
  p->host = host;
  p->groups = 1;
  for (i = 0; i < num_options; ++i) {
    if (strcmp(options[i].key, "misbehave") == 0) {
      strncpy(p->misbehave, options[i].value, sizeof(p->misbehave) - 1);
    } else if (strcmp(options[i].key, "groups") == 0) {
      p->groups = atoi(options[i].value);
      if (p->groups < 1) p->groups = 1;
    }
  }
  p->info.struct_size = sizeof(p->info);
  p->info.abi_version = GRAFT_ABI_VERSION;
  p->info.vendor = "misbehaving";
  p->info.plugin_version = "0.1";
  p->info.description = "test plugin that misbehaves on request";
  p->info.soc_models = k_socs;
  p->info.num_soc_models = 1;
  p->info.bytecode_format_version = 1;
  *out_plugin = p;
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_destroy(graft_compiler_plugin_t* p) {
  if (strcmp(p->misbehave, "crash_destroy") == 0) raise(SIGSEGV);
  free(p);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_get_info(
    const graft_compiler_plugin_t* p,
    const graft_compiler_plugin_info_t** out_info) {
  *out_info = &p->info;
  return NULL;
}

static int is(const graft_compiler_plugin_t* p, const char* what) {
  return strcmp(p->misbehave, what) == 0;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_partition(
    graft_compiler_plugin_t* p, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out) {
  size_t i;
  (void)soc_model;
  if (is(p, "partition_error")) {
    return p->host->status_create(p->host, GRAFT_STATUS_INTERNAL,
                                  "misbehaving vendor: partition exploded");
  }
  if (is(p, "crash_partition")) raise(SIGSEGV);
  if (is(p, "hang_partition")) {
    for (;;) pause();
  }
  if (is(p, "noisy_error")) {
    graft_status_t* st;
    char* text = malloc(65536);
    const char head[] = "misbehaving vendor: line one\nline two\x1b[31m red";
    memset(text, 'x', 65535);
    memcpy(text, head, sizeof(head) - 1);
    text[65535] = '\0';
    st = p->host->status_create(p->host, GRAFT_STATUS_INTERNAL, text);
    free(text);
    return st;
  }
  for (i = 0; i < graph->num_ops; ++i) {
    out->decisions[i].taken = 1;
    out->decisions[i].group_id = (int32_t)(i % (size_t)p->groups);
  }
  if (graph->num_ops > 0 && is(p, "taken_2")) out->decisions[0].taken = 2;
  if (graph->num_ops > 0 && is(p, "negative_group")) {
    out->decisions[0].group_id = -1;
  }
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_compiled_result_destroy(
    graft_compiled_result_t* base) {
  result_t* r = (result_t*)base;
  size_t i;
  if (r == NULL) return;
  for (i = 0; i < r->num_names; ++i) free(r->names[i]);
  free(r->names);
  free(r->modules);
  free(r->calls);
  free(r->bytes);
  free(r);
}

#ifndef MISBEHAVE_NO_COMPILE
GRAFT_EXPORT graft_status_t* graft_compiler_plugin_compile(
    graft_compiler_plugin_t* p, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t n,
    graft_compiled_result_t** out_result) {
  size_t i;
  result_t* r;
  (void)soc_model;
  (void)partitions;
  if (is(p, "abort_compile")) abort();
  if (is(p, "exit_compile")) exit(0);
  if (is(p, "fail_partition_1") && n > 1) {
    return p->host->status_create(
        p->host, GRAFT_STATUS_INTERNAL,
        "misbehaving vendor: cannot compile partition 1");
  }
  r = calloc(1, sizeof(*r));
  r->modules = calloc(1, sizeof(graft_byte_span_t));
  r->calls = calloc(n, sizeof(graft_compiled_call_t));
  r->names = calloc(n, sizeof(char*));
  r->num_names = n;
  r->bytes = calloc(1, 16);
  memcpy(r->bytes, "misbehaving-code", 16);
  r->modules[0].data = r->bytes;
  r->modules[0].size = is(p, "empty_module")  ? 0
                       : is(p, "huge_module") ? ((size_t)1 << 40)
                       : is(p, "module_4gib") ? ((size_t)1 << 32)
                                              : 16;
  for (i = 0; i < n; ++i) {
    r->names[i] = malloc(32);
    strcpy(r->names[i], is(p, "duplicate_entry") ? "entry" : "entry_");
    if (!is(p, "duplicate_entry")) r->names[i][6] = (char)('a' + i % 26);
    if (!is(p, "duplicate_entry")) r->names[i][7] = '\0';
    r->calls[i].entry_point = r->names[i];
    r->calls[i].module_index = 0;
  }
  if (is(p, "bad_module_index")) r->calls[0].module_index = 7;
  r->stamp.struct_size = sizeof(r->stamp);
  r->stamp.abi_version = GRAFT_ABI_VERSION;
  r->stamp.bytecode_format_version = 1;
  r->stamp.vendor = is(p, "wrong_vendor") ? "someone_else" : "misbehaving";
  r->stamp.plugin_version = "0.1";
  r->stamp.soc_model = "bad-soc";
  if (is(p, "short_stamp")) {
    r->stamp.struct_size = offsetof(graft_compatibility_stamp_t, vendor);
  }
  if (is(p, "stamp_two_fields")) {
    memset(&r->stamp, 0, sizeof(r->stamp));
    r->stamp.struct_size = sizeof(r->stamp);
    r->stamp.vendor = "misbehaving";
  }
  if (is(p, "stamp_no_version")) r->stamp.plugin_version = "";
  if (is(p, "stamp_other_format")) r->stamp.bytecode_format_version = 2;
  r->base.struct_size = sizeof(r->base);
  r->base.stamp = &r->stamp;
  r->base.modules = r->modules;
  r->base.num_modules = 1;
  r->base.calls = r->calls;
  r->base.num_calls = is(p, "wrong_call_count") ? n - 1 : n;
  *out_result = &r->base;
  return NULL;
}
#endif
