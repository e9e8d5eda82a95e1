#include "core/inline.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace graft {
namespace {

bool SameType(const tfl::TensorT& a, const tfl::TensorT& b) {
  return a.type == b.type && a.shape == b.shape;
}

std::string Describe(const tfl::TensorT& t) {
  std::string dims;
  for (int32_t d : t.shape) absl::StrAppend(&dims, dims.empty() ? "" : "x", d);
  return absl::StrCat("'", t.name, "' (", TensorTypeName(t.type), " ",
                      dims.empty() ? "scalar" : dims, ")");
}

}  // namespace

absl::StatusOr<size_t> InlineCall(Model& model, SubgraphId subgraph, OpId op,
                                  SubgraphId callee) {
  const auto num_subgraphs = static_cast<SubgraphId>(model.subgraphs.size());
  if (subgraph < 0 || subgraph >= num_subgraphs || callee < 0 ||
      callee >= num_subgraphs || callee == subgraph) {
    return absl::InvalidArgumentError(absl::StrCat("InlineCall: subgraphs ",
                                                   subgraph, " and ", callee,
                                                   " of ", num_subgraphs));
  }
  Subgraph& sg = model.subgraphs[subgraph];
  const Subgraph& body = model.subgraphs[callee];
  if (op < 0 || static_cast<size_t>(op) >= sg.ops.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("InlineCall: no op ", op, " in subgraph ", subgraph));
  }
  const tfl::OperatorT& call = sg.ops[op];
  auto refuse = [&](auto&&... why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "subgraph ", callee, " ('", body.name, "') cannot replace op ", op,
        " of subgraph ", subgraph, ": ", why...));
  };
  if (call.inputs.size() != body.inputs.size() ||
      call.outputs.size() != body.outputs.size()) {
    return refuse("the op has ", call.inputs.size(), " inputs and ",
                  call.outputs.size(), " outputs, the subgraph ",
                  body.inputs.size(), " and ", body.outputs.size());
  }
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (call.inputs[i] < 0) return refuse("input ", i, " is omitted");
    const tfl::TensorT& a = sg.tensors[call.inputs[i]];
    const tfl::TensorT& b = body.tensors[body.inputs[i]];
    if (!SameType(a, b)) {
      return refuse("input ", i, " is ", Describe(a), " against ", Describe(b));
    }
  }
  for (size_t j = 0; j < call.outputs.size(); ++j) {
    const TensorId out = body.outputs[j];
    if (call.outputs[j] < 0) return refuse("output ", j, " is omitted");
    const tfl::TensorT& a = sg.tensors[call.outputs[j]];
    if (!SameType(a, body.tensors[out])) {
      return refuse("output ", j, " is ", Describe(a), " against ",
                    Describe(body.tensors[out]));
    }
    if (std::count(body.outputs.begin(), body.outputs.end(), out) > 1 ||
        std::count(body.inputs.begin(), body.inputs.end(), out) > 0 ||
        IsConstantTensor(model, body.tensors[out])) {
      return refuse("its output ", j, " is not computed by its ops");
    }
  }
  for (const tfl::TensorT& t : body.tensors) {
    if (t.is_variable) return refuse("it holds variable tensors");
  }

  // The callee's tensors as the caller sees them.
  absl::flat_hash_map<TensorId, TensorId> map;
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    map[body.inputs[i]] = call.inputs[i];
  }
  for (size_t j = 0; j < body.outputs.size(); ++j) {
    map[body.outputs[j]] = call.outputs[j];
  }
  std::vector<tfl::TensorT> added;
  std::vector<EmptyVectors> added_empty;
  const auto first_new = static_cast<TensorId>(sg.tensors.size());
  auto empty_of = [&](TensorId t) {
    return static_cast<size_t>(t) < body.tensor_empty_vectors.size()
               ? body.tensor_empty_vectors[t]
               : EmptyVectors{};
  };
  std::function<TensorId(TensorId)> map_tensor = [&](TensorId t) -> TensorId {
    if (t < 0 || static_cast<size_t>(t) >= body.tensors.size()) return t;
    auto [it, inserted] =
        map.try_emplace(t, first_new + static_cast<TensorId>(added.size()));
    if (!inserted) return it->second;
    const size_t slot = added.size();
    added.push_back(body.tensors[t]);
    added_empty.push_back(empty_of(t));
    tfl::TensorT copy = body.tensors[t];
    ForEachQuantizationRef(copy, [&](int32_t& ref) { ref = map_tensor(ref); });
    added[slot] = std::move(copy);
    return it->second;
  };
  std::vector<tfl::OperatorT> ops;
  ops.reserve(body.ops.size());
  for (const tfl::OperatorT& o : body.ops) {
    tfl::OperatorT copy = o;
    for (TensorId& t : copy.inputs) t = map_tensor(t);
    for (TensorId& t : copy.outputs) t = map_tensor(t);
    for (TensorId& t : copy.intermediates) t = map_tensor(t);
    ops.push_back(std::move(copy));
  }
  // An output's quantization may refer to other callee tensors too.
  std::vector<tfl::TensorT> outputs;
  for (size_t j = 0; j < body.outputs.size(); ++j) {
    tfl::TensorT copy = body.tensors[body.outputs[j]];
    ForEachQuantizationRef(copy, [&](int32_t& ref) { ref = map_tensor(ref); });
    outputs.push_back(std::move(copy));
  }

  // Nothing fails from here on.
  for (size_t j = 0; j < outputs.size(); ++j) {
    const TensorId id = call.outputs[j];
    sg.tensors[id] = std::move(outputs[j]);
    if (static_cast<size_t>(id) < sg.tensor_empty_vectors.size()) {
      sg.tensor_empty_vectors[id] = empty_of(body.outputs[j]);
    }
  }
  if (!added.empty()) {
    // Keep the presence records aligned with the tensors they describe.
    sg.tensor_empty_vectors.resize(
        std::max(sg.tensor_empty_vectors.size(), sg.tensors.size()));
    for (size_t i = 0; i < added.size(); ++i) {
      sg.tensors.push_back(std::move(added[i]));
      sg.tensor_empty_vectors.push_back(std::move(added_empty[i]));
    }
  }
  const size_t count = ops.size();
  if (static_cast<size_t>(op) < sg.op_empty_vectors.size()) {
    std::vector<EmptyVectors> records;
    for (size_t i = 0; i < count; ++i) {
      records.push_back(i < body.op_empty_vectors.size()
                            ? body.op_empty_vectors[i]
                            : EmptyVectors{});
    }
    sg.op_empty_vectors.erase(sg.op_empty_vectors.begin() + op);
    sg.op_empty_vectors.insert(sg.op_empty_vectors.begin() + op,
                               records.begin(), records.end());
  }
  sg.ops.erase(sg.ops.begin() + op);
  sg.ops.insert(sg.ops.begin() + op, std::make_move_iterator(ops.begin()),
                std::make_move_iterator(ops.end()));
  return count;
}

