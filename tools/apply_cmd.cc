#include "tools/apply_cmd.h"

#include <unistd.h>

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
#include "core/file_util.h"
#include "core/model_io.h"
#include "core/status.h"
#include "plugins/apply.h"
#include "plugins/isolated_plugin.h"
#include "plugins/litert_plugin_options.h"
#include "plugins/vendor_priority.h"
#include "tools/apply_targets.h"
#include "tools/flags.h"
#include "tools/json_writer.h"
#include "tools/progress.h"

namespace graft::tools {
namespace {

constexpr char kUsage[] =
    "graft apply MODEL [--mode=apply|partition|compile|noop|info] [-o OUT]\n"
    "            [--plugin-dir=DIR | --plugin=LIB[,LIB]] [--vendor=V[,V]]\n"
    "            [--soc-model=SOC] [--plugin-option=[VENDOR:]KEY=VALUE[,...]]...\n"
    "            [--json]\n"
    "       graft apply MODEL --target=VENDOR[:SOC_MODEL] [--target=...]...\n"
    "            [-o DIR | -o PATTERN] [--plugin-dir=DIR | --plugin=LIB[,LIB]]\n"
    "            [--mode=apply|partition|compile] [--json] ..."
    "       graft apply --mode=info [--plugin-dir=DIR]";

constexpr char kDescription[] =
    "Asks each compiler plugin which ops of MODEL it takes, groups the taken "
    "ops into partitions, outlines them, has them compiled and embeds the "
    "bytecode as dispatch ops. Prints a summary: ops taken, partitions, "
    "bytecode size, time, and why each op not taken was refused.\n\n"
    "Modes: apply writes the compiled model (default OUT: MODEL with "
    ".compiled.tflite); partition writes the outlined model without "
    "compiling (default OUT: .partitioned.tflite); compile writes each "
    "bytecode module to the directory OUT (default: MODEL.modules/); noop "
    "loads and saves; info lists the plugins found.\n\n"
    "Vendor priority: when several plugins take an op, the one first in "
    "the priority gets it. --vendor=a,b uses only those vendors, a first; "
    "--plugin=LIB,LIB keeps the order given; otherwise every plugin found "
    "is used, dedicated accelerators first (hardware NPU, then GPU, then "
    "DSP, then CPU backends such as xnnpack), ties by vendor name. The "
    "default plugin directory is vendor_libs/ beside the graft binary (or "
    "$GRAFT_PLUGIN_DIR); the teaching vendor 'example' is not in it "
    "(--plugin-dir=build/vendors/example).\n\n"
    "Several targets in one run (--target, repeatable): one output per "
    "target, each holding one vendor's dispatch ops compiled for one SoC "
    "model (VENDOR:all: each SoC model the plugin lists). The model is "
    "loaded once and each vendor's plugin library once; each target gets "
    "its own plugin instance. Outputs go to -o DIR as "
    "MODEL_VENDOR_SOC.compiled.tflite (default: beside MODEL), or to a "
    "pattern such as -o 'out/{model}-{target}.tflite'. A target that fails "
    "is named on stderr and in the report, the others are still written, "
    "and the exit status is 1.\n\n"
    "Outputs are written atomically: on any error nothing is written.";

const char* AbiName(const PluginInfo& info) {
  return info.abi == PluginInfo::Abi::kLiteRt ? "LiteRT ABI" : "Graft ABI";
}

// "CPU|NPU"; "none" for 0.
std::string HardwareNames(uint32_t kinds) {
  std::vector<std::string> names;
  if (kinds & GRAFT_HARDWARE_KIND_CPU) names.push_back("CPU");
  if (kinds & GRAFT_HARDWARE_KIND_GPU) names.push_back("GPU");
  if (kinds & GRAFT_HARDWARE_KIND_DSP) names.push_back("DSP");
  if (kinds & GRAFT_HARDWARE_KIND_NPU) names.push_back("NPU");
  return names.empty() ? "none" : absl::StrJoin(names, "|");
}

bool IsLiteRtPluginFile(const std::string& path) {
  return absl::StartsWith(std::filesystem::path(path).filename().string(),
                          "libLiteRtCompilerPlugin_");
}

// The vendor a plugin file name promises: libgraft_compiler_plugin_<v>.so.
std::string VendorOfFile(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  const std::string prefix = "libgraft_compiler_plugin_";
  if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + 3) return "";
  return name.substr(prefix.size(), name.size() - prefix.size() - 3);
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    out.emplace_back(part);
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::vector<std::pair<std::string, std::string>>>>
ParsePluginOptions(const std::vector<std::string>& occurrences) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> out;
  std::vector<std::string> items;
  for (const std::string& text : occurrences) {
    // LiteRT's flags carry lists in their values
    // (intel_openvino_configs_map=A=1,B=2): one option per occurrence.
    if (!LiteRtOptionOwner(text.substr(0, text.find('='))).empty()) {
      items.push_back(text);
    } else {
      for (std::string& item : SplitList(text)) items.push_back(std::move(item));
    }
  }
  for (const std::string& item : items) {
    std::string vendor, kv = item;
    size_t eq = item.find('=');
    size_t colon = item.find(':');
    if (colon != std::string::npos && colon < eq) {
      vendor = item.substr(0, colon);
      kv = item.substr(colon + 1);
      eq = kv.find('=');
    }
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--plugin-option: '", item, "' is not [VENDOR:]KEY=VALUE"));
    }
    out[vendor].push_back({kv.substr(0, eq), kv.substr(eq + 1)});
  }
  return out;
}

