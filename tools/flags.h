// FlagParser: the command-line parser of the graft tool's subcommands.
//
// Accepts `--name=value`, `--name value`, boolean `--name` (and
// `--name=true|false`), positional arguments in any position, `--` to end
// flags, and `--help`/`-h`. An unknown flag, a missing or malformed value is
// an error naming the flag. Deliberately tiny: no short-flag bundles, no
// abbreviations, no global registry, so each subcommand owns its flags and a
// test can parse any argument list.
//
// Usage:
//   bool json = false;
//   int64_t subgraph = -1;
//   FlagParser flags("graft inspect MODEL [flags]", "Prints a model.");
//   flags.AddBool("json", &json, "print JSON");
//   flags.AddInt("subgraph", &subgraph, "only this subgraph");
//   absl::StatusOr<std::vector<std::string>> positional = flags.Parse(args);
//   if (flags.help_requested()) { std::cout << flags.Help(); ... }
#ifndef GRAFT_TOOLS_FLAGS_H_
#define GRAFT_TOOLS_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace graft::tools {

class FlagParser {
 public:
  // `usage` is the synopsis line, `description` a paragraph under it; both
  // appear in Help().
  FlagParser(std::string usage, std::string description);

  // Registers a flag writing into `*out` (borrowed; must outlive Parse). The
  // current value of `*out` is the default shown in Help(). Names are given
  // without dashes.
  void AddBool(absl::string_view name, bool* out, absl::string_view help);
  void AddString(absl::string_view name, std::string* out,
                 absl::string_view help);
  void AddInt(absl::string_view name, int64_t* out, absl::string_view help);
  // A flag that may be given several times: each occurrence appends its
  // value to `*out`.
  void AddRepeated(absl::string_view name, std::vector<std::string>* out,
                   absl::string_view help);

  // Parses `args` (without the program and subcommand names) and returns the
  // positional arguments in order. Stops at the first error; flags parsed
  // before it keep their new values. `--help` anywhere sets help_requested()
  // and is otherwise ignored.
  absl::StatusOr<std::vector<std::string>> Parse(
      absl::Span<const std::string> args);

  bool help_requested() const { return help_requested_; }

  // The usage text: synopsis, description and one line per flag.
  std::string Help() const;

 private:
  enum class Kind { kBool, kString, kInt, kRepeated };
  struct Flag {
    std::string name;
    Kind kind;
    void* out;
    std::string help;
    std::string default_text;
  };
  const Flag* Find(absl::string_view name) const;
  static absl::Status Assign(const Flag& flag, absl::string_view value);

  std::string usage_;
  std::string description_;
  std::vector<Flag> flags_;
  bool help_requested_ = false;
};

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_FLAGS_H_
