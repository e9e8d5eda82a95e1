// Models compiled by LiteRT's own tool (apply_plugin_main from the
// ai-edge-litert wheel, Intel OpenVINO plugin, CPU backend) run in Graft's
// runtime through Intel's LiteRT dispatch library, unchanged:
//  - differential: outputs identical to LiteRT's own runtime (run_litert.py:
//    CompiledModel, NPU|CPU, the same dispatch library, the same inputs),
//    and within a stated bf16 tolerance of the reference interpreter on the
//    original model (tests/reference/run_reference.py);
//  - errors: absent library (names vendor and SoC), a model without a
//    LiteRtStamp, corrupted DISPATCH_OP options, a bytecode range outside
//    the file: each a clear load error, never a crash.
// Models are compiled at test time into a temp dir. Tests that need the
// wheel (or openvino, which Intel's plugin and library link) skip, saying
// so, when it is absent.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The ai_edge_litert package directory, or empty when not installed.
std::string WheelDir() {
  static const std::string dir = [] {
    FILE* p = popen(
        "python3 -c 'import ai_edge_litert,os;"
        "print(os.path.dirname(ai_edge_litert.__file__))' 2>/dev/null",
        "r");
    if (p == nullptr) return std::string();
    char buf[4096] = {};
    std::string out;
    while (fgets(buf, sizeof(buf), p) != nullptr) out += buf;
    pclose(p);
    return std::string(absl::StripTrailingAsciiWhitespace(out));
  }();
  return dir;
}

std::string IntelDispatchDir() {
  return WheelDir() + "/vendors/intel_openvino/dispatch";
}

#define GRAFT_SKIP_IF_NO_WHEEL()                                         \
  do {                                                                   \
    if (WheelDir().empty() ||                                            \
        !fs::exists(WheelDir() + "/tools/apply_plugin_main") ||          \
        !fs::exists(IntelDispatchDir() +                                 \
                    "/libLiteRtDispatch_IntelOpenvino.so")) {            \
      GTEST_SKIP() << "the ai-edge-litert wheel (2.3.0, with the Intel " \
                      "OpenVINO plugin and dispatch library) is not "    \
                      "installed: pip install ai-edge-litert==2.3.0 "    \
                      "openvino==2026.3.1";                              \
    }                                                                    \
  } while (0)

// Compiles test_models/generated/NAME.tflite with LiteRT's tool into `dir`;
// the output path, or empty (with `*log` saying why).
std::string CompileWithLiteRt(const std::string& name, const std::string& dir,
                              std::string* log) {
  const std::string model =
      testing::SourceDir() + "/test_models/generated/" + name + ".tflite";
  const std::string out = dir + "/" + name + ".litert.tflite";
  const std::string log_path = dir + "/" + name + ".apply.log";
  const std::string cmd = absl::StrCat(
      WheelDir(), "/tools/apply_plugin_main --cmd=apply --model=", model,
      " --o=", out,
      " --soc_manufacturer=IntelOpenVINO --soc_model=LNL --libs=", WheelDir(),
      "/vendors/intel_openvino/compiler --intel_openvino_graph_backends=cpu > ",
      log_path, " 2>&1");
  const int rc = std::system(cmd.c_str());
  if (rc != 0 || !fs::exists(out)) {
    std::ifstream in(log_path);
    *log = std::string(std::istreambuf_iterator<char>(in), {});
    return "";
  }
  return out;
}

#define GRAFT_COMPILE_OR_SKIP(var, name, dir)                              \
  std::string var;                                                         \
  do {                                                                     \
    std::string log;                                                       \
    var = CompileWithLiteRt(name, dir, &log);                              \
    if (var.empty()) {                                                     \
      if (absl::StrContains(log, "openvino")) {                            \
        GTEST_SKIP() << "LiteRT's Intel plugin cannot load openvino (pip " \
                        "install openvino==2026.3.1): "                    \
                     << log;                                               \
      }                                                                    \
      FAIL() << "apply_plugin_main failed on " << name << ":\n" << log;    \
    }                                                                      \
  } while (0)

