/* Compiled as strict C99 (-std=c99 -pedantic -Werror and more, see
 * CMakeLists.txt): every public header must be valid, warning-free C. The
 * body uses the headers' inline helpers and macros so that they are
 * compiled, not just parsed. Each header is also compiled on its own (the
 * generated standalone_*.c files) to prove it is self-contained. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graft_common.h"
#include "graft_compiler_plugin.h"
#include "graft_dispatch.h"
#include "graft_graph.h"
#include "graft_schema_constants.h"
#include "graft_vendor_helper.h"

static graft_status_t k_static_status =
    GRAFT_STATUS_INITIALIZER(GRAFT_STATUS_INTERNAL, "static");

/* A host table whose statuses keep their message in a fixed buffer, enough
 * to run graft_vendor_helper.h's functions. */
static char g_last_message[512];
static graft_status_t g_status;

static graft_status_t* TestStatusCreate(const graft_host_api_t* host,
                                        graft_status_code_t code,
                                        const char* message) {
  (void)host;
  if (code == GRAFT_STATUS_OK) return NULL;
  snprintf(g_last_message, sizeof(g_last_message), "%s", message);
  g_status.struct_size = sizeof(g_status);
  g_status.code = code;
  g_status.message = g_last_message;
  g_status.release = NULL;
  return &g_status;
}

static graft_status_t* TestStatusCreateFormatted(const graft_host_api_t* host,
                                                 graft_status_code_t code,
                                                 const char* format, ...) {
  char message[sizeof(g_last_message)];
  va_list args;
  if (code == GRAFT_STATUS_OK) return NULL;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return TestStatusCreate(host, code, message);
}

/* graft_vendor_helper.h: host checks, struct sizes, options, attributes.
 * Returns the number of failed checks. */
static int CheckVendorHelper(const graft_op_t* op) {
  static const graft_option_info_t known[] = {{"threads", "1", "threads"},
                                              {"fast", "0", "fast"}};
  graft_key_value_t options[3];
  graft_host_api_t host;
  graft_dispatch_invocation_desc_t desc;
  /* Through pointers, as a library receives them (a literal &desc would
   * make -Waddress warn about the macro's NULL test). */
  graft_dispatch_invocation_desc_t* some_desc = &desc;
  graft_dispatch_invocation_desc_t* no_desc = NULL;
  int64_t threads = 0;
  int fast = 0;
  int failures = 0;

  memset(&host, 0, sizeof(host));
  host.struct_size = sizeof(host);
  host.abi_version = GRAFT_ABI_VERSION;
  host.status_create = TestStatusCreate;
  host.status_create_formatted = TestStatusCreateFormatted;
  if (graft_vendor_check_host(&host) != NULL) ++failures;
  if (graft_status_code(graft_vendor_check_host(NULL)) !=
      GRAFT_STATUS_INVALID_ARGUMENT) {
    ++failures;
  }
  host.abi_version = GRAFT_ABI_VERSION_PACK(GRAFT_ABI_VERSION_MAJOR + 1, 0);
  if (graft_status_code(graft_vendor_check_host(&host)) !=
      GRAFT_STATUS_FAILED_PRECONDITION) {
    ++failures;
  }
  host.abi_version = GRAFT_ABI_VERSION;
  host.struct_size = offsetof(graft_host_api_t, allocate);
  if (graft_status_code(graft_vendor_check_host(&host)) !=
      GRAFT_STATUS_FAILED_PRECONDITION) {
    ++failures;
  }
  host.struct_size = sizeof(host);

  memset(&desc, 0, sizeof(desc));
  desc.struct_size = offsetof(graft_dispatch_invocation_desc_t, flags);
  if (GRAFT_VENDOR_CHECK_STRUCT(&host, "t", some_desc,
                                graft_dispatch_invocation_desc_t,
                                model_fd) != NULL ||
      graft_status_code(GRAFT_VENDOR_CHECK_STRUCT(
          &host, "t", some_desc, graft_dispatch_invocation_desc_t, flags)) !=
          GRAFT_STATUS_INVALID_ARGUMENT ||
      strstr(g_last_message, "graft_dispatch_invocation_desc_t") == NULL ||
      graft_status_code(GRAFT_VENDOR_CHECK_STRUCT(
          &host, "t", no_desc, graft_dispatch_invocation_desc_t, flags)) !=
          GRAFT_STATUS_INVALID_ARGUMENT) {
    ++failures;
  }

  options[0].key = "threads";
  options[0].value = "4";
  options[1].key = "fast";
  options[1].value = "1";
  options[2].key = "thraeds";
  options[2].value = "2";
  if (graft_vendor_check_options(&host, "t", options, 2, known, 2) != NULL ||
      graft_vendor_option_int(&host, "t", options, 2, "threads", 1, 1, 64,
                              &threads) != NULL ||
      threads != 4 ||
      graft_vendor_option_bool(&host, "t", options, 2, "fast", 0, &fast) !=
          NULL ||
      fast != 1) {
    ++failures;
  }
  if (graft_status_code(graft_vendor_check_options(
          &host, "t", options, 3, known, 2)) != GRAFT_STATUS_INVALID_ARGUMENT ||
      strcmp(g_last_message,
             "t: unknown option 'thraeds' (known: threads, fast)") != 0) {
    ++failures;
  }
  options[1].key = "threads";
  if (graft_status_code(graft_vendor_check_options(
          &host, "t", options, 2, known, 2)) != GRAFT_STATUS_INVALID_ARGUMENT) {
    ++failures;
  }
  options[0].value = "65";
  threads = 7;
  if (graft_status_code(graft_vendor_option_int(
          &host, "t", options, 1, "threads", 1, 1, 64, &threads)) !=
          GRAFT_STATUS_INVALID_ARGUMENT ||
      threads != 7) {
    ++failures;
  }
  if (!graft_vendor_parse_int("-9223372036854775808", INT64_MIN, INT64_MAX,
                              &threads) ||
      threads != INT64_MIN ||
      graft_vendor_parse_int("9223372036854775808", INT64_MIN, INT64_MAX,
                             &threads) ||
      graft_vendor_parse_int("1x", 0, 9, &threads) ||
      graft_vendor_parse_int("-", -9, 9, &threads) ||
      graft_vendor_parse_int("", 0, 9, &threads)) {
    ++failures;
  }

  if (graft_vendor_attribute_int(op, GRAFT_ATTR_FUSED_ACTIVATION_FUNCTION,
                                 GRAFT_ACTIVATION_FUNCTION_TYPE_NONE) !=
          GRAFT_ACTIVATION_FUNCTION_TYPE_RELU ||
      graft_vendor_attribute_int(op, GRAFT_ATTR_KEEP_NUM_DIMS, 5) != 5 ||
      graft_vendor_attribute_float(op, GRAFT_ATTR_BETA, 1.5) != 1.5 ||
      GRAFT_OP_ADD != 0 || GRAFT_OP_FULLY_CONNECTED != 9 ||
      GRAFT_OP_MUL != 18) {
    ++failures;
  }
  if (failures != 0) {
    fprintf(stderr, "%d vendor helper checks failed (last message: %s)\n",
            failures, g_last_message);
  }
  return failures;
}

