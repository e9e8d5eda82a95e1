#include "plugins/litert_plugin_options.h"

#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace graft {
namespace {

constexpr char kIntelManufacturer[] = "IntelOpenVINO";
constexpr char kIntelIdentifier[] = "intel_openvino";
// Every plugin gets LiteRT's generic compiler options under this identifier.
constexpr char kCompilerOptionsIdentifier[] = "compiler_options_string";
constexpr char kCompilerOptionsDefault[] =
    "partition_strategy = 0\nmax_partitions = 0\n";

const std::vector<PluginInfo::Option>& IntelOptions() {
  static const auto* kOptions = new std::vector<PluginInfo::Option>{
      {"intel_openvino_graph_backends", "npu",
       "OpenVINO device for every partition (cpu, gpu, npu), or per partition "
       "as INDEX:DEVICE;INDEX:DEVICE"},
      {"intel_openvino_configs_map", "",
       "OpenVINO properties as KEY=VALUE,KEY=VALUE (e.g. "
       "INFERENCE_PRECISION_HINT=f32)"},
      {"intel_openvino_graph_configs_map", "",
       "per-partition OpenVINO properties as INDEX:KEY=VALUE;INDEX:KEY=VALUE"},
      {"intel_openvino_performance_mode", "latency",
       "latency, throughput or cumulative_throughput"},
      {"intel_openvino_enable_weight_sharing", "true",
       "share weights across partitions in one container (true, false)"},
  };
  return *kOptions;
}

// A TOML basic string.
std::string Quoted(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

absl::StatusOr<int> IntelDevice(absl::string_view name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "cpu") return 0;
  if (n == "gpu") return 1;
  if (n == "npu") return 2;
  return absl::InvalidArgumentError(
      absl::StrCat("intel_openvino_graph_backends: unknown device '", name,
                   "' (expected cpu, gpu or npu)"));
}

// "KEY=VALUE" into configs lines under `prefix`.
absl::Status AddConfig(absl::string_view flag, absl::string_view item,
                       const std::string& prefix, std::string& toml) {
  std::pair<absl::string_view, absl::string_view> kv =
      absl::StrSplit(item, absl::MaxSplits('=', 1));
  if (kv.first.empty() || item.find('=') == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", item, "' is not KEY=VALUE"));
  }
  absl::StrAppend(&toml, prefix, "configs_map.", kv.first, " = ",
                  Quoted(kv.second), "\n");
  return absl::OkStatus();
}

// "INDEX:REST", an entry of a per-partition option.
struct PerPartition {
  int index = 0;
  absl::string_view rest;
};
absl::StatusOr<PerPartition> ParsePerPartition(absl::string_view flag,
                                               absl::string_view item,
                                               absl::string_view what) {
  std::pair<absl::string_view, absl::string_view> entry =
      absl::StrSplit(item, absl::MaxSplits(':', 1));
  PerPartition out;
  if (!absl::SimpleAtoi(entry.first, &out.index) || out.index < 0 ||
      item.find(':') == absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", item, "' is not PARTITION_INDEX:", what));
  }
  out.rest = entry.second;
  return out;
}

absl::Status SetIntelOptions(
    const std::vector<std::pair<std::string, std::string>>& options,
    LiteRtHostOptions& host) {
  int performance_mode = 0;
  bool weight_sharing = true;
  std::string configs, backends, graph_configs;
  for (const auto& [key, value] : options) {
    if (key == "intel_openvino_performance_mode") {
      const std::string v = absl::AsciiStrToLower(value);
      if (v == "latency") {
        performance_mode = 0;
      } else if (v == "throughput") {
        performance_mode = 1;
      } else if (v == "cumulative_throughput") {
        performance_mode = 2;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            key, ": '", value,
            "' (expected latency, throughput or cumulative_throughput)"));
      }
    } else if (key == "intel_openvino_enable_weight_sharing") {
      if (!absl::SimpleAtob(value, &weight_sharing)) {
        return absl::InvalidArgumentError(
            absl::StrCat(key, ": '", value, "' is not true or false"));
      }
    } else if (key == "intel_openvino_configs_map") {
      for (absl::string_view item :
           absl::StrSplit(value, ',', absl::SkipEmpty())) {
        if (absl::Status s = AddConfig(key, item, "", configs); !s.ok())
          return s;
      }
    } else if (key == "intel_openvino_graph_backends") {
      backends.clear();
      if (value.find(':') == std::string::npos) {
        absl::StatusOr<int> device = IntelDevice(value);
        if (!device.ok()) return device.status();
        absl::StrAppend(&backends, "graph.-1.graph_backend = ", *device, "\n");
        continue;
      }
      for (absl::string_view item :
           absl::StrSplit(value, ';', absl::SkipEmpty())) {
        absl::StatusOr<PerPartition> entry =
            ParsePerPartition(key, item, "DEVICE");
        if (!entry.ok()) return entry.status();
        absl::StatusOr<int> device = IntelDevice(entry->rest);
        if (!device.ok()) return device.status();
        absl::StrAppend(&backends, "graph.", entry->index,
                        ".graph_backend = ", *device, "\n");
      }
    } else if (key == "intel_openvino_graph_configs_map") {
      for (absl::string_view item :
           absl::StrSplit(value, ';', absl::SkipEmpty())) {
        absl::StatusOr<PerPartition> entry =
            ParsePerPartition(key, item, "KEY=VALUE");
        if (!entry.ok()) return entry.status();
        if (absl::Status s = AddConfig(
                key, entry->rest, absl::StrCat("graph.", entry->index, "."),
                graph_configs);
            !s.ok()) {
          return s;
        }
      }
    } else {
      std::vector<std::string> names;
      for (const PluginInfo::Option& o : IntelOptions())
        names.push_back(o.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown option '", key, "' for the ", kIntelManufacturer,
          " plugin; it accepts: ", absl::StrJoin(names, ", ")));
    }
  }
  host.SetPayload(kIntelIdentifier,
                  absl::StrCat("performance_mode = ", performance_mode,
                               "\nenable_weight_sharing = ",
                               weight_sharing ? "true" : "false", "\n", configs,
                               backends, graph_configs));
  return absl::OkStatus();
}

