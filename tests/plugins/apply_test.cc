// The apply pipeline end to end with real plugin libraries: golden outlined
// models and bytecode from the example vendor, misbehaving plugins, the
// `graft apply` CLI (atomic output, determinism), and the corpus.
#include "plugins/apply.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/compiled_format.h"
#include "core/file_util.h"
#include "core/litert_format.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "dispatch/runtime.h"
#include "gtest/gtest.h"
#include "plugins/on_device.h"

namespace graft {
namespace {

using testing::BinaryDir;
using testing::SourceDir;

std::string ExamplePlugin() {
  return testing::ExampleVendorDir() + "/libgraft_compiler_plugin_example.so";
}
std::string Misbehaving(const std::string& variant) {
  return BinaryDir() + "/tests/plugins/misbehaving/" + variant +
         "/libgraft_compiler_plugin_misbehaving.so";
}

std::unique_ptr<CompilerPlugin> LoadOrDie(
    const std::string& path,
    std::vector<std::pair<std::string, std::string>> options = {}) {
  auto p = LoadCompilerPlugin(path, options);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? std::move(*p) : nullptr;
}

std::vector<float> Ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>(i) - 1.0f;
  return v;
}

// A readable dump of a model's graph structure for golden files.
std::string Dump(const Model& m) {
  std::string out;
  for (size_t s = 0; s < m.subgraphs.size(); ++s) {
    const Subgraph& sg = m.subgraphs[s];
    auto names = [&](const std::vector<int32_t>& ids) {
      std::vector<std::string> n;
      for (int32_t t : ids) {
        if (t < 0) {
          n.push_back("-");
          continue;
        }
        const tfl::TensorT& tensor = sg.tensors[t];
        n.push_back(IsConstantTensor(m, tensor)
                        ? absl::StrCat(tensor.name, "@b", tensor.buffer)
                        : tensor.name);
      }
      return absl::StrJoin(n, ", ");
    };
    absl::StrAppend(&out, "subgraph ", s, " '", sg.name, "' (",
                    names(sg.inputs), ") -> (", names(sg.outputs), ")\n");
    for (const tfl::OperatorT& op : sg.ops) {
      absl::StrAppend(&out, "  ", OpName(m, op), "(", names(op.inputs),
                      ") -> (", names(op.outputs), ")");
      if (IsDispatchOp(m, op) ||
          OpName(m, op) == std::string("CUSTOM:") + kPartitionCustomCode) {
        auto o = DecodeDispatchOpOptions(op.custom_options);
        if (o.ok()) {
          absl::StrAppend(&out, " vendor=", o->vendor,
                          " entry=", o->entry_point, " module=b",
                          o->module_buffer, " fallback=", o->fallback_subgraph);
        }
      }
      absl::StrAppend(&out, "\n");
    }
  }
  auto manifest = ReadManifest(m);
  if (manifest.ok()) {
    for (const ManifestVendor& v : manifest->vendors) {
      absl::StrAppend(&out, "manifest ", v.vendor, " ", v.plugin_version, " ",
                      v.soc_model, " bytecode v", v.bytecode_format_version,
                      ", modules:");
      for (const ManifestModule& mod : v.modules) {
        absl::StrAppend(&out, " b", mod.buffer, " (", mod.size, " B)");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  return out;
}

// Compares `actual` with tests/plugins/golden/<name>; GRAFT_UPDATE_GOLDENS=1
// rewrites the file instead.
void ExpectGolden(const std::string& name, const std::string& actual) {
  std::string path = SourceDir() + "/tests/plugins/golden/" + name;
  if (const char* u = std::getenv("GRAFT_UPDATE_GOLDENS"); u && *u == '1') {
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    std::ofstream(path) << actual;
    return;
  }
  auto expected = ReadFile(path);
  ASSERT_TRUE(expected.ok())
      << expected.status() << " (GRAFT_UPDATE_GOLDENS=1 creates it)";
  EXPECT_EQ(actual, *expected)
      << "golden " << name << " differs; GRAFT_UPDATE_GOLDENS=1 refreshes";
}

// Applies the example plugin and checks the outlined model, the bytecode and
// that the result serializes, reloads and verifies.
void ApplyExampleAndCompareGolden(Model model, const std::string& name) {
  auto plugin = LoadOrDie(ExamplePlugin());
  ASSERT_NE(plugin, nullptr);
  CompilerPlugin* raw = plugin.get();
  auto report = ApplyPlugins(model, {&raw, 1}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  std::string dump = Dump(model);
  for (const CompiledModule& mod : report->modules) {
    absl::StrAppend(&dump, "--- module b", mod.buffer, "\n", mod.bytes.view());
  }
  absl::StrAppend(&dump, "--- report\n", report->ops_taken, "/",
                  report->ops_total, " ops taken\n");
  for (const OpApplyReport& op : report->ops) {
    if (!op.taken_by.empty()) continue;
    for (const auto& r : op.refusals) {
      absl::StrAppend(&dump, "op ", op.op, " ", op.name, ": ",
                      PartitionReasonName(r.reason_code), ": ", r.reason, "\n");
    }
  }
  ExpectGolden(name, dump);
  auto bytes = SerializeModel(model);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  Bytes image = Bytes::Own(std::move(*bytes));
  auto reloaded = LoadModelFromBytes(image, name);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE(CompareModels(model, *reloaded).ok());
  // Modules are external buffers, 64-byte aligned in the file.
  for (const CompiledModule& mod : report->modules) {
    const Bytes& stored = reloaded->buffers[mod.buffer].data;
    EXPECT_EQ(stored, mod.bytes);
    EXPECT_EQ((stored.data() - image.data()) % 64, 0);
  }
}

// x -> ADD(c) -> RELU -> CONV_2D (refused) -> MUL(c2) -> y
TEST(ApplyExampleTest, ChainSplitsAtUnsupportedOp) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4, 4, 2});
  TensorId c = g.Constant<float>("c", {2}, Ramp(2));
  TensorId a = g.Op(tfl::BuiltinOperator_ADD)
                   .In(x, c)
                   .Options(tfl::AddOptionsT{})
                   .Out("a", tfl::TensorType_FLOAT32, {1, 4, 4, 2});
  TensorId r = g.Op(tfl::BuiltinOperator_RELU)
                   .In(a)
                   .Out("r", tfl::TensorType_FLOAT32, {1, 4, 4, 2});
  TensorId w = g.Constant<float>("w", {2, 1, 1, 2}, Ramp(4));
  TensorId cb = g.Constant<float>("cb", {2}, Ramp(2));
  tfl::Conv2DOptionsT conv;
  conv.padding = tfl::Padding_VALID;
  conv.stride_w = conv.stride_h = 1;
  TensorId v = g.Op(tfl::BuiltinOperator_CONV_2D)
                   .In(r, w, cb)
                   .Options(conv)
                   .Out("v", tfl::TensorType_FLOAT32, {1, 4, 4, 2});
  TensorId c2 = g.Constant<float>("c2", {1}, {2.0f});
  TensorId y = g.Op(tfl::BuiltinOperator_MUL)
                   .In(v, c2)
                   .Options(tfl::MulOptionsT{})
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4, 4, 2});
  g.Output(y);
  b.Signature("serving_default", {{"x", x}}, {{"y", y}});
  auto m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  ApplyExampleAndCompareGolden(std::move(*m), "chain_split.txt");
}

