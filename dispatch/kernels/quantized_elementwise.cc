// Quantized ADD, SUB and MUL (INT8, UINT8, INT16), SQUARED_DIFFERENCE
// (INT8) and PRELU (INT8, UINT8) with TFLite's integer semantics
// (reference_ops::Add/Sub general path, reference_integer_ops::Mul,
// squared_difference.cc: both inputs rescaled with a left shift of 7, the
// difference squared, rescaled): ADD and SUB rescale both inputs to a common
// fixed-point scale with a left shift of 20 bits (15 for INT16, as TFLite and
// TFLite Micro do for the general-scale INT16 path), add, then rescale to the
// output.
//
// TFLite's INT16 ADD/SUB has a second path for power-of-two scales with
// zero zero points (pot_scale_int16); TFLite Micro never takes it and the
// general path is what this kernel implements.
//
// PRELU (INT8, UINT8): TFLite's reference_ops::BroadcastPrelu4DSlow: with
// x = input - its zero point, x >= 0 is rescaled by input scale / output
// scale, else x * (alpha - its zero point) by input scale * alpha scale /
// output scale (both multipliers computed in float, as TFLite's Prepare
// does), plus the output zero point, clamped to the type.
//
// 8-bit inputs take 256 values each, so what each input contributes (its
// rescaled value; for MUL, the value minus its zero point) is tabulated at
// prepare, and the runs of the broadcast plan where an operand is
// contiguous or fixed get loops of their own: one rescale per element
// instead of three, the same arithmetic, so the same bits. Where both
// operands are contiguous, the AVX2 build gathers 16 contributions at a
// time from the tables and rescales them with the 8-bit GEMM's vector
// requantization (quantized_gemm.h), again the same integer operations.
// With AVX-512 VBMI (KernelHasAvx512Vbmi) the tables are kept as four
// planes of 256 bytes (byte j of every entry), and 64 contributions are
// looked up at a time with two vpermi2b per plane (the index's top bit
// picks the half), interleaved back into int32 lanes, combined, rescaled
// (the GEMM's AVX-512 forms, the short ones where QGemmPrepareRequant
// finds them exact and every combined value lies in (-2^30, 2^30)) and
// packed with saturation; the last partial block is masked. ADD and SUB
// whose activation's lower bound is at least the output zero point (RELU,
// for one) skip the rescale there: the output is then
// clamp(X[a] + Y[b] + [rank2[b] > rank1[a]]) for three bytes tabulated
// per input value (PrepareSplitSum derives it), 16-bit sums from six
// lookups, bit-exact and 2x faster (resnet_cnn_int8's residual ADDs). An
// 8-bit op
// whose inputs have the same shape also runs piecewise (EvalQBinary8Range),
// fused into the convolution that writes an input.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "dispatch/kernels/quantized_gemm.h"

