// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (space_batch.cc) against a
// reference that pads (or crops) the spatial dims and scatters each block
// offset into its own batch, on random 3-D and 4-D shapes (float32 and
// quantized int8, whose padding is the zero point), TensorFlow's documented
// examples, round trips, block values computed at invoke, and the load-time
// errors.
#include <cstdint>
#include <numeric>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I8 = tfl::TensorType_INT8;

// A 4-D view [b, h, w, c] of a 3-D or 4-D shape (3-D: w = 1).
struct View4 {
  int64_t b, h, w, c;
};
View4 As4(const std::vector<int32_t>& s) {
  if (s.size() == 3) return {s[0], s[1], 1, s[2]};
  return {s[0], s[1], s[2], s[3]};
}

// Blocks and amounts of a 3-D problem padded to two spatial dims.
std::vector<int64_t> Block2(const std::vector<int32_t>& block) {
  return {block[0], block.size() > 1 ? block[1] : 1};
}
std::vector<int64_t> Amounts2(const std::vector<int32_t>& a) {
  return {a[0], a[1], a.size() > 2 ? a[2] : 0, a.size() > 2 ? a[3] : 0};
}

// TensorFlow's definition: zero-pad (with `pad`), then output batch
// (oh * bw + ow) * B + b holds the elements at offset (oh, ow) of every
// block of image b. Written as a scatter from the padded image.
template <typename T>
std::vector<T> RefSpaceToBatch(const std::vector<T>& in, View4 v,
                               std::vector<int64_t> blk,
                               std::vector<int64_t> pad, T pad_value,
                               View4* out_view) {
  const int64_t ph = v.h + pad[0] + pad[1], pw = v.w + pad[2] + pad[3];
  const View4 o = {v.b * blk[0] * blk[1], ph / blk[0], pw / blk[1], v.c};
  *out_view = o;
  std::vector<T> out(o.b * o.h * o.w * o.c, T(0));
  for (int64_t b = 0; b < v.b; ++b) {
    for (int64_t y = 0; y < ph; ++y) {
      for (int64_t x = 0; x < pw; ++x) {
        const int64_t iy = y - pad[0], ix = x - pad[2];
        const bool inside = iy >= 0 && iy < v.h && ix >= 0 && ix < v.w;
        const int64_t ob = ((y % blk[0]) * blk[1] + x % blk[1]) * v.b + b;
        for (int64_t c = 0; c < v.c; ++c) {
          out[((ob * o.h + y / blk[0]) * o.w + x / blk[1]) * o.c + c] =
              inside ? in[((b * v.h + iy) * v.w + ix) * v.c + c] : pad_value;
        }
      }
    }
  }
  return out;
}

// The inverse: gather every block back into its image, then crop.
template <typename T>
std::vector<T> RefBatchToSpace(const std::vector<T>& in, View4 v,
                               std::vector<int64_t> blk,
                               std::vector<int64_t> crop, View4* out_view) {
  const int64_t nb = v.b / (blk[0] * blk[1]);
  const int64_t fh = v.h * blk[0], fw = v.w * blk[1];
  const View4 o = {nb, fh - crop[0] - crop[1], fw - crop[2] - crop[3], v.c};
  *out_view = o;
  std::vector<T> out(o.b * o.h * o.w * o.c);
  for (int64_t ib = 0; ib < v.b; ++ib) {
    const int64_t b = ib % nb, off = ib / nb;
    for (int64_t y = 0; y < v.h; ++y) {
      for (int64_t x = 0; x < v.w; ++x) {
        const int64_t fy = y * blk[0] + off / blk[1] - crop[0];
        const int64_t fx = x * blk[1] + off % blk[1] - crop[2];
        if (fy < 0 || fy >= o.h || fx < 0 || fx >= o.w) continue;
        for (int64_t c = 0; c < v.c; ++c) {
          out[((b * o.h + fy) * o.w + fx) * o.c + c] =
              in[((ib * v.h + y) * v.w + x) * v.c + c];
        }
      }
    }
  }
  return out;
}

