// Reductions, pooling and row normalizations (reduce.cc, pooling.cc,
// softmax.cc) against reference loops.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;

// The same bits, or both NaN: which NaN's payload and sign an operation on
// two NaNs passes on depends on its operand order, which IEEE 754 leaves
// open and the builds' instruction selection decides.
bool SameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof(float)) == 0;
}

TEST(ReduceTest, MatchesReferenceOverRandomAxes) {
  std::mt19937 rng = testing::SeededRng();
  const tfl::BuiltinOperator ops[] = {
      tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM,
      tfl::BuiltinOperator_REDUCE_MAX, tfl::BuiltinOperator_REDUCE_MIN,
      tfl::BuiltinOperator_REDUCE_PROD};
  for (int iter = 0; iter < 60; ++iter) {
    const auto op = ops[iter % 5];
    const int rank = RandomInt(rng, 1, 4);
    Shape shape = testing::RandomShape(rng, rank, 5);
    std::vector<int32_t> axes;
    std::set<int> reduced;
    for (int i = RandomInt(rng, 1, rank); i > 0; --i) {
      int a = RandomInt(rng, -rank, rank - 1);
      axes.push_back(a);  // repeats allowed, as in TFLite
      reduced.insert((a + rank) % rank);
    }
    const bool keep = RandomInt(rng, 0, 1);
    auto x = testing::RandomFloats(rng, NumElements(shape), 0.5f, 1.5f);
    Shape out_shape, kept;
    for (int d = 0; d < rank; ++d) {
      bool r = reduced.count(d);
      if (!r || keep) out_shape.push_back(r ? 1 : shape[d]);
      kept.push_back(r ? 1 : shape[d]);
    }
    std::vector<double> acc(NumElements(kept),
                            op == tfl::BuiltinOperator_REDUCE_PROD ? 1
                            : op == tfl::BuiltinOperator_REDUCE_MAX ? -1e30
                            : op == tfl::BuiltinOperator_REDUCE_MIN ? 1e30 : 0);
    int64_t count = 1;
    for (int d : reduced) count *= shape[d];
    for (int64_t i = 0; i < NumElements(shape); ++i) {
      int64_t rem = i, o = 0, stride = 1;
      for (int d = rank - 1; d >= 0; --d) {
        int64_t c = rem % shape[d];
        rem /= shape[d];
        if (!reduced.count(d)) o += c * stride;
        stride *= kept[d];
      }
      double v = x[i];
      if (op == tfl::BuiltinOperator_REDUCE_PROD) acc[o] *= v;
      else if (op == tfl::BuiltinOperator_REDUCE_MAX) acc[o] = std::max(acc[o], v);
      else if (op == tfl::BuiltinOperator_REDUCE_MIN) acc[o] = std::min(acc[o], v);
      else acc[o] += v;
    }
    std::vector<float> want(acc.size());
    for (size_t i = 0; i < acc.size(); ++i) {
      want[i] = float(op == tfl::BuiltinOperator_MEAN ? acc[i] / count : acc[i]);
    }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId in = g.Input("x", F32, testing::ToVec(shape));
    TensorId ax = g.Constant<int32_t>("axes", {int32_t(axes.size())}, axes);
    tfl::ReducerOptionsT o;
    o.keep_dims = keep;
    g.Output(g.Op(op).In(in, ax).Options(o).Out("y", F32, testing::ToVec(out_shape)));
    auto rt = testing::LoadBuilt(mb);
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, x);
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), testing::ToVec(out_shape));
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want,
                        op == tfl::BuiltinOperator_REDUCE_PROD ? count * count : count,
                        absl::StrCat(EnumNameBuiltinOperator(op), " iteration ", iter));
  }
}

