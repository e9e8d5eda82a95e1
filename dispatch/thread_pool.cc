#include "dispatch/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__linux__)
#include <sched.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace graft {
namespace {

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// The CPU the calling thread runs on, or kUnknownCpu where the system
// cannot tell.
constexpr int kUnknownCpu = -2;
int CurrentCpu() {
#if defined(__linux__)
  const int cpu = sched_getcpu();  // vDSO (rdpid / rdtscp): no system call
  return cpu >= 0 ? cpu : kUnknownCpu;
#else
  return kUnknownCpu;
#endif
}

// Polls `done` for up to `micros`; true as soon as it holds. Every 64 polls
// it reads the clock and asks `share_cpu` whether a thread it waits for
// was last seen on this thread's CPU; then it yields the CPU, so that
// thread runs instead of waiting for the poll to time out (the scheduler
// put both on one core). Otherwise it keeps the CPU: a yield would hand it
// to any other runnable task for a whole time slice (milliseconds) while
// the thread it waits for is a microsecond from done on the other core.
template <typename Done, typename ShareCpu>
bool SpinUntil(int micros, Done done, ShareCpu share_cpu) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(micros);
  for (int i = 1;; ++i) {
    if (done()) return true;
    CpuRelax();
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() > deadline) return done();
      if (share_cpu()) std::this_thread::yield();
    }
  }
}

// Set while a thread runs a loop body, so nested loops run inline instead of
// waiting on the pool they occupy.
thread_local bool tls_in_parallel_for = false;
// The index of the pool thread this is (0 for a thread outside any pool).
thread_local int tls_thread_index = 0;
}  // namespace

int ThreadPool::CurrentThreadIndex() { return tls_thread_index; }

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)),
      ranges_(new Range[num_threads_]),
      seats_(new Seat[num_threads_]) {
  seats_[0].cpu.store(CurrentCpu(), std::memory_order_relaxed);
  workers_.reserve(num_threads_ - 1);
  for (int i = 0; i < num_threads_ - 1; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i + 1); });
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return started_ == num_threads_ - 1; });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  work_cv_.notify_all();
  crowded_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

int64_t ThreadPool::TakeChunk(Range& r, bool from_back) {
  uint64_t ends = r.ends.load(std::memory_order_relaxed);
  for (;;) {
    const uint32_t front = static_cast<uint32_t>(ends);
    const uint32_t back = static_cast<uint32_t>(ends >> 32);
    if (front >= back) return -1;
    const uint64_t next = from_back
                              ? (uint64_t{back - 1} << 32) | front
                              : (uint64_t{back} << 32) | (front + 1);
    if (r.ends.compare_exchange_weak(ends, next, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      return from_back ? back - 1 : front;
    }
  }
}

bool ThreadPool::SharesCpu(int thread_index) {
  const int cpu = CurrentCpu();
  if (cpu == kUnknownCpu) return true;
  seats_[thread_index].cpu.store(cpu, std::memory_order_relaxed);
  for (int t = 0; t < num_threads_; ++t) {
    if (t != thread_index &&
        seats_[t].cpu.load(std::memory_order_relaxed) == cpu) {
      return true;
    }
  }
  return false;
}

void ThreadPool::RunChunks(int thread_index) {
  bool was_inside = tls_in_parallel_for;
  tls_in_parallel_for = true;
  const Loop loop = loop_;
  // Chunks run here, counted in once at the end: a shared counter bumped
  // per chunk would bounce its cache line between the cores every chunk.
  int64_t done = 0;
  // Own range first, then the others' from their backs, nearest first.
  for (int i = 0; i < num_threads_; ++i) {
    Range& r = ranges_[(thread_index + i) % num_threads_];
    for (;;) {
      const int64_t c = TakeChunk(r, /*from_back=*/i != 0);
      if (c < 0) break;
      const int64_t begin = c * loop.chunk;
      (*loop.fn)(thread_index, begin, std::min(loop.n, begin + loop.chunk));
      ++done;
    }
  }
  if (done > 0 && done_chunks_.fetch_add(done, std::memory_order_acq_rel) +
                          done == loop.num_chunks) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_cv_.notify_one();
  }
  tls_in_parallel_for = was_inside;
}

