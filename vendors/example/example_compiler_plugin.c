/* The example compiler plugin: the teaching vendor.
 *
 * Takes float32 elementwise arithmetic (ADD, SUB, MUL, DIV with fused
 * activation NONE/RELU/RELU6), activations (RELU, RELU6, LOGISTIC, TANH) and
 * FULLY_CONNECTED with constant weights, and compiles them into the readable
 * text bytecode described in BYTECODE.md, which the example dispatch library
 * interprets on host memory. Everything else is refused with a reason.
 *
 * Written against the C headers only (no Graft library), in plain C99, the
 * way a vendor would. Memory comes from the host's allocator so the host can
 * account for it; every allocation is released on every error path. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_bytecode.h"
#include "graft_compiler_plugin.h"
#include "graft_vendor_helper.h"

#define EX_PLUGIN_VERSION "1.0.0"

/* The bytecode's identity, instructions, activations and shape rules are
 * example_bytecode.h's, shared with the dispatch library. */

static const graft_option_info_t k_options[] = {
    {"single_module", "0",
     "1: put every partition's entry point into one shared module; "
     "0: one module per partition"},
    {"weights_in_place", "0",
     "1: refer to constants by model buffer id ('const ... buffer N'), so "
     "the dispatch library uses them in place in the model file; "
     "0: copy their values into the bytecode as data lines"},
};

/* Statuses for the paths where no host table is reachable. */
static graft_status_t k_null_plugin_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "example vendor: plugin is NULL");
static graft_status_t k_null_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "example vendor: host table is NULL");
static graft_status_t k_bad_host_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION,
    "example vendor: host table is of another ABI major or too small");
static graft_status_t k_bad_create_args_status = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT,
    "example vendor: create needs out_plugin, and options when "
    "num_options > 0");

struct graft_compiler_plugin_t {
  /* Borrowed from create; valid until destroy. */
  const graft_host_api_t* host;
  int single_module;
  int weights_in_place;
  graft_compiler_plugin_info_t info;
  /* Reason strings of the last partition call (graft_op_decision_t.reason
   * lives until the next partition call or destroy). */
  char** reasons;
  size_t num_reasons;
  size_t reasons_capacity;
};

/* ------------------------------------------------------------------------ */
/* Memory and text helpers                                                    */
/* ------------------------------------------------------------------------ */

static void* ex_alloc(const graft_host_api_t* host, size_t size) {
  return host->allocate(host, size, 0);
}

static void ex_free(const graft_host_api_t* host, void* ptr) {
  host->deallocate(host, ptr);
}

/* Grows *items (element size `item_size`) to hold at least `needed` items.
 * Returns 0 when out of memory, leaving *items as it was. */
static int ex_reserve(const graft_host_api_t* host, void** items,
                      size_t* capacity, size_t item_size, size_t needed) {
  size_t new_capacity;
  void* grown;
  if (needed <= *capacity) return 1;
  new_capacity = *capacity < 8 ? 8 : *capacity * 2;
  while (new_capacity < needed) new_capacity *= 2;
  if (new_capacity > SIZE_MAX / item_size) return 0;
  grown = ex_alloc(host, new_capacity * item_size);
  if (grown == NULL) return 0;
  if (*items != NULL) {
    memcpy(grown, *items, *capacity * item_size);
    ex_free(host, *items);
  }
  *items = grown;
  *capacity = new_capacity;
  return 1;
}

static char* ex_strdup(const graft_host_api_t* host, const char* text) {
  size_t size = strlen(text) + 1;
  char* copy = (char*)ex_alloc(host, size);
  if (copy != NULL) memcpy(copy, text, size);
  return copy;
}

/* A growing text buffer. Appends after an allocation failure are ignored and
 * `failed` is set, so callers check once at the end. */
typedef struct {
  const graft_host_api_t* host;
  char* data;
  size_t size;
  size_t capacity;
  int failed;
  /* Newlines appended so far: the 1-based number of the line being
   * written is lines + 1. */
  uint64_t lines;
} ex_text_t;

static void ex_text_vappend(ex_text_t* text, const char* format, va_list args) {
  va_list copy;
  int length;
  size_t i, start;
  void* data;
  if (text->failed) return;
  va_copy(copy, args);
  length = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (length < 0) {
    text->failed = 1;
    return;
  }
  data = text->data;
  if (!ex_reserve(text->host, &data, &text->capacity, 1,
                  text->size + (size_t)length + 1)) {
    text->failed = 1;
    return;
  }
  text->data = (char*)data;
  start = text->size;
  vsnprintf(text->data + start, (size_t)length + 1, format, args);
  text->size += (size_t)length;
  for (i = start; i < text->size; ++i) {
    if (text->data[i] == '\n') ++text->lines;
  }
}

static void ex_text_append(ex_text_t* text, const char* format, ...) {
  va_list args;
  va_start(args, format);
  ex_text_vappend(text, format, args);
  va_end(args);
}

/* Writes "[d0,d1,...]" into buffer (truncating if it must). */
static void ex_format_dims(const int64_t* dims, size_t rank, char* buffer,
                           size_t buffer_size) {
  size_t used = 0, i;
  int n = snprintf(buffer, buffer_size, "[");
  if (n > 0) used = (size_t)n;
  for (i = 0; i < rank && used < buffer_size; ++i) {
    n = snprintf(buffer + used, buffer_size - used, "%s%" PRId64,
                 i == 0 ? "" : ",", dims[i]);
    if (n < 0) return;
    used += (size_t)n;
  }
  if (used < buffer_size) snprintf(buffer + used, buffer_size - used, "]");
}

