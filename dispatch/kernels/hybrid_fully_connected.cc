// Hybrid FULLY_CONNECTED: FLOAT32 input and output, quantized weights [N, K],
// optional FLOAT32 bias. Each input row is quantized to int8 at run time, its
// dot products with the weights are taken in integers and scaled back to
// float. Two kinds of weights, each bit-exact with the arithmetic
// ai-edge-litert 2.3.0 runs for them on x86 (tflite/kernels/
// fully_connected.cc), reproduced in the same float operation order:
//
// INT8, symmetric per tensor or per output channel: dynamic-range
// quantization, the converter's Optimize.DEFAULT without a representative
// dataset. TFLite's EvalHybridDense, which its builtin and its reference
// (BUILTIN_REF) resolvers both run. Per input row:
//   1. the row is quantized to int8: symmetric (SymmetricQuantizeRow: scale
//      s, zero point z = 0) or, with asymmetric_quantize_inputs, asymmetric
//      (AsymmetricQuantizeRow: s and z);
//   2. per output n, in float: out = bias[n] + float(dot(q, w[n]) -
//      z * rowsum[n]) * (s * wscale[n]), where wscale[n] is the tensor's
//      scale or channel n's and the int32 part is its
//      SseMatrixBatchVectorMultiplyAccumulateImpl's (rowsum: HybridRowSum);
//   3. the fused activation.
// A weight of -128 times a negative input comes out negated, as in TFLite's
// x86 dot product (HybridDot; such weights skip the GEMM below). An input
// that is all zeros gives the bias (TFLite skips the arithmetic).
// TFLite ignores the weights' zero point on this path; Graft refuses a
// nonzero one rather than compute with the wrong weights.
//
// INT4 quantized blockwise (tfl::BlockwiseQuantization: one FLOAT16 scale per
// block of `block_size` consecutive weights of a row, in a scales tensor
// [N, K / block_size]; symmetric): TFLite's EvalBlockwise4Bit, the kernel
// its builtin resolver runs for these weights (measured on
// qwen_fc_blockwise_quantized and models of other shapes, block sizes,
// biases and batches). Per input row:
//   1. the row is quantized to int8, asymmetric (AsymmetricQuantizeRow),
//      whatever asymmetric_quantize_inputs says;
//   2. per output n: out = sum over blocks, in order, of
//      float(int32 dot(q, w) over the block) * scale[n][block], in float;
//      then out -= z * kfsum[n], where kfsum[n] = sum over blocks of
//      scale * float(sum of the block's weights) (input-independent: computed
//      at prepare); then out *= s; then out += bias[n].
// Zero points in the BlockwiseQuantization are ignored, as there. One
// deliberate difference: the fused activation is applied (last); that
// kernel ignores it (2.3.0), TFLite's XNNPACK delegate applies it.
// TFLite's reference resolver (BUILTIN_REF) is no oracle for these: it has
// no blockwise path and scales the int products by the weights' legacy
// per-tensor scale, 0 for blockwise tensors, so it returns the bias (or
// zeros).
//
// Every product and sum is rounded to float on its own, as in TFLite: the
// build targets baseline x86-64, which has no FMA to contract them into (a
// build with -mfma would need -ffp-contract=off to stay bit-exact; the
// AVX-512 code uses HybridMulPs / HybridAddPs, which are never contracted).
//
// Weights are widened to int16 at prepare (INT4: unpacked in TFLite's nibble
// order, the low nibble holding the even element), as is the quantized
// input, so the dot products vectorize to 16-bit multiply-adds (twice as fast
// as int8 operands on baseline x86-64; 1024 x 1024 INT4 weights, one input
// row: ~0.12 ms per invoke, one thread); INT8 weights are packed for the
// 8-bit GEMM of quantized_gemm.h, whose int32 sums (QGemmSums) are the dot
// products (where KernelIsa() is kAvx512Vnni at prepare and no weight is
// -128: rows quantized to unsigned bytes and HybridVnniSums, the same
// int32 values). Eval quantizes the input rows into scratch and splits the
// outputs over the thread pool. Fused TANH and
// SIGN_BIT, which TFLite's hybrid path also applies, are refused.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/hybrid_util.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantized_gemm.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct HybridFcState : KernelState {
  int64_t m = 0, n = 0, k = 0;
  bool asymmetric = true;        // how input rows are quantized
  // Quantized input rows' stride: k, or QGemmPaddedK(k) for the GEMM.
  int64_t row_stride = 0;
  // INT4, and INT8 holding -128: [n, k], sign-extended; other INT8: packed
  // for QGemmSums.
  std::vector<int16_t> weights;
  std::vector<int16_t> packed;
  int64_t panels = 0;
  // INT8: one scale per output (a per-tensor scale repeated), and with
  // asymmetric inputs the HybridRowSum of each row.
  // INT4: blocks of `block` weights, scales [n, blocks], and kfsum[n], the
  // sum of scale * block weight sum.
  int64_t block = 0, blocks = 0;
  std::vector<float> scales;
  std::vector<int32_t> row_sums;
  std::vector<float> kfsum;
  float lo = 0, hi = 0;
  // INT8 without -128 where KernelIsa() is kAvx512Vnni at prepare: rows
  // quantized to unsigned bytes (stride HybridVnniPaddedK(k)), weights
  // packed for HybridVnniSums.
  bool vnni = false;
  HybridVnniWeights vw;
};

