// CUMSUM and ONE_HOT (cumsum_one_hot.cc) against per-element references
// (each CUMSUM output summed afresh in the op's order, so float results are
// bit-exact; each ONE_HOT output decided from its own index), on random
// shapes, axes, options and dtypes, hand-computed cases, values computed at
// invoke (CUMSUM's axis, ONE_HOT's depth) and load-time errors.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I32 = tfl::TensorType_INT32;
constexpr auto I64 = tfl::TensorType_INT64;

struct CumsumCase {
  tfl::TensorType type = F32;
  std::vector<int32_t> shape;
  int32_t axis = 0;
  bool exclusive = false, reverse = false;
  bool axis_as_input = false;
};

absl::StatusOr<std::unique_ptr<Runtime>> LoadCumsum(const CumsumCase& c) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", c.type, c.shape);
  TensorId a = c.axis_as_input ? g.Input("axis", I32, {})
                               : g.Constant<int32_t>("axis", {}, {c.axis});
  tfl::CumsumOptionsT o;
  o.exclusive = c.exclusive;
  o.reverse = c.reverse;
  g.Output(g.Op(tfl::BuiltinOperator_CUMSUM)
               .In(x, a)
               .Options(o)
               .Out("y", c.type, c.shape));
  return testing::LoadBuilt(mb);
}

template <typename T>
std::vector<T> RunCumsum(const CumsumCase& c, const std::vector<T>& in) {
  auto rt = LoadCumsum(c);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  testing::SetInput(**rt, 0, in);
  if (c.axis_as_input) testing::SetInput(**rt, 1, std::vector<int32_t>{c.axis});
  absl::Status st = (*rt)->Invoke();
  EXPECT_TRUE(st.ok()) << st;
  return testing::GetOutput<T>(**rt, 0);
}

// Output element i sums the line's elements before it (from the end when
// reversed; itself included unless exclusive), in that order.
template <typename T>
std::vector<T> RefCumsum(const CumsumCase& c, const std::vector<T>& in) {
  const int rank = static_cast<int>(c.shape.size());
  const int axis = c.axis < 0 ? c.axis + rank : c.axis;
  int64_t stride = 1;
  for (int d = axis + 1; d < rank; ++d) stride *= c.shape[d];
  const int64_t len = c.shape[axis];
  std::vector<T> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t pos = (static_cast<int64_t>(i) / stride) % len;
    const int64_t start = static_cast<int64_t>(i) - pos * stride;
    T acc = T(0);
    if (!c.reverse) {
      const int64_t last = c.exclusive ? pos - 1 : pos;
      for (int64_t k = 0; k <= last; ++k) acc += in[start + k * stride];
    } else {
      const int64_t first = c.exclusive ? pos + 1 : pos;
      for (int64_t k = len - 1; k >= first; --k) acc += in[start + k * stride];
    }
    out[i] = acc;
  }
  return out;
}

TEST(CumsumTest, MatchesReferenceForRandomShapesAxesAndOptions) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 60; ++iter) {
    CumsumCase c;
    const int rank = RandomInt(rng, 1, 4);
    c.shape = testing::ToVec(testing::RandomShape(rng, rank, 6));
    c.axis = RandomInt(rng, -rank, rank - 1);
    c.exclusive = RandomInt(rng, 0, 1);
    c.reverse = RandomInt(rng, 0, 1);
    c.axis_as_input = iter % 5 == 0;
    int64_t n = 1;
    for (int32_t d : c.shape) n *= d;
    SCOPED_TRACE(::testing::Message() << "iteration " << iter);
    switch (iter % 3) {
      case 0: {
        c.type = F32;
        auto in = testing::RandomFloats(rng, n, -10, 10);
        EXPECT_EQ(RunCumsum(c, in), RefCumsum(c, in));
        break;
      }
      case 1: {
        c.type = I32;
        auto in = testing::RandomInts(rng, n, -1000, 1000);
        EXPECT_EQ(RunCumsum(c, in), RefCumsum(c, in));
        break;
      }
      default: {
        c.type = I64;
        std::vector<int64_t> in(n);
        // Past the int32 range: multiples of 2^33.
        for (auto& e : in) {
          e = int64_t{RandomInt(rng, -1000, 1000)} * (int64_t{1} << 33);
        }
        EXPECT_EQ(RunCumsum(c, in), RefCumsum(c, in));
        break;
      }
    }
  }
}