// a -> SQUARED_DIFFERENCE (refused) -> d and a -> MUL -> d: {a, mul, d} would
// be a cycle once outlined, so d gets its own partition.
TEST(ApplyExampleTest, CycleCaseSplitsGroup) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 8});
  TensorId a = g.Op(tfl::BuiltinOperator_RELU)
                   .In(x)
                   .Out("a", tfl::TensorType_FLOAT32, {1, 8});
  TensorId u = g.Op(tfl::BuiltinOperator_SQUARED_DIFFERENCE)
                   .In(a, x)
                   .Out("u", tfl::TensorType_FLOAT32, {1, 8});
  TensorId c = g.Op(tfl::BuiltinOperator_MUL)
                   .In(a, x)
                   .Options(tfl::MulOptionsT{})
                   .Out("c", tfl::TensorType_FLOAT32, {1, 8});
  TensorId d = g.Op(tfl::BuiltinOperator_ADD)
                   .In(u, c)
                   .Options(tfl::AddOptionsT{})
                   .Out("d", tfl::TensorType_FLOAT32, {1, 8});
  g.Output(d);
  auto m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  ApplyExampleAndCompareGolden(std::move(*m), "cycle_split.txt");
}

// One weight tensor used by FCs in two partitions; an intermediate of the
// first partition is also a graph output.
TEST(ApplyExampleTest, SharedConstantAndGraphOutputInsidePartition) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  TensorId w = g.Constant<float>("w", {4, 4}, Ramp(16));
  TensorId h = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Options(tfl::FullyConnectedOptionsT{})
                   .Out("h", tfl::TensorType_FLOAT32, {1, 4});
  TensorId r = g.Op(tfl::BuiltinOperator_RELU)
                   .In(h)
                   .Out("r", tfl::TensorType_FLOAT32, {1, 4});
  TensorId e = g.Op(tfl::BuiltinOperator_EXP)
                   .In(r)
                   .Out("e", tfl::TensorType_FLOAT32, {1, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(e, w, kNoTensor)
                   .Options(tfl::FullyConnectedOptionsT{})
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4});
  g.Output(h).Output(y);
  auto m = std::move(b).Build();
  ASSERT_TRUE(m.ok()) << m.status();
  ApplyExampleAndCompareGolden(std::move(*m), "shared_constant.txt");
}

