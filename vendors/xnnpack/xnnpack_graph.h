// The XNNPACK graph both halves of the xnnpack vendor work on: the plugin
// lowers TFLite ops into ValueSpec/NodeSpec records and serializes them
// (xnnpack_bytecode.fbs); the dispatch library reads the bytecode back into
// the same records before defining an XNNPACK subgraph. CheckNode is the one
// place that knows what shapes each XNNPACK node accepts, so the plugin
// takes exactly what the dispatch library will accept, and malformed
// bytecode is refused before XNNPACK could read out of bounds.
//
// Internal to vendors/xnnpack (compiled into both libraries); no Graft
// dependency.
#ifndef GRAFT_VENDORS_XNNPACK_XNNPACK_GRAPH_H_
#define GRAFT_VENDORS_XNNPACK_XNNPACK_GRAPH_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "xnnpack_vendor.h"

namespace graft_xnnpack {

// One XNNPACK value (xnn_define_*tensor_value).
struct ValueSpec {
  DataType datatype = DataType::FP32;
  std::vector<uint64_t> dims;
  // Quantized types: one scale (QINT8, QINT32) or dims[channel_dim] scales.
  std::vector<float> scales;
  int32_t zero_point = 0;
  uint32_t channel_dim = 0;
  // Constant data: a model buffer by id (>= 0) and its size, or `data`.
  bool is_constant = false;
  int64_t buffer_id = -1;
  uint64_t buffer_size = 0;
  std::vector<uint8_t> data;
  int32_t input_index = -1;
  int32_t output_index = -1;
};

// One XNNPACK node (xnn_define_<kind>); fields as in xnnpack_bytecode.fbs.
struct NodeSpec {
  NodeKind kind = NodeKind::ADD;
  std::vector<uint32_t> inputs, outputs;
  int32_t original_op_index = -1;
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
  std::vector<uint32_t> padding, kernel, stride, dilation, adjustment;
  uint32_t groups = 1;
  uint64_t group_input_channels = 0, group_output_channels = 0;
  uint32_t depth_multiplier = 1;
  uint64_t input_channels = 0;
  float alpha = 0;
  std::vector<uint64_t> shape, pre_paddings, post_paddings;
  uint32_t block_size = 0;
  uint32_t flags = 0;
};

// The printable name of a node kind ("CONVOLUTION_2D"), "UNKNOWN" if none.
const char* NodeKindName(NodeKind kind);

// Number of elements of `dims`, or UINT64_MAX when it overflows.
uint64_t NumElements(const std::vector<uint64_t>& dims);

// Checks a node against the values it names: operand counts, value ids in
// range, the parameter arrays the kind reads present with their lengths,
// and every shape rule XNNPACK relies on (output shapes as the node's
// formulas give them, filters and biases matching channel counts). Returns
// "" when the node is well formed, else what is wrong (one line).
std::string CheckNode(const NodeSpec& node,
                      const std::vector<ValueSpec>& values);

// Output size of a 2D convolution/pooling window along one dimension, as
// XNNPACK computes it: with TensorFlow SAME padding ceil(in / stride), else
// (in + padding - dilated kernel) / stride + 1. 0 when nothing fits.
uint64_t WindowOutputSize(uint64_t in, uint64_t padding, uint64_t kernel,
                          uint64_t stride, uint64_t dilation, bool same);

// Replaces a window node's TensorFlow SAME padding flag (convolution,
// depthwise convolution, average and max pooling) by the explicit padding
// it stands for over the node's static NHWC input: per dimension, total =
// max((out - 1) * stride + dilated kernel - in, 0), half before and the odd
// one after. This XNNPACK computes that total at setup without the max, in
// unsigned arithmetic, so a window smaller than its stride (a 1x2 pool with
// stride 2x2 on an odd input, a 1xN kernel with stride 3) gets a wrapped,
// enormous padding and wrong outputs. Other nodes are left as they are.
void ExplicitSamePadding(const std::vector<uint64_t>& input_dims,
                         NodeSpec* node);

}  // namespace graft_xnnpack

#endif  // GRAFT_VENDORS_XNNPACK_XNNPACK_GRAPH_H_
