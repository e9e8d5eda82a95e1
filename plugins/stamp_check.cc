#include "plugins/stamp_check.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/vendor_library.h"

namespace graft {
namespace {

absl::Status Wrong(absl::string_view field, absl::string_view problem,
                   absl::string_view fix) {
  return absl::InvalidArgumentError(absl::StrCat(
      "the compatibility stamp's ", field, " ", problem, "; ", fix));
}

std::string Quoted(absl::string_view s) { return absl::StrCat("\"", s, "\""); }

std::string Version(uint32_t packed) {
  return absl::StrCat(GRAFT_ABI_VERSION_GET_MAJOR(packed), ".",
                      GRAFT_ABI_VERSION_GET_MINOR(packed));
}

}  // namespace

absl::Status CheckCompatibilityStamp(const graft_compatibility_stamp_t& stamp,
                                     const PluginInfo& info,
                                     absl::string_view soc_model) {
  // Members past struct_size are not the plugin's to give, so nothing else
  // is read from a short stamp.
  if (stamp.struct_size < sizeof(graft_compatibility_stamp_t)) {
    return Wrong(
        "struct_size",
        absl::StrCat("is ", stamp.struct_size, ", which does not cover its ",
                     sizeof(graft_compatibility_stamp_t), " bytes"),
        "set it to sizeof(graft_compatibility_stamp_t)");
  }
  if (GRAFT_ABI_VERSION_GET_MAJOR(stamp.abi_version) !=
      GRAFT_ABI_VERSION_MAJOR) {
    return Wrong("abi_version",
                 absl::StrCat("is ", Version(stamp.abi_version),
                              stamp.abi_version == 0 ? " (unset)" : "",
                              ", but this Graft speaks ABI ",
                              GRAFT_ABI_VERSION_MAJOR, ".x"),
                 "set it to GRAFT_ABI_VERSION");
  }
  if (stamp.bytecode_format_version == 0) {
    return Wrong("bytecode_format_version", "is 0 (unset)",
                 absl::StrCat("set it to the version of the format the "
                              "bytecode is in (get_info says ",
                              info.bytecode_format_version, ")"));
  }
  if (stamp.bytecode_format_version != info.bytecode_format_version) {
    return Wrong(
        "bytecode_format_version",
        absl::StrCat("is ", stamp.bytecode_format_version,
                     ", but get_info's is ", info.bytecode_format_version),
        "state the same version in both");
  }
  const std::string vendor = VendorString(stamp.vendor);
  if (vendor.empty()) {
    return Wrong("vendor", "is empty",
                 absl::StrCat("set it to ", Quoted(info.vendor),
                              " (get_info's vendor)"));
  }
  if (vendor != info.vendor) {
    return Wrong("vendor",
                 absl::StrCat("is '", vendor, "', but the plugin is '",
                              info.vendor, "'"),
                 "the stamp names the dispatch library that runs the bytecode: "
                 "use get_info's vendor");
  }
  const std::string version = VendorString(stamp.plugin_version);
  if (version.empty()) {
    return Wrong("plugin_version", "is empty",
                 absl::StrCat("set it to ", Quoted(info.plugin_version),
                              " (get_info's plugin_version)"));
  }
  if (version != info.plugin_version) {
    return Wrong("plugin_version",
                 absl::StrCat("is ", Quoted(version), ", but get_info's is ",
                              Quoted(info.plugin_version)),
                 "state the same version in both");
  }
  const std::string soc = VendorString(stamp.soc_model);
  if (soc.empty()) {
    return Wrong("soc_model", "is empty",
                 absl::StrCat("set it to the SoC model compiled for (",
                              Quoted(soc_model), ")"));
  }
  if (soc != soc_model &&
      std::find(info.soc_models.begin(), info.soc_models.end(), soc) ==
          info.soc_models.end()) {
    return Wrong("soc_model",
                 absl::StrCat("is ", Quoted(soc),
                              ", which is neither the SoC "
                              "model compiled for (",
                              Quoted(soc_model), ") nor one get_info lists"),
                 "set it to the SoC model the bytecode was built for");
  }
  return absl::OkStatus();
}

}  // namespace graft
