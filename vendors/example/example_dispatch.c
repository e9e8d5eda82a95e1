/* The example dispatch library: the teaching vendor's run time.
 *
 * A small virtual accelerator. At invocation creation it parses one entry
 * point of the example compiler plugin's text bytecode (BYTECODE.md),
 * validates it completely (declarations, data flow, shapes, constant data)
 * and turns it into a flat instruction list over a table of tensor slots;
 * malformed bytecode is an INVALID_ARGUMENT status naming the line, never a
 * crash. At invoke it runs that list on the attached host memory.
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

#include "graft_dispatch.h"

#define EXD_VENDOR "example"
#define EXD_LIBRARY_VERSION "1.0.0"
#define EXD_FORMAT_VERSION 1u

/* Limits of the virtual device. Bytecode beyond them is refused with
 * RESOURCE_EXHAUSTED rather than attempted. */
#define EXD_MAX_RANK 16
#define EXD_MAX_TENSOR_ELEMENTS ((size_t)1 << 28)
#define EXD_MAX_ARENA_BYTES ((size_t)1 << 31)

/* Fields on one line, except data lines, which are read as a stream. */
#define EXD_MAX_TOKENS 12
#define EXD_NO_TENSOR UINT32_MAX
/* Intermediates start on cache-line boundaries. */
#define EXD_ARENA_ALIGNMENT 64

/* SoC models in release order. A device runs bytecode compiled for its own
 * model or an earlier one, so the default device (the newest) runs all. */
static const char* const k_soc_models[] = {"example-soc-1", "example-soc-2"};
#define EXD_NUM_SOC_MODELS (sizeof(k_soc_models) / sizeof(k_soc_models[0]))
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

struct graft_dispatch_t {
  /* Borrowed from create; valid until destroy. */
  const graft_host_api_t* host;
  /* Index into k_soc_models of the device's SoC model. */
  size_t device_soc;
  graft_dispatch_info_t info;
};

struct graft_dispatch_device_context_t {
  graft_dispatch_t* dispatch;
};

/* ------------------------------------------------------------------------ */
/* Programs                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum {
  EXD_OP_ADD,
  EXD_OP_SUB,
  EXD_OP_MUL,
  EXD_OP_DIV,
  EXD_OP_RELU,
  EXD_OP_RELU6,
  EXD_OP_LOGISTIC,
  EXD_OP_TANH,
  EXD_OP_FULLY_CONNECTED
} exd_op_t;

typedef enum { EXD_KIND_BINARY, EXD_KIND_UNARY, EXD_KIND_FC } exd_kind_t;

typedef struct {
  const char* name;
  exd_op_t op;
  exd_kind_t kind;
} exd_opcode_t;

static const exd_opcode_t k_opcodes[] = {
    {"add", EXD_OP_ADD, EXD_KIND_BINARY},
    {"sub", EXD_OP_SUB, EXD_KIND_BINARY},
    {"mul", EXD_OP_MUL, EXD_KIND_BINARY},
    {"div", EXD_OP_DIV, EXD_KIND_BINARY},
    {"relu", EXD_OP_RELU, EXD_KIND_UNARY},
    {"relu6", EXD_OP_RELU6, EXD_KIND_UNARY},
    {"logistic", EXD_OP_LOGISTIC, EXD_KIND_UNARY},
    {"tanh", EXD_OP_TANH, EXD_KIND_UNARY},
    {"fully_connected", EXD_OP_FULLY_CONNECTED, EXD_KIND_FC},
};

typedef enum { EXD_ACT_NONE, EXD_ACT_RELU, EXD_ACT_RELU6 } exd_act_t;

typedef enum {
  EXD_ROLE_INPUT = 1,
  EXD_ROLE_CONST,
  EXD_ROLE_TENSOR
} exd_role_t;

typedef struct {
  uint32_t id;
  exd_role_t role;
  size_t rank;
  size_t dims[EXD_MAX_RANK];
  size_t numel;
  /* The declaration, for messages (points into the bytecode, which lives
   * as long as the invocation). */
  size_t line;
  const char* text;
  size_t text_length;
  /* Line of the instruction that writes it; 0 while none does. */
  size_t written_line;
  /* Constants: their values (owned) and how many data words were read. */
  float* values;
  size_t num_values;
  /* Constants declared "buffer N": their values in the model's buffer N,
   * used in place (not owned). NULL otherwise. */
  const float* in_place;
  /* Intermediates: byte offset in the arena. */
  size_t arena_offset;
  /* Written straight into an attached output buffer instead. */
  int in_output;
} exd_tensor_t;

