// LiteRT's compiler-plugin C ABI as Graft hosts it, declared from LiteRT's
// public headers (litert/vendors/c/litert_compiler_plugin.h,
// litert/c/internal/litert_compiler_context.h, litert_model_types.h,
// litert_builder.h) at the layout the ai-edge-litert 2.3.0 plugins expect:
// the callback table (LiteRtCompilerContext) at ABI version 1.3, 1408
// bytes, 175 function pointers after an 8-byte header. The first 137
// pointers are the public header's fields in order; 137-173 are the
// builder's op-option setters; 174 is the SplitV option getter
// (../shared/litert/compiler_context_2.3.0_slots.json lists every slot).
//
// A plugin exports the functions named by the LITERT_PLUGIN_*_SYMBOL macros
// (RegisterAllTransformations and CheckCompilerCompatibility are optional;
// Qualcomm's extra LiteRtGetCompiledResultHandle is not used). It never
// links LiteRT: everything it asks of the graph goes through the table the
// host hands to LiteRtCreateCompilerPlugin.
//
// Ownership follows LiteRT: strings and arrays a callback returns are owned
// by the host and live as long as the object they describe; the plugin owns
// the plugin instance and its compiled results until their destroy calls.
#ifndef GRAFT_PLUGINS_LITERT_COMPILER_ABI_H_
#define GRAFT_PLUGINS_LITERT_COMPILER_ABI_H_

#include "core/litert_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// Handles: pointers to structs the host defines
// (plugins/litert_compiler_context.cc). LiteRT's headers spell them
// `class LiteRtOpT*` in C++; only the pointer crosses the boundary.
typedef struct LiteRtModelT* LiteRtModel;
typedef struct LiteRtSubgraphT* LiteRtSubgraph;
typedef struct LiteRtOpT* LiteRtOp;
typedef struct LiteRtTensorT* LiteRtTensor;
typedef struct LiteRtWeightsT* LiteRtWeights;
typedef struct LiteRtOpListT* LiteRtOpList;
typedef struct LiteRtOptionsT* LiteRtOptions;
typedef struct LiteRtOpaqueOptionsT* LiteRtOpaqueOptions;
typedef struct LiteRtEnvironmentOptionsT* LiteRtEnvironmentOptions;
typedef struct LiteRtBuilderT* LiteRtBuilder;

// Plugin-side handles.
typedef struct LiteRtCompilerPluginT* LiteRtCompilerPlugin;
typedef struct LiteRtCompiledResultT* LiteRtCompiledResult;

// Quantization.
typedef enum {
  kLiteRtQuantizationNone = 0,
  kLiteRtQuantizationPerTensor = 1,
  kLiteRtQuantizationPerChannel = 2,
  kLiteRtQuantizationBlockWise = 3,
} LiteRtQuantizationTypeId;

typedef struct {
  float scale;
  int64_t zero_point;
} LiteRtQuantizationPerTensor;

typedef struct {
  int32_t quantized_dimension;
  uint64_t num_channels;
  float* scales;
  int64_t* zero_points;
} LiteRtQuantizationPerChannel;

// Scales and zero points are tensors of the same subgraph.
typedef struct {
  LiteRtTensor scales;
  LiteRtTensor zero_points;
  int32_t block_size;
} LiteRtQuantizationBlockWise;

typedef struct {
  LiteRtOp op;
  LiteRtParamIndex op_output_index;
} LiteRtTensorDefiningOp;

typedef struct {
  size_t bytecode_alignment;
} LiteRtModelSerializationOptions;

// The value of an environment option (litert_any.h); Graft answers
// NOT_FOUND for every tag, so the layout is never read or written here.
typedef struct LiteRtAny LiteRtAny;
typedef int LiteRtEnvOptionTag;
// The .tflite BuiltinOperator value (LiteRtOpCode).
typedef int LiteRtOpCode;

