// The placement map exported for Google's Model Explorer (ai-edge-model-
// explorer), whose graph view colours nodes by the data it is given.
#ifndef GRAFT_TOOLS_MODEL_EXPLORER_H_
#define GRAFT_TOOLS_MODEL_EXPLORER_H_

#include <string>

#include "tools/placement_map.h"

namespace graft::tools {

// The per-op placement as Model Explorer node data (ai-edge-model-explorer's
// ModelNodeData: {graph id: {"results": {node key: {"value", "bgColor"}},
// "thresholds": [...]}}), keyed by each op's first output tensor name (the
// node key Model Explorer matches against a node's outputs), under graph id
// `graph_id`. The value is the op's time per run in microseconds with a
// profile, else the place's index in the legend; bgColor its place's colour.
std::string ModelExplorerNodeData(const PlacementMap& map,
                                  const std::string& graph_id);

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_MODEL_EXPLORER_H_
