// `graft bench`: times models in Graft's runtime under several
// configurations, the same way an app would load and run them.
//
// Per model, the configurations are:
//   - an uncompiled model: `cpu` (Graft's CPU kernels), then one per
//     --plugin-dir DIR: `plugins:DIR`, the model compiled on the device by
//     the plugins in DIR (into a temporary cache, so it is mapped from a
//     file as in an app) and run with the dispatch libraries in DIR and the
//     --dispatch-dir directories;
//   - a model compiled by Graft: one per --dispatch-dir and --plugin-dir
//     DIR (default: the default plugin directory), `dispatch:DIR`: the
//     model run as it is, with the dispatch libraries in DIR.
// each at every --threads count. A run is: load (Runtime::Load or
// LoadModel), fill the inputs with seeded random values, one first Invoke
// (timed: load-to-first-inference), --warmup untimed runs, --iterations
// timed runs. The report gives, per configuration, the median, min and p90
// run time and the ratio of its median to the first configuration's.
#ifndef GRAFT_TOOLS_BENCH_CMD_H_
#define GRAFT_TOOLS_BENCH_CMD_H_

#include <ostream>
#include <string>

#include "absl/types/span.h"

namespace graft::tools {

// "Intel(R) Xeon(R) ... (2 cores), load average 1.52 1.38 1.95", from
// /proc/cpuinfo and /proc/loadavg.
std::string MachineDescription();

int RunBenchCommand(absl::Span<const std::string> args, std::ostream& out,
                    std::ostream& err);

inline constexpr char kBenchSummary[] =
    "time models on the CPU kernels and on vendors, side by side";

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_BENCH_CMD_H_
