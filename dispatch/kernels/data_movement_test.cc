// Kernels that move elements (reshape_ops.cc, transpose.cc (and
// REVERSE_V2),
// concat_split.cc, slice.cc, pad.cc, gather.cc, tile.cc, resize.cc, and
// scatter_topk.cc's WHERE) against
// reference index arithmetic and hand-computed NumPy results, across dtypes.
#include <algorithm>
#include <functional>
#include <numeric>

#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I32 = tfl::TensorType_INT32;

std::vector<float> Iota(int64_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

// Runs a one-input model built by `build` on 0, 1, 2, ... and returns
// output `out` (shape checked against `want_shape`).
template <typename T = float>
std::vector<T> RunIota(const std::vector<int32_t>& in_shape,
                       const std::function<void(SubgraphBuilder&, TensorId)>& build,
                       const std::vector<int32_t>& want_shape, int out = 0,
                       tfl::TensorType type = F32) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", type, in_shape);
  build(g, x);
  auto rt = testing::LoadBuilt(mb);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  int64_t n = 1;
  for (int32_t d : in_shape) n *= d;
  std::vector<T> in(n);
  std::iota(in.begin(), in.end(), T(0));
  testing::SetInput(**rt, 0, in);
  EXPECT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::ToVec((*rt)->output(out)->shape), want_shape);
  return testing::GetOutput<T>(**rt, out);
}

TEST(ReshapeTest, ReshapeSqueezeExpandDims) {
  auto y = RunIota({2, 3, 4}, [](SubgraphBuilder& g, TensorId x) {
    TensorId s = g.Constant<int32_t>("s", {2}, {-1, 6});
    TensorId r = g.Op(tfl::BuiltinOperator_RESHAPE).In(x, s).Out("r", F32, {4, 6});
    tfl::SqueezeOptionsT so;
    TensorId e = g.Op(tfl::BuiltinOperator_EXPAND_DIMS)
                     .In(r, g.Constant<int32_t>("a", {}, {0}))
                     .Out("e", F32, {1, 4, 6});
    g.Output(g.Op(tfl::BuiltinOperator_SQUEEZE).In(e).Options(so).Out("q", F32, {4, 6}));
  }, {4, 6});
  EXPECT_EQ(y, Iota(24));
}

TEST(TransposeTest, MatchesReferenceForRandomPermutations) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 30; ++iter) {
    const int rank = RandomInt(rng, 1, 6);
    Shape s = testing::RandomShape(rng, rank, 4);
    std::vector<int32_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int32_t> out_shape;
    for (int d : perm) out_shape.push_back(s[d]);
    const bool int8 = iter % 3 == 0;
    std::vector<int64_t> strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * s[d + 1];
    const int64_t n = NumElements(s);
    std::vector<float> want(n);
    for (int64_t o = 0; o < n; ++o) {
      int64_t rem = o, src = 0;
      for (int d = rank - 1; d >= 0; --d) {
        src += (rem % out_shape[d]) * strides[perm[d]];
        rem /= out_shape[d];
      }
      want[o] = float(int8 ? int8_t(src) : src);
    }
    auto build = [&](SubgraphBuilder& g, TensorId x) {
      TensorId p = g.Constant<int32_t>("perm", {rank}, perm);
      g.Output(g.Op(tfl::BuiltinOperator_TRANSPOSE).In(x, p).Out(
          "y", int8 ? tfl::TensorType_INT8 : F32, out_shape));
    };
    if (int8) {
      auto got = RunIota<int8_t>(testing::ToVec(s), build, out_shape, 0, tfl::TensorType_INT8);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(float(got[i]), want[i]) << i;
    } else {
      EXPECT_EQ(RunIota(testing::ToVec(s), build, out_shape), want) << "iteration " << iter;
    }
  }
}

