// `graft run`: loads a model (compiled by Graft or not) in the dispatch
// runtime, feeds it random or .npy inputs, runs it, and prints the outputs,
// what ran where, and latency.
#ifndef GRAFT_TOOLS_RUN_CMD_H_
#define GRAFT_TOOLS_RUN_CMD_H_

#include <ostream>
#include <string>

#include "absl/types/span.h"

namespace graft::tools {

int RunRunCommand(absl::Span<const std::string> args, std::ostream& out,
                  std::ostream& err);

inline constexpr char kRunSummary[] =
    "run a model on Graft's runtime: outputs, what ran where, latency";

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_RUN_CMD_H_
