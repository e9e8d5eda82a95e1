// abi.*: what the library files export and need, their ABI version and
// struct sizes, and whether the host can load them at all.
#include <algorithm>
#include <filesystem>
#include <initializer_list>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "dispatch/litert_dispatch_abi.h"
#include "dispatch/litert_dispatch_library.h"
#include "dispatch/vendor_dispatch.h"
#include "plugins/child_process.h"
#include "plugins/litert_compiler_abi.h"
#include "tools/check/checks.h"
#include "tools/check/elf_dynamic.h"
#include "tools/check/raw_abi.h"

namespace graft::check {
namespace {

std::string Version(uint32_t packed) {
  return absl::StrCat(GRAFT_ABI_VERSION_GET_MAJOR(packed), ".",
                      GRAFT_ABI_VERSION_GET_MINOR(packed));
}

// When the child that asks the library could not answer: each wanted check
// of `ids` fails with why.
void ReportUnasked(const Subject& s, CheckReport& report,
                   std::initializer_list<const char*> ids,
                   const absl::Status& why) {
  for (const char* id : ids) {
    if (s.Wants(id)) {
      report.Add({id,
                  Outcome::kFail,
                  "could not be asked",
                  {std::string(why.message())}});
    }
  }
}

// `id` (abi.plugin.version, abi.dispatch.version): what `function` answered,
// `version`, against this Graft's ABI major; `fix` ends the finding.
void ReportAbiVersion(const Subject& s, CheckReport& report, const char* id,
                      const char* function, uint32_t version,
                      absl::string_view pass_detail, absl::string_view fix) {
  if (!s.Wants(id)) return;
  if (GRAFT_ABI_VERSION_GET_MAJOR(version) != GRAFT_ABI_VERSION_MAJOR) {
    report.Add({id,
                Outcome::kFail,
                absl::StrCat("built for Graft ABI ", Version(version)),
                {absl::StrCat(function, " says ", Version(version),
                              "; this Graft speaks ", GRAFT_ABI_VERSION_MAJOR,
                              ".x", fix)}});
  } else {
    report.Add({id,
                Outcome::kPass,
                absl::StrCat("Graft ABI ", Version(version), pass_detail),
                {}});
  }
}

// abi.<kind>.exports and abi.<kind>.needed from the ELF file itself.
void CheckElf(const Subject& s, const std::string& kind,
              const std::string& path, const ExportList& exports,
              bool litert_plugin, CheckReport& report) {
  const std::string exports_id = absl::StrCat("abi.", kind, ".exports");
  const std::string needed_id = absl::StrCat("abi.", kind, ".needed");
  absl::StatusOr<ElfDynamic> elf = ReadElfDynamic(path);
  if (!elf.ok()) {
    for (const std::string& id : {exports_id, needed_id}) {
      if (s.Wants(id)) {
        report.Add({id,
                    Outcome::kFail,
                    "cannot read the library file",
                    {std::string(elf.status().message())}});
      }
    }
    return;
  }
  if (s.Wants(exports_id)) {
    CheckResult r{exports_id, Outcome::kPass, "", {}};
    std::vector<std::string> missing, optional_missing, undeclared;
    for (const std::string& name : exports.required) {
      if (!elf->exported.count(name)) missing.push_back(name);
    }
    for (const std::string& name : exports.optional) {
      if (!elf->exported.count(name)) optional_missing.push_back(name);
    }
    for (const std::string& name : elf->exported) {
      const bool declared =
          std::count(exports.required.begin(), exports.required.end(), name) ||
          std::count(exports.optional.begin(), exports.optional.end(), name);
      // Only the ABI's own prefix is the vendor's to export; a LiteRT
      // library's C++ runtime symbols are its own business.
      if (!declared && (absl::StartsWith(name, "graft_") ||
                        absl::StartsWith(name, "LiteRt"))) {
        undeclared.push_back(name);
      }
    }
    for (const std::string& name : missing) {
      r.findings.push_back(absl::StrCat("does not export required ", name));
    }
    for (const std::string& name : undeclared) {
      r.findings.push_back(
          absl::StrCat("exports ", name, ", which the ABI does not declare"));
    }
    const bool no_register =
        litert_plugin &&
        std::count(optional_missing.begin(), optional_missing.end(),
                   LITERT_PLUGIN_REGISTER_TRANSFORMATIONS_SYMBOL);
    if (no_register) {
      r.findings.push_back(absl::StrCat(
          "does not export ", LITERT_PLUGIN_REGISTER_TRANSFORMATIONS_SYMBOL,
          ": Graft's host treats it as optional, but LiteRT 2.3.0's own host "
          "refuses a plugin without it (export it, answering no "
          "transformations, to run under both)"));
    }
    if (!missing.empty()) {
      r.outcome = Outcome::kFail;
      r.summary = absl::StrCat(missing.size(), " required function(s) missing");
    } else if (!undeclared.empty() || no_register) {
      r.outcome = Outcome::kWarn;
      r.summary = "every required function exported; see the notes";
    } else {
      r.summary = absl::StrCat(
          "the ", exports.required.size(), " required functions",
          optional_missing.empty()
              ? ", and every optional one"
              : absl::StrCat("; optional ones left out (allowed): ",
                             absl::StrJoin(optional_missing, ", ")));
    }
    report.Add(std::move(r));
  }
  if (s.Wants(needed_id)) {
    CheckResult r{needed_id, Outcome::kPass, "", {}};
    for (const std::string& soname : elf->needed) {
      if (absl::StrContains(soname, "graft")) {
        r.findings.push_back(
            absl::StrCat("needs ", soname,
                         ": a vendor library links no Graft library "
                         "(host services come through graft_host_api_t)"));
      }
    }
    r.outcome = r.findings.empty() ? Outcome::kPass : Outcome::kFail;
    r.summary = r.findings.empty()
                    ? absl::StrCat("no Graft library among its ",
                                   elf->needed.size(), " NEEDED entries (",
                                   absl::StrJoin(elf->needed, ", "), ")")
                    : "links a Graft library";
    report.Add(std::move(r));
  }
}

// abi.plugin.version and abi.plugin.struct_sizes of a Graft-ABI plugin,
// asked in a child.
void CheckGraftPluginVersion(const Subject& s, CheckReport& report) {
  const std::string path = s.options.plugin_path;
  absl::StatusOr<std::string> answer = RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> {
        auto raw = LoadRawPlugin(path);
        if (!raw.ok()) return raw.status();
        const uint32_t v = raw->abi_version();
        std::string out = absl::StrCat(v);
        if (GRAFT_ABI_VERSION_GET_MAJOR(v) != GRAFT_ABI_VERSION_MAJOR) {
          return out;  // Nothing else may be called.
        }
        HostApi host("graft check");
        std::vector<graft_key_value_t> kv;
        for (const auto& [k, v] : s.options.plugin_options) {
          kv.push_back({k.c_str(), v.c_str()});
        }
        graft_compiler_plugin_t* p = nullptr;
        graft_status_t* st =
            raw->create(host.table(), kv.data(), kv.size(), &p);
        if (st != nullptr || p == nullptr) {
          return absl::StrCat(out, " create-failed ",
                              TakeStatus(st, "create").ToString());
        }
        const graft_compiler_plugin_info_t* info = nullptr;
        st = raw->get_info(p, &info);
        if (st != nullptr || info == nullptr) {
          return absl::StrCat(out, " get_info-failed ",
                              TakeStatus(st, "get_info").ToString());
        }
        absl::StrAppend(&out, " ", info->struct_size, " ", info->abi_version);
        // No destroy: the child ends with _exit, and abi.plugin.destroy
        // probes destroy on its own.
        return out;
      },
      s.options.timeout, "plugin: ABI version and info");
  if (!answer.ok()) {
    ReportUnasked(s, report, {"abi.plugin.version", "abi.plugin.struct_sizes"},
                  answer.status());
    return;
  }
  std::vector<std::string> parts = absl::StrSplit(*answer, ' ');
  uint32_t v = 0;
  (void)absl::SimpleAtoi(parts[0], &v);
  ReportAbiVersion(s, report, "abi.plugin.version",
                   "graft_compiler_plugin_abi_version()", v,
                   absl::StrCat(" (host ", Version(GRAFT_ABI_VERSION), ")"),
                   ": rebuild against its c_api headers");
  if (!s.Wants("abi.plugin.struct_sizes") || parts.size() < 2) return;
  if (parts.size() < 3 || absl::EndsWith(parts[1], "-failed")) {
    report.Add({"abi.plugin.struct_sizes",
                Outcome::kFail,
                "create or get_info failed",
                {absl::StrJoin(parts.begin() + 1, parts.end(), " ")}});
    return;
  }
  size_t size = 0;
  uint32_t info_abi = 0;
  (void)absl::SimpleAtoi(parts[1], &size);
  (void)absl::SimpleAtoi(parts[2], &info_abi);
  const size_t min_size =
      offsetof(graft_compiler_plugin_info_t, num_options) + sizeof(size_t);
  CheckResult r{"abi.plugin.struct_sizes",
                Outcome::kPass,
                absl::StrCat("graft_compiler_plugin_info_t.struct_size ", size,
                             " (this Graft's: ",
                             sizeof(graft_compiler_plugin_info_t), ")"),
                {}};
  if (size < min_size) {
    r.outcome = Outcome::kFail;
    r.findings.push_back(absl::StrCat(
        "info.struct_size is ", size, ", less than ABI 1.0's ", min_size,
        ": set it to sizeof(graft_compiler_plugin_info_t)"));
  }
  if (GRAFT_ABI_VERSION_GET_MAJOR(info_abi) != GRAFT_ABI_VERSION_MAJOR) {
    r.outcome = Outcome::kFail;
    r.findings.push_back(absl::StrCat("info.abi_version is ", Version(info_abi),
                                      ": set it to GRAFT_ABI_VERSION"));
  }
  report.Add(std::move(r));
}

// abi.dispatch.version and abi.dispatch.struct_sizes, asked in a child.
void CheckGraftDispatchVersion(const Subject& s, CheckReport& report) {
  const std::string path = s.options.dispatch_path;
  absl::StatusOr<std::string> answer = RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> {
        auto raw = LoadRawDispatch(path);
        if (!raw.ok()) return raw.status();
        const uint32_t v = raw->abi_version();
        if (GRAFT_ABI_VERSION_GET_MAJOR(v) != GRAFT_ABI_VERSION_MAJOR) {
          return absl::StrCat(v);
        }
        HostApi host("graft check");
        graft_dispatch_t* d = nullptr;
        graft_status_t* st = raw->create(host.table(), nullptr, 0, &d);
        if (st != nullptr || d == nullptr) {
          return absl::StrCat(v, " x ", TakeStatus(st, "create").ToString());
        }
        const graft_dispatch_info_t* info = nullptr;
        st = raw->get_info(d, &info);
        if (st != nullptr || info == nullptr) {
          return absl::StrCat(v, " x ", TakeStatus(st, "get_info").ToString());
        }
        std::string out = absl::StrCat(v, " ", info->struct_size);
        raw->destroy(d);
        return out;
      },
      s.options.timeout, "dispatch: ABI version and info");
  if (!answer.ok()) {
    ReportUnasked(s, report,
                  {"abi.dispatch.version", "abi.dispatch.struct_sizes"},
                  answer.status());
    return;
  }
  std::vector<std::string> parts = absl::StrSplit(*answer, ' ');
  uint32_t v = 0;
  (void)absl::SimpleAtoi(parts[0], &v);
  ReportAbiVersion(s, report, "abi.dispatch.version",
                   "graft_dispatch_abi_version()", v, "", "");
  if (!s.Wants("abi.dispatch.struct_sizes") || parts.size() < 2) return;
  size_t size = 0;
  if (parts[1] == "x" || !absl::SimpleAtoi(parts[1], &size)) {
    report.Add({"abi.dispatch.struct_sizes",
                Outcome::kFail,
                "create or get_info failed",
                {absl::StrJoin(parts.begin() + 1, parts.end(), " ")}});
    return;
  }
  const size_t min_size =
      offsetof(graft_dispatch_info_t, num_options) + sizeof(size_t);
  CheckResult r{
      "abi.dispatch.struct_sizes",
      Outcome::kPass,
      absl::StrCat("graft_dispatch_info_t.struct_size ", size,
                   " (this Graft's: ", sizeof(graft_dispatch_info_t), ")"),
      {}};
  if (size < min_size) {
    r.outcome = Outcome::kFail;
    r.findings.push_back(absl::StrCat("info.struct_size is ", size,
                                      ", less than ABI 1.0's ", min_size));
  }
  report.Add(std::move(r));
}

