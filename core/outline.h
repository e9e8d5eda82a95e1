// Outlining: moving each partition of a subgraph into a subgraph of its own.
#ifndef GRAFT_CORE_OUTLINE_H_
#define GRAFT_CORE_OUTLINE_H_

#include <cstddef>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/model.h"
#include "core/partition.h"

namespace graft {

struct OutlinedPartition {
  // The new subgraph (appended to Model::subgraphs) holding the ops.
  SubgraphId subgraph = -1;
  // The op that replaced the partition in the source subgraph.
  OpId call_op = -1;
};

// Builds the op that stands for partition `index`, now outlined as subgraph
// `outlined`: sets opcode_index and options. Inputs and outputs are set by
// OutlinePartitions and must be left alone.
using MakeCallOp = absl::FunctionRef<absl::Status(
    size_t index, SubgraphId outlined, tfl::OperatorT& call)>;

// For each partition of subgraph `source` (disjoint, each acyclic once
// contracted, as GroupOps makes them), appends a subgraph holding its ops and
// replaces them in `source` by one op made by `make_call`.
//
// The outlined subgraph's inputs are the non-constant tensors its ops read
// but do not produce: those that are inputs of `source` first, in its input
// order, then the others in order of first use (LiteRT's order, so a vendor
// compiler sees the same signature from Graft as from LiteRT); they are its
// first tensors, in that order. Its outputs are the tensors its
// ops produce that are read outside it or are outputs of `source` (in order of
// production). Constant tensors are copied with the partition and keep their
// buffer ids, so weights are never duplicated; a constant used by several
// partitions appears in each. The call op reads the inputs and writes the
// outputs, in the same order.
//
// `source` keeps a valid execution order: ops stay where they were and each
// call op runs as early as its inputs allow, no earlier than the partition's
// first op. Tensors only partitions used are dropped from `source` and the
// other tensor ids renumbered (signatures follow). Other subgraphs' ids do
// not change.
//
// The outlined subgraph's ops are the partition's, in the partition's
// (ascending) order. Kept ops may change order (the sort above), so when
// `kept_ops` is not null it receives, for each op of `source` after
// outlining, its index before outlining, or -1 for a call op.
//
// On error the model is unchanged.
absl::StatusOr<std::vector<OutlinedPartition>> OutlinePartitions(
    Model& model, SubgraphId source, absl::Span<const Partition> partitions,
    MakeCallOp make_call, std::vector<OpId>* kept_ops = nullptr);

// A standalone model holding copies of `model.subgraphs[subgraphs[i]]` as
// its subgraphs, in order, with the operator codes and buffers they use
// (renumbered; buffer contents shared, not copied). Subgraph indices inside
// ops (calls, control flow) are not remapped.
Model ExtractSubgraphsModel(const Model& model,
                            absl::Span<const SubgraphId> subgraphs);

}  // namespace graft

#endif  // GRAFT_CORE_OUTLINE_H_
