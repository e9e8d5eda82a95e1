// Hybrid UNIDIRECTIONAL_SEQUENCE_LSTM / LSTM (hybrid_lstm.cc) against a small
// reference written here: TFLite's hybrid step in plain loops (rows
// quantized with hybrid_util's quantizers, whose rounding is tested against
// TFLite by the hybrid FULLY_CONNECTED tests; int32 dot products; gates in
// float with std::exp / std::tanh). The kernel uses Eigen's approximations
// of those, within a few ulps, so outputs agree to 1e-5 unless a quantized
// output-state value lands on a rounding boundary (not with these seeds).
// Bit-exactness with TFLite itself is checked on
// test_models/generated/lstm_sequence_dynamic_range by tests/generated.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "dispatch/kernels/hybrid_util.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/lstm_shared.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::HasSubstr;

struct Spec {
  bool sequence = true;  // UNIDIRECTIONAL_SEQUENCE_LSTM, else LSTM
  bool time_major = false;
  bool asymmetric = false;
  int batch = 2, steps = 4, n_in = 19, n_cell = 6;
  bool cifg = false, peephole = false;
  float cell_clip = 0;
  // Rows of x (in x's layout) set to zero.
  std::vector<int> zero_rows;
  // For the refusal tests; weights of -128.
  bool projection = false, per_channel = false, minus_128 = false;
};

struct Lstm {
  Spec spec;
  std::vector<int8_t> w[4], r[4], peep[3];
  float w_scale[4] = {}, r_scale[4] = {}, peep_scale[3] = {};
  std::vector<float> bias[4];
  std::vector<float> x;
};

Lstm MakeLstm(const Spec& spec, std::mt19937& rng) {
  Lstm m;
  m.spec = spec;
  auto i8 = [&](int n) {
    std::vector<int8_t> v(n);
    for (auto& e : v)
      e = static_cast<int8_t>(testing::RandomInt(rng, -127, 127));
    return v;
  };
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && spec.cifg) continue;
    m.w[g] = i8(spec.n_cell * spec.n_in);
    m.r[g] = i8(spec.n_cell * spec.n_cell);
    m.w_scale[g] = 0.004f + 0.001f * g;
    m.r_scale[g] = 0.006f - 0.001f * g;
    m.bias[g] = testing::RandomFloats(rng, spec.n_cell, -0.5f, 0.5f);
  }
  if (spec.peephole) {
    for (int p = 0; p < 3; ++p) {
      if (p == 0 && spec.cifg) continue;
      m.peep[p] = i8(spec.n_cell);
      m.peep_scale[p] = 0.003f;
    }
  }
  if (spec.minus_128) {
    // In a block of 16 (recurrent: n_cell >= 16; input: n_in = 19), and in
    // the input weights' tail past the last whole block.
    m.r[kernels::kF][0] = -128;
    m.w[kernels::kF][1] = -128;
    m.w[kernels::kO][spec.n_in - 1] = -128;
  }
  m.x = testing::RandomFloats(
      rng, static_cast<int64_t>(spec.batch) * spec.steps * spec.n_in, -2, 2);
  for (int row : spec.zero_rows) {
    std::fill_n(m.x.begin() + row * spec.n_in, spec.n_in, 0.0f);
  }
  return m;
}

