#include "dispatch/thread_pool.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>
#endif

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

// A worker held inside its first chunk: the caller takes its own range and
// then the rest of the worker's from the back, so the loop ends once the
// held chunk does (the hold is released only when every other chunk is
// done, so without stealing it would time out). Each thread starts at the
// front of its own range.
TEST(ThreadPoolTest, OtherThreadsTakeTheRangeOfAHeldThread) {
  ThreadPool pool(2);
  for (int round = 0; round < 20; ++round) {
    constexpr int64_t kChunks = 16;  // chunks of 1: 8 per thread's range
    std::vector<std::atomic<int>> hits(kChunks);
    std::vector<int64_t> first(2, -1);
    std::atomic<int> done{0};
    std::atomic<bool> timed_out{false};
    pool.ParallelForWithThreadIndex(kChunks, 1, [&](int t, int64_t b,
                                                    int64_t e) {
      if (first[t] < 0) {
        first[t] = b;
        if (t == 1) {  // hold the worker until the caller did the rest
          const auto limit =
              std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (done.load() < kChunks - 1) {
            if (std::chrono::steady_clock::now() > limit) {
              timed_out = true;
              break;
            }
            std::this_thread::yield();
          }
        }
      }
      for (int64_t i = b; i < e; ++i) hits[i]++;
      done += static_cast<int>(e - b);
    });
    for (int64_t i = 0; i < kChunks; ++i) ASSERT_EQ(hits[i], 1) << i;
    EXPECT_FALSE(timed_out) << "the caller did not take the held range";
    EXPECT_EQ(first[0], 0);
    if (first[1] >= 0) {
      EXPECT_EQ(first[1], kChunks / 2);
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

// Loops of random sizes back to back, many with fewer chunks than threads
// (some ranges get none: they still take each loop's tag, or a later loop
// would find them stale) and some from two calling threads at once: every
// loop covers its range exactly once. The seed is printed; the sweep in
// the commit that added this ran 200 of them.
TEST(ThreadPoolTest, RandomLoopSizesCoverTheirRangesExactlyOnce) {
  const uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::printf("ThreadPoolTest seed %u\n", seed);
  for (int threads : {2, 3, 5}) {
    ThreadPool pool(threads);
    auto run_loops = [&](uint32_t s, int loops) {
      std::mt19937 rng(s);
      for (int r = 0; r < loops; ++r) {
        const int64_t n = std::uniform_int_distribution<int64_t>(1, 40)(rng);
        const int64_t min_chunk =
            std::uniform_int_distribution<int64_t>(1, 12)(rng);
        std::vector<std::atomic<int>> hits(n);
        pool.ParallelForWithThreadIndex(n, min_chunk,
                                        [&](int t, int64_t b, int64_t e) {
                                          EXPECT_GE(t, 0);
                                          EXPECT_LT(t, threads);
                                          for (int64_t i = b; i < e; ++i)
                                            hits[i]++;
                                        });
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(hits[i], 1) << "n " << n << " min_chunk " << min_chunk;
        }
      }
    };
    std::thread other([&] { run_loops(seed + 1, 300); });
    run_loops(seed, 1000);
    other.join();
  }
}

// Loops separated by pauses longer than the workers poll (they sleep in
// between), by none (they are still polling), and by Park() (they sleep at
// once), with Park() also called from another thread while loops run:
// every loop still covers its range exactly once and returns.
TEST(ThreadPoolTest, LoopsAfterPollingSleepingAndParkedWorkers) {
  ThreadPool pool(3);
  std::atomic<bool> stop{false};
  std::thread parker([&] {
    while (!stop) {
      pool.Park();
      std::this_thread::yield();
    }
  });
  for (int r = 0; r < 300; ++r) {
    std::vector<std::atomic<int>> hits(97);
    pool.ParallelFor(97, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int i = 0; i < 97; ++i) ASSERT_EQ(hits[i], 1) << "loop " << r;
    if (r % 3 == 0) pool.Park();
    if (r % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stop = true;
  parker.join();
}

// The caller and its workers pinned to one CPU, as the scheduler sometimes
// places them: the workers sit the loops out (the caller takes their
// chunks), a thread waiting for another's chunk lets it run (it yields
// when they share the CPU), and every loop still covers its range.
// bench/thread_pool_bench.cc's loop_one_cpu times the same case.
TEST(ThreadPoolTest, LoopsWithAllThreadsOnOneCpu) {
#if defined(__linux__)
  cpu_set_t old_set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(old_set), &old_set), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  {
    ThreadPool pool(3);  // its workers inherit the affinity
    for (int r = 0; r < 200; ++r) {
      std::vector<std::atomic<int>> hits(64);
      pool.ParallelFor(64, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          volatile int64_t spin = 0;
          for (int k = 0; k < 2000; ++k) spin = spin + k;
          hits[i]++;
        }
      });
      for (int i = 0; i < 64; ++i) ASSERT_EQ(hits[i], 1) << "loop " << r;
    }
    // The workers saw the caller's CPU and left the loops to it.
    EXPECT_GT(pool.sit_outs(), 0);
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(old_set), &old_set), 0);
#else
  GTEST_SKIP() << "needs sched_setaffinity";
#endif
}

// A worker that finds itself on the caller's CPU while another CPU is
// free moves there (MoveOffSharedCpu) instead of sitting the loops out.
// The pool is made while the caller is pinned to one CPU, so its worker
// starts there and cannot leave; then the worker's mask is widened, as a
// scheduler placing both threads on one CPU leaves it, and loops run. Its
// next look at the seats moves it, unless the scheduler moved it first
// (when it woke from a sit-out): the attempt is then made again.
TEST(ThreadPoolTest, AWorkerOnTheCallersCpuMovesToAFreeCpu) {
#if defined(__linux__)
  cpu_set_t old_set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(old_set), &old_set), 0);
  if (CPU_COUNT(&old_set) < 2) GTEST_SKIP() << "needs two allowed CPUs";
  int64_t moves = 0;
  for (int attempt = 0; attempt < 50 && moves == 0; ++attempt) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    ThreadPool pool(2);
    EXPECT_EQ(pool.moves(), 0);  // nowhere to go
    // The pool's worker is the process's only other thread in this test.
    const pid_t self = gettid();
    int widened = 0;
    for (const auto& task :
         std::filesystem::directory_iterator("/proc/self/task")) {
      const pid_t tid = std::atoi(task.path().filename().c_str());
      if (tid != self &&
          sched_setaffinity(tid, sizeof(old_set), &old_set) == 0) {
        ++widened;
      }
    }
    ASSERT_GE(widened, 1);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
    while (pool.moves() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::vector<std::atomic<int>> hits(64);
      pool.ParallelFor(64, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i]++;
      });
      for (int i = 0; i < 64; ++i) ASSERT_EQ(hits[i], 1);
    }
    moves = pool.moves();
    ASSERT_EQ(sched_setaffinity(0, sizeof(old_set), &old_set), 0);
  }
  EXPECT_GT(moves, 0);
#else
  GTEST_SKIP() << "needs sched_setaffinity";
#endif
}

}  // namespace
}  // namespace graft
