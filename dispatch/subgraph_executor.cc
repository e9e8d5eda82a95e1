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
#include "core/status.h"
#include "dispatch/memory_planner.h"

namespace graft {
namespace {

// Calls nest (composite decompositions, fallbacks); a cycle in a malformed
// model must not recurse forever.
constexpr int kMaxCallDepth = 16;

bool IsControlFlow(tfl::BuiltinOperator op) {
  return op == tfl::BuiltinOperator_WHILE || op == tfl::BuiltinOperator_IF ||
         op == tfl::BuiltinOperator_CALL_ONCE ||
         op == tfl::BuiltinOperator_CALL;
}

size_t AlignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

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

struct SubgraphExecutor::PreparedOp {
  enum class Kind { kKernel, kFolded, kCall, kDispatch, kMissing };
  Kind kind = Kind::kMissing;
  OpId index = 0;
  const tfl::OperatorT* op = nullptr;
  std::string name;
  // kKernel
  const Kernel* kernel = nullptr;
  EvalFn eval = nullptr;
  std::unique_ptr<KernelState> state;
  size_t scratch_bytes = 0;
  uint8_t* scratch = nullptr;
  int64_t reduction_length = 0;
  // kCall (composite decomposition or dispatch fallback)
  std::unique_ptr<SubgraphExecutor> callee;
  bool fallback = false;
  // kDispatch
  std::unique_ptr<DispatchExecutable> executable;
  std::vector<const Tensor*> in_ptrs;
  std::vector<Tensor*> out_ptrs;
  // For the report.
  std::string detail;
  // For the profile: the name shown, and each profiled call's time (ns).
  std::string profile_name;
  std::vector<int64_t> profile_ns;
  // kDispatch: the vendor's own time of each profiled call, when it tells.
  std::vector<int64_t> vendor_ns;
};

void SubgraphExecutor::FreeDeleter::operator()(uint8_t* p) const {
  std::free(p);
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
    LoadEnv* env, SubgraphId id, const std::vector<Shape>* input_shapes,
    bool external_io, bool count_cpu_ops, int depth) {
  const Model& model = *env->model;
  if (id < 0 || id >= static_cast<SubgraphId>(model.subgraphs.size())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("subgraph %d does not exist", id));
  }
  if (depth > kMaxCallDepth) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "subgraph %d: calls nest deeper than %d (a cycle?)", id,
        kMaxCallDepth));
  }
  std::unique_ptr<SubgraphExecutor> e(new SubgraphExecutor(env, id, depth));
  e->external_io_ = external_io;
  GRAFT_RETURN_IF_ERROR(e->InitTensors(input_shapes));
  GRAFT_RETURN_IF_ERROR(e->PrepareOps(count_cpu_ops));
  GRAFT_RETURN_IF_ERROR(e->PlanMemory());
  return e;
}

