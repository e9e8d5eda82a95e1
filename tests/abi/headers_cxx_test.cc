// Every public header must also compile as C++ (hosts are C++17) without
// warnings under -Wall -Wextra -pedantic -Werror, all together here and each
// on its own (the generated standalone_*.cc files). Also checks that each
// exported function's declaration matches its *_fn typedef, which is what
// hosts cast dlsym results to.
#include <cstring>
#include <type_traits>

#include "graft_common.h"
#include "graft_compiler_plugin.h"
#include "graft_graph.h"

#define GRAFT_DECLARATION_MATCHES_TYPEDEF(function)                      \
  static_assert(std::is_same<decltype(&function), function##_fn>::value, \
                #function " does not match " #function "_fn")
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_compiler_plugin_abi_version);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_compiler_plugin_create);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_compiler_plugin_destroy);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_compiler_plugin_get_info);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_compiler_plugin_check_compatibility);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_compiler_plugin_partition);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_compiler_plugin_compile);
GRAFT_DECLARATION_MATCHES_TYPEDEF(
    graft_compiler_plugin_compiled_result_destroy);

int main() {
  static graft_status_t status =
      GRAFT_STATUS_INITIALIZER(GRAFT_STATUS_INTERNAL, "static");
  graft_status_release(&status);
  return std::strcmp(graft_element_type_name(GRAFT_ELEMENT_TYPE_FLOAT32),
                     "FLOAT32") == 0 &&
                 graft_status_code(&status) == GRAFT_STATUS_INTERNAL
             ? 0
             : 1;
}
