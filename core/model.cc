#include "core/model.h"

#include <algorithm>
#include <limits>

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
  code.deprecated_builtin_code = static_cast<int8_t>(
      std::min<int32_t>(builtin, tfl::BuiltinOperator_PLACEHOLDER_FOR_GREATER_OP_CODES));
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

}  // namespace graft
