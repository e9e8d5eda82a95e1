// The option payloads Graft hands LiteRT plugins must equal what LiteRT's own
// host gives them. The expected strings were captured with gdb from
// ai-edge-litert 2.3.0's apply_plugin_main as it called Intel's plugin with
// the same flags.
#include "plugins/litert_plugin_options.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace graft {
namespace {

using Options = std::vector<std::pair<std::string, std::string>>;

// The payload the plugin finds under `identifier`, through the callbacks
// it uses; "<NOT_FOUND>" when there is none.
std::string Payload(LiteRtHostOptions& host, const char* identifier) {
  const LiteRtCompilerContext* c = LiteRtHostCompilerContext();
  LiteRtOpaqueOptions opaque = nullptr;
  EXPECT_EQ(c->get_opaque_options(host.options(), &opaque), kLiteRtStatusOk);
  void* data = nullptr;
  LiteRtStatus s = c->find_opaque_options_data(opaque, identifier, &data);
  if (s == kLiteRtStatusErrorNotFound) return "<NOT_FOUND>";
  EXPECT_EQ(s, kLiteRtStatusOk);
  return data == nullptr ? "<NULL>" : static_cast<const char*>(data);
}

std::string IntelPayload(const Options& options) {
  LiteRtHostOptions host;
  absl::Status s = SetLiteRtPluginOptions("IntelOpenVINO", options, host);
  EXPECT_TRUE(s.ok()) << s;
  return Payload(host, "intel_openvino");
}

TEST(LiteRtPluginOptionsTest, DefaultsEqualLiteRtHost) {
  LiteRtHostOptions host;
  ASSERT_TRUE(SetLiteRtPluginOptions("IntelOpenVINO", {}, host).ok());
  EXPECT_EQ(Payload(host, "intel_openvino"),
            "performance_mode = 0\nenable_weight_sharing = true\n");
  EXPECT_EQ(Payload(host, "compiler_options_string"),
            "partition_strategy = 0\nmax_partitions = 0\n");
}

TEST(LiteRtPluginOptionsTest, OneBackendForEveryPartition) {
  EXPECT_EQ(IntelPayload({{"intel_openvino_graph_backends", "gpu"}}),
            "performance_mode = 0\nenable_weight_sharing = true\n"
            "graph.-1.graph_backend = 1\n");
}

TEST(LiteRtPluginOptionsTest, PerPartitionBackendsModeAndWeightSharing) {
  EXPECT_EQ(IntelPayload(
                {{"intel_openvino_graph_backends", "0:npu;1:cpu"},
                 {"intel_openvino_performance_mode", "cumulative_throughput"},
                 {"intel_openvino_enable_weight_sharing", "false"}}),
            "performance_mode = 2\nenable_weight_sharing = false\n"
            "graph.0.graph_backend = 2\ngraph.1.graph_backend = 0\n");
}

TEST(LiteRtPluginOptionsTest, ConfigsMapsInLiteRtOrder) {
  EXPECT_EQ(
      IntelPayload({{"intel_openvino_configs_map",
                     "INFERENCE_PRECISION_HINT=f32,FOO=bar"},
                    {"intel_openvino_performance_mode", "throughput"},
                    {"intel_openvino_graph_configs_map", "0:CACHE_DIR=/tmp/c"},
                    {"intel_openvino_graph_backends", "cpu"}}),
      "performance_mode = 1\nenable_weight_sharing = true\n"
      "configs_map.INFERENCE_PRECISION_HINT = \"f32\"\n"
      "configs_map.FOO = \"bar\"\n"
      "graph.-1.graph_backend = 0\n"
      "graph.0.configs_map.CACHE_DIR = \"/tmp/c\"\n");
}

// The payload's lines come in a fixed order, not the flags' (the capture
// above gave graph_configs_map before graph_backends).
TEST(LiteRtPluginOptionsTest, OrderOfFlagsDoesNotChangeThePayload) {
  EXPECT_EQ(IntelPayload({{"intel_openvino_graph_backends", "cpu"},
                          {"intel_openvino_graph_configs_map", "0:A=b"},
                          {"intel_openvino_configs_map", "C=d"}}),
            IntelPayload({{"intel_openvino_configs_map", "C=d"},
                          {"intel_openvino_graph_configs_map", "0:A=b"},
                          {"intel_openvino_graph_backends", "cpu"}}));
}

TEST(LiteRtPluginOptionsTest, UnknownIntelKeyListsAcceptedOnes) {
  LiteRtHostOptions host;
  absl::Status s = SetLiteRtPluginOptions(
      "IntelOpenVINO", {{"intel_openvino_turbo", "1"}}, host);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(s.message());
  EXPECT_NE(msg.find("intel_openvino_turbo"), std::string::npos) << msg;
  for (const PluginInfo::Option& o : LiteRtPluginOptions("IntelOpenVINO")) {
    EXPECT_NE(msg.find(o.name), std::string::npos) << o.name << ": " << msg;
  }
}

TEST(LiteRtPluginOptionsTest, RejectsUnknownDevice) {
  for (const char* value : {"tpu", "0:tpu", "x:cpu"}) {
    LiteRtHostOptions host;
    absl::Status s = SetLiteRtPluginOptions(
        "IntelOpenVINO", {{"intel_openvino_graph_backends", value}}, host);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_NE(s.message().find("intel_openvino_graph_backends"),
              std::string::npos)
        << s;
  }
}

TEST(LiteRtPluginOptionsTest, RejectsUnknownPerformanceMode) {
  LiteRtHostOptions host;
  absl::Status s = SetLiteRtPluginOptions(
      "IntelOpenVINO", {{"intel_openvino_performance_mode", "fast"}}, host);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'fast'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("cumulative_throughput"), std::string::npos) << s;
}

