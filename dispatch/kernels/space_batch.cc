// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND for every fixed-size dtype, on
// 3-D [batch, h, depth] and 4-D [batch, h, w, depth] inputs, as TFLite's
// reference_ops::SpaceToBatchND / BatchToSpaceND: a 3-D input is handled
// as 4-D with w = 1 (block 1, no padding or cropping), the block offset is
// the slow part of the batch index (batch = offset * in_batch + b), and
// SPACE_TO_BATCH_ND pads INT8/UINT8/INT16 with the output's zero point
// (every other dtype with 0).
#include <cstring>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

struct SpaceBatchState : KernelState {
  // The "space" side [space_batch, space_h, space_w, depth] and the "batch"
  // side [batch_batch, batch_h, batch_w, depth]: SPACE_TO_BATCH_ND reads
  // the space side, BATCH_TO_SPACE_ND writes it.
  int64_t space_batch = 0, space_h = 0, space_w = 0;
  int64_t batch_h = 0, batch_w = 0;
  int64_t block_h = 1, block_w = 1;
  // Padding (SPACE_TO_BATCH_ND) or cropping (BATCH_TO_SPACE_ND) before the
  // first element of h and w.
  int64_t before_h = 0, before_w = 0;
  int64_t depth = 1;
  uint64_t pad_bits = 0;  // the pad element's bytes (low ElementSize bytes)
};

// Both ops pair an element of the batch side (bb, bh, bw) with the space
// coordinate (sb, sh, sw) where, with bb = off * space_batch + sb,
// sh = bh * block_h + off / block_w - before_h and
// sw = bw * block_w + off % block_w - before_w.
template <typename T>
absl::Status EvalSpaceToBatch(EvalContext& ctx) {
  const SpaceBatchState& s = *ctx.state<SpaceBatchState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  T pad;
  std::memcpy(&pad, &s.pad_bits, sizeof(T));
  const int64_t out_batch = s.space_batch * s.block_h * s.block_w;
  for (int64_t bb = 0; bb < out_batch; ++bb) {
    const int64_t sb = bb % s.space_batch, off = bb / s.space_batch;
    const int64_t shift_h = off / s.block_w, shift_w = off % s.block_w;
    for (int64_t bh = 0; bh < s.batch_h; ++bh) {
      const int64_t sh = bh * s.block_h + shift_h - s.before_h;
      for (int64_t bw = 0; bw < s.batch_w; ++bw) {
        const int64_t sw = bw * s.block_w + shift_w - s.before_w;
        T* dst = out + ((bb * s.batch_h + bh) * s.batch_w + bw) * s.depth;
        if (sh < 0 || sh >= s.space_h || sw < 0 || sw >= s.space_w) {
          for (int64_t c = 0; c < s.depth; ++c) dst[c] = pad;
        } else {
          const T* src =
              in + ((sb * s.space_h + sh) * s.space_w + sw) * s.depth;
          std::memcpy(dst, src, s.depth * sizeof(T));
        }
      }
    }
  }
  return absl::OkStatus();
}

// Walks the output (the space side), so every element is written once.
template <typename T>
absl::Status EvalBatchToSpace(EvalContext& ctx) {
  const SpaceBatchState& s = *ctx.state<SpaceBatchState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  for (int64_t sb = 0; sb < s.space_batch; ++sb) {
    for (int64_t sh = 0; sh < s.space_h; ++sh) {
      const int64_t ph = sh + s.before_h;
      const int64_t bh = ph / s.block_h, shift_h = ph % s.block_h;
      for (int64_t sw = 0; sw < s.space_w; ++sw) {
        const int64_t pw = sw + s.before_w;
        const int64_t bw = pw / s.block_w, shift_w = pw % s.block_w;
        const int64_t bb = (shift_h * s.block_w + shift_w) * s.space_batch + sb;
        const T* src = in + ((bb * s.batch_h + bh) * s.batch_w + bw) * s.depth;
        T* dst = out + ((sb * s.space_h + sh) * s.space_w + sw) * s.depth;
        std::memcpy(dst, src, s.depth * sizeof(T));
      }
    }
  }
  return absl::OkStatus();
}

// The checks both ops share (dtypes, rank), then the block shape and the
// paddings/crops, padded to two spatial dims; *known is false (and the
// caller defers) when their values are not available yet. `amounts_name`
// is "paddings" or "crops", for messages.
absl::Status ReadBlockAndAmounts(PrepareContext& ctx, const char* amounts_name,
                                 std::vector<int64_t>* block,
                                 std::vector<int64_t>* amounts, bool* known) {
  *known = false;
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* block_t, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* amounts_t, RequiredInput(ctx, 2));
  if (ctx.output(0)->type != in->type || !IsIntegerIndexType(block_t->type) ||
      !IsIntegerIndexType(amounts_t->type) ||
      !DispatchByElementSize(ElementSize(in->type), [](auto) {}) ||
      in->type == tfl::TensorType_STRING) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(in->rank() == 3 || in->rank() == 4,
                     "input must be 3-D or 4-D, got %s",
                     ShapeToString(in->shape));
  if (!SameQuantization(*in, *ctx.output(0))) {
    return ctx.Unsupported("input and output with different quantization");
  }
  if (!ctx.ValuesKnown(block_t) || !ctx.ValuesKnown(amounts_t)) {
    return absl::OkStatus();
  }
  const int spatial = in->rank() - 2;
  GRAFT_ASSIGN_OR_RETURN(*block, ReadIntValues(*block_t));
  GRAFT_ASSIGN_OR_RETURN(*amounts, ReadIntValues(*amounts_t));
  GRAFT_KERNEL_CHECK(static_cast<int>(block->size()) == spatial,
                     "block_shape holds %d values, expected %d", block->size(),
                     spatial);
  GRAFT_KERNEL_CHECK(static_cast<int>(amounts->size()) == 2 * spatial,
                     "%s hold %d values, expected %d", amounts_name,
                     amounts->size(), 2 * spatial);
  for (int d = 0; d < spatial; ++d) {
    GRAFT_KERNEL_CHECK((*block)[d] >= 1, "block_shape[%d] = %d is not positive",
                       d, (*block)[d]);
    GRAFT_KERNEL_CHECK((*amounts)[2 * d] >= 0 && (*amounts)[2 * d + 1] >= 0,
                       "negative %s on spatial dim %d", amounts_name, d);
  }
  // Pad 3-D to the 4-D form: w = 1 with block 1 and nothing added.
  if (spatial == 1) {
    block->push_back(1);
    amounts->push_back(0);
    amounts->push_back(0);
  }
  *known = true;
  return absl::OkStatus();
}

