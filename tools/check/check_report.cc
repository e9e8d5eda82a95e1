#include "tools/check/check_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tools/json_writer.h"

namespace graft::check {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kWarn:
      return "warn";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kSkip:
      return "skip";
  }
  return "?";
}

void CheckReport::AddContext(std::string key, std::string value) {
  context_.emplace_back(std::move(key), std::move(value));
}

void CheckReport::Add(CheckResult result) {
  results_.push_back(std::move(result));
}

bool CheckReport::failed() const {
  return std::any_of(results_.begin(), results_.end(),
                     [](const auto& r) { return r.outcome == Outcome::kFail; });
}

std::string CheckReport::ReproCommand(const CheckResult& result) const {
  if (!result.repro.empty()) return result.repro;
  return absl::StrCat(command_, " --only=", result.id, " --seed=", seed_);
}

void CheckReport::PrintText(std::ostream& out) const {
  for (const auto& [key, value] : context_) {
    out << key << ": " << value << "\n";
  }
  out << "seed: " << seed_ << "\n\n";
  size_t width = 0;
  for (const CheckResult& r : results_) width = std::max(width, r.id.size());
  int counts[4] = {0, 0, 0, 0};
  for (const CheckResult& r : results_) {
    ++counts[static_cast<int>(r.outcome)];
    out << OutcomeName(r.outcome) << "  " << r.id
        << std::string(width - r.id.size() + 2, ' ') << r.summary << "\n";
    // Passing checks keep to one line; what went wrong is spelled out.
    const size_t shown = r.outcome == Outcome::kPass ? 0 : 20;
    for (size_t i = 0; i < r.findings.size() && i < shown; ++i) {
      out << "        - " << r.findings[i] << "\n";
    }
    if (r.findings.size() > shown && shown > 0) {
      out << "        ... and " << r.findings.size() - shown
          << " more (--json lists them all)\n";
    }
    if (r.outcome == Outcome::kFail) {
      out << "        reproduce: " << ReproCommand(r) << "\n";
    }
  }
  out << "\n"
      << counts[static_cast<int>(Outcome::kPass)] << " passed, "
      << counts[static_cast<int>(Outcome::kWarn)] << " warned, "
      << counts[static_cast<int>(Outcome::kFail)] << " failed, "
      << counts[static_cast<int>(Outcome::kSkip)]
      << " skipped: " << (failed() ? "FAIL" : "PASS") << "\n";
}

void CheckReport::PrintJson(std::ostream& out) const {
  tools::JsonWriter j(/*indent=*/2);
  j.BeginObject();
  j.Key("passed").Bool(!failed());
  j.Key("seed").UInt(seed_);
  j.Key("context").BeginObject();
  for (const auto& [key, value] : context_) j.Key(key).String(value);
  j.EndObject();
  j.Key("checks").BeginArray();
  for (const CheckResult& r : results_) {
    j.BeginObject();
    j.Key("id").String(r.id);
    std::string outcome = OutcomeName(r.outcome);
    if (r.outcome == Outcome::kFail) outcome = "fail";
    j.Key("outcome").String(outcome);
    j.Key("summary").String(r.summary);
    j.Key("findings").BeginArray();
    for (const std::string& f : r.findings) j.String(f);
    j.EndArray();
    if (r.outcome == Outcome::kFail) j.Key("reproduce").String(ReproCommand(r));
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  out << j.output() << "\n";
}

}  // namespace graft::check
