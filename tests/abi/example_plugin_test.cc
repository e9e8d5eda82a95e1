// Drives the example and null compiler plugins through the C ABI exactly as
// a third-party host would: dlopen, a hand-made host table, hand-built graph
// views. No Graft library is linked.
//
// The example's bytecode is checked against golden files in golden/;
// refresh them with GRAFT_UPDATE_GOLDENS=1 (and review the diff).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "abi_test_support.h"

namespace graft::abi_test {
namespace {

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Compares `actual` with golden/<name>, or rewrites the golden file when
// GRAFT_UPDATE_GOLDENS=1.
void ExpectMatchesGolden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(GRAFT_ABI_GOLDEN_DIR) + "/" + name;
  const char* update = std::getenv("GRAFT_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    std::printf("updated golden %s\n", path.c_str());
    return;
  }
  const std::string expected = ReadFileOrEmpty(path);
  ASSERT_FALSE(expected.empty())
      << "missing golden " << path << "; run with GRAFT_UPDATE_GOLDENS=1";
  EXPECT_EQ(expected, actual) << "golden " << path
                              << " differs; if intended, rerun with "
                                 "GRAFT_UPDATE_GOLDENS=1 and review the diff";
}

std::string ModuleText(const graft_compiled_result_t* result, size_t index) {
  const graft_byte_span_t& module = result->modules[index];
  return std::string(reinterpret_cast<const char*>(module.data), module.size);
}

// The line `line` (1-based) of `text`.
std::string Line(const std::string& text, uint64_t line) {
  std::istringstream in(text);
  std::string current;
  for (uint64_t i = 0; i < line && std::getline(in, current); ++i) {
  }
  return current;
}

// input x[1,4] -> ADD(const c[4]) -> RELU -> FULLY_CONNECTED(w[3,4], b[3],
// RELU6) -> CONV_2D. The plugin refuses CONV_2D by its op code before it
// looks at shapes, so the conv's operands need not be realistic.
void BuildAddReluFcConv(GraphBuilder& g) {
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t c = g.Constant("c", {4}, {1.0f, -2.0f, 3.0f, -4.0f}, 1);
  int32_t a = g.Tensor("a", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t r = g.Tensor("r", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t w = g.Constant("w", {3, 4},
                         {0.5f, 0.25f, -1.0f, 2.0f, 1.5f, 0.0f, 0.125f, -0.5f,
                          3.0f, -2.5f, 1.0f, 0.75f},
                         2);
  int32_t b = g.Constant("b", {3}, {0.1f, -0.2f, 0.3f}, 3);
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 3});
  int32_t f = g.Constant("filter", {1, 1, 1, 3}, {1.0f, 1.0f, 1.0f}, 4);
  int32_t z = g.Tensor("z", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 1});
  g.Op(kOpAdd, "ADD", {x, c}, {a}, {Attribute::Activation("NONE")});
  g.Op(kOpRelu, "RELU", {a}, {r});
  g.Op(kOpFullyConnected, "FULLY_CONNECTED", {r, w, b}, {y},
       {Attribute::Activation("RELU6"),
        Attribute::Enum("weights_format", 0, "DEFAULT"),
        Attribute::Bool("keep_num_dims", false),
        Attribute::Bool("asymmetric_quantize_inputs", false)});
  g.Op(kOpConv2d, "CONV_2D", {y, f}, {z},
       {Attribute::Enum("padding", 1, "VALID"), Attribute::Int("stride_w", 1),
        Attribute::Int("stride_h", 1), Attribute::Activation("NONE")});
  g.Output(z);
}

// The partition the host would outline from ops 0..2 of the graph above:
// tensors renumbered from 0, constants kept, original op indices recorded.
void BuildAddReluFcPartition(GraphBuilder& g) {
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t c = g.Constant("c", {4}, {1.0f, -2.0f, 3.0f, -4.0f}, 1);
  int32_t a = g.Tensor("a", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t r = g.Tensor("r", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t w = g.Constant("w", {3, 4},
                         {0.5f, 0.25f, -1.0f, 2.0f, 1.5f, 0.0f, 0.125f, -0.5f,
                          3.0f, -2.5f, 1.0f, 0.75f},
                         2);
  int32_t b = g.Constant("b", {3}, {0.1f, -0.2f, 0.3f}, 3);
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 3});
  g.Op(kOpAdd, "ADD", {x, c}, {a}, {Attribute::Activation("NONE")}, 0);
  g.Op(kOpRelu, "RELU", {a}, {r}, {}, 1);
  g.Op(kOpFullyConnected, "FULLY_CONNECTED", {r, w, b}, {y},
       {Attribute::Activation("RELU6"),
        Attribute::Enum("weights_format", 0, "DEFAULT"),
        Attribute::Bool("keep_num_dims", false)},
       2);
  g.Output(y);
}

