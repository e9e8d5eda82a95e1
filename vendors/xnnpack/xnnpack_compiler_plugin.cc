// The xnnpack compiler plugin: partitions TFLite graphs into what the
// XNNPACK subgraph API of the Debian build (0.0~git20220216) runs, in
// float32 and in int8 with TFLite quantization, and compiles each partition
// into an XNNPACK subgraph serialized as a FlatBuffer (BYTECODE.md). Weights
// are referenced by model buffer id, never copied.
//
// Written against the c_api headers only; links no Graft library and not
// XNNPACK either (the dispatch library does). C++ inside, C at the
// boundary: nothing throws (built with -fno-exceptions).
#include <algorithm>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graft_compiler_plugin.h"
#include "xnnpack_graph.h"

namespace graft_xnnpack {
namespace {

// TFLite BuiltinOperator numbers (schema.fbs).
enum Builtin : int32_t {
  kAdd = 0,
  kAveragePool2d = 1,
  kConv2d = 3,
  kDepthwiseConv2d = 4,
  kDepthToSpace = 5,
  kDequantize = 6,
  kFloor = 8,
  kFullyConnected = 9,
  kLogistic = 14,
  kMaxPool2d = 17,
  kMul = 18,
  kRelu = 19,
  kReluN1To1 = 20,
  kRelu6 = 21,
  kReshape = 22,
  kResizeBilinear = 23,
  kSoftmax = 25,
  kPad = 34,
  kMean = 40,
  kSub = 41,
  kDiv = 42,
  kSqueeze = 43,
  kPrelu = 54,
  kMaximum = 55,
  kMinimum = 57,
  kNeg = 59,
  kPadV2 = 60,
  kTransposeConv = 67,
  kExpandDims = 70,
  kSqrt = 75,
  kRsqrt = 76,
  kSquare = 92,
  kLeakyRelu = 98,
  kSquaredDifference = 99,
  kAbs = 101,
  kCeil = 104,
  kElu = 111,
  kQuantize = 114,
  kRound = 116,
  kHardSwish = 117,
};

// Flags of xnnpack.h, repeated (the plugin does not include XNNPACK).
constexpr uint32_t kFlagSamePadding = 0x4;
constexpr uint32_t kFlagReshape2d = 0x4;
constexpr uint32_t kFlagLegacyResize = 0x4;
constexpr uint32_t kFlagAlignCorners = 0x8;

const graft_option_info_t* const kNoOptions = nullptr;
const char* const kSocModels[] = {kSocModel};

graft_status_t kNullPluginStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "xnnpack vendor: plugin is NULL");
graft_status_t kNullHostStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "xnnpack vendor: host table is NULL");
graft_status_t kBadHostStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION,
    "xnnpack vendor: host table is of another ABI major or too small");
graft_status_t kBadCreateArgsStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT,
    "xnnpack vendor: create needs out_plugin, and options when "
    "num_options > 0");

std::string Printf(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

std::string Shape(const graft_tensor_t* t) {
  std::string s = "[";
  for (size_t i = 0; i < t->rank; ++i) {
    if (i > 0) s += ",";
    s += std::to_string(t->dims[i]);
  }
  return s + "]";
}

// Why an op is refused.
struct Refusal {
  graft_partition_reason_t code = GRAFT_PARTITION_REASON_UNSPECIFIED;
  std::string text;
};

bool Refuse(Refusal* r, graft_partition_reason_t code, std::string text) {
  r->code = code;
  r->text = std::move(text);
  return false;
}

bool IsConstant(const graft_tensor_t* t) {
  return (t->flags & GRAFT_TENSOR_FLAG_CONSTANT) != 0;
}

const graft_quantization_t* Quant(const graft_tensor_t* t) {
  const graft_quantization_t* q = t->quantization;
  if (q == nullptr ||
      !GRAFT_STRUCT_HAS_MEMBER(q, graft_quantization_t, num_zero_points)) {
    return nullptr;
  }
  return q;
}

int64_t IntAttr(const graft_op_t* op, const char* name, int64_t fallback) {
  const graft_attribute_t* a = graft_op_find_attribute(op, name);
  return a == nullptr ? fallback : a->int_value;
}

double FloatAttr(const graft_op_t* op, const char* name, double fallback) {
  const graft_attribute_t* a = graft_op_find_attribute(op, name);
  return a == nullptr ? fallback : a->float_value;
}

// Reads the integer elements of a constant INT32/INT64 tensor.
bool ConstInts(const graft_tensor_t* t, std::vector<int64_t>* out) {
  if (!IsConstant(t)) return false;
  const size_t width = t->element_type == GRAFT_ELEMENT_TYPE_INT32   ? 4
                       : t->element_type == GRAFT_ELEMENT_TYPE_INT64 ? 8
                                                                     : 0;
  int64_t n = graft_tensor_num_elements(t);
  if (width == 0 || n < 0 || t->data.size != static_cast<size_t>(n) * width) {
    return false;
  }
  out->resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (width == 4) {
      int32_t v;
      std::memcpy(&v, t->data.data + i * 4, 4);
      (*out)[i] = v;
    } else {
      std::memcpy(&(*out)[i], t->data.data + i * 8, 8);
    }
  }
  return true;
}

// The graph being built for one partition (compile) or one op (partition,
// where it is thrown away): view tensors become values on first use.
class Builder {
 public:
  explicit Builder(const graft_graph_view_t* graph)
      : graph_(graph), ids_(graph->num_tensors, kNoValue) {}

  const graft_tensor_t* T(int32_t index) const {
    return graph_->tensors[index];
  }
  // The value of view tensor `index`, described by `spec` on first use.
  uint32_t Use(int32_t index, const ValueSpec& spec) {
    if (ids_[index] == kNoValue) ids_[index] = Add(spec);
    return ids_[index];
  }
  uint32_t Add(const ValueSpec& spec) {
    values_.push_back(spec);
    return static_cast<uint32_t>(values_.size() - 1);
  }
  void AddNode(NodeSpec node) { nodes_.push_back(std::move(node)); }
  uint32_t ValueOf(int32_t index) const { return ids_[index]; }

  std::vector<ValueSpec>& values() { return values_; }
  std::vector<NodeSpec>& nodes() { return nodes_; }

 private:
  const graft_graph_view_t* graph_;
  std::vector<uint32_t> ids_;
  std::vector<ValueSpec> values_;
  std::vector<NodeSpec> nodes_;
};

// Checks what every tensor an op touches needs: a static dense shape of at
// most kMaxRank dimensions and constant data of the declared size.
bool CheckTensor(const graft_tensor_t* t, Refusal* r) {
  for (size_t i = 0; i < t->rank; ++i) {
    if (t->shape_signature[i] < 0) {
      std::string sig = "[";
      for (size_t j = 0; j < t->rank; ++j) {
        sig += (j ? "," : "") + std::to_string(t->shape_signature[j]);
      }
      return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                    Printf("dynamic shape: tensor '%s' has shape signature "
                           "%s]; XNNPACK subgraphs are built for static "
                           "shapes",
                           t->name, sig.c_str()));
    }
  }
  if (t->rank > kMaxRank) {
    return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  Printf("tensor '%s' has rank %zu; XNNPACK allows at most "
                         "%zu dimensions",
                         t->name, t->rank, kMaxRank));
  }
  if ((t->flags & (GRAFT_TENSOR_FLAG_SPARSE | GRAFT_TENSOR_FLAG_VARIABLE)) !=
      0) {
    return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  Printf("tensor '%s' is sparse or variable, which XNNPACK "
                         "values cannot express",
                         t->name));
  }
  const int64_t n = graft_tensor_num_elements(t);
  if (n <= 0 || n > (int64_t{1} << 31)) {
    return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  Printf("tensor '%s' %s is empty or too large", t->name,
                         Shape(t).c_str()));
  }
  if (IsConstant(t)) {
    const uint32_t bits = graft_element_type_bit_width(t->element_type);
    if (bits % 8 != 0 || t->data.size != static_cast<size_t>(n) * (bits / 8)) {
      return Refuse(r, GRAFT_PARTITION_REASON_UNSPECIFIED,
                    Printf("constant tensor '%s' holds %zu bytes, expected "
                           "%" PRId64 " elements of %s",
                           t->name, t->data.size, n,
                           graft_element_type_name(t->element_type)));
    }
  }
  return true;
}

// A value for `t`: shape, I/O role and constant data (by buffer id).
ValueSpec BaseValue(const graft_graph_view_t* g, const graft_tensor_t* t,
                    int32_t index, DataType type) {
  ValueSpec v;
  v.datatype = type;
  for (size_t i = 0; i < t->rank; ++i) v.dims.push_back(t->dims[i]);
  if (IsConstant(t)) {
    v.is_constant = true;
    if (t->buffer_id >= 0) {
      v.buffer_id = t->buffer_id;
      v.buffer_size = t->data.size;
    } else {
      v.data.assign(t->data.data, t->data.data + t->data.size);
    }
  }
  for (size_t i = 0; i < g->num_inputs; ++i) {
    if (g->inputs[i] == index) v.input_index = static_cast<int32_t>(i);
  }
  return v;
}

