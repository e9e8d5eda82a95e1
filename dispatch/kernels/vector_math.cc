#include "dispatch/kernels/vector_math.h"

#include <cmath>

#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/float_simd.h"

#if GRAFT_HAVE_AVX2_FMA_BUILD
#include <immintrin.h>
#endif

namespace graft::kernels {
namespace {

CallCounter g_calls[2];

void CountCall(CpuIsa path) {
  g_calls[static_cast<int>(path)].fetch_add(1, std::memory_order_relaxed);
}

#if GRAFT_HAVE_AVX2_FMA_BUILD
// e^r for |r| <= ln2 / 2: Horner on 1/k! to r^7.
GRAFT_AVX2_FMA_TARGET inline __m256 ExpPoly(__m256 r) {
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

// e^x for x in [-87.3, 88.3] (the caller clamps): n = round(x / ln 2),
// r = x - n ln 2 in two FMA steps (ln 2 split so n * kLn2Hi is exact),
// e^r by Horner on 1/k!, times 2^n built in the exponent field (n in
// [-126, 127]: a normal float).
GRAFT_AVX2_FMA_TARGET inline __m256 Exp(__m256 x) {
  const __m256 n = _mm256_round_ps(
      _mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723e-6f), r);
  const __m256 p = ExpPoly(r);
  const __m256i e = _mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// x where x is NaN, else v.
GRAFT_AVX2_FMA_TARGET inline __m256 KeepNaN(__m256 x, __m256 v) {
  return _mm256_blendv_ps(v, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

GRAFT_AVX2_FMA_TARGET inline __m256 Sigmoid8(__m256 x) {
  const __m256 z = _mm256_min_ps(
      _mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), x),
                    _mm256_set1_ps(-87.3f)),
      _mm256_set1_ps(88.3f));
  const __m256 one = _mm256_set1_ps(1.0f);
  return KeepNaN(x, _mm256_div_ps(one, _mm256_add_ps(one, Exp(z))));
}

GRAFT_AVX2_FMA_TARGET inline __m256 Tanh8(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  // |x| >= 0.55: 1 - 2 / (e^2|x| + 1).
  const __m256 e = Exp(_mm256_min_ps(_mm256_add_ps(a, a), _mm256_set1_ps(18.0f)));
  const __m256 large =
      _mm256_sub_ps(one, _mm256_div_ps(two, _mm256_add_ps(e, one)));
  // |x| < 0.55: u / (u + 2), u = e^y - 1 for y = 2|x| < 1.1 by Horner on
  // 1/k! to y^11 (the next term is below 7e-9 of u).
  const __m256 y = _mm256_add_ps(a, a);
  __m256 q = _mm256_set1_ps(1.0f / 39916800);
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 3628800));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 362880));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 40320));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 5040));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 720));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 120));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 24));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(1.0f / 6));
  q = _mm256_fmadd_ps(q, y, _mm256_set1_ps(0.5f));
  q = _mm256_fmadd_ps(q, y, one);
  const __m256 u = _mm256_mul_ps(q, y);
  const __m256 small = _mm256_div_ps(u, _mm256_add_ps(u, two));
  const __m256 t = _mm256_blendv_ps(
      large, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.55f), _CMP_LT_OQ));
  return KeepNaN(x, _mm256_or_ps(t, _mm256_and_ps(x, sign)));
}

// e^x over the whole float range: x clamped to [-104, 88.8] (e^x is 0 or
// +inf to float precision beyond), 2^n applied as two factors 2^h and
// 2^(n - h), h = n >> 1, each a normal float, so results from 2^-149
// (subnormal, one rounding in the last product) to overflow (+inf past
// ln FLT_MAX = 88.72) come out right. NaN gives NaN.
GRAFT_AVX2_FMA_TARGET inline __m256 ExpFull8(__m256 x) {
  const __m256 c = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)),
                                 _mm256_set1_ps(88.8f));
  const __m256 n = _mm256_round_ps(
      _mm256_mul_ps(c, _mm256_set1_ps(1.44269504088896341f)),
      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), c);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723e-6f), r);
  const __m256 p = ExpPoly(r);
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i h = _mm256_srai_epi32(ni, 1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(
      _mm256_add_epi32(_mm256_sub_epi32(ni, h), bias), 23));
  return KeepNaN(x, _mm256_mul_ps(_mm256_mul_ps(p, s1), s2));
}

// erf(z): |z| < 1.5: z P(z^2), P of degree 8; 1.5 <= |z| < 3.92: Q(|z| -
// 2.71) of degree 13 with z's sign; beyond, +-1 (erf rounds to 1 there).
// Both least-squares fits to erf in double on Chebyshev nodes, rounded to
// float, highest degree first.
constexpr float kErfSmall[] = {
    6.223122568371764e-07f, -1.1344443009875249e-05f, 0.0001131538738263771f,
    -0.000845571921672672f, 0.005217034835368395f,   -0.026863213628530502f,
    0.1128372848033905f,    -0.37612634897232056f,   1.128379225730896f};
