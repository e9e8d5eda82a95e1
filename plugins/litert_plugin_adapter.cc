#include "plugins/litert_plugin_adapter.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/litert_format.h"
#include "core/status.h"
#include "core/vendor_library.h"
#include "plugins/litert_plugin_options.h"

namespace graft {
namespace {

// A name that fits a LiteRtStamp field (core/litert_format.h); anything
// longer or with control characters is a misbehaving plugin.
bool IsPrintableName(const char* s) {
  if (s == nullptr || *s == '\0') return false;
  size_t n = 0;
  for (; s[n] != '\0'; ++n) {
    if (n >= kLiteRtStampFieldSize - 1 || s[n] < 0x20 || s[n] >= 0x7f) {
      return false;
    }
  }
  return true;
}

uint32_t HardwareKinds(LiteRtHwAcceleratorSet hw) {
  uint32_t kinds = 0;
  if (hw & LITERT_HW_ACCELERATOR_CPU) kinds |= GRAFT_HARDWARE_KIND_CPU;
  if (hw & LITERT_HW_ACCELERATOR_GPU) kinds |= GRAFT_HARDWARE_KIND_GPU;
  if (hw & LITERT_HW_ACCELERATOR_NPU) kinds |= GRAFT_HARDWARE_KIND_NPU;
  return kinds;
}

}  // namespace

const char* LiteRtStatusName(int status) {
  switch (status) {
    case kLiteRtStatusOk:
      return "kLiteRtStatusOk";
    case kLiteRtStatusErrorInvalidArgument:
      return "kLiteRtStatusErrorInvalidArgument";
    case kLiteRtStatusErrorMemoryAllocationFailure:
      return "kLiteRtStatusErrorMemoryAllocationFailure";
    case kLiteRtStatusErrorRuntimeFailure:
      return "kLiteRtStatusErrorRuntimeFailure";
    case kLiteRtStatusErrorMissingInputTensor:
      return "kLiteRtStatusErrorMissingInputTensor";
    case kLiteRtStatusErrorUnsupported:
      return "kLiteRtStatusErrorUnsupported";
    case kLiteRtStatusErrorNotFound:
      return "kLiteRtStatusErrorNotFound";
    case kLiteRtStatusErrorTimeoutExpired:
      return "kLiteRtStatusErrorTimeoutExpired";
    case kLiteRtStatusErrorWrongVersion:
      return "kLiteRtStatusErrorWrongVersion";
    case kLiteRtStatusErrorUnknown:
      return "kLiteRtStatusErrorUnknown";
    case kLiteRtStatusErrorAlreadyExists:
      return "kLiteRtStatusErrorAlreadyExists";
    case kLiteRtStatusCancelled:
      return "kLiteRtStatusCancelled";
    case kLiteRtStatusErrorFileIO:
      return "kLiteRtStatusErrorFileIO";
    case kLiteRtStatusErrorInvalidFlatbuffer:
      return "kLiteRtStatusErrorInvalidFlatbuffer";
    case kLiteRtStatusErrorDynamicLoading:
      return "kLiteRtStatusErrorDynamicLoading";
    case kLiteRtStatusErrorSerialization:
      return "kLiteRtStatusErrorSerialization";
    case kLiteRtStatusErrorCompilation:
      return "kLiteRtStatusErrorCompilation";
    case kLiteRtStatusErrorIndexOOB:
      return "kLiteRtStatusErrorIndexOOB";
    case kLiteRtStatusErrorInvalidIrType:
      return "kLiteRtStatusErrorInvalidIrType";
    case kLiteRtStatusErrorInvalidGraphInvariant:
      return "kLiteRtStatusErrorInvalidGraphInvariant";
    case kLiteRtStatusErrorGraphModification:
      return "kLiteRtStatusErrorGraphModification";
    case kLiteRtStatusErrorInvalidToolConfig:
      return "kLiteRtStatusErrorInvalidToolConfig";
    case kLiteRtStatusLegalizeNoMatch:
      return "kLiteRtStatusLegalizeNoMatch";
    case kLiteRtStatusErrorInvalidLegalization:
      return "kLiteRtStatusErrorInvalidLegalization";
    case kLiteRtStatusPatternNoMatch:
      return "kLiteRtStatusPatternNoMatch";
    case kLiteRtStatusInvalidTransformation:
      return "kLiteRtStatusInvalidTransformation";
    case kLiteRtStatusErrorUnsupportedRuntimeVersion:
      return "kLiteRtStatusErrorUnsupportedRuntimeVersion";
    case kLiteRtStatusErrorUnsupportedCompilerVersion:
      return "kLiteRtStatusErrorUnsupportedCompilerVersion";
    case kLiteRtStatusErrorIncompatibleByteCodeVersion:
      return "kLiteRtStatusErrorIncompatibleByteCodeVersion";
    case kLiteRtStatusErrorUnsupportedOpShapeInferer:
      return "kLiteRtStatusErrorUnsupportedOpShapeInferer";
    case kLiteRtStatusErrorShapeInferenceFailed:
      return "kLiteRtStatusErrorShapeInferenceFailed";
    default:
      return "unknown LiteRT status";
  }
}

absl::Status LiteRtPluginAdapter::Error(LiteRtStatus status,
                                        absl::string_view what) const {
  const std::string message = absl::StrCat(
      label_, ": ", what, " failed: ", LiteRtStatusName(status), " (", status,
      "); the plugin logs its own account on stderr");
  switch (status) {
    case kLiteRtStatusErrorInvalidArgument:
    case kLiteRtStatusErrorIndexOOB:
      return absl::InvalidArgumentError(message);
    case kLiteRtStatusErrorUnsupported:
      return absl::UnimplementedError(message);
    case kLiteRtStatusErrorNotFound:
      return absl::NotFoundError(message);
    case kLiteRtStatusErrorWrongVersion:
    case kLiteRtStatusErrorUnsupportedCompilerVersion:
      return absl::FailedPreconditionError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<std::unique_ptr<CompilerPlugin>> LiteRtPluginAdapter::Create(
    std::unique_ptr<DynamicLibrary> library,
    const std::vector<std::pair<std::string, std::string>>& options) {
  std::unique_ptr<LiteRtPluginAdapter> p(new LiteRtPluginAdapter());
  // The file's name is the vendor's too: shown sanitized, as every string
  // below that comes from the plugin (core/vendor_library.h).
  const std::string path = SanitizeVendorText(library->path());
  const std::string file = SanitizeVendorText(
      std::filesystem::path(library->path()).filename().string());
  p->library_ = std::move(library);
  const DynamicLibrary& lib = *p->library_;
  LiteRtPluginAbiTable& api = p->api_;
  // Looked up, not called; the missing ones are named only once the version
  // is one Graft hosts (a plugin of another API may well lack them).
  const std::vector<std::string> missing =
      LookUpLiteRtPluginAbiTable(lib, &api);

  // Nothing else is called before the version is known to be one Graft
  // hosts.
  LiteRtApiVersion version{-1, -1, -1};
  if (api.get_version == nullptr ||
      api.get_version(&version) != kLiteRtStatusOk) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": LiteRT compiler plugin does not report its API version (",
        LITERT_PLUGIN_GET_VERSION_SYMBOL, ")"));
  }
  if (version.major != LITERT_HOST_API_VERSION_MAJOR ||
      version.minor != LITERT_HOST_API_VERSION_MINOR) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": built for LiteRT API ", version.major, ".", version.minor, ".",
        version.patch, ", but Graft hosts LiteRT plugins of API ",
        LITERT_HOST_API_VERSION_MAJOR, ".", LITERT_HOST_API_VERSION_MINOR,
        ".x (ai-edge-litert 2.3.0)"));
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": incomplete LiteRT compiler plugin: missing required ",
        "function(s) ", absl::StrJoin(missing, ", ")));
  }

  const char* manufacturer = api.soc_manufacturer();
  if (!IsPrintableName(manufacturer)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the plugin's SoC manufacturer '", VendorString(manufacturer),
        "' is not a printable name of 1-124 characters"));
  }
  PluginInfo& info = p->info_;
  info.path = p->library_->path();
  info.abi = PluginInfo::Abi::kLiteRt;
  info.vendor = manufacturer;
  info.abi_version = GRAFT_ABI_VERSION_PACK(version.major, version.minor);
  info.description = absl::StrCat("LiteRT compiler plugin (API ", version.major,
                                  ".", version.minor, ".", version.patch, ")");
  info.options = LiteRtPluginOptions(info.vendor);
  p->label_ = absl::StrCat(info.vendor, " LiteRT plugin (", file, ")");
  if (absl::Status s =
          SetLiteRtPluginOptions(info.vendor, options, p->options_);
      !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(p->label_, ": ", s.message()));
  }

  LiteRtCompilerPlugin instance = nullptr;
  if (LiteRtStatus s =
          api.create(LiteRtHostCompilerContext(), &instance,
                     p->options_.environment(), p->options_.options());
      s != kLiteRtStatusOk || instance == nullptr) {
    return s != kLiteRtStatusOk
               ? p->Error(s, "create")
               : absl::InternalError(absl::StrCat(
                     p->label_, ": create returned OK but no plugin instance"));
  }
  p->instance_ = instance;

  LiteRtHwAcceleratorSet hw = 0;
  if (LiteRtStatus s = api.supported_hardware(instance, &hw);
      s != kLiteRtStatusOk) {
    return p->Error(s, "supported hardware");
  }
  info.hardware_kinds = HardwareKinds(hw);
  LiteRtParamIndex num_socs = 0;
  if (LiteRtStatus s = api.num_soc_models(instance, &num_socs);
      s != kLiteRtStatusOk) {
    return p->Error(s, "number of SoC models");
  }
  if (num_socs == 0 || num_socs > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat(p->label_, ": lists ", num_socs, " SoC models"));
  }
  for (LiteRtParamIndex i = 0; i < num_socs; ++i) {
    const char* name = nullptr;
    if (LiteRtStatus s = api.soc_model(instance, i, &name);
        s != kLiteRtStatusOk) {
      return p->Error(s, absl::StrCat("SoC model ", i));
    }
    if (!IsPrintableName(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(p->label_, ": SoC model ", i, " '", VendorString(name),
                       "' is not a printable name of 1-124 characters"));
    }
    info.soc_models.push_back(name);
  }
  // Optional in practice: several plugins answer an error when their SDK
  // is absent, and LiteRT's own host goes on without it.
  const char* sdk = nullptr;
  if (api.sdk_version(instance, &sdk) == kLiteRtStatusOk &&
      IsPrintableName(sdk)) {
    info.sdk_version = sdk;
  }
  info.plugin_version = info.sdk_version;
  return std::unique_ptr<CompilerPlugin>(std::move(p));
}

