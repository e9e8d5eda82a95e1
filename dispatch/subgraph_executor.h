// SubgraphExecutor: one prepared instance of one subgraph — its tensors,
// its ops bound to CPU kernels, dispatch executables or called subgraphs,
// and its planned arena. Internal to the runtime (runtime.h is the API).
//
// Created at load time: tensors get their dtypes and shapes (inputs may be
// given shapes by a caller), every op is prepared in execution order (its
// outputs' shapes follow from its inputs'), ops whose inputs are all
// constant are computed once right there ("folded"), then one arena is
// planned for every remaining activation and scratch buffer (a RESHAPE,
// SQUEEZE or EXPAND_DIMS output inside the subgraph shares its input's
// buffer, so those ops copy nothing). Run() then
// evaluates the ops in order with no allocation, except for "dynamic" ops:
// a kernel that needs input values computed at invoke to shape its outputs
// (PrepareContext::DeferToRun), and every op fed by one, is prepared again
// in Run() and keeps its outputs and scratch in growable DynamicBuffers.
//
// A subgraph run by a call (STABLEHLO_COMPOSITE's decomposition, a dispatch
// op's fallback, IF's branches, WHILE's cond and body, CALL_ONCE's init) is
// an executor with external I/O: its inputs and outputs are not in its arena
// but bound to caller tensors, read and written at each RunBound(). Every
// call site gets its own callee executors, even when several ops call one
// subgraph: a callee's bindings, arena and kernel state belong to one
// caller, and nested or repeated calls (a body calling the same subgraph as
// its caller) must not share them.
//
// Shapes known only at invoke cross calls both ways: a callee input fed by
// a dynamic tensor (or a STRING, sized by its values) is dynamic in the
// callee, taking the caller's shape at each run; a callee output that is
// dynamic makes the caller's output dynamic, copied into the caller's
// dynamic buffer after the run. With static shapes a run allocates nothing.
// - IF runs its then or else branch with inputs 1..n; an output is dynamic
//   when a branch yields a dynamic one or the branches' shapes differ.
// - WHILE keeps its loop variables in two sets (double buffering: the body
//   reads one set and writes the other), set 0 in the op's outputs, so zero
//   iterations leave outputs = inputs. A loop variable is dynamic when its
//   input is, or when the body changes its shape or yields it dynamic (the
//   cond and body are then prepared again with it dynamic).
// - CALL_ONCE runs its init subgraph at the first Invoke that reaches it
//   (once per runtime and init subgraph, as LoadEnv::call_once_done says).
// Resource variables (resource_variables.h): RESOURCE tensors carry no data
// at run time; which variable each one names is resolved at load (VAR_HANDLE
// is folded; ids flow into callees and out of their outputs), so
// READ_VARIABLE and ASSIGN_VARIABLE are copies from / into the variable.
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

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/compiled_format.h"
#include "core/model.h"
#include "dispatch/dispatch_backend.h"
#include "dispatch/kernel.h"
#include "dispatch/resource_variables.h"
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
  // Per vendor: why its dispatch library did not load (runtime.cc warns).
  std::map<std::string, std::string, std::less<>> backend_failures;
  // Per vendor: the result of CheckCompatibility (checked once).
  std::map<std::string, absl::Status, std::less<>> vendor_status;
  // A model compiled by LiteRT's tools (DISPATCH_OP ops): whether it has a
  // LiteRtStamp, the SoC manufacturer and model it names, and why no
  // backend serves that vendor (empty when one does).
  bool has_litert_stamp = false;
  std::string litert_vendor, litert_soc_model, litert_missing;

  // Ops no kernel can run: "subgraph 0 op 12 (CONV_2D): no CPU kernel ...".
  std::vector<std::string> missing;
  // Ops that will run on CPU at invoke (for kRequireAccelerator).
  std::vector<std::string> cpu_ops;
  // Time every op of every run (see Profile()).
  bool profiling = false;
  // Unique per load in this process (DispatchOpInfo::load_id).
  uint64_t load_id = 0;

  // The runtime's resource variables (VAR_HANDLE), shared by all its
  // subgraphs and signatures.
  ResourceVariables variables;
  // Per subgraph id: whether CheckExecutableSubgraph (graph_check.h) has
  // passed it in this load (grown to the model's subgraph count on use).
  std::vector<bool> checked;
  // Per subgraph id: whether a CALL_ONCE has run it as its init subgraph
  // (sized to the model's subgraph count at load).
  std::vector<bool> call_once_done;
};

// What a caller knows at load about the inputs of a subgraph it calls.
struct CalleeInputs {
  // The caller's shapes, one per input of the callee.
  std::vector<Shape> shapes;
  // Per input: its shape is known only at invoke (empty: none is).
  std::vector<bool> dynamic;
  // Per input: the resource variable id a RESOURCE input names (-1 none).
  std::vector<int32_t> resources;
};

