#include "core/partition.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/graph_cycles.h"

namespace graft {
namespace {

// Union-find over op ids, tracking which GraphCycles node stands for a set.
class Groups {
 public:
  explicit Groups(int32_t n) : parent_(n), node_(n) {
    std::iota(parent_.begin(), parent_.end(), 0);
    std::iota(node_.begin(), node_.end(), 0);
  }
  int32_t Find(int32_t x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  int32_t Node(int32_t root) const { return node_[root]; }
  void Union(int32_t root_a, int32_t root_b, int32_t node) {
    parent_[root_b] = root_a;
    node_[root_a] = node;
  }

 private:
  std::vector<int32_t> parent_;
  std::vector<int32_t> node_;
};

}  // namespace

absl::StatusOr<std::vector<Partition>> GroupOps(
    const Subgraph& subgraph, absl::Span<const int64_t> labels,
    absl::Span<const int64_t> merge_unconnected) {
  const int32_t num_ops = static_cast<int32_t>(subgraph.ops.size());
  if (labels.size() != subgraph.ops.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GroupOps: ", labels.size(), " labels for ", num_ops,
                     " ops in subgraph '", subgraph.name, "'"));
  }
  std::vector<OpId> producer(subgraph.tensors.size(), -1);
  for (OpId op = 0; op < num_ops; ++op) {
    for (TensorId t : subgraph.ops[op].outputs) {
      if (t >= 0 && static_cast<size_t>(t) < producer.size()) producer[t] = op;
    }
  }

  GraphCycles graph(num_ops);
  for (OpId op = 0; op < num_ops; ++op) {
    for (TensorId t : subgraph.ops[op].inputs) {
      if (t < 0 || static_cast<size_t>(t) >= producer.size()) continue;
      OpId p = producer[t];
      if (p < 0 || p == op) continue;
      if (p > op) {
        return absl::FailedPreconditionError(
            absl::StrCat("GroupOps: subgraph '", subgraph.name, "' op ", op,
                         " reads tensor ", t, " produced by later op ", p,
                         "; ops must be in execution order"));
      }
      graph.AddEdge(p, op);
    }
  }

  // Contract producer -> consumer edges between ops of one label, in
  // execution order, so chains fold in one sweep. A contraction refused once
  // stays refused: later contractions only add paths.
  Groups groups(num_ops);
  for (OpId op = 0; op < num_ops; ++op) {
    if (labels[op] == kUnselected) continue;
    for (TensorId t : subgraph.ops[op].inputs) {
      if (t < 0 || static_cast<size_t>(t) >= producer.size()) continue;
      OpId p = producer[t];
      if (p < 0 || labels[p] != labels[op]) continue;
      int32_t root_p = groups.Find(p), root_op = groups.Find(op);
      if (root_p == root_op) continue;
      int32_t kept =
          graph.ContractEdge(groups.Node(root_p), groups.Node(root_op));
      if (kept >= 0) groups.Union(root_p, root_op, kept);
    }
  }

  if (!merge_unconnected.empty()) {
    // Each label's groups in the order of their first op: each joins the
    // last group of its label that it can.
    absl::flat_hash_map<int64_t, int32_t> last_root;
    for (OpId op = 0; op < num_ops; ++op) {
      const int64_t label = labels[op];
      if (label == kUnselected ||
          std::find(merge_unconnected.begin(), merge_unconnected.end(),
                    label) == merge_unconnected.end()) {
        continue;
      }
      const int32_t root = groups.Find(op);
      auto [it, first] = last_root.try_emplace(label, root);
      if (first) continue;
      const int32_t previous = groups.Find(it->second);
      if (previous == root) continue;
      const int32_t kept =
          graph.MergeNodes(groups.Node(previous), groups.Node(root));
      if (kept >= 0) {
        groups.Union(previous, root, kept);
      } else {
        it->second = root;
      }
    }
  }

  std::vector<Partition> partitions;
  absl::flat_hash_map<int32_t, size_t> index_of_root;
  for (OpId op = 0; op < num_ops; ++op) {
    if (labels[op] == kUnselected) continue;
    auto [it, inserted] =
        index_of_root.try_emplace(groups.Find(op), partitions.size());
    if (inserted) partitions.push_back(Partition{labels[op], {}});
    partitions[it->second].ops.push_back(op);
  }
  return partitions;
}

}  // namespace graft