/* One resolved instruction. Operands are tensor indices, i.e. slots. */
typedef struct {
  exd_op_t op;
  exd_act_t act;
  uint32_t dest, a, b, bias;
  /* Element counts of dest, a and b. */
  size_t n, n_a, n_b;
  /* fully_connected: d[batch, units] from x[batch, depth]. */
  size_t batch, units, depth;
  /* The 1-based line in the module: the debug map's vendor_location. */
  uint64_t line;
  /* "fully_connected t6": the profile event name. */
  char name[40];
} exd_instr_t;

struct graft_dispatch_invocation_t {
  const graft_host_api_t* host;
  exd_tensor_t* tensors;
  size_t num_tensors;
  size_t tensors_capacity;
  /* Sorted by id, for lookups while parsing. */
  uint32_t* by_id;
  exd_instr_t* instrs;
  size_t num_instrs;
  size_t instrs_capacity;
  /* Tensor index of each input and output, in call order. */
  uint32_t* inputs;
  size_t num_inputs;
  size_t inputs_capacity;
  uint32_t* outputs;
  size_t num_outputs;
  size_t outputs_capacity;
  /* 1 where the output's tensor is written straight into the attached
   * output buffer; 0 where it is copied there after the run. */
  unsigned char* output_in_place;
  size_t num_copies;
  /* The data pointer of every tensor for the next run. Inputs and in-place
   * outputs point at attached memory, constants at their values,
   * intermediates into the arena. */
  float** slots;
  float** output_buffers;
  unsigned char* attached;
  size_t num_unattached;
  void* arena;
  int profiling;
  graft_dispatch_profile_event_t* events;
  size_t num_events;
  /* invoke_async ran eagerly; wait hands over its result. */
  int in_flight;
  graft_status_t* async_status;
};

/* ------------------------------------------------------------------------ */
/* Memory and text helpers                                                    */
/* ------------------------------------------------------------------------ */

static void* exd_alloc(const graft_host_api_t* host, size_t size,
                       size_t alignment) {
  return host->allocate(host, size, alignment);
}

static void exd_free(const graft_host_api_t* host, void* ptr) {
  host->deallocate(host, ptr);
}

/* Grows *items (element size `item_size`) to hold at least `needed` items.
 * Returns 0 when out of memory, leaving *items as it was. */
