#include "tools/apply_targets.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/model_io.h"
#include "core/status.h"
#include "tools/json_writer.h"
#include "tools/progress.h"

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

namespace {

// One target of a multi-target apply and what became of it.
struct TargetRun {
  // The SoC model resolved once the plugin is loaded (the plugin's default
  // for none, one target per SoC model for "all").
  ApplyTarget target;
  // The --target spec it came from ("example:all").
  std::string spec;
  std::string output;
  absl::Status status;
  std::optional<ApplyReport> report;
  // Creating its plugin instance, ApplyPlugins, writing; and all of it.
  double plugin_seconds = 0, apply_seconds = 0, save_seconds = 0,
         total_seconds = 0;
};

// Indents every line of `text` by `spaces`.
std::string Indent(const std::string& text, int spaces) {
  std::string out, pad(spaces, ' ');
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&out, pad, line, "\n");
  }
  return out;
}

}  // namespace

// `graft apply --target=...`: the model loaded and parsed once; each
// vendor's plugin library loaded once; per target a plugin instance of its
// own, a copy of the parsed model, ApplyPlugins and an atomic write. A
// target that fails does not stop the others; exit 1 if any failed.
int RunApplyTargets(const std::vector<ApplyTarget>& specs,
                    const std::string& model_path, ApplyMode mode,
                    const std::string& mode_name, const std::string& output,
                    const PluginSelection& selection, bool cpu_fallback,
                    Durability durability, bool json, std::ostream& out,
                    std::ostream& err) {
  const auto job_start = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
        .count();
  };
  auto fail = [&](const absl::Status& s, int code) {
    err << "graft apply: error: " << s.message() << "\n";
    return code;
  };
  ProgressLine progress(STDERR_FILENO, "graft apply: ");
  progress.Update(absl::StrCat("loading ", model_path));
  auto model = LoadModel(model_path);
  if (!model.ok()) return fail(model.status(), 1);
  const double load_seconds = seconds_since(job_start);

  // Each vendor's plugin once, all in one LoadPlugins call; when that fails
  // (a vendor missing), one call per vendor says which.
  const auto plugins_start = std::chrono::steady_clock::now();
  std::vector<std::string> vendors;
  for (const ApplyTarget& t : specs) {
    if (std::find(vendors.begin(), vendors.end(), t.vendor) == vendors.end()) {
      vendors.push_back(t.vendor);
    }
  }
  std::map<std::string, std::unique_ptr<CompilerPlugin>> first_instance;
  std::map<std::string, absl::Status> load_error;
  PluginSelection sel = selection;
  sel.vendors = absl::StrJoin(vendors, ",");
  progress.Update(absl::StrCat("loading plugins of ", sel.vendors));
  std::vector<std::string> skipped;
  if (auto all = LoadPlugins(sel); all.ok()) {
    for (auto& p : all->plugins) {
      std::string vendor = p->info().vendor;
      first_instance[vendor] = std::move(p);
    }
    skipped = all->skipped;
  } else {
    for (const std::string& v : vendors) {
      sel.vendors = v;
      auto one = LoadPlugins(sel);
      if (one.ok() && !one->plugins.empty()) {
        first_instance[v] = std::move(one->plugins.front());
      } else {
        load_error[v] = one.ok() ? absl::NotFoundError(absl::StrCat(
                                       "no compiler plugin for vendor '", v,
                                       "'"))
                                 : one.status();
      }
    }
  }
  for (const auto& s : skipped) {
    err << "graft apply: warning: skipped " << s << "\n";
  }
  const double plugins_seconds = seconds_since(plugins_start);

  // The targets, SoC models resolved; then their outputs, which must differ.
  std::vector<TargetRun> runs;
  for (const ApplyTarget& spec : specs) {
    auto loaded = first_instance.find(spec.vendor);
    if (loaded == first_instance.end()) {
      TargetRun run;
      run.target = spec;
      run.spec = spec.Name();
      run.status = load_error.count(spec.vendor)
                       ? load_error[spec.vendor]
                       : absl::NotFoundError("the plugin did not load");
      runs.push_back(std::move(run));
      continue;
    }
    const std::vector<std::string>& socs = loaded->second->info().soc_models;
    std::vector<std::string> resolved;
    if (spec.soc_model == kAllSocModels) {
      resolved = socs;
    } else {
      resolved.push_back(spec.soc_model.empty() ? socs.front()
                                                : spec.soc_model);
    }
    for (const std::string& soc : resolved) {
      TargetRun run;
      run.target = {spec.vendor, soc};
      run.spec = spec.Name();
      for (const TargetRun& other : runs) {
        if (other.target == run.target) {
          return fail(absl::InvalidArgumentError(absl::StrCat(
                          "--target: ", run.target.Name(),
                          " is named twice (as ", other.spec, " and as ",
                          run.spec, ")")),
                      2);
        }
      }
      runs.push_back(std::move(run));
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    TargetRun& run = runs[i];
    if (!run.status.ok()) continue;  // Its plugin did not load.
    run.output = TargetOutputPath(output, model_path, run.target.vendor,
                                  run.target.soc_model, mode);
    std::error_code ec;
    if (std::filesystem::equivalent(run.output, model_path, ec)) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
                      "-o: target ", run.target.Name(),
                      " would overwrite the input model ", model_path)),
                  2);
    }
    for (size_t k = 0; k < i; ++k) {
      if (runs[k].status.ok() && runs[k].output == run.output) {
        return fail(absl::InvalidArgumentError(absl::StrCat(
                        "-o '", output, "': targets ", runs[k].target.Name(),
                        " and ", run.target.Name(), " both write ", run.output,
                        " (use {vendor} and {soc_model} in the pattern)")),
                    2);
      }
    }
  }

  std::set<std::string> used;
  for (size_t i = 0; i < runs.size(); ++i) {
    TargetRun& run = runs[i];
    if (!run.status.ok()) continue;
    const auto target_start = std::chrono::steady_clock::now();
    const std::string tag =
        absl::StrCat("[", i + 1, "/", runs.size(), " ", run.target.Name(), "] ");
    // The first target of a vendor uses the instance LoadPlugins made, the
    // others one of their own from the library it holds loaded.
    auto apply_target = [&]() -> absl::Status {
      // The first target of a vendor uses the instance LoadPlugins made,
      // the others one of their own from the library it holds loaded.
      std::unique_ptr<CompilerPlugin> own;
      CompilerPlugin* plugin = first_instance[run.target.vendor].get();
      if (!used.insert(run.target.vendor).second) {
        progress.Update(absl::StrCat(tag, "creating a plugin instance"));
        GRAFT_ASSIGN_OR_RETURN(own,
                               LoadAnotherInstance(selection, plugin->info()));
        plugin = own.get();
      }
      run.plugin_seconds = seconds_since(target_start);
      Model copy = *model;
      ApplyOptions options;
      options.mode = mode;
      options.soc_model = run.target.soc_model;
      options.cpu_fallback = cpu_fallback;
      options.progress = [&progress, &tag](const std::string& step) {
        progress.Update(absl::StrCat(tag, step));
      };
      const auto apply_start = std::chrono::steady_clock::now();
      GRAFT_ASSIGN_OR_RETURN(ApplyReport report,
                             ApplyPlugins(copy, {&plugin, 1}, options));
      // As in the one-target form, the plugin instance ends before the
      // output is written.
      GRAFT_RETURN_IF_ERROR(plugin->Close());
      run.apply_seconds = seconds_since(apply_start);
      progress.Update(absl::StrCat(tag, "writing ", run.output));
      const auto save_start = std::chrono::steady_clock::now();
      const std::filesystem::path parent =
          std::filesystem::path(run.output).parent_path();
      std::error_code ec;
      if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
        std::filesystem::create_directories(parent, ec);
        if (ec) {
          return absl::FailedPreconditionError(
              absl::StrCat("cannot create ", parent.string(), ": ",
                           ec.message()));
        }
      }
      GRAFT_RETURN_IF_ERROR(
          WriteApplyOutput(copy, report, mode, run.output, durability));
      run.save_seconds = seconds_since(save_start);
      run.report = std::move(report);
      return absl::OkStatus();
    };
    run.status = apply_target();
    run.total_seconds = seconds_since(target_start);
  }
  progress.Clear();
  const double total_seconds = seconds_since(job_start);

  std::vector<std::string> failed;
  int64_t bytecode_bytes = 0;
  double targets_seconds = 0;
  for (const TargetRun& run : runs) {
    if (!run.status.ok()) failed.push_back(run.target.Name());
    if (run.report) bytecode_bytes += run.report->bytecode_bytes;
    targets_seconds += run.total_seconds;
  }
  for (const TargetRun& run : runs) {
    if (!run.status.ok()) {
      err << "graft apply: error: target " << run.target.Name() << ": "
          << run.status.message() << "\n";
    }
  }
  if (json) {
    JsonWriter j(2);
    j.BeginObject().Key("mode").String(mode_name);
    j.Key("model").String(model_path);
    j.Key("targets").BeginArray();
    for (const TargetRun& run : runs) {
      if (run.report) {
        WriteReportJson(*run.report, mode_name, run.output, j);
      } else {
        j.BeginObject().Key("output");
        if (run.output.empty()) {
          j.Null();
        } else {
          j.String(run.output);
        }
      }
      j.Key("target").String(run.target.Name());
      j.Key("vendor").String(run.target.vendor);
      j.Key("soc_model").String(run.target.soc_model);
      j.Key("ok").Bool(run.status.ok());
      if (!run.status.ok()) {
        j.Key("error").String(std::string(run.status.message()));
      } else {
        // {"plugin": s, "apply": s, "save": s, "total": s}
        j.Key("job_seconds").BeginObject();
        j.Key("plugin").Double(run.plugin_seconds);
        j.Key("apply").Double(run.apply_seconds);
        j.Key("save").Double(run.save_seconds);
        j.Key("total").Double(run.total_seconds).EndObject();
      }
      j.EndObject();
    }
    j.EndArray();
    j.Key("totals").BeginObject();
    j.Key("targets").Int(static_cast<int64_t>(runs.size()));
    j.Key("written").Int(static_cast<int64_t>(runs.size() - failed.size()));
    j.Key("failed").Int(static_cast<int64_t>(failed.size()));
    j.Key("failed_targets").BeginArray();
    for (const std::string& name : failed) j.String(name);
    j.EndArray();
    j.Key("bytecode_bytes").Int(bytecode_bytes).EndObject();
    // The whole job: {"load": s, "plugins": s, "targets": s, "total": s}.
    j.Key("job_seconds").BeginObject();
    j.Key("load").Double(load_seconds).Key("plugins").Double(plugins_seconds);
    j.Key("targets").Double(targets_seconds).Key("total").Double(total_seconds);
    j.EndObject().EndObject();
    out << j.output() << "\n";
  } else {
    out << "graft apply (" << mode_name << "): " << model_path << ", "
        << runs.size() << " target" << (runs.size() == 1 ? "" : "s") << "\n";
    for (size_t i = 0; i < runs.size(); ++i) {
      const TargetRun& run = runs[i];
      out << "  [" << i + 1 << "/" << runs.size() << "] "
          << run.target.Name();
      if (!run.status.ok()) {
        out << " FAILED: " << run.status.message() << "\n";
        continue;
      }
      out << " -> " << run.output << "\n";
      for (const auto& p : run.report->plugins) {
        out << "    plugin " << p.vendor << " " << p.plugin_version << " for "
            << p.soc_model << "\n";
      }
      out << Indent(run.report->Summary(), 4);
      out << absl::StrFormat(
          "    target %.1f ms: plugin instance %.1f, apply %.1f (above), "
          "save %.1f\n",
          run.total_seconds * 1e3, run.plugin_seconds * 1e3,
          run.apply_seconds * 1e3, run.save_seconds * 1e3);
    }
    out << "  " << runs.size() - failed.size() << " of " << runs.size()
        << " targets written";
    if (!failed.empty()) out << "; failed: " << absl::StrJoin(failed, ", ");
    out << "\n";
    out << absl::StrFormat(
        "  total %.1f ms: load %.1f, plugins %.1f, targets %.1f (above)\n",
        total_seconds * 1e3, load_seconds * 1e3, plugins_seconds * 1e3,
        targets_seconds * 1e3);
  }
  return failed.empty() ? 0 : 1;
}

}  // namespace graft::tools
