#include "dispatch/runtime_report.h"

#include <algorithm>
#include <string>

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
  for (const SubgraphReport& s : subgraphs) Append(s, 0, &out);
  return out;
}

}  // namespace graft
