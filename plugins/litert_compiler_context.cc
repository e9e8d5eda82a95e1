#include "plugins/litert_compiler_context.h"

#include <cstdint>
#include <cstring>
#include <deque>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/outline.h"

// The objects behind LiteRT's handles. Records point into the Model; the
// vectors are sized once, so handles (pointers to their elements) stay put.
struct LiteRtWeightsT {
  const uint8_t* data = nullptr;
  size_t size = 0;
  int32_t buffer_id = -1;
};

struct LiteRtTensorT {
  LiteRtSubgraphT* owner = nullptr;
  const graft::tfl::TensorT* tensor = nullptr;
  graft::TensorId id = 0;
  LiteRtOpT* defining_op = nullptr;
  size_t defining_output = 0;
  std::vector<std::pair<LiteRtOpT*, size_t>> uses;
  LiteRtWeightsT weights;
  // Per-channel parameters in LiteRT's element types.
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
};

struct LiteRtOpT {
  LiteRtSubgraphT* owner = nullptr;
  const graft::tfl::OperatorT* op = nullptr;
  graft::OpId id = 0;
  graft::tfl::BuiltinOperator code = graft::tfl::BuiltinOperator_ADD;
  const std::string* custom_code = nullptr;
  // Omitted optional inputs (-1) are left out, as LiteRT's loader does.
  std::vector<LiteRtTensorT*> inputs;
  std::vector<LiteRtTensorT*> outputs;
  // A RESHAPE without options whose shape input is constant: that shape,
  // which LiteRT's loader hands plugins as the new_shape option (Intel's
  // bytecode is byte-identical to LiteRT's only so).
  std::vector<int32_t> new_shape;
  bool has_new_shape = false;
};

struct LiteRtSubgraphT {
  const graft::Model* model = nullptr;
  const graft::Subgraph* subgraph = nullptr;
  graft::SubgraphId id = 0;
  std::vector<LiteRtTensorT> tensors;
  std::vector<LiteRtOpT> ops;
  std::vector<LiteRtTensorT*> inputs;
  std::vector<LiteRtTensorT*> outputs;
};

struct LiteRtOpListT {
  LiteRtSubgraphT* subgraph = nullptr;
  std::vector<std::pair<graft::OpId, size_t>> pushed;
  // Set when the plugin pushed something Graft cannot accept.
  std::string error;
};

struct LiteRtModelT {
  const graft::Model* model = nullptr;
  std::deque<LiteRtSubgraphT> subgraphs;
  std::deque<LiteRtOpListT> op_lists;
};

struct LiteRtOpaqueOptionsT {
  std::map<std::string, std::string> payloads;
};

struct LiteRtOptionsT {
  LiteRtOpaqueOptionsT opaque;
};

struct LiteRtEnvironmentOptionsT {};

