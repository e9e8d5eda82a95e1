// Several targets in one `graft apply` (`--target=VENDOR[:SOC_MODEL]`,
// repeatable): the target specs, and the output path of each target.
//
// A target is one vendor's compiler plugin and one SoC model it compiles
// for, as in LiteRT's AOT tooling (litert.python.aot's aot_compile: one
// backend and SoC model per target, "all" SoC models of a backend when none
// is named, one output file per target named after the model and the
// target). Each target gets a compiled model of its own, holding that
// vendor's dispatch ops and the CPU's ops; a model meant for several
// vendors at once is the one-target form (`--vendor=a,b`).
#ifndef GRAFT_TOOLS_APPLY_TARGETS_H_
#define GRAFT_TOOLS_APPLY_TARGETS_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/file_util.h"
#include "plugins/apply.h"
#include "tools/apply_cmd.h"

namespace graft::tools {

// The SoC model that stands for every SoC model the vendor's plugin lists.
inline constexpr char kAllSocModels[] = "all";

struct ApplyTarget {
  std::string vendor;
  // A SoC model the plugin lists; "" for the plugin's default (the first it
  // lists); kAllSocModels for each it lists (expanded once it is loaded).
  std::string soc_model;

  // "xnnpack" or "IntelOpenVINO:LNL", as the user writes it.
  std::string Name() const;
  bool operator==(const ApplyTarget& other) const {
    return vendor == other.vendor && soc_model == other.soc_model;
  }
};

// Parses the --target occurrences, each "VENDOR[:SOC_MODEL]" or a
// comma-separated list of them, in the order given. InvalidArgument, naming
// the spec, for: an empty list, an empty vendor or SoC model ("xnnpack:"),
// more than one ':', a character other than [A-Za-z0-9._-] in the vendor,
// or a target given twice.
absl::StatusOr<std::vector<ApplyTarget>> ParseTargets(
    absl::Span<const std::string> occurrences);

// `text` with every character other than [A-Za-z0-9._-] replaced by '_',
// so it is a file name on every filesystem.
std::string SafeFileNamePart(const std::string& text);

// Checks the -o of a multi-target apply: "" (outputs beside the model), a
// directory, or a pattern (a path holding '{') whose placeholders are among
// {model}, {vendor}, {soc_model}, {target}. InvalidArgument, naming the
// placeholder, otherwise.
absl::Status CheckOutputPattern(const std::string& output);

// Where target (`vendor`, resolved `soc_model`) of `model_path` is written:
// - `output` empty: beside the model, <model>_<vendor>_<soc_model><suffix>;
// - `output` a pattern: each placeholder replaced ({model}: the model's
//   file name without .tflite; {target}: <vendor>_<soc_model>);
// - else `output` is a directory holding <model>_<vendor>_<soc_model><suffix>.
// The suffix is the mode's (.compiled.tflite, .partitioned.tflite, .modules);
// substituted names go through SafeFileNamePart.
std::string TargetOutputPath(const std::string& output,
                             const std::string& model_path,
                             const std::string& vendor,
                             const std::string& soc_model, ApplyMode mode);

// `graft apply --target=...`: the model loaded and parsed once; each
// vendor's plugin library loaded once; per target a plugin instance of its
// own, a copy of the parsed model, ApplyPlugins and an atomic write. A
// target that fails does not stop the others. The text or JSON report goes
// to `out`, errors to `err`; returns the exit status (0, or 1 if any
// target failed).
int RunApplyTargets(const std::vector<ApplyTarget>& specs,
                    const std::string& model_path, ApplyMode mode,
                    const std::string& mode_name, const std::string& output,
                    const PluginSelection& selection, bool cpu_fallback,
                    Durability durability, bool json, std::ostream& out,
                    std::ostream& err);

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_APPLY_TARGETS_H_
