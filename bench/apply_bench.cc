// `graft apply` at scale: the example plugin applied to generated graphs of
// 1k, 10k and 100k ops, as chains (one partition) and as branchy DAGs with
// refused ops sprinkled in (many partitions, exercising the cycle checks).
// Reports the median time, peak memory growth and how time grows with size.
// Target: 100k ops in under 1 s on this machine.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_util.h"
#include "core/model_builder.h"
#include "plugins/apply.h"

namespace graft {
namespace {

std::string g_plugin_path;

Model Chain(int n) {
  ModelBuilder b;
  auto& g = b.Subgraph("chain");
  TensorId t = g.Input("x", tfl::TensorType_FLOAT32, {1, 16});
  for (int i = 0; i < n; ++i) {
    t = g.Op(i % 2 ? tfl::BuiltinOperator_RELU : tfl::BuiltinOperator_TANH)
            .In(t).Out(absl::StrCat("t", i), tfl::TensorType_FLOAT32, {1, 16});
  }
  g.Output(t);
  return std::move(b).BuildUnverified();
}

// Each op adds two of the last 16 tensors; every 10th op is one the example
// vendor refuses, so selected groups keep running into outside paths.
Model BranchyDag(int n) {
  std::mt19937 rng(42);
  ModelBuilder b;
  auto& g = b.Subgraph("dag");
  std::vector<TensorId> tensors = {
      g.Input("x", tfl::TensorType_FLOAT32, {1, 16})};
  for (int i = 0; i < n; ++i) {
    size_t window = std::min<size_t>(tensors.size(), 16);
    TensorId a = tensors[tensors.size() - 1 - rng() % window];
    TensorId c = tensors[tensors.size() - 1 - rng() % window];
    auto op = g.Op(i % 10 == 9 ? tfl::BuiltinOperator_SQUARED_DIFFERENCE
                               : tfl::BuiltinOperator_ADD);
    if (i % 10 != 9) op.Options(tfl::AddOptionsT{});
    tensors.push_back(
        op.In(a, c).Out(absl::StrCat("t", i), tfl::TensorType_FLOAT32, {1, 16}));
  }
  // Every tensor nothing reads is a graph output, as in a real network.
  std::vector<bool> read(tensors.size() + 1, false);
  for (const tfl::OperatorT& op : b.model().subgraphs[0].ops) {
    for (TensorId t : op.inputs) read[t] = true;
  }
  for (TensorId t : tensors) {
    if (!read[t]) g.Output(t);
  }
  return std::move(b).BuildUnverified();
}

void BM_Apply(benchmark::State& state, bool dag) {
  const int n = static_cast<int>(state.range(0));
  const Model original = dag ? BranchyDag(n) : Chain(n);
  auto plugin = LoadCompilerPlugin(g_plugin_path);
  if (!plugin.ok()) {
    state.SkipWithError(std::string(plugin.status().message()).c_str());
    return;
  }
  CompilerPlugin* raw = plugin->get();
  size_t partitions = 0;
  double peak_growth = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Model m = original;
    bench::ResetPeakResident();
    double before = bench::ResidentBytes();
    state.ResumeTiming();
    auto report = ApplyPlugins(m, {&raw, 1}, {});
    state.PauseTiming();
    if (!report.ok()) {
      state.SkipWithError(std::string(report.status().message()).c_str());
      break;
    }
    partitions = report->partitions.size();
    state.counters["partition_s"] = report->phases.partition;
    state.counters["group_s"] = report->phases.group;
    state.counters["outline_s"] = report->phases.outline;
    state.counters["compile_s"] = report->phases.compile;
    state.counters["embed_s"] = report->phases.embed;
    peak_growth = std::max(peak_growth, bench::PeakResidentBytes() - before);
    state.ResumeTiming();
  }
  state.counters["ops"] = n;
  state.counters["partitions"] = static_cast<double>(partitions);
  state.counters["peak_rss_growth"] = peak_growth;
}

BENCHMARK_CAPTURE(BM_Apply, chain, false)
    ->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Apply, dag, true)
    ->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int Main(int argc, char** argv) {
  g_plugin_path = GRAFT_EXAMPLE_PLUGIN;
  if (!bench::InitializeWithMedians(&argc, argv, 3)) return 2;
  bench::MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nmachine: %s\n", bench::MachineDescription().c_str());
  std::printf("%-8s %8s %10s %11s %12s %14s %14s\n", "graph", "ops",
              "partitions", "apply", "per op", "growth vs 1k", "peak RSS +");
  for (const char* kind : {"chain", "dag"}) {
    const auto* base = [&]() -> const bench::MedianReporter::Row* {
      auto it = reporter.rows().find(absl::StrCat("BM_Apply/", kind, "/1000/real_time"));
      return it == reporter.rows().end() ? nullptr : &it->second;
    }();
    for (int n : {1000, 10000, 100000}) {
      auto it = reporter.rows().find(absl::StrCat("BM_Apply/", kind, "/", n, "/real_time"));
      if (it == reporter.rows().end()) continue;
      const auto& row = it->second;
      // Time ratio divided by size ratio: 1.0 is linear growth.
      double growth = base && base->seconds > 0
                          ? (row.seconds / base->seconds) / (n / 1000.0)
                          : 0;
      std::printf("%-8s %8d %10.0f %11s %12s %13.2fx %14s\n", kind, n,
                  row.counters.count("partitions") ? row.counters.at("partitions") : 0,
                  bench::HumanTime(row.seconds).c_str(),
                  bench::HumanTime(row.seconds / n).c_str(), growth,
                  bench::HumanBytes(row.counters.count("peak_rss_growth")
                                        ? row.counters.at("peak_rss_growth")
                                        : 0).c_str());
      if (n == 100000) {
        std::printf("         target: 100k ops under 1 s: %s\n",
                    row.seconds < 1.0 ? "met" : "NOT MET");
      }
    }
  }
  std::printf("apply: median real time of ApplyPlugins (partition, group, "
              "outline, compile, embed);\ngrowth: (time / time at 1k) / (ops / "
              "1k), 1.00 = linear.\n");
  return 0;
}

}  // namespace
}  // namespace graft

int main(int argc, char** argv) { return graft::Main(argc, argv); }
