// Helpers for the kernel tests: seeded random data, single-op models run
// through the Runtime, and comparison with a test's reference
// implementation under tolerance.h's rules.
#ifndef GRAFT_DISPATCH_KERNELS_KERNEL_TEST_UTIL_H_
#define GRAFT_DISPATCH_KERNELS_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "core/model_builder.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/runtime.h"
#include "dispatch/tensor.h"
#include "gtest/gtest.h"

namespace graft::testing {

// The seed of this test: $GRAFT_TEST_SEED if set, else a fixed default so
// CI is reproducible. Printed (and recorded as a test property) so a
// failure can be replayed.
uint32_t TestSeed();

// A generator seeded with TestSeed() (+ `salt`), announcing the seed.
std::mt19937 SeededRng(uint32_t salt = 0);

std::vector<float> RandomFloats(std::mt19937& rng, int64_t n, float lo = -1,
                                float hi = 1);
std::vector<int32_t> RandomInts(std::mt19937& rng, int64_t n, int32_t lo,
                                int32_t hi);
int RandomInt(std::mt19937& rng, int lo, int hi);  // inclusive
Shape RandomShape(std::mt19937& rng, int rank, int max_dim = 5);

// Caps KernelIsa() at `cap` for one scope, then restores the cap before.
class IsaCap {
 public:
  explicit IsaCap(kernels::CpuIsa cap)
      : old_(kernels::SetKernelIsaCapForTesting(cap)) {}
  ~IsaCap() { kernels::SetKernelIsaCapForTesting(old_); }
  IsaCap(const IsaCap&) = delete;
  IsaCap& operator=(const IsaCap&) = delete;

 private:
  kernels::CpuIsa old_;
};

// Runs body(isa) once per level of `isas` with KernelIsa() capped at it, so
// each kernel path runs on a machine that has the highest; a level this
// CPU lacks is skipped, saying so on stdout (the next machine that has it
// runs it). Restores the cap; stops after a fatal failure.
void ForEachForcedIsa(std::initializer_list<kernels::CpuIsa> isas,
                      absl::FunctionRef<void(kernels::CpuIsa)> body);

// Loads `builder`'s model into a Runtime with `threads` threads.
absl::StatusOr<std::unique_ptr<Runtime>> LoadBuilt(ModelBuilder& builder,
                                                   int threads = 1);

template <typename T>
void SetInput(Runtime& rt, size_t i, const std::vector<T>& values) {
  Tensor* t = rt.input(i);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->bytes, values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(t->raw_data, values.data(), t->bytes);
}

template <typename T>
std::vector<T> GetOutput(Runtime& rt, size_t i) {
  const Tensor* t = rt.output(i);
  std::vector<T> out(t->bytes / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), t->raw_data, t->bytes);
  return out;
}

inline std::vector<int32_t> ToVec(const Shape& s) {
  return std::vector<int32_t>(s.begin(), s.end());
}

// Expects got == want within the float32 tolerance for reductions of
// `reduction_length` terms (tolerance.h); reports the first mismatches.
// The absolute tolerance scales with the largest |want|, or with
// `term_scale` (the largest |term| summed, e.g. |input| x |weight|) when
// that is larger: a sum that cancels to nearly 0 carries its terms' error.
void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                int64_t reduction_length = 1, const std::string& what = "",
                double term_scale = 0);

// One INT8 DEPTHWISE_CONV_2D, depth multiplier 1: input scale
// kDepthwiseInScale, per-channel weight scales `ws` (bias scales
// kDepthwiseInScale * ws), output scale kDepthwiseOutScale. The tests draw
// the fields; oh and ow must be the output's size under TFLite's padding.
struct DepthwiseCase {
  int batch, h, w, c, kh, kw, stride_h, stride_w, dil_h, dil_w;
  bool same;  // SAME padding, else VALID
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  int in_zp, out_zp, oh, ow;
  std::vector<float> ws;       // [c]
  std::vector<int8_t> wv, xv;  // [kh][kw][c], [batch][h][w][c]
  std::vector<int32_t> bv;     // [c]
};

inline constexpr float kDepthwiseInScale = 0.05f, kDepthwiseOutScale = 0.1f;

// The shape, window, activation and zero points, for failure messages.
std::string DescribeDepthwise(const DepthwiseCase& d);

// TFLite's reference_integer_ops::DepthwiseConvPerChannel with TFLite's
// padding (SAME: half the total pad before) and activation range.
std::vector<int8_t> ReferenceDepthwise(const DepthwiseCase& d);

// Runs `d` as a one-op model on `threads` threads under whatever
// KernelIsa() is now; empty (with a failure) if the model does not load.
std::vector<int8_t> RunDepthwise(const DepthwiseCase& d, int threads);

}  // namespace graft::testing

#endif  // GRAFT_DISPATCH_KERNELS_KERNEL_TEST_UTIL_H_