absl::Status SubgraphExecutor::InitTensors(
    const std::vector<Shape>* input_shapes) {
  const Subgraph& sg = subgraph();
  const size_t n = sg.tensors.size();
  tensors_.resize(n);
  planned_.assign(n, nullptr);
  written_.assign(n, false);
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
    t.bytes = static_cast<size_t>(NumElements(t.shape)) * elem;
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
  // Variables (e.g. recurrent state) persist across invokes: own storage,
  // initialized from the buffer when there is one.
  for (size_t i = 0; i < n; ++i) {
    if (!sg.tensors[i].is_variable) continue;
    Tensor& t = tensors_[i];
    const uint8_t* init = t.constant ? t.raw_data : nullptr;
    uint8_t* storage = AllocateOwned(t.bytes);
    if (storage == nullptr) return absl::ResourceExhaustedError("out of memory");
    if (init != nullptr) std::memcpy(storage, init, t.bytes);
    t.raw_data = storage;
    t.constant = false;
  }
  if (input_shapes != nullptr) {
    if (input_shapes->size() != sg.inputs.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "subgraph %d takes %d inputs, the caller passes %d", id_,
          sg.inputs.size(), input_shapes->size()));
    }
    for (size_t i = 0; i < sg.inputs.size(); ++i) {
      Tensor& t = tensors_[sg.inputs[i]];
      t.shape = (*input_shapes)[i];
      t.bytes = static_cast<size_t>(NumElements(t.shape)) * ElementSize(t.type);
    }
  }
  return absl::OkStatus();
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
    for (TensorId t : op.outputs) {
      if (t < 0 || t >= static_cast<TensorId>(tensors_.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpLabel(p.index), ": output tensor out of range"));
      }
      if (tensors_[t].constant) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: output tensor %d ('%s') is a constant", OpLabel(p.index), t,
            tensors_[t].name));
      }
      written_[t] = true;
    }
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
    absl::Status st;
    if (builtin == tfl::BuiltinOperator_CUSTOM) {
      if (code.custom_code == kDispatchCustomCode) {
        st = PrepareDispatchOp(p, count_cpu_ops);
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
    } else if (IsControlFlow(builtin)) {
      p.kind = PreparedOp::Kind::kMissing;
      p.detail =
          "control flow is not supported yet (TODO(dispatch runtime issue))";
    } else {
      st = PrepareKernelOp(p, builtin, count_cpu_ops);
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
                                               tfl::BuiltinOperator builtin,
                                               bool count_cpu_ops) {
  const tfl::OperatorT& op = *p.op;
  absl::Span<const Kernel* const> kernels = FindKernels(builtin);
  if (kernels.empty()) {
    p.kind = PreparedOp::Kind::kMissing;
    p.detail = absl::StrCat("no CPU kernel for ", p.name,
                            " in this build");
    return absl::OkStatus();
  }
  std::string first_refusal;
  for (const Kernel* kernel : kernels) {
    PrepareContext ctx(op, absl::MakeSpan(tensors_), subgraph().tensors,
                       env_->pool);
    absl::Status st = kernel->prepare(ctx);
    if (absl::IsUnimplemented(st)) {
      if (first_refusal.empty()) first_refusal = std::string(st.message());
      continue;
    }
    if (!st.ok()) {
      return absl::Status(st.code(),
                          absl::StrCat(OpLabel(p.index), ": ", st.message()));
    }
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      if (!ctx.output_shape_set(i)) {
        return absl::InternalError(absl::StrFormat(
            "%s: kernel %s set no shape for output %d", OpLabel(p.index),
            kernel->name, i));
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
  p.detail = first_refusal;
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
    if (scratch == nullptr) return absl::ResourceExhaustedError("out of memory");
  }
  EvalContext ctx(op, absl::MakeSpan(tensors_), p.state.get(), scratch.get(),
                  env_->pool);
  absl::Status st = p.eval(ctx);
  if (!st.ok()) {
    return absl::Status(st.code(), absl::StrCat(OpLabel(p.index),
                                                " (folded at load): ",
                                                st.message()));
  }
  for (TensorId out : op.outputs) tensors_[out].constant = true;
  p.kind = PreparedOp::Kind::kFolded;
  p.state.reset();
  p.scratch_bytes = 0;
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::PrepareCallOp(PreparedOp& p, SubgraphId callee,
                                             bool count_cpu_ops,
                                             const std::string& why) {
  const tfl::OperatorT& op = *p.op;
  std::vector<Shape> shapes;
  for (TensorId in : op.inputs) {
    if (in < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          OpLabel(p.index), ": a call cannot take an omitted input"));
    }
    shapes.push_back(tensors_[in].shape);
  }
  GRAFT_ASSIGN_OR_RETURN(
      p.callee, Create(env_, callee, &shapes, /*external_io=*/true,
                       /*count_cpu_ops=*/false, depth_ + 1));
  const Subgraph& cs = p.callee->subgraph();
  if (cs.outputs.size() != op.outputs.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: subgraph %d has %d outputs, the op %d", OpLabel(p.index), callee,
        cs.outputs.size(), op.outputs.size()));
  }
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    if (p.callee->tensor(cs.inputs[i])->type != tensors_[op.inputs[i]].type) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: input %d is %s, subgraph %d expects %s", OpLabel(p.index), i,
          TensorTypeName(tensors_[op.inputs[i]].type), callee,
          TensorTypeName(p.callee->tensor(cs.inputs[i])->type)));
    }
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor* src = p.callee->tensor(cs.outputs[i]);
    Tensor& dst = tensors_[op.outputs[i]];
    if (src->type != dst.type) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: output %d is %s, subgraph %d yields %s", OpLabel(p.index), i,
          TensorTypeName(dst.type), callee, TensorTypeName(src->type)));
    }
    dst.shape = src->shape;
    dst.bytes = src->bytes;
  }
  p.kind = PreparedOp::Kind::kCall;
  if (p.detail.empty()) p.detail = absl::StrFormat("%s, subgraph %d", why, callee);
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
    return absl::InvalidArgumentError(
        absl::StrCat(OpLabel(p.index), ": bad dispatch op options: ",
                     options.status().message()));
  }
  const std::string& vendor = options->vendor;
  // Dispatch outputs keep their declared (static) shapes: the compiled
  // module was built for them.
  UseDeclaredOutputShapes(op);
  std::string reason;
  auto it = env_->backends.find(vendor);
  if (it == env_->backends.end()) {
    reason = absl::StrCat("no dispatch backend for vendor '", vendor, "'");
  } else {
    DispatchBackend* backend = it->second;
    const ManifestVendor* entry =
        env_->manifest ? env_->manifest->Find(vendor) : nullptr;
    auto checked = env_->vendor_status.find(vendor);
    if (checked == env_->vendor_status.end()) {
      absl::Status st = entry ? backend->CheckCompatibility(*entry)
                              : absl::OkStatus();
      checked = env_->vendor_status.emplace(vendor, st).first;
    }
    if (!checked->second.ok()) {
      reason = absl::StrCat("vendor '", vendor, "' rejected the model: ",
                            checked->second.message());
    } else if (options->module_buffer >= model_->buffers.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: module buffer %d out of range", OpLabel(p.index),
          options->module_buffer));
    } else {
      for (TensorId in : op.inputs) {
        p.in_ptrs.push_back(in >= 0 ? &tensors_[in] : nullptr);
      }
      for (TensorId out : op.outputs) p.out_ptrs.push_back(&tensors_[out]);
      DispatchOpInfo info;
      info.subgraph = id_;
      info.op_index = p.index;
      info.options = &*options;
      info.module = model_->buffers[options->module_buffer].data;
      info.manifest = entry;
      info.inputs = p.in_ptrs;
      info.outputs = absl::MakeConstSpan(p.out_ptrs.data(), p.out_ptrs.size());
      info.model = model_;
      info.profiling = env_->profiling;
      absl::StatusOr<std::unique_ptr<DispatchExecutable>> exec =
          backend->Prepare(info);
      if (exec.ok() && *exec != nullptr) {
        p.kind = PreparedOp::Kind::kDispatch;
        p.executable = std::move(*exec);
        p.detail = vendor;
        p.profile_name = absl::StrCat(vendor, ":", options->entry_point);
        return absl::OkStatus();
      }
      reason = absl::StrCat(
          "vendor '", vendor, "' could not prepare it: ",
          exec.ok() ? "no executable" : exec.status().message());
      p.in_ptrs.clear();
      p.out_ptrs.clear();
    }
  }
  if (options->fallback_subgraph < 0) {
    p.kind = PreparedOp::Kind::kMissing;
    p.detail = absl::StrCat(reason, ", and the op has no fallback subgraph");
    return absl::OkStatus();
  }
  p.fallback = true;
  p.detail = absl::StrFormat("fallback subgraph %d (%s)",
                             options->fallback_subgraph, reason);
  return PrepareCallOp(p, options->fallback_subgraph, count_cpu_ops, "");
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
  for (int32_t i = 0; i < num_steps; ++i) {
    const PreparedOp& p = ops_[i];
    if (p.kind == PreparedOp::Kind::kFolded) continue;
    for (TensorId t : p.op->inputs) touch(t, i + 1);
    for (TensorId t : p.op->outputs) touch(t, i + 1);
  }
  std::vector<BufferRequest> requests;
  std::vector<TensorId> request_tensor;  // -1 - op index for scratch
  for (size_t t = 0; t < n; ++t) {
    const Tensor& tensor = tensors_[t];
    if (tensor.raw_data != nullptr || tensor.constant || first[t] == kNone) {
      continue;
    }
    if (external_io_ && io[t]) continue;
    requests.push_back({tensor.bytes, first[t], last[t]});
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
    uint8_t* ptr = requests[r].bytes > 0 ? arena_.get() + plan.offsets[r]
                                         : nullptr;
    const TensorId t = request_tensor[r];
    if (t >= 0) {
      tensors_[t].raw_data = ptr;
      planned_[t] = ptr;
    } else {
      ops_[-1 - t].scratch = ptr;
    }
  }
  // Outputs a caller may bind directly: written by an op here and listed
  // once; others are copied after each run.
  output_bindable_.assign(sg.outputs.size(), false);
  std::vector<bool> seen(n, false);
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    const TensorId t = sg.outputs[i];
    bool is_input = std::find(sg.inputs.begin(), sg.inputs.end(), t) !=
                    sg.inputs.end();
    output_bindable_[i] =
        written_[t] && !tensors_[t].constant && !is_input && !seen[t];
    seen[t] = true;
  }
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::BindInput(TensorId id, void* data,
                                         size_t bytes) {
  Tensor& t = tensors_[id];
  if (data == nullptr) {
    t.raw_data = planned_[id];
    return absl::OkStatus();
  }
  if (bytes != t.bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensor '%s' holds %d bytes, the bound buffer %d", t.name, t.bytes,
        bytes));
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
  output_copies_.erase(
      std::remove_if(output_copies_.begin(), output_copies_.end(),
                     [&](const OutputCopy& c) { return c.tensor == id; }),
      output_copies_.end());
  size_t index = std::find(sg.outputs.begin(), sg.outputs.end(), id) -
                 sg.outputs.begin();
  const bool bindable =
      index < sg.outputs.size() && output_bindable_[index];
  if (data == nullptr) {
    if (bindable) t.raw_data = planned_[id];
    return absl::OkStatus();
  }
  if (bytes != t.bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensor '%s' holds %d bytes, the bound buffer %d", t.name, t.bytes,
        bytes));
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
      return absl::OkStatus();
    case PreparedOp::Kind::kKernel: {
      EvalContext ctx(*p.op, absl::MakeSpan(tensors_), p.state.get(), p.scratch,
                      env_->pool);
      st = p.eval(ctx);
      break;
    }
    case PreparedOp::Kind::kCall:
      st = p.callee->RunAsCallee(absl::MakeSpan(tensors_), *p.op);
      break;
    case PreparedOp::Kind::kDispatch:
      st = p.executable->Execute(p.in_ptrs, p.out_ptrs);
      break;
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

