// RunConformance: `graft check`, the conformance run a vendor points at its
// own compiler plugin and dispatch library (Graft's ABI or LiteRT's). Each
// check is one id of the report; the files of tools/check/ hold one kind of
// check each (see its README).
#ifndef GRAFT_TOOLS_CHECK_CONFORMANCE_H_
#define GRAFT_TOOLS_CHECK_CONFORMANCE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "dispatch/tolerance.h"
#include "tools/check/check_report.h"

namespace graft::check {

struct CheckOptions {
  // The compiler plugin (libgraft_compiler_plugin_*.so or
  // libLiteRtCompilerPlugin_*.so) and, optionally, the dispatch library
  // (libgraft_dispatch_*.so or libLiteRtDispatch_*.so).
  std::string plugin_path;
  std::string dispatch_path;
  // Options the plugin is created with (KEY, VALUE): what `graft apply
  // --plugin-option` passes, e.g. a LiteRT plugin's
  // intel_openvino_graph_backends=cpu.
  std::vector<std::pair<std::string, std::string>> plugin_options;
  // Directories whose *.tflite models the partition promise covers; empty:
  // the built-in models (op_catalog.h).
  std::vector<std::string> model_dirs;
  // Check ids (or prefixes: "abi", "promise.ops") to run; empty: all.
  std::vector<std::string> only;
  // Catalogue ops to draw ("ADD", "CONV_2D/int8"); empty: all.
  std::vector<std::string> ops;
  // Drawn models per catalogue op. Draw k of every op uses seed + k.
  int draws = 3;
  uint32_t seed = 1;
  // The SoC model to compile for; empty: the plugin's first.
  std::string soc_model;
  // Quantized outputs may differ from Graft's CPU kernels by this many
  // units in the last place (other integers and strings: exact; float32:
  // dispatch/tolerance.h).
  int quantized_lsb = 1;
  // What the vendor computes float32 tensors in (--precision): float32
  // outputs are compared under that format's tolerance
  // (dispatch/tolerance.h's FloatToleranceFor).
  FloatPrecision precision = FloatPrecision::kFloat32;
  // The time limit of one vendor call (a child process).
  absl::Duration timeout = absl::Seconds(60);
  // The command line up to the options a reproduction adds (--only,
  // --seed, --ops, --draws), for the report.
  std::string command;
};

// Runs the checks `options` selects and reports each.
CheckReport RunConformance(const CheckOptions& options);

}  // namespace graft::check

#endif  // GRAFT_TOOLS_CHECK_CONFORMANCE_H_
