// DEPTHWISE_CONV_2D (float32): NHWC input, filter [1, KH, KW, Cin * mult],
// optional bias, SAME/VALID padding, strides, dilations, fused activation.
//
// Direct loop, rows of output pixels split over threads. Each output is
// bias + the taps inside the input in (ky, kx) order, on every path.
// - Multiplier 1, channels a multiple of 8, filters 3 or 5 wide at stride
//   1 or 2 without horizontal dilation (almost every model's depthwise):
//   every output row goes 4 pixels at a time (PixelsRows), in blocks of 16
//   and 8 channels, over the filter rows inside the input (the same for the
//   whole output row); each input column of a filter row is loaded once for
//   all the (pixel, kx) that read it, each filter vector once for the 4
//   pixels (the AVX-512 build: blocks of 32 and 16 channels in 16-float
//   vectors). Groups at the left and right edges leave out the window columns
//   outside the input; the last group of a row moves back to end at the
//   row's end (a few pixels computed twice, the same sums). Without a
//   fused activation the sums are stored unclamped (the clamp to
//   [-inf, inf] is the identity, NaN included).
// - Otherwise, multiplier 1 and filters up to 7x7: the pixels whose windows
//   lie inside the input's width go 4 at a time over a list of tap offsets
//   (PixelsChannelBlock, the last group moved back as above); the others
//   list their taps and go one at a time in blocks of 32, 16 and 8 channels
//   held in registers (ChannelBlock; 32: four independent FMA chains).
// - Other channels (all of them for a multiplier above 1) go tap by tap
//   over the output vector.
// A HARD_SWISH the runtime fuses into the op (EpilogueOp) runs over each
// output row as soon as the row is complete, while it is in L1.
// At batch 1 it computes any band of output rows from a buffer holding
// only the input rows they read (EvalRowBand: the band as an image of its
// own, with the padding above it that is left), for a row pipeline
// (dispatch/row_pipeline.cc).
// The same source runs as an AVX2+FMA build where the CPU has it, and as
// an AVX-512 VL build (32 vector registers) where it has that
// (float_simd.h).
#include <algorithm>
#include <limits>

#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct DepthwiseState : KernelState {
  int batch, in_h, in_w, in_c, out_h, out_w, out_c, mult;
  int k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
  float lo, hi;
  // A fused HARD_SWISH: applied to each output row once it is complete,
  // while it is in L1.
  bool hard_swish = false;

  bool AppendEpilogue(EpilogueOp op) override {
    if (op != EpilogueOp::kHardSwish || hard_swish) return false;
    hard_swish = true;
    return true;
  }

  bool DescribeRowBands(RowBandShape* shape) const override {
    if (batch != 1) return false;
    *shape = ConvWindowRows(*this);
    return true;
  }
  void EvalRowBand(EvalContext& ctx, const RowBand& band) const override;
};

struct DepthwiseArgs {
  const float* input;
  const float* filter;
  const float* bias;  // or null
  float* output;
};

// Taps of one output pixel inside the input, in (ky, kx) order: where each
// reads the input and the filter (channel 0).
struct PixelTaps {
  static constexpr int kMax = 49;  // up to 7 x 7; larger filters go per tap
  int n = 0;
  const float* in[kMax];
  const float* w[kMax];
};

// Channels [c, c + 8 * NV) of one output pixel, multiplier 1.
template <int NV>
GRAFT_SIMD_INLINE void ChannelBlock(const PixelTaps& taps, const float* bias,
                                    V8 lo, V8 hi, int c, float* out) {
  alignas(32) V8 acc[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    acc[v] = bias ? LoadV8(bias + c + 8 * v) : Splat(0.0f);
  }
  for (int t = 0; t < taps.n; ++t) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      acc[v] += LoadV8(taps.in[t] + c + 8 * v) * LoadV8(taps.w[t] + c + 8 * v);
    }
  }
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) StoreV8(out + c + 8 * v, Clamp(acc[v], lo, hi));
}

