// Quantized activations with TFLite's integer semantics:
//
// - LEAKY_RELU INT8/UINT8/INT16: reference_ops::QuantizeLeakyRelu, two
//   quantized multipliers (identity and alpha) whose real values TFLite
//   computes in float.
// - LOGISTIC, TANH INT8/UINT8: the 256-entry table TFLite's default
//   (optimized) kernel builds by dequantize -> float function -> quantize
//   (LUTPopulate). TFLite's kReference variant (BUILTIN_REF resolver, and
//   TFLite Micro) evaluates gemmlowp's fixed-point logistic/tanh instead and
//   may differ from the table by 1 LSB.
// - HARD_SWISH INT8/UINT8: reference_ops::HardSwish's 16-bit fixed point.
// - GELU INT8/UINT8: TFLite's 256-entry table of its float GELU (erfc form,
//   or the tanh approximation).
// - RSQRT INT8: TFLite's RsqrtEvalQuantizedInt8, gemmlowp's fixed-point
//   inverse square root (GetInvSqrtQuantizedMultiplierExp) of x - zero
//   point, rescaled by 1 / (sqrt(input_scale) * output_scale), tabulated
//   at prepare; RSQRT INT16: TFLite's 513-entry interpolated table
//   (LUTPopulate<int16_t>, LUTLookup). Inputs below the zero point fail at
//   invoke, as in TFLite.
// - SOFTMAX INT16 -> INT16: reference_ops::SoftmaxInt16, exp and
//   1 / (1 + x) from LUTPopulate<int16_t> tables.
// - SOFTMAX INT8 -> INT8, INT8 -> INT16 and UINT8 -> UINT8: reference_ops::Softmax, gemmlowp
//   fixed-point exp with a 12-integer-bit accumulator (TFLite's kReference
//   path and TFLite Micro); the exp of each of the 256 possible diffs is
//   computed once at prepare. TFLite's default kernel uses a float exp table
//   and may differ by 1 LSB.
#include <cmath>
#include <cstdint>
#include <limits>

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

// Checks a unary quantized op: same quantized type in and out, of `types`.
absl::Status CheckUnary(PrepareContext& ctx, bool allow16,
                        const Tensor** out_in) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  const Tensor* out = ctx.output(0);
  if (!Is8Or16(in->type) || out->type != in->type || !IsQuantized(*in) ||
      !IsQuantized(*out) || (!allow16 && in->type == tfl::TensorType_INT16)) {
    return ctx.Unsupported();
  }
  *out_in = in;
  return ctx.SetOutputShape(0, in->shape);
}

// ---- LEAKY_RELU ----

struct LeakyReluState : KernelState {
  int32_t in_zp = 0, out_zp = 0;
  QuantizedMultiplier identity, alpha;
};

template <typename T>
absl::Status EvalLeakyRelu(EvalContext& ctx) {
  const auto& s = *ctx.state<LeakyReluState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int64_t n = ctx.input(0)->num_elements();
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  for (int64_t i = 0; i < n; ++i) {
    const int32_t x = static_cast<int32_t>(in[i]) - s.in_zp;
    const int32_t v =
        s.out_zp + MultiplyByQuantizedMultiplier(
                       x, x >= 0 ? s.identity : s.alpha);
    out[i] = static_cast<T>(std::min(kMax, std::max(kMin, v)));
  }
  return absl::OkStatus();
}

template <template <typename> class Eval>
void SetEvalByType(PrepareContext& ctx, tfl::TensorType t) {
  switch (t) {
    case tfl::TensorType_INT8: ctx.SetEval(Eval<int8_t>::Run); break;
    case tfl::TensorType_UINT8: ctx.SetEval(Eval<uint8_t>::Run); break;
    default: ctx.SetEval(Eval<int16_t>::Run); break;
  }
}

template <typename T>
struct LeakyReluEval {
  static absl::Status Run(EvalContext& ctx) { return EvalLeakyRelu<T>(ctx); }
};

