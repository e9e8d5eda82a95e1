// Quantized CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV with TFLite's
// integer semantics (reference_integer_ops::ConvPerChannel,
// DepthwiseConvPerChannel, TransposeConv):
//
// - INT8 activations with INT8 weights (per-channel or per-tensor, zero
//   point 0) and INT32 bias: int32 accumulation of
//   filter * (input - input_zero_point), plus bias, scaled per output
//   channel by input_scale * filter_scale[c] / output_scale.
// - 16x8: INT16 activations (zero point 0) with INT8 weights and INT64 (or
//   INT32) bias: int64 accumulation, scaled by the int64
//   MultiplyByQuantizedMultiplier.
//
// On AVX-512 VNNI machines (cpu_features.h) a one-group INT8 CONV_2D takes
// QGemmVnni instead: the im2col rows hold input + 128 as unsigned bytes and
// the filter is packed at prepare for vpdpbusd (quantized_gemm.h says how
// the shift is compensated); an INT8 DEPTHWISE_CONV_2D with constant
// weights takes DepthwiseRowsInt8Vnni (vpdpwssd on two taps at a time,
// the filter packed at prepare).
//
// INT8 CONV_2D with constant weights is lowered to an integer GEMM: chunks
// of output pixels are expanded (im2col) into an int16 buffer holding
// input + input_offset (0 where the window leaves the input, which the
// reference skips), multiplied by the filter packed at prepare time into
// column panels, and requantized per channel: the GEMM of
// quantized_gemm.h, shared with FULLY_CONNECTED and BATCH_MATMUL. INT8
// DEPTHWISE_CONV_2D with depth multiplier 1 (filters up to 7x7) sums 16
// channels of a pixel at a time over its taps, channel innermost. Both
// vectorize and give the same int32 sums as the reference loops (integer
// addition is associative), so results are bit-exact. Other cases (16x8, depth
// multiplier > 1, weights computed at run time) run the reference kernels'
// direct loops. Work is split over output rows across the thread pool; the
// result does not depend on the split because each output is one integer sum.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "dispatch/kernels/quantized_gemm.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

enum class ConvKind { kConv, kDepthwise, kTranspose };

// The GEMM micro-tile (quantized_gemm.h): kQMr output pixels x kQNr
// output channels.
constexpr int kQMr = kQGemmMr;
constexpr int kQNr = kQGemmNr;
// Output pixels per im2col chunk (at most): the chunk's int16 rows stay in
// L2 for MobileNet-sized K.
constexpr int64_t kQChunkRows = 64;
// The most taps (7 x 7) the int8 depthwise fast path lists per pixel.
constexpr int kDwMaxTaps = 49;

// An AVX2 clone beside the baseline, picked at load time (as gemm.cc).
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
#define GRAFT_QCONV_TARGET_CLONES \
  __attribute__((target_clones("avx2", "default")))
#else
#define GRAFT_QCONV_TARGET_CLONES
#endif

struct QConvState : KernelState {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int out_h = 0, out_w = 0, out_c = 0;
  int k_h = 0, k_w = 0;
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int pad_h = 0, pad_w = 0;
  int group_in_c = 0, group_out_c = 0;  // CONV_2D groups
  int depth_multiplier = 1;             // DEPTHWISE_CONV_2D
  int32_t input_offset = 0, output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  std::vector<QuantizedMultiplier> mult;  // per output channel
  std::vector<int64_t> bias;              // per output channel (0 if none)
  // INT8 CONV_2D GEMM path (EvalQConvGemm).
  int64_t k = 0;           // k_h * k_w * group_in_c
  int panels = 0;          // per group, ceil(group_out_c / kQNr)
  int64_t chunk_rows = 0;  // output pixels per im2col chunk
  int threads = 1;
  // Per group, `panels` panels of [k][kQNr] filter values (QGemmPackRows).
  std::vector<int16_t> packed;
  // Or, on AVX-512 VNNI (one group): the filter packed for QGemmVnni, a
  // holding input + 128 as unsigned bytes (EvalQConvVnni).
  QGemmVnniWeights vnni;
  // INT8 DEPTHWISE_CONV_2D channel-innermost path.
  bool dw_fast = false;
  // Its AVX-512 VNNI form (DepthwiseRowsInt8Vnni), chosen at prepare: the
  // filter packed by PackDwVnni, per channel input_offset times the sum of
  // the channel's taps, and a pixel of input zero points for the taps that
  // fall outside the input.
  bool dw_vnni = false;
  std::vector<int32_t> dw_packed;
  std::vector<int32_t> dw_offset;
  std::vector<int8_t> dw_pad;
  // Vector requantization of the GEMM and depthwise paths.
  QGemmRequant rq;
};

template <typename Acc>
inline int32_t Requantize(Acc acc, const QuantizedMultiplier& m) {
  return MultiplyByQuantizedMultiplier(acc, m.multiplier, m.shift);
}

template <typename T, typename Acc>
inline T Finish(const QConvState& s, Acc acc, int oc) {
  acc += static_cast<Acc>(s.bias[oc]);
  int32_t v = Requantize(acc, s.mult[oc]) + s.output_offset;
  v = std::min(s.act_max, std::max(s.act_min, v));
  return static_cast<T>(v);
}

void PrepareRequantizeV8(QConvState* s) {
  QGemmPrepareRequant(s->mult, s->bias, /*single_rounding=*/false,
                      s->output_offset, s->act_min, s->act_max, &s->rq);
  // Each output is a sum of k products w * (x + input_offset) (INT8 weights
  // with zero point 0, |w| <= 128; |x + input_offset| <= 255) plus the
  // bias: where that stays below 2^30 in magnitude, the VNNI GEMM's
  // requantization may finish in 32 bits (RequantDoubleSmallAvx512).
  const int64_t taps = s->k != 0 ? s->k : int64_t{s->k_h} * s->k_w;
  int64_t max_bias = 0;
  for (int64_t b : s->bias) max_bias = std::max(max_bias, b < 0 ? -b : b);
  s->rq.small_sums = s->rq.fast_double &&
                     taps * 255 * 128 + max_bias < (int64_t{1} << 30);
}