// The builder's op-option setters share this type in the table: Graft runs
// no rewrite patterns, so it never hands a plugin a LiteRtBuilder, and each
// setter answers kLiteRtStatusErrorUnsupported without reading its
// arguments (the real setters take (builder, op, option values...)).
typedef LiteRtStatus (*LiteRtBuilderOpOptionFn)(LiteRtBuilder builder,
                                                LiteRtOp op);
#define LITERT_NUM_BUILDER_OP_OPTION_SETTERS 37

#define LITERT_COMPILER_CONTEXT_MAJOR 1
#define LITERT_COMPILER_CONTEXT_MINOR 3

// The op-option getters of slots 37-127, in table order:
// X(field, BUILTIN_OPERATOR, OptionsType, option_member, value_type).
// Slots 96 (reshape new shape) and 127 (squeeze dims) return arrays and are
// declared by hand between them.
#define LITERT_OPTION_GETTERS_A(X)                                             \
  X(get_strided_slice_begin_mask_option, STRIDED_SLICE, StridedSliceOptions,   \
    begin_mask, int32_t)                                                       \
  X(get_strided_slice_end_mask_option, STRIDED_SLICE, StridedSliceOptions,     \
    end_mask, int32_t)                                                         \
  X(get_strided_slice_shrink_axis_mask_option, STRIDED_SLICE,                  \
    StridedSliceOptions, shrink_axis_mask, int32_t)                            \
  X(get_strided_slice_ellipsis_mask_option, STRIDED_SLICE,                     \
    StridedSliceOptions, ellipsis_mask, int32_t)                               \
  X(get_strided_slice_new_axis_mask_option, STRIDED_SLICE,                     \
    StridedSliceOptions, new_axis_mask, int32_t)                               \
  X(get_strided_slice_offset_option, STRIDED_SLICE, StridedSliceOptions,       \
    offset, bool)                                                              \
  X(get_sub_fused_activation_option, SUB, SubOptions,                          \
    fused_activation_function, uint32_t)                                       \
  X(get_sum_keep_dims_option, SUM, ReducerOptions, keep_dims, bool)            \
  X(get_conv_2d_padding_option, CONV_2D, Conv2DOptions, padding, uint32_t)     \
  X(get_conv_2d_stride_w_option, CONV_2D, Conv2DOptions, stride_w, int32_t)    \
  X(get_conv_2d_stride_h_option, CONV_2D, Conv2DOptions, stride_h, int32_t)    \
  X(get_conv_2d_fused_activation_option, CONV_2D, Conv2DOptions,               \
    fused_activation_function, uint32_t)                                       \
  X(get_conv_2d_dilation_w_option, CONV_2D, Conv2DOptions, dilation_w_factor,  \
    int32_t)                                                                   \
  X(get_conv_2d_dilation_h_option, CONV_2D, Conv2DOptions, dilation_h_factor,  \
    int32_t)                                                                   \
  X(get_depthwise_conv_2d_padding_option, DEPTHWISE_CONV_2D,                   \
    DepthwiseConv2DOptions, padding, uint32_t)                                 \
  X(get_depthwise_conv_2d_stride_w_option, DEPTHWISE_CONV_2D,                  \
    DepthwiseConv2DOptions, stride_w, int32_t)                                 \
  X(get_depthwise_conv_2d_stride_h_option, DEPTHWISE_CONV_2D,                  \
    DepthwiseConv2DOptions, stride_h, int32_t)                                 \
  X(get_depthwise_conv_2d_depth_multiplier_option, DEPTHWISE_CONV_2D,          \
    DepthwiseConv2DOptions, depth_multiplier, int32_t)                         \
  X(get_depthwise_conv_2d_fused_activation_option, DEPTHWISE_CONV_2D,          \
    DepthwiseConv2DOptions, fused_activation_function, uint32_t)               \
  X(get_depthwise_conv_2d_dilation_w_option, DEPTHWISE_CONV_2D,                \
    DepthwiseConv2DOptions, dilation_w_factor, int32_t)                        \
  X(get_depthwise_conv_2d_dilation_h_option, DEPTHWISE_CONV_2D,                \
    DepthwiseConv2DOptions, dilation_h_factor, int32_t)                        \
  X(get_transpose_conv_padding_option, TRANSPOSE_CONV, TransposeConvOptions,   \
    padding, uint32_t)                                                         \
  X(get_transpose_conv_stride_w_option, TRANSPOSE_CONV, TransposeConvOptions,  \
    stride_w, int32_t)                                                         \
  X(get_transpose_conv_stride_h_option, TRANSPOSE_CONV, TransposeConvOptions,  \
    stride_h, int32_t)                                                         \
  X(get_transpose_conv_fused_activation_option, TRANSPOSE_CONV,                \
    TransposeConvOptions, fused_activation_function, uint32_t)                 \
  X(get_add_fused_activation_option, ADD, AddOptions,                          \
    fused_activation_function, uint32_t)                                       \
  X(get_mul_fused_activation_option, MUL, MulOptions,                          \
    fused_activation_function, uint32_t)                                       \
  X(get_div_fused_activation_option, DIV, DivOptions,                          \
    fused_activation_function, uint32_t)                                       \
  X(get_fully_connected_fused_activation_option, FULLY_CONNECTED,              \
    FullyConnectedOptions, fused_activation_function, uint32_t)                \
  X(get_fully_connected_weights_format_option, FULLY_CONNECTED,                \
    FullyConnectedOptions, weights_format, uint32_t)                           \
  X(get_fully_connected_keep_num_dims_option, FULLY_CONNECTED,                 \
    FullyConnectedOptions, keep_num_dims, bool)                                \
  X(get_fully_connected_quantized_bias_type_option, FULLY_CONNECTED,           \
    FullyConnectedOptions, quantized_bias_type, uint32_t)                      \
  X(get_fully_connected_asymmetric_quantize_input_option, FULLY_CONNECTED,     \
    FullyConnectedOptions, asymmetric_quantize_inputs, bool)                   \
  X(get_softmax_beta_option, SOFTMAX, SoftmaxOptions, beta, float)             \
  X(get_concatenation_axis_option, CONCATENATION, ConcatenationOptions, axis,  \
    int32_t)                                                                   \
  X(get_concatenation_fused_activation_option, CONCATENATION,                  \
    ConcatenationOptions, fused_activation_function, uint32_t)                 \
  X(get_split_num_splits_option, SPLIT, SplitOptions, num_splits, int32_t)     \
  X(get_mean_keep_dims_option, MEAN, ReducerOptions, keep_dims, bool)          \
  X(get_reduce_max_keep_dims_option, REDUCE_MAX, ReducerOptions, keep_dims,    \
    bool)                                                                      \
  X(get_resize_bilinear_align_corners_option, RESIZE_BILINEAR,                 \
    ResizeBilinearOptions, align_corners, bool)                                \
  X(get_resize_bilinear_half_pixel_center_option, RESIZE_BILINEAR,             \
    ResizeBilinearOptions, half_pixel_centers, bool)                           \
  X(get_resize_nearest_neighbor_align_corners_option, RESIZE_NEAREST_NEIGHBOR, \
    ResizeNearestNeighborOptions, align_corners, bool)                         \
  X(get_resize_nearest_neighbor_half_pixel_center_option,                      \
    RESIZE_NEAREST_NEIGHBOR, ResizeNearestNeighborOptions, half_pixel_centers, \
    bool)                                                                      \
  X(get_batch_matmul_adj_x_option, BATCH_MATMUL, BatchMatMulOptions, adj_x,    \
    bool)                                                                      \
  X(get_batch_matmul_adj_y_option, BATCH_MATMUL, BatchMatMulOptions, adj_y,    \
    bool)                                                                      \
  X(get_batch_matmul_asymmetric_quantize_input_option, BATCH_MATMUL,           \
    BatchMatMulOptions, asymmetric_quantize_inputs, bool)                      \
  X(get_average_pool_2d_padding_option, AVERAGE_POOL_2D, Pool2DOptions,        \
    padding, uint32_t)                                                         \
  X(get_average_pool_2d_stride_w_option, AVERAGE_POOL_2D, Pool2DOptions,       \
    stride_w, int32_t)                                                         \
  X(get_average_pool_2d_stride_h_option, AVERAGE_POOL_2D, Pool2DOptions,       \
    stride_h, int32_t)                                                         \
  X(get_average_pool_2d_filter_width_option, AVERAGE_POOL_2D, Pool2DOptions,   \
    filter_width, int32_t)                                                     \
  X(get_average_pool_2d_filter_height_option, AVERAGE_POOL_2D, Pool2DOptions,  \
    filter_height, int32_t)                                                    \
  X(get_average_pool_2d_fused_activation_option, AVERAGE_POOL_2D,              \
    Pool2DOptions, fused_activation_function, uint32_t)                        \
  X(get_max_pool_2d_padding_option, MAX_POOL_2D, Pool2DOptions, padding,       \
    uint32_t)                                                                  \
  X(get_max_pool_2d_stride_w_option, MAX_POOL_2D, Pool2DOptions, stride_w,     \
    int32_t)                                                                   \
  X(get_max_pool_2d_stride_h_option, MAX_POOL_2D, Pool2DOptions, stride_h,     \
    int32_t)                                                                   \
  X(get_max_pool_2d_filter_width_option, MAX_POOL_2D, Pool2DOptions,           \
    filter_width, int32_t)                                                     \
  X(get_max_pool_2d_filter_height_option, MAX_POOL_2D, Pool2DOptions,          \
    filter_height, int32_t)                                                    \
  X(get_max_pool_2d_fused_activation_option, MAX_POOL_2D, Pool2DOptions,       \
    fused_activation_function, uint32_t)                                       \
  X(get_leaky_relu_alpha_option, LEAKY_RELU, LeakyReluOptions, alpha, float)