// REVERSE_V2 along random sets of axes (some negative), float32 and int8,
// against the reversed index of every element.
TEST(ReverseTest, MatchesReferenceForRandomAxes) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 30; ++iter) {
    const int rank = RandomInt(rng, 1, 5);
    Shape s = testing::RandomShape(rng, rank, 4);
    std::vector<int32_t> axes;
    std::vector<bool> rev(rank, false);
    for (int d = 0; d < rank; ++d) {
      if (RandomInt(rng, 0, 1) == 0) continue;
      axes.push_back(RandomInt(rng, 0, 1) ? d : d - rank);
      rev[d] = true;
    }
    if (axes.empty()) axes.push_back(0), rev[0] = true;
    std::shuffle(axes.begin(), axes.end(), rng);
    const bool int8 = iter % 3 == 0;
    const int64_t n = NumElements(s);
    std::vector<float> want(n);
    for (int64_t o = 0; o < n; ++o) {
      int64_t rem = o, src = 0, stride = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t i = rem % s[d];
        src += (rev[d] ? s[d] - 1 - i : i) * stride;
        rem /= s[d];
        stride *= s[d];
      }
      want[o] = float(int8 ? int8_t(src) : src);
    }
    const tfl::TensorType type = int8 ? tfl::TensorType_INT8 : F32;
    auto build = [&](SubgraphBuilder& g, TensorId x) {
      TensorId a = g.Constant<int32_t>(
          "axes", {static_cast<int32_t>(axes.size())}, axes);
      g.Output(g.Op(tfl::BuiltinOperator_REVERSE_V2)
                   .In(x, a)
                   .Out("y", type, testing::ToVec(s)));
    };
    if (int8) {
      auto got = RunIota<int8_t>(testing::ToVec(s), build, testing::ToVec(s),
                                 0, type);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(float(got[i]), want[i]) << i;
    } else {
      EXPECT_EQ(RunIota(testing::ToVec(s), build, testing::ToVec(s)), want)
          << "iteration " << iter;
    }
  }
}

TEST(ConcatSplitTest, ConcatenationSplitPackUnpack) {
  // concat([x, x], axis=-1) of x = iota(2x2): [[0 1 0 1] [2 3 2 3]]
  auto c = RunIota({2, 2}, [](SubgraphBuilder& g, TensorId x) {
    tfl::ConcatenationOptionsT o;
    o.axis = -1;
    g.Output(g.Op(tfl::BuiltinOperator_CONCATENATION).In(x, x).Options(o).Out("y", F32, {2, 4}));
  }, {2, 4});
  EXPECT_EQ(c, (std::vector<float>{0, 1, 0, 1, 2, 3, 2, 3}));
  // split(iota(2x4), 2, axis=1)[1] = [[2 3] [6 7]]
  auto s = RunIota({2, 4}, [](SubgraphBuilder& g, TensorId x) {
    tfl::SplitOptionsT o;
    o.num_splits = 2;
    auto outs = g.Op(tfl::BuiltinOperator_SPLIT)
                    .In(g.Constant<int32_t>("axis", {}, {1}), x)
                    .Options(o)
                    .Outs({{"a", F32, {2, 2}}, {"b", F32, {2, 2}}});
    g.Output(outs[0]).Output(outs[1]);
  }, {2, 2}, 1);
  EXPECT_EQ(s, (std::vector<float>{2, 3, 6, 7}));
  // pack([x, x], axis=0) then unpack axis 1 -> [x[:, 1] , x[:,1]] ...
  auto p = RunIota({3}, [](SubgraphBuilder& g, TensorId x) {
    tfl::PackOptionsT po;
    po.values_count = 2, po.axis = 1;
    TensorId packed = g.Op(tfl::BuiltinOperator_PACK).In(x, x).Options(po).Out("p", F32, {3, 2});
    tfl::UnpackOptionsT uo;
    uo.num = 3, uo.axis = 0;
    auto outs = g.Op(tfl::BuiltinOperator_UNPACK).In(packed).Options(uo).Outs(
        {{"u0", F32, {2}}, {"u1", F32, {2}}, {"u2", F32, {2}}});
    g.Output(outs[2]);
  }, {2});
  EXPECT_EQ(p, (std::vector<float>{2, 2}));
}

struct StridedCase {
  std::vector<int32_t> begin, end, strides;
  int begin_mask, end_mask, ellipsis, new_axis, shrink;
  std::vector<int32_t> want_shape;
  std::vector<float> want;
};

