// VerifyFlatbuffer (structure of the bytes) and VerifyModel (meaning of the
// IR). See model_io.h for the contracts.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/flatbuffer_util.h"
#include "core/model.h"
#include "core/model_io.h"
#include "core/status.h"
#include "flatbuffers/flatbuffers.h"

namespace graft {
namespace {

// Flatbuffer structure.

constexpr flatbuffers::uoffset_t kMaxDepth = 64;
// Large enough for models with hundreds of thousands of ops (each op, tensor
// and options record is a table), small enough to bound the work on a
// malicious file.
constexpr flatbuffers::uoffset_t kMaxTables = 10'000'000;

flatbuffers::Verifier::Options VerifierOptions() {
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxDepth;
  options.max_tables = kMaxTables;
  options.check_alignment = true;
  return options;
}

// The flatbuffer itself is below 2 GiB, but a file with buffers stored after
// it can be larger, and the verifier cannot handle (and asserts on) spans of
// 2 GiB or more. The flatbuffer's own size is not recorded anywhere, so
// verify the largest prefix the verifier accepts: every offset inside a valid
// flatbuffer lies within it.
size_t VerifiableSize(size_t size) {
  return std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
}

std::string Hex(size_t offset) { return absl::StrFormat("0x%x", offset); }

// Walks the flatbuffer the way the generated verifier does, to say where and
// why it is invalid, and to check what that verifier leaves out.
//
// flatbuffers::Verifier only answers yes or no. This walk repeats its checks
// in the same order (field by field, element by element, in schema order),
// driven by the mini-reflection tables flatc generates (--reflect-names), so
// a message can name the path from the root, the table's byte offset and
// the check that failed. Every offset is checked with the verifier before
// it is followed, and positions stay integers until proven in bounds, so a
// corrupted file cannot make the walk read outside the buffer.
//
// The verifier of flatbuffers 2.0 checks a vector's length field but not
// the alignment of its elements. Reading a misaligned [long] (say, a
// zero_point) is undefined behaviour, so the walk also checks that, and runs
// on every load, not only after a failure. The path is kept as a stack and
// only formatted when something fails, to keep the walk cheap.
class StructureWalker {
 public:
  StructureWalker(const uint8_t* buf, size_t size)
      : buf_(buf), size_(size), verifier_(buf, size, VerifierOptions()) {}

  // Returns the description of the first failure, or an empty string when
  // the walk finds none.
  std::string Run() {
    // The macro names these unqualified.
    using flatbuffers::soffset_t;
    using flatbuffers::uoffset_t;
    if (size_ < FLATBUFFERS_MIN_BUFFER_SIZE) {
      return absl::StrCat("file too small to hold a flatbuffer (", size_,
                          " bytes)");
    }
    flatbuffers::uoffset_t root = verifier_.VerifyOffset(0);
    if (root == 0) {
      return absl::StrCat("root table offset 0x",
                          absl::Hex(flatbuffers::ReadScalar<uint32_t>(buf_)),
                          " lies outside the file (", size_, " bytes)");
    }
    CheckTable(root, tfl::ModelTypeTable());
    return error_;
  }

 private:
  struct Segment {
    const char* name;
    int64_t index;  // -1 for a field that is not a vector element.
  };

  // "subgraphs[0].operators[12]"; "model" for the root.
  std::string PathString() const {
    if (path_.empty()) return "model";
    std::string out;
    for (const Segment& s : path_) {
      if (!out.empty()) out += ".";
      out += s.name;
      if (s.index >= 0) absl::StrAppend(&out, "[", s.index, "]");
    }
    return out;
  }

  // Records the first failure, at the table at `table` (and its `field`, if
  // not null).
  bool Fail(size_t table, const char* field, absl::string_view what) {
    if (!error_.empty()) return false;
    error_ = absl::StrCat(PathString(), " (table at ", Hex(table), "): ");
    if (field != nullptr) absl::StrAppend(&error_, "field '", field, "': ");
    absl::StrAppend(&error_, what);
    return false;
  }

