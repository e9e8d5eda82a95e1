// Integer LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM with TFLite's semantics
// (lstm_eval's 8x8->16 integer step): INT8 input, output and output state,
// INT8 weights (zero point 0), INT32 biases, INT16 cell state whose scale is
// a power of two 2^cell_scale, optional INT16 peephole weights and layer-norm
// coefficients, optional INT8 projection with INT32 bias. Per step, for each
// gate g in {i, f, z, o} (i absent with CIFG):
//
//   g = sat16(rescale(W_g x) + rescale(R_g h) [+ rescale(P_g . c)])  in Q3.12
//   g = layer_norm_g(g)                                  (layer-norm LSTMs)
//   i, f, o = sigmoid(g), z = tanh(g)   gemmlowp fixed point, Q3.12 -> Q0.15
//   c' = sat16(f*c >> 15  +  i*z >> (30 + cell_scale)), clipped to cell_clip
//   hidden = sat8(rescale(o * tanh(c')) + hidden zero point)
//   h' = sat8(rescale(W_proj hidden) + h zero point), clipped   (projection)
//
// where every rescale is a fixed-point multiplier computed at load from the
// tensors' scales (TFLite's PopulateQuantizedLstmParams8x8_16), the input and
// output-state zero points are folded into per-row biases (zero point times
// the weight row sums, plus the gate bias unless layer norm adds it later),
// and without layer norm the gates' pre-activations have the fixed scale
// 2^-12. The op's intermediate tensors carry the remaining scales: the four
// layer-normalized gates' (layer-norm LSTMs) and the hidden value's (index
// 4, always present). Without projection the hidden value is the new output
// state. The states (inputs 18 and 19) are variable tensors updated in place.
//
// TFLite's quirks are kept so results are bit-exact: the peephole product
// runs over n_output elements per batch row (n_output == n_cell in practice;
// larger is refused), with projection the hidden value is quantized with the
// negated zero point and the projection bias carries +zero point times the
// row sums, and sums wrap like TFLite's int32 arithmetic.
//
// Refused at load (ctx.Unsupported): hybrid LSTMs (float activations, int8
// weights), INT16 activations, the 8x8->8 form (12 intermediates), per-channel
// or asymmetric weights, diagonal recurrent weights, cell-state scales that are
// not a power of two within TFLite's tanh range.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/lstm_shared.h"
#include "dispatch/kernels/quantization_util.h"

namespace graft {
namespace kernels {
namespace {

// ---- gemmlowp's 16-bit fixed point, as TFLite's integer LSTM uses it ----

int16_t Saturate16(int32_t v) {
  return static_cast<int16_t>(std::min(32767, std::max(-32768, v)));
}
int8_t Saturate8(int32_t v) {
  return static_cast<int8_t>(std::min(127, std::max(-128, v)));
}
// gemmlowp's raw int16 arithmetic wraps (Add, Sub, Neg on int16).
int16_t Wrap16(int32_t v) { return static_cast<int16_t>(v); }

int16_t SaturatingRoundingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) return 32767;
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}

int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  const int32_t mask = (1 << exponent) - 1;
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int16_t>((x >> exponent) +
                              (remainder > threshold ? 1 : 0));
}

// gemmlowp's SaturatingRoundingMultiplyByPOT<exponent> on int16.
int16_t MultiplyByPOT16(int16_t x, int exponent) {
  if (exponent < 0) return RoundingDivideByPOT16(x, -exponent);
  if (exponent == 0) return x;
  const int32_t threshold = (1 << (15 - exponent)) - 1;
  if (x > threshold) return 32767;
  if (x < -threshold) return -32768;
  return Wrap16(int32_t{x} * (1 << exponent));
}

// A Q0.31 constant rounded to Q0.15 (gemmlowp's RescaleConstantInitializer).
int16_t Constant16(int32_t q31) {
  return static_cast<int16_t>(RoundingDivideByPOT(q31, 16));
}