bool ScaleOk(float scale) { return std::isfinite(scale) && scale > 0; }

// Describes an activation (a non-weight operand or a result): FLOAT32, or
// INT8 quantized per tensor.
bool Activation(Builder* b, const graft_graph_view_t* g, int32_t index,
                ValueSpec* out, Refusal* r) {
  const graft_tensor_t* t = b->T(index);
  if (!CheckTensor(t, r)) return false;
  if (t->element_type == GRAFT_ELEMENT_TYPE_FLOAT32) {
    *out = BaseValue(g, t, index, DataType::FP32);
    return true;
  }
  if (t->element_type != GRAFT_ELEMENT_TYPE_INT8) {
    return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE,
                  Printf("tensor '%s' is %s; this XNNPACK runs float32 and "
                         "int8 quantized operands",
                         t->name, graft_element_type_name(t->element_type)));
  }
  const graft_quantization_t* q = Quant(t);
  if (q == nullptr || q->kind != GRAFT_QUANTIZATION_KIND_PER_TENSOR ||
      q->num_scales != 1 || q->num_zero_points != 1) {
    return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                  Printf("int8 tensor '%s' is not quantized per tensor; "
                         "XNNPACK qint8 activations take one scale and zero "
                         "point",
                         t->name));
  }
  if (!ScaleOk(q->scales[0]) || q->zero_points[0] < -128 ||
      q->zero_points[0] > 127) {
    return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                  Printf("int8 tensor '%s' has scale %g and zero point %" PRId64
                         ", outside what XNNPACK accepts",
                         t->name, q->scales[0], q->zero_points[0]));
  }
  *out = BaseValue(g, t, index, DataType::QINT8);
  out->scales = {q->scales[0]};
  out->zero_point = static_cast<int32_t>(q->zero_points[0]);
  return true;
}

// Describes constant weights of an op whose main input is `in`: float32
// for float ops; for int8 ops symmetric int8, per tensor, or per channel
// along `channel_dim` when `per_channel_ok` (a per-channel tensor whose
// scales are all equal counts as per tensor).
bool Weights(Builder* b, const graft_graph_view_t* g, const graft_op_t* op,
             int32_t index, const ValueSpec& in, uint32_t channel_dim,
             bool per_channel_ok, ValueSpec* out, Refusal* r) {
  const graft_tensor_t* t = b->T(index);
  if (!CheckTensor(t, r)) return false;
  if (!IsConstant(t)) {
    return Refuse(r, GRAFT_PARTITION_REASON_NOT_CONSTANT,
                  Printf("%s weights '%s' are computed at run time; XNNPACK "
                         "packs constant weights only",
                         op->name, t->name));
  }
  if (in.datatype == DataType::FP32) {
    if (t->element_type != GRAFT_ELEMENT_TYPE_FLOAT32) {
      return Refuse(
          r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
          Printf("%s has float input and %s weights '%s' (hybrid "
                 "quantization); this XNNPACK has no hybrid "
                 "kernels",
                 op->name, graft_element_type_name(t->element_type), t->name));
    }
    *out = BaseValue(g, t, index, DataType::FP32);
    return true;
  }
  const graft_quantization_t* q = Quant(t);
  if (t->element_type != GRAFT_ELEMENT_TYPE_INT8 || q == nullptr ||
      (q->kind != GRAFT_QUANTIZATION_KIND_PER_TENSOR &&
       q->kind != GRAFT_QUANTIZATION_KIND_PER_CHANNEL) ||
      q->num_scales == 0 || q->num_zero_points != q->num_scales) {
    return Refuse(
        r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
        Printf("%s weights '%s' are %s without per-tensor or "
               "per-channel quantization; int8 XNNPACK ops need "
               "int8 weights",
               op->name, t->name, graft_element_type_name(t->element_type)));
  }
  bool all_equal = true;
  for (size_t i = 0; i < q->num_scales; ++i) {
    if (!ScaleOk(q->scales[i]) || q->zero_points[i] != 0) {
      return Refuse(
          r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
          Printf("%s weights '%s' channel %zu has scale %g and zero "
                 "point %" PRId64
                 "; XNNPACK needs symmetric weights (zero point 0)",
                 op->name, t->name, i, q->scales[i], q->zero_points[i]));
    }
    all_equal = all_equal && q->scales[i] == q->scales[0];
  }
  if (q->kind == GRAFT_QUANTIZATION_KIND_PER_TENSOR || all_equal) {
    *out = BaseValue(g, t, index, DataType::QINT8);
    out->scales = {q->scales[0]};
    return true;
  }
  if (!per_channel_ok ||
      static_cast<uint32_t>(q->quantized_dimension) != channel_dim ||
      channel_dim >= t->rank ||
      q->num_scales != static_cast<size_t>(t->dims[channel_dim])) {
    return Refuse(
        r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
        per_channel_ok
            ? Printf("%s weights '%s' are quantized per channel "
                     "along dimension %d; XNNPACK wants dimension "
                     "%u",
                     op->name, t->name, q->quantized_dimension, channel_dim)
            : Printf("%s weights '%s' are quantized per channel; "
                     "this XNNPACK has no per-channel int8 %s",
                     op->name, t->name, op->name));
  }
  *out = BaseValue(g, t, index, DataType::QCINT8);
  out->scales.assign(q->scales, q->scales + q->num_scales);
  out->channel_dim = channel_dim;
  return true;
}

// Describes the constant bias of a conv-like op: float32, or int32
// quantized with scale input scale x weight scale, as TFLite requires.
bool Bias(Builder* b, const graft_graph_view_t* g, const graft_op_t* op,
          int32_t index, const ValueSpec& in, const ValueSpec& weights,
          uint64_t channels, ValueSpec* out, Refusal* r) {
  const bool quantized = in.datatype != DataType::FP32;
  std::vector<float> scales;
  if (quantized) {
    for (float s : weights.scales) scales.push_back(in.scales[0] * s);
  }
  const graft_tensor_t* t = b->T(index);
  if (!CheckTensor(t, r)) return false;
  if (!IsConstant(t)) {
    return Refuse(r, GRAFT_PARTITION_REASON_NOT_CONSTANT,
                  Printf("%s bias '%s' is computed at run time; XNNPACK "
                         "needs a constant bias",
                         op->name, t->name));
  }
  if (t->rank != 1 || static_cast<uint64_t>(t->dims[0]) != channels) {
    return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  Printf("%s bias '%s' has shape %s, expected [%" PRIu64 "]",
                         op->name, t->name, Shape(t).c_str(), channels));
  }
  if (!quantized) {
    if (t->element_type != GRAFT_ELEMENT_TYPE_FLOAT32) {
      return Refuse(
          r, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE,
          Printf("%s bias '%s' is %s; float ops take a float32 "
                 "bias",
                 op->name, t->name, graft_element_type_name(t->element_type)));
    }
    *out = BaseValue(g, t, index, DataType::FP32);
    return true;
  }
  const graft_quantization_t* q = Quant(t);
  if (t->element_type != GRAFT_ELEMENT_TYPE_INT32 || q == nullptr ||
      q->num_scales == 0) {
    return Refuse(
        r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
        Printf("%s bias '%s' is %s; int8 XNNPACK ops take a "
               "quantized int32 bias",
               op->name, t->name, graft_element_type_name(t->element_type)));
  }
  for (size_t c = 0; c < scales.size(); ++c) {
    const float have = q->scales[q->num_scales == 1 ? 0 : c % q->num_scales];
    const int64_t zero =
        q->zero_points[q->num_scales == 1 ? 0 : c % q->num_scales];
    if (zero != 0 || std::fabs(have - scales[c]) > 1e-6f * scales[c] * 8) {
      return Refuse(
          r, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
          Printf("%s bias '%s' channel %zu has scale %g, zero point "
                 "%" PRId64 "; XNNPACK derives the bias scale as input x "
                 "weight scale = %g, zero point 0",
                 op->name, t->name, c, have, zero, scales[c]));
    }
  }
  *out = BaseValue(g, t, index,
                   scales.size() == 1 ? DataType::QINT32 : DataType::QCINT32);
  out->scales = scales;
  return true;
}