TEST(ApplyExampleTest, SingleModuleOptionSharesOneModule) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  TensorId a = g.Op(tfl::BuiltinOperator_RELU)
                   .In(x)
                   .Out("a", tfl::TensorType_FLOAT32, {1, 4});
  TensorId e = g.Op(tfl::BuiltinOperator_EXP)
                   .In(a)
                   .Out("e", tfl::TensorType_FLOAT32, {1, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_TANH)
                   .In(e)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4});
  g.Output(y);
  auto m = std::move(b).Build();
  ASSERT_TRUE(m.ok());
  auto plugin = LoadOrDie(ExamplePlugin(), {{"single_module", "1"}});
  CompilerPlugin* raw = plugin.get();
  auto report = ApplyPlugins(*m, {&raw, 1}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->partitions.size(), 2u);
  ASSERT_EQ(report->modules.size(), 1u);
  EXPECT_EQ(report->partitions[0].module, report->partitions[1].module);
  EXPECT_NE(report->partitions[0].entry_point,
            report->partitions[1].entry_point);
}

TEST(ApplyExampleTest, RefusesAlreadyCompiledModel) {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  TensorId y = g.Op(tfl::BuiltinOperator_RELU)
                   .In(x)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4});
  g.Output(y);
  auto m = std::move(b).Build();
  ASSERT_TRUE(m.ok());
  auto plugin = LoadOrDie(ExamplePlugin());
  CompilerPlugin* raw = plugin.get();
  ASSERT_TRUE(ApplyPlugins(*m, {&raw, 1}, {}).ok());
  auto again = ApplyPlugins(*m, {&raw, 1}, {});
  ASSERT_FALSE(again.ok());
  EXPECT_NE(
      again.status().message().find("already compiled (by graft, for example)"),
      std::string::npos)
      << again.status();
}

// A small graph every misbehaving case runs on: 4 ops, all taken.
Model FourOps() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId t = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  for (int i = 0; i < 4; ++i) {
    t = g.Op(tfl::BuiltinOperator_RELU)
            .In(t)
            .Out(absl::StrCat("t", i), tfl::TensorType_FLOAT32, {1, 4});
  }
  g.Output(t);
  return *std::move(b).Build();
}

struct Misbehavior {
  const char* option;
  const char* groups;
  const char* expected;
};

class MisbehavingPluginTest : public ::testing::TestWithParam<Misbehavior> {};

TEST_P(MisbehavingPluginTest, GivesSpecificErrorNamingVendor) {
  const Misbehavior& mb = GetParam();
  auto plugin = LoadOrDie(Misbehaving("ok"),
                          {{"misbehave", mb.option}, {"groups", mb.groups}});
  ASSERT_NE(plugin, nullptr);
  Model m = FourOps();
  CompilerPlugin* raw = plugin.get();
  auto report = ApplyPlugins(m, {&raw, 1}, {});
  ASSERT_FALSE(report.ok());
  std::string msg(report.status().message());
  EXPECT_NE(msg.find("misbehaving plugin"), std::string::npos) << msg;
  EXPECT_NE(msg.find(mb.expected), std::string::npos) << msg;
  // One line, no terminal control, capped (the noisy plugin sends 64 KiB).
  EXPECT_EQ(msg.find_first_of("\n\x1b"), std::string::npos) << msg;
  EXPECT_LT(msg.size(), 4096u + 512u);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, MisbehavingPluginTest,
    ::testing::Values(
        Misbehavior{"taken_2", "1", "taken=2 for op 0"},
        Misbehavior{"negative_group", "1", "negative group id -1"},
        Misbehavior{"partition_error", "1", "partition exploded"},
        Misbehavior{"wrong_call_count", "2", "3 calls for 4 partitions"},
        Misbehavior{"bad_module_index", "1", "names module 7 of 1"},
        Misbehavior{"huge_module", "1", "claims 1099511627776 bytes"},
        Misbehavior{"empty_module", "1", "module 0 is empty"},
        Misbehavior{"wrong_vendor", "1",
                    "stamp's vendor is 'someone_else'"},
        Misbehavior{"duplicate_entry", "2", "appears twice in module 0"},
        Misbehavior{"fail_partition_1", "2", "cannot compile partition 1"},
        // Issue 17: exact limits, struct_size, sanitized messages.
        Misbehavior{"module_4gib", "1",
                    "claims 4294967296 bytes (limit 4294967295)"},
        Misbehavior{"short_stamp", "1",
                    "stamp's struct_size is 16, which does not cover"},
        // Issue 19: every stamp field, named to the vendor.
        Misbehavior{"stamp_two_fields", "1",
                    "stamp's abi_version is 0.0 (unset), but this Graft "
                    "speaks ABI 1.x; set it to GRAFT_ABI_VERSION"},
        Misbehavior{"stamp_no_version", "1",
                    "stamp's plugin_version is empty; set it to \"0.1\""},
        Misbehavior{"stamp_other_format", "1",
                    "stamp's bytecode_format_version is 2, but get_info's "
                    "is 1"},
        Misbehavior{"noisy_error", "1", "line one\\nline two\\x1b[31m red"}),
    [](const auto& info) { return std::string(info.param.option); });

