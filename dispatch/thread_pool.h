// ThreadPool: a small fixed pool for data-parallel loops inside kernels.
//
// The pool has num_threads - 1 worker threads; the thread that calls
// ParallelFor works too, so num_threads == 1 means every loop runs inline
// with no thread at all. Workers are created once, at construction, and
// sleep between loops: ParallelFor allocates nothing.
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

 private:
  void WorkerLoop(int thread_index);
  void RunChunks(int thread_index);

  const int num_threads_;
  std::vector<std::thread> workers_;

  std::mutex call_mutex_;  // one ParallelFor at a time
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  uint64_t generation_ = 0;  // bumped per loop; workers wait for a change
  bool stop_ = false;
  int pending_ = 0;          // workers still inside the current loop

  // The current loop (valid while a generation runs).
  const absl::FunctionRef<void(int, int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t chunk_ = 0;
  int64_t num_chunks_ = 0;
  std::atomic<int64_t> next_chunk_{0};
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_THREAD_POOL_H_
