// Loading, verifying, saving and comparing .tflite models.
#ifndef GRAFT_CORE_MODEL_IO_H_
#define GRAFT_CORE_MODEL_IO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/bytes.h"
#include "core/file_util.h"
#include "core/model.h"

namespace graft {

// Alignment of buffers stored after the flatbuffer.
inline constexpr size_t kExternalBufferAlignment = 64;

// Memory-maps `path`, verifies it (VerifyFlatbuffer, then VerifyModel) and
// converts it to the IR. Constant data stays in the mapping (zero-copy). Every
// error message starts with the path and says what is wrong and where: the
// table, the index and, for flatbuffer errors, the byte offset.
absl::StatusOr<Model> LoadModel(const std::string& path);

// As LoadModel, for a model image already in memory. `data` must stay valid
// (its owner reference keeps it alive); `name` prefixes error messages.
absl::StatusOr<Model> LoadModelFromBytes(Bytes data, absl::string_view name);

// Structural checks of the flatbuffer itself: file identifier, the
// flatbuffers verifier, buffers stored outside it (offset/size) lying inside
// the file. On failure the message locates the first bad table, e.g.
// "subgraphs[0].operators[12]: table out of bounds at offset 0x1a4".
absl::Status VerifyFlatbuffer(absl::Span<const uint8_t> data);

// Semantic checks of the IR: opcode, tensor, buffer and subgraph indices in
// range; shapes sane (dims >= -1, shape_signature consistent); constant data
// sized to match static shapes; signatures pointing at real tensors; each
// subgraph's ops in a valid execution order (every input produced by an
// earlier op, a subgraph input, a constant or a variable; no cycle). Messages
// name the subgraph, op (index and name) or tensor.
absl::Status VerifyModel(const Model& model);

struct SaveOptions {
  // Buffers are moved after the flatbuffer when it would otherwise exceed
  // this many bytes (the flatbuffers 2 GiB limit, less headroom). Tests lower
  // it to exercise the external path on small models.
  uint64_t max_flatbuffer_size = (uint64_t{1} << 31) - (uint64_t{1} << 20);
  // SaveModel: flush to disk before the rename (core/file_util.h).
  Durability durability = Durability::kDurable;
};

// Serializes `model` to a complete .tflite image: the flatbuffer, followed by
// external buffers (Buffer::external, or moved out by the size limit), each
// aligned to kExternalBufferAlignment. Deterministic: the same model gives
// the same bytes.
absl::StatusOr<std::vector<uint8_t>> SerializeModel(
    const Model& model, const SaveOptions& options = {});

// Writes SerializeModel's image to `path` atomically: a temporary file in the
// same directory, flushed as options.durability says, then renamed over
// `path`. On any error `path` is
// untouched and the temporary file removed.
absl::Status SaveModel(const Model& model, const std::string& path,
                       const SaveOptions& options = {});

// Structural comparison of every field (options, quantization, sparsity,
// signatures, metadata; buffers by content, regardless of where they are
// stored). OK when equal; otherwise an error naming the first difference,
// e.g. "subgraphs[0].tensors[3] (name 'conv/w'): quantization differs".
absl::Status CompareModels(const Model& a, const Model& b);

}  // namespace graft

#endif  // GRAFT_CORE_MODEL_IO_H_
