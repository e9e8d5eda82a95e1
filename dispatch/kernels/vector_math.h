// Logistic sigmoid, tanh, exp and GELU over float arrays, for the float
// LSTM's gates (lstm.cc), SOFTMAX (softmax.cc) and GELU (activations.cc).
// Internal to kernels/.
//
// TFLite's LSTM evaluates them through tensor_utils' ApplySigmoidToVector /
// ApplyTanhToVector (Eigen's vectorized logistic and tanh in recent
// versions), not one libm call per element, so Graft matches it within
// tolerance.h's float rule (150 eps and up), not bit for bit. Two builds,
// picked per call with CpuHasAvx2Fma() (float_simd.h):
// - baseline: 1 / (1 + std::exp(-x)) and std::tanh(x), element by element;
// - AVX2+FMA: 8 lanes at a time from one exp: x = n ln2 + r, |r| <= ln2/2,
//   e^r by its Taylor polynomial to r^7 (truncation < 1.2e-7 relative),
//   2^n put in the exponent bits. Sigmoid is 1 / (1 + e^-x) with -x clamped
//   to [-87.3, 88.3] (no overflow; the result there is 0 or 1 to float
//   precision anyway); tanh is sign(x) (1 - 2 / (e^2|x| + 1)) for |x| >=
//   0.55 (|x| clamped at 9, where tanh rounds to 1), and u / (u + 2) with
//   u = e^2|x| - 1 by its Taylor polynomial to u^11 below 0.55, where the
//   first form would cancel. NaN gives NaN; -0 gives -0 from tanh.
// exp is the same polynomial with 2^n applied as two factors, so that
// subnormal results and overflow to +inf come out right (the input is
// clamped to [-104, 88.8]). erf (for GELU, x/2 (1 + erf(x / sqrt 2)) as
// TFLite's reference computes it) is z P(z^2) with P of degree 8 for |z| <
// 1.5 and Q(|z| - 2.71) of degree 13 up to 3.92, where erf rounds to 1;
// both fitted by least squares in double, coefficients rounded to float.
// Measured error of the AVX2 build against double precision over every
// float in [-20, 20] (vector_math_test.cc checks a drawn million): at most
// 3 units in the last place for sigmoid, 3 for tanh; every float: 1 for exp
// (|x| <= 110), and GELU within 3.1 float epsilons of |x| (3 ulp of the
// result where x > 0; for x < 0 the reference's 1 + erf cancels).
#ifndef GRAFT_DISPATCH_KERNELS_VECTOR_MATH_H_
#define GRAFT_DISPATCH_KERNELS_VECTOR_MATH_H_

#include <cstdint>

#include "dispatch/kernels/cpu_features.h"

namespace graft::kernels {

// out[i] = 1 / (1 + exp(-in[i])), i < n. `out` may be `in`.
void SigmoidVector(const float* in, float* out, int64_t n);

// out[i] = tanh(in[i]), i < n. `out` may be `in`.
void TanhVector(const float* in, float* out, int64_t n);

// out[i] = exp(in[i]), i < n, for SOFTMAX. `out` may be `in`.
void ExpVector(const float* in, float* out, int64_t n);

// out[i] = in[i] / 2 * (1 + erf(in[i] / sqrt 2)), i < n: GELU's exact form
// (not the tanh approximation). `out` may be `in`.
void GeluErfVector(const float* in, float* out, int64_t n);

// How many calls each build ran (kBaseline, kAvx2): tests check the path
// they force is taken.
int64_t VectorMathCallsForTesting(CpuIsa path);

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_VECTOR_MATH_H_
