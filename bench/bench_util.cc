#include "bench/bench_util.h"

#include <unistd.h>

#include <cstring>
#include <fstream>

#include "absl/strings/str_format.h"
#include "tools/bench_cmd.h"

namespace graft::bench {
namespace {

double StatusField(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(status, line)) {
    if (line.compare(0, n, key) == 0) {
      return std::atof(line.c_str() + n) * 1024.0;  // Reported in kB.
    }
  }
  return 0;
}

}  // namespace

std::string MachineDescription() { return tools::MachineDescription(); }

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while ((bytes >= 1024 || bytes <= -1024) && u < 3) {
    bytes /= 1024;
    ++u;
  }
  return absl::StrFormat("%.1f %s", bytes, units[u]);
}

std::string HumanTime(double seconds) {
  if (seconds < 1e-3) return absl::StrFormat("%.1f us", seconds * 1e6);
  if (seconds < 1) return absl::StrFormat("%.2f ms", seconds * 1e3);
  return absl::StrFormat("%.2f s", seconds);
}

double ResidentBytes() { return StatusField("VmRSS:"); }
double PeakResidentBytes() { return StatusField("VmHWM:"); }

bool ResetPeakResident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

bool InitializeWithMedians(int* argc, char** argv, int repetitions) {
  static std::vector<std::string> extra;
  static std::vector<char*> args;
  bool has_reps = false, has_aggr = false;
  for (int i = 0; i < *argc; ++i) {
    has_reps |= std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0;
    has_aggr |= std::strstr(argv[i], "aggregates_only") != nullptr;
  }
  args.assign(argv, argv + *argc);
  if (!has_reps) {
    extra.push_back(absl::StrFormat("--benchmark_repetitions=%d", repetitions));
  }
  if (!has_aggr) extra.push_back("--benchmark_display_aggregates_only=true");
  for (std::string& e : extra) args.push_back(e.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  return !benchmark::ReportUnrecognizedArguments(n, args.data());
}

void MedianReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    const bool median = run.run_type == Run::RT_Aggregate &&
                        run.aggregate_name == "median";
    if (run.run_type == Run::RT_Aggregate && !median) continue;
    Row& row = rows_[run.run_name.str()];
    if (row.is_median && !median) continue;
    row.seconds = run.GetAdjustedRealTime() /
                  benchmark::GetTimeUnitMultiplier(run.time_unit);
    row.counters.clear();
    for (const auto& [name, counter] : run.counters) {
      row.counters[name] = counter.value;
    }
    row.is_median = median;
  }
}

}  // namespace graft::bench
