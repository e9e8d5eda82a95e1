// A runtime profile exported as a Chrome trace (Trace Event Format), for
// Perfetto and chrome://tracing.
#ifndef GRAFT_TOOLS_CHROME_TRACE_H_
#define GRAFT_TOOLS_CHROME_TRACE_H_

#include <cstdint>
#include <string>

#include "core/model.h"
#include "dispatch/runtime_report.h"

namespace graft::tools {

// The profiled runs of entry subgraph `subgraph` as Chrome trace JSON
// (Trace Event Format, complete "X" events, microseconds): per run a "run"
// event, inside it one event per op call (callee ops inside their call),
// and inside a dispatch op's call the vendor's own spans (the first
// OpProfile::kMaxTracedCalls calls), named after the model op the debug
// map gives. Opens in Perfetto and chrome://tracing.
std::string ChromeTraceJson(const Model& model, const RuntimeProfile& profile,
                            int32_t subgraph);

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_CHROME_TRACE_H_
