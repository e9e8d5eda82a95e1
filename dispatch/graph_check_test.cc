// Load-time consistency (graph_check.h) and overflow-checked shapes
// (tensor.h): graphs that used to crash `graft run` (issue 17) fail the load
// with the subgraph, op and tensor named. Models are built unverified where
// VerifyModel would stop them first, to reach the runtime's own checks.
#include "dispatch/graph_check.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/compiled_format.h"
#include "core/model_builder.h"
#include "dispatch/kernels/hybrid_util.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr int32_t kHuge = std::numeric_limits<int32_t>::max();

// The load error of `mb`'s model (unverified), or "loaded".
std::string LoadError(ModelBuilder& mb) {
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  if (rt.ok()) return "loaded";
  return std::string(rt.status().message());
}

TEST(GraphCheckTest, RefusesAConstantListedAsAnInput) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId c = g.Constant<float>("weights", {2}, {1, 2});
  g.Output(g.Op(tfl::BuiltinOperator_RELU).In(c).Out("y", F32, {2}));
  mb.model().subgraphs[0].inputs.push_back(c);
  EXPECT_THAT(LoadError(mb),
              AllOf(HasSubstr("subgraph 0 ('main'): input 0 is tensor 0 "
                              "('weights'), a constant"),
                    HasSubstr("read-only")));
}

TEST(GraphCheckTest, RefusesAnOmittedInputOfADispatchOp) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", F32, {4});
  DispatchOpOptions o;
  o.vendor = "acme";
  o.module_buffer = AddBuffer(mb.model(), Bytes::Copy("ADD a b"));
  o.entry_point = "partition_0";
  g.Output(g.CustomOp(kDispatchCustomCode)
               .In(a, kNoTensor)
               .CustomOptions(EncodeDispatchOpOptions(o))
               .Out("d", F32, {4}));
  EXPECT_THAT(
      LoadError(mb),
      HasSubstr("subgraph 0 ('main') op 0 (CUSTOM:GRAFT_DISPATCH): input 1 "
                "is omitted (-1); a dispatch op passes every input"));
}

TEST(GraphCheckTest, RefusesAnOutputNothingWrites) {
  // Found by tests/fuzz (runtime): a fallback subgraph without ops, whose
  // output the call copied out of a null buffer at invoke.
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  auto& f = mb.Subgraph("fallback");
  TensorId a = g.Input("a", F32, {4});
  f.Input("a", F32, {4});
  f.Output(f.Tensor("never_written", F32, {4}));
  DispatchOpOptions o;
  o.vendor = "acme";
  o.fallback_subgraph = 1;
  g.Output(g.CustomOp(kDispatchCustomCode)
               .In(a)
               .CustomOptions(EncodeDispatchOpOptions(o))
               .Out("d", F32, {4}));
  EXPECT_THAT(LoadError(mb),
              HasSubstr("subgraph 1 ('fallback'): output 0 is tensor 1 "
                        "('never_written'), which no op writes"));
}

TEST(GraphCheckTest, RefusesAnOmittedInputWhereTheOpNeedsOne) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2});
  g.Output(g.Op(tfl::BuiltinOperator_ADD).In(x, kNoTensor).Out("y", F32, {2}));
  EXPECT_THAT(LoadError(mb),
              HasSubstr("op 0 (ADD): input 1 is omitted (-1), which ADD does "
                        "not allow there"));
}

TEST(GraphCheckTest, AcceptsAnOmittedBias) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2});
  TensorId w = g.Constant<float>("w", {3, 2}, {1, 0, 0, 1, 1, 1});
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
               .In(x, w, kNoTensor)
               .Out("y", F32, {1, 3}));
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  ASSERT_TRUE(rt.ok()) << rt.status();
  testing::SetInput<float>(**rt, 0, {2, 3});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(testing::GetOutput<float>(**rt, 0), (std::vector<float>{2, 3, 5}));
}

