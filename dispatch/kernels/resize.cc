// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (any fixed-size dtype), NHWC,
// with a size input [new_h, new_w] and TFLite's align_corners /
// half_pixel_centers arithmetic (reference_ops). Bilinear, by dtype as
// TFLite's reference kernel: FLOAT32 and UINT8 interpolate in float
// (ResizeBilinear; UINT8 adds 0.5 and truncates), INT8 and INT16 in
// integers (ResizeBilinearInteger: positions in 1/1024ths, the four
// products summed in int64, divided by 2^20 rounding half away from zero).
// Quantized values are interpolated as they are, as there: the output
// keeps the input's scale and zero point.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

struct ResizeState : KernelState {
  int batch, in_h, in_w, c, out_h, out_w;
  // Bilinear: per output row/col the two source indices and the weight of
  // the second (float, or for the integer path the position in 1/1024ths);
  // nearest: the source index.
  std::vector<int32_t> y0, y1, x0, x1;
  std::vector<float> fy, fx;
  std::vector<int32_t> iy, ix;
};

float Scale(int in, int out, bool align_corners) {
  if (align_corners && out > 1) {
    return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  }
  return static_cast<float>(in) / static_cast<float>(out);
}

// TFLite's ComputeInterpolationValues.
void Interpolation(int out, int in, bool align_corners, bool half_pixel,
                   std::vector<int32_t>* lo, std::vector<int32_t>* hi,
                   std::vector<float>* frac) {
  const float scale = Scale(in, out, align_corners);
  for (int i = 0; i < out; ++i) {
    const float v = half_pixel ? (i + 0.5f) * scale - 0.5f : i * scale;
    const float f = std::floor(v);
    const int32_t l = std::max(static_cast<int32_t>(f), 0);
    const int32_t h = std::min(static_cast<int32_t>(std::ceil(v)), in - 1);
    lo->push_back(l);
    hi->push_back(h);
    frac->push_back(v - static_cast<float>(l));
  }
}

// TFLite's ComputeInterpolationValuesInteger: positions in 1/1024ths.
void InterpolationInteger(int out, int in, bool align_corners, bool half_pixel,
                          std::vector<int32_t>* lo, std::vector<int32_t>* hi,
                          std::vector<int32_t>* scaled) {
  int32_t scale_10 = ((1 << 10) * in + out / 2) / out;
  if (align_corners && out > 1) {
    scale_10 = ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
  }
  for (int i = 0; i < out; ++i) {
    const int32_t v =
        half_pixel ? i * scale_10 + scale_10 / 2 - (1 << 9) : i * scale_10;
    scaled->push_back(v);
    lo->push_back(std::max(v / (1 << 10), 0));
    hi->push_back(std::min((v + (1 << 10) - 1) / (1 << 10), in - 1));
  }
}

template <typename T>
absl::Status EvalBilinearInteger(EvalContext& ctx) {
  const ResizeState& s = *ctx.state<ResizeState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  auto at = [&](int b, int y, int x) {
    return in + ((int64_t{b} * s.in_h + y) * s.in_w + x) * s.c;
  };
  for (int b = 0; b < s.batch; ++b) {
    for (int y = 0; y < s.out_h; ++y) {
      const int64_t wy1 = s.iy[y] - (1 << 10) * s.y0[y];
      const int64_t wy0 = (1 << 10) - wy1;
      for (int x = 0; x < s.out_w; ++x) {
        const int64_t wx1 = s.ix[x] - (1 << 10) * s.x0[x];
        const int64_t wx0 = (1 << 10) - wx1;
        const T* p00 = at(b, s.y0[y], s.x0[x]);
        const T* p10 = at(b, s.y1[y], s.x0[x]);
        const T* p01 = at(b, s.y0[y], s.x1[x]);
        const T* p11 = at(b, s.y1[y], s.x1[x]);
        for (int c = 0; c < s.c; ++c) {
          const int64_t v = p00[c] * wy0 * wx0 + p10[c] * wy1 * wx0 +
                            p01[c] * wy0 * wx1 + p11[c] * wy1 * wx1;
          const int64_t round = v > 0 ? (1 << 19) : -(1 << 19);
          out[c] = static_cast<T>((v + round) / (1 << 20));
        }
        out += s.c;
      }
    }
  }
  return absl::OkStatus();
}

