// GATHER (axis, batch_dims) and GATHER_ND for every fixed-size dtype, with
// INT32 or INT64 indices, and GATHER of STRING params (the selected strings
// repacked; sized from the values, so at invoke unless they are constant).
// Out-of-range indices fail the invoke, as TFLite.
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/string_tensor.h"

namespace graft {
namespace kernels {
namespace {

struct GatherState : KernelState {
  int64_t batches = 1;     // product of the batch dims
  int64_t outer = 1;       // params dims between batch_dims and axis
  int64_t axis_size = 0;   // params.dim(axis)
  int64_t inner_bytes = 0; // bytes of one slice after axis (STRING: strings)
  int64_t num_indices = 0; // index count per batch
};

// The strings GATHER selects from STRING `params`, in output order.
template <typename Index>
absl::StatusOr<std::vector<absl::string_view>> GatherStrings(
    const GatherState& s, const Tensor& params, const Tensor& indices) {
  GRAFT_ASSIGN_OR_RETURN(
      std::vector<absl::string_view> in,
      UnpackStrings(absl::MakeConstSpan(params.raw_data, params.bytes)));
  GRAFT_KERNEL_CHECK(static_cast<int64_t>(in.size()) == params.num_elements(),
                     "params hold %d strings for shape %s", in.size(),
                     ShapeToString(params.shape));
  std::vector<absl::string_view> out;
  out.reserve(s.batches * s.outer * s.num_indices * s.inner_bytes);
  const Index* idx = indices.data<Index>();
  for (int64_t b = 0; b < s.batches; ++b) {
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.num_indices; ++i) {
        const int64_t k = static_cast<int64_t>(idx[b * s.num_indices + i]);
        if (k < 0 || k >= s.axis_size) {
          return absl::OutOfRangeError(absl::StrFormat(
              "GATHER index %d out of range [0, %d)", k, s.axis_size));
        }
        const int64_t first =
            ((b * s.outer + o) * s.axis_size + k) * s.inner_bytes;
        out.insert(out.end(), in.begin() + first,
                   in.begin() + first + s.inner_bytes);
      }
    }
  }
  return out;
}

template <typename Index>
absl::Status EvalGatherStrings(EvalContext& ctx) {
  GRAFT_ASSIGN_OR_RETURN(
      std::vector<absl::string_view> strings,
      GatherStrings<Index>(*ctx.state<GatherState>(), *ctx.input(0),
                           *ctx.input(1)));
  WritePackedStrings(strings, ctx.output(0)->raw_data);
  return absl::OkStatus();
}

template <typename Index>
absl::Status EvalGather(EvalContext& ctx) {
  const GatherState& s = *ctx.state<GatherState>();
  const uint8_t* params = ctx.input(0)->raw_data;
  const Index* indices = ctx.input(1)->data<Index>();
  uint8_t* out = ctx.output(0)->raw_data;
  for (int64_t b = 0; b < s.batches; ++b) {
    const Index* idx = indices + b * s.num_indices;
    for (int64_t o = 0; o < s.outer; ++o) {
      const uint8_t* base =
          params + ((b * s.outer + o) * s.axis_size) * s.inner_bytes;
      for (int64_t i = 0; i < s.num_indices; ++i) {
        const int64_t k = static_cast<int64_t>(idx[i]);
        if (k < 0 || k >= s.axis_size) {
          return absl::OutOfRangeError(absl::StrFormat(
              "GATHER index %d out of range [0, %d)", k, s.axis_size));
        }
        // An empty slice has no buffer to copy from or to (memcpy of null
        // is undefined even for 0 bytes; found by tests/fuzz, runtime).
        if (s.inner_bytes == 0) continue;
        std::memcpy(out, base + k * s.inner_bytes, s.inner_bytes);
        out += s.inner_bytes;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareGather(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* params, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1));
  const bool strings = params->type == tfl::TensorType_STRING;
  const size_t elem = strings ? 1 : ElementSize(params->type);
  if (elem == 0 || ctx.output(0)->type != params->type ||
      !IsIntegerIndexType(indices->type)) {
    return ctx.Unsupported();
  }
  if (strings && (!ctx.ValuesKnown(params) || !ctx.ValuesKnown(indices))) {
    return ctx.DeferToRun();
  }
  const auto* o = ctx.op().builtin_options.AsGatherOptions();
  const int rank = params->rank();
  GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(o ? o->axis : 0, rank));
  int batch_dims = o ? o->batch_dims : 0;
  if (batch_dims < 0) batch_dims += indices->rank();
  GRAFT_KERNEL_CHECK(batch_dims >= 0 && batch_dims <= axis &&
                         batch_dims <= indices->rank(),
                     "batch_dims %d invalid for axis %d", batch_dims, axis);
  for (int d = 0; d < batch_dims; ++d) {
    GRAFT_KERNEL_CHECK(params->dim(d) == indices->dim(d),
                       "batch dim %d differs: params %d, indices %d", d,
                       params->dim(d), indices->dim(d));
  }
  auto* s = MakeState<GatherState>(ctx);
  s->batches = DimProduct(params->shape, 0, batch_dims);
  s->outer = DimProduct(params->shape, batch_dims, axis);
  s->axis_size = params->dim(axis);
  s->inner_bytes = DimProduct(params->shape, axis + 1, rank) * elem;
  s->num_indices = DimProduct(indices->shape, batch_dims, indices->rank());
  Shape out(params->shape.begin(), params->shape.begin() + axis);
  out.insert(out.end(), indices->shape.begin() + batch_dims,
             indices->shape.end());
  out.insert(out.end(), params->shape.begin() + axis + 1,
             params->shape.end());
  const bool i32 = indices->type == tfl::TensorType_INT32;
  if (strings) {
    absl::StatusOr<std::vector<absl::string_view>> selected =
        i32 ? GatherStrings<int32_t>(*s, *params, *indices)
            : GatherStrings<int64_t>(*s, *params, *indices);
    GRAFT_RETURN_IF_ERROR(selected.status());
    ctx.SetEval(i32 ? EvalGatherStrings<int32_t> : EvalGatherStrings<int64_t>);
    return ctx.SetOutputShape(0, std::move(out),
                              PackedStringsBytes(*selected));
  }
  ctx.SetEval(i32 ? EvalGather<int32_t> : EvalGather<int64_t>);
  return ctx.SetOutputShape(0, std::move(out));
}

struct GatherNdState : KernelState {
  int depth = 0;
  int64_t num_slices = 0;
  int64_t slice_bytes = 0;
  std::vector<int64_t> dims;     // params dims indexed by the last axis
  std::vector<int64_t> strides;  // their strides, in slices
};

template <typename Index>
absl::Status EvalGatherNd(EvalContext& ctx) {
  const GatherNdState& s = *ctx.state<GatherNdState>();
  const uint8_t* params = ctx.input(0)->raw_data;
  const Index* indices = ctx.input(1)->data<Index>();
  uint8_t* out = ctx.output(0)->raw_data;
  for (int64_t i = 0; i < s.num_slices; ++i) {
    int64_t slice = 0;
    for (int d = 0; d < s.depth; ++d) {
      const int64_t k = static_cast<int64_t>(indices[i * s.depth + d]);
      if (k < 0 || k >= s.dims[d]) {
        return absl::OutOfRangeError(absl::StrFormat(
            "GATHER_ND index %d out of range [0, %d)", k, s.dims[d]));
      }
      slice += k * s.strides[d];
    }
    std::memcpy(out + i * s.slice_bytes, params + slice * s.slice_bytes,
                s.slice_bytes);
  }
  return absl::OkStatus();
}

absl::Status PrepareGatherNd(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* params, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1));
  const size_t elem = ElementSize(params->type);
  if (elem == 0 || ctx.output(0)->type != params->type ||
      !IsIntegerIndexType(indices->type)) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(indices->rank() >= 1, "indices must be at least 1-D");
  auto* s = MakeState<GatherNdState>(ctx);
  s->depth = indices->shape.back();
  GRAFT_KERNEL_CHECK(s->depth <= params->rank(),
                     "index depth %d exceeds params rank %d", s->depth,
                     params->rank());
  s->num_slices = DimProduct(indices->shape, 0, indices->rank() - 1);
  s->slice_bytes = DimProduct(params->shape, s->depth, params->rank()) * elem;
  s->dims.resize(s->depth);
  s->strides.resize(s->depth);
  int64_t stride = 1;
  for (int d = s->depth - 1; d >= 0; --d) {
    s->dims[d] = params->dim(d);
    s->strides[d] = stride;
    stride *= params->dim(d);
  }
  Shape out(indices->shape.begin(), indices->shape.end() - 1);
  out.insert(out.end(), params->shape.begin() + s->depth,
             params->shape.end());
  ctx.SetEval(indices->type == tfl::TensorType_INT32 ? EvalGatherNd<int32_t>
                                                     : EvalGatherNd<int64_t>);
  return ctx.SetOutputShape(0, std::move(out));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Gather);
GRAFT_DEFINE_KERNEL(GatherNd);

}  // namespace graft
