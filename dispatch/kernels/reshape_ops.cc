// Ops that change only the shape, for every fixed-size dtype and STRING:
// RESHAPE, SQUEEZE, EXPAND_DIMS (a copy of the bytes into the new shape),
// and SHAPE.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

absl::Status EvalCopy(EvalContext& ctx) {
  const Tensor* in = ctx.input(0);
  Tensor* out = ctx.output(0);
  if (out->raw_data != in->raw_data && in->bytes > 0) {
    std::memcpy(out->raw_data, in->raw_data, in->bytes);
  }
  return absl::OkStatus();
}

// Every fixed-size dtype, and STRING: a STRING buffer does not record its
// shape, so these ops copy it whole too (sized at invoke unless constant).
absl::Status CheckSameType(PrepareContext& ctx, const Tensor& in) {
  if (ctx.output(0)->type != in.type ||
      (ElementSize(in.type) == 0 && in.type != tfl::TensorType_STRING)) {
    return ctx.Unsupported();
  }
  return absl::OkStatus();
}

// Output 0 = the input's bytes under `shape`.
absl::Status SetCopiedOutput(PrepareContext& ctx, const Tensor& in,
                             Shape shape) {
  ctx.SetEval(EvalCopy);
  if (in.type == tfl::TensorType_STRING) {
    return ctx.SetOutputShape(0, std::move(shape), in.bytes);
  }
  return ctx.SetOutputShape(0, std::move(shape));
}

// Resolves one -1 in `dims` so that the element count matches.
absl::StatusOr<Shape> ResolveShape(const std::vector<int64_t>& dims,
                                   int64_t num_elements) {
  Shape shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      GRAFT_KERNEL_CHECK(infer < 0, "more than one -1 in the new shape");
      infer = static_cast<int>(i);
      shape.push_back(1);
    } else {
      GRAFT_KERNEL_CHECK(dims[i] >= 0, "negative dim %d in the new shape",
                         dims[i]);
      // Shapes are int32 and a tensor has at most kMaxTensorElements.
      GRAFT_KERNEL_CHECK(dims[i] <= std::numeric_limits<int32_t>::max() &&
                             CheckedMul(known, dims[i], &known) &&
                             known <= kMaxTensorElements,
                         "new shape dim %d makes the shape too large", dims[i]);
      shape.push_back(static_cast<int32_t>(dims[i]));
    }
  }
  if (infer >= 0) {
    GRAFT_KERNEL_CHECK(known > 0 && num_elements % known == 0,
                       "cannot infer the -1 dim: %d elements into %d",
                       num_elements, known);
    shape[infer] = static_cast<int32_t>(num_elements / known);
  }
  GRAFT_KERNEL_CHECK(NumElements(shape) == num_elements,
                     "new shape %s does not hold %d elements",
                     ShapeToString(shape), num_elements);
  return shape;
}

absl::Status PrepareReshape(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_RETURN_IF_ERROR(CheckSameType(ctx, *in));
  if (StringBytesUnknown(ctx, *in)) return ctx.DeferToRun();
  const Tensor* shape_t = ctx.input(1);
  const auto* o = ctx.op().builtin_options.AsReshapeOptions();
  std::vector<int64_t> dims;
  if (ctx.ValuesKnown(shape_t)) {
    GRAFT_ASSIGN_OR_RETURN(dims, ReadIntValues(*shape_t));
  } else if (shape_t == nullptr && o != nullptr) {
    dims.assign(o->new_shape.begin(), o->new_shape.end());
  } else if (std::optional<Shape> declared =
                 StaticDeclaredOutputShape(ctx, 0)) {
    // A shape computed at run time, declared static by the model.
    dims.assign(declared->begin(), declared->end());
  } else {
    return ctx.DeferToRun();
  }
  GRAFT_ASSIGN_OR_RETURN(Shape shape, ResolveShape(dims, in->num_elements()));
  return SetCopiedOutput(ctx, *in, std::move(shape));
}

absl::Status PrepareSqueeze(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_RETURN_IF_ERROR(CheckSameType(ctx, *in));
  if (StringBytesUnknown(ctx, *in)) return ctx.DeferToRun();
  const auto* o = ctx.op().builtin_options.AsSqueezeOptions();
  const int rank = in->rank();
  std::vector<bool> drop(rank, false);
  if (o == nullptr || o->squeeze_dims.empty()) {
    for (int d = 0; d < rank; ++d) drop[d] = in->dim(d) == 1;
  } else {
    for (int32_t a : o->squeeze_dims) {
      GRAFT_ASSIGN_OR_RETURN(int d, NormalizeAxis(a, rank));
      GRAFT_KERNEL_CHECK(in->dim(d) == 1, "cannot squeeze dim %d of size %d",
                         d, in->dim(d));
      drop[d] = true;
    }
  }
  Shape shape;
  for (int d = 0; d < rank; ++d) {
    if (!drop[d]) shape.push_back(in->dim(d));
  }
  return SetCopiedOutput(ctx, *in, std::move(shape));
}

absl::Status PrepareExpandDims(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 1));
  GRAFT_RETURN_IF_ERROR(CheckSameType(ctx, *in));
  if (StringBytesUnknown(ctx, *in)) return ctx.DeferToRun();
  if (!ctx.ValuesKnown(axis_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ReadIntValues(*axis_t));
  GRAFT_KERNEL_CHECK(axis.size() == 1, "axis must hold one value");
  GRAFT_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis[0], in->rank() + 1));
  Shape shape = in->shape;
  shape.insert(shape.begin() + a, 1);
  return SetCopiedOutput(ctx, *in, std::move(shape));
}

template <typename Index>
absl::Status EvalShape(EvalContext& ctx) {
  const Tensor* in = ctx.input(0);
  Index* out = ctx.output(0)->data<Index>();
  for (int d = 0; d < in->rank(); ++d) out[d] = static_cast<Index>(in->dim(d));
  return absl::OkStatus();
}

absl::Status PrepareShape(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  const tfl::TensorType t = ctx.output(0)->type;
  if (t == tfl::TensorType_INT32) {
    ctx.SetEval(EvalShape<int32_t>);
  } else if (t == tfl::TensorType_INT64) {
    ctx.SetEval(EvalShape<int64_t>);
  } else {
    return ctx.Unsupported();
  }
  ctx.MarkShapeOnly();
  return ctx.SetOutputShape(0, {static_cast<int32_t>(in->rank())});
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Reshape);
GRAFT_DEFINE_KERNEL(Squeeze);
GRAFT_DEFINE_KERNEL(ExpandDims);
GRAFT_DEFINE_KERNEL(Shape);

}  // namespace graft
