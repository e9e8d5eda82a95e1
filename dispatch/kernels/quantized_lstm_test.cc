// Integer LSTM / UNIDIRECTIONAL_SEQUENCE_LSTM (quantized_lstm.cc) against a
// tiny float reference that keeps the states on their integer grids, so the
// integer kernel must land within 2 LSB of it at every step; a hand-checked
// case (zero weights: the state never moves, every output is the hidden zero
// point); and the refusals of forms the kernel does not run. Bit-exactness
// with TFLite itself is checked on the corpus models by tests/reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "dispatch/kernel.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::HasSubstr;
using testing::RandomInt;

struct Spec {
  bool sequence = true;  // UNIDIRECTIONAL_SEQUENCE_LSTM, else LSTM
  bool time_major = false;
  int batch = 2, steps = 3, n_in = 5, n_cell = 4, n_proj = 0;  // 0: none
  bool cifg = false, peephole = false, layer_norm = false;
  bool zero_weights = false;
  float cell_clip = 0, proj_clip = 0;
  // For the refusal tests.
  int num_intermediates = 5;
  int weight_zero_point = 0;
  float cell_scale = 1.0f / 2048;  // 2^-11
  bool float_input = false;
};

// Quantization of everything, shared by the model and the reference.
constexpr float kInScale = 1.0f / 64;
constexpr int kInZp = 3;
constexpr float kWScale = 0.004f;
constexpr float kOutScale = 1.0f / 128;
constexpr int kOutZp = -5;
constexpr float kPeepScale = 1.0f / 1024;
constexpr float kLnScale = 1.0f / 8192;
constexpr float kGateScale = 1.0f / 1024;   // layer-norm intermediates
constexpr float kHiddenScale = 1.0f / 128;  // with projection
constexpr int kHiddenZp = 2;
constexpr float kProjScale = 0.01f;

struct Lstm {
  Spec spec;
  int n_out = 0;
  // Gates i, f, z, o (i unused with CIFG); real = scale * q.
  std::vector<int8_t> w[4], r[4], proj;
  std::vector<int32_t> bias[4], proj_bias;
  std::vector<int16_t> peep[3], ln[4];
  std::vector<int8_t> x;
};

Lstm MakeLstm(const Spec& spec, std::mt19937& rng) {
  Lstm m;
  m.spec = spec;
  m.n_out = spec.n_proj > 0 ? spec.n_proj : spec.n_cell;
  auto ints = [&](int n, int lo, int hi) {
    std::vector<int32_t> v(n);
    for (auto& e : v) e = spec.zero_weights ? 0 : RandomInt(rng, lo, hi);
    return v;
  };
  auto i8 = [&](int n) {
    std::vector<int32_t> v = ints(n, -127, 127);
    return std::vector<int8_t>(v.begin(), v.end());
  };
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && spec.cifg) continue;
    m.w[g] = i8(spec.n_cell * spec.n_in);
    m.r[g] = i8(spec.n_cell * m.n_out);
    // Biases of about +-0.5 in the scale each form uses.
    const float bias_scale =
        spec.layer_norm ? kLnScale / 1024 : kWScale * kInScale;
    const int lim = static_cast<int>(0.5f / bias_scale);
    m.bias[g] = ints(spec.n_cell, -lim, lim);
    if (spec.layer_norm) {
      std::vector<int32_t> v = ints(spec.n_cell, 4096, 12288);  // 0.5..1.5
      if (spec.zero_weights) std::fill(v.begin(), v.end(), 8192);
      m.ln[g].assign(v.begin(), v.end());
    }
  }
  if (spec.peephole) {
    for (int p = 0; p < 3; ++p) {
      if (p == 0 && spec.cifg) continue;
      std::vector<int32_t> v = ints(spec.n_cell, -300, 300);
      m.peep[p].assign(v.begin(), v.end());
    }
  }
  if (spec.n_proj > 0) {
    m.proj = i8(m.n_out * spec.n_cell);
    m.proj_bias = ints(m.n_out, -2000, 2000);
  }
  std::vector<int32_t> xv(static_cast<size_t>(spec.batch) * spec.steps *
                          spec.n_in);
  for (auto& e : xv) e = RandomInt(rng, -128, 127);
  m.x.assign(xv.begin(), xv.end());
  return m;
}