// The op as a model: input x, output y, states as variables.
Model BuildModel(const Lstm& m) {
  const Spec& s = m.spec;
  const tfl::TensorType f32 = tfl::TensorType_FLOAT32;
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  const std::vector<int32_t> xs =
      !s.sequence    ? std::vector<int32_t>{s.batch, s.n_in}
      : s.time_major ? std::vector<int32_t>{s.steps, s.batch, s.n_in}
                     : std::vector<int32_t>{s.batch, s.steps, s.n_in};
  const TensorId x = g.Input("x", f32, xs);
  std::vector<TensorId> in(20, kNoTensor);
  in[0] = x;
  for (int k = 0; k < 4; ++k) {
    if (m.w[k].empty()) continue;
    const std::string n = std::to_string(k);
    in[1 + k] = g.Constant<int8_t>("w" + n, {s.n_cell, s.n_in}, m.w[k]);
    in[5 + k] = g.Constant<int8_t>("r" + n, {s.n_cell, s.n_cell}, m.r[k]);
    in[12 + k] = g.Constant<float>("b" + n, {s.n_cell}, m.bias[k]);
    if (s.per_channel) {
      g.QuantizePerChannel(in[1 + k],
                           std::vector<float>(s.n_cell, m.w_scale[k]),
                           std::vector<int64_t>(s.n_cell, 0), 0);
    } else {
      g.Quantize(in[1 + k], m.w_scale[k], 0);
    }
    g.Quantize(in[5 + k], m.r_scale[k], 0);
  }
  for (int p = 0; p < 3; ++p) {
    if (m.peep[p].empty()) continue;
    in[9 + p] =
        g.Constant<int8_t>("p" + std::to_string(p), {s.n_cell}, m.peep[p]);
    g.Quantize(in[9 + p], m.peep_scale[p], 0);
  }
  if (s.projection) {
    in[16] = g.Constant<int8_t>(
        "proj", {s.n_cell, s.n_cell},
        std::vector<int8_t>(static_cast<size_t>(s.n_cell) * s.n_cell, 1));
    g.Quantize(in[16], 0.01f, 0);
  }
  in[18] = g.Variable("h", f32, {s.batch, s.n_cell});
  in[19] = g.Variable("c", f32, {s.batch, s.n_cell});
  std::vector<int32_t> ys = xs;
  ys.back() = s.n_cell;
  TensorId y;
  if (s.sequence) {
    tfl::UnidirectionalSequenceLSTMOptionsT o;
    o.fused_activation_function = tfl::ActivationFunctionType_TANH;
    o.time_major = s.time_major;
    o.cell_clip = s.cell_clip;
    o.asymmetric_quantize_inputs = s.asymmetric;
    y = g.Op(tfl::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM)
            .Inputs(in)
            .Options(o)
            .Out("y", f32, ys);
  } else {
    tfl::LSTMOptionsT o;
    o.fused_activation_function = tfl::ActivationFunctionType_TANH;
    o.cell_clip = s.cell_clip;
    o.asymmetric_quantize_inputs = s.asymmetric;
    y = g.Op(tfl::BuiltinOperator_LSTM).Inputs(in).Options(o).Out("y", f32, ys);
  }
  g.Output(y);
  absl::StatusOr<Model> model = std::move(mb).Build();
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

float Sigmoid(float v) { return 1.0f / (1.0f + std::exp(-v)); }

// One quantized row: values, scale, zero point (0 when symmetric).
struct QRow {
  std::vector<int16_t> q;
  float scale = 1;
  int32_t zp = 0;
};

QRow Quantize(const float* v, int n, bool asymmetric) {
  QRow r;
  r.q.resize(n);
  if (asymmetric) {
    kernels::AsymmetricQuantizeRow(v, n, r.q.data(), &r.scale, &r.zp);
  } else {
    kernels::SymmetricQuantizeRow(v, n, r.q.data(), &r.scale);
  }
  return r;
}

// TFLite's hybrid step, a batch row at a time. A row whose step input (the
// whole step's rows, time-major) is zero skips its products.
std::vector<float> Reference(const Lstm& m) {
  const Spec& s = m.spec;
  const int nc = s.n_cell, ni = s.n_in;
  std::vector<float> h(static_cast<size_t>(s.batch) * nc, 0.0f);
  std::vector<float> c(static_cast<size_t>(s.batch) * nc, 0.0f);
  std::vector<float> out(static_cast<size_t>(s.batch) * s.steps * nc);
  auto row_of = [&](int b, int t) {
    return s.time_major || !s.sequence ? t * s.batch + b : b * s.steps + t;
  };
  auto all_zero = [](const float* v, int n) {
    return std::all_of(v, v + n, [](float e) { return e == 0; });
  };
  // Products of one quantized row with the rows of w [nc, k].
  auto product = [&](const QRow& q, const std::vector<int8_t>& w, float scale,
                     int k, int j) {
    int32_t dot = 0, sum = 0;
    for (int i = 0; i < k; ++i) {
      // TFLite's x86 dot product negates -128 times a negative input in
      // its whole blocks of 16.
      const bool in_block = i < (k & ~15);
      const int32_t wv =
          in_block && w[j * k + i] == -128 && q.q[i] < 0 ? 128 : w[j * k + i];
      dot += q.q[i] * wv;
      sum += w[j * k + i];
    }
    return static_cast<float>(dot - q.zp * sum) * (q.scale * scale);
  };
  for (int t = 0; t < s.steps; ++t) {
    // TFLite checks the whole step for zeros: all batch rows when time
    // major, the one row otherwise; likewise the output state.
    bool x_zero_step = true, h_zero_step = true;
    if (s.time_major || !s.sequence) {
      for (int b = 0; b < s.batch; ++b) {
        x_zero_step &= all_zero(m.x.data() + row_of(b, t) * ni, ni);
      }
      h_zero_step = all_zero(h.data(), s.batch * nc);
    }
    std::vector<float> h_new(h);
    for (int b = 0; b < s.batch; ++b) {
      const float* x = m.x.data() + row_of(b, t) * ni;
      float* hb = h.data() + b * nc;
      float* cb = c.data() + b * nc;
      bool x_zero = x_zero_step, h_zero = h_zero_step;
      if (!(s.time_major || !s.sequence)) {
        x_zero = all_zero(x, ni);
        h_zero = all_zero(hb, nc);
      }
      const QRow qx = Quantize(x, ni, s.asymmetric);
      const QRow qh = Quantize(hb, nc, s.asymmetric);
      std::vector<float> gate[4];
      auto compute = [&](int k, int peep) {
        gate[k].resize(nc);
        for (int j = 0; j < nc; ++j) {
          float v = m.bias[k][j];
          if (!x_zero) v += product(qx, m.w[k], m.w_scale[k], ni, j);
          if (!h_zero) v += product(qh, m.r[k], m.r_scale[k], nc, j);
          if (peep >= 0 && !m.peep[peep].empty()) {
            v += m.peep_scale[peep] * m.peep[peep][j] * cb[j];
          }
          gate[k][j] = k == 2 ? std::tanh(v) : Sigmoid(v);
        }
      };
      if (!s.cifg) compute(0, 0);
      compute(1, 1);
      compute(2, -1);
      for (int j = 0; j < nc; ++j) {
        const float i = s.cifg ? 1.0f - gate[1][j] : gate[0][j];
        float v = gate[1][j] * cb[j] + gate[2][j] * i;
        if (s.cell_clip > 0) {
          v = std::min(s.cell_clip, std::max(-s.cell_clip, v));
        }
        cb[j] = v;
      }
      compute(3, 2);
      for (int j = 0; j < nc; ++j) {
        const float v = gate[3][j] * std::tanh(cb[j]);
        h_new[b * nc + j] = v;
        out[static_cast<size_t>(row_of(b, t)) * nc + j] = v;
      }
      // Batch-major, TFLite runs each batch row's whole sequence alone;
      // the rows are independent, so stepping them together is the same.
      if (!(s.time_major || !s.sequence)) std::copy_n(&h_new[b * nc], nc, hb);
    }
    h = h_new;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Runtime>> Load(const Lstm& m) {
  return Runtime::LoadModel(BuildModel(m), RuntimeOptions{});
}

void ExpectMatchesReference(const Spec& spec, int salt) {
  std::mt19937 rng = testing::SeededRng(salt);
  for (int iter = 0; iter < 5; ++iter) {
    const Lstm m = MakeLstm(spec, rng);
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(m);
    ASSERT_TRUE(rt.ok()) << rt.status();
    EXPECT_THAT((*rt)->Report().subgraphs[0].ops[0].detail,
                HasSubstr("LstmHybrid"));
    testing::SetInput(**rt, 0, m.x);
    ASSERT_TRUE((*rt)->Invoke().ok());
    const std::vector<float> got = testing::GetOutput<float>(**rt, 0);
    const std::vector<float> want = Reference(m);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-5)
          << "iteration " << iter << " element " << i;
    }
  }
}

TEST(HybridLstmTest, SymmetricBatchMajorMatchesReference) {
  ExpectMatchesReference(Spec{}, 0);
}

TEST(HybridLstmTest, AsymmetricBatchMajorMatchesReference) {
  Spec spec;
  spec.asymmetric = true;
  ExpectMatchesReference(spec, 1);
}

TEST(HybridLstmTest, TimeMajorMultipleBatchesMatchesReference) {
  Spec spec;
  spec.time_major = true;
  spec.batch = 3;
  ExpectMatchesReference(spec, 2);
  spec.asymmetric = true;
  ExpectMatchesReference(spec, 3);
}

TEST(HybridLstmTest, ZeroInputRowsMatchReference) {
  // Batch-major row 1 (batch 0, step 1) is zero: that step skips the input
  // products. Time-major, rows 2 and 3 are all of step 1 (the step is
  // skipped), row 4 only one batch row of step 2 (quantized with scale 1).
  Spec spec;
  spec.zero_rows = {1, 2, 3, 4};
  ExpectMatchesReference(spec, 4);
  spec.time_major = true;
  ExpectMatchesReference(spec, 5);
  spec.asymmetric = true;
  ExpectMatchesReference(spec, 6);
}

TEST(HybridLstmTest, CellClipMatchesReference) {
  Spec spec;
  spec.cell_clip = 0.3f;
  spec.asymmetric = true;
  ExpectMatchesReference(spec, 7);
}

TEST(HybridLstmTest, CifgWithPeepholesMatchesReference) {
  Spec spec;
  spec.cifg = true;
  spec.peephole = true;
  ExpectMatchesReference(spec, 8);
}

TEST(HybridLstmTest, PeepholesMatchReference) {
  Spec spec;
  spec.peephole = true;
  spec.time_major = true;
  ExpectMatchesReference(spec, 9);
}

TEST(HybridLstmTest, LstmOpMatchesReference) {
  Spec spec;
  spec.sequence = false;
  spec.steps = 1;
  spec.asymmetric = true;
  ExpectMatchesReference(spec, 10);
}

TEST(HybridLstmTest, StateCarriesAcrossInvokes) {
  std::mt19937 rng = testing::SeededRng(11);
  Spec spec;
  spec.steps = 6;
  const Lstm whole = MakeLstm(spec, rng);
  const std::vector<float> want = Reference(whole);
  // Batch 1, three steps per invoke: the states carry over.
  Spec half = spec;
  half.batch = 1;
  half.steps = 3;
  Lstm m = whole;
  m.spec = half;
  m.x.assign(whole.x.begin(), whole.x.begin() + 3 * spec.n_in);
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(m);
  ASSERT_TRUE(rt.ok()) << rt.status();
  std::vector<float> got;
  for (int part = 0; part < 2; ++part) {
    testing::SetInput(
        **rt, 0,
        std::vector<float>(whole.x.begin() + part * 3 * spec.n_in,
                           whole.x.begin() + (part + 1) * 3 * spec.n_in));
    ASSERT_TRUE((*rt)->Invoke().ok());
    const std::vector<float> out = testing::GetOutput<float>(**rt, 0);
    got.insert(got.end(), out.begin(), out.end());
  }
  ASSERT_EQ(got.size(), 6u * spec.n_cell);
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5) << "element " << i;
  }
}