LiteRtPluginAdapter::~LiteRtPluginAdapter() {
  if (instance_ != nullptr) api_.destroy(instance_);
}

absl::Status LiteRtPluginAdapter::CheckCompatibility(
    const std::string& soc_model) {
  if (std::find(info_.soc_models.begin(), info_.soc_models.end(), soc_model) ==
      info_.soc_models.end()) {
    return absl::NotFoundError(absl::StrCat(
        label_, ": does not compile for SoC model '", soc_model,
        "'; it supports: ", absl::StrJoin(info_.soc_models, ", ")));
  }
  if (api_.check_compatibility != nullptr) {
    const LiteRtApiVersion version{LITERT_HOST_API_VERSION_MAJOR,
                                   LITERT_HOST_API_VERSION_MINOR,
                                   LITERT_HOST_API_VERSION_PATCH};
    if (LiteRtStatus s =
            api_.check_compatibility(version, instance_, options_.environment(),
                                     options_.options(), soc_model.c_str());
        s != kLiteRtStatusOk) {
      return Error(s, absl::StrCat("compatibility check for SoC model '",
                                   soc_model, "'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<OpDecision>> LiteRtPluginAdapter::Partition(
    const Model& model, SubgraphId subgraph, const std::string& soc_model,
    absl::Span<const uint8_t>) {
  LiteRtGraph graph(model, {subgraph});
  const std::string context =
      absl::StrCat("partition of subgraph ", subgraph, " ('",
                   model.subgraphs[subgraph].name, "')");
  if (LiteRtStatus s = api_.partition(instance_, soc_model.c_str(),
                                      graph.subgraph(0), graph.op_list(0));
      s != kLiteRtStatusOk) {
    return Error(s, context);
  }
  absl::StatusOr<std::vector<std::pair<OpId, size_t>>> pushed = graph.pushed(0);
  if (!pushed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(label_, ": ", context, ": ", pushed.status().message()));
  }
  const size_t num_ops = model.subgraphs[subgraph].ops.size();
  std::vector<OpDecision> out(num_ops);
  for (OpDecision& d : out) {
    d.reason_code = GRAFT_PARTITION_REASON_UNSPECIFIED;
    d.reason = absl::StrCat("not selected by the ", info_.vendor,
                            " plugin (LiteRT plugins give no reason)");
  }
  for (const auto& [op, partition] : *pushed) {
    OpDecision& d = out[op];
    if (d.taken && static_cast<size_t>(d.group_id) != partition) {
      return absl::InvalidArgumentError(absl::StrCat(
          label_, ": ", context, ": op ", op, " pushed to partitions ",
          d.group_id, " and ", partition));
    }
    if (partition > static_cast<size_t>(INT32_MAX)) {
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": ", context, ": partition index ", partition,
                       " out of range"));
    }
    d.taken = true;
    d.group_id = static_cast<int32_t>(partition);
    d.reason.clear();
  }
  return out;
}

absl::StatusOr<CompiledPartitions> LiteRtPluginAdapter::Compile(
    const Model& model, absl::Span<const PartitionToCompile> partitions,
    const std::string& soc_model) {
  std::vector<SubgraphId> ids;
  for (const PartitionToCompile& p : partitions) ids.push_back(p.subgraph);
  // Kept with the result: a plugin may refer to the graph it compiled
  // until the result is destroyed.
  auto graph = std::make_shared<LiteRtGraph>(model, ids);
  LiteRtCompiledResult raw = nullptr;
  const std::string context =
      absl::StrCat("compile of ", partitions.size(), " partition(s)");
  if (LiteRtStatus s =
          api_.compile(instance_, soc_model.c_str(), graph->model(), &raw);
      s != kLiteRtStatusOk) {
    return Error(s, context);
  }
  if (raw == nullptr) {
    return absl::InternalError(
        absl::StrCat(label_, ": compile returned OK but no result"));
  }
  auto destroy = api_.destroy_result;
  std::shared_ptr<LiteRtCompiledResultT> result(
      raw, [destroy, graph](LiteRtCompiledResult r) { destroy(r); });
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat(label_, ": compile returned a malformed result: ", what));
  };
  LiteRtParamIndex num_modules = 0, num_calls = 0;
  if (LiteRtStatus s = api_.result_num_bytecode(raw, &num_modules);
      s != kLiteRtStatusOk) {
    return Error(s, "number of bytecode modules");
  }
  if (LiteRtStatus s = api_.result_num_calls(raw, &num_calls);
      s != kLiteRtStatusOk) {
    return Error(s, "number of calls");
  }
  if (num_calls != partitions.size()) {
    return bad(absl::StrCat(num_calls, " calls for ", partitions.size(),
                            " partitions (one call per partition expected)"));
  }
  if (num_modules == 0 || num_modules > partitions.size() + 4096) {
    return bad(absl::StrCat(num_modules, " bytecode modules"));
  }
  CompiledPartitions out;
  for (LiteRtParamIndex m = 0; m < num_modules; ++m) {
    const void* data = nullptr;
    size_t size = 0;
    if (LiteRtStatus s = api_.result_bytecode(raw, m, &data, &size);
        s != kLiteRtStatusOk) {
      return Error(s, absl::StrCat("bytecode module ", m));
    }
    if (data == nullptr || size == 0) {
      return bad(absl::StrCat("module ", m, " is empty"));
    }
    if (size > kMaxModuleBytes) {
      return bad(absl::StrCat("module ", m, " claims ", size, " bytes (limit ",
                              kMaxModuleBytes, ")"));
    }
    out.modules.emplace_back(static_cast<const uint8_t*>(data), size);
  }
  std::set<std::pair<size_t, std::string>> entry_points;
  for (LiteRtParamIndex c = 0; c < num_calls; ++c) {
    const void* info = nullptr;
    size_t info_size = 0;
    LiteRtParamIndex module = 0;
    if (LiteRtStatus s =
            api_.result_call_info(raw, c, &info, &info_size, &module);
        s != kLiteRtStatusOk) {
      return Error(s, absl::StrCat("call info of partition ", c));
    }
    if (module >= num_modules) {
      return bad(absl::StrCat("the call for partition ", c, " names module ",
                              module, " of ", num_modules));
    }
    if (info == nullptr || info_size == 0 || info_size > 4096) {
      return bad(absl::StrCat("the call for partition ", c,
                              " has no entry point name"));
    }
    std::string entry(static_cast<const char*>(info), info_size);
    // Some plugins count a terminating NUL in the size.
    while (!entry.empty() && entry.back() == '\0') entry.pop_back();
    if (entry.empty() || !IsPrintableName(entry.c_str())) {
      return bad(absl::StrCat("the call for partition ", c,
                              " has an entry point that is not a printable "
                              "name: '", SanitizeVendorText(entry), "'"));
    }
    if (!entry_points.insert({module, entry}).second) {
      return bad(absl::StrCat("entry point '", entry,
                              "' appears twice in module ", module));
    }
    out.calls.push_back({std::move(entry), module});
  }
  out.owner = std::move(result);
  out.stamp_vendor = info_.vendor;
  out.stamp_plugin_version = info_.plugin_version;
  out.stamp_soc_model = soc_model;
  out.stamp_abi_version = info_.abi_version;
  return out;
}

}  // namespace graft
