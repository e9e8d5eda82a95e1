// Grouping selected ops into partitions.
#ifndef GRAFT_CORE_PARTITION_H_
#define GRAFT_CORE_PARTITION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/model.h"

namespace graft {

// Marks an op no one selected.
inline constexpr int64_t kUnselected = -1;

struct Partition {
  // The label its ops were selected with (see GroupOps).
  int64_t label = kUnselected;
  // Member ops, ascending (so in execution order).
  std::vector<OpId> ops;
};

// Groups the selected ops of `subgraph` into partitions.
//
// `labels[i]` is kUnselected or a label >= 0 for op i: ops with different
// labels never share a partition (a label encodes who took the op and the
// group id it asked for). Each partition is a weakly connected set of ops of
// one label, joined through the tensors between them, such that replacing
// every partition by a single op leaves the graph acyclic: where an op outside
// a group depends on the group and feeds back into it, the group splits. The
// grouping is maximal in that no two partitions joined by a tensor could be
// merged without creating a cycle.
//
// Ops of a label in `merge_unconnected` are grouped further, as LiteRT's
// host groups a plugin's choices: in the order of their first op, each
// group joins the previous group of its label when no path leads between
// them (the joint group is then not weakly connected, but still leaves the
// graph acyclic), so independent components share one partition.
//
// Deterministic: partitions are ordered by their first op. Runs in
// near-linear time in the size of the graph for neural-network graphs.
// Errors: labels.size() != number of ops, or an op reading a tensor produced
// by a later op (the subgraph is not in execution order).
absl::StatusOr<std::vector<Partition>> GroupOps(
    const Subgraph& subgraph, absl::Span<const int64_t> labels,
    absl::Span<const int64_t> merge_unconnected = {});

}  // namespace graft

#endif  // GRAFT_CORE_PARTITION_H_
