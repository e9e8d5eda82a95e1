// LSTM (the full kernel, one step) and UNIDIRECTIONAL_SEQUENCE_LSTM, float32,
// with TFLite's semantics (lstm_eval's float step):
//
//   gate_g = act_g(LN_g(W_g x + R_g h + P_g . c) + b_g)   g in {i, f, z, o}
//   c' = clip(f . c + i . z, cell_clip)     CIFG (no input gate): i = 1 - f
//   h' = clip(W_proj (o . act(c')) + b_proj, proj_clip)   or o . act(c')
//
// where act_i = act_f = act_o = sigmoid, act_z and act are the op's fused
// activation (TANH in converter output), P_g are the optional peephole
// weights (the output gate's peephole reads the new cell state c'), and LN_g
// the optional layer normalization (mean/stddev over the cell, epsilon 1e-8,
// times its coefficients; the bias is then added after it instead of
// before). Optional tensors are absent (-1): the input gate's four (CIFG),
// the peepholes, the projection weights and bias, the layer-norm
// coefficients (20-input form). The states (inputs 18 and 19, variable
// tensors) are read and updated in place, so they carry across invokes.
//
// UNIDIRECTIONAL_SEQUENCE_LSTM runs the step over the time axis of a
// [batch, time, input] input ([time, batch, input] when time_major); its
// output has the same layout with `output` features.
//
// Work: the input contribution W x of every time step is one GEMM over all
// steps and gates (gemm.h, weights packed at prepare), the recurrent one a
// GEMM per step over the batch. Weights must be constant float32; hybrid
// (int8 weights) and integer LSTMs are refused at load.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dispatch/kernels/gemm.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/lstm_shared.h"
#include "dispatch/kernels/vector_math.h"

