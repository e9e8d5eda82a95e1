// LoadModel / LoadModelFromBytes (flatbuffer -> IR) and SerializeModel /
// SaveModel (IR -> flatbuffer + buffers stored after it).

#include "core/model_io.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/file_util.h"
#include "core/flatbuffer_util.h"
#include "core/litert_format.h"
#include "core/mapped_file.h"
#include "core/status.h"
#include "flatbuffers/flatbuffers.h"

namespace graft {
namespace {

absl::Status Prefixed(absl::string_view name, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(name, ": ", status.message()));
}

// TFLite reads a Buffer.offset or large_custom_options_offset of 0 or 1 as
// "not set": its converter writes 1 as a placeholder before it knows where
// the data will go. Data of size 0 counts as absent.
bool StoredOutside(uint64_t offset, uint64_t size) {
  return offset > 1 && size > 0;
}

// The IR mirrors the Model, SubGraph and Buffer tables field by field (the
// other tables go through the generated object API). A field added to one of
// those tables in the schema is not carried by the IR, so refuse models
// that use one instead of dropping its contents silently.
absl::Status CheckHandledFields(const void* table,
                                const flatbuffers::TypeTable* tt,
                                size_t handled, absl::string_view where) {
  const auto* t = reinterpret_cast<const flatbuffers::Table*>(table);
  for (size_t i = handled; i < tt->num_elems; ++i) {
    auto voffset =
        static_cast<flatbuffers::voffset_t>(flatbuffers::FieldIndexToOffset(
            static_cast<flatbuffers::voffset_t>(i)));
    if (!t->CheckField(voffset)) continue;
    // An empty vector says no more than an absent one.
    if (tt->type_codes[i].is_repeating) {
      const auto* vec =
          t->GetPointer<const flatbuffers::Vector<uint8_t>*>(voffset);
      if (vec == nullptr || vec->size() == 0) continue;
    }
    return absl::UnimplementedError(
        absl::StrCat(where, " uses field '", tt->names[i],
                     "', which Graft's IR does not represent yet"));
  }
  return absl::OkStatus();
}

// Number of leading Model/SubGraph/Buffer fields the IR carries.
constexpr size_t kModelFieldsHandled = 8;     // version .. signature_defs
constexpr size_t kSubGraphFieldsHandled = 6;  // tensors .. debug_metadata_index
constexpr size_t kBufferFieldsHandled = 3;    // data, offset, size

// The object API unpacks a union member this schema does not know (from a
// newer converter) as a null value, and packing would then drop it. Refuse
// rather than lose an op's options or a tensor's quantization.
template <typename Union>
absl::Status CheckUnionKnown(const Union& u, absl::string_view where,
                             absl::string_view field) {
  if (static_cast<int>(u.type) != 0 && u.value == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        where, ": ", field, " type ", static_cast<int>(u.type),
        " is unknown to Graft's schema (written by a newer converter?)"));
  }
  return absl::OkStatus();
}

absl::Status CheckTensorUnions(const tfl::TensorT& t, absl::string_view where) {
  if (t.quantization != nullptr) {
    GRAFT_RETURN_IF_ERROR(CheckUnionKnown(t.quantization->details, where,
                                          "quantization.details"));
  }
  if (t.sparsity != nullptr) {
    for (const auto& dim : t.sparsity->dim_metadata) {
      if (dim == nullptr) continue;
      GRAFT_RETURN_IF_ERROR(CheckUnionKnown(dim->array_segments, where,
                                            "sparsity array_segments"));
      GRAFT_RETURN_IF_ERROR(
          CheckUnionKnown(dim->array_indices, where, "sparsity array_indices"));
    }
  }
  return absl::OkStatus();
}

// Presence of empty vectors (see EmptyVectors in model.h), walked with the
// schema's mini-reflection tables so every field, nested ones included, is
// covered without per-field code.

// The table type of a union's value for union type `utype`, or null.
const flatbuffers::TypeTable* UnionMemberTable(const flatbuffers::TypeTable* ut,
                                               uint8_t utype) {
  for (size_t j = 0; j < ut->num_elems; ++j) {
    int64_t value =
        ut->values != nullptr ? ut->values[j] : static_cast<int64_t>(j);
    if (value != utype) continue;
    const flatbuffers::TypeCode tc = ut->type_codes[j];
    if (tc.base_type != flatbuffers::ET_SEQUENCE || tc.sequence_ref < 0) {
      return nullptr;
    }
    return ut->type_refs[tc.sequence_ref]();
  }
  return nullptr;
}

// The type table of field `i`'s table (or union), or null for other types.
const flatbuffers::TypeTable* FieldSequence(const flatbuffers::TypeTable* tt,
                                            size_t i) {
  const flatbuffers::TypeCode tc = tt->type_codes[i];
  if (tc.base_type != flatbuffers::ET_SEQUENCE || tc.sequence_ref < 0) {
    return nullptr;
  }
  return tt->type_refs[tc.sequence_ref]();
}

flatbuffers::voffset_t FieldOffset(size_t i) {
  return static_cast<flatbuffers::voffset_t>(
      flatbuffers::FieldIndexToOffset(static_cast<flatbuffers::voffset_t>(i)));
}

