#include "core/graph_cycles.h"

#include <algorithm>
#include <cassert>

namespace graft {

GraphCycles::GraphCycles(int32_t num_nodes)
    : nodes_(num_nodes), visit_epoch_(num_nodes, 0) {
  for (int32_t i = 0; i < num_nodes; ++i) nodes_[i].rank = i;
}

void GraphCycles::AddEdge(int32_t from, int32_t to) {
  assert(from < to);
  nodes_[from].out.insert(to);
  nodes_[to].in.insert(from);
}

bool GraphCycles::IsReachable(int32_t from, int32_t to) {
  const int32_t limit = nodes_[to].rank;
  if (nodes_[from].rank > limit) return false;
  ++epoch_;
  stack_.clear();
  stack_.push_back(from);
  visit_epoch_[from] = epoch_;
  while (!stack_.empty()) {
    int32_t n = stack_.back();
    stack_.pop_back();
    for (int32_t s : nodes_[n].out) {
      if (s == to) return true;
      // Nodes ranked after `to` cannot lead back to it.
      if (visit_epoch_[s] != epoch_ && nodes_[s].rank < limit) {
        visit_epoch_[s] = epoch_;
        stack_.push_back(s);
      }
    }
  }
  return false;
}

int32_t GraphCycles::ContractEdge(int32_t a, int32_t b) {
  assert(HasEdge(a, b));
  nodes_[a].out.erase(b);
  nodes_[b].in.erase(a);
  if (IsReachable(a, b)) {
    nodes_[a].out.insert(b);
    nodes_[b].in.insert(a);
    return -1;
  }
  // Move the smaller adjacency into the larger node.
  int32_t keep = a, gone = b;
  if (nodes_[a].in.size() + nodes_[a].out.size() <
      nodes_[b].in.size() + nodes_[b].out.size()) {
    std::swap(keep, gone);
  }
  Node removed;
  std::swap(removed.in, nodes_[gone].in);
  std::swap(removed.out, nodes_[gone].out);
  for (int32_t p : removed.in) nodes_[p].out.erase(gone);
  for (int32_t s : removed.out) nodes_[s].in.erase(gone);
  for (int32_t p : removed.in) InsertEdge(p, keep);
  for (int32_t s : removed.out) InsertEdge(keep, s);
  return keep;
}

int32_t GraphCycles::MergeNodes(int32_t a, int32_t b) {
  if (a == b || HasEdge(a, b) || HasEdge(b, a) || IsReachable(a, b) ||
      IsReachable(b, a)) {
    return -1;
  }
  // With no path either way, an edge in rank order keeps the order
  // topological, and contracting it is the merge.
  if (nodes_[a].rank > nodes_[b].rank) std::swap(a, b);
  InsertEdge(a, b);
  return ContractEdge(a, b);
}

void GraphCycles::InsertEdge(int32_t from, int32_t to) {
  if (!nodes_[from].out.insert(to).second) return;
  nodes_[to].in.insert(from);
  const int32_t lower = nodes_[to].rank, upper = nodes_[from].rank;
  if (upper < lower) return;  // Order still topological.
  // Pearce-Kelly: the nodes reachable from `to` ranked below `from`, and the
  // nodes reaching `from` ranked above `to`, swap places in the order. No
  // cycle is possible here: ContractEdge checked reachability first.
  ++epoch_;
  delta_forward_.clear();
  delta_backward_.clear();
  ForwardDfs(to, upper);
  BackwardDfs(from, lower);
  Reorder();
}

void GraphCycles::ForwardDfs(int32_t start, int32_t upper_rank) {
  stack_.clear();
  stack_.push_back(start);
  visit_epoch_[start] = epoch_;
  while (!stack_.empty()) {
    int32_t n = stack_.back();
    stack_.pop_back();
    delta_forward_.push_back(n);
    for (int32_t s : nodes_[n].out) {
      if (visit_epoch_[s] != epoch_ && nodes_[s].rank < upper_rank) {
        visit_epoch_[s] = epoch_;
        stack_.push_back(s);
      }
    }
  }
}

void GraphCycles::BackwardDfs(int32_t start, int32_t lower_rank) {
  stack_.clear();
  stack_.push_back(start);
  visit_epoch_[start] = epoch_;
  while (!stack_.empty()) {
    int32_t n = stack_.back();
    stack_.pop_back();
    delta_backward_.push_back(n);
    for (int32_t p : nodes_[n].in) {
      if (visit_epoch_[p] != epoch_ && nodes_[p].rank > lower_rank) {
        visit_epoch_[p] = epoch_;
        stack_.push_back(p);
      }
    }
  }
}

void GraphCycles::Reorder() {
  auto by_rank = [this](int32_t x, int32_t y) {
    return nodes_[x].rank < nodes_[y].rank;
  };
  std::sort(delta_forward_.begin(), delta_forward_.end(), by_rank);
  std::sort(delta_backward_.begin(), delta_backward_.end(), by_rank);
  // The freed ranks, in order, go first to the backward set (which must come
  // first), then to the forward set; each set keeps its internal order.
  std::vector<int32_t> ranks;
  ranks.reserve(delta_forward_.size() + delta_backward_.size());
  for (int32_t n : delta_backward_) ranks.push_back(nodes_[n].rank);
  for (int32_t n : delta_forward_) ranks.push_back(nodes_[n].rank);
  std::sort(ranks.begin(), ranks.end());
  size_t i = 0;
  for (int32_t n : delta_backward_) nodes_[n].rank = ranks[i++];
  for (int32_t n : delta_forward_) nodes_[n].rank = ranks[i++];
}

}  // namespace graft
