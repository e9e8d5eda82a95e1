// SEGMENT_SUM and UNSORTED_SEGMENT_{SUM,PROD,MAX,MIN} (segment.cc): hand-
// checked cases, a reference loop over random shapes, ids known at load and
// ids computed at invoke (the output shape changing between invokes), and
// the ids and dtypes TFLite refuses.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I32 = tfl::TensorType_INT32;

constexpr tfl::BuiltinOperator kUnsortedOps[] = {
    tfl::BuiltinOperator_UNSORTED_SEGMENT_SUM,
    tfl::BuiltinOperator_UNSORTED_SEGMENT_PROD,
    tfl::BuiltinOperator_UNSORTED_SEGMENT_MAX,
    tfl::BuiltinOperator_UNSORTED_SEGMENT_MIN};

template <typename T>
constexpr tfl::TensorType TypeOf() {
  return std::is_same_v<T, float> ? F32 : I32;
}

// The reference: rows of `data` (each `inner` long) combined into
// `segments` rows by id; negative ids dropped; empty segments hold the
// identity. SEGMENT_SUM is UNSORTED_SEGMENT_SUM on valid ids.
template <typename T>
std::vector<T> Reference(tfl::BuiltinOperator op, const std::vector<T>& data,
                         const std::vector<int32_t>& ids, int64_t inner,
                         int64_t segments) {
  T init = 0;
  if (op == tfl::BuiltinOperator_UNSORTED_SEGMENT_PROD) init = 1;
  if (op == tfl::BuiltinOperator_UNSORTED_SEGMENT_MAX) {
    init = std::numeric_limits<T>::lowest();
  }
  if (op == tfl::BuiltinOperator_UNSORTED_SEGMENT_MIN) {
    init = std::numeric_limits<T>::max();
  }
  std::vector<T> out(segments * inner, init);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0) continue;
    for (int64_t j = 0; j < inner; ++j) {
      T& o = out[ids[i] * inner + j];
      const T x = data[i * inner + j];
      switch (op) {
        case tfl::BuiltinOperator_UNSORTED_SEGMENT_PROD:
          o = o * x;
          break;
        case tfl::BuiltinOperator_UNSORTED_SEGMENT_MAX:
          o = std::max(o, x);
          break;
        case tfl::BuiltinOperator_UNSORTED_SEGMENT_MIN:
          o = std::min(o, x);
          break;
        default:
          o = o + x;
      }
    }
  }
  return out;
}

// A model of one segment op on an input of `shape`. The ids (and, for the
// unsorted ops, num_segments) are constants, or model inputs 1 (and 2) when
// `ids_as_input`. `rt` is null after a failed load, whose status is `load`.
struct Built {
  std::unique_ptr<Runtime> rt;
  absl::Status load;
};

Built Build(tfl::BuiltinOperator op, tfl::TensorType type, const Shape& shape,
            const std::vector<int32_t>& ids, int32_t num_segments,
            bool ids_as_input, tfl::TensorType ids_type = I32) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", type, testing::ToVec(shape));
  const int32_t n = static_cast<int32_t>(ids.size());
  TensorId id_t = ids_as_input ? g.Input("ids", ids_type, {n})
                               : g.Constant<int32_t>("ids", {n}, ids);
  auto b = g.Op(op);
  std::vector<int32_t> out_shape = testing::ToVec(shape);
  out_shape[0] = -1;
  if (op == tfl::BuiltinOperator_SEGMENT_SUM) {
    b.In(x, id_t);
  } else {
    TensorId num = ids_as_input
                       ? g.Input("num", I32, {})
                       : g.Constant<int32_t>("num", {}, {num_segments});
    b.In(x, id_t, num);
  }
  g.Output(b.Out("y", type, out_shape));
  Built r;
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  if (rt.ok()) {
    r.rt = *std::move(rt);
  } else {
    r.load = rt.status();
  }
  return r;
}

// Sets the inputs of a Build(..., ids_as_input) model and invokes it.
template <typename T>
absl::Status RunOp(Runtime& rt, const std::vector<T>& data,
                   const std::vector<int32_t>& ids, int32_t num_segments) {
  testing::SetInput(rt, 0, data);
  if (rt.input(1) != nullptr) testing::SetInput(rt, 1, ids);
  if (rt.input(2) != nullptr) {
    testing::SetInput(rt, 2, std::vector<int32_t>{num_segments});
  }
  return rt.Invoke();
}

