// The Runtime API: loading, memory planning, binding, signatures, reports,
// folding, refusal messages, composites, and the DispatchBackend seam
// (vendor execution, fallback to CPU, kRequireAccelerator).
#include "dispatch/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "core/compiled_format.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/string_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::HasSubstr;
using testing::GetOutput;
using testing::LoadBuilt;
using testing::SetInput;

constexpr auto F32 = tfl::TensorType_FLOAT32;

// y = relu((x + x) * c) over [2, 3], with a signature.
void BuildChain(ModelBuilder& mb) {
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {2, 3});
  TensorId c = g.Constant<float>("c", {3}, {1, -1, 2});
  TensorId a = g.Op(tfl::BuiltinOperator_ADD).In(x, x).Out("a", F32, {2, 3});
  TensorId m = g.Op(tfl::BuiltinOperator_MUL).In(a, c).Out("m", F32, {2, 3});
  TensorId y = g.Op(tfl::BuiltinOperator_RELU).In(m).Out("y", F32, {2, 3});
  g.Output(y);
  mb.Signature("serving_default", {{"input", x}}, {{"output", y}});
}

const std::vector<float> kX = {1, 2, 3, -1, -2, -3};
const std::vector<float> kY = {2, 0, 12, 0, 4, 0};

TEST(RuntimeTest, RunsAChainAndReportsWhereOpsRan) {
  ModelBuilder mb;
  BuildChain(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput(**rt, 0, kX);
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<float>(**rt, 0), kY);
  // Invoking again gives the same result (inputs are not clobbered).
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<float>(**rt, 0), kY);
  RuntimeReport report = (*rt)->Report();
  EXPECT_EQ(report.CountOps(OpReport::Where::kCpu), 3);
  ASSERT_EQ(report.subgraphs.size(), 1u);
  EXPECT_LE(report.subgraphs[0].arena_bytes,
            report.subgraphs[0].unshared_bytes);
  EXPECT_THAT(report.ToString(), HasSubstr("op 1 MUL: cpu (Mul)"));
}

TEST(RuntimeTest, ArenaReusesBuffersOfDeadTensors) {
  // A chain of 8 same-size ops needs 3 live buffers at most (input, the
  // op's input and output), not 9.
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId t = g.Input("x", F32, {256});
  for (int i = 0; i < 8; ++i) {
    t = g.Op(tfl::BuiltinOperator_RELU).In(t).Out(absl::StrCat("t", i), F32,
                                                   {256});
  }
  g.Output(t);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  const RuntimeReport report = (*rt)->Report();
  const SubgraphReport& s = report.subgraphs[0];
  EXPECT_EQ(s.unshared_bytes, 9u * 1024);
  EXPECT_LE(s.arena_bytes, 3u * 1024);
}

// A RESHAPE's output shares its input's buffer (no copy), whatever else
// reads that input later; one that is the model's output gets its own.
TEST(RuntimeTest, ReshapesShareTheirInputsBuffer) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {256});
  TensorId shape = g.Constant<int32_t>("shape", {2}, {16, 16});
  TensorId a = g.Op(tfl::BuiltinOperator_RELU).In(x).Out("a", F32, {256});
  TensorId b =
      g.Op(tfl::BuiltinOperator_RESHAPE).In(a, shape).Out("b", F32, {16, 16});
  TensorId c = g.Op(tfl::BuiltinOperator_RELU).In(b).Out("c", F32, {16, 16});
  TensorId d =
      g.Op(tfl::BuiltinOperator_RESHAPE).In(a, shape).Out("d", F32, {16, 16});
  TensorId e =
      g.Op(tfl::BuiltinOperator_ADD).In(c, d).Out("e", F32, {16, 16});
  TensorId f =
      g.Op(tfl::BuiltinOperator_RESHAPE).In(a, shape).Out("f", F32, {16, 16});
  g.Output(e).Output(f);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  std::vector<float> in(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<float>(i % 7) - 3;
  SetInput(**rt, 0, in);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*rt)->Invoke().ok());
    const std::vector<float> got = GetOutput<float>(**rt, 0);
    const std::vector<float> reshaped = GetOutput<float>(**rt, 1);
    for (int i = 0; i < 256; ++i) {
      const float relu = std::max(in[i], 0.0f);
      ASSERT_EQ(got[i], 2 * relu) << i;
      ASSERT_EQ(reshaped[i], relu) << i;
    }
  }
  // x, a (with b and d), c, e and the output f: five buffers, not seven.
  EXPECT_EQ((*rt)->Report().subgraphs[0].unshared_bytes, 5u * 1024);
}