int main(void) {
  static const int64_t dims[] = {2, 3};
  graft_tensor_t tensor;
  graft_op_t op;
  graft_attribute_t attribute;
  graft_host_api_t host;
  const graft_tensor_t* tensors[1];
  graft_graph_view_t view;
  graft_dispatch_invocation_desc_t desc;
  graft_dispatch_buffer_requirements_t requirements;
  graft_dispatch_info_t info;
  int failures = 0;

  memset(&tensor, 0, sizeof(tensor));
  tensor.struct_size = sizeof(tensor);
  tensor.dims = dims;
  tensor.rank = 2;
  tensors[0] = &tensor;

  memset(&attribute, 0, sizeof(attribute));
  attribute.name = "fused_activation_function";
  attribute.type = GRAFT_ATTRIBUTE_TYPE_ENUM;
  attribute.int_value = 1;
  attribute.string_value = "RELU";
  memset(&op, 0, sizeof(op));
  op.struct_size = sizeof(op);
  op.attributes = &attribute;
  op.num_attributes = 1;

  memset(&view, 0, sizeof(view));
  view.struct_size = sizeof(view);
  view.tensors = tensors;
  view.num_tensors = 1;

  memset(&host, 0, sizeof(host));
  host.struct_size = offsetof(graft_host_api_t, allocate);

  if (graft_tensor_num_elements(graft_graph_view_tensor(&view, 0)) != 6) {
    ++failures;
  }
  if (graft_op_find_attribute(&op, "fused_activation_function") != &attribute) {
    ++failures;
  }
  if (strcmp(graft_element_type_name(GRAFT_ELEMENT_TYPE_INT8), "INT8") != 0) {
    ++failures;
  }
  if (GRAFT_ABI_VERSION_GET_MAJOR(GRAFT_ABI_VERSION) !=
      GRAFT_ABI_VERSION_MAJOR) {
    ++failures;
  }
  if (!GRAFT_STRUCT_HAS_MEMBER(&host, graft_host_api_t, log_message) ||
      GRAFT_STRUCT_HAS_MEMBER(&host, graft_host_api_t, allocate)) {
    ++failures;
  }
  if (graft_status_code(&k_static_status) != GRAFT_STATUS_INTERNAL ||
      graft_status_code(NULL) != GRAFT_STATUS_OK) {
    ++failures;
  }
  memset(&desc, 0, sizeof(desc));
  desc.struct_size = offsetof(graft_dispatch_invocation_desc_t, model_fd);
  desc.model_fd = -1;
  desc.flags = GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING;
  if (!GRAFT_STRUCT_HAS_MEMBER(&desc, graft_dispatch_invocation_desc_t,
                               model) ||
      GRAFT_STRUCT_HAS_MEMBER(&desc, graft_dispatch_invocation_desc_t, flags)) {
    ++failures;
  }
  memset(&requirements, 0, sizeof(requirements));
  requirements.struct_size = sizeof(requirements);
  requirements.element_type = GRAFT_ELEMENT_TYPE_FLOAT32;
  memset(&info, 0, sizeof(info));
  info.capabilities =
      GRAFT_DISPATCH_CAPABILITY_ASYNC | GRAFT_DISPATCH_CAPABILITY_PROFILING;
  if (info.capabilities != 3u || requirements.element_type != 0 ||
      GRAFT_DISPATCH_TIMEOUT_INFINITE != UINT64_MAX ||
      GRAFT_DISPATCH_IO_KIND_OUTPUT != 1) {
    ++failures;
  }
  failures += CheckVendorHelper(&op);
  graft_status_release(&k_static_status);
  if (failures != 0) fprintf(stderr, "%d C99 header checks failed\n", failures);
  return failures == 0 ? 0 : 1;
}
