/* The example dispatch library's text parser (BYTECODE.md).
 *
 * Reads one entry point of a module line by line (fields split on blanks
 * and commas outside [...], blank and '#' lines skipped), checks the header,
 * the SoC line and the outline of every entry, and parses the requested
 * entry completely: declarations, constant data, instructions with their
 * operands resolved to tensor slots and their shapes checked against the
 * bytecode's rules (example_bytecode.h), inputs and outputs. Malformed
 * bytecode is a status naming the entry, the line and an excerpt of it,
 * never a crash. What it builds, example_dispatch.c lays out and runs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_dispatch_internal.h"

/* ------------------------------------------------------------------------ */
/* Memory and text helpers                                                    */
/* ------------------------------------------------------------------------ */

int exd_reserve(const graft_host_api_t* host, void** items, size_t* capacity,
                size_t item_size, size_t needed) {
  size_t new_capacity;
  void* grown;
  if (needed <= *capacity) return 1;
  new_capacity = *capacity < 8 ? 8 : *capacity;
  while (new_capacity < needed) {
    if (new_capacity > SIZE_MAX / 2) return 0;
    new_capacity *= 2;
  }
  if (new_capacity > SIZE_MAX / item_size) return 0;
  grown = exd_alloc(host, new_capacity * item_size, 0);
  if (grown == NULL) return 0;
  if (*items != NULL) {
    memcpy(grown, *items, *capacity * item_size);
    exd_free(host, *items);
  }
  *items = grown;
  *capacity = new_capacity;
  return 1;
}

/* Copies at most 60 characters of text[0, length) into `out` for a message:
 * leading blanks dropped, bytes outside printable ASCII shown as '?', so a
 * message stays one line of valid UTF-8 whatever the bytecode holds. */
void exd_excerpt(const char* text, size_t length, char* out, size_t out_size) {
  const size_t limit = 60;
  size_t i = 0, used = 0;
  while (i < length && (text[i] == ' ' || text[i] == '\t')) ++i;
  while (i < length && used + 4 < out_size && used < limit) {
    unsigned char c = (unsigned char)text[i++];
    out[used++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  while (used > 0 && (out[used - 1] == ' ' || out[used - 1] == '\r')) --used;
  if (i < length && used + 4 <= out_size) {
    memcpy(out + used, "...", 3);
    used += 3;
  }
  out[used] = '\0';
}

int exd_find_soc(const char* text, size_t length) {
  size_t i;
  for (i = 0; i < EXB_NUM_SOC_MODELS; ++i) {
    if (strlen(exb_soc_models[i]) == length &&
        memcmp(exb_soc_models[i], text, length) == 0) {
      return (int)i;
    }
  }
  return -1;
}

graft_status_t* exd_check_soc(const graft_dispatch_t* dispatch,
                              const char* text, size_t length) {
  const graft_host_api_t* host = dispatch->host;
  const char* device = exb_soc_models[dispatch->device_soc];
  char name[72];
  int soc = exd_find_soc(text, length);
  exd_excerpt(text, length, name, sizeof(name));
  if (soc < 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "example dispatch: bytecode compiled for unknown SoC model '%s'; this "
        "device (%s) runs bytecode for example-soc-1 and example-soc-2 only",
        name, device);
  }
  if ((size_t)soc > dispatch->device_soc) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "example dispatch: bytecode compiled for SoC model '%s' cannot run on "
        "this device (%s); recompile for %s or create the library with "
        "soc_model=%s",
        name, device, device, name);
  }
  return NULL;
}

graft_status_t* exd_out_of_memory(const graft_host_api_t* host) {
  return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                             "example dispatch: out of memory");
}

/* ------------------------------------------------------------------------ */
/* Reading the bytecode: lines and fields                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
  const char* text;
  size_t length;
} exd_token_t;

static int exd_token_is(exd_token_t token, const char* word) {
  size_t length = strlen(word);
  return token.length == length && memcmp(token.text, word, length) == 0;
}

/* Fields are separated by blanks and commas, except inside [...], so that a
 * type such as f32[2,3] stays one field. */
static int exd_is_separator(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' ||
         c == ',';
}

/* Reads the next field of [*cursor, end) into *token. Returns 0 at the end
 * of the line. */
static int exd_next_token(const char** cursor, const char* end,
                          exd_token_t* token) {
  const char* p = *cursor;
  int depth = 0;
  while (p < end && exd_is_separator(*p)) ++p;
  if (p == end) {
    *cursor = p;
    return 0;
  }
  token->text = p;
  while (p < end) {
    if (*p == '[') {
      ++depth;
    } else if (*p == ']') {
      if (depth > 0) --depth;
    } else if (depth == 0 && exd_is_separator(*p)) {
      break;
    }
    ++p;
  }
  token->length = (size_t)(p - token->text);
  *cursor = p;
  return 1;
}