// Scratch: per row its scale and zero point; INT8: the GEMM's sums [m, n];
// the quantized rows.
struct QuantizedRows {
  const float* scale;
  const int32_t* zero_point;
  int32_t* sums;
  const int16_t* q;
};

size_t ScratchBytes(const HybridFcState& s) {
  return s.m * (sizeof(float) + sizeof(int32_t)) +
         (s.blocks > 0 ? 0 : s.m * s.n * sizeof(int32_t)) +
         s.m * s.row_stride * sizeof(int16_t);
}

QuantizedRows QuantizeRows(EvalContext& ctx, const HybridFcState& s,
                           const float* in) {
  float* scale = ctx.scratch_as<float>();
  int32_t* zero_point = reinterpret_cast<int32_t*>(scale + s.m);
  int32_t* sums = zero_point + s.m;
  int16_t* q = reinterpret_cast<int16_t*>(
      sums + (s.blocks > 0 ? 0 : s.m * s.n));
  for (int64_t r = 0; r < s.m; ++r) {
    int16_t* qr = q + r * s.row_stride;
    if (s.asymmetric) {
      AsymmetricQuantizeRow(in + r * s.k, s.k, qr, &scale[r], &zero_point[r]);
    } else {
      SymmetricQuantizeRow(in + r * s.k, s.k, qr, &scale[r]);
      zero_point[r] = 0;
    }
    std::fill(qr + s.k, qr + s.row_stride, int16_t{0});
  }
  return {scale, zero_point, sums, q};
}

// Runs fn(n0, n1) over the outputs, split over the thread pool.
template <typename Fn>
void ForOutputs(EvalContext& ctx, const HybridFcState& s, Fn fn) {
  ThreadPool* pool = ctx.thread_pool();
  const int64_t min_chunk = std::max<int64_t>(1, 16384 / (s.k * s.m + 1));
  if (pool != nullptr) {
    pool->ParallelFor(s.n, min_chunk, fn);
  } else {
    fn(0, s.n);
  }
}

absl::Status EvalHybridFcBlockwise(EvalContext& ctx) {
  const HybridFcState& s = *ctx.state<HybridFcState>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();
  const QuantizedRows rows = QuantizeRows(ctx, s, ctx.input(0)->data<float>());
  ForOutputs(ctx, s, [&](int64_t n0, int64_t n1) {
    for (int64_t r = 0; r < s.m; ++r) {
      const int16_t* qr = rows.q + r * s.k;
      for (int64_t j = n0; j < n1; ++j) {
        const int16_t* w = s.weights.data() + j * s.k;
        const float* scale = s.scales.data() + j * s.blocks;
        float acc = 0;
        for (int64_t b = 0; b < s.blocks; ++b) {
          const int32_t dot = HybridDot(qr + b * s.block, w + b * s.block, s.block);
          acc += static_cast<float>(dot) * scale[b];
        }
        acc -= static_cast<float>(rows.zero_point[r]) * s.kfsum[j];
        acc *= rows.scale[r];
        if (bias != nullptr) acc += bias[j];
        out[r * s.n + j] = std::min(std::max(acc, s.lo), s.hi);
      }
    }
  });
  return absl::OkStatus();
}