// The table a union field `i` points at, and its type, when set.
std::pair<const flatbuffers::Table*, const flatbuffers::TypeTable*> UnionValue(
    const flatbuffers::Table* t, const flatbuffers::TypeTable* tt, size_t i) {
  if (i == 0 || tt->type_codes[i - 1].base_type != flatbuffers::ET_UTYPE) {
    return {nullptr, nullptr};
  }
  const auto utype = t->GetField<uint8_t>(FieldOffset(i - 1), 0);
  const flatbuffers::TypeTable* member =
      UnionMemberTable(FieldSequence(tt, i), utype);
  const auto* value = t->GetPointer<const flatbuffers::Table*>(FieldOffset(i));
  if (member == nullptr || value == nullptr) return {nullptr, nullptr};
  return {value, member};
}

// Appends the path of every present-but-empty vector field of `t` (of type
// `tt`) to `out`; with `nested`, of the tables inside it too.
void CollectEmptyVectors(const flatbuffers::Table* t,
                         const flatbuffers::TypeTable* tt,
                         const std::string& prefix, bool nested,
                         std::vector<std::string>* out) {
  for (size_t i = 0; i < tt->num_elems; ++i) {
    const flatbuffers::TypeCode tc = tt->type_codes[i];
    const flatbuffers::voffset_t vo = FieldOffset(i);
    const flatbuffers::TypeTable* seq = FieldSequence(tt, i);
    const std::string path = absl::StrCat(prefix, tt->names[i]);
    if (tc.is_repeating) {
      const auto* vec =
          t->GetPointer<const flatbuffers::Vector<flatbuffers::uoffset_t>*>(vo);
      if (vec == nullptr) continue;
      if (vec->size() == 0) {
        out->push_back(path);
      } else if (nested && seq != nullptr && seq->st == flatbuffers::ST_TABLE) {
        const auto* tables = reinterpret_cast<const flatbuffers::Vector<
            flatbuffers::Offset<flatbuffers::Table>>*>(vec);
        for (flatbuffers::uoffset_t k = 0; k < tables->size(); ++k) {
          CollectEmptyVectors(tables->Get(k), seq,
                              absl::StrCat(path, "[", k, "]."), nested, out);
        }
      }
    } else if (nested && seq != nullptr && seq->st == flatbuffers::ST_TABLE) {
      if (const auto* sub = t->GetPointer<const flatbuffers::Table*>(vo)) {
        CollectEmptyVectors(sub, seq, absl::StrCat(path, "."), nested, out);
      }
    } else if (nested && seq != nullptr && seq->st == flatbuffers::ST_UNION) {
      auto [value, member] = UnionValue(t, tt, i);
      if (value != nullptr) {
        CollectEmptyVectors(value, member, absl::StrCat(path, "."), nested,
                            out);
      }
    }
  }
}

EmptyVectors CaptureEmptyVectors(const void* table,
                                 const flatbuffers::TypeTable* tt,
                                 bool nested) {
  EmptyVectors ev;
  ev.loaded = true;
  CollectEmptyVectors(reinterpret_cast<const flatbuffers::Table*>(table), tt,
                      "", nested, &ev.present);
  std::sort(ev.present.begin(), ev.present.end());
  return ev;
}

std::vector<int32_t> ToVector(const flatbuffers::Vector<int32_t>* v) {
  if (v == nullptr) return {};
  return std::vector<int32_t>(v->begin(), v->end());
}