// A HARD_SWISH is fused into the float CONV_2D or DEPTHWISE_CONV_2D that
// produces its input (the kernel applies it before storing; its output
// shares the convolution's buffer) only where nothing else reads the
// convolution's output, neither tensor is a model input or output, and the
// producer takes it: here conv1 -> HARD_SWISH fuses; conv2's output is also
// an ADD input, so its HARD_SWISH runs on its own, as does the HARD_SWISH
// whose output is the model's and the one after an ADD (no epilogue).
TEST(RuntimeTest, FusesHardSwishIntoTheConvolutionThatFeedsIt) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 4, 4, 8});
  std::vector<float> wv(8 * 8), bv(8);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(i % 9) * 0.25f - 1.0f;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i) - 3.5f;
  TensorId w = g.Constant<float>("w", {8, 1, 1, 8}, wv);
  TensorId b = g.Constant<float>("b", {8}, bv);
  tfl::Conv2DOptionsT o;
  o.padding = tfl::Padding_VALID, o.stride_h = 1, o.stride_w = 1;
  auto conv = [&](TensorId in, const char* name) {
    return g.Op(tfl::BuiltinOperator_CONV_2D).In(in, w, b).Options(o).Out(name, F32, {1, 4, 4, 8});
  };
  auto hard_swish = [&](TensorId in, const char* name) {
    return g.Op(tfl::BuiltinOperator_HARD_SWISH).In(in).Out(name, F32, {1, 4, 4, 8});
  };
  TensorId c1 = conv(x, "c1");                                   // op 0
  TensorId h1 = hard_swish(c1, "h1");                            // op 1: fused
  TensorId c2 = conv(h1, "c2");                                  // op 2
  TensorId h2 = hard_swish(c2, "h2");                            // op 3: c2 read twice
  TensorId s = g.Op(tfl::BuiltinOperator_ADD).In(c2, h2).Out("s", F32, {1, 4, 4, 8});  // op 4
  TensorId h3 = hard_swish(s, "h3");                             // op 5: after ADD
  TensorId c3 = conv(h3, "c3");                                  // op 6
  TensorId y = hard_swish(c3, "y");                              // op 7: model output
  g.Output(y);
  auto rt = LoadBuilt(mb, 2);
  ASSERT_TRUE(rt.ok()) << rt.status();
  const RuntimeReport report = (*rt)->Report();
  const std::vector<OpReport>& ops = report.subgraphs[0].ops;
  ASSERT_EQ(ops.size(), 8u);
  EXPECT_EQ(ops[0].detail, "Conv2D + HARD_SWISH of op 1");
  EXPECT_EQ(ops[1].detail, "fused into op 0 (CONV_2D)");
  EXPECT_EQ(ops[1].where, OpReport::Where::kCpu);
  for (int i : {3, 5, 7}) EXPECT_EQ(ops[i].detail, "HardSwish") << "op " << i;
  EXPECT_EQ(report.CountOps(OpReport::Where::kCpu), 8);

  // The same values as unfused: each step computed here in the kernels'
  // order (bias + sum over input channels, in float).
  std::vector<float> in(128);
  for (int i = 0; i < 128; ++i) in[i] = static_cast<float>(i % 11) * 0.5f - 2.5f;
  SetInput(**rt, 0, in);
  ASSERT_TRUE((*rt)->Invoke().ok());
  auto conv_ref = [&](const std::vector<float>& v) {
    std::vector<float> out(128);
    for (int p = 0; p < 16; ++p) {
      for (int oc = 0; oc < 8; ++oc) {
        float acc = bv[oc];
        for (int ic = 0; ic < 8; ++ic) acc += v[p * 8 + ic] * wv[oc * 8 + ic];
        out[p * 8 + oc] = acc;
      }
    }
    return out;
  };
  auto hs_ref = [](std::vector<float> v) {
    for (float& f : v) f = f * std::min(std::max(f + 3.0f, 0.0f), 6.0f) / 6.0f;
    return v;
  };
  const std::vector<float> r_c2 = conv_ref(hs_ref(conv_ref(in)));
  std::vector<float> r_s = hs_ref(r_c2);
  for (int i = 0; i < 128; ++i) r_s[i] += r_c2[i];
  testing::ExpectNear(GetOutput<float>(**rt, 0), hs_ref(conv_ref(hs_ref(r_s))), 8,
                      "conv / HARD_SWISH chain", /*term_scale=*/8.0);
}

TEST(RuntimeTest, BoundBuffersAreUsedInPlace) {
  ModelBuilder mb;
  BuildChain(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  std::vector<float> in = kX, out(6, -7);
  ASSERT_TRUE((*rt)->BindInput(0, in.data(), in.size() * 4).ok());
  ASSERT_TRUE((*rt)->BindOutput(0, out.data(), out.size() * 4).ok());
  EXPECT_EQ((*rt)->input(0)->data<float>(), in.data());
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(out, kY);
  absl::Status wrong = (*rt)->BindInput(0, in.data(), 4);
  EXPECT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.message()), HasSubstr("24 bytes"));
  EXPECT_TRUE((*rt)->BindOutput(0, nullptr, 0).ok());
  EXPECT_NE((*rt)->output(0)->data<float>(), out.data());
}

