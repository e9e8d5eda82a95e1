// Fusing a same-shape ADD into the convolution that writes one of its
// inputs (SubgraphExecutor::FuseEpilogues, EvalContext::OutputReady): the
// ADD runs on each block of output rows as the convolution writes them, on
// the thread that wrote them, and gives bit for bit what it gives as an op
// of its own. The unfused runs are the same model with the convolutions'
// outputs also declared model outputs (a model output is never fused).
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/model_builder.h"
#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::GetOutput;
using testing::LoadBuilt;
using testing::SetInput;

constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I8 = tfl::TensorType_INT8;

struct Shape4 {
  int h, w, c;
};

template <typename T>
std::vector<T> Draw(std::mt19937& rng, size_t n) {
  std::vector<T> v(n);
  if constexpr (std::is_same_v<T, float>) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (T& x : v) x = d(rng);
  } else {
    std::uniform_int_distribution<int> d(-128, 127);
    for (T& x : v) x = static_cast<T>(d(rng));
  }
  return v;
}

// x -> c1 = conv3x3(x) relu -> c2 = conv3x3(c1, stride) -> s = ADD(c2, r)
// relu, r = x or a strided 1x1 conv of x computed after c2 (so the ADD is
// fused into the conv run last) -> y = ADD(conv1x1(s), conv1x1'(s)) (into
// the second) -> conv1x1(y). `unfused` also declares the two producers
// the ADDs would be fused into model outputs.
template <typename T>
void BuildResidual(ModelBuilder& mb, const Shape4& in, int stride,
                   bool projection, bool unfused, std::mt19937& rng) {
  const bool q = std::is_same_v<T, int8_t>;
  const tfl::TensorType type = q ? I8 : F32;
  auto& g = mb.Subgraph("main");
  const int oh = (in.h + stride - 1) / stride, ow = (in.w + stride - 1) / stride;
  const int c = in.c;
  auto act = [&](TensorId t) {
    if (q) g.Quantize(t, 0.05f, -3);
    return t;
  };
  auto conv = [&](TensorId src, int k, int s, int cin, int h, int w,
                  const char* name, tfl::ActivationFunctionType fn) {
    const std::string wn = absl::StrCat(name, "_w"), bn = absl::StrCat(name, "_b");
    TensorId weights, bias;
    if (q) {
      weights = g.Constant<int8_t>(wn, {c, k, k, cin},
                                   Draw<int8_t>(rng, size_t(c) * k * k * cin));
      std::vector<float> scales(c);
      std::vector<int64_t> zeros(c, 0);
      for (int i = 0; i < c; ++i) scales[i] = 0.002f + 0.0005f * (i % 5);
      g.QuantizePerChannel(weights, scales, zeros, 0);
      std::vector<int32_t> b(c);
      for (int i = 0; i < c; ++i) b[i] = (i % 7) * 40 - 120;
      bias = g.Constant<int32_t>(bn, {c}, b);
      std::vector<float> bs(c);
      for (int i = 0; i < c; ++i) bs[i] = 0.05f * scales[i];
      g.QuantizePerChannel(bias, bs, zeros, 0);
    } else {
      weights = g.Constant<float>(wn, {c, k, k, cin},
                                  Draw<float>(rng, size_t(c) * k * k * cin));
      bias = g.Constant<float>(bn, {c}, Draw<float>(rng, c));
    }
    tfl::Conv2DOptionsT o;
    o.padding = tfl::Padding_SAME, o.stride_h = s, o.stride_w = s;
    o.fused_activation_function = fn;
    const int out_h = (h + s - 1) / s, out_w = (w + s - 1) / s;
    return act(g.Op(tfl::BuiltinOperator_CONV_2D)
                   .In(src, weights, bias)
                   .Options(o)
                   .Out(name, type, {1, out_h, out_w, c}));
  };
  auto add = [&](TensorId a, TensorId b, const char* name,
                 tfl::ActivationFunctionType fn) {
    tfl::AddOptionsT o;
    o.fused_activation_function = fn;
    TensorId out = g.Op(tfl::BuiltinOperator_ADD)
                       .In(a, b)
                       .Options(o)
                       .Out(name, type, {1, oh, ow, c});
    if (q) g.Quantize(out, 0.08f, 5);
    return out;
  };
  const auto relu = tfl::ActivationFunctionType_RELU;
  const auto none = tfl::ActivationFunctionType_NONE;
  TensorId x = act(g.Input("x", type, {1, in.h, in.w, c}));
  TensorId c1 = conv(x, 3, 1, c, in.h, in.w, "c1", relu);       // op 0
  TensorId c2 = conv(c1, 3, stride, c, in.h, in.w, "c2", none);  // op 1
  TensorId r = x;
  if (projection) r = conv(x, 1, stride, c, in.h, in.w, "proj", none);
  TensorId s = add(c2, r, "s", relu);  // fused into c2, or into proj
  TensorId p1 = conv(s, 1, 1, c, oh, ow, "p1", none);
  TensorId p2 = conv(s, 1, 1, c, oh, ow, "p2", relu);
  TensorId y = add(p1, p2, "y", none);  // fused into p2
  g.Output(conv(y, 1, 1, c, oh, ow, "z", none));  // (y itself would not be)
  if (unfused) g.Output(projection ? r : c2).Output(p2);
}

