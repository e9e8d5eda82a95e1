// The xnnpack vendor piece by piece: partition decisions and their reasons,
// the dispatch library on its own bytecode (hand-checked results, threads,
// malformed and truncated bytecode, missing weights, stamps), and the
// `graft apply` report.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compiled_format.h"
#include "core/file_util.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "dispatch/vendor_backend.h"
#include "dispatch/vendor_dispatch.h"
#include "xnnpack_test_support.h"

namespace graft {
namespace {

using xnnpack_test::ApplyXnnpack;
using xnnpack_test::DispatchPath;
using xnnpack_test::PluginPath;

// The plugin's decision for op `op` of subgraph 0.
struct Decision {
  bool taken = false;
  int32_t code = 0;
  std::string reason;
};

Decision Decide(absl::StatusOr<Model> model, int op) {
  Decision d;
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return d;
  auto report = ApplyXnnpack(*model, ApplyMode::kPartition);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok()) return d;
  for (const OpApplyReport& r : report->ops) {
    if (r.subgraph != 0 || r.op != op) continue;
    d.taken = r.taken_by == "xnnpack";
    if (!r.refusals.empty()) {
      d.code = r.refusals[0].reason_code;
      d.reason = r.refusals[0].reason;
    }
  }
  return d;
}

tfl::TensorType F32 = tfl::TensorType_FLOAT32;
tfl::TensorType I8 = tfl::TensorType_INT8;

absl::StatusOr<Model> Unary(tfl::BuiltinOperator op, tfl::TensorType type,
                            float out_scale = 0.1f, int64_t out_zero = 0) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", type, {1, 4});
  TensorId y = g.Op(op).In(x).Out("y", type, {1, 4});
  if (type == I8) g.Quantize(x, 0.1f, 0).Quantize(y, out_scale, out_zero);
  g.Output(y);
  return std::move(b).Build();
}

TEST(XnnpackPartitionTest, TakesFloatConvolutionWithRelu) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 5, 5, 2});
  TensorId w =
      g.Constant<float>("w", {3, 3, 3, 2}, std::vector<float>(54, 0.5f));
  TensorId bias = g.Constant<float>("b", {3}, {1.0f, 2.0f, 3.0f});
  tfl::Conv2DOptionsT conv;
  conv.padding = tfl::Padding_SAME;
  conv.stride_w = conv.stride_h = 1;
  conv.fused_activation_function = tfl::ActivationFunctionType_RELU;
  TensorId y = g.Op(tfl::BuiltinOperator_CONV_2D)
                   .In(x, w, bias)
                   .Options(conv)
                   .Out("y", F32, {1, 5, 5, 3});
  g.Output(y);
  EXPECT_TRUE(Decide(std::move(b).Build(), 0).taken);
}

TEST(XnnpackPartitionTest, RefusesOpAbsentFromThisXnnpack) {
  Decision d = Decide(Unary(tfl::BuiltinOperator_TANH, F32), 0);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_OP);
  EXPECT_NE(d.reason.find("TANH has no node"), std::string::npos) << d.reason;
}

absl::StatusOr<Model> Mean(const std::vector<int32_t>& in,
                           const std::vector<int32_t>& axes,
                           const std::vector<int32_t>& out) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", F32, in);
  TensorId a =
      g.Constant<int32_t>("axes", {static_cast<int32_t>(axes.size())}, axes);
  g.Output(g.Op(tfl::BuiltinOperator_MEAN).In(x, a).Out("y", F32, out));
  return std::move(b).Build();
}