std::string DefaultOutput(const std::string& model, ApplyMode mode) {
  std::string base = model;
  if (base.size() > 7 && base.compare(base.size() - 7, 7, ".tflite") == 0) {
    base.resize(base.size() - 7);
  }
  switch (mode) {
    case ApplyMode::kPartition: return base + ".partitioned.tflite";
    case ApplyMode::kCompile: return base + ".modules";
    case ApplyMode::kNoop: return base + ".noop.tflite";
    default: return base + ".compiled.tflite";
  }
}

void PrintInfo(const LoadedPlugins& loaded, const std::string& where,
               bool json, std::ostream& out) {
  if (json) {
    JsonWriter j(2);
    j.BeginObject().Key("plugins").BeginArray();
    for (const auto& p : loaded.plugins) {
      const PluginInfo& i = p->info();
      j.BeginObject().Key("vendor").String(i.vendor);
      j.Key("plugin_version").String(i.plugin_version);
      j.Key("description").String(i.description);
      j.Key("soc_models").BeginArray();
      for (const auto& s : i.soc_models) j.String(s);
      j.EndArray();
      j.Key("bytecode_format_version").UInt(i.bytecode_format_version);
      j.Key("abi_version").String(absl::StrCat(GRAFT_ABI_VERSION_GET_MAJOR(i.abi_version), ".",
                                               GRAFT_ABI_VERSION_GET_MINOR(i.abi_version)));
      j.Key("abi").String(AbiName(i));
      j.Key("sdk_version").String(i.sdk_version);
      j.Key("hardware").String(HardwareNames(i.hardware_kinds));
      j.Key("path").String(i.path);
      j.Key("options").BeginArray();
      for (const auto& o : i.options) {
        j.BeginObject().Key("name").String(o.name);
        j.Key("default").String(o.default_value);
        j.Key("description").String(o.description).EndObject();
      }
      j.EndArray().EndObject();
    }
    j.EndArray().Key("skipped").BeginArray();
    for (const auto& s : loaded.skipped) j.String(s);
    j.EndArray().EndObject();
    out << j.output() << "\n";
    return;
  }
  out << loaded.plugins.size() << " compiler plugin(s) in " << where << "\n";
  for (const auto& p : loaded.plugins) {
    const PluginInfo& i = p->info();
    out << "  " << i.vendor << " " << i.plugin_version << "  (" << AbiName(i)
        << " " << GRAFT_ABI_VERSION_GET_MAJOR(i.abi_version) << "."
        << GRAFT_ABI_VERSION_GET_MINOR(i.abi_version);
    if (i.abi == PluginInfo::Abi::kGraft) {
      out << ", bytecode v" << i.bytecode_format_version;
    } else {
      out << ", SDK " << (i.sdk_version.empty() ? "not reported" : i.sdk_version);
    }
    out << ", hardware " << HardwareNames(i.hardware_kinds) << ")  " << i.path
        << "\n";
    if (!i.description.empty()) out << "    " << i.description << "\n";
    out << "    SoC models: " << absl::StrJoin(i.soc_models, ", ")
        << " (default " << i.soc_models.front() << ")\n";
    for (const auto& o : i.options) {
      out << "    option " << o.name << " (default " << o.default_value
          << "): " << o.description << "\n";
    }
  }
  for (const auto& s : loaded.skipped) out << "  skipped: " << s << "\n";
}

}  // namespace

