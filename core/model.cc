#include "core/model.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace graft {

tfl::BuiltinOperator EffectiveBuiltinCode(const tfl::OperatorCodeT& code) {
  return static_cast<tfl::BuiltinOperator>(
      std::max<int32_t>(code.builtin_code, code.deprecated_builtin_code));
}

std::string OpCodeName(const tfl::OperatorCodeT& code) {
  tfl::BuiltinOperator op = EffectiveBuiltinCode(code);
  if (op == tfl::BuiltinOperator_CUSTOM) {
    return absl::StrCat("CUSTOM:", code.custom_code);
  }
  if (op < tfl::BuiltinOperator_MIN || op > tfl::BuiltinOperator_MAX) {
    return absl::StrCat("UNKNOWN(", static_cast<int32_t>(op), ")");
  }
  const char* name = tfl::EnumNameBuiltinOperator(op);
  if (name == nullptr || *name == '\0') {
    return absl::StrCat("UNKNOWN(", static_cast<int32_t>(op), ")");
  }
  return name;
}

std::string OpName(const Model& model, const tfl::OperatorT& op) {
  if (op.opcode_index >= model.operator_codes.size()) {
    return absl::StrCat("INVALID_OPCODE(", op.opcode_index, ")");
  }
  return OpCodeName(model.operator_codes[op.opcode_index]);
}

std::string TensorTypeName(tfl::TensorType type) {
  if (type < tfl::TensorType_MIN || type > tfl::TensorType_MAX) {
    return absl::StrCat("UNKNOWN(", static_cast<int>(type), ")");
  }
  const char* name = tfl::EnumNameTensorType(type);
  if (name == nullptr || *name == '\0') {
    return absl::StrCat("UNKNOWN(", static_cast<int>(type), ")");
  }
  return name;
}

int TensorTypeBits(tfl::TensorType type) {
  switch (type) {
    case tfl::TensorType_BOOL:
    case tfl::TensorType_INT8:
    case tfl::TensorType_UINT8:
      return 8;
    case tfl::TensorType_INT4:
      return 4;
    case tfl::TensorType_INT16:
    case tfl::TensorType_UINT16:
    case tfl::TensorType_FLOAT16:
    case tfl::TensorType_BFLOAT16:
      return 16;
    case tfl::TensorType_INT32:
    case tfl::TensorType_UINT32:
    case tfl::TensorType_FLOAT32:
      return 32;
    case tfl::TensorType_INT64:
    case tfl::TensorType_UINT64:
    case tfl::TensorType_FLOAT64:
    case tfl::TensorType_COMPLEX64:
      return 64;
    case tfl::TensorType_COMPLEX128:
      return 128;
    default:
      return 0;  // STRING, RESOURCE, VARIANT and unknown values.
  }
}