TEST(RuntimeTest, SignaturesByKeyAndName) {
  ModelBuilder mb;
  BuildChain(mb);
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  auto sig = (*rt)->signature("serving_default");
  ASSERT_TRUE(sig.ok()) << sig.status();
  Tensor* in = (*sig)->input("input");
  ASSERT_NE(in, nullptr);
  std::memcpy(in->raw_data, kX.data(), 24);
  ASSERT_TRUE((*sig)->Invoke().ok());
  const Tensor* out = (*sig)->output("output");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(std::vector<float>(out->data<float>(), out->data<float>() + 6),
            kY);
  auto missing = (*rt)->signature("nope");
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("serving_default"));
}

TEST(RuntimeTest, FoldsOpsWhoseInputsAreConstant) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {3});
  TensorId c = g.Constant<float>("c", {3}, {1, 2, 3});
  TensorId c2 = g.Op(tfl::BuiltinOperator_MUL).In(c, c).Out("c2", F32, {3});
  g.Output(g.Op(tfl::BuiltinOperator_ADD).In(x, c2).Out("y", F32, {3}));
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  RuntimeReport report = (*rt)->Report();
  EXPECT_EQ(report.CountOps(OpReport::Where::kFolded), 1);
  EXPECT_EQ(report.CountOps(OpReport::Where::kCpu), 1);
  SetInput<float>(**rt, 0, {1, 1, 1});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<float>(**rt, 0), (std::vector<float>{2, 5, 10}));
}

TEST(RuntimeTest, RefusesAtLoadListingEveryOpWithoutAKernel) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {4});
  TensorId a = g.CustomOp("MyCustom").In(x).Out("a", F32, {4});
  TensorId b = g.Op(tfl::BuiltinOperator_RELU).In(x).Out("b", F32, {4});
  TensorId c = g.Op(tfl::BuiltinOperator_HASHTABLE_LOOKUP).In(b, b).Out(
      "c", F32, {4});
  g.Output(a).Output(c);
  auto rt = LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_TRUE(absl::IsUnimplemented(rt.status())) << rt.status();
  const std::string msg(rt.status().message());
  EXPECT_THAT(msg, HasSubstr("2 ops cannot run"));
  EXPECT_THAT(msg, HasSubstr("op 0 (CUSTOM:MyCustom): no CPU kernel for "
                             "custom op 'MyCustom'"));
  EXPECT_THAT(msg, HasSubstr("op 2 (HASHTABLE_LOOKUP): no CPU kernel"));
}

TEST(RuntimeTest, RefusesTheDeprecatedCallOpAtLoad) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1});
  g.Output(g.Op(tfl::BuiltinOperator_CALL).In(x).Out("y", F32, {1}));
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("op 0 (CALL): the deprecated CALL op is not supported"));
}

TEST(RuntimeTest, ResizeInputsReshapesWhatTheModelLeavesOpen) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 3});
  TensorId c = g.Constant<float>("c", {3}, {1, 2, 3});
  g.Output(g.Op(tfl::BuiltinOperator_MUL).In(x, c).Out("y", F32, {1, 3}));
  Model model = std::move(mb).BuildUnverified();
  model.subgraphs[0].tensors[x].shape_signature = {-1, 3};
  auto rt = Runtime::LoadModel(std::move(model));
  ASSERT_TRUE(rt.ok()) << rt.status();

  ASSERT_TRUE((*rt)->ResizeInputs({{4, 3}}).ok());
  ASSERT_EQ((*rt)->input(0)->shape, (Shape{4, 3}));
  std::vector<float> in(12);
  for (int i = 0; i < 12; ++i) in[i] = static_cast<float>(i);
  std::memcpy((*rt)->input(0)->raw_data, in.data(), sizeof(float) * 12);
  ASSERT_TRUE((*rt)->Invoke().ok());
  const Tensor* y = (*rt)->output(0);
  ASSERT_EQ(y->shape, (Shape{4, 3}));
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(y->data<float>()[i], in[i] * (i % 3 + 1)) << i;
  }
  // Back to one row; the binding API works on the new tensors.
  ASSERT_TRUE((*rt)->ResizeInputs({{1, 3}}).ok());
  float one[3] = {2, 2, 2}, out[3] = {};
  ASSERT_TRUE((*rt)->BindInput(0, one, sizeof(one)).ok());
  ASSERT_TRUE((*rt)->BindOutput(0, out, sizeof(out)).ok());
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{2, 4, 6}));

  // Refusals name the input and leave the runtime as it was.
  absl::Status st = (*rt)->ResizeInputs({{2, 4}});
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("input 0 ('x'): dimension 1 is fixed at 3 by the model"));
  st = (*rt)->ResizeInputs({{6}});
  EXPECT_THAT(std::string(st.message()), HasSubstr("rank 1 given, the model's is 2"));
  st = (*rt)->ResizeInputs({});
  EXPECT_THAT(std::string(st.message()), HasSubstr("has 1 inputs, 0 shapes given"));
  EXPECT_EQ((*rt)->input(0)->shape, (Shape{1, 3}));
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{2, 4, 6}));
}