TEST(PluginLoadTest, RejectsOtherAbiMajorBeforeCallingAnythingElse) {
  auto p = LoadCompilerPlugin(Misbehaving("abi2"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("built for Graft plugin ABI 2.0"),
            std::string::npos)
      << p.status();
}

TEST(PluginLoadTest, RejectsMissingRequiredFunction) {
  auto p = LoadCompilerPlugin(Misbehaving("nocompile"));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("missing required function(s) "
                                      "graft_compiler_plugin_compile"),
            std::string::npos)
      << p.status();
}

TEST(PluginLoadTest, RejectsFileThatIsNotAPlugin) {
  testing::TempDir dir;
  std::string path = dir.Join("libgraft_compiler_plugin_fake.so");
  std::ofstream(path) << "not an ELF file";
  auto p = LoadCompilerPlugin(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(path), std::string::npos);
  EXPECT_NE(p.status().message().find("cannot load shared library"),
            std::string::npos)
      << p.status();
}

TEST(PluginLoadTest, RejectsSharedLibraryWithoutEntryPoints) {
  auto p = LoadCompilerPlugin("libm.so.6");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not a compiler plugin"),
            std::string::npos)
      << p.status();
}

TEST(PluginLoadTest, RejectsUnknownSocModel) {
  auto plugin = LoadOrDie(ExamplePlugin());
  Model m = FourOps();
  CompilerPlugin* raw = plugin.get();
  ApplyOptions options;
  options.soc_model = "no-such-soc";
  auto report = ApplyPlugins(m, {&raw, 1}, options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("no-such-soc"), std::string::npos)
      << report.status();
}

// The output tensors' names of op `op` of `sg`: names survive outlining's
// renumbering, so they identify an op across the two models.
std::vector<std::string> OutputNames(const Subgraph& sg,
                                     const tfl::OperatorT& op) {
  std::vector<std::string> names;
  for (TensorId t : op.outputs) {
    names.push_back(t >= 0 ? sg.tensors[t].name : "");
  }
  return names;
}

// The manifest's op_origins name, for every op of a compiled subgraph, the
// ops of the original it stands for: each original op exactly once, a kept
// op the same op, a dispatch op its fallback subgraph's ops in order. Over
// every generated model (kept ops can change order in outlining).
TEST(ApplyTest, OpOriginsMapEveryCompiledOpBackToTheOriginalOps) {
  auto plugin = LoadOrDie(ExamplePlugin());
  ASSERT_NE(plugin, nullptr);
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           SourceDir() + "/test_models/generated")) {
    if (entry.path().extension() != ".tflite") continue;
    const std::string path = entry.path().string();
    auto original = LoadModel(path);
    auto compiled = LoadModel(path);
    ASSERT_TRUE(original.ok() && compiled.ok()) << path;
    CompilerPlugin* raw = plugin.get();
    auto report = ApplyPlugins(*compiled, {&raw, 1}, {});
    ASSERT_TRUE(report.ok()) << path << ": " << report.status();
    if (report->partitions.empty()) continue;
    auto manifest = ReadManifest(*compiled);
    ASSERT_TRUE(manifest.ok()) << path;
    for (const ManifestOpOrigins& o : manifest->op_origins) {
      SCOPED_TRACE(absl::StrCat(path, " subgraph ", o.subgraph));
      const Subgraph& before = original->subgraphs[o.subgraph];
      const Subgraph& after = compiled->subgraphs[o.subgraph];
      ASSERT_EQ(o.ops.size(), after.ops.size());
      std::vector<int> seen(before.ops.size(), 0);
      for (size_t i = 0; i < after.ops.size(); ++i) {
        const tfl::OperatorT& op = after.ops[i];
        for (int32_t from : o.ops[i]) {
          ASSERT_GE(from, 0);
          ASSERT_LT(static_cast<size_t>(from), before.ops.size());
          ++seen[from];
        }
        if (!IsDispatchOp(*compiled, op)) {
          ASSERT_EQ(o.ops[i].size(), 1u) << "op " << i;
          EXPECT_EQ(OutputNames(after, op),
                    OutputNames(before, before.ops[o.ops[i][0]]))
              << "op " << i;
          continue;
        }
        auto options = DecodeDispatchOpOptions(op.custom_options);
        ASSERT_TRUE(options.ok());
        const Subgraph& fallback =
            compiled->subgraphs[options->fallback_subgraph];
        ASSERT_EQ(fallback.ops.size(), o.ops[i].size()) << "op " << i;
        for (size_t k = 0; k < fallback.ops.size(); ++k) {
          EXPECT_EQ(OutputNames(fallback, fallback.ops[k]),
                    OutputNames(before, before.ops[o.ops[i][k]]))
              << "op " << i << " fallback op " << k;
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1),
                static_cast<long>(seen.size()));
      ++checked;
    }
  }
  EXPECT_GT(checked, 5);
}

