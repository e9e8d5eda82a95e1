// The app C API's start-up cost (issue 18's target: no registration work at
// start-up, and load-to-first-inference well under a millisecond plus the
// model's own time), through libgraft.so as an app links it.
//
// Benchmarks, per model (small models from test_models/ by default):
//   first_inference/<model>  graft_model_create_from_file, find the default
//                            entry point, set every input, one invoke,
//                            graft_model_destroy: what an app pays before
//                            its first result (file in the page cache).
//   invoke/<model>           one invoke of the loaded model: the model's
//                            own time.
// and once:
//   process/baseline         fork + exec + exit of a C program that links
//                            libc only (bench/app_start.c, built twice);
//   process/libgraft         the same program linked with libgraft.so,
//                            calling graft_version(): the difference is
//                            what loading libgraft.so costs a process
//                            (dynamic linking and every static
//                            initializer it runs).
// main() then prints the machine line and, per model, the medians and the
// overhead: first_inference - invoke.
//
// Flags besides Google Benchmark's:
//   --graft_models=PATH,...  models to measure
// Defaults added unless given: --benchmark_repetitions=5,
// --benchmark_display_aggregates_only=true.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "benchmark/benchmark.h"
#include "c_api/graft_app.h"

extern char** environ;

namespace {

using graft::bench::HumanTime;

// Aborts the benchmark run with Graft's message when `status` is an error.
bool Ok(benchmark::State& state, graft_status_t* status, const char* what) {
  if (status == nullptr) return true;
  std::string message = std::string(what) + ": " + status->message;
  graft_status_release(status);
  state.SkipWithError(message.c_str());
  return false;
}

// Loads `path` and returns its default entry point with every input set to
// zeros, or nullptr after SkipWithError.
graft_model_t* LoadAndFill(benchmark::State& state, const std::string& path,
                           graft_signature_t** sig) {
  graft_model_t* model = nullptr;
  if (!Ok(state, graft_model_create_from_file(path.c_str(), nullptr, &model),
          "load")) {
    return nullptr;
  }
  const char* key = nullptr;
  graft_signature_t* first = nullptr;
  if (graft_model_signature_count(model) > 0) {
    if (!Ok(state, graft_model_get_signature(model, 0, &first), "signature")) {
      graft_model_destroy(model);
      return nullptr;
    }
    key = graft_signature_key(first);
  }
  if (!Ok(state, graft_model_find_signature(model, key, sig), "signature")) {
    graft_model_destroy(model);
    return nullptr;
  }
  for (size_t i = 0; i < graft_signature_input_count(*sig); ++i) {
    void* data = nullptr;
    size_t size = 0;
    if (!Ok(state, graft_signature_get_input_buffer(*sig, i, &data, &size),
            "input")) {
      graft_model_destroy(model);
      return nullptr;
    }
    std::memset(data, 0, size);
  }
  return model;
}

void FirstInference(benchmark::State& state, const std::string& path) {
  for (auto _ : state) {
    graft_signature_t* sig = nullptr;
    graft_model_t* model = LoadAndFill(state, path, &sig);
    if (model == nullptr) return;
    bool ok = Ok(state, graft_signature_invoke(sig), "invoke");
    graft_model_destroy(model);
    if (!ok) return;
  }
}

void Invoke(benchmark::State& state, const std::string& path) {
  graft_signature_t* sig = nullptr;
  graft_model_t* model = LoadAndFill(state, path, &sig);
  if (model == nullptr) return;
  for (auto _ : state) {
    if (!Ok(state, graft_signature_invoke(sig), "invoke")) break;
  }
  graft_model_destroy(model);
}

// fork + exec + wait of `program`.
void Process(benchmark::State& state, const std::string& program) {
  char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
  for (auto _ : state) {
    pid_t pid = 0;
    if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, environ) !=
        0) {
      state.SkipWithError(("cannot start " + program).c_str());
      return;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError((program + " failed").c_str());
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> models = {
      GRAFT_SOURCE_DIR "/test_models/residual_mlp.tflite",
      GRAFT_SOURCE_DIR "/test_models/generated/audio_conv1d_int8.tflite",
      GRAFT_SOURCE_DIR "/test_models/generated/two_signatures_float.tflite"};
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    constexpr const char kModels[] = "--graft_models=";
    if (std::strncmp(argv[i], kModels, sizeof(kModels) - 1) == 0) {
      models =
          absl::StrSplit(argv[i] + sizeof(kModels) - 1, ',', absl::SkipEmpty());
    } else {
      args.push_back(argv[i]);
    }
  }
  int args_count = static_cast<int>(args.size());
  if (!graft::bench::InitializeWithMedians(&args_count, args.data())) return 2;

  std::vector<std::string> names;
  for (const std::string& path : models) {
    std::string name = std::filesystem::path(path).stem().string();
    names.push_back(name);
    benchmark::RegisterBenchmark(("first_inference/" + name).c_str(),
                                 FirstInference, path)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("invoke/" + name).c_str(), Invoke, path)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("process/baseline", Process,
                               std::string(GRAFT_APP_START_BASELINE))
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("process/libgraft", Process,
                               std::string(GRAFT_APP_START_LIBGRAFT))
      ->Unit(benchmark::kMicrosecond);

  graft::bench::MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto& rows = reporter.rows();
  auto median = [&](const std::string& name) {
    auto it = rows.find(name);
    return it == rows.end() ? -1.0 : it->second.seconds;
  };
  std::printf("\n%s\nlibgraft %s, medians:\n",
              graft::bench::MachineDescription().c_str(), graft_version());
  std::printf("%-28s %16s %12s %12s\n", "model", "first inference", "invoke",
              "overhead");
  for (const std::string& name : names) {
    double first = median("first_inference/" + name);
    double invoke = median("invoke/" + name);
    if (first < 0 || invoke < 0) continue;
    std::printf("%-28s %16s %12s %12s\n", name.c_str(),
                HumanTime(first).c_str(), HumanTime(invoke).c_str(),
                HumanTime(first - invoke).c_str());
  }
  double base = median("process/baseline");
  double with = median("process/libgraft");
  if (base >= 0 && with >= 0) {
    std::printf("process start: %s without libgraft.so, %s with (+%s)\n",
                HumanTime(base).c_str(), HumanTime(with).c_str(),
                HumanTime(with - base).c_str());
  }
  return 0;
}
