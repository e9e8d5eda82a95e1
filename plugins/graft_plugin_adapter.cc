#include "plugins/graft_plugin_adapter.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/model_io.h"
#include "core/outline.h"
#include "core/status.h"
#include "plugins/graph_view.h"
#include "plugins/stamp_check.h"

namespace graft {
namespace {

bool IsValidVendorName(const std::string& v) {
  if (v.empty() || v.size() > 64) return false;
  return std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompilerPlugin>> GraftPluginAdapter::Create(
    std::unique_ptr<DynamicLibrary> library,
    const std::vector<std::pair<std::string, std::string>>& options) {
  std::unique_ptr<GraftPluginAdapter> p(new GraftPluginAdapter());
  const std::string path = library->path();
  p->library_ = std::move(library);
  const DynamicLibrary& lib = *p->library_;
  auto sym = [&](const char* name) { return lib.Symbol(name); };

  p->api_.abi_version = reinterpret_cast<graft_compiler_plugin_abi_version_fn>(
      sym(GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL));
  if (p->api_.abi_version == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a Graft compiler plugin: it does not export ",
                     GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL));
  }
  // Nothing else is called before the version is known to be compatible.
  uint32_t version = p->api_.abi_version();
  if (GRAFT_ABI_VERSION_GET_MAJOR(version) != GRAFT_ABI_VERSION_MAJOR) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": built for Graft plugin ABI ",
                     GRAFT_ABI_VERSION_GET_MAJOR(version), ".",
                     GRAFT_ABI_VERSION_GET_MINOR(version),
                     ", but this Graft speaks ", GRAFT_ABI_VERSION_MAJOR,
                     ".x; rebuild the plugin against this "
                     "Graft's c_api headers"));
  }
  struct Required {
    const char* name;
    void** slot;
  };
  const Required required[] = {
      {GRAFT_COMPILER_PLUGIN_CREATE_SYMBOL,
       reinterpret_cast<void**>(&p->api_.create)},
      {GRAFT_COMPILER_PLUGIN_DESTROY_SYMBOL,
       reinterpret_cast<void**>(&p->api_.destroy)},
      {GRAFT_COMPILER_PLUGIN_GET_INFO_SYMBOL,
       reinterpret_cast<void**>(&p->api_.get_info)},
      {GRAFT_COMPILER_PLUGIN_PARTITION_SYMBOL,
       reinterpret_cast<void**>(&p->api_.partition)},
      {GRAFT_COMPILER_PLUGIN_COMPILE_SYMBOL,
       reinterpret_cast<void**>(&p->api_.compile)},
      {GRAFT_COMPILER_PLUGIN_COMPILED_RESULT_DESTROY_SYMBOL,
       reinterpret_cast<void**>(&p->api_.compiled_result_destroy)},
  };
  std::vector<std::string> missing;
  for (const Required& r : required) {
    *r.slot = sym(r.name);
    if (*r.slot == nullptr) missing.push_back(r.name);
  }
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": incomplete Graft compiler plugin: missing required ",
        "function(s) ", absl::StrJoin(missing, ", ")));
  }
  p->api_.check_compatibility =
      reinterpret_cast<graft_compiler_plugin_check_compatibility_fn>(
          sym(GRAFT_COMPILER_PLUGIN_CHECK_COMPATIBILITY_SYMBOL));

  std::string file = std::filesystem::path(path).filename().string();
  p->host_ = std::make_unique<HostApi>(file);
  std::vector<graft_key_value_t> kv;
  for (const auto& [k, v] : options) kv.push_back({k.c_str(), v.c_str()});
  graft_compiler_plugin_t* instance = nullptr;
  GRAFT_RETURN_IF_ERROR(TakeStatus(
      p->api_.create(p->host_->table(), kv.data(), kv.size(), &instance),
      absl::StrCat(path, ": create")));
  if (instance == nullptr) {
    return absl::InternalError(
        absl::StrCat(path, ": create returned OK but no plugin instance"));
  }
  p->instance_ = instance;

  const graft_compiler_plugin_info_t* info = nullptr;
  GRAFT_RETURN_IF_ERROR(TakeStatus(p->api_.get_info(instance, &info),
                                   absl::StrCat(path, ": get_info")));
  const size_t min_size =
      offsetof(graft_compiler_plugin_info_t, num_options) + sizeof(size_t);
  if (info == nullptr || info->struct_size < min_size) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": get_info returned ", info ? "a truncated" : "no",
                     " graft_compiler_plugin_info_t"));
  }
  PluginInfo& out = p->info_;
  out.path = path;
  out.vendor = VendorString(info->vendor);
  if (!IsValidVendorName(out.vendor)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": invalid vendor name '", out.vendor,
                     "' (expected 1-64 characters of [a-z0-9_])"));
  }
  out.plugin_version = VendorString(info->plugin_version);
  out.description = VendorString(info->description);
  out.abi_version = info->abi_version;
  out.flags = info->flags;
  out.hardware_kinds = info->hardware_kinds;
  out.bytecode_format_version = info->bytecode_format_version;
  if (info->num_soc_models == 0 || info->soc_models == nullptr ||
      info->num_soc_models > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": vendor '", out.vendor, "' lists no SoC models"));
  }
  for (size_t i = 0; i < info->num_soc_models; ++i) {
    out.soc_models.push_back(VendorString(info->soc_models[i]));
  }
  if (info->options != nullptr && info->num_options < 4096) {
    for (size_t i = 0; i < info->num_options; ++i) {
      out.options.push_back({VendorString(info->options[i].name),
                             VendorString(info->options[i].default_value),
                             VendorString(info->options[i].description)});
    }
  }
  p->label_ = absl::StrCat(out.vendor, " plugin (", file, ")");
  return std::unique_ptr<CompilerPlugin>(std::move(p));
}

