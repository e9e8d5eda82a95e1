// Load benchmark: how LoadModel's time and memory scale with the size of a
// model's weights.
//
// At start-up it writes, with ModelBuilder + SaveModel, models that are
// almost only weights: a chain of 8 FULLY_CONNECTED ops whose square float
// weights make the file ~2 MiB, ~200 MiB or ~1 GiB, plus the 200 MiB model
// with its weights stored as external buffers (after the flatbuffer). The
// graph is identical across sizes, so a loader that never touches weights
// loads them all in about the same time and memory.
//
// Benchmarks, per model:
//   load/<size>       LoadModel + destruction of the Model (map, verify,
//                     convert, unmap) with the file in the page cache. One
//                     extra load outside the timed loop measures the growth
//                     of the resident set while the Model is alive.
//   load_cold/<size>  the same after evicting the file from the page cache
//                     (posix_fadvise DONTNEED on this file only, untimed),
//                     and how many bytes of the file one cold load brings
//                     into the page cache (mincore; includes readahead).
//   prepare/<model>   Runtime::Load of a real model on Graft's CPU kernels
//                     (1 thread) + destruction: load plus every kernel's
//                     prepare, where the int8 and float GEMM/conv kernels
//                     pack their weights (issue 21). Before the timed loop,
//                     one load measures what it leaves allocated while the
//                     runtime is alive (malloc's bytes in use, mallinfo2):
//                     the packed weights, the planned activation arena
//                     (printed beside it, from the runtime's report) and
//                     the rest of the prepared state (kernel states, the
//                     graph); heap growth minus the arena is "prepared".
// After all runs main() prints the machine and a table of medians with
// ratios against the smallest model.
//
// Flags besides Google Benchmark's:
//   --graft_sizes=2MB,200MB,1GB,200MB-ext   which models (default: all)
//   --graft_dir=DIR     where to write them (default: $TMPDIR or /tmp)
//   --graft_keep        keep the generated files
//   --graft_cold=false  skip the cold-cache benchmarks
//   --graft_prepare=PATH,...  models for prepare/ (default: MobileNetV2 1.0
//                       224 int8 and float of test_models/generated; empty:
//                       none)
// Defaults added unless given: --benchmark_repetitions=5,
// --benchmark_display_aggregates_only=true.
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "dispatch/runtime.h"

namespace graft {
namespace {

using bench::HumanBytes;
using bench::HumanTime;

struct Variant {
  std::string label;
  int32_t width;  // Weights are width x width floats per layer.
  int layers;
  bool external;
};

// 8 x 256^2 x 4 B = 2 MiB; 8 x 2560^2 x 4 B = 200 MiB;
// 8 x 5792^2 x 4 B = 1.0 GiB (below the 2 GiB flatbuffer limit, so the
// writer keeps its buffers inline).
const Variant kVariants[] = {
    {"2MB", 256, 8, false},
    {"200MB", 2560, 8, false},
    {"1GB", 5792, 8, false},
    {"200MB-ext", 2560, 8, true},
};

struct GeneratedModel {
  Variant variant;
  std::string path;
  uint64_t file_bytes = 0;
};

// Resident memory, split into anonymous memory (heap: what a copying loader
// would grow) and file-backed pages (the mapping: what a zero-copy loader
// grows by touching the flatbuffer's tables).
struct Resident {
  int64_t total = 0;
  int64_t anon = 0;
  int64_t file = 0;
};

Resident ResidentNow() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0, shared = 0;
  statm >> size >> resident >> shared;
  const int64_t page = sysconf(_SC_PAGESIZE);
  return {resident * page, (resident - shared) * page, shared * page};
}

// Drops `path`'s pages (and only its pages) from the page cache, so the
// next load reads from the disk.
bool EvictFromPageCache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  // Dirty pages cannot be dropped; SaveModel's data may not be on disk yet.
  bool ok = ::fdatasync(fd) == 0 &&
            ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return ok;
}

// Bytes of `path` now in the page cache; -1 on error.
int64_t CachedBytes(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (addr == MAP_FAILED) return -1;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((size + page - 1) / page);
  int64_t bytes = -1;
  if (::mincore(addr, size, resident.data()) == 0) {
    bytes = 0;
    for (unsigned char r : resident) bytes += (r & 1) ? page : 0;
  }
  ::munmap(addr, size);
  return bytes;
}

