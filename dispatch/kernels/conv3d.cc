// CONV_3D (float32), as TFLite: NDHWC input, DHWIO filter [KD, KH, KW, Cin,
// Cout], optional bias, SAME/VALID padding, strides and dilations per
// spatial dimension, a fused activation.
//
// Lowered to GEMM like CONV_2D: the filter is already a [K, Cout] row-major
// matrix (K = KD * KH * KW * Cin), packed once at prepare time when
// constant; at eval, chunks of output voxels are expanded into an im2col
// buffer (one per thread, from scratch) and multiplied into the output.
//
// CONV_3D_TRANSPOSE (float32), as TFLite (kernels/conv3d_transpose.cc,
// reference_ops::Conv3DTranspose): inputs output_shape (INT32 [5]), filter
// [KD, KH, KW, Cout, Cin], NDHWC input, optional bias [Cout]; the same
// Conv3DOptions. The output shape is the output_shape tensor's values (known
// at load when constant, else at invoke); CONV_3D of that shape with these
// options must give the input's spatial shape.
//
// Computed directly, without GEMM: each output voxel gathers the input
// voxels its taps reach, adding terms in the reference's order.
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
  PackedVector packed;  // PackedRhsSize(k, out_c), constant filter
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
  GRAFT_KERNEL_CHECK(WindowFitsInt(in, k, stride, dil),
                     "the window (input %d, filter %d, stride %d, dilation "
                     "%d) exceeds 32-bit index arithmetic",
                     in, k, stride, dil);
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

// ---- CONV_3D_TRANSPOSE ----

// Each Axis is the one of the forward CONV_3D from the transpose's output
// (Axis::in) to its input (Axis::out).
struct Conv3DTransposeState : KernelState {
  int batch = 0, in_c = 0, out_c = 0;
  Axis d, h, w;
  float lo = 0, hi = 0;
  // The filter as [KD, KH, KW, Cin, Cout], so the inner loop runs over
  // contiguous output channels; from scratch when the filter is not
  // constant.
  std::vector<float> filter_t;
  bool transpose_at_eval = false;
};

void TransposeFilter(const Conv3DTransposeState& s, const float* filter,
                     float* out) {
  const int64_t taps = int64_t{s.d.k} * s.h.k * s.w.k;
  for (int64_t t = 0; t < taps; ++t) {
    const float* src = filter + t * s.out_c * s.in_c;
    float* dst = out + t * s.in_c * s.out_c;
    for (int oc = 0; oc < s.out_c; ++oc) {
      for (int ic = 0; ic < s.in_c; ++ic) {
        dst[ic * s.out_c + oc] = src[oc * s.in_c + ic];
      }
    }
  }
}

// Gathers, for each output voxel, the input voxels that feed it. The taps
// run backwards so the input voxels come in ascending order, then the input
// channels: each output element adds its terms in the order of TFLite's
// reference scatter loop.
absl::Status EvalConv3DTranspose(EvalContext& ctx) {
  const Conv3DTransposeState& s = *ctx.state<Conv3DTransposeState>();
  const float* input = ctx.input(2)->data<float>();
  const Tensor* bias_t = ctx.input(3);
  const float* bias = bias_t ? bias_t->data<float>() : nullptr;
  float* output = ctx.output(0)->data<float>();
  const float* filter = s.filter_t.data();
  if (s.transpose_at_eval) {
    TransposeFilter(s, ctx.input(1)->data<float>(), ctx.scratch_as<float>());
    filter = ctx.scratch_as<float>();
  }
  const int in_c = s.in_c, out_c = s.out_c;
  const int64_t rows = int64_t{s.batch} * s.d.in * s.h.in;  // (b, od, oy)
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int oy = static_cast<int>(r % s.h.in);
      const int od = static_cast<int>((r / s.h.in) % s.d.in);
      const int64_t b = r / (int64_t{s.h.in} * s.d.in);
      for (int ox = 0; ox < s.w.in; ++ox) {
        float* acc = output + (r * s.w.in + ox) * out_c;
        std::fill(acc, acc + out_c, 0.0f);
        for (int kz = s.d.k - 1; kz >= 0; --kz) {
          const int tz = od + s.d.pad - kz * s.d.dil;
          if (tz < 0 || tz % s.d.stride != 0 || tz / s.d.stride >= s.d.out) {
            continue;
          }
          const int iz = tz / s.d.stride;
          for (int ky = s.h.k - 1; ky >= 0; --ky) {
            const int ty = oy + s.h.pad - ky * s.h.dil;
            if (ty < 0 || ty % s.h.stride != 0 || ty / s.h.stride >= s.h.out) {
              continue;
            }
            const int iy = ty / s.h.stride;
            for (int kx = s.w.k - 1; kx >= 0; --kx) {
              const int tx = ox + s.w.pad - kx * s.w.dil;
              if (tx < 0 || tx % s.w.stride != 0 ||
                  tx / s.w.stride >= s.w.out) {
                continue;
              }
              const int ix = tx / s.w.stride;
              const float* x =
                  input +
                  (((b * s.d.out + iz) * s.h.out + iy) * s.w.out + ix) * in_c;
              const float* f =
                  filter +
                  ((int64_t{kz} * s.h.k + ky) * s.w.k + kx) * in_c * out_c;
              for (int ic = 0; ic < in_c; ++ic, f += out_c) {
                const float xv = x[ic];
                for (int oc = 0; oc < out_c; ++oc) acc[oc] += xv * f[oc];
              }
            }
          }
        }
        for (int oc = 0; oc < out_c; ++oc) {
          const float v = bias ? acc[oc] + bias[oc] : acc[oc];
          acc[oc] = std::min(std::max(v, s.lo), s.hi);
        }
      }
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(rows, 1, body);
  } else {
    body(0, rows);
  }
  return absl::OkStatus();
}