TEST(CumsumTest, ExclusiveAndReverseOnAVector) {
  CumsumCase c{F32, {4}, 0};
  const std::vector<float> x = {1, 2, 3, 4};
  EXPECT_EQ(RunCumsum(c, x), (std::vector<float>{1, 3, 6, 10}));
  c.exclusive = true;
  EXPECT_EQ(RunCumsum(c, x), (std::vector<float>{0, 1, 3, 6}));
  c.reverse = true;
  EXPECT_EQ(RunCumsum(c, x), (std::vector<float>{9, 7, 4, 0}));
  c.exclusive = false;
  EXPECT_EQ(RunCumsum(c, x), (std::vector<float>{10, 9, 7, 4}));
  // Axis -2 of a 2x3 matrix: down the columns.
  CumsumCase m{I32, {2, 3}, -2};
  EXPECT_EQ(RunCumsum<int32_t>(m, {1, 2, 3, 4, 5, 6}),
            (std::vector<int32_t>{1, 2, 3, 5, 7, 9}));
}

TEST(CumsumTest, RefusesAxisOutOfRangeAndUnsupportedTypes) {
  CumsumCase c{F32, {2, 3}, 2};
  auto rt = LoadCumsum(c);
  ASSERT_FALSE(rt.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(rt.status())) << rt.status();
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("axis 2 is out of range for rank 2"));
  // Computed at invoke: the same error then.
  c.axis_as_input = true;
  rt = LoadCumsum(c);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput(**rt, 0, std::vector<float>(6, 1.0f));
  testing::SetInput(**rt, 1, std::vector<int32_t>{-3});
  absl::Status st = (*rt)->Invoke();
  EXPECT_THAT(std::string(st.message()),
              ::testing::HasSubstr("axis -3 is out of range for rank 2"));
  c = CumsumCase{tfl::TensorType_INT8, {4}, 0};
  rt = LoadCumsum(c);
  EXPECT_FALSE(rt.ok());
}

struct OneHotCase {
  tfl::TensorType index_type = I32;
  tfl::TensorType type = F32;
  std::vector<int32_t> shape;
  int32_t depth = 0;
  int axis = -1;
  bool depth_as_input = false;
};

std::vector<int32_t> OneHotShape(const OneHotCase& c) {
  const int rank = static_cast<int>(c.shape.size());
  const int axis = c.axis == -1 ? rank : std::min(std::max(c.axis, 0), rank);
  std::vector<int32_t> out(c.shape.begin(), c.shape.begin() + axis);
  out.push_back(c.depth);
  out.insert(out.end(), c.shape.begin() + axis, c.shape.end());
  return out;
}

template <typename T>
absl::StatusOr<std::unique_ptr<Runtime>> LoadOneHot(const OneHotCase& c, T on,
                                                    T off) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId idx = g.Input("indices", c.index_type, c.shape);
  TensorId depth = c.depth_as_input
                       ? g.Input("depth", I32, {})
                       : g.Constant<int32_t>("depth", {}, {c.depth});
  // BOOL constants go through uint8_t bytes.
  TensorId on_t =
      g.Constant("on", c.type, {},
                 Bytes::Copy(absl::string_view(
                     reinterpret_cast<const char*>(&on), sizeof(T))));
  TensorId off_t =
      g.Constant("off", c.type, {},
                 Bytes::Copy(absl::string_view(
                     reinterpret_cast<const char*>(&off), sizeof(T))));
  tfl::OneHotOptionsT o;
  o.axis = c.axis;
  std::vector<int32_t> out_shape = OneHotShape(c);
  for (int32_t& d : out_shape) d = std::max(d, 0);
  g.Output(g.Op(tfl::BuiltinOperator_ONE_HOT)
               .In(idx, depth, on_t, off_t)
               .Options(o)
               .Out("y", c.type, out_shape));
  return testing::LoadBuilt(mb);
}

// Indices are given as int64 and narrowed for INT32 models.
template <typename T>
std::vector<T> RunOneHot(const OneHotCase& c, const std::vector<int64_t>& ids,
                         T on, T off) {
  auto rt = LoadOneHot(c, on, off);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  if (c.index_type == I64) {
    testing::SetInput(**rt, 0, ids);
  } else {
    testing::SetInput(**rt, 0, std::vector<int32_t>(ids.begin(), ids.end()));
  }
  if (c.depth_as_input)
    testing::SetInput(**rt, 1, std::vector<int32_t>{c.depth});
  absl::Status st = (*rt)->Invoke();
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), OneHotShape(c));
  return testing::GetOutput<T>(**rt, 0);
}

