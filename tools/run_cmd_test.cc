// The runtime's per-op profile (RuntimeOptions::profiling,
// Runtime::Profile) and `graft run --profile`, in process. Checks counts,
// coverage and consistency of the sums, never timing values.
#include "tools/run_cmd.h"

#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compiled_format.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/chrome_trace.h"
#include "tools/placement_map.h"
#include "tools/placement_page.h"

namespace graft {
namespace {

using ::testing::HasSubstr;

constexpr tfl::TensorType F32 = tfl::TensorType_FLOAT32;

// A vendor whose "accelerator" copies its first input to its output and,
// when asked to profile, says each run took it 100 ns.
constexpr int64_t kVendorNs = 100;
class CopyingBackend : public DispatchBackend {
 public:
  absl::string_view vendor() const override { return "acme"; }
  absl::StatusOr<std::unique_ptr<DispatchExecutable>> Prepare(
      const DispatchOpInfo& op) override {
    class Exec : public DispatchExecutable {
     public:
      explicit Exec(bool profiling) : profiling_(profiling) {}
      absl::Status Execute(absl::Span<const Tensor* const> in,
                           absl::Span<Tensor* const> out) override {
        std::copy(in[0]->raw_data, in[0]->raw_data + in[0]->bytes,
                  out[0]->raw_data);
        return absl::OkStatus();
      }
      int64_t LastVendorTimeNs() const override {
        return profiling_ ? kVendorNs : -1;
      }
      // Two instructions, at 7 (60 ns) and 9 (40 ns), on a clock of the
      // vendor's own whose epoch moves on every run.
      bool LastVendorSpans(std::vector<VendorSpan>* out) const override {
        if (!profiling_) return false;
        epoch_ += 1000000;
        *out = {{"copy", 7, epoch_, epoch_ + 60},
                {"tail", 9, epoch_ + 60, epoch_ + kVendorNs}};
        return true;
      }

     private:
      bool profiling_;
      mutable uint64_t epoch_ = 5000000000;
    };
    return std::make_unique<Exec>(op.profiling);
  }
};

// main (subgraph 0):
//   0 c = ADD(k1, k2)            folded at load
//   1 a = ADD(x, c)              cpu
//   2 r = COMPOSITE(a)           call of subgraph 1: RELU, ADD
//   3 d = DISPATCH(r)            vendor "acme", entry "partition_0"
//   4 y = RELU(d)                cpu
Model ProfiledModel() {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {4});
  TensorId k1 = g.Constant<float>("k1", {4}, {1, 2, 3, 4});
  TensorId k2 = g.Constant<float>("k2", {4}, {1, 1, 1, 1});
  TensorId c = g.Op(tfl::BuiltinOperator_ADD).In(k1, k2).Out("c", F32, {4});
  TensorId a = g.Op(tfl::BuiltinOperator_ADD).In(x, c).Out("a", F32, {4});
  tfl::StableHLOCompositeOptionsT co;
  co.name = "odml.double_relu";
  co.decomposition_subgraph_index = 1;
  TensorId r = g.Op(tfl::BuiltinOperator_STABLEHLO_COMPOSITE)
                   .In(a)
                   .Options(co)
                   .Out("r", F32, {4});
  DispatchOpOptions o;
  o.vendor = "acme";
  o.module_buffer = AddBuffer(mb.model(), Bytes::Copy("COPY"));
  o.entry_point = "partition_0";
  TensorId d = g.CustomOp(kDispatchCustomCode)
                   .In(r)
                   .CustomOptions(EncodeDispatchOpOptions(o))
                   .Out("d", F32, {4});
  g.Output(g.Op(tfl::BuiltinOperator_RELU).In(d).Out("y", F32, {4}));
  auto& s = mb.Subgraph("decomposition");
  TensorId sx = s.Input("x", F32, {4});
  TensorId sr = s.Op(tfl::BuiltinOperator_RELU).In(sx).Out("r", F32, {4});
  s.Output(s.Op(tfl::BuiltinOperator_ADD).In(sr, sr).Out("y", F32, {4}));
  return std::move(mb).BuildUnverified();
}

absl::StatusOr<std::unique_ptr<Runtime>> Load(bool profiling) {
  RuntimeOptions options;
  options.profiling = profiling;
  options.dispatch_backends = {std::make_shared<CopyingBackend>()};
  return Runtime::LoadModel(ProfiledModel(), options);
}

TEST(RuntimeProfileTest, EmptyWhenProfilingIsOff) {
  auto rt = Load(/*profiling=*/false);
  ASSERT_TRUE(rt.ok()) << rt.status();
  ASSERT_TRUE((*rt)->Invoke().ok());
  EXPECT_TRUE((*rt)->Profile().subgraphs.empty());
}

// A dispatch op's vendor spans: summed per location over the calls, and
// kept per call relative to the call's start; every call's and run's start.
TEST(RuntimeProfileTest, KeepsTheVendorsSpansPerLocationAndPerCall) {
  auto rt = Load(/*profiling=*/true);
  ASSERT_TRUE(rt.ok()) << rt.status();
  constexpr int kRuns = 4;
  for (int i = 0; i < kRuns; ++i) ASSERT_TRUE((*rt)->Invoke().ok());
  RuntimeProfile profile = (*rt)->Profile();
  ASSERT_EQ(profile.subgraphs.size(), 1u);
  const SubgraphProfile& s = profile.subgraphs[0];
  ASSERT_EQ(s.run_start_ns.size(), static_cast<size_t>(kRuns));
  ASSERT_EQ(s.run_ns.size(), static_cast<size_t>(kRuns));
  for (const OpProfile& op : s.ops) {
    SCOPED_TRACE(op.name);
    ASSERT_EQ(op.call_start_ns.size(), static_cast<size_t>(kRuns));
    ASSERT_EQ(op.call_ns.size(), static_cast<size_t>(kRuns));
    for (int r = 0; r < kRuns; ++r) {
      // Each call inside its run.
      EXPECT_GE(op.call_start_ns[r], s.run_start_ns[r]);
      EXPECT_LE(op.call_start_ns[r] + op.call_ns[r],
                s.run_start_ns[r] + s.run_ns[r]);
    }
    if (op.where != OpReport::Where::kVendor) {
      EXPECT_TRUE(op.vendor_locations.empty());
      EXPECT_TRUE(op.vendor_spans.empty());
      continue;
    }
    ASSERT_EQ(op.vendor_locations.size(), 2u);
    EXPECT_EQ(op.vendor_locations[0].vendor_location, 7u);
    EXPECT_EQ(op.vendor_locations[0].name, "copy");
    EXPECT_EQ(op.vendor_locations[0].spans, kRuns);
    EXPECT_EQ(op.vendor_locations[0].total_ns, kRuns * 60);
    EXPECT_EQ(op.vendor_locations[1].vendor_location, 9u);
    EXPECT_EQ(op.vendor_locations[1].total_ns, kRuns * 40);
    ASSERT_EQ(op.vendor_spans.size(), 2u * kRuns);
    for (int r = 0; r < kRuns; ++r) {
      const OpProfile::TracedSpan& a = op.vendor_spans[2 * r];
      const OpProfile::TracedSpan& b = op.vendor_spans[2 * r + 1];
      EXPECT_EQ(a.call, r);
      EXPECT_EQ(b.call, r);
      EXPECT_EQ(a.start_ns, 0);
      EXPECT_EQ(a.end_ns, 60);
      EXPECT_EQ(b.start_ns, 60);
      EXPECT_EQ(b.end_ns, kVendorNs);
    }
  }
  // The warm-up is dropped with the rest.
  (*rt)->ResetProfile();
  ASSERT_TRUE((*rt)->Invoke().ok());
  const RuntimeProfile after_reset = (*rt)->Profile();
  ASSERT_EQ(after_reset.subgraphs.size(), 1u);
  for (const OpProfile& op : after_reset.subgraphs[0].ops) {
    EXPECT_EQ(op.call_start_ns.size(), 1u);
    if (op.where == OpReport::Where::kVendor) {
      EXPECT_EQ(op.vendor_locations[0].spans, 1);
      EXPECT_EQ(op.vendor_spans.size(), 2u);
    }
  }
}

// The trace of those runs: complete events, ts never decreasing, each op
// inside a run, the vendor's spans inside their dispatch op's call.
TEST(RuntimeProfileTest, ChromeTraceNestsOpsInRunsAndSpansInTheirOp) {
  auto rt = Load(/*profiling=*/true);
  ASSERT_TRUE(rt.ok()) << rt.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*rt)->Invoke().ok());
  const std::string trace =
      tools::ChromeTraceJson((*rt)->model(), (*rt)->Profile(), 0);
  // 3 runs; 6 op calls and 2 spans per run.
  size_t runs = 0, spans = 0, events = 0;
  for (size_t at = trace.find("\"ph\":\"X\""); at != std::string::npos;
       at = trace.find("\"ph\":\"X\"", at + 1)) {
    ++events;
  }
  for (size_t at = trace.find("\"cat\":\"run\""); at != std::string::npos;
       at = trace.find("\"cat\":\"run\"", at + 1)) {
    ++runs;
  }
  for (size_t at = trace.find("\"cat\":\"vendor span\"");
       at != std::string::npos;
       at = trace.find("\"cat\":\"vendor span\"", at + 1)) {
    ++spans;
  }
  EXPECT_EQ(runs, 3u) << trace;
  EXPECT_EQ(spans, 6u) << trace;
  EXPECT_EQ(events, 3u + 3 * 6 + 6) << trace;
  EXPECT_THAT(trace, HasSubstr("\"name\":\"copy\""));
  EXPECT_THAT(trace, HasSubstr("\"vendor_location\":\"9\""));
}

