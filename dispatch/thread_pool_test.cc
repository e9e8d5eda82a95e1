#include "dispatch/thread_pool.h"

#include <atomic>
#include <vector>

#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(ThreadPoolTest, CoversTheRangeExactlyOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelFor(n, 3, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << i;
    }
  }
}

TEST(ThreadPoolTest, ThreadIndicesAreInRange) {
  ThreadPool pool(3);
  std::atomic<bool> bad{false};
  pool.ParallelForWithThreadIndex(100, 1, [&](int t, int64_t, int64_t) {
    if (t < 0 || t >= 3) bad = true;
  });
  EXPECT_FALSE(bad);
}

TEST(ThreadPoolTest, NestedLoopsRunInline) {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  pool.ParallelFor(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.ParallelFor(10, 1, [&](int64_t b2, int64_t e2) {
        total += static_cast<int>(e2 - b2);
      });
    }
  });
  EXPECT_EQ(total, 80);
}

TEST(ThreadPoolTest, OneThreadRunsInlineAsOneRange) {
  ThreadPool pool(1);
  int calls = 0;
  pool.ParallelFor(1000, 1, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 1000);
  });
  EXPECT_EQ(calls, 1);
}

TEST(ThreadPoolTest, ManyLoopsInARow) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 500; ++r) {
    pool.ParallelFor(64, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  }
  EXPECT_EQ(sum, 500 * 64);
}

}  // namespace
}  // namespace graft