/* ------------------------------------------------------------------------ */
/* View validation: a malformed view is an error, never a crash               */
/* ------------------------------------------------------------------------ */

static int ex_index_ok(const graft_graph_view_t* graph, int32_t index,
                       int allow_absent) {
  if (index == -1) return allow_absent;
  return index >= 0 && (size_t)index < graph->num_tensors;
}

/* Checks the structural invariants of a view (sizes, pointers, indices).
 * Returns NULL or an INVALID_ARGUMENT status naming `what`. */
static graft_status_t* ex_validate_view(const graft_compiler_plugin_t* plugin,
                                        const graft_graph_view_t* graph,
                                        const char* what) {
  const graft_host_api_t* host = plugin->host;
  size_t i, j;
  if (!GRAFT_STRUCT_HAS_MEMBER(graph, graft_graph_view_t, num_outputs)) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example vendor: %s: graph view struct_size %zu is too small", what,
        graph->struct_size);
  }
  if ((graph->num_tensors > 0 && graph->tensors == NULL) ||
      (graph->num_ops > 0 && graph->ops == NULL) ||
      (graph->num_inputs > 0 && graph->inputs == NULL) ||
      (graph->num_outputs > 0 && graph->outputs == NULL)) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example vendor: %s: graph view has a NULL array with a non-zero "
        "count",
        what);
  }
  for (i = 0; i < graph->num_tensors; ++i) {
    const graft_tensor_t* tensor = graph->tensors[i];
    if (tensor == NULL ||
        !GRAFT_STRUCT_HAS_MEMBER(tensor, graft_tensor_t, buffer_id) ||
        tensor->name == NULL ||
        (tensor->rank > 0 &&
         (tensor->dims == NULL || tensor->shape_signature == NULL)) ||
        (tensor->data.size > 0 && tensor->data.data == NULL)) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: %s: tensor %zu is malformed (NULL record, small "
          "struct_size, or NULL name, dims or data)",
          what, i);
    }
  }
  for (i = 0; i < graph->num_ops; ++i) {
    const graft_op_t* op = graph->ops[i];
    if (op == NULL ||
        !GRAFT_STRUCT_HAS_MEMBER(op, graft_op_t, original_op_index) ||
        op->name == NULL || (op->num_inputs > 0 && op->inputs == NULL) ||
        (op->num_outputs > 0 && op->outputs == NULL) ||
        (op->num_attributes > 0 && op->attributes == NULL)) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: %s: op %zu is malformed (NULL record, small "
          "struct_size, or NULL name or array)",
          what, i);
    }
    for (j = 0; j < op->num_inputs; ++j) {
      if (!ex_index_ok(graph, op->inputs[j], 1)) {
        return host->status_create_formatted(
            host, GRAFT_STATUS_INVALID_ARGUMENT,
            "example vendor: %s: op %zu input %zu is tensor %" PRId32
            ", out of range [0, %zu)",
            what, i, j, op->inputs[j], graph->num_tensors);
      }
    }
    for (j = 0; j < op->num_outputs; ++j) {
      if (!ex_index_ok(graph, op->outputs[j], 0)) {
        return host->status_create_formatted(
            host, GRAFT_STATUS_INVALID_ARGUMENT,
            "example vendor: %s: op %zu output %zu is tensor %" PRId32
            ", out of range [0, %zu)",
            what, i, j, op->outputs[j], graph->num_tensors);
      }
    }
  }
  for (i = 0; i < graph->num_inputs; ++i) {
    if (!ex_index_ok(graph, graph->inputs[i], 0)) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: %s: graph input %zu is out of range", what, i);
    }
  }
  for (i = 0; i < graph->num_outputs; ++i) {
    if (!ex_index_ok(graph, graph->outputs[i], 0)) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: %s: graph output %zu is out of range", what, i);
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* What the vendor takes                                                      */
/* ------------------------------------------------------------------------ */

/* Why an op is refused: a reason code and its text. */
typedef struct {
  graft_partition_reason_t code;
  char text[320];
} ex_refusal_t;

static int ex_refuse(ex_refusal_t* refusal, graft_partition_reason_t code,
                     const char* format, ...) {
  va_list args;
  refusal->code = code;
  va_start(args, format);
  vsnprintf(refusal->text, sizeof(refusal->text), format, args);
  va_end(args);
  return 0;
}

static int ex_same_dims(const graft_tensor_t* a, const graft_tensor_t* b) {
  return exb_same_shape(a->dims, a->rank, b->dims, b->rank);
}

/* The bytecode's broadcast rule (exb_broadcasts_to): small[i % numel(small)]
 * lines up with large[i] in row-major order. */
static int ex_is_trailing_broadcast(const graft_tensor_t* small,
                                    const graft_tensor_t* large) {
  return exb_broadcasts_to(small->dims, small->rank, large->dims, large->rank);
}

/* Reads the fused activation into *out_act; refuses values other than
 * NONE, RELU and RELU6. A missing attribute means NONE (schema default). */
static int ex_read_activation(const graft_op_t* op, int64_t* out_act,
                              ex_refusal_t* refusal) {
  exb_act_t supported;
  const graft_attribute_t* attribute =
      graft_op_find_attribute(op, GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION);
  int64_t value;
  if (attribute == NULL) {
    *out_act = GRAFT_ACTIVATION_FUNCTION_TYPE_NONE;
    return 1;
  }
  value = attribute->int_value;
  if (attribute->type != GRAFT_ATTRIBUTE_TYPE_ENUM &&
      attribute->type != GRAFT_ATTRIBUTE_TYPE_INT) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                     "%s fused_activation_function has attribute type %" PRId32
                     ", expected an enum",
                     op->name, attribute->type);
  }
  if (!exb_act_from_tflite(value, &supported)) {
    if (attribute->string_value != NULL) {
      return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                       "%s fused activation %s not supported (NONE, RELU, "
                       "RELU6 only)",
                       op->name, attribute->string_value);
    }
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                     "%s fused activation %" PRId64
                     " not supported (NONE, RELU, RELU6 only)",
                     op->name, value);
  }
  *out_act = value;
  return 1;
}

