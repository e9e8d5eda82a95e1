// TensorFlow Lite's integer quantization arithmetic, reproduced exactly so
// Graft's quantized kernels give TFLite's reference-kernel results bit for
// bit. Internal to dispatch/kernels/.
//
// Conventions (TFLite's): a real multiplier M is stored as a Q31 integer
// `multiplier` in [2^30, 2^31) and an exponent `shift` with
// M ~= multiplier * 2^(shift - 31); shift > 0 is a left shift. The rounding
// is the reference kernels' "double rounding" (gemmlowp's
// SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT), i.e. TFLite
// built without TFLITE_SINGLE_ROUNDING.
#ifndef GRAFT_DISPATCH_KERNELS_QUANTIZATION_UTIL_H_
#define GRAFT_DISPATCH_KERNELS_QUANTIZATION_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "core/model.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/tensor.h"

namespace graft::kernels {

// A quantized real multiplier.
struct QuantizedMultiplier {
  int32_t multiplier = 0;
  int shift = 0;
};

// TFLite's QuantizeMultiplier: frexp, round the mantissa to Q31 (with the
// carry into the exponent when it rounds up to 2^31), flush multipliers
// below 2^-31 to zero and saturate exponents above 30.
QuantizedMultiplier QuantizeMultiplier(double real_multiplier);

// gemmlowp's SaturatingRoundingDoublingHighMul: (a * b * 2) >> 32, rounded
// half away from zero, saturating the one overflow case (INT32_MIN^2).
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  const bool overflow = a == b && a == std::numeric_limits<int32_t>::min();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  const int32_t high = static_cast<int32_t>((ab + nudge) / (1ll << 31));
  return overflow ? std::numeric_limits<int32_t>::max() : high;
}

// gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded half away from
// zero.
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((1ll << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// TFLite's MultiplyByQuantizedMultiplier(int32_t, ...): x * M.
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier,
                                             int shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  return RoundingDivideByPOT(
      SaturatingRoundingDoublingHighMul(
          static_cast<int32_t>(static_cast<uint32_t>(x) << left_shift),
          multiplier),
      right_shift);
}
inline int32_t MultiplyByQuantizedMultiplier(int32_t x,
                                             QuantizedMultiplier m) {
  return MultiplyByQuantizedMultiplier(x, m.multiplier, m.shift);
}

// x * M rounded once: (x * multiplier + 2^(30 - shift)) >> (31 - shift) in
// 64 bits, i.e. half up, saturated to int32. This is TFLite's
// MultiplyByQuantizedMultiplier(int32_t, ...) as built with
// TFLITE_SINGLE_ROUNDING, and it is what ai-edge-litert's reference integer
// FULLY_CONNECTED (INT8 and UINT8, per-tensor and per-channel) computes:
// measured against the oracle, it differs from the double rounding above
// by one unit near ties (tests/reference "fully_connected_i8*", "_u8*").
// shift must lie in [-31, 30] (QuantizeMultiplier's range).
inline int32_t MultiplyByQuantizedMultiplierSingleRounding(int32_t x,
                                                           int32_t multiplier,
                                                           int shift) {
  const int total_shift = 31 - shift;
  const int64_t round = int64_t{1} << (total_shift - 1);
  const int64_t result =
      (static_cast<int64_t>(x) * static_cast<int64_t>(multiplier) + round) >>
      total_shift;
  return static_cast<int32_t>(std::clamp<int64_t>(
      result, std::numeric_limits<int32_t>::min(),
      std::numeric_limits<int32_t>::max()));
}

// TFLite's MultiplyByQuantizedMultiplier(int64_t, ...), used by the 16x8
// kernels' 64-bit accumulators: the multiplier is first rounded to Q15 and
// the product rounded once (half up). x must lie in [-2^47, 2^47).
inline int32_t MultiplyByQuantizedMultiplier(int64_t x, int32_t multiplier,
                                             int shift) {
  const int32_t reduced = multiplier < 0x7FFF0000
                              ? ((multiplier + (1 << 15)) >> 16)
                              : 0x7FFF;
  const int total_shift = 15 - shift;
  const int64_t round = int64_t{1} << (total_shift - 1);
  const int64_t result = (x * static_cast<int64_t>(reduced) + round) >>
                         total_shift;
  return static_cast<int32_t>(result);
}

// x * M rounded once, half away from zero, in 128 bits (the full Q31
// multiplier), saturated to int32: what ai-edge-litert's reference 16x8
// FULLY_CONNECTED computes, per-tensor and per-channel (measured: the Q15
// form above misses ties there, e.g. -64 * 2^30 * 2^-37 = -0.5 gives -1;
// tests/reference "fully_connected_i16*"). shift in [-31, 30].
inline int32_t MultiplyByQuantizedMultiplierRoundAway(int64_t x,
                                                      int32_t multiplier,
                                                      int shift) {
  const int total_shift = 31 - shift;
  const __int128 p = static_cast<__int128>(x) * multiplier;
  const __int128 magnitude =
      ((p < 0 ? -p : p) + (static_cast<__int128>(1) << (total_shift - 1))) >>
      total_shift;
  const __int128 v = p < 0 ? -magnitude : magnitude;
  return static_cast<int32_t>(std::clamp<__int128>(
      v, std::numeric_limits<int32_t>::min(),
      std::numeric_limits<int32_t>::max()));
}

// Saturating x * 2^exponent for 0 < exponent < 31 (gemmlowp's
// SaturatingRoundingMultiplyByPOT with a positive exponent).
inline int32_t SaturatingShiftLeft(int32_t x, int exponent) {
  const int32_t threshold = (1 << (31 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int32_t>::max();
  if (x < -threshold) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// TFLite's GetInvSqrtQuantizedMultiplierExp(input, /*reverse_shift=*/-1):
// 1/sqrt(input) for input > 1 as a Q31 multiplier and a (right) shift, by
// five Newton steps in gemmlowp's Q3.28 fixed point (RSQRT, integer layer
// norm). Input <= 1 gives {INT32_MAX, 0}.
QuantizedMultiplier InvSqrtMultiplier(int32_t input);

// The tensor's per-tensor scale and zero point (channel 0 of per-channel
// parameters). Requires IsQuantized(t) or at least one scale.
inline float Scale(const Tensor& t) { return t.quantization->scale[0]; }
inline int32_t ZeroPoint(const Tensor& t) {
  const auto& zp = t.quantization->zero_point;
  return zp.empty() ? 0 : static_cast<int32_t>(zp[0]);
}

// TFLite's PopulateConvolutionQuantizationParams: for each output channel c,
// QuantizeMultiplier(input_scale * filter_scale[c] / output_scale) computed
// in double. `channels` multipliers are returned (a per-tensor filter scale
// is repeated).
std::vector<QuantizedMultiplier> PerChannelMultipliers(const Tensor& input,
                                                       const Tensor& filter,
                                                       const Tensor& output,
                                                       int channels);

// TFLite's CalculateActivationRangeQuantized: the clamp bounds of `act` in
// the output's integer domain (NONE: the whole range of `type`).
// InvalidArgument for fused activations TFLite does not fuse (TANH, ...).
absl::Status ActivationRangeQuantized(tfl::ActivationFunctionType act,
                                      tfl::TensorType type, float scale,
                                      int32_t zero_point, int32_t* out_min,
                                      int32_t* out_max);

// The integer range of a quantized type (INT8, UINT8, INT16, INT32).
void TypeRange(tfl::TensorType type, int32_t* out_min, int32_t* out_max);

// True when every scale of `t` is positive and the quantized dimension is
// the one given (or there is a single scale).
bool HasPerChannelScales(const Tensor& t, int channels, int dim);

// How many quantized MAX_POOL_2D evaluations ran each build (kBaseline, or
// kAvx2; quantized_pooling.cc): tests check with it that the path they
// force is taken.
int64_t QuantizedMaxPoolCallsForTesting(CpuIsa path);

// The same for the 8-bit MEAN and SUM's accumulation (reduce.cc): kBaseline
// or kAvx2.
int64_t QuantizedSumCallsForTesting(CpuIsa path);

// The same for the 8-bit ADD, SUB, MUL and SQUARED_DIFFERENCE
// (quantized_elementwise.cc), one count per evaluation: kAvx512Vnni for the
// AVX-512 VBMI build (KernelHasAvx512Vbmi), kAvx2, kBaseline.
int64_t QuantizedBinaryCallsForTesting(CpuIsa path);

// The evaluations of an 8-bit ADD or SUB that took the AVX-512 VBMI build's
// sum of lookups (quantized_elementwise.cc's PrepareSplitSum).
int64_t QuantizedSplitSumCallsForTesting();

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_QUANTIZATION_UTIL_H_