// values, indices = top_k(x, k) with k an input; y = values + values, an op
// fed by a shape known only at invoke.
void BuildRuntimeK(ModelBuilder& mb) {
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 6});
  TensorId k = g.Input("k", tfl::TensorType_INT32, {});
  auto topk = g.Op(tfl::BuiltinOperator_TOPK_V2).In(x, k);
  TensorId values = topk.Out("values", F32, {1, -1});
  TensorId indices = topk.Out("indices", tfl::TensorType_INT32, {1, -1});
  TensorId y =
      g.Op(tfl::BuiltinOperator_ADD).In(values, values).Out("y", F32, {1, -1});
  g.Output(y).Output(indices);
}

TEST(RuntimeTest, ShapesComputedAtInvoke) {
  ModelBuilder mb;
  BuildRuntimeK(mb);
  auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<float>(**rt, 0, {3, 9, 1, 7, 5, 8});
  for (int32_t k : {2, 5, 1, 5}) {
    SetInput<int32_t>(**rt, 1, {k});
    ASSERT_TRUE((*rt)->Invoke().ok()) << "k = " << k;
    const std::vector<float> doubled = {18, 16, 14, 10, 6};
    const std::vector<int32_t> order = {1, 5, 3, 4, 0};
    EXPECT_EQ((*rt)->output(0)->shape, (Shape{1, k}));
    EXPECT_EQ(GetOutput<float>(**rt, 0),
              std::vector<float>(doubled.begin(), doubled.begin() + k));
    EXPECT_EQ(GetOutput<int32_t>(**rt, 1),
              std::vector<int32_t>(order.begin(), order.begin() + k));
  }
  // A k the input cannot give fails that invoke, naming the op.
  SetInput<int32_t>(**rt, 1, {7});
  absl::Status st = (*rt)->Invoke();
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("subgraph 0 op 0 (TOPK_V2): k = 7 is outside [0, 6]"));
  // Such outputs have no size to bind; the report says where shapes wait.
  float out[6];
  st = (*rt)->BindOutput(0, out, sizeof(out));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("output 'y' gets its shape only at invoke"));
  EXPECT_THAT((*rt)->Report().ToString(),
              HasSubstr("op 1 ADD: cpu (Add, shapes at invoke)"));
}

TEST(RuntimeTest, CallsPassShapesComputedAtInvoke) {
  // An IF whose input gets its shape at invoke (the branch passes it
  // through), and an IF whose branch yields one: the IF's output is shaped
  // at invoke either way.
  for (bool in_branch : {false, true}) {
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId c = g.Input("c", tfl::TensorType_BOOL, {});
    TensorId x = g.Input("x", F32, {4});
    TensorId arg = x;
    if (!in_branch) {
      arg = g.Op(tfl::BuiltinOperator_WHERE)
                .In(x)
                .Out("w", tfl::TensorType_INT64, {-1, 1});
    }
    const tfl::TensorType t = in_branch ? F32 : tfl::TensorType_INT64;
    tfl::IfOptionsT o;
    o.then_subgraph_index = 1;
    o.else_subgraph_index = 1;
    g.Output(g.Op(tfl::BuiltinOperator_IF)
                 .In(c, arg)
                 .Options(o)
                 .Out("y", tfl::TensorType_INT64, {-1, 1}));
    auto& b = mb.Subgraph("branch");
    TensorId bx = b.Input("x", t, in_branch ? std::vector<int32_t>{4}
                                            : std::vector<int32_t>{-1, 1});
    if (in_branch) {
      b.Output(b.Op(tfl::BuiltinOperator_WHERE)
                   .In(bx)
                   .Out("bw", tfl::TensorType_INT64, {-1, 1}));
    } else {
      b.Output(bx);
    }
    auto rt = Runtime::LoadModel(std::move(mb).BuildUnverified());
    ASSERT_TRUE(rt.ok()) << rt.status();
    SetInput<uint8_t>(**rt, 0, {1});
    for (const std::vector<float>& in :
         {std::vector<float>{0, 2, 0, 5}, std::vector<float>{7, 0, 0, 0},
          std::vector<float>{1, 1, 1, 1}}) {
      SetInput<float>(**rt, 1, in);
      ASSERT_TRUE((*rt)->Invoke().ok());
      std::vector<int64_t> want;
      for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] != 0) want.push_back(static_cast<int64_t>(i));
      }
      EXPECT_EQ((*rt)->output(0)->shape,
                (Shape{static_cast<int32_t>(want.size()), 1}));
      EXPECT_EQ(GetOutput<int64_t>(**rt, 0), want) << "in_branch " << in_branch;
    }
  }
}