TEST(XnnpackPartitionTest, MeanIsGlobalAveragePoolingWhereThatPays) {
  EXPECT_TRUE(Decide(Mean({2, 3, 4, 5}, {1, 2}, {2, 5}), 0).taken);
  EXPECT_TRUE(Decide(Mean({2, 3, 4}, {-2}, {2, 4}), 0).taken);
  Decision d = Decide(Mean({2, 3, 4, 5}, {1, 3}, {2, 4}), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_OP);
  EXPECT_NE(d.reason.find("not adjacent"), std::string::npos) << d.reason;
  // int8 with a scale ratio outside XNNPACK's [2^-8, 2^8).
  {
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", I8, {1, 5, 5, 6});
    TensorId a = g.Constant<int32_t>("axes", {2}, {1, 2});
    TensorId y = g.Op(tfl::BuiltinOperator_MEAN).In(x, a).Out("y", I8, {1, 6});
    g.Quantize(x, 1.0f / 128, 0).Quantize(y, 4.0f, 0).Output(y);
    d = Decide(std::move(b).Build(), 0);
    EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION);
    EXPECT_NE(d.reason.find("[2^-8, 2^8)"), std::string::npos) << d.reason;
  }
  // Over the last axis: one channel per pooling, measured slower.
  d = Decide(Mean({1, 32, 64}, {2}, {1, 32}), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_NOT_PROFITABLE);
  EXPECT_NE(d.reason.find("MEAN over the last axis"), std::string::npos)
      << d.reason;
}

// A strided TRANSPOSE_CONV with fewer output pixels than its stride along
// a dimension (width 1, stride 3): this XNNPACK's deconvolution crashed on
// it (the drawn-shapes op test found it, GRAFT_TEST_SEED=1).
TEST(XnnpackPartitionTest, RefusesTransposeConvOutputBelowItsStride) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId shape = g.Constant<int32_t>("shape", {4}, {1, 3, 1, 2});
  TensorId w = g.Constant<float>("w", {2, 5, 3, 3},
                                 std::vector<float>(2 * 5 * 3 * 3, 0.5f));
  TensorId x = g.Input("x", F32, {1, 3, 1, 3});
  tfl::TransposeConvOptionsT o;
  o.padding = tfl::Padding_SAME;
  o.stride_h = 1;
  o.stride_w = 3;
  g.Output(g.Op(tfl::BuiltinOperator_TRANSPOSE_CONV)
               .In(shape, w, x)
               .Options(o)
               .Out("y", F32, {1, 3, 1, 2}));
  Decision d = Decide(std::move(b).Build(), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE);
  EXPECT_NE(d.reason.find("output width 1 is smaller than the stride 3"),
            std::string::npos)
      << d.reason;
}

TEST(XnnpackPartitionTest, RefusesDynamicShape) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 4});
  g.MutableTensor(x)->shape_signature = {-1, 4};
  TensorId y = g.Op(tfl::BuiltinOperator_RELU).In(x).Out("y", F32, {1, 4});
  g.Output(y);
  Decision d = Decide(std::move(b).Build(), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE);
  EXPECT_NE(d.reason.find("shape signature [-1,4]"), std::string::npos)
      << d.reason;
}

TEST(XnnpackPartitionTest, RefusesFusedActivationXnnpackLacks) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 4});
  TensorId c = g.Constant<float>("c", {4}, {1, 2, 3, 4});
  tfl::AddOptionsT add;
  add.fused_activation_function = tfl::ActivationFunctionType_TANH;
  TensorId y = g.Op(tfl::BuiltinOperator_ADD)
                   .In(x, c)
                   .Options(add)
                   .Out("y", F32, {1, 4});
  g.Output(y);
  Decision d = Decide(std::move(b).Build(), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE);
  EXPECT_NE(d.reason.find("fused activation TANH"), std::string::npos)
      << d.reason;
}

