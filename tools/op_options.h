// An op's builtin options as named fields, read generically through the
// schema's mini-reflection tables (flatc --reflect-names), so every option
// table of the schema, present and future, prints without a hand-written
// printer per table.
//
// The options are packed into a scratch flatbuffer and walked with
// flatbuffers::IterateFlatBuffer. Packing omits fields equal to their schema
// default, which is exactly what a reader wants to see; ask for all fields to
// get the defaults as well.
#ifndef GRAFT_TOOLS_OP_OPTIONS_H_
#define GRAFT_TOOLS_OP_OPTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "tools/json_writer.h"

namespace graft::tools {

// One value read from a flatbuffer through mini-reflection.
struct ReflectedValue {
  enum class Kind {
    kBool,
    kInt,      // Signed integer; `i`.
    kUInt,     // Unsigned integer; `u`.
    kFloat,    // `f`; `single` when the field is a float.
    kEnum,     // A named enum value (or union type): `name`, numeric `i`.
    kString,   // `name` holds the string.
    kArray,    // `elements`.
    kTable,    // `fields`, in schema order.
    kUnknown,  // A value this build's schema cannot interpret.
  };
  Kind kind = Kind::kUnknown;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  bool single = false;
  std::string name;
  // For kArray: the elements are bytes ([ubyte] / [byte]), usually an
  // opaque blob such as flexbuffer attributes.
  bool bytes = false;
  std::vector<ReflectedValue> elements;
  std::vector<std::pair<std::string, ReflectedValue>> fields;
};

using OptionFields = std::vector<std::pair<std::string, ReflectedValue>>;

// The fields of `op`'s builtin_options followed by those of its
// builtin_options_2, in schema order. Fields equal to their default are
// left out unless `include_defaults`. Empty when the op has no options.
OptionFields OpOptionFields(const tfl::OperatorT& op,
                            bool include_defaults = false);

// "padding=SAME stride_w=2": one `name=value` per field, space separated.
// Arrays longer than `max_elements` are cut with "..."; byte arrays print as
// "<N bytes>".
std::string FormatOptionFields(const OptionFields& fields,
                               size_t max_elements = 16);
// One value as FormatOptionFields prints it.
std::string FormatReflectedValue(const ReflectedValue& value,
                                 size_t max_elements = 16);

// Writes `fields` as a JSON object (enums as their names, arrays in full).
void WriteOptionFieldsJson(const OptionFields& fields, JsonWriter& json);

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_OP_OPTIONS_H_
