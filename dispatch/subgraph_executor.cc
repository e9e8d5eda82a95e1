#include "dispatch/subgraph_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/litert_format.h"
#include "core/status.h"
#include "dispatch/graph_check.h"
#include "dispatch/litert_backend.h"
#include "dispatch/memory_planner.h"
#include "dispatch/prepared_op.h"
#include "dispatch/string_tensor.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace {

// Calls nest (composite decompositions, fallbacks); a cycle in a malformed
// model must not recurse forever.
constexpr int kMaxCallDepth = 16;

// Vendors get their module 64-byte aligned (DispatchOpInfo::module), as
// Graft writes it. A file may place one anywhere (inside the flatbuffer, at
// an odd offset): such a module is copied once into aligned memory, since a
// vendor reads its bytecode as it was laid out (the xnnpack library reads
// 8-byte fields in place).
constexpr size_t kModuleAlignment = 64;

absl::StatusOr<Bytes> AlignedModule(Bytes module) {
  if (module.empty() ||
      reinterpret_cast<uintptr_t>(module.data()) % kModuleAlignment == 0) {
    return module;
  }
  const size_t size = (module.size() + kModuleAlignment - 1) /
                      kModuleAlignment * kModuleAlignment;
  std::shared_ptr<uint8_t> copy(
      static_cast<uint8_t*>(std::aligned_alloc(kModuleAlignment, size)),
      [](uint8_t* p) { std::free(p); });
  if (copy == nullptr) return absl::ResourceExhaustedError("out of memory");
  std::memcpy(copy.get(), module.data(), module.size());
  const absl::Span<const uint8_t> bytes(copy.get(), module.size());
  return Bytes::View(bytes, std::move(copy));
}

bool IsVariableOp(tfl::BuiltinOperator op) {
  return op == tfl::BuiltinOperator_VAR_HANDLE ||
         op == tfl::BuiltinOperator_READ_VARIABLE ||
         op == tfl::BuiltinOperator_ASSIGN_VARIABLE;
}

// Types whose tensors have no byte size (VARIANT, the 4-bit types) cannot
// be copied between a caller and a callee; a STRING is sized by its values
// (dynamic, like a shape computed at invoke); RESOURCE tensors carry
// nothing at run time (their variable is resolved at load).
bool PassesThroughCalls(tfl::TensorType type) {
  return type == tfl::TensorType_RESOURCE || type == tfl::TensorType_STRING ||
         ElementSize(type) != 0;
}

size_t AlignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

// A note on the report: a call whose outputs get their shapes at invoke
// says so, as kernels do.
std::string ShapesAtInvokeNote(const std::vector<bool>& dynamic,
                               absl::Span<const TensorId> outputs) {
  for (TensorId t : outputs) {
    if (t >= 0 && dynamic[t]) return ", shapes at invoke";
  }
  return "";
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The median of `v` (the upper one of an even count); 0 for none.
int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

int64_t Sum(const std::vector<int64_t>& v) {
  int64_t s = 0;
  for (int64_t x : v) s += x;
  return s;
}

}  // namespace

void SubgraphExecutor::FreeDeleter::operator()(uint8_t* p) const {
  std::free(p);
}

uint8_t* SubgraphExecutor::DynamicBuffer::Reserve(size_t bytes) {
  if (data == nullptr || bytes > capacity) {
    // Grows by half again so a slowly growing shape reallocates rarely.
    const size_t size = AlignUp(
        std::max({bytes, capacity + capacity / 2, size_t{1}}), kArenaAlignment);
    data.reset(
        static_cast<uint8_t*>(std::aligned_alloc(kArenaAlignment, size)));
    capacity = data != nullptr ? size : 0;
    if (data == nullptr) return nullptr;
  }
  return data.get();
}

SubgraphExecutor::SubgraphExecutor(LoadEnv* env, SubgraphId id, int depth)
    : env_(env), model_(env->model), id_(id), depth_(depth) {}

SubgraphExecutor::~SubgraphExecutor() = default;

const Subgraph& SubgraphExecutor::subgraph() const {
  return model_->subgraphs[id_];
}

std::string SubgraphExecutor::OpLabel(OpId index) const {
  return absl::StrFormat("subgraph %d op %d (%s)", id_, index,
                         OpName(*model_, subgraph().ops[index]));
}

uint8_t* SubgraphExecutor::AllocateOwned(size_t bytes) {
  size_t size = AlignUp(std::max<size_t>(bytes, 1), kArenaAlignment);
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kArenaAlignment, size));
  if (p != nullptr) {
    std::memset(p, 0, size);
    owned_.emplace_back(p);
  }
  return p;
}

absl::StatusOr<std::unique_ptr<SubgraphExecutor>> SubgraphExecutor::Create(
    LoadEnv* env, SubgraphId id, const CalleeInputs* inputs, bool external_io,
    bool count_cpu_ops, int depth) {
  const Model& model = *env->model;
  if (id < 0 || id >= static_cast<SubgraphId>(model.subgraphs.size())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("subgraph %d does not exist", id));
  }
  if (depth > kMaxCallDepth) {
    return absl::InvalidArgumentError(
        absl::StrFormat("subgraph %d: calls nest deeper than %d (a cycle?)", id,
                        kMaxCallDepth));
  }
  if (env->checked.size() < model.subgraphs.size()) {
    env->checked.resize(model.subgraphs.size(), false);
  }
  if (!env->checked[id]) {
    GRAFT_RETURN_IF_ERROR(CheckExecutableSubgraph(model, id));
    env->checked[id] = true;
  }
  std::unique_ptr<SubgraphExecutor> e(new SubgraphExecutor(env, id, depth));
  e->external_io_ = external_io;
  GRAFT_RETURN_IF_ERROR(e->InitTensors(inputs));
  e->bound_in_.assign(e->subgraph().inputs.size(), nullptr);
  e->bound_out_.assign(e->subgraph().outputs.size(), CalleeOutput{});
  GRAFT_RETURN_IF_ERROR(e->PrepareOps(count_cpu_ops));
  e->FuseEpilogues();
  e->FuseRowPipelines();
  GRAFT_RETURN_IF_ERROR(e->PlanMemory());
  return e;
}

absl::Status SubgraphExecutor::InitTensors(const CalleeInputs* inputs) {
  const Subgraph& sg = subgraph();
  const size_t n = sg.tensors.size();
  tensors_.resize(n);
  planned_.assign(n, nullptr);
  written_.assign(n, false);
  resource_.assign(n, -1);
  dynamic_.assign(n, false);
  dynamic_buffers_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const tfl::TensorT& src = sg.tensors[i];
    Tensor& t = tensors_[i];
    t.type = src.type;
    t.name = src.name;
    t.quantization = src.quantization.get();
    // A dynamic dim (-1 in shape_signature) is stored as 1 in `shape`, as
    // TFLite does; a stray -1 in `shape` is read the same way.
    for (int32_t d : src.shape) t.shape.push_back(d < 0 ? 1 : d);
    const size_t elem = ElementSize(t.type);
    GRAFT_ASSIGN_OR_RETURN(t.bytes, SizeOf(static_cast<TensorId>(i), t));
    if (src.buffer == 0 || src.buffer >= model_->buffers.size()) continue;
    const Bytes& data = model_->buffers[src.buffer].data;
    if (data.empty()) continue;
    if (elem != 0 && data.size() != t.bytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "subgraph %d tensor %d ('%s'): buffer holds %d bytes, shape %s of "
          "%s needs %d",
          id_, i, src.name, data.size(), ShapeToString(t.shape),
          TensorTypeName(t.type), t.bytes));
    }
    t.constant = true;
    t.bytes = data.size();
    // Kernels read elements in place; a buffer misaligned for its element
    // type (possible in files not written by Graft or TFLite's converter)
    // gets an aligned copy.
    const size_t align = std::clamp<size_t>(elem, 1, 8);
    if (reinterpret_cast<uintptr_t>(data.data()) % align != 0) {
      uint8_t* copy = AllocateOwned(data.size());
      if (copy == nullptr) return absl::ResourceExhaustedError("out of memory");
      std::memcpy(copy, data.data(), data.size());
      t.raw_data = copy;
    } else {
      t.raw_data = const_cast<uint8_t*>(data.data());
    }
  }
  // A STRING tensor's size depends on its values: computed ones are sized
  // at invoke (and subgraph inputs by SetInput).
  for (size_t i = 0; i < n; ++i) {
    if (tensors_[i].type == tfl::TensorType_STRING && !tensors_[i].constant) {
      dynamic_[i] = true;
    }
  }
  for (TensorId t : sg.inputs) {
    if (t >= 0 && static_cast<size_t>(t) < n && dynamic_[t]) {
      string_inputs_.push_back(t);
    }
  }
  // Variables (e.g. recurrent state) persist across invokes: own storage,
  // initialized from the buffer when there is one, else where TFLite's
  // ResetVariableTensor puts them: an INT8 variable at its zero point,
  // others at 0.
  for (size_t i = 0; i < n; ++i) {
    if (!sg.tensors[i].is_variable) continue;
    Tensor& t = tensors_[i];
    const uint8_t* init = t.constant ? t.raw_data : nullptr;
    uint8_t* storage = AllocateOwned(t.bytes);
    if (storage == nullptr)
      return absl::ResourceExhaustedError("out of memory");
    if (init != nullptr) {
      std::memcpy(storage, init, t.bytes);
    } else if (t.type == tfl::TensorType_INT8 && t.quantization != nullptr &&
               !t.quantization->zero_point.empty()) {
      std::memset(storage, static_cast<uint8_t>(t.quantization->zero_point[0]),
                  t.bytes);
    }
    t.raw_data = storage;
    t.constant = false;
  }
  if (inputs != nullptr) {
    if (inputs->shapes.size() != sg.inputs.size() ||
        (!inputs->resources.empty() &&
         inputs->resources.size() != sg.inputs.size()) ||
        (!inputs->dynamic.empty() &&
         inputs->dynamic.size() != sg.inputs.size())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("subgraph %d takes %d inputs, the caller passes %d",
                          id_, sg.inputs.size(), inputs->shapes.size()));
    }
    for (size_t i = 0; i < sg.inputs.size(); ++i) {
      Tensor& t = tensors_[sg.inputs[i]];
      t.shape = inputs->shapes[i];
      GRAFT_ASSIGN_OR_RETURN(t.bytes, SizeOf(sg.inputs[i], t));
      if (!inputs->resources.empty()) {
        resource_[sg.inputs[i]] = inputs->resources[i];
      }
      if (!inputs->dynamic.empty() && inputs->dynamic[i]) {
        dynamic_[sg.inputs[i]] = true;
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> SubgraphExecutor::SizeOf(TensorId id,
                                                const Tensor& t) const {
  absl::StatusOr<size_t> bytes = CheckedTensorBytes(t.type, t.shape);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("subgraph %d tensor %d ('%s'): %s", id_, id, t.name,
                        bytes.status().message()));
  }
  // A STRING's buffer (string_tensor.h) holds an int32 offset per element
  // and two more, all below 2^31.
  constexpr int64_t kMaxStrings =
      (int64_t{std::numeric_limits<int32_t>::max()} - 8) / 4;
  if (t.type == tfl::TensorType_STRING && NumElements(t.shape) > kMaxStrings) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "subgraph %d tensor %d ('%s'): a STRING tensor of shape %s has more "
        "strings than its buffer's 32-bit offsets can address (at most %d)",
        id_, id, t.name, ShapeToString(t.shape), kMaxStrings));
  }
  return *bytes;
}

