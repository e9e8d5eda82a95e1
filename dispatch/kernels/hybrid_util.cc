#include "dispatch/kernels/hybrid_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"
#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/quantized_gemm.h"

namespace graft {
namespace kernels {

absl::StatusOr<std::string> CheckHybridOp(
    const PrepareContext& ctx, const Tensor& in, const Tensor& w,
    std::initializer_list<tfl::TensorType> weight_types,
    tfl::ActivationFunctionType activation) {
  std::string types =
      absl::StrFormat("%s input with %s weights", TensorTypeName(in.type),
                      TensorTypeName(w.type));
  bool weights_ok = false;
  for (tfl::TensorType t : weight_types) weights_ok |= w.type == t;
  if (in.type != tfl::TensorType_FLOAT32 || !weights_ok ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(types);
  }
  const Tensor* bias = ctx.input(2);
  if (bias && bias->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(
        absl::StrFormat("%s and %s bias", types, TensorTypeName(bias->type)));
  }
  if (activation == tfl::ActivationFunctionType_TANH ||
      activation == tfl::ActivationFunctionType_SIGN_BIT) {
    return ctx.Unsupported(
        absl::StrFormat("%s and a fused %s", types,
                        tfl::EnumNameActivationFunctionType(activation)));
  }
  return types;
}
namespace {

// TFLite's rounding of x / scale to an integer on x86 (its Neon quantizers
// through the NEON-to-SSE translation): in the vectorized groups of 8 by
// adding +-0.5 in float and truncating (its pre-ARMv8 RoundToNearest), the
// k % 8 left over with std::round. They differ where v + 0.5 rounds up in
// float: 0.49999997 gives 1 in a group, 0 in the tail (measured, for both
// quantizers).
//
// The conversion to int32 is x86's (cvtt*): NaN and values outside int32
// give INT32_MIN, where C++'s cast is undefined. Inputs or weights a model
// makes NaN or infinite reach here (found by tests/fuzz).
int32_t TruncateLikeX86(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) {
    return std::numeric_limits<int32_t>::min();
  }
  return static_cast<int32_t>(v);
}

int32_t RoundLikeTflite(float v, bool in_group_of_8) {
  return in_group_of_8 ? TruncateLikeX86(v + (v < 0 ? -0.5f : 0.5f))
                       : TruncateLikeX86(std::round(v));
}

}  // namespace

namespace {

CallCounter g_vector_quantize_calls;
CallCounter g_vector_dot_calls;
CallCounter g_vector_activation_calls;

// The range and rounding of a row, as below, for both quantizers: q[i] =
// clamp(zp + RoundLikeTflite(x[i] * inv), qmin, qmax) + add, stored as T.
template <typename T>
void RoundRowScalar(const float* x, int64_t k, float inv, int32_t zp,
                    int32_t qmin, int32_t qmax, int32_t add, T* q) {
  const int64_t grouped = k & ~int64_t{7};
  for (int64_t i = 0; i < k; ++i) {
    const int32_t r = RoundLikeTflite(x[i] * inv, i < grouped);
    q[i] = static_cast<T>(
        std::clamp<int64_t>(int64_t{zp} + r, qmin, qmax) + add);
  }
}

#if GRAFT_QGEMM_AVX2
// The row's min and max with every lane starting at `init`: vminps(x, lo)
// keeps lo where x is NaN or equal, as std::min(lo, x) does, so NaNs are
// skipped and a lane started at +0 never becomes -0 (the asymmetric range);
// the symmetric range takes absolute values, where a zero's sign is lost.
GRAFT_AVX512_TARGET void MinMaxAvx512(const float* x, int64_t k, float init,
                                      float* lo, float* hi) {
  const __m512 start = _mm512_set1_ps(init);
  __m512 vlo = start, vhi = start;
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vlo = _mm512_min_ps(v, vlo);
    vhi = _mm512_max_ps(v, vhi);
  }
  if (i < k) {
    const __mmask16 m = static_cast<__mmask16>((1u << (k - i)) - 1);
    const __m512 v = _mm512_mask_loadu_ps(start, m, x + i);
    vlo = _mm512_min_ps(v, vlo);
    vhi = _mm512_max_ps(v, vhi);
  }
  *lo = _mm512_reduce_min_ps(vlo);
  *hi = _mm512_reduce_max_ps(vhi);
}

// RoundRowAvx512's constants for unsigned bytes (below).
struct RoundU8 {
  __m512 inv;
  __m512i sign, half, off16, lo8, hi8, order;
};

// trunc(v + (v < 0 ? -0.5 : 0.5)) for v = x * inv on the lanes of m.
GRAFT_AVX512_INLINE __m512i RoundU8x16(const RoundU8& c, const float* x,
                                       __mmask16 m) {
  const __m512 v = HybridMulPs(_mm512_maskz_loadu_ps(m, x), c.inv);
  const __m512 h = _mm512_castsi512_ps(
      _mm512_ternarylogic_epi32(_mm512_castps_si512(v), c.sign, c.half, 0xEA));
  return _mm512_cvttps_epi32(HybridAddPs(v, h));
}

// 64 values (the lanes of m) rounded, offset, clamped and narrowed to
// bytes in order.
GRAFT_AVX512_INLINE __m512i RoundU8x64(const RoundU8& c, const float* x,
                                       __mmask64 m) {
  const __m512i r0 = RoundU8x16(c, x, static_cast<__mmask16>(m));
  const __m512i r1 = RoundU8x16(c, x + 16, static_cast<__mmask16>(m >> 16));
  const __m512i r2 = RoundU8x16(c, x + 32, static_cast<__mmask16>(m >> 32));
  const __m512i r3 = RoundU8x16(c, x + 48, static_cast<__mmask16>(m >> 48));
  const __m512i w01 = _mm512_adds_epi16(_mm512_packs_epi32(r0, r1), c.off16);
  const __m512i w23 = _mm512_adds_epi16(_mm512_packs_epi32(r2, r3), c.off16);
  const __m512i u = _mm512_min_epu8(
      _mm512_max_epu8(_mm512_packus_epi16(w01, w23), c.lo8), c.hi8);
  return _mm512_permutexvar_epi32(c.order, u);
}

// RoundRowScalar on 16 lanes for the groups of 8: v + (v < 0 ? -0.5 :
// 0.5) truncated by vcvttps2dq (NaN and out-of-range give INT32_MIN, as
// TruncateLikeX86), clamped to [qmin - zp, qmax - zp] and then offset by
// zp (the same as adding zp first in int64 and clamping); the k % 8 tail
// with std::round, as there.
template <typename T>
GRAFT_AVX512_TARGET void RoundRowAvx512(const float* x, int64_t k, float inv,
                                        int32_t zp, int32_t qmin, int32_t qmax,
                                        int32_t add, T* q) {
  const int64_t grouped = k & ~int64_t{7};
  const __m512 vinv = _mm512_set1_ps(inv);
  const __m512 pos = _mm512_set1_ps(0.5f), neg = _mm512_set1_ps(-0.5f);
  if constexpr (sizeof(T) == 1) {
    // 64 values a step, narrowed by packs and one permute and stored at
    // once (vpmovdb to memory is slow on Zen 4). v + 0.5 with v's sign
    // ((v & -0) | 0.5) is the blend above: -0 and NaN come out the same.
    // The clamp is folded into the narrowing: clamp(r, qmin - zp, qmax -
    // zp) + zp + add = clamp(r + zp + add, qmin + add, qmax + add), bounds
    // and offset in [0, 255]; r saturated to int16 (vpackssdw), the offset
    // added with int16 saturation and the sum saturated to [0, 255]
    // (vpackuswb) keep every value inside the bounds where it was and put
    // every other value past the bound it was past.
    RoundU8 c;
    c.inv = vinv;
    c.sign = _mm512_set1_epi32(INT32_MIN);
    c.half = _mm512_castps_si512(pos);
    c.off16 = _mm512_set1_epi16(static_cast<int16_t>(zp + add));
    c.lo8 = _mm512_set1_epi8(static_cast<char>(qmin + add));
    c.hi8 = _mm512_set1_epi8(static_cast<char>(qmax + add));
    // The packs interleave the four vectors' 128-bit lanes by dwords.
    c.order =
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    int64_t i = 0;
    for (; i + 64 <= grouped; i += 64) {
      _mm512_storeu_si512(q + i, RoundU8x64(c, x + i, ~__mmask64{0}));
    }
    if (i < grouped) {
      const __mmask64 m = (__mmask64{1} << (grouped - i)) - 1;
      _mm512_mask_storeu_epi8(q + i, m, RoundU8x64(c, x + i, m));
    }
  } else {
    // clamp(zp + r, qmin, qmax) + add = clamp(r, qmin - zp, qmax - zp) +
    // (zp + add): one clamp, and no overflow for r = INT32_MIN.
    const __m512i vmin = _mm512_set1_epi32(qmin - zp),
                  vmax = _mm512_set1_epi32(qmax - zp),
                  voff = _mm512_set1_epi32(zp + add);
    for (int64_t i = 0; i < grouped; i += 16) {
      const __mmask16 m =
          grouped - i >= 16 ? __mmask16{0xFFFF} : __mmask16{0x00FF};
      const __m512 v = HybridMulPs(_mm512_maskz_loadu_ps(m, x + i), vinv);
      const __mmask16 negative =
          _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
      const __m512 t = HybridAddPs(v, _mm512_mask_blend_ps(negative, pos, neg));
      __m512i r = _mm512_cvttps_epi32(t);
      r = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(r, vmin), vmax),
                           voff);
      _mm256_mask_storeu_epi16(q + i, m, _mm512_cvtepi32_epi16(r));
    }
  }
  RoundRowScalar(x + grouped, k - grouped, inv, zp, qmin, qmax, add,
                 q + grouped);
}
#endif  // GRAFT_QGEMM_AVX2