// The CLI: a failing plugin leaves no output; applying twice gives identical
// bytes.
int RunGraft(const std::string& args, std::string* output = nullptr) {
  std::string cmd = BinaryDir() + "/graft " + args + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  std::string text;
  while (size_t n = fread(buf, 1, sizeof(buf), f)) text.append(buf, n);
  int status = pclose(f);
  if (output) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ApplyCliTest, FailureLeavesNoOutputFile) {
  testing::TempDir dir;
  std::string model = dir.Join("m.tflite"), out = dir.Join("out.tflite");
  ASSERT_TRUE(SaveModel(FourOps(), model).ok());
  std::string text;
  EXPECT_EQ(RunGraft(absl::StrCat("apply ", model, " -o ", out,
                                  " --plugin=", Misbehaving("ok"),
                                  " --plugin-option=misbehave=wrong_vendor"),
                     &text),
            1)
      << text;
  EXPECT_NE(text.find("someone_else"), std::string::npos) << text;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);  // Only the input: no temporary file left behind.
}

TEST(ApplyCliTest, ApplyIsDeterministic) {
  testing::TempDir dir;
  std::string model = dir.Join("m.tflite");
  ASSERT_TRUE(SaveModel(FourOps(), model).ok());
  std::string text;
  for (const char* out : {"a.tflite", "b.tflite"}) {
    ASSERT_EQ(RunGraft(absl::StrCat("apply ", model, " -o ", dir.Join(out),
                                    " --plugin=", ExamplePlugin()),
                       &text),
              0)
        << text;
  }
  EXPECT_NE(text.find("4/4 ops taken (100%) in 1 partition"), std::string::npos)
      << text;
  auto a = ReadFile(dir.Join("a.tflite")), b2 = ReadFile(dir.Join("b.tflite"));
  ASSERT_TRUE(a.ok() && b2.ok());
  EXPECT_EQ(*a, *b2);
}

// Regression: an atomic save renamed its temporary file over /dev/null.
TEST(ApplyCliTest, RefusesToReplaceNonRegularFile) {
  testing::TempDir dir;
  std::string model = dir.Join("m.tflite");
  ASSERT_TRUE(SaveModel(FourOps(), model).ok());
  std::string fifo = dir.Join("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string text;
  EXPECT_EQ(
      RunGraft(absl::StrCat("apply ", model, " --mode=noop -o ", fifo), &text),
      1);
  EXPECT_NE(text.find("is not a regular file; refusing to replace it"),
            std::string::npos)
      << text;
  EXPECT_FALSE(std::filesystem::is_regular_file(fifo));
}

// Issue 17: `-o ""` used to write the default file silently.
TEST(ApplyCliTest, RefusesAnEmptyOutputPath) {
  testing::TempDir dir;
  std::string model = dir.Join("m.tflite");
  ASSERT_TRUE(SaveModel(FourOps(), model).ok());
  for (const char* flag : {" -o ''", " --output=", " --output ''"}) {
    std::string text;
    EXPECT_EQ(
        RunGraft(absl::StrCat("apply ", model, " --mode=noop", flag), &text), 2)
        << flag << ": " << text;
    EXPECT_NE(text.find("-o/--output: empty path"), std::string::npos) << text;
  }
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);  // Only the input: no default-named output.
}

TEST(ApplyCliTest, MissingVendorSaysWhatToDo) {
  testing::TempDir dir;
  std::string model = dir.Join("m.tflite");
  ASSERT_TRUE(SaveModel(FourOps(), model).ok());
  std::string text;
  EXPECT_EQ(RunGraft(absl::StrCat("apply ", model, " --vendor=acme"), &text),
            1);
  EXPECT_NE(text.find("no compiler plugin for vendor 'acme'"),
            std::string::npos)
      << text;
}

// A plugin directory "plugins" in `dir` holding links to `files`.
std::string PluginDir(testing::TempDir& dir,
                      const std::vector<std::string>& files) {
  const std::string plugins = dir.Join("plugins");
  std::filesystem::create_directory(plugins);
  for (const std::string& file : files) {
    std::filesystem::create_symlink(
        file, plugins + "/" + std::filesystem::path(file).filename().string());
  }
  return plugins;
}

// The example plugin and acme (with_mul), which both take ADD and MUL.
std::string ExampleAndAcmePluginDir(testing::TempDir& dir) {
  return PluginDir(
      dir,
      {ExamplePlugin(),
       BinaryDir() +
           "/tests/plugins/acme/with_mul/libgraft_compiler_plugin_acme.so"});
}