// Writes what `mode` produces: the modules of `report` as files in the
// directory `output` (kCompile), else `model`; each file atomically.
absl::Status WriteApplyOutput(const Model& model, const ApplyReport& report,
                              ApplyMode mode, const std::string& output,
                              Durability durability) {
  if (mode != ApplyMode::kCompile) {
    SaveOptions save;
    save.durability = durability;
    return SaveModel(model, output, save);
  }
  std::error_code ec;
  std::filesystem::create_directories(output, ec);
  for (size_t i = 0; i < report.modules.size(); ++i) {
    const CompiledModule& m = report.modules[i];
    std::string path = (std::filesystem::path(output) /
                        absl::StrCat(m.vendor, "_module_", i, ".bin")).string();
    GRAFT_RETURN_IF_ERROR(WriteFileAtomically(path, {m.bytes.span()}, durability));
  }
  return absl::OkStatus();
}

// Opens the report's object and writes its keys, leaving it open.
void WriteReportJson(const ApplyReport& r, const std::string& mode,
                     const std::string& output, JsonWriter& j) {
  j.BeginObject();
  j.Key("mode").String(mode);
  j.Key("output").String(output);
  j.Key("plugins").BeginArray();
  for (const auto& p : r.plugins) {
    j.BeginObject().Key("vendor").String(p.vendor);
    j.Key("plugin_version").String(p.plugin_version);
    j.Key("soc_model").String(p.soc_model).Key("path").String(p.path);
    j.EndObject();
  }
  j.EndArray();
  j.Key("ops_total").Int(r.ops_total).Key("ops_taken").Int(r.ops_taken);
  j.Key("bytecode_bytes").Int(r.bytecode_bytes);
  j.Key("seconds").Double(r.seconds);
  j.Key("partitions").BeginArray();
  for (const PartitionReport& p : r.partitions) {
    j.BeginObject().Key("vendor").String(p.vendor);
    j.Key("source_subgraph").Int(p.source_subgraph);
    j.Key("outlined_subgraph").Int(p.outlined_subgraph);
    j.Key("ops").BeginArray();
    for (OpId op : p.ops) j.Int(op);
    j.EndArray();
    if (!p.entry_point.empty()) {
      j.Key("entry_point").String(p.entry_point).Key("module").Int(p.module);
    }
    j.EndObject();
  }
  j.EndArray();
  j.Key("ops").BeginArray();
  for (const OpApplyReport& o : r.ops) {
    j.BeginObject().Key("subgraph").Int(o.subgraph).Key("op").Int(o.op);
    j.Key("name").String(o.name);
    if (o.taken_by.empty()) {
      j.Key("taken_by").Null();
    } else {
      j.Key("taken_by").String(o.taken_by).Key("partition").Int(o.partition);
    }
    j.Key("refusals").BeginArray();
    for (const auto& f : o.refusals) {
      j.BeginObject().Key("vendor").String(f.vendor);
      j.Key("reason_code").String(PartitionReasonName(f.reason_code));
      j.Key("reason").String(f.reason).EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray();
  // The caller adds its keys and closes the object.
}

std::string DefaultPluginDir() {
  if (const char* env = std::getenv("GRAFT_PLUGIN_DIR")) return env;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "vendor_libs";
  // An installed graft (cmake --install) is P/bin/graft with the vendors in
  // P/lib/graft/vendors; a build tree has them in vendor_libs/ beside it.
  const std::filesystem::path installed =
      exe.parent_path().parent_path() / "lib" / "graft" / "vendors";
  if (exe.parent_path().filename() == "bin" &&
      std::filesystem::is_directory(installed, ec)) {
    return installed.string();
  }
  return (exe.parent_path() / "vendor_libs").string();
}

absl::StatusOr<LoadedPlugins> LoadPlugins(const PluginSelection& sel) {
  GRAFT_ASSIGN_OR_RETURN(auto options, ParsePluginOptions(sel.plugin_options));
  std::vector<std::string> wanted_vendors = SplitList(sel.vendors);
  std::vector<std::string> files;
  bool explicit_files = !sel.plugin_paths.empty();
  std::set<std::string> litert_owners;
  for (const auto& kv : options[""]) {
    absl::string_view owner = LiteRtOptionOwner(kv.first);
    if (!owner.empty()) litert_owners.insert(std::string(owner));
  }
  if (explicit_files) {
    files = SplitList(sel.plugin_paths);
  } else {
    GRAFT_ASSIGN_OR_RETURN(files, FindPluginFiles(sel.plugin_dir));
  }
  LoadedPlugins loaded;
  for (const std::string& file : files) {
    std::string vendor = VendorOfFile(file);
    // A LiteRT plugin's vendor (its SoC manufacturer) is known once loaded.
    bool wanted = wanted_vendors.empty() || IsLiteRtPluginFile(file) ||
                  std::find(wanted_vendors.begin(), wanted_vendors.end(),
                            vendor) != wanted_vendors.end();
    if (!explicit_files && !wanted) continue;
    std::vector<std::pair<std::string, std::string>> opts = options[""];
    for (const auto& kv : options[vendor]) opts.push_back(kv);
    auto plugin = LoadCompilerPlugin(file, opts);
    if (!plugin.ok()) {
      if (explicit_files || !wanted_vendors.empty()) return plugin.status();
      loaded.skipped.push_back(std::string(plugin.status().message()));
      continue;
    }
    if (!wanted_vendors.empty() &&
        std::find(wanted_vendors.begin(), wanted_vendors.end(),
                  (*plugin)->info().vendor) == wanted_vendors.end()) {
      continue;
    }
    litert_owners.erase((*plugin)->info().vendor);
    loaded.plugins.push_back(sel.isolate ? IsolatePlugin(*std::move(plugin))
                                         : *std::move(plugin));
  }
  if (!litert_owners.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "--plugin-option names options of the LiteRT plugin of ",
        absl::StrJoin(litert_owners, ", "), ", which is not loaded",
        loaded.skipped.empty() ? "" : " (skipped: ",
        absl::StrJoin(loaded.skipped, "; "),
        loaded.skipped.empty() ? "" : ")"));
  }
  // The priority: --vendor's order; else --plugin's order; else the
  // default order (plugins/vendor_priority.h).
  if (!explicit_files || !wanted_vendors.empty()) {
    std::vector<std::string> unmatched;
    loaded.plugins = OrderByVendorPriority(std::move(loaded.plugins),
                                           wanted_vendors, &unmatched);
    for (const std::string& v : unmatched) {
      return absl::NotFoundError(absl::StrCat(
          "no compiler plugin for vendor '", v, "' in ",
          explicit_files ? sel.plugin_paths : sel.plugin_dir,
          " (expected libgraft_compiler_plugin_", v, ".so)"));
    }
  }
  return loaded;
}

