// Binary elementwise kernels against a tiny reference implementation:
// random shapes with random broadcasting, every arithmetic op, fused
// activations, integer variants, comparisons and SELECT_V2.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::LoadBuilt;
using testing::RandomInt;
using testing::ToVec;

// Reference broadcasting: the input element feeding output element `o`.
int64_t SourceIndex(int64_t o, const Shape& out, const Shape& in) {
  int64_t idx = 0, stride = 1;
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    int64_t coord = o % out[d];
    o /= out[d];
    int in_d = d - (static_cast<int>(out.size()) - static_cast<int>(in.size()));
    if (in_d < 0) continue;
    if (in[in_d] != 1) idx += coord * stride;
    stride *= in[in_d];
  }
  return idx;
}

// Two shapes that broadcast: a random output shape, each operand dropping
// leading dims or setting dims to 1 at random.
void RandomBroadcastPair(std::mt19937& rng, Shape* a, Shape* b, Shape* out) {
  const int rank = RandomInt(rng, 0, 5);
  *out = testing::RandomShape(rng, rank, 4);
  for (Shape* s : {a, b}) {
    *s = *out;
    const int drop = RandomInt(rng, 0, rank);
    s->erase(s->begin(), s->begin() + (RandomInt(rng, 0, 2) == 0 ? drop : 0));
    for (int32_t& d : *s) {
      if (RandomInt(rng, 0, 3) == 0) d = 1;
    }
  }
  // The output is what the operands broadcast to.
  Shape o;
  const size_t r = std::max(a->size(), b->size());
  for (size_t i = 0; i < r; ++i) {
    int ai = static_cast<int>(i) - static_cast<int>(r - a->size());
    int bi = static_cast<int>(i) - static_cast<int>(r - b->size());
    int da = ai >= 0 ? (*a)[ai] : 1, db = bi >= 0 ? (*b)[bi] : 1;
    o.push_back(std::max(da, db));
  }
  *out = o;
}

struct FloatCase {
  tfl::BuiltinOperator op;
  std::function<float(float, float)> f;
  bool has_activation;
};

float Activate(float v, tfl::ActivationFunctionType act) {
  switch (act) {
    case tfl::ActivationFunctionType_RELU: return std::max(v, 0.0f);
    case tfl::ActivationFunctionType_RELU6:
      return std::min(std::max(v, 0.0f), 6.0f);
    case tfl::ActivationFunctionType_RELU_N1_TO_1:
      return std::min(std::max(v, -1.0f), 1.0f);
    default: return v;
  }
}

void SetActivation(OpBuilder& op, tfl::BuiltinOperator code,
                   tfl::ActivationFunctionType act) {
  switch (code) {
    case tfl::BuiltinOperator_ADD: {
      tfl::AddOptionsT o;
      o.fused_activation_function = act;
      op.Options(o);
      break;
    }
    case tfl::BuiltinOperator_SUB: {
      tfl::SubOptionsT o;
      o.fused_activation_function = act;
      op.Options(o);
      break;
    }
    case tfl::BuiltinOperator_MUL: {
      tfl::MulOptionsT o;
      o.fused_activation_function = act;
      op.Options(o);
      break;
    }
    case tfl::BuiltinOperator_DIV: {
      tfl::DivOptionsT o;
      o.fused_activation_function = act;
      op.Options(o);
      break;
    }
    default:
      break;
  }
}

