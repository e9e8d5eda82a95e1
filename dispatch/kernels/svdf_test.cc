// Integer SVDF (svdf.cc's SvdfQuantized): hand-checked cases (three invokes
// through the carried state, the INT16 clamp of the state), random shapes
// against a small reference of TFLite's EvalIntegerSVDF arithmetic written
// out here from its definition, and the refusal of INT8 time weights or
// state, which TFLite reads as INT16 (out of bounds) and so leaves
// undefined. Bit-exactness with TFLite itself is checked by tests/reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/model_builder.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::HasSubstr;
using testing::RandomInt;

constexpr tfl::TensorType kI8 = tfl::TensorType_INT8;
constexpr tfl::TensorType kI16 = tfl::TensorType_INT16;

struct Svdf {
  int batch = 1, input_size = 2, units = 2, rank = 1, memory = 2;
  float x_scale = 1, wf_scale = 1, state_scale = 1, wt_scale = 1, out_scale = 1;
  int x_zp = 0, out_zp = 0;
  std::vector<int8_t> wf;     // [filters, input_size]
  std::vector<int16_t> wt;    // [filters, memory]
  std::vector<int32_t> bias;  // [units], or empty: no bias
  tfl::TensorType wt_type = kI16, state_type = kI16;
  int filters() const { return units * rank; }
};

Model BuildModel(const Svdf& m) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  const TensorId x = g.Input("x", kI8, {m.batch, m.input_size});
  const TensorId wf =
      g.Constant<int8_t>("wf", {m.filters(), m.input_size}, m.wf);
  const TensorId wt =
      m.wt_type == kI16
          ? g.Constant<int16_t>("wt", {m.filters(), m.memory}, m.wt)
          : g.Constant<int8_t>("wt", {m.filters(), m.memory},
                               std::vector<int8_t>(m.wt.begin(), m.wt.end()));
  const TensorId bias =
      m.bias.empty() ? kNoTensor : g.Constant<int32_t>("b", {m.units}, m.bias);
  const TensorId state =
      g.Variable("state", m.state_type, {m.batch, m.memory * m.filters()});
  tfl::SVDFOptionsT o;
  o.rank = m.rank;
  o.fused_activation_function = tfl::ActivationFunctionType_RELU;
  const TensorId y = g.Op(tfl::BuiltinOperator_SVDF, 3)
                         .In(x, wf, wt, bias, state)
                         .Options(o)
                         .Out("y", kI8, {m.batch, m.units});
  g.Quantize(x, m.x_scale, m.x_zp).Quantize(wf, m.wf_scale, 0);
  g.Quantize(wt, m.wt_scale, 0).Quantize(state, m.state_scale, 0);
  if (bias != kNoTensor) g.Quantize(bias, m.state_scale * m.wt_scale, 0);
  g.Quantize(y, m.out_scale, m.out_zp).Output(y);
  absl::StatusOr<Model> model = std::move(mb).Build();
  EXPECT_TRUE(model.ok()) << model.status();
  return *std::move(model);
}

absl::StatusOr<std::unique_ptr<Runtime>> Load(const Svdf& m) {
  return Runtime::LoadModel(BuildModel(m), RuntimeOptions{});
}

// TFLite's QuantizeMultiplier and (double-rounding) MultiplyByQuantized-
// Multiplier, from their definitions in tensorflow/lite/kernels/internal.
struct Multiplier {
  int32_t q = 0;
  int shift = 0;
};

Multiplier TfliteQuantizeMultiplier(double m) {
  Multiplier r;
  if (m == 0) return r;
  const double frac = std::frexp(m, &r.shift);
  int64_t fixed = static_cast<int64_t>(std::round(frac * (int64_t{1} << 31)));
  if (fixed == (int64_t{1} << 31)) {
    fixed /= 2;
    ++r.shift;
  }
  if (r.shift < -31) return Multiplier{};
  r.q = static_cast<int32_t>(fixed);
  return r;
}

