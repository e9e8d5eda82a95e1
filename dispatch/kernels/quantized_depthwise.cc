// INT8 DEPTHWISE_CONV_2D's fast paths (quantized_conv.h), for depth
// multiplier 1 and filters up to 7x7; quantized_conv.cc prepares the op and
// runs the other cases (16x8, depth multiplier > 1, weights computed at run
// time) with the reference kernels' direct loops.
//
// - Baseline and AVX2 builds: per output pixel the taps inside the input
//   are listed once and each block of 16 channels sums over them in int16
//   products widened to int32, then is requantized with quantized_gemm.h's
//   epilogue.
// - AVX-512 VNNI (DepthwiseRowsInt8Vnni, chosen at prepare with the filter
//   packed by PackDwVnni): vpdpwssd on pairs of taps in blocks of 32
//   channels (16 for a last block of at most 16); every output pixel reads
//   its taps through a table of pointers built for 16 pixels at a time,
//   those outside the input pointing at a pixel of zero points, so border
//   pixels cost what interior ones do.
//
// All give the same int32 sums as the reference loops (integer addition is
// associative), so results are bit-exact.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/quantized_conv.h"
#include "dispatch/kernels/quantized_gemm.h"

namespace graft::kernels {
namespace {

// Depth multiplier 1, filters up to kDwMaxTaps taps. Per output pixel the
// taps inside the input are listed once; each block of 16 channels sums
// over them in two int32 vectors held in registers (explicit vectors: this
// file builds at -O2, whose vectorizer skips loops of unknown trip count)
// and is requantized and stored; the last out_c % 16 channels go one by
// one. The product filter * (input + input_offset) fits int16 (|filter| <=
// 128, |input + input_offset| <= 255), so it is formed in int16 and
// widened. The rows run in two builds that differ in the sums and the
// requantization: vector extensions (baseline) and AVX2 intrinsics.
struct DwPixel {
  int taps = 0;
  const int8_t* in[kDwMaxTaps];
  const int8_t* w[kDwMaxTaps];
};

inline __attribute__((always_inline)) void ListDwTaps(const QConvState& s,
                                                      const int8_t* in,
                                                      const int8_t* w, int b,
                                                      int oy, int ox,
                                                      DwPixel* px) {
  px->taps = 0;
  for (int ky = 0; ky < s.k_h; ++ky) {
    const int iy = oy * s.stride_h - s.pad_h + s.dil_h * ky;
    if (iy < 0 || iy >= s.in_h) continue;
    for (int kx = 0; kx < s.k_w; ++kx) {
      const int ix = ox * s.stride_w - s.pad_w + s.dil_w * kx;
      if (ix < 0 || ix >= s.in_w) continue;
      px->in[px->taps] =
          in + ((int64_t{b} * s.in_h + iy) * s.in_w + ix) * s.in_c;
      px->w[px->taps] = w + (int64_t{ky} * s.k_w + kx) * s.out_c;
      ++px->taps;
    }
  }
}

// Sums of channels [c0, c0 + 16): lo the first 8, hi the next.
inline __attribute__((always_inline)) void SumDwBlock(const DwPixel& px, int c0,
                                                      int16_t off, V8i* lo,
                                                      V8i* hi) {
  V8i acc_lo = {}, acc_hi = {};
  for (int t = 0; t < px.taps; ++t) {
    V16b xb, wb;
    std::memcpy(&xb, px.in[t] + c0, sizeof(xb));
    std::memcpy(&wb, px.w[t] + c0, sizeof(wb));
    const V16s prod = __builtin_convertvector(wb, V16s) *
                      (__builtin_convertvector(xb, V16s) + off);
    V8s p_lo, p_hi;
    std::memcpy(&p_lo, &prod, sizeof(p_lo));
    std::memcpy(&p_hi, reinterpret_cast<const char*>(&prod) + 16, sizeof(p_hi));
    acc_lo += __builtin_convertvector(p_lo, V8i);
    acc_hi += __builtin_convertvector(p_hi, V8i);
  }
  *lo = acc_lo;
  *hi = acc_hi;
}

// Channels [c0, out_c), one at a time.
inline __attribute__((always_inline)) void FinishDwChannels(const QConvState& s,
                                                            const DwPixel& px,
                                                            int c0,
                                                            int8_t* op) {
  for (int c = c0; c < s.out_c; ++c) {
    int32_t sum = 0;
    for (int t = 0; t < px.taps; ++t) {
      sum += static_cast<int32_t>(px.w[t][c]) *
             (static_cast<int32_t>(px.in[t][c]) + s.input_offset);
    }
    op[c] = Finish<int8_t, int32_t>(s, sum, c);
  }
}

// The rows, with `block(px, c0, off, op)` summing the taps of channels
// [c0, c0 + 16) of the pixel at op, requantizing and storing them.
template <typename Block16>
inline __attribute__((always_inline)) void DepthwiseRowsInt8Body(
    const QConvState& s, const int8_t* in, const int8_t* w, int8_t* out,
    int64_t r0, int64_t r1, Block16 block) {
  const int16_t off = static_cast<int16_t>(s.input_offset);
  DwPixel px;
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / s.out_h);
    const int oy = static_cast<int>(r % s.out_h);
    for (int ox = 0; ox < s.out_w; ++ox) {
      int8_t* op = out + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.out_c;
      ListDwTaps(s, in, w, b, oy, ox, &px);
      int c0 = 0;
      for (; c0 + 16 <= s.out_c; c0 += 16) block(px, c0, off, op);
      FinishDwChannels(s, px, c0, op);
    }
  }
}