// FLOAT32, and UINT8 (plus 0.5, truncated: reference_ops::ResizeBilinear's
// rounding offset for integer types).
template <typename T>
absl::Status EvalBilinear(EvalContext& ctx) {
  const ResizeState& s = *ctx.state<ResizeState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  constexpr float kRound = std::is_integral_v<T> ? 0.5f : 0.0f;
  auto at = [&](int b, int y, int x) {
    return in + ((int64_t{b} * s.in_h + y) * s.in_w + x) * s.c;
  };
  for (int b = 0; b < s.batch; ++b) {
    for (int y = 0; y < s.out_h; ++y) {
      const float dy = s.fy[y];
      for (int x = 0; x < s.out_w; ++x) {
        const float dx = s.fx[x];
        const T* p00 = at(b, s.y0[y], s.x0[x]);
        const T* p10 = at(b, s.y1[y], s.x0[x]);
        const T* p01 = at(b, s.y0[y], s.x1[x]);
        const T* p11 = at(b, s.y1[y], s.x1[x]);
        for (int c = 0; c < s.c; ++c) {
          out[c] = static_cast<T>(
              static_cast<float>(p00[c]) * (1 - dy) * (1 - dx) +
              static_cast<float>(p10[c]) * dy * (1 - dx) +
              static_cast<float>(p01[c]) * (1 - dy) * dx +
              static_cast<float>(p11[c]) * dy * dx + kRound);
        }
        out += s.c;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status EvalNearest(EvalContext& ctx) {
  const ResizeState& s = *ctx.state<ResizeState>();
  const size_t pixel = ElementSize(ctx.input(0)->type) * s.c;
  const uint8_t* in = ctx.input(0)->raw_data;
  uint8_t* out = ctx.output(0)->raw_data;
  for (int b = 0; b < s.batch; ++b) {
    for (int y = 0; y < s.out_h; ++y) {
      for (int x = 0; x < s.out_w; ++x) {
        std::memcpy(out,
                    in + ((int64_t{b} * s.in_h + s.y0[y]) * s.in_w + s.x0[x]) *
                             pixel,
                    pixel);
        out += pixel;
      }
    }
  }
  return absl::OkStatus();
}

// TFLite's GetNearestNeighbor.
int32_t Nearest(int out_index, int in, int out, bool align_corners,
                bool half_pixel) {
  const float scale = Scale(in, out, align_corners);
  const float offset = half_pixel ? 0.5f : 0.0f;
  const float v = (out_index + offset) * scale;
  int32_t i = std::min(align_corners ? static_cast<int32_t>(std::round(v))
                                     : static_cast<int32_t>(std::floor(v)),
                       in - 1);
  if (half_pixel) i = std::max<int32_t>(0, i);
  return i;
}

template <bool kBilinear>
absl::Status PrepareResize(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* size_t_, RequiredInput(ctx, 1));
  const tfl::TensorType t = in->type;
  if (ctx.output(0)->type != t ||
      (kBilinear && t != tfl::TensorType_FLOAT32 &&
       t != tfl::TensorType_UINT8 && t != tfl::TensorType_INT8 &&
       t != tfl::TensorType_INT16) ||
      ElementSize(t) == 0) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(in->rank() == 4, "input must be 4-D, got %s",
                     ShapeToString(in->shape));
  if (!ctx.ValuesKnown(size_t_)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ReadIntValues(*size_t_));
  GRAFT_KERNEL_CHECK(size.size() == 2 && size[0] > 0 && size[1] > 0,
                     "size must hold two positive values");
  bool align_corners = false, half_pixel = false;
  if constexpr (kBilinear) {
    if (const auto* o = ctx.op().builtin_options.AsResizeBilinearOptions()) {
      align_corners = o->align_corners, half_pixel = o->half_pixel_centers;
    }
  } else {
    if (const auto* o =
            ctx.op().builtin_options.AsResizeNearestNeighborOptions()) {
      align_corners = o->align_corners, half_pixel = o->half_pixel_centers;
    }
  }
  auto* s = MakeState<ResizeState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->c = in->dim(3);
  s->out_h = static_cast<int>(size[0]), s->out_w = static_cast<int>(size[1]);
  if constexpr (kBilinear) {
    if (t == tfl::TensorType_INT8 || t == tfl::TensorType_INT16) {
      InterpolationInteger(s->out_h, s->in_h, align_corners, half_pixel,
                           &s->y0, &s->y1, &s->iy);
      InterpolationInteger(s->out_w, s->in_w, align_corners, half_pixel,
                           &s->x0, &s->x1, &s->ix);
      ctx.SetEval(t == tfl::TensorType_INT8 ? EvalBilinearInteger<int8_t>
                                            : EvalBilinearInteger<int16_t>);
    } else {
      Interpolation(s->out_h, s->in_h, align_corners, half_pixel, &s->y0,
                    &s->y1, &s->fy);
      Interpolation(s->out_w, s->in_w, align_corners, half_pixel, &s->x0,
                    &s->x1, &s->fx);
      ctx.SetEval(t == tfl::TensorType_UINT8 ? EvalBilinear<uint8_t>
                                             : EvalBilinear<float>);
    }
  } else {
    for (int y = 0; y < s->out_h; ++y) {
      s->y0.push_back(Nearest(y, s->in_h, s->out_h, align_corners, half_pixel));
    }
    for (int x = 0; x < s->out_w; ++x) {
      s->x0.push_back(Nearest(x, s->in_w, s->out_w, align_corners, half_pixel));
    }
    ctx.SetEval(EvalNearest);
  }
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->c});
}

absl::Status PrepareResizeBilinear(PrepareContext& ctx) {
  return PrepareResize<true>(ctx);
}
absl::Status PrepareResizeNearestNeighbor(PrepareContext& ctx) {
  return PrepareResize<false>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(ResizeBilinear);
GRAFT_DEFINE_KERNEL(ResizeNearestNeighbor);

}  // namespace graft
