// QUANTIZE and DEQUANTIZE with TFLite's reference semantics:
//
// - QUANTIZE FLOAT32 -> INT8/UINT8/INT16 (per-tensor): AffineQuantize,
//   q = round(x / scale) + zero_point with the division in float (TFLite
//   keeps the scale as a double but divides by it cast to float; in double
//   ~1 in 1000 int16 results came out 1 higher or lower), rounded half away
//   from zero, clamped.
// - QUANTIZE INT8/UINT8/INT16/INT32 -> INT8/UINT8/INT16/INT32 (requantize,
//   as TFLite Micro also allows INT16 <-> INT32):
//   Requantize, (q - zp_in) * M + zp_out with M = s_in / s_out as a
//   quantized multiplier.
// - DEQUANTIZE INT8/UINT8/INT16 -> FLOAT32: float(scale * (q - zp)) with the
//   product in double; per-channel parameters follow quantized_dimension.
// - DEQUANTIZE FLOAT16 -> FLOAT32 (fp16-stored weights): the exact IEEE
//   half-to-single conversion (subnormals, infinities and NaNs included).
//
// TFLite's optimized (NEON) quantize/dequantize compute in float and may
// differ from the reference by 1 LSB / 1 ulp on exact ties.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"

namespace graft {
namespace kernels {
namespace {

struct QuantizeState : KernelState {
  double scale = 1.0;
  int32_t in_zp = 0, out_zp = 0;
  int32_t qmin = 0, qmax = 0;
  QuantizedMultiplier mult;
  // DEQUANTIZE per channel: scales/zero points and the channel's stride.
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int64_t inner = 1, channels = 1;
};

template <typename Out>
absl::Status EvalQuantizeFloat(EvalContext& ctx) {
  const auto& s = *ctx.state<QuantizeState>();
  const float* in = ctx.input(0)->data<float>();
  Out* out = ctx.output(0)->data<Out>();
  const int64_t n = ctx.input(0)->num_elements();
  const float scale = static_cast<float>(s.scale);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t q = static_cast<int32_t>(std::round(in[i] / scale)) + s.out_zp;
    out[i] = static_cast<Out>(std::min(s.qmax, std::max(s.qmin, q)));
  }
  return absl::OkStatus();
}

template <typename In, typename Out>
absl::Status EvalRequantize(EvalContext& ctx) {
  const auto& s = *ctx.state<QuantizeState>();
  const In* in = ctx.input(0)->data<In>();
  Out* out = ctx.output(0)->data<Out>();
  const int64_t n = ctx.input(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t q =
        MultiplyByQuantizedMultiplier(static_cast<int32_t>(in[i]) - s.in_zp,
                                      s.mult) +
        s.out_zp;
    out[i] = static_cast<Out>(std::min(s.qmax, std::max(s.qmin, q)));
  }
  return absl::OkStatus();
}

template <typename In>
absl::Status EvalDequantize(EvalContext& ctx) {
  const auto& s = *ctx.state<QuantizeState>();
  const In* in = ctx.input(0)->data<In>();
  float* out = ctx.output(0)->data<float>();
  const int64_t n = ctx.input(0)->num_elements();
  if (s.scales.empty()) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = static_cast<float>(
          s.scale * static_cast<double>(static_cast<int32_t>(in[i]) - s.in_zp));
    }
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = (i / s.inner) % s.channels;
    out[i] = s.scales[c] *
             static_cast<float>(static_cast<int32_t>(in[i]) - s.zero_points[c]);
  }
  return absl::OkStatus();
}


absl::Status EvalDequantizeHalf(EvalContext& ctx) {
  const uint16_t* in = ctx.input(0)->data<uint16_t>();
  float* out = ctx.output(0)->data<float>();
  const int64_t n = ctx.input(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) out[i] = HalfToFloat(in[i]);
  return absl::OkStatus();
}

bool IsQuantType(tfl::TensorType t) {
  return t == tfl::TensorType_INT8 || t == tfl::TensorType_UINT8 ||
         t == tfl::TensorType_INT16;
}

