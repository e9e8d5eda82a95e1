// The 8-bit integer GEMM shared by the quantized CONV_2D, FULLY_CONNECTED
// and BATCH_MATMUL kernels and the hybrid CONV_2D (internal to
// dispatch/kernels).
//
// out[r][c] = requantize(sum_k a[r][k] * b[c][k] + bias[c]), where
// - a is an int16 row-major matrix already holding input + input_offset
//   (an 8-bit value plus a negated 8-bit zero point fits int16), rows of
//   kp = QGemmPaddedK(k) values, the one past k (odd k) zero
//   (QGemmWidenRows builds it from 8-bit rows),
// - b is packed by QGemmPack* into column panels of kQGemmNr columns,
//   holding weight + weight_offset in int16: per pair of reduction steps,
//   the 16 columns' two values side by side ([kp / 2][kQGemmNr][2]), zero
//   past k and past the last column,
// - the products are summed in int32 two reduction steps at a time (AVX2
//   vpmaddwd, whose pair sums of at most 2 * 255^2 never saturate),
// - requantize is TFLite's per-channel rescale (double rounding, or the
//   single rounding of FULLY_CONNECTED), output offset and activation clamp.
//
// The int32 sums are the reference kernels' sums in another order; integer
// addition is associative (wrapping alike), so results are bit-exact.
//
// Thread-safety: all functions are pure over their arguments.
#ifndef GRAFT_DISPATCH_KERNELS_QUANTIZED_GEMM_H_
#define GRAFT_DISPATCH_KERNELS_QUANTIZED_GEMM_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/quantization_util.h"

#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
#define GRAFT_QGEMM_AVX2 1
#include <immintrin.h>
#else
#define GRAFT_QGEMM_AVX2 0
#endif