static int64_t ex_int_attribute(const graft_op_t* op, const char* name) {
  const graft_attribute_t* attribute = graft_op_find_attribute(op, name);
  return attribute == NULL ? 0 : attribute->int_value;
}

/* Checks a tensor every op of this vendor reads or writes: float32, static
 * shape, dense, constant data of the right size. */
static int ex_check_tensor(const graft_tensor_t* tensor,
                           ex_refusal_t* refusal) {
  char shape[128];
  size_t i;
  int64_t elements;
  if (tensor->element_type != GRAFT_ELEMENT_TYPE_FLOAT32) {
    return ex_refuse(
        refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE,
        "dtype %s not supported: the example vendor runs float32 only",
        graft_element_type_name(tensor->element_type));
  }
  for (i = 0; i < tensor->rank; ++i) {
    if (tensor->shape_signature[i] < 0 || tensor->dims[i] < 0) {
      ex_format_dims(tensor->shape_signature, tensor->rank, shape,
                     sizeof(shape));
      return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                       "dynamic shapes not supported: tensor '%s' has shape "
                       "signature %s",
                       tensor->name, shape);
    }
  }
  if ((tensor->flags & GRAFT_TENSOR_FLAG_SPARSE) != 0) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "sparse tensor '%s' not supported by the example vendor",
                     tensor->name);
  }
  if ((tensor->flags & GRAFT_TENSOR_FLAG_VARIABLE) != 0) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSPECIFIED,
                     "variable tensor '%s' not supported by the example "
                     "vendor",
                     tensor->name);
  }
  elements = graft_tensor_num_elements(tensor);
  if (elements < 0 || elements > (int64_t)(SIZE_MAX / 4)) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_RESOURCE_LIMIT,
                     "tensor '%s' is too large", tensor->name);
  }
  if ((tensor->flags & GRAFT_TENSOR_FLAG_CONSTANT) != 0 &&
      tensor->data.size != (size_t)elements * 4) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSPECIFIED,
                     "constant tensor '%s' holds %zu bytes, expected %zu",
                     tensor->name, tensor->data.size, (size_t)elements * 4);
  }
  return 1;
}

static int ex_is_constant(const graft_tensor_t* tensor) {
  return (tensor->flags & GRAFT_TENSOR_FLAG_CONSTANT) != 0;
}

static int ex_check_binary(const graft_graph_view_t* graph,
                           const graft_op_t* op, ex_refusal_t* refusal) {
  const graft_tensor_t* a = graph->tensors[op->inputs[0]];
  const graft_tensor_t* b = graph->tensors[op->inputs[1]];
  const graft_tensor_t* out = graph->tensors[op->outputs[0]];
  const graft_tensor_t* larger;
  char a_shape[128], b_shape[128], out_shape[128];
  int64_t act;
  if (!ex_read_activation(op, &act, refusal)) return 0;
  ex_format_dims(a->dims, a->rank, a_shape, sizeof(a_shape));
  ex_format_dims(b->dims, b->rank, b_shape, sizeof(b_shape));
  if (ex_same_dims(a, b)) {
    larger = a;
  } else if (graft_tensor_num_elements(b) <= graft_tensor_num_elements(a) &&
             ex_is_trailing_broadcast(b, a)) {
    larger = a;
  } else if (ex_is_trailing_broadcast(a, b)) {
    larger = b;
  } else {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "%s with broadcasting: input shapes %s and %s differ; "
                     "the example vendor broadcasts only a single-element or "
                     "trailing-dimensions operand",
                     op->name, a_shape, b_shape);
  }
  if (!ex_same_dims(out, larger)) {
    ex_format_dims(out->dims, out->rank, out_shape, sizeof(out_shape));
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "%s output shape %s differs from the broadcast shape of "
                     "inputs %s and %s",
                     op->name, out_shape, a_shape, b_shape);
  }
  return 1;
}

static int ex_check_unary(const graft_graph_view_t* graph, const graft_op_t* op,
                          ex_refusal_t* refusal) {
  const graft_tensor_t* in = graph->tensors[op->inputs[0]];
  const graft_tensor_t* out = graph->tensors[op->outputs[0]];
  char in_shape[128], out_shape[128];
  if (!ex_same_dims(in, out)) {
    ex_format_dims(in->dims, in->rank, in_shape, sizeof(in_shape));
    ex_format_dims(out->dims, out->rank, out_shape, sizeof(out_shape));
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "%s output shape %s differs from input shape %s", op->name,
                     out_shape, in_shape);
  }
  return 1;
}

