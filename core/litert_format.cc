#include "core/litert_format.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/flatbuffer_util.h"
#include "flatbuffers/flexbuffers.h"

namespace graft {
namespace {

constexpr char kBytecodeSizeKey[] = "bytecode_size";
constexpr char kBytecodeOffsetKey[] = "bytecode_offset";
constexpr char kNameKey[] = "name";
constexpr char kFallbackKey[] = "graft_fallback_subgraph";
constexpr char kModuleBufferKey[] = "graft_module_buffer";

bool IsPrintable(absl::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return c >= 0x20 && c < 0x7f; });
}

}  // namespace

std::vector<uint8_t> EncodeLiteRtDispatchOpOptions(
    const LiteRtDispatchOpOptions& o) {
  flexbuffers::Builder fbb;
  fbb.ForceMinimumBitWidth(flexbuffers::BIT_WIDTH_64);
  const size_t start = fbb.StartMap();
  fbb.UInt(kBytecodeSizeKey, o.bytecode_size);
  fbb.UInt(kBytecodeOffsetKey, o.bytecode_offset);
  fbb.String(kNameKey, o.name);
  if (o.fallback_subgraph >= 0) fbb.Int(kFallbackKey, o.fallback_subgraph);
  if (o.module_buffer != 0) fbb.UInt(kModuleBufferKey, o.module_buffer);
  fbb.EndMap(start);
  fbb.Finish();
  return fbb.GetBuffer();
}

absl::StatusOr<LiteRtDispatchOpOptions> DecodeLiteRtDispatchOpOptions(
    absl::Span<const uint8_t> data) {
  // A copy with a NUL after it: keys are read with strcmp (flatbuffer_util.h).
  std::optional<VerifiedFlexbuffer> buffer = VerifyFlexbuffer(data);
  if (!buffer) {
    return absl::DataLossError(
        absl::StrCat("DISPATCH_OP options: not a valid flexbuffer (",
                     data.size(), " bytes)"));
  }
  const flexbuffers::Reference root = buffer->root;
  if (!root.IsMap()) {
    return absl::DataLossError("DISPATCH_OP options: expected a map");
  }
  flexbuffers::Map map = root.AsMap();
  flexbuffers::Reference size = map[kBytecodeSizeKey];
  flexbuffers::Reference offset = map[kBytecodeOffsetKey];
  flexbuffers::Reference name = map[kNameKey];
  if (!size.IsUInt() || !offset.IsUInt() || !name.IsString()) {
    return absl::DataLossError(
        "DISPATCH_OP options: bytecode_size and bytecode_offset (unsigned) and "
        "name (a string) are required");
  }
  LiteRtDispatchOpOptions o;
  o.bytecode_size = size.AsUInt64();
  o.bytecode_offset = offset.AsUInt64();
  o.name = name.AsString().str();
  flexbuffers::Reference fallback = map[kFallbackKey];
  if (fallback.IsIntOrUint()) {
    const int64_t f = fallback.AsInt64();
    if (f < 0 || f > INT32_MAX) {
      return absl::DataLossError(absl::StrCat(
          "DISPATCH_OP options: graft_fallback_subgraph ", f, " out of range"));
    }
    o.fallback_subgraph = static_cast<int32_t>(f);
  }
  flexbuffers::Reference module = map[kModuleBufferKey];
  if (module.IsIntOrUint()) {
    const uint64_t b = module.AsUInt64();
    if (b == 0 || b > UINT32_MAX) {
      return absl::DataLossError(absl::StrCat(
          "DISPATCH_OP options: graft_module_buffer ", b, " out of range"));
    }
    o.module_buffer = static_cast<uint32_t>(b);
  }
  return o;
}

