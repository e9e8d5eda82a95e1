#include "plugins/apply.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/compiled_format.h"
#include "core/inline.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/outline.h"
#include "core/partition.h"
#include "core/status.h"

namespace graft {
namespace {

// Adds the time since construction (or the last Lap) to `*slot` on Lap().
class Stopwatch {
 public:
  Stopwatch() : last_(std::chrono::steady_clock::now()) {}
  void Lap(double* slot) {
    auto now = std::chrono::steady_clock::now();
    *slot += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_;
};

constexpr char kCpuCallComposite[] = "odml.cpu_call";

// The name of a STABLEHLO_COMPOSITE op, "" for other ops.
absl::string_view CompositeName(const tfl::OperatorT& op) {
  const auto* c = op.builtin_options_2.AsStableHLOCompositeOptions();
  return c == nullptr ? absl::string_view() : absl::string_view(c->name);
}

// One report per op of subgraph `s`, naming it; nothing decided yet.
std::vector<OpApplyReport> OpReports(const Model& model, SubgraphId s) {
  const Subgraph& sg = model.subgraphs[s];
  std::vector<OpApplyReport> reports(sg.ops.size());
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    reports[i].subgraph = s;
    reports[i].op = static_cast<OpId>(i);
    reports[i].name = OpName(model, sg.ops[i]);
  }
  return reports;
}

// The subgraphs some STABLEHLO_COMPOSITE names as its decomposition.
std::vector<bool> DecompositionSubgraphs(const Model& model) {
  const auto n = static_cast<int32_t>(model.subgraphs.size());
  std::vector<bool> out(n, false);
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      if (const auto* c = op.builtin_options_2.AsStableHLOCompositeOptions();
          c != nullptr && c->decomposition_subgraph_index >= 0 &&
          c->decomposition_subgraph_index < n) {
        out[c->decomposition_subgraph_index] = true;
      }
    }
  }
  return out;
}

// Of `candidates`, those no op calls any more, counting calls from a
// candidate that itself goes as none (a nested decomposition may be called
// only from one that goes).
std::vector<bool> UncalledSubgraphs(const Model& model,
                                    const std::vector<bool>& candidates) {
  const auto n = static_cast<int64_t>(model.subgraphs.size());
  std::vector<bool> removed(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> called(n, false);
    for (int64_t s = 0; s < n; ++s) {
      if (removed[s]) continue;
      for (const tfl::OperatorT& op : model.subgraphs[s].ops) {
        ForEachCalledSubgraph(op, [&](const char*, int64_t index) {
          if (index >= 0 && index < n) called[index] = true;
        });
      }
    }
    for (int64_t s = 0; s < n; ++s) {
      if (candidates[s] && !removed[s] && !called[s]) {
        removed[s] = changed = true;
      }
    }
  }
  return removed;
}

// Labels for GroupOps: the plugin in the high half, its group id below.
int64_t Label(size_t plugin, int32_t group) {
  return (static_cast<int64_t>(plugin) << 32) | static_cast<uint32_t>(group);
}
size_t PluginOfLabel(int64_t label) { return static_cast<size_t>(label >> 32); }

