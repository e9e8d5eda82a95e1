// The dispatch runtime's own costs.
//
// dispatch_chain/N: a model of N dispatch ops in a chain, each run by the
// bench-only do-nothing dispatch library (noop_dispatch.c), loaded from a
// file and invoked as an app would. (time(N) - time(0)) / N is what the
// host costs per dispatch op beyond the vendor's own (zero) work: the
// executor loop, attaching buffers (unchanged, so skipped), the call into
// the library. Target: under 1 us per op. dispatch_chain_profiled/N is the
// same with RuntimeOptions::profiling on: what the profile itself costs.
//
// load_to_first/CONFIG: Runtime::Load (or on-device compile + LoadModel)
// of test_models/residual_mlp.tflite, filling its input and the first
// Invoke, on the CPU kernels and with the example vendor (compiled ahead
// of time; compiled on the device into an empty cache = first launch; and
// from the cache = later launches).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/bench_util.h"
#include "core/compiled_format.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "dispatch/runtime.h"
#include "graft_common.h"
#include "plugins/on_device.h"

namespace graft {
namespace {

constexpr int kElements = 16;
constexpr int kChainLengths[] = {0, 1, 16, 256};

std::string g_dir;  // Scratch directory for the models.

// x -> N dispatch ops of vendor bench_noop -> y; the one module is the
// element count the noop library reads.
Model DispatchChain(int n) {
  ModelBuilder b;
  auto& g = b.Subgraph("chain");
  TensorId t = g.Input("x", tfl::TensorType_FLOAT32, {kElements});
  const std::string module = absl::StrCat(kElements);
  const BufferId buffer = AddBuffer(b.model(), Bytes::Copy(module));
  b.model().buffers[buffer].external = true;
  DispatchOpOptions o;
  o.vendor = "bench_noop";
  o.module_buffer = buffer;
  o.entry_point = "noop";
  for (int i = 0; i < n; ++i) {
    t = g.CustomOp(kDispatchCustomCode)
            .In(t)
            .CustomOptions(EncodeDispatchOpOptions(o))
            .Out(absl::StrCat("t", i), tfl::TensorType_FLOAT32, {kElements});
  }
  g.Output(t);
  Manifest manifest;
  ManifestVendor v;
  v.vendor = "bench_noop";
  v.plugin_name = "dispatch_bench";
  v.plugin_version = "1.0.0";
  v.soc_model = "none";
  v.compiler_abi_version = GRAFT_ABI_VERSION;
  v.bytecode_format_version = 1;
  const auto bytes = reinterpret_cast<const uint8_t*>(module.data());
  v.modules.push_back(
      {buffer, module.size(), ModuleHash({bytes, module.size()})});
  manifest.vendors.push_back(v);
  WriteManifest(b.model(), manifest);
  return std::move(b).BuildUnverified();
}

void BM_DispatchChain(benchmark::State& state, bool profiling) {
  const int n = static_cast<int>(state.range(0));
  const std::string path = absl::StrCat(g_dir, "/chain_", n, ".tflite");
  absl::Status saved = SaveModel(DispatchChain(n), path);
  if (!saved.ok()) {
    state.SkipWithError(std::string(saved.message()).c_str());
    return;
  }
  RuntimeOptions options;
  options.dispatch_dirs = {GRAFT_NOOP_DISPATCH_DIR};
  options.policy = AcceleratorPolicy::kRequireAccelerator;
  options.profiling = profiling;
  auto rt = Runtime::Load(path, options);
  if (!rt.ok()) {
    state.SkipWithError(std::string(rt.status().message()).c_str());
    return;
  }
  if ((*rt)->Report().CountOps(OpReport::Where::kVendor) != n) {
    state.SkipWithError("not every dispatch op runs on bench_noop");
    return;
  }
  for (auto _ : state) {
    absl::Status st = (*rt)->Invoke();
    if (!st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      break;
    }
  }
  state.counters["dispatch_ops"] = n;
}
BENCHMARK_CAPTURE(BM_DispatchChain, plain, false)
    ->Arg(0)
    ->Arg(1)
    ->Arg(16)
    ->Arg(256)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_DispatchChain, profiled, true)
    ->Arg(0)
    ->Arg(256)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

enum class Config { kCpu, kCompiled, kOnDeviceFirstLaunch, kOnDeviceCached };

std::string g_compiled_path;  // residual_mlp compiled for the example vendor

void BM_LoadToFirstInference(benchmark::State& state, Config config) {
  RuntimeOptions options;
  options.dispatch_dirs = {GRAFT_EXAMPLE_VENDOR_DIR};
  OnDeviceOptions od;
  od.plugin_dir = GRAFT_EXAMPLE_VENDOR_DIR;
  const std::string cache = g_dir + "/cache";
  int vendor_ops = 0;
  for (auto _ : state) {
    if (config == Config::kOnDeviceFirstLaunch) {
      state.PauseTiming();
      std::filesystem::remove_all(cache);
      state.ResumeTiming();
    }
    absl::StatusOr<std::unique_ptr<Runtime>> rt;
    switch (config) {
      case Config::kCpu:
        rt = Runtime::Load(GRAFT_RESIDUAL_MLP, RuntimeOptions{});
        break;
      case Config::kCompiled:
        rt = Runtime::Load(g_compiled_path, options);
        break;
      case Config::kOnDeviceFirstLaunch:
      case Config::kOnDeviceCached: {
        od.cache_dir = cache;
        auto compiled = CompileOnDevice(GRAFT_RESIDUAL_MLP, od);
        if (!compiled.ok()) {
          rt = compiled.status();
          break;
        }
        rt = Runtime::LoadModel(std::move(compiled->model), options);
        break;
      }
    }
    if (!rt.ok()) {
      state.SkipWithError(std::string(rt.status().message()).c_str());
      break;
    }
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> unit(-1, 1);
    Tensor* in = (*rt)->input(0);
    for (int64_t i = 0; i < in->num_elements(); ++i) {
      in->data<float>()[i] = unit(rng);
    }
    absl::Status st = (*rt)->Invoke();
    if (!st.ok()) {
      state.SkipWithError(std::string(st.message()).c_str());
      break;
    }
    state.PauseTiming();
    vendor_ops = (*rt)->Report().CountOps(OpReport::Where::kVendor);
    rt->reset();  // Unloading is not part of the measure.
    state.ResumeTiming();
  }
  // The example vendor takes all but the SOFTMAX: one dispatch op.
  if (config != Config::kCpu && vendor_ops != 1) {
    state.SkipWithError("the example vendor did not run the partition");
  }
  state.counters["vendor_ops"] = vendor_ops;
}
BENCHMARK_CAPTURE(BM_LoadToFirstInference, cpu, Config::kCpu)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_LoadToFirstInference, example_compiled, Config::kCompiled)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_LoadToFirstInference, example_on_device_first_launch,
                  Config::kOnDeviceFirstLaunch)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_LoadToFirstInference, example_on_device_cached,
                  Config::kOnDeviceCached)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