int32_t TfliteRescale(int32_t x, Multiplier m) {
  const int left = m.shift > 0 ? m.shift : 0;
  const int right = m.shift > 0 ? 0 : -m.shift;
  const int64_t a = int64_t{x} * (int64_t{1} << left);
  EXPECT_EQ(a, static_cast<int32_t>(a)) << "the test's values overflow";
  // SaturatingRoundingDoublingHighMul (a == q == INT32_MIN cannot occur:
  // q > 0).
  const int64_t ab = a * m.q;
  const int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  const int32_t high = static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
  // RoundingDivideByPOT.
  const int64_t mask = (int64_t{1} << right) - 1;
  const int64_t remainder = high & mask;
  const int64_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> right) + (remainder > threshold ? 1 : 0);
}

// EvalIntegerSVDF, one invoke at a time, keeping the INT16 state.
class Reference {
 public:
  explicit Reference(const Svdf& m)
      : m_(m),
        state_(static_cast<size_t>(m.batch) * m.filters() * m.memory, 0),
        // As TFLite: the scale products in float, widened to double.
        m1_(TfliteQuantizeMultiplier(m.x_scale * m.wf_scale / m.state_scale)),
        m2_(TfliteQuantizeMultiplier(m.state_scale * m.wt_scale /
                                     m.out_scale)) {}

  std::vector<int> Step(const std::vector<int8_t>& x) {
    const int nf = m_.filters(), nm = m_.memory;
    state_.erase(state_.begin());  // the whole buffer shifts by one
    state_.push_back(0);
    for (int b = 0; b < m_.batch; ++b) {
      for (int f = 0; f < nf; ++f) {
        int32_t dot = 0;
        for (int i = 0; i < m_.input_size; ++i) {
          dot += m_.wf[f * m_.input_size + i] *
                 (x[b * m_.input_size + i] - m_.x_zp);
        }
        const int32_t v = TfliteRescale(dot, m1_);
        state_[(b * nf + f) * nm + nm - 1] = static_cast<int16_t>(
            std::min<int32_t>(32767, std::max<int32_t>(-32768, v)));
      }
    }
    std::vector<int> out;
    for (int b = 0; b < m_.batch; ++b) {
      for (int u = 0; u < m_.units; ++u) {
        // int32 sums that wrap, as TFLite's do on every target it runs on.
        uint32_t sum = m_.bias.empty() ? 0 : static_cast<uint32_t>(m_.bias[u]);
        for (int f = u * m_.rank; f < (u + 1) * m_.rank; ++f) {
          for (int t = 0; t < nm; ++t) {
            sum += static_cast<uint32_t>(int32_t{m_.wt[f * nm + t]} *
                                         state_[(b * nf + f) * nm + t]);
          }
        }
        const int v = TfliteRescale(static_cast<int32_t>(sum), m2_) + m_.out_zp;
        out.push_back(std::min(127, std::max(-128, v)));
      }
    }
    return out;
  }

 private:
  const Svdf& m_;
  std::vector<int16_t> state_;
  Multiplier m1_, m2_;
};

std::vector<int> Invoke(Runtime& rt, const std::vector<int8_t>& x) {
  testing::SetInput(rt, 0, x);
  const absl::Status st = rt.Invoke();
  EXPECT_TRUE(st.ok()) << st;
  const std::vector<int8_t> y = testing::GetOutput<int8_t>(rt, 0);
  return std::vector<int>(y.begin(), y.end());
}

TEST(SvdfQuantizedTest, HandCheckedStepsCarryTheState) {
  // All scales 1: both rescales are exact, so the arithmetic is by hand.
  Svdf m;
  m.x_zp = 1;
  m.wf = {1, 2, 3, -1};
  m.wt = {2, 3, 1, -2};
  m.bias = {10, -4};
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(m);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_THAT((*rt)->Report().subgraphs[0].ops[0].detail,
              HasSubstr("SvdfQuantized"));
  // x - zp = (3, 1): features 5, 8; state (f0: 0 5, f1: 0 8);
  // out = (5*3 + 10, 8*-2 - 4).
  EXPECT_EQ(Invoke(**rt, {4, 2}), (std::vector<int>{25, -20}));
  // x - zp = (-1, 2): features 3, -5; the whole buffer shifts, so
  // state (5 3, 8 -5); out = (5*2 + 3*3 + 10, 8*1 + -5*-2 - 4).
  EXPECT_EQ(Invoke(**rt, {0, 3}), (std::vector<int>{29, 14}));
  // x - zp = (126, 126): features 378, 252; state (3 378, -5 252);
  // out = (1150, -513), clamped to INT8.
  EXPECT_EQ(Invoke(**rt, {127, 127}), (std::vector<int>{127, -128}));
}

