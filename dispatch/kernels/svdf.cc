// SVDF, float32, with TFLite's semantics (reference_ops::EvalFloatSVDF):
// a rank-`rank` singular value decomposition filter over time.
//
//   state <- state shifted left by one step (the whole buffer, as TFLite)
//   state[b, f, memory-1] = weights_feature[f] . input[b]
//   out[b, u] = act(sum_{r<rank} weights_time[u*rank+r] . state[b, u*rank+r]
//                   + bias[u])
//
// with input [batch, input_size], weights_feature [filters, input_size],
// weights_time [filters, memory], optional bias [filters / rank], and the
// state (input 4, a variable tensor [batch, memory * filters]) updated in
// place so it carries across invokes.
//
// Integer SVDF (SvdfQuantized; TFLite's EvalIntegerSVDF): INT8 input and
// weights_feature, INT16 weights_time and state (zero point 0), INT32 bias,
// INT8 output. The feature dot products (input minus its zero point) are
// rescaled by input*feature/state scale into the int16 state, the time dot
// products summed in int32 with the bias, rescaled by state*time/output
// scale and clamped to INT8 (the fused RELU of converter output is then the
// clamp at the output zero point). Hybrid SVDF is refused at load, and so
// is integer SVDF with INT8 time weights or state (tflite-micro's form):
// TFLite's kernel checks neither type and reads both buffers as INT16, past
// the end of INT8 ones, so it defines no result for Graft to match.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_format.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"

