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
#include "absl/status/statusor.h"
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

// The most elements one tensor may have (2^40). Every shape the runtime
// gives a tensor is checked against it (CheckedNumElements) at load, and at
// invoke for shapes computed then, so the product of any subset of a
// tensor's dimensions, and its byte size, fit in an int64_t: kernels may
// multiply dimensions without overflow checks of their own.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

// Number of elements of `shape` (1 for a scalar). Dimensions are never
// negative once prepared, and a tensor's shape has passed
// CheckedNumElements, so this cannot overflow for one.
inline int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

// a * b into *out; false (and *out unspecified) when it overflows int64_t.
inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
// a + b into *out; false when it overflows int64_t.
inline bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

// The element count of `shape`, or InvalidArgument when a dimension is
// negative or the product of its non-zero dimensions exceeds
// kMaxTensorElements (so a zero dimension does not hide absurd others).
absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int32_t> shape);

// The byte size of a tensor of `type` and `shape` (0 for types without a
// fixed element size), with CheckedNumElements' errors.
absl::StatusOr<size_t> CheckedTensorBytes(tfl::TensorType type,
                                          absl::Span<const int32_t> shape);

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
