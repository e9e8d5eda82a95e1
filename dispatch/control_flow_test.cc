// Control flow (IF, WHILE, CALL_ONCE) and resource variables (VAR_HANDLE,
// READ_VARIABLE, ASSIGN_VARIABLE) in the runtime, on small models built in
// memory.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/runtime.h"
#include "dispatch/string_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Heap allocations through operator new in this binary, to check that
// Invoke allocates nothing (the runtime's containers and strings all go
// through it).
std::atomic<int64_t> g_allocations{0};

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) std::abort();
  return p;
}
// Not inlined: GCC would otherwise see free() of memory from operator new
// at each call site (-Wmismatched-new-delete).
__attribute__((noinline)) void operator delete(void* p) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace graft {
namespace {

using testing::GetOutput;
using ::testing::HasSubstr;
using testing::LoadBuilt;
using testing::SetInput;

constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I32 = tfl::TensorType_INT32;
constexpr auto BOOL = tfl::TensorType_BOOL;
constexpr auto RES = tfl::TensorType_RESOURCE;

// Ops of `report` (recursively) named `name`.
int CountNamed(const std::vector<SubgraphReport>& subgraphs,
               const std::string& name) {
  int n = 0;
  for (const SubgraphReport& s : subgraphs) {
    for (const OpReport& op : s.ops) {
      n += op.op_name == name;
      n += CountNamed(op.callee, name);
    }
  }
  return n;
}

// --- IF -------------------------------------------------------------------

// y = c ? x + x : x * x, over [3]; the else branch also passes x through as
// a second output (an output no op of the branch writes).
void BuildIf(ModelBuilder& mb) {
  auto& g = mb.Subgraph("main");
  TensorId c = g.Input("c", BOOL, {});
  TensorId x = g.Input("x", F32, {3});
  tfl::IfOptionsT o;
  o.then_subgraph_index = 1;
  o.else_subgraph_index = 2;
  auto op = g.Op(tfl::BuiltinOperator_IF).In(c, x).Options(o);
  TensorId y = op.Out("y", F32, {3});
  TensorId z = op.Out("z", F32, {3});
  g.Output(y).Output(z);
  auto& t = mb.Subgraph("then");
  TensorId tx = t.Input("x", F32, {3});
  t.Output(t.Op(tfl::BuiltinOperator_ADD).In(tx, tx).Out("y", F32, {3}));
  t.Output(t.Op(tfl::BuiltinOperator_NEG).In(tx).Out("z", F32, {3}));
  auto& e = mb.Subgraph("else");
  TensorId ex = e.Input("x", F32, {3});
  e.Output(e.Op(tfl::BuiltinOperator_MUL).In(ex, ex).Out("y", F32, {3}));
  e.Output(ex);
}

TEST(ControlFlowTest, IfTakesEachBranch) {
  ModelBuilder mb;
  BuildIf(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<float>(**rt, 1, {1, -2, 3});
  SetInput<uint8_t>(**rt, 0, {1});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<float>(**rt, 0), (std::vector<float>{2, -4, 6}));
  EXPECT_EQ(GetOutput<float>(**rt, 1), (std::vector<float>{-1, 2, -3}));
  SetInput<uint8_t>(**rt, 0, {0});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<float>(**rt, 0), (std::vector<float>{1, 4, 9}));
  EXPECT_EQ(GetOutput<float>(**rt, 1), (std::vector<float>{1, -2, 3}));
  // Both branches are listed under the IF, one level deeper.
  const RuntimeReport report = (*rt)->Report();
  ASSERT_EQ(report.subgraphs.size(), 1u);
  const OpReport& op = report.subgraphs[0].ops[0];
  EXPECT_EQ(op.op_name, "IF");
  EXPECT_EQ(op.where, OpReport::Where::kCall);
  ASSERT_EQ(op.callee.size(), 2u);
  EXPECT_EQ(op.callee[0].subgraph, 1);
  EXPECT_EQ(op.callee[1].subgraph, 2);
  EXPECT_THAT(report.ToString(),
              HasSubstr("op 0 IF: cpu call (if: then subgraph 1, else "
                        "subgraph 2)"));
}

// y = (c ? relu(x) : concat(x, x)) * 2: the branches yield [2] and [4], so
// the IF's output, and the MUL it feeds, get their shapes at invoke.
TEST(ControlFlowTest, IfBranchesOfDifferentShapes) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId c = g.Input("c", BOOL, {});
  TensorId x = g.Input("x", F32, {2});
  tfl::IfOptionsT o;
  o.then_subgraph_index = 1;
  o.else_subgraph_index = 2;
  TensorId picked =
      g.Op(tfl::BuiltinOperator_IF).In(c, x).Options(o).Out("p", F32, {-1});
  g.Output(g.Op(tfl::BuiltinOperator_MUL)
               .In(picked, g.Constant<float>("two", {}, {2}))
               .Out("y", F32, {-1}));
  auto& t = mb.Subgraph("then");
  TensorId tx = t.Input("x", F32, {2});
  t.Output(t.Op(tfl::BuiltinOperator_RELU).In(tx).Out("y", F32, {2}));
  auto& e = mb.Subgraph("else");
  TensorId ex = e.Input("x", F32, {2});
  tfl::ConcatenationOptionsT cat;
  e.Output(e.Op(tfl::BuiltinOperator_CONCATENATION)
               .In(ex, ex)
               .Options(cat)
               .Out("y", F32, {4}));
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<float>(**rt, 1, {-1, 3});
  for (bool cond : {false, true, false}) {
    SetInput<uint8_t>(**rt, 0, {cond});
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(GetOutput<float>(**rt, 0),
              cond ? (std::vector<float>{0, 6})
                   : (std::vector<float>{-2, 6, -2, 6}))
        << "cond = " << cond;
  }
  EXPECT_THAT((*rt)->Report().ToString(),
              HasSubstr("op 0 IF: cpu call (if: then subgraph 1, else subgraph "
                        "2, shapes at invoke)"));
}

