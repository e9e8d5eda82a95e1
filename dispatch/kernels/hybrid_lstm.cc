// Hybrid LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM: FLOAT32 input, output and
// states, INT8 weights quantized per tensor (dynamic-range quantization).
// Reproduces TFLite's lstm_eval EvalHybrid / LstmStepHybrid (ai-edge-litert
// 2.3.0 on x86, which its builtin and reference resolvers both run), in the
// same float operation order. Per step, over the step's batch rows:
//
//   1. the input rows are quantized to int8 unless the whole step input is
//      zero (then the input products are skipped); the output state rows
//      likewise (TFLite's IsZeroVector and BatchQuantizeFloats):
//      symmetric, or with asymmetric_quantize_inputs asymmetric (hybrid_util
//      quantizers, TFLite's x86 rounding);
//   2. each gate g in {i, f, z, o} (i absent with CIFG), per row and cell:
//        g = bias;  g += float(dot(qx, W_g) - zx * rowsum(W_g)) * (sx * sW);
//        g += float(dot(qh, R_g) - zh * rowsum(R_g)) * (sh * sR);
//        g += (sP * P_g) * c          (peephole; o reads the new c)
//      then sigmoid, or for z the op's activation (sigmoid and tanh are
//      Eigen's float approximations, which TFLite applies);
//   3. c = f * c;  c += z * i (CIFG: i = 1 - f);  clipped to cell_clip;
//   4. h = o * act(c), the new output state and the step's output (o * z
//      with activation NONE, as TFLite computes it).
//
// TFLite runs a batch-major input one batch row at a time (each row's step
// quantized and zero-checked alone), a time-major one a whole time step at a
// time; both are kept. Row sums wrap like TFLite's SseReductionSumVector and
// the zero-point products like its int32 arithmetic.
//
// A weight of -128 times a negative input is negated, as TFLite's x86 dot
// product does (HybridDot). Refused at load (ctx.Unsupported): per-channel
// or zero-point weights, weights of mixed types, FLOAT32 peepholes,
// projection, layer norm, diagonal recurrent weights, activations other than
// NONE, RELU, RELU_N1_TO_1, RELU6 and TANH.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dispatch/kernels/hybrid_util.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/lstm_shared.h"

