#include "tools/run_cmd.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/file_util.h"
#include "core/status.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "dispatch/string_tensor.h"
#include "plugins/on_device.h"
#include "tools/apply_cmd.h"
#include "tools/flags.h"
#include "tools/json_writer.h"
#include "tools/chrome_trace.h"
#include "tools/model_explorer.h"
#include "tools/placement_map.h"
#include "tools/placement_page.h"
#include "tools/progress.h"

namespace graft::tools {
namespace {

constexpr char kUsage[] =
    "graft run MODEL [--input=NAME_OR_INDEX=FILE.npy,...] [--seed=N]\n"
    "          [--input-shape=NAME_OR_INDEX=DxDx...,...]\n"
    "          [--output-dir=DIR] [--iterations=N] [--threads=N]\n"
    "          [--dispatch-dir=DIR] [--plugin-dir=DIR [--cache-dir=DIR]]\n"
    "          [--vendor=V[,V]]\n"
    "          [--require-accelerator | --require-vendor-ops] "
    "[--signature=KEY]\n"
    "          [--profile] [--json] [--report-html=FILE] [--trace=FILE]\n"
    "          [--node-data=FILE]";

constexpr char kDescription[] =
    "Loads MODEL in Graft's dispatch runtime: dispatch ops run on the "
    "dispatch library of the vendor the model's manifest names (found in "
    "--dispatch-dir), every other op on Graft's CPU kernels. With "
    "--plugin-dir an uncompiled model is first compiled on the device by the "
    "plugins there (cached in --cache-dir); when several plugins take an "
    "op, the vendor first in --vendor=a,b gets it (without --vendor: every "
    "plugin there, dedicated accelerators first, NPU then GPU then DSP, "
    "then CPU backends such as xnnpack; ties by vendor name). --vendor also "
    "limits the dispatch libraries used to those vendors. The default "
    "plugin and dispatch directory is vendor_libs/ beside the graft binary, "
    "which holds the real vendors, not the teaching vendor 'example' "
    "(build/vendors/example). Inputs are .npy files or seeded "
    "random values; outputs are summarized or written as .npy files. "
    "--iterations N times N runs and prints min, median and p90 latency; "
    "--profile adds a table of where those runs spent their time, op by op "
    "(sorted by time) and per op type, then the placement map: every op of "
    "the model as graft apply was given it, where it ran (vendor, cpu, cpu "
    "fallback), which op of the compiled model ran it, and its time; a "
    "vendor's time for a dispatch op is split evenly among the ops it "
    "replaced (marked '~', attributed, not measured) unless its dispatch "
    "library reports its own time per instruction, which the plugin's debug "
    "map (in the manifest) names the op of (marked '=', measured by the "
    "vendor). --json includes the map; --report-html=FILE writes it as one "
    "self-contained HTML page (the graph coloured by where each op ran, "
    "why ops were not taken, times); --trace=FILE writes the profiled runs "
    "as Chrome trace JSON (Perfetto, chrome://tracing); --node-data=FILE "
    "writes the placement as Model Explorer node data.";

}  // namespace

void FillRandom(Tensor* t, std::mt19937& rng) {
  const int64_t n = t->num_elements();
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  switch (t->type) {
    case tfl::TensorType_FLOAT32:
      for (int64_t i = 0; i < n; ++i) t->data<float>()[i] = unit(rng);
      break;
    case tfl::TensorType_INT8:
      for (int64_t i = 0; i < n; ++i)
        t->data<int8_t>()[i] = static_cast<int8_t>(rng() % 256 - 128);
      break;
    case tfl::TensorType_UINT8:
      for (int64_t i = 0; i < n; ++i)
        t->data<uint8_t>()[i] = static_cast<uint8_t>(rng() % 256);
      break;
    case tfl::TensorType_INT16:
      for (int64_t i = 0; i < n; ++i)
        t->data<int16_t>()[i] = static_cast<int16_t>(rng() % 2001 - 1000);
      break;
    case tfl::TensorType_INT32:
      for (int64_t i = 0; i < n; ++i)
        t->data<int32_t>()[i] = static_cast<int32_t>(rng() % 10);
      break;
    case tfl::TensorType_INT64:
      for (int64_t i = 0; i < n; ++i)
        t->data<int64_t>()[i] = static_cast<int64_t>(rng() % 10);
      break;
    case tfl::TensorType_BOOL:
      for (int64_t i = 0; i < n; ++i) t->data<uint8_t>()[i] = rng() % 2;
      break;
    default:
      std::fill(t->raw_data, t->raw_data + t->bytes, 0);
  }
}

namespace {

// "1x16 FLOAT32  min -0.41 max 0.93 mean 0.06  [0.12, -0.41, ...]"
std::string Summarize(const Tensor& t) {
  std::string shape;
  for (int i = 0; i < t.rank(); ++i)
    absl::StrAppend(&shape, i ? "x" : "", t.dim(i));
  if (shape.empty()) shape = "scalar";
  std::string out = absl::StrCat(shape, " ", TensorTypeName(t.type));
  const int64_t n = t.num_elements();
  if (t.type == tfl::TensorType_STRING) {
    auto strings = UnpackStrings(absl::MakeConstSpan(t.raw_data, t.bytes));
    if (!strings.ok())
      return absl::StrCat(out, "  (", strings.status().message(), ")");
    absl::StrAppend(&out, "  [");
    for (size_t i = 0; i < std::min<size_t>(strings->size(), 6); ++i) {
      absl::StrAppend(&out, i ? ", " : "", "\"", absl::CEscape((*strings)[i]),
                      "\"");
    }
    absl::StrAppend(&out, strings->size() > 6 ? ", ...]" : "]");
    return out;
  }
  auto value = [&](int64_t i) -> double {
    switch (t.type) {
      case tfl::TensorType_FLOAT32:
        return t.data<float>()[i];
      case tfl::TensorType_INT8:
        return t.data<int8_t>()[i];
      case tfl::TensorType_UINT8:
        return t.data<uint8_t>()[i];
      case tfl::TensorType_INT16:
        return t.data<int16_t>()[i];
      case tfl::TensorType_INT32:
        return t.data<int32_t>()[i];
      case tfl::TensorType_INT64:
        return static_cast<double>(t.data<int64_t>()[i]);
      case tfl::TensorType_BOOL:
        return t.data<uint8_t>()[i];
      default:
        return NAN;
    }
  };
  if (n <= 0 || std::isnan(value(0))) return out;
  double lo = value(0), hi = value(0), sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = value(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  absl::StrAppendFormat(&out, "  min %.6g max %.6g mean %.6g  [", lo, hi,
                        sum / n);
  for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i) {
    absl::StrAppendFormat(&out, "%s%.6g", i ? ", " : "", value(i));
  }
  absl::StrAppend(&out, n > 6 ? ", ...]" : "]");
  return out;
}

}  // namespace

LatencyStats SummarizeLatency(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto percentile = [&](double p) {
    size_t i = static_cast<size_t>(p * (ms.size() - 1) + 0.5);
    return ms[std::min(i, ms.size() - 1)];
  };
  LatencyStats s;
  s.runs = ms.size();
  s.min_ms = ms.front();
  s.median_ms = percentile(0.5);
  s.p90_ms = percentile(0.9);
  return s;
}

// The placement of every op (callees nested), as JSON.
void OpsJson(const SubgraphReport& r, JsonWriter& j) {
  j.BeginObject().Key("subgraph").Int(r.subgraph).Key("name").String(r.name);
  j.Key("ops").BeginArray();
  for (const OpReport& o : r.ops) {
    j.BeginObject().Key("op").Int(o.op_index).Key("name").String(o.op_name);
    j.Key("where").String(WhereName(o.where)).Key("detail").String(o.detail);
    if (!o.callee.empty()) {
      j.Key("callee").BeginArray();
      for (const SubgraphReport& c : o.callee) OpsJson(c, j);
      j.EndArray();
    }
    j.EndObject();
  }
  j.EndArray().EndObject();
}

std::string RunJson(const std::string& path, double load_ms, Signature& sig,
                    const std::vector<std::string>& given, int64_t seed,
                    const std::vector<Tensor>& outputs,
                    const RuntimeReport& report, const LatencyStats& latency,
                    const absl::StatusOr<PlacementMap>& map) {
  JsonWriter j(2);
  j.BeginObject().Key("model").String(path).Key("load_ms").Double(load_ms);
  auto tensor = [&](const std::string& name, const Tensor& t) {
    j.BeginObject().Key("name").String(name);
    j.Key("type").String(TensorTypeName(t.type)).Key("shape").BeginArray();
    for (int d = 0; d < t.rank(); ++d) j.Int(t.dim(d));
    j.EndArray().Key("summary").String(Summarize(t));
  };
  j.Key("inputs").BeginArray();
  for (size_t i = 0; i < sig.num_inputs(); ++i) {
    tensor(sig.input_name(i), *sig.input(i));
    j.Key("source").String(
        given[i].empty() ? absl::StrCat("random, seed ", seed) : given[i]);
    j.EndObject();
  }
  j.EndArray().Key("outputs").BeginArray();
  for (size_t i = 0; i < sig.num_outputs(); ++i) {
    tensor(sig.output_name(i), outputs[i]);
    j.EndObject();
  }
  j.EndArray().Key("placement").BeginObject();
  for (OpReport::Where w : {OpReport::Where::kCpu, OpReport::Where::kFolded,
                            OpReport::Where::kVendor, OpReport::Where::kCall,
                            OpReport::Where::kFallback}) {
    j.Key(WhereName(w)).Int(report.CountOps(w));
  }
  j.EndObject().Key("subgraphs").BeginArray();
  for (const SubgraphReport& r : report.subgraphs) OpsJson(r, j);
  j.EndArray().Key("warnings").BeginArray();
  for (const std::string& w : report.warnings) j.String(w);
  j.EndArray().Key("latency_ms").BeginObject();
  j.Key("runs").Int(latency.runs).Key("min").Double(latency.min_ms);
  j.Key("median").Double(latency.median_ms).Key("p90").Double(latency.p90_ms);
  j.EndObject().Key("placement_map");
  if (map.ok()) {
    PlacementMapJson(*map, j);
  } else {
    j.Null().Key("placement_map_error").String(map.status().message());
  }
  j.EndObject();
  return j.output();
}

int RunRunCommand(absl::Span<const std::string> args, std::ostream& out,
                  std::ostream& err) {
  std::string inputs_flag, output_dir,
      dispatch_dir = DefaultPluginDir(), plugin_dir, cache_dir, signature_key,
      vendors, report_html, trace_file, node_data_file;
  std::string shapes_flag, soc_model;
  std::vector<std::string> plugin_options;
  int64_t seed = 1, iterations = 1, threads = 1;
  bool require_accelerator = false, require_vendor_ops = false, profile = false,
       json = false;
  FlagParser flags(kUsage, kDescription);
  flags.AddString("input", &inputs_flag,
                  "comma-separated NAME_OR_INDEX=FILE.npy; others are random");
  flags.AddString("input-shape", &shapes_flag,
                  "comma-separated NAME_OR_INDEX=DxDx... shapes for inputs the "
                  "model leaves dynamic (-1); an .npy input of another shape "
                  "resizes its input too");
  flags.AddInt("seed", &seed, "seed of the random inputs");
  flags.AddString("output-dir", &output_dir,
                  "write each output as NAME.npy here (characters other than "
                  "[A-Za-z0-9_.-] as '_'; output_<i>.npy if unnamed)");
  flags.AddInt("iterations", &iterations, "timed runs (after one warm-up run)");
  flags.AddInt("threads", &threads, "CPU kernel threads");
  flags.AddString(
      "dispatch-dir", &dispatch_dir,
      "directory of libgraft_dispatch_<vendor>.so (Graft vendors) and "
      "libLiteRtDispatch_<Vendor>.so (LiteRT vendors)");
  flags.AddString("plugin-dir", &plugin_dir,
                  "compile on the device with the compiler plugins here");
  flags.AddString("cache-dir", &cache_dir, "on-device compile cache");
  flags.AddString("vendor", &vendors,
                  "comma-separated vendors to use, highest priority first "
                  "(on-device compile and dispatch libraries)");
  flags.AddRepeated("plugin-option", &plugin_options,
                    "KEY=VALUE for the on-device compile's plugins (LiteRT "
                    "plugins: apply_plugin's flag names, e.g. "
                    "intel_openvino_graph_backends=cpu)");
  flags.AddString("soc-model", &soc_model,
                  "SoC model the on-device compile targets (default: each "
                  "plugin's first)");
  flags.AddBool("json", &json,
                "print one JSON document (inputs, outputs, placement of every "
                "op, warnings, latency) instead of text");
  flags.AddString("signature", &signature_key,
                  "signature to run (default: subgraph 0)");
  flags.AddBool("require-accelerator", &require_accelerator,
                "fail, listing them, if any op would run on CPU");
  flags.AddBool("require-vendor-ops", &require_vendor_ops,
                "fail, listing them, if an op compiled for a vendor would run "
                "on CPU (ops no vendor took still run there)");
  flags.AddString("report-html", &report_html,
                  "write the placement map (with --profile: and times) as a "
                  "self-contained HTML page to FILE");
  flags.AddString("trace", &trace_file,
                  "with --profile: write the timed runs as Chrome trace JSON "
                  "(one event per op per run, a vendor's own spans inside "
                  "its dispatch op) to FILE");
  flags.AddString("node-data", &node_data_file,
                  "write where each op ran (with --profile: its time) as "
                  "Model Explorer node data JSON to FILE");
  flags.AddBool(
      "profile", &profile,
      "time every op of the timed runs and print where the time went");
  auto positional = flags.Parse(args);
  if (flags.help_requested()) {
    out << flags.Help();
    return 0;
  }
  auto fail = [&](const absl::Status& s, int code) {
    err << "graft run: error: " << s.message() << "\n";
    return code;
  };
  if (!positional.ok()) return fail(positional.status(), 2);
  if (positional->size() != 1 || iterations < 1 || threads < 1) {
    err << "graft run: error: expected one MODEL, --iterations >= 1 and "
           "--threads >= 1\n\n"
        << flags.Help();
    return 2;
  }
  const std::string& path = positional->front();
  if (!trace_file.empty() && !profile) {
    return fail(absl::InvalidArgumentError(
                    "--trace needs --profile (the trace is of the profiled "
                    "runs)"),
                2);
  }

  RuntimeOptions options;
  options.num_threads = static_cast<int>(threads);
  options.profiling = profile;
  options.policy = require_accelerator  ? AcceleratorPolicy::kRequireAccelerator
                   : require_vendor_ops ? AcceleratorPolicy::kRequireVendorOps
                                        : AcceleratorPolicy::kAllowCpuFallback;
  // A directory the user named that does not exist is a mistake to say,
  // not a reason to run everything on the CPU.
  std::error_code dir_error;
  if (!dispatch_dir.empty() && dispatch_dir != DefaultPluginDir() &&
      !std::filesystem::is_directory(dispatch_dir, dir_error)) {
    return fail(absl::NotFoundError(absl::StrCat(
                    "--dispatch-dir ", dispatch_dir,
                    ": no such directory (it should hold the vendors' "
                    "dispatch libraries, libgraft_dispatch_<vendor>.so or "
                    "libLiteRtDispatch_<Vendor>.so)")),
                2);
  }
  if (!dispatch_dir.empty()) options.dispatch_dirs.push_back(dispatch_dir);
  for (absl::string_view v : absl::StrSplit(vendors, ',', absl::SkipEmpty())) {
    options.vendor_priority.emplace_back(v);
  }
  auto load_start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Runtime>> runtime;
  if (!plugin_dir.empty()) {
    OnDeviceOptions od;
    od.isolate_plugins = true;  // graft is single-threaded while compiling.
    od.plugin_dir = plugin_dir;
    od.cache_dir = cache_dir;
    od.soc_model = soc_model;
    od.vendors = options.vendor_priority;
    for (const std::string& kv : plugin_options) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        return fail(absl::InvalidArgumentError(absl::StrCat(
                        "--plugin-option: '", kv, "' is not KEY=VALUE")),
                    2);
      }
      od.plugin_options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    ProgressLine progress(STDERR_FILENO, "graft run: on-device compile: ");
    od.progress = [&progress](const std::string& step) {
      progress.Update(step);
    };
    auto compiled = CompileOnDevice(path, od);
    progress.Clear();
    if (!compiled.ok()) return fail(compiled.status(), 1);
    for (const std::string& s : compiled->skipped) {
      err << "graft run: warning: plugin skipped: " << s << "\n";
    }
    out << (compiled->cache_hit ? "on-device compile: cache hit "
                                : "on-device compile: ")
        << compiled->cache_path << "\n";
    if (compiled->priority.find('>') != std::string::npos) {
      out << "  vendor priority: " << compiled->priority << "\n";
    }
    if (!compiled->summary.empty()) out << "  " << compiled->summary;
    runtime = Runtime::LoadModel(std::move(compiled->model), options);
  } else {
    runtime = Runtime::Load(path, options);
  }
  if (!runtime.ok()) return fail(runtime.status(), 1);
  double load_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - load_start)
                       .count();
  Signature* sig = (*runtime)->main();
  if (!signature_key.empty()) {
    auto s = (*runtime)->signature(signature_key);
    if (!s.ok()) return fail(s.status(), 1);
    sig = *s;
  }

  std::mt19937 rng(static_cast<uint32_t>(seed));
  // NAME_OR_INDEX=VALUE items of a flag, by input index.
  auto per_input = [&](const std::string& flag, const std::string& text,
                       std::vector<std::string>* values) -> absl::Status {
    values->assign(sig->num_inputs(), "");
    for (absl::string_view item :
         absl::StrSplit(text, ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv =
          absl::StrSplit(item, absl::MaxSplits('=', 1));
      size_t index = sig->num_inputs();
      for (size_t i = 0; i < sig->num_inputs(); ++i) {
        if (sig->input_name(i) == kv.first || std::to_string(i) == kv.first)
          index = i;
      }
      // Without --signature, a signature's input name is accepted too when
      // that signature runs the same subgraph (the model's default one).
      for (size_t k = 0; index == sig->num_inputs() && signature_key.empty() &&
                         k < (*runtime)->num_signatures();
           ++k) {
        Signature* other = (*runtime)->signature(k);
        const Tensor* named = other->input(kv.first);
        for (size_t i = 0; named != nullptr && i < sig->num_inputs(); ++i) {
          if (sig->input(i) == named) index = i;
        }
      }
      if (index == sig->num_inputs()) {
        std::vector<std::string> valid;
        for (size_t i = 0; i < sig->num_inputs(); ++i) {
          valid.push_back(absl::StrCat(i, " '", sig->input_name(i), "'"));
        }
        return absl::InvalidArgumentError(absl::StrCat(
            "--", flag, ": the model has no input '", kv.first,
            "'; its inputs (by index or name): ", absl::StrJoin(valid, ", ")));
      }
      (*values)[index] = kv.second;
    }
    return absl::OkStatus();
  };
  std::vector<std::string> given, shape_text;
  if (absl::Status st = per_input("input", inputs_flag, &given); !st.ok()) {
    return fail(st, 2);
  }
  if (absl::Status st = per_input("input-shape", shapes_flag, &shape_text);
      !st.ok()) {
    return fail(st, 2);
  }
  std::vector<NpyArray> npys(sig->num_inputs());
  std::vector<Shape> shapes(sig->num_inputs());
  bool resize = false;
  for (size_t i = 0; i < sig->num_inputs(); ++i) {
    shapes[i] = sig->input(i)->shape;
    if (!shape_text[i].empty()) {
      Shape wanted;
      for (absl::string_view d : absl::StrSplit(shape_text[i], 'x')) {
        int32_t v = 0;
        if (!absl::SimpleAtoi(d, &v) || v < 0) {
          return fail(absl::InvalidArgumentError(
                          absl::StrCat("--input-shape: '", shape_text[i],
                                       "' is not a shape like 1x224x224x3")),
                      2);
        }
        wanted.push_back(v);
      }
      shapes[i] = wanted;
    }
    if (!given[i].empty()) {
      auto npy = ReadNpy(given[i]);
      if (!npy.ok()) return fail(npy.status(), 1);
      if (shape_text[i].empty())
        shapes[i].assign(npy->shape.begin(), npy->shape.end());
      npys[i] = *std::move(npy);
    }
    resize |= shapes[i] != sig->input(i)->shape;
  }
  if (resize) {
    if (absl::Status st = sig->ResizeInputs(shapes); !st.ok())
      return fail(st, 1);
  }
  for (size_t i = 0; i < sig->num_inputs(); ++i) {
    Tensor* t = sig->input(i);
    if (given[i].empty() && t->type == tfl::TensorType_STRING) {
      // Random lowercase words of 0 to 8 letters.
      std::vector<std::string> words(t->num_elements());
      for (std::string& w : words) {
        w.resize(rng() % 9);
        for (char& c : w) c = static_cast<char>('a' + rng() % 26);
      }
      absl::Status s =
          sig->SetInputData(i, PackStrings(absl::MakeConstSpan(words)));
      if (!s.ok()) return fail(s, 1);
      continue;
    }
    if (given[i].empty()) {
      FillRandom(t, rng);
      continue;
    }
    const NpyArray* npy = &npys[i];
    if (npy->type != t->type ||
        (t->type != tfl::TensorType_STRING && npy->data.size() != t->bytes)) {
      return fail(
          absl::InvalidArgumentError(absl::StrCat(
              given[i], ": ", TensorTypeName(npy->type), " with ",
              npy->data.size(), " bytes, but input '", sig->input_name(i),
              "' is ", TensorTypeName(t->type), " with ", t->bytes, " bytes")),
          1);
    }
    if (absl::Status s = sig->SetInputData(i, npy->data); !s.ok()) {
      return fail(
          absl::Status(s.code(), absl::StrCat(given[i], ": ", s.message())), 1);
    }
  }

  // The outputs shown and written are the first run's, what one Invoke of
  // an app gives: later runs of a model with state (an LSTM's, say) start
  // from the state the earlier ones left.
  std::vector<Tensor> outputs(sig->num_outputs());
  std::vector<std::vector<uint8_t>> output_data(sig->num_outputs());
  std::vector<double> ms;
  for (int64_t it = 0; it <= iterations; ++it) {
    auto start = std::chrono::steady_clock::now();
    absl::Status s = sig->Invoke();
    if (!s.ok()) return fail(s, 1);
    double elapsed = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (it == 0) {
      (*runtime)->ResetProfile();  // The first run is a warm-up.
      for (size_t i = 0; i < outputs.size(); ++i) {
        const Tensor* t = sig->output(i);
        output_data[i].assign(t->raw_data, t->raw_data + t->bytes);
        outputs[i] = *t;
        outputs[i].raw_data = output_data[i].data();
      }
    } else {
      ms.push_back(elapsed);
    }
  }

  // Output files first: they are written whatever the report's form.
  for (size_t i = 0; i < sig->num_outputs() && !output_dir.empty(); ++i) {
    const Tensor* t = &outputs[i];
    std::error_code ec;
    std::filesystem::create_directories(output_dir, ec);
    std::string name = sig->output_name(i);
    if (name.empty()) name = absl::StrCat("output_", i);  // unnamed tensor
    // A file name safe on every filesystem: tensor names hold ':' and '/'
    // ("StatefulPartitionedCall:0").
    for (char& c : name) {
      const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-' ||
                        c == '.';
      if (!safe) c = '_';
    }
    std::string file =
        (std::filesystem::path(output_dir) / (name + ".npy")).string();
    std::vector<int64_t> shape(t->shape.begin(), t->shape.end());
    absl::Status s = WriteNpy(file, t->type, shape,
                              absl::Span<const uint8_t>(t->raw_data, t->bytes));
    if (!s.ok()) return fail(s, 1);
  }
  const LatencyStats latency = SummarizeLatency(ms);
  const RuntimeReport report = (*runtime)->Report();
  // The placement map of the subgraph that ran.
  int32_t run_subgraph = 0;
  for (const tfl::SignatureDefT& def : (*runtime)->model().signature_defs) {
    if (!signature_key.empty() && def.signature_key == signature_key) {
      run_subgraph = static_cast<int32_t>(def.subgraph_index);
    }
  }
  const RuntimeProfile run_profile =
      profile ? (*runtime)->Profile() : RuntimeProfile{};
  const absl::StatusOr<PlacementMap> map =
      BuildPlacementMap((*runtime)->model(), report,
                        profile ? &run_profile : nullptr, run_subgraph);
  if (!report_html.empty()) {
    if (!map.ok()) return fail(map.status(), 1);
    const std::string page = PlacementMapHtml(*map, path);
    absl::Status written = WriteFileAtomically(
        report_html,
        {absl::Span<const uint8_t>(
            reinterpret_cast<const uint8_t*>(page.data()), page.size())});
    if (!written.ok()) return fail(written, 1);
  }
  auto write_text = [](const std::string& file, const std::string& text) {
    return WriteFileAtomically(
        file, {absl::Span<const uint8_t>(
                  reinterpret_cast<const uint8_t*>(text.data()), text.size())});
  };
  if (!node_data_file.empty()) {
    if (!map.ok()) return fail(map.status(), 1);
    const std::string& name = (*runtime)->model().subgraphs[run_subgraph].name;
    absl::Status written = write_text(
        node_data_file,
        ModelExplorerNodeData(
            *map,
            name.empty() ? absl::StrCat("subgraph_", run_subgraph) : name));
    if (!written.ok()) return fail(written, 1);
  }
  if (!trace_file.empty()) {
    absl::Status written = write_text(
        trace_file,
        ChromeTraceJson((*runtime)->model(), run_profile, run_subgraph));
    if (!written.ok()) return fail(written, 1);
  }
  if (json) {
    out << RunJson(path, load_ms, *sig, given, seed, outputs, report, latency,
                   map)
        << "\n";
    return 0;
  }
  out << "model: " << path << "  (loaded in "
      << absl::StrFormat("%.2f", load_ms) << " ms)\n";
  for (size_t i = 0; i < sig->num_inputs(); ++i) {
    out << "  input  " << sig->input_name(i) << ": "
        << Summarize(*sig->input(i))
        << (given[i].empty() ? absl::StrCat("  (random, seed ", seed, ")")
                             : absl::StrCat("  (", given[i], ")"))
        << "\n";
  }
  for (size_t i = 0; i < sig->num_outputs(); ++i) {
    out << "  output " << sig->output_name(i) << ": " << Summarize(outputs[i])
        << "\n";
  }
  out << report.ToString();
  out << absl::StrFormat(
      "latency over %d run%s%s: min %.3f ms, median %.3f ms, p90 %.3f ms\n",
      latency.runs, latency.runs == 1 ? "" : "s",
      profile ? " (profiling on)" : "", latency.min_ms, latency.median_ms,
      latency.p90_ms);
  if (profile) {
    out << run_profile.ToString();
    if (map.ok()) {
      out << PlacementMapText(*map);
    } else {
      out << "placement map: " << map.status().message() << "\n";
    }
  }
  if (!report_html.empty())
    out << "placement map written to " << report_html << "\n";
  if (!trace_file.empty()) out << "trace written to " << trace_file << "\n";
  if (!node_data_file.empty())
    out << "Model Explorer node data written to " << node_data_file << "\n";
  return 0;
}

}  // namespace graft::tools
