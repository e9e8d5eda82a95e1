/* The example dispatch library's internals, shared by its two parts:
 * example_dispatch_parse.c reads the text bytecode (BYTECODE.md) into a
 * program over tensor slots, and example_dispatch.c lays out its storage,
 * runs it and exports the ABI. Nothing here is exported: the library is
 * built with hidden visibility, so it still exports exactly the 15
 * functions of graft_dispatch.h. */
#ifndef VENDORS_EXAMPLE_EXAMPLE_DISPATCH_INTERNAL_H_
#define VENDORS_EXAMPLE_EXAMPLE_DISPATCH_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "example_bytecode.h"
#include "graft_dispatch.h"

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

struct graft_dispatch_t {
  /* Borrowed from create; valid until destroy. */
  const graft_host_api_t* host;
  /* Index into exb_soc_models of the device's SoC model. */
  size_t device_soc;
  graft_dispatch_info_t info;
};

struct graft_dispatch_device_context_t {
  graft_dispatch_t* dispatch;
};

/* ------------------------------------------------------------------------ */
/* Programs                                                                   */
/* ------------------------------------------------------------------------ */

/* Instructions (exb_opcode_t) and activations (exb_act_t) are the
 * bytecode's, from example_bytecode.h. */

typedef enum { EXD_ROLE_INPUT = 1, EXD_ROLE_CONST, EXD_ROLE_TENSOR } exd_role_t;

typedef struct {
  uint32_t id;
  exd_role_t role;
  size_t rank;
  int64_t dims[EXD_MAX_RANK];
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
  exb_op_t op;
  exb_act_t act;
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
/* Helpers both parts use                                                     */
/* ------------------------------------------------------------------------ */

static inline void* exd_alloc(const graft_host_api_t* host, size_t size,
                              size_t alignment) {
  return host->allocate(host, size, alignment);
}

static inline void exd_free(const graft_host_api_t* host, void* ptr) {
  host->deallocate(host, ptr);
}

/* Grows *items (element size `item_size`) to hold at least `needed` items.
 * Returns 0 when out of memory, leaving *items as it was. */
int exd_reserve(const graft_host_api_t* host, void** items, size_t* capacity,
                size_t item_size, size_t needed);

/* Copies at most 60 characters of text[0, length) into `out` for a message
 * (see the definition). */
void exd_excerpt(const char* text, size_t length, char* out, size_t out_size);

/* Index in exb_soc_models of the SoC model named text[0, length), or -1. */
int exd_find_soc(const char* text, size_t length);

/* NULL when the device runs bytecode compiled for SoC model text[0, length),
 * else a FAILED_PRECONDITION status saying why not. */
graft_status_t* exd_check_soc(const graft_dispatch_t* dispatch,
                              const char* text, size_t length);

graft_status_t* exd_out_of_memory(const graft_host_api_t* host);

/* Reads entry desc->entry_point of the module desc->bytecode into `inv`
 * (fresh, with host and profiling set): its tensors, constants (from the
 * text, or in place from desc->model_buffers), instructions, inputs and
 * outputs, checking everything BYTECODE.md requires and that the counts
 * are the dispatch op's. Storage is not laid out yet (exd_plan). Returns
 * NULL or the status naming entry, line and problem. */
graft_status_t* exd_parse(graft_dispatch_invocation_t* inv,
                          const graft_dispatch_t* dispatch,
                          const graft_dispatch_invocation_desc_t* desc);

#endif /* VENDORS_EXAMPLE_EXAMPLE_DISPATCH_INTERNAL_H_ */