// exp(a) for a in [-1/4, 0), Q0.15.
int16_t ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl16(int16_t a) {
  const int16_t constant_term = Constant16(1895147668);  // exp(-1/8)
  const int16_t one_third = Constant16(715827883);
  const int16_t x = Wrap16(a + (1 << 12));  // a + 1/8
  const int16_t x2 = SaturatingRoundingDoublingHighMul16(x, x);
  const int16_t x3 = SaturatingRoundingDoublingHighMul16(x2, x);
  const int16_t x4 = SaturatingRoundingDoublingHighMul16(x2, x2);
  const int16_t x4_over_4 = RoundingDivideByPOT16(x4, 2);
  const int16_t poly =
      RoundingDivideByPOT16(Wrap16(SaturatingRoundingDoublingHighMul16(
                                       Wrap16(x4_over_4 + x3), one_third) +
                                   x2),
                            1);
  return Saturate16(constant_term + SaturatingRoundingDoublingHighMul16(
                                        constant_term, Wrap16(x + poly)));
}

// exp(a) for a <= 0 in Q(integer_bits).(15 - integer_bits); Q0.15 out.
int16_t ExpOnNegativeValues16(int16_t a, int integer_bits) {
  const int fractional_bits = 15 - integer_bits;
  const int16_t one_quarter = static_cast<int16_t>(1 << (fractional_bits - 2));
  const int16_t mask = static_cast<int16_t>(one_quarter - 1);
  const int16_t a_mod_quarter_minus_one_quarter =
      Wrap16((a & mask) - one_quarter);
  int16_t result = ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl16(
      MultiplyByPOT16(a_mod_quarter_minus_one_quarter, integer_bits));
  const int16_t remainder = Wrap16(a_mod_quarter_minus_one_quarter - a);
  // exp(-2^e) for e = -2..4.
  static constexpr int32_t kMultipliers[7] = {
      1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int e = -2; e <= 4; ++e) {
    if (integer_bits <= e) break;
    if (remainder & (1 << (fractional_bits + e))) {
      result = SaturatingRoundingDoublingHighMul16(
          result, Constant16(kMultipliers[e + 2]));
    }
  }
  if (integer_bits > 5) {
    const int16_t clamp = Constant16(-(1 << (36 - integer_bits)));  // -32
    if (a < clamp) result = 0;
  }
  if (a == 0) result = 32767;
  return result;
}

// Newton-Raphson 1 / (1 + a) (or (1 - a) / (1 + a)) for a in (0, 1), Q0.15;
// the iterate is Q2.13.
int16_t NewtonReciprocalOnePlusX16(int16_t a) {
  const int16_t half_denominator = static_cast<int16_t>(
      (int32_t{a} + 32767 + (int32_t{a} + 32767 >= 0 ? 1 : -1)) / 2);
  const int16_t c48_17 = Constant16(1515870810);
  const int16_t cneg32_17 = Constant16(-1010580540);
  const int16_t one = 1 << 13;
  int16_t x = Wrap16(c48_17 + SaturatingRoundingDoublingHighMul16(
                                  half_denominator, cneg32_17));
  for (int i = 0; i < 3; ++i) {
    const int16_t hdx =
        SaturatingRoundingDoublingHighMul16(half_denominator, x);
    const int16_t one_minus = Wrap16(one - hdx);
    x = Wrap16(x + MultiplyByPOT16(
                       SaturatingRoundingDoublingHighMul16(x, one_minus), 2));
  }
  return x;
}

// gemmlowp::logistic on FixedPoint<int16, integer_bits>: Q0.15 out.
int16_t Logistic16(int16_t a, int integer_bits) {
  if (a == 0) return Constant16(1 << 30);  // 1/2
  const int16_t abs_a = a > 0 ? a : Wrap16(-a);
  const int16_t e = ExpOnNegativeValues16(Wrap16(-abs_a), integer_bits);
  // one_over_one_plus_x_for_x_in_0_1: x / 2 rescaled Q1.14 -> Q0.15.
  const int16_t positive = MultiplyByPOT16(NewtonReciprocalOnePlusX16(e), 1);
  return a > 0 ? positive : Wrap16(32767 - positive);
}

// gemmlowp::tanh on FixedPoint<int16, integer_bits>: Q0.15 out.
int16_t Tanh16(int16_t a, int integer_bits) {
  if (a == 0) return 0;
  const int16_t negative = a < 0 ? a : Wrap16(-a);
  // exp(2 * negative): the same raw value read with one more integer bit.
  const int16_t e = ExpOnNegativeValues16(negative, integer_bits + 1);
  // one_minus_x_over_one_plus_x_for_x_in_0_1: x - 1 rescaled Q2.13 -> Q0.15.
  const int16_t t =
      MultiplyByPOT16(Wrap16(NewtonReciprocalOnePlusX16(e) - (1 << 13)), 2);
  return a < 0 ? Wrap16(-t) : t;
}