namespace graft {
namespace kernels {
namespace {

struct HybridLstmState : KernelState {
  int64_t batch = 0, steps = 0, n_input = 0, n_cell = 0, n_output = 0;
  bool time_major = true;
  bool cifg = false, peephole = false, asymmetric = false;
  float cell_clip = 0;
  tfl::ActivationFunctionType activation = tfl::ActivationFunctionType_TANH;
  // Per gate (kI unused with CIFG): weights widened to int16, [n_cell, K].
  std::vector<int16_t> w[4], r[4];
  float w_scale[4] = {}, r_scale[4] = {};
  std::vector<int32_t> w_sums[4], r_sums[4];  // asymmetric inputs only
  const float* bias[4] = {};
  // Peepholes as TFLite recovers them: scale * int8, in float (kI, kF, kO).
  std::vector<float> peep[4];
};

// TFLite applies its sigmoid and tanh to whole gate vectors with Eigen
// (tensor_utils ApplySigmoidToVector / ApplyTanhToVector), whose float
// functions are their own approximations; these reproduce the ones in
// ai-edge-litert 2.3.0 (measured bit-exact on x86, no FMA). Each product and
// sum is rounded on its own, as there (Graft builds for baseline x86-64,
// which has no FMA; a build with -mfma would need -ffp-contract=off).

// Its scalar path, for the elements outside whole packets.
float EigenLogisticScalar(float a) {
  const float e = std::exp(std::min(a, 16.6355324f));
  return e / (1.0f + e);
}

// Eigen's packet for float in TFLite's x86 build is SSE's 4 lanes. Its
// assignment loop runs the elements before the first 16-byte-aligned one and
// after the last whole packet through the scalar path; TFLite's scratch
// buffer starts aligned (its arena's 64 bytes), so which elements those are
// follows from where TFLite keeps the gate (TfliteGateOffset). Measured on
// gate vectors that are not whole packets: 8 lanes, or no peeling, miss
// bits there.
constexpr int64_t kEigenPacket = 4;

// Sigmoid of n values v[0..n) in place, which in TFLite's scratch lie at
// float offset `offset` from a packet-aligned address.
void SigmoidVector(float* v, int64_t n, int64_t offset) {
  const int64_t head =
      std::min(n, (kEigenPacket - offset % kEigenPacket) % kEigenPacket);
  const int64_t end = head + (n - head) / kEigenPacket * kEigenPacket;
  for (int64_t i = 0; i < head; ++i) v[i] = EigenLogisticScalar(v[i]);
  EigenLogisticPacketVector(v + head, end - head);
  for (int64_t i = end; i < n; ++i) v[i] = EigenLogisticScalar(v[i]);
}

float Activate(tfl::ActivationFunctionType act, float x) {
  switch (act) {
    case tfl::ActivationFunctionType_RELU:
      return std::max(0.0f, x);
    case tfl::ActivationFunctionType_RELU_N1_TO_1:
      return std::min(1.0f, std::max(-1.0f, x));
    case tfl::ActivationFunctionType_RELU6:
      return std::min(6.0f, std::max(0.0f, x));
    case tfl::ActivationFunctionType_TANH:
      return EigenTanh(x);
    default:
      return x;  // NONE (others are refused at prepare)
  }
}

// One step's quantized rows (nb of k values): scales, zero points, values.
struct QuantizedRows {
  bool zero = true;  // the whole step's rows are zero: products skipped
  float* scale;
  int32_t* zero_point;
  int16_t* q;
};

void QuantizeStep(const HybridLstmState& s, const float* x, int64_t nb,
                  int64_t k, QuantizedRows* rows) {
  rows->zero = std::all_of(x, x + nb * k, [](float v) { return v == 0; });
  if (rows->zero) return;
  for (int64_t b = 0; b < nb; ++b) {
    if (s.asymmetric) {
      AsymmetricQuantizeRow(x + b * k, k, rows->q + b * k, &rows->scale[b],
                            &rows->zero_point[b]);
    } else {
      SymmetricQuantizeRow(x + b * k, k, rows->q + b * k, &rows->scale[b]);
      rows->zero_point[b] = 0;
    }
  }
}

// gate[b * n_cell + j] += float(dot - zp * rowsum) * (row scale * w_scale),
// TFLite's SseMatrixBatchVectorMultiplyAccumulateImpl.
void Accumulate(const QuantizedRows& rows, int64_t nb, int64_t k,
                const std::vector<int16_t>& w, float w_scale,
                const std::vector<int32_t>& sums, int64_t n_cell, float* gate) {
  if (rows.zero) return;
  int32_t dots[256];
  for (int64_t b = 0; b < nb; ++b) {
    const int16_t* q = rows.q + b * k;
    const float scale = rows.scale[b] * w_scale;
    const uint32_t zp = static_cast<uint32_t>(rows.zero_point[b]);
    float* g = gate + b * n_cell;
    for (int64_t j = 0; j < n_cell; ++j) {
      if (j % 256 == 0) {  // the next block of dot products, one call
        HybridDotRows(q, w.data() + j * k, std::min<int64_t>(256, n_cell - j),
                      k, dots);
      }
      int32_t dot = dots[j % 256];
      if (!sums.empty()) {  // wrapping, as TFLite's int32 arithmetic
        dot = static_cast<int32_t>(static_cast<uint32_t>(dot) -
                                   zp * static_cast<uint32_t>(sums[j]));
      }
      g[j] += static_cast<float>(dot) * scale;
    }
  }
}

// Scratch: four gates and the hidden values [nb, n_cell] each; per row two
// scales and two zero points; the quantized input and output-state rows.
struct Scratch {
  float* gate[4];
  QuantizedRows x, h;
};

Scratch CarveScratch(const HybridLstmState& s, EvalContext& ctx) {
  const int64_t nb = s.batch;
  Scratch sc;
  float* f = ctx.scratch_as<float>();
  for (int g = 0; g < 4; ++g) sc.gate[g] = f + g * nb * s.n_cell;
  f += 4 * nb * s.n_cell;
  sc.x.scale = f, sc.h.scale = f + nb;
  int32_t* zp = reinterpret_cast<int32_t*>(f + 2 * nb);
  sc.x.zero_point = zp, sc.h.zero_point = zp + nb;
  int16_t* q = reinterpret_cast<int16_t*>(zp + 2 * nb);
  sc.x.q = q, sc.h.q = q + nb * s.n_input;
  return sc;
}

size_t ScratchBytes(const HybridLstmState& s) {
  return sizeof(float) * (4 * s.batch * s.n_cell + 2 * s.batch) +
         sizeof(int32_t) * 2 * s.batch +
         sizeof(int16_t) * s.batch * (s.n_input + s.n_output);
}

// Where TFLite keeps gate g's values of batch row b in its scratch buffer
// (float offset from its aligned start): the gates side by side as [batch,
// n_cell] blocks, ordered i, z, f, o (z, f, o with CIFG).
int64_t TfliteGateOffset(const HybridLstmState& s, int g, int64_t b) {
  const int slot_full[4] = {0, 2, 1, 3};  // by Gate: kI, kF, kZ, kO
  const int slot = s.cifg ? slot_full[g] - 1 : slot_full[g];
  return (slot * s.batch + b) * s.n_cell;
}

// One LstmStepHybrid over nb rows from batch row b0: x [nb, n_input],
// h [nb, n_output] and c [nb, n_cell] contiguous; the new h is also written
// to out [nb, n_output].
void Step(const HybridLstmState& s, Scratch& sc, int64_t nb, int64_t b0,
          const float* x, float* h, float* c, float* out) {
  const int64_t nc = s.n_cell;
  QuantizeStep(s, x, nb, s.n_input, &sc.x);
  QuantizeStep(s, h, nb, s.n_output, &sc.h);
  auto gate = [&](int g, bool sigmoid) {
    float* v = sc.gate[g];
    for (int64_t b = 0; b < nb; ++b) {
      std::copy_n(s.bias[g], nc, v + b * nc);
    }
    Accumulate(sc.x, nb, s.n_input, s.w[g], s.w_scale[g], s.w_sums[g], nc, v);
    Accumulate(sc.h, nb, s.n_output, s.r[g], s.r_scale[g], s.r_sums[g], nc, v);
    if (!s.peep[g].empty()) {
      const float* p = s.peep[g].data();
      for (int64_t b = 0; b < nb; ++b) {
        for (int64_t j = 0; j < nc; ++j) v[b * nc + j] += p[j] * c[b * nc + j];
      }
    }
    if (sigmoid) {
      SigmoidVector(v, nb * nc, TfliteGateOffset(s, g, b0));
    } else if (s.activation == tfl::ActivationFunctionType_TANH) {
      EigenTanhVector(v, v, nb * nc);
    } else {
      for (int64_t i = 0; i < nb * nc; ++i) {
        v[i] = Activate(s.activation, v[i]);
      }
    }
  };
  if (!s.cifg) gate(kI, true);
  gate(kF, true);
  gate(kZ, false);
  const float* gi = sc.gate[kI];
  const float* gf = sc.gate[kF];
  const float* gz = sc.gate[kZ];
  for (int64_t i = 0; i < nb * nc; ++i) {
    float v = gf[i] * c[i];
    v += gz[i] * (s.cifg ? 1.0f - gf[i] : gi[i]);
    if (s.cell_clip > 0) v = std::min(s.cell_clip, std::max(-s.cell_clip, v));
    c[i] = v;
  }
  gate(kO, true);
  const float* go = sc.gate[kO];
  // With activation NONE TFLite's ApplyActivationToVector writes nothing, so
  // its hidden value multiplies the cell gate left in that scratch, not c.
  const bool none = s.activation == tfl::ActivationFunctionType_NONE;
  if (s.activation == tfl::ActivationFunctionType_TANH) {
    EigenTanhVector(c, h, nb * nc);  // h = o * tanh(c)
    for (int64_t i = 0; i < nb * nc; ++i) h[i] = go[i] * h[i];
  } else {
    for (int64_t i = 0; i < nb * nc; ++i) {
      h[i] = go[i] * (none ? gz[i] : Activate(s.activation, c[i]));
    }
  }
  std::memcpy(out, h, sizeof(float) * nb * s.n_output);
}

absl::Status EvalHybridLstm(EvalContext& ctx) {
  const HybridLstmState& s = *ctx.state<HybridLstmState>();
  const float* x = ctx.input(kInput)->data<float>();
  // The states are variable tensors: the op updates them in place.
  float* h = const_cast<float*>(ctx.input(kOutputState)->data<float>());
  float* c = const_cast<float*>(ctx.input(kCellState)->data<float>());
  float* out = ctx.output(0)->data<float>();
  Scratch sc = CarveScratch(s, ctx);
  if (s.time_major) {
    for (int64_t t = 0; t < s.steps; ++t) {
      Step(s, sc, s.batch, 0, x + t * s.batch * s.n_input, h, c,
           out + t * s.batch * s.n_output);
    }
  } else {
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t t = 0; t < s.steps; ++t) {
        const int64_t row = b * s.steps + t;
        Step(s, sc, 1, b, x + row * s.n_input, h + b * s.n_output,
             c + b * s.n_cell, out + row * s.n_output);
      }
    }
  }
  return absl::OkStatus();
}

// Input i as constant INT8 weights of `shape`, quantized per tensor with
// zero point 0; returns null when optional and absent.
absl::StatusOr<const Tensor*> Int8Weight(const PrepareContext& ctx, int i,
                                         const Shape& shape, bool optional,
                                         const std::string& types) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) {
    if (optional) return nullptr;
    return absl::InvalidArgumentError(
        absl::StrFormat("required input %d is missing", i));
  }
  if (t->type != tfl::TensorType_INT8) {
    return ctx.Unsupported(absl::StrFormat(
        "%s and %s input %d '%s'", types, TensorTypeName(t->type), i, t->name));
  }
  if (t->shape != shape) {
    return absl::InvalidArgumentError(
        absl::StrFormat("input %d '%s' has shape %s, expected %s", i, t->name,
                        ShapeToString(t->shape), ShapeToString(shape)));
  }
  GRAFT_RETURN_IF_ERROR(CheckHybridWeights(
      ctx, *t, absl::StrFormat("%s (input %d '%s')", types, i, t->name)));
  if (t->quantization->scale.size() > 1) {
    return ctx.Unsupported(absl::StrFormat(
        "%s quantized per channel (input %d '%s'; TFLite's hybrid LSTM uses "
        "one scale per tensor)",
        types, i, t->name));
  }
  return t;
}

