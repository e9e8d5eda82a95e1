// Hybrid CONV_2D: FLOAT32 input and output, INT8 filter [O, KH, KW, I]
// quantized symmetrically per output channel (or per tensor), optional
// FLOAT32 bias: what the converter's dynamic-range quantization
// (Optimize.DEFAULT without a representative dataset) emits for a Conv2D.
// Bit-exact with ai-edge-litert 2.3.0 (tflite/kernels/conv.cc), whose
// Prepare picks one of two paths by the filter's scales:
//
// Per channel (scales that are not all equal): EvalHybridPerChannel, run
// under the BUILTIN_REF resolver (Graft's oracle) as
// reference_ops::HybridConvPerChannel. Per batch image b:
//   1. the whole image (H * W * I values) is quantized to int8,
//      asymmetrically (AsymmetricQuantizeRow: scale s_b, zero point z_b),
//      always: Conv2DOptions has no asymmetric_quantize_inputs;
//   2. per output pixel and channel o, in int32: acc = sum over the taps
//      inside the image of w * (q - z_b) (taps in the padding add nothing);
//   3. out = float(acc) * wscale[o] * s_b (in that order, in float), then
//      + bias[o], then the fused activation's clamp.
// (The builtin resolver's optimized_ops::HybridConvPerChannel computes
// float(acc) * (s_b * wscale[o]) instead, which can differ in the last
// bit.)
//
// Per tensor (one scale, or all equal): EvalHybrid, the same code for both
// resolvers (optimized_ops::HybridConv): the image is quantized
// symmetrically (SymmetricQuantizeRow: s_b); out = float(acc) * (s_b *
// wscale) + bias[o], clamped.
//
// Every product and sum is rounded to float on its own, as in TFLite (the
// build targets baseline x86-64: no FMA to contract them into).
//
// Eval quantizes the images into scratch, then per chunk of output pixels
// builds their im2col rows of q - z_b (taps in the padding hold 0, so they
// add nothing, as in TFLite) and multiplies them with the packed weights in
// the 8-bit GEMM (quantized_gemm.h), whose int32 sums are TFLite's acc in
// another order (integer addition is associative); chunks go to the thread
// pool. Where KernelIsa() is kAvx512Vnni at prepare (EvalHybridConvVnni)
// the images are quantized to unsigned bytes u = q + 128 and multiplied
// with vpdpbusd (hybrid_util.h's HybridVnniConvTaps): 1x1 stride-1
// convolutions straight from the image rows, others from a padded copy of
// the image (padding z_b + 128, so that q - z_b = 0 there) tap by tap, a
// tap being a whole filter row where the dilation in width is 1, no
// im2col; acc = sums - (z_b + 128) * column sum, the same int32 values,
// taken through the float epilogue in registers.
// Refused: grouped convolution (a filter
// depth other than the input's), weights with a zero point or custom
// quantization details, weights computed at run time, fused TANH and
// SIGN_BIT.
//
// Hybrid DEPTHWISE_CONV_2D: FLOAT32 input and output, INT8 filter [1, KH,
// KW, O] with one scale per output channel (TFLite's Prepare requires as
// many scales as the quantized dimension, and the converter quantizes
// dimension 3), optional FLOAT32 bias. Bit-exact with ai-edge-litert 2.3.0
// under BUILTIN_REF (tflite/kernels/depthwise_conv.cc EvalHybridPerChannel,
// reference_integer_ops::DepthwiseConvHybridPerChannel): each image is
// quantized asymmetrically as above; acc = sum over the taps inside the
// image of w * (q - z_b); out = float(acc) * (wscale[o] * s_b) + bias[o]
// (the scale product first, unlike CONV_2D's reference), clamped. Same
// refusals, and one scale for several output channels.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/hybrid_util.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantized_gemm.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct HybridConvState : KernelState {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int out_h = 0, out_w = 0, out_c = 0, k_h = 0, k_w = 0;
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_h = 0, pad_w = 0;
  bool per_channel = true;       // asymmetric inputs, reference order
  int64_t k = 0;                 // reduction length KH * KW * I
  std::vector<int16_t> packed;   // the weights, packed for QGemmSums
  int64_t panels = 0;
  std::vector<float> scales;     // per output channel
  float lo = 0, hi = 0;
  int threads = 1;
  int64_t chunk_rows = 0;        // output pixels per GEMM call
  // AVX-512 VNNI (chosen at prepare where KernelIsa() has it): images
  // quantized to unsigned bytes, weights packed for HybridVnniConvTaps;
  // direct: a 1x1 stride-1 convolution whose image rows are the GEMM's
  // rows.
  bool vnni = false, direct = false;
  HybridVnniWeights vw;
  // VNNI, not direct: the images copied into a padded image of hp x wp
  // pixels of in_c bytes (padding z_b + 128) and multiplied tap by tap
  // (HybridVnniConvTaps). With dilation 1 in width a tap is a whole
  // filter row (row_taps: k_w * in_c contiguous bytes), else one filter
  // pixel (in_c bytes); the weights packed as [O, taps * tap bytes
  // rounded up to 4], zero in each tap's padding (whose bytes, up to 3
  // past the tap, are read: the images have kTapSlack more). Direct: one
  // tap at offset 0.
  bool row_taps = false;
  int64_t hp = 0, wp = 0;
  std::vector<int64_t> tap_off;
  // Whether the VNNI path splits its work over the thread pool: not for
  // small convolutions, where the handoff costs more than it saves.
  bool parallel = true;
};