// --- WHILE ----------------------------------------------------------------

// Loop variables (i, n, acc): while i < n: i += 1, n passes through the
// body unchanged, acc *= 2. Inputs: n (int32 scalar), acc ([2] float); i
// starts at the constant 0. Outputs: the final i and acc.
void BuildCountingWhile(ModelBuilder& mb, int32_t cond_index = 1,
                        int32_t body_index = 2) {
  auto& g = mb.Subgraph("main");
  TensorId n = g.Input("n", I32, {});
  TensorId acc = g.Input("acc", F32, {2});
  TensorId zero = g.Constant<int32_t>("zero", {}, {0});
  tfl::WhileOptionsT o;
  o.cond_subgraph_index = cond_index;
  o.body_subgraph_index = body_index;
  auto op = g.Op(tfl::BuiltinOperator_WHILE).In(zero, n, acc).Options(o);
  TensorId i_out = op.Out("i_out", I32, {});
  op.Out("n_out", I32, {});
  TensorId acc_out = op.Out("acc_out", F32, {2});
  g.Output(i_out).Output(acc_out);
}

void BuildCountingCondAndBody(ModelBuilder& mb) {
  auto& c = mb.Subgraph("cond");
  TensorId ci = c.Input("i", I32, {});
  TensorId cn = c.Input("n", I32, {});
  c.Input("acc", F32, {2});
  c.Output(c.Op(tfl::BuiltinOperator_LESS).In(ci, cn).Out("less", BOOL, {}));
  auto& b = mb.Subgraph("body");
  TensorId bi = b.Input("i", I32, {});
  TensorId bn = b.Input("n", I32, {});
  TensorId bacc = b.Input("acc", F32, {2});
  TensorId one = b.Constant<int32_t>("one", {}, {1});
  TensorId two = b.Constant<float>("two", {}, {2});
  TensorId i1 = b.Op(tfl::BuiltinOperator_ADD).In(bi, one).Out("i1", I32, {});
  TensorId acc1 =
      b.Op(tfl::BuiltinOperator_MUL).In(bacc, two).Out("acc1", F32, {2});
  b.Output(i1).Output(bn).Output(acc1);
}