  // Mirrors Verifier::VerifyTableStart, naming the check that fails.
  bool StartTable(size_t pos) {
    if (!verifier_.Verify(pos, sizeof(flatbuffers::soffset_t))) {
      return Fail(
          pos, nullptr,
          absl::StrCat("table out of bounds (file is ", size_, " bytes)"));
    }
    if (!verifier_.VerifyAlignment(pos, sizeof(flatbuffers::soffset_t))) {
      return Fail(pos, nullptr, "table misaligned");
    }
    // The verifier counts tables and nesting as it goes; so do we, to say
    // which limit was hit.
    if (depth_ + 1 > kMaxDepth) {
      return Fail(
          pos, nullptr,
          absl::StrCat("nested too deep (more than ", kMaxDepth, " levels)"));
    }
    if (tables_ + 1 > kMaxTables) {
      return Fail(pos, nullptr,
                  absl::StrCat("too many tables (more than ", kMaxTables, ")"));
    }
    if (!verifier_.VerifyTableStart(buf_ + pos)) {
      // Unsigned arithmetic, as in the verifier: a bad soffset wraps to a
      // huge position, which the bounds check then rejects.
      size_t vtable =
          pos -
          static_cast<size_t>(
              flatbuffers::ReadScalar<flatbuffers::soffset_t>(buf_ + pos));
      if (!verifier_.Verify(vtable, sizeof(flatbuffers::voffset_t)) ||
          !verifier_.VerifyAlignment(vtable, sizeof(flatbuffers::voffset_t))) {
        return Fail(
            pos, nullptr,
            absl::StrCat("vtable out of bounds (at ", Hex(vtable), ")"));
      }
      auto vsize =
          flatbuffers::ReadScalar<flatbuffers::voffset_t>(buf_ + vtable);
      return Fail(pos, nullptr,
                  absl::StrCat("vtable at ", Hex(vtable), " has size ", vsize,
                               ", which is odd or out of bounds"));
    }
    ++depth_;
    ++tables_;
    return true;
  }

  void EndTable() {
    --depth_;
    verifier_.EndTable();
  }

  // Follows the offset stored at `slot` of the table at `table`.
  bool FollowOffset(size_t table, const char* field, size_t slot,
                    size_t* target) {
    flatbuffers::uoffset_t o = verifier_.VerifyOffset(slot);
    if (o == 0) {
      uint32_t raw = verifier_.Verify<flatbuffers::uoffset_t>(slot)
                         ? flatbuffers::ReadScalar<uint32_t>(buf_ + slot)
                         : 0;
      return Fail(table, field,
                  absl::StrCat("offset 0x", absl::Hex(raw), " at ", Hex(slot),
                               " points outside the file"));
    }
    *target = slot + o;
    return true;
  }

  // Checks a vector (or string) at `pos`; *length is its element count.
  bool CheckVector(size_t table, const char* field, size_t pos,
                   size_t elem_size, bool is_string, uint32_t* length) {
    const char* kind = is_string ? "string" : "vector";
    if (!verifier_.Verify<flatbuffers::uoffset_t>(pos)) {
      return Fail(table, field,
                  absl::StrCat(kind, " length at ", Hex(pos),
                               " out of bounds or misaligned"));
    }
    *length = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(buf_ + pos);
    size_t end = 0;
    if (!verifier_.VerifyVectorOrString(buf_ + pos, elem_size, &end)) {
      return Fail(table, field,
                  absl::StrCat(kind, " out of bounds (at ", Hex(pos), ", ",
                               *length, " elements of ", elem_size,
                               " bytes; file is ", size_, " bytes)"));
    }
    if (is_string && (!verifier_.Verify(end, 1) || buf_[end] != '\0')) {
      return Fail(table, field,
                  absl::StrCat("string at ", Hex(pos), " not terminated"));
    }
    // Elements start right after the 4-byte length; wider ones need more.
    if (elem_size > sizeof(flatbuffers::uoffset_t) && *length > 0 &&
        !verifier_.VerifyAlignment(pos + sizeof(flatbuffers::uoffset_t),
                                   elem_size)) {
      return Fail(table, field,
                  absl::StrCat("vector at ", Hex(pos), " has misaligned ",
                               elem_size, "-byte elements"));
    }
    return true;
  }