absl::Status EvalHybridFcInt8(EvalContext& ctx) {
  const HybridFcState& s = *ctx.state<HybridFcState>();
  const float* in = ctx.input(0)->data<float>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();
  if (std::all_of(in, in + s.m * s.k, [](float v) { return v == 0; })) {
    for (int64_t r = 0; r < s.m; ++r) {
      for (int64_t j = 0; j < s.n; ++j) {
        const float b = bias != nullptr ? bias[j] : 0.0f;
        out[r * s.n + j] = std::min(std::max(b, s.lo), s.hi);
      }
    }
    return absl::OkStatus();
  }
  const QuantizedRows rows = QuantizeRows(ctx, s, in);
  auto panels = [&](int64_t p0, int64_t p1) {
    const int64_t n0 = p0 * kQGemmNr, n1 = std::min(s.n, p1 * kQGemmNr);
    if (s.weights.empty()) {
      QGemmSums(rows.q, s.m, s.k, s.packed.data(), s.n, p0, p1, rows.sums,
                s.n);
    } else {  // weights holding -128: TFLite's products, one by one
      for (int64_t r = 0; r < s.m; ++r) {
        for (int64_t j = n0; j < n1; ++j) {
          rows.sums[r * s.n + j] = HybridDot(
              rows.q + r * s.row_stride, s.weights.data() + j * s.k, s.k);
        }
      }
    }
    for (int64_t r = 0; r < s.m; ++r) {
      const uint32_t zp = static_cast<uint32_t>(rows.zero_point[r]);
      for (int64_t j = n0; j < n1; ++j) {
        int32_t dot = rows.sums[r * s.n + j];
        if (s.asymmetric) {  // wrapping, as TFLite's int32 arithmetic
          dot = static_cast<int32_t>(static_cast<uint32_t>(dot) -
                                     zp * static_cast<uint32_t>(s.row_sums[j]));
        }
        const float scale = s.scales[j] * rows.scale[r];
        const float acc = (bias != nullptr ? bias[j] : 0.0f) +
                          static_cast<float>(dot) * scale;
        out[r * s.n + j] = std::min(std::max(acc, s.lo), s.hi);
      }
    }
  };
  ThreadPool* pool = ctx.thread_pool();
  if (pool != nullptr) {
    const int64_t work = s.k * s.m * kQGemmNr + 1;
    pool->ParallelFor(s.panels, std::max<int64_t>(1, 65536 / work), panels);
  } else {
    panels(0, s.panels);
  }
  return absl::OkStatus();
}

