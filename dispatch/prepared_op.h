// SubgraphExecutor::PreparedOp: one op of a prepared subgraph, as the
// executor's files share it (subgraph_executor.cc prepares and runs ops,
// op_fusion.cc fuses them). Internal to dispatch/.
#ifndef GRAFT_DISPATCH_PREPARED_OP_H_
#define GRAFT_DISPATCH_PREPARED_OP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch/subgraph_executor.h"

namespace graft {

struct SubgraphExecutor::PreparedOp {
  enum class Kind {
    kKernel,
    kFolded,
    kCall,
    kDispatch,
    kIf,
    kWhile,
    kCallOnce,
    kReadVariable,
    kAssignVariable,
    // Runs as the epilogue of the op that produced its input (its detail
    // names that op); its output shares that op's output buffer.
    kFused,
    kMissing,
  };
  Kind kind = Kind::kMissing;
  OpId index = 0;
  const tfl::OperatorT* op = nullptr;
  tfl::BuiltinOperator builtin = tfl::BuiltinOperator_ADD;
  std::string name;
  // kKernel
  const Kernel* kernel = nullptr;
  // Prepared again at invoke: every time when its kernel reads input
  // values to prepare (`reads_values`: it deferred at load, or asked at
  // invoke), else when the input shapes differ from `prepared_shapes` (an
  // input's shape is computed at run time). Its outputs and scratch live
  // in dynamic buffers, not in the arena.
  bool dynamic = false;
  bool reads_values = false;
  bool prepared_at_run = false;
  std::vector<Shape> prepared_shapes;
  DynamicBuffer dynamic_scratch;
  EvalFn eval = nullptr;
  // Set by prepare (PrepareContext::SetRangeEval, MarkReportsOutputReady).
  RangeEvalFn range_eval = nullptr;
  bool reports_output_ready = false;
  // kFused: the input whose buffer the output shares (the producer's
  // output), or -1 when the op was absorbed into the op that reads its
  // output (a MUL folded into a convolution's weights): its output is
  // never written. kKernel: the op fused into this one through
  // OutputReady, or -1.
  int fused_input = 0;
  OpId fused_consumer = -1;
  // kKernel, the first stage of a row pipeline (row_pipeline.cc): the
  // pipeline's other stages, in order (each kFused, fused_input -1), and
  // how it runs. A later stage: the first stage's index.
  std::vector<OpId> pipeline;
  std::vector<RowBandShape> pipeline_shapes;  // every stage's
  int64_t pipeline_band_rows = 0;  // the last stage's output rows per band
  std::vector<int64_t> pipeline_buffer_rows;  // per intermediate
  size_t pipeline_scratch_offset = 0;         // the buffers' start in scratch
  size_t pipeline_thread_bytes = 0;           // one thread's buffers
  OpId pipeline_head = -1;
  // kKernel that absorbed the MUL before it (KernelState::AbsorbInputScale):
  // the tensors it reads in place of that MUL's output, kept live until it
  // runs.
  TensorId scaled_input = -1;
  TensorId input_scale = -1;
  // kKernel with a fused consumer: the elements reported per pool thread.
  std::unique_ptr<EvalContext::ReportCounter[]> report_counters;
  int num_report_counters = 0;
  std::unique_ptr<KernelState> state;
  size_t scratch_bytes = 0;
  uint8_t* scratch = nullptr;
  int64_t reduction_length = 0;
  // The called subgraphs: kCall (composite decomposition or dispatch
  // fallback): the callee; kIf: then, else; kWhile: cond, body; kCallOnce:
  // init.
  std::vector<std::unique_ptr<SubgraphExecutor>> callees;
  bool fallback = false;
  // kCallOnce: the init subgraph (LoadEnv::call_once_done).
  SubgraphId init = -1;
  // kWhile: the loop variables' two sets (RunWhile), per variable whether
  // its shape is known only at invoke (`loop_dynamic`), a fixed-size one's
  // offset in the op's scratch (set 1), a dynamic one's set-1 storage; the
  // cond's result.
  std::vector<Tensor> loop_vars[2];
  std::vector<bool> loop_dynamic;
  std::vector<size_t> loop_offsets;
  std::vector<DynamicBuffer> loop_storage;
  Tensor cond_value;
  DynamicBuffer cond_storage;
  // kReadVariable, kAssignVariable.
  ResourceVariable* variable = nullptr;
  // kDispatch
  std::unique_ptr<DispatchExecutable> executable;
  std::vector<const Tensor*> in_ptrs;
  std::vector<Tensor*> out_ptrs;
  // For the report.
  std::string detail;
  // For the profile: the name shown, and each profiled call's time (ns).
  std::string profile_name;
  std::vector<int64_t> profile_ns;
  // Each profiled call's start (steady clock, ns).
  std::vector<int64_t> profile_start_ns;
  // kDispatch: the vendor's own time of each profiled call, when it tells.
  std::vector<int64_t> vendor_ns;
  // kDispatch: the vendor's spans per location over the profiled calls,
  // the index of each location there, the first calls' spans (for traces)
  // and the last call's, reused.
  std::vector<OpProfile::VendorLocation> vendor_locations;
  std::unordered_map<uint64_t, size_t> vendor_location_index;
  std::vector<OpProfile::TracedSpan> vendor_spans;
  std::vector<VendorSpan> last_spans;
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_PREPARED_OP_H_