namespace graft {
namespace kernels {
namespace {

enum class QOp { kAdd, kSub, kMul, kSquaredDifference };

struct QBinaryState : KernelState {
  BroadcastPlan plan;
  int32_t in1_offset = 0, in2_offset = 0, out_offset = 0;
  int left_shift = 0;
  QuantizedMultiplier in1_mult, in2_mult, out_mult;
  int32_t act_min = 0, act_max = 0;
  // 8-bit types: Input1(x) and Input2(y) by the raw value (as uint8_t).
  std::array<int32_t, 256> table1{}, table2{};
  // 8-bit types on an AVX2 CPU: out_mult, offset and clamp in 16 equal
  // lanes for RequantizeAvx2.
  bool avx2 = false;
  QGemmRequant out_rq;
  // 8-bit types with AVX-512 VBMI: byte j of table1[v] at planes1[j * 256 +
  // v], the same for table2.
  bool vbmi = false;
  std::array<uint8_t, 4 * 256> planes1{}, planes2{};
  // ADD and SUB with AVX-512 VBMI where PrepareSplitSum holds: the low
  // and high byte of X[v] and the byte rank[v] at split1[j * 256 + v]
  // (j = 0, 1, 2), the same for Y at split2.
  bool split = false;
  std::array<uint8_t, 3 * 256> split1{}, split2{};
};

CallCounter g_binary_calls[3];
CallCounter g_split_sum_calls;

void CountBinaryCall(CpuIsa path) {
  g_binary_calls[static_cast<int>(path)].fetch_add(1,
                                                  std::memory_order_relaxed);
}

// What input 1 (x) or 2 contributes: x minus its zero point for MUL, else
// that rescaled to the common fixed-point scale.
template <QOp kOp>
inline int32_t Contribution(int32_t x, int32_t offset, int left_shift,
                            const QuantizedMultiplier& mult) {
  if constexpr (kOp == QOp::kMul) {
    return offset + x;
  } else {
    return MultiplyByQuantizedMultiplier((offset + x) * (1 << left_shift),
                                         mult);
  }
}

// The output from both contributions.
template <typename T, QOp kOp>
inline T Combine(const QBinaryState& s, int32_t a, int32_t b) {
  int32_t v;
  if constexpr (kOp == QOp::kMul) {
    v = a * b;
  } else {
    const int32_t sum = kOp == QOp::kAdd ? a + b : a - b;
    v = kOp == QOp::kSquaredDifference ? sum * sum : sum;
  }
  const int32_t raw = s.out_offset + MultiplyByQuantizedMultiplier(v, s.out_mult);
  return static_cast<T>(std::min(s.act_max, std::max(s.act_min, raw)));
}

// INT16: contributions computed per element.
template <typename T, QOp kOp>
absl::Status EvalQBinary(EvalContext& ctx) {
  const auto& s = *ctx.state<QBinaryState>();
  const T* a = ctx.input(0)->data<T>();
  const T* b = ctx.input(1)->data<T>();
  T* out = ctx.output(0)->data<T>();
  ForEachBroadcastRun(s.plan, [&](int64_t o, const int64_t* off, int64_t n,
                                  const int64_t* st) {
    const T* pa = a + off[0];
    const T* pb = b + off[1];
    T* po = out + o;
    for (int64_t i = 0; i < n; ++i) {
      po[i] = Combine<T, kOp>(
          s,
          Contribution<kOp>(pa[i * st[0]], s.in1_offset, s.left_shift,
                            s.in1_mult),
          Contribution<kOp>(pb[i * st[1]], s.in2_offset, s.left_shift,
                            s.in2_mult));
    }
  });
  return absl::OkStatus();
}

#if GRAFT_QGEMM_AVX2
// The contributions of the 8 8-bit values at p, from table t.
template <typename T>
__attribute__((target("avx2"), always_inline)) inline __m256i Gather8(
    const int32_t* t, const T* p) {
  const __m256i index = _mm256_cvtepu8_epi32(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return _mm256_i32gather_epi32(t, index, 4);
}

// Combine's integer operation before the rescale, on 8 lanes.
template <QOp kOp>
__attribute__((target("avx2"), always_inline)) inline __m256i CombineAvx2(
    __m256i a, __m256i b) {
  if constexpr (kOp == QOp::kMul) return _mm256_mullo_epi32(a, b);
  if constexpr (kOp == QOp::kAdd) return _mm256_add_epi32(a, b);
  const __m256i d = _mm256_sub_epi32(a, b);
  if constexpr (kOp == QOp::kSquaredDifference) {
    return _mm256_mullo_epi32(d, d);
  }
  return d;
}

// Both operands contiguous, 16 outputs at a time; returns how many it
// wrote (the caller finishes the run).
template <typename T, QOp kOp>
__attribute__((target("avx2"))) int64_t CombineRunAvx2(const QBinaryState& s,
                                                       const T* pa, const T* pb,
                                                       T* po, int64_t n) {
  const int32_t* t1 = s.table1.data();
  const int32_t* t2 = s.table2.data();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i lo =
        CombineAvx2<kOp>(Gather8(t1, pa + i), Gather8(t2, pb + i));
    const __m256i hi =
        CombineAvx2<kOp>(Gather8(t1, pa + i + 8), Gather8(t2, pb + i + 8));
    StoreBytesAvx2(RequantizeAvx2(s.out_rq, lo, 0),
                   RequantizeAvx2(s.out_rq, hi, 8), 16,
                   reinterpret_cast<uint8_t*>(po + i));
  }
  return i;
}

#define GRAFT_VBMI_TARGET                                                  \
  __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq,"    \
                        "avx512vnni,avx512vbmi")))
#define GRAFT_VBMI_INLINE GRAFT_VBMI_TARGET inline __attribute__((always_inline))

// Byte j of the contributions of the 64 raw values x from plane j (256
// bytes): entries 0-127 and 128-255 looked up by x's low 7 bits, x's top
// bit (`high`) choosing between them.
GRAFT_VBMI_INLINE __m512i PlaneLookup(const uint8_t* plane, __m512i x,
                                      __mmask64 high) {
  const __m512i lo = _mm512_permutex2var_epi8(_mm512_loadu_si512(plane), x,
                                              _mm512_loadu_si512(plane + 64));
  const __m512i hi = _mm512_permutex2var_epi8(
      _mm512_loadu_si512(plane + 128), x, _mm512_loadu_si512(plane + 192));
  return _mm512_mask_blend_epi8(high, lo, hi);
}

// The 64 contributions of x as four vectors of int32, in the order the
// in-lane unpacks leave them: vector q holds, in each 128-bit lane L, the
// contributions of x's bytes 16L + 4q .. 16L + 4q + 3. PackBytes undoes it.
struct Contributions64 {
  __m512i q0, q1, q2, q3;
};

GRAFT_VBMI_INLINE Contributions64 LookUp64(const uint8_t* planes, __m512i x) {
  const __mmask64 high = _mm512_movepi8_mask(x);
  const __m512i b0 = PlaneLookup(planes, x, high);
  const __m512i b1 = PlaneLookup(planes + 256, x, high);
  const __m512i b2 = PlaneLookup(planes + 512, x, high);
  const __m512i b3 = PlaneLookup(planes + 768, x, high);
  const __m512i lo01 = _mm512_unpacklo_epi8(b0, b1);  // bytes 0-7 of a lane
  const __m512i hi01 = _mm512_unpackhi_epi8(b0, b1);  // bytes 8-15
  const __m512i lo23 = _mm512_unpacklo_epi8(b2, b3);
  const __m512i hi23 = _mm512_unpackhi_epi8(b2, b3);
  return {_mm512_unpacklo_epi16(lo01, lo23), _mm512_unpackhi_epi16(lo01, lo23),
          _mm512_unpacklo_epi16(hi01, hi23), _mm512_unpackhi_epi16(hi01, hi23)};
}

// CombineAvx2 on 16 lanes.
template <QOp kOp>
GRAFT_VBMI_INLINE __m512i Combine16(__m512i a, __m512i b) {
  if constexpr (kOp == QOp::kMul) return _mm512_mullo_epi32(a, b);
  if constexpr (kOp == QOp::kAdd) return _mm512_add_epi32(a, b);
  const __m512i d = _mm512_sub_epi32(a, b);
  if constexpr (kOp == QOp::kSquaredDifference) {
    return _mm512_mullo_epi32(d, d);
  }
  return d;
}

// The output of 16 combined values, plus the output offset; clamped to the
// activation range only in the general form (PackBytes clamps).
GRAFT_VBMI_INLINE __m512i Rescale16(const Requant16& r, __m512i v) {
  if (r.small_sums) return RequantDoubleSmallAvx512(r, v);
  if (r.fast_double) return RequantDoubleFastAvx512(r, v);
  return RequantDoubleAvx512(r, v);
}

// The 64 output values (Contributions64's order) as bytes in element
// order: the in-lane packs invert the unpacks. Saturating to the type and
// then clamping the bytes to the activation range gives the bytes that
// clamping the int32 values would (saturation is monotone and keeps the
// type's range, which holds the activation range).
template <typename T>
GRAFT_VBMI_INLINE __m512i PackBytes(const Requant16& r, __m512i v0, __m512i v1,
                                    __m512i v2, __m512i v3) {
  const __m512i w01 = _mm512_packs_epi32(v0, v1);  // bytes 0-7 of a lane
  const __m512i w23 = _mm512_packs_epi32(v2, v3);  // bytes 8-15
  if constexpr (std::is_same_v<T, int8_t>) {
    const __m512i b = _mm512_packs_epi16(w01, w23);
    return _mm512_min_epi8(_mm512_max_epi8(b, r.act_min8), r.act_max8);
  } else {
    const __m512i b = _mm512_packus_epi16(w01, w23);
    return _mm512_min_epu8(_mm512_max_epu8(b, r.act_min8), r.act_max8);
  }
}

// Both operands contiguous: all n outputs, 64 at a time, the last block
// masked (its missing inputs read as 0, a valid index; not stored).
template <typename T, QOp kOp>
GRAFT_VBMI_TARGET void CombineRunVbmi(const QBinaryState& s, const T* pa,
                                      const T* pb, T* po, int64_t n) {
  const Requant16 r = LoadRequant16(s.out_rq, 0, nullptr);
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m = n - i >= 64 ? ~__mmask64{0}
                                    : (__mmask64{1} << (n - i)) - 1;
    const Contributions64 a =
        LookUp64(s.planes1.data(), _mm512_maskz_loadu_epi8(m, pa + i));
    const Contributions64 b =
        LookUp64(s.planes2.data(), _mm512_maskz_loadu_epi8(m, pb + i));
    const __m512i bytes = PackBytes<T>(
        r, Rescale16(r, Combine16<kOp>(a.q0, b.q0)),
        Rescale16(r, Combine16<kOp>(a.q1, b.q1)),
        Rescale16(r, Combine16<kOp>(a.q2, b.q2)),
        Rescale16(r, Combine16<kOp>(a.q3, b.q3)));
    _mm512_mask_storeu_epi8(po + i, m, bytes);
  }
}

// ADD and SUB where s.split holds (PrepareSplitSum): all n outputs, 64 at a
// time, as clamp(X[a] + Y[b] + [rank2[b] > rank1[a]]) in 16-bit lanes; the
// last block masked as in CombineRunVbmi.
template <typename T>
GRAFT_VBMI_TARGET void SplitSumRunVbmi(const QBinaryState& s, const T* pa,
                                       const T* pb, T* po, int64_t n) {
  const __m512i act_min = _mm512_set1_epi8(static_cast<char>(s.act_min));
  const __m512i act_max = _mm512_set1_epi8(static_cast<char>(s.act_max));
  const __m512i one = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
  const uint8_t* p1 = s.split1.data();
  const uint8_t* p2 = s.split2.data();
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 m =
        n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i a = _mm512_maskz_loadu_epi8(m, pa + i);
    const __m512i b = _mm512_maskz_loadu_epi8(m, pb + i);
    const __mmask64 ha = _mm512_movepi8_mask(a), hb = _mm512_movepi8_mask(b);
    const __m512i x_lo = PlaneLookup(p1, a, ha);
    const __m512i x_hi = PlaneLookup(p1 + 256, a, ha);
    const __m512i y_lo = PlaneLookup(p2, b, hb);
    const __m512i y_hi = PlaneLookup(p2 + 256, b, hb);
    const __m512i carry = _mm512_maskz_mov_epi8(
        _mm512_cmpgt_epu8_mask(PlaneLookup(p2 + 512, b, hb),
                               PlaneLookup(p1 + 512, a, ha)),
        one);
    // Bytes 0-7 of each 128-bit lane as int16, then bytes 8-15; the pack
    // below puts them back in order.
    const __m512i sum_lo =
        _mm512_add_epi16(_mm512_add_epi16(_mm512_unpacklo_epi8(x_lo, x_hi),
                                          _mm512_unpacklo_epi8(y_lo, y_hi)),
                         _mm512_unpacklo_epi8(carry, zero));
    const __m512i sum_hi =
        _mm512_add_epi16(_mm512_add_epi16(_mm512_unpackhi_epi8(x_lo, x_hi),
                                          _mm512_unpackhi_epi8(y_lo, y_hi)),
                         _mm512_unpackhi_epi8(carry, zero));
    __m512i bytes;
    if constexpr (std::is_same_v<T, int8_t>) {
      bytes = _mm512_min_epi8(
          _mm512_max_epi8(_mm512_packs_epi16(sum_lo, sum_hi), act_min),
          act_max);
    } else {
      bytes = _mm512_min_epu8(
          _mm512_max_epu8(_mm512_packus_epi16(sum_lo, sum_hi), act_min),
          act_max);
    }
    _mm512_mask_storeu_epi8(po + i, m, bytes);
  }
}
#endif

// 8-bit types: n outputs at po from the operands at pa and pb, stepping
// sa and sb elements; contributions from the tables; a contiguous or a
// fixed operand gets its own loop.
template <typename T, QOp kOp>
void QBinary8Run(const QBinaryState& s, const T* pa, int64_t sa, const T* pb,
                 int64_t sb, T* po, int64_t n) {
  const int32_t* t1 = s.table1.data();
  const int32_t* t2 = s.table2.data();
  auto u8 = [](T v) { return static_cast<uint8_t>(v); };
  if (sa == 1 && sb == 1) {
    int64_t i = 0;
#if GRAFT_QGEMM_AVX2
    if constexpr (kOp == QOp::kAdd || kOp == QOp::kSub) {
      if (s.split) {
        SplitSumRunVbmi<T>(s, pa, pb, po, n);
        return;
      }
    }
    if (s.vbmi) {
      CombineRunVbmi<T, kOp>(s, pa, pb, po, n);
      return;
    }
    if (s.avx2) i = CombineRunAvx2<T, kOp>(s, pa, pb, po, n);
#endif
    for (; i < n; ++i) {
      po[i] = Combine<T, kOp>(s, t1[u8(pa[i])], t2[u8(pb[i])]);
    }
  } else if (sa == 1 && sb == 0) {
    const int32_t y = t2[u8(pb[0])];
    for (int64_t i = 0; i < n; ++i) po[i] = Combine<T, kOp>(s, t1[u8(pa[i])], y);
  } else if (sa == 0 && sb == 1) {
    const int32_t x = t1[u8(pa[0])];
    for (int64_t i = 0; i < n; ++i) po[i] = Combine<T, kOp>(s, x, t2[u8(pb[i])]);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      po[i] = Combine<T, kOp>(s, t1[u8(pa[i * sa])], t2[u8(pb[i * sb])]);
    }
  }
}

