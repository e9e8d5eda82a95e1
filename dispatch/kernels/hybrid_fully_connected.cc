// Hybrid FULLY_CONNECTED: FLOAT32 input and output, INT4 weights [N, K]
// quantized blockwise (tfl::BlockwiseQuantization: one FLOAT16 scale per
// block of `block_size` consecutive weights of a row, in a scales tensor
// [N, K / block_size]; symmetric), optional FLOAT32 bias.
//
// The arithmetic is TFLite's EvalBlockwise4Bit (tflite/kernels/
// fully_connected.cc), the kernel its builtin resolver runs for these
// weights; reproduced in the same float operation order it is bit-exact
// (measured against ai-edge-litert 2.3.0: qwen_fc_blockwise_quantized and
// models of other shapes, block sizes, biases and batches). Per input row:
//   1. the row is quantized to int8, asymmetric (scale s, zero point z; see
//      AsymmetricQuantizeRow), whatever asymmetric_quantize_inputs says;
//   2. per output n: out = sum over blocks, in order, of
//      float(int32 dot(q, w) over the block) * scale[n][block], in float;
//      then out -= z * kfsum[n], where kfsum[n] = sum over blocks of
//      scale * float(sum of the block's weights) (input-independent: computed
//      at prepare); then out *= s; then out += bias[n].
// Zero points in the BlockwiseQuantization are ignored, as there. One
// deliberate difference: the fused activation is applied (last); that
// kernel ignores it (2.3.0), TFLite's XNNPACK delegate applies it.
//
// TFLite's reference resolver (BUILTIN_REF) is no oracle here: it has no
// blockwise path and scales the int products by the weights' legacy
// per-tensor scale, 0 for blockwise tensors, so it returns the bias (or
// zeros).
//
// Every product and sum is rounded to float on its own, as in TFLite: the
// build targets baseline x86-64, which has no FMA to contract them into (a
// build with -mfma would need -ffp-contract=off to stay bit-exact).
//
// Weights are unpacked at prepare (TFLite's nibble order: the low nibble
// holds the even element) and widened to int16, as is the quantized input,
// so the block dot products vectorize to 16-bit multiply-adds (twice as fast
// as int8 operands on baseline x86-64, at 4x the packed weights' memory:
// 1024 x 1024 weights, one input row: ~0.12 ms per invoke, one thread).
// Eval quantizes the input rows into scratch and splits the outputs over the
// thread pool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

// The asymmetric int8 quantization of one input row, as ai-edge-litert 2.3.0
// does it on x86: TFLite's NeonAsymmetricQuantizeFloats (through its
// NEON-to-SSE translation), not PortableAsymmetricQuantizeFloats. The range
// [min(0, lo), max(0, hi)] is subtracted in float, the scale and zero point
// are computed in double (the zero point nudged from the end that loses
// less), and values are rounded before the zero point is added: in groups of
// 8 by adding +-0.5 in float and truncating (its pre-ARMv8 RoundToNearest),
// the k % 8 left over with std::round. Each of those details was measured:
// the portable variant misses the scale's last bit in about one row of
// eight, and ties.
void AsymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale,
                           int32_t* zero_point) {
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < k; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (lo == hi) {
    std::fill(q, q + k, 0);
    *scale = 1, *zero_point = 0;
    return;
  }
  const double s = static_cast<double>(hi - lo) / 255.0;
  const double z_from_min = -128.0 - lo / s, z_from_max = 127.0 - hi / s;
  const double z = 128.0 + std::abs(lo / s) < 127.0 + std::abs(hi / s)
                       ? z_from_min
                       : z_from_max;
  const int32_t zp = z <= -128.0  ? -128
                     : z >= 127.0 ? 127
                                  : static_cast<int32_t>(std::round(z));
  *scale = static_cast<float>(s), *zero_point = zp;
  const float inv = static_cast<float>(1.0 / *scale);
  const int64_t grouped = k & ~int64_t{7};
  for (int64_t i = 0; i < k; ++i) {
    const float v = x[i] * inv;
    const int32_t r = i < grouped
                          ? static_cast<int32_t>(v + (v < 0 ? -0.5f : 0.5f))
                          : static_cast<int32_t>(std::round(v));
    q[i] = static_cast<int16_t>(std::clamp(zp + r, -128, 127));
  }
}

// The sum of a[i] * b[i] in int32. Chunks of 16 let the compiler vectorize the
// inner loop (16-bit multiply-adds) at -O2 too; integer sums in any order
// are the same.
int32_t Dot(const int16_t* a, const int16_t* b, int64_t n) {
  int32_t d = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 16; ++j) {
      d += static_cast<int32_t>(a[i + j]) * static_cast<int32_t>(b[i + j]);
    }
  }
  for (; i < n; ++i) {
    d += static_cast<int32_t>(a[i]) * static_cast<int32_t>(b[i]);
  }
  return d;
}

struct HybridFcState : KernelState {
  int64_t m = 0, n = 0, k = 0, block = 0, blocks = 0;
  std::vector<int16_t> weights;  // [n, k], sign-extended
  std::vector<float> scales;     // [n, blocks]
  std::vector<float> kfsum;      // [n]: sum of scale * block weight sum
  float lo = 0, hi = 0;
};

