// Small facts about flatbuffers' mini-reflection types, shared by the
// loader's verifier (model_verify.cc) and the writer (model_io.cc); the one
// safe way to read a flexbuffer from a file (VerifiedFlexbuffer).
#ifndef GRAFT_CORE_FLATBUFFER_UTIL_H_
#define GRAFT_CORE_FLATBUFFER_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/flexbuffers.h"

namespace graft {

// Bytes one element of `type` takes inline in a table or vector: the
// scalar's size, or an offset's for strings, tables and vectors.
inline size_t FlatbufferInlineSize(flatbuffers::ElementaryType type) {
  switch (type) {
    case flatbuffers::ET_UTYPE:
    case flatbuffers::ET_BOOL:
    case flatbuffers::ET_CHAR:
    case flatbuffers::ET_UCHAR:
      return 1;
    case flatbuffers::ET_SHORT:
    case flatbuffers::ET_USHORT:
      return 2;
    case flatbuffers::ET_INT:
    case flatbuffers::ET_UINT:
    case flatbuffers::ET_FLOAT:
      return 4;
    case flatbuffers::ET_LONG:
    case flatbuffers::ET_ULONG:
    case flatbuffers::ET_DOUBLE:
      return 8;
    case flatbuffers::ET_STRING:
    case flatbuffers::ET_SEQUENCE:
      return sizeof(flatbuffers::uoffset_t);
  }
  return 0;
}

// A verified flexbuffer, read from a copy of its bytes followed by a NUL.
// flexbuffers 2.0.8's verifier does not check that a key ends inside the
// buffer (its VerifyKey accepts at the first non-zero byte), while key
// lookups (strcmp), AsString() of a key and ToString() (strlen) read keys
// up to their NUL: over the original bytes, a key at their end is read past
// it. `root` points into `bytes`, whose heap block a move keeps in place.
struct VerifiedFlexbuffer {
  std::vector<uint8_t> bytes;
  flexbuffers::Reference root;
};

// nullopt when `data` is empty or not a valid flexbuffer.
inline std::optional<VerifiedFlexbuffer> VerifyFlexbuffer(
    absl::Span<const uint8_t> data) {
  if (data.empty() ||
      !flexbuffers::VerifyBuffer(data.data(), data.size(), nullptr)) {
    return std::nullopt;
  }
  VerifiedFlexbuffer out;
  out.bytes.reserve(data.size() + 1);
  out.bytes.assign(data.begin(), data.end());
  out.bytes.push_back(0);
  out.root = flexbuffers::GetRoot(out.bytes.data(), data.size());
  return out;
}

}  // namespace graft

#endif  // GRAFT_CORE_FLATBUFFER_UTIL_H_
