#include "dispatch/tensor.h"

#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace graft {

size_t ElementSize(tfl::TensorType type) {
  int bits = TensorTypeBits(type);
  // Sub-byte types (INT4, UINT4) are not addressable per element.
  return bits >= 8 ? static_cast<size_t>(bits / 8) : 0;
}

absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int32_t> shape) {
  int64_t bound = 1;
  bool zero = false;
  for (int32_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "shape %s has negative dimension %d", ShapeToString(shape), d));
    }
    zero |= d == 0;
    if (d > 1 &&
        (!CheckedMul(bound, d, &bound) || bound > kMaxTensorElements)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "shape %s has more than 2^40 elements (the most one tensor may have)",
          ShapeToString(shape)));
    }
  }
  return zero ? 0 : bound;
}

absl::StatusOr<size_t> CheckedTensorBytes(tfl::TensorType type,
                                          absl::Span<const int32_t> shape) {
  absl::StatusOr<int64_t> n = CheckedNumElements(shape);
  if (!n.ok()) return n.status();
  // At most 2^40 elements of at most 16 bytes: no overflow.
  return static_cast<size_t>(*n) * ElementSize(type);
}

std::string ShapeToString(absl::Span<const int32_t> shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

}  // namespace graft