GraftPluginAdapter::~GraftPluginAdapter() {
  if (instance_ != nullptr) api_.destroy(instance_);
}

absl::Status GraftPluginAdapter::CheckCompatibility(
    const std::string& soc_model) {
  if (api_.check_compatibility != nullptr) {
    return TakeStatus(api_.check_compatibility(instance_, soc_model.c_str()),
                      absl::StrCat(label_, ": SoC model '", soc_model, "'"));
  }
  if (std::find(info_.soc_models.begin(), info_.soc_models.end(), soc_model) !=
      info_.soc_models.end()) {
    return absl::OkStatus();
  }
  return absl::NotFoundError(
      absl::StrCat(label_, ": does not compile for SoC model '", soc_model,
                   "'; it supports: ", absl::StrJoin(info_.soc_models, ", ")));
}

absl::StatusOr<std::vector<OpDecision>> GraftPluginAdapter::Partition(
    const Model& model, SubgraphId subgraph, const std::string& soc_model,
    absl::Span<const uint8_t> original_tflite) {
  GraphView view(model, subgraph);
  graft_graph_view_t with_buffer = *view.view();
  if (info_.flags & GRAFT_COMPILER_PLUGIN_FLAG_WANTS_TFLITE_BUFFERS) {
    with_buffer.tflite_buffer = {original_tflite.data(),
                                 original_tflite.size()};
  }
  const graft_graph_view_t* graph = &with_buffer;
  std::vector<graft_op_decision_t> raw(graph->num_ops);
  graft_partition_result_t result{};
  result.struct_size = sizeof(result);
  result.decisions = raw.data();
  result.num_decisions = raw.size();
  GRAFT_RETURN_IF_ERROR(TakeStatus(
      api_.partition(instance_, graph, soc_model.c_str(), &result),
      absl::StrCat(label_, ": partition of subgraph ", graph->subgraph_index,
                   " ('", graph->name, "')")));
  std::vector<OpDecision> out(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const graft_op_decision_t& d = raw[i];
    if (d.taken != 0 && d.taken != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          label_, ": partition answered taken=", d.taken, " for op ", i,
          " of subgraph ", graph->subgraph_index, " (expected 0 or 1)"));
    }
    if (d.taken && d.group_id < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          label_, ": partition gave op ", i, " of subgraph ",
          graph->subgraph_index, " the negative group id ", d.group_id));
    }
    out[i].taken = d.taken == 1;
    out[i].group_id = d.group_id;
    out[i].reason_code = d.reason_code;
    // Copied now: reason strings live only until the next partition call.
    out[i].reason = VendorString(d.reason);
  }
  return out;
}

