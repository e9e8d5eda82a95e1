// PAD and PADV2 (constant padding; PADV2's value from its third input) for
// every fixed-size dtype, and MIRROR_PAD (REFLECT excludes the edge,
// SYMMETRIC repeats it), with constant paddings [rank, 2].
#include <cstring>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

constexpr int kMaxRank = 8;

struct PadState : KernelState {
  int rank = 0;
  int64_t in_dims[kMaxRank] = {};
  int64_t out_dims[kMaxRank] = {};
  int64_t before[kMaxRank] = {};
  bool symmetric = false;  // MIRROR_PAD mode
};

// PAD: fill with the value, then copy each input row into place.
template <typename T>
absl::Status EvalPad(EvalContext& ctx) {
  const PadState& s = *ctx.state<PadState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  T value{};
  if (const Tensor* v = ctx.input(2); v != nullptr && v->num_elements() > 0) {
    value = *v->data<T>();
  }
  const int64_t out_n = ctx.output(0)->num_elements();
  for (int64_t i = 0; i < out_n; ++i) out[i] = value;
  const int r = s.rank;
  int64_t out_strides[kMaxRank];
  out_strides[r - 1] = 1;
  for (int d = r - 2; d >= 0; --d) {
    out_strides[d] = out_strides[d + 1] * s.out_dims[d + 1];
  }
  int64_t outer = 1;
  for (int d = 0; d < r - 1; ++d) outer *= s.in_dims[d];
  const int64_t inner = s.in_dims[r - 1];
  if (inner == 0) return absl::OkStatus();
  int64_t idx[kMaxRank] = {};
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off = s.before[r - 1];
    for (int d = 0; d < r - 1; ++d) off += (idx[d] + s.before[d]) * out_strides[d];
    std::memcpy(out + off, in + o * inner, inner * sizeof(T));
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < s.in_dims[d]) break;
      idx[d] = 0;
    }
  }
  return absl::OkStatus();
}

// MIRROR_PAD: each output coordinate maps back into the input.
template <typename T>
absl::Status EvalMirrorPad(EvalContext& ctx) {
  const PadState& s = *ctx.state<PadState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int r = s.rank;
  int64_t in_strides[kMaxRank];
  in_strides[r - 1] = 1;
  for (int d = r - 2; d >= 0; --d) {
    in_strides[d] = in_strides[d + 1] * s.in_dims[d + 1];
  }
  const int64_t shift = s.symmetric ? 1 : 0;
  auto map = [&](int64_t o, int d) {
    int64_t i = o - s.before[d];
    const int64_t n = s.in_dims[d];
    if (i < 0) i = -i - shift;                       // mirror the start
    else if (i >= n) i = 2 * n - i - 2 + shift;      // mirror the end
    return i;
  };
  const int64_t out_n = ctx.output(0)->num_elements();
  int64_t idx[kMaxRank] = {};
  for (int64_t p = 0; p < out_n; ++p) {
    int64_t off = 0;
    for (int d = 0; d < r; ++d) off += map(idx[d], d) * in_strides[d];
    out[p] = in[off];
    for (int d = r - 1; d >= 0; --d) {
      if (++idx[d] < s.out_dims[d]) break;
      idx[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status PreparePadCommon(PrepareContext& ctx, bool mirror,
                              bool symmetric) {
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* pads_t, RequiredInput(ctx, 1));
  if (ctx.output(0)->type != in->type) return ctx.Unsupported();
  if (!ctx.ValuesKnown(pads_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ReadIntValues(*pads_t));
  const int rank = in->rank();
  GRAFT_KERNEL_CHECK(static_cast<int>(pads.size()) == 2 * rank,
                     "paddings hold %d values, expected %d", pads.size(),
                     2 * rank);
  GRAFT_KERNEL_CHECK(rank <= kMaxRank, "rank %d is above %d", rank, kMaxRank);
  auto* s = MakeState<PadState>(ctx);
  s->symmetric = symmetric;
  s->rank = std::max(rank, 1);
  s->in_dims[0] = s->out_dims[0] = 1;
  Shape out;
  for (int d = 0; d < rank; ++d) {
    const int64_t b = pads[2 * d], a = pads[2 * d + 1];
    GRAFT_KERNEL_CHECK(b >= 0 && a >= 0, "negative padding on dim %d", d);
    if (mirror) {
      const int64_t limit = in->dim(d) - (s->symmetric ? 0 : 1);
      GRAFT_KERNEL_CHECK(b <= limit && a <= limit,
                         "mirror padding %d/%d too large for dim %d of size %d",
                         b, a, d, in->dim(d));
    }
    s->in_dims[d] = in->dim(d);
    s->before[d] = b;
    s->out_dims[d] = in->dim(d) + b + a;
    out.push_back(static_cast<int32_t>(s->out_dims[d]));
  }
  return ctx.SetOutputShape(0, std::move(out));
}

absl::Status PreparePad(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_RETURN_IF_ERROR(PreparePadCommon(ctx, false, false));
  const Tensor* in = ctx.input(0);
  if (const Tensor* v = ctx.input(2); v && v->type != in->type) {
    return ctx.Unsupported();
  }
  if (IsQuantized(*in) &&
      ctx.input(2) == nullptr) {
    // Quantized PAD pads with the zero point, not 0: left to the quantized
    // kernels.
    return ctx.Unsupported("quantized PAD");
  }
  if (!DispatchByElementSize(ElementSize(in->type), [&](auto tag) {
        ctx.SetEval(EvalPad<decltype(tag)>);
      })) {
    return ctx.Unsupported();
  }
  return absl::OkStatus();
}

absl::Status PreparePadV2(PrepareContext& ctx) { return PreparePad(ctx); }

absl::Status PrepareMirrorPad(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  const auto* o = ctx.op().builtin_options.AsMirrorPadOptions();
  const bool symmetric = o && o->mode == tfl::MirrorPadMode_SYMMETRIC;
  GRAFT_RETURN_IF_ERROR(PreparePadCommon(ctx, true, symmetric));
  if (!DispatchByElementSize(ElementSize(ctx.input(0)->type), [&](auto tag) {
        ctx.SetEval(EvalMirrorPad<decltype(tag)>);
      })) {
    return ctx.Unsupported();
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Pad);
GRAFT_DEFINE_KERNEL(PadV2);
GRAFT_DEFINE_KERNEL(MirrorPad);

}  // namespace graft