void SubgraphExecutor::UseDeclaredOutputShapes(const tfl::OperatorT& op) {
  for (TensorId out : op.outputs) {
    if (out < 0) continue;
    Tensor& t = tensors_[out];
    t.shape.clear();
    for (int32_t d : subgraph().tensors[out].shape) {
      t.shape.push_back(d < 0 ? 1 : d);
    }
    t.bytes = static_cast<size_t>(NumElements(t.shape)) * ElementSize(t.type);
  }
}

absl::Status SubgraphExecutor::PrepareOps(bool count_cpu_ops) {
  const Subgraph& sg = subgraph();
  ops_.resize(sg.ops.size());
  std::vector<bool> tainted(tensors_.size(), false);
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const tfl::OperatorT& op = sg.ops[i];
    PreparedOp& p = ops_[i];
    p.index = static_cast<OpId>(i);
    p.op = &op;
    p.name = OpName(*model_, op);
    p.profile_name = p.name;
    if (op.opcode_index >= model_->operator_codes.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpLabel(p.index), ": opcode index out of range"));
    }
    for (TensorId t : op.inputs) {
      if (t >= static_cast<TensorId>(tensors_.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpLabel(p.index), ": input tensor out of range"));
      }
    }
    // Outputs are checked by CheckExecutableSubgraph: present, and each
    // written by this op alone into memory the runtime owns.
    for (TensorId t : op.outputs) written_[t] = true;
    // An op fed by one that cannot run is not prepared (its input shapes
    // are guesses); only the root causes are reported.
    bool tainted_input = false;
    for (TensorId t : op.inputs) tainted_input |= t >= 0 && tainted[t];
    if (tainted_input) {
      p.kind = PreparedOp::Kind::kMissing;
      p.detail = "not prepared: an input comes from an op that cannot run";
      for (TensorId t : op.outputs) tainted[t] = true;
      UseDeclaredOutputShapes(op);
      continue;
    }
    const tfl::OperatorCodeT& code = model_->operator_codes[op.opcode_index];
    const tfl::BuiltinOperator builtin = EffectiveBuiltinCode(code);
    p.builtin = builtin;
    // An input whose shape is known only at invoke: kernels are prepared
    // again then, and calls pass it on to their callees; variables and
    // dispatch ops are prepared once, at load, and cannot take it.
    TensorId dynamic_input = -1;
    for (TensorId t : op.inputs) {
      if (t >= 0 && dynamic_[t]) dynamic_input = t;
    }
    const bool prepared_once =
        (builtin == tfl::BuiltinOperator_CUSTOM &&
         (code.custom_code == kDispatchCustomCode ||
          code.custom_code == kLiteRtDispatchCustomCode)) ||
        IsVariableOp(builtin);
    absl::Status st;
    if (dynamic_input >= 0 && prepared_once) {
      p.kind = PreparedOp::Kind::kMissing;
      const Tensor& in = tensors_[dynamic_input];
      p.detail = absl::StrFormat(
          "input '%s' gets its %s only at invoke, and %s needs its shapes "
          "at load",
          in.name, in.type == tfl::TensorType_STRING ? "size" : "shape",
          p.name);
    } else if (builtin == tfl::BuiltinOperator_CUSTOM) {
      if (code.custom_code == kDispatchCustomCode) {
        st = PrepareDispatchOp(p, count_cpu_ops);
      } else if (code.custom_code == kLiteRtDispatchCustomCode) {
        st = PrepareLiteRtDispatchOp(p, count_cpu_ops);
      } else {
        p.kind = PreparedOp::Kind::kMissing;
        p.detail = absl::StrCat("no CPU kernel for custom op '",
                                code.custom_code, "'");
      }
    } else if (builtin == tfl::BuiltinOperator_STABLEHLO_COMPOSITE) {
      const auto* o = op.builtin_options_2.AsStableHLOCompositeOptions();
      if (o == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            OpLabel(p.index), ": missing StableHLOCompositeOptions"));
      }
      st = PrepareCallOp(p, o->decomposition_subgraph_index, count_cpu_ops,
                         absl::StrCat("composite '", o->name, "'"));
    } else if (builtin == tfl::BuiltinOperator_IF) {
      st = PrepareIfOp(p, count_cpu_ops);
    } else if (builtin == tfl::BuiltinOperator_WHILE) {
      st = PrepareWhileOp(p, count_cpu_ops);
    } else if (builtin == tfl::BuiltinOperator_CALL_ONCE) {
      st = PrepareCallOnceOp(p, count_cpu_ops);
    } else if (IsVariableOp(builtin)) {
      st = PrepareVariableOp(p, builtin, count_cpu_ops);
    } else if (builtin == tfl::BuiltinOperator_CALL) {
      // The deprecated CALL op: converters emit IF / WHILE / CALL_ONCE.
      p.kind = PreparedOp::Kind::kMissing;
      p.detail = "the deprecated CALL op is not supported";
    } else {
      st = PrepareKernelOp(p, dynamic_input >= 0, count_cpu_ops);
    }
    if (absl::IsUnimplemented(st)) {  // e.g. a callee's dynamic output
      p.kind = PreparedOp::Kind::kMissing;
      p.detail = std::string(st.message());
      st = absl::OkStatus();
    }
    GRAFT_RETURN_IF_ERROR(st);
    if (p.kind == PreparedOp::Kind::kMissing) {
      env_->missing.push_back(absl::StrCat(OpLabel(p.index), ": ", p.detail));
      for (TensorId t : op.outputs) tainted[t] = true;
      UseDeclaredOutputShapes(op);
    }
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::PrepareKernelOp(PreparedOp& p,
                                               bool dynamic_input,
                                               bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  absl::Span<const Kernel* const> kernels = FindKernels(p.builtin);
  if (kernels.empty()) {
    p.kind = PreparedOp::Kind::kMissing;
    p.detail = absl::StrCat("no CPU kernel for ", p.name, " in this build");
    return absl::OkStatus();
  }
  // Every kernel's distinct refusal, in table order: a generic one ("no CPU
  // kernel for dtypes ...") of one kernel must not hide the specific reason
  // of the kernel meant for those dtypes.
  std::vector<std::string> refusals;
  for (const Kernel* kernel : kernels) {
    PrepareContext ctx(op, absl::MakeSpan(tensors_), subgraph().tensors,
                       env_->pool);
    absl::Status st = kernel->prepare(ctx);
    if (absl::IsUnimplemented(st)) {
      std::string why(st.message());
      if (std::find(refusals.begin(), refusals.end(), why) == refusals.end()) {
        refusals.push_back(std::move(why));
      }
      continue;
    }
    // With an input shape known only at invoke, the shapes seen here are
    // placeholders: the first kernel that takes the dtypes is the guess,
    // and shape errors wait for the real shapes.
    if (!st.ok() && !dynamic_input) {
      return absl::Status(st.code(),
                          absl::StrCat(OpLabel(p.index), ": ", st.message()));
    }
    if (!st.ok() || dynamic_input || ctx.deferred()) {
      p.kind = PreparedOp::Kind::kKernel;
      p.kernel = kernel;
      p.dynamic = true;
      p.reads_values = ctx.deferred();
      p.detail = absl::StrCat(kernel->name, ", shapes at invoke");
      UseDeclaredOutputShapes(op);
      for (TensorId out : op.outputs) dynamic_[out] = true;
      if (count_cpu_ops) {
        env_->cpu_ops.push_back(
            absl::StrCat(OpLabel(p.index), ": CPU kernel ", kernel->name));
      }
      return absl::OkStatus();
    }
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (!ctx.output_shape_set(i)) {
        return absl::InternalError(
            absl::StrFormat("%s: kernel %s set no shape for output %d",
                            OpLabel(p.index), kernel->name, i));
      }
    }
    p.kind = PreparedOp::Kind::kKernel;
    p.kernel = kernel;
    p.eval = ctx.eval() != nullptr ? ctx.eval() : kernel->eval;
    if (p.eval == nullptr) {
      return absl::InternalError(absl::StrFormat(
          "%s: kernel %s has no eval", OpLabel(p.index), kernel->name));
    }
    p.state = ctx.TakeState();
    p.scratch_bytes = ctx.scratch_bytes();
    p.reduction_length = ctx.reduction_length();
    p.range_eval = ctx.range_eval();
    p.reports_output_ready = ctx.reports_output_ready();
    p.detail = kernel->name;
    // Fold ops whose outputs are fixed at load: every present input is
    // constant, or the kernel reads only shapes (SHAPE).
    bool foldable = ctx.num_outputs() > 0;
    if (!ctx.shape_only()) {
      for (int i = 0; i < ctx.num_inputs(); ++i) {
        const Tensor* in = ctx.input(i);
        if (in != nullptr && !in->constant) foldable = false;
      }
    }
    if (foldable) return FoldOp(p);
    if (count_cpu_ops) {
      env_->cpu_ops.push_back(
          absl::StrCat(OpLabel(p.index), ": CPU kernel ", kernel->name));
    }
    return absl::OkStatus();
  }
  p.kind = PreparedOp::Kind::kMissing;
  p.detail = absl::StrJoin(refusals, "; ");
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::FoldOp(PreparedOp& p) {
  const tfl::OperatorT& op = *p.op;
  for (TensorId out : op.outputs) {
    Tensor& t = tensors_[out];
    t.raw_data = AllocateOwned(t.bytes);
    if (t.raw_data == nullptr) {
      return absl::ResourceExhaustedError("out of memory");
    }
  }
  std::unique_ptr<uint8_t, FreeDeleter> scratch;
  if (p.scratch_bytes > 0) {
    scratch.reset(static_cast<uint8_t*>(std::aligned_alloc(
        kArenaAlignment, AlignUp(p.scratch_bytes, kArenaAlignment))));
    if (scratch == nullptr)
      return absl::ResourceExhaustedError("out of memory");
  }
  EvalContext ctx(op, absl::MakeSpan(tensors_), p.state.get(), scratch.get(),
                  env_->pool);
  absl::Status st = p.eval(ctx);
  if (!st.ok()) {
    return absl::Status(
        st.code(),
        absl::StrCat(OpLabel(p.index), " (folded at load): ", st.message()));
  }
  for (TensorId out : op.outputs) {
    tensors_[out].constant = true;
    dynamic_[out] = false;
  }
  p.kind = PreparedOp::Kind::kFolded;
  p.state.reset();
  p.scratch_bytes = 0;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SubgraphExecutor>>
SubgraphExecutor::CreateCallee(const PreparedOp& p, SubgraphId callee,
                               absl::Span<const TensorId> inputs,
                               absl::string_view role,
                               const std::vector<bool>* dynamic) {
  if (callee < 0 ||
      callee >= static_cast<SubgraphId>(model_->subgraphs.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s subgraph %d does not exist", OpLabel(p.index), role, callee));
  }
  const Subgraph& cs = model_->subgraphs[callee];
  if (cs.inputs.size() != inputs.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s subgraph %d takes %d inputs, the op passes %d",
        OpLabel(p.index), role, callee, cs.inputs.size(), inputs.size()));
  }
  CalleeInputs ci;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorId in = inputs[i];
    if (in < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          OpLabel(p.index), ": a call cannot take an omitted input"));
    }
    const TensorId callee_in = cs.inputs[i];
    if (callee_in < 0 ||
        callee_in >= static_cast<TensorId>(cs.tensors.size())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s subgraph %d input %d is out of range",
                          OpLabel(p.index), role, callee, i));
    }
    const tfl::TensorType want = cs.tensors[callee_in].type;
    if (want != tensors_[in].type) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: input %d is %s, %s subgraph %d expects %s", OpLabel(p.index), i,
          TensorTypeName(tensors_[in].type), role, callee,
          TensorTypeName(want)));
    }
    ci.shapes.push_back(tensors_[in].shape);
    ci.resources.push_back(resource_[in]);
    ci.dynamic.push_back(dynamic != nullptr ? (*dynamic)[i] : dynamic_[in]);
  }
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphExecutor> e,
                         Create(env_, callee, &ci, /*external_io=*/true,
                                /*count_cpu_ops=*/false, depth_ + 1));
  return e;
}