// Seeded uniform [-1, 1) floats for every float32 input of `rt`, written to
// `dir`/input_<i>.npy and set as the runtime's inputs.
std::vector<std::string> MakeInputs(Runtime& rt, const std::string& dir,
                                    uint32_t seed) {
  std::vector<std::string> paths;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < rt.num_inputs(); ++i) {
    Tensor* t = rt.input(i);
    EXPECT_EQ(t->type, tfl::TensorType_FLOAT32) << "input " << i;
    float* data = t->data<float>();
    for (int64_t k = 0; k < t->num_elements(); ++k) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      data[k] =
          static_cast<float>((state >> 40) * (1.0 / (1ull << 24))) * 2 - 1;
    }
    std::vector<int64_t> shape(t->shape.begin(), t->shape.end());
    const std::string path = absl::StrCat(dir, "/input_", i, ".npy");
    EXPECT_TRUE(WriteNpy(path, t->type, shape,
                         absl::MakeConstSpan(t->raw_data, t->bytes))
                    .ok());
    paths.push_back(path);
  }
  return paths;
}

std::vector<NpyArray> ReadOutputs(const std::string& dir, size_t n) {
  std::vector<NpyArray> out;
  for (size_t i = 0; i < n; ++i) {
    absl::StatusOr<NpyArray> a =
        ReadNpy(absl::StrCat(dir, "/output_", i, ".npy"));
    EXPECT_TRUE(a.ok()) << a.status();
    if (a.ok()) out.push_back(*std::move(a));
  }
  return out;
}

std::string Script(const std::string& rel) {
  return testing::SourceDir() + "/" + rel;
}

RuntimeOptions IntelOptions() {
  RuntimeOptions o;
  o.dispatch_dirs = {IntelDispatchDir()};
  o.policy = AcceleratorPolicy::kAllowCpuFallback;
  return o;
}

bool CpuHasBf16() {
  std::ifstream in("/proc/cpuinfo");
  std::string s((std::istreambuf_iterator<char>(in)), {});
  return absl::StrContains(s, " avx512_bf16") ||
         absl::StrContains(s, " amx_bf16");
}

class LiteRtDifferential : public ::testing::TestWithParam<const char*> {};

