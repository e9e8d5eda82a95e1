// STRING tensors in TFLite's layout, which Graft keeps unchanged (models'
// constant strings are used in place):
//
//   int32 count N | int32 offsets[N + 1] | the N strings' bytes, back to back
//
// where string i is bytes [offsets[i], offsets[i + 1]) of the buffer (the
// offsets count from the buffer's start; offsets[N] is its size). All
// integers are little endian. A STRING tensor's byte size therefore depends
// on its values: the runtime sizes such tensors at invoke (runtime.h).
#ifndef GRAFT_DISPATCH_STRING_TENSOR_H_
#define GRAFT_DISPATCH_STRING_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace graft {

// The bytes a buffer of these strings takes.
size_t PackedStringsBytes(absl::Span<const absl::string_view> strings);
// Writes the buffer of `strings` to `out`, which holds
// PackedStringsBytes(strings) bytes.
void WritePackedStrings(absl::Span<const absl::string_view> strings,
                        uint8_t* out);
// A new buffer of `strings`.
std::vector<uint8_t> PackStrings(absl::Span<const absl::string_view> strings);
std::vector<uint8_t> PackStrings(absl::Span<const std::string> strings);

// The strings of a buffer (views into it), after checking its layout: a
// count that fits, offsets that ascend within the buffer, the last one at
// its end. InvalidArgument says what is wrong.
absl::StatusOr<std::vector<absl::string_view>> UnpackStrings(
    absl::Span<const uint8_t> buffer);

}  // namespace graft

#endif  // GRAFT_DISPATCH_STRING_TENSOR_H_