int64_t NumElements(absl::Span<const int32_t> shape) {
  int64_t n = 1;
  for (int32_t d : shape) {
    if (d < 0) return -1;
    // Shapes come from untrusted files: refuse a product past int64.
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

bool IsConstantTensor(const Model& model, const tfl::TensorT& tensor) {
  return tensor.buffer != 0 && tensor.buffer < model.buffers.size() &&
         !model.buffers[tensor.buffer].data.empty();
}

uint32_t GetOrAddOperatorCode(Model& model, tfl::BuiltinOperator builtin,
                              absl::string_view custom_code, int32_t version) {
  for (size_t i = 0; i < model.operator_codes.size(); ++i) {
    const tfl::OperatorCodeT& c = model.operator_codes[i];
    if (EffectiveBuiltinCode(c) == builtin && c.custom_code == custom_code &&
        c.version == version) {
      return static_cast<uint32_t>(i);
    }
  }
  tfl::OperatorCodeT code;
  code.builtin_code = builtin;
  // Readers of schema v3 look at deprecated_builtin_code only; it saturates
  // at PLACEHOLDER_FOR_GREATER_OP_CODES (127) for newer operators.
  code.deprecated_builtin_code = static_cast<int8_t>(std::min<int32_t>(
      builtin, tfl::BuiltinOperator_PLACEHOLDER_FOR_GREATER_OP_CODES));
  code.custom_code = std::string(custom_code);
  code.version = version;
  model.operator_codes.push_back(std::move(code));
  return static_cast<uint32_t>(model.operator_codes.size() - 1);
}

BufferId AddBuffer(Model& model, Bytes data) {
  if (model.buffers.empty()) model.buffers.emplace_back();  // Sentinel 0.
  model.buffers.push_back(Buffer{std::move(data), false});
  return static_cast<BufferId>(model.buffers.size() - 1);
}

namespace {

// `captured`'s paths, less those naming a top-level field (of `fields`,
// with whether it is empty now) that has since been filled.
std::vector<std::string> StillEmpty(
    const EmptyVectors& captured,
    std::initializer_list<std::pair<absl::string_view, bool>> fields) {
  std::vector<std::string> out;
  for (const std::string& path : captured.present) {
    bool filled = false;
    for (const auto& [name, empty] : fields) {
      if (path == name && !empty) filled = true;
    }
    if (!filled) out.push_back(path);
  }
  return out;
}

// For a record Graft made: the fields among `fields` the converter writes
// even when empty, that are empty.
std::vector<std::string> Defaults(
    std::initializer_list<std::pair<absl::string_view, bool>> fields) {
  std::vector<std::string> out;
  for (const auto& [name, empty] : fields) {
    if (empty) out.emplace_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const EmptyVectors* Entry(const std::vector<EmptyVectors>& v, size_t i) {
  return i < v.size() && v[i].loaded ? &v[i] : nullptr;
}

}  // namespace

std::vector<std::string> PresentEmptyVectors(const Model& m) {
  if (!m.empty_vectors.loaded) {
    return Defaults({{"buffers", m.buffers.empty()},
                     {"operator_codes", m.operator_codes.empty()},
                     {"signature_defs", m.signature_defs.empty()},
                     {"subgraphs", m.subgraphs.empty()}});
  }
  return StillEmpty(m.empty_vectors,
                    {{"operator_codes", m.operator_codes.empty()},
                     {"subgraphs", m.subgraphs.empty()},
                     {"buffers", m.buffers.empty()},
                     {"metadata_buffer", m.metadata_buffer.empty()},
                     {"metadata", m.metadata.empty()},
                     {"signature_defs", m.signature_defs.empty()}});
}

std::vector<std::string> PresentEmptyVectors(const Subgraph& sg) {
  if (!sg.empty_vectors.loaded) {
    return Defaults({{"inputs", sg.inputs.empty()},
                     {"operators", sg.ops.empty()},
                     {"outputs", sg.outputs.empty()},
                     {"tensors", sg.tensors.empty()}});
  }
  return StillEmpty(sg.empty_vectors, {{"tensors", sg.tensors.empty()},
                                       {"inputs", sg.inputs.empty()},
                                       {"outputs", sg.outputs.empty()},
                                       {"operators", sg.ops.empty()}});
}

std::vector<std::string> TensorPresentEmptyVectors(const Subgraph& sg,
                                                   TensorId id) {
  const tfl::TensorT& t = sg.tensors[id];
  const EmptyVectors* captured = Entry(sg.tensor_empty_vectors, id);
  if (captured == nullptr) return Defaults({{"shape", t.shape.empty()}});
  return StillEmpty(*captured,
                    {{"shape", t.shape.empty()},
                     {"shape_signature", t.shape_signature.empty()},
                     {"variant_tensors", t.variant_tensors.empty()}});
}

std::vector<std::string> OpPresentEmptyVectors(const Subgraph& sg, OpId id) {
  const tfl::OperatorT& op = sg.ops[id];
  const EmptyVectors* captured = Entry(sg.op_empty_vectors, id);
  if (captured == nullptr) return {};
  return StillEmpty(*captured, {{"inputs", op.inputs.empty()},
                                {"outputs", op.outputs.empty()},
                                {"custom_options", op.custom_options.empty()},
                                {"mutating_variable_inputs",
                                 op.mutating_variable_inputs.empty()},
                                {"intermediates", op.intermediates.empty()}});
}

std::vector<std::string> SignaturePresentEmptyVectors(const Model& m,
                                                      size_t i) {
  const tfl::SignatureDefT& sig = m.signature_defs[i];
  const EmptyVectors* captured = Entry(m.signature_empty_vectors, i);
  if (captured == nullptr) {
    return Defaults(
        {{"inputs", sig.inputs.empty()}, {"outputs", sig.outputs.empty()}});
  }
  return StillEmpty(*captured, {{"inputs", sig.inputs.empty()},
                                {"outputs", sig.outputs.empty()}});
}

}  // namespace graft