// x[2,3] -> TANH -> MUL(x) -> LOGISTIC, as one small partition.
void BuildTanhMulLogisticPartition(GraphBuilder& g, int32_t first_op) {
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  int32_t t = g.Tensor("t", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  int32_t m = g.Tensor("m", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  int32_t s = g.Tensor("s", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3});
  g.Op(kOpTanh, "TANH", {x}, {t}, {}, first_op);
  g.Op(kOpMul, "MUL", {t, x}, {m}, {Attribute::Activation("RELU")},
       first_op + 1);
  g.Op(kOpLogistic, "LOGISTIC", {m}, {s}, {}, first_op + 2);
  g.Output(s);
}

class ExamplePluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    library_ = PluginLibrary::Open("GRAFT_EXAMPLE_COMPILER_PLUGIN",
                                   GRAFT_EXAMPLE_COMPILER_PLUGIN_PATH, &error);
    ASSERT_NE(library_, nullptr) << error;
  }

  void TearDown() override {
    if (plugin_ != nullptr) library_->destroy(plugin_);
    plugin_ = nullptr;
    EXPECT_EQ(host_.live_allocations(), 0) << "the plugin leaked memory";
    EXPECT_EQ(host_.live_statuses(), 0) << "a status was not released";
  }

  graft_compiler_plugin_t* CreatePlugin(
      std::vector<graft_key_value_t> options = {}) {
    graft_compiler_plugin_t* plugin = nullptr;
    Status status = Take(
        library_->create(host_.api(), options.data(), options.size(), &plugin));
    EXPECT_TRUE(status.ok()) << status.message;
    plugin_ = plugin;
    return plugin;
  }

  // Partitions `graph` and returns the decisions (reason text copied).
  struct Decision {
    bool taken;
    int32_t group_id;
    graft_partition_reason_t reason_code;
    std::string reason;
  };
  std::vector<Decision> Partition(const graft_graph_view_t* graph,
                                  const char* soc = "example-soc-1") {
    std::vector<graft_op_decision_t> decisions(graph->num_ops,
                                               graft_op_decision_t{});
    graft_partition_result_t result{};
    result.struct_size = sizeof(result);
    result.decisions = decisions.data();
    result.num_decisions = decisions.size();
    Status status = Take(library_->partition(plugin_, graph, soc, &result));
    EXPECT_TRUE(status.ok()) << status.message;
    std::vector<Decision> out;
    for (const graft_op_decision_t& d : decisions) {
      out.push_back({d.taken != 0, d.group_id, d.reason_code,
                     d.reason != nullptr ? d.reason : ""});
    }
    return out;
  }

  // Partitions a one-op graph and returns the decision for that op.
  Decision PartitionOne(GraphBuilder& g) {
    std::vector<Decision> decisions = Partition(g.view());
    EXPECT_EQ(decisions.size(), 1u);
    return decisions.empty() ? Decision{} : decisions[0];
  }

  TestHost host_;
  std::unique_ptr<PluginLibrary> library_;
  graft_compiler_plugin_t* plugin_ = nullptr;
};

TEST_F(ExamplePluginTest, ReportsTheAbiVersionItWasBuiltWith) {
  uint32_t version = library_->abi_version();
  EXPECT_EQ(GRAFT_ABI_VERSION_GET_MAJOR(version), GRAFT_ABI_VERSION_MAJOR);
  EXPECT_EQ(version, GRAFT_ABI_VERSION);
}