// The y of op `op`'s box in the page's SVG, or -1.
double BoxY(const std::string& html, int op) {
  const std::string key = absl::StrCat("data-op=\"", op, "\"");
  size_t at = html.find(key);
  if (at == std::string::npos) return -1;
  at = html.find("<rect ", at);
  at = html.find(" y=\"", at);
  return std::stod(html.substr(at + 4));
}

// The graph: an op one layer below the lowest of its producers (a diamond
// has its two middle ops side by side); a model larger than kMaxGraphOps
// shows its first kMaxGraphOps ops and says so.
TEST(PlacementMapHtmlTest, LayersOpsBelowTheirProducersAndCapsTheGraph) {
  tools::PlacementMap diamond;
  for (int32_t i = 0; i < 4; ++i) {
    tools::PlacedOp p;
    p.op = i;
    p.name = "ADD";
    p.where = "cpu";
    diamond.ops.push_back(p);
  }
  diamond.ops[1].inputs_from = {0};
  diamond.ops[2].inputs_from = {0};
  diamond.ops[3].inputs_from = {1, 2};
  const std::string html = tools::PlacementMapHtml(diamond, "m.tflite");
  EXPECT_LT(BoxY(html, 0), BoxY(html, 1));
  EXPECT_EQ(BoxY(html, 1), BoxY(html, 2));
  EXPECT_LT(BoxY(html, 2), BoxY(html, 3));
  EXPECT_THAT(html, HasSubstr("<g class=\"op place-cpu\" data-op=\"3\""));

  tools::PlacementMap chain;
  const int32_t n = static_cast<int32_t>(tools::kMaxGraphOps) + 500;
  for (int32_t i = 0; i < n; ++i) {
    tools::PlacedOp p;
    p.op = i;
    p.name = "RELU";
    p.where = "vendor";
    p.vendor = "acme";
    if (i > 0) p.inputs_from = {i - 1};
    chain.ops.push_back(p);
  }
  const std::string big = tools::PlacementMapHtml(chain, "big.tflite");
  size_t boxes = 0;
  for (size_t at = big.find("<g class=\"op place-v-acme");
       at != std::string::npos;
       at = big.find("<g class=\"op place-v-acme", at + 1)) {
    ++boxes;
  }
  EXPECT_EQ(boxes, tools::kMaxGraphOps);
  EXPECT_THAT(
      big, HasSubstr(absl::StrCat("The graph shows the first ",
                                  tools::kMaxGraphOps, " of the ", n, " ops")));
  EXPECT_LT(BoxY(big, 10), BoxY(big, 11));
}

