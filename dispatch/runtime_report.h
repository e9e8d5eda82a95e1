// RuntimeReport: what a loaded model runs where, and what memory it takes.
#ifndef GRAFT_DISPATCH_RUNTIME_REPORT_H_
#define GRAFT_DISPATCH_RUNTIME_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graft {

struct SubgraphReport;

struct OpReport {
  enum class Where {
    kCpu,       // a CPU kernel
    kFolded,    // computed once at load (all inputs constant)
    kVendor,    // a vendor's dispatch backend
    kCall,      // a called subgraph on CPU (composite decomposition)
    kFallback,  // a dispatch op's fallback subgraph on CPU
    kMissing,   // no kernel (only in reports of failed loads)
  };
  int32_t op_index = 0;
  std::string op_name;  // "CONV_2D", "CUSTOM:GRAFT_DISPATCH"
  Where where = Where::kCpu;
  // Kernel name ("Conv2D"), vendor name, or why it fell back.
  std::string detail;
  // Longest dot product / reduction of one output element (kernel.h).
  int64_t reduction_length = 0;
  // The called subgraph (kCall, kFallback); empty otherwise.
  std::vector<SubgraphReport> callee;
};

struct SubgraphReport {
  int32_t subgraph = 0;
  std::string name;
  std::vector<OpReport> ops;
  // The planned arena, and what one buffer per tensor would take.
  size_t arena_bytes = 0;
  size_t unshared_bytes = 0;
};

struct RuntimeReport {
  // One per prepared entry subgraph (subgraph 0 and signature subgraphs).
  std::vector<SubgraphReport> subgraphs;

  // Ops by where they run, across all subgraphs and calls.
  int CountOps(OpReport::Where where) const;
  // The largest reduction_length of any op (tolerance.h).
  int64_t MaxReductionLength() const;
  // Human-readable, one line per op.
  std::string ToString() const;
};

const char* WhereName(OpReport::Where where);

}  // namespace graft

#endif  // GRAFT_DISPATCH_RUNTIME_REPORT_H_