#if GRAFT_QGEMM_AVX2
// EvalHybridFcInt8's epilogue for rows [0, m) and columns [n0, n1) on 16
// lanes, from VNNI sums: dot = sums - 128 * col_sums (the exact q * w
// sum), minus zp * row_sums with asymmetric inputs (both wrapping), then
// bias (0 without one, as the scalar code adds) + float(dot) * (wscale *
// s_r), clamped with the operands ordered as std::max(v, lo) /
// std::min(v, hi).
GRAFT_AVX512_TARGET void HybridFcEpilogueAvx512(
    const HybridFcState& s, const int32_t* sums, const float* row_scale,
    const int32_t* zero_point, const float* bias, int64_t n0, int64_t n1,
    float* out) {
  const __m512 lo = _mm512_set1_ps(s.lo), hi = _mm512_set1_ps(s.hi);
  const __m512i c128 = _mm512_set1_epi32(128);
  for (int64_t r = 0; r < s.m; ++r) {
    const __m512 rs = _mm512_set1_ps(row_scale[r]);
    const __m512i zp = _mm512_set1_epi32(zero_point[r]);
    for (int64_t j = n0; j < n1; j += 16) {
      const __mmask16 m = static_cast<__mmask16>(
          n1 - j >= 16 ? 0xFFFFu : (1u << (n1 - j)) - 1);
      __m512i dot = _mm512_sub_epi32(
          _mm512_maskz_loadu_epi32(m, sums + r * s.n + j),
          _mm512_mullo_epi32(c128, _mm512_loadu_si512(s.vw.col_sums.data() + j)));
      if (s.asymmetric) {
        dot = _mm512_sub_epi32(
            dot, _mm512_mullo_epi32(
                     zp, _mm512_maskz_loadu_epi32(m, s.row_sums.data() + j)));
      }
      const __m512 scale =
          HybridMulPs(_mm512_maskz_loadu_ps(m, s.scales.data() + j), rs);
      const __m512 b = bias != nullptr ? _mm512_maskz_loadu_ps(m, bias + j)
                                       : _mm512_setzero_ps();
      __m512 v = HybridAddPs(b, HybridMulPs(_mm512_cvtepi32_ps(dot), scale));
      v = _mm512_min_ps(hi, _mm512_max_ps(lo, v));
      _mm512_mask_storeu_ps(out + r * s.n + j, m, v);
    }
  }
}
#endif  // GRAFT_QGEMM_AVX2

absl::Status EvalHybridFcVnni(EvalContext& ctx) {
#if GRAFT_QGEMM_AVX2
  const HybridFcState& s = *ctx.state<HybridFcState>();
  const float* in = ctx.input(0)->data<float>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();
  if (std::all_of(in, in + s.m * s.k, [](float v) { return v == 0; })) {
    for (int64_t r = 0; r < s.m; ++r) {
      for (int64_t j = 0; j < s.n; ++j) {
        const float b = bias != nullptr ? bias[j] : 0.0f;
        out[r * s.n + j] = std::min(std::max(b, s.lo), s.hi);
      }
    }
    return absl::OkStatus();
  }
  // Scratch as QuantizeRows carves it, the rows in bytes.
  const int64_t kp = HybridVnniPaddedK(s.k);
  float* scale = ctx.scratch_as<float>();
  int32_t* zero_point = reinterpret_cast<int32_t*>(scale + s.m);
  int32_t* sums = zero_point + s.m;
  uint8_t* u = reinterpret_cast<uint8_t*>(sums + s.m * s.n);
  for (int64_t r = 0; r < s.m; ++r) {
    uint8_t* ur = u + r * kp;
    if (s.asymmetric) {
      AsymmetricQuantizeRowU8(in + r * s.k, s.k, ur, &scale[r], &zero_point[r]);
    } else {
      SymmetricQuantizeRowU8(in + r * s.k, s.k, ur, &scale[r]);
      zero_point[r] = 0;
    }
    std::fill(ur + s.k, ur + kp, uint8_t{0});
  }
  auto panels = [&](int64_t p0, int64_t p1) {
    const int64_t n0 = p0 * 16, n1 = std::min(s.n, p1 * 16);
    HybridVnniSums(u, kp, s.m, s.vw, p0, p1, sums, s.n);
    HybridFcEpilogueAvx512(s, sums, scale, zero_point, bias, n0, n1, out);
  };
  // At least 2^18 multiply-adds (~1.5 us of vpdpbusd) a chunk: smaller
  // ones cost more to hand to another thread than they save
  // (mlp_dynamic_range at 2 threads, 64K a chunk: 4.6 us; 2^18, so its
  // three FCs stay on the caller: 3.65 us, as at 1 thread).
  constexpr int64_t kMinChunkMacs = int64_t{1} << 18;
  ThreadPool* pool = ctx.thread_pool();
  if (pool != nullptr && s.vw.panels > 1) {
    const int64_t work = s.k * s.m * 16 + 1;
    pool->ParallelFor(s.vw.panels, std::max<int64_t>(1, kMinChunkMacs / work),
                      panels);
  } else {
    panels(0, s.vw.panels);
  }
  return absl::OkStatus();
#else
  (void)ctx;
  return absl::InternalError("no AVX-512 VNNI build");
#endif
}

