#include "dispatch/memory_planner.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace graft {
namespace {

size_t AlignUp(size_t n, size_t alignment) {
  return (n + alignment - 1) & ~(alignment - 1);
}

bool LifetimesOverlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first_use <= b.last_use && b.first_use <= a.last_use;
}

}  // namespace

absl::StatusOr<MemoryPlan> PlanMemory(absl::Span<const BufferRequest> requests,
                                      size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("alignment %d is not a power of two", alignment));
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].last_use < requests[i].first_use) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "buffer %d: lifetime [%d, %d] is inverted", i,
          requests[i].first_use, requests[i].last_use));
    }
  }
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);

  // Largest first; ties by earlier first use, then by index, so the plan is
  // deterministic.
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) {
      return requests[a].bytes > requests[b].bytes;
    }
    if (requests[a].first_use != requests[b].first_use) {
      return requests[a].first_use < requests[b].first_use;
    }
    return a < b;
  });

  struct Placed {
    size_t offset;
    size_t end;
    size_t index;
  };
  std::vector<Placed> placed;  // kept sorted by offset
  std::vector<const Placed*> live;
  placed.reserve(requests.size());
  for (size_t index : order) {
    const BufferRequest& req = requests[index];
    // Offsets never exceed the sum of all sizes, so checking the sum keeps
    // every offset and end from wrapping.
    if (req.bytes > SIZE_MAX - alignment ||
        __builtin_add_overflow(plan.total_bytes, AlignUp(req.bytes, alignment),
                               &plan.total_bytes)) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "buffers of more than 2^64 bytes in all (buffer %d is %d bytes)",
          index, req.bytes));
    }
    size_t size = AlignUp(req.bytes, alignment);
    if (size == 0) continue;  // empty tensors need no bytes
    live.clear();
    for (const Placed& p : placed) {
      if (LifetimesOverlap(requests[p.index], req)) live.push_back(&p);
    }
    // `placed` is sorted by offset, so `live` is too. Best fit: the smallest
    // gap that holds the buffer; else after the last live buffer.
    size_t best_offset = SIZE_MAX;
    size_t best_gap = SIZE_MAX;
    size_t cursor = 0;
    for (const Placed* p : live) {
      if (p->offset >= cursor) {
        size_t gap = p->offset - cursor;
        if (gap >= size && gap < best_gap) {
          best_gap = gap;
          best_offset = cursor;
        }
      }
      cursor = std::max(cursor, p->end);
    }
    if (best_offset == SIZE_MAX) best_offset = cursor;
    plan.offsets[index] = best_offset;
    plan.arena_bytes = std::max(plan.arena_bytes, best_offset + size);
    Placed entry{best_offset, best_offset + size, index};
    auto pos = std::upper_bound(
        placed.begin(), placed.end(), entry,
        [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    placed.insert(pos, entry);
  }
  return plan;
}

absl::Status VerifyMemoryPlan(absl::Span<const BufferRequest> requests,
                              const MemoryPlan& plan) {
  if (plan.offsets.size() != requests.size()) {
    return absl::InternalError("plan and requests differ in length");
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].bytes == 0) continue;
    if (plan.offsets[i] + requests[i].bytes > plan.arena_bytes) {
      return absl::InternalError(
          absl::StrFormat("buffer %d lies outside the arena", i));
    }
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (requests[j].bytes == 0) continue;
      if (!LifetimesOverlap(requests[i], requests[j])) continue;
      size_t a0 = plan.offsets[i], a1 = a0 + requests[i].bytes;
      size_t b0 = plan.offsets[j], b1 = b0 + requests[j].bytes;
      if (a0 < b1 && b0 < a1) {
        return absl::InternalError(absl::StrFormat(
            "buffers %d and %d are live together and share bytes", i, j));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace graft
