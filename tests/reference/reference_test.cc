// Graft's CPU runtime against TFLite's reference interpreter.
//
// CorpusModelsMatchReference: every model of the third-party corpus is
// loaded by the Runtime; those it can run (all their ops have kernels) get
// seeded random inputs, run in the reference interpreter and in Graft, and
// their outputs are compared under tolerance.h's rules. Models refused for
// missing kernels are listed as "not yet runnable" with the reason.
//
// OpZooMatchesReference: a zoo of single-op models built here with
// ModelBuilder (random shapes and options per kernel: padding, strides,
// masks, broadcasting, ...) checked the same way, so each kernel's TFLite
// semantics are pinned by the oracle itself.
//
// All models of a test go through ONE python process (a manifest), which
// keeps the suite within seconds.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/file_util.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "dispatch/tolerance.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

namespace fs = std::filesystem;

std::string ScriptPath() {
  return testing::SourceDir() + "/tests/reference/run_reference.py";
}

bool OracleAvailable() {
  return std::system(
             "python3 -c 'import ai_edge_litert.interpreter, numpy' "
             ">/dev/null 2>&1") == 0;
}

#define GRAFT_SKIP_IF_NO_ORACLE()                                        \
  do {                                                                   \
    if (!OracleAvailable()) {                                            \
      GTEST_SKIP() << "python3 with ai_edge_litert and numpy not found " \
                      "(pip install ai-edge-litert numpy)";              \
    }                                                                    \
  } while (0)

// A multi-line load error ("2 ops cannot run:\n  op 1 ...\n  op 4 ...") as
// one line.
std::string OneLine(absl::string_view s) {
  return absl::StrReplaceAll(s, {{":\n  ", ": "}, {"\n  ", "; "}});
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

struct Summary {
  std::vector<std::string> compared;
  std::vector<std::string> not_runnable;
  std::vector<std::string> reference_failed;
  std::vector<std::string> mismatches;
};

// Loads each model in Graft; runs the runnable ones through the reference
// interpreter (one python process) and compares.
Summary RunDifferential(const std::vector<std::string>& paths,
                        const std::string& work_dir, uint32_t seed,
                        const std::string& label) {
  Summary summary;
  struct Entry {
    std::string path;
    std::string out_dir;
    std::unique_ptr<Runtime> rt;
  };
  std::vector<Entry> entries;
  std::string manifest = "[";
  for (const std::string& path : paths) {
    absl::StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Load(path);
    if (!rt.ok()) {
      std::string msg(rt.status().message());
      // Runtime::Load prefixes the path; keep the reason.
      if (absl::StartsWith(msg, path + ": ")) msg = msg.substr(path.size() + 2);
      summary.not_runnable.push_back(
          absl::StrCat(label.empty() ? path : fs::path(path).filename().string(),
                       ": ", OneLine(msg)));
      continue;
    }
    Entry e;
    e.path = path;
    e.out_dir = absl::StrCat(work_dir, "/", entries.size());
    e.rt = *std::move(rt);
    absl::StrAppend(&manifest, entries.empty() ? "" : ",\n", "{\"model\": ",
                    JsonString(path), ", \"out_dir\": ", JsonString(e.out_dir),
                    ", \"random_seed\": ", seed, "}");
    entries.push_back(std::move(e));
  }
  manifest += "]\n";
  const std::string manifest_path = work_dir + "/manifest.json";
  { std::ofstream(manifest_path) << manifest; }
  const std::string log = work_dir + "/reference.log";
  const std::string cmd = absl::StrCat("python3 ", ScriptPath(),
                                       " --manifest ", manifest_path, " > ",
                                       log, " 2>&1");
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    ADD_FAILURE() << "reference interpreter run failed (" << rc << "): "
                  << ReadFile(log).value_or("");
    return summary;
  }
  for (Entry& e : entries) {
    const std::string name = label.empty()
                                 ? e.path
                                 : fs::path(e.path).filename().string();
    absl::StatusOr<std::string> status = ReadFile(e.out_dir + "/status.json");
    if (!status.ok() ||
        status->find("\"ok\": true") == std::string::npos) {
      summary.reference_failed.push_back(
          absl::StrCat(name, ": ", status.ok() ? *status : "no status"));
      continue;
    }
    Runtime& rt = *e.rt;
    std::string problem;
    for (size_t i = 0; i < rt.num_inputs() && problem.empty(); ++i) {
      absl::StatusOr<NpyArray> in =
          ReadNpy(absl::StrCat(e.out_dir, "/input_", i, ".npy"));
      Tensor* t = rt.input(i);
      if (!in.ok()) {
        problem = std::string(in.status().message());
      } else if (in->type != t->type) {
        problem = absl::StrFormat("input %d: reference fed %s, Graft expects %s",
                                  i, TensorTypeName(in->type),
                                  TensorTypeName(t->type));
      } else if (absl::Status st = rt.SetInputData(i, in->data); !st.ok()) {
        problem = absl::StrFormat("input %d: %s", i, st.message());
      }
    }
    if (problem.empty()) {
      absl::Status st = rt.Invoke();
      if (!st.ok()) problem = absl::StrCat("invoke failed: ", st.message());
    }
    const RuntimeReport report = rt.Report();
    const int64_t k = report.MaxReductionLength();
    int lsb = 0;
    for (const SubgraphReport& sg : report.subgraphs) {
      for (const OpReport& op : sg.ops) {
        lsb = std::max(lsb, QuantizedLsbTolerance(op.detail));
      }
    }
    for (size_t i = 0; i < rt.num_outputs() && problem.empty(); ++i) {
      absl::StatusOr<NpyArray> want =
          ReadNpy(absl::StrCat(e.out_dir, "/output_", i, ".npy"));
      if (!want.ok()) {
        problem = std::string(want.status().message());
        break;
      }
      std::string diff = CompareToReference(*rt.output(i), *want, k, lsb);
      if (!diff.empty()) problem = absl::StrFormat("output %d: %s", i, diff);
    }
    if (problem.empty()) {
      summary.compared.push_back(name);
    } else {
      summary.mismatches.push_back(absl::StrCat(name, ": ", problem));
    }
  }
  return summary;
}

void PrintSummary(const std::string& what, const Summary& s) {
  std::cout << "\n" << what << ": " << s.compared.size()
            << " models compared, " << s.not_runnable.size()
            << " not yet runnable";
  if (!s.reference_failed.empty()) {
    std::cout << ", " << s.reference_failed.size()
              << " failed in the reference interpreter";
  }
  std::cout << ", " << s.mismatches.size() << " mismatched\n";
  for (const auto& m : s.compared) std::cout << "  compared: " << m << "\n";
  for (const auto& m : s.not_runnable) {
    std::cout << "  not yet runnable: " << m << "\n";
  }
  for (const auto& m : s.reference_failed) {
    std::cout << "  reference failed: " << m << "\n";
  }
  for (const auto& m : s.mismatches) std::cout << "  MISMATCH: " << m << "\n";
  std::cout << std::flush;
  ::testing::Test::RecordProperty("compared",
                                  static_cast<int>(s.compared.size()));
  ::testing::Test::RecordProperty("not_runnable",
                                  static_cast<int>(s.not_runnable.size()));
}

// With $GRAFT_REFERENCE_KEEP=DIR, copies a test's models, inputs and
// reference outputs to DIR/<what> for inspection (the temp dir is removed).
void KeepForInspection(const testing::TempDir& tmp, const std::string& what) {
  const char* keep = std::getenv("GRAFT_REFERENCE_KEEP");
  if (keep == nullptr || *keep == '\0') return;
  const fs::path dest = fs::path(keep) / what;
  std::error_code ec;
  fs::remove_all(dest, ec);
  fs::create_directories(dest, ec);
  fs::copy(tmp.path(), dest, fs::copy_options::recursive, ec);
  std::cout << "kept in " << dest.string()
            << (ec ? " (copy failed: " + ec.message() + ")" : "") << "\n";
}

uint32_t Seed() {
  uint32_t seed = 20261122;
  if (const char* env = std::getenv("GRAFT_TEST_SEED")) {
    seed = static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
  }
  std::cout << "[ seed     ] GRAFT_TEST_SEED=" << seed << "\n";
  return seed;
}

TEST(ReferenceTest, CorpusModelsMatchReference) {
  GRAFT_SKIP_IF_NO_CORPUS();
  GRAFT_SKIP_IF_NO_ORACLE();
  const uint32_t seed = Seed();
  std::vector<std::string> paths;
  for (const auto& entry :
       fs::recursive_directory_iterator(testing::ThirdPartyModelsDir())) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".tflite" && ext != ".bin") continue;
    // Only real models: raw vendor bytecode, weight files and deliberately
    // broken files are other suites' business.
    if (!graft::LoadModel(entry.path().string()).ok()) continue;
    paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  const std::string root = testing::ThirdPartyModelsDir() + "/";
  testing::TempDir tmp;
  Summary s = RunDifferential(paths, tmp.path(), seed, "");
  for (auto* list : {&s.compared, &s.not_runnable, &s.reference_failed,
                     &s.mismatches}) {
    for (std::string& m : *list) {
      if (absl::StartsWith(m, root)) m = m.substr(root.size());
    }
  }
  PrintSummary("third-party corpus", s);
  KeepForInspection(tmp, "corpus");
  EXPECT_TRUE(s.mismatches.empty())
      << absl::StrJoin(s.mismatches, "\n");
}

// ---------------------------------------------------------------------
// The op zoo.

class Zoo {
 public:
  Zoo(std::string dir, std::mt19937* rng) : dir_(std::move(dir)), rng_(rng) {}

  int Rand(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(*rng_);
  }
  std::vector<int32_t> RandShape(int rank, int lo = 1, int hi = 5) {
    std::vector<int32_t> s;
    for (int i = 0; i < rank; ++i) s.push_back(Rand(lo, hi));
    return s;
  }
  std::vector<float> RandFloats(int64_t n) {
    std::uniform_real_distribution<float> d(-1, 1);
    std::vector<float> v(n);
    for (float& x : v) x = d(*rng_);
    return v;
  }
  static int64_t Count(const std::vector<int32_t>& s) {
    int64_t n = 1;
    for (int32_t d : s) n *= d;
    return n;
  }

  // Builds one model with `build` and saves it as <name>.tflite.
  void Add(const std::string& name,
           const std::function<void(SubgraphBuilder&)>& build) {
    ModelBuilder mb;
    SubgraphBuilder& g = mb.Subgraph("main");
    build(g);
    absl::StatusOr<Model> model = std::move(mb).Build();
    ASSERT_TRUE(model.ok()) << name << ": " << model.status();
    const std::string path =
        absl::StrFormat("%s/%03d_%s.tflite", dir_, paths_.size(), name);
    absl::Status st = SaveModel(*model, path);
    ASSERT_TRUE(st.ok()) << st;
    paths_.push_back(path);
  }

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::string dir_;
  std::mt19937* rng_;
  std::vector<std::string> paths_;
};

constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I32 = tfl::TensorType_INT32;

constexpr auto I8 = tfl::TensorType_INT8;
constexpr auto U8 = tfl::TensorType_UINT8;
constexpr auto I16 = tfl::TensorType_INT16;

const char* TypeTag(tfl::TensorType t) {
  return t == I8 ? "i8" : t == U8 ? "u8" : t == I16 ? "i16" : "f32";
}

// Random per-tensor quantization for `type` (INT16: zero point 0, as TFLite
// requires of its int16 kernels).
struct QParams {
  float scale;
  int64_t zero_point;
};
QParams RandQParams(Zoo& z, tfl::TensorType type) {
  QParams q;
  q.scale = (type == I16 ? 1.0f / 4096 : 1.0f / 64) * z.Rand(16, 64) / 32;
  q.zero_point = type == I8 ? z.Rand(-20, 20) : type == U8 ? z.Rand(108, 148)
                                                           : 0;
  return q;
}

// y = op(x) with one float input and the given options.
template <typename Options>
void Unary(Zoo& z, const std::string& name, tfl::BuiltinOperator code,
           std::vector<int32_t> shape, const Options* options) {
  z.Add(name, [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, shape);
    OpBuilder op = g.Op(code).In(x);
    if (options != nullptr) op.Options(*options);
    g.Output(op.Out("y", F32, shape));
  });
}