TEST(ControlFlowTest, WhileCountsToN) {
  ModelBuilder mb;
  BuildCountingWhile(mb);
  BuildCountingCondAndBody(mb);
  RuntimeOptions options;
  options.profiling = true;
  auto rt = Runtime::LoadModel(*std::move(mb).Build(), options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  for (int32_t n : {5, 1, 3}) {
    SetInput<int32_t>(**rt, 0, {n});
    SetInput<float>(**rt, 1, {1.5f, -1});
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(GetOutput<int32_t>(**rt, 0), std::vector<int32_t>{n});
    const float scale = static_cast<float>(1 << n);
    EXPECT_EQ(GetOutput<float>(**rt, 1),
              (std::vector<float>{1.5f * scale, -scale}))
        << "n = " << n;
  }
  // The profile lists the WHILE, then its cond and body ops one level
  // deeper: the body ran 5 + 1 + 3 times, the cond once more per run.
  const RuntimeProfile profile = (*rt)->Profile();
  ASSERT_EQ(profile.subgraphs.size(), 1u);
  const std::vector<OpProfile>& ops = profile.subgraphs[0].ops;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].name, "WHILE");
  EXPECT_EQ(ops[0].depth, 0);
  EXPECT_EQ(ops[0].calls, 3);
  EXPECT_EQ(ops[1].name, "LESS");
  EXPECT_EQ(ops[1].depth, 1);
  EXPECT_EQ(ops[1].calls, 12);
  EXPECT_EQ(ops[2].name, "ADD");
  EXPECT_EQ(ops[2].subgraph, 2);
  EXPECT_EQ(ops[2].calls, 9);
  EXPECT_EQ(ops[3].name, "MUL");
  EXPECT_EQ(ops[3].calls, 9);
}

TEST(ControlFlowTest, WhileWithZeroIterationsOutputsItsInputs) {
  ModelBuilder mb;
  BuildCountingWhile(mb);
  BuildCountingCondAndBody(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  // Outputs first hold something else, so a skipped copy would show.
  SetInput<int32_t>(**rt, 0, {4});
  SetInput<float>(**rt, 1, {1, 1});
  ASSERT_TRUE((*rt)->Invoke().ok());
  SetInput<int32_t>(**rt, 0, {0});
  SetInput<float>(**rt, 1, {0.25f, -3});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<int32_t>(**rt, 0), std::vector<int32_t>{0});
  EXPECT_EQ(GetOutput<float>(**rt, 1), (std::vector<float>{0.25f, -3}));
}

// Two WHILE ops share one cond and one body subgraph: each gets its own
// executors, and the second loop starts from the first one's result.
TEST(ControlFlowTest, TwoLoopsShareTheirSubgraphs) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId n = g.Input("n", I32, {});
  TensorId acc = g.Input("acc", F32, {2});
  TensorId zero = g.Constant<int32_t>("zero", {}, {0});
  tfl::WhileOptionsT o;
  o.cond_subgraph_index = 1;
  o.body_subgraph_index = 2;
  auto first = g.Op(tfl::BuiltinOperator_WHILE).In(zero, n, acc).Options(o);
  first.Out("i_a", I32, {});
  TensorId n_a = first.Out("n_a", I32, {});
  TensorId acc_a = first.Out("acc_a", F32, {2});
  TensorId n2 = g.Op(tfl::BuiltinOperator_ADD).In(n_a, n_a).Out("n2", I32, {});
  auto second = g.Op(tfl::BuiltinOperator_WHILE).In(zero, n2, acc_a).Options(o);
  second.Out("i_b", I32, {});
  second.Out("n_b", I32, {});
  g.Output(second.Out("acc_b", F32, {2}));
  BuildCountingCondAndBody(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<int32_t>(**rt, 0, {2});
  SetInput<float>(**rt, 1, {1, 3});
  ASSERT_TRUE((*rt)->Invoke().ok());
  // 2 doublings, then 4 more.
  EXPECT_EQ(GetOutput<float>(**rt, 0), (std::vector<float>{64, 192}));
  EXPECT_EQ(CountNamed((*rt)->Report().subgraphs, "MUL"), 2);
}