// Channels [c, c + 8 * NV) of kPixels consecutive output pixels whose
// windows lie inside the input, multiplier 1: pixel p's tap t reads
// corner + p * step + tap_off[t]. Each filter vector is loaded once for
// the kPixels pixels (one load per FMA fewer than ChannelBlock); the sums
// are ChannelBlock's (bias + taps in (ky, kx) order).
constexpr int kPixels = 4;

// The bytes a group of pixels may read over its channels (DepthwiseRowsBody).
constexpr int64_t kDepthwiseL1Bytes = 24 * 1024;

template <int NV>
GRAFT_SIMD_INLINE void PixelsChannelBlock(const float* corner, int64_t step,
                                          const int64_t* tap_off, int taps_n,
                                          const float* filter, int64_t oc_n,
                                          const float* bias, V8 lo, V8 hi,
                                          int c, float* out) {
  alignas(32) V8 acc[kPixels][NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const V8 b = bias ? LoadV8(bias + c + 8 * v) : Splat(0.0f);
#pragma GCC unroll 4
    for (int p = 0; p < kPixels; ++p) acc[p][v] = b;
  }
  for (int t = 0; t < taps_n; ++t) {
    const float* w = filter + t * oc_n + c;
    const float* in = corner + tap_off[t] + c;
    alignas(32) V8 wv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) wv[v] = LoadV8(w + 8 * v);
#pragma GCC unroll 4
    for (int p = 0; p < kPixels; ++p) {
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        acc[p][v] += LoadV8(in + p * step + 8 * v) * wv[v];
      }
    }
  }
#pragma GCC unroll 4
  for (int p = 0; p < kPixels; ++p) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      StoreV8(out + p * oc_n + c + 8 * v, Clamp(acc[p][v], lo, hi));
    }
  }
}

// PixelsChannelBlock for a filter KW wide at horizontal stride SW (and no
// horizontal dilation): over `rows` filter rows from the one `row` points
// at (its first column is the group's first window's; filter rows
// row_stride floats apart), pixel p's tap kx reads column p * SW + kx of
// the row, in_c floats apart. Each of those columns is loaded once and
// serves every (pixel, kx) that reads it, each pixel's taps still in (ky,
// kx) order: for 3 x 3 at stride 1, per filter row 6 input loads and 3
// filter loads for 12 multiply-adds, where PixelsChannelBlock has 15.
template <int KW, int SW, int NV, bool kEdge, typename V = V8>
GRAFT_SIMD_INLINE void PixelsRowsBlock(const float* row, int64_t row_stride,
                                       int rows, int64_t in_c, int j_lo,
                                       int j_hi, const float* filter,
                                       int64_t oc_n, const float* bias,
                                       float lo, float hi, int c, float* out) {
  constexpr int kCols = (kPixels - 1) * SW + KW;
  constexpr int W = kLanes<V>;
  alignas(sizeof(V)) V acc[kPixels][NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const V b = bias ? LoadVec<V>(bias + c + W * v) : SplatVec<V>(0.0f);
#pragma GCC unroll 4
    for (int p = 0; p < kPixels; ++p) acc[p][v] = b;
  }
  row += c;
  filter += c;
  for (int r = 0; r < rows; ++r) {
    alignas(sizeof(V)) V w[KW][NV];
#pragma GCC unroll 8
    for (int kx = 0; kx < KW; ++kx) {
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) w[kx][v] = LoadVec<V>(filter + W * v);
      filter += oc_n;
    }
    // One pointer stepping over the columns: the offsets j * in_c would
    // each hold a register.
    const float* col = row;
#pragma GCC unroll 16
    for (int j = 0; j < kCols; ++j) {
      if (kEdge && (j < j_lo || j >= j_hi)) continue;
      alignas(sizeof(V)) V x[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) x[v] = LoadVec<V>(col + W * v);
      col += in_c;
#pragma GCC unroll 4
      for (int p = 0; p < kPixels; ++p) {
        const int kx = j - p * SW;
        if (kx < 0 || kx >= KW) continue;
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[p][v] += x[v] * w[kx][v];
      }
    }
    row += row_stride;
  }
  // Without a fused activation ([lo, hi] is everything, where the clamp is
  // the identity, NaN included) the sums are stored as they are.
  if (lo == -std::numeric_limits<float>::infinity() &&
      hi == std::numeric_limits<float>::infinity()) {
#pragma GCC unroll 4
    for (int p = 0; p < kPixels; ++p) {
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        StoreVec<V>(out + p * oc_n + c + W * v, acc[p][v]);
      }
    }
    return;
  }
  const V lo_v = SplatVec<V>(lo), hi_v = SplatVec<V>(hi);
