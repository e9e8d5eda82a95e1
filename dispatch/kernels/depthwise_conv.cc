// DEPTHWISE_CONV_2D (float32): NHWC input, filter [1, KH, KW, Cin * mult],
// optional bias, SAME/VALID padding, strides, dilations, fused activation.
//
// Direct loop: each output pixel accumulates its taps over the contiguous
// channel vector (the inner loop vectorizes); rows are split over threads.
#include <algorithm>

#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct DepthwiseState : KernelState {
  int batch, in_h, in_w, in_c, out_h, out_w, out_c, mult;
  int k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
  float lo, hi;
};

absl::Status EvalDepthwise(EvalContext& ctx) {
  const DepthwiseState& s = *ctx.state<DepthwiseState>();
  const float* input = ctx.input(0)->data<float>();
  const float* filter = ctx.input(1)->data<float>();
  const Tensor* bias_t = ctx.input(2);
  const float* bias = bias_t ? bias_t->data<float>() : nullptr;
  float* output = ctx.output(0)->data<float>();
  const int oc_n = s.out_c;
  auto body = [&](int64_t row_begin, int64_t row_end) {
    for (int64_t row = row_begin; row < row_end; ++row) {
      const int b = static_cast<int>(row / s.out_h);
      const int oy = static_cast<int>(row % s.out_h);
      for (int ox = 0; ox < s.out_w; ++ox) {
        float* out = output + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) *
                                  oc_n;
        for (int c = 0; c < oc_n; ++c) out[c] = bias ? bias[c] : 0.0f;
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int iy = oy * s.stride_h - s.pad_h + ky * s.dil_h;
          if (iy < 0 || iy >= s.in_h) continue;
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int ix = ox * s.stride_w - s.pad_w + kx * s.dil_w;
            if (ix < 0 || ix >= s.in_w) continue;
            const float* in =
                input + ((int64_t{b} * s.in_h + iy) * s.in_w + ix) * s.in_c;
            const float* w = filter + (int64_t{ky} * s.k_w + kx) * oc_n;
            if (s.mult == 1) {
              for (int c = 0; c < oc_n; ++c) out[c] += in[c] * w[c];
            } else {
              for (int ic = 0; ic < s.in_c; ++ic) {
                const float v = in[ic];
                float* o = out + ic * s.mult;
                const float* wm = w + ic * s.mult;
                for (int m = 0; m < s.mult; ++m) o[m] += v * wm[m];
              }
            }
          }
        }
        for (int c = 0; c < oc_n; ++c) {
          out[c] = std::min(std::max(out[c], s.lo), s.hi);
        }
      }
    }
  };
  const int64_t rows = int64_t{s.batch} * s.out_h;
  // Work per row: out_w * taps * channels multiply-adds.
  const int64_t per_row =
      std::max<int64_t>(1, int64_t{s.out_w} * s.k_h * s.k_w * oc_n);
  const int64_t min_rows = std::max<int64_t>(1, 32768 / per_row);
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(rows, min_rows, body);
  } else {
    body(0, rows);
  }
  return absl::OkStatus();
}

absl::Status PrepareDepthwiseConv2D(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* filter, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  if (in->type != tfl::TensorType_FLOAT32 ||
      filter->type != tfl::TensorType_FLOAT32 ||
      (bias && bias->type != tfl::TensorType_FLOAT32) ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat(
        "%s input with %s weights", TensorTypeName(in->type),
        TensorTypeName(filter->type)));
  }
  GRAFT_KERNEL_CHECK(in->rank() == 4 && filter->rank() == 4,
                     "input and filter must be 4-D, got %s and %s",
                     ShapeToString(in->shape), ShapeToString(filter->shape));
  const auto* o = ctx.op().builtin_options.AsDepthwiseConv2DOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing DepthwiseConv2DOptions");
  auto* s = MakeState<DepthwiseState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->k_h = filter->dim(1), s->k_w = filter->dim(2), s->out_c = filter->dim(3);
  GRAFT_KERNEL_CHECK(s->in_c > 0 && s->out_c % s->in_c == 0,
                     "filter depth %d is not a multiple of input depth %d",
                     s->out_c, s->in_c);
  s->mult = s->out_c / s->in_c;
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->out_c,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->out_c);
  GRAFT_RETURN_IF_ERROR(PrepareConvWindow(*o, s));
  GRAFT_RETURN_IF_ERROR(
      ActivationRange(o->fused_activation_function, &s->lo, &s->hi));
  ctx.SetEval(EvalDepthwise);
  ctx.SetReductionLength(int64_t{s->k_h} * s->k_w);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(DepthwiseConv2D);

}  // namespace graft
