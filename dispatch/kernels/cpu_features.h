// Which instruction sets the CPU kernels may use, decided at run time
// (internal to dispatch/kernels). Nothing is assumed at build time: every
// path is compiled into the one binary (GCC/Clang function targets) and the
// kernels ask here which to run.
//
// The levels are ordered; each implies the ones below it:
// - kBaseline: what the compiler targets by default (x86-64 SSE2, or any
//   other architecture), the portable vector-extension code.
// - kAvx2: AVX2 and FMA (the float GEMM needs both, the int8 GEMM AVX2).
// - kAvx512Vnni: AVX-512 F, BW, VL, DQ and VNNI: the int8 GEMM on
//   unsigned x signed bytes (vpdpbusd), the int8 depthwise convolution on
//   int16 pairs (vpdpwssd).
//
// KernelIsa() is the level the kernels use: the CPU's, capped by
// $GRAFT_KERNEL_ISA (baseline, avx2, avx512vnni; read once, at the first
// call) or by SetKernelIsaCapForTesting, so that every path runs on a
// machine that has the highest one. A cap above what the CPU has changes
// nothing.
//
// Thread-safety: all functions may be called from any thread; the cap is
// an atomic. Kernels that pick a path at prepare (a packing format) keep
// it for the life of the prepared model; the others pick at each call.
#ifndef GRAFT_DISPATCH_KERNELS_CPU_FEATURES_H_
#define GRAFT_DISPATCH_KERNELS_CPU_FEATURES_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace graft::kernels {

enum class CpuIsa : int { kBaseline = 0, kAvx2 = 1, kAvx512Vnni = 2 };

// "baseline", "avx2", "avx512vnni".
const char* CpuIsaName(CpuIsa isa);
// The level named `name` (as CpuIsaName writes it), or nullopt.
std::optional<CpuIsa> ParseCpuIsa(absl::string_view name);

// The highest level this CPU (and OS: the AVX-512 state enabled) supports
// and this build has code for. Computed once.
CpuIsa DetectedCpuIsa();

// min(DetectedCpuIsa(), cap); the cap is $GRAFT_KERNEL_ISA (an unknown
// name is ignored, with a warning on stderr) until a test sets another.
CpuIsa KernelIsa();

// Caps KernelIsa() at `cap` (tests force lower paths with it); returns the
// previous cap. kAvx512Vnni lifts the cap.
CpuIsa SetKernelIsaCapForTesting(CpuIsa cap);

// Whether KernelIsa() >= isa.
inline bool KernelIsaAtLeast(CpuIsa isa) {
  return static_cast<int>(KernelIsa()) >= static_cast<int>(isa);
}

// Whether the kernels may use AVX-512 VBMI (vpermi2b: a byte lookup in a
// 128-byte table): KernelIsa() is kAvx512Vnni and the CPU has VBMI, which
// most VNNI CPUs do (Ice Lake and later, Zen 4) but Cascade Lake does not.
// Not a level of its own: a kernel that uses it keeps a kAvx512Vnni path
// without it.
bool KernelHasAvx512Vbmi();

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_CPU_FEATURES_H_
