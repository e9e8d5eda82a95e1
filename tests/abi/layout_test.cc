// Freezes the layout of every released struct of the C ABI (ABI 1.0, x86_64
// LP64), and the values of every enumeration that mirrors another schema.
//
// If a static_assert here fires, a released layout changed: vendor libraries
// built against the old headers would read garbage. Append members at the
// end of an extensible struct instead (and add asserts for them here); never
// edit a number below.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "graft_common.h"
#include "graft_compiler_plugin.h"
#include "graft_graph.h"

static_assert(sizeof(void*) == 8 && sizeof(size_t) == 8 &&
                  alignof(double) == 8 && alignof(int64_t) == 8,
              "the frozen layouts below are for LP64 targets (x86_64, "
              "aarch64); add a table for other data models");

#define GRAFT_FREEZE_SIZE(type, size) \
  static_assert(sizeof(type) == (size), "layout of " #type " changed")
#define GRAFT_FREEZE_OFFSET(type, member, offset)   \
  static_assert(offsetof(type, member) == (offset), \
                "offset of " #type "." #member " changed")

// Enumerations are fixed-width integers, whatever the compiler.
static_assert(sizeof(graft_status_code_t) == 4, "");
static_assert(sizeof(graft_element_type_t) == 4, "");
static_assert(sizeof(graft_log_level_t) == 4, "");
static_assert(sizeof(graft_hardware_kinds_t) == 4, "");
static_assert(sizeof(graft_quantization_kind_t) == 4, "");
static_assert(sizeof(graft_tensor_flags_t) == 4, "");
static_assert(sizeof(graft_attribute_type_t) == 4, "");
static_assert(sizeof(graft_partition_reason_t) == 4, "");
static_assert(sizeof(graft_compiler_plugin_flags_t) == 4, "");

GRAFT_FREEZE_SIZE(graft_status_t, 32);
GRAFT_FREEZE_OFFSET(graft_status_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_status_t, code, 8);
GRAFT_FREEZE_OFFSET(graft_status_t, message, 16);
GRAFT_FREEZE_OFFSET(graft_status_t, release, 24);

GRAFT_FREEZE_SIZE(graft_byte_span_t, 16);
GRAFT_FREEZE_OFFSET(graft_byte_span_t, data, 0);
GRAFT_FREEZE_OFFSET(graft_byte_span_t, size, 8);

GRAFT_FREEZE_SIZE(graft_key_value_t, 16);
GRAFT_FREEZE_OFFSET(graft_key_value_t, key, 0);
GRAFT_FREEZE_OFFSET(graft_key_value_t, value, 8);

GRAFT_FREEZE_SIZE(graft_option_info_t, 24);
GRAFT_FREEZE_OFFSET(graft_option_info_t, name, 0);
GRAFT_FREEZE_OFFSET(graft_option_info_t, default_value, 8);
GRAFT_FREEZE_OFFSET(graft_option_info_t, description, 16);

GRAFT_FREEZE_SIZE(graft_compatibility_stamp_t, 40);
GRAFT_FREEZE_OFFSET(graft_compatibility_stamp_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_compatibility_stamp_t, abi_version, 8);
GRAFT_FREEZE_OFFSET(graft_compatibility_stamp_t, bytecode_format_version, 12);
GRAFT_FREEZE_OFFSET(graft_compatibility_stamp_t, vendor, 16);
GRAFT_FREEZE_OFFSET(graft_compatibility_stamp_t, plugin_version, 24);
GRAFT_FREEZE_OFFSET(graft_compatibility_stamp_t, soc_model, 32);

GRAFT_FREEZE_SIZE(graft_host_api_t, 64);
GRAFT_FREEZE_OFFSET(graft_host_api_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_host_api_t, abi_version, 8);
GRAFT_FREEZE_OFFSET(graft_host_api_t, reserved0, 12);
GRAFT_FREEZE_OFFSET(graft_host_api_t, host_context, 16);
GRAFT_FREEZE_OFFSET(graft_host_api_t, status_create, 24);
GRAFT_FREEZE_OFFSET(graft_host_api_t, status_create_formatted, 32);
GRAFT_FREEZE_OFFSET(graft_host_api_t, log_message, 40);
GRAFT_FREEZE_OFFSET(graft_host_api_t, allocate, 48);
GRAFT_FREEZE_OFFSET(graft_host_api_t, deallocate, 56);

GRAFT_FREEZE_SIZE(graft_quantization_t, 64);
GRAFT_FREEZE_OFFSET(graft_quantization_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_quantization_t, kind, 8);
GRAFT_FREEZE_OFFSET(graft_quantization_t, quantized_dimension, 12);
GRAFT_FREEZE_OFFSET(graft_quantization_t, scales, 16);
GRAFT_FREEZE_OFFSET(graft_quantization_t, num_scales, 24);
GRAFT_FREEZE_OFFSET(graft_quantization_t, zero_points, 32);
GRAFT_FREEZE_OFFSET(graft_quantization_t, num_zero_points, 40);
GRAFT_FREEZE_OFFSET(graft_quantization_t, block_size, 48);
GRAFT_FREEZE_OFFSET(graft_quantization_t, blockwise_scales_tensor, 52);
GRAFT_FREEZE_OFFSET(graft_quantization_t, blockwise_zero_points_tensor, 56);
GRAFT_FREEZE_OFFSET(graft_quantization_t, reserved0, 60);

GRAFT_FREEZE_SIZE(graft_tensor_t, 80);
GRAFT_FREEZE_OFFSET(graft_tensor_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_tensor_t, name, 8);
GRAFT_FREEZE_OFFSET(graft_tensor_t, element_type, 16);
GRAFT_FREEZE_OFFSET(graft_tensor_t, flags, 20);
GRAFT_FREEZE_OFFSET(graft_tensor_t, dims, 24);
GRAFT_FREEZE_OFFSET(graft_tensor_t, rank, 32);
GRAFT_FREEZE_OFFSET(graft_tensor_t, shape_signature, 40);
GRAFT_FREEZE_OFFSET(graft_tensor_t, quantization, 48);
GRAFT_FREEZE_OFFSET(graft_tensor_t, data, 56);
GRAFT_FREEZE_OFFSET(graft_tensor_t, buffer_id, 72);

GRAFT_FREEZE_SIZE(graft_attribute_t, 72);
GRAFT_FREEZE_OFFSET(graft_attribute_t, name, 0);
GRAFT_FREEZE_OFFSET(graft_attribute_t, type, 8);
GRAFT_FREEZE_OFFSET(graft_attribute_t, reserved0, 12);
GRAFT_FREEZE_OFFSET(graft_attribute_t, int_value, 16);
GRAFT_FREEZE_OFFSET(graft_attribute_t, float_value, 24);
GRAFT_FREEZE_OFFSET(graft_attribute_t, string_value, 32);
GRAFT_FREEZE_OFFSET(graft_attribute_t, int_values, 40);
GRAFT_FREEZE_OFFSET(graft_attribute_t, float_values, 48);
GRAFT_FREEZE_OFFSET(graft_attribute_t, bytes_value, 56);
GRAFT_FREEZE_OFFSET(graft_attribute_t, num_values, 64);

GRAFT_FREEZE_SIZE(graft_op_t, 120);
GRAFT_FREEZE_OFFSET(graft_op_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_op_t, builtin_code, 8);
GRAFT_FREEZE_OFFSET(graft_op_t, version, 12);
GRAFT_FREEZE_OFFSET(graft_op_t, name, 16);
GRAFT_FREEZE_OFFSET(graft_op_t, custom_code, 24);
GRAFT_FREEZE_OFFSET(graft_op_t, inputs, 32);
GRAFT_FREEZE_OFFSET(graft_op_t, num_inputs, 40);
GRAFT_FREEZE_OFFSET(graft_op_t, outputs, 48);
GRAFT_FREEZE_OFFSET(graft_op_t, num_outputs, 56);
GRAFT_FREEZE_OFFSET(graft_op_t, intermediates, 64);
GRAFT_FREEZE_OFFSET(graft_op_t, num_intermediates, 72);
GRAFT_FREEZE_OFFSET(graft_op_t, attributes, 80);
GRAFT_FREEZE_OFFSET(graft_op_t, num_attributes, 88);
GRAFT_FREEZE_OFFSET(graft_op_t, custom_options, 96);
GRAFT_FREEZE_OFFSET(graft_op_t, original_op_index, 112);
GRAFT_FREEZE_OFFSET(graft_op_t, reserved0, 116);

GRAFT_FREEZE_SIZE(graft_graph_view_t, 104);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, name, 8);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, subgraph_index, 16);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, reserved0, 20);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, tensors, 24);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, num_tensors, 32);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, ops, 40);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, num_ops, 48);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, inputs, 56);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, num_inputs, 64);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, outputs, 72);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, num_outputs, 80);
GRAFT_FREEZE_OFFSET(graft_graph_view_t, tflite_buffer, 88);