void BuildZoo(Zoo& z) {
  using Op = tfl::BuiltinOperator;
  const std::vector<tfl::ActivationFunctionType> acts = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};

  // Binary arithmetic with broadcasting and fused activations.
  const std::vector<std::pair<const char*, Op>> binaries = {
      {"add", tfl::BuiltinOperator_ADD}, {"sub", tfl::BuiltinOperator_SUB},
      {"mul", tfl::BuiltinOperator_MUL}, {"div", tfl::BuiltinOperator_DIV},
      {"squared_difference", tfl::BuiltinOperator_SQUARED_DIFFERENCE},
      {"maximum", tfl::BuiltinOperator_MAXIMUM},
      {"minimum", tfl::BuiltinOperator_MINIMUM},
      {"floor_div", tfl::BuiltinOperator_FLOOR_DIV},
      {"floor_mod", tfl::BuiltinOperator_FLOOR_MOD},
      {"pow", tfl::BuiltinOperator_POW},
      {"prelu", tfl::BuiltinOperator_PRELU},
  };
  for (const auto& [name, code] : binaries) {
    for (int v = 0; v < 2; ++v) {
      const int rank = z.Rand(1, 4);
      std::vector<int32_t> a = z.RandShape(rank), b = a;
      if (code == tfl::BuiltinOperator_PRELU) {
        b.assign(a.begin() + z.Rand(0, rank - 1), a.end());
        for (int32_t& d : b) d = z.Rand(0, 1) ? d : 1;
      } else {
        for (int32_t& d : b) d = z.Rand(0, 2) == 0 ? 1 : d;
        if (v == 1) b.erase(b.begin(), b.begin() + z.Rand(0, rank - 1));
      }
      const auto act = acts[z.Rand(0, 3)];
      z.Add(absl::StrCat(name, v), [&](SubgraphBuilder& g) {
        TensorId ta = g.Input("a", F32, a);
        TensorId tb = g.Input("b", F32, b);
        OpBuilder op = g.Op(code).In(ta, tb);
        if (code == tfl::BuiltinOperator_ADD) {
          tfl::AddOptionsT o;
          o.fused_activation_function = act;
          op.Options(o);
        } else if (code == tfl::BuiltinOperator_MUL) {
          tfl::MulOptionsT o;
          o.fused_activation_function = act;
          op.Options(o);
        } else if (code == tfl::BuiltinOperator_SUB) {
          tfl::SubOptionsT o;
          o.fused_activation_function = act;
          op.Options(o);
        }
        g.Output(op.Out("y", F32, {}));
      });
    }
  }
  for (const auto& [name, code] :
       std::vector<std::pair<const char*, Op>>{
           {"add_i32", tfl::BuiltinOperator_ADD},
           {"sub_i32", tfl::BuiltinOperator_SUB},
           {"mul_i32", tfl::BuiltinOperator_MUL},
           {"maximum_i32", tfl::BuiltinOperator_MAXIMUM}}) {
    std::vector<int32_t> a = z.RandShape(3), b = {a[2]};
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId ta = g.Input("a", I32, a);
      TensorId tb = g.Input("b", I32, b);
      g.Output(g.Op(code).In(ta, tb).Out("y", I32, {}));
    });
  }
  for (const auto& [name, code] :
       std::vector<std::pair<const char*, Op>>{
           {"less", tfl::BuiltinOperator_LESS},
           {"greater_equal", tfl::BuiltinOperator_GREATER_EQUAL},
           {"equal", tfl::BuiltinOperator_EQUAL}}) {
    std::vector<int32_t> a = z.RandShape(3), b = {1, a[1], 1};
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId ta = g.Input("a", F32, a);
      TensorId tb = g.Input("b", F32, b);
      TensorId c = g.Op(code).In(ta, tb).Out("c", tfl::TensorType_BOOL, {});
      TensorId y = g.Op(tfl::BuiltinOperator_SELECT_V2)
                       .In(c, ta, tb)
                       .Out("y", F32, {});
      g.Output(c).Output(y);
    });
  }

  // Unary ops.
  const std::vector<std::pair<const char*, Op>> unaries = {
      {"relu", tfl::BuiltinOperator_RELU},
      {"relu6", tfl::BuiltinOperator_RELU6},
      {"relu_n1_to_1", tfl::BuiltinOperator_RELU_N1_TO_1},
      {"relu_0_to_1", tfl::BuiltinOperator_RELU_0_TO_1},
      {"logistic", tfl::BuiltinOperator_LOGISTIC},
      {"tanh", tfl::BuiltinOperator_TANH},
      {"hard_swish", tfl::BuiltinOperator_HARD_SWISH},
      {"elu", tfl::BuiltinOperator_ELU},
      {"ceil", tfl::BuiltinOperator_CEIL},
      {"round", tfl::BuiltinOperator_ROUND},
      {"exp", tfl::BuiltinOperator_EXP},
      {"log", tfl::BuiltinOperator_LOG},
      {"sqrt", tfl::BuiltinOperator_SQRT},
      {"rsqrt", tfl::BuiltinOperator_RSQRT},
      {"sin", tfl::BuiltinOperator_SIN},
      {"cos", tfl::BuiltinOperator_COS},
      {"abs", tfl::BuiltinOperator_ABS},
      {"neg", tfl::BuiltinOperator_NEG},
      {"floor", tfl::BuiltinOperator_FLOOR},
      {"sign", tfl::BuiltinOperator_SIGN},
      {"square", tfl::BuiltinOperator_SQUARE},
  };
  for (const auto& [name, code] : unaries) {
    Unary<tfl::AddOptionsT>(z, name, code, z.RandShape(3), nullptr);
  }
  {
    tfl::LeakyReluOptionsT o;
    o.alpha = 0.2f;
    Unary(z, "leaky_relu", tfl::BuiltinOperator_LEAKY_RELU, z.RandShape(2),
          &o);
    tfl::GeluOptionsT exact, approx;
    approx.approximate = true;
    Unary(z, "gelu_exact", tfl::BuiltinOperator_GELU, z.RandShape(2), &exact);
    Unary(z, "gelu_approximate", tfl::BuiltinOperator_GELU, z.RandShape(2),
          &approx);
    tfl::SoftmaxOptionsT sm;
    sm.beta = 1.5f;
    Unary(z, "softmax", tfl::BuiltinOperator_SOFTMAX, z.RandShape(3, 1, 9),
          &sm);
    tfl::LogSoftmaxOptionsT lsm;
    Unary(z, "log_softmax", tfl::BuiltinOperator_LOG_SOFTMAX,
          z.RandShape(2, 1, 9), &lsm);
    tfl::L2NormOptionsT l2;
    Unary(z, "l2_normalization", tfl::BuiltinOperator_L2_NORMALIZATION,
          z.RandShape(3), &l2);
  }
  // Quantized unary ops: GELU's table (INT8, UINT8), RSQRT's fixed point
  // (INT8, inputs at or above the zero point) and table (INT16), LOGISTIC
  // and TANH (INT8, the output scales TFLite requires).
  for (const auto& [name, code, type, approximate] :
       std::vector<std::tuple<const char*, Op, tfl::TensorType, bool>>{
           {"gelu_i8", tfl::BuiltinOperator_GELU, I8, false},
           {"gelu_approximate_u8", tfl::BuiltinOperator_GELU, U8, true},
           {"rsqrt_i8", tfl::BuiltinOperator_RSQRT, I8, false},
           {"rsqrt_i16", tfl::BuiltinOperator_RSQRT, I16, false},
           {"logistic_i8", tfl::BuiltinOperator_LOGISTIC, I8, false},
           {"tanh_i8", tfl::BuiltinOperator_TANH, I8, false}}) {
    std::vector<int32_t> shape = z.RandShape(3);
    QParams qi = RandQParams(z, type), qo = RandQParams(z, type);
    if (code == tfl::BuiltinOperator_RSQRT && type == I8) {
      qi.zero_point = -128;
      qo.zero_point = z.Rand(-128, -100);
    }
    if (code == tfl::BuiltinOperator_LOGISTIC) {  // TFLite's fixed output
      qo.scale = 1.0f / 256, qo.zero_point = -128;
    }
    if (code == tfl::BuiltinOperator_TANH) qo.scale = 1.0f / 128, qo.zero_point = 0;
    if (code == tfl::BuiltinOperator_RSQRT && type == I16) {
      qi.scale = z.Rand(1, 8) * 1e-3f;  // the inputs are 1..3
      qo.scale = 1.0f / 16384 * z.Rand(1, 4);
    }
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", type, shape);
      OpBuilder op = g.Op(code, 2).In(x);
      if (code == tfl::BuiltinOperator_GELU) {
        tfl::GeluOptionsT o;
        o.approximate = approximate;
        op.Options(o);
      }
      TensorId y = op.Out("y", type, shape);
      g.Quantize(x, qi.scale, qi.zero_point);
      g.Quantize(y, qo.scale, qo.zero_point).Output(y);
    });
  }

  // SOFTMAX INT16 -> INT16 (its exp and reciprocal LUTs), fed by a QUANTIZE
  // of a float input so the int16 values span the range; beta 1 and 0.5.
  for (int v = 0; v < 2; ++v) {
    const std::vector<int32_t> shape = z.RandShape(2, 1, 12);
    const float in_scale = 1.0f / 4096 * z.Rand(1, 8);
    z.Add(absl::StrCat("softmax_i16_", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, shape);
      TensorId q = g.Op(tfl::BuiltinOperator_QUANTIZE).In(x).Out("q", I16, {});
      tfl::SoftmaxOptionsT o;
      o.beta = v == 0 ? 1.0f : 0.5f;
      TensorId y = g.Op(tfl::BuiltinOperator_SOFTMAX, 3)
                       .In(q)
                       .Options(o)
                       .Out("y", I16, {});
      g.Quantize(q, in_scale, 0).Quantize(y, 1.0f / 32768, 0).Output(y);
    });
  }

  // FILL, RANGE, ZEROS_LIKE, RANK, BROADCAST_ARGS, ADD_N, LOGICAL_NOT:
  // shapes and ranges from constants (folded at load) and from inputs
  // (shapes at invoke).
  z.Add("fill_const_dims", [&](SubgraphBuilder& g) {
    TensorId v = g.Input("v", F32, {});
    TensorId d = g.Constant<int32_t>("dims", {3}, {2, 1, 3});
    g.Output(g.Op(tfl::BuiltinOperator_FILL).In(d, v).Out("y", F32, {}));
  });
  z.Add("fill_input_dims", [&](SubgraphBuilder& g) {
    TensorId d = g.Input("dims", I32, {2});
    TensorId v = g.Constant<int32_t>("v", {}, {7});
    g.Output(g.Op(tfl::BuiltinOperator_FILL).In(d, v).Out("y", I32, {}));
  });
  z.Add("range_f32", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {});
    TensorId r = g.Op(tfl::BuiltinOperator_RANGE)
                     .In(g.Constant<float>("start", {}, {-1.5f}),
                         g.Constant<float>("limit", {}, {2.2f}),
                         g.Constant<float>("delta", {}, {0.1f}))
                     .Out("r", F32, {});
    g.Output(g.Op(tfl::BuiltinOperator_ADD).In(r, x).Out("y", F32, {}));
  });
  z.Add("range_i32_input_limit", [&](SubgraphBuilder& g) {
    TensorId limit = g.Input("limit", I32, {});
    g.Output(g.Op(tfl::BuiltinOperator_RANGE)
                 .In(g.Constant<int32_t>("start", {}, {9}), limit,
                     g.Constant<int32_t>("delta", {}, {-2}))
                 .Out("y", I32, {}));
  });
  z.Add("zeros_like_rank", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {2, 3});
    g.Output(g.Op(tfl::BuiltinOperator_ZEROS_LIKE).In(x).Out("z", F32, {}));
    g.Output(g.Op(tfl::BuiltinOperator_RANK).In(x).Out("r", I32, {}));
  });
  z.Add("broadcast_args", [&](SubgraphBuilder& g) {
    TensorId a = g.Input("a", I32, {3});
    TensorId b = g.Constant<int32_t>("b", {2}, {1, 1});
    g.Output(g.Op(tfl::BuiltinOperator_BROADCAST_ARGS).In(a, b).Out("y", I32, {}));
  });
  for (const tfl::TensorType t : {F32, I32}) {
    const std::vector<int32_t> shape = z.RandShape(3);
    z.Add(t == F32 ? "add_n_f32" : "add_n_i32", [&](SubgraphBuilder& g) {
      TensorId a = g.Input("a", t, shape), b = g.Input("b", t, shape),
               c = g.Input("c", t, shape);
      g.Output(g.Op(tfl::BuiltinOperator_ADD_N).In(a, b, c).Out("y", t, {}));
    });
  }
  z.Add("logical_not", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", tfl::TensorType_BOOL, {2, 5});
    g.Output(g.Op(tfl::BuiltinOperator_LOGICAL_NOT).In(x).Out(
        "y", tfl::TensorType_BOOL, {}));
  });

  // SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: 4-D and 3-D, float32 and int8
  // (SPACE_TO_BATCH_ND pads int8 with the zero point, here nonzero); random
  // blocks, paddings that make each padded dim a multiple of its block,
  // crops that leave at least one row.
  for (int v = 0; v < 4; ++v) {
    const tfl::TensorType t = v >= 2 ? I8 : F32;
    const int spatial = v % 2 == 0 ? 2 : 1;
    std::vector<int32_t> s2b_shape = {z.Rand(1, 2)}, s2b_block, pads;
    std::vector<int32_t> b2s_shape = {z.Rand(1, 2)}, b2s_block, crops;
    for (int d = 0; d < spatial; ++d) {
      const int b = z.Rand(1, 3), size = z.Rand(1, 6);
      const int total = (b - size % b) % b + b * z.Rand(0, 1);
      const int before = z.Rand(0, total);
      s2b_shape.push_back(size);
      s2b_block.push_back(b);
      pads.push_back(before);
      pads.push_back(total - before);
      const int cb = z.Rand(1, 3), csize = z.Rand(1, 4);
      const int c0 = z.Rand(0, std::min(2, cb * csize - 1));
      const int c1 = z.Rand(0, std::min(2, cb * csize - 1 - c0));
      b2s_shape[0] *= cb;
      b2s_shape.push_back(csize);
      b2s_block.push_back(cb);
      crops.push_back(c0);
      crops.push_back(c1);
    }
    s2b_shape.push_back(z.Rand(1, 3));
    b2s_shape.push_back(z.Rand(1, 3));
    // One entry: `op` with its block and paddings or crops (`amounts`).
    auto add = [&](const char* name, tfl::BuiltinOperator op,
                   const std::vector<int32_t>& shape,
                   const std::vector<int32_t>& block, const char* amounts_name,
                   const std::vector<int32_t>& amounts, int zero_point) {
      z.Add(absl::StrCat(name, v), [&](SubgraphBuilder& g) {
        TensorId x = g.Input("x", t, shape);
        TensorId y =
            g.Op(op)
                .In(x, g.Constant<int32_t>("block", {spatial}, block),
                    g.Constant<int32_t>(amounts_name, {spatial, 2}, amounts))
                .Out("y", t, {});
        if (t == I8) {
          g.Quantize(x, 0.05f, zero_point).Quantize(y, 0.05f, zero_point);
        }
        g.Output(y);
      });
    };
    add("space_to_batch_nd_", tfl::BuiltinOperator_SPACE_TO_BATCH_ND,
        s2b_shape, s2b_block, "pads", pads, -9);
    add("batch_to_space_nd_", tfl::BuiltinOperator_BATCH_TO_SPACE_ND,
        b2s_shape, b2s_block, "crops", crops, 4);
  }

  // CUMSUM: every exclusive/reverse combination on float32, then int32 and
  // int64, random ranks and (negative) axes.
  for (int v = 0; v < 6; ++v) {
    const int rank = z.Rand(1, 4);
    const std::vector<int32_t> s = z.RandShape(rank, 1, 6);
    const int32_t axis = z.Rand(-rank, rank - 1);
    const tfl::TensorType t =
        v < 4 ? F32 : v == 4 ? I32 : tfl::TensorType_INT64;
    tfl::CumsumOptionsT o;
    o.exclusive = (v & 1) != 0;
    o.reverse = (v & 2) != 0;
    z.Add(absl::StrCat("cumsum_", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", t, s);
      TensorId a = g.Constant<int32_t>("axis", {}, {axis});
      g.Output(g.Op(tfl::BuiltinOperator_CUMSUM).In(x, a).Options(o).Out(
          "y", t, {}));
    });
  }

  // ONE_HOT: float32, int8, int32, int64 and bool outputs, int32 and int64
  // indices (inputs in [1, 4), so some fall past a depth of 2 or 3), every
  // axis from -1 to rank.
  for (int v = 0; v < 5; ++v) {
    const tfl::TensorType types[] = {F32, I8, I32, tfl::TensorType_INT64,
                                     tfl::TensorType_BOOL};
    const tfl::TensorType t = types[v];
    const tfl::TensorType it = v % 2 ? tfl::TensorType_INT64 : I32;
    const int rank = z.Rand(1, 3);
    const std::vector<int32_t> s = z.RandShape(rank, 1, 4);
    const int32_t depth = z.Rand(2, 5);
    tfl::OneHotOptionsT o;
    o.axis = z.Rand(-1, rank);
    z.Add(absl::StrCat("one_hot_", v), [&](SubgraphBuilder& g) {
      // A scalar of type t (the low bytes of `value`, little-endian).
      auto scalar = [&](const char* name, int64_t value) {
        const size_t size = t == F32 || t == I32 ? 4
                            : t == tfl::TensorType_INT64 ? 8 : 1;
        std::vector<uint8_t> bytes(size);
        if (t == F32) {
          const float f = static_cast<float>(value);
          std::memcpy(bytes.data(), &f, size);
        } else {
          std::memcpy(bytes.data(), &value, size);
        }
        return g.Constant(name, t, {}, Bytes::Own(std::move(bytes)));
      };
      const bool is_bool = t == tfl::TensorType_BOOL;
      TensorId idx = g.Input("indices", it, s);
      TensorId d = g.Constant<int32_t>("depth", {}, {depth});
      g.Output(g.Op(tfl::BuiltinOperator_ONE_HOT)
                   .In(idx, d, scalar("on", is_bool ? 1 : 3),
                       scalar("off", is_bool ? 0 : -1))
                   .Options(o)
                   .Out("y", t, {}));
    });
  }

  // Quantized binary ops with broadcasting.
  for (const auto& [name, code, type] :
       std::vector<std::tuple<const char*, Op, tfl::TensorType>>{
           {"squared_difference_i8", tfl::BuiltinOperator_SQUARED_DIFFERENCE, I8},
           {"squared_difference_i8_broadcast",
            tfl::BuiltinOperator_SQUARED_DIFFERENCE, I8},
           {"add_i8", tfl::BuiltinOperator_ADD, I8},
           {"mul_i16", tfl::BuiltinOperator_MUL, I16},
           {"prelu_i8_broadcast", tfl::BuiltinOperator_PRELU, I8},
           {"prelu_u8", tfl::BuiltinOperator_PRELU, U8}}) {
    std::vector<int32_t> a = z.RandShape(3), b = a;
    if (absl::StrContains(name, "broadcast")) b = {a[2]};
    const QParams qa = RandQParams(z, type), qb = RandQParams(z, type);
    QParams qo = RandQParams(z, type);
    if (code == tfl::BuiltinOperator_SQUARED_DIFFERENCE) qo.scale *= 8;
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId ta = g.Input("a", type, a);
      TensorId tb = g.Input("b", type, b);
      TensorId y = g.Op(code).In(ta, tb).Out("y", type, {});
      g.Quantize(ta, qa.scale, qa.zero_point).Quantize(tb, qb.scale, qb.zero_point);
      g.Quantize(y, qo.scale, qo.zero_point).Output(y);
    });
  }

  // Data movement on quantized tensors (the bytes move, the scale stays).
  z.Add("transpose_i8", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", I8, {2, 3, 4});
    TensorId p = g.Constant<int32_t>("perm", {3}, {2, 0, 1});
    TensorId y = g.Op(tfl::BuiltinOperator_TRANSPOSE).In(x, p).Out("y", I8, {});
    g.Quantize(x, 0.05f, 3).Quantize(y, 0.05f, 3).Output(y);
  });
  // REVERSE_V2: one axis (a negative one), and two adjacent axes.
  for (int v = 0; v < 3; ++v) {
    const std::vector<int32_t> shape = z.RandShape(3, 1, 5);
    const std::vector<int32_t> axes =
        v == 0 ? std::vector<int32_t>{1}
               : v == 1 ? std::vector<int32_t>{-1} : std::vector<int32_t>{1, 2};
    const tfl::TensorType t = v == 1 ? I8 : F32;
    z.Add(absl::StrCat("reverse_v2_", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", t, shape);
      TensorId a = g.Constant<int32_t>(
          "axes", {static_cast<int32_t>(axes.size())}, axes);
      TensorId y = g.Op(tfl::BuiltinOperator_REVERSE_V2, v == 2 ? 3 : 1)
                       .In(x, a)
                       .Out("y", t, {});
      if (t == I8) g.Quantize(x, 0.05f, 3).Quantize(y, 0.05f, 3);
      g.Output(y);
    });
  }
  z.Add("gather_reshape_i16", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", I16, {5, 4});
    TensorId idx = g.Constant<int32_t>("idx", {3}, {4, 0, 2});
    tfl::GatherOptionsT o;
    TensorId y = g.Op(tfl::BuiltinOperator_GATHER).In(x, idx).Options(o).Out(
        "y", I16, {3, 4});
    TensorId shape = g.Constant<int32_t>("shape", {2}, {6, 2});
    TensorId r = g.Op(tfl::BuiltinOperator_RESHAPE).In(y, shape).Out(
        "r", I16, {6, 2});
    g.Quantize(x, 1e-3f, 0).Quantize(y, 1e-3f, 0).Quantize(r, 1e-3f, 0);
    g.Output(r);
  });
  z.Add("strided_slice_split_i8", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", I8, {4, 6});
    TensorId b = g.Constant<int32_t>("begin", {2}, {1, 0});
    TensorId e = g.Constant<int32_t>("end", {2}, {4, 6});
    TensorId st = g.Constant<int32_t>("strides", {2}, {2, 1});
    tfl::StridedSliceOptionsT so;
    TensorId y = g.Op(tfl::BuiltinOperator_STRIDED_SLICE)
                     .In(x, b, e, st)
                     .Options(so)
                     .Out("y", I8, {2, 6});
    TensorId axis = g.Constant<int32_t>("axis", {}, {1});
    tfl::SplitOptionsT sp;
    sp.num_splits = 2;
    auto outs = g.Op(tfl::BuiltinOperator_SPLIT).In(axis, y).Options(sp).Outs(
        {{"a", I8, {2, 3}}, {"c", I8, {2, 3}}});
    g.Quantize(x, 0.1f, -5).Quantize(y, 0.1f, -5);
    for (TensorId t : outs) g.Quantize(t, 0.1f, -5).Output(t);
  });

  for (const auto& [name, from, to] :
       std::vector<std::tuple<const char*, tfl::TensorType, tfl::TensorType>>{
           {"cast_f32_i32", F32, I32},
           {"cast_i32_f32", I32, F32},
           {"cast_f32_bool", F32, tfl::TensorType_BOOL},
           {"cast_bool_f32", tfl::TensorType_BOOL, F32},
           {"cast_i32_i64", I32, tfl::TensorType_INT64}}) {
    std::vector<int32_t> s = z.RandShape(2);
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", from, s);
      tfl::CastOptionsT o;
      o.in_data_type = from;
      o.out_data_type = to;
      g.Output(g.Op(tfl::BuiltinOperator_CAST).In(x).Options(o).Out("y", to,
                                                                      s));
    });
  }

  // Convolutions.
  for (int v = 0; v < 8; ++v) {
    const int n = z.Rand(1, 2), h = z.Rand(3, 9), w = z.Rand(3, 9);
    const int groups = v == 7 ? 2 : 1;
    const int cin = z.Rand(1, 4) * groups, cout = z.Rand(1, 5) * groups;
    const int kh = z.Rand(1, 3), kw = z.Rand(1, 3);
    tfl::Conv2DOptionsT o;
    o.padding = z.Rand(0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_h = z.Rand(1, 2), o.stride_w = z.Rand(1, 2);
    o.dilation_h_factor = v == 5 ? 2 : 1;
    o.dilation_w_factor = v == 5 ? 2 : 1;
    if (o.padding == tfl::Padding_VALID) {
      o.dilation_h_factor = o.dilation_w_factor = 1;
    }
    o.fused_activation_function = acts[z.Rand(0, 3)];
    // TFLite's CONV_2D requires the bias; the unit test covers none.
    const bool bias = true;
    auto weights = z.RandFloats(int64_t{cout} * kh * kw * (cin / groups));
    auto b = z.RandFloats(cout);
    z.Add(absl::StrCat("conv_2d", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {n, h, w, cin});
      TensorId f = g.Constant<float>("w", {cout, kh, kw, cin / groups}, weights);
      TensorId tb = bias ? g.Constant<float>("b", {cout}, b) : kNoTensor;
      g.Output(g.Op(tfl::BuiltinOperator_CONV_2D)
                   .In(x, f, tb)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }
  for (int v = 0; v < 5; ++v) {
    const int h = z.Rand(3, 9), w = z.Rand(3, 9), cin = z.Rand(1, 5);
    const int mult = v == 3 ? 2 : 1, kh = z.Rand(1, 3), kw = z.Rand(1, 3);
    tfl::DepthwiseConv2DOptionsT o;
    o.padding = v % 2 ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_h = z.Rand(1, 2), o.stride_w = z.Rand(1, 2);
    o.depth_multiplier = mult;
    if (v == 4) {
      // Dilated, SAME so that a small image keeps a positive output size.
      o.dilation_h_factor = o.dilation_w_factor = 2;
      o.padding = tfl::Padding_SAME;
    }
    o.fused_activation_function = acts[z.Rand(0, 3)];
    auto weights = z.RandFloats(int64_t{kh} * kw * cin * mult);
    auto b = z.RandFloats(cin * mult);
    z.Add(absl::StrCat("depthwise_conv_2d", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {1, h, w, cin});
      TensorId f = g.Constant<float>("w", {1, kh, kw, cin * mult}, weights);
      TensorId tb = g.Constant<float>("b", {cin * mult}, b);
      g.Output(g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D)
                   .In(x, f, tb)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }
  for (int v = 0; v < 4; ++v) {
    const int h = z.Rand(2, 5), w = z.Rand(2, 5), cin = z.Rand(1, 3);
    const int cout = z.Rand(1, 3), k = z.Rand(1, 3), s = z.Rand(1, 2);
    tfl::TransposeConvOptionsT o;
    o.padding = v % 2 ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_h = o.stride_w = s;
    const int oh = o.padding == tfl::Padding_SAME ? h * s : (h - 1) * s + k;
    const int ow = o.padding == tfl::Padding_SAME ? w * s : (w - 1) * s + k;
    auto weights = z.RandFloats(int64_t{cout} * k * k * cin);
    auto b = z.RandFloats(cout);
    z.Add(absl::StrCat("transpose_conv", v), [&](SubgraphBuilder& g) {
      TensorId shape = g.Constant<int32_t>("shape", {4}, {1, oh, ow, cout});
      TensorId f = g.Constant<float>("w", {cout, k, k, cin}, weights);
      TensorId x = g.Input("x", F32, {1, h, w, cin});
      TensorId tb = v >= 2 ? g.Constant<float>("b", {cout}, b) : kNoTensor;
      OpBuilder op = g.Op(tfl::BuiltinOperator_TRANSPOSE_CONV, 3)
                         .In(shape, f, x);
      if (tb != kNoTensor) op.In(tb);
      g.Output(op.Options(o).Out("y", F32, {1, oh, ow, cout}));
    });
  }

  // Matrix multiplies.
  for (int v = 0; v < 4; ++v) {
    const int k = z.Rand(1, 40), n = z.Rand(1, 20);
    tfl::FullyConnectedOptionsT o;
    o.keep_num_dims = v % 2 == 1;
    o.fused_activation_function = acts[z.Rand(0, 3)];
    auto weights = z.RandFloats(int64_t{n} * k);
    auto b = z.RandFloats(n);
    std::vector<int32_t> in = {z.Rand(1, 3), z.Rand(1, 7), k};
    z.Add(absl::StrCat("fully_connected", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, in);
      TensorId w = v == 3 ? g.Input("w", F32, {n, k})
                          : g.Constant<float>("w", {n, k}, weights);
      TensorId tb = v == 2 ? kNoTensor : g.Constant<float>("b", {n}, b);
      g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, tb)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }
  for (int v = 0; v < 5; ++v) {
    const int m = z.Rand(1, 9), k = z.Rand(1, 20), n = z.Rand(1, 11);
    tfl::BatchMatMulOptionsT o;
    o.adj_x = v == 1 || v == 3;
    o.adj_y = v == 2 || v == 3;
    std::vector<int32_t> lhs = {2, 3, o.adj_x ? k : m, o.adj_x ? m : k};
    std::vector<int32_t> rhs = {v == 4 ? 1 : 2, 3, o.adj_y ? n : k,
                                o.adj_y ? k : n};
    if (v == 4) rhs.erase(rhs.begin());  // rank-3 rhs broadcast over batch
    auto rhs_values = z.RandFloats(Zoo::Count(rhs));
    z.Add(absl::StrCat("batch_matmul", v), [&](SubgraphBuilder& g) {
      TensorId a = g.Input("a", F32, lhs);
      TensorId b = v == 4 ? g.Constant<float>("b", rhs, rhs_values)
                          : g.Input("b", F32, rhs);
      g.Output(g.Op(tfl::BuiltinOperator_BATCH_MATMUL)
                   .In(a, b)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }

  // Hybrid FULLY_CONNECTED (FLOAT32 input, INT8 weights): per tensor and
  // per channel, symmetric and asymmetric input rows, several rows, a
  // reduction past the SSE blocks of 16; the last with a weight of -128.
  for (int v = 0; v < 4; ++v) {
    const int m = z.Rand(1, 5), k = z.Rand(1, 40), n = z.Rand(1, 20);
    std::vector<int8_t> w8(int64_t{n} * k);
    for (int8_t& x : w8) x = static_cast<int8_t>(z.Rand(-127, 127));
    if (v == 3) w8[0] = -128;
    std::vector<float> scales(v % 2 ? n : 1);
    for (float& sc : scales) sc = 0.002f * z.Rand(5, 25);
    const auto b = z.RandFloats(n);
    tfl::FullyConnectedOptionsT o;
    o.asymmetric_quantize_inputs = v >= 2;
    o.fused_activation_function = acts[z.Rand(0, 3)];
    z.Add(absl::StrCat("fully_connected_hybrid", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {m, k});
      TensorId w = g.Constant<int8_t>("w", {n, k}, w8);
      g.QuantizePerChannel(w, scales,
                           std::vector<int64_t>(scales.size(), 0), 0);
      TensorId tb = g.Constant<float>("b", {n}, b);
      g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, tb)
                   .Options(o)
                   .Out("y", F32, {m, n}));
    });
  }

  // Quantized BATCH_MATMUL: INT8 (any zero points), INT16, INT16 x INT8
  // (zero points 0), with adjoints and a broadcast constant rhs.
  for (int v = 0; v < 6; ++v) {
    const tfl::TensorType lt = v < 3 ? I8 : I16;
    const tfl::TensorType rt = v == 5 ? I8 : lt;
    const int m = z.Rand(1, 7), k = z.Rand(1, 24), n = z.Rand(1, 9);
    tfl::BatchMatMulOptionsT o;
    o.adj_x = v == 1 || v == 4;
    o.adj_y = v == 2 || v == 4;
    std::vector<int32_t> lhs = {2, o.adj_x ? k : m, o.adj_x ? m : k};
    std::vector<int32_t> rhs = {o.adj_y ? n : k, o.adj_y ? k : n};
    if (v != 2) rhs.insert(rhs.begin(), 2);
    const QParams ql = RandQParams(z, lt);
    QParams qr = RandQParams(z, rt);
    if (lt == I16) qr.zero_point = 0;  // TFLite's 16-bit matmuls need it
    QParams qo = RandQParams(z, lt);
    // INT16 inputs are in [1, 3] (run_reference.py): a larger multiplier
    // than for INT8's full range keeps those outputs off zero.
    qo.scale = ql.scale * qr.scale * (lt == I8 ? 64 : 1) * z.Rand(1, 4);
    std::vector<int8_t> rhs8(Zoo::Count(rhs));
    for (int8_t& x : rhs8) x = static_cast<int8_t>(z.Rand(-128, 127));
    z.Add(absl::StrCat("batch_matmul_", TypeTag(lt), TypeTag(rt), v),
          [&](SubgraphBuilder& g) {
            TensorId a = g.Input("a", lt, lhs);
            TensorId b = rt == I8 && v != 0 ? g.Constant<int8_t>("b", rhs, rhs8)
                                            : g.Input("b", rt, rhs);
            TensorId y = g.Op(tfl::BuiltinOperator_BATCH_MATMUL, 4)
                             .In(a, b)
                             .Options(o)
                             .Out("y", lt, {});
            g.Quantize(a, ql.scale, ql.zero_point);
            g.Quantize(b, qr.scale, qr.zero_point);
            g.Quantize(y, qo.scale, qo.zero_point).Output(y);
          });
  }

  // BATCH_MATMUL INT16 x constant INT8 -> INT16 (per-tensor scales, zero
  // points 0): random adjoints, batch dims broadcast from either side, and
  // one k past the int32 partial sums' blocks of 2048 products.
  for (int v = 0; v < 4; ++v) {
    const int m = z.Rand(1, 40), n = z.Rand(1, 40);
    const int k = v == 3 ? z.Rand(2049, 2600) : z.Rand(1, 300);
    tfl::BatchMatMulOptionsT o;
    o.adj_x = z.Rand(0, 1) == 1;
    o.adj_y = z.Rand(0, 1) == 1;
    std::vector<int32_t> lhs = {o.adj_x ? k : m, o.adj_x ? m : k};
    std::vector<int32_t> rhs = {o.adj_y ? n : k, o.adj_y ? k : n};
    const int b0 = z.Rand(2, 3), b1 = z.Rand(2, 3);
    if (v == 0) {  // lhs [b0, b1, ...] x rhs [b1, ...]
      lhs.insert(lhs.begin(), {b0, b1});
      rhs.insert(rhs.begin(), b1);
    } else if (v == 1) {  // lhs [1, b1, ...] x rhs [b0, 1, ...]
      lhs.insert(lhs.begin(), {1, b1});
      rhs.insert(rhs.begin(), {b0, 1});
    } else if (v == 2) {  // lhs [b0, ...] x rhs [...]
      lhs.insert(lhs.begin(), b0);
    }
    const QParams ql = RandQParams(z, I16);
    const float sr = 1.0f / 64 * z.Rand(16, 64) / 32;
    // run_reference.py feeds INT16 inputs in [1, 3]: multipliers of 1/4 to
    // 1 keep the outputs off zero and off saturation.
    const float so = ql.scale * sr * z.Rand(1, 4);
    std::vector<int8_t> rhs8(Zoo::Count(rhs));
    for (int8_t& x : rhs8) x = static_cast<int8_t>(z.Rand(-128, 127));
    z.Add(absl::StrCat("batch_matmul_i16i8_", v, o.adj_x ? "_adj_x" : "",
                       o.adj_y ? "_adj_y" : ""),
          [&](SubgraphBuilder& g) {
            TensorId a = g.Input("a", I16, lhs);
            TensorId b = g.Constant<int8_t>("b", rhs, rhs8);
            TensorId y = g.Op(tfl::BuiltinOperator_BATCH_MATMUL, 4)
                             .In(a, b)
                             .Options(o)
                             .Out("y", I16, {});
            g.Quantize(a, ql.scale, 0).Quantize(b, sr, 0);
            g.Quantize(y, so, 0).Output(y);
          });
  }

  // Pooling.
  for (int v = 0; v < 6; ++v) {
    tfl::Pool2DOptionsT o;
    o.padding = v % 2 ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.filter_height = z.Rand(1, 3), o.filter_width = z.Rand(1, 3);
    o.stride_h = z.Rand(1, 2), o.stride_w = z.Rand(1, 2);
    o.fused_activation_function = acts[z.Rand(0, 3)];
    const int h = z.Rand(3, 8), w = z.Rand(3, 8), c = z.Rand(1, 4);
    z.Add(absl::StrCat(v < 3 ? "average_pool_2d" : "max_pool_2d", v),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, {1, h, w, c});
            g.Output(g.Op(v < 3 ? tfl::BuiltinOperator_AVERAGE_POOL_2D
                                : tfl::BuiltinOperator_MAX_POOL_2D)
                         .In(x)
                         .Options(o)
                         .Out("y", F32, {}));
          });
  }

  // Reductions.
  const std::vector<std::pair<const char*, Op>> reducers = {
      {"mean", tfl::BuiltinOperator_MEAN},
      {"sum", tfl::BuiltinOperator_SUM},
      {"reduce_max", tfl::BuiltinOperator_REDUCE_MAX},
      {"reduce_min", tfl::BuiltinOperator_REDUCE_MIN},
      {"reduce_prod", tfl::BuiltinOperator_REDUCE_PROD}};
  for (const auto& [name, code] : reducers) {
    for (int v = 0; v < 2; ++v) {
      std::vector<int32_t> s = z.RandShape(4);
      std::vector<int32_t> axes = {z.Rand(-4, 3)};
      if (v == 1) axes.push_back(z.Rand(0, 3));
      if (v == 1 && axes[0] % 4 == axes[1] % 4) axes.pop_back();
      tfl::ReducerOptionsT o;
      o.keep_dims = v == 0;
      z.Add(absl::StrCat(name, v), [&](SubgraphBuilder& g) {
        TensorId x = g.Input("x", F32, s);
        TensorId a = g.Constant<int32_t>("axes", {int32_t(axes.size())}, axes);
        g.Output(g.Op(code).In(x, a).Options(o).Out("y", F32, {}));
      });
    }
  }
  // Quantized reductions: the same and different input/output scales, the
  // 4-D spatial mean (axes 1 and 2, keep_dims) of pooling heads, and
  // MAX/MIN on the integers.
  for (const auto& [name, code] : std::vector<std::pair<const char*, Op>>{
           {"mean", tfl::BuiltinOperator_MEAN},
           {"sum", tfl::BuiltinOperator_SUM}}) {
    for (tfl::TensorType type : {I8, U8, I16}) {
      for (int v = 0; v < 3; ++v) {
        std::vector<int32_t> s = z.RandShape(4, 1, 6);
        std::vector<int32_t> axes = {z.Rand(-4, 3)};
        if (v == 1) axes.push_back((axes[0] + z.Rand(1, 3) + 4) % 4);
        if (v == 2) axes = {1, 2};
        const QParams in = RandQParams(z, type);
        QParams out = in;
        if (v > 0) {
          int64_t count = 1;
          for (int32_t a : axes) count *= s[(a + 4) % 4];
          out = RandQParams(z, type);
          if (code == tfl::BuiltinOperator_SUM) {
            out.scale *= static_cast<float>(count) / 2;
          }
        }
        tfl::ReducerOptionsT o;
        o.keep_dims = v != 1;
        z.Add(absl::StrCat(name, "_", TypeTag(type), v),
              [&](SubgraphBuilder& g) {
                TensorId x = g.Input("x", type, s);
                TensorId a =
                    g.Constant<int32_t>("axes", {int32_t(axes.size())}, axes);
                TensorId y = g.Op(code).In(x, a).Options(o).Out("y", type, {});
                g.Quantize(x, in.scale, in.zero_point);
                g.Quantize(y, out.scale, out.zero_point).Output(y);
              });
      }
    }
  }
  for (const auto& [name, code, type] :
       std::vector<std::tuple<const char*, Op, tfl::TensorType>>{
           {"reduce_max_i8", tfl::BuiltinOperator_REDUCE_MAX, I8},
           {"reduce_min_i16", tfl::BuiltinOperator_REDUCE_MIN, I16}}) {
    std::vector<int32_t> s = z.RandShape(3, 1, 6);
    const QParams q = RandQParams(z, type);
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", type, s);
      TensorId a = g.Constant<int32_t>("axes", {1}, {z.Rand(0, 2)});
      tfl::ReducerOptionsT o;
      TensorId y = g.Op(code).In(x, a).Options(o).Out("y", type, {});
      g.Quantize(x, q.scale, q.zero_point);
      g.Quantize(y, q.scale, q.zero_point).Output(y);
    });
  }
  {
    std::vector<int32_t> s = z.RandShape(3, 2, 6);
    z.Add("arg_max", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, s);
      TensorId a = g.Constant<int32_t>("axis", {1}, {1});
      tfl::ArgMaxOptionsT o;
      o.output_type = I32;
      g.Output(g.Op(tfl::BuiltinOperator_ARG_MAX).In(x, a).Options(o).Out(
          "y", I32, {}));
    });
  }

  // LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM: every optional part on and off
  // (CIFG, peepholes, projection with and without bias, layer norm, clips),
  // time-major and batch-major sequences, the 20- and 24-input forms.
  struct LstmSpec {
    bool sequence, time_major, cifg, peephole, projection, proj_bias,
        layer_norm, twenty_inputs;
    float cell_clip, proj_clip;
    tfl::ActivationFunctionType act;
  };
  const auto kTanh = tfl::ActivationFunctionType_TANH;
  const std::vector<LstmSpec> lstms = {
      {false, false, false, false, false, false, false, false, 0, 0, kTanh},
      {false, false, false, true, true, true, false, true, 0.5f, 0.3f, kTanh},
      {false, false, true, true, false, false, true, false, 0, 0, kTanh},
      {true, false, false, false, false, false, false, false, 0, 0, kTanh},
      {true, true, true, false, true, true, false, true, 0.4f, 0, kTanh},
      {true, false, false, true, true, false, true, false, 0.6f, 0,
       tfl::ActivationFunctionType_RELU},
      {true, true, false, false, false, false, true, false, 0, 0, kTanh},
  };
  for (size_t v = 0; v < lstms.size(); ++v) {
    const LstmSpec& l = lstms[v];
    const int batch = z.Rand(1, 3), steps = l.sequence ? z.Rand(2, 5) : 1;
    // Layer norm over two cells normalizes a difference to about +-1, and
    // when the two nearly agree the result is ill-conditioned (float
    // rounding differences are amplified past any tolerance): 4 or more.
    const int ni = z.Rand(1, 6), nc = z.Rand(l.layer_norm ? 4 : 2, 7);
    const int no = l.projection ? z.Rand(1, 5) : nc;
    z.Add(absl::StrCat(l.sequence ? "sequence_lstm" : "lstm", v),
          [&](SubgraphBuilder& g) {
            std::vector<int32_t> in_shape = {batch, ni};
            if (l.sequence) {
              in_shape = l.time_major ? std::vector<int32_t>{steps, batch, ni}
                                      : std::vector<int32_t>{batch, steps, ni};
            }
            std::vector<TensorId> ins(l.twenty_inputs ? 20 : 24, kNoTensor);
            ins[0] = g.Input("x", F32, in_shape);
            auto weights = [&](const char* name, std::vector<int32_t> shape) {
              return g.Constant<float>(name, shape,
                                       z.RandFloats(Zoo::Count(shape)));
            };
            for (int gate = l.cifg ? 1 : 0; gate < 4; ++gate) {
              ins[1 + gate] = weights("w", {nc, ni});
              ins[5 + gate] = weights("r", {nc, no});
              ins[12 + gate] = weights("b", {nc});
              if (l.layer_norm) ins[20 + gate] = weights("ln", {nc});
            }
            if (l.peephole) {
              for (int p = l.cifg ? 1 : 0; p < 3; ++p) {
                ins[9 + p] = weights("peephole", {nc});
              }
            }
            if (l.projection) {
              ins[16] = weights("proj", {no, nc});
              if (l.proj_bias) ins[17] = weights("proj_bias", {no});
            }
            ins[18] = g.Variable("h", F32, {batch, no});
            ins[19] = g.Variable("c", F32, {batch, nc});
            std::vector<int32_t> out_shape = in_shape;
            out_shape.back() = no;
            if (l.sequence) {
              tfl::UnidirectionalSequenceLSTMOptionsT o;
              o.fused_activation_function = l.act;
              o.cell_clip = l.cell_clip, o.proj_clip = l.proj_clip;
              o.time_major = l.time_major;
              OpBuilder op = g.Op(tfl::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM);
              op.Inputs(ins);
              g.Output(op.Options(o).Out("y", F32, out_shape));
            } else {
              tfl::LSTMOptionsT o;
              o.fused_activation_function = l.act;
              o.cell_clip = l.cell_clip, o.proj_clip = l.proj_clip;
              OpBuilder op = g.Op(tfl::BuiltinOperator_LSTM);
              op.Inputs(ins);
              g.Output(op.Options(o).Out("y", F32, out_shape));
            }
          });
  }

  // Hybrid LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM (FLOAT32 activations,
  // per-tensor INT8 weights and peepholes, as dynamic-range quantization
  // makes them): symmetric and asymmetric input quantization, CIFG,
  // peepholes, cell clip, both time layouts, activations; the last with
  // weights of -128.
  struct HybridLstmSpec {
    bool sequence, time_major, cifg, peephole, asymmetric;
    float cell_clip;
    tfl::ActivationFunctionType act;
  };
  const std::vector<HybridLstmSpec> hybrid_lstms = {
      {true, false, false, false, false, 0, kTanh},
      {true, true, true, true, true, 0.5f, kTanh},
      {false, false, false, true, true, 0, tfl::ActivationFunctionType_RELU},
      {true, false, false, false, true, 0, kTanh},
  };
  for (size_t v = 0; v < hybrid_lstms.size(); ++v) {
    const HybridLstmSpec& l = hybrid_lstms[v];
    const int batch = z.Rand(1, 3), steps = l.sequence ? z.Rand(2, 5) : 1;
    const int ni = z.Rand(1, 20), nc = z.Rand(2, 20);
    z.Add(absl::StrCat(l.sequence ? "sequence_lstm_hybrid" : "lstm_hybrid", v),
          [&](SubgraphBuilder& g) {
            std::vector<int32_t> in_shape = {batch, ni};
            if (l.sequence) {
              in_shape = l.time_major ? std::vector<int32_t>{steps, batch, ni}
                                      : std::vector<int32_t>{batch, steps, ni};
            }
            std::vector<TensorId> ins(24, kNoTensor);
            ins[0] = g.Input("x", F32, in_shape);
            auto weights = [&](const char* name, std::vector<int32_t> shape) {
              std::vector<int8_t> w8(Zoo::Count(shape));
              for (int8_t& x : w8) x = static_cast<int8_t>(z.Rand(-127, 127));
              if (v == 3) w8[0] = -128;  // TFLite's x86 dot product quirk
              TensorId t = g.Constant<int8_t>(name, shape, w8);
              g.Quantize(t, 0.002f * z.Rand(5, 25), 0);
              return t;
            };
            for (int gate = l.cifg ? 1 : 0; gate < 4; ++gate) {
              ins[1 + gate] = weights("w", {nc, ni});
              ins[5 + gate] = weights("r", {nc, nc});
              ins[12 + gate] = g.Constant<float>("b", {nc}, z.RandFloats(nc));
            }
            if (l.peephole) {
              for (int p = l.cifg ? 1 : 0; p < 3; ++p) {
                ins[9 + p] = weights("peephole", {nc});
              }
            }
            ins[18] = g.Variable("h", F32, {batch, nc});
            ins[19] = g.Variable("c", F32, {batch, nc});
            std::vector<int32_t> out_shape = in_shape;
            out_shape.back() = nc;
            if (l.sequence) {
              tfl::UnidirectionalSequenceLSTMOptionsT o;
              o.fused_activation_function = l.act;
              o.cell_clip = l.cell_clip;
              o.time_major = l.time_major;
              o.asymmetric_quantize_inputs = l.asymmetric;
              OpBuilder op =
                  g.Op(tfl::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM);
              op.Inputs(ins);
              g.Output(op.Options(o).Out("y", F32, out_shape));
            } else {
              tfl::LSTMOptionsT o;
              o.fused_activation_function = l.act;
              o.cell_clip = l.cell_clip;
              o.asymmetric_quantize_inputs = l.asymmetric;
              OpBuilder op = g.Op(tfl::BuiltinOperator_LSTM);
              op.Inputs(ins);
              g.Output(op.Options(o).Out("y", F32, out_shape));
            }
          });
  }

  // SVDF (float32): ranks 1 and 2, with and without bias, batches.
  for (int v = 0; v < 3; ++v) {
    const int batch = z.Rand(1, 3), input_size = z.Rand(1, 6);
    const int rank = v == 1 ? 2 : 1, units = z.Rand(1, 4);
    const int filters = units * rank, memory = z.Rand(1, 5);
    z.Add(absl::StrCat("svdf", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {batch, input_size});
      TensorId wf = g.Constant<float>("wf", {filters, input_size},
                                      z.RandFloats(filters * input_size));
      TensorId wt = g.Constant<float>("wt", {filters, memory},
                                      z.RandFloats(filters * memory));
      TensorId b = v == 2 ? kNoTensor
                          : g.Constant<float>("b", {units}, z.RandFloats(units));
      TensorId state = g.Variable("state", F32, {batch, memory * filters});
      tfl::SVDFOptionsT o;
      o.rank = rank;
      o.fused_activation_function = v == 0 ? tfl::ActivationFunctionType_RELU
                                           : tfl::ActivationFunctionType_NONE;
      g.Output(g.Op(tfl::BuiltinOperator_SVDF)
                   .In(x, wf, wt, b, state)
                   .Options(o)
                   .Out("y", F32, {batch, units}));
    });
  }
  // Integer SVDF (INT8 input/feature weights, INT16 time weights and state,
  // INT32 bias) as the converter emits it, and SOFTMAX INT8 -> INT16 behind
  // it.
  {
    const int batch = z.Rand(1, 2), input_size = z.Rand(2, 8);
    const int rank = z.Rand(1, 2), units = z.Rand(1, 4);
    const int filters = units * rank, memory = z.Rand(2, 5);
    std::vector<int8_t> wf(filters * input_size);
    for (int8_t& v : wf) v = static_cast<int8_t>(z.Rand(-127, 127));
    std::vector<int16_t> wt(filters * memory);
    for (int16_t& v : wt) v = static_cast<int16_t>(z.Rand(-32767, 32767));
    std::vector<int32_t> bias(units);
    for (int32_t& v : bias) v = z.Rand(-20000, 20000);
    z.Add("svdf_i8", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", I8, {batch, input_size});
      TensorId twf = g.Constant<int8_t>("wf", {filters, input_size}, wf);
      TensorId twt = g.Constant<int16_t>("wt", {filters, memory}, wt);
      TensorId tb = g.Constant<int32_t>("b", {units}, bias);
      TensorId state = g.Variable("state", I16, {batch, memory * filters});
      tfl::SVDFOptionsT o;
      o.rank = rank;
      o.fused_activation_function = tfl::ActivationFunctionType_RELU;
      TensorId y = g.Op(tfl::BuiltinOperator_SVDF, 3)
                       .In(x, twf, twt, tb, state)
                       .Options(o)
                       .Out("y", I8, {batch, units});
      tfl::SoftmaxOptionsT so;
      so.beta = 1.0f;
      TensorId p = g.Op(tfl::BuiltinOperator_SOFTMAX, 3).In(y).Options(so).Out(
          "p", I16, {batch, units});
      const float sx = 0.05f, swf = 0.01f, sstate = 0.004f, swt = 0.002f;
      g.Quantize(x, sx, z.Rand(-10, 10)).Quantize(twf, swf, 0);
      g.Quantize(twt, swt, 0).Quantize(state, sstate, 0);
      g.Quantize(tb, sstate * swt, 0);
      g.Quantize(y, 0.1f, -128).Quantize(p, 1.0f / 65536, -32768);
      g.Output(y).Output(p);
    });
  }
  // SCATTER_ND (duplicate indices add up), TOPK_V2 (ties keep input
  // order), ATAN2.
  z.Add("scatter_nd", [&](SubgraphBuilder& g) {
    TensorId idx = g.Constant<int32_t>("idx", {3, 1}, {2, 0, 2});
    TensorId upd = g.Input("upd", F32, {3, 4});
    TensorId shape = g.Constant<int32_t>("shape", {2}, {5, 4});
    g.Output(g.Op(tfl::BuiltinOperator_SCATTER_ND).In(idx, upd, shape).Out(
        "y", F32, {5, 4}));
  });
  z.Add("scatter_nd_i32_depth2", [&](SubgraphBuilder& g) {
    TensorId idx = g.Constant<int32_t>("idx", {2, 2}, {1, 2, 0, 1});
    TensorId upd = g.Input("upd", I32, {2, 3});
    TensorId shape = g.Constant<int32_t>("shape", {3}, {2, 3, 3});
    g.Output(g.Op(tfl::BuiltinOperator_SCATTER_ND).In(idx, upd, shape).Out(
        "y", I32, {2, 3, 3}));
  });
  for (const tfl::TensorType type : {F32, I8}) {
    const std::vector<int32_t> shape = {z.Rand(1, 3), z.Rand(4, 40)};
    const int k = z.Rand(1, shape[1]);
    z.Add(absl::StrCat("topk_v2_", TypeTag(type)), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", type, shape);
      TensorId kt = g.Constant<int32_t>("k", {}, {k});
      auto outs = g.Op(tfl::BuiltinOperator_TOPK_V2).In(x, kt).Outs(
          {{"values", type, {shape[0], k}}, {"indices", I32, {shape[0], k}}});
      if (type == I8) {
        g.Quantize(x, 0.1f, 2).Quantize(outs[0], 0.1f, 2);
      }
      for (TensorId t : outs) g.Output(t);
    });
  }
  {
    const std::vector<int32_t> a = z.RandShape(2), b = a;  // no broadcast
    z.Add("atan2", [&](SubgraphBuilder& g) {
      TensorId y = g.Input("y", F32, a);
      TensorId x = g.Input("x", F32, b);
      g.Output(g.Op(tfl::BuiltinOperator_ATAN2).In(y, x).Out("z", F32, {}));
    });
  }

  // Shape and data movement.
  {
    std::vector<int32_t> s = {2, 3, 4};
    z.Add("reshape", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, s);
      TensorId shape = g.Constant<int32_t>("shape", {3}, {4, -1, 2});
      g.Output(g.Op(tfl::BuiltinOperator_RESHAPE).In(x, shape).Out(
          "y", F32, {4, 3, 2}));
    });
    z.Add("squeeze_expand_dims", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {1, 3, 1, 4});
      tfl::SqueezeOptionsT o;
      o.squeeze_dims = {-2};
      TensorId y = g.Op(tfl::BuiltinOperator_SQUEEZE).In(x).Options(o).Out(
          "sq", F32, {1, 3, 4});
      TensorId axis = g.Constant<int32_t>("axis", {1}, {-1});
      g.Output(g.Op(tfl::BuiltinOperator_EXPAND_DIMS).In(y, axis).Out(
          "y", F32, {1, 3, 4, 1}));
    });
  }
  for (int v = 0; v < 4; ++v) {
    const int rank = v + 2;
    std::vector<int32_t> s = z.RandShape(rank, 1, 4), perm(rank);
    for (int i = 0; i < rank; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), std::mt19937(v + 7));
    z.Add(absl::StrCat("transpose", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, s);
      TensorId p = g.Constant<int32_t>("perm", {rank}, perm);
      g.Output(g.Op(tfl::BuiltinOperator_TRANSPOSE).In(x, p).Out("y", F32, {}));
    });
  }
  for (int v = 0; v < 3; ++v) {
    std::vector<int32_t> a = z.RandShape(3), b = a;
    const int axis = z.Rand(-3, 2);
    b[(axis + 3) % 3] = z.Rand(1, 4);
    tfl::ConcatenationOptionsT o;
    o.axis = axis;
    z.Add(absl::StrCat("concatenation", v), [&](SubgraphBuilder& g) {
      TensorId ta = g.Input("a", F32, a);
      TensorId tb = g.Input("b", F32, b);
      g.Output(g.Op(tfl::BuiltinOperator_CONCATENATION)
                   .In(ta, tb, ta)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }
  z.Add("split", [&](SubgraphBuilder& g) {
    TensorId axis = g.Constant<int32_t>("axis", {}, {1});
    TensorId x = g.Input("x", F32, {2, 6, 3});
    tfl::SplitOptionsT o;
    o.num_splits = 3;
    auto outs = g.Op(tfl::BuiltinOperator_SPLIT).In(axis, x).Options(o).Outs(
        {{"a", F32, {2, 2, 3}}, {"b", F32, {2, 2, 3}}, {"c", F32, {2, 2, 3}}});
    for (TensorId t : outs) g.Output(t);
  });
  z.Add("split_v", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {2, 7, 3});
    TensorId sizes = g.Constant<int32_t>("sizes", {3}, {2, -1, 1});
    TensorId axis = g.Constant<int32_t>("axis", {}, {-2});
    tfl::SplitVOptionsT o;
    o.num_splits = 3;
    auto outs = g.Op(tfl::BuiltinOperator_SPLIT_V)
                    .In(x, sizes, axis)
                    .Options(o)
                    .Outs({{"a", F32, {2, 2, 3}},
                           {"b", F32, {2, 4, 3}},
                           {"c", F32, {2, 1, 3}}});
    for (TensorId t : outs) g.Output(t);
  });
  z.Add("pack_unpack", [&](SubgraphBuilder& g) {
    TensorId a = g.Input("a", F32, {3, 2});
    TensorId b = g.Input("b", F32, {3, 2});
    tfl::PackOptionsT po;
    po.values_count = 2;
    po.axis = 1;
    TensorId p = g.Op(tfl::BuiltinOperator_PACK).In(a, b).Options(po).Out(
        "p", F32, {3, 2, 2});
    tfl::UnpackOptionsT uo;
    uo.num = 2;
    uo.axis = -1;
    auto outs = g.Op(tfl::BuiltinOperator_UNPACK).In(p).Options(uo).Outs(
        {{"u0", F32, {3, 2}}, {"u1", F32, {3, 2}}});
    g.Output(p);
    for (TensorId t : outs) g.Output(t);
  });
  z.Add("slice", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {3, 5, 4});
    TensorId begin = g.Constant<int32_t>("begin", {3}, {1, 0, 2});
    TensorId size = g.Constant<int32_t>("size", {3}, {2, -1, 2});
    g.Output(g.Op(tfl::BuiltinOperator_SLICE).In(x, begin, size).Out(
        "y", F32, {}));
  });
  // Strided slices: random begin/end/strides and masks over a rank-3 input,
  // plus hand-made ellipsis / new-axis / shrink cases.
  struct SS {
    std::vector<int32_t> begin, end, strides;
    int begin_mask, end_mask, ellipsis, new_axis, shrink;
  };
  std::vector<SS> specs = {
      {{0, 1}, {0, 3}, {1, 1}, 0, 0, 1, 0, 0},        // [..., 1:3]
      {{1, 0, 0}, {2, 0, 0}, {1, 1, 1}, 0, 6, 0, 2, 1},  // [1, newaxis, :]
      {{-1, 0, 0}, {0, 0, 0}, {-1, 1, 2}, 1, 6, 0, 0, 0},
      {{0, -2, 1}, {0, -1, 3}, {1, 1, 1}, 1, 1, 0, 0, 2},  // shrink dim 1
  };
  for (int v = 0; v < 8; ++v) {
    SS s;
    for (int d = 0; d < 3; ++d) {
      s.begin.push_back(z.Rand(-5, 5));
      s.end.push_back(z.Rand(-5, 5));
      int st = z.Rand(1, 2) * (z.Rand(0, 1) ? 1 : -1);
      s.strides.push_back(st);
    }
    s.begin_mask = z.Rand(0, 7), s.end_mask = z.Rand(0, 7);
    s.ellipsis = s.new_axis = s.shrink = 0;
    specs.push_back(s);
  }
  for (size_t v = 0; v < specs.size(); ++v) {
    const SS& s = specs[v];
    const int n = static_cast<int>(s.begin.size());
    z.Add(absl::StrCat("strided_slice", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {4, 5, 3});
      TensorId b = g.Constant<int32_t>("begin", {n}, s.begin);
      TensorId e = g.Constant<int32_t>("end", {n}, s.end);
      TensorId st = g.Constant<int32_t>("strides", {n}, s.strides);
      tfl::StridedSliceOptionsT o;
      o.begin_mask = s.begin_mask, o.end_mask = s.end_mask;
      o.ellipsis_mask = s.ellipsis, o.new_axis_mask = s.new_axis;
      o.shrink_axis_mask = s.shrink;
      g.Output(g.Op(tfl::BuiltinOperator_STRIDED_SLICE)
                   .In(x, b, e, st)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }
  for (int v = 0; v < 4; ++v) {
    std::vector<int32_t> s = z.RandShape(3, 2, 4), pads;
    for (int d = 0; d < 3; ++d) {
      pads.push_back(z.Rand(0, v >= 2 ? 1 : 2));
      pads.push_back(z.Rand(0, v >= 2 ? 1 : 2));
    }
    z.Add(absl::StrCat(v < 2 ? "pad" : "mirror_pad", v),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, s);
            TensorId p = g.Constant<int32_t>("pads", {3, 2}, pads);
            if (v == 0) {
              g.Output(g.Op(tfl::BuiltinOperator_PAD).In(x, p).Out("y", F32,
                                                                   {}));
            } else if (v == 1) {
              TensorId c = g.Constant<float>("c", {}, {0.5f});
              g.Output(g.Op(tfl::BuiltinOperator_PADV2).In(x, p, c).Out(
                  "y", F32, {}));
            } else {
              tfl::MirrorPadOptionsT o;
              o.mode = v == 2 ? tfl::MirrorPadMode_REFLECT
                              : tfl::MirrorPadMode_SYMMETRIC;
              g.Output(g.Op(tfl::BuiltinOperator_MIRROR_PAD)
                           .In(x, p)
                           .Options(o)
                           .Out("y", F32, {}));
            }
          });
  }
  for (int v = 0; v < 3; ++v) {
    z.Add(absl::StrCat("gather", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {2, 5, 3});
      tfl::GatherOptionsT o;
      TensorId idx;
      if (v == 0) {
        o.axis = 1;
        idx = g.Constant<int32_t>("idx", {2, 2}, {4, 0, 2, 2});
      } else if (v == 1) {
        o.axis = -1;
        idx = g.Constant<int64_t>("idx", {3}, {2, 1, 2});
      } else {
        o.axis = 1, o.batch_dims = 1;
        idx = g.Constant<int32_t>("idx", {2, 2}, {1, 3, 4, 0});
      }
      g.Output(g.Op(tfl::BuiltinOperator_GATHER).In(x, idx).Options(o).Out(
          "y", F32, {}));
    });
  }
  z.Add("gather_nd", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {3, 4, 2});
    TensorId idx = g.Constant<int32_t>("idx", {2, 2}, {2, 3, 0, 1});
    g.Output(g.Op(tfl::BuiltinOperator_GATHER_ND).In(x, idx).Out("y", F32,
                                                                 {}));
  });
  for (int v = 0; v < 6; ++v) {
    const bool bilinear = v < 3;
    const bool align = v % 3 == 1, half = v % 3 == 2;
    const int h = z.Rand(2, 5), w = z.Rand(2, 5);
    const int nh = z.Rand(1, 9), nw = z.Rand(1, 9);
    z.Add(absl::StrCat(bilinear ? "resize_bilinear" : "resize_nearest", v),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, {1, h, w, 2});
            TensorId size = g.Constant<int32_t>("size", {2}, {nh, nw});
            OpBuilder op = g.Op(bilinear
                                    ? tfl::BuiltinOperator_RESIZE_BILINEAR
                                    : tfl::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR,
                                3)
                               .In(x, size);
            if (bilinear) {
              tfl::ResizeBilinearOptionsT o;
              o.align_corners = align, o.half_pixel_centers = half;
              op.Options(o);
            } else {
              tfl::ResizeNearestNeighborOptionsT o;
              o.align_corners = align, o.half_pixel_centers = half;
              op.Options(o);
            }
            g.Output(op.Out("y", F32, {1, nh, nw, 2}));
          });
  }
  // Quantized RESIZE_BILINEAR: INT8 and INT16 (integer interpolation) and
  // UINT8 (float, rounded), each with plain, align_corners and
  // half_pixel_centers coordinates; up- and downscaling.
  for (int v = 0; v < 9; ++v) {
    const tfl::TensorType t = v < 3 ? I8 : v < 6 ? I16 : U8;
    const bool align = v % 3 == 1, half = v % 3 == 2;
    const int h = z.Rand(2, 6), w = z.Rand(2, 6);
    const int nh = z.Rand(1, 11), nw = z.Rand(1, 11);
    const QParams q = RandQParams(z, t);
    z.Add(absl::StrCat("resize_bilinear_", TypeTag(t), v),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", t, {1, h, w, 3});
            TensorId size = g.Constant<int32_t>("size", {2}, {nh, nw});
            tfl::ResizeBilinearOptionsT o;
            o.align_corners = align, o.half_pixel_centers = half;
            TensorId y = g.Op(tfl::BuiltinOperator_RESIZE_BILINEAR, 3)
                             .In(x, size)
                             .Options(o)
                             .Out("y", t, {1, nh, nw, 3});
            g.Quantize(x, q.scale, q.zero_point).Quantize(y, q.scale, q.zero_point);
            g.Output(y);
          });
  }
  z.Add("tile", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {2, 1, 3});
    TensorId m = g.Constant<int32_t>("m", {3}, {2, 3, 1});
    g.Output(g.Op(tfl::BuiltinOperator_TILE).In(x, m).Out("y", F32, {}));
  });
  z.Add("broadcast_to", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {3, 1});
    TensorId s = g.Constant<int32_t>("s", {3}, {2, 3, 4});
    g.Output(g.Op(tfl::BuiltinOperator_BROADCAST_TO, 2).In(x, s).Out(
        "y", F32, {2, 3, 4}));
  });
  z.Add("space_to_depth_depth_to_space", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {1, 4, 6, 3});
    tfl::SpaceToDepthOptionsT o;
    o.block_size = 2;
    TensorId y = g.Op(tfl::BuiltinOperator_SPACE_TO_DEPTH).In(x).Options(o).Out(
        "s2d", F32, {1, 2, 3, 12});
    tfl::DepthToSpaceOptionsT d;
    d.block_size = 2;
    TensorId back = g.Op(tfl::BuiltinOperator_DEPTH_TO_SPACE)
                        .In(y)
                        .Options(d)
                        .Out("d2s", F32, {1, 4, 6, 3});
    g.Output(y).Output(back);
  });
  z.Add("shape_folded", [&](SubgraphBuilder& g) {
    TensorId x = g.Input("x", F32, {2, 3});
    tfl::ShapeOptionsT o;
    o.out_type = I32;
    TensorId s = g.Op(tfl::BuiltinOperator_SHAPE).In(x).Options(o).Out(
        "s", I32, {2});
    TensorId y = g.Op(tfl::BuiltinOperator_RESHAPE).In(x, s).Out("y", F32,
                                                                   {2, 3});
    g.Output(y).Output(s);
  });

  // Quantized FULLY_CONNECTED: INT8 with per-tensor and per-channel weights
  // (with and without bias, keep_num_dims on a 3-D input, RELU), UINT8, and
  // 16x8 (per-channel and per-tensor). Small weights and multipliers just
  // under 1/2 make many products
  // land near a rounding tie, where TFLite's integer FULLY_CONNECTED (which
  // rounds the rescale once) and the double-rounding MultiplyByQuantized-
  // Multiplier of the other kernels disagree.
  for (int v = 0; v < 7; ++v) {
    const tfl::TensorType t = v < 4 ? I8 : v == 4 ? U8 : I16;
    const tfl::TensorType wt = t == U8 ? U8 : I8;
    const bool per_channel = v == 1 || v == 3 || v == 5;
    const bool with_bias = v >= 2;
    const int rows = 48, k = z.Rand(4, 12), n = z.Rand(12, 24);
    tfl::FullyConnectedOptionsT o;
    o.keep_num_dims = v == 1 || v == 3;
    if (v == 3) o.fused_activation_function = tfl::ActivationFunctionType_RELU;
    const std::vector<int32_t> in_shape =
        o.keep_num_dims ? std::vector<int32_t>{2, rows / 2, k}
                        : std::vector<int32_t>{rows, k};
    const float sx = t == I16 ? 1.0f / 1024 : 0.05f;
    const int64_t zx = t == I8 ? z.Rand(-20, 20) : t == U8 ? z.Rand(108, 148)
                                                           : 0;
    const int64_t zw = t == U8 ? z.Rand(120, 136) : 0;
    std::vector<float> sw(per_channel ? n : 1);
    for (float& s : sw) s = 0.01f * z.Rand(24, 40) / 32;
    // Effective multipliers sx * sw / sy of about 0.3 to 0.5.
    const float sy = sx * 0.01f / (t == I16 ? 0.4f / 64 : 0.4f);
    std::vector<int8_t> w8(int64_t{n} * k);
    std::vector<uint8_t> wu8(int64_t{n} * k);
    for (int64_t i = 0; i < int64_t{n} * k; ++i) {
      const int d = z.Rand(-3, 3);
      w8[i] = static_cast<int8_t>(d);
      wu8[i] = static_cast<uint8_t>(zw + d);
    }
    std::vector<int32_t> b32(n);
    std::vector<int64_t> b64(n);
    for (int j = 0; j < n; ++j) b32[j] = z.Rand(-300, 300), b64[j] = b32[j];
    z.Add(absl::StrCat("fully_connected_", TypeTag(t), per_channel ? "_pc" : "",
                       v),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", t, in_shape);
            TensorId w = wt == U8 ? g.Constant<uint8_t>("w", {n, k}, wu8)
                                  : g.Constant<int8_t>("w", {n, k}, w8);
            TensorId b = kNoTensor;
            if (with_bias) {
              b = t == I16 ? g.Constant<int64_t>("b", {n}, b64)
                           : g.Constant<int32_t>("b", {n}, b32);
            }
            TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED,
                              t == I16 ? 7 : 4)
                             .In(x, w, b)
                             .Options(o)
                             .Out("y", t, {});
            g.Quantize(x, sx, zx);
            if (per_channel) {
              g.QuantizePerChannel(w, sw, std::vector<int64_t>(n, 0), 0);
            } else {
              g.Quantize(w, sw[0], zw);
            }
            if (b != kNoTensor) {
              std::vector<float> sb(sw.size());
              for (size_t c = 0; c < sw.size(); ++c) sb[c] = sx * sw[c];
              if (per_channel) {
                g.QuantizePerChannel(b, sb, std::vector<int64_t>(n, 0), 0);
              } else {
                g.Quantize(b, sb[0], 0);
              }
            }
            g.Quantize(y, sy, t == U8 ? 128 : t == I8 ? z.Rand(-5, 5) : 0)
                .Output(y);
          });
  }

  // Quantized CONV_2D and DEPTHWISE_CONV_2D, INT8 with per-channel weights:
  // channel counts around the optimized kernels' blocks of 16, strides,
  // dilations, both paddings, an input zero point, fused activations.
  for (int v = 0; v < 6; ++v) {
    const bool depthwise = v >= 3;
    const int h = z.Rand(4, 10), w = z.Rand(4, 10), kh = z.Rand(1, 3),
              kw = z.Rand(1, 3);
    const int cin = depthwise ? z.Rand(1, 40) : z.Rand(1, 20);
    const int mult = depthwise && v == 5 ? 2 : 1;
    const int cout = depthwise ? cin * mult : z.Rand(1, 40);
    const int stride = z.Rand(1, 2), dilation = v == 2 || v == 4 ? 2 : 1;
    const tfl::Padding padding =
        dilation > 1 || z.Rand(0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
    const tfl::ActivationFunctionType act = acts[z.Rand(0, 3)];
    const float sx = 0.05f;
    const int64_t zx = z.Rand(-20, 20);
    std::vector<float> sw(cout);
    for (float& sc : sw) sc = 0.01f * z.Rand(24, 40) / 32;
    const float sy = sx * 0.01f / 0.03f;
    const int64_t filter_size =
        int64_t{cout} * kh * kw * (depthwise ? 1 : cin);
    std::vector<int8_t> w8(filter_size);
    for (int8_t& x : w8) x = static_cast<int8_t>(z.Rand(-3, 3));
    std::vector<int32_t> b32(cout);
    for (int32_t& b : b32) b = z.Rand(-300, 300);
    z.Add(absl::StrCat(depthwise ? "depthwise_conv_2d_i8_" : "conv_2d_i8_", v),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", I8, {1, h, w, cin});
            TensorId f =
                g.Constant<int8_t>("w",
                                   depthwise ? std::vector<int32_t>{1, kh, kw, cout}
                                             : std::vector<int32_t>{cout, kh, kw, cin},
                                   w8);
            TensorId b = g.Constant<int32_t>("b", {cout}, b32);
            TensorId y;
            if (depthwise) {
              tfl::DepthwiseConv2DOptionsT o;
              o.padding = padding;
              o.stride_h = o.stride_w = stride;
              o.dilation_h_factor = o.dilation_w_factor = dilation;
              o.depth_multiplier = mult;
              o.fused_activation_function = act;
              y = g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D, 3)
                      .In(x, f, b)
                      .Options(o)
                      .Out("y", I8, {});
            } else {
              tfl::Conv2DOptionsT o;
              o.padding = padding;
              o.stride_h = o.stride_w = stride;
              o.dilation_h_factor = o.dilation_w_factor = dilation;
              o.fused_activation_function = act;
              y = g.Op(tfl::BuiltinOperator_CONV_2D, 3)
                      .In(x, f, b)
                      .Options(o)
                      .Out("y", I8, {});
            }
            g.Quantize(x, sx, zx);
            g.QuantizePerChannel(f, sw, std::vector<int64_t>(cout, 0),
                                 depthwise ? 3 : 0);
            std::vector<float> sb(cout);
            for (int c = 0; c < cout; ++c) sb[c] = sx * sw[c];
            g.QuantizePerChannel(b, sb, std::vector<int64_t>(cout, 0), 0);
            g.Quantize(y, sy, z.Rand(-5, 5)).Output(y);
          });
  }

  // Hybrid DEPTHWISE_CONV_2D (FLOAT32 input, INT8 weights with one scale
  // per output channel, as dynamic-range quantization makes): channel
  // counts around the 64-channel blocks, a depth multiplier, dilation, both
  // paddings, fused activations.
  for (int v = 0; v < 4; ++v) {
    const int h = z.Rand(3, 9), w = z.Rand(3, 9), k = z.Rand(1, 3);
    const int cin = z.Rand(1, 70), mult = v == 2 ? 2 : 1;
    const int cout = cin * mult;
    tfl::DepthwiseConv2DOptionsT o;
    o.padding = v % 2 ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_h = o.stride_w = z.Rand(1, 2);
    o.dilation_h_factor = o.dilation_w_factor = v == 3 ? 2 : 1;
    if (v == 3) o.padding = tfl::Padding_SAME;
    o.depth_multiplier = mult;
    o.fused_activation_function = acts[z.Rand(0, 3)];
    std::vector<int8_t> w8(int64_t{k} * k * cout);
    for (int8_t& x : w8) x = static_cast<int8_t>(z.Rand(-127, 127));
    std::vector<float> sw(cout);
    for (float& sc : sw) sc = 0.001f * z.Rand(1, 40);
    const auto b = z.RandFloats(cout);
    z.Add(absl::StrCat("depthwise_conv_2d_hybrid", v),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, {1, h, w, cin});
            TensorId f = g.Constant<int8_t>("w", {1, k, k, cout}, w8);
            g.QuantizePerChannel(f, sw, std::vector<int64_t>(cout, 0), 3);
            TensorId tb = g.Constant<float>("b", {cout}, b);
            g.Output(g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D, 6)
                         .In(x, f, tb)
                         .Options(o)
                         .Out("y", F32, {}));
          });
  }

  // CONV_3D: SAME and VALID, strides and dilations per axis, with and
  // without bias, fused activations.
  for (int v = 0; v < 6; ++v) {
    const int n = z.Rand(1, 2), d = z.Rand(2, 6), h = z.Rand(3, 7),
              w = z.Rand(3, 7), cin = z.Rand(1, 4), cout = z.Rand(1, 5);
    const int kd = z.Rand(1, 2), kh = z.Rand(1, 3), kw = z.Rand(1, 3);
    tfl::Conv3DOptionsT o;
    o.padding = v % 2 ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_d = z.Rand(1, 2), o.stride_h = z.Rand(1, 2);
    o.stride_w = z.Rand(1, 2);
    o.dilation_d_factor = 1;
    o.dilation_h_factor = o.dilation_w_factor = v == 3 ? 2 : 1;
    o.fused_activation_function = acts[z.Rand(0, 3)];
    const bool bias = v != 4;
    auto weights = z.RandFloats(int64_t{kd} * kh * kw * cin * cout);
    auto b = z.RandFloats(cout);
    z.Add(absl::StrCat("conv_3d", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {n, d, h, w, cin});
      TensorId f = g.Constant<float>("w", {kd, kh, kw, cin, cout}, weights);
      TensorId tb = bias ? g.Constant<float>("b", {cout}, b) : kNoTensor;
      g.Output(g.Op(tfl::BuiltinOperator_CONV_3D)
                   .In(x, f, tb)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }
}

// An op output whose shape TFLite computes at invoke, declared as its
// converter does: 1 in `shape` where `shape_signature` has -1.
TensorId DynamicOut(SubgraphBuilder& g, OpBuilder op, absl::string_view name,
                    tfl::TensorType type, std::vector<int32_t> signature) {
  std::vector<int32_t> shape = signature;
  for (int32_t& d : shape) d = d < 0 ? 1 : d;
  TensorId t = op.Out(name, type, shape);
  if (tfl::TensorT* tensor = g.MutableTensor(t)) {
    tensor->shape_signature = std::move(signature);
  }
  return t;
}
std::vector<int32_t> Unknown(int rank) {
  return std::vector<int32_t>(rank, -1);
}

// Shapes computed at invoke: ops whose output shape depends on the values of
// a model input (run_reference.py feeds integers in [1, 3], so shapes are
// chosen to keep those in range), and ops fed by such outputs, which both
// runtimes prepare again at invoke.
void BuildShapesAtInvokeZoo(Zoo& z) {
  constexpr auto BOOL = tfl::TensorType_BOOL;
  constexpr auto I64 = tfl::TensorType_INT64;
  // WHERE: the coordinates of the nonzero elements (a fair coin for BOOL;
  // run_reference's FLOAT32 and INT32 inputs are all nonzero). BOOL inputs
  // get at least 16 elements: ai_edge_litert's get_tensor refuses an empty
  // output ("Invalid tensor size"), so all-false inputs cannot be compared.
  auto where_shape = [&z](int rank) {
    std::vector<int32_t> s = z.RandShape(rank, 1, 4);
    while (Zoo::Count(s) < 16) ++s[z.Rand(0, rank - 1)];
    return s;
  };
  const tfl::TensorType where_types[] = {BOOL, BOOL, F32, I32};
  for (int v = 0; v < 4; ++v) {
    const tfl::TensorType type = where_types[v];
    const int rank = z.Rand(1, 4);
    const std::vector<int32_t> s =
        type == BOOL ? where_shape(rank) : z.RandShape(rank, 1, 4);
    const char* tag = type == BOOL ? "bool" : type == I32 ? "i32" : "f32";
    z.Add(absl::StrCat("where_", tag, v), [&](SubgraphBuilder& g) {
      TensorId c = g.Input("c", type, s);
      g.Output(DynamicOut(g, g.Op(tfl::BuiltinOperator_WHERE).In(c), "y", I64,
                          {-1, rank}));
    });
  }
  // tf.boolean_mask's form: GATHER_ND of the elements WHERE selects.
  {
    const int rank = z.Rand(1, 3);
    const std::vector<int32_t> s = where_shape(rank);
    z.Add("where_gather_nd", [&](SubgraphBuilder& g) {
      TensorId c = g.Input("c", BOOL, s);
      TensorId x = g.Input("x", F32, s);
      TensorId idx = DynamicOut(g, g.Op(tfl::BuiltinOperator_WHERE).In(c),
                                "idx", I64, {-1, rank});
      g.Output(DynamicOut(g, g.Op(tfl::BuiltinOperator_GATHER_ND).In(x, idx),
                          "y", F32, {-1}));
    });
  }
  // TOPK_V2 with k an input (1..3), alone and feeding ADD (broadcasting a
  // constant) and SOFTMAX.
  for (int v = 0; v < 2; ++v) {
    std::vector<int32_t> s = z.RandShape(z.Rand(1, 3), 1, 4);
    s.back() = z.Rand(3, 12);
    const int rank = static_cast<int>(s.size());
    const std::vector<float> bias = z.RandFloats(1);
    z.Add(v == 0 ? "topk_v2_k_input" : "topk_v2_k_input_add_softmax",
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, s);
            TensorId k = g.Input("k", I32, {});
            OpBuilder topk = g.Op(tfl::BuiltinOperator_TOPK_V2).In(x, k);
            TensorId values = DynamicOut(g, topk, "values", F32, Unknown(rank));
            TensorId indices =
                DynamicOut(g, topk, "indices", I32, Unknown(rank));
            if (v == 1) {
              TensorId b = g.Constant<float>("b", {1}, bias);
              TensorId sum =
                  DynamicOut(g, g.Op(tfl::BuiltinOperator_ADD).In(values, b),
                             "sum", F32, Unknown(rank));
              tfl::SoftmaxOptionsT o;
              o.beta = 1.0f;
              values = DynamicOut(
                  g, g.Op(tfl::BuiltinOperator_SOFTMAX).In(sum).Options(o), "p",
                  F32, Unknown(rank));
            }
            g.Output(values).Output(indices);
          });
  }
  // TILE with the multiples an input, alone and feeding a MEAN.
  for (int v = 0; v < 2; ++v) {
    const int rank = z.Rand(1, 4);
    const std::vector<int32_t> s = z.RandShape(rank, 1, 3);
    const int axis = z.Rand(0, rank - 1);
    z.Add(v == 0 ? "tile_multiples_input" : "tile_multiples_input_mean",
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, s);
            TensorId m = g.Input("m", I32, {rank});
            TensorId y = DynamicOut(g, g.Op(tfl::BuiltinOperator_TILE).In(x, m),
                                    "y", F32, Unknown(rank));
            if (v == 1) {
              tfl::ReducerOptionsT o;
              o.keep_dims = false;
              TensorId a = g.Constant<int32_t>("axis", {1}, {axis});
              y = DynamicOut(
                  g, g.Op(tfl::BuiltinOperator_MEAN).In(y, a).Options(o),
                  "mean", F32, Unknown(rank - 1));
            }
            g.Output(y);
          });
  }
  // SLICE with begin (1..3) an input and a constant size that fits, and
  // with the size an input after a constant begin.
  for (int v = 0; v < 2; ++v) {
    const int rank = z.Rand(1, 4);
    const std::vector<int32_t> s = z.RandShape(rank, 4, 6);
    std::vector<int32_t> fixed(rank);
    for (int d = 0; d < rank; ++d) {
      fixed[d] = v == 0 ? (z.Rand(0, 2) == 0 ? -1 : z.Rand(1, s[d] - 3))
                        : z.Rand(0, s[d] - 3);
    }
    z.Add(v == 0 ? "slice_begin_input" : "slice_size_input",
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, s);
            TensorId in = g.Input(v == 0 ? "begin" : "size", I32, {rank});
            TensorId c =
                g.Constant<int32_t>(v == 0 ? "size" : "begin", {rank}, fixed);
            OpBuilder op = g.Op(tfl::BuiltinOperator_SLICE);
            if (v == 0) {
              op.In(x, in, c);
            } else {
              op.In(x, c, in);
            }
            g.Output(DynamicOut(g, op, "y", F32, Unknown(rank)));
          });
  }
  // STRIDED_SLICE with begin (1..3) an input, random strides, end mask and
  // shrink; and with end an input, forward from 0 or backward from the end
  // (dims of 5 or more keep both nonempty: ai_edge_litert cannot return an
  // empty output).
  for (int v = 0; v < 2; ++v) {
    const int rank = z.Rand(1, 4);
    const std::vector<int32_t> s = z.RandShape(rank, v == 0 ? 4 : 5, 7);
    std::vector<int32_t> fixed(rank), strides(rank);
    tfl::StridedSliceOptionsT o;
    for (int d = 0; d < rank; ++d) {
      if (v == 0) {
        strides[d] = z.Rand(1, 2);
        fixed[d] = z.Rand(4, s[d]);  // end
      } else {
        strides[d] = z.Rand(0, 1) ? 1 : -1;
        fixed[d] = strides[d] > 0 ? 0 : s[d] - 1;  // begin
      }
    }
    if (v == 0) {
      o.end_mask = z.Rand(0, (1 << rank) - 1);
      if (rank > 1) o.shrink_axis_mask = 1 << z.Rand(0, rank - 1);
    } else {
      o.begin_mask = z.Rand(0, (1 << rank) - 1);
    }
    const int out_rank = rank - (o.shrink_axis_mask != 0 ? 1 : 0);
    z.Add(v == 0 ? "strided_slice_begin_input" : "strided_slice_end_input",
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, s);
            TensorId in = g.Input(v == 0 ? "begin" : "end", I32, {rank});
            TensorId c =
                g.Constant<int32_t>(v == 0 ? "end" : "begin", {rank}, fixed);
            TensorId st = g.Constant<int32_t>("strides", {rank}, strides);
            OpBuilder op = g.Op(tfl::BuiltinOperator_STRIDED_SLICE);
            if (v == 0) {
              op.In(x, in, c, st);
            } else {
              op.In(x, c, in, st);
            }
            g.Output(DynamicOut(g, op.Options(o), "y", F32, Unknown(out_rank)));
          });
  }
  // PAD, PADV2 and MIRROR_PAD with the paddings an input [rank, 2] (1..3;
  // REFLECT needs them below each dim, SYMMETRIC at most each dim).
  for (int v = 0; v < 4; ++v) {
    const int rank = z.Rand(1, 4);
    const int min_dim = v == 2 ? 4 : v == 3 ? 3 : 1;
    const std::vector<int32_t> s = z.RandShape(rank, min_dim, 5);
    const char* names[] = {"pad_paddings_input", "padv2_paddings_input",
                           "mirror_pad_reflect_paddings_input",
                           "mirror_pad_symmetric_paddings_input"};
    z.Add(names[v], [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, s);
      TensorId p = g.Input("paddings", I32, {rank, 2});
      OpBuilder op = g.Op(v == 0   ? tfl::BuiltinOperator_PAD
                          : v == 1 ? tfl::BuiltinOperator_PADV2
                                   : tfl::BuiltinOperator_MIRROR_PAD)
                         .In(x, p);
      if (v == 1) op.In(g.Constant<float>("c", {}, {-0.25f}));
      if (v >= 2) {
        tfl::MirrorPadOptionsT o;
        o.mode =
            v == 2 ? tfl::MirrorPadMode_REFLECT : tfl::MirrorPadMode_SYMMETRIC;
        op.Options(o);
      }
      g.Output(DynamicOut(g, op, "y", F32, Unknown(rank)));
    });
  }
  // Reductions with the axes an input (1..3 of a rank-4 input; repeated
  // axes count once, so the declared rank is only a guess), ARG_MAX with
  // the axis an input.
  for (const auto& [name, code] :
       std::vector<std::pair<const char*, tfl::BuiltinOperator>>{
           {"sum_axes_input", tfl::BuiltinOperator_SUM},
           {"reduce_max_axes_input", tfl::BuiltinOperator_REDUCE_MAX}}) {
    const std::vector<int32_t> s = z.RandShape(4, 1, 5);
    const int n = z.Rand(1, 2);
    tfl::ReducerOptionsT o;
    o.keep_dims = z.Rand(0, 1) == 1;
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, s);
      TensorId a = g.Input("axes", I32, {n});
      g.Output(DynamicOut(g, g.Op(code).In(x, a).Options(o), "y", F32,
                          Unknown(o.keep_dims ? 4 : 4 - n)));
    });
  }
  {
    const std::vector<int32_t> s = z.RandShape(4, 2, 5);
    z.Add("arg_max_axis_input", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, s);
      TensorId a = g.Input("axis", I32, {1});
      tfl::ArgMaxOptionsT o;
      o.output_type = I32;
      g.Output(
          DynamicOut(g, g.Op(tfl::BuiltinOperator_ARG_MAX).In(x, a).Options(o),
                     "y", I32, Unknown(3)));
    });
  }
  // RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR with the size an input.
  for (int v = 0; v < 2; ++v) {
    const int h = z.Rand(1, 5), w = z.Rand(1, 5), c = z.Rand(1, 3);
    const bool half = z.Rand(0, 1) == 1;
    z.Add(v == 0 ? "resize_bilinear_size_input" : "resize_nearest_size_input",
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", F32, {1, h, w, c});
            TensorId size = g.Input("size", I32, {2});
            OpBuilder op =
                g.Op(v == 0 ? tfl::BuiltinOperator_RESIZE_BILINEAR
                            : tfl::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR,
                     3)
                    .In(x, size);
            if (v == 0) {
              tfl::ResizeBilinearOptionsT o;
              o.half_pixel_centers = half;
              op.Options(o);
            } else {
              tfl::ResizeNearestNeighborOptionsT o;
              o.half_pixel_centers = half;
              op.Options(o);
            }
            g.Output(DynamicOut(g, op, "y", F32, {1, -1, -1, c}));
          });
  }
  // BROADCAST_TO a shape input (an all-ones input broadcasts to any), and
  // SCATTER_ND into a shape input.
  {
    const int rank = z.Rand(1, 4);
    const std::vector<int32_t> s(z.Rand(1, rank), 1);
    z.Add("broadcast_to_shape_input", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, s);
      TensorId shape = g.Input("shape", I32, {rank});
      g.Output(
          DynamicOut(g, g.Op(tfl::BuiltinOperator_BROADCAST_TO, 2).In(x, shape),
                     "y", F32, Unknown(rank)));
    });
  }
  {
    const int n = z.Rand(1, 4), inner = z.Rand(1, 3);
    z.Add("scatter_nd_shape_input", [&](SubgraphBuilder& g) {
      TensorId idx =
          g.Constant<int32_t>("idx", {n, 1}, std::vector<int32_t>(n, 0));
      TensorId upd = g.Input("upd", F32, {n, inner});
      TensorId shape = g.Constant<int32_t>("inner", {1}, {inner});
      TensorId outer = g.Input("outer", I32, {1});
      tfl::ConcatenationOptionsT co;
      TensorId full = g.Op(tfl::BuiltinOperator_CONCATENATION)
                          .In(outer, shape)
                          .Options(co)
                          .Out("shape", I32, {2});
      g.Output(DynamicOut(
          g, g.Op(tfl::BuiltinOperator_SCATTER_ND).In(idx, upd, full), "y", F32,
          {-1, -1}));
    });
  }
  // SPLIT and SPLIT_V with the axis an input (1..3): every candidate dim
  // fits the split.
  {
    const int d0 = z.Rand(1, 3), each = z.Rand(1, 2);
    const std::vector<int32_t> s = {d0, 3 * each, 3 * each, 3 * each};
    z.Add("split_axis_input", [&](SubgraphBuilder& g) {
      TensorId axis = g.Input("axis", I32, {});
      TensorId x = g.Input("x", F32, s);
      tfl::SplitOptionsT o;
      o.num_splits = 3;
      OpBuilder op = g.Op(tfl::BuiltinOperator_SPLIT).In(axis, x).Options(o);
      for (const char* name : {"a", "b", "c"}) {
        g.Output(DynamicOut(g, op, name, F32, Unknown(4)));
      }
    });
    const int d = z.Rand(4, 6);
    z.Add("split_v_axis_input", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {d0, d, d, d});
      TensorId sizes = g.Constant<int32_t>("sizes", {3}, {1, -1, 2});
      TensorId axis = g.Input("axis", I32, {});
      tfl::SplitVOptionsT o;
      o.num_splits = 3;
      OpBuilder op =
          g.Op(tfl::BuiltinOperator_SPLIT_V).In(x, sizes, axis).Options(o);
      for (const char* name : {"a", "b", "c"}) {
        g.Output(DynamicOut(g, op, name, F32, Unknown(4)));
      }
    });
  }
}

