// Small facts about flatbuffers' mini-reflection types, shared by the
// loader's verifier (model_verify.cc) and the writer (model_io.cc).
#ifndef GRAFT_CORE_FLATBUFFER_UTIL_H_
#define GRAFT_CORE_FLATBUFFER_UTIL_H_

#include <cstddef>

#include "flatbuffers/flatbuffers.h"

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

}  // namespace graft

#endif  // GRAFT_CORE_FLATBUFFER_UTIL_H_