struct DwBlock {
  const QGemmRequant& rq;
  inline __attribute__((always_inline)) void operator()(const DwPixel& px,
                                                        int c0, int16_t off,
                                                        int8_t* op) const {
    V8i lo, hi;
    SumDwBlock(px, c0, off, &lo, &hi);
    int32_t res[16];
    RequantizeV8(rq, lo, c0, res);
    RequantizeV8(rq, hi, c0 + 8, res + 8);
    for (int c = 0; c < 16; ++c) op[c0 + c] = static_cast<int8_t>(res[c]);
  }
};

void DepthwiseRowsInt8(const QConvState& s, const int8_t* in, const int8_t* w,
                       int8_t* out, int64_t r0, int64_t r1) {
  DepthwiseRowsInt8Body(s, in, w, out, r0, r1, DwBlock{s.rq});
}

#if GRAFT_QGEMM_AVX2
// SumDwBlock in intrinsics: GCC splits the vector-extension widenings into
// 128-bit halves (four instructions each where AVX2 has one), which made
// them most of the loop. Not always_inline: the body above is inlined into
// the AVX2 function first, and only there may this be inlined (GCC refuses
// an AVX2 always_inline callee in a function without AVX2).
struct DwBlockAvx2 {
  const QGemmRequant& rq;
  __attribute__((target("avx2"))) inline void operator()(const DwPixel& px,
                                                         int c0, int16_t off,
                                                         int8_t* op) const {
    const __m256i voff = _mm256_set1_epi16(off);
    __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
    for (int t = 0; t < px.taps; ++t) {
      const __m256i x = _mm256_cvtepi8_epi16(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(px.in[t] + c0)));
      const __m256i wt = _mm256_cvtepi8_epi16(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(px.w[t] + c0)));
      const __m256i prod = _mm256_mullo_epi16(wt, _mm256_add_epi16(x, voff));
      lo = _mm256_add_epi32(
          lo, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(prod)));
      hi = _mm256_add_epi32(
          hi, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(prod, 1)));
    }
    StoreBytesAvx2(RequantizeAvx2(rq, lo, c0), RequantizeAvx2(rq, hi, c0 + 8),
                   16, reinterpret_cast<uint8_t*>(op + c0));
  }
};

__attribute__((target("avx2"))) void DepthwiseRowsInt8Avx2(
    const QConvState& s, const int8_t* in, const int8_t* w, int8_t* out,
    int64_t r0, int64_t r1) {
  DepthwiseRowsInt8Body(s, in, w, out, r0, r1, DwBlockAvx2{s.rq});
}

