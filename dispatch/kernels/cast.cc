// CAST between FLOAT32, INT32, INT64, INT16, INT8, UINT8 and BOOL, with C++
// conversion semantics as in TFLite (float -> int truncates toward zero; to
// BOOL is `x != 0`; from BOOL is 0 or 1).
#include <cstdint>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

template <typename From, typename To>
absl::Status EvalCast(EvalContext& ctx) {
  const From* in = ctx.input(0)->data<From>();
  To* out = ctx.output(0)->data<To>();
  const int64_t n = ctx.output(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<To, bool>) {
      out[i] = in[i] != From{0};
    } else {
      out[i] = static_cast<To>(in[i]);
    }
  }
  return absl::OkStatus();
}

template <typename From>
EvalFn CastTo(tfl::TensorType to) {
  switch (to) {
    case tfl::TensorType_FLOAT32: return EvalCast<From, float>;
    case tfl::TensorType_INT32: return EvalCast<From, int32_t>;
    case tfl::TensorType_INT64: return EvalCast<From, int64_t>;
    case tfl::TensorType_INT16: return EvalCast<From, int16_t>;
    case tfl::TensorType_INT8: return EvalCast<From, int8_t>;
    case tfl::TensorType_UINT8: return EvalCast<From, uint8_t>;
    case tfl::TensorType_BOOL: return EvalCast<From, bool>;
    default: return nullptr;
  }
}

EvalFn CastFn(tfl::TensorType from, tfl::TensorType to) {
  switch (from) {
    case tfl::TensorType_FLOAT32: return CastTo<float>(to);
    case tfl::TensorType_INT32: return CastTo<int32_t>(to);
    case tfl::TensorType_INT64: return CastTo<int64_t>(to);
    case tfl::TensorType_INT16: return CastTo<int16_t>(to);
    case tfl::TensorType_INT8: return CastTo<int8_t>(to);
    case tfl::TensorType_UINT8: return CastTo<uint8_t>(to);
    case tfl::TensorType_BOOL: return CastTo<bool>(to);
    default: return nullptr;
  }
}

absl::Status PrepareCast(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  EvalFn fn = CastFn(in->type, ctx.output(0)->type);
  if (fn == nullptr) {
    return ctx.Unsupported(absl::StrFormat(
        "CAST from %s to %s", TensorTypeName(in->type),
        TensorTypeName(ctx.output(0)->type)));
  }
  ctx.SetEval(fn);
  return ctx.SetOutputShape(0, in->shape);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Cast);

}  // namespace graft
