// CheckExecutableSubgraph: what the runtime relies on in a subgraph's graph
// before it prepares any of it. Internal to the runtime.
//
// core/model_io's VerifyModel checks what every reader needs (indices in
// range, execution order, constant data matching its shape). Running a
// subgraph needs more: each tensor has at most one writer, and that writer
// writes memory the runtime owns. A model can break that in ways inspect and
// apply never notice, and kernels and vendors would then write into the
// read-only file mapping, into the caller's input buffers or past a buffer.
// This check refuses, each with the subgraph, op and tensor named:
// - a subgraph input that is a constant (its data is in the file mapping;
//   the caller would write there);
// - an op output that is omitted (-1) where the op must write it, that
//   repeats another output of the op, that is one of its own inputs, a
//   constant, a variable (state an op updates in place, never an output),
//   an input of the subgraph (a callee's inputs are its caller's tensors),
//   or a tensor another op already writes;
// - a subgraph output that nothing writes and that is no input, constant
//   or variable;
// - an omitted (-1) input of a dispatch op (GRAFT_DISPATCH, DISPATCH_OP:
//   vendors get every input) or of a builtin op with a CPU kernel, at a
//   position where TFLite does not allow one (a bias, an LSTM's optional
//   weights, RESHAPE's shape, ...).
// Shapes are checked where they are set (tensor.h's CheckedNumElements).
//
// The runtime runs it once per subgraph and load (LoadEnv::checked), for
// every subgraph it prepares: entry points, callees and fallbacks.
#ifndef GRAFT_DISPATCH_GRAPH_CHECK_H_
#define GRAFT_DISPATCH_GRAPH_CHECK_H_

#include "absl/status/status.h"
#include "core/model.h"

namespace graft {

// InvalidArgument naming subgraph `id`, the op and the tensor for the first
// violation found, in op order; OK otherwise. `model` has passed
// VerifyModel (indices are in range).
absl::Status CheckExecutableSubgraph(const Model& model, SubgraphId id);

}  // namespace graft

#endif  // GRAFT_DISPATCH_GRAPH_CHECK_H_
