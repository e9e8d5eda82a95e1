// Runs a model on Graft's CPU kernels and compiled with the xnnpack vendor,
// and compares the outputs (xnnpack_test_support.h).
#include "xnnpack_test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/model_io.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "dispatch/tolerance.h"

namespace graft::xnnpack_test {
namespace {

// Fills `t` with seeded values of its type: floats in [-1, 1], 8-bit
// integers over their whole range, wider integers in [0, 2) (they are
// often indices), booleans at random.
void FillRandom(Tensor* t, std::mt19937* rng) {
  const int64_t n = t->num_elements();
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int> byte(-128, 127);
  std::uniform_int_distribution<int> small(0, 1);
  for (int64_t i = 0; i < n; ++i) {
    switch (t->type) {
      case tfl::TensorType_FLOAT32:
        t->data<float>()[i] = real(*rng);
        break;
      case tfl::TensorType_INT8:
      case tfl::TensorType_UINT8:
        t->raw_data[i] = static_cast<uint8_t>(byte(*rng));
        break;
      case tfl::TensorType_INT16:
        t->data<int16_t>()[i] = static_cast<int16_t>(small(*rng));
        break;
      case tfl::TensorType_INT32:
        t->data<int32_t>()[i] = small(*rng);
        break;
      case tfl::TensorType_INT64:
        t->data<int64_t>()[i] = small(*rng);
        break;
      case tfl::TensorType_BOOL:
        t->raw_data[i] = static_cast<uint8_t>(small(*rng));
        break;
      default:
        std::memset(t->raw_data, 0, t->bytes);
        return;
    }
  }
}

}  // namespace

uint32_t Seed() {
  uint32_t seed = 20261122;
  if (const char* env = std::getenv("GRAFT_TEST_SEED")) {
    seed = static_cast<uint32_t>(std::strtoul(env, nullptr, 10));
  }
  return seed;
}

Outcome RunModel(const std::string& path, uint32_t seed, int int8_max_lsb) {
  Outcome o;
  auto cpu = Runtime::Load(path);
  if (!cpu.ok()) {
    o.skipped = absl::StrCat("not runnable on CPU: ",
                             cpu.status().message().substr(0, 120));
    return o;
  }
  auto model = LoadModel(path);
  if (!model.ok()) {
    o.skipped = "does not load";
    return o;
  }
  auto report = ApplyXnnpack(*model);
  if (!report.ok()) {
    o.mismatch = absl::StrCat("apply failed: ", report.status().ToString());
    return o;
  }
  o.ops_total = report->ops_total;
  o.ops_taken = report->ops_taken;
  o.partitions = report->partitions.size();
  if (o.partitions == 0) return o;
  // Saved and loaded by path, as a deployed compiled model is (mapped, the
  // bytecode in place).
  testing::TempDir dir;
  const std::string compiled = dir.Join("compiled.tflite");
  absl::Status saved = SaveModel(*model, compiled);
  if (!saved.ok()) {
    o.mismatch = absl::StrCat("cannot save: ", saved.ToString());
    return o;
  }
  RuntimeOptions options;
  options.dispatch_dirs = {VendorLibDir()};
  auto npu = Runtime::Load(compiled, options);
  if (!npu.ok()) {
    o.mismatch =
        absl::StrCat("compiled model does not load: ", npu.status().ToString());
    return o;
  }
  const RuntimeReport npu_report = (*npu)->Report();
  if (npu_report.CountOps(OpReport::Where::kFallback) != 0) {
    o.mismatch =
        absl::StrCat("dispatch ops fell back to CPU:\n", npu_report.ToString());
    return o;
  }
  std::mt19937 rng(seed);
  for (size_t i = 0; i < (*cpu)->num_inputs(); ++i) {
    Tensor* in = (*cpu)->input(i);
    FillRandom(in, &rng);
    Tensor* other = (*npu)->input(i);
    if (other == nullptr || other->bytes != in->bytes) {
      o.mismatch = absl::StrCat("input ", i, " differs after compiling");
      return o;
    }
    std::memcpy(other->raw_data, in->raw_data, in->bytes);
  }
  absl::Status st = (*cpu)->Invoke();
  if (!st.ok()) {
    o.skipped = absl::StrCat("CPU invoke fails: ", st.message());
    return o;
  }
  st = (*npu)->Invoke();
  if (!st.ok()) {
    o.mismatch = absl::StrCat("invoke failed: ", st.ToString());
    return o;
  }
  const int64_t k = (*cpu)->Report().MaxReductionLength();
  for (size_t i = 0; i < (*cpu)->num_outputs(); ++i) {
    const Tensor& want = *(*cpu)->output(i);
    const Tensor& got = *(*npu)->output(i);
    if (want.type != got.type || want.bytes != got.bytes) {
      o.mismatch = absl::StrCat("output ", i, ": type or size differs");
      return o;
    }
    if (want.type == tfl::TensorType_INT8) {
      int lsb = 0;
      int64_t sum = 0;
      for (size_t e = 0; e < want.bytes; ++e) {
        const int d = std::abs(static_cast<int8_t>(got.raw_data[e]) -
                               static_cast<int8_t>(want.raw_data[e]));
        lsb = std::max(lsb, d);
        sum += d;
      }
      if (want.bytes > 0) {
        o.mean_lsb = std::max(o.mean_lsb, static_cast<double>(sum) /
                                              static_cast<double>(want.bytes));
      }
      o.max_lsb = std::max(o.max_lsb, lsb);
      if (lsb > int8_max_lsb) {
        o.mismatch = absl::StrCat("output ", i, ": int8 differs by ", lsb,
                                  " LSB (accepted: ", int8_max_lsb, ")");
      }
      continue;
    }
    if (want.type == tfl::TensorType_FLOAT32) {
      for (int64_t e = 0; e < want.num_elements(); ++e) {
        const double d = std::fabs(static_cast<double>(got.data<float>()[e]) -
                                   want.data<float>()[e]);
        if (std::isfinite(d)) o.max_float_diff = std::max(o.max_float_diff, d);
      }
    }
    const std::string diff = CompareToReference(got, TensorToNpy(want), k);
    if (!diff.empty()) o.mismatch = absl::StrCat("output ", i, ": ", diff);
  }
  return o;
}

}  // namespace graft::xnnpack_test
