#include "core/file_util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace graft {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

absl::Status ErrnoStatus(int err, std::string message) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(std::move(message));
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(std::move(message));
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(std::move(message));
    default:
      return absl::InternalError(std::move(message));
  }
}

// Writes all of `data`, resuming after short writes and EINTR. Linux caps a
// single write() at about 2 GiB, hence the chunking.
bool WriteAll(int fd, absl::Span<const uint8_t> data, int* err) {
  constexpr size_t kMaxChunk = size_t{1} << 30;
  const uint8_t* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, std::min(left, kMaxChunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// Removes the temporary file unless released: every early return below
// leaves `path` untouched and no stray file behind.
class TempFileGuard {
 public:
  TempFileGuard(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~TempFileGuard() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;

  // Closes the descriptor, reporting the error (close can surface delayed
  // write errors on some file systems).
  bool Close(int* err) {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) {
      *err = errno;
      return false;
    }
    return true;
  }
  void Release() { path_.clear(); }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

absl::Status WriteFileAtomically(
    const std::string& path,
    absl::Span<const absl::Span<const uint8_t>> pieces,
    Durability durability) {
  if (path.empty() || path.back() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "': not a file path"));
  }
  // Renaming over a device, pipe or directory would replace it with a plain
  // file (think /dev/null); only regular files are replaced.
  struct stat existing;
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": exists and is not a regular file; refusing to replace it"));
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty()) dir = "/";
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);

  // Keep the permissions of a file we replace; a new file gets the usual
  // 0644 rather than mkstemp's 0600.
  mode_t mode = 0644;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
    }
    mode = st.st_mode & 07777;
  }

  // A dot-prefixed name keeps the temporary out of casual directory
  // listings and globs such as *.tflite.
  std::string tmp = absl::StrCat(dir, "/.", base, ".tmp.XXXXXX");
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return ErrnoStatus(
        err, absl::StrCat(path, ": cannot create a temporary file in '", dir,
                          "': ", ErrnoText(err)));
  }
  TempFileGuard guard(fd, tmp);
  int err = 0;
  for (absl::Span<const uint8_t> piece : pieces) {
    if (!WriteAll(fd, piece, &err)) {
      return ErrnoStatus(err, absl::StrCat(path, ": write to '", tmp,
                                           "' failed: ", ErrnoText(err)));
    }
  }
  if (::fchmod(fd, mode) != 0) {
    err = errno;
    return ErrnoStatus(err, absl::StrCat(path, ": fchmod of '", tmp,
                                         "' failed: ", ErrnoText(err)));
  }
  // Without the fsync a crash shortly after the rename can leave an empty or
  // partial file under the final name on ext4/xfs with delayed allocation.
  if (durability == Durability::kDurable && ::fsync(fd) != 0) {
    err = errno;
    return ErrnoStatus(err, absl::StrCat(path, ": fsync of '", tmp,
                                         "' failed: ", ErrnoText(err)));
  }
  if (!guard.Close(&err)) {
    return ErrnoStatus(err, absl::StrCat(path, ": close of '", tmp,
                                         "' failed: ", ErrnoText(err)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    return ErrnoStatus(err, absl::StrCat(path, ": rename from '", tmp,
                                         "' failed: ", ErrnoText(err)));
  }
  guard.Release();
  if (durability != Durability::kDurable) return absl::OkStatus();
  // Persist the directory entry too. The new file is already in place, so a
  // failure here cannot be undone and is not reported.
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return ErrnoStatus(err,
                       absl::StrCat(path, ": cannot open: ", ErrnoText(err)));
  }
  std::string contents;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    contents.reserve(static_cast<size_t>(st.st_size));
  }
  char chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err,
                         absl::StrCat(path, ": read failed: ", ErrnoText(err)));
    }
    contents.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return contents;
}

}  // namespace graft
