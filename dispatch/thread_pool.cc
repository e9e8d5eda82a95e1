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

// Asks for the cache line at p in the exclusive state, ahead of a write:
// a line the other core last read (a range it probed) then moves while
// this thread does something else, not at the write.
void PrefetchForWrite(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

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
  seats_[0].Set(CurrentCpu());
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
    loop_.stop.store(true);
  }
  work_cv_.notify_all();
  crowded_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ThreadPool::LoopFields ThreadPool::ReadLoop() const {
  for (;;) {
    const uint64_t seq = loop_.seq.load(std::memory_order_acquire);
    if (seq % 2 != 0) {
      CpuRelax();
      continue;
    }
    // Acquire loads: a field the next loop's writer already stored makes
    // its odd seq visible to the check below.
    LoopFields f;
    f.fn = loop_.fn.load(std::memory_order_acquire);
    f.n = loop_.n.load(std::memory_order_acquire);
    f.num_chunks = loop_.num_chunks.load(std::memory_order_acquire);
    f.seq = seq;
    if (loop_.seq.load(std::memory_order_relaxed) == seq) return f;
  }
}

int64_t ThreadPool::TakeChunk(int r, const LoopFields& loop, bool from_back) {
  std::atomic<uint64_t>& state = ranges_[r].state;
  const uint32_t loop_tag = loop.tag();
  uint64_t s = state.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t tag = static_cast<uint32_t>(s >> 32);
    uint64_t front, back;
    if (tag == loop_tag) {
      front = (s >> 16) & 0xffff;
      back = s & 0xffff;
    } else if (static_cast<int32_t>(tag - loop_tag) > 0) {
      return -1;  // a later loop's: this one has ended
    } else {
      front = static_cast<uint64_t>(loop.num_chunks * r / num_threads_);
      back = static_cast<uint64_t>(loop.num_chunks * (r + 1) / num_threads_);
    }
    if (front >= back) {
      // Even an empty range takes the loop's tag (see Range).
      if (tag == loop_tag) return -1;
      if (state.compare_exchange_weak(s, uint64_t{loop_tag} << 32,
                                      std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        return -1;
      }
      continue;
    }
    const uint64_t taken = from_back ? back - 1 : front;
    if (from_back) {
      --back;
    } else {
      ++front;
    }
    const uint64_t next = uint64_t{loop_tag} << 32 | front << 16 | back;
    if (state.compare_exchange_weak(s, next, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      return static_cast<int64_t>(taken);
    }
  }
}

bool ThreadPool::SharesCpu(int thread_index) {
  const int cpu = CurrentCpu();
  if (cpu == kUnknownCpu) return true;
  seats_[thread_index].Set(cpu);
  for (int t = 0; t < num_threads_; ++t) {
    if (t != thread_index &&
        seats_[t].cpu.load(std::memory_order_relaxed) == cpu) {
      return true;
    }
  }
  return false;
}

void ThreadPool::CountDone(int64_t chunks) {
  done_.fetch_add(static_cast<uint64_t>(chunks), std::memory_order_seq_cst);
  if (waiting_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_cv_.notify_one();
  }
}

int64_t ThreadPool::RunChunks(int thread_index, const LoopFields& loop,
                              int first, int last) {
  bool was_inside = tls_in_parallel_for;
  tls_in_parallel_for = true;
  int64_t total = 0;
  // A worker counts each range's chunks as soon as it finds it empty: the
  // caller may be waiting for just those.
  for (int i = first; i < last; ++i) {
    const int r = (thread_index + i) % num_threads_;
    int64_t done = 0;
    for (;;) {
      const int64_t c = TakeChunk(r, loop, /*from_back=*/i != 0);
      if (c < 0) break;
      (*loop.fn)(thread_index, loop.n * c / loop.num_chunks,
                 loop.n * (c + 1) / loop.num_chunks);
      ++done;
    }
    if (done > 0 && thread_index != 0) CountDone(done);
    total += done;
  }
  tls_in_parallel_for = was_inside;
  return total;
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
  crowded_cv_.wait_for(lock, std::chrono::microseconds(kSitOutMicros), [&] {
    return loop_.stop.load(std::memory_order_acquire);
  });
}

void ThreadPool::WorkerLoop(int thread_index) {
  tls_thread_index = thread_index;
  Seat& seat = seats_[thread_index];
  if (SharesCpu(thread_index)) MoveOffSharedCpu(thread_index);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++started_;
  }
  done_cv_.notify_all();
  uint64_t seen = 0;  // the last loop's seq
  for (;;) {
    auto ready = [&] {
      return loop_.stop.load(std::memory_order_seq_cst) ||
             loop_.seq.load(std::memory_order_seq_cst) != seen;
    };
    seat.Set(CurrentCpu());
    bool crowded = false;
    SpinUntil(
        kSpinMicros,
        [&] {
          return ready() || crowded ||
                 loop_.parked.load(std::memory_order_relaxed);
        },
        [&] {
          crowded = SharesCpu(thread_index);
          return false;
        });
    if (crowded && !ready()) {
      if (!MoveOffSharedCpu(thread_index)) SitOut(seat.cpu);
      continue;
    }
    if (!ready()) {
      seat.Set(kNotRunning);
      // Announced before the check under the mutex: a caller publishing
      // after it sees the announcement and notifies under the mutex.
      loop_.sleepers.fetch_add(1, std::memory_order_seq_cst);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_cv_.wait(lock, ready);
      }
      loop_.sleepers.fetch_sub(1, std::memory_order_relaxed);
      seat.Set(CurrentCpu());
    }
    if (loop_.stop.load(std::memory_order_acquire)) return;
    const LoopFields loop = ReadLoop();
    seen = loop.seq;
    if (SharesCpu(thread_index) && !MoveOffSharedCpu(thread_index)) {
      SitOut(seat.cpu);
      continue;
    }
    RunChunks(thread_index, loop, 0, num_threads_);
    PrefetchForWrite(&ranges_[thread_index]);
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
  // Whole min_chunks, up to a few per thread (they even out uneven chunk
  // costs and a late start), and where there are enough, as many per
  // thread: each thread's range is then an even share, and the share of
  // the next loop over the same rows (the rows this one wrote) too.
  int64_t num_chunks =
      std::min({n / min_chunk, int64_t{num_threads_} * 8, kMaxChunks});
  if (num_chunks > num_threads_) num_chunks -= num_chunks % num_threads_;
  if (num_threads_ == 1 || num_chunks < 2 || tls_in_parallel_for) {
    fn(tls_in_parallel_for ? tls_thread_index : 0, 0, n);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  PrefetchForWrite(&ranges_[0]);
  LoopFields loop;
  loop.fn = &fn;
  loop.n = n;
  loop.num_chunks = num_chunks;
  loop.seq = 2 * ++loops_;
  if (loop_.parked.load(std::memory_order_relaxed)) {
    loop_.parked.store(false, std::memory_order_relaxed);
  }
  seats_[0].Set(CurrentCpu());
  // Odd while the fields change; the release stores order them after it.
  loop_.seq.store(loop.seq - 1, std::memory_order_relaxed);
  loop_.fn.store(loop.fn, std::memory_order_release);
  loop_.n.store(loop.n, std::memory_order_release);
  loop_.num_chunks.store(loop.num_chunks, std::memory_order_release);
  loop_.seq.store(loop.seq, std::memory_order_seq_cst);
  if (loop_.sleepers.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    work_cv_.notify_all();
  }
  // The caller's own range, then the others' only while some worker has
  // chunks left: a look makes a range's line shared, and its owner's next
  // take waits for it to come back. (Every kRetagLoops loops it looks
  // anyway, so that no range's tag falls behind; see Range.)
  int64_t own = RunChunks(0, loop, 0, 1);
  if (loop.tag() % kRetagLoops == 0 ||
      done_.load(std::memory_order_acquire) !=
          worker_chunks_ + static_cast<uint64_t>(loop.num_chunks - own)) {
    own += RunChunks(0, loop, 1, num_threads_);
  }
  worker_chunks_ += loop.num_chunks - own;
  const uint64_t target = worker_chunks_;
  auto done = [&] { return done_.load(std::memory_order_acquire) == target; };
  auto share_cpu = [&] { return SharesCpu(0); };
  if (!SpinUntil(kSpinMicros, done, share_cpu)) {
    waiting_.store(true, std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      done_cv_.wait(lock, [&] {
        return done_.load(std::memory_order_seq_cst) == target;
      });
    }
    waiting_.store(false, std::memory_order_relaxed);
  }
}

}  // namespace graft
