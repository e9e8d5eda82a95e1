// Joining and splitting along one axis, for every fixed-size dtype:
// CONCATENATION, PACK, SPLIT, SPLIT_V, UNPACK. All are copies of contiguous
// blocks: with outer = product of dims before the axis, each input (or
// output) contributes one block of (its axis size * inner) elements per
// outer index.
#include <cstring>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

struct BlockState : KernelState {
  int64_t outer = 1;
  // Bytes per outer index of each piece (input for joins, output for
  // splits), and of the joined tensor.
  std::vector<size_t> piece_bytes;
  size_t whole_bytes = 0;
  // Index of the first data input (SPLIT's data is input 1).
  int first_input = 0;
};

absl::Status EvalJoin(EvalContext& ctx) {
  const BlockState& s = *ctx.state<BlockState>();
  uint8_t* out = ctx.output(0)->raw_data;
  const int n = static_cast<int>(s.piece_bytes.size());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int i = 0; i < n; ++i) {
      const size_t b = s.piece_bytes[i];
      // An empty piece may have no buffer at all (memcpy from null is
      // undefined even for 0 bytes; found by tests/fuzz, runtime).
      if (b == 0) continue;
      std::memcpy(out, ctx.input(i)->raw_data + o * b, b);
      out += b;
    }
  }
  return absl::OkStatus();
}

absl::Status EvalSplit(EvalContext& ctx) {
  const BlockState& s = *ctx.state<BlockState>();
  const uint8_t* in = ctx.input(s.first_input)->raw_data;
  const int n = static_cast<int>(s.piece_bytes.size());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int i = 0; i < n; ++i) {
      const size_t b = s.piece_bytes[i];
      if (b == 0) continue;  // as in EvalJoin
      std::memcpy(ctx.output(i)->raw_data + o * b, in, b);
      in += b;
    }
  }
  return absl::OkStatus();
}

// CONCATENATION and PACK: PACK is a concatenation along a new axis.
absl::Status PrepareJoin(PrepareContext& ctx, int64_t axis_value,
                         bool new_axis) {
  GRAFT_KERNEL_CHECK(ctx.num_inputs() >= 1 && ctx.num_outputs() == 1,
                     "expected at least 1 input and 1 output");
  GRAFT_ASSIGN_OR_RETURN(const Tensor* first, RequiredInput(ctx, 0));
  const tfl::TensorType t = first->type;
  const size_t elem = ElementSize(t);
  if (elem == 0 || ctx.output(0)->type != t) return ctx.Unsupported();
  const int rank = first->rank() + (new_axis ? 1 : 0);
  GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_value, rank));
  Shape out_shape = first->shape;
  if (new_axis) out_shape.insert(out_shape.begin() + axis, 0);
  else out_shape[axis] = 0;
  auto* s = MakeState<BlockState>(ctx);
  s->outer = DimProduct(out_shape, 0, axis);
  const int64_t inner = DimProduct(out_shape, axis + 1, rank);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, i));
    if (in->type != t) return ctx.Unsupported();
    if (!SameQuantization(*in, *ctx.output(0))) {
      return ctx.Unsupported("requantizing inputs with other scales");
    }
    Shape shape = in->shape;
    if (new_axis) shape.insert(shape.begin() + axis, 1);
    GRAFT_KERNEL_CHECK(static_cast<int>(shape.size()) == rank,
                       "input %d has rank %d, expected %d", i, in->rank(),
                       rank - (new_axis ? 1 : 0));
    for (int d = 0; d < rank; ++d) {
      GRAFT_KERNEL_CHECK(d == axis || shape[d] == out_shape[d],
                         "input %d shape %s does not match input 0 %s", i,
                         ShapeToString(in->shape),
                         ShapeToString(first->shape));
    }
    out_shape[axis] += shape[axis];
    s->piece_bytes.push_back(shape[axis] * inner * elem);
  }
  ctx.SetEval(EvalJoin);
  return ctx.SetOutputShape(0, std::move(out_shape));
}

absl::Status PrepareConcatenation(PrepareContext& ctx) {
  const auto* o = ctx.op().builtin_options.AsConcatenationOptions();
  if (o && o->fused_activation_function != tfl::ActivationFunctionType_NONE) {
    return ctx.Unsupported("a fused activation on CONCATENATION");
  }
  return PrepareJoin(ctx, o ? o->axis : 0, /*new_axis=*/false);
}