#define LITERT_OPTION_GETTERS_B(X)                                             \
  X(get_reduce_min_keep_dims_option, REDUCE_MIN, ReducerOptions, keep_dims,    \
    bool)                                                                      \
  X(get_reduce_any_keep_dims_option, REDUCE_ANY, ReducerOptions, keep_dims,    \
    bool)                                                                      \
  X(get_reduce_all_keep_dims_option, REDUCE_ALL, ReducerOptions, keep_dims,    \
    bool)                                                                      \
  X(get_pack_axis_option, PACK, PackOptions, axis, int32_t)                    \
  X(get_pack_values_count_option, PACK, PackOptions, values_count, int32_t)    \
  X(get_one_hot_axis_option, ONE_HOT, OneHotOptions, axis, int32_t)            \
  X(get_unpack_axis_option, UNPACK, UnpackOptions, axis, int32_t)              \
  X(get_unpack_num_option, UNPACK, UnpackOptions, num, int32_t)                \
  X(get_gather_axis_option, GATHER, GatherOptions, axis, int32_t)              \
  X(get_gather_batch_dims_option, GATHER, GatherOptions, batch_dims, int32_t)  \
  X(get_conv_3d_padding_option, CONV_3D, Conv3DOptions, padding, uint32_t)     \
  X(get_conv_3d_stride_d_option, CONV_3D, Conv3DOptions, stride_d, int32_t)    \
  X(get_conv_3d_stride_w_option, CONV_3D, Conv3DOptions, stride_w, int32_t)    \
  X(get_conv_3d_stride_h_option, CONV_3D, Conv3DOptions, stride_h, int32_t)    \
  X(get_conv_3d_fused_activation_option, CONV_3D, Conv3DOptions,               \
    fused_activation_function, uint32_t)                                       \
  X(get_conv_3d_dilation_d_option, CONV_3D, Conv3DOptions, dilation_d_factor,  \
    int32_t)                                                                   \
  X(get_conv_3d_dilation_w_option, CONV_3D, Conv3DOptions, dilation_w_factor,  \
    int32_t)                                                                   \
  X(get_conv_3d_dilation_h_option, CONV_3D, Conv3DOptions, dilation_h_factor,  \
    int32_t)                                                                   \
  X(get_l2_pool_2d_padding_option, L2_POOL_2D, Pool2DOptions, padding,         \
    uint32_t)                                                                  \
  X(get_l2_pool_2d_stride_w_option, L2_POOL_2D, Pool2DOptions, stride_w,       \
    int32_t)                                                                   \
  X(get_l2_pool_2d_stride_h_option, L2_POOL_2D, Pool2DOptions, stride_h,       \
    int32_t)                                                                   \
  X(get_l2_pool_2d_filter_width_option, L2_POOL_2D, Pool2DOptions,             \
    filter_width, int32_t)                                                     \
  X(get_l2_pool_2d_filter_height_option, L2_POOL_2D, Pool2DOptions,            \
    filter_height, int32_t)                                                    \
  X(get_l2_pool_2d_fused_activation_option, L2_POOL_2D, Pool2DOptions,         \
    fused_activation_function, uint32_t)                                       \
  X(get_depth_to_space_block_size_option, DEPTH_TO_SPACE, DepthToSpaceOptions, \
    block_size, int32_t)                                                       \
  X(get_space_to_depth_block_size_option, SPACE_TO_DEPTH, SpaceToDepthOptions, \
    block_size, int32_t)                                                       \
  X(get_cumsum_exclusive_option, CUMSUM, CumsumOptions, exclusive, bool)       \
  X(get_cumsum_reverse_option, CUMSUM, CumsumOptions, reverse, bool)           \
  X(get_gelu_approximate_option, GELU, GeluOptions, approximate, bool)         \
  X(get_mirror_pad_mode_option, MIRROR_PAD, MirrorPadOptions, mode, uint32_t)