void PackQFilter(QConvState* s, const int8_t* w) {
  const int groups = s->in_c / s->group_in_c;
  s->panels = static_cast<int>(QGemmPanels(s->group_out_c));
  const int64_t group_size = QGemmPackedSize(s->group_out_c, s->k);
  s->packed.assign(static_cast<size_t>(groups * group_size), 0);
  for (int g = 0; g < groups; ++g) {
    QGemmPackRows(w + int64_t{g} * s->group_out_c * s->k, s->group_out_c, s->k,
                  s->k, /*w_offset=*/0, s->packed.data() + g * group_size);
  }
}

// Rows [r0, r1) of group g's im2col matrix in a GEMM's a layout: rows of
// kp elements (the ones past k zero), each tap's group_in_c input bytes
// converted by copy(src, n, dst), `pad` where the window leaves the input.
// With one group and dilation 1, a filter row inside the input reads
// consecutive whole pixels: one copy of k_w * in_c bytes. The pixel
// coordinates advance row by row (no divisions per row). Shared by the
// int16 rows of QGemm and the unsigned-byte rows of QGemmVnni.
template <typename Out, typename Copy>
inline __attribute__((always_inline)) void Im2ColRows(const QConvState& s,
                                                      const int8_t* in, int g,
                                                      int64_t r0, int64_t r1,
                                                      int64_t kp, Out pad,
                                                      const Copy& copy,
                                                      Out* col) {
  const int64_t c0 = int64_t{g} * s.group_in_c;
  const int gc = s.group_in_c;
  const bool runs = gc == s.in_c && s.dil_w == 1;
  int64_t b = r0 / (int64_t{s.out_h} * s.out_w);
  int oy = static_cast<int>(r0 / s.out_w % s.out_h);
  int ox = static_cast<int>(r0 % s.out_w);
  for (int64_t r = r0; r < r1; ++r) {
    Out* dst = col + (r - r0) * kp;
    std::fill(dst + s.k, dst + kp, Out{0});
    const int ix0 = ox * s.stride_w - s.pad_w;
    const bool cols_in = runs && ix0 >= 0 && ix0 + s.k_w <= s.in_w;
    for (int ky = 0; ky < s.k_h; ++ky) {
      const int iy = oy * s.stride_h - s.pad_h + ky * s.dil_h;
      const bool row_in = iy >= 0 && iy < s.in_h;
      const int8_t* row =
          row_in ? in + (b * s.in_h + iy) * s.in_w * s.in_c : nullptr;
      if (row_in && cols_in) {
        copy(row + int64_t{ix0} * s.in_c, int64_t{s.k_w} * s.in_c, dst);
        dst += int64_t{s.k_w} * s.in_c;
        continue;
      }
      for (int kx = 0; kx < s.k_w; ++kx) {
        const int ix = ix0 + kx * s.dil_w;
        if (!row_in || ix < 0 || ix >= s.in_w) {
          std::fill(dst, dst + gc, pad);
        } else {
          copy(row + int64_t{ix} * s.in_c + c0, gc, dst);
        }
        dst += gc;
      }
    }
    if (++ox == s.out_w) {
      ox = 0;
      if (++oy == s.out_h) oy = 0, ++b;
    }
  }
}

// Rows [r0, r1) of group g's im2col matrix, as input + input_offset, in
// QGemm's a layout (rows of QGemmPaddedK(k), the pad zero); 0 where the
// window leaves the input, which the reference skips.
GRAFT_QCONV_TARGET_CLONES
void QIm2Col(const QConvState& s, const int8_t* in, int g, int64_t r0,
             int64_t r1, int16_t* col) {
  const int64_t kp = QGemmPaddedK(s.k);
  const int64_t c0 = int64_t{g} * s.group_in_c;
  const int32_t off = s.input_offset;
  // A 1x1 convolution with stride 1 and no padding reads input pixel r for
  // row r: no index arithmetic, and one widening for the whole chunk when
  // a row is a whole input pixel with no pad column.
  if (s.k_h == 1 && s.k_w == 1 && s.stride_h == 1 && s.stride_w == 1 &&
      s.pad_h == 0 && s.pad_w == 0) {
    const int8_t* src = in + r0 * s.in_c + c0;
    if (s.group_in_c == s.in_c && kp == s.k) {
      WidenWithOffsetInline<int8_t, V16b>(src, (r1 - r0) * s.k, off, col);
      return;
    }
    for (int64_t r = r0; r < r1; ++r, src += s.in_c) {
      int16_t* dst = col + (r - r0) * kp;
      WidenWithOffsetInline<int8_t, V16b>(src, s.group_in_c, off, dst);
      if (kp != s.k) dst[s.k] = 0;
    }
    return;
  }
  Im2ColRows(
      s, in, g, r0, r1, kp, int16_t{0},
      [off](const int8_t* src, int64_t n, int16_t* dst) {
        WidenWithOffsetInline<int8_t, V16b>(src, n, off, dst);
      },
      col);
}

absl::Status EvalQConvGemm(EvalContext& ctx) {
  const auto& s = *ctx.state<QConvState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  int16_t* scratch = ctx.scratch_as<int16_t>();
  const int64_t kp = QGemmPaddedK(s.k);
  const int groups = s.in_c / s.group_in_c;
  const int64_t rows = int64_t{s.batch} * s.out_h * s.out_w;
  const int64_t chunks = (rows + s.chunk_rows - 1) / s.chunk_rows;
  auto body = [&](int thread, int64_t begin, int64_t end) {
    int16_t* col = scratch + thread * s.chunk_rows * kp;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * s.chunk_rows;
      const int64_t r1 = std::min(rows, r0 + s.chunk_rows);
      for (int g = 0; g < groups; ++g) {
        QIm2Col(s, in, g, r0, r1, col);
        QGemm(col, r1 - r0, s.k,
              s.packed.data() + g * QGemmPackedSize(s.group_out_c, s.k),
              s.group_out_c, 0, s.panels, s.rq, int64_t{g} * s.group_out_c,
              out + r0 * s.out_c + int64_t{g} * s.group_out_c, s.out_c);
      }
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelForWithThreadIndex(chunks, 1, body);
  } else {
    body(0, 0, chunks);
  }
  return absl::OkStatus();
}