#pragma GCC unroll 4
  for (int p = 0; p < kPixels; ++p) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      StoreVec<V>(out + p * oc_n + c + W * v, Clamp(acc[p][v], lo_v, hi_v));
    }
  }
}

// Channels [c0, c1) (a multiple of 8 apart) of one group of kPixels pixels
// through PixelsRowsBlock: blocks of 16 channels as two 8-float vectors, or
// with kWide (the AVX-512 build) blocks of 32 and 16 as 16-float ones (on
// Zen 5, whose multiply-adds are 512 bits wide, twice the work per
// instruction); a last 8 as one 8-float vector. Of the group's window
// columns, [j_lo, j_hi) are inside the input (`row` points at column
// j_lo): the others are taps outside the input, left out of the sums as
// everywhere else.
template <int KW, int SW, bool kWide, bool kEdge>
GRAFT_SIMD_INLINE void PixelsRowsAs(const float* row, int64_t row_stride,
                                    int rows, int64_t in_c, int j_lo, int j_hi,
                                    const float* filter, int64_t oc_n,
                                    const float* bias, float lo, float hi,
                                    int c0, int c1, float* out) {
  int c = c0;
  if constexpr (kWide) {
    for (; c + 32 <= c1; c += 32) {
      PixelsRowsBlock<KW, SW, 2, kEdge, V16>(row, row_stride, rows, in_c, j_lo,
                                             j_hi, filter, oc_n, bias, lo, hi,
                                             c, out);
    }
    if (c + 16 <= c1) {
      PixelsRowsBlock<KW, SW, 1, kEdge, V16>(row, row_stride, rows, in_c, j_lo,
                                             j_hi, filter, oc_n, bias, lo, hi,
                                             c, out);
      c += 16;
    }
  } else {
    for (; c + 16 <= c1; c += 16) {
      PixelsRowsBlock<KW, SW, 2, kEdge>(row, row_stride, rows, in_c, j_lo, j_hi,
                                        filter, oc_n, bias, lo, hi, c, out);
    }
  }
  if (c < c1) {
    PixelsRowsBlock<KW, SW, 1, kEdge>(row, row_stride, rows, in_c, j_lo, j_hi,
                                      filter, oc_n, bias, lo, hi, c, out);
  }
}

template <int KW, int SW, bool kWide>
GRAFT_SIMD_INLINE void PixelsRows(const float* row, int64_t row_stride,
                                  int rows, int64_t in_c, int j_lo, int j_hi,
                                  const float* filter, int64_t oc_n,
                                  const float* bias, float lo, float hi, int c0,
                                  int c1, float* out) {
  constexpr int kCols = (kPixels - 1) * SW + KW;
  if (j_lo == 0 && j_hi == kCols) {
    PixelsRowsAs<KW, SW, kWide, false>(row, row_stride, rows, in_c, j_lo, j_hi,
                                       filter, oc_n, bias, lo, hi, c0, c1, out);
  } else {
    PixelsRowsAs<KW, SW, kWide, true>(row, row_stride, rows, in_c, j_lo, j_hi,
                                      filter, oc_n, bias, lo, hi, c0, c1, out);
  }
}