void SubgraphExecutor::CopyUnwrittenOutputs() {
  for (const OutputCopy& c : output_copies_) {
    const Tensor& t = tensors_[c.tensor];
    if (t.bytes > 0) std::memcpy(c.dst, t.raw_data, t.bytes);
  }
}

absl::Status SubgraphExecutor::Run() {
  if (env_->profiling) return RunProfiled();
  for (PreparedOp& p : ops_) GRAFT_RETURN_IF_ERROR(RunOp(p));
  CopyUnwrittenOutputs();
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::RunProfiled() {
  const int64_t run_start = NowNs();
  for (PreparedOp& p : ops_) {
    if (p.kind == PreparedOp::Kind::kFolded) continue;
    const int64_t start = NowNs();
    GRAFT_RETURN_IF_ERROR(RunOp(p));
    p.profile_ns.push_back(NowNs() - start);
    if (p.kind == PreparedOp::Kind::kDispatch) {
      const int64_t vendor_ns = p.executable->LastVendorTimeNs();
      if (vendor_ns >= 0) p.vendor_ns.push_back(vendor_ns);
    }
  }
  CopyUnwrittenOutputs();
  run_ns_.push_back(NowNs() - run_start);
  return absl::OkStatus();
}

absl::Status SubgraphExecutor::RunAsCallee(absl::Span<Tensor> caller,
                                           const tfl::OperatorT& op) {
  const Subgraph& sg = subgraph();
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    tensors_[sg.inputs[i]].raw_data = caller[op.inputs[i]].raw_data;
  }
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    if (output_bindable_[i]) {
      tensors_[sg.outputs[i]].raw_data = caller[op.outputs[i]].raw_data;
    }
  }
  GRAFT_RETURN_IF_ERROR(Run());
  for (size_t i = 0; i < sg.outputs.size(); ++i) {
    if (output_bindable_[i]) continue;
    const Tensor& src = tensors_[sg.outputs[i]];
    Tensor& dst = caller[op.outputs[i]];
    if (src.bytes > 0 && src.raw_data != dst.raw_data) {
      std::memcpy(dst.raw_data, src.raw_data, src.bytes);
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
    if (p.kind == PreparedOp::Kind::kCall) {
      o.callee.push_back(p.callee->Report());
    }
    r.ops.push_back(std::move(o));
  }
  return r;
}

void SubgraphExecutor::AppendProfile(int depth,
                                     std::vector<OpProfile>* out) const {
  for (const PreparedOp& p : ops_) {
    if (p.kind == PreparedOp::Kind::kFolded) continue;
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
    out->push_back(std::move(o));
    if (p.kind == PreparedOp::Kind::kCall) {
      p.callee->AppendProfile(depth + 1, out);
    }
  }
}

SubgraphProfile SubgraphExecutor::Profile() const {
  SubgraphProfile r;
  r.subgraph = id_;
  r.name = subgraph().name;
  r.runs = static_cast<int64_t>(run_ns_.size());
  r.total_ns = Sum(run_ns_);
  r.median_ns = Median(run_ns_);
  AppendProfile(0, &r.ops);
  return r;
}

void SubgraphExecutor::ResetProfile() {
  run_ns_.clear();
  for (PreparedOp& p : ops_) {
    p.profile_ns.clear();
    p.vendor_ns.clear();
    if (p.callee != nullptr) p.callee->ResetProfile();
  }
}

}  // namespace graft