std::string HumanBytes(int64_t n) {
  if (n < 1024) return absl::StrCat(n, " B");
  if (n < 1024 * 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrFormat("%.1f MiB", n / (1024.0 * 1024.0));
}

// A partition none of whose results is used outside it (and that touches no
// variable) is dead code: outlined, it would be a call with no outputs.
// Vendors need not accept that, so such ops stay where they are, on CPU.
void DropDeadPartitions(const Subgraph& sg, std::vector<Partition>& parts,
                        std::vector<OpApplyReport>& op_reports) {
  std::vector<int32_t> owner(sg.ops.size(), -1);
  for (size_t p = 0; p < parts.size(); ++p) {
    for (OpId op : parts[p].ops) owner[op] = static_cast<int32_t>(p);
  }
  std::vector<bool> live(parts.size(), false);
  std::vector<int32_t> producer(sg.tensors.size(), -1);
  for (size_t op = 0; op < sg.ops.size(); ++op) {
    for (TensorId t : sg.ops[op].outputs) {
      if (t >= 0) producer[t] = owner[op];
    }
    if (owner[op] >= 0 && !sg.ops[op].mutating_variable_inputs.empty()) {
      live[owner[op]] = true;
    }
  }
  for (size_t op = 0; op < sg.ops.size(); ++op) {
    for (TensorId t : sg.ops[op].inputs) {
      if (t >= 0 && producer[t] >= 0 && producer[t] != owner[op]) {
        live[producer[t]] = true;
      }
      if (t >= 0 && owner[op] >= 0 && sg.tensors[t].is_variable) {
        live[owner[op]] = true;
      }
    }
  }
  for (TensorId t : sg.outputs) {
    if (t >= 0 && producer[t] >= 0) live[producer[t]] = true;
  }
  std::vector<Partition> kept;
  for (size_t p = 0; p < parts.size(); ++p) {
    if (live[p]) {
      kept.push_back(std::move(parts[p]));
      continue;
    }
    for (OpId op : parts[p].ops) {
      OpApplyReport& r = op_reports[op];
      r.refusals.push_back({"graft", GRAFT_PARTITION_REASON_UNSPECIFIED,
                            "dead code: no result of its partition is used; "
                            "left on CPU (taken by " +
                                r.taken_by + ")"});
      r.taken_by.clear();
    }
  }
  parts = std::move(kept);
}

// Removes the outlined partitions (subgraphs `first` on, no longer named by
// their dispatch ops) and empties the buffers only they used; buffer ids
// stay, so modules and metadata keep theirs.
absl::Status DropFallbacks(Model& model, SubgraphId first) {
  const auto n = static_cast<SubgraphId>(model.subgraphs.size());
  std::vector<bool> kept_use(model.buffers.size(), false);
  std::vector<bool> dropped_use(model.buffers.size(), false);
  std::vector<SubgraphId> dropped;
  for (SubgraphId s = 0; s < n; ++s) {
    if (s >= first) dropped.push_back(s);
    for (const tfl::TensorT& t : model.subgraphs[s].tensors) {
      if (t.buffer < model.buffers.size()) {
        (s >= first ? dropped_use : kept_use)[t.buffer] = true;
      }
    }
  }
  GRAFT_RETURN_IF_ERROR(RemoveSubgraphs(model, dropped));
  for (size_t b = 1; b < model.buffers.size(); ++b) {
    if (dropped_use[b] && !kept_use[b]) model.buffers[b] = Buffer{};
  }
  return absl::OkStatus();
}

// The manifest's record of why no vendor took an op (ManifestRefusal):
// every refusal, control characters replaced by spaces, cut to
// kMaxRefusalBytes at a character boundary.
std::string RefusalText(const OpApplyReport& r) {
  std::string text;
  for (const OpApplyReport::Refusal& f : r.refusals) {
    if (!text.empty()) text += "; ";
    if (!f.vendor.empty()) absl::StrAppend(&text, f.vendor, ": ");
    absl::StrAppend(&text, PartitionReasonName(f.reason_code),
                    f.reason.empty() ? "" : ": ", f.reason);
  }
  for (char& c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = ' ';
  }
  if (text.size() > kMaxRefusalBytes) {
    size_t cut = kMaxRefusalBytes - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) {
      --cut;
    }
    text.resize(cut);
    text += "...";
  }
  return text;
}

}  // namespace