// Calls fn(input, filter) for each tap of output pixel (b, oy, ox) inside
// the input, in (ky, kx) order: where the tap reads the input and the
// filter (channel 0).
template <typename Fn>
GRAFT_SIMD_INLINE void ForEachTap(const DepthwiseState& s,
                                  const DepthwiseArgs& a, int b, int oy,
                                  int ox, Fn fn) {
  for (int ky = 0; ky < s.k_h; ++ky) {
    const int iy = oy * s.stride_h - s.pad_h + ky * s.dil_h;
    if (iy < 0 || iy >= s.in_h) continue;
    for (int kx = 0; kx < s.k_w; ++kx) {
      const int ix = ox * s.stride_w - s.pad_w + kx * s.dil_w;
      if (ix < 0 || ix >= s.in_w) continue;
      fn(a.input + ((int64_t{b} * s.in_h + iy) * s.in_w + ix) * s.in_c,
         a.filter + (int64_t{ky} * s.k_w + kx) * s.out_c);
    }
  }
}

// How many kPixels groups DepthwiseRowsBody computed together; of them,
// how many on an output row whose window the top or bottom edge cuts, how
// many through PixelsRows, and how many of those with window columns
// outside the input; how many output rows went over several spans of
// channels.
struct GroupCounts {
  int64_t groups = 0, cut_groups = 0, row_groups = 0, edge_groups = 0;
  int64_t span_rows = 0;
};