namespace graft::kernels {

// Micro-tile: kQGemmMr rows x kQGemmNr columns held in int32 vector
// registers over the whole reduction.
constexpr int kQGemmMr = 6;
constexpr int kQGemmNr = 16;

// Number of column panels for n columns.
inline int64_t QGemmPanels(int64_t n) { return (n + kQGemmNr - 1) / kQGemmNr; }
// True when 8-bit values plus `offset` (a negated zero point) fit int16,
// as a and b hold them: always for zero points in the 8-bit range.
inline bool QGemmOffsetFits(int32_t offset) {
  return offset >= -255 && offset <= 255;
}
// The reduction length rounded up to whole pairs: a's row stride.
inline int64_t QGemmPaddedK(int64_t k) { return (k + 1) / 2 * 2; }
// int16 values of a packed b with n columns and reduction k.
inline int64_t QGemmPackedSize(int64_t n, int64_t k) {
  return QGemmPanels(n) * kQGemmNr * QGemmPaddedK(k);
}

// Packs b[c][kk] = w[c * row_stride + kk] + w_offset for c < n, kk < k
// (rows of [N, K] weights, FULLY_CONNECTED and CONV_2D layout) into `dst`
// (QGemmPackedSize(n, k) values).
template <typename W>  // int8_t or uint8_t
void QGemmPackRows(const W* w, int64_t n, int64_t k, int64_t row_stride,
                   int32_t w_offset, int16_t* dst);

// Packs b[c][kk] = w[kk * stride_k + c * stride_n] + w_offset (any strided
// 8-bit matrix, e.g. BATCH_MATMUL's rhs) into `dst`.
template <typename W>  // int8_t
void QGemmPackStrided(const W* w, int64_t n, int64_t k, int64_t stride_k,
                      int64_t stride_n, int32_t w_offset, int16_t* dst);

// Per-output-channel rescale parameters, padded by kQGemmNr so that every
// panel reads whole vectors.
struct QGemmRequant {
  // TFLite's MultiplyByQuantizedMultiplierSingleRounding (FULLY_CONNECTED)
  // instead of the double-rounding MultiplyByQuantizedMultiplier.
  bool single_rounding = false;
  // Double rounding where every channel's shift lies in [-22, -1] (no left
  // shift, a right shift of 1 to 22), |output_offset| <= 255 and the
  // activation range lies in [-128, 127]: the AVX-512 epilogue then takes
  // RequantDoubleFastAvx512, which folds both roundings and the output
  // offset into one 64-bit add and shift, and StoreClampedS8Avx512
  // (QGemmPrepareRequant decides).
  bool fast_double = false;
  // fast_double, and every sum plus bias is known to lie in
  // (-2^30, 2^30) (the caller sets it from its reduction length and
  // biases): RequantDoubleSmallAvx512, which finishes in 32-bit lanes.
  bool small_sums = false;
  int32_t output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  // Per channel: int32 bias and Q31 multiplier; for double rounding the
  // left and right shifts and the mask (1 << right_shift) - 1 of
  // RoundingDivideByPOT; for single rounding the total shift 31 - shift in
  // `rshift`.
  std::vector<int32_t> bias, mult, lshift, rshift, mask;
};

// Inline vector helpers, for kernels that requantize or widen in their own
// loops (the depthwise convolution); GCC/Clang vector extensions.

// Vectors for GCC/Clang vector extensions; the alignment attributes make
// unaligned memcpy loads and stores legal.
typedef int32_t V8i __attribute__((vector_size(32), aligned(4)));
typedef uint32_t V8u __attribute__((vector_size(32), aligned(4)));
typedef int32_t V4i __attribute__((vector_size(16), aligned(4)));
typedef int64_t V4l __attribute__((vector_size(32), aligned(8)));
typedef uint64_t V4ul __attribute__((vector_size(32), aligned(8)));
typedef int16_t V8s __attribute__((vector_size(16), aligned(2)));
typedef int8_t V16b __attribute__((vector_size(16), aligned(1)));
typedef uint8_t V16ub __attribute__((vector_size(16), aligned(1)));
typedef int16_t V16s __attribute__((vector_size(32), aligned(2)));

// SaturatingRoundingDoublingHighMul(x, m) for m >= 0 (which never
// saturates): (ab + nudge) / 2^31 with C's truncating division, ab = x * m,
// nudge = 2^30 for ab >= 0 and 1 - 2^30 below. That equals
// floor((ab + 2^30) / 2^31) either way: for ab < 0, t = ab + 1 - 2^30 is
// negative and trunc(t / 2^31) = floor((t + 2^31 - 1) / 2^31), where
// t + 2^31 - 1 = ab + 2^30. The result fits 32 bits, so its low 32 bits
// are bits 31..62 of ab + 2^30: a logical 64-bit shift (AVX2 has no
// arithmetic one) and a truncation.
inline V4i HighMulV4(V4i x, V4i m) {
  const V4l ab =
      __builtin_convertvector(x, V4l) * __builtin_convertvector(m, V4l);
  const V4ul q = reinterpret_cast<V4ul>(ab + (int64_t{1} << 30)) >> 31;
  return __builtin_convertvector(q, V4i);
}

// MultiplyByQuantizedMultiplierSingleRounding on 4 lanes: the 64-bit
// product rounded half up by 2^ts, saturated to int32.
inline V4i SingleRoundV4(V4i x, V4i m, V4i ts) {
  const V4l ab =
      __builtin_convertvector(x, V4l) * __builtin_convertvector(m, V4l);
  const V4l s = __builtin_convertvector(ts, V4l);
  V4l r = (ab + ((V4l{} + 1) << (s - 1))) >> s;
  const V4l lo = V4l{} + INT32_MIN, hi = V4l{} + INT32_MAX;
  r = r < lo ? lo : r;
  r = r > hi ? hi : r;
  return __builtin_convertvector(r, V4i);
}

// Requantizes the 8 int32 sums of channels [c, c + 8) lane by lane with the
// scalar kernels' integer operations: bias, rescale, output offset and
// activation clamp. Operands go by reference: 32-byte vectors by value
// would change the ABI between the two clones.
inline void RequantizeV8(const QGemmRequant& rq, const V8i& acc, int64_t c,
                         int32_t* out) {
  V8i bias, mult, rshift;
  std::memcpy(&bias, rq.bias.data() + c, sizeof(bias));
  std::memcpy(&mult, rq.mult.data() + c, sizeof(mult));
  std::memcpy(&rshift, rq.rshift.data() + c, sizeof(rshift));
  V4i m_half[2], h_half[2];
  std::memcpy(m_half, &mult, sizeof(mult));
  V8i v;
  if (rq.single_rounding) {
    const V8i x = acc + bias;
    V4i x_half[2], s_half[2];
    std::memcpy(x_half, &x, sizeof(x));
    std::memcpy(s_half, &rshift, sizeof(rshift));
    h_half[0] = SingleRoundV4(x_half[0], m_half[0], s_half[0]);
    h_half[1] = SingleRoundV4(x_half[1], m_half[1], s_half[1]);
    std::memcpy(&v, h_half, sizeof(v));
  } else {
    V8i lshift, mask;
    std::memcpy(&lshift, rq.lshift.data() + c, sizeof(lshift));
    std::memcpy(&mask, rq.mask.data() + c, sizeof(mask));
    const V8i x = reinterpret_cast<V8i>(reinterpret_cast<V8u>(acc + bias)
                                        << reinterpret_cast<V8u>(lshift));
    V4i x_half[2];
    std::memcpy(x_half, &x, sizeof(x));
    h_half[0] = HighMulV4(x_half[0], m_half[0]);
    h_half[1] = HighMulV4(x_half[1], m_half[1]);
    V8i h;
    std::memcpy(&h, h_half, sizeof(h));
    // RoundingDivideByPOT; a true vector comparison is -1.
    const V8i rem = h & mask;
    const V8i threshold = (mask >> 1) - (h >> 31);
    v = (h >> rshift) - (rem > threshold);
  }
  v += rq.output_offset;
  v = v < rq.act_min ? V8i{} + rq.act_min : v;
  v = v > rq.act_max ? V8i{} + rq.act_max : v;
  std::memcpy(out, &v, sizeof(v));
}

// The same requantization in AVX2 intrinsics, for kernels with an AVX2
// build of their own (GRAFT_QGEMM_AVX2: x86-64 with GCC or Clang): the
// 8-bit GEMM's epilogue and the int8 depthwise convolution.
#if GRAFT_QGEMM_AVX2
// HighMulV4 (quantized_gemm.h) on 8 lanes with AVX2's signed 32x32->64
// multiply, even lanes and odd lanes: floor((x * m + 2^30) / 2^31), whose
// low 32 bits are those of the logical shift; m >= 0.
__attribute__((target("avx2"), always_inline)) inline __m256i HighMulAvx2(
    __m256i x, __m256i m) {
  const __m256i half = _mm256_set1_epi64x(int64_t{1} << 30);
  const __m256i even =
      _mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(x, m), half), 31);
  const __m256i odd = _mm256_srli_epi64(
      _mm256_add_epi64(
          _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(m, 32)),
          half),
      31);
  return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// MultiplyByQuantizedMultiplier(x, multiplier, shift) (quantization_util.h)
