#include "tools/op_options.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/minireflect.h"

namespace graft::tools {
namespace {

// Builds a ReflectedValue tree from IterateObject's callbacks. Containers
// being filled sit on a stack; a pointer into a parent's vector stays valid
// because the parent only grows after its child is closed.
class TreeBuilder : public flatbuffers::IterationVisitor {
 public:
  ReflectedValue& root() { return root_; }

  void StartSequence() override {
    ReflectedValue v;
    v.kind = ReflectedValue::Kind::kTable;
    stack_.push_back(Add(std::move(v)));
  }
  void EndSequence() override { stack_.pop_back(); }
  void Field(size_t, size_t, flatbuffers::ElementaryType type, bool,
             const flatbuffers::TypeTable* type_table, const char* name,
             const uint8_t* val) override {
    if (val == nullptr) return;
    field_name_ = name != nullptr ? name : "?";
    // Enum-typed byte fields have a type table; plain bytes do not.
    field_is_bytes_ =
        (type == flatbuffers::ET_UCHAR || type == flatbuffers::ET_CHAR) &&
        type_table == nullptr;
  }
  void StartVector() override {
    ReflectedValue v;
    v.kind = ReflectedValue::Kind::kArray;
    v.bytes = field_is_bytes_;
    stack_.push_back(Add(std::move(v)));
  }
  void EndVector() override { stack_.pop_back(); }

  void UType(uint8_t x, const char* name) override { Named(x, name); }
  void Bool(bool x) override {
    ReflectedValue v;
    v.kind = ReflectedValue::Kind::kBool;
    v.b = x;
    Add(std::move(v));
  }
  void Char(int8_t x, const char* name) override { Named(x, name); }
  void UChar(uint8_t x, const char* name) override { Named(x, name); }
  void Short(int16_t x, const char* name) override { Named(x, name); }
  void UShort(uint16_t x, const char* name) override { Named(x, name); }
  void Int(int32_t x, const char* name) override { Named(x, name); }
  void UInt(uint32_t x, const char* name) override { Named(x, name); }
  void Long(int64_t x) override { Named(x, nullptr); }
  void ULong(uint64_t x) override { Named(x, nullptr); }
  void Float(float x) override { Real(x, true); }
  void Double(double x) override { Real(x, false); }
  void String(const flatbuffers::String* s) override {
    ReflectedValue v;
    v.kind = ReflectedValue::Kind::kString;
    v.name = s->str();
    Add(std::move(v));
  }
  void Unknown(const uint8_t*) override { Add(ReflectedValue{}); }

 private:
  template <typename T>
  void Named(T x, const char* name) {
    ReflectedValue v;
    if (name != nullptr) {
      v.kind = ReflectedValue::Kind::kEnum;
      v.name = name;
      v.i = static_cast<int64_t>(x);
    } else if (std::is_signed<T>::value) {
      v.kind = ReflectedValue::Kind::kInt;
      v.i = static_cast<int64_t>(x);
    } else {
      v.kind = ReflectedValue::Kind::kUInt;
      v.u = static_cast<uint64_t>(x);
    }
    Add(std::move(v));
  }
  void Real(double x, bool single) {
    ReflectedValue v;
    v.kind = ReflectedValue::Kind::kFloat;
    v.f = x;
    v.single = single;
    Add(std::move(v));
  }
  ReflectedValue* Add(ReflectedValue v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    ReflectedValue* top = stack_.back();
    if (top->kind == ReflectedValue::Kind::kTable) {
      top->fields.emplace_back(std::move(field_name_), std::move(v));
      field_name_.clear();
      return &top->fields.back().second;
    }
    top->elements.push_back(std::move(v));
    return &top->elements.back();
  }

