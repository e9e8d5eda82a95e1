// Reductions over constant axes: MEAN, SUM, REDUCE_PROD, REDUCE_MAX,
// REDUCE_MIN (float32, int32, int64), REDUCE_ANY, REDUCE_ALL (bool), with
// keep_dims, negative and repeated axes as TFLite; and ARG_MAX / ARG_MIN.
//
// Quantized (INT8, UINT8, INT16), the *Quantized kernels: MEAN and SUM with
// TFLite's reference QuantizedMeanOrSum (an int32 sum of the raw values,
// minus zero_point * count, rescaled by input_scale / output_scale, for MEAN
// with 1/count folded into that multiplier exactly as TFLite folds it), for
// any pair of input/output scales; REDUCE_MAX / REDUCE_MIN on the integers
// when input and output share their quantization (TFLite requires it; other
// models are refused as invalid).
//
// The reduction walks the input once in memory order; the output is
// "broadcast" over the reduced dims (kernel_util.h's plan with stride 0), so
// both a reduced innermost dim (a horizontal sum) and a kept one (a vector
// accumulate) are contiguous loops.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "dispatch/kernels/quantized_gemm.h"

namespace graft {
namespace kernels {
namespace {

enum class ReduceKind { kSum, kMean, kProd, kMax, kMin, kAny, kAll };

struct ReduceState : KernelState {
  BroadcastPlan plan;  // operand 0: input, operand 1: output
  int64_t count = 1;   // input elements per output element
  // Where the reduced dims are one block between kept ones, [outer][count]
  // [inner] with inner >= 8 (a global pooling over H and W of NHWC): the
  // input walked as `outer` slabs of `count` rows of `inner` elements, each
  // row combined into the same `inner` outputs: the plan's order, without
  // its per-run bookkeeping.
  bool block = false;
  int64_t outer = 1, inner = 1;
};

template <typename T, ReduceKind kKind>
T Identity() {
  if constexpr (kKind == ReduceKind::kProd || kKind == ReduceKind::kAll) {
    return T{1};
  } else if constexpr (kKind == ReduceKind::kMax) {
    return std::numeric_limits<T>::lowest();
  } else if constexpr (kKind == ReduceKind::kMin) {
    return std::numeric_limits<T>::max();
  } else {
    return T{0};
  }
}

template <typename T, ReduceKind kKind>
inline T Combine(T acc, T v) {
  if constexpr (kKind == ReduceKind::kProd) return acc * v;
  if constexpr (kKind == ReduceKind::kMax) return v > acc ? v : acc;
  if constexpr (kKind == ReduceKind::kMin) return v < acc ? v : acc;
  if constexpr (kKind == ReduceKind::kAny) return acc || v;
  if constexpr (kKind == ReduceKind::kAll) return acc && v;
  return acc + v;  // kSum, kMean
}

// Combines each input element into its output element with Op::Apply(out,
// in), in input order: a reduced innermost dim one element after the
// other (never reassociated, so no build sums in another order), a kept
// one as a vector accumulate; in the block form (global pooling) one
// vector accumulate per reduced row.
//
// The block form goes over kN columns of every row at a time, their kN
// partial results in a local array (in registers, where a store and
// reload of each output per row had put the store-to-load latency into
// every combine: efficientnet_block's 16x16x64 global pooling 1.0 -> 0.3 us,
// MobileNetV2's 7x7x1280 3.1 -> 2.3 us).
template <int kN, typename In, typename Out, typename Op>
GRAFT_SIMD_INLINE void CombineColumns(const In* src, int64_t rows,
                                      int64_t stride, Out* dst) {
  Out acc[kN];
  for (int i = 0; i < kN; ++i) acc[i] = dst[i];
  for (int64_t r = 0; r < rows; ++r, src += stride) {
    for (int i = 0; i < kN; ++i) acc[i] = Op::Apply(acc[i], src[i]);
  }
  for (int i = 0; i < kN; ++i) dst[i] = acc[i];
}

template <typename In, typename Out, typename Op>
GRAFT_SIMD_INLINE void CombineRuns(const ReduceState& s, const In* in,
                                   Out* out) {
  if (s.block) {
    // 64 columns at a time (8 vectors of 8 floats), then 32, 16, 8 and the
    // rest one by one.
    for (int64_t o = 0; o < s.outer; ++o) {
      Out* dst = out + o * s.inner;
      const In* src = in + o * s.count * s.inner;
      int64_t i = 0;
      for (; i + 64 <= s.inner; i += 64) {
        CombineColumns<64, In, Out, Op>(src + i, s.count, s.inner, dst + i);
      }
      if (i + 32 <= s.inner) {
        CombineColumns<32, In, Out, Op>(src + i, s.count, s.inner, dst + i);
        i += 32;
      }
      if (i + 16 <= s.inner) {
        CombineColumns<16, In, Out, Op>(src + i, s.count, s.inner, dst + i);
        i += 16;
      }
      if (i + 8 <= s.inner) {
        CombineColumns<8, In, Out, Op>(src + i, s.count, s.inner, dst + i);
        i += 8;
      }
      for (; i < s.inner; ++i) {
        CombineColumns<1, In, Out, Op>(src + i, s.count, s.inner, dst + i);
      }
    }
    return;
  }
  ForEachBroadcastRun(s.plan, [&](int64_t, const int64_t* off, int64_t n,
                                  const int64_t* st) {
    const In* src = in + off[0];
    Out* dst = out + off[1];
    if (st[1] == 0) {
      Out acc = *dst;
      for (int64_t i = 0; i < n; ++i) acc = Op::Apply(acc, src[i]);
      *dst = acc;
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = Op::Apply(dst[i], src[i]);
    }
  });
}

template <typename T, ReduceKind kKind>
struct CombineOp {
  static T Apply(T acc, T v) { return Combine<T, kKind>(acc, v); }
};

template <typename T, ReduceKind kKind>
GRAFT_SIMD_INLINE void ReduceRuns(const ReduceState& s, const T* in,
                                  T* out) {
  CombineRuns<T, T, CombineOp<T, kKind>>(s, in, out);
}

CallCounter g_float_reduce_calls[2];

void CountFloatReduceCall(CpuIsa path) {
  g_float_reduce_calls[static_cast<int>(path)].fetch_add(
      1, std::memory_order_relaxed);
}

#if GRAFT_HAVE_AVX2_FMA_BUILD
// The float reductions compiled for AVX2 (one operation per combine, so the
// same results); `flatten` brings the walk and its callback into this build.
template <ReduceKind kKind>
GRAFT_AVX2_FMA_TARGET __attribute__((flatten)) void ReduceRunsAvx2(
    const ReduceState& s, const float* in, float* out) {
  ReduceRuns<float, kKind>(s, in, out);
}
#endif

template <typename T, ReduceKind kKind>
absl::Status EvalReduce(EvalContext& ctx) {
  const ReduceState& s = *ctx.state<ReduceState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int64_t out_n = ctx.output(0)->num_elements();
  std::fill(out, out + out_n, Identity<T, kKind>());
  if constexpr (std::is_same_v<T, float>) {
#if GRAFT_HAVE_AVX2_FMA_BUILD
    if (CpuHasAvx2Fma()) {
      CountFloatReduceCall(CpuIsa::kAvx2);
      ReduceRunsAvx2<kKind>(s, in, out);
    } else
#endif
    {
      CountFloatReduceCall(CpuIsa::kBaseline);
      ReduceRuns<T, kKind>(s, in, out);
    }
  } else {
    ReduceRuns<T, kKind>(s, in, out);
  }
  if constexpr (kKind == ReduceKind::kMean) {
    if (s.count > 0) {
      for (int64_t i = 0; i < out_n; ++i) {
        out[i] = static_cast<T>(out[i] / static_cast<T>(s.count));
      }
    }
  }
  return absl::OkStatus();
}

// The axes input as a sorted set of dims in [0, rank).
absl::StatusOr<std::vector<bool>> ReducedDims(const PrepareContext& ctx,
                                              const Tensor& axes, int rank) {
  // A scalar has no dims to reduce: TFLite's ResolveAxis skips the axes
  // for one (the output is the input) instead of checking them.
  if (rank == 0) return std::vector<bool>{};
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> values, ReadIntValues(axes));
  std::vector<bool> reduced(rank, false);
  for (int64_t a : values) {
    GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(a, rank));
    reduced[axis] = true;
  }
  return reduced;
}

// Sets the output shape of a reduction of `in` over `axes` (values known)
// (keep_dims from the op's options) and fills the plan and count.
absl::Status PrepareReduction(PrepareContext& ctx, const Tensor& in,
                              const Tensor& axes, ReduceState* s) {
  const int rank = in.rank();
  GRAFT_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                         ReducedDims(ctx, axes, rank));
  const auto* o = ctx.op().builtin_options.AsReducerOptions();
  const bool keep_dims = o && o->keep_dims;
  Shape kept_shape, out_shape;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    if (reduced[d]) {
      count *= in.dim(d);
      kept_shape.push_back(1);
      if (keep_dims) out_shape.push_back(1);
    } else {
      kept_shape.push_back(in.dim(d));
      out_shape.push_back(in.dim(d));
    }
  }
  s->count = count;
  // The block form: the dims longer than 1 are kept, then reduced, then
  // kept, in that order.
  int stage = 0;  // 0: outer kept dims, 1: reduced, 2: inner kept
  bool block = true;
  s->outer = s->inner = 1;
  for (int d = 0; d < rank; ++d) {
    if (in.dim(d) == 1) continue;
    if (reduced[d]) {
      if (stage == 2) block = false;
      stage = 1;
    } else if (stage == 0) {
      s->outer *= in.dim(d);
    } else {
      stage = 2;
      s->inner *= in.dim(d);
    }
  }
  s->block = block && s->inner >= 8 && count > 1;
  const Shape* operands[] = {&in.shape, &kept_shape};
  GRAFT_ASSIGN_OR_RETURN(s->plan, MakeBroadcastPlan(in.shape, operands));
  ctx.SetReductionLength(count);
  return ctx.SetOutputShape(0, std::move(out_shape));
}

