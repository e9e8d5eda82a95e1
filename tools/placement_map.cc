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

// What a dispatch op of `model` names: its vendor, entry point and fallback
// subgraph (-1 when stripped). False for other ops.
struct DispatchInfo {
  std::string vendor, entry_point;
  int32_t fallback = -1;
  uint32_t module_buffer = 0;
};
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

// Each place's colour in the HTML page; vendors take the palette in order
// of first appearance.
std::string PlaceKey(const PlacedOp& op) {
  if (op.where == "vendor") return op.vendor;
  if (op.where == "cpu fallback") return "cpu fallback";
  if (op.where == "folded at load") return "folded at load";
  return "cpu";
}

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

struct PlaceTotal {
  std::string key;
  int64_t ops = 0;
  double ms = 0;
};

// Places in order of first appearance, with their op counts and time.
std::vector<PlaceTotal> Totals(const PlacementMap& map) {
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

// "0-4, 7, 9-12" for ascending ids.
std::string Ranges(const std::vector<int32_t>& ids) {
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
  for (const PlaceTotal& t : Totals(map)) {
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
        d.original_ops.size() == 1 ? "" : "s", Ranges(d.original_ops));
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

std::string PlaceClass(const PlacedOp& op) {
  if (op.where == "vendor") {
    std::string v = "v-";
    for (char c : op.vendor) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-';
      v += ok                       ? c
           : (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a')
                                    : '_';
    }
    return v;
  }
  if (op.where == "cpu fallback") return "cpu-fallback";
  if (op.where == "folded at load") return "folded";
  return "cpu";
}

namespace {

// Each place's colour: the CPU grey, a fallback red, vendors from a
// palette in order of first appearance.
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

std::string Us(double ms) { return absl::StrFormat("%.1f", ms * 1e3); }

// The outline of dispatch op `k`'s ops in the graph (partitions in turn).
const char* OutlineColour(size_t k) {
  static constexpr const char* kOutline[] = {"#1b1b1b", "#7a3b00", "#00507a",
                                             "#5a0a5a", "#2f5f2f"};
  return kOutline[k % (sizeof(kOutline) / sizeof(*kOutline))];
}

// The graph as inline SVG: layers top to bottom (an op one below the
// lowest of its inputs' producers), each layer's ops ordered by the mean
// position of their producers (fewer crossings), centred.
std::string GraphSvg(const PlacementMap& map) {
  const size_t n = std::min(map.ops.size(), kMaxGraphOps);
  constexpr int kW = 150, kH = 24, kStepX = 162, kStepY = 46, kPad = 10;
  std::map<int32_t, size_t> index;  // original op -> position in map.ops
  for (size_t i = 0; i < n; ++i) index[map.ops[i].op] = i;
  std::vector<int> layer(n, 0);
  int layers = n > 0 ? 1 : 0;
  for (size_t i = 0; i < n; ++i) {
    for (int32_t pred : map.ops[i].inputs_from) {
      auto it = index.find(pred);
      if (it != index.end() && it->second < i) {
        layer[i] = std::max(layer[i], layer[it->second] + 1);
      }
    }
    layers = std::max(layers, layer[i] + 1);
  }
  std::vector<std::vector<size_t>> by_layer(layers);
  for (size_t i = 0; i < n; ++i) by_layer[layer[i]].push_back(i);
  size_t widest = 1;
  for (const auto& l : by_layer) widest = std::max(widest, l.size());
  std::vector<double> x(n, 0), y(n, 0);
  for (int l = 0; l < layers; ++l) {
    std::vector<std::pair<double, size_t>> order;
    for (size_t i : by_layer[l]) {
      double sum = 0;
      int count = 0;
      for (int32_t pred : map.ops[i].inputs_from) {
        auto it = index.find(pred);
        if (it != index.end() && it->second < i) {
          sum += x[it->second];
          ++count;
        }
      }
      order.push_back({count > 0 ? sum / count : -1.0, i});
    }
    std::stable_sort(
        order.begin(), order.end(),
        [](const auto& a, const auto& b) { return a.first < b.first; });
    const double left =
        kPad + (static_cast<double>(widest) - order.size()) * kStepX / 2;
    for (size_t k = 0; k < order.size(); ++k) {
      x[order[k].second] = left + k * kStepX;
      y[order[k].second] = kPad + l * kStepY;
    }
  }
  std::map<int32_t, std::string> outline;
  for (size_t k = 0; k < map.dispatch_ops.size(); ++k) {
    outline[map.dispatch_ops[k].compiled_op] = OutlineColour(k);
  }
  const int width = static_cast<int>(widest) * kStepX + 2 * kPad;
  const int height = layers * kStepY + 2 * kPad;
  std::string svg = absl::StrFormat(
      "<svg id=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
      "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<g class=\"edges\">\n",
      width, height, width, height);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t pred : map.ops[i].inputs_from) {
      auto it = index.find(pred);
      if (it == index.end() || it->second >= i) continue;
      const size_t p = it->second;
      const double x1 = x[p] + kW / 2.0, y1 = y[p] + kH;
      const double x2 = x[i] + kW / 2.0, y2 = y[i];
      absl::StrAppendFormat(&svg,
                            "<path d=\"M%.0f %.0f C%.0f %.0f %.0f %.0f %.0f "
                            "%.0f\"/>\n",
                            x1, y1, x1, y1 + 18, x2, y2 - 18, x2, y2);
    }
  }
  svg += "</g>\n";
  for (size_t i = 0; i < n; ++i) {
    const PlacedOp& p = map.ops[i];
    const bool partitioned = p.group_size > 1 || !p.vendor.empty();
    std::string title = absl::StrCat("op ", p.op, " ", p.name);
    if (!p.output.empty()) absl::StrAppend(&title, " -> ", p.output);
    absl::StrAppend(&title, "\n", PlaceKey(p), ": op ", p.compiled_op, " ",
                    p.compiled_name);
    if (p.group_size > 1) absl::StrAppend(&title, " (", p.group_size, " ops)");
    if (p.ms_per_run >= 0) {
      absl::StrAppend(&title, "\n", Us(p.ms_per_run), " us/run",
                      p.vendor_measured ? " (vendor-measured)"
                      : p.attributed    ? " (attributed: even share)"
                                        : "");
    }
    if (!p.refusal.empty()) absl::StrAppend(&title, "\nnot taken: ", p.refusal);
    std::string label = absl::StrCat(p.op, " ", p.name);
    if (label.size() > 22) label = label.substr(0, 21) + "\u2026";
    const auto o = outline.find(p.compiled_op);
    absl::StrAppendFormat(
        &svg,
        "<g class=\"op place-%s%s\" data-op=\"%d\" data-where=\"%s\">"
        "<title>%s</title><rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" "
        "height=\"%d\" rx=\"4\"%s/><text x=\"%.0f\" y=\"%.0f\">%s</text></g>\n",
        PlaceClass(p), partitioned ? absl::StrCat(" part-", p.compiled_op) : "",
        p.op, HtmlEscape(PlaceKey(p)), HtmlEscape(title), x[i], y[i], kW, kH,
        partitioned && o != outline.end()
            ? absl::StrCat(" style=\"stroke:", o->second, ";stroke-width:2\"")
            : "",
        x[i] + 6, y[i] + 16, HtmlEscape(label));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace

std::string PlacementMapHtml(const PlacementMap& map,
                             const std::string& model_path) {
  std::vector<PlaceTotal> totals = Totals(map);
  std::map<std::string, std::string> colour = PlaceColours(totals);
  const bool timed = map.runs > 0;
  std::string css;
  for (const PlaceTotal& t : totals) {
    PlacedOp probe;
    probe.where =
        t.key == "cpu" || t.key == "cpu fallback" || t.key == "folded at load"
            ? t.key
            : "vendor";
    probe.vendor = t.key;
    const bool light = t.key == "cpu" || t.key == "folded at load";
    absl::StrAppend(&css, ".place-", PlaceClass(probe),
                    " rect{fill:", colour[t.key], "}\n.place-",
                    PlaceClass(probe), " text{fill:", light ? "#222" : "#fff",
                    "}\n");
  }
  std::string h = absl::StrCat(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>graft "
      "placement map: ",
      HtmlEscape(model_path),
      "</title>\n<style>\n"
      "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
      "table{border-collapse:collapse;font-size:13px}\n"
      "td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #eee}\n"
      "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
      // Converter tensor names run to hundreds of characters; cut them so
      // where each op ran stays on screen (the whole name is the title).
      "td.output{max-width:24em;overflow:hidden;text-overflow:ellipsis;"
      "white-space:nowrap}\n"
      "td.why{max-width:60em}\n"
      ".swatch{display:inline-block;width:12px;height:12px;margin-right:4px;"
      "vertical-align:middle}\n"
      ".bar{height:10px;min-width:1px}\n"
      ".attributed{font-style:italic;color:#666}\n"
      ".measured{font-weight:bold}\n"
      "#graph-box{overflow:auto;max-height:75vh;max-width:100%;"
      "border:1px solid #ddd;margin:0.5em 0}\n"
      "#graph .edges path{fill:none;stroke:#888;stroke-opacity:0.6}\n"
      "#graph rect{stroke:#999;stroke-width:0.5}\n",
      css, "</style></head><body>\n<h1>Placement map</h1>\n<p>",
      HtmlEscape(model_path), ", subgraph ", map.subgraph, " '",
      HtmlEscape(map.subgraph_name), "': ", map.ops.size(), " original ops.");
  if (timed) {
    absl::StrAppendFormat(
        &h,
        " Time per run over %d profiled runs (mean %.3f ms). Times in "
        "<span class=\"measured\">bold</span> are the vendor's own, measured "
        "per instruction and mapped to the op through the plugin's debug map "
        "(%d ops); times in <span class=\"attributed\">italics</span> are "
        "attributed: a vendor that reports one time per dispatch op has it "
        "split evenly among the ops it replaced (%d ops).",
        map.runs, map.run_ms, map.vendor_measured_ops, map.attributed_ops);
  } else {
    h += " Run with <code>--profile</code> for times.";
  }
  h += "</p>\n<table id=\"totals\"><tr><th>where</th><th>ops</th>";
  if (timed) h += "<th>us/run</th><th>share of time</th>";
  h += "</tr>\n";
  for (const PlaceTotal& t : totals) {
    absl::StrAppend(&h, "<tr><td><span class=\"swatch\" style=\"background:",
                    colour[t.key], "\"></span>", HtmlEscape(t.key),
                    "</td><td class=\"num\">", t.ops, "</td>");
    if (timed) {
      absl::StrAppendFormat(&h,
                            "<td class=\"num\">%s</td><td "
                            "class=\"num\">%.1f%%</td>",
                            Us(t.ms), 100 * t.ms / map.run_ms);
    }
    h += "</tr>\n";
  }
  if (timed) {
    absl::StrAppendFormat(
        &h,
        "<tr><th>run</th><th class=\"num\">%d</th><th class=\"num\">%s</th>"
        "<th class=\"num\">100%%</th></tr>\n",
        map.ops.size(), Us(map.run_ms));
  }
  h += "</table>\n<h2>Graph</h2>\n<p>Each box is an op of the model as "
       "<code>graft apply</code> was given it, filled with the colour of "
       "where it ran; the ops of one dispatch op (a partition) share an "
       "outline. Hover a box for its details.";
  if (map.ops.size() > kMaxGraphOps) {
    absl::StrAppendFormat(&h,
                          " The graph shows the first %d of the %d ops; the "
                          "table below has them all.",
                          kMaxGraphOps, map.ops.size());
  }
  h += "</p>\n<div id=\"graph-box\">\n" + GraphSvg(map) + "</div>\n";
  if (!map.dispatch_ops.empty()) {
    h += "<h2>Dispatch ops</h2>\n<p>Each with the outline its ops have in "
         "the graph.</p>\n<ul id=\"dispatch\">\n";
    for (size_t k = 0; k < map.dispatch_ops.size(); ++k) {
      const PlacedDispatchOp& d = map.dispatch_ops[k];
      absl::StrAppend(&h,
                      "<li><span class=\"swatch\" style=\"border:2px "
                      "solid ",
                      OutlineColour(k), "\"></span>op ", d.compiled_op, " ",
                      HtmlEscape(d.compiled_name), " (",
                      HtmlEscape(d.where == "vendor" ? d.vendor : d.where),
                      "): original op", d.original_ops.size() == 1 ? " " : "s ",
                      Ranges(d.original_ops));
      if (d.ms_per_run >= 0) {
        absl::StrAppend(&h, "; ", Us(d.ms_per_run), " us/run");
        if (d.vendor_measured_ms >= 0) {
          absl::StrAppend(&h, ", of which the vendor's events measure ",
                          Us(d.vendor_measured_ms));
        }
      }
      h += "</li>\n";
    }
    h += "</ul>\n";
  }
  // Refusal reasons of the ops that ran on the CPU.
  std::vector<const PlacedOp*> refused;
  for (const PlacedOp& p : map.ops) {
    if (!p.refusal.empty()) refused.push_back(&p);
  }
  h += "<h2>Not taken by any vendor</h2>\n";
  size_t untaken = 0;
  for (const PlacedOp& p : map.ops) {
    untaken += p.vendor.empty() && p.where != "call";
  }
  if (!refused.empty()) {
    h += "<table id=\"refusals\"><tr><th>op</th><th>name</th><th>why</th>"
         "</tr>\n";
    for (const PlacedOp* p : refused) {
      absl::StrAppend(&h, "<tr data-op=\"", p->op, "\"><td class=\"num\">",
                      p->op, "</td><td>", HtmlEscape(p->name),
                      "</td><td class=\"why\">", HtmlEscape(p->refusal),
                      "</td></tr>\n");
    }
    h += "</table>\n";
  } else if (map.origins != "manifest") {
    h += "<p id=\"refusals\">Not compiled by <code>graft apply</code>: "
         "the model runs as it is.</p>\n";
  } else if (untaken == 0) {
    h += "<p id=\"refusals\">None: a vendor took every op.</p>\n";
  } else {
    h += "<p id=\"refusals\">The model's manifest records no refusal "
         "reasons (compiled by a Graft before it recorded them).</p>\n";
  }
  h += "<h2>Ops</h2>\n<table id=\"ops\"><tr><th>op</th><th>name"
       "</th><th>output</th><th>where</th><th>ran as</th>";
  if (timed) h += "<th>us/run</th><th>share</th><th></th>";
  h += "</tr>\n";
  for (const PlacedOp& p : map.ops) {
    const std::string key = PlaceKey(p);
    absl::StrAppend(
        &h, "<tr data-where=\"", HtmlEscape(key), "\"><td class=\"num\">", p.op,
        "</td><td>", HtmlEscape(p.name),
        "</td><td class=\"output\" "
        "title=\"",
        HtmlEscape(p.output), "\">", HtmlEscape(p.output),
        "</td><td><span class=\"swatch\" "
        "style=\"background:",
        colour[key], "\"></span>", HtmlEscape(key), "</td><td>op ",
        p.compiled_op, " ", HtmlEscape(p.compiled_name),
        p.group_size > 1 ? absl::StrCat(" (", p.group_size, " ops)") : "",
        "</td>");
    if (timed) {
      if (p.ms_per_run >= 0) {
        const char* cls = p.attributed        ? " attributed"
                          : p.vendor_measured ? " measured"
                                              : "";
        absl::StrAppendFormat(
            &h,
            "<td class=\"num%s\">%.1f</td><td class=\"num%s\">%.1f%%</td>"
            "<td><div class=\"bar\" style=\"width:%.0fpx;background:%s\">"
            "</div></td>",
            cls, p.ms_per_run * 1e3, cls, 100 * p.share,
            std::max(1.0, 300 * p.share), colour[key]);
      } else {
        h += "<td></td><td></td><td></td>";
      }
    }
    h += "</tr>\n";
  }
  h += "</table>\n</body></html>\n";
  return h;
}

std::string ModelExplorerNodeData(const PlacementMap& map,
                                  const std::string& graph_id) {
  std::vector<PlaceTotal> totals = Totals(map);
  std::map<std::string, std::string> colour = PlaceColours(totals);
  const bool timed = map.runs > 0;
  JsonWriter j(2);
  j.BeginObject().Key(graph_id).BeginObject().Key("results").BeginObject();
  std::map<std::string, bool> seen;
  for (const PlacedOp& p : map.ops) {
    // Model Explorer matches a node by any of its output tensors' names.
    if (p.output.empty() || seen[p.output]) continue;
    seen[p.output] = true;
    const std::string key = PlaceKey(p);
    double value = 0;
    if (timed) {
      value = p.ms_per_run >= 0 ? p.ms_per_run * 1e3 : 0;
    } else {
      for (size_t k = 0; k < totals.size(); ++k) {
        if (totals[k].key == key) value = static_cast<double>(k);
      }
    }
    j.Key(p.output).BeginObject().Key("value").Double(value);
    j.Key("bgColor").String(colour[key]).EndObject();
  }
  j.EndObject();
  if (!timed) {
    // Without times, the value is the place's index: one threshold each,
    // so the legend reads the same colours.
    j.Key("thresholds").BeginArray();
    for (size_t k = 0; k < totals.size(); ++k) {
      j.BeginObject().Key("value").Int(static_cast<int64_t>(k));
      j.Key("bgColor").String(colour[totals[k].key]).EndObject();
    }
    j.EndArray();
  }
  j.EndObject().EndObject();
  return j.output();
}

std::string ChromeTraceJson(const Model& model, const RuntimeProfile& profile,
                            int32_t subgraph) {
  const SubgraphProfile* sp = nullptr;
  for (const SubgraphProfile& p : profile.subgraphs) {
    if (p.subgraph == subgraph) sp = &p;
  }
  // Debug maps by vendor, for naming the vendor's spans by model op.
  absl::StatusOr<Manifest> manifest = ReadManifest(model);
  struct Event {
    std::string name, cat;
    double ts = 0, dur = 0;
    int depth = 0;  // orders events of equal start: outer first
    std::vector<std::pair<std::string, std::string>> args;
  };
  std::vector<Event> events;
  int64_t t0 = 0;
  if (sp != nullptr && !sp->run_start_ns.empty()) t0 = sp->run_start_ns[0];
  auto us = [&](int64_t ns) { return static_cast<double>(ns - t0) / 1e3; };
  if (sp != nullptr) {
    for (size_t r = 0; r < sp->run_start_ns.size() && r < sp->run_ns.size();
         ++r) {
      events.push_back({absl::StrCat("run ", r),
                        "run",
                        us(sp->run_start_ns[r]),
                        sp->run_ns[r] / 1e3,
                        0,
                        {{"subgraph", absl::StrCat(subgraph)}}});
    }
    for (const OpProfile& o : sp->ops) {
      std::string module_vendor;
      uint32_t module_buffer = 0;
      if (o.subgraph >= 0 &&
          static_cast<size_t>(o.subgraph) < model.subgraphs.size() &&
          o.op_index >= 0 &&
          static_cast<size_t>(o.op_index) <
              model.subgraphs[o.subgraph].ops.size()) {
        DispatchInfo d;
        if (ReadDispatchInfo(model, model.subgraphs[o.subgraph].ops[o.op_index],
                             &d)) {
          module_vendor = d.vendor;
          module_buffer = d.module_buffer;
        }
      }
      const ManifestVendor* mv = manifest.ok() && !module_vendor.empty()
                                     ? manifest->Find(module_vendor)
                                     : nullptr;
      for (size_t c = 0; c < o.call_start_ns.size() && c < o.call_ns.size();
           ++c) {
        events.push_back({o.name,
                          WhereName(o.where),
                          us(o.call_start_ns[c]),
                          o.call_ns[c] / 1e3,
                          1 + o.depth,
                          {{"op", absl::StrCat(o.op_index)},
                           {"subgraph", absl::StrCat(o.subgraph)},
                           {"where", WhereName(o.where)}}});
      }
      for (const OpProfile::TracedSpan& s : o.vendor_spans) {
        if (s.call < 0 || static_cast<size_t>(s.call) >= o.call_ns.size()) {
          continue;
        }
        // Kept inside the host's span of the call, which contains the
        // vendor's work.
        const int64_t call_ns = o.call_ns[s.call];
        const int64_t start = std::min(s.start_ns, call_ns);
        const int64_t end = std::min(std::max(s.end_ns, start), call_ns);
        Event e{s.name,
                "vendor span",
                us(o.call_start_ns[s.call] + start),
                (end - start) / 1e3,
                100 + o.depth,
                {}};
        e.args.push_back({"vendor_location", absl::StrCat(s.vendor_location)});
        if (mv != nullptr) {
          std::string ops;
          for (const ManifestDebugEntry& d : mv->debug_map) {
            if (d.buffer == module_buffer &&
                d.vendor_location == s.vendor_location) {
              absl::StrAppend(&ops, ops.empty() ? "" : ",", d.op);
            }
          }
          if (!ops.empty()) e.args.push_back({"model_ops", ops});
        }
        events.push_back(std::move(e));
      }
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) {
                     if (a.ts != b.ts) return a.ts < b.ts;
                     return a.depth < b.depth;
                   });
  JsonWriter j(0);
  j.BeginObject().Key("displayTimeUnit").String("ms");
  j.Key("traceEvents").BeginArray();
  j.BeginObject().Key("name").String("process_name").Key("ph").String("M");
  j.Key("pid").Int(1).Key("tid").Int(1).Key("args").BeginObject();
  j.Key("name").String("graft run").EndObject().EndObject();
  for (const Event& e : events) {
    j.BeginObject().Key("name").String(e.name).Key("cat").String(e.cat);
    j.Key("ph").String("X").Key("ts").Double(e.ts).Key("dur").Double(e.dur);
    j.Key("pid").Int(1).Key("tid").Int(1).Key("args").BeginObject();
    for (const auto& [k, v] : e.args) j.Key(k).String(v);
    j.EndObject().EndObject();
  }
  j.EndArray().EndObject();
  return j.output();
}

}  // namespace graft::tools
