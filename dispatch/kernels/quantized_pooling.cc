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
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"

namespace graft {
namespace kernels {
namespace {

struct QPoolState : KernelState, PoolGeometry {
  int32_t act_min = 0, act_max = 0;
};

// out[i] = max(out[i], x[i]) for i < n, 16 bytes of lanes at a time
// (vector extensions: one pmaxsb/pmaxub/pmaxsw, or its SSE2 emulation).
template <typename T>
inline void MaxInto(const T* x, int n, T* out) {
  typedef T V __attribute__((vector_size(16), aligned(1)));
  constexpr int kLanes = 16 / sizeof(T);
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    V a, b;
    std::memcpy(&a, out + i, sizeof(a));
    std::memcpy(&b, x + i, sizeof(b));
    a = a > b ? a : b;
    std::memcpy(out + i, &a, sizeof(a));
  }
  for (; i < n; ++i) out[i] = std::max(out[i], x[i]);
}

// MAX_POOL_2D with the channels innermost: per output pixel, the running
// maximum of its in-bounds taps' channel rows (the reference's per-channel
// loop over the window, which starts at the type's lowest value and clamps
// at the end, gives the same values), then the activation clamp.
template <typename T>
void MaxPoolRows(const QPoolState& s, const T* in, T* out) {
  const T lo = static_cast<T>(s.act_min), hi = static_cast<T>(s.act_max);
  for (int b = 0; b < s.batch; ++b) {
    for (int oy = 0; oy < s.out_h; ++oy) {
      for (int ox = 0; ox < s.out_w; ++ox) {
        const int y0 = oy * s.stride_h - s.pad_h;
        const int x0 = ox * s.stride_w - s.pad_w;
        const int fy0 = std::max(0, -y0), fy1 = std::min(s.k_h, s.in_h - y0);
        const int fx0 = std::max(0, -x0), fx1 = std::min(s.k_w, s.in_w - x0);
        T* op = out + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.c;
        std::fill(op, op + s.c, std::numeric_limits<T>::lowest());
        for (int fy = fy0; fy < fy1; ++fy) {
          for (int fx = fx0; fx < fx1; ++fx) {
            MaxInto(
                in + ((int64_t{b} * s.in_h + y0 + fy) * s.in_w + x0 + fx) * s.c,
                s.c, op);
          }
        }
        for (int c = 0; c < s.c; ++c) op[c] = std::min(hi, std::max(lo, op[c]));
      }
    }
  }
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
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->c});
}

absl::Status PrepareAveragePool2DQuantized(PrepareContext& ctx) {
  return PrepareQPool<false>(ctx);
}
absl::Status PrepareMaxPool2DQuantized(PrepareContext& ctx) {
  return PrepareQPool<true>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(AveragePool2DQuantized);
GRAFT_DEFINE_KERNEL(MaxPool2DQuantized);

}  // namespace graft