TEST(GraphCheckTest, RefusesAnOpWritingItsOwnInput) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2});
  TensorId a = g.Op(tfl::BuiltinOperator_RELU).In(x).Out("a", F32, {2});
  g.Op(tfl::BuiltinOperator_ADD).In(a, x).Out(a);
  g.Output(a);
  EXPECT_THAT(LoadError(mb),
              HasSubstr("op 1 (ADD): output 0 is tensor 1 ('a'), which is "
                        "also its input 0"));
}

TEST(GraphCheckTest, RefusesAnOpWritingAVariable) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2});
  TensorId state = g.Variable("state", F32, {2});
  g.Op(tfl::BuiltinOperator_RELU).In(x).Out(state);
  g.Output(g.Op(tfl::BuiltinOperator_ADD).In(x, state).Out("y", F32, {2}));
  EXPECT_THAT(LoadError(mb), HasSubstr("op 0 (RELU): output 0 is tensor 1 "
                                       "('state'), a variable"));
}

TEST(GraphCheckTest, RefusesAnOpWritingAConstant) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2});
  TensorId c = g.Constant<float>("c", {2}, {1, 2});
  g.Op(tfl::BuiltinOperator_RELU).In(x).Out(c);
  g.Output(c);
  EXPECT_THAT(LoadError(mb), HasSubstr("op 0 (RELU): output 0 is tensor 1 "
                                       "('c'), a constant"));
}

TEST(GraphCheckTest, RefusesACalleeWritingItsInput) {
  // The composite's decomposition writes its input x, which is the caller's
  // tensor (here the caller's own input buffer).
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {3});
  TensorId b = g.Input("b", F32, {3});
  tfl::StableHLOCompositeOptionsT o;
  o.name = "odml.clobber";
  o.decomposition_subgraph_index = 1;
  g.Output(g.Op(tfl::BuiltinOperator_STABLEHLO_COMPOSITE)
               .In(x, b)
               .Options(o)
               .Out("y", F32, {3}));
  auto& d = mb.Subgraph("decomposition");
  TensorId dx = d.Input("x", F32, {3});
  TensorId db = d.Input("b", F32, {3});
  d.Op(tfl::BuiltinOperator_RELU).In(db).Out(dx);
  d.Output(dx);
  EXPECT_THAT(LoadError(mb),
              HasSubstr("subgraph 1 ('decomposition') op 0 (RELU): output 0 "
                        "is tensor 0 ('x'), an input of subgraph 1"));
}

TEST(GraphCheckTest, RefusesASecondProducer) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2});
  TensorId a = g.Op(tfl::BuiltinOperator_RELU).In(x).Out("a", F32, {2});
  g.Op(tfl::BuiltinOperator_NEG).In(x).Out(a);
  g.Output(a);
  EXPECT_THAT(LoadError(mb),
              HasSubstr("op 1 (NEG): output 0 is tensor 1 ('a'), which op 0 "
                        "(RELU) also writes"));
}

TEST(GraphCheckTest, RefusesAnOutputListedTwice) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2, 2});
  tfl::UnpackOptionsT o;
  o.num = 2;
  auto op = g.Op(tfl::BuiltinOperator_UNPACK).In(x).Options(o);
  TensorId u = op.Out("u", F32, {2});
  op.Out(u);
  g.Output(u);
  EXPECT_THAT(LoadError(mb), HasSubstr("op 0 (UNPACK): output 1 is tensor 1 "
                                       "('u'), listed twice"));
}

TEST(GraphCheckTest, RefusesAStringInputOfAbsurdSize) {
  // graft run used to die of std::bad_alloc making 2^31 strings for it.
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId s = g.Input("s", tfl::TensorType_STRING, {kHuge});
  g.Output(g.Op(tfl::BuiltinOperator_RESHAPE)
               .In(s)
               .Out("r", tfl::TensorType_STRING, {kHuge}));
  EXPECT_THAT(LoadError(mb),
              HasSubstr("subgraph 0 tensor 0 ('s'): a STRING tensor of shape "
                        "[2147483647] has more strings than"));
}

