#include "dispatch/kernels/quantization_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace graft::kernels {

QuantizedMultiplier QuantizeMultiplier(double real_multiplier) {
  QuantizedMultiplier m;
  if (real_multiplier == 0.0) return m;
  int shift = 0;
  const double q = std::frexp(real_multiplier, &shift);
  // TfLiteRound is std::round: half away from zero.
  int64_t q_fixed = static_cast<int64_t>(std::round(q * (1ll << 31)));
  if (q_fixed == (1ll << 31)) {
    q_fixed /= 2;
    ++shift;
  }
  if (shift < -31) {
    shift = 0;
    q_fixed = 0;
  }
  if (shift > 30) {
    shift = 30;
    q_fixed = (1ll << 31) - 1;
  }
  m.multiplier = static_cast<int32_t>(q_fixed);
  m.shift = shift;
  return m;
}

std::vector<QuantizedMultiplier> PerChannelMultipliers(const Tensor& input,
                                                       const Tensor& filter,
                                                       const Tensor& output,
                                                       int channels) {
  const auto& scales = filter.quantization->scale;
  const double in_scale = Scale(input);
  const double out_scale = Scale(output);
  std::vector<QuantizedMultiplier> m(channels);
  for (int c = 0; c < channels; ++c) {
    const double fs = scales.size() == 1 ? scales[0] : scales[c];
    m[c] = QuantizeMultiplier(in_scale * fs / out_scale);
  }
  return m;
}

void TypeRange(tfl::TensorType type, int32_t* out_min, int32_t* out_max) {
  switch (type) {
    case tfl::TensorType_INT8: *out_min = -128, *out_max = 127; break;
    case tfl::TensorType_UINT8: *out_min = 0, *out_max = 255; break;
    case tfl::TensorType_INT16: *out_min = -32768, *out_max = 32767; break;
    default:
      *out_min = std::numeric_limits<int32_t>::min();
      *out_max = std::numeric_limits<int32_t>::max();
  }
}

absl::Status ActivationRangeQuantized(tfl::ActivationFunctionType act,
                                      tfl::TensorType type, float scale,
                                      int32_t zero_point, int32_t* out_min,
                                      int32_t* out_max) {
  int32_t qmin, qmax;
  TypeRange(type, &qmin, &qmax);
  // As TFLite: the float quotient, rounded half away from zero, clamped to
  // the type. A quotient past int32 (a scale below about 1e-9), where
  // TFLite's cast is undefined, clamps too instead of wrapping into an
  // empty range.
  auto quantize = [&](float f) {
    const double q = std::clamp<double>(std::round(f / scale), -(1LL << 40),
                                        1LL << 40);
    return static_cast<int32_t>(std::clamp<int64_t>(
        zero_point + static_cast<int64_t>(q), qmin, qmax));
  };
  switch (act) {
    case tfl::ActivationFunctionType_NONE:
      *out_min = qmin, *out_max = qmax;
      return absl::OkStatus();
    case tfl::ActivationFunctionType_RELU:
      *out_min = quantize(0.0f), *out_max = qmax;
      return absl::OkStatus();
    case tfl::ActivationFunctionType_RELU6:
      *out_min = quantize(0.0f);
      *out_max = quantize(6.0f);
      return absl::OkStatus();
    case tfl::ActivationFunctionType_RELU_N1_TO_1:
      *out_min = quantize(-1.0f);
      *out_max = quantize(1.0f);
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "fused activation %d is not supported on quantized ops",
          static_cast<int>(act)));
  }
}

bool HasPerChannelScales(const Tensor& t, int channels, int dim) {
  if (t.quantization == nullptr) return false;
  const auto& s = t.quantization->scale;
  if (s.size() != 1 &&
      (static_cast<int>(s.size()) != channels ||
       t.quantization->quantized_dimension != dim)) {
    return false;
  }
  for (float v : s) {
    if (!(v > 0)) return false;
  }
  return true;
}

QuantizedMultiplier InvSqrtMultiplier(int32_t input) {
  if (input <= 1) return {std::numeric_limits<int32_t>::max(), 0};
  int shift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++shift;
  }
  const int pairs = (__builtin_clz(static_cast<uint32_t>(input)) - 1) / 2 - 1;
  shift -= pairs;
  input <<= 2 * pairs;
  const int32_t half_input = RoundingDivideByPOT(input >> 1, 1);  // Q3.28
  constexpr int32_t kHalfThree = (1 << 28) + (1 << 27);  // 1.5 in Q3.28
  int32_t x = 1 << 28;                                   // 1.0
  for (int i = 0; i < 5; ++i) {
    // x3 = x^3 (Q9.22 -> Q3.28); x = 1.5 x - (input / 2) x3 (Q6.25 ->
    // Q3.28), the difference wrapping as gemmlowp's int32 arithmetic does.
    const int32_t x3 = SaturatingShiftLeft(
        SaturatingRoundingDoublingHighMul(
            SaturatingRoundingDoublingHighMul(x, x), x),
        6);
    const uint32_t diff =
        static_cast<uint32_t>(SaturatingRoundingDoublingHighMul(kHalfThree, x)) -
        static_cast<uint32_t>(SaturatingRoundingDoublingHighMul(half_input, x3));
    x = SaturatingShiftLeft(static_cast<int32_t>(diff), 3);
  }
  x = SaturatingRoundingDoublingHighMul(x, 1518500250);  // * sqrt(2) / 2
  if (shift < 0) {
    x = static_cast<int32_t>(static_cast<uint32_t>(x) << -shift);
    shift = 0;
  }
  return {x, -shift};
}

}  // namespace graft::kernels