// The AVX-512 VNNI depthwise kernel. Channels go in blocks of 32 (the last
// one 16 wide where at most 16 channels remain, so that no vector is half
// empty), two taps at a time: the two taps' input bytes are interleaved
// (unpacklo/hi_epi8) and sign-extended to int16 pairs, which meet the
// filter packed the same way at prepare in one vpdpwssd per 16 channels,
// adding both products to each int32 lane. In a 32-wide block the lanes
// hold channels 0-7 and 16-23 (`lo`) and 8-15 and 24-31 (`hi`), per
// 128-bit lane of the interleave; the requantization constants (dw_rq)
// are stored in that lane order, so the bytes come back in channel order
// by two 64-bit unpacks. A 16-wide block is in channel order.
//
// The sums are of w * x, not w * (x + input_offset): the offset's share,
// input_offset times the sum of the channel's taps, is folded into dw_rq's
// bias, and a tap outside the input reads dw_pad, the zero point, whose
// w * zp cancels its share as the reference's skipped tap contributes
// nothing. The same integers in another order, so bit-exact.
//
// Every pixel reads its taps through a table of pointers built, with
// vector compares, for a chunk of up to kDwVnniChunk pixels at a time (a
// tap outside the input points at dw_pad), so border pixels cost what
// interior ones do (with per-pixel address arithmetic they cost as much
// as all interior pixels together on MobileNetV2's small late layers).
// Per chunk the channel blocks run outermost, each block's requantization
// constants loaded once for all of the chunk's pixels, four pixels at a
// time. A chunk is part of one row, or whole rows where those are at most
// 8 pixels wide.
//
// The requantization is quantized_gemm.h's; where rq.small_sums holds
// (the 32-bit finish) and the activation's floor is at least the output
// offset (ReLU, ReLU6), without the rounding correction for negative sums,
// which only lowers results the clamp lifts to act_min anyway: that took
// int8 MobileNetV2's depthwise ops another 10-12%.
constexpr int kDwVnniBlock = 32;
constexpr int kDwVnniChunk = 16;

inline int DwVnniPairs(const QConvState& s) { return (s.k_h * s.k_w + 1) / 2; }

// The width of the block of channels [c0, ...).
inline int DwVnniWidth(int out_c, int c0) {
  return out_c - c0 <= 16 ? 16 : kDwVnniBlock;
}

// The channel (from the block's first) of lane `lane` of a block of
// `width` channels; lanes 16-31 of a 32-wide block are its `hi` vector.
inline int DwVnniLaneChannel(int width, int lane) {
  if (width == 16) return lane;
  const int i = lane % 16;
  return (i < 8 ? i : i + 8) + 8 * (lane / 16);
}

}  // namespace

// dw_packed: per block of channels [c0, c0 + width), at c0 * pairs, per
// pair of taps (2p, 2p + 1 in row-major order; a missing last tap 0),
// `width` int32 lanes in DwVnniLaneChannel's order, each the two taps'
// int16 weights of one channel. dw_rq: s->rq with its per-channel arrays
// in the same lane order (channel c0 + DwVnniLaneChannel(width, i) at
// c0 + i) and the input offset's share added to the bias.
void PackDwVnni(const int8_t* w, QConvState* s) {
  const int taps = s->k_h * s->k_w, pairs = DwVnniPairs(*s);
  int lanes = 0;  // the blocks' widths summed
  for (int c0 = 0; c0 < s->out_c; c0 += kDwVnniBlock) {
    lanes += DwVnniWidth(s->out_c, c0);
  }
  s->dw_packed.assign(static_cast<size_t>(lanes) * pairs, 0);
  auto weight = [&](int t, int c) -> int32_t {
    return t < taps && c < s->out_c ? w[int64_t{t} * s->out_c + c] : 0;
  };
  const QGemmRequant& rq = s->rq;
  QGemmRequant& d = s->dw_rq;
  d = rq;
  const size_t n = static_cast<size_t>(lanes) + kQGemmNr;
  d.bias.assign(n, 0), d.mult.assign(n, 0), d.lshift.assign(n, 0);
  d.rshift.assign(n, 0), d.mask.assign(n, 0);
  for (int c0 = 0; c0 < s->out_c; c0 += kDwVnniBlock) {
    const int width = DwVnniWidth(s->out_c, c0);
    int32_t* dst = s->dw_packed.data() + int64_t{c0} * pairs;
    for (int p = 0; p < pairs; ++p, dst += width) {
      for (int i = 0; i < width; ++i) {
        const int c = c0 + DwVnniLaneChannel(width, i);
        const uint32_t lo = static_cast<uint16_t>(weight(2 * p, c));
        const uint32_t hi = static_cast<uint16_t>(weight(2 * p + 1, c));
        dst[i] = static_cast<int32_t>(lo | hi << 16);
      }
    }
    for (int i = 0; i < width; ++i) {
      const int c = c0 + DwVnniLaneChannel(width, i);
      if (c >= s->out_c) continue;
      int32_t sum = 0;
      for (int t = 0; t < taps; ++t) sum += w[int64_t{t} * s->out_c + c];
      // Wrapping, as the kernel's int32 lanes add them.
      d.bias[c0 + i] =
          static_cast<int32_t>(static_cast<uint32_t>(rq.bias[c]) +
                               static_cast<uint32_t>(s->input_offset * sum));
      d.mult[c0 + i] = rq.mult[c], d.lshift[c0 + i] = rq.lshift[c];
      d.rshift[c0 + i] = rq.rshift[c], d.mask[c0 + i] = rq.mask[c];
    }
  }
  s->dw_pad.assign(static_cast<size_t>(lanes),
                   static_cast<int8_t>(-s->input_offset));
}

