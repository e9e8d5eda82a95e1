// The placement map as a page people look at: one self-contained HTML file
// with the graph drawn as inline SVG (tools/placement_map.h has the map).
#ifndef GRAFT_TOOLS_PLACEMENT_PAGE_H_
#define GRAFT_TOOLS_PLACEMENT_PAGE_H_

#include <cstddef>
#include <string>

#include "tools/placement_map.h"

namespace graft::tools {

// One self-contained HTML page (no scripts, no external resources): the
// graph of the original ops as an inline SVG (layered top to bottom, each
// op a box filled with its place's colour, class "op place-<place>", its
// partition outlined; the first kMaxGraphOps ops of a larger model), a
// legend with the totals per place and per dispatch op, the refusal
// reasons of ops no vendor took, and a table of every original op with a
// bar for its share of the time.
inline constexpr size_t kMaxGraphOps = 4000;
std::string PlacementMapHtml(const PlacementMap& map,
                             const std::string& model_path);

// The CSS class suffix of a place: "cpu", "cpu-fallback", "folded",
// "v-<vendor>" (the page's class "place-<this>").
std::string PlaceClass(const PlacedOp& op);

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_PLACEMENT_PAGE_H_
