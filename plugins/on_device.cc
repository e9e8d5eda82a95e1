#include "plugins/on_device.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/compiled_format.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/status.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"
#include "plugins/isolated_plugin.h"
#include "plugins/vendor_priority.h"

namespace graft {
namespace {

uint64_t Mix(uint64_t seed, absl::string_view text) {
  // Length first, so ("ab", "c") and ("a", "bc") differ.
  std::string framed = absl::StrCat(text.size(), ":", text);
  return Fingerprint64(
      {reinterpret_cast<const uint8_t*>(framed.data()), framed.size()}, seed);
}

bool HasDispatchOps(const Model& model) {
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      if (IsDispatchOp(model, op) || IsLiteRtDispatchOp(model, op)) return true;
    }
  }
  return false;
}

// A cache that cannot be written (not creatable, read-only, full) costs
// the next load a compile, not this one: warn and go on without it.
void NoCache(const OnDeviceOptions& options, absl::string_view why,
             OnDeviceResult* result) {
  std::string w = absl::StrCat("compile cache ", options.cache_dir, ": ", why,
                               "; compiling on the device without a cache");
  std::fprintf(stderr, "graft: warning: %s\n", w.c_str());
  result->warnings.push_back(std::move(w));
  result->cache_path.clear();
}

}  // namespace

absl::StatusOr<OnDeviceResult> CompileOnDevice(const std::string& model_path,
                                               const OnDeviceOptions& options) {
  OnDeviceResult result;
  GRAFT_ASSIGN_OR_RETURN(Model model, LoadModel(model_path));
  if (HasDispatchOps(model)) {
    result.model = std::move(model);
    return result;
  }

  GRAFT_ASSIGN_OR_RETURN(std::vector<std::string> files,
                         FindPluginFiles(options.plugin_dir));
  std::vector<std::unique_ptr<CompilerPlugin>> plugins;
  for (const std::string& file : files) {
    // A plugin that cannot load on this device (its vendor SDK is absent)
    // leaves the others to compile; the caller says which were skipped.
    absl::StatusOr<std::unique_ptr<CompilerPlugin>> loaded =
        LoadCompilerPlugin(file, options.plugin_options);
    if (!loaded.ok()) {
      result.skipped.push_back(std::string(loaded.status().message()));
      continue;
    }
    plugins.push_back(options.isolate_plugins
                          ? IsolatePlugin(*std::move(loaded))
                          : *std::move(loaded));
  }
  std::vector<std::string> unmatched;
  plugins =
      OrderByVendorPriority(std::move(plugins), options.vendors, &unmatched);
  for (const std::string& v : unmatched) {
    result.skipped.push_back(absl::StrCat("vendor '", v,
                                          "' of the priority list: no "
                                          "compiler plugin in ",
                                          options.plugin_dir));
  }
  if (plugins.empty()) {
    std::string why;
    for (const std::string& s : result.skipped) absl::StrAppend(&why, "; ", s);
    return absl::NotFoundError(
        absl::StrCat(model_path, ": no compiler plugin in ", options.plugin_dir,
                     " to compile it on the device", why));
  }

  std::string cache_path;
  if (!options.cache_dir.empty()) {
    struct stat st;
    if (::stat(model_path.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat(model_path, ": cannot stat"));
    }
    std::error_code ec;
    std::string absolute = std::filesystem::absolute(model_path, ec).string();
    uint64_t key = Mix(Fingerprint64({}), absolute);
    key = Mix(key, absl::StrCat(st.st_size, "/", st.st_mtim.tv_sec, ".",
                                st.st_mtim.tv_nsec));
    for (const auto& p : plugins) {
      const PluginInfo& i = p->info();
      key = Mix(key, absl::StrCat(i.vendor, "|", i.plugin_version, "|", i.path,
                                  "|", options.soc_model));
    }
    for (const auto& [k, v] : options.plugin_options) {
      key = Mix(key, absl::StrCat(k, "=", v));
    }
    std::filesystem::create_directories(options.cache_dir, ec);
    if (ec) {
      NoCache(options,
              absl::StrCat("cannot create the compile cache: ", ec.message()),
              &result);
    } else {
      cache_path = absl::StrFormat(
          "%s/%s.%016x.tflite", options.cache_dir,
          std::filesystem::path(model_path).stem().string(), key);
      result.cache_path = cache_path;
      if (std::filesystem::exists(cache_path, ec)) {
        auto cached = LoadModel(cache_path);
        if (cached.ok()) {
          result.model = std::move(*cached);
          result.cache_hit = true;
          return result;
        }
        // A damaged cache entry is recompiled, not fatal.
      }
    }
  }

  std::vector<CompilerPlugin*> raw;
  for (auto& p : plugins) raw.push_back(p.get());
  ApplyOptions apply;
  apply.soc_model = options.soc_model;
  apply.progress = options.progress;
  auto report = ApplyPlugins(model, raw, apply);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        absl::StrCat(model_path, ": on-device compile: ",
                                     report.status().message()));
  }
  result.summary = report->Summary();
  result.priority = DescribePriority(plugins);
  if (cache_path.empty()) {
    result.model = std::move(model);
    return result;
  }
  // Reload from the cache file so bytecode and weights are used in place
  // from the mapping, exactly as on the next (cached) load.
  if (absl::Status saved = SaveModel(model, cache_path); !saved.ok()) {
    NoCache(options,
            absl::StrCat("cannot write the compiled model: ", saved.message()),
            &result);
    result.model = std::move(model);
    return result;
  }
  GRAFT_ASSIGN_OR_RETURN(result.model, LoadModel(cache_path));
  return result;
}

}  // namespace graft