namespace graft {
namespace kernels {
namespace {

struct LstmState : KernelState {
  int64_t batch = 0, steps = 0, n_input = 0, n_cell = 0, n_output = 0;
  bool time_major = true;  // row of (batch b, step t) in input and output
  bool cifg = false, peephole = false, layer_norm = false;
  bool projection = false;
  float cell_clip = 0, proj_clip = 0;
  tfl::ActivationFunctionType activation = tfl::ActivationFunctionType_TANH;
  // The gates present (kF, kZ, kO, and kI unless CIFG) and each one's column
  // offset in the gate rows below (-1 when absent).
  int num_gates = 0;
  int64_t gate_col[4] = {-1, -1, -1, -1};
  // [n_input x num_gates*n_cell] and [n_output x num_gates*n_cell], packed.
  std::vector<float> packed_input, packed_recurrent;
  std::vector<float> bias;  // [num_gates*n_cell], used before the GEMM
                            // without layer norm, after normalizing with
  std::vector<float> packed_projection;  // [n_cell x n_output]
  const float* peephole_w[4] = {};      // per gate (kI, kF, kO)
  const float* layer_norm_w[4] = {};
  const float* projection_bias = nullptr;
  // Scratch layout (floats): all steps' input contributions, one step's
  // recurrent ones, the hidden values before projection.
  int64_t input_gates_floats = 0, recurrent_gates_floats = 0;
};

float Activate(tfl::ActivationFunctionType act, float x) {
  switch (act) {
    case tfl::ActivationFunctionType_RELU:
      return std::max(0.0f, x);
    case tfl::ActivationFunctionType_RELU_N1_TO_1:
      return std::min(1.0f, std::max(-1.0f, x));
    case tfl::ActivationFunctionType_RELU6:
      return std::min(6.0f, std::max(0.0f, x));
    case tfl::ActivationFunctionType_TANH:
      return std::tanh(x);
    default:
      return x;  // NONE (others are refused at prepare)
  }
}

// TFLite's MeanStddevNormalization of one vector, in place.
void Normalize(float* v, int64_t n) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += v[i];
  const float mean = sum / n;
  float sq = 0;
  for (int64_t i = 0; i < n; ++i) sq += (v[i] - mean) * (v[i] - mean);
  const float inv = 1.0f / std::sqrt(sq / n + 1e-8f);
  for (int64_t i = 0; i < n; ++i) v[i] = (v[i] - mean) * inv;
}

// Finishes one gate's pre-activation `g` (W x + R h, plus the bias unless
// layer norm adds it here) for one batch row, then applies sigmoid or the
// cell activation.
void FinishGate(const LstmState& s, int gate, const float* c, float* g) {
  const int64_t n = s.n_cell;
  if (const float* p = s.peephole_w[gate]) {
    for (int64_t j = 0; j < n; ++j) g[j] += p[j] * c[j];
  }
  if (s.layer_norm) {
    Normalize(g, n);
    const float* w = s.layer_norm_w[gate];
    const float* b = s.bias.data() + s.gate_col[gate];
    for (int64_t j = 0; j < n; ++j) g[j] = g[j] * w[j] + b[j];
  }
  if (gate != kZ) {
    SigmoidVector(g, g, n);
  } else if (s.activation == tfl::ActivationFunctionType_TANH) {
    TanhVector(g, g, n);
  } else {
    for (int64_t j = 0; j < n; ++j) g[j] = Activate(s.activation, g[j]);
  }
}

absl::Status EvalLstm(EvalContext& ctx) {
  const LstmState& s = *ctx.state<LstmState>();
  const float* x = ctx.input(kInput)->data<float>();
  // The states are variable tensors: the op updates them in place.
  float* h = const_cast<float*>(ctx.input(kOutputState)->data<float>());
  float* c = const_cast<float*>(ctx.input(kCellState)->data<float>());
  float* out = ctx.output(0)->data<float>();
  const int64_t width = s.num_gates * s.n_cell;
  float* input_gates = ctx.scratch_as<float>();
  float* gates = input_gates + s.input_gates_floats;
  float* hidden = gates + s.recurrent_gates_floats;

  GemmArgs in;
  in.m = s.batch * s.steps, in.n = width, in.k = s.n_input;
  in.a = x, in.lda = s.n_input;
  in.packed_b = s.packed_input.data();
  in.bias = s.layer_norm ? nullptr : s.bias.data();
  in.c = input_gates, in.ldc = width;
  Gemm(in, ctx.thread_pool());

  for (int64_t t = 0; t < s.steps; ++t) {
    GemmArgs rec;
    rec.m = s.batch, rec.n = width, rec.k = s.n_output;
    rec.a = h, rec.lda = s.n_output;
    rec.packed_b = s.packed_recurrent.data();
    rec.c = gates, rec.ldc = width;
    Gemm(rec, nullptr);
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t row = s.time_major ? t * s.batch + b : b * s.steps + t;
      float* g = gates + b * width;
      const float* gx = input_gates + row * width;
      for (int64_t j = 0; j < width; ++j) g[j] += gx[j];
      float* cb = c + b * s.n_cell;
      float* gi = s.cifg ? nullptr : g + s.gate_col[kI];
      float* gf = g + s.gate_col[kF];
      float* gz = g + s.gate_col[kZ];
      float* go = g + s.gate_col[kO];
      if (gi != nullptr) FinishGate(s, kI, cb, gi);
      FinishGate(s, kF, cb, gf);
      FinishGate(s, kZ, cb, gz);
      for (int64_t j = 0; j < s.n_cell; ++j) {
        const float i = gi != nullptr ? gi[j] : 1.0f - gf[j];
        float v = gf[j] * cb[j] + i * gz[j];
        if (s.cell_clip > 0) v = std::min(s.cell_clip, std::max(-s.cell_clip, v));
        cb[j] = v;
      }
      FinishGate(s, kO, cb, go);
      float* hid = hidden + b * s.n_cell;
      if (s.activation == tfl::ActivationFunctionType_TANH) {
        TanhVector(cb, hid, s.n_cell);
        for (int64_t j = 0; j < s.n_cell; ++j) hid[j] *= go[j];
      } else {
        for (int64_t j = 0; j < s.n_cell; ++j) {
          hid[j] = go[j] * Activate(s.activation, cb[j]);
        }
      }
    }
    // The new output state; the old one was consumed by this step's GEMM.
    if (s.projection) {
      GemmArgs proj;
      proj.m = s.batch, proj.n = s.n_output, proj.k = s.n_cell;
      proj.a = hidden, proj.lda = s.n_cell;
      proj.packed_b = s.packed_projection.data();
      proj.bias = s.projection_bias;
      if (s.proj_clip > 0) proj.lo = -s.proj_clip, proj.hi = s.proj_clip;
      proj.c = h, proj.ldc = s.n_output;
      Gemm(proj, nullptr);
    } else {
      std::memcpy(h, hidden, sizeof(float) * s.batch * s.n_cell);
    }
    for (int64_t b = 0; b < s.batch; ++b) {
      const int64_t row = s.time_major ? t * s.batch + b : b * s.steps + t;
      std::memcpy(out + row * s.n_output, h + b * s.n_output,
                  sizeof(float) * s.n_output);
    }
  }
  return absl::OkStatus();
}

// Input i as a constant float32 tensor of `shape` (absent when optional and
// not given: returns null).
absl::StatusOr<const Tensor*> Weight(const PrepareContext& ctx, int i,
                                     const Shape& shape, bool optional) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) {
    if (optional) return nullptr;
    return absl::InvalidArgumentError(
        absl::StrFormat("required input %d is missing", i));
  }
  if (t->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat(
        "%s input %d '%s' (hybrid or integer LSTM)", TensorTypeName(t->type),
        i, t->name));
  }
  if (t->shape != shape) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "input %d '%s' has shape %s, expected %s", i, t->name,
        ShapeToString(t->shape), ShapeToString(shape)));
  }
  if (!t->constant) {
    return ctx.Unsupported(
        absl::StrFormat("input %d '%s' computed at run time", i, t->name));
  }
  return t;
}

