#include "tools/flags.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace graft::tools {

FlagParser::FlagParser(std::string usage, std::string description)
    : usage_(std::move(usage)), description_(std::move(description)) {}

void FlagParser::AddBool(absl::string_view name, bool* out,
                         absl::string_view help) {
  flags_.push_back({std::string(name), Kind::kBool, out, std::string(help),
                    *out ? "true" : "false"});
}

void FlagParser::AddString(absl::string_view name, std::string* out,
                           absl::string_view help) {
  flags_.push_back(
      {std::string(name), Kind::kString, out, std::string(help), *out});
}

void FlagParser::AddInt(absl::string_view name, int64_t* out,
                        absl::string_view help) {
  flags_.push_back({std::string(name), Kind::kInt, out, std::string(help),
                    absl::StrCat(*out)});
}

void FlagParser::AddRepeated(absl::string_view name,
                             std::vector<std::string>* out,
                             absl::string_view help) {
  flags_.push_back({std::string(name), Kind::kRepeated, out,
                    absl::StrCat(help, " (repeatable)"), ""});
}

const FlagParser::Flag* FlagParser::Find(absl::string_view name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

absl::Status FlagParser::Assign(const Flag& flag, absl::string_view value) {
  switch (flag.kind) {
    case Kind::kBool:
      if (value == "true" || value == "1") {
        *static_cast<bool*>(flag.out) = true;
      } else if (value == "false" || value == "0") {
        *static_cast<bool*>(flag.out) = false;
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", flag.name, ": '", value,
                         "' is not a boolean (true or false)"));
      }
      return absl::OkStatus();
    case Kind::kString:
      *static_cast<std::string*>(flag.out) = std::string(value);
      return absl::OkStatus();
    case Kind::kRepeated:
      static_cast<std::vector<std::string>*>(flag.out)->emplace_back(value);
      return absl::OkStatus();
    case Kind::kInt:
      if (!absl::SimpleAtoi(value, static_cast<int64_t*>(flag.out))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "flag --", flag.name, ": '", value, "' is not an integer"));
      }
      return absl::OkStatus();
  }
  return absl::InternalError("unreachable flag kind");
}

absl::StatusOr<std::vector<std::string>> FlagParser::Parse(
    absl::Span<const std::string> args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    // "-" alone is a positional (conventionally stdin).
    if (arg.size() < 2 || arg[0] != '-') {
      positional.emplace_back(arg);
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      help_requested_ = true;
      continue;
    }
    if (!absl::StartsWith(arg, "--")) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag ", arg, " (flags are --name)"));
    }
    absl::string_view body = arg.substr(2);
    absl::string_view name = body;
    absl::string_view value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != absl::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    const Flag* flag = Find(name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (!has_value) {
      if (flag->kind == Kind::kBool) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, " needs a value"));
      }
    }
    if (absl::Status s = Assign(*flag, value); !s.ok()) return s;
  }
  return positional;
}

std::string FlagParser::Help() const {
  std::string out = absl::StrCat("usage: ", usage_, "\n");
  if (!description_.empty()) absl::StrAppend(&out, "\n", description_, "\n");
  if (flags_.empty()) return out;
  absl::StrAppend(&out, "\nflags:\n");
  auto line = [&out](std::string left, absl::string_view help) {
    if (left.size() < 24) left.resize(24, ' ');
    absl::StrAppend(&out, left, " ", help, "\n");
  };
  for (const Flag& f : flags_) {
    std::string left = absl::StrCat("  --", f.name);
    if (f.kind == Kind::kString || f.kind == Kind::kRepeated) {
      absl::StrAppend(&left, "=STRING");
    }
    if (f.kind == Kind::kInt) absl::StrAppend(&left, "=N");
    std::string help = f.help;
    if (f.kind != Kind::kBool && !f.default_text.empty()) {
      absl::StrAppend(&help, " (default: ", f.default_text, ")");
    }
    line(std::move(left), help);
  }
  line("  --help", "print this help");
  return out;
}

}  // namespace graft::tools
