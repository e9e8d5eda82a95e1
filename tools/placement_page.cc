#include "tools/placement_page.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graft::tools {
namespace {

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

std::string PlacementMapHtml(const PlacementMap& map,
                             const std::string& model_path) {
  std::vector<PlaceTotal> totals = PlaceTotals(map);
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
                      IdRanges(d.original_ops));
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

}  // namespace graft::tools
