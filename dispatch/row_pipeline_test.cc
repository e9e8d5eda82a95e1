// Row pipelines (SubgraphExecutor::FuseRowPipelines): a chain of a
// convolution, a depthwise convolution and a 1x1 convolution (and a
// second 1x1 one, or a residual ADD fused into the last) run band by band
// gives bit for bit what the ops give run one after the other. The
// unfused runs are the same model with the intermediates also declared
// model outputs (a model output is never an intermediate of a pipeline).
// The limits are lowered so small drawn shapes form pipelines, with bands
// of every height from one row to the whole.
#include "dispatch/row_pipeline.h"

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
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
using testing::RandomFloats;
using testing::SetInput;

constexpr auto F32 = tfl::TensorType_FLOAT32;

// Sets the limits for one scope.
class Limits {
 public:
  explicit Limits(RowPipelineLimits limits)
      : old_(SetRowPipelineLimitsForTesting(limits)) {}
  ~Limits() { SetRowPipelineLimitsForTesting(old_); }
  Limits(const Limits&) = delete;
  Limits& operator=(const Limits&) = delete;

 private:
  RowPipelineLimits old_;
};

struct Case {
  int h, w, in_c, mid_c, out_c;
  int head_k, head_stride;  // head_k 1: a 1x1 expansion
  bool head_same;
  int dw_k, dw_stride;
  bool dw_same;
  bool residual;  // ADD(x, projection), fused into the projection
  bool tail;      // a second 1x1 convolution after the projection
  int64_t buffer_bytes;

  std::string ToString() const {
    return absl::StrFormat(
        "%dx%dx%d -> conv %dx%d/%d %s -> %d -> depthwise %dx%d/%d %s -> 1x1 "
        "-> %d%s%s, band buffers %d bytes",
        h, w, in_c, head_k, head_k, head_stride, head_same ? "SAME" : "VALID",
        mid_c, dw_k, dw_k, dw_stride, dw_same ? "SAME" : "VALID", out_c,
        residual ? " + x" : "", tail ? " -> 1x1" : "", buffer_bytes);
  }
};

int OutSize(int in, int k, int stride, bool same) {
  return same ? (in + stride - 1) / stride : (in - k) / stride + 1;
}

Case DrawCase(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  Case k;
  k.head_k = pick(0, 2) == 0 ? 3 : 1;
  k.head_stride = k.head_k == 3 ? pick(1, 2) : 1;
  k.head_same = k.head_k == 1 || pick(0, 1) == 1;
  k.dw_k = pick(0, 3) == 0 ? 5 : 3;
  k.dw_stride = pick(1, 2);
  k.dw_same = pick(0, 3) != 0;
  k.h = pick(k.head_k + k.dw_k + 2, 40);
  k.w = pick(k.head_k + k.dw_k + 2, 40);
  k.in_c = pick(1, 20);
  // Channels: multiples of 8 (the depthwise row kernel) and not.
  k.mid_c = pick(0, 1) == 0 ? 8 * pick(1, 6) : pick(1, 50);
  k.out_c = pick(1, 30);
  k.residual =
      k.head_k == 1 && k.dw_stride == 1 && k.dw_same && pick(0, 1) == 1;
  if (k.residual) k.out_c = k.in_c;
  k.tail = !k.residual && pick(0, 2) == 0;
  // From a band of one row (every buffer the least) to the whole output.
  k.buffer_bytes = int64_t{1} << pick(8, 19);
  return k;
}

// x -> head conv (RELU6) -> depthwise (RELU6) -> 1x1 projection [-> +x
// -> 1x1] [-> 1x1]. `unfused` also declares the head's and the depthwise's
// outputs model outputs. Returns how many ops the chain has.
int Build(ModelBuilder& mb, const Case& k, bool unfused, std::mt19937& rng) {
  auto& g = mb.Subgraph("main");
  const auto relu6 = tfl::ActivationFunctionType_RELU6;
  const auto none = tfl::ActivationFunctionType_NONE;
  auto conv = [&](TensorId src, int kk, int stride, bool same, int cin,
                  int cout, int h, int w, const char* name,
                  tfl::ActivationFunctionType fn) {
    TensorId weights =
        g.Constant<float>(absl::StrCat(name, "_w"), {cout, kk, kk, cin},
                          RandomFloats(rng, size_t(cout) * kk * kk * cin));
    TensorId bias = g.Constant<float>(absl::StrCat(name, "_b"), {cout},
                                      RandomFloats(rng, cout));
    tfl::Conv2DOptionsT o;
    o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_h = stride, o.stride_w = stride;
    o.fused_activation_function = fn;
    return g.Op(tfl::BuiltinOperator_CONV_2D)
        .In(src, weights, bias)
        .Options(o)
        .Out(name, F32,
             {1, OutSize(h, kk, stride, same), OutSize(w, kk, stride, same),
              cout});
  };
  TensorId x = g.Input("x", F32, {1, k.h, k.w, k.in_c});
  const int h1 = OutSize(k.h, k.head_k, k.head_stride, k.head_same);
  const int w1 = OutSize(k.w, k.head_k, k.head_stride, k.head_same);
  TensorId e = conv(x, k.head_k, k.head_stride, k.head_same, k.in_c, k.mid_c,
                    k.h, k.w, "head", relu6);
  tfl::DepthwiseConv2DOptionsT o;
  o.padding = k.dw_same ? tfl::Padding_SAME : tfl::Padding_VALID;
  o.stride_h = k.dw_stride, o.stride_w = k.dw_stride;
  o.depth_multiplier = 1;
  o.fused_activation_function = relu6;
  const int h2 = OutSize(h1, k.dw_k, k.dw_stride, k.dw_same);
  const int w2 = OutSize(w1, k.dw_k, k.dw_stride, k.dw_same);
  TensorId dw_w =
      g.Constant<float>("dw_w", {1, k.dw_k, k.dw_k, k.mid_c},
                        RandomFloats(rng, size_t(k.dw_k) * k.dw_k * k.mid_c));
  TensorId dw_b =
      g.Constant<float>("dw_b", {k.mid_c}, RandomFloats(rng, k.mid_c));
  TensorId d = g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D)
                   .In(e, dw_w, dw_b)
                   .Options(o)
                   .Out("dw", F32, {1, h2, w2, k.mid_c});
  TensorId p = conv(d, 1, 1, true, k.mid_c, k.out_c, h2, w2, "project", none);
  int ops = 3;
  if (k.residual) {
    tfl::AddOptionsT a;
    p = g.Op(tfl::BuiltinOperator_ADD)
            .In(p, x)
            .Options(a)
            .Out("sum", F32, {1, h2, w2, k.out_c});
    // Read by an op (a model output's buffer is never shared).
    p = conv(p, 1, 1, true, k.out_c, k.in_c, h2, w2, "next", none);
  } else if (k.tail) {
    p = conv(p, 1, 1, true, k.out_c, k.in_c, h2, w2, "tail", relu6);
    ops = 4;
  }
  g.Output(p);
  if (unfused) g.Output(e).Output(d);
  return ops;
}