absl::StatusOr<Model> Convert(const Bytes& image) {
  const tfl::Model* fb = tfl::GetModel(image.data());
  GRAFT_RETURN_IF_ERROR(CheckHandledFields(fb, tfl::ModelTypeTable(),
                                           kModelFieldsHandled, "the model"));
  // Views into the image must keep its storage alive. Bytes does not expose
  // its owner, so the views share ownership of a copy of the Bytes handle
  // (a reference, not the data).
  auto owner = std::make_shared<const Bytes>(image);
  absl::Span<const uint8_t> file = image.span();

  Model model;
  model.version = fb->version();
  model.empty_vectors = CaptureEmptyVectors(fb, tfl::ModelTypeTable(), false);
  if (const auto* codes = fb->operator_codes()) {
    model.operator_codes.resize(codes->size());
    for (flatbuffers::uoffset_t i = 0; i < codes->size(); ++i) {
      codes->Get(i)->UnPackTo(&model.operator_codes[i]);
    }
  }
  if (const auto* subgraphs = fb->subgraphs()) {
    model.subgraphs.resize(subgraphs->size());
    for (flatbuffers::uoffset_t s = 0; s < subgraphs->size(); ++s) {
      const tfl::SubGraph* in = subgraphs->Get(s);
      GRAFT_RETURN_IF_ERROR(CheckHandledFields(
          in, tfl::SubGraphTypeTable(), kSubGraphFieldsHandled,
          absl::StrCat("subgraphs[", s, "]")));
      Subgraph& out = model.subgraphs[s];
      out.empty_vectors =
          CaptureEmptyVectors(in, tfl::SubGraphTypeTable(), false);
      if (const auto* tensors = in->tensors()) {
        out.tensors.resize(tensors->size());
        out.tensor_empty_vectors.resize(tensors->size());
        for (flatbuffers::uoffset_t t = 0; t < tensors->size(); ++t) {
          tensors->Get(t)->UnPackTo(&out.tensors[t]);
          out.tensor_empty_vectors[t] = CaptureEmptyVectors(
              tensors->Get(t), tfl::TensorTypeTable(), true);
          GRAFT_RETURN_IF_ERROR(CheckTensorUnions(
              out.tensors[t],
              absl::StrCat("subgraphs[", s, "].tensors[", t, "]")));
        }
      }
      out.inputs = ToVector(in->inputs());
      out.outputs = ToVector(in->outputs());
      if (const auto* ops = in->operators()) {
        out.ops.resize(ops->size());
        out.op_empty_vectors.resize(ops->size());
        for (flatbuffers::uoffset_t k = 0; k < ops->size(); ++k) {
          const tfl::Operator* op = ops->Get(k);
          tfl::OperatorT& op_out = out.ops[k];
          op->UnPackTo(&op_out);
          out.op_empty_vectors[k] =
              CaptureEmptyVectors(op, tfl::OperatorTypeTable(), true);
          std::string where =
              absl::StrCat("subgraphs[", s, "].operators[", k, "]");
          GRAFT_RETURN_IF_ERROR(CheckUnionKnown(op_out.builtin_options, where,
                                                "builtin_options"));
          GRAFT_RETURN_IF_ERROR(CheckUnionKnown(op_out.builtin_options_2, where,
                                                "builtin_options_2"));
          // Custom options too large for the flatbuffer live after it. The
          // IR holds them inline like any others, and the writer decides
          // afresh where they go (offsets into this file would be
          // meaningless in the next one). Options are small next to
          // weights, so this copy does not defeat zero-copy loading.
          if (StoredOutside(op->large_custom_options_offset(),
                            op->large_custom_options_size())) {
            const uint8_t* begin =
                file.data() + op->large_custom_options_offset();
            op_out.custom_options.assign(
                begin, begin + op->large_custom_options_size());
          }
          op_out.large_custom_options_offset = 0;
          op_out.large_custom_options_size = 0;
        }
      }
      if (in->name() != nullptr) out.name = in->name()->str();
      out.debug_metadata_index = in->debug_metadata_index();
    }
  }
  if (fb->description() != nullptr) {
    model.description = fb->description()->str();
  }
  if (const auto* buffers = fb->buffers()) {
    model.buffers.resize(buffers->size());
    for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
      const tfl::Buffer* in = buffers->Get(i);
      GRAFT_RETURN_IF_ERROR(
          CheckHandledFields(in, tfl::BufferTypeTable(), kBufferFieldsHandled,
                             absl::StrCat("buffers[", i, "]")));
      Buffer& out = model.buffers[i];
      out.empty_data_present = in->data() != nullptr && in->data()->size() == 0;
      // Inline data wins over an offset, as in TFLite. Either way the IR
      // gets a view into the image: weights are never copied.
      if (in->data() != nullptr && in->data()->size() > 0) {
        out.data = Bytes::View({in->data()->data(), in->data()->size()}, owner);
      } else if (StoredOutside(in->offset(), in->size())) {
        out.data = Bytes::View(file.subspan(static_cast<size_t>(in->offset()),
                                            static_cast<size_t>(in->size())),
                               owner);
        out.external = true;
      }
    }
  }
  model.metadata_buffer = ToVector(fb->metadata_buffer());
  if (const auto* metadata = fb->metadata()) {
    model.metadata.resize(metadata->size());
    for (flatbuffers::uoffset_t i = 0; i < metadata->size(); ++i) {
      metadata->Get(i)->UnPackTo(&model.metadata[i]);
    }
  }
  if (const auto* signatures = fb->signature_defs()) {
    model.signature_defs.resize(signatures->size());
    model.signature_empty_vectors.resize(signatures->size());
    for (flatbuffers::uoffset_t i = 0; i < signatures->size(); ++i) {
      signatures->Get(i)->UnPackTo(&model.signature_defs[i]);
      model.signature_empty_vectors[i] = CaptureEmptyVectors(
          signatures->Get(i), tfl::SignatureDefTypeTable(), true);
    }
  }
  return model;
}

// Writing.
//
// A saved model is [flatbuffer][pad][blob][pad][blob]..., each blob (a
// buffer or an op's custom options stored outside the flatbuffer) starting
// at a multiple of kExternalBufferAlignment. The flatbuffer refers to blobs
// by absolute file offset, which is only known once the flatbuffer's size
// is. The offsets are fixed-width uint64 scalars, so the flatbuffer is built
// once with a nonzero placeholder in each (zero would be a default and not
// stored at all) and the real values are patched in place afterwards: the
// size cannot change, and the weights are copied into the builder once.

constexpr uint64_t kPlaceholderOffset = 1;

// The verifier (ours and TFLite's) rejects spans of 2^31 - 1 bytes or more.
constexpr uint64_t kFlatbufferHardLimit = FLATBUFFERS_MAX_BUFFER_SIZE - 1;

// Upper bound on what storing `size` bytes inline adds to the flatbuffer
// over storing them outside: the vector's length prefix, up to 15 bytes of
// alignment padding, and slack for the table's changed fields.
uint64_t InlineCost(uint64_t size) { return size + 32; }