// The fused activation as an output range; refuses TANH and SIGN_BIT.
bool FusedActivation(const graft_op_t* op, NodeSpec* node, Refusal* r) {
  const graft_attribute_t* a =
      graft_op_find_attribute(op, "fused_activation_function");
  const int64_t act = a == nullptr ? 0 : a->int_value;
  switch (act) {
    case 0:
      return true;
    case 1:  // RELU
      node->output_min = 0;
      return true;
    case 2:  // RELU_N1_TO_1
      node->output_min = -1;
      node->output_max = 1;
      return true;
    case 3:  // RELU6
      node->output_min = 0;
      node->output_max = 6;
      return true;
    default:
      return Refuse(r, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                    Printf("%s fused activation %s; XNNPACK fuses only a "
                           "clamp (NONE, RELU, RELU_N1_TO_1, RELU6)",
                           op->name,
                           a != nullptr && a->string_value != nullptr
                               ? a->string_value
                               : std::to_string(act).c_str()));
  }
}

bool SameQuantization(const ValueSpec& a, const ValueSpec& b) {
  return a.datatype == b.datatype && a.scales == b.scales &&
         a.zero_point == b.zero_point;
}

// Lowers one op: checks everything XNNPACK needs and, when it can run it,
// appends its values and nodes to `b`. Used by partition (on a scratch
// builder) and compile alike, so the two never disagree.
class Lowering {
 public:
  Lowering(const graft_graph_view_t* g, const graft_op_t* op, Builder* b,
           Refusal* r)
      : g_(g), op_(op), b_(b), r_(r) {
    node_.original_op_index = op->original_op_index;
  }

  bool Run();

 private:
  const graft_tensor_t* In(size_t i) const { return b_->T(op_->inputs[i]); }
  const graft_tensor_t* Out() const { return b_->T(op_->outputs[0]); }
  bool Act(size_t i, ValueSpec* v) {
    return Activation(b_, g_, op_->inputs[i], v, r_);
  }
  bool Result(ValueSpec* v, DataType want) {
    if (!Activation(b_, g_, op_->outputs[0], v, r_)) return false;
    if (v->datatype != want) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE,
                    Printf("%s output '%s' is %s but its input is %s; XNNPACK "
                           "keeps the element type",
                           op_->name, Out()->name,
                           graft_element_type_name(Out()->element_type),
                           want == DataType::FP32 ? "FLOAT32" : "INT8"));
    }
    return true;
  }
  bool FloatOnly(const ValueSpec& v, const char* why) {
    if (v.datatype == DataType::FP32) return true;
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE,
                  Printf("int8 %s not supported: %s", op_->name, why));
  }
  bool SameQuant(const ValueSpec& in, const ValueSpec& out) {
    if (in.datatype == DataType::FP32 || SameQuantization(in, out)) {
      return true;
    }
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                  Printf("int8 %s changes the quantization (scale %g zp %d "
                         "-> scale %g zp %d); XNNPACK's int8 %s keeps it",
                         op_->name, in.scales[0], in.zero_point, out.scales[0],
                         out.zero_point, op_->name));
  }
  bool Operands(size_t min_inputs, size_t max_inputs) {
    if (op_->num_inputs < min_inputs || op_->num_inputs > max_inputs ||
        op_->num_outputs != 1) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                    Printf("%s with %zu inputs and %zu outputs not supported",
                           op_->name, op_->num_inputs, op_->num_outputs));
    }
    for (size_t i = 0; i < min_inputs; ++i) {
      if (op_->inputs[i] < 0) {
        return Refuse(
            r_, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
            Printf("%s with omitted input %zu not supported", op_->name, i));
      }
    }
    return true;
  }
  // Input `i`, when present, only parameterizes the node (a shape, a size):
  // it must be constant, since the node's value is fixed when it is built.
  bool ConstantParameter(size_t i, const char* what) {
    if (op_->num_inputs <= i || op_->inputs[i] < 0 || IsConstant(In(i))) {
      return true;
    }
    return Refuse(r_, GRAFT_PARTITION_REASON_NOT_CONSTANT,
                  Printf("%s %s '%s' is computed at run time; XNNPACK fixes "
                         "it when the graph is built",
                         op_->name, what, In(i)->name));
  }
  // int8 convolutions and fully connected: XNNPACK requantizes with
  // input x weight / output scales in [2^-32, 256).
  bool Requantization(const ValueSpec& in, const ValueSpec& weights,
                      const ValueSpec& out) {
    if (in.datatype == DataType::FP32) return true;
    for (float w : weights.scales) {
      const double scale = in.scales[0] * w / out.scales[0];
      if (!(scale >= 0x1.0p-32 && scale < 256.0)) {
        return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                      Printf("int8 %s requantization scale %g is outside "
                             "XNNPACK's [2^-32, 256)",
                             op_->name, scale));
      }
    }
    return true;
  }
  uint32_t Use(int32_t index, const ValueSpec& v) { return b_->Use(index, v); }
  bool Emit() {
    std::string problem = CheckNode(node_, b_->values());
    if (!problem.empty()) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                    Printf("%s as XNNPACK %s: %s", op_->name,
                           NodeKindName(node_.kind), problem.c_str()));
    }
    b_->AddNode(node_);
    return true;
  }
  // For an op lowered to several nodes: the next node of the same op.
  void StartNode() {
    node_ = NodeSpec();
    node_.original_op_index = op_->original_op_index;
  }
  // A value between two of those nodes: `like`'s type, shaped `dims`.
  uint32_t Intermediate(const ValueSpec& like, std::vector<uint64_t> dims) {
    ValueSpec v;
    v.datatype = like.datatype;
    v.scales = like.scales;
    v.zero_point = like.zero_point;
    v.dims = std::move(dims);
    return b_->Add(v);
  }
  // Emits node_ as a `kind` node from `inputs` to `output`, then starts the
  // next node of the same op.
  bool EmitChained(NodeKind kind, std::vector<uint32_t> inputs,
                   uint32_t output) {
    node_.kind = kind;
    node_.inputs = std::move(inputs);
    node_.outputs = {output};
    if (!Emit()) return false;
    StartNode();
    return true;
  }
  // Emits a STATIC_RESHAPE of value `from` into `to`, a node of its own
  // (node_ starts over before and after).
  bool EmitReshape(uint32_t from, uint32_t to) {
    StartNode();
    node_.shape = b_->values()[to].dims;
    return EmitChained(NodeKind::STATIC_RESHAPE, {from}, to);
  }
  bool Window(bool dilation);
  bool Binary(NodeKind kind);
  bool Unary(NodeKind kind, bool int8_ok, bool keeps_quantization);
  bool Convolution(bool depthwise);
  bool TransposeConvolution();
  bool FullyConnected();
  bool FullyConnectedAsConvolution(const ValueSpec& in, ValueSpec weights,
                                   uint32_t bias, const ValueSpec& out);
  bool Pooling(NodeKind kind);
  bool Mean();
  bool Rsqrt();
  bool Reshape();
  bool Pad();
  bool Resize();
  bool Prelu();
  bool Softmax();
  bool Convert(bool quantize);

  const graft_graph_view_t* g_;
  const graft_op_t* op_;
  Builder* b_;
  Refusal* r_;
  NodeSpec node_;
};

bool Lowering::Window(bool dilation) {
  const int64_t padding = IntAttr(op_, "padding", 0);
  if (padding != 0 && padding != 1) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                  Printf("%s padding %" PRId64 " is neither SAME nor VALID",
                         op_->name, padding));
  }
  if (padding == 0) node_.flags |= kFlagSamePadding;
  node_.padding = {0, 0, 0, 0};
  node_.stride = {static_cast<uint32_t>(IntAttr(op_, "stride_h", 1)),
                  static_cast<uint32_t>(IntAttr(op_, "stride_w", 1))};
  if (dilation) {
    node_.dilation = {
        static_cast<uint32_t>(IntAttr(op_, "dilation_h_factor", 1)),
        static_cast<uint32_t>(IntAttr(op_, "dilation_w_factor", 1))};
  }
  return true;
}

