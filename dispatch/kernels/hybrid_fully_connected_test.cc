// Hybrid FULLY_CONNECTED with INT8 weights: each ISA path the machine has,
// forced, against the baseline path (which fully_connected_test.cc compares
// with TFLite's arithmetic), bit for bit, over drawn shapes: depths around
// the quantizers' groups of 8 and the VNNI path's groups of 4, outputs
// around its 16-column panels, row counts around its 8-row tiles, symmetric
// and asymmetric inputs, per-tensor and per-channel scales, weights holding
// -128 (which keep TFLite's quirked dot product, not the VNNI path) and not.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/hybrid_util.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using kernels::CpuIsa;
using testing::RandomInt;

constexpr auto F32 = tfl::TensorType_FLOAT32;

using testing::IsaCap;

struct FcCase {
  int m = 1, n = 1, k = 1, threads = 1;
  bool asymmetric = false;
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  std::vector<int8_t> w;
  std::vector<float> scales, bias, x;
};

std::vector<float> RunFc(const FcCase& c) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {c.m, c.k});
  TensorId tw = g.Constant<int8_t>("w", {c.n, c.k}, c.w);
  g.QuantizePerChannel(tw, c.scales, std::vector<int64_t>(c.scales.size(), 0),
                       0);
  TensorId tb =
      c.bias.empty() ? kNoTensor : g.Constant<float>("b", {c.n}, c.bias);
  tfl::FullyConnectedOptionsT o;
  o.asymmetric_quantize_inputs = c.asymmetric;
  o.fused_activation_function = c.act;
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
               .In(x, tw, tb)
               .Options(o)
               .Out("y", F32, {c.m, c.n}));
  auto rt = testing::LoadBuilt(mb, c.threads);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  EXPECT_NE((*rt)->Report().ToString().find("FullyConnectedHybrid"),
            std::string::npos);
  testing::SetInput(**rt, 0, c.x);
  EXPECT_TRUE((*rt)->Invoke().ok());
  return testing::GetOutput<float>(**rt, 0);
}

TEST(HybridFullyConnectedTest, EveryIsaMatchesTheBaselinePath) {
  std::mt19937 rng = testing::SeededRng(5);
  const CpuIsa detected = kernels::DetectedCpuIsa();
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  int64_t vnni_expected = 0;
  const int64_t vnni0 = kernels::HybridVnniCallsForTesting();
  for (int iter = 0; iter < 60; ++iter) {
    FcCase c;
    c.m = RandomInt(rng, 1, 19), c.n = RandomInt(rng, 1, 70);
    c.k = iter < 20 ? iter + 1 : RandomInt(rng, 1, 200);
    c.threads = RandomInt(rng, 1, 3);
    if (iter >= 55 && iter < 59) {  // chunks of 2^18 MACs: split in two
      c.m = RandomInt(rng, 12, 19), c.n = RandomInt(rng, 64, 130);
      c.k = RandomInt(rng, 600, 900), c.threads = 2;
    }
    c.asymmetric = iter % 2;
    c.act = acts[iter % 4];
    const int minus128 = iter % 3 == 2 ? RandomInt(rng, 1, 20) : 0;
    c.w.resize(size_t(c.n) * c.k);
    for (int8_t& v : c.w) {
      v = static_cast<int8_t>(RandomInt(rng, 0, 99) < minus128
                                  ? -128
                                  : RandomInt(rng, -127, 127));
    }
    const bool has_minus128 =
        std::find(c.w.begin(), c.w.end(), int8_t{-128}) != c.w.end();
    c.scales = testing::RandomFloats(rng, iter % 5 == 0 ? 1 : c.n, 1e-3f,
                                     0.05f);
    if (iter % 3 != 0) c.bias = testing::RandomFloats(rng, c.n);
    c.x = testing::RandomFloats(rng, int64_t{c.m} * c.k, -2, 3);
    if (c.m > 1) std::fill(c.x.begin() + c.k, c.x.begin() + 2 * c.k, 0.0f);
    if (iter == 59) std::fill(c.x.begin(), c.x.end(), 0.0f);
    std::vector<float> want;
    {
      IsaCap cap(CpuIsa::kBaseline);
      want = RunFc(c);
    }
    for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}) {
      if (static_cast<int>(isa) > static_cast<int>(detected)) continue;
      IsaCap cap(isa);
      const std::vector<float> got = RunFc(c);
      ASSERT_EQ(got.size(), want.size());
      // Bitwise, so that signed zeros count.
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0)
          << CpuIsaName(isa) << " iteration " << iter << " m " << c.m
          << " n " << c.n << " k " << c.k;
      if (isa == CpuIsa::kAvx512Vnni && !has_minus128 && iter != 59) {
        ++vnni_expected;
      }
    }
  }
  if (detected == CpuIsa::kAvx512Vnni) {
    EXPECT_GE(kernels::HybridVnniCallsForTesting() - vnni0, vnni_expected);
    EXPECT_GT(vnni_expected, 0);
  } else {
    EXPECT_EQ(kernels::HybridVnniCallsForTesting(), vnni0);
  }
}

}  // namespace
}  // namespace graft
