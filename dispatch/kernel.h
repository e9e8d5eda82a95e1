// The CPU kernel interface.
//
// A kernel runs one builtin op on Graft's CPU. It has two phases:
//
// - prepare, once at LOAD time: validate the input and output dtypes and
//   shapes, compute each output's shape from the inputs' (TFLite-style shape
//   inference, so a new input shape only means preparing again), precompute
//   whatever eval needs (quantized multipliers, packed weights, loop bounds)
//   into a KernelState, and request scratch bytes. An op or dtype combination
//   the kernel does not handle is refused here, never at invoke.
//   An output shape that depends on input VALUES not known at load (TOPK_V2
//   with k computed by the model, WHERE, a RESHAPE to a computed shape)
//   is the one exception: prepare checks everything else, then calls
//   ctx.DeferToRun(), and the runtime prepares the op again at every
//   invoke, once its inputs are computed (ctx.ValuesKnown() is then true for
//   every input). Ops fed by such an op are prepared again whenever their
//   input shapes change.
// - eval, at every invoke: compute the outputs. Eval allocates nothing: its
//   memory is the planned arena (outputs, scratch) and its state.
//
// Several kernels may serve one op (e.g. the float kernel of ADD and, added
// later in its own file, the int8 one). The runtime tries them in
// kernel_list.inc order; a kernel that does not handle the op's dtypes
// returns ctx.Unsupported(...) (an Unimplemented status) and the next one is
// tried. Any other error from prepare is final: the model is invalid.
//
// Messages from kernels describe the problem only ("no CPU kernel for INT16
// input with INT8 weights"); the runtime prefixes the op index and name.
//
// Thread-safety: prepare and eval of one op run on one thread at a time; a
// kernel may use ctx.thread_pool() inside eval for data parallelism.
#ifndef GRAFT_DISPATCH_KERNEL_H_
#define GRAFT_DISPATCH_KERNEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/model.h"
#include "dispatch/tensor.h"

namespace graft {

class ThreadPool;
class PrepareContext;
class EvalContext;

// An elementwise op the runtime may fold into the op that produces its
// input (SubgraphExecutor::FuseEpilogues): the producer's kernel applies it
// to each output value before storing it, and the consumer runs no code.
enum class EpilogueOp {
  kHardSwish,  // HARD_SWISH, float: x * min(max(x + 3, 0), 6) / 6
};

// A kernel that computes its float output a band of rows at a time, for a
// row pipeline (SubgraphExecutor::FuseRowPipelines): a 4-D NHWC input and
// output of batch 1, output row y computed from input rows
// [y * stride - pad, y * stride - pad + extent) that lie in [0, in_h).
struct RowBandShape {
  int64_t in_h = 0, out_h = 0;
  int64_t in_row_floats = 0, out_row_floats = 0;  // width x channels
  int64_t stride = 1, pad = 0, extent = 1;
  // Reads its input in place from the input tensor (an indirection table
  // of the whole input): only a pipeline's first stage, given all of it.
  bool reads_whole_input = false;