absl::Status RemoveSubgraphs(Model& model,
                             absl::Span<const SubgraphId> subgraphs) {
  const size_t n = model.subgraphs.size();
  std::vector<bool> removed(n, false);
  for (SubgraphId s : subgraphs) {
    if (s < 0 || static_cast<size_t>(s) >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("RemoveSubgraphs: no subgraph ", s, " of ", n));
    }
    removed[s] = true;
  }
  std::vector<SubgraphId> new_id(n, -1);
  SubgraphId next = 0;
  for (size_t s = 0; s < n; ++s) {
    if (!removed[s]) new_id[s] = next++;
  }
  for (size_t s = 0; s < n; ++s) {
    if (removed[s]) continue;
    for (size_t k = 0; k < model.subgraphs[s].ops.size(); ++k) {
      absl::Status status;
      ForEachCalledSubgraph(
          std::as_const(model.subgraphs[s].ops[k]),
          [&](const char* field, int64_t index) {
            if (status.ok() && index >= 0 && static_cast<size_t>(index) < n &&
                removed[index]) {
              status = absl::FailedPreconditionError(
                  absl::StrCat("subgraph ", index, " cannot be removed: op ", k,
                               " of subgraph ", s, " calls it (", field, ")"));
            }
          });
      if (!status.ok()) return status;
    }
  }
  for (const tfl::SignatureDefT& sig : model.signature_defs) {
    if (sig.subgraph_index < n && removed[sig.subgraph_index]) {
      return absl::FailedPreconditionError(absl::StrCat(
          "subgraph ", sig.subgraph_index, " cannot be removed: signature '",
          sig.signature_key, "' runs it"));
    }
  }

  std::vector<Subgraph> kept;
  kept.reserve(n);
  for (size_t s = 0; s < n; ++s) {
    if (!removed[s]) kept.push_back(std::move(model.subgraphs[s]));
  }
  model.subgraphs = std::move(kept);
  for (Subgraph& sg : model.subgraphs) {
    for (tfl::OperatorT& o : sg.ops) {
      ForEachCalledSubgraph(o, [&](const char*, auto& index) {
        if (index >= 0 && static_cast<size_t>(index) < n) {
          index = new_id[index];
        }
      });
    }
  }
  for (tfl::SignatureDefT& sig : model.signature_defs) {
    if (sig.subgraph_index < n) sig.subgraph_index = new_id[sig.subgraph_index];
  }
  return absl::OkStatus();
}

}  // namespace graft