absl::StatusOr<Model> MakeModel(const Variant& v) {
  ModelBuilder b;
  b.Description(absl::StrCat("graft load benchmark ", v.label));
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, v.width});
  TensorId t = x;
  const size_t weight_bytes =
      static_cast<size_t>(v.width) * v.width * sizeof(float);
  for (int i = 0; i < v.layers; ++i) {
    // Non-zero bytes (0x3c3c3c3c is ~0.0115f) so no layer of the stack can
    // mistake the weights for a sparse or zero-filled region.
    std::vector<uint8_t> data(weight_bytes, 0x3c);
    TensorId w = g.Constant(absl::StrCat("w", i), tfl::TensorType_FLOAT32,
                            {v.width, v.width}, Bytes::Own(std::move(data)));
    t = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
            .In(t, w, kNoTensor)
            .Out(absl::StrCat("h", i), tfl::TensorType_FLOAT32, {1, v.width});
  }
  g.Output(t);
  b.Signature("serving_default", {{"x", x}}, {{"y", t}});
  if (v.external) {
    for (Buffer& buffer : b.model().buffers) {
      buffer.external = !buffer.data.empty();
    }
  }
  return std::move(b).Build();
}

absl::StatusOr<GeneratedModel> Generate(const Variant& v,
                                        const std::string& dir) {
  GeneratedModel gm;
  gm.variant = v;
  gm.path = absl::StrCat(dir, "/load_bench_", v.label, ".tflite");
  absl::StatusOr<Model> model = MakeModel(v);
  if (!model.ok()) return model.status();
  absl::Status saved = SaveModel(*model, gm.path);
  if (!saved.ok()) return saved;
  gm.file_bytes = std::filesystem::file_size(gm.path);
  return gm;
}