// Outer loop (i, n, m, acc): while i < n: i += 1 and an inner loop
// (j = 0, m, acc) adds 1 to acc m times. Result: acc + n * m.
TEST(ControlFlowTest, NestedWhile) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId n = g.Input("n", I32, {});
  TensorId m = g.Input("m", I32, {});
  TensorId acc = g.Input("acc", F32, {1});
  TensorId zero = g.Constant<int32_t>("zero", {}, {0});
  tfl::WhileOptionsT outer;
  outer.cond_subgraph_index = 1;
  outer.body_subgraph_index = 2;
  auto op = g.Op(tfl::BuiltinOperator_WHILE).In(zero, n, m, acc).Options(outer);
  op.Out("i", I32, {});
  op.Out("n_out", I32, {});
  op.Out("m_out", I32, {});
  g.Output(op.Out("acc_out", F32, {1}));

  auto& oc = mb.Subgraph("outer_cond");
  TensorId oci = oc.Input("i", I32, {});
  TensorId ocn = oc.Input("n", I32, {});
  oc.Input("m", I32, {});
  oc.Input("acc", F32, {1});
  oc.Output(oc.Op(tfl::BuiltinOperator_LESS).In(oci, ocn).Out("c", BOOL, {}));

  auto& ob = mb.Subgraph("outer_body");
  TensorId obi = ob.Input("i", I32, {});
  TensorId obn = ob.Input("n", I32, {});
  TensorId obm = ob.Input("m", I32, {});
  TensorId obacc = ob.Input("acc", F32, {1});
  TensorId one = ob.Constant<int32_t>("one", {}, {1});
  TensorId zero_b = ob.Constant<int32_t>("zero", {}, {0});
  TensorId i1 = ob.Op(tfl::BuiltinOperator_ADD).In(obi, one).Out("i1", I32, {});
  tfl::WhileOptionsT inner;
  inner.cond_subgraph_index = 3;
  inner.body_subgraph_index = 4;
  auto iop =
      ob.Op(tfl::BuiltinOperator_WHILE).In(zero_b, obm, obacc).Options(inner);
  iop.Out("j", I32, {});
  iop.Out("m_in", I32, {});
  TensorId acc1 = iop.Out("acc1", F32, {1});
  ob.Output(i1).Output(obn).Output(obm).Output(acc1);

  auto& ic = mb.Subgraph("inner_cond");
  TensorId icj = ic.Input("j", I32, {});
  TensorId icm = ic.Input("m", I32, {});
  ic.Input("acc", F32, {1});
  ic.Output(ic.Op(tfl::BuiltinOperator_LESS).In(icj, icm).Out("c", BOOL, {}));

  auto& ib = mb.Subgraph("inner_body");
  TensorId ibj = ib.Input("j", I32, {});
  TensorId ibm = ib.Input("m", I32, {});
  TensorId ibacc = ib.Input("acc", F32, {1});
  TensorId ione = ib.Constant<int32_t>("one", {}, {1});
  TensorId fone = ib.Constant<float>("fone", {}, {1});
  ib.Output(ib.Op(tfl::BuiltinOperator_ADD).In(ibj, ione).Out("j1", I32, {}));
  ib.Output(ibm);
  ib.Output(
      ib.Op(tfl::BuiltinOperator_ADD).In(ibacc, fone).Out("acc1", F32, {1}));

  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  const struct { int32_t n, m; } cases[] = {{3, 4}, {0, 5}, {2, 0}, {1, 1}};
  for (const auto& c : cases) {
    SetInput<int32_t>(**rt, 0, {c.n});
    SetInput<int32_t>(**rt, 1, {c.m});
    SetInput<float>(**rt, 2, {0.5f});
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(GetOutput<float>(**rt, 0),
              std::vector<float>{0.5f + static_cast<float>(c.n * c.m)})
        << "n = " << c.n << ", m = " << c.m;
  }
  // The inner loop's ops appear two levels deep in the report.
  const std::string text = (*rt)->Report().ToString();
  EXPECT_THAT(text, HasSubstr("op 1 WHILE: cpu call (while: cond subgraph 3, "
                              "body subgraph 4)"));
}

