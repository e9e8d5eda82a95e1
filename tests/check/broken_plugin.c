/* A small, correct Graft-ABI compiler plugin ("broken": float32 ADD of two
 * same-size inputs, one op per partition) that tests/check builds once
 * correct and once per fault, to see `graft check` name each fault:
 *   BROKEN_CRASH_PARTITION   partition dies of SIGSEGV
 *   BROKEN_NONDETERMINISTIC  compile stamps a counter into the bytecode
 *   BROKEN_STAMP             the stamp sets only struct_size and vendor
 *   BROKEN_CLAIMS_MUL        partition takes MUL, which compile cannot do
 *   BROKEN_ABI_MAJOR=2       built for another ABI major
 *   BROKEN_NULL_CRASH        get_info dereferences a NULL plugin
 *   BROKEN_CRASH_DESTROY     destroy dies of SIGSEGV
 * Its bytecode, "broken v1 add <n>\n", runs in broken_dispatch.c. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graft_compiler_plugin.h"

#ifndef BROKEN_ABI_MAJOR
#define BROKEN_ABI_MAJOR GRAFT_ABI_VERSION_MAJOR
#endif

#define BROKEN_ADD 0
#define BROKEN_MUL 18

static const char* const k_socs[] = {"broken-soc"};

static graft_status_t k_null = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "broken: a required argument is NULL");
static graft_status_t k_bad_host = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION, "broken: unusable host table");

struct graft_compiler_plugin_t {
  const graft_host_api_t* host;
  graft_compiler_plugin_info_t info;
};

typedef struct {
  graft_compiled_result_t base;
  graft_compatibility_stamp_t stamp;
  graft_byte_span_t* modules;
  graft_compiled_call_t* calls;
  char** texts;
  size_t n;
} broken_result_t;

static graft_status_t* fail(graft_compiler_plugin_t* p, int32_t code,
                            const char* message) {
  return p->host->status_create(p->host, code, message);
}

static int known_soc(const char* soc) {
  return soc != NULL && strcmp(soc, k_socs[0]) == 0;
}

GRAFT_EXPORT uint32_t graft_compiler_plugin_abi_version(void) {
  return GRAFT_ABI_VERSION_PACK(BROKEN_ABI_MAJOR, 0);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin) {
  graft_compiler_plugin_t* p;
  (void)options;
  if (host == NULL) return &k_null;
  if (host->struct_size < sizeof(graft_host_api_t) ||
      GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR) {
    return &k_bad_host;
  }
  if (out_plugin == NULL) return &k_null;
  if (num_options > 0) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "broken: takes no options");
  }
  p = calloc(1, sizeof(*p));
  if (p == NULL) return &k_bad_host;
  p->host = host;
  p->info.struct_size = sizeof(p->info);
  p->info.abi_version = GRAFT_ABI_VERSION;
  p->info.vendor = "broken";
  p->info.plugin_version = "1.0.0";
  p->info.description = "tests/check: a plugin with one fault per build";
  p->info.soc_models = k_socs;
  p->info.num_soc_models = 1;
  p->info.hardware_kinds = GRAFT_HARDWARE_KIND_NPU;
  p->info.bytecode_format_version = 1;
  *out_plugin = p;
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_destroy(graft_compiler_plugin_t* p) {
#ifdef BROKEN_CRASH_DESTROY
  if (p != NULL) raise(SIGSEGV);
#endif
  free(p);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_get_info(
    const graft_compiler_plugin_t* p,
    const graft_compiler_plugin_info_t** out_info) {
#ifndef BROKEN_NULL_CRASH
  if (p == NULL || out_info == NULL) return &k_null;
#else
  if (p == NULL) raise(SIGSEGV); /* What reading p->info would do. */
  if (out_info == NULL) return &k_null;
#endif
  *out_info = &p->info;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_check_compatibility(
    graft_compiler_plugin_t* p, const char* soc_model) {
  if (p == NULL) return &k_null;
  if (!known_soc(soc_model)) {
    return fail(p, GRAFT_STATUS_NOT_FOUND, "broken: unknown SoC model");
  }
  return NULL;
}

/* 1 if op i of g is a float32 ADD (or MUL) of two distinct non-constant
 * inputs of the output's size, with no fused activation. */
