/* Compiled as strict C99 (-std=c99 -pedantic -Werror and more, see
 * CMakeLists.txt): every public header must be valid, warning-free C. The
 * body uses the headers' inline helpers and macros so that they are
 * compiled, not just parsed. Each header is also compiled on its own (the
 * generated standalone_*.c files) to prove it is self-contained. */
#include <stdio.h>
#include <string.h>

#include "graft_common.h"
#include "graft_compiler_plugin.h"
#include "graft_dispatch.h"
#include "graft_graph.h"

static graft_status_t k_static_status =
    GRAFT_STATUS_INITIALIZER(GRAFT_STATUS_INTERNAL, "static");

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
      GRAFT_STRUCT_HAS_MEMBER(&desc, graft_dispatch_invocation_desc_t,
                              flags)) {
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
  graft_status_release(&k_static_status);
  if (failures != 0) fprintf(stderr, "%d C99 header checks failed\n", failures);
  return failures == 0 ? 0 : 1;
}
