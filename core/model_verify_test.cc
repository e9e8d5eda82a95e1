// VerifyModel (semantic checks of the IR) and VerifyFlatbuffer (structure,
// with located errors).

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/model.h"
#include "core/model_io.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Substring checks without gmock (core tests link gtest only).
::testing::AssertionResult Contains(absl::string_view text,
                                    absl::string_view part) {
  if (absl::StrContains(text, part)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not contain \"" << part << "\"";
}

tfl::TensorT MakeTensor(std::string name, std::vector<int32_t> shape,
                        uint32_t buffer = 0) {
  tfl::TensorT t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.type = tfl::TensorType_FLOAT32;
  t.buffer = buffer;
  return t;
}

tfl::OperatorT MakeOp(uint32_t opcode, std::vector<int32_t> inputs,
                      std::vector<int32_t> outputs) {
  tfl::OperatorT op;
  op.opcode_index = opcode;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  return op;
}

// main: a = x + w; b = a * a; out = b + w  (ops 0: ADD, 1: MUL, 2: ADD).
Model ChainModel() {
  Model m;
  m.buffers.emplace_back();
  std::vector<uint8_t> w(4 * sizeof(float), 0);
  m.buffers.push_back(Buffer{Bytes::Own(w), false});
  tfl::OperatorCodeT add, mul, custom;
  add.builtin_code = tfl::BuiltinOperator_ADD;
  mul.builtin_code = tfl::BuiltinOperator_MUL;
  mul.deprecated_builtin_code = static_cast<int8_t>(mul.builtin_code);
  custom.builtin_code = tfl::BuiltinOperator_CUSTOM;
  custom.deprecated_builtin_code = static_cast<int8_t>(custom.builtin_code);
  custom.custom_code = "Opaque";
  m.operator_codes = {add, mul, custom};
  Subgraph sg;
  sg.name = "main";
  sg.tensors.push_back(MakeTensor("x", {2, 2}));
  sg.tensors.push_back(MakeTensor("w", {2, 2}, 1));
  sg.tensors.push_back(MakeTensor("a", {2, 2}));
  sg.tensors.push_back(MakeTensor("b", {2, 2}));
  sg.tensors.push_back(MakeTensor("out", {2, 2}));
  sg.inputs = {0};
  sg.outputs = {4};
  sg.ops.push_back(MakeOp(0, {0, 1}, {2}));
  sg.ops.push_back(MakeOp(1, {2, 2}, {3}));
  sg.ops.push_back(MakeOp(0, {3, 1}, {4}));
  m.subgraphs.push_back(std::move(sg));
  tfl::SignatureDefT sig;
  sig.signature_key = "serving_default";
  auto in = std::make_unique<tfl::TensorMapT>();
  in->name = "x";
  in->tensor_index = 0;
  sig.inputs.push_back(std::move(in));
  m.signature_defs.push_back(std::move(sig));
  tfl::MetadataT meta;
  meta.name = "info";
  meta.buffer = 1;
  m.metadata.push_back(meta);
  return m;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(VerifyModelTest, AcceptsValidModel) {
  EXPECT_TRUE(VerifyModel(ChainModel()).ok()) << VerifyModel(ChainModel());
}

TEST(VerifyModelTest, AcceptsOmittedOptionalInputs) {
  Model m = ChainModel();
  m.subgraphs[0].ops[0].inputs.push_back(kNoTensor);
  EXPECT_TRUE(VerifyModel(m).ok()) << VerifyModel(m);
}

TEST(VerifyModelTest, RejectsTensorIndexOutOfRange) {
  Model m = ChainModel();
  m.subgraphs[0].ops[1].inputs[1] = 99;
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), op 1 (MUL): inputs[1] is tensor 99, out of "
            "range (subgraph has 5 tensors)");
  m = ChainModel();
  m.subgraphs[0].ops[2].outputs[0] = -7;
  EXPECT_TRUE(Contains(Message(VerifyModel(m)),
                       "op 2 (ADD): outputs[0] is tensor -7, out of range"));
}

TEST(VerifyModelTest, RejectsOpcodeIndexOutOfRange) {
  Model m = ChainModel();
  m.subgraphs[0].ops[2].opcode_index = 3;
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), op 2: opcode_index 3 out of range (model "
            "has 3 operator codes)");
}

TEST(VerifyModelTest, RejectsBufferIndexOutOfRange) {
  Model m = ChainModel();
  m.subgraphs[0].tensors[3].buffer = 2;
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), tensor 3 (\"b\"): buffer 2 out of range "
            "(model has 2 buffers)");
}