bool UseAvx512() {
#if GRAFT_QGEMM_AVX2
  return KernelIsa() == CpuIsa::kAvx512Vnni;
#else
  return false;
#endif
}

template <typename T>
void RoundRow(const float* x, int64_t k, float inv, int32_t zp, int32_t qmin,
              int32_t qmax, int32_t add, T* q) {
#if GRAFT_QGEMM_AVX2
  if (UseAvx512()) {
    g_vector_quantize_calls.fetch_add(1, std::memory_order_relaxed);
    RoundRowAvx512(x, k, inv, zp, qmin, qmax, add, q);
    return;
  }
#endif
  RoundRowScalar(x, k, inv, zp, qmin, qmax, add, q);
}

// min and max of x[0..k) with std::min / std::max from `init`.
void MinMax(const float* x, int64_t k, float init, float* lo, float* hi) {
#if GRAFT_QGEMM_AVX2
  if (UseAvx512() && k > 0 && !std::isnan(init)) {
    MinMaxAvx512(x, k, init, lo, hi);
    return;
  }
#endif
  float l = init, h = init;
  for (int64_t i = 0; i < k; ++i) {
    l = std::min(l, x[i]);
    h = std::max(h, x[i]);
  }
  *lo = l, *hi = h;
}

// The asymmetric int8 quantization of one input row, as ai-edge-litert 2.3.0
// does it on x86: TFLite's NeonAsymmetricQuantizeFloats (through its
// NEON-to-SSE translation), not PortableAsymmetricQuantizeFloats. The range
// [min(0, lo), max(0, hi)] is subtracted in float, the scale and zero point
// are computed in double (the zero point nudged from the end that loses
// less), and values are rounded (RoundLikeTflite) before the zero point is
// added. Each of those details was measured: the portable variant misses the
// scale's last bit in about one row of eight, and ties. Values are stored
// plus `add` as T.
template <typename T>
void AsymmetricQuantize(const float* x, int64_t k, int32_t add, T* q,
                        float* scale, int32_t* zero_point) {
  float lo = 0, hi = 0;
  MinMax(x, k, 0.0f, &lo, &hi);
  if (lo == hi) {
    std::fill(q, q + k, static_cast<T>(add));
    *scale = 1, *zero_point = 0;
    return;
  }
  const double s = static_cast<double>(hi - lo) / 255.0;
  const double z_from_min = -128.0 - lo / s, z_from_max = 127.0 - hi / s;
  const double z = 128.0 + std::abs(lo / s) < 127.0 + std::abs(hi / s)
                       ? z_from_min
                       : z_from_max;
  // !(z > -128): a NaN z (a row with both infinities) is -128, not an
  // undefined cast.
  const int32_t zp = !(z > -128.0) ? -128
                     : z >= 127.0  ? 127
                                   : static_cast<int32_t>(std::round(z));
  *scale = static_cast<float>(s), *zero_point = zp;
  const float inv = static_cast<float>(1.0 / *scale);
  RoundRow(x, k, inv, zp, -128, 127, add, q);
}

