// The catalogue `graft check` draws one-op models from
// (tools/check/op_catalog.h): every entry draws valid models that Graft's
// CPU kernels run, so a vendor's result always has a reference, and the
// catalogue covers every op the in-tree plugins claim.
#include "tools/check/op_catalog.h"

#include <random>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "tools/check/vendor_runs.h"

namespace graft::check {
namespace {

TEST(OpCatalogTest, EveryDrawRunsOnGraftsCpuKernels) {
  // Seeded; the seed of a failing draw is printed.
  for (const CatalogOp& op : Catalog()) {
    for (uint32_t seed = 1; seed <= 8; ++seed) {
      std::mt19937 rng(seed);
      absl::StatusOr<DrawnModel> drawn = DrawOneOpModel(op, rng);
      ASSERT_TRUE(drawn.ok()) << op.name << " seed " << seed << ": "
                              << drawn.status();
      absl::StatusOr<std::vector<TensorValue>> inputs =
          RandomInputs(drawn->model, rng);
      int64_t k = 0;
      absl::StatusOr<std::vector<TensorValue>> out =
          inputs.ok() ? RunOnCpu(drawn->model, *inputs, &k) : inputs.status();
      EXPECT_TRUE(out.ok()) << op.name << " seed " << seed << ": "
                            << drawn->description << ": " << out.status();
    }
  }
}

TEST(OpCatalogTest, CoversEveryOpTheInTreePluginsClaim) {
  std::set<std::string> names;
  for (const CatalogOp& op : Catalog()) names.insert(op.name);
  // vendors/example (BYTECODE.md) and vendors/xnnpack (README's table), in
  // each element type they take, but int8 RELU, RELU6 and RELU_N1_TO_1:
  // Graft's CPU kernels have no int8 kernel for them to compare with.
  for (const char* name :
       {"ADD", "SUB", "MUL", "DIV", "RELU", "RELU6", "LOGISTIC", "TANH",
        "FULLY_CONNECTED", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE",
        "CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "AVERAGE_POOL_2D",
        "MAX_POOL_2D", "MEAN", "RELU_N1_TO_1", "SOFTMAX", "RSQRT",
        "HARD_SWISH", "LEAKY_RELU", "ELU", "ABS", "CEIL", "FLOOR", "NEG",
        "SQUARE", "SQRT", "ROUND", "PRELU", "RESHAPE", "SQUEEZE",
        "EXPAND_DIMS", "PAD", "PADV2", "RESIZE_BILINEAR", "DEPTH_TO_SPACE",
        "QUANTIZE", "DEQUANTIZE", "ADD/int8", "SUB/int8", "MUL/int8",
        "CONV_2D/int8", "DEPTHWISE_CONV_2D/int8", "TRANSPOSE_CONV/int8",
        "FULLY_CONNECTED/int8", "MAX_POOL_2D/int8", "MEAN/int8",
        "LOGISTIC/int8", "SOFTMAX/int8", "RESHAPE/int8", "SQUEEZE/int8",
        "EXPAND_DIMS/int8", "PAD/int8", "PADV2/int8",
        "RESIZE_BILINEAR/int8"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
}

TEST(OpCatalogTest, TheSameSeedDrawsTheSameModel) {
  for (const CatalogOp& op : Catalog()) {
    std::mt19937 a(7), b(7);
    absl::StatusOr<DrawnModel> x = DrawOneOpModel(op, a);
    absl::StatusOr<DrawnModel> y = DrawOneOpModel(op, b);
    ASSERT_TRUE(x.ok() && y.ok()) << op.name;
    EXPECT_EQ(x->description, y->description) << op.name;
  }
}

}  // namespace
}  // namespace graft::check