TEST(XnnpackPartitionTest, RefusesNonConstantWeights) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", F32, {2, 4});
  TensorId w = g.Input("w", F32, {3, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Out("y", F32, {2, 3});
  g.Output(y);
  Decision d = Decide(std::move(b).Build(), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_NOT_CONSTANT);
  EXPECT_NE(d.reason.find("weights 'w' are computed at run time"),
            std::string::npos)
      << d.reason;
}

TEST(XnnpackPartitionTest, RefusesElementTypes) {
  Decision d =
      Decide(Unary(tfl::BuiltinOperator_RELU, tfl::TensorType_INT16), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE);
  EXPECT_NE(d.reason.find("INT16"), std::string::npos) << d.reason;
  // Hard swish exists in float only in this XNNPACK.
  d = Decide(Unary(tfl::BuiltinOperator_HARD_SWISH, I8), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE);
  EXPECT_NE(d.reason.find("int8 HARD_SWISH"), std::string::npos) << d.reason;
  // RSQRT is SQUARE_ROOT and DIVIDE, both float only here.
  d = Decide(Unary(tfl::BuiltinOperator_RSQRT, I8, 0.1f, 0), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE);
  EXPECT_NE(d.reason.find("int8 RSQRT"), std::string::npos) << d.reason;
}

TEST(XnnpackPartitionTest, RefusesQuantizationItCannotExpress) {
  // int8 LOGISTIC with an output scale other than XNNPACK's 1/256.
  Decision d = Decide(Unary(tfl::BuiltinOperator_LOGISTIC, I8, 0.1f, 0), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION);
  EXPECT_NE(d.reason.find("1/256"), std::string::npos) << d.reason;
  // int8 SOFTMAX (float softmax between conversions) whose output is not
  // TFLite's 1/256, -128.
  d = Decide(Unary(tfl::BuiltinOperator_SOFTMAX, I8, 1.0f / 128, 0), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION);
  EXPECT_NE(d.reason.find("1/256 and -128"), std::string::npos) << d.reason;
  EXPECT_TRUE(
      Decide(Unary(tfl::BuiltinOperator_SOFTMAX, I8, 1.0f / 256, -128), 0)
          .taken);
  // int8 RELU that requantizes.
  d = Decide(Unary(tfl::BuiltinOperator_RELU, I8, 0.2f, 0), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION);
  // int8 FULLY_CONNECTED with weights quantized per input column (TFLite
  // and XNNPACK quantize per output channel, dimension 0).
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", I8, {1, 2});
  TensorId w = g.Constant<int8_t>("w", {2, 2}, {1, 2, 3, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Out("y", I8, {1, 2});
  g.Quantize(x, 0.1f, 0).Quantize(y, 0.1f, 0);
  const float scales[] = {0.1f, 0.2f};
  const int64_t zeros[] = {0, 0};
  g.QuantizePerChannel(w, scales, zeros, 1);
  g.Output(y);
  d = Decide(std::move(b).Build(), 0);
  EXPECT_EQ(d.code, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION);
  EXPECT_NE(d.reason.find("per channel along dimension 1; XNNPACK wants "
                          "dimension 0"),
            std::string::npos)
      << d.reason;
}

// A float model the tests below compile: y = relu(x W^T + b) + c.
absl::StatusOr<Model> SmallModel() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", F32, {2, 3});
  TensorId w = g.Constant<float>("w", {2, 3}, {1, 2, 3, -1, -2, -3});
  TensorId bias = g.Constant<float>("b", {2}, {0.5f, 0.25f});
  TensorId c = g.Constant<float>("c", {2}, {10, 20});
  tfl::FullyConnectedOptionsT fc;
  fc.fused_activation_function = tfl::ActivationFunctionType_RELU;
  TensorId h = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, bias)
                   .Options(fc)
                   .Out("h", F32, {2, 2});
  TensorId y = g.Op(tfl::BuiltinOperator_ADD).In(h, c).Out("y", F32, {2, 2});
  g.Output(y);
  return std::move(b).Build();
}

// The compiled SmallModel with its module, entry point and buffers.
class XnnpackDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = SmallModel();
    ASSERT_TRUE(m.ok()) << m.status();
    model_ = *std::move(m);
    auto report = ApplyXnnpack(model_);
    ASSERT_TRUE(report.ok()) << report.status();
    ASSERT_EQ(report->ops_taken, 2);
    ASSERT_EQ(report->partitions.size(), 1u);
    entry_ = report->partitions[0].entry_point;
    const Bytes& module = model_.buffers[report->modules[0].buffer].data;
    module_.assign(module.data(), module.data() + module.size());
    buffers_ = std::make_shared<std::vector<graft_byte_span_t>>();
    for (const Buffer& buffer : model_.buffers) {
      buffers_->push_back({buffer.data.empty() ? nullptr : buffer.data.data(),
                           buffer.data.size()});
    }
    auto lib = DispatchLibrary::Load(DispatchPath());
    ASSERT_TRUE(lib.ok()) << lib.status();
    library_ = *std::move(lib);
    auto context = library_->CreateDeviceContext();
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = *std::move(context);
  }

  InvocationSpec Spec(const std::vector<uint8_t>& bytecode) const {
    InvocationSpec spec;
    spec.bytecode = bytecode;
    spec.entry_point = entry_;
    spec.num_inputs = 1;
    spec.num_outputs = 1;
    spec.model_buffers = buffers_;
    return spec;
  }

  // Runs an invocation on x = [[1,2,3],[-1,0,1]] and returns y.
  static std::vector<float> Run(Invocation& invocation) {
    static const float x[6] = {1, 2, 3, -1, 0, 1};
    std::vector<float> y(4, -7.0f);
    EXPECT_TRUE(invocation.AttachInput(0, x, sizeof(x)).ok());
    EXPECT_TRUE(invocation.AttachOutput(0, y.data(), 16).ok());
    absl::Status st = invocation.Invoke();
    EXPECT_TRUE(st.ok()) << st;
    return y;
  }

  Model model_;
  std::string entry_;
  std::vector<uint8_t> module_;
  std::shared_ptr<std::vector<graft_byte_span_t>> buffers_;
  std::unique_ptr<DispatchLibrary> library_;
  std::unique_ptr<DeviceContext> context_;
};