// The symmetric int8 quantization of one input row: TFLite's
// NeonSymmetricQuantizeFloats on x86, as above. range = max(|min|, |max|);
// scale = range / 127 and its inverse 127 / range, both in float; values in
// [-127, 127]. A row of zeros gets scale 1.
template <typename T>
void SymmetricQuantize(const float* x, int64_t k, int32_t add, T* q,
                       float* scale) {
  float lo = 0, hi = 0;
  MinMax(x + 1, k - 1, x[0], &lo, &hi);
  const float range = std::max(std::abs(lo), std::abs(hi));
  if (range == 0) {
    std::fill(q, q + k, static_cast<T>(add));
    *scale = 1;
    return;
  }
  *scale = range / 127.0f;
  const float inv = 127.0f / range;
  RoundRow(x, k, inv, 0, -127, 127, add, q);
}

}  // namespace

void AsymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale,
                           int32_t* zero_point) {
  AsymmetricQuantize(x, k, 0, q, scale, zero_point);
}

void SymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale) {
  SymmetricQuantize(x, k, 0, q, scale);
}

void AsymmetricQuantizeRowU8(const float* x, int64_t k, uint8_t* u,
                             float* scale, int32_t* zero_point) {
  AsymmetricQuantize(x, k, 128, u, scale, zero_point);
}

void SymmetricQuantizeRowU8(const float* x, int64_t k, uint8_t* u,
                            float* scale) {
  SymmetricQuantize(x, k, 128, u, scale);
}

int64_t HybridVectorQuantizeCallsForTesting() {
  return g_vector_quantize_calls.load(std::memory_order_relaxed);
}

absl::Status CheckHybridWeights(const PrepareContext& ctx, const Tensor& w,
                                const std::string& types) {
  const tfl::QuantizationParametersT* q = w.quantization;
  if (q == nullptr || q->scale.empty()) {
    return ctx.Unsupported(types + " not quantized");
  }
  if (q->details.type != tfl::QuantizationDetails_NONE) {
    return ctx.Unsupported(types + " with custom quantization details");
  }
  for (int64_t zp : q->zero_point) {
    if (zp != 0) return ctx.Unsupported(types + " with a zero point");
  }
  if (!w.constant) return ctx.Unsupported(types + " computed at run time");
  return absl::OkStatus();
}

namespace {
// One product of HybridDot: TFLite's, with its -128 quirk.
inline int32_t TfliteProduct(int16_t a, int16_t b) {
  const int32_t w = (b == -128 && a < 0) ? 128 : b;
  return static_cast<int32_t>(a) * w;
}
}  // namespace

namespace {

int32_t HybridDotScalar(const int16_t* a, const int16_t* b, int64_t k) {
  // Chunks of 16 vectorize to 16-bit multiply-adds; integer sums in any
  // order are the same.
  // The sum wraps as TFLite's SIMD sum does (its lanes are int32): summed
  // unsigned, where wrapping is defined.
  uint32_t d = 0;
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    for (int j = 0; j < 16; ++j) {
      d += static_cast<uint32_t>(TfliteProduct(a[i + j], b[i + j]));
    }
  }
  for (; i < k; ++i)
    d += static_cast<uint32_t>(static_cast<int32_t>(a[i]) * b[i]);
  return static_cast<int32_t>(d);
}

