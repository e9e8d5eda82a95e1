#include "plugins/vendor_priority.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "absl/strings/str_join.h"
#include "graft_common.h"

namespace graft {

int DefaultPriorityRank(const PluginInfo& info) {
  if (info.hardware_kinds & GRAFT_HARDWARE_KIND_NPU) return 0;
  if (info.hardware_kinds & GRAFT_HARDWARE_KIND_GPU) return 1;
  if (info.hardware_kinds & GRAFT_HARDWARE_KIND_DSP) return 2;
  return 3;
}

std::vector<size_t> VendorPriorityOrder(
    absl::Span<const PluginInfo* const> infos,
    absl::Span<const std::string> priority,
    std::vector<std::string>* unmatched) {
  std::vector<size_t> order(infos.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PluginInfo& x = *infos[a];
    const PluginInfo& y = *infos[b];
    const int rx = DefaultPriorityRank(x), ry = DefaultPriorityRank(y);
    if (rx != ry) return rx < ry;
    if (x.vendor != y.vendor) return x.vendor < y.vendor;
    return x.path < y.path;
  });
  if (priority.empty()) return order;
  std::vector<size_t> named;
  std::set<std::string> seen;
  for (const std::string& vendor : priority) {
    if (!seen.insert(vendor).second) continue;
    auto it = std::find_if(order.begin(), order.end(), [&](size_t i) {
      return infos[i]->vendor == vendor;
    });
    if (it != order.end()) {
      named.push_back(*it);
    } else if (unmatched != nullptr) {
      unmatched->push_back(vendor);
    }
  }
  return named;
}

std::vector<std::unique_ptr<CompilerPlugin>> OrderByVendorPriority(
    std::vector<std::unique_ptr<CompilerPlugin>> plugins,
    absl::Span<const std::string> priority,
    std::vector<std::string>* unmatched) {
  std::vector<const PluginInfo*> infos;
  for (const auto& p : plugins) infos.push_back(&p->info());
  std::vector<std::unique_ptr<CompilerPlugin>> out;
  for (size_t i : VendorPriorityOrder(infos, priority, unmatched)) {
    out.push_back(std::move(plugins[i]));
  }
  return out;
}

std::string DescribePriority(
    absl::Span<const std::unique_ptr<CompilerPlugin>> plugins) {
  std::vector<std::string> names;
  for (const auto& p : plugins) names.push_back(p->info().vendor);
  return absl::StrJoin(names, " > ");
}

}  // namespace graft
