#include "plugins/compiler_plugin.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "core/vendor_library.h"
#include "plugins/graft_plugin_adapter.h"
#include "plugins/litert_compiler_abi.h"
#include "plugins/litert_plugin_adapter.h"
#include "plugins/litert_plugin_options.h"

namespace graft {

const char* PartitionReasonName(int32_t code) {
  switch (code) {
    case GRAFT_PARTITION_REASON_UNSPECIFIED:
      return "UNSPECIFIED";
    case GRAFT_PARTITION_REASON_UNSUPPORTED_OP:
      return "UNSUPPORTED_OP";
    case GRAFT_PARTITION_REASON_UNSUPPORTED_OP_VERSION:
      return "UNSUPPORTED_OP_VERSION";
    case GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE:
      return "UNSUPPORTED_ELEMENT_TYPE";
    case GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE:
      return "UNSUPPORTED_SHAPE";
    case GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE:
      return "UNSUPPORTED_ATTRIBUTE";
    case GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION:
      return "UNSUPPORTED_QUANTIZATION";
    case GRAFT_PARTITION_REASON_NOT_CONSTANT:
      return "NOT_CONSTANT";
    case GRAFT_PARTITION_REASON_UNSUPPORTED_ON_SOC:
      return "UNSUPPORTED_ON_SOC";
    case GRAFT_PARTITION_REASON_NOT_PROFITABLE:
      return "NOT_PROFITABLE";
    case GRAFT_PARTITION_REASON_RESOURCE_LIMIT:
      return "RESOURCE_LIMIT";
    case GRAFT_PARTITION_REASON_DISABLED_BY_OPTION:
      return "DISABLED_BY_OPTION";
    default:
      return "UNKNOWN_REASON";
  }
}

absl::StatusOr<std::unique_ptr<CompilerPlugin>> LoadCompilerPlugin(
    const std::string& path,
    const std::vector<std::pair<std::string, std::string>>& options) {
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<DynamicLibrary> library,
                         DynamicLibrary::Open(path));
  // Options in a LiteRT vendor's namespace are LiteRT plugins'; the rest are
  // Graft-ABI plugins'.
  std::vector<std::pair<std::string, std::string>> graft_options,
      litert_options;
  for (const auto& kv : options) {
    (LiteRtOptionOwner(kv.first).empty() ? graft_options : litert_options)
        .push_back(kv);
  }
  if (library->Symbol(GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL) != nullptr) {
    return GraftPluginAdapter::Create(std::move(library), graft_options);
  }
  if (library->Symbol(LITERT_PLUGIN_CREATE_SYMBOL) != nullptr &&
      library->Symbol(LITERT_PLUGIN_GET_VERSION_SYMBOL) != nullptr) {
    return LiteRtPluginAdapter::Create(std::move(library), litert_options);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      SanitizeVendorText(path), ": not a compiler plugin: it exports neither ",
      GRAFT_COMPILER_PLUGIN_ABI_VERSION_SYMBOL, " (Graft's ABI) nor ",
      LITERT_PLUGIN_CREATE_SYMBOL, " (LiteRT's)"));
}

absl::StatusOr<std::vector<std::string>> FindPluginFiles(
    const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat(dir, ": plugin directory not found"));
  }
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if ((absl::StartsWith(name, "libgraft_compiler_plugin_") ||
         absl::StartsWith(name, "libLiteRtCompilerPlugin_")) &&
        absl::EndsWith(name, ".so")) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace graft
