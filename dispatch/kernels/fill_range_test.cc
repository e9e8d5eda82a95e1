// FILL, ZEROS_LIKE, RANGE, RANK, BROADCAST_ARGS, ADD_N and LOGICAL_NOT
// (fill_range.cc) against hand-computed values, with shapes from constants
// and from inputs, and their errors.
#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::HasSubstr;
constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I32 = tfl::TensorType_INT32;
constexpr auto BOOL = tfl::TensorType_BOOL;

TEST(FillTest, FillsShapesFromConstantsAndInputs) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId dims = g.Input("dims", I32, {2});
  TensorId v = g.Input("v", F32, {});
  g.Output(g.Op(tfl::BuiltinOperator_FILL).In(dims, v).Out("y", F32, {}));
  g.Output(g.Op(tfl::BuiltinOperator_FILL)
               .In(g.Constant<int32_t>("d", {1}, {3}),
                   g.Constant<int32_t>("c", {}, {-4}))
               .Out("z", I32, {}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<float>(**rt, 1, {2.5f});
  for (const std::vector<int32_t>& d :
       {std::vector<int32_t>{2, 3}, std::vector<int32_t>{1, 0}}) {
    testing::SetInput<int32_t>(**rt, 0, d);
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ((*rt)->output(0)->shape, (Shape{d[0], d[1]}));
    EXPECT_EQ(testing::GetOutput<float>(**rt, 0),
              std::vector<float>(d[0] * d[1], 2.5f));
  }
  EXPECT_EQ(testing::GetOutput<int32_t>(**rt, 1),
            (std::vector<int32_t>{-4, -4, -4}));
}

// RANGE accumulates value += delta, as TFLite: in float that is not start +
// i * delta (-1.5 + 0.1 * 27 = 1.2000000 but 27 additions give 1.1999996).
TEST(RangeTest, AccumulatesAsTflite) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId limit = g.Input("limit", I32, {});
  g.Output(g.Op(tfl::BuiltinOperator_RANGE)
               .In(g.Constant<int32_t>("s", {}, {9}), limit,
                   g.Constant<int32_t>("d", {}, {-2}))
               .Out("y", I32, {}));
  g.Output(g.Op(tfl::BuiltinOperator_RANGE)
               .In(g.Constant<float>("fs", {}, {-1.5f}),
                   g.Constant<float>("fl", {}, {2.2f}),
                   g.Constant<float>("fd", {}, {0.1f}))
               .Out("f", F32, {}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<int32_t>(**rt, 0, {2});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<int32_t>(**rt, 0),
            (std::vector<int32_t>{9, 7, 5, 3}));
  const std::vector<float> f = testing::GetOutput<float>(**rt, 1);
  ASSERT_EQ(f.size(), 37u);  // ceil(3.7 / 0.1)
  float want = -1.5f;
  for (size_t i = 0; i < f.size(); ++i, want += 0.1f) EXPECT_EQ(f[i], want);
  EXPECT_NE(f[27], -1.5f + 27 * 0.1f);
  // A limit the delta points away from fails that invoke.
  testing::SetInput<int32_t>(**rt, 0, {12});
  EXPECT_THAT(std::string((*rt)->Invoke().message()),
              HasSubstr("delta -2 points away from the limit"));
}

TEST(RangeTest, RefusesDeltaZeroAtLoad) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  g.Output(g.Op(tfl::BuiltinOperator_RANGE)
               .In(g.Constant<int32_t>("s", {}, {0}),
                   g.Constant<int32_t>("l", {}, {4}),
                   g.Constant<int32_t>("d", {}, {0}))
               .Out("y", I32, {}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()), HasSubstr("delta is 0"));
}

TEST(ShapeOpsTest, ZerosLikeRankBroadcastArgs) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2, 3});
  TensorId a = g.Input("a", I32, {3});
  g.Output(g.Op(tfl::BuiltinOperator_ZEROS_LIKE).In(x).Out("z", F32, {}));
  g.Output(g.Op(tfl::BuiltinOperator_RANK).In(x).Out("r", I32, {}));
  g.Output(g.Op(tfl::BuiltinOperator_BROADCAST_ARGS)
               .In(a, g.Constant<int32_t>("b", {2}, {4, 1}))
               .Out("s", I32, {}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<float>(**rt, 0, {1, 2, 3, 4, 5, 6});
  testing::SetInput<int32_t>(**rt, 1, {2, 1, 7});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<float>(**rt, 0), std::vector<float>(6, 0.0f));
  EXPECT_EQ(testing::GetOutput<int32_t>(**rt, 1), std::vector<int32_t>{2});
  EXPECT_EQ(testing::GetOutput<int32_t>(**rt, 2),
            (std::vector<int32_t>{2, 4, 7}));
  // ZEROS_LIKE and RANK read only the shape: computed once, at load.
  const std::string report = (*rt)->Report().ToString();
  EXPECT_THAT(report, HasSubstr("op 0 ZEROS_LIKE: folded"));
  EXPECT_THAT(report, HasSubstr("op 1 RANK: folded"));
  testing::SetInput<int32_t>(**rt, 1, {2, 3, 7});
  EXPECT_THAT(std::string((*rt)->Invoke().message()),
              HasSubstr("dimension 1 is 3 and 4"));
}

TEST(ElementwiseTest, AddNAndLogicalNot) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", F32, {3}), b = g.Input("b", F32, {3}),
           c = g.Input("c", F32, {3});
  TensorId m = g.Input("m", BOOL, {3});
  g.Output(g.Op(tfl::BuiltinOperator_ADD_N).In(a, b, c).Out("y", F32, {}));
  g.Output(g.Op(tfl::BuiltinOperator_LOGICAL_NOT).In(m).Out("n", BOOL, {}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  // Summed in input order from 0: (1e8 + 1) - 1e8 = 0 in float.
  testing::SetInput<float>(**rt, 0, {1e8f, 1, 2});
  testing::SetInput<float>(**rt, 1, {1, 2, 3});
  testing::SetInput<float>(**rt, 2, {-1e8f, 3, -5});
  testing::SetInput<uint8_t>(**rt, 3, {1, 0, 1});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<float>(**rt, 0), (std::vector<float>{0, 6, 0}));
  EXPECT_EQ(testing::GetOutput<uint8_t>(**rt, 1),
            (std::vector<uint8_t>{0, 1, 0}));
}

}  // namespace
}  // namespace graft