typedef struct {
  const graft_host_api_t* host;
  const graft_dispatch_t* dispatch;
  const char* end;
  /* Start of the next line. */
  const char* next;
  /* The current line: number (1-based), text, fields. */
  size_t line;
  const char* text;
  size_t text_length;
  exd_token_t tokens[EXD_MAX_TOKENS];
  size_t num_tokens;
  /* More fields than tokens[] holds. */
  int overflow;
  /* The entry point asked for, sanitized for messages. */
  char entry[72];
  /* The model's buffers by id (desc->model_buffers); NULL when the host
   * passed none. */
  const graft_byte_span_t* model_buffers;
  size_t num_model_buffers;
} exd_reader_t;

/* Moves to the next line that is neither blank nor a comment. Returns 0 at
 * the end of the module. */
static int exd_next_line(exd_reader_t* reader) {
  while (reader->next < reader->end) {
    const char* start = reader->next;
    const char* newline =
        (const char*)memchr(start, '\n', (size_t)(reader->end - start));
    const char* stop = newline != NULL ? newline : reader->end;
    const char* cursor = start;
    exd_token_t token;
    reader->next = newline != NULL ? newline + 1 : reader->end;
    ++reader->line;
    reader->text = start;
    reader->text_length = (size_t)(stop - start);
    reader->num_tokens = 0;
    reader->overflow = 0;
    while (exd_next_token(&cursor, stop, &token)) {
      if (reader->num_tokens == EXD_MAX_TOKENS) {
        reader->overflow = 1;
        break;
      }
      reader->tokens[reader->num_tokens++] = token;
    }
    if (reader->num_tokens == 0 || reader->tokens[0].text[0] == '#') continue;
    return 1;
  }
  return 0;
}

/* A status about line `line` (whose text is text[0, length)) of the
 * module. */
static graft_status_t* exd_error_at(const exd_reader_t* reader,
                                    graft_status_code_t code, size_t line,
                                    const char* text, size_t length,
                                    const char* format, ...) {
  char detail[320], excerpt[72];
  va_list args;
  va_start(args, format);
  vsnprintf(detail, sizeof(detail), format, args);
  va_end(args);
  exd_excerpt(text, length, excerpt, sizeof(excerpt));
  return reader->host->status_create_formatted(
      reader->host, code,
      "example dispatch: entry '%s': bytecode line %zu ('%s'): %s",
      reader->entry, line, excerpt, detail);
}

/* Formats detail[] from the variadic arguments, then makes the status of
 * the reader's current line. */
#define EXD_LINE_ERROR(reader, code, ...)                        \
  exd_error_at((reader), (code), (reader)->line, (reader)->text, \
               (reader)->text_length, __VA_ARGS__)

/* Parses "t<digits>" into *out_id. */
/* Parses 1 to 9 decimal digits. */
static int exd_parse_number(const char* text, size_t length,
                            uint32_t* out_value) {
  uint32_t value = 0;
  size_t i;
  if (length < 1 || length > 9) return 0;
  for (i = 0; i < length; ++i) {
    char c = text[i];
    if (c < '0' || c > '9') return 0;
    value = value * 10u + (uint32_t)(c - '0');
  }
  *out_value = value;
  return 1;
}

static int exd_parse_id(exd_token_t token, uint32_t* out_id) {
  return token.length >= 2 && token.text[0] == 't' &&
         exd_parse_number(token.text + 1, token.length - 1, out_id);
}

/* Parses a type such as "f32[1,4]" or "f32[]" into the tensor's rank, dims
 * and element count. Returns NULL or a status about the current line. */
static graft_status_t* exd_parse_type(const exd_reader_t* reader,
                                      exd_token_t token, exd_tensor_t* tensor) {
  const char* p = token.text;
  const char* end = token.text + token.length;
  const char* open = (const char*)memchr(p, '[', token.length);
  size_t numel = 1;
  if (open == NULL || end[-1] != ']') {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "malformed type: expected f32[d0,d1,...]");
  }
  if (open - p != 3 || memcmp(p, "f32", 3) != 0) {
    char name[72];
    exd_excerpt(p, (size_t)(open - p), name, sizeof(name));
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "element type '%s' not supported (f32 only)", name);
  }
  tensor->rank = 0;
  p = open + 1;
  --end;
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  while (p < end) {
    size_t dim = 0;
    int digits = 0;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    while (p < end && *p >= '0' && *p <= '9') {
      if (dim > EXD_MAX_TENSOR_ELEMENTS) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                              "dimension too large (this device holds at most "
                              "%zu elements per tensor)",
                              (size_t)EXD_MAX_TENSOR_ELEMENTS);
      }
      dim = dim * 10u + (size_t)(*p - '0');
      ++digits;
      ++p;
    }
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (digits == 0 || (p < end && *p != ',') || (p + 1 == end && *p == ',')) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "malformed shape: dimensions must be non-negative "
                            "integers separated by commas");
    }
    if (p < end) ++p;
    if (tensor->rank == EXD_MAX_RANK) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "rank above %d not supported", EXD_MAX_RANK);
    }
    tensor->dims[tensor->rank++] = (int64_t)dim;
    /* numel stays <= EXD_MAX_TENSOR_ELEMENTS, so the product cannot wrap. */
    if (dim != 0 && numel > EXD_MAX_TENSOR_ELEMENTS / dim) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                            "tensor too large (this device holds at most %zu "
                            "elements per tensor)",
                            (size_t)EXD_MAX_TENSOR_ELEMENTS);
    }
    numel *= dim;
  }
  tensor->numel = numel;
  return NULL;
}