absl::Status PrepareBlockwise(PrepareContext& ctx, const Tensor& w,
                              const std::string& types, HybridFcState* s) {
  s->row_stride = s->k;
  const tfl::BlockwiseQuantizationT* bq =
      w.quantization ? w.quantization->details.AsBlockwiseQuantization()
                     : nullptr;
  if (bq == nullptr) return ctx.Unsupported(types + " not quantized blockwise");
  if (!bq->block_shape.empty()) {
    return ctx.Unsupported(types + " in multi-dimensional blocks");
  }
  s->block = bq->block_size;
  GRAFT_KERNEL_CHECK(s->block > 0 && s->k % s->block == 0,
                     "block size %d does not divide the input depth %d",
                     s->block, s->k);
  // TFLite runs this arithmetic only for an even depth (its rows then start
  // on a byte); its int32 block sums go through float, exact below 2^24.
  if (s->k % 2 != 0) return ctx.Unsupported(types + " of odd depth");
  if (s->block > (1 << 14)) {
    return ctx.Unsupported(types + " in blocks over 16384");
  }
  GRAFT_KERNEL_CHECK(w.bytes * 2 >= static_cast<size_t>(s->n * s->k),
                     "INT4 weights hold %d bytes, shape %s needs %d", w.bytes,
                     ShapeToString(w.shape), (s->n * s->k + 1) / 2);
  s->blocks = s->k / s->block;

  const Tensor* scales = ctx.tensor(bq->scales);
  GRAFT_KERNEL_CHECK(scales != nullptr, "block scales tensor %d out of range",
                     bq->scales);
  if (scales->type != tfl::TensorType_FLOAT16) {
    return ctx.Unsupported(absl::StrFormat("%s with %s block scales", types,
                                           TensorTypeName(scales->type)));
  }
  GRAFT_KERNEL_CHECK(
      scales->constant && scales->num_elements() == s->n * s->blocks,
      "block scales must be a constant of %d x %d elements, got %s", s->n,
      s->blocks, ShapeToString(scales->shape));

  // Unpack (low nibble first, sign-extended), convert the scales, and sum
  // scale * block weight sum per row in TFLite's order.
  const uint8_t* packed = w.data<uint8_t>();
  s->weights.resize(s->n * s->k);
  for (int64_t i = 0; i < s->n * s->k; ++i) {
    const int nibble = (i % 2 == 0 ? packed[i / 2] : packed[i / 2] >> 4) & 0xf;
    s->weights[i] = static_cast<int16_t>((nibble ^ 8) - 8);
  }
  s->scales.resize(s->n * s->blocks);
  for (int64_t i = 0; i < s->n * s->blocks; ++i) {
    s->scales[i] = HalfToFloat(scales->data<uint16_t>()[i]);
  }
  s->kfsum.assign(s->n, 0.0f);
  for (int64_t j = 0; j < s->n; ++j) {
    for (int64_t b = 0; b < s->blocks; ++b) {
      int32_t sum = 0;
      for (int64_t i = 0; i < s->block; ++i) {
        sum += s->weights[j * s->k + b * s->block + i];
      }
      s->kfsum[j] += s->scales[j * s->blocks + b] * static_cast<float>(sum);
    }
  }
  s->asymmetric = true;
  ctx.SetEval(EvalHybridFcBlockwise);
  return absl::OkStatus();
}

