// On-device compilation: apply the compiler plugins found on the device to an
// uncompiled model at load time, with an on-disk cache so the next load is a
// plain mmap of the compiled file.
//
//   graft::OnDeviceOptions od;
//   od.plugin_dir = "/vendor/lib/graft";
//   od.cache_dir = app_cache_dir;
//   auto model = graft::CompileOnDevice("model.tflite", od);   // Model
//   auto rt = graft::Runtime::LoadModel(*std::move(model), runtime_options);
//
// (It lives in plugins/ because it runs the apply pipeline; the runtime in
// dispatch/ only ever sees the compiled model.)
#ifndef GRAFT_PLUGINS_ON_DEVICE_H_
#define GRAFT_PLUGINS_ON_DEVICE_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/model.h"

namespace graft {

struct OnDeviceOptions {
  // Where libgraft_compiler_plugin_*.so and libLiteRtCompilerPlugin_*.so
  // live.
  std::string plugin_dir;
  // The vendor priority list, highest first: only these vendors' plugins
  // are used, and an op several of them take goes to the one named first
  // (plugins/vendor_priority.h). Names with no plugin in plugin_dir are
  // listed in OnDeviceResult::skipped (one list can serve many devices).
  // Empty: every plugin that loads, in the default order (dedicated
  // accelerators, NPU then GPU then DSP, before CPU backends; then by
  // vendor name). The order is part of the cache key.
  std::vector<std::string> vendors;
  // Options passed to every plugin's create.
  std::vector<std::pair<std::string, std::string>> plugin_options;
  // SoC model to compile for; empty: each plugin's default.
  std::string soc_model;
  // Compiled models are cached here (created if missing); empty disables
  // the cache. A cache that cannot be created or written is a warning
  // (OnDeviceResult::warnings, and stderr): the compile goes on without it.
  std::string cache_dir;
  // Progress lines of the compile (ApplyOptions::progress); may be empty.
  std::function<void(const std::string&)> progress;
  // Run each plugin's partition and compile in a child process with a time
  // limit (isolated_plugin.h): a crashing or hanging vendor compiler is then
  // an error naming it, not the end of the app. Off by default in the
  // library: it forks the app once per call, and in a process whose other
  // threads hold locks the plugin needs (its own thread pools, say) the
  // child can block until the time limit. The CLI turns it on.
  bool isolate_plugins = false;
};

struct OnDeviceResult {
  // The compiled model, mapped from the cache file when there is a cache.
  Model model;
  // True when the cache already held it (no plugin was asked to compile).
  bool cache_hit = false;
  // The cache file ("" without a cache, or when it could not be written).
  std::string cache_path;
  // Said on stderr too: a cache directory that could not be used.
  std::vector<std::string> warnings;
  // The apply summary (empty on a cache hit).
  std::string summary;
  // The plugins used, highest priority first ("xnnpack > example"; empty on
  // a cache hit).
  std::string priority;
  // Plugin files in the directory that could not be loaded, with why (a
  // missing vendor library or symbol), and vendors of `vendors` with no
  // plugin; the others compiled.
  std::vector<std::string> skipped;
};

// Loads `model_path` and returns it compiled by the plugins in
// options.plugin_dir. The cache key covers the model file (path, size,
// modification time), each plugin's vendor, version, SoC model and file, and
// the plugin options: changing any of them compiles anew. A model already
// compiled by Graft is returned as it is. Errors name the model, the plugin
// directory or the vendor.
absl::StatusOr<OnDeviceResult> CompileOnDevice(const std::string& model_path,
                                               const OnDeviceOptions& options);

}  // namespace graft

#endif  // GRAFT_PLUGINS_ON_DEVICE_H_