uint64_t AlignUp(uint64_t n, uint64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// Where each piece of data goes.
struct Placement {
  std::vector<bool> buffer_outside;               // per buffer
  std::vector<std::vector<bool>> custom_outside;  // per subgraph, per op
};

// A blob stored after the flatbuffer, and where the flatbuffer refers to it.
struct Blob {
  absl::Span<const uint8_t> data;
  uint64_t file_offset = 0;
  // The table holding the offset/size fields (builder offset from the end).
  flatbuffers::uoffset_t table = 0;
  flatbuffers::voffset_t offset_field = 0;
  flatbuffers::voffset_t size_field = 0;
};

struct Image {
  flatbuffers::DetachedBuffer flatbuffer;
  std::vector<Blob> blobs;  // In file order.
  uint64_t size = 0;        // Of the whole image.
};

absl::Span<const uint8_t> AsSpan(const std::vector<uint8_t>& v) {
  return {v.data(), v.size()};
}

// Writing present-but-empty vectors. The object API omits every empty
// vector, so a record with some to keep is packed into a scratch builder and
// copied into the real one, adding them on the way.

// A scalar's size; 0 for strings, tables and vectors.
size_t ScalarSize(flatbuffers::ElementaryType type) {
  return type == flatbuffers::ET_STRING || type == flatbuffers::ET_SEQUENCE
             ? 0
             : FlatbufferInlineSize(type);
}

flatbuffers::uoffset_t CreateEmptyVector(flatbuffers::FlatBufferBuilder& fbb) {
  fbb.StartVector(0, sizeof(flatbuffers::uoffset_t));
  return fbb.EndVector(0);
}

bool Listed(const std::vector<std::string>& sorted, const std::string& path) {
  return std::binary_search(sorted.begin(), sorted.end(), path);
}

// Copies table `t` of type `tt` into `fbb`, each field as it is (present
// scalars stay present, even at their default), and adds an empty vector
// for each absent vector field whose path is in `add`. Unimplemented for
// field types Graft's schema does not use (structs, vectors of unions).
absl::StatusOr<flatbuffers::uoffset_t> CopyTable(
    flatbuffers::FlatBufferBuilder& fbb, const flatbuffers::Table* t,
    const flatbuffers::TypeTable* tt, const std::string& prefix,
    const std::vector<std::string>& add) {
  std::vector<flatbuffers::uoffset_t> offsets(tt->num_elems, 0);
  auto unsupported = [&](size_t i) {
    return absl::UnimplementedError(absl::StrCat(
        "cannot copy field '", prefix, tt->names[i], "': unsupported type"));
  };
  for (size_t i = 0; i < tt->num_elems; ++i) {
    const flatbuffers::TypeCode tc = tt->type_codes[i];
    const auto base = static_cast<flatbuffers::ElementaryType>(tc.base_type);
    const flatbuffers::voffset_t vo = FieldOffset(i);
    const flatbuffers::TypeTable* seq = FieldSequence(tt, i);
    const std::string path = absl::StrCat(prefix, tt->names[i]);
    if (tc.is_repeating) {
      const auto* vec = t->GetPointer<const flatbuffers::Vector<uint8_t>*>(vo);
      if (vec == nullptr) {
        if (Listed(add, path)) offsets[i] = CreateEmptyVector(fbb);
        continue;
      }
      const size_t n = vec->size();
      if (base == flatbuffers::ET_STRING) {
        const auto* strings = reinterpret_cast<const flatbuffers::Vector<
            flatbuffers::Offset<flatbuffers::String>>*>(vec);
        std::vector<flatbuffers::Offset<flatbuffers::String>> out(n);
        for (size_t k = 0; k < n; ++k) {
          out[k] = fbb.CreateString(
              strings->Get(static_cast<flatbuffers::uoffset_t>(k)));
        }
        offsets[i] = fbb.CreateVector(out).o;
      } else if (base == flatbuffers::ET_SEQUENCE) {
        if (seq == nullptr || seq->st != flatbuffers::ST_TABLE) {
          return unsupported(i);
        }
        const auto* tables = reinterpret_cast<const flatbuffers::Vector<
            flatbuffers::Offset<flatbuffers::Table>>*>(vec);
        std::vector<flatbuffers::Offset<flatbuffers::Table>> out(n);
        for (size_t k = 0; k < n; ++k) {
          GRAFT_ASSIGN_OR_RETURN(
              out[k].o,
              CopyTable(fbb,
                        tables->Get(static_cast<flatbuffers::uoffset_t>(k)),
                        seq, absl::StrCat(path, "[", k, "]."), add));
        }
        offsets[i] = fbb.CreateVector(out).o;
      } else {
        const size_t size = ScalarSize(base);
        if (size == 0) return unsupported(i);
        fbb.StartVector(n, size);
        fbb.PushBytes(vec->Data(), n * size);
        offsets[i] = fbb.EndVector(n);
      }
    } else if (base == flatbuffers::ET_STRING) {
      if (const auto* str = t->GetPointer<const flatbuffers::String*>(vo)) {
        offsets[i] = fbb.CreateString(str).o;
      }
    } else if (base == flatbuffers::ET_SEQUENCE) {
      if (t->GetPointer<const uint8_t*>(vo) == nullptr) continue;
      const flatbuffers::Table* sub = nullptr;
      const flatbuffers::TypeTable* sub_tt = nullptr;
      if (seq != nullptr && seq->st == flatbuffers::ST_TABLE) {
        sub = t->GetPointer<const flatbuffers::Table*>(vo);
        sub_tt = seq;
      } else if (seq != nullptr && seq->st == flatbuffers::ST_UNION) {
        std::tie(sub, sub_tt) = UnionValue(t, tt, i);
      }
      if (sub == nullptr) return unsupported(i);
      GRAFT_ASSIGN_OR_RETURN(
          offsets[i],
          CopyTable(fbb, sub, sub_tt, absl::StrCat(path, "."), add));
    }
  }
  // Largest fields first, as flatc's builders do, to keep padding small.
  const flatbuffers::uoffset_t start = fbb.StartTable();
  for (size_t size : {8, 4, 2, 1}) {
    for (size_t i = 0; i < tt->num_elems; ++i) {
      const flatbuffers::voffset_t vo = FieldOffset(i);
      if (offsets[i] != 0) {
        if (size == sizeof(flatbuffers::uoffset_t)) {
          fbb.AddOffset(vo, flatbuffers::Offset<void>(offsets[i]));
        }
        continue;
      }
      const flatbuffers::TypeCode tc = tt->type_codes[i];
      if (tc.is_repeating ||
          ScalarSize(static_cast<flatbuffers::ElementaryType>(tc.base_type)) !=
              size ||
          !t->CheckField(vo)) {
        continue;
      }
      switch (size) {
        case 8:
          fbb.AddElement<uint64_t>(vo, t->GetField<uint64_t>(vo, 0));
          break;
        case 4:
          fbb.AddElement<uint32_t>(vo, t->GetField<uint32_t>(vo, 0));
          break;
        case 2:
          fbb.AddElement<uint16_t>(vo, t->GetField<uint16_t>(vo, 0));
          break;
        default:
          fbb.AddElement<uint8_t>(vo, t->GetField<uint8_t>(vo, 0));
          break;
      }
    }
  }
  return fbb.EndTable(start);
}

// Packs one record with `pack` (the object API's Create function), keeping
// the empty vector fields in `present` as `[]`.
template <typename T, typename Pack>
absl::StatusOr<flatbuffers::Offset<T>> PackRecord(
    flatbuffers::FlatBufferBuilder& fbb, const flatbuffers::TypeTable* tt,
    const std::vector<std::string>& present, Pack pack) {
  if (present.empty()) return pack(fbb);
  flatbuffers::FlatBufferBuilder scratch;
  scratch.Finish(pack(scratch));
  GRAFT_ASSIGN_OR_RETURN(flatbuffers::uoffset_t copy,
                         CopyTable(fbb,
                                   flatbuffers::GetRoot<flatbuffers::Table>(
                                       scratch.GetBufferPointer()),
                                   tt, "", present));
  return flatbuffers::Offset<T>(copy);
}

// Empty vectors for the fields of a Model or SubGraph table past the ones
// the IR carries (index >= `handled`) that `present` lists: the loader
// accepts those only when empty, and keeps whether they were there.
std::vector<std::pair<flatbuffers::voffset_t, flatbuffers::uoffset_t>>
UnhandledEmptyVectors(flatbuffers::FlatBufferBuilder& fbb,
                      const flatbuffers::TypeTable* tt, size_t handled,
                      const std::vector<std::string>& present) {
  std::vector<std::pair<flatbuffers::voffset_t, flatbuffers::uoffset_t>> out;
  for (size_t i = handled; i < tt->num_elems; ++i) {
    if (tt->type_codes[i].is_repeating && Listed(present, tt->names[i])) {
      out.push_back({FieldOffset(i), CreateEmptyVector(fbb)});
    }
  }
  return out;
}

// Builds the flatbuffer for `placement`, with placeholder offsets; returns
// the blobs to store after it, in file order, without file offsets yet.
absl::Status BuildFlatbuffer(const Model& model, const Placement& placement,
                             flatbuffers::FlatBufferBuilder& fbb,
                             std::vector<Blob>* blobs) {
  std::vector<Blob> buffer_blobs;
  std::vector<Blob> custom_blobs;

  // Creation order fixes the bytes; keep it independent of anything but the
  // IR. Buffers come first and so end up at the back of the flatbuffer,
  // leaving the structure compact at the front.
  std::vector<flatbuffers::Offset<tfl::Buffer>> buffers;
  buffers.reserve(model.buffers.size());
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    const Bytes& data = model.buffers[i].data;
    if (data.empty()) {
      const flatbuffers::uoffset_t empty =
          model.buffers[i].empty_data_present ? CreateEmptyVector(fbb) : 0;
      tfl::BufferBuilder b(fbb);
      if (empty != 0)
        b.add_data(flatbuffers::Offset<flatbuffers::Vector<uint8_t>>(empty));
      buffers.push_back(b.Finish());
    } else if (placement.buffer_outside[i]) {
      tfl::BufferBuilder b(fbb);
      b.add_offset(kPlaceholderOffset);
      b.add_size(data.size());
      buffers.push_back(b.Finish());
      buffer_blobs.push_back(Blob{data.span(), 0, buffers.back().o,
                                  tfl::Buffer::VT_OFFSET,
                                  tfl::Buffer::VT_SIZE});
    } else {
      // TFLite reads weights in place; 16-byte alignment suits any element
      // type and SIMD loads.
      fbb.ForceVectorAlignment(data.size(), sizeof(uint8_t), 16);
      auto vec = fbb.CreateVector(data.data(), data.size());
      tfl::BufferBuilder b(fbb);
      b.add_data(vec);
      buffers.push_back(b.Finish());
    }
  }
  auto buffers_vec = fbb.CreateVector(buffers);

  std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes;
  codes.reserve(model.operator_codes.size());
  for (const tfl::OperatorCodeT& code : model.operator_codes) {
    codes.push_back(tfl::CreateOperatorCode(fbb, &code));
  }
  auto codes_vec = fbb.CreateVector(codes);

  std::vector<flatbuffers::Offset<tfl::SubGraph>> subgraphs;
  subgraphs.reserve(model.subgraphs.size());
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    const Subgraph& sg = model.subgraphs[s];
    std::vector<flatbuffers::Offset<tfl::Tensor>> tensors;
    tensors.reserve(sg.tensors.size());
    for (size_t t = 0; t < sg.tensors.size(); ++t) {
      GRAFT_ASSIGN_OR_RETURN(
          auto tensor,
          PackRecord<tfl::Tensor>(
              fbb, tfl::TensorTypeTable(),
              TensorPresentEmptyVectors(sg, static_cast<TensorId>(t)),
              [&](flatbuffers::FlatBufferBuilder& b) {
                return tfl::CreateTensor(b, &sg.tensors[t]);
              }));
      tensors.push_back(tensor);
    }
    auto tensors_vec = fbb.CreateVector(tensors);
    std::vector<flatbuffers::Offset<tfl::Operator>> ops;
    ops.reserve(sg.ops.size());
    for (size_t k = 0; k < sg.ops.size(); ++k) {
      const tfl::OperatorT& op = sg.ops[k];
      bool outside = placement.custom_outside[s][k];
      std::vector<std::string> present =
          OpPresentEmptyVectors(sg, static_cast<OpId>(k));
      auto pack = [&](const tfl::OperatorT& packed) {
        return PackRecord<tfl::Operator>(
            fbb, tfl::OperatorTypeTable(), present,
            [&](flatbuffers::FlatBufferBuilder& b) {
              return tfl::CreateOperator(b, &packed);
            });
      };
      if (!outside && op.large_custom_options_offset == 0 &&
          op.large_custom_options_size == 0) {
        GRAFT_ASSIGN_OR_RETURN(auto packed, pack(op));
        ops.push_back(packed);
        continue;
      }
      // Rare: the options go outside, or the IR carries stale large-option
      // fields (placement is the writer's business). Pack a copy.
      tfl::OperatorT copy = op;
      copy.large_custom_options_offset = 0;
      copy.large_custom_options_size = 0;
      if (outside) {
        copy.custom_options.clear();
        copy.custom_options.shrink_to_fit();
        copy.large_custom_options_offset = kPlaceholderOffset;
        copy.large_custom_options_size = op.custom_options.size();
        // The options are elsewhere, not empty.
        present.erase(
            std::remove(present.begin(), present.end(), "custom_options"),
            present.end());
      }
      GRAFT_ASSIGN_OR_RETURN(auto packed, pack(copy));
      ops.push_back(packed);
      if (outside) {
        custom_blobs.push_back(
            Blob{AsSpan(op.custom_options), 0, ops.back().o,
                 tfl::Operator::VT_LARGE_CUSTOM_OPTIONS_OFFSET,
                 tfl::Operator::VT_LARGE_CUSTOM_OPTIONS_SIZE});
      }
    }
    auto ops_vec = fbb.CreateVector(ops);
    auto inputs_vec = fbb.CreateVector(sg.inputs);
    auto outputs_vec = fbb.CreateVector(sg.outputs);
    auto name = sg.name.empty() ? 0 : fbb.CreateString(sg.name);
    // Empty vectors only where present (for a subgraph Graft made: all four,
    // as TFLite's interpreter rejects a subgraph without them).
    const std::vector<std::string> present = PresentEmptyVectors(sg);
    auto keep = [&](bool empty, const char* field) {
      return !empty || Listed(present, field);
    };
    const auto unhandled = UnhandledEmptyVectors(
        fbb, tfl::SubGraphTypeTable(), kSubGraphFieldsHandled, present);
    tfl::SubGraphBuilder b(fbb);
    if (keep(sg.tensors.empty(), "tensors")) b.add_tensors(tensors_vec);
    if (keep(sg.inputs.empty(), "inputs")) b.add_inputs(inputs_vec);
    if (keep(sg.outputs.empty(), "outputs")) b.add_outputs(outputs_vec);
    if (keep(sg.ops.empty(), "operators")) b.add_operators(ops_vec);
    if (!name.IsNull()) b.add_name(name);
    b.add_debug_metadata_index(sg.debug_metadata_index);
    for (const auto& [field, vec] : unhandled) {
      fbb.AddOffset(field, flatbuffers::Offset<void>(vec));
    }
    subgraphs.push_back(b.Finish());
  }
  auto subgraphs_vec = fbb.CreateVector(subgraphs);

  // Empty vectors only where present (for a model Graft made: what TFLite's
  // converter writes; older readers dereference operator_codes, subgraphs
  // and buffers unchecked).
  const std::vector<std::string> present = PresentEmptyVectors(model);
  auto keep = [&](bool empty, const char* field) {
    return !empty || Listed(present, field);
  };
  auto description =
      model.description.empty() ? 0 : fbb.CreateString(model.description);
  auto metadata_buffer = keep(model.metadata_buffer.empty(), "metadata_buffer")
                             ? fbb.CreateVector(model.metadata_buffer)
                             : 0;
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<tfl::Metadata>>>
      metadata_vec = 0;
  if (keep(model.metadata.empty(), "metadata")) {
    std::vector<flatbuffers::Offset<tfl::Metadata>> metadata;
    for (const tfl::MetadataT& m : model.metadata) {
      metadata.push_back(tfl::CreateMetadata(fbb, &m));
    }
    metadata_vec = fbb.CreateVector(metadata);
  }
  flatbuffers::Offset<
      flatbuffers::Vector<flatbuffers::Offset<tfl::SignatureDef>>>
      signatures_vec = 0;
  if (keep(model.signature_defs.empty(), "signature_defs")) {
    std::vector<flatbuffers::Offset<tfl::SignatureDef>> signatures;
    for (size_t i = 0; i < model.signature_defs.size(); ++i) {
      GRAFT_ASSIGN_OR_RETURN(
          auto sig,
          PackRecord<tfl::SignatureDef>(fbb, tfl::SignatureDefTypeTable(),
                                        SignaturePresentEmptyVectors(model, i),
                                        [&](flatbuffers::FlatBufferBuilder& b) {
                                          return tfl::CreateSignatureDef(
                                              b, &model.signature_defs[i]);
                                        }));
      signatures.push_back(sig);
    }
    signatures_vec = fbb.CreateVector(signatures);
  }
  const auto unhandled = UnhandledEmptyVectors(fbb, tfl::ModelTypeTable(),
                                               kModelFieldsHandled, present);

  tfl::ModelBuilder b(fbb);
  b.add_version(model.version);
  if (keep(model.operator_codes.empty(), "operator_codes")) {
    b.add_operator_codes(codes_vec);
  }
  if (keep(model.subgraphs.empty(), "subgraphs")) {
    b.add_subgraphs(subgraphs_vec);
  }
  if (!description.IsNull()) b.add_description(description);
  if (keep(model.buffers.empty(), "buffers")) b.add_buffers(buffers_vec);
  if (!metadata_buffer.IsNull()) b.add_metadata_buffer(metadata_buffer);
  if (!metadata_vec.IsNull()) b.add_metadata(metadata_vec);
  if (!signatures_vec.IsNull()) b.add_signature_defs(signatures_vec);
  for (const auto& [field, vec] : unhandled) {
    fbb.AddOffset(field, flatbuffers::Offset<void>(vec));
  }
  fbb.Finish(b.Finish(), tfl::ModelIdentifier());

  blobs->clear();
  blobs->insert(blobs->end(), buffer_blobs.begin(), buffer_blobs.end());
  blobs->insert(blobs->end(), custom_blobs.begin(), custom_blobs.end());
  return absl::OkStatus();
}