// Reduced dims forming one block between kept ones with an inner extent
// of 8 or more (global pooling over H and W of NHWC) take a direct walk of
// [outer][reduced][inner] slabs: the same combines in the same (input)
// order as an element-by-element float loop, so the same bits, on every
// build, for MEAN, SUM, MAX, MIN and PROD; inner extents up to 130 and
// more leave every tail of its 64-, 32-, 16- and 8-column passes.
TEST(ReduceTest, ReducedBlockGivesTheInputOrderBits) {
  std::mt19937 rng = testing::SeededRng(6);
  const tfl::BuiltinOperator ops[] = {
      tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM,
      tfl::BuiltinOperator_REDUCE_MAX, tfl::BuiltinOperator_REDUCE_MIN,
      tfl::BuiltinOperator_REDUCE_PROD};
  testing::ForEachForcedIsa(
      {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2},
      [&](kernels::CpuIsa isa) {
        for (int iter = 0; iter < 30 && !HasFatalFailure(); ++iter) {
          const auto op = ops[iter % 5];
          // [n, h, w, c] reduced over a block of its middle dims.
          const int n = RandomInt(rng, 1, 3), h = RandomInt(rng, 1, 9),
                    w = RandomInt(rng, 1, 9), c = RandomInt(rng, 8, 130);
          const int first = RandomInt(rng, 0, 1), last = RandomInt(rng, 1, 2);
          const std::vector<int32_t> shape = {n, h, w, c};
          std::vector<int32_t> axes, out_shape;
          for (int d = 0; d < 4; ++d) {
            if (d >= first && d <= last) {
              axes.push_back(d);
            } else {
              out_shape.push_back(shape[d]);
            }
          }
          const int64_t total = int64_t{n} * h * w * c;
          auto x = testing::RandomFloats(rng, total, 0.5f, 1.5f);
          int64_t count = 1, inner = 1;
          for (int d = first; d <= last; ++d) count *= shape[d];
          for (int d = last + 1; d < 4; ++d) inner *= shape[d];
          std::vector<float> want(total / count,
                                  op == tfl::BuiltinOperator_REDUCE_PROD ? 1.0f
                                  : op == tfl::BuiltinOperator_REDUCE_MAX
                                      ? -1e30f
                                  : op == tfl::BuiltinOperator_REDUCE_MIN
                                      ? 1e30f
                                      : 0.0f);
          for (int64_t i = 0; i < total; ++i) {
            const int64_t o = i / (count * inner) * inner + i % inner;
            const float v = x[i];
            float& a = want[o];
            if (op == tfl::BuiltinOperator_REDUCE_PROD) {
              a = a * v;
            } else if (op == tfl::BuiltinOperator_REDUCE_MAX) {
              a = v > a ? v : a;
            } else if (op == tfl::BuiltinOperator_REDUCE_MIN) {
              a = v < a ? v : a;
            } else {
              a = a + v;
            }
          }
          if (op == tfl::BuiltinOperator_MEAN) {
            for (float& v : want) v = v / static_cast<float>(count);
          }
          ModelBuilder mb;
          auto& g = mb.Subgraph("main");
          TensorId in = g.Input("x", F32, shape);
          TensorId ax =
              g.Constant<int32_t>("axes", {int32_t(axes.size())}, axes);
          tfl::ReducerOptionsT o;
          g.Output(g.Op(op).In(in, ax).Options(o).Out("y", F32, out_shape));
          auto rt = testing::LoadBuilt(mb);
          ASSERT_TRUE(rt.ok()) << rt.status();
          testing::SetInput(**rt, 0, x);
          ASSERT_TRUE((*rt)->Invoke().ok());
          const std::vector<float> got = testing::GetOutput<float>(**rt, 0);
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_TRUE(SameFloat(got[i], want[i]))
                << kernels::CpuIsaName(isa) << " "
                << EnumNameBuiltinOperator(op) << " iteration " << iter
                << " output " << i << ": " << got[i] << " vs " << want[i];
          }
        }
      });
}

