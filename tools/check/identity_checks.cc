// identity.*: who the plugin says it is, what its stamps say, and whether
// the dispatch library agrees.
#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/compiled_format.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "dispatch/litert_dispatch_library.h"
#include "dispatch/vendor_dispatch.h"
#include "plugins/child_process.h"
#include "tools/check/checks.h"

namespace graft::check {
namespace {

std::string Normalized(std::string s) {
  s = absl::AsciiStrToLower(s);
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  return s;
}

}  // namespace

void RunPluginIdentityCheck(Subject& s, CheckReport& report) {
  if (!s.Wants("identity.plugin")) return;
  if (s.plugin == nullptr) {
    report.Add(
        {"identity.plugin", Outcome::kSkip, "the plugin did not load", {}});
    return;
  }
  const PluginInfo& info = s.plugin->info();
  CheckResult r{"identity.plugin", Outcome::kPass, "", {}};
  std::vector<std::string> warnings;
  if (info.vendor.empty()) r.findings.push_back("the vendor name is empty");
  if (info.plugin_version.empty() && info.abi == PluginInfo::Abi::kGraft) {
    r.findings.push_back(
        "the plugin version is empty (compile caches key "
        "on it; set it, e.g. \"1.0.0\")");
  } else if (info.plugin_version.empty()) {
    warnings.push_back(
        "reports no SDK version, which Graft records as its "
        "plugin version and keys compile caches on");
  }
  std::set<std::string> seen;
  for (const std::string& soc : info.soc_models) {
    if (soc.empty()) r.findings.push_back("a SoC model name is empty");
    if (!seen.insert(soc).second) {
      r.findings.push_back(absl::StrCat("SoC model '", soc, "' listed twice"));
    }
  }
  if (info.soc_models.empty()) r.findings.push_back("no SoC models listed");
  if (info.abi == PluginInfo::Abi::kGraft &&
      info.bytecode_format_version == 0) {
    r.findings.push_back(
        "bytecode_format_version is 0 (unset): every stamp repeats it and "
        "dispatch libraries state the versions they run");
  }
  if (info.hardware_kinds == 0) {
    warnings.push_back(
        "hardware_kinds is 0: vendor priority cannot tell an "
        "accelerator from a CPU backend");
  }
  // The SoC model compiled for must be one the plugin accepts.
  absl::Status compat =
      RunInChildProcess(
          [&]() -> absl::StatusOr<std::string> {
            if (absl::Status st = s.plugin->CheckCompatibility(s.soc_model);
                !st.ok()) {
              return st;
            }
            return std::string();
          },
          s.options.timeout, "plugin: check_compatibility")
          .status();
  if (!compat.ok()) {
    r.findings.push_back(absl::StrCat("refuses its own SoC model '",
                                      s.soc_model, "': ", compat.message()));
  }
  r.summary =
      absl::StrCat("vendor ", info.vendor, " ", info.plugin_version,
                   ", SoC models ", absl::StrJoin(info.soc_models, ", "));
  if (info.abi == PluginInfo::Abi::kGraft) {
    absl::StrAppend(&r.summary, ", bytecode format v",
                    info.bytecode_format_version);
  }
  if (!r.findings.empty()) {
    r.outcome = Outcome::kFail;
  } else if (!warnings.empty()) {
    r.outcome = Outcome::kWarn;
  }
  r.findings.insert(r.findings.end(), warnings.begin(), warnings.end());
  report.Add(std::move(r));
}

void RunStampAndDispatchIdentityChecks(Subject& s, CheckReport& report) {
  const bool want_stamp = s.Wants("identity.stamp");
  const bool want_dispatch =
      s.Wants("identity.dispatch") && !s.options.dispatch_path.empty();
  if (!want_stamp && !want_dispatch) return;
  if (s.plugin == nullptr || s.taken.empty()) {
    const std::string why = s.plugin == nullptr
                                ? "the plugin did not load"
                                : "the plugin took no op of the models offered";
    if (want_stamp) {
      if (!s.stamp_errors.empty()) {
        report.Add({"identity.stamp", Outcome::kFail,
                    "compiles return malformed stamps", s.stamp_errors});
      } else {
        report.Add({"identity.stamp", Outcome::kSkip, why, {}});
      }
    }
    if (want_dispatch) {
      report.Add({"identity.dispatch", Outcome::kSkip, why, {}});
    }
    return;
  }
  const PluginInfo& info = s.plugin->info();
  absl::StatusOr<Model> compiled = LoadModel(s.taken[0].compiled_path);
  if (!compiled.ok()) {
    report.Add({"identity.stamp",
                Outcome::kFail,
                "compiled model unreadable",
                {std::string(compiled.status().message())}});
    return;
  }
  absl::StatusOr<Manifest> manifest = ReadManifest(*compiled);
  const ManifestVendor* mv =
      manifest.ok() ? manifest->Find(info.vendor) : nullptr;
  if (want_stamp) {
    CheckResult r{"identity.stamp", Outcome::kPass, "", s.stamp_errors};
    if (mv == nullptr) {
      r.findings.push_back(absl::StrCat(
          "the compiled model's manifest has no entry for vendor '",
          info.vendor, "'"));
    } else if (info.abi == PluginInfo::Abi::kLiteRt) {
      absl::StatusOr<LiteRtStamp> stamp = ReadLiteRtStamp(*compiled);
      if (!stamp.ok()) {
        r.findings.push_back(std::string(stamp.status().message()));
      } else if (stamp->soc_manufacturer != info.vendor ||
                 stamp->soc_model.empty()) {
        r.findings.push_back(
            absl::StrCat("LiteRtStamp says '", stamp->soc_manufacturer, "' / '",
                         stamp->soc_model, "' for manufacturer ", info.vendor));
      }
    } else if (mv->bytecode_format_version != info.bytecode_format_version ||
               GRAFT_ABI_VERSION_GET_MAJOR(mv->compiler_abi_version) !=
                   GRAFT_ABI_VERSION_MAJOR) {
      r.findings.push_back(absl::StrCat(
          "the manifest records bytecode format v", mv->bytecode_format_version,
          " and ABI ", mv->compiler_abi_version, "; the plugin says v",
          info.bytecode_format_version));
    }
    r.outcome = r.findings.empty() ? Outcome::kPass : Outcome::kFail;
    r.summary =
        r.findings.empty()
            ? absl::StrCat("every field of the stamps of ", s.taken.size(),
                           " compile(s) present and consistent with the "
                           "plugin (vendor, plugin version, SoC model, ABI "
                           "and bytecode format version)")
            : "stamps incomplete or inconsistent";
    report.Add(std::move(r));
  }
  if (!want_dispatch) return;
  const std::string path = s.options.dispatch_path;
  const bool litert = s.litert_dispatch;
  const ManifestVendor entry = mv != nullptr ? *mv : ManifestVendor{};
  absl::StatusOr<std::string> answer = RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> {
        if (litert) {
          auto lib = LiteRtDispatchLibrary::Load(path);
          if (!lib.ok()) return lib.status();
          return (*lib)->vendor_id();
        }
        auto lib = DispatchLibrary::Load(path);
        if (!lib.ok()) return lib.status();
        const DispatchInfo& d = (*lib)->info();
        if (d.vendor != info.vendor) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the dispatch library's vendor is '", d.vendor,
              "', the plugin's '", info.vendor,
              "': they must be equal (the stamp names the library)"));
        }
        if (info.bytecode_format_version < d.min_bytecode_format_version ||
            info.bytecode_format_version > d.max_bytecode_format_version) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the plugin emits bytecode format v",
              info.bytecode_format_version, ", the dispatch library runs v",
              d.min_bytecode_format_version, "-",
              d.max_bytecode_format_version));
        }
        if (absl::Status st = (*lib)->CheckStamp(entry); !st.ok()) return st;
        return d.vendor;
      },
      s.options.timeout, "dispatch: identity and stamp");
  if (!answer.ok()) {
    report.Add({"identity.dispatch",
                Outcome::kFail,
                "the dispatch library does not match the plugin's stamp",
                {std::string(answer.status().message())}});
  } else if (litert && Normalized(*answer) != Normalized(info.vendor)) {
    report.Add({"identity.dispatch",
                Outcome::kWarn,
                absl::StrCat("LiteRT vendor id '", *answer,
                             "' differs from the plugin's manufacturer '",
                             info.vendor, "'"),
                {"Graft finds a LiteRT dispatch library by the stamp's "
                 "manufacturer: name the file libLiteRtDispatch_<Manufacturer>"
                 ".so"}});
  } else {
    report.Add({"identity.dispatch",
                Outcome::kPass,
                absl::StrCat("vendor ", *answer,
                             " runs the plugin's bytecode and accepts its "
                             "stamp"),
                {}});
  }
}

}  // namespace graft::check
