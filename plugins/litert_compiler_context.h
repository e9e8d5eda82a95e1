// The host side of LiteRT's compiler-plugin callback table
// (LiteRtCompilerContext, plugins/litert_compiler_abi.h): the objects
// behind the handles a LiteRT plugin inspects, built over Graft's IR, and
// the options it reads.
//
//   LiteRtGraph graph(model, {subgraph});         // handles over the IR
//   plugin_partition(p, soc, graph.subgraph(0), graph.op_list(0));
//   graph.pushed(0);                               // what the plugin took
//
// Everything is read-only and zero-copy where LiteRT's types allow:
// weights point into the model's buffers, names into its tensors. Arrays
// LiteRT returns by pointer (per-channel scales as float, zero points as
// int64, reshape's new shape) are converted once when the graph is built
// and live as long as it. The graph and the model must outlive every call
// the plugin makes with its handles, i.e. the partition or compile call.
//
// Thread-safety: a LiteRtGraph is used by one plugin call at a time.
#ifndef GRAFT_PLUGINS_LITERT_COMPILER_CONTEXT_H_
#define GRAFT_PLUGINS_LITERT_COMPILER_CONTEXT_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "core/model.h"
#include "plugins/litert_compiler_abi.h"

namespace graft {

// The table handed to every LiteRT plugin: ABI version 1.3, every slot set.
// Builder slots answer kLiteRtStatusErrorUnsupported.
const LiteRtCompilerContext* LiteRtHostCompilerContext();

// A view of some subgraphs of `model` as LiteRT handles.
class LiteRtGraph {
 public:
  LiteRtGraph(const Model& model, absl::Span<const SubgraphId> subgraphs);
  ~LiteRtGraph();
  LiteRtGraph(const LiteRtGraph&) = delete;
  LiteRtGraph& operator=(const LiteRtGraph&) = delete;

  // The model handle: its subgraphs are those given, in order.
  LiteRtModel model();
  LiteRtSubgraph subgraph(size_t index);
  // A fresh op list for the partition call on subgraph `index`.
  LiteRtOpList op_list(size_t index);
  // (op id in its subgraph, partition index) pairs the plugin pushed on
  // the op list of subgraph `index`, in push order; an error if it pushed
  // an op of another subgraph or a handle Graft did not hand out.
  absl::StatusOr<std::vector<std::pair<OpId, size_t>>> pushed(
      size_t index) const;

 private:
  std::unique_ptr<LiteRtModelT> model_;
};

// Options a LiteRT plugin reads at create: opaque payloads by identifier
// (LiteRT's "intel_openvino" TOML string, "compiler_options_string", ...),
// found through get_opaque_options + find_opaque_options_data. The
// environment options answer NOT_FOUND for every tag.
class LiteRtHostOptions {
 public:
  LiteRtHostOptions();
  ~LiteRtHostOptions();
  LiteRtHostOptions(const LiteRtHostOptions&) = delete;
  LiteRtHostOptions& operator=(const LiteRtHostOptions&) = delete;

  // Sets the payload under `identifier` (a NUL-terminated string the
  // plugin reads in place).
  void SetPayload(const std::string& identifier, std::string payload);

  LiteRtOptions options();
  LiteRtEnvironmentOptions environment();

 private:
  std::unique_ptr<LiteRtOptionsT> options_;
};

}  // namespace graft

#endif  // GRAFT_PLUGINS_LITERT_COMPILER_CONTEXT_H_