// Multiply-adds below which the VNNI convolution runs on one thread (a
// 16x16x8 -> 16 3x3 convolution, 295K, ran slower on two).
constexpr int64_t kHybridParallelMacs = int64_t{1} << 20;

// Output pixels per GEMM call (per thread), at most.
constexpr int64_t kHybridChunkRows = 64;

// Bytes after the VNNI path's images (and padded images) that its reads
// of a last row or tap rounded up to 4 bytes may reach, against zero
// weights; zeroed so that they hold defined values.
constexpr int64_t kTapSlack = 4;

CallCounter g_conv_row_taps_calls;

// Quantizes each of `batch` images of `image` floats into q (int16), with
// its scale and zero point: asymmetrically, or symmetrically (zero point 0).
void QuantizeImages(const float* in, int batch, int64_t image, bool asymmetric,
                    float* scale, int32_t* zero_point, int16_t* q) {
  for (int b = 0; b < batch; ++b) {
    if (asymmetric) {
      AsymmetricQuantizeRow(in + b * image, image, q + b * image, &scale[b],
                            &zero_point[b]);
    } else {
      SymmetricQuantizeRow(in + b * image, image, q + b * image, &scale[b]);
      zero_point[b] = 0;
    }
  }
}

// Rows [r0, r1) of the im2col matrix of the quantized images, as q - z_b,
// in QGemmSums' a layout (rows of QGemmPaddedK(k), the pad zero).
void HybridIm2Col(const HybridConvState& s, const int16_t* q,
                  const int32_t* zero_point, int64_t r0, int64_t r1,
                  int16_t* col) {
  const int64_t kp = QGemmPaddedK(s.k);
  const int64_t image = int64_t{s.in_h} * s.in_w * s.in_c;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / (int64_t{s.out_h} * s.out_w);
    const int oy = static_cast<int>(r / s.out_w % s.out_h);
    const int ox = static_cast<int>(r % s.out_w);
    const int16_t z = static_cast<int16_t>(zero_point[b]);
    int16_t* dst = col + (r - r0) * kp;
    if (kp != s.k) dst[s.k] = 0;
    for (int ky = 0; ky < s.k_h; ++ky) {
      const int iy = oy * s.stride_h - s.pad_h + ky * s.dil_h;
      for (int kx = 0; kx < s.k_w; ++kx) {
        const int ix = ox * s.stride_w - s.pad_w + kx * s.dil_w;
        if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) {
          std::fill(dst, dst + s.in_c, int16_t{0});
        } else {
          const int16_t* src =
              q + b * image + (int64_t{iy} * s.in_w + ix) * s.in_c;
          for (int c = 0; c < s.in_c; ++c) {
            dst[c] = static_cast<int16_t>(src[c] - z);
          }
        }
        dst += s.in_c;
      }
    }
  }
}