  // Checks the table at `pos`, already on the path (or the root).
  bool CheckTable(size_t pos, const flatbuffers::TypeTable* tt) {
    if (!StartTable(pos)) return false;
    const auto* table = reinterpret_cast<const flatbuffers::Table*>(buf_ + pos);
    for (size_t i = 0; i < tt->num_elems; ++i) {
      const flatbuffers::TypeCode& code = tt->type_codes[i];
      auto type = static_cast<flatbuffers::ElementaryType>(code.base_type);
      const flatbuffers::TypeTable* ref =
          code.sequence_ref >= 0 ? tt->type_refs[code.sequence_ref]() : nullptr;
      const char* name = tt->names != nullptr ? tt->names[i] : "?";
      auto voffset =
          static_cast<flatbuffers::voffset_t>(flatbuffers::FieldIndexToOffset(
              static_cast<flatbuffers::voffset_t>(i)));
      flatbuffers::voffset_t field = table->GetOptionalFieldOffset(voffset);
      if (field == 0) continue;
      size_t slot = pos + field;
      bool is_table = type == flatbuffers::ET_SEQUENCE && ref != nullptr &&
                      ref->st == flatbuffers::ST_TABLE;
      bool is_struct = type == flatbuffers::ET_SEQUENCE && ref != nullptr &&
                       ref->st == flatbuffers::ST_STRUCT;
      size_t elem_size = is_struct
                             ? static_cast<size_t>(ref->values[ref->num_elems])
                             : FlatbufferInlineSize(type);

      // The slot itself: an inline scalar or struct, or an offset.
      size_t inline_size = elem_size;
      size_t align = is_struct ? 1 : elem_size;
      if (code.is_repeating) {
        inline_size = align = sizeof(flatbuffers::uoffset_t);
      }
      if (!verifier_.VerifyAlignment(slot, align) ||
          !verifier_.Verify(slot, inline_size)) {
        return Fail(pos, name,
                    absl::StrCat("value at ", Hex(slot),
                                 " out of bounds or misaligned"));
      }

      if (code.is_repeating) {
        size_t vec;
        uint32_t length;
        if (!FollowOffset(pos, name, slot, &vec) ||
            !CheckVector(pos, name, vec, elem_size, /*is_string=*/false,
                         &length)) {
          return false;
        }
        if (type != flatbuffers::ET_STRING && !is_table) continue;
        for (uint32_t j = 0; j < length; ++j) {
          size_t elem_slot = vec + sizeof(flatbuffers::uoffset_t) * (1 + j);
          // Elements are unsigned offsets the verifier follows without a
          // range check; the table or string check catches strays.
          size_t target =
              elem_slot +
              flatbuffers::ReadScalar<flatbuffers::uoffset_t>(buf_ + elem_slot);
          if (type == flatbuffers::ET_STRING) {
            uint32_t string_length;
            if (!CheckVector(pos, name, target, 1, /*is_string=*/true,
                             &string_length)) {
              return false;
            }
            continue;
          }
          path_.push_back({name, j});
          if (!CheckTable(target, ref)) return false;
          path_.pop_back();
        }
        continue;
      }

      if (type == flatbuffers::ET_STRING) {
        size_t target;
        uint32_t length;
        if (!FollowOffset(pos, name, slot, &target) ||
            !CheckVector(pos, name, target, 1, /*is_string=*/true, &length)) {
          return false;
        }
        continue;
      }

      const flatbuffers::TypeTable* child = is_table ? ref : nullptr;
      bool is_union = type == flatbuffers::ET_SEQUENCE && ref != nullptr &&
                      ref->st == flatbuffers::ST_UNION;
      if (is_union) {
        // The member's type is the preceding field, already checked.
        uint8_t member = 0;
        if (i > 0) {
          flatbuffers::voffset_t type_field = table->GetOptionalFieldOffset(
              static_cast<flatbuffers::voffset_t>(voffset - 2));
          if (type_field != 0) member = buf_[pos + type_field];
        }
        // Unknown members (from a newer schema) go unverified, as in the
        // generated verifier; the loader refuses them later.
        if (member != 0 && member < ref->num_elems &&
            ref->type_codes[member].sequence_ref >= 0) {
          child = ref->type_refs[ref->type_codes[member].sequence_ref]();
          if (child->st != flatbuffers::ST_TABLE) child = nullptr;
        }
      }
      if (!is_table && !is_union) continue;  // Scalars, structs: done above.
      // The generated verifier checks a union's offset whatever the member.
      size_t target;
      if (!FollowOffset(pos, name, slot, &target)) return false;
      if (child == nullptr) continue;
      path_.push_back({name, -1});
      if (!CheckTable(target, child)) return false;
      path_.pop_back();
    }
    EndTable();
    return true;
  }