Placement InitialPlacement(const Model& model) {
  Placement p;
  p.buffer_outside.resize(model.buffers.size());
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    p.buffer_outside[i] = model.buffers[i].external;
  }
  p.custom_outside.resize(model.subgraphs.size());
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    p.custom_outside[s].resize(model.subgraphs[s].ops.size());
  }
  return p;
}

// Chooses where each piece of data goes and builds the flatbuffer.
//
// Buffers marked external stay outside. If the rest does not fit in
// `limit` bytes, the largest buffers move out first (ties by index, so the
// choice is deterministic) until it does: that keeps the number of outside
// blobs small. Custom options move out only when they alone would crowd the
// limit, which real models never approach.
absl::StatusOr<Image> LayOut(const Model& model, const SaveOptions& options) {
  const uint64_t limit =
      std::min<uint64_t>(options.max_flatbuffer_size, kFlatbufferHardLimit);
  Placement placement = InitialPlacement(model);

  uint64_t inline_data = 0;
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    if (!placement.buffer_outside[i] && !model.buffers[i].data.empty()) {
      inline_data += InlineCost(model.buffers[i].data.size());
    }
  }

  // Custom options first: the measuring build below keeps them inline, and
  // the builder cannot grow past 2 GiB.
  uint64_t custom_total = 0;
  std::vector<std::pair<size_t, size_t>> custom_ops;
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    for (size_t k = 0; k < model.subgraphs[s].ops.size(); ++k) {
      size_t n = model.subgraphs[s].ops[k].custom_options.size();
      if (n == 0) continue;
      custom_total += InlineCost(n);
      custom_ops.push_back({s, k});
    }
  }
  if (custom_total > limit / 4) {
    std::stable_sort(
        custom_ops.begin(), custom_ops.end(),
        [&](const auto& a, const auto& b) {
          return model.subgraphs[a.first].ops[a.second].custom_options.size() >
                 model.subgraphs[b.first].ops[b.second].custom_options.size();
        });
    for (const auto& [s, k] : custom_ops) {
      if (custom_total <= limit / 4) break;
      custom_total -=
          InlineCost(model.subgraphs[s].ops[k].custom_options.size());
      placement.custom_outside[s][k] = true;
    }
  }

  absl::Status built;
  auto build = [&](const Placement& p, size_t initial_size, Image* image) {
    flatbuffers::FlatBufferBuilder fbb(std::max<size_t>(initial_size, 1024));
    built.Update(BuildFlatbuffer(model, p, fbb, &image->blobs));
    return fbb;
  };

  Image image;
  // Most models fit easily: build once and check. Otherwise measure the
  // structure without constant data to decide what moves out.
  flatbuffers::FlatBufferBuilder fbb;
  bool fits = false;
  if (inline_data < limit / 2) {
    fbb = build(placement, static_cast<size_t>(inline_data) + 4096, &image);
    GRAFT_RETURN_IF_ERROR(built);
    fits = fbb.GetSize() <= limit;
  }
  if (!fits) {
    fbb = flatbuffers::FlatBufferBuilder();  // Free the failed attempt.
    Placement skeleton = placement;
    for (size_t i = 0; i < model.buffers.size(); ++i) {
      skeleton.buffer_outside[i] = true;
    }
    Image measure;
    uint64_t structure = build(skeleton, 0, &measure).GetSize();
    GRAFT_RETURN_IF_ERROR(built);
    if (structure > limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the model's structure (", structure,
          " bytes without constant data) exceeds the flatbuffer size limit (",
          limit, " bytes)"));
    }
    std::vector<size_t> candidates;
    for (size_t i = 0; i < model.buffers.size(); ++i) {
      if (!placement.buffer_outside[i] && !model.buffers[i].data.empty()) {
        candidates.push_back(i);
      }
    }
    std::stable_sort(
        candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
          return model.buffers[a].data.size() > model.buffers[b].data.size();
        });
    uint64_t budget = limit - structure;
    for (size_t i : candidates) {
      if (inline_data <= budget) break;
      inline_data -= InlineCost(model.buffers[i].data.size());
      placement.buffer_outside[i] = true;
    }
    fbb =
        build(placement, static_cast<size_t>(structure + inline_data), &image);
    GRAFT_RETURN_IF_ERROR(built);
    if (fbb.GetSize() > limit) {
      return absl::InternalError(absl::StrCat(
          "flatbuffer of ", fbb.GetSize(), " bytes exceeds the limit of ",
          limit, " bytes despite moving buffers out (estimate was ",
          structure + inline_data, ")"));
    }
  }

  // Assign file offsets and patch them into the placeholders.
  uint8_t* base = fbb.GetBufferPointer();
  const size_t fb_size = fbb.GetSize();
  uint64_t pos = fb_size;
  for (Blob& blob : image.blobs) {
    pos = AlignUp(pos, kExternalBufferAlignment);
    blob.file_offset = pos;
    pos += blob.data.size();
    auto* table =
        reinterpret_cast<flatbuffers::Table*>(base + fb_size - blob.table);
    if (!table->SetField<uint64_t>(blob.offset_field, blob.file_offset, 0) ||
        !table->SetField<uint64_t>(blob.size_field, blob.data.size(), 0)) {
      return absl::InternalError("placeholder offset missing from a table");
    }
  }
  image.size = pos;
  // LiteRT's DISPATCH_OP names its bytecode by file offset, known only now.
  GRAFT_RETURN_IF_ERROR(ResolveLiteRtBytecodeOffsets(model, base));
  image.flatbuffer = fbb.Release();
  return image;
}

}  // namespace

