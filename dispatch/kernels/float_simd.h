// Float32 vectors for the float kernels (gemm.cc, depthwise_conv.cc), and
// the switches that run one kernel source as an AVX2+FMA build where the CPU
// has both, and as an AVX2+FMA+AVX-512 VL build where it has that too.
// Internal to kernels/.
//
// A kernel writes its body once, with V8 and the always-inline helpers
// below, as an always-inline function, and instantiates it two or three
// times: plain (the baseline x86-64 or other target), inside a function
// marked GRAFT_AVX2_FMA_TARGET, where GCC and Clang compile the same vector
// code to 256-bit registers and contract `acc += a * b` into fused
// multiply-adds, and (the GEMM and depthwise tiles) inside one marked
// GRAFT_AVX512VL_TARGET: the same 256-bit code with 32 vector registers.
// It picks one with CpuHasAvx512Vl() / CpuHasAvx2Fma() at each call
// (cpu_features.h: a test's cap applies at once).
#ifndef GRAFT_DISPATCH_KERNELS_FLOAT_SIMD_H_
#define GRAFT_DISPATCH_KERNELS_FLOAT_SIMD_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "dispatch/kernels/cpu_features.h"

// The helpers return V8 by value; they are always inlined, so the warning
// about the AVX calling convention (-Wpsabi, given where a baseline function
// calls them) does not apply. Off in the files that include this header.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace graft::kernels {

#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
#define GRAFT_HAVE_AVX2_FMA_BUILD 1
#define GRAFT_AVX2_FMA_TARGET __attribute__((target("avx2,fma")))
// The same AVX2+FMA code with AVX-512 F and VL on: still 256-bit vectors
// (Zen 4 runs 512-bit FMAs at half rate), but 32 vector registers instead
// of 16, so a micro-kernel keeps more accumulators and operands in
// registers. flatten: the lambdas and helpers a body calls compile for it.
// GCC is also told to keep its own vectorized loops at 256 bits (Clang
// refuses that option in the attribute).
#if defined(__clang__)
#define GRAFT_AVX512VL_TARGET \
  __attribute__((target("avx2,fma,avx512f,avx512vl"), flatten))
#else
#define GRAFT_AVX512VL_TARGET                                         \
  __attribute__((                                                     \
      target("avx2,fma,avx512f,avx512vl,prefer-vector-width=256"), \
      flatten))
#endif
#else
#define GRAFT_HAVE_AVX2_FMA_BUILD 0
#define GRAFT_AVX2_FMA_TARGET
#endif

// Whether GRAFT_AVX2_FMA_TARGET code may run (false where there is no
// such build): KernelIsa() has AVX2 and FMA.
inline bool CpuHasAvx2Fma() {
#if GRAFT_HAVE_AVX2_FMA_BUILD
  return KernelIsaAtLeast(CpuIsa::kAvx2);
#else
  return false;
#endif
}

// Whether GRAFT_AVX512VL_TARGET code may run: KernelIsa() is kAvx512Vnni
// (which has AVX-512 F and VL besides AVX2 and FMA).
inline bool CpuHasAvx512Vl() {
#if GRAFT_HAVE_AVX2_FMA_BUILD
  return KernelIsaAtLeast(CpuIsa::kAvx512Vnni);
#else
  return false;
#endif
}

// How many float AVERAGE_POOL_2D / MAX_POOL_2D evaluations ran each build
// (kBaseline, or kAvx2 for the AVX2+FMA one; pooling.cc): tests check with
// it that the path they force is taken.
int64_t FloatPoolCallsForTesting(CpuIsa path);