  const uint8_t* buf_;
  size_t size_;
  flatbuffers::Verifier verifier_;
  std::vector<Segment> path_;
  flatbuffers::uoffset_t depth_ = 0;
  flatbuffers::uoffset_t tables_ = 0;
  std::string error_;
};

// Checks a [offset, offset + size) range stored outside the flatbuffer.
absl::Status CheckOutsideRange(uint64_t offset, uint64_t size, size_t file_size,
                               const std::string& what) {
  if (offset > file_size || size > file_size - offset) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": data at offset ", offset, " (", Hex(offset), "), size ", size,
        " extends past the end of the file (", file_size, " bytes)"));
  }
  return absl::OkStatus();
}

// Semantic checks of the IR.

std::string Quoted(absl::string_view s) {
  return absl::StrCat("\"", absl::CHexEscape(s), "\"");
}

std::string SubgraphLabel(const Model& model, size_t s) {
  const std::string& name = model.subgraphs[s].name;
  return name.empty() ? absl::StrCat("subgraph ", s)
                      : absl::StrCat("subgraph ", s, " (", Quoted(name), ")");
}

std::string TensorLabel(const Subgraph& sg, int64_t t) {
  if (t < 0 || static_cast<size_t>(t) >= sg.tensors.size() ||
      sg.tensors[t].name.empty()) {
    return absl::StrCat("tensor ", t);
  }
  return absl::StrCat("tensor ", t, " (", Quoted(sg.tensors[t].name), ")");
}

std::string OpLabel(const Model& model, const Subgraph& sg, size_t k) {
  return absl::StrCat("op ", k, " (", OpName(model, sg.ops[k]), ")");
}

