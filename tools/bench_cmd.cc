#include "tools/bench_cmd.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/compiled_format.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "dispatch/runtime.h"
#include "plugins/on_device.h"
#include "tools/apply_cmd.h"
#include "tools/flags.h"
#include "tools/json_writer.h"
#include "tools/progress.h"
#include "tools/run_cmd.h"

namespace graft::tools {
namespace {

constexpr char kUsage[] =
    "graft bench MODEL... [--plugin-dir=DIR,...] [--dispatch-dir=DIR,...]\n"
    "            [--threads=N,...] [--warmup=N] [--iterations=N] [--seed=N]\n"
    "            [--vendor=V[,V]] [--json]";

constexpr char kDescription[] =
    "Times each MODEL in Graft's runtime, loaded and run as an app would. An "
    "uncompiled model runs on Graft's CPU kernels ('cpu') and, for each "
    "--plugin-dir, compiled on the device by the plugins there and run with "
    "the dispatch libraries there and in --dispatch-dir ('plugins:DIR'). A "
    "model compiled by Graft runs as it is with the dispatch libraries of "
    "each --dispatch-dir or --plugin-dir (default: the default plugin "
    "directory; 'dispatch:DIR'). Each configuration runs at each --threads "
    "count: load, one first run (load-to-first-inference), --warmup untimed "
    "runs, --iterations timed runs; it prints median, min and p90 and the "
    "ratio of the median to the first configuration's. Inputs are seeded "
    "random values. --vendor=a,b: only those vendors' plugins and dispatch "
    "libraries, a first when several plugins take an op (default: every "
    "plugin, dedicated accelerators first, then by vendor name). Exit status "
    "1 if any model or configuration failed.";

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

struct Settings {
  std::vector<int> threads;
  int64_t warmup = 2;
  int64_t iterations = 20;
  int64_t seed = 1;
  // The vendor priority list (--vendor); empty: the default order.
  std::vector<std::string> vendors;
  // The progress display (on a terminal); null for none.
  ProgressLine* progress = nullptr;
};

// One configuration at one thread count.
struct ConfigResult {
  std::string name;  // "cpu", "plugins:DIR", "dispatch:DIR"
  int threads = 1;
  std::string error;  // Set when it failed; nothing else is then.
  // Ops run at invoke, by where (calls counted by their callees' ops).
  int cpu_ops = 0;
  int vendor_ops = 0;
  int fallback_ops = 0;  // Dispatch ops that run their fallback on CPU.
  std::set<std::string> vendors;
  double compile_ms = -1;  // The on-device compile (plugins:DIR only).
  double load_ms = 0;
  double first_run_ms = 0;
  LatencyStats latency;
  double ratio = 0;  // Median over the first configuration's; 0: unknown.
};

struct ModelResult {
  std::string path;
  bool compiled = false;
  std::string error;
  std::vector<ConfigResult> configs;
};

void CountPlacement(const std::vector<SubgraphReport>& subgraphs,
                    ConfigResult* r) {
  for (const SubgraphReport& s : subgraphs) {
    for (const OpReport& op : s.ops) {
      switch (op.where) {
        case OpReport::Where::kCpu:
          ++r->cpu_ops;
          break;
        case OpReport::Where::kVendor:
          ++r->vendor_ops;
          r->vendors.insert(op.detail);
          break;
        case OpReport::Where::kFallback:
          ++r->fallback_ops;
          break;
        default:
          break;
      }
      CountPlacement(op.callee, r);
    }
  }
}

using Loader = std::function<absl::StatusOr<std::unique_ptr<Runtime>>()>;

// Loads with `load` and times the first run, warm-up and timed runs.
void Measure(const std::string& model, const Loader& load,
             const Settings& settings, ConfigResult* r) {
  const std::string what = absl::StrFormat(
      "%s (%s, %d thread%s)", std::filesystem::path(model).filename().string(),
      r->name, r->threads, r->threads == 1 ? "" : "s");
  if (settings.progress != nullptr) {
    settings.progress->Update(absl::StrCat(what, ": loading"));
  }
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Runtime>> rt = load();
  if (!rt.ok()) {
    r->error = std::string(rt.status().message());
    return;
  }
  r->load_ms = MsSince(start);
  Runtime& runtime = **rt;
  CountPlacement(runtime.Report().subgraphs, r);
  std::mt19937 rng(static_cast<uint32_t>(settings.seed));
  for (size_t i = 0; i < runtime.num_inputs(); ++i) {
    FillRandom(runtime.input(i), rng);
  }
  std::vector<double> ms;
  for (int64_t it = -1 - settings.warmup; it < settings.iterations; ++it) {
    if (settings.progress != nullptr) {
      settings.progress->Update(
          it < 0 ? absl::StrCat(what, ": warm-up")
                 : absl::StrFormat("%s: run %d/%d", what, it + 1,
                                   settings.iterations),
          /*force=*/it <= 0);
    }
    start = std::chrono::steady_clock::now();
    absl::Status st = runtime.Invoke();
    const double elapsed = MsSince(start);
    if (!st.ok()) {
      r->error = std::string(st.message());
      return;
    }
    if (it == -1 - settings.warmup) r->first_run_ms = elapsed;
    if (it >= 0) ms.push_back(elapsed);
  }
  r->latency = SummarizeLatency(std::move(ms));
}

// A fresh temporary directory, removed with its contents at destruction.
class ScratchDir {
 public:
  ScratchDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "graft_bench_XXXXXX")
            .string();
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `cache_dir` holds on-device compiled models (so they are mapped from a
// file, as an app with a cache sees them).
ModelResult BenchModel(const std::string& path,
                       const std::vector<std::string>& plugin_dirs,
                       const std::vector<std::string>& dispatch_dirs,
                       const std::string& cache_dir, const Settings& settings) {
  ModelResult m;
  m.path = path;
  absl::StatusOr<Model> model = LoadModel(path);
  if (!model.ok()) {
    m.error = std::string(model.status().message());
    return m;
  }
  // Compiled by Graft (a manifest) or by LiteRT's tools (a LiteRtStamp).
  m.compiled = ReadManifest(*model).ok() || ReadLiteRtStamp(*model).ok();
  auto add = [&](const std::string& name, double compile_ms,
                 const std::vector<std::string>& dirs,
                 const std::function<Loader(const RuntimeOptions&)>& loader) {
    for (int threads : settings.threads) {
      ConfigResult r;
      r.name = name;
      r.threads = threads;
      r.compile_ms = compile_ms;
      RuntimeOptions options;
      options.num_threads = threads;
      options.dispatch_dirs = dirs;
      options.vendor_priority = settings.vendors;
      Measure(path, loader(options), settings, &r);
      m.configs.push_back(std::move(r));
    }
  };
  auto from_file = [&](const RuntimeOptions& options) -> Loader {
    return [&path, options] { return Runtime::Load(path, options); };
  };
  if (m.compiled) {
    std::vector<std::string> dirs = dispatch_dirs;
    dirs.insert(dirs.end(), plugin_dirs.begin(), plugin_dirs.end());
    if (dirs.empty()) dirs.push_back(DefaultPluginDir());
    for (const std::string& dir : dirs) {
      add(absl::StrCat("dispatch:", dir), -1, {dir}, from_file);
    }
    return m;
  }
  add("cpu", -1, {}, from_file);
  for (const std::string& dir : plugin_dirs) {
    const std::string name = absl::StrCat("plugins:", dir);
    OnDeviceOptions od;
    od.isolate_plugins = true;  // graft is single-threaded while compiling.
    od.plugin_dir = dir;
    od.cache_dir = cache_dir;
    od.vendors = settings.vendors;
    if (settings.progress != nullptr) {
      const std::string what = absl::StrFormat(
          "%s (%s): on-device compile: ",
          std::filesystem::path(path).filename().string(), name);
      od.progress = [&settings, what](const std::string& step) {
        settings.progress->Update(what + step);
      };
    }
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<OnDeviceResult> compiled = CompileOnDevice(path, od);
    const double compile_ms = MsSince(start);
    if (!compiled.ok()) {
      for (int threads : settings.threads) {
        ConfigResult r;
        r.name = name;
        r.threads = threads;
        r.error = std::string(compiled.status().message());
        m.configs.push_back(std::move(r));
      }
      continue;
    }
    std::vector<std::string> dirs = {dir};
    dirs.insert(dirs.end(), dispatch_dirs.begin(), dispatch_dirs.end());
    // Each load takes its own copy, made before the clock starts.
    std::unique_ptr<Model> copy;
    add(name, compile_ms, dirs, [&](const RuntimeOptions& options) -> Loader {
      copy = std::make_unique<Model>(compiled->model);
      return [&copy, options] {
        return Runtime::LoadModel(std::move(*copy), options);
      };
    });
  }
  return m;
}

void ComputeRatios(ModelResult* m) {
  const ConfigResult* base = nullptr;
  for (const ConfigResult& c : m->configs) {
    if (c.error.empty()) {
      base = &c;
      break;
    }
  }
  if (base == nullptr || base->latency.median_ms <= 0) return;
  const double base_median = base->latency.median_ms;
  for (ConfigResult& c : m->configs) {
    if (c.error.empty()) c.ratio = c.latency.median_ms / base_median;
  }
}

std::string Placement(const ConfigResult& c) {
  std::string s = absl::StrCat(c.cpu_ops, " cpu");
  if (c.vendor_ops > 0) {
    absl::StrAppend(&s, ", ", c.vendor_ops, " vendor (",
                    absl::StrJoin(c.vendors, ", "), ")");
  }
  if (c.fallback_ops > 0) {
    absl::StrAppend(&s, "; ", c.fallback_ops, " dispatch op",
                    c.fallback_ops == 1 ? "" : "s", " fell back to cpu");
  }
  return s;
}

void PrintText(const std::vector<ModelResult>& models, const Settings& s,
               std::ostream& out) {
  out << "machine: " << MachineDescription() << "\n";
  out << absl::StrFormat(
      "each: load, first run, %d warm-up runs, %d timed runs; times in ms\n",
      s.warmup, s.iterations);
  for (const ModelResult& m : models) {
    out << "\nmodel: " << m.path << (m.compiled ? " (compiled)" : "") << "\n";
    if (!m.error.empty()) {
      out << "  error: " << m.error << "\n";
      continue;
    }
    out << absl::StrFormat("  %-36s %7s %9s %9s %9s %9s %9s %8s  %s\n",
                           "config", "threads", "load", "first", "median",
                           "min", "p90", "vs first", "ops");
    for (const ConfigResult& c : m.configs) {
      if (!c.error.empty()) {
        out << absl::StrFormat("  %-36s %7d  error: %s\n", c.name, c.threads,
                               c.error);
        continue;
      }
      out << absl::StrFormat(
          "  %-36s %7d %9.3f %9.3f %9.4f %9.4f %9.4f %7.2fx  %s\n", c.name,
          c.threads, c.load_ms, c.first_run_ms, c.latency.median_ms,
          c.latency.min_ms, c.latency.p90_ms, c.ratio, Placement(c));
    }
    for (const ConfigResult& c : m.configs) {
      if (c.compile_ms >= 0 && c.threads == s.threads.front()) {
        out << absl::StrFormat("  %s: on-device compile took %.3f ms\n", c.name,
                               c.compile_ms);
      }
    }
  }
}

void PrintJson(const std::vector<ModelResult>& models, const Settings& s,
               std::ostream& out) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("machine").String(MachineDescription());
  w.Key("warmup").Int(s.warmup);
  w.Key("iterations").Int(s.iterations);
  w.Key("models").BeginArray();
  for (const ModelResult& m : models) {
    w.BeginObject();
    w.Key("path").String(m.path);
    w.Key("compiled").Bool(m.compiled);
    if (!m.error.empty()) w.Key("error").String(m.error);
    w.Key("configs").BeginArray();
    for (const ConfigResult& c : m.configs) {
      w.BeginObject();
      w.Key("name").String(c.name);
      w.Key("threads").Int(c.threads);
      w.Key("ok").Bool(c.error.empty());
      if (!c.error.empty()) {
        w.Key("error").String(c.error);
        w.EndObject();
        continue;
      }
      w.Key("cpu_ops").Int(c.cpu_ops);
      w.Key("vendor_ops").Int(c.vendor_ops);
      w.Key("fallback_ops").Int(c.fallback_ops);
      w.Key("vendors").BeginArray();
      for (const std::string& v : c.vendors) w.String(v);
      w.EndArray();
      if (c.compile_ms >= 0) w.Key("compile_ms").Double(c.compile_ms);
      w.Key("load_ms").Double(c.load_ms);
      w.Key("first_run_ms").Double(c.first_run_ms);
      w.Key("runs").Int(static_cast<int64_t>(c.latency.runs));
      w.Key("median_ms").Double(c.latency.median_ms);
      w.Key("min_ms").Double(c.latency.min_ms);
      w.Key("p90_ms").Double(c.latency.p90_ms);
      w.Key("ratio").Double(c.ratio);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out << w.output() << "\n";
}

std::vector<std::string> SplitList(const std::string& s) {
  return absl::StrSplit(s, ',', absl::SkipEmpty());
}

}  // namespace

std::string MachineDescription() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (absl::StartsWith(line, "model name")) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        model = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
      }
      break;
    }
  }
  std::ifstream loadavg("/proc/loadavg");
  double l1 = 0, l5 = 0, l15 = 0;
  loadavg >> l1 >> l5 >> l15;
  return absl::StrFormat("%s (%d cores), load average %.2f %.2f %.2f", model,
                         sysconf(_SC_NPROCESSORS_ONLN), l1, l5, l15);
}