template <ReduceKind kKind>
absl::Status PrepareReduce(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axes, RequiredInput(ctx, 1));
  const tfl::TensorType t = in->type;
  if (ctx.output(0)->type != t ||
      IsQuantized(*in)) {
    return ctx.Unsupported();
  }
  constexpr bool kLogical =
      kKind == ReduceKind::kAny || kKind == ReduceKind::kAll;
  if constexpr (kLogical) {
    if (t != tfl::TensorType_BOOL) return ctx.Unsupported();
    ctx.SetEval(EvalReduce<bool, kKind>);
  } else {
    if (t == tfl::TensorType_FLOAT32) {
      ctx.SetEval(EvalReduce<float, kKind>);
    } else if (t == tfl::TensorType_INT32) {
      ctx.SetEval(EvalReduce<int32_t, kKind>);
    } else if (t == tfl::TensorType_INT64) {
      ctx.SetEval(EvalReduce<int64_t, kKind>);
    } else {
      return ctx.Unsupported();
    }
  }
  if (!ctx.ValuesKnown(axes)) return ctx.DeferToRun();
  return PrepareReduction(ctx, *in, *axes, MakeState<ReduceState>(ctx));
}

// Quantized MEAN / SUM.
struct QuantizedSumState : ReduceState {
  int32_t in_zero_point = 0, out_zero_point = 0;
  QuantizedMultiplier multiplier;
  int32_t out_min = 0, out_max = 0;
};

