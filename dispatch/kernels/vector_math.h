// Logistic sigmoid and tanh over float arrays, for the float LSTM's gates
// (lstm.cc). Internal to kernels/.
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
// Measured error of the AVX2 build against double precision over every
// float in [-20, 20] (vector_math_test.cc checks a drawn million): at most
// 3 units in the last place for sigmoid, 3 for tanh.
#ifndef GRAFT_DISPATCH_KERNELS_VECTOR_MATH_H_
#define GRAFT_DISPATCH_KERNELS_VECTOR_MATH_H_

#include <cstdint>

#include "dispatch/kernels/cpu_features.h"

namespace graft::kernels {

// out[i] = 1 / (1 + exp(-in[i])), i < n. `out` may be `in`.
void SigmoidVector(const float* in, float* out, int64_t n);

// out[i] = tanh(in[i]), i < n. `out` may be `in`.
void TanhVector(const float* in, float* out, int64_t n);

// How many calls each build ran (kBaseline, kAvx2): tests check the path
// they force is taken.
int64_t VectorMathCallsForTesting(CpuIsa path);

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_VECTOR_MATH_H_
