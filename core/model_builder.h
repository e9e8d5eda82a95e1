// ModelBuilder: a fluent builder of small IR models, for tests, benchmarks
// and tools that synthesize graphs.
//
//   graft::ModelBuilder b;
//   auto& g = b.Subgraph("main");
//   TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 8});
//   TensorId w = g.Constant<float>("w", {4, 8}, weights);
//   tfl::FullyConnectedOptionsT fc;
//   fc.fused_activation_function = tfl::ActivationFunctionType_RELU;
//   TensorId h = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
//                    .In(x, w, kNoTensor)
//                    .Options(fc)
//                    .Out("h", tfl::TensorType_FLOAT32, {1, 4});
//   g.Output(h);
//   b.Signature("serving_default", {{"x", x}}, {{"h", h}});
//   absl::StatusOr<graft::Model> m = std::move(b).Build();
//
// Misuse (an unknown tensor id, constant data that does not match its shape,
// options of a type that is no BuiltinOptions member, ...) never aborts: the
// first such error is remembered and returned by Build(), which also runs
// VerifyModel on the result. Builder methods stay callable after an error so
// the test code that follows need not check each step.
//
// Ids: tensors are numbered per subgraph in creation order, ops in creation
// order (an op is appended to its subgraph when Op()/CustomOp() is called, so
// creation order must be an execution order), subgraphs in creation order.
// Constant data gets its own buffer; tensors without data use buffer 0.
//
// Thread-safety: none; a builder is used by one thread.
#ifndef GRAFT_CORE_MODEL_BUILDER_H_
#define GRAFT_CORE_MODEL_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/bytes.h"
#include "core/model.h"

namespace graft {

class ModelBuilder;
class SubgraphBuilder;

// The TensorType of a C++ element type, for SubgraphBuilder::Constant<T>.
template <typename T>
struct TensorTypeOf;
#define GRAFT_TENSOR_TYPE_OF_(cpp_type, tensor_type)                        \
  template <>                                                               \
  struct TensorTypeOf<cpp_type> {                                           \
    static constexpr tfl::TensorType value = tfl::TensorType_##tensor_type; \
  }
GRAFT_TENSOR_TYPE_OF_(float, FLOAT32);
GRAFT_TENSOR_TYPE_OF_(double, FLOAT64);
GRAFT_TENSOR_TYPE_OF_(int8_t, INT8);
GRAFT_TENSOR_TYPE_OF_(uint8_t, UINT8);
GRAFT_TENSOR_TYPE_OF_(int16_t, INT16);
GRAFT_TENSOR_TYPE_OF_(uint16_t, UINT16);
GRAFT_TENSOR_TYPE_OF_(int32_t, INT32);
GRAFT_TENSOR_TYPE_OF_(uint32_t, UINT32);
GRAFT_TENSOR_TYPE_OF_(int64_t, INT64);
GRAFT_TENSOR_TYPE_OF_(uint64_t, UINT64);
GRAFT_TENSOR_TYPE_OF_(bool, BOOL);
#undef GRAFT_TENSOR_TYPE_OF_

// Describes an op output for OpBuilder::Outs.
struct TensorSpec {
  std::string name;
  tfl::TensorType type;
  std::vector<int32_t> shape;
};

// A handle on one op of a SubgraphBuilder, returned by Op()/CustomOp(). The
// op already exists in the subgraph; each call edits it. Cheap to copy; valid
// as long as its ModelBuilder.
class OpBuilder {
 public:
  // Appends inputs; kNoTensor marks an omitted optional input.
  template <typename... Ids>
  OpBuilder& In(Ids... ids) {
    static_assert((std::is_convertible_v<Ids, TensorId> && ...),
                  "OpBuilder::In takes tensor ids");
    return Inputs({static_cast<TensorId>(ids)...});
  }
  OpBuilder& Inputs(absl::Span<const TensorId> ids);

  // Sets the builtin options: any member of the BuiltinOptions or
  // BuiltinOptions2 union (tfl::Conv2DOptionsT, tfl::StablehloSliceOptionsT,
  // ...).
  template <typename OptionsT>
  OpBuilder& Options(OptionsT options) {
    using T = std::decay_t<OptionsT>;
    if constexpr (static_cast<int>(
                      tfl::BuiltinOptionsUnionTraits<T>::enum_value) != 0) {
      mutable_op()->builtin_options.Set(std::move(options));
    } else if constexpr (static_cast<int>(
                             tfl::BuiltinOptions2UnionTraits<T>::enum_value) !=
                         0) {
      mutable_op()->builtin_options_2.Set(std::move(options));
    } else {
      static_assert(sizeof(T) == 0,
                    "not a member of BuiltinOptions or BuiltinOptions2");
    }
    return *this;
  }

  // Sets custom_options (format FLEXBUFFERS unless given).
  OpBuilder& CustomOptions(
      absl::Span<const uint8_t> data,
      tfl::CustomOptionsFormat format = tfl::CustomOptionsFormat_FLEXBUFFERS);
  OpBuilder& CustomOptions(absl::string_view data);

  // Appends a new output tensor and returns its id. Call several times for
  // multi-output ops (keep the OpBuilder in a variable), or use Outs().
  TensorId Out(absl::string_view name, tfl::TensorType type,
               std::vector<int32_t> shape);
  // Appends an existing tensor as an output and returns it.
  TensorId Out(TensorId tensor);
  // Appends one new output per spec; returns their ids in order.
  std::vector<TensorId> Outs(std::vector<TensorSpec> specs);