// Adds each input element into its output's uint32 sum (TFLite's int32
// sums, wrapping; integer sums are the same in any order).
template <typename T>
struct WrappingSumOp {
  static uint32_t Apply(uint32_t acc, T v) {
    return acc + static_cast<uint32_t>(v);
  }
};

template <typename T>
GRAFT_SIMD_INLINE void AccumulateQuantized(const ReduceState& s, const T* in,
                                           uint32_t* acc) {
  CombineRuns<T, uint32_t, WrappingSumOp<T>>(s, in, acc);
}

// Sum i rescaled into out[i], i in [begin, end): MultiplyByQuantizedMultiplier
// on sum - zero_sum, plus the output zero point, clamped.
template <typename T>
void RescaleSums(const QuantizedSumState& s, const uint32_t* acc,
                 uint32_t zero_sum, int64_t begin, int64_t end, T* out) {
  for (int64_t i = begin; i < end; ++i) {
    const int32_t shifted = static_cast<int32_t>(acc[i] - zero_sum);
    const int32_t v =
        MultiplyByQuantizedMultiplier(shifted, s.multiplier) + s.out_zero_point;
    out[i] = static_cast<T>(std::min(s.out_max, std::max(s.out_min, v)));
  }
}

CallCounter g_quantized_sum_calls[2];