#define LITERT_DECLARE_OPTION_GETTER(field, op, options, member, type) \
  LiteRtStatus (*field)(LiteRtOp op_handle, type * value);

typedef struct LiteRtCompilerContext {
  LiteRtAbiHeader abi_header;

  // Model, subgraph, op and tensor inspection (slots 0-27).
  LiteRtStatus (*get_num_model_subgraphs)(LiteRtModel model,
                                          LiteRtParamIndex* num_subgraphs);
  LiteRtStatus (*get_model_subgraph)(LiteRtModel model, LiteRtParamIndex index,
                                     LiteRtSubgraph* subgraph);
  LiteRtStatus (*get_num_subgraph_ops)(LiteRtSubgraph subgraph,
                                       LiteRtParamIndex* num_ops);
  LiteRtStatus (*get_subgraph_op)(LiteRtSubgraph subgraph,
                                  LiteRtParamIndex index, LiteRtOp* op);
  LiteRtStatus (*get_num_subgraph_inputs)(LiteRtSubgraph subgraph,
                                          LiteRtParamIndex* num_inputs);
  LiteRtStatus (*get_subgraph_input)(LiteRtSubgraph subgraph,
                                     LiteRtParamIndex index,
                                     LiteRtTensor* input);
  LiteRtStatus (*get_num_subgraph_outputs)(LiteRtSubgraph subgraph,
                                           LiteRtParamIndex* num_outputs);
  LiteRtStatus (*get_subgraph_output)(LiteRtSubgraph subgraph,
                                      LiteRtParamIndex index,
                                      LiteRtTensor* output);
  LiteRtStatus (*get_op_code)(LiteRtOp op, LiteRtOpCode* code);
  LiteRtStatus (*get_custom_code)(LiteRtOp op, const char** code);
  LiteRtStatus (*get_num_op_inputs)(LiteRtOp op, LiteRtParamIndex* num_inputs);
  LiteRtStatus (*get_op_input)(LiteRtOp op, LiteRtParamIndex index,
                               LiteRtTensor* input);
  LiteRtStatus (*get_num_op_outputs)(LiteRtOp op,
                                     LiteRtParamIndex* num_outputs);
  LiteRtStatus (*get_op_output)(LiteRtOp op, LiteRtParamIndex index,
                                LiteRtTensor* output);
  LiteRtStatus (*get_tensor_name)(LiteRtTensor tensor, const char** name);
  LiteRtStatus (*get_tensor_index)(LiteRtTensor tensor, uint32_t* index);
  LiteRtStatus (*get_tensor_type_id)(LiteRtTensor tensor,
                                     LiteRtTensorTypeId* type_id);
  LiteRtStatus (*get_ranked_tensor_type)(LiteRtTensor tensor,
                                         LiteRtRankedTensorType* type);
  LiteRtStatus (*get_unranked_tensor_type)(LiteRtTensor tensor,
                                           LiteRtUnrankedTensorType* type);
  LiteRtStatus (*get_quantization_type_id)(LiteRtTensor tensor,
                                           LiteRtQuantizationTypeId* type_id);
  LiteRtStatus (*get_per_tensor_quantization)(
      LiteRtTensor tensor, LiteRtQuantizationPerTensor* quantization);
  LiteRtStatus (*get_per_channel_quantization)(
      LiteRtTensor tensor, LiteRtQuantizationPerChannel* quantization);
  LiteRtStatus (*get_num_tensor_uses)(LiteRtTensor tensor,
                                      LiteRtParamIndex* num_uses);
  LiteRtStatus (*get_tensor_use)(LiteRtTensor tensor, LiteRtParamIndex index,
                                 LiteRtOp* user,
                                 LiteRtParamIndex* user_arg_index);
  LiteRtStatus (*get_tensor_defining_op)(LiteRtTensor tensor,
                                         bool* has_defining_op,
                                         LiteRtTensorDefiningOp* defining_op);
  LiteRtStatus (*get_tensor_weights)(LiteRtTensor tensor,
                                     LiteRtWeights* weights);
  // The id shared by tensors whose constant data is the same buffer.
  LiteRtStatus (*get_weights_buffer_id)(LiteRtWeights weights,
                                        int32_t* buffer_id);
  LiteRtStatus (*get_weights_bytes)(LiteRtWeights weights, const void** addr,
                                    size_t* size);

  // STABLEHLO_COMPOSITE (slots 28-31).
  LiteRtStatus (*get_shlo_composite_op_name)(LiteRtOp op, const char** name);
  LiteRtStatus (*get_shlo_composite_op_decomposition_subgraph_index)(
      LiteRtOp op, int32_t* subgraph_index);
  LiteRtStatus (*get_shlo_composite_op_attributes)(LiteRtOp op,
                                                   const uint8_t** attributes,
                                                   int32_t* attributes_size);
  LiteRtStatus (*get_shlo_composite_op_version)(LiteRtOp op, int32_t* version);

  // The partition answer (slot 32): `op` goes to partition
  // `partition_index` of its subgraph.
  LiteRtStatus (*push_op)(LiteRtOpList op_list, LiteRtOp op,
                          LiteRtParamIndex partition_index);

  // Options (slots 33-36).
  LiteRtStatus (*get_opaque_options)(LiteRtOptions options,
                                     LiteRtOpaqueOptions* opaque_options);
  LiteRtStatus (*find_opaque_options_data)(LiteRtOpaqueOptions options,
                                           const char* payload_identifier,
                                           void** payload_data);
  void (*destroy_options)(LiteRtOptions options);
  LiteRtStatus (*get_environment_options_value)(
      LiteRtEnvironmentOptions options, LiteRtEnvOptionTag tag,
      LiteRtAny* value);

  // Op options (slots 37-127).
  LITERT_OPTION_GETTERS_A(LITERT_DECLARE_OPTION_GETTER)
  LiteRtStatus (*get_reshape_new_shape_option)(LiteRtOp op,
                                               const int32_t** new_shape,
                                               int32_t* new_shape_size);
  LITERT_OPTION_GETTERS_B(LITERT_DECLARE_OPTION_GETTER)
  LiteRtStatus (*get_squeeze_dims_option)(LiteRtOp op,
                                          const int32_t** squeeze_dims,
                                          int32_t* num_squeeze_dims);

  // Slots 128-136.
  LiteRtStatus (*get_custom_options)(LiteRtOp op, const uint8_t** data,
                                     int32_t* size);
  // Serializes `model` to a .tflite in a buffer the host allocates with
  // new[] (the caller frees it with delete[]); the flatbuffer starts at
  // `*offset` within it.
  LiteRtStatus (*serialize_model_with_signatures)(
      LiteRtModel model, uint8_t** buf, size_t* size, size_t* offset,
      bool destroy_model, char** signatures, LiteRtParamIndex num_signatures,
      LiteRtModelSerializationOptions options);
  LiteRtStatus (*build_tensor)(LiteRtBuilder builder,
                               LiteRtTensorTypeId type_id,
                               LiteRtRankedTensorType ranked_type,
                               LiteRtUnrankedTensorType unranked,
                               LiteRtWeights weights,
                               LiteRtQuantizationTypeId quantization_type_id,
                               LiteRtQuantizationPerTensor per_tensor,
                               LiteRtQuantizationPerChannel per_channel,
                               LiteRtQuantizationBlockWise block_wise,
                               const char* name, LiteRtTensor* new_tensor);
  LiteRtStatus (*build_weights)(LiteRtBuilder builder, const uint8_t* data,
                                LiteRtParamIndex size, LiteRtTensor tensor,
                                LiteRtWeights* new_weights);
  LiteRtStatus (*build_op)(LiteRtBuilder builder, LiteRtOpCode code,
                           LiteRtParamIndex num_inputs, LiteRtTensor* inputs,
                           LiteRtParamIndex num_outputs, LiteRtTensor* outputs,
                           LiteRtOp* new_op);
  LiteRtStatus (*erase_op)(LiteRtBuilder builder, LiteRtOp op);
  LiteRtBuilderOpOptionFn build_add_op_option;
  LiteRtBuilderOpOptionFn build_batch_matmul_op_option;
  LiteRtStatus (*get_block_wise_quantization)(
      LiteRtTensor tensor, LiteRtQuantizationBlockWise* quantization);

  // Appended in 1.3 (slots 137-174).
  LiteRtBuilderOpOptionFn
      build_op_options[LITERT_NUM_BUILDER_OP_OPTION_SETTERS];
  LiteRtStatus (*get_split_v_num_splits_option)(LiteRtOp op,
                                                int32_t* num_splits);
} LiteRtCompilerContext;