TEST_F(ExamplePluginTest, InfoDescribesTheExampleVendor) {
  CreatePlugin();
  const graft_compiler_plugin_info_t* info = nullptr;
  ASSERT_TRUE(Take(library_->get_info(plugin_, &info)).ok());
  ASSERT_NE(info, nullptr);
  ASSERT_GE(info->struct_size, sizeof(graft_compiler_plugin_info_t));
  EXPECT_EQ(info->abi_version, GRAFT_ABI_VERSION);
  EXPECT_STREQ(info->vendor, "example");
  EXPECT_STREQ(info->plugin_version, "1.0.0");
  ASSERT_EQ(info->num_soc_models, 2u);
  EXPECT_STREQ(info->soc_models[0], "example-soc-1");
  EXPECT_STREQ(info->soc_models[1], "example-soc-2");
  EXPECT_EQ(info->hardware_kinds, GRAFT_HARDWARE_KIND_CPU);
  EXPECT_EQ(info->bytecode_format_version, 1u);
  EXPECT_EQ(info->flags, 0u);
  ASSERT_EQ(info->num_options, 2u);
  EXPECT_STREQ(info->options[0].name, "single_module");
  EXPECT_STREQ(info->options[0].default_value, "0");
  EXPECT_STREQ(info->options[1].name, "weights_in_place");
  EXPECT_STREQ(info->options[1].default_value, "0");
}

TEST_F(ExamplePluginTest, ChecksCompatibilityOfSocModels) {
  CreatePlugin();
  ASSERT_NE(library_->check_compatibility, nullptr);
  EXPECT_TRUE(
      Take(library_->check_compatibility(plugin_, "example-soc-2")).ok());
  Status status = Take(library_->check_compatibility(plugin_, "other-soc"));
  EXPECT_EQ(status.code, GRAFT_STATUS_NOT_FOUND);
  EXPECT_EQ(status.message,
            "example vendor: unknown SoC model 'other-soc' (known: "
            "example-soc-1, example-soc-2)");
}

TEST_F(ExamplePluginTest, TakesSupportedOpsAndExplainsTheRest) {
  CreatePlugin();
  GraphBuilder g;
  BuildAddReluFcConv(g);
  std::vector<Decision> decisions = Partition(g.view());
  ASSERT_EQ(decisions.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(decisions[i].taken)
        << "op " << i << ": " << decisions[i].reason;
    EXPECT_EQ(decisions[i].group_id, 0);
  }
  EXPECT_FALSE(decisions[3].taken);
  EXPECT_EQ(decisions[3].reason_code, GRAFT_PARTITION_REASON_UNSUPPORTED_OP);
  EXPECT_EQ(decisions[3].reason,
            "op CONV_2D not supported by the example vendor");
}

TEST_F(ExamplePluginTest, ReasonStaysValidUntilTheNextPartitionCall) {
  CreatePlugin();
  GraphBuilder g;
  BuildAddReluFcConv(g);
  std::vector<graft_op_decision_t> decisions(4, graft_op_decision_t{});
  graft_partition_result_t result{sizeof(result), decisions.data(), 4};
  ASSERT_TRUE(
      Take(library_->partition(plugin_, g.view(), "example-soc-1", &result))
          .ok());
  // Read after the call returned, from plugin-owned memory.
  ASSERT_NE(decisions[3].reason, nullptr);
  EXPECT_STREQ(decisions[3].reason,
               "op CONV_2D not supported by the example vendor");
  EXPECT_EQ(decisions[0].reason, nullptr);
}

TEST_F(ExamplePluginTest, RefusesInt8WithAReason) {
  CreatePlugin();
  GraphBuilder g;
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_INT8, {1, 4});
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_INT8, {1, 4});
  g.Op(kOpRelu, "RELU", {x}, {y}).Output(y);
  Decision d = PartitionOne(g);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.reason_code, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE);
  EXPECT_EQ(d.reason,
            "dtype INT8 not supported: the example vendor runs float32 only");
}

TEST_F(ExamplePluginTest, RefusesIncompatibleBroadcast) {
  CreatePlugin();
  GraphBuilder g;
  int32_t a = g.Input("a", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t b = g.Input("b", GRAFT_ELEMENT_TYPE_FLOAT32, {4, 1});
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {4, 4});
  g.Op(kOpAdd, "ADD", {a, b}, {y}, {Attribute::Activation("NONE")}).Output(y);
  Decision d = PartitionOne(g);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.reason_code, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE);
  EXPECT_EQ(d.reason,
            "ADD with broadcasting: input shapes [1,4] and [4,1] differ; the "
            "example vendor broadcasts only a single-element or "
            "trailing-dimensions operand");
}