TEST(VerifyModelTest, RejectsSubgraphIoOutOfRange) {
  Model m = ChainModel();
  m.subgraphs[0].inputs.push_back(5);
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"): inputs[1] is tensor 5, out of range "
            "(subgraph has 5 tensors)");
  m = ChainModel();
  m.subgraphs[0].outputs[0] = -1;
  EXPECT_TRUE(Contains(Message(VerifyModel(m)), "outputs[0] is tensor -1"));
}

TEST(VerifyModelTest, RejectsInputProducedByLaterOp) {
  Model m = ChainModel();
  // op 0 now reads b, which op 1 produces.
  m.subgraphs[0].ops[0].inputs[0] = 3;
  m.subgraphs[0].ops[1].inputs = {0, 0};
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), op 0 (ADD): input 0 (tensor 3 (\"b\")) is "
            "produced by op 1 (MUL), which runs later");
}

TEST(VerifyModelTest, RejectsCycleNamingItsOps) {
  Model m = ChainModel();
  // op 0 reads b (op 1's output) while op 1 reads a (op 0's output).
  m.subgraphs[0].ops[0].inputs[0] = 3;
  std::string msg = Message(VerifyModel(m));
  EXPECT_TRUE(Contains(msg,
                       "ops form a cycle: op 0 (ADD) -> op 1 (MUL) -> "
                       "op 0 (ADD)"));
}

// TFLite runs such models (scratch tensors of vendor ops, constants whose
// buffer a converter left empty); the op reads what the tensor holds.
TEST(VerifyModelTest, AcceptsInputNothingProduces) {
  Model m = ChainModel();
  m.subgraphs[0].ops[1].inputs = {2, 3};  // b: no op writes it before...
  m.subgraphs[0].ops[1].outputs = {2};    // ...nor after.
  m.subgraphs[0].ops[2].inputs = {2, 1};
  EXPECT_TRUE(VerifyModel(m).ok()) << VerifyModel(m);
}

TEST(VerifyModelTest, VariablesAndConstantsNeedNoProducer) {
  Model m = ChainModel();
  m.subgraphs[0].tensors.push_back(MakeTensor("state", {2, 2}));
  m.subgraphs[0].tensors.back().is_variable = true;
  m.subgraphs[0].ops[1].inputs = {2, 5};
  EXPECT_TRUE(VerifyModel(m).ok()) << VerifyModel(m);
}

TEST(VerifyModelTest, RejectsControlFlowSubgraphOutOfRange) {
  Model m = ChainModel();
  tfl::OperatorCodeT while_code;
  while_code.builtin_code = tfl::BuiltinOperator_WHILE;
  while_code.deprecated_builtin_code =
      static_cast<int8_t>(while_code.builtin_code);
  m.operator_codes.push_back(while_code);
  tfl::OperatorT op = MakeOp(3, {4}, {});
  tfl::WhileOptionsT options;
  options.cond_subgraph_index = 0;
  options.body_subgraph_index = 4;
  op.builtin_options.Set(options);
  m.subgraphs[0].ops.push_back(std::move(op));
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), op 3 (WHILE): body_subgraph_index 4 out "
            "of range (model has 1 subgraphs)");
}

TEST(VerifyModelTest, RejectsCompositeDecompositionOutOfRange) {
  Model m = ChainModel();
  tfl::OperatorCodeT code;
  code.builtin_code = tfl::BuiltinOperator_STABLEHLO_COMPOSITE;
  code.deprecated_builtin_code = 127;
  m.operator_codes.push_back(code);
  tfl::OperatorT op = MakeOp(3, {4}, {});
  tfl::StableHLOCompositeOptionsT options;
  options.name = "odml.rms_norm";
  options.decomposition_subgraph_index = -2;
  op.builtin_options_2.Set(options);
  m.subgraphs[0].ops.push_back(std::move(op));
  EXPECT_TRUE(Contains(Message(VerifyModel(m)),
                       "op 3 (STABLEHLO_COMPOSITE): "
                       "decomposition_subgraph_index -2 out of range"));
}

TEST(VerifyModelTest, RejectsConstantOfWrongSize) {
  Model m = ChainModel();
  m.subgraphs[0].tensors[1].shape = {3, 2};
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), tensor 1 (\"w\"): constant data in buffer "
            "1 is 16 bytes, expected 24 for FLOAT32 [3,2]");
}