// The float reductions' baseline and AVX2 builds, each forced and shown to
// run, give the same bits (NaN as NaN): each combines in input order (a
// reduced inner dim is never reassociated). Shapes up to 40 wide leave every tail of the
// 8-float blocks; NaN, infinities and -0 included.
TEST(ReduceTest, FloatBuildsAgreeBitForBit) {
  std::mt19937 rng = testing::SeededRng(5);
  if (static_cast<int>(kernels::DetectedCpuIsa()) <
      static_cast<int>(kernels::CpuIsa::kAvx2)) {
    GTEST_SKIP() << "no AVX2 build to compare on this CPU ("
                 << kernels::CpuIsaName(kernels::DetectedCpuIsa()) << ")";
  }
  const tfl::BuiltinOperator ops[] = {
      tfl::BuiltinOperator_MEAN, tfl::BuiltinOperator_SUM,
      tfl::BuiltinOperator_REDUCE_MAX, tfl::BuiltinOperator_REDUCE_MIN,
      tfl::BuiltinOperator_REDUCE_PROD};
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  const int64_t before[2] = {
      kernels::FloatReduceCallsForTesting(kernels::CpuIsa::kBaseline),
      kernels::FloatReduceCallsForTesting(kernels::CpuIsa::kAvx2)};
  for (int iter = 0; iter < 100; ++iter) {
    const auto op = ops[iter % 5];
    const int rank = RandomInt(rng, 1, 4);
    Shape shape = testing::RandomShape(rng, rank, rank <= 2 ? 40 : 12);
    std::vector<int32_t> axes;
    for (int i = RandomInt(rng, 1, rank); i > 0; --i) {
      axes.push_back(RandomInt(rng, 0, rank - 1));
    }
    std::set<int> reduced(axes.begin(), axes.end());
    Shape out_shape;
    for (int d = 0; d < rank; ++d) {
      if (!reduced.count(d)) out_shape.push_back(shape[d]);
    }
    auto x = testing::RandomFloats(rng, NumElements(shape), -2.0f, 2.0f);
    for (float& v : x) {
      if (RandomInt(rng, 0, 40) == 0) {
        v = specials[RandomInt(rng, 0, std::size(specials) - 1)];
      }
    }
    std::vector<float> got[2];
    for (int path = 0; path < 2; ++path) {
      const kernels::CpuIsa old_cap = kernels::SetKernelIsaCapForTesting(
          path == 0 ? kernels::CpuIsa::kBaseline : kernels::CpuIsa::kAvx2);
      ModelBuilder mb;
      auto& g = mb.Subgraph("main");
      TensorId in = g.Input("x", F32, testing::ToVec(shape));
      TensorId ax = g.Constant<int32_t>("axes", {int32_t(axes.size())}, axes);
      g.Output(g.Op(op).In(in, ax).Out("y", F32, testing::ToVec(out_shape)));
      auto rt = testing::LoadBuilt(mb);
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, x);
      ASSERT_TRUE((*rt)->Invoke().ok());
      got[path] = testing::GetOutput<float>(**rt, 0);
      kernels::SetKernelIsaCapForTesting(old_cap);
    }
    ASSERT_EQ(got[0].size(), got[1].size());
    for (size_t i = 0; i < got[0].size(); ++i) {
      ASSERT_TRUE(SameFloat(got[0][i], got[1][i]))
          << EnumNameBuiltinOperator(op) << " " << ShapeToString(shape)
          << " iteration " << iter << " output " << i << ": " << got[0][i]
          << " vs " << got[1][i];
    }
  }
  EXPECT_GT(kernels::FloatReduceCallsForTesting(kernels::CpuIsa::kBaseline),
            before[0]);
  EXPECT_GT(kernels::FloatReduceCallsForTesting(kernels::CpuIsa::kAvx2),
            before[1]);
}

TEST(ReduceTest, ArgMaxPicksTheFirstMaximum) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2, 3});
  TensorId axis = g.Constant<int32_t>("axis", {1}, {-1});
  g.Output(g.Op(tfl::BuiltinOperator_ARG_MAX).In(x, axis).Out("y", tfl::TensorType_INT64, {2}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<float>(**rt, 0, {1, 5, 5, 7, 2, 7});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<int64_t>(**rt, 0), (std::vector<int64_t>{1, 0}));
}

// A scalar has no dims to reduce: TFLite skips the axes (whatever they
// say) and the output is the input; ARG_MAX has no axis to take and fails.
TEST(ReduceTest, AScalarReducesToItselfAndHasNoArgMaxAxis) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {});
  TensorId axis = g.Constant<int32_t>("axis", {1}, {0});
  g.Output(g.Op(tfl::BuiltinOperator_MEAN).In(x, axis).Out("y", F32, {}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<float>(**rt, 0, {2.5f});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<float>(**rt, 0), (std::vector<float>{2.5f}));

  ModelBuilder arg;
  auto& a = arg.Subgraph("main");
  TensorId ax = a.Input("x", F32, {});
  TensorId aaxis = a.Constant<int32_t>("axis", {1}, {0});
  a.Output(a.Op(tfl::BuiltinOperator_ARG_MAX).In(ax, aaxis).Out("y", tfl::TensorType_INT64, {}));
  auto bad = testing::LoadBuilt(arg);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("axis 0 out of range for rank 0"),
            std::string::npos)
      << bad.status();
}

