#include "dispatch/string_tensor.h"

#include <cstring>

#include "absl/strings/str_format.h"

namespace graft {
namespace {

int32_t ReadInt32(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

void WriteInt32(uint8_t* p, int32_t v) { std::memcpy(p, &v, sizeof(v)); }

}  // namespace

size_t PackedStringsBytes(absl::Span<const absl::string_view> strings) {
  size_t bytes = sizeof(int32_t) * (strings.size() + 2);
  for (absl::string_view s : strings) bytes += s.size();
  return bytes;
}

void WritePackedStrings(absl::Span<const absl::string_view> strings,
                        uint8_t* out) {
  const size_t n = strings.size();
  WriteInt32(out, static_cast<int32_t>(n));
  size_t offset = sizeof(int32_t) * (n + 2);
  for (size_t i = 0; i < n; ++i) {
    WriteInt32(out + sizeof(int32_t) * (i + 1), static_cast<int32_t>(offset));
    if (!strings[i].empty()) {
      std::memcpy(out + offset, strings[i].data(), strings[i].size());
    }
    offset += strings[i].size();
  }
  WriteInt32(out + sizeof(int32_t) * (n + 1), static_cast<int32_t>(offset));
}

std::vector<uint8_t> PackStrings(absl::Span<const absl::string_view> strings) {
  std::vector<uint8_t> out(PackedStringsBytes(strings));
  WritePackedStrings(strings, out.data());
  return out;
}

std::vector<uint8_t> PackStrings(absl::Span<const std::string> strings) {
  std::vector<absl::string_view> views(strings.begin(), strings.end());
  return PackStrings(absl::MakeConstSpan(views));
}

absl::StatusOr<std::vector<absl::string_view>> UnpackStrings(
    absl::Span<const uint8_t> buffer) {
  const size_t size = buffer.size();
  if (size < sizeof(int32_t)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a %d-byte STRING buffer has no string count", size));
  }
  const int32_t n = ReadInt32(buffer.data());
  if (n < 0 || (static_cast<size_t>(n) + 2) * sizeof(int32_t) > size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "STRING buffer of %d bytes claims %d strings", size, n));
  }
  std::vector<absl::string_view> out(n);
  const uint8_t* offsets = buffer.data() + sizeof(int32_t);
  int64_t prev = static_cast<int64_t>(sizeof(int32_t)) * (n + 2);
  for (int32_t i = 0; i <= n; ++i) {
    const int64_t off = ReadInt32(offsets + sizeof(int32_t) * i);
    if (off < prev || off > static_cast<int64_t>(size) ||
        (i == n && off != static_cast<int64_t>(size))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "STRING buffer of %d bytes: offset %d of string %d is out of order "
          "or out of range",
          size, off, i));
    }
    if (i > 0) {
      out[i - 1] = absl::string_view(
          reinterpret_cast<const char*>(buffer.data()) + prev, off - prev);
    }
    prev = off;
  }
  return out;
}

}  // namespace graft
