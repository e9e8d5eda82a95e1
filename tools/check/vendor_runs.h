// Running a vendor's code for `graft check`: every call into the plugin or
// dispatch library happens in a child process with a time limit
// (plugins/child_process.h), so a crash or hang is a finding, never the end
// of `graft check`. Graft's own CPU kernels run in the calling process as
// the reference.
#ifndef GRAFT_TOOLS_CHECK_VENDOR_RUNS_H_
#define GRAFT_TOOLS_CHECK_VENDOR_RUNS_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/litert_abi.h"
#include "core/model.h"
#include "dispatch/tolerance.h"
#include "graft_common.h"
#include "plugins/compiler_plugin.h"

namespace graft::check {

// What the apply pipeline made of one model with the plugin under test.
struct ApplyOutcome {
  int64_t ops_total = 0;
  int64_t ops_taken = 0;
  // One line per op not taken: "op 0 (ADD): UNSUPPORTED_OP: why".
  std::vector<std::string> refusals;
  // The compiled model's bytes; empty when nothing was taken.
  std::vector<uint8_t> compiled;
};

// Applies `plugin` (loaded in this process; its calls run in a child) to a
// copy of `model` for `soc_model` and serializes the result. Errors: the
// pipeline's (the plugin failed or answered something malformed, the
// message naming it), or the child's (crash, exit, time-out).
absl::StatusOr<ApplyOutcome> ApplyInChild(CompilerPlugin& plugin,
                                          const Model& model,
                                          const std::string& soc_model,
                                          absl::Duration timeout);

// As ApplyInChild twice in one child (so state a plugin keeps between
// compiles shows), returning "" when both serialized models are the same
// bytes, else where they first differ.
absl::StatusOr<std::string> CompileTwiceInChild(CompilerPlugin& plugin,
                                                const Model& model,
                                                const std::string& soc_model,
                                                absl::Duration timeout);

// One tensor's value as it crosses between processes.
struct TensorValue {
  int32_t type = 0;  // tfl::TensorType
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;
};

// Random inputs for `model`'s subgraph 0, drawn with `rng` as `graft run`
// draws them (tools::FillRandom).
absl::StatusOr<std::vector<TensorValue>> RandomInputs(const Model& model,
                                                      std::mt19937& rng);

// Runs `model` on Graft's CPU kernels (in this process); also returns the
// longest reduction behind an output (tolerance.h's K).
absl::StatusOr<std::vector<TensorValue>> RunOnCpu(
    const Model& model, const std::vector<TensorValue>& inputs,
    int64_t* max_reduction_length);

// Loads the compiled model at `path` in a child with the dispatch library
// `dispatch_path` under AcceleratorPolicy::kRequireVendorOps (a dispatch op
// that would fall back to the CPU fails the load) and runs it once.
absl::StatusOr<std::vector<TensorValue>> RunWithDispatchInChild(
    const std::string& path, const std::string& dispatch_path,
    const std::vector<TensorValue>& inputs, absl::Duration timeout);

// "" when every output of `got` matches `want` under dispatch/tolerance.h
// (float32: FloatToleranceFor(precision, K); quantized integers within
// `quantized_lsb` units; other types exact), else what differs.
std::string CompareOutputs(const Model& model,
                           const std::vector<TensorValue>& got,
                           const std::vector<TensorValue>& want,
                           int64_t max_reduction_length, int quantized_lsb,
                           FloatPrecision precision = FloatPrecision::kFloat32);

// The first dispatch op of a model compiled in Graft's format, as a
// dispatch library sees it: its module's bytes, entry point, input and
// output byte sizes, and the model's buffers by id
// (graft_dispatch_invocation_desc_t.model_buffers). NotFound for a model
// with no such op (LiteRT's format).
struct DispatchCall {
  Model model;  // keeps the buffers' bytes mapped
  std::vector<uint8_t> bytecode;
  std::string entry_point;
  std::vector<size_t> input_bytes, output_bytes;
  std::vector<graft_byte_span_t> buffers;
};
absl::StatusOr<DispatchCall> FirstDispatchCall(const std::string& path);

// The first DISPATCH_OP of a model compiled in LiteRT's format
// (core/litert_format.h), as LiteRT's runtime hands it to a dispatch
// library: the whole file (the module is [offset, offset + size) of it),
// the entry point, and each input's and output's type. NotFound for a model
// with no such op.
struct LiteRtDispatchCall {
  std::vector<uint8_t> file;
  size_t offset = 0, size = 0;
  std::string entry_point;
  std::vector<LiteRtRankedTensorType> input_types, output_types;
  std::vector<size_t> input_bytes, output_bytes;
};
absl::StatusOr<LiteRtDispatchCall> FirstLiteRtDispatchCall(
    const std::string& path);

// A scratch directory removed (with its files) at destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  bool ok() const { return !path_.empty(); }
  std::string Join(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace graft::check

#endif  // GRAFT_TOOLS_CHECK_VENDOR_RUNS_H_