absl::StatusOr<Model> LoadModelFromBytes(Bytes data, absl::string_view name) {
  GRAFT_RETURN_IF_ERROR(Prefixed(name, VerifyFlatbuffer(data.span())));
  absl::StatusOr<Model> model = Convert(data);
  if (!model.ok()) return Prefixed(name, model.status());
  GRAFT_RETURN_IF_ERROR(Prefixed(name, VerifyModel(*model)));
  return model;
}

absl::StatusOr<Model> LoadModel(const std::string& path) {
  // MappedFile's errors already name the path.
  GRAFT_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                         MappedFile::Open(path));
  // Loading reads tables and one length word per weight buffer: without
  // this, each such read pulls the kernel's read-around window from disk.
  file->Advise(MappedFile::Access::kRandom);
  GRAFT_ASSIGN_OR_RETURN(
      Model model, LoadModelFromBytes(Bytes::View(file->span(), file), path));
  file->Advise(MappedFile::Access::kNormal);
  model.file = std::move(file);
  return model;
}

absl::StatusOr<std::vector<uint8_t>> SerializeModel(
    const Model& model, const SaveOptions& options) {
  GRAFT_ASSIGN_OR_RETURN(Image image, LayOut(model, options));
  std::vector<uint8_t> out(static_cast<size_t>(image.size), 0);
  std::memcpy(out.data(), image.flatbuffer.data(), image.flatbuffer.size());
  for (const Blob& blob : image.blobs) {
    if (!blob.data.empty()) {
      std::memcpy(out.data() + blob.file_offset, blob.data.data(),
                  blob.data.size());
    }
  }
  return out;
}

absl::Status SaveModel(const Model& model, const std::string& path,
                       const SaveOptions& options) {
  absl::StatusOr<Image> image = LayOut(model, options);
  if (!image.ok()) return Prefixed(path, image.status());
  // Stream the pieces: outside blobs go straight from the IR (often the
  // mapped source file) to disk, never assembled in memory.
  static constexpr uint8_t kZeros[kExternalBufferAlignment] = {};
  std::vector<absl::Span<const uint8_t>> pieces;
  pieces.reserve(1 + 2 * image->blobs.size());
  pieces.push_back({image->flatbuffer.data(), image->flatbuffer.size()});
  uint64_t pos = image->flatbuffer.size();
  for (const Blob& blob : image->blobs) {
    if (blob.file_offset > pos) {
      pieces.push_back({kZeros, static_cast<size_t>(blob.file_offset - pos)});
    }
    pieces.push_back(blob.data);
    pos = blob.file_offset + blob.data.size();
  }
  return WriteFileAtomically(path, pieces, options.durability);
}

}  // namespace graft
