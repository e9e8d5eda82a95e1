#include "tools/chrome_trace.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compiled_format.h"
#include "tools/json_writer.h"
#include "tools/placement_map.h"

namespace graft::tools {

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