static int ex_check_fully_connected(const graft_graph_view_t* graph,
                                    const graft_op_t* op,
                                    ex_refusal_t* refusal) {
  const graft_tensor_t* in = graph->tensors[op->inputs[0]];
  const graft_tensor_t* weights = graph->tensors[op->inputs[1]];
  const graft_tensor_t* bias = NULL;
  const graft_tensor_t* out = graph->tensors[op->outputs[0]];
  const graft_attribute_t* format;
  char shape[128];
  int64_t act, units, depth, elements;
  if (op->num_inputs == 3 && op->inputs[2] >= 0) {
    bias = graph->tensors[op->inputs[2]];
  }
  if (!ex_read_activation(op, &act, refusal)) return 0;
  if (ex_int_attribute(op, GRAFT_ATTR_KEEP_NUM_DIMS) != 0) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                     "FULLY_CONNECTED with keep_num_dims=true not supported");
  }
  format = graft_op_find_attribute(op, GRAFT_ATTR_WEIGHTS_FORMAT);
  if (format != NULL && format->int_value != 0) {
    return ex_refuse(
        refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
        "FULLY_CONNECTED weights_format %s not supported "
        "(DEFAULT only)",
        format->string_value != NULL ? format->string_value : "(non-default)");
  }
  if (!ex_is_constant(weights)) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_NOT_CONSTANT,
                     "FULLY_CONNECTED weights must be constant: tensor '%s' "
                     "is computed at run time",
                     weights->name);
  }
  if (bias != NULL && !ex_is_constant(bias)) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_NOT_CONSTANT,
                     "FULLY_CONNECTED bias must be constant: tensor '%s' is "
                     "computed at run time",
                     bias->name);
  }
  if (weights->rank != 2 || weights->dims[0] < 1 || weights->dims[1] < 1) {
    ex_format_dims(weights->dims, weights->rank, shape, sizeof(shape));
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "FULLY_CONNECTED weights shape %s not supported "
                     "(expects [units,depth])",
                     shape);
  }
  units = weights->dims[0];
  depth = weights->dims[1];
  if (bias != NULL && (bias->rank != 1 || bias->dims[0] != units)) {
    ex_format_dims(bias->dims, bias->rank, shape, sizeof(shape));
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "FULLY_CONNECTED bias shape %s does not match %" PRId64
                     " units",
                     shape, units);
  }
  elements = graft_tensor_num_elements(in);
  if (elements <= 0 || elements % depth != 0) {
    ex_format_dims(in->dims, in->rank, shape, sizeof(shape));
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "FULLY_CONNECTED input shape %s is not a whole number of "
                     "rows of depth %" PRId64,
                     shape, depth);
  }
  if (out->rank != 2 || out->dims[0] != elements / depth ||
      out->dims[1] != units) {
    ex_format_dims(out->dims, out->rank, shape, sizeof(shape));
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                     "FULLY_CONNECTED output shape %s, expected [%" PRId64
                     ",%" PRId64 "]",
                     shape, elements / depth, units);
  }
  return 1;
}

/* Decides whether this vendor takes `op` (of a validated view). Returns 1,
 * or 0 with *refusal filled. */
