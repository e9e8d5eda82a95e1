// The apply pipeline: ask compiler plugins which ops they take, group the
// taken ops into partitions, outline each partition into a subgraph, have the
// plugins compile them, and embed the bytecode as dispatch ops (format in
// core/compiled_format.h).
#ifndef GRAFT_PLUGINS_APPLY_H_
#define GRAFT_PLUGINS_APPLY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/bytes.h"
#include "core/model.h"
#include "plugins/compiler_plugin.h"

namespace graft {

enum class ApplyMode {
  // Load and save only.
  kNoop,
  // Outline the partitions (custom ops kPartitionCustomCode that run the
  // outlined subgraph); no compiling.
  kPartition,
  // Outline and compile, returning the modules; the model is not embedded.
  kCompile,
  // Everything: the compiled model.
  kApply,
};

// Custom code of an uncompiled partition op (kPartition mode): options as
// DispatchOpOptions with no module; runtimes run its fallback subgraph.
inline constexpr char kPartitionCustomCode[] = "GRAFT_PARTITION";

struct ApplyOptions {
  ApplyMode mode = ApplyMode::kApply;
  // The SoC model to compile for; empty: each plugin's first SoC model.
  std::string soc_model;
  // If set, called on the applying thread before each step that may take
  // long, with one line for a progress display: "xnnpack: partitioning
  // subgraph 0 (64 ops)", "IntelOpenVINO: compiling 7 partitions (290
  // ops)" (a vendor compiles all its partitions in one call, so there is no
  // finer step to report).
  std::function<void(const std::string&)> progress;
  // kApply: keep each partition's original ops (and their weights) as a
  // subgraph its dispatch op falls back to when the vendor's dispatch
  // library is missing or refuses it. Without, the compiled model is about
  // the size of the vendor's bytecode (what LiteRT's tools write) but runs
  // only where the vendor's dispatch library does.
  bool cpu_fallback = true;
};

// What happened to one op of the input model.
struct OpApplyReport {
  SubgraphId subgraph = 0;
  OpId op = 0;
  std::string name;
  // The vendor that took it ("" if none) and its partition (index into
  // ApplyReport::partitions, or -1).
  std::string taken_by;
  int32_t partition = -1;
  // Each plugin that did not take it, with its reason.
  struct Refusal {
    std::string vendor;
    int32_t reason_code;
    std::string reason;
  };
  std::vector<Refusal> refusals;
};

struct PartitionReport {
  std::string vendor;
  SubgraphId source_subgraph = 0;
  SubgraphId outlined_subgraph = -1;
  // Ops of the source subgraph it holds (ids before outlining).
  std::vector<OpId> ops;
  // After compiling: the entry point and the module (index into
  // ApplyReport::modules).
  std::string entry_point;
  int32_t module = -1;
};

struct CompiledModule {
  std::string vendor;
  Bytes bytes;
  // The model buffer holding it (kApply), else 0.
  uint32_t buffer = 0;
};

struct ApplyReport {
  struct Plugin {
    std::string vendor, plugin_version, soc_model, path;
  };
  std::vector<Plugin> plugins;
  std::vector<OpApplyReport> ops;
  std::vector<PartitionReport> partitions;
  std::vector<CompiledModule> modules;
  // The names of the composite ops no plugin took that were replaced by
  // their decomposition's ops, so the plugins could take those (see
  // ApplyPlugins).
  std::vector<std::string> inlined_composites;
  int64_t ops_total = 0;
  int64_t ops_taken = 0;
  int64_t bytecode_bytes = 0;
  double seconds = 0;
  // Where the time went: asking plugins to partition (including building
  // their graph views), grouping, outlining, compiling (plugin time),
  // embedding.
  struct Phases {
    double partition = 0, group = 0, outline = 0, compile = 0, embed = 0;
  } phases;

  // "12/15 ops taken (80%) in 2 partitions; 1 module, 1.2 KiB of bytecode;
  // 3 ms", plus one line per op not taken by anyone, grouped by reason.
  std::string Summary() const;
};

// Applies `plugins` (in priority order: an op taken by an earlier plugin is
// not offered to later ones' partitions) to `model` in place.
//
// Composites (STABLEHLO_COMPOSITE) are treated as LiteRT's host treats them,
// so a LiteRT plugin takes the same ops from Graft as from LiteRT: a
// composite's decomposition subgraph is not offered to the plugins on its
// own; a composite no plugin takes is replaced by its decomposition's ops
// (core/inline.h) and its subgraph offered again, so its ops can join their
// neighbours' partitions; decomposition subgraphs nothing calls any more
// are removed (the report's subgraph ids are those of the model after
// that). A composite named odml.cpu_call is never taken nor inlined.
//
// Fails, leaving `model` in an unspecified state (callers work on a copy or
// reload), when: the model was already compiled by Graft; a plugin cannot
// target the SoC model; a plugin fails or returns something malformed (the
// message names the vendor and the subgraph or partition).
absl::StatusOr<ApplyReport> ApplyPlugins(
    Model& model, absl::Span<CompilerPlugin* const> plugins,
    const ApplyOptions& options);

}  // namespace graft

#endif  // GRAFT_PLUGINS_APPLY_H_
