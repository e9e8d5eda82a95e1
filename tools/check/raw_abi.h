// Graft-ABI vendor libraries with nothing between `graft check` and their
// exports: every function looked up by name (a dispatch library's through
// the runtime's own table, dispatch/dispatch_abi_table.h; a LiteRT compiler
// plugin's through the adapter's, plugins/litert_plugin_abi_table.h), called
// exactly as the probes say. The adapters (plugins/graft_plugin_adapter.h,
// dispatch/vendor_dispatch.h) never send a NULL or a short struct; the
// probes must.
#ifndef GRAFT_TOOLS_CHECK_RAW_ABI_H_
#define GRAFT_TOOLS_CHECK_RAW_ABI_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/vendor_library.h"
#include "dispatch/dispatch_abi_table.h"
#include "graft_compiler_plugin.h"
#include "graft_dispatch.h"
#include "plugins/litert_compiler_abi.h"
#include "plugins/litert_plugin_abi_table.h"

namespace graft::check {

struct RawPlugin {
  std::unique_ptr<DynamicLibrary> library;
  graft_compiler_plugin_abi_version_fn abi_version = nullptr;
  graft_compiler_plugin_create_fn create = nullptr;
  graft_compiler_plugin_destroy_fn destroy = nullptr;
  graft_compiler_plugin_get_info_fn get_info = nullptr;
  graft_compiler_plugin_check_compatibility_fn check_compatibility = nullptr;
  graft_compiler_plugin_partition_fn partition = nullptr;
  graft_compiler_plugin_compile_fn compile = nullptr;
  graft_compiler_plugin_compiled_result_destroy_fn compiled_result_destroy =
      nullptr;
};

// The dispatch exports as the runtime's adapter looks them up
// (dispatch/dispatch_abi_table.h); the optional ones may be NULL.
struct RawDispatch : DispatchAbiTable {
  std::unique_ptr<DynamicLibrary> library;
};

// A LiteRT compiler plugin's exports as the adapter looks them up
// (plugins/litert_plugin_abi_table.h); check_compatibility may be NULL.
struct RawLiteRtPlugin : LiteRtPluginAbiTable {
  std::unique_ptr<DynamicLibrary> library;
};

// Loads the library and looks up every function; FailedPrecondition when a
// required one is missing (the ABI checks name which).
absl::StatusOr<RawPlugin> LoadRawPlugin(const std::string& path);
absl::StatusOr<RawDispatch> LoadRawDispatch(const std::string& path);
absl::StatusOr<RawLiteRtPlugin> LoadRawLiteRtPlugin(const std::string& path);

// The required and optional exports of each Graft-ABI library kind, and of
// a LiteRT compiler plugin (LiteRT 2.3.0's host also requires
// LiteRtCompilerPluginRegisterAllTransformations; see abi_checks.h).
struct ExportList {
  std::vector<std::string> required, optional;
};
const ExportList& GraftPluginExports();
const ExportList& GraftDispatchExports();
const ExportList& LiteRtPluginExports();

// A host table as a host of `size` bytes would pass it: this Graft's table,
// cut short (struct_size < sizeof) or followed by zeroed members a later
// ABI might append (struct_size > sizeof). Owns the bytes.
class SizedHostTable {
 public:
  SizedHostTable(const HostApi& host, size_t size);
  const graft_host_api_t* table() const {
    return reinterpret_cast<const graft_host_api_t*>(bytes_.data());
  }

 private:
  std::vector<uint64_t> bytes_;
};

}  // namespace graft::check

#endif  // GRAFT_TOOLS_CHECK_RAW_ABI_H_