class SubgraphExecutor {
 public:
  // Prepares subgraph `id`. `inputs`, when given, overrides the declared
  // shapes of the subgraph's inputs (a caller's actual shapes) and names the
  // variables of its RESOURCE inputs.
  // `external_io`: inputs/outputs are bound per run by a caller instead of
  // living in the arena. `count_cpu_ops`: list this subgraph's CPU ops in
  // env->cpu_ops (off inside calls, whose calling op is listed instead).
  // Ops without a kernel are recorded in env->missing and preparation goes
  // on (outputs take their declared shapes) so all of them are reported;
  // other errors return at once.
  static absl::StatusOr<std::unique_ptr<SubgraphExecutor>> Create(
      LoadEnv* env, SubgraphId id, const CalleeInputs* inputs, bool external_io,
      bool count_cpu_ops, int depth = 0);

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
  // Copies `bytes` into input tensor `id`: exactly its size, or for a
  // STRING input a buffer in string_tensor.h's layout holding as many
  // strings as its shape has elements (kept in storage of the executor).
  absl::Status SetInput(TensorId id, absl::Span<const uint8_t> bytes);
  absl::Status BindOutput(TensorId id, void* data, size_t bytes);

  // Evaluates every op in order.
  absl::Status Run();

  // The resource variable id RESOURCE tensor `id` names, -1 when none or
  // not known at load.
  int32_t resource(TensorId id) const { return resource_[id]; }
  // Whether tensor `id`'s shape is computed at invoke (see kernel.h,
  // DeferToRun): its shape and data are valid after a run.
  bool dynamic(TensorId id) const { return dynamic_[id]; }

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
  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  // Storage whose size is known only at invoke; grows, never shrinks.
  struct DynamicBuffer {
    std::unique_ptr<uint8_t, FreeDeleter> data;
    size_t capacity = 0;
    // `bytes` of storage (contents undefined), or null when out of memory.
    uint8_t* Reserve(size_t bytes);
  };
  // Where a callee writes one output: a caller tensor, and its storage when
  // the caller's shape is known only at invoke (null when it is fixed: the
  // tensor's own buffer is used).
  struct CalleeOutput {
    Tensor* tensor = nullptr;
    DynamicBuffer* storage = nullptr;
  };
  struct PreparedOp;
  struct OutputCopy {
    TensorId tensor;
    uint8_t* dst;
  };
  SubgraphExecutor(LoadEnv* env, SubgraphId id, int depth);