// on 8 lanes, for multiplier >= 0: the same integer operations, so the
// same results (quantized MEAN and SUM's rescale).
__attribute__((target("avx2"), always_inline)) inline __m256i
MultiplyByQuantizedMultiplierAvx2(__m256i x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const __m256i h =
      HighMulAvx2(_mm256_slli_epi32(x, left), _mm256_set1_epi32(multiplier));
  // RoundingDivideByPOT: round half away from zero.
  const __m256i mask =
      _mm256_set1_epi32(static_cast<int32_t>((int64_t{1} << right) - 1));
  const __m256i threshold =
      _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), _mm256_srai_epi32(h, 31));
  return _mm256_sub_epi32(
      _mm256_srai_epi32(h, right),
      _mm256_cmpgt_epi32(_mm256_and_si256(h, mask), threshold));
}

__attribute__((target("avx2"), always_inline)) inline __m256i LoadChannels(
    const std::vector<int32_t>& v, int64_t c) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v.data() + c));
}

// RequantizeV8's double-rounding form (MultiplyByQuantizedMultiplier) on
// one vector of sums for channels [c, c + 8), in AVX2 intrinsics.
__attribute__((target("avx2"), always_inline)) inline __m256i RequantizeAvx2(
    const QGemmRequant& rq, __m256i acc, int64_t c) {
  const __m256i x =
      _mm256_sllv_epi32(_mm256_add_epi32(acc, LoadChannels(rq.bias, c)),
                        LoadChannels(rq.lshift, c));
  const __m256i h = HighMulAvx2(x, LoadChannels(rq.mult, c));
  // RoundingDivideByPOT: round half away from zero.
  const __m256i mask = LoadChannels(rq.mask, c);
  const __m256i rem = _mm256_and_si256(h, mask);
  const __m256i threshold =
      _mm256_sub_epi32(_mm256_srai_epi32(mask, 1), _mm256_srai_epi32(h, 31));
  __m256i v = _mm256_sub_epi32(_mm256_srav_epi32(h, LoadChannels(rq.rshift, c)),
                               _mm256_cmpgt_epi32(rem, threshold));
  v = _mm256_add_epi32(v, _mm256_set1_epi32(rq.output_offset));
  v = _mm256_max_epi32(v, _mm256_set1_epi32(rq.act_min));
  return _mm256_min_epi32(v, _mm256_set1_epi32(rq.act_max));
}

// Stores the low bytes of 16 results (lo: the first 8) at op, `cols` <= 16
// of them. Each result is in the 8-bit range after the activation clamp,
// so masking to its low byte and packing with unsigned saturation keeps it
// exactly, for INT8 and UINT8 alike.
__attribute__((target("avx2"), always_inline)) inline void StoreBytesAvx2(
    __m256i lo, __m256i hi, int cols, uint8_t* op) {
  const __m256i low_byte = _mm256_set1_epi32(0xFF);
  // [lo0-3 hi0-3 | lo4-7 hi4-7] as 16-bit, then in channel order.
  const __m256i w16 = _mm256_permute4x64_epi64(
      _mm256_packus_epi32(_mm256_and_si256(lo, low_byte),
                          _mm256_and_si256(hi, low_byte)),
      0xD8);
  const __m128i bytes = _mm_packus_epi16(_mm256_castsi256_si128(w16),
                                         _mm256_extracti128_si256(w16, 1));
  if (cols == 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op), bytes);
  } else {
    uint8_t tmp[16];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(tmp), bytes);
    std::memcpy(op, tmp, cols);
  }
}

