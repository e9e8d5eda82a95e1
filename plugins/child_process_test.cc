#include "plugins/child_process.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(ChildProcessTest, ReturnsWhatTheChildReturns) {
  // Larger than a pipe's buffer, so the parent must read while the child
  // writes.
  const std::string big(3 << 20, 'x');
  auto r = RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> { return big; }, absl::Seconds(60),
      "test");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, big);
}

TEST(ChildProcessTest, MappedAnswerIsWhatTheChildWrote) {
  const std::string big(5 << 20, 'y');
  auto r = RunInChildProcessMapped(
      [&](int fd) -> absl::Status {
        if (!WriteAll(fd, big.data(), big.size())) {
          return absl::InternalError("write failed");
        }
        return absl::OkStatus();
      },
      absl::Seconds(60), "test");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), big.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(r->data()), r->size()),
            big);
}

TEST(ChildProcessTest, MappedAnswerCarriesTheChildsErrorAndCrash) {
  auto error = RunInChildProcessMapped(
      [](int) -> absl::Status { return absl::UnavailableError("no NPU"); },
      absl::Seconds(60), "test");
  EXPECT_EQ(error.status().code(), absl::StatusCode::kUnavailable);
  auto crash = RunInChildProcessMapped(
      [](int) -> absl::Status {
        ::raise(SIGSEGV);
        return absl::OkStatus();
      },
      absl::Seconds(60), "test");
  EXPECT_NE(crash.status().message().find("crashed with SIG"),
            std::string::npos)
      << crash.status();
}

TEST(ChildProcessTest, PassesTheChildsErrorThrough) {
  auto r = RunInChildProcess(
      []() -> absl::StatusOr<std::string> {
        return absl::NotFoundError("vendor: no such SoC");
      },
      absl::Seconds(60), "test");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(r.status().message(), "vendor: no such SoC");
}

TEST(ChildProcessTest, ACrashIsAnErrorNamingTheSignal) {
  auto r = RunInChildProcess(
      []() -> absl::StatusOr<std::string> {
        ::raise(SIGSEGV);
        return std::string("unreachable");
      },
      absl::Seconds(60), "acme plugin: compile");
  ASSERT_FALSE(r.ok());
  // SIGSEGV; under ASan, whose handler aborts, SIGABRT.
  EXPECT_NE(r.status().message().find("acme plugin: compile: crashed with SIG"),
            std::string::npos)
      << r.status();
}

TEST(ChildProcessTest, AnExitWithoutAnswerIsAnError) {
  auto r = RunInChildProcess(
      []() -> absl::StatusOr<std::string> {
        ::_exit(0);
        return std::string("unreachable");
      },
      absl::Seconds(60), "acme plugin: compile");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("exited with status 0 before answering"),
            std::string::npos)
      << r.status();
}

TEST(ChildProcessTest, AHangIsStoppedAtTheTimeLimit) {
  auto r = RunInChildProcess(
      []() -> absl::StatusOr<std::string> {
        for (;;) ::pause();
      },
      absl::Milliseconds(200), "acme plugin: compile");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded)
      << r.status();
}

}  // namespace
}  // namespace graft