#if GRAFT_QGEMM_AVX2
// HybridDotScalar on 32 int16 lanes: in the whole blocks of 16, a weight of
// -128 facing a negative input becomes 128 (the quirk), then vpmaddwd sums
// pairs of products exactly (|pair| <= 2 * 128 * 128 for 8-bit values) and
// the int32 lanes wrap as the scalar sum does.
GRAFT_AVX512_INLINE int32_t HybridDotAvx512Inline(const int16_t* a,
                                                  const int16_t* b, int64_t k) {
  const int64_t whole = k & ~int64_t{15};
  const __m512i m128 = _mm512_set1_epi16(-128), p128 = _mm512_set1_epi16(128);
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc = zero;
  int64_t i = 0;
  for (; i < whole; i += 32) {
    const __mmask32 m =
        whole - i >= 32 ? __mmask32{0xFFFFFFFFu} : __mmask32{0xFFFFu};
    const __m512i va = _mm512_maskz_loadu_epi16(m, a + i);
    __m512i vb = _mm512_maskz_loadu_epi16(m, b + i);
    const __mmask32 quirk = _mm512_cmpeq_epi16_mask(vb, m128) &
                            _mm512_cmplt_epi16_mask(va, zero);
    vb = _mm512_mask_mov_epi16(vb, quirk, p128);
    acc = _mm512_add_epi32(acc, _mm512_madd_epi16(va, vb));
  }
  i = whole;
  if (i < k) {  // k - i < 16
    const __mmask32 m = static_cast<__mmask32>((1u << (k - i)) - 1);
    acc = _mm512_add_epi32(
        acc, _mm512_madd_epi16(_mm512_maskz_loadu_epi16(m, a + i),
                               _mm512_maskz_loadu_epi16(m, b + i)));
  }
  // The lanes' sum wrapping as TFLite's int32 accumulator does: GCC's
  // _mm512_reduce_add_epi32 adds them as signed ints (undefined on
  // overflow), _mm*_add_epi32 as unsigned.
  __m256i s8 = _mm256_add_epi32(_mm512_castsi512_si256(acc),
                                _mm512_extracti64x4_epi64(acc, 1));
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s8),
                             _mm256_extracti128_si256(s8, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
  return _mm_cvtsi128_si32(s4);
}
GRAFT_AVX512_TARGET void HybridDotRowsAvx512(const int16_t* a,
                                            const int16_t* b, int64_t n,
                                            int64_t k, int32_t* out) {
  for (int64_t j = 0; j < n; ++j) {
    out[j] = HybridDotAvx512Inline(a, b + j * k, k);
  }
}

GRAFT_AVX512_TARGET int32_t HybridDotAvx512(const int16_t* a, const int16_t* b,
                                            int64_t k) {
  return HybridDotAvx512Inline(a, b, k);
}
#endif  // GRAFT_QGEMM_AVX2

}  // namespace

void HybridDotRows(const int16_t* a, const int16_t* b, int64_t n, int64_t k,
                   int32_t* out) {
#if GRAFT_QGEMM_AVX2
  if (UseAvx512()) {
    g_vector_dot_calls.fetch_add(1, std::memory_order_relaxed);
    HybridDotRowsAvx512(a, b, n, k, out);
    return;
  }
#endif
  for (int64_t j = 0; j < n; ++j) out[j] = HybridDotScalar(a, b + j * k, k);
}

int32_t HybridDot(const int16_t* a, const int16_t* b, int64_t k) {
#if GRAFT_QGEMM_AVX2
  if (UseAvx512()) {
    g_vector_dot_calls.fetch_add(1, std::memory_order_relaxed);
    return HybridDotAvx512(a, b, k);
  }
#endif
  return HybridDotScalar(a, b, k);
}

int64_t HybridVectorDotCallsForTesting() {
  return g_vector_dot_calls.load(std::memory_order_relaxed);
}

int32_t HybridRowSum(const int16_t* w, int64_t k) {
  int16_t lanes[8] = {};
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    for (int l = 0; l < 8; ++l) {
      lanes[l] =
          static_cast<int16_t>(lanes[l] + w[i + 2 * l] + w[i + 2 * l + 1]);
    }
  }
  if (i + 8 <= k) {
    for (int l = 0; l < 8; ++l) {
      lanes[l] = static_cast<int16_t>(lanes[l] + w[i + l]);
    }
    i += 8;
  }
  int32_t sum = 0;
  for (int l = 0; l < 8; ++l) sum += lanes[l];
  for (; i < k; ++i) sum += w[i];
  return sum;
}