void CheckPipelineMatchesUnfused(uint32_t seed, int threads) {
  std::mt19937 rng(seed);
  const Case k = DrawCase(rng);
  SCOPED_TRACE(
      absl::StrFormat("seed %u, threads %d, %s", seed, threads, k.ToString()));
  Limits limits({/*min_intermediate_bytes=*/1, k.buffer_bytes});
  const std::vector<float> input = [&] {
    std::mt19937 r(seed ^ 0x5eed);
    return RandomFloats(r, size_t(k.h) * k.w * k.in_c);
  }();
  std::vector<std::vector<float>> outputs;
  for (bool unfused : {false, true}) {
    std::mt19937 weights_rng(seed);  // the same weights in both models
    ModelBuilder mb;
    const int chain = Build(mb, k, unfused, weights_rng);
    auto rt = LoadBuilt(mb, threads);
    ASSERT_TRUE(rt.ok()) << rt.status();
    const RuntimeReport report = (*rt)->Report();
    const std::vector<OpReport>& ops = report.subgraphs[0].ops;
    if (unfused) {
      EXPECT_THAT(ops[0].detail, ::testing::Not(::testing::HasSubstr("bands")))
          << report.ToString();
    } else {
      EXPECT_THAT(ops[0].detail,
                  ::testing::HasSubstr(absl::StrFormat(
                      " + CONV_2D of op %d, in bands of", chain - 1)))
          << report.ToString();
      for (int i = 1; i < chain; ++i) {
        EXPECT_EQ(ops[i].detail,
                  "fused into op 0 (CONV_2D), run on bands of its rows");
      }
      if (k.residual) {
        EXPECT_EQ(ops[3].detail,
                  "fused into op 2 (CONV_2D), run on its output rows as they "
                  "are written");
      }
    }
    SetInput(**rt, 0, input);
    for (int run = 0; run < 2; ++run) ASSERT_TRUE((*rt)->Invoke().ok());
    outputs.push_back(GetOutput<float>(**rt, 0));
  }
  ASSERT_EQ(outputs[0].size(), outputs[1].size());
  for (size_t i = 0; i < outputs[0].size(); ++i) {
    ASSERT_EQ(outputs[0][i], outputs[1][i]) << "element " << i;
  }
}

// Each float ISA level forced in turn, at 1-3 threads.
TEST(RowPipelineTest, MatchesUnfusedBitForBit) {
  testing::ForEachForcedIsa({kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2,
                             kernels::CpuIsa::kAvx512Vnni},
                            [](kernels::CpuIsa isa) {
                              SCOPED_TRACE(kernels::CpuIsaName(isa));
                              for (int threads : {1, 2, 3}) {
                                for (uint32_t seed = 1; seed <= 100; ++seed) {
                                  CheckPipelineMatchesUnfused(seed, threads);
                                  if (::testing::Test::HasFatalFailure())
                                    return;
                                }
                              }
                            });
}

// At the default limits: a chain whose intermediates stay small is left
// alone, one with an intermediate of 1 MB or more becomes a pipeline.
TEST(RowPipelineTest, DefaultLimitsTakeLargeIntermediatesOnly) {
  for (int h : {16, 64}) {
    Case k{h,          64,
           16,         64,
           16,         /*head_k=*/1,
           1,          true,
           /*dw_k=*/3, 1,
           true,       /*residual=*/false,
           false,      0};
    std::mt19937 rng(1);
    ModelBuilder mb;
    Build(mb, k, /*unfused=*/false, rng);
    auto rt = LoadBuilt(mb, 2);
    ASSERT_TRUE(rt.ok()) << rt.status();
    const RuntimeReport report = (*rt)->Report();
    const std::string& detail = report.subgraphs[0].ops[0].detail;
    // 64 x 64 x 64 floats: 1 MB.
    if (h == 64) {
      EXPECT_THAT(detail, ::testing::HasSubstr("in bands of")) << h;
    } else {
      EXPECT_THAT(detail, ::testing::Not(::testing::HasSubstr("bands"))) << h;
    }
  }
}

}  // namespace
}  // namespace graft