absl::Status PrepareInt8(PrepareContext& ctx, const Tensor& w,
                         const std::string& types,
                         const tfl::FullyConnectedOptionsT* o,
                         HybridFcState* s) {
  GRAFT_RETURN_IF_ERROR(CheckHybridWeights(ctx, w, types));
  const tfl::QuantizationParametersT* q = w.quantization;
  const bool per_channel = q->scale.size() > 1;
  if (per_channel && q->quantized_dimension != 0) {
    return ctx.Unsupported(absl::StrFormat("%s quantized along dimension %d",
                                           types, q->quantized_dimension));
  }
  GRAFT_KERNEL_CHECK(
      !per_channel || static_cast<int64_t>(q->scale.size()) == s->n,
      "weights have %d scales, expected 1 or %d", q->scale.size(), s->n);
  GRAFT_KERNEL_CHECK(w.bytes >= static_cast<size_t>(s->n * s->k),
                     "INT8 weights hold %d bytes, shape %s needs %d", w.bytes,
                     ShapeToString(w.shape), s->n * s->k);
  const int8_t* data = w.data<int8_t>();
  // A weight of -128 times a negative input comes out negated in TFLite's
  // x86 dot product (HybridDot), which the GEMM does not reproduce.
  if (std::find(data, data + s->n * s->k, int8_t{-128}) !=
      data + s->n * s->k) {
    s->weights.assign(data, data + s->n * s->k);
  } else if (KernelIsa() == CpuIsa::kAvx512Vnni) {
    s->vnni = true;
    HybridVnniPack(data, s->n, s->k, s->k, &s->vw);
  } else {
    s->packed.resize(QGemmPackedSize(s->n, s->k));
    QGemmPackRows(data, s->n, s->k, s->k, /*w_offset=*/0, s->packed.data());
  }
  s->panels = QGemmPanels(s->n);
  s->row_stride = QGemmPaddedK(s->k);
  s->scales.resize(s->n);
  for (int64_t j = 0; j < s->n; ++j) {
    s->scales[j] = q->scale[per_channel ? j : 0];
  }
  s->asymmetric = o != nullptr && o->asymmetric_quantize_inputs;
  if (s->asymmetric) {
    std::vector<int16_t> row(s->k);
    s->row_sums.resize(s->n);
    for (int64_t j = 0; j < s->n; ++j) {
      std::copy(data + j * s->k, data + (j + 1) * s->k, row.begin());
      s->row_sums[j] = HybridRowSum(row.data(), s->k);
    }
  }
  ctx.SetEval(s->vnni ? EvalHybridFcVnni : EvalHybridFcInt8);
  return absl::OkStatus();
}

absl::Status PrepareFullyConnectedHybrid(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  const auto* o = ctx.op().builtin_options.AsFullyConnectedOptions();
  const tfl::ActivationFunctionType act =
      o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE;
  GRAFT_ASSIGN_OR_RETURN(
      const std::string types,
      CheckHybridOp(ctx, *in, *w,
                    {tfl::TensorType_INT4, tfl::TensorType_INT8},
                    act));
  if (o &&
      o->weights_format != tfl::FullyConnectedOptionsWeightsFormat_DEFAULT) {
    return ctx.Unsupported("shuffled weights");
  }
  GRAFT_KERNEL_CHECK(w->rank() == 2, "weights must be 2-D, got %s",
                     ShapeToString(w->shape));
  auto* s = MakeState<HybridFcState>(ctx);
  s->n = w->dim(0), s->k = w->dim(1);
  GRAFT_KERNEL_CHECK(s->k > 0 && in->num_elements() % s->k == 0,
                     "input %s does not split into rows of %d",
                     ShapeToString(in->shape), s->k);
  s->m = in->num_elements() / s->k;
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->n,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->n);
  if (!w->constant) return ctx.Unsupported(types + " computed at run time");
  if (w->type == tfl::TensorType_INT4) {
    GRAFT_RETURN_IF_ERROR(PrepareBlockwise(ctx, *w, types, s));
  } else {
    GRAFT_RETURN_IF_ERROR(PrepareInt8(ctx, *w, types, o, s));
  }
  GRAFT_RETURN_IF_ERROR(ActivationRange(act, &s->lo, &s->hi));

  GRAFT_ASSIGN_OR_RETURN(Shape out,
                         FullyConnectedOutputShape(o, *in, s->m, s->k, s->n));
  ctx.RequestScratch(ScratchBytes(*s));
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, std::move(out));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(FullyConnectedHybrid);

}  // namespace graft
