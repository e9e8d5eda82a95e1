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
// tap is padded to a multiple of 4 bytes against zero weights.
//
// Elsewhere, INT8 CONV_2D with constant weights is lowered to an integer
// GEMM: chunks of output pixels are expanded (im2col) into an int16 buffer
// holding input + input_offset (0 where the window leaves the input, which
// the reference skips), multiplied by the filter packed at prepare time
// into column panels, and requantized per channel: the GEMM of
// quantized_gemm.h, shared with FULLY_CONNECTED and BATCH_MATMUL. INT8
// DEPTHWISE_CONV_2D with depth multiplier 1 (filters up to 7x7) runs the
// fast paths of quantized_depthwise.cc (AVX-512 VNNI with its filter packed
// here at prepare, AVX2, baseline). All give the same int32 sums as the
// reference loops (integer addition is associative), so results are
// bit-exact. Other cases (16x8, depth multiplier > 1, weights computed at
// run time) run the reference kernels' direct loops. Work is split over
// output rows across the thread pool; the result does not depend on the
// split because each output is one integer sum.
#include "dispatch/kernels/quantized_conv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "dispatch/kernels/quantized_gemm.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

enum class ConvKind { kConv, kDepthwise, kTranspose };

// Output pixels per im2col chunk (at most): the chunk's int16 rows stay in
// L2 for MobileNet-sized K.
constexpr int64_t kQChunkRows = 64;
// The least multiply-adds per thread's range of the VNNI depthwise rows.
constexpr int64_t kDwMinWork = 65536;
// The least filter bytes the VNNI paths split by panels (SetColumnSplit):
// MobileNetV2 0.35 int8 at 2 threads went 0.990 / 0.985 / 0.978x with
// 64 / 16 / 4 KiB, but audio_conv1d_int8 1.05x with 4 KiB.
constexpr int64_t kColumnSplitFilterBytes = 16384;

// Output pixels over the batch: the GEMM paths' rows.
int64_t OutputPixels(const QConvState& s) {
  return int64_t{s.batch} * s.out_h * s.out_w;
}

// An AVX2 clone beside the baseline, picked at load time (as gemm.cc).
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
#define GRAFT_QCONV_TARGET_CLONES \
  __attribute__((target_clones("avx2", "default")))
#else
#define GRAFT_QCONV_TARGET_CLONES
#endif

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
  const int64_t rows = OutputPixels(s);
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
      ctx.OutputReady(r0 * s.out_c, r1 * s.out_c);
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
// dst[i] = v, i < n, the same way: a padded row's border (a few dozen
// bytes, where a memset call cost more than the bytes).
GRAFT_AVX512_INLINE void FillBytes(uint8_t* dst, uint8_t v, int64_t n) {
  const __m512i x = _mm512_set1_epi8(static_cast<char>(v));
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(dst + i, x);
  if (i < n) {
    _mm512_mask_storeu_epi8(dst + i, (uint64_t{1} << (n - i)) - 1, x);
  }
}
#else
#define GRAFT_QCONV_VNNI_TARGET
inline void FlipBytes(const int8_t* src, int64_t n, uint8_t* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ 0x80);
}
inline void FillBytes(uint8_t* dst, uint8_t v, int64_t n) {
  std::memset(dst, v, static_cast<size_t>(n));
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

// The VNNI paths' column split (QConvState::column_split): part t of
// s.threads computes panels [p0, p1), its even share, over every output
// pixel by fn(p0, p1); the rows are reported once all parts are done.
CallCounter g_conv_column_split_calls;

template <typename Fn>
void RunColumnParts(EvalContext& ctx, const QConvState& s, Fn fn) {
  g_conv_column_split_calls.fetch_add(1, std::memory_order_relaxed);
  auto parts = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      fn(s.panels * t / s.threads, s.panels * (t + 1) / s.threads);
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(s.threads, 1, parts);
  } else {
    parts(0, s.threads);
  }
  ctx.OutputReady(0, OutputPixels(s) * s.out_c);
}