// How many groups of output pixels the float DEPTHWISE_CONV_2D computed
// together (depthwise_conv.cc), per build as above (kAvx512Vnni: the
// AVX-512 VL build).
int64_t FloatDepthwisePixelGroupsForTesting(CpuIsa path);
// How many of those groups lay on an output row whose window the top or
// bottom edge cuts (any build).
int64_t FloatDepthwiseCutRowGroupsForTesting();
// How many of them went through the kernel that reuses input columns over
// the taps of a filter row (filters 3 or 5 wide, stride 1 or 2; any build).
int64_t FloatDepthwiseRowKernelGroupsForTesting();
// How many of those had window columns outside the input (pixels at the
// left or right edge; any build).
int64_t FloatDepthwiseEdgeGroupsForTesting();
// How many output rows that kernel ran over several spans of channels, a
// group's reads over all of them being more than L1 keeps (any build).
int64_t FloatDepthwiseChannelSpanRowsForTesting();

// The same for the float binary elementwise ops (ADD, SUB, MUL, DIV, ...;
// elementwise.cc) and the float reductions (MEAN, SUM, REDUCE_MAX, ...;
// reduce.cc).
int64_t FloatBinaryCallsForTesting(CpuIsa path);
int64_t FloatReduceCallsForTesting(CpuIsa path);

// 8 floats; aligned(4) so loads from any float* are legal (unaligned moves).
typedef float V8 __attribute__((vector_size(32), aligned(4)));

#define GRAFT_SIMD_INLINE inline __attribute__((always_inline))

GRAFT_SIMD_INLINE V8 LoadV8(const float* p) {
  V8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

GRAFT_SIMD_INLINE void StoreV8(float* p, V8 v) {
  std::memcpy(p, &v, sizeof(v));
}

GRAFT_SIMD_INLINE V8 Splat(float x) { return V8{x, x, x, x, x, x, x, x}; }

// Sixteen floats: the AVX-512 builds' wide vectors (the GEMM's wide tiles,
// the depthwise convolution's channel blocks). Used only inside
// GRAFT_AVX512VL_TARGET code.
typedef float V16 __attribute__((vector_size(64), aligned(4)));

// Loads, stores and splats of V8 or V16.
template <typename V>
inline constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(float));
template <typename V>
GRAFT_SIMD_INLINE V LoadVec(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
template <typename V>
GRAFT_SIMD_INLINE void StoreVec(float* p, V v) {
  std::memcpy(p, &v, sizeof(v));
}
template <typename V>
GRAFT_SIMD_INLINE V SplatVec(float x);
template <>
GRAFT_SIMD_INLINE V8 SplatVec<V8>(float x) {
  return Splat(x);
}
// Two copies of the 8-float splat: GCC 12 builds a 16-float vector from a
// scalar lane by lane (through the stack, or one masked broadcast per
// lane) in the AVX-512 build, whose vectors it prefers 256 bits wide.
template <>
GRAFT_SIMD_INLINE V16 SplatVec<V16>(float x) {
  const V8 half = Splat(x);
  return __builtin_shufflevector(half, half, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3,
                                 4, 5, 6, 7);
}

// std::min(std::max(v, lo), hi) per lane (a NaN stays NaN); V8 or V16.
template <typename V>
GRAFT_SIMD_INLINE V Clamp(V v, V lo, V hi) {
  v = v < lo ? lo : v;
  return hi < v ? hi : v;
}

// HARD_SWISH, TFLite's float reference operation by operation: x * min(max(x
// + 3, 0), 6) / 6 (an add, the two comparisons, a multiply and an IEEE
// division, each rounded, with nothing to contract into a multiply-add), so
// every width and build gives the same bits, NaN included. The HARD_SWISH
// kernel (activations.cc) and the epilogues it is fused into
// (EpilogueOp::kHardSwish) use these.
GRAFT_SIMD_INLINE float HardSwish(float x) {
  return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
}
template <typename V>  // V8 or V16
GRAFT_SIMD_INLINE V HardSwish(V x) {
  const V zero = {};
  return x * Clamp(x + 3.0f, zero, zero + 6.0f) / 6.0f;
}
// HardSwish over out[i] = HardSwish(in[i]), i < n (in == out allowed).
GRAFT_SIMD_INLINE void HardSwishRun(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) StoreV8(out + i, HardSwish(LoadV8(in + i)));
  for (; i < n; ++i) out[i] = HardSwish(in[i]);
}

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_FLOAT_SIMD_H_