// The same requantization on 16 lanes of AVX-512 (the VNNI GEMM's epilogue
// and the int8 depthwise convolution's 32-channel blocks), for functions
// built with GRAFT_AVX512_TARGET and run where KernelIsa() is
// kAvx512Vnni (which implies AVX-512 F, BW, VL and DQ).
#define GRAFT_AVX512_TARGET \
  __attribute__((           \
      target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#define GRAFT_AVX512_INLINE \
  GRAFT_AVX512_TARGET inline __attribute__((always_inline))

// GCC 12's AVX-512 intrinsics pass a self-initialized "undefined" vector as
// the unused merge operand of their unmasked forms, which
// -Wmaybe-uninitialized reports wherever they are inlined: off in the files
// that include this header (as float_simd.h turns off -Wpsabi).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// In a function that is not inlined (the VNNI GEMM's tiles for the last
// rows, called from a table) GCC reports it as -Wuninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
// The requantization constants of channels [channel, channel + 16), loaded
// once and shared by the rows of a tile.
// The scalars are broadcast here too: read from `rq` inside a loop that
// stores bytes, they were reloaded after every store (a byte store may
// alias them).
struct Requant16 {
  __m512i offset;  // the bias, plus the VNNI GEMM's column terms
  __m512i mult, lshift, rshift, mask;
  __m512i mult_odd, mask_half;  // mult >> 32 (odd lanes' multiplier), mask >> 1
  __m512i output_offset, act_min, act_max;
  // RequantDoubleFastAvx512's per-lane 64-bit constants for the even
  // (channel 2i) and odd (2i + 1) lanes: the rounding term and 31 + s.
  __m512i rnd_even, rnd_odd, sh_even, sh_odd;
  __m512i sh_odd_high;  // s - 1 for the odd lanes (RequantSmallClampedAvx512)
  __m512i act_min8, act_max8;  // the activation bounds as bytes
  bool fast_double;  // rq.fast_double
  bool small_sums;   // rq.small_sums
};

// The constants of the 16 lanes, lane l from entry l of the per-channel
// arrays (channels from `channel` on) and of `col_offset`, 16 more int32
// to add to the bias, or null. LoadRequant16Lanes: `lanes(p)` returns the
// 16 lanes' values of the array at p (p already at the lanes' first
// channel), for lanes that do not hold one channel each.
template <typename Lanes>
GRAFT_AVX512_INLINE Requant16 LoadRequant16Lanes(const QGemmRequant& rq,
                                                 int64_t channel,
                                                 const int32_t* col_offset,
                                                 const Lanes& lanes) {
  Requant16 r;
  r.offset = lanes(rq.bias.data() + channel);
  if (col_offset != nullptr) {
    r.offset = _mm512_add_epi32(r.offset, lanes(col_offset));
  }
  r.mult = lanes(rq.mult.data() + channel);
  r.lshift = lanes(rq.lshift.data() + channel);
  r.rshift = lanes(rq.rshift.data() + channel);
  r.mask = lanes(rq.mask.data() + channel);
  r.mult_odd = _mm512_srli_epi64(r.mult, 32);
  r.mask_half = _mm512_srai_epi32(r.mask, 1);
  r.output_offset = _mm512_set1_epi32(rq.output_offset);
  r.act_min = _mm512_set1_epi32(rq.act_min);
  r.act_max = _mm512_set1_epi32(rq.act_max);
  r.fast_double = rq.fast_double;
  r.small_sums = rq.small_sums;
  r.act_min8 = _mm512_set1_epi8(static_cast<char>(rq.act_min));
  r.act_max8 = _mm512_set1_epi8(static_cast<char>(rq.act_max));
  if (rq.fast_double) {
    // s in the low (even channel) and high (odd channel) half of each
    // 64-bit lane; rnd = 2^30 + 2^(30 + s) + output_offset * 2^(31 + s).
    const __m512i low = _mm512_set1_epi64(0xFFFFFFFF);
    const __m512i s_even = _mm512_and_si512(r.rshift, low);
    const __m512i s_odd = _mm512_srli_epi64(r.rshift, 32);
    const __m512i c31 = _mm512_set1_epi64(31);
    r.sh_even = _mm512_add_epi64(s_even, c31);
    r.sh_odd = _mm512_add_epi64(s_odd, c31);
    r.sh_odd_high = _mm512_sub_epi64(s_odd, _mm512_set1_epi64(1));
    const __m512i half = _mm512_set1_epi64(int64_t{1} << 30);
    const __m512i o = _mm512_set1_epi64(rq.output_offset);
    r.rnd_even = _mm512_add_epi64(
        _mm512_add_epi64(half, _mm512_sllv_epi64(half, s_even)),
        _mm512_sllv_epi64(o, r.sh_even));
    r.rnd_odd = _mm512_add_epi64(
        _mm512_add_epi64(half, _mm512_sllv_epi64(half, s_odd)),
        _mm512_sllv_epi64(o, r.sh_odd));
  } else {
    r.rnd_even = r.rnd_odd = r.sh_even = r.sh_odd = r.sh_odd_high =
        _mm512_setzero_si512();
  }
  return r;
}

// One channel per lane.
struct ChannelLanes {
  GRAFT_AVX512_INLINE __m512i operator()(const int32_t* p) const {
    return _mm512_loadu_si512(p);
  }
};

GRAFT_AVX512_INLINE Requant16 LoadRequant16(const QGemmRequant& rq,
                                            int64_t channel,
                                            const int32_t* col_offset) {
  return LoadRequant16Lanes(rq, channel, col_offset, ChannelLanes{});
}

// RequantizeAvx2 (quantized_gemm.h) on 16 lanes: TFLite's double-rounding
// MultiplyByQuantizedMultiplier, output offset and clamp, the high
// multiply as even and odd 32x32->64 products.
GRAFT_AVX512_INLINE __m512i RequantDoubleAvx512(const Requant16& r,
                                                __m512i acc) {
  const __m512i x =
      _mm512_sllv_epi32(_mm512_add_epi32(acc, r.offset), r.lshift);
  const __m512i half = _mm512_set1_epi64(int64_t{1} << 30);
  const __m512i even = _mm512_srli_epi64(
      _mm512_add_epi64(_mm512_mul_epi32(x, r.mult), half), 31);
  // The odd lanes' bits 31..62 land in the high half by a left shift of 1.
  const __m512i odd = _mm512_slli_epi64(
      _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32), r.mult_odd),
                       half),
      1);
  const __m512i h = _mm512_mask_blend_epi32(0xAAAA, even, odd);
  // RoundingDivideByPOT: round half away from zero.
  const __m512i rem = _mm512_and_si512(h, r.mask);
  const __m512i threshold =
      _mm512_sub_epi32(r.mask_half, _mm512_srai_epi32(h, 31));
  __m512i v = _mm512_srav_epi32(h, r.rshift);
  v = _mm512_mask_add_epi32(v, _mm512_cmpgt_epi32_mask(rem, threshold), v,
                            _mm512_set1_epi32(1));
  v = _mm512_add_epi32(v, r.output_offset);
  v = _mm512_max_epi32(v, r.act_min);
  return _mm512_min_epi32(v, r.act_max);
}

