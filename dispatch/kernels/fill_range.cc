// Ops that make tensors from shapes and scalars, and two small elementwise
// ones, with TFLite's reference semantics:
// - FILL: dims (INT32/INT64, 1-D) and a scalar value of any fixed-size
//   dtype; every element is the value.
// - ZEROS_LIKE: zeros of the input's shape and dtype.
// - RANGE: start, limit, delta scalars (INT32, INT64, FLOAT32); size
//   ceil(|limit - start| / |delta|) (in integers for integer types); the
//   values accumulated as TFLite does (value += delta, not start + i *
//   delta, which differs in float). A delta of 0, or one pointing away from
//   the limit, is an error.
// - RANK: the input's rank as an INT32 scalar (folded at load).
// - BROADCAST_ARGS: the broadcast of two shapes (INT32 or INT64 vectors).
// - ADD_N: the elementwise sum of N tensors of one shape (FLOAT32, INT32,
//   INT64), each element summed from 0 in input order, as reference_ops::AddN.
// - LOGICAL_NOT: BOOL.
// FILL and RANGE shapes come from input values: with those known only at
// invoke, their prepare waits for it (kernel.h, DeferToRun).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

// ---- FILL ----

absl::Status EvalFill(EvalContext& ctx) {
  const Tensor& value = *ctx.input(1);
  Tensor& out = *ctx.output(0);
  const size_t elem = ElementSize(out.type);
  const int64_t n = out.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out.raw_data + i * elem, value.raw_data, elem);
  }
  return absl::OkStatus();
}

absl::Status PrepareFill(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* dims_t, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* value, RequiredInput(ctx, 1));
  if (ctx.output(0)->type != value->type || ElementSize(value->type) == 0) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(value->num_elements() == 1,
                     "the value must be a scalar, is %s",
                     ShapeToString(value->shape));
  if (!ctx.ValuesKnown(dims_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadIntValues(*dims_t));
  Shape shape;
  for (int64_t d : dims) {
    GRAFT_KERNEL_CHECK(d >= 0 && d <= INT32_MAX, "dimension %d is invalid", d);
    shape.push_back(static_cast<int32_t>(d));
  }
  ctx.SetEval(EvalFill);
  return ctx.SetOutputShape(0, std::move(shape));
}

// ---- ZEROS_LIKE ----

absl::Status EvalZerosLike(EvalContext& ctx) {
  Tensor& out = *ctx.output(0);
  if (out.bytes > 0) std::memset(out.raw_data, 0, out.bytes);
  return absl::OkStatus();
}

absl::Status PrepareZerosLike(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  const tfl::TensorType t = in->type;
  if (ctx.output(0)->type != t ||
      (t != tfl::TensorType_FLOAT32 && t != tfl::TensorType_INT32 &&
       t != tfl::TensorType_INT64)) {
    return ctx.Unsupported();
  }
  ctx.SetEval(EvalZerosLike);
  ctx.MarkShapeOnly();  // the values are zeros whatever the input holds
  return ctx.SetOutputShape(0, in->shape);
}

// ---- RANGE ----

template <typename T>
T Scalar(const Tensor& t) {
  T v;
  std::memcpy(&v, t.raw_data, sizeof(T));
  return v;
}

template <typename T>
absl::StatusOr<int64_t> RangeSize(T start, T limit, T delta) {
  GRAFT_KERNEL_CHECK(delta != 0, "delta is 0");
  GRAFT_KERNEL_CHECK((start >= limit && delta < 0) ||
                         (start <= limit && delta > 0),
                     "delta %s points away from the limit",
                     absl::StrCat(delta));
  if constexpr (std::is_integral_v<T>) {
    const T span = start > limit ? start - limit : limit - start;
    const T step = delta < 0 ? -delta : delta;
    return static_cast<int64_t>((span + step - 1) / step);
  } else {
    return static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)));
  }
}

template <typename T>
absl::Status EvalRange(EvalContext& ctx) {
  const T delta = Scalar<T>(*ctx.input(2));
  T value = Scalar<T>(*ctx.input(0));
  T* out = ctx.output(0)->data<T>();
  const int64_t n = ctx.output(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    out[i] = value;
    value += delta;
  }
  return absl::OkStatus();
}

template <typename T>
absl::Status PrepareRangeOf(PrepareContext& ctx, const Tensor& start,
                            const Tensor& limit, const Tensor& delta) {
  GRAFT_ASSIGN_OR_RETURN(
      int64_t size,
      RangeSize(Scalar<T>(start), Scalar<T>(limit), Scalar<T>(delta)));
  GRAFT_KERNEL_CHECK(size <= INT32_MAX, "the range has %d elements", size);
  ctx.SetEval(EvalRange<T>);
  return ctx.SetOutputShape(0, {static_cast<int32_t>(size)});
}

