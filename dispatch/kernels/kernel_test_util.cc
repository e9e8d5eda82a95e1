#include "dispatch/kernels/kernel_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_format.h"
#include "dispatch/kernels/quantization_util.h"
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

std::string DescribeDepthwise(const DepthwiseCase& d) {
  return absl::StrFormat(
      "%dx%dx%dx%d filter %dx%d stride %d,%d dilation %d,%d %s act %d zp %d/%d",
      d.batch, d.h, d.w, d.c, d.kh, d.kw, d.stride_h, d.stride_w, d.dil_h,
      d.dil_w, d.same ? "SAME" : "VALID", static_cast<int>(d.act), d.in_zp,
      d.out_zp);
}

std::vector<int8_t> ReferenceDepthwise(const DepthwiseCase& d) {
  const int eh = (d.kh - 1) * d.dil_h + 1, ew = (d.kw - 1) * d.dil_w + 1;
  const int pad_h =
      d.same ? std::max(0, ((d.oh - 1) * d.stride_h + eh - d.h) / 2) : 0;
  const int pad_w =
      d.same ? std::max(0, ((d.ow - 1) * d.stride_w + ew - d.w) / 2) : 0;
  int act_min = -128, act_max = 127;
  if (d.act != tfl::ActivationFunctionType_NONE) {
    act_min = std::max(-128, d.out_zp);
  }
  if (d.act == tfl::ActivationFunctionType_RELU6) {
    act_max = std::min<int>(
        127,
        d.out_zp + static_cast<int>(std::round(6.0f / kDepthwiseOutScale)));
  }
  std::vector<int8_t> out(int64_t{d.batch} * d.oh * d.ow * d.c);
  for (int b = 0; b < d.batch; ++b) {
    for (int oy = 0; oy < d.oh; ++oy) {
      for (int ox = 0; ox < d.ow; ++ox) {
        for (int c = 0; c < d.c; ++c) {
          int32_t acc = 0;
          for (int ky = 0; ky < d.kh; ++ky) {
            for (int kx = 0; kx < d.kw; ++kx) {
              const int iy = oy * d.stride_h - pad_h + ky * d.dil_h;
              const int ix = ox * d.stride_w - pad_w + kx * d.dil_w;
              if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
              acc += d.wv[(int64_t{ky} * d.kw + kx) * d.c + c] *
                     (d.xv[((int64_t{b} * d.h + iy) * d.w + ix) * d.c + c] -
                      d.in_zp);
            }
          }
          acc += d.bv[c];
          const kernels::QuantizedMultiplier m = kernels::QuantizeMultiplier(
              double{kDepthwiseInScale} * double{d.ws[c]} /
              double{kDepthwiseOutScale});
          const int32_t v =
              kernels::MultiplyByQuantizedMultiplier(acc, m) + d.out_zp;
          out[((int64_t{b} * d.oh + oy) * d.ow + ox) * d.c + c] =
              static_cast<int8_t>(std::min(act_max, std::max(act_min, v)));
        }
      }
    }
  }
  return out;
}

std::vector<int8_t> RunDepthwise(const DepthwiseCase& d, int threads) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT8, {d.batch, d.h, d.w, d.c});
  TensorId tw = g.Constant<int8_t>("w", {1, d.kh, d.kw, d.c}, d.wv);
  TensorId tb = g.Constant<int32_t>("b", {d.c}, d.bv);
  g.Quantize(x, kDepthwiseInScale, d.in_zp);
  std::vector<float> bs(d.c);
  for (int i = 0; i < d.c; ++i) bs[i] = kDepthwiseInScale * d.ws[i];
  std::vector<int64_t> zeros(d.c, 0);
  g.QuantizePerChannel(tw, d.ws, zeros, 3).QuantizePerChannel(tb, bs, zeros, 0);
  tfl::DepthwiseConv2DOptionsT o;
  o.stride_h = d.stride_h, o.stride_w = d.stride_w;
  o.dilation_h_factor = d.dil_h, o.dilation_w_factor = d.dil_w;
  o.depth_multiplier = 1;
  o.padding = d.same ? tfl::Padding_SAME : tfl::Padding_VALID;
  o.fused_activation_function = d.act;
  TensorId y = g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D)
                   .In(x, tw, tb)
                   .Options(o)
                   .Out("y", tfl::TensorType_INT8, {d.batch, d.oh, d.ow, d.c});
  g.Quantize(y, kDepthwiseOutScale, d.out_zp).Output(y);
  auto rt = LoadBuilt(mb, threads);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  SetInput(**rt, 0, d.xv);
  EXPECT_TRUE((*rt)->Invoke().ok());
  return GetOutput<int8_t>(**rt, 0);
}

}  // namespace graft::testing