bool Lowering::Binary(NodeKind kind) {
  ValueSpec a, c, out;
  if (!Operands(2, 2) || !Act(0, &a) || !Act(1, &c) ||
      !Result(&out, a.datatype)) {
    return false;
  }
  if (a.datatype != c.datatype) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE,
                  Printf("%s mixes element types", op_->name));
  }
  if (a.is_constant && c.is_constant) {
    return Refuse(r_, GRAFT_PARTITION_REASON_NOT_PROFITABLE,
                  Printf("%s of two constants: Graft computes it once at "
                         "load",
                         op_->name));
  }
  if (a.datatype != DataType::FP32) {
    if (kind != NodeKind::ADD && kind != NodeKind::SUBTRACT &&
        kind != NodeKind::MULTIPLY) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ELEMENT_TYPE,
                    Printf("int8 %s not supported: this XNNPACK has int8 add, "
                           "subtract and multiply only",
                           op_->name));
    }
    // XNNPACK's int8 requantization ranges (xnn_create_{add,subtract,
    // multiply}_nd_qs8).
    const double s = out.scales[0];
    const double r1 = a.scales[0] / s, r2 = c.scales[0] / s;
    const double prod = a.scales[0] * c.scales[0] / s;
    const bool ok = kind == NodeKind::MULTIPLY
                        ? prod >= 0x1.0p-16 && prod < 0x1.0p+8
                        : r1 >= 0x1.0p-10 && r1 < 0x1.0p+8 && r2 >= 0x1.0p-10 &&
                              r2 < 0x1.0p+8;
    if (!ok) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                    Printf("int8 %s scales %g, %g -> %g are outside the "
                           "requantization range XNNPACK supports",
                           op_->name, a.scales[0], c.scales[0], s));
    }
  }
  const bool has_activation =
      kind == NodeKind::ADD || kind == NodeKind::SUBTRACT ||
      kind == NodeKind::MULTIPLY || kind == NodeKind::DIVIDE;
  if (has_activation && !FusedActivation(op_, &node_, r_)) return false;
  node_.kind = kind;
  node_.inputs = {Use(op_->inputs[0], a), Use(op_->inputs[1], c)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::Unary(NodeKind kind, bool int8_ok, bool keeps_quantization) {
  ValueSpec in, out;
  if (!Operands(1, 1) || !Act(0, &in) || !Result(&out, in.datatype)) {
    return false;
  }
  if (!int8_ok && !FloatOnly(in, "this XNNPACK has no int8 kernel for it")) {
    return false;
  }
  if (keeps_quantization && !SameQuant(in, out)) return false;
  node_.kind = kind;
  switch (op_->builtin_code) {
    case kRelu:
      node_.output_min = 0;
      break;
    case kRelu6:
      node_.output_min = 0;
      node_.output_max = 6;
      break;
    case kReluN1To1:
      node_.output_min = -1;
      node_.output_max = 1;
      break;
    case kLeakyRelu:
      node_.alpha = static_cast<float>(FloatAttr(op_, "alpha", 0.2));
      break;
    case kElu:
      node_.alpha = 1.0f;
      break;
    case kLogistic:
      if (in.datatype != DataType::FP32 &&
          (out.scales[0] != 1.0f / 256 || out.zero_point != -128)) {
        return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                      Printf("int8 LOGISTIC output scale %g zero point %d; "
                             "XNNPACK needs 1/256 and -128",
                             out.scales[0], out.zero_point));
      }
      break;
    default:
      break;
  }
  node_.inputs = {Use(op_->inputs[0], in)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::Convolution(bool depthwise) {
  ValueSpec in, weights, bias, out;
  if (!Operands(2, 3) || !Act(0, &in) || !Result(&out, in.datatype) ||
      !Weights(b_, g_, op_, op_->inputs[1], in, depthwise ? 3 : 0, true,
               &weights, r_) ||
      !CheckTensor(In(0), r_) || !Window(true) ||
      !FusedActivation(op_, &node_, r_)) {
    return false;
  }
  const graft_tensor_t* filter = In(1);
  if (In(0)->rank != 4 || filter->rank != 4) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  Printf("%s input %s or filter %s is not 4D", op_->name,
                         Shape(In(0)).c_str(), Shape(filter).c_str()));
  }
  const uint64_t channels_in = In(0)->dims[3];
  const uint64_t channels_out = depthwise ? filter->dims[3] : filter->dims[0];
  const int32_t bias_index =
      op_->num_inputs == 3 && op_->inputs[2] >= 0 ? op_->inputs[2] : -1;
  if (bias_index >= 0 &&
      !Bias(b_, g_, op_, bias_index, in, weights, channels_out, &bias, r_)) {
    return false;
  }
  if (!Requantization(in, weights, out)) return false;
  node_.kernel = {static_cast<uint32_t>(filter->dims[1]),
                  static_cast<uint32_t>(filter->dims[2])};
  if (depthwise) {
    node_.kind = NodeKind::DEPTHWISE_CONVOLUTION_2D;
    node_.input_channels = channels_in;
    node_.depth_multiplier =
        channels_in == 0 ? 0
                         : static_cast<uint32_t>(channels_out / channels_in);
  } else {
    const uint64_t group_in = filter->dims[3];
    node_.kind = NodeKind::CONVOLUTION_2D;
    node_.groups = group_in == 0 || channels_in % group_in != 0
                       ? 0
                       : static_cast<uint32_t>(channels_in / group_in);
    node_.group_input_channels = group_in;
    node_.group_output_channels =
        node_.groups == 0 ? 0 : channels_out / node_.groups;
    if (node_.groups > 1 && in.datatype != DataType::FP32) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                    "int8 grouped CONV_2D not supported by the xnnpack "
                    "vendor yet");
    }
  }
  node_.inputs = {Use(op_->inputs[0], in), Use(op_->inputs[1], weights),
                  bias_index >= 0 ? Use(bias_index, bias) : kNoValue};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::TransposeConvolution() {
  ValueSpec in, weights, bias, out;
  if (!Operands(3, 4) || !ConstantParameter(0, "output_shape")) return false;
  // Inputs: output_shape, weights, input, bias (optional).
  const int32_t input = op_->inputs[2];
  if (!Activation(b_, g_, input, &in, r_) || !Result(&out, in.datatype) ||
      !Weights(b_, g_, op_, op_->inputs[1], in, 0, false, &weights, r_) ||
      !Window(false) || !FusedActivation(op_, &node_, r_)) {
    return false;
  }
  node_.flags = 0;  // Padding is explicit for deconvolution.
  const graft_tensor_t* x = b_->T(input);
  const graft_tensor_t* filter = In(1);
  const graft_tensor_t* y = Out();
  if (x->rank != 4 || filter->rank != 4 || y->rank != 4) {
    return Refuse(
        r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
        Printf("TRANSPOSE_CONV input %s, filter %s or output %s is "
               "not 4D",
               Shape(x).c_str(), Shape(filter).c_str(), Shape(y).c_str()));
  }
  const bool same = IntAttr(op_, "padding", 0) == 0;
  for (int d = 0; d < 2; ++d) {
    const int64_t in_size = x->dims[1 + d], out_size = y->dims[1 + d];
    const int64_t k = filter->dims[1 + d], s = node_.stride[d];
    // TFLite pads as a convolution from the output back to the input
    // would: before = total / 2, the odd element after.
    int64_t before = 0;
    if (same && s > 0) {
      const int64_t conv_out = (out_size + s - 1) / s;
      const int64_t total =
          std::max<int64_t>((conv_out - 1) * s + k - out_size, 0);
      before = total / 2;
    }
    int64_t after = (in_size - 1) * s + k - before - out_size;
    int64_t adjustment = 0;
    if (after < 0) {
      adjustment = -after;
      after = 0;
    }
    if (s <= 0 || adjustment >= s) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                    Printf("TRANSPOSE_CONV output %s is larger than XNNPACK "
                           "can produce from input %s",
                           Shape(y).c_str(), Shape(x).c_str()));
    }
    node_.padding[d == 0 ? 0 : 3] = static_cast<uint32_t>(before);
    node_.padding[d == 0 ? 2 : 1] = static_cast<uint32_t>(after);
    node_.adjustment.push_back(static_cast<uint32_t>(adjustment));
  }
  const uint64_t channels_out = filter->dims[0];
  const int32_t bias_index =
      op_->num_inputs == 4 && op_->inputs[3] >= 0 ? op_->inputs[3] : -1;
  if (bias_index >= 0 &&
      !Bias(b_, g_, op_, bias_index, in, weights, channels_out, &bias, r_)) {
    return false;
  }
  if (!Requantization(in, weights, out)) return false;
  node_.kind = NodeKind::DECONVOLUTION_2D;
  node_.kernel = {static_cast<uint32_t>(filter->dims[1]),
                  static_cast<uint32_t>(filter->dims[2])};
  node_.dilation = {1, 1};
  node_.groups = 1;
  node_.group_input_channels = filter->dims[3];
  node_.group_output_channels = channels_out;
  node_.inputs = {Use(input, in), Use(op_->inputs[1], weights),
                  bias_index >= 0 ? Use(bias_index, bias) : kNoValue};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::FullyConnected() {
  ValueSpec in, weights, bias, out;
  if (!Operands(2, 3) || !Act(0, &in) || !Result(&out, in.datatype) ||
      !Weights(b_, g_, op_, op_->inputs[1], in, 0, true, &weights, r_) ||
      !FusedActivation(op_, &node_, r_)) {
    return false;
  }
  if (IntAttr(op_, "weights_format", 0) != 0) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                  "FULLY_CONNECTED shuffled weights_format not supported by "
                  "XNNPACK");
  }
  const graft_tensor_t* filter = In(1);
  if (filter->rank != 2) {
    return Refuse(
        r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
        Printf("FULLY_CONNECTED weights %s are not 2D", Shape(filter).c_str()));
  }
  const int32_t bias_index =
      op_->num_inputs == 3 && op_->inputs[2] >= 0 ? op_->inputs[2] : -1;
  if (bias_index >= 0 &&
      !Bias(b_, g_, op_, bias_index, in, weights, filter->dims[0], &bias, r_)) {
    return false;
  }
  if (!Requantization(in, weights, out)) return false;
  const uint32_t bias_id = bias_index >= 0 ? Use(bias_index, bias) : kNoValue;
  if (weights.datatype == DataType::QCINT8) {
    return FullyConnectedAsConvolution(in, weights, bias_id, out);
  }
  node_.kind = NodeKind::FULLY_CONNECTED;
  if (IntAttr(op_, "keep_num_dims", 0) == 0) node_.flags = kFlagReshape2d;
  node_.inputs = {Use(op_->inputs[0], in), Use(op_->inputs[1], weights),
                  bias_id};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