// dst[i] = src[i] + 128 as unsigned bytes, i < n (an im2col run). In the
// AVX-512 build (the only one that runs it: the VNNI path), inline: whole
// 64-byte blocks, then one masked block for the rest, so a short run (a
// 3x3 filter row of 16 channels: 48 bytes) is one masked load, XOR and
// store where eight-byte steps took six of each. Elsewhere the portable
// loop (never run: KernelIsa() is never kAvx512Vnni there).
#if GRAFT_QGEMM_AVX2
#define GRAFT_QCONV_VNNI_TARGET GRAFT_AVX512_TARGET
GRAFT_AVX512_INLINE void FlipBytes(const int8_t* src, int64_t n,
                                   uint8_t* dst) {
  FlipToUnsignedAvx512(src, n, dst);
}
#else
#define GRAFT_QCONV_VNNI_TARGET
inline void FlipBytes(const int8_t* src, int64_t n, uint8_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ 0x80);
}
#endif

// Rows [r0, r1) of the im2col matrix (one group) for QGemmVnni: input +
// 128 as unsigned bytes, rows of QGemmVnniPaddedK(k) bytes, the pad zero;
// where the window leaves the input, the zero point + 128 (whose product
// the column term cancels, as the reference skips it).
GRAFT_QCONV_VNNI_TARGET void QIm2ColVnni(const QConvState& s,
                                         const int8_t* in, int64_t r0,
                                         int64_t r1, uint8_t* col) {
  const int64_t kp = QGemmVnniPaddedK(s.k);
  if (s.k_h == 1 && s.k_w == 1 && s.stride_h == 1 && s.stride_w == 1 &&
      s.pad_h == 0 && s.pad_w == 0) {
    if (kp == s.k) {
      QGemmVnniFlip(in + r0 * s.in_c, (r1 - r0) * s.k, col);
    } else {
      QGemmVnniRowsFromInt8(in + r0 * s.in_c, r1 - r0, s.k, s.in_c, col);
    }
    return;
  }
  Im2ColRows(
      s, in, 0, r0, r1, kp, static_cast<uint8_t>(128 - s.input_offset),
      [](const int8_t* src, int64_t n, uint8_t* dst) GRAFT_QCONV_VNNI_TARGET {
        FlipBytes(src, n, dst);
      },
      col);
}

absl::Status EvalQConvVnni(EvalContext& ctx) {
  const auto& s = *ctx.state<QConvState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  uint8_t* scratch = ctx.scratch_as<uint8_t>();
  const int64_t kp = QGemmVnniPaddedK(s.k);
  const int64_t rows = int64_t{s.batch} * s.out_h * s.out_w;
  const int64_t chunks = (rows + s.chunk_rows - 1) / s.chunk_rows;
  auto body = [&](int thread, int64_t begin, int64_t end) {
    uint8_t* col = scratch + thread * s.chunk_rows * kp;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * s.chunk_rows;
      const int64_t r1 = std::min(rows, r0 + s.chunk_rows);
      QIm2ColVnni(s, in, r0, r1, col);
      QGemmVnni(col, r1 - r0, s.vnni, 0, s.panels, s.rq, 0, out + r0 * s.out_c,
                s.out_c);
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelForWithThreadIndex(chunks, 1, body);
  } else {
    body(0, 0, chunks);
  }
  return absl::OkStatus();
}

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

// The AVX-512 VNNI depthwise kernel. Two taps at a time: their 32
// channels' inputs, sign-extended to int16 and interleaved (unpacklo/hi:
// per 128-bit lane, channels 8L..8L+3 and 8L+4..8L+7), meet the filter
// packed the same way at prepare in one vpdpwssd per 16 channels, which
// adds both products to each int32 lane. The sums are of w * x, not
// w * (x + input_offset): the offset's share, input_offset times the sum
// of the channel's taps, is added with the bias (dw_offset), and a tap
// outside the input reads dw_pad, the zero point, whose w * zp cancels its
// share as the reference's skipped tap contributes nothing. The same
// integers in another order, so bit-exact. Every channel count runs in
// this one loop: the last block's loads and stores are masked.
constexpr int kDwVnniBlock = 32;

inline int DwVnniPairs(const QConvState& s) { return (s.k_h * s.k_w + 1) / 2; }

// dw_packed: per block of 32 channels, per pair of taps (2p, 2p + 1 in
// row-major order; a missing last tap 0), the lo then the hi vector of 16
// int32 lanes, each the two taps' int16 weights of one channel.
void PackDwVnni(const int8_t* w, QConvState* s) {
  const int taps = s->k_h * s->k_w, pairs = DwVnniPairs(*s);
  const int blocks = (s->out_c + kDwVnniBlock - 1) / kDwVnniBlock;
  s->dw_packed.assign(static_cast<size_t>(blocks) * pairs * kDwVnniBlock, 0);
  auto weight = [&](int t, int c) -> int32_t {
    return t < taps && c < s->out_c ? w[int64_t{t} * s->out_c + c] : 0;
  };
  for (int blk = 0; blk < blocks; ++blk) {
    for (int p = 0; p < pairs; ++p) {
      int32_t* dst =
          s->dw_packed.data() + (int64_t{blk} * pairs + p) * kDwVnniBlock;
      for (int half = 0; half < 2; ++half) {
        for (int i = 0; i < 16; ++i) {
          const int c = blk * kDwVnniBlock + 8 * (i / 4) + 4 * half + i % 4;
          const uint32_t lo = static_cast<uint16_t>(weight(2 * p, c));
          const uint32_t hi = static_cast<uint16_t>(weight(2 * p + 1, c));
          dst[half * 16 + i] = static_cast<int32_t>(lo | hi << 16);
        }
      }
    }
  }
  // Padded as rq's vectors, so a block's second 16 lanes read in bounds.
  s->dw_offset.assign(static_cast<size_t>(blocks) * kDwVnniBlock + kQGemmNr,
                      0);
  for (int c = 0; c < s->out_c; ++c) {
    int32_t sum = 0;
    for (int t = 0; t < taps; ++t) sum += w[int64_t{t} * s->out_c + c];
    s->dw_offset[c] = s->input_offset * sum;
  }
  s->dw_pad.assign(static_cast<size_t>(blocks) * kDwVnniBlock,
                   static_cast<int8_t>(-s->input_offset));
}