namespace {

// acc + the two int16 products of each int32 lane of x and w (vpdpwssd),
// in asm for the reason quantized_gemm_avx512.cc's Dpbusd is: GCC 12 copies
// the intrinsic's accumulator to a fresh register each step, a move on
// the loop-carried chain.
GRAFT_AVX512_INLINE __m512i Dpwssd(__m512i acc, __m512i x, __m512i w) {
  asm("vpdpwssd %[w], %[x], %[acc]" : [acc] "+v"(acc) : [x] "v"(x), [w] "v"(w));
  return acc;
}

// Taps a and b of 16 channels, masked by m: int16 pairs (a, b) per int32
// lane, in channel order.
template <bool kFull>
GRAFT_AVX512_INLINE __m512i DwVnniTaps16(const int8_t* a, const int8_t* b,
                                         __mmask16 m) {
  const __m128i xa = kFull
                         ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(a))
                         : _mm_maskz_loadu_epi8(m, a);
  const __m128i xb = kFull
                         ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(b))
                         : _mm_maskz_loadu_epi8(m, b);
  return _mm512_cvtepi8_epi16(
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi8(xa, xb)),
                              _mm_unpackhi_epi8(xa, xb), 1));
}

// The same for 32 channels: lo and hi in DwVnniLaneChannel's order.
template <bool kFull>
GRAFT_AVX512_INLINE void DwVnniTaps32(const int8_t* a, const int8_t* b,
                                      __mmask32 m, __m512i* lo, __m512i* hi) {
  const __m256i xa =
      kFull ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a))
            : _mm256_maskz_loadu_epi8(m, a);
  const __m256i xb =
      kFull ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b))
            : _mm256_maskz_loadu_epi8(m, b);
  *lo = _mm512_cvtepi8_epi16(_mm256_unpacklo_epi8(xa, xb));
  *hi = _mm512_cvtepi8_epi16(_mm256_unpackhi_epi8(xa, xb));
}

// 16 sums requantized to bytes; in the fast form not yet clamped (the
// caller clamps the bytes: DwVnniClamp).
template <bool kFloorClamped>
GRAFT_AVX512_INLINE __m128i DwVnniBytes(const Requant16& r, __m512i acc) {
  if (kFloorClamped) {
    // DwVnniChunk's caller checks that RequantSmallClampedAvx512 is exact.
    return _mm512_cvtsepi32_epi8(
        RequantSmallClampedAvx512(r, _mm512_add_epi32(acc, r.offset)));
  }
  if (r.small_sums) {
    return _mm512_cvtsepi32_epi8(RequantDoubleSmallAvx512(r, acc));
  }
  if (r.fast_double) {
    return _mm512_cvtsepi32_epi8(RequantDoubleFastAvx512(r, acc));
  }
  return _mm512_cvtepi32_epi8(RequantDoubleAvx512(r, acc));
}

// As StoreClampedS8Avx512 says, narrowing with signed saturation and then
// clamping the bytes gives the bytes of the clamped int32 values.
GRAFT_AVX512_INLINE __m256i DwVnniClamp(const Requant16& r, __m256i v) {
  if (!r.fast_double) return v;  // RequantDoubleAvx512 clamped
  v = _mm256_max_epi8(v, _mm512_castsi512_si256(r.act_min8));
  return _mm256_min_epi8(v, _mm512_castsi512_si256(r.act_max8));
}

