// Helpers shared by Graft's benchmark programs: the machine's description,
// human-readable units, memory readings, and a reporter that keeps each
// benchmark's median for a closing summary table.
#ifndef GRAFT_BENCH_BENCH_UTIL_H_
#define GRAFT_BENCH_BENCH_UTIL_H_

#include <map>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

namespace graft::bench {

// "Intel(R) Xeon(R) ... (2 cores), load average 1.52 1.38 1.95"
// (tools::MachineDescription, shared with `graft bench`).
std::string MachineDescription();

std::string HumanBytes(double bytes);
std::string HumanTime(double seconds);

// Resident set size and its high-water mark, from /proc/self/status.
double ResidentBytes();
double PeakResidentBytes();
// Resets the high-water mark to the current RSS (Linux clear_refs "5");
// false where the kernel does not allow it.
bool ResetPeakResident();

// Adds --benchmark_repetitions=N and aggregates-only display unless the
// command line already chose, then initializes Google Benchmark. Returns
// false on unrecognized arguments.
bool InitializeWithMedians(int* argc, char** argv, int repetitions = 5);

// Forwards everything to the console and remembers, per benchmark name
// (without the aggregate suffix), the median (or the single run's) real time
// in seconds and its counters.
class MedianReporter : public benchmark::ConsoleReporter {
 public:
  struct Row {
    double seconds = 0;
    std::map<std::string, double> counters;
    bool is_median = false;
  };
  void ReportRuns(const std::vector<Run>& runs) override;
  const std::map<std::string, Row>& rows() const { return rows_; }
  // The row of `name` (e.g. "BM_X/arg/real_time"), or null.
  const Row* Find(const std::string& name) const {
    auto it = rows_.find(name);
    return it == rows_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Row> rows_;
};

}  // namespace graft::bench

#endif  // GRAFT_BENCH_BENCH_UTIL_H_