// Each build of the float ops (baseline, AVX2) forced in turn and shown to
// run: every op is one IEEE operation per element (POW, FLOOR_DIV: libm),
// so both must give the formula's bits exactly, NaN, infinities and -0
// included.
TEST(ElementwiseTest, FloatBinaryOpsMatchReferenceWithBroadcasting) {
  std::mt19937 rng = testing::SeededRng();
  const std::vector<FloatCase> cases = {
      {tfl::BuiltinOperator_ADD, [](float a, float b) { return a + b; }, true},
      {tfl::BuiltinOperator_SUB, [](float a, float b) { return a - b; }, true},
      {tfl::BuiltinOperator_MUL, [](float a, float b) { return a * b; }, true},
      {tfl::BuiltinOperator_DIV, [](float a, float b) { return a / b; }, true},
      {tfl::BuiltinOperator_SQUARED_DIFFERENCE,
       [](float a, float b) { return (a - b) * (a - b); }, false},
      {tfl::BuiltinOperator_MAXIMUM,
       [](float a, float b) { return a > b ? a : b; }, false},
      {tfl::BuiltinOperator_MINIMUM,
       [](float a, float b) { return a < b ? a : b; }, false},
      {tfl::BuiltinOperator_POW,
       [](float a, float b) { return std::pow(std::fabs(a), b); }, false},
      {tfl::BuiltinOperator_FLOOR_DIV,
       [](float a, float b) { return std::floor(a / b); }, false},
      {tfl::BuiltinOperator_PRELU,
       [](float a, float b) { return a >= 0 ? a : a * b; }, false},
  };
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 1e-40f};
  testing::ForEachForcedIsa({kernels::CpuIsa::kBaseline, kernels::CpuIsa::kAvx2},
                            [&](kernels::CpuIsa isa) {
    const int64_t before = kernels::FloatBinaryCallsForTesting(isa);
    for (const FloatCase& c : cases) {
      for (int iter = 0; iter < 12; ++iter) {
        Shape sa, sb, so;
        RandomBroadcastPair(rng, &sa, &sb, &so);
        const auto act = c.has_activation ? acts[RandomInt(rng, 0, 3)]
                                          : tfl::ActivationFunctionType_NONE;
        auto a = testing::RandomFloats(rng, NumElements(sa), -3, 3);
        auto b = testing::RandomFloats(rng, NumElements(sb), 0.5f, 3);
        if (c.op == tfl::BuiltinOperator_POW) {
          for (float& x : a) x = std::fabs(x);
        } else {
          for (float& x : a) {
            if (RandomInt(rng, 0, 15) == 0) {
              x = specials[RandomInt(rng, 0, std::size(specials) - 1)];
            }
          }
        }
        const bool b_const = RandomInt(rng, 0, 1) == 1;
        ModelBuilder mb;
        auto& g = mb.Subgraph("main");
        TensorId ta = g.Input("a", tfl::TensorType_FLOAT32, ToVec(sa));
        TensorId tb = b_const
                          ? g.Constant<float>("b", ToVec(sb), b)
                          : g.Input("b", tfl::TensorType_FLOAT32, ToVec(sb));
        OpBuilder op = g.Op(c.op).In(ta, tb);
        SetActivation(op, c.op, act);
        g.Output(op.Out("y", tfl::TensorType_FLOAT32, ToVec(so)));
        auto rt = LoadBuilt(mb, RandomInt(rng, 1, 2));
        ASSERT_TRUE(rt.ok()) << rt.status();
        testing::SetInput(**rt, 0, a);
        if (!b_const) testing::SetInput(**rt, 1, b);
        ASSERT_TRUE((*rt)->Invoke().ok());
        const std::vector<float> got = testing::GetOutput<float>(**rt, 0);
        EXPECT_EQ(ToVec((*rt)->output(0)->shape), ToVec(so));
        ASSERT_EQ(got.size(), static_cast<size_t>(NumElements(so)));
        for (size_t i = 0; i < got.size(); ++i) {
          const float want = Activate(
              c.f(a[SourceIndex(i, so, sa)], b[SourceIndex(i, so, sb)]), act);
          ASSERT_TRUE(std::isnan(want) ? std::isnan(got[i])
                                       : std::memcmp(&want, &got[i],
                                                     sizeof(float)) == 0)
              << kernels::CpuIsaName(isa) << " "
              << EnumNameBuiltinOperator(c.op) << " " << ShapeToString(sa)
              << " x " << ShapeToString(sb) << " element " << i << ": got "
              << got[i] << ", want " << want;
        }
      }
    }
    EXPECT_GT(kernels::FloatBinaryCallsForTesting(isa), before)
        << kernels::CpuIsaName(isa) << " path not taken";
  });
}

// Outputs large enough to be split over the pool (pieces of whole inner
// runs, each starting mid-way through the broadcast index space): with 2 and
// 3 threads, every element as the formula gives it.
TEST(ElementwiseTest, SplitOverThreadsMatchesReference) {
  std::mt19937 rng = testing::SeededRng(3);
  for (int iter = 0; iter < 16; ++iter) {
    // A random broadcast pair scaled up: dims to 60, 20K-200K elements.
    Shape sa, sb, so;
    do {
      const int rank = RandomInt(rng, 1, 4);
      so = testing::RandomShape(rng, rank, 60);
      sa = so, sb = so;
      for (Shape* s : {&sa, &sb}) {
        for (int32_t& d : *s) {
          if (RandomInt(rng, 0, 3) == 0) d = 1;
        }
      }
      for (int d = 0; d < rank; ++d) so[d] = std::max(sa[d], sb[d]);
    } while (NumElements(so) < 20000 || NumElements(so) > 200000);
    const bool mul = iter % 2;
    auto a = testing::RandomFloats(rng, NumElements(sa), -3, 3);
    auto b = testing::RandomFloats(rng, NumElements(sb), -3, 3);
    for (int threads : {2, 3}) {
      ModelBuilder mb;
      auto& g = mb.Subgraph("main");
      TensorId ta = g.Input("a", tfl::TensorType_FLOAT32, ToVec(sa));
      TensorId tb = g.Input("b", tfl::TensorType_FLOAT32, ToVec(sb));
      const auto code =
          mul ? tfl::BuiltinOperator_MUL : tfl::BuiltinOperator_ADD;
      g.Output(g.Op(code).In(ta, tb).Out("y", tfl::TensorType_FLOAT32,
                                          ToVec(so)));
      auto rt = LoadBuilt(mb, threads);
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, a);
      testing::SetInput(**rt, 1, b);
      ASSERT_TRUE((*rt)->Invoke().ok());
      const std::vector<float> got = testing::GetOutput<float>(**rt, 0);
      ASSERT_EQ(got.size(), static_cast<size_t>(NumElements(so)));
      for (size_t i = 0; i < got.size(); ++i) {
        const float x = a[SourceIndex(i, so, sa)];
        const float y = b[SourceIndex(i, so, sb)];
        ASSERT_EQ(got[i], mul ? x * y : x + y)
            << ShapeToString(sa) << " x " << ShapeToString(sb) << " at " << i
            << ", " << threads << " threads";
      }
    }
  }
}

