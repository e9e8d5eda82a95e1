// AVERAGE_POOL_2D and MAX_POOL_2D (float32), NHWC, SAME/VALID padding,
// fused activation. The average divides by the number of window elements
// inside the input (padding is not counted), as TFLite.
#include <algorithm>
#include <atomic>
#include <limits>

#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct PoolState : KernelState, PoolGeometry {
  float lo = 0, hi = 0;
};

// Output rows [row_begin, row_end): per output pixel, 8 channels at a time
// in a register over the window (the maximum as std::max, or the sum in
// window order), then the average's division and the clamp, one store; the
// last channels one at a time with the same operations, so every lane gets
// the scalar loop's result. In float_simd.h's two builds, picked per call
// and counted.
std::atomic<int64_t> g_pool_calls[2];

template <bool kMax>
GRAFT_SIMD_INLINE void PoolRowsBody(const PoolState& s, const float* input,
                                    float* output, int64_t row_begin,
                                    int64_t row_end) {
  const float init = kMax ? std::numeric_limits<float>::lowest() : 0.0f;
  const V8 vlo = Splat(s.lo), vhi = Splat(s.hi);
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int b = static_cast<int>(row / s.out_h);
    const int oy = static_cast<int>(row % s.out_h);
    const int y0 = std::max(0, oy * s.stride_h - s.pad_h);
    const int y1 = std::min(s.in_h, oy * s.stride_h - s.pad_h + s.k_h);
    for (int ox = 0; ox < s.out_w; ++ox) {
      const int x0 = std::max(0, ox * s.stride_w - s.pad_w);
      const int x1 = std::min(s.in_w, ox * s.stride_w - s.pad_w + s.k_w);
      float* out = output + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.c;
      const float count = static_cast<float>((y1 - y0) * (x1 - x0));
      int c = 0;
      for (; c + 8 <= s.c; c += 8) {
        V8 acc = Splat(init);
        for (int y = y0; y < y1; ++y) {
          for (int x = x0; x < x1; ++x) {
            const V8 v =
                LoadV8(input + ((int64_t{b} * s.in_h + y) * s.in_w + x) * s.c + c);
            if constexpr (kMax) {
              acc = acc < v ? v : acc;
            } else {
              acc += v;
            }
          }
        }
        if constexpr (!kMax) acc = acc / Splat(count);
        StoreV8(out + c, Clamp(acc, vlo, vhi));
      }
      for (; c < s.c; ++c) {
        float acc = init;
        for (int y = y0; y < y1; ++y) {
          for (int x = x0; x < x1; ++x) {
            const float v =
                input[((int64_t{b} * s.in_h + y) * s.in_w + x) * s.c + c];
            acc = kMax ? std::max(acc, v) : acc + v;
          }
        }
        const float v = kMax ? acc : acc / count;
        out[c] = std::min(std::max(v, s.lo), s.hi);
      }
    }
  }
}

template <bool kMax>
void PoolRowsBaseline(const PoolState& s, const float* input, float* output,
                      int64_t row_begin, int64_t row_end) {
  PoolRowsBody<kMax>(s, input, output, row_begin, row_end);
}
#if GRAFT_HAVE_AVX2_FMA_BUILD
template <bool kMax>
GRAFT_AVX2_FMA_TARGET void PoolRowsAvx2(const PoolState& s, const float* input,
                                        float* output, int64_t row_begin,
                                        int64_t row_end) {
  PoolRowsBody<kMax>(s, input, output, row_begin, row_end);
}
#endif

template <bool kMax>
absl::Status EvalPool(EvalContext& ctx) {
  const PoolState& s = *ctx.state<PoolState>();
  const float* input = ctx.input(0)->data<float>();
  float* output = ctx.output(0)->data<float>();
  void (*rows_fn)(const PoolState&, const float*, float*, int64_t, int64_t) =
      PoolRowsBaseline<kMax>;
  int path = 0;
#if GRAFT_HAVE_AVX2_FMA_BUILD
  if (CpuHasAvx2Fma()) rows_fn = PoolRowsAvx2<kMax>, path = 1;
#endif
  g_pool_calls[path].fetch_add(1, std::memory_order_relaxed);
  auto body = [&](int64_t row_begin, int64_t row_end) {
    rows_fn(s, input, output, row_begin, row_end);
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

int64_t FloatPoolCallsForTesting(CpuIsa path) {
  return g_pool_calls[path == CpuIsa::kBaseline ? 0 : 1].load(
      std::memory_order_relaxed);
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(AveragePool2D);
GRAFT_DEFINE_KERNEL(MaxPool2D);

}  // namespace graft