absl::Status PreparePack(PrepareContext& ctx) {
  const auto* o = ctx.op().builtin_options.AsPackOptions();
  return PrepareJoin(ctx, o ? o->axis : 0, /*new_axis=*/true);
}

// SPLIT, SPLIT_V and UNPACK: `sizes` are the outputs' sizes along the axis.
absl::Status PrepareSplitCommon(PrepareContext& ctx, const Tensor& in,
                                int axis, const std::vector<int64_t>& sizes,
                                bool drop_axis, int first_input) {
  const tfl::TensorType t = in.type;
  const size_t elem = ElementSize(t);
  if (elem == 0) return ctx.Unsupported();
  GRAFT_KERNEL_CHECK(static_cast<int>(sizes.size()) == ctx.num_outputs(),
                     "%d pieces for %d outputs", sizes.size(),
                     ctx.num_outputs());
  auto* s = MakeState<BlockState>(ctx);
  s->first_input = first_input;
  s->outer = DimProduct(in.shape, 0, axis);
  const int64_t inner = DimProduct(in.shape, axis + 1, in.rank());
  int64_t total = 0;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (ctx.output(i)->type != t) return ctx.Unsupported();
    Shape shape = in.shape;
    if (drop_axis) {
      shape.erase(shape.begin() + axis);
    } else {
      shape[axis] = static_cast<int32_t>(sizes[i]);
    }
    s->piece_bytes.push_back(sizes[i] * inner * elem);
    total += sizes[i];
    GRAFT_RETURN_IF_ERROR(ctx.SetOutputShape(i, std::move(shape)));
  }
  GRAFT_KERNEL_CHECK(total == in.dim(axis),
                     "pieces sum to %d along axis %d of size %d", total, axis,
                     in.dim(axis));
  ctx.SetEval(EvalSplit);
  return absl::OkStatus();
}

absl::Status PrepareSplit(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, ctx.num_outputs()));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 1));
  if (ElementSize(in->type) == 0) return ctx.Unsupported();
  if (!ctx.ValuesKnown(axis_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ReadIntValues(*axis_t));
  GRAFT_KERNEL_CHECK(axis_v.size() == 1, "axis must hold one value");
  GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_v[0], in->rank()));
  const int n = ctx.num_outputs();
  GRAFT_KERNEL_CHECK(n > 0 && in->dim(axis) % n == 0,
                     "dim %d of size %d does not split into %d", axis,
                     in->dim(axis), n);
  std::vector<int64_t> sizes(n, in->dim(axis) / n);
  return PrepareSplitCommon(ctx, *in, axis, sizes, false, 1);
}

absl::Status PrepareSplitV(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 3, ctx.num_outputs()));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* sizes_t, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 2));
  if (ElementSize(in->type) == 0) return ctx.Unsupported();
  if (!ctx.ValuesKnown(axis_t) || !ctx.ValuesKnown(sizes_t)) {
    return ctx.DeferToRun();
  }
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ReadIntValues(*axis_t));
  GRAFT_KERNEL_CHECK(axis_v.size() == 1, "axis must hold one value");
  GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_v[0], in->rank()));
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ReadIntValues(*sizes_t));
  int infer = -1;
  int64_t known = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      GRAFT_KERNEL_CHECK(infer < 0, "more than one -1 in size_splits");
      infer = static_cast<int>(i);
    } else {
      known += sizes[i];
    }
  }
  if (infer >= 0) sizes[infer] = in->dim(axis) - known;
  return PrepareSplitCommon(ctx, *in, axis, sizes, false, 0);
}

absl::Status PrepareUnpack(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, ctx.num_outputs()));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  const auto* o = ctx.op().builtin_options.AsUnpackOptions();
  GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(o ? o->axis : 0, in->rank()));
  GRAFT_KERNEL_CHECK(in->dim(axis) == ctx.num_outputs(),
                     "axis %d has size %d for %d outputs", axis, in->dim(axis),
                     ctx.num_outputs());
  std::vector<int64_t> sizes(ctx.num_outputs(), 1);
  return PrepareSplitCommon(ctx, *in, axis, sizes, true, 0);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Concatenation);
GRAFT_DEFINE_KERNEL(Pack);
GRAFT_DEFINE_KERNEL(Split);
GRAFT_DEFINE_KERNEL(SplitV);
GRAFT_DEFINE_KERNEL(Unpack);

}  // namespace graft