// acc + the two int16 products of each int32 lane of x and w (vpdpwssd),
// in asm for the reason quantized_gemm_avx512.cc's Dpbusd is: GCC 12 copies
// the intrinsic's accumulator to a fresh register each step, a move on
// the loop-carried chain.
GRAFT_AVX512_INLINE __m512i Dpwssd(__m512i acc, __m512i x, __m512i w) {
  asm("vpdpwssd %[w], %[x], %[acc]" : [acc] "+v"(acc) : [x] "v"(x), [w] "v"(w));
  return acc;
}

// The sums lo and hi of channels [c0, c0 + n) (n <= 32; lane order as
// DepthwiseRowsInt8Vnni's comment says) requantized with r_lo / r_hi
// (channels c0 and c0 + 16; r_hi is used only where n > 16) and stored at
// op + c0.
GRAFT_AVX512_INLINE void DwVnniStore(__m512i lo, __m512i hi, int c0, int n,
                                     const Requant16& r_lo,
                                     const Requant16& r_hi, int8_t* op) {
  // The lanes of lo and hi back in channel order: channels 0-15, 16-31.
  const __m512i order0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5,
                                           6, 7, 20, 21, 22, 23);
  uint8_t* dst = reinterpret_cast<uint8_t*>(op + c0);
  // Not RequantDoubleSmallAvx512 (rq.small_sums): a third form here made
  // MobileNetV2's depthwise convs 13-25% slower (per-op medians) though
  // it is 3 operations shorter.
  const bool fast = r_lo.fast_double;
  auto store = [fast](const Requant16& r, __m512i acc, int cols,
                      uint8_t* op) GRAFT_AVX512_TARGET {
    if (fast) {
      StoreClampedS8Avx512(r, RequantDoubleFastAvx512(r, acc), cols, op);
    } else {
      StoreBytesAvx512(RequantDoubleAvx512(r, acc), cols, op);
    }
  };
  store(r_lo, _mm512_permutex2var_epi32(lo, order0, hi), std::min(n, 16), dst);
  if (n > 16) {
    const __m512i order1 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12,
                                             13, 14, 15, 28, 29, 30, 31);
    store(r_hi, _mm512_permutex2var_epi32(lo, order1, hi), n - 16, dst + 16);
  }
}

// One pixel's channels [c0, c0 + n) (`m` their mask), tap t read at
// addr(t) + c0, summed and stored as DwVnniStore says.
template <typename Addr>
GRAFT_AVX512_INLINE void DwVnniPixel(int pairs, const int32_t* wp,
                                     const Addr& addr, int c0, int n,
                                     __mmask32 m, const Requant16& r_lo,
                                     const Requant16& r_hi, int8_t* op) {
  __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
  for (int p = 0; p < pairs; ++p, wp += kDwVnniBlock) {
    const __m512i xa =
        _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, addr(2 * p) + c0));
    const __m512i xb =
        _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, addr(2 * p + 1) + c0));
    lo = Dpwssd(lo, _mm512_unpacklo_epi16(xa, xb), _mm512_loadu_si512(wp));
    hi = Dpwssd(hi, _mm512_unpackhi_epi16(xa, xb), _mm512_loadu_si512(wp + 16));
  }
  DwVnniStore(lo, hi, c0, n, r_lo, r_hi, op);
}

// Two neighbouring interior pixels at once (their windows `step` bytes
// apart, outputs at op and op + out_c): four independent chains of
// vpdpwssd instead of two, each filter vector loaded once for both.
GRAFT_AVX512_INLINE void DwVnniPixelPair(int pairs, const int32_t* wp,
                                         const int8_t* corner, int64_t step,
                                         const int64_t* tap_off, int c0, int n,
                                         __mmask32 m, const Requant16& r_lo,
                                         const Requant16& r_hi, int8_t* op,
                                         int out_c) {
  __m512i lo0 = _mm512_setzero_si512(), hi0 = _mm512_setzero_si512();
  __m512i lo1 = _mm512_setzero_si512(), hi1 = _mm512_setzero_si512();
  const int8_t* x0 = corner + c0;
  const int8_t* x1 = corner + step + c0;
  for (int p = 0; p < pairs; ++p, wp += kDwVnniBlock) {
    const int64_t ta = tap_off[2 * p], tb = tap_off[2 * p + 1];
    const __m512i w_lo = _mm512_loadu_si512(wp);
    const __m512i w_hi = _mm512_loadu_si512(wp + 16);
    const __m512i a0 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x0 + ta));
    const __m512i b0 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x0 + tb));
    const __m512i a1 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x1 + ta));
    const __m512i b1 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, x1 + tb));
    lo0 = Dpwssd(lo0, _mm512_unpacklo_epi16(a0, b0), w_lo);
    hi0 = Dpwssd(hi0, _mm512_unpackhi_epi16(a0, b0), w_hi);
    lo1 = Dpwssd(lo1, _mm512_unpacklo_epi16(a1, b1), w_lo);
    hi1 = Dpwssd(hi1, _mm512_unpackhi_epi16(a1, b1), w_hi);
  }
  DwVnniStore(lo0, hi0, c0, n, r_lo, r_hi, op);
  DwVnniStore(lo1, hi1, c0, n, r_lo, r_hi, op + out_c);
}

