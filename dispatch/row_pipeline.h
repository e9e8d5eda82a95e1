// Row pipelines (SubgraphExecutor::FuseRowPipelines, row_pipeline.cc):
// the limits that decide them, settable by tests. Internal to dispatch/.
#ifndef GRAFT_DISPATCH_ROW_PIPELINE_H_
#define GRAFT_DISPATCH_ROW_PIPELINE_H_

#include <cstdint>

namespace graft {

struct RowPipelineLimits {
  // A chain of row-band ops becomes a pipeline when one of its
  // intermediate tensors takes at least this many bytes.
  int64_t min_intermediate_bytes = 0;
  // One thread's band buffers take at most this many bytes, or one row of
  // the last stage's band where that takes more.
  int64_t band_buffer_bytes = 0;
};

// Sets the limits models loaded from now on use; returns the previous
// ones. For tests: small models with small bands.
RowPipelineLimits SetRowPipelineLimitsForTesting(RowPipelineLimits limits);

}  // namespace graft

#endif  // GRAFT_DISPATCH_ROW_PIPELINE_H_