void SubgraphExecutor::BindCallee(SubgraphExecutor& e,
                                  absl::Span<const TensorId> inputs,
                                  absl::Span<const TensorId> outputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    e.bound_in_[i] = &tensors_[inputs[i]];
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TensorId t = outputs[i];
    e.bound_out_[i] = {&tensors_[t],
                       dynamic_[t] ? &dynamic_buffers_[t] : nullptr};
  }
}

absl::Status SubgraphExecutor::PrepareCallOp(PreparedOp& p, SubgraphId callee,
                                             bool count_cpu_ops,
                                             const std::string& why) {
  const tfl::OperatorT& op = *p.op;
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphExecutor> e,
                         CreateCallee(p, callee, op.inputs, "called"));
  const Subgraph& cs = e->subgraph();
  if (cs.outputs.size() != op.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: subgraph %d has %d outputs, the op %d", OpLabel(p.index), callee,
        cs.outputs.size(), op.outputs.size()));
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor* src = e->tensor(cs.outputs[i]);
    Tensor& dst = tensors_[op.outputs[i]];
    if (src->type != dst.type) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: output %d is %s, subgraph %d yields %s", OpLabel(p.index), i,
          TensorTypeName(dst.type), callee, TensorTypeName(src->type)));
    }
    dst.shape = src->shape;
    dst.bytes = src->bytes;
    resource_[op.outputs[i]] = e->resource(cs.outputs[i]);
    if (e->dynamic(cs.outputs[i])) dynamic_[op.outputs[i]] = true;
  }
  BindCallee(*e, op.inputs, op.outputs);
  p.callees.push_back(std::move(e));
  p.kind = PreparedOp::Kind::kCall;
  if (p.detail.empty())
    p.detail = absl::StrFormat("%s, subgraph %d", why, callee);
  p.detail += ShapesAtInvokeNote(dynamic_, op.outputs);
  if (count_cpu_ops) {
    env_->cpu_ops.push_back(absl::StrCat(OpLabel(p.index), ": ", p.detail));
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::PrepareIfOp(PreparedOp& p, bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  const tfl::IfOptionsT* o = op.builtin_options.AsIfOptions();
  if (o == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpLabel(p.index), ": missing IfOptions"));
  }
  if (op.inputs.empty() || op.inputs[0] < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpLabel(p.index), ": IF needs a condition input"));
  }
  const Tensor& cond = tensors_[op.inputs[0]];
  if (cond.type != tfl::TensorType_BOOL ||
      (!dynamic_[op.inputs[0]] && cond.num_elements() != 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the condition is %s %s; IF takes a BOOL with one element",
        OpLabel(p.index), TensorTypeName(cond.type),
        ShapeToString(cond.shape)));
  }
  const absl::Span<const TensorId> inputs =
      absl::MakeConstSpan(op.inputs).subspan(1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] >= 0 && !PassesThroughCalls(tensors_[inputs[i]].type)) {
      p.kind = PreparedOp::Kind::kMissing;
      p.detail = absl::StrFormat(
          "input %d ('%s') is %s; only fixed-size dtypes, STRING and "
          "RESOURCE pass through control flow",
          i + 1, tensors_[inputs[i]].name,
          TensorTypeName(tensors_[inputs[i]].type));
      return absl::OkStatus();
    }
  }
  const SubgraphId branch_ids[2] = {o->then_subgraph_index,
                                    o->else_subgraph_index};
  const char* const roles[2] = {"then", "else"};
  for (int b = 0; b < 2; ++b) {
    GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphExecutor> e,
                           CreateCallee(p, branch_ids[b], inputs, roles[b]));
    if (e->subgraph().outputs.size() != op.outputs.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s subgraph %d has %d outputs, the op %d",
                          OpLabel(p.index), roles[b], branch_ids[b],
                          e->subgraph().outputs.size(), op.outputs.size()));
    }
    p.callees.push_back(std::move(e));
  }
  const SubgraphExecutor& then_e = *p.callees[0];
  const SubgraphExecutor& else_e = *p.callees[1];
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const TensorId to = then_e.subgraph().outputs[i];
    const TensorId eo = else_e.subgraph().outputs[i];
    const Tensor* t = then_e.tensor(to);
    const Tensor* e = else_e.tensor(eo);
    Tensor& dst = tensors_[op.outputs[i]];
    if (t->type != dst.type || e->type != dst.type) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: output %d is %s, then subgraph %d yields %s, else subgraph %d "
          "yields %s",
          OpLabel(p.index), i, TensorTypeName(dst.type), branch_ids[0],
          TensorTypeName(t->type), branch_ids[1], TensorTypeName(e->type)));
    }
    if (then_e.resource(to) != else_e.resource(eo)) {
      p.kind = PreparedOp::Kind::kMissing;
      p.detail = absl::StrFormat(
          "output %d ('%s'): the branches yield different resource "
          "variables; that is not supported",
          i, dst.name);
      return absl::OkStatus();
    }
    dst.shape = t->shape;
    dst.bytes = t->bytes;
    resource_[op.outputs[i]] = then_e.resource(to);
    // Which branch runs decides the shape.
    if (then_e.dynamic(to) || else_e.dynamic(eo) || t->shape != e->shape) {
      dynamic_[op.outputs[i]] = true;
    }
  }
  for (const auto& branch : p.callees) BindCallee(*branch, inputs, op.outputs);
  p.kind = PreparedOp::Kind::kIf;
  p.detail =
      absl::StrFormat("if: then subgraph %d, else subgraph %d%s", branch_ids[0],
                      branch_ids[1], ShapesAtInvokeNote(dynamic_, op.outputs));
  if (count_cpu_ops) {
    env_->cpu_ops.push_back(absl::StrCat(OpLabel(p.index), ": ", p.detail));
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::PrepareWhileOp(PreparedOp& p,
                                              bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  const tfl::WhileOptionsT* o = op.builtin_options.AsWhileOptions();
  if (o == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpLabel(p.index), ": missing WhileOptions"));
  }
  const size_t n = op.inputs.size();
  if (op.outputs.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d loop variables in, %d out", OpLabel(p.index), n,
                        op.outputs.size()));
  }
  for (size_t i = 0; i < n; ++i) {
    if (op.inputs[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          OpLabel(p.index), ": a loop variable cannot be an omitted input"));
    }
    const Tensor& in = tensors_[op.inputs[i]];
    if (in.type != tensors_[op.outputs[i]].type) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: loop variable %d is %s in and %s out",
                          OpLabel(p.index), i, TensorTypeName(in.type),
                          TensorTypeName(tensors_[op.outputs[i]].type)));
    }
    if (!PassesThroughCalls(in.type)) {
      p.kind = PreparedOp::Kind::kMissing;
      p.detail = absl::StrFormat(
          "loop variable %d ('%s') is %s; only fixed-size dtypes, STRING "
          "and RESOURCE pass through control flow",
          i, in.name, TensorTypeName(in.type));
      return absl::OkStatus();
    }
  }
  const SubgraphId cond_id = o->cond_subgraph_index;
  const SubgraphId body_id = o->body_subgraph_index;
  // Prepared with the dynamic inputs dynamic, then again while the body
  // turns more loop variables dynamic (at most once per variable); what a
  // discarded attempt reported missing is forgotten.
  std::vector<bool> dyn(n);
  for (size_t i = 0; i < n; ++i) dyn[i] = dynamic_[op.inputs[i]];
  const size_t missing_before = env_->missing.size();
  std::unique_ptr<SubgraphExecutor> cond, body;
  for (bool again = true; again;) {
    env_->missing.resize(missing_before);
    GRAFT_ASSIGN_OR_RETURN(cond,
                           CreateCallee(p, cond_id, op.inputs, "cond", &dyn));
    GRAFT_ASSIGN_OR_RETURN(body,
                           CreateCallee(p, body_id, op.inputs, "body", &dyn));
    const Subgraph& bs = body->subgraph();
    if (bs.outputs.size() != n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: body subgraph %d has %d outputs for %d loop variables",
          OpLabel(p.index), body_id, bs.outputs.size(), n));
    }
    again = false;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& in = tensors_[op.inputs[i]];
      const Tensor* out = body->tensor(bs.outputs[i]);
      if (out->type != in.type) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: body subgraph %d turns loop variable %d from %s into %s",
            OpLabel(p.index), body_id, i, TensorTypeName(in.type),
            TensorTypeName(out->type)));
      }
      if (!dyn[i] && (body->dynamic(bs.outputs[i]) || out->shape != in.shape)) {
        dyn[i] = true;
        again = true;
      }
    }
  }
  const Subgraph& cs = cond->subgraph();
  const TensorId cond_out = cs.outputs.size() == 1 ? cs.outputs[0] : -1;
  if (cond_out < 0 || cond->tensor(cond_out)->type != tfl::TensorType_BOOL ||
      (!cond->dynamic(cond_out) &&
       cond->tensor(cond_out)->num_elements() != 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cond subgraph %d must yield one BOOL with one element",
        OpLabel(p.index), cond_id));
  }
  const Subgraph& bs = body->subgraph();
  p.loop_dynamic = dyn;
  p.loop_offsets.assign(n, 0);
  p.loop_storage.resize(n);
  size_t scratch = 0;
  for (size_t i = 0; i < n; ++i) {
    const Tensor& in = tensors_[op.inputs[i]];
    if (body->resource(bs.outputs[i]) != resource_[op.inputs[i]]) {
      p.kind = PreparedOp::Kind::kMissing;
      p.detail = absl::StrFormat(
          "body subgraph %d replaces the resource variable of loop variable "
          "%d ('%s'); that is not supported",
          body_id, i, in.name);
      return absl::OkStatus();
    }
    Tensor& dst = tensors_[op.outputs[i]];
    dst.shape = in.shape;
    dst.bytes = in.bytes;
    resource_[op.outputs[i]] = resource_[op.inputs[i]];
    if (dyn[i]) {
      dynamic_[op.outputs[i]] = true;
    } else {
      p.loop_offsets[i] = scratch;
      scratch += AlignUp(in.bytes, kArenaAlignment);
    }
  }
  p.scratch_bytes = scratch;
  for (std::vector<Tensor>& set : p.loop_vars) {
    set.assign(op.outputs.size(), Tensor());
    for (size_t i = 0; i < n; ++i) {
      const Tensor& out = tensors_[op.outputs[i]];
      set[i].type = out.type;
      set[i].shape = out.shape;
      set[i].bytes = out.bytes;
      set[i].quantization = out.quantization;
      set[i].name = out.name;
    }
  }
  // The cond's result: one byte of storage reserved now, or sized at each
  // run when the cond computes its shape.
  p.cond_value.type = tfl::TensorType_BOOL;
  p.cond_value.bytes = 1;
  p.cond_value.raw_data = p.cond_storage.Reserve(1);
  if (p.cond_value.raw_data == nullptr) {
    return absl::ResourceExhaustedError("out of memory");
  }
  cond->bound_out_[0] = {&p.cond_value,
                         cond->dynamic(cond_out) ? &p.cond_storage : nullptr};
  p.callees.push_back(std::move(cond));
  p.callees.push_back(std::move(body));
  p.kind = PreparedOp::Kind::kWhile;
  p.detail =
      absl::StrFormat("while: cond subgraph %d, body subgraph %d%s", cond_id,
                      body_id, ShapesAtInvokeNote(dynamic_, op.outputs));
  if (count_cpu_ops) {
    env_->cpu_ops.push_back(absl::StrCat(OpLabel(p.index), ": ", p.detail));
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::PrepareCallOnceOp(PreparedOp& p,
                                                 bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  const tfl::CallOnceOptionsT* o = op.builtin_options.AsCallOnceOptions();
  if (o == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpLabel(p.index), ": missing CallOnceOptions"));
  }
  if (!op.inputs.empty() || !op.outputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpLabel(p.index), ": CALL_ONCE takes no inputs and has no outputs"));
  }
  const SubgraphId init = o->init_subgraph_index;
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphExecutor> e,
                         CreateCallee(p, init, {}, "init"));
  if (!e->subgraph().outputs.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: init subgraph %d has %d outputs; it must have none",
        OpLabel(p.index), init, e->subgraph().outputs.size()));
  }
  if (static_cast<size_t>(init) >= env_->call_once_done.size()) {
    return absl::InternalError(absl::StrCat(
        OpLabel(p.index), ": LoadEnv::call_once_done is not sized"));
  }
  p.callees.push_back(std::move(e));
  p.init = init;
  p.kind = PreparedOp::Kind::kCallOnce;
  p.detail = absl::StrFormat("call once: init subgraph %d", init);
  if (count_cpu_ops) {
    env_->cpu_ops.push_back(absl::StrCat(OpLabel(p.index), ": ", p.detail));
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::PrepareVariableOp(PreparedOp& p,
                                                 tfl::BuiltinOperator builtin,
                                                 bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  ResourceVariables& vars = env_->variables;
  if (builtin == tfl::BuiltinOperator_VAR_HANDLE) {
    if (!op.inputs.empty() || op.outputs.size() != 1 ||
        tensors_[op.outputs[0]].type != tfl::TensorType_RESOURCE) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpLabel(p.index),
                       ": VAR_HANDLE takes no inputs and yields one "
                       "RESOURCE tensor"));
    }
    const tfl::VarHandleOptionsT* o = op.builtin_options.AsVarHandleOptions();
    const int32_t id = o != nullptr ? vars.Handle(o->container, o->shared_name)
                                    : vars.Handle("", "");
    resource_[op.outputs[0]] = id;
    // The handle is known at load: nothing runs at invoke.
    p.kind = PreparedOp::Kind::kFolded;
    p.detail =
        absl::StrCat("variable ", ResourceVariables::Name(*vars.Get(id)));
    return absl::OkStatus();
  }
  const bool read = builtin == tfl::BuiltinOperator_READ_VARIABLE;
  if (op.inputs.size() != (read ? 1u : 2u) ||
      op.outputs.size() != (read ? 1u : 0u) || op.inputs[0] < 0 ||
      (!read && op.inputs[1] < 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpLabel(p.index),
        read ? ": READ_VARIABLE takes a resource and yields one tensor"
             : ": ASSIGN_VARIABLE takes a resource and a value and yields "
               "nothing"));
  }
  const int32_t id = resource_[op.inputs[0]];
  ResourceVariable* v = vars.Get(id);
  if (v == nullptr) {
    p.kind = PreparedOp::Kind::kMissing;
    p.detail = absl::StrFormat(
        "the variable of resource tensor '%s' is not known at load (it does "
        "not come from a VAR_HANDLE of this model)",
        tensors_[op.inputs[0]].name);
    return absl::OkStatus();
  }
  const std::string name = ResourceVariables::Name(*v);
  absl::Status declared;
  if (read) {
    if (!v->declared) {
      tfl::TensorType type;
      Shape shape;
      if (!FindDeclaredAssignment(*model_, v->container, v->shared_name, &type,
                                  &shape)) {
        p.kind = PreparedOp::Kind::kMissing;
        p.detail = absl::StrFormat(
            "variable %s is read, but no ASSIGN_VARIABLE of it with a static "
            "shape precedes this read or is found in the model, so its "
            "dtype and shape are unknown at load",
            name);
        return absl::OkStatus();
      }
      declared = vars.Declare(
          id, type, shape,
          absl::StrCat("an ASSIGN_VARIABLE found in the model for ",
                       OpLabel(p.index)));
    }
  } else {
    const Tensor& value = tensors_[op.inputs[1]];
    declared = vars.Declare(id, value.type, value.shape, OpLabel(p.index));
  }
  if (absl::IsUnimplemented(declared)) {
    p.kind = PreparedOp::Kind::kMissing;
    p.detail = std::string(declared.message());
    return absl::OkStatus();
  }
  if (!declared.ok()) {
    return absl::Status(declared.code(), absl::StrCat(OpLabel(p.index), ": ",
                                                      declared.message()));
  }
  if (read) {
    Tensor& out = tensors_[op.outputs[0]];
    if (out.type != v->type) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: reads %s variable %s into a %s tensor", OpLabel(p.index),
          TensorTypeName(v->type), name, TensorTypeName(out.type)));
    }
    out.shape = v->shape;
    out.bytes = v->bytes;
  }
  p.variable = v;
  p.kind = read ? PreparedOp::Kind::kReadVariable
                : PreparedOp::Kind::kAssignVariable;
  p.detail = absl::StrCat("variable ", name);
  if (count_cpu_ops) {
    env_->cpu_ops.push_back(absl::StrCat(OpLabel(p.index), ": ", p.detail));
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::PrepareDispatchOp(PreparedOp& p,
                                                 bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  absl::StatusOr<DispatchOpOptions> options =
      DecodeDispatchOpOptions(op.custom_options);
  if (!options.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpLabel(p.index),
        ": bad dispatch op options: ", options.status().message()));
  }
  const std::string& vendor = options->vendor;
  // Dispatch outputs keep their declared (static) shapes: the compiled
  // module was built for them.
  UseDeclaredOutputShapes(op);
  std::string reason;
  auto it = env_->backends.find(vendor);
  if (it == env_->backends.end()) {
    auto failure = env_->backend_failures.find(vendor);
    reason = failure == env_->backend_failures.end()
                 ? absl::StrCat("no dispatch backend for vendor '", vendor, "'")
                 : absl::StrCat("the dispatch library of vendor '", vendor,
                                "' did not load: ", failure->second);
  } else {
    DispatchBackend* backend = it->second;
    const ManifestVendor* entry =
        env_->manifest ? env_->manifest->Find(vendor) : nullptr;
    auto checked = env_->vendor_status.find(vendor);
    if (checked == env_->vendor_status.end()) {
      absl::Status st =
          entry ? backend->CheckCompatibility(*entry) : absl::OkStatus();
      checked = env_->vendor_status.emplace(vendor, st).first;
    }
    if (!checked->second.ok()) {
      reason =
          absl::StrCat("vendor '", vendor,
                       "' rejected the model: ", checked->second.message());
    } else if (options->module_buffer >= model_->buffers.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: module buffer %d out of range", OpLabel(p.index),
                          options->module_buffer));
    } else {
      absl::Status st =
          PrepareOnBackend(p, *backend, *options,
                           model_->buffers[options->module_buffer].data, entry);
      if (st.ok()) {
        p.detail = vendor;
        p.profile_name = absl::StrCat(vendor, ":", options->entry_point);
        return absl::OkStatus();
      }
      reason = absl::StrCat("vendor '", vendor,
                            "' could not prepare it: ", st.message());
    }
  }
  return PrepareFallback(p, options->fallback_subgraph, reason,
                         ", and the op has no fallback subgraph",
                         count_cpu_ops);
}