  // The input rows [*lo, *hi) that output rows [begin, end) read.
  void InputRows(int64_t begin, int64_t end, int64_t* lo, int64_t* hi) const {
    *lo = std::clamp<int64_t>(begin * stride - pad, 0, in_h);
    *hi = std::clamp<int64_t>((end - 1) * stride - pad + extent, *lo, in_h);
  }
};

// Output rows [begin, end) from the input rows [input_row0, input_row0 +
// input_rows) held at `input` (a band buffer, or the whole input tensor
// with input_row0 0), written to `output`, which holds output rows from
// output_row0. The rows read must be held (RowBandShape says which).
struct RowBand {
  const float* input = nullptr;
  int64_t input_row0 = 0, input_rows = 0;
  float* output = nullptr;
  int64_t output_row0 = 0;
  int64_t begin = 0, end = 0;
};

// Per-op state computed at prepare time (polymorphic so each kernel keeps its
// own type; the runtime owns it and destroys it with the runtime).
class KernelState {
 public:
  virtual ~KernelState() = default;
  // Asked after prepare: will eval apply `op` to every value of output 0,
  // after all it computes now (fused activation included), with the
  // results bit for bit those of op's own kernel run afterwards? True
  // commits the kernel to it; false (the default) leaves the state as it
  // was.
  virtual bool AppendEpilogue(EpilogueOp op) {
    (void)op;
    return false;
  }
  // Asked after prepare, for a float MUL whose only reader is this op's
  // input 0 (SubgraphExecutor::FuseEpilogues): will eval read input 0 as
  // `x` (input 0's shape) times `scale` (one value per element of input
  // 0's last dim, the same for every other index), both read at eval, and
  // leave input 0 itself unread? The kernel may apply the scale to its
  // weights instead of to x, so results may differ from the op run on the
  // product in rounding, within the op's float tolerance. True commits
  // the kernel and sets *extra_scratch_bytes to the scratch eval needs
  // then past the scratch prepare requested; false (the default) leaves
  // the state as it was.
  virtual bool AbsorbInputScale(const Tensor* x, const Tensor* scale,
                                size_t* extra_scratch_bytes) {
    (void)x, (void)scale, (void)extra_scratch_bytes;
    return false;
  }
  // Asked after prepare and the fusions above: can this op run as a row
  // pipeline's stage, and with which rows? True sets *shape; then eval
  // may be replaced, per invoke, by one BeginRowBands and EvalRowBand
  // calls that together cover every output row once (from several threads
  // at once, on disjoint bands), each writing the values eval would, bit
  // for bit, and reporting them to a fused consumer as eval would
  // (EvalContext::OutputReady). False (the default): eval only.
  virtual bool DescribeRowBands(RowBandShape* shape) const {
    (void)shape;
    return false;
  }
  // Once per invoke, before the bands, on the calling thread with the
  // op's scratch (what every band reads, such as edge copies).
  virtual void BeginRowBands(EvalContext& ctx) const { (void)ctx; }
  // One band; ctx has no thread pool and the op's scratch, shared by the
  // threads (read only here).
  virtual void EvalRowBand(EvalContext& ctx, const RowBand& band) const {
    (void)ctx, (void)band;
  }
};

using PrepareFn = absl::Status (*)(PrepareContext& ctx);
using EvalFn = absl::Status (*)(EvalContext& ctx);
// Computes elements [begin, end) of output 0 from the same elements of
// each input (PrepareContext::SetRangeEval). Called from any thread, for
// disjoint ranges at once; it must not use the thread pool or scratch
// (the context has neither).
using RangeEvalFn = void (*)(EvalContext& ctx, int64_t begin, int64_t end);

struct Kernel {
  // For reports: "Conv2D", "AddFloat", ...
  const char* name;
  PrepareFn prepare;
  // The default eval; prepare may pick a specialized one (per dtype, per
  // shape class) with PrepareContext::SetEval, so eval never re-dispatches.
  EvalFn eval;
};

// The op's tensors, shared by both phases.
class OpContext {
 public:
  OpContext(const tfl::OperatorT& op, absl::Span<Tensor> tensors)
      : op_(&op), tensors_(tensors) {}

  const tfl::OperatorT& op() const { return *op_; }

  int num_inputs() const { return static_cast<int>(op_->inputs.size()); }
  int num_outputs() const { return static_cast<int>(op_->outputs.size()); }
  // Null when input i is an omitted optional input (-1) or i is past the
  // end, so kernels test optional inputs with one check.
  const Tensor* input(int i) const {
    if (i < 0 || i >= num_inputs() || op_->inputs[i] < 0) return nullptr;
    return &tensors_[op_->inputs[i]];
  }
  Tensor* output(int i) const { return &tensors_[op_->outputs[i]]; }
  // Tensor `id` of the op's subgraph, or null when out of range: for
  // tensors an op names indirectly (a blockwise quantization's scales).
  const Tensor* tensor(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= tensors_.size()) return nullptr;
    return &tensors_[id];
  }
  // The op's intermediate tensor i (tensors some ops, e.g. the integer
  // LSTM, carry only for their quantization parameters), or null.
  const Tensor* intermediate(int i) const {
    const std::vector<int32_t>& ids = op_->intermediates;
    if (i < 0 || i >= static_cast<int>(ids.size()) || ids[i] < 0 ||
        static_cast<size_t>(ids[i]) >= tensors_.size()) {
      return nullptr;
    }
    return &tensors_[ids[i]];
  }

