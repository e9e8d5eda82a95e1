// Memory planning: one arena for all the activation buffers of a subgraph.
//
// Each request is a buffer with a size and a lifetime [first_use, last_use]
// in op steps (inclusive: a tensor produced by op 3 and last read by op 7
// lives over [3, 7]). Two buffers may share bytes only when their lifetimes
// do not overlap. The planner places buffers "greedy by size" (the strategy
// of TFLite's ArenaPlanner and XNNPACK): largest first, each at the lowest
// offset of the best-fitting gap among the buffers already placed whose
// lifetimes overlap its own. Offsets are multiples of the alignment.
//
// The plan is pure arithmetic: no memory is allocated here.
#ifndef GRAFT_DISPATCH_MEMORY_PLANNER_H_
#define GRAFT_DISPATCH_MEMORY_PLANNER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace graft {

inline constexpr size_t kArenaAlignment = 64;

struct BufferRequest {
  size_t bytes = 0;
  // Inclusive op-step interval during which the buffer holds live data.
  int32_t first_use = 0;
  int32_t last_use = 0;
};

struct MemoryPlan {
  // Byte offset of each request in the arena (same order as the requests).
  std::vector<size_t> offsets;
  // Bytes the arena needs (a multiple of the alignment).
  size_t arena_bytes = 0;
  // Sum of all request sizes, each rounded up to the alignment: what one
  // buffer per tensor would take. arena_bytes <= total_bytes.
  size_t total_bytes = 0;
};

// Plans `requests`. InvalidArgument when a lifetime is inverted
// (last_use < first_use) or the alignment is not a power of two.
absl::StatusOr<MemoryPlan> PlanMemory(absl::Span<const BufferRequest> requests,
                                      size_t alignment = kArenaAlignment);

// OK when no two requests with overlapping lifetimes overlap in the arena
// and every buffer lies inside it; otherwise Internal, naming the pair.
// Used by tests and by debug checks.
absl::Status VerifyMemoryPlan(absl::Span<const BufferRequest> requests,
                              const MemoryPlan& plan);

}  // namespace graft

#endif  // GRAFT_DISPATCH_MEMORY_PLANNER_H_
