// Tensor: the runtime's view of one tensor of a prepared subgraph.
//
// A Tensor is a plain record that kernels read and write: the element type,
// the (static, already inferred) shape, and where the bytes are. It owns
// nothing: activation data lives in the subgraph's arena (see
// memory_planner.h), constant data in the memory-mapped model file, and bound
// inputs/outputs in the caller's buffers.
//
// Thread-safety: none; a Tensor belongs to one prepared subgraph, which is
// used by one thread at a time.
#ifndef GRAFT_DISPATCH_TENSOR_H_
#define GRAFT_DISPATCH_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/model.h"

namespace graft {

// Dimensions, outermost first. Six inline dims cover every op Graft runs
// without a heap allocation.
using Shape = absl::InlinedVector<int32_t, 6>;

// Bytes of one element of `type`; 0 for types whose elements have no fixed
// byte size (STRING, RESOURCE, VARIANT, the 4-bit types).
size_t ElementSize(tfl::TensorType type);

// Number of elements of `shape` (1 for a scalar). Dimensions are never
// negative once prepared.
inline int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

// "[1, 224, 224, 3]".
std::string ShapeToString(absl::Span<const int32_t> shape);

struct Tensor {
  tfl::TensorType type = tfl::TensorType_FLOAT32;
  Shape shape;
  // Element data; null until memory is planned (or for an empty tensor).
  // Writable only for non-constant tensors: constant data points into the
  // read-only file mapping. Typed access: data<float>().
  uint8_t* raw_data = nullptr;
  // Size of the data in bytes: NumElements(shape) * ElementSize(type).
  size_t bytes = 0;
  // The model's quantization parameters, or null when the tensor has none.
  // Points into the runtime's model, which outlives the tensor.
  const tfl::QuantizationParametersT* quantization = nullptr;
  // Data comes from a model buffer (weights, constant indices, ...).
  bool constant = false;
  // The model's tensor name (for messages and reports).
  absl::string_view name;

  int rank() const { return static_cast<int>(shape.size()); }
  int32_t dim(int i) const { return shape[i]; }
  int64_t num_elements() const { return NumElements(shape); }

  // The data as elements of T (the caller picks T to match `type`).
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(raw_data);
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(raw_data);
  }
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_TENSOR_H_