absl::Status EvalHybridConv(EvalContext& ctx) {
  const HybridConvState& s = *ctx.state<HybridConvState>();
  const float* in = ctx.input(0)->data<float>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();

  // Scratch: per image its scale and zero point; per thread the GEMM's sums
  // and im2col rows; the quantized images.
  const int64_t image = int64_t{s.in_h} * s.in_w * s.in_c;
  const int64_t kp = QGemmPaddedK(s.k);
  float* scale = ctx.scratch_as<float>();
  int32_t* zero_point = reinterpret_cast<int32_t*>(scale + s.batch);
  int32_t* sums = zero_point + s.batch;
  int16_t* cols = reinterpret_cast<int16_t*>(
      sums + s.threads * s.chunk_rows * s.out_c);
  int16_t* q = cols + s.threads * s.chunk_rows * kp;
  QuantizeImages(in, s.batch, image, s.per_channel, scale, zero_point, q);

  const int64_t pixels = int64_t{s.out_h} * s.out_w;
  const int64_t rows = s.batch * pixels;
  const int64_t chunks = (rows + s.chunk_rows - 1) / s.chunk_rows;
  auto body = [&](int thread, int64_t begin, int64_t end) {
    int16_t* col = cols + thread * s.chunk_rows * kp;
    int32_t* acc = sums + thread * s.chunk_rows * s.out_c;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * s.chunk_rows;
      const int64_t r1 = std::min(rows, r0 + s.chunk_rows);
      HybridIm2Col(s, q, zero_point, r0, r1, col);
      QGemmSums(col, r1 - r0, s.k, s.packed.data(), s.out_c, 0, s.panels, acc,
                s.out_c);
      for (int64_t r = r0; r < r1; ++r) {
        const float sb = scale[r / pixels];
        const int32_t* a = acc + (r - r0) * s.out_c;
        float* o_px = out + r * s.out_c;
        for (int o = 0; o < s.out_c; ++o) {
          const float dot = static_cast<float>(a[o]);
          float v = s.per_channel ? dot * s.scales[o] * sb
                                  : dot * (sb * s.scales[o]);
          if (bias != nullptr) v += bias[o];
          o_px[o] = std::min(std::max(v, s.lo), s.hi);
        }
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

// EvalHybridConv with unsigned-byte images and the VNNI products, the
// float epilogue applied in registers (HybridVnniConvTaps), one image at a
// time.
absl::Status EvalHybridConvVnni(EvalContext& ctx) {
#if GRAFT_QGEMM_AVX2
  const HybridConvState& s = *ctx.state<HybridConvState>();
  const float* in = ctx.input(0)->data<float>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();
  // Scratch: per image its scale and zero point, the images as bytes, then
  // (not direct) the padded images, each followed by kTapSlack bytes.
  const int64_t image = int64_t{s.in_h} * s.in_w * s.in_c;
  float* scale = ctx.scratch_as<float>();
  int32_t* zero_point = reinterpret_cast<int32_t*>(scale + s.batch);
  uint8_t* u = reinterpret_cast<uint8_t*>(zero_point + s.batch);
  for (int b = 0; b < s.batch; ++b) {
    if (s.per_channel) {
      AsymmetricQuantizeRowU8(in + b * image, image, u + b * image, &scale[b],
                              &zero_point[b]);
    } else {
      SymmetricQuantizeRowU8(in + b * image, image, u + b * image, &scale[b]);
      zero_point[b] = 0;
    }
  }
  std::memset(u + s.batch * image, 0, kTapSlack);
  auto epilogue = [&](int64_t b) {
    HybridVnniConvEpilogue e;
    e.wscale = s.scales.data(), e.bias = bias, e.lo = s.lo, e.hi = s.hi;
    e.per_channel = s.per_channel;
    e.a_offset = zero_point[b] + 128, e.scale = scale[b];
    return e;
  };
  const int taps = static_cast<int>(s.tap_off.size());
  if (!s.direct) {
    if (s.row_taps) {
      g_conv_row_taps_calls.fetch_add(1, std::memory_order_relaxed);
    }
    const int64_t row_bytes = s.wp * s.in_c;
    const int64_t pimage = s.hp * row_bytes;
    // Without padding (VALID, no rows or columns past the image) the image
    // is its own padded image.
    const bool unpadded = pimage == image;
    uint8_t* padded = unpadded ? u : u + s.batch * image + kTapSlack;
    if (!unpadded) {
      for (int b = 0; b < s.batch; ++b) {
        uint8_t* pb = padded + b * pimage;
        std::memset(pb, zero_point[b] + 128, pimage);
        const int64_t in_row = int64_t{s.in_w} * s.in_c;
        uint8_t* dst = pb + s.pad_h * row_bytes + int64_t{s.pad_w} * s.in_c;
        for (int y = 0; y < s.in_h; ++y) {
          std::memcpy(dst + y * row_bytes, u + b * image + y * in_row, in_row);
        }
      }
      std::memset(padded + s.batch * pimage, 0, kTapSlack);
    }
    // Output rows [begin, end), split at images.
    auto rows_body = [&](int64_t begin, int64_t end) {
      while (begin < end) {
        const int64_t b = begin / s.out_h, oy = begin % s.out_h;
        const int64_t n = std::min(end - begin, s.out_h - oy);
        const HybridVnniConvEpilogue e = epilogue(b);
        HybridVnniConvTaps(padded + b * pimage + oy * s.stride_h * row_bytes,
                           s.stride_h * row_bytes, int64_t{s.stride_w} * s.in_c,
                           n, s.out_w, s.vw, s.tap_off.data(), taps, e,
                           out + begin * s.out_w * s.out_c, s.out_c);
        begin += n;
      }
    };
    const int64_t out_rows = int64_t{s.batch} * s.out_h;
    if (ctx.thread_pool() != nullptr && out_rows > 1 && s.parallel) {
      ctx.thread_pool()->ParallelFor(out_rows, 1, rows_body);
    } else {
      rows_body(0, out_rows);
    }
    return absl::OkStatus();
  }
  // Direct: the image rows are the GEMM's rows; chunks split at images.
  const int64_t pixels = int64_t{s.out_h} * s.out_w;
  const int64_t rows = s.batch * pixels;
  const int64_t chunks = (rows + s.chunk_rows - 1) / s.chunk_rows;
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t r0 = begin * s.chunk_rows,
                 r1 = std::min(rows, end * s.chunk_rows);
         r0 < r1;) {
      const int64_t b = r0 / pixels;
      const int64_t n = std::min(r1, (b + 1) * pixels) - r0;
      const HybridVnniConvEpilogue e = epilogue(b);
      HybridVnniConvTaps(u + r0 * s.in_c, 0, s.in_c, 1, n, s.vw,
                         s.tap_off.data(), taps, e, out + r0 * s.out_c,
                         s.out_c);
      r0 += n;
    }
  };
  if (ctx.thread_pool() != nullptr && chunks > 1 && s.parallel) {
    ctx.thread_pool()->ParallelFor(chunks, 1, body);
  } else {
    body(0, chunks);
  }
  return absl::OkStatus();
#else
  (void)ctx;
  return absl::InternalError("no AVX-512 VNNI build");
#endif
}

absl::Status PrepareConv2DHybrid(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  const auto* o = ctx.op().builtin_options.AsConv2DOptions();
  const tfl::ActivationFunctionType act =
      o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE;
  GRAFT_ASSIGN_OR_RETURN(
      const std::string types,
      CheckHybridOp(ctx, *in, *w, {tfl::TensorType_INT8},
                    act));
  GRAFT_RETURN_IF_ERROR(CheckHybridWeights(ctx, *w, types));
  const tfl::QuantizationParametersT* q = w->quantization;
  GRAFT_KERNEL_CHECK(in->rank() == 4 && w->rank() == 4,
                     "input and filter must be 4-D");
  GRAFT_KERNEL_CHECK(o != nullptr, "missing Conv2DOptions");

  auto* s = MakeState<HybridConvState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->out_c = w->dim(0), s->k_h = w->dim(1), s->k_w = w->dim(2);
  GRAFT_KERNEL_CHECK(w->dim(3) > 0 && s->in_c % w->dim(3) == 0,
                     "input depth %d is not a multiple of filter depth %d",
                     s->in_c, w->dim(3));
  if (w->dim(3) != s->in_c) {
    return ctx.Unsupported(types + " in groups");
  }
  const bool scale_per_channel = q->scale.size() > 1;
  if (scale_per_channel && q->quantized_dimension != 0) {
    return ctx.Unsupported(absl::StrFormat("%s quantized along dimension %d",
                                           types, q->quantized_dimension));
  }
  GRAFT_KERNEL_CHECK(
      !scale_per_channel || static_cast<int64_t>(q->scale.size()) == s->out_c,
      "weights have %d scales, expected 1 or %d", q->scale.size(), s->out_c);
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->out_c,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->out_c);
  GRAFT_RETURN_IF_ERROR(PrepareConvWindow(*o, s));
  GRAFT_RETURN_IF_ERROR(ActivationRange(act, &s->lo, &s->hi));

  // TFLite takes the per-channel path only when the scales differ.
  s->per_channel = std::any_of(q->scale.begin(), q->scale.end(),
                               [&](float v) { return v != q->scale[0]; });
  s->k = int64_t{s->k_h} * s->k_w * s->in_c;
  const int64_t n = s->out_c * s->k;
  GRAFT_KERNEL_CHECK(w->bytes >= static_cast<size_t>(n),
                     "INT8 weights hold %d bytes, shape %s needs %d", w->bytes,
                     ShapeToString(w->shape), n);
  s->packed.resize(QGemmPackedSize(s->out_c, s->k));
  QGemmPackRows(w->data<int8_t>(), s->out_c, s->k, s->k, /*w_offset=*/0,
                s->packed.data());
  s->panels = QGemmPanels(s->out_c);
  s->scales.resize(s->out_c);
  for (int j = 0; j < s->out_c; ++j) {
    s->scales[j] = q->scale[scale_per_channel ? j : 0];
  }
  s->vnni = KernelIsa() == CpuIsa::kAvx512Vnni;
  const int64_t image = int64_t{s->in_h} * s->in_w * s->in_c;
  int64_t padded_bytes = 0;
  if (s->vnni) {
    s->direct = s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 &&
                s->stride_w == 1 && s->pad_h == 0 && s->pad_w == 0 &&
                s->out_h == s->in_h && s->out_w == s->in_w;
    if (s->direct) {
      HybridVnniPack(w->data<int8_t>(), s->out_c, s->k, s->k, &s->vw);
      s->tap_off.assign(1, 0);
    } else {
      s->hp = std::max<int64_t>(
          s->in_h + s->pad_h,
          int64_t{s->out_h - 1} * s->stride_h +
              int64_t{s->k_h - 1} * s->dil_h + 1);
      s->wp = std::max<int64_t>(
          s->in_w + s->pad_w,
          int64_t{s->out_w - 1} * s->stride_w +
              int64_t{s->k_w - 1} * s->dil_w + 1);
      s->row_taps = s->dil_w == 1;
      const int64_t taps = s->row_taps ? s->k_h : int64_t{s->k_h} * s->k_w;
      const int64_t tap_len = int64_t{s->row_taps ? s->k_w : 1} * s->in_c;
      const int64_t tap_kp = HybridVnniPaddedK(tap_len);
      // [O, KH, KW, I] is [O, taps, tap_len]: each tap's bytes padded.
      std::vector<int8_t> wt(s->out_c * taps * tap_kp, 0);
      const int8_t* wd = w->data<int8_t>();
      for (int64_t o = 0; o < s->out_c; ++o) {
        for (int64_t t = 0; t < taps; ++t) {
          std::copy_n(wd + o * s->k + t * tap_len, tap_len,
                      wt.data() + (o * taps + t) * tap_kp);
        }
      }
      HybridVnniPack(wt.data(), s->out_c, taps * tap_kp, taps * tap_kp, &s->vw);
      for (int ky = 0; ky < s->k_h; ++ky) {
        for (int kx = 0; kx < (s->row_taps ? 1 : s->k_w); ++kx) {
          s->tap_off.push_back(
              (int64_t{ky} * s->dil_h * s->wp + int64_t{kx} * s->dil_w) *
              s->in_c);
        }
      }
      padded_bytes = s->batch * s->hp * s->wp * s->in_c + kTapSlack;
    }
  }
  s->parallel = int64_t{s->batch} * s->out_h * s->out_w * s->out_c * s->k >=
                kHybridParallelMacs;
  // Enough chunks for every thread, in whole micro-tiles.
  const int64_t mr = s->vnni ? 8 : kQGemmMr;
  s->threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
  const int64_t rows = int64_t{s->batch} * s->out_h * s->out_w;
  const int64_t per_thread = (rows + s->threads - 1) / s->threads;
  s->chunk_rows = std::max<int64_t>(
      mr, std::min(kHybridChunkRows, (per_thread + mr - 1) / mr * mr));
  if (s->vnni) {
    // EvalHybridConvVnni's.
    ctx.RequestScratch(s->batch * (sizeof(float) + sizeof(int32_t)) +
                       s->batch * image + kTapSlack + padded_bytes);
  } else {
    // EvalHybridConv's.
    ctx.RequestScratch(s->batch * (sizeof(float) + sizeof(int32_t)) +
                       s->threads * s->chunk_rows *
                           (s->out_c * sizeof(int32_t) +
                            QGemmPaddedK(s->k) * sizeof(int16_t)) +
                       s->batch * image * sizeof(int16_t));
  }
  ctx.SetEval(s->vnni ? EvalHybridConvVnni : EvalHybridConv);
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

struct HybridDepthwiseState : KernelState {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0, mult = 1;
  int out_h = 0, out_w = 0, out_c = 0, k_h = 0, k_w = 0;
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, pad_h = 0, pad_w = 0;
  std::vector<int16_t> weights;  // [KH, KW, O], sign-extended
  std::vector<float> scales;     // per output channel
  float lo = 0, hi = 0;
  // AVX-512 (KernelIsa() kAvx512Vnni at prepare, one channel per input
  // channel): images as unsigned bytes, weights as int32 [KH, KW, O].
  bool avx512 = false;
  std::vector<int32_t> weights32;
};

// Output channels accumulated together, in int32 on the stack.
constexpr int kDepthwiseBlock = 64;

CallCounter g_depthwise_avx512_calls;

#if GRAFT_QGEMM_AVX2
// Output rows [r0, r1) of EvalHybridDepthwise (multiplier 1) from the image
// as unsigned bytes u = q + 128: per 16 channels, acc = sum over the taps
// inside the image of w * (u - (z_b + 128)) in int32 (exact, as the scalar
// sum), then float(acc) * (wscale * s_b) + bias and the clamp in the scalar
// path's operations and order.
GRAFT_AVX512_TARGET void HybridDepthwiseRowsAvx512(
    const HybridDepthwiseState& s, const uint8_t* u, const float* scale,
    const int32_t* zero_point, const float* bias, int64_t r0, int64_t r1,
    float* out) {
  const int64_t image = int64_t{s.in_h} * s.in_w * s.in_c;
  const __m512 lo = _mm512_set1_ps(s.lo), hi = _mm512_set1_ps(s.hi);
  for (int64_t r = r0; r < r1; ++r) {
    const int b = static_cast<int>(r / s.out_h);
    const int oy = static_cast<int>(r % s.out_h);
    const uint8_t* ub = u + b * image;
    const __m512i zoff = _mm512_set1_epi32(zero_point[b] + 128);
    const __m512 sb = _mm512_set1_ps(scale[b]);
    const int y0 = oy * s.stride_h - s.pad_h;
    for (int ox = 0; ox < s.out_w; ++ox) {
      const int x0 = ox * s.stride_w - s.pad_w;
      float* o_px = out + ((r * s.out_w) + ox) * s.out_c;
      for (int c0 = 0; c0 < s.out_c; c0 += 16) {
        const __mmask16 m = static_cast<__mmask16>(
            s.out_c - c0 >= 16 ? 0xFFFFu : (1u << (s.out_c - c0)) - 1);
        __m512i acc = _mm512_setzero_si512();
        for (int ky = 0; ky < s.k_h; ++ky) {
          const int y = y0 + ky * s.dil_h;
          if (y < 0 || y >= s.in_h) continue;
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int x = x0 + kx * s.dil_w;
            if (x < 0 || x >= s.in_w) continue;
            const uint8_t* px = ub + (int64_t{y} * s.in_w + x) * s.in_c + c0;
            const __m512i v = _mm512_sub_epi32(
                _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, px)), zoff);
            const __m512i w = _mm512_maskz_loadu_epi32(
                m, s.weights32.data() + (int64_t{ky} * s.k_w + kx) * s.out_c +
                       c0);
            acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(v, w));
          }
        }
        const __m512 ws = _mm512_maskz_loadu_ps(m, s.scales.data() + c0);
        __m512 v = HybridMulPs(_mm512_cvtepi32_ps(acc), HybridMulPs(ws, sb));
        if (bias != nullptr) {
          v = HybridAddPs(v, _mm512_maskz_loadu_ps(m, bias + c0));
        }
        v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
        _mm512_mask_storeu_ps(o_px + c0, m, v);
      }
    }
  }
}
#endif  // GRAFT_QGEMM_AVX2

