// AVERAGE_POOL_2D and MAX_POOL_2D (float32), NHWC, SAME/VALID padding,
// fused activation. The average divides by the number of window elements
// inside the input (padding is not counted), as TFLite.
#include <algorithm>
#include <limits>

#include "dispatch/kernels/call_counter.h"
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
// the scalar loop's result. Four neighbouring pixels whose windows lie
// inside the input's columns run together (four independent chains). In
// float_simd.h's two builds, picked per call and counted.
CallCounter g_pool_calls[2];

// Window taps (floats read) per thread's chunk of rows, at least: about
// 0.3 us. Fewer would cost more to hand over than they save; more kept a
// 16-row 3x3 pool on one thread, reading the half of its input the other
// core had just written from that core's cache (2.7 -> 4.0 us at 2
// threads).
constexpr int64_t kPoolMinTaps = 8192;

// One tap into a window's accumulator: the maximum as std::max(acc, v), or
// the sum.
template <bool kMax>
GRAFT_SIMD_INLINE V8 Combine(V8 acc, V8 v) {
  if constexpr (kMax) {
    return acc < v ? v : acc;
  } else {
    return acc + v;
  }
}

template <bool kMax>
GRAFT_SIMD_INLINE void PoolRowsBody(const PoolState& s, const float* input,
                                    float* output, int64_t row_begin,
                                    int64_t row_end) {
  const float init = kMax ? std::numeric_limits<float>::lowest() : 0.0f;
  const V8 vlo = Splat(s.lo), vhi = Splat(s.hi);
  // The geometry in locals: the stores through `output` would otherwise
  // make the compiler reload it from `s` in every loop.
  const int in_h = s.in_h, in_w = s.in_w, c = s.c, out_h = s.out_h;
  const int out_w = s.out_w, k_h = s.k_h, k_w = s.k_w;
  const int stride_h = s.stride_h, stride_w = s.stride_w;
  const int pad_h = s.pad_h, pad_w = s.pad_w;
  const float lo = s.lo, hi = s.hi;
  const int64_t row_step = int64_t{in_w} * c;
  const int64_t pixel_step = int64_t{stride_w} * c;
  int ox_in0 = 0, ox_in1 = 0;
  InteriorPoolColumns(s, &ox_in0, &ox_in1);
  int b = static_cast<int>(row_begin / out_h);
  int oy = static_cast<int>(row_begin % out_h);
  float* out = output + row_begin * out_w * c;
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int y0 = std::max(0, oy * stride_h - pad_h);
    const int y1 = std::min(in_h, oy * stride_h - pad_h + k_h);
    const float* in_rows = input + (int64_t{b} * in_h + y0) * row_step;
    int ox = 0;
    while (ox < out_w) {
      const int x0 = std::max(0, ox * stride_w - pad_w);
      const int x1 = std::min(in_w, ox * stride_w - pad_w + k_w);
      const float* first = in_rows + int64_t{x0} * c;
      const float count = static_cast<float>((y1 - y0) * (x1 - x0));
      // Four pixels whose windows lie inside the input's columns (so the
      // same count): four independent accumulators, each over its own
      // window in window order.
      const int pixels = ox >= ox_in0 && ox + 4 <= ox_in1 ? 4 : 1;
      int ch = 0;
      for (; pixels == 4 && ch + 8 <= c; ch += 8) {
        V8 a0 = Splat(init), a1 = a0, a2 = a0, a3 = a0;
        for (int y = 0; y < y1 - y0; ++y) {
          for (int x = 0; x < k_w; ++x) {
            const float* p = first + y * row_step + int64_t{x} * c + ch;
            a0 = Combine<kMax>(a0, LoadV8(p));
            a1 = Combine<kMax>(a1, LoadV8(p + pixel_step));
            a2 = Combine<kMax>(a2, LoadV8(p + 2 * pixel_step));
            a3 = Combine<kMax>(a3, LoadV8(p + 3 * pixel_step));
          }
        }
        if constexpr (!kMax) {
          const V8 n = Splat(count);
          a0 = a0 / n, a1 = a1 / n, a2 = a2 / n, a3 = a3 / n;
        }
        StoreV8(out + ch, Clamp(a0, vlo, vhi));
        StoreV8(out + c + ch, Clamp(a1, vlo, vhi));
        StoreV8(out + 2 * c + ch, Clamp(a2, vlo, vhi));
        StoreV8(out + 3 * c + ch, Clamp(a3, vlo, vhi));
      }
      for (int i = 0; i < pixels; ++i) {  // one pixel, or the four's tails
        const float* pf = first + i * pixel_step;
        float* po = out + i * c;
        int cb = ch;
        for (; cb + 8 <= c; cb += 8) {
          V8 acc = Splat(init);
          for (int y = 0; y < y1 - y0; ++y) {
            for (int x = 0; x < x1 - x0; ++x) {
              const float* q = pf + y * row_step + int64_t{x} * c + cb;
              acc = Combine<kMax>(acc, LoadV8(q));
            }
          }
          if constexpr (!kMax) acc = acc / Splat(count);
          StoreV8(po + cb, Clamp(acc, vlo, vhi));
        }
        for (; cb < c; ++cb) {
          float acc = init;
          for (int y = 0; y < y1 - y0; ++y) {
            for (int x = 0; x < x1 - x0; ++x) {
              const float v = pf[y * row_step + int64_t{x} * c + cb];
              acc = kMax ? std::max(acc, v) : acc + v;
            }
          }
          const float v = kMax ? acc : acc / count;
          po[cb] = std::min(std::max(v, lo), hi);
        }
      }
      ox += pixels;
      out += pixels * int64_t{c};
    }
    if (++oy == out_h) oy = 0, ++b;
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
        rows, std::max<int64_t>(1, kPoolMinTaps / per_row), body);
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
  const Shape out_shape = {s->batch, s->out_h, s->out_w, s->c};
  static_cast<PoolGeometry&>(*s) = RowMajorPoolGeometry(*s);
  return ctx.SetOutputShape(0, out_shape);
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