static int exd_parse_act(exd_token_t token, exb_act_t* out_act) {
  if (token.length < 4 || memcmp(token.text, "act=", 4) != 0) return 0;
  return exb_act_named(token.text + 4, token.length - 4, out_act);
}

static int exd_parse_hex_word(exd_token_t token, uint32_t* out_bits) {
  uint32_t bits = 0;
  size_t i;
  if (token.length != 8) return 0;
  for (i = 0; i < 8; ++i) {
    char c = token.text[i];
    uint32_t digit;
    if (c >= '0' && c <= '9') {
      digit = (uint32_t)(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = (uint32_t)(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = (uint32_t)(c - 'A' + 10);
    } else {
      return 0;
    }
    bits = (bits << 4) | digit;
  }
  *out_bits = bits;
  return 1;
}

/* ------------------------------------------------------------------------ */
/* Parsing one entry                                                          */
/* ------------------------------------------------------------------------ */

/* Orders tensor indices by id, then by declaration order. */
static int exd_id_before(uint32_t a, uint32_t b, const exd_tensor_t* tensors) {
  if (tensors[a].id != tensors[b].id) return tensors[a].id < tensors[b].id;
  return a < b;
}

/* A bottom-up merge sort of `indices` by exd_id_before. Not qsort: its
 * comparator has no context argument, and a static one would make
 * concurrent invocation_create calls race. */
static void exd_sort_by_id(uint32_t* indices, uint32_t* scratch, size_t count,
                           const exd_tensor_t* tensors) {
  size_t width, i;
  for (width = 1; width < count; width *= 2) {
    for (i = 0; i < count; i += 2 * width) {
      size_t left = i, mid = i + width < count ? i + width : count;
      size_t right = mid, stop = i + 2 * width < count ? i + 2 * width : count;
      size_t out = i;
      while (left < mid && right < stop) {
        if (exd_id_before(indices[right], indices[left], tensors)) {
          scratch[out++] = indices[right++];
        } else {
          scratch[out++] = indices[left++];
        }
      }
      while (left < mid) scratch[out++] = indices[left++];
      while (right < stop) scratch[out++] = indices[right++];
    }
    memcpy(indices, scratch, count * sizeof(uint32_t));
  }
}

/* Builds inv->by_id once the declarations are complete and reports a tensor
 * declared twice. */
static graft_status_t* exd_index_declarations(
    const exd_reader_t* reader, graft_dispatch_invocation_t* inv) {
  const graft_host_api_t* host = inv->host;
  size_t count = inv->num_tensors, i;
  uint32_t* scratch;
  if (inv->by_id != NULL || count == 0) return NULL;
  inv->by_id = (uint32_t*)exd_alloc(host, count * sizeof(uint32_t), 0);
  scratch = (uint32_t*)exd_alloc(host, count * sizeof(uint32_t), 0);
  if (inv->by_id == NULL || scratch == NULL) {
    exd_free(host, scratch);
    return exd_out_of_memory(host);
  }
  for (i = 0; i < count; ++i) inv->by_id[i] = (uint32_t)i;
  exd_sort_by_id(inv->by_id, scratch, count, inv->tensors);
  exd_free(host, scratch);
  for (i = 1; i < count; ++i) {
    const exd_tensor_t* first = &inv->tensors[inv->by_id[i - 1]];
    const exd_tensor_t* again = &inv->tensors[inv->by_id[i]];
    if (first->id == again->id) {
      return exd_error_at(reader, GRAFT_STATUS_INVALID_ARGUMENT, again->line,
                          again->text, again->text_length,
                          "t%u is declared twice (first at line %zu)",
                          (unsigned)again->id, first->line);
    }
  }
  return NULL;
}

/* The index of the tensor declared as t<id>, or EXD_NO_TENSOR. */
static uint32_t exd_lookup(const graft_dispatch_invocation_t* inv,
                           uint32_t id) {
  size_t low = 0, high = inv->num_tensors;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    uint32_t index = inv->by_id[mid];
    if (inv->tensors[index].id == id) return index;
    if (inv->tensors[index].id < id) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return EXD_NO_TENSOR;
}

static const char* exd_role_name(exd_role_t role) {
  return role == EXD_ROLE_INPUT   ? "an input"
         : role == EXD_ROLE_CONST ? "a constant"
                                  : "a tensor";
}

/* Resolves operand field `token` of the current instruction to a tensor
 * index that holds a value by now (an input, a constant, or written by an
 * earlier instruction). */
static graft_status_t* exd_resolve_source(
    const exd_reader_t* reader, const graft_dispatch_invocation_t* inv,
    exd_token_t token, uint32_t* out_index) {
  uint32_t id, index;
  char name[72];
  if (!exd_parse_id(token, &id)) {
    exd_excerpt(token.text, token.length, name, sizeof(name));
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "'%s' is not a tensor id (t<number>)", name);
  }
  index = exd_lookup(inv, id);
  if (index == EXD_NO_TENSOR) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "t%u is not declared", (unsigned)id);
  }
  if (inv->tensors[index].role == EXD_ROLE_TENSOR &&
      inv->tensors[index].written_line == 0) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "reads t%u before any instruction writes it",
                          (unsigned)id);
  }
  *out_index = index;
  return NULL;
}

