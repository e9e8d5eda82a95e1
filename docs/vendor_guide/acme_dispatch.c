/* The vendor guide's dispatch library (docs/vendor_guide.md): the run-time
 * half of the imaginary "acme" NPU, which runs the bytecode that
 * acme_compiler_plugin.c writes. Here the "NPU" is a loop on the host CPU;
 * a real library would hand the program to its driver in
 * invocation_create and start it in invoke.
 *
 * The bytecode (format version 1) is text, one line each, and says
 * everything the library needs to know, so nothing is guessed:
 *
 *   acme v1 acme-npu-1           format version, SoC model
 *   input t1 16                  a call input: tensor id, float32 elements
 *   const t3 1 buffer 4          a constant: the model's buffer 4, in place
 *   tensor t2 16                 an intermediate the library allocates
 *   output t4 16                 a call output
 *   add t1 t0 -> t2              d[i] = a[i mod n(a)] + b[i mod n(b)]
 *   mul t2 t3 -> t4              (n(a) and n(b) are n(d) or 1)
 *
 * Inputs and outputs are listed in the order the host attaches them.
 * Plain C99 against Graft's headers only; exports only the 12 required
 * functions of graft_dispatch.h (no async, no profiling: capabilities 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graft_dispatch.h"
#include "graft_vendor_helper.h"

#define ACME_MAX_ELEMENTS (1 << 26)
#define ACME_MAX_TENSORS 1024

typedef enum {
  ACME_UNUSED,
  ACME_INPUT,
  ACME_OUTPUT,
  ACME_CONST,
  ACME_TEMP
} acme_kind_t;

typedef struct {
  acme_kind_t kind;
  size_t count; /* float32 elements */
  float* data;  /* attached (input, output) or owned (const, temp) */
  int written;  /* by an earlier instruction (while parsing) */
} acme_tensor_t;

typedef struct {
  char op; /* '+' or '*' */
  int a, b, d;
} acme_instruction_t;

/* For calls whose arguments leave no host table to make a status with. The
 * ABI promises a status, never a crash, for NULL arguments. */
static graft_status_t k_null_argument = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "acme: a required argument is NULL");

struct graft_dispatch_t {
  const graft_host_api_t* host;
  graft_dispatch_info_t info;
};

struct graft_dispatch_device_context_t {
  graft_dispatch_t* dispatch;
};

struct graft_dispatch_invocation_t {
  const graft_host_api_t* host;
  acme_tensor_t tensors[ACME_MAX_TENSORS];
  int inputs[ACME_MAX_TENSORS], outputs[ACME_MAX_TENSORS];
  size_t num_inputs, num_outputs;
  acme_instruction_t* program;
  size_t num_instructions;
};

GRAFT_EXPORT uint32_t graft_dispatch_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out_dispatch) {
  graft_status_t* status = graft_vendor_check_host(host);
  graft_dispatch_t* d;
  if (status != NULL) return status;
  if (out_dispatch == NULL) return &k_null_argument;
  /* acme takes no options: any key is refused, by name. */
  status =
      graft_vendor_check_options(host, "acme", options, num_options, NULL, 0);
  if (status != NULL) return status;
  d = calloc(1, sizeof(*d));
  if (d == NULL) {
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "acme: out of memory");
  }
  d->host = host;
  d->info.struct_size = sizeof(d->info);
  d->info.abi_version = GRAFT_ABI_VERSION;
  d->info.vendor = "acme"; /* the plugin's vendor name */
  d->info.library_version = "0.1.0";
  d->info.build_id = "";
  d->info.description = "vendor guide dispatch library: float32 ADD, MUL";
  d->info.hardware_kinds = GRAFT_HARDWARE_KIND_NPU;
  d->info.min_bytecode_format_version = 1;
  d->info.max_bytecode_format_version = 1;
  *out_dispatch = d;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_destroy(graft_dispatch_t* d) { free(d); }

GRAFT_EXPORT graft_status_t* graft_dispatch_get_info(
    const graft_dispatch_t* d, const graft_dispatch_info_t** out_info) {
  if (d == NULL || out_info == NULL) return &k_null_argument;
  *out_info = &d->info;
  return NULL;
}