// The order of --vendor is the priority: example and acme (with_mul) both
// take residual_mlp's ADD and MUL, and the vendor named first gets them.
// Without --vendor, acme (an NPU) comes before example (a CPU backend).
TEST(ApplyCliTest, VendorOrderIsThePriority) {
  testing::TempDir dir;
  const std::string plugins = ExampleAndAcmePluginDir(dir);
  const std::string model = SourceDir() + "/test_models/residual_mlp.tflite";
  auto taken_by = [&](const std::string& vendor_flag) {
    std::string text;
    const std::string out = dir.Join("out.tflite");
    EXPECT_EQ(RunGraft(absl::StrCat("apply ", model, " -o ", out,
                                    " --plugin-dir=", plugins, vendor_flag),
                       &text),
              0)
        << text;
    return text;
  };
  std::string text = taken_by(" --vendor=acme,example");
  EXPECT_NE(text.find("vendor priority: acme > example"), std::string::npos)
      << text;
  EXPECT_NE(text.find("in 2 partitions"), std::string::npos) << text;
  text = taken_by(" --vendor=example,acme");
  EXPECT_NE(text.find("vendor priority: example > acme"), std::string::npos)
      << text;
  // example takes all five of its ops; acme gets nothing left.
  EXPECT_NE(text.find("5/6 ops taken (83%) in 1 partition"), std::string::npos)
      << text;
  text = taken_by("");
  EXPECT_NE(text.find("vendor priority: acme > example"), std::string::npos)
      << text;
  // Only the vendor named, however many the directory holds.
  text = taken_by(" --vendor=example");
  EXPECT_EQ(text.find("plugin acme"), std::string::npos) << text;
}

// docs/vendor_guide.md's claims about its acme plugin.
TEST(VendorGuideTest, AcmePluginReportsAndAddingMulJoinsThePartition) {
  const std::string model = SourceDir() + "/test_models/residual_mlp.tflite";
  const std::string dir = BinaryDir() + "/tests/plugins/acme/";
  std::string text;
  testing::TempDir scratch;
  ASSERT_EQ(RunGraft(absl::StrCat("apply ", model, " --mode=partition -o ",
                                  scratch.Join("p.tflite"), " --plugin=", dir,
                                  "base/libgraft_compiler_plugin_acme.so"),
                     &text),
            0)
      << text;
  EXPECT_NE(text.find("1/6 ops taken (17%) in 1 partition"), std::string::npos)
      << text;
  EXPECT_NE(
      text.find("acme: UNSUPPORTED_OP: acme: op MUL is not supported yet"),
      std::string::npos)
      << text;
  testing::TempDir out;
  ASSERT_EQ(RunGraft(absl::StrCat("apply ", model, " --mode=compile -o ",
                                  out.path(), " --plugin=", dir,
                                  "with_mul/libgraft_compiler_plugin_acme.so"),
                     &text),
            0)
      << text;
  EXPECT_NE(text.find("2/6 ops taken (33%) in 1 partition"), std::string::npos)
      << text;
  auto module = ReadFile(out.Join("acme_module_0.bin"));
  ASSERT_TRUE(module.ok()) << module.status();
  // Self-describing: inputs in call order, the intermediate, the constant
  // by model buffer, the output, then the instructions.
  EXPECT_EQ(*module,
            "acme v1 acme-npu-1\ninput t0 16\ninput t1 16\ntensor t2 16\n"
            "const t3 1 buffer 5\noutput t4 16\nadd t1 t0 -> t2\n"
            "mul t2 t3 -> t4\n");
}

bool HasDispatchOp(const Model& m) {
  for (const tfl::OperatorT& op : m.subgraphs[0].ops) {
    if (IsDispatchOp(m, op)) return true;
  }
  return false;
}

TEST(OnDeviceTest, CompilesOnceThenLoadsFromCache) {
  testing::TempDir dir;
  std::string model = dir.Join("mlp.tflite");
  std::filesystem::copy_file(SourceDir() + "/test_models/residual_mlp.tflite",
                             model);
  // A plugin dir holding only the example plugin (vendor_libs/ has others).
  const std::string plugin_dir = PluginDir(dir, {ExamplePlugin()});
  OnDeviceOptions options;
  options.plugin_dir = plugin_dir;
  options.cache_dir = dir.Join("cache");
  auto first = CompileOnDevice(model, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cache_hit);
  EXPECT_TRUE(HasDispatchOp(first->model));
  EXPECT_TRUE(std::filesystem::exists(first->cache_path));
  EXPECT_NE(first->summary.find("5/6 ops taken"), std::string::npos)
      << first->summary;
  // The compiled model is used in place from the cache file's mapping.
  ASSERT_NE(first->model.file, nullptr);
  EXPECT_EQ(first->model.file->path(), first->cache_path);

  auto second = CompileOnDevice(model, options);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->cache_hit);
  EXPECT_EQ(second->cache_path, first->cache_path);
  EXPECT_TRUE(CompareModels(first->model, second->model).ok());

  // Other plugin options are another cache entry.
  options.plugin_options = {{"single_module", "1"}};
  auto third = CompileOnDevice(model, options);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_FALSE(third->cache_hit);
  EXPECT_NE(third->cache_path, first->cache_path);
}