template <typename T, QOp kOp>
absl::Status EvalQBinary8(EvalContext& ctx) {
  const auto& s = *ctx.state<QBinaryState>();
  const T* a = ctx.input(0)->data<T>();
  const T* b = ctx.input(1)->data<T>();
  T* out = ctx.output(0)->data<T>();
  auto run = [&](int64_t o, const int64_t* off, int64_t n,
                 const int64_t* st) {
    QBinary8Run<T, kOp>(s, a + off[0], st[0], b + off[1], st[1], out + o, n);
  };
  if (s.split) g_split_sum_calls.fetch_add(1, std::memory_order_relaxed);
  CountBinaryCall(s.vbmi   ? CpuIsa::kAvx512Vnni
                  : s.avx2 ? CpuIsa::kAvx2
                           : CpuIsa::kBaseline);
  ParallelForBroadcastRuns(ctx.thread_pool(), s.plan,
                           [&](int64_t begin, int64_t end) {
                             ForEachBroadcastRunIn(s.plan, begin, end, run);
                           });
  return absl::OkStatus();
}

// The piecewise form where both inputs have the output's shape
// (PrepareContext::SetRangeEval): elements [begin, end), one run.
template <typename T, QOp kOp>
void EvalQBinary8Range(EvalContext& ctx, int64_t begin, int64_t end) {
  const auto& s = *ctx.state<QBinaryState>();
  QBinary8Run<T, kOp>(s, ctx.input(0)->data<T>() + begin, 1,
                      ctx.input(1)->data<T>() + begin, 1,
                      ctx.output(0)->data<T>() + begin, end - begin);
}

