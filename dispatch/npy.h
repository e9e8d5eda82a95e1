// Reading and writing NumPy .npy files (format versions 1.0 to 3.0, little
// endian, C order), for the reference tests and `graft run`.
//
// Supported dtypes and their TensorType: <f4 FLOAT32, <f8 FLOAT64, <f2
// FLOAT16, <i8 INT64, <i4 INT32, <i2 INT16, |i1 INT8, <u8 UINT64, <u4
// UINT32, <u2 UINT16, |u1 UINT8, |b1 BOOL, and |S<width> STRING (numpy's
// fixed-width byte strings, NUL-padded; NpyArray::data then holds a STRING
// buffer as string_tensor.h lays it out, and trailing NULs of a string are
// lost, as in numpy). Others (big endian, Fortran order, objects, unicode)
// are refused with a message.
#ifndef GRAFT_DISPATCH_NPY_H_
#define GRAFT_DISPATCH_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/model.h"
#include "dispatch/tensor.h"

namespace graft {

struct NpyArray {
  tfl::TensorType type = tfl::TensorType_FLOAT32;
  std::vector<int64_t> shape;
  // Element data, C order, little endian.
  std::vector<uint8_t> data;

  int64_t num_elements() const;
};

// Parses a whole .npy image.
absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes);
// Serializes to a version 1.0 image (header padded to 64 bytes).
absl::StatusOr<std::string> SerializeNpy(tfl::TensorType type,
                                         absl::Span<const int64_t> shape,
                                         absl::Span<const uint8_t> data);

absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
// A copy of `tensor`'s type, shape and bytes.
NpyArray TensorToNpy(const Tensor& tensor);
absl::Status WriteNpy(const std::string& path, tfl::TensorType type,
                      absl::Span<const int64_t> shape,
                      absl::Span<const uint8_t> data);

}  // namespace graft

#endif  // GRAFT_DISPATCH_NPY_H_