TEST_F(ExamplePluginTest, TakesScalarAndTrailingBroadcast) {
  CreatePlugin();
  GraphBuilder g;
  int32_t a = g.Input("a", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3, 4});
  int32_t row = g.Input("row", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t one = g.Input("one", GRAFT_ELEMENT_TYPE_FLOAT32, {});
  int32_t s = g.Tensor("s", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3, 4});
  int32_t t = g.Tensor("t", GRAFT_ELEMENT_TYPE_FLOAT32, {2, 3, 4});
  g.Op(kOpSub, "SUB", {row, a}, {s}, {Attribute::Activation("NONE")});
  g.Op(kOpDiv, "DIV", {s, one}, {t}, {Attribute::Activation("RELU")});
  g.Output(t);
  std::vector<Decision> decisions = Partition(g.view());
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_TRUE(decisions[0].taken) << decisions[0].reason;
  EXPECT_TRUE(decisions[1].taken) << decisions[1].reason;
}

TEST_F(ExamplePluginTest, RefusesUnsupportedFusedActivation) {
  CreatePlugin();
  GraphBuilder g;
  int32_t a = g.Input("a", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  g.Op(kOpMul, "MUL", {a, a}, {y}, {Attribute::Activation("TANH")}).Output(y);
  Decision d = PartitionOne(g);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.reason_code, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE);
  EXPECT_EQ(d.reason,
            "MUL fused activation TANH not supported (NONE, RELU, RELU6 only)");
}

TEST_F(ExamplePluginTest, RefusesFullyConnectedWithKeepNumDims) {
  CreatePlugin();
  GraphBuilder g;
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 2});
  int32_t w = g.Constant("w", {1, 2}, {1.0f, 2.0f}, 1);
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 1});
  g.Op(kOpFullyConnected, "FULLY_CONNECTED", {x, w, -1}, {y},
       {Attribute::Activation("NONE"), Attribute::Bool("keep_num_dims", true)})
      .Output(y);
  Decision d = PartitionOne(g);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.reason_code, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE);
  EXPECT_EQ(d.reason, "FULLY_CONNECTED with keep_num_dims=true not supported");
}

TEST_F(ExamplePluginTest, RefusesFullyConnectedWithRuntimeWeights) {
  CreatePlugin();
  GraphBuilder g;
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 2});
  int32_t w = g.Input("w", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 2});
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 1});
  g.Op(kOpFullyConnected, "FULLY_CONNECTED", {x, w}, {y},
       {Attribute::Activation("NONE")})
      .Output(y);
  Decision d = PartitionOne(g);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.reason_code, GRAFT_PARTITION_REASON_NOT_CONSTANT);
  EXPECT_EQ(d.reason,
            "FULLY_CONNECTED weights must be constant: tensor 'w' is computed "
            "at run time");
}

TEST_F(ExamplePluginTest, RefusesDynamicShapes) {
  CreatePlugin();
  GraphBuilder g;
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4});
  g.Dynamic(x, 0).Dynamic(y, 0);
  g.Op(kOpRelu6, "RELU6", {x}, {y}).Output(y);
  Decision d = PartitionOne(g);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.reason_code, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE);
  EXPECT_EQ(d.reason,
            "dynamic shapes not supported: tensor 'x' has shape signature "
            "[-1,4]");
}

TEST_F(ExamplePluginTest, RefusesCustomOps) {
  CreatePlugin();
  GraphBuilder g;
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  g.Op(GRAFT_BUILTIN_CUSTOM, "MyCustomOp", {x}, {y}).Output(y);
  Decision d = PartitionOne(g);
  EXPECT_FALSE(d.taken);
  EXPECT_EQ(d.reason_code, GRAFT_PARTITION_REASON_UNSUPPORTED_OP);
  EXPECT_EQ(d.reason,
            "custom op 'MyCustomOp' not supported by the example vendor");
}