// 8-bit ADD, SUB, MUL and SQUARED_DIFFERENCE on same-shape operands of
// 17 to 300 elements: the vector loop of the AVX2 build (16 at a time) and
// its scalar tail, against TFLite bit for bit.
void BuildQuantizedBinaryRunsZoo(Zoo& z) {
  for (const auto& [name, code, type] : std::vector<
           std::tuple<const char*, tfl::BuiltinOperator, tfl::TensorType>>{
           {"add_i8_run", tfl::BuiltinOperator_ADD, I8},
           {"sub_i8_run", tfl::BuiltinOperator_SUB, I8},
           {"mul_i8_run", tfl::BuiltinOperator_MUL, I8},
           {"squared_difference_i8_run",
            tfl::BuiltinOperator_SQUARED_DIFFERENCE, I8},
           {"add_u8_run", tfl::BuiltinOperator_ADD, U8},
           {"sub_u8_run", tfl::BuiltinOperator_SUB, U8},
           {"mul_u8_run", tfl::BuiltinOperator_MUL, U8}}) {
    const std::vector<int32_t> shape = {z.Rand(1, 3), z.Rand(17, 100)};
    const QParams qa = RandQParams(z, type), qb = RandQParams(z, type);
    QParams qo = RandQParams(z, type);
    if (code == tfl::BuiltinOperator_SQUARED_DIFFERENCE) qo.scale *= 8;
    if (code == tfl::BuiltinOperator_MUL) qo.scale /= 4;
    z.Add(name, [&](SubgraphBuilder& g) {
      TensorId ta = g.Input("a", type, shape);
      TensorId tb = g.Input("b", type, shape);
      TensorId y = g.Op(code).In(ta, tb).Out("y", type, {});
      g.Quantize(ta, qa.scale, qa.zero_point)
          .Quantize(tb, qb.scale, qb.zero_point);
      g.Quantize(y, qo.scale, qo.zero_point).Output(y);
    });
  }
}

