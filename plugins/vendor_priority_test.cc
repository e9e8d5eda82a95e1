#include "plugins/vendor_priority.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::ElementsAre;

PluginInfo Info(const std::string& vendor, uint32_t hardware,
                const std::string& path = "") {
  PluginInfo i;
  i.vendor = vendor;
  i.hardware_kinds = hardware;
  i.path = path.empty() ? "/lib/" + vendor + ".so" : path;
  return i;
}

std::vector<std::string> Vendors(
    const std::vector<PluginInfo>& infos,
    const std::vector<std::string>& priority,
    std::vector<std::string>* unmatched = nullptr) {
  std::vector<const PluginInfo*> ptrs;
  for (const PluginInfo& i : infos) ptrs.push_back(&i);
  std::vector<std::string> out;
  for (size_t i : VendorPriorityOrder(ptrs, priority, unmatched)) {
    out.push_back(infos[i].vendor);
  }
  return out;
}

TEST(VendorPriorityTest, DefaultPutsDedicatedAcceleratorsFirstThenByName) {
  std::vector<PluginInfo> infos = {
      Info("xnnpack", GRAFT_HARDWARE_KIND_CPU),
      Info("acme_gpu", GRAFT_HARDWARE_KIND_GPU),
      Info("example", GRAFT_HARDWARE_KIND_CPU),
      Info("zeta_npu", GRAFT_HARDWARE_KIND_NPU | GRAFT_HARDWARE_KIND_CPU),
      Info("dsp", GRAFT_HARDWARE_KIND_DSP),
      Info("unknown", 0)};
  EXPECT_THAT(Vendors(infos, {}), ElementsAre("zeta_npu", "acme_gpu", "dsp",
                                              "example", "unknown", "xnnpack"));
}

TEST(VendorPriorityTest, DefaultDoesNotDependOnTheListingOrder) {
  std::vector<PluginInfo> a = {Info("b", GRAFT_HARDWARE_KIND_CPU),
                               Info("a", GRAFT_HARDWARE_KIND_CPU)};
  std::vector<PluginInfo> b = {a[1], a[0]};
  EXPECT_EQ(Vendors(a, {}), Vendors(b, {}));
  EXPECT_THAT(Vendors(a, {}), ElementsAre("a", "b"));
}

TEST(VendorPriorityTest, NamedOrderIsThePriorityAndFiltersTheRest) {
  std::vector<PluginInfo> infos = {Info("example", GRAFT_HARDWARE_KIND_CPU),
                                   Info("npu", GRAFT_HARDWARE_KIND_NPU),
                                   Info("xnnpack", GRAFT_HARDWARE_KIND_CPU)};
  EXPECT_THAT(Vendors(infos, {"xnnpack", "example"}),
              ElementsAre("xnnpack", "example"));
  EXPECT_THAT(Vendors(infos, {"example", "xnnpack"}),
              ElementsAre("example", "xnnpack"));
}

TEST(VendorPriorityTest, NamesWithoutAPluginAreReportedAndRepeatsCountOnce) {
  std::vector<PluginInfo> infos = {Info("xnnpack", GRAFT_HARDWARE_KIND_CPU)};
  std::vector<std::string> unmatched;
  EXPECT_THAT(Vendors(infos, {"qualcomm", "xnnpack", "xnnpack", "mediatek"},
                      &unmatched),
              ElementsAre("xnnpack"));
  EXPECT_THAT(unmatched, ElementsAre("qualcomm", "mediatek"));
}

TEST(VendorPriorityTest, TwoPluginsOfOneVendorKeepTheFirstByPath) {
  std::vector<PluginInfo> infos = {
      Info("xnnpack", GRAFT_HARDWARE_KIND_CPU, "/b/x.so"),
      Info("xnnpack", GRAFT_HARDWARE_KIND_CPU, "/a/x.so")};
  std::vector<const PluginInfo*> ptrs = {&infos[0], &infos[1]};
  EXPECT_THAT(VendorPriorityOrder(ptrs, {"xnnpack"}), ElementsAre(1u));
}

}  // namespace
}  // namespace graft
