// Float32 vectors for the float kernels (gemm.cc, depthwise_conv.cc), and
// the switch that runs one kernel source as an AVX2+FMA build where the CPU
// has both. Internal to kernels/.
//
// A kernel writes its body once, with V8 and the always-inline helpers
// below, as an always-inline function, and instantiates it twice: plain
// (the baseline x86-64 or other target) and inside a function marked
// GRAFT_AVX2_FMA_TARGET, where GCC and Clang compile the same vector code to
// 256-bit registers and contract `acc += a * b` into fused multiply-adds.
// It picks one of the two with CpuHasAvx2Fma() at each call (cpu_features.h:
// a test's cap applies at once).
#ifndef GRAFT_DISPATCH_KERNELS_FLOAT_SIMD_H_
#define GRAFT_DISPATCH_KERNELS_FLOAT_SIMD_H_

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

// How many float AVERAGE_POOL_2D / MAX_POOL_2D evaluations ran each build
// (kBaseline, or kAvx2 for the AVX2+FMA one; pooling.cc): tests check with
// it that the path they force is taken.
int64_t FloatPoolCallsForTesting(CpuIsa path);

// How many groups of output pixels the float DEPTHWISE_CONV_2D computed
// together (depthwise_conv.cc), per build as above.
int64_t FloatDepthwisePixelGroupsForTesting(CpuIsa path);

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

// std::min(std::max(v, lo), hi) per lane (a NaN stays NaN).
GRAFT_SIMD_INLINE V8 Clamp(V8 v, V8 lo, V8 hi) {
  v = v < lo ? lo : v;
  return hi < v ? hi : v;
}

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_FLOAT_SIMD_H_