// while sum(x) < 100: x = concat(x, x). The body grows its loop variable,
// so the loop variable gets its shape at invoke, and the cond's SUM too.
TEST(ControlFlowTest, WhileGrowsALoopVariable) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2});
  tfl::WhileOptionsT o;
  o.cond_subgraph_index = 1;
  o.body_subgraph_index = 2;
  g.Output(
      g.Op(tfl::BuiltinOperator_WHILE).In(x).Options(o).Out("y", F32, {-1}));
  auto& c = mb.Subgraph("cond");
  TensorId cx = c.Input("x", F32, {2});
  TensorId limit = c.Constant<float>("limit", {}, {100});
  TensorId sum = c.Op(tfl::BuiltinOperator_SUM)
                     .In(cx, c.Constant<int32_t>("axis", {1}, {0}))
                     .Options(tfl::ReducerOptionsT())
                     .Out("sum", F32, {});
  c.Output(c.Op(tfl::BuiltinOperator_LESS).In(sum, limit).Out("c", BOOL, {}));
  auto& b = mb.Subgraph("body");
  TensorId bx = b.Input("x", F32, {2});
  tfl::ConcatenationOptionsT cat;
  b.Output(b.Op(tfl::BuiltinOperator_CONCATENATION)
               .In(bx, bx)
               .Options(cat)
               .Out("grown", F32, {4}));
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  // {1, 2}: sums 3, 6, ..., 192: six doublings. {60, 50}: none. {30, 40}:
  // one. Grown, then back to the input's size, then grown again.
  const struct {
    std::vector<float> in;
    size_t copies;
  } cases[] = {{{1, 2}, 64}, {{60, 50}, 1}, {{30, 40}, 2}};
  for (const auto& k : cases) {
    SetInput<float>(**rt, 0, k.in);
    ASSERT_TRUE((*rt)->Invoke().ok());
    std::vector<float> want;
    for (size_t i = 0; i < k.copies; ++i) {
      want.insert(want.end(), k.in.begin(), k.in.end());
    }
    EXPECT_EQ((*rt)->output(0)->shape, (Shape{static_cast<int32_t>(want.size())}));
    EXPECT_EQ(GetOutput<float>(**rt, 0), want) << "x = " << k.in[0];
  }
  EXPECT_THAT((*rt)->Report().ToString(),
              HasSubstr("op 0 WHILE: cpu call (while: cond subgraph 1, body "
                        "subgraph 2, shapes at invoke)"));
}

// Loop variables (i, n, words): while i < n: i += 1, words = gather(words,
// [1, 0]) when `swap`, else passed through unchanged. STRING tensors are
// sized by their values, so `words` is a dynamic loop variable.
void BuildStringLoop(ModelBuilder& mb, bool swap) {
  constexpr auto STR = tfl::TensorType_STRING;
  auto& g = mb.Subgraph("main");
  TensorId n = g.Input("n", I32, {});
  TensorId words = g.Input("words", STR, {2});
  tfl::WhileOptionsT o;
  o.cond_subgraph_index = 1;
  o.body_subgraph_index = 2;
  auto op = g.Op(tfl::BuiltinOperator_WHILE)
                .In(g.Constant<int32_t>("zero", {}, {0}), n, words)
                .Options(o);
  g.Output(op.Out("i", I32, {}));
  op.Out("n_out", I32, {});
  g.Output(op.Out("words_out", STR, {2}));
  auto& c = mb.Subgraph("cond");
  TensorId ci = c.Input("i", I32, {});
  TensorId cn = c.Input("n", I32, {});
  c.Input("words", STR, {2});
  c.Output(c.Op(tfl::BuiltinOperator_LESS).In(ci, cn).Out("less", BOOL, {}));
  auto& b = mb.Subgraph("body");
  TensorId bi = b.Input("i", I32, {});
  TensorId bn = b.Input("n", I32, {});
  TensorId bw = b.Input("words", STR, {2});
  b.Output(b.Op(tfl::BuiltinOperator_ADD)
               .In(bi, b.Constant<int32_t>("one", {}, {1}))
               .Out("i1", I32, {}));
  b.Output(bn);
  if (swap) {
    b.Output(b.Op(tfl::BuiltinOperator_GATHER)
                 .In(bw, b.Constant<int32_t>("order", {2}, {1, 0}))
                 .Out("swapped", STR, {2}));
  } else {
    b.Output(bw);
  }
}