TEST_F(ExamplePluginTest, CompilesAddReluFullyConnectedToGoldenBytecode) {
  CreatePlugin();
  GraphBuilder partition("partition_0");
  BuildAddReluFcPartition(partition);
  const graft_graph_view_t* views[] = {partition.view()};
  graft_compiled_result_t* result = nullptr;
  Status status =
      Take(library_->compile(plugin_, "example-soc-1", views, 1, &result));
  ASSERT_TRUE(status.ok()) << status.message;
  ASSERT_NE(result, nullptr);
  ASSERT_GE(result->struct_size, sizeof(graft_compiled_result_t));

  ASSERT_NE(result->stamp, nullptr);
  EXPECT_EQ(result->stamp->struct_size, sizeof(graft_compatibility_stamp_t));
  EXPECT_EQ(result->stamp->abi_version, GRAFT_ABI_VERSION);
  EXPECT_STREQ(result->stamp->vendor, "example");
  EXPECT_STREQ(result->stamp->plugin_version, "1.0.0");
  EXPECT_STREQ(result->stamp->soc_model, "example-soc-1");
  EXPECT_EQ(result->stamp->bytecode_format_version, 1u);

  ASSERT_EQ(result->num_modules, 1u);
  ASSERT_EQ(result->num_calls, 1u);
  EXPECT_STREQ(result->calls[0].entry_point, "partition_0");
  EXPECT_EQ(result->calls[0].module_index, 0u);
  const std::string text = ModuleText(result, 0);
  ExpectMatchesGolden("example_add_relu_fc.txt", text);

  // The debug map points at each op's instruction line.
  ASSERT_EQ(result->num_debug_map_entries, 3u);
  const char* const kOpcodes[] = {"  add ", "  relu ", "  fully_connected "};
  for (size_t i = 0; i < 3; ++i) {
    const graft_debug_map_entry_t& entry = result->debug_map[i];
    EXPECT_EQ(entry.module_index, 0u);
    EXPECT_EQ(entry.original_op_index, static_cast<int32_t>(i));
    EXPECT_EQ(entry.partition_index, 0);
    EXPECT_EQ(Line(text, entry.vendor_location).rfind(kOpcodes[i], 0), 0u)
        << "line " << entry.vendor_location << ": "
        << Line(text, entry.vendor_location);
  }
  library_->compiled_result_destroy(result);
}

TEST_F(ExamplePluginTest, CompileIsDeterministic) {
  CreatePlugin();
  std::string first;
  for (int round = 0; round < 2; ++round) {
    GraphBuilder partition("partition_0");
    BuildAddReluFcPartition(partition);
    const graft_graph_view_t* views[] = {partition.view()};
    graft_compiled_result_t* result = nullptr;
    ASSERT_TRUE(
        Take(library_->compile(plugin_, "example-soc-1", views, 1, &result))
            .ok());
    if (round == 0) {
      first = ModuleText(result, 0);
    } else {
      EXPECT_EQ(first, ModuleText(result, 0));
    }
    library_->compiled_result_destroy(result);
  }
}

TEST_F(ExamplePluginTest, CompilesOneModulePerPartitionByDefault) {
  CreatePlugin();
  GraphBuilder p0("partition_0"), p1("partition_1");
  BuildAddReluFcPartition(p0);
  BuildTanhMulLogisticPartition(p1, 4);
  const graft_graph_view_t* views[] = {p0.view(), p1.view()};
  graft_compiled_result_t* result = nullptr;
  ASSERT_TRUE(
      Take(library_->compile(plugin_, "example-soc-2", views, 2, &result))
          .ok());
  ASSERT_EQ(result->num_modules, 2u);
  ASSERT_EQ(result->num_calls, 2u);
  EXPECT_EQ(result->calls[0].module_index, 0u);
  EXPECT_EQ(result->calls[1].module_index, 1u);
  EXPECT_STREQ(result->calls[1].entry_point, "partition_1");
  EXPECT_STREQ(result->stamp->soc_model, "example-soc-2");
  ExpectMatchesGolden("example_tanh_mul_logistic.txt", ModuleText(result, 1));
  library_->compiled_result_destroy(result);
}

TEST_F(ExamplePluginTest, SingleModuleOptionSharesOneModule) {
  graft_key_value_t option = {"single_module", "1"};
  CreatePlugin({option});
  GraphBuilder p0("partition_0"), p1("partition_1");
  BuildAddReluFcPartition(p0);
  BuildTanhMulLogisticPartition(p1, 4);
  const graft_graph_view_t* views[] = {p0.view(), p1.view()};
  graft_compiled_result_t* result = nullptr;
  ASSERT_TRUE(
      Take(library_->compile(plugin_, "example-soc-1", views, 2, &result))
          .ok());
  ASSERT_EQ(result->num_modules, 1u);
  ASSERT_EQ(result->num_calls, 2u);
  EXPECT_STREQ(result->calls[0].entry_point, "partition_0");
  EXPECT_STREQ(result->calls[1].entry_point, "partition_1");
  EXPECT_EQ(result->calls[0].module_index, 0u);
  EXPECT_EQ(result->calls[1].module_index, 0u);
  const std::string text = ModuleText(result, 0);
  ExpectMatchesGolden("example_single_module.txt", text);
  ASSERT_EQ(result->num_debug_map_entries, 6u);
  EXPECT_EQ(result->debug_map[5].partition_index, 1);
  EXPECT_EQ(result->debug_map[5].original_op_index, 6);
  EXPECT_EQ(Line(text, result->debug_map[5].vendor_location),
            "  logistic t3 = t2");
  library_->compiled_result_destroy(result);
}