/* Resolves the destination field: a declared `tensor` not written yet. */
static graft_status_t* exd_resolve_dest(const exd_reader_t* reader,
                                        const graft_dispatch_invocation_t* inv,
                                        exd_token_t token,
                                        uint32_t* out_index) {
  uint32_t id, index;
  const exd_tensor_t* tensor;
  char name[72];
  if (!exd_parse_id(token, &id)) {
    exd_excerpt(token.text, token.length, name, sizeof(name));
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "'%s' is not a tensor id (t<number>)", name);
  }
  index = exd_lookup(inv, id);
  if (index == EXD_NO_TENSOR) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "t%u is not declared", (unsigned)id);
  }
  tensor = &inv->tensors[index];
  if (tensor->role != EXD_ROLE_TENSOR) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "writes t%u, which is %s; instructions write only "
                          "values declared with 'tensor'",
                          (unsigned)id, exd_role_name(tensor->role));
  }
  if (tensor->written_line != 0) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "t%u is written twice (first at line %zu)",
                          (unsigned)id, tensor->written_line);
  }
  *out_index = index;
  return NULL;
}

static void exd_format_shape(const exd_tensor_t* tensor, char* out,
                             size_t out_size) {
  size_t used = 0, i;
  int n = snprintf(out, out_size, "[");
  if (n > 0) used = (size_t)n;
  for (i = 0; i < tensor->rank && used < out_size; ++i) {
    n = snprintf(out + used, out_size - used, "%s%zu", i == 0 ? "" : ",",
                 (size_t)tensor->dims[i]);
    if (n < 0) return;
    used += (size_t)n;
  }
  if (used < out_size) snprintf(out + used, out_size - used, "]");
}

static int exd_same_shape(const exd_tensor_t* a, const exd_tensor_t* b) {
  return exb_same_shape(a->dims, a->rank, b->dims, b->rank);
}

/* The bytecode's broadcast rule (exb_broadcasts_to): operand[i mod n] is
 * TFLite broadcasting. */
static int exd_broadcasts_to(const exd_tensor_t* operand,
                             const exd_tensor_t* dest) {
  return exb_broadcasts_to(operand->dims, operand->rank, dest->dims,
                           dest->rank);
}

