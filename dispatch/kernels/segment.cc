// SEGMENT_SUM and UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN} (float32, int32), as
// TFLite (kernels/segment_sum.cc, kernels/unsorted_segment.cc and
// reference_ops' SegmentSum / UnsortedSegmentRef):
//
// - SEGMENT_SUM(data, segment_ids): the ids (INT32, one per row of data)
//   must start at 0 and grow by 0 or 1 from row to row, so no segment is
//   empty; output dim 0 is the last id + 1. The output shape depends on the
//   ids' values: known at load when they are constant, else at invoke.
// - UNSORTED_SEGMENT_*(data, segment_ids, num_segments): output dim 0 is
//   num_segments (INT32 scalar or [1]); every id must be < num_segments.
//   Rows whose id is negative are dropped (TFLite skips them). Empty
//   segments hold the reduction's identity: 0, 1, the type's lowest (MAX),
//   the type's max (MIN). The ids' values do not change the shape, so only
//   a num_segments computed by the model defers to invoke; ids computed by
//   the model are checked at eval.
//
// int32 sums and products wrap on overflow (two's complement), as TFLite's
// do in practice.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

enum class Reduce { kSum, kProd, kMax, kMin };

struct SegmentState : KernelState {
  int64_t rows = 0;      // data dim 0 (= number of ids)
  int64_t inner = 0;     // elements per row
  int64_t segments = 0;  // output dim 0
};

// a + b and a * b, wrapping for int32 (TFLite's int arithmetic without the
// undefined behavior of signed overflow).
template <typename T>
T Add(T a, T b) {
  if constexpr (std::is_same_v<T, int32_t>) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) +
                                static_cast<uint32_t>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T Mul(T a, T b) {
  if constexpr (std::is_same_v<T, int32_t>) {
    return static_cast<int32_t>(static_cast<uint32_t>(a) *
                                static_cast<uint32_t>(b));
  } else {
    return a * b;
  }
}

template <typename T, Reduce R>
T Identity() {
  if constexpr (R == Reduce::kSum) return T(0);
  if constexpr (R == Reduce::kProd) return T(1);
  if constexpr (R == Reduce::kMax) return std::numeric_limits<T>::lowest();
  return std::numeric_limits<T>::max();
}

template <typename T, Reduce R>
void Combine(T* acc, const T* row, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    if constexpr (R == Reduce::kSum) acc[j] = Add(acc[j], row[j]);
    if constexpr (R == Reduce::kProd) acc[j] = Mul(acc[j], row[j]);
    // Argument order as TFLite's std::max(acc, x): acc is kept unless x
    // compares greater, so a NaN in the data never reaches the output.
    if constexpr (R == Reduce::kMax) acc[j] = std::max(acc[j], row[j]);
    if constexpr (R == Reduce::kMin) acc[j] = std::min(acc[j], row[j]);
  }
}

// The shapes shared by all five ops: data at least 1-D, one INT32 id per
// row of data. Fills rows and inner.
absl::Status CheckIds(const Tensor& data, const Tensor& ids, SegmentState* s) {
  GRAFT_KERNEL_CHECK(data.rank() >= 1, "data must be at least 1-D, got %s",
                     ShapeToString(data.shape));
  GRAFT_KERNEL_CHECK(ids.rank() >= 1 && ids.dim(0) == data.dim(0) &&
                         ids.num_elements() == data.dim(0),
                     "segment_ids %s must hold one id per row of data %s",
                     ShapeToString(ids.shape), ShapeToString(data.shape));
  s->rows = data.dim(0);
  s->inner = DimProduct(data.shape, 1, data.rank());
  return absl::OkStatus();
}

Shape OutputShape(const Tensor& data, int64_t segments) {
  Shape out = data.shape;
  out[0] = static_cast<int32_t>(segments);
  return out;
}

// Dtype checks shared by the five ops: the data type (FLOAT32 or INT32) is
// the output's; ids (and num_segments) INT32.
absl::Status CheckTypes(const PrepareContext& ctx, int num_int_inputs) {
  const Tensor* data = ctx.input(0);
  if ((data->type != tfl::TensorType_FLOAT32 &&
       data->type != tfl::TensorType_INT32) ||
      ctx.output(0)->type != data->type || IsQuantized(*data)) {
    return ctx.Unsupported();
  }
  for (int i = 1; i <= num_int_inputs; ++i) {
    GRAFT_KERNEL_CHECK(ctx.input(i)->type == tfl::TensorType_INT32,
                       "%s must be INT32, got %s",
                       i == 1 ? "segment_ids" : "num_segments",
                       TensorTypeName(ctx.input(i)->type));
  }
  return absl::OkStatus();
}

// ---- SEGMENT_SUM ----

// The number of segments sorted `ids` describe, or an error naming the
// first id that breaks TFLite's rule.
absl::StatusOr<int64_t> SortedSegments(const int32_t* ids, int64_t n) {
  int64_t prev = -1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids[i];
    if (i == 0) {
      GRAFT_KERNEL_CHECK(id == 0, "segment_ids must start at 0, got %d", id);
    } else {
      GRAFT_KERNEL_CHECK(
          id == prev || id == prev + 1,
          "segment_ids must be sorted and increase by at most 1: "
          "segment_ids[%d] = %d follows %d",
          i, id, prev);
    }
    prev = id;
  }
  return prev + 1;
}