namespace {
CallCounter g_vnni_calls;
CallCounter g_vnni_conv_calls;

#if GRAFT_QGEMM_AVX2
// acc + the four products of x's unsigned bytes and w's signed bytes per
// int32 lane (vpdpbusd). In asm, as quantized_gemm_avx512.cc's Dpbusd: GCC
// 12 gave the intrinsic's tied accumulator a fresh register each step and
// copied it back (16 extra moves a step in the 8 x 2 tile).
GRAFT_AVX512_INLINE __m512i Dpbusd(__m512i acc, __m512i x, __m512i w) {
  asm("vpdpbusd %[w], %[x], %[acc]" : [acc] "+v"(acc) : [x] "v"(x), [w] "v"(w));
  return acc;
}

// R rows x P panels (P = 1 or 2) of sums over the whole reduction into
// acc[R][P], started at init[P] (vpdpbusd wraps as int32 sums do): per
// tap (one for a plain GEMM), `groups` groups of four reduction steps of
// row r read at row[r] + tap_off[t]; the weights run on through the taps
// (b1 only with a second panel: it is null otherwise).
template <int R, int P>
GRAFT_AVX512_INLINE void VnniAccumulate(const uint8_t* const* row,
                                        const int8_t* b0, const int8_t* b1,
                                        const int64_t* tap_off, int taps,
                                        int64_t groups, const __m512i* init,
                                        __m512i (&acc)[R][P]) {
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) acc[r][p] = init[p];
  }
  for (int t = 0; t < taps; ++t) {
    const int64_t d = tap_off[t];
    for (int64_t g = 0; g < groups; ++g) {
      const __m512i w0 = _mm512_loadu_si512(b0 + g * 64);
      __m512i w1 = w0;
      if constexpr (P == 2) w1 = _mm512_loadu_si512(b1 + g * 64);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        int32_t four;
        std::memcpy(&four, row[r] + d + g * 4, 4);
        const __m512i av = _mm512_set1_epi32(four);
        acc[r][0] = Dpbusd(acc[r][0], av, w0);
        if constexpr (P == 2) acc[r][1] = Dpbusd(acc[r][1], av, w1);
      }
    }
    b0 += groups * 64;
    if constexpr (P == 2) b1 += groups * 64;
  }
}

// R rows x P panels of raw sums, row r read at a + r * a_stride.
template <int R, int P>
GRAFT_AVX512_TARGET void VnniTile(const uint8_t* a, int64_t a_stride,
                                  const int8_t* b0, const int8_t* b1,
                                  const int64_t* tap_off, int taps,
                                  int64_t groups, int cols0, int cols1,
                                  int32_t* out, int64_t out_stride) {
  const uint8_t* row[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) row[r] = a + r * a_stride;
  __m512i acc[R][P];
  const __m512i zero[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
  VnniAccumulate<R, P>(row, b0, b1, tap_off, taps, groups, zero, acc);
  const __mmask16 m0 = static_cast<__mmask16>((1u << cols0) - 1);
  const __mmask16 m1 = static_cast<__mmask16>((1u << cols1) - 1);
  // Whole panels with plain stores: a masked store does not forward to
  // the epilogue's loads.
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if (cols0 == 16) {
      _mm512_storeu_si512(out + r * out_stride, acc[r][0]);
    } else {
      _mm512_mask_storeu_epi32(out + r * out_stride, m0, acc[r][0]);
    }
    if constexpr (P == 2) {
      if (cols1 == 16) {
        _mm512_storeu_si512(out + r * out_stride + 16, acc[r][1]);
      } else {
        _mm512_mask_storeu_epi32(out + r * out_stride + 16, m1, acc[r][1]);
      }
    }
  }
}

template <int P>
GRAFT_AVX512_TARGET void VnniRows(const uint8_t* a, int64_t a_stride,
                                  int64_t rows, const int8_t* b0,
                                  const int8_t* b1, const int64_t* tap_off,
                                  int taps, int64_t groups, int cols0,
                                  int cols1, int32_t* out,
                                  int64_t out_stride) {
  int64_t r = 0;
  for (; r + 8 <= rows; r += 8) {
    VnniTile<8, P>(a + r * a_stride, a_stride, b0, b1, tap_off, taps, groups,
                   cols0, cols1,
                   out + r * out_stride, out_stride);
  }
  const uint8_t* ar = a + r * a_stride;
  int32_t* o = out + r * out_stride;
  switch (rows - r) {
#define GRAFT_VNNI_CASE(n)                                                   \
  case n:                                                                    \
    VnniTile<n, P>(ar, a_stride, b0, b1, tap_off, taps, groups, cols0, cols1, \
                   o, out_stride);                                            \
    break;
    GRAFT_VNNI_CASE(1)
    GRAFT_VNNI_CASE(2)
    GRAFT_VNNI_CASE(3)
    GRAFT_VNNI_CASE(4)
    GRAFT_VNNI_CASE(5)
    GRAFT_VNNI_CASE(6)
    GRAFT_VNNI_CASE(7)
#undef GRAFT_VNNI_CASE
    default:
      break;
  }
}

// HybridVnniConvEpilogue's terms for one image, set once per call: per
// panel the column term negated (the accumulators start at it), the
// weight scales (and their product with the image scale), the bias and
// the column mask; the clamp, each bound skipped where it is infinite
// (vmaxps(-inf, v) and vminps(+inf, v) return v, NaN included).
struct ConvTerms {
  __m512i neg_corr[2];
  __m512 ws[2], f[2], bias[2];
  __mmask16 mask[2];
  bool full[2];
  __m512 sb, lo, hi;
  bool clamp_lo, clamp_hi;
};

// R rows x P panels: the sums of VnniAccumulate through the float
// epilogue in registers, in HybridVnniConvEpilogue's operations and order,
// row r stored at out + r * out_stride.
template <int R, int P, bool kPerChannel, bool kBias>
GRAFT_AVX512_TARGET void VnniConvTile(const uint8_t* const* row,
                                      const int8_t* b0, const int8_t* b1,
                                      const int64_t* tap_off, int taps,
                                      int64_t groups, const ConvTerms& ct,
                                      float* out, int64_t out_stride) {
  __m512i acc[R][P];
  VnniAccumulate<R, P>(row, b0, b1, tap_off, taps, groups, ct.neg_corr, acc);
#pragma GCC unroll 2
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 dot = _mm512_cvtepi32_ps(acc[r][p]);
      __m512 v = kPerChannel ? HybridMulPs(HybridMulPs(dot, ct.ws[p]), ct.sb)
                             : HybridMulPs(dot, ct.f[p]);
      if constexpr (kBias) v = HybridAddPs(v, ct.bias[p]);
      if (ct.clamp_lo) v = _mm512_max_ps(ct.lo, v);
      if (ct.clamp_hi) v = _mm512_min_ps(ct.hi, v);
      float* o = out + r * out_stride + p * 16;
      if (ct.full[p]) {
        _mm512_storeu_ps(o, v);
      } else {
        _mm512_mask_storeu_ps(o, ct.mask[p], v);
      }
    }
  }
}

