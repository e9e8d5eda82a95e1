// CheckReport: what `graft check` found, check by check, as a readable
// report (each failure with the command that reproduces it) or JSON.
#ifndef GRAFT_TOOLS_CHECK_CHECK_REPORT_H_
#define GRAFT_TOOLS_CHECK_CHECK_REPORT_H_

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace graft::check {

enum class Outcome { kPass, kWarn, kFail, kSkip };

// "pass", "warn", "FAIL", "skip".
const char* OutcomeName(Outcome outcome);

// One check: an id that --only takes ("abi.plugin.exports",
// "promise.ops"), its outcome, one line of summary and, for warnings and
// failures, one line per finding.
struct CheckResult {
  CheckResult() = default;
  CheckResult(std::string id, Outcome outcome, std::string summary,
              std::vector<std::string> findings = {})
      : id(std::move(id)),
        outcome(outcome),
        summary(std::move(summary)),
        findings(std::move(findings)) {}

  std::string id;
  Outcome outcome = Outcome::kPass;
  std::string summary;
  std::vector<std::string> findings;
  // The command that reruns just this (failed) check; "" for the default
  // `graft check ... --only=<id>` the report prints.
  std::string repro;
};

class CheckReport {
 public:
  // `command` is the `graft check` command line up to --only/--seed, e.g.
  // "graft check --plugin=P --dispatch=D": reproduction lines extend it.
  CheckReport(std::string command, unsigned seed)
      : command_(std::move(command)), seed_(seed) {}

  // Context lines printed at the top ("plugin: example 1.0.0 (Graft ABI
  // 1.1)").
  void AddContext(std::string key, std::string value);
  void Add(CheckResult result);

  bool failed() const;
  const std::vector<CheckResult>& results() const { return results_; }
  // The reproduction command of `result`.
  std::string ReproCommand(const CheckResult& result) const;

  void PrintText(std::ostream& out) const;
  void PrintJson(std::ostream& out) const;

 private:
  std::string command_;
  unsigned seed_;
  std::vector<std::pair<std::string, std::string>> context_;
  std::vector<CheckResult> results_;
};

}  // namespace graft::check

#endif  // GRAFT_TOOLS_CHECK_CHECK_REPORT_H_