TEST_P(LiteRtDifferential, MatchesLiteRtRuntimeAndReference) {
  GRAFT_SKIP_IF_NO_WHEEL();
  GRAFT_SKIP_IF_SANITIZED("OpenVINO, under Intel's dispatch library,");
  const std::string name = GetParam();
  testing::TempDir tmp;
  GRAFT_COMPILE_OR_SKIP(compiled, name, tmp.path());

  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::Load(compiled, IntelOptions());
  ASSERT_TRUE(rt.ok()) << rt.status();
  const RuntimeReport report = (*rt)->Report();
  EXPECT_GE(report.CountOps(OpReport::Where::kVendor), 1) << report.ToString();
  EXPECT_THAT(report.ToString(), HasSubstr("LiteRT vendor IntelOpenVINO LNL"));
  if (CpuHasBf16()) {
    ASSERT_EQ(report.warnings.size(), 1u) << report.ToString();
    EXPECT_THAT(report.warnings[0], HasSubstr("bf16"));
  }
  const std::vector<std::string> inputs = MakeInputs(**rt, tmp.path(), 7);
  ASSERT_TRUE((*rt)->Invoke().ok());

  // LiteRT's own runtime, same file, same library, same inputs.
  const std::string litert_dir = tmp.Join("litert");
  std::string cmd = absl::StrCat(
      "python3 ", Script("tests/litert_dispatch/run_litert.py"), " ", compiled,
      " ", IntelDispatchDir(), " ", litert_dir, " --inputs");
  for (const auto& p : inputs) absl::StrAppend(&cmd, " ", p);
  absl::StrAppend(&cmd, " > ", tmp.Join("litert.log"), " 2>&1");
  int rc = std::system(cmd.c_str());
  if (WEXITSTATUS(rc) == 77) GTEST_SKIP() << "LiteRT's Python runtime missing";
  ASSERT_EQ(rc, 0) << "run_litert.py failed; see " << litert_dir
                   << "/status.json";
  const std::vector<NpyArray> litert =
      ReadOutputs(litert_dir, (*rt)->num_outputs());
  ASSERT_EQ(litert.size(), (*rt)->num_outputs());
  for (size_t i = 0; i < litert.size(); ++i) {
    const Tensor* out = (*rt)->output(i);
    ASSERT_EQ(litert[i].data.size(), out->bytes) << "output " << i;
    EXPECT_TRUE(
        std::equal(litert[i].data.begin(), litert[i].data.end(), out->raw_data))
        << name << " output " << i
        << ": Graft's outputs through Intel's dispatch library differ from "
           "LiteRT's runtime on the same file, library and inputs";
  }

  // The reference interpreter on the original (uncompiled) model. Intel's
  // library runs OpenVINO in bf16 on CPUs with avx512_bf16 / amx_bf16 (see
  // the runtime's warning): bf16 keeps 8 bits of mantissa, so each op can
  // be off by ~2^-8 relative and errors grow with depth (MobileNetV2 0.35,
  // ~50 layers: max |diff| 0.26 for logits up to 1.9; the 3-layer models
  // ~1e-3). Tolerance: max |diff| <= 0.2 * max(1, max |reference|) there,
  // 1e-3 otherwise (fp32). The exact check is the one against LiteRT above.
  const std::string ref_dir = tmp.Join("reference");
  cmd = absl::StrCat("python3 ", Script("tests/reference/run_reference.py"),
                     " ", testing::SourceDir(), "/test_models/generated/", name,
                     ".tflite ", ref_dir, " --inputs");
  for (const auto& p : inputs) absl::StrAppend(&cmd, " ", p);
  absl::StrAppend(&cmd, " > ", tmp.Join("reference.log"), " 2>&1");
  rc = std::system(cmd.c_str());
  ASSERT_EQ(rc, 0);
  const std::vector<NpyArray> ref = ReadOutputs(ref_dir, (*rt)->num_outputs());
  ASSERT_EQ(ref.size(), (*rt)->num_outputs());
  const double rel = CpuHasBf16() ? 0.2 : 1e-3;
  for (size_t i = 0; i < ref.size(); ++i) {
    const Tensor* out = (*rt)->output(i);
    ASSERT_EQ(out->type, tfl::TensorType_FLOAT32);
    ASSERT_EQ(ref[i].data.size(), out->bytes);
    const auto* r = reinterpret_cast<const float*>(ref[i].data.data());
    const float* g = out->data<float>();
    double max_ref = 0, max_diff = 0;
    for (int64_t k = 0; k < out->num_elements(); ++k) {
      max_ref = std::max(max_ref, std::fabs(double{r[k]}));
      max_diff = std::max(max_diff, std::fabs(double{r[k]} - g[k]));
    }
    const double tol = rel * std::max(1.0, max_ref);
    EXPECT_LE(max_diff, tol)
        << name << " output " << i << ": max |diff| " << max_diff
        << " vs the reference interpreter (max |ref| " << max_ref << ")";
    std::printf(
        "%s output %zu: max |diff| vs reference %.4g (max |ref| %.4g, "
        "tolerance %.4g%s)\n",
        name.c_str(), i, max_diff, max_ref, tol, CpuHasBf16() ? ", bf16" : "");
  }
}

INSTANTIATE_TEST_SUITE_P(Models, LiteRtDifferential,
                         ::testing::Values("mobilenet_v2_035_96_float",
                                           "resnet_cnn_float",
                                           "efficientnet_block_float"));

