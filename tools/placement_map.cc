#include "tools/placement_map.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/compiled_format.h"
#include "core/litert_format.h"

namespace graft::tools {
namespace {

std::string FirstOutputName(const Subgraph& sg, const tfl::OperatorT& op) {
  for (TensorId t : op.outputs) {
    if (t >= 0 && static_cast<size_t>(t) < sg.tensors.size()) {
      return sg.tensors[t].name;
    }
  }
  return "";
}

// One original op's tensors for the graph's edges, as keys that are the
// same wherever the value is seen: a tensor of the entry subgraph, or of a
// fallback subgraph (whose inputs and outputs are its dispatch op's).
struct OriginalIo {
  int32_t op = 0;
  std::vector<int64_t> in, out;
};
int64_t TensorKey(int32_t subgraph, int32_t tensor) {
  return (static_cast<int64_t>(subgraph) << 32) | static_cast<uint32_t>(tensor);
}

// The OriginalIo of the ops compiled op `op` (of entry subgraph `s`)
// stands for, `from` their original indices.
void AppendOriginalIo(const Model& model, int32_t s, int32_t compiled_op,
                      const tfl::OperatorT& op, const DispatchInfo* d,
                      const std::vector<int32_t>& from,
                      std::vector<OriginalIo>* out) {
  auto keys = [&](const std::vector<int32_t>& ts) {
    std::vector<int64_t> k;
    for (int32_t t : ts) {
      if (t >= 0) k.push_back(TensorKey(s, t));
    }
    return k;
  };
  const bool fallback =
      d != nullptr && d->fallback >= 0 &&
      static_cast<size_t>(d->fallback) < model.subgraphs.size() &&
      model.subgraphs[d->fallback].ops.size() == from.size();
  if (d == nullptr || (!fallback && from.size() <= 1)) {
    for (int32_t o : from)
      out->push_back({o, keys(op.inputs), keys(op.outputs)});
    return;
  }
  if (fallback) {
    const Subgraph& f = model.subgraphs[d->fallback];
    auto key = [&](int32_t t) -> int64_t {
      for (size_t j = 0; j < f.inputs.size() && j < op.inputs.size(); ++j) {
        if (f.inputs[j] == t)
          return op.inputs[j] >= 0 ? TensorKey(s, op.inputs[j]) : -1;
      }
      for (size_t j = 0; j < f.outputs.size() && j < op.outputs.size(); ++j) {
        if (f.outputs[j] == t) return TensorKey(s, op.outputs[j]);
      }
      return TensorKey(d->fallback, t);
    };
    for (size_t k = 0; k < from.size(); ++k) {
      OriginalIo io{from[k], {}, {}};
      for (int32_t t : f.ops[k].inputs) {
        if (t >= 0 && key(t) >= 0) io.in.push_back(key(t));
      }
      for (int32_t t : f.ops[k].outputs) {
        if (t >= 0) io.out.push_back(key(t));
      }
      out->push_back(std::move(io));
    }
    return;
  }
  // Stripped: the ops' own tensors are gone; a chain from the dispatch op's
  // inputs to its outputs.
  for (size_t k = 0; k < from.size(); ++k) {
    const int64_t link = (int64_t{1} << 62) |
                         (static_cast<int64_t>(compiled_op) << 20) |
                         static_cast<int64_t>(k);
    OriginalIo io{from[k], {}, {}};
    io.in = k == 0 ? keys(op.inputs) : std::vector<int64_t>{link - 1};
    io.out =
        k + 1 == from.size() ? keys(op.outputs) : std::vector<int64_t>{link};
    out->push_back(std::move(io));
  }
}

}  // namespace

bool ReadDispatchInfo(const Model& model, const tfl::OperatorT& op,
                      DispatchInfo* out) {
  if (IsDispatchOp(model, op)) {
    absl::StatusOr<DispatchOpOptions> o =
        DecodeDispatchOpOptions(op.custom_options);
    if (o.ok()) {
      *out = {o->vendor, o->entry_point, o->fallback_subgraph,
              o->module_buffer};
    }
    return true;
  }
  if (IsLiteRtDispatchOp(model, op)) {
    absl::StatusOr<LiteRtDispatchOpOptions> o =
        DecodeLiteRtDispatchOpOptions(op.custom_options);
    absl::StatusOr<LiteRtStamp> stamp = ReadLiteRtStamp(model);
    if (o.ok()) {
      *out = {stamp.ok() ? stamp->soc_manufacturer : "", o->name,
              o->fallback_subgraph, 0};
    }
    return true;
  }
  return false;
}

std::string PlaceKey(const PlacedOp& op) {
  if (op.where == "vendor") return op.vendor;
  if (op.where == "cpu fallback") return "cpu fallback";
  if (op.where == "folded at load") return "folded at load";
  return "cpu";
}

std::vector<PlaceTotal> PlaceTotals(const PlacementMap& map) {
  std::vector<PlaceTotal> totals;
  for (const PlacedOp& op : map.ops) {
    const std::string key = PlaceKey(op);
    auto it = std::find_if(totals.begin(), totals.end(),
                           [&](const PlaceTotal& t) { return t.key == key; });
    if (it == totals.end()) {
      totals.push_back({key});
      it = totals.end() - 1;
    }
    ++it->ops;
    if (op.ms_per_run > 0) it->ms += op.ms_per_run;
  }
  return totals;
}

std::map<std::string, std::string> PlaceColours(
    const std::vector<PlaceTotal>& totals) {
  static constexpr const char* kPalette[] = {"#4e79a7", "#59a14f", "#b07aa1",
                                             "#f28e2b", "#76b7b2", "#edc948"};
  std::map<std::string, std::string> colour;
  size_t next = 0;
  for (const PlaceTotal& t : totals) {
    if (t.key == "cpu") {
      colour[t.key] = "#bab0ac";
    } else if (t.key == "cpu fallback") {
      colour[t.key] = "#e15759";
    } else if (t.key == "folded at load") {
      colour[t.key] = "#e8e8e8";
    } else {
      colour[t.key] = kPalette[next++ % (sizeof(kPalette) / sizeof(*kPalette))];
    }
  }
  return colour;
}

std::string IdRanges(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    absl::StrAppend(&out, ids[i]);
    if (j > i) absl::StrAppend(&out, "-", ids[j]);
    i = j + 1;
  }
  return out;
}