// RequantDoubleAvx512 where rq.fast_double holds (shift s = -shift in
// [1, 22], no left shift, |output_offset| <= 255), in fewer steps. With
// p = x * M in 64 bits, the reference's SaturatingRoundingDoublingHighMul
// never saturates (M >= 0) and is h = floor((p + 2^30) / 2^31);
// RoundingDivideByPOT(h, s) (half away from zero) is
// floor((h + 2^(s-1) - [h < 0]) / 2^s), and h < 0 exactly when
// p < -2^30. As floor(floor(a / 2^31) / 2^s) = floor(a / 2^(31+s)) and an
// integer added inside a floor comes out of it, the result plus the output
// offset o is
//   (p + 2^30 + 2^(30+s) + o * 2^(31+s) - [p < -2^30] * 2^31) >> (31 + s),
// which stays inside int64 (|p| < 2^62, |o| * 2^(31+s) <= 2^61) and whose
// value (|h| / 2^s + |o| <= 2^30 + 256) fits int32, so that adding o here
// equals the reference's int32 addition. Checked against the scalar
// MultiplyByQuantizedMultiplier for every shift and extreme multipliers
// (quantized_gemm_test's FastDoubleRequant*). Returns the values with the
// output offset, unclamped (StoreClampedS8Avx512 clamps).
GRAFT_AVX512_INLINE __m512i RequantDoubleFastAvx512(const Requant16& r,
                                                    __m512i acc) {
  const __m512i x = _mm512_add_epi32(acc, r.offset);
  const __m512i pe = _mm512_mul_epi32(x, r.mult);
  const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), r.mult_odd);
  const __m512i neg_limit = _mm512_set1_epi64(-(int64_t{1} << 30));
  const __m512i corr = _mm512_set1_epi64(int64_t{1} << 31);
  const __mmask8 ne = _mm512_cmplt_epi64_mask(pe, neg_limit);
  const __mmask8 no = _mm512_cmplt_epi64_mask(po, neg_limit);
  __m512i qe = _mm512_add_epi64(pe, r.rnd_even);
  __m512i qo = _mm512_add_epi64(po, r.rnd_odd);
  qe = _mm512_mask_sub_epi64(qe, ne, qe, corr);
  qo = _mm512_mask_sub_epi64(qo, no, qo, corr);
  qe = _mm512_srav_epi64(qe, r.sh_even);
  qo = _mm512_srav_epi64(qo, r.sh_odd);
  // The odd lanes' low 32 bits into the odd int32 positions.
  return _mm512_mask_shuffle_epi32(qe, 0xAAAA, qo, _MM_PERM_CCAA);
}

// RequantDoubleFastAvx512 where moreover |x| < 2^30 (rq.small_sums), x
// the sum plus bias: then q = (p + 2^30 + 2^(30+s) + o * 2^(31+s)) >> 31
// = h + 2^(s-1) + o * 2^s fits int32 (< 2^30 + 2^21 + 2^30), so the two
// halves' q merge into one vector of int32 (the even lanes' bits 31..62
// by a right shift, the odd lanes' by a left shift of 1, as
// RequantDoubleAvx512 forms h), and the rest is 32-bit:
// (q - [h < 0]) >> s. [h < 0] is [x < 0] (x * M < -2^30 for every x < 0
// but x = -1 with M = 2^30, where h = 0 and both give 0 for s >= 1),
// i.e. adding x >> 31. Same result as RequantDoubleFastAvx512, in 12
// instead of 15 operations.
// RequantSmallAvx512 takes x, the sum with the offset already added (the
// VNNI GEMM's tiles start their accumulators at the offset).
GRAFT_AVX512_INLINE __m512i RequantSmallAvx512(const Requant16& r, __m512i x) {
  const __m512i pe = _mm512_mul_epi32(x, r.mult);
  const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), r.mult_odd);
  const __m512i qe = _mm512_srli_epi64(_mm512_add_epi64(pe, r.rnd_even), 31);
  const __m512i qo = _mm512_slli_epi64(_mm512_add_epi64(po, r.rnd_odd), 1);
  const __m512i q = _mm512_add_epi32(_mm512_mask_blend_epi32(0xAAAA, qe, qo),
                                     _mm512_srai_epi32(x, 31));
  return _mm512_srav_epi32(q, r.rshift);
}
// The same from the sum without the offset.
GRAFT_AVX512_INLINE __m512i RequantDoubleSmallAvx512(const Requant16& r,
                                                     __m512i acc) {
  return RequantSmallAvx512(r, _mm512_add_epi32(acc, r.offset));
}

