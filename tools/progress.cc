#include "tools/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace graft::tools {
namespace {

void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;  // A display, not data: give up quietly.
    done += static_cast<size_t>(n);
  }
}

}  // namespace

ProgressLine::ProgressLine(int fd, std::string prefix)
    : fd_(fd), prefix_(std::move(prefix)), active_(::isatty(fd) == 1) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Update(absl::string_view text, bool force) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && shown_ && now - last_ < std::chrono::milliseconds(50)) return;
  last_ = now;
  std::string line = absl::StrCat(prefix_, text, "...");
  // A line longer than the terminal wraps, and "\r" then rewrites only its
  // last row: cut it to the width.
  struct winsize ws;
  if (::ioctl(fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 &&
      line.size() >= ws.ws_col) {
    line.resize(ws.ws_col - 1);
  }
  WriteAll(fd_, absl::StrCat("\r", line, "\033[K"));
  shown_ = true;
}

void ProgressLine::Clear() {
  if (!active_ || !shown_) return;
  WriteAll(fd_, "\r\033[K");
  shown_ = false;
}

}  // namespace graft::tools