/* Can bytecode made as `stamp` says run here? Say which field differs. */
GRAFT_EXPORT graft_status_t* graft_dispatch_check_compatibility(
    graft_dispatch_t* d, const graft_compatibility_stamp_t* stamp) {
  graft_status_t* status;
  if (d == NULL) return &k_null_argument;
  status = GRAFT_VENDOR_CHECK_STRUCT(d->host, "acme", stamp,
                                     graft_compatibility_stamp_t, soc_model);
  if (status != NULL) return status;
  if (stamp->vendor == NULL || strcmp(stamp->vendor, "acme") != 0) {
    return d->host->status_create_formatted(
        d->host, GRAFT_STATUS_FAILED_PRECONDITION,
        "acme: bytecode of vendor '%s', not acme",
        stamp->vendor ? stamp->vendor : "");
  }
  if (stamp->bytecode_format_version != 1) {
    return d->host->status_create_formatted(
        d->host, GRAFT_STATUS_FAILED_PRECONDITION,
        "acme: bytecode format %u; this library runs format 1",
        stamp->bytecode_format_version);
  }
  if (stamp->soc_model == NULL || strcmp(stamp->soc_model, "acme-npu-1") != 0) {
    return d->host->status_create_formatted(
        d->host, GRAFT_STATUS_FAILED_PRECONDITION,
        "acme: compiled for SoC '%s'; this device is acme-npu-1",
        stamp->soc_model ? stamp->soc_model : "");
  }
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_device_context_create(
    graft_dispatch_t* d, const graft_key_value_t* options, size_t num_options,
    graft_dispatch_device_context_t** out_context) {
  graft_dispatch_device_context_t* c;
  graft_status_t* status;
  if (d == NULL || out_context == NULL) return &k_null_argument;
  status = graft_vendor_check_options(d->host, "acme", options, num_options,
                                      NULL, 0);
  if (status != NULL) return status;
  c = calloc(1, sizeof(*c));
  if (c == NULL) {
    return d->host->status_create(d->host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                                  "acme: out of memory");
  }
  c->dispatch = d;
  *out_context = c;
  return NULL;
}

GRAFT_EXPORT void graft_dispatch_device_context_destroy(
    graft_dispatch_device_context_t* c) {
  free(c);
}

GRAFT_EXPORT void graft_dispatch_invocation_destroy(
    graft_dispatch_invocation_t* inv) {
  size_t i;
  if (inv == NULL) return;
  for (i = 0; i < ACME_MAX_TENSORS; ++i) {
    if (inv->tensors[i].kind == ACME_CONST || inv->tensors[i].kind == ACME_TEMP)
      free(inv->tensors[i].data);
  }
  free(inv->program);
  free(inv);
}

/* Parses and checks one line of bytecode into `inv`; "" when it is good,
 * otherwise what is wrong with it. */
static const char* acme_parse_line(
    graft_dispatch_invocation_t* inv, const char* line,
    const graft_dispatch_invocation_desc_t* desc) {
  char word[16], op[8], arrow[4];
  int id, a, b, dst, consumed = 0;
  unsigned long count, buffer;
  if (sscanf(line, "%15s t%d %lu%n", word, &id, &count, &consumed) == 3 &&
      strcmp(word, "add") != 0 && strcmp(word, "mul") != 0) {
    acme_tensor_t* t;
    if (id < 0 || id >= ACME_MAX_TENSORS) return "tensor id out of range";
    if (count > ACME_MAX_ELEMENTS) return "tensor too large";
    t = &inv->tensors[id];
    if (t->kind != ACME_UNUSED) return "tensor declared twice";
    t->count = count;
    if (strcmp(word, "input") == 0) {
      t->kind = ACME_INPUT;
      t->written = 1;
      inv->inputs[inv->num_inputs++] = id;
    } else if (strcmp(word, "output") == 0) {
      t->kind = ACME_OUTPUT;
      inv->outputs[inv->num_outputs++] = id;
    } else if (strcmp(word, "tensor") == 0) {
      t->kind = ACME_TEMP;
      t->data = calloc(count ? count : 1, sizeof(float));
      if (t->data == NULL) return "out of memory";
    } else if (strcmp(word, "const") == 0 &&
               sscanf(line + consumed, " buffer %lu", &buffer) == 1) {
      /* The weights stay in the model; the host lends every buffer by id.
       * They are copied once here because the file promises no alignment. */
      t->kind = ACME_CONST;
      t->written = 1;
      if (!GRAFT_STRUCT_HAS_MEMBER(desc, graft_dispatch_invocation_desc_t,
                                   num_model_buffers) ||
          buffer >= desc->num_model_buffers ||
          desc->model_buffers[buffer].size != count * sizeof(float)) {
        return "constant buffer missing or of the wrong size";
      }
      t->data = malloc(count ? count * sizeof(float) : 1);
      if (t->data == NULL) return "out of memory";
      memcpy(t->data, desc->model_buffers[buffer].data, count * sizeof(float));
    } else {
      return "unknown declaration";
    }
    return "";
  }
  if (sscanf(line, "%7s t%d t%d %3s t%d", op, &a, &b, arrow, &dst) == 5 &&
      strcmp(arrow, "->") == 0) {
    acme_instruction_t* i = &inv->program[inv->num_instructions];
    if (strcmp(op, "add") == 0) {
      i->op = '+';
#ifdef ACME_WITH_MUL
    } else if (strcmp(op, "mul") == 0) {
      i->op = '*';
#endif
    } else {
      return "unknown instruction";
    }
    if (a < 0 || a >= ACME_MAX_TENSORS || b < 0 || b >= ACME_MAX_TENSORS ||
        dst < 0 || dst >= ACME_MAX_TENSORS) {
      return "tensor id out of range";
    }
    if (!inv->tensors[a].written || !inv->tensors[b].written)
      return "reads a tensor that is not declared or not yet written";
    if ((inv->tensors[dst].kind != ACME_TEMP &&
         inv->tensors[dst].kind != ACME_OUTPUT) ||
        inv->tensors[dst].written) {
      return "writes a tensor that is not a tensor or output, or twice";
    }
    if ((inv->tensors[a].count != 1 &&
         inv->tensors[a].count != inv->tensors[dst].count) ||
        (inv->tensors[b].count != 1 &&
         inv->tensors[b].count != inv->tensors[dst].count) ||
        inv->tensors[a].count == 0 || inv->tensors[b].count == 0) {
      return "operand sizes differ from the destination's";
    }
    i->a = a, i->b = b, i->d = dst;
    inv->tensors[dst].written = 1;
    ++inv->num_instructions;
    return "";
  }
  return "not an acme instruction";
}

/* Everything expensive happens here, once: parse, check, allocate. */
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_create(
    graft_dispatch_device_context_t* c,
    const graft_dispatch_invocation_desc_t* desc,
    graft_dispatch_invocation_t** out_invocation) {
  const graft_host_api_t* host;
  graft_dispatch_invocation_t* inv;
  const char* text;
  const char* end;
  char line[128];
  size_t line_number = 1, i;
  graft_status_t* status;
  if (c == NULL || out_invocation == NULL) return &k_null_argument;
  host = c->dispatch->host;
  status = GRAFT_VENDOR_CHECK_STRUCT(host, "acme", desc,
                                     graft_dispatch_invocation_desc_t, flags);
  if (status != NULL) return status;
  if (desc->bytecode.data == NULL || desc->bytecode.size == 0) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "acme: empty bytecode");
  }
  /* acme's plugin names its one entry point per module "main". */
  if (desc->entry_point == NULL || strcmp(desc->entry_point, "main") != 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_NOT_FOUND, "acme: no entry point '%s' (only main)",
        desc->entry_point ? desc->entry_point : "");
  }
  text = (const char*)desc->bytecode.data;
  end = text + desc->bytecode.size;
  inv = calloc(1, sizeof(*inv));
  if (inv != NULL)
    inv->program = calloc(desc->bytecode.size, sizeof(*inv->program));
  if (inv == NULL || inv->program == NULL) {
    graft_dispatch_invocation_destroy(inv);
    return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                               "acme: out of memory");
  }
  inv->host = host;
  for (; text < end; ++line_number) {
    const char* newline = memchr(text, '\n', (size_t)(end - text));
    size_t length = (size_t)((newline ? newline : end) - text);
    const char* problem = "line too long";
    if (length < sizeof(line)) {
      memcpy(line, text, length);
      line[length] = '\0';
      if (line_number == 1) {
        problem = strcmp(line, "acme v1 acme-npu-1") == 0
                      ? ""
                      : "not acme bytecode v1 for acme-npu-1";
      } else {
        problem = acme_parse_line(inv, line, desc);
      }
    }
    if (problem[0] != '\0') {
      graft_dispatch_invocation_destroy(inv);
      return host->status_create_formatted(host, GRAFT_STATUS_INVALID_ARGUMENT,
                                           "acme: bytecode line %zu: %s",
                                           line_number, problem);
    }
    text = newline ? newline + 1 : end;
  }
  for (i = 0; i < inv->num_outputs && status == NULL; ++i) {
    if (!inv->tensors[inv->outputs[i]].written) {
      status = host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "acme: output t%d is never written", inv->outputs[i]);
    }
  }
  if (status == NULL && (inv->num_inputs != desc->num_inputs ||
                         inv->num_outputs != desc->num_outputs)) {
    status = host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "acme: the bytecode has %zu inputs and %zu outputs, the host %zu and "
        "%zu",
        inv->num_inputs, inv->num_outputs, desc->num_inputs, desc->num_outputs);
  }
  if (status != NULL) {
    graft_dispatch_invocation_destroy(inv);
    return status;
  }
  *out_invocation = inv;
  return NULL;
}

