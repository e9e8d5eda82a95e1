// `graft run`: loads a model (compiled by Graft or not) in the dispatch
// runtime, feeds it random or .npy inputs, runs it, and prints the outputs,
// what ran where, and latency.
#ifndef GRAFT_TOOLS_RUN_CMD_H_
#define GRAFT_TOOLS_RUN_CMD_H_

#include <cstddef>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "dispatch/tensor.h"

namespace graft::tools {

// Fills `t` with seeded random values in a range that suits its element
// type (shared with `graft bench`).
void FillRandom(Tensor* t, std::mt19937& rng);

// Latency summary of timed runs, in milliseconds.
struct LatencyStats {
  size_t runs = 0;
  double min_ms = 0, median_ms = 0, p90_ms = 0;
};
// `ms` must not be empty.
LatencyStats SummarizeLatency(std::vector<double> ms);

int RunRunCommand(absl::Span<const std::string> args, std::ostream& out,
                  std::ostream& err);

inline constexpr char kRunSummary[] =
    "run a model on Graft's runtime: outputs, what ran where, latency";

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_RUN_CMD_H_