TEST(RuntimeTest, StringTensorsAreSizedByTheirValues) {
  // words [2, 2] -> RESHAPE [4] -> GATHER(indices) -> picked; and GATHER of
  // a constant list with constant indices, computed at load.
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  constexpr auto STR = tfl::TensorType_STRING;
  TensorId words = g.Input("words", STR, {2, 2});
  TensorId idx = g.Input("idx", tfl::TensorType_INT32, {3});
  TensorId flat = g.Op(tfl::BuiltinOperator_RESHAPE)
                      .In(words, g.Constant<int32_t>("s", {1}, {4}))
                      .Out("flat", STR, {4});
  g.Output(g.Op(tfl::BuiltinOperator_GATHER).In(flat, idx).Out("picked", STR, {3}));
  const std::vector<std::string> names = {"zero", "one"};
  TensorId list = g.Constant("list", STR, {2},
                             Bytes::Own(PackStrings(absl::MakeConstSpan(names))));
  g.Output(g.Op(tfl::BuiltinOperator_GATHER)
               .In(list, g.Constant<int32_t>("i", {2}, {1, 0}))
               .Out("swapped", STR, {2}));
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  auto strings = [&](size_t i) {
    const Tensor* t = (*rt)->output(i);
    auto v = UnpackStrings(absl::MakeConstSpan(t->raw_data, t->bytes));
    EXPECT_TRUE(v.ok()) << v.status();
    return v.ok() ? std::vector<std::string>(v->begin(), v->end())
                  : std::vector<std::string>{};
  };
  absl::Status st = (*rt)->Invoke();
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("STRING input 'words' has no value: set it with "
                        "SetInputData"));
  SetInput<int32_t>(**rt, 1, {3, 0, 3});
  for (const std::vector<std::string>& in :
       {std::vector<std::string>{"a", "", "ccc", "a much longer string"},
        std::vector<std::string>{"w", "x", "y", "z"}}) {
    ASSERT_TRUE((*rt)->SetInputData(0, PackStrings(absl::MakeConstSpan(in))).ok());
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(strings(0), (std::vector<std::string>{in[3], in[0], in[3]}));
    EXPECT_EQ(strings(1), (std::vector<std::string>{"one", "zero"}));
  }
  EXPECT_THAT((*rt)->Report().ToString(), HasSubstr("op 2 GATHER: folded"));
  // Refusals: a count that does not fit the shape, binding, a bad buffer.
  const std::vector<std::string> three = {"a", "b", "c"};
  st = (*rt)->SetInputData(0, PackStrings(absl::MakeConstSpan(three)));
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("STRING input 'words' of shape [2, 2] takes 4 strings, not 3"));
  char buf[64];
  EXPECT_THAT(std::string((*rt)->BindInput(0, buf, sizeof(buf)).message()),
              HasSubstr("set it with SetInputData"));
  EXPECT_FALSE((*rt)->SetInputData(0, std::vector<uint8_t>{9, 0, 0, 0}).ok());
}

TEST(RuntimeTest, ReportsKernelErrorsWithTheOp) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", F32, {2, 3});
  TensorId b = g.Input("b", F32, {4});
  g.Output(g.Op(tfl::BuiltinOperator_ADD).In(a, b).Out("y", F32, {2, 3}));
  auto rt = LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(rt.status())) << rt.status();
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("subgraph 0 op 0 (ADD): shapes [2, 3] and [4] do not "
                        "broadcast"));
}

TEST(RuntimeTest, CompositeRunsItsDecomposition) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {3});
  tfl::StableHLOCompositeOptionsT o;
  o.name = "odml.double_relu";
  o.decomposition_subgraph_index = 1;
  TensorId y = g.Op(tfl::BuiltinOperator_STABLEHLO_COMPOSITE)
                   .In(x)
                   .Options(o)
                   .Out("y", F32, {3});
  g.Output(y);
  auto& d = mb.Subgraph("decomposition");
  TensorId dx = d.Input("x", F32, {3});
  TensorId dr = d.Op(tfl::BuiltinOperator_RELU).In(dx).Out("r", F32, {3});
  d.Output(d.Op(tfl::BuiltinOperator_ADD).In(dr, dr).Out("y", F32, {3}));
  auto rt = LoadBuilt(mb);
  ASSERT_TRUE(rt.ok()) << rt.status();
  SetInput<float>(**rt, 0, {-1, 2, 3});
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_EQ(GetOutput<float>(**rt, 0), (std::vector<float>{0, 4, 6}));
  RuntimeReport report = (*rt)->Report();
  EXPECT_EQ(report.CountOps(OpReport::Where::kCall), 1);
  EXPECT_EQ(report.CountOps(OpReport::Where::kCpu), 2);  // inside the call
}

// Dispatch libraries are looked up only for vendors a manifest names, so an
// uncompiled model needs none, wherever the directories point.
TEST(RuntimeTest, UncompiledModelNeedsNoDispatchLibrary) {
  ModelBuilder mb;
  BuildChain(mb);
  RuntimeOptions options;
  options.dispatch_dirs = {"/nonexistent"};
  auto rt = Runtime::LoadModel(*std::move(mb).Build(), options);
  EXPECT_TRUE(rt.ok()) << rt.status();
}

// --- The DispatchBackend seam -------------------------------------------