absl::Status PrepareLstmCommon(PrepareContext& ctx, bool sequence) {
  GRAFT_KERNEL_CHECK(ctx.num_inputs() == 20 || ctx.num_inputs() == 24,
                     "expected 20 or 24 inputs, got %d", ctx.num_inputs());
  GRAFT_KERNEL_CHECK(ctx.num_outputs() == 1, "expected 1 output, got %d",
                     ctx.num_outputs());
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, kInput));
  if (in->type != tfl::TensorType_FLOAT32 ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported();
  }
  auto s = std::make_unique<LstmState>();
  tfl::ActivationFunctionType act;
  if (sequence) {
    const auto* o =
        ctx.op().builtin_options.AsUnidirectionalSequenceLSTMOptions();
    GRAFT_KERNEL_CHECK(o != nullptr, "missing UnidirectionalSequenceLSTM options");
    if (o->diagonal_recurrent_tensors) {
      return ctx.Unsupported("diagonal recurrent weights");
    }
    act = o->fused_activation_function;
    s->cell_clip = o->cell_clip, s->proj_clip = o->proj_clip;
    s->time_major = o->time_major;
    GRAFT_KERNEL_CHECK(in->rank() == 3, "input must be 3-D, got %s",
                       ShapeToString(in->shape));
    s->steps = in->dim(s->time_major ? 0 : 1);
    s->batch = in->dim(s->time_major ? 1 : 0);
    s->n_input = in->dim(2);
  } else {
    const auto* o = ctx.op().builtin_options.AsLSTMOptions();
    GRAFT_KERNEL_CHECK(o != nullptr, "missing LSTM options");
    if (o->kernel_type != tfl::LSTMKernelType_FULL) {
      return ctx.Unsupported("the BASIC LSTM kernel");
    }
    act = o->fused_activation_function;
    s->cell_clip = o->cell_clip, s->proj_clip = o->proj_clip;
    GRAFT_KERNEL_CHECK(in->rank() == 2, "input must be 2-D, got %s",
                       ShapeToString(in->shape));
    s->steps = 1;
    s->batch = in->dim(0);
    s->n_input = in->dim(1);
  }
  if (act != tfl::ActivationFunctionType_NONE &&
      act != tfl::ActivationFunctionType_RELU &&
      act != tfl::ActivationFunctionType_RELU_N1_TO_1 &&
      act != tfl::ActivationFunctionType_RELU6 &&
      act != tfl::ActivationFunctionType_TANH) {
    return ctx.Unsupported("this LSTM activation");
  }
  s->activation = act;
  GRAFT_KERNEL_CHECK(s->cell_clip >= 0 && s->proj_clip >= 0,
                     "clip values must not be negative");

  GRAFT_ASSIGN_OR_RETURN(const Tensor* forget_w,
                         RequiredInput(ctx, kInputToGate + kF));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* forget_r,
                         RequiredInput(ctx, kRecurrentToGate + kF));
  GRAFT_KERNEL_CHECK(forget_w->rank() == 2 && forget_r->rank() == 2,
                     "weights must be 2-D");
  s->n_cell = forget_w->dim(0);
  s->n_output = forget_r->dim(1);
  const int32_t nc = static_cast<int32_t>(s->n_cell);
  const int32_t ni = static_cast<int32_t>(s->n_input);
  const int32_t no = static_cast<int32_t>(s->n_output);
  const int32_t nb = static_cast<int32_t>(s->batch);

  s->cifg = ctx.input(kInputToGate + kI) == nullptr;
  const Tensor* w[4];
  const Tensor* r[4];
  const Tensor* bias[4];
  for (int g = 0; g < 4; ++g) {
    const bool optional = g == kI;
    GRAFT_ASSIGN_OR_RETURN(w[g], Weight(ctx, kInputToGate + g, {nc, ni},
                                        optional && s->cifg));
    GRAFT_ASSIGN_OR_RETURN(r[g], Weight(ctx, kRecurrentToGate + g, {nc, no},
                                        optional && s->cifg));
    GRAFT_ASSIGN_OR_RETURN(bias[g], Weight(ctx, kGateBias + g, {nc},
                                           optional && s->cifg));
  }
  // Peepholes: inputs 9..11 are the input, forget and output gates'.
  const int peephole_gate[3] = {kI, kF, kO};
  for (int p = 0; p < 3; ++p) {
    GRAFT_ASSIGN_OR_RETURN(const Tensor* t,
                           Weight(ctx, kCellToGate + p, {nc}, true));
    if (t != nullptr && !(s->cifg && peephole_gate[p] == kI)) {
      s->peephole_w[peephole_gate[p]] = t->data<float>();
      s->peephole = true;
    }
  }
  GRAFT_KERNEL_CHECK(!s->peephole || (s->peephole_w[kF] && s->peephole_w[kO] &&
                                      (s->cifg || s->peephole_w[kI])),
                     "peephole weights must be given for every gate or none");
  if (ctx.num_inputs() == 24) {
    for (int g = 0; g < 4; ++g) {
      GRAFT_ASSIGN_OR_RETURN(const Tensor* t,
                             Weight(ctx, kLayerNorm + g, {nc}, true));
      if (t != nullptr && !(s->cifg && g == kI)) {
        s->layer_norm_w[g] = t->data<float>();
        s->layer_norm = true;
      }
    }
    GRAFT_KERNEL_CHECK(
        !s->layer_norm || (s->layer_norm_w[kF] && s->layer_norm_w[kZ] &&
                           s->layer_norm_w[kO] &&
                           (s->cifg || s->layer_norm_w[kI])),
        "layer-norm coefficients must be given for every gate or none");
  }
  GRAFT_ASSIGN_OR_RETURN(const Tensor* proj_w,
                         Weight(ctx, kProjectionWeights, {no, nc}, true));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* proj_b,
                         Weight(ctx, kProjectionBias, {no}, true));
  s->projection = proj_w != nullptr;
  GRAFT_KERNEL_CHECK(s->projection || (proj_b == nullptr && no == nc),
                     "without projection weights the output size (%d) must "
                     "equal the cell size (%d) and there is no projection "
                     "bias",
                     no, nc);
  for (int i : {kOutputState, kCellState}) {
    GRAFT_ASSIGN_OR_RETURN(const Tensor* st, RequiredInput(ctx, i));
    const Shape want = {nb, i == kOutputState ? no : nc};
    GRAFT_KERNEL_CHECK(st->type == tfl::TensorType_FLOAT32 && st->shape == want,
                       "state input %d '%s' must be FLOAT32 %s, is %s %s", i,
                       st->name, ShapeToString(want),
                       TensorTypeName(st->type), ShapeToString(st->shape));
    GRAFT_KERNEL_CHECK(!st->constant,
                       "state input %d '%s' must be a variable tensor", i,
                       st->name);
  }

  // Gate columns, weights concatenated per gate and packed.
  for (int g = 0; g < 4; ++g) {
    if (w[g] != nullptr) s->gate_col[g] = s->num_gates++ * s->n_cell;
  }
  const int64_t width = s->num_gates * s->n_cell;
  std::vector<float> rows_in(width * s->n_input), rows_rec(width * s->n_output);
  s->bias.resize(width);
  for (int g = 0; g < 4; ++g) {
    if (w[g] == nullptr) continue;
    const int64_t col = s->gate_col[g];
    std::copy_n(w[g]->data<float>(), s->n_cell * s->n_input,
                rows_in.begin() + col * s->n_input);
    std::copy_n(r[g]->data<float>(), s->n_cell * s->n_output,
                rows_rec.begin() + col * s->n_output);
    std::copy_n(bias[g]->data<float>(), s->n_cell, s->bias.begin() + col);
  }
  // Row j of the concatenated [width, K] matrices is column j of B.
  s->packed_input.resize(PackedRhsSize(s->n_input, width));
  PackRhs(rows_in.data(), s->n_input, width, 1, s->n_input,
          s->packed_input.data());
  s->packed_recurrent.resize(PackedRhsSize(s->n_output, width));
  PackRhs(rows_rec.data(), s->n_output, width, 1, s->n_output,
          s->packed_recurrent.data());
  if (s->projection) {
    s->packed_projection.resize(PackedRhsSize(s->n_cell, s->n_output));
    PackRhs(proj_w->data<float>(), s->n_cell, s->n_output, 1, s->n_cell,
            s->packed_projection.data());
    s->projection_bias = proj_b ? proj_b->data<float>() : nullptr;
  }

  s->input_gates_floats = s->batch * s->steps * width;
  s->recurrent_gates_floats = s->batch * width;
  ctx.RequestScratch(sizeof(float) * (s->input_gates_floats +
                                      s->recurrent_gates_floats +
                                      s->batch * s->n_cell));
  // One step's longest dot products (gates, then projection).
  ctx.SetReductionLength(s->n_input + s->n_output +
                         (s->projection ? s->n_cell : 0));
  return FinishLstmPrepare(ctx, *in, no, std::move(s), EvalLstm);
}

absl::Status PrepareLstm(PrepareContext& ctx) {
  return PrepareLstmCommon(ctx, /*sequence=*/false);
}
absl::Status PrepareUnidirectionalSequenceLstm(PrepareContext& ctx) {
  return PrepareLstmCommon(ctx, /*sequence=*/true);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Lstm);
GRAFT_DEFINE_KERNEL(UnidirectionalSequenceLstm);

}  // namespace graft