TEST(PoolingTest, AverageAndMaxMatchReference) {
  std::mt19937 rng = testing::SeededRng(1);
  for (int iter = 0; iter < 30; ++iter) {
    const bool is_max = iter % 2;
    const int n = RandomInt(rng, 1, 2), h = RandomInt(rng, 1, 9), w = RandomInt(rng, 1, 9);
    const int c = RandomInt(rng, 1, 5), kh = RandomInt(rng, 1, 3), kw = RandomInt(rng, 1, 3);
    const int sh = RandomInt(rng, 1, 2), sw = RandomInt(rng, 1, 2);
    const auto pad = RandomInt(rng, 0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
    const int oh = pad == tfl::Padding_SAME ? (h + sh - 1) / sh : (h - kh + sh) / sh;
    const int ow = pad == tfl::Padding_SAME ? (w + sw - 1) / sw : (w - kw + sw) / sw;
    if (oh <= 0 || ow <= 0) continue;
    const int ph = std::max(0, ((oh - 1) * sh + kh - h) / 2);
    const int pw = std::max(0, ((ow - 1) * sw + kw - w) / 2);
    auto x = testing::RandomFloats(rng, int64_t(n) * h * w * c);
    std::vector<float> want;
    for (int b = 0; b < n; ++b)
      for (int y = 0; y < oh; ++y)
        for (int xo = 0; xo < ow; ++xo)
          for (int ch = 0; ch < c; ++ch) {
            double acc = is_max ? -1e30 : 0;
            int cnt = 0;
            for (int fy = 0; fy < kh; ++fy)
              for (int fx = 0; fx < kw; ++fx) {
                int iy = y * sh - ph + fy, ix = xo * sw - pw + fx;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                double v = x[((size_t(b) * h + iy) * w + ix) * c + ch];
                acc = is_max ? std::max(acc, v) : acc + v;
                ++cnt;
              }
            want.push_back(float(is_max ? acc : acc / cnt));
          }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId in = g.Input("x", F32, {n, h, w, c});
    tfl::Pool2DOptionsT o;
    o.padding = pad, o.stride_h = sh, o.stride_w = sw, o.filter_height = kh, o.filter_width = kw;
    g.Output(g.Op(is_max ? tfl::BuiltinOperator_MAX_POOL_2D : tfl::BuiltinOperator_AVERAGE_POOL_2D)
                 .In(in).Options(o).Out("y", F32, {n, oh, ow, c}));
    auto rt = testing::LoadBuilt(mb, 2);
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, x);
    ASSERT_TRUE((*rt)->Invoke().ok());
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want, kh * kw,
                        absl::StrCat("iteration ", iter));
  }
}