using VnniConvTileFn = void (*)(const uint8_t* const*, const int8_t*,
                                const int8_t*, const int64_t*, int, int64_t,
                                const ConvTerms&, float*, int64_t);

// Tiles of 8 rows (the last one shorter) running along the output rows,
// each row's pointer set per tile; panel pairs outermost.
template <bool kPerChannel, bool kBias>
GRAFT_AVX512_TARGET void VnniConvImpl(const uint8_t* a, int64_t a_row_stride,
                                      int64_t a_stride, int64_t out_rows,
                                      int64_t cols, const HybridVnniWeights& b,
                                      const int64_t* tap_off, int taps,
                                      const HybridVnniConvEpilogue& e,
                                      float* out, int64_t out_stride) {
#define GRAFT_VNNI_CONV_TILES(P)                \
  {                                             \
    VnniConvTile<1, P, kPerChannel, kBias>,     \
        VnniConvTile<2, P, kPerChannel, kBias>, \
        VnniConvTile<3, P, kPerChannel, kBias>, \
        VnniConvTile<4, P, kPerChannel, kBias>, \
        VnniConvTile<5, P, kPerChannel, kBias>, \
        VnniConvTile<6, P, kPerChannel, kBias>, \
        VnniConvTile<7, P, kPerChannel, kBias>, \
        VnniConvTile<8, P, kPerChannel, kBias>  \
  }
  static constexpr VnniConvTileFn kTile[2][8] = {GRAFT_VNNI_CONV_TILES(1),
                                                 GRAFT_VNNI_CONV_TILES(2)};
#undef GRAFT_VNNI_CONV_TILES
  const int64_t kp = HybridVnniPaddedK(b.k), groups = kp / 4 / taps;
  const int64_t n = out_rows * cols;
  ConvTerms ct;
  ct.sb = _mm512_set1_ps(e.scale);
  ct.lo = _mm512_set1_ps(e.lo), ct.hi = _mm512_set1_ps(e.hi);
  ct.clamp_lo = e.lo != -std::numeric_limits<float>::infinity();
  ct.clamp_hi = e.hi != std::numeric_limits<float>::infinity();
  const __m512i offset = _mm512_set1_epi32(e.a_offset);
  for (int64_t p = 0; p < b.panels; p += 2) {
    const int np = static_cast<int>(std::min<int64_t>(2, b.panels - p));
    for (int j = 0; j < np; ++j) {
      const int64_t c0 = (p + j) * 16;
      const int cols_j = static_cast<int>(std::min<int64_t>(16, b.n - c0));
      ct.full[j] = cols_j == 16;
      ct.mask[j] =
          static_cast<__mmask16>(ct.full[j] ? 0xFFFFu : (1u << cols_j) - 1);
      ct.neg_corr[j] = _mm512_sub_epi32(
          _mm512_setzero_si512(),
          _mm512_mullo_epi32(offset,
                             _mm512_loadu_si512(b.col_sums.data() + c0)));
      ct.ws[j] = _mm512_maskz_loadu_ps(ct.mask[j], e.wscale + c0);
      ct.f[j] = HybridMulPs(ct.sb, ct.ws[j]);
      ct.bias[j] = kBias ? _mm512_maskz_loadu_ps(ct.mask[j], e.bias + c0)
                         : _mm512_setzero_ps();
    }
    const int8_t* b0 = b.packed.data() + p * 16 * kp;
    const int8_t* b1 = np == 2 ? b0 + 16 * kp : nullptr;
    const uint8_t* line = a;  // output row y's first pixel
    const uint8_t* next = a;  // pixel (y, x)
    int64_t x = 0;
    for (int64_t r0 = 0; r0 < n; r0 += 8) {
      const int rows = static_cast<int>(std::min<int64_t>(8, n - r0));
      const uint8_t* row[8];
      for (int i = 0; i < rows; ++i) {
        row[i] = next;
        next += a_stride;
        if (++x == cols) x = 0, line += a_row_stride, next = line;
      }
      kTile[np - 1][rows - 1](row, b0, b1, tap_off, taps, groups, ct,
                              out + r0 * out_stride + p * 16, out_stride);
    }
  }
}
#endif  // GRAFT_QGEMM_AVX2
}  // namespace

void HybridVnniPack(const int8_t* w, int64_t n, int64_t k, int64_t row_stride,
                    HybridVnniWeights* out) {
  const int64_t kp = HybridVnniPaddedK(k);
  out->n = n, out->k = k, out->panels = (n + 15) / 16;
  out->packed.assign(out->panels * 16 * kp, 0);
  out->col_sums.assign(out->panels * 16, 0);
  for (int64_t c = 0; c < n; ++c) {
    const int64_t p = c / 16, col = c % 16;
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const int8_t v = w[c * row_stride + kk];
      out->packed[p * 16 * kp + (kk / 4) * 64 + col * 4 + kk % 4] = v;
      sum += v;
    }
    out->col_sums[c] = sum;
  }
}

