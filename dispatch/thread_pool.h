// ThreadPool: a small fixed pool for data-parallel loops inside kernels.
//
// The pool has num_threads - 1 worker threads; the thread that calls
// ParallelFor works too, so num_threads == 1 means every loop runs inline
// with no thread at all. Workers are created once, at construction:
// ParallelFor allocates nothing. After a loop, a worker polls for the next
// one for up to kSpinMicros before it sleeps on a condition variable, and
// the calling thread polls for the loop's last chunk the same way: a model's
// consecutive ops (tens of microseconds apart) then cost no wake-up
// (futex and scheduler latency, ~10 us a loop on a VM), and an idle pool
// still sleeps. A polling thread yields its CPU only when the thread it
// waits for was last seen on the same CPU (sched_getcpu): on a busy
// machine a yield gives the CPU away for a time slice. A worker the
// scheduler put on the CPU of another pool thread moves to an allowed CPU
// no pool thread was seen on (MoveOffSharedCpu); where there is none, it
// sits out the loops of the next millisecond, asleep, and the caller does
// them (see SitOut: a 2-thread model ran at half its 1-thread speed while
// the scheduler kept both threads on one CPU). A new thread starts on its
// creator's CPU, so the constructor returns only once each worker has
// run and moved: otherwise the first milliseconds of loops, a short
// benchmark's whole run, went to one CPU. Park() sends
// polling workers to sleep at once, for when the cores are about to be
// someone else's (a vendor library's own threads).
//
// Chunks are dealt out in contiguous ranges, one per thread (the caller's
// first): a thread takes its own range's chunks front to back, then takes
// the others' from their back. So a thread that starts late costs nothing
// (the others finish its range), and when every thread is on time, thread
// i computes the same slice of every loop over the same index space: the
// rows one op wrote are in the cache of the core that reads them next,
// instead of half of them crossing cores as with one shared counter.
//
// Thread-safety: ParallelFor may be called from any thread; concurrent calls
// are serialized (one loop at a time). A ParallelFor issued from inside a
// running loop body runs inline on the calling worker, so kernels may nest
// without deadlock.
#ifndef GRAFT_DISPATCH_THREAD_POOL_H_
#define GRAFT_DISPATCH_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace graft {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread; values < 1 mean 1.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // The index in [0, num_threads()) of the calling thread in the pool it
  // works for: a worker's own, 0 for any thread that is not a worker.
  static int CurrentThreadIndex();

  // How many times a worker sat out loops for sharing a CPU (SitOut).
  int64_t sit_outs() const { return sit_outs_.load(std::memory_order_relaxed); }
  // How many times a worker moved off a CPU it shared (MoveOffSharedCpu).
  int64_t moves() const { return moves_.load(std::memory_order_relaxed); }

  // Calls fn(begin, end) over disjoint ranges covering [0, n), each at least
  // `min_chunk` long (except possibly the last), and returns when all calls
  // have returned. Ranges are contiguous and split as evenly as the thread
  // count allows; with one thread, or n <= min_chunk, it is fn(0, n).
  void ParallelFor(int64_t n, int64_t min_chunk,
                   absl::FunctionRef<void(int64_t, int64_t)> fn);

  // As ParallelFor, also passing the index in [0, num_threads()) of the
  // thread running the range, so a kernel can give each thread its own
  // slice of scratch memory. A nested (inline) call passes the index of the
  // thread it runs on.
  void ParallelForWithThreadIndex(
      int64_t n, int64_t min_chunk,
      absl::FunctionRef<void(int, int64_t, int64_t)> fn);

  // Workers polling for the next loop stop polling and sleep until it comes.
  // A hint: cheap, callable from any thread at any time.
  void Park() { parked_.store(true, std::memory_order_relaxed); }

 private:
  // One thread's range of chunks [front, back), packed front | back << 32
  // so both ends move with one compare-and-swap; a cache line each.
  struct alignas(64) Range {
    std::atomic<uint64_t> ends{0};
  };

  // Where each pool thread was last seen running (a CPU number,
  // kNotRunning while it sleeps); a cache line each.
  static constexpr int kNotRunning = -1;
  struct alignas(64) Seat {
    std::atomic<int> cpu{kNotRunning};
  };

  // Records this thread's CPU in its seat; true when another pool thread
  // was last seen on the same CPU, or the system cannot tell.
  bool SharesCpu(int thread_index);
  void WorkerLoop(int thread_index);
  // A worker found on the CPU of another pool thread (the caller's, as a
  // rule) that cannot move off it (MoveOffSharedCpu: no other allowed CPU
  // is free) sits out the loops of the next kSitOutMicros, asleep: two
  // threads on one CPU are no faster than one, a polling worker takes half
  // the CPU from the thread with the work, and trading chunks between them
  // costs context switches. Nothing wakes it early but the pool's end, so
  // loops meanwhile cost the caller no wake-up. (The timer's wake-up tends
  // to put it back on the same CPU, which is why moving comes first.)
  void SitOut(std::atomic<int>& seat);
  // Moves this thread to an allowed CPU no other pool thread was last seen
  // on (its affinity narrowed to those CPUs, which migrates it at once,
  // then set back to what it was); true when it is on one now. False
  // where there is none (more threads than allowed CPUs) or the system
  // refuses.
  bool MoveOffSharedCpu(int thread_index);
  void RunChunks(int thread_index);
  // Takes a chunk of range r: its front (own range) or its back (stealing);
  // -1 when the range is empty.
  int64_t TakeChunk(Range& r, bool from_back);

  const int num_threads_;
  std::vector<std::thread> workers_;

  static constexpr int kSpinMicros = 50;
  static constexpr int kSitOutMicros = 1000;

  std::mutex call_mutex_;  // one ParallelFor at a time
  // Guards the sleeping side: generation_ and stop_ change, and the last
  // chunk is counted done, only under it, so a waiter checking them under
  // it cannot miss the notification.
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::condition_variable crowded_cv_;  // SitOut's; notified only at the end
  std::atomic<int64_t> sit_outs_{0};
  std::atomic<int64_t> moves_{0};
  int started_ = 0;  // workers past their start (under mutex_)
  // Bumped per loop (release: the loop's fields below are published by
  // it); workers wait for a change.
  alignas(64) std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> parked_{false};  // Park() since the last loop began
  // The loop's end is its chunks' end, not every worker's arrival: a worker
  // the scheduler has not run yet (a busy machine) costs the caller no
  // time slice, since the caller takes the chunks it leaves. open_ is set
  // while a loop's chunks may be taken; a worker joins (active_) only when
  // it sees it open after counting itself in, and the caller closes it and
  // waits for active_ to drain before the loop's fields change (both sides
  // sequentially consistent, so one of them sees the other).
  std::atomic<bool> open_{false};
  std::atomic<int> active_{0};
  // Chunks run, added once by each thread when it finds none left; a cache
  // line of its own.
  alignas(64) std::atomic<int64_t> done_chunks_{0};

  // The current loop (valid while a generation runs), on its own cache
  // line: written once per loop, then only read.
  struct alignas(64) Loop {
    const absl::FunctionRef<void(int, int64_t, int64_t)>* fn = nullptr;
    int64_t n = 0;
    int64_t chunk = 0;
    int64_t num_chunks = 0;
  };
  Loop loop_;
  std::unique_ptr<Range[]> ranges_;  // num_threads_ of them
  std::unique_ptr<Seat[]> seats_;    // num_threads_ of them
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_THREAD_POOL_H_