int Main(int argc, char** argv) {
  std::string tmpl =
      (std::filesystem::temp_directory_path() / "graft_dispatch_bench_XXXXXX")
          .string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  g_dir = tmpl;
  {
    OnDeviceOptions od;
    od.plugin_dir = GRAFT_EXAMPLE_VENDOR_DIR;
    od.cache_dir = g_dir + "/compiled";
    auto compiled = CompileOnDevice(GRAFT_RESIDUAL_MLP, od);
    if (!compiled.ok()) {
      std::fprintf(stderr, "compiling %s: %s\n", GRAFT_RESIDUAL_MLP,
                   std::string(compiled.status().message()).c_str());
      return 1;
    }
    g_compiled_path = compiled->cache_path;
  }
  if (!bench::InitializeWithMedians(&argc, argv, 5)) return 2;
  bench::MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::filesystem::remove_all(g_dir);

  std::printf("\nmachine: %s\n", bench::MachineDescription().c_str());
  std::printf("%-9s %12s %12s %16s\n", "profiling", "dispatch ops", "invoke",
              "per op vs 0 ops");
  for (const char* mode : {"plain", "profiled"}) {
    const auto* base =
        reporter.Find(absl::StrCat("BM_DispatchChain/", mode, "/0/real_time"));
    for (int n : kChainLengths) {
      const auto* row = reporter.Find(absl::StrCat("BM_DispatchChain/", mode,
                                                    "/", n, "/real_time"));
      if (row == nullptr) continue;
      std::string per_op = "-";
      if (n > 0 && base != nullptr) {
        per_op = absl::StrFormat("%.1f ns",
                                 (row->seconds - base->seconds) / n * 1e9);
      }
      std::printf("%-9s %12d %9.1f ns %16s\n",
                  mode == std::string("plain") ? "off" : "on", n,
                  row->seconds * 1e9, per_op.c_str());
      if (n == 256 && mode == std::string("plain") && base != nullptr) {
        std::printf(
            "target: under 1 us per dispatch op (N=256): %s\n",
            (row->seconds - base->seconds) / n < 1e-6 ? "met" : "NOT MET");
      }
    }
  }
  const auto* cpu = reporter.Find("BM_LoadToFirstInference/cpu/real_time");
  std::printf("\n%-32s %14s %10s\n", "load to first inference", "median",
              "vs cpu");
  for (const char* config :
       {"cpu", "example_compiled", "example_on_device_first_launch",
        "example_on_device_cached"}) {
    const auto* row = reporter.Find(absl::StrCat("BM_LoadToFirstInference/",
                                                  config, "/real_time"));
    if (row == nullptr) continue;
    std::printf("%-32s %14s %9.2fx\n", config,
                bench::HumanTime(row->seconds).c_str(),
                cpu != nullptr ? row->seconds / cpu->seconds : 0.0);
  }
  return 0;
}

}  // namespace
}  // namespace graft

int main(int argc, char** argv) { return graft::Main(argc, argv); }