// Each vendor's flag prefix and the SoC manufacturer its 2.3.0 plugin
// reports (LiteRtGetCompilerPluginSocManufacturer).
struct Namespace {
  const char* prefix;
  const char* manufacturer;
};
constexpr Namespace kNamespaces[] = {
    {"intel_openvino_", kIntelManufacturer},
    {"qualcomm_", "Qualcomm"},
    {"mediatek_", "MediaTek"},
    // Google Tensor's plugin reports "Google" as its SoC manufacturer.
    {"google_tensor_", "Google"},
    {"samsung_", "Samsung"},
};

}  // namespace

absl::string_view LiteRtOptionOwner(absl::string_view key) {
  for (const Namespace& n : kNamespaces) {
    if (absl::StartsWith(key, n.prefix)) return n.manufacturer;
  }
  return "";
}

std::vector<PluginInfo::Option> LiteRtPluginOptions(
    absl::string_view manufacturer) {
  if (manufacturer == kIntelManufacturer) return IntelOptions();
  return {};
}

absl::Status SetLiteRtPluginOptions(
    absl::string_view manufacturer,
    const std::vector<std::pair<std::string, std::string>>& options,
    LiteRtHostOptions& host) {
  host.SetPayload(kCompilerOptionsIdentifier, kCompilerOptionsDefault);
  std::vector<std::pair<std::string, std::string>> mine;
  for (const auto& kv : options) {
    absl::string_view owner = LiteRtOptionOwner(kv.first);
    if (owner.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("option '", kv.first,
                       "' is not a LiteRT plugin option (LiteRT "
                       "plugins take apply_plugin's flag names, e.g. "
                       "intel_openvino_graph_backends)"));
    }
    if (owner == manufacturer) mine.push_back(kv);
  }
  if (manufacturer == kIntelManufacturer) return SetIntelOptions(mine, host);
  if (!mine.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '", mine.front().first,
                     "': Graft does not know how LiteRT "
                     "passes options to the ",
                     manufacturer, " plugin; it takes none here"));
  }
  return absl::OkStatus();
}

}  // namespace graft
