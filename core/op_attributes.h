// An op's builtin options as named, typed attributes, generated from the
// schema's mini-reflection tables: every options table of the schema, present
// and future, converts without code per table. This is what compiler plugins
// see as graft_attribute_t (c_api/graft_graph.h).
#ifndef GRAFT_CORE_OP_ATTRIBUTES_H_
#define GRAFT_CORE_OP_ATTRIBUTES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"

namespace graft {

struct OpAttribute {
  // The kinds match graft_attribute_type_t.
  enum class Type { kInt = 1, kFloat, kBool, kString, kEnum, kIntArray,
                    kFloatArray, kBytes };
  std::string name;
  Type type = Type::kInt;
  int64_t int_value = 0;       // kInt, kBool, kEnum
  double float_value = 0;      // kFloat
  std::string string_value;    // kString; kEnum: the enumerator's name
  std::vector<int64_t> int_values;    // kIntArray
  std::vector<double> float_values;   // kFloatArray
  std::vector<uint8_t> bytes;         // kBytes
};

// The fields of op.builtin_options, then of op.builtin_options_2, in schema
// order, with schema defaults where the model omits a field. Nested tables
// and unions inside options (none in today's schema but StableHLO's) are
// skipped. Empty for ops without options.
std::vector<OpAttribute> OpAttributes(const tfl::OperatorT& op);

}  // namespace graft

#endif  // GRAFT_CORE_OP_ATTRIBUTES_H_