// This XNNPACK has per-channel int8 weights for convolutions only, so an
// int8 FULLY_CONNECTED with per-channel weights runs as the 1x1
// convolution it is: the input reshaped to [rows, 1, 1, K], the [N, K]
// weights read as an [N, 1, 1, K] filter (the same bytes of the same model
// buffer), and the [rows, 1, 1, N] result reshaped to the output.
bool Lowering::FullyConnectedAsConvolution(const ValueSpec& in,
                                           ValueSpec weights, uint32_t bias,
                                           const ValueSpec& out) {
  const uint64_t n = weights.dims[0], k = weights.dims[1];
  const uint64_t count = NumElements(in.dims);
  if (k == 0 || count == UINT64_MAX || count % k != 0) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  Printf("FULLY_CONNECTED input %s is not a whole number of "
                         "rows of the weights' %" PRIu64 " columns",
                         Shape(In(0)).c_str(), k));
  }
  const uint64_t rows = count / k;
  const float output_min = node_.output_min, output_max = node_.output_max;
  const uint32_t rows_in = Intermediate(in, {rows, 1, 1, k});
  if (!EmitReshape(Use(op_->inputs[0], in), rows_in)) return false;
  weights.dims = {n, 1, 1, k};
  node_.output_min = output_min;
  node_.output_max = output_max;
  node_.padding = {0, 0, 0, 0};
  node_.kernel = {1, 1};
  node_.stride = {1, 1};
  node_.dilation = {1, 1};
  node_.group_input_channels = k;
  node_.group_output_channels = n;
  const uint32_t rows_out = Intermediate(out, {rows, 1, 1, n});
  return EmitChained(NodeKind::CONVOLUTION_2D,
                     {rows_in, b_->Add(weights), bias}, rows_out) &&
         EmitReshape(rows_out, Use(op_->outputs[0], out));
}

bool Lowering::Pooling(NodeKind kind) {
  ValueSpec in, out;
  if (!Operands(1, 1) || !Act(0, &in) || !Result(&out, in.datatype) ||
      !Window(kind == NodeKind::MAX_POOLING_2D) ||
      !FusedActivation(op_, &node_, r_)) {
    return false;
  }
  if (kind == NodeKind::AVERAGE_POOLING_2D &&
      !FloatOnly(in, "this XNNPACK has no signed int8 average pooling")) {
    return false;
  }
  if (!SameQuant(in, out)) return false;
  node_.kind = kind;
  node_.kernel = {static_cast<uint32_t>(IntAttr(op_, "filter_height", 1)),
                  static_cast<uint32_t>(IntAttr(op_, "filter_width", 1))};
  node_.inputs = {Use(op_->inputs[0], in)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

// MEAN over adjacent axes is XNNPACK's global average pooling: MEAN over
// [1,2] of a 4D tensor as it is, any other as the input reshaped to
// [outer, 1, reduced, inner] (the dimensions before, over and after the
// axes), pooled to [outer, 1, 1, inner], then reshaped to the output.
bool Lowering::Mean() {
  ValueSpec in, out;
  std::vector<int64_t> axes;
  if (!Operands(2, 2) || !Act(0, &in) || !Result(&out, in.datatype)) {
    return false;
  }
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  bool adjacent = ConstInts(In(1), &axes) && !axes.empty();
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    adjacent = adjacent && a >= 0 && a < rank;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  adjacent = adjacent && axes.back() - axes.front() + 1 ==
                             static_cast<int64_t>(axes.size());
  if (!adjacent) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                  Printf("MEAN over axes that are not adjacent (input %s); "
                         "this XNNPACK has no mean, only global average "
                         "pooling, which reduces adjacent dimensions",
                         Shape(In(0)).c_str()));
  }
  // xnn_create_global_average_pooling_nwc_qs8's range.
  if (in.datatype != DataType::FP32) {
    const double ratio = static_cast<double>(in.scales[0]) / out.scales[0];
    if (!(ratio >= 0x1.0p-8 && ratio < 0x1.0p+8)) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                    Printf("int8 MEAN input scale %g / output scale %g is "
                           "outside XNNPACK's [2^-8, 2^8)",
                           in.scales[0], out.scales[0]));
    }
  }
  const bool height_width = rank == 4 && axes == std::vector<int64_t>{1, 2};
  uint64_t outer = 1, reduced = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    uint64_t& part = d < axes.front()  ? outer
                     : d > axes.back() ? inner
                                       : reduced;
    part *= in.dims[d];
  }
  if (inner == 1 && !height_width) {
    return Refuse(r_, GRAFT_PARTITION_REASON_NOT_PROFITABLE,
                  Printf("MEAN over the last axis (input %s) would be global "
                         "average pooling of one channel between two "
                         "reshapes: slower than the CPU kernel (bench/README)",
                         Shape(In(0)).c_str()));
  }
  uint32_t pool_in = Use(op_->inputs[0], in);
  if (!height_width) {
    const uint32_t reshaped = Intermediate(in, {outer, 1, reduced, inner});
    if (!EmitReshape(pool_in, reshaped)) return false;
    pool_in = reshaped;
  }
  node_.kind = NodeKind::GLOBAL_AVERAGE_POOLING_2D;
  node_.inputs = {pool_in};
  const std::vector<uint64_t> pooled = {outer, 1, 1, inner};
  if (out.dims == pooled) {
    node_.outputs = {Use(op_->outputs[0], out)};
    return Emit();
  }
  const uint32_t pooled_id = Intermediate(out, pooled);
  node_.outputs = {pooled_id};
  return Emit() && EmitReshape(pooled_id, Use(op_->outputs[0], out));
}

// RSQRT is 1 / SQUARE_ROOT(x): XNNPACK's square root and divide are IEEE
// correctly rounded, as TFLite's 1.f / std::sqrt(x) is, so the result is
// the same float. Except where the root is NaN (x < 0 or NaN): XNNPACK's
// divide clamps its output to [output_min, output_max] with MAXPS/MINPS,
// which return their second operand, the bound, for a NaN, so on x86 the
// quotient is -inf there. The NaN comes back through two nodes that clamp
// nothing: SQUARED_DIFFERENCE(root, -FLT_MAX) = (root + FLT_MAX)^2 is +inf
// for every root in [-0, +inf] and NaN for a NaN root, and
// MINIMUM(quotient, that) is the quotient, or NaN (MINPS's second operand;
// NEON's vminq propagates NaN either way).
bool Lowering::Rsqrt() {
  ValueSpec in, out;
  if (!Operands(1, 1) || !Act(0, &in) || !Result(&out, in.datatype) ||
      !FloatOnly(in, "this XNNPACK has no int8 square root or divide")) {
    return false;
  }
  const auto scalar = [](float value) {
    ValueSpec v;
    v.dims = {1};
    v.is_constant = true;
    v.data.resize(sizeof(value));
    std::memcpy(v.data.data(), &value, sizeof(value));
    return v;
  };
  const uint32_t root = Intermediate(in, in.dims);
  const uint32_t quotient = Intermediate(in, in.dims);
  const uint32_t nan_mask = Intermediate(in, in.dims);
  if (!EmitChained(NodeKind::SQUARE_ROOT, {Use(op_->inputs[0], in)}, root)) {
    return false;
  }
  const uint32_t one_id = b_->Add(scalar(1.0f));
  const uint32_t lowest_id = b_->Add(scalar(-FLT_MAX));
  return EmitChained(NodeKind::DIVIDE, {one_id, root}, quotient) &&
         EmitChained(NodeKind::SQUARED_DIFFERENCE, {root, lowest_id},
                     nan_mask) &&
         EmitChained(NodeKind::MINIMUM, {quotient, nan_mask},
                     Use(op_->outputs[0], out));
}