absl::StatusOr<std::vector<uint8_t>> EncodeLiteRtStamp(
    const LiteRtStamp& stamp) {
  std::vector<uint8_t> out(kLiteRtStampSize, 0);
  const std::string* fields[] = {&stamp.soc_manufacturer, &stamp.soc_model};
  for (size_t i = 0; i < 2; ++i) {
    const std::string& f = *fields[i];
    if (f.size() >= kLiteRtStampFieldSize || !IsPrintable(f)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "LiteRtStamp: ", i == 0 ? "SoC manufacturer" : "SoC model", " '", f,
          "' must be printable and shorter than ", kLiteRtStampFieldSize,
          " bytes"));
    }
    std::copy(f.begin(), f.end(), out.begin() + i * kLiteRtStampFieldSize);
  }
  return out;
}

absl::StatusOr<LiteRtStamp> DecodeLiteRtStamp(absl::Span<const uint8_t> data) {
  if (data.size() == kLiteRtStampSize + 1) {
    // LiteRT's first compiled format stamped 250 bytes plus a serialization
    // byte and kept the bytecode in NPU_BYTE_CODE metadata.
    return absl::UnimplementedError(absl::StrCat(
        "LiteRtStamp: ", data.size(),
        " bytes: the stamp of LiteRT's first compiled-model format (bytecode "
        "in NPU_BYTE_CODE metadata), which Graft does not read; recompile the "
        "original model with ai-edge-litert 2.x or with graft apply"));
  }
  if (data.size() != kLiteRtStampSize) {
    return absl::DataLossError(absl::StrCat(
        "LiteRtStamp: ", data.size(), " bytes, expected ", kLiteRtStampSize));
  }
  std::string fields[2];
  for (size_t i = 0; i < 2; ++i) {
    absl::Span<const uint8_t> f =
        data.subspan(i * kLiteRtStampFieldSize, kLiteRtStampFieldSize);
    // LiteRT reads each field as a C string: one without its NUL would run
    // into the next.
    const auto nul = std::find(f.begin(), f.end(), 0);
    fields[i].assign(f.begin(), nul);
    if (nul == f.end() || !IsPrintable(fields[i]) ||
        std::any_of(nul, f.end(), [](uint8_t b) { return b != 0; })) {
      return absl::DataLossError(absl::StrCat(
          "LiteRtStamp: field ", i, " is not a NUL-padded printable string"));
    }
  }
  return LiteRtStamp{std::move(fields[0]), std::move(fields[1])};
}

absl::StatusOr<LiteRtStamp> ReadLiteRtStamp(const Model& model) {
  for (const tfl::MetadataT& md : model.metadata) {
    if (md.name != kLiteRtStampMetadataName) continue;
    if (md.buffer >= model.buffers.size()) {
      return absl::DataLossError(absl::StrCat("LiteRtStamp: metadata buffer ",
                                              md.buffer, " out of range"));
    }
    return DecodeLiteRtStamp(model.buffers[md.buffer].data.span());
  }
  return absl::NotFoundError("the model has no LiteRtStamp metadata");
}

absl::Status WriteLiteRtStamp(Model& model, const LiteRtStamp& stamp) {
  absl::StatusOr<std::vector<uint8_t>> encoded = EncodeLiteRtStamp(stamp);
  if (!encoded.ok()) return encoded.status();
  Bytes data = Bytes::Own(*std::move(encoded));
  for (tfl::MetadataT& md : model.metadata) {
    if (md.name == kLiteRtStampMetadataName && md.buffer != 0 &&
        md.buffer < model.buffers.size()) {
      model.buffers[md.buffer].data = std::move(data);
      return absl::OkStatus();
    }
  }
  tfl::MetadataT md;
  md.name = kLiteRtStampMetadataName;
  md.buffer = AddBuffer(model, std::move(data));
  model.metadata.push_back(std::move(md));
  return absl::OkStatus();
}

