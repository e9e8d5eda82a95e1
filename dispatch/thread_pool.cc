#include "dispatch/thread_pool.h"

#include <algorithm>

namespace graft {
namespace {
// Set while a thread runs a loop body, so nested loops run inline instead of
// waiting on the pool they occupy.
thread_local bool tls_in_parallel_for = false;
// The index of the pool thread this is (0 for a thread outside any pool).
thread_local int tls_thread_index = 0;
}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(std::max(1, num_threads)) {
  workers_.reserve(num_threads_ - 1);
  for (int i = 0; i < num_threads_ - 1; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i + 1); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks(int thread_index) {
  bool was_inside = tls_in_parallel_for;
  tls_in_parallel_for = true;
  for (;;) {
    int64_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
    if (c >= num_chunks_) break;
    int64_t begin = c * chunk_;
    (*fn_)(thread_index, begin, std::min(n_, begin + chunk_));
  }
  tls_in_parallel_for = was_inside;
}

void ThreadPool::WorkerLoop(int thread_index) {
  tls_thread_index = thread_index;
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    RunChunks(thread_index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
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
  // A few chunks per thread evens out uneven chunk costs without making the
  // shared counter hot.
  int64_t target_chunks = int64_t{num_threads_} * 4;
  int64_t chunk = std::max(min_chunk, (n + target_chunks - 1) / target_chunks);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    num_chunks_ = (n + chunk - 1) / chunk;
    next_chunk_.store(0, std::memory_order_relaxed);
    pending_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  work_cv_.notify_all();
  RunChunks(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  fn_ = nullptr;
}

}  // namespace graft
