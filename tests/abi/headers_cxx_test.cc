// Every public header must also compile as C++ (hosts are C++17) without
// warnings under -Wall -Wextra -pedantic -Werror, all together here and each
// on its own (the generated standalone_*.cc files). Also checks that each
// exported function's declaration matches its *_fn typedef, which is what
// hosts cast dlsym results to.
#include <cstring>
#include <type_traits>

#include "graft_common.h"
#include "graft_compiler_plugin.h"
#include "graft_dispatch.h"
#include "graft_graph.h"
#include "graft_schema_constants.h"
#include "graft_vendor_helper.h"

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

GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_abi_version);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_create);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_destroy);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_get_info);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_check_compatibility);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_device_context_create);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_device_context_destroy);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_invocation_create);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_invocation_destroy);
GRAFT_DECLARATION_MATCHES_TYPEDEF(
    graft_dispatch_invocation_get_buffer_requirements);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_invocation_attach_host_memory);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_invocation_invoke);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_invocation_invoke_async);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_invocation_wait);
GRAFT_DECLARATION_MATCHES_TYPEDEF(graft_dispatch_invocation_get_profile);

// Each *_SYMBOL macro spells its function's name, which is what hosts pass
// to dlsym.
constexpr bool SameString(const char* a, const char* b) {
  return *a == *b && (*a == '\0' || SameString(a + 1, b + 1));
}
#define GRAFT_SYMBOL_NAMES_FUNCTION(macro, function) \
  static_assert(SameString(macro, #function),        \
                #macro " is not \"" #function "\"")
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_ABI_VERSION_SYMBOL,
                            graft_dispatch_abi_version);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_CREATE_SYMBOL,
                            graft_dispatch_create);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_DESTROY_SYMBOL,
                            graft_dispatch_destroy);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_GET_INFO_SYMBOL,
                            graft_dispatch_get_info);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_CHECK_COMPATIBILITY_SYMBOL,
                            graft_dispatch_check_compatibility);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_DEVICE_CONTEXT_CREATE_SYMBOL,
                            graft_dispatch_device_context_create);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_DEVICE_CONTEXT_DESTROY_SYMBOL,
                            graft_dispatch_device_context_destroy);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_INVOCATION_CREATE_SYMBOL,
                            graft_dispatch_invocation_create);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_INVOCATION_DESTROY_SYMBOL,
                            graft_dispatch_invocation_destroy);
GRAFT_SYMBOL_NAMES_FUNCTION(
    GRAFT_DISPATCH_INVOCATION_GET_BUFFER_REQUIREMENTS_SYMBOL,
    graft_dispatch_invocation_get_buffer_requirements);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_INVOCATION_ATTACH_HOST_MEMORY_SYMBOL,
                            graft_dispatch_invocation_attach_host_memory);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_INVOCATION_INVOKE_SYMBOL,
                            graft_dispatch_invocation_invoke);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_INVOCATION_INVOKE_ASYNC_SYMBOL,
                            graft_dispatch_invocation_invoke_async);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_INVOCATION_WAIT_SYMBOL,
                            graft_dispatch_invocation_wait);
GRAFT_SYMBOL_NAMES_FUNCTION(GRAFT_DISPATCH_INVOCATION_GET_PROFILE_SYMBOL,
                            graft_dispatch_invocation_get_profile);

// graft_vendor_helper.h's constants and inline functions in C++: the
// schema's numbers as constant expressions, a NULL host refused.
static_assert(GRAFT_OP_ADD == 0 && GRAFT_OP_CONV_2D == 3,
              "BuiltinOperator numbers");
static_assert(GRAFT_ACTIVATION_FUNCTION_TYPE_RELU6 == 3,
              "ActivationFunctionType numbers");
static_assert(GRAFT_VENDOR_SIZE_THROUGH(graft_host_api_t, struct_size) ==
                  sizeof(size_t),
              "GRAFT_VENDOR_SIZE_THROUGH");

int main() {
  static graft_status_t status =
      GRAFT_STATUS_INITIALIZER(GRAFT_STATUS_INTERNAL, "static");
  graft_status_release(&status);
  int64_t value = 0;
  const bool helper_ok =
      graft_status_code(graft_vendor_check_host(nullptr)) ==
          GRAFT_STATUS_INVALID_ARGUMENT &&
      graft_vendor_parse_int("42", 0, 100, &value) == 1 && value == 42 &&
      std::strcmp(GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION,
                  "fused_activation_function") == 0 &&
      graft_vendor_attribute_int(nullptr, GRAFT_ATTR_KEEP_NUM_DIMS, 7) == 7;
  return std::strcmp(graft_element_type_name(GRAFT_ELEMENT_TYPE_FLOAT32),
                     "FLOAT32") == 0 &&
                 graft_status_code(&status) == GRAFT_STATUS_INTERNAL &&
                 helper_ok
             ? 0
             : 1;
}