// abi.<kind>.load: the host's own loader (ABI version first, required
// functions, create, info validation), first in a child so that a crash
// in create is a finding; then, for the plugin, in this process.
void CheckLoad(Subject& s, CheckReport& report) {
  absl::StatusOr<std::string> probe = RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> {
        auto p =
            LoadCompilerPlugin(s.options.plugin_path, s.options.plugin_options);
        if (!p.ok()) return p.status();
        const std::string label = (*p)->label();
        // Not destroyed here (the child ends with _exit): destroy is
        // probed on its own, as abi.plugin.destroy.
        (void)p->release();
        return label;
      },
      s.options.timeout, "plugin: load and create");
  if (probe.ok()) {
    auto p =
        LoadCompilerPlugin(s.options.plugin_path, s.options.plugin_options);
    if (p.ok()) {
      s.plugin = *std::move(p);
    } else {
      probe = p.status();
    }
  }
  if (!probe.ok()) s.load_error = std::string(probe.status().message());
  if (s.Wants("abi.plugin.load")) {
    if (s.plugin != nullptr) {
      const PluginInfo& info = s.plugin->info();
      report.Add({"abi.plugin.load",
                  Outcome::kPass,
                  absl::StrCat(
                      "loads and creates: vendor ", info.vendor, " ",
                      info.plugin_version, ", ",
                      info.abi == PluginInfo::Abi::kLiteRt ? "LiteRT" : "Graft",
                      " ABI ", Version(info.abi_version)),
                  {}});
    } else {
      report.Add({"abi.plugin.load",
                  Outcome::kFail,
                  "the host cannot load it; the checks that need it are "
                  "skipped",
                  {s.load_error}});
    }
  }
  if (s.options.dispatch_path.empty() || !s.Wants("abi.dispatch.load")) return;
  const std::string path = s.options.dispatch_path;
  const bool litert = s.litert_dispatch;
  absl::StatusOr<std::string> d = RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> {
        if (litert) {
          auto lib = LiteRtDispatchLibrary::Load(path);
          if (!lib.ok()) return lib.status();
          return absl::StrCat("LiteRT dispatch library, vendor id ",
                              (*lib)->vendor_id(), ", build ",
                              (*lib)->build_id());
        }
        auto lib = DispatchLibrary::Load(path);
        if (!lib.ok()) return lib.status();
        const DispatchInfo& info = (*lib)->info();
        return absl::StrCat("vendor ", info.vendor, " ", info.library_version,
                            ", bytecode formats ",
                            info.min_bytecode_format_version, "-",
                            info.max_bytecode_format_version);
      },
      s.options.timeout, "dispatch: load and create");
  if (d.ok()) {
    report.Add({"abi.dispatch.load",
                Outcome::kPass,
                absl::StrCat("loads and creates: ", *d),
                {}});
  } else {
    report.Add({"abi.dispatch.load",
                Outcome::kFail,
                "the host cannot load it",
                {std::string(d.status().message())}});
  }
}

}  // namespace

void RunAbiChecks(Subject& s, CheckReport& report) {
  CheckElf(s, "plugin", s.options.plugin_path,
           s.litert_plugin ? LiteRtPluginExports() : GraftPluginExports(),
           s.litert_plugin, report);
  if (!s.litert_plugin) CheckGraftPluginVersion(s, report);
  if (!s.options.dispatch_path.empty()) {
    static const ExportList* kLiteRtDispatch =
        new ExportList{{litert_abi::kLiteRtDispatchGetApiSymbol}, {}};
    CheckElf(s, "dispatch", s.options.dispatch_path,
             s.litert_dispatch ? *kLiteRtDispatch : GraftDispatchExports(),
             false, report);
    if (!s.litert_dispatch) CheckGraftDispatchVersion(s, report);
  }
  CheckLoad(s, report);
}

}  // namespace graft::check