absl::Status SubgraphExecutor::PrepareLiteRtDispatchOp(PreparedOp& p,
                                                       bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  absl::StatusOr<LiteRtDispatchOpOptions> options =
      DecodeLiteRtDispatchOpOptions(op.custom_options);
  if (!options.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpLabel(p.index),
        ": corrupted DISPATCH_OP options (LiteRT's {bytecode_offset, "
        "bytecode_size, name}): ",
        options.status().message()));
  }
  // The module is a byte range of the model file; a model Graft compiled
  // names it as a buffer too, which is all a model compiled in memory (on
  // the device, not yet saved) has.
  Bytes module;
  if (options->module_buffer != 0 &&
      options->module_buffer < model_->buffers.size() &&
      !model_->buffers[options->module_buffer].data.empty()) {
    module = model_->buffers[options->module_buffer].data;
  } else if (model_->file == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        OpLabel(p.index),
        ": a LiteRT DISPATCH_OP's bytecode is a byte range of the model "
        "file, and this model was not loaded from a file; load it with "
        "Runtime::Load(path)"));
  } else {
    const absl::Span<const uint8_t> file = model_->file->span();
    if (options->bytecode_size == 0 || options->bytecode_offset > file.size() ||
        options->bytecode_size > file.size() - options->bytecode_offset) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: bytecode range [%d, %d) lies outside the %d-byte model file "
          "(a truncated file, or corrupted DISPATCH_OP options)",
          OpLabel(p.index), options->bytecode_offset,
          options->bytecode_offset + options->bytecode_size, file.size()));
    }
    module = Bytes::View(
        file.subspan(options->bytecode_offset, options->bytecode_size),
        model_->file);
  }
  // Outputs keep their declared (static) shapes, as for Graft's format.
  UseDeclaredOutputShapes(op);
  DispatchOpOptions graft_options;
  graft_options.vendor = env_->litert_vendor;
  graft_options.entry_point = options->name;
  graft_options.fallback_subgraph = options->fallback_subgraph;
  std::string reason;
  if (!env_->has_litert_stamp) {
    reason =
        "the model was compiled by LiteRT but carries no LiteRtStamp "
        "metadata, so its vendor is unknown and no dispatch library can be "
        "chosen; compile it with a LiteRT tool that stamps models "
        "(apply_plugin_main --soc_manufacturer=... --soc_model=...)";
  } else {
    const std::string prefix =
        absl::StrCat("model compiled by LiteRT for ", env_->litert_vendor, " ",
                     env_->litert_soc_model, ": ");
    DispatchBackend* backend = nullptr;
    for (const auto& [name, b] : env_->backends) {
      if (name == env_->litert_vendor) backend = b;
    }
    for (const auto& [name, b] : env_->backends) {
      if (backend == nullptr && SameLiteRtVendor(name, env_->litert_vendor)) {
        backend = b;
      }
    }
    if (backend == nullptr) {
      reason = absl::StrCat(prefix, env_->litert_missing.empty()
                                        ? std::string("no dispatch backend")
                                        : env_->litert_missing);
    } else {
      const std::string vendor(backend->vendor());
      const ManifestVendor* entry = nullptr;
      if (env_->manifest != nullptr) {
        for (const ManifestVendor& v : env_->manifest->vendors) {
          if (SameLiteRtVendor(v.vendor, env_->litert_vendor)) entry = &v;
        }
      }
      auto checked = env_->vendor_status.find(vendor);
      if (checked == env_->vendor_status.end()) {
        // The modules' hashes were checked at load (runtime.cc).
        absl::Status st = entry != nullptr ? backend->CheckCompatibility(*entry)
                                           : absl::OkStatus();
        checked = env_->vendor_status.emplace(vendor, st).first;
      }
      bool listed = entry == nullptr || entry->modules.empty();
      if (entry != nullptr) {
        for (const ManifestModule& m : entry->modules) {
          if (m.buffer < model_->buffers.size() &&
              model_->buffers[m.buffer].data.data() == module.data() &&
              model_->buffers[m.buffer].data.size() == module.size()) {
            listed = true;
          }
        }
      }
      if (!checked->second.ok()) {
        reason = absl::StrCat(
            prefix, "the manifest check failed: ", checked->second.message());
      } else if (!listed) {
        reason = absl::StrCat(prefix,
                              "its bytecode range is not a module the "
                              "model's graft_manifest lists for ",
                              entry->vendor);
      } else {
        absl::Status st =
            PrepareOnBackend(p, *backend, graft_options, module, entry);
        if (st.ok()) {
          const auto* litert = dynamic_cast<const LiteRtBackend*>(backend);
          p.detail = litert != nullptr
                         ? absl::StrCat("LiteRT vendor ", vendor, " ",
                                        env_->litert_soc_model, " via ",
                                        litert->library().label())
                         : absl::StrCat("LiteRT vendor ", vendor);
          p.profile_name = absl::StrCat(vendor, ":", options->name);
          return absl::OkStatus();
        }
        reason = absl::StrCat(prefix, "vendor '", vendor,
                              "' could not prepare entry point '",
                              options->name, "': ", st.message());
      }
    }
  }
  if (options->fallback_subgraph >=
      static_cast<int32_t>(model_->subgraphs.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: graft_fallback_subgraph %d out of range (%d subgraphs)",
        OpLabel(p.index), options->fallback_subgraph,
        model_->subgraphs.size()));
  }
  return PrepareFallback(
      p, options->fallback_subgraph, reason,
      "; the op has no CPU fallback (LiteRT's tools keep no original ops, "
      "nor does graft apply --cpu-fallback=false)",
      count_cpu_ops);
}