struct Case {
  Shape4 in;
  int stride;
  bool projection;
};

template <typename T>
void CheckFusedMatchesUnfused(uint32_t seed, int threads) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dim(1, 23), ch(1, 40), st(1, 2);
  Case k{{dim(rng), dim(rng), ch(rng)}, st(rng), (rng() & 1) != 0};
  // A strided block needs the projection (the shapes would differ).
  k.projection = k.projection || k.stride != 1;
  SCOPED_TRACE(absl::StrFormat(
      "seed %u, threads %d, input %dx%dx%d, stride %d, %s residual", seed,
      threads, k.in.h, k.in.w, k.in.c, k.stride,
      k.projection ? "projected" : "identity"));
  std::vector<std::vector<T>> outputs;
  const std::vector<T> input = [&] {
    std::mt19937 r(seed ^ 0x5eed);
    return Draw<T>(r, size_t(k.in.h) * k.in.w * k.in.c);
  }();
  for (bool unfused : {false, true}) {
    std::mt19937 weights_rng(seed);  // the same weights in both models
    ModelBuilder mb;
    BuildResidual<T>(mb, k.in, k.stride, k.projection, unfused, weights_rng);
    auto rt = LoadBuilt(mb, threads);
    ASSERT_TRUE(rt.ok()) << rt.status();
    const RuntimeReport report = (*rt)->Report();
    const std::vector<OpReport>& ops = report.subgraphs[0].ops;
    int fused = 0;
    for (const OpReport& op : ops) {
      if (op.detail.find("fused into op") != std::string::npos) ++fused;
    }
    EXPECT_EQ(fused, unfused ? 0 : 2) << report.ToString();
    if (!unfused) {
      // The first ADD goes into the op that wrote its last input.
      const size_t add1 = k.projection ? 3 : 2;
      const size_t producer = k.projection ? 2 : 1;
      EXPECT_EQ(ops[add1].detail,
                absl::StrFormat("fused into op %d (CONV_2D), run on its "
                                "output rows as they are written",
                                producer));
      EXPECT_THAT(ops[producer].detail,
                  ::testing::EndsWith(absl::StrFormat(" + ADD of op %d", add1)));
    }
    SetInput(**rt, 0, input);
    for (int run = 0; run < 2; ++run) ASSERT_TRUE((*rt)->Invoke().ok());
    outputs.push_back(GetOutput<T>(**rt, 0));
  }
  ASSERT_EQ(outputs[0].size(), outputs[1].size());
  for (size_t i = 0; i < outputs[0].size(); ++i) {
    ASSERT_EQ(outputs[0][i], outputs[1][i]) << "element " << i;
  }
}

// Every convolution path, each ISA level forced in turn (the baseline's,
// AVX2's 16-bit GEMM, AVX-512 VNNI's taps and 1x1 forms), at 1-3 threads.
template <typename T>
void SweepPathsAndThreads() {
  testing::ForEachForcedIsa(
      {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2,
       kernels::CpuIsa::kAvx512Vnni},
      [](kernels::CpuIsa isa) {
        SCOPED_TRACE(kernels::CpuIsaName(isa));
        for (int threads : {1, 2, 3}) {
          for (uint32_t seed = 1; seed <= 40; ++seed) {
            CheckFusedMatchesUnfused<T>(seed, threads);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      });
}

TEST(FusedAddTest, FloatMatchesUnfusedBitForBit) {
  SweepPathsAndThreads<float>();
}

TEST(FusedAddTest, Int8MatchesUnfusedBitForBit) {
  SweepPathsAndThreads<int8_t>();
}

}  // namespace
}  // namespace graft
