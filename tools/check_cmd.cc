#include "tools/check_cmd.h"

#include <random>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tools/check/conformance.h"
#include "tools/check/op_catalog.h"
#include "tools/flags.h"

namespace graft::tools {
namespace {

constexpr char kUsage[] =
    "graft check --plugin=P [--dispatch=D] [--plugin-option=KEY=VALUE]... "
    "[--models=DIR]... [--json] [--only=CHECK,...] [--seed=N]";

constexpr char kDescription[] =
    R"(Runs the conformance checks on a vendor's compiler plugin P and, with
--dispatch, its dispatch library D: Graft-ABI (libgraft_compiler_plugin_*.so,
libgraft_dispatch_*.so) or LiteRT-ABI (libLiteRtCompilerPlugin_*.so,
libLiteRtDispatch_*.so). Every call into vendor code runs in a child
process with a time limit, so a crash or hang is a failed check.

Checks (--only takes ids or families, e.g. --only=abi,promise.ops):
  abi.plugin.{exports,needed,version,struct_sizes,load,destroy}
  abi.dispatch.{exports,needed,version,struct_sizes,load}
      exported functions (optional ones optional; LiteRT plugins without
      LiteRtCompilerPluginRegisterAllTransformations warned: LiteRT's own
      host refuses them), no NEEDED Graft library, ABI version, info sizes,
      whether Graft's loader takes the library, and the plugin's destroy
  identity.plugin     info fields present and valid, its SoC model accepted
  identity.stamp      every compile's stamp complete and consistent
  identity.dispatch   the dispatch library's vendor and bytecode formats
                      match the plugin, and it accepts the stamp
  promise.models      every model of --models DIR (default: built-in
                      models): what the plugin takes compiles, loads in the
                      dispatch library with no CPU fallback and matches
                      Graft's CPU kernels
  promise.ops         the same over --draws drawn one-op models of each
                      catalogue op (shapes, dtypes, attributes,
                      quantization); draw k uses seed + k
  determinism         the same model compiled twice, in one process and in
                      two, gives the same bytes
  misuse.plugin, misuse.dispatch
                      NULL arguments, short and long structs, unknown SoC
                      models, calls out of order: a status, no crash (for
                      LiteRT-ABI libraries a crash where LiteRT's ABI leaves
                      the call undefined is warned)
  dispatch.bytecode   truncated and mutated bytecode, a missing entry point,
                      wrong input/output counts: a status, no crash or hang
  dispatch.buffers    bad indices, kinds and buffer sizes: a status
  dispatch.threads    distinct invocations run on 4 threads at once give
                      the single-threaded outputs

Tolerances (dispatch/tolerance.h): float32 within FloatToleranceFor the
--precision the vendor computes in (fp32 by default; bf16 for a vendor that
rounds to bfloat16, such as Intel OpenVINO's CPU path) and the op's
reduction length; quantized outputs within --quantized-lsb units; other
types exact.

Each failed check prints the command that reproduces it. Exit status: 0
every check passed (warnings allowed), 1 a check failed, 2 bad usage.)";

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(s, ',', absl::SkipEmpty())) {
    out.emplace_back(part);
  }
  return out;
}

}  // namespace

