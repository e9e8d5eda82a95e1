// Numeric tolerances for comparing Graft's outputs with a reference (the
// TFLite reference interpreter, a test's own reference implementation):
// defined once here so every test agrees.
//
// Float32. Each output element is accepted when
//     |got - want| <= atol + rtol * |want|,   with
//     rtol = 1e-5 * sqrt(max(1, K)),
//     atol = rtol * max|want| over the whole output tensor,
// where K is the longest reduction behind one element (a matmul's K, a
// conv's kh*kw*cin, a mean's count; RuntimeReport::MaxReductionLength for a
// whole model). Why: float32 rounding is ~6e-8 per operation; summing K
// terms in a different order (blocked GEMM vs. the reference's loops) moves
// the result by ~eps * sqrt(K) relative to the magnitude of the summands,
// not of the result, so the absolute part scales with the largest output
// magnitude (a proxy for the summands), which also covers results that
// cancel to near zero. The 1e-5 factor (~150 eps) leaves room for
// transcendental functions implemented differently (exp, tanh, erf) and a
// few ops in sequence. NaN matches NaN; infinities must match exactly.
//
// Integer and bool outputs, quantized ones included: exact, since Graft's
// quantized kernels reproduce TFLite's reference integer arithmetic bit for
// bit. The one exception is a kernel named in QuantizedLsbTolerance() below,
// with the reason: its oracle rounds differently, so a model that runs it
// may be off by that many units in the last place.
//
// String outputs: exact (the same strings, byte for byte).
#ifndef GRAFT_DISPATCH_TOLERANCE_H_
#define GRAFT_DISPATCH_TOLERANCE_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace graft {

inline constexpr double kFloat32RelativeTolerance = 1e-5;

// Integer outputs of a model running the kernel `kernel_name` (Kernel::name,
// as RuntimeReport's OpReport::detail shows it) may differ from the oracle's
// by the returned number of units; 0 for every kernel not listed:
//   SumQuantized: 1. TFLite's reference SUM kernel is wrong for int8/int16
//     (ai-edge-litert 2.3.0: garbage wherever the sum saturates), so
//     tests/reference uses TFLite's builtin SUM as the oracle there, and that
//     kernel rescales with a float multiplier where the reference (and
//     Graft) use TFLite's integer QuantizedMeanOrSum: +-1 on ties.
inline int QuantizedLsbTolerance(const std::string& kernel_name) {
  return kernel_name == "SumQuantized" ? 1 : 0;
}

// XNNPACK's int8 kernels requantize with their own fixed-point rounding
// (and compute global average pooling and sigmoid their own way), so an
// int8 result may differ from Graft's TFLite-reference kernels by more
// than the exact rule above, against Graft's CPU kernels (tests/xnnpack):
//
// kXnnpackInt8OpLsb: one op (tests/xnnpack/xnnpack_ops_test.cc); measured 0 for
// every op but DEPTHWISE_CONV_2D and MEAN, 1.
inline constexpr int kXnnpackInt8OpLsb = 1;
// kXnnpackInt8ModelLsb: a model's final outputs. One-LSB differences
// inside the partition are amplified by what the CPU runs after it: a
// per-channel int8 FULLY_CONNECTED summing 1280 pooled values, an int8
// SOFTMAX. Measured (seed 20261122 and 1-4): mobilenet_v2_035_96_int8 28,
// mobilenet_v2_100_224_int8 20, resnet_cnn_int8 1 to 6,
// transformer_encoder_int8 4, every other int8 model 0 or 1 (the mean
// difference is printed per model too). The differences are XNNPACK's own:
// on mobilenet_v2_035_96_int8 this vendor's output is bit-identical to the
// TFLite interpreter's default (XNNPACK-delegate) output, which differs
// from TFLite's reference kernels by the same max 33 / mean 8.7 LSB
// (seeded input, checked by hand with ai_edge_litert).
inline constexpr int kXnnpackInt8ModelLsb = 32;

struct FloatTolerance {
  double atol = 0;
  double rtol = 0;
  bool Accepts(double got, double want) const {
    if (std::isnan(want) || std::isnan(got)) {
      return std::isnan(want) && std::isnan(got);
    }
    if (std::isinf(want) || std::isinf(got)) return got == want;
    return std::fabs(got - want) <= atol + rtol * std::fabs(want);
  }
};