std::string ShapeString(absl::Span<const int32_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// Elements of a static shape; nullopt when a dimension is dynamic. Unlike
// NumElements it cannot overflow on untrusted shapes: *overflow is set
// instead when the count (times up to 128 bits an element) exceeds 64 bits.
std::optional<uint64_t> StaticElements(absl::Span<const int32_t> shape,
                                       bool* overflow) {
  *overflow = false;
  uint64_t n = 1;
  for (int32_t d : shape) {
    if (d < 0) return std::nullopt;
  }
  for (int32_t d : shape) {
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / 128 / d) {
      *overflow = true;
      return std::nullopt;
    }
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

bool TensorInRange(const Subgraph& sg, int64_t t) {
  return t >= 0 && static_cast<size_t>(t) < sg.tensors.size();
}

absl::Status CheckTensor(const Model& model, size_t s, size_t t) {
  const Subgraph& sg = model.subgraphs[s];
  const tfl::TensorT& tensor = sg.tensors[t];
  auto where = [&] {
    return absl::StrCat(SubgraphLabel(model, s), ", ",
                        TensorLabel(sg, static_cast<int64_t>(t)));
  };
  // Buffer 0 is the "no data" sentinel and may be referenced even by a
  // model with no buffers at all.
  if (tensor.buffer != 0 && tensor.buffer >= model.buffers.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(), ": buffer ", tensor.buffer, " out of range (model has ",
        model.buffers.size(), " buffers)"));
  }
  for (int32_t d : tensor.shape) {
    if (d < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), ": shape ", ShapeString(tensor.shape),
                       " has invalid dimension ", d));
    }
  }
  if (!tensor.shape_signature.empty()) {
    if (tensor.shape_signature.size() != tensor.shape.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where(), ": shape_signature ", ShapeString(tensor.shape_signature),
          " and shape ", ShapeString(tensor.shape), " differ in rank"));
    }
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      int32_t sig = tensor.shape_signature[i];
      if (sig < -1 || (sig != -1 && sig != tensor.shape[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), ": shape_signature ", ShapeString(tensor.shape_signature),
            " does not match shape ", ShapeString(tensor.shape),
            " in dimension ", i));
      }
    }
  }
  if (tensor.quantization != nullptr) {
    const tfl::QuantizationParametersT& q = *tensor.quantization;
    // TFLite's interpreter refuses these when it parses quantization.
    if (!q.scale.empty()) {
      if (q.zero_point.size() != q.scale.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(), ": quantization has ", q.scale.size(),
                         " scales but ", q.zero_point.size(), " zero points"));
      }
      if (q.scale.size() > 1) {
        int32_t axis = q.quantized_dimension;
        if (axis < 0 || static_cast<size_t>(axis) >= tensor.shape.size() ||
            tensor.shape[axis] != static_cast<int64_t>(q.scale.size())) {
          return absl::InvalidArgumentError(
              absl::StrCat(where(), ": ", q.scale.size(),
                           " per-channel scales do not match dimension ", axis,
                           " of shape ", ShapeString(tensor.shape)));
        }
      }
    }
    if (const auto* b = q.details.AsBlockwiseQuantization()) {
      for (int32_t index : {b->scales, b->zero_points}) {
        // zero_points is optional; TFLite leaves it 0 or -1 when absent.
        if (index != -1 && !TensorInRange(sg, index)) {
          return absl::InvalidArgumentError(absl::StrCat(
              where(), ": blockwise quantization refers to tensor ", index,
              ", out of range (subgraph has ", sg.tensors.size(), " tensors)"));
        }
      }
    }
  }
  // Constant data must hold exactly the static shape's elements. Types
  // without a fixed element size (STRING and friends), dynamic shapes and
  // sparse tensors (whose buffer holds only the stored values) are exempt.
  if (tensor.buffer != 0 && tensor.buffer < model.buffers.size()) {
    const Bytes& data = model.buffers[tensor.buffer].data;
    int bits = TensorTypeBits(tensor.type);
    bool overflow = false;
    std::optional<uint64_t> n = StaticElements(tensor.shape, &overflow);
    if (!data.empty() && bits > 0 && overflow) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(), ": shape ", ShapeString(tensor.shape),
                       " has too many elements for its ", data.size(),
                       " bytes of constant data"));
    }
    if (!data.empty() && bits > 0 && n.has_value() &&
        tensor.sparsity == nullptr) {
      uint64_t expected = (*n * static_cast<uint64_t>(bits) + 7) / 8;
      if (data.size() != expected) {
        return absl::InvalidArgumentError(absl::StrCat(
            where(), ": constant data in buffer ", tensor.buffer, " is ",
            data.size(), " bytes, expected ", expected, " for ",
            TensorTypeName(tensor.type), " ", ShapeString(tensor.shape)));
      }
    }
  }
  return absl::OkStatus();
}

// Whether a tensor holds a value before any op of its subgraph runs.
bool AvailableAtStart(const Model& model, const tfl::TensorT& tensor) {
  if (tensor.is_variable) return true;
  return tensor.buffer != 0 && tensor.buffer < model.buffers.size() &&
         !model.buffers[tensor.buffer].data.empty();
}