// Output element (p..., d, q...) is on exactly when indices[p..., q...] == d.
template <typename T>
std::vector<T> RefOneHot(const OneHotCase& c, const std::vector<int64_t>& ids,
                         T on, T off) {
  const std::vector<int32_t> os = OneHotShape(c);
  const int rank = static_cast<int>(os.size());
  const int axis = c.axis == -1 ? rank - 1 : c.axis;
  int64_t n = 1;
  for (int32_t d : os) n *= d;
  std::vector<T> out(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rem = i, src = 0, stride = 1, d_here = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t coord = rem % os[d];
      rem /= os[d];
      if (d == axis) {
        d_here = coord;
      } else {
        src += coord * stride;
        stride *= os[d];
      }
    }
    out[i] = ids[src] == d_here ? on : off;
  }
  return out;
}

template <typename T>
void CheckRandomOneHot(std::mt19937& rng, OneHotCase c, T on, T off) {
  int64_t n = 1;
  for (int32_t d : c.shape) n *= d;
  std::vector<int64_t> ids(n);
  for (auto& e : ids) e = RandomInt(rng, -1, c.depth);  // some out of range
  EXPECT_EQ(RunOneHot(c, ids, on, off), RefOneHot(c, ids, on, off));
}

TEST(OneHotTest, MatchesReferenceForRandomShapesAxesAndTypes) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 60; ++iter) {
    OneHotCase c;
    const int rank = RandomInt(rng, 0, 3);
    c.shape = testing::ToVec(testing::RandomShape(rng, rank, 4));
    c.depth = RandomInt(rng, 1, 5);
    c.axis = RandomInt(rng, -1, rank);
    c.index_type = RandomInt(rng, 0, 1) ? I64 : I32;
    c.depth_as_input = iter % 4 == 0;
    SCOPED_TRACE(::testing::Message() << "iteration " << iter);
    switch (iter % 5) {
      case 0:
        c.type = F32;
        CheckRandomOneHot<float>(rng, c, 2.5f, -1.0f);
        break;
      case 1:
        c.type = tfl::TensorType_INT8;
        CheckRandomOneHot<int8_t>(rng, c, 127, -128);
        break;
      case 2:
        c.type = I32;
        CheckRandomOneHot<int32_t>(rng, c, 7, 3);
        break;
      case 3:
        c.type = I64;
        CheckRandomOneHot<int64_t>(rng, c, int64_t{1} << 40, -5);
        break;
      default:
        c.type = tfl::TensorType_BOOL;
        CheckRandomOneHot<uint8_t>(rng, c, 1, 0);
        break;
    }
  }
}

TEST(OneHotTest, HandComputedAxes) {
  // indices [0, 2, -1, 1], depth 3.
  OneHotCase c{I32, F32, {4}, 3, -1};
  const std::vector<int64_t> ids = {0, 2, -1, 1};
  EXPECT_EQ(RunOneHot<float>(c, ids, 5, 0),
            (std::vector<float>{5, 0, 0, 0, 0, 5, 0, 0, 0, 0, 5, 0}));
  c.axis = 0;
  EXPECT_EQ(RunOneHot<float>(c, ids, 5, 0),
            (std::vector<float>{5, 0, 0, 0, 0, 0, 0, 5, 0, 5, 0, 0}));
  // Depth computed at invoke, UINT8 output, still along axis 0.
  c.type = tfl::TensorType_UINT8;
  c.depth = 2;
  c.depth_as_input = true;
  EXPECT_EQ(RunOneHot<uint8_t>(c, ids, 200, 9),
            (std::vector<uint8_t>{200, 9, 9, 9, 9, 9, 9, 200}));
}

TEST(OneHotTest, RefusesNegativeDepthAndBadAxis) {
  OneHotCase c{I32, F32, {4}, -2, -1};
  auto rt = LoadOneHot<float>(c, 1, 0);
  ASSERT_FALSE(rt.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(rt.status())) << rt.status();
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("depth = -2 is negative"));
  c.depth = 3;
  c.axis = 2;
  rt = LoadOneHot<float>(c, 1, 0);
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("axis 2 is out of range for 1-D indices"));
  c.axis = -1;
  c.type = tfl::TensorType_FLOAT16;
  rt = LoadOneHot<uint16_t>(c, 1, 0);
  EXPECT_FALSE(rt.ok());
}

}  // namespace
}  // namespace graft