absl::Status PrepareLeakyReluQuantized(PrepareContext& ctx) {
  const Tensor* in = nullptr;
  GRAFT_RETURN_IF_ERROR(CheckUnary(ctx, true, &in));
  const Tensor* out = ctx.output(0);
  const auto* o = ctx.op().builtin_options.AsLeakyReluOptions();
  const float alpha = o ? o->alpha : 0.0f;
  auto* s = MakeState<LeakyReluState>(ctx);
  s->in_zp = ZeroPoint(*in);
  s->out_zp = ZeroPoint(*out);
  // As TFLite: the real multipliers are float expressions.
  const float alpha_mult = Scale(*in) * alpha / Scale(*out);
  const float identity_mult = Scale(*in) / Scale(*out);
  s->alpha = QuantizeMultiplier(static_cast<double>(alpha_mult));
  s->identity = QuantizeMultiplier(static_cast<double>(identity_mult));
  SetEvalByType<LeakyReluEval>(ctx, in->type);
  return absl::OkStatus();
}

// ---- Table lookups (LOGISTIC, TANH) ----

struct LutState : KernelState {
  uint8_t table[256];
};

template <typename T>
absl::Status EvalLut(EvalContext& ctx) {
  const auto& s = *ctx.state<LutState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int64_t n = ctx.input(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    out[i] = static_cast<T>(s.table[static_cast<uint8_t>(in[i])]);
  }
  return absl::OkStatus();
}

// TFLite's LUTPopulate for 8-bit types.
template <typename T>
void PopulateTable(const Tensor& in, const Tensor& out, float (*f)(float),
                   uint8_t* table) {
  const float in_scale = Scale(in), out_scale = Scale(out);
  const int32_t in_zp = ZeroPoint(in), out_zp = ZeroPoint(out);
  const float inverse_scale = 1 / out_scale;
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  for (int32_t v = kMin; v <= kMax; ++v) {
    const float dequantized = in_scale * static_cast<float>(v - in_zp);
    const float transformed = f(dequantized);
    const float rescaled = std::round(transformed * inverse_scale);
    const int32_t q = static_cast<int32_t>(rescaled + static_cast<float>(out_zp));
    table[static_cast<uint8_t>(static_cast<T>(v))] =
        static_cast<uint8_t>(static_cast<T>(std::max(kMin, std::min(kMax, q))));
  }
}

absl::Status PrepareLut(PrepareContext& ctx, float (*f)(float)) {
  const Tensor* in = nullptr;
  GRAFT_RETURN_IF_ERROR(CheckUnary(ctx, false, &in));
  auto* s = MakeState<LutState>(ctx);
  if (in->type == tfl::TensorType_INT8) {
    PopulateTable<int8_t>(*in, *ctx.output(0), f, s->table);
    ctx.SetEval(EvalLut<int8_t>);
  } else {
    PopulateTable<uint8_t>(*in, *ctx.output(0), f, s->table);
    ctx.SetEval(EvalLut<uint8_t>);
  }
  return absl::OkStatus();
}

