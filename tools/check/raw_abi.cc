#include "tools/check/raw_abi.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "plugins/litert_compiler_abi.h"

namespace graft::check {
namespace {

template <typename Fn>
void Find(const DynamicLibrary& lib, const char* name, Fn* out,
          std::vector<std::string>* missing, bool required = true) {
  *out = reinterpret_cast<Fn>(lib.Symbol(name));
  if (*out == nullptr && required) missing->push_back(name);
}

absl::Status Missing(const std::string& path,
                     const std::vector<std::string>& missing) {
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": missing ", absl::StrJoin(missing, ", ")));
}

}  // namespace

absl::StatusOr<RawPlugin> LoadRawPlugin(const std::string& path) {
  RawPlugin p;
  GRAFT_ASSIGN_OR_RETURN(p.library, DynamicLibrary::Open(path));
  const DynamicLibrary& lib = *p.library;
  std::vector<std::string> missing;
  Find(lib, GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL, &p.abi_version, &missing);
  Find(lib, GRAFT_COMPILER_PLUGIN_CREATE_SYMBOL, &p.create, &missing);
  Find(lib, GRAFT_COMPILER_PLUGIN_DESTROY_SYMBOL, &p.destroy, &missing);
  Find(lib, GRAFT_COMPILER_PLUGIN_GET_INFO_SYMBOL, &p.get_info, &missing);
  Find(lib, GRAFT_COMPILER_PLUGIN_CHECK_COMPATIBILITY_SYMBOL,
       &p.check_compatibility, &missing, /*required=*/false);
  Find(lib, GRAFT_COMPILER_PLUGIN_PARTITION_SYMBOL, &p.partition, &missing);
  Find(lib, GRAFT_COMPILER_PLUGIN_COMPILE_SYMBOL, &p.compile, &missing);
  Find(lib, GRAFT_COMPILER_PLUGIN_COMPILED_RESULT_DESTROY_SYMBOL,
       &p.compiled_result_destroy, &missing);
  GRAFT_RETURN_IF_ERROR(Missing(path, missing));
  return p;
}

absl::StatusOr<RawDispatch> LoadRawDispatch(const std::string& path) {
  RawDispatch d;
  GRAFT_ASSIGN_OR_RETURN(d.library, DynamicLibrary::Open(path));
  const DynamicLibrary& lib = *d.library;
  GRAFT_RETURN_IF_ERROR(Missing(path, LookUpDispatchAbiTable(lib, &d)));
  return d;
}

absl::StatusOr<RawLiteRtPlugin> LoadRawLiteRtPlugin(const std::string& path) {
  RawLiteRtPlugin p;
  GRAFT_ASSIGN_OR_RETURN(p.library, DynamicLibrary::Open(path));
  const DynamicLibrary& lib = *p.library;
  GRAFT_RETURN_IF_ERROR(Missing(path, LookUpLiteRtPluginAbiTable(lib, &p)));
  return p;
}

const ExportList& GraftPluginExports() {
  static const ExportList* kList =
      new ExportList{{GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL,
                      GRAFT_COMPILER_PLUGIN_CREATE_SYMBOL,
                      GRAFT_COMPILER_PLUGIN_DESTROY_SYMBOL,
                      GRAFT_COMPILER_PLUGIN_GET_INFO_SYMBOL,
                      GRAFT_COMPILER_PLUGIN_PARTITION_SYMBOL,
                      GRAFT_COMPILER_PLUGIN_COMPILE_SYMBOL,
                      GRAFT_COMPILER_PLUGIN_COMPILED_RESULT_DESTROY_SYMBOL},
                     {GRAFT_COMPILER_PLUGIN_CHECK_COMPATIBILITY_SYMBOL}};
  return *kList;
}

const ExportList& GraftDispatchExports() {
  static const ExportList* kList = new ExportList{
      {GRAFT_DISPATCH_ABI_VERSION_SYMBOL, GRAFT_DISPATCH_CREATE_SYMBOL,
       GRAFT_DISPATCH_DESTROY_SYMBOL, GRAFT_DISPATCH_GET_INFO_SYMBOL,
       GRAFT_DISPATCH_CHECK_COMPATIBILITY_SYMBOL,
       GRAFT_DISPATCH_DEVICE_CONTEXT_CREATE_SYMBOL,
       GRAFT_DISPATCH_DEVICE_CONTEXT_DESTROY_SYMBOL,
       GRAFT_DISPATCH_INVOCATION_CREATE_SYMBOL,
       GRAFT_DISPATCH_INVOCATION_DESTROY_SYMBOL,
       GRAFT_DISPATCH_INVOCATION_GET_BUFFER_REQUIREMENTS_SYMBOL,
       GRAFT_DISPATCH_INVOCATION_ATTACH_HOST_MEMORY_SYMBOL,
       GRAFT_DISPATCH_INVOCATION_INVOKE_SYMBOL},
      {GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL,
       GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL,
       GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL}};
  return *kList;
}

const ExportList& LiteRtPluginExports() {
  static const ExportList* kList = new ExportList{
      {LITERT_PLUGIN_GET_VERSION_SYMBOL, LITERT_PLUGIN_SOC_MANUFACTURER_SYMBOL,
       LITERT_PLUGIN_CREATE_SYMBOL, LITERT_PLUGIN_DESTROY_SYMBOL,
       LITERT_PLUGIN_SUPPORTED_HARDWARE_SYMBOL,
       LITERT_PLUGIN_NUM_SOC_MODELS_SYMBOL, LITERT_PLUGIN_SOC_MODEL_SYMBOL,
       LITERT_PLUGIN_SDK_VERSION_SYMBOL, LITERT_PLUGIN_PARTITION_SYMBOL,
       LITERT_PLUGIN_COMPILE_SYMBOL, LITERT_PLUGIN_DESTROY_RESULT_SYMBOL,
       LITERT_PLUGIN_RESULT_BYTECODE_SYMBOL,
       LITERT_PLUGIN_RESULT_NUM_BYTECODE_SYMBOL,
       LITERT_PLUGIN_RESULT_CALL_INFO_SYMBOL,
       LITERT_PLUGIN_RESULT_NUM_CALLS_SYMBOL},
      {LITERT_PLUGIN_REGISTER_TRANSFORMATIONS_SYMBOL,
       LITERT_PLUGIN_CHECK_COMPATIBILITY_SYMBOL}};
  return *kList;
}

SizedHostTable::SizedHostTable(const HostApi& host, size_t size)
    : bytes_((std::max(size, sizeof(graft_host_api_t)) + 7) / 8, 0) {
  std::memcpy(bytes_.data(), host.table(), sizeof(graft_host_api_t));
  graft_host_api_t* t = reinterpret_cast<graft_host_api_t*>(bytes_.data());
  t->struct_size = size;
}

}  // namespace graft::check