absl::Status SubgraphExecutor::PrepareOnBackend(
    PreparedOp& p, DispatchBackend& backend, const DispatchOpOptions& options,
    Bytes module, const ManifestVendor* entry) {
  const tfl::OperatorT& op = *p.op;
  for (TensorId in : op.inputs) {
    p.in_ptrs.push_back(in >= 0 ? &tensors_[in] : nullptr);
  }
  for (TensorId out : op.outputs) p.out_ptrs.push_back(&tensors_[out]);
  DispatchOpInfo info;
  info.subgraph = id_;
  info.op_index = p.index;
  info.options = &options;
  if (backend.wants_aligned_module()) {
    GRAFT_ASSIGN_OR_RETURN(info.module, AlignedModule(std::move(module)));
  } else {
    info.module = std::move(module);
  }
  info.manifest = entry;
  info.inputs = p.in_ptrs;
  info.outputs = absl::MakeConstSpan(p.out_ptrs.data(), p.out_ptrs.size());
  info.model = model_;
  info.load_id = env_->load_id;
  info.profiling = env_->profiling;
  absl::StatusOr<std::unique_ptr<DispatchExecutable>> exec =
      backend.Prepare(info);
  if (exec.ok() && *exec != nullptr) {
    p.kind = PreparedOp::Kind::kDispatch;
    p.executable = std::move(*exec);
    return absl::OkStatus();
  }
  p.in_ptrs.clear();
  p.out_ptrs.clear();
  return exec.ok() ? absl::InternalError("no executable") : exec.status();
}