static int ex_check_op(const graft_graph_view_t* graph, const graft_op_t* op,
                       ex_refusal_t* refusal) {
  const exb_opcode_t* entry;
  size_t expected_inputs, i;
  if (op->builtin_code == GRAFT_BUILTIN_CUSTOM) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                     "custom op '%s' not supported by the example vendor",
                     op->name);
  }
  entry = exb_opcode_for_builtin(op->builtin_code);
  if (entry == NULL) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                     "op %s not supported by the example vendor", op->name);
  }
  expected_inputs = entry->kind == EXB_KIND_BINARY  ? 2
                    : entry->kind == EXB_KIND_UNARY ? 1
                                                    : 3;
  if (op->num_outputs != 1 ||
      !(op->num_inputs == expected_inputs ||
        (entry->kind == EXB_KIND_FULLY_CONNECTED && op->num_inputs == 2))) {
    return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                     "%s with %zu inputs and %zu outputs not supported",
                     op->name, op->num_inputs, op->num_outputs);
  }
  for (i = 0; i < op->num_inputs; ++i) {
    /* Only FULLY_CONNECTED's bias (input 2) may be omitted. */
    if (op->inputs[i] < 0) {
      if (entry->kind == EXB_KIND_FULLY_CONNECTED && i == 2) continue;
      return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                       "%s with omitted input %zu not supported", op->name, i);
    }
    if (!ex_check_tensor(graph->tensors[op->inputs[i]], refusal)) return 0;
  }
  if (!ex_check_tensor(graph->tensors[op->outputs[0]], refusal)) return 0;
  /* The bytecode assigns every tensor once: an op that writes its own input
   * in place, or writes a graph input, cannot be expressed. */
  for (i = 0; i < op->num_inputs; ++i) {
    if (op->inputs[i] == op->outputs[0]) {
      return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                       "%s writes its input t%d in place; the example vendor "
                       "assigns every tensor once",
                       op->name, (int)op->outputs[0]);
    }
  }
  for (i = 0; i < graph->num_inputs; ++i) {
    if (graph->inputs[i] == op->outputs[0]) {
      return ex_refuse(refusal, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                       "%s writes the graph input t%d; the example vendor "
                       "assigns every tensor once",
                       op->name, (int)op->outputs[0]);
    }
  }
  switch (entry->kind) {
    case EXB_KIND_BINARY:
      return ex_check_binary(graph, op, refusal);
    case EXB_KIND_UNARY:
      return ex_check_unary(graph, op, refusal);
    case EXB_KIND_FULLY_CONNECTED:
      return ex_check_fully_connected(graph, op, refusal);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Plugin lifecycle                                                           */
/* ------------------------------------------------------------------------ */

static void ex_clear_reasons(graft_compiler_plugin_t* plugin) {
  size_t i;
  for (i = 0; i < plugin->num_reasons; ++i) {
    ex_free(plugin->host, plugin->reasons[i]);
  }
  plugin->num_reasons = 0;
}

/* Keeps a copy of `text` until the next partition call; NULL when out of
 * memory. */
static const char* ex_keep_reason(graft_compiler_plugin_t* plugin,
                                  const char* text) {
  void* reasons = plugin->reasons;
  char* copy;
  if (!ex_reserve(plugin->host, &reasons, &plugin->reasons_capacity,
                  sizeof(char*), plugin->num_reasons + 1)) {
    return NULL;
  }
  plugin->reasons = (char**)reasons;
  copy = ex_strdup(plugin->host, text);
  if (copy == NULL) return NULL;
  plugin->reasons[plugin->num_reasons++] = copy;
  return copy;
}

/* Index of `soc_model` in exb_soc_models, or -1 with *out_status set. */
static int ex_find_soc_model(const graft_compiler_plugin_t* plugin,
                             const char* soc_model,
                             graft_status_t** out_status) {
  size_t i;
  for (i = 0; i < EXB_NUM_SOC_MODELS; ++i) {
    if (strcmp(soc_model, exb_soc_models[i]) == 0) return (int)i;
  }
  *out_status = plugin->host->status_create_formatted(
      plugin->host, GRAFT_STATUS_NOT_FOUND,
      "example vendor: unknown SoC model '%s' (known: example-soc-1, "
      "example-soc-2)",
      soc_model);
  return -1;
}

GRAFT_EXPORT uint32_t graft_compiler_plugin_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin) {
  graft_compiler_plugin_t* plugin;
  int single_module = 0;
  int weights_in_place = 0;
  size_t i;
  if (host == NULL) return &k_null_host_status;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      host->struct_size < sizeof(graft_host_api_t)) {
    return &k_bad_host_status;
  }
  if (out_plugin == NULL || (options == NULL && num_options > 0)) {
    return &k_bad_create_args_status;
  }
  for (i = 0; i < num_options; ++i) {
    const char* key = options[i].key;
    const char* value = options[i].value;
    if (key == NULL || value == NULL) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: option %zu has a NULL key or value", i);
    }
    if (strcmp(key, "single_module") != 0 &&
        strcmp(key, "weights_in_place") != 0) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: unknown option '%s' (known: single_module, "
          "weights_in_place)",
          key);
    }
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: option %s must be 0 or 1, got '%s'", key, value);
    }
    if (strcmp(key, "single_module") == 0) {
      single_module = value[0] == '1';
    } else {
      weights_in_place = value[0] == '1';
    }
  }
  plugin = (graft_compiler_plugin_t*)ex_alloc(host, sizeof(*plugin));
  if (plugin == NULL) {
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "example vendor: out of memory");
  }
  memset(plugin, 0, sizeof(*plugin));
  plugin->host = host;
  plugin->single_module = single_module;
  plugin->weights_in_place = weights_in_place;
  plugin->info.struct_size = sizeof(plugin->info);
  plugin->info.abi_version = GRAFT_ABI_VERSION;
  plugin->info.flags = 0;
  plugin->info.vendor = EXB_VENDOR;
  plugin->info.plugin_version = EX_PLUGIN_VERSION;
  plugin->info.description =
      "teaching vendor: float32 elementwise ops and FULLY_CONNECTED, "
      "readable text bytecode";
  plugin->info.soc_models = exb_soc_models;
  plugin->info.num_soc_models = EXB_NUM_SOC_MODELS;
  plugin->info.hardware_kinds = GRAFT_HARDWARE_KIND_CPU;
  plugin->info.bytecode_format_version = EXB_FORMAT_VERSION;
  plugin->info.options = k_options;
  plugin->info.num_options = sizeof(k_options) / sizeof(k_options[0]);
  *out_plugin = plugin;
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_destroy(
    graft_compiler_plugin_t* plugin) {
  if (plugin == NULL) return;
  ex_clear_reasons(plugin);
  ex_free(plugin->host, plugin->reasons);
  ex_free(plugin->host, plugin);
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_get_info(
    const graft_compiler_plugin_t* plugin,
    const graft_compiler_plugin_info_t** out_info) {
  if (plugin == NULL) return &k_null_plugin_status;
  if (out_info == NULL) {
    return plugin->host->status_create(
        plugin->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example vendor: get_info: out_info is NULL");
  }
  *out_info = &plugin->info;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_check_compatibility(
    graft_compiler_plugin_t* plugin, const char* soc_model) {
  graft_status_t* status = NULL;
  if (plugin == NULL) return &k_null_plugin_status;
  if (soc_model == NULL) {
    return plugin->host->status_create(
        plugin->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example vendor: check_compatibility: soc_model is NULL");
  }
  ex_find_soc_model(plugin, soc_model, &status);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Partition                                                                  */
/* ------------------------------------------------------------------------ */

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_partition(
    graft_compiler_plugin_t* plugin, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out_result) {
  const graft_host_api_t* host;
  graft_status_t* status = NULL;
  size_t i;
  if (plugin == NULL) return &k_null_plugin_status;
  host = plugin->host;
  if (graph == NULL || soc_model == NULL || out_result == NULL) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example vendor: partition: graph, soc_model "
                               "and out_result are required");
  }
  if (!GRAFT_STRUCT_HAS_MEMBER(out_result, graft_partition_result_t,
                               num_decisions) ||
      (out_result->decisions == NULL && out_result->num_decisions > 0)) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example vendor: partition: out_result is "
                               "malformed (small struct_size or NULL "
                               "decisions)");
  }
  if (ex_find_soc_model(plugin, soc_model, &status) < 0) return status;
  status = ex_validate_view(plugin, graph, "partition");
  if (status != NULL) return status;
  if (out_result->num_decisions != graph->num_ops) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example vendor: partition: %zu decisions for %zu ops",
        out_result->num_decisions, graph->num_ops);
  }
  /* Reasons of the previous call may be dropped now (their lifetime ends
   * with this call's start). */
  ex_clear_reasons(plugin);
  for (i = 0; i < graph->num_ops; ++i) {
    graft_op_decision_t* decision = &out_result->decisions[i];
    ex_refusal_t refusal;
    memset(decision, 0, sizeof(*decision));
    if (ex_check_op(graph, graph->ops[i], &refusal)) {
      decision->taken = 1;
      decision->group_id = 0;
      continue;
    }
    decision->reason_code = refusal.code;
    decision->reason = ex_keep_reason(plugin, refusal.text);
    if (decision->reason == NULL) {
      return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                                 "example vendor: out of memory");
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Compile                                                                    */
/* ------------------------------------------------------------------------ */

/* The plugin's result: the public struct first, so the pointer handed to the
 * host converts back. */
typedef struct {
  graft_compiled_result_t base;
  const graft_host_api_t* host;
  graft_compatibility_stamp_t stamp;
  graft_byte_span_t* modules;
  char** module_texts;
  size_t num_modules;
  graft_compiled_call_t* calls;
  char** entry_points;
  size_t num_calls;
  graft_debug_map_entry_t* debug_map;
  size_t num_debug_map_entries;
  size_t debug_map_capacity;
} ex_result_t;

static void ex_result_free(ex_result_t* result) {
  const graft_host_api_t* host = result->host;
  size_t i;
  for (i = 0; i < result->num_modules; ++i) {
    ex_free(host, result->module_texts[i]);
  }
  for (i = 0; i < result->num_calls; ++i) {
    ex_free(host, result->entry_points[i]);
  }
  ex_free(host, result->modules);
  ex_free(host, result->module_texts);
  ex_free(host, result->calls);
  ex_free(host, result->entry_points);
  ex_free(host, result->debug_map);
  ex_free(host, result);
}

/* The bytecode's name of TFLite activation `act` (one partition accepted). */
static const char* ex_activation_name(int64_t act) {
  exb_act_t bytecode_act = EXB_ACT_NONE;
  exb_act_from_tflite(act, &bytecode_act);
  return exb_act_name(bytecode_act);
}

static void ex_emit_type(ex_text_t* text, const graft_tensor_t* tensor) {
  size_t i;
  ex_text_append(text, " f32[");
  for (i = 0; i < tensor->rank; ++i) {
    ex_text_append(text, "%s%" PRId64, i == 0 ? "" : ",", tensor->dims[i]);
  }
  ex_text_append(text, "]");
}

/* Constant values as the hex IEEE-754 bit patterns of little-endian float32,
 * 8 per "data" line: exact, and identical on every platform. */
static void ex_emit_data(ex_text_t* text, const graft_tensor_t* tensor) {
  size_t count = tensor->data.size / 4, i;
  for (i = 0; i < count; ++i) {
    const uint8_t* bytes = tensor->data.data + i * 4;
    uint32_t bits = (uint32_t)bytes[0] | ((uint32_t)bytes[1] << 8) |
                    ((uint32_t)bytes[2] << 16) | ((uint32_t)bytes[3] << 24);
    ex_text_append(text, "%s%08" PRIx32, i % 8 == 0 ? "    data " : " ", bits);
    if (i % 8 == 7 || i + 1 == count) ex_text_append(text, "\n");
  }
}

/* Tensor roles while emitting one entry. */
enum { EX_ROLE_UNUSED = 0, EX_ROLE_INPUT, EX_ROLE_CONST, EX_ROLE_PRODUCED };

/* Appends the entry for partitions[partition_index] to `text` and its debug
 * map entries to `result`. The view is validated and every op checked
 * before anything is written. */
static graft_status_t* ex_emit_entry(graft_compiler_plugin_t* plugin,
                                     const graft_graph_view_t* graph,
                                     size_t partition_index,
                                     size_t module_index, ex_text_t* text,
                                     ex_result_t* result) {
  const graft_host_api_t* host = plugin->host;
  graft_status_t* status;
  unsigned char* roles;
  size_t i, j;
  char what[64];
  snprintf(what, sizeof(what), "compile: partition %zu", partition_index);
  status = ex_validate_view(plugin, graph, what);
  if (status != NULL) return status;
  for (i = 0; i < graph->num_ops; ++i) {
    ex_refusal_t refusal;
    if (!ex_check_op(graph, graph->ops[i], &refusal)) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: partition %zu op %zu (%s) cannot be compiled: %s",
          partition_index, i, graph->ops[i]->name, refusal.text);
    }
  }
  if (graph->num_outputs == 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example vendor: partition %zu has no outputs", partition_index);
  }
  /* Data flow: every value is an input, a constant, or written by exactly
   * one earlier op. */
  roles = (unsigned char*)ex_alloc(host, graph->num_tensors + 1);
  if (roles == NULL) {
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "example vendor: out of memory");
  }
  memset(roles, EX_ROLE_UNUSED, graph->num_tensors + 1);
  for (i = 0; i < graph->num_tensors; ++i) {
    if (ex_is_constant(graph->tensors[i])) roles[i] = EX_ROLE_CONST;
  }
  for (i = 0; i < graph->num_inputs; ++i) {
    int32_t t = graph->inputs[i];
    if (roles[t] != EX_ROLE_UNUSED) {
      ex_free(host, roles);
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: partition %zu input t%" PRId32
          " is constant or listed twice",
          partition_index, t);
    }
    roles[t] = EX_ROLE_INPUT;
  }
  for (i = 0; i < graph->num_ops; ++i) {
    const graft_op_t* op = graph->ops[i];
    for (j = 0; j < op->num_inputs; ++j) {
      if (op->inputs[j] >= 0 && roles[op->inputs[j]] == EX_ROLE_UNUSED) {
        ex_free(host, roles);
        return host->status_create_formatted(
            host, GRAFT_STATUS_INVALID_ARGUMENT,
            "example vendor: partition %zu op %zu reads t%" PRId32
            " before anything writes it",
            partition_index, i, op->inputs[j]);
      }
    }
    if (roles[op->outputs[0]] != EX_ROLE_UNUSED) {
      ex_free(host, roles);
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: partition %zu op %zu writes t%" PRId32
          ", which is an input, a constant or written twice",
          partition_index, i, op->outputs[0]);
    }
    roles[op->outputs[0]] = EX_ROLE_PRODUCED;
  }
  for (i = 0; i < graph->num_outputs; ++i) {
    int32_t t = graph->outputs[i];
    if (roles[t] != EX_ROLE_PRODUCED && roles[t] != EX_ROLE_INPUT) {
      ex_free(host, roles);
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: partition %zu output t%" PRId32 " is never written",
          partition_index, t);
    }
  }
  /* Constants no op reads are left out. */
  for (i = 0; i < graph->num_tensors; ++i) {
    if (roles[i] == EX_ROLE_CONST) roles[i] = EX_ROLE_UNUSED;
  }
  for (i = 0; i < graph->num_ops; ++i) {
    const graft_op_t* op = graph->ops[i];
    for (j = 0; j < op->num_inputs; ++j) {
      int32_t t = op->inputs[j];
      if (t >= 0 && ex_is_constant(graph->tensors[t])) {
        roles[t] = EX_ROLE_CONST;
      }
    }
  }

  ex_text_append(text, "entry partition_%zu\n", partition_index);
  for (i = 0; i < graph->num_inputs; ++i) {
    ex_text_append(text, "  input t%" PRId32, graph->inputs[i]);
    ex_emit_type(text, graph->tensors[graph->inputs[i]]);
    ex_text_append(text, "\n");
  }
  for (i = 0; i < graph->num_tensors; ++i) {
    if (roles[i] != EX_ROLE_CONST) continue;
    ex_text_append(text, "  const t%zu", i);
    ex_emit_type(text, graph->tensors[i]);
    if (plugin->weights_in_place && graph->tensors[i]->buffer_id >= 0) {
      ex_text_append(text, " buffer %" PRId64 "\n",
                     graph->tensors[i]->buffer_id);
    } else {
      ex_text_append(text, "\n");
      ex_emit_data(text, graph->tensors[i]);
    }
  }
  for (i = 0; i < graph->num_tensors; ++i) {
    if (roles[i] != EX_ROLE_PRODUCED) continue;
    ex_text_append(text, "  tensor t%zu", i);
    ex_emit_type(text, graph->tensors[i]);
    ex_text_append(text, "\n");
  }
  ex_free(host, roles);

  for (i = 0; i < graph->num_ops; ++i) {
    const graft_op_t* op = graph->ops[i];
    const exb_opcode_t* entry = exb_opcode_for_builtin(op->builtin_code);
    graft_debug_map_entry_t* map_entry;
    void* debug_map = result->debug_map;
    int64_t act = GRAFT_ACTIVATION_FUNCTION_TYPE_NONE;
    ex_refusal_t unused;
    if (!ex_reserve(host, &debug_map, &result->debug_map_capacity,
                    sizeof(graft_debug_map_entry_t),
                    result->num_debug_map_entries + 1)) {
      return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                                 "example vendor: out of memory");
    }
    result->debug_map = (graft_debug_map_entry_t*)debug_map;
    map_entry = &result->debug_map[result->num_debug_map_entries++];
    map_entry->module_index = module_index;
    map_entry->vendor_location = text->lines + 1;
    map_entry->original_op_index = op->original_op_index;
    map_entry->partition_index = (int32_t)partition_index;

    ex_text_append(text, "  %s t%" PRId32 " = t%" PRId32, entry->name,
                   op->outputs[0], op->inputs[0]);
    switch (entry->kind) {
      case EXB_KIND_UNARY:
        ex_text_append(text, "\n");
        break;
      case EXB_KIND_BINARY:
        ex_read_activation(op, &act, &unused);
        ex_text_append(text, ", t%" PRId32 " act=%s\n", op->inputs[1],
                       ex_activation_name(act));
        break;
      case EXB_KIND_FULLY_CONNECTED:
        ex_read_activation(op, &act, &unused);
        ex_text_append(text, ", t%" PRId32, op->inputs[1]);
        if (op->num_inputs == 3 && op->inputs[2] >= 0) {
          ex_text_append(text, ", t%" PRId32, op->inputs[2]);
        } else {
          ex_text_append(text, ", -");
        }
        ex_text_append(text, " act=%s\n", ex_activation_name(act));
        break;
    }
  }
  for (i = 0; i < graph->num_outputs; ++i) {
    ex_text_append(text, "  output t%" PRId32 "\n", graph->outputs[i]);
  }
  ex_text_append(text, "end\n");
  return NULL;
}

