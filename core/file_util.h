// Whole-file reads and atomic whole-file writes.
#ifndef GRAFT_CORE_FILE_UTIL_H_
#define GRAFT_CORE_FILE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace graft {

// How far a write survives a crash.
enum class Durability {
  // Atomic against the writer's own failure (a crash, a kill, a full disk):
  // readers see the old file or the whole new one. As compilers and linkers
  // write their outputs; after a power loss or kernel crash the file may be
  // empty or old.
  kAtomic,
  // Also flushed to disk (fsync of the file before the rename and of the
  // directory after it), so it survives a power loss: for files read later
  // without their writer watching, such as a compile cache on a device.
  kDurable,
};

// Writes the concatenation of `pieces` to `path` atomically: the bytes go to
// a fresh temporary file in the same directory (so the final rename cannot
// cross file systems), which is renamed over `path` (flushed to disk first
// when `durability` says so). Readers see either the old file or the
// complete new one, never a partial write. On any error `path` is untouched, the temporary file is
// removed and the message names the path and the failing system call.
//
// The pieces are written in order without being copied, so callers can
// stream large images (a flatbuffer followed by weights still in a mapped
// file) without assembling them in memory. The new file gets mode 0644
// (less the umask), not mkstemp's 0600.
absl::Status WriteFileAtomically(
    const std::string& path,
    absl::Span<const absl::Span<const uint8_t>> pieces,
    Durability durability = Durability::kDurable);

// Reads the whole of `path`. Errors name the path: NotFound when it does not
// exist, otherwise the failing system call.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace graft

#endif  // GRAFT_CORE_FILE_UTIL_H_