// Every (output, a, b) offset triple the plan's runs visit, in order.
std::vector<std::array<int64_t, 3>> Visits(const kernels::BroadcastPlan& p) {
  std::vector<std::array<int64_t, 3>> v;
  kernels::ForEachBroadcastRun(p, [&](int64_t o, const int64_t* off,
                                      int64_t n, const int64_t* st) {
    for (int64_t i = 0; i < n; ++i) {
      v.push_back({o + i, off[0] + i * st[0], off[1] + i * st[1]});
    }
  });
  return v;
}

// A long innermost run is cut into pieces (a multiple of 64 elements where
// the length allows) that the pool can deal out: a same-shape op is one
// run otherwise, run on one thread. The pieces visit the same elements in
// the same order.
TEST(ElementwiseTest, LongRunsSplitIntoPiecesWithTheSameElements) {
  struct Case {
    Shape a, b;
    std::vector<int64_t> want_dims;  // after the split
  };
  const Case cases[] = {
      {{1, 56, 56, 24}, {1, 56, 56, 24}, {56, 1344}},  // one run of 75264
      {{2, 75264}, {1, 75264}, {2, 56, 1344}},          // b broadcast
      {{56, 56, 24}, {24}, {3136, 24}},                 // short runs: kept
      {{8192}, {8192}, {8192}},                         // not long: kept
      {{9, 1031}, {9, 1031}, {9, 1031}},  // 9279: no multiple of 64 divides
      {{10007}, {1}, {10007}},            // prime: kept
  };
  for (const Case& c : cases) {
    const Shape* operands[] = {&c.a, &c.b};
    auto plan = kernels::MakeBroadcastPlan(c.a, operands);
    ASSERT_TRUE(plan.ok()) << plan.status();
    kernels::BroadcastPlan split = *plan;
    kernels::SplitLongRuns(&split);
    EXPECT_EQ(std::vector<int64_t>(split.out_dims, split.out_dims + split.rank),
              c.want_dims)
        << ShapeToString(c.a) << " x " << ShapeToString(c.b);
    EXPECT_EQ(Visits(split), Visits(*plan)) << ShapeToString(c.a);
  }
}