TEST(ControlFlowTest, WhileCarriesStrings) {
  for (bool swap : {false, true}) {
    ModelBuilder mb;
    BuildStringLoop(mb, swap);
    auto rt = LoadBuilt(mb);
    ASSERT_TRUE(rt.ok()) << rt.status();
    for (int32_t n : {3, 0, 2}) {
      const std::vector<std::string> in = {"first", "a longer second"};
      SetInput<int32_t>(**rt, 0, {n});
      ASSERT_TRUE(
          (*rt)->SetInputData(1, PackStrings(absl::MakeConstSpan(in))).ok());
      ASSERT_TRUE((*rt)->Invoke().ok());
      EXPECT_EQ(GetOutput<int32_t>(**rt, 0), std::vector<int32_t>{n});
      const Tensor* out = (*rt)->output(1);
      auto words = UnpackStrings(absl::MakeConstSpan(out->raw_data, out->bytes));
      ASSERT_TRUE(words.ok()) << words.status();
      const std::vector<std::string> want =
          swap && n % 2 == 1 ? std::vector<std::string>{in[1], in[0]} : in;
      EXPECT_EQ(std::vector<std::string>(words->begin(), words->end()), want)
          << "swap = " << swap << ", n = " << n;
    }
  }
}

TEST(ControlFlowTest, WhileRefusesACondWithoutABoolResult) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1});
  tfl::WhileOptionsT o;
  o.cond_subgraph_index = 1;
  o.body_subgraph_index = 2;
  g.Output(
      g.Op(tfl::BuiltinOperator_WHILE).In(x).Options(o).Out("y", F32, {1}));
  auto& c = mb.Subgraph("cond");
  TensorId cx = c.Input("x", F32, {1});
  c.Output(c.Op(tfl::BuiltinOperator_RELU).In(cx).Out("r", F32, {1}));
  auto& b = mb.Subgraph("body");
  b.Output(b.Input("x", F32, {1}));
  auto rt = LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("subgraph 0 op 0 (WHILE): cond subgraph 1 must yield "
                        "one BOOL"));
}

