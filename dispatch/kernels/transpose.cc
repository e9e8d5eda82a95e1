// TRANSPOSE for every fixed-size dtype, with a constant permutation of up to
// kMaxRank dims. Adjacent dims that stay adjacent are merged first, so e.g.
// [B, S, H, D] -> [B, H, S, D] moves contiguous rows of D.
//
// REVERSE_V2 (a bidirectional RNN's time reversal) for every fixed-size
// dtype: the input reversed along the listed axes (negative ones count from
// the end; an axis listed twice is an error). Adjacent dims reversed alike
// are merged, so the innermost run of dims not reversed moves as one block.
#include <cstring>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

constexpr int kMaxRank = 8;

struct TransposeState : KernelState {
  int rank = 0;                     // after merging
  int64_t out_dims[kMaxRank] = {};  // output dims (merged)
  int64_t in_strides[kMaxRank] = {};  // input stride of each output dim
  size_t elem = 0;
  int64_t inner_run = 1;  // elements of the contiguous innermost block
};

template <typename T>
absl::Status EvalTranspose(EvalContext& ctx) {
  const TransposeState& s = *ctx.state<TransposeState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int r = s.rank;
  const int64_t inner = s.out_dims[r - 1];
  const int64_t inner_stride = s.in_strides[r - 1];
  int64_t outer = 1;
  for (int d = 0; d < r - 1; ++d) outer *= s.out_dims[d];
  int64_t idx[kMaxRank] = {};
  int64_t off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    if (inner_stride == 1) {
      std::memcpy(out, in + off, inner * sizeof(T));
    } else {
      for (int64_t i = 0; i < inner; ++i) out[i] = in[off + i * inner_stride];
    }
    out += inner;
    for (int d = r - 2; d >= 0; --d) {
      off += s.in_strides[d];
      if (++idx[d] < s.out_dims[d]) break;
      off -= s.in_strides[d] * s.out_dims[d];
      idx[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareTranspose(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* perm_t, RequiredInput(ctx, 1));
  if (ctx.output(0)->type != in->type) return ctx.Unsupported();
  if (!ctx.ValuesKnown(perm_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ReadIntValues(*perm_t));
  const int rank = in->rank();
  GRAFT_KERNEL_CHECK(static_cast<int>(perm.size()) == rank,
                     "permutation has %d entries for rank %d", perm.size(),
                     rank);
  std::vector<bool> seen(rank, false);
  Shape out_shape;
  for (int64_t& p : perm) {
    GRAFT_ASSIGN_OR_RETURN(int a, NormalizeAxis(p, rank));
    GRAFT_KERNEL_CHECK(!seen[a], "axis %d repeats in the permutation", a);
    seen[a] = true;
    p = a;
    out_shape.push_back(in->dim(a));
  }
  // Merge output dims d-1, d when perm[d] == perm[d-1] + 1 (they are
  // adjacent in the input too); drop size-1 dims.
  const Shape& ishape = in->shape;
  std::vector<int64_t> istrides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) istrides[d] = istrides[d + 1] * ishape[d + 1];
  std::vector<int64_t> dims, strides;
  int prev_axis = -2;
  for (int d = 0; d < rank; ++d) {
    const int a = static_cast<int>(perm[d]);
    if (ishape[a] == 1) continue;
    if (!dims.empty() && a == prev_axis + 1) {
      dims.back() *= ishape[a];
      strides.back() = istrides[a];
    } else {
      dims.push_back(ishape[a]);
      strides.push_back(istrides[a]);
    }
    prev_axis = a;
  }
  if (dims.empty()) dims.push_back(1), strides.push_back(1);
  GRAFT_KERNEL_CHECK(static_cast<int>(dims.size()) <= kMaxRank,
                     "rank %d is above %d", dims.size(), kMaxRank);
  auto* s = MakeState<TransposeState>(ctx);
  s->rank = static_cast<int>(dims.size());
  for (int d = 0; d < s->rank; ++d) {
    s->out_dims[d] = dims[d];
    s->in_strides[d] = strides[d];
  }
  if (!DispatchByElementSize(ElementSize(in->type), [&](auto tag) {
        ctx.SetEval(EvalTranspose<decltype(tag)>);
      })) {
    return ctx.Unsupported();
  }
  return ctx.SetOutputShape(0, std::move(out_shape));
}

struct ReverseState : KernelState {
  int rank = 0;                  // after merging
  int64_t dims[kMaxRank] = {};   // merged dims; the last is the block
  bool reversed[kMaxRank] = {};  // whether each merged dim is reversed
};

template <typename T>
absl::Status EvalReverse(EvalContext& ctx) {
  const ReverseState& s = *ctx.state<ReverseState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int r = s.rank;
  const int64_t inner = s.dims[r - 1];
  int64_t strides[kMaxRank];
  strides[r - 1] = 1;
  for (int d = r - 2; d >= 0; --d) strides[d] = strides[d + 1] * s.dims[d + 1];
  int64_t outer = 1;
  for (int d = 0; d < r - 1; ++d) outer *= s.dims[d];
  int64_t idx[kMaxRank] = {};
  for (int64_t o = 0; o < outer; ++o, out += inner) {
    int64_t off = 0;
    for (int d = 0; d < r - 1; ++d) {
      off += (s.reversed[d] ? s.dims[d] - 1 - idx[d] : idx[d]) * strides[d];
    }
    if (s.reversed[r - 1]) {
      for (int64_t i = 0; i < inner; ++i) out[i] = in[off + inner - 1 - i];
    } else {
      std::memcpy(out, in + off, inner * sizeof(T));
    }
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < s.dims[d]) break;
      idx[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareReverseV2(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axes_t, RequiredInput(ctx, 1));
  if (ctx.output(0)->type != in->type) return ctx.Unsupported();
  if (!ctx.ValuesKnown(axes_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadIntValues(*axes_t));
  const int rank = in->rank();
  std::vector<bool> reversed(rank, false);
  for (int64_t axis : axes) {
    GRAFT_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, rank));
    GRAFT_KERNEL_CHECK(!reversed[a], "axis %d is listed twice", a);
    reversed[a] = true;
  }
  // Merge adjacent dims reversed alike; size-1 dims are neither.
  std::vector<int64_t> dims;
  std::vector<bool> flags;
  for (int d = 0; d < rank; ++d) {
    if (in->dim(d) == 1) continue;
    if (!dims.empty() && flags.back() == reversed[d]) {
      dims.back() *= in->dim(d);
    } else {
      dims.push_back(in->dim(d));
      flags.push_back(reversed[d]);
    }
  }
  if (dims.empty()) dims.push_back(1), flags.push_back(false);
  GRAFT_KERNEL_CHECK(static_cast<int>(dims.size()) <= kMaxRank,
                     "rank %d is above %d", dims.size(), kMaxRank);
  auto* s = MakeState<ReverseState>(ctx);
  s->rank = static_cast<int>(dims.size());
  for (int d = 0; d < s->rank; ++d) {
    s->dims[d] = dims[d];
    s->reversed[d] = flags[d];
  }
  if (!DispatchByElementSize(ElementSize(in->type), [&](auto tag) {
        ctx.SetEval(EvalReverse<decltype(tag)>);
      })) {
    return ctx.Unsupported();
  }
  return ctx.SetOutputShape(0, in->shape);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Transpose);
GRAFT_DEFINE_KERNEL(ReverseV2);

}  // namespace graft