TEST(HybridLstmTest, AsymmetricInputsAreNotQuantizedSymmetrically) {
  // The checks above can fail: on inputs far from symmetric, the symmetric
  // reference is far beyond their 1e-5 from the asymmetric kernel.
  std::mt19937 rng = testing::SeededRng(12);
  Spec spec;
  spec.asymmetric = true;
  Lstm m = MakeLstm(spec, rng);
  for (float& v : m.x) v = std::abs(v);  // zero point far from 0
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(m);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput(**rt, 0, m.x);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<float> got = testing::GetOutput<float>(**rt, 0);
  Lstm symmetric = m;
  symmetric.spec.asymmetric = false;
  const std::vector<float> other = Reference(symmetric);
  const std::vector<float> want = Reference(m);
  double max_diff_want = 0, max_diff_other = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    max_diff_want = std::max(max_diff_want, double{std::abs(got[i] - want[i])});
    max_diff_other =
        std::max(max_diff_other, double{std::abs(got[i] - other[i])});
  }
  EXPECT_LT(max_diff_want, 1e-5);
  EXPECT_GT(max_diff_other, 1e-3);
}

TEST(HybridLstmTest, RefusesProjection) {
  std::mt19937 rng = testing::SeededRng(13);
  Spec spec;
  spec.projection = true;
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(MakeLstm(spec, rng));
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(rt.status().message(), HasSubstr("with projection"));
}

