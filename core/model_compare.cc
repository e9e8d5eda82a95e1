// CompareModels: field-by-field structural equality with a located message.
//
// Whole records are compared with the operator== flatc generates
// (--gen-compare), so a field added to the schema is compared with no code
// here. Only to name the differing field do we look at fields one by one;
// a difference in a field not listed below is still caught, and reported
// without a field name.

#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/model.h"
#include "core/model_io.h"
#include "core/status.h"
#include "flatbuffers/flatbuffers.h"

namespace graft {
namespace {

template <typename T>
bool DeepEq(const std::unique_ptr<T>& a, const std::unique_ptr<T>& b) {
  return a == b || (a != nullptr && b != nullptr && *a == *b);
}

template <typename T>
bool DeepEq(const std::vector<std::unique_ptr<T>>& a,
            const std::vector<std::unique_ptr<T>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!DeepEq(a[i], b[i])) return false;
  }
  return true;
}

// Equal as stored: the records encode to the same bytes. The generated
// operator== compares floats with ==, so a record holding a NaN (a scale,
// an option) is unequal to itself; bit for bit it is the same model. Only
// asked when operator== said no, so its cost does not matter.
template <typename T>
bool SameEncoding(const T& a, const T& b) {
  flatbuffers::FlatBufferBuilder fa, fb;
  fa.Finish(T::TableType::Pack(fa, &a));
  fb.Finish(T::TableType::Pack(fb, &b));
  return fa.GetSize() == fb.GetSize() &&
         std::memcmp(fa.GetBufferPointer(), fb.GetBufferPointer(),
                     fa.GetSize()) == 0;
}

template <typename T>
bool Same(const T& a, const T& b) {
  return a == b || SameEncoding(a, b);
}

std::string Quoted(absl::string_view s) {
  return absl::StrCat("\"", absl::CHexEscape(s), "\"");
}

// Short printable values for the common cases; long lists are summarized.
template <typename T>
std::string Show(const std::vector<T>& v) {
  if (v.size() > 16) return absl::StrCat("(", v.size(), " elements)");
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}
std::string Show(const std::vector<bool>& v) {
  std::vector<int> ints(v.begin(), v.end());
  return Show(ints);
}
std::string Show(const std::vector<uint8_t>& v) {
  if (v.size() > 16) return absl::StrCat("(", v.size(), " bytes)");
  std::vector<int> ints(v.begin(), v.end());
  return Show(ints);
}
std::string Show(const std::string& s) { return Quoted(s); }
std::string Show(tfl::TensorType t) { return TensorTypeName(t); }
template <typename T>
std::string Show(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return absl::StrCat(static_cast<int64_t>(v));
  } else {
    return absl::StrCat(v);
  }
}