constexpr float kErfLarge[] = {
    2.3780623905622633e-06f, -5.30665738551761e-06f, -1.29315067169955e-05f,
    6.606395618291572e-05f,  -9.699624206405133e-05f, -6.293058686424047e-05f,
    0.0006714616902172565f,  -0.0018400748958811164f, 0.0031751079950481653f,
    -0.003850905690342188f,  0.0033280225470662117f,  -0.001976581523194909f,
    0.0007293759845197201f,  0.999873161315918f};

// The polynomial with coefficients c (highest degree first) at x, by
// Horner's rule, unrolled.
template <int N>
GRAFT_AVX2_FMA_TARGET inline __m256 Horner(__m256 x, const float (&c)[N]) {
  __m256 p = _mm256_set1_ps(c[0]);
#pragma GCC unroll 16
  for (int i = 1; i < N; ++i) p = _mm256_fmadd_ps(p, x, _mm256_set1_ps(c[i]));
  return p;
}

GRAFT_AVX2_FMA_TARGET inline __m256 Erf8(__m256 z) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_min_ps(_mm256_andnot_ps(sign, z),
                                 _mm256_set1_ps(3.92f));
  const __m256 small = _mm256_mul_ps(Horner(_mm256_mul_ps(a, a), kErfSmall), a);
  __m256 large = Horner(_mm256_sub_ps(a, _mm256_set1_ps(2.71f)), kErfLarge);
  large = _mm256_blendv_ps(
      large, _mm256_set1_ps(1.0f),
      _mm256_cmp_ps(a, _mm256_set1_ps(3.92f), _CMP_GE_OQ));
  const __m256 e = _mm256_blendv_ps(
      large, small, _mm256_cmp_ps(a, _mm256_set1_ps(1.5f), _CMP_LT_OQ));
  return KeepNaN(z, _mm256_or_ps(e, _mm256_and_ps(z, sign)));
}

// GELU, exact form: x/2 (1 + erf(x / sqrt 2)), as TFLite's reference.
GRAFT_AVX2_FMA_TARGET inline __m256 GeluErf8(__m256 x) {
  const __m256 e = Erf8(_mm256_mul_ps(x, _mm256_set1_ps(0.7071067811865476f)));
  return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x),
                       _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

template <__m256 (*kFn)(__m256)>
GRAFT_AVX2_FMA_TARGET inline void Apply8(const float* in, float* out,
                                         int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, kFn(_mm256_loadu_ps(in + i)));
  }
  if (i < n) {  // the tail through a full vector
    float tmp[8] = {};
    for (int64_t j = i; j < n; ++j) tmp[j - i] = in[j];
    _mm256_storeu_ps(tmp, kFn(_mm256_loadu_ps(tmp)));
    for (int64_t j = i; j < n; ++j) out[j] = tmp[j - i];
  }
}
#endif

// The baselines: libm element by element.
float SigmoidScalar(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float TanhScalar(float x) { return std::tanh(x); }
float ExpScalar(float x) { return std::exp(x); }
float GeluErfScalar(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
}

using ArrayFn = void (*)(const float*, float*, int64_t);

// `avx2` (Apply8 of the 8-lane form) where the CPU has AVX2 and FMA, else
// kScalar element by element; counted.
template <float (*kScalar)(float)>
void Run(ArrayFn avx2, const float* in, float* out, int64_t n) {
  if (avx2 != nullptr && CpuHasAvx2Fma()) {
    CountCall(CpuIsa::kAvx2);
    avx2(in, out, n);
    return;
  }
  CountCall(CpuIsa::kBaseline);
  for (int64_t i = 0; i < n; ++i) out[i] = kScalar(in[i]);
}

#if GRAFT_HAVE_AVX2_FMA_BUILD
#define GRAFT_AVX2_ARRAY(fn8) (&Apply8<fn8>)
#else
#define GRAFT_AVX2_ARRAY(fn8) nullptr
#endif

}  // namespace

void SigmoidVector(const float* in, float* out, int64_t n) {
  Run<SigmoidScalar>(GRAFT_AVX2_ARRAY(Sigmoid8), in, out, n);
}

void TanhVector(const float* in, float* out, int64_t n) {
  Run<TanhScalar>(GRAFT_AVX2_ARRAY(Tanh8), in, out, n);
}

void ExpVector(const float* in, float* out, int64_t n) {
  Run<ExpScalar>(GRAFT_AVX2_ARRAY(ExpFull8), in, out, n);
}

void GeluErfVector(const float* in, float* out, int64_t n) {
  Run<GeluErfScalar>(GRAFT_AVX2_ARRAY(GeluErf8), in, out, n);
}

#undef GRAFT_AVX2_ARRAY

int64_t VectorMathCallsForTesting(CpuIsa path) {
  const int i = static_cast<int>(path);
  return i < 2 ? g_calls[i].load(std::memory_order_relaxed) : 0;
}

}  // namespace graft::kernels