std::vector<int32_t> ShapeOf(View4 v, int rank) {
  if (rank == 3) return {int32_t(v.b), int32_t(v.h), int32_t(v.c)};
  return {int32_t(v.b), int32_t(v.h), int32_t(v.w), int32_t(v.c)};
}

struct Problem {
  tfl::BuiltinOperator op;
  tfl::TensorType type = F32;
  std::vector<int32_t> in_shape, block, amounts;
  bool values_as_inputs = false;  // block and amounts fed at invoke
  int zero_point = 0;             // INT8 only
};

// Builds and loads the one-op model; out_shape is its declared output.
absl::StatusOr<std::unique_ptr<Runtime>> Load(
    const Problem& p, const std::vector<int32_t>& out_shape) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", p.type, p.in_shape);
  const int spatial = static_cast<int>(p.in_shape.size()) - 2;
  TensorId blk, amt;
  if (p.values_as_inputs) {
    blk = g.Input("block", tfl::TensorType_INT32, {spatial});
    amt = g.Input("amounts", tfl::TensorType_INT32, {spatial, 2});
  } else {
    blk = g.Constant<int32_t>("block", {spatial}, p.block);
    amt = g.Constant<int32_t>("amounts", {spatial, 2}, p.amounts);
  }
  TensorId y = g.Op(p.op).In(x, blk, amt).Out("y", p.type, out_shape);
  if (p.type == I8)
    g.Quantize(x, 0.5f, p.zero_point).Quantize(y, 0.5f, p.zero_point);
  g.Output(y);
  return testing::LoadBuilt(mb);
}

template <typename T>
std::vector<T> RunOp(const Problem& p, const std::vector<T>& in,
                     const std::vector<int32_t>& out_shape) {
  auto rt = Load(p, out_shape);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  testing::SetInput(**rt, 0, in);
  if (p.values_as_inputs) {
    testing::SetInput(**rt, 1, p.block);
    testing::SetInput(**rt, 2, p.amounts);
  }
  absl::Status st = (*rt)->Invoke();
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), out_shape);
  return testing::GetOutput<T>(**rt, 0);
}

// A random problem of `op`'s geometry: for SPACE_TO_BATCH_ND, paddings
// chosen so each padded dim divides; for BATCH_TO_SPACE_ND, crops below
// the block extent.
Problem RandomProblem(std::mt19937& rng, tfl::BuiltinOperator op) {
  Problem p;
  p.op = op;
  const int rank = RandomInt(rng, 3, 4);
  const int spatial = rank - 2;
  p.block.resize(spatial);
  p.amounts.resize(2 * spatial);
  p.in_shape.push_back(RandomInt(rng, 1, 3));
  for (int d = 0; d < spatial; ++d) {
    const int blk = RandomInt(rng, 1, 3);
    p.block[d] = blk;
    if (op == tfl::BuiltinOperator_SPACE_TO_BATCH_ND) {
      const int size = RandomInt(rng, 1, 7);
      const int total = (blk - (size % blk)) % blk + blk * RandomInt(rng, 0, 1);
      p.amounts[2 * d] = RandomInt(rng, 0, total);
      p.amounts[2 * d + 1] = total - p.amounts[2 * d];
      p.in_shape.push_back(size);
    } else {
      const int size = RandomInt(rng, 1, 4);
      const int extent = size * blk;
      p.amounts[2 * d] = RandomInt(rng, 0, std::min(2, extent - 1));
      p.amounts[2 * d + 1] =
          RandomInt(rng, 0, std::min(2, extent - 1 - p.amounts[2 * d]));
      p.in_shape.push_back(size);
    }
  }
  if (op == tfl::BuiltinOperator_BATCH_TO_SPACE_ND) {
    int64_t blocks = 1;
    for (int b : p.block) blocks *= b;
    p.in_shape[0] *= static_cast<int32_t>(blocks);
  }
  p.in_shape.push_back(RandomInt(rng, 1, 3));
  return p;
}