// RequantSmallAvx512 without the [h < 0] correction: exact where act_min
// >= output_offset (a RELU-like clamp). For x < 0, h <= 0 (x * M <=
// -2^30), and both RoundingDivideByPOT(h, s) and (h + 2^(s-1)) >> s are
// <= 0, so both values are <= output_offset, which the clamp (after a
// saturation that keeps them below it) lifts to act_min alike; for x >= 0
// the correction is 0.
// Without it, the result is (p + rnd) >> (31 + s) (RequantDoubleFastAvx512's
// form) for both halves at once: the even lanes shift by 31 + s and keep
// their low half; the odd lanes shift by s - 1 (s >= 1), and their high
// half, (p + rnd) >> (s - 1) >> 32, is the same value. 8 operations where
// the two-step shifts took 9.
GRAFT_AVX512_INLINE __m512i RequantSmallClampedAvx512(const Requant16& r,
                                                      __m512i x) {
  const __m512i pe = _mm512_mul_epi32(x, r.mult);
  const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), r.mult_odd);
  const __m512i qe =
      _mm512_srav_epi64(_mm512_add_epi64(pe, r.rnd_even), r.sh_even);
  const __m512i qo =
      _mm512_srav_epi64(_mm512_add_epi64(po, r.rnd_odd), r.sh_odd_high);
  return _mm512_mask_blend_epi32(0xAAAA, qe, qo);
}

// Stores RequantDoubleFastAvx512's values clamped to the activation range,
// `cols` of them, where that range lies in [-128, 127] (rq.fast_double):
// narrowing with signed saturation first and clamping the bytes gives the
// same bytes as clamping the int32 values (saturation is monotone and
// keeps [-128, 127]), with the clamp on 16 bytes instead of 16 int32.
GRAFT_AVX512_INLINE void StoreClampedS8Avx512(const Requant16& r, __m512i v,
                                              int cols, uint8_t* op) {
  __m128i bytes = _mm512_cvtsepi32_epi8(v);
  bytes = _mm_max_epi8(bytes, _mm512_castsi512_si128(r.act_min8));
  bytes = _mm_min_epi8(bytes, _mm512_castsi512_si128(r.act_max8));
  if (cols == kQGemmNr) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op), bytes);
  } else {
    _mm_mask_storeu_epi8(op, static_cast<__mmask16>((1u << cols) - 1), bytes);
  }
}

// FULLY_CONNECTED's single rounding on 16 lanes: (x * m + 2^(ts - 1)) >> ts
// in 64 bits (rshift holds ts = 31 - shift), saturated to int32, then
// output offset and clamp.
GRAFT_AVX512_INLINE __m512i RequantSingleAvx512(const Requant16& r,
                                                __m512i acc) {
  const __m512i x = _mm512_add_epi32(acc, r.offset);
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i lo = _mm512_set1_epi64(INT32_MIN),
                hi = _mm512_set1_epi64(INT32_MAX);
  auto round = [&](__m512i prod, __m512i ts) GRAFT_AVX512_TARGET {
    const __m512i bias = _mm512_sllv_epi64(one, _mm512_sub_epi64(ts, one));
    const __m512i q = _mm512_srav_epi64(_mm512_add_epi64(prod, bias), ts);
    return _mm512_min_epi64(_mm512_max_epi64(q, lo), hi);
  };
  const __m512i ts_even =
      _mm512_and_si512(r.rshift, _mm512_set1_epi64(0xFFFFFFFF));
  const __m512i ts_odd = _mm512_srli_epi64(r.rshift, 32);
  const __m512i even = round(_mm512_mul_epi32(x, r.mult), ts_even);
  const __m512i odd = round(
      _mm512_mul_epi32(_mm512_srli_epi64(x, 32), r.mult_odd), ts_odd);
  __m512i v = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  v = _mm512_add_epi32(v, r.output_offset);
  v = _mm512_max_epi32(v, r.act_min);
  return _mm512_min_epi32(v, r.act_max);
}

// Stores the low bytes of 16 results (each in the 8-bit range after the
// clamp, so its low byte is the INT8 or UINT8 value), `cols` of them.
GRAFT_AVX512_INLINE void StoreBytesAvx512(__m512i v, int cols, uint8_t* op) {
  const __m128i bytes = _mm512_cvtepi32_epi8(v);
  if (cols == kQGemmNr) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op), bytes);
  } else {
    _mm_mask_storeu_epi8(op, static_cast<__mmask16>((1u << cols) - 1), bytes);
  }
}
// int8 bytes as unsigned (+128, a XOR of the sign bit): whole 64-byte
// blocks, then one masked block for the rest. The VNNI GEMM's and the int8
// convolution's im2col input.
GRAFT_AVX512_INLINE void FlipToUnsignedAvx512(const int8_t* src, int64_t n,
                                              uint8_t* dst) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    _mm512_storeu_si512(dst + i,
                        _mm512_xor_si512(_mm512_loadu_si512(src + i), flip));
  }
  if (i < n) {
    const __mmask64 m = (uint64_t{1} << (n - i)) - 1;  // n - i < 64
    _mm512_mask_storeu_epi8(
        dst + i, m,
        _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + i), flip));
  }
}