// relu(x W^T + b) + c by hand: row 0: relu(14.5, -13.75) + (10, 20);
// row 1: relu(2.5, -1.75) + (10, 20).
const std::vector<float> kExpected = {24.5f, 20.0f, 12.5f, 20.0f};

TEST_F(XnnpackDispatchTest, RunsCompiledModuleWithWeightsInPlace) {
  auto invocation = context_->CreateInvocation(Spec(module_));
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  EXPECT_EQ((*invocation)->input_requirements(0).size, 24u);
  EXPECT_EQ((*invocation)->output_requirements(0).size, 16u);
  EXPECT_EQ(Run(**invocation), kExpected);
  // A second run with moved attachments re-binds and gives the same.
  EXPECT_EQ(Run(**invocation), kExpected);
  // The weights are not in the module: it names their buffers instead.
  const float w0 = 1.0f;
  const auto* bytes = reinterpret_cast<const uint8_t*>(&w0);
  EXPECT_EQ(std::search(module_.begin(), module_.end(), bytes, bytes + 4),
            module_.end());
}

TEST_F(XnnpackDispatchTest, AsyncRunAndProfile) {
  EXPECT_TRUE(library_->HasCapability(GRAFT_DISPATCH_CAPABILITY_ASYNC));
  EXPECT_TRUE(library_->HasCapability(GRAFT_DISPATCH_CAPABILITY_PROFILING));
  InvocationSpec spec = Spec(module_);
  spec.profiling = true;
  auto invocation = context_->CreateInvocation(spec);
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  static const float x[6] = {1, 2, 3, -1, 0, 1};
  std::vector<float> y(4);
  ASSERT_TRUE((*invocation)->AttachInput(0, x, sizeof(x)).ok());
  ASSERT_TRUE((*invocation)->AttachOutput(0, y.data(), 16).ok());
  ASSERT_TRUE((*invocation)->InvokeAsync().ok());
  // Nothing else is accepted until the run is waited for.
  EXPECT_FALSE((*invocation)->Invoke().ok());
  ASSERT_TRUE((*invocation)->Wait().ok());
  EXPECT_EQ(y, kExpected);
  auto events = (*invocation)->Profile();
  ASSERT_TRUE(events.ok()) << events.status();
  // The run, then one span per XNNPACK node (each run on a runtime of its
  // own), located as the plugin's debug map locates the node.
  ASSERT_GE(events->size(), 3u);
  EXPECT_EQ((*events)[0].name, "xnnpack runtime " + entry_);
  EXPECT_EQ((*events)[0].vendor_location, 0u);
  EXPECT_LE((*events)[0].start_ns, (*events)[0].end_ns);
  auto manifest = ReadManifest(model_);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_EQ(manifest->vendors.size(), 1u);
  const std::vector<ManifestDebugEntry>& debug_map =
      manifest->vendors[0].debug_map;
  ASSERT_EQ(debug_map.size(), events->size() - 1);
  std::set<int32_t> ops;
  for (size_t k = 1; k < events->size(); ++k) {
    const ProfileEvent& e = (*events)[k];
    EXPECT_EQ(e.vendor_location, uint64_t{k}) << e.name;  // entry 0, node k-1
    EXPECT_LE((*events)[k - 1].start_ns, e.start_ns);
    EXPECT_LE(e.start_ns, e.end_ns);
    EXPECT_LE(e.end_ns, (*events)[0].end_ns);
    EXPECT_NE(e.name.find("(model op "), std::string::npos) << e.name;
    EXPECT_EQ(debug_map[k - 1].vendor_location, e.vendor_location);
    EXPECT_EQ(debug_map[k - 1].subgraph, 0);
    ops.insert(debug_map[k - 1].op);
  }
  EXPECT_EQ(ops, (std::set<int32_t>{0, 1}));
  // Node by node it computes the same, also with moved attachments.
  EXPECT_EQ(Run(**invocation), kExpected);
  EXPECT_EQ(Run(**invocation), kExpected);
  // Without the flag there is no profile.
  auto plain = context_->CreateInvocation(Spec(module_));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE((*plain)->Profile().ok());
}

