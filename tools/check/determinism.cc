// determinism: the same model compiled twice, in one process and in two,
// gives byte-identical compiled models (the ABI requires it; compile
// caches and reproducible builds rely on it).
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/file_util.h"
#include "tools/check/checks.h"

namespace graft::check {

void RunDeterminismCheck(Subject& s, CheckReport& report) {
  if (!s.Wants("determinism")) return;
  if (s.plugin == nullptr || s.taken.empty()) {
    report.Add({"determinism",
                Outcome::kSkip,
                s.plugin == nullptr
                    ? "the plugin did not load"
                    : "the plugin took no op of the models offered",
                {}});
    return;
  }
  // A few models of different ops: compiles are the slow part.
  constexpr size_t kMaxModels = 4;
  std::set<std::string> ops;
  CheckResult r{"determinism", Outcome::kPass, "", {}};
  size_t checked = 0;
  for (const TakenModel& t : s.taken) {
    if (checked == kMaxModels) break;
    if (!ops.insert(t.catalog_op).second) continue;
    ++checked;
    absl::StatusOr<std::string> twice =
        CompileTwiceInChild(*s.plugin, t.model, s.soc_model, s.options.timeout);
    if (!twice.ok()) {
      r.findings.push_back(absl::StrCat(
          t.name, ": compiling again failed: ", twice.status().message()));
      continue;
    }
    if (!twice->empty()) {
      r.findings.push_back(
          absl::StrCat(t.name, ": compiled twice in one process, ", *twice,
                       " (state kept between compiles?)"));
      continue;
    }
    // In another process too: addresses, time and random ids differ there.
    absl::StatusOr<ApplyOutcome> again =
        ApplyInChild(*s.plugin, t.model, s.soc_model, s.options.timeout);
    absl::StatusOr<std::string> first = ReadFile(t.compiled_path);
    if (!again.ok() || !first.ok()) {
      r.findings.push_back(absl::StrCat(
          t.name, ": compiling again failed: ",
          (!again.ok() ? again.status() : first.status()).message()));
      continue;
    }
    const std::string second(again->compiled.begin(), again->compiled.end());
    if (second != *first) {
      const size_t n = std::min(first->size(), second.size());
      const size_t at =
          std::mismatch(first->begin(), first->begin() + n, second.begin())
              .first -
          first->begin();
      r.findings.push_back(absl::StrCat(
          t.name, ": compiled in two processes, the models (", first->size(),
          " and ", second.size(), " bytes) first differ at byte ", at,
          " (timestamps, addresses or random ids in the bytecode?)"));
    }
  }
  r.outcome = r.findings.empty() ? Outcome::kPass : Outcome::kFail;
  r.summary = absl::StrCat(checked,
                           " model(s) compiled three times (twice in "
                           "one process, once in another)",
                           r.findings.empty() ? ": byte-identical" : "");
  report.Add(std::move(r));
}

}  // namespace graft::check