 protected:
  const tfl::OperatorT* op_;
  absl::Span<Tensor> tensors_;
};

class PrepareContext : public OpContext {
 public:
  // Built by the runtime (and kernel tests) with the op's declared output
  // shapes (from the model) and the thread pool.
  PrepareContext(const tfl::OperatorT& op, absl::Span<Tensor> tensors,
                 absl::Span<const tfl::TensorT> model_tensors,
                 ThreadPool* pool)
      : OpContext(op, tensors), model_tensors_(model_tensors), pool_(pool) {}

  // The model's record of output i: its declared shape is the fallback for
  // outputs whose shape depends on input values known only at run time.
  const tfl::TensorT& model_output(int i) const {
    return model_tensors_[op_->outputs[i]];
  }

  // Sets output i's shape (and byte size). Every output must get one.
  absl::Status SetOutputShape(int i, Shape shape);
  // The same for a type without a fixed element size (STRING: its whole
  // buffer's `bytes`, string_tensor.h), which prepare computes from the
  // input values: such a kernel defers to invoke unless they are constant.
  absl::Status SetOutputShape(int i, Shape shape, size_t bytes);

  // State for eval (replaces any earlier one).
  void SetState(std::unique_ptr<KernelState> state) {
    state_ = std::move(state);
  }
  template <typename T>
  T* state() const {
    return static_cast<T*>(state_.get());
  }

  // Gives output i the dtype `type` instead of the model's, before its
  // shape is set: for an op whose TFLite kernel sets the output's type from
  // its inputs whatever the model declares. Call only once prepare will
  // succeed (a refusing kernel must leave the tensors as they were).
  void SetOutputType(int i, tfl::TensorType type) { output(i)->type = type; }

  // Scratch bytes eval gets (64-byte aligned, contents undefined at entry).
  void RequestScratch(size_t bytes) { scratch_bytes_ = bytes; }
  // The eval to run instead of Kernel::eval.
  void SetEval(EvalFn eval) { eval_ = eval; }
  // An elementwise op (output element i depends on element i of each input
  // alone: no broadcast) offers to run piecewise: the runtime may then run
  // it inside the op that produces one of its inputs, on each range of
  // that op's output as soon as it is written (EvalContext::OutputReady),
  // while the rows are in that core's cache and on every thread the
  // producer uses; the op itself then runs no code of its own.
  void SetRangeEval(RangeEvalFn fn) { range_eval_ = fn; }
  // Declares that eval calls EvalContext::OutputReady for every element of
  // output 0, exactly once, after the element's final value is stored:
  // the runtime may then fuse a consumer that set a range eval into it.
  void MarkReportsOutputReady() { reports_output_ready_ = true; }
  // The length of the longest dot product / reduction one output element
  // needs (K of a matmul, kh*kw*cin of a conv, the reduced count of a mean).
  // Feeds the numeric tolerance of differential tests (tolerance.h).
  void SetReductionLength(int64_t n) { reduction_length_ = n; }

  // Declares that the outputs depend only on the inputs' shapes, not their
  // values (SHAPE): the runtime then computes them once at load time.
  void MarkShapeOnly() { shape_only_ = true; }

  // Whether input `t`'s values can be read now: a constant's always; every
  // input's when the op is prepared at invoke (see DeferToRun).
  bool ValuesKnown(const Tensor* t) const {
    if (t != nullptr && !t->constant) reads_values_ = true;
    return t != nullptr && (t->constant || at_run_);
  }
  // For output shapes that depend on input values not known yet: prepare
  // returns this after its dtype and rank checks, setting no output shape,
  // and is called again at every invoke with ValuesKnown() true. Never
  // returned at invoke (an error then).
  absl::Status DeferToRun() {
    deferred_ = true;
    return absl::OkStatus();
  }
  // Set by the runtime when it prepares at invoke.
  void set_at_run(bool at_run) { at_run_ = at_run; }

  ThreadPool* thread_pool() const { return pool_; }