// kWide: the AVX-512 build's (PixelsRows's 16-float blocks).
template <bool kWide>
GRAFT_SIMD_INLINE void DepthwiseRowsBody(const DepthwiseState& s,
                                         const DepthwiseArgs& a,
                                         int64_t row_begin, int64_t row_end,
                                         GroupCounts& n) {
  const int oc_n = s.out_c;
  const bool blocked =
      s.mult == 1 && s.k_h * s.k_w <= PixelTaps::kMax && oc_n >= 8;
  const V8 lo = Splat(s.lo), hi = Splat(s.hi);
  PixelTaps taps;
  // A pixel whose window lies inside the input has every tap, each at a
  // fixed offset from the window's corner: listed without the bounds tests
  // (the same taps in the same order).
  const int taps_n = s.k_h * s.k_w;
  int64_t tap_off[PixelTaps::kMax];
  int ox_lo = s.out_w, ox_hi = s.out_w;
  if (blocked) {
    for (int ky = 0, t = 0; ky < s.k_h; ++ky) {
      for (int kx = 0; kx < s.k_w; ++kx, ++t) {
        tap_off[t] =
            (int64_t{ky} * s.dil_h * s.in_w + int64_t{kx} * s.dil_w) * s.in_c;
        taps.w[t] = a.filter + int64_t{t} * oc_n;
      }
    }
    // Output columns whose window is inside the input's width.
    const int span_w = (s.k_w - 1) * s.dil_w;
    ox_lo = std::min(s.out_w, (s.pad_w + s.stride_w - 1) / s.stride_w);
    ox_hi = s.in_w - 1 - span_w + s.pad_w >= 0
                ? std::min(s.out_w,
                           (s.in_w - 1 - span_w + s.pad_w) / s.stride_w + 1)
                : 0;
    ox_hi = std::max(ox_lo, ox_hi);
  }
  const bool grouped = blocked && oc_n % 8 == 0 && ox_hi - ox_lo >= kPixels;
  const int64_t step = int64_t{s.stride_w} * s.in_c;
  const int64_t row_stride = int64_t{s.dil_h} * s.in_w * s.in_c;
  // Filters 3 or 5 wide at stride 1 or 2 without horizontal dilation: the
  // groups reuse the input columns (PixelsRows; 0: not).
  // Every pixel of a row goes in groups there, those at the left and right
  // edges too (leaving out the columns outside the input).
  int row_kind = 0;
  if (blocked && oc_n % 8 == 0 && s.out_w >= kPixels && s.dil_w == 1 &&
      (s.k_w == 3 || s.k_w == 5) && (s.stride_w == 1 || s.stride_w == 2)) {
    row_kind = s.k_w * 10 + s.stride_w;
  }
  // What a group reads over all channels, the filter rows' taps and the
  // window's columns (kPixels - 1) * stride + k_w wide, must stay in L1
  // for the next group: where it would not (61 KB a group in MobileNetV2's
  // 14 x 14 x 576 layers, which ran at 1.29x LiteRT's time so), the
  // groups of a row go over spans of channels that fit kDepthwiseL1Bytes,
  // a multiple of 32 (the widest block), one span after the other.
  // A group's window columns (row kernel).
  const int kcols = (kPixels - 1) * s.stride_w + s.k_w;
  int channel_span = oc_n;
  if (row_kind != 0) {
    const int64_t per_channel =
        int64_t{sizeof(float)} * s.k_h * (s.k_w + kcols);
    const int64_t fit = std::max<int64_t>(32, kDepthwiseL1Bytes / per_channel);
    if (fit < oc_n) {
      // As many spans as that takes, about the same size.
      const int64_t spans = (oc_n + fit - 1) / fit;
      channel_span = static_cast<int>((oc_n / spans + 31) / 32 * 32);
    }
  }
  const int64_t row_floats = int64_t{s.out_w} * oc_n;
  auto finish_row = [&](int64_t row) {
    float* out = a.output + row * row_floats;
    if (s.hard_swish) HardSwishRun(out, out, row_floats);
  };
  for (int64_t row = row_begin; row < row_end; ++row) {
    const int b = static_cast<int>(row / s.out_h);
    const int oy = static_cast<int>(row % s.out_h);
    const int iy0 = oy * s.stride_h - s.pad_h;
    const bool rows_in = iy0 >= 0 && iy0 + (s.k_h - 1) * s.dil_h < s.in_h;
    // The filter rows [ky_lo, ky_hi) inside the input: the same for every
    // pixel of this output row, so the pixels whose window is inside the
    // input's width go kPixels at a time over those rows' taps (the
    // window's first tap_n of tap_off, from row iy0 + ky_lo * dil_h).
    int ky_lo = 0, ky_hi = 0;
    if (grouped || row_kind != 0) {
      while (ky_lo < s.k_h && iy0 + ky_lo * s.dil_h < 0) ++ky_lo;
      ky_hi = ky_lo;
      while (ky_hi < s.k_h && iy0 + ky_hi * s.dil_h < s.in_h) ++ky_hi;
    }
    const int row_taps = (ky_hi - ky_lo) * s.k_w;
    if (row_kind != 0) {
      const int rows = ky_hi - ky_lo;
      const float* filter = a.filter + int64_t{ky_lo} * s.k_w * oc_n;
      for (int c0 = 0; c0 < oc_n; c0 += channel_span) {
        const int c1 = std::min(oc_n, c0 + channel_span);
        for (int g0 = 0;; g0 += kPixels) {
          // The last group moves back to end at the row's end.
          g0 = std::min(g0, s.out_w - kPixels);
          float* out =
              a.output + ((int64_t{b} * s.out_h + oy) * s.out_w + g0) * oc_n;
          const int wx = g0 * s.stride_w - s.pad_w;  // window's first column
          const int j_lo = std::min(kcols, std::max(0, -wx));
          const int j_hi = std::max(j_lo, std::min(kcols, s.in_w - wx));
          const float* corner =
              rows == 0 || j_lo == j_hi
                  ? a.input
                  : a.input + ((int64_t{b} * s.in_h + iy0 + ky_lo * s.dil_h) *
                                   s.in_w +
                               (wx + j_lo)) *
                                  s.in_c;
          switch (row_kind) {
            case 31:
              PixelsRows<3, 1, kWide>(corner, row_stride, rows, s.in_c, j_lo,
                                      j_hi, filter, oc_n, a.bias, s.lo, s.hi,
                                      c0, c1, out);
              break;
            case 32:
              PixelsRows<3, 2, kWide>(corner, row_stride, rows, s.in_c, j_lo,
                                      j_hi, filter, oc_n, a.bias, s.lo, s.hi,
                                      c0, c1, out);
              break;
            case 51:
              PixelsRows<5, 1, kWide>(corner, row_stride, rows, s.in_c, j_lo,
                                      j_hi, filter, oc_n, a.bias, s.lo, s.hi,
                                      c0, c1, out);
              break;
            default:
              PixelsRows<5, 2, kWide>(corner, row_stride, rows, s.in_c, j_lo,
                                      j_hi, filter, oc_n, a.bias, s.lo, s.hi,
                                      c0, c1, out);
              break;
          }
          if (c0 == 0) {
            ++n.groups;
            ++n.row_groups;
            if (row_taps < taps_n) ++n.cut_groups;
            if (j_lo > 0 || j_hi < kcols) ++n.edge_groups;
          }
          if (g0 + kPixels >= s.out_w) break;
        }
      }
      if (channel_span < oc_n) ++n.span_rows;
      finish_row(row);
      continue;
    }
    for (int ox = 0; ox < s.out_w; ++ox) {
      float* out =
          a.output + ((int64_t{b} * s.out_h + oy) * s.out_w + ox) * oc_n;
      if (grouped && ox >= ox_lo && ox < ox_hi) {
        // kPixels interior pixels at once; the last group of the row moves
        // back to end at ox_hi, computing some pixels a second time (the
        // same sums).
        const int g0 = std::min(ox, ox_hi - kPixels);
        out -= int64_t{ox - g0} * oc_n;
        const float* corner =
            row_taps == 0
                ? a.input
                : a.input + ((int64_t{b} * s.in_h + iy0 + ky_lo * s.dil_h) *
                                 s.in_w +
                             (g0 * s.stride_w - s.pad_w)) *
                                s.in_c;
        const float* filter = a.filter + int64_t{ky_lo} * s.k_w * oc_n;
        int c = 0;
        for (; c + 16 <= oc_n; c += 16) {
          PixelsChannelBlock<2>(corner, step, tap_off, row_taps, filter, oc_n,
                                a.bias, lo, hi, c, out);
        }
        if (c < oc_n) {
          PixelsChannelBlock<1>(corner, step, tap_off, row_taps, filter, oc_n,
                                a.bias, lo, hi, c, out);
        }
        ox = g0 + kPixels - 1;
        ++n.groups;
        if (row_taps < taps_n) ++n.cut_groups;
        continue;
      }
      int c0 = 0;  // channels below c0 are done
      if (blocked) {
        if (rows_in && ox >= ox_lo && ox < ox_hi) {
          const float* corner =
              a.input + ((int64_t{b} * s.in_h + iy0) * s.in_w +
                         (ox * s.stride_w - s.pad_w)) *
                            s.in_c;
          for (int t = 0; t < taps_n; ++t) {
            taps.in[t] = corner + tap_off[t];
            taps.w[t] = a.filter + int64_t{t} * oc_n;
          }
          taps.n = taps_n;
        } else {
          taps.n = 0;
          ForEachTap(s, a, b, oy, ox, [&](const float* in, const float* w) {
            taps.in[taps.n] = in;
            taps.w[taps.n] = w;
            ++taps.n;
          });
        }
        for (; c0 + 32 <= oc_n; c0 += 32) {
          ChannelBlock<4>(taps, a.bias, lo, hi, c0, out);
        }
        for (; c0 + 16 <= oc_n; c0 += 16) {
          ChannelBlock<2>(taps, a.bias, lo, hi, c0, out);
        }
        for (; c0 + 8 <= oc_n; c0 += 8) {
          ChannelBlock<1>(taps, a.bias, lo, hi, c0, out);
        }
        if (c0 == oc_n) continue;
      }
      // The remaining channels (all of them for a multiplier above 1), one
      // tap at a time over the output vector.
      for (int c = c0; c < oc_n; ++c) out[c] = a.bias ? a.bias[c] : 0.0f;
      ForEachTap(s, a, b, oy, ox, [&](const float* in, const float* w) {
        if (s.mult == 1) {
          for (int c = c0; c < oc_n; ++c) out[c] += in[c] * w[c];
        } else {
          for (int ic = 0; ic < s.in_c; ++ic) {
            const float v = in[ic];
            for (int m = 0; m < s.mult; ++m) {
              out[ic * s.mult + m] += v * w[ic * s.mult + m];
            }
          }
        }
      });
      for (int c = c0; c < oc_n; ++c) {
        out[c] = std::min(std::max(out[c], s.lo), s.hi);
      }
    }
    finish_row(row);
  }
}