// The reference above for `p`'s op and `in`; sets `out_view`.
template <typename T>
std::vector<T> Reference(const Problem& p, const std::vector<T>& in,
                         View4* out_view) {
  const View4 v = As4(p.in_shape);
  if (p.op == tfl::BuiltinOperator_SPACE_TO_BATCH_ND) {
    return RefSpaceToBatch<T>(in, v, Block2(p.block), Amounts2(p.amounts),
                              static_cast<T>(p.zero_point), out_view);
  }
  return RefBatchToSpace<T>(in, v, Block2(p.block), Amounts2(p.amounts),
                            out_view);
}

// 40 random problems of `op`, float32 and int8 in turn (int8 with a random
// zero point, which SPACE_TO_BATCH_ND pads with and BATCH_TO_SPACE_ND must
// ignore), each against Reference.
void CheckRandomProblems(tfl::BuiltinOperator op, uint32_t salt) {
  std::mt19937 rng = testing::SeededRng(salt);
  for (int iter = 0; iter < 40; ++iter) {
    Problem p = RandomProblem(rng, op);
    const int rank = static_cast<int>(p.in_shape.size());
    const View4 v = As4(p.in_shape);
    const int64_t n = v.b * v.h * v.w * v.c;
    View4 o;
    SCOPED_TRACE(::testing::Message() << "iteration " << iter);
    if (iter % 2 == 0) {
      const std::vector<float> in = testing::RandomFloats(rng, n);
      const std::vector<float> want = Reference(p, in, &o);
      EXPECT_EQ(RunOp(p, in, ShapeOf(o, rank)), want);
    } else {
      p.type = I8;
      p.zero_point = RandomInt(rng, -128, 127);
      std::vector<int8_t> in(n);
      for (auto& e : in) e = static_cast<int8_t>(RandomInt(rng, -128, 127));
      const std::vector<int8_t> want = Reference(p, in, &o);
      EXPECT_EQ(RunOp(p, in, ShapeOf(o, rank)), want);
    }
  }
}

TEST(SpaceToBatchNDTest, MatchesReferenceForRandomShapes) {
  CheckRandomProblems(tfl::BuiltinOperator_SPACE_TO_BATCH_ND, 0);
}

TEST(BatchToSpaceNDTest, MatchesReferenceForRandomShapes) {
  CheckRandomProblems(tfl::BuiltinOperator_BATCH_TO_SPACE_ND, 1);
}

// TensorFlow's space_to_batch_nd documentation examples.
TEST(SpaceToBatchNDTest, MatchesDocumentedExamples) {
  Problem p{tfl::BuiltinOperator_SPACE_TO_BATCH_ND,
            F32,
            {1, 2, 2, 1},
            {2, 2},
            {0, 0, 0, 0}};
  EXPECT_EQ(RunOp<float>(p, {1, 2, 3, 4}, {4, 1, 1, 1}),
            (std::vector<float>{1, 2, 3, 4}));
  p.in_shape = {1, 4, 4, 1};
  std::vector<float> in(16);
  std::iota(in.begin(), in.end(), 1.0f);
  EXPECT_EQ(RunOp<float>(p, in, {4, 2, 2, 1}),
            (std::vector<float>{1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8,
                                14, 16}));
  // [2, 2, 4, 1] with paddings [[0, 0], [2, 0]]: each image gets two zero
  // columns in front.
  p.in_shape = {2, 2, 4, 1};
  p.amounts = {0, 0, 2, 0};
  EXPECT_EQ(RunOp<float>(p, in, {8, 1, 3, 1}),
            (std::vector<float>{0, 1, 3, 0, 9,  11, 0, 2, 4, 0, 10, 12,
                                0, 5, 7, 0, 13, 15, 0, 6, 8, 0, 14, 16}));
}