int RunCheckCommand(absl::Span<const std::string> args, std::ostream& out,
                    std::ostream& err) {
  check::CheckOptions options;
  std::string only, ops;
  std::vector<std::string> plugin_options;
  int64_t seed = -1, draws = options.draws, lsb = options.quantized_lsb;
  int64_t timeout_s = 60;
  std::string precision = "fp32";
  bool json = false;
  FlagParser flags(kUsage, kDescription);
  flags.AddString("plugin", &options.plugin_path,
                  "the compiler plugin library to check (required)");
  flags.AddString("dispatch", &options.dispatch_path,
                  "the dispatch library that runs its bytecode");
  flags.AddRepeated("plugin-option", &plugin_options,
                    "KEY=VALUE the plugin is created with (repeatable), as "
                    "graft apply passes it");
  flags.AddRepeated("models", &options.model_dirs,
                    "a directory of .tflite models for promise.models "
                    "(repeatable; default: built-in models)");
  flags.AddBool("json", &json, "print the report as one JSON document");
  flags.AddString("only", &only, "comma-separated check ids or families");
  flags.AddString("ops", &ops,
                  "comma-separated catalogue ops for promise.ops (ADD, "
                  "CONV_2D/int8, ...; default: all)");
  flags.AddInt("seed", &seed,
               "seed of the drawn models and inputs "
               "(default: a fresh one, printed)");
  flags.AddInt("draws", &draws, "drawn models per catalogue op");
  flags.AddString("soc-model", &options.soc_model,
                  "the SoC model to compile for (default: the plugin's "
                  "first)");
  flags.AddInt("quantized-lsb", &lsb,
               "units in the last place a quantized output may differ");
  flags.AddString("precision", &precision,
                  "what the vendor computes float32 in: fp32 (default), "
                  "fp16 or bf16; float32 outputs are compared under that "
                  "format's tolerance");
  flags.AddInt("timeout", &timeout_s,
               "seconds one vendor call may take before it counts as a hang");
  auto positional = flags.Parse(args);
  if (flags.help_requested()) {
    out << flags.Help();
    return 0;
  }
  auto usage_error = [&](const std::string& message) {
    err << "graft check: error: " << message << "\n\n" << flags.Help();
    return 2;
  };
  if (!positional.ok()) {
    return usage_error(std::string(positional.status().message()));
  }
  if (!positional->empty()) {
    return usage_error(absl::StrCat("unexpected argument '", (*positional)[0],
                                    "' (the plugin is --plugin=P)"));
  }
  if (options.plugin_path.empty()) return usage_error("--plugin is required");
  if (draws < 1 || draws > 1000) return usage_error("--draws must be 1-1000");
  if (lsb < 0) return usage_error("--quantized-lsb must be >= 0");
  if (timeout_s < 1) return usage_error("--timeout must be >= 1");
  if (!ParseFloatPrecision(precision, &options.precision)) {
    return usage_error(absl::StrCat("--precision: '", precision,
                                    "' is not fp32, fp16 or bf16"));
  }
  if (seed < -1 || seed > 0xffffffffLL) {
    return usage_error("--seed must be 0-4294967295");
  }
  for (const std::string& kv : plugin_options) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return usage_error(
          absl::StrCat("--plugin-option: '", kv, "' is not KEY=VALUE"));
    }
    options.plugin_options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  options.only = SplitList(only);
  options.ops = SplitList(ops);
  for (const std::string& op : options.ops) {
    bool known = false;
    for (const check::CatalogOp& c : check::Catalog()) known |= c.name == op;
    if (!known) {
      std::string names;
      for (const check::CatalogOp& c : check::Catalog()) {
        absl::StrAppend(&names, names.empty() ? "" : ", ", c.name);
      }
      return usage_error(absl::StrCat("--ops: unknown op '", op,
                                      "'; the catalogue has ", names));
    }
  }
  options.seed = seed >= 0 ? static_cast<uint32_t>(seed)
                           : std::random_device{}() % 1000000;
  options.draws = static_cast<int>(draws);
  options.quantized_lsb = static_cast<int>(lsb);
  options.timeout = absl::Seconds(timeout_s);
  options.command = absl::StrCat("graft check --plugin=", options.plugin_path);
  if (!options.dispatch_path.empty()) {
    absl::StrAppend(&options.command, " --dispatch=", options.dispatch_path);
  }
  for (const std::string& kv : plugin_options) {
    absl::StrAppend(&options.command, " --plugin-option=", kv);
  }
  for (const std::string& dir : options.model_dirs) {
    absl::StrAppend(&options.command, " --models=", dir);
  }
  if (!options.soc_model.empty()) {
    absl::StrAppend(&options.command, " --soc-model=", options.soc_model);
  }
  if (options.precision != FloatPrecision::kFloat32) {
    absl::StrAppend(&options.command, " --precision=",
                    FloatPrecisionName(options.precision));
  }
  check::CheckReport report = check::RunConformance(options);
  if (json) {
    report.PrintJson(out);
  } else {
    report.PrintText(out);
  }
  return report.failed() ? 1 : 0;
}

}  // namespace graft::tools
