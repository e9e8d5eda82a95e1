// CONV_3D (float32), as TFLite: NDHWC input, DHWIO filter [KD, KH, KW, Cin,
// Cout], optional bias, SAME/VALID padding, strides and dilations per
// spatial dimension, a fused activation.
//
// Lowered to GEMM like CONV_2D: the filter is already a [K, Cout] row-major
// matrix (K = KD * KH * KW * Cin), packed once at prepare time when
// constant; at eval, chunks of output voxels are expanded into an im2col
// buffer (one per thread, from scratch) and multiplied into the output.
#include <algorithm>
#include <cstring>
#include <vector>

#include "dispatch/kernels/gemm.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

// Output voxels per im2col chunk (as CONV_2D's kRowsPerChunk).
constexpr int64_t kVoxelsPerChunk = 96;

// One spatial dimension of the window: its input and output extents and
// how output index o maps to the input indices o * stride - pad + t * dil.
struct Axis {
  int in = 0, out = 0, k = 0, stride = 1, dil = 1, pad = 0;
};

struct Conv3DState : KernelState {
  int batch = 0, in_c = 0, out_c = 0;
  Axis d, h, w;
  int64_t k = 0;  // GEMM K = kd * kh * kw * in_c
  float lo = 0, hi = 0;
  std::vector<float> packed;  // PackedRhsSize(k, out_c), constant filter
  bool pack_at_eval = false;  // the filter is not constant: pack into scratch
  size_t packed_floats = 0;
  size_t im2col_floats = 0;  // per thread
};

void Im2Col(const Conv3DState& s, const float* input, int64_t row_begin,
            int64_t row_end, float* col) {
  const size_t copy_bytes = sizeof(float) * s.in_c;
  for (int64_t r = row_begin; r < row_end; ++r) {
    int64_t rest = r;
    const int ox = static_cast<int>(rest % s.w.out);
    rest /= s.w.out;
    const int oy = static_cast<int>(rest % s.h.out);
    rest /= s.h.out;
    const int oz = static_cast<int>(rest % s.d.out);
    const int64_t b = rest / s.d.out;
    float* dst = col + (r - row_begin) * s.k;
    for (int kz = 0; kz < s.d.k; ++kz) {
      const int iz = oz * s.d.stride - s.d.pad + kz * s.d.dil;
      for (int ky = 0; ky < s.h.k; ++ky) {
        const int iy = oy * s.h.stride - s.h.pad + ky * s.h.dil;
        for (int kx = 0; kx < s.w.k; ++kx, dst += s.in_c) {
          const int ix = ox * s.w.stride - s.w.pad + kx * s.w.dil;
          if (iz < 0 || iz >= s.d.in || iy < 0 || iy >= s.h.in || ix < 0 ||
              ix >= s.w.in) {
            std::memset(dst, 0, copy_bytes);
            continue;
          }
          const int64_t at =
              (((b * s.d.in + iz) * s.h.in + iy) * s.w.in + ix) * s.in_c;
          std::memcpy(dst, input + at, copy_bytes);
        }
      }
    }
  }
}

