// The static kernel table.
//
// kernel_list.inc (filtered by the GRAFT_KERNELS CMake option into
// kernel_list_selected.inc at configure time) names every kernel. Here it
// expands into a constant array sorted by op at compile time, searched by
// binary search: no registration code runs at start-up, and a kernel left
// out of the list is not referenced, so the linker can drop it.
#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>

#include "dispatch/kernel.h"

namespace graft {

#define GRAFT_KERNEL(op, name) extern const Kernel k##name##Kernel;
#include "dispatch/kernel_list_selected.inc"
#undef GRAFT_KERNEL

namespace {

struct Entry {
  int32_t op;
  const Kernel* kernel;
};

// The listed kernels, in list order, then a sentinel so the array is never
// empty (a selective build may keep no kernel at all).
constexpr Entry kListed[] = {
#define GRAFT_KERNEL(op, name) {tfl::BuiltinOperator_##op, &k##name##Kernel},
#include "dispatch/kernel_list_selected.inc"
#undef GRAFT_KERNEL
    {INT32_MAX, nullptr},
};
constexpr size_t kNumKernels = sizeof(kListed) / sizeof(kListed[0]) - 1;

// Stable insertion sort by op (list order breaks ties, so a kernel listed
// first is tried first). Runs at compile time.
constexpr std::array<Entry, kNumKernels + 1> SortedEntries() {
  std::array<Entry, kNumKernels + 1> a{};
  for (size_t i = 0; i <= kNumKernels; ++i) a[i] = kListed[i];
  for (size_t i = 1; i < kNumKernels; ++i) {
    Entry e = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1].op > e.op) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = e;
  }
  return a;
}
constexpr std::array<Entry, kNumKernels + 1> kSorted = SortedEntries();

constexpr std::array<int32_t, kNumKernels + 1> SortedOps() {
  std::array<int32_t, kNumKernels + 1> ops{};
  for (size_t i = 0; i <= kNumKernels; ++i) ops[i] = kSorted[i].op;
  return ops;
}
constexpr std::array<const Kernel*, kNumKernels + 1> SortedKernels() {
  std::array<const Kernel*, kNumKernels + 1> k{};
  for (size_t i = 0; i <= kNumKernels; ++i) k[i] = kSorted[i].kernel;
  return k;
}
constexpr std::array<int32_t, kNumKernels + 1> kOps = SortedOps();
constexpr std::array<const Kernel*, kNumKernels + 1> kKernels =
    SortedKernels();

}  // namespace

absl::Span<const Kernel* const> FindKernels(tfl::BuiltinOperator op) {
  auto begin = kOps.begin();
  auto end = kOps.begin() + kNumKernels;
  auto range = std::equal_range(begin, end, static_cast<int32_t>(op));
  return absl::Span<const Kernel* const>(
      kKernels.data() + (range.first - begin), range.second - range.first);
}

std::vector<tfl::BuiltinOperator> KernelOps() {
  std::vector<tfl::BuiltinOperator> ops;
  for (size_t i = 0; i < kNumKernels; ++i) {
    auto op = static_cast<tfl::BuiltinOperator>(kOps[i]);
    if (ops.empty() || ops.back() != op) ops.push_back(op);
  }
  return ops;
}

}  // namespace graft