TEST_F(XnnpackDispatchTest, CompileIsDeterministic) {
  auto again = SmallModel();
  ASSERT_TRUE(again.ok());
  auto report = ApplyXnnpack(*again, ApplyMode::kCompile);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->modules.size(), 1u);
  const Bytes& bytes = report->modules[0].bytes;
  EXPECT_EQ(std::vector<uint8_t>(bytes.data(), bytes.data() + bytes.size()),
            module_);
}

TEST_F(XnnpackDispatchTest, ThreadsOptionGivesSameResults) {
  auto lib = DispatchLibrary::Load(DispatchPath(), {{"num_threads", "3"}});
  ASSERT_TRUE(lib.ok()) << lib.status();
  auto context = (*lib)->CreateDeviceContext({{"num_threads", "2"}});
  ASSERT_TRUE(context.ok()) << context.status();
  auto invocation = (*context)->CreateInvocation(Spec(module_));
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  EXPECT_EQ(Run(**invocation), kExpected);
  auto bad = DispatchLibrary::Load(DispatchPath(), {{"num_threads", "0"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("num_threads"), std::string::npos);
  auto unknown = library_->CreateDeviceContext({{"threads", "2"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("'threads'"), std::string::npos);
}

// Inputs are used in place unless XNNPACK's XNN_EXTRA_BYTES over-read could
// leave the page of their last byte: an input that ends exactly at a page
// end followed by an inaccessible page still runs (through the staging
// copy), and one used in place sees new values written between runs.
TEST_F(XnnpackDispatchTest, InputsNearAPageEndAreCopiedOthersUsedInPlace) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* map = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(map) + page, page, PROT_NONE), 0);
  const float x[6] = {1, 2, 3, -1, 0, 1};
  float* at_end = reinterpret_cast<float*>(static_cast<char*>(map) + page -
                                           sizeof(x));
  float* inside = reinterpret_cast<float*>(map);
  std::copy(x, x + 6, at_end);
  std::copy(x, x + 6, inside);
  auto invocation = context_->CreateInvocation(Spec(module_));
  ASSERT_TRUE(invocation.ok()) << invocation.status();
  std::vector<float> y(4, -7.0f);
  ASSERT_TRUE((*invocation)->AttachOutput(0, y.data(), 16).ok());
  for (float* input : {at_end, inside, at_end}) {
    ASSERT_TRUE((*invocation)->AttachInput(0, input, sizeof(x)).ok());
    std::fill(y.begin(), y.end(), -7.0f);
    ASSERT_TRUE((*invocation)->Invoke().ok());
    EXPECT_EQ(y, kExpected);
  }
  // In place: a changed input gives the changed result (row 0 becomes
  // relu(x W^T + b) + c for x = [0,0,0]: (10.5, 20.25)).
  ASSERT_TRUE((*invocation)->AttachInput(0, inside, sizeof(x)).ok());
  inside[0] = inside[1] = inside[2] = 0;
  ASSERT_TRUE((*invocation)->Invoke().ok());
  EXPECT_EQ(y, (std::vector<float>{10.5f, 20.25f, 12.5f, 20.0f}));
  munmap(map, 2 * page);
}

// The runtime's thread count reaches the library's num_threads option
// (RuntimeOptions::num_threads through LoadVendorBackends), unless the
// caller sets it for the vendor.
TEST(XnnpackThreadsTest, RuntimeThreadCountReachesTheLibrary) {
  Manifest manifest;
  ManifestVendor vendor;
  vendor.vendor = "xnnpack";
  manifest.vendors.push_back(vendor);
  const std::string dir = std::filesystem::path(DispatchPath()).parent_path();
  std::vector<std::string> missing;
  ASSERT_TRUE(LoadVendorBackends(manifest, {dir}, {}, {}, 2, &missing).ok());
  // 0 threads is refused by the library: proof that the count got there.
  auto zero = LoadVendorBackends(manifest, {dir}, {}, {}, 0, &missing);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("num_threads must be 1 to 256, got '0'"),
            std::string::npos)
      << zero.status();
  VendorOptions given;
  given["xnnpack"] = {{"num_threads", "1"}};
  EXPECT_TRUE(LoadVendorBackends(manifest, {dir}, {}, given, 0, &missing).ok());
}