absl::Status Differs(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

// Reports `field` when a.field != b.field, with both values.
#define GRAFT_COMPARE_FIELD(where, a, b, field)                                \
  do {                                                                         \
    if (!((a).field == (b).field)) {                                           \
      return Differs(where, absl::StrCat(#field " differs: ", Show((a).field), \
                                         " vs ", Show((b).field)));            \
    }                                                                          \
  } while (0)

// Reports `field` when it differs, without values (nested records).
#define GRAFT_COMPARE_DEEP(where, a, b, field)  \
  do {                                          \
    if (!DeepEq((a).field, (b).field)) {        \
      return Differs(where, #field " differs"); \
    }                                           \
  } while (0)

#define GRAFT_COMPARE_UNION(where, a, b, field)                               \
  do {                                                                        \
    if ((a).field.type != (b).field.type) {                                   \
      return Differs(                                                         \
          where, absl::StrCat(#field " type differs: ", Show((a).field.type), \
                              " vs ", Show((b).field.type)));                 \
    }                                                                         \
    if (!((a).field == (b).field)) {                                          \
      return Differs(where, #field " values differ");                         \
    }                                                                         \
  } while (0)

absl::Status CompareTensor(const std::string& where, const tfl::TensorT& a,
                           const tfl::TensorT& b) {
  if (Same(a, b)) return absl::OkStatus();
  GRAFT_COMPARE_FIELD(where, a, b, name);
  GRAFT_COMPARE_FIELD(where, a, b, shape);
  GRAFT_COMPARE_FIELD(where, a, b, type);
  GRAFT_COMPARE_FIELD(where, a, b, buffer);
  GRAFT_COMPARE_DEEP(where, a, b, quantization);
  GRAFT_COMPARE_FIELD(where, a, b, is_variable);
  GRAFT_COMPARE_DEEP(where, a, b, sparsity);
  GRAFT_COMPARE_FIELD(where, a, b, shape_signature);
  GRAFT_COMPARE_FIELD(where, a, b, has_rank);
  GRAFT_COMPARE_DEEP(where, a, b, variant_tensors);
  return Differs(where, "a field differs");
}

absl::Status CompareOp(const std::string& where, const tfl::OperatorT& a,
                       const tfl::OperatorT& b) {
  if (Same(a, b)) return absl::OkStatus();
  GRAFT_COMPARE_FIELD(where, a, b, opcode_index);
  GRAFT_COMPARE_FIELD(where, a, b, inputs);
  GRAFT_COMPARE_FIELD(where, a, b, outputs);
  GRAFT_COMPARE_UNION(where, a, b, builtin_options);
  GRAFT_COMPARE_FIELD(where, a, b, custom_options);
  GRAFT_COMPARE_FIELD(where, a, b, custom_options_format);
  GRAFT_COMPARE_FIELD(where, a, b, mutating_variable_inputs);
  GRAFT_COMPARE_FIELD(where, a, b, intermediates);
  GRAFT_COMPARE_FIELD(where, a, b, large_custom_options_offset);
  GRAFT_COMPARE_FIELD(where, a, b, large_custom_options_size);
  GRAFT_COMPARE_UNION(where, a, b, builtin_options_2);
  GRAFT_COMPARE_FIELD(where, a, b, debug_metadata_index);
  return Differs(where, "a field differs");
}

absl::Status CompareOpCode(const std::string& where,
                           const tfl::OperatorCodeT& a,
                           const tfl::OperatorCodeT& b) {
  if (Same(a, b)) return absl::OkStatus();
  GRAFT_COMPARE_FIELD(where, a, b, builtin_code);
  GRAFT_COMPARE_FIELD(where, a, b, deprecated_builtin_code);
  GRAFT_COMPARE_FIELD(where, a, b, custom_code);
  GRAFT_COMPARE_FIELD(where, a, b, version);
  return Differs(where, "a field differs");
}

absl::Status CompareSignature(const std::string& where,
                              const tfl::SignatureDefT& a,
                              const tfl::SignatureDefT& b) {
  if (Same(a, b)) return absl::OkStatus();
  GRAFT_COMPARE_FIELD(where, a, b, signature_key);
  GRAFT_COMPARE_FIELD(where, a, b, subgraph_index);
  GRAFT_COMPARE_DEEP(where, a, b, inputs);
  GRAFT_COMPARE_DEEP(where, a, b, outputs);
  return Differs(where, "a field differs");
}

// Present-but-empty vector fields (see EmptyVectors): `[]` and absent are
// different files, so they are different models here.
absl::Status CompareEmptyVectors(absl::string_view where,
                                 const std::vector<std::string>& a,
                                 const std::vector<std::string>& b) {
  if (a == b) return absl::OkStatus();
  return Differs(where, absl::StrCat("present empty vectors differ: [",
                                     absl::StrJoin(a, ","), "] vs [",
                                     absl::StrJoin(b, ","), "]"));
}

absl::Status CompareCount(const std::string& what, size_t a, size_t b) {
  if (a == b) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": count differs: ", a, " vs ", b));
}

std::string Labeled(const std::string& path, absl::string_view name) {
  return name.empty() ? path : absl::StrCat(path, " (", Quoted(name), ")");
}

absl::Status CompareSubgraph(size_t s, const Subgraph& a, const Subgraph& b) {
  std::string where = absl::StrCat("subgraphs[", s, "]");
  GRAFT_COMPARE_FIELD(where, a, b, name);
  GRAFT_COMPARE_FIELD(where, a, b, inputs);
  GRAFT_COMPARE_FIELD(where, a, b, outputs);
  GRAFT_COMPARE_FIELD(where, a, b, debug_metadata_index);
  GRAFT_RETURN_IF_ERROR(CompareEmptyVectors(where, PresentEmptyVectors(a),
                                            PresentEmptyVectors(b)));
  GRAFT_RETURN_IF_ERROR(CompareCount(absl::StrCat(where, ".tensors"),
                                     a.tensors.size(), b.tensors.size()));
  for (size_t t = 0; t < a.tensors.size(); ++t) {
    const std::string at =
        Labeled(absl::StrCat(where, ".tensors[", t, "]"), a.tensors[t].name);
    GRAFT_RETURN_IF_ERROR(CompareTensor(at, a.tensors[t], b.tensors[t]));
    const auto id = static_cast<TensorId>(t);
    GRAFT_RETURN_IF_ERROR(
        CompareEmptyVectors(at, TensorPresentEmptyVectors(a, id),
                            TensorPresentEmptyVectors(b, id)));
  }
  GRAFT_RETURN_IF_ERROR(CompareCount(absl::StrCat(where, ".operators"),
                                     a.ops.size(), b.ops.size()));
  for (size_t k = 0; k < a.ops.size(); ++k) {
    const std::string at = absl::StrCat(where, ".operators[", k, "]");
    GRAFT_RETURN_IF_ERROR(CompareOp(at, a.ops[k], b.ops[k]));
    const auto id = static_cast<OpId>(k);
    GRAFT_RETURN_IF_ERROR(CompareEmptyVectors(at, OpPresentEmptyVectors(a, id),
                                              OpPresentEmptyVectors(b, id)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CompareModels(const Model& a, const Model& b) {
  GRAFT_COMPARE_FIELD("model", a, b, version);
  GRAFT_COMPARE_FIELD("model", a, b, description);
  GRAFT_RETURN_IF_ERROR(CompareEmptyVectors("model", PresentEmptyVectors(a),
                                            PresentEmptyVectors(b)));
  GRAFT_RETURN_IF_ERROR(CompareCount("operator_codes", a.operator_codes.size(),
                                     b.operator_codes.size()));
  for (size_t i = 0; i < a.operator_codes.size(); ++i) {
    GRAFT_RETURN_IF_ERROR(
        CompareOpCode(absl::StrCat("operator_codes[", i, "] (",
                                   OpCodeName(a.operator_codes[i]), ")"),
                      a.operator_codes[i], b.operator_codes[i]));
  }
  GRAFT_RETURN_IF_ERROR(
      CompareCount("subgraphs", a.subgraphs.size(), b.subgraphs.size()));
  for (size_t s = 0; s < a.subgraphs.size(); ++s) {
    GRAFT_RETURN_IF_ERROR(CompareSubgraph(s, a.subgraphs[s], b.subgraphs[s]));
  }
  GRAFT_RETURN_IF_ERROR(
      CompareCount("buffers", a.buffers.size(), b.buffers.size()));
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    // By content: where the bytes live (inline, outside, owned) is not part
    // of the model's meaning.
    const Bytes& da = a.buffers[i].data;
    const Bytes& db = b.buffers[i].data;
    if (da.empty() && db.empty() &&
        a.buffers[i].empty_data_present != b.buffers[i].empty_data_present) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffers[", i, "]: data is ",
          a.buffers[i].empty_data_present ? "[]" : "absent", " vs ",
          b.buffers[i].empty_data_present ? "[]" : "absent"));
    }
    if (da.size() != db.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "buffers[", i, "]: size differs: ", da.size(), " vs ", db.size()));
    }
    if (da != db) {
      size_t at = 0;
      while (da.data()[at] == db.data()[at]) ++at;
      return absl::InvalidArgumentError(
          absl::StrCat("buffers[", i, "]: contents differ from byte ", at));
    }
  }
  GRAFT_COMPARE_FIELD("model", a, b, metadata_buffer);
  GRAFT_RETURN_IF_ERROR(
      CompareCount("metadata", a.metadata.size(), b.metadata.size()));
  for (size_t i = 0; i < a.metadata.size(); ++i) {
    std::string where =
        Labeled(absl::StrCat("metadata[", i, "]"), a.metadata[i].name);
    GRAFT_COMPARE_FIELD(where, a.metadata[i], b.metadata[i], name);
    GRAFT_COMPARE_FIELD(where, a.metadata[i], b.metadata[i], buffer);
    if (!(a.metadata[i] == b.metadata[i])) {
      return Differs(where, "a field differs");
    }
  }
  GRAFT_RETURN_IF_ERROR(CompareCount("signature_defs", a.signature_defs.size(),
                                     b.signature_defs.size()));
  for (size_t i = 0; i < a.signature_defs.size(); ++i) {
    const std::string at = Labeled(absl::StrCat("signature_defs[", i, "]"),
                                   a.signature_defs[i].signature_key);
    GRAFT_RETURN_IF_ERROR(
        CompareSignature(at, a.signature_defs[i], b.signature_defs[i]));
    GRAFT_RETURN_IF_ERROR(
        CompareEmptyVectors(at, SignaturePresentEmptyVectors(a, i),
                            SignaturePresentEmptyVectors(b, i)));
  }
  return absl::OkStatus();
}

}  // namespace graft