namespace graft {
namespace {

void BuildSubgraph(const Model& model, SubgraphId id, LiteRtSubgraphT& out) {
  const Subgraph& sg = model.subgraphs[id];
  out.model = &model;
  out.subgraph = &sg;
  out.id = id;
  out.tensors.resize(sg.tensors.size());
  out.ops.resize(sg.ops.size());
  for (size_t t = 0; t < sg.tensors.size(); ++t) {
    LiteRtTensorT& r = out.tensors[t];
    const tfl::TensorT& tensor = sg.tensors[t];
    r.owner = &out;
    r.tensor = &tensor;
    r.id = static_cast<TensorId>(t);
    if (tensor.buffer != 0 && tensor.buffer < model.buffers.size()) {
      const Bytes& data = model.buffers[tensor.buffer].data;
      r.weights.buffer_id = static_cast<int32_t>(tensor.buffer);
      r.weights.data = data.empty() ? nullptr : data.data();
      r.weights.size = data.size();
    }
    if (tensor.quantization != nullptr &&
        tensor.quantization->scale.size() > 1) {
      r.scales = tensor.quantization->scale;
      r.zero_points.assign(tensor.quantization->zero_point.begin(),
                           tensor.quantization->zero_point.end());
      r.zero_points.resize(r.scales.size(), 0);
    }
  }
  auto tensor_at = [&](TensorId t) -> LiteRtTensorT* {
    return t >= 0 && static_cast<size_t>(t) < out.tensors.size()
               ? &out.tensors[t]
               : nullptr;
  };
  for (size_t o = 0; o < sg.ops.size(); ++o) {
    LiteRtOpT& r = out.ops[o];
    const tfl::OperatorT& op = sg.ops[o];
    r.owner = &out;
    r.op = &op;
    r.id = static_cast<OpId>(o);
    if (op.opcode_index < model.operator_codes.size()) {
      const tfl::OperatorCodeT& code = model.operator_codes[op.opcode_index];
      r.code = EffectiveBuiltinCode(code);
      r.custom_code = &code.custom_code;
    }
    for (TensorId t : op.inputs) {
      LiteRtTensorT* in = tensor_at(t);
      if (in == nullptr) continue;
      in->uses.push_back({&r, r.inputs.size()});
      r.inputs.push_back(in);
    }
    if (r.code == tfl::BuiltinOperator_RESHAPE &&
        op.builtin_options.type == tfl::BuiltinOptions_NONE &&
        r.inputs.size() == 2 && r.inputs[1]->weights.size > 0) {
      const LiteRtWeightsT& w = r.inputs[1]->weights;
      const tfl::TensorType type = r.inputs[1]->tensor->type;
      if (type == tfl::TensorType_INT32) {
        r.new_shape.resize(w.size / sizeof(int32_t));
        std::memcpy(r.new_shape.data(), w.data, r.new_shape.size() * 4);
        r.has_new_shape = true;
      } else if (type == tfl::TensorType_INT64) {
        for (size_t i = 0; i + sizeof(int64_t) <= w.size; i += 8) {
          int64_t d;
          std::memcpy(&d, w.data + i, sizeof(d));
          r.new_shape.push_back(static_cast<int32_t>(d));
        }
        r.has_new_shape = true;
      }
    }
    for (TensorId t : op.outputs) {
      LiteRtTensorT* o_tensor = tensor_at(t);
      if (o_tensor == nullptr) continue;
      o_tensor->defining_op = &r;
      o_tensor->defining_output = r.outputs.size();
      r.outputs.push_back(o_tensor);
    }
  }
  for (TensorId t : sg.inputs) {
    if (LiteRtTensorT* in = tensor_at(t)) out.inputs.push_back(in);
  }
  for (TensorId t : sg.outputs) {
    if (LiteRtTensorT* o = tensor_at(t)) out.outputs.push_back(o);
  }
}

// Every callback checks its handles and out-pointers first: a plugin's
// mistake is an error status, never a crash in Graft.
#define LITERT_CHECK_ARGS(...)                                     \
  do {                                                             \
    const void* args_[] = {__VA_ARGS__};                           \
    for (const void* a_ : args_) {                                 \
      if (a_ == nullptr) return kLiteRtStatusErrorInvalidArgument; \
    }                                                              \
  } while (0)

// Index `i` of `v` into *out, or IndexOOB.
template <typename T, typename Out>
LiteRtStatus At(const std::vector<T>& v, LiteRtParamIndex i, Out* out) {
  if (i >= v.size()) return kLiteRtStatusErrorIndexOOB;
  if constexpr (std::is_pointer_v<T>) {
    *out = v[i];
  } else {
    *out = const_cast<T*>(&v[i]);
  }
  return kLiteRtStatusOk;
}

LiteRtStatus GetNumModelSubgraphs(LiteRtModel m, LiteRtParamIndex* n) {
  LITERT_CHECK_ARGS(m, n);
  *n = m->subgraphs.size();
  return kLiteRtStatusOk;
}
LiteRtStatus GetModelSubgraph(LiteRtModel m, LiteRtParamIndex i,
                              LiteRtSubgraph* out) {
  LITERT_CHECK_ARGS(m, out);
  if (i >= m->subgraphs.size()) return kLiteRtStatusErrorIndexOOB;
  *out = &m->subgraphs[i];
  return kLiteRtStatusOk;
}
LiteRtStatus GetNumSubgraphOps(LiteRtSubgraph s, LiteRtParamIndex* n) {
  LITERT_CHECK_ARGS(s, n);
  *n = s->ops.size();
  return kLiteRtStatusOk;
}
LiteRtStatus GetSubgraphOp(LiteRtSubgraph s, LiteRtParamIndex i,
                           LiteRtOp* out) {
  LITERT_CHECK_ARGS(s, out);
  return At(s->ops, i, out);
}
LiteRtStatus GetNumSubgraphInputs(LiteRtSubgraph s, LiteRtParamIndex* n) {
  LITERT_CHECK_ARGS(s, n);
  *n = s->inputs.size();
  return kLiteRtStatusOk;
}
LiteRtStatus GetSubgraphInput(LiteRtSubgraph s, LiteRtParamIndex i,
                              LiteRtTensor* out) {
  LITERT_CHECK_ARGS(s, out);
  return At(s->inputs, i, out);
}
LiteRtStatus GetNumSubgraphOutputs(LiteRtSubgraph s, LiteRtParamIndex* n) {
  LITERT_CHECK_ARGS(s, n);
  *n = s->outputs.size();
  return kLiteRtStatusOk;
}
LiteRtStatus GetSubgraphOutput(LiteRtSubgraph s, LiteRtParamIndex i,
                               LiteRtTensor* out) {
  LITERT_CHECK_ARGS(s, out);
  return At(s->outputs, i, out);
}

LiteRtStatus GetOpCode(LiteRtOp op, LiteRtOpCode* code) {
  LITERT_CHECK_ARGS(op, code);
  *code = static_cast<LiteRtOpCode>(op->code);
  return kLiteRtStatusOk;
}
LiteRtStatus GetCustomCode(LiteRtOp op, const char** code) {
  LITERT_CHECK_ARGS(op, code);
  if (op->code != tfl::BuiltinOperator_CUSTOM || op->custom_code == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *code = op->custom_code->c_str();
  return kLiteRtStatusOk;
}
LiteRtStatus GetCustomOptions(LiteRtOp op, const uint8_t** data,
                              int32_t* size) {
  LITERT_CHECK_ARGS(op, data, size);
  const std::vector<uint8_t>& o = op->op->custom_options;
  if (o.size() > INT32_MAX) return kLiteRtStatusErrorUnsupported;
  *data = o.empty() ? nullptr : o.data();
  *size = static_cast<int32_t>(o.size());
  return kLiteRtStatusOk;
}
LiteRtStatus GetNumOpInputs(LiteRtOp op, LiteRtParamIndex* n) {
  LITERT_CHECK_ARGS(op, n);
  *n = op->inputs.size();
  return kLiteRtStatusOk;
}
LiteRtStatus GetOpInput(LiteRtOp op, LiteRtParamIndex i, LiteRtTensor* out) {
  LITERT_CHECK_ARGS(op, out);
  return At(op->inputs, i, out);
}
LiteRtStatus GetNumOpOutputs(LiteRtOp op, LiteRtParamIndex* n) {
  LITERT_CHECK_ARGS(op, n);
  *n = op->outputs.size();
  return kLiteRtStatusOk;
}
LiteRtStatus GetOpOutput(LiteRtOp op, LiteRtParamIndex i, LiteRtTensor* out) {
  LITERT_CHECK_ARGS(op, out);
  return At(op->outputs, i, out);
}

LiteRtStatus GetTensorName(LiteRtTensor t, const char** name) {
  LITERT_CHECK_ARGS(t, name);
  *name = t->tensor->name.c_str();
  return kLiteRtStatusOk;
}
LiteRtStatus GetTensorIndex(LiteRtTensor t, uint32_t* index) {
  LITERT_CHECK_ARGS(t, index);
  *index = static_cast<uint32_t>(t->id);
  return kLiteRtStatusOk;
}
LiteRtStatus GetTensorTypeId(LiteRtTensor t, LiteRtTensorTypeId* id) {
  LITERT_CHECK_ARGS(t, id);
  // .tflite has no unranked tensors that carry no shape at all: a tensor
  // whose rank is unknown keeps shape [] with no shape_signature, which the
  // converter writes only for scalars; LiteRT's loader reads both as ranked.
  *id = kLiteRtRankedTensorType;
  return kLiteRtStatusOk;
}
LiteRtStatus GetRankedTensorType(LiteRtTensor t, LiteRtRankedTensorType* out) {
  LITERT_CHECK_ARGS(t, out);
  const tfl::TensorT& tensor = *t->tensor;
  // LiteRT 2.3.0's loader gives the dynamic dims of shape_signature only
  // for tensors that say has_rank; for the others (older converters'
  // files), the static shape. Observed with a probe plugin under
  // apply_plugin_main: simple_add_model's [-1,128,128,1] inputs, has_rank
  // false, reach the plugin as [1,128,128,1].
  const std::vector<int32_t>& dims =
      tensor.has_rank && tensor.shape_signature.size() == tensor.shape.size()
          ? tensor.shape_signature
          : tensor.shape;
  if (dims.size() > LITERT_TENSOR_MAX_RANK)
    return kLiteRtStatusErrorUnsupported;
  LiteRtRankedTensorType r;
  std::memset(&r, 0, sizeof(r));
  r.element_type = LiteRtElementTypeOf(tensor.type);
  r.layout.rank = static_cast<unsigned>(dims.size());
  r.layout.has_strides = false;
  for (size_t i = 0; i < dims.size(); ++i) r.layout.dimensions[i] = dims[i];
  *out = r;
  return kLiteRtStatusOk;
}
LiteRtStatus GetUnrankedTensorType(LiteRtTensor t,
                                   LiteRtUnrankedTensorType* out) {
  LITERT_CHECK_ARGS(t, out);
  return kLiteRtStatusErrorInvalidIrType;  // Every tensor is ranked.
}

const tfl::BlockwiseQuantizationT* BlockWise(const tfl::TensorT& tensor) {
  if (tensor.quantization == nullptr) return nullptr;
  return tensor.quantization->details.AsBlockwiseQuantization();
}

LiteRtQuantizationTypeId QuantizationType(const tfl::TensorT& tensor) {
  if (BlockWise(tensor) != nullptr) return kLiteRtQuantizationBlockWise;
  if (tensor.quantization == nullptr) return kLiteRtQuantizationNone;
  const size_t n = tensor.quantization->scale.size();
  if (n == 1) return kLiteRtQuantizationPerTensor;
  if (n > 1) return kLiteRtQuantizationPerChannel;
  return kLiteRtQuantizationNone;
}

LiteRtStatus GetQuantizationTypeId(LiteRtTensor t,
                                   LiteRtQuantizationTypeId* id) {
  LITERT_CHECK_ARGS(t, id);
  *id = QuantizationType(*t->tensor);
  return kLiteRtStatusOk;
}
LiteRtStatus GetPerTensorQuantization(LiteRtTensor t,
                                      LiteRtQuantizationPerTensor* out) {
  LITERT_CHECK_ARGS(t, out);
  if (QuantizationType(*t->tensor) != kLiteRtQuantizationPerTensor) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  const tfl::QuantizationParametersT& q = *t->tensor->quantization;
  out->scale = q.scale[0];
  out->zero_point = q.zero_point.empty() ? 0 : q.zero_point[0];
  return kLiteRtStatusOk;
}
LiteRtStatus GetPerChannelQuantization(LiteRtTensor t,
                                       LiteRtQuantizationPerChannel* out) {
  LITERT_CHECK_ARGS(t, out);
  if (QuantizationType(*t->tensor) != kLiteRtQuantizationPerChannel) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  out->quantized_dimension = t->tensor->quantization->quantized_dimension;
  out->num_channels = t->scales.size();
  out->scales = t->scales.data();
  out->zero_points = t->zero_points.data();
  return kLiteRtStatusOk;
}
LiteRtStatus GetBlockWiseQuantization(LiteRtTensor t,
                                      LiteRtQuantizationBlockWise* out) {
  LITERT_CHECK_ARGS(t, out);
  const tfl::BlockwiseQuantizationT* b = BlockWise(*t->tensor);
  if (b == nullptr) return kLiteRtStatusErrorInvalidArgument;
  auto tensor_at = [&](int32_t i) -> LiteRtTensor {
    return i >= 0 && static_cast<size_t>(i) < t->owner->tensors.size()
               ? &t->owner->tensors[i]
               : nullptr;
  };
  out->scales = tensor_at(b->scales);
  out->zero_points = tensor_at(b->zero_points);
  out->block_size = b->block_size;
  return out->scales != nullptr ? kLiteRtStatusOk
                                : kLiteRtStatusErrorInvalidGraphInvariant;
}

LiteRtStatus GetNumTensorUses(LiteRtTensor t, LiteRtParamIndex* n) {
  LITERT_CHECK_ARGS(t, n);
  *n = t->uses.size();
  return kLiteRtStatusOk;
}
LiteRtStatus GetTensorUse(LiteRtTensor t, LiteRtParamIndex i, LiteRtOp* user,
                          LiteRtParamIndex* arg) {
  LITERT_CHECK_ARGS(t, user, arg);
  if (i >= t->uses.size()) return kLiteRtStatusErrorIndexOOB;
  *user = t->uses[i].first;
  *arg = t->uses[i].second;
  return kLiteRtStatusOk;
}
LiteRtStatus GetTensorDefiningOp(LiteRtTensor t, bool* has,
                                 LiteRtTensorDefiningOp* out) {
  LITERT_CHECK_ARGS(t, has, out);
  *has = t->defining_op != nullptr;
  if (*has) {
    out->op = t->defining_op;
    out->op_output_index = t->defining_output;
  }
  return kLiteRtStatusOk;
}
LiteRtStatus GetTensorWeights(LiteRtTensor t, LiteRtWeights* out) {
  LITERT_CHECK_ARGS(t, out);
  *out = &t->weights;
  return kLiteRtStatusOk;
}
LiteRtStatus GetWeightsBufferId(LiteRtWeights w, int32_t* id) {
  LITERT_CHECK_ARGS(w, id);
  *id = w->buffer_id;
  return kLiteRtStatusOk;
}
LiteRtStatus GetWeightsBytes(LiteRtWeights w, const void** addr, size_t* size) {
  LITERT_CHECK_ARGS(w, addr, size);
  *addr = w->data;
  *size = w->size;
  return kLiteRtStatusOk;
}

const tfl::StableHLOCompositeOptionsT* Composite(LiteRtOp op) {
  if (op->code != tfl::BuiltinOperator_STABLEHLO_COMPOSITE) return nullptr;
  return op->op->builtin_options_2.AsStableHLOCompositeOptions();
}
LiteRtStatus GetCompositeName(LiteRtOp op, const char** name) {
  LITERT_CHECK_ARGS(op, name);
  const tfl::StableHLOCompositeOptionsT* c = Composite(op);
  if (c == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *name = c->name.c_str();
  return kLiteRtStatusOk;
}
LiteRtStatus GetCompositeDecomposition(LiteRtOp op, int32_t* index) {
  LITERT_CHECK_ARGS(op, index);
  const tfl::StableHLOCompositeOptionsT* c = Composite(op);
  if (c == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *index = c->decomposition_subgraph_index;
  return kLiteRtStatusOk;
}
LiteRtStatus GetCompositeAttributes(LiteRtOp op, const uint8_t** data,
                                    int32_t* size) {
  LITERT_CHECK_ARGS(op, data, size);
  const tfl::StableHLOCompositeOptionsT* c = Composite(op);
  if (c == nullptr || c->composite_attributes.size() > INT32_MAX) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *data = c->composite_attributes.empty() ? nullptr
                                          : c->composite_attributes.data();
  *size = static_cast<int32_t>(c->composite_attributes.size());
  return kLiteRtStatusOk;
}
LiteRtStatus GetCompositeVersion(LiteRtOp op, int32_t* version) {
  LITERT_CHECK_ARGS(op, version);
  const tfl::StableHLOCompositeOptionsT* c = Composite(op);
  if (c == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *version = c->version;
  return kLiteRtStatusOk;
}

LiteRtStatus PushOp(LiteRtOpList list, LiteRtOp op,
                    LiteRtParamIndex partition) {
  LITERT_CHECK_ARGS(list, op);
  // `op` is checked to be one of this subgraph's records by its address
  // before anything reads through it: a plugin may push an op of another
  // subgraph, a stale handle or garbage.
  const std::vector<LiteRtOpT>& ops = list->subgraph->ops;
  const uintptr_t first = reinterpret_cast<uintptr_t>(ops.data());
  const uintptr_t at = reinterpret_cast<uintptr_t>(op);
  if (ops.empty() || at < first ||
      at - first >= ops.size() * sizeof(LiteRtOpT) ||
      (at - first) % sizeof(LiteRtOpT) != 0) {
    list->error =
        "pushed an op handle that is not an op of the subgraph being "
        "partitioned (an op of another subgraph, or a handle the host did "
        "not hand out)";
    return kLiteRtStatusErrorInvalidArgument;
  }
  list->pushed.push_back({ops[(at - first) / sizeof(LiteRtOpT)].id, partition});
  return kLiteRtStatusOk;
}

LiteRtStatus GetOpaqueOptions(LiteRtOptions options, LiteRtOpaqueOptions* out) {
  LITERT_CHECK_ARGS(options, out);
  *out = &options->opaque;
  return kLiteRtStatusOk;
}
LiteRtStatus FindOpaqueOptionsData(LiteRtOpaqueOptions options, const char* id,
                                   void** data) {
  LITERT_CHECK_ARGS(options, id, data);
  auto it = options->payloads.find(id);
  if (it == options->payloads.end()) return kLiteRtStatusErrorNotFound;
  *data = const_cast<char*>(it->second.c_str());
  return kLiteRtStatusOk;
}
// The host owns the options; a plugin's destroy call must not free them.
void DestroyOptions(LiteRtOptions) {}
LiteRtStatus GetEnvironmentOptionsValue(LiteRtEnvironmentOptions env,
                                        LiteRtEnvOptionTag, LiteRtAny* value) {
  LITERT_CHECK_ARGS(env, value);
  return kLiteRtStatusErrorNotFound;
}

// Op options: the op's options table of type OptionsT, or null when the
// op carries none. LiteRT's getters answer InvalidArgument then (the array
// getters also set a size of -1, which plugins read as "take the shape from
// the second input").
template <typename OptionsT>
const OptionsT* OptionsOf(const tfl::OperatorT& op) {
  using Table = typename OptionsT::TableType;
  if (op.builtin_options.type == tfl::BuiltinOptionsTraits<Table>::enum_value) {
    return static_cast<const OptionsT*>(op.builtin_options.value);
  }
  return nullptr;
}

template <tfl::BuiltinOperator kOp, typename OptionsT, auto kMember,
          typename Out>
LiteRtStatus GetOption(LiteRtOp op, Out* value) {
  LITERT_CHECK_ARGS(op, value);
  const OptionsT* options = OptionsOf<OptionsT>(*op->op);
  if (op->code != kOp || options == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  *value = static_cast<Out>(options->*kMember);
  return kLiteRtStatusOk;
}

// An int32 array option (RESHAPE's new_shape, SQUEEZE's squeeze_dims); a
// size of -1 and InvalidArgument when the op has no options, as LiteRT's
// getter answers (Intel's plugin then reads RESHAPE's shape input; an empty
// array instead would make it build a reshape to a scalar).
template <tfl::BuiltinOperator kOp, typename OptionsT, auto kMember>
LiteRtStatus GetArrayOption(LiteRtOp op, const int32_t** data, int32_t* size) {
  LITERT_CHECK_ARGS(op, data, size);
  if (op->code != kOp) return kLiteRtStatusErrorInvalidArgument;
  const OptionsT* options = OptionsOf<OptionsT>(*op->op);
  if (options == nullptr && op->has_new_shape) {
    *data = op->new_shape.data();
    *size = static_cast<int32_t>(op->new_shape.size());
    return kLiteRtStatusOk;
  }
  if (options == nullptr) {
    *data = nullptr;
    *size = -1;
    return kLiteRtStatusErrorInvalidArgument;
  }
  const std::vector<int32_t>& v = options->*kMember;
  *data = v.data();
  *size = static_cast<int32_t>(v.size());
  return kLiteRtStatusOk;
}

LiteRtStatus SerializeModelWithSignatures(LiteRtModel m, uint8_t** buf,
                                          size_t* size, size_t* offset, bool,
                                          char**, LiteRtParamIndex,
                                          LiteRtModelSerializationOptions) {
  LITERT_CHECK_ARGS(m, buf, size, offset);
  std::vector<SubgraphId> ids;
  for (const LiteRtSubgraphT& s : m->subgraphs) ids.push_back(s.id);
  absl::StatusOr<std::vector<uint8_t>> bytes =
      SerializeModel(ExtractSubgraphsModel(*m->model, ids));
  if (!bytes.ok()) return kLiteRtStatusErrorSerialization;
  uint8_t* out = new uint8_t[bytes->size()];
  std::memcpy(out, bytes->data(), bytes->size());
  *buf = out;
  *size = bytes->size();
  *offset = 0;
  return kLiteRtStatusOk;
}

LiteRtStatus BuilderUnsupported(LiteRtBuilder, LiteRtOp) {
  return kLiteRtStatusErrorUnsupported;
}
LiteRtStatus BuildTensorUnsupported(
    LiteRtBuilder, LiteRtTensorTypeId, LiteRtRankedTensorType,
    LiteRtUnrankedTensorType, LiteRtWeights, LiteRtQuantizationTypeId,
    LiteRtQuantizationPerTensor, LiteRtQuantizationPerChannel,
    LiteRtQuantizationBlockWise, const char*, LiteRtTensor*) {
  return kLiteRtStatusErrorUnsupported;
}
LiteRtStatus BuildWeightsUnsupported(LiteRtBuilder, const uint8_t*,
                                     LiteRtParamIndex, LiteRtTensor,
                                     LiteRtWeights*) {
  return kLiteRtStatusErrorUnsupported;
}
LiteRtStatus BuildOpUnsupported(LiteRtBuilder, LiteRtOpCode, LiteRtParamIndex,
                                LiteRtTensor*, LiteRtParamIndex, LiteRtTensor*,
                                LiteRtOp*) {
  return kLiteRtStatusErrorUnsupported;
}

LiteRtCompilerContext MakeContext() {
  LiteRtCompilerContext c;
  std::memset(&c, 0, sizeof(c));
  c.abi_header.struct_size = sizeof(LiteRtCompilerContext);
  c.abi_header.major_version = LITERT_COMPILER_CONTEXT_MAJOR;
  c.abi_header.minor_version = LITERT_COMPILER_CONTEXT_MINOR;
  c.get_num_model_subgraphs = GetNumModelSubgraphs;
  c.get_model_subgraph = GetModelSubgraph;
  c.get_num_subgraph_ops = GetNumSubgraphOps;
  c.get_subgraph_op = GetSubgraphOp;
  c.get_num_subgraph_inputs = GetNumSubgraphInputs;
  c.get_subgraph_input = GetSubgraphInput;
  c.get_num_subgraph_outputs = GetNumSubgraphOutputs;
  c.get_subgraph_output = GetSubgraphOutput;
  c.get_op_code = GetOpCode;
  c.get_custom_code = GetCustomCode;
  c.get_num_op_inputs = GetNumOpInputs;
  c.get_op_input = GetOpInput;
  c.get_num_op_outputs = GetNumOpOutputs;
  c.get_op_output = GetOpOutput;
  c.get_tensor_name = GetTensorName;
  c.get_tensor_index = GetTensorIndex;
  c.get_tensor_type_id = GetTensorTypeId;
  c.get_ranked_tensor_type = GetRankedTensorType;
  c.get_unranked_tensor_type = GetUnrankedTensorType;
  c.get_quantization_type_id = GetQuantizationTypeId;
  c.get_per_tensor_quantization = GetPerTensorQuantization;
  c.get_per_channel_quantization = GetPerChannelQuantization;
  c.get_num_tensor_uses = GetNumTensorUses;
  c.get_tensor_use = GetTensorUse;
  c.get_tensor_defining_op = GetTensorDefiningOp;
  c.get_tensor_weights = GetTensorWeights;
  c.get_weights_buffer_id = GetWeightsBufferId;
  c.get_weights_bytes = GetWeightsBytes;
  c.get_shlo_composite_op_name = GetCompositeName;
  c.get_shlo_composite_op_decomposition_subgraph_index =
      GetCompositeDecomposition;
  c.get_shlo_composite_op_attributes = GetCompositeAttributes;
  c.get_shlo_composite_op_version = GetCompositeVersion;
  c.push_op = PushOp;
  c.get_opaque_options = GetOpaqueOptions;
  c.find_opaque_options_data = FindOpaqueOptionsData;
  c.destroy_options = DestroyOptions;
  c.get_environment_options_value = GetEnvironmentOptionsValue;
#define GRAFT_SET_OPTION_GETTER(field, op, options, member, type) \
  c.field = GetOption<tfl::BuiltinOperator_##op, tfl::options##T, \
                      &tfl::options##T::member, type>;
  LITERT_OPTION_GETTERS_A(GRAFT_SET_OPTION_GETTER)
  LITERT_OPTION_GETTERS_B(GRAFT_SET_OPTION_GETTER)
#undef GRAFT_SET_OPTION_GETTER
  c.get_reshape_new_shape_option =
      GetArrayOption<tfl::BuiltinOperator_RESHAPE, tfl::ReshapeOptionsT,
                     &tfl::ReshapeOptionsT::new_shape>;
  c.get_squeeze_dims_option =
      GetArrayOption<tfl::BuiltinOperator_SQUEEZE, tfl::SqueezeOptionsT,
                     &tfl::SqueezeOptionsT::squeeze_dims>;
  c.get_custom_options = GetCustomOptions;
  c.serialize_model_with_signatures = SerializeModelWithSignatures;
  c.build_tensor = BuildTensorUnsupported;
  c.build_weights = BuildWeightsUnsupported;
  c.build_op = BuildOpUnsupported;
  c.erase_op = BuilderUnsupported;
  c.build_add_op_option = BuilderUnsupported;
  c.build_batch_matmul_op_option = BuilderUnsupported;
  c.get_block_wise_quantization = GetBlockWiseQuantization;
  for (LiteRtBuilderOpOptionFn& f : c.build_op_options) f = BuilderUnsupported;
  c.get_split_v_num_splits_option =
      GetOption<tfl::BuiltinOperator_SPLIT_V, tfl::SplitVOptionsT,
                &tfl::SplitVOptionsT::num_splits, int32_t>;
  return c;
}

}  // namespace

const LiteRtCompilerContext* LiteRtHostCompilerContext() {
  static const LiteRtCompilerContext kContext = MakeContext();
  return &kContext;
}

LiteRtGraph::LiteRtGraph(const Model& model,
                         absl::Span<const SubgraphId> subgraphs)
    : model_(std::make_unique<LiteRtModelT>()) {
  model_->model = &model;
  for (SubgraphId id : subgraphs) {
    BuildSubgraph(model, id, model_->subgraphs.emplace_back());
    model_->op_lists.emplace_back().subgraph = &model_->subgraphs.back();
  }
}

LiteRtGraph::~LiteRtGraph() = default;

LiteRtModel LiteRtGraph::model() { return model_.get(); }
LiteRtSubgraph LiteRtGraph::subgraph(size_t index) {
  return &model_->subgraphs[index];
}
LiteRtOpList LiteRtGraph::op_list(size_t index) {
  LiteRtOpListT& list = model_->op_lists[index];
  list.pushed.clear();
  list.error.clear();
  return &list;
}

absl::StatusOr<std::vector<std::pair<OpId, size_t>>> LiteRtGraph::pushed(
    size_t index) const {
  const LiteRtOpListT& list = model_->op_lists[index];
  if (!list.error.empty()) return absl::InvalidArgumentError(list.error);
  return list.pushed;
}

LiteRtHostOptions::LiteRtHostOptions()
    : options_(std::make_unique<LiteRtOptionsT>()) {}
LiteRtHostOptions::~LiteRtHostOptions() = default;

void LiteRtHostOptions::SetPayload(const std::string& identifier,
                                   std::string payload) {
  options_->opaque.payloads[identifier] = std::move(payload);
}

LiteRtOptions LiteRtHostOptions::options() { return options_.get(); }

LiteRtEnvironmentOptions LiteRtHostOptions::environment() {
  static LiteRtEnvironmentOptionsT env;
  return &env;
}

}  // namespace graft