  absl::Status InitTensors(const CalleeInputs* inputs);
  absl::Status PrepareOps(bool count_cpu_ops);
  absl::Status PrepareKernelOp(PreparedOp& p, bool dynamic_input,
                               bool count_cpu_ops);
  absl::Status PrepareCallOp(PreparedOp& p, SubgraphId callee,
                             bool count_cpu_ops, const std::string& why);
  absl::Status PrepareDispatchOp(PreparedOp& p, bool count_cpu_ops);
  // A DISPATCH_OP of a model compiled by LiteRT's tools (core/litert_format.h).
  absl::Status PrepareLiteRtDispatchOp(PreparedOp& p, bool count_cpu_ops);
  // Binds `p`'s tensors and has `backend` prepare it from `module`; on
  // success `p` is a kDispatch op (its detail still to set), otherwise it is
  // as it was and the error is the backend's account.
  absl::Status PrepareOnBackend(PreparedOp& p, DispatchBackend& backend,
                                const DispatchOpOptions& options, Bytes module,
                                const ManifestVendor* entry);
  // A dispatch op no backend runs: its fallback subgraph on the CPU, or
  // kMissing (`reason` + `no_fallback`) when it has none (-1).
  absl::Status PrepareFallback(PreparedOp& p, int32_t fallback_subgraph,
                               const std::string& reason,
                               absl::string_view no_fallback,
                               bool count_cpu_ops);
  // A callee executor for op `p` running subgraph `callee` on the caller
  // tensors `inputs`; `role` names it in messages ("body"). `dynamic`, when
  // given, says per input whether its shape is known only at invoke
  // (default: whether the caller's tensor is dynamic).
  absl::StatusOr<std::unique_ptr<SubgraphExecutor>> CreateCallee(
      const PreparedOp& p, SubgraphId callee, absl::Span<const TensorId> inputs,
      absl::string_view role, const std::vector<bool>* dynamic = nullptr);
  // Binds callee `e`'s inputs to tensors `inputs` and its outputs to
  // tensors `outputs` of this executor, for every later RunBound().
  void BindCallee(SubgraphExecutor& e, absl::Span<const TensorId> inputs,
                  absl::Span<const TensorId> outputs);
  // Runs as a callee: takes the inputs' data (and a dynamic input's shape)
  // from the bound tensors, runs, and leaves each output in its bound
  // tensor: written there directly, or copied (an output no op wrote: an
  // input passed through, a constant, a repeated output; or a dynamic one,
  // into the bound storage).
  absl::Status RunBound();
  // Gives `dst` the shape of `src` and a copy of its data in `storage`.
  static absl::Status CopyTensorTo(const Tensor& src, Tensor& dst,
                                   DynamicBuffer& storage);
  absl::Status PrepareIfOp(PreparedOp& p, bool count_cpu_ops);
  absl::Status PrepareWhileOp(PreparedOp& p, bool count_cpu_ops);
  absl::Status PrepareCallOnceOp(PreparedOp& p, bool count_cpu_ops);
  absl::Status PrepareVariableOp(PreparedOp& p, tfl::BuiltinOperator builtin,
                                 bool count_cpu_ops);
  absl::Status RunWhile(PreparedOp& p);
  // A dynamic op's prepare at invoke, and its outputs' and scratch storage.
  absl::Status PrepareAtRun(PreparedOp& p);
  absl::Status FoldOp(PreparedOp& p);
  // Tensor `id`'s byte size at its shape; InvalidArgument, naming it, for
  // an absurd shape (tensor.h's CheckedNumElements, or a STRING with more
  // strings than its buffer format holds).
  absl::StatusOr<size_t> SizeOf(TensorId id, const Tensor& t) const;
  void UseDeclaredOutputShapes(const tfl::OperatorT& op);
  // Folds each HARD_SWISH into the CPU kernel that produces its input where
  // that kernel takes it as an epilogue (KernelState::AppendEpilogue) and
  // the two tensors can share a buffer: the HARD_SWISH op becomes kFused.
  // Then each float MUL by a per-channel vector into the next op, when
  // that op alone reads its output, as input 0, and takes the scale
  // (KernelState::AbsorbInputScale: a 1x1 convolution scales its weights):
  // the MUL becomes kFused and writes nothing; the op reads the MUL's
  // inputs, kept live until it runs. Then each op with a range eval (a
  // same-shape ADD) into the kernel that produces its last-computed input,
  // where that kernel reports its output as it writes it
  // (PrepareContext::MarkReportsOutputReady).
  void FuseEpilogues();
  // Then chains of ops that compute their output rows a band at a time
  // (KernelState::DescribeRowBands: a convolution, an expanding 1x1
  // one, a depthwise one, a projecting 1x1 one) into the first op of the
  // chain, when each op's output is read by the next op alone and one of
  // them is large: the chain runs band by band, the intermediate rows in
  // small buffers that stay in the core's cache (row_pipeline.cc).
  void FuseRowPipelines();
  // Runs the row pipeline whose first stage is `head`.
  absl::Status RunRowPipeline(PreparedOp& head);
  // Runs `run` with op `p`'s fused consumer attached to `ctx` (p's
  // context), and checks that the kernel reported every output element
  // to it.
  absl::Status RunWithConsumer(PreparedOp& p, EvalContext& ctx,
                               absl::FunctionRef<absl::Status()> run);
  // Whether op output `out` may share the buffer of its input `in`
  // (PlanMemory): both planned in the arena (computed here, fixed shapes,
  // neither a subgraph input or output), of one byte size, not STRING.
  bool CanShareBuffer(TensorId in, TensorId out) const;
  absl::Status PlanMemory();
  static OpReport::Where WhereOf(const PreparedOp& p);
  absl::Status RunOp(PreparedOp& p);
  absl::Status RunProfiled();
  // Adds the vendor's spans of `p`'s last call to its profile.
  void RecordSpans(PreparedOp& p);
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
  std::vector<int64_t> run_start_ns_;
  // Outputs a caller can bind directly (written here, listed once).
  std::vector<bool> output_bindable_;
  // External I/O: the tensors RunBound() reads its inputs from and writes
  // its outputs to (set by the caller).
  std::vector<const Tensor*> bound_in_;
  std::vector<CalleeOutput> bound_out_;
  // Per tensor: the resource variable a RESOURCE tensor names (-1 none).
  std::vector<int32_t> resource_;
  // Per tensor: its shape is computed at invoke (an output of a dynamic
  // op), and its storage then.
  std::vector<bool> dynamic_;
  std::vector<DynamicBuffer> dynamic_buffers_;
  // The STRING subgraph inputs (set by SetInput; checked at each run).
  std::vector<TensorId> string_inputs_;

  std::unique_ptr<uint8_t, FreeDeleter> arena_;
  size_t arena_bytes_ = 0;
  size_t unshared_bytes_ = 0;
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> owned_;
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_SUBGRAPH_EXECUTOR_H_