// The pools' vector builds against the scalar loop's float operations
// (window order, std::max, one division, the clamp), bit for bit, with
// channel counts that leave every tail of the 8-float blocks; each build
// forced and shown to run.
TEST(PoolTest, VectorPathsMatchTheScalarLoopBitForBit) {
  std::mt19937 rng = testing::SeededRng(21);
  testing::ForEachForcedIsa({kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2},
                            [&](kernels::CpuIsa isa) {
    const int64_t before = kernels::FloatPoolCallsForTesting(isa);
    for (int iter = 0; iter < 80; ++iter) {
      const bool is_max = iter % 2;
      const bool relu6 = RandomInt(rng, 0, 2) == 0;
      // A quarter one column wide (1-D pools, run as one row).
      const int n = RandomInt(rng, 1, 2), h = RandomInt(rng, 1, 9),
                w = RandomInt(rng, 0, 3) == 0 ? 1 : RandomInt(rng, 1, 20);
      const int c = RandomInt(rng, 1, 40), kh = RandomInt(rng, 1, 4),
                kw = RandomInt(rng, 1, 4);
      const int sh = RandomInt(rng, 1, 3), sw = RandomInt(rng, 1, 3);
      const auto pad =
          RandomInt(rng, 0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
      const int oh = pad == tfl::Padding_SAME ? (h + sh - 1) / sh
                                              : (h - kh + sh) / sh;
      const int ow = pad == tfl::Padding_SAME ? (w + sw - 1) / sw
                                              : (w - kw + sw) / sw;
      if (oh <= 0 || ow <= 0) continue;
      const int ph = std::max(0, ((oh - 1) * sh + kh - h) / 2);
      const int pw = std::max(0, ((ow - 1) * sw + kw - w) / 2);
      auto x = testing::RandomFloats(rng, int64_t(n) * h * w * c, -8, 8);
      for (float& v : x) {  // NaNs: the window order decides what comes out
        if (RandomInt(rng, 0, 49) == 0) v = std::nanf("");
      }
      const float lo = relu6 ? 0.0f : std::numeric_limits<float>::lowest();
      const float hi = relu6 ? 6.0f : std::numeric_limits<float>::max();
      std::vector<float> want;
      for (int b = 0; b < n; ++b)
        for (int y = 0; y < oh; ++y)
          for (int xo = 0; xo < ow; ++xo)
            for (int ch = 0; ch < c; ++ch) {
              const int y0 = std::max(0, y * sh - ph),
                        y1 = std::min(h, y * sh - ph + kh);
              const int x0 = std::max(0, xo * sw - pw),
                        x1 = std::min(w, xo * sw - pw + kw);
              float acc = is_max ? std::numeric_limits<float>::lowest() : 0.0f;
              for (int iy = y0; iy < y1; ++iy)
                for (int ix = x0; ix < x1; ++ix) {
                  const float v = x[((size_t(b) * h + iy) * w + ix) * c + ch];
                  acc = is_max ? std::max(acc, v) : acc + v;
                }
              const float v =
                  is_max ? acc : acc / static_cast<float>((y1 - y0) * (x1 - x0));
              want.push_back(std::min(std::max(v, lo), hi));
            }
      ModelBuilder mb;
      auto& g = mb.Subgraph("main");
      TensorId in = g.Input("x", F32, {n, h, w, c});
      tfl::Pool2DOptionsT o;
      o.padding = pad, o.stride_h = sh, o.stride_w = sw, o.filter_height = kh,
      o.filter_width = kw;
      o.fused_activation_function = relu6 ? tfl::ActivationFunctionType_RELU6
                                          : tfl::ActivationFunctionType_NONE;
      g.Output(g.Op(is_max ? tfl::BuiltinOperator_MAX_POOL_2D
                           : tfl::BuiltinOperator_AVERAGE_POOL_2D)
                   .In(in)
                   .Options(o)
                   .Out("y", F32, {n, oh, ow, c}));
      auto rt = testing::LoadBuilt(mb, RandomInt(rng, 1, 2));
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, x);
      ASSERT_TRUE((*rt)->Invoke().ok());
      const std::vector<float> got = testing::GetOutput<float>(**rt, 0);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
            << kernels::CpuIsaName(isa) << " iteration " << iter << " element "
            << i << ": got " << got[i] << " want " << want[i];
      }
    }
    EXPECT_GT(kernels::FloatPoolCallsForTesting(isa), before)
        << kernels::CpuIsaName(isa) << " path not taken";
  });
}

TEST(SoftmaxTest, SoftmaxLogSoftmaxAndL2NormMatchReference) {
  std::mt19937 rng = testing::SeededRng(2);
  for (int iter = 0; iter < 15; ++iter) {
    const int rows = RandomInt(rng, 1, 6), depth = RandomInt(rng, 1, 50);
    auto x = testing::RandomFloats(rng, int64_t(rows) * depth, -5, 5);
    const float beta = 0.5f + iter % 3;
    std::vector<float> sm(x.size()), lsm(x.size()), l2(x.size());
    for (int r = 0; r < rows; ++r) {
      const float* v = x.data() + size_t(r) * depth;
      double mx = *std::max_element(v, v + depth), s = 0, s1 = 0, sq = 0;
      for (int i = 0; i < depth; ++i) {
        s += std::exp((v[i] - mx) * beta);
        s1 += std::exp(v[i] - mx);
        sq += double(v[i]) * v[i];
      }
      for (int i = 0; i < depth; ++i) {
        sm[size_t(r) * depth + i] = float(std::exp((v[i] - mx) * beta) / s);
        lsm[size_t(r) * depth + i] = float(v[i] - mx - std::log(s1));
        l2[size_t(r) * depth + i] = float(v[i] / std::max(std::sqrt(sq), 1e-6));
      }
    }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId in = g.Input("x", F32, {rows, depth});
    tfl::SoftmaxOptionsT so;
    so.beta = beta;
    g.Output(g.Op(tfl::BuiltinOperator_SOFTMAX).In(in).Options(so).Out("sm", F32, {rows, depth}));
    g.Output(g.Op(tfl::BuiltinOperator_LOG_SOFTMAX).In(in).Out("lsm", F32, {rows, depth}));
    g.Output(g.Op(tfl::BuiltinOperator_L2_NORMALIZATION).In(in).Out("l2", F32, {rows, depth}));
    auto rt = testing::LoadBuilt(mb, 2);
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, x);
    ASSERT_TRUE((*rt)->Invoke().ok());
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), sm, depth, "softmax");
    testing::ExpectNear(testing::GetOutput<float>(**rt, 1), lsm, depth, "log_softmax");
    testing::ExpectNear(testing::GetOutput<float>(**rt, 2), l2, depth, "l2_normalization");
  }
}