absl::Status EvalHybridDepthwiseAvx512(EvalContext& ctx) {
#if GRAFT_QGEMM_AVX2
  const HybridDepthwiseState& s = *ctx.state<HybridDepthwiseState>();
  const float* in = ctx.input(0)->data<float>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();
  // Scratch as EvalHybridDepthwise's, the images in bytes.
  const int64_t image = int64_t{s.in_h} * s.in_w * s.in_c;
  float* scale = ctx.scratch_as<float>();
  int32_t* zero_point = reinterpret_cast<int32_t*>(scale + s.batch);
  uint8_t* u = reinterpret_cast<uint8_t*>(zero_point + s.batch);
  for (int b = 0; b < s.batch; ++b) {
    AsymmetricQuantizeRowU8(in + b * image, image, u + b * image, &scale[b],
                            &zero_point[b]);
  }
  const int64_t rows = int64_t{s.batch} * s.out_h;
  g_depthwise_avx512_calls.fetch_add(1, std::memory_order_relaxed);
  auto run = [&](int64_t r0, int64_t r1) {
    HybridDepthwiseRowsAvx512(s, u, scale, zero_point, bias, r0, r1, out);
  };
  ThreadPool* pool = ctx.thread_pool();
  if (pool != nullptr) {
    const int64_t work = int64_t{s.out_w} * s.out_c * s.k_h * s.k_w + 1;
    pool->ParallelFor(rows, std::max<int64_t>(1, 16384 / work), run);
  } else {
    run(0, rows);
  }
  return absl::OkStatus();
#else
  (void)ctx;
  return absl::InternalError("no AVX-512 build");
#endif
}