TEST(SegmentSumTest, SumsRowsOfEachSegment) {
  // data rows r0..r4, ids [0 0 1 2 2]: [r0+r1, r2, r3+r4].
  Built b = Build(tfl::BuiltinOperator_SEGMENT_SUM, F32, {5, 2},
                  {0, 0, 1, 2, 2}, 0, /*ids_as_input=*/false);
  ASSERT_TRUE(b.load.ok()) << b.load;
  ASSERT_TRUE(RunOp<float>(*b.rt, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {}, 0).ok());
  EXPECT_EQ(testing::ToVec(b.rt->output(0)->shape),
            (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(testing::GetOutput<float>(*b.rt, 0),
            (std::vector<float>{4, 6, 5, 6, 16, 18}));
}

TEST(UnsortedSegmentTest, EmptySegmentsHoldTheIdentityAndNegativeIdsDrop) {
  // ids [0 2 0 -1], 4 segments: 1 and 3 are empty, row 3 is dropped.
  const std::vector<int32_t> ids = {0, 2, 0, -1};
  const std::vector<float> fx = {2, -3, 5, 100};
  const std::vector<int32_t> ix = {2, -3, 5, 100};
  const float flo = std::numeric_limits<float>::lowest();
  const float fhi = std::numeric_limits<float>::max();
  const int32_t ilo = std::numeric_limits<int32_t>::lowest();
  const int32_t ihi = std::numeric_limits<int32_t>::max();
  const std::vector<std::vector<float>> fwant = {
      {7, 0, -3, 0}, {10, 1, -3, 1}, {5, flo, -3, flo}, {2, fhi, -3, fhi}};
  const std::vector<std::vector<int32_t>> iwant = {
      {7, 0, -3, 0}, {10, 1, -3, 1}, {5, ilo, -3, ilo}, {2, ihi, -3, ihi}};
  for (int k = 0; k < 4; ++k) {
    const tfl::BuiltinOperator op = kUnsortedOps[k];
    SCOPED_TRACE(EnumNameBuiltinOperator(op));
    Built f = Build(op, F32, {4}, ids, 4, false);
    ASSERT_TRUE(f.load.ok()) << f.load;
    ASSERT_TRUE(RunOp(*f.rt, fx, {}, 0).ok());
    EXPECT_EQ(testing::GetOutput<float>(*f.rt, 0), fwant[k]);
    Built i = Build(op, I32, {4}, ids, 4, false);
    ASSERT_TRUE(i.load.ok()) << i.load;
    ASSERT_TRUE(RunOp(*i.rt, ix, {}, 0).ok());
    EXPECT_EQ(testing::GetOutput<int32_t>(*i.rt, 0), iwant[k]);
  }
}

TEST(UnsortedSegmentTest, Int32SumAndProductWrap) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  Built s = Build(tfl::BuiltinOperator_UNSORTED_SEGMENT_SUM, I32, {2}, {0, 0},
                  1, false);
  ASSERT_TRUE(s.load.ok()) << s.load;
  ASSERT_TRUE(RunOp<int32_t>(*s.rt, {big, 1}, {}, 0).ok());
  EXPECT_EQ(testing::GetOutput<int32_t>(*s.rt, 0),
            std::vector<int32_t>{std::numeric_limits<int32_t>::lowest()});
  Built p = Build(tfl::BuiltinOperator_UNSORTED_SEGMENT_PROD, I32, {2}, {0, 0},
                  1, false);
  ASSERT_TRUE(p.load.ok()) << p.load;
  ASSERT_TRUE(RunOp<int32_t>(*p.rt, {65536, 65536}, {}, 0).ok());
  EXPECT_EQ(testing::GetOutput<int32_t>(*p.rt, 0), std::vector<int32_t>{0});
}

// Random ids: sorted runs for SEGMENT_SUM, anything in [-1, segments) for
// the unsorted ops.
template <typename T>
void CheckRandom(std::mt19937& rng, tfl::BuiltinOperator op, int iter) {
  const bool sorted = op == tfl::BuiltinOperator_SEGMENT_SUM;
  const int rank = RandomInt(rng, 1, 3);
  Shape shape = testing::RandomShape(rng, rank, 4);
  shape[0] = RandomInt(rng, 1, 9);
  const int64_t rows = shape[0];
  const int64_t inner = NumElements(shape) / rows;
  std::vector<int32_t> ids(rows);
  int32_t segments = 0;
  if (sorted) {
    for (int64_t i = 1; i < rows; ++i)
      ids[i] = ids[i - 1] + RandomInt(rng, 0, 1);
    segments = ids.back() + 1;
  } else {
    segments = RandomInt(rng, 1, 6);
    for (int32_t& id : ids) id = RandomInt(rng, -1, segments - 1);
  }
  std::vector<T> data(NumElements(shape));
  for (T& v : data) {
    v = std::is_same_v<T, float>
            ? static_cast<T>(testing::RandomFloats(rng, 1, -2, 2)[0])
            : static_cast<T>(RandomInt(rng, -4, 4));
  }
  const std::vector<T> want =
      Reference<T>(sorted ? tfl::BuiltinOperator_UNSORTED_SEGMENT_SUM : op,
                   data, ids, inner, segments);
  Shape want_shape = shape;
  want_shape[0] = segments;
  for (bool as_input : {false, true}) {
    SCOPED_TRACE(absl::StrCat(EnumNameBuiltinOperator(op), " iteration ", iter,
                              as_input ? " (ids as input)" : ""));
    Built b = Build(op, TypeOf<T>(), shape, ids, segments, as_input);
    ASSERT_TRUE(b.load.ok()) << b.load;
    ASSERT_TRUE(RunOp(*b.rt, data, ids, segments).ok());
    EXPECT_EQ(testing::ToVec(b.rt->output(0)->shape),
              testing::ToVec(want_shape));
    // Exact for float too: each output adds its terms in row order, as the
    // reference does.
    EXPECT_EQ(testing::GetOutput<T>(*b.rt, 0), want);
  }
}

TEST(SegmentTest, MatchesReferenceOverRandomShapes) {
  std::mt19937 rng = testing::SeededRng();
  const tfl::BuiltinOperator ops[] = {tfl::BuiltinOperator_SEGMENT_SUM,
                                      kUnsortedOps[0], kUnsortedOps[1],
                                      kUnsortedOps[2], kUnsortedOps[3]};
  for (int iter = 0; iter < 60; ++iter) {
    const tfl::BuiltinOperator op = ops[iter % 5];
    if (iter % 2 == 0) {
      CheckRandom<float>(rng, op, iter);
    } else {
      CheckRandom<int32_t>(rng, op, iter);
    }
  }
}

TEST(SegmentSumTest, IdsComputedAtInvokeReshapeTheOutput) {
  Built b = Build(tfl::BuiltinOperator_SEGMENT_SUM, F32, {4, 2}, {0, 0, 0, 0},
                  0, /*ids_as_input=*/true);
  ASSERT_TRUE(b.load.ok()) << b.load;
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_TRUE(RunOp(*b.rt, x, {0, 1, 1, 2}, 0).ok());
  EXPECT_EQ(testing::ToVec(b.rt->output(0)->shape),
            (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(testing::GetOutput<float>(*b.rt, 0),
            (std::vector<float>{1, 2, 8, 10, 7, 8}));
  ASSERT_TRUE(RunOp(*b.rt, x, {0, 0, 0, 0}, 0).ok());
  EXPECT_EQ(testing::ToVec(b.rt->output(0)->shape),
            (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(testing::GetOutput<float>(*b.rt, 0), (std::vector<float>{16, 20}));
}

TEST(UnsortedSegmentTest, NumSegmentsComputedAtInvokeReshapesTheOutput) {
  Built b = Build(tfl::BuiltinOperator_UNSORTED_SEGMENT_MAX, I32, {3},
                  {0, 0, 0}, 0, /*ids_as_input=*/true);
  ASSERT_TRUE(b.load.ok()) << b.load;
  ASSERT_TRUE(RunOp<int32_t>(*b.rt, {4, 9, 2}, {1, 0, 1}, 2).ok());
  EXPECT_EQ(testing::ToVec(b.rt->output(0)->shape), std::vector<int32_t>{2});
  EXPECT_EQ(testing::GetOutput<int32_t>(*b.rt, 0),
            (std::vector<int32_t>{9, 4}));
  ASSERT_TRUE(RunOp<int32_t>(*b.rt, {4, 9, 2}, {3, -1, 0}, 5).ok());
  const int32_t lo = std::numeric_limits<int32_t>::lowest();
  EXPECT_EQ(testing::GetOutput<int32_t>(*b.rt, 0),
            (std::vector<int32_t>{2, lo, lo, 4, lo}));
  // No segments at all: an empty output.
  ASSERT_TRUE(RunOp<int32_t>(*b.rt, {4, 9, 2}, {-1, -1, -1}, 0).ok());
  EXPECT_EQ(testing::ToVec(b.rt->output(0)->shape), std::vector<int32_t>{0});
}

TEST(SegmentSumTest, RefusesIdsThatAreNotSortedRunsFromZero) {
  struct Case {
    std::vector<int32_t> ids;
    const char* message;
  };
  const Case cases[] = {
      {{1, 1, 2}, "must start at 0, got 1"},
      {{-1, 0, 0}, "must start at 0, got -1"},
      {{0, 2, 2}, "segment_ids[1] = 2 follows 0"},  // an empty segment
      {{0, 1, 0}, "segment_ids[2] = 0 follows 1"},  // unsorted
  };
  for (const Case& c : cases) {
    Built constant = Build(tfl::BuiltinOperator_SEGMENT_SUM, F32, {3}, c.ids, 0,
                           /*ids_as_input=*/false);
    EXPECT_TRUE(absl::IsInvalidArgument(constant.load)) << constant.load;
    EXPECT_THAT(std::string(constant.load.message()),
                ::testing::HasSubstr(c.message));
    Built input = Build(tfl::BuiltinOperator_SEGMENT_SUM, F32, {3}, {0, 0, 0},
                        0, /*ids_as_input=*/true);
    ASSERT_TRUE(input.load.ok()) << input.load;
    absl::Status st = RunOp<float>(*input.rt, {1, 2, 3}, c.ids, 0);
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(std::string(st.message()), ::testing::HasSubstr(c.message));
  }
}

TEST(UnsortedSegmentTest, RefusesIdsPastNumSegmentsAndNegativeCounts) {
  for (tfl::BuiltinOperator op : kUnsortedOps) {
    SCOPED_TRACE(EnumNameBuiltinOperator(op));
    Built constant = Build(op, F32, {3}, {0, 3, 1}, 3, false);
    EXPECT_TRUE(absl::IsInvalidArgument(constant.load)) << constant.load;
    EXPECT_THAT(std::string(constant.load.message()),
                ::testing::HasSubstr("segment_ids[1] = 3 is out of range"));
    Built input = Build(op, F32, {3}, {0, 0, 0}, 0, true);
    ASSERT_TRUE(input.load.ok()) << input.load;
    absl::Status st = RunOp<float>(*input.rt, {1, 2, 3}, {0, 3, 1}, 3);
    EXPECT_THAT(std::string(st.message()),
                ::testing::HasSubstr("segment_ids[1] = 3 is out of range"));
    st = RunOp<float>(*input.rt, {1, 2, 3}, {-1, -1, -1}, -1);
    EXPECT_THAT(std::string(st.message()),
                ::testing::HasSubstr("num_segments = -1 is negative"));
    // The runtime still works with valid values afterwards.
    EXPECT_TRUE(RunOp<float>(*input.rt, {1, 2, 3}, {0, 0, 0}, 1).ok());
  }
}

TEST(SegmentTest, RefusesUnsupportedTypesAndShapes) {
  // Non-INT32 ids.
  Built f = Build(tfl::BuiltinOperator_SEGMENT_SUM, F32, {3}, {0, 0, 0}, 0,
                  /*ids_as_input=*/true, tfl::TensorType_INT64);
  EXPECT_THAT(std::string(f.load.message()),
              ::testing::HasSubstr("segment_ids must be INT32"));
  // Data types TFLite does not take (INT8 is neither float nor int32).
  Built q = Build(tfl::BuiltinOperator_UNSORTED_SEGMENT_SUM,
                  tfl::TensorType_INT8, {3}, {0, 0, 0}, 1, false);
  EXPECT_TRUE(absl::IsUnimplemented(q.load)) << q.load;
  // One id per row of data.
  Built n =
      Build(tfl::BuiltinOperator_SEGMENT_SUM, F32, {4}, {0, 0, 0}, 0, false);
  EXPECT_THAT(std::string(n.load.message()),
              ::testing::HasSubstr("one id per row"));
}

}  // namespace
}  // namespace graft