/* Parses the instruction on the current line and appends it. */
static graft_status_t* exd_parse_instruction(exd_reader_t* reader,
                                             graft_dispatch_invocation_t* inv,
                                             const exb_opcode_t* opcode) {
  const exd_token_t* t = reader->tokens;
  const size_t n = reader->num_tokens;
  graft_status_t* status;
  exd_instr_t instr;
  const exd_tensor_t *dest, *a, *b;
  char shape_d[96], shape_a[96], shape_b[96];
  void* instrs;
  memset(&instr, 0, sizeof(instr));
  instr.op = opcode->op;
  instr.act = EXB_ACT_NONE;
  instr.b = EXD_NO_TENSOR;
  instr.bias = EXD_NO_TENSOR;
  instr.line = reader->line;
  switch (opcode->kind) {
    case EXB_KIND_BINARY:
      if (n != 6 || reader->overflow || !exd_token_is(t[2], "=")) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "expected '%s tD = tA, tB act=A'", opcode->name);
      }
      break;
    case EXB_KIND_UNARY:
      if (n != 4 || reader->overflow || !exd_token_is(t[2], "=")) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "expected '%s tD = tX'", opcode->name);
      }
      break;
    case EXB_KIND_FULLY_CONNECTED:
      if (n != 7 || reader->overflow || !exd_token_is(t[2], "=")) {
        return EXD_LINE_ERROR(
            reader, GRAFT_STATUS_INVALID_ARGUMENT,
            "expected 'fully_connected tD = tX, tW, tB act=A' (tB may be -)");
      }
      break;
  }
  status = exd_resolve_dest(reader, inv, t[1], &instr.dest);
  if (status == NULL) status = exd_resolve_source(reader, inv, t[3], &instr.a);
  if (status == NULL && opcode->kind != EXB_KIND_UNARY) {
    status = exd_resolve_source(reader, inv, t[4], &instr.b);
  }
  if (status == NULL && opcode->kind == EXB_KIND_FULLY_CONNECTED &&
      !exd_token_is(t[5], "-")) {
    status = exd_resolve_source(reader, inv, t[5], &instr.bias);
  }
  if (status != NULL) return status;
  if (opcode->kind != EXB_KIND_UNARY && !exd_parse_act(t[n - 1], &instr.act)) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "expected act=none, act=relu or act=relu6 as the "
                          "last field");
  }

  dest = &inv->tensors[instr.dest];
  a = &inv->tensors[instr.a];
  b = instr.b != EXD_NO_TENSOR ? &inv->tensors[instr.b] : NULL;
  instr.n = dest->numel;
  instr.n_a = a->numel;
  instr.n_b = b != NULL ? b->numel : 0;
  exd_format_shape(dest, shape_d, sizeof(shape_d));
  exd_format_shape(a, shape_a, sizeof(shape_a));
  if (b != NULL) exd_format_shape(b, shape_b, sizeof(shape_b));
  switch (opcode->kind) {
    case EXB_KIND_BINARY:
      if (!exd_broadcasts_to(a, dest) || !exd_broadcasts_to(b, dest)) {
        return EXD_LINE_ERROR(
            reader, GRAFT_STATUS_INVALID_ARGUMENT,
            "operand shapes %s and %s do not broadcast to %s (each operand, "
            "leading 1s dropped, must equal the trailing dimensions of the "
            "destination)",
            shape_a, shape_b, shape_d);
      }
      break;
    case EXB_KIND_UNARY:
      if (!exd_same_shape(a, dest)) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "destination shape %s differs from source shape "
                              "%s",
                              shape_d, shape_a);
      }
      break;
    case EXB_KIND_FULLY_CONNECTED: {
      const exd_tensor_t* bias =
          instr.bias != EXD_NO_TENSOR ? &inv->tensors[instr.bias] : NULL;
      if (b->role != EXD_ROLE_CONST || b->rank != 2 || b->dims[0] == 0 ||
          b->dims[1] == 0) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "weights t%u must be a constant of shape "
                              "[units,depth] with units, depth >= 1; got %s "
                              "of shape %s",
                              (unsigned)b->id, exd_role_name(b->role), shape_b);
      }
      instr.units = (size_t)b->dims[0];
      instr.depth = (size_t)b->dims[1];
      if (bias != NULL && (bias->role != EXD_ROLE_CONST || bias->rank != 1 ||
                           (size_t)bias->dims[0] != instr.units)) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "bias t%u must be a constant of shape [%zu]",
                              (unsigned)bias->id, instr.units);
      }
      if (a->numel % instr.depth != 0) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "input shape %s is not a whole number of rows "
                              "of depth %zu",
                              shape_a, instr.depth);
      }
      instr.batch = a->numel / instr.depth;
      if (dest->rank != 2 || (size_t)dest->dims[0] != instr.batch ||
          (size_t)dest->dims[1] != instr.units) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "destination shape %s, expected [%zu,%zu]",
                              shape_d, instr.batch, instr.units);
      }
      break;
    }
  }
  snprintf(instr.name, sizeof(instr.name), "%s t%u", opcode->name,
           (unsigned)dest->id);
  instrs = inv->instrs;
  if (!exd_reserve(inv->host, &instrs, &inv->instrs_capacity,
                   sizeof(exd_instr_t), inv->num_instrs + 1)) {
    return exd_out_of_memory(inv->host);
  }
  inv->instrs = (exd_instr_t*)instrs;
  inv->instrs[inv->num_instrs++] = instr;
  inv->tensors[instr.dest].written_line = reader->line;
  return NULL;
}

/* Points `constant` at the model buffer a "const tN type buffer B" line
 * names, in place (copied only when misaligned for float). */
static graft_status_t* exd_bind_buffer(const exd_reader_t* reader,
                                       exd_tensor_t* constant,
                                       exd_token_t token) {
  uint32_t id;
  const graft_byte_span_t* buffer;
  char text[72];
  if (!exd_parse_number(token.text, token.length, &id)) {
    exd_excerpt(token.text, token.length, text, sizeof(text));
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "'%s' is not a buffer id", text);
  }
  if (reader->model_buffers == NULL) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_FAILED_PRECONDITION,
                          "refers to model buffer %u, but the host passed "
                          "no model buffers (it needs ABI 1.1 or later); "
                          "compile without weights_in_place=1",
                          (unsigned)id);
  }
  if (id >= reader->num_model_buffers) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "refers to model buffer %u, but the model has %zu",
                          (unsigned)id, reader->num_model_buffers);
  }
  buffer = &reader->model_buffers[id];
  if (buffer->size != constant->numel * sizeof(float) ||
      (buffer->data == NULL && buffer->size != 0)) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "model buffer %u holds %zu bytes, the constant "
                          "needs %zu",
                          (unsigned)id, buffer->size,
                          constant->numel * sizeof(float));
  }
  constant->num_values = constant->numel;
  if (((uintptr_t)buffer->data % sizeof(float)) == 0) {
    constant->in_place = (const float*)(const void*)buffer->data;
    return NULL;
  }
  constant->values =
      (float*)exd_alloc(reader->host, constant->numel * sizeof(float), 0);
  if (constant->values == NULL) return exd_out_of_memory(reader->host);
  memcpy(constant->values, buffer->data, buffer->size);
  return NULL;
}

