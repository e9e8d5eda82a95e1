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
// A loop's hand-over crosses cores as few times as it can, since a cache
// line's round trip between two vCPUs took 30 to 500 ns on the same VM,
// as the host placed them: the caller writes the loop on the one cache
// line the workers poll, and nothing else (a range starts itself from the
// loop's number, and a CPU seat is written only when it changes); a
// worker adds its chunk count to a running total the caller waits on,
// and takes the mutex to notify only where the other side said it
// sleeps; the caller looks at the others' ranges only while their chunks
// are not all done, and each thread asks for its own range's line ahead
// of its first take (a look by the other thread makes it shared).
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

  // Calls fn(begin, end) over disjoint contiguous ranges covering [0, n),
  // and returns when all calls have returned. [0, n) is cut into as many
  // chunks as it holds whole min_chunks (up to 8 per thread; above the
  // thread count, a multiple of it), of sizes that differ by at most one,
  // so each is at least min_chunk long: with one thread, or n < 2 *
  // min_chunk, it is fn(0, n). (A remainder shorter than min_chunk handed
  // to another thread costs more than it saves: 16 rows at 14 at least
  // went as 14 + 2.)
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
  void Park() { loop_.parked.store(true, std::memory_order_relaxed); }

 private:
  // The loop being run, on the one cache line idle workers poll. The caller
  // writes it as a sequence lock: `seq` is odd while the fields change and
  // 2g once loop g is published, so a worker reads one loop's fields whole
  // or reads again, and the caller never waits for a worker before it
  // writes the next loop. Nothing else a loop needs is written at its
  // start: the ranges start themselves (Range) and the done count goes on
  // from the last loop's.
  struct alignas(64) Loop {
    std::atomic<uint64_t> seq{0};
    std::atomic<const absl::FunctionRef<void(int, int64_t, int64_t)>*> fn{
        nullptr};
    std::atomic<int64_t> n{0};
    std::atomic<int64_t> num_chunks{0};
    // Not part of the sequence: set rarely, read while polling.
    std::atomic<bool> stop{false};
    std::atomic<bool> parked{false};  // Park() since the last loop began
    std::atomic<int> sleepers{0};  // workers asleep on work_cv_ (or about to)
  };
  // One loop's fields as a thread read them, with its seq.
  struct LoopFields {
    const absl::FunctionRef<void(int, int64_t, int64_t)>* fn;
    // Chunk c is [n * c / num_chunks, n * (c + 1) / num_chunks).
    int64_t n, num_chunks;
    uint64_t seq;
    // The loop's number (seq / 2) modulo 2^32, as ranges carry it.
    uint32_t tag() const { return static_cast<uint32_t>(seq / 2); }
  };

  // One thread's range of chunks, a cache line each, as tag << 32 | front
  // << 16 | back: the chunks [front, back) of loop `tag` are left. A range
  // whose tag is an earlier loop's has none of its current loop's chunks
  // taken yet: the first thread to take one (its owner, or a thief from the
  // back) writes the loop's tag with the range it has, [num_chunks * t /
  // threads, num_chunks * (t + 1) / threads), less that chunk. A range
  // whose tag is a later loop's belongs to a loop that started after the
  // taker's ended: it takes nothing. An empty range takes the tag too, and
  // the caller visits every range at least every kRetagLoops loops (it
  // skips the others' ranges once their chunks are done, except then), so
  // no tag falls that far behind: tags compare modulo 2^32. A loop has at
  // most kMaxChunks chunks.
  struct alignas(64) Range {
    std::atomic<uint64_t> state{0};
  };
  static constexpr int64_t kMaxChunks = 0xffff;
  static constexpr uint32_t kRetagLoops = 1024;

  // Where each pool thread was last seen running (a CPU number,
  // kNotRunning while it sleeps); a cache line each, written only when it
  // changes.
  static constexpr int kNotRunning = -1;
  struct alignas(64) Seat {
    std::atomic<int> cpu{kNotRunning};
    void Set(int c) {
      if (cpu.load(std::memory_order_relaxed) != c) {
        cpu.store(c, std::memory_order_relaxed);
      }
    }
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
  // The published loop's fields (waits out a write in progress).
  LoopFields ReadLoop() const;
  // Runs chunks of `loop` from ranges thread_index + i (modulo the thread
  // count) for i in [first, last): its own (i = 0) front to back, the
  // others' from their backs. A worker adds what it ran to done_ after
  // each range; the caller (thread 0) returns its count instead.
  int64_t RunChunks(int thread_index, const LoopFields& loop, int first,
                    int last);
  // Takes a chunk of range r of `loop`: its front (own range) or its back
  // (stealing); -1 when none is left.
  int64_t TakeChunk(int r, const LoopFields& loop, bool from_back);
  void CountDone(int64_t chunks);

  const int num_threads_;
  std::vector<std::thread> workers_;

  static constexpr int kSpinMicros = 50;
  static constexpr int kSitOutMicros = 1000;

  std::mutex call_mutex_;  // one ParallelFor at a time
  uint64_t loops_ = 0;     // loops published (under call_mutex_)
  // Chunks that workers will have added to done_ once every loop so far
  // has ended (under call_mutex_).
  uint64_t worker_chunks_ = 0;
  // Guards the sleeping side: a thread sleeps on a condition variable only
  // after announcing it (Loop::sleepers, waiting_) and checking again under
  // it, and the other side, having seen the announcement, takes it before
  // notifying, so no wake-up is lost.
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  std::condition_variable crowded_cv_;  // SitOut's; notified only at the end
  std::atomic<int64_t> sit_outs_{0};
  std::atomic<int64_t> moves_{0};
  int started_ = 0;  // workers past their start (under mutex_)
  Loop loop_;
  // Chunks the workers ran, over all loops, added by each after each range
  // it took chunks from; the caller waits for it to reach worker_chunks_.
  // waiting_: the caller sleeps on done_cv_ (or is about to).
  alignas(64) std::atomic<uint64_t> done_{0};
  std::atomic<bool> waiting_{false};
  std::unique_ptr<Range[]> ranges_;  // num_threads_ of them
  std::unique_ptr<Seat[]> seats_;    // num_threads_ of them
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_THREAD_POOL_H_