// A vendor whose "accelerator" adds its two inputs; counts its calls.
class AddingBackend : public DispatchBackend {
 public:
  explicit AddingBackend(std::string vendor, bool accept = true)
      : vendor_(std::move(vendor)), accept_(accept) {}
  absl::string_view vendor() const override { return vendor_; }
  absl::StatusOr<std::unique_ptr<DispatchExecutable>> Prepare(
      const DispatchOpInfo& op) override {
    ++prepared;
    last_module = std::string(op.module.view());
    last_module_address = reinterpret_cast<uintptr_t>(op.module.data());
    last_entry_point = op.options->entry_point;
    if (!accept_) return absl::UnimplementedError("entry point unsupported");
    class Exec : public DispatchExecutable {
     public:
      explicit Exec(int* calls) : calls_(calls) {}
      absl::Status Execute(absl::Span<const Tensor* const> in,
                           absl::Span<Tensor* const> out) override {
        ++*calls_;
        const int64_t n = out[0]->num_elements();
        for (int64_t i = 0; i < n; ++i) {
          out[0]->data<float>()[i] =
              in[0]->data<float>()[i] + in[1]->data<float>()[i];
        }
        return absl::OkStatus();
      }

     private:
      int* calls_;
    };
    return std::make_unique<Exec>(&executed);
  }
  int prepared = 0;
  int executed = 0;
  std::string last_module, last_entry_point;
  uintptr_t last_module_address = 0;

 private:
  std::string vendor_;
  bool accept_;
};

// main: y = relu(dispatch(a, b)), where the dispatch op's fallback
// subgraph 1 computes a + b on CPU. `with_fallback` false strips it.
Model CompiledModel(bool with_fallback) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId a = g.Input("a", F32, {4});
  TensorId b = g.Input("b", F32, {4});
  DispatchOpOptions o;
  o.vendor = "acme";
  o.module_buffer = AddBuffer(mb.model(), Bytes::Copy("ADD a b"));
  o.entry_point = "partition_0";
  o.fallback_subgraph = with_fallback ? 1 : -1;
  TensorId d = g.CustomOp(kDispatchCustomCode)
                   .In(a, b)
                   .CustomOptions(EncodeDispatchOpOptions(o))
                   .Out("d", F32, {4});
  g.Output(g.Op(tfl::BuiltinOperator_RELU).In(d).Out("y", F32, {4}));
  auto& f = mb.Subgraph("partition_0");
  TensorId fa = f.Input("a", F32, {4});
  TensorId fb = f.Input("b", F32, {4});
  f.Output(f.Op(tfl::BuiltinOperator_ADD).In(fa, fb).Out("s", F32, {4}));
  return std::move(mb).BuildUnverified();
}

void ExpectRelusSum(Runtime& rt) {
  SetInput<float>(rt, 0, {1, -5, 3, 0});
  SetInput<float>(rt, 1, {1, 2, -4, 2});
  ASSERT_TRUE(rt.Invoke().ok());
  EXPECT_EQ(GetOutput<float>(rt, 0), (std::vector<float>{2, 0, 0, 2}));
}