// The forward axis from the transpose's output extent `out` to its input
// extent `in`, which must be what CONV_3D of `out` gives.
absl::Status SetTransposeAxis(tfl::Padding padding, const char* name, int out,
                              int in, int k, int stride, int dil, Axis* a) {
  GRAFT_KERNEL_CHECK(out > 0, "output_shape %s is %d, must be positive", name,
                     out);
  GRAFT_RETURN_IF_ERROR(SetAxis(padding, out, k, stride, dil, a));
  GRAFT_KERNEL_CHECK(a->out == in,
                     "output %s %d gives input %s %d with this filter, "
                     "strides and padding, but the input has %d",
                     name, out, name, a->out, in);
  return absl::OkStatus();
}

absl::Status PrepareConv3DTranspose(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 4, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* filter, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 2));
  const Tensor* bias = ctx.input(3);
  if (in->type != tfl::TensorType_FLOAT32 ||
      filter->type != tfl::TensorType_FLOAT32 ||
      (bias && bias->type != tfl::TensorType_FLOAT32) ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat("%s input with %s weights",
                                           TensorTypeName(in->type),
                                           TensorTypeName(filter->type)));
  }
  GRAFT_KERNEL_CHECK(shape_t->type == tfl::TensorType_INT32,
                     "output_shape must be INT32, got %s",
                     TensorTypeName(shape_t->type));
  GRAFT_KERNEL_CHECK(shape_t->rank() == 1 && shape_t->dim(0) == 5,
                     "output_shape must have shape [5], got %s",
                     ShapeToString(shape_t->shape));
  GRAFT_KERNEL_CHECK(in->rank() == 5 && filter->rank() == 5,
                     "input and filter must be 5-D, got %s and %s",
                     ShapeToString(in->shape), ShapeToString(filter->shape));
  GRAFT_KERNEL_CHECK(filter->dim(4) == in->dim(4),
                     "filter input channels %d do not match %d input channels",
                     filter->dim(4), in->dim(4));
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == filter->dim(3),
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, filter->dim(3));
  const auto* o = ctx.op().builtin_options.AsConv3DOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing Conv3DOptions");
  if (!ctx.ValuesKnown(shape_t)) return ctx.DeferToRun();

  const int32_t* shape = shape_t->data<int32_t>();
  auto* s = MakeState<Conv3DTransposeState>(ctx);
  s->batch = in->dim(0), s->in_c = in->dim(4), s->out_c = filter->dim(3);
  GRAFT_KERNEL_CHECK(shape[0] == s->batch,
                     "output_shape batch %d differs from the input's %d",
                     shape[0], s->batch);
  // TFLite accepts any multiple of the filter's output channels but then
  // reads the filter out of bounds; only the filter's count is meaningful.
  GRAFT_KERNEL_CHECK(shape[4] == s->out_c,
                     "output_shape channels %d differ from the filter's %d",
                     shape[4], s->out_c);
  GRAFT_RETURN_IF_ERROR(SetTransposeAxis(
      o->padding, "depth", shape[1], in->dim(1), filter->dim(0), o->stride_d,
      o->dilation_d_factor, &s->d));
  GRAFT_RETURN_IF_ERROR(SetTransposeAxis(
      o->padding, "height", shape[2], in->dim(2), filter->dim(1), o->stride_h,
      o->dilation_h_factor, &s->h));
  GRAFT_RETURN_IF_ERROR(SetTransposeAxis(
      o->padding, "width", shape[3], in->dim(3), filter->dim(2), o->stride_w,
      o->dilation_w_factor, &s->w));
  GRAFT_RETURN_IF_ERROR(
      ActivationRange(o->fused_activation_function, &s->lo, &s->hi));
  const size_t filter_floats = static_cast<size_t>(filter->num_elements());
  if (filter->constant) {
    s->filter_t.resize(filter_floats);
    TransposeFilter(*s, filter->data<float>(), s->filter_t.data());
  } else {
    s->transpose_at_eval = true;
    ctx.RequestScratch(filter_floats * sizeof(float));
  }
  ctx.SetEval(EvalConv3DTranspose);
  ctx.SetReductionLength(int64_t{s->d.k} * s->h.k * s->w.k * s->in_c);
  return ctx.SetOutputShape(0,
                            {shape[0], shape[1], shape[2], shape[3], shape[4]});
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Conv3D);
GRAFT_DEFINE_KERNEL(Conv3DTranspose);

}  // namespace graft
