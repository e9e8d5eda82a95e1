// CallCounter: how many times a kernel path ran, for the tests that check
// that the path they force is the one taken. Kernels bump their counters
// inside parallel loops, from every pool thread, so each thread counts on
// a cache line of its own (its ThreadPool::CurrentThreadIndex(), modulo
// kSlots): a shared std::atomic passed its line between the cores at every
// chunk (int8 MobileNetV2 0.35 at 2 threads spent 1.3% of its samples on
// one), and sat beside whatever else the linker put on that line.
// The interface is std::atomic's, for the uses kernels make of one.
// Internal to kernels/.
#ifndef GRAFT_DISPATCH_KERNELS_CALL_COUNTER_H_
#define GRAFT_DISPATCH_KERNELS_CALL_COUNTER_H_

#include <atomic>
#include <cstdint>

#include "dispatch/thread_pool.h"

namespace graft::kernels {

class CallCounter {
 public:
  void fetch_add(int64_t n,
                 std::memory_order order = std::memory_order_seq_cst) {
    slots_[ThreadPool::CurrentThreadIndex() % kSlots].count.fetch_add(n, order);
  }
  // The sum over the threads' slots.
  int64_t load(std::memory_order order = std::memory_order_seq_cst) const {
    int64_t total = 0;
    for (const Slot& s : slots_) total += s.count.load(order);
    return total;
  }

 private:
  static constexpr int kSlots = 8;
  struct alignas(64) Slot {
    std::atomic<int64_t> count{0};
  };
  Slot slots_[kSlots];
};

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_CALL_COUNTER_H_