// Regression: a fuzzed shape overflowed the element count (UBSan).
TEST(VerifyModelTest, RejectsConstantWithOverflowingShape) {
  Model m = ChainModel();
  m.subgraphs[0].tensors[1].shape = {65536, 65536, 65536, 65536};
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), tensor 1 (\"w\"): shape "
            "[65536,65536,65536,65536] has too many elements for its 16 bytes "
            "of constant data");
}

TEST(VerifyModelTest, Int4ConstantsPackTwoPerByte) {
  Model m = ChainModel();
  tfl::TensorT& w = m.subgraphs[0].tensors[1];
  w.type = tfl::TensorType_INT4;
  w.shape = {31};  // 16 bytes, the last one half used.
  EXPECT_TRUE(VerifyModel(m).ok()) << VerifyModel(m);
  w.shape = {33};
  EXPECT_TRUE(Contains(Message(VerifyModel(m)), "expected 17 for INT4 [33]"));
}

TEST(VerifyModelTest, StringsAndDynamicShapesAreNotSizeChecked) {
  Model m = ChainModel();
  m.subgraphs[0].tensors[1].type = tfl::TensorType_STRING;
  EXPECT_TRUE(VerifyModel(m).ok()) << VerifyModel(m);
}

TEST(VerifyModelTest, RejectsBadShapes) {
  Model m = ChainModel();
  m.subgraphs[0].tensors[2].shape = {2, -3};
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), tensor 2 (\"a\"): shape [2,-3] has invalid "
            "dimension -3");
  m = ChainModel();
  m.subgraphs[0].tensors[0].shape_signature = {-1, 3};
  EXPECT_TRUE(Contains(Message(VerifyModel(m)),
                       "tensor 0 (\"x\"): shape_signature [-1,3] does not "
                       "match shape [2,2] in dimension 1"));
  m = ChainModel();
  m.subgraphs[0].tensors[0].shape_signature = {-1};
  EXPECT_TRUE(Contains(Message(VerifyModel(m)), "differ in rank"));
}

TEST(VerifyModelTest, RejectsInconsistentQuantization) {
  Model m = ChainModel();
  auto& q = m.subgraphs[0].tensors[1].quantization;
  q = std::make_unique<tfl::QuantizationParametersT>();
  q->scale = {0.5f, 0.25f};
  q->zero_point = {0, 0};
  q->quantized_dimension = 1;
  EXPECT_TRUE(VerifyModel(m).ok()) << VerifyModel(m);
  q->zero_point = {0};
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), tensor 1 (\"w\"): quantization has 2 "
            "scales but 1 zero points");
  q->zero_point = {0, 0};
  q->quantized_dimension = 2;
  EXPECT_EQ(Message(VerifyModel(m)),
            "subgraph 0 (\"main\"), tensor 1 (\"w\"): 2 per-channel scales do "
            "not match dimension 2 of shape [2,2]");
}

TEST(VerifyModelTest, RejectsSignatureOutOfRange) {
  Model m = ChainModel();
  m.signature_defs[0].inputs[0]->tensor_index = 9;
  EXPECT_EQ(Message(VerifyModel(m)),
            "signature_defs[0] (\"serving_default\"): inputs[0] (\"x\") is "
            "tensor 9, out of range (subgraph 0 has 5 tensors)");
  m = ChainModel();
  m.signature_defs[0].subgraph_index = 1;
  EXPECT_TRUE(Contains(Message(VerifyModel(m)),
                       "subgraph_index 1 out of range (model has 1 "
                       "subgraphs)"));
}

TEST(VerifyModelTest, RejectsMetadataBufferOutOfRange) {
  Model m = ChainModel();
  m.metadata[0].buffer = 8;
  EXPECT_EQ(Message(VerifyModel(m)),
            "metadata[0] (\"info\"): buffer 8 out of range (model has 2 "
            "buffers)");
}

// VerifyFlatbuffer.

std::vector<uint8_t> Image(const Model& m) {
  auto image = SerializeModel(m);
  EXPECT_TRUE(image.ok()) << image.status();
  return image.ok() ? *image : std::vector<uint8_t>();
}

size_t OffsetOf(const std::vector<uint8_t>& image, const void* p) {
  return static_cast<size_t>(static_cast<const uint8_t*>(p) - image.data());
}

void Put32(std::vector<uint8_t>& image, size_t pos, uint32_t v) {
  std::memcpy(image.data() + pos, &v, sizeof(v));
}

std::string FlatbufferError(const std::vector<uint8_t>& image) {
  return Message(VerifyFlatbuffer(image));
}

TEST(VerifyFlatbufferTest, AcceptsSerializedModel) {
  EXPECT_TRUE(VerifyFlatbuffer(Image(ChainModel())).ok());
}

