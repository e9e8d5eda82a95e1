/* The vendor guide's plugin (docs/vendor_guide.md): a complete, minimal
 * compiler plugin for an imaginary "acme" NPU that runs float32 ADD (and
 * MUL, when built with -DACME_WITH_MUL: the guide's step 9). Its bytecode
 * says which tensors are inputs, outputs, constants and intermediates, and
 * acme_dispatch.c runs it.
 * Plain C99 against Graft's headers only. tests/docs builds, applies and
 * runs it from an installed Graft, as the guide does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graft_compiler_plugin.h"
#include "graft_vendor_helper.h"

static const char* const k_soc_models[] = {"acme-npu-1"};

typedef char acme_reason_t[128];

/* For calls whose arguments leave no host table to make a status with. The
 * ABI promises a status, never a crash, for NULL arguments. */
static graft_status_t k_null_argument = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "acme: a required argument is NULL");

struct graft_compiler_plugin_t {
  const graft_host_api_t* host;
  graft_compiler_plugin_info_t info;
  /* One reason text per op of the last partition call: the ABI says they
   * stay valid until the next partition call or destroy. */
  acme_reason_t* reasons;
};

GRAFT_EXPORT uint32_t graft_compiler_plugin_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin) {
  graft_compiler_plugin_t* p;
  graft_status_t* status = graft_vendor_check_host(host);
  if (status != NULL) return status;
  if (out_plugin == NULL) return &k_null_argument;
  /* acme takes no options: any key is refused, by name. */
  status =
      graft_vendor_check_options(host, "acme", options, num_options, NULL, 0);
  if (status != NULL) return status;
  p = calloc(1, sizeof(*p));
  if (p == NULL) {
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "acme: out of memory");
  }
  p->host = host;
  p->info.struct_size = sizeof(p->info);
  p->info.abi_version = GRAFT_ABI_VERSION;
  p->info.vendor = "acme";
  p->info.plugin_version = "0.1.0";
  p->info.description = "vendor guide plugin: float32 ADD (and MUL, step 9)";
  p->info.soc_models = k_soc_models;
  p->info.num_soc_models = 1;
  p->info.hardware_kinds = GRAFT_HARDWARE_KIND_NPU;
  p->info.bytecode_format_version = 1;
  *out_plugin = p;
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_destroy(graft_compiler_plugin_t* p) {
  if (p != NULL) free(p->reasons);
  free(p);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_get_info(
    const graft_compiler_plugin_t* p,
    const graft_compiler_plugin_info_t** out_info) {
  if (p == NULL || out_info == NULL) return &k_null_argument;
  *out_info = &p->info;
  return NULL;
}

/* NULL when acme compiles for `soc_model`, else an error naming it. */
static graft_status_t* acme_check_soc(const graft_compiler_plugin_t* p,
                                      const char* soc_model) {
  if (soc_model != NULL && strcmp(soc_model, k_soc_models[0]) == 0) {
    return NULL;
  }
  return p->host->status_create_formatted(
      p->host, GRAFT_STATUS_INVALID_ARGUMENT,
      "acme: no SoC model '%s' (acme compiles for acme-npu-1)",
      soc_model != NULL ? soc_model : "(NULL)");
}

/* The ops acme runs: TFLite builtin code -> acme instruction. */
static const struct {
  int32_t builtin_code;
  const char* instruction;
} k_ops[] = {
    {GRAFT_OP_ADD, "add"},
#ifdef ACME_WITH_MUL
    {GRAFT_OP_MUL, "mul"}, /* step 9 of the guide */
#endif
};

/* The acme instruction for `op`, or NULL. */
static const char* acme_instruction(const graft_op_t* op) {
  size_t i;
  for (i = 0; i < sizeof(k_ops) / sizeof(k_ops[0]); ++i) {
    if (k_ops[i].builtin_code == op->builtin_code) return k_ops[i].instruction;
  }
  return NULL;
}

/* 1 if acme runs `op`; otherwise 0 with the reason in `why`. */
static int acme_supports(const graft_graph_view_t* g, const graft_op_t* op,
                         graft_partition_reason_t* code, char* why,
                         size_t why_size) {
  const graft_tensor_t* out = NULL;
  int64_t act;
  size_t i;
  if (acme_instruction(op) == NULL || op->num_inputs != 2 ||
      op->num_outputs != 1) {
    *code = GRAFT_PARTITION_REASON_UNSUPPORTED_OP;
    snprintf(why, why_size, "acme: op %s is not supported yet", op->name);
    return 0;
  }
  out = graft_graph_view_tensor(g, op->outputs[0]);
  for (i = 0; i < op->num_inputs; ++i) {
    const graft_tensor_t* t = graft_graph_view_tensor(g, op->inputs[i]);
    if (t == NULL || out == NULL ||
        t->element_type != GRAFT_ELEMENT_TYPE_FLOAT32) {
      *code = GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE;
      snprintf(why, why_size, "acme: %s runs on float32 only", op->name);
      return 0;
    }
    /* acme broadcasts a single element, nothing else. */
    if (graft_tensor_num_elements(t) != 1 &&
        graft_tensor_num_elements(t) != graft_tensor_num_elements(out)) {
      *code = GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE;
      snprintf(why, why_size, "acme: %s broadcasts only single elements",
               op->name);
      return 0;
    }
  }
  /* A generated name: a misspelling would not compile. */
  act = graft_vendor_attribute_int(op, GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION,
                                   GRAFT_ACTIVATION_FUNCTION_TYPE_NONE);
  if (act != GRAFT_ACTIVATION_FUNCTION_TYPE_NONE) {
    *code = GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE;
    snprintf(why, why_size, "acme: fused activation %s not supported",
             graft_op_find_attribute(op, GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION)
                 ->string_value);
    return 0;
  }
  return 1;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_partition(
    graft_compiler_plugin_t* p, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out) {
  size_t i;
  acme_reason_t* reasons;
  graft_status_t* status;
  if (p == NULL) return &k_null_argument;
  /* What the host passes is checked, not trusted: a status, never a crash. */
  if (graph == NULL || out == NULL ||
      !GRAFT_STRUCT_HAS_MEMBER(out, graft_partition_result_t, num_decisions) ||
      out->decisions == NULL || out->num_decisions != graph->num_ops) {
    return p->host->status_create(p->host, GRAFT_STATUS_INVALID_ARGUMENT,
                                  "acme: partition needs a graph and a result");
  }
  status = acme_check_soc(p, soc_model);
  if (status != NULL) return status;
  reasons = realloc(p->reasons, (graph->num_ops + 1) * sizeof(acme_reason_t));
  if (reasons == NULL) {
    return p->host->status_create(p->host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                                  "acme: out of memory");
  }
  p->reasons = reasons;
  for (i = 0; i < graph->num_ops; ++i) {
    graft_op_decision_t* d = &out->decisions[i];
    if (acme_supports(graph, graph->ops[i], &d->reason_code, reasons[i],
                      sizeof(reasons[i]))) {
      d->taken = 1;
      d->group_id = 0;
    } else {
      d->reason = reasons[i];
    }
  }
  return NULL;
}

/* 1 if tensor `t` of partition `g` is written by an op and is not an
 * output of the partition: the dispatch library allocates it. */
static int acme_is_intermediate(const graft_graph_view_t* g, int32_t t) {
  size_t i;
  int written = 0;
  for (i = 0; i < g->num_ops; ++i) {
    if (g->ops[i]->num_outputs > 0 && g->ops[i]->outputs[0] == t) written = 1;
  }
  for (i = 0; i < g->num_outputs; ++i) {
    if (g->outputs[i] == t) return 0;
  }
  return written;
}

/* The compiled result: one text module per partition. */
typedef struct {
  graft_compiled_result_t base;
  graft_compatibility_stamp_t stamp;
  graft_byte_span_t* modules;
  graft_compiled_call_t* calls;
  char** texts;
  size_t count;
} acme_result_t;

GRAFT_EXPORT void graft_compiler_plugin_compiled_result_destroy(
    graft_compiled_result_t* base) {
  acme_result_t* r = (acme_result_t*)base;
  size_t i;
  if (r == NULL) return;
  for (i = 0; i < r->count; ++i) free(r->texts[i]);
  free(r->texts);
  free(r->modules);
  free(r->calls);
  free(r);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_compile(
    graft_compiler_plugin_t* p, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t n,
    graft_compiled_result_t** out_result) {
  acme_result_t* r;
  graft_status_t* status;
  size_t i, j;
  if (p == NULL) return &k_null_argument;
  if (partitions == NULL || n == 0 || out_result == NULL || soc_model == NULL) {
    return p->host->status_create(
        p->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "acme: compile needs partitions, a SoC model and out_result");
  }
  status = acme_check_soc(p, soc_model);
  if (status != NULL) return status;
  r = calloc(1, sizeof(*r));
  if (r == NULL) goto oom;
  r->modules = calloc(n, sizeof(*r->modules));
  r->calls = calloc(n, sizeof(*r->calls));
  r->texts = calloc(n, sizeof(*r->texts));
  if (!r->modules || !r->calls || !r->texts) goto oom;
  r->count = n;
  for (i = 0; i < n; ++i) {
    const graft_graph_view_t* g = partitions[i];
    size_t cap = 64 + 80 * (g->num_ops + g->num_tensors), len;
    char* text = malloc(cap);
    if (text == NULL) goto oom;
    r->texts[i] = text;
    len = (size_t)snprintf(text, cap, "acme v1 %s\n", soc_model);
    /* Declarations: every tensor the program touches, with its float32
     * element count, so the dispatch library guesses nothing. Inputs and
     * outputs in the order the runtime attaches them. */
    for (j = 0; j < g->num_inputs; ++j) {
      len += (size_t)snprintf(
          text + len, cap - len, "input t%d %lld\n", (int)g->inputs[j],
          (long long)graft_tensor_num_elements(g->tensors[g->inputs[j]]));
    }
    for (j = 0; j < g->num_tensors; ++j) {
      const graft_tensor_t* t = g->tensors[j];
      if (graft_vendor_tensor_is_constant(t)) {
        /* Weights stay in the model: name the buffer, copy nothing. */
        len += (size_t)snprintf(
            text + len, cap - len, "const t%d %lld buffer %lld\n", (int)j,
            (long long)graft_tensor_num_elements(t), (long long)t->buffer_id);
      } else if (acme_is_intermediate(g, (int32_t)j)) {
        len +=
            (size_t)snprintf(text + len, cap - len, "tensor t%d %lld\n", (int)j,
                             (long long)graft_tensor_num_elements(t));
      }
    }
    for (j = 0; j < g->num_outputs; ++j) {
      len += (size_t)snprintf(
          text + len, cap - len, "output t%d %lld\n", (int)g->outputs[j],
          (long long)graft_tensor_num_elements(g->tensors[g->outputs[j]]));
    }
    for (j = 0; j < g->num_ops; ++j) {
      const graft_op_t* op = g->ops[j];
      len += (size_t)snprintf(text + len, cap - len, "%s t%d t%d -> t%d\n",
                              acme_instruction(op), (int)op->inputs[0],
                              (int)op->inputs[1], (int)op->outputs[0]);
    }
    r->modules[i].data = (const uint8_t*)text;
    r->modules[i].size = len;
    r->calls[i].entry_point = "main";
    r->calls[i].module_index = i;
  }
  r->stamp.struct_size = sizeof(r->stamp);
  r->stamp.abi_version = GRAFT_ABI_VERSION;
  r->stamp.bytecode_format_version = 1;
  r->stamp.vendor = "acme";
  r->stamp.plugin_version = "0.1.0";
  r->stamp.soc_model = k_soc_models[0];
  r->base.struct_size = sizeof(r->base);
  r->base.stamp = &r->stamp;
  r->base.modules = r->modules;
  r->base.num_modules = n;
  r->base.calls = r->calls;
  r->base.num_calls = n;
  *out_result = &r->base;
  return NULL;
oom:
  graft_compiler_plugin_compiled_result_destroy(r ? &r->base : NULL);
  return p->host->status_create(p->host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                                "acme: out of memory");
}