// Stores a 16-wide block's n (<= 16) channels at op.
template <bool kFull, bool kFloorClamped>
GRAFT_AVX512_INLINE void DwVnniStore16(const Requant16& r, __m512i acc, int n,
                                       int8_t* op) {
  const __m128i v = _mm256_castsi256_si128(DwVnniClamp(
      r, _mm256_castsi128_si256(DwVnniBytes<kFloorClamped>(r, acc))));
  if (kFull) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op), v);
  } else {
    _mm_mask_storeu_epi8(op, static_cast<__mmask16>((1u << n) - 1), v);
  }
}

// Stores a 32-wide block's n (<= 32) channels at op, lo and hi requantized
// with r_lo and r_hi.
template <bool kFull, bool kFloorClamped>
GRAFT_AVX512_INLINE void DwVnniStore32(const Requant16& r_lo,
                                       const Requant16& r_hi, __m512i lo,
                                       __m512i hi, __mmask32 m, int8_t* op) {
  const __m128i b_lo = DwVnniBytes<kFloorClamped>(r_lo, lo);  // 0-7, 16-23
  const __m128i b_hi = DwVnniBytes<kFloorClamped>(r_hi, hi);  // 8-15, 24-31
  const __m256i v = DwVnniClamp(
      r_lo, _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_unpacklo_epi64(b_lo, b_hi)),
                _mm_unpackhi_epi64(b_lo, b_hi), 1));
  if (kFull) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(op), v);
  } else {
    _mm256_mask_storeu_epi8(op, m, v);
  }
}

// Channels [c0, c0 + n) of the np pixels of a chunk (tap t of pixel i at
// tab[t * kDwVnniChunk + i], its output at op + i * out_c), a 32-wide
// block: four pixels at a time (eight independent chains of vpdpwssd,
// each filter vector loaded once for all four; 3-4% faster than two on
// MobileNetV2), then two, then one.
template <bool kFull, bool kFloorClamped>
GRAFT_AVX512_INLINE void DwVnniBlock32(const int8_t* const* tab, int np,
                                       int pairs, const int32_t* wp, int c0,
                                       __mmask32 m, const Requant16& r_lo,
                                       const Requant16& r_hi, int8_t* op,
                                       int out_c) {
  constexpr int kT = kDwVnniChunk;
  int i = 0;
  for (; i + 4 <= np; i += 4) {
    const int8_t* const* t = tab + i;
    __m512i lo0 = _mm512_setzero_si512(), hi0 = _mm512_setzero_si512();
    __m512i lo1 = _mm512_setzero_si512(), hi1 = _mm512_setzero_si512();
    __m512i lo2 = _mm512_setzero_si512(), hi2 = _mm512_setzero_si512();
    __m512i lo3 = _mm512_setzero_si512(), hi3 = _mm512_setzero_si512();
    const int32_t* w = wp;
    for (int p = 0; p < pairs; ++p, w += kDwVnniBlock, t += 2 * kT) {
      const __m512i w_lo = _mm512_loadu_si512(w);
      const __m512i w_hi = _mm512_loadu_si512(w + 16);
      __m512i l, h;
      DwVnniTaps32<kFull>(t[0] + c0, t[kT] + c0, m, &l, &h);
      lo0 = Dpwssd(lo0, l, w_lo);
      hi0 = Dpwssd(hi0, h, w_hi);
      DwVnniTaps32<kFull>(t[1] + c0, t[kT + 1] + c0, m, &l, &h);
      lo1 = Dpwssd(lo1, l, w_lo);
      hi1 = Dpwssd(hi1, h, w_hi);
      DwVnniTaps32<kFull>(t[2] + c0, t[kT + 2] + c0, m, &l, &h);
      lo2 = Dpwssd(lo2, l, w_lo);
      hi2 = Dpwssd(hi2, h, w_hi);
      DwVnniTaps32<kFull>(t[3] + c0, t[kT + 3] + c0, m, &l, &h);
      lo3 = Dpwssd(lo3, l, w_lo);
      hi3 = Dpwssd(hi3, h, w_hi);
    }
    int8_t* o = op + int64_t{i} * out_c + c0;
    DwVnniStore32<kFull, kFloorClamped>(r_lo, r_hi, lo0, hi0, m, o);
    DwVnniStore32<kFull, kFloorClamped>(r_lo, r_hi, lo1, hi1, m, o + out_c);
    DwVnniStore32<kFull, kFloorClamped>(r_lo, r_hi, lo2, hi2, m,
                                        o + 2 * int64_t{out_c});
    DwVnniStore32<kFull, kFloorClamped>(r_lo, r_hi, lo3, hi3, m,
                                        o + 3 * int64_t{out_c});
  }
  for (; i + 2 <= np; i += 2) {
    const int8_t* const* t = tab + i;
    __m512i lo0 = _mm512_setzero_si512(), hi0 = _mm512_setzero_si512();
    __m512i lo1 = _mm512_setzero_si512(), hi1 = _mm512_setzero_si512();
    const int32_t* w = wp;
    for (int p = 0; p < pairs; ++p, w += kDwVnniBlock, t += 2 * kT) {
      const __m512i w_lo = _mm512_loadu_si512(w);
      const __m512i w_hi = _mm512_loadu_si512(w + 16);
      __m512i l0, h0, l1, h1;
      DwVnniTaps32<kFull>(t[0] + c0, t[kT] + c0, m, &l0, &h0);
      DwVnniTaps32<kFull>(t[1] + c0, t[kT + 1] + c0, m, &l1, &h1);
      lo0 = Dpwssd(lo0, l0, w_lo);
      hi0 = Dpwssd(hi0, h0, w_hi);
      lo1 = Dpwssd(lo1, l1, w_lo);
      hi1 = Dpwssd(hi1, h1, w_hi);
    }
    int8_t* o = op + int64_t{i} * out_c + c0;
    DwVnniStore32<kFull, kFloorClamped>(r_lo, r_hi, lo0, hi0, m, o);
    DwVnniStore32<kFull, kFloorClamped>(r_lo, r_hi, lo1, hi1, m, o + out_c);
  }
  if (i < np) {
    const int8_t* const* t = tab + i;
    __m512i lo0 = _mm512_setzero_si512(), hi0 = _mm512_setzero_si512();
    const int32_t* w = wp;
    for (int p = 0; p < pairs; ++p, w += kDwVnniBlock, t += 2 * kT) {
      __m512i l0, h0;
      DwVnniTaps32<kFull>(t[0] + c0, t[kT] + c0, m, &l0, &h0);
      lo0 = Dpwssd(lo0, l0, _mm512_loadu_si512(w));
      hi0 = Dpwssd(hi0, h0, _mm512_loadu_si512(w + 16));
    }
    DwVnniStore32<kFull, kFloorClamped>(r_lo, r_hi, lo0, hi0, m,
                                        op + int64_t{i} * out_c + c0);
  }
}

