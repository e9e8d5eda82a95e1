// MappedFile: a read-only memory mapping of a whole file (RAII).
#ifndef GRAFT_CORE_MAPPED_FILE_H_
#define GRAFT_CORE_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace graft {

class MappedFile {
 public:
  // Maps `path` read-only (MAP_PRIVATE). An empty file maps to an empty span.
  // Errors name the path and the failing system call.
  static absl::StatusOr<std::shared_ptr<const MappedFile>> Open(
      const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  absl::Span<const uint8_t> span() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Read-ahead hint for the mapping. Loading touches only the flatbuffer's
  // tables and a length word in front of each weight buffer; with the
  // kernel's default read-around each such touch can pull megabytes from disk,
  // so loading maps kRandom and switches to kNormal once the model is built
  // (kernels then stream through weights).
  enum class Access { kNormal, kRandom };
  void Advise(Access access) const;

  // The open descriptor behind the mapping (kept open so vendors can map
  // ranges of the same file); -1 for an empty file.
  int fd() const { return fd_; }

 private:
  MappedFile(std::string path, int fd, const uint8_t* data, size_t size)
      : path_(std::move(path)), fd_(fd), data_(data), size_(size) {}

  std::string path_;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace graft

#endif  // GRAFT_CORE_MAPPED_FILE_H_
