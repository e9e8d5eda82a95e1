// Quantized data movement that is not plain byte copying:
//
// - PAD (and PADV2 without a constant value) on INT8/UINT8/INT16 pads with
//   the output zero point (the quantized 0.0), as TFLite does.
// - CONCATENATION of INT8/UINT8/INT16 inputs whose scales or zero points
//   differ from the output's: TFLite's ConcatenationWithScaling,
//   q_out = round(q_in * s + b) + zp_out with s = s_in / s_out and
//   b = -zp_in * s computed in float. (TFLite itself runs this path for
//   UINT8 only and rejects differing INT8/INT16 scales at prepare; Graft
//   applies the same formula to them.) Inputs with the output's parameters
//   are copied.
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

bool Is8Or16(tfl::TensorType t) {
  return t == tfl::TensorType_INT8 || t == tfl::TensorType_UINT8 ||
         t == tfl::TensorType_INT16;
}

// ---- PAD ----

constexpr int kMaxPadRank = 6;

struct QPadState : KernelState {
  int rank = 0;
  int64_t in_dims[kMaxPadRank] = {}, out_dims[kMaxPadRank] = {};
  int64_t before[kMaxPadRank] = {};
  int32_t pad_value = 0;
};

template <typename T>
absl::Status EvalQPad(EvalContext& ctx) {
  const auto& s = *ctx.state<QPadState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int64_t out_n = ctx.output(0)->num_elements();
  std::fill(out, out + out_n, static_cast<T>(s.pad_value));
  const int r = s.rank;
  int64_t out_strides[kMaxPadRank];
  out_strides[r - 1] = 1;
  for (int d = r - 2; d >= 0; --d) {
    out_strides[d] = out_strides[d + 1] * s.out_dims[d + 1];
  }
  const int64_t inner = s.in_dims[r - 1];
  int64_t rows = 1;
  for (int d = 0; d < r - 1; ++d) rows *= s.in_dims[d];
  if (inner == 0) return absl::OkStatus();
  int64_t idx[kMaxPadRank] = {};
  for (int64_t row = 0; row < rows; ++row) {
    int64_t off = s.before[r - 1];
    for (int d = 0; d < r - 1; ++d) off += (idx[d] + s.before[d]) * out_strides[d];
    std::memcpy(out + off, in + row * inner, inner * sizeof(T));
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < s.in_dims[d]) break;
      idx[d] = 0;
    }
  }
  return absl::OkStatus();
}

absl::Status PreparePadQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* pads_t, RequiredInput(ctx, 1));
  const Tensor* out = ctx.output(0);
  if (!Is8Or16(in->type) || out->type != in->type || !IsQuantized(*in) ||
      ctx.input(2) != nullptr) {
    return ctx.Unsupported();
  }
  if (!SameQuantization(*in, *out)) {
    return ctx.Unsupported("PAD with different input and output scales");
  }
  if (!ctx.ValuesKnown(pads_t)) return ctx.DeferToRun();
  GRAFT_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ReadIntValues(*pads_t));
  const int rank = in->rank();
  GRAFT_KERNEL_CHECK(static_cast<int>(pads.size()) == 2 * rank,
                     "paddings hold %d values, expected %d", pads.size(),
                     2 * rank);
  GRAFT_KERNEL_CHECK(rank <= kMaxPadRank, "rank %d is above %d", rank,
                     kMaxPadRank);
  auto* s = MakeState<QPadState>(ctx);
  s->rank = std::max(rank, 1);
  s->in_dims[0] = s->out_dims[0] = 1;
  s->pad_value = ZeroPoint(*out);
  Shape shape;
  for (int d = 0; d < rank; ++d) {
    const int64_t b = pads[2 * d], a = pads[2 * d + 1];
    GRAFT_KERNEL_CHECK(b >= 0 && a >= 0, "negative padding on dim %d", d);
    s->in_dims[d] = in->dim(d);
    s->before[d] = b;
    s->out_dims[d] = in->dim(d) + b + a;
    shape.push_back(static_cast<int32_t>(s->out_dims[d]));
  }
  switch (in->type) {
    case tfl::TensorType_INT8: ctx.SetEval(EvalQPad<int8_t>); break;
    case tfl::TensorType_UINT8: ctx.SetEval(EvalQPad<uint8_t>); break;
    default: ctx.SetEval(EvalQPad<int16_t>); break;
  }
  return ctx.SetOutputShape(0, std::move(shape));
}