bool Lowering::Reshape() {
  ValueSpec in, out;
  if (!Operands(1, 2) || !ConstantParameter(1, "shape") || !Act(0, &in) ||
      !Result(&out, in.datatype) || !SameQuant(in, out)) {
    return false;
  }
  node_.kind = NodeKind::STATIC_RESHAPE;
  node_.shape = out.dims;
  node_.inputs = {Use(op_->inputs[0], in)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::Pad() {
  ValueSpec in, out;
  std::vector<int64_t> paddings;
  if (!Operands(2, 3) || !Act(0, &in) || !Result(&out, in.datatype) ||
      !SameQuant(in, out)) {
    return false;
  }
  if (!ConstInts(In(1), &paddings) || paddings.size() != 2 * In(0)->rank) {
    return Refuse(r_, GRAFT_PARTITION_REASON_NOT_CONSTANT,
                  Printf("%s paddings must be a constant [%zu,2] integer "
                         "tensor",
                         op_->name, In(0)->rank));
  }
  for (size_t i = 0; i < paddings.size(); ++i) {
    if (paddings[i] < 0) {
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                    Printf("%s with negative padding (cropping) not "
                           "supported",
                           op_->name));
    }
    (i % 2 == 0 ? node_.pre_paddings : node_.post_paddings)
        .push_back(static_cast<uint64_t>(paddings[i]));
  }
  node_.alpha = 0;
  if (op_->num_inputs == 3 && op_->inputs[2] >= 0) {
    const graft_tensor_t* value = In(2);
    if (!IsConstant(value) || graft_tensor_num_elements(value) != 1 ||
        value->element_type != In(0)->element_type || value->data.size < 1) {
      return Refuse(r_, GRAFT_PARTITION_REASON_NOT_CONSTANT,
                    "PADV2 constant_values must be one constant element of "
                    "the input's type");
    }
    if (in.datatype == DataType::FP32) {
      std::memcpy(&node_.alpha, value->data.data, 4);
    } else {
      const graft_quantization_t* q = Quant(value);
      const int8_t qv = static_cast<int8_t>(value->data.data[0]);
      if (q == nullptr || q->num_scales != 1) {
        return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                      "PADV2 int8 constant_values are not quantized per "
                      "tensor");
      }
      node_.alpha = q->scales[0] * static_cast<float>(qv - q->zero_points[0]);
    }
  }
  node_.kind = NodeKind::STATIC_CONSTANT_PAD;
  node_.inputs = {Use(op_->inputs[0], in)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::Resize() {
  ValueSpec in, out;
  if (!Operands(2, 2) || !ConstantParameter(1, "size") || !Act(0, &in) ||
      !Result(&out, in.datatype) || !SameQuant(in, out)) {
    return false;
  }
  const bool align = IntAttr(op_, "align_corners", 0) != 0;
  const bool half = IntAttr(op_, "half_pixel_centers", 0) != 0;
  if (align && half) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
                  "RESIZE_BILINEAR with both align_corners and "
                  "half_pixel_centers");
  }
  if (Out()->rank != 4) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  "RESIZE_BILINEAR output is not 4D");
  }
  node_.kind = NodeKind::STATIC_RESIZE_BILINEAR_2D;
  node_.flags = align ? kFlagAlignCorners : half ? 0 : kFlagLegacyResize;
  node_.shape = {out.dims[1], out.dims[2]};
  node_.inputs = {Use(op_->inputs[0], in)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::Prelu() {
  ValueSpec in, slope, out;
  if (!Operands(2, 2) || !Act(0, &in) || !Result(&out, in.datatype) ||
      !FloatOnly(in, "this XNNPACK has no int8 PReLU") ||
      !Weights(b_, g_, op_, op_->inputs[1], in, 0, false, &slope, r_)) {
    return false;
  }
  // TFLite's alpha broadcasts against the input; XNNPACK's slope is one
  // value per channel: accept alpha shapes [..., 1, C] with C channels.
  const uint64_t channels = in.dims.empty() ? 0 : in.dims.back();
  if (NumElements(slope.dims) != channels || slope.dims.empty() ||
      slope.dims.back() != channels) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                  Printf("PRELU alpha %s is not one value per channel of "
                         "input %s",
                         Shape(In(1)).c_str(), Shape(In(0)).c_str()));
  }
  slope.dims = {channels};
  node_.kind = NodeKind::PRELU;
  // The slope is its own value: its shape differs from the view tensor's.
  node_.inputs = {Use(op_->inputs[0], in), b_->Add(slope)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::Softmax() {
  const double beta = FloatAttr(op_, "beta", 1.0);
  if (beta != 1.0) {
    return Refuse(
        r_, GRAFT_PARTITION_REASON_UNSUPPORTED_ATTRIBUTE,
        Printf("SOFTMAX beta %g; XNNPACK's softmax has beta 1", beta));
  }
  ValueSpec in, out;
  if (!Operands(1, 1) || !Act(0, &in) || !Result(&out, in.datatype)) {
    return false;
  }
  if (in.datatype == DataType::FP32) {
    return Unary(NodeKind::SOFTMAX, false, false);
  }
  if (out.scales[0] != 1.0f / 256 || out.zero_point != -128) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_QUANTIZATION,
                  Printf("int8 SOFTMAX output scale %g zero point %d; "
                         "TFLite requires 1/256 and -128",
                         out.scales[0], out.zero_point));
  }
  // This XNNPACK has a float softmax only: int8 runs as dequantize, float
  // softmax, quantize (within 1 LSB of TFLite's fixed-point kernel; equal
  // on the op tests).
  const ValueSpec float32;
  const uint32_t x = Intermediate(float32, in.dims);
  const uint32_t y = Intermediate(float32, in.dims);
  return EmitChained(NodeKind::CONVERT, {Use(op_->inputs[0], in)}, x) &&
         EmitChained(NodeKind::SOFTMAX, {x}, y) &&
         EmitChained(NodeKind::CONVERT, {y}, Use(op_->outputs[0], out));
}

bool Lowering::Convert(bool quantize) {
  ValueSpec in, out;
  if (!Operands(1, 1) || !Act(0, &in) ||
      !Result(&out, quantize ? DataType::QINT8 : DataType::FP32)) {
    return false;
  }
  if (in.datatype == out.datatype || in.is_constant) {
    return Refuse(
        r_, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
        Printf("%s from %s to %s: XNNPACK converts only between "
               "float32 and int8 at run time",
               op_->name, graft_element_type_name(In(0)->element_type),
               graft_element_type_name(Out()->element_type)));
  }
  node_.kind = NodeKind::CONVERT;
  node_.inputs = {Use(op_->inputs[0], in)};
  node_.outputs = {Use(op_->outputs[0], out)};
  return Emit();
}

bool Lowering::Run() {
  if (op_->builtin_code == GRAFT_BUILTIN_CUSTOM) {
    return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                  Printf("custom op '%s' is not an XNNPACK op", op_->name));
  }
  if (op_->num_outputs == 1) {
    for (size_t i = 0; i < g_->num_inputs; ++i) {
      if (g_->inputs[i] == op_->outputs[0]) {
        return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_SHAPE,
                      Printf("%s writes the graph input '%s' in place",
                             op_->name, Out()->name));
      }
    }
  }
  switch (op_->builtin_code) {
    case kAdd:
      return Binary(NodeKind::ADD);
    case kSub:
      return Binary(NodeKind::SUBTRACT);
    case kMul:
      return Binary(NodeKind::MULTIPLY);
    case kDiv:
      return Binary(NodeKind::DIVIDE);
    case kMaximum:
      return Binary(NodeKind::MAXIMUM);
    case kMinimum:
      return Binary(NodeKind::MINIMUM);
    case kSquaredDifference:
      return Binary(NodeKind::SQUARED_DIFFERENCE);
    case kConv2d:
      return Convolution(false);
    case kDepthwiseConv2d:
      return Convolution(true);
    case kTransposeConv:
      return TransposeConvolution();
    case kFullyConnected:
      return FullyConnected();
    case kAveragePool2d:
      return Pooling(NodeKind::AVERAGE_POOLING_2D);
    case kMaxPool2d:
      return Pooling(NodeKind::MAX_POOLING_2D);
    case kMean:
      return Mean();
    case kRelu:
    case kRelu6:
    case kReluN1To1:
      return Unary(NodeKind::CLAMP, true, true);
    case kLogistic:
      return Unary(NodeKind::SIGMOID, true, false);
    case kSoftmax:
      return Softmax();
    case kHardSwish:
      return Unary(NodeKind::HARDSWISH, false, false);
    case kLeakyRelu:
      return Unary(NodeKind::LEAKY_RELU, false, false);
    case kElu:
      return Unary(NodeKind::ELU, false, false);
    case kPrelu:
      return Prelu();
    case kAbs:
      return Unary(NodeKind::ABS, false, false);
    case kCeil:
      return Unary(NodeKind::CEILING, false, false);
    case kFloor:
      return Unary(NodeKind::FLOOR, false, false);
    case kNeg:
      return Unary(NodeKind::NEGATE, false, false);
    case kSquare:
      return Unary(NodeKind::SQUARE, false, false);
    case kSqrt:
      return Unary(NodeKind::SQUARE_ROOT, false, false);
    case kRsqrt:
      return Rsqrt();
    case kRound:
      return Unary(NodeKind::BANKERS_ROUNDING, false, false);
    case kReshape:
    case kSqueeze:
    case kExpandDims:
      return Reshape();
    case kPad:
    case kPadV2:
      return Pad();
    case kResizeBilinear:
      return Resize();
    case kDepthToSpace: {
      ValueSpec in;
      if (!Operands(1, 1) || !Act(0, &in) ||
          !FloatOnly(in, "this XNNPACK's depth-to-space is float32 only")) {
        return false;
      }
      node_.block_size = static_cast<uint32_t>(IntAttr(op_, "block_size", 0));
      return Unary(NodeKind::DEPTH_TO_SPACE, false, false);
    }
    case kQuantize:
      return Convert(true);
    case kDequantize:
      return Convert(false);
    default:
      return Refuse(r_, GRAFT_PARTITION_REASON_UNSUPPORTED_OP,
                    Printf("op %s has no node in this XNNPACK's subgraph API "
                           "(Debian 0.0~git20220216)",
                           op_->name));
  }
}

