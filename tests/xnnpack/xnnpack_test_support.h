// Helpers shared by the xnnpack vendor's tests: where its libraries are,
// loading its plugin, compiling a model with it.
#ifndef GRAFT_TESTS_XNNPACK_XNNPACK_TEST_SUPPORT_H_
#define GRAFT_TESTS_XNNPACK_XNNPACK_TEST_SUPPORT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/model.h"
#include "core/test_support.h"
#include "dispatch/tolerance.h"
#include "gtest/gtest.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace graft::xnnpack_test {

inline std::string VendorLibDir() {
  return testing::BinaryDir() + "/vendor_libs";
}
inline std::string PluginPath() {
  return VendorLibDir() + "/libgraft_compiler_plugin_xnnpack.so";
}
inline std::string DispatchPath() {
  return VendorLibDir() + "/libgraft_dispatch_xnnpack.so";
}

inline std::unique_ptr<CompilerPlugin> LoadPlugin() {
  auto plugin = LoadCompilerPlugin(PluginPath());
  EXPECT_TRUE(plugin.ok()) << plugin.status();
  return plugin.ok() ? std::move(*plugin) : nullptr;
}

// Applies the xnnpack plugin to `model` in place (mode kApply by default).
inline absl::StatusOr<ApplyReport> ApplyXnnpack(
    Model& model, ApplyMode mode = ApplyMode::kApply) {
  static CompilerPlugin* plugin = LoadPlugin().release();
  if (plugin == nullptr) return absl::InternalError("no xnnpack plugin");
  ApplyOptions options;
  options.mode = mode;
  return ApplyPlugins(model, {&plugin, 1}, options);
}

// The int8 tolerances of the XNNPACK vendor, with their reasons, live in
// dispatch/tolerance.h.
inline constexpr int kXnnpackInt8OpMaxLsb = ::graft::kXnnpackInt8OpLsb;
inline constexpr int kXnnpackInt8ModelMaxLsb = ::graft::kXnnpackInt8ModelLsb;

// The seed of the random inputs: GRAFT_TEST_SEED or a fixed default.
uint32_t Seed();

// What happened to one model run both ways.
struct Outcome {
  // Skipped (not runnable on CPU kernels): the reason.
  std::string skipped;
  int64_t ops_total = 0, ops_taken = 0;
  size_t partitions = 0;
  // Largest and mean int8 difference in LSB over the outputs (-1: no int8
  // output); largest float difference.
  int max_lsb = -1;
  double mean_lsb = 0;
  double max_float_diff = 0;
  // Empty when every output matched.
  std::string mismatch;
};

// Runs the model at `path` on Graft's CPU kernels and, compiled with the
// xnnpack plugin (saved to a temporary file and loaded by path), with the
// xnnpack dispatch library, on the same seeded random inputs; compares
// float outputs with dispatch/tolerance.h and int8 outputs against
// `int8_max_lsb`. Every dispatch op must run on the vendor (no fallback).
Outcome RunModel(const std::string& path, uint32_t seed, int int8_max_lsb);

}  // namespace graft::xnnpack_test

#endif  // GRAFT_TESTS_XNNPACK_XNNPACK_TEST_SUPPORT_H_
