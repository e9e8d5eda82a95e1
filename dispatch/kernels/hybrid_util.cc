#include "dispatch/kernels/hybrid_util.h"

#include "absl/strings/str_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace graft {
namespace kernels {

absl::StatusOr<std::string> CheckHybridOp(
    const PrepareContext& ctx, const Tensor& in, const Tensor& w,
    std::initializer_list<tfl::TensorType> weight_types,
    tfl::ActivationFunctionType activation) {
  std::string types =
      absl::StrFormat("%s input with %s weights", TensorTypeName(in.type),
                      TensorTypeName(w.type));
  bool weights_ok = false;
  for (tfl::TensorType t : weight_types) weights_ok |= w.type == t;
  if (in.type != tfl::TensorType_FLOAT32 || !weights_ok ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(types);
  }
  const Tensor* bias = ctx.input(2);
  if (bias && bias->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(
        absl::StrFormat("%s and %s bias", types, TensorTypeName(bias->type)));
  }
  if (activation == tfl::ActivationFunctionType_TANH ||
      activation == tfl::ActivationFunctionType_SIGN_BIT) {
    return ctx.Unsupported(
        absl::StrFormat("%s and a fused %s", types,
                        tfl::EnumNameActivationFunctionType(activation)));
  }
  return types;
}
namespace {

// TFLite's rounding of x / scale to an integer on x86 (its Neon quantizers
// through the NEON-to-SSE translation): in the vectorized groups of 8 by
// adding +-0.5 in float and truncating (its pre-ARMv8 RoundToNearest), the
// k % 8 left over with std::round. They differ where v + 0.5 rounds up in
// float: 0.49999997 gives 1 in a group, 0 in the tail (measured, for both
// quantizers).
//
// The conversion to int32 is x86's (cvtt*): NaN and values outside int32
// give INT32_MIN, where C++'s cast is undefined. Inputs or weights a model
// makes NaN or infinite reach here (found by tests/fuzz).
int32_t TruncateLikeX86(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) {
    return std::numeric_limits<int32_t>::min();
  }
  return static_cast<int32_t>(v);
}

int32_t RoundLikeTflite(float v, bool in_group_of_8) {
  return in_group_of_8 ? TruncateLikeX86(v + (v < 0 ? -0.5f : 0.5f))
                       : TruncateLikeX86(std::round(v));
}

}  // namespace

// The asymmetric int8 quantization of one input row, as ai-edge-litert 2.3.0
// does it on x86: TFLite's NeonAsymmetricQuantizeFloats (through its
// NEON-to-SSE translation), not PortableAsymmetricQuantizeFloats. The range
// [min(0, lo), max(0, hi)] is subtracted in float, the scale and zero point
// are computed in double (the zero point nudged from the end that loses
// less), and values are rounded (RoundLikeTflite) before the zero point is
// added. Each of those details was measured: the portable variant misses the
// scale's last bit in about one row of eight, and ties.
void AsymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale,
                           int32_t* zero_point) {
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < k; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (lo == hi) {
    std::fill(q, q + k, 0);
    *scale = 1, *zero_point = 0;
    return;
  }
  const double s = static_cast<double>(hi - lo) / 255.0;
  const double z_from_min = -128.0 - lo / s, z_from_max = 127.0 - hi / s;
  const double z = 128.0 + std::abs(lo / s) < 127.0 + std::abs(hi / s)
                       ? z_from_min
                       : z_from_max;
  // !(z > -128): a NaN z (a row with both infinities) is -128, not an
  // undefined cast.
  const int32_t zp = !(z > -128.0) ? -128
                     : z >= 127.0  ? 127
                                   : static_cast<int32_t>(std::round(z));
  *scale = static_cast<float>(s), *zero_point = zp;
  const float inv = static_cast<float>(1.0 / *scale);
  const int64_t grouped = k & ~int64_t{7};
  for (int64_t i = 0; i < k; ++i) {
    const int32_t r = RoundLikeTflite(x[i] * inv, i < grouped);
    q[i] = static_cast<int16_t>(
        std::clamp<int64_t>(int64_t{zp} + r, -128, 127));
  }
}

// The symmetric int8 quantization of one input row: TFLite's
// NeonSymmetricQuantizeFloats on x86, as above. range = max(|min|, |max|);
// scale = range / 127 and its inverse 127 / range, both in float; values in
// [-127, 127]. A row of zeros gets scale 1.
void SymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale) {
  float lo = x[0], hi = x[0];
  for (int64_t i = 1; i < k; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float range = std::max(std::abs(lo), std::abs(hi));
  if (range == 0) {
    std::fill(q, q + k, 0);
    *scale = 1;
    return;
  }
  *scale = range / 127.0f;
  const float inv = 127.0f / range;
  const int64_t grouped = k & ~int64_t{7};
  for (int64_t i = 0; i < k; ++i) {
    const int32_t r = RoundLikeTflite(x[i] * inv, i < grouped);
    q[i] = static_cast<int16_t>(std::clamp(r, -127, 127));
  }
}

absl::Status CheckHybridWeights(const PrepareContext& ctx, const Tensor& w,
                                const std::string& types) {
  const tfl::QuantizationParametersT* q = w.quantization;
  if (q == nullptr || q->scale.empty()) {
    return ctx.Unsupported(types + " not quantized");
  }
  if (q->details.type != tfl::QuantizationDetails_NONE) {
    return ctx.Unsupported(types + " with custom quantization details");
  }
  for (int64_t zp : q->zero_point) {
    if (zp != 0) return ctx.Unsupported(types + " with a zero point");
  }
  if (!w.constant) return ctx.Unsupported(types + " computed at run time");
  return absl::OkStatus();
}

namespace {
// One product of HybridDot: TFLite's, with its -128 quirk.
inline int32_t TfliteProduct(int16_t a, int16_t b) {
  const int32_t w = (b == -128 && a < 0) ? 128 : b;
  return static_cast<int32_t>(a) * w;
}
}  // namespace

int32_t HybridDot(const int16_t* a, const int16_t* b, int64_t k) {
  // Chunks of 16 vectorize to 16-bit multiply-adds; integer sums in any
  // order are the same.
  // The sum wraps as TFLite's SIMD sum does (its lanes are int32): summed
  // unsigned, where wrapping is defined.
  uint32_t d = 0;
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    for (int j = 0; j < 16; ++j) {
      d += static_cast<uint32_t>(TfliteProduct(a[i + j], b[i + j]));
    }
  }
  for (; i < k; ++i)
    d += static_cast<uint32_t>(static_cast<int32_t>(a[i]) * b[i]);
  return static_cast<int32_t>(d);
}

int32_t HybridRowSum(const int16_t* w, int64_t k) {
  int16_t lanes[8] = {};
  int64_t i = 0;
  for (; i + 16 <= k; i += 16) {
    for (int l = 0; l < 8; ++l) {
      lanes[l] =
          static_cast<int16_t>(lanes[l] + w[i + 2 * l] + w[i + 2 * l + 1]);
    }
  }
  if (i + 8 <= k) {
    for (int l = 0; l < 8; ++l) {
      lanes[l] = static_cast<int16_t>(lanes[l] + w[i + l]);
    }
    i += 8;
  }
  int32_t sum = 0;
  for (int l = 0; l < 8; ++l) sum += lanes[l];
  for (; i < k; ++i) sum += w[i];
  return sum;
}

}  // namespace kernels
}  // namespace graft
