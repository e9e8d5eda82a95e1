// CUMSUM (FLOAT32, INT32, INT64; exclusive and reverse options; the axis
// from a scalar INT32 input, read at load when constant, else at invoke)
// and ONE_HOT (INT32/INT64 indices; FLOAT32, INT16, INT32, INT64, INT8,
// UINT8 and BOOL outputs), as TFLite's cumsum.cc and one_hot.cc: CUMSUM
// accumulates each line in order in the element type (integers wrap), and
// ONE_HOT writes on_value where index == depth position and off_value
// elsewhere (out-of-range indices give a row of off_value).
#include <cstring>
#include <type_traits>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

struct CumsumState : KernelState {
  bool exclusive = false;
  bool reverse = false;
  bool axis_known = false;  // else read at eval
  int64_t outer = 0, len = 0, inner = 0;
};

// The [outer, len, inner] view of `shape` around `axis` (may be negative).
absl::Status CumsumGeometry(const Shape& shape, int64_t axis, CumsumState* s) {
  const int rank = static_cast<int>(shape.size());
  GRAFT_KERNEL_CHECK(axis >= -rank && axis < rank,
                     "axis %d is out of range for rank %d", axis, rank);
  const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
  s->outer = DimProduct(shape, 0, a);
  s->len = shape[a];
  s->inner = DimProduct(shape, a + 1, rank);
  return absl::OkStatus();
}

// Integers add as unsigned so overflow wraps as TFLite's does in practice.
template <typename T>
T WrappingAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
absl::Status EvalCumsum(EvalContext& ctx) {
  CumsumState s = *ctx.state<CumsumState>();
  if (!s.axis_known) {
    const Tensor* axis_t = ctx.input(1);
    GRAFT_RETURN_IF_ERROR(
        CumsumGeometry(ctx.input(0)->shape, *axis_t->data<int32_t>(), &s));
  }
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const int64_t base = o * s.len * s.inner + i;
      T acc = T(0);
      for (int64_t k = 0; k < s.len; ++k) {
        const int64_t idx = base + (s.reverse ? s.len - 1 - k : k) * s.inner;
        if (s.exclusive) {
          out[idx] = acc;
          acc = WrappingAdd(acc, in[idx]);
        } else {
          acc = WrappingAdd(acc, in[idx]);
          out[idx] = acc;
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareCumsum(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 1));
  const tfl::TensorType type = in->type;
  if (ctx.output(0)->type != type || axis_t->type != tfl::TensorType_INT32 ||
      (type != tfl::TensorType_FLOAT32 && type != tfl::TensorType_INT32 &&
       type != tfl::TensorType_INT64)) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(axis_t->num_elements() == 1,
                     "axis must hold one value, got shape %s",
                     ShapeToString(axis_t->shape));
  auto* s = MakeState<CumsumState>(ctx);
  if (const auto* o = ctx.op().builtin_options.AsCumsumOptions()) {
    s->exclusive = o->exclusive;
    s->reverse = o->reverse;
  }
  // The output shape does not depend on the axis: a computed axis is read
  // (and checked) at invoke instead of deferring the whole prepare.
  if (IsConstant(axis_t)) {
    GRAFT_RETURN_IF_ERROR(
        CumsumGeometry(in->shape, *axis_t->data<int32_t>(), s));
    s->axis_known = true;
  }
  switch (type) {
    case tfl::TensorType_FLOAT32:
      ctx.SetEval(EvalCumsum<float>);
      break;
    case tfl::TensorType_INT32:
      ctx.SetEval(EvalCumsum<int32_t>);
      break;
    default:
      ctx.SetEval(EvalCumsum<int64_t>);
      break;
  }
  return ctx.SetOutputShape(0, in->shape);
}

struct OneHotState : KernelState {
  int64_t prefix = 0, depth = 0, suffix = 0;
};

// Output [prefix, depth, suffix]: element (p, d, q) is on where
// indices[p, q] == d. Only the element size of the output matters.
template <typename T, typename I>
absl::Status EvalOneHot(EvalContext& ctx) {
  const OneHotState& s = *ctx.state<OneHotState>();
  const I* indices = ctx.input(0)->data<I>();
  const T on = *ctx.input(2)->data<T>();
  const T off = *ctx.input(3)->data<T>();
  T* out = ctx.output(0)->data<T>();
  for (int64_t p = 0; p < s.prefix; ++p) {
    for (int64_t d = 0; d < s.depth; ++d) {
      const I* row = indices + p * s.suffix;
      T* dst = out + (p * s.depth + d) * s.suffix;
      for (int64_t q = 0; q < s.suffix; ++q) {
        dst[q] = static_cast<int64_t>(row[q]) == d ? on : off;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareOneHot(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 4, 4, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* depth_t, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* on_t, RequiredInput(ctx, 2));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* off_t, RequiredInput(ctx, 3));
  const tfl::TensorType type = ctx.output(0)->type;
  switch (type) {
    case tfl::TensorType_FLOAT32:
    case tfl::TensorType_INT16:
    case tfl::TensorType_INT32:
    case tfl::TensorType_INT64:
    case tfl::TensorType_INT8:
    case tfl::TensorType_UINT8:
    case tfl::TensorType_BOOL:
      break;
    default:
      return ctx.Unsupported();
  }
  if (!IsIntegerIndexType(indices->type) ||
      depth_t->type != tfl::TensorType_INT32 || on_t->type != type ||
      off_t->type != type) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(depth_t->num_elements() == 1,
                     "depth must hold one value, got shape %s",
                     ShapeToString(depth_t->shape));
  GRAFT_KERNEL_CHECK(on_t->num_elements() == 1 && off_t->num_elements() == 1,
                     "on_value and off_value must hold one value each");
  const int rank = indices->rank();
  const auto* o = ctx.op().builtin_options.AsOneHotOptions();
  const int64_t axis_opt = o != nullptr ? o->axis : 0;
  GRAFT_KERNEL_CHECK(axis_opt >= -1 && axis_opt <= rank,
                     "axis %d is out of range for %d-D indices", axis_opt,
                     rank);
  const int axis = static_cast<int>(axis_opt == -1 ? rank : axis_opt);
  const bool wide = indices->type == tfl::TensorType_INT64;
  DispatchByElementSize(ElementSize(type), [&](auto tag) {
    using T = decltype(tag);
    ctx.SetEval(wide ? EvalOneHot<T, int64_t> : EvalOneHot<T, int32_t>);
  });
  if (!ctx.ValuesKnown(depth_t)) return ctx.DeferToRun();
  const int64_t depth = *depth_t->data<int32_t>();
  GRAFT_KERNEL_CHECK(depth >= 0, "depth = %d is negative", depth);
  auto* s = MakeState<OneHotState>(ctx);
  s->prefix = DimProduct(indices->shape, 0, axis);
  s->depth = depth;
  s->suffix = DimProduct(indices->shape, axis, rank);
  Shape out(indices->shape.begin(), indices->shape.begin() + axis);
  out.push_back(static_cast<int32_t>(depth));
  out.insert(out.end(), indices->shape.begin() + axis, indices->shape.end());
  return ctx.SetOutputShape(0, std::move(out));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Cumsum);
GRAFT_DEFINE_KERNEL(OneHot);

}  // namespace graft