  // The op's id, for ops whose outputs were given as existing tensors.
  OpId id() const { return op_; }

 private:
  friend class SubgraphBuilder;
  OpBuilder(SubgraphBuilder* subgraph, OpId op)
      : subgraph_(subgraph), op_(op) {}
  tfl::OperatorT* mutable_op();

  SubgraphBuilder* subgraph_;
  OpId op_;
};

// Builds one subgraph of a ModelBuilder. Obtained from
// ModelBuilder::Subgraph(); valid as long as the ModelBuilder.
class SubgraphBuilder {
 public:
  SubgraphBuilder(const SubgraphBuilder&) = delete;
  SubgraphBuilder& operator=(const SubgraphBuilder&) = delete;

  SubgraphId id() const { return id_; }

  // A tensor without data (an activation).
  TensorId Tensor(absl::string_view name, tfl::TensorType type,
                  std::vector<int32_t> shape);
  // A tensor appended to the subgraph's inputs.
  TensorId Input(absl::string_view name, tfl::TensorType type,
                 std::vector<int32_t> shape);
  // A variable tensor (is_variable), e.g. an LSTM state.
  TensorId Variable(absl::string_view name, tfl::TensorType type,
                    std::vector<int32_t> shape);
  // Appends `tensor` to the subgraph's outputs.
  SubgraphBuilder& Output(TensorId tensor);

  // A constant tensor holding `values` (copied into owned storage); the
  // element type gives the tensor type. values.size() must equal the number
  // of elements of `shape`.
  template <typename T>
  TensorId Constant(absl::string_view name, std::vector<int32_t> shape,
                    absl::Span<const T> values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return Constant(name, TensorTypeOf<T>::value, std::move(shape),
                    Bytes::Own(std::move(bytes)));
  }
  template <typename T>
  TensorId Constant(absl::string_view name, std::vector<int32_t> shape,
                    const std::vector<T>& values) {
    return Constant<T>(name, std::move(shape), absl::MakeConstSpan(values));
  }
  template <typename T>
  TensorId Constant(absl::string_view name, std::vector<int32_t> shape,
                    std::initializer_list<T> values) {
    return Constant<T>(name, std::move(shape),
                       absl::Span<const T>(values.begin(), values.size()));
  }
  // A constant tensor holding raw `data` (not copied: Bytes shares storage),
  // for any tensor type. The size must match the static shape when the type
  // has a fixed element size.
  TensorId Constant(absl::string_view name, tfl::TensorType type,
                    std::vector<int32_t> shape, Bytes data);

  // A builtin op, appended to the subgraph now. The operator code (with
  // `version`) is shared with earlier ops of the same kind.
  OpBuilder Op(tfl::BuiltinOperator op, int32_t version = 1);
  // A custom op with `custom_code`.
  OpBuilder CustomOp(absl::string_view custom_code, int32_t version = 1);

  // Per-tensor affine quantization: real = scale * (q - zero_point).
  SubgraphBuilder& Quantize(TensorId tensor, float scale, int64_t zero_point);
  // Per-channel quantization along `axis` (quantized_dimension); one scale
  // and zero point per channel.
  SubgraphBuilder& QuantizePerChannel(TensorId tensor,
                                      absl::Span<const float> scales,
                                      absl::Span<const int64_t> zero_points,
                                      int32_t axis);

  // Direct access for fields the builder has no method for (shape_signature,
  // sparsity, ...). Null, and an error recorded for Build(), when `tensor` is
  // not a tensor of this subgraph.
  tfl::TensorT* MutableTensor(TensorId tensor);

 private:
  friend class ModelBuilder;
  friend class OpBuilder;
  SubgraphBuilder(ModelBuilder* model, SubgraphId id)
      : model_(model), id_(id) {}
  Subgraph& subgraph();
  bool CheckTensor(TensorId tensor, absl::string_view what);

  ModelBuilder* model_;
  SubgraphId id_;
};

// Builds a Model. Neither copyable nor movable: SubgraphBuilders point at it.
class ModelBuilder {
 public:
  ModelBuilder() = default;
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;

  // Appends a subgraph (the first is the main one) and returns its builder.
  SubgraphBuilder& Subgraph(absl::string_view name = "");

  ModelBuilder& Description(absl::string_view description);

  // Adds a signature over subgraph `subgraph`: (name, tensor id) pairs.
  ModelBuilder& Signature(absl::string_view key,
                          std::vector<std::pair<std::string, TensorId>> inputs,
                          std::vector<std::pair<std::string, TensorId>> outputs,
                          SubgraphId subgraph = 0);

  // Adds a metadata entry whose buffer holds `data`.
  ModelBuilder& Metadata(absl::string_view name, Bytes data);
  ModelBuilder& Metadata(absl::string_view name, absl::string_view data) {
    return Metadata(name, Bytes::Copy(data));
  }

  // The model under construction, for edits the builder has no method for.
  Model& model() { return model_; }

  // The first misuse recorded so far (OK if none).
  const absl::Status& status() const { return status_; }

  // The model, after the first recorded misuse (if any) and VerifyModel.
  absl::StatusOr<Model> Build() &&;
  // The model as built, unchecked: for tests that need invalid models.
  Model BuildUnverified() &&;

 private:
  friend class SubgraphBuilder;
  friend class OpBuilder;
  void RecordError(absl::Status status);
  void Finish();

  Model model_;
  std::vector<std::unique_ptr<SubgraphBuilder>> subgraphs_;
  absl::Status status_;
};

}  // namespace graft

#endif  // GRAFT_CORE_MODEL_BUILDER_H_
