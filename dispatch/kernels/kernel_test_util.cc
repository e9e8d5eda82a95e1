#include "dispatch/kernels/kernel_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_format.h"
#include "dispatch/tolerance.h"

namespace graft::testing {

uint32_t TestSeed() {
  static const uint32_t seed = [] {
    uint32_t s = 20261122;
    if (const char* env = std::getenv("GRAFT_TEST_SEED")) {
      s = static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
    }
    return s;
  }();
  return seed;
}

std::mt19937 SeededRng(uint32_t salt) {
  const uint32_t seed = TestSeed();
  std::cout << "[ seed     ] GRAFT_TEST_SEED=" << seed
            << (salt ? absl::StrFormat(" (salt %d)", salt) : "") << "\n";
  ::testing::Test::RecordProperty("seed", static_cast<int>(seed));
  return std::mt19937(seed + salt);
}

std::vector<float> RandomFloats(std::mt19937& rng, int64_t n, float lo,
                                float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<int32_t> RandomInts(std::mt19937& rng, int64_t n, int32_t lo,
                                int32_t hi) {
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> v(n);
  for (int32_t& x : v) x = dist(rng);
  return v;
}

int RandomInt(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

Shape RandomShape(std::mt19937& rng, int rank, int max_dim) {
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(RandomInt(rng, 1, max_dim));
  return s;
}

void ForEachForcedIsa(std::initializer_list<kernels::CpuIsa> isas,
                      absl::FunctionRef<void(kernels::CpuIsa)> body) {
  for (kernels::CpuIsa isa : isas) {
    if (static_cast<int>(kernels::DetectedCpuIsa()) < static_cast<int>(isa)) {
      std::printf("skipping the %s path: this CPU has %s\n",
                  kernels::CpuIsaName(isa),
                  kernels::CpuIsaName(kernels::DetectedCpuIsa()));
      continue;
    }
    {
      IsaCap cap(isa);
      body(isa);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
}

absl::StatusOr<std::unique_ptr<Runtime>> LoadBuilt(ModelBuilder& builder,
                                                   int threads) {
  absl::StatusOr<Model> model = std::move(builder).Build();
  if (!model.ok()) return model.status();
  RuntimeOptions options;
  options.num_threads = threads;
  return Runtime::LoadModel(*std::move(model), options);
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want,
                int64_t reduction_length, const std::string& what,
                double term_scale) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double max_abs = term_scale;
  for (float w : want) {
    if (std::isfinite(w)) max_abs = std::max(max_abs, std::fabs(double{w}));
  }
  FloatTolerance tol = Float32Tolerance(reduction_length, max_abs);
  int reported = 0, bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!tol.Accepts(got[i], want[i])) {
      ++bad;
      if (reported++ < 5) {
        ADD_FAILURE() << what << ": element " << i << ": got " << got[i]
                      << ", want " << want[i] << " (atol " << tol.atol
                      << ", rtol " << tol.rtol << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.size()
                    << " elements differ";
}

}  // namespace graft::testing
