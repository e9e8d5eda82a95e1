#include "plugins/graph_view.h"

#include <algorithm>

namespace graft {
const char* GraphView::Keep(std::string s) {
  strings_.push_back(std::move(s));
  return strings_.back().c_str();
}

GraphView::GraphView(const Model& model, SubgraphId subgraph, std::string name,
                     std::vector<int32_t> original_op_indices,
                     int32_t original_subgraph,
                     absl::Span<const uint8_t> tflite_buffer) {
  const Subgraph& sg = model.subgraphs[subgraph];
  name_ = name.empty() ? sg.name : std::move(name);

  // Sized up front so pointers into these vectors stay valid. Shapes and
  // zero points share one allocation: a view is built per partition, by the
  // thousand in large models.
  size_t int64_count = 0;
  for (const tfl::TensorT& t : sg.tensors) {
    int64_count += 2 * t.shape.size();
    if (t.quantization) int64_count += t.quantization->scale.size();
  }
  shapes_.reserve(int64_count);
  auto take_int64s = [this](size_t n) {
    size_t at = shapes_.size();
    shapes_.resize(at + n, 0);
    return shapes_.data() + at;
  };
  tensors_.resize(sg.tensors.size());
  quantizations_.resize(sg.tensors.size());
  for (size_t i = 0; i < sg.tensors.size(); ++i) {
    const tfl::TensorT& t = sg.tensors[i];
    graft_tensor_t& v = tensors_[i];
    v.struct_size = sizeof(graft_tensor_t);
    v.name = t.name.c_str();
    v.element_type = static_cast<graft_element_type_t>(t.type);
    if (t.is_variable) v.flags |= GRAFT_TENSOR_FLAG_VARIABLE;
    if (t.sparsity) v.flags |= GRAFT_TENSOR_FLAG_SPARSE;
    const size_t rank = t.shape.size();
    int64_t* dims = take_int64s(rank);
    int64_t* sig = take_int64s(rank);
    const bool has_signature = t.shape_signature.size() == rank;
    for (size_t d = 0; d < rank; ++d) {
      dims[d] = std::max<int64_t>(t.shape[d], 0);
      sig[d] = has_signature && t.shape_signature[d] < 0 ? -1 : dims[d];
    }
    v.dims = dims;
    v.rank = rank;
    v.shape_signature = sig;
    v.buffer_id = -1;
    if (IsConstantTensor(model, t)) {
      v.flags |= GRAFT_TENSOR_FLAG_CONSTANT;
      const Bytes& data = model.buffers[t.buffer].data;
      v.data = {data.data(), data.size()};
      v.buffer_id = t.buffer;
    }
    const tfl::QuantizationParametersT* q = t.quantization.get();
    if (q != nullptr && (!q->scale.empty() || q->details.type !=
                                                  tfl::QuantizationDetails_NONE)) {
      graft_quantization_t& qv = quantizations_[i];
      qv.struct_size = sizeof(graft_quantization_t);
      qv.blockwise_scales_tensor = -1;
      qv.blockwise_zero_points_tensor = -1;
      if (q->details.type == tfl::QuantizationDetails_BlockwiseQuantization) {
        const auto* b = q->details.AsBlockwiseQuantization();
        qv.kind = GRAFT_QUANTIZATION_KIND_BLOCKWISE;
        qv.block_size = b->block_size;
        qv.blockwise_scales_tensor = b->scales;
        qv.blockwise_zero_points_tensor = b->zero_points;
      } else if (q->details.type != tfl::QuantizationDetails_NONE) {
        qv.kind = GRAFT_QUANTIZATION_KIND_OTHER;
      } else {
        qv.kind = q->scale.size() == 1 ? GRAFT_QUANTIZATION_KIND_PER_TENSOR
                                       : GRAFT_QUANTIZATION_KIND_PER_CHANNEL;
        qv.quantized_dimension =
            qv.kind == GRAFT_QUANTIZATION_KIND_PER_CHANNEL
                ? q->quantized_dimension
                : 0;
        qv.scales = q->scale.data();
        qv.num_scales = q->scale.size();
        int64_t* zps = take_int64s(q->scale.size());
        for (size_t k = 0; k < q->scale.size() && k < q->zero_point.size(); ++k) {
          zps[k] = q->zero_point[k];
        }
        qv.zero_points = zps;
        qv.num_zero_points = q->scale.size();
      }
      v.quantization = &qv;
    }
  }
  tensor_ptrs_.reserve(tensors_.size());
  for (const graft_tensor_t& t : tensors_) tensor_ptrs_.push_back(&t);

  ops_.resize(sg.ops.size());
  op_ptrs_.reserve(sg.ops.size());
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const tfl::OperatorT& op = sg.ops[i];
    graft_op_t& v = ops_[i];
    v.struct_size = sizeof(graft_op_t);
    const tfl::OperatorCodeT* code =
        op.opcode_index < model.operator_codes.size()
            ? &model.operator_codes[op.opcode_index]
            : nullptr;
    v.builtin_code = code ? EffectiveBuiltinCode(*code) : -1;
    v.version = code ? code->version : 1;
    bool custom = v.builtin_code == tfl::BuiltinOperator_CUSTOM;
    v.name = custom ? Keep(code->custom_code)
                    : Keep(code ? OpCodeName(*code) : "INVALID");
    v.custom_code = custom ? v.name : nullptr;
    v.inputs = op.inputs.data();
    v.num_inputs = op.inputs.size();
    v.outputs = op.outputs.data();
    v.num_outputs = op.outputs.size();
    v.intermediates = op.intermediates.data();
    v.num_intermediates = op.intermediates.size();
    if (custom) {
      v.custom_options = {op.custom_options.data(), op.custom_options.size()};
    }
    std::vector<OpAttribute> attrs = OpAttributes(op);
    auto& out = attributes_.emplace_back(attrs.size());
    for (size_t k = 0; k < attrs.size(); ++k) {
      OpAttribute& a = attrs[k];
      graft_attribute_t& c = out[k];
      c.name = Keep(std::move(a.name));
      c.type = static_cast<graft_attribute_type_t>(a.type);
      c.int_value = a.int_value;
      c.float_value = a.float_value;
      switch (a.type) {
        case OpAttribute::Type::kString:
        case OpAttribute::Type::kEnum:
          c.string_value = Keep(std::move(a.string_value));
          break;
        case OpAttribute::Type::kIntArray:
          c.num_values = a.int_values.size();
          c.int_values = int64_arrays_.emplace_back(std::move(a.int_values)).data();
          break;
        case OpAttribute::Type::kFloatArray:
          c.num_values = a.float_values.size();
          c.float_values = double_arrays_.emplace_back(std::move(a.float_values)).data();
          break;
        case OpAttribute::Type::kBytes:
          c.num_values = a.bytes.size();
          c.bytes_value = byte_arrays_.emplace_back(std::move(a.bytes)).data();
          break;
        default:
          break;
      }
    }
    v.attributes = out.data();
    v.num_attributes = out.size();
    v.original_op_index = original_op_indices.empty()
                              ? static_cast<int32_t>(i)
                              : original_op_indices[i];
  }
  for (const graft_op_t& op : ops_) op_ptrs_.push_back(&op);

  view_.struct_size = sizeof(graft_graph_view_t);
  view_.name = name_.c_str();
  view_.subgraph_index = original_subgraph >= 0 ? original_subgraph : subgraph;
  view_.tensors = tensor_ptrs_.data();
  view_.num_tensors = tensor_ptrs_.size();
  view_.ops = op_ptrs_.data();
  view_.num_ops = op_ptrs_.size();
  view_.inputs = sg.inputs.data();
  view_.num_inputs = sg.inputs.size();
  view_.outputs = sg.outputs.data();
  view_.num_outputs = sg.outputs.size();
  view_.tflite_buffer = {tflite_buffer.data(), tflite_buffer.size()};
}

}  // namespace graft