TEST(RuntimeProfileTest, CountsEveryOpOfEveryRunAndSumsAgree) {
  auto rt = Load(/*profiling=*/true);
  ASSERT_TRUE(rt.ok()) << rt.status();
  constexpr int kRuns = 5;
  for (int i = 0; i < kRuns; ++i) ASSERT_TRUE((*rt)->Invoke().ok());
  RuntimeProfile profile = (*rt)->Profile();
  ASSERT_EQ(profile.subgraphs.size(), 1u);
  const SubgraphProfile& s = profile.subgraphs[0];
  EXPECT_EQ(s.subgraph, 0);
  EXPECT_EQ(s.runs, kRuns);
  EXPECT_GT(s.total_ns, 0);
  EXPECT_LE(s.median_ns, s.total_ns);

  // Every op that runs at invoke, in execution order, callee ops right
  // after their call; the folded op 0 is absent.
  struct Expected {
    int32_t subgraph, op;
    std::string name;
    OpReport::Where where;
    int depth;
  };
  const std::vector<Expected> expected = {
      {0, 1, "ADD", OpReport::Where::kCpu, 0},
      {0, 2, "STABLEHLO_COMPOSITE", OpReport::Where::kCall, 0},
      {1, 0, "RELU", OpReport::Where::kCpu, 1},
      {1, 1, "ADD", OpReport::Where::kCpu, 1},
      {0, 3, "acme:partition_0", OpReport::Where::kVendor, 0},
      {0, 4, "RELU", OpReport::Where::kCpu, 0},
  };
  ASSERT_EQ(s.ops.size(), expected.size());
  int64_t top_level_ns = 0, callee_ns = 0, call_ns = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const OpProfile& op = s.ops[i];
    SCOPED_TRACE(absl::StrCat("profile row ", i, ": ", op.name));
    EXPECT_EQ(op.subgraph, expected[i].subgraph);
    EXPECT_EQ(op.op_index, expected[i].op);
    EXPECT_EQ(op.name, expected[i].name);
    EXPECT_EQ(op.where, expected[i].where);
    EXPECT_EQ(op.depth, expected[i].depth);
    EXPECT_EQ(op.calls, kRuns);
    EXPECT_GE(op.total_ns, op.median_ns);
    if (op.where == OpReport::Where::kVendor) {
      EXPECT_EQ(op.vendor_total_ns, kRuns * kVendorNs);
      EXPECT_EQ(op.vendor_median_ns, kVendorNs);
    } else {
      EXPECT_EQ(op.vendor_total_ns, -1);
    }
    if (op.depth == 0) top_level_ns += op.total_ns;
    if (op.depth == 1) callee_ns += op.total_ns;
    if (op.where == OpReport::Where::kCall) call_ns = op.total_ns;
  }
  // Ops run inside their run, callee ops inside their call.
  EXPECT_LE(top_level_ns, s.total_ns);
  EXPECT_LE(callee_ns, call_ns);

  // By type: leaf ops only (the call is its callee's ops), every leaf once.
  std::map<std::string, OpTypeProfile> types;
  for (const OpTypeProfile& t : RuntimeProfile::ByType(s)) types[t.type] = t;
  ASSERT_EQ(types.size(), 3u);
  EXPECT_EQ(types["ADD"].ops, 2);
  EXPECT_EQ(types["ADD"].calls, 2 * kRuns);
  EXPECT_EQ(types["RELU"].ops, 2);
  EXPECT_EQ(types["acme"].ops, 1);
  EXPECT_EQ(types["acme"].where, OpReport::Where::kVendor);
  EXPECT_EQ(types["acme"].vendor_total_ns, kRuns * kVendorNs);
  int64_t leaf_ns = 0, by_type_ns = 0;
  for (const OpProfile& op : s.ops) {
    if (op.where != OpReport::Where::kCall) leaf_ns += op.total_ns;
  }
  for (const auto& [name, t] : types) by_type_ns += t.total_ns;
  EXPECT_EQ(by_type_ns, leaf_ns);
}

