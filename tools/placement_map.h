// The placement map: every op of a model as `graft apply` was given it, with
// where it ran in the compiled model (a vendor, the CPU, or the CPU in place
// of the vendor it was compiled for) and, from a profile, its share of the
// run time. A dispatch op is one row of the runtime's profile; here its ops
// are rows of their own, mapped back through the manifest's op_origins
// (core/compiled_format.h).
//
// Time of an op a vendor ran is attributed: the vendor reports one time per
// dispatch op, so that time is divided evenly among the ops it replaced
// (marked `attributed`; an even split, not a measurement). Ops that ran on
// the CPU, a fallback subgraph's included, have their own measured time.
#ifndef GRAFT_TOOLS_PLACEMENT_MAP_H_
#define GRAFT_TOOLS_PLACEMENT_MAP_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/model.h"
#include "dispatch/runtime_report.h"
#include "tools/json_writer.h"

namespace graft::tools {

struct PlacedOp {
  // The op's index in its subgraph of the model apply was given.
  int32_t op = 0;
  std::string name;    // "CONV_2D"
  std::string output;  // its first output tensor's name ("" if none)
  // "vendor", "cpu", "cpu fallback", "folded at load", ... (WhereName).
  std::string where;
  // The vendor for `where` "vendor" and "cpu fallback" ("" otherwise).
  std::string vendor;
  // The op of the compiled model that ran it: its index and name
  // ("xnnpack:partition_0" for a dispatch op), and how many original ops it
  // stands for (1 for an op on its own).
  int32_t compiled_op = 0;
  std::string compiled_name;
  int32_t group_size = 1;
  // With a profile: time per run (total over the profiled runs / runs), and
  // its share of the run's wall time; -1 without a profile.
  double ms_per_run = -1;
  double share = -1;
  // The time is an even share of its dispatch op's, not measured per op.
  bool attributed = false;
  // The time is the vendor's own, measured: the dispatch library's profile
  // events of the instructions the plugin's debug map (in the manifest)
  // names for this op, summed (ms_per_run), per run.
  bool vendor_measured = false;
  // Why no vendor took it, as the manifest records it ("" when it was
  // taken, or the manifest records no reasons).
  std::string refusal;
  // The original ops whose outputs it reads (ascending, unique): the
  // graph's edges. Inside a partition whose fallback subgraph was stripped
  // the edges are not known; its ops are then shown as a chain.
  std::vector<int32_t> inputs_from;
};

// A dispatch op of the compiled model and the original ops it replaced.
struct PlacedDispatchOp {
  int32_t compiled_op = 0;
  std::string compiled_name;  // "xnnpack:partition_0"
  std::string where;          // "vendor" or "cpu fallback"
  std::string vendor;
  // Indices into PlacementMap::ops' `op`, ascending.
  std::vector<int32_t> original_ops;
  // With a profile: the host's time per run for the op, and the part of it
  // the vendor's events measured per instruction (-1 without events).
  double ms_per_run = -1;
  double vendor_measured_ms = -1;
};

struct PlacementMap {
  int32_t subgraph = 0;
  std::string subgraph_name;
  // Where the original indices came from: "manifest" (a compiled model),
  // "identity" (a model not compiled by Graft, run as it is).
  std::string origins;
  std::vector<PlacedOp> ops;  // by original index
  // Every dispatch op, in compiled-model order.
  std::vector<PlacedDispatchOp> dispatch_ops;
  // With a profile: the profiled runs and the median run time.
  int64_t runs = 0;
  double run_ms = -1;
  // The manifest records why ops were refused (apply of this Graft).
  bool has_refusals = false;
  // Ops whose time is the vendor's measurement, and those attributed.
  int64_t vendor_measured_ops = 0;
  int64_t attributed_ops = 0;
};

// The map of entry subgraph `subgraph` of `model` (the model the runtime
// loaded), from the runtime's report and, if not null, its profile.
// FailedPrecondition when the model has dispatch ops but its manifest does
// not record their origins (compiled by a Graft before they were recorded,
// or by LiteRT's tools).
absl::StatusOr<PlacementMap> BuildPlacementMap(const Model& model,
                                               const RuntimeReport& report,
                                               const RuntimeProfile* profile,
                                               int32_t subgraph);

// A table: one line per original op (index, op, output tensor, where,
// compiled op, time and share with '~' marking attributed times and '=' the
// vendor's measured ones), the
// share of time per place, then each dispatch op with the original ops it
// replaced ("op 0 xnnpack:partition_0 (xnnpack) replaced ops 0-63").
std::string PlacementMapText(const PlacementMap& map);

// {"subgraph", "origins", "runs", "run_ms", "time_attribution" ("even",
//  or "vendor_events" when some vendor time is measured per op),
//  "ops": [{"op", "name", "output", "where", "vendor", "compiled_op",
//  "compiled_name", "group_size", "ms_per_run", "share", "attributed",
//  "time_source" ("host", "vendor", "attributed" or null), "refusal",
//  "inputs_from"}],
//  "dispatch_ops": [{"compiled_op", "compiled_name", "where", "vendor",
//  "ms_per_run", "vendor_measured_ms", "original_ops": [{"op", "name"}]}]}.
void PlacementMapJson(const PlacementMap& map, JsonWriter& j);

// Shared by the page (placement_page.h) and the exports (model_explorer.h,
// chrome_trace.h).

// What a dispatch op of `model` names: its vendor, entry point and fallback
// subgraph (-1 when stripped). ReadDispatchInfo
// fills it and returns true for a dispatch op (either ABI), false for
// other ops.
struct DispatchInfo {
  std::string vendor, entry_point;
  int32_t fallback = -1;
  uint32_t module_buffer = 0;
};
bool ReadDispatchInfo(const Model& model, const tfl::OperatorT& op,
                      DispatchInfo* out);

// The place an op is counted under: its vendor, "cpu", "cpu fallback" or
// "folded at load".
std::string PlaceKey(const PlacedOp& op);

struct PlaceTotal {
  std::string key;
  int64_t ops = 0;
  double ms = 0;
};
// Places in order of first appearance, with their op counts and time.
std::vector<PlaceTotal> PlaceTotals(const PlacementMap& map);

// Each place's colour: the CPU grey, a fallback red, vendors from a
// palette in order of first appearance.
std::map<std::string, std::string> PlaceColours(
    const std::vector<PlaceTotal>& totals);

// "0-4, 7, 9-12" for ascending ids.
std::string IdRanges(const std::vector<int32_t>& ids);

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_PLACEMENT_MAP_H_