using DepthwiseRowsFn = void (*)(const DepthwiseState&, const DepthwiseArgs&,
                                 int64_t, int64_t);

CallCounter pixel_groups[3];  // per CpuIsa
CallCounter cut_row_groups, row_kernel_groups, edge_groups, span_rows;

void CountGroups(int isa, const GroupCounts& n) {
  if (n.groups > 0) pixel_groups[isa].fetch_add(n.groups, std::memory_order_relaxed);
  if (n.cut_groups > 0) {
    cut_row_groups.fetch_add(n.cut_groups, std::memory_order_relaxed);
  }
  if (n.row_groups > 0) {
    row_kernel_groups.fetch_add(n.row_groups, std::memory_order_relaxed);
  }
  if (n.edge_groups > 0) {
    edge_groups.fetch_add(n.edge_groups, std::memory_order_relaxed);
  }
  if (n.span_rows > 0) {
    span_rows.fetch_add(n.span_rows, std::memory_order_relaxed);
  }
}

void DepthwiseRowsBaseline(const DepthwiseState& s, const DepthwiseArgs& a,
                           int64_t row_begin, int64_t row_end) {
  GroupCounts n;
  DepthwiseRowsBody<false>(s, a, row_begin, row_end, n);
  CountGroups(0, n);
}