TEST_F(XnnpackDispatchTest, RefusesWrongEntryAndCounts) {
  InvocationSpec spec = Spec(module_);
  spec.entry_point = "partition_9";
  auto r = context_->CreateInvocation(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  spec = Spec(module_);
  spec.num_inputs = 2;
  r = context_->CreateInvocation(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("1 inputs and 1 outputs"),
            std::string::npos)
      << r.status();
}

TEST_F(XnnpackDispatchTest, RefusesMissingOrWrongModelBuffers) {
  InvocationSpec spec = Spec(module_);
  spec.model_buffers = nullptr;
  auto r = context_->CreateInvocation(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("passes no model buffers"),
            std::string::npos)
      << r.status();
  spec.model_buffers = std::make_shared<std::vector<graft_byte_span_t>>(
      buffers_->begin(), buffers_->begin() + 1);
  r = context_->CreateInvocation(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("does not exist"), std::string::npos)
      << r.status();
  auto shrunk = std::make_shared<std::vector<graft_byte_span_t>>(*buffers_);
  for (graft_byte_span_t& span : *shrunk) {
    if (span.size > 4) span.size -= 4;
  }
  spec.model_buffers = shrunk;
  r = context_->CreateInvocation(spec);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("the bytecode expects"),
            std::string::npos)
      << r.status();
}

TEST_F(XnnpackDispatchTest, TruncatedBytecodeIsAnErrorNeverACrash) {
  for (size_t size = 0; size < module_.size(); ++size) {
    std::vector<uint8_t> cut(module_.begin(), module_.begin() + size);
    if (cut.empty()) cut.push_back(0);
    auto r = context_->CreateInvocation(Spec(cut));
    ASSERT_FALSE(r.ok()) << "truncated to " << size << " bytes";
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << r.status();
  }
}

TEST_F(XnnpackDispatchTest, MutatedBytecodeIsRefusedOrRuns) {
  uint32_t seed = 20261122;
  std::printf("[ seed     ] %u\n", seed);
  std::mt19937 rng(seed);
  int refused = 0, ran = 0;
  for (int i = 0; i < 600; ++i) {
    std::vector<uint8_t> bad = module_;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      bad[rng() % bad.size()] = static_cast<uint8_t>(rng());
    }
    auto r = context_->CreateInvocation(Spec(bad));
    if (!r.ok()) {
      ++refused;
      continue;
    }
    // Accepted mutations (a changed constant, an unused field) must run.
    static const float x[6] = {1, 2, 3, -1, 0, 1};
    std::vector<float> y(4);
    if ((*r)->AttachInput(0, x, sizeof(x)).ok() &&
        (*r)->AttachOutput(0, y.data(), 16).ok()) {
      (void)(*r)->Invoke();
    }
    ++ran;
  }
  std::printf("%d mutations refused, %d accepted and run\n", refused, ran);
  EXPECT_GT(refused, 300);
}