TEST(SliceTest, StridedSliceFollowsNumpySemantics) {
  // x = iota(3x4): [[0 1 2 3] [4 5 6 7] [8 9 10 11]]
  const std::vector<StridedCase> cases = {
      {{0, 1}, {3, 3}, {1, 1}, 0, 0, 0, 0, 0, {3, 2}, {1, 2, 5, 6, 9, 10}},  // x[:, 1:3]
      {{-1, 0}, {0, 0}, {-1, 2}, 0, 2, 0, 0, 0, {2, 2}, {8, 10, 4, 6}},      // x[-1:0:-1, ::2]
      {{1, 0}, {2, 0}, {1, 1}, 0, 2, 0, 0, 1, {4}, {4, 5, 6, 7}},            // x[1]
      {{0, -1}, {0, 0}, {1, 1}, 1, 0, 1, 0, 2, {3}, {3, 7, 11}},             // x[..., -1]
      {{0}, {0}, {1}, 0, 0, 0, 1, 0, {1, 3, 4}, Iota(12)},                   // x[None]
      {{0, 5}, {3, 10}, {1, 1}, 0, 0, 0, 0, 0, {3, 0}, {}},                  // clamped, empty
      {{2, 3}, {0, 0}, {-1, -1}, 0, 0, 0, 0, 0, {2, 3}, {11, 10, 9, 7, 6, 5}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const StridedCase& c = cases[i];
    const int n = int(c.begin.size());
    auto y = RunIota({3, 4}, [&](SubgraphBuilder& g, TensorId x) {
      tfl::StridedSliceOptionsT o;
      o.begin_mask = c.begin_mask, o.end_mask = c.end_mask, o.ellipsis_mask = c.ellipsis;
      o.new_axis_mask = c.new_axis, o.shrink_axis_mask = c.shrink;
      g.Output(g.Op(tfl::BuiltinOperator_STRIDED_SLICE)
                   .In(x, g.Constant<int32_t>("b", {n}, c.begin), g.Constant<int32_t>("e", {n}, c.end),
                       g.Constant<int32_t>("s", {n}, c.strides))
                   .Options(o)
                   .Out("y", F32, c.want_shape));
    }, c.want_shape);
    EXPECT_EQ(y, c.want) << "case " << i;
  }
  auto s = RunIota({3, 4}, [](SubgraphBuilder& g, TensorId x) {
    g.Output(g.Op(tfl::BuiltinOperator_SLICE)
                 .In(x, g.Constant<int32_t>("b", {2}, {1, 1}), g.Constant<int64_t>("s", {2}, {-1, 2}))
                 .Out("y", F32, {2, 2}));
  }, {2, 2});
  EXPECT_EQ(s, (std::vector<float>{5, 6, 9, 10}));
}

TEST(PadTest, ConstantAndMirrorPadding) {
  auto p = RunIota({2, 2}, [](SubgraphBuilder& g, TensorId x) {
    g.Output(g.Op(tfl::BuiltinOperator_PADV2)
                 .In(x, g.Constant<int32_t>("p", {2, 2}, {1, 0, 0, 1}), g.Constant<float>("v", {}, {9}))
                 .Out("y", F32, {3, 3}));
  }, {3, 3});
  EXPECT_EQ(p, (std::vector<float>{9, 9, 9, 0, 1, 9, 2, 3, 9}));
  for (auto mode : {tfl::MirrorPadMode_REFLECT, tfl::MirrorPadMode_SYMMETRIC}) {
    auto m = RunIota({3}, [&](SubgraphBuilder& g, TensorId x) {
      tfl::MirrorPadOptionsT o;
      o.mode = mode;
      g.Output(g.Op(tfl::BuiltinOperator_MIRROR_PAD)
                   .In(x, g.Constant<int32_t>("p", {1, 2}, {2, 2}))
                   .Options(o)
                   .Out("y", F32, {7}));
    }, {7});
    EXPECT_EQ(m, mode == tfl::MirrorPadMode_REFLECT
                     ? (std::vector<float>{2, 1, 0, 1, 2, 1, 0})
                     : (std::vector<float>{1, 0, 0, 1, 2, 2, 1}));
  }
}

TEST(GatherTest, GatherAxisBatchDimsAndGatherNd) {
  // x = iota(2x3x2)
  auto a = RunIota({2, 3, 2}, [](SubgraphBuilder& g, TensorId x) {
    tfl::GatherOptionsT o;
    o.axis = 1;
    g.Output(g.Op(tfl::BuiltinOperator_GATHER)
                 .In(x, g.Constant<int64_t>("i", {2}, {2, 0}))
                 .Options(o)
                 .Out("y", F32, {2, 2, 2}));
  }, {2, 2, 2});
  EXPECT_EQ(a, (std::vector<float>{4, 5, 0, 1, 10, 11, 6, 7}));
  auto b = RunIota({2, 3, 2}, [](SubgraphBuilder& g, TensorId x) {
    tfl::GatherOptionsT o;
    o.axis = 1, o.batch_dims = 1;
    g.Output(g.Op(tfl::BuiltinOperator_GATHER)
                 .In(x, g.Constant<int32_t>("i", {2, 1}, {1, 2}))
                 .Options(o)
                 .Out("y", F32, {2, 1, 2}));
  }, {2, 1, 2});
  EXPECT_EQ(b, (std::vector<float>{2, 3, 10, 11}));
  auto c = RunIota({2, 3, 2}, [](SubgraphBuilder& g, TensorId x) {
    g.Output(g.Op(tfl::BuiltinOperator_GATHER_ND)
                 .In(x, g.Constant<int32_t>("i", {2, 2}, {1, 2, 0, 1}))
                 .Out("y", F32, {2, 2}));
  }, {2, 2});
  EXPECT_EQ(c, (std::vector<float>{10, 11, 2, 3}));
}

TEST(GatherTest, OutOfRangeIndexFailsInvoke) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {3});
  TensorId i = g.Input("i", I32, {1});
  g.Output(g.Op(tfl::BuiltinOperator_GATHER).In(x, i).Out("y", F32, {1}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<int32_t>(**rt, 1, {3});
  EXPECT_TRUE(absl::IsOutOfRange((*rt)->Invoke()));
}

TEST(TileTest, TileBroadcastToAndSpaceToDepth) {
  auto t = RunIota({2}, [](SubgraphBuilder& g, TensorId x) {
    g.Output(g.Op(tfl::BuiltinOperator_TILE).In(x, g.Constant<int32_t>("m", {1}, {3})).Out("y", F32, {6}));
  }, {6});
  EXPECT_EQ(t, (std::vector<float>{0, 1, 0, 1, 0, 1}));
  auto b = RunIota({2, 1}, [](SubgraphBuilder& g, TensorId x) {
    g.Output(g.Op(tfl::BuiltinOperator_BROADCAST_TO)
                 .In(x, g.Constant<int32_t>("s", {3}, {2, 2, 3}))
                 .Out("y", F32, {2, 2, 3}));
  }, {2, 2, 3});
  EXPECT_EQ(b, (std::vector<float>{0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1}));
  auto s = RunIota({1, 2, 2, 1}, [](SubgraphBuilder& g, TensorId x) {
    tfl::SpaceToDepthOptionsT o;
    o.block_size = 2;
    g.Output(g.Op(tfl::BuiltinOperator_SPACE_TO_DEPTH).In(x).Options(o).Out("y", F32, {1, 1, 1, 4}));
  }, {1, 1, 1, 4});
  EXPECT_EQ(s, (std::vector<float>{0, 1, 2, 3}));
}

// Each op takes x = 0, 1, 2, ... of shape [2, 3] and a second input
// `param` whose values shape its output: prepared again at every invoke.
// Returns the output after invoking with `param` set to `values`.
std::vector<float> RunWithParam(tfl::BuiltinOperator op,
                                const std::vector<int32_t>& values,
                                const std::vector<int32_t>& want_shape) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2, 3});
  TensorId param = g.Input("param", I32, {static_cast<int32_t>(values.size())});
  auto b = g.Op(op);
  if (op == tfl::BuiltinOperator_STRIDED_SLICE) {
    b.In(x, g.Constant<int32_t>("begin", {2}, {0, 1}), param);
  } else {
    b.In(x, param);
  }
  g.Output(b.Out("y", F32, {-1, -1}));
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  testing::SetInput(**rt, 0, Iota(6));
  testing::SetInput(**rt, 1, values);
  absl::Status st = (*rt)->Invoke();
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), want_shape);
  return testing::GetOutput<float>(**rt, 0);
}