absl::StatusOr<PlacementMap> BuildPlacementMap(const Model& model,
                                               const RuntimeReport& report,
                                               const RuntimeProfile* profile,
                                               int32_t subgraph) {
  const SubgraphReport* sr = nullptr;
  for (const SubgraphReport& r : report.subgraphs) {
    if (r.subgraph == subgraph) sr = &r;
  }
  if (sr == nullptr || subgraph < 0 ||
      static_cast<size_t>(subgraph) >= model.subgraphs.size()) {
    return absl::NotFoundError(
        absl::StrCat("subgraph ", subgraph, " is not an entry subgraph"));
  }
  const Subgraph& sg = model.subgraphs[subgraph];
  PlacementMap map;
  map.subgraph = subgraph;
  map.subgraph_name = sr->name;

  absl::StatusOr<Manifest> manifest = ReadManifest(model);
  const ManifestOpOrigins* origins =
      manifest.ok() ? manifest->FindOpOrigins(subgraph) : nullptr;
  bool has_dispatch = false;
  for (const tfl::OperatorT& op : sg.ops) {
    DispatchInfo unused;
    has_dispatch |= ReadDispatchInfo(model, op, &unused);
  }
  if (origins != nullptr) {
    if (origins->ops.size() != sg.ops.size()) {
      return absl::DataLossError(absl::StrFormat(
          "the manifest records the origins of %d ops of subgraph %d, which "
          "has %d",
          origins->ops.size(), subgraph, sg.ops.size()));
    }
    map.origins = "manifest";
  } else if (has_dispatch) {
    return absl::FailedPreconditionError(absl::StrCat(
        "subgraph ", subgraph,
        " has dispatch ops but the model does not record which of the "
        "original ops they replaced (compiled by LiteRT's tools or by a "
        "Graft before op origins were recorded); recompile it with graft "
        "apply for a placement map"));
  } else {
    map.origins = "identity";
  }

  std::map<int32_t, std::string> refusals;
  if (manifest.ok()) {
    for (const ManifestRefusal& r : manifest->refusals) {
      if (r.subgraph == subgraph) refusals[r.op] = r.reason;
    }
    map.has_refusals = !manifest->refusals.empty();
  }
  std::vector<OriginalIo> original_io;

  // The profile's rows by (subgraph, op index): the entry subgraph's ops
  // and those of the subgraphs they call (fallbacks).
  std::map<std::pair<int32_t, int32_t>, const OpProfile*> rows;
  if (profile != nullptr) {
    for (const SubgraphProfile& p : profile->subgraphs) {
      if (p.subgraph != subgraph || p.runs == 0) continue;
      map.runs = p.runs;
      map.run_ms = p.total_ns / 1e6 / p.runs;
      for (const OpProfile& o : p.ops) rows[{o.subgraph, o.op_index}] = &o;
    }
  }
  auto ms_of = [&](int32_t s, int32_t op) -> double {
    auto it = rows.find({s, op});
    if (it == rows.end() || map.runs == 0) return -1;
    return it->second->total_ns / 1e6 / map.runs;
  };

  for (const OpReport& r : sr->ops) {
    const int32_t i = r.op_index;
    if (i < 0 || static_cast<size_t>(i) >= sg.ops.size()) continue;
    const tfl::OperatorT& op = sg.ops[i];
    std::vector<int32_t> from =
        origins != nullptr ? origins->ops[i] : std::vector<int32_t>{i};
    DispatchInfo d;
    const bool dispatch = ReadDispatchInfo(model, op, &d);
    const double op_ms = ms_of(subgraph, i);
    AppendOriginalIo(model, subgraph, i, op, dispatch ? &d : nullptr, from,
                     &original_io);
    if (!dispatch || from.size() <= 1) {
      PlacedOp p;
      p.op = from.empty() ? i : from[0];
      p.name = r.op_name;
      p.output = FirstOutputName(sg, op);
      p.where = WhereName(r.where);
      p.compiled_op = i;
      p.compiled_name = r.op_name;
      if (dispatch) {
        p.vendor = d.vendor;
        p.compiled_name = absl::StrCat(d.vendor, ":", d.entry_point);
        map.dispatch_ops.push_back(
            {i, p.compiled_name, p.where, d.vendor, {p.op}});
        const bool fb =
            d.fallback >= 0 &&
            static_cast<size_t>(d.fallback) < model.subgraphs.size() &&
            !model.subgraphs[d.fallback].ops.empty();
        if (fb) {
          const Subgraph& f = model.subgraphs[d.fallback];
          p.name = OpName(model, f.ops[0]);
          p.output = FirstOutputName(f, f.ops[0]);
        }
      }
      p.ms_per_run = op_ms;
      if (op_ms >= 0 && map.run_ms > 0) p.share = op_ms / map.run_ms;
      map.ops.push_back(std::move(p));
      continue;
    }
    // A dispatch op standing for several original ops: its fallback
    // subgraph holds them, in the order `from` lists them.
    const bool have_fallback =
        d.fallback >= 0 &&
        static_cast<size_t>(d.fallback) < model.subgraphs.size() &&
        model.subgraphs[d.fallback].ops.size() == from.size();
    map.dispatch_ops.push_back({i, absl::StrCat(d.vendor, ":", d.entry_point),
                                WhereName(r.where), d.vendor, from});
    map.dispatch_ops.back().ms_per_run = op_ms;
    // The vendor's time per instruction, through the plugin's debug map to
    // the original ops (ns over all profiled runs).
    std::map<int32_t, double> measured_ns;
    const ManifestVendor* mv =
        manifest.ok() ? manifest->Find(d.vendor) : nullptr;
    auto row = rows.find({subgraph, i});
    if (r.where == OpReport::Where::kVendor && mv != nullptr &&
        !mv->debug_map.empty() && row != rows.end()) {
      for (const OpProfile::VendorLocation& l : row->second->vendor_locations) {
        if (l.vendor_location == 0) continue;  // no single instruction
        auto lo = std::lower_bound(
            mv->debug_map.begin(), mv->debug_map.end(),
            std::make_pair(d.module_buffer, l.vendor_location),
            [](const ManifestDebugEntry& e,
               const std::pair<uint32_t, uint64_t>& k) {
              return std::make_pair(e.buffer, e.vendor_location) < k;
            });
        std::vector<int32_t> ops;
        for (auto it = lo;
             it != mv->debug_map.end() && it->buffer == d.module_buffer &&
             it->vendor_location == l.vendor_location;
             ++it) {
          if (it->subgraph == subgraph &&
              std::binary_search(from.begin(), from.end(), it->op)) {
            ops.push_back(it->op);
          }
        }
        for (int32_t o : ops) {
          measured_ns[o] += static_cast<double>(l.total_ns) / ops.size();
        }
      }
    }
    double measured_ms = 0;
    for (const auto& [o, ns] : measured_ns) measured_ms += ns / 1e6 / map.runs;
    if (!measured_ns.empty()) {
      map.dispatch_ops.back().vendor_measured_ms = measured_ms;
    }
    const size_t unmeasured = from.size() - measured_ns.size();
    for (size_t k = 0; k < from.size(); ++k) {
      PlacedOp p;
      p.op = from[k];
      if (have_fallback) {
        const Subgraph& f = model.subgraphs[d.fallback];
        p.name = OpName(model, f.ops[k]);
        p.output = FirstOutputName(f, f.ops[k]);
      } else {
        p.name = "?";
      }
      p.where = WhereName(r.where);
      p.vendor = d.vendor;
      p.compiled_op = i;
      p.compiled_name = absl::StrCat(d.vendor, ":", d.entry_point);
      p.group_size = static_cast<int32_t>(from.size());
      const double own = r.where == OpReport::Where::kFallback && have_fallback
                             ? ms_of(d.fallback, static_cast<int32_t>(k))
                             : -1;
      auto m = measured_ns.find(from[k]);
      if (own >= 0) {
        p.ms_per_run = own;
      } else if (m != measured_ns.end()) {
        p.ms_per_run = m->second / 1e6 / map.runs;
        p.vendor_measured = true;
      } else if (op_ms >= 0 && measured_ns.empty()) {
        p.ms_per_run = op_ms / static_cast<double>(from.size());
        p.attributed = true;
      } else if (op_ms >= 0) {
        // The vendor named other ops' instructions but none of this one's:
        // an even share of what its events leave of the op's time.
        p.ms_per_run = std::max(0.0, op_ms - measured_ms) /
                       static_cast<double>(unmeasured);
        p.attributed = true;
      }
      if (p.ms_per_run >= 0 && map.run_ms > 0) {
        p.share = p.ms_per_run / map.run_ms;
      }
      map.ops.push_back(std::move(p));
    }
  }
  std::stable_sort(
      map.ops.begin(), map.ops.end(),
      [](const PlacedOp& a, const PlacedOp& b) { return a.op < b.op; });
  // Edges: each op's inputs' producers, in execution order.
  std::map<int64_t, int32_t> producer;
  std::map<int32_t, std::vector<int32_t>> inputs_from;
  for (const OriginalIo& io : original_io) {
    std::vector<int32_t>& preds = inputs_from[io.op];
    for (int64_t k : io.in) {
      auto it = producer.find(k);
      if (it != producer.end() && it->second != io.op)
        preds.push_back(it->second);
    }
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (int64_t k : io.out) producer[k] = io.op;
  }
  for (PlacedOp& p : map.ops) {
    if (auto it = inputs_from.find(p.op); it != inputs_from.end()) {
      p.inputs_from = it->second;
    }
    if (p.where != "vendor") {
      if (auto it = refusals.find(p.op); it != refusals.end()) {
        p.refusal = it->second;
      }
    }
    map.vendor_measured_ops += p.vendor_measured;
    map.attributed_ops += p.attributed;
  }
  return map;
}