// ---- the kernel ----

struct GateParams {
  bool present = false;
  int w_input = -1, w_recurrent = -1;  // input indices of the weights
  QuantizedMultiplier input_mult, recurrent_mult;
  // Zero point times row sums (plus the gate bias without layer norm).
  std::vector<int32_t> input_bias, recurrent_bias;
  int peephole = -1;  // input index of the INT16 peephole weights
  QuantizedMultiplier peephole_mult;
  int layer_norm = -1, bias = -1;  // INT16 coefficients, INT32 gate bias
  QuantizedMultiplier layer_norm_mult;
  int32_t variance_guard = 1;
};

struct QuantizedLstmState : KernelState {
  int64_t batch = 0, steps = 0, n_input = 0, n_cell = 0, n_output = 0;
  bool time_major = true;
  bool cifg = false, layer_norm = false;
  GateParams gates[4];
  int cell_scale = 0;  // log2 of the cell state's scale
  int16_t cell_clip = 0;
  int8_t proj_clip = 0;
  QuantizedMultiplier hidden_mult;
  int32_t hidden_zp = 0, output_state_zp = 0;
  int projection = -1;  // input index of the projection weights
  QuantizedMultiplier proj_mult;
  std::vector<int32_t> proj_bias;
};

// TFLite's MatrixBatchVectorMultiplyAccumulate (int8 x int8 -> T): for each
// row r of every batch row, out = sat(out + rescale(bias[r] + w[r] . x) + zp).
template <typename T>
void MatMulAccumulate(const int8_t* x, const int32_t* bias, const int8_t* w,
                      QuantizedMultiplier mult, int64_t n_batch, int64_t n_in,
                      int64_t n_out, int32_t zp, T* out) {
  constexpr int32_t lo = std::numeric_limits<T>::min();
  constexpr int32_t hi = std::numeric_limits<T>::max();
  for (int64_t b = 0; b < n_batch; ++b) {
    const int8_t* xb = x + b * n_in;
    T* ob = out + b * n_out;
    for (int64_t r = 0; r < n_out; ++r) {
      const int8_t* wr = w + r * n_in;
      int32_t acc = 0;
      for (int64_t k = 0; k < n_in; ++k) acc += int32_t{wr[k]} * xb[k];
      acc = static_cast<int32_t>(static_cast<uint32_t>(acc) +
                                 static_cast<uint32_t>(bias[r]));
      const int32_t v = MultiplyByQuantizedMultiplier(acc, mult) + zp + ob[r];
      ob[r] = static_cast<T>(std::min(hi, std::max(lo, v)));
    }
  }
}

// TFLite's integer ApplyLayerNorm of each batch row of `g`, in place.
void LayerNorm(const GateParams& p, const int16_t* w, const int32_t* bias,
               int64_t n_batch, int64_t n, int16_t* g) {
  for (int64_t b = 0; b < n_batch; ++b) {
    int16_t* row = g + b * n;
    int64_t sum = 0, sum_sq = 0;
    for (int64_t j = 0; j < n; ++j) {
      sum += row[j];
      sum_sq += int32_t{row[j]} * row[j];
    }
    const int32_t mean = static_cast<int32_t>(sum * 1024 / n);
    const int32_t temp = (1 << 20) / static_cast<int32_t>(n);
    const int64_t variance = sum_sq * temp - int64_t{mean} * mean;
    int32_t variance2 = static_cast<int32_t>(variance / (1 << 20));
    if (variance2 < 1) variance2 = p.variance_guard;
    const QuantizedMultiplier inv = InvSqrtMultiplier(variance2);
    for (int64_t j = 0; j < n; ++j) {
      const int32_t shifted = 1024 * row[j] - mean;
      const int32_t rescaled = MultiplyByQuantizedMultiplier(shifted, inv);
      // TFLite computes rescaled * w + bias in int32 (wrapping).
      const int64_t val3 =
          static_cast<int32_t>(static_cast<uint32_t>(rescaled) *
                                   static_cast<uint32_t>(int32_t{w[j]}) +
                               static_cast<uint32_t>(bias[j]));
      const int32_t val4 =
          static_cast<int32_t>((val3 > 0 ? val3 + 512 : val3 - 512) / 1024);
      const int32_t val5 = MultiplyByQuantizedMultiplier(
          val4, p.layer_norm_mult.multiplier, p.layer_norm_mult.shift + 12);
      row[j] = Saturate16(val5);
    }
  }
}