TEST(DispatchTest, RunsDispatchOpsOnTheVendorBackend) {
  auto backend = std::make_shared<AddingBackend>("acme");
  RuntimeOptions options;
  options.dispatch_backends = {backend};
  auto rt = Runtime::LoadModel(CompiledModel(true), options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(backend->prepared, 1);
  EXPECT_EQ(backend->last_module, "ADD a b");
  EXPECT_EQ(backend->last_entry_point, "partition_0");
  ExpectRelusSum(**rt);
  EXPECT_EQ(backend->executed, 1);
  RuntimeReport report = (*rt)->Report();
  EXPECT_EQ(report.CountOps(OpReport::Where::kVendor), 1);
  EXPECT_THAT(report.ToString(), HasSubstr("vendor (acme)"));
}

TEST(DispatchTest, VendorsGetTheirModule64ByteAligned) {
  // Found by tests/fuzz (xnnpack_bytecode): a module a file places at an
  // odd address (inside the flatbuffer) reached the vendor there, and the
  // xnnpack library read its 8-byte fields misaligned (UBSan).
  Model model = CompiledModel(true);
  auto storage = std::make_shared<std::vector<uint8_t>>(128);
  uint8_t* at = storage->data() + 1;
  while (reinterpret_cast<uintptr_t>(at) % 64 == 0) ++at;
  std::memcpy(at, "ADD a b", 7);
  bool moved = false;
  for (Buffer& b : model.buffers) {
    if (b.data.view() == "ADD a b") {
      b.data = Bytes::View({at, 7}, storage);
      moved = true;
    }
  }
  ASSERT_TRUE(moved);
  auto backend = std::make_shared<AddingBackend>("acme");
  RuntimeOptions options;
  options.dispatch_backends = {backend};
  auto rt = Runtime::LoadModel(std::move(model), options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(backend->last_module, "ADD a b");
  EXPECT_EQ(backend->last_module_address % 64, 0u);
  ExpectRelusSum(**rt);
}

TEST(DispatchTest, FallsBackToCpuWithoutABackend) {
  auto rt = Runtime::LoadModel(CompiledModel(true));
  ASSERT_TRUE(rt.ok()) << rt.status();
  ExpectRelusSum(**rt);
  RuntimeReport report = (*rt)->Report();
  EXPECT_EQ(report.CountOps(OpReport::Where::kFallback), 1);
  EXPECT_THAT(report.ToString(),
              HasSubstr("no dispatch backend for vendor 'acme'"));
  // Never silent: a warning names the op, why and what to do (also printed
  // on stderr).
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_THAT(report.warnings[0], HasSubstr("runs on the CPU"));
  EXPECT_THAT(report.warnings[0],
              HasSubstr("no dispatch backend for vendor 'acme'"));
  EXPECT_THAT(report.warnings[0], HasSubstr("--dispatch-dir"));
}

// kRequireVendorOps: a dispatch op that would fall back fails the load,
// naming it; ops no vendor took may still run on the CPU.
TEST(DispatchTest, RequireVendorOpsRefusesAFallback) {
  RuntimeOptions options;
  options.policy = AcceleratorPolicy::kRequireVendorOps;
  auto rt = Runtime::LoadModel(CompiledModel(true), options);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(rt.status().message(), HasSubstr("policy kRequireVendorOps"));
  EXPECT_THAT(rt.status().message(),
              HasSubstr("no dispatch backend for vendor 'acme'"));
}

TEST(DispatchTest, FallsBackWhenTheBackendRefusesTheOp) {
  auto backend = std::make_shared<AddingBackend>("acme", /*accept=*/false);
  RuntimeOptions options;
  options.dispatch_backends = {backend};
  auto rt = Runtime::LoadModel(CompiledModel(true), options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  ExpectRelusSum(**rt);
  EXPECT_EQ(backend->executed, 0);
  EXPECT_THAT((*rt)->Report().ToString(),
              HasSubstr("could not prepare it: entry point unsupported"));
}

TEST(DispatchTest, RequireAcceleratorListsEveryCpuOp) {
  RuntimeOptions options;
  options.policy = AcceleratorPolicy::kRequireAccelerator;
  auto rt = Runtime::LoadModel(CompiledModel(true), options);
  ASSERT_FALSE(rt.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(rt.status())) << rt.status();
  const std::string msg(rt.status().message());
  EXPECT_THAT(msg, HasSubstr("2 ops would run on CPU"));
  EXPECT_THAT(msg, HasSubstr("op 0 (CUSTOM:GRAFT_DISPATCH): fallback "
                             "subgraph 1 (no dispatch backend"));
  EXPECT_THAT(msg, HasSubstr("op 1 (RELU): CPU kernel Relu"));
}

TEST(DispatchTest, RequireAcceleratorStillListsCpuOpsBesideVendorOps) {
  RuntimeOptions options;
  options.policy = AcceleratorPolicy::kRequireAccelerator;
  options.dispatch_backends = {std::make_shared<AddingBackend>("acme")};
  auto rt = Runtime::LoadModel(CompiledModel(true), options);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("1 ops would run on CPU:\n  subgraph 0 op 1 (RELU)"));
}

TEST(DispatchTest, FailsWithoutBackendOrFallback) {
  auto rt = Runtime::LoadModel(CompiledModel(false));
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("no dispatch backend for vendor 'acme', and the op "
                        "has no fallback subgraph"));
}

TEST(DispatchTest, ManifestIsCheckedBeforeAnyOpIsPrepared) {
  class Picky : public AddingBackend {
   public:
    Picky() : AddingBackend("acme") {}
    absl::Status CheckCompatibility(const ManifestVendor& m) override {
      ++checked;
      return absl::FailedPreconditionError(
          absl::StrCat("compiled for ", m.soc_model));
    }
    int checked = 0;
  };
  Model model = CompiledModel(true);
  Manifest manifest;
  ManifestVendor v;
  v.vendor = "acme";
  v.soc_model = "ACME-9000";
  manifest.vendors.push_back(v);
  WriteManifest(model, manifest);
  auto backend = std::make_shared<Picky>();
  RuntimeOptions options;
  options.dispatch_backends = {backend};
  auto rt = Runtime::LoadModel(std::move(model), options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(backend->checked, 1);
  EXPECT_EQ(backend->prepared, 0);
  ExpectRelusSum(**rt);
  EXPECT_THAT((*rt)->Report().ToString(),
              HasSubstr("rejected the model: compiled for ACME-9000"));
}

TEST(DispatchTest, CompiledModelRoundTripsThroughAFile) {
  testing::TempDir tmp;
  const std::string path = tmp.Join("compiled.tflite");
  ASSERT_TRUE(SaveModel(CompiledModel(true), path).ok());
  auto backend = std::make_shared<AddingBackend>("acme");
  RuntimeOptions options;
  options.dispatch_backends = {backend};
  auto rt = Runtime::Load(path, options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  EXPECT_EQ(backend->last_module, "ADD a b");
  ExpectRelusSum(**rt);
}

// --- Issue 17: the vendor boundary and concurrent use ---------------------

// CompiledModel(true) with a manifest listing vendor acme's module, its size
// and hash; `flip` flips one byte of the module afterwards.
Model CompiledModelWithManifest(bool flip) {
  Model model = CompiledModel(true);
  auto options =
      DecodeDispatchOpOptions(model.subgraphs[0].ops[0].custom_options);
  EXPECT_TRUE(options.ok()) << options.status();
  const uint32_t buffer = options->module_buffer;
  Manifest manifest;
  ManifestVendor v;
  v.vendor = "acme";
  ManifestModule m;
  m.buffer = buffer;
  m.size = model.buffers[buffer].data.size();
  m.hash = manifest.HashModule(model.buffers[buffer].data.span());
  v.modules.push_back(m);
  manifest.vendors.push_back(v);
  WriteManifest(model, manifest);
  if (flip) model.buffers[buffer].data = Bytes::Copy("ADD a c");
  return model;
}

TEST(DispatchTest, AFlippedBytecodeByteFailsTheLoadBeforeTheVendorSeesIt) {
  auto backend = std::make_shared<AddingBackend>("acme");
  RuntimeOptions options;
  options.dispatch_backends = {backend};
  auto rt = Runtime::LoadModel(CompiledModelWithManifest(true), options);
  ASSERT_FALSE(rt.ok());
  EXPECT_EQ(rt.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("vendor 'acme' module 0 (buffer"));
  EXPECT_THAT(std::string(rt.status().message()),
              HasSubstr("the bytecode changed since"));
  EXPECT_EQ(backend->prepared, 0);
  // Unflipped, the same model runs on the vendor.
  auto intact = Runtime::LoadModel(CompiledModelWithManifest(false), options);
  ASSERT_TRUE(intact.ok()) << intact.status();
  EXPECT_EQ(backend->prepared, 1);
}

// A dispatch library that is there but does not load (here: not an ELF
// file) is said, with dlopen's message: a warning and a CPU fallback, or the
// end of the load under a policy requiring vendors. It used to be skipped
// silently.
TEST(DispatchTest, ADispatchLibraryThatDoesNotLoadIsNeverSilent) {
  testing::TempDir dir;
  {
    std::FILE* f =
        std::fopen(dir.Join("libgraft_dispatch_acme.so").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not a shared library\n", f);
    std::fclose(f);
  }
  RuntimeOptions options;
  options.dispatch_dirs = {dir.path()};
  auto rt = Runtime::LoadModel(CompiledModelWithManifest(false), options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  ExpectRelusSum(**rt);
  const RuntimeReport report = (*rt)->Report();
  ASSERT_FALSE(report.warnings.empty());
  EXPECT_THAT(report.warnings[0], HasSubstr("did not load"));
  EXPECT_THAT(report.warnings[0], HasSubstr("vendor 'acme'"));
  EXPECT_THAT(report.warnings[0], HasSubstr("cannot load shared library"));
  EXPECT_THAT(report.ToString(),
              HasSubstr("the dispatch library of vendor 'acme' did not load"));
  for (AcceleratorPolicy policy : {AcceleratorPolicy::kRequireVendorOps,
                                   AcceleratorPolicy::kRequireAccelerator}) {
    options.policy = policy;
    auto refused =
        Runtime::LoadModel(CompiledModelWithManifest(false), options);
    ASSERT_FALSE(refused.ok());
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("1 dispatch library did not load"));
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("cannot load shared library"));
  }
}

// A vendor whose Execute waits until released, so a test can hold one
// Invoke in flight.
class BlockingBackend : public DispatchBackend {
 public:
  absl::string_view vendor() const override { return "acme"; }
  absl::StatusOr<std::unique_ptr<DispatchExecutable>> Prepare(
      const DispatchOpInfo&) override {
    class Exec : public DispatchExecutable {
     public:
      explicit Exec(BlockingBackend* b) : b_(b) {}
      absl::Status Execute(absl::Span<const Tensor* const>,
                           absl::Span<Tensor* const>) override {
        b_->entered.store(true);
        while (!b_->release.load()) std::this_thread::yield();
        return absl::OkStatus();
      }

     private:
      BlockingBackend* b_;
    };
    return std::make_unique<Exec>(this);
  }
  std::atomic<bool> entered{false}, release{false};
};

TEST(ConcurrencyTest, RefusesASecondThreadWhileOneInvokes) {
  auto backend = std::make_shared<BlockingBackend>();
  RuntimeOptions options;
  options.dispatch_backends = {backend};
  auto rt = Runtime::LoadModel(CompiledModel(true), options);
  ASSERT_TRUE(rt.ok()) << rt.status();
  absl::Status first;
  std::thread t([&] { first = (*rt)->Invoke(); });
  while (!backend->entered.load()) std::this_thread::yield();
  absl::Status second = (*rt)->Invoke();
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.message()),
              HasSubstr("another thread is using this Runtime"));
  float buffer[4] = {};
  EXPECT_EQ((*rt)->BindInput(0, buffer, sizeof(buffer)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*rt)->SetInputData(0, {}).code(),
            absl::StatusCode::kFailedPrecondition);
  backend->release.store(true);
  t.join();
  EXPECT_TRUE(first.ok()) << first;
  // Free again once the first call returned.
  EXPECT_TRUE((*rt)->Invoke().ok());
}

}  // namespace
}  // namespace graft