TEST_F(ExamplePluginTest, CompileRejectsAnOpItDoesNotTake) {
  CreatePlugin();
  GraphBuilder g("partition_0");
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4, 4, 1});
  int32_t f = g.Constant("f", {1, 1, 1, 1}, {1.0f}, 1);
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {1, 4, 4, 1});
  g.Op(kOpConv2d, "CONV_2D", {x, f}, {y}, {}, 7).Output(y);
  const graft_graph_view_t* views[] = {g.view()};
  graft_compiled_result_t* result = nullptr;
  Status status =
      Take(library_->compile(plugin_, "example-soc-1", views, 1, &result));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "example vendor: partition 0 op 0 (CONV_2D) cannot be compiled: "
            "op CONV_2D not supported by the example vendor");
  EXPECT_EQ(result, nullptr);
}

TEST_F(ExamplePluginTest, CompileRejectsAReadBeforeWrite) {
  CreatePlugin();
  GraphBuilder g("partition_0");
  int32_t x = g.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  int32_t dangling = g.Tensor("dangling", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  int32_t y = g.Tensor("y", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  g.Op(kOpAdd, "ADD", {x, dangling}, {y}).Output(y);
  const graft_graph_view_t* views[] = {g.view()};
  graft_compiled_result_t* result = nullptr;
  Status status =
      Take(library_->compile(plugin_, "example-soc-1", views, 1, &result));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "example vendor: partition 0 op 0 reads t1 before anything "
            "writes it");
  EXPECT_EQ(result, nullptr);
}

TEST_F(ExamplePluginTest, ErrorInALaterPartitionLeaksNothing) {
  graft_key_value_t option = {"single_module", "1"};
  CreatePlugin({option});
  GraphBuilder p0("partition_0"), bad("partition_1");
  BuildAddReluFcPartition(p0);
  int32_t x = bad.Input("x", GRAFT_ELEMENT_TYPE_FLOAT32, {4});
  int32_t y = bad.Tensor("y", GRAFT_ELEMENT_TYPE_INT32, {4});
  bad.Op(kOpRelu, "RELU", {x}, {y}).Output(y);
  const graft_graph_view_t* views[] = {p0.view(), bad.view()};
  graft_compiled_result_t* result = nullptr;
  Status status =
      Take(library_->compile(plugin_, "example-soc-1", views, 2, &result));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(result, nullptr);
  // TearDown checks that every allocation was returned.
}

TEST_F(ExamplePluginTest, CreateRejectsUnknownOptionsAndBadValues) {
  graft_compiler_plugin_t* plugin = nullptr;
  graft_key_value_t unknown = {"singel_module", "1"};
  Status status = Take(library_->create(host_.api(), &unknown, 1, &plugin));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "example vendor: unknown option 'singel_module' (known: "
            "single_module, weights_in_place)");
  graft_key_value_t bad_value = {"single_module", "yes"};
  status = Take(library_->create(host_.api(), &bad_value, 1, &plugin));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "example vendor: option single_module must be 0 or 1, got 'yes'");
  EXPECT_EQ(plugin, nullptr);
}

TEST_F(ExamplePluginTest, CreateRefusesAHostOfAnotherMajorOrTooSmall) {
  graft_compiler_plugin_t* plugin = nullptr;
  host_.mutable_api()->abi_version =
      GRAFT_ABI_VERSION_PACK(GRAFT_ABI_VERSION_MAJOR + 1, 0);
  Status status = Take(library_->create(host_.api(), nullptr, 0, &plugin));
  EXPECT_EQ(status.code, GRAFT_STATUS_FAILED_PRECONDITION);
  host_.mutable_api()->abi_version = GRAFT_ABI_VERSION;
  host_.mutable_api()->struct_size = offsetof(graft_host_api_t, allocate);
  status = Take(library_->create(host_.api(), nullptr, 0, &plugin));
  EXPECT_EQ(status.code, GRAFT_STATUS_FAILED_PRECONDITION);
  host_.mutable_api()->struct_size = sizeof(graft_host_api_t);
  EXPECT_EQ(plugin, nullptr);
}