absl::Status EvalHybridFc(EvalContext& ctx) {
  const HybridFcState& s = *ctx.state<HybridFcState>();
  const float* in = ctx.input(0)->data<float>();
  const float* bias = ctx.input(2) ? ctx.input(2)->data<float>() : nullptr;
  float* out = ctx.output(0)->data<float>();
  // Scratch: per row its scale and zero point, then the quantized rows.
  float* row_scale = ctx.scratch_as<float>();
  int32_t* row_zp = reinterpret_cast<int32_t*>(row_scale + s.m);
  int16_t* q = reinterpret_cast<int16_t*>(row_zp + s.m);
  for (int64_t r = 0; r < s.m; ++r) {
    AsymmetricQuantizeRow(in + r * s.k, s.k, q + r * s.k, &row_scale[r],
                          &row_zp[r]);
  }
  auto rows = [&](int64_t n0, int64_t n1) {
    for (int64_t r = 0; r < s.m; ++r) {
      const int16_t* qr = q + r * s.k;
      for (int64_t j = n0; j < n1; ++j) {
        const int16_t* w = s.weights.data() + j * s.k;
        const float* scale = s.scales.data() + j * s.blocks;
        float acc = 0;
        for (int64_t b = 0; b < s.blocks; ++b) {
          const int32_t dot = Dot(qr + b * s.block, w + b * s.block, s.block);
          acc += static_cast<float>(dot) * scale[b];
        }
        acc -= static_cast<float>(row_zp[r]) * s.kfsum[j];
        acc *= row_scale[r];
        if (bias != nullptr) acc += bias[j];
        out[r * s.n + j] = std::min(std::max(acc, s.lo), s.hi);
      }
    }
  };
  ThreadPool* pool = ctx.thread_pool();
  const int64_t min_chunk = std::max<int64_t>(1, 16384 / (s.k * s.m + 1));
  if (pool != nullptr) {
    pool->ParallelFor(s.n, min_chunk, rows);
  } else {
    rows(0, s.n);
  }
  return absl::OkStatus();
}

absl::Status PrepareFullyConnectedHybrid(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  const std::string types =
      absl::StrFormat("%s input with %s weights", TensorTypeName(in->type),
                      TensorTypeName(w->type));
  if (in->type != tfl::TensorType_FLOAT32 || w->type != tfl::TensorType_INT4 ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(types);
  }
  const tfl::BlockwiseQuantizationT* bq =
      w->quantization ? w->quantization->details.AsBlockwiseQuantization()
                      : nullptr;
  if (bq == nullptr) return ctx.Unsupported(types + " not quantized blockwise");
  if (!bq->block_shape.empty()) {
    return ctx.Unsupported(types + " in multi-dimensional blocks");
  }
  if (!w->constant) return ctx.Unsupported(types + " computed at run time");
  if (bias && bias->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(
        absl::StrFormat("%s and %s bias", types, TensorTypeName(bias->type)));
  }
  const auto* o = ctx.op().builtin_options.AsFullyConnectedOptions();
  if (o &&
      o->weights_format != tfl::FullyConnectedOptionsWeightsFormat_DEFAULT) {
    return ctx.Unsupported("shuffled weights");
  }
  GRAFT_KERNEL_CHECK(w->rank() == 2, "weights must be 2-D, got %s",
                     ShapeToString(w->shape));
  auto* s = MakeState<HybridFcState>(ctx);
  s->n = w->dim(0), s->k = w->dim(1), s->block = bq->block_size;
  GRAFT_KERNEL_CHECK(s->k > 0 && in->num_elements() % s->k == 0,
                     "input %s does not split into rows of %d",
                     ShapeToString(in->shape), s->k);
  GRAFT_KERNEL_CHECK(s->block > 0 && s->k % s->block == 0,
                     "block size %d does not divide the input depth %d",
                     s->block, s->k);
  // TFLite runs this arithmetic only for an even depth (its rows then start
  // on a byte); its int32 block sums go through float, exact below 2^24.
  if (s->k % 2 != 0) return ctx.Unsupported(types + " of odd depth");
  if (s->block > (1 << 14)) {
    return ctx.Unsupported(types + " in blocks over 16384");
  }
  GRAFT_KERNEL_CHECK(w->bytes * 2 >= static_cast<size_t>(s->n * s->k),
                     "INT4 weights hold %d bytes, shape %s needs %d", w->bytes,
                     ShapeToString(w->shape), (s->n * s->k + 1) / 2);
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->n,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->n);
  s->blocks = s->k / s->block;
  s->m = in->num_elements() / s->k;

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
  const uint8_t* packed = w->data<uint8_t>();
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
  GRAFT_RETURN_IF_ERROR(ActivationRange(
      o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE,
      &s->lo, &s->hi));

  GRAFT_ASSIGN_OR_RETURN(Shape out,
                         FullyConnectedOutputShape(o, *in, s->m, s->k, s->n));
  ctx.RequestScratch(s->m * (sizeof(float) + sizeof(int32_t)) +
                     s->m * s->k * sizeof(int16_t));
  ctx.SetEval(EvalHybridFc);
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, std::move(out));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(FullyConnectedHybrid);

}  // namespace graft