int RunBenchCommand(absl::Span<const std::string> args, std::ostream& out,
                    std::ostream& err) {
  std::string plugin_dirs, dispatch_dirs, threads = "1", vendors;
  Settings settings;
  bool json = false;
  FlagParser flags(kUsage, kDescription);
  flags.AddString("plugin-dir", &plugin_dirs,
                  "comma-separated directories of compiler plugins: one "
                  "configuration each");
  flags.AddString("dispatch-dir", &dispatch_dirs,
                  "comma-separated directories of dispatch libraries");
  flags.AddString("threads", &threads,
                  "comma-separated CPU thread counts to run each "
                  "configuration at");
  flags.AddInt("warmup", &settings.warmup, "untimed runs after the first");
  flags.AddInt("iterations", &settings.iterations, "timed runs");
  flags.AddInt("seed", &settings.seed, "seed of the random inputs");
  flags.AddString("vendor", &vendors,
                  "comma-separated vendors to use, highest priority first");
  flags.AddBool("json", &json, "print one JSON document");
  auto positional = flags.Parse(args);
  if (flags.help_requested()) {
    out << flags.Help();
    return 0;
  }
  auto usage_error = [&](const std::string& message) {
    err << "graft bench: error: " << message << "\n\n" << flags.Help();
    return 2;
  };
  if (!positional.ok()) {
    return usage_error(std::string(positional.status().message()));
  }
  if (positional->empty()) return usage_error("expected at least one MODEL");
  if (settings.warmup < 0 || settings.iterations < 1) {
    return usage_error("expected --warmup >= 0 and --iterations >= 1");
  }
  for (absl::string_view t : absl::StrSplit(threads, ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(t, &n) || n < 1) {
      return usage_error(
          absl::StrCat("--threads: expected comma-separated counts >= 1, got '",
                       threads, "'"));
    }
    settings.threads.push_back(n);
  }

  settings.vendors = SplitList(vendors);
  ProgressLine progress(STDERR_FILENO, "graft bench: ");
  settings.progress = &progress;
  std::vector<ModelResult> models;
  bool failed = false;
  ScratchDir cache;
  for (const std::string& path : *positional) {
    ModelResult m =
        BenchModel(path, SplitList(plugin_dirs), SplitList(dispatch_dirs),
                   cache.path(), settings);
    ComputeRatios(&m);
    progress.Clear();
    if (!m.error.empty()) {
      err << "graft bench: error: " << m.error << "\n";
      failed = true;
    }
    for (const ConfigResult& c : m.configs) {
      if (!c.error.empty()) {
        err << "graft bench: error: " << path << " (" << c.name << ", "
            << c.threads << " threads): " << c.error << "\n";
        failed = true;
      }
    }
    models.push_back(std::move(m));
  }
  progress.Clear();
  if (json) {
    PrintJson(models, settings, out);
  } else {
    PrintText(models, settings, out);
  }
  return failed ? 1 : 0;
}

}  // namespace graft::tools
