// GraftPluginAdapter: a compiler plugin speaking Graft's own ABI
// (c_api/graft_compiler_plugin.h) as a CompilerPlugin. It checks the ABI
// version before anything else, checks every table the plugin returns,
// shows it the graph as graft_graph_view_t (graph_view.h) and converts its
// statuses (core/vendor_library.h).
#ifndef GRAFT_PLUGINS_GRAFT_PLUGIN_ADAPTER_H_
#define GRAFT_PLUGINS_GRAFT_PLUGIN_ADAPTER_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/vendor_library.h"
#include "graft_compiler_plugin.h"
#include "plugins/compiler_plugin.h"

namespace graft {

class GraftPluginAdapter : public CompilerPlugin {
 public:
  // Takes `library` (already open) and creates an instance with `options`.
  // Errors name the file: not a Graft plugin (no
  // graft_compiler_plugin_abi_version), another ABI major, a missing
  // required function, create failing, malformed info.
  static absl::StatusOr<std::unique_ptr<CompilerPlugin>> Create(
      std::unique_ptr<DynamicLibrary> library,
      const std::vector<std::pair<std::string, std::string>>& options);
  ~GraftPluginAdapter() override;

  absl::Status CheckCompatibility(const std::string& soc_model) override;
  absl::StatusOr<std::vector<OpDecision>> Partition(
      const Model& model, SubgraphId subgraph, const std::string& soc_model,
      absl::Span<const uint8_t> original_tflite) override;
  absl::StatusOr<CompiledPartitions> Compile(
      const Model& model, absl::Span<const PartitionToCompile> partitions,
      const std::string& soc_model) override;

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
  GraftPluginAdapter() = default;

  std::unique_ptr<DynamicLibrary> library_;
  std::unique_ptr<HostApi> host_;
  Api api_{};
  graft_compiler_plugin_t* instance_ = nullptr;
};

}  // namespace graft

#endif  // GRAFT_PLUGINS_GRAFT_PLUGIN_ADAPTER_H_
