// Freezes the layouts of LiteRT's vendor ABI as Graft declares them
// (core/litert_abi.h, plugins/litert_compiler_abi.h) at what the
// ai-edge-litert 2.3.0 libraries use: a layout change breaks the build here
// before it breaks a plugin at run time. The slot table below was generated
// once from ../shared/litert/compiler_context_2.3.0_slots.json (slot, byte
// offset, field in LiteRT's public header or, for the builder setters
// appended in 1.3, the index into build_op_options; the comment is the
// function 2.3.0's host puts there) and is committed as code.
#include "plugins/litert_compiler_abi.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>

#include "core/litert_abi.h"
#include "gtest/gtest.h"
#include "plugins/litert_compiler_context.h"

namespace graft {
namespace {

// Plain types (core/litert_abi.h).
static_assert(sizeof(LiteRtApiVersion) == 12);
static_assert(sizeof(LiteRtAbiHeader) == 8);
static_assert(offsetof(LiteRtAbiHeader, struct_size) == 0);
static_assert(offsetof(LiteRtAbiHeader, major_version) == 2);
static_assert(offsetof(LiteRtAbiHeader, minor_version) == 4);
static_assert(sizeof(LiteRtStatus) == 4);
static_assert(sizeof(LiteRtElementType) == 4);
static_assert(sizeof(LiteRtParamIndex) == 8);
static_assert(sizeof(LiteRtLayout) == 68);
static_assert(offsetof(LiteRtLayout, dimensions) == 4);
static_assert(offsetof(LiteRtLayout, strides) == 36);
static_assert(sizeof(LiteRtUnrankedTensorType) == 4);
static_assert(sizeof(LiteRtRankedTensorType) == 72);
static_assert(offsetof(LiteRtRankedTensorType, layout) == 4);
static_assert(sizeof(LiteRtTensorTypeId) == 4);

// Plugin-side types (plugins/litert_compiler_abi.h).
static_assert(sizeof(LiteRtQuantizationTypeId) == 4);
static_assert(sizeof(LiteRtQuantizationPerTensor) == 16);
static_assert(offsetof(LiteRtQuantizationPerTensor, zero_point) == 8);
static_assert(sizeof(LiteRtQuantizationPerChannel) == 32);
static_assert(offsetof(LiteRtQuantizationPerChannel, num_channels) == 8);
static_assert(offsetof(LiteRtQuantizationPerChannel, scales) == 16);
static_assert(offsetof(LiteRtQuantizationPerChannel, zero_points) == 24);
static_assert(sizeof(LiteRtQuantizationBlockWise) == 24);
static_assert(offsetof(LiteRtQuantizationBlockWise, zero_points) == 8);
static_assert(offsetof(LiteRtQuantizationBlockWise, block_size) == 16);
static_assert(sizeof(LiteRtTensorDefiningOp) == 16);
static_assert(offsetof(LiteRtTensorDefiningOp, op_output_index) == 8);
static_assert(sizeof(LiteRtModelSerializationOptions) == 8);

// The callback table: 1408 bytes at 1.3, an 8-byte header then 175
// pointers, slot N at 8 + 8 * N.
static_assert(sizeof(LiteRtCompilerContext) == 1408);
static_assert(offsetof(LiteRtCompilerContext, abi_header) == 0);
static_assert(LITERT_COMPILER_CONTEXT_MAJOR == 1);
static_assert(LITERT_COMPILER_CONTEXT_MINOR == 3);
static_assert(LITERT_NUM_BUILDER_OP_OPTION_SETTERS == 37);

// X(slot, offset, field): a named field (the JSON names the function
// 2.3.0 puts in each); B(slot, offset, i): build_op_options[i].
#define GRAFT_LITERT_CONTEXT_SLOTS(X, B)                                 \
  X(0, 8, get_num_model_subgraphs)                                       \
  X(1, 16, get_model_subgraph)                                           \
  X(2, 24, get_num_subgraph_ops)                                         \
  X(3, 32, get_subgraph_op)                                              \
  X(4, 40, get_num_subgraph_inputs)                                      \
  X(5, 48, get_subgraph_input)                                           \
  X(6, 56, get_num_subgraph_outputs)                                     \
  X(7, 64, get_subgraph_output)                                          \
  X(8, 72, get_op_code)                                                  \
  X(9, 80, get_custom_code)                                              \
  X(10, 88, get_num_op_inputs)                                           \
  X(11, 96, get_op_input)                                                \
  X(12, 104, get_num_op_outputs)                                         \
  X(13, 112, get_op_output)                                              \
  X(14, 120, get_tensor_name)                                            \
  X(15, 128, get_tensor_index)                                           \
  X(16, 136, get_tensor_type_id)                                         \
  X(17, 144, get_ranked_tensor_type)                                     \
  X(18, 152, get_unranked_tensor_type)                                   \
  X(19, 160, get_quantization_type_id)                                   \
  X(20, 168, get_per_tensor_quantization)                                \
  X(21, 176, get_per_channel_quantization)                               \
  X(22, 184, get_num_tensor_uses)                                        \
  X(23, 192, get_tensor_use)                                             \
  X(24, 200, get_tensor_defining_op)                                     \
  X(25, 208, get_tensor_weights)                                         \
  X(26, 216, get_weights_buffer_id)                                      \
  X(27, 224, get_weights_bytes)                                          \
  X(28, 232, get_shlo_composite_op_name)                                 \
  X(29, 240, get_shlo_composite_op_decomposition_subgraph_index)         \
  X(30, 248, get_shlo_composite_op_attributes)                           \
  X(31, 256, get_shlo_composite_op_version)                              \
  X(32, 264, push_op)                                                    \
  X(33, 272, get_opaque_options)                                         \
  X(34, 280, find_opaque_options_data)                                   \
  X(35, 288, destroy_options)                                            \
  X(36, 296, get_environment_options_value)                              \
  X(37, 304, get_strided_slice_begin_mask_option)                        \
  X(38, 312, get_strided_slice_end_mask_option)                          \
  X(39, 320, get_strided_slice_shrink_axis_mask_option)                  \
  X(40, 328, get_strided_slice_ellipsis_mask_option)                     \
  X(41, 336, get_strided_slice_new_axis_mask_option)                     \
  X(42, 344, get_strided_slice_offset_option)                            \
  X(43, 352, get_sub_fused_activation_option)                            \
  X(44, 360, get_sum_keep_dims_option)                                   \
  X(45, 368, get_conv_2d_padding_option)                                 \
  X(46, 376, get_conv_2d_stride_w_option)                                \
  X(47, 384, get_conv_2d_stride_h_option)                                \
  X(48, 392, get_conv_2d_fused_activation_option)                        \
  X(49, 400, get_conv_2d_dilation_w_option)                              \
  X(50, 408, get_conv_2d_dilation_h_option)                              \
  X(51, 416, get_depthwise_conv_2d_padding_option)                       \
  X(52, 424, get_depthwise_conv_2d_stride_w_option)                      \
  X(53, 432, get_depthwise_conv_2d_stride_h_option)                      \
  X(54, 440, get_depthwise_conv_2d_depth_multiplier_option)              \
  X(55, 448, get_depthwise_conv_2d_fused_activation_option)              \
  X(56, 456, get_depthwise_conv_2d_dilation_w_option)                    \
  X(57, 464, get_depthwise_conv_2d_dilation_h_option)                    \
  X(58, 472, get_transpose_conv_padding_option)                          \
  X(59, 480, get_transpose_conv_stride_w_option)                         \
  X(60, 488, get_transpose_conv_stride_h_option)                         \
  X(61, 496, get_transpose_conv_fused_activation_option)                 \
  X(62, 504, get_add_fused_activation_option)                            \
  X(63, 512, get_mul_fused_activation_option)                            \
  X(64, 520, get_div_fused_activation_option)                            \
  X(65, 528, get_fully_connected_fused_activation_option)                \
  X(66, 536, get_fully_connected_weights_format_option)                  \
  X(67, 544, get_fully_connected_keep_num_dims_option)                   \
  X(68, 552, get_fully_connected_quantized_bias_type_option)             \
  X(69, 560, get_fully_connected_asymmetric_quantize_input_option)       \
  X(70, 568, get_softmax_beta_option)                                    \
  X(71, 576, get_concatenation_axis_option)                              \
  X(72, 584, get_concatenation_fused_activation_option)                  \
  X(73, 592, get_split_num_splits_option)                                \
  X(74, 600, get_mean_keep_dims_option)                                  \
  X(75, 608, get_reduce_max_keep_dims_option)                            \
  X(76, 616, get_resize_bilinear_align_corners_option)                   \
  X(77, 624, get_resize_bilinear_half_pixel_center_option)               \
  X(78, 632, get_resize_nearest_neighbor_align_corners_option)           \
  X(79, 640, get_resize_nearest_neighbor_half_pixel_center_option)       \
  X(80, 648, get_batch_matmul_adj_x_option)                              \
  X(81, 656, get_batch_matmul_adj_y_option)                              \
  X(82, 664, get_batch_matmul_asymmetric_quantize_input_option)          \
  X(83, 672, get_average_pool_2d_padding_option)                         \
  X(84, 680, get_average_pool_2d_stride_w_option)                        \
  X(85, 688, get_average_pool_2d_stride_h_option)                        \
  X(86, 696, get_average_pool_2d_filter_width_option)                    \
  X(87, 704, get_average_pool_2d_filter_height_option)                   \
  X(88, 712, get_average_pool_2d_fused_activation_option)                \
  X(89, 720, get_max_pool_2d_padding_option)                             \
  X(90, 728, get_max_pool_2d_stride_w_option)                            \
  X(91, 736, get_max_pool_2d_stride_h_option)                            \
  X(92, 744, get_max_pool_2d_filter_width_option)                        \
  X(93, 752, get_max_pool_2d_filter_height_option)                       \
  X(94, 760, get_max_pool_2d_fused_activation_option)                    \
  X(95, 768, get_leaky_relu_alpha_option)                                \
  X(96, 776, get_reshape_new_shape_option)                               \
  X(97, 784, get_reduce_min_keep_dims_option)                            \
  X(98, 792, get_reduce_any_keep_dims_option)                            \
  X(99, 800, get_reduce_all_keep_dims_option)                            \
  X(100, 808, get_pack_axis_option)                                      \
  X(101, 816, get_pack_values_count_option)                              \
  X(102, 824, get_one_hot_axis_option)                                   \
  X(103, 832, get_unpack_axis_option)                                    \
  X(104, 840, get_unpack_num_option)                                     \
  X(105, 848, get_gather_axis_option)                                    \
  X(106, 856, get_gather_batch_dims_option)                              \
  X(107, 864, get_conv_3d_padding_option)                                \
  X(108, 872, get_conv_3d_stride_d_option)                               \
  X(109, 880, get_conv_3d_stride_w_option)                               \
  X(110, 888, get_conv_3d_stride_h_option)                               \
  X(111, 896, get_conv_3d_fused_activation_option)                       \
  X(112, 904, get_conv_3d_dilation_d_option)                             \
  X(113, 912, get_conv_3d_dilation_w_option)                             \
  X(114, 920, get_conv_3d_dilation_h_option)                             \
  X(115, 928, get_l2_pool_2d_padding_option)                             \
  X(116, 936, get_l2_pool_2d_stride_w_option)                            \
  X(117, 944, get_l2_pool_2d_stride_h_option)                            \
  X(118, 952, get_l2_pool_2d_filter_width_option)                        \
  X(119, 960, get_l2_pool_2d_filter_height_option)                       \
  X(120, 968, get_l2_pool_2d_fused_activation_option)                    \
  X(121, 976, get_depth_to_space_block_size_option)                      \
  X(122, 984, get_space_to_depth_block_size_option)                      \
  X(123, 992, get_cumsum_exclusive_option)                               \
  X(124, 1000, get_cumsum_reverse_option)                                \
  X(125, 1008, get_gelu_approximate_option)                              \
  X(126, 1016, get_mirror_pad_mode_option)                               \
  X(127, 1024, get_squeeze_dims_option)                                  \
  X(128, 1032, get_custom_options)                                       \
  X(129, 1040, serialize_model_with_signatures)                          \
  X(130, 1048, build_tensor)                                             \
  X(131, 1056, build_weights)                                            \
  X(132, 1064, build_op)                                                 \
  X(133, 1072, erase_op)                                                 \
  X(134, 1080, build_add_op_option)                                      \
  X(135, 1088, build_batch_matmul_op_option)                             \
  X(136, 1096, get_block_wise_quantization)                              \
  B(137, 1104, 0)  /* LiteRtBuilderBuildShloCompositeOpOption */         \
  B(138, 1112, 1)  /* LiteRtBuilderBuildAveragePool2dOpOption */         \
  B(139, 1120, 2)  /* LiteRtBuilderBuildConcatenationOpOption */         \
  B(140, 1128, 3)  /* LiteRtBuilderBuildConv2dOpOption */                \
  B(141, 1136, 4)  /* LiteRtBuilderBuildConv3dOpOption */                \
  B(142, 1144, 5)  /* LiteRtBuilderBuildCumsumOpOption */                \
  B(143, 1152, 6)  /* LiteRtBuilderBuildDepthToSpaceOpOption */          \
  B(144, 1160, 7)  /* LiteRtBuilderBuildDepthwiseConv2dOpOption */       \
  B(145, 1168, 8)  /* LiteRtBuilderBuildDivOpOption */                   \
  B(146, 1176, 9)  /* LiteRtBuilderBuildFullyConnectedOpOption */        \
  B(147, 1184, 10) /* LiteRtBuilderBuildGatherOpOption */                \
  B(148, 1192, 11) /* LiteRtBuilderBuildGeluOpOption */                  \
  B(149, 1200, 12) /* LiteRtBuilderBuildL2Pool2dOpOption */              \
  B(150, 1208, 13) /* LiteRtBuilderBuildLeakyReluOpOption */             \
  B(151, 1216, 14) /* LiteRtBuilderBuildMaxPool2dOpOption */             \
  B(152, 1224, 15) /* LiteRtBuilderBuildMeanOpOption */                  \
  B(153, 1232, 16) /* LiteRtBuilderBuildMirrorPadOpOption */             \
  B(154, 1240, 17) /* LiteRtBuilderBuildMulOpOption */                   \
  B(155, 1248, 18) /* LiteRtBuilderBuildOneHotOpOption */                \
  B(156, 1256, 19) /* LiteRtBuilderBuildPackOpOption */                  \
  B(157, 1264, 20) /* LiteRtBuilderBuildReduceAllOpOption */             \
  B(158, 1272, 21) /* LiteRtBuilderBuildReduceAnyOpOption */             \
  B(159, 1280, 22) /* LiteRtBuilderBuildReduceMaxOpOption */             \
  B(160, 1288, 23) /* LiteRtBuilderBuildReduceMinOpOption */             \
  B(161, 1296, 24) /* LiteRtBuilderBuildReshapeOpOption */               \
  B(162, 1304, 25) /* LiteRtBuilderBuildResizeBilinearOpOption */        \
  B(163, 1312, 26) /* LiteRtBuilderBuildResizeNearestNeighborOpOption */ \
  B(164, 1320, 27) /* LiteRtBuilderBuildSoftmaxOpOption */               \
  B(165, 1328, 28) /* LiteRtBuilderBuildSpaceToDepthOpOption */          \
  B(166, 1336, 29) /* LiteRtBuilderBuildSplitOpOption */                 \
  B(167, 1344, 30) /* LiteRtBuilderBuildSplitVOpOption */                \
  B(168, 1352, 31) /* LiteRtBuilderBuildSqueezeOpOption */               \
  B(169, 1360, 32) /* LiteRtBuilderBuildStridedSliceOpOption */          \
  B(170, 1368, 33) /* LiteRtBuilderBuildSubOpOption */                   \
  B(171, 1376, 34) /* LiteRtBuilderBuildSumOpOption */                   \
  B(172, 1384, 35) /* LiteRtBuilderBuildTransposeConvOpOption */         \
  B(173, 1392, 36) /* LiteRtBuilderBuildUnpackOpOption */                \
  X(174, 1400, get_split_v_num_splits_option)

#define GRAFT_ASSERT_SLOT(slot, offset, field)                    \
  static_assert(offset == 8 + 8 * slot, "slot " #slot " offset"); \
  static_assert(offsetof(LiteRtCompilerContext, field) == offset, \
                "LiteRtCompilerContext::" #field " is not at slot " #slot);
#define GRAFT_ASSERT_BUILDER_SLOT(slot, offset, i)                  \
  static_assert(offset == 8 + 8 * slot, "slot " #slot " offset");   \
  static_assert(offsetof(LiteRtCompilerContext, build_op_options) + \
                        i * sizeof(LiteRtBuilderOpOptionFn) ==      \
                    offset,                                         \
                "build_op_options[" #i "] is not at slot " #slot);
GRAFT_LITERT_CONTEXT_SLOTS(GRAFT_ASSERT_SLOT, GRAFT_ASSERT_BUILDER_SLOT)
#undef GRAFT_ASSERT_SLOT
#undef GRAFT_ASSERT_BUILDER_SLOT

#define GRAFT_SLOT_NUMBER(slot, offset, field) slot,
constexpr int kCheckedSlots[] = {
    GRAFT_LITERT_CONTEXT_SLOTS(GRAFT_SLOT_NUMBER, GRAFT_SLOT_NUMBER)};
#undef GRAFT_SLOT_NUMBER

constexpr size_t kNumSlots = 175;
static_assert((sizeof(LiteRtCompilerContext) - sizeof(LiteRtAbiHeader)) /
                  sizeof(void (*)()) ==
              kNumSlots);

TEST(LiteRtCompilerAbiTest, SlotTableChecksEverySlotOnce) {
  std::set<int> slots(std::begin(kCheckedSlots), std::end(kCheckedSlots));
  EXPECT_EQ(std::size(kCheckedSlots), kNumSlots);
  ASSERT_EQ(slots.size(), kNumSlots);
  EXPECT_EQ(*slots.begin(), 0);
  EXPECT_EQ(*slots.rbegin(), static_cast<int>(kNumSlots) - 1);
}

// LiteRT packs the rank into the low 7 bits of the layout's first word and
// has_strides into bit 7.
TEST(LiteRtCompilerAbiTest, LayoutRankAndStrideFlagShareTheFirstWord) {
  LiteRtLayout layout;
  std::memset(&layout, 0, sizeof(layout));
  layout.rank = 5;
  layout.has_strides = true;
  layout.dimensions[0] = -1;
  uint32_t word = 0;
  std::memcpy(&word, &layout, sizeof(word));
  EXPECT_EQ(word, 0x85u);
  int32_t dim0 = 0;
  std::memcpy(&dim0, reinterpret_cast<const uint8_t*>(&layout) + 4,
              sizeof(dim0));
  EXPECT_EQ(dim0, -1);
}

TEST(LiteRtCompilerAbiTest, HostContextIsVersion13WithEverySlotSet) {
  const LiteRtCompilerContext* context = LiteRtHostCompilerContext();
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(context->abi_header.struct_size, 1408);
  EXPECT_EQ(context->abi_header.major_version, 1);
  EXPECT_EQ(context->abi_header.minor_version, 3);
  EXPECT_EQ(context->abi_header.reserved, 0);
  const uint8_t* base = reinterpret_cast<const uint8_t*>(context);
  for (size_t slot = 0; slot < kNumSlots; ++slot) {
    void* fn = nullptr;
    std::memcpy(&fn, base + 8 + 8 * slot, sizeof(fn));
    EXPECT_NE(fn, nullptr) << "slot " << slot << " is NULL";
  }
}

TEST(LiteRtCompilerAbiTest, BuilderSlotsAnswerUnsupported) {
  const LiteRtCompilerContext* context = LiteRtHostCompilerContext();
  EXPECT_EQ(context->erase_op(nullptr, nullptr), kLiteRtStatusErrorUnsupported);
  EXPECT_EQ(context->build_add_op_option(nullptr, nullptr),
            kLiteRtStatusErrorUnsupported);
  for (LiteRtBuilderOpOptionFn f : context->build_op_options) {
    EXPECT_EQ(f(nullptr, nullptr), kLiteRtStatusErrorUnsupported);
  }
}

}  // namespace
}  // namespace graft
