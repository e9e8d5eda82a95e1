// Replication, for every fixed-size dtype: TILE (constant multiples) and
// BROADCAST_TO (constant target shape), plus SPACE_TO_DEPTH and
// DEPTH_TO_SPACE (NHWC, DCR order as TFLite).
#include <cstring>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

// Both TILE and BROADCAST_TO walk the output with a broadcast plan over an
// input "view": BROADCAST_TO reads the input directly; TILE reads it as
// [m0, d0, m1, d1, ...] with stride 0 over the multiples.
struct ReplicateState : KernelState {
  BroadcastPlan plan;
};

template <typename T>
absl::Status EvalReplicate(EvalContext& ctx) {
  const ReplicateState& s = *ctx.state<ReplicateState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  ForEachBroadcastRun(s.plan, [&](int64_t o, const int64_t* off, int64_t n,
                                  const int64_t* st) {
    const T* src = in + off[0];
    if (st[0] == 1) {
      std::memcpy(out + o, src, n * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i) out[o + i] = src[i * st[0]];
    }
  });
  return absl::OkStatus();
}

absl::Status SetReplicateEval(PrepareContext& ctx, const Tensor& in) {
  if (ctx.output(0)->type != in.type ||
      !DispatchByElementSize(ElementSize(in.type), [&](auto tag) {
        ctx.SetEval(EvalReplicate<decltype(tag)>);
      })) {
    return ctx.Unsupported();
  }
  return absl::OkStatus();
}

absl::Status PrepareBroadcastTo(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 1));
  GRAFT_RETURN_IF_ERROR(SetReplicateEval(ctx, *in));
  Shape target;
  if (ctx.ValuesKnown(shape_t)) {
    GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIntValues(*shape_t));
    for (int64_t d : v) target.push_back(static_cast<int32_t>(d));
  } else if (std::optional<Shape> declared =
                 StaticDeclaredOutputShape(ctx, 0)) {
    target = *std::move(declared);
  } else {
    return ctx.DeferToRun();
  }
  GRAFT_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(in->shape, target));
  GRAFT_KERNEL_CHECK(out == target, "cannot broadcast %s to %s",
                     ShapeToString(in->shape), ShapeToString(target));
  auto* s = MakeState<ReplicateState>(ctx);
  const Shape* operands[] = {&in->shape};
  GRAFT_ASSIGN_OR_RETURN(s->plan, MakeBroadcastPlan(out, operands));
  return ctx.SetOutputShape(0, std::move(out));
}

absl::Status PrepareTile(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* mult_t, RequiredInput(ctx, 1));
  GRAFT_RETURN_IF_ERROR(SetReplicateEval(ctx, *in));
  if (!ctx.ValuesKnown(mult_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> mult, ReadIntValues(*mult_t));
  const int rank = in->rank();
  GRAFT_KERNEL_CHECK(static_cast<int>(mult.size()) == rank,
                     "multiples hold %d values for rank %d", mult.size(),
                     rank);
  // View the output as [m0, d0, m1, d1, ...] and the input as
  // [1, d0, 1, d1, ...], broadcast over the multiples.
  Shape view_out, view_in, out;
  for (int d = 0; d < rank; ++d) {
    GRAFT_KERNEL_CHECK(mult[d] >= 0, "negative multiple on dim %d", d);
    view_out.push_back(static_cast<int32_t>(mult[d]));
    view_out.push_back(in->dim(d));
    view_in.push_back(1);
    view_in.push_back(in->dim(d));
    out.push_back(static_cast<int32_t>(in->dim(d) * mult[d]));
  }
  auto* s = MakeState<ReplicateState>(ctx);
  const Shape* operands[] = {&view_in};
  GRAFT_ASSIGN_OR_RETURN(s->plan, MakeBroadcastPlan(view_out, operands));
  return ctx.SetOutputShape(0, std::move(out));
}

struct SpaceDepthState : KernelState {
  int batch, in_h, in_w, in_c, block;
  size_t elem;
};

