// LiteRT's compiled-model format, read and written by Graft beside its own
// (compiled_format.h), so models compiled by LiteRT's tools run in Graft and
// models Graft compiles with a LiteRT vendor's plugin run in LiteRT.
//
// - Each compiled partition is a custom op with custom code
//   kLiteRtDispatchCustomCode ("DISPATCH_OP"), whose custom_options are a
//   flexbuffer map {bytecode_size, bytecode_offset, name} with 64-bit
//   numbers: the bytecode module is the byte range [offset, offset + size)
//   of the model file (offsets count from the file's first byte), and
//   `name` is the entry point (the plugin's "call info"). Several ops may
//   share one module. Graft adds two keys LiteRT ignores:
//   "graft_fallback_subgraph", the subgraph holding the partition's
//   original ops, which Graft's runtime runs on CPU when the vendor cannot;
//   and "graft_module_buffer", the model buffer holding the module (an
//   external buffer), from which the serializer fills in bytecode_offset
//   (ResolveLiteRtBytecodeOffsets) and which a model compiled in memory
//   uses before it has a file.
// - The model's metadata entry kLiteRtStampMetadataName is the build stamp:
//   kLiteRtStampSize bytes, two NUL-padded fields of kLiteRtStampFieldSize
//   bytes each, the SoC manufacturer (the plugin's, e.g. "IntelOpenVINO")
//   then the SoC model ("LNL"). Models compiled by older LiteRT tools may
//   have no stamp.
#ifndef GRAFT_CORE_LITERT_FORMAT_H_
#define GRAFT_CORE_LITERT_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/litert_abi.h"
#include "core/model.h"

namespace graft {

inline constexpr char kLiteRtDispatchCustomCode[] = "DISPATCH_OP";
inline constexpr char kLiteRtStampMetadataName[] = "LiteRtStamp";
inline constexpr size_t kLiteRtStampFieldSize = 125;
inline constexpr size_t kLiteRtStampSize = 2 * kLiteRtStampFieldSize;

// custom_options of a DISPATCH_OP.
struct LiteRtDispatchOpOptions {
  uint64_t bytecode_offset = 0;
  uint64_t bytecode_size = 0;
  std::string name;
  // Graft's additions; -1 / 0 when absent (every model LiteRT's tools
  // write).
  int32_t fallback_subgraph = -1;
  uint32_t module_buffer = 0;
};

// Encodes with every number 64 bits wide, as LiteRT does, so offsets can be
// rewritten once the file layout is known without changing the size.
std::vector<uint8_t> EncodeLiteRtDispatchOpOptions(
    const LiteRtDispatchOpOptions& options);
// Verifies the flexbuffer and the three required keys (unsigned sizes, a
// string name); DataLoss naming what is wrong otherwise.
absl::StatusOr<LiteRtDispatchOpOptions> DecodeLiteRtDispatchOpOptions(
    absl::Span<const uint8_t> data);

struct LiteRtStamp {
  std::string soc_manufacturer;
  std::string soc_model;
};

// InvalidArgument when a field does not fit (kLiteRtStampFieldSize - 1
// bytes at most, so it stays NUL-terminated) or holds a NUL.
absl::StatusOr<std::vector<uint8_t>> EncodeLiteRtStamp(
    const LiteRtStamp& stamp);
// DataLoss unless `data` is kLiteRtStampSize bytes of two NUL-padded
// printable fields.
absl::StatusOr<LiteRtStamp> DecodeLiteRtStamp(absl::Span<const uint8_t> data);

// The model's stamp; NotFound when it has none.
absl::StatusOr<LiteRtStamp> ReadLiteRtStamp(const Model& model);
// Stores `stamp` in the model's metadata (replacing an earlier one).
absl::Status WriteLiteRtStamp(Model& model, const LiteRtStamp& stamp);

// Fills in bytecode_offset, in place, in the custom options of every
// DISPATCH_OP of `model` that names a module buffer: the offset that buffer
// has in `flatbuffer`, the model's finished flatbuffer whose external
// buffers have their final offsets (core/model_io.cc calls this while
// saving). Internal when such a buffer is not stored outside the flatbuffer
// or its options cannot be patched in place.
absl::Status ResolveLiteRtBytecodeOffsets(const Model& model,
                                          uint8_t* flatbuffer);

// The .tflite schema's TensorType as LiteRT's element type (TFLite's
// TfLiteType numbering); kLiteRtElementTypeNone for a type LiteRT does not
// number.
LiteRtElementType LiteRtElementTypeOf(tfl::TensorType type);

// True for an op whose operator code is kLiteRtDispatchCustomCode.
bool IsLiteRtDispatchOp(const Model& model, const tfl::OperatorT& op);

}  // namespace graft

#endif  // GRAFT_CORE_LITERT_FORMAT_H_