TEST(RuntimeProfileTest, ResetDropsEarlierRuns) {
  auto rt = Load(/*profiling=*/true);
  ASSERT_TRUE(rt.ok()) << rt.status();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*rt)->Invoke().ok());
  (*rt)->ResetProfile();
  EXPECT_TRUE((*rt)->Profile().subgraphs.empty());
  for (int i = 0; i < 2; ++i) ASSERT_TRUE((*rt)->Invoke().ok());
  RuntimeProfile profile = (*rt)->Profile();
  ASSERT_EQ(profile.subgraphs.size(), 1u);
  EXPECT_EQ(profile.subgraphs[0].runs, 2);
  for (const OpProfile& op : profile.subgraphs[0].ops) {
    EXPECT_EQ(op.calls, 2) << op.name;  // Callee ops were reset too.
  }
}

TEST(RuntimeProfileTest, ToStringListsEveryOpAndTheTypes) {
  auto rt = Load(/*profiling=*/true);
  ASSERT_TRUE(rt.ok()) << rt.status();
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::string text = (*rt)->Profile().ToString();
  EXPECT_THAT(text, HasSubstr("profile of subgraph 0 'main': 1 run,"));
  EXPECT_THAT(text, HasSubstr("acme:partition_0"));
  EXPECT_THAT(text, HasSubstr("STABLEHLO_COMPOSITE"));
  EXPECT_THAT(text, HasSubstr("1/0 "));  // A callee op: subgraph/op.
  EXPECT_THAT(text, HasSubstr("by op type:"));
}

