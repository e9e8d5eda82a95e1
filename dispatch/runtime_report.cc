#include "dispatch/runtime_report.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graft {
namespace {

template <typename Fn>
void VisitOps(const std::vector<SubgraphReport>& subgraphs, Fn&& fn) {
  for (const SubgraphReport& s : subgraphs) {
    for (const OpReport& op : s.ops) {
      fn(op);
      VisitOps(op.callee, fn);
    }
  }
}

std::string Bytes(size_t n) {
  if (n >= (size_t{1} << 20)) return absl::StrFormat("%.1f MiB", n / 1048576.0);
  if (n >= 1024) return absl::StrFormat("%.1f KiB", n / 1024.0);
  return absl::StrFormat("%d B", n);
}

void Append(const SubgraphReport& s, int indent, std::string* out) {
  std::string pad(indent, ' ');
  absl::StrAppendFormat(out, "%ssubgraph %d%s: %d ops, arena %s (%s without "
                        "reuse)\n",
                        pad, s.subgraph,
                        s.name.empty() ? "" : absl::StrCat(" '", s.name, "'"),
                        s.ops.size(), Bytes(s.arena_bytes),
                        Bytes(s.unshared_bytes));
  for (const OpReport& op : s.ops) {
    absl::StrAppendFormat(out, "%s  op %d %s: %s", pad, op.op_index,
                          op.op_name, WhereName(op.where));
    if (!op.detail.empty()) absl::StrAppend(out, " (", op.detail, ")");
    absl::StrAppend(out, "\n");
    for (const SubgraphReport& c : op.callee) Append(c, indent + 4, out);
  }
}

// "412 ns", "41.20 us", "4.12 ms", "1.23 s".
std::string Duration(int64_t ns) {
  if (ns < 1000) return absl::StrFormat("%d ns", ns);
  if (ns < 1000000) return absl::StrFormat("%.2f us", ns / 1e3);
  if (ns < 1000000000) return absl::StrFormat("%.2f ms", ns / 1e6);
  return absl::StrFormat("%.2f s", ns / 1e9);
}

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? absl::StrFormat("%.1f%%", 100.0 * part / whole) : "-";
}

bool IsCall(OpReport::Where where) {
  return where == OpReport::Where::kCall || where == OpReport::Where::kFallback;
}

void AppendProfile(const SubgraphProfile& s, std::string* out) {
  absl::StrAppendFormat(
      out, "profile of subgraph %d%s: %d run%s, median %s, total %s\n",
      s.subgraph, s.name.empty() ? "" : absl::StrCat(" '", s.name, "'"), s.runs,
      s.runs == 1 ? "" : "s", Duration(s.median_ns), Duration(s.total_ns));
  std::vector<const OpProfile*> ops;
  for (const OpProfile& op : s.ops) ops.push_back(&op);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpProfile* a, const OpProfile* b) {
                     return a->total_ns > b->total_ns;
                   });
  absl::StrAppendFormat(out, "  %-8s %-32s %-13s %7s %10s %10s %7s\n", "op",
                        "name", "where", "calls", "median", "total", "% run");
  for (const OpProfile* op : ops) {
    // Ops of called subgraphs are "sub-subgraph/op"; their time is also in
    // the calling op's.
    std::string index = op->depth == 0
                            ? absl::StrCat(op->op_index)
                            : absl::StrCat(op->subgraph, "/", op->op_index);
    absl::StrAppendFormat(out, "  %-8s %-32s %-13s %7d %10s %10s %7s", index,
                          op->name, WhereName(op->where), op->calls,
                          Duration(op->median_ns), Duration(op->total_ns),
                          Percent(op->total_ns, s.total_ns));
    if (op->vendor_total_ns >= 0) {
      absl::StrAppendFormat(
          out, "  vendor %s, host overhead %s per call",
          Duration(op->vendor_median_ns),
          Duration(op->calls > 0
                       ? (op->total_ns - op->vendor_total_ns) / op->calls
                       : 0));
    }
    absl::StrAppend(out, "\n");
  }
  absl::StrAppend(out, "  by op type:\n");
  absl::StrAppendFormat(out, "  %-41s %-13s %7s %10s %7s\n", "type", "where",
                        "ops", "total", "% run");
  for (const OpTypeProfile& t : RuntimeProfile::ByType(s)) {
    absl::StrAppendFormat(out, "  %-41s %-13s %7d %10s %7s", t.type,
                          WhereName(t.where), t.ops, Duration(t.total_ns),
                          Percent(t.total_ns, s.total_ns));
    if (t.vendor_total_ns >= 0) {
      absl::StrAppend(out, "  vendor ", Duration(t.vendor_total_ns));
    }
    absl::StrAppend(out, "\n");
  }
}

}  // namespace

const char* WhereName(OpReport::Where where) {
  switch (where) {
    case OpReport::Where::kCpu: return "cpu";
    case OpReport::Where::kFolded: return "folded at load";
    case OpReport::Where::kVendor: return "vendor";
    case OpReport::Where::kCall: return "cpu call";
    case OpReport::Where::kFallback: return "cpu fallback";
    case OpReport::Where::kMissing: return "no kernel";
  }
  return "?";
}

int RuntimeReport::CountOps(OpReport::Where where) const {
  int n = 0;
  VisitOps(subgraphs, [&](const OpReport& op) { n += op.where == where; });
  return n;
}

int64_t RuntimeReport::MaxReductionLength() const {
  int64_t k = 0;
  VisitOps(subgraphs,
           [&](const OpReport& op) { k = std::max(k, op.reduction_length); });
  return k;
}

std::string RuntimeReport::ToString() const {
  std::string out;
  for (const std::string& w : warnings) {
    out += "warning: ";
    out += w;
    out += "\n";
  }
  for (const SubgraphReport& s : subgraphs) Append(s, 0, &out);
  return out;
}

std::vector<OpTypeProfile> RuntimeProfile::ByType(const SubgraphProfile& s) {
  std::map<std::pair<std::string, OpReport::Where>, OpTypeProfile> types;
  for (const OpProfile& op : s.ops) {
    if (IsCall(op.where)) continue;
    const std::string& type =
        op.where == OpReport::Where::kVendor ? op.detail : op.name;
    OpTypeProfile& t = types[{type, op.where}];
    t.type = type;
    t.where = op.where;
    t.ops += 1;
    t.calls += op.calls;
    t.total_ns += op.total_ns;
    if (op.vendor_total_ns >= 0) {
      t.vendor_total_ns =
          std::max<int64_t>(t.vendor_total_ns, 0) + op.vendor_total_ns;
    }
  }
  std::vector<OpTypeProfile> out;
  for (auto& [key, t] : types) out.push_back(std::move(t));
  std::stable_sort(out.begin(), out.end(),
                   [](const OpTypeProfile& a, const OpTypeProfile& b) {
                     return a.total_ns > b.total_ns;
                   });
  return out;
}

std::string RuntimeProfile::ToString() const {
  std::string out;
  for (const SubgraphProfile& s : subgraphs) AppendProfile(s, &out);
  return out;
}

}  // namespace graft
