#include "plugins/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace graft {
namespace {

// The answer: a status code (0 = OK), the payload's size, the payload
// (work's bytes, or its error message).
struct Header {
  int32_t code;
  uint64_t size;
};

[[noreturn]] void Answer(int fd, const absl::StatusOr<std::string>& result) {
  const std::string payload =
      result.ok() ? *result : std::string(result.status().message());
  const Header header{
      result.ok() ? 0 : static_cast<int32_t>(result.status().code()),
      payload.size()};
  const bool ok = WriteAll(fd, &header, sizeof(header)) &&
                  WriteAll(fd, payload.data(), payload.size());
  // The parent sees the end of the answer now, not after the kernel has
  // torn down this process's memory (exit unmaps before it closes files).
  ::close(fd);
  ::_exit(ok ? 0 : 3);
}

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev)
                           : absl::StrCat("signal ", sig);
}

}  // namespace

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

absl::StatusOr<Bytes> RunInChildProcessMapped(
    absl::FunctionRef<absl::Status(int fd)> work, absl::Duration timeout,
    absl::string_view label) {
  const int fd = ::memfd_create("graft-child-answer", MFD_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat(label, ": memfd_create failed: ", ::strerror(errno)));
  }
  absl::StatusOr<std::string> done = RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> {
        absl::Status s = work(fd);
        if (!s.ok()) return s;
        return std::string();
      },
      timeout, label);
  if (!done.ok()) {
    ::close(fd);
    return done.status();
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return absl::InternalError(
        absl::StrCat(label, ": fstat failed: ", ::strerror(errno)));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return Bytes();
  }
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // The mapping keeps the memory file alive.
  if (data == MAP_FAILED) {
    return absl::InternalError(
        absl::StrCat(label, ": mmap failed: ", ::strerror(errno)));
  }
  std::shared_ptr<const void> owner(
      data, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  return Bytes::View({static_cast<const uint8_t*>(data), size},
                     std::move(owner));
}

absl::StatusOr<std::string> RunInChildProcess(
    absl::FunctionRef<absl::StatusOr<std::string>()> work,
    absl::Duration timeout, absl::string_view label) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat(label, ": pipe failed: ", ::strerror(errno)));
  }
  ::fflush(nullptr);  // Buffered output must not be written twice.
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return absl::InternalError(
        absl::StrCat(label, ": fork failed: ", ::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    Answer(fds[1], work());
  }
  ::close(fds[1]);

  // Read everything the child writes until it closes the pipe, or until
  // the deadline.
  std::string received;
  const absl::Time deadline = absl::Now() + timeout;
  bool timed_out = false;
  char buffer[1 << 16];
  for (;;) {
    const int64_t left_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready =
        ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    received.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  if (timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat(label, ": still running after ",
                     absl::FormatDuration(timeout), "; stopped"));
  }
  if (WIFSIGNALED(status)) {
    return absl::InternalError(absl::StrCat(
        label, ": crashed with ", SignalName(WTERMSIG(status)),
        " (in the vendor's code, run in a child process; Graft is unharmed)"));
  }
  Header header{};
  if (received.size() < sizeof(header)) {
    return absl::InternalError(absl::StrCat(
        label, ": exited with status ",
        WIFEXITED(status) ? WEXITSTATUS(status) : -1, " before answering"));
  }
  std::memcpy(&header, received.data(), sizeof(header));
  if (header.size != received.size() - sizeof(header)) {
    return absl::InternalError(
        absl::StrCat(label, ": its answer was cut short"));
  }
  std::string payload = received.substr(sizeof(header));
  if (header.code != 0) {
    return absl::Status(static_cast<absl::StatusCode>(header.code), payload);
  }
  return payload;
}

}  // namespace graft