absl::StatusOr<CompiledPartitions> GraftPluginAdapter::Compile(
    const Model& model, absl::Span<const PartitionToCompile> to_compile,
    const std::string& soc_model) {
  const bool wants =
      info_.flags & GRAFT_COMPILER_PLUGIN_FLAG_WANTS_TFLITE_BUFFERS;
  std::vector<std::unique_ptr<GraphView>> views;
  std::vector<std::vector<uint8_t>> standalone(to_compile.size());
  std::vector<const graft_graph_view_t*> partitions;
  for (size_t i = 0; i < to_compile.size(); ++i) {
    const PartitionToCompile& p = to_compile[i];
    if (wants) {
      GRAFT_ASSIGN_OR_RETURN(
          standalone[i],
          SerializeModel(ExtractSubgraphsModel(model, {p.subgraph})));
    }
    views.push_back(
        std::make_unique<GraphView>(model, p.subgraph, p.name, p.original_ops,
                                    p.source_subgraph, standalone[i]));
    partitions.push_back(views.back()->view());
  }
  graft_compiled_result_t* raw = nullptr;
  GRAFT_RETURN_IF_ERROR(
      TakeStatus(api_.compile(instance_, soc_model.c_str(), partitions.data(),
                              partitions.size(), &raw),
                 absl::StrCat(label_, ": compile of ", partitions.size(),
                              " partition(s)")));
  if (raw == nullptr) {
    return absl::InternalError(
        absl::StrCat(label_, ": compile returned OK but no result"));
  }
  auto destroy = api_.compiled_result_destroy;
  std::shared_ptr<graft_compiled_result_t> owner(
      raw, [destroy](graft_compiled_result_t* r) { destroy(r); });
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat(label_, ": compile returned a malformed result: ", what));
  };
  if (raw->struct_size <
      offsetof(graft_compiled_result_t, num_debug_map_entries) +
          sizeof(size_t)) {
    return bad("struct_size too small");
  }
  if (raw->num_calls != partitions.size()) {
    return bad(absl::StrCat(raw->num_calls, " calls for ", partitions.size(),
                            " partitions (one call per partition expected)"));
  }
  if (raw->num_modules == 0 || raw->modules == nullptr ||
      raw->calls == nullptr) {
    return bad("no modules or no calls");
  }
  if (raw->stamp == nullptr) return bad("no compatibility stamp");
  CompiledPartitions out;
  for (size_t m = 0; m < raw->num_modules; ++m) {
    const graft_byte_span_t& span = raw->modules[m];
    if (span.size == 0 || span.data == nullptr) {
      return bad(absl::StrCat("module ", m, " is empty"));
    }
    if (span.size > kMaxModuleBytes) {
      return bad(absl::StrCat("module ", m, " claims ", span.size,
                              " bytes (limit ", kMaxModuleBytes, ")"));
    }
    out.modules.emplace_back(span.data, span.size);
  }
  std::set<std::pair<size_t, std::string>> entry_points;
  for (size_t c = 0; c < raw->num_calls; ++c) {
    const graft_compiled_call_t& call = raw->calls[c];
    if (call.module_index >= raw->num_modules) {
      return bad(absl::StrCat("the call for partition ", c, " names module ",
                              call.module_index, " of ", raw->num_modules));
    }
    std::string entry = VendorString(call.entry_point);
    if (entry.empty()) {
      return bad(
          absl::StrCat("the call for partition ", c, " has no entry point"));
    }
    if (!entry_points.insert({call.module_index, entry}).second) {
      return bad(absl::StrCat("entry point '", entry,
                              "' appears twice in module ", call.module_index));
    }
    out.calls.push_back({std::move(entry), call.module_index});
  }
  if (raw->num_debug_map_entries > 0 && raw->debug_map != nullptr) {
    for (size_t i = 0; i < raw->num_debug_map_entries; ++i) {
      const graft_debug_map_entry_t& e = raw->debug_map[i];
      if (e.module_index >= raw->num_modules || e.partition_index < 0 ||
          static_cast<size_t>(e.partition_index) >= partitions.size()) {
        return bad(absl::StrCat("debug map entry ", i, " is out of range"));
      }
      out.debug_map.push_back({e.module_index, e.vendor_location,
                               e.original_op_index, e.partition_index});
    }
  }
  // The stamp is checked field by field (stamp_check.h) so the vendor
  // learns which one is wrong here, not from a device refusing the model.
  if (absl::Status st = CheckCompatibilityStamp(*raw->stamp, info_, soc_model);
      !st.ok()) {
    return bad(std::string(st.message()));
  }
  const graft_compatibility_stamp_t& stamp = *raw->stamp;
  out.stamp_vendor = VendorString(stamp.vendor);
  out.stamp_plugin_version = VendorString(stamp.plugin_version);
  out.stamp_soc_model = VendorString(stamp.soc_model);
  out.stamp_abi_version = stamp.abi_version;
  out.bytecode_format_version = stamp.bytecode_format_version;
  out.owner = std::move(owner);
  return out;
}

}  // namespace graft