// Static shapes: everything is prepared at load, so running loops, branches
// and variable ops allocates nothing.
TEST(ControlFlowTest, InvokeAllocatesNothing) {
  ModelBuilder mb;
  BuildCountingWhile(mb);
  BuildCountingCondAndBody(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<int32_t>(**rt, 0, {7});
  SetInput<float>(**rt, 1, {1, 2});
  const int64_t before = g_allocations.load();
  absl::Status st = (*rt)->Invoke();
  const int64_t during = g_allocations.load() - before;
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(during, 0);
  EXPECT_EQ(GetOutput<float>(**rt, 1), (std::vector<float>{128, 256}));

  ModelBuilder ib;
  BuildIf(ib);
  auto if_rt = LoadBuilt(ib);
  ASSERT_TRUE(if_rt.ok()) << if_rt.status();
  SetInput<uint8_t>(**if_rt, 0, {0});
  SetInput<float>(**if_rt, 1, {1, 2, 3});
  const int64_t if_before = g_allocations.load();
  st = (*if_rt)->Invoke();
  const int64_t if_during = g_allocations.load() - if_before;
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(if_during, 0);
}

// --- CALL_ONCE and resource variables --------------------------------------

TensorId VarHandle(SubgraphBuilder& g, const std::string& shared_name,
                   const std::string& tensor_name) {
  tfl::VarHandleOptionsT o;
  o.shared_name = shared_name;
  return g.Op(tfl::BuiltinOperator_VAR_HANDLE)
      .Options(o)
      .Out(tensor_name, RES, {});
}

// Signature "step" (subgraph 0): CALL_ONCE(init: counter = start), then
// counter += x, returns the new counter. Signature "peek" (subgraph 2)
// reads the counter without initializing it.
void BuildCounter(ModelBuilder& mb) {
  auto& g = mb.Subgraph("step");
  TensorId x = g.Input("x", F32, {2});
  tfl::CallOnceOptionsT once;
  once.init_subgraph_index = 1;
  g.Op(tfl::BuiltinOperator_CALL_ONCE).Options(once);
  TensorId h = VarHandle(g, "counter", "h");
  TensorId v =
      g.Op(tfl::BuiltinOperator_READ_VARIABLE).In(h).Out("v", F32, {2});
  TensorId v1 = g.Op(tfl::BuiltinOperator_ADD).In(v, x).Out("v1", F32, {2});
  g.Op(tfl::BuiltinOperator_ASSIGN_VARIABLE).In(h, v1);
  g.Output(v1);
  mb.Signature("step", {{"x", x}}, {{"counter", v1}}, 0);

  auto& init = mb.Subgraph("init");
  TensorId start = init.Constant<float>("start", {2}, {10, 20});
  TensorId ih = VarHandle(init, "counter", "h");
  init.Op(tfl::BuiltinOperator_ASSIGN_VARIABLE).In(ih, start);

  auto& peek = mb.Subgraph("peek");
  TensorId ph = VarHandle(peek, "counter", "h");
  TensorId pv =
      peek.Op(tfl::BuiltinOperator_READ_VARIABLE).In(ph).Out("v", F32, {2});
  peek.Output(pv);
  mb.Signature("peek", {}, {{"counter", pv}}, 2);
}

TEST(ControlFlowTest, CallOnceInitializesAVariableThatPersists) {
  ModelBuilder mb;
  BuildCounter(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  auto step = (*rt)->signature("step");
  auto peek = (*rt)->signature("peek");
  ASSERT_TRUE(step.ok() && peek.ok());
  // Nothing ran at load: the variable has no value yet.
  absl::Status early = (*peek)->Invoke();
  EXPECT_TRUE(absl::IsFailedPrecondition(early)) << early;
  EXPECT_THAT(std::string(early.message()),
              HasSubstr("subgraph 2 op 1 (READ_VARIABLE): variable 'counter' "
                        "is read before any ASSIGN_VARIABLE"));
  const float xs[2] = {1, -1};
  std::memcpy((*step)->input(0)->raw_data, xs, sizeof(xs));
  for (int k = 1; k <= 3; ++k) {
    const int64_t before = g_allocations.load();
    absl::Status st = (*step)->Invoke();
    EXPECT_EQ(g_allocations.load() - before, 0) << "invoke " << k;
    ASSERT_TRUE(st.ok()) << st;
    const float* out = (*step)->output(0)->data<float>();
    // Initialized once (10, 20), then incremented once per Invoke.
    EXPECT_EQ(out[0], 10.0f + k);
    EXPECT_EQ(out[1], 20.0f - k);
  }
  // Another signature sees the same variable.
  ASSERT_TRUE((*peek)->Invoke().ok());
  EXPECT_EQ((*peek)->output(0)->data<float>()[0], 13.0f);
  EXPECT_EQ((*peek)->output(0)->data<float>()[1], 17.0f);
  const RuntimeReport report = (*rt)->Report();
  EXPECT_THAT(report.ToString(),
              HasSubstr("op 0 CALL_ONCE: cpu call (call once: init subgraph "
                        "1)"));
  EXPECT_THAT(report.ToString(),
              HasSubstr("op 1 VAR_HANDLE: folded at load (variable "
                        "'counter')"));
}

TEST(ControlFlowTest, ReadBeforeAssignFailsAtInvoke) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {3});
  TensorId h = VarHandle(g, "v", "h");
  TensorId r =
      g.Op(tfl::BuiltinOperator_READ_VARIABLE).In(h).Out("r", F32, {3});
  g.Op(tfl::BuiltinOperator_ASSIGN_VARIABLE).In(h, x);
  g.Output(r);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<float>(**rt, 0, {1, 2, 3});
  for (int k = 0; k < 2; ++k) {
    absl::Status st = (*rt)->Invoke();
    EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
    EXPECT_THAT(std::string(st.message()),
                HasSubstr("subgraph 0 op 1 (READ_VARIABLE): variable 'v' is "
                          "read before any ASSIGN_VARIABLE"));
  }
}

