#include "core/model_builder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/model_io.h"
#include "core/status.h"

namespace graft {

tfl::OperatorT* OpBuilder::mutable_op() {
  // Ids come from SubgraphBuilder::Op and ops are never removed, so op_ is
  // always in range.
  return &subgraph_->subgraph().ops[op_];
}

OpBuilder& OpBuilder::Inputs(absl::Span<const TensorId> ids) {
  for (TensorId id : ids) {
    if (id != kNoTensor) {
      subgraph_->CheckTensor(id, absl::StrCat("input of op ", op_));
    }
    mutable_op()->inputs.push_back(id);
  }
  return *this;
}

OpBuilder& OpBuilder::CustomOptions(absl::Span<const uint8_t> data,
                                    tfl::CustomOptionsFormat format) {
  tfl::OperatorT* op = mutable_op();
  op->custom_options.assign(data.begin(), data.end());
  op->custom_options_format = format;
  return *this;
}

OpBuilder& OpBuilder::CustomOptions(absl::string_view data) {
  return CustomOptions(absl::Span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(data.data()), data.size()));
}

TensorId OpBuilder::Out(absl::string_view name, tfl::TensorType type,
                        std::vector<int32_t> shape) {
  return Out(subgraph_->Tensor(name, type, std::move(shape)));
}

TensorId OpBuilder::Out(TensorId tensor) {
  subgraph_->CheckTensor(tensor, absl::StrCat("output of op ", op_));
  mutable_op()->outputs.push_back(tensor);
  return tensor;
}

std::vector<TensorId> OpBuilder::Outs(std::vector<TensorSpec> specs) {
  std::vector<TensorId> ids;
  ids.reserve(specs.size());
  for (TensorSpec& spec : specs) {
    ids.push_back(Out(spec.name, spec.type, std::move(spec.shape)));
  }
  return ids;
}

Subgraph& SubgraphBuilder::subgraph() { return model_->model_.subgraphs[id_]; }

bool SubgraphBuilder::CheckTensor(TensorId tensor, absl::string_view what) {
  if (tensor >= 0 && static_cast<size_t>(tensor) < subgraph().tensors.size()) {
    return true;
  }
  model_->RecordError(absl::InvalidArgumentError(
      absl::StrCat("subgraph ", id_, ": ", what, ": no tensor ", tensor,
                   " (subgraph has ", subgraph().tensors.size(), " tensors)")));
  return false;
}

TensorId SubgraphBuilder::Tensor(absl::string_view name, tfl::TensorType type,
                                 std::vector<int32_t> shape) {
  tfl::TensorT t;
  t.name = std::string(name);
  t.type = type;
  t.shape = std::move(shape);
  t.buffer = 0;
  std::vector<tfl::TensorT>& tensors = subgraph().tensors;
  tensors.push_back(std::move(t));
  return static_cast<TensorId>(tensors.size() - 1);
}

TensorId SubgraphBuilder::Input(absl::string_view name, tfl::TensorType type,
                                std::vector<int32_t> shape) {
  TensorId id = Tensor(name, type, std::move(shape));
  subgraph().inputs.push_back(id);
  return id;
}

TensorId SubgraphBuilder::Variable(absl::string_view name, tfl::TensorType type,
                                   std::vector<int32_t> shape) {
  TensorId id = Tensor(name, type, std::move(shape));
  subgraph().tensors[id].is_variable = true;
  return id;
}

SubgraphBuilder& SubgraphBuilder::Output(TensorId tensor) {
  if (CheckTensor(tensor, "subgraph output")) {
    subgraph().outputs.push_back(tensor);
  }
  return *this;
}

TensorId SubgraphBuilder::Constant(absl::string_view name, tfl::TensorType type,
                                   std::vector<int32_t> shape, Bytes data) {
  // Checked here as well as by VerifyModel so the error names the builder
  // call rather than a tensor index the test author never wrote down.
  int bits = TensorTypeBits(type);
  int64_t elements = NumElements(shape);
  if (bits > 0 && elements >= 0) {
    uint64_t expected = (static_cast<uint64_t>(elements) * bits + 7) / 8;
    if (expected != data.size()) {
      model_->RecordError(absl::InvalidArgumentError(absl::StrCat(
          "subgraph ", id_, ": constant '", name, "' of type ",
          TensorTypeName(type), " and ", elements, " elements needs ", expected,
          " bytes, got ", data.size())));
    }
  }
  TensorId id = Tensor(name, type, std::move(shape));
  subgraph().tensors[id].buffer = AddBuffer(model_->model_, std::move(data));
  return id;
}