// One gate for n_batch rows (TFLite's CalculateLstmGateInteger8x8_16).
void ComputeGate(const EvalContext& ctx, const QuantizedLstmState& s, int gate,
                 const int8_t* x, const int8_t* h, const int16_t* c,
                 int64_t n_batch, int16_t* g) {
  const GateParams& p = s.gates[gate];
  const int64_t n = n_batch * s.n_cell;
  std::fill_n(g, n, int16_t{0});
  MatMulAccumulate(x, p.input_bias.data(), ctx.input(p.w_input)->data<int8_t>(),
                   p.input_mult, n_batch, s.n_input, s.n_cell, 0, g);
  MatMulAccumulate(h, p.recurrent_bias.data(),
                   ctx.input(p.w_recurrent)->data<int8_t>(), p.recurrent_mult,
                   n_batch, s.n_output, s.n_cell, 0, g);
  if (p.peephole >= 0) {
    // TFLite runs the peephole product over n_output elements per row.
    const int16_t* pw = ctx.input(p.peephole)->data<int16_t>();
    int16_t* out = g;
    const int16_t* cb = c;
    for (int64_t b = 0; b < n_batch; ++b) {
      for (int64_t v = 0; v < s.n_output; ++v) {
        const int32_t prod = MultiplyByQuantizedMultiplier(
            int32_t{pw[v]} * *cb++, p.peephole_mult);
        *out = Saturate16(prod + *out);
        ++out;
      }
    }
  }
  if (p.layer_norm >= 0) {
    LayerNorm(p, ctx.input(p.layer_norm)->data<int16_t>(),
              ctx.input(p.bias)->data<int32_t>(), n_batch, s.n_cell, g);
  }
  if (gate == kZ) {
    for (int64_t j = 0; j < n; ++j) g[j] = Tanh16(g[j], 3);
  } else {
    for (int64_t j = 0; j < n; ++j) g[j] = Logistic16(g[j], 3);
  }
}

int16_t CwiseMulShift(int16_t a, int16_t b, int shift) {
  return static_cast<int16_t>(RoundingDivideByPOT(int32_t{a} * b, shift));
}

// One step of n_batch contiguous rows (TFLite's LstmStepInteger8x8_16).
void Step(const EvalContext& ctx, const QuantizedLstmState& s, const int8_t* x,
          int8_t* h, int16_t* c, int8_t* out, int64_t n_batch,
          int16_t* scratch16, int8_t* hidden) {
  const int64_t n = n_batch * s.n_cell;
  int16_t* gi = scratch16;
  int16_t* gf = gi + n;
  int16_t* gz = gf + n;
  int16_t* go = gz + n;
  int16_t* tanh_c = go + n;
  if (!s.cifg) ComputeGate(ctx, s, kI, x, h, c, n_batch, gi);
  ComputeGate(ctx, s, kF, x, h, c, n_batch, gf);
  ComputeGate(ctx, s, kZ, x, h, c, n_batch, gz);
  const int input_shift = 30 + s.cell_scale;
  for (int64_t j = 0; j < n; ++j) {
    const int16_t kept = CwiseMulShift(gf[j], c[j], 15);
    const int16_t i = s.cifg ? Wrap16(32767 - gf[j]) : gi[j];
    const int16_t added = CwiseMulShift(i, gz[j], input_shift);
    int16_t v = Saturate16(int32_t{kept} + added);
    if (s.cell_clip > 0) {
      v = std::min<int16_t>(s.cell_clip, std::max<int16_t>(-s.cell_clip, v));
    }
    c[j] = v;
  }
  ComputeGate(ctx, s, kO, x, h, c, n_batch, go);
  for (int64_t j = 0; j < n; ++j) tanh_c[j] = Tanh16(c[j], 15 + s.cell_scale);
  if (s.projection >= 0) {
    for (int64_t j = 0; j < n; ++j) {
      hidden[j] = Saturate8(MultiplyByQuantizedMultiplier(
                                int32_t{go[j]} * tanh_c[j], s.hidden_mult) -
                            s.hidden_zp);
    }
    std::fill_n(h, n_batch * s.n_output, int8_t{0});
    MatMulAccumulate(hidden, s.proj_bias.data(),
                     ctx.input(s.projection)->data<int8_t>(), s.proj_mult,
                     n_batch, s.n_cell, s.n_output, s.output_state_zp, h);
    if (s.proj_clip > 0) {
      for (int64_t j = 0; j < n_batch * s.n_output; ++j) {
        h[j] =
            std::min<int8_t>(s.proj_clip, std::max<int8_t>(-s.proj_clip, h[j]));
      }
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      h[j] = Saturate8(MultiplyByQuantizedMultiplier(int32_t{go[j]} * tanh_c[j],
                                                     s.hidden_mult) +
                       s.hidden_zp);
    }
  }
  std::memcpy(out, h, n_batch * s.n_output);
}

