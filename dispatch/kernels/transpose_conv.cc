// TRANSPOSE_CONV (float32): inputs (output_shape, weights [Cout, KH, KW,
// Cin], input NHWC, optional bias), SAME/VALID padding, strides, fused
// activation, as TFLite's reference kernel.
//
// Lowered to GEMM + col2im: for a chunk of input pixels, one GEMM computes
// every (tap, output channel) contribution, which is then scattered into the
// output. The weights are rearranged and packed at prepare time.
#include <algorithm>
#include <cstring>
#include <vector>

#include "dispatch/kernels/gemm.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

constexpr int64_t kRowsPerChunk = 64;

struct TransposeConvState : KernelState {
  int batch, in_h, in_w, in_c, out_h, out_w, out_c;
  int k_h, k_w, stride_h, stride_w, pad_h, pad_w;
  int64_t n;  // GEMM N = k_h * k_w * out_c
  float lo, hi;
  std::vector<float> packed;
  bool pack_at_eval = false;
  size_t packed_floats = 0;
};

// B[ic][(fy * KW + fx) * Cout + oc] = weights[oc][fy][fx][ic].
void PackWeights(const TransposeConvState& s, const float* w, float* tmp,
                 float* packed) {
  const int64_t taps = int64_t{s.k_h} * s.k_w;
  for (int oc = 0; oc < s.out_c; ++oc) {
    for (int64_t t = 0; t < taps; ++t) {
      for (int ic = 0; ic < s.in_c; ++ic) {
        tmp[ic * s.n + t * s.out_c + oc] = w[(oc * taps + t) * s.in_c + ic];
      }
    }
  }
  PackRhs(tmp, s.in_c, s.n, s.n, 1, packed);
}

absl::Status EvalTransposeConv(EvalContext& ctx) {
  const TransposeConvState& s = *ctx.state<TransposeConvState>();
  const float* input = ctx.input(2)->data<float>();
  const Tensor* bias_t = ctx.input(3);
  const float* bias = bias_t ? bias_t->data<float>() : nullptr;
  float* output = ctx.output(0)->data<float>();
  float* col = ctx.scratch_as<float>();
  const float* packed = s.packed.data();
  if (s.pack_at_eval) {
    float* tmp = col + kRowsPerChunk * s.n;
    float* dst = tmp + int64_t{s.in_c} * s.n;
    PackWeights(s, ctx.input(1)->data<float>(), tmp, dst);
    packed = dst;
  }
  std::fill(output, output + ctx.output(0)->num_elements(), 0.0f);
  const int64_t rows = int64_t{s.batch} * s.in_h * s.in_w;
  for (int64_t r0 = 0; r0 < rows; r0 += kRowsPerChunk) {
    const int64_t r1 = std::min(rows, r0 + kRowsPerChunk);
    GemmArgs g;
    g.m = r1 - r0, g.n = s.n, g.k = s.in_c;
    g.a = input + r0 * s.in_c, g.lda = s.in_c;
    g.packed_b = packed;
    g.c = col, g.ldc = s.n;
    Gemm(g, ctx.thread_pool());
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t b = r / (int64_t{s.in_h} * s.in_w);
      const int iy = static_cast<int>(r / s.in_w % s.in_h);
      const int ix = static_cast<int>(r % s.in_w);
      const float* src = col + (r - r0) * s.n;
      for (int fy = 0; fy < s.k_h; ++fy) {
        const int oy = iy * s.stride_h + fy - s.pad_h;
        if (oy < 0 || oy >= s.out_h) continue;
        for (int fx = 0; fx < s.k_w; ++fx) {
          const int ox = ix * s.stride_w + fx - s.pad_w;
          if (ox < 0 || ox >= s.out_w) continue;
          float* dst =
              output + ((b * s.out_h + oy) * s.out_w + ox) * s.out_c;
          const float* v = src + (int64_t{fy} * s.k_w + fx) * s.out_c;
          for (int oc = 0; oc < s.out_c; ++oc) dst[oc] += v[oc];
        }
      }
    }
  }
  const int64_t pixels = int64_t{s.batch} * s.out_h * s.out_w;
  for (int64_t p = 0; p < pixels; ++p) {
    float* o = output + p * s.out_c;
    for (int oc = 0; oc < s.out_c; ++oc) {
      float v = o[oc] + (bias ? bias[oc] : 0.0f);
      o[oc] = std::min(std::max(v, s.lo), s.hi);
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareTransposeConv(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 4, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 2));
  const Tensor* bias = ctx.input(3);
  if (in->type != tfl::TensorType_FLOAT32 ||
      w->type != tfl::TensorType_FLOAT32 ||
      (bias && bias->type != tfl::TensorType_FLOAT32) ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat("%s input with %s weights",
                                           TensorTypeName(in->type),
                                           TensorTypeName(w->type)));
  }
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
  auto* s = MakeState<TransposeConvState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->out_c = w->dim(0), s->k_h = w->dim(1), s->k_w = w->dim(2);
  GRAFT_KERNEL_CHECK(w->dim(3) == s->in_c,
                     "weights depth %d differs from input depth %d",
                     w->dim(3), s->in_c);
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
  // TFLite computes the padding as for a convolution from the output size
  // back to the input size.
  int conv_out_h = ComputeOutSize(o->padding, s->out_h, s->k_h, s->stride_h);
  int conv_out_w = ComputeOutSize(o->padding, s->out_w, s->k_w, s->stride_w);
  s->pad_h = ComputePadding(s->stride_h, 1, s->out_h, s->k_h, conv_out_h);
  s->pad_w = ComputePadding(s->stride_w, 1, s->out_w, s->k_w, conv_out_w);
  GRAFT_RETURN_IF_ERROR(
      ActivationRange(o->fused_activation_function, &s->lo, &s->hi));
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->out_c,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->out_c);
  s->n = int64_t{s->k_h} * s->k_w * s->out_c;
  s->packed_floats = PackedRhsSize(s->in_c, s->n);
  size_t scratch = kRowsPerChunk * s->n;
  if (w->constant) {
    std::vector<float> tmp(static_cast<size_t>(s->in_c * s->n));
    s->packed.resize(s->packed_floats);
    PackWeights(*s, w->data<float>(), tmp.data(), s->packed.data());
  } else {
    s->pack_at_eval = true;
    scratch += s->in_c * s->n + s->packed_floats;
  }
  ctx.RequestScratch(scratch * sizeof(float));
  ctx.SetEval(EvalTransposeConv);
  ctx.SetReductionLength(int64_t{s->in_c} * s->k_h * s->k_w);
  return ctx.SetOutputShape(0, std::move(out_shape));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(TransposeConv);

}  // namespace graft