#endif  // GRAFT_QGEMM_AVX2

// dst[i] = src[i] + off for i < n (in int16), inlined into the caller and
// its target clone.
template <typename S, typename VS>
inline __attribute__((always_inline)) void WidenWithOffsetInline(const S* src,
                                                                 int64_t n,
                                                                 int32_t off,
                                                                 int16_t* dst) {
  const int16_t off16 = static_cast<int16_t>(off);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    VS x;
    std::memcpy(&x, src + i, sizeof(x));
    const V16s w = __builtin_convertvector(x, V16s) + off16;
    std::memcpy(dst + i, &w, sizeof(w));
  }
  for (; i < n; ++i) dst[i] = static_cast<int16_t>(src[i] + off);
}

// Fills `rq` for `mult.size()` channels; `bias` has the same size (int64
// values of an INT32 bias).
void QGemmPrepareRequant(const std::vector<QuantizedMultiplier>& mult,
                         const std::vector<int64_t>& bias, bool single_rounding,
                         int32_t output_offset, int32_t act_min,
                         int32_t act_max, QGemmRequant* rq);

// a's rows [0, rows) from src[r * src_stride + kk] + off, kk < k: rows of
// QGemmPaddedK(k) values at dst.
void QGemmWidenRows(const int8_t* src, int64_t rows, int64_t k,
                    int64_t src_stride, int32_t off, int16_t* dst);
void QGemmWidenRows(const uint8_t* src, int64_t rows, int64_t k,
                    int64_t src_stride, int32_t off, int16_t* dst);

// Rows [0, rows) of the product of `a` (row stride QGemmPaddedK(k)) and panels
// [p0, p1) of `packed` (n columns in all), requantized with channels
// [channel0 + p0 * kQGemmNr, ...) of `rq`, stored as T (int8_t or uint8_t)
// at out[r * out_stride + c] for the panels' columns c < n.
template <typename T>
void QGemm(const int16_t* a, int64_t rows, int64_t k, const int16_t* packed,
           int64_t n, int64_t p0, int64_t p1, const QGemmRequant& rq,
           int64_t channel0, T* out, int64_t out_stride);

// As QGemm, but stores the int32 sums themselves (no bias, no rescale) at
// out[r * out_stride + c]: for kernels with their own epilogue (the hybrid
// convolution's float rescale).
void QGemmSums(const int16_t* a, int64_t rows, int64_t k, const int16_t* packed,
               int64_t n, int64_t p0, int64_t p1, int32_t* out,
               int64_t out_stride);

// How many QGemm / QGemmSums / QGemmVnni calls ran each path (AVX2,
// baseline, AVX-512 VNNI) since the process started: tests check with it
// that the path they force is the one taken. Relaxed counters, one
// increment per call (a call is a whole block of rows).
int64_t QGemmCallsForTesting(CpuIsa path);
// Counts one call of `path` (for the GEMM's own sources).
void CountQGemmCall(CpuIsa path);
// The same for the INT8 DEPTHWISE_CONV_2D fast paths
// (quantized_depthwise.cc): one count per block of output rows, kAvx512Vnni
// for its vpdpwssd kernel.
int64_t QDepthwiseCallsForTesting(CpuIsa path);
// How many of the kAvx512Vnni calls had paired weights
// (QGemmVnniPackPairedRows).
int64_t QGemmVnniPairedCallsForTesting();
// How many INT8 CONV_2D evaluations took the VNNI path without im2col
// (quantized_conv.cc's EvalQConvVnniTaps) since the process started.
int64_t QConvVnniTapsCallsForTesting();
// How many INT8 CONV_2D evaluations on a VNNI path split the output
// channels over the threads (quantized_conv.cc's SetColumnSplit).
int64_t QConvColumnSplitCallsForTesting();

// The AVX-512 VNNI form of the GEMM (KernelIsa() == kAvx512Vnni), for
// 8-bit activations with INT8 weights whose zero point is 0 (b's values
// must fit a signed byte): vpdpbusd multiplies 64 unsigned bytes of a by
// 64 signed bytes of b and adds each group of four products to an int32
// lane. a therefore holds unsigned bytes u with x + input_offset = u +
// a_offset (INT8 activations: u = x + 128, a_offset = input_offset - 128;
// UINT8: u = x, a_offset = input_offset), so that
//   sum_k (x + input_offset) * w = sum_k u * w + a_offset * sum_k w,
// and the last term, one int32 per column, is computed once at pack time
// (`col_offset`) and added before the bias. Each product u * w fits 16
// bits and vpdpbusd (unlike vpdpbusds) does not saturate: its int32 sums
// wrap as the reference kernels' do, and the column term is formed modulo
// 2^32 as well, so results stay bit-exact (integer sums in another order).
//
// Micro-tile: kQGemmVnniMr rows x two panels of kQGemmNr columns (32
// int32 lanes per row in two zmm registers; 16 accumulators), or one panel
// for the last odd one. The epilogue loads each panel's requantization
// constants once per block of rows, and its form (rounding, 32- or 64-bit
// finish) is fixed per call, so each tile's epilogue is straight-line
// code; where rq.small_sums holds the accumulators start at the bias plus
// column term, the [h < 0] rounding correction is skipped where the clamp
// makes it moot (act_min >= output_offset), and four vectors are narrowed
// to bytes together (two packs and one permute): two rows of two panels
// (a 32-byte store per row, 64 bytes where the rows touch), or four rows
// of one (64 bytes where rows of 16 channels touch).
constexpr int kQGemmVnniMr = 8;