void HybridVnniSums(const uint8_t* a, int64_t a_stride, int64_t rows,
                    const HybridVnniWeights& b, int64_t p0, int64_t p1,
                    int32_t* out, int64_t out_stride) {
#if GRAFT_QGEMM_AVX2
  g_vnni_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t kp = HybridVnniPaddedK(b.k), groups = kp / 4;
  const int64_t tap_off = 0;  // one tap: the whole row
  auto cols = [&](int64_t p) {
    return static_cast<int>(std::min<int64_t>(16, b.n - p * 16));
  };
  int64_t p = p0;
  for (; p + 2 <= p1; p += 2) {
    VnniRows<2>(a, a_stride, rows, b.packed.data() + p * 16 * kp,
                b.packed.data() + (p + 1) * 16 * kp, &tap_off, 1, groups,
                cols(p), cols(p + 1), out + p * 16, out_stride);
  }
  if (p < p1) {
    VnniRows<1>(a, a_stride, rows, b.packed.data() + p * 16 * kp, nullptr,
                &tap_off, 1, groups, cols(p), 0, out + p * 16, out_stride);
  }
#else
  (void)a, (void)a_stride, (void)rows, (void)b, (void)p0, (void)p1, (void)out,
      (void)out_stride;
#endif
}

void HybridVnniConvTaps(const uint8_t* a, int64_t a_row_stride,
                        int64_t a_stride, int64_t out_rows, int64_t cols,
                        const HybridVnniWeights& b, const int64_t* tap_off,
                        int taps, const HybridVnniConvEpilogue& e, float* out,
                        int64_t out_stride) {
#if GRAFT_QGEMM_AVX2
  g_vnni_calls.fetch_add(1, std::memory_order_relaxed);
  g_vnni_conv_calls.fetch_add(1, std::memory_order_relaxed);
  if (out_rows <= 0 || cols <= 0) return;
  if (e.per_channel) {
    if (e.bias != nullptr) {
      VnniConvImpl<true, true>(a, a_row_stride, a_stride, out_rows, cols, b,
                               tap_off, taps, e, out, out_stride);
    } else {
      VnniConvImpl<true, false>(a, a_row_stride, a_stride, out_rows, cols, b,
                                tap_off, taps, e, out, out_stride);
    }
  } else if (e.bias != nullptr) {
    VnniConvImpl<false, true>(a, a_row_stride, a_stride, out_rows, cols, b,
                              tap_off, taps, e, out, out_stride);
  } else {
    VnniConvImpl<false, false>(a, a_row_stride, a_stride, out_rows, cols, b,
                               tap_off, taps, e, out, out_stride);
  }
#else
  (void)a, (void)a_row_stride, (void)a_stride, (void)out_rows, (void)cols,
      (void)b, (void)tap_off, (void)taps, (void)e, (void)out, (void)out_stride;
#endif
}

int64_t HybridVnniCallsForTesting() {
  return g_vnni_calls.load(std::memory_order_relaxed);
}

int64_t HybridVnniConvCallsForTesting() {
  return g_vnni_conv_calls.load(std::memory_order_relaxed);
}

// Eigen's ptanh_float (EIGEN_FAST_MATH, no FMA): a [9/8] rational
// approximation on the input clamped to +-7.90738964. Its scalar and packet
// paths are the same (measured).
float EigenTanh(float a) {
  constexpr float kClamp = 7.90738964080810547f;
  const float x = std::max(std::min(a, kClamp), -kClamp);
  const float x2 = x * x;
  const float x3 = x2 * x;
  float p = 1.394553628e-8f;
  p = p * x2 + 2.102733560e-5f;
  p = p * x2 + 3.520756727e-3f;
  p = p * x2 + 1.340216100e-1f;
  float q = 8.015776984e-7f;
  q = q * x2 + 3.326951409e-4f;
  q = q * x2 + 2.597254514e-2f;
  q = q * x2 + 4.673548340e-1f;
  q = q * x2 + 1.0f;
  p = x3 * p + x;
  return p / q;
}

// Eigen's scalar_logistic_op<float> packet path: exp(x) / (1 + exp(x)) with
// exp(x) = exp(x/2)^2, exp(x/2) by Cephes range reduction and a degree-5
// polynomial.
float EigenLogisticPacket(float a) {
  // NaN stays NaN (and must not reach the int cast below: found by
  // tests/fuzz, runtime).
  if (std::isnan(a)) return a;
  if (a < -104.0f) return 0.0f;
  float x = std::min(a, 16.6355324f);
  x = x * 0.5f;
  const float m = std::floor(x * 1.44269504088896341f + 0.5f);
  float r = m * -0.693359375f + x;
  r = m * 2.12194440e-4f + r;
  const float r2 = r * r;
  const float p_even =
      r2 * 4.1898667812347412109375e-2f + 0.49999141693115234375f;
  const float p_odd =
      r2 * 8.33471305668354034423828125e-3f + 0.16666877269744873046875f;
  const float p_low = r + 1.0f;
  float p = r * p_odd + p_even;
  p = r2 * p + p_low;
  float e = p * std::ldexp(1.0f, static_cast<int>(m));
  e = e * e;
  return e / (1.0f + e);
}