static int takes(const graft_graph_view_t* g, const graft_op_t* op) {
  const graft_attribute_t* act;
  size_t i;
  int64_t n;
#ifdef BROKEN_CLAIMS_MUL
  if (op->builtin_code != BROKEN_ADD && op->builtin_code != BROKEN_MUL) {
    return 0;
  }
#else
  if (op->builtin_code != BROKEN_ADD) return 0;
#endif
  if (op->num_inputs != 2 || op->num_outputs != 1 ||
      op->inputs[0] == op->inputs[1]) {
    return 0;
  }
  n = graft_tensor_num_elements(graft_graph_view_tensor(g, op->outputs[0]));
  for (i = 0; i < 2; ++i) {
    const graft_tensor_t* t = graft_graph_view_tensor(g, op->inputs[i]);
    if (t == NULL || t->element_type != GRAFT_ELEMENT_TYPE_FLOAT32 ||
        t->data.size > 0 || graft_tensor_num_elements(t) != n) {
      return 0;
    }
  }
  act = graft_op_find_attribute(op, "fused_activation_function");
  return act == NULL || act->int_value == 0;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_partition(
    graft_compiler_plugin_t* p, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out) {
  size_t i;
  if (p == NULL) return &k_null;
  if (graph == NULL || out == NULL || soc_model == NULL ||
      out->struct_size < sizeof(*out) || out->decisions == NULL) {
    return fail(p, GRAFT_STATUS_INVALID_ARGUMENT, "broken: bad arguments");
  }
  if (!known_soc(soc_model)) {
    return fail(p, GRAFT_STATUS_NOT_FOUND, "broken: unknown SoC model");
  }
  if (out->num_decisions != graph->num_ops) {
    return fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                "broken: decisions do not match the graph's ops");
  }
#ifdef BROKEN_CRASH_PARTITION
  raise(SIGSEGV);
#endif
  for (i = 0; i < graph->num_ops; ++i) {
    graft_op_decision_t* d = &out->decisions[i];
    if (takes(graph, graph->ops[i])) {
      d->taken = 1;
      d->group_id = (int32_t)i; /* One op per partition. */
    } else {
      d->reason_code = GRAFT_PARTITION_REASON_UNSUPPORTED_OP;
      d->reason = "broken: only float32 ADD of two same-size inputs";
    }
  }
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_compiled_result_destroy(
    graft_compiled_result_t* base) {
  broken_result_t* r = (broken_result_t*)base;
  size_t i;
  if (r == NULL) return;
  for (i = 0; i < r->n; ++i) free(r->texts[i]);
  free(r->texts);
  free(r->modules);
  free(r->calls);
  free(r);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_compile(
    graft_compiler_plugin_t* p, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t n,
    graft_compiled_result_t** out_result) {
  broken_result_t* r;
  size_t i;
#ifdef BROKEN_NONDETERMINISTIC
  static int counter = 0;
#endif
  if (p == NULL) return &k_null;
  if (partitions == NULL || n == 0 || out_result == NULL) {
    return fail(p, GRAFT_STATUS_INVALID_ARGUMENT, "broken: bad arguments");
  }
  if (!known_soc(soc_model)) {
    return fail(p, GRAFT_STATUS_NOT_FOUND, "broken: unknown SoC model");
  }
  for (i = 0; i < n; ++i) {
    const graft_graph_view_t* g = partitions[i];
    if (g == NULL || g->num_ops != 1 || g->num_inputs != 2 ||
        g->num_outputs != 1) {
      return fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                  "broken: a partition is one ADD");
    }
    if (g->ops[0]->builtin_code != BROKEN_ADD) {
      return fail(p, GRAFT_STATUS_INTERNAL, "broken: cannot compile MUL");
    }
  }
  r = calloc(1, sizeof(*r));
  if (r == NULL) return fail(p, GRAFT_STATUS_RESOURCE_EXHAUSTED, "oom");
  r->modules = calloc(n, sizeof(*r->modules));
  r->calls = calloc(n, sizeof(*r->calls));
  r->texts = calloc(n, sizeof(*r->texts));
  r->n = n;
  for (i = 0; i < n && r->texts != NULL && r->modules != NULL; ++i) {
    const graft_graph_view_t* g = partitions[i];
    r->texts[i] = malloc(64);
    if (r->texts[i] == NULL) break;
#ifdef BROKEN_NONDETERMINISTIC
    snprintf(r->texts[i], 64, "broken v1 add %lld\n#%d\n",
             (long long)graft_tensor_num_elements(g->tensors[g->outputs[0]]),
             ++counter);
#else
    snprintf(r->texts[i], 64, "broken v1 add %lld\n",
             (long long)graft_tensor_num_elements(g->tensors[g->outputs[0]]));
#endif
    r->modules[i].data = (const uint8_t*)r->texts[i];
    r->modules[i].size = strlen(r->texts[i]);
    r->calls[i].entry_point = "main";
    r->calls[i].module_index = i;
  }
  if (i < n || r->calls == NULL) {
    graft_compiler_plugin_compiled_result_destroy(&r->base);
    return fail(p, GRAFT_STATUS_RESOURCE_EXHAUSTED, "oom");
  }
  r->stamp.struct_size = sizeof(r->stamp);
  r->stamp.vendor = "broken";
#ifndef BROKEN_STAMP
  r->stamp.abi_version = GRAFT_ABI_VERSION;
  r->stamp.bytecode_format_version = 1;
  r->stamp.plugin_version = "1.0.0";
  r->stamp.soc_model = k_socs[0];
#endif
  r->base.struct_size = sizeof(r->base);
  r->base.stamp = &r->stamp;
  r->base.modules = r->modules;
  r->base.num_modules = n;
  r->base.calls = r->calls;
  r->base.num_calls = n;
  *out_result = &r->base;
  return NULL;
}