#if GRAFT_HAVE_AVX2_FMA_BUILD
// The sums in the AVX2 build (global pooling's block loop vectorized:
// 8 inputs widened and added at a time, the same wrapping sums).
template <typename T>
GRAFT_AVX2_FMA_TARGET __attribute__((flatten)) void AccumulateQuantizedAvx2(
    const ReduceState& s, const T* in, uint32_t* acc) {
  AccumulateQuantized(s, in, acc);
}

// RescaleSums 8 sums at a time (MultiplyByQuantizedMultiplierAvx2: the
// same integer operations, so the same results), the rest one by one.
template <typename T>
GRAFT_AVX2_FMA_TARGET void RescaleSumsAvx2(const QuantizedSumState& s,
                                           const uint32_t* acc,
                                           uint32_t zero_sum, int64_t n,
                                           T* out) {
  const __m256i zs = _mm256_set1_epi32(static_cast<int32_t>(zero_sum));
  const __m256i zo = _mm256_set1_epi32(s.out_zero_point);
  const __m256i lo = _mm256_set1_epi32(s.out_min);
  const __m256i hi = _mm256_set1_epi32(s.out_max);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_sub_epi32(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i)), zs);
    __m256i v =
        _mm256_add_epi32(MultiplyByQuantizedMultiplierAvx2(
                             x, s.multiplier.multiplier, s.multiplier.shift),
                         zo);
    v = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), v);
    for (int j = 0; j < 8; ++j) out[i + j] = static_cast<T>(lanes[j]);
  }
  RescaleSums(s, acc, zero_sum, i, n, out);
}
#endif

template <typename T>
absl::Status EvalQuantizedMeanOrSum(EvalContext& ctx) {
  const QuantizedSumState& s = *ctx.state<QuantizedSumState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int64_t out_n = ctx.output(0)->num_elements();
  if (s.count == 0) {  // an empty reduction: TFLite writes zeros
    std::fill(out, out + out_n, T{0});
    return absl::OkStatus();
  }
  // TFLite accumulates in int32 with wrap-around: uint32 arithmetic.
  uint32_t* acc = ctx.scratch_as<uint32_t>();
  std::fill(acc, acc + out_n, 0u);
  const uint32_t zero_sum =
      static_cast<uint32_t>(static_cast<int64_t>(s.in_zero_point) * s.count);
#if GRAFT_HAVE_AVX2_FMA_BUILD
  if (CpuHasAvx2Fma()) {
    g_quantized_sum_calls[1].fetch_add(1, std::memory_order_relaxed);
    AccumulateQuantizedAvx2(s, in, acc);
    RescaleSumsAvx2(s, acc, zero_sum, out_n, out);
    return absl::OkStatus();
  }
#endif
  g_quantized_sum_calls[0].fetch_add(1, std::memory_order_relaxed);
  AccumulateQuantized(s, in, acc);
  RescaleSums(s, acc, zero_sum, 0, out_n, out);
  return absl::OkStatus();
}