void BM_LoadModel(benchmark::State& state, const GeneratedModel* gm) {
  Resident growth;
  {
    Resident before = ResidentNow();
    absl::StatusOr<Model> probe = LoadModel(gm->path);
    if (!probe.ok()) {
      state.SkipWithError(std::string(probe.status().message()).c_str());
      return;
    }
    Resident after = ResidentNow();
    growth = {after.total - before.total, after.anon - before.anon,
              after.file - before.file};
  }
  for (auto _ : state) {
    absl::StatusOr<Model> model = LoadModel(gm->path);
    if (!model.ok()) {
      state.SkipWithError(std::string(model.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(model);
  }
  state.counters["file_bytes"] = static_cast<double>(gm->file_bytes);
  state.counters["rss_growth_bytes"] = static_cast<double>(growth.total);
  state.counters["rss_anon_growth_bytes"] = static_cast<double>(growth.anon);
  state.counters["rss_file_growth_bytes"] = static_cast<double>(growth.file);
  state.counters["rss_growth_fraction"] =
      static_cast<double>(growth.total) / static_cast<double>(gm->file_bytes);
}

absl::StatusOr<std::unique_ptr<Runtime>> LoadOnCpu(const std::string& path) {
  RuntimeOptions options;
  options.num_threads = 1;
  return Runtime::Load(path, options);
}

// Bytes the process has allocated with malloc and not freed (heap and
// malloc's own mappings): exact, where the resident set's counters lag
// (the kernel batches them per thread).
int64_t HeapBytesInUse() {
  const struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

void BM_Prepare(benchmark::State& state, const std::string* path) {
  int64_t heap_growth = 0;
  size_t arena = 0;
  {
    const int64_t before = HeapBytesInUse();
    absl::StatusOr<std::unique_ptr<Runtime>> probe = LoadOnCpu(*path);
    if (!probe.ok()) {
      state.SkipWithError(std::string(probe.status().message()).c_str());
      return;
    }
    heap_growth = HeapBytesInUse() - before;
    for (const SubgraphReport& sg : (*probe)->Report().subgraphs) {
      arena += sg.arena_bytes;
    }
  }
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<Runtime>> rt = LoadOnCpu(*path);
    if (!rt.ok()) {
      state.SkipWithError(std::string(rt.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(rt);
  }
  state.counters["file_bytes"] =
      static_cast<double>(std::filesystem::file_size(*path));
  state.counters["heap_growth_bytes"] = static_cast<double>(heap_growth);
  state.counters["arena_bytes"] = static_cast<double>(arena);
  state.counters["prepared_bytes"] =
      static_cast<double>(heap_growth) - static_cast<double>(arena);
}

void BM_LoadModelCold(benchmark::State& state, const GeneratedModel* gm) {
  for (auto _ : state) {
    state.PauseTiming();
    if (!EvictFromPageCache(gm->path)) {
      state.SkipWithError("cannot evict the model from the page cache");
      return;
    }
    state.ResumeTiming();
    absl::StatusOr<Model> model = LoadModel(gm->path);
    if (!model.ok()) {
      state.SkipWithError(std::string(model.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(model);
  }
  // What one cold load reads: evict, load, count cached pages.
  EvictFromPageCache(gm->path);
  int64_t read_bytes = -1;
  {
    absl::StatusOr<Model> model = LoadModel(gm->path);
    if (model.ok()) read_bytes = CachedBytes(gm->path, gm->file_bytes);
  }
  state.counters["file_bytes"] = static_cast<double>(gm->file_bytes);
  state.counters["cold_read_bytes"] = static_cast<double>(read_bytes);
}

// The console reporter, also keeping each benchmark's median (or its only
// run when there are no repetitions) for the summary table.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  struct Row {
    double seconds = 0;
    double cpu_seconds = 0;
    std::map<std::string, double> counters;
    bool is_median = false;
  };
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      bool median =
          run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Aggregate && !median) continue;
      Row& row = rows_[run.run_name.function_name];
      if (row.is_median && !median) continue;
      const double unit = benchmark::GetTimeUnitMultiplier(run.time_unit);
      row.seconds = run.GetAdjustedRealTime() / unit;
      row.cpu_seconds = run.GetAdjustedCPUTime() / unit;
      for (const auto& [name, counter] : run.counters) {
        row.counters[name] = counter.value;
      }
      row.is_median = median;
    }
  }
  const Row* Find(const std::string& name) const {
    auto it = rows_.find(name);
    return it != rows_.end() ? &it->second : nullptr;
  }

 private:
  std::map<std::string, Row> rows_;
};

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

void PrintSummary(const std::vector<GeneratedModel>& models,
                  const SummaryReporter& reporter) {
  std::printf("\nmachine: %s\n", bench::MachineDescription().c_str());
  for (const char* kind : {"load", "load_cold"}) {
    const bool cold = std::string(kind) == "load_cold";
    const SummaryReporter::Row* base = nullptr;
    std::string base_label;
    for (const GeneratedModel& gm : models) {
      base = reporter.Find(absl::StrCat(kind, "/", gm.variant.label));
      base_label = gm.variant.label;
      if (base != nullptr) break;
    }
    if (base == nullptr) continue;
    const std::string x = absl::StrCat("x ", base_label);
    std::printf("\n%s (%s):\n", kind,
                base->is_median ? "medians" : "single runs");
    std::string header = absl::StrFormat(
        "  %-10s %10s %11s %8s %11s %8s %11s %10s", "model", "file", "wall", x,
        "cpu", x, cold ? "read" : "RSS growth",
        cold ? "read/file" : "RSS/file");
    if (!cold) absl::StrAppendFormat(&header, " %11s", "anon growth");
    std::printf("%s\n", header.c_str());
    for (const GeneratedModel& gm : models) {
      const SummaryReporter::Row* row =
          reporter.Find(absl::StrCat(kind, "/", gm.variant.label));
      if (row == nullptr) continue;
      auto counter = [&](const char* name) {
        auto it = row->counters.find(name);
        return it != row->counters.end() ? it->second : 0.0;
      };
      double grown = counter(cold ? "cold_read_bytes" : "rss_growth_bytes");
      std::string line = absl::StrFormat(
          "  %-10s %10s %11s %8.2f %11s %8.2f %11s %9.3f%%", gm.variant.label,
          HumanBytes(gm.file_bytes), HumanTime(row->seconds),
          Ratio(row->seconds, base->seconds), HumanTime(row->cpu_seconds),
          Ratio(row->cpu_seconds, base->cpu_seconds), HumanBytes(grown),
          100.0 * grown / static_cast<double>(gm.file_bytes));
      if (!cold) {
        absl::StrAppendFormat(&line, " %11s",
                              HumanBytes(counter("rss_anon_growth_bytes")));
      }
      std::printf("%s\n", line.c_str());
    }
  }
  std::printf(
      "\nwall/cpu: LoadModel + unload. load: file in the page cache. "
      "load_cold: file evicted\nfirst. RSS growth: while one Model is alive; "
      "'anon' is heap (copies), the rest\nmapped file pages. read: bytes of "
      "the file one cold load pulled into the page cache\n(readahead "
      "included).\n");
}

void PrintPrepareSummary(const std::vector<std::string>& paths,
                         const SummaryReporter& reporter) {
  bool header = false;
  for (const std::string& path : paths) {
    const std::string name =
        "prepare/" + std::filesystem::path(path).stem().string();
    const SummaryReporter::Row* row = reporter.Find(name);
    if (row == nullptr) continue;
    if (!header) {
      std::printf("\nprepare (%s; Runtime::Load on the CPU kernels, 1 thread):\n",
                  row->is_median ? "medians" : "single runs");
      std::printf("  %-30s %10s %11s %11s %11s %10s %11s\n", "model", "file",
                  "wall", "cpu", "heap growth", "arena", "prepared");
      header = true;
    }
    auto counter = [&](const char* c) {
      auto it = row->counters.find(c);
      return it != row->counters.end() ? it->second : 0.0;
    };
    auto bytes = [](double b) {
      return b < 0 ? "-" + HumanBytes(-b) : HumanBytes(b);
    };
    std::printf("  %-30s %10s %11s %11s %11s %10s %11s\n",
                std::filesystem::path(path).stem().string().c_str(),
                bytes(counter("file_bytes")).c_str(),
                HumanTime(row->seconds).c_str(),
                HumanTime(row->cpu_seconds).c_str(),
                bytes(counter("heap_growth_bytes")).c_str(),
                bytes(counter("arena_bytes")).c_str(),
                bytes(counter("prepared_bytes")).c_str());
  }
}

int Main(int argc, char** argv) {
  std::string sizes = "2MB,200MB,1GB,200MB-ext";
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp != nullptr && *tmp ? tmp : "/tmp";
  bool keep = false;
  bool run_cold = true;
  std::string prepare = GRAFT_PREPARE_MODELS;

  // Our flags are removed before Google Benchmark sees the rest.
  std::vector<char*> args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--graft_sizes=", 0) == 0) {
      sizes = a.substr(std::strlen("--graft_sizes="));
    } else if (a.rfind("--graft_dir=", 0) == 0) {
      dir = a.substr(std::strlen("--graft_dir="));
    } else if (a == "--graft_keep") {
      keep = true;
    } else if (a == "--graft_cold=false") {
      run_cold = false;
    } else if (a.rfind("--graft_prepare=", 0) == 0) {
      prepare = a.substr(std::strlen("--graft_prepare="));
    } else {
      args.push_back(argv[i]);
    }
  }
  int bench_argc = static_cast<int>(args.size());
  if (!bench::InitializeWithMedians(&bench_argc, args.data())) return 2;

  std::string work = dir + "/graft_load_bench_XXXXXX";
  if (mkdtemp(work.data()) == nullptr) {
    std::fprintf(stderr, "load_bench: cannot create a directory in %s: %s\n",
                 dir.c_str(), std::strerror(errno));
    return 1;
  }

  std::vector<GeneratedModel> models;
  for (absl::string_view label : absl::StrSplit(sizes, ',')) {
    const Variant* variant = nullptr;
    for (const Variant& v : kVariants) {
      if (v.label == label) variant = &v;
    }
    if (variant == nullptr) {
      std::fprintf(stderr, "load_bench: unknown size '%s'\n",
                   std::string(label).c_str());
      return 2;
    }
    uint64_t need = static_cast<uint64_t>(variant->width) * variant->width *
                    sizeof(float) * variant->layers;
    std::error_code ec;
    auto space = std::filesystem::space(work, ec);
    if (!ec && space.available < need + need / 4) {
      std::fprintf(stderr, "load_bench: skipping %s: %s free in %s\n",
                   variant->label.c_str(), HumanBytes(space.available).c_str(),
                   work.c_str());
      continue;
    }
    std::fprintf(stderr, "load_bench: writing the %s model...\n",
                 variant->label.c_str());
    absl::StatusOr<GeneratedModel> gm = Generate(*variant, work);
    if (!gm.ok()) {
      std::fprintf(stderr, "load_bench: cannot generate %s: %s\n",
                   variant->label.c_str(),
                   std::string(gm.status().message()).c_str());
      return 1;
    }
    models.push_back(*std::move(gm));
  }
  // First, before the other benchmarks free heap pages a load could reuse.
  std::vector<std::string> prepare_paths =
      absl::StrSplit(prepare, ',', absl::SkipEmpty());
  for (const std::string& path : prepare_paths) {
    benchmark::RegisterBenchmark(
        ("prepare/" + std::filesystem::path(path).stem().string()).c_str(),
        BM_Prepare, &path)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  for (const GeneratedModel& gm : models) {
    benchmark::RegisterBenchmark(("load/" + gm.variant.label).c_str(),
                                 BM_LoadModel, &gm)
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  if (run_cold) {
    for (const GeneratedModel& gm : models) {
      benchmark::RegisterBenchmark(("load_cold/" + gm.variant.label).c_str(),
                                   BM_LoadModelCold, &gm)
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
    }
  }

  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  PrintSummary(models, reporter);
  PrintPrepareSummary(prepare_paths, reporter);
  benchmark::Shutdown();

  if (keep) {
    std::printf("models kept in %s\n", work.c_str());
  } else {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }
  return 0;
}

}  // namespace
}  // namespace graft

int main(int argc, char** argv) { return graft::Main(argc, argv); }