// Quantized MEAN folds 1/count into its integer multiplier (TFLite's
// QuantizedMeanOrSum): the result stays within 1 LSB of the real mean,
// requantized, for any pair of scales; in each build (the rescale goes 4
// outputs at a time, then the rest one by one).
TEST(ReduceTest, QuantizedMeanIsWithin1LsbOfTheRealMean) {
  std::mt19937 rng = testing::SeededRng(3);
  const auto isas = {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2};
  testing::ForEachForcedIsa(isas, [&](kernels::CpuIsa isa) {
    for (int iter = 0; iter < 40; ++iter) {
      const int rows = RandomInt(rng, 1, 11), cols = RandomInt(rng, 1, 300);
      const float si = 0.01f * RandomInt(rng, 1, 50);
      const float so = 0.01f * RandomInt(rng, 1, 50);
      const int zi = RandomInt(rng, -30, 30), zo = RandomInt(rng, -30, 30);
      ModelBuilder mb;
      auto& g = mb.Subgraph("main");
      TensorId x = g.Input("x", tfl::TensorType_INT8, {rows, cols});
      TensorId axes = g.Constant<int32_t>("axes", {1}, {1});
      tfl::ReducerOptionsT o;
      TensorId y = g.Op(tfl::BuiltinOperator_MEAN)
                       .In(x, axes)
                       .Options(o)
                       .Out("y", tfl::TensorType_INT8, {rows});
      g.Quantize(x, si, zi).Quantize(y, so, zo).Output(y);
      auto rt = testing::LoadBuilt(mb);
      ASSERT_TRUE(rt.ok()) << rt.status();
      std::vector<int8_t> v(rows * cols);
      for (auto& e : v) e = static_cast<int8_t>(RandomInt(rng, -128, 127));
      testing::SetInput(**rt, 0, v);
      ASSERT_TRUE((*rt)->Invoke().ok());
      const std::vector<int8_t> got = testing::GetOutput<int8_t>(**rt, 0);
      for (int r = 0; r < rows; ++r) {
        double sum = 0;
        for (int c = 0; c < cols; ++c) sum += si * (v[r * cols + c] - zi);
        const double q =
            std::min(127.0, std::max(-128.0, std::round(sum / cols / so) + zo));
        ASSERT_LE(std::abs(got[r] - q), 1.0)
            << kernels::CpuIsaName(isa) << " iteration " << iter << " row "
            << r;
      }
    }
  });
}

