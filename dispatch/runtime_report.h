// RuntimeReport: what a loaded model runs where, and what memory it takes.
// RuntimeProfile: where the time of profiled runs went, op by op
// (RuntimeOptions::profiling).
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
  // What the app should know about the results (e.g. a vendor that may
  // compute below the model's precision), one line each; ToString prints
  // them first.
  std::vector<std::string> warnings;

  // Ops by where they run, across all subgraphs and calls.
  int CountOps(OpReport::Where where) const;
  // The largest reduction_length of any op (tolerance.h).
  int64_t MaxReductionLength() const;
  // Human-readable, one line per op.
  std::string ToString() const;
};

const char* WhereName(OpReport::Where where);

// The timings of one op over the profiled runs. Times are host-measured
// wall time (steady clock) around the op's eval, the vendor's Execute or
// the call, so a dispatch op's time includes the host's share (attaching
// buffers, the call into the library).
struct OpProfile {
  int32_t subgraph = 0;
  int32_t op_index = 0;
  // The builtin name ("CONV_2D"), or for an op a vendor ran, the vendor and
  // entry point ("example:partition_0").
  std::string name;
  OpReport::Where where = OpReport::Where::kCpu;
  // As OpReport::detail: kernel name, vendor, or why it fell back.
  std::string detail;
  // 0 for an entry subgraph's ops, 1 for the ops of a subgraph one of them
  // calls (a fallback or a composite's decomposition), and so on. A call
  // op's time includes its callee's ops.
  int depth = 0;
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t median_ns = 0;
  // The vendor's own account of the same runs (dispatch libraries with
  // GRAFT_DISPATCH_CAPABILITY_PROFILING); -1 when there is none.
  int64_t vendor_total_ns = -1;
  int64_t vendor_median_ns = -1;
  // Each profiled call's start on the steady clock and its duration (ns),
  // in call order.
  std::vector<int64_t> call_start_ns;
  std::vector<int64_t> call_ns;
  // The vendor's spans per location over all calls (dispatch libraries
  // whose profile names instructions, e.g. one per XNNPACK node), in order
  // of first appearance: measured time of each instruction.
  struct VendorLocation {
    uint64_t vendor_location = 0;
    std::string name;
    int64_t spans = 0;
    int64_t total_ns = 0;
  };
  std::vector<VendorLocation> vendor_locations;
  // The vendor's spans of the first kMaxTracedCalls calls, for traces:
  // call index, and start and end relative to the call's start (the
  // vendor's clock aligned so its first span starts with the call).
  struct TracedSpan {
    int64_t call = 0;
    std::string name;
    uint64_t vendor_location = 0;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
  };
  static constexpr int64_t kMaxTracedCalls = 1000;
  std::vector<TracedSpan> vendor_spans;
};

// One entry subgraph's profiled runs.
struct SubgraphProfile {
  int32_t subgraph = 0;
  std::string name;
  int64_t runs = 0;
  // Whole runs (Invoke), wall time.
  int64_t total_ns = 0;
  int64_t median_ns = 0;
  // Each run's start and duration on the steady clock (ns), in run order.
  std::vector<int64_t> run_start_ns;
  std::vector<int64_t> run_ns;
  // Execution order; each call op is followed by its callee's ops.
  std::vector<OpProfile> ops;
};

// Per op type: `name` of OpProfile for builtins ("CONV_2D"), the vendor
// for ops a vendor ran ("example"). Leaf ops only (call ops are the sum
// of their callees').
struct OpTypeProfile {
  std::string type;
  OpReport::Where where = OpReport::Where::kCpu;
  int64_t ops = 0;
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t vendor_total_ns = -1;
};

struct RuntimeProfile {
  // Entry subgraphs that ran at least once since the profile was reset.
  std::vector<SubgraphProfile> subgraphs;

  // Leaf ops of `s` grouped by type, by total time, longest first.
  static std::vector<OpTypeProfile> ByType(const SubgraphProfile& s);
  // Per subgraph: the run summary, a table of ops sorted by total time
  // (index, name, where, calls, median, total, % of the run time, and the
  // vendor's time and the host overhead where known), then ByType.
  std::string ToString() const;
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_RUNTIME_REPORT_H_