absl::Status EvalQuantizedLstm(EvalContext& ctx) {
  const QuantizedLstmState& s = *ctx.state<QuantizedLstmState>();
  const int8_t* x = ctx.input(kInput)->data<int8_t>();
  // The states are variable tensors: the op updates them in place.
  int8_t* h = const_cast<int8_t*>(ctx.input(kOutputState)->data<int8_t>());
  int16_t* c = const_cast<int16_t*>(ctx.input(kCellState)->data<int16_t>());
  int8_t* out = ctx.output(0)->data<int8_t>();
  int16_t* scratch16 = ctx.scratch_as<int16_t>();
  int8_t* hidden =
      reinterpret_cast<int8_t*>(scratch16 + 5 * s.batch * s.n_cell);
  if (s.time_major) {
    for (int64_t t = 0; t < s.steps; ++t) {
      Step(ctx, s, x + t * s.batch * s.n_input, h, c,
           out + t * s.batch * s.n_output, s.batch, scratch16, hidden);
    }
  } else {
    // TFLite runs batch-major sequences one batch row at a time.
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t t = 0; t < s.steps; ++t) {
        const int64_t row = b * s.steps + t;
        Step(ctx, s, x + row * s.n_input, h + b * s.n_output, c + b * s.n_cell,
             out + row * s.n_output, 1, scratch16, hidden);
      }
    }
  }
  return absl::OkStatus();
}

bool HasOneScale(const Tensor& t) {
  return t.quantization != nullptr && t.quantization->scale.size() == 1 &&
         t.quantization->scale[0] > 0;
}

// TFLite's CheckedLog2: the scale as an exact power of two.
bool ExactLog2(float x, int* log2) {
  const float l = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(l);
  *log2 = static_cast<int>(rounded);
  return std::abs(l - rounded) < 1e-3f;
}

// Input i: must be present unless `optional`, of `type`, with `elements`
// elements (-1: any), constant unless it is a state.
absl::StatusOr<const Tensor*> TypedInput(const PrepareContext& ctx, int i,
                                         tfl::TensorType type, bool optional,
                                         Shape shape) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) {
    if (optional) return nullptr;
    return absl::InvalidArgumentError(
        absl::StrFormat("required input %d is missing", i));
  }
  if (t->type != type) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with %s input %d '%s' (expected %s)",
        TensorTypeName(t->type), i, t->name, TensorTypeName(type)));
  }
  if (t->shape != shape) {
    return absl::InvalidArgumentError(
        absl::StrFormat("input %d '%s' has shape %s, expected %s", i, t->name,
                        ShapeToString(t->shape), ShapeToString(shape)));
  }
  if (!t->constant) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with input %d '%s' computed at run time", i, t->name));
  }
  if (type != tfl::TensorType_INT32 && !HasOneScale(*t)) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with input %d '%s' not quantized per tensor", i, t->name));
  }
  if (type == tfl::TensorType_INT8 && ZeroPoint(*t) != 0) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with asymmetric weights (input %d '%s')", i, t->name));
  }
  return t;
}

// Zero point times each weight row's sum, plus `bias` when given (TFLite's
// PrecomputeZeroPointTimesWeightWithBias).
std::vector<int32_t> FoldedBias(const Tensor& w, int32_t zero_point,
                                const Tensor* bias) {
  const int64_t rows = w.dim(0), cols = w.dim(1);
  std::vector<int32_t> out(rows, 0);
  if (bias != nullptr) std::copy_n(bias->data<int32_t>(), rows, out.begin());
  const int8_t* m = w.data<int8_t>();
  for (int64_t r = 0; r < rows; ++r) {
    int32_t sum = 0;
    for (int64_t k = 0; k < cols; ++k) sum += m[r * cols + k];
    out[r] += sum * zero_point;
  }
  return out;
}