// The same for a 16-wide block (n <= 16 channels): four pixels at a time.
template <bool kFull, bool kFloorClamped>
GRAFT_AVX512_INLINE void DwVnniBlock16(const int8_t* const* tab, int np,
                                       int pairs, const int32_t* wp, int c0,
                                       int n, const Requant16& r, int8_t* op,
                                       int out_c) {
  constexpr int kT = kDwVnniChunk;
  const __mmask16 m = static_cast<__mmask16>((1u << n) - 1);
  int i = 0;
  for (; i + 4 <= np; i += 4) {
    const int8_t* const* t = tab + i;
    __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
    __m512i a2 = _mm512_setzero_si512(), a3 = _mm512_setzero_si512();
    const int32_t* w = wp;
    for (int p = 0; p < pairs; ++p, w += 16, t += 2 * kT) {
      const __m512i wv = _mm512_loadu_si512(w);
      a0 = Dpwssd(a0, DwVnniTaps16<kFull>(t[0] + c0, t[kT] + c0, m), wv);
      a1 = Dpwssd(a1, DwVnniTaps16<kFull>(t[1] + c0, t[kT + 1] + c0, m), wv);
      a2 = Dpwssd(a2, DwVnniTaps16<kFull>(t[2] + c0, t[kT + 2] + c0, m), wv);
      a3 = Dpwssd(a3, DwVnniTaps16<kFull>(t[3] + c0, t[kT + 3] + c0, m), wv);
    }
    int8_t* o = op + int64_t{i} * out_c + c0;
    DwVnniStore16<kFull, kFloorClamped>(r, a0, n, o);
    DwVnniStore16<kFull, kFloorClamped>(r, a1, n, o + out_c);
    DwVnniStore16<kFull, kFloorClamped>(r, a2, n, o + 2 * int64_t{out_c});
    DwVnniStore16<kFull, kFloorClamped>(r, a3, n, o + 3 * int64_t{out_c});
  }
  for (; i < np; ++i) {
    const int8_t* const* t = tab + i;
    __m512i a0 = _mm512_setzero_si512();
    const int32_t* w = wp;
    for (int p = 0; p < pairs; ++p, w += 16, t += 2 * kT) {
      a0 = Dpwssd(a0, DwVnniTaps16<kFull>(t[0] + c0, t[kT] + c0, m),
                  _mm512_loadu_si512(w));
    }
    DwVnniStore16<kFull, kFloorClamped>(r, a0, n, op + int64_t{i} * out_c + c0);
  }
}