template <ReduceKind kKind>
absl::Status PrepareQuantizedMeanOrSum(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axes, RequiredInput(ctx, 1));
  const Tensor& out = *ctx.output(0);
  if (!IsQuantized(*in) || !IsQuantized(out) || out.type != in->type) {
    return ctx.Unsupported();
  }
  switch (in->type) {
    case tfl::TensorType_INT8:
      ctx.SetEval(EvalQuantizedMeanOrSum<int8_t>);
      break;
    case tfl::TensorType_UINT8:
      ctx.SetEval(EvalQuantizedMeanOrSum<uint8_t>);
      break;
    case tfl::TensorType_INT16:
      GRAFT_KERNEL_CHECK(ZeroPoint(*in) == 0 && ZeroPoint(out) == 0,
                         "INT16 input and output need zero points of 0");
      ctx.SetEval(EvalQuantizedMeanOrSum<int16_t>);
      break;
    default:
      return ctx.Unsupported();
  }
  if (!ctx.ValuesKnown(axes)) return ctx.DeferToRun();
  auto* s = MakeState<QuantizedSumState>(ctx);
  GRAFT_RETURN_IF_ERROR(PrepareReduction(ctx, *in, *axes, s));
  s->in_zero_point = ZeroPoint(*in);
  s->out_zero_point = ZeroPoint(out);
  TypeRange(out.type, &s->out_min, &s->out_max);
  s->multiplier = QuantizeMultiplier(static_cast<double>(Scale(*in)) /
                                     static_cast<double>(Scale(out)));
  if (kKind == ReduceKind::kMean && s->count > 0) {
    // TFLite folds 1/count into the multiplier: shift it left by
    // floor(log2(count)) bits (at most 32, and keeping the total shift
    // >= -31), then divide by count in integers.
    int shift = 0;
    while ((s->count >> (shift + 1)) != 0) ++shift;
    shift = std::min(shift, 32);
    shift = std::min(shift, 31 + s->multiplier.shift);
    s->multiplier.multiplier = static_cast<int32_t>(
        (static_cast<int64_t>(s->multiplier.multiplier) << shift) /
        s->count);
    s->multiplier.shift -= shift;
  }
  ctx.RequestScratch(sizeof(uint32_t) *
                     static_cast<size_t>(ctx.output(0)->num_elements()));
  return absl::OkStatus();
}

// Quantized REDUCE_MAX / REDUCE_MIN: the integers themselves, when the
// output reads them as the input does.
template <ReduceKind kKind>
absl::Status PrepareQuantizedExtreme(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axes, RequiredInput(ctx, 1));
  const Tensor& out = *ctx.output(0);
  if (!IsQuantized(*in) || out.type != in->type) return ctx.Unsupported();
  // TFLite fails such a model; say why at load.
  GRAFT_KERNEL_CHECK(SameQuantization(*in, out),
                     "a quantized max/min needs the output's scale and zero "
                     "point equal to the input's");
  switch (in->type) {
    case tfl::TensorType_INT8:
      ctx.SetEval(EvalReduce<int8_t, kKind>);
      break;
    case tfl::TensorType_UINT8:
      ctx.SetEval(EvalReduce<uint8_t, kKind>);
      break;
    case tfl::TensorType_INT16:
      ctx.SetEval(EvalReduce<int16_t, kKind>);
      break;
    default:
      return ctx.Unsupported();
  }
  if (!ctx.ValuesKnown(axes)) return ctx.DeferToRun();
  return PrepareReduction(ctx, *in, *axes, MakeState<ReduceState>(ctx));
}

absl::Status PrepareMeanQuantized(PrepareContext& ctx) {
  return PrepareQuantizedMeanOrSum<ReduceKind::kMean>(ctx);
}
absl::Status PrepareSumQuantized(PrepareContext& ctx) {
  return PrepareQuantizedMeanOrSum<ReduceKind::kSum>(ctx);
}
absl::Status PrepareReduceMaxQuantized(PrepareContext& ctx) {
  return PrepareQuantizedExtreme<ReduceKind::kMax>(ctx);
}
absl::Status PrepareReduceMinQuantized(PrepareContext& ctx) {
  return PrepareQuantizedExtreme<ReduceKind::kMin>(ctx);
}

absl::Status PrepareMean(PrepareContext& ctx) {
  return PrepareReduce<ReduceKind::kMean>(ctx);
}
absl::Status PrepareSum(PrepareContext& ctx) {
  return PrepareReduce<ReduceKind::kSum>(ctx);
}
absl::Status PrepareReduceProd(PrepareContext& ctx) {
  return PrepareReduce<ReduceKind::kProd>(ctx);
}
absl::Status PrepareReduceMax(PrepareContext& ctx) {
  return PrepareReduce<ReduceKind::kMax>(ctx);
}
absl::Status PrepareReduceMin(PrepareContext& ctx) {
  return PrepareReduce<ReduceKind::kMin>(ctx);
}
absl::Status PrepareReduceAny(PrepareContext& ctx) {
  return PrepareReduce<ReduceKind::kAny>(ctx);
}
absl::Status PrepareReduceAll(PrepareContext& ctx) {
  return PrepareReduce<ReduceKind::kAll>(ctx);
}