// The op as a model: input x, output y, states as variables.
Model BuildModel(const Lstm& m) {
  const Spec& s = m.spec;
  const tfl::TensorType i8 = tfl::TensorType_INT8;
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  std::vector<int32_t> xs =
      !s.sequence    ? std::vector<int32_t>{s.batch, s.n_in}
      : s.time_major ? std::vector<int32_t>{s.steps, s.batch, s.n_in}
                     : std::vector<int32_t>{s.batch, s.steps, s.n_in};
  const TensorId x =
      g.Input("x", s.float_input ? tfl::TensorType_FLOAT32 : i8, xs);
  g.Quantize(x, kInScale, kInZp);
  std::vector<TensorId> in(24, kNoTensor);
  in[0] = x;
  for (int k = 0; k < 4; ++k) {
    if (m.w[k].empty()) continue;
    in[1 + k] =
        g.Constant<int8_t>("w" + std::to_string(k), {s.n_cell, s.n_in}, m.w[k]);
    in[5 + k] = g.Constant<int8_t>("r" + std::to_string(k), {s.n_cell, m.n_out},
                                   m.r[k]);
    in[12 + k] =
        g.Constant<int32_t>("b" + std::to_string(k), {s.n_cell}, m.bias[k]);
    g.Quantize(in[1 + k], kWScale, s.weight_zero_point)
        .Quantize(in[5 + k], kWScale, s.weight_zero_point)
        .Quantize(in[12 + k],
                  s.layer_norm ? kLnScale / 1024 : kWScale * kInScale, 0);
    if (s.layer_norm) {
      in[20 + k] =
          g.Constant<int16_t>("ln" + std::to_string(k), {s.n_cell}, m.ln[k]);
      g.Quantize(in[20 + k], kLnScale, 0);
    }
  }
  for (int p = 0; p < 3; ++p) {
    if (m.peep[p].empty()) continue;
    in[9 + p] =
        g.Constant<int16_t>("p" + std::to_string(p), {s.n_cell}, m.peep[p]);
    g.Quantize(in[9 + p], kPeepScale, 0);
  }
  if (s.n_proj > 0) {
    in[16] = g.Constant<int8_t>("proj", {m.n_out, s.n_cell}, m.proj);
    in[17] = g.Constant<int32_t>("proj_b", {m.n_out}, m.proj_bias);
    g.Quantize(in[16], kProjScale, 0)
        .Quantize(in[17], kProjScale * kHiddenScale, 0);
  }
  in[18] = g.Variable("h", i8, {s.batch, m.n_out});
  in[19] = g.Variable("c", tfl::TensorType_INT16, {s.batch, s.n_cell});
  g.Quantize(in[18], kOutScale, kOutZp).Quantize(in[19], s.cell_scale, 0);
  std::vector<TensorId> inter;
  for (int k = 0; k < s.num_intermediates; ++k) {
    const bool hidden = k == 4;
    const TensorId t = g.Tensor("inter" + std::to_string(k),
                                hidden ? i8 : tfl::TensorType_INT16, {});
    if (hidden) {
      g.Quantize(t, s.n_proj > 0 ? kHiddenScale : kOutScale,
                 s.n_proj > 0 ? kHiddenZp : kOutZp);
    } else {
      g.Quantize(t, kGateScale, 0);
    }
    inter.push_back(t);
  }
  std::vector<int32_t> ys = xs;
  ys.back() = m.n_out;
  TensorId y;
  if (s.sequence) {
    tfl::UnidirectionalSequenceLSTMOptionsT o;
    o.fused_activation_function = tfl::ActivationFunctionType_TANH;
    o.time_major = s.time_major;
    o.cell_clip = s.cell_clip;
    o.proj_clip = s.proj_clip;
    y = g.Op(tfl::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM)
            .Inputs(in)
            .Options(o)
            .Out("y", i8, ys);
  } else {
    tfl::LSTMOptionsT o;
    o.fused_activation_function = tfl::ActivationFunctionType_TANH;
    o.cell_clip = s.cell_clip;
    o.proj_clip = s.proj_clip;
    y = g.Op(tfl::BuiltinOperator_LSTM).Inputs(in).Options(o).Out("y", i8, ys);
  }
  g.Quantize(y, kOutScale, kOutZp).Output(y);
  absl::StatusOr<Model> model = std::move(mb).Build();
  EXPECT_TRUE(model.ok()) << model.status();
  model->subgraphs[0].ops[0].intermediates = inter;
  return *std::move(model);
}

