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
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/model.h"
#include "dispatch/kernel.h"
#include "dispatch/kernels/quantized_gemm.h"

namespace graft {
namespace kernels {

#if GRAFT_QGEMM_AVX2
// Float multiply and add on 16 lanes that the compiler cannot contract into
// an FMA (ISO C++ permits it, GCC does it by default, and the AVX-512
// target has FMA): the rounding-mode builtins, at the current mode. The
// AVX-512 paths use these to round every product and sum on its own, as
// TFLite's x86 kernels do.
GRAFT_AVX512_INLINE __m512 HybridMulPs(__m512 a, __m512 b) {
  return _mm512_mul_round_ps(a, b, _MM_FROUND_CUR_DIRECTION);
}
GRAFT_AVX512_INLINE __m512 HybridAddPs(__m512 a, __m512 b) {
  return _mm512_add_round_ps(a, b, _MM_FROUND_CUR_DIRECTION);
}
#endif  // GRAFT_QGEMM_AVX2

// The checks every hybrid kernel's prepare opens with: FLOAT32 input and
// output, weights of one of `weight_types`, a FLOAT32 bias if any, and no
// fused TANH or SIGN_BIT (TFLite's hybrid paths apply them; Graft does
// not). Returns the "FLOAT32 input with INT8 weights" text the kernel's
// further refusals extend, or the refusal.
absl::StatusOr<std::string> CheckHybridOp(
    const PrepareContext& ctx, const Tensor& in, const Tensor& w,
    std::initializer_list<tfl::TensorType> weight_types,
    tfl::ActivationFunctionType activation);

// The weight checks of the hybrid kernels with per-tensor or per-channel
// INT8 weights: quantized with scales, no zero point (TFLite ignores one;
// Graft refuses rather than compute with other weights), no custom
// quantization details, constant. `types` is CheckHybridOp's text, which
// the refusals extend.
absl::Status CheckHybridWeights(const PrepareContext& ctx, const Tensor& w,
                                const std::string& types);

// Asymmetric: the range [min(0, lo), max(0, hi)] of the k values x[0..k)
// gives *scale and *zero_point; q[i] = clamp(zero_point + round(x[i] /
// scale), -128, 127). A row of zeros gets scale 1, zero point 0.
void AsymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale,
                           int32_t* zero_point);

// Symmetric: scale = max(|lo|, |hi|) / 127, q[i] in [-127, 127], zero point
// 0. A row of zeros gets scale 1.
void SymmetricQuantizeRow(const float* x, int64_t k, int16_t* q, float* scale);

// As the two above, but each value q stored as the unsigned byte q + 128
// (the AVX-512 VNNI paths' input).
void AsymmetricQuantizeRowU8(const float* x, int64_t k, uint8_t* u,
                             float* scale, int32_t* zero_point);
void SymmetricQuantizeRowU8(const float* x, int64_t k, uint8_t* u,
                            float* scale);

// The quantizers above and HybridDot run AVX-512 code where KernelIsa() is
// kAvx512Vnni (bit-exact with their scalar code); how many calls took it
// since the process started (tests check the path they force is taken).
int64_t HybridVectorQuantizeCallsForTesting();
int64_t HybridVectorDotCallsForTesting();

// The int32 dot product of k quantized inputs `a` and INT8 weights `b`
// (both held as int16) as TFLite's x86 hybrid kernels compute it
// (SseMatrixBatchVectorMultiplyAccumulate's DotProdInt8x4x4): each input's
// sign is moved onto its weight with _mm_sign_epi8, which leaves -128 as
// -128, so a weight of -128 times a negative input comes out negated
// (a * 128, not a * -128) in the whole blocks of 16 it takes that way;
// the k % 16 left, and every other product, are exact.
int32_t HybridDot(const int16_t* a, const int16_t* b, int64_t k);

// out[j] = HybridDot(a, b + j * k, k) for j < n: one input row against n
// weight rows of k, the ISA chosen once.
void HybridDotRows(const int16_t* a, const int16_t* b, int64_t n, int64_t k,
                   int32_t* out);

// The sum of one row of k INT8 weights (held as int16) as TFLite's
// SseReductionSumVector adds it for asymmetric inputs: pairs into eight
// wrapping int16 lanes, so it differs from the true sum only when a lane
// passes +-32767.
int32_t HybridRowSum(const int16_t* w, int64_t k);

// The AVX-512 VNNI integer products of the hybrid kernels (KernelIsa() ==
// kAvx512Vnni; callers decide at prepare): inputs as unsigned bytes u =
// q + 128 (the *U8 quantizers), INT8 weights, vpdpbusd summing four u * w
// into each int32 lane. The sums are exact, sum u * w = sum q * w +
// 128 * sum w, so the caller subtracts (128 + its zero point) * col_sums
// (modulo 2^32, as TFLite's int32 sums wrap). No -128 quirk: callers that
// must reproduce it (HybridDot) do not use this.
inline int64_t HybridVnniPaddedK(int64_t k) { return (k + 3) / 4 * 4; }
struct HybridVnniWeights {
  int64_t n = 0, k = 0, panels = 0;
  // Per panel of 16 columns, per group of four reduction steps, the 16
  // columns' four weights side by side; zero past k and past n.
  std::vector<int8_t> packed;
  // The exact sum of each column's weights, zero past n (panels * 16).
  std::vector<int32_t> col_sums;
};
// Packs w[c * row_stride + kk], c < n, kk < k.
void HybridVnniPack(const int8_t* w, int64_t n, int64_t k, int64_t row_stride,
                    HybridVnniWeights* out);
// out[r * out_stride + c] = sum_kk a[r * a_stride + kk] * w[c][kk] for rows
// r < rows and the columns c < n of panels [p0, p1). a's rows hold
// HybridVnniPaddedK(k) readable bytes (past k any value: the weights are
// zero there). Needs KernelIsa() == kAvx512Vnni.
void HybridVnniSums(const uint8_t* a, int64_t a_stride, int64_t rows,
                    const HybridVnniWeights& b, int64_t p0, int64_t p1,
                    int32_t* out, int64_t out_stride);
// The float epilogue of the hybrid CONV_2D (hybrid_conv.cc, whose header
// gives TFLite's order) for the sums of one image, applied by
// HybridVnniConvTaps in registers: per column c < b.n, acc = sums -
// a_offset * b.col_sums[c] (wrapping), v = float(acc) * wscale[c] * scale
// (per_channel) or float(acc) * (scale * wscale[c]), + bias[c] where bias
// is not null, each product and sum rounded on its own (no FMA), then
// min(hi, max(lo, v)) with vmaxps / vminps (a NaN v stays NaN).
struct HybridVnniConvEpilogue {
  const float* wscale = nullptr;  // b.n values
  const float* bias = nullptr;    // b.n values, or null
  float lo = 0, hi = 0;
  bool per_channel = true;
  int32_t a_offset = 0;  // the image's zero point + 128
  float scale = 1;       // the image's scale
};
// As HybridVnniSums for out_rows * cols rows with the reduction split into
// `taps` equal parts (b.k a multiple of 4 * taps): part t of row (y, x)
// read at a + y * a_row_stride + x * a_stride + tap_off[t] (a convolution
// straight from a padded image, no im2col), its b.n columns through `e`
// and stored as floats at out + (y * cols + x) * out_stride: a
// convolution's output rows y of cols pixels, with no int32 sums in
// memory. Tiles of rows run on across output rows. Needs
// KernelIsa() == kAvx512Vnni.
void HybridVnniConvTaps(const uint8_t* a, int64_t a_row_stride,
                        int64_t a_stride, int64_t out_rows, int64_t cols,
                        const HybridVnniWeights& b, const int64_t* tap_off,
                        int taps, const HybridVnniConvEpilogue& e, float* out,
                        int64_t out_stride);
// How many HybridVnniSums and HybridVnniConvTaps calls ran (tests
// check the path is taken); HybridVnniConvTaps' calls on their own.
int64_t HybridVnniCallsForTesting();
int64_t HybridVnniConvCallsForTesting();
// How many hybrid CONV_2D invokes ran the VNNI path with whole filter rows
// as taps (hybrid_conv.cc; KernelIsa() kAvx512Vnni at prepare, not a 1x1
// stride-1 unpadded convolution, dilation 1 in width).
int64_t HybridConvRowTapsCallsForTesting();
// How many hybrid DEPTHWISE_CONV_2D invokes ran its AVX-512 path
// (hybrid_conv.cc; KernelIsa() kAvx512Vnni at prepare, multiplier 1).
int64_t HybridDepthwiseAvx512CallsForTesting();

// The hybrid LSTM's activations as TFLite's x86 Eigen computes them (see
// hybrid_lstm.cc): tanh (ptanh_float, its scalar and packet paths alike)
// and the logistic's SSE packet path.
float EigenTanh(float a);
float EigenLogisticPacket(float a);
// The same over n values (out may be in), AVX-512 where KernelIsa() is
// kAvx512Vnni, bit-exact with the scalar functions.
void EigenTanhVector(const float* in, float* out, int64_t n);
void EigenLogisticPacketVector(float* v, int64_t n);
int64_t HybridVectorActivationCallsForTesting();

}  // namespace kernels
}  // namespace graft

#endif  // GRAFT_DISPATCH_KERNELS_HYBRID_UTIL_H_
