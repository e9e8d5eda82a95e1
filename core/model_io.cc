// LoadModel / LoadModelFromBytes (flatbuffer -> IR) and SerializeModel /
// SaveModel (IR -> flatbuffer + buffers stored after it).

#include "core/model_io.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/file_util.h"
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
      if (const auto* tensors = in->tensors()) {
        out.tensors.resize(tensors->size());
        for (flatbuffers::uoffset_t t = 0; t < tensors->size(); ++t) {
          tensors->Get(t)->UnPackTo(&out.tensors[t]);
          GRAFT_RETURN_IF_ERROR(CheckTensorUnions(
              out.tensors[t],
              absl::StrCat("subgraphs[", s, "].tensors[", t, "]")));
        }
      }
      out.inputs = ToVector(in->inputs());
      out.outputs = ToVector(in->outputs());
      if (const auto* ops = in->operators()) {
        out.ops.resize(ops->size());
        for (flatbuffers::uoffset_t k = 0; k < ops->size(); ++k) {
          const tfl::Operator* op = ops->Get(k);
          tfl::OperatorT& op_out = out.ops[k];
          op->UnPackTo(&op_out);
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
    for (flatbuffers::uoffset_t i = 0; i < signatures->size(); ++i) {
      signatures->Get(i)->UnPackTo(&model.signature_defs[i]);
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

// Builds the flatbuffer for `placement`, with placeholder offsets; returns
// the blobs to store after it, in file order, without file offsets yet.
void BuildFlatbuffer(const Model& model, const Placement& placement,
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
      tfl::BufferBuilder b(fbb);
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
    for (const tfl::TensorT& tensor : sg.tensors) {
      tensors.push_back(tfl::CreateTensor(fbb, &tensor));
    }
    auto tensors_vec = fbb.CreateVector(tensors);
    std::vector<flatbuffers::Offset<tfl::Operator>> ops;
    ops.reserve(sg.ops.size());
    for (size_t k = 0; k < sg.ops.size(); ++k) {
      const tfl::OperatorT& op = sg.ops[k];
      bool outside = placement.custom_outside[s][k];
      if (!outside && op.large_custom_options_offset == 0 &&
          op.large_custom_options_size == 0) {
        ops.push_back(tfl::CreateOperator(fbb, &op));
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
      }
      ops.push_back(tfl::CreateOperator(fbb, &copy));
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
    // tensors, inputs, outputs and operators are written even when empty:
    // TFLite's interpreter rejects a subgraph without them.
    tfl::SubGraphBuilder b(fbb);
    b.add_tensors(tensors_vec);
    b.add_inputs(inputs_vec);
    b.add_outputs(outputs_vec);
    b.add_operators(ops_vec);
    if (!name.IsNull()) b.add_name(name);
    b.add_debug_metadata_index(sg.debug_metadata_index);
    subgraphs.push_back(b.Finish());
  }
  auto subgraphs_vec = fbb.CreateVector(subgraphs);

  auto description =
      model.description.empty() ? 0 : fbb.CreateString(model.description);
  auto metadata_buffer = model.metadata_buffer.empty()
                             ? 0
                             : fbb.CreateVector(model.metadata_buffer);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<tfl::Metadata>>>
      metadata_vec = 0;
  if (!model.metadata.empty()) {
    std::vector<flatbuffers::Offset<tfl::Metadata>> metadata;
    for (const tfl::MetadataT& m : model.metadata) {
      metadata.push_back(tfl::CreateMetadata(fbb, &m));
    }
    metadata_vec = fbb.CreateVector(metadata);
  }
  flatbuffers::Offset<
      flatbuffers::Vector<flatbuffers::Offset<tfl::SignatureDef>>>
      signatures_vec = 0;
  if (!model.signature_defs.empty()) {
    std::vector<flatbuffers::Offset<tfl::SignatureDef>> signatures;
    for (const tfl::SignatureDefT& sig : model.signature_defs) {
      signatures.push_back(tfl::CreateSignatureDef(fbb, &sig));
    }
    signatures_vec = fbb.CreateVector(signatures);
  }

  tfl::ModelBuilder b(fbb);
  b.add_version(model.version);
  // operator_codes, subgraphs and buffers are written even when empty, as
  // TFLite's converter does; older readers dereference them unchecked.
  b.add_operator_codes(codes_vec);
  b.add_subgraphs(subgraphs_vec);
  if (!description.IsNull()) b.add_description(description);
  b.add_buffers(buffers_vec);
  if (!metadata_buffer.IsNull()) b.add_metadata_buffer(metadata_buffer);
  if (!metadata_vec.IsNull()) b.add_metadata(metadata_vec);
  if (!signatures_vec.IsNull()) b.add_signature_defs(signatures_vec);
  fbb.Finish(b.Finish(), tfl::ModelIdentifier());

  blobs->clear();
  blobs->insert(blobs->end(), buffer_blobs.begin(), buffer_blobs.end());
  blobs->insert(blobs->end(), custom_blobs.begin(), custom_blobs.end());
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

  auto build = [&](const Placement& p, size_t initial_size, Image* image) {
    flatbuffers::FlatBufferBuilder fbb(std::max<size_t>(initial_size, 1024));
    BuildFlatbuffer(model, p, fbb, &image->blobs);
    return fbb;
  };

  Image image;
  // Most models fit easily: build once and check. Otherwise measure the
  // structure without constant data to decide what moves out.
  flatbuffers::FlatBufferBuilder fbb;
  bool fits = false;
  if (inline_data < limit / 2) {
    fbb = build(placement, static_cast<size_t>(inline_data) + 4096, &image);
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
  return WriteFileAtomically(path, pieces);
}

}  // namespace graft