absl::StatusOr<const float*> FloatVector(const PrepareContext& ctx, int i,
                                         int32_t n, const std::string& types) {
  GRAFT_ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i));
  if (t->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat("%s and %s bias (input %d)", types,
                                           TensorTypeName(t->type), i));
  }
  GRAFT_KERNEL_CHECK(t->shape == Shape{n},
                     "input %d '%s' has shape %s, "
                     "expected [%d]",
                     i, t->name, ShapeToString(t->shape), n);
  if (!t->constant) {
    return ctx.Unsupported(
        absl::StrFormat("%s and a bias computed at run time", types));
  }
  return t->data<float>();
}

absl::Status PrepareHybridLstmCommon(PrepareContext& ctx, bool sequence) {
  GRAFT_KERNEL_CHECK(ctx.num_inputs() == 20 || ctx.num_inputs() == 24,
                     "expected 20 or 24 inputs, got %d", ctx.num_inputs());
  GRAFT_KERNEL_CHECK(ctx.num_outputs() == 1, "expected 1 output, got %d",
                     ctx.num_outputs());
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, kInput));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w_out,
                         RequiredInput(ctx, kInputToGate + kO));
  // Only FLOAT32 activations with INT8 weights are this kernel's; the
  // float and integer kernels give the reasons for other dtypes.
  if (in->type != tfl::TensorType_FLOAT32 ||
      w_out->type != tfl::TensorType_INT8) {
    return ctx.Unsupported();
  }
  const std::string types = "hybrid LSTM (FLOAT32 activations, INT8 weights)";
  if (ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat(
        "%s and a %s output", types, TensorTypeName(ctx.output(0)->type)));
  }
  auto s = std::make_unique<HybridLstmState>();
  tfl::ActivationFunctionType act;
  if (sequence) {
    const auto* o =
        ctx.op().builtin_options.AsUnidirectionalSequenceLSTMOptions();
    GRAFT_KERNEL_CHECK(o != nullptr,
                       "missing UnidirectionalSequenceLSTM options");
    if (o->diagonal_recurrent_tensors) {
      return ctx.Unsupported(types + " with diagonal recurrent weights");
    }
    act = o->fused_activation_function;
    s->cell_clip = o->cell_clip;
    s->time_major = o->time_major;
    s->asymmetric = o->asymmetric_quantize_inputs;
    GRAFT_KERNEL_CHECK(in->rank() == 3, "input must be 3-D, got %s",
                       ShapeToString(in->shape));
    s->steps = in->dim(s->time_major ? 0 : 1);
    s->batch = in->dim(s->time_major ? 1 : 0);
    s->n_input = in->dim(2);
  } else {
    const auto* o = ctx.op().builtin_options.AsLSTMOptions();
    GRAFT_KERNEL_CHECK(o != nullptr, "missing LSTM options");
    if (o->kernel_type != tfl::LSTMKernelType_FULL) {
      return ctx.Unsupported(types + " with the BASIC kernel");
    }
    act = o->fused_activation_function;
    s->cell_clip = o->cell_clip;
    s->asymmetric = o->asymmetric_quantize_inputs;
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
    return ctx.Unsupported(
        absl::StrFormat("%s with activation %s", types,
                        tfl::EnumNameActivationFunctionType(act)));
  }
  s->activation = act;
  GRAFT_KERNEL_CHECK(s->cell_clip >= 0, "cell clip must not be negative");

  GRAFT_ASSIGN_OR_RETURN(const Tensor* forget_r,
                         RequiredInput(ctx, kRecurrentToGate + kF));
  GRAFT_KERNEL_CHECK(w_out->rank() == 2 && forget_r->rank() == 2,
                     "weights must be 2-D");
  s->n_cell = w_out->dim(0);
  s->n_output = forget_r->dim(1);
  const int32_t nc = static_cast<int32_t>(s->n_cell);
  const int32_t ni = static_cast<int32_t>(s->n_input);
  const int32_t no = static_cast<int32_t>(s->n_output);
  const int32_t nb = static_cast<int32_t>(s->batch);

  // Refusals of the parts this kernel does not implement, before the
  // weights are read.
  if (ctx.input(kProjectionWeights) != nullptr ||
      ctx.input(kProjectionBias) != nullptr) {
    return ctx.Unsupported(types + " with projection");
  }
  if (ctx.num_inputs() == 24) {
    for (int g = 0; g < 4; ++g) {
      if (ctx.input(kLayerNorm + g) != nullptr) {
        return ctx.Unsupported(types + " with layer normalization");
      }
    }
  }
  GRAFT_KERNEL_CHECK(no == nc,
                     "without projection the output size (%d) must equal "
                     "the cell size (%d)",
                     no, nc);

  s->cifg = ctx.input(kInputToGate + kI) == nullptr;
  for (int g = 0; g < 4; ++g) {
    const bool optional = g == kI && s->cifg;
    GRAFT_ASSIGN_OR_RETURN(
        const Tensor* w,
        Int8Weight(ctx, kInputToGate + g, {nc, ni}, optional, types));
    GRAFT_ASSIGN_OR_RETURN(
        const Tensor* r,
        Int8Weight(ctx, kRecurrentToGate + g, {nc, no}, optional, types));
    GRAFT_KERNEL_CHECK((w == nullptr) == (r == nullptr),
                       "gate %d has input weights without recurrent ones or "
                       "the reverse",
                       g);
    if (w == nullptr) continue;
    GRAFT_ASSIGN_OR_RETURN(s->bias[g],
                           FloatVector(ctx, kGateBias + g, nc, types));
    s->w[g].assign(w->data<int8_t>(), w->data<int8_t>() + nc * ni);
    s->r[g].assign(r->data<int8_t>(), r->data<int8_t>() + nc * no);
    s->w_scale[g] = w->quantization->scale[0];
    s->r_scale[g] = r->quantization->scale[0];
    if (s->asymmetric) {
      s->w_sums[g].resize(nc);
      s->r_sums[g].resize(nc);
      for (int32_t j = 0; j < nc; ++j) {
        s->w_sums[g][j] = HybridRowSum(s->w[g].data() + j * ni, ni);
        s->r_sums[g][j] = HybridRowSum(s->r[g].data() + j * no, no);
      }
    }
  }
  // Peepholes: inputs 9..11 are the input, forget and output gates'.
  const int peephole_gate[3] = {kI, kF, kO};
  for (int p = 0; p < 3; ++p) {
    const Tensor* given = ctx.input(kCellToGate + p);
    if (given == nullptr || (s->cifg && peephole_gate[p] == kI)) continue;
    GRAFT_ASSIGN_OR_RETURN(
        const Tensor* t,
        Int8Weight(ctx, kCellToGate + p, {nc}, false, types + " (peephole)"));
    const float scale = t->quantization->scale[0];
    std::vector<float>& v = s->peep[peephole_gate[p]];
    v.resize(nc);
    for (int32_t j = 0; j < nc; ++j) v[j] = scale * t->data<int8_t>()[j];
    s->peephole = true;
  }
  GRAFT_KERNEL_CHECK(
      !s->peephole || (!s->peep[kF].empty() && !s->peep[kO].empty() &&
                       (s->cifg || !s->peep[kI].empty())),
      "peephole weights must be given for every gate or none");
  for (int i : {kOutputState, kCellState}) {
    GRAFT_ASSIGN_OR_RETURN(const Tensor* st, RequiredInput(ctx, i));
    const Shape want = {nb, i == kOutputState ? no : nc};
    GRAFT_KERNEL_CHECK(st->type == tfl::TensorType_FLOAT32 && st->shape == want,
                       "state input %d '%s' must be FLOAT32 %s, is %s %s", i,
                       st->name, ShapeToString(want), TensorTypeName(st->type),
                       ShapeToString(st->shape));
    GRAFT_KERNEL_CHECK(!st->constant,
                       "state input %d '%s' must be a variable tensor", i,
                       st->name);
  }

  ctx.RequestScratch(ScratchBytes(*s));
  ctx.SetReductionLength(s->n_input + s->n_output);
  return FinishLstmPrepare(ctx, *in, no, std::move(s), EvalHybridLstm);
}

absl::Status PrepareLstmHybrid(PrepareContext& ctx) {
  return PrepareHybridLstmCommon(ctx, /*sequence=*/false);
}
absl::Status PrepareUnidirectionalSequenceLstmHybrid(PrepareContext& ctx) {
  return PrepareHybridLstmCommon(ctx, /*sequence=*/true);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(LstmHybrid);
GRAFT_DEFINE_KERNEL(UnidirectionalSequenceLstmHybrid);

}  // namespace graft
