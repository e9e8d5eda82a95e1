#include "core/outline.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace graft {
namespace {

// Per-tensor facts shared by all partitions of one source subgraph.
struct TensorFacts {
  // Partition of the op producing the tensor, or -1 (a kept op, or none).
  std::vector<int32_t> producer_partition;
  // Read by an op outside the producer's partition, or a source output.
  std::vector<bool> escapes;
  // Stamp: index of the last partition that listed the tensor as an input.
  std::vector<int32_t> listed_by;
  // Stamp: index of the last partition whose ops, so far, produced it.
  std::vector<int32_t> produced_by;
};

// Copies partition `self`'s ops and the tensors they use into a new subgraph;
// fills the partition's inputs and outputs (tensor ids of the source).
Subgraph BuildOutlined(const Model& model, const Subgraph& src,
                       const Partition& partition, int32_t self,
                       TensorFacts& facts, std::vector<TensorId>& inputs,
                       std::vector<TensorId>& outputs) {
  Subgraph out;
  out.ops.reserve(partition.ops.size());
  out.tensors.reserve(partition.ops.size() * 2);
  absl::flat_hash_map<TensorId, TensorId> local;
  std::function<TensorId(TensorId)> map_tensor = [&](TensorId t) -> TensorId {
    if (t < 0 || static_cast<size_t>(t) >= src.tensors.size()) return t;
    auto [it, inserted] = local.try_emplace(t, out.tensors.size());
    if (!inserted) return it->second;
    const TensorId id = it->second;
    out.tensors.push_back(src.tensors[t]);
    if (static_cast<size_t>(t) < src.tensor_empty_vectors.size()) {
      out.tensor_empty_vectors.resize(id + 1);
      out.tensor_empty_vectors[id] = src.tensor_empty_vectors[t];
    }
    tfl::TensorT copy = src.tensors[t];
    ForEachQuantizationRef(copy, [&](int32_t& ref) { ref = map_tensor(ref); });
    out.tensors[id] = std::move(copy);
    return id;
  };
  // An input is read before the partition's own ops produce it (in-place
  // ops read and write one tensor).
  for (OpId op : partition.ops) {
    for (TensorId t : src.ops[op].inputs) {
      if (t < 0 || facts.produced_by[t] == self || facts.listed_by[t] == self) {
        continue;
      }
      facts.listed_by[t] = self;
      if (!IsConstantTensor(model, src.tensors[t])) inputs.push_back(t);
    }
    for (TensorId t : src.ops[op].outputs) {
      if (t >= 0) facts.produced_by[t] = self;
    }
  }
  for (OpId op : partition.ops) {
    for (TensorId t : src.ops[op].outputs) {
      if (t >= 0 && facts.escapes[t]) outputs.push_back(t);
    }
  }
  // The source subgraph's own inputs come first, in its order, then the
  // rest by first use: LiteRT's outlining orders a partition's inputs so,
  // and a vendor compiler given the same partition then sees the same
  // signature (and makes the same bytecode) from Graft as from LiteRT.
  std::stable_sort(inputs.begin(), inputs.end(), [&](TensorId a, TensorId b) {
    auto rank = [&](TensorId t) {
      auto it = std::find(src.inputs.begin(), src.inputs.end(), t);
      return it == src.inputs.end()
                 ? src.inputs.size()
                 : static_cast<size_t>(it - src.inputs.begin());
    };
    return rank(a) < rank(b);
  });
  for (TensorId t : inputs) out.inputs.push_back(map_tensor(t));
  for (OpId op : partition.ops) {
    tfl::OperatorT moved = src.ops[op];
    for (TensorId& t : moved.inputs) t = map_tensor(t);
    for (TensorId& t : moved.outputs) t = map_tensor(t);
    for (TensorId& t : moved.intermediates) t = map_tensor(t);
    if (static_cast<size_t>(op) < src.op_empty_vectors.size()) {
      out.op_empty_vectors.resize(out.ops.size() + 1);
      out.op_empty_vectors.back() = src.op_empty_vectors[op];
    }
    out.ops.push_back(std::move(moved));
  }
  for (TensorId t : outputs) out.outputs.push_back(map_tensor(t));
  return out;
}

}  // namespace

