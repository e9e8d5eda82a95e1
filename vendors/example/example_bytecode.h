/* The example bytecode (BYTECODE.md), stated once for both halves of the
 * example vendor: the compiler plugin writes it, the dispatch library reads
 * it. Its identity (vendor, format version, header word, SoC models), its
 * instruction set (each instruction's name, operand kind and the TFLite op
 * it implements), its activations, and its shape rules.
 *
 * Internal to the vendor's two libraries: compiled into each, hidden like
 * everything but their entry points, so it adds no exported symbol. */
#ifndef VENDORS_EXAMPLE_EXAMPLE_BYTECODE_H_
#define VENDORS_EXAMPLE_EXAMPLE_BYTECODE_H_

#include <stddef.h>
#include <stdint.h>

/* The vendor name of the stamp, the plugin and the dispatch library. */
#define EXB_VENDOR "example"
/* The stamp's bytecode_format_version and the header's "v1". */
#define EXB_FORMAT_VERSION 1u
/* The header line is EXB_MAGIC " v1". */
#define EXB_MAGIC "example-bytecode"

/* SoC models in release order; the plugin's first is its default. A
 * device runs bytecode compiled for its own model or an earlier one. */
#define EXB_NUM_SOC_MODELS 2
extern const char* const exb_soc_models[EXB_NUM_SOC_MODELS];

typedef enum {
  EXB_OP_ADD,
  EXB_OP_SUB,
  EXB_OP_MUL,
  EXB_OP_DIV,
  EXB_OP_RELU,
  EXB_OP_RELU6,
  EXB_OP_LOGISTIC,
  EXB_OP_TANH,
  EXB_OP_FULLY_CONNECTED
} exb_op_t;

/* The operand form of an instruction (BYTECODE.md's grammar):
 *   binary           "d = a, b act=A"
 *   unary            "d = x"
 *   fully_connected  "d = x, w, b act=A" (b may be "-") */
typedef enum {
  EXB_KIND_BINARY,
  EXB_KIND_UNARY,
  EXB_KIND_FULLY_CONNECTED
} exb_kind_t;

typedef struct {
  /* The instruction's name in the text, e.g. "add". */
  const char* name;
  exb_op_t op;
  exb_kind_t kind;
  /* The TFLite BuiltinOperator the plugin compiles into it. */
  int32_t builtin_code;
} exb_opcode_t;

#define EXB_NUM_OPCODES 9
extern const exb_opcode_t exb_opcodes[EXB_NUM_OPCODES];

/* The instruction implementing TFLite op `builtin_code`, or NULL. */
const exb_opcode_t* exb_opcode_for_builtin(int32_t builtin_code);
/* The instruction named text[0, length), or NULL. */
const exb_opcode_t* exb_opcode_named(const char* text, size_t length);

/* Fused activations, "act=none|relu|relu6". */
typedef enum { EXB_ACT_NONE, EXB_ACT_RELU, EXB_ACT_RELU6 } exb_act_t;

/* The activation of TFLite ActivationFunctionType `value` (NONE, RELU,
 * RELU6); 0 for any other. */
int exb_act_from_tflite(int64_t value, exb_act_t* out_act);
/* "none", "relu" or "relu6". */
const char* exb_act_name(exb_act_t act);
/* The activation named text[0, length); 0 for any other name. */
int exb_act_named(const char* text, size_t length, exb_act_t* out_act);

/* Shape rules. Dimensions are non-negative. */

/* 1 when the shapes are equal (rank and dims). */
int exb_same_shape(const int64_t* a, size_t a_rank, const int64_t* b,
                   size_t b_rank);
/* The broadcast rule: `operand`, with its leading 1s dropped, equals the
 * trailing dimensions of `dest`. For exactly those shapes TFLite's
 * row-major broadcasting is operand[i mod n(operand)], so the interpreter
 * needs no shape arithmetic (a single element, a trailing-dims row or an
 * equal shape). */
int exb_broadcasts_to(const int64_t* operand, size_t operand_rank,
                      const int64_t* dest, size_t dest_rank);

#endif /* VENDORS_EXAMPLE_EXAMPLE_BYTECODE_H_ */
