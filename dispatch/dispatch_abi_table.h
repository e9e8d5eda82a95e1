// The Graft dispatch ABI's exported functions (c_api/graft_dispatch.h) as
// one table of function pointers, and their lookup by name in a loaded
// library. Shared by the runtime's adapter (vendor_dispatch.cc), which
// checks the ABI version before calling anything else, and `graft check`
// (tools/check/raw_abi.h), which calls the exports directly.
#ifndef GRAFT_DISPATCH_DISPATCH_ABI_TABLE_H_
#define GRAFT_DISPATCH_DISPATCH_ABI_TABLE_H_

#include <string>
#include <vector>

#include "core/vendor_library.h"
#include "graft_dispatch.h"

namespace graft {

struct DispatchAbiTable {
  graft_dispatch_abi_version_fn abi_version = nullptr;
  graft_dispatch_create_fn create = nullptr;
  graft_dispatch_destroy_fn destroy = nullptr;
  graft_dispatch_get_info_fn get_info = nullptr;
  graft_dispatch_check_compatibility_fn check_compatibility = nullptr;
  graft_dispatch_device_context_create_fn device_context_create = nullptr;
  graft_dispatch_device_context_destroy_fn device_context_destroy = nullptr;
  graft_dispatch_invocation_create_fn invocation_create = nullptr;
  graft_dispatch_invocation_destroy_fn invocation_destroy = nullptr;
  graft_dispatch_invocation_get_buffer_requirements_fn get_buffer_requirements =
      nullptr;
  graft_dispatch_invocation_attach_host_memory_fn attach_host_memory = nullptr;
  graft_dispatch_invocation_invoke_fn invoke = nullptr;
  // Optional exports: NULL when the library leaves them out.
  graft_dispatch_invocation_invoke_async_fn invoke_async = nullptr;
  graft_dispatch_invocation_wait_fn wait = nullptr;
  graft_dispatch_invocation_get_profile_fn get_profile = nullptr;
};

// Looks up every export of `lib` into `table` (dlsym only: nothing is
// called) and returns the names of the required ones it lacks, in the
// header's order, abi_version first; empty when the library is complete.
inline std::vector<std::string> LookUpDispatchAbiTable(
    const DynamicLibrary& lib, DispatchAbiTable* table) {
  struct Slot {
    const char* name;
    void** slot;
    bool required;
  };
  DispatchAbiTable& t = *table;
  const Slot slots[] = {
      {GRAFT_DISPATCH_ABI_VERSION_SYMBOL,
       reinterpret_cast<void**>(&t.abi_version), true},
      {GRAFT_DISPATCH_CREATE_SYMBOL, reinterpret_cast<void**>(&t.create), true},
      {GRAFT_DISPATCH_DESTROY_SYMBOL, reinterpret_cast<void**>(&t.destroy),
       true},
      {GRAFT_DISPATCH_GET_INFO_SYMBOL, reinterpret_cast<void**>(&t.get_info),
       true},
      {GRAFT_DISPATCH_CHECK_COMPATIBILITY_SYMBOL,
       reinterpret_cast<void**>(&t.check_compatibility), true},
      {GRAFT_DISPATCH_DEVICE_CONTEXT_CREATE_SYMBOL,
       reinterpret_cast<void**>(&t.device_context_create), true},
      {GRAFT_DISPATCH_DEVICE_CONTEXT_DESTROY_SYMBOL,
       reinterpret_cast<void**>(&t.device_context_destroy), true},
      {GRAFT_DISPATCH_INVOCATION_CREATE_SYMBOL,
       reinterpret_cast<void**>(&t.invocation_create), true},
      {GRAFT_DISPATCH_INVOCATION_DESTROY_SYMBOL,
       reinterpret_cast<void**>(&t.invocation_destroy), true},
      {GRAFT_DISPATCH_INVOCATION_GET_BUFFER_REQUIREMENTS_SYMBOL,
       reinterpret_cast<void**>(&t.get_buffer_requirements), true},
      {GRAFT_DISPATCH_INVOCATION_ATTACH_HOST_MEMORY_SYMBOL,
       reinterpret_cast<void**>(&t.attach_host_memory), true},
      {GRAFT_DISPATCH_INVOCATION_INVOKE_SYMBOL,
       reinterpret_cast<void**>(&t.invoke), true},
      {GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL,
       reinterpret_cast<void**>(&t.invoke_async), false},
      {GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL,
       reinterpret_cast<void**>(&t.wait), false},
      {GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL,
       reinterpret_cast<void**>(&t.get_profile), false},
  };
  std::vector<std::string> missing;
  for (const Slot& s : slots) {
    *s.slot = lib.Symbol(s.name);
    if (*s.slot == nullptr && s.required) missing.push_back(s.name);
  }
  return missing;
}

}  // namespace graft

#endif  // GRAFT_DISPATCH_DISPATCH_ABI_TABLE_H_
