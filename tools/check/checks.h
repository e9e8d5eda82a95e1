// The checks of `graft check`, one kind per file, and the state they share
// (Subject). conformance.cc runs them in this order: abi, identity.plugin,
// promise (which records the models the plugin took), identity.stamp and
// identity.dispatch, determinism, misuse, dispatch robustness.
#ifndef GRAFT_TOOLS_CHECK_CHECKS_H_
#define GRAFT_TOOLS_CHECK_CHECKS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/model.h"
#include "plugins/compiler_plugin.h"
#include "tools/check/check_report.h"
#include "tools/check/conformance.h"
#include "tools/check/vendor_runs.h"

namespace graft::check {

// A model the plugin took ops of, compiled.
struct TakenModel {
  std::string name;           // "ADD [2,3] and [3], RELU" or a file name
  std::string catalog_op;     // "ADD" for a drawn model, "" for others
  uint32_t seed = 0;          // the draw's seed
  Model model;                // as offered to the plugin
  std::string compiled_path;  // the compiled model, in the scratch directory
};

// What is under test, and what earlier checks learned about it.
struct Subject {
  explicit Subject(const CheckOptions& o) : options(o) {}
  const CheckOptions& options;
  bool litert_plugin = false;  // by file name and exports
  bool litert_dispatch = false;
  // Loaded in this process (its calls run in children); null when it did
  // not load, with the reason.
  std::unique_ptr<CompilerPlugin> plugin;
  std::string load_error;
  std::string soc_model;
  // Filled by the promise check.
  std::vector<TakenModel> taken;
  // Compile failures that are the stamp's (identity.stamp reports them).
  std::vector<std::string> stamp_errors;
  ScratchDir scratch;

  // Whether check `id` was asked for (--only; a prefix selects a family).
  bool Wants(absl::string_view id) const;
  // "graft check --plugin=P [--dispatch=D] ..." + `extra`.
  std::string Repro(const std::string& extra) const;
};

// abi_checks.cc: abi.plugin.* and abi.dispatch.*: exports (optional ones
// optional), no NEEDED entry on a Graft library, ABI version, info struct
// sizes; for LiteRT plugins the LiteRT host's own requirements.
void RunAbiChecks(Subject& s, CheckReport& report);

// identity_checks.cc: identity.plugin (every info field present and
// valid), identity.stamp (the stamps of every compile, strictly:
// plugins/stamp_check.h), identity.dispatch (the dispatch library's vendor
// and format range agree with the plugin, and it accepts the stamp).
void RunPluginIdentityCheck(Subject& s, CheckReport& report);
void RunStampAndDispatchIdentityChecks(Subject& s, CheckReport& report);

// promise_checks.cc: promise.models and promise.ops: every op the plugin
// takes compiles, loads in the dispatch library with no fallback and
// matches Graft's CPU kernels.
void RunPromiseChecks(Subject& s, CheckReport& report);

// determinism.cc: determinism: the same input compiled twice gives the
// same bytes.
void RunDeterminismCheck(Subject& s, CheckReport& report);

// misuse_probes.cc: misuse.plugin and misuse.dispatch: NULL arguments,
// short and long structs, unknown SoC models, calls out of order, each
// answered with a status and no crash.
void RunMisuseChecks(Subject& s, CheckReport& report);
// A model for the plugin probes of either ABI (misuse_probes.cc,
// litert_probes.cc): one the plugin took, or a float ADD.
Model PluginProbeModel(const Subject& s);

// dispatch_robustness.cc: dispatch.bytecode (truncated and mutated
// bytecode, bad entry points and counts), dispatch.buffers (bad indices,
// wrong sizes), dispatch.threads (distinct invocations on several threads).
void RunDispatchRobustnessChecks(Subject& s, CheckReport& report);

// litert_probes.cc: the same two kinds for LiteRT-ABI libraries, as far as
// LiteRT's ABI defines the calls (a crash where it does not is warned);
// called by the two above for libLiteRt*.so.
void RunLiteRtMisuseChecks(Subject& s, CheckReport& report);
void RunLiteRtDispatchRobustnessChecks(Subject& s, CheckReport& report);

}  // namespace graft::check

#endif  // GRAFT_TOOLS_CHECK_CHECKS_H_
