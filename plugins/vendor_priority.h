// Vendor priority: which compiler plugin gets an op that several of them
// take. The apply pipeline offers each op to the plugins in order and the
// first that takes it keeps it (ApplyPlugins), so the order of the plugin
// list is the priority; these functions decide that order, the same way for
// `graft apply`, on-device compile (`graft run`, `graft bench`) and apps
// (OnDeviceOptions::vendors, RuntimeOptions::vendor_priority).
//
// - Named (`--vendor=a,b`, a priority list): the plugins of the vendors
//   named, in the order named (a first); plugins of other vendors are not
//   used.
// - Default (nothing named): every plugin found, those of dedicated
//   accelerators first (hardware kinds NPU, then GPU, then DSP, then the
//   rest, e.g. CPU-only backends such as xnnpack), ties by vendor name, then
//   by file path. The order never depends on the directory listing.
#ifndef GRAFT_PLUGINS_VENDOR_PRIORITY_H_
#define GRAFT_PLUGINS_VENDOR_PRIORITY_H_

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "plugins/compiler_plugin.h"

namespace graft {

// The default-order rank of a plugin (lower first): 0 NPU, 1 GPU, 2 DSP, 3
// anything else.
int DefaultPriorityRank(const PluginInfo& info);

// Indices into `infos` in priority order (see above). With a non-empty
// `priority`, a vendor named twice counts once, and when two plugins have
// the vendor the earlier one in default order is kept; names no plugin has
// are appended to `unmatched` (if not null) in the order named.
std::vector<size_t> VendorPriorityOrder(
    absl::Span<const PluginInfo* const> infos,
    absl::Span<const std::string> priority,
    std::vector<std::string>* unmatched = nullptr);

// `plugins` reordered (and, with a non-empty `priority`, filtered) by
// VendorPriorityOrder.
std::vector<std::unique_ptr<CompilerPlugin>> OrderByVendorPriority(
    std::vector<std::unique_ptr<CompilerPlugin>> plugins,
    absl::Span<const std::string> priority,
    std::vector<std::string>* unmatched = nullptr);

// "xnnpack > example": the order as users read it.
std::string DescribePriority(
    absl::Span<const std::unique_ptr<CompilerPlugin>> plugins);

}  // namespace graft

#endif  // GRAFT_PLUGINS_VENDOR_PRIORITY_H_
