// SCATTER_ND, TOPK_V2 and WHERE with TFLite's semantics.
//
// SCATTER_ND (INT32 indices, updates, INT32 shape): a zero tensor of
// `shape` into which each update slice is added at its index (duplicates
// add up); float32, int32, int64, int8. An index out of range fails at
// invoke, as in TFLite.
//
// TOPK_V2 (input, k): the k largest values along the last dim, in
// descending order, and their int32 indices; equal values keep their input
// order (lower index first).
//
// WHERE (condition): the INT64 coordinates [count, rank] of the condition's
// nonzero (true) elements, in row-major order.
//
// A shape or k computed by the model, and WHERE's input, are values known
// only at invoke: these kernels then defer their prepare to it (kernel.h).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

// ---- SCATTER_ND ----

struct ScatterNdState : KernelState {
  int64_t num_updates = 0;  // index tuples
  int64_t depth = 0;        // indices' last dim
  int64_t slice = 0;        // elements per update
  std::vector<int64_t> dims;     // output shape
  std::vector<int64_t> strides;  // element strides of the indexed dims
};

template <typename T>
absl::Status EvalScatterNd(EvalContext& ctx) {
  const ScatterNdState& s = *ctx.state<ScatterNdState>();
  const int32_t* idx = ctx.input(0)->data<int32_t>();
  const T* upd = ctx.input(1)->data<T>();
  T* out = ctx.output(0)->data<T>();
  std::fill(out, out + ctx.output(0)->num_elements(), T{0});
  for (int64_t u = 0; u < s.num_updates; ++u) {
    int64_t offset = 0;
    for (int64_t d = 0; d < s.depth; ++d) {
      const int64_t i = static_cast<int64_t>(idx[u * s.depth + d]);
      if (i < 0 || i >= s.dims[d]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "SCATTER_ND index %d of update %d is out of range [0, %d)", i, u,
            s.dims[d]));
      }
      offset += i * s.strides[d];
    }
    const T* src = upd + u * s.slice;
    T* dst = out + offset;
    for (int64_t j = 0; j < s.slice; ++j) dst[j] += src[j];
  }
  return absl::OkStatus();
}

