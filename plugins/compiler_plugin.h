// CompilerPlugin: one loaded vendor compiler plugin, whichever vendor ABI it
// speaks, as the apply pipeline sees it; the values it passes around
// (PluginInfo, OpDecision, CompiledPartitions); finding and loading plugin
// files.
#ifndef GRAFT_PLUGINS_COMPILER_PLUGIN_H_
#define GRAFT_PLUGINS_COMPILER_PLUGIN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/model.h"
#include "graft_compiler_plugin.h"

namespace graft {

struct PluginInfo {
  std::string vendor;
  std::string plugin_version;
  std::string description;
  std::vector<std::string> soc_models;
  // The ABI version it reports, packed as GRAFT_ABI_VERSION_PACK(major,
  // minor): Graft's ABI for Graft plugins, LiteRT's API (0.1) for LiteRT's.
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
  // Which vendor ABI the plugin speaks.
  enum class Abi { kGraft, kLiteRt } abi = Abi::kGraft;
  // LiteRT plugins: the SDK version they report ("" when they report none).
  std::string sdk_version;
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
  // True when `owner` is memory of Graft's own (not a result the plugin
  // frees), so the modules may be used in place after the plugin is gone.
  bool owner_is_plain_memory = false;
};

// The printable name of a GRAFT_PARTITION_REASON_* code ("UNSUPPORTED_OP").
const char* PartitionReasonName(int32_t code);

// Modules larger than this are refused as a misbehaving plugin: the most a
// module may hold is 4 GiB - 1 (a module of exactly 4 GiB is refused; its
// size does not fit the 32 bits some formats keep).
inline constexpr uint64_t kMaxModuleBytes = (uint64_t{1} << 32) - 1;

// What to compile: an outlined partition.
struct PartitionToCompile {
  // The outlined subgraph holding the partition's ops.
  SubgraphId subgraph = -1;
  // Where its ops came from, and their ids there.
  SubgraphId source_subgraph = -1;
  std::vector<OpId> original_ops;
  // "partition_<n>", for plugins that name what they compile.
  std::string name;
};

// One loaded compiler plugin and one instance of it, of either vendor ABI:
// Graft's own (graft_plugin_adapter.h) or LiteRT's (litert_plugin_adapter.h).
// The adapter is the only code that calls into the plugin: it checks the
// ABI version before anything else, checks every answer, and converts
// statuses, so the apply pipeline sees one kind of plugin and plain,
// validated C++ values.
//
// Not thread-safe: one call at a time.
class CompilerPlugin {
 public:
  virtual ~CompilerPlugin() = default;
  CompilerPlugin(const CompilerPlugin&) = delete;
  CompilerPlugin& operator=(const CompilerPlugin&) = delete;

  const PluginInfo& info() const { return info_; }
  // "example plugin (libgraft_compiler_plugin_example.so)" for messages.
  const std::string& label() const { return label_; }

  // OK if the plugin compiles for `soc_model`.
  virtual absl::Status CheckCompatibility(const std::string& soc_model) = 0;

  // One decision per op of `model.subgraphs[subgraph]`. `original_tflite`
  // is the model as a .tflite file, for plugins that ask for it
  // (GRAFT_COMPILER_PLUGIN_FLAG_WANTS_TFLITE_BUFFERS); empty otherwise.
  virtual absl::StatusOr<std::vector<OpDecision>> Partition(
      const Model& model, SubgraphId subgraph, const std::string& soc_model,
      absl::Span<const uint8_t> original_tflite) = 0;

  // Compiles `partitions` (subgraphs of `model`); the result has one call
  // per partition, in order.
  virtual absl::StatusOr<CompiledPartitions> Compile(
      const Model& model, absl::Span<const PartitionToCompile> partitions,
      const std::string& soc_model) = 0;

  // Ends the vendor's plugin instance now, where its failure can still be
  // reported: an isolated plugin (isolated_plugin.h) runs the vendor's
  // destroy in a child process, so a crash or hang there is an error naming
  // the vendor, not the end of the caller after it wrote its output. Call
  // it once compiled results no longer need the plugin (apply copies or
  // owns what it keeps); nothing else may be called afterwards. The default
  // (in-process adapters, which destroy in their destructor) is OK.
  virtual absl::Status Close() { return absl::OkStatus(); }

 protected:
  CompilerPlugin() = default;
  PluginInfo info_;
  std::string label_;
};

// Loads the plugin at `path`, recognising its ABI by what it exports
// (graft_compiler_plugin_abi_version, or LiteRT's LiteRtCreateCompilerPlugin
// and LiteRtGetCompilerPluginVersion), and creates an instance with
// `options`: a LiteRT plugin gets those in a LiteRT vendor's namespace
// (apply_plugin's flag names, litert_plugin_options.h), a Graft-ABI plugin
// the others. Errors name the file and what is wrong: not
// loadable (with the missing library or symbol dlopen reports), neither
// ABI, another ABI version, a missing required function, create failing.
absl::StatusOr<std::unique_ptr<CompilerPlugin>> LoadCompilerPlugin(
    const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& options = {});

// The plugin files in `dir`: every libgraft_compiler_plugin_*.so and
// libLiteRtCompilerPlugin_*.so, sorted by name. NotFound when the directory
// does not exist.
absl::StatusOr<std::vector<std::string>> FindPluginFiles(
    const std::string& dir);

}  // namespace graft

#endif  // GRAFT_PLUGINS_COMPILER_PLUGIN_H_