// ARG_MAX / ARG_MIN: the first index of the extreme value along one axis.
struct ArgState : KernelState {
  int64_t outer, axis_len, inner;
};

template <typename T, typename Index, bool kMax>
absl::Status EvalArg(EvalContext& ctx) {
  const ArgState& s = *ctx.state<ArgState>();
  const T* in = ctx.input(0)->data<T>();
  Index* out = ctx.output(0)->data<Index>();
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      const T* p = in + o * s.axis_len * s.inner + i;
      T best = p[0];
      Index best_idx = 0;
      for (int64_t a = 1; a < s.axis_len; ++a) {
        T v = p[a * s.inner];
        if (kMax ? v > best : v < best) {
          best = v;
          best_idx = static_cast<Index>(a);
        }
      }
      out[o * s.inner + i] = best_idx;
    }
  }
  return absl::OkStatus();
}

template <typename T, bool kMax>
EvalFn ArgFn(tfl::TensorType index_type) {
  return index_type == tfl::TensorType_INT32 ? EvalArg<T, int32_t, kMax>
                                             : EvalArg<T, int64_t, kMax>;
}

template <bool kMax>
absl::Status PrepareArg(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* axis_t, RequiredInput(ctx, 1));
  const tfl::TensorType it = ctx.output(0)->type;
  if (!IsIntegerIndexType(it)) return ctx.Unsupported();
  switch (in->type) {
    case tfl::TensorType_FLOAT32:
      ctx.SetEval(ArgFn<float, kMax>(it));
      break;
    case tfl::TensorType_INT32:
      ctx.SetEval(ArgFn<int32_t, kMax>(it));
      break;
    case tfl::TensorType_INT64:
      ctx.SetEval(ArgFn<int64_t, kMax>(it));
      break;
    default:
      return ctx.Unsupported();
  }
  if (!ctx.ValuesKnown(axis_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ReadIntValues(*axis_t));
  GRAFT_KERNEL_CHECK(axis_v.size() == 1, "axis must hold one value");
  GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(axis_v[0], in->rank()));
  auto* s = MakeState<ArgState>(ctx);
  s->outer = DimProduct(in->shape, 0, axis);
  s->axis_len = in->dim(axis);
  s->inner = DimProduct(in->shape, axis + 1, in->rank());
  GRAFT_KERNEL_CHECK(s->axis_len > 0, "cannot reduce an empty axis");
  Shape out = in->shape;
  out.erase(out.begin() + axis);
  return ctx.SetOutputShape(0, std::move(out));
}

absl::Status PrepareArgMax(PrepareContext& ctx) { return PrepareArg<true>(ctx); }
absl::Status PrepareArgMin(PrepareContext& ctx) {
  return PrepareArg<false>(ctx);
}

}  // namespace

int64_t FloatReduceCallsForTesting(CpuIsa path) {
  const int i = static_cast<int>(path);
  return i < 2 ? g_float_reduce_calls[i].load(std::memory_order_relaxed) : 0;
}

int64_t QuantizedSumCallsForTesting(CpuIsa path) {
  const int i = static_cast<int>(path);
  return i < 2 ? g_quantized_sum_calls[i].load(std::memory_order_relaxed) : 0;
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(Mean);
GRAFT_DEFINE_KERNEL(Sum);
GRAFT_DEFINE_KERNEL(ReduceProd);
GRAFT_DEFINE_KERNEL(ReduceMax);
GRAFT_DEFINE_KERNEL(ReduceMin);
GRAFT_DEFINE_KERNEL(ReduceAny);
GRAFT_DEFINE_KERNEL(ReduceAll);
GRAFT_DEFINE_KERNEL(ArgMax);
GRAFT_DEFINE_KERNEL(ArgMin);
GRAFT_DEFINE_KERNEL(MeanQuantized);
GRAFT_DEFINE_KERNEL(SumQuantized);
GRAFT_DEFINE_KERNEL(ReduceMaxQuantized);
GRAFT_DEFINE_KERNEL(ReduceMinQuantized);

}  // namespace graft
