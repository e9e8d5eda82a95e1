// AVERAGE_POOL_2D and MAX_POOL_2D (float32), NHWC, SAME/VALID padding,
// fused activation. The average divides by the number of window elements
// inside the input (padding is not counted), as TFLite.
#include <algorithm>
#include <limits>

#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct PoolState : KernelState, PoolGeometry {
  float lo = 0, hi = 0;
};

template <bool kMax>
absl::Status EvalPool(EvalContext& ctx) {
  const PoolState& s = *ctx.state<PoolState>();
  const float* input = ctx.input(0)->data<float>();
  float* output = ctx.output(0)->data<float>();
  auto body = [&](int64_t row_begin, int64_t row_end) {
    for (int64_t row = row_begin; row < row_end; ++row) {
      const int b = static_cast<int>(row / s.out_h);
      const int oy = static_cast<int>(row % s.out_h);
      const int y0 = std::max(0, oy * s.stride_h - s.pad_h);
      const int y1 = std::min(s.in_h, oy * s.stride_h - s.pad_h + s.k_h);
      for (int ox = 0; ox < s.out_w; ++ox) {
        const int x0 = std::max(0, ox * s.stride_w - s.pad_w);
        const int x1 = std::min(s.in_w, ox * s.stride_w - s.pad_w + s.k_w);
        float* out =
            output + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.c;
        for (int c = 0; c < s.c; ++c) {
          out[c] = kMax ? std::numeric_limits<float>::lowest() : 0.0f;
        }
        for (int y = y0; y < y1; ++y) {
          for (int x = x0; x < x1; ++x) {
            const float* in =
                input + ((int64_t{b} * s.in_h + y) * s.in_w + x) * s.c;
            for (int c = 0; c < s.c; ++c) {
              if constexpr (kMax) {
                out[c] = std::max(out[c], in[c]);
              } else {
                out[c] += in[c];
              }
            }
          }
        }
        const float count = static_cast<float>((y1 - y0) * (x1 - x0));
        for (int c = 0; c < s.c; ++c) {
          float v = kMax ? out[c] : out[c] / count;
          out[c] = std::min(std::max(v, s.lo), s.hi);
        }
      }
    }
  };
  const int64_t rows = int64_t{s.batch} * s.out_h;
  const int64_t per_row =
      std::max<int64_t>(1, int64_t{s.out_w} * s.k_h * s.k_w * s.c);
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(
        rows, std::max<int64_t>(1, 32768 / per_row), body);
  } else {
    body(0, rows);
  }
  return absl::OkStatus();
}

template <bool kMax>
absl::Status PreparePool(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  if (in->type != tfl::TensorType_FLOAT32 ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported();
  }
  const auto* o = ctx.op().builtin_options.AsPool2DOptions();
  auto* s = MakeState<PoolState>(ctx);
  GRAFT_RETURN_IF_ERROR(PreparePoolGeometry(*in, o, s));
  GRAFT_RETURN_IF_ERROR(
      ActivationRange(o->fused_activation_function, &s->lo, &s->hi));
  ctx.SetEval(EvalPool<kMax>);
  ctx.SetReductionLength(int64_t{s->k_h} * s->k_w);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->c});
}

absl::Status PrepareAveragePool2D(PrepareContext& ctx) {
  return PreparePool<false>(ctx);
}
absl::Status PrepareMaxPool2D(PrepareContext& ctx) {
  return PreparePool<true>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(AveragePool2D);
GRAFT_DEFINE_KERNEL(MaxPool2D);

}  // namespace graft