absl::Status PrepareQuantizedLstmCommon(PrepareContext& ctx, bool sequence) {
  GRAFT_KERNEL_CHECK(ctx.num_inputs() == 20 || ctx.num_inputs() == 24,
                     "expected 20 or 24 inputs, got %d", ctx.num_inputs());
  GRAFT_KERNEL_CHECK(ctx.num_outputs() == 1, "expected 1 output, got %d",
                     ctx.num_outputs());
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, kInput));
  const Tensor& out = *ctx.output(0);
  const Tensor* w_out = ctx.input(kInputToGate + kO);
  if (in->type != tfl::TensorType_INT8) {
    if (in->type == tfl::TensorType_FLOAT32 && w_out != nullptr &&
        w_out->type == tfl::TensorType_INT8) {
      return ctx.Unsupported("hybrid LSTM (FLOAT32 activations, INT8 weights)");
    }
    return ctx.Unsupported();
  }
  if (out.type != tfl::TensorType_INT8 || !HasOneScale(*in) ||
      !HasOneScale(out)) {
    return ctx.Unsupported(
        "INT8 LSTM without per-tensor quantized INT8 output");
  }
  auto s = std::make_unique<QuantizedLstmState>();
  float cell_clip = 0, proj_clip = 0;
  if (sequence) {
    const auto* o =
        ctx.op().builtin_options.AsUnidirectionalSequenceLSTMOptions();
    GRAFT_KERNEL_CHECK(o != nullptr,
                       "missing UnidirectionalSequenceLSTM options");
    if (o->diagonal_recurrent_tensors) {
      return ctx.Unsupported("INT8 LSTM with diagonal recurrent weights");
    }
    cell_clip = o->cell_clip, proj_clip = o->proj_clip;
    s->time_major = o->time_major;
    GRAFT_KERNEL_CHECK(in->rank() == 3, "input must be 3-D, got %s",
                       ShapeToString(in->shape));
    s->steps = in->dim(s->time_major ? 0 : 1);
    s->batch = in->dim(s->time_major ? 1 : 0);
    s->n_input = in->dim(2);
  } else {
    const auto* o = ctx.op().builtin_options.AsLSTMOptions();
    GRAFT_KERNEL_CHECK(o != nullptr, "missing LSTM options");
    if (o->kernel_type != tfl::LSTMKernelType_FULL) {
      return ctx.Unsupported("the BASIC LSTM kernel");
    }
    cell_clip = o->cell_clip, proj_clip = o->proj_clip;
    GRAFT_KERNEL_CHECK(in->rank() == 2, "input must be 2-D, got %s",
                       ShapeToString(in->shape));
    s->steps = 1;
    s->batch = in->dim(0);
    s->n_input = in->dim(1);
  }
  GRAFT_KERNEL_CHECK(cell_clip >= 0 && proj_clip >= 0,
                     "clip values must not be negative");
  const int num_intermediates = static_cast<int>(ctx.op().intermediates.size());
  if (num_intermediates == 12) {
    return ctx.Unsupported("the 8x8->8 integer LSTM (12 intermediates)");
  }
  if (num_intermediates != 5) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with %d intermediate tensors (TFLite's integer LSTM needs "
        "5)",
        num_intermediates));
  }

  GRAFT_ASSIGN_OR_RETURN(const Tensor* forget_w,
                         RequiredInput(ctx, kInputToGate + kF));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* forget_r,
                         RequiredInput(ctx, kRecurrentToGate + kF));
  GRAFT_KERNEL_CHECK(forget_w->rank() == 2, "weights must be 2-D");
  if (forget_r->rank() != 2) {
    return ctx.Unsupported("INT8 LSTM with diagonal recurrent weights");
  }
  s->n_cell = forget_w->dim(0);
  s->n_output = forget_r->dim(1);
  const int32_t nc = static_cast<int32_t>(s->n_cell);
  const int32_t ni = static_cast<int32_t>(s->n_input);
  const int32_t no = static_cast<int32_t>(s->n_output);
  s->cifg = ctx.input(kInputToGate + kI) == nullptr;
  s->layer_norm =
      ctx.num_inputs() == 24 && ctx.input(kLayerNorm + kF) != nullptr;

  // States.
  GRAFT_ASSIGN_OR_RETURN(const Tensor* h_state,
                         RequiredInput(ctx, kOutputState));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* c_state, RequiredInput(ctx, kCellState));
  if (h_state->type != tfl::TensorType_INT8 ||
      c_state->type != tfl::TensorType_INT16 || !HasOneScale(*h_state) ||
      !HasOneScale(*c_state)) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with %s output state and %s cell state (expected "
        "quantized INT8 and INT16)",
        TensorTypeName(h_state->type), TensorTypeName(c_state->type)));
  }
  // Variable tensors have their own storage from load on; other run-time
  // tensors get theirs only when memory is planned.
  GRAFT_KERNEL_CHECK(!h_state->constant && !c_state->constant &&
                         h_state->raw_data != nullptr &&
                         c_state->raw_data != nullptr,
                     "the state inputs must be variable tensors");
  GRAFT_KERNEL_CHECK(
      h_state->num_elements() == s->batch * s->n_output &&
          c_state->num_elements() == s->batch * s->n_cell,
      "state shapes %s and %s do not fit batch %d, output %d, cell %d",
      ShapeToString(h_state->shape), ShapeToString(c_state->shape), s->batch,
      s->n_output, s->n_cell);
  if (ZeroPoint(*c_state) != 0) {
    return ctx.Unsupported("INT8 LSTM with a cell state zero point");
  }
  if (!ExactLog2(Scale(*c_state), &s->cell_scale)) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with cell state scale %g (not a power of two)",
        Scale(*c_state)));
  }
  // tanh of the cell state reads it with 15 + cell_scale integer bits;
  // TFLite implements 0..6 (and the LSTM op requires cell_scale <= -9).
  if (s->cell_scale < -15 || s->cell_scale > -9) {
    return ctx.Unsupported(absl::StrFormat(
        "INT8 LSTM with cell state scale 2^%d (TFLite handles 2^-15..2^-9)",
        s->cell_scale));
  }
  s->output_state_zp = ZeroPoint(*h_state);

  // Intermediate scales: the layer-normalized gates' (else Q3.12) and the
  // hidden value's.
  float intermediate_scale[5];
  for (int g = 0; g < 4; ++g) {
    intermediate_scale[g] = static_cast<float>(std::pow(2, -12));
    if (!s->layer_norm || (s->cifg && g == kI)) continue;
    const Tensor* t = ctx.intermediate(g);
    if (t == nullptr || !HasOneScale(*t)) {
      return ctx.Unsupported(
          absl::StrFormat("INT8 LSTM with unquantized intermediate %d", g));
    }
    intermediate_scale[g] = Scale(*t);
  }
  const Tensor* hidden_t = ctx.intermediate(4);
  if (hidden_t == nullptr || !HasOneScale(*hidden_t)) {
    return ctx.Unsupported("INT8 LSTM with an unquantized hidden intermediate");
  }
  intermediate_scale[4] = Scale(*hidden_t);
  s->hidden_zp = ZeroPoint(*hidden_t);

  const float input_scale = Scale(*in);
  const float h_scale = Scale(*h_state);
  const int peephole_input[4] = {kCellToGate, kCellToGate + 1, -1,
                                 kCellToGate + 2};
  const bool peephole = ctx.input(kCellToGate + 2) != nullptr;
  for (int g = 0; g < 4; ++g) {
    GateParams& p = s->gates[g];
    if (g == kI && s->cifg) {
      GRAFT_KERNEL_CHECK(ctx.input(kRecurrentToGate + kI) == nullptr &&
                             ctx.input(kGateBias + kI) == nullptr,
                         "CIFG LSTM with input-gate recurrent weights or bias");
      continue;
    }
    p.present = true;
    p.w_input = kInputToGate + g;
    p.w_recurrent = kRecurrentToGate + g;
    GRAFT_ASSIGN_OR_RETURN(
        const Tensor* w,
        TypedInput(ctx, p.w_input, tfl::TensorType_INT8, false, {nc, ni}));
    GRAFT_ASSIGN_OR_RETURN(
        const Tensor* r,
        TypedInput(ctx, p.w_recurrent, tfl::TensorType_INT8, false, {nc, no}));
    GRAFT_ASSIGN_OR_RETURN(
        const Tensor* bias,
        TypedInput(ctx, kGateBias + g, tfl::TensorType_INT32, false, {nc}));
    // As TFLite: float products, rounded to float before QuantizeMultiplier.
    const float in_eff = Scale(*w) * input_scale / intermediate_scale[g];
    const float rec_eff = Scale(*r) * h_scale / intermediate_scale[g];
    p.input_mult = QuantizeMultiplier(in_eff);
    p.recurrent_mult = QuantizeMultiplier(rec_eff);
    p.input_bias =
        FoldedBias(*w, -ZeroPoint(*in), s->layer_norm ? nullptr : bias);
    p.recurrent_bias = FoldedBias(*r, -s->output_state_zp, nullptr);
    if (peephole && peephole_input[g] >= 0) {
      p.peephole = peephole_input[g];
      GRAFT_ASSIGN_OR_RETURN(
          const Tensor* pw,
          TypedInput(ctx, p.peephole, tfl::TensorType_INT16, false, {nc}));
      const float eff = static_cast<float>(std::pow(2, s->cell_scale) *
                                           Scale(*pw) / intermediate_scale[g]);
      p.peephole_mult = QuantizeMultiplier(eff);
    }
    if (s->layer_norm) {
      p.layer_norm = kLayerNorm + g;
      p.bias = kGateBias + g;
      GRAFT_ASSIGN_OR_RETURN(
          const Tensor* ln,
          TypedInput(ctx, p.layer_norm, tfl::TensorType_INT16, false, {nc}));
      p.layer_norm_mult = QuantizeMultiplier(Scale(*ln));
      p.variance_guard = std::max(1, static_cast<int32_t>(10000 * Scale(*ln)));
    }
  }
  if (peephole) {
    GRAFT_KERNEL_CHECK(ctx.input(kCellToGate + 1) != nullptr &&
                           (s->cifg || ctx.input(kCellToGate) != nullptr),
                       "peephole weights must be given for every gate or none");
    if (s->n_output > s->n_cell) {
      return ctx.Unsupported(
          "INT8 LSTM with peephole weights and a projection wider than the "
          "cell");
    }
  } else {
    GRAFT_KERNEL_CHECK(ctx.input(kCellToGate) == nullptr &&
                           ctx.input(kCellToGate + 1) == nullptr,
                       "peephole weights must be given for every gate or none");
  }

  // Hidden value and projection. TFLite takes the hidden scale from the
  // intermediate (2^-15 * 2^-15 / s in double, then float).
  s->hidden_mult = QuantizeMultiplier(static_cast<float>(
      std::pow(2, -15) / intermediate_scale[4] * std::pow(2, -15)));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* proj_w,
                         TypedInput(ctx, kProjectionWeights,
                                    tfl::TensorType_INT8, true, {no, nc}));
  GRAFT_ASSIGN_OR_RETURN(
      const Tensor* proj_b,
      TypedInput(ctx, kProjectionBias, tfl::TensorType_INT32, true, {no}));
  if (proj_w != nullptr) {
    s->projection = kProjectionWeights;
    s->proj_mult = QuantizeMultiplier(
        static_cast<float>(Scale(*proj_w) * intermediate_scale[4] / h_scale));
    s->proj_bias = FoldedBias(*proj_w, s->hidden_zp, proj_b);
  } else {
    GRAFT_KERNEL_CHECK(proj_b == nullptr && no == nc,
                       "without projection weights the output size (%d) must "
                       "equal the cell size (%d) and there is no projection "
                       "bias",
                       no, nc);
  }
  if (cell_clip > 0) {
    s->cell_clip = static_cast<int16_t>(
        std::min(std::max(cell_clip / Scale(*c_state), -32768.0f), 32767.0f));
  }
  if (proj_clip > 0) {
    s->proj_clip = static_cast<int8_t>(
        std::min(std::max(proj_clip / Scale(out), -128.0f), 127.0f));
  }

  // Scratch: five int16 buffers (four gates, tanh of the cell) and the int8
  // hidden value, each one step's rows.
  const int64_t rows = s->batch * s->n_cell;
  ctx.RequestScratch(sizeof(int16_t) * 5 * rows + rows);
  ctx.SetReductionLength(s->n_input + s->n_output +
                         (s->projection >= 0 ? s->n_cell : 0));
  return FinishLstmPrepare(ctx, *in, no, std::move(s), EvalQuantizedLstm);
}

absl::Status PrepareLstmQuantized(PrepareContext& ctx) {
  return PrepareQuantizedLstmCommon(ctx, /*sequence=*/false);
}
absl::Status PrepareUnidirectionalSequenceLstmQuantized(PrepareContext& ctx) {
  return PrepareQuantizedLstmCommon(ctx, /*sequence=*/true);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(LstmQuantized);
GRAFT_DEFINE_KERNEL(UnidirectionalSequenceLstmQuantized);

}  // namespace graft
