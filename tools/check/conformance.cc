#include "tools/check/conformance.h"

#include <filesystem>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "plugins/child_process.h"
#include "tools/check/checks.h"
#include "tools/check/raw_abi.h"

namespace graft::check {

bool Subject::Wants(absl::string_view id) const {
  if (options.only.empty()) return true;
  for (const std::string& o : options.only) {
    if (id == o || (absl::StartsWith(id, o) && id.size() > o.size() &&
                    id[o.size()] == '.')) {
      return true;
    }
  }
  return false;
}

std::string Subject::Repro(const std::string& extra) const {
  return absl::StrCat(options.command, extra);
}

CheckReport RunConformance(const CheckOptions& options) {
  CheckReport report(options.command, options.seed);
  Subject s(options);
  const std::string plugin_file =
      std::filesystem::path(options.plugin_path).filename().string();
  const std::string dispatch_file =
      std::filesystem::path(options.dispatch_path).filename().string();
  s.litert_plugin = absl::StartsWith(plugin_file, "libLiteRtCompilerPlugin");
  s.litert_dispatch = absl::StartsWith(dispatch_file, "libLiteRtDispatch");
  report.AddContext("plugin", options.plugin_path);
  if (!options.dispatch_path.empty()) {
    report.AddContext("dispatch", options.dispatch_path);
  }
  if (options.precision != FloatPrecision::kFloat32) {
    report.AddContext("precision",
                      absl::StrCat(FloatPrecisionName(options.precision),
                                   " (float32 outputs compared under its "
                                   "tolerance)"));
  }
  if (!s.scratch.ok()) {
    report.Add(
        {"setup", Outcome::kFail, "cannot make a scratch directory", {}});
    return report;
  }

  RunAbiChecks(s, report);
  if (s.plugin != nullptr) {
    const PluginInfo& info = s.plugin->info();
    s.soc_model =
        options.soc_model.empty() ? info.soc_models[0] : options.soc_model;
    report.AddContext(
        "vendor",
        absl::StrCat(info.vendor, " ", info.plugin_version, " (",
                     info.abi == PluginInfo::Abi::kLiteRt ? "LiteRT" : "Graft",
                     " ABI), SoC model ", s.soc_model));
  }
  RunPluginIdentityCheck(s, report);
  RunPromiseChecks(s, report);
  RunStampAndDispatchIdentityChecks(s, report);
  RunDeterminismCheck(s, report);
  RunMisuseChecks(s, report);
  RunDispatchRobustnessChecks(s, report);
  // Last, the plugin's destroy, in a child: a crash there is a finding,
  // and this process keeps its own instance, reachable, until it exits.
  if (s.plugin != nullptr) {
    absl::StatusOr<std::string> destroyed = RunInChildProcess(
        [&]() -> absl::StatusOr<std::string> {
          s.plugin.reset();
          return std::string();
        },
        options.timeout, "plugin: destroy");
    if (s.Wants("abi.plugin.destroy")) {
      if (destroyed.ok()) {
        report.Add({"abi.plugin.destroy",
                    Outcome::kPass,
                    "destroy ends the instance",
                    {}});
      } else {
        report.Add({"abi.plugin.destroy",
                    Outcome::kFail,
                    "destroy does not return",
                    {std::string(destroyed.status().message())}});
      }
    }
    static auto* kept = new std::vector<std::unique_ptr<CompilerPlugin>>;
    kept->push_back(std::move(s.plugin));
  }
  return report;
}

}  // namespace graft::check