TEST(BatchToSpaceNDTest, MatchesDocumentedExampleAndInvertsSpaceToBatch) {
  Problem p{tfl::BuiltinOperator_BATCH_TO_SPACE_ND,
            F32,
            {4, 2, 2, 1},
            {2, 2},
            {0, 0, 0, 0}};
  std::vector<float> in = {1, 3, 9,  11, 2, 4, 10, 12,
                           5, 7, 13, 15, 6, 8, 14, 16};
  std::vector<float> want(16);
  std::iota(want.begin(), want.end(), 1.0f);
  EXPECT_EQ(RunOp<float>(p, in, {1, 4, 4, 1}), want);
  // Crops equal to the paddings undo SPACE_TO_BATCH_ND (3-D, block 3).
  Problem s2b{
      tfl::BuiltinOperator_SPACE_TO_BATCH_ND, F32, {2, 5, 2}, {3}, {1, 0}};
  std::vector<float> x(20);
  std::iota(x.begin(), x.end(), 1.0f);
  const std::vector<float> batched = RunOp<float>(s2b, x, {6, 2, 2});
  Problem b2s{
      tfl::BuiltinOperator_BATCH_TO_SPACE_ND, F32, {6, 2, 2}, {3}, {1, 0}};
  EXPECT_EQ(RunOp<float>(b2s, batched, {2, 5, 2}), x);
}

TEST(SpaceToBatchNDTest, ReadsBlockAndPaddingsComputedAtInvoke) {
  Problem p{tfl::BuiltinOperator_SPACE_TO_BATCH_ND,
            F32,
            {1, 4, 4, 1},
            {2, 2},
            {0, 0, 0, 0},
            /*values_as_inputs=*/true};
  std::vector<float> in(16);
  std::iota(in.begin(), in.end(), 1.0f);
  EXPECT_EQ(RunOp<float>(p, in, {4, 2, 2, 1}),
            (std::vector<float>{1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8,
                                14, 16}));
  p.op = tfl::BuiltinOperator_BATCH_TO_SPACE_ND;
  p.in_shape = {4, 2, 2, 1};
  p.amounts = {0, 1, 1, 0};
  EXPECT_EQ(RunOp<float>(p, in, {1, 3, 3, 1}),
            (std::vector<float>{5, 2, 6, 13, 10, 14, 7, 4, 8}));
}

TEST(SpaceToBatchNDTest, RefusesBlocksThatDoNotDivide) {
  Problem p{tfl::BuiltinOperator_SPACE_TO_BATCH_ND,
            F32,
            {1, 3, 4, 1},
            {2, 2},
            {0, 0, 0, 0}};
  auto rt = Load(p, {4, 2, 2, 1});
  ASSERT_FALSE(rt.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(rt.status())) << rt.status();
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("padded spatial dim 0 (3) is not a "
                                   "multiple of block_shape[0] = 2"));
  p.block = {2, 0};
  rt = Load(p, {4, 2, 2, 1});
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("block_shape[1] = 0 is not positive"));
  p.in_shape = {1, 4, 4, 1, 1};
  p.block = {2, 2, 1};
  p.amounts = {0, 0, 0, 0, 0, 0};
  rt = Load(p, {4, 2, 2, 1, 1});
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("input must be 3-D or 4-D"));
}

TEST(BatchToSpaceNDTest, RefusesBatchNotDivisibleAndOverlargeCrops) {
  Problem p{tfl::BuiltinOperator_BATCH_TO_SPACE_ND,
            F32,
            {3, 2, 2, 1},
            {2, 2},
            {0, 0, 0, 0}};
  auto rt = Load(p, {1, 4, 4, 1});
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("input batch 3 is not a multiple of the "
                                   "block size 4"));
  p.in_shape = {4, 2, 2, 1};
  p.amounts = {3, 2, 0, 0};
  rt = Load(p, {1, 1, 4, 1});
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("crops remove more than"));
  p.amounts = {-1, 0, 0, 0};
  rt = Load(p, {1, 5, 4, 1});
  EXPECT_THAT(std::string(rt.status().message()),
              ::testing::HasSubstr("negative crops on spatial dim 0"));
}

}  // namespace
}  // namespace graft