GRAFT_FREEZE_SIZE(graft_compiler_plugin_info_t, 80);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, abi_version, 8);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, flags, 12);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, vendor, 16);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, plugin_version, 24);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, description, 32);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, soc_models, 40);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, num_soc_models, 48);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, hardware_kinds, 56);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, bytecode_format_version, 60);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, options, 64);
GRAFT_FREEZE_OFFSET(graft_compiler_plugin_info_t, num_options, 72);

GRAFT_FREEZE_SIZE(graft_op_decision_t, 24);
GRAFT_FREEZE_OFFSET(graft_op_decision_t, taken, 0);
GRAFT_FREEZE_OFFSET(graft_op_decision_t, group_id, 4);
GRAFT_FREEZE_OFFSET(graft_op_decision_t, reason_code, 8);
GRAFT_FREEZE_OFFSET(graft_op_decision_t, reserved0, 12);
GRAFT_FREEZE_OFFSET(graft_op_decision_t, reason, 16);

GRAFT_FREEZE_SIZE(graft_partition_result_t, 24);
GRAFT_FREEZE_OFFSET(graft_partition_result_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_partition_result_t, decisions, 8);
GRAFT_FREEZE_OFFSET(graft_partition_result_t, num_decisions, 16);

GRAFT_FREEZE_SIZE(graft_compiled_call_t, 16);
GRAFT_FREEZE_OFFSET(graft_compiled_call_t, entry_point, 0);
GRAFT_FREEZE_OFFSET(graft_compiled_call_t, module_index, 8);