// Rows [r0, r1): per row, the pixels whose whole window lies inside the
// input (most of them) channel block by block, the block's requantization
// constants loaded once and each tap at a fixed offset from the window's
// corner; the others pixel by pixel, taps outside the input read dw_pad.
GRAFT_AVX512_TARGET void DepthwiseRowsInt8Vnni(const QConvState& s,
                                               const int8_t* in, int8_t* out,
                                               int64_t r0, int64_t r1) {
  const int taps = s.k_h * s.k_w, pairs = DwVnniPairs(s);
  const int64_t pixel_step = int64_t{s.stride_w} * s.in_c;
  int64_t tap_off[kDwMaxTaps + 1];
  for (int ky = 0, t = 0; ky < s.k_h; ++ky) {
    for (int kx = 0; kx < s.k_w; ++kx, ++t) {
      tap_off[t] = (int64_t{ky} * s.dil_h * s.in_w + int64_t{kx} * s.dil_w) *
                   s.in_c;
    }
  }
  tap_off[taps] = 0;  // the odd last tap's partner (weight 0)
  // Output columns whose window is inside the input's width: [ox_lo, ox_hi).
  const int span_w = (s.k_w - 1) * s.dil_w;
  const int ox_lo = std::min(s.out_w, (s.pad_w + s.stride_w - 1) / s.stride_w);
  const int ox_hi = std::max(
      ox_lo, std::min(s.out_w, s.in_w - span_w + s.pad_w > 0
                                   ? (s.in_w - 1 - span_w + s.pad_w) /
                                             s.stride_w +
                                         1
                                   : 0));
  const int8_t* x[kDwMaxTaps + 1];
  x[taps] = s.dw_pad.data();
  auto edge_pixel = [&](int b, int oy, int ox) GRAFT_AVX512_TARGET {
    for (int ky = 0, t = 0; ky < s.k_h; ++ky) {
      const int iy = oy * s.stride_h - s.pad_h + s.dil_h * ky;
      const bool row_in = iy >= 0 && iy < s.in_h;
      for (int kx = 0; kx < s.k_w; ++kx, ++t) {
        const int ix = ox * s.stride_w - s.pad_w + s.dil_w * kx;
        x[t] = row_in && ix >= 0 && ix < s.in_w
                   ? in + ((int64_t{b} * s.in_h + iy) * s.in_w + ix) * s.in_c
                   : s.dw_pad.data();
      }
    }
    int8_t* op = out + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.out_c;
    auto addr = [&](int t) { return x[t]; };
    const int32_t* wp = s.dw_packed.data();
    for (int c0 = 0; c0 < s.out_c;
         c0 += kDwVnniBlock, wp += int64_t{pairs} * kDwVnniBlock) {
      const int n = std::min(kDwVnniBlock, s.out_c - c0);
      const __mmask32 m = static_cast<__mmask32>((uint64_t{1} << n) - 1);
      const Requant16 r_lo = LoadRequant16(s.rq, c0, s.dw_offset.data() + c0);
      const Requant16 r_hi =
          n > 16 ? LoadRequant16(s.rq, c0 + 16, s.dw_offset.data() + c0 + 16)
                 : r_lo;
      DwVnniPixel(pairs, wp, addr, c0, n, m, r_lo, r_hi, op);
    }
  };
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / s.out_h);
    const int oy = static_cast<int>(r % s.out_h);
    const int iy0 = oy * s.stride_h - s.pad_h;
    const bool rows_in = iy0 >= 0 && iy0 + (s.k_h - 1) * s.dil_h < s.in_h;
    if (!rows_in || ox_lo >= ox_hi) {
      for (int ox = 0; ox < s.out_w; ++ox) edge_pixel(b, oy, ox);
      continue;
    }
    for (int ox = 0; ox < ox_lo; ++ox) edge_pixel(b, oy, ox);
    const int8_t* row_in =
        in + ((int64_t{b} * s.in_h + iy0) * s.in_w +
              (int64_t{ox_lo} * s.stride_w - s.pad_w)) *
                 s.in_c;
    int8_t* row_out =
        out + ((int64_t{b} * s.out_h + oy) * s.out_w + ox_lo) * s.out_c;
    const int32_t* wp = s.dw_packed.data();
    for (int c0 = 0; c0 < s.out_c;
         c0 += kDwVnniBlock, wp += int64_t{pairs} * kDwVnniBlock) {
      const int n = std::min(kDwVnniBlock, s.out_c - c0);
      const __mmask32 m = static_cast<__mmask32>((uint64_t{1} << n) - 1);
      const Requant16 r_lo = LoadRequant16(s.rq, c0, s.dw_offset.data() + c0);
      const Requant16 r_hi =
          n > 16 ? LoadRequant16(s.rq, c0 + 16, s.dw_offset.data() + c0 + 16)
                 : r_lo;
      const int8_t* corner = row_in;
      int8_t* op = row_out;
      int ox = ox_lo;
      for (; ox + 2 <= ox_hi;
           ox += 2, corner += 2 * pixel_step, op += 2 * s.out_c) {
        DwVnniPixelPair(pairs, wp, corner, pixel_step, tap_off, c0, n, m, r_lo,
                        r_hi, op, s.out_c);
      }
      if (ox < ox_hi) {
        auto addr = [&](int t) { return corner + tap_off[t]; };
        DwVnniPixel(pairs, wp, addr, c0, n, m, r_lo, r_hi, op);
      }
    }
    for (int ox = ox_hi; ox < s.out_w; ++ox) edge_pixel(b, oy, ox);
  }
}
#endif

using DwRowsFn = void (*)(const QConvState&, const int8_t*, const int8_t*,
                          int8_t*, int64_t, int64_t);

std::atomic<int64_t> g_dw_calls[3];

// The kernel for KernelIsa() (the VNNI one is chosen at prepare, with its
// packing); counted.
DwRowsFn PickDepthwiseRowsInt8() {
#if GRAFT_QGEMM_AVX2
  if (KernelIsaAtLeast(CpuIsa::kAvx2)) {
    g_dw_calls[static_cast<int>(CpuIsa::kAvx2)].fetch_add(
        1, std::memory_order_relaxed);
    return DepthwiseRowsInt8Avx2;
  }
#endif
  g_dw_calls[static_cast<int>(CpuIsa::kBaseline)].fetch_add(
      1, std::memory_order_relaxed);
  return DepthwiseRowsInt8;
}