#undef LITERT_DECLARE_OPTION_GETTER

// The plugin's exports.
#define LITERT_PLUGIN_GET_VERSION_SYMBOL "LiteRtGetCompilerPluginVersion"
#define LITERT_PLUGIN_SOC_MANUFACTURER_SYMBOL \
  "LiteRtGetCompilerPluginSocManufacturer"
#define LITERT_PLUGIN_CREATE_SYMBOL "LiteRtCreateCompilerPlugin"
#define LITERT_PLUGIN_DESTROY_SYMBOL "LiteRtDestroyCompilerPlugin"
#define LITERT_PLUGIN_SUPPORTED_HARDWARE_SYMBOL \
  "LiteRtGetCompilerPluginSupportedHardware"
#define LITERT_PLUGIN_NUM_SOC_MODELS_SYMBOL \
  "LiteRtGetNumCompilerPluginSupportedSocModels"
#define LITERT_PLUGIN_SOC_MODEL_SYMBOL \
  "LiteRtGetCompilerPluginSupportedSocModel"
#define LITERT_PLUGIN_SDK_VERSION_SYMBOL "LiteRtGetCompilerPluginSDKVersion"
#define LITERT_PLUGIN_PARTITION_SYMBOL "LiteRtCompilerPluginPartition"
#define LITERT_PLUGIN_COMPILE_SYMBOL "LiteRtCompilerPluginCompile"
#define LITERT_PLUGIN_DESTROY_RESULT_SYMBOL "LiteRtDestroyCompiledResult"
#define LITERT_PLUGIN_RESULT_BYTECODE_SYMBOL "LiteRtGetCompiledResultByteCode"
#define LITERT_PLUGIN_RESULT_NUM_BYTECODE_SYMBOL \
  "LiteRtCompiledResultNumByteCodeModules"