absl::Status EvalConv3D(EvalContext& ctx) {
  const Conv3DState& s = *ctx.state<Conv3DState>();
  const float* input = ctx.input(0)->data<float>();
  const Tensor* bias_t = ctx.input(2);
  const float* bias = bias_t ? bias_t->data<float>() : nullptr;
  float* output = ctx.output(0)->data<float>();
  float* scratch = ctx.scratch_as<float>();
  const float* packed = s.packed.data();
  if (s.pack_at_eval) {
    PackRhs(ctx.input(1)->data<float>(), s.k, s.out_c, /*stride_k=*/s.out_c,
            /*stride_n=*/1, scratch);
    packed = scratch;
    scratch += s.packed_floats;
  }
  const int64_t rows = int64_t{s.batch} * s.d.out * s.h.out * s.w.out;
  const int64_t chunks = (rows + kVoxelsPerChunk - 1) / kVoxelsPerChunk;
  auto body = [&](int thread, int64_t begin, int64_t end) {
    float* col = scratch + thread * s.im2col_floats;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * kVoxelsPerChunk;
      const int64_t r1 = std::min(rows, r0 + kVoxelsPerChunk);
      Im2Col(s, input, r0, r1, col);
      GemmArgs g;
      g.m = r1 - r0, g.n = s.out_c, g.k = s.k;
      g.a = col, g.lda = s.k;
      g.packed_b = packed, g.bias = bias, g.lo = s.lo, g.hi = s.hi;
      g.c = output + r0 * s.out_c, g.ldc = s.out_c;
      Gemm(g, nullptr);
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelForWithThreadIndex(chunks, 1, body);
  } else {
    body(0, 0, chunks);
  }
  return absl::OkStatus();
}

absl::Status SetAxis(tfl::Padding padding, int in, int k, int stride, int dil,
                     Axis* a) {
  GRAFT_KERNEL_CHECK(stride > 0 && dil > 0,
                     "strides and dilations must be positive, got %d and %d",
                     stride, dil);
  a->in = in, a->k = k, a->stride = stride, a->dil = dil;
  a->out = ComputeOutSize(padding, in, k, stride, dil);
  GRAFT_KERNEL_CHECK(a->out > 0,
                     "a window of %d (dilation %d) does not fit an input of %d",
                     k, dil, in);
  a->pad = ComputePadding(stride, dil, in, k, a->out);
  return absl::OkStatus();
}

absl::Status PrepareConv3D(PrepareContext& ctx) {
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
  GRAFT_KERNEL_CHECK(in->rank() == 5 && filter->rank() == 5,
                     "input and filter must be 5-D, got %s and %s",
                     ShapeToString(in->shape), ShapeToString(filter->shape));
  const auto* o = ctx.op().builtin_options.AsConv3DOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing Conv3DOptions");
  auto* s = MakeState<Conv3DState>(ctx);
  s->batch = in->dim(0), s->in_c = in->dim(4), s->out_c = filter->dim(4);
  GRAFT_KERNEL_CHECK(filter->dim(3) == s->in_c,
                     "filter depth %d does not match %d input channels",
                     filter->dim(3), s->in_c);
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->out_c,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->out_c);
  GRAFT_RETURN_IF_ERROR(SetAxis(o->padding, in->dim(1), filter->dim(0),
                                o->stride_d, o->dilation_d_factor, &s->d));
  GRAFT_RETURN_IF_ERROR(SetAxis(o->padding, in->dim(2), filter->dim(1),
                                o->stride_h, o->dilation_h_factor, &s->h));
  GRAFT_RETURN_IF_ERROR(SetAxis(o->padding, in->dim(3), filter->dim(2),
                                o->stride_w, o->dilation_w_factor, &s->w));
  GRAFT_RETURN_IF_ERROR(
      ActivationRange(o->fused_activation_function, &s->lo, &s->hi));
  s->k = int64_t{s->d.k} * s->h.k * s->w.k * s->in_c;
  s->packed_floats = PackedRhsSize(s->k, s->out_c);
  size_t scratch_floats = 0;
  if (filter->constant) {
    s->packed.resize(s->packed_floats);
    PackRhs(filter->data<float>(), s->k, s->out_c, /*stride_k=*/s->out_c,
            /*stride_n=*/1, s->packed.data());
  } else {
    s->pack_at_eval = true;
    scratch_floats += s->packed_floats;
  }
  const int threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
  s->im2col_floats = kVoxelsPerChunk * s->k;
  scratch_floats += s->im2col_floats * threads;
  ctx.RequestScratch(scratch_floats * sizeof(float));
  ctx.SetEval(EvalConv3D);
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(
      0, {s->batch, s->d.out, s->h.out, s->w.out, s->out_c});
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Conv3D);

}  // namespace graft