// The reduction length rounded up to groups of four: a's row stride.
inline int64_t QGemmVnniPaddedK(int64_t k) { return (k + 3) / 4 * 4; }

// Weights packed for QGemmVnni: owned by the prepared kernel, built once
// at prepare.
struct QGemmVnniWeights {
  int64_t n = 0, k = 0;
  // Per panel of kQGemmNr columns, per group of four reduction steps, the
  // 16 columns' four values side by side ([kp / 4][kQGemmNr][4]), zero
  // past k and past the last column.
  std::vector<int8_t> packed;
  // Per column (padded to whole panels, then by kQGemmNr): a_offset times
  // the column's weight sum, modulo 2^32.
  std::vector<int32_t> col_offset;
  // Packed by QGemmVnniPackPairedRows: one panel whose 16 lanes hold
  // columns [0, kQGemmVnniPairedNr) of two rows, lane l column
  // 4 * (l / 8) + l % 4 of row 2i + (l / 4) % 2.
  bool paired = false;
};

// Columns of a paired panel: half a panel's lanes, each column in two.
constexpr int64_t kQGemmVnniPairedNr = kQGemmNr / 2;

// Packs b[c][kk] = w[c * row_stride + kk] for c < n, kk < k (INT8 weights
// with zero point 0, [N, K] layout) and the column terms for `a_offset`.
void QGemmVnniPackRows(const int8_t* w, int64_t n, int64_t k,
                       int64_t row_stride, int32_t a_offset,
                       QGemmVnniWeights* out);

// As QGemmVnniPackRows, for n <= kQGemmVnniPairedNr columns packed in
// pairs of rows (QGemmVnniWeights::paired): a panel of 16 lanes then
// computes eight columns of two rows, where one row of eight columns
// left half of every vpdpbusd and requantization idle. Such weights need
// rq.fast_double (8-bit signed outputs) in QGemmVnni.
void QGemmVnniPackPairedRows(const int8_t* w, int64_t n, int64_t k,
                             int64_t row_stride, int32_t a_offset,
                             QGemmVnniWeights* out);

// a's rows [0, rows) from INT8 rows src[r * src_stride + kk], kk < k, as
// x + 128 (unsigned bytes): rows of QGemmVnniPaddedK(k) bytes at dst, the
// pad bytes zero.
void QGemmVnniRowsFromInt8(const int8_t* src, int64_t rows, int64_t k,
                           int64_t src_stride, uint8_t* dst);
// dst[i] = src[i] + 128 as unsigned bytes, i < n (im2col pieces); AVX-512
// where KernelIsa() has it.
void QGemmVnniFlip(const int8_t* src, int64_t n, uint8_t* dst);

// As QGemm, from unsigned-byte rows `a` (row stride QGemmVnniPaddedK(k))
// and VNNI-packed weights: rows [0, rows) times panels [p0, p1), the
// column terms and rq's bias added, requantized with channels
// [channel0 + p0 * kQGemmNr, ...) of `rq`, stored as T at
// out[r * out_stride + c]. Needs KernelIsa() == kAvx512Vnni (the caller
// chose this packing at prepare because it was). With paired weights
// (QGemmVnniPackPairedRows) the panels are [0, 1): each vpdpbusd takes
// the four bytes of two rows (one broadcast to half the lanes, the other
// to the rest), the micro-tile is kQGemmVnniMr pairs of rows, and eight
// rows leave as one 64-byte store where they touch.
template <typename T>
void QGemmVnni(const uint8_t* a, int64_t rows, const QGemmVnniWeights& b,
               int64_t p0, int64_t p1, const QGemmRequant& rq, int64_t channel0,
               T* out, int64_t out_stride);

// The indirect form of QGemmVnni, for the int8 CONV_2D without im2col
// (quantized_conv.cc): row r of a is not stored but read in `count`
// pieces of `kp` bytes (a multiple of 4), piece t at base + rows[r] +
// delta[t]; the weights are packed (QGemmVnniPackRows) for the reduction
// count * kp, zero where a piece's bytes are padding, so whatever those
// bytes hold adds nothing. Every piece must be readable in full.
struct QGemmTaps {
  int count = 0;
  int64_t kp = 0;
  const int64_t* delta = nullptr;  // `count` byte offsets
};

// As QGemmVnni, with a's rows r < n_rows read through `base`, `rows` (byte
// offsets) and `taps`.
template <typename T>  // int8_t
void QGemmVnniTaps(const uint8_t* base, const int64_t* rows, int64_t n_rows,
                   const QGemmTaps& taps, const QGemmVnniWeights& b, int64_t p0,
                   int64_t p1, const QGemmRequant& rq, int64_t channel0, T* out,
                   int64_t out_stride);

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_QUANTIZED_GEMM_H_