// Issue 17: a cache that cannot be created, or whose entry cannot be
// written, is a warning; the compile goes on without it.
TEST(OnDeviceTest, CompilesWithoutACacheItCannotWrite) {
  testing::TempDir dir;
  std::string model = dir.Join("mlp.tflite");
  std::filesystem::copy_file(SourceDir() + "/test_models/residual_mlp.tflite",
                             model);
  // A plugin dir holding only the example plugin (vendor_libs/ has others).
  const std::string plugin_dir = PluginDir(dir, {ExamplePlugin()});
  OnDeviceOptions options;
  options.plugin_dir = plugin_dir;
  // Not creatable: a path under a regular file (whoever runs the test).
  options.cache_dir = model + "/cache";
  auto r = CompileOnDevice(model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(HasDispatchOp(r->model));
  EXPECT_FALSE(r->cache_hit);
  EXPECT_EQ(r->cache_path, "");
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("cannot create the compile cache"),
            std::string::npos)
      << r->warnings[0];
  // Not writable: the entry's name is taken by a directory.
  options.cache_dir = dir.Join("cache");
  auto good = CompileOnDevice(model, options);
  ASSERT_TRUE(good.ok()) << good.status();
  const std::string entry = good->cache_path;
  std::filesystem::remove(entry);
  std::filesystem::create_directory(entry);
  auto blocked = CompileOnDevice(model, options);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  EXPECT_TRUE(HasDispatchOp(blocked->model));
  EXPECT_EQ(blocked->cache_path, "");
  ASSERT_EQ(blocked->warnings.size(), 1u);
  EXPECT_NE(blocked->warnings[0].find("cannot write the compiled model"),
            std::string::npos)
      << blocked->warnings[0];
}

// A plugin that cannot load on the device (here a file that is no shared
// library, as a LiteRT plugin whose vendor SDK is absent fails dlopen) is
// skipped and named; the others compile.
TEST(OnDeviceTest, SkipsAPluginThatCannotLoadAndSaysWhich) {
  testing::TempDir dir;
  // A plugin dir holding only the example plugin (vendor_libs/ has others).
  const std::string plugin_dir = PluginDir(dir, {ExamplePlugin()});
  const std::string broken = plugin_dir + "/libLiteRtCompilerPlugin_Broken.so";
  const std::string text = "not an ELF file";
  const absl::Span<const uint8_t> piece(
      reinterpret_cast<const uint8_t*>(text.data()), text.size());
  ASSERT_TRUE(WriteFileAtomically(broken, {piece}).ok());
  OnDeviceOptions options;
  options.plugin_dir = plugin_dir;
  auto r = CompileOnDevice(SourceDir() + "/test_models/residual_mlp.tflite",
                           options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(HasDispatchOp(r->model));
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("libLiteRtCompilerPlugin_Broken.so"),
            std::string::npos)
      << r->skipped[0];
}

// OnDeviceOptions::vendors is a priority list: the vendor named first gets
// the ops both take, and a name no plugin has is listed, not fatal.
TEST(OnDeviceTest, VendorsAreAPriorityList) {
  testing::TempDir dir;
  const std::string plugin_dir = ExampleAndAcmePluginDir(dir);
  auto vendors_of_dispatch_ops = [](const Model& m) {
    std::vector<std::string> vendors;
    for (const tfl::OperatorT& op : m.subgraphs[0].ops) {
      if (!IsDispatchOp(m, op)) continue;
      auto options = DecodeDispatchOpOptions(op.custom_options);
      if (options.ok()) vendors.push_back(options->vendor);
    }
    return vendors;
  };
  OnDeviceOptions options;
  options.plugin_dir = plugin_dir;
  options.vendors = {"qualcomm", "example", "acme"};
  auto r = CompileOnDevice(SourceDir() + "/test_models/residual_mlp.tflite",
                           options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->priority, "example > acme");
  EXPECT_EQ(vendors_of_dispatch_ops(r->model),
            std::vector<std::string>{"example"});
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("vendor 'qualcomm'"), std::string::npos)
      << r->skipped[0];

  options.vendors = {"acme", "example"};
  r = CompileOnDevice(SourceDir() + "/test_models/residual_mlp.tflite",
                      options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->priority, "acme > example");
  std::vector<std::string> vendors = vendors_of_dispatch_ops(r->model);
  EXPECT_NE(std::find(vendors.begin(), vendors.end(), "acme"), vendors.end())
      << absl::StrJoin(vendors, ",");
}

TEST(OnDeviceTest, MissingPluginDirSaysSo) {
  OnDeviceOptions options;
  options.plugin_dir = "/nonexistent/graft/plugins";
  auto r = CompileOnDevice(SourceDir() + "/test_models/residual_mlp.tflite",
                           options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/graft/plugins"),
            std::string::npos)
      << r.status();
}

// End to end: the bundled model compiled by the example plugin runs its
// dispatch op on the example dispatch library, with the CPU's outputs.
// With weights_in_place=1 the bytecode names weights by model buffer id and
// the dispatch library reads them from the compiled file in place.
class EndToEndTest : public ::testing::TestWithParam<const char*> {};