tfl::ActivationFunctionType FusedActivation(const tfl::OperatorT& op) {
  const auto& o = op.builtin_options;
  if (auto* x = o.AsAddOptions()) return x->fused_activation_function;
  if (auto* x = o.AsSubOptions()) return x->fused_activation_function;
  if (auto* x = o.AsMulOptions()) return x->fused_activation_function;
  return tfl::ActivationFunctionType_NONE;
}

// ADD and SUB (`negate`: y is minus input 2's contribution) as a sum of
// lookups, for SplitSumRunVbmi. With the contributions x = table1[a] and
// y = +-table2[b], the reference output is o + MultiplyByQuantizedMultiplier
// (x + y, m, -sh); for sh in [1, 30] that is (RequantDoubleFastAvx512,
// quantized_gemm.h)
//   o + floor((A + B - [(x + y) * m < -2^30] * 2^31) / 2^K),  K = 31 + sh,
// with A = x * m + 2^30 + 2^(30 + sh) and B = y * m exact in int64. For
// x + y < 0 the numerator stays below 2^K (m > 0), so both that and the
// value without the [.] term are at most o: where the activation's lower
// bound is at least o (RELU, RELU6, or no activation and the type's
// lowest output zero point), the clamp makes them equal and the output is
// clamp(o + floor((A + B) / 2^K)). Splitting A = Ahi * 2^K + Alo and B
// alike (0 <= lo < 2^K),
//   floor((A + B) / 2^K) = Ahi + Bhi + [Blo >= 2^K - Alo],
// and the bracket compares Blo's rank among B's distinct lo values,
// rank2[b], with the count of those below 2^K - Alo[a], less one:
// rank1[a]; a count of zero means always, folded into X as + 1 with
// rank1 = 255, which no rank exceeds. So with X = o + Ahi (+ 1) and
// Y = Bhi the output is clamp(X[a] + Y[b] + [rank2[b] > rank1[a]]), in
// int16 where |X| and |Y| stay below 2^14. Where a condition fails, the
// state stays as it was (s->split false).
void PrepareSplitSum(bool negate, QBinaryState* s) {
  const int64_t m = s->out_mult.multiplier;
  const int sh = -s->out_mult.shift;
  if (m <= 0 || sh < 1 || sh > 30 || s->act_min < s->out_offset) return;
  const int k = 31 + sh;
  const int64_t lo_mask = (int64_t{1} << k) - 1;
  const int64_t base = (int64_t{1} << 30) + (int64_t{1} << (30 + sh));
  std::array<int64_t, 256> a_hi, a_lo, b_hi, b_lo;
  for (int v = 0; v < 256; ++v) {
    const int64_t x = s->table1[v];
    const int64_t y = negate ? -int64_t{s->table2[v]} : s->table2[v];
    // |x|, |y| < 2^30 keeps A and B inside int64 and x + y inside int32.
    if (std::abs(x) >= (int64_t{1} << 30) ||
        std::abs(y) >= (int64_t{1} << 30)) {
      return;
    }
    const int64_t a = x * m + base, b = y * m;
    a_hi[v] = a >> k, a_lo[v] = a & lo_mask;
    b_hi[v] = b >> k, b_lo[v] = b & lo_mask;
  }
  std::vector<int64_t> distinct(b_lo.begin(), b_lo.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  auto count_below = [&](int64_t v) {
    return std::lower_bound(distinct.begin(), distinct.end(), v) -
           distinct.begin();
  };
  constexpr int64_t kLimit = int64_t{1} << 14;
  std::array<uint8_t, 3 * 256> split1, split2;
  for (int v = 0; v < 256; ++v) {
    const int64_t below = count_below((int64_t{1} << k) - a_lo[v]);
    const int64_t x = s->out_offset + a_hi[v] + (below == 0 ? 1 : 0);
    const int64_t rank1 = below == 0 ? 255 : below - 1;
    const int64_t y = b_hi[v];
    if (std::abs(x) >= kLimit || std::abs(y) >= kLimit) return;
    split1[v] = static_cast<uint8_t>(x);
    split1[256 + v] = static_cast<uint8_t>(x >> 8);
    split1[512 + v] = static_cast<uint8_t>(rank1);
    split2[v] = static_cast<uint8_t>(y);
    split2[256 + v] = static_cast<uint8_t>(y >> 8);
    split2[512 + v] = static_cast<uint8_t>(count_below(b_lo[v]));
  }
  s->split1 = split1;
  s->split2 = split2;
  s->split = true;
}

template <QOp kOp>
absl::Status PrepareQBinary(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1));
  const Tensor* out = ctx.output(0);
  const tfl::TensorType t = a->type;
  // TFLite's ADD gives its output the inputs' type whatever the model
  // declares (add.cc Prepare: output->type = input2->type), so a quantized
  // output declared FLOAT32 runs as that type (add_quantized*.bin).
  const bool out_params =
      out->quantization != nullptr && !out->quantization->scale.empty();
  const tfl::TensorType out_type =
      kOp == QOp::kAdd && out->type == tfl::TensorType_FLOAT32 && out_params
          ? t
          : out->type;
  if (b->type != t || out_type != t || !IsQuantized(*a) ||
      !IsQuantized(*b) || !out_params ||
      (t != tfl::TensorType_INT8 && t != tfl::TensorType_UINT8 &&
       t != tfl::TensorType_INT16) ||
      (kOp == QOp::kSquaredDifference && t != tfl::TensorType_INT8)) {
    return ctx.Unsupported();
  }
  GRAFT_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape, b->shape));
  if (out_type != out->type) ctx.SetOutputType(0, out_type);
  auto* s = MakeState<QBinaryState>(ctx);
  const Shape* operands[] = {&a->shape, &b->shape};
  GRAFT_ASSIGN_OR_RETURN(s->plan, MakeBroadcastPlan(shape, operands));
  SplitLongRuns(&s->plan);
  GRAFT_RETURN_IF_ERROR(ctx.SetOutputShape(0, std::move(shape)));

  const float sa = Scale(*a), sb = Scale(*b), so = Scale(*out);
  s->in1_offset = -ZeroPoint(*a);
  s->in2_offset = -ZeroPoint(*b);
  s->out_offset = ZeroPoint(*out);
  if constexpr (kOp == QOp::kMul) {
    s->out_mult = QuantizeMultiplier(static_cast<double>(sa) *
                                     static_cast<double>(sb) /
                                     static_cast<double>(so));
  } else if constexpr (kOp == QOp::kSquaredDifference) {
    // 7: the largest squared shifted difference, 255^2 * 2^14, fits int32.
    s->left_shift = 7;
    const double twice_max = 2 * std::max(sa, sb);
    s->in1_mult = QuantizeMultiplier(sa / twice_max);
    s->in2_mult = QuantizeMultiplier(sb / twice_max);
    s->out_mult = QuantizeMultiplier(
        twice_max * twice_max /
        static_cast<double>((1 << (2 * s->left_shift)) * so));
  } else {
    s->left_shift = t == tfl::TensorType_INT16 ? 15 : 20;
    // As TFLite: 2 * max(float, float) is a float, widened to double.
    const double twice_max = 2 * std::max(sa, sb);
    s->in1_mult = QuantizeMultiplier(sa / twice_max);
    s->in2_mult = QuantizeMultiplier(sb / twice_max);
    s->out_mult = QuantizeMultiplier(
        twice_max / static_cast<double>((1 << s->left_shift) * so));
  }
  GRAFT_RETURN_IF_ERROR(ActivationRangeQuantized(FusedActivation(ctx.op()), t,
                                                 so, s->out_offset,
                                                 &s->act_min, &s->act_max));
  if (t == tfl::TensorType_INT16) {
    ctx.SetEval(EvalQBinary<int16_t, kOp>);
    return absl::OkStatus();
  }
  for (int v = 0; v < 256; ++v) {
    // The raw value whose bits are v, in the tensor's type.
    const int32_t x = t == tfl::TensorType_INT8 ? static_cast<int8_t>(v) : v;
    s->table1[v] = Contribution<kOp>(x, s->in1_offset, s->left_shift, s->in1_mult);
    s->table2[v] = Contribution<kOp>(x, s->in2_offset, s->left_shift, s->in2_mult);
  }
