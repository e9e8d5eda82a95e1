/* The example bytecode's tables and shape rules (example_bytecode.h). */
#include "example_bytecode.h"

#include <string.h>

#include "graft_schema_constants.h"

const char* const exb_soc_models[EXB_NUM_SOC_MODELS] = {"example-soc-1",
                                                        "example-soc-2"};

const exb_opcode_t exb_opcodes[EXB_NUM_OPCODES] = {
    {"add", EXB_OP_ADD, EXB_KIND_BINARY, GRAFT_OP_ADD},
    {"sub", EXB_OP_SUB, EXB_KIND_BINARY, GRAFT_OP_SUB},
    {"mul", EXB_OP_MUL, EXB_KIND_BINARY, GRAFT_OP_MUL},
    {"div", EXB_OP_DIV, EXB_KIND_BINARY, GRAFT_OP_DIV},
    {"relu", EXB_OP_RELU, EXB_KIND_UNARY, GRAFT_OP_RELU},
    {"relu6", EXB_OP_RELU6, EXB_KIND_UNARY, GRAFT_OP_RELU6},
    {"logistic", EXB_OP_LOGISTIC, EXB_KIND_UNARY, GRAFT_OP_LOGISTIC},
    {"tanh", EXB_OP_TANH, EXB_KIND_UNARY, GRAFT_OP_TANH},
    {"fully_connected", EXB_OP_FULLY_CONNECTED, EXB_KIND_FULLY_CONNECTED,
     GRAFT_OP_FULLY_CONNECTED},
};

const exb_opcode_t* exb_opcode_for_builtin(int32_t builtin_code) {
  size_t i;
  for (i = 0; i < EXB_NUM_OPCODES; ++i) {
    if (exb_opcodes[i].builtin_code == builtin_code) return &exb_opcodes[i];
  }
  return NULL;
}

const exb_opcode_t* exb_opcode_named(const char* text, size_t length) {
  size_t i;
  for (i = 0; i < EXB_NUM_OPCODES; ++i) {
    if (strlen(exb_opcodes[i].name) == length &&
        memcmp(exb_opcodes[i].name, text, length) == 0) {
      return &exb_opcodes[i];
    }
  }
  return NULL;
}

static const char* const k_act_names[] = {"none", "relu", "relu6"};

int exb_act_from_tflite(int64_t value, exb_act_t* out_act) {
  switch (value) {
    case GRAFT_ACTIVATION_FUNCTION_TYPE_NONE:
      *out_act = EXB_ACT_NONE;
      return 1;
    case GRAFT_ACTIVATION_FUNCTION_TYPE_RELU:
      *out_act = EXB_ACT_RELU;
      return 1;
    case GRAFT_ACTIVATION_FUNCTION_TYPE_RELU6:
      *out_act = EXB_ACT_RELU6;
      return 1;
    default:
      return 0;
  }
}

const char* exb_act_name(exb_act_t act) { return k_act_names[act]; }

int exb_act_named(const char* text, size_t length, exb_act_t* out_act) {
  size_t i;
  for (i = 0; i < sizeof(k_act_names) / sizeof(k_act_names[0]); ++i) {
    if (strlen(k_act_names[i]) == length &&
        memcmp(k_act_names[i], text, length) == 0) {
      *out_act = (exb_act_t)i;
      return 1;
    }
  }
  return 0;
}

int exb_same_shape(const int64_t* a, size_t a_rank, const int64_t* b,
                   size_t b_rank) {
  size_t i;
  if (a_rank != b_rank) return 0;
  for (i = 0; i < a_rank; ++i) {
    if (a[i] != b[i]) return 0;
  }
  return 1;
}

int exb_broadcasts_to(const int64_t* operand, size_t operand_rank,
                      const int64_t* dest, size_t dest_rank) {
  size_t skip = 0, kept, i;
  while (skip < operand_rank && operand[skip] == 1) ++skip;
  kept = operand_rank - skip;
  if (kept > dest_rank) return 0;
  for (i = 0; i < kept; ++i) {
    if (operand[skip + i] != dest[dest_rank - kept + i]) return 0;
  }
  return 1;
}