/* Parses an input/const/tensor declaration on the current line. */
static graft_status_t* exd_parse_declaration(exd_reader_t* reader,
                                             graft_dispatch_invocation_t* inv,
                                             exd_role_t role,
                                             const char* keyword) {
  const graft_host_api_t* host = inv->host;
  graft_status_t* status;
  exd_tensor_t tensor;
  void* grown;
  char name[72];
  const int from_buffer = role == EXD_ROLE_CONST && reader->num_tokens == 5 &&
                          exd_token_is(reader->tokens[3], "buffer");
  if ((reader->num_tokens != 3 && !from_buffer) || reader->overflow) {
    return EXD_LINE_ERROR(
        reader, GRAFT_STATUS_INVALID_ARGUMENT, "expected '%s tN f32[dims]'%s",
        keyword,
        role == EXD_ROLE_CONST ? " or 'const tN f32[dims] buffer B'" : "");
  }
  memset(&tensor, 0, sizeof(tensor));
  if (!exd_parse_id(reader->tokens[1], &tensor.id)) {
    exd_excerpt(reader->tokens[1].text, reader->tokens[1].length, name,
                sizeof(name));
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "'%s' is not a tensor id (t<number>)", name);
  }
  status = exd_parse_type(reader, reader->tokens[2], &tensor);
  if (status != NULL) return status;
  tensor.role = role;
  tensor.line = reader->line;
  tensor.text = reader->text;
  tensor.text_length = reader->text_length;
  if (from_buffer) {
    status = exd_bind_buffer(reader, &tensor, reader->tokens[4]);
    if (status != NULL) return status;
  } else if (role == EXD_ROLE_CONST && tensor.numel > 0) {
    /* Each value takes at least 9 bytes of text (" 3f800000"): refuse a
     * count the rest of the module cannot hold before allocating it. */
    size_t left = (size_t)(reader->end - reader->next);
    if (tensor.numel > left / 9) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "declares %zu values, but only %zu bytes of "
                            "bytecode follow",
                            tensor.numel, left);
    }
    tensor.values = (float*)exd_alloc(host, tensor.numel * sizeof(float), 0);
    if (tensor.values == NULL) return exd_out_of_memory(host);
  }
  if (inv->num_tensors >= (size_t)UINT32_MAX - 1) {
    exd_free(host, tensor.values);
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                          "too many tensors");
  }
  grown = inv->tensors;
  if (!exd_reserve(host, &grown, &inv->tensors_capacity, sizeof(exd_tensor_t),
                   inv->num_tensors + 1)) {
    exd_free(host, tensor.values);
    return exd_out_of_memory(host);
  }
  inv->tensors = (exd_tensor_t*)grown;
  inv->tensors[inv->num_tensors] = tensor;
  if (role == EXD_ROLE_INPUT) {
    grown = inv->inputs;
    if (!exd_reserve(host, &grown, &inv->inputs_capacity, sizeof(uint32_t),
                     inv->num_inputs + 1)) {
      exd_free(host, tensor.values);
      return exd_out_of_memory(host);
    }
    inv->inputs = (uint32_t*)grown;
    inv->inputs[inv->num_inputs++] = (uint32_t)inv->num_tensors;
  }
  ++inv->num_tensors;
  return NULL;
}

/* Reads the values of a data line into the constant being declared. */
static graft_status_t* exd_parse_data(exd_reader_t* reader,
                                      exd_tensor_t* constant) {
  const char* cursor = reader->tokens[0].text + reader->tokens[0].length;
  const char* stop = reader->text + reader->text_length;
  exd_token_t word;
  size_t words = 0;
  while (exd_next_token(&cursor, stop, &word)) {
    uint32_t bits;
    char text[72];
    if (!exd_parse_hex_word(word, &bits)) {
      exd_excerpt(word.text, word.length, text, sizeof(text));
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "'%s' is not a float32 bit pattern (8 hex "
                            "digits)",
                            text);
    }
    if (constant->num_values == constant->numel) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "more values than the %zu of const t%u "
                            "(declared at line %zu)",
                            constant->numel, (unsigned)constant->id,
                            constant->line);
    }
    /* The word is the value's bit pattern; float and uint32_t share a byte
     * order on every platform this runs on. */
    memcpy(&constant->values[constant->num_values++], &bits, sizeof(bits));
    ++words;
  }
  if (words == 0) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "data line without values");
  }
  return NULL;
}

typedef enum {
  EXD_PHASE_DECLARATIONS,
  EXD_PHASE_INSTRUCTIONS,
  EXD_PHASE_OUTPUTS
} exd_phase_t;

/* Parses the body of the wanted entry, from the line after "entry <name>"
 * through its "end". `entry_line` is the line of "entry <name>". */