#if GRAFT_HAVE_AVX2_FMA_BUILD
GRAFT_AVX2_FMA_TARGET void DepthwiseRowsAvx2Fma(const DepthwiseState& s,
                                                const DepthwiseArgs& a,
                                                int64_t row_begin,
                                                int64_t row_end) {
  GroupCounts n;
  DepthwiseRowsBody<false>(s, a, row_begin, row_end, n);
  CountGroups(1, n);
}

GRAFT_AVX512VL_TARGET void DepthwiseRowsAvx512Vl(const DepthwiseState& s,
                                                 const DepthwiseArgs& a,
                                                 int64_t row_begin,
                                                 int64_t row_end) {
  GroupCounts n;
  DepthwiseRowsBody<true>(s, a, row_begin, row_end, n);
  CountGroups(2, n);
}
#endif

DepthwiseRowsFn PickDepthwiseRows() {
#if GRAFT_HAVE_AVX2_FMA_BUILD
  if (CpuHasAvx512Vl()) return DepthwiseRowsAvx512Vl;
  if (CpuHasAvx2Fma()) return DepthwiseRowsAvx2Fma;
#endif
  return DepthwiseRowsBaseline;
}

absl::Status EvalDepthwise(EvalContext& ctx) {
  const DepthwiseRowsFn rows_fn = PickDepthwiseRows();
  const DepthwiseState& s = *ctx.state<DepthwiseState>();
  const Tensor* bias_t = ctx.input(2);
  const DepthwiseArgs a{
      ctx.input(0)->data<float>(), ctx.input(1)->data<float>(),
      bias_t ? bias_t->data<float>() : nullptr, ctx.output(0)->data<float>()};
  auto body = [&](int64_t row_begin, int64_t row_end) {
    rows_fn(s, a, row_begin, row_end);
  };
  const int oc_n = s.out_c;
  const int64_t rows = int64_t{s.batch} * s.out_h;
  // Work per row: out_w * taps * channels multiply-adds.
  const int64_t per_row =
      std::max<int64_t>(1, int64_t{s.out_w} * s.k_h * s.k_w * oc_n);
  const int64_t min_rows = std::max<int64_t>(1, 32768 / per_row);
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(rows, min_rows, body);
  } else {
    body(0, rows);
  }
  return absl::OkStatus();
}