template <typename In>
bool SetRequantizeEval(PrepareContext& ctx, tfl::TensorType out) {
  switch (out) {
    case tfl::TensorType_INT8: ctx.SetEval(EvalRequantize<In, int8_t>); break;
    case tfl::TensorType_UINT8: ctx.SetEval(EvalRequantize<In, uint8_t>); break;
    case tfl::TensorType_INT16: ctx.SetEval(EvalRequantize<In, int16_t>); break;
    case tfl::TensorType_INT32: ctx.SetEval(EvalRequantize<In, int32_t>); break;
    default: return false;
  }
  return true;
}

absl::Status PrepareQuantize(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  const Tensor* out = ctx.output(0);
  const bool out_int32 = out->type == tfl::TensorType_INT32;
  if ((!IsQuantType(out->type) && !out_int32) || out->quantization == nullptr ||
      out->quantization->scale.empty() ||
      (out_int32 && in->type == tfl::TensorType_FLOAT32)) {
    return ctx.Unsupported();
  }
  if (out->quantization->scale.size() != 1) {
    return ctx.Unsupported("per-channel QUANTIZE");
  }
  auto* s = MakeState<QuantizeState>(ctx);
  s->out_zp = ZeroPoint(*out);
  TypeRange(out->type, &s->qmin, &s->qmax);
  if (in->type == tfl::TensorType_FLOAT32) {
    s->scale = Scale(*out);
    switch (out->type) {
      case tfl::TensorType_INT8: ctx.SetEval(EvalQuantizeFloat<int8_t>); break;
      case tfl::TensorType_UINT8: ctx.SetEval(EvalQuantizeFloat<uint8_t>); break;
      default: ctx.SetEval(EvalQuantizeFloat<int16_t>); break;
    }
  } else {
    const bool in_ok = IsQuantType(in->type) || in->type == tfl::TensorType_INT32;
    if (!in_ok || in->quantization == nullptr ||
        in->quantization->scale.size() != 1) {
      return ctx.Unsupported();
    }
    s->in_zp = ZeroPoint(*in);
    s->mult = QuantizeMultiplier(static_cast<double>(Scale(*in)) /
                                 static_cast<double>(Scale(*out)));
    bool ok = false;
    switch (in->type) {
      case tfl::TensorType_INT8: ok = SetRequantizeEval<int8_t>(ctx, out->type); break;
      case tfl::TensorType_UINT8: ok = SetRequantizeEval<uint8_t>(ctx, out->type); break;
      case tfl::TensorType_INT16: ok = SetRequantizeEval<int16_t>(ctx, out->type); break;
      default: ok = SetRequantizeEval<int32_t>(ctx, out->type); break;
    }
    if (!ok) return ctx.Unsupported();
  }
  return ctx.SetOutputShape(0, in->shape);
}

absl::Status PrepareDequantize(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  if (in->type == tfl::TensorType_FLOAT16 &&
      ctx.output(0)->type == tfl::TensorType_FLOAT32) {
    ctx.SetEval(EvalDequantizeHalf);
    return ctx.SetOutputShape(0, in->shape);
  }
  if (!IsQuantType(in->type) || !IsQuantized(*in) ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported();
  }
  auto* s = MakeState<QuantizeState>(ctx);
  const auto& q = *in->quantization;
  if (q.scale.size() == 1) {
    s->scale = q.scale[0];
    s->in_zp = ZeroPoint(*in);
  } else {
    const int dim = q.quantized_dimension;
    GRAFT_KERNEL_CHECK(dim >= 0 && dim < in->rank() &&
                           in->dim(dim) == static_cast<int>(q.scale.size()),
                       "%d scales do not match dimension %d of %s",
                       q.scale.size(), dim, ShapeToString(in->shape));
    s->scales = q.scale;
    s->zero_points.assign(q.scale.size(), 0);
    for (size_t c = 0; c < q.zero_point.size() && c < q.scale.size(); ++c) {
      s->zero_points[c] = static_cast<int32_t>(q.zero_point[c]);
    }
    s->channels = in->dim(dim);
    s->inner = DimProduct(in->shape, dim + 1, in->rank());
  }
  switch (in->type) {
    case tfl::TensorType_INT8: ctx.SetEval(EvalDequantize<int8_t>); break;
    case tfl::TensorType_UINT8: ctx.SetEval(EvalDequantize<uint8_t>); break;
    default: ctx.SetEval(EvalDequantize<int16_t>); break;
  }
  return ctx.SetOutputShape(0, in->shape);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Quantize);
GRAFT_DEFINE_KERNEL(Dequantize);

}  // namespace graft