static int exd_reserve(const graft_host_api_t* host, void** items,
                       size_t* capacity, size_t item_size, size_t needed) {
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
static void exd_excerpt(const char* text, size_t length, char* out,
                        size_t out_size) {
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

static uint64_t exd_now_ns(void) {
  struct timespec now;
  if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) return 0;
  return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Index of the SoC model named text[0, length), or -1. */
static int exd_find_soc(const char* text, size_t length) {
  size_t i;
  for (i = 0; i < EXD_NUM_SOC_MODELS; ++i) {
    if (strlen(k_soc_models[i]) == length &&
        memcmp(k_soc_models[i], text, length) == 0) {
      return (int)i;
    }
  }
  return -1;
}

/* NULL when the device runs bytecode compiled for SoC model text[0, length),
 * else a FAILED_PRECONDITION status saying why not. */
static graft_status_t* exd_check_soc(const graft_dispatch_t* dispatch,
                                     const char* text, size_t length) {
  const graft_host_api_t* host = dispatch->host;
  const char* device = k_soc_models[dispatch->device_soc];
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
#define EXD_LINE_ERROR(reader, code, ...)                                 \
  exd_error_at((reader), (code), (reader)->line, (reader)->text,          \
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
                                      exd_token_t token,
                                      exd_tensor_t* tensor) {
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
    tensor->dims[tensor->rank++] = dim;
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

static int exd_parse_act(exd_token_t token, exd_act_t* out_act) {
  exd_token_t value;
  if (token.length < 4 || memcmp(token.text, "act=", 4) != 0) return 0;
  value.text = token.text + 4;
  value.length = token.length - 4;
  if (exd_token_is(value, "none")) {
    *out_act = EXD_ACT_NONE;
  } else if (exd_token_is(value, "relu")) {
    *out_act = EXD_ACT_RELU;
  } else if (exd_token_is(value, "relu6")) {
    *out_act = EXD_ACT_RELU6;
  } else {
    return 0;
  }
  return 1;
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

static graft_status_t* exd_out_of_memory(const graft_host_api_t* host) {
  return host->status_create(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                             "example dispatch: out of memory");
}

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
static graft_status_t* exd_index_declarations(const exd_reader_t* reader,
                                              graft_dispatch_invocation_t* inv) {
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
  return role == EXD_ROLE_INPUT ? "an input"
         : role == EXD_ROLE_CONST ? "a constant"
                                  : "a tensor";
}

/* Resolves operand field `token` of the current instruction to a tensor
 * index that holds a value by now (an input, a constant, or written by an
 * earlier instruction). */
static graft_status_t* exd_resolve_source(const exd_reader_t* reader,
                                          const graft_dispatch_invocation_t* inv,
                                          exd_token_t token,
                                          uint32_t* out_index) {
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
                 tensor->dims[i]);
    if (n < 0) return;
    used += (size_t)n;
  }
  if (used < out_size) snprintf(out + used, out_size - used, "]");
}

static int exd_same_shape(const exd_tensor_t* a, const exd_tensor_t* b) {
  size_t i;
  if (a->rank != b->rank) return 0;
  for (i = 0; i < a->rank; ++i) {
    if (a->dims[i] != b->dims[i]) return 0;
  }
  return 1;
}

/* The broadcast rule of BYTECODE.md: `operand`, with leading 1s dropped,
 * equals the trailing dimensions of `dest`, so operand[i mod n] is TFLite
 * broadcasting. */
static int exd_broadcasts_to(const exd_tensor_t* operand,
                             const exd_tensor_t* dest) {
  size_t skip = 0, kept, i;
  while (skip < operand->rank && operand->dims[skip] == 1) ++skip;
  kept = operand->rank - skip;
  if (kept > dest->rank) return 0;
  for (i = 0; i < kept; ++i) {
    if (operand->dims[skip + i] != dest->dims[dest->rank - kept + i]) return 0;
  }
  return 1;
}

/* Parses the instruction on the current line and appends it. */
static graft_status_t* exd_parse_instruction(exd_reader_t* reader,
                                             graft_dispatch_invocation_t* inv,
                                             const exd_opcode_t* opcode) {
  const exd_token_t* t = reader->tokens;
  const size_t n = reader->num_tokens;
  graft_status_t* status;
  exd_instr_t instr;
  const exd_tensor_t *dest, *a, *b;
  char shape_d[96], shape_a[96], shape_b[96];
  void* instrs;
  memset(&instr, 0, sizeof(instr));
  instr.op = opcode->op;
  instr.act = EXD_ACT_NONE;
  instr.b = EXD_NO_TENSOR;
  instr.bias = EXD_NO_TENSOR;
  instr.line = reader->line;
  switch (opcode->kind) {
    case EXD_KIND_BINARY:
      if (n != 6 || reader->overflow || !exd_token_is(t[2], "=")) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "expected '%s tD = tA, tB act=A'", opcode->name);
      }
      break;
    case EXD_KIND_UNARY:
      if (n != 4 || reader->overflow || !exd_token_is(t[2], "=")) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "expected '%s tD = tX'", opcode->name);
      }
      break;
    case EXD_KIND_FC:
      if (n != 7 || reader->overflow || !exd_token_is(t[2], "=")) {
        return EXD_LINE_ERROR(
            reader, GRAFT_STATUS_INVALID_ARGUMENT,
            "expected 'fully_connected tD = tX, tW, tB act=A' (tB may be -)");
      }
      break;
  }
  status = exd_resolve_dest(reader, inv, t[1], &instr.dest);
  if (status == NULL) status = exd_resolve_source(reader, inv, t[3], &instr.a);
  if (status == NULL && opcode->kind != EXD_KIND_UNARY) {
    status = exd_resolve_source(reader, inv, t[4], &instr.b);
  }
  if (status == NULL && opcode->kind == EXD_KIND_FC &&
      !exd_token_is(t[5], "-")) {
    status = exd_resolve_source(reader, inv, t[5], &instr.bias);
  }
  if (status != NULL) return status;
  if (opcode->kind != EXD_KIND_UNARY && !exd_parse_act(t[n - 1], &instr.act)) {
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
    case EXD_KIND_BINARY:
      if (!exd_broadcasts_to(a, dest) || !exd_broadcasts_to(b, dest)) {
        return EXD_LINE_ERROR(
            reader, GRAFT_STATUS_INVALID_ARGUMENT,
            "operand shapes %s and %s do not broadcast to %s (each operand, "
            "leading 1s dropped, must equal the trailing dimensions of the "
            "destination)",
            shape_a, shape_b, shape_d);
      }
      break;
    case EXD_KIND_UNARY:
      if (!exd_same_shape(a, dest)) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "destination shape %s differs from source shape "
                              "%s",
                              shape_d, shape_a);
      }
      break;
    case EXD_KIND_FC: {
      const exd_tensor_t* bias =
          instr.bias != EXD_NO_TENSOR ? &inv->tensors[instr.bias] : NULL;
      if (b->role != EXD_ROLE_CONST || b->rank != 2 || b->dims[0] == 0 ||
          b->dims[1] == 0) {
        return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                              "weights t%u must be a constant of shape "
                              "[units,depth] with units, depth >= 1; got %s "
                              "of shape %s",
                              (unsigned)b->id, exd_role_name(b->role),
                              shape_b);
      }
      instr.units = b->dims[0];
      instr.depth = b->dims[1];
      if (bias != NULL &&
          (bias->role != EXD_ROLE_CONST || bias->rank != 1 ||
           bias->dims[0] != instr.units)) {
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
      if (dest->rank != 2 || dest->dims[0] != instr.batch ||
          dest->dims[1] != instr.units) {
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
    return EXD_LINE_ERROR(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                          "expected '%s tN f32[dims]'%s", keyword,
                          role == EXD_ROLE_CONST
                              ? " or 'const tN f32[dims] buffer B'"
                              : "");
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
  size_t i;
  while (exd_next_line(reader)) {
    const exd_token_t first = reader->tokens[0];
    const exd_opcode_t* opcode = NULL;
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
        return exd_error_at(reader, GRAFT_STATUS_INVALID_ARGUMENT,
                            constant->line, constant->text,
                            constant->text_length,
                            "const t%u has %zu values, expected %zu",
                            (unsigned)constant->id, constant->num_values,
                            constant->numel);
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
          role == EXD_ROLE_INPUT ? "input"
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
    for (i = 0; i < sizeof(k_opcodes) / sizeof(k_opcodes[0]); ++i) {
      if (exd_token_is(first, k_opcodes[i].name)) opcode = &k_opcodes[i];
    }
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

/* Lays out storage once the entry is parsed: intermediates in one arena,
 * outputs written in place where possible, slot and attachment tables. */
static graft_status_t* exd_plan(graft_dispatch_invocation_t* inv) {
  const graft_host_api_t* host = inv->host;
  const size_t num_io = inv->num_inputs + inv->num_outputs;
  size_t arena_bytes = 0, i;
  inv->slots = (float**)exd_alloc(host, inv->num_tensors * sizeof(float*), 0);
  inv->output_buffers =
      (float**)exd_alloc(host, inv->num_outputs * sizeof(float*), 0);
  inv->output_in_place =
      (unsigned char*)exd_alloc(host, inv->num_outputs, 0);
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
      inv->slots[i] = tensor->in_place != NULL ? (float*)tensor->in_place
                                               : tensor->values;
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
  if (reader->num_tokens != 2 ||
      !exd_token_is(reader->tokens[0], "example-bytecode") ||
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
                          version, EXD_FORMAT_VERSION);
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
      int n = snprintf(listed + listed_used, sizeof(listed) - listed_used,
                       "%s%.*s", listed_used == 0 ? "" : ", ",
                       (int)name.length, name.text);
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
/* Running                                                                    */
/* ------------------------------------------------------------------------ */

/* std::max / std::min as Graft's CPU kernels use them: a NaN first
 * argument is returned unchanged. */
static float exd_max(float a, float b) { return a < b ? b : a; }
static float exd_min(float a, float b) { return b < a ? b : a; }

static float exd_activate(float v, exd_act_t act) {
  switch (act) {
    case EXD_ACT_NONE:
      return v;
    case EXD_ACT_RELU:
      return exd_max(v, 0.0f);
    case EXD_ACT_RELU6:
      return exd_min(exd_max(v, 0.0f), 6.0f);
  }
  return v;
}

/* d[i] = act(EXPR(a[i mod n_a], b[i mod n_b])), with x and y the operands.
 * The running indices avoid a division per element. */
#define EXD_BINARY_LOOP(EXPR)                       \
  do {                                              \
    size_t i_, ia_ = 0, ib_ = 0;                    \
    for (i_ = 0; i_ < n; ++i_) {                    \
      const float x = a[ia_], y = b[ib_];           \
      d[i_] = exd_activate((EXPR), act);            \
      if (++ia_ == n_a) ia_ = 0;                    \
      if (++ib_ == n_b) ib_ = 0;                    \
    }                                               \
  } while (0)

static void exd_run_instruction(const exd_instr_t* instr, float* const* slots) {
  float* d = slots[instr->dest];
  const float* a = slots[instr->a];
  const size_t n = instr->n;
  const exd_act_t act = instr->act;
  size_t i;
  switch (instr->op) {
    case EXD_OP_ADD:
    case EXD_OP_SUB:
    case EXD_OP_MUL:
    case EXD_OP_DIV: {
      const float* b = slots[instr->b];
      const size_t n_a = instr->n_a, n_b = instr->n_b;
      if (instr->op == EXD_OP_ADD) EXD_BINARY_LOOP(x + y);
      if (instr->op == EXD_OP_SUB) EXD_BINARY_LOOP(x - y);
      if (instr->op == EXD_OP_MUL) EXD_BINARY_LOOP(x * y);
      if (instr->op == EXD_OP_DIV) EXD_BINARY_LOOP(x / y);
      break;
    }
    case EXD_OP_RELU:
      for (i = 0; i < n; ++i) d[i] = exd_max(a[i], 0.0f);
      break;
    case EXD_OP_RELU6:
      for (i = 0; i < n; ++i) d[i] = exd_min(exd_max(a[i], 0.0f), 6.0f);
      break;
    case EXD_OP_LOGISTIC:
      for (i = 0; i < n; ++i) d[i] = 1.0f / (1.0f + expf(-a[i]));
      break;
    case EXD_OP_TANH:
      for (i = 0; i < n; ++i) d[i] = tanhf(a[i]);
      break;
    case EXD_OP_FULLY_CONNECTED: {
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
  dispatch->info.vendor = EXD_VENDOR;
  dispatch->info.library_version = EXD_LIBRARY_VERSION;
  dispatch->info.build_id = "example-dispatch-" EXD_LIBRARY_VERSION "-c99";
  dispatch->info.description =
      "teaching vendor: interprets the example text bytecode on host memory";
  dispatch->info.hardware_kinds = GRAFT_HARDWARE_KIND_CPU;
  dispatch->info.min_bytecode_format_version = EXD_FORMAT_VERSION;
  dispatch->info.max_bytecode_format_version = EXD_FORMAT_VERSION;
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
      !GRAFT_STRUCT_HAS_MEMBER(stamp, graft_compatibility_stamp_t,
                               soc_model) ||
      stamp->vendor == NULL || stamp->soc_model == NULL) {
    return host->status_create(host, GRAFT_STATUS_INVALID_ARGUMENT,
                               "example dispatch: check_compatibility: the "
                               "stamp is NULL, truncated or has NULL strings");
  }
  if (strcmp(stamp->vendor, EXD_VENDOR) != 0) {
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
  context = (graft_dispatch_device_context_t*)exd_alloc(host, sizeof(*context),
                                                        0);
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
  exd_reader_t reader;
  if (context == NULL) return &k_null_context_status;
  host = context->dispatch->host;
  if (desc == NULL || out_invocation == NULL ||
      !GRAFT_STRUCT_HAS_MEMBER(desc, graft_dispatch_invocation_desc_t,
                               flags) ||
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
  inv->profiling = (desc->flags & GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING) != 0;

  memset(&reader, 0, sizeof(reader));
  reader.host = host;
  reader.dispatch = context->dispatch;
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
  if (status == NULL &&
      (inv->num_inputs != desc->num_inputs ||
       inv->num_outputs != desc->num_outputs)) {
    status = host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "example dispatch: entry '%s' has %zu input(s) and %zu output(s), but "
        "the dispatch op passes %zu and %zu",
        reader.entry, inv->num_inputs, inv->num_outputs, desc->num_inputs,
        desc->num_outputs);
  }
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
static const exd_tensor_t* exd_io_tensor(
    const graft_dispatch_invocation_t* inv, graft_dispatch_io_kind_t kind,
    size_t index, graft_status_t** out_status) {
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
  if (GRAFT_STRUCT_HAS_MEMBER(out_requirements,
                              graft_dispatch_buffer_requirements_t,
                              reserved0)) {
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