// Found by tests/fuzz (xnnpack_bytecode): FlatBuffers' verifier aligns a
// vector to 4 bytes only, and this module's value dims ([ulong]) lie 4
// bytes off 8; the library loaded them misaligned (UBSan, in the sanitizer
// build). Now refused or prepared, with no undefined load.
TEST_F(XnnpackDispatchTest, VectorsOffTheirAlignmentAreReadSafely) {
  absl::StatusOr<std::string> bytes = ReadFile(
      testing::SourceDir() +
      "/tests/malformed/fuzz/xnnpack_bytecode/dims_4_bytes_off.module");
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // 64-byte aligned, as the runtime hands modules over.
  std::vector<uint8_t> module(bytes->size() + 64);
  size_t skip = 0;
  while (reinterpret_cast<uintptr_t>(module.data() + skip) % 64 != 0) ++skip;
  std::memcpy(module.data() + skip, bytes->data(), bytes->size());
  InvocationSpec spec = Spec(module);
  spec.bytecode = absl::MakeConstSpan(module).subspan(skip, bytes->size());
  auto r = context_->CreateInvocation(spec);
  if (!r.ok()) {
    EXPECT_TRUE(r.status().code() == absl::StatusCode::kInvalidArgument ||
                r.status().code() == absl::StatusCode::kFailedPrecondition)
        << r.status();
    EXPECT_NE(r.status().message().find("xnnpack dispatch"),
              std::string::npos)
        << r.status();
  }
}

TEST_F(XnnpackDispatchTest, StampMismatchesNameBothSides) {
  ManifestVendor stamp;
  stamp.vendor = "xnnpack";
  stamp.plugin_version = "1.0.0";
  stamp.soc_model = "xnnpack-cpu";
  stamp.compiler_abi_version = GRAFT_ABI_VERSION;
  stamp.bytecode_format_version = 1;
  EXPECT_TRUE(library_->CheckStamp(stamp).ok());
  ManifestVendor other = stamp;
  other.bytecode_format_version = 2;
  absl::Status st = library_->CheckStamp(other);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("format version 2"), std::string::npos) << st;
  EXPECT_NE(st.message().find("runs 1 to 1"), std::string::npos) << st;
  other = stamp;
  other.soc_model = "npu-9";
  st = library_->CheckStamp(other);
  EXPECT_NE(st.message().find("'npu-9'"), std::string::npos) << st;
  EXPECT_NE(st.message().find("'xnnpack-cpu'"), std::string::npos) << st;
  other = stamp;
  other.plugin_version = "2.0.0";
  st = library_->CheckStamp(other);
  EXPECT_NE(st.message().find("2.0.0"), std::string::npos) << st;
}

// `graft apply` reports the share of ops taken and why the rest were not.
TEST(XnnpackCliTest, ApplyReportsShareTakenAndReasons) {
  testing::TempDir dir;
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 4});
  TensorId h = g.Op(tfl::BuiltinOperator_RELU).In(x).Out("h", F32, {1, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_TANH).In(h).Out("y", F32, {1, 4});
  g.Output(y);
  auto m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  const std::string in = dir.Join("in.tflite");
  ASSERT_TRUE(SaveModel(*m, in).ok());
  const std::string cmd =
      absl::StrCat(testing::BinaryDir(), "/graft apply ", in, " -o ",
                   dir.Join("out.tflite"), " --plugin=", PluginPath(), " 2>&1");
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), f)) text.append(buf, n);
  const int status = pclose(f);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_NE(text.find("1/2 ops taken (50%)"), std::string::npos) << text;
  EXPECT_NE(text.find("not taken: TANH"), std::string::npos) << text;
  EXPECT_NE(text.find("xnnpack: UNSUPPORTED_OP"), std::string::npos) << text;
}

}  // namespace
}  // namespace graft