float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// The float LSTM on dequantized weights; the states are rounded to their
// integer grids after every step as the kernel's are, so the comparison
// bounds one step's error. Returns the quantized outputs in x's layout.
std::vector<int> Reference(const Lstm& m) {
  const Spec& s = m.spec;
  const int nc = s.n_cell, no = m.n_out;
  std::vector<float> h(static_cast<size_t>(s.batch) * no,
                       0.0f);  // real value of the zero point
  std::vector<float> c(static_cast<size_t>(s.batch) * nc, 0.0f);
  std::vector<int> out(static_cast<size_t>(s.batch) * s.steps * no);
  auto quant = [](float v, float scale, int zp, int lo, int hi) {
    return std::min(hi,
                    std::max(lo, static_cast<int>(std::round(v / scale)) + zp));
  };
  const float bias_scale = s.layer_norm ? kLnScale / 1024 : kWScale * kInScale;
  for (int t = 0; t < s.steps; ++t) {
    for (int b = 0; b < s.batch; ++b) {
      const int row =
          s.time_major || !s.sequence ? t * s.batch + b : b * s.steps + t;
      const int8_t* x = m.x.data() + static_cast<size_t>(row) * s.n_in;
      float* hb = h.data() + b * no;
      float* cb = c.data() + b * nc;
      std::vector<float> gate[4];
      auto compute = [&](int k, int peep) {
        std::vector<float>& gv = gate[k];
        gv.assign(nc, 0.0f);
        for (int j = 0; j < nc; ++j) {
          float acc = 0;
          for (int i = 0; i < s.n_in; ++i) {
            acc += kWScale * m.w[k][j * s.n_in + i] * kInScale * (x[i] - kInZp);
          }
          for (int i = 0; i < no; ++i)
            acc += kWScale * m.r[k][j * no + i] * hb[i];
          if (peep >= 0 && !m.peep[peep].empty()) {
            acc += kPeepScale * m.peep[peep][j] * cb[j];
          }
          if (!s.layer_norm) acc += bias_scale * m.bias[k][j];
          gv[j] = acc;
        }
        if (s.layer_norm) {
          float mean = 0, var = 0;
          for (float v : gv) mean += v / nc;
          for (float v : gv) var += (v - mean) * (v - mean) / nc;
          for (int j = 0; j < nc; ++j) {
            gv[j] = (gv[j] - mean) / std::sqrt(var + 1e-8f) * kLnScale *
                        m.ln[k][j] +
                    bias_scale * m.bias[k][j];
          }
        }
        for (float& v : gv) {
          v = std::min(32767.0f / 4096, std::max(-8.0f, v));  // Q3.12
          v = k == 2 ? std::tanh(v) : Sigmoid(v);
        }
      };
      if (!s.cifg) compute(0, 0);
      compute(1, 1);
      compute(2, -1);
      for (int j = 0; j < nc; ++j) {
        const float i = s.cifg ? 1.0f - gate[1][j] : gate[0][j];
        float v = gate[1][j] * cb[j] + i * gate[2][j];
        if (s.cell_clip > 0)
          v = std::min(s.cell_clip, std::max(-s.cell_clip, v));
        cb[j] = s.cell_scale * quant(v, s.cell_scale, 0, -32768, 32767);
      }
      compute(3, 2);
      std::vector<float> hidden(nc);
      for (int j = 0; j < nc; ++j) hidden[j] = gate[3][j] * std::tanh(cb[j]);
      for (int o = 0; o < no; ++o) {
        float v;
        if (s.n_proj > 0) {
          v = kProjScale * kHiddenScale * m.proj_bias[o];
          for (int j = 0; j < nc; ++j) {
            const float hq = kHiddenScale * (quant(hidden[j], kHiddenScale,
                                                   kHiddenZp, -128, 127) -
                                             kHiddenZp);
            v += kProjScale * m.proj[o * nc + j] * hq;
          }
        } else {
          v = hidden[o];
        }
        int q = quant(v, kOutScale, kOutZp, -128, 127);
        if (s.n_proj > 0 && s.proj_clip > 0) {
          // TFLite clips the quantized values, zero point or not.
          const int clip = static_cast<int>(s.proj_clip / kOutScale);
          q = std::min(clip, std::max(-clip, q));
        }
        hb[o] = kOutScale * (q - kOutZp);
        out[static_cast<size_t>(row) * no + o] = q;
      }
    }
  }
  return out;
}