#if GRAFT_QGEMM_AVX2
  s->avx2 = KernelIsaAtLeast(CpuIsa::kAvx2);
  s->vbmi = KernelHasAvx512Vbmi();
#endif
  if (s->avx2) {
    QGemmPrepareRequant(std::vector<QuantizedMultiplier>(kQGemmNr, s->out_mult),
                        std::vector<int64_t>(kQGemmNr, 0), false, s->out_offset,
                        s->act_min, s->act_max, &s->out_rq);
    // The short rescale needs every combined value in (-2^30, 2^30): the
    // largest |x + y|, |x - y|, |x * y| or (x - y)^2 over two tables is
    // at a pair of their extremes.
    const auto [min1, max1] =
        std::minmax_element(s->table1.begin(), s->table1.end());
    const auto [min2, max2] =
        std::minmax_element(s->table2.begin(), s->table2.end());
    int64_t bound = 0;
    for (int64_t x : {int64_t{*min1}, int64_t{*max1}}) {
      for (int64_t y : {int64_t{*min2}, int64_t{*max2}}) {
        const int64_t d = x - y;
        const int64_t v = kOp == QOp::kAdd   ? x + y
                          : kOp == QOp::kSub ? d
                          : kOp == QOp::kMul ? x * y
                                             : d * d;
        bound = std::max(bound, std::abs(v));
      }
    }
    s->out_rq.small_sums =
        s->out_rq.fast_double && bound < (int64_t{1} << 30);
  }
  for (int v = 0; v < 256; ++v) {
    for (int j = 0; j < 4; ++j) {
      s->planes1[j * 256 + v] =
          static_cast<uint8_t>(static_cast<uint32_t>(s->table1[v]) >> (8 * j));
      s->planes2[j * 256 + v] =
          static_cast<uint8_t>(static_cast<uint32_t>(s->table2[v]) >> (8 * j));
    }
  }
  if ((kOp == QOp::kAdd || kOp == QOp::kSub) && s->vbmi) {
    PrepareSplitSum(kOp == QOp::kSub, s);
  }
  ctx.SetEval(t == tfl::TensorType_INT8 ? EvalQBinary8<int8_t, kOp>
                                        : EvalQBinary8<uint8_t, kOp>);
  if (a->shape == b->shape) {
    ctx.SetRangeEval(t == tfl::TensorType_INT8 ? EvalQBinary8Range<int8_t, kOp>
                                               : EvalQBinary8Range<uint8_t, kOp>);
  }
  return absl::OkStatus();
}