// Looks for a dataflow path from op `from` to op `to` (ops consuming a
// tensor another op produces), returning the ops along it.
std::vector<size_t> FindPath(const Subgraph& sg,
                             const std::vector<int64_t>& producer, size_t from,
                             size_t to) {
  // consumers[k]: ops reading an output of op k.
  std::vector<std::vector<size_t>> consumers(sg.ops.size());
  for (size_t k = 0; k < sg.ops.size(); ++k) {
    for (int32_t t : sg.ops[k].inputs) {
      if (!TensorInRange(sg, t) || producer[t] < 0) continue;
      consumers[producer[t]].push_back(k);
    }
  }
  std::vector<int64_t> parent(sg.ops.size(), -1);
  std::vector<size_t> stack = {from};
  std::vector<bool> seen(sg.ops.size(), false);
  seen[from] = true;
  while (!stack.empty()) {
    size_t k = stack.back();
    stack.pop_back();
    if (k == to) {
      std::vector<size_t> path;
      for (int64_t p = static_cast<int64_t>(to); p >= 0; p = parent[p]) {
        path.push_back(static_cast<size_t>(p));
        if (static_cast<size_t>(p) == from) break;
      }
      std::reverse(path.begin(), path.end());
      return path;
    }
    for (size_t c : consumers[k]) {
      if (seen[c]) continue;
      seen[c] = true;
      parent[c] = static_cast<int64_t>(k);
      stack.push_back(c);
    }
  }
  return {};
}