float LogisticF(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float TanhF(float x) { return std::tanh(x); }

absl::Status PrepareLogisticQuantized(PrepareContext& ctx) {
  return PrepareLut(ctx, LogisticF);
}
absl::Status PrepareTanhQuantized(PrepareContext& ctx) {
  return PrepareLut(ctx, TanhF);
}

// ---- HARD_SWISH ----

struct HardSwishState : KernelState {
  int32_t in_zp = 0, out_zp = 0;
  int16_t out_mult = 0, reluish_mult = 0;
  int out_exp = 0, reluish_exp = 0;
};

int16_t Srdhm16(int16_t a, int16_t b) {
  const bool overflow = a == b && a == std::numeric_limits<int16_t>::min();
  const int32_t ab = int32_t{a} * int32_t{b};
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  const int16_t high = static_cast<int16_t>((ab + nudge) / (1 << 15));
  return overflow ? std::numeric_limits<int16_t>::max() : high;
}
int16_t Sdhm16(int16_t a, int16_t b) {  // no rounding
  const bool overflow = a == b && a == std::numeric_limits<int16_t>::min();
  const int32_t ab = int32_t{a} * int32_t{b};
  const int16_t high = static_cast<int16_t>(ab / (1 << 15));
  return overflow ? std::numeric_limits<int16_t>::max() : high;
}
int16_t Rdbp16(int16_t x, int exponent) {
  const int16_t mask = static_cast<int16_t>((1 << exponent) - 1);
  const int16_t remainder = static_cast<int16_t>(x & mask);
  const int16_t threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}
int16_t SaturatingLeftShift16(int16_t v, int amount) {
  int32_t r = int32_t{v} * (1 << amount);
  r = std::min<int32_t>(r, std::numeric_limits<int16_t>::max());
  r = std::max<int32_t>(r, std::numeric_limits<int16_t>::min());
  return static_cast<int16_t>(r);
}
int16_t DownScaleToInt16(int32_t m) {
  constexpr int32_t kRound = 1 << 15;
  if (m >= std::numeric_limits<int32_t>::max() - kRound) {
    return std::numeric_limits<int16_t>::max();
  }
  return static_cast<int16_t>((m + kRound) >> 16);
}

template <typename T>
absl::Status EvalHardSwish(EvalContext& ctx) {
  const auto& s = *ctx.state<HardSwishState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int64_t n = ctx.input(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const int16_t x = static_cast<int16_t>(in[i] - s.in_zp);
    const int16_t hires = static_cast<int16_t>(x * (1 << 7));
    const int16_t preshift_out = Srdhm16(hires, s.out_mult);
    int16_t reluish = hires;
    if (s.reluish_exp > 0) reluish = SaturatingLeftShift16(reluish, s.reluish_exp - 1);
    reluish = Srdhm16(reluish, s.reluish_mult);
    if (s.reluish_exp > 0) reluish = SaturatingLeftShift16(reluish, 1);
    if (s.reluish_exp < 0) reluish = Rdbp16(reluish, -s.reluish_exp);
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
    const int16_t pre = Sdhm16(reluish, preshift_out);
    int16_t v = Rdbp16(pre, -s.out_exp);
    v = static_cast<int16_t>(v + s.out_zp);
    v = std::min<int16_t>(v, std::numeric_limits<T>::max());
    v = std::max<int16_t>(v, std::numeric_limits<T>::min());
    out[i] = static_cast<T>(v);
  }
  return absl::OkStatus();
}

absl::Status PrepareHardSwishQuantized(PrepareContext& ctx) {
  const Tensor* in = nullptr;
  GRAFT_RETURN_IF_ERROR(CheckUnary(ctx, false, &in));
  const Tensor* out = ctx.output(0);
  auto* s = MakeState<HardSwishState>(ctx);
  s->in_zp = ZeroPoint(*in);
  s->out_zp = ZeroPoint(*out);
  const float hires_input_scale = (1.0f / 128.0f) * Scale(*in);
  const float reluish_scale = 3.0f / 32768.0f;
  const float out_mult = hires_input_scale / Scale(*out);
  const QuantizedMultiplier om = QuantizeMultiplier(out_mult);
  s->out_mult = DownScaleToInt16(om.multiplier);
  s->out_exp = om.shift;
  if (s->out_exp > 0) {
    return ctx.Unsupported("HARD_SWISH with an output scale below input/128");
  }
  const float reluish_mult = hires_input_scale / reluish_scale;
  const QuantizedMultiplier rm = QuantizeMultiplier(reluish_mult);
  s->reluish_mult = DownScaleToInt16(rm.multiplier);
  s->reluish_exp = rm.shift;
  if (in->type == tfl::TensorType_INT8) {
    ctx.SetEval(EvalHardSwish<int8_t>);
  } else {
    ctx.SetEval(EvalHardSwish<uint8_t>);
  }
  return absl::OkStatus();
}

// ---- SOFTMAX (gemmlowp fixed point) ----

// gemmlowp::exp_on_interval_between_negative_one_quarter_and_0_excl (Q0.31).
int32_t ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(int32_t a) {
  const int32_t constant_term = 1895147668;     // exp(-1/8)
  const int32_t constant_1_over_3 = 715827883;  // 1/3
  const int32_t x = a + (1 << 28);              // a + 1/8
  const int32_t x2 = SaturatingRoundingDoublingHighMul(x, x);
  const int32_t x3 = SaturatingRoundingDoublingHighMul(x2, x);
  const int32_t x4 = SaturatingRoundingDoublingHighMul(x2, x2);
  const int32_t x4_over_4 = RoundingDivideByPOT(x4, 2);
  const int32_t poly = RoundingDivideByPOT(
      SaturatingRoundingDoublingHighMul(x4_over_4 + x3, constant_1_over_3) +
          x2,
      1);
  return constant_term +
         SaturatingRoundingDoublingHighMul(constant_term, x + poly);
}

// gemmlowp::exp_on_negative_values for a Q5.26 input; returns Q0.31.
int32_t ExpOnNegativeValuesQ5(int32_t a) {
  constexpr int kFractionalBits = 26;
  const int32_t one_quarter = 1 << (kFractionalBits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
  int32_t result = ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(
      SaturatingShiftLeft(a_mod_quarter_minus_one_quarter, 5));
  const int32_t remainder = a_mod_quarter_minus_one_quarter - a;
  static constexpr int32_t kMultipliers[7] = {
      1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int e = -2; e <= 4; ++e) {
    if (remainder & (1 << (kFractionalBits + e))) {
      result = SaturatingRoundingDoublingHighMul(result, kMultipliers[e + 2]);
    }
  }
  if (a == 0) result = std::numeric_limits<int32_t>::max();
  return result;
}

// gemmlowp::one_over_one_plus_x_for_x_in_0_1 (Q0.31 in and out).
int32_t OneOverOnePlusX(int32_t a) {
  const int64_t sum = int64_t{a} + std::numeric_limits<int32_t>::max();
  const int32_t half_denominator =
      static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
  const int32_t c48_17 = 1515870810;    // Q2.29
  const int32_t cneg32_17 = -1010580540;
  int32_t x = c48_17 + SaturatingRoundingDoublingHighMul(half_denominator,
                                                         cneg32_17);
  for (int i = 0; i < 3; ++i) {
    const int32_t hdx = SaturatingRoundingDoublingHighMul(half_denominator, x);
    const int32_t one_minus = (1 << 29) - hdx;
    x = x + SaturatingShiftLeft(SaturatingRoundingDoublingHighMul(x, one_minus),
                                2);
  }
  return SaturatingShiftLeft(x, 1);
}

int CountLeadingZeros32(uint32_t x) {
  return x == 0 ? 32 : __builtin_clz(x);
}

// TFLite's LUTPopulate<int16_t> (lut.h, in float): `f` sampled at 512
// steps over the input range [in_scale * (-32768 - in_zp), in_scale *
// (32767 - in_zp)], each sample biased by half the error of interpolating
// the step's midpoint, scaled to the output range; 513 entries.
template <typename F>
void PopulateInt16Lut(float in_scale, int32_t in_zp, float out_scale,
                      int32_t out_zp, F f, int16_t* table) {
  const float in_min = in_scale * (-32768 - in_zp);
  const float in_max = in_scale * (32767 - in_zp);
  const float out_min = out_scale * (-32768 - out_zp);
  const float out_max = out_scale * (32767 - out_zp);
  constexpr int kSteps = 512;
  const float step = (in_max - in_min) / kSteps;
  const float half_step = step / 2;
  const float inv = 65536.0f / (out_max - out_min);
  auto clamp = [](float v) {
    return static_cast<int16_t>(std::min(32767.0f, std::max(-32768.0f, v)));
  };
  for (int i = 0; i < kSteps; ++i) {
    const float val = f(in_min + i * step);
    const float val_mid = f(in_min + i * step + half_step);
    const float val_next = f(in_min + (i + 1) * step);
    const float sample = std::round(val * inv);
    const float mid_interp =
        std::round((val_next * inv + std::round(val * inv)) / 2);
    const float mid = std::round(val_mid * inv);
    const float bias = std::round((mid_interp - mid) / 2);
    table[i] = clamp(sample - bias);
  }
  table[kSteps] = clamp(std::round(f(in_max) * inv));
}

// TFLite's LUTLookup for int16: 512 segments of 128 inputs, linear in
// between (the slope held in int16, as there).
inline int16_t Int16LutLookup(const int16_t* table, int16_t v) {
  const int index = 256 + (v >> 7);
  const int offset = v & 0x7f;
  const int base = table[index];
  const int16_t slope = static_cast<int16_t>(table[index + 1] - table[index]);
  return static_cast<int16_t>(base + ((slope * offset + 64) >> 7));
}

struct SoftmaxQState : KernelState {
  int32_t input_multiplier = 0;
  int input_left_shift = 0;
  int32_t diff_min = 0;
  int64_t outer = 0, depth = 0;
  // exp_of[-diff]: the Q0.31 exp of the rescaled diff (x - row max) for the
  // 256 diffs 8-bit inputs can have (0 where diff < diff_min, never read),
  // computed at prepare with the same arithmetic eval would use.
  int32_t exp_of[256] = {};
};

template <typename T, typename Out = T>
absl::Status EvalSoftmaxQ(EvalContext& ctx) {
  const auto& s = *ctx.state<SoftmaxQState>();
  const T* in = ctx.input(0)->data<T>();
  Out* out = ctx.output(0)->data<Out>();
  constexpr int kAccumulationIntegerBits = 12;
  constexpr int32_t kMin = std::numeric_limits<Out>::min();
  constexpr int32_t kMax = std::numeric_limits<Out>::max();
  for (int64_t r = 0; r < s.outer; ++r) {
    const T* x = in + r * s.depth;
    Out* y = out + r * s.depth;
    int32_t max_in_row = std::numeric_limits<T>::min();
    for (int64_t c = 0; c < s.depth; ++c) max_in_row = std::max<int32_t>(max_in_row, x[c]);
    auto scaled_exp = [&](int32_t diff) { return s.exp_of[-diff]; };
    int32_t sum_of_exps = 0;  // Q12.19
    for (int64_t c = 0; c < s.depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      if (diff >= s.diff_min) {
        sum_of_exps += RoundingDivideByPOT(scaled_exp(diff),
                                           kAccumulationIntegerBits);
      }
    }
    // GetReciprocal.
    const int headroom_plus_one =
        CountLeadingZeros32(static_cast<uint32_t>(sum_of_exps));
    const int num_bits_over_unit = kAccumulationIntegerBits - headroom_plus_one;
    const int32_t shifted_sum_minus_one = static_cast<int32_t>(
        (static_cast<uint32_t>(sum_of_exps) << headroom_plus_one) -
        (static_cast<uint32_t>(1) << 31));
    const int32_t shifted_scale = OneOverOnePlusX(shifted_sum_minus_one);
    for (int64_t c = 0; c < s.depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      if (diff >= s.diff_min) {
        const int32_t e = scaled_exp(diff);
        const int32_t unsat = RoundingDivideByPOT(
            SaturatingRoundingDoublingHighMul(shifted_scale, e),
            num_bits_over_unit + 31 - static_cast<int>(sizeof(Out) * 8));
        const int32_t shifted = unsat + kMin;
        y[c] = static_cast<Out>(std::max(std::min(shifted, kMax), kMin));
      } else {
        y[c] = static_cast<Out>(kMin);
      }
    }
  }
  return absl::OkStatus();
}

// INT16 -> INT16: reference_ops::SoftmaxInt16. Per row: the diffs from the
// row's max rescaled so [-65535, 0] is [-10, 0], exp from a LUT (Q0.15),
// their sum's reciprocal from a 1 / (1 + x) LUT, each exp times it.
struct SoftmaxInt16State : KernelState {
  int32_t input_multiplier = 0;
  int input_left_shift = 0;
  int64_t outer = 0, depth = 0;
  int16_t exp_lut[513];
  int16_t one_over_one_plus_x_lut[513];
};

absl::Status EvalSoftmaxInt16(EvalContext& ctx) {
  const auto& s = *ctx.state<SoftmaxInt16State>();
  const int16_t* in = ctx.input(0)->data<int16_t>();
  int16_t* out = ctx.output(0)->data<int16_t>();
  // The row's exps, kept in the output row until rescaled.
  for (int64_t r = 0; r < s.outer; ++r) {
    const int16_t* x = in + r * s.depth;
    int16_t* y = out + r * s.depth;
    int16_t max_in_row = std::numeric_limits<int16_t>::min();
    for (int64_t c = 0; c < s.depth; ++c) max_in_row = std::max(max_in_row, x[c]);
    int32_t sum_of_exps = 0;  // Q16.15
    for (int64_t c = 0; c < s.depth; ++c) {
      const int32_t diff = static_cast<int32_t>(x[c]) - max_in_row;
      const int32_t scaled = MultiplyByQuantizedMultiplier(
          diff, s.input_multiplier, s.input_left_shift);
      const int32_t centered = std::min(std::max(scaled + 32767, -32768), 32767);
      y[c] = Int16LutLookup(s.exp_lut, static_cast<int16_t>(centered));
      sum_of_exps += y[c];
    }
    const int headroom_plus_one =
        CountLeadingZeros32(static_cast<uint32_t>(sum_of_exps));
    const int32_t shifted_sum = static_cast<int32_t>(
        ((static_cast<int64_t>(sum_of_exps) << (headroom_plus_one - 1)) +
         (1 << 13)) >>
        14);
    // 1 / (1 + x) on x = sum - 1, centered from [0, 65535] to [-32768, 32767].
    const int32_t centered_sum =
        std::min(std::max(shifted_sum - ((1 << 15) + (1 << 16)), -32768), 32767);
    const int16_t reciprocal = Int16LutLookup(
        s.one_over_one_plus_x_lut, static_cast<int16_t>(centered_sum));
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = int64_t{1} << (right_shift - 1);
    for (int64_t c = 0; c < s.depth; ++c) {
      const int32_t v = static_cast<int32_t>(
          (static_cast<int64_t>(y[c]) * reciprocal + round) >> right_shift);
      y[c] = static_cast<int16_t>(std::min(std::max(v, 0), 32767));
    }
  }
  return absl::OkStatus();
}

absl::Status PrepareSoftmaxInt16(PrepareContext& ctx, const Tensor& in) {
  const Tensor& out = *ctx.output(0);
  GRAFT_KERNEL_CHECK(ZeroPoint(in) == 0 && ZeroPoint(out) == 0,
                     "INT16 SOFTMAX needs zero points of 0");
  GRAFT_KERNEL_CHECK(in.rank() >= 1, "SOFTMAX needs a rank >= 1 input");
  const auto* o = ctx.op().builtin_options.AsSoftmaxOptions();
  const float beta = o ? o->beta : 1.0f;
  auto* s = MakeState<SoftmaxInt16State>(ctx);
  // As TFLite's Prepare: exp over [-10, 0], 1 / (1 + x) over [0, 1].
  constexpr double kRange = 65535;
  PopulateInt16Lut(
      static_cast<float>(10.0 / kRange), 32767, static_cast<float>(2.0 / kRange),
      0, [](float v) { return std::exp(v); }, s->exp_lut);
  PopulateInt16Lut(
      static_cast<float>(1.0 / kRange), -32768,
      static_cast<float>(2.0 / kRange), 0,
      [](float v) { return 1.0f / (1.0f + v); }, s->one_over_one_plus_x_lut);
  const QuantizedMultiplier m =
      QuantizeMultiplier(Scale(in) * beta / (10.0 / kRange));
  s->input_multiplier = m.multiplier;
  s->input_left_shift = m.shift;
  s->depth = in.shape.back();
  s->outer = s->depth == 0 ? 0 : in.num_elements() / s->depth;
  ctx.SetEval(EvalSoftmaxInt16);
  ctx.SetReductionLength(s->depth);
  return ctx.SetOutputShape(0, in.shape);
}

absl::Status PrepareSoftmaxQuantized(PrepareContext& ctx) {
  const Tensor* in = nullptr;
  if (ctx.num_inputs() == 1 && ctx.input(0) != nullptr &&
      ctx.input(0)->type == tfl::TensorType_INT16) {
    GRAFT_RETURN_IF_ERROR(CheckUnary(ctx, true, &in));
    return PrepareSoftmaxInt16(ctx, *in);
  }
  // INT8 -> INT16 (TFLite's int16 output variant) or same-type 8-bit.
  const bool to16 = ctx.num_inputs() == 1 && ctx.input(0) != nullptr &&
                    ctx.input(0)->type == tfl::TensorType_INT8 &&
                    ctx.output(0)->type == tfl::TensorType_INT16;
  if (to16) {
    GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
    in = ctx.input(0);
    if (!IsQuantized(*in) || !IsQuantized(*ctx.output(0))) {
      return ctx.Unsupported();
    }
    GRAFT_RETURN_IF_ERROR(ctx.SetOutputShape(0, in->shape));
  } else {
    GRAFT_RETURN_IF_ERROR(CheckUnary(ctx, false, &in));
  }
  GRAFT_KERNEL_CHECK(in->rank() >= 1, "SOFTMAX needs a rank >= 1 input");
  const auto* o = ctx.op().builtin_options.AsSoftmaxOptions();
  const double beta = o ? o->beta : 1.0;
  auto* s = MakeState<SoftmaxQState>(ctx);
  constexpr int kScaledDiffIntegerBits = 5;
  // PreprocessSoftmaxScaling.
  const double real = std::min<double>(
      beta * static_cast<double>(Scale(*in)) *
          static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
      (1ll << 31) - 1.0);
  const QuantizedMultiplier m = QuantizeMultiplier(real);
  s->input_multiplier = m.multiplier;
  s->input_left_shift = m.shift;
  // CalculateInputRadius(5, left_shift, 31).
  const double max_input_rescaled =
      1.0 * ((1 << kScaledDiffIntegerBits) - 1) *
      (1ll << (31 - kScaledDiffIntegerBits)) /
      (1ll << s->input_left_shift);
  s->diff_min = -static_cast<int32_t>(std::floor(max_input_rescaled));
  for (int32_t d = 0; d < 256 && -d >= s->diff_min; ++d) {
    s->exp_of[d] = ExpOnNegativeValuesQ5(SaturatingRoundingDoublingHighMul(
        -d * (1 << s->input_left_shift), s->input_multiplier));
  }
  s->depth = in->shape.back();
  s->outer = s->depth == 0 ? 0 : in->num_elements() / s->depth;
  if (to16) {
    ctx.SetEval(EvalSoftmaxQ<int8_t, int16_t>);
  } else if (in->type == tfl::TensorType_INT8) {
    ctx.SetEval(EvalSoftmaxQ<int8_t>);
  } else {
    ctx.SetEval(EvalSoftmaxQ<uint8_t>);
  }
  ctx.SetReductionLength(s->depth);
  return absl::OkStatus();
}

// ---- GELU ----

float GeluF(float x) {
  constexpr double kSqrtHalf = 0.70710678118654752440;
  return 0.5f * x * std::erfc(x * static_cast<float>(-kSqrtHalf));
}
float GeluApproximateF(float x) {
  constexpr float kSqrt2OverPi = 1.12837916709551257390 * 0.70710678118654752440;
  return 0.5f * x * (1.f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

absl::Status PrepareGeluQuantized(PrepareContext& ctx) {
  const auto* o = ctx.op().builtin_options.AsGeluOptions();
  return PrepareLut(ctx, o && o->approximate ? GeluApproximateF : GeluF);
}

// ---- RSQRT ----

struct RsqrtState : KernelState {
  int32_t in_zp = 0;
  int16_t table[513];  // INT8: 256 outputs by input byte; INT16: LUTPopulate
};

absl::Status EvalRsqrtInt8(EvalContext& ctx) {
  const auto& s = *ctx.state<RsqrtState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  const int64_t n = ctx.input(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    if (in[i] < s.in_zp) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "RSQRT input %d is below the zero point %d (a negative value)",
          in[i], s.in_zp));
    }
    out[i] = static_cast<int8_t>(s.table[static_cast<uint8_t>(in[i])]);
  }
  return absl::OkStatus();
}

absl::Status EvalRsqrtInt16(EvalContext& ctx) {
  const auto& s = *ctx.state<RsqrtState>();
  const int16_t* in = ctx.input(0)->data<int16_t>();
  int16_t* out = ctx.output(0)->data<int16_t>();
  const int64_t n = ctx.input(0)->num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const int16_t v = in[i];
    if (v < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "RSQRT input %d is negative", v));
    }
    out[i] = Int16LutLookup(s.table, v);
  }
  return absl::OkStatus();
}