  ReflectedValue root_;
  std::vector<ReflectedValue*> stack_;
  std::string field_name_;
  bool field_is_bytes_ = false;
};

// Packs one options union (BuiltinOptionsUnion or BuiltinOptions2Union) and
// appends its fields to `out`. `union_table` is the union's TypeTable.
template <typename Union>
void AppendUnionFields(const Union& options,
                       const flatbuffers::TypeTable* union_table,
                       bool include_defaults, OptionFields& out) {
  if (options.value == nullptr) return;
  auto type = static_cast<int64_t>(options.type);
  int64_t index = flatbuffers::LookupEnum(type, union_table->values,
                                          union_table->num_elems);
  if (index <= 0 || index >= static_cast<int64_t>(union_table->num_elems)) {
    return;  // NONE, or a member this schema does not know.
  }
  flatbuffers::TypeCode code = union_table->type_codes[index];
  if (code.base_type != flatbuffers::ET_SEQUENCE || code.sequence_ref < 0) {
    return;
  }
  const flatbuffers::TypeTable* table =
      union_table->type_refs[code.sequence_ref]();

  flatbuffers::FlatBufferBuilder fbb;
  fbb.ForceDefaults(include_defaults);
  flatbuffers::Offset<void> offset = options.Pack(fbb);
  if (offset.IsNull()) return;
  fbb.Finish(offset);
  TreeBuilder tree;
  flatbuffers::IterateFlatBuffer(fbb.GetBufferPointer(), table, &tree);
  for (auto& field : tree.root().fields) out.push_back(std::move(field));
}

}  // namespace

OptionFields OpOptionFields(const tfl::OperatorT& op, bool include_defaults) {
  OptionFields fields;
  AppendUnionFields(op.builtin_options, tfl::BuiltinOptionsTypeTable(),
                    include_defaults, fields);
  AppendUnionFields(op.builtin_options_2, tfl::BuiltinOptions2TypeTable(),
                    include_defaults, fields);
  return fields;
}

std::string FormatReflectedValue(const ReflectedValue& value,
                                 size_t max_elements) {
  using Kind = ReflectedValue::Kind;
  switch (value.kind) {
    case Kind::kBool:
      return value.b ? "true" : "false";
    case Kind::kInt:
      return absl::StrCat(value.i);
    case Kind::kUInt:
      return absl::StrCat(value.u);
    case Kind::kFloat:
      return absl::StrCat(value.f);
    case Kind::kEnum:
      return value.name;
    case Kind::kString:
      return absl::StrCat("\"", absl::CHexEscape(value.name), "\"");
    case Kind::kArray: {
      if (value.bytes)
        return absl::StrCat("<", value.elements.size(), " bytes>");
      std::string out = "[";
      for (size_t k = 0; k < value.elements.size(); ++k) {
        if (k == max_elements) {
          absl::StrAppend(&out, ",... (", value.elements.size(), ")");
          break;
        }
        if (k > 0) out += ",";
        out += FormatReflectedValue(value.elements[k], max_elements);
      }
      return out + "]";
    }
    case Kind::kTable:
      return absl::StrCat("{", FormatOptionFields(value.fields, max_elements),
                          "}");
    case Kind::kUnknown:
      break;
  }
  return "?";
}

std::string FormatOptionFields(const OptionFields& fields,
                               size_t max_elements) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += ' ';
    absl::StrAppend(&out, name, "=", FormatReflectedValue(value, max_elements));
  }
  return out;
}

namespace {

void WriteValueJson(const ReflectedValue& value, JsonWriter& json) {
  using Kind = ReflectedValue::Kind;
  switch (value.kind) {
    case Kind::kBool:
      json.Bool(value.b);
      return;
    case Kind::kInt:
      json.Int(value.i);
      return;
    case Kind::kUInt:
      json.UInt(value.u);
      return;
    case Kind::kFloat:
      if (value.single) {
        json.Float(static_cast<float>(value.f));
      } else {
        json.Double(value.f);
      }
      return;
    case Kind::kEnum:
    case Kind::kString:
      json.String(value.name);
      return;
    case Kind::kArray:
      json.BeginArray();
      for (const ReflectedValue& e : value.elements) WriteValueJson(e, json);
      json.EndArray();
      return;
    case Kind::kTable:
      WriteOptionFieldsJson(value.fields, json);
      return;
    case Kind::kUnknown:
      json.Null();
      return;
  }
}

}  // namespace

void WriteOptionFieldsJson(const OptionFields& fields, JsonWriter& json) {
  json.BeginObject();
  for (const auto& [name, value] : fields) {
    json.Key(name);
    WriteValueJson(value, json);
  }
  json.EndObject();
}

}  // namespace graft::tools