// The precision a backend computes float32 tensors in, below float32 when
// it rounds them (inputs, weights, intermediates) to a narrower format:
// Intel's OpenVINO CPU plugin runs float32 models in bf16 on CPUs with
// avx512_bf16 or AMX (dispatch/litert_backend.h's precision warning). The
// rule above stays the same, with the format's own relative tolerance:
//   float32: kFloat32RelativeTolerance, 1e-5 (~84 eps of 2^-23);
//   float16: 2.5e-3 (~2.5 eps of 2^-10, 11-bit significand);
//   bfloat16: 2e-2 (~2.5 eps of 2^-8, 8-bit significand).
// Why ~2.5 eps and not float32's 84: a narrower format's rounding of each
// input and product dominates everything else, and one rounding of the
// inputs (eps/2 each) plus one of the result already give ~1.5 eps; the
// sqrt(K) factor covers accumulation, as for float32. Measured: LiteRT's
// Intel OpenVINO CPU path (bf16 on this machine's avx512_bf16) passes
// `graft check --precision=bf16` over every catalogue op it takes and the
// built-in models, and fails the float32 rule (tests/check).
enum class FloatPrecision { kFloat32, kFloat16, kBfloat16 };

inline constexpr double kFloat16RelativeTolerance = 2.5e-3;
inline constexpr double kBfloat16RelativeTolerance = 2e-2;

inline double RelativeTolerance(FloatPrecision p) {
  switch (p) {
    case FloatPrecision::kFloat16:
      return kFloat16RelativeTolerance;
    case FloatPrecision::kBfloat16:
      return kBfloat16RelativeTolerance;
    case FloatPrecision::kFloat32:
      break;
  }
  return kFloat32RelativeTolerance;
}

// "fp32", "fp16", "bf16": the names `graft check --precision` takes.
inline const char* FloatPrecisionName(FloatPrecision p) {
  switch (p) {
    case FloatPrecision::kFloat16:
      return "fp16";
    case FloatPrecision::kBfloat16:
      return "bf16";
    case FloatPrecision::kFloat32:
      break;
  }
  return "fp32";
}

// Parses a FloatPrecisionName; false (and `out` untouched) for anything
// else.
inline bool ParseFloatPrecision(const std::string& name, FloatPrecision* out) {
  for (FloatPrecision p : {FloatPrecision::kFloat32, FloatPrecision::kFloat16,
                           FloatPrecision::kBfloat16}) {
    if (name == FloatPrecisionName(p)) {
      *out = p;
      return true;
    }
  }
  return false;
}

// The tolerance for a float32 output computed in `precision`: as
// Float32Tolerance, with that precision's relative tolerance.
inline FloatTolerance FloatToleranceFor(FloatPrecision precision,
                                        int64_t reduction_length,
                                        double max_abs_want) {
  FloatTolerance t;
  t.rtol = RelativeTolerance(precision) *
           std::sqrt(static_cast<double>(std::max<int64_t>(1, reduction_length)));
  t.atol = t.rtol * (std::isfinite(max_abs_want) ? max_abs_want : 0.0);
  return t;
}

// The float32 tolerance for an output whose largest reference magnitude is
// `max_abs_want` and whose elements each reduce over `reduction_length`
// terms (0 or 1 for elementwise results).
inline FloatTolerance Float32Tolerance(int64_t reduction_length,
                                       double max_abs_want) {
  return FloatToleranceFor(FloatPrecision::kFloat32, reduction_length,
                           max_abs_want);
}

struct NpyArray;
struct Tensor;

// Compares one output of Graft with the reference's value under the rules
// above; returns "" when it is accepted, else what differs (dtype, shape, or
// how many elements and the first one). `reduction_length` is K above;
// `integer_lsb` the integer tolerance (QuantizedLsbTolerance).
std::string CompareToReference(const Tensor& got, const NpyArray& want,
                               int64_t reduction_length, int integer_lsb = 0);

}  // namespace graft

#endif  // GRAFT_DISPATCH_TOLERANCE_H_