absl::Status PrepareRsqrtQuantized(PrepareContext& ctx) {
  const Tensor* in = nullptr;
  GRAFT_RETURN_IF_ERROR(CheckUnary(ctx, true, &in));
  const Tensor& out = *ctx.output(0);
  const float in_scale = Scale(*in), out_scale = Scale(out);
  auto* s = MakeState<RsqrtState>(ctx);
  s->in_zp = ZeroPoint(*in);
  if (in->type == tfl::TensorType_INT8) {
    const QuantizedMultiplier m =
        QuantizeMultiplier(1. / (std::sqrt(in_scale) * out_scale));
    const int32_t out_zp = ZeroPoint(out);
    constexpr int kShift = 20;
    for (int v = -128; v <= 127; ++v) {
      const int32_t value = v - s->in_zp;
      int32_t q = 127;  // 0 (and below, refused at invoke) maps to the max
      if (value > 0) {
        const QuantizedMultiplier inv = InvSqrtMultiplier(value);
        const int32_t data =
            MultiplyByQuantizedMultiplier(1, inv.multiplier, inv.shift + kShift);
        q = MultiplyByQuantizedMultiplier(data, m.multiplier, m.shift - kShift) +
            out_zp;
      }
      s->table[static_cast<uint8_t>(v)] =
          static_cast<int16_t>(std::min(127, std::max(-128, q)));
    }
    ctx.SetEval(EvalRsqrtInt8);
    return absl::OkStatus();
  }
  if (in->type != tfl::TensorType_INT16) return ctx.Unsupported();
  GRAFT_KERNEL_CHECK(s->in_zp == 0 && ZeroPoint(out) == 0,
                     "INT16 input and output need zero points of 0");
  // LUTPopulate<int16_t> of 1/sqrt(x) (x <= 0: the largest output), in
  // float as TFLite computes it.
  PopulateInt16Lut(
      in_scale, s->in_zp, out_scale, ZeroPoint(out),
      [&](float x) { return x <= 0.0f ? 32767 * out_scale : 1.0f / std::sqrt(x); },
      s->table);
  ctx.SetEval(EvalRsqrtInt16);
  return absl::OkStatus();
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(LeakyReluQuantized);
GRAFT_DEFINE_KERNEL(LogisticQuantized);
GRAFT_DEFINE_KERNEL(TanhQuantized);
GRAFT_DEFINE_KERNEL(HardSwishQuantized);
GRAFT_DEFINE_KERNEL(SoftmaxQuantized);
GRAFT_DEFINE_KERNEL(GeluQuantized);
GRAFT_DEFINE_KERNEL(RsqrtQuantized);

}  // namespace graft
