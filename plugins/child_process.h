// Running untrusted vendor code in a child process, so that its crash, its
// exit() or its hang is an error naming the vendor, never the end of Graft.
//
//   absl::StatusOr<std::string> bytes = RunInChildProcess(
//       [&]() -> absl::StatusOr<std::string> { return CompileAndEncode(); },
//       absl::Minutes(10), "IntelOpenVINO LiteRT plugin: compile");
//
// The child is a fork() of the caller: it sees the caller's memory as it was
// (loaded libraries, plugin instances), runs `work`, sends back the bytes it
// returns (or its error) through a pipe and ends with _exit, so nothing it
// changes reaches the caller. Call it where the process has no other
// threads that hold locks `work` needs (fork copies only the calling
// thread).
#ifndef GRAFT_PLUGINS_CHILD_PROCESS_H_
#define GRAFT_PLUGINS_CHILD_PROCESS_H_

#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/bytes.h"

namespace graft {

// What `work` returned in the child: its bytes, or its own error (code and
// message, unchanged). The child's failures are errors prefixed with
// `label`: killed by a signal ("crashed with SIGSEGV"), exited without
// answering ("exited with status 0 before answering"), or still running
// after `timeout` (then killed; DeadlineExceeded).
absl::StatusOr<std::string> RunInChildProcess(
    absl::FunctionRef<absl::StatusOr<std::string>()> work,
    absl::Duration timeout, absl::string_view label);

// As RunInChildProcess, for a large answer: `work` writes it to `fd`, a
// memory file, and returns OK; the caller gets the bytes mapped read-only
// (no copy through a pipe), kept alive by the returned Bytes.
absl::StatusOr<Bytes> RunInChildProcessMapped(
    absl::FunctionRef<absl::Status(int fd)> work, absl::Duration timeout,
    absl::string_view label);

// Writes all of `data` to `fd`, retrying short writes; false on error.
bool WriteAll(int fd, const void* data, size_t size);

}  // namespace graft

#endif  // GRAFT_PLUGINS_CHILD_PROCESS_H_