std::string PlacementMapText(const PlacementMap& map) {
  std::string out = absl::StrFormat(
      "placement map of subgraph %d '%s': %d original op%s (%s)\n",
      map.subgraph, map.subgraph_name, map.ops.size(),
      map.ops.size() == 1 ? "" : "s",
      map.origins == "manifest"
          ? "indices of the model graft apply was given, from the manifest"
          : "the model as it is; nothing compiled");
  const bool timed = map.runs > 0;
  if (timed) {
    absl::StrAppendFormat(
        &out,
        "  time per run over %d profiled runs (mean %.3f ms); '=': the "
        "vendor's own time, measured per instruction and mapped to the op "
        "through the plugin's debug map (%d ops); '~': a vendor's time for "
        "its dispatch op split evenly among the ops it replaced, not "
        "measured per op (%d ops)\n",
        map.runs, map.run_ms, map.vendor_measured_ops, map.attributed_ops);
  }
  absl::StrAppendFormat(&out, "  %5s  %-24s %-32s %-14s %-28s", "op", "name",
                        "output", "where", "ran as");
  if (timed) absl::StrAppendFormat(&out, " %11s %7s", "us/run", "share");
  out += "\n";
  for (const PlacedOp& p : map.ops) {
    std::string where = p.where == "vendor"         ? p.vendor
                        : p.where == "cpu fallback" ? "cpu fallback"
                                                    : p.where;
    std::string ran_as =
        p.group_size > 1
            ? absl::StrFormat("op %d %s (%d ops)", p.compiled_op,
                              p.compiled_name, p.group_size)
            : absl::StrFormat("op %d %s", p.compiled_op, p.compiled_name);
    std::string output = p.output;
    if (output.size() > 32) output = "..." + output.substr(output.size() - 29);
    absl::StrAppendFormat(&out, "  %5d  %-24s %-32s %-14s %-28s", p.op, p.name,
                          output, where, ran_as);
    if (timed && p.ms_per_run >= 0) {
      const char* mark = p.attributed ? "~" : p.vendor_measured ? "=" : " ";
      absl::StrAppendFormat(&out, " %s%10.1f %s%5.1f%%", mark,
                            p.ms_per_run * 1e3, mark, 100 * p.share);
    }
    out += "\n";
  }
  out += "  by place:";
  for (const PlaceTotal& t : PlaceTotals(map)) {
    absl::StrAppendFormat(&out, "  %s %d op%s", t.key, t.ops,
                          t.ops == 1 ? "" : "s");
    if (timed && map.run_ms > 0) {
      absl::StrAppendFormat(&out, " %.1f%%", 100 * t.ms / map.run_ms);
    }
    out += ";";
  }
  out.back() = '\n';
  for (const PlacedDispatchOp& d : map.dispatch_ops) {
    absl::StrAppendFormat(
        &out, "  op %d %s (%s) replaced op%s %s", d.compiled_op,
        d.compiled_name, d.where == "vendor" ? d.vendor : d.where,
        d.original_ops.size() == 1 ? "" : "s", IdRanges(d.original_ops));
    if (d.vendor_measured_ms >= 0 && d.ms_per_run >= 0) {
      absl::StrAppendFormat(
          &out, "; %.1f us/run, of which the vendor's events measure %.1f",
          d.ms_per_run * 1e3, d.vendor_measured_ms * 1e3);
    }
    out += "\n";
  }
  return out;
}