bool IndexOk(const graft_graph_view_t* g, int32_t index, bool allow_absent) {
  if (index == -1) return allow_absent;
  return index >= 0 && static_cast<size_t>(index) < g->num_tensors;
}

// Structural invariants of a view (pointers, sizes, indices); a violation
// is INVALID_ARGUMENT, never a crash.
std::string ValidateView(const graft_graph_view_t* g) {
  if (!GRAFT_STRUCT_HAS_MEMBER(g, graft_graph_view_t, num_outputs)) {
    return "graph view struct_size is too small";
  }
  if ((g->num_tensors > 0 && g->tensors == nullptr) ||
      (g->num_ops > 0 && g->ops == nullptr) ||
      (g->num_inputs > 0 && g->inputs == nullptr) ||
      (g->num_outputs > 0 && g->outputs == nullptr)) {
    return "graph view has a NULL array with a non-zero count";
  }
  for (size_t i = 0; i < g->num_tensors; ++i) {
    const graft_tensor_t* t = g->tensors[i];
    if (t == nullptr ||
        !GRAFT_STRUCT_HAS_MEMBER(t, graft_tensor_t, buffer_id) ||
        t->name == nullptr ||
        (t->rank > 0 &&
         (t->dims == nullptr || t->shape_signature == nullptr)) ||
        (t->data.size > 0 && t->data.data == nullptr)) {
      return Printf("tensor %zu is malformed", i);
    }
  }
  for (size_t i = 0; i < g->num_ops; ++i) {
    const graft_op_t* op = g->ops[i];
    if (op == nullptr ||
        !GRAFT_STRUCT_HAS_MEMBER(op, graft_op_t, original_op_index) ||
        op->name == nullptr || (op->num_inputs > 0 && op->inputs == nullptr) ||
        (op->num_outputs > 0 && op->outputs == nullptr) ||
        (op->num_attributes > 0 && op->attributes == nullptr)) {
      return Printf("op %zu is malformed", i);
    }
    for (size_t j = 0; j < op->num_inputs; ++j) {
      if (!IndexOk(g, op->inputs[j], true)) {
        return Printf("op %zu input %zu is out of range", i, j);
      }
    }
    for (size_t j = 0; j < op->num_outputs; ++j) {
      if (!IndexOk(g, op->outputs[j], false)) {
        return Printf("op %zu output %zu is out of range", i, j);
      }
    }
  }
  for (size_t i = 0; i < g->num_inputs; ++i) {
    if (!IndexOk(g, g->inputs[i], false)) {
      return Printf("graph input %zu is out of range", i);
    }
  }
  for (size_t i = 0; i < g->num_outputs; ++i) {
    if (!IndexOk(g, g->outputs[i], false)) {
      return Printf("graph output %zu is out of range", i);
    }
  }
  return "";
}

// Builds the XNNPACK graph of one partition view; "" or what is wrong.
std::string BuildEntry(const graft_graph_view_t* g, Builder* b) {
  std::string problem = ValidateView(g);
  if (!problem.empty()) return problem;
  if (g->num_outputs == 0) return "the partition has no outputs";
  std::vector<bool> written(g->num_tensors, false);
  for (size_t i = 0; i < g->num_inputs; ++i) {
    const int32_t t = g->inputs[i];
    Refusal r;
    ValueSpec v;
    if (written[t] || IsConstant(b->T(t))) {
      return Printf("input %zu (tensor %d) is constant or listed twice", i, t);
    }
    if (!Activation(b, g, t, &v, &r))
      return Printf("input %zu: %s", i, r.text.c_str());
    b->Use(t, v);
    written[t] = true;
  }
  for (size_t i = 0; i < g->num_ops; ++i) {
    const graft_op_t* op = g->ops[i];
    for (size_t j = 0; j < op->num_inputs; ++j) {
      const int32_t t = op->inputs[j];
      if (t >= 0 && !written[t] && !IsConstant(b->T(t))) {
        return Printf("op %zu (%s) reads tensor %d before anything writes it",
                      i, op->name, t);
      }
    }
    for (size_t j = 0; j < op->num_outputs; ++j) {
      if (written[op->outputs[j]]) {
        return Printf("op %zu (%s) writes tensor %d, already written", i,
                      op->name, op->outputs[j]);
      }
    }
    Refusal r;
    Lowering lowering(g, op, b, &r);
    if (!lowering.Run()) {
      return Printf("op %zu (%s) cannot be compiled: %s", i, op->name,
                    r.text.c_str());
    }
    for (size_t j = 0; j < op->num_outputs; ++j) written[op->outputs[j]] = true;
  }
  for (size_t i = 0; i < g->num_outputs; ++i) {
    const uint32_t id = b->ValueOf(g->outputs[i]);
    if (id == kNoValue || b->values()[id].input_index >= 0 ||
        b->values()[id].output_index >= 0 || b->values()[id].is_constant) {
      return Printf(
          "output %zu (tensor %d) is not computed by the partition "
          "or listed twice",
          i, g->outputs[i]);
    }
    b->values()[id].output_index = static_cast<int32_t>(i);
  }
  return "";
}

flatbuffers::Offset<Entry> SerializeEntry(flatbuffers::FlatBufferBuilder& fbb,
                                          const std::string& name,
                                          const graft_graph_view_t* g,
                                          Builder& b) {
  std::vector<flatbuffers::Offset<Value>> values;
  for (const ValueSpec& v : b.values()) {
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> data;
    if (!v.data.empty()) {
      fbb.ForceVectorAlignment(v.data.size(), 1, 16);
      data = fbb.CreateVector(v.data);
    }
    auto dims = fbb.CreateVector(v.dims);
    auto scales = v.scales.empty() ? 0 : fbb.CreateVector(v.scales);
    ValueBuilder vb(fbb);
    vb.add_datatype(v.datatype);
    vb.add_dims(dims);
    if (!v.scales.empty()) vb.add_scales(scales);
    vb.add_zero_point(v.zero_point);
    vb.add_channel_dim(v.channel_dim);
    if (v.is_constant && v.buffer_id >= 0) {
      vb.add_buffer_id(v.buffer_id);
      vb.add_buffer_size(v.buffer_size);
    }
    if (!v.data.empty()) vb.add_data(data);
    vb.add_input_index(v.input_index);
    vb.add_output_index(v.output_index);
    values.push_back(vb.Finish());
  }
  auto u32 = [&](const std::vector<uint32_t>& v) {
    return v.empty() ? 0 : fbb.CreateVector(v);
  };
  auto u64 = [&](const std::vector<uint64_t>& v) {
    return v.empty() ? 0 : fbb.CreateVector(v);
  };
  std::vector<flatbuffers::Offset<Node>> nodes;
  for (const NodeSpec& n : b.nodes()) {
    nodes.push_back(CreateNode(
        fbb, n.kind, u32(n.inputs), u32(n.outputs), n.original_op_index,
        n.output_min, n.output_max, u32(n.padding), u32(n.kernel),
        u32(n.stride), u32(n.dilation), u32(n.adjustment), n.groups,
        n.group_input_channels, n.group_output_channels, n.depth_multiplier,
        n.input_channels, n.alpha, u64(n.shape), u64(n.pre_paddings),
        u64(n.post_paddings), n.block_size, n.flags));
  }
  std::vector<uint32_t> inputs, outputs;
  for (size_t i = 0; i < g->num_inputs; ++i) {
    inputs.push_back(b.ValueOf(g->inputs[i]));
  }
  for (size_t i = 0; i < g->num_outputs; ++i) {
    outputs.push_back(b.ValueOf(g->outputs[i]));
  }
  return CreateEntry(fbb, fbb.CreateString(name), fbb.CreateVector(values),
                     fbb.CreateVector(nodes), fbb.CreateVector(inputs),
                     fbb.CreateVector(outputs));
}