absl::Status PrepareRange(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* start, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* limit, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* delta, RequiredInput(ctx, 2));
  const tfl::TensorType t = start->type;
  if (limit->type != t || delta->type != t || ctx.output(0)->type != t ||
      (t != tfl::TensorType_INT32 && t != tfl::TensorType_INT64 &&
       t != tfl::TensorType_FLOAT32)) {
    return ctx.Unsupported();
  }
  for (const Tensor* s : {start, limit, delta}) {
    GRAFT_KERNEL_CHECK(s->num_elements() == 1, "'%s' must be a scalar, is %s",
                       s->name, ShapeToString(s->shape));
  }
  if (!ctx.ValuesKnown(start) || !ctx.ValuesKnown(limit) ||
      !ctx.ValuesKnown(delta)) {
    return ctx.DeferToRun();
  }
  switch (t) {
    case tfl::TensorType_INT32:
      return PrepareRangeOf<int32_t>(ctx, *start, *limit, *delta);
    case tfl::TensorType_INT64:
      return PrepareRangeOf<int64_t>(ctx, *start, *limit, *delta);
    default:
      return PrepareRangeOf<float>(ctx, *start, *limit, *delta);
  }
}

// ---- RANK ----

absl::Status EvalRank(EvalContext& ctx) {
  const int32_t rank = ctx.input(0)->rank();
  std::memcpy(ctx.output(0)->raw_data, &rank, sizeof(rank));
  return absl::OkStatus();
}

absl::Status PrepareRank(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_RETURN_IF_ERROR(RequiredInput(ctx, 0).status());
  if (ctx.output(0)->type != tfl::TensorType_INT32) return ctx.Unsupported();
  ctx.SetEval(EvalRank);
  ctx.MarkShapeOnly();
  return ctx.SetOutputShape(0, {});
}

// ---- BROADCAST_ARGS ----

template <typename T>
absl::Status EvalBroadcastArgs(EvalContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  T* out = ctx.output(0)->data<T>();
  const int64_t na = a.num_elements(), nb = b.num_elements();
  const int64_t n = std::max(na, nb);
  for (int64_t i = 0; i < n; ++i) {
    // Aligned at the end; a missing leading dimension counts as 1.
    const T da = i < n - na ? 1 : a.data<T>()[i - (n - na)];
    const T db = i < n - nb ? 1 : b.data<T>()[i - (n - nb)];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("shapes do not broadcast: dimension %d is %d and %d",
                          i, static_cast<int64_t>(da),
                          static_cast<int64_t>(db)));
    }
    out[i] = da == 1 ? db : da;
  }
  return absl::OkStatus();
}

absl::Status PrepareBroadcastArgs(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1));
  const tfl::TensorType t = a->type;
  if (b->type != t || ctx.output(0)->type != t ||
      (t != tfl::TensorType_INT32 && t != tfl::TensorType_INT64)) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(a->rank() == 1 && b->rank() == 1,
                     "the shapes must be vectors, are %s and %s",
                     ShapeToString(a->shape), ShapeToString(b->shape));
  ctx.SetEval(t == tfl::TensorType_INT32 ? EvalBroadcastArgs<int32_t>
                                         : EvalBroadcastArgs<int64_t>);
  return ctx.SetOutputShape(
      0, {static_cast<int32_t>(std::max(a->num_elements(), b->num_elements()))});
}

// ---- ADD_N ----

template <typename T>
absl::Status EvalAddN(EvalContext& ctx) {
  T* out = ctx.output(0)->data<T>();
  const int64_t n = ctx.output(0)->num_elements();
  const int inputs = ctx.num_inputs();
  for (int64_t i = 0; i < n; ++i) {
    T x = 0;
    for (int j = 0; j < inputs; ++j) x += ctx.input(j)->data<T>()[i];
    out[i] = x;
  }
  return absl::OkStatus();
}

absl::Status PrepareAddN(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1 << 16, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* first, RequiredInput(ctx, 0));
  const tfl::TensorType t = first->type;
  if (ctx.output(0)->type != t ||
      (t != tfl::TensorType_FLOAT32 && t != tfl::TensorType_INT32 &&
       t != tfl::TensorType_INT64)) {
    return ctx.Unsupported();
  }
  for (int j = 1; j < ctx.num_inputs(); ++j) {
    GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, j));
    if (in->type != t) return ctx.Unsupported();
    GRAFT_KERNEL_CHECK(in->shape == first->shape,
                       "input %d is %s, input 0 is %s", j,
                       ShapeToString(in->shape), ShapeToString(first->shape));
  }
  ctx.SetEval(t == tfl::TensorType_FLOAT32 ? EvalAddN<float>
              : t == tfl::TensorType_INT32 ? EvalAddN<int32_t>
                                           : EvalAddN<int64_t>);
  ctx.SetReductionLength(ctx.num_inputs());
  return ctx.SetOutputShape(0, first->shape);
}

// ---- LOGICAL_NOT ----

absl::Status EvalLogicalNot(EvalContext& ctx) {
  const uint8_t* in = ctx.input(0)->raw_data;
  uint8_t* out = ctx.output(0)->raw_data;
  const int64_t n = ctx.input(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] == 0 ? 1 : 0;
  return absl::OkStatus();
}

absl::Status PrepareLogicalNot(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  if (in->type != tfl::TensorType_BOOL ||
      ctx.output(0)->type != tfl::TensorType_BOOL) {
    return ctx.Unsupported();
  }
  ctx.SetEval(EvalLogicalNot);
  return ctx.SetOutputShape(0, in->shape);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Fill);
GRAFT_DEFINE_KERNEL(ZerosLike);
GRAFT_DEFINE_KERNEL(Range);
GRAFT_DEFINE_KERNEL(Rank);
GRAFT_DEFINE_KERNEL(BroadcastArgs);
GRAFT_DEFINE_KERNEL(AddN);
GRAFT_DEFINE_KERNEL(LogicalNot);

}  // namespace graft