absl::Status SubgraphExecutor::PrepareFallback(PreparedOp& p,
                                               int32_t fallback_subgraph,
                                               const std::string& reason,
                                               absl::string_view no_fallback,
                                               bool count_cpu_ops) {
  if (fallback_subgraph < 0) {
    p.kind = PreparedOp::Kind::kMissing;
    p.detail = absl::StrCat(reason, no_fallback);
    return absl::OkStatus();
  }
  p.fallback = true;
  p.detail =
      absl::StrFormat("fallback subgraph %d (%s)", fallback_subgraph, reason);
  return PrepareCallOp(p, fallback_subgraph, count_cpu_ops, "");
}

absl::Status SubgraphExecutor::PlanMemory() {
  const Subgraph& sg = subgraph();
  const int32_t num_steps = static_cast<int32_t>(ops_.size());
  const int32_t kNone = -1;
  const size_t n = tensors_.size();
  std::vector<int32_t> first(n, kNone), last(n, kNone);
  auto touch = [&](TensorId t, int32_t step) {
    if (t < 0) return;
    if (first[t] == kNone || step < first[t]) first[t] = step;
    last[t] = std::max(last[t], step);
  };
  // Steps: 0 = before the first op, op i at i + 1, num_steps + 1 = after.
  // Inputs stay live for the whole run (the caller fills them once and may
  // invoke again), outputs until the end.
  std::vector<bool> io(n, false);
  for (TensorId t : sg.inputs) {
    touch(t, 0);
    touch(t, num_steps + 1);
    io[t] = true;
  }
  for (TensorId t : sg.outputs) {
    touch(t, num_steps + 1);
    io[t] = true;
  }
  // A row pipeline's stages run at its first stage's step; the outputs
  // of all but its last stage live in its band buffers (scratch), not here.
  std::vector<bool> in_bands(n, false);
  for (int32_t i = 0; i < num_steps; ++i) {
    const PreparedOp& p = ops_[i];
    if (p.kind == PreparedOp::Kind::kFolded) continue;
    const int32_t step = (p.pipeline_head >= 0 ? p.pipeline_head : i) + 1;
    for (TensorId t : p.op->inputs) touch(t, step);
    for (TensorId t : p.op->outputs) touch(t, step);
    touch(p.scaled_input, step);
    touch(p.input_scale, step);
    if (!p.pipeline.empty()) {
      in_bands[p.op->outputs[0]] = true;
      for (size_t s = 0; s + 1 < p.pipeline.size(); ++s) {
        in_bands[ops_[p.pipeline[s]].op->outputs[0]] = true;
      }
    }
  }
  auto planned_here = [&](TensorId t) {
    const Tensor& tensor = tensors_[t];
    return tensor.raw_data == nullptr && !tensor.constant &&
           first[t] != kNone && !dynamic_[t] && !(external_io_ && io[t]) &&
           !in_bands[t];
  };
  // A RESHAPE, SQUEEZE or EXPAND_DIMS on the CPU kernels has the same bytes
  // in and out: its output shares its input's buffer (their EvalCopy then
  // copies nothing) when both are planned here, neither is a subgraph input
  // or output, and the sizes match. root[t]: the tensor whose request holds
  // t's bytes, its lifetime widened to the group's. Ops run in order, so an
  // input's root is final when its reshape is reached.
  // A fused op's output (kFused) shares its input's buffer the same way:
  // there the producer's kernel wrote the fused op's result.
  std::vector<TensorId> root(n);
  for (size_t t = 0; t < n; ++t) root[t] = static_cast<TensorId>(t);
  for (int32_t i = 0; i < num_steps; ++i) {
    const PreparedOp& p = ops_[i];
    const bool reshape =
        p.kind == PreparedOp::Kind::kKernel && !p.dynamic &&
        (p.builtin == tfl::BuiltinOperator_RESHAPE ||
         p.builtin == tfl::BuiltinOperator_SQUEEZE ||
         p.builtin == tfl::BuiltinOperator_EXPAND_DIMS);
    const bool fused = p.kind == PreparedOp::Kind::kFused && p.fused_input >= 0;
    if ((!reshape && !fused) || p.op->inputs.empty() ||
        p.op->outputs.size() != 1) {
      continue;
    }
    const TensorId in = p.op->inputs[fused ? p.fused_input : 0];
    const TensorId out = p.op->outputs[0];
    if (!CanShareBuffer(in, out) || !planned_here(in) || !planned_here(out)) {
      if (fused) {  // FuseEpilogues checked the same
        return absl::InternalError(absl::StrCat(
            OpLabel(p.index), ": fused, but its output cannot share its input's buffer"));
      }
      continue;
    }
    const TensorId r = root[in];
    root[out] = r;
    first[r] = std::min(first[r], first[out]);
    last[r] = std::max(last[r], last[out]);
  }
  std::vector<BufferRequest> requests;
  std::vector<TensorId> request_tensor;  // -1 - op index for scratch
  for (size_t t = 0; t < n; ++t) {
    if (root[t] != static_cast<TensorId>(t) ||
        !planned_here(static_cast<TensorId>(t))) {
      continue;
    }
    requests.push_back({tensors_[t].bytes, first[t], last[t]});
    request_tensor.push_back(static_cast<TensorId>(t));
  }
  for (int32_t i = 0; i < num_steps; ++i) {
    if (ops_[i].scratch_bytes == 0) continue;
    requests.push_back({ops_[i].scratch_bytes, i + 1, i + 1});
    request_tensor.push_back(-1 - i);
  }
  GRAFT_ASSIGN_OR_RETURN(MemoryPlan plan, graft::PlanMemory(requests));
  arena_bytes_ = plan.arena_bytes;
  unshared_bytes_ = plan.total_bytes;
  if (arena_bytes_ > 0) {
    arena_.reset(static_cast<uint8_t*>(
        std::aligned_alloc(kArenaAlignment, arena_bytes_)));
    if (arena_ == nullptr) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "subgraph %d: cannot allocate a %d-byte arena", id_, arena_bytes_));
    }
  }
  for (size_t r = 0; r < requests.size(); ++r) {
    uint8_t* ptr =
        requests[r].bytes > 0 ? arena_.get() + plan.offsets[r] : nullptr;
    const TensorId t = request_tensor[r];
    if (t >= 0) {
      tensors_[t].raw_data = ptr;
      planned_[t] = ptr;
    } else {
      ops_[-1 - t].scratch = ptr;
    }
  }
  for (size_t t = 0; t < n; ++t) {
    if (root[t] == static_cast<TensorId>(t)) continue;
    tensors_[t].raw_data = tensors_[root[t]].raw_data;
    planned_[t] = tensors_[t].raw_data;
  }
  // Outputs a caller may bind directly: written by an op here, listed once
  // and of a fixed shape; others are copied after each run.
  output_bindable_.assign(sg.outputs.size(), false);
  std::vector<bool> seen(n, false);
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    const TensorId t = sg.outputs[i];
    bool is_input =
        std::find(sg.inputs.begin(), sg.inputs.end(), t) != sg.inputs.end();
    output_bindable_[i] = written_[t] && !tensors_[t].constant && !is_input &&
                          !seen[t] && !dynamic_[t];
    seen[t] = true;
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::SetInput(TensorId id,
                                        absl::Span<const uint8_t> bytes) {
  Tensor& t = tensors_[id];
  if (t.type == tfl::TensorType_STRING) {
    GRAFT_ASSIGN_OR_RETURN(std::vector<absl::string_view> strings,
                           UnpackStrings(bytes));
    if (static_cast<int64_t>(strings.size()) != t.num_elements()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "STRING input '%s' of shape %s takes %d strings, not %d", t.name,
          ShapeToString(t.shape), t.num_elements(), strings.size()));
    }
    t.raw_data = dynamic_buffers_[id].Reserve(bytes.size());
    if (t.raw_data == nullptr)
      return absl::ResourceExhaustedError("out of memory");
    t.bytes = bytes.size();
  } else if (bytes.size() != t.bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "input '%s' holds %d bytes, %d given", t.name, t.bytes, bytes.size()));
  }
  if (!bytes.empty()) std::memcpy(t.raw_data, bytes.data(), bytes.size());
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::BindInput(TensorId id, void* data,
                                         size_t bytes) {
  Tensor& t = tensors_[id];
  if (t.type == tfl::TensorType_STRING) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "STRING input '%s' is sized by its values: set it with SetInputData",
        t.name));
  }
  if (data == nullptr) {
    t.raw_data = planned_[id];
    return absl::OkStatus();
  }
  if (bytes != t.bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tensor '%s' holds %d bytes, the bound buffer %d",
                        t.name, t.bytes, bytes));
  }
  const size_t align = std::clamp<size_t>(ElementSize(t.type), 1, 8);
  if (reinterpret_cast<uintptr_t>(data) % align != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "buffer for tensor '%s' is not %d-byte aligned", t.name, align));
  }
  if (t.constant) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tensor '%s' is a constant", t.name));
  }
  t.raw_data = static_cast<uint8_t*>(data);
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::BindOutput(TensorId id, void* data,
                                          size_t bytes) {
  const Subgraph& sg = subgraph();
  Tensor& t = tensors_[id];
  if (dynamic_[id]) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "output '%s' gets its shape only at invoke, so it cannot be bound to "
        "a buffer; read it (shape and data) after Invoke",
        t.name));
  }
  output_copies_.erase(
      std::remove_if(output_copies_.begin(), output_copies_.end(),
                     [&](const OutputCopy& c) { return c.tensor == id; }),
      output_copies_.end());
  size_t index =
      std::find(sg.outputs.begin(), sg.outputs.end(), id) - sg.outputs.begin();
  const bool bindable = index < sg.outputs.size() && output_bindable_[index];
  if (data == nullptr) {
    if (bindable) t.raw_data = planned_[id];
    return absl::OkStatus();
  }
  if (bytes != t.bytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tensor '%s' holds %d bytes, the bound buffer %d",
                        t.name, t.bytes, bytes));
  }
  const size_t align = std::clamp<size_t>(ElementSize(t.type), 1, 8);
  if (reinterpret_cast<uintptr_t>(data) % align != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "buffer for tensor '%s' is not %d-byte aligned", t.name, align));
  }
  if (bindable) {
    t.raw_data = static_cast<uint8_t*>(data);
  } else {
    output_copies_.push_back({id, static_cast<uint8_t*>(data)});
  }
  return absl::OkStatus();
}