absl::Status PreparePadV2Quantized(PrepareContext& ctx) {
  return PreparePadQuantized(ctx);
}

// ---- CONCATENATION ----

struct QConcatState : KernelState {
  int64_t outer = 0;
  std::vector<int64_t> piece;  // elements per outer step, per input
  std::vector<bool> copy;      // same parameters as the output
  std::vector<float> scale, bias;
  int32_t out_zp = 0;
};

template <typename T>
absl::Status EvalQConcat(EvalContext& ctx) {
  const auto& s = *ctx.state<QConcatState>();
  T* out = ctx.output(0)->data<T>();
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  const int n = static_cast<int>(s.piece.size());
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int i = 0; i < n; ++i) {
      const int64_t len = s.piece[i];
      const T* in = ctx.input(i)->data<T>() + o * len;
      if (s.copy[i]) {
        std::memcpy(out, in, len * sizeof(T));
      } else {
        for (int64_t j = 0; j < len; ++j) {
          const int32_t v =
              static_cast<int32_t>(std::round(in[j] * s.scale[i] + s.bias[i])) +
              s.out_zp;
          out[j] = static_cast<T>(std::max(kMin, std::min(kMax, v)));
        }
      }
      out += len;
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareConcatenationQuantized(PrepareContext& ctx) {
  GRAFT_KERNEL_CHECK(ctx.num_inputs() >= 1 && ctx.num_outputs() == 1,
                     "expected at least 1 input and 1 output");
  GRAFT_ASSIGN_OR_RETURN(const Tensor* first, RequiredInput(ctx, 0));
  const Tensor* out = ctx.output(0);
  const tfl::TensorType t = first->type;
  if (!Is8Or16(t) || out->type != t || !IsQuantized(*out)) {
    return ctx.Unsupported();
  }
  const auto* o = ctx.op().builtin_options.AsConcatenationOptions();
  if (o && o->fused_activation_function != tfl::ActivationFunctionType_NONE) {
    return ctx.Unsupported("a fused activation on CONCATENATION");
  }
  const int rank = first->rank();
  GRAFT_ASSIGN_OR_RETURN(int axis, NormalizeAxis(o ? o->axis : 0, rank));
  Shape shape = first->shape;
  shape[axis] = 0;
  auto* s = MakeState<QConcatState>(ctx);
  s->outer = DimProduct(first->shape, 0, axis);
  const int64_t inner = DimProduct(first->shape, axis + 1, rank);
  s->out_zp = ZeroPoint(*out);
  const float inverse_out_scale = 1.f / Scale(*out);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, i));
    if (in->type != t || !IsQuantized(*in)) return ctx.Unsupported();
    GRAFT_KERNEL_CHECK(in->rank() == rank, "input %d has rank %d, expected %d",
                       i, in->rank(), rank);
    for (int d = 0; d < rank; ++d) {
      GRAFT_KERNEL_CHECK(d == axis || in->dim(d) == first->dim(d),
                         "input %d shape %s does not match input 0 %s", i,
                         ShapeToString(in->shape),
                         ShapeToString(first->shape));
    }
    shape[axis] += in->dim(axis);
    s->piece.push_back(in->dim(axis) * inner);
    const bool same = ZeroPoint(*in) == s->out_zp && Scale(*in) == Scale(*out);
    s->copy.push_back(same);
    const float scale = Scale(*in) * inverse_out_scale;
    s->scale.push_back(scale);
    s->bias.push_back(-ZeroPoint(*in) * scale);
  }
  switch (t) {
    case tfl::TensorType_INT8: ctx.SetEval(EvalQConcat<int8_t>); break;
    case tfl::TensorType_UINT8: ctx.SetEval(EvalQConcat<uint8_t>); break;
    default: ctx.SetEval(EvalQConcat<int16_t>); break;
  }
  return ctx.SetOutputShape(0, std::move(shape));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(PadQuantized);
GRAFT_DEFINE_KERNEL(PadV2Quantized);
GRAFT_DEFINE_KERNEL(ConcatenationQuantized);

}  // namespace graft