  // The refusal of an unhandled dtype combination: Unimplemented with
  // "no CPU kernel for <detail>". The default detail lists the dtypes:
  // "INT16 input with INT8 weights" style text is up to the kernel.
  absl::Status Unsupported(absl::string_view detail = "") const;
  // "FLOAT32, INT32 -> FLOAT32": the op's dtypes, for messages.
  std::string DescribeTypes() const;

  // Read by the runtime after prepare.
  std::unique_ptr<KernelState> TakeState() { return std::move(state_); }
  size_t scratch_bytes() const { return scratch_bytes_; }
  EvalFn eval() const { return eval_; }
  RangeEvalFn range_eval() const { return range_eval_; }
  bool reports_output_ready() const { return reports_output_ready_; }
  int64_t reduction_length() const { return reduction_length_; }
  bool output_shape_set(int i) const;
  bool shape_only() const { return shape_only_; }
  bool deferred() const { return deferred_; }
  // Whether prepare asked for the values of a tensor that is not constant:
  // its outputs may then change with those values, not only with shapes.
  bool reads_values() const { return reads_values_; }

 private:
  absl::Span<const tfl::TensorT> model_tensors_;
  ThreadPool* pool_ = nullptr;
  std::unique_ptr<KernelState> state_;
  size_t scratch_bytes_ = 0;
  EvalFn eval_ = nullptr;
  RangeEvalFn range_eval_ = nullptr;
  bool reports_output_ready_ = false;
  int64_t reduction_length_ = 0;
  uint64_t shapes_set_ = 0;  // bit i: output i has a shape
  bool shape_only_ = false;
  bool at_run_ = false;
  bool deferred_ = false;
  mutable bool reads_values_ = false;
};

class EvalContext : public OpContext {
 public:
  EvalContext(const tfl::OperatorT& op, absl::Span<Tensor> tensors,
              KernelState* state, uint8_t* scratch, ThreadPool* pool)
      : OpContext(op, tensors),
        state_(state),
        scratch_(scratch),
        pool_(pool) {}

  template <typename T>
  T* state() const {
    return static_cast<T*>(state_);
  }
  uint8_t* scratch() const { return scratch_; }
  template <typename T>
  T* scratch_as() const {
    return reinterpret_cast<T*>(scratch_);
  }
  ThreadPool* thread_pool() const { return pool_; }

  // Elements [begin, end) of output 0 hold their final values: runs the
  // consumer fused into this op on them, on the calling thread (any of
  // the pool's), or does nothing when none is. See MarkReportsOutputReady.
  void OutputReady(int64_t begin, int64_t end) {
    if (consumer_ != nullptr && begin < end) RunConsumer(begin, end);
  }
  // Whether a consumer is fused into this op: a kernel may skip finding
  // its rows' ends when none is.
  bool has_consumer() const { return consumer_ != nullptr; }

  // Set by the runtime: the consumer OutputReady runs, and the count of
  // elements reported to it, which the runtime checks after eval: one
  // counter per pool thread (the calling thread's ThreadPool index modulo
  // `num_counters`), a cache line each, so threads reporting at once do
  // not pass one line back and forth.
  struct alignas(64) ReportCounter {
    std::atomic<int64_t> elements{0};
  };
  struct FusedConsumer {
    RangeEvalFn fn = nullptr;
    EvalContext* ctx = nullptr;
    ReportCounter* counters = nullptr;
    int num_counters = 0;
  };
  void set_consumer(const FusedConsumer* consumer) { consumer_ = consumer; }

 private:
  void RunConsumer(int64_t begin, int64_t end);

  KernelState* state_;
  uint8_t* scratch_;
  ThreadPool* pool_;
  const FusedConsumer* consumer_ = nullptr;
};

// The kernels registered for `op` (kernel_list.inc order); empty when the
// build has none. The table is a constant array: no start-up work.
absl::Span<const Kernel* const> FindKernels(tfl::BuiltinOperator op);

// Every op the build has a kernel for, ascending (for reports and tests).
std::vector<tfl::BuiltinOperator> KernelOps();

}  // namespace graft

#endif  // GRAFT_DISPATCH_KERNEL_H_