template <typename T>
absl::Status EvalSegmentSum(EvalContext& ctx) {
  const SegmentState& s = *ctx.state<SegmentState>();
  const T* data = ctx.input(0)->data<T>();
  const int32_t* ids = ctx.input(1)->data<int32_t>();
  T* out = ctx.output(0)->data<T>();
  std::fill(out, out + s.segments * s.inner, T(0));
  for (int64_t i = 0; i < s.rows; ++i) {
    // Checked at prepare; kept so a broken invariant never writes out of
    // bounds.
    if (ids[i] < 0 || ids[i] >= s.segments) {
      return absl::InternalError(
          "SEGMENT_SUM: segment id changed after prepare");
    }
    Combine<T, Reduce::kSum>(out + ids[i] * s.inner, data + i * s.inner,
                             s.inner);
  }
  return absl::OkStatus();
}

absl::Status PrepareSegmentSum(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* ids, RequiredInput(ctx, 1));
  GRAFT_RETURN_IF_ERROR(CheckTypes(ctx, 1));
  ctx.SetEval(data->type == tfl::TensorType_FLOAT32 ? EvalSegmentSum<float>
                                                    : EvalSegmentSum<int32_t>);
  auto* s = MakeState<SegmentState>(ctx);
  GRAFT_RETURN_IF_ERROR(CheckIds(*data, *ids, s));
  if (!ctx.ValuesKnown(ids)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(s->segments,
                         SortedSegments(ids->data<int32_t>(), s->rows));
  ctx.SetReductionLength(s->rows);
  return ctx.SetOutputShape(0, OutputShape(*data, s->segments));
}

// ---- UNSORTED_SEGMENT_* ----

// Checks every id against num_segments (negative ids are allowed: their
// rows are dropped).
absl::Status CheckUnsortedIds(const int32_t* ids, int64_t n, int64_t segments) {
  for (int64_t i = 0; i < n; ++i) {
    GRAFT_KERNEL_CHECK(ids[i] < segments,
                       "segment_ids[%d] = %d is out of range for "
                       "num_segments = %d",
                       i, ids[i], segments);
  }
  return absl::OkStatus();
}

template <typename T, Reduce R>
absl::Status EvalUnsorted(EvalContext& ctx) {
  const SegmentState& s = *ctx.state<SegmentState>();
  const T* data = ctx.input(0)->data<T>();
  const int32_t* ids = ctx.input(1)->data<int32_t>();
  T* out = ctx.output(0)->data<T>();
  GRAFT_RETURN_IF_ERROR(CheckUnsortedIds(ids, s.rows, s.segments));
  std::fill(out, out + s.segments * s.inner, Identity<T, R>());
  for (int64_t i = 0; i < s.rows; ++i) {
    if (ids[i] < 0) continue;
    Combine<T, R>(out + ids[i] * s.inner, data + i * s.inner, s.inner);
  }
  return absl::OkStatus();
}

template <Reduce R>
absl::Status PrepareUnsorted(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* ids, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* num, RequiredInput(ctx, 2));
  GRAFT_RETURN_IF_ERROR(CheckTypes(ctx, 2));
  ctx.SetEval(data->type == tfl::TensorType_FLOAT32 ? EvalUnsorted<float, R>
                                                    : EvalUnsorted<int32_t, R>);
  auto* s = MakeState<SegmentState>(ctx);
  GRAFT_RETURN_IF_ERROR(CheckIds(*data, *ids, s));
  GRAFT_KERNEL_CHECK(num->rank() == 0 || (num->rank() == 1 && num->dim(0) == 1),
                     "num_segments must be a scalar or have shape [1], got %s",
                     ShapeToString(num->shape));
  if (!ctx.ValuesKnown(num)) return ctx.DeferToRun();
  s->segments = num->data<int32_t>()[0];
  GRAFT_KERNEL_CHECK(s->segments >= 0, "num_segments = %d is negative",
                     s->segments);
  if (ctx.ValuesKnown(ids)) {
    GRAFT_RETURN_IF_ERROR(
        CheckUnsortedIds(ids->data<int32_t>(), s->rows, s->segments));
  }
  ctx.SetReductionLength(s->rows);
  return ctx.SetOutputShape(0, OutputShape(*data, s->segments));
}

absl::Status PrepareUnsortedSegmentSum(PrepareContext& ctx) {
  return PrepareUnsorted<Reduce::kSum>(ctx);
}
absl::Status PrepareUnsortedSegmentProd(PrepareContext& ctx) {
  return PrepareUnsorted<Reduce::kProd>(ctx);
}
absl::Status PrepareUnsortedSegmentMax(PrepareContext& ctx) {
  return PrepareUnsorted<Reduce::kMax>(ctx);
}
absl::Status PrepareUnsortedSegmentMin(PrepareContext& ctx) {
  return PrepareUnsorted<Reduce::kMin>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(SegmentSum);
GRAFT_DEFINE_KERNEL(UnsortedSegmentSum);
GRAFT_DEFINE_KERNEL(UnsortedSegmentProd);
GRAFT_DEFINE_KERNEL(UnsortedSegmentMax);
GRAFT_DEFINE_KERNEL(UnsortedSegmentMin);

}  // namespace graft
