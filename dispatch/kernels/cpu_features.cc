#include "dispatch/kernels/cpu_features.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace graft::kernels {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
CpuIsa Detect() {
  __builtin_cpu_init();
  // libgcc's checks include the OS's XCR0 bits for the AVX and AVX-512
  // register state, so a kernel that does not save them reads as no
  // support.
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    return CpuIsa::kBaseline;
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vnni")) {
    return CpuIsa::kAvx512Vnni;
  }
  return CpuIsa::kAvx2;
}
bool DetectVbmi() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vbmi");
}
#else
CpuIsa Detect() { return CpuIsa::kBaseline; }
bool DetectVbmi() { return false; }
#endif

CpuIsa CapFromEnv() {
  const char* env = std::getenv("GRAFT_KERNEL_ISA");
  if (env == nullptr || *env == '\0') return CpuIsa::kAvx512Vnni;
  if (std::optional<CpuIsa> isa = ParseCpuIsa(env)) return *isa;
  std::fprintf(stderr,
               "graft: GRAFT_KERNEL_ISA=%s is not one of baseline, avx2, "
               "avx512vnni; ignored\n",
               env);
  return CpuIsa::kAvx512Vnni;
}

// -1 until the first KernelIsa() reads the environment.
std::atomic<int> g_cap{-1};

}  // namespace

const char* CpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kBaseline:
      return "baseline";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512Vnni:
      return "avx512vnni";
  }
  return "?";
}

std::optional<CpuIsa> ParseCpuIsa(absl::string_view name) {
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}) {
    if (name == CpuIsaName(isa)) return isa;
  }
  return std::nullopt;
}

CpuIsa DetectedCpuIsa() {
  static const CpuIsa detected = Detect();
  return detected;
}

CpuIsa KernelIsa() {
  int cap = g_cap.load(std::memory_order_relaxed);
  if (cap < 0) {
    int expected = -1;
    g_cap.compare_exchange_strong(expected, static_cast<int>(CapFromEnv()),
                                  std::memory_order_relaxed);
    cap = g_cap.load(std::memory_order_relaxed);
  }
  const int detected = static_cast<int>(DetectedCpuIsa());
  return static_cast<CpuIsa>(cap < detected ? cap : detected);
}

bool KernelHasAvx512Vbmi() {
  static const bool vbmi = DetectVbmi();
  return vbmi && KernelIsaAtLeast(CpuIsa::kAvx512Vnni);
}

CpuIsa SetKernelIsaCapForTesting(CpuIsa cap) {
  KernelIsa();  // the environment's cap first, so it is what comes back
  return static_cast<CpuIsa>(
      g_cap.exchange(static_cast<int>(cap), std::memory_order_relaxed));
}

}  // namespace graft::kernels