TEST(LiteRtDispatchErrors, AbsentLibraryNamesVendorAndSoc) {
  GRAFT_SKIP_IF_NO_WHEEL();
  testing::TempDir tmp;
  GRAFT_COMPILE_OR_SKIP(compiled, "resnet_cnn_float", tmp.path());
  RuntimeOptions o;
  o.dispatch_dirs = {tmp.path()};  // holds no dispatch library
  absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Load(compiled, o);
  ASSERT_FALSE(rt.ok());
  const std::string msg(rt.status().message());
  EXPECT_THAT(msg, HasSubstr("compiled by LiteRT for IntelOpenVINO LNL"));
  EXPECT_THAT(msg, HasSubstr("no LiteRT dispatch library for IntelOpenVINO"));
  EXPECT_THAT(msg, HasSubstr(tmp.path()));
  EXPECT_THAT(msg, HasSubstr("--dispatch-dir"));
  EXPECT_THAT(msg, HasSubstr("libLiteRtDispatch_IntelOpenvino.so"));
}

std::string GoogleTensorPrecompiled() {
  return testing::ThirdPartyModelsDir() +
         "/LiteRT/litert/test/testdata/"
         "shared_input_cpu_npu_google_tensor_precompiled.tflite";
}

TEST(LiteRtDispatchErrors, ModelWithoutStampHasAnUnknownVendor) {
  if (!fs::exists(GoogleTensorPrecompiled())) {
    GTEST_SKIP() << "third-party model absent: " << GoogleTensorPrecompiled();
  }
  RuntimeOptions o;
  if (!WheelDir().empty()) o.dispatch_dirs = {IntelDispatchDir()};
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::Load(GoogleTensorPrecompiled(), o);
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(rt.status().message(), HasSubstr("no LiteRtStamp"));
  EXPECT_THAT(rt.status().message(), HasSubstr("vendor is unknown"));
  EXPECT_THAT(rt.status().message(), HasSubstr("DISPATCH_OP"));
}

// The first DISPATCH_OP of `model`.
tfl::OperatorT* FirstDispatchOp(Model& model) {
  for (Subgraph& sg : model.subgraphs) {
    for (tfl::OperatorT& op : sg.ops) {
      if (IsLiteRtDispatchOp(model, op)) return &op;
    }
  }
  return nullptr;
}

TEST(LiteRtDispatchErrors, CorruptedOptionsAreALoadError) {
  if (!fs::exists(GoogleTensorPrecompiled())) {
    GTEST_SKIP() << "third-party model absent: " << GoogleTensorPrecompiled();
  }
  absl::StatusOr<Model> model = LoadModel(GoogleTensorPrecompiled());
  ASSERT_TRUE(model.ok()) << model.status();
  tfl::OperatorT* op = FirstDispatchOp(*model);
  ASSERT_NE(op, nullptr);
  op->custom_options = {0x12, 0x34, 0x56, 0x02, 0x01};
  testing::TempDir tmp;
  ASSERT_TRUE(SaveModel(*model, tmp.Join("corrupt.tflite")).ok());
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::Load(tmp.Join("corrupt.tflite"));
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(rt.status().message(),
              HasSubstr("corrupted DISPATCH_OP options"));
  EXPECT_THAT(rt.status().message(), HasSubstr("op "));
}

TEST(LiteRtDispatchErrors, BytecodeRangeOutsideTheFileIsALoadError) {
  if (!fs::exists(GoogleTensorPrecompiled())) {
    GTEST_SKIP() << "third-party model absent: " << GoogleTensorPrecompiled();
  }
  absl::StatusOr<Model> model = LoadModel(GoogleTensorPrecompiled());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_TRUE(WriteLiteRtStamp(*model, {"IntelOpenVINO", "LNL"}).ok());
  tfl::OperatorT* op = FirstDispatchOp(*model);
  ASSERT_NE(op, nullptr);
  LiteRtDispatchOpOptions o;
  o.bytecode_offset = 1u << 30;
  o.bytecode_size = 64;
  o.name = "partition_0";
  op->custom_options = EncodeLiteRtDispatchOpOptions(o);
  testing::TempDir tmp;
  ASSERT_TRUE(SaveModel(*model, tmp.Join("range.tflite")).ok());
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      Runtime::Load(tmp.Join("range.tflite"));
  ASSERT_FALSE(rt.ok());
  EXPECT_THAT(rt.status().message(), HasSubstr("bytecode range [1073741824"));
  EXPECT_THAT(rt.status().message(), HasSubstr("outside"));
}

}  // namespace
}  // namespace graft