// int8 1x1 CONV_2D, stride 1: the GEMM's rows widened straight from the
// input, in one piece (even input channels) or row by row with the pad
// column (odd).
void BuildPointwiseConvZoo(Zoo& z) {
  for (int v = 0; v < 2; ++v) {
    const int h = z.Rand(2, 9), w = z.Rand(2, 9);
    const int cin = 2 * z.Rand(1, 12) + (v == 0 ? 0 : 1), cout = z.Rand(1, 40);
    std::vector<int8_t> w8(int64_t{cout} * cin);
    for (int8_t& x : w8) x = static_cast<int8_t>(z.Rand(-127, 127));
    std::vector<int32_t> b32(cout);
    for (int32_t& b : b32) b = z.Rand(-300, 300);
    std::vector<float> sw(cout), sb(cout);
    const float sx = 0.05f;
    for (int c = 0; c < cout; ++c) {
      sw[c] = 0.001f * z.Rand(8, 40);
      sb[c] = sx * sw[c];
    }
    const int64_t zx = z.Rand(-20, 20), zy = z.Rand(-5, 5);
    tfl::Conv2DOptionsT o;
    o.padding = v == 0 ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_h = o.stride_w = 1;
    o.fused_activation_function = v == 0 ? tfl::ActivationFunctionType_RELU6
                                         : tfl::ActivationFunctionType_NONE;
    z.Add(absl::StrCat("conv_2d_1x1_i8_", v == 0 ? "even" : "odd"),
          [&](SubgraphBuilder& g) {
            TensorId x = g.Input("x", I8, {1, h, w, cin});
            TensorId f = g.Constant<int8_t>("w", {cout, 1, 1, cin}, w8);
            TensorId b = g.Constant<int32_t>("b", {cout}, b32);
            TensorId y = g.Op(tfl::BuiltinOperator_CONV_2D, 3)
                             .In(x, f, b)
                             .Options(o)
                             .Out("y", I8, {});
            g.Quantize(x, sx, zx);
            g.QuantizePerChannel(f, sw, std::vector<int64_t>(cout, 0), 0);
            g.QuantizePerChannel(b, sb, std::vector<int64_t>(cout, 0), 0);
            g.Quantize(y, 0.05f, zy).Output(y);
          });
  }
}

