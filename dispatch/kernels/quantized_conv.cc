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
// the vpdpbusd GEMM instead, on input + 128 as unsigned bytes with the
// filter packed at prepare (quantized_gemm.h says how the shift is
// compensated). A 1x1 stride-1 unpadded convolution reads its input rows
// as they are (QGemmVnni); every other shape builds no im2col matrix
// (EvalQConvVnniTaps): each evaluation flips the input once into a copy
// padded with the zero point + 128 (whose products the column term
// cancels, as the reference skips them), and the GEMM reads each output
// pixel's row through taps at fixed offsets from the pixel's corner in
// that copy (QGemmVnniTaps): with dilation 1 in width a whole filter row,
// k_w * in_c contiguous bytes, is one tap, else one filter position; each
// tap is padded to a multiple of 4 bytes against zero weights. An INT8
// DEPTHWISE_CONV_2D with constant weights takes DepthwiseRowsInt8Vnni
// (vpdpwssd on two taps at a time, the filter packed at prepare in blocks
// of 32 channels, or 16 for the last where at most 16 remain): every
// output pixel reads its taps through a table of pointers built for 16
// pixels at a time, those outside the input pointing at a pixel of zero
// points, so border pixels cost what interior ones do.
//
// Elsewhere, INT8 CONV_2D with constant weights is lowered to an integer
// GEMM: chunks
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
// The least multiply-adds per thread's range of the VNNI depthwise rows.
constexpr int64_t kDwMinWork = 65536;

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
  // The VNNI path without im2col (EvalQConvVnniTaps): the input flipped
  // (+ 128) into a copy padded by pad_h rows above and pad_w pixels left
  // (tap_h x tap_w pixels per image in all; the border holds the zero
  // point + 128), and per output pixel the taps of vnni_taps: with
  // dilation 1 in width, one per filter row (k_w * in_c contiguous bytes),
  // else one per filter tap (in_c bytes), each padded to a multiple of 4.
  bool vnni_taps = false;
  int tap_h = 0, tap_w = 0;
  int64_t tap_bytes = 0;           // bytes of the padded copy
  std::vector<int64_t> tap_delta;  // per tap, from the pixel's corner
  QGemmTaps taps;                  // points into tap_delta
  // INT8 DEPTHWISE_CONV_2D channel-innermost path.
  bool dw_fast = false;
  // Its AVX-512 VNNI form (DepthwiseRowsInt8Vnni), chosen at prepare: the
  // filter packed by PackDwVnni, rq in the kernel's lane order with
  // input_offset times the sum of each channel's taps added to the bias,
  // and a pixel of input zero points for the taps that fall outside the
  // input.
  bool dw_vnni = false;
  std::vector<int32_t> dw_packed;
  QGemmRequant dw_rq;
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

// Flips padded rows [y0, y1) of the copy EvalQConvVnniTaps reads
// (QConvState::vnni_taps): input + 128 as unsigned bytes, the zero point +
// 128 in the border (whose product the column term cancels, as the
// reference skips it); the bytes past the last row, read only by taps'
// padding against zero weights, are zeroed with the last row.
GRAFT_QCONV_VNNI_TARGET void FlipPaddedRows(const QConvState& s,
                                            const int8_t* in, int64_t y0,
                                            int64_t y1, uint8_t* dst) {
  const uint8_t pad = static_cast<uint8_t>(128 - s.input_offset);
  const int64_t row_bytes = int64_t{s.tap_w} * s.in_c;
  const int64_t left = int64_t{s.pad_w} * s.in_c;
  const int64_t inner = int64_t{s.in_w} * s.in_c;
  for (int64_t y = y0; y < y1; ++y) {
    uint8_t* d = dst + y * row_bytes;
    const int64_t b = y / s.tap_h;
    const int64_t iy = y % s.tap_h - s.pad_h;
    if (iy < 0 || iy >= s.in_h) {
      std::memset(d, pad, static_cast<size_t>(row_bytes));
    } else {
      std::memset(d, pad, static_cast<size_t>(left));
      FlipBytes(in + (b * s.in_h + iy) * inner, inner, d + left);
      std::memset(d + left + inner, pad,
                  static_cast<size_t>(row_bytes - left - inner));
    }
  }
  const int64_t rows = int64_t{s.batch} * s.tap_h;
  if (y1 == rows) {
    std::memset(dst + rows * row_bytes, 0,
                static_cast<size_t>(s.tap_bytes - rows * row_bytes));
  }
}