GRAFT_FREEZE_SIZE(graft_debug_map_entry_t, 24);
GRAFT_FREEZE_OFFSET(graft_debug_map_entry_t, module_index, 0);
GRAFT_FREEZE_OFFSET(graft_debug_map_entry_t, vendor_location, 8);
GRAFT_FREEZE_OFFSET(graft_debug_map_entry_t, original_op_index, 16);
GRAFT_FREEZE_OFFSET(graft_debug_map_entry_t, partition_index, 20);

GRAFT_FREEZE_SIZE(graft_compiled_result_t, 64);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, struct_size, 0);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, stamp, 8);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, modules, 16);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, num_modules, 24);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, calls, 32);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, num_calls, 40);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, debug_map, 48);
GRAFT_FREEZE_OFFSET(graft_compiled_result_t, num_debug_map_entries, 56);

// Status codes are absl::StatusCode's, so the host converts with a cast.
#define GRAFT_SAME_CODE(graft, absl_code)                               \
  static_assert(graft == static_cast<int>(absl::StatusCode::absl_code), \
                #graft " differs from absl::StatusCode::" #absl_code)
GRAFT_SAME_CODE(GRAFT_STATUS_OK, kOk);
GRAFT_SAME_CODE(GRAFT_STATUS_CANCELLED, kCancelled);
GRAFT_SAME_CODE(GRAFT_STATUS_UNKNOWN, kUnknown);
GRAFT_SAME_CODE(GRAFT_STATUS_INVALID_ARGUMENT, kInvalidArgument);
GRAFT_SAME_CODE(GRAFT_STATUS_DEADLINE_EXCEEDED, kDeadlineExceeded);
GRAFT_SAME_CODE(GRAFT_STATUS_NOT_FOUND, kNotFound);
GRAFT_SAME_CODE(GRAFT_STATUS_ALREADY_EXISTS, kAlreadyExists);
GRAFT_SAME_CODE(GRAFT_STATUS_PERMISSION_DENIED, kPermissionDenied);
GRAFT_SAME_CODE(GRAFT_STATUS_RESOURCE_EXHAUSTED, kResourceExhausted);
GRAFT_SAME_CODE(GRAFT_STATUS_FAILED_PRECONDITION, kFailedPrecondition);
GRAFT_SAME_CODE(GRAFT_STATUS_ABORTED, kAborted);
GRAFT_SAME_CODE(GRAFT_STATUS_OUT_OF_RANGE, kOutOfRange);
GRAFT_SAME_CODE(GRAFT_STATUS_UNIMPLEMENTED, kUnimplemented);
GRAFT_SAME_CODE(GRAFT_STATUS_INTERNAL, kInternal);
GRAFT_SAME_CODE(GRAFT_STATUS_UNAVAILABLE, kUnavailable);
GRAFT_SAME_CODE(GRAFT_STATUS_DATA_LOSS, kDataLoss);
GRAFT_SAME_CODE(GRAFT_STATUS_UNAUTHENTICATED, kUnauthenticated);

// Element types are TFLite's TensorType numbers (schema.fbs).
static_assert(GRAFT_ELEMENT_TYPE_FLOAT32 == 0, "");
static_assert(GRAFT_ELEMENT_TYPE_FLOAT16 == 1, "");
static_assert(GRAFT_ELEMENT_TYPE_INT32 == 2, "");
static_assert(GRAFT_ELEMENT_TYPE_UINT8 == 3, "");
static_assert(GRAFT_ELEMENT_TYPE_INT64 == 4, "");
static_assert(GRAFT_ELEMENT_TYPE_STRING == 5, "");
static_assert(GRAFT_ELEMENT_TYPE_BOOL == 6, "");
static_assert(GRAFT_ELEMENT_TYPE_INT16 == 7, "");
static_assert(GRAFT_ELEMENT_TYPE_COMPLEX64 == 8, "");
static_assert(GRAFT_ELEMENT_TYPE_INT8 == 9, "");
static_assert(GRAFT_ELEMENT_TYPE_FLOAT64 == 10, "");
static_assert(GRAFT_ELEMENT_TYPE_COMPLEX128 == 11, "");
static_assert(GRAFT_ELEMENT_TYPE_UINT64 == 12, "");
static_assert(GRAFT_ELEMENT_TYPE_RESOURCE == 13, "");
static_assert(GRAFT_ELEMENT_TYPE_VARIANT == 14, "");
static_assert(GRAFT_ELEMENT_TYPE_UINT32 == 15, "");
static_assert(GRAFT_ELEMENT_TYPE_UINT16 == 16, "");
static_assert(GRAFT_ELEMENT_TYPE_INT4 == 17, "");
static_assert(GRAFT_ELEMENT_TYPE_BFLOAT16 == 18, "");
static_assert(GRAFT_ELEMENT_TYPE_INT2 == 19, "");
static_assert(GRAFT_ELEMENT_TYPE_UINT4 == 20, "");
static_assert(GRAFT_ELEMENT_TYPE_FLOAT8_E4M3FN == 21, "");
static_assert(GRAFT_ELEMENT_TYPE_FLOAT8_E5M2 == 22, "");

// TFLite's BuiltinOperator number of CUSTOM.
static_assert(GRAFT_BUILTIN_CUSTOM == 32, "");

// Released enumerators of Graft's own enumerations never change value.
static_assert(GRAFT_ABI_VERSION_MAJOR == 1, "");
static_assert(GRAFT_LOG_LEVEL_VERBOSE == 0 && GRAFT_LOG_LEVEL_INFO == 1 &&
                  GRAFT_LOG_LEVEL_WARNING == 2 && GRAFT_LOG_LEVEL_ERROR == 3,
              "");
static_assert(GRAFT_HARDWARE_KIND_CPU == 1 && GRAFT_HARDWARE_KIND_GPU == 2 &&
                  GRAFT_HARDWARE_KIND_DSP == 4 && GRAFT_HARDWARE_KIND_NPU == 8,
              "");
static_assert(GRAFT_QUANTIZATION_KIND_NONE == 0 &&
                  GRAFT_QUANTIZATION_KIND_PER_TENSOR == 1 &&
                  GRAFT_QUANTIZATION_KIND_PER_CHANNEL == 2 &&
                  GRAFT_QUANTIZATION_KIND_BLOCKWISE == 3 &&
                  GRAFT_QUANTIZATION_KIND_OTHER == 4,
              "");
static_assert(GRAFT_TENSOR_FLAG_CONSTANT == 1 &&
                  GRAFT_TENSOR_FLAG_VARIABLE == 2 &&
                  GRAFT_TENSOR_FLAG_SPARSE == 4,
              "");
static_assert(GRAFT_ATTRIBUTE_TYPE_INT == 1 &&
                  GRAFT_ATTRIBUTE_TYPE_FLOAT == 2 &&
                  GRAFT_ATTRIBUTE_TYPE_BOOL == 3 &&
                  GRAFT_ATTRIBUTE_TYPE_STRING == 4 &&
                  GRAFT_ATTRIBUTE_TYPE_ENUM == 5 &&
                  GRAFT_ATTRIBUTE_TYPE_INT_ARRAY == 6 &&
                  GRAFT_ATTRIBUTE_TYPE_FLOAT_ARRAY == 7 &&
                  GRAFT_ATTRIBUTE_TYPE_BYTES == 8,
              "");
static_assert(GRAFT_PARTITION_REASON_UNSPECIFIED == 0 &&
                  GRAFT_PARTITION_REASON_UNSUPPORTED_OP == 1 &&
                  GRAFT_PARTITION_REASON_UNSUPPORTED_OP_VERSION == 2 &&
                  GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE == 3 &&
                  GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE == 4 &&
                  GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE == 5 &&
                  GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION == 6 &&
                  GRAFT_PARTITION_REASON_NOT_CONSTANT == 7 &&
                  GRAFT_PARTITION_REASON_UNSUPPORTED_ON_SOC == 8 &&
                  GRAFT_PARTITION_REASON_NOT_PROFITABLE == 9 &&
                  GRAFT_PARTITION_REASON_RESOURCE_LIMIT == 10 &&
                  GRAFT_PARTITION_REASON_DISABLED_BY_OPTION == 11,
              "");
static_assert(GRAFT_COMPILER_PLUGIN_FLAG_WANTS_TFLITE_BUFFERS == 1, "");

namespace {

TEST(AbiVersion, PacksMajorHighAndMinorLow) {
  EXPECT_EQ(GRAFT_ABI_VERSION_PACK(1, 2), 0x00010002u);
  EXPECT_EQ(GRAFT_ABI_VERSION_GET_MAJOR(GRAFT_ABI_VERSION_PACK(3, 7)), 3u);
  EXPECT_EQ(GRAFT_ABI_VERSION_GET_MINOR(GRAFT_ABI_VERSION_PACK(3, 7)), 7u);
  EXPECT_LT(GRAFT_ABI_VERSION_PACK(1, 9), GRAFT_ABI_VERSION_PACK(2, 0));
  EXPECT_EQ(GRAFT_ABI_VERSION, GRAFT_ABI_VERSION_PACK(GRAFT_ABI_VERSION_MAJOR,
                                                      GRAFT_ABI_VERSION_MINOR));
}

TEST(StructHasMember, ComparesStructSizeWithTheMemberEnd) {
  graft_host_api_t host{};
  host.struct_size = offsetof(graft_host_api_t, allocate);
  EXPECT_TRUE(GRAFT_STRUCT_HAS_MEMBER(&host, graft_host_api_t, log_message));
  EXPECT_FALSE(GRAFT_STRUCT_HAS_MEMBER(&host, graft_host_api_t, allocate));
  host.struct_size = sizeof(host);
  EXPECT_TRUE(GRAFT_STRUCT_HAS_MEMBER(&host, graft_host_api_t, deallocate));
}

TEST(ElementType, EveryTypeHasANameAndKnownTypesHaveWidths) {
  for (graft_element_type_t type = GRAFT_ELEMENT_TYPE_FLOAT32;
       type <= GRAFT_ELEMENT_TYPE_FLOAT8_E5M2; ++type) {
    EXPECT_STRNE(graft_element_type_name(type), "UNKNOWN") << type;
    const bool no_fixed_size = type == GRAFT_ELEMENT_TYPE_STRING ||
                               type == GRAFT_ELEMENT_TYPE_RESOURCE ||
                               type == GRAFT_ELEMENT_TYPE_VARIANT;
    EXPECT_EQ(graft_element_type_bit_width(type) == 0, no_fixed_size) << type;
  }
  EXPECT_STREQ(graft_element_type_name(GRAFT_ELEMENT_TYPE_INT8), "INT8");
  EXPECT_STREQ(graft_element_type_name(999), "UNKNOWN");
  EXPECT_EQ(graft_element_type_bit_width(GRAFT_ELEMENT_TYPE_FLOAT32), 32u);
  EXPECT_EQ(graft_element_type_bit_width(GRAFT_ELEMENT_TYPE_INT4), 4u);
}

TEST(Status, StaticStatusReleaseIsANoOpAndNullIsOk) {
  static graft_status_t kStatic =
      GRAFT_STATUS_INITIALIZER(GRAFT_STATUS_INTERNAL, "static");
  graft_status_release(&kStatic);
  graft_status_release(nullptr);
  EXPECT_EQ(graft_status_code(nullptr), GRAFT_STATUS_OK);
  EXPECT_EQ(graft_status_code(&kStatic), GRAFT_STATUS_INTERNAL);
  EXPECT_STREQ(kStatic.message, "static");
}

TEST(GraphHelpers, FindAttributeAndTensorAndElementCount) {
  graft_attribute_t attributes[2] = {};
  attributes[0].name = "padding";
  attributes[0].type = GRAFT_ATTRIBUTE_TYPE_ENUM;
  attributes[0].int_value = 1;
  attributes[0].string_value = "VALID";
  attributes[1].name = "stride_w";
  attributes[1].type = GRAFT_ATTRIBUTE_TYPE_INT;
  attributes[1].int_value = 2;
  graft_op_t op{};
  op.struct_size = sizeof(op);
  op.attributes = attributes;
  op.num_attributes = 2;
  ASSERT_NE(graft_op_find_attribute(&op, "stride_w"), nullptr);
  EXPECT_EQ(graft_op_find_attribute(&op, "stride_w")->int_value, 2);
  EXPECT_STREQ(graft_op_find_attribute(&op, "padding")->string_value, "VALID");
  EXPECT_EQ(graft_op_find_attribute(&op, "stride_h"), nullptr);
  EXPECT_EQ(graft_op_find_attribute(nullptr, "stride_w"), nullptr);

  const int64_t dims[] = {2, 3, 4};
  graft_tensor_t tensor{};
  tensor.struct_size = sizeof(tensor);
  tensor.dims = dims;
  tensor.rank = 3;
  EXPECT_EQ(graft_tensor_num_elements(&tensor), 24);
  tensor.rank = 0;
  EXPECT_EQ(graft_tensor_num_elements(&tensor), 1);
  const int64_t huge[] = {INT64_MAX, 2};
  tensor.dims = huge;
  tensor.rank = 2;
  EXPECT_EQ(graft_tensor_num_elements(&tensor), -1);

  const graft_tensor_t* tensors[] = {&tensor};
  graft_graph_view_t view{};
  view.struct_size = sizeof(view);
  view.tensors = tensors;
  view.num_tensors = 1;
  EXPECT_EQ(graft_graph_view_tensor(&view, 0), &tensor);
  EXPECT_EQ(graft_graph_view_tensor(&view, 1), nullptr);
  EXPECT_EQ(graft_graph_view_tensor(&view, -1), nullptr);
}

}  // namespace