TEST(RuntimeProfileTest, FormatsTheVendorsOwnTime) {
  SubgraphProfile s;
  s.runs = 2;
  s.total_ns = 10000;
  s.median_ns = 5000;
  OpProfile op;
  op.name = "acme:partition_0";
  op.where = OpReport::Where::kVendor;
  op.detail = "acme";
  op.calls = 2;
  op.total_ns = 8000;
  op.median_ns = 4000;
  op.vendor_total_ns = 6000;
  op.vendor_median_ns = 3000;
  s.ops.push_back(op);
  RuntimeProfile profile;
  profile.subgraphs.push_back(s);
  EXPECT_THAT(profile.ToString(),
              HasSubstr("vendor 3.00 us, host overhead 1.00 us per call"));
  EXPECT_EQ(RuntimeProfile::ByType(s)[0].vendor_total_ns, 6000);
}

TEST(RunCommandTest, ProfilePrintsATableOfTheTimedRuns) {
  testing::TempDir dir;
  const std::string path = dir.Join("model.tflite");
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {4});
  TensorId t = g.Op(tfl::BuiltinOperator_TANH).In(x).Out("t", F32, {4});
  g.Output(g.Op(tfl::BuiltinOperator_RELU).In(t).Out("y", F32, {4}));
  auto model = std::move(mb).Build();
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(SaveModel(*model, path).ok());

  std::ostringstream out, err;
  const std::vector<std::string> args = {path, "--iterations=3", "--profile"};
  ASSERT_EQ(tools::RunRunCommand(args, out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("latency over 3 runs (profiling on)"));
  // The warm-up run is not in the profile.
  EXPECT_THAT(text, HasSubstr("profile of subgraph 0 'main': 3 runs,"));
  EXPECT_THAT(text, ::testing::ContainsRegex("\n  0 +TANH +cpu +3 "));
  EXPECT_THAT(text, ::testing::ContainsRegex("\n  1 +RELU +cpu +3 "));
}