template <typename T, typename Acc>
void ConvRows(const QConvState& s, const T* in, const int8_t* w, T* out,
              int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / s.out_h);
    const int oy = static_cast<int>(r % s.out_h);
    for (int ox = 0; ox < s.out_w; ++ox) {
      const int iy0 = oy * s.stride_h - s.pad_h;
      const int ix0 = ox * s.stride_w - s.pad_w;
      for (int oc = 0; oc < s.out_c; ++oc) {
        const int g = oc / s.group_out_c;
        Acc acc = 0;
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int iy = iy0 + s.dil_h * ky;
          if (iy < 0 || iy >= s.in_h) continue;
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int ix = ix0 + s.dil_w * kx;
            if (ix < 0 || ix >= s.in_w) continue;
            const T* ip = in +
                          ((int64_t{b} * s.in_h + iy) * s.in_w + ix) * s.in_c +
                          g * s.group_in_c;
            const int8_t* wp =
                w + ((int64_t{oc} * s.k_h + ky) * s.k_w + kx) * s.group_in_c;
            for (int ic = 0; ic < s.group_in_c; ++ic) {
              acc += static_cast<Acc>(wp[ic]) *
                     static_cast<Acc>(ip[ic] + s.input_offset);
            }
          }
        }
        out[((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.out_c + oc] =
            Finish<T, Acc>(s, acc, oc);
      }
    }
  }
}

template <typename T, typename Acc>
void DepthwiseRows(const QConvState& s, const T* in, const int8_t* w, T* out,
                   int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / s.out_h);
    const int oy = static_cast<int>(r % s.out_h);
    for (int ox = 0; ox < s.out_w; ++ox) {
      const int iy0 = oy * s.stride_h - s.pad_h;
      const int ix0 = ox * s.stride_w - s.pad_w;
      for (int oc = 0; oc < s.out_c; ++oc) {
        const int ic = oc / s.depth_multiplier;
        Acc acc = 0;
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int iy = iy0 + s.dil_h * ky;
          if (iy < 0 || iy >= s.in_h) continue;
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int ix = ix0 + s.dil_w * kx;
            if (ix < 0 || ix >= s.in_w) continue;
            const int32_t iv =
                in[((int64_t{b} * s.in_h + iy) * s.in_w + ix) * s.in_c + ic];
            const int32_t wv = w[(int64_t{ky} * s.k_w + kx) * s.out_c + oc];
            acc += static_cast<Acc>(wv) * static_cast<Acc>(iv + s.input_offset);
          }
        }
        out[((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.out_c + oc] =
            Finish<T, Acc>(s, acc, oc);
      }
    }
  }
}

template <typename T, typename Acc, ConvKind kKind>
absl::Status EvalQConv(EvalContext& ctx) {
  const auto& s = *ctx.state<QConvState>();
  const int in_idx = kKind == ConvKind::kTranspose ? 2 : 0;
  const T* in = ctx.input(in_idx)->data<T>();
  const int8_t* w = ctx.input(1)->data<int8_t>();
  T* out = ctx.output(0)->data<T>();
  if constexpr (kKind == ConvKind::kTranspose) {
    // Scatter into an Acc scratch, as the reference kernel does: each
    // output is still one exact integer sum.
    Acc* acc = ctx.scratch_as<Acc>();
    const int64_t out_elems = int64_t{s.batch} * s.out_h * s.out_w * s.out_c;
    std::fill(acc, acc + out_elems, Acc{0});
    for (int b = 0; b < s.batch; ++b) {
      for (int iy = 0; iy < s.in_h; ++iy) {
        for (int ix = 0; ix < s.in_w; ++ix) {
          const T* ip =
              in + ((int64_t{b} * s.in_h + iy) * s.in_w + ix) * s.in_c;
          const int oy0 = iy * s.stride_h - s.pad_h;
          const int ox0 = ix * s.stride_w - s.pad_w;
          for (int ky = 0; ky < s.k_h; ++ky) {
            const int oy = oy0 + ky;
            if (oy < 0 || oy >= s.out_h) continue;
            for (int kx = 0; kx < s.k_w; ++kx) {
              const int ox = ox0 + kx;
              if (ox < 0 || ox >= s.out_w) continue;
              Acc* op =
                  acc + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) * s.out_c;
              for (int oc = 0; oc < s.out_c; ++oc) {
                const int8_t* wp =
                    w + ((int64_t{oc} * s.k_h + ky) * s.k_w + kx) * s.in_c;
                Acc sum = 0;
                for (int ic = 0; ic < s.in_c; ++ic) {
                  sum += static_cast<Acc>(wp[ic]) *
                         static_cast<Acc>(ip[ic] + s.input_offset);
                }
                op[oc] += sum;
              }
            }
          }
        }
      }
    }
    for (int64_t i = 0; i < out_elems; ++i) {
      out[i] = Finish<T, Acc>(s, acc[i], static_cast<int>(i % s.out_c));
    }
    return absl::OkStatus();
  } else {
    const int64_t rows = int64_t{s.batch} * s.out_h;
    auto body = [&](int64_t r0, int64_t r1) {
      if constexpr (kKind == ConvKind::kConv) {
        ConvRows<T, Acc>(s, in, w, out, r0, r1);
      } else if constexpr (std::is_same_v<T, int8_t>) {
#if GRAFT_QGEMM_AVX2
        if (s.dw_vnni) {
          g_dw_calls[static_cast<int>(CpuIsa::kAvx512Vnni)].fetch_add(
              1, std::memory_order_relaxed);
          DepthwiseRowsInt8Vnni(s, in, out, r0, r1);
          return;
        }
#endif
        if (s.dw_fast) {
          const DwRowsFn dw_rows = PickDepthwiseRowsInt8();
          dw_rows(s, in, w, out, r0, r1);
        } else {
          DepthwiseRows<T, Acc>(s, in, w, out, r0, r1);
        }
      } else {
        DepthwiseRows<T, Acc>(s, in, w, out, r0, r1);
      }
    };
    if (ctx.thread_pool() != nullptr) {
      ctx.thread_pool()->ParallelFor(rows, 1, body);
    } else {
      body(0, rows);
    }
    return absl::OkStatus();
  }
}