#if GRAFT_QGEMM_AVX2
namespace {
// EigenTanh on 16 lanes, the same operations in the same order, each
// rounded on its own (HybridMulPs / HybridAddPs); the clamp's operands
// ordered as std::max(std::min(a, k), -k) decides NaNs.
GRAFT_AVX512_TARGET void EigenTanhAvx512(const float* in, float* out,
                                         int64_t n) {
  const __m512 k = _mm512_set1_ps(7.90738964080810547f);
  const __m512 nk = _mm512_set1_ps(-7.90738964080810547f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = static_cast<__mmask16>(
        n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(m, in + i);
    const __m512 x = _mm512_max_ps(nk, _mm512_min_ps(k, a));
    const __m512 x2 = HybridMulPs(x, x);
    const __m512 x3 = HybridMulPs(x2, x);
    __m512 p = _mm512_set1_ps(1.394553628e-8f);
    p = HybridAddPs(HybridMulPs(p, x2), _mm512_set1_ps(2.102733560e-5f));
    p = HybridAddPs(HybridMulPs(p, x2), _mm512_set1_ps(3.520756727e-3f));
    p = HybridAddPs(HybridMulPs(p, x2), _mm512_set1_ps(1.340216100e-1f));
    __m512 q = _mm512_set1_ps(8.015776984e-7f);
    q = HybridAddPs(HybridMulPs(q, x2), _mm512_set1_ps(3.326951409e-4f));
    q = HybridAddPs(HybridMulPs(q, x2), _mm512_set1_ps(2.597254514e-2f));
    q = HybridAddPs(HybridMulPs(q, x2), _mm512_set1_ps(4.673548340e-1f));
    q = HybridAddPs(HybridMulPs(q, x2), _mm512_set1_ps(1.0f));
    p = HybridAddPs(HybridMulPs(x3, p), x);
    _mm512_mask_storeu_ps(out + i, m,
                          _mm512_div_round_ps(p, q, _MM_FROUND_CUR_DIRECTION));
  }
}

// EigenLogisticPacket on 16 lanes, in place: the same operations in the
// same order; 2^m built from its bits (m is in [-75, 12] for the inputs
// that reach it, so 2^m is a normal float and ldexp(1, m) is exact); NaN
// lanes keep their input, lanes below -104 give 0.
GRAFT_AVX512_TARGET void EigenLogisticAvx512(float* v, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = static_cast<__mmask16>(
        n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(m, v + i);
    __m512 x = _mm512_min_ps(_mm512_set1_ps(16.6355324f), a);
    x = HybridMulPs(x, _mm512_set1_ps(0.5f));
    const __m512 mf = _mm512_roundscale_ps(
        HybridAddPs(HybridMulPs(x, _mm512_set1_ps(1.44269504088896341f)), _mm512_set1_ps(0.5f)),
        _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 r = HybridAddPs(HybridMulPs(mf, _mm512_set1_ps(-0.693359375f)), x);
    r = HybridAddPs(HybridMulPs(mf, _mm512_set1_ps(2.12194440e-4f)), r);
    const __m512 r2 = HybridMulPs(r, r);
    const __m512 p_even = HybridAddPs(
        HybridMulPs(r2, _mm512_set1_ps(4.1898667812347412109375e-2f)),
        _mm512_set1_ps(0.49999141693115234375f));
    const __m512 p_odd = HybridAddPs(
        HybridMulPs(r2, _mm512_set1_ps(8.33471305668354034423828125e-3f)),
        _mm512_set1_ps(0.16666877269744873046875f));
    const __m512 p_low = HybridAddPs(r, _mm512_set1_ps(1.0f));
    __m512 p = HybridAddPs(HybridMulPs(r, p_odd), p_even);
    p = HybridAddPs(HybridMulPs(r2, p), p_low);
    // Lanes that do not use it (NaN, below -104) may hold any m: clamp it
    // so the bits stay a float.
    __m512i mi = _mm512_cvttps_epi32(mf);
    mi = _mm512_min_epi32(_mm512_max_epi32(mi, _mm512_set1_epi32(-126)),
                          _mm512_set1_epi32(127));
    const __m512 pow2 = _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_add_epi32(mi, _mm512_set1_epi32(127)), 23));
    __m512 e = HybridMulPs(p, pow2);
    e = HybridMulPs(e, e);
    __m512 out = _mm512_div_round_ps(e, HybridAddPs(_mm512_set1_ps(1.0f), e),
                                     _MM_FROUND_CUR_DIRECTION);
    out = _mm512_mask_mov_ps(
        out, _mm512_cmp_ps_mask(a, _mm512_set1_ps(-104.0f), _CMP_LT_OQ),
        _mm512_setzero_ps());
    out = _mm512_mask_mov_ps(out, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
    _mm512_mask_storeu_ps(v + i, m, out);
  }
}
}  // namespace
#endif  // GRAFT_QGEMM_AVX2

void EigenTanhVector(const float* in, float* out, int64_t n) {
#if GRAFT_QGEMM_AVX2
  if (UseAvx512()) {
    g_vector_activation_calls.fetch_add(1, std::memory_order_relaxed);
    EigenTanhAvx512(in, out, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = EigenTanh(in[i]);
}

void EigenLogisticPacketVector(float* v, int64_t n) {
#if GRAFT_QGEMM_AVX2
  if (UseAvx512()) {
    g_vector_activation_calls.fetch_add(1, std::memory_order_relaxed);
    EigenLogisticAvx512(v, n);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = EigenLogisticPacket(v[i]);
}

int64_t HybridVectorActivationCallsForTesting() {
  return g_vector_activation_calls.load(std::memory_order_relaxed);
}

}  // namespace kernels
}  // namespace graft
