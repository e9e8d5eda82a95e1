// CompilerPlugin: one loaded vendor compiler plugin (a shared library
// exporting the functions of c_api/graft_compiler_plugin.h) and one instance
// of it. This is the only code that calls into a plugin: it checks the ABI
// version before anything else, checks every table the plugin returns, and
// converts statuses (core/vendor_library.h), so the rest of Graft sees plain
// C++ values that have been validated.
#ifndef GRAFT_PLUGINS_COMPILER_PLUGIN_H_
#define GRAFT_PLUGINS_COMPILER_PLUGIN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/vendor_library.h"
#include "graft_compiler_plugin.h"

namespace graft {

struct PluginInfo {
  std::string vendor;
  std::string plugin_version;
  std::string description;
  std::vector<std::string> soc_models;
  uint32_t abi_version = 0;
  uint32_t flags = 0;
  uint32_t hardware_kinds = 0;
  uint32_t bytecode_format_version = 0;
  struct Option {
    std::string name, default_value, description;
  };
  std::vector<Option> options;
  // The library file.
  std::string path;
};

struct OpDecision {
  bool taken = false;
  int32_t group_id = 0;
  int32_t reason_code = GRAFT_PARTITION_REASON_UNSPECIFIED;
  std::string reason;
};

// A compile's result, checked: every call's module exists, entry points are
// unique per module, the stamp names this plugin's vendor.
struct CompiledPartitions {
  struct Call {
    std::string entry_point;
    size_t module_index = 0;
  };
  struct DebugEntry {
    size_t module_index;
    uint64_t vendor_location;
    int32_t original_op_index;
    int32_t partition_index;
  };
  // Views of the plugin's module bytes, valid while `owner` lives.
  std::vector<absl::Span<const uint8_t>> modules;
  std::vector<Call> calls;
  std::vector<DebugEntry> debug_map;
  std::string stamp_vendor;
  std::string stamp_plugin_version;
  std::string stamp_soc_model;
  uint32_t stamp_abi_version = 0;
  uint32_t bytecode_format_version = 0;
  // Keeps the plugin's result alive; releasing it frees the modules.
  std::shared_ptr<const void> owner;
};

// The printable name of a GRAFT_PARTITION_REASON_* code ("UNSUPPORTED_OP").
const char* PartitionReasonName(int32_t code);

// Modules larger than this are refused as a misbehaving plugin.
inline constexpr uint64_t kMaxModuleBytes = uint64_t{1} << 32;

class CompilerPlugin {
 public:
  // Loads the plugin at `path` and creates an instance with `options`.
  // Errors name the file and what is wrong: not loadable, not a Graft
  // plugin (no graft_compiler_plugin_abi_version), another ABI major, a
  // missing required function, create failing, malformed info.
  static absl::StatusOr<std::unique_ptr<CompilerPlugin>> Load(
      const std::string& path,
      const std::vector<std::pair<std::string, std::string>>& options = {});
  ~CompilerPlugin();
  CompilerPlugin(const CompilerPlugin&) = delete;
  CompilerPlugin& operator=(const CompilerPlugin&) = delete;

  const PluginInfo& info() const { return info_; }
  // "example plugin (libgraft_compiler_plugin_example.so)" for messages.
  const std::string& label() const { return label_; }

  // OK if the plugin compiles for `soc_model` (its own check when it exports
  // one, else membership in info().soc_models).
  absl::Status CheckCompatibility(const std::string& soc_model);

  // One decision per op of `graph` (graph->num_ops).
  absl::StatusOr<std::vector<OpDecision>> Partition(
      const graft_graph_view_t* graph, const std::string& soc_model);

  // Compiles `partitions`; the result has one call per partition.
  absl::StatusOr<CompiledPartitions> Compile(
      absl::Span<const graft_graph_view_t* const> partitions,
      const std::string& soc_model);

 private:
  struct Api {
    graft_compiler_plugin_abi_version_fn abi_version;
    graft_compiler_plugin_create_fn create;
    graft_compiler_plugin_destroy_fn destroy;
    graft_compiler_plugin_get_info_fn get_info;
    graft_compiler_plugin_check_compatibility_fn check_compatibility;  // opt.
    graft_compiler_plugin_partition_fn partition;
    graft_compiler_plugin_compile_fn compile;
    graft_compiler_plugin_compiled_result_destroy_fn compiled_result_destroy;
  };
  CompilerPlugin() = default;

  std::unique_ptr<DynamicLibrary> library_;
  std::unique_ptr<HostApi> host_;
  Api api_{};
  graft_compiler_plugin_t* instance_ = nullptr;
  PluginInfo info_;
  std::string label_;
};

// The plugin files in `dir`: every libgraft_compiler_plugin_*.so, sorted by
// name. NotFound when the directory does not exist.
absl::StatusOr<std::vector<std::string>> FindPluginFiles(
    const std::string& dir);

}  // namespace graft

#endif  // GRAFT_PLUGINS_COMPILER_PLUGIN_H_
