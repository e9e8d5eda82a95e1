#include "dispatch/npy.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/file_util.h"
#include "core/status.h"
#include "dispatch/string_tensor.h"

namespace graft {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct DtypeName {
  const char* descr;
  tfl::TensorType type;
};
constexpr DtypeName kDtypes[] = {
    {"<f4", tfl::TensorType_FLOAT32}, {"<f8", tfl::TensorType_FLOAT64},
    {"<f2", tfl::TensorType_FLOAT16}, {"<i8", tfl::TensorType_INT64},
    {"<i4", tfl::TensorType_INT32},   {"<i2", tfl::TensorType_INT16},
    {"|i1", tfl::TensorType_INT8},    {"<u8", tfl::TensorType_UINT64},
    {"<u4", tfl::TensorType_UINT32},  {"<u2", tfl::TensorType_UINT16},
    {"|u1", tfl::TensorType_UINT8},   {"|b1", tfl::TensorType_BOOL},
};

// The value of `key` in the header dict: the text after "'key':" up to the
// next top-level comma or closing brace.
absl::StatusOr<absl::string_view> HeaderValue(absl::string_view header,
                                              absl::string_view key) {
  std::string quoted = absl::StrCat("'", key, "'");
  size_t pos = header.find(quoted);
  if (pos == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("npy header has no '", key, "'"));
  }
  pos = header.find(':', pos + quoted.size());
  if (pos == absl::string_view::npos) {
    return absl::InvalidArgumentError("malformed npy header");
  }
  size_t begin = pos + 1;
  int depth = 0;
  size_t end = begin;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return absl::StripAsciiWhitespace(header.substr(begin, end - begin));
}

}  // namespace

int64_t NpyArray::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<NpyArray> ParseNpy(absl::string_view bytes) {
  if (bytes.size() < kMagicLen + 4 ||
      std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    return absl::InvalidArgumentError("not an .npy file (bad magic)");
  }
  const uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) |
                 (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return absl::InvalidArgumentError("truncated npy");
    header_len = 0;
    for (int i = 0; i < 4; ++i) {
      header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                    << (8 * i);
    }
    offset = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("unsupported npy version %d", major));
  }
  if (offset + header_len > bytes.size()) {
    return absl::InvalidArgumentError("truncated npy header");
  }
  absl::string_view header = bytes.substr(offset, header_len);
  NpyArray a;
  GRAFT_ASSIGN_OR_RETURN(absl::string_view descr, HeaderValue(header, "descr"));
  descr = absl::StripPrefix(absl::StripSuffix(descr, "'"), "'");
  // Fixed-width byte strings ('|S<width>'): each element `width` bytes,
  // NUL-padded; held as a STRING buffer (string_tensor.h).
  int64_t string_width = -1;
  if (absl::ConsumePrefix(&descr, "|S") &&
      (!absl::SimpleAtoi(descr, &string_width) || string_width < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported npy dtype |S", descr));
  }
  bool found = string_width >= 0;
  if (found) a.type = tfl::TensorType_STRING;
  for (const DtypeName& d : kDtypes) {
    if (descr == d.descr) {
      a.type = d.type;
      found = true;
    }
  }
  // Single-byte types may be written with '<' or '=' too.
  if (!found && descr.size() == 3 && descr[2] == '1') {
    for (const DtypeName& d : kDtypes) {
      if (descr.substr(1) == absl::string_view(d.descr).substr(1)) {
        a.type = d.type;
        found = true;
      }
    }
  }
  if (!found) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported npy dtype ", descr));
  }
  GRAFT_ASSIGN_OR_RETURN(absl::string_view fortran,
                         HeaderValue(header, "fortran_order"));
  if (fortran != "False") {
    return absl::InvalidArgumentError("Fortran-order npy is not supported");
  }
  GRAFT_ASSIGN_OR_RETURN(absl::string_view shape, HeaderValue(header, "shape"));
  shape = absl::StripPrefix(absl::StripSuffix(shape, ")"), "(");
  for (absl::string_view dim : absl::StrSplit(shape, ',', absl::SkipWhitespace())) {
    int64_t d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(dim), &d) || d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad npy shape (", shape, ")"));
    }
    a.shape.push_back(d);
  }
  const size_t elem = string_width >= 0
                          ? static_cast<size_t>(string_width)
                          : static_cast<size_t>(TensorTypeBits(a.type) / 8);
  const size_t want = static_cast<size_t>(a.num_elements()) * elem;
  absl::string_view body = bytes.substr(offset + header_len);
  if (body.size() != want) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "npy data holds %d bytes, shape and dtype need %d", body.size(), want));
  }
  if (string_width >= 0) {
    std::vector<absl::string_view> strings;
    for (size_t i = 0; i < want; i += elem) {
      absl::string_view s = body.substr(i, elem);
      strings.push_back(s.substr(0, s.find_last_not_of('\0') + 1));
    }
    a.data = PackStrings(absl::MakeConstSpan(strings));
  } else {
    a.data.assign(body.begin(), body.end());
  }
  return a;
}

absl::StatusOr<std::string> SerializeNpy(tfl::TensorType type,
                                         absl::Span<const int64_t> shape,
                                         absl::Span<const uint8_t> data) {
  std::string descr;
  for (const DtypeName& d : kDtypes) {
    if (d.type == type) descr = d.descr;
  }
  // STRING: fixed-width byte strings as wide as the longest (numpy's 'S'
  // dtype, which drops trailing NULs).
  std::string padded;
  if (type == tfl::TensorType_STRING) {
    GRAFT_ASSIGN_OR_RETURN(std::vector<absl::string_view> strings,
                           UnpackStrings(data));
    size_t width = 1;
    for (absl::string_view s : strings) width = std::max(width, s.size());
    for (absl::string_view s : strings) {
      padded.append(s.data(), s.size());
      padded.append(width - s.size(), '\0');
    }
    descr = absl::StrCat("|S", width);
    data = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(padded.data()),
                               padded.size());
  }
  if (descr.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "no npy dtype for ", TensorTypeName(type)));
  }
  std::string dims;
  for (int64_t d : shape) absl::StrAppend(&dims, d, ",");
  if (shape.size() > 1) dims.pop_back();  // (3,) keeps its comma
  std::string header = absl::StrFormat(
      "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, dims);
  // Pad with spaces so the data starts 64-byte aligned; end with '\n'.
  const size_t unpadded = kMagicLen + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(reinterpret_cast<const char*>(data.data()), data.size());
  return out;
}

absl::StatusOr<NpyArray> ReadNpy(const std::string& path) {
  GRAFT_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  absl::StatusOr<NpyArray> a = ParseNpy(bytes);
  if (!a.ok()) {
    return absl::Status(a.status().code(),
                        absl::StrCat(path, ": ", a.status().message()));
  }
  return a;
}

absl::Status WriteNpy(const std::string& path, tfl::TensorType type,
                      absl::Span<const int64_t> shape,
                      absl::Span<const uint8_t> data) {
  GRAFT_ASSIGN_OR_RETURN(std::string bytes, SerializeNpy(type, shape, data));
  const absl::Span<const uint8_t> piece(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return WriteFileAtomically(path, {piece});
}

NpyArray TensorToNpy(const Tensor& tensor) {
  NpyArray a;
  a.type = tensor.type;
  a.shape.assign(tensor.shape.begin(), tensor.shape.end());
  a.data.assign(tensor.raw_data, tensor.raw_data + tensor.bytes);
  return a;
}

}  // namespace graft
