// GraphCycles: a DAG that supports contracting edges without creating cycles.
//
// Grouping selected ops into partitions is edge contraction on the op graph:
// merging a producer's group with a consumer's is legal only if no other path
// leads from one to the other (through an op outside both), because such a
// path would become a cycle once the group is outlined into one op.
//
// The graph keeps a topological order (one rank per node) and repairs it
// incrementally after each contraction (Pearce & Kelly, "A dynamic
// topological sort algorithm for directed acyclic graphs", JEA 2007), so the
// reachability check only searches nodes ranked between the two ends. On the
// graphs of neural networks this keeps grouping near-linear.
#ifndef GRAFT_CORE_GRAPH_CYCLES_H_
#define GRAFT_CORE_GRAPH_CYCLES_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"

namespace graft {

class GraphCycles {
 public:
  // Nodes 0..num_nodes-1, initially ranked by id: callers add edges only
  // from lower to higher ids (ops in execution order guarantee that).
  explicit GraphCycles(int32_t num_nodes);

  // Adds the edge from -> to; requires from < to and both never contracted.
  void AddEdge(int32_t from, int32_t to);

  // Contracts the edge a -> b (both live nodes; the edge must exist) into one
  // node, unless another path leads from a to b. Returns the surviving node
  // (a or b), or -1 when contracting would create a cycle (graph unchanged).
  int32_t ContractEdge(int32_t a, int32_t b);

  // Merges live nodes a and b, which no edge joins, into one node unless a
  // path leads from one to the other (merging would then make a cycle).
  // Returns the surviving node, or -1 (graph unchanged).
  int32_t MergeNodes(int32_t a, int32_t b);

  bool HasEdge(int32_t from, int32_t to) const {
    return nodes_[from].out.contains(to);
  }

 private:
  struct Node {
    int32_t rank;
    absl::flat_hash_set<int32_t> in;
    absl::flat_hash_set<int32_t> out;
  };

  // True if `to` is reachable from `from` (edges as they are now).
  bool IsReachable(int32_t from, int32_t to);
  // Inserts from -> to and restores the topological order if it broke.
  void InsertEdge(int32_t from, int32_t to);
  void ForwardDfs(int32_t start, int32_t upper_rank);
  void BackwardDfs(int32_t start, int32_t lower_rank);
  void Reorder();

  std::vector<Node> nodes_;
  std::vector<uint32_t> visit_epoch_;
  uint32_t epoch_ = 0;
  std::vector<int32_t> stack_;
  std::vector<int32_t> delta_forward_;
  std::vector<int32_t> delta_backward_;
};

}  // namespace graft

#endif  // GRAFT_CORE_GRAPH_CYCLES_H_