// The band as an image of its own: the output rows [begin, end), the input
// rows they read that lie inside the input, and the padding above them
// that is left (the same taps, in the same order, at the same offsets).
void DepthwiseState::EvalRowBand(EvalContext& ctx, const RowBand& band) const {
  DepthwiseState s = *this;
  int64_t first_in, end_in;
  ConvWindowRows(*this).InputRows(band.begin, band.end, &first_in, &end_in);
  s.out_h = static_cast<int>(band.end - band.begin);
  s.in_h = static_cast<int>(end_in - first_in);
  s.pad_h = static_cast<int>(pad_h - band.begin * stride_h + first_in);
  const Tensor* bias_t = ctx.input(2);
  const DepthwiseArgs a{
      band.input + (first_in - band.input_row0) * in_w * in_c,
      ctx.input(1)->data<float>(), bias_t ? bias_t->data<float>() : nullptr,
      band.output + (band.begin - band.output_row0) * out_w * out_c};
  PickDepthwiseRows()(s, a, 0, s.out_h);
}

absl::Status PrepareDepthwiseConv2D(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* filter, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  if (in->type != tfl::TensorType_FLOAT32 ||
      filter->type != tfl::TensorType_FLOAT32 ||
      (bias && bias->type != tfl::TensorType_FLOAT32) ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat(
        "%s input with %s weights", TensorTypeName(in->type),
        TensorTypeName(filter->type)));
  }
  GRAFT_KERNEL_CHECK(in->rank() == 4 && filter->rank() == 4,
                     "input and filter must be 4-D, got %s and %s",
                     ShapeToString(in->shape), ShapeToString(filter->shape));
  const auto* o = ctx.op().builtin_options.AsDepthwiseConv2DOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing DepthwiseConv2DOptions");
  auto* s = MakeState<DepthwiseState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->k_h = filter->dim(1), s->k_w = filter->dim(2), s->out_c = filter->dim(3);
  GRAFT_KERNEL_CHECK(s->in_c > 0 && s->out_c % s->in_c == 0,
                     "filter depth %d is not a multiple of input depth %d",
                     s->out_c, s->in_c);
  s->mult = s->out_c / s->in_c;
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->out_c,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->out_c);
  GRAFT_RETURN_IF_ERROR(PrepareConvWindow(*o, s));
  GRAFT_RETURN_IF_ERROR(
      ActivationRange(o->fused_activation_function, &s->lo, &s->hi));
  ctx.SetEval(EvalDepthwise);
  ctx.SetReductionLength(int64_t{s->k_h} * s->k_w);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

}  // namespace

int64_t FloatDepthwisePixelGroupsForTesting(CpuIsa path) {
  return pixel_groups[static_cast<int>(path)].load();
}

int64_t FloatDepthwiseCutRowGroupsForTesting() {
  return cut_row_groups.load();
}

int64_t FloatDepthwiseRowKernelGroupsForTesting() {
  return row_kernel_groups.load();
}

int64_t FloatDepthwiseEdgeGroupsForTesting() { return edge_groups.load(); }
int64_t FloatDepthwiseChannelSpanRowsForTesting() { return span_rows.load(); }

}  // namespace kernels

GRAFT_DEFINE_KERNEL(DepthwiseConv2D);

}  // namespace graft
