// `graft apply`: applies vendor compiler plugins to a model ahead of time.
//
// Modes (--mode): info (the plugins found), noop (load and save), partition
// (the outlined model, no compiling, and the per-op report), compile (the
// bytecode modules as files), apply (the compiled model; the default).
#ifndef GRAFT_TOOLS_APPLY_CMD_H_
#define GRAFT_TOOLS_APPLY_CMD_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/file_util.h"
#include "core/model.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"
#include "tools/json_writer.h"

namespace graft::tools {

// The default plugin directory: $GRAFT_PLUGIN_DIR, else, for an installed
// P/bin/graft, P/lib/graft/vendors, else vendor_libs/ beside the running
// graft executable (where the build puts vendor libraries).
std::string DefaultPluginDir();

struct PluginSelection {
  std::string plugin_dir;
  // Comma-separated plugin files; when set, plugin_dir is not searched.
  std::string plugin_paths;
  // Comma-separated vendor names to use, highest priority first (the
  // order LoadPlugins returns them in); empty uses all found, in the
  // default order (plugins/vendor_priority.h).
  std::string vendors;
  // Comma-separated "key=value" (every plugin) or "vendor:key=value".
  // --plugin-option occurrences: [VENDOR:]KEY=VALUE[,KEY=VALUE...], or one
  // LiteRT flag KEY=VALUE whose value is taken whole (it may hold commas).
  std::vector<std::string> plugin_options;
  // Run each plugin's partition and compile in a child process with a time
  // limit (plugins/isolated_plugin.h), so a crash or hang in vendor code is
  // an error naming the vendor.
  bool isolate = true;
};

struct LoadedPlugins {
  std::vector<std::unique_ptr<CompilerPlugin>> plugins;
  // Files that were found but could not be loaded, with why.
  std::vector<std::string> skipped;
};

// Loads the selected plugins. Explicitly named plugins (paths or vendors)
// must load; other files in the directory that fail are listed in `skipped`.
absl::StatusOr<LoadedPlugins> LoadPlugins(const PluginSelection& selection);

// Another instance of the plugin library `info` came from, created with the
// options LoadPlugins gives it: the library is not loaded again while the
// first instance holds it.
absl::StatusOr<std::unique_ptr<CompilerPlugin>> LoadAnotherInstance(
    const PluginSelection& selection, const PluginInfo& info);

// Writes what `mode` produces: the modules of `report` as files in the
// directory `output` (kCompile), else `model`; each file atomically.
absl::Status WriteApplyOutput(const Model& model, const ApplyReport& report,
                              ApplyMode mode, const std::string& output,
                              Durability durability);

// Opens the report's JSON object and writes its keys, leaving it open for
// the caller's keys.
void WriteReportJson(const ApplyReport& report, const std::string& mode,
                     const std::string& output, JsonWriter& j);

int RunApplyCommand(absl::Span<const std::string> args, std::ostream& out,
                    std::ostream& err);

inline constexpr char kApplySummary[] =
    "apply vendor compiler plugins to a model (info, noop, partition, "
    "compile, apply)";

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_APPLY_CMD_H_
