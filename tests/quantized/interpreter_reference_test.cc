// Quantized corpus models against TFLite's Python reference interpreter.
// The expected outputs are produced outside the build by
// make_reference_outputs.py (needs ai_edge_litert); the test runs only when
// $GRAFT_QUANT_REFERENCE_DIR names its output directory, and otherwise
// skips. Integer outputs must be within 1 LSB of the BUILTIN_REF outputs;
// the count of exact matches is printed. The known 1-LSB case: LiteRT's
// int8 FULLY_CONNECTED (both resolvers; it goes through its GEMM backend)
// rounds the requantization once, while reference_integer_ops and TFLite
// Micro, which Graft follows, round twice (SaturatingRoundingDoublingHighMul
// then RoundingDivideByPOT), e.g. hello_world_int8 layer 0: 8.496 -> 9
// instead of 8.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "core/test_support.h"
#include "dispatch/npy.h"
#include "dispatch/runtime.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

namespace fs = std::filesystem;

double Element(tfl::TensorType t, const uint8_t* p, size_t i) {
  switch (t) {
    case tfl::TensorType_INT8: return reinterpret_cast<const int8_t*>(p)[i];
    case tfl::TensorType_UINT8: return p[i];
    case tfl::TensorType_INT16: return reinterpret_cast<const int16_t*>(p)[i];
    case tfl::TensorType_INT32: return reinterpret_cast<const int32_t*>(p)[i];
    case tfl::TensorType_FLOAT32: return reinterpret_cast<const float*>(p)[i];
    default: return 0;
  }
}

TEST(InterpreterReference, QuantizedModelsMatchBuiltinRef) {
  const char* dir = std::getenv("GRAFT_QUANT_REFERENCE_DIR");
  if (dir == nullptr) {
    GTEST_SKIP() << "set GRAFT_QUANT_REFERENCE_DIR (make_reference_outputs.py)";
  }
  int matched = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!fs::exists(e.path() / "path")) continue;
    std::string model;
    std::getline(std::ifstream(e.path() / "path"), model);
    auto rt = Runtime::Load(model);
    if (!rt.ok()) {
      std::cout << model << ": not runnable: " << rt.status() << "\n";
      continue;
    }
    for (size_t i = 0; i < (*rt)->num_inputs(); ++i) {
      auto in = ReadNpy((e.path() / ("in" + std::to_string(i) + ".npy")).string());
      ASSERT_TRUE(in.ok()) << in.status();
      ASSERT_EQ(in->data.size(), (*rt)->input(i)->bytes) << model;
      std::memcpy((*rt)->input(i)->raw_data, in->data.data(), in->data.size());
    }
    ASSERT_TRUE((*rt)->Invoke().ok()) << model;
    bool all = true;
    for (size_t j = 0; j < (*rt)->num_outputs(); ++j) {
      auto want = ReadNpy((e.path() / ("ref_out" + std::to_string(j) + ".npy")).string());
      ASSERT_TRUE(want.ok()) << want.status();
      const Tensor& out = *(*rt)->output(j);
      ASSERT_EQ(want->type, out.type) << model;
      ASSERT_EQ(want->data.size(), out.bytes) << model;
      const bool is_float = out.type == tfl::TensorType_FLOAT32;
      double max_diff = 0;
      for (int64_t k = 0; k < out.num_elements(); ++k) {
        max_diff = std::max(max_diff, std::abs(Element(out.type, out.raw_data, k) -
                                               Element(out.type, want->data.data(), k)));
      }
      std::cout << model << " output " << j << ": max |diff| " << max_diff << "\n";
      // Float outputs (a float model with quantized weights) get the
      // float32 accumulation-order tolerance.
      EXPECT_LE(max_diff, is_float ? 1e-3 : 1.0) << model;
      all = all && max_diff <= (is_float ? 1e-3 : 0.0);
    }
    matched += all;
  }
  std::cout << matched
            << " models matched the reference interpreter exactly\n";
}

}  // namespace
}  // namespace graft