// Float DEPTHWISE_CONV_2D with enough channels for every register block
// of the kernel (32, 16 and 8 channels, and the rest one at a time).
void BuildDepthwiseBlocksZoo(Zoo& z) {
  for (int v = 0; v < 2; ++v) {
    const int h = z.Rand(3, 8), w = z.Rand(3, 8);
    const int c = v == 0 ? 61 : 56;  // 32 + 16 + 8 + 5; 32 + 16 + 8
    tfl::DepthwiseConv2DOptionsT o;
    o.padding = v == 0 ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_h = o.stride_w = v + 1;
    o.depth_multiplier = 1;
    o.fused_activation_function = tfl::ActivationFunctionType_RELU6;
    const auto weights = z.RandFloats(9 * c);
    const auto b = z.RandFloats(c);
    z.Add(absl::StrCat("depthwise_conv_2d_blocks", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", F32, {1, h, w, c});
      TensorId f = g.Constant<float>("w", {1, 3, 3, c}, weights);
      TensorId tb = g.Constant<float>("b", {c}, b);
      g.Output(g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D, 2)
                   .In(x, f, tb)
                   .Options(o)
                   .Out("y", F32, {}));
    });
  }
}

// STRING tensors (run_reference.py feeds random lowercase words): the
// RESHAPE family and GATHER with indices an input (1..3). TFLite's GATHER
// takes only rank-1 STRING params (so no axis or batch_dims to compare).
void BuildStringZoo(Zoo& z) {
  constexpr auto STR = tfl::TensorType_STRING;
  for (int v = 0; v < 2; ++v) {
    const int rank = z.Rand(1, 4);
    const std::vector<int32_t> s = z.RandShape(rank, 1, 4);
    // A compatible target: the dims shuffled, neighbours merged at random,
    // and one of them (sometimes) left for RESHAPE to infer.
    std::vector<int32_t> dims = s, target;
    std::shuffle(dims.begin(), dims.end(), std::mt19937(z.Rand(0, 1000)));
    for (int32_t d : dims) {
      if (!target.empty() && z.Rand(0, 1) == 1) {
        target.back() *= d;
      } else {
        target.push_back(d);
      }
    }
    std::vector<int32_t> spec = target;
    if (z.Rand(0, 1) == 1) spec[z.Rand(0, spec.size() - 1)] = -1;
    const int n = static_cast<int>(spec.size());
    z.Add(absl::StrCat("reshape_string", v), [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", STR, s);
      TensorId shape = g.Constant<int32_t>("shape", {n}, spec);
      g.Output(g.Op(tfl::BuiltinOperator_RESHAPE)
                   .In(x, shape)
                   .Out("y", STR, target));
    });
  }
  {
    const int a = z.Rand(1, 4), b = z.Rand(1, 4);
    z.Add("squeeze_expand_dims_string", [&](SubgraphBuilder& g) {
      TensorId x = g.Input("x", STR, {1, a, 1, b});
      tfl::SqueezeOptionsT o;
      o.squeeze_dims = {0, 2};
      TensorId y = g.Op(tfl::BuiltinOperator_SQUEEZE)
                       .In(x)
                       .Options(o)
                       .Out("sq", STR, {a, b});
      TensorId axis = g.Constant<int32_t>("axis", {1}, {1});
      g.Output(g.Op(tfl::BuiltinOperator_EXPAND_DIMS)
                   .In(y, axis)
                   .Out("y", STR, {a, 1, b}));
    });
  }
  // GATHER of a word list with an indices input of random rank; and after a
  // RESHAPE that flattens a word matrix.
  for (int v = 0; v < 2; ++v) {
    const int n = z.Rand(4, 9), rows = z.Rand(1, 3);
    const std::vector<int32_t> idx = z.RandShape(z.Rand(1, 3), 1, 4);
    z.Add(v == 0 ? "gather_string" : "reshape_gather_string",
          [&](SubgraphBuilder& g) {
            TensorId params = g.Input("words", STR,
                                      v == 0 ? std::vector<int32_t>{n}
                                             : std::vector<int32_t>{rows, n});
            TensorId i = g.Input("idx", I32, idx);
            if (v == 1) {
              TensorId flat = g.Constant<int32_t>("flat", {1}, {-1});
              params = g.Op(tfl::BuiltinOperator_RESHAPE)
                           .In(params, flat)
                           .Out("flat", STR, {rows * n});
            }
            tfl::GatherOptionsT o;
            g.Output(g.Op(tfl::BuiltinOperator_GATHER)
                         .In(params, i)
                         .Options(o)
                         .Out("y", STR, idx));
          });
  }
}

TEST(ReferenceTest, OpZooMatchesReference) {
  GRAFT_SKIP_IF_NO_ORACLE();
  std::mt19937 rng(Seed());
  testing::TempDir tmp;
  fs::create_directories(tmp.Join("models"));
  fs::create_directories(tmp.Join("out"));
  Zoo zoo(tmp.Join("models"), &rng);
  BuildZoo(zoo);
  BuildShapesAtInvokeZoo(zoo);
  BuildStringZoo(zoo);
  BuildQuantizedBinaryRunsZoo(zoo);
  BuildPointwiseConvZoo(zoo);
  BuildDepthwiseBlocksZoo(zoo);
  if (HasFatalFailure()) return;
  Summary s = RunDifferential(zoo.paths(), tmp.Join("out"), rng(), "zoo");
  PrintSummary("op zoo", s);
  KeepForInspection(tmp, "zoo");
  EXPECT_TRUE(s.mismatches.empty()) << absl::StrJoin(s.mismatches, "\n");
  EXPECT_TRUE(s.not_runnable.empty()) << absl::StrJoin(s.not_runnable, "\n");
  EXPECT_TRUE(s.reference_failed.empty())
      << absl::StrJoin(s.reference_failed, "\n");
}

}  // namespace
}  // namespace graft
