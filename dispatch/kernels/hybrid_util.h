// The run-time input quantization of TFLite's hybrid kernels (FLOAT32 input,
// INT8 weights): one row (a FULLY_CONNECTED input row, a CONV_2D batch
// image) quantized to int8 values, held widened to int16 so the integer dot
// products vectorize. Bit-exact with what ai-edge-litert 2.3.0 runs on x86:
// TFLite's NeonSymmetricQuantizeFloats / NeonAsymmetricQuantizeFloats
// through its NEON-to-SSE translation (tflite/kernels/internal/optimized/
// neon_tensor_utils.cc), not the portable variants.
#ifndef GRAFT_DISPATCH_KERNELS_HYBRID_UTIL_H_
#define GRAFT_DISPATCH_KERNELS_HYBRID_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/model.h"
#include "dispatch/kernel.h"

namespace graft {
namespace kernels {

// The checks every hybrid kernel's prepare opens with: FLOAT32 input and
// output, weights of one of `weight_types`, a FLOAT32 bias if any, and no
// fused TANH or SIGN_BIT (TFLite's hybrid paths apply them; Graft does
// not). Returns the "FLOAT32 input with INT8 weights" text the kernel's
// further refusals extend, or the refusal.
absl::StatusOr<std::string> CheckHybridOp(
    const PrepareContext& ctx, const Tensor& in, const Tensor& w,
    std::initializer_list<tfl::TensorType> weight_types,
    tfl::ActivationFunctionType activation);

// Asymmetric: the range [min(0, lo), max(0, hi)] of the k values x[0..k)
// gives *scale and *zero_point; q[i] = clamp(zero_point + round(x[i] /
// scale), -128, 127). A row of zeros gets scale 1, zero point 0.
void AsymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale,
                           int32_t* zero_point);

// Symmetric: scale = max(|lo|, |hi|) / 127, q[i] in [-127, 127], zero point
// 0. A row of zeros gets scale 1.
void SymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale);

}  // namespace kernels
}  // namespace graft

#endif  // GRAFT_DISPATCH_KERNELS_HYBRID_UTIL_H_