TEST(VerifyFlatbufferTest, RejectsShortAndForeignFiles) {
  EXPECT_EQ(FlatbufferError({}), "not a .tflite model: the file is empty");
  EXPECT_TRUE(Contains(FlatbufferError({1, 2, 3}), "only 3 bytes"));
  std::vector<uint8_t> png = {0x89, 'P',  'N', 'G', 0x0d, 0x0a,
                              0x1a, 0x0a, 0,   0,   0,    0};
  EXPECT_EQ(FlatbufferError(png),
            "not a .tflite model: file identifier is '\\r\\n\\x1a\\n', "
            "expected 'TFL3'");
}

TEST(VerifyFlatbufferTest, LocalizesVectorOutOfBounds) {
  std::vector<uint8_t> image = Image(ChainModel());
  const auto* op =
      tfl::GetModel(image.data())->subgraphs()->Get(0)->operators()->Get(2);
  size_t table = OffsetOf(image, op);
  Put32(image, OffsetOf(image, op->inputs()), 0x10000000);
  std::string msg = FlatbufferError(image);
  EXPECT_TRUE(Contains(
      msg,
      absl::StrCat("subgraphs[0].operators[2] (table at 0x", absl::Hex(table),
                   "): field 'inputs': vector out of "
                   "bounds")));
}

TEST(VerifyFlatbufferTest, LocalizesVtableOutOfBounds) {
  std::vector<uint8_t> image = Image(ChainModel());
  const auto* tensor =
      tfl::GetModel(image.data())->subgraphs()->Get(0)->tensors()->Get(3);
  size_t table = OffsetOf(image, tensor);
  Put32(image, table, 0x7ffffff0);
  EXPECT_TRUE(
      Contains(FlatbufferError(image),
               absl::StrCat("subgraphs[0].tensors[3] (table at 0x",
                            absl::Hex(table), "): vtable out of bounds")));
}

TEST(VerifyFlatbufferTest, LocalizesUnterminatedString) {
  std::vector<uint8_t> image = Image(ChainModel());
  const auto* code = tfl::GetModel(image.data())->operator_codes()->Get(2);
  const flatbuffers::String* s = code->custom_code();
  image[OffsetOf(image, s->c_str()) + s->size()] = 'x';
  EXPECT_TRUE(
      Contains(FlatbufferError(image), "operator_codes[2] (table at 0x"));
  EXPECT_TRUE(
      Contains(FlatbufferError(image), "field 'custom_code': string at 0x"));
  EXPECT_TRUE(Contains(FlatbufferError(image), "not terminated"));
}

TEST(VerifyFlatbufferTest, LocalizesBufferTable) {
  std::vector<uint8_t> image = Image(ChainModel());
  const auto* buffer = tfl::GetModel(image.data())->buffers()->Get(1);
  Put32(image, OffsetOf(image, buffer->data()), 0xfffffff0);
  EXPECT_TRUE(Contains(FlatbufferError(image), "buffers[1] (table at 0x"));
  EXPECT_TRUE(
      Contains(FlatbufferError(image), "field 'data': vector out of bounds"));
}

TEST(VerifyFlatbufferTest, LocalizesTableOffsetInVector) {
  std::vector<uint8_t> image = Image(ChainModel());
  const auto* sigs = tfl::GetModel(image.data())->signature_defs();
  // The first element of the vector: an offset to the table.
  Put32(image, OffsetOf(image, sigs) + 4, 0x40000000);
  EXPECT_TRUE(
      Contains(FlatbufferError(image), "signature_defs[0] (table at 0x"));
  EXPECT_TRUE(Contains(FlatbufferError(image), "table out of bounds"));
}

TEST(VerifyFlatbufferTest, LocalizesRootOffset) {
  std::vector<uint8_t> image = Image(ChainModel());
  Put32(image, 0, 0x00ffffff);
  EXPECT_TRUE(Contains(FlatbufferError(image),
                       "root table offset 0xffffff lies outside the file"));
}

TEST(VerifyFlatbufferTest, RejectsExternalBufferPastEnd) {
  Model m = ChainModel();
  m.buffers[1].external = true;
  std::vector<uint8_t> image = Image(m);
  ASSERT_TRUE(VerifyFlatbuffer(image).ok());
  image.resize(image.size() - 1);
  std::string msg = FlatbufferError(image);
  EXPECT_TRUE(Contains(msg, "buffers[1]: data at offset "));
  EXPECT_TRUE(Contains(msg, "size 16 extends past the end of the file"));
}

}  // namespace
}  // namespace graft