struct QPreluState : KernelState {
  BroadcastPlan plan;
  int32_t in_offset = 0, alpha_offset = 0, out_offset = 0;
  QuantizedMultiplier positive, negative;
};

template <typename T>
absl::Status EvalQPrelu(EvalContext& ctx) {
  const auto& s = *ctx.state<QPreluState>();
  const T* in = ctx.input(0)->data<T>();
  const T* alpha = ctx.input(1)->data<T>();
  T* out = ctx.output(0)->data<T>();
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  ForEachBroadcastRun(s.plan, [&](int64_t o, const int64_t* off, int64_t n,
                                  const int64_t* st) {
    const T* px = in + off[0];
    const T* pa = alpha + off[1];
    T* po = out + o;
    for (int64_t i = 0; i < n; ++i) {
      const int32_t x = s.in_offset + px[i * st[0]];
      const int32_t v =
          x >= 0 ? MultiplyByQuantizedMultiplier(x, s.positive)
                 : MultiplyByQuantizedMultiplier(
                       x * (s.alpha_offset + pa[i * st[1]]), s.negative);
      po[i] = static_cast<T>(std::min(kMax, std::max(kMin, v + s.out_offset)));
    }
  });
  return absl::OkStatus();
}

absl::Status PreparePreluQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* alpha, RequiredInput(ctx, 1));
  const Tensor* out = ctx.output(0);
  const tfl::TensorType t = in->type;
  if ((t != tfl::TensorType_INT8 && t != tfl::TensorType_UINT8) ||
      alpha->type != t || out->type != t || !IsQuantized(*in) ||
      !IsQuantized(*alpha) || !IsQuantized(*out)) {
    return ctx.Unsupported();
  }
  // alpha broadcasts to the input's shape, the output's.
  GRAFT_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(in->shape, alpha->shape));
  GRAFT_KERNEL_CHECK(shape == in->shape,
                     "alpha %s does not broadcast to the input's shape %s",
                     ShapeToString(alpha->shape), ShapeToString(in->shape));
  auto* s = MakeState<QPreluState>(ctx);
  const Shape* operands[] = {&in->shape, &alpha->shape};
  GRAFT_ASSIGN_OR_RETURN(s->plan, MakeBroadcastPlan(shape, operands));
  s->in_offset = -ZeroPoint(*in);
  s->alpha_offset = -ZeroPoint(*alpha);
  s->out_offset = ZeroPoint(*out);
  const float positive = Scale(*in) / Scale(*out);
  const float negative = Scale(*in) * Scale(*alpha) / Scale(*out);
  s->positive = QuantizeMultiplier(static_cast<double>(positive));
  s->negative = QuantizeMultiplier(static_cast<double>(negative));
  ctx.SetEval(t == tfl::TensorType_INT8 ? EvalQPrelu<int8_t>
                                        : EvalQPrelu<uint8_t>);
  return ctx.SetOutputShape(0, std::move(shape));
}

absl::Status PrepareAddQuantized(PrepareContext& ctx) {
  return PrepareQBinary<QOp::kAdd>(ctx);
}
absl::Status PrepareSubQuantized(PrepareContext& ctx) {
  return PrepareQBinary<QOp::kSub>(ctx);
}
absl::Status PrepareMulQuantized(PrepareContext& ctx) {
  return PrepareQBinary<QOp::kMul>(ctx);
}
absl::Status PrepareSquaredDifferenceQuantized(PrepareContext& ctx) {
  return PrepareQBinary<QOp::kSquaredDifference>(ctx);
}

}  // namespace

int64_t QuantizedBinaryCallsForTesting(CpuIsa path) {
  return g_binary_calls[static_cast<int>(path)].load(std::memory_order_relaxed);
}

int64_t QuantizedSplitSumCallsForTesting() {
  return g_split_sum_calls.load(std::memory_order_relaxed);
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(AddQuantized);
GRAFT_DEFINE_KERNEL(SubQuantized);
GRAFT_DEFINE_KERNEL(MulQuantized);
GRAFT_DEFINE_KERNEL(SquaredDifferenceQuantized);
GRAFT_DEFINE_KERNEL(PreluQuantized);

}  // namespace graft