// The plugin's compile result; the public struct first.
struct Result {
  graft_compiled_result_t base;
  graft_compatibility_stamp_t stamp;
  std::vector<uint8_t> module;
  graft_byte_span_t module_span;
  std::vector<std::string> entry_points;
  std::vector<graft_compiled_call_t> calls;
  std::vector<graft_debug_map_entry_t> debug_map;
};

}  // namespace
}  // namespace graft_xnnpack

using namespace graft_xnnpack;  // NOLINT: the exported C functions only.

struct graft_compiler_plugin_t {
  const graft_host_api_t* host;
  graft_compiler_plugin_info_t info;
  // Reason strings of the last partition call.
  std::vector<std::string> reasons;
};

GRAFT_EXPORT uint32_t graft_compiler_plugin_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_compiler_plugin_t** out_plugin) {
  if (host == nullptr) return &kNullHostStatus;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      host->struct_size < sizeof(graft_host_api_t)) {
    return &kBadHostStatus;
  }
  if (out_plugin == nullptr || (options == nullptr && num_options > 0)) {
    return &kBadCreateArgsStatus;
  }
  if (num_options > 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "xnnpack vendor: unknown option '%s' (the plugin takes no options)",
        options[0].key != nullptr ? options[0].key : "(null)");
  }
  auto* plugin = new graft_compiler_plugin_t();
  plugin->host = host;
  graft_compiler_plugin_info_t& info = plugin->info;
  info.struct_size = sizeof(info);
  info.abi_version = GRAFT_ABI_VERSION;
  info.flags = 0;
  info.vendor = kVendor;
  info.plugin_version = kPluginVersion;
  info.description =
      "XNNPACK (Debian 0.0~git20220216) subgraphs: float32 and int8 "
      "convolutions, fully connected, pooling, elementwise and activations";
  info.soc_models = kSocModels;
  info.num_soc_models = 1;
  info.hardware_kinds = GRAFT_HARDWARE_KIND_CPU;
  info.bytecode_format_version = kBytecodeFormatVersion;
  info.options = kNoOptions;
  info.num_options = 0;
  *out_plugin = plugin;
  return nullptr;
}

GRAFT_EXPORT void graft_compiler_plugin_destroy(
    graft_compiler_plugin_t* plugin) {
  delete plugin;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_get_info(
    const graft_compiler_plugin_t* plugin,
    const graft_compiler_plugin_info_t** out_info) {
  if (plugin == nullptr) return &kNullPluginStatus;
  if (out_info == nullptr) {
    return plugin->host->status_create(plugin->host,
                                       GRAFT_STATUS_INVALID_ARGUMENT,
                                       "xnnpack vendor: out_info is NULL");
  }
  *out_info = &plugin->info;
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_check_compatibility(
    graft_compiler_plugin_t* plugin, const char* soc_model) {
  if (plugin == nullptr) return &kNullPluginStatus;
  if (soc_model == nullptr || std::strcmp(soc_model, kSocModel) != 0) {
    return plugin->host->status_create_formatted(
        plugin->host, GRAFT_STATUS_NOT_FOUND,
        "xnnpack vendor: unknown SoC model '%s' (known: %s)",
        soc_model != nullptr ? soc_model : "(null)", kSocModel);
  }
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_partition(
    graft_compiler_plugin_t* plugin, const graft_graph_view_t* graph,
    const char* soc_model, graft_partition_result_t* out_result) {
  if (plugin == nullptr) return &kNullPluginStatus;
  const graft_host_api_t* host = plugin->host;
  if (graph == nullptr || out_result == nullptr ||
      out_result->decisions == nullptr ||
      out_result->num_decisions != graph->num_ops) {
    return host->status_create(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "xnnpack vendor: partition needs a graph and one decision per op");
  }
  // A result too short to hold the decisions is not one to write (found by
  // `graft check`'s misuse probes).
  if (out_result->struct_size < sizeof(graft_partition_result_t)) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "xnnpack vendor: partition result struct_size %zu is less than %zu",
        out_result->struct_size, sizeof(graft_partition_result_t));
  }
  graft_status_t* status =
      graft_compiler_plugin_check_compatibility(plugin, soc_model);
  if (status != nullptr) return status;
  const std::string problem = ValidateView(graph);
  if (!problem.empty()) {
    return host->status_create_formatted(host, GRAFT_STATUS_INVALID_ARGUMENT,
                                         "xnnpack vendor: partition: %s",
                                         problem.c_str());
  }
  plugin->reasons.assign(graph->num_ops, std::string());
  for (size_t i = 0; i < graph->num_ops; ++i) {
    graft_op_decision_t* d = &out_result->decisions[i];
    *d = graft_op_decision_t{};
    Builder scratch(graph);
    Refusal refusal;
    if (Lowering(graph, graph->ops[i], &scratch, &refusal).Run()) {
      d->taken = 1;
      d->group_id = 0;
      continue;
    }
    plugin->reasons[i] = std::move(refusal.text);
    d->reason_code = refusal.code;
    d->reason = plugin->reasons[i].c_str();
  }
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_compiler_plugin_compile(
    graft_compiler_plugin_t* plugin, const char* soc_model,
    const graft_graph_view_t* const* partitions, size_t num_partitions,
    graft_compiled_result_t** out_result) {
  if (plugin == nullptr) return &kNullPluginStatus;
  const graft_host_api_t* host = plugin->host;
  if (partitions == nullptr || num_partitions == 0 || out_result == nullptr ||
      num_partitions > INT32_MAX) {
    return host->status_create(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "xnnpack vendor: compile needs partitions (at least one) and "
        "out_result");
  }
  graft_status_t* status =
      graft_compiler_plugin_check_compatibility(plugin, soc_model);
  if (status != nullptr) return status;
  // All partitions go into one module, one entry point each.
  flatbuffers::FlatBufferBuilder fbb;
  auto result = std::make_unique<Result>();
  std::vector<flatbuffers::Offset<Entry>> entries;
  for (size_t i = 0; i < num_partitions; ++i) {
    if (partitions[i] == nullptr) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "xnnpack vendor: compile: partition %zu is NULL", i);
    }
    Builder b(partitions[i]);
    const std::string problem = BuildEntry(partitions[i], &b);
    if (!problem.empty()) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "xnnpack vendor: compile: partition %zu: %s", i, problem.c_str());
    }
    result->entry_points.push_back("partition_" + std::to_string(i));
    for (size_t n = 0; n < b.nodes().size(); ++n) {
      graft_debug_map_entry_t e{};
      e.module_index = 0;
      // Nodes count from 1: location 0 is the dispatch ABI's "no single
      // instruction" (graft_dispatch_profile_event_t).
      e.vendor_location = (uint64_t{i} << 32) | (n + 1);
      e.original_op_index = b.nodes()[n].original_op_index;
      e.partition_index = static_cast<int32_t>(i);
      result->debug_map.push_back(e);
    }
    entries.push_back(
        SerializeEntry(fbb, result->entry_points.back(), partitions[i], b));
  }
  auto module =
      CreateModule(fbb, kBytecodeFormatVersion, fbb.CreateString(kSocModel),
                   fbb.CreateVector(entries));
  fbb.Finish(module, ModuleIdentifier());
  result->module.assign(fbb.GetBufferPointer(),
                        fbb.GetBufferPointer() + fbb.GetSize());
  result->module_span = {result->module.data(), result->module.size()};
  for (size_t i = 0; i < num_partitions; ++i) {
    result->calls.push_back({result->entry_points[i].c_str(), 0});
  }
  result->stamp.struct_size = sizeof(result->stamp);
  result->stamp.abi_version = GRAFT_ABI_VERSION;
  result->stamp.bytecode_format_version = kBytecodeFormatVersion;
  result->stamp.vendor = kVendor;
  result->stamp.plugin_version = kPluginVersion;
  result->stamp.soc_model = kSocModel;
  graft_compiled_result_t& base = result->base;
  base.struct_size = sizeof(base);
  base.stamp = &result->stamp;
  base.modules = &result->module_span;
  base.num_modules = 1;
  base.calls = result->calls.data();
  base.num_calls = result->calls.size();
  base.debug_map = result->debug_map.data();
  base.num_debug_map_entries = result->debug_map.size();
  *out_result = &result.release()->base;
  return nullptr;
}

GRAFT_EXPORT void graft_compiler_plugin_compiled_result_destroy(
    graft_compiled_result_t* result) {
  delete reinterpret_cast<Result*>(result);
}