absl::Status EvalQConvVnni(EvalContext& ctx) {
  const auto& s = *ctx.state<QConvState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  uint8_t* scratch = ctx.scratch_as<uint8_t>();
  const int64_t kp = QGemmVnniPaddedK(s.k);
  const int64_t rows = OutputPixels(s);
  if (s.column_split) {
    QIm2ColVnni(s, in, 0, rows, scratch);
    RunColumnParts(ctx, s, [&](int64_t p0, int64_t p1) {
      QGemmVnni(scratch, rows, s.vnni, p0, p1, s.rq, 0, out, s.out_c);
    });
    return absl::OkStatus();
  }
  const int64_t chunks = (rows + s.chunk_rows - 1) / s.chunk_rows;
  auto body = [&](int thread, int64_t begin, int64_t end) {
    uint8_t* col = scratch + thread * s.chunk_rows * kp;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * s.chunk_rows;
      const int64_t r1 = std::min(rows, r0 + s.chunk_rows);
      QIm2ColVnni(s, in, r0, r1, col);
      QGemmVnni(col, r1 - r0, s.vnni, 0, s.panels, s.rq, 0, out + r0 * s.out_c,
                s.out_c);
      ctx.OutputReady(r0 * s.out_c, r1 * s.out_c);
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
  // The image and the row in it stepped along, not divided out at every
  // row.
  int64_t b = y0 / s.tap_h;
  int64_t iy = y0 % s.tap_h - s.pad_h;
  for (int64_t y = y0; y < y1; ++y) {
    uint8_t* d = dst + y * row_bytes;
    if (iy < 0 || iy >= s.in_h) {
      FillBytes(d, pad, row_bytes);
    } else {
      FillBytes(d, pad, left);
      FlipBytes(in + (b * s.in_h + iy) * inner, inner, d + left);
      FillBytes(d + left + inner, pad, row_bytes - left - inner);
    }
    if (++iy == s.tap_h - s.pad_h) iy = -s.pad_h, ++b;
  }
  const int64_t rows = int64_t{s.batch} * s.tap_h;
  if (y1 == rows) {
    std::memset(dst + rows * row_bytes, 0,
                static_cast<size_t>(s.tap_bytes - rows * row_bytes));
  }
}

CallCounter g_conv_taps_calls;

absl::Status EvalQConvVnniTaps(EvalContext& ctx) {
  const auto& s = *ctx.state<QConvState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  uint8_t* padded = ctx.scratch_as<uint8_t>();
  g_conv_taps_calls.fetch_add(1, std::memory_order_relaxed);
  const int64_t rows = OutputPixels(s);
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
  if (s.column_split) {
    RunColumnParts(ctx, s, [&](int64_t p0, int64_t p1) {
      QGemmVnniTaps(padded, s.corner_offset.data(), rows, s.taps, s.vnni, p0,
                    p1, s.rq, 0, out, s.out_c);
    });
    return absl::OkStatus();
  }
  const int64_t chunks = (rows + s.chunk_rows - 1) / s.chunk_rows;
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * s.chunk_rows;
      const int64_t r1 = std::min(rows, r0 + s.chunk_rows);
      QGemmVnniTaps(padded, s.corner_offset.data() + r0, r1 - r0, s.taps,
                    s.vnni, 0, s.panels, s.rq, 0, out + r0 * s.out_c, s.out_c);
      ctx.OutputReady(r0 * s.out_c, r1 * s.out_c);
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(chunks, 1, body);
  } else {
    body(0, chunks);
  }
  return absl::OkStatus();
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
    const int64_t out_elems = OutputPixels(s) * s.out_c;
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
        if (s.dw_fast) {
          DepthwiseRowsInt8Fast(s, in, w, out, r0, r1);
        } else {
          DepthwiseRows<T, Acc>(s, in, w, out, r0, r1);
        }
      } else {
        DepthwiseRows<T, Acc>(s, in, w, out, r0, r1);
      }
      const int64_t row_elems = int64_t{s.out_w} * s.out_c;
      ctx.OutputReady(r0 * row_elems, r1 * row_elems);
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
  // A zero point is a value of its tensor's type (TFLite's quantization
  // spec); past it, the reference path's int32 sums, as TFLite's, would
  // overflow.
  for (const Tensor* t : {&in, &out}) {
    int32_t lo = 0, hi = 0;
    TypeRange(t->type, &lo, &hi);
    GRAFT_KERNEL_CHECK(ZeroPoint(*t) >= lo && ZeroPoint(*t) <= hi,
                       "%s zero point %d is outside the %s range [%d, %d]",
                       t == &in ? "input" : "output", ZeroPoint(*t),
                       TensorTypeName(t->type), lo, hi);
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

// Every eval of a convolution and a depthwise one (not a transposed one)
// reports its output rows as it writes them (OutputReady).
template <ConvKind kKind>
void SetEvalFor(PrepareContext& ctx, bool is16) {
  ctx.SetEval(is16 ? EvalQConv<int16_t, int64_t, kKind>
                   : EvalQConv<int8_t, int32_t, kKind>);
  if (kKind != ConvKind::kTranspose) ctx.MarkReportsOutputReady();
}

// s->threads, and s->chunk_rows: output pixels per chunk of the GEMM
// paths, at most kQChunkRows, as many chunks as a multiple of the thread
// count and all about the same size, so each thread's share is the same
// (9 rows on 2 threads go as 5 + 4, not a tile of 8 and 1 row; 576 as
// 10 chunks of 58, not 5 of 64 against 4). A chunk need not be whole
// tiles: the GEMM computes its last rows as a shorter tile.
void SetChunkRows(const PrepareContext& ctx, QConvState* s) {
  s->threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
  const int64_t rows = OutputPixels(*s);
  int64_t chunks = std::max<int64_t>(1, (rows + kQChunkRows - 1) / kQChunkRows);
  chunks = (chunks + s->threads - 1) / s->threads * s->threads;
  s->chunk_rows = std::max<int64_t>(1, (rows + chunks - 1) / chunks);
}

// s->column_split for the VNNI paths, after SetChunkRows: where the output
// has more channels than pixels and the filter is large, a share of the
// pixels over every panel reads the whole filter on each thread; a share
// of the panels reads only its part of it (and every pixel's input, the
// smaller). MobileNetV2 0.35's last 1x1 convolution, 9 x 112 -> 1280: the
// 143 KB filter read once in all, not once per thread.
void SetColumnSplit(QConvState* s) {
  const int64_t rows = OutputPixels(*s);
  s->column_split = s->threads > 1 && s->out_c > rows &&
                    s->k * s->out_c >= kColumnSplitFilterBytes &&
                    s->panels >= 2 * s->threads;
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
  // Found once here and read by the kernel itself (stepping through the
  // pixels at every run to build a table of pointers took 2-3% of
  // resnet_cnn_int8's samples).
  const int64_t row_bytes = int64_t{s->tap_w} * s->in_c;
  s->corner_offset.clear();
  s->corner_offset.reserve(static_cast<size_t>(OutputPixels(*s)));
  for (int64_t b = 0; b < s->batch; ++b) {
    for (int64_t oy = 0; oy < s->out_h; ++oy) {
      for (int64_t ox = 0; ox < s->out_w; ++ox) {
        s->corner_offset.push_back((b * s->tap_h + oy * s->stride_h) *
                                       row_bytes +
                                   ox * s->stride_w * s->in_c);
      }
    }
  }
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
    SetChunkRows(ctx, s);
    SetColumnSplit(s);
    ctx.RequestScratch(static_cast<size_t>(s->tap_bytes));
    ctx.SetEval(EvalQConvVnniTaps);
  } else if (vnni) {
    s->panels = static_cast<int>(QGemmPanels(s->out_c));
    PrepareRequantizeV8(s);
    // Eight channels or fewer: two rows per panel (MobileNetV2 0.35's
    // 48 x 48 x 16 -> 8), where one row would leave half of it idle.
    (s->out_c <= kQGemmVnniPairedNr && s->rq.fast_double
         ? QGemmVnniPackPairedRows
         : QGemmVnniPackRows)(w->data<int8_t>(), s->out_c, s->k, s->k,
                              s->input_offset - 128, &s->vnni);
    SetChunkRows(ctx, s);
    SetColumnSplit(s);
    // Im2col rows: a chunk per thread, or with the column split every
    // pixel's, once (fewer than the channels).
    const int64_t col_rows =
        s->column_split ? OutputPixels(*s) : s->threads * s->chunk_rows;
    ctx.RequestScratch(static_cast<size_t>(col_rows * QGemmVnniPaddedK(s->k)));
    ctx.SetEval(EvalQConvVnni);
  } else if (!is16 && w->constant && QGemmOffsetFits(s->input_offset)) {
    PackQFilter(s, w->data<int8_t>());
    PrepareRequantizeV8(s);
    SetChunkRows(ctx, s);
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

int64_t QConvColumnSplitCallsForTesting() {
  return g_conv_column_split_calls.load(std::memory_order_relaxed);
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(Conv2DQuantized);
GRAFT_DEFINE_KERNEL(DepthwiseConv2DQuantized);
GRAFT_DEFINE_KERNEL(TransposeConvQuantized);

}  // namespace graft
