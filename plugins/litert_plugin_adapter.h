// LiteRtPluginAdapter: a LiteRT compiler plugin (libLiteRtCompilerPlugin_*.so,
// plugins/litert_compiler_abi.h), loaded unchanged, as a CompilerPlugin.
//
// It checks the plugin's API version before anything else, hands it Graft's
// callback table (litert_compiler_context.h) and its options as LiteRT's host
// does (litert_plugin_options.h), and turns its answers into Graft's: the
// ops it pushes (with partition indices) become taken ops whose group id is
// the partition index, so Graft's own grouping makes the partitions; every
// other op gets the reason "not selected by the <manufacturer> plugin".
// Compile hands the plugin the outlined partitions as one model, one
// subgraph each, and reads back the bytecode modules and one call (entry
// point name, module index) per partition. Every call runs in the calling
// process; IsolatePlugin (isolated_plugin.h) puts them in a child process.
//
// The vendor name Graft uses for a LiteRT plugin is its SoC manufacturer
// ("IntelOpenVINO"), as in LiteRT's build stamp; the plugin version is the
// SDK version it reports.
#ifndef GRAFT_PLUGINS_LITERT_PLUGIN_ADAPTER_H_
#define GRAFT_PLUGINS_LITERT_PLUGIN_ADAPTER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/vendor_library.h"
#include "plugins/compiler_plugin.h"
#include "plugins/litert_compiler_abi.h"
#include "plugins/litert_compiler_context.h"
#include "plugins/litert_plugin_abi_table.h"

namespace graft {

class LiteRtPluginAdapter : public CompilerPlugin {
 public:
  // Takes `library` (already open) and creates an instance with `options`
  // (apply_plugin flag names, e.g. intel_openvino_graph_backends=cpu).
  // Errors name the file: another LiteRT API version, a missing required
  // function, an unknown option, create failing, no SoC models.
  static absl::StatusOr<std::unique_ptr<CompilerPlugin>> Create(
      std::unique_ptr<DynamicLibrary> library,
      const std::vector<std::pair<std::string, std::string>>& options);
  ~LiteRtPluginAdapter() override;

  absl::Status CheckCompatibility(const std::string& soc_model) override;
  absl::StatusOr<std::vector<OpDecision>> Partition(
      const Model& model, SubgraphId subgraph, const std::string& soc_model,
      absl::Span<const uint8_t> original_tflite) override;
  absl::StatusOr<CompiledPartitions> Compile(
      const Model& model, absl::Span<const PartitionToCompile> partitions,
      const std::string& soc_model) override;

 private:
  LiteRtPluginAdapter() = default;
  // "<label>: <what>: <status name> (<code>)".
  absl::Status Error(LiteRtStatus status, absl::string_view what) const;

  std::unique_ptr<DynamicLibrary> library_;
  LiteRtHostOptions options_;
  LiteRtPluginAbiTable api_;
  LiteRtCompilerPlugin instance_ = nullptr;
};

// "kLiteRtStatusErrorUnsupported"-style name of a LiteRT status code.
const char* LiteRtStatusName(int status);

}  // namespace graft

#endif  // GRAFT_PLUGINS_LITERT_PLUGIN_ADAPTER_H_
