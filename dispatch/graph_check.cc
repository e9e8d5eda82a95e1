#include "dispatch/graph_check.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/compiled_format.h"
#include "core/litert_format.h"
#include "dispatch/kernel.h"

namespace graft {
namespace {

// Input positions TFLite lets a builtin op omit (-1), for the ops Graft has
// CPU kernels of; every other position of those ops must name a tensor.
// LSTM's: the input gate's weights and bias (CIFG), peepholes, projection
// and layer-norm coefficients (lstm_shared.h).
bool MayOmitInput(tfl::BuiltinOperator op, size_t i) {
  auto in = [i](std::initializer_list<size_t> list) {
    for (size_t k : list) {
      if (k == i) return true;
    }
    return false;
  };
  switch (op) {
    case tfl::BuiltinOperator_CONV_2D:
    case tfl::BuiltinOperator_DEPTHWISE_CONV_2D:
    case tfl::BuiltinOperator_FULLY_CONNECTED:
    case tfl::BuiltinOperator_CONV_3D:
      return in({2});  // bias
    case tfl::BuiltinOperator_TRANSPOSE_CONV:
    case tfl::BuiltinOperator_CONV_3D_TRANSPOSE:
    case tfl::BuiltinOperator_SVDF:
      return in({3});  // bias
    case tfl::BuiltinOperator_LSTM:
    case tfl::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM:
      return in({1, 5, 9, 10, 11, 12, 16, 17, 20, 21, 22, 23});
    case tfl::BuiltinOperator_RESHAPE:
      return in({1});  // the new shape, else from ReshapeOptions
    case tfl::BuiltinOperator_PAD:
    case tfl::BuiltinOperator_PADV2:
      return in({2});  // the padding value
    case tfl::BuiltinOperator_STRIDED_SLICE:
      return in({3});  // strides
    default:
      return false;
  }
}

std::string SubgraphLabel(const Model& model, SubgraphId s) {
  const std::string& name = model.subgraphs[s].name;
  return name.empty() ? absl::StrFormat("subgraph %d", s)
                      : absl::StrFormat("subgraph %d ('%s')", s, name);
}

std::string TensorLabel(const Subgraph& sg, TensorId t) {
  return sg.tensors[t].name.empty()
             ? absl::StrFormat("tensor %d", t)
             : absl::StrFormat("tensor %d ('%s')", t, sg.tensors[t].name);
}

bool HasData(const Model& model, const tfl::TensorT& t) {
  return t.buffer != 0 && t.buffer < model.buffers.size() &&
         !model.buffers[t.buffer].data.empty();
}

}  // namespace

absl::Status CheckExecutableSubgraph(const Model& model, SubgraphId id) {
  const Subgraph& sg = model.subgraphs[id];
  const std::string where = SubgraphLabel(model, id);
  const size_t n = sg.tensors.size();
  std::vector<bool> is_input(n, false);
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    const TensorId t = sg.inputs[i];
    if (t < 0 || static_cast<size_t>(t) >= n) continue;  // VerifyModel's
    is_input[t] = true;
    if (HasData(model, sg.tensors[t])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: input %d is %s, a constant (buffer %d holds its data): an "
          "input is written by the caller, a constant is read-only",
          where, i, TensorLabel(sg, t), sg.tensors[t].buffer));
    }
  }
  // writer[t]: the op that writes tensor t, or -1.
  std::vector<int64_t> writer(n, -1);
  for (size_t k = 0; k < sg.ops.size(); ++k) {
    const tfl::OperatorT& op = sg.ops[k];
    if (op.opcode_index >= model.operator_codes.size()) continue;
    const std::string label =
        absl::StrFormat("%s op %d (%s)", where, k, OpName(model, op));
    const tfl::OperatorCodeT& code = model.operator_codes[op.opcode_index];
    const tfl::BuiltinOperator builtin = EffectiveBuiltinCode(code);
    const bool dispatch = builtin == tfl::BuiltinOperator_CUSTOM &&
                          (code.custom_code == kDispatchCustomCode ||
                           code.custom_code == kLiteRtDispatchCustomCode);
    // Ops without a kernel are reported as such when prepared; their
    // inputs do not matter here.
    const bool kernel_op =
        builtin != tfl::BuiltinOperator_CUSTOM && !FindKernels(builtin).empty();
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (op.inputs[i] != kNoTensor) continue;
      if (dispatch) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: input %d is omitted (-1); a dispatch op passes every input "
            "to its vendor",
            label, i));
      }
      if (kernel_op && !MayOmitInput(builtin, i)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: input %d is omitted (-1), which %s does not allow there",
            label, i, OpName(model, op)));
      }
    }
    for (size_t j = 0; j < op.outputs.size(); ++j) {
      const TensorId t = op.outputs[j];
      if (t < 0 || static_cast<size_t>(t) >= n) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: output %d is %s; the op must write it", label, j,
            t == kNoTensor ? std::string("omitted (-1)")
                           : absl::StrCat("tensor ", t, ", out of range")));
      }
      const std::string out =
          absl::StrFormat("%s: output %d is %s", label, j, TensorLabel(sg, t));
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        if (op.inputs[i] == t) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s, which is also its input %d (an op may not write what it "
              "reads)",
              out, i));
        }
      }
      const tfl::TensorT& tensor = sg.tensors[t];
      if (HasData(model, tensor)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s, a constant (buffer %d holds its data): it is read-only", out,
            tensor.buffer));
      }
      if (tensor.is_variable) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s, a variable: variables are state an op reads as an input "
            "and updates in place, never an op's output",
            out));
      }
      if (is_input[t]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s, an input of %s: inputs are the caller's (for a called "
            "subgraph, its caller's tensors) and no op writes them",
            out, where));
      }
      if (writer[t] >= 0) {
        const int64_t other = writer[t];
        return absl::InvalidArgumentError(
            other == static_cast<int64_t>(k)
                ? absl::StrFormat("%s, listed twice among its outputs", out)
                : absl::StrFormat(
                      "%s, which op %d (%s) also writes: a tensor has one "
                      "producer",
                      out, other, OpName(model, sg.ops[other])));
      }
      writer[t] = static_cast<int64_t>(k);
    }
  }
  // An output must hold something when the subgraph ends: an op writes it,
  // or it is an input, a constant or a variable. Otherwise no memory was
  // ever given to it (a callee's output was copied from null).
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    const TensorId t = sg.outputs[i];
    if (t < 0 || static_cast<size_t>(t) >= n) continue;  // VerifyModel's
    if (writer[t] < 0 && !is_input[t] && !HasData(model, sg.tensors[t]) &&
        !sg.tensors[t].is_variable) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: output %d is %s, which no op writes and which is no input, "
          "constant or variable",
          where, i, TensorLabel(sg, t)));
    }
  }
  return absl::OkStatus();
}

}  // namespace graft
