// A LiteRT compiler plugin's exported functions (plugins/
// litert_compiler_abi.h) as one table of function pointers, and their lookup
// by name in a loaded library. Shared by the adapter (litert_plugin_adapter
// .cc), which calls get_version and checks the API version before anything
// else, and `graft check` (tools/check/raw_abi.h), which calls the exports
// directly. LiteRtCompilerPluginRegisterAllTransformations is not here: the
// plugin may export it, Graft never calls it.
#ifndef GRAFT_PLUGINS_LITERT_PLUGIN_ABI_TABLE_H_
#define GRAFT_PLUGINS_LITERT_PLUGIN_ABI_TABLE_H_

#include <string>
#include <vector>

#include "core/vendor_library.h"
#include "plugins/litert_compiler_abi.h"

namespace graft {

struct LiteRtPluginAbiTable {
  LiteRtGetCompilerPluginVersionFn get_version = nullptr;
  LiteRtGetCompilerPluginSocManufacturerFn soc_manufacturer = nullptr;
  LiteRtCreateCompilerPluginFn create = nullptr;
  LiteRtDestroyCompilerPluginFn destroy = nullptr;
  LiteRtGetCompilerPluginSupportedHardwareFn supported_hardware = nullptr;
  LiteRtGetNumCompilerPluginSupportedSocModelsFn num_soc_models = nullptr;
  LiteRtGetCompilerPluginSupportedSocModelFn soc_model = nullptr;
  LiteRtGetCompilerPluginSDKVersionFn sdk_version = nullptr;
  LiteRtCompilerPluginPartitionFn partition = nullptr;
  LiteRtCompilerPluginCompileFn compile = nullptr;
  LiteRtDestroyCompiledResultFn destroy_result = nullptr;
  LiteRtGetCompiledResultByteCodeFn result_bytecode = nullptr;
  LiteRtCompiledResultNumByteCodeModulesFn result_num_bytecode = nullptr;
  LiteRtGetCompiledResultCallInfoFn result_call_info = nullptr;
  LiteRtGetNumCompiledResultCallsFn result_num_calls = nullptr;
  // Optional export: NULL when the plugin leaves it out.
  LiteRtCompilerPluginCheckCompilerCompatibilityFn check_compatibility =
      nullptr;
};

// Looks up every export of `lib` into `table` (dlsym only: nothing is
// called) and returns the names of the required ones it lacks, in the
// table's order, get_version first; empty when the plugin is complete.
inline std::vector<std::string> LookUpLiteRtPluginAbiTable(
    const DynamicLibrary& lib, LiteRtPluginAbiTable* table) {
  struct Slot {
    const char* name;
    void** slot;
    bool required;
  };
  LiteRtPluginAbiTable& t = *table;
  const Slot slots[] = {
      {LITERT_PLUGIN_GET_VERSION_SYMBOL,
       reinterpret_cast<void**>(&t.get_version), true},
      {LITERT_PLUGIN_SOC_MANUFACTURER_SYMBOL,
       reinterpret_cast<void**>(&t.soc_manufacturer), true},
      {LITERT_PLUGIN_CREATE_SYMBOL, reinterpret_cast<void**>(&t.create), true},
      {LITERT_PLUGIN_DESTROY_SYMBOL, reinterpret_cast<void**>(&t.destroy),
       true},
      {LITERT_PLUGIN_SUPPORTED_HARDWARE_SYMBOL,
       reinterpret_cast<void**>(&t.supported_hardware), true},
      {LITERT_PLUGIN_NUM_SOC_MODELS_SYMBOL,
       reinterpret_cast<void**>(&t.num_soc_models), true},
      {LITERT_PLUGIN_SOC_MODEL_SYMBOL, reinterpret_cast<void**>(&t.soc_model),
       true},
      {LITERT_PLUGIN_SDK_VERSION_SYMBOL,
       reinterpret_cast<void**>(&t.sdk_version), true},
      {LITERT_PLUGIN_PARTITION_SYMBOL, reinterpret_cast<void**>(&t.partition),
       true},
      {LITERT_PLUGIN_COMPILE_SYMBOL, reinterpret_cast<void**>(&t.compile),
       true},
      {LITERT_PLUGIN_DESTROY_RESULT_SYMBOL,
       reinterpret_cast<void**>(&t.destroy_result), true},
      {LITERT_PLUGIN_RESULT_BYTECODE_SYMBOL,
       reinterpret_cast<void**>(&t.result_bytecode), true},
      {LITERT_PLUGIN_RESULT_NUM_BYTECODE_SYMBOL,
       reinterpret_cast<void**>(&t.result_num_bytecode), true},
      {LITERT_PLUGIN_RESULT_CALL_INFO_SYMBOL,
       reinterpret_cast<void**>(&t.result_call_info), true},
      {LITERT_PLUGIN_RESULT_NUM_CALLS_SYMBOL,
       reinterpret_cast<void**>(&t.result_num_calls), true},
      {LITERT_PLUGIN_CHECK_COMPATIBILITY_SYMBOL,
       reinterpret_cast<void**>(&t.check_compatibility), false},
  };
  std::vector<std::string> missing;
  for (const Slot& s : slots) {
    *s.slot = lib.Symbol(s.name);
    if (*s.slot == nullptr && s.required) missing.push_back(s.name);
  }
  return missing;
}

}  // namespace graft

#endif  // GRAFT_PLUGINS_LITERT_PLUGIN_ABI_TABLE_H_