absl::Status CheckExecutionOrder(const Model& model, size_t s) {
  const Subgraph& sg = model.subgraphs[s];
  // producer[t]: the first op writing tensor t, or -1.
  std::vector<int64_t> producer(sg.tensors.size(), -1);
  for (size_t k = 0; k < sg.ops.size(); ++k) {
    for (int32_t t : sg.ops[k].outputs) {
      if (TensorInRange(sg, t) && producer[t] < 0) {
        producer[t] = static_cast<int64_t>(k);
      }
    }
  }
  std::vector<bool> available(sg.tensors.size(), false);
  for (size_t t = 0; t < sg.tensors.size(); ++t) {
    available[t] = AvailableAtStart(model, sg.tensors[t]);
  }
  for (int32_t t : sg.inputs) available[t] = true;

  for (size_t k = 0; k < sg.ops.size(); ++k) {
    const tfl::OperatorT& op = sg.ops[k];
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      int32_t t = op.inputs[i];
      if (t == kNoTensor || available[t]) continue;
      std::string where =
          absl::StrCat(SubgraphLabel(model, s), ", ", OpLabel(model, sg, k),
                       ": input ", i, " (", TensorLabel(sg, t), ")");
      // An input nothing produces is not an error: TFLite allocates such a
      // tensor and the op reads whatever it holds. Real models rely on it:
      // Ethos-U ops take scratch tensors (person_detect_vela.tflite),
      // converters leave a constant's buffer empty (blockwise_quantized,
      // segment_sum_invalid_buffer, where the kernel rejects it at run
      // time), and add_shared_tensors.bin reads a never-written tensor.
      // Only an order that cannot be right is rejected: a producer that
      // runs later.
      if (producer[t] < 0) continue;
      size_t later = static_cast<size_t>(producer[t]);
      if (later == k) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, " is produced by the op itself (a cycle)"));
      }
      // A genuine cycle: the later producer itself depends on this op.
      std::vector<size_t> path = FindPath(sg, producer, k, later);
      if (!path.empty()) {
        std::vector<std::string> names;
        for (size_t p : path) names.push_back(OpLabel(model, sg, p));
        names.push_back(OpLabel(model, sg, k));
        return absl::InvalidArgumentError(
            absl::StrCat(SubgraphLabel(model, s), ": ops form a cycle: ",
                         absl::StrJoin(names, " -> "), " (", TensorLabel(sg, t),
                         " feeds op ", k, " but depends on its output)"));
      }
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is produced by op ", later, " (",
                       OpName(model, sg.ops[later]), "), which runs later"));
    }
    for (int32_t t : op.outputs) {
      if (t != kNoTensor) available[t] = true;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckIndices(const Model& model, size_t s, size_t k,
                          const char* list, const std::vector<int32_t>& indices,
                          bool allow_absent) {
  const Subgraph& sg = model.subgraphs[s];
  for (size_t i = 0; i < indices.size(); ++i) {
    int32_t t = indices[i];
    if (allow_absent && t == kNoTensor) continue;
    if (!TensorInRange(sg, t)) {
      return absl::InvalidArgumentError(absl::StrCat(
          SubgraphLabel(model, s), ", ", OpLabel(model, sg, k), ": ", list, "[",
          i, "] is tensor ", t, ", out of range (subgraph has ",
          sg.tensors.size(), " tensors)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckOp(const Model& model, size_t s, size_t k) {
  const Subgraph& sg = model.subgraphs[s];
  const tfl::OperatorT& op = sg.ops[k];
  if (op.opcode_index >= model.operator_codes.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(SubgraphLabel(model, s), ", op ", k, ": opcode_index ",
                     op.opcode_index, " out of range (model has ",
                     model.operator_codes.size(), " operator codes)"));
  }
  GRAFT_RETURN_IF_ERROR(CheckIndices(model, s, k, "inputs", op.inputs,
                                     /*allow_absent=*/true));
  // TFLite lets an op leave an optional output unset as well.
  GRAFT_RETURN_IF_ERROR(CheckIndices(model, s, k, "outputs", op.outputs,
                                     /*allow_absent=*/true));
  GRAFT_RETURN_IF_ERROR(CheckIndices(model, s, k, "intermediates",
                                     op.intermediates, /*allow_absent=*/true));
  if (!op.mutating_variable_inputs.empty() &&
      op.mutating_variable_inputs.size() != op.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        SubgraphLabel(model, s), ", ", OpLabel(model, sg, k),
        ": mutating_variable_inputs has ", op.mutating_variable_inputs.size(),
        " entries for ", op.inputs.size(), " inputs"));
  }
  absl::Status status;
  ForEachCalledSubgraph(op, [&](const char* field, int64_t index) {
    if (status.ok() &&
        (index < 0 || static_cast<size_t>(index) >= model.subgraphs.size())) {
      status = absl::InvalidArgumentError(
          absl::StrCat(SubgraphLabel(model, s), ", ", OpLabel(model, sg, k),
                       ": ", field, " ", index, " out of range (model has ",
                       model.subgraphs.size(), " subgraphs)"));
    }
  });
  return status;
}

absl::Status CheckSubgraph(const Model& model, size_t s) {
  const Subgraph& sg = model.subgraphs[s];
  for (const auto& [list, ids] :
       {std::pair<const char*, const std::vector<TensorId>*>{"inputs",
                                                             &sg.inputs},
        {"outputs", &sg.outputs}}) {
    for (size_t i = 0; i < ids->size(); ++i) {
      if (!TensorInRange(sg, (*ids)[i])) {
        return absl::InvalidArgumentError(absl::StrCat(
            SubgraphLabel(model, s), ": ", list, "[", i, "] is tensor ",
            (*ids)[i], ", out of range (subgraph has ", sg.tensors.size(),
            " tensors)"));
      }
    }
  }
  for (size_t t = 0; t < sg.tensors.size(); ++t) {
    GRAFT_RETURN_IF_ERROR(CheckTensor(model, s, t));
  }
  for (size_t k = 0; k < sg.ops.size(); ++k) {
    GRAFT_RETURN_IF_ERROR(CheckOp(model, s, k));
  }
  return CheckExecutionOrder(model, s);
}

absl::Status CheckSignature(const Model& model, size_t i) {
  const tfl::SignatureDefT& sig = model.signature_defs[i];
  std::string where =
      absl::StrCat("signature_defs[", i, "] (", Quoted(sig.signature_key), ")");
  if (sig.subgraph_index >= model.subgraphs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": subgraph_index ", sig.subgraph_index,
        " out of range (model has ", model.subgraphs.size(), " subgraphs)"));
  }
  const Subgraph& sg = model.subgraphs[sig.subgraph_index];
  for (const auto& [list, maps] :
       {std::pair<const char*, const decltype(sig.inputs)*>{"inputs",
                                                            &sig.inputs},
        {"outputs", &sig.outputs}}) {
    for (size_t j = 0; j < maps->size(); ++j) {
      const tfl::TensorMapT& map = *(*maps)[j];
      if (map.tensor_index >= sg.tensors.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": ", list, "[", j, "] (", Quoted(map.name), ") is tensor ",
            map.tensor_index, ", out of range (subgraph ", sig.subgraph_index,
            " has ", sg.tensors.size(), " tensors)"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyFlatbuffer(absl::Span<const uint8_t> data) {
  if (data.empty()) {
    return absl::InvalidArgumentError("not a .tflite model: the file is empty");
  }
  if (data.size() < 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a .tflite model: only ", data.size(),
        " bytes, too small for the root offset and the 'TFL3' identifier"));
  }
  absl::string_view ident(reinterpret_cast<const char*>(data.data()) + 4, 4);
  if (ident != tfl::ModelIdentifier()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a .tflite model: file identifier is '",
                     absl::CHexEscape(ident), "', expected 'TFL3'"));
  }
  size_t verify_size = VerifiableSize(data.size());
  flatbuffers::Verifier verifier(data.data(), verify_size, VerifierOptions());
  bool verified = tfl::VerifyModelBuffer(verifier);
  // Run even when the verifier accepts: the walk also checks the alignment
  // of vector elements, which the verifier does not.
  std::string where = StructureWalker(data.data(), verify_size).Run();
  if (!verified && where.empty()) {
    where = "the flatbuffers verifier rejected the model";
  }
  if (!where.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid flatbuffer: ", where));
  }

  const tfl::Model* model = tfl::GetModel(data.data());
  if (const auto* buffers = model->buffers()) {
    for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
      const tfl::Buffer* buffer = buffers->Get(i);
      // TFLite reads offset 0 and 1 as "not set" (1 is the placeholder its
      // converter writes before the real offsets are known), and ignores
      // the range when size is 0.
      if (buffer->offset() > 1 && buffer->size() > 0) {
        GRAFT_RETURN_IF_ERROR(
            CheckOutsideRange(buffer->offset(), buffer->size(), data.size(),
                              absl::StrCat("buffers[", i, "]")));
      }
    }
  }
  if (const auto* subgraphs = model->subgraphs()) {
    for (flatbuffers::uoffset_t s = 0; s < subgraphs->size(); ++s) {
      const auto* ops = subgraphs->Get(s)->operators();
      if (ops == nullptr) continue;
      for (flatbuffers::uoffset_t k = 0; k < ops->size(); ++k) {
        const tfl::Operator* op = ops->Get(k);
        if (op->large_custom_options_offset() > 1 &&
            op->large_custom_options_size() > 0) {
          GRAFT_RETURN_IF_ERROR(
              CheckOutsideRange(op->large_custom_options_offset(),
                                op->large_custom_options_size(), data.size(),
                                absl::StrCat("subgraphs[", s, "].operators[", k,
                                             "] (large custom options)")));
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyModel(const Model& model) {
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    GRAFT_RETURN_IF_ERROR(CheckSubgraph(model, s));
  }
  for (size_t i = 0; i < model.signature_defs.size(); ++i) {
    GRAFT_RETURN_IF_ERROR(CheckSignature(model, i));
  }
  for (size_t i = 0; i < model.metadata.size(); ++i) {
    const tfl::MetadataT& m = model.metadata[i];
    if (m.buffer >= model.buffers.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata[", i, "] (", Quoted(m.name), "): buffer ", m.buffer,
          " out of range (model has ", model.buffers.size(), " buffers)"));
    }
  }
  for (size_t i = 0; i < model.metadata_buffer.size(); ++i) {
    int32_t b = model.metadata_buffer[i];
    if (b < 0 || static_cast<size_t>(b) >= model.buffers.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata_buffer[", i, "]: buffer ", b, " out of range (model has ",
          model.buffers.size(), " buffers)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace graft