// One drawn quantized SUM of T (tensor type `type`) with equal input and
// output scales (a multiplier of exactly 1) and small values, which gives
// the integer sum itself: checked exactly. A quarter of the draws are a
// block of middle dims over an inner dim of 8 or more, as global pooling
// (the block form). INT16 has zero points 0.
template <typename T>
void CheckQuantizedSum(std::mt19937& rng, tfl::TensorType type,
                       const std::string& what) {
  const bool pooling = RandomInt(rng, 0, 3) == 0;
  const int rank = pooling ? 4 : RandomInt(rng, 1, 4);
  std::vector<int> dims(rank);
  for (int& d : dims) d = RandomInt(rng, 1, 6);
  std::vector<int32_t> axes;
  if (pooling) {
    dims = {RandomInt(rng, 1, 2), RandomInt(rng, 1, 5), RandomInt(rng, 1, 5),
            RandomInt(rng, 8, 40)};
    axes = {1, 2};
  } else {
    for (int d = 0; d < rank; ++d) {
      if (RandomInt(rng, 0, 1)) axes.push_back(d);
    }
    if (axes.empty()) axes.push_back(RandomInt(rng, 0, rank - 1));
  }
  const bool keep_dims = RandomInt(rng, 0, 1) == 1;
  const bool is16 = std::is_same_v<T, int16_t>;
  const bool is_unsigned = std::is_same_v<T, uint8_t>;
  const int zi = is16 ? 0 : RandomInt(rng, -20, 20) + (is_unsigned ? 128 : 0);
  const int zo = is16 ? 0 : RandomInt(rng, -5, 5) + (is_unsigned ? 128 : 0);
  int64_t n = 1;
  for (int d : dims) n *= d;
  std::vector<int> out_dims;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (reduced) count *= dims[d];
    if (!reduced)
      out_dims.push_back(dims[d]);
    else if (keep_dims)
      out_dims.push_back(1);
  }
  if (count > 40) return;  // keep |sum| <= 120: no clamp
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x =
      g.Input("x", type, std::vector<int32_t>(dims.begin(), dims.end()));
  TensorId ax =
      g.Constant<int32_t>("axes", {static_cast<int32_t>(axes.size())}, axes);
  tfl::ReducerOptionsT o;
  o.keep_dims = keep_dims;
  TensorId y = g.Op(tfl::BuiltinOperator_SUM)
                   .In(x, ax)
                   .Options(o)
                   .Out("y", type,
                        std::vector<int32_t>(out_dims.begin(), out_dims.end()));
  g.Quantize(x, 0.25f, zi).Quantize(y, 0.25f, zo).Output(y);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(zi + RandomInt(rng, -3, 3));
  testing::SetInput(**rt, 0, v);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<T> got = testing::GetOutput<T>(**rt, 0);
  // The expected sums, by input index.
  std::vector<int> want(got.size(), zo);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, out_index = 0, out_stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = rest % dims[d];
      rest /= dims[d];
      if (std::find(axes.begin(), axes.end(), d) == axes.end()) {
        out_index += c * out_stride;
        out_stride *= dims[d];
      }
    }
    want[out_index] += v[i] - zi;
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(int{got[i]}, want[i]) << what << " output " << i;
  }
}

// Quantized SUM of INT8, UINT8 and INT16 summed exactly (CheckQuantizedSum)
// over drawn shapes of rank 1 to 4, any axes, with and without keep_dims,
// in each build, forced and shown to run.
TEST(ReduceTest, QuantizedSumAccumulatesExactlyInEveryBuild) {
  std::mt19937 rng = testing::SeededRng(4);
  const auto isas = {kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2};
  testing::ForEachForcedIsa(isas, [&](kernels::CpuIsa isa) {
    const int64_t before = kernels::QuantizedSumCallsForTesting(isa);
    for (int iter = 0; iter < 90; ++iter) {
      const std::string what =
          absl::StrCat(kernels::CpuIsaName(isa), " iteration ", iter);
      switch (iter % 3) {
        case 0:
          CheckQuantizedSum<int8_t>(rng, tfl::TensorType_INT8, what + " INT8");
          break;
        case 1:
          CheckQuantizedSum<uint8_t>(rng, tfl::TensorType_UINT8,
                                     what + " UINT8");
          break;
        default:
          CheckQuantizedSum<int16_t>(rng, tfl::TensorType_INT16,
                                     what + " INT16");
          break;
      }
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(kernels::QuantizedSumCallsForTesting(isa), before)
        << kernels::CpuIsaName(isa) << " path not taken";
  });
}

TEST(ReduceTest, QuantizedMaxRefusesAnOutputScaleOfItsOwnAtLoad) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_INT8, {2, 3});
  TensorId axes = g.Constant<int32_t>("axes", {1}, {1});
  tfl::ReducerOptionsT o;
  TensorId y = g.Op(tfl::BuiltinOperator_REDUCE_MAX).In(x, axes).Options(o).Out(
      "y", tfl::TensorType_INT8, {2});
  g.Quantize(x, 0.5f, 0).Quantize(y, 0.25f, 0).Output(y);
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("REDUCE_MAX"), std::string::npos)
      << rt.status();
  EXPECT_NE(rt.status().message().find("scale"), std::string::npos)
      << rt.status();
}

}  // namespace
}  // namespace graft