std::vector<int8_t> RunKernel(const Lstm& m) {
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::LoadModel(BuildModel(m), RuntimeOptions{});
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  const std::string kernel = (*rt)->Report().subgraphs[0].ops[0].detail;
  EXPECT_THAT(kernel, HasSubstr("LstmQuantized"));
  testing::SetInput(**rt, 0, m.x);
  absl::Status st = (*rt)->Invoke();
  EXPECT_TRUE(st.ok()) << st;
  return testing::GetOutput<int8_t>(**rt, 0);
}

void ExpectNearReference(const Spec& spec, int seed) {
  std::mt19937 rng = testing::SeededRng(seed);
  for (int iter = 0; iter < 10; ++iter) {
    const Lstm m = MakeLstm(spec, rng);
    const std::vector<int8_t> got = RunKernel(m);
    const std::vector<int> want = Reference(m);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_LE(std::abs(got[i] - want[i]), 2)
          << "iteration " << iter << " element " << i << ": " << int{got[i]}
          << " vs reference " << want[i];
    }
  }
}

TEST(QuantizedLstmTest, ZeroWeightsKeepTheStateAtRest) {
  // f = i = o = sigmoid(0) = 1/2 and z = tanh(0) = 0 exactly: the cell
  // stays 0, so every output is o * tanh(0) = 0, i.e. the zero point.
  Spec spec;
  spec.zero_weights = true;
  spec.steps = 4;
  std::mt19937 rng = testing::SeededRng();
  const Lstm m = MakeLstm(spec, rng);
  const std::vector<int8_t> got = RunKernel(m);
  ASSERT_EQ(got.size(), static_cast<size_t>(spec.batch * spec.steps * 4));
  for (int8_t v : got) EXPECT_EQ(v, kOutZp);
}

TEST(QuantizedLstmTest, SequenceWithin2LsbOfFloat) {
  ExpectNearReference(Spec{}, 0);
}

TEST(QuantizedLstmTest, TimeMajorSequenceWithin2LsbOfFloat) {
  Spec spec;
  spec.time_major = true;
  ExpectNearReference(spec, 1);
}

TEST(QuantizedLstmTest, LstmOpWithCifgPeepholeAndClipWithin2LsbOfFloat) {
  Spec spec;
  spec.sequence = false;
  spec.steps = 1;
  spec.cifg = true;
  spec.peephole = true;
  spec.cell_clip = 0.75f;
  ExpectNearReference(spec, 2);
}