#define LITERT_PLUGIN_RESULT_CALL_INFO_SYMBOL "LiteRtGetCompiledResultCallInfo"
#define LITERT_PLUGIN_RESULT_NUM_CALLS_SYMBOL "LiteRtGetNumCompiledResultCalls"
#define LITERT_PLUGIN_REGISTER_TRANSFORMATIONS_SYMBOL \
  "LiteRtCompilerPluginRegisterAllTransformations"
#define LITERT_PLUGIN_CHECK_COMPATIBILITY_SYMBOL \
  "LiteRtCompilerPluginCheckCompilerCompatibility"

typedef LiteRtStatus (*LiteRtGetCompilerPluginVersionFn)(
    LiteRtApiVersion* version);
typedef const char* (*LiteRtGetCompilerPluginSocManufacturerFn)(void);
typedef LiteRtStatus (*LiteRtCreateCompilerPluginFn)(
    const LiteRtCompilerContext* context, LiteRtCompilerPlugin* plugin,
    LiteRtEnvironmentOptions env, LiteRtOptions options);
typedef void (*LiteRtDestroyCompilerPluginFn)(LiteRtCompilerPlugin plugin);
typedef LiteRtStatus (*LiteRtGetCompilerPluginSupportedHardwareFn)(
    LiteRtCompilerPlugin plugin, LiteRtHwAcceleratorSet* hardware);