absl::Status PrepareScatterNd(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* updates, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 2));
  const tfl::TensorType t = updates->type;
  if (ctx.output(0)->type != t ||
      !SameQuantization(*updates, *ctx.output(0))) {
    return ctx.Unsupported();
  }
  if (indices->type != tfl::TensorType_INT32) {
    return ctx.Unsupported(absl::StrFormat(
        "%s indices (TFLite's SCATTER_ND takes INT32)",
        TensorTypeName(indices->type)));
  }
  switch (t) {
    case tfl::TensorType_FLOAT32:
      ctx.SetEval(EvalScatterNd<float>);
      break;
    case tfl::TensorType_INT32:
      ctx.SetEval(EvalScatterNd<int32_t>);
      break;
    case tfl::TensorType_INT64:
      ctx.SetEval(EvalScatterNd<int64_t>);
      break;
    case tfl::TensorType_INT8:
      ctx.SetEval(EvalScatterNd<int8_t>);
      break;
    default:
      return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(shape_t->type == indices->type,
                     "indices (%s) and shape (%s) must have the same type",
                     TensorTypeName(indices->type),
                     TensorTypeName(shape_t->type));
  if (!ctx.ValuesKnown(shape_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadIntValues(*shape_t));
  GRAFT_KERNEL_CHECK(indices->rank() >= 1, "indices must be at least 1-D");
  auto* s = MakeState<ScatterNdState>(ctx);
  s->depth = indices->shape.back();
  const int outer = indices->rank() - 1;
  GRAFT_KERNEL_CHECK(s->depth >= 1 && s->depth <= static_cast<int64_t>(dims.size()),
                     "index depth %d does not fit output rank %d", s->depth,
                     dims.size());
  s->num_updates = DimProduct(indices->shape, 0, outer);
  // updates = indices.shape[:-1] + shape[depth:]
  Shape want(indices->shape.begin(), indices->shape.end() - 1);
  Shape out_shape;
  for (size_t d = 0; d < dims.size(); ++d) {
    GRAFT_KERNEL_CHECK(dims[d] >= 0, "negative output dim %d", dims[d]);
    out_shape.push_back(static_cast<int32_t>(dims[d]));
    if (static_cast<int64_t>(d) >= s->depth) want.push_back(out_shape.back());
  }
  GRAFT_KERNEL_CHECK(updates->shape == want,
                     "updates are %s, expected %s for indices %s and shape %s",
                     ShapeToString(updates->shape), ShapeToString(want),
                     ShapeToString(indices->shape), ShapeToString(out_shape));
  s->dims = dims;
  s->slice = DimProduct(out_shape, static_cast<int>(s->depth),
                        static_cast<int>(out_shape.size()));
  const std::vector<int64_t> strides = Strides(out_shape);
  s->strides.assign(strides.begin(), strides.begin() + s->depth);
  return ctx.SetOutputShape(0, std::move(out_shape));
}

// ---- TOPK_V2 ----

struct TopKState : KernelState {
  int64_t rows = 0, n = 0, k = 0;
};

template <typename T>
absl::Status EvalTopK(EvalContext& ctx) {
  const TopKState& s = *ctx.state<TopKState>();
  const T* in = ctx.input(0)->data<T>();
  T* values = ctx.output(0)->data<T>();
  int32_t* indices = ctx.output(1)->data<int32_t>();
  // The index order is scratch: rows are sorted one at a time.
  int32_t* order = ctx.scratch_as<int32_t>();
  for (int64_t r = 0; r < s.rows; ++r) {
    const T* row = in + r * s.n;
    std::iota(order, order + s.n, 0);
    std::partial_sort(order, order + s.k, order + s.n,
                      [row](int32_t a, int32_t b) {
                        return row[a] > row[b] || (row[a] == row[b] && a < b);
                      });
    for (int64_t j = 0; j < s.k; ++j) {
      values[r * s.k + j] = row[order[j]];
      indices[r * s.k + j] = order[j];
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareTopKV2(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 2));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* k_t, RequiredInput(ctx, 1));
  if (ctx.output(0)->type != in->type ||
      ctx.output(1)->type != tfl::TensorType_INT32 ||
      !SameQuantization(*in, *ctx.output(0))) {
    return ctx.Unsupported();
  }
  switch (in->type) {
    case tfl::TensorType_FLOAT32:
      ctx.SetEval(EvalTopK<float>);
      break;
    case tfl::TensorType_INT32:
      ctx.SetEval(EvalTopK<int32_t>);
      break;
    case tfl::TensorType_INT64:
      ctx.SetEval(EvalTopK<int64_t>);
      break;
    case tfl::TensorType_INT8:
      ctx.SetEval(EvalTopK<int8_t>);
      break;
    case tfl::TensorType_UINT8:
      ctx.SetEval(EvalTopK<uint8_t>);
      break;
    default:
      return ctx.Unsupported();
  }
  if (!ctx.ValuesKnown(k_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> k, ReadIntValues(*k_t));
  GRAFT_KERNEL_CHECK(k.size() == 1, "k must hold one value");
  GRAFT_KERNEL_CHECK(in->rank() >= 1, "input must be at least 1-D");
  auto* s = MakeState<TopKState>(ctx);
  s->n = in->shape.back();
  s->k = k[0];
  GRAFT_KERNEL_CHECK(s->k >= 0 && s->k <= s->n,
                     "k = %d is outside [0, %d] (the last dim of %s)", s->k,
                     s->n, ShapeToString(in->shape));
  s->rows = s->n == 0 ? 0 : in->num_elements() / s->n;
  ctx.RequestScratch(sizeof(int32_t) * static_cast<size_t>(s->n));
  Shape out = in->shape;
  out.back() = static_cast<int32_t>(s->k);
  GRAFT_RETURN_IF_ERROR(ctx.SetOutputShape(0, out));
  return ctx.SetOutputShape(1, out);
}

// ---- WHERE ----

struct WhereState : KernelState {
  int64_t count = 0;  // true elements: the output's rows
};

template <typename T>
absl::Status EvalWhere(EvalContext& ctx) {
  const Tensor& in = *ctx.input(0);
  const T* cond = in.data<T>();
  int64_t* out = ctx.output(0)->data<int64_t>();
  const int rank = in.rank();
  const int64_t n = in.num_elements();
  int64_t written = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (cond[i] == T{0}) continue;
    if (written == ctx.state<WhereState>()->count) {
      return absl::InternalError("WHERE: more true elements than prepared");
    }
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      out[written * rank + d] = rest % in.dim(d);
      rest /= in.dim(d);
    }
    ++written;
  }
  return absl::OkStatus();
}

template <typename T>
int64_t CountNonzero(const Tensor& t) {
  const T* v = t.data<T>();
  return std::count_if(v, v + t.num_elements(),
                       [](T x) { return x != T{0}; });
}

absl::Status PrepareWhere(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  if (ctx.output(0)->type != tfl::TensorType_INT64) {
    return ctx.Unsupported("WHERE output other than INT64");
  }
  int64_t (*count)(const Tensor&) = nullptr;
  switch (in->type) {
    case tfl::TensorType_BOOL:
      count = CountNonzero<bool>, ctx.SetEval(EvalWhere<bool>);
      break;
    case tfl::TensorType_FLOAT32:
      count = CountNonzero<float>, ctx.SetEval(EvalWhere<float>);
      break;
    case tfl::TensorType_INT32:
      count = CountNonzero<int32_t>, ctx.SetEval(EvalWhere<int32_t>);
      break;
    case tfl::TensorType_INT64:
      count = CountNonzero<int64_t>, ctx.SetEval(EvalWhere<int64_t>);
      break;
    case tfl::TensorType_INT8:
      count = CountNonzero<int8_t>, ctx.SetEval(EvalWhere<int8_t>);
      break;
    case tfl::TensorType_UINT8:
      count = CountNonzero<uint8_t>, ctx.SetEval(EvalWhere<uint8_t>);
      break;
    default:
      return ctx.Unsupported();
  }
  if (!ctx.ValuesKnown(in)) return ctx.DeferToRun();
  auto* s = MakeState<WhereState>(ctx);
  s->count = count(*in);
  return ctx.SetOutputShape(
      0, Shape{static_cast<int32_t>(s->count), static_cast<int32_t>(in->rank())});
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(ScatterNd);
GRAFT_DEFINE_KERNEL(TopKV2);
GRAFT_DEFINE_KERNEL(Where);

}  // namespace graft