absl::StatusOr<ApplyReport> ApplyPlugins(
    Model& model, absl::Span<CompilerPlugin* const> plugins,
    const ApplyOptions& options) {
  auto start = std::chrono::steady_clock::now();
  ApplyReport report;
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      if (IsDispatchOp(model, op) || IsLiteRtDispatchOp(model, op)) {
        auto manifest = ReadManifest(model);
        auto stamp = ReadLiteRtStamp(model);
        std::string vendors;
        if (manifest.ok()) {
          for (const auto& v : manifest->vendors) {
            absl::StrAppend(&vendors, vendors.empty() ? "" : ", ", v.vendor);
          }
        } else if (stamp.ok()) {
          vendors =
              absl::StrCat(stamp->soc_manufacturer, " ", stamp->soc_model);
        }
        return absl::FailedPreconditionError(absl::StrCat(
            "the model is already compiled (",
            IsDispatchOp(model, op) ? "by graft" : "in LiteRT's format",
            ", for ", vendors.empty() ? "an unknown vendor" : vendors,
            "); apply plugins to the original, uncompiled model"));
      }
    }
  }

  std::vector<std::string> socs;
  for (CompilerPlugin* p : plugins) {
    std::string soc = options.soc_model.empty() ? p->info().soc_models.front()
                                                : options.soc_model;
    GRAFT_RETURN_IF_ERROR(p->CheckCompatibility(soc));
    socs.push_back(soc);
    report.plugins.push_back(
        {p->info().vendor, p->info().plugin_version, soc, p->info().path});
  }
  if (options.mode == ApplyMode::kNoop) {
    for (size_t s = 0; s < model.subgraphs.size(); ++s) {
      report.ops_total += model.subgraphs[s].ops.size();
    }
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    return report;
  }

  // .tflite bytes for plugins that ingest .tflite: the original file.
  std::vector<uint8_t> serialized_original;
  absl::Span<const uint8_t> original_bytes;
  bool any_wants_tflite = false;
  for (CompilerPlugin* p : plugins) {
    any_wants_tflite |= (p->info().flags &
                         GRAFT_COMPILER_PLUGIN_FLAG_WANTS_TFLITE_BUFFERS) != 0;
  }
  if (any_wants_tflite) {
    if (model.file != nullptr) {
      original_bytes = model.file->span();
    } else {
      GRAFT_ASSIGN_OR_RETURN(serialized_original, SerializeModel(model));
      original_bytes = serialized_original;
    }
  }

  // Partition each original subgraph (composites as LiteRT's host treats
  // them, below), then group and outline.
  struct Pending {
    size_t plugin;
    SubgraphId source;
    OpId call_op;
    size_t report_index;
  };
  std::vector<Pending> pending;
  std::vector<ManifestOpOrigins> op_origins;
  Stopwatch watch;
  struct Decided {
    std::vector<int64_t> labels;
    std::vector<OpApplyReport> ops;
  };
  auto partition = [&](SubgraphId s, Decided& d) -> absl::Status {
    const size_t num_ops = model.subgraphs[s].ops.size();
    d.labels.assign(num_ops, kUnselected);
    d.ops = OpReports(model, s);
    for (size_t k = 0; k < plugins.size(); ++k) {
      if (options.progress) {
        options.progress(
            absl::StrFormat("%s: partitioning subgraph %d (%d ops)",
                            plugins[k]->info().vendor, s, num_ops));
      }
      GRAFT_ASSIGN_OR_RETURN(
          std::vector<OpDecision> decisions,
          plugins[k]->Partition(model, s, socs[k], original_bytes));
      for (size_t i = 0; i < num_ops; ++i) {
        OpDecision& o = decisions[i];
        if (o.taken &&
            CompositeName(model.subgraphs[s].ops[i]) == kCpuCallComposite) {
          o = {false, 0, GRAFT_PARTITION_REASON_UNSPECIFIED,
               absl::StrCat("the model asks for this composite (",
                            kCpuCallComposite, ") to run on the CPU")};
        }
        if (o.taken && d.labels[i] == kUnselected) {
          d.labels[i] = Label(k, o.group_id);
          d.ops[i].taken_by = plugins[k]->info().vendor;
        } else if (!o.taken) {
          d.ops[i].refusals.push_back(
              {plugins[k]->info().vendor, o.reason_code, o.reason});
        }
      }
    }
    return absl::OkStatus();
  };
  // Composites, as LiteRT's host treats them (so a LiteRT plugin takes the
  // same ops from Graft as from LiteRT): a decomposition subgraph is not
  // offered on its own; a composite no plugin takes is replaced by its
  // decomposition's ops (InlineCall) and the caller offered again, so the
  // plugins can take those ops together with their neighbours. A
  // decomposition left uncalled is removed; one whose composite a plugin
  // took stays, for the CPU fallback. Composites named odml.cpu_call are
  // never taken nor inlined.
  const SubgraphId num_original =
      static_cast<SubgraphId>(model.subgraphs.size());
  const std::vector<bool> is_decomposition = DecompositionSubgraphs(model);
  std::vector<Decided> decided(num_original);
  for (SubgraphId s = 0; s < num_original; ++s) {
    if (is_decomposition[s]) continue;
    GRAFT_RETURN_IF_ERROR(partition(s, decided[s]));
    std::vector<OpId> to_inline;
    for (size_t i = 0; i < decided[s].labels.size(); ++i) {
      const absl::string_view name = CompositeName(model.subgraphs[s].ops[i]);
      if (!name.empty() && name != kCpuCallComposite &&
          decided[s].labels[i] == kUnselected) {
        to_inline.push_back(static_cast<OpId>(i));
      }
    }
    size_t inlined = 0;
    // Last first, so the ids of the ones before stay valid.
    for (auto it = to_inline.rbegin(); it != to_inline.rend(); ++it) {
      tfl::OperatorT& op = model.subgraphs[s].ops[*it];
      const auto* c = op.builtin_options_2.AsStableHLOCompositeOptions();
      const std::string name = c->name;
      absl::StatusOr<size_t> n =
          InlineCall(model, s, *it, c->decomposition_subgraph_index);
      if (n.ok()) {
        ++inlined;
        report.inlined_composites.push_back(name);
      }
    }
    if (inlined > 0) {
      if (any_wants_tflite) {
        GRAFT_ASSIGN_OR_RETURN(serialized_original, SerializeModel(model));
        original_bytes = serialized_original;
      }
      GRAFT_RETURN_IF_ERROR(partition(s, decided[s]));
    }
  }
  const std::vector<bool> removed = UncalledSubgraphs(model, is_decomposition);
  std::vector<SubgraphId> to_remove;
  for (SubgraphId s = 0; s < num_original; ++s) {
    if (removed[s]) to_remove.push_back(s);
  }
  GRAFT_RETURN_IF_ERROR(RemoveSubgraphs(model, to_remove));
  {
    std::vector<Decided> kept;
    for (SubgraphId s = 0; s < num_original; ++s) {
      if (removed[s]) continue;
      const auto id = static_cast<SubgraphId>(kept.size());
      kept.push_back(std::move(decided[s]));
      if (!is_decomposition[s]) {
        for (OpApplyReport& r : kept.back().ops) r.subgraph = id;
        continue;
      }
      // A kept decomposition runs where its composite runs.
      kept.back().ops = OpReports(model, id);
      kept.back().labels.assign(kept.back().ops.size(), kUnselected);
      for (OpApplyReport& r : kept.back().ops) {
        r.refusals.push_back(
            {"", GRAFT_PARTITION_REASON_UNSPECIFIED,
             "in a composite's decomposition, which runs where the "
             "composite runs"});
      }
    }
    decided = std::move(kept);
  }
  watch.Lap(&report.phases.partition);

  // Outlined partitions are appended after the model's own subgraphs.
  const auto first_outlined = static_cast<SubgraphId>(decided.size());
  for (SubgraphId s = 0; s < first_outlined; ++s) {
    const size_t num_ops = model.subgraphs[s].ops.size();
    std::vector<int64_t>& labels = decided[s].labels;
    std::vector<OpApplyReport>& op_reports = decided[s].ops;
    // A LiteRT plugin's choices are grouped as LiteRT's host groups them:
    // independent components share a partition where that stays acyclic.
    std::vector<int64_t> merge_unconnected;
    for (int64_t label : labels) {
      if (label != kUnselected &&
          plugins[PluginOfLabel(label)]->info().abi ==
              PluginInfo::Abi::kLiteRt &&
          std::find(merge_unconnected.begin(), merge_unconnected.end(),
                    label) == merge_unconnected.end()) {
        merge_unconnected.push_back(label);
      }
    }
    GRAFT_ASSIGN_OR_RETURN(
        std::vector<Partition> parts,
        GroupOps(model.subgraphs[s], labels, merge_unconnected));
    DropDeadPartitions(model.subgraphs[s], parts, op_reports);
    watch.Lap(&report.phases.group);
    const size_t first_report = report.partitions.size();
    for (size_t p = 0; p < parts.size(); ++p) {
      PartitionReport pr;
      pr.vendor = plugins[PluginOfLabel(parts[p].label)]->info().vendor;
      pr.source_subgraph = s;
      pr.ops = parts[p].ops;
      for (OpId op : parts[p].ops) {
        op_reports[op].partition =
            static_cast<int32_t>(report.partitions.size());
      }
      report.partitions.push_back(std::move(pr));
    }
    if (parts.empty()) {
      report.ops_total += num_ops;
      for (OpApplyReport& r : op_reports) report.ops.push_back(std::move(r));
      continue;  // Nothing taken: leave the subgraph exactly as it was.
    }
    std::vector<OpId> kept_ops;
    GRAFT_ASSIGN_OR_RETURN(
        std::vector<OutlinedPartition> outlined,
        OutlinePartitions(
            model, s, parts,
            [&](size_t index, SubgraphId sub, tfl::OperatorT& call) {
              // The compile step below fills in the module; until then the
              // op names its vendor and fallback only.
              const CompilerPlugin& plugin =
                  *plugins[PluginOfLabel(parts[index].label)];
              if (options.mode == ApplyMode::kApply &&
                  plugin.info().abi == PluginInfo::Abi::kLiteRt) {
                call.opcode_index =
                    GetOrAddOperatorCode(model, tfl::BuiltinOperator_CUSTOM,
                                         kLiteRtDispatchCustomCode);
                LiteRtDispatchOpOptions o;
                o.fallback_subgraph = sub;
                call.custom_options = EncodeLiteRtDispatchOpOptions(o);
                return absl::OkStatus();
              }
              call.opcode_index = GetOrAddOperatorCode(
                  model, tfl::BuiltinOperator_CUSTOM,
                  options.mode == ApplyMode::kApply ? kDispatchCustomCode
                                                    : kPartitionCustomCode);
              DispatchOpOptions o;
              o.vendor = plugin.info().vendor;
              o.fallback_subgraph = sub;
              call.custom_options = EncodeDispatchOpOptions(o);
              return absl::OkStatus();
            },
            &kept_ops));
    // Which ops each op of `s` now stands for (the manifest's op_origins).
    ManifestOpOrigins origins;
    origins.subgraph = s;
    for (OpId from : kept_ops) {
      origins.ops.push_back(from >= 0 ? std::vector<int32_t>{from}
                                      : std::vector<int32_t>{});
    }
    for (size_t p = 0; p < outlined.size(); ++p) {
      origins.ops[outlined[p].call_op] = parts[p].ops;
    }
    op_origins.push_back(std::move(origins));
    watch.Lap(&report.phases.outline);
    for (size_t p = 0; p < outlined.size(); ++p) {
      report.partitions[first_report + p].outlined_subgraph =
          outlined[p].subgraph;
      pending.push_back({PluginOfLabel(parts[p].label), s, outlined[p].call_op,
                         first_report + p});
    }
    report.ops_total += num_ops;
    for (OpApplyReport& r : op_reports) {
      report.ops_taken += !r.taken_by.empty();
      report.ops.push_back(std::move(r));
    }
  }

  if (options.mode == ApplyMode::kApply ||
      options.mode == ApplyMode::kCompile) {
    Manifest manifest;
    // Models compiled by a LiteRT plugin carry LiteRT's build stamp too.
    std::optional<LiteRtStamp> stamp;
    for (size_t k = 0; k < plugins.size(); ++k) {
      std::vector<const Pending*> mine;
      for (const Pending& p : pending) {
        if (p.plugin == k) mine.push_back(&p);
      }
      if (mine.empty()) continue;
      std::vector<PartitionToCompile> to_compile;
      for (const Pending* p : mine) {
        const PartitionReport& pr = report.partitions[p->report_index];
        to_compile.push_back({pr.outlined_subgraph, pr.source_subgraph, pr.ops,
                              absl::StrCat("partition_", p->report_index)});
      }
      watch.Lap(&report.phases.embed);
      if (options.progress) {
        size_t ops = 0;
        for (const PartitionToCompile& p : to_compile) {
          ops += p.original_ops.size();
        }
        // One Compile call per vendor takes all its partitions.
        options.progress(absl::StrFormat(
            "%s: compiling %d partition%s (%d ops)", plugins[k]->info().vendor,
            to_compile.size(), to_compile.size() == 1 ? "" : "s", ops));
      }
      GRAFT_ASSIGN_OR_RETURN(CompiledPartitions compiled,
                             plugins[k]->Compile(model, to_compile, socs[k]));
      const bool litert = plugins[k]->info().abi == PluginInfo::Abi::kLiteRt;
      watch.Lap(&report.phases.compile);
      ManifestVendor mv;
      mv.vendor = plugins[k]->info().vendor;
      if (plugins[k]->info().abi == PluginInfo::Abi::kLiteRt) mv.abi = "litert";
      mv.plugin_name =
          std::filesystem::path(plugins[k]->info().path).filename().string();
      mv.plugin_version = plugins[k]->info().plugin_version;
      mv.soc_model = socs[k];
      mv.compiler_abi_version = compiled.stamp_abi_version;
      mv.bytecode_format_version = compiled.bytecode_format_version;
      std::vector<int32_t> module_ids;
      for (absl::Span<const uint8_t> bytes : compiled.modules) {
        CompiledModule m;
        m.vendor = mv.vendor;
        // In place when the modules are Graft's own memory (a LiteRT
        // plugin's, mapped from its compile child); else a copy, since the
        // plugin frees its result.
        m.bytes = compiled.owner_is_plain_memory
                      ? Bytes::View(bytes, compiled.owner)
                      : Bytes::Copy(bytes);
        if (options.mode == ApplyMode::kApply) {
          m.buffer = AddBuffer(model, m.bytes);
          model.buffers[m.buffer].external = true;
          mv.modules.push_back(
              {m.buffer, m.bytes.size(), ModuleHash(m.bytes.span())});
        }
        report.bytecode_bytes += m.bytes.size();
        module_ids.push_back(static_cast<int32_t>(report.modules.size()));
        report.modules.push_back(std::move(m));
      }
      for (size_t i = 0; i < mine.size(); ++i) {
        const CompiledPartitions::Call& call = compiled.calls[i];
        PartitionReport& pr = report.partitions[mine[i]->report_index];
        pr.entry_point = call.entry_point;
        pr.module = module_ids[call.module_index];
        if (options.mode != ApplyMode::kApply) continue;
        tfl::OperatorT& op =
            model.subgraphs[mine[i]->source].ops[mine[i]->call_op];
        const CompiledModule& module = report.modules[pr.module];
        const SubgraphId fallback =
            options.cpu_fallback ? pr.outlined_subgraph : -1;
        if (litert) {
          // LiteRT's format: the serializer fills in the file offset.
          LiteRtDispatchOpOptions o;
          o.bytecode_size = module.bytes.size();
          o.name = call.entry_point;
          o.fallback_subgraph = fallback;
          o.module_buffer = module.buffer;
          op.custom_options = EncodeLiteRtDispatchOpOptions(o);
          continue;
        }
        DispatchOpOptions o;
        o.vendor = mv.vendor;
        o.module_buffer = module.buffer;
        o.entry_point = call.entry_point;
        o.fallback_subgraph = fallback;
        op.custom_options = EncodeDispatchOpOptions(o);
      }
      if (litert && options.mode == ApplyMode::kApply) {
        if (stamp.has_value()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "LiteRT's compiled-model format records one SoC manufacturer "
              "per model, and both ",
              stamp->soc_manufacturer, " and ", mv.vendor,
              " took ops; apply one LiteRT plugin at a time "
              "(--vendor)"));
        }
        stamp = LiteRtStamp{mv.vendor, mv.soc_model};
      }
      // The plugin's debug map in the model's numbering: its partition
      // names the subgraph, its module the buffer.
      for (const CompiledPartitions::DebugEntry& d : compiled.debug_map) {
        if (options.mode != ApplyMode::kApply || litert ||
            d.module_index >= mv.modules.size() ||
            static_cast<size_t>(d.partition_index) >= mine.size()) {
          continue;
        }
        const PartitionReport& pr =
            report.partitions[mine[d.partition_index]->report_index];
        mv.debug_map.push_back({mv.modules[d.module_index].buffer,
                                d.vendor_location, pr.source_subgraph,
                                d.original_op_index});
      }
      std::sort(
          mv.debug_map.begin(), mv.debug_map.end(),
          [](const ManifestDebugEntry& a, const ManifestDebugEntry& b) {
            return std::tie(a.buffer, a.vendor_location, a.subgraph, a.op) <
                   std::tie(b.buffer, b.vendor_location, b.subgraph, b.op);
          });
      manifest.vendors.push_back(std::move(mv));
    }
    if (options.mode == ApplyMode::kApply && !manifest.vendors.empty()) {
      for (const OpApplyReport& r : report.ops) {
        if (!r.taken_by.empty() || r.refusals.empty()) continue;
        if (manifest.refusals.size() == kMaxRefusals) break;
        manifest.refusals.push_back({r.subgraph, r.op, RefusalText(r)});
      }
      std::stable_sort(manifest.refusals.begin(), manifest.refusals.end(),
                       [](const ManifestRefusal& a, const ManifestRefusal& b) {
                         return std::tie(a.subgraph, a.op) <
                                std::tie(b.subgraph, b.op);
                       });
      manifest.op_origins = std::move(op_origins);
      WriteManifest(model, manifest);
    }
    if (options.mode == ApplyMode::kApply && stamp.has_value()) {
      GRAFT_RETURN_IF_ERROR(WriteLiteRtStamp(model, *stamp));
    }
    if (options.mode == ApplyMode::kApply && !options.cpu_fallback) {
      GRAFT_RETURN_IF_ERROR(DropFallbacks(model, first_outlined));
      for (PartitionReport& pr : report.partitions) pr.outlined_subgraph = -1;
    }
    watch.Lap(&report.phases.embed);
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return report;
}