TEST(SvdfQuantizedTest, ClampsTheStateToInt16) {
  // Features of +-127*255*2 = +-64770 clamp to 32767 and -32768 in the
  // state; the output rescale by 1/512 then gives 64 and -64 (unclamped,
  // 126.5 and -126.5 would round to 127 and -127). No bias.
  Svdf m;
  m.x_zp = -128;
  m.out_scale = 512;
  m.wf = {127, 127, -127, -127};
  m.wt = {0, 1, 0, 1};
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(m);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(Invoke(**rt, {127, 127}), (std::vector<int>{64, -64}));
}

TEST(SvdfQuantizedTest, MatchesTfliteArithmeticOnRandomShapes) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 20; ++iter) {
    Svdf m;
    m.batch = RandomInt(rng, 1, 3);
    m.input_size = RandomInt(rng, 1, 8);
    m.units = RandomInt(rng, 1, 4);
    m.rank = RandomInt(rng, 1, 2);
    m.memory = RandomInt(rng, 1, 5);
    m.x_scale = 0.05f, m.wf_scale = 0.01f, m.wt_scale = 0.002f;
    // A small state scale makes the INT16 clamp and the int32 wrap of the
    // time sums common.
    m.state_scale = iter % 2 == 0 ? 0.004f : 0.0002f;
    m.out_scale = 0.1f;
    m.x_zp = RandomInt(rng, -10, 10);
    m.out_zp = RandomInt(rng, -128, 0);
    for (int i = 0; i < m.filters() * m.input_size; ++i) {
      m.wf.push_back(static_cast<int8_t>(RandomInt(rng, -127, 127)));
    }
    for (int i = 0; i < m.filters() * m.memory; ++i) {
      m.wt.push_back(static_cast<int16_t>(RandomInt(rng, -32767, 32767)));
    }
    if (iter % 3 != 0) {
      for (int u = 0; u < m.units; ++u) {
        m.bias.push_back(RandomInt(rng, -20000, 20000));
      }
    }
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(m);
    ASSERT_TRUE(rt.ok()) << rt.status();
    Reference ref(m);
    for (int step = 0; step < 4; ++step) {
      std::vector<int8_t> x;
      for (int i = 0; i < m.batch * m.input_size; ++i) {
        x.push_back(static_cast<int8_t>(RandomInt(rng, -128, 127)));
      }
      ASSERT_EQ(Invoke(**rt, x), ref.Step(x))
          << "iteration " << iter << " step " << step << ": batch " << m.batch
          << " input " << m.input_size << " units " << m.units << " rank "
          << m.rank << " memory " << m.memory;
    }
  }
}

// tflite-micro's INT8 form (keyword_scrambled_8bit.tflite) and the mixed
// ones: TFLite's EvalIntegerSVDF takes both buffers as int16_t*, so none
// has a result to match; the load says why.
TEST(SvdfQuantizedTest, RefusesInt8TimeWeightsOrState) {
  struct Case {
    tfl::TensorType wt, state;
    const char* detail;
  };
  for (const Case& c : {Case{kI8, kI8, "INT8 time weights and INT8 state"},
                        Case{kI16, kI8, "INT16 time weights and INT8 state"},
                        Case{kI8, kI16, "INT8 time weights and INT16 state"}}) {
    Svdf m;
    m.wf = {1, 2, 3, -1};
    m.wt = {2, 3, 1, -2};
    m.bias = {10, -4};
    m.wt_type = c.wt, m.state_type = c.state;
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Load(m);
    ASSERT_FALSE(rt.ok()) << c.detail;
    EXPECT_TRUE(absl::IsUnimplemented(rt.status())) << rt.status();
    const std::string msg(rt.status().message());
    EXPECT_THAT(msg, HasSubstr("op 0 (SVDF): "));
    EXPECT_THAT(msg, HasSubstr(absl::StrCat(
                         "no CPU kernel for integer SVDF with ", c.detail)));
    EXPECT_THAT(msg, HasSubstr("reads both as INT16"));
  }
}

}  // namespace
}  // namespace graft