// Common checks and quantization parameters; `w` is the weights, `in` the
// activations input, `per_channel_dim` the weights' channel dimension.
absl::Status PrepareQuantParams(PrepareContext& ctx, const Tensor& in,
                                const Tensor& w, const Tensor* bias,
                                tfl::ActivationFunctionType act,
                                int per_channel_dim, QConvState* s) {
  const Tensor& out = *ctx.output(0);
  GRAFT_KERNEL_CHECK(HasPerChannelScales(w, s->out_c, per_channel_dim),
                     "weights need one positive scale or one per output "
                     "channel along dimension %d",
                     per_channel_dim);
  for (int64_t zp : w.quantization->zero_point) {
    if (zp != 0) return ctx.Unsupported("INT8 weights with a zero point");
  }
  s->input_offset = -ZeroPoint(in);
  s->output_offset = ZeroPoint(out);
  s->mult = PerChannelMultipliers(in, w, out, s->out_c);
  GRAFT_RETURN_IF_ERROR(ActivationRangeQuantized(
      act, out.type, Scale(out), s->output_offset, &s->act_min, &s->act_max));
  s->bias.assign(s->out_c, 0);
  if (bias != nullptr) {
    GRAFT_KERNEL_CHECK(bias->num_elements() == s->out_c,
                       "bias has %d elements, expected %d",
                       bias->num_elements(), s->out_c);
    if (!bias->constant) return ctx.Unsupported("a bias computed at run time");
    for (int c = 0; c < s->out_c; ++c) {
      s->bias[c] = bias->type == tfl::TensorType_INT64
                       ? bias->data<int64_t>()[c]
                       : bias->data<int32_t>()[c];
    }
  }
  return absl::OkStatus();
}

// The 8x8 or 16x8 dtype combination, or Unsupported.
absl::Status CheckTypes(PrepareContext& ctx, const Tensor& in, const Tensor& w,
                        const Tensor* bias, bool* is16) {
  const Tensor& out = *ctx.output(0);
  const bool i8 = in.type == tfl::TensorType_INT8;
  const bool i16 = in.type == tfl::TensorType_INT16;
  const bool bias_ok = bias == nullptr || bias->type == tfl::TensorType_INT32 ||
                       (i16 && bias->type == tfl::TensorType_INT64);
  if (!(i8 || i16) || w.type != tfl::TensorType_INT8 || out.type != in.type ||
      !bias_ok || !IsQuantized(in) || !IsQuantized(w) || !IsQuantized(out)) {
    return ctx.Unsupported(absl::StrFormat("%s input with %s weights",
                                           TensorTypeName(in.type),
                                           TensorTypeName(w.type)));
  }
  *is16 = i16;
  return absl::OkStatus();
}

template <ConvKind kKind>
void SetEvalFor(PrepareContext& ctx, bool is16) {
  ctx.SetEval(is16 ? EvalQConv<int16_t, int64_t, kKind>
                   : EvalQConv<int8_t, int32_t, kKind>);
}

absl::Status PrepareConv2DQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  bool is16 = false;
  GRAFT_RETURN_IF_ERROR(CheckTypes(ctx, *in, *w, bias, &is16));
  GRAFT_KERNEL_CHECK(in->rank() == 4 && w->rank() == 4,
                     "input and filter must be 4-D");
  const auto* o = ctx.op().builtin_options.AsConv2DOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing Conv2DOptions");
  auto* s = MakeState<QConvState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->out_c = w->dim(0), s->k_h = w->dim(1), s->k_w = w->dim(2);
  s->group_in_c = w->dim(3);
  GRAFT_KERNEL_CHECK(s->group_in_c > 0 && s->in_c % s->group_in_c == 0,
                     "input depth %d is not a multiple of filter depth %d",
                     s->in_c, s->group_in_c);
  const int groups = s->in_c / s->group_in_c;
  GRAFT_KERNEL_CHECK(s->out_c % groups == 0,
                     "%d output channels do not split into %d groups", s->out_c,
                     groups);
  s->group_out_c = s->out_c / groups;
  GRAFT_RETURN_IF_ERROR(PrepareConvWindow(*o, s));
  GRAFT_RETURN_IF_ERROR(PrepareQuantParams(ctx, *in, *w, bias,
                                           o->fused_activation_function, 0, s));
  SetEvalFor<ConvKind::kConv>(ctx, is16);
  s->k = int64_t{s->k_h} * s->k_w * s->group_in_c;
  // AVX-512 VNNI: one group, and a zero point whose + 128 is a byte.
  const bool vnni = !is16 && w->constant && groups == 1 &&
                    KernelIsaAtLeast(CpuIsa::kAvx512Vnni) &&
                    s->input_offset >= -127 && s->input_offset <= 128;
  if (vnni) {
    s->panels = static_cast<int>(QGemmPanels(s->out_c));
    QGemmVnniPackRows(w->data<int8_t>(), s->out_c, s->k, s->k,
                      s->input_offset - 128, &s->vnni);
    PrepareRequantizeV8(s);
    s->threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
    const int64_t rows = int64_t{s->batch} * s->out_h * s->out_w;
    const int64_t per_thread = (rows + s->threads - 1) / s->threads;
    constexpr int mr = kQGemmVnniMr;
    s->chunk_rows = std::max<int64_t>(
        mr, std::min(kQChunkRows, (per_thread + mr - 1) / mr * mr));
    ctx.RequestScratch(static_cast<size_t>(s->threads * s->chunk_rows *
                                           QGemmVnniPaddedK(s->k)));
    ctx.SetEval(EvalQConvVnni);
  } else if (!is16 && w->constant && QGemmOffsetFits(s->input_offset)) {
    PackQFilter(s, w->data<int8_t>());
    PrepareRequantizeV8(s);
    s->threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
    // Enough chunks for every thread, in whole micro-tiles.
    const int64_t rows = int64_t{s->batch} * s->out_h * s->out_w;
    const int64_t per_thread = (rows + s->threads - 1) / s->threads;
    s->chunk_rows = std::max<int64_t>(
        kQMr, std::min(kQChunkRows, (per_thread + kQMr - 1) / kQMr * kQMr));
    ctx.RequestScratch(
        static_cast<size_t>(s->threads * s->chunk_rows * QGemmPaddedK(s->k)) *
        sizeof(int16_t));
    ctx.SetEval(EvalQConvGemm);
  }
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