void SetSpaceBatchEval(PrepareContext& ctx, bool to_batch) {
  DispatchByElementSize(ElementSize(ctx.input(0)->type), [&](auto tag) {
    using T = decltype(tag);
    ctx.SetEval(to_batch ? EvalSpaceToBatch<T> : EvalBatchToSpace<T>);
  });
}

absl::Status PrepareSpaceToBatchND(PrepareContext& ctx) {
  std::vector<int64_t> block, pads;
  bool known = false;
  GRAFT_RETURN_IF_ERROR(
      ReadBlockAndAmounts(ctx, "paddings", &block, &pads, &known));
  if (!known) return ctx.DeferToRun();
  const Tensor& in = *ctx.input(0);
  const bool four_d = in.rank() == 4;
  auto* s = MakeState<SpaceBatchState>(ctx);
  s->space_batch = in.dim(0);
  s->space_h = in.dim(1);
  s->space_w = four_d ? in.dim(2) : 1;
  s->depth = in.dim(in.rank() - 1);
  s->block_h = block[0], s->block_w = block[1];
  s->before_h = pads[0], s->before_w = pads[2];
  const int64_t padded_h = s->space_h + pads[0] + pads[1];
  const int64_t padded_w = s->space_w + pads[2] + pads[3];
  GRAFT_KERNEL_CHECK(padded_h % s->block_h == 0,
                     "padded spatial dim 0 (%d) is not a multiple of "
                     "block_shape[0] = %d",
                     padded_h, s->block_h);
  GRAFT_KERNEL_CHECK(padded_w % s->block_w == 0,
                     "padded spatial dim 1 (%d) is not a multiple of "
                     "block_shape[1] = %d",
                     padded_w, s->block_w);
  s->batch_h = padded_h / s->block_h;
  s->batch_w = padded_w / s->block_w;
  const tfl::QuantizationParametersT* q = ctx.output(0)->quantization;
  const tfl::TensorType type = in.type;
  if ((type == tfl::TensorType_INT8 || type == tfl::TensorType_UINT8 ||
       type == tfl::TensorType_INT16) &&
      q != nullptr && !q->zero_point.empty()) {
    // Two's complement: the low bytes of the zero point are the element.
    const uint64_t zp = static_cast<uint64_t>(q->zero_point[0]);
    s->pad_bits = zp & ((uint64_t{1} << (8 * ElementSize(type))) - 1);
  }
  Shape out = {static_cast<int32_t>(s->space_batch * s->block_h * s->block_w),
               static_cast<int32_t>(s->batch_h)};
  if (four_d) out.push_back(static_cast<int32_t>(s->batch_w));
  out.push_back(static_cast<int32_t>(s->depth));
  SetSpaceBatchEval(ctx, /*to_batch=*/true);
  return ctx.SetOutputShape(0, std::move(out));
}

absl::Status PrepareBatchToSpaceND(PrepareContext& ctx) {
  std::vector<int64_t> block, crops;
  bool known = false;
  GRAFT_RETURN_IF_ERROR(
      ReadBlockAndAmounts(ctx, "crops", &block, &crops, &known));
  if (!known) return ctx.DeferToRun();
  const Tensor& in = *ctx.input(0);
  const bool four_d = in.rank() == 4;
  auto* s = MakeState<SpaceBatchState>(ctx);
  s->batch_h = in.dim(1);
  s->batch_w = four_d ? in.dim(2) : 1;
  s->depth = in.dim(in.rank() - 1);
  s->block_h = block[0], s->block_w = block[1];
  s->before_h = crops[0], s->before_w = crops[2];
  const int64_t blocks = s->block_h * s->block_w;
  GRAFT_KERNEL_CHECK(in.dim(0) % blocks == 0,
                     "input batch %d is not a multiple of the block size %d",
                     in.dim(0), blocks);
  s->space_batch = in.dim(0) / blocks;
  s->space_h = s->batch_h * s->block_h - crops[0] - crops[1];
  s->space_w = s->batch_w * s->block_w - crops[2] - crops[3];
  GRAFT_KERNEL_CHECK(s->space_h >= 0 && s->space_w >= 0,
                     "crops remove more than the %dx%d spatial extent",
                     s->batch_h * s->block_h, s->batch_w * s->block_w);
  Shape out = {static_cast<int32_t>(s->space_batch),
               static_cast<int32_t>(s->space_h)};
  if (four_d) out.push_back(static_cast<int32_t>(s->space_w));
  out.push_back(static_cast<int32_t>(s->depth));
  SetSpaceBatchEval(ctx, /*to_batch=*/false);
  return ctx.SetOutputShape(0, std::move(out));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(SpaceToBatchND);
GRAFT_DEFINE_KERNEL(BatchToSpaceND);

}  // namespace graft