TEST(GraphCheckTest, RefusesAShapeOfAbsurdSize) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {kHuge, kHuge, 0});
  g.Output(g.Op(tfl::BuiltinOperator_RELU).In(x).Out("y", F32, {0}));
  EXPECT_THAT(LoadError(mb),
              HasSubstr("subgraph 0 tensor 0 ('x'): shape [2147483647, "
                        "2147483647, 0] has more than 2^40 elements"));
}

TEST(GraphCheckTest, RefusesAReshapeTargetThatOverflows) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {4});
  TensorId shape = g.Constant<int32_t>("shape", {4}, {65536, 65536, 65536, -1});
  g.Output(g.Op(tfl::BuiltinOperator_RESHAPE).In(x, shape).Out("y", F32, {4}));
  EXPECT_THAT(LoadError(mb), AllOf(HasSubstr("op 0 (RESHAPE)"),
                                   HasSubstr("makes the shape too large")));
}

TEST(GraphCheckTest, RefusesAConvWindowBeyond32Bits) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 4, 4, 1});
  TensorId w = g.Constant<float>("w", {1, 2, 2, 1}, {1, 1, 1, 1});
  tfl::Conv2DOptionsT o;
  o.padding = tfl::Padding_SAME;
  o.stride_h = o.stride_w = 1;
  o.dilation_h_factor = kHuge;
  o.dilation_w_factor = 1;
  g.Output(g.Op(tfl::BuiltinOperator_CONV_2D)
               .In(x, w, kNoTensor)
               .Options(o)
               .Out("y", F32, {1, 4, 4, 1}));
  EXPECT_THAT(LoadError(mb), AllOf(HasSubstr("op 0 (CONV_2D)"),
                                   HasSubstr("exceeds 32-bit index")));
}

TEST(GraphCheckTest, CheckedNumElements) {
  EXPECT_EQ(*CheckedNumElements({}), 1);
  EXPECT_EQ(*CheckedNumElements({2, 3}), 6);
  EXPECT_EQ(*CheckedNumElements({0, 5}), 0);
  EXPECT_EQ(*CheckedNumElements({1 << 20, 1 << 20}), kMaxTensorElements);
  EXPECT_FALSE(CheckedNumElements({1 << 20, 1 << 20, 2}).ok());
  EXPECT_FALSE(CheckedNumElements({kHuge, kHuge, kHuge, 0}).ok());
  EXPECT_FALSE(CheckedNumElements({-1}).ok());
}

// The hybrid kernels' int32 sums wrap as TFLite's SIMD lanes do; they are
// computed without signed overflow (UBSan reported one).
TEST(GraphCheckTest, HybridSumsWrapWithoutOverflow) {
  const int64_t k = 1 << 18;
  std::vector<int16_t> a(k, 127), b(k, 127);
  uint32_t want = 0;
  for (int64_t i = 0; i < k; ++i) want += 127u * 127u;
  EXPECT_EQ(kernels::HybridDot(a.data(), b.data(), k),
            static_cast<int32_t>(want));
}

// Found by tests/fuzz (runtime): a hybrid LSTM whose weights a model makes
// NaN or infinite quantized NaN rows, and C++'s float-to-int cast of NaN is
// undefined (UBSan). The quantizers convert as x86 does (NaN and values
// beyond int32 to INT32_MIN, which saturates), in the two rounding paths
// (groups of 8 and the tail).
TEST(GraphCheckTest, HybridRowQuantizersTakeNanAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {1, nan, -1, 0.5f, 2, -2, 0, 1, nan, inf, -inf, 3};
  std::vector<int16_t> q(x.size());
  float scale = 0;
  int32_t zero_point = 0;
  kernels::AsymmetricQuantizeRow(x.data(), x.size(), q.data(), &scale,
                                 &zero_point);
  EXPECT_EQ(q[1], -128);
  EXPECT_EQ(q[8], -128);
  kernels::SymmetricQuantizeRow(x.data(), x.size(), q.data(), &scale);
  EXPECT_EQ(q[1], -127);
  EXPECT_EQ(q[8], -127);
  for (int16_t v : q) EXPECT_TRUE(v >= -127 && v <= 127) << v;
}

}  // namespace
}  // namespace graft