absl::Status PrepareDepthwiseConv2DQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  bool is16 = false;
  GRAFT_RETURN_IF_ERROR(CheckTypes(ctx, *in, *w, bias, &is16));
  GRAFT_KERNEL_CHECK(in->rank() == 4 && w->rank() == 4 && w->dim(0) == 1,
                     "input and filter must be 4-D, filter [1, h, w, c]");
  const auto* o = ctx.op().builtin_options.AsDepthwiseConv2DOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing DepthwiseConv2DOptions");
  auto* s = MakeState<QConvState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->k_h = w->dim(1), s->k_w = w->dim(2), s->out_c = w->dim(3);
  GRAFT_KERNEL_CHECK(s->in_c > 0 && s->out_c % s->in_c == 0,
                     "filter depth %d is not a multiple of input depth %d",
                     s->out_c, s->in_c);
  s->depth_multiplier = s->out_c / s->in_c;
  GRAFT_RETURN_IF_ERROR(PrepareConvWindow(*o, s));
  GRAFT_RETURN_IF_ERROR(PrepareQuantParams(ctx, *in, *w, bias,
                                           o->fused_activation_function, 3, s));
  SetEvalFor<ConvKind::kDepthwise>(ctx, is16);
  // The fast path forms filter * (input + input_offset) in int16, which
  // needs the offset of an in-range INT8 zero point.
  s->dw_fast = !is16 && s->depth_multiplier == 1 &&
               s->k_h * s->k_w <= kDwMaxTaps && s->input_offset >= -127 &&
               s->input_offset <= 128;
  if (s->dw_fast) PrepareRequantizeV8(s);
#if GRAFT_QGEMM_AVX2
  if (s->dw_fast && w->constant && KernelIsaAtLeast(CpuIsa::kAvx512Vnni)) {
    PackDwVnni(w->data<int8_t>(), s);
    s->dw_vnni = true;
  }
#endif
  ctx.SetReductionLength(int64_t{s->k_h} * s->k_w);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

absl::Status PrepareTransposeConvQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 4, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 2));
  const Tensor* bias = ctx.input(3);
  bool is16 = false;
  GRAFT_RETURN_IF_ERROR(CheckTypes(ctx, *in, *w, bias, &is16));
  GRAFT_KERNEL_CHECK(in->rank() == 4 && w->rank() == 4,
                     "input and weights must be 4-D");
  Shape out_shape;
  if (ctx.ValuesKnown(shape_t)) {
    GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIntValues(*shape_t));
    GRAFT_ASSIGN_OR_RETURN(out_shape, TransposeConvOutputShape(v));
  } else if (std::optional<Shape> declared =
                 StaticDeclaredOutputShape(ctx, 0)) {
    out_shape = *std::move(declared);
  } else {
    return ctx.DeferToRun();
  }
  const auto* o = ctx.op().builtin_options.AsTransposeConvOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing TransposeConvOptions");
  auto* s = MakeState<QConvState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->out_c = w->dim(0), s->k_h = w->dim(1), s->k_w = w->dim(2);
  GRAFT_KERNEL_CHECK(w->dim(3) == s->in_c,
                     "weights depth %d differs from input depth %d", w->dim(3),
                     s->in_c);
  GRAFT_KERNEL_CHECK(out_shape[0] == s->batch && out_shape[3] == s->out_c,
                     "output_shape %s disagrees with input and weights",
                     ShapeToString(out_shape));
  s->out_h = out_shape[1], s->out_w = out_shape[2];
  s->stride_h = o->stride_h, s->stride_w = o->stride_w;
  GRAFT_KERNEL_CHECK(s->stride_h > 0 && s->stride_w > 0,
                     "strides must be positive");
  GRAFT_KERNEL_CHECK(
      TransposeWindowFitsInt(s->in_h, s->k_h, s->stride_h) &&
          TransposeWindowFitsInt(s->in_w, s->k_w, s->stride_w),
      "the window (input %dx%d, filter %dx%d, strides %d,%d) exceeds "
      "32-bit index arithmetic",
      s->in_h, s->in_w, s->k_h, s->k_w, s->stride_h, s->stride_w);
  // TFLite pads as a convolution from the output size back to the input.
  const int conv_out_h =
      ComputeOutSize(o->padding, s->out_h, s->k_h, s->stride_h);
  const int conv_out_w =
      ComputeOutSize(o->padding, s->out_w, s->k_w, s->stride_w);
  s->pad_h = ComputePadding(s->stride_h, 1, s->out_h, s->k_h, conv_out_h);
  s->pad_w = ComputePadding(s->stride_w, 1, s->out_w, s->k_w, conv_out_w);
  GRAFT_RETURN_IF_ERROR(PrepareQuantParams(ctx, *in, *w, bias,
                                           o->fused_activation_function, 0, s));
  SetEvalFor<ConvKind::kTranspose>(ctx, is16);
  const size_t acc_size = is16 ? sizeof(int64_t) : sizeof(int32_t);
  ctx.RequestScratch(static_cast<size_t>(NumElements(out_shape)) * acc_size);
  ctx.SetReductionLength(int64_t{s->in_c} * s->k_h * s->k_w);
  return ctx.SetOutputShape(0, std::move(out_shape));
}

}  // namespace

int64_t QDepthwiseCallsForTesting(CpuIsa path) {
  return g_dw_calls[static_cast<int>(path)].load(std::memory_order_relaxed);
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(Conv2DQuantized);
GRAFT_DEFINE_KERNEL(DepthwiseConv2DQuantized);
GRAFT_DEFINE_KERNEL(TransposeConvQuantized);

}  // namespace graft