// Another instance of the plugin library `info` came from, created with the
// options LoadPlugins gives it: the library is not loaded again while the
// first instance holds it.
absl::StatusOr<std::unique_ptr<CompilerPlugin>> LoadAnotherInstance(
    const PluginSelection& sel, const PluginInfo& info) {
  GRAFT_ASSIGN_OR_RETURN(auto options, ParsePluginOptions(sel.plugin_options));
  std::vector<std::pair<std::string, std::string>> opts = options[""];
  for (const auto& kv : options[VendorOfFile(info.path)]) opts.push_back(kv);
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<CompilerPlugin> plugin,
                         LoadCompilerPlugin(info.path, opts));
  if (sel.isolate) return IsolatePlugin(std::move(plugin));
  return plugin;
}


int RunApplyCommand(absl::Span<const std::string> args, std::ostream& out,
                    std::ostream& err) {
  std::string mode_name = "apply", output, soc_model;
  bool json = false;
  PluginSelection sel;
  sel.plugin_dir = DefaultPluginDir();
  FlagParser flags(kUsage, kDescription);
  flags.AddString("mode", &mode_name, "apply, partition, compile, noop or info");
  flags.AddString("o", &output, "output path (see modes)");
  flags.AddString("output", &output, "same as -o");
  flags.AddString("plugin-dir", &sel.plugin_dir,
                  "directory searched for libgraft_compiler_plugin_*.so");
  flags.AddString("plugin", &sel.plugin_paths,
                  "comma-separated plugin files (instead of --plugin-dir)");
  flags.AddString("vendor", &sel.vendors,
                  "comma-separated vendors to use, highest priority first");
  flags.AddString("soc-model", &soc_model,
                  "SoC model to compile for (default: each plugin's first)");
  flags.AddRepeated("plugin-option", &sel.plugin_options,
                    "[VENDOR:]KEY=VALUE[,KEY=VALUE] options for plugins; "
                    "LiteRT plugins take apply_plugin's flag names, one per "
                    "occurrence (intel_openvino_graph_backends=cpu)");
  flags.AddBool("json", &json, "print the report as JSON");
  flags.AddBool("isolate-plugins", &sel.isolate,
                "run each plugin's partition and compile in a child process "
                "with a time limit, so a crash or hang in vendor code is an "
                "error naming the vendor, not the end of graft apply");
  bool cpu_fallback = true;
  flags.AddBool("cpu-fallback", &cpu_fallback,
                "keep each partition's original ops and weights, which "
                "Graft's runtime runs on its CPU kernels where the vendor's "
                "dispatch library is missing; =false writes only the "
                "bytecode (a smaller file, as LiteRT's tools write)");
  std::vector<std::string> target_specs;
  flags.AddRepeated(
      "target", &target_specs,
      "VENDOR[:SOC_MODEL][,...]: compile for several targets in one run, "
      "one output each (-o DIR or a pattern with {model}, {vendor}, "
      "{soc_model}, {target}; default: beside MODEL, "
      "MODEL_VENDOR_SOC.compiled.tflite); SOC_MODEL 'all' for each the "
      "plugin lists, none for its default; instead of --vendor/--soc-model");
  bool fsync = false;
  flags.AddBool("fsync", &fsync,
                "flush the output to disk before it replaces the old file, "
                "so it survives a power loss (slower; without it the write "
                "is still atomic, as a compiler's)");
  std::vector<std::string> rewritten(args.begin(), args.end());
  for (std::string& a : rewritten) {
    if (a == "-o") a = "--o";
  }
  auto positional = flags.Parse(rewritten);
  if (flags.help_requested()) {
    out << flags.Help();
    return 0;
  }
  auto fail = [&](const absl::Status& s, int code) {
    err << "graft apply: error: " << s.message() << "\n";
    return code;
  };
  if (!positional.ok()) return fail(positional.status(), 2);
  // An empty -o is a mistake, not a request for the default name.
  for (size_t i = 0; i < rewritten.size(); ++i) {
    const std::string& a = rewritten[i];
    if (a == "--o=" || a == "--output=" ||
        ((a == "--o" || a == "--output") && i + 1 < rewritten.size() &&
         rewritten[i + 1].empty())) {
      return fail(absl::InvalidArgumentError("-o/--output: empty path"), 2);
    }
  }

  std::map<std::string, ApplyMode> modes = {{"apply", ApplyMode::kApply},
                                            {"partition", ApplyMode::kPartition},
                                            {"compile", ApplyMode::kCompile},
                                            {"noop", ApplyMode::kNoop}};
  if (mode_name == "info") {
    if (!target_specs.empty()) {
      return fail(absl::InvalidArgumentError(
                      "--target needs --mode=apply, partition or compile"),
                  2);
    }
    auto loaded = LoadPlugins(sel);
    if (!loaded.ok()) return fail(loaded.status(), 1);
    PrintInfo(*loaded, sel.plugin_paths.empty() ? sel.plugin_dir : sel.plugin_paths,
              json, out);
    return 0;
  }
  auto mode_it = modes.find(mode_name);
  if (mode_it == modes.end()) {
    return fail(absl::InvalidArgumentError(absl::StrCat(
                    "unknown --mode '", mode_name,
                    "' (expected apply, partition, compile, noop or info)")),
                2);
  }
  if (positional->size() != 1) {
    err << "graft apply: error: expected one MODEL argument\n\n"
        << flags.Help();
    return 2;
  }
  const std::string& model_path = positional->front();
  const ApplyMode mode = mode_it->second;
  if (!target_specs.empty()) {
    auto targets = ParseTargets(target_specs);
    if (!targets.ok()) return fail(targets.status(), 2);
    if (!sel.vendors.empty() || !soc_model.empty()) {
      return fail(absl::InvalidArgumentError(
                      "--target names the vendor and SoC model of each "
                      "output; it does not combine with --vendor or "
                      "--soc-model"),
                  2);
    }
    if (mode == ApplyMode::kNoop) {
      return fail(absl::InvalidArgumentError(
                      "--target needs --mode=apply, partition or compile"),
                  2);
    }
    if (absl::Status s = CheckOutputPattern(output); !s.ok()) {
      return fail(s, 2);
    }
    return RunApplyTargets(*targets, model_path, mode, mode_name, output, sel,
                           cpu_fallback,
                           fsync ? Durability::kDurable : Durability::kAtomic,
                           json, out, err);
  }
  if (output.empty()) output = DefaultOutput(model_path, mode);

  // The whole job is timed, load and save included (the report's phases
  // are ApplyPlugins' alone).
  const auto job_start = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
        .count();
  };
  ProgressLine progress(STDERR_FILENO, "graft apply: ");
  progress.Update(absl::StrCat("loading ", model_path));
  auto model = LoadModel(model_path);
  if (!model.ok()) return fail(model.status(), 1);
  const double load_seconds = seconds_since(job_start);
  LoadedPlugins loaded;
  if (mode != ApplyMode::kNoop) {
    auto l = LoadPlugins(sel);
    if (!l.ok()) return fail(l.status(), 1);
    loaded = std::move(*l);
    for (const auto& s : loaded.skipped) err << "graft apply: warning: skipped " << s << "\n";
    if (loaded.plugins.empty()) {
      return fail(absl::NotFoundError(absl::StrCat(
                      "no usable compiler plugin in ", sel.plugin_dir,
                      "; build the vendors (tools/scripts/build.sh) or pass "
                      "--plugin-dir/--plugin")),
                  1);
    }
  }
  std::vector<CompilerPlugin*> raw;
  for (auto& p : loaded.plugins) raw.push_back(p.get());
  ApplyOptions options;
  options.mode = mode;
  options.soc_model = soc_model;
  options.cpu_fallback = cpu_fallback;
  options.progress = [&progress](const std::string& step) {
    progress.Update(step);
  };
  auto report = ApplyPlugins(*model, raw, options);
  if (!report.ok()) {
    progress.Clear();
    return fail(absl::Status(report.status().code(),
                             absl::StrCat(model_path, ": ", report.status().message())),
                1);
  }
  // Plugins end before the output is written: a vendor's destroy that
  // fails (an isolated plugin's crash in it) leaves no file behind.
  for (auto& p : loaded.plugins) {
    if (absl::Status closed = p->Close(); !closed.ok()) {
      progress.Clear();
      return fail(closed, 1);
    }
  }
  progress.Update(absl::StrCat("writing ", output));
  const Durability durability =
      fsync ? Durability::kDurable : Durability::kAtomic;
  const auto save_start = std::chrono::steady_clock::now();
  const absl::Status written =
      WriteApplyOutput(*model, *report, mode, output, durability);
  progress.Clear();
  if (!written.ok()) return fail(written, 1);
  const double save_seconds = seconds_since(save_start);
  const double total_seconds = seconds_since(job_start);
  if (json) {
    JsonWriter j(2);
    WriteReportJson(*report, mode_name, output, j);
    // The job as a whole: {"load": s, "apply": s, "save": s, "total": s}.
    j.Key("job_seconds").BeginObject();
    j.Key("load").Double(load_seconds).Key("apply").Double(report->seconds);
    j.Key("save").Double(save_seconds).Key("total").Double(total_seconds);
    j.EndObject().EndObject();
    out << j.output() << "\n";
  } else {
    out << "graft apply (" << mode_name << "): " << model_path << " -> "
        << output << "\n";
    for (const auto& p : report->plugins) {
      out << "  plugin " << p.vendor << " " << p.plugin_version << " for "
          << p.soc_model << "\n";
    }
    if (loaded.plugins.size() > 1) {
      out << "  vendor priority: " << DescribePriority(loaded.plugins)
          << "\n";
    }
    out << "  " << report->Summary();
    out << absl::StrFormat(
        "  total %.1f ms: load %.1f, apply %.1f (above), save %.1f\n",
        total_seconds * 1e3, load_seconds * 1e3, report->seconds * 1e3,
        save_seconds * 1e3);
  }
  return 0;
}

}  // namespace graft::tools
