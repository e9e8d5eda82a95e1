// SubgraphExecutor: one prepared instance of one subgraph — its tensors,
// its ops bound to CPU kernels, dispatch executables or called subgraphs,
// and its planned arena. Internal to the runtime (runtime.h is the API).
//
// Created at load time: tensors get their dtypes and shapes (inputs may be
// given shapes by a caller), every op is prepared in execution order (its
// outputs' shapes follow from its inputs'), ops whose inputs are all
// constant are computed once right there ("folded"), then one arena is
// planned for every remaining activation and scratch buffer. Run() then
// evaluates the ops in order with no allocation.
//
// A subgraph run by a call (STABLEHLO_COMPOSITE's decomposition, a dispatch
// op's fallback) is an executor with external I/O: its inputs and outputs
// are not in its arena but bound to the caller's tensors before each run.
//
// Profiling (LoadEnv::profiling, set from RuntimeOptions::profiling): Run()
// then times every op and the whole run with a monotonic clock and keeps
// each call's time until ResetProfile(); Profile() summarizes. Without it
// Run() takes the plain loop: profiling costs one branch per run, none per
// op.
//
// Thread-safety: none; one thread runs an executor at a time.
#ifndef GRAFT_DISPATCH_SUBGRAPH_EXECUTOR_H_
#define GRAFT_DISPATCH_SUBGRAPH_EXECUTOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compiled_format.h"
#include "core/model.h"
#include "dispatch/dispatch_backend.h"
#include "dispatch/kernel.h"
#include "dispatch/runtime_report.h"
#include "dispatch/tensor.h"
#include "dispatch/thread_pool.h"

namespace graft {

// What one load shares across all its executors.
struct LoadEnv {
  const Model* model = nullptr;
  ThreadPool* pool = nullptr;
  // Backends by vendor name.
  std::map<std::string, DispatchBackend*, std::less<>> backends;
  // The model's manifest, when it has one.
  const Manifest* manifest = nullptr;
  // Per vendor: the result of CheckCompatibility (checked once).
  std::map<std::string, absl::Status, std::less<>> vendor_status;

  // Ops no kernel can run: "subgraph 0 op 12 (CONV_2D): no CPU kernel ...".
  std::vector<std::string> missing;
  // Ops that will run on CPU at invoke (for kRequireAccelerator).
  std::vector<std::string> cpu_ops;
  // Time every op of every run (see Profile()).
  bool profiling = false;
};

class SubgraphExecutor {
 public:
  // Prepares subgraph `id`. `input_shapes`, when given, overrides the
  // declared shapes of the subgraph's inputs (a caller's actual shapes).
  // `external_io`: inputs/outputs are bound per run by a caller instead of
  // living in the arena. `count_cpu_ops`: list this subgraph's CPU ops in
  // env->cpu_ops (off inside calls, whose calling op is listed instead).
  // Ops without a kernel are recorded in env->missing and preparation goes
  // on (outputs take their declared shapes) so all of them are reported;
  // other errors return at once.
  static absl::StatusOr<std::unique_ptr<SubgraphExecutor>> Create(
      LoadEnv* env, SubgraphId id, const std::vector<Shape>* input_shapes,
      bool external_io, bool count_cpu_ops, int depth = 0);

  ~SubgraphExecutor();
  SubgraphExecutor(const SubgraphExecutor&) = delete;
  SubgraphExecutor& operator=(const SubgraphExecutor&) = delete;

  SubgraphId id() const { return id_; }
  const Subgraph& subgraph() const;
  Tensor* tensor(TensorId id) { return &tensors_[id]; }
  const Tensor* tensor(TensorId id) const { return &tensors_[id]; }

  // Points input/output tensor `id` at caller memory (`data` null restores
  // the arena buffer). `bytes` must equal the tensor's size and `data` be
  // aligned to its element size. An output that no op of this subgraph
  // writes (an input passed through, a constant) is copied into `data` at
  // the end of each run instead.
  absl::Status BindInput(TensorId id, void* data, size_t bytes);
  absl::Status BindOutput(TensorId id, void* data, size_t bytes);

  // Evaluates every op in order.
  absl::Status Run();
  // Runs as the callee of `caller`'s op `op`: binds this subgraph's inputs
  // and outputs to the op's tensors, runs, and copies outputs no op wrote.
  absl::Status RunAsCallee(absl::Span<Tensor> caller_tensors,
                           const tfl::OperatorT& op);

  // What runs where, recursively through calls.
  SubgraphReport Report() const;

  // The timings of the runs since load or the last ResetProfile(): every
  // op that runs at invoke (folded ops do not), in execution order, each
  // call op followed by its callee's ops one level deeper. Empty timings
  // when profiling is off.
  SubgraphProfile Profile() const;
  // Forgets the timings recorded so far (e.g. of warm-up runs), in callees
  // too.
  void ResetProfile();

 private:
  struct PreparedOp;
  struct OutputCopy {
    TensorId tensor;
    uint8_t* dst;
  };
  SubgraphExecutor(LoadEnv* env, SubgraphId id, int depth);

  absl::Status InitTensors(const std::vector<Shape>* input_shapes);
  absl::Status PrepareOps(bool count_cpu_ops);
  absl::Status PrepareKernelOp(PreparedOp& p, tfl::BuiltinOperator builtin,
                               bool count_cpu_ops);
  absl::Status PrepareCallOp(PreparedOp& p, SubgraphId callee,
                             bool count_cpu_ops, const std::string& why);
  absl::Status PrepareDispatchOp(PreparedOp& p, bool count_cpu_ops);
  absl::Status FoldOp(PreparedOp& p);
  void UseDeclaredOutputShapes(const tfl::OperatorT& op);
  absl::Status PlanMemory();
  static OpReport::Where WhereOf(const PreparedOp& p);
  absl::Status RunOp(PreparedOp& p);
  absl::Status RunProfiled();
  void CopyUnwrittenOutputs();
  void AppendProfile(int depth, std::vector<OpProfile>* out) const;
  uint8_t* AllocateOwned(size_t bytes);
  std::string OpLabel(OpId index) const;

  LoadEnv* env_;
  const Model* model_;
  SubgraphId id_;
  int depth_;
  bool external_io_ = false;
  std::vector<Tensor> tensors_;
  std::vector<PreparedOp> ops_;
  // Arena-planned data pointer per tensor (null if not in the arena), to
  // restore after unbinding.
  std::vector<uint8_t*> planned_;
  // Tensors some op of this subgraph writes.
  std::vector<bool> written_;
  std::vector<OutputCopy> output_copies_;
  // Per-run wall times while profiling (ns).
  std::vector<int64_t> run_ns_;
  // Outputs a caller can bind directly (written here, listed once).
  std::vector<bool> output_bindable_;

  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, FreeDeleter> arena_;
  size_t arena_bytes_ = 0;
  size_t unshared_bytes_ = 0;
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> owned_;
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_SUBGRAPH_EXECUTOR_H_