// out[b, y / bs, x / bs, ((y % bs) * bs + x % bs) * C + c] = in[b, y, x, c]
template <bool kToDepth>
absl::Status EvalSpaceDepth(EvalContext& ctx) {
  const SpaceDepthState& s = *ctx.state<SpaceDepthState>();
  const uint8_t* in = ctx.input(0)->raw_data;
  uint8_t* out = ctx.output(0)->raw_data;
  const int bs = s.block;
  if constexpr (kToDepth) {
    const int oh = s.in_h / bs, ow = s.in_w / bs, oc = s.in_c * bs * bs;
    const size_t run = s.in_c * s.elem;
    for (int b = 0; b < s.batch; ++b) {
      for (int y = 0; y < s.in_h; ++y) {
        for (int x = 0; x < s.in_w; ++x) {
          const uint8_t* src =
              in + ((int64_t{b} * s.in_h + y) * s.in_w + x) * run;
          const int64_t dst = ((int64_t{b} * oh + y / bs) * ow + x / bs) * oc +
                              ((y % bs) * bs + x % bs) * s.in_c;
          std::memcpy(out + dst * s.elem, src, run);
        }
      }
    }
  } else {
    // in is [B, H, W, C * bs * bs]; out is [B, H * bs, W * bs, C].
    const int oc = s.in_c / (bs * bs), oh = s.in_h * bs, ow = s.in_w * bs;
    const size_t run = oc * s.elem;
    for (int b = 0; b < s.batch; ++b) {
      for (int y = 0; y < oh; ++y) {
        for (int x = 0; x < ow; ++x) {
          const int64_t src =
              ((int64_t{b} * s.in_h + y / bs) * s.in_w + x / bs) * s.in_c +
              ((y % bs) * bs + x % bs) * oc;
          const int64_t dst = ((int64_t{b} * oh + y) * ow + x) * oc;
          std::memcpy(out + dst * s.elem, in + src * s.elem, run);
        }
      }
    }
  }
  return absl::OkStatus();
}

template <bool kToDepth>
absl::Status PrepareSpaceDepth(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  const size_t elem = ElementSize(in->type);
  if (elem == 0 || ctx.output(0)->type != in->type) return ctx.Unsupported();
  GRAFT_KERNEL_CHECK(in->rank() == 4, "input must be 4-D");
  int block = 0;
  if constexpr (kToDepth) {
    const auto* o = ctx.op().builtin_options.AsSpaceToDepthOptions();
    block = o ? o->block_size : 0;
  } else {
    const auto* o = ctx.op().builtin_options.AsDepthToSpaceOptions();
    block = o ? o->block_size : 0;
  }
  GRAFT_KERNEL_CHECK(block > 0, "block_size must be positive");
  auto* s = MakeState<SpaceDepthState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3), s->block = block, s->elem = elem;
  ctx.SetEval(EvalSpaceDepth<kToDepth>);
  if constexpr (kToDepth) {
    GRAFT_KERNEL_CHECK(s->in_h % block == 0 && s->in_w % block == 0,
                       "spatial dims %dx%d not divisible by %d", s->in_h,
                       s->in_w, block);
    return ctx.SetOutputShape(0, {s->batch, s->in_h / block, s->in_w / block,
                                  s->in_c * block * block});
  } else {
    GRAFT_KERNEL_CHECK(s->in_c % (block * block) == 0,
                       "depth %d not divisible by %d", s->in_c,
                       block * block);
    return ctx.SetOutputShape(0, {s->batch, s->in_h * block, s->in_w * block,
                                  s->in_c / (block * block)});
  }
}

absl::Status PrepareSpaceToDepth(PrepareContext& ctx) {
  return PrepareSpaceDepth<true>(ctx);
}
absl::Status PrepareDepthToSpace(PrepareContext& ctx) {
  return PrepareSpaceDepth<false>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(BroadcastTo);
GRAFT_DEFINE_KERNEL(Tile);
GRAFT_DEFINE_KERNEL(SpaceToDepth);
GRAFT_DEFINE_KERNEL(DepthToSpace);

}  // namespace graft