std::atomic<int64_t> g_conv_taps_calls{0};

absl::Status EvalQConvVnniTaps(EvalContext& ctx) {
  const auto& s = *ctx.state<QConvState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  uint8_t* padded = ctx.scratch_as<uint8_t>();
  g_conv_taps_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t rows = int64_t{s.batch} * s.out_h * s.out_w;
  if (rows == 0) return absl::OkStatus();
  const int64_t row_bytes = int64_t{s.tap_w} * s.in_c;
  const int64_t padded_rows = int64_t{s.batch} * s.tap_h;
  auto flip = [&](int64_t y0, int64_t y1) {
    FlipPaddedRows(s, in, y0, y1, padded);
  };
  // Split only copies worth a thread's wake-up (16 KiB a part at least).
  // No input channels: no copy (the sums are the biases alone).
  if (row_bytes > 0) {
    const int64_t min_rows = std::max<int64_t>(1, 16384 / row_bytes);
    if (ctx.thread_pool() != nullptr && padded_rows > min_rows) {
      ctx.thread_pool()->ParallelFor(padded_rows, min_rows, flip);
    } else {
      flip(0, padded_rows);
    }
  }
  const int64_t chunks = (rows + s.chunk_rows - 1) / s.chunk_rows;
  auto body = [&](int64_t begin, int64_t end) {
    const uint8_t* corner[kQChunkRows];
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * s.chunk_rows;
      const int64_t r1 = std::min(rows, r0 + s.chunk_rows);
      int64_t b = r0 / (int64_t{s.out_h} * s.out_w);
      int oy = static_cast<int>(r0 / s.out_w % s.out_h);
      int ox = static_cast<int>(r0 % s.out_w);
      for (int64_t r = r0; r < r1; ++r) {
        corner[r - r0] =
            padded + ((b * s.tap_h + int64_t{oy} * s.stride_h) * s.tap_w +
                      int64_t{ox} * s.stride_w) *
                         s.in_c;
        if (++ox == s.out_w) {
          ox = 0;
          if (++oy == s.out_h) oy = 0, ++b;
        }
      }
      QGemmVnniTaps(corner, r1 - r0, s.taps, s.vnni, 0, s.panels, s.rq, 0,
                    out + r0 * s.out_c, s.out_c);
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(chunks, 1, body);
  } else {
    body(0, chunks);
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
    // RequantDoubleSmallAvx512 without its [x < 0] correction: that lowers
    // only results <= output_offset, which the clamp lifts to act_min
    // >= output_offset either way (DwVnniChunk's caller checks both).
    const __m512i x = _mm512_add_epi32(acc, r.offset);
    const __m512i pe = _mm512_mul_epi32(x, r.mult);
    const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(x, 32), r.mult_odd);
    const __m512i qe = _mm512_srli_epi64(_mm512_add_epi64(pe, r.rnd_even), 31);
    const __m512i qo = _mm512_slli_epi64(_mm512_add_epi64(po, r.rnd_odd), 1);
    return _mm512_cvtsepi32_epi8(
        _mm512_srav_epi32(_mm512_mask_blend_epi32(0xAAAA, qe, qo), r.rshift));
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
    // The VNNI depthwise rows are fast enough that a thread's share of a
    // small layer costs less than handing it over: at least kDwMinWork
    // multiply-adds per range.
    int64_t min_rows = 1;
    if (kKind == ConvKind::kDepthwise && s.dw_vnni) {
      const int64_t per_row = std::max<int64_t>(
          1, int64_t{s.out_w} * s.k_h * s.k_w * s.out_c);
      min_rows = std::max<int64_t>(1, kDwMinWork / per_row);
    }
    if (ctx.thread_pool() != nullptr) {
      ctx.thread_pool()->ParallelFor(rows, min_rows, body);
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

// The padded copy's geometry, the taps and the filter packed for them
// (QConvState::vnni_taps).
void PrepareVnniTaps(const int8_t* w, QConvState* s) {
  s->vnni_taps = true;
  // The last input row and column any window reads, in input coordinates.
  const int last_y =
      (s->out_h - 1) * s->stride_h - s->pad_h + (s->k_h - 1) * s->dil_h;
  const int last_x =
      (s->out_w - 1) * s->stride_w - s->pad_w + (s->k_w - 1) * s->dil_w;
  s->tap_h = s->pad_h + std::max(s->in_h, last_y + 1);
  s->tap_w = s->pad_w + std::max(s->in_w, last_x + 1);
  const bool row_taps = s->dil_w == 1;
  const int count = row_taps ? s->k_h : s->k_h * s->k_w;
  const int64_t tap_len = int64_t{row_taps ? s->k_w : 1} * s->in_c;
  const int64_t tap_kp = QGemmVnniPaddedK(tap_len);
  s->tap_delta.resize(count);
  for (int ky = 0, t = 0; ky < s->k_h; ++ky) {
    for (int kx = 0; kx < (row_taps ? 1 : s->k_w); ++kx, ++t) {
      s->tap_delta[t] =
          (int64_t{ky} * s->dil_h * s->tap_w + int64_t{kx} * s->dil_w) *
          s->in_c;
    }
  }
  // A tap's padding reads at most 3 bytes past its pixels, inside the
  // next row or the zeroed tail.
  s->tap_bytes =
      int64_t{s->batch} * s->tap_h * s->tap_w * s->in_c + tap_kp - tap_len;
  s->taps.count = count;
  s->taps.kp = tap_kp;
  s->taps.delta = s->tap_delta.data();
  // The filter ([out_c][k_h][k_w][in_c]) as [out_c][count][tap_kp], zero in
  // each tap's padding.
  const int64_t k = count * tap_kp;
  std::vector<int8_t> wt(static_cast<size_t>(s->out_c * k), 0);
  for (int64_t oc = 0; oc < s->out_c; ++oc) {
    for (int t = 0; t < count; ++t) {
      std::memcpy(wt.data() + oc * k + t * tap_kp, w + oc * s->k + t * tap_len,
                  static_cast<size_t>(tap_len));
    }
  }
  s->panels = static_cast<int>(QGemmPanels(s->out_c));
  QGemmVnniPackRows(wt.data(), s->out_c, k, k, s->input_offset - 128, &s->vnni);
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
  // A 1x1 stride-1 unpadded convolution reads its input rows as they are;
  // other shapes read taps of a padded copy (EvalQConvVnniTaps).
  const bool pointwise = s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 &&
                         s->stride_w == 1 && s->pad_h == 0 && s->pad_w == 0;
  if (vnni && !pointwise) {
    PrepareVnniTaps(w->data<int8_t>(), s);
    PrepareRequantizeV8(s);
    s->threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
    const int64_t rows = int64_t{s->batch} * s->out_h * s->out_w;
    const int64_t per_thread = (rows + s->threads - 1) / s->threads;
    constexpr int mr = kQGemmVnniMr;
    s->chunk_rows = std::max<int64_t>(
        mr, std::min(kQChunkRows, (per_thread + mr - 1) / mr * mr));
    ctx.RequestScratch(static_cast<size_t>(s->tap_bytes));
    ctx.SetEval(EvalQConvVnniTaps);
  } else if (vnni) {
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

int64_t QConvVnniTapsCallsForTesting() {
  return g_conv_taps_calls.load(std::memory_order_relaxed);
}

int64_t QDepthwiseCallsForTesting(CpuIsa path) {
  return g_dw_calls[static_cast<int>(path)].load(std::memory_order_relaxed);
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(Conv2DQuantized);
GRAFT_DEFINE_KERNEL(DepthwiseConv2DQuantized);
GRAFT_DEFINE_KERNEL(TransposeConvQuantized);

}  // namespace graft
