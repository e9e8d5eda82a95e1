#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace graft {

absl::StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(
    const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    auto msg = absl::StrCat(path, ": cannot open: ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg)
                         : absl::PermissionDeniedError(msg);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return absl::InternalError(
        absl::StrCat(path, ": fstat failed: ", std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return std::shared_ptr<const MappedFile>(
        new MappedFile(path, -1, nullptr, 0));
  }
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) {
    int err = errno;
    ::close(fd);
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": mmap of ", size, " bytes failed: ",
                     std::strerror(err)));
  }
  return std::shared_ptr<const MappedFile>(
      new MappedFile(path, fd, static_cast<const uint8_t*>(addr), size));
}

void MappedFile::Advise(Access access) const {
  if (data_ == nullptr) return;
  // Only a hint: a kernel that ignores it costs speed, not correctness.
  ::madvise(const_cast<uint8_t*>(data_), size_,
            access == Access::kRandom ? MADV_RANDOM : MADV_NORMAL);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace graft