absl::Status EvalHybridDepthwise(EvalContext& ctx) {
  const HybridDepthwiseState& s = *ctx.state<HybridDepthwiseState>();
  const float* in = ctx.input(0)->data<float>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();

  // Scratch: per image its scale and zero point, then the images quantized
  // with the zero point already subtracted (q - z fits int16).
  const int64_t image = int64_t{s.in_h} * s.in_w * s.in_c;
  float* scale = ctx.scratch_as<float>();
  int32_t* zero_point = reinterpret_cast<int32_t*>(scale + s.batch);
  int16_t* q = reinterpret_cast<int16_t*>(zero_point + s.batch);
  QuantizeImages(in, s.batch, image, /*asymmetric=*/true, scale, zero_point,
                 q);
  for (int b = 0; b < s.batch; ++b) {
    int16_t* qb = q + b * image;
    const int16_t z = static_cast<int16_t>(zero_point[b]);
    for (int64_t i = 0; i < image; ++i) qb[i] = static_cast<int16_t>(qb[i] - z);
  }

  const int64_t rows = int64_t{s.batch} * s.out_h;
  auto run = [&](int64_t r0, int64_t r1) {
    int32_t acc[kDepthwiseBlock];
    for (int64_t r = r0; r < r1; ++r) {
      const int b = static_cast<int>(r / s.out_h);
      const int oy = static_cast<int>(r % s.out_h);
      const int16_t* qb = q + b * image;
      for (int ox = 0; ox < s.out_w; ++ox) {
        const int y0 = oy * s.stride_h - s.pad_h;
        const int x0 = ox * s.stride_w - s.pad_w;
        float* o_px = out + ((r * s.out_w) + ox) * s.out_c;
        for (int c0 = 0; c0 < s.out_c; c0 += kDepthwiseBlock) {
          const int n = std::min(kDepthwiseBlock, s.out_c - c0);
          std::fill(acc, acc + n, 0);
          for (int ky = 0; ky < s.k_h; ++ky) {
            const int y = y0 + ky * s.dil_h;
            if (y < 0 || y >= s.in_h) continue;
            for (int kx = 0; kx < s.k_w; ++kx) {
              const int x = x0 + kx * s.dil_w;
              if (x < 0 || x >= s.in_w) continue;
              const int16_t* px = qb + (int64_t{y} * s.in_w + x) * s.in_c;
              const int16_t* w =
                  s.weights.data() + (int64_t{ky} * s.k_w + kx) * s.out_c + c0;
              if (s.mult == 1) {
                const int16_t* v = px + c0;
                for (int c = 0; c < n; ++c) acc[c] += int32_t{w[c]} * v[c];
              } else {
                for (int c = 0; c < n; ++c) {
                  acc[c] += int32_t{w[c]} * px[(c0 + c) / s.mult];
                }
              }
            }
          }
          for (int c = 0; c < n; ++c) {
            const int o = c0 + c;
            float v = static_cast<float>(acc[c]) * (s.scales[o] * scale[b]);
            if (bias != nullptr) v += bias[o];
            o_px[o] = std::min(std::max(v, s.lo), s.hi);
          }
        }
      }
    }
  };
  ThreadPool* pool = ctx.thread_pool();
  if (pool != nullptr) {
    const int64_t work = int64_t{s.out_w} * s.out_c * s.k_h * s.k_w + 1;
    pool->ParallelFor(rows, std::max<int64_t>(1, 16384 / work), run);
  } else {
    run(0, rows);
  }
  return absl::OkStatus();
}