// The variable is read and written inside a loop body through a handle
// passed in as a loop variable: acc = sum of x over n iterations.
TEST(ControlFlowTest, VariableUpdatedInsideALoop) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId n = g.Input("n", I32, {});
  TensorId x = g.Input("x", F32, {2});
  TensorId h = VarHandle(g, "acc", "h");
  TensorId zeros = g.Constant<float>("zeros", {2}, {0, 0});
  g.Op(tfl::BuiltinOperator_ASSIGN_VARIABLE).In(h, zeros);
  TensorId zero = g.Constant<int32_t>("zero", {}, {0});
  tfl::WhileOptionsT o;
  o.cond_subgraph_index = 1;
  o.body_subgraph_index = 2;
  auto op = g.Op(tfl::BuiltinOperator_WHILE).In(zero, n, x, h).Options(o);
  op.Out("i", I32, {});
  op.Out("n_out", I32, {});
  op.Out("x_out", F32, {2});
  TensorId h_out = op.Out("h_out", RES, {});
  g.Output(
      g.Op(tfl::BuiltinOperator_READ_VARIABLE).In(h_out).Out("acc", F32, {2}));

  auto& c = mb.Subgraph("cond");
  TensorId ci = c.Input("i", I32, {});
  TensorId cn = c.Input("n", I32, {});
  c.Input("x", F32, {2});
  c.Input("h", RES, {});
  c.Output(c.Op(tfl::BuiltinOperator_LESS).In(ci, cn).Out("c", BOOL, {}));

  auto& b = mb.Subgraph("body");
  TensorId bi = b.Input("i", I32, {});
  TensorId bn = b.Input("n", I32, {});
  TensorId bx = b.Input("x", F32, {2});
  TensorId bh = b.Input("h", RES, {});
  TensorId one = b.Constant<int32_t>("one", {}, {1});
  TensorId cur =
      b.Op(tfl::BuiltinOperator_READ_VARIABLE).In(bh).Out("cur", F32, {2});
  TensorId next =
      b.Op(tfl::BuiltinOperator_ADD).In(cur, bx).Out("next", F32, {2});
  b.Op(tfl::BuiltinOperator_ASSIGN_VARIABLE).In(bh, next);
  b.Output(b.Op(tfl::BuiltinOperator_ADD).In(bi, one).Out("i1", I32, {}));
  b.Output(bn).Output(bx).Output(bh);

  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<int32_t>(**rt, 0, {4});
  SetInput<float>(**rt, 1, {0.5f, -2});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<float>(**rt, 0), (std::vector<float>{2, -8}));
}

TEST(ControlFlowTest, RefusesAVariableWhoseShapeIsUnknown) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId h = VarHandle(g, "never_assigned", "h");
  g.Output(g.Op(tfl::BuiltinOperator_READ_VARIABLE).In(h).Out("r", F32, {3}));
  auto rt = LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("subgraph 0 op 1 (READ_VARIABLE): variable "
                        "'never_assigned' is read, but no ASSIGN_VARIABLE"));
}

TEST(ControlFlowTest, RefusesAVariableThatChangesShape) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", F32, {2});
  TensorId b = g.Input("b", F32, {3});
  TensorId h = VarHandle(g, "v", "h");
  g.Op(tfl::BuiltinOperator_ASSIGN_VARIABLE).In(h, a);
  g.Op(tfl::BuiltinOperator_ASSIGN_VARIABLE).In(h, b);
  g.Output(g.Op(tfl::BuiltinOperator_READ_VARIABLE).In(h).Out("r", F32, {3}));
  auto rt = LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("subgraph 0 op 2 (ASSIGN_VARIABLE): variable 'v' "
                        "would become FLOAT32 [3] here, but it is FLOAT32 [2] "
                        "(fixed by subgraph 0 op 1 (ASSIGN_VARIABLE))"));
}

}  // namespace
}  // namespace graft
