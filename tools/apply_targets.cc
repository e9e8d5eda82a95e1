#include "tools/apply_targets.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace graft::tools {
namespace {

bool IsSafeChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

constexpr const char* kPlaceholders[] = {"model", "vendor", "soc_model",
                                         "target"};

std::string ModeSuffix(ApplyMode mode) {
  switch (mode) {
    case ApplyMode::kPartition: return ".partitioned.tflite";
    case ApplyMode::kCompile: return ".modules";
    case ApplyMode::kNoop: return ".noop.tflite";
    default: return ".compiled.tflite";
  }
}

}  // namespace

std::string ApplyTarget::Name() const {
  return soc_model.empty() ? vendor : absl::StrCat(vendor, ":", soc_model);
}

absl::StatusOr<std::vector<ApplyTarget>> ParseTargets(
    absl::Span<const std::string> occurrences) {
  std::vector<ApplyTarget> targets;
  for (const std::string& occurrence : occurrences) {
    std::vector<std::string> specs = absl::StrSplit(occurrence, ',');
    for (const std::string& spec : specs) {
      auto bad = [&](absl::string_view why) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--target '", spec, "': ", why,
            " (expected VENDOR[:SOC_MODEL], e.g. xnnpack or "
            "IntelOpenVINO:LNL; SOC_MODEL 'all' for each one the plugin "
            "lists)"));
      };
      if (spec.empty()) return bad("empty target");
      std::vector<std::string> parts = absl::StrSplit(spec, ':');
      if (parts.size() > 2) return bad("more than one ':'");
      ApplyTarget t;
      t.vendor = parts[0];
      if (t.vendor.empty()) return bad("no vendor before ':'");
      if (!std::all_of(t.vendor.begin(), t.vendor.end(), IsSafeChar)) {
        return bad("a vendor name holds only letters, digits, '.', '_', '-'");
      }
      if (parts.size() == 2) {
        t.soc_model = parts[1];
        if (t.soc_model.empty()) return bad("no SoC model after ':'");
      }
      if (std::find(targets.begin(), targets.end(), t) != targets.end()) {
        return bad("given twice");
      }
      targets.push_back(std::move(t));
    }
  }
  if (targets.empty()) {
    return absl::InvalidArgumentError("--target: no target given");
  }
  return targets;
}

std::string SafeFileNamePart(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (!IsSafeChar(c)) c = '_';
  }
  return out;
}

absl::Status CheckOutputPattern(const std::string& output) {
  for (size_t open = output.find('{'); open != std::string::npos;
       open = output.find('{', open + 1)) {
    const size_t close = output.find('}', open);
    const std::string name =
        close == std::string::npos ? output.substr(open)
                                   : output.substr(open + 1, close - open - 1);
    if (close == std::string::npos ||
        std::find(std::begin(kPlaceholders), std::end(kPlaceholders), name) ==
            std::end(kPlaceholders)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "-o '", output, "': unknown placeholder '{", name,
          close == std::string::npos ? "" : "}",
          "' (expected {model}, {vendor}, {soc_model} or {target})"));
    }
  }
  return absl::OkStatus();
}

std::string TargetOutputPath(const std::string& output,
                             const std::string& model_path,
                             const std::string& vendor,
                             const std::string& soc_model, ApplyMode mode) {
  const std::filesystem::path model(model_path);
  std::string stem = model.filename().string();
  if (absl::EndsWith(stem, ".tflite")) stem.resize(stem.size() - 7);
  const std::string safe_vendor = SafeFileNamePart(vendor);
  const std::string safe_soc = SafeFileNamePart(soc_model);
  const std::string target = absl::StrCat(safe_vendor, "_", safe_soc);
  if (output.find('{') != std::string::npos) {
    std::string path;
    for (size_t i = 0; i < output.size();) {
      const size_t close = output.find('}', i);
      if (output[i] == '{' && close != std::string::npos) {
        const std::string name = output.substr(i + 1, close - i - 1);
        if (name == "model") path += stem;
        if (name == "vendor") path += safe_vendor;
        if (name == "soc_model") path += safe_soc;
        if (name == "target") path += target;
        i = close + 1;
      } else {
        path += output[i++];
      }
    }
    return path;
  }
  const std::string name =
      absl::StrCat(stem, "_", target, ModeSuffix(mode));
  const std::filesystem::path dir =
      output.empty() ? model.parent_path() : std::filesystem::path(output);
  return (dir / name).string();
}

}  // namespace graft::tools