absl::Status ResolveLiteRtBytecodeOffsets(const Model& model,
                                          uint8_t* flatbuffer) {
  const tfl::Model* fb = tfl::GetModel(flatbuffer);
  for (size_t s = 0; s < model.subgraphs.size(); ++s) {
    const std::vector<tfl::OperatorT>& ops = model.subgraphs[s].ops;
    for (size_t k = 0; k < ops.size(); ++k) {
      if (!IsLiteRtDispatchOp(model, ops[k])) continue;
      absl::StatusOr<LiteRtDispatchOpOptions> o =
          DecodeLiteRtDispatchOpOptions(ops[k].custom_options);
      if (!o.ok() || o->module_buffer == 0) continue;
      auto where = [&] { return absl::StrCat("subgraph ", s, " op ", k); };
      const tfl::Buffer* buffer = o->module_buffer < fb->buffers()->size()
                                      ? fb->buffers()->Get(o->module_buffer)
                                      : nullptr;
      if (buffer == nullptr || buffer->offset() <= 1) {
        return absl::InternalError(absl::StrCat(
            "DISPATCH_OP at ", where(), ": module buffer ", o->module_buffer,
            " is not stored after the flatbuffer"));
      }
      const flatbuffers::Vector<uint8_t>* options =
          fb->subgraphs()->Get(s)->operators()->Get(k)->custom_options();
      if (options == nullptr) {
        return absl::InternalError(
            absl::StrCat("DISPATCH_OP at ", where(),
                         ": options stored outside the "
                         "flatbuffer cannot be patched"));
      }
      // The flatbuffer is ours to write (the writer's own buffer).
      uint8_t* data = const_cast<uint8_t*>(options->data());
      flexbuffers::Map map =
          flexbuffers::GetRoot(data, options->size()).AsMap();
      if (!map[kBytecodeOffsetKey].MutateUInt(buffer->offset()) ||
          !map[kBytecodeSizeKey].MutateUInt(buffer->size())) {
        return absl::InternalError(
            absl::StrCat("DISPATCH_OP at ", where(),
                         ": bytecode offset does not fit its "
                         "options in place"));
      }
    }
  }
  return absl::OkStatus();
}

LiteRtElementType LiteRtElementTypeOf(tfl::TensorType t) {
  switch (t) {
    case tfl::TensorType_FLOAT32:
      return kLiteRtElementTypeFloat32;
    case tfl::TensorType_FLOAT16:
      return kLiteRtElementTypeFloat16;
    case tfl::TensorType_INT32:
      return kLiteRtElementTypeInt32;
    case tfl::TensorType_UINT8:
      return kLiteRtElementTypeUInt8;
    case tfl::TensorType_INT64:
      return kLiteRtElementTypeInt64;
    case tfl::TensorType_STRING:
      return kLiteRtElementTypeTfString;
    case tfl::TensorType_BOOL:
      return kLiteRtElementTypeBool;
    case tfl::TensorType_INT16:
      return kLiteRtElementTypeInt16;
    case tfl::TensorType_COMPLEX64:
      return kLiteRtElementTypeComplex64;
    case tfl::TensorType_INT8:
      return kLiteRtElementTypeInt8;
    case tfl::TensorType_FLOAT64:
      return kLiteRtElementTypeFloat64;
    case tfl::TensorType_COMPLEX128:
      return kLiteRtElementTypeComplex128;
    case tfl::TensorType_UINT64:
      return kLiteRtElementTypeUInt64;
    case tfl::TensorType_RESOURCE:
      return kLiteRtElementTypeTfResource;
    case tfl::TensorType_VARIANT:
      return kLiteRtElementTypeTfVariant;
    case tfl::TensorType_UINT32:
      return kLiteRtElementTypeUInt32;
    case tfl::TensorType_UINT16:
      return kLiteRtElementTypeUInt16;
    case tfl::TensorType_INT4:
      return kLiteRtElementTypeInt4;
    case tfl::TensorType_BFLOAT16:
      return kLiteRtElementTypeBFloat16;
    case tfl::TensorType_INT2:
      return kLiteRtElementTypeInt2;
    default:
      return kLiteRtElementTypeNone;
  }
}

bool IsLiteRtDispatchOp(const Model& model, const tfl::OperatorT& op) {
  if (op.opcode_index >= model.operator_codes.size()) return false;
  const tfl::OperatorCodeT& code = model.operator_codes[op.opcode_index];
  return EffectiveBuiltinCode(code) == tfl::BuiltinOperator_CUSTOM &&
         code.custom_code == kLiteRtDispatchCustomCode;
}

}  // namespace graft
