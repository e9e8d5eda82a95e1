// SLICE and STRIDED_SLICE for every fixed-size dtype, with constant begin /
// size / end / strides. STRIDED_SLICE follows TensorFlow's (and TFLite's)
// rules: begin_mask, end_mask, ellipsis_mask, new_axis_mask,
// shrink_axis_mask, negative indices, negative strides, clamping, and
// TFLite's `offset` (end is relative to begin).
//
// Both lower to one strided copy: per input dim a start, a stride and a
// count; the output is those elements in input order.
#include <algorithm>
#include <cstring>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

constexpr int kMaxRank = 8;

struct SliceState : KernelState {
  int rank = 0;
  int64_t start[kMaxRank] = {};   // element offset contribution per dim
  int64_t step[kMaxRank] = {};    // element step per dim (stride * dim stride)
  int64_t count[kMaxRank] = {};
};

template <typename T>
absl::Status EvalSlice(EvalContext& ctx) {
  const SliceState& s = *ctx.state<SliceState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int r = s.rank;
  for (int d = 0; d < r; ++d) {
    if (s.count[d] == 0) return absl::OkStatus();
  }
  int64_t base = 0;
  for (int d = 0; d < r; ++d) base += s.start[d];
  const int64_t inner = s.count[r - 1];
  const int64_t inner_step = s.step[r - 1];
  int64_t outer = 1;
  for (int d = 0; d < r - 1; ++d) outer *= s.count[d];
  int64_t idx[kMaxRank] = {};
  int64_t off = base;
  for (int64_t o = 0; o < outer; ++o) {
    if (inner_step == 1) {
      std::memcpy(out, in + off, inner * sizeof(T));
    } else {
      for (int64_t i = 0; i < inner; ++i) out[i] = in[off + i * inner_step];
    }
    out += inner;
    for (int d = r - 2; d >= 0; --d) {
      off += s.step[d];
      if (++idx[d] < s.count[d]) break;
      off -= s.step[d] * s.count[d];
      idx[d] = 0;
    }
  }
  return absl::OkStatus();
}

// Fills the state from per-dim (begin, stride, count) and sets the eval.
absl::Status FinishSlice(PrepareContext& ctx, const Tensor& in,
                         const std::vector<int64_t>& begin,
                         const std::vector<int64_t>& stride,
                         const std::vector<int64_t>& count) {
  const int rank = in.rank();
  GRAFT_KERNEL_CHECK(rank <= kMaxRank, "rank %d is above %d", rank, kMaxRank);
  auto* s = MakeState<SliceState>(ctx);
  s->rank = std::max(rank, 1);
  if (rank == 0) {
    s->count[0] = 1, s->step[0] = 1;
  }
  int64_t dim_stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    s->start[d] = begin[d] * dim_stride;
    s->step[d] = stride[d] * dim_stride;
    s->count[d] = count[d];
    dim_stride *= in.dim(d);
  }
  return absl::OkStatus();
}

// Picks the copy by element size; first, so that the dtypes are checked at
// load even when the slice bounds are known only at invoke.
absl::Status SelectSliceEval(PrepareContext& ctx, const Tensor& in) {
  if (ctx.output(0)->type != in.type ||
      !DispatchByElementSize(ElementSize(in.type), [&](auto tag) {
        ctx.SetEval(EvalSlice<decltype(tag)>);
      })) {
    return ctx.Unsupported();
  }
  return absl::OkStatus();
}

absl::Status PrepareSlice(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* begin_t, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* size_t_, RequiredInput(ctx, 2));
  GRAFT_RETURN_IF_ERROR(SelectSliceEval(ctx, *in));
  if (!ctx.ValuesKnown(begin_t) || !ctx.ValuesKnown(size_t_)) {
    return ctx.DeferToRun();
  }
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> begin, ReadIntValues(*begin_t));
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ReadIntValues(*size_t_));
  const int rank = in->rank();
  GRAFT_KERNEL_CHECK(static_cast<int>(begin.size()) == rank &&
                         static_cast<int>(size.size()) == rank,
                     "begin and size need %d values", rank);
  Shape out;
  for (int d = 0; d < rank; ++d) {
    if (size[d] == -1) size[d] = in->dim(d) - begin[d];
    GRAFT_KERNEL_CHECK(begin[d] >= 0 && size[d] >= 0 &&
                           begin[d] + size[d] <= in->dim(d),
                       "slice [%d, +%d) out of range for dim %d of size %d",
                       begin[d], size[d], d, in->dim(d));
    out.push_back(static_cast<int32_t>(size[d]));
  }
  GRAFT_RETURN_IF_ERROR(
      FinishSlice(ctx, *in, begin, std::vector<int64_t>(rank, 1), size));
  return ctx.SetOutputShape(0, std::move(out));
}