absl::Status PrepareDepthwiseConv2DHybrid(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  const auto* o = ctx.op().builtin_options.AsDepthwiseConv2DOptions();
  const tfl::ActivationFunctionType act =
      o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE;
  GRAFT_ASSIGN_OR_RETURN(const std::string types,
                         CheckHybridOp(ctx, *in, *w, {tfl::TensorType_INT8},
                                       act));
  GRAFT_RETURN_IF_ERROR(CheckHybridWeights(ctx, *w, types));
  const tfl::QuantizationParametersT* q = w->quantization;
  GRAFT_KERNEL_CHECK(in->rank() == 4 && w->rank() == 4,
                     "input and filter must be 4-D, got %s and %s",
                     ShapeToString(in->shape), ShapeToString(w->shape));
  GRAFT_KERNEL_CHECK(o != nullptr, "missing DepthwiseConv2DOptions");
  GRAFT_KERNEL_CHECK(w->dim(0) == 1, "filter must be [1, KH, KW, O], got %s",
                     ShapeToString(w->shape));

  auto* s = MakeState<HybridDepthwiseState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->k_h = w->dim(1), s->k_w = w->dim(2), s->out_c = w->dim(3);
  GRAFT_KERNEL_CHECK(s->in_c > 0 && s->out_c % s->in_c == 0,
                     "filter depth %d is not a multiple of input depth %d",
                     s->out_c, s->in_c);
  s->mult = s->out_c / s->in_c;
  // TFLite reads one scale per output channel (a single scale for several
  // channels would be read past its end).
  if (static_cast<int64_t>(q->scale.size()) != s->out_c ||
      (s->out_c > 1 && q->quantized_dimension != 3)) {
    return ctx.Unsupported(absl::StrFormat(
        "%s with %d scales along dimension %d; TFLite's hybrid depthwise "
        "convolution takes one per output channel (%d, dimension 3)",
        types, q->scale.size(), q->quantized_dimension, s->out_c));
  }
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->out_c,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->out_c);
  GRAFT_RETURN_IF_ERROR(PrepareConvWindow(*o, s));
  GRAFT_RETURN_IF_ERROR(ActivationRange(act, &s->lo, &s->hi));

  const int64_t n = int64_t{s->k_h} * s->k_w * s->out_c;
  GRAFT_KERNEL_CHECK(w->bytes >= static_cast<size_t>(n),
                     "INT8 weights hold %d bytes, shape %s needs %d", w->bytes,
                     ShapeToString(w->shape), n);
  const int8_t* data = w->data<int8_t>();
  s->weights.assign(data, data + n);
  s->scales.assign(q->scale.begin(), q->scale.end());
  s->avx512 = s->mult == 1 && KernelIsa() == CpuIsa::kAvx512Vnni;
  if (s->avx512) s->weights32.assign(data, data + n);
  const int64_t image = int64_t{s->in_h} * s->in_w * s->in_c;
  ctx.RequestScratch(s->batch * (sizeof(float) + sizeof(int32_t)) +
                     s->batch * image * sizeof(int16_t));
  ctx.SetEval(s->avx512 ? EvalHybridDepthwiseAvx512 : EvalHybridDepthwise);
  ctx.SetReductionLength(int64_t{s->k_h} * s->k_w);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

}  // namespace

int64_t HybridConvRowTapsCallsForTesting() {
  return g_conv_row_taps_calls.load(std::memory_order_relaxed);
}

int64_t HybridDepthwiseAvx512CallsForTesting() {
  return g_depthwise_avx512_calls.load(std::memory_order_relaxed);
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(Conv2DHybrid);
GRAFT_DEFINE_KERNEL(DepthwiseConv2DHybrid);

}  // namespace graft