TEST(DynamicShapeTest, OutputShapesFromValuesComputedAtInvoke) {
  EXPECT_EQ(RunWithParam(tfl::BuiltinOperator_TILE, {2, 1}, {4, 3}),
            (std::vector<float>{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(RunWithParam(tfl::BuiltinOperator_TILE, {1, 0}, {2, 0}),
            std::vector<float>{});
  EXPECT_EQ(RunWithParam(tfl::BuiltinOperator_STRIDED_SLICE, {2, 3}, {2, 2}),
            (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(RunWithParam(tfl::BuiltinOperator_RESHAPE, {3, -1}, {3, 2}),
            Iota(6));
  EXPECT_EQ(RunWithParam(tfl::BuiltinOperator_TRANSPOSE, {1, 0}, {3, 2}),
            (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(RunWithParam(tfl::BuiltinOperator_PAD, {0, 1, 1, 0}, {3, 4}),
            (std::vector<float>{0, 0, 1, 2, 0, 3, 4, 5, 0, 0, 0, 0}));
}

TEST(DynamicShapeTest, WhereListsTheCoordinatesOfTrueElements) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId c = g.Input("c", tfl::TensorType_BOOL, {2, 3});
  g.Output(g.Op(tfl::BuiltinOperator_WHERE)
               .In(c)
               .Out("i", tfl::TensorType_INT64, {-1, 2}));
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<uint8_t>(**rt, 0, {0, 1, 0, 1, 0, 1});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(testing::GetOutput<int64_t>(**rt, 0),
            (std::vector<int64_t>{0, 1, 1, 0, 1, 2}));
  testing::SetInput<uint8_t>(**rt, 0, {0, 0, 0, 0, 0, 0});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), (std::vector<int32_t>{0, 2}));
  // Constant conditions are computed once at load.
  ModelBuilder cb;
  auto& h = cb.Subgraph("main");
  h.Output(h.Op(tfl::BuiltinOperator_WHERE)
               .In(h.Constant<float>("c", {4}, {0, 2, -1, 0}))
               .Out("i", tfl::TensorType_INT64, {2, 1}));
  auto folded = testing::LoadBuilt(cb);
  ASSERT_TRUE(folded.ok()) << folded.status();
  ASSERT_TRUE((*folded)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<int64_t>(**folded, 0),
            (std::vector<int64_t>{1, 2}));
}

TEST(ResizeTest, NearestAndBilinear) {
  // 1x2x2x1 [[0 1] [2 3]] -> 4x4 nearest: each pixel repeated 2x2.
  auto n = RunIota({1, 2, 2, 1}, [](SubgraphBuilder& g, TensorId x) {
    g.Output(g.Op(tfl::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR)
                 .In(x, g.Constant<int32_t>("s", {2}, {4, 4}))
                 .Out("y", F32, {1, 4, 4, 1}));
  }, {1, 4, 4, 1});
  EXPECT_EQ(n, (std::vector<float>{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}));
  // align_corners 2 -> 3: midpoints are averages.
  auto b = RunIota({1, 2, 2, 1}, [](SubgraphBuilder& g, TensorId x) {
    tfl::ResizeBilinearOptionsT o;
    o.align_corners = true;
    g.Output(g.Op(tfl::BuiltinOperator_RESIZE_BILINEAR)
                 .In(x, g.Constant<int32_t>("s", {2}, {3, 3}))
                 .Options(o)
                 .Out("y", F32, {1, 3, 3, 1}));
  }, {1, 3, 3, 1});
  testing::ExpectNear(b, {0, 0.5f, 1, 1, 1.5f, 2, 2, 2.5f, 3});
}

}  // namespace
}  // namespace graft
