// `graft inspect`: prints what a .tflite model contains.
//
// Text output (for people): a summary (file, size, schema version,
// description, counts, op histogram), signatures, then per subgraph its
// inputs, outputs and one line per op with its tensors and non-default
// options; optionally tables of tensors (--tensors) and buffers (--buffers);
// then metadata and custom ops. --json prints the same information as one
// JSON document (always with the tensor tables, since ops refer to tensors by
// id); key order is fixed.
#ifndef GRAFT_TOOLS_INSPECT_H_
#define GRAFT_TOOLS_INSPECT_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/model.h"

namespace graft::tools {

struct InspectOptions {
  bool json = false;
  // Print the per-subgraph tensor table (text output; JSON always has it).
  bool tensors = false;
  // Print the buffer table.
  bool buffers = false;
  // Print option fields equal to their schema default too.
  bool all_options = false;
  // Only this subgraph's sections; -1 for all.
  int64_t subgraph = -1;
};

// The report of `model`, which was read from `path` (shown as the file name;
// the file size comes from model.file when set). InvalidArgument when
// options.subgraph names no subgraph.
absl::StatusOr<std::string> InspectModel(const Model& model,
                                         absl::string_view path,
                                         const InspectOptions& options);

// Short dtype names used by the text output: "f32", "i8", "bool", ...
std::string ShortTypeName(tfl::TensorType type);

// The `graft inspect` subcommand. `args` excludes "graft inspect". Writes the
// report to `out` and diagnostics, prefixed "graft inspect: error: ", to
// `err`. Returns the process exit code: 0 on success, 1 when the model cannot
// be read, 2 on a command-line error.
int RunInspectCommand(absl::Span<const std::string> args, std::ostream& out,
                      std::ostream& err);

inline constexpr char kInspectSummary[] =
    "print a model's structure: signatures, ops, tensors, buffers, metadata";

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_INSPECT_H_