// A chunk's channel blocks: np pixels, tap table `tab`, outputs at op.
template <bool kFloorClamped>
GRAFT_AVX512_INLINE void DwVnniChunk(const QConvState& s,
                                     const int8_t* const* tab, int np,
                                     int pairs, int8_t* op) {
  for (int c0 = 0; c0 < s.out_c; c0 += kDwVnniBlock) {
    const int n = std::min(kDwVnniBlock, s.out_c - c0);
    const int32_t* wp = s.dw_packed.data() + int64_t{c0} * pairs;
    const Requant16 r_lo = LoadRequant16(s.dw_rq, c0, nullptr);
    if (n == kDwVnniBlock) {
      const Requant16 r_hi = LoadRequant16(s.dw_rq, c0 + 16, nullptr);
      DwVnniBlock32<true, kFloorClamped>(tab, np, pairs, wp, c0, ~__mmask32{0},
                                         r_lo, r_hi, op, s.out_c);
    } else if (n > 16) {
      const Requant16 r_hi = LoadRequant16(s.dw_rq, c0 + 16, nullptr);
      const __mmask32 m = static_cast<__mmask32>((uint64_t{1} << n) - 1);
      DwVnniBlock32<false, kFloorClamped>(tab, np, pairs, wp, c0, m, r_lo, r_hi,
                                          op, s.out_c);
    } else if (n == 16) {
      DwVnniBlock16<true, kFloorClamped>(tab, np, pairs, wp, c0, n, r_lo, op,
                                         s.out_c);
    } else {
      DwVnniBlock16<false, kFloorClamped>(tab, np, pairs, wp, c0, n, r_lo, op,
                                          s.out_c);
    }
  }
}