inline absl::Status SubgraphExecutor::RunOp(PreparedOp& p) {
  absl::Status st;
  switch (p.kind) {
    case PreparedOp::Kind::kFolded:
    case PreparedOp::Kind::kFused:
      return absl::OkStatus();
    case PreparedOp::Kind::kKernel: {
      if (p.dynamic) {
        st = PrepareAtRun(p);
        if (!st.ok()) break;
      }
      if (!p.pipeline.empty()) {
        st = RunRowPipeline(p);
        break;
      }
      EvalContext ctx(*p.op, absl::MakeSpan(tensors_), p.state.get(), p.scratch,
                      env_->pool);
      st = p.fused_consumer < 0
               ? p.eval(ctx)
               : RunWithConsumer(p, ctx, [&] { return p.eval(ctx); });
      break;
    }
    case PreparedOp::Kind::kCall:
      st = p.callees[0]->RunBound();
      break;
    case PreparedOp::Kind::kDispatch:
      // The vendor may run threads of its own: Graft's workers stop polling.
      if (env_->pool != nullptr) env_->pool->Park();
      st = p.executable->Execute(p.in_ptrs, p.out_ptrs);
      break;
    case PreparedOp::Kind::kIf: {
      const Tensor& cond = tensors_[p.op->inputs[0]];
      if (cond.bytes != 1) {  // a condition shaped at invoke
        st = absl::InvalidArgumentError(absl::StrFormat(
            "the condition '%s' has shape %s; IF takes one element", cond.name,
            ShapeToString(cond.shape)));
        break;
      }
      st = p.callees[cond.raw_data[0] != 0 ? 0 : 1]->RunBound();
      break;
    }
    case PreparedOp::Kind::kWhile:
      st = RunWhile(p);
      break;
    case PreparedOp::Kind::kCallOnce:
      // Marked done only once the init subgraph succeeded (as TFLite does).
      if (!env_->call_once_done[p.init]) {
        st = p.callees[0]->RunBound();
        if (st.ok()) env_->call_once_done[p.init] = true;
      }
      break;
    case PreparedOp::Kind::kReadVariable: {
      const ResourceVariable& v = *p.variable;
      if (!v.assigned) {
        st = absl::FailedPreconditionError(absl::StrCat(
            "variable ", ResourceVariables::Name(v),
            " is read before any ASSIGN_VARIABLE gave it a value"));
        break;
      }
      if (v.bytes > 0) {
        std::memcpy(tensors_[p.op->outputs[0]].raw_data, v.data, v.bytes);
      }
      return absl::OkStatus();
    }
    case PreparedOp::Kind::kAssignVariable: {
      ResourceVariable& v = *p.variable;
      const Tensor& value = tensors_[p.op->inputs[1]];
      if (v.bytes > 0 && value.raw_data != v.data) {
        std::memcpy(v.data, value.raw_data, v.bytes);
      }
      v.assigned = true;
      return absl::OkStatus();
    }
    case PreparedOp::Kind::kMissing:
      return absl::FailedPreconditionError(
          absl::StrCat(OpLabel(p.index), ": ", p.detail));
  }
  if (!st.ok()) {
    return absl::Status(st.code(),
                        absl::StrCat(OpLabel(p.index), ": ", st.message()));
  }
  return st;
}

absl::Status SubgraphExecutor::PrepareAtRun(PreparedOp& p) {
  const tfl::OperatorT& op = *p.op;
  if (!p.reads_values && p.prepared_at_run) {
    bool same = true;
    size_t k = 0;
    for (TensorId t : op.inputs) {
      if (t >= 0) same &= tensors_[t].shape == p.prepared_shapes[k++];
    }
    if (same) return absl::OkStatus();
  }
  p.prepared_at_run = false;
  std::vector<std::string> refusals;
  for (const Kernel* kernel : FindKernels(p.builtin)) {
    PrepareContext ctx(op, absl::MakeSpan(tensors_), subgraph().tensors,
                       env_->pool);
    ctx.set_at_run(true);
    absl::Status st = kernel->prepare(ctx);
    if (absl::IsUnimplemented(st)) {
      refusals.emplace_back(st.message());
      continue;
    }
    GRAFT_RETURN_IF_ERROR(st);
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (ctx.deferred() || !ctx.output_shape_set(i)) {
        return absl::InternalError(absl::StrFormat(
            "kernel %s set no shape for output %d at invoke", kernel->name, i));
      }
    }
    p.kernel = kernel;
    p.reads_values |= ctx.reads_values();
    p.eval = ctx.eval() != nullptr ? ctx.eval() : kernel->eval;
    p.state = ctx.TakeState();
    p.reduction_length = ctx.reduction_length();
    p.scratch = p.dynamic_scratch.Reserve(ctx.scratch_bytes());
    bool ok = p.scratch != nullptr;
    for (TensorId out : op.outputs) {
      Tensor& t = tensors_[out];
      t.raw_data = dynamic_buffers_[out].Reserve(t.bytes);
      ok &= t.raw_data != nullptr;
    }
    if (!ok) return absl::ResourceExhaustedError("out of memory");
    p.prepared_shapes.clear();
    for (TensorId t : op.inputs) {
      if (t >= 0) p.prepared_shapes.push_back(tensors_[t].shape);
    }
    p.prepared_at_run = true;
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrJoin(refusals, "; "));
}

void SubgraphExecutor::CopyUnwrittenOutputs() {
  for (const OutputCopy& c : output_copies_) {
    const Tensor& t = tensors_[c.tensor];
    if (t.bytes > 0) std::memcpy(c.dst, t.raw_data, t.bytes);
  }
}

absl::Status SubgraphExecutor::Run() {
  for (TensorId t : string_inputs_) {
    if (tensors_[t].raw_data == nullptr) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "STRING input '%s' has no value: set it with SetInputData",
          tensors_[t].name));
    }
  }
  if (env_->profiling) return RunProfiled();
  for (PreparedOp& p : ops_) GRAFT_RETURN_IF_ERROR(RunOp(p));
  CopyUnwrittenOutputs();
  return absl::OkStatus();
}

void SubgraphExecutor::RecordSpans(PreparedOp& p) {
  if (p.last_spans.empty()) return;
  const int64_t call = static_cast<int64_t>(p.profile_ns.size()) - 1;
  const uint64_t first = p.last_spans.front().start_ns;
  for (const VendorSpan& s : p.last_spans) {
    const int64_t ns = s.end_ns >= s.start_ns
                           ? static_cast<int64_t>(s.end_ns - s.start_ns)
                           : 0;
    auto [it, added] = p.vendor_location_index.emplace(
        s.vendor_location, p.vendor_locations.size());
    if (added) {
      p.vendor_locations.push_back({s.vendor_location, s.name, 0, 0});
    }
    OpProfile::VendorLocation& l = p.vendor_locations[it->second];
    ++l.spans;
    l.total_ns += ns;
    if (call < OpProfile::kMaxTracedCalls && s.start_ns >= first) {
      const auto start = static_cast<int64_t>(s.start_ns - first);
      p.vendor_spans.push_back(
          {call, s.name, s.vendor_location, start, start + ns});
    }
  }
}

