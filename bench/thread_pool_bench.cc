// What a parallel loop costs on Graft's thread pool (dispatch/thread_pool.h).
//
// loop/THREADS/STEPS: one ParallelFor over 16 items whose bodies together
// take STEPS steps of a dependent integer chain (a few cycles each; nothing
// shared but the loop itself), at THREADS = 1 (inline: the serial baseline)
// and 2. The closing table prints each 2-thread loop against the 1-thread
// one of the same STEPS: the speedup, and what the hand-over costs beyond
// half the serial time. A kernel's threshold for going parallel (work per
// thread) must be worth this overhead.
//
// loop_one_cpu/STEPS: the same 2-thread loop with the whole process pinned
// to one CPU, as the scheduler sometimes places a worker and its caller:
// the worker sits the loops out (ThreadPool::SitOut), so each should cost
// what the 1-thread loop does, not a context switch per chunk or the
// pool's whole polling time.
//
// round_trip: one cache line handed to a second thread, which polls it as
// the pool's workers poll theirs, and back: the least any hand-over
// between the two cores costs. On a VM it depends on where the host put
// the vCPUs (30 to 500 ns on the same machine within minutes; bench/README,
// eleventh pass), and 2-thread figures with it: read them beside it.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace {

constexpr int kItems = 16;
constexpr int kSteps[] = {250, 1000, 4000, 16000};

// Each step a multiply, an add and an xor-shift on the last step's result.
uint64_t Spin(int64_t steps, uint64_t seed) {
  uint64_t x = seed | 1;
  for (int64_t i = 0; i < steps; ++i) {
    x = x * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i);
    x ^= x >> 29;
  }
  return x;
}

void RunLoops(benchmark::State& state, int threads) {
  const int64_t steps_per_item = state.range(0) / kItems;
  ThreadPool pool(threads);
  struct alignas(64) Item {  // a cache line each: no line is shared
    uint64_t value = 0;
  };
  Item items[kItems];
  for (auto _ : state) {
    pool.ParallelFor(kItems, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        items[i].value = Spin(steps_per_item, items[i].value);
      }
    });
    benchmark::DoNotOptimize(items);
  }
}

void BM_Loop(benchmark::State& state, int threads) { RunLoops(state, threads); }

void BM_LoopOneCpu(benchmark::State& state) {
#if defined(__linux__)
  cpu_set_t old_set;
  sched_getaffinity(0, sizeof(old_set), &old_set);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  // The pool's worker inherits the caller's affinity at its creation.
  sched_setaffinity(0, sizeof(one), &one);
  RunLoops(state, 2);
  sched_setaffinity(0, sizeof(old_set), &old_set);
#else
  state.SkipWithError("needs sched_setaffinity");
#endif
}

void BM_RoundTrip(benchmark::State& state) {
  struct alignas(64) Line {
    std::atomic<int64_t> value{0};
  };
  Line line;
  std::atomic<bool> stop{false};
  // Polls with a yield now and then, so that two threads the scheduler put
  // on one CPU still finish.
  auto wait_for = [&](int64_t want) {
    for (int i = 1; line.value.load(std::memory_order_acquire) != want; ++i) {
      if (stop.load(std::memory_order_relaxed)) return;
      if (i % 1024 == 0) std::this_thread::yield();
    }
  };
  std::thread partner([&] {
    for (int64_t v = 1; !stop.load(std::memory_order_relaxed); v += 2) {
      wait_for(v);
      line.value.store(v + 1, std::memory_order_release);
    }
  });
  int64_t v = 0;
  for (auto _ : state) {
    line.value.store(v + 1, std::memory_order_release);
    wait_for(v + 2);
    v += 2;
  }
  stop.store(true, std::memory_order_relaxed);
  partner.join();
}

void Register() {
  benchmark::RegisterBenchmark("round_trip", BM_RoundTrip)->UseRealTime();
  for (int steps : kSteps) {
    for (int threads : {1, 2}) {
      benchmark::RegisterBenchmark(absl::StrCat("loop/", threads).c_str(),
                                   BM_Loop, threads)
          ->Arg(steps)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark("loop_one_cpu", BM_LoopOneCpu)
        ->Arg(steps)
        ->UseRealTime();
  }
}

int Main(int argc, char** argv) {
  Register();
  if (!bench::InitializeWithMedians(&argc, argv, 5)) return 2;
  bench::MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nmachine: %s\n", bench::MachineDescription().c_str());
  if (const auto* trip = reporter.Find("round_trip/real_time")) {
    std::printf("a cache line's round trip between two threads: %.0f ns\n",
                trip->seconds * 1e9);
  }
  std::printf("%8s %10s %10s %8s %14s %10s\n", "steps", "1 thread",
              "2 threads", "speedup", "over half", "one CPU");
  for (int steps : kSteps) {
    const auto* one =
        reporter.Find(absl::StrCat("loop/1/", steps, "/real_time"));
    const auto* two =
        reporter.Find(absl::StrCat("loop/2/", steps, "/real_time"));
    const auto* pinned =
        reporter.Find(absl::StrCat("loop_one_cpu/", steps, "/real_time"));
    if (one == nullptr || two == nullptr) continue;
    std::printf("%8d %10s %10s %7.2fx %14s %10s\n", steps,
                bench::HumanTime(one->seconds).c_str(),
                bench::HumanTime(two->seconds).c_str(),
                one->seconds / two->seconds,
                bench::HumanTime(two->seconds - one->seconds / 2).c_str(),
                pinned ? bench::HumanTime(pinned->seconds).c_str() : "-");
  }
  return 0;
}

}  // namespace
}  // namespace graft

int main(int argc, char** argv) { return graft::Main(argc, argv); }