static void ex_begin_module(ex_text_t* text, const graft_host_api_t* host,
                            const char* soc_model) {
  memset(text, 0, sizeof(*text));
  text->host = host;
  ex_text_append(text, EXB_MAGIC " v%u\n", EXB_FORMAT_VERSION);
  ex_text_append(text, "soc %s\n", soc_model);
}

/* Moves a finished module text into the result. On failure frees it. */
static graft_status_t* ex_add_module(ex_result_t* result, ex_text_t* text) {
  const graft_host_api_t* host = result->host;
  if (text->failed) {
    ex_free(host, text->data);
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "example vendor: out of memory");
  }
  result->module_texts[result->num_modules] = text->data;
  result->modules[result->num_modules].data = (const uint8_t*)text->data;
  result->modules[result->num_modules].size = text->size;
  ++result->num_modules;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_compile(
    graft_compiler_plugin_t* plugin, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t num_partitions,
    graft_compiled_result_t** out_result) {
  const graft_host_api_t* host;
  graft_status_t* status = NULL;
  ex_result_t* result;
  ex_text_t text;
  size_t i, num_modules;
  int soc_index;
  if (plugin == NULL) return &k_null_plugin_status;
  host = plugin->host;
  if (soc_model == NULL || partitions == NULL || num_partitions == 0 ||
      out_result == NULL) {
    return host->status_create(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example vendor: compile: soc_model, partitions (at least one) and "
        "out_result are required");
  }
  for (i = 0; i < num_partitions; ++i) {
    if (partitions[i] == NULL) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "example vendor: compile: partition %zu is NULL", i);
    }
  }
  soc_index = ex_find_soc_model(plugin, soc_model, &status);
  if (soc_index < 0) return status;
  if (num_partitions > (size_t)INT32_MAX) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example vendor: compile: too many partitions");
  }

  num_modules = plugin->single_module ? 1 : num_partitions;
  result = (ex_result_t*)ex_alloc(host, sizeof(*result));
  if (result == NULL) {
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "example vendor: out of memory");
  }
  memset(result, 0, sizeof(*result));
  result->host = host;
  result->modules = (graft_byte_span_t*)ex_alloc(
      host, num_modules * sizeof(graft_byte_span_t));
  result->module_texts = (char**)ex_alloc(host, num_modules * sizeof(char*));
  result->calls = (graft_compiled_call_t*)ex_alloc(
      host, num_partitions * sizeof(graft_compiled_call_t));
  result->entry_points = (char**)ex_alloc(host, num_partitions * sizeof(char*));
  if (result->modules == NULL || result->module_texts == NULL ||
      result->calls == NULL || result->entry_points == NULL) {
    ex_result_free(result);
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "example vendor: out of memory");
  }

  for (i = 0; i < num_partitions; ++i) {
    char entry_point[32];
    size_t module_index = plugin->single_module ? 0 : i;
    if (i == 0 || !plugin->single_module) {
      ex_begin_module(&text, host, exb_soc_models[soc_index]);
    }
    status =
        ex_emit_entry(plugin, partitions[i], i, module_index, &text, result);
    if (status == NULL && (!plugin->single_module || i + 1 == num_partitions)) {
      status = ex_add_module(result, &text);
    } else if (status != NULL) {
      ex_free(host, text.data);
    }
    if (status == NULL) {
      snprintf(entry_point, sizeof(entry_point), "partition_%zu", i);
      result->entry_points[i] = ex_strdup(host, entry_point);
      if (result->entry_points[i] == NULL) {
        status = host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                                     "example vendor: out of memory");
      } else {
        result->calls[i].entry_point = result->entry_points[i];
        result->calls[i].module_index = module_index;
        result->num_calls = i + 1;
      }
    }
    if (status != NULL) {
      /* A single module still being written was freed above. */
      ex_result_free(result);
      return status;
    }
  }

  result->stamp.struct_size = sizeof(result->stamp);
  result->stamp.abi_version = GRAFT_ABI_VERSION;
  result->stamp.bytecode_format_version = EXB_FORMAT_VERSION;
  result->stamp.vendor = EXB_VENDOR;
  result->stamp.plugin_version = EX_PLUGIN_VERSION;
  result->stamp.soc_model = exb_soc_models[soc_index];

  result->base.struct_size = sizeof(result->base);
  result->base.stamp = &result->stamp;
  result->base.modules = result->modules;
  result->base.num_modules = result->num_modules;
  result->base.calls = result->calls;
  result->base.num_calls = result->num_calls;
  result->base.debug_map = result->debug_map;
  result->base.num_debug_map_entries = result->num_debug_map_entries;
  *out_result = &result->base;
  return NULL;
}

GRAFT_EXPORT void graft_compiler_plugin_compiled_result_destroy(
    graft_compiled_result_t* result) {
  if (result == NULL) return;
  ex_result_free((ex_result_t*)result);
}