// A model with state (SVDF's variable): the outputs written are those of
// the first run, what one Invoke of an app gives, not of the last timed
// run, which starts from the state the earlier runs left.
TEST(RunCommandTest, WritesTheFirstRunsOutputs) {
  testing::TempDir dir;
  const std::string path = dir.Join("model.tflite");
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2});
  TensorId wf = g.Constant<float>("wf", {1, 2}, {0.5f, -1.0f});
  TensorId wt = g.Constant<float>("wt", {1, 3}, {1.0f, 2.0f, 3.0f});
  TensorId state = g.Variable("state", F32, {1, 3});
  tfl::SVDFOptionsT o;
  o.rank = 1;
  g.Output(g.Op(tfl::BuiltinOperator_SVDF)
               .In(x, wf, wt, kNoTensor, state)
               .Options(o)
               .Out("y", F32, {1, 1}));
  auto model = std::move(mb).Build();
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(SaveModel(*model, path).ok());
  const std::vector<float> in = {2.0f, -1.0f};
  const std::string npy = dir.Join("x.npy");
  ASSERT_TRUE(WriteNpy(npy, F32, std::vector<int64_t>{1, 2},
                       absl::Span<const uint8_t>(
                           reinterpret_cast<const uint8_t*>(in.data()),
                           in.size() * sizeof(float)))
                  .ok());

  // One Invoke: the feature 0.5 * 2 + -1 * -1 = 2 enters the newest memory
  // slot, weighted 3.
  auto rt = Runtime::LoadModel(*std::move(model));
  ASSERT_TRUE(rt.ok()) << rt.status();
  ASSERT_TRUE((*rt)
                  ->SetInputData(0, absl::Span<const uint8_t>(
                                        reinterpret_cast<const uint8_t*>(
                                            in.data()),
                                        in.size() * sizeof(float)))
                  .ok());
  ASSERT_TRUE((*rt)->Invoke().ok());
  const std::vector<float> once = {(*rt)->output(0)->data<float>()[0]};
  ASSERT_EQ(once, std::vector<float>{6.0f});

  std::ostringstream out, err;
  ASSERT_EQ(tools::RunRunCommand({path, "--input=0=" + npy, "--iterations=3",
                                  "--output-dir=" + dir.Join("out")},
                                 out, err),
            0)
      << err.str();
  auto y = ReadNpy(dir.Join("out/y.npy"));
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ(y->data.size(), sizeof(float));
  float got;
  std::memcpy(&got, y->data.data(), sizeof(got));
  EXPECT_EQ(got, once[0]);
  EXPECT_THAT(out.str(), HasSubstr("output y: 1x1 FLOAT32  min 6 max 6"));
}

// --input-shape resizes an input the model leaves dynamic; an .npy of
// another shape does too; a fixed dimension is refused by name.
TEST(RunCommandTest, InputShapesResizeDynamicInputs) {
  testing::TempDir dir;
  const std::string path = dir.Join("model.tflite");
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 4});
  g.Output(g.Op(tfl::BuiltinOperator_RELU).In(x).Out("y", F32, {1, 4}));
  Model model = std::move(mb).BuildUnverified();
  model.subgraphs[0].tensors[x].shape_signature = {-1, 4};
  ASSERT_TRUE(SaveModel(model, path).ok());

  std::ostringstream out, err;
  ASSERT_EQ(tools::RunRunCommand({path, "--input-shape=x=3x4"}, out, err), 0)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("output y: 3x4 FLOAT32"));

  const std::vector<uint8_t> zeros(5 * 4 * sizeof(float), 0);
  const std::string npy = dir.Join("x.npy");
  ASSERT_TRUE(WriteNpy(npy, F32, std::vector<int64_t>{5, 4}, zeros).ok());
  out.str("");
  ASSERT_EQ(tools::RunRunCommand({path, "--input=0=" + npy}, out, err), 0)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("output y: 5x4 FLOAT32"));

  err.str("");
  EXPECT_EQ(tools::RunRunCommand({path, "--input-shape=0=3x5"}, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("dimension 1 is fixed at 4"));
  EXPECT_EQ(tools::RunRunCommand({path, "--input-shape=0=3xz"}, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("is not a shape like 1x224x224x3"));
}

}  // namespace
}  // namespace graft