OpBuilder SubgraphBuilder::Op(tfl::BuiltinOperator op, int32_t version) {
  tfl::OperatorT o;
  o.opcode_index = GetOrAddOperatorCode(model_->model_, op, "", version);
  std::vector<tfl::OperatorT>& ops = subgraph().ops;
  ops.push_back(std::move(o));
  return OpBuilder(this, static_cast<OpId>(ops.size() - 1));
}

OpBuilder SubgraphBuilder::CustomOp(absl::string_view custom_code,
                                    int32_t version) {
  tfl::OperatorT o;
  o.opcode_index = GetOrAddOperatorCode(
      model_->model_, tfl::BuiltinOperator_CUSTOM, custom_code, version);
  std::vector<tfl::OperatorT>& ops = subgraph().ops;
  ops.push_back(std::move(o));
  return OpBuilder(this, static_cast<OpId>(ops.size() - 1));
}

SubgraphBuilder& SubgraphBuilder::Quantize(TensorId tensor, float scale,
                                           int64_t zero_point) {
  return QuantizePerChannel(tensor, {scale}, {zero_point}, 0);
}

SubgraphBuilder& SubgraphBuilder::QuantizePerChannel(
    TensorId tensor, absl::Span<const float> scales,
    absl::Span<const int64_t> zero_points, int32_t axis) {
  if (!CheckTensor(tensor, "quantized tensor")) return *this;
  if (scales.size() != zero_points.size()) {
    model_->RecordError(absl::InvalidArgumentError(
        absl::StrCat("subgraph ", id_, ": tensor ", tensor, ": ", scales.size(),
                     " scales but ", zero_points.size(), " zero points")));
  }
  auto q = std::make_unique<tfl::QuantizationParametersT>();
  q->scale.assign(scales.begin(), scales.end());
  q->zero_point.assign(zero_points.begin(), zero_points.end());
  q->quantized_dimension = axis;
  subgraph().tensors[tensor].quantization = std::move(q);
  return *this;
}

tfl::TensorT* SubgraphBuilder::MutableTensor(TensorId tensor) {
  if (!CheckTensor(tensor, "MutableTensor")) return nullptr;
  return &subgraph().tensors[tensor];
}

SubgraphBuilder& ModelBuilder::Subgraph(absl::string_view name) {
  model_.subgraphs.emplace_back();
  model_.subgraphs.back().name = std::string(name);
  auto id = static_cast<SubgraphId>(model_.subgraphs.size() - 1);
  // unique_ptr: the references handed out must survive later Subgraph()
  // calls growing the vector.
  subgraphs_.push_back(
      std::unique_ptr<SubgraphBuilder>(new SubgraphBuilder(this, id)));
  return *subgraphs_.back();
}

ModelBuilder& ModelBuilder::Description(absl::string_view description) {
  model_.description = std::string(description);
  return *this;
}

ModelBuilder& ModelBuilder::Signature(
    absl::string_view key, std::vector<std::pair<std::string, TensorId>> inputs,
    std::vector<std::pair<std::string, TensorId>> outputs,
    SubgraphId subgraph) {
  // Out-of-range tensor ids are left for VerifyModel, which reports them
  // against the signature.
  auto to_maps = [](std::vector<std::pair<std::string, TensorId>>& pairs) {
    std::vector<std::unique_ptr<tfl::TensorMapT>> maps;
    for (auto& [name, tensor] : pairs) {
      auto map = std::make_unique<tfl::TensorMapT>();
      map->name = std::move(name);
      map->tensor_index = static_cast<uint32_t>(tensor);
      maps.push_back(std::move(map));
    }
    return maps;
  };
  tfl::SignatureDefT sig;
  sig.signature_key = std::string(key);
  sig.subgraph_index = static_cast<uint32_t>(subgraph);
  sig.inputs = to_maps(inputs);
  sig.outputs = to_maps(outputs);
  model_.signature_defs.push_back(std::move(sig));
  return *this;
}

ModelBuilder& ModelBuilder::Metadata(absl::string_view name, Bytes data) {
  tfl::MetadataT m;
  m.name = std::string(name);
  m.buffer = AddBuffer(model_, std::move(data));
  model_.metadata.push_back(std::move(m));
  return *this;
}

void ModelBuilder::RecordError(absl::Status status) {
  if (status_.ok()) {
    status_ = absl::Status(status.code(),
                           absl::StrCat("ModelBuilder: ", status.message()));
  }
}

void ModelBuilder::Finish() {
  // Every model has the sentinel buffer 0, even one without constants.
  if (model_.buffers.empty()) model_.buffers.emplace_back();
}

absl::StatusOr<Model> ModelBuilder::Build() && {
  GRAFT_RETURN_IF_ERROR(status_);
  Finish();
  GRAFT_RETURN_IF_ERROR(VerifyModel(model_));
  return std::move(model_);
}

Model ModelBuilder::BuildUnverified() && {
  Finish();
  return std::move(model_);
}

}  // namespace graft