TEST(ElementwiseTest, Int32OpsMatchReference) {
  std::mt19937 rng = testing::SeededRng(1);
  struct IntCase {
    tfl::BuiltinOperator op;
    std::function<int32_t(int32_t, int32_t)> f;
  };
  const std::vector<IntCase> cases = {
      {tfl::BuiltinOperator_ADD, [](int32_t a, int32_t b) { return a + b; }},
      {tfl::BuiltinOperator_SUB, [](int32_t a, int32_t b) { return a - b; }},
      {tfl::BuiltinOperator_MUL, [](int32_t a, int32_t b) { return a * b; }},
      {tfl::BuiltinOperator_DIV, [](int32_t a, int32_t b) { return a / b; }},
      {tfl::BuiltinOperator_MAXIMUM,
       [](int32_t a, int32_t b) { return std::max(a, b); }},
      {tfl::BuiltinOperator_MINIMUM,
       [](int32_t a, int32_t b) { return std::min(a, b); }},
      {tfl::BuiltinOperator_FLOOR_DIV,
       [](int32_t a, int32_t b) {
         return static_cast<int32_t>(std::floor(double(a) / double(b)));
       }},
      {tfl::BuiltinOperator_FLOOR_MOD,
       [](int32_t a, int32_t b) {
         int32_t r = a % b;
         return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
       }},
  };
  for (const IntCase& c : cases) {
    for (int iter = 0; iter < 6; ++iter) {
      Shape sa, sb, so;
      RandomBroadcastPair(rng, &sa, &sb, &so);
      auto a = testing::RandomInts(rng, NumElements(sa), -50, 50);
      auto b = testing::RandomInts(rng, NumElements(sb), 1, 9);
      for (int32_t& x : b) {
        if (RandomInt(rng, 0, 1)) x = -x;
      }
      ModelBuilder mb;
      auto& g = mb.Subgraph("main");
      TensorId ta = g.Input("a", tfl::TensorType_INT32, ToVec(sa));
      TensorId tb = g.Input("b", tfl::TensorType_INT32, ToVec(sb));
      g.Output(g.Op(c.op).In(ta, tb).Out("y", tfl::TensorType_INT32,
                                           ToVec(so)));
      auto rt = LoadBuilt(mb);
      ASSERT_TRUE(rt.ok()) << rt.status();
      testing::SetInput(**rt, 0, a);
      testing::SetInput(**rt, 1, b);
      ASSERT_TRUE((*rt)->Invoke().ok());
      auto got = testing::GetOutput<int32_t>(**rt, 0);
      for (int64_t i = 0; i < NumElements(so); ++i) {
        ASSERT_EQ(got[i],
                  c.f(a[SourceIndex(i, so, sa)], b[SourceIndex(i, so, sb)]))
            << EnumNameBuiltinOperator(c.op) << " element " << i;
      }
    }
  }
}

TEST(ElementwiseTest, Int32DivisionByZeroFailsInvoke) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", tfl::TensorType_INT32, {2});
  TensorId b = g.Input("b", tfl::TensorType_INT32, {2});
  g.Output(g.Op(tfl::BuiltinOperator_DIV).In(a, b).Out(
      "y", tfl::TensorType_INT32, {2}));
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<int32_t>(**rt, 0, {4, 6});
  testing::SetInput<int32_t>(**rt, 1, {2, 0});
  absl::Status st = (*rt)->Invoke();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("division by zero"), absl::string_view::npos)
      << st;
}

TEST(ElementwiseTest, ComparisonsAndSelectV2) {
  std::mt19937 rng = testing::SeededRng(2);
  for (int iter = 0; iter < 10; ++iter) {
    Shape sa, sb, so;
    RandomBroadcastPair(rng, &sa, &sb, &so);
    auto a = testing::RandomFloats(rng, NumElements(sa));
    auto b = testing::RandomFloats(rng, NumElements(sb));
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId ta = g.Input("a", tfl::TensorType_FLOAT32, ToVec(sa));
    TensorId tb = g.Input("b", tfl::TensorType_FLOAT32, ToVec(sb));
    TensorId less = g.Op(tfl::BuiltinOperator_LESS).In(ta, tb).Out(
        "less", tfl::TensorType_BOOL, ToVec(so));
    TensorId sel = g.Op(tfl::BuiltinOperator_SELECT_V2)
                       .In(less, ta, tb)
                       .Out("min", tfl::TensorType_FLOAT32, ToVec(so));
    g.Output(less).Output(sel);
    auto rt = LoadBuilt(mb);
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, a);
    testing::SetInput(**rt, 1, b);
    ASSERT_TRUE((*rt)->Invoke().ok());
    auto got_less = testing::GetOutput<uint8_t>(**rt, 0);
    auto got_min = testing::GetOutput<float>(**rt, 1);
    for (int64_t i = 0; i < NumElements(so); ++i) {
      float x = a[SourceIndex(i, so, sa)], y = b[SourceIndex(i, so, sb)];
      ASSERT_EQ(got_less[i] != 0, x < y) << i;
      ASSERT_EQ(got_min[i], x < y ? x : y) << i;
    }
  }
}

TEST(ElementwiseTest, RefusesUnhandledDtypesAtLoadNamingTheOp) {
  // INT8 without quantization parameters: no kernel (float, integer or
  // quantized) takes it.
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", tfl::TensorType_INT8, {4});
  TensorId b = g.Input("b", tfl::TensorType_INT8, {4});
  g.Output(g.Op(tfl::BuiltinOperator_ADD).In(a, b).Out(
      "y", tfl::TensorType_INT8, {4}));
  auto rt = LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_TRUE(absl::IsUnimplemented(rt.status())) << rt.status();
  EXPECT_NE(rt.status().message().find(
                "op 0 (ADD): no CPU kernel for dtypes INT8, INT8 -> INT8"),
            absl::string_view::npos)
      << rt.status();
}

}  // namespace
}  // namespace graft