bool ThreadPool::MoveOffSharedCpu(int thread_index) {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  cpu_set_t free_cpus = allowed;
  for (int t = 0; t < num_threads_; ++t) {
    const int cpu = t == thread_index
                        ? CurrentCpu()
                        : seats_[t].cpu.load(std::memory_order_relaxed);
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_CLR(cpu, &free_cpus);
  }
  if (CPU_COUNT(&free_cpus) == 0) return false;
  // The kernel migrates the thread off its CPU before returning; then the
  // mask is the user's again and the thread stays where it went.
  if (sched_setaffinity(0, sizeof(free_cpus), &free_cpus) != 0) return false;
  sched_setaffinity(0, sizeof(allowed), &allowed);
  moves_.fetch_add(1, std::memory_order_relaxed);
  return !SharesCpu(thread_index);
#else
  (void)thread_index;
  return false;
#endif
}

void ThreadPool::SitOut(std::atomic<int>& seat) {
  seat.store(kNotRunning, std::memory_order_relaxed);
  sit_outs_.fetch_add(1, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mutex_);
  crowded_cv_.wait_for(lock, std::chrono::microseconds(kSitOutMicros),
                       [&] { return stop_.load(std::memory_order_acquire); });
}

void ThreadPool::WorkerLoop(int thread_index) {
  tls_thread_index = thread_index;
  std::atomic<int>& seat = seats_[thread_index].cpu;
  if (SharesCpu(thread_index)) MoveOffSharedCpu(thread_index);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++started_;
  }
  done_cv_.notify_all();
  uint64_t seen = 0;
  for (;;) {
    auto ready = [&] {
      return stop_.load(std::memory_order_acquire) ||
             generation_.load(std::memory_order_acquire) != seen;
    };
    seat.store(CurrentCpu(), std::memory_order_relaxed);
    bool crowded = false;
    SpinUntil(
        kSpinMicros,
        [&] {
          return ready() || crowded || parked_.load(std::memory_order_relaxed);
        },
        [&] {
          crowded = SharesCpu(thread_index);
          return false;
        });
    if (crowded && !ready()) {
      if (!MoveOffSharedCpu(thread_index)) SitOut(seat);
      continue;
    }
    if (!ready()) {
      seat.store(kNotRunning, std::memory_order_relaxed);
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, ready);
      lock.unlock();
      seat.store(CurrentCpu(), std::memory_order_relaxed);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = generation_.load(std::memory_order_acquire);
    if (SharesCpu(thread_index) && !MoveOffSharedCpu(thread_index)) {
      SitOut(seat);
      continue;
    }
    active_.fetch_add(1, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst)) RunChunks(thread_index);
    active_.fetch_sub(1, std::memory_order_release);
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_chunk,
                             absl::FunctionRef<void(int64_t, int64_t)> fn) {
  ParallelForWithThreadIndex(
      n, min_chunk, [&](int, int64_t begin, int64_t end) { fn(begin, end); });
}

void ThreadPool::ParallelForWithThreadIndex(
    int64_t n, int64_t min_chunk,
    absl::FunctionRef<void(int, int64_t, int64_t)> fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  if (num_threads_ == 1 || n <= min_chunk || tls_in_parallel_for) {
    fn(tls_in_parallel_for ? tls_thread_index : 0, 0, n);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  // A few chunks per thread even out uneven chunk costs and a late start.
  int64_t target_chunks = int64_t{num_threads_} * 8;
  int64_t chunk = std::max(min_chunk, (n + target_chunks - 1) / target_chunks);
  parked_.store(false, std::memory_order_relaxed);
  seats_[0].cpu.store(CurrentCpu(), std::memory_order_relaxed);
  loop_.fn = &fn;
  loop_.n = n;
  loop_.chunk = chunk;
  const int64_t num_chunks = (n + chunk - 1) / chunk;
  loop_.num_chunks = num_chunks;
  for (int t = 0; t < num_threads_; ++t) {
    const uint64_t front = num_chunks * t / num_threads_;
    const uint64_t back = num_chunks * (t + 1) / num_threads_;
    ranges_[t].ends.store(front | back << 32, std::memory_order_relaxed);
  }
  done_chunks_.store(0, std::memory_order_relaxed);
  open_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  work_cv_.notify_all();  // no system call when every worker is polling
  RunChunks(0);
  auto done = [&] {
    return done_chunks_.load(std::memory_order_acquire) == num_chunks;
  };
  auto share_cpu = [&] { return SharesCpu(0); };
  if (!SpinUntil(kSpinMicros, done, share_cpu)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, done);
  }
  // No worker may start on this loop's fields after this; one that counted
  // itself in first is inside a last chunk lookup (all are taken) or about
  // to see open_ false.
  open_.store(false, std::memory_order_seq_cst);
  while (active_.load(std::memory_order_seq_cst) != 0) {
    SpinUntil(
        kSpinMicros,
        [&] { return active_.load(std::memory_order_seq_cst) == 0; },
        share_cpu);
  }
  loop_.fn = nullptr;
}

}  // namespace graft
