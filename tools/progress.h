// ProgressLine: a one-line progress display for long work (apply, on-device
// compile, benchmark runs) on a terminal. Each Update rewrites the line in
// place ("\r", the text cut to the terminal's width, erase to the end of
// the line); Clear erases it, so the report printed afterwards starts on a
// clean line. When the stream is not a terminal (a pipe, a file, a CI log)
// it writes nothing at all.
//
// Thread-safety: one thread at a time.
#ifndef GRAFT_TOOLS_PROGRESS_H_
#define GRAFT_TOOLS_PROGRESS_H_

#include <chrono>
#include <string>

#include "absl/strings/string_view.h"

namespace graft::tools {

class ProgressLine {
 public:
  // Writes to file descriptor `fd` (stderr in the tool), each line starting
  // with `prefix` ("graft apply: "), when `fd` is a terminal.
  ProgressLine(int fd, std::string prefix);
  // Clears the line.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // False when `fd` is not a terminal: Update and Clear do nothing.
  bool active() const { return active_; }

  // Shows `text`. Updates closer than 50 ms to the last one shown are
  // skipped unless `force` (a new step should always show; a counter
  // ticking every few microseconds need not).
  void Update(absl::string_view text, bool force = true);
  void Clear();

 private:
  int fd_;
  std::string prefix_;
  bool active_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_PROGRESS_H_