static graft_status_t* exd_parse_entry(exd_reader_t* reader,
                                       graft_dispatch_invocation_t* inv,
                                       size_t entry_line) {
  const graft_host_api_t* host = inv->host;
  exd_phase_t phase = EXD_PHASE_DECLARATIONS;
  /* The constant whose data lines are being read, or EXD_NO_TENSOR. */
  uint32_t filling = EXD_NO_TENSOR;
  graft_status_t* status;
  while (exd_next_line(reader)) {
    const exd_token_t first = reader->tokens[0];
    const exb_opcode_t* opcode = NULL;
    if (exd_token_is(first, "data")) {
      if (filling == EXD_NO_TENSOR) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "data line outside a const declaration");
      }
      status = exd_parse_data(reader, &inv->tensors[filling]);
      if (status != NULL) return status;
      continue;
    }
    if (filling != EXD_NO_TENSOR) {
      const exd_tensor_t* constant = &inv->tensors[filling];
      if (constant->num_values != constant->numel) {
        return exd_error_at(
            reader, GRAFT_STATUS_INVALID_ARGUMENT, constant->line,
            constant->text, constant->text_length,
            "const t%u has %zu values, expected %zu", (unsigned)constant->id,
            constant->num_values, constant->numel);
      }
      filling = EXD_NO_TENSOR;
    }
    if (exd_token_is(first, "input") || exd_token_is(first, "const") ||
        exd_token_is(first, "tensor")) {
      exd_role_t role = exd_token_is(first, "input")   ? EXD_ROLE_INPUT
                        : exd_token_is(first, "const") ? EXD_ROLE_CONST
                                                       : EXD_ROLE_TENSOR;
      if (phase != EXD_PHASE_DECLARATIONS) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "declaration after the first instruction");
      }
      status = exd_parse_declaration(
          reader, inv, role,
          role == EXD_ROLE_INPUT
              ? "input"
              : (role == EXD_ROLE_CONST ? "const" : "tensor"));
      if (status != NULL) return status;
      if (role == EXD_ROLE_CONST &&
          inv->tensors[inv->num_tensors - 1].num_values == 0) {
        filling = (uint32_t)(inv->num_tensors - 1);
      }
      continue;
    }
    /* Everything below refers to declared tensors. */
    status = exd_index_declarations(reader, inv);
    if (status != NULL) return status;
    if (exd_token_is(first, "output")) {
      uint32_t id, index;
      void* grown;
      if (reader->num_tokens != 2 || reader->overflow ||
          !exd_parse_id(reader->tokens[1], &id)) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "expected 'output tN'");
      }
      index = exd_lookup(inv, id);
      if (index == EXD_NO_TENSOR) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "output t%u is not declared", (unsigned)id);
      }
      if (inv->tensors[index].role == EXD_ROLE_CONST ||
          (inv->tensors[index].role == EXD_ROLE_TENSOR &&
           inv->tensors[index].written_line == 0)) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "output t%u is %s; an output must be an input "
                              "or written by an instruction",
                              (unsigned)id,
                              inv->tensors[index].role == EXD_ROLE_CONST
                                  ? "a constant"
                                  : "never written");
      }
      grown = inv->outputs;
      if (!exd_reserve(host, &grown, &inv->outputs_capacity, sizeof(uint32_t),
                       inv->num_outputs + 1)) {
        return exd_out_of_memory(host);
      }
      inv->outputs = (uint32_t*)grown;
      inv->outputs[inv->num_outputs++] = index;
      phase = EXD_PHASE_OUTPUTS;
      continue;
    }
    if (exd_token_is(first, "end")) {
      if (reader->num_tokens != 1) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "expected 'end'");
      }
      if (inv->num_outputs == 0) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "the entry has no output line");
      }
      return NULL;
    }
    if (exd_token_is(first, "entry")) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "the entry starting at line %zu has no 'end' "
                            "before the next entry",
                            entry_line);
    }
    opcode = exb_opcode_named(first.text, first.length);
    if (opcode == NULL) {
      char name[72];
      exd_excerpt(first.text, first.length, name, sizeof(name));
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "unknown instruction '%s'", name);
    }
    if (phase == EXD_PHASE_OUTPUTS) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "instruction after an output line");
    }
    phase = EXD_PHASE_INSTRUCTIONS;
    status = exd_parse_instruction(reader, inv, opcode);
    if (status != NULL) return status;
  }
  return host->status_create_formatted(
      host, GRAFT_STATUS_INVALID_ARGUMENT,
      "example dispatch: entry '%s': the entry starting at line %zu has no "
      "'end' (the module ends first)",
      reader->entry, entry_line);
}

/* Skips an entry that was not asked for, checking only that it ends. */
static graft_status_t* exd_skip_entry(exd_reader_t* reader, size_t entry_line) {
  while (exd_next_line(reader)) {
    if (exd_token_is(reader->tokens[0], "end")) return NULL;
    if (exd_token_is(reader->tokens[0], "entry")) {
      return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            "the entry starting at line %zu has no 'end' "
                            "before the next entry",
                            entry_line);
    }
  }
  return reader->host->status_create_formatted(
      reader->host, GRAFT_STATUS_INVALID_ARGUMENT,
      "example dispatch: entry '%s': the entry starting at line %zu has no "
      "'end' (the module ends first)",
      reader->entry, entry_line);
}

static int exd_is_entry_name(exd_token_t name) {
  size_t i;
  if (name.length == 0) return 0;
  for (i = 0; i < name.length; ++i) {
    char c = name.text[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_')) {
      return 0;
    }
  }
  return 1;
}

/* Parses the module: header, every entry's outline (names unique, each
 * ended), and the body of `entry_point`. */
