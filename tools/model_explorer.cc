#include "tools/model_explorer.h"

#include <map>
#include <vector>

#include "tools/json_writer.h"

namespace graft::tools {

std::string ModelExplorerNodeData(const PlacementMap& map,
                                  const std::string& graph_id) {
  std::vector<PlaceTotal> totals = PlaceTotals(map);
  std::map<std::string, std::string> colour = PlaceColours(totals);
  const bool timed = map.runs > 0;
  JsonWriter j(2);
  j.BeginObject().Key(graph_id).BeginObject().Key("results").BeginObject();
  std::map<std::string, bool> seen;
  for (const PlacedOp& p : map.ops) {
    // Model Explorer matches a node by any of its output tensors' names.
    if (p.output.empty() || seen[p.output]) continue;
    seen[p.output] = true;
    const std::string key = PlaceKey(p);
    double value = 0;
    if (timed) {
      value = p.ms_per_run >= 0 ? p.ms_per_run * 1e3 : 0;
    } else {
      for (size_t k = 0; k < totals.size(); ++k) {
        if (totals[k].key == key) value = static_cast<double>(k);
      }
    }
    j.Key(p.output).BeginObject().Key("value").Double(value);
    j.Key("bgColor").String(colour[key]).EndObject();
  }
  j.EndObject();
  if (!timed) {
    // Without times, the value is the place's index: one threshold each,
    // so the legend reads the same colours.
    j.Key("thresholds").BeginArray();
    for (size_t k = 0; k < totals.size(); ++k) {
      j.BeginObject().Key("value").Int(static_cast<int64_t>(k));
      j.Key("bgColor").String(colour[totals[k].key]).EndObject();
    }
    j.EndArray();
  }
  j.EndObject().EndObject();
  return j.output();
}

}  // namespace graft::tools
