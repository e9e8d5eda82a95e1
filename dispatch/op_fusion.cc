// SubgraphExecutor's op fusion (FuseEpilogues): a HARD_SWISH into the
// kernel producing its input, a per-channel MUL into the convolution
// reading its output, a piecewise consumer (a residual ADD) into the
// kernel producing its last-computed input; and the run of a kernel with
// its fused consumer (RunWithConsumer).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/status.h"
#include "dispatch/prepared_op.h"
#include "dispatch/subgraph_executor.h"

namespace graft {

bool SubgraphExecutor::CanShareBuffer(TensorId in, TensorId out) const {
  const Subgraph& sg = subgraph();
  auto planned = [&](TensorId t) {
    const Tensor& tensor = tensors_[t];
    return tensor.raw_data == nullptr && !tensor.constant && !dynamic_[t] &&
           tensor.type != tfl::TensorType_STRING &&
           std::find(sg.inputs.begin(), sg.inputs.end(), t) ==
               sg.inputs.end() &&
           std::find(sg.outputs.begin(), sg.outputs.end(), t) ==
               sg.outputs.end();
  };
  return in >= 0 && out >= 0 && planned(in) && planned(out) &&
         tensors_[in].bytes == tensors_[out].bytes;
}

void SubgraphExecutor::FuseEpilogues() {
  // Marks `fused` as run inside `host`, for the report and the profile.
  auto fuse = [](PreparedOp& fused, PreparedOp& host, absl::string_view how,
                 absl::string_view role) {
    fused.kind = PreparedOp::Kind::kFused;
    fused.scratch_bytes = 0;
    fused.detail =
        absl::StrFormat("fused into op %d (%s)%s", host.index, host.name, how);
    absl::StrAppend(&host.detail, absl::StrFormat(" + %s%s of op %d", role,
                                                  fused.name, fused.index));
    absl::StrAppend(&host.profile_name, "+", fused.name);
  };
  const size_t n = tensors_.size();
  // Per tensor: how many op inputs read it, and the op writing it.
  std::vector<int32_t> reads(n, 0);
  std::vector<OpId> producer(n, -1);
  for (const PreparedOp& p : ops_) {
    for (TensorId t : p.op->inputs) {
      if (t >= 0) ++reads[t];
    }
    for (TensorId t : p.op->outputs) {
      if (t >= 0) producer[t] = p.index;
    }
  }
  for (PreparedOp& c : ops_) {
    if (c.kind != PreparedOp::Kind::kKernel || c.dynamic ||
        c.builtin != tfl::BuiltinOperator_HARD_SWISH ||
        c.op->inputs.size() != 1 || c.op->outputs.size() != 1) {
      continue;
    }
    const TensorId in = c.op->inputs[0], out = c.op->outputs[0];
    if (!CanShareBuffer(in, out) || reads[in] != 1 || producer[in] < 0 ||
        tensors_[in].type != tfl::TensorType_FLOAT32) {
      continue;
    }
    PreparedOp& p = ops_[producer[in]];
    if (p.kind != PreparedOp::Kind::kKernel || p.dynamic ||
        p.state == nullptr || p.op->outputs.size() != 1 ||
        !p.state->AppendEpilogue(EpilogueOp::kHardSwish)) {
      continue;
    }
    c.state.reset();
    fuse(c, p, "", "");
  }
  // A MUL by a per-channel vector whose only reader is the next op's input
  // 0: into that op (a 1x1 convolution scales its weights instead).
  for (PreparedOp& m : ops_) {
    if (m.kind != PreparedOp::Kind::kKernel || m.dynamic ||
        m.builtin != tfl::BuiltinOperator_MUL || m.op->inputs.size() != 2 ||
        m.op->outputs.size() != 1 ||
        static_cast<size_t>(m.index) + 1 >= ops_.size()) {
      continue;
    }
    const auto* options = m.op->builtin_options.AsMulOptions();
    if (options != nullptr && options->fused_activation_function !=
                                  tfl::ActivationFunctionType_NONE) {
      continue;
    }
    const TensorId out = m.op->outputs[0];
    PreparedOp& c = ops_[m.index + 1];
    if (out < 0 || reads[out] != 1 || dynamic_[out] ||
        tensors_[out].type != tfl::TensorType_FLOAT32 ||
        c.kind != PreparedOp::Kind::kKernel || c.dynamic ||
        c.state == nullptr || c.op->inputs.empty() || c.op->inputs[0] != out) {
      continue;
    }
    const Subgraph& sg = subgraph();
    if (std::find(sg.outputs.begin(), sg.outputs.end(), out) !=
        sg.outputs.end()) {
      continue;
    }
    // Which input is x (the output's shape) and which the scale (the last
    // dim's length, every other dim 1).
    const Shape& shape = tensors_[out].shape;
    auto per_channel = [&](TensorId t) {
      const Shape& v = tensors_[t].shape;
      if (shape.empty() || v.empty() || v.size() > shape.size() ||
          v.back() != shape.back()) {
        return false;
      }
      return std::all_of(v.begin(), v.end() - 1,
                         [](int32_t d) { return d == 1; });
    };
    const TensorId a = m.op->inputs[0], b = m.op->inputs[1];
    if (a < 0 || b < 0 || a == b || dynamic_[a] || dynamic_[b]) continue;
    TensorId x = -1, scale = -1;
    if (tensors_[a].shape == shape && per_channel(b)) {
      x = a, scale = b;
    } else if (tensors_[b].shape == shape && per_channel(a)) {
      x = b, scale = a;
    } else {
      continue;
    }
    size_t extra_scratch = 0;
    if (!c.state->AbsorbInputScale(&tensors_[x], &tensors_[scale],
                                   &extra_scratch)) {
      continue;
    }
    c.scaled_input = x;
    c.input_scale = scale;
    c.scratch_bytes += extra_scratch;
    m.fused_input = -1;
    m.state.reset();
    fuse(m, c, ", its per-channel scale applied to that op's weights",
         "input ");
  }
  // Piecewise consumers (a residual ADD): into the producer of the input
  // computed last, when every other input is ready before that producer
  // runs. The consumer keeps its state (the producer's eval runs it).
  for (PreparedOp& c : ops_) {
    if (c.kind != PreparedOp::Kind::kKernel || c.dynamic ||
        c.range_eval == nullptr || c.op->outputs.size() != 1) {
      continue;
    }
    int fused_input = -1;
    OpId latest = -1;
    bool dynamic_input = false;
    for (size_t i = 0; i < c.op->inputs.size(); ++i) {
      const TensorId t = c.op->inputs[i];
      if (t < 0) continue;
      dynamic_input = dynamic_input || dynamic_[t];
      if (producer[t] > latest) {
        latest = producer[t];
        fused_input = static_cast<int>(i);
      }
    }
    if (dynamic_input || fused_input < 0) continue;
    const TensorId in = c.op->inputs[fused_input], out = c.op->outputs[0];
    // Read by this op alone, once (not ADD(x, x)), and its buffer can
    // become the output's.
    if (!CanShareBuffer(in, out) || reads[in] != 1) continue;
    PreparedOp& p = ops_[latest];
    if (p.kind != PreparedOp::Kind::kKernel || p.dynamic ||
        !p.reports_output_ready || p.fused_consumer >= 0 ||
        p.op->outputs.size() != 1) {
      continue;
    }
    c.kind = PreparedOp::Kind::kFused;
    c.fused_input = fused_input;
    p.fused_consumer = c.index;
    p.num_report_counters =
        env_->pool != nullptr ? env_->pool->num_threads() : 1;
    p.report_counters.reset(
        new EvalContext::ReportCounter[p.num_report_counters]);
    fuse(c, p, ", run on its output rows as they are written", "");
  }
}

absl::Status SubgraphExecutor::RunWithConsumer(
    PreparedOp& p, EvalContext& ctx, absl::FunctionRef<absl::Status()> run) {
  const PreparedOp& c = ops_[p.fused_consumer];
  EvalContext consumer_ctx(*c.op, absl::MakeSpan(tensors_), c.state.get(),
                           nullptr, nullptr);
  EvalContext::FusedConsumer consumer;
  consumer.fn = c.range_eval;
  consumer.ctx = &consumer_ctx;
  consumer.counters = p.report_counters.get();
  consumer.num_counters = p.num_report_counters;
  for (int i = 0; i < p.num_report_counters; ++i) {
    p.report_counters[i].elements.store(0, std::memory_order_relaxed);
  }
  ctx.set_consumer(&consumer);
  GRAFT_RETURN_IF_ERROR(run());
  // A kernel that reported less than its whole output left the fused op's
  // result partly unwritten: an error, never a silently wrong output. (The
  // pool's loop end orders the workers' counts before these loads.)
  const int64_t want = tensors_[p.op->outputs[0]].num_elements();
  int64_t got = 0;
  for (int i = 0; i < p.num_report_counters; ++i) {
    got += p.report_counters[i].elements.load(std::memory_order_relaxed);
  }
  if (got != want) {
    return absl::InternalError(absl::StrFormat(
        "%s: kernel %s reported %d of its %d output elements to the %s fused "
        "into it (%s)",
        OpLabel(p.index), p.kernel->name, got, want, c.name, OpLabel(c.index)));
  }
  return absl::OkStatus();
}

}  // namespace graft