// Rows [r0, r1), a chunk of pixels at a time: the chunk's tap table, then
// its channel blocks (the kernel's comment above).
GRAFT_AVX512_TARGET void DepthwiseRowsInt8Vnni(const QConvState& s,
                                               const int8_t* in, int8_t* out,
                                               int64_t r0, int64_t r1) {
  constexpr int kT = kDwVnniChunk;
  const int taps = s.k_h * s.k_w, pairs = DwVnniPairs(s);
  const int8_t* const pad = s.dw_pad.data();
  static_assert(kT == 16, "the table is built 16 pixels at a time");
  const int64_t step = int64_t{s.stride_w} * s.in_c;
  // Tap t of the chunk's pixel i at tab[t * kT + i]; an odd last tap's
  // partner (weight 0) reads pad.
  alignas(64) const int8_t* tab[kT * (kDwMaxTaps + 1)];
  const __m512i iota =
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i in_w = _mm512_set1_epi32(s.in_w);
  const __m512i pad_v =
      _mm512_set1_epi64(static_cast<int64_t>(reinterpret_cast<uintptr_t>(pad)));
  // Pixel i's byte offset from pixel 0, for i in [0, 8) and [8, 16).
  const __m512i off_lo = _mm512_mullo_epi64(
      _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(step));
  const __m512i off_hi = _mm512_add_epi64(off_lo, _mm512_set1_epi64(8 * step));
  const __m512i ix_step =
      _mm512_mullo_epi32(iota, _mm512_set1_epi32(s.stride_w));
  // A chunk is up to kT pixels of one row or, where rows are at most
  // kT / 2 wide, as many whole rows (of any batch) as fit, so that the
  // small late layers fill it too.
  const int rows_per_chunk = s.out_w <= kT / 2 ? kT / s.out_w : 1;
  int b = static_cast<int>(r0 / s.out_h), oy = static_cast<int>(r0 % s.out_h);
  for (int64_t r = r0; r < r1;) {
    const int rows =
        static_cast<int>(std::min<int64_t>(rows_per_chunk, r1 - r));
    for (int ox0 = 0; ox0 < s.out_w; ox0 += kT) {
      const int np = rows > 1 ? rows * s.out_w : std::min(kT, s.out_w - ox0);
      // Per row of the chunk (lanes i0 on; the next row's overwrite those
      // past its end) and per tap, the 16 lanes' columns, in vectors: the
      // pointers of those inside the input, pad for the others.
      for (int k = 0, i0 = 0, rb = b, ry = oy; k < rows; ++k, i0 += s.out_w,
               ry = ry + 1 < s.out_h ? ry + 1 : 0, rb += ry == 0 ? 1 : 0) {
        const __mmask16 seg = static_cast<__mmask16>(~((1u << i0) - 1));
        for (int ky = 0, t = 0; ky < s.k_h; ++ky) {
          const int iy = ry * s.stride_h - s.pad_h + s.dil_h * ky;
          const bool row_in = iy >= 0 && iy < s.in_h;
          // As integers: the pointers formed are stored, but only those
          // inside the input are dereferenced.
          const uintptr_t row = reinterpret_cast<uintptr_t>(in) +
                                (int64_t{rb} * s.in_h + iy) * s.in_w * s.in_c;
          for (int kx = 0; kx < s.k_w; ++kx, ++t) {
            // Lane j's column: ixb + j * stride_w.
            const int ixb = (ox0 - i0) * s.stride_w - s.pad_w + s.dil_w * kx;
            const __m512i ix =
                _mm512_add_epi32(_mm512_set1_epi32(ixb), ix_step);
            __mmask16 inside =
                seg & _mm512_cmpge_epi32_mask(ix, _mm512_setzero_si512()) &
                _mm512_cmplt_epi32_mask(ix, in_w);
            if (!row_in) inside = 0;
            const __m512i p0 = _mm512_set1_epi64(static_cast<int64_t>(
                row + static_cast<uintptr_t>(int64_t{ixb} * s.in_c)));
            const int8_t** dst = tab + t * kT;
            const __m512i v_lo = _mm512_mask_add_epi64(
                pad_v, static_cast<__mmask8>(inside), p0, off_lo);
            const __m512i v_hi = _mm512_mask_add_epi64(
                pad_v, static_cast<__mmask8>(inside >> 8), p0, off_hi);
            if (i0 == 0) {
              _mm512_storeu_si512(dst, v_lo);
              _mm512_storeu_si512(dst + 8, v_hi);
            } else {
              _mm512_mask_storeu_epi64(dst, static_cast<__mmask8>(seg), v_lo);
              _mm512_mask_storeu_epi64(dst + 8, static_cast<__mmask8>(seg >> 8),
                                       v_hi);
            }
          }
        }
      }
      if (taps < 2 * pairs) {
        for (int i = 0; i < kT; ++i) tab[taps * kT + i] = pad;
      }
      int8_t* op = out + (r * s.out_w + ox0) * s.out_c;
      // Where sums plus biases fit 32 bits and the clamp's floor is at
      // least the output offset, the requantization skips its rounding
      // correction for negative sums (DwVnniBytes).
      if (s.dw_rq.small_sums && s.dw_rq.act_min >= s.dw_rq.output_offset) {
        DwVnniChunk<true>(s, tab, np, pairs, op);
      } else {
        DwVnniChunk<false>(s, tab, np, pairs, op);
      }
    }
    r += rows;
    for (int k = 0; k < rows; ++k) {
      if (++oy == s.out_h) oy = 0, ++b;
    }
  }
}
#endif

CallCounter g_dw_calls[3];

void CountCall(CpuIsa path) {
  g_dw_calls[static_cast<int>(path)].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void DepthwiseRowsInt8Fast(const QConvState& s, const int8_t* in,
                           const int8_t* w, int8_t* out, int64_t r0,
                           int64_t r1) {
#if GRAFT_QGEMM_AVX2
  if (s.dw_vnni) {
    CountCall(CpuIsa::kAvx512Vnni);
    DepthwiseRowsInt8Vnni(s, in, out, r0, r1);
    return;
  }
  if (KernelIsaAtLeast(CpuIsa::kAvx2)) {
    CountCall(CpuIsa::kAvx2);
    DepthwiseRowsInt8Avx2(s, in, w, out, r0, r1);
    return;
  }
#endif
  CountCall(CpuIsa::kBaseline);
  DepthwiseRowsInt8(s, in, w, out, r0, r1);
}

int64_t QDepthwiseCallsForTesting(CpuIsa path) {
  return g_dw_calls[static_cast<int>(path)].load(std::memory_order_relaxed);
}

}  // namespace graft::kernels
