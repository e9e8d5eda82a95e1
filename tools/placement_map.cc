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
};
bool ReadDispatchInfo(const Model& model, const tfl::OperatorT& op,
                      DispatchInfo* out) {
  if (IsDispatchOp(model, op)) {
    absl::StatusOr<DispatchOpOptions> o =
        DecodeDispatchOpOptions(op.custom_options);
    if (o.ok()) *out = {o->vendor, o->entry_point, o->fallback_subgraph};
    return true;
  }
  if (IsLiteRtDispatchOp(model, op)) {
    absl::StatusOr<LiteRtDispatchOpOptions> o =
        DecodeLiteRtDispatchOpOptions(op.custom_options);
    absl::StatusOr<LiteRtStamp> stamp = ReadLiteRtStamp(model);
    if (o.ok()) {
      *out = {stamp.ok() ? stamp->soc_manufacturer : "", o->name,
              o->fallback_subgraph};
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
      if (own >= 0) {
        p.ms_per_run = own;
      } else if (op_ms >= 0) {
        p.ms_per_run = op_ms / static_cast<double>(from.size());
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
        "  time per run over %d profiled runs (mean %.3f ms); '~': a "
        "vendor's time for its dispatch op split evenly among the ops it "
        "replaced, not measured per op\n",
        map.runs, map.run_ms);
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
      const char* mark = p.attributed ? "~" : " ";
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
        &out, "  op %d %s (%s) replaced op%s %s\n", d.compiled_op,
        d.compiled_name, d.where == "vendor" ? d.vendor : d.where,
        d.original_ops.size() == 1 ? "" : "s", Ranges(d.original_ops));
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
  j.Key("time_attribution").String("even");
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
    j.Key("attributed").Bool(p.attributed).EndObject();
  }
  j.EndArray().Key("dispatch_ops").BeginArray();
  for (const PlacedDispatchOp& d : map.dispatch_ops) {
    j.BeginObject().Key("compiled_op").Int(d.compiled_op);
    j.Key("compiled_name").String(d.compiled_name);
    j.Key("where").String(d.where).Key("vendor").String(d.vendor);
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

std::string PlacementMapHtml(const PlacementMap& map,
                             const std::string& model_path) {
  // Fixed colours: the CPU grey, a fallback red, vendors from a palette.
  static constexpr const char* kPalette[] = {"#4e79a7", "#59a14f", "#b07aa1",
                                             "#f28e2b", "#76b7b2", "#edc948"};
  std::vector<PlaceTotal> totals = Totals(map);
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
  const bool timed = map.runs > 0;
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
      ".swatch{display:inline-block;width:12px;height:12px;margin-right:4px;"
      "vertical-align:middle}\n"
      ".bar{height:10px;min-width:1px}\n"
      ".attributed{font-style:italic;color:#666}\n"
      "</style></head><body>\n<h1>Placement map</h1>\n<p>",
      HtmlEscape(model_path), ", subgraph ", map.subgraph, " '",
      HtmlEscape(map.subgraph_name), "': ", map.ops.size(), " original ops.");
  if (timed) {
    absl::StrAppendFormat(
        &h,
        " Time per run over %d profiled runs (mean %.3f ms). Times in "
        "<span class=\"attributed\">italics</span> are attributed: a "
        "vendor reports one time per dispatch op, split evenly among the ops "
        "it replaced.",
        map.runs, map.run_ms);
  } else {
    h += " Run with <code>--profile</code> for times.";
  }
  h += "</p>\n<table id=\"totals\"><tr><th>where</th><th>ops</th>";
  if (timed) h += "<th>share of time</th>";
  h += "</tr>\n";
  for (const PlaceTotal& t : totals) {
    absl::StrAppend(&h, "<tr><td><span class=\"swatch\" style=\"background:",
                    colour[t.key], "\"></span>", HtmlEscape(t.key),
                    "</td><td class=\"num\">", t.ops, "</td>");
    if (timed) {
      absl::StrAppendFormat(&h, "<td class=\"num\">%.1f%%</td>",
                            100 * t.ms / map.run_ms);
    }
    h += "</tr>\n";
  }
  h += "</table>\n<h2>Ops</h2>\n<table id=\"ops\"><tr><th>op</th><th>name"
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
        const char* cls = p.attributed ? " attributed" : "";
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
  h += "</table>\n";
  if (!map.dispatch_ops.empty()) {
    h += "<h2>Dispatch ops</h2>\n<ul id=\"dispatch\">\n";
    for (const PlacedDispatchOp& d : map.dispatch_ops) {
      absl::StrAppend(&h, "<li>op ", d.compiled_op, " ",
                      HtmlEscape(d.compiled_name), " (",
                      HtmlEscape(d.where == "vendor" ? d.vendor : d.where),
                      "): original op", d.original_ops.size() == 1 ? " " : "s ",
                      Ranges(d.original_ops), "</li>\n");
    }
    h += "</ul>\n";
  }
  h += "</body></html>\n";
  return h;
}

}  // namespace graft::tools