TEST_P(EndToEndTest, CompiledModelRunsOnExampleDispatchWithCpuOutputs) {
  testing::TempDir dir;
  const std::string model = SourceDir() + "/test_models/residual_mlp.tflite";
  const std::string compiled = dir.Join("compiled.tflite");
  const std::string plugin_options = GetParam();
  std::string text;
  ASSERT_EQ(
      RunGraft(absl::StrCat("apply ", model, " -o ", compiled,
                            " --plugin=", ExamplePlugin(),
                            plugin_options.empty() ? "" : " --plugin-option=",
                            plugin_options),
               &text),
      0)
      << text;
  {
    auto written = LoadModel(compiled);
    ASSERT_TRUE(written.ok()) << written.status();
    bool refers_to_buffers = false;
    for (const Buffer& b : written->buffers) {
      const std::string bytes(b.data.span().begin(), b.data.span().end());
      if (bytes.rfind("example-bytecode", 0) == 0) {
        refers_to_buffers = bytes.find(" buffer ") != std::string::npos;
      }
    }
    EXPECT_EQ(refers_to_buffers, !plugin_options.empty());
  }
  auto cpu = Runtime::Load(model);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  RuntimeOptions options;
  options.dispatch_dirs = {testing::ExampleVendorDir()};
  options.policy = AcceleratorPolicy::kAllowCpuFallback;
  auto npu = Runtime::Load(compiled, options);
  ASSERT_TRUE(npu.ok()) << npu.status();
  RuntimeReport report = (*npu)->Report();
  EXPECT_EQ(report.CountOps(OpReport::Where::kVendor), 1) << report.ToString();
  for (int i = 0; i < 16; ++i) {
    float v = 0.125f * static_cast<float>(i) - 1.0f;
    (*cpu)->input(0)->data<float>()[i] = v;
    (*npu)->input(0)->data<float>()[i] = v;
  }
  ASSERT_TRUE((*cpu)->Invoke().ok());
  ASSERT_TRUE((*npu)->Invoke().ok());
  for (int i = 0; i < 16; ++i) {
    EXPECT_NEAR((*npu)->output(0)->data<float>()[i],
                (*cpu)->output(0)->data<float>()[i], 1e-6f)
        << i;
  }
  // Requiring the accelerator fails, naming the op left on CPU (SOFTMAX).
  options.policy = AcceleratorPolicy::kRequireAccelerator;
  auto strict = Runtime::Load(compiled, options);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("SOFTMAX"), std::string::npos)
      << strict.status();
  // Without the dispatch library the dispatch op falls back to CPU.
  RuntimeOptions no_vendor;
  no_vendor.dispatch_dirs = {dir.path()};
  auto fallback = Runtime::Load(compiled, no_vendor);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_EQ((*fallback)->Report().CountOps(OpReport::Where::kFallback), 1);
}

INSTANTIATE_TEST_SUITE_P(Weights, EndToEndTest,
                         ::testing::Values("", "weights_in_place=1"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param[0] == '\0'
                                                  ? "CopiedIntoBytecode"
                                                  : "InPlace");
                         });

// Every loadable model of the corpus goes through apply with the example
// plugin; the result reloads and verifies.
TEST(ApplyCorpusTest, EveryCorpusModelApplies) {
  GRAFT_SKIP_IF_NO_CORPUS();
  auto plugin = LoadOrDie(ExamplePlugin());
  CompilerPlugin* raw = plugin.get();
  int models = 0, with_partitions = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           testing::ThirdPartyModelsDir())) {
    std::string path = e.path().string();
    if (!e.is_regular_file() ||
        (e.path().extension() != ".tflite" && e.path().extension() != ".bin")) {
      continue;
    }
    auto m = LoadModel(path);
    if (!m.ok()) continue;  // Not a model, or malformed: covered elsewhere.
    ++models;
    auto report = ApplyPlugins(*m, {&raw, 1}, {});
    bool litert_compiled = false;
    for (const Subgraph& sg : m->subgraphs) {
      for (const tfl::OperatorT& op : sg.ops) {
        litert_compiled |= IsLiteRtDispatchOp(*m, op);
      }
    }
    if (litert_compiled) {
      // Compiled by LiteRT's tools: refused, naming the format.
      ASSERT_FALSE(report.ok()) << path;
      EXPECT_NE(report.status().message().find("already compiled"),
                std::string::npos)
          << report.status();
      continue;
    }
    ASSERT_TRUE(report.ok()) << path << ": " << report.status();
    with_partitions += !report->partitions.empty();
    auto bytes = SerializeModel(*m);
    ASSERT_TRUE(bytes.ok()) << path << ": " << bytes.status();
    auto back = LoadModelFromBytes(Bytes::Own(std::move(*bytes)), path);
    ASSERT_TRUE(back.ok()) << path << ": " << back.status();
  }
  std::printf("%d corpus models applied, %d with example partitions\n", models,
              with_partitions);
  EXPECT_GT(models, 200);
  EXPECT_GT(with_partitions, 20);
}

}  // namespace
}  // namespace graft
