// RESIZE_BILINEAR (float32) and RESIZE_NEAREST_NEIGHBOR (any fixed-size
// dtype), NHWC, with a constant size input [new_h, new_w] and TFLite's
// align_corners / half_pixel_centers arithmetic (reference_ops).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

struct ResizeState : KernelState {
  int batch, in_h, in_w, c, out_h, out_w;
  // Bilinear: per output row/col the two source indices and the weight of
  // the second; nearest: the source index.
  std::vector<int32_t> y0, y1, x0, x1;
  std::vector<float> fy, fx;
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

absl::Status EvalBilinear(EvalContext& ctx) {
  const ResizeState& s = *ctx.state<ResizeState>();
  const float* in = ctx.input(0)->data<float>();
  float* out = ctx.output(0)->data<float>();
  auto at = [&](int b, int y, int x) {
    return in + ((int64_t{b} * s.in_h + y) * s.in_w + x) * s.c;
  };
  for (int b = 0; b < s.batch; ++b) {
    for (int y = 0; y < s.out_h; ++y) {
      const float dy = s.fy[y];
      for (int x = 0; x < s.out_w; ++x) {
        const float dx = s.fx[x];
        const float* p00 = at(b, s.y0[y], s.x0[x]);
        const float* p10 = at(b, s.y1[y], s.x0[x]);
        const float* p01 = at(b, s.y0[y], s.x1[x]);
        const float* p11 = at(b, s.y1[y], s.x1[x]);
        for (int c = 0; c < s.c; ++c) {
          out[c] = p00[c] * (1 - dy) * (1 - dx) + p10[c] * dy * (1 - dx) +
                   p01[c] * (1 - dy) * dx + p11[c] * dy * dx;
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
  if (ctx.output(0)->type != in->type ||
      (kBilinear && in->type != tfl::TensorType_FLOAT32) ||
      ElementSize(in->type) == 0) {
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
    Interpolation(s->out_h, s->in_h, align_corners, half_pixel, &s->y0, &s->y1,
                  &s->fy);
    Interpolation(s->out_w, s->in_w, align_corners, half_pixel, &s->x0, &s->x1,
                  &s->fx);
    ctx.SetEval(EvalBilinear);
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
