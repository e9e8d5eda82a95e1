// Inlining a called subgraph in place of the op that calls it, and removing
// the subgraphs nothing calls any more.
#ifndef GRAFT_CORE_INLINE_H_
#define GRAFT_CORE_INLINE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/model.h"

namespace graft {

// Replaces op `op` of subgraph `subgraph` by copies of the ops of subgraph
// `callee` (a STABLEHLO_COMPOSITE's decomposition, say), placed where `op`
// was and in the callee's order. Returns the number of ops inserted; the
// ops after them move up by that number less one.
//
// Tensors, as LiteRT's inliner maps them (so a vendor compiler sees the same
// graph from Graft as from LiteRT): the callee's i-th input is `op`'s i-th
// input; `op`'s j-th output tensor keeps its id (so consumers, subgraph
// outputs and signatures stay as they are) and takes the record (name,
// type, shape, quantization) of the callee's j-th output; every other tensor
// the callee's ops use is appended as a copy, constants keeping their buffer
// ids (weights are never duplicated).
//
// Fails, with the model unchanged, when the callee cannot stand in for the
// op: input or output counts, element types or shapes differ; an input of
// `op` is omitted (-1); a callee output is one of its inputs, a constant, or
// listed twice; the callee holds variable tensors (inlining would make a
// second copy of the state). `callee` itself is left in place (see
// RemoveSubgraphs).
absl::StatusOr<size_t> InlineCall(Model& model, SubgraphId subgraph, OpId op,
                                  SubgraphId callee);

// Removes `subgraphs` from the model and renumbers the rest, in every op's
// subgraph references (ForEachCalledSubgraph) and in the signatures.
// Fails, with the model unchanged, if an op of a kept subgraph or a
// signature still refers to one of them. Subgraph ids inside custom options
// (a compiled model's dispatch ops) are not seen: call it before compiling.
absl::Status RemoveSubgraphs(Model& model,
                             absl::Span<const SubgraphId> subgraphs);

}  // namespace graft

#endif  // GRAFT_CORE_INLINE_H_
