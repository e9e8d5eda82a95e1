#include "dispatch/memory_planner.h"

#include <random>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(MemoryPlannerTest, BuffersWithDisjointLifetimesShareBytes) {
  std::vector<BufferRequest> r = {{1000, 0, 1}, {1000, 2, 3}, {1000, 4, 5}};
  auto plan = PlanMemory(r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->arena_bytes, 1024u);
  EXPECT_EQ(plan->total_bytes, 3u * 1024);
  EXPECT_TRUE(VerifyMemoryPlan(r, *plan).ok());
}

TEST(MemoryPlannerTest, BuffersLiveTogetherDoNotOverlap) {
  std::vector<BufferRequest> r = {{100, 0, 5}, {200, 1, 2}, {300, 2, 3}};
  auto plan = PlanMemory(r);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(VerifyMemoryPlan(r, *plan).ok());
  // 2 and 3 overlap at step 2 and both overlap 1: all three are disjoint.
  EXPECT_EQ(plan->arena_bytes, 128u + 256 + 320);
}

TEST(MemoryPlannerTest, OffsetsAreAligned) {
  std::vector<BufferRequest> r = {{3, 0, 0}, {5, 0, 0}, {7, 0, 0}};
  auto plan = PlanMemory(r, 64);
  ASSERT_TRUE(plan.ok());
  for (size_t off : plan->offsets) EXPECT_EQ(off % 64, 0u);
}

TEST(MemoryPlannerTest, ReusesTheBestFittingGap) {
  // The big buffer dies at 1; later a small one fits in its place below the
  // buffer that is still live, instead of growing the arena.
  std::vector<BufferRequest> r = {
      {4096, 0, 1}, {1024, 0, 3}, {2048, 2, 3}};
  auto plan = PlanMemory(r);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->arena_bytes, 4096u + 1024);
  EXPECT_TRUE(VerifyMemoryPlan(r, *plan).ok());
}

TEST(MemoryPlannerTest, EmptyBuffersTakeNoSpace) {
  std::vector<BufferRequest> r = {{0, 0, 9}, {64, 0, 9}};
  auto plan = PlanMemory(r);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->arena_bytes, 64u);
}

TEST(MemoryPlannerTest, RejectsInvertedLifetimesAndBadAlignment) {
  std::vector<BufferRequest> r = {{8, 3, 2}};
  EXPECT_FALSE(PlanMemory(r).ok());
  EXPECT_FALSE(PlanMemory({}, 48).ok());
}

TEST(MemoryPlannerTest, RandomPlansAreValidAndNoLargerThanNoReuse) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<BufferRequest> r(testing::RandomInt(rng, 1, 40));
    const int steps = testing::RandomInt(rng, 1, 30);
    size_t max_live_lower_bound = 0;
    for (BufferRequest& b : r) {
      b.bytes = testing::RandomInt(rng, 0, 5000);
      b.first_use = testing::RandomInt(rng, 0, steps);
      b.last_use = testing::RandomInt(rng, b.first_use, steps);
      max_live_lower_bound = std::max(max_live_lower_bound, b.bytes);
    }
    auto plan = PlanMemory(r);
    ASSERT_TRUE(plan.ok());
    ASSERT_TRUE(VerifyMemoryPlan(r, *plan).ok()) << "iteration " << iter;
    EXPECT_LE(plan->arena_bytes, plan->total_bytes);
    EXPECT_GE(plan->arena_bytes, max_live_lower_bound);
  }
}

}  // namespace
}  // namespace graft