TEST(HybridLstmTest, RefusesPerChannelWeights) {
  std::mt19937 rng = testing::SeededRng(14);
  Spec spec;
  spec.per_channel = true;
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(MakeLstm(spec, rng));
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(rt.status().message(), HasSubstr("quantized per channel"));
}

// Weights of -128: their products with negative inputs or output-state
// values come out negated in whole blocks of 16, as in TFLite's x86 dot
// product.
TEST(HybridLstmTest, Minus128WeightsMatchTflitesDotProduct) {
  Spec spec;
  spec.minus_128 = true;
  spec.n_cell = 20;
  ExpectMatchesReference(spec, 15);
  spec.asymmetric = true;
  ExpectMatchesReference(spec, 16);
}

TEST(HybridLstmTest, GivesNoHybridReasonForOtherInputTypes) {
  // An INT16 input is not hybrid: this kernel's refusal is the generic one
  // the float kernel also gives, so no hybrid reason is reported.
  std::mt19937 rng = testing::SeededRng(16);
  Model model = BuildModel(MakeLstm(Spec{}, rng));
  model.subgraphs[0].tensors[0].type = tfl::TensorType_INT16;
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::LoadModel(std::move(model), RuntimeOptions{});
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(rt.status().message(), ::testing::Not(HasSubstr("weights)")));
}

}  // namespace
}  // namespace graft