absl::Status SubgraphExecutor::RunProfiled() {
  const int64_t run_start = NowNs();
  for (PreparedOp& p : ops_) {
    if (p.kind == PreparedOp::Kind::kFolded ||
        p.kind == PreparedOp::Kind::kFused) {
      continue;
    }
    const int64_t start = NowNs();
    GRAFT_RETURN_IF_ERROR(RunOp(p));
    p.profile_ns.push_back(NowNs() - start);
    p.profile_start_ns.push_back(start);
    if (p.kind == PreparedOp::Kind::kDispatch && p.executable != nullptr) {
      const int64_t vendor_ns = p.executable->LastVendorTimeNs();
      if (vendor_ns >= 0) p.vendor_ns.push_back(vendor_ns);
      if (p.executable->LastVendorSpans(&p.last_spans)) RecordSpans(p);
    }
  }
  CopyUnwrittenOutputs();
  run_start_ns_.push_back(run_start);
  run_ns_.push_back(NowNs() - run_start);
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::RunBound() {
  const Subgraph& sg = subgraph();
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    const TensorId id = sg.inputs[i];
    const Tensor& src = *bound_in_[i];
    Tensor& t = tensors_[id];
    t.raw_data = src.raw_data;
    if (dynamic_[id]) {
      t.shape = src.shape;
      t.bytes = src.bytes;
    }
  }
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    const TensorId id = sg.outputs[i];
    if (dynamic_[id]) continue;  // copied after the run
    const CalleeOutput& o = bound_out_[i];
    if (o.storage != nullptr) {
      // A fixed shape here, into a caller tensor shaped at invoke (this
      // branch's shape, say).
      const Tensor& t = tensors_[id];
      o.tensor->shape = t.shape;
      o.tensor->bytes = t.bytes;
      o.tensor->raw_data = o.storage->Reserve(t.bytes);
      if (o.tensor->raw_data == nullptr) {
        return absl::ResourceExhaustedError("out of memory");
      }
    }
    if (output_bindable_[i]) tensors_[id].raw_data = o.tensor->raw_data;
  }
  GRAFT_RETURN_IF_ERROR(Run());
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    const TensorId id = sg.outputs[i];
    const Tensor& src = tensors_[id];
    const CalleeOutput& o = bound_out_[i];
    if (dynamic_[id]) {
      GRAFT_RETURN_IF_ERROR(CopyTensorTo(src, *o.tensor, *o.storage));
    } else if (!output_bindable_[i] && src.bytes > 0 &&
               src.raw_data != o.tensor->raw_data) {
      std::memcpy(o.tensor->raw_data, src.raw_data, src.bytes);
    }
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::CopyTensorTo(const Tensor& src, Tensor& dst,
                                            DynamicBuffer& storage) {
  dst.shape = src.shape;
  dst.bytes = src.bytes;
  if (src.raw_data != nullptr && src.raw_data == storage.data.get()) {
    dst.raw_data = src.raw_data;  // already there
    return absl::OkStatus();
  }
  dst.raw_data = storage.Reserve(src.bytes);
  if (dst.raw_data == nullptr)
    return absl::ResourceExhaustedError("out of memory");
  if (src.bytes > 0) std::memcpy(dst.raw_data, src.raw_data, src.bytes);
  return absl::OkStatus();
}

// The loop variables live in two sets of tensors: set 0 is the op's
// outputs' storage, set 1 the op's scratch (a dynamic variable: the output's
// dynamic buffer and p.loop_storage). Each iteration the cond and body read
// one set and the body writes the other, so nothing is copied per iteration
// but the outputs the body does not compute (a variable passed through) and
// dynamic ones.
absl::Status SubgraphExecutor::RunWhile(PreparedOp& p) {
  const tfl::OperatorT& op = *p.op;
  const size_t n = op.inputs.size();
  SubgraphExecutor& cond = *p.callees[0];
  SubgraphExecutor& body = *p.callees[1];
  for (size_t i = 0; i < n; ++i) {
    const Tensor& in = tensors_[op.inputs[i]];
    Tensor& out = tensors_[op.outputs[i]];
    if (p.loop_dynamic[i]) {
      GRAFT_RETURN_IF_ERROR(
          CopyTensorTo(in, p.loop_vars[0][i], dynamic_buffers_[op.outputs[i]]));
      continue;
    }
    if (out.bytes > 0 && out.raw_data != in.raw_data) {
      std::memcpy(out.raw_data, in.raw_data, out.bytes);
    }
    p.loop_vars[0][i].raw_data = out.raw_data;
    p.loop_vars[1][i].raw_data = p.scratch + p.loop_offsets[i];
  }
  int cur = 0;
  for (;;) {
    for (size_t i = 0; i < n; ++i) cond.bound_in_[i] = &p.loop_vars[cur][i];
    GRAFT_RETURN_IF_ERROR(cond.RunBound());
    if (p.cond_value.bytes != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cond subgraph %d yields shape %s; WHILE takes one BOOL", cond.id(),
          ShapeToString(p.cond_value.shape)));
    }
    if (p.cond_value.raw_data[0] == 0) break;
    for (size_t i = 0; i < n; ++i) {
      body.bound_in_[i] = &p.loop_vars[cur][i];
      DynamicBuffer* storage = nullptr;
      if (p.loop_dynamic[i]) {
        storage =
            cur == 1 ? &dynamic_buffers_[op.outputs[i]] : &p.loop_storage[i];
      }
      body.bound_out_[i] = {&p.loop_vars[1 - cur][i], storage};
    }
    GRAFT_RETURN_IF_ERROR(body.RunBound());
    cur = 1 - cur;
  }
  for (size_t i = 0; i < n; ++i) {
    Tensor& out = tensors_[op.outputs[i]];
    const Tensor& last = p.loop_vars[cur][i];
    if (p.loop_dynamic[i]) {
      GRAFT_RETURN_IF_ERROR(
          CopyTensorTo(last, out, dynamic_buffers_[op.outputs[i]]));
    } else if (cur == 1 && out.bytes > 0) {
      std::memcpy(out.raw_data, last.raw_data, out.bytes);
    }
  }
  return absl::OkStatus();
}

OpReport::Where SubgraphExecutor::WhereOf(const PreparedOp& p) {
  switch (p.kind) {
    case PreparedOp::Kind::kKernel:
      return OpReport::Where::kCpu;
    case PreparedOp::Kind::kFolded:
      return OpReport::Where::kFolded;
    case PreparedOp::Kind::kCall:
      return p.fallback ? OpReport::Where::kFallback : OpReport::Where::kCall;
    case PreparedOp::Kind::kDispatch:
      return OpReport::Where::kVendor;
    case PreparedOp::Kind::kIf:
    case PreparedOp::Kind::kWhile:
    case PreparedOp::Kind::kCallOnce:
      return OpReport::Where::kCall;
    case PreparedOp::Kind::kReadVariable:
    case PreparedOp::Kind::kAssignVariable:
    case PreparedOp::Kind::kFused:
      return OpReport::Where::kCpu;
    case PreparedOp::Kind::kMissing:
      break;
  }
  return OpReport::Where::kMissing;
}

SubgraphReport SubgraphExecutor::Report() const {
  SubgraphReport r;
  r.subgraph = id_;
  r.name = subgraph().name;
  r.arena_bytes = arena_bytes_;
  r.unshared_bytes = unshared_bytes_;
  for (const PreparedOp& p : ops_) {
    OpReport o;
    o.op_index = p.index;
    o.op_name = p.name;
    o.detail = p.detail;
    o.reduction_length = p.reduction_length;
    o.where = WhereOf(p);
    if (p.kind != PreparedOp::Kind::kMissing) {
      for (const auto& c : p.callees) o.callee.push_back(c->Report());
    }
    r.ops.push_back(std::move(o));
  }
  return r;
}

void SubgraphExecutor::AppendProfile(int depth,
                                     std::vector<OpProfile>* out) const {
  for (const PreparedOp& p : ops_) {
    if (p.kind == PreparedOp::Kind::kFolded ||
        p.kind == PreparedOp::Kind::kFused) {
      continue;
    }
    OpProfile o;
    o.subgraph = id_;
    o.op_index = p.index;
    o.name = p.profile_name;
    o.where = WhereOf(p);
    o.detail = p.detail;
    o.depth = depth;
    o.calls = static_cast<int64_t>(p.profile_ns.size());
    o.total_ns = Sum(p.profile_ns);
    o.median_ns = Median(p.profile_ns);
    if (!p.vendor_ns.empty()) {
      o.vendor_total_ns = Sum(p.vendor_ns);
      o.vendor_median_ns = Median(p.vendor_ns);
    }
    o.call_start_ns = p.profile_start_ns;
    o.call_ns = p.profile_ns;
    o.vendor_locations = p.vendor_locations;
    o.vendor_spans = p.vendor_spans;
    out->push_back(std::move(o));
    for (const auto& c : p.callees) c->AppendProfile(depth + 1, out);
  }
}

SubgraphProfile SubgraphExecutor::Profile() const {
  SubgraphProfile r;
  r.subgraph = id_;
  r.name = subgraph().name;
  r.runs = static_cast<int64_t>(run_ns_.size());
  r.total_ns = Sum(run_ns_);
  r.median_ns = Median(run_ns_);
  r.run_start_ns = run_start_ns_;
  r.run_ns = run_ns_;
  AppendProfile(0, &r.ops);
  return r;
}

void SubgraphExecutor::ResetProfile() {
  run_ns_.clear();
  run_start_ns_.clear();
  for (PreparedOp& p : ops_) {
    p.profile_ns.clear();
    p.profile_start_ns.clear();
    p.vendor_ns.clear();
    p.vendor_locations.clear();
    p.vendor_location_index.clear();
    p.vendor_spans.clear();
    for (const auto& c : p.callees) c->ResetProfile();
  }
}

}  // namespace graft