absl::Status PrepareStridedSlice(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 4, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* begin_t, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* end_t, RequiredInput(ctx, 2));
  const Tensor* strides_t = ctx.input(3);
  GRAFT_RETURN_IF_ERROR(SelectSliceEval(ctx, *in));
  if (!ctx.ValuesKnown(begin_t) || !ctx.ValuesKnown(end_t) ||
      (strides_t != nullptr && !ctx.ValuesKnown(strides_t))) {
    return ctx.DeferToRun();
  }
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> begin, ReadIntValues(*begin_t));
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> end, ReadIntValues(*end_t));
  std::vector<int64_t> strides(begin.size(), 1);
  if (strides_t != nullptr) {
    GRAFT_ASSIGN_OR_RETURN(strides, ReadIntValues(*strides_t));
  }
  const int n = static_cast<int>(begin.size());
  GRAFT_KERNEL_CHECK(static_cast<int>(end.size()) == n &&
                         static_cast<int>(strides.size()) == n,
                     "begin, end and strides differ in length");
  const auto* o = ctx.op().builtin_options.AsStridedSliceOptions();
  const int begin_mask = o ? o->begin_mask : 0;
  const int end_mask = o ? o->end_mask : 0;
  const int ellipsis_mask = o ? o->ellipsis_mask : 0;
  const int new_axis_mask = o ? o->new_axis_mask : 0;
  const int shrink_mask = o ? o->shrink_axis_mask : 0;
  const bool offset = o && o->offset;
  const int rank = in->rank();

  // Sparse spec -> dense spec over the input dims. Entries that are neither
  // the ellipsis nor new axes consume input dims; the (first) ellipsis, or
  // an implicit one at the end, covers the rest.
  int consuming = 0;
  bool has_ellipsis = false;
  for (int i = 0; i < n; ++i) {
    if ((ellipsis_mask >> i) & 1) {
      has_ellipsis = true;
    } else if (!((new_axis_mask >> i) & 1)) {
      ++consuming;
    }
  }
  GRAFT_KERNEL_CHECK(consuming <= rank,
                     "%d slice entries for an input of rank %d", consuming,
                     rank);
  std::vector<int64_t> d_begin(rank), d_stride(rank, 1), d_count(rank);
  Shape out;
  int dim = 0;
  auto full = [&](int d) {
    d_begin[d] = 0, d_stride[d] = 1, d_count[d] = in->dim(d);
    out.push_back(in->dim(d));
  };
  bool ellipsis_done = false;
  for (int i = 0; i < n; ++i) {
    if (((ellipsis_mask >> i) & 1) && !ellipsis_done) {
      ellipsis_done = true;
      int cover = rank - consuming;
      for (int k = 0; k < cover; ++k) full(dim++);
      continue;
    }
    if ((ellipsis_mask >> i) & 1) continue;  // later ellipses are ignored
    if ((new_axis_mask >> i) & 1) {
      out.push_back(1);
      continue;
    }
    const int64_t size = in->dim(dim);
    int64_t b = begin[i], e = end[i];
    const int64_t st = strides[i];
    GRAFT_KERNEL_CHECK(st != 0, "stride %d is zero", i);
    if (offset) e += b;
    if ((shrink_mask >> i) & 1) {
      if (b < 0) b += size;
      GRAFT_KERNEL_CHECK(b >= 0 && b < size,
                         "shrink index %d out of range for dim of size %d",
                         begin[i], size);
      d_begin[dim] = b, d_stride[dim] = 1, d_count[dim] = 1;
      ++dim;
      continue;
    }
    if (st > 0) {
      b = ((begin_mask >> i) & 1) ? 0 : (b < 0 ? b + size : b);
      e = ((end_mask >> i) & 1) ? size : (e < 0 ? e + size : e);
      b = std::clamp<int64_t>(b, 0, size);
      e = std::clamp<int64_t>(e, 0, size);
    } else {
      b = ((begin_mask >> i) & 1) ? size - 1 : (b < 0 ? b + size : b);
      e = ((end_mask >> i) & 1) ? -1 : (e < 0 ? e + size : e);
      b = std::clamp<int64_t>(b, -1, size - 1);
      e = std::clamp<int64_t>(e, -1, size - 1);
    }
    int64_t count = st > 0 ? (e - b + st - 1) / st : (b - e - st - 1) / (-st);
    count = std::max<int64_t>(count, 0);
    d_begin[dim] = count > 0 ? b : 0, d_stride[dim] = st, d_count[dim] = count;
    out.push_back(static_cast<int32_t>(count));
    ++dim;
  }
  if (!has_ellipsis) {
    while (dim < rank) full(dim++);
  }
  GRAFT_RETURN_IF_ERROR(FinishSlice(ctx, *in, d_begin, d_stride, d_count));
  return ctx.SetOutputShape(0, std::move(out));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Slice);
GRAFT_DEFINE_KERNEL(StridedSlice);

}  // namespace graft