// Misuse: NULL arguments answer INVALID_ARGUMENT, leave out-params alone and
// never crash.
TEST_F(ExamplePluginTest, NullArgumentsAreInvalidArgumentNotCrashes) {
  graft_compiler_plugin_t* plugin = nullptr;
  EXPECT_EQ(Take(library_->create(nullptr, nullptr, 0, &plugin)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(library_->create(host_.api(), nullptr, 0, nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(library_->create(host_.api(), nullptr, 2, &plugin)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(plugin, nullptr);

  const graft_compiler_plugin_info_t* info = nullptr;
  EXPECT_EQ(Take(library_->get_info(nullptr, &info)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(info, nullptr);
  EXPECT_EQ(Take(library_->check_compatibility(nullptr, "example-soc-1")).code,
            GRAFT_STATUS_INVALID_ARGUMENT);

  CreatePlugin();
  EXPECT_EQ(Take(library_->get_info(plugin_, nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(library_->check_compatibility(plugin_, nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);

  GraphBuilder g;
  BuildAddReluFcConv(g);
  const graft_graph_view_t* view = g.view();
  std::vector<graft_op_decision_t> decisions(view->num_ops,
                                             graft_op_decision_t{});
  graft_partition_result_t partition{sizeof(partition), decisions.data(),
                                     decisions.size()};
  EXPECT_EQ(
      Take(library_->partition(nullptr, view, "example-soc-1", &partition))
          .code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->partition(plugin_, nullptr, "example-soc-1", &partition))
          .code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(library_->partition(plugin_, view, nullptr, &partition)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->partition(plugin_, view, "example-soc-1", nullptr)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->partition(plugin_, view, "no-such-soc", &partition)).code,
      GRAFT_STATUS_NOT_FOUND);
  graft_partition_result_t too_few{sizeof(too_few), decisions.data(), 2};
  EXPECT_EQ(
      Take(library_->partition(plugin_, view, "example-soc-1", &too_few)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  graft_partition_result_t no_array{sizeof(no_array), nullptr, 4};
  EXPECT_EQ(
      Take(library_->partition(plugin_, view, "example-soc-1", &no_array)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);

  graft_compiled_result_t* result = nullptr;
  const graft_graph_view_t* views[] = {view};
  const graft_graph_view_t* null_views[] = {nullptr};
  EXPECT_EQ(
      Take(library_->compile(nullptr, "example-soc-1", views, 1, &result)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(library_->compile(plugin_, nullptr, views, 1, &result)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->compile(plugin_, "example-soc-1", nullptr, 1, &result))
          .code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->compile(plugin_, "example-soc-1", views, 0, &result)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->compile(plugin_, "example-soc-1", null_views, 1, &result))
          .code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->compile(plugin_, "example-soc-1", views, 1, nullptr)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(result, nullptr);

  // Release functions accept NULL.
  library_->compiled_result_destroy(nullptr);
  library_->destroy(nullptr);
}

TEST_F(ExamplePluginTest, MalformedViewsAreInvalidArgumentNotCrashes) {
  CreatePlugin();
  GraphBuilder g;
  BuildAddReluFcConv(g);
  graft_graph_view_t view = *g.view();
  std::vector<graft_op_decision_t> decisions(view.num_ops,
                                             graft_op_decision_t{});
  graft_partition_result_t partition{sizeof(partition), decisions.data(),
                                     decisions.size()};

  graft_graph_view_t small = view;
  small.struct_size = offsetof(graft_graph_view_t, ops);
  Status status =
      Take(library_->partition(plugin_, &small, "example-soc-1", &partition));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);

  graft_graph_view_t null_tensors = view;
  null_tensors.tensors = nullptr;
  status = Take(
      library_->partition(plugin_, &null_tensors, "example-soc-1", &partition));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);

  // An op reading a tensor index past the end.
  graft_op_t bad_op = *view.ops[1];
  const int32_t out_of_range[] = {99};
  bad_op.inputs = out_of_range;
  std::vector<const graft_op_t*> ops(view.ops, view.ops + view.num_ops);
  ops[1] = &bad_op;
  graft_graph_view_t bad_index = view;
  bad_index.ops = ops.data();
  status = Take(
      library_->partition(plugin_, &bad_index, "example-soc-1", &partition));
  EXPECT_EQ(status.code, GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message,
            "example vendor: partition: op 1 input 0 is tensor 99, out of "
            "range [0, 9)");
}

// The null plugin: loads, describes itself, and answers UNIMPLEMENTED with
// a message naming the function for everything a vendor must fill in.
class NullPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    library_ = PluginLibrary::Open("GRAFT_NULL_COMPILER_PLUGIN",
                                   GRAFT_NULL_COMPILER_PLUGIN_PATH, &error);
    ASSERT_NE(library_, nullptr) << error;
    Status status = Take(library_->create(host_.api(), nullptr, 0, &plugin_));
    ASSERT_TRUE(status.ok()) << status.message;
  }
  void TearDown() override {
    if (library_ != nullptr) library_->destroy(plugin_);
    EXPECT_EQ(host_.live_statuses(), 0);
  }

  TestHost host_;
  std::unique_ptr<PluginLibrary> library_;
  graft_compiler_plugin_t* plugin_ = nullptr;
};

TEST_F(NullPluginTest, VersionAndInfoWork) {
  EXPECT_EQ(library_->abi_version(), GRAFT_ABI_VERSION);
  const graft_compiler_plugin_info_t* info = nullptr;
  ASSERT_TRUE(Take(library_->get_info(plugin_, &info)).ok());
  EXPECT_STREQ(info->vendor, "null");
  ASSERT_EQ(info->num_soc_models, 1u);
  EXPECT_STREQ(info->soc_models[0], "null-soc");
}

TEST_F(NullPluginTest, PartitionIsUnimplementedWithAMessage) {
  GraphBuilder g;
  BuildAddReluFcConv(g);
  const graft_graph_view_t* view = g.view();
  std::vector<graft_op_decision_t> decisions(view->num_ops,
                                             graft_op_decision_t{});
  graft_partition_result_t result{sizeof(result), decisions.data(),
                                  decisions.size()};
  Status status = Take(library_->partition(plugin_, view, "null-soc", &result));
  EXPECT_EQ(status.code, GRAFT_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(status.message,
            "null vendor: partition is not implemented; copy vendors/null and "
            "fill it in");
}

TEST_F(NullPluginTest, CompileAndCheckCompatibilityAreUnimplemented) {
  GraphBuilder g("partition_0");
  BuildAddReluFcPartition(g);
  const graft_graph_view_t* views[] = {g.view()};
  graft_compiled_result_t* result = nullptr;
  Status status =
      Take(library_->compile(plugin_, "null-soc", views, 1, &result));
  EXPECT_EQ(status.code, GRAFT_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(status.message,
            "null vendor: compile is not implemented; copy vendors/null and "
            "fill it in");
  EXPECT_EQ(result, nullptr);
  ASSERT_NE(library_->check_compatibility, nullptr);
  status = Take(library_->check_compatibility(plugin_, "null-soc"));
  EXPECT_EQ(status.code, GRAFT_STATUS_UNIMPLEMENTED);
  EXPECT_NE(status.message.find("check_compatibility"), std::string::npos);
}

TEST_F(NullPluginTest, NullArgumentsAreInvalidArgumentNotCrashes) {
  const graft_compiler_plugin_info_t* info = nullptr;
  EXPECT_EQ(Take(library_->get_info(nullptr, &info)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(Take(library_->get_info(plugin_, nullptr)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->partition(plugin_, nullptr, "null-soc", nullptr)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(
      Take(library_->compile(plugin_, "null-soc", nullptr, 0, nullptr)).code,
      GRAFT_STATUS_INVALID_ARGUMENT);
  graft_compiler_plugin_t* other = nullptr;
  EXPECT_EQ(Take(library_->create(nullptr, nullptr, 0, &other)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  graft_key_value_t option = {"anything", "1"};
  EXPECT_EQ(Take(library_->create(host_.api(), &option, 1, &other)).code,
            GRAFT_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(other, nullptr);
  library_->compiled_result_destroy(nullptr);
  library_->destroy(nullptr);
}

}  // namespace
}  // namespace graft::abi_test
