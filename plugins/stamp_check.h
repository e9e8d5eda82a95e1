// CheckCompatibilityStamp: the host's strict reading of the compatibility
// stamp a Graft-ABI compiler plugin returns with each compile
// (graft_compatibility_stamp_t), before anything of it reaches a compiled
// model's manifest. The same check backs `graft check`'s stamp report.
#ifndef GRAFT_PLUGINS_STAMP_CHECK_H_
#define GRAFT_PLUGINS_STAMP_CHECK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "graft_common.h"
#include "plugins/compiler_plugin.h"

namespace graft {

// OK when `stamp` is complete and agrees with the plugin that made it:
//   struct_size      covers every member of graft_compatibility_stamp_t;
//   abi_version      of this Graft's ABI major;
//   bytecode_format_version  set (not 0) and equal to
//   info.bytecode_format_version; vendor           non-empty and equal to
//   info.vendor; plugin_version   non-empty and equal to info.plugin_version;
//   soc_model        non-empty, and `soc_model` (the one compiled for) or one
//                    of info.soc_models.
// Otherwise InvalidArgument naming the first wrong field, what it holds and
// what it should hold, for the vendor: "the compatibility stamp's
// plugin_version is empty; set it to \"1.0.0\" (get_info's
// plugin_version)". Strings are read through VendorString.
absl::Status CheckCompatibilityStamp(const graft_compatibility_stamp_t& stamp,
                                     const PluginInfo& info,
                                     absl::string_view soc_model);

}  // namespace graft

#endif  // GRAFT_PLUGINS_STAMP_CHECK_H_
