// Quantized AVERAGE_POOL_2D and MAX_POOL_2D (INT8, UINT8, INT16) with
// TFLite's reference_integer_ops semantics: the input and output share
// scale and zero point; the average is the integer sum over the in-bounds
// window divided by the in-bounds count, rounded half away from zero; both
// clamp to the fused activation's quantized range.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "dispatch/kernel.h"
#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"

namespace graft {
namespace kernels {
namespace {

struct QPoolState : KernelState, PoolGeometry {
  int32_t act_min = 0, act_max = 0;
};

// The rows run in two builds, picked per call by KernelIsa() and counted:
// the baseline (SSE2 emulates pmaxsb/pminsb, which are SSE4.1) and AVX2.
#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
#define GRAFT_QPOOL_AVX2 1
#else
#define GRAFT_QPOOL_AVX2 0
#endif

CallCounter g_max_pool_calls[2];

// MAX_POOL_2D with the channels innermost: per output pixel, 16 bytes of
// channels at a time, the running maximum over the in-bounds taps held in
// a register from the type's lowest value, then the activation clamp, then
// one store (the reference's per-channel loop over the window, which
// starts at the lowest value and clamps at the end, gives the same
// values); the last channels one by one. Four neighbouring output pixels
// whose windows lie inside the input's columns run together, four
// independent maxima per tap instead of one chain.
template <typename T>
inline __attribute__((always_inline)) void MaxPoolRowsBody(
    const QPoolState& s, const T* in, T* out) {
  typedef T V __attribute__((vector_size(16), aligned(1)));
  constexpr int kLanes = 16 / sizeof(T);
  const T lo = static_cast<T>(s.act_min), hi = static_cast<T>(s.act_max);
  const V vlo = V{} + lo, vhi = V{} + hi;
  const V lowest = V{} + std::numeric_limits<T>::lowest();
  auto load = [](const T* p) {
    V x;
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  auto finish = [&](V acc, T* p) {
    acc = acc < vlo ? vlo : acc;
    acc = acc > vhi ? vhi : acc;
    std::memcpy(p, &acc, sizeof(acc));
  };
  const int64_t row_step = int64_t{s.in_w} * s.c;
  const int64_t pixel_step = int64_t{s.stride_w} * s.c;
  int ox_in0 = 0, ox_in1 = 0;
  InteriorPoolColumns(s, &ox_in0, &ox_in1);
  for (int b = 0; b < s.batch; ++b) {
    for (int oy = 0; oy < s.out_h; ++oy) {
      const int y0 = oy * s.stride_h - s.pad_h;
      const int fy0 = std::max(0, -y0), fy1 = std::min(s.k_h, s.in_h - y0);
      const T* in_rows =
          in + (int64_t{b} * s.in_h + y0 + fy0) * row_step;  // first tap row
      T* op = out + (int64_t{b} * s.out_h + oy) * s.out_w * int64_t{s.c};
      int ox = 0;
      while (ox < s.out_w) {
        const int x0 = ox * s.stride_w - s.pad_w;
        const int fx0 = std::max(0, -x0), fx1 = std::min(s.k_w, s.in_w - x0);
        // The window's first in-bounds tap.
        const T* first = in_rows + int64_t{x0 + fx0} * s.c;
        const int pixels = ox >= ox_in0 && ox + 4 <= ox_in1 ? 4 : 1;
        int c = 0;
        for (; pixels == 4 && c + kLanes <= s.c; c += kLanes) {
          V a0 = lowest, a1 = lowest, a2 = lowest, a3 = lowest;
          for (int fy = 0; fy < fy1 - fy0; ++fy) {
            const T* row = first + fy * row_step + c;
            for (int fx = 0; fx < s.k_w; ++fx) {
              const T* p = row + int64_t{fx} * s.c;
              const V x0v = load(p), x1v = load(p + pixel_step);
              const V x2v = load(p + 2 * pixel_step);
              const V x3v = load(p + 3 * pixel_step);
              a0 = a0 > x0v ? a0 : x0v;
              a1 = a1 > x1v ? a1 : x1v;
              a2 = a2 > x2v ? a2 : x2v;
              a3 = a3 > x3v ? a3 : x3v;
            }
          }
          finish(a0, op + c);
          finish(a1, op + s.c + c);
          finish(a2, op + 2 * s.c + c);
          finish(a3, op + 3 * s.c + c);
        }
        for (int i = 0; i < pixels; ++i) {  // one pixel, or the four's tails
          const T* pf = first + i * pixel_step;
          T* po = op + i * s.c;
          int cb = c;
          for (; cb + kLanes <= s.c; cb += kLanes) {
            V acc = lowest;
            for (int fy = 0; fy < fy1 - fy0; ++fy) {
              const T* row = pf + fy * row_step + cb;
              for (int fx = 0; fx < fx1 - fx0; ++fx) {
                const V x = load(row + int64_t{fx} * s.c);
                acc = acc > x ? acc : x;
              }
            }
            finish(acc, po + cb);
          }
          for (; cb < s.c; ++cb) {
            T m = std::numeric_limits<T>::lowest();
            for (int fy = 0; fy < fy1 - fy0; ++fy) {
              for (int fx = 0; fx < fx1 - fx0; ++fx) {
                m = std::max(m, pf[fy * row_step + int64_t{fx} * s.c + cb]);
              }
            }
            po[cb] = std::min(hi, std::max(lo, m));
          }
        }
        ox += pixels;
        op += pixels * int64_t{s.c};
      }
    }
  }
}

template <typename T>
void MaxPoolRowsBaseline(const QPoolState& s, const T* in, T* out) {
  MaxPoolRowsBody(s, in, out);
}
#if GRAFT_QPOOL_AVX2
template <typename T>
__attribute__((target("avx2"))) void MaxPoolRowsAvx2(const QPoolState& s,
                                                     const T* in, T* out) {
  MaxPoolRowsBody(s, in, out);
}
#endif

template <typename T>
void MaxPoolRows(const QPoolState& s, const T* in, T* out) {
#if GRAFT_QPOOL_AVX2
  if (KernelIsaAtLeast(CpuIsa::kAvx2)) {
    g_max_pool_calls[1].fetch_add(1, std::memory_order_relaxed);
    MaxPoolRowsAvx2(s, in, out);
    return;
  }
#endif
  g_max_pool_calls[0].fetch_add(1, std::memory_order_relaxed);
  MaxPoolRowsBaseline(s, in, out);
}

template <typename T, bool kMax>
absl::Status EvalQPool(EvalContext& ctx) {
  const auto& s = *ctx.state<QPoolState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  if constexpr (kMax) {
    MaxPoolRows<T>(s, in, out);
    return absl::OkStatus();
  }
  for (int b = 0; b < s.batch; ++b) {
    for (int oy = 0; oy < s.out_h; ++oy) {
      for (int ox = 0; ox < s.out_w; ++ox) {
        const int y0 = oy * s.stride_h - s.pad_h;
        const int x0 = ox * s.stride_w - s.pad_w;
        const int fy0 = std::max(0, -y0), fy1 = std::min(s.k_h, s.in_h - y0);
        const int fx0 = std::max(0, -x0), fx1 = std::min(s.k_w, s.in_w - x0);
        for (int c = 0; c < s.c; ++c) {
          int32_t acc = kMax ? std::numeric_limits<T>::lowest() : 0;
          int count = 0;
          for (int fy = fy0; fy < fy1; ++fy) {
            for (int fx = fx0; fx < fx1; ++fx) {
              const int32_t v =
                  in[((int64_t{b} * s.in_h + y0 + fy) * s.in_w + x0 + fx) *
                         s.c +
                     c];
              if (kMax) {
                acc = std::max(acc, v);
              } else {
                acc += v;
              }
              ++count;
            }
          }
          if (!kMax && count > 0) {
            acc =
                acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
          }
          acc = std::min(s.act_max, std::max(s.act_min, acc));
          out[((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.c + c] =
              static_cast<T>(acc);
        }
      }
    }
  }
  return absl::OkStatus();
}

template <bool kMax>
absl::Status PrepareQPool(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  const Tensor* out = ctx.output(0);
  const tfl::TensorType t = in->type;
  if ((t != tfl::TensorType_INT8 && t != tfl::TensorType_UINT8 &&
       t != tfl::TensorType_INT16) ||
      out->type != t || !IsQuantized(*in) || !IsQuantized(*out)) {
    return ctx.Unsupported();
  }
  if (!SameQuantization(*in, *out)) {
    return ctx.Unsupported("pooling with different input and output scales");
  }
  const auto* o = ctx.op().builtin_options.AsPool2DOptions();
  auto* s = MakeState<QPoolState>(ctx);
  GRAFT_RETURN_IF_ERROR(PreparePoolGeometry(*in, o, s));
  GRAFT_RETURN_IF_ERROR(
      ActivationRangeQuantized(o->fused_activation_function, t, Scale(*out),
                               ZeroPoint(*out), &s->act_min, &s->act_max));
  switch (t) {
    case tfl::TensorType_INT8:
      ctx.SetEval(EvalQPool<int8_t, kMax>);
      break;
    case tfl::TensorType_UINT8:
      ctx.SetEval(EvalQPool<uint8_t, kMax>);
      break;
    default:
      ctx.SetEval(EvalQPool<int16_t, kMax>);
      break;
  }
  ctx.SetReductionLength(int64_t{s->k_h} * s->k_w);
  const Shape out_shape = {s->batch, s->out_h, s->out_w, s->c};
  static_cast<PoolGeometry&>(*s) = RowMajorPoolGeometry(*s);
  return ctx.SetOutputShape(0, out_shape);
}

absl::Status PrepareAveragePool2DQuantized(PrepareContext& ctx) {
  return PrepareQPool<false>(ctx);
}
absl::Status PrepareMaxPool2DQuantized(PrepareContext& ctx) {
  return PrepareQPool<true>(ctx);
}

}  // namespace

int64_t QuantizedMaxPoolCallsForTesting(CpuIsa path) {
  return path == CpuIsa::kBaseline
             ? g_max_pool_calls[0].load(std::memory_order_relaxed)
             : g_max_pool_calls[1].load(std::memory_order_relaxed);
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(AveragePool2DQuantized);
GRAFT_DEFINE_KERNEL(MaxPool2DQuantized);

}  // namespace graft