typedef LiteRtStatus (*LiteRtGetNumCompilerPluginSupportedSocModelsFn)(
    LiteRtCompilerPlugin plugin, LiteRtParamIndex* num);
typedef LiteRtStatus (*LiteRtGetCompilerPluginSupportedSocModelFn)(
    LiteRtCompilerPlugin plugin, LiteRtParamIndex index, const char** name);
typedef LiteRtStatus (*LiteRtGetCompilerPluginSDKVersionFn)(
    LiteRtCompilerPlugin plugin, const char** version);
typedef LiteRtStatus (*LiteRtCompilerPluginPartitionFn)(
    LiteRtCompilerPlugin plugin, const char* soc_model, LiteRtSubgraph subgraph,
    LiteRtOpList selected_ops);
typedef LiteRtStatus (*LiteRtCompilerPluginCompileFn)(
    LiteRtCompilerPlugin plugin, const char* soc_model, LiteRtModel partitions,
    LiteRtCompiledResult* result);
typedef void (*LiteRtDestroyCompiledResultFn)(LiteRtCompiledResult result);
typedef LiteRtStatus (*LiteRtGetCompiledResultByteCodeFn)(
    LiteRtCompiledResult result, LiteRtParamIndex index, const void** byte_code,
    size_t* byte_code_size);
typedef LiteRtStatus (*LiteRtCompiledResultNumByteCodeModulesFn)(
    LiteRtCompiledResult result, LiteRtParamIndex* num);
typedef LiteRtStatus (*LiteRtGetCompiledResultCallInfoFn)(
    LiteRtCompiledResult result, LiteRtParamIndex call_index,
    const void** call_info, size_t* call_info_size,
    LiteRtParamIndex* byte_code_index);
typedef LiteRtStatus (*LiteRtGetNumCompiledResultCallsFn)(
    LiteRtCompiledResult result, LiteRtParamIndex* num_calls);
typedef LiteRtStatus (*LiteRtCompilerPluginCheckCompilerCompatibilityFn)(
    LiteRtApiVersion api_version, LiteRtCompilerPlugin plugin,
    LiteRtEnvironmentOptions env, LiteRtOptions options, const char* soc_model);

#ifdef __cplusplus
}
#endif

#endif  // GRAFT_PLUGINS_LITERT_COMPILER_ABI_H_