void PlacementMapJson(const PlacementMap& map, JsonWriter& j) {
  j.BeginObject().Key("subgraph").Int(map.subgraph);
  j.Key("name").String(map.subgraph_name);
  j.Key("origins").String(map.origins);
  j.Key("runs").Int(map.runs);
  if (map.run_ms >= 0) {
    j.Key("run_ms").Double(map.run_ms);
  } else {
    j.Key("run_ms").Null();
  }
  j.Key("time_attribution")
      .String(map.vendor_measured_ops > 0 ? "vendor_events" : "even");
  j.Key("ops").BeginArray();
  for (const PlacedOp& p : map.ops) {
    j.BeginObject().Key("op").Int(p.op).Key("name").String(p.name);
    j.Key("output").String(p.output).Key("where").String(p.where);
    j.Key("vendor").String(p.vendor);
    j.Key("compiled_op").Int(p.compiled_op);
    j.Key("compiled_name").String(p.compiled_name);
    j.Key("group_size").Int(p.group_size);
    if (p.ms_per_run >= 0) {
      j.Key("ms_per_run").Double(p.ms_per_run).Key("share").Double(p.share);
    } else {
      j.Key("ms_per_run").Null().Key("share").Null();
    }
    j.Key("attributed").Bool(p.attributed);
    if (p.ms_per_run < 0) {
      j.Key("time_source").Null();
    } else {
      j.Key("time_source")
          .String(p.vendor_measured ? "vendor"
                  : p.attributed    ? "attributed"
                                    : "host");
    }
    j.Key("refusal").String(p.refusal);
    j.Key("inputs_from").BeginArray();
    for (int32_t o : p.inputs_from) j.Int(o);
    j.EndArray().EndObject();
  }
  j.EndArray().Key("dispatch_ops").BeginArray();
  for (const PlacedDispatchOp& d : map.dispatch_ops) {
    j.BeginObject().Key("compiled_op").Int(d.compiled_op);
    j.Key("compiled_name").String(d.compiled_name);
    j.Key("where").String(d.where).Key("vendor").String(d.vendor);
    if (d.ms_per_run >= 0) {
      j.Key("ms_per_run").Double(d.ms_per_run);
    } else {
      j.Key("ms_per_run").Null();
    }
    if (d.vendor_measured_ms >= 0) {
      j.Key("vendor_measured_ms").Double(d.vendor_measured_ms);
    } else {
      j.Key("vendor_measured_ms").Null();
    }
    j.Key("original_ops").BeginArray();
    for (int32_t op : d.original_ops) {
      auto it = std::find_if(map.ops.begin(), map.ops.end(),
                             [&](const PlacedOp& p) { return p.op == op; });
      j.BeginObject().Key("op").Int(op);
      j.Key("name").String(it == map.ops.end() ? "" : it->name).EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray().EndObject();
}

}  // namespace graft::tools