std::string ApplyReport::Summary() const {
  std::string out;
  double pct = ops_total ? 100.0 * ops_taken / ops_total : 0;
  absl::StrAppendFormat(&out, "%d/%d ops taken (%.0f%%) in %d partition%s",
                        ops_taken, ops_total, pct, partitions.size(),
                        partitions.size() == 1 ? "" : "s");
  if (!modules.empty()) {
    absl::StrAppendFormat(&out, "; %d module%s, %s of bytecode", modules.size(),
                          modules.size() == 1 ? "" : "s",
                          HumanBytes(bytecode_bytes));
  }
  absl::StrAppendFormat(&out,
                        "; %.1f ms (partition %.1f, group %.1f, outline %.1f, "
                        "compile %.1f, embed %.1f)\n",
                        seconds * 1e3, phases.partition * 1e3,
                        phases.group * 1e3, phases.outline * 1e3,
                        phases.compile * 1e3, phases.embed * 1e3);
  if (!inlined_composites.empty()) {
    std::map<std::string, int> count;
    for (const std::string& name : inlined_composites) ++count[name];
    std::string names;
    for (const auto& [name, n] : count) {
      absl::StrAppend(&names, names.empty() ? "" : ", ", name,
                      n > 1 ? absl::StrCat(" x", n) : "");
    }
    absl::StrAppendFormat(&out,
                          "  inlined %d composite op%s no plugin took, so "
                          "their ops could be taken: %s\n",
                          inlined_composites.size(),
                          inlined_composites.size() == 1 ? "" : "s", names);
  }
  // Ops nobody took, grouped by (op name, reason) so a large model's report
  // stays short.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> why;
  for (const OpApplyReport& r : ops) {
    if (!r.taken_by.empty()) continue;
    for (const OpApplyReport::Refusal& f : r.refusals) {
      why[{r.name,
           absl::StrCat(f.vendor, ": ", PartitionReasonName(f.reason_code),
                        f.reason.empty() ? "" : ": ", f.reason)}]
          .push_back(absl::StrCat(r.subgraph, ":", r.op));
    }
  }
  for (const auto& [key, where] : why) {
    std::string sites;
    for (size_t i = 0; i < where.size() && i < 8; ++i) {
      absl::StrAppend(&sites, i ? " " : "", where[i]);
    }
    if (where.size() > 8) absl::StrAppend(&sites, " ...");
    absl::StrAppendFormat(&out, "  not taken: %-20s x%-3d %s  [ops %s]\n",
                          key.first, where.size(), key.second, sites);
  }
  return out;
}

}  // namespace graft
