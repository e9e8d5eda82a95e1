// Options for LiteRT compiler plugins, named as LiteRT's apply_plugin tool
// names its flags (--plugin-option=intel_openvino_graph_backends=cpu), and
// delivered the way LiteRT's host delivers them: as opaque option payloads
// the plugin looks up by identifier at create. The payload formats were
// read off ai-edge-litert 2.3.0's host (apply_plugin_main) as it calls each
// plugin; only vendors whose options are known here take options.
#ifndef GRAFT_PLUGINS_LITERT_PLUGIN_OPTIONS_H_
#define GRAFT_PLUGINS_LITERT_PLUGIN_OPTIONS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "plugins/compiler_plugin.h"
#include "plugins/litert_compiler_context.h"

namespace graft {

// The SoC manufacturer whose LiteRT plugin takes option `key`, by its
// namespace as apply_plugin names its flags ("intel_openvino_..." is
// IntelOpenVINO's, "qualcomm_..." Qualcomm's, also mediatek_, google_tensor_,
// samsung_); "" for a key in no LiteRT vendor's namespace.
absl::string_view LiteRtOptionOwner(absl::string_view key);

// The options the plugin of SoC manufacturer `manufacturer` accepts, with
// defaults and descriptions (empty for vendors whose options are unknown).
std::vector<PluginInfo::Option> LiteRtPluginOptions(
    absl::string_view manufacturer);

// Sets on `host` every payload LiteRT's host gives the plugin of
// `manufacturer`, built from the `options` in its namespace (KEY=VALUE in
// apply_plugin's flag names; options of other namespaces are another
// plugin's and skipped). InvalidArgument naming the option and listing the
// accepted ones for an unknown key of its namespace, a key in no LiteRT
// namespace, or a malformed value.
absl::Status SetLiteRtPluginOptions(
    absl::string_view manufacturer,
    const std::vector<std::pair<std::string, std::string>>& options,
    LiteRtHostOptions& host);

}  // namespace graft

#endif  // GRAFT_PLUGINS_LITERT_PLUGIN_OPTIONS_H_
