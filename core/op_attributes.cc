#include "core/op_attributes.h"

#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/minireflect.h"

namespace graft {
namespace {

using flatbuffers::ElementaryType;
using flatbuffers::TypeTable;

// Scalar of elementary type `et` at `p`, widened.
int64_t ReadInt(ElementaryType et, const uint8_t* p) {
  switch (et) {
    case flatbuffers::ET_UTYPE:
    case flatbuffers::ET_BOOL:
    case flatbuffers::ET_UCHAR: return flatbuffers::ReadScalar<uint8_t>(p);
    case flatbuffers::ET_CHAR: return flatbuffers::ReadScalar<int8_t>(p);
    case flatbuffers::ET_SHORT: return flatbuffers::ReadScalar<int16_t>(p);
    case flatbuffers::ET_USHORT: return flatbuffers::ReadScalar<uint16_t>(p);
    case flatbuffers::ET_INT: return flatbuffers::ReadScalar<int32_t>(p);
    case flatbuffers::ET_UINT: return flatbuffers::ReadScalar<uint32_t>(p);
    case flatbuffers::ET_LONG: return flatbuffers::ReadScalar<int64_t>(p);
    case flatbuffers::ET_ULONG:
      return static_cast<int64_t>(flatbuffers::ReadScalar<uint64_t>(p));
    default: return 0;
  }
}

double ReadFloat(ElementaryType et, const uint8_t* p) {
  return et == flatbuffers::ET_FLOAT ? flatbuffers::ReadScalar<float>(p)
                                     : flatbuffers::ReadScalar<double>(p);
}

bool IsFloat(ElementaryType et) {
  return et == flatbuffers::ET_FLOAT || et == flatbuffers::ET_DOUBLE;
}

std::string EnumName(const TypeTable* enum_table, int64_t value) {
  if (enum_table == nullptr) return "";
  for (size_t i = 0; i < enum_table->num_elems; ++i) {
    int64_t v = enum_table->values ? enum_table->values[i]
                                   : static_cast<int64_t>(i);
    if (v == value) return enum_table->names[i];
  }
  return "";
}

void AppendTable(const TypeTable* tt, const flatbuffers::Table* table,
                 std::vector<OpAttribute>& out) {
  for (size_t i = 0; i < tt->num_elems; ++i) {
    const flatbuffers::TypeCode& tc = tt->type_codes[i];
    auto et = static_cast<ElementaryType>(tc.base_type);
    const TypeTable* ref =
        tc.sequence_ref >= 0 ? tt->type_refs[tc.sequence_ref]() : nullptr;
    auto voffset = flatbuffers::FieldIndexToOffset(static_cast<flatbuffers::voffset_t>(i));
    const uint8_t* field = table->GetAddressOf(voffset);
    OpAttribute a;
    a.name = tt->names[i];
    if (et == flatbuffers::ET_SEQUENCE || et == flatbuffers::ET_UTYPE) {
      continue;  // Nested tables and unions: not attributes.
    }
    if (tc.is_repeating) {
      const auto* vec = table->GetPointer<const flatbuffers::VectorOfAny*>(voffset);
      if (et == flatbuffers::ET_STRING) continue;
      size_t n = vec ? vec->size() : 0;
      size_t width = flatbuffers::InlineSize(et, ref);
      const uint8_t* data = vec ? vec->Data() : nullptr;
      if (et == flatbuffers::ET_UCHAR && ref == nullptr) {
        a.type = OpAttribute::Type::kBytes;
        a.bytes.assign(data, data + n);
      } else if (IsFloat(et)) {
        a.type = OpAttribute::Type::kFloatArray;
        for (size_t k = 0; k < n; ++k) a.float_values.push_back(ReadFloat(et, data + k * width));
      } else {
        a.type = OpAttribute::Type::kIntArray;
        for (size_t k = 0; k < n; ++k) a.int_values.push_back(ReadInt(et, data + k * width));
      }
    } else if (et == flatbuffers::ET_STRING) {
      const auto* s = table->GetPointer<const flatbuffers::String*>(voffset);
      a.type = OpAttribute::Type::kString;
      a.string_value = s ? s->str() : "";
    } else if (field == nullptr) {
      // Packed with ForceDefaults, so scalars are present; an absent one is
      // a deprecated field (never written).
      continue;
    } else if (IsFloat(et)) {
      a.type = OpAttribute::Type::kFloat;
      a.float_value = ReadFloat(et, field);
    } else if (et == flatbuffers::ET_BOOL) {
      a.type = OpAttribute::Type::kBool;
      a.int_value = ReadInt(et, field) != 0;
    } else if (ref != nullptr && ref->st == flatbuffers::ST_ENUM) {
      a.type = OpAttribute::Type::kEnum;
      a.int_value = ReadInt(et, field);
      a.string_value = EnumName(ref, a.int_value);
    } else {
      a.type = OpAttribute::Type::kInt;
      a.int_value = ReadInt(et, field);
    }
    out.push_back(std::move(a));
  }
}

template <typename Union>
void AppendUnion(const Union& u, const TypeTable* union_table,
                 std::vector<OpAttribute>& out) {
  if (u.value == nullptr) return;
  size_t type = static_cast<size_t>(u.type);
  if (type == 0 || type >= union_table->num_elems) return;
  const flatbuffers::TypeCode& tc = union_table->type_codes[type];
  if (tc.sequence_ref < 0) return;
  const TypeTable* tt = union_table->type_refs[tc.sequence_ref]();
  // One builder per thread, reused: ops are converted by the thousand.
  static thread_local flatbuffers::FlatBufferBuilder fbb;
  fbb.Clear();
  fbb.ForceDefaults(true);
  fbb.Finish(u.Pack(fbb));
  AppendTable(tt, flatbuffers::GetRoot<flatbuffers::Table>(fbb.GetBufferPointer()),
              out);
}

}  // namespace

std::vector<OpAttribute> OpAttributes(const tfl::OperatorT& op) {
  std::vector<OpAttribute> out;
  AppendUnion(op.builtin_options, tfl::BuiltinOptionsTypeTable(), out);
  AppendUnion(op.builtin_options_2, tfl::BuiltinOptions2TypeTable(), out);
  return out;
}

}  // namespace graft