TEST(QuantizedLstmTest, ProjectionWithin2LsbOfFloat) {
  Spec spec;
  spec.n_proj = 3;
  ExpectNearReference(spec, 3);
}

TEST(QuantizedLstmTest, ProjectionWithClipWithin2LsbOfFloat) {
  Spec spec;
  spec.n_proj = 3;
  spec.proj_clip = 0.1f;
  ExpectNearReference(spec, 6);
}

TEST(QuantizedLstmTest, LayerNormWithin2LsbOfFloat) {
  Spec spec;
  spec.layer_norm = true;
  spec.peephole = true;
  ExpectNearReference(spec, 4);
}

// The quantized kernel's own refusal (the runtime reports the first
// kernel's, the float one's), by preparing the op with it directly.
absl::Status PrepareWithQuantizedKernel(const Spec& spec) {
  std::mt19937 rng = testing::SeededRng(5);
  const Lstm m = MakeLstm(spec, rng);
  Model model = BuildModel(m);
  const Subgraph& sg = model.subgraphs[0];
  std::vector<Tensor> tensors(sg.tensors.size());
  std::vector<std::vector<uint8_t>> storage;
  for (size_t i = 0; i < sg.tensors.size(); ++i) {
    const tfl::TensorT& tt = sg.tensors[i];
    Tensor& t = tensors[i];
    t.type = tt.type;
    t.shape = Shape(tt.shape.begin(), tt.shape.end());
    t.bytes =
        static_cast<size_t>(t.num_elements()) * TensorTypeBits(t.type) / 8;
    t.quantization = tt.quantization.get();
    t.name = tt.name;
    const Bytes& data = model.buffers[tt.buffer].data;
    if (data.size() > 0) {
      t.raw_data = const_cast<uint8_t*>(data.data());
      t.constant = true;
    } else if (tt.is_variable) {
      storage.emplace_back(t.bytes);
      t.raw_data = storage.back().data();
    }
  }
  const tfl::BuiltinOperator op =
      spec.sequence ? tfl::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM
                    : tfl::BuiltinOperator_LSTM;
  for (const Kernel* k : FindKernels(op)) {
    if (std::string(k->name).find("Quantized") == std::string::npos) continue;
    PrepareContext ctx(sg.ops[0], absl::MakeSpan(tensors), sg.tensors, nullptr);
    return k->prepare(ctx);
  }
  return absl::NotFoundError("no quantized LSTM kernel registered");
}

TEST(QuantizedLstmTest, PreparesTheSupportedForm) {
  EXPECT_TRUE(PrepareWithQuantizedKernel(Spec{}).ok());
}

TEST(QuantizedLstmTest, RefusesTheEightBitGateForm) {
  Spec spec;
  spec.num_intermediates = 12;
  const absl::Status st = PrepareWithQuantizedKernel(spec);
  EXPECT_TRUE(absl::IsUnimplemented(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("8x8->8"));
}

TEST(QuantizedLstmTest, RefusesAsymmetricWeights) {
  Spec spec;
  spec.weight_zero_point = 1;
  const absl::Status st = PrepareWithQuantizedKernel(spec);
  EXPECT_TRUE(absl::IsUnimplemented(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("asymmetric weights"));
}

TEST(QuantizedLstmTest, RefusesCellScaleNotAPowerOfTwo) {
  Spec spec;
  spec.cell_scale = 0.0003f;
  const absl::Status st = PrepareWithQuantizedKernel(spec);
  EXPECT_TRUE(absl::IsUnimplemented(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("not a power of two"));
}

TEST(QuantizedLstmTest, RefusesHybridLstm) {
  Spec spec;
  spec.float_input = true;
  const absl::Status st = PrepareWithQuantizedKernel(spec);
  EXPECT_TRUE(absl::IsUnimplemented(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("hybrid LSTM"));
}

}  // namespace
}  // namespace graft
