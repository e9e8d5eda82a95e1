#include "tests/fuzz/fuzz_util.h"

#include <cstring>

namespace graft {
namespace fuzz {

void FillInput(int32_t element_type, uint8_t* data, size_t bytes) {
  if (element_type == tfl::TensorType_FLOAT32) {
    for (size_t i = 0; i + sizeof(float) <= bytes; i += sizeof(float)) {
      const float v = static_cast<float>((i / sizeof(float)) % 17) / 8.0f - 1.0f;
      std::memcpy(data + i, &v, sizeof(v));
    }
    return;
  }
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>(i * 7 % 5);
}

}  // namespace fuzz
}  // namespace graft