static graft_status_t* exd_parse_module(exd_reader_t* reader,
                                        graft_dispatch_invocation_t* inv,
                                        const char* entry_point) {
  const graft_host_api_t* host = inv->host;
  graft_status_t* status;
  const size_t wanted_length = strlen(entry_point);
  size_t found_line = 0, num_entries = 0;
  /* "partition_0, partition_1, ..." for NOT_FOUND. */
  char listed[160];
  size_t listed_used = 0;
  int listed_full = 0;
  /* Names seen so far, to report duplicates (pointers into the bytecode). */
  exd_token_t* names = NULL;
  size_t names_capacity = 0;
  listed[0] = '\0';

  if (!exd_next_line(reader)) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: bytecode module is empty "
                               "(expected 'example-bytecode v1')");
  }
  if (reader->num_tokens != 2 || !exd_token_is(reader->tokens[0], EXB_MAGIC) ||
      reader->tokens[1].length < 2 || reader->tokens[1].text[0] != 'v') {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "not example bytecode: expected the header "
                          "'example-bytecode v1'");
  }
  if (!exd_token_is(reader->tokens[1], "v1")) {
    char version[72];
    exd_excerpt(reader->tokens[1].text, reader->tokens[1].length, version,
                sizeof(version));
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_FAILED_PRECONDITION,
                          "bytecode format %s not supported (this library "
                          "runs v%u)",
                          version, EXB_FORMAT_VERSION);
  }
  if (!exd_next_line(reader) || reader->num_tokens != 2 ||
      !exd_token_is(reader->tokens[0], "soc")) {
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "expected 'soc <SoC model>' after the header");
  }
  status = exd_check_soc(reader->dispatch, reader->tokens[1].text,
                         reader->tokens[1].length);
  if (status != NULL) return status;

  while (exd_next_line(reader)) {
    const size_t entry_line = reader->line;
    exd_token_t name;
    void* grown;
    size_t i;
    if (reader->num_tokens != 2 || !exd_token_is(reader->tokens[0], "entry") ||
        !exd_is_entry_name(reader->tokens[1])) {
      status = EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "expected 'entry <name>' (name of letters, "
                              "digits and _)");
      break;
    }
    name = reader->tokens[1];
    for (i = 0; i < num_entries; ++i) {
      if (names[i].length == name.length &&
          memcmp(names[i].text, name.text, name.length) == 0) {
        break;
      }
    }
    if (i < num_entries) {
      status = EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "entry name used twice in one module");
      break;
    }
    grown = names;
    if (!exd_reserve(host, &grown, &names_capacity, sizeof(exd_token_t),
                     num_entries + 1)) {
      status = exd_out_of_memory(host);
      break;
    }
    names = (exd_token_t*)grown;
    names[num_entries++] = name;
    if (!listed_full && listed_used + name.length + 8 < sizeof(listed)) {
      int n =
          snprintf(listed + listed_used, sizeof(listed) - listed_used, "%s%.*s",
                   listed_used == 0 ? "" : ", ", (int)name.length, name.text);
      if (n > 0) listed_used += (size_t)n;
    } else if (!listed_full) {
      listed_full = 1;
      snprintf(listed + listed_used, sizeof(listed) - listed_used, ", ...");
    }
    if (name.length == wanted_length &&
        memcmp(name.text, entry_point, wanted_length) == 0) {
      found_line = entry_line;
      status = exd_parse_entry(reader, inv, entry_line);
    } else {
      status = exd_skip_entry(reader, entry_line);
    }
    if (status != NULL) break;
  }
  exd_free(host, names);
  if (status != NULL) return status;
  if (num_entries == 0) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: bytecode module has no "
                               "entry");
  }
  if (found_line == 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_NOT_FOUND,
        "example dispatch: entry point '%s' is not in the module (it has: %s)",
        reader->entry, listed);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* The entry point                                                            */
/* ------------------------------------------------------------------------ */

graft_status_t* exd_parse(graft_dispatch_invocation_t* inv,
                          const graft_dispatch_t* dispatch,
                          const graft_dispatch_invocation_desc_t* desc) {
  const graft_host_api_t* host = inv->host;
  graft_status_t* status;
  exd_reader_t reader;
  memset(&reader, 0, sizeof(reader));
  reader.host = host;
  reader.dispatch = dispatch;
  reader.next = (const char*)desc->bytecode.data;
  reader.end = reader.next + desc->bytecode.size;
  if (GRAFT_STRUCT_HAS_MEMBER(desc, graft_dispatch_invocation_desc_t,
                              num_model_buffers) &&
      desc->model_buffers != NULL) {
    reader.model_buffers = desc->model_buffers;
    reader.num_model_buffers = desc->num_model_buffers;
  }
  exd_excerpt(desc->entry_point, strlen(desc->entry_point), reader.entry,
              sizeof(reader.entry));
  status = exd_parse_module(&reader, inv, desc->entry_point);
  if (status == NULL && (inv->num_inputs != desc->num_inputs ||
                         inv->num_outputs != desc->num_outputs)) {
    status = host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: entry '%s' has %zu input(s) and %zu output(s), but "
        "the dispatch op passes %zu and %zu",
        reader.entry, inv->num_inputs, inv->num_outputs, desc->num_inputs,
        desc->num_outputs);
  }
  return status;
}