namespace graft {
namespace kernels {
namespace {

struct SvdfState : KernelState {
  int64_t batch = 0, input_size = 0, filters = 0, memory = 0, rank = 0;
  float lo = 0, hi = 0;  // the fused activation's range
};

absl::Status EvalSvdf(EvalContext& ctx) {
  const SvdfState& s = *ctx.state<SvdfState>();
  const float* in = ctx.input(0)->data<float>();
  const float* wf = ctx.input(1)->data<float>();
  const float* wt = ctx.input(2)->data<float>();
  const Tensor* bias_t = ctx.input(3);
  const float* bias = bias_t ? bias_t->data<float>() : nullptr;
  // The state is a variable tensor: the op updates it in place.
  float* state = const_cast<float*>(ctx.input(4)->data<float>());
  float* out = ctx.output(0)->data<float>();
  const int64_t total = s.batch * s.filters * s.memory;
  if (total > 1) std::memmove(state, state + 1, sizeof(float) * (total - 1));
  for (int64_t b = 0; b < s.batch; ++b) {
    const float* x = in + b * s.input_size;
    for (int64_t f = 0; f < s.filters; ++f) {
      const float* w = wf + f * s.input_size;
      float dot = 0;
      for (int64_t i = 0; i < s.input_size; ++i) dot += w[i] * x[i];
      state[(b * s.filters + f) * s.memory + s.memory - 1] = dot;
    }
  }
  const int64_t units = s.filters / s.rank;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t u = 0; u < units; ++u) {
      float sum = 0;
      for (int64_t r = 0; r < s.rank; ++r) {
        const int64_t f = u * s.rank + r;
        const float* w = wt + f * s.memory;
        const float* st = state + (b * s.filters + f) * s.memory;
        float dot = 0;
        for (int64_t m = 0; m < s.memory; ++m) dot += w[m] * st[m];
        sum += dot;
      }
      if (bias != nullptr) sum += bias[u];
      out[b * units + u] = std::min(s.hi, std::max(s.lo, sum));
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareSvdf(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 5, 5, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* wf, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* wt, RequiredInput(ctx, 2));
  const Tensor* bias = ctx.input(3);
  GRAFT_ASSIGN_OR_RETURN(const Tensor* state, RequiredInput(ctx, 4));
  const Tensor* out = ctx.output(0);
  for (const Tensor* t : {in, wf, wt, bias, state, out}) {
    if (t != nullptr && t->type != tfl::TensorType_FLOAT32) {
      return ctx.Unsupported();
    }
  }
  const auto* o = ctx.op().builtin_options.AsSVDFOptions();
  GRAFT_KERNEL_CHECK(o != nullptr && o->rank > 0, "SVDF needs a rank > 0");
  GRAFT_KERNEL_CHECK(in->rank() == 2 && wf->rank() == 2 && wt->rank() == 2,
                     "input and weights must be 2-D, got %s, %s, %s",
                     ShapeToString(in->shape), ShapeToString(wf->shape),
                     ShapeToString(wt->shape));
  auto* s = MakeState<SvdfState>(ctx);
  s->batch = in->dim(0), s->input_size = in->dim(1);
  s->filters = wf->dim(0), s->memory = wt->dim(1), s->rank = o->rank;
  GRAFT_KERNEL_CHECK(wf->dim(1) == s->input_size && wt->dim(0) == s->filters,
                     "weights %s and %s do not fit input %s",
                     ShapeToString(wf->shape), ShapeToString(wt->shape),
                     ShapeToString(in->shape));
  GRAFT_KERNEL_CHECK(s->filters % s->rank == 0,
                     "%d filters do not split into rank %d", s->filters,
                     s->rank);
  const int32_t units = static_cast<int32_t>(s->filters / s->rank);
  GRAFT_KERNEL_CHECK(bias == nullptr || bias->num_elements() == units,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, units);
  GRAFT_KERNEL_CHECK(
      state->rank() == 2 && state->dim(0) == s->batch &&
          state->dim(1) == s->memory * s->filters,
      "state '%s' is %s, expected [%d, %d]", state->name,
      ShapeToString(state->shape), s->batch, s->memory * s->filters);
  GRAFT_KERNEL_CHECK(!state->constant,
                     "state '%s' must be a variable tensor", state->name);
  const tfl::ActivationFunctionType act = o->fused_activation_function;
  if (act == tfl::ActivationFunctionType_TANH ||
      act == tfl::ActivationFunctionType_SIGN_BIT) {
    return ctx.Unsupported("this SVDF activation");
  }
  GRAFT_RETURN_IF_ERROR(ActivationRange(act, &s->lo, &s->hi));
  ctx.SetEval(EvalSvdf);
  ctx.SetReductionLength(std::max(s->input_size, s->memory * s->rank));
  return ctx.SetOutputShape(
      0, {static_cast<int32_t>(s->batch), units});
}

struct SvdfQuantizedState : SvdfState {
  int32_t input_zp = 0, output_zp = 0;
  QuantizedMultiplier feature_mult, output_mult;
  int32_t act_min = 0, act_max = 0;
};

absl::Status EvalSvdfQuantized(EvalContext& ctx) {
  const SvdfQuantizedState& s = *ctx.state<SvdfQuantizedState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  const int8_t* wf = ctx.input(1)->data<int8_t>();
  const int16_t* wt = ctx.input(2)->data<int16_t>();
  const Tensor* bias_t = ctx.input(3);
  const int32_t* bias = bias_t ? bias_t->data<int32_t>() : nullptr;
  int16_t* state = const_cast<int16_t*>(ctx.input(4)->data<int16_t>());
  int8_t* out = ctx.output(0)->data<int8_t>();
  const int64_t total = s.batch * s.filters * s.memory;
  if (total > 1) std::memmove(state, state + 1, sizeof(int16_t) * (total - 1));
  for (int64_t b = 0; b < s.batch; ++b) {
    const int8_t* x = in + b * s.input_size;
    for (int64_t f = 0; f < s.filters; ++f) {
      const int8_t* w = wf + f * s.input_size;
      int32_t dot = 0;
      for (int64_t i = 0; i < s.input_size; ++i) {
        dot += w[i] * (x[i] - s.input_zp);
      }
      dot = MultiplyByQuantizedMultiplier(dot, s.feature_mult);
      state[(b * s.filters + f) * s.memory + s.memory - 1] =
          static_cast<int16_t>(std::min(32767, std::max(-32768, dot)));
    }
  }
  const int64_t units = s.filters / s.rank;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t u = 0; u < units; ++u) {
      // TFLite accumulates in int32 and wraps on overflow (int16 x int16
      // products over the whole memory can exceed it); unsigned arithmetic
      // gives the same bits without undefined behaviour.
      uint32_t sum = bias != nullptr ? static_cast<uint32_t>(bias[u]) : 0;
      for (int64_t r = 0; r < s.rank; ++r) {
        const int64_t f = u * s.rank + r;
        const int16_t* w = wt + f * s.memory;
        const int16_t* st = state + (b * s.filters + f) * s.memory;
        for (int64_t m = 0; m < s.memory; ++m) {
          sum += static_cast<uint32_t>(int32_t{w[m]} * st[m]);
        }
      }
      const int32_t v = MultiplyByQuantizedMultiplier(static_cast<int32_t>(sum),
                                                      s.output_mult) +
                        s.output_zp;
      out[b * units + u] =
          static_cast<int8_t>(std::min(s.act_max, std::max(s.act_min, v)));
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareSvdfQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 5, 5, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* wf, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* wt, RequiredInput(ctx, 2));
  const Tensor* bias = ctx.input(3);
  GRAFT_ASSIGN_OR_RETURN(const Tensor* state, RequiredInput(ctx, 4));
  const Tensor& out = *ctx.output(0);
  if (in->type != tfl::TensorType_INT8 || wf->type != tfl::TensorType_INT8 ||
      out.type != tfl::TensorType_INT8 ||
      (bias != nullptr && bias->type != tfl::TensorType_INT32) ||
      !IsQuantized(*in) || !IsQuantized(*wf) || !IsQuantized(*wt) ||
      !IsQuantized(*state) || !IsQuantized(out)) {
    return ctx.Unsupported();
  }
  // TFLite (unlike tflite-micro) hands both to EvalIntegerSVDF as int16_t*
  // whatever their type: an INT8 state is shifted and written as INT16,
  // over twice its bytes, and INT8 time weights are read past their end.
  if (wt->type != tfl::TensorType_INT16 ||
      state->type != tfl::TensorType_INT16) {
    return ctx.Unsupported(absl::StrFormat(
        "integer SVDF with %s time weights and %s state (TFLite's kernel "
        "reads both as INT16, out of bounds when INT8: no defined result)",
        TensorTypeName(wt->type), TensorTypeName(state->type)));
  }
  const auto* o = ctx.op().builtin_options.AsSVDFOptions();
  GRAFT_KERNEL_CHECK(o != nullptr && o->rank > 0, "SVDF needs a rank > 0");
  GRAFT_KERNEL_CHECK(in->rank() == 2 && wf->rank() == 2 && wt->rank() == 2,
                     "input and weights must be 2-D, got %s, %s, %s",
                     ShapeToString(in->shape), ShapeToString(wf->shape),
                     ShapeToString(wt->shape));
  auto* s = MakeState<SvdfQuantizedState>(ctx);
  s->batch = in->dim(0), s->input_size = in->dim(1);
  s->filters = wf->dim(0), s->memory = wt->dim(1), s->rank = o->rank;
  GRAFT_KERNEL_CHECK(wf->dim(1) == s->input_size && wt->dim(0) == s->filters &&
                         s->filters % s->rank == 0,
                     "weights %s and %s do not fit input %s and rank %d",
                     ShapeToString(wf->shape), ShapeToString(wt->shape),
                     ShapeToString(in->shape), s->rank);
  const int32_t units = static_cast<int32_t>(s->filters / s->rank);
  GRAFT_KERNEL_CHECK(bias == nullptr || bias->num_elements() == units,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, units);
  GRAFT_KERNEL_CHECK(
      state->rank() == 2 && state->dim(0) == s->batch &&
          state->dim(1) == s->memory * s->filters,
      "state '%s' is %s, expected [%d, %d]", state->name,
      ShapeToString(state->shape), s->batch, s->memory * s->filters);
  GRAFT_KERNEL_CHECK(!state->constant,
                     "state '%s' must be a variable tensor", state->name);
  GRAFT_KERNEL_CHECK(ZeroPoint(*state) == 0 && ZeroPoint(*wt) == 0 &&
                         ZeroPoint(*wf) == 0,
                     "weights and state need zero points of 0");
  s->input_zp = ZeroPoint(*in);
  s->output_zp = ZeroPoint(out);
  // As TFLite: the scale products in float, widened to double.
  s->feature_mult = QuantizeMultiplier(
      static_cast<double>(Scale(*in) * Scale(*wf) / Scale(*state)));
  s->output_mult = QuantizeMultiplier(
      static_cast<double>(Scale(*state) * Scale(*wt) / Scale(out)));
  TypeRange(tfl::TensorType_INT8, &s->act_min, &s->act_max);
  ctx.SetEval(EvalSvdfQuantized);
  ctx.SetReductionLength(std::max(s->input_size, s->memory * s->rank));
  return ctx.SetOutputShape(0, {static_cast<int32_t>(s->batch), units});
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Svdf);
GRAFT_DEFINE_KERNEL(SvdfQuantized);

}  // namespace graft
