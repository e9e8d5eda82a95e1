#include "dispatch/tensor.h"

#include <string>

#include "absl/strings/str_join.h"

namespace graft {

size_t ElementSize(tfl::TensorType type) {
  int bits = TensorTypeBits(type);
  // Sub-byte types (INT4, UINT4) are not addressable per element.
  return bits >= 8 ? static_cast<size_t>(bits / 8) : 0;
}

std::string ShapeToString(absl::Span<const int32_t> shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

}  // namespace graft