/* The tensor of input or output `index`, or NULL. */
static acme_tensor_t* acme_io(graft_dispatch_invocation_t* inv,
                              graft_dispatch_io_kind_t kind, size_t index) {
  if (kind == GRAFT_DISPATCH_IO_KIND_INPUT && index < inv->num_inputs)
    return &inv->tensors[inv->inputs[index]];
  if (kind == GRAFT_DISPATCH_IO_KIND_OUTPUT && index < inv->num_outputs)
    return &inv->tensors[inv->outputs[index]];
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_buffer_requirements(
    const graft_dispatch_invocation_t* inv, graft_dispatch_io_kind_t kind,
    size_t index, graft_dispatch_buffer_requirements_t* out) {
  const acme_tensor_t* t;
  graft_status_t* status;
  if (inv == NULL) return &k_null_argument;
  status = GRAFT_VENDOR_CHECK_STRUCT(inv->host, "acme", out,
                                     graft_dispatch_buffer_requirements_t,
                                     element_type);
  if (status != NULL) return status;
  t = acme_io((graft_dispatch_invocation_t*)inv, kind, index);
  if (t == NULL) {
    return inv->host->status_create_formatted(
        inv->host, GRAFT_STATUS_OUT_OF_RANGE, "acme: no %s %zu",
        kind == GRAFT_DISPATCH_IO_KIND_INPUT ? "input" : "output", index);
  }
  out->size = t->count * sizeof(float);
  out->alignment = sizeof(float);
  out->element_type = GRAFT_ELEMENT_TYPE_FLOAT32;
  return NULL;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_attach_host_memory(
    graft_dispatch_invocation_t* inv, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size) {
  acme_tensor_t* t;
  if (inv == NULL) return &k_null_argument;
  t = acme_io(inv, kind, index);
  if (t == NULL || data == NULL || size < t->count * sizeof(float)) {
    return inv->host->status_create_formatted(
        inv->host, GRAFT_STATUS_INVALID_ARGUMENT,
        "acme: cannot attach %zu bytes at %p to %s %zu", size, data,
        kind == GRAFT_DISPATCH_IO_KIND_INPUT ? "input" : "output", index);
  }
  t->data = (float*)data;
  return NULL;
}

/* The hot path: arithmetic only, no allocation, no parsing. */
GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke(
    graft_dispatch_invocation_t* inv) {
  size_t i, k;
  if (inv == NULL) return &k_null_argument;
  for (i = 0; i < inv->num_inputs + inv->num_outputs; ++i) {
    if (acme_io(inv,
                i < inv->num_inputs ? GRAFT_DISPATCH_IO_KIND_INPUT
                                    : GRAFT_DISPATCH_IO_KIND_OUTPUT,
                i < inv->num_inputs ? i : i - inv->num_inputs)
            ->data == NULL) {
      return inv->host->status_create(inv->host,
                                      GRAFT_STATUS_FAILED_PRECONDITION,
                                      "acme: invoke before every input and "
                                      "output is attached");
    }
  }
  for (i = 0; i < inv->num_instructions; ++i) {
    const acme_instruction_t* in = &inv->program[i];
    const acme_tensor_t* a = &inv->tensors[in->a];
    const acme_tensor_t* b = &inv->tensors[in->b];
    acme_tensor_t* d = &inv->tensors[in->d];
    for (k = 0; k < d->count; ++k) {
      const float x = a->data[k % a->count], y = b->data[k % b->count];
      d->data[k] = in->op == '+' ? x + y : x * y;
    }
  }
  return NULL;
}