TEST(LiteRtPluginOptionsTest, RejectsMalformedBooleanAndConfig) {
  LiteRtHostOptions host;
  EXPECT_EQ(SetLiteRtPluginOptions(
                "IntelOpenVINO",
                {{"intel_openvino_enable_weight_sharing", "maybe"}}, host)
                .code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status s = SetLiteRtPluginOptions(
      "IntelOpenVINO", {{"intel_openvino_configs_map", "NOVALUE"}}, host);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("is not KEY=VALUE"), std::string::npos) << s;
}

TEST(LiteRtPluginOptionsTest, SkipsOptionsOfAnotherVendorsNamespace) {
  EXPECT_EQ(IntelPayload({{"qualcomm_htp_performance_mode", "burst"},
                          {"intel_openvino_graph_backends", "cpu"}}),
            "performance_mode = 0\nenable_weight_sharing = true\n"
            "graph.-1.graph_backend = 0\n");
  // And the other way round: Intel's options are not MediaTek's.
  LiteRtHostOptions host;
  EXPECT_TRUE(SetLiteRtPluginOptions(
                  "MediaTek", {{"intel_openvino_graph_backends", "cpu"}}, host)
                  .ok());
  EXPECT_EQ(Payload(host, "intel_openvino"), "<NOT_FOUND>");
  EXPECT_EQ(Payload(host, "compiler_options_string"),
            "partition_strategy = 0\nmax_partitions = 0\n");
}

TEST(LiteRtPluginOptionsTest, RefusesKeyInNoLiteRtNamespace) {
  LiteRtHostOptions host;
  absl::Status s = SetLiteRtPluginOptions("IntelOpenVINO",
                                          {{"graph_backends", "cpu"}}, host);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'graph_backends' is not a LiteRT plugin option"),
            std::string::npos)
      << s;
}

TEST(LiteRtPluginOptionsTest, RefusesOptionsForAVendorWhoseFormatIsUnknown) {
  LiteRtHostOptions host;
  absl::Status s = SetLiteRtPluginOptions(
      "MediaTek", {{"mediatek_sdk_version_type", "version8"}}, host);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("MediaTek"), std::string::npos) << s;
}

TEST(LiteRtPluginOptionsTest, OptionOwnerByNamespace) {
  EXPECT_EQ(LiteRtOptionOwner("intel_openvino_graph_backends"),
            "IntelOpenVINO");
  EXPECT_EQ(LiteRtOptionOwner("qualcomm_log_level"), "Qualcomm");
  EXPECT_EQ(LiteRtOptionOwner("mediatek_x"), "MediaTek");
  EXPECT_EQ(LiteRtOptionOwner("google_tensor_x"), "Google");
  EXPECT_EQ(LiteRtOptionOwner("samsung_x"), "Samsung");
  EXPECT_EQ(LiteRtOptionOwner("intel_x"), "");
  EXPECT_EQ(LiteRtOptionOwner("groups"), "");
  EXPECT_EQ(LiteRtOptionOwner(""), "");
}

// Regression: the namespace table named Google Tensor's plugin
// "GoogleTensor", but it reports "Google", so its options were skipped as
// another vendor's instead of refused.
TEST(LiteRtPluginOptionsTest, GoogleTensorOptionsReachTheGooglePlugin) {
  LiteRtHostOptions host;
  absl::Status s = SetLiteRtPluginOptions(
      "Google", {{"google_tensor_truncation_type", "bf16"}}, host);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("google_tensor_truncation_type"),
            std::string::npos)
      << s;
}

TEST(LiteRtPluginOptionsTest, OnlyIntelAdvertisesOptions) {
  EXPECT_EQ(LiteRtPluginOptions("IntelOpenVINO").size(), 5u);
  EXPECT_TRUE(LiteRtPluginOptions("MediaTek").empty());
}

}  // namespace
}  // namespace graft