absl::StatusOr<std::vector<OutlinedPartition>> OutlinePartitions(
    Model& model, SubgraphId source, absl::Span<const Partition> partitions,
    MakeCallOp make_call, std::vector<OpId>* kept_ops) {
  if (source < 0 || static_cast<size_t>(source) >= model.subgraphs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("OutlinePartitions: no subgraph ", source));
  }
  const Subgraph& src = model.subgraphs[source];
  const int32_t num_ops = static_cast<int32_t>(src.ops.size());
  const size_t num_tensors = src.tensors.size();

  std::vector<int32_t> owner(num_ops, -1);
  for (size_t p = 0; p < partitions.size(); ++p) {
    if (partitions[p].ops.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("OutlinePartitions: partition ", p, " is empty"));
    }
    for (OpId op : partitions[p].ops) {
      if (op < 0 || op >= num_ops) {
        return absl::InvalidArgumentError(
            absl::StrCat("OutlinePartitions: partition ", p, " names op ", op,
                         " of ", num_ops));
      }
      if (owner[op] != -1) {
        return absl::InvalidArgumentError(absl::StrCat("OutlinePartitions: op ",
                                                       op, " is in partitions ",
                                                       owner[op], " and ", p));
      }
      owner[op] = static_cast<int32_t>(p);
    }
  }
  TensorFacts facts;
  facts.producer_partition.assign(num_tensors, -1);
  facts.escapes.assign(num_tensors, false);
  facts.listed_by.assign(num_tensors, -1);
  facts.produced_by.assign(num_tensors, -1);
  for (OpId op = 0; op < num_ops; ++op) {
    for (TensorId t : src.ops[op].outputs) {
      if (t >= 0 && static_cast<size_t>(t) < num_tensors) {
        facts.producer_partition[t] = owner[op];
      }
    }
  }
  for (OpId op = 0; op < num_ops; ++op) {
    for (TensorId t : src.ops[op].inputs) {
      if (t >= 0 && static_cast<size_t>(t) < num_tensors &&
          facts.producer_partition[t] != owner[op]) {
        facts.escapes[t] = true;
      }
    }
  }
  for (TensorId t : src.outputs) {
    if (t >= 0 && static_cast<size_t>(t) < num_tensors) facts.escapes[t] = true;
  }

  // Build everything on the side so the model is untouched on error.
  std::vector<Subgraph> outlined;
  std::vector<tfl::OperatorT> calls;
  const SubgraphId first_new = static_cast<SubgraphId>(model.subgraphs.size());
  for (size_t p = 0; p < partitions.size(); ++p) {
    std::vector<TensorId> inputs, outputs;
    Subgraph sg =
        BuildOutlined(model, src, partitions[p], static_cast<int32_t>(p), facts,
                      inputs, outputs);
    sg.name = absl::StrCat(
        src.name.empty() ? absl::StrCat("subgraph", source) : src.name,
        "/partition_", p);
    tfl::OperatorT call;
    GRAFT_RETURN_IF_ERROR(
        make_call(p, first_new + static_cast<SubgraphId>(p), call));
    call.inputs = std::move(inputs);
    call.outputs = std::move(outputs);
    outlined.push_back(std::move(sg));
    calls.push_back(std::move(call));
  }

  // The new op list: each kept op keyed by its position, each call op by its
  // partition's first op; a stable topological sort keeps the original order
  // wherever the data allow.
  struct Item {
    int32_t key;
    int32_t kept_op;  // >= 0: an op of `source`; else ~partition index.
  };
  std::vector<Item> items;
  for (OpId op = 0; op < num_ops; ++op) {
    if (owner[op] == -1) items.push_back({op, op});
  }
  for (size_t p = 0; p < partitions.size(); ++p) {
    items.push_back({partitions[p].ops.front(), ~static_cast<int32_t>(p)});
  }
  auto item_op = [&](const Item& it) -> const tfl::OperatorT& {
    return it.kept_op >= 0 ? src.ops[it.kept_op] : calls[~it.kept_op];
  };
  std::vector<int32_t> producer(num_tensors, -1);
  for (size_t i = 0; i < items.size(); ++i) {
    for (TensorId t : item_op(items[i]).outputs) {
      if (t >= 0) producer[t] = static_cast<int32_t>(i);
    }
  }
  std::vector<std::vector<int32_t>> consumers(items.size());
  std::vector<int32_t> pending(items.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    std::vector<int32_t> deps;
    for (TensorId t : item_op(items[i]).inputs) {
      if (t >= 0 && producer[t] >= 0 &&
          producer[t] != static_cast<int32_t>(i)) {
        deps.push_back(producer[t]);
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    pending[i] = static_cast<int32_t>(deps.size());
    for (int32_t d : deps) consumers[d].push_back(static_cast<int32_t>(i));
  }
  using Entry = std::pair<int32_t, int32_t>;  // (key, item)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (size_t i = 0; i < items.size(); ++i) {
    if (pending[i] == 0) ready.push({items[i].key, static_cast<int32_t>(i)});
  }
  std::vector<int32_t> order;
  order.reserve(items.size());
  while (!ready.empty()) {
    int32_t i = ready.top().second;
    ready.pop();
    order.push_back(i);
    for (int32_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push({items[c].key, c});
    }
  }
  if (order.size() != items.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "OutlinePartitions: outlining the partitions of subgraph ", source,
        " would create a cycle; partitions must come from GroupOps"));
  }

  // Commit.
  Subgraph& dst = model.subgraphs[source];
  std::vector<tfl::OperatorT> new_ops;
  new_ops.reserve(order.size());
  // Presence of empty vectors follows each op and tensor (see EmptyVectors);
  // call ops are Graft's own and get the defaults.
  std::vector<EmptyVectors> new_op_empty_vectors(order.size());
  std::vector<OutlinedPartition> result(partitions.size());
  for (int32_t i : order) {
    const Item& it = items[i];
    if (it.kept_op >= 0) {
      if (static_cast<size_t>(it.kept_op) < dst.op_empty_vectors.size()) {
        new_op_empty_vectors[new_ops.size()] =
            std::move(dst.op_empty_vectors[it.kept_op]);
      }
      new_ops.push_back(std::move(dst.ops[it.kept_op]));
    } else {
      int32_t p = ~it.kept_op;
      result[p].subgraph = first_new + p;
      result[p].call_op = static_cast<OpId>(new_ops.size());
      new_ops.push_back(std::move(calls[p]));
    }
  }
  dst.ops = std::move(new_ops);
  if (kept_ops != nullptr) {
    kept_ops->clear();
    for (int32_t i : order) kept_ops->push_back(std::max(items[i].kept_op, -1));
  }
  dst.op_empty_vectors = std::move(new_op_empty_vectors);

  // Drop tensors nothing in `source` refers to any more; renumber the rest.
  std::vector<bool> used(num_tensors, false);
  auto mark = [&](const std::vector<int32_t>& ids) {
    for (int32_t t : ids) {
      if (t >= 0 && static_cast<size_t>(t) < num_tensors) used[t] = true;
    }
  };
  for (const tfl::OperatorT& op : dst.ops) {
    mark(op.inputs);
    mark(op.outputs);
    mark(op.intermediates);
  }
  mark(dst.inputs);
  mark(dst.outputs);
  for (const tfl::SignatureDefT& sig : model.signature_defs) {
    if (static_cast<SubgraphId>(sig.subgraph_index) != source) continue;
    for (const auto& m : sig.inputs) used[m->tensor_index] = true;
    for (const auto& m : sig.outputs) used[m->tensor_index] = true;
  }
  for (size_t t = 0; t < num_tensors; ++t) {
    if (!used[t]) continue;
    ForEachQuantizationRef(dst.tensors[t], [&](int32_t& ref) {
      if (ref >= 0 && static_cast<size_t>(ref) < num_tensors) used[ref] = true;
    });
  }
  std::vector<int32_t> remap(num_tensors, -1);
  std::vector<tfl::TensorT> kept;
  std::vector<EmptyVectors> kept_empty_vectors;
  for (size_t t = 0; t < num_tensors; ++t) {
    if (!used[t]) continue;
    remap[t] = static_cast<int32_t>(kept.size());
    kept.push_back(std::move(dst.tensors[t]));
    kept_empty_vectors.emplace_back();
    if (t < dst.tensor_empty_vectors.size()) {
      kept_empty_vectors.back() = std::move(dst.tensor_empty_vectors[t]);
    }
  }
  dst.tensors = std::move(kept);
  dst.tensor_empty_vectors = std::move(kept_empty_vectors);
  for (tfl::TensorT& t : dst.tensors) {
    ForEachQuantizationRef(t, [&](int32_t& ref) {
      if (ref >= 0 && static_cast<size_t>(ref) < num_tensors) ref = remap[ref];
    });
  }
  auto apply = [&](std::vector<int32_t>& ids) {
    for (int32_t& t : ids) {
      if (t >= 0) t = remap[t];
    }
  };
  for (tfl::OperatorT& op : dst.ops) {
    apply(op.inputs);
    apply(op.outputs);
    apply(op.intermediates);
  }
  apply(dst.inputs);
  apply(dst.outputs);
  for (tfl::SignatureDefT& sig : model.signature_defs) {
    if (static_cast<SubgraphId>(sig.subgraph_index) != source) continue;
    for (auto& m : sig.inputs) m->tensor_index = remap[m->tensor_index];
    for (auto& m : sig.outputs) m->tensor_index = remap[m->tensor_index];
  }
  for (Subgraph& sg : outlined) model.subgraphs.push_back(std::move(sg));
  return result;
}

Model ExtractSubgraphsModel(const Model& model,
                            absl::Span<const SubgraphId> subgraphs) {
  Model out;
  out.version = model.version;
  out.description = model.description;
  out.buffers.emplace_back();  // Sentinel 0.
  absl::flat_hash_map<uint32_t, uint32_t> buffers, opcodes;
  for (SubgraphId id : subgraphs) {
    Subgraph sg = model.subgraphs[id];
    for (tfl::TensorT& t : sg.tensors) {
      if (t.buffer == 0 || t.buffer >= model.buffers.size()) {
        t.buffer = 0;
        continue;
      }
      auto [it, inserted] = buffers.try_emplace(t.buffer, out.buffers.size());
      if (inserted) out.buffers.push_back(model.buffers[t.buffer]);
      t.buffer = it->second;
    }
    for (tfl::OperatorT& op : sg.ops) {
      auto [it, inserted] =
          opcodes.try_emplace(op.opcode_index, out.operator_codes.size());
      if (inserted) {
        out.operator_codes.push_back(model.operator_codes[op.opcode_index]);
      }
      op.opcode_index = it->second;
    }
    out.subgraphs.push_back(std::move(sg));
  }
  out.file = model.file;
  return out;
}

}  // namespace graft
