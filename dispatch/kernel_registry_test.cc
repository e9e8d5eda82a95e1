#include <algorithm>

#include "dispatch/kernel.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(KernelRegistryTest, FindsListedKernels) {
  for (auto op : {tfl::BuiltinOperator_ADD, tfl::BuiltinOperator_CONV_2D,
                  tfl::BuiltinOperator_SELECT_V2}) {
    auto kernels = FindKernels(op);
    if (kernels.empty()) GTEST_SKIP() << "selective build without this op";
    for (const Kernel* k : kernels) {
      ASSERT_NE(k, nullptr);
      EXPECT_NE(k->prepare, nullptr);
      EXPECT_NE(k->name, nullptr);
    }
  }
}

TEST(KernelRegistryTest, UnknownOpsHaveNoKernel) {
  EXPECT_TRUE(FindKernels(tfl::BuiltinOperator_WHILE).empty());
  EXPECT_TRUE(FindKernels(tfl::BuiltinOperator_CUSTOM).empty());
  EXPECT_TRUE(FindKernels(static_cast<tfl::BuiltinOperator>(9999)).empty());
}

TEST(KernelRegistryTest, OpsAreSortedAndUnique) {
  auto ops = KernelOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  EXPECT_EQ(std::adjacent_find(ops.begin(), ops.end()), ops.end());
  for (auto op : ops) EXPECT_FALSE(FindKernels(op).empty());
}

}  // namespace
}  // namespace graft
