// Malformed models: every one must be refused with a message that says what
// is wrong and where, and none may crash the loader (this suite also runs
// under ASan/UBSan).
//
// Sources: the corpus' own broken files, and cases generated from a small
// valid model: truncations, a wrong identifier, corrupted offsets and
// vtables, seeded random byte flips, and semantic errors (indices out of
// range, a cycle, an op reading a later op's output) written with
// SerializeModel, which does not validate indices.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/file_util.h"
#include "core/model.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

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

tfl::OperatorCodeT Code(tfl::BuiltinOperator builtin) {
  tfl::OperatorCodeT code;
  code.builtin_code = builtin;
  code.deprecated_builtin_code =
      static_cast<int8_t>(std::min(static_cast<int>(builtin), 127));
  return code;
}

// main (subgraph 0):
//   op 0 ADD(x, w) -> a;  op 1 MUL(a, a) -> b;  op 2 ADD(b, w) -> out;
//   op 3 WHILE(out) -> loop, with cond = body = subgraph 1
// cond (subgraph 1): one tensor passed through, no ops.
Model ValidModel() {
  Model m;
  m.description = "malformed_test";
  m.buffers.emplace_back();
  std::vector<uint8_t> w(4 * sizeof(float), 0);
  m.buffers.push_back(Buffer{Bytes::Own(w), false});
  m.buffers.push_back(Buffer{Bytes::Copy("meta"), false});
  m.operator_codes = {Code(tfl::BuiltinOperator_ADD),
                      Code(tfl::BuiltinOperator_MUL),
                      Code(tfl::BuiltinOperator_WHILE)};
  Subgraph sg;
  sg.name = "main";
  sg.tensors.push_back(MakeTensor("x", {2, 2}));
  sg.tensors.push_back(MakeTensor("w", {2, 2}, 1));
  sg.tensors.push_back(MakeTensor("a", {2, 2}));
  sg.tensors.push_back(MakeTensor("b", {2, 2}));
  sg.tensors.push_back(MakeTensor("out", {2, 2}));
  sg.tensors.push_back(MakeTensor("loop", {2, 2}));
  sg.inputs = {0};
  sg.outputs = {5};
  sg.ops.push_back(MakeOp(0, {0, 1}, {2}));
  sg.ops.push_back(MakeOp(1, {2, 2}, {3}));
  sg.ops.push_back(MakeOp(0, {3, 1}, {4}));
  tfl::OperatorT loop = MakeOp(2, {4}, {5});
  tfl::WhileOptionsT options;
  options.cond_subgraph_index = 1;
  options.body_subgraph_index = 1;
  loop.builtin_options.Set(options);
  sg.ops.push_back(std::move(loop));
  m.subgraphs.push_back(std::move(sg));
  Subgraph cond;
  cond.name = "cond";
  cond.tensors.push_back(MakeTensor("v", {2, 2}));
  cond.inputs = {0};
  cond.outputs = {0};
  m.subgraphs.push_back(std::move(cond));
  tfl::SignatureDefT sig;
  sig.signature_key = "serving_default";
  auto in = std::make_unique<tfl::TensorMapT>();
  in->name = "x";
  in->tensor_index = 0;
  sig.inputs.push_back(std::move(in));
  m.signature_defs.push_back(std::move(sig));
  tfl::MetadataT meta;
  meta.name = "info";
  meta.buffer = 2;
  m.metadata.push_back(meta);
  return m;
}

std::vector<uint8_t> Serialize(const Model& m) {
  auto image = SerializeModel(m);
  EXPECT_TRUE(image.ok()) << image.status();
  return image.ok() ? *image : std::vector<uint8_t>();
}

absl::Status Load(const std::vector<uint8_t>& image) {
  return LoadModelFromBytes(Bytes::Copy(absl::MakeConstSpan(image)),
                            "case.tflite")
      .status();
}

// The message of loading `image`, which must fail with InvalidArgument.
std::string LoadError(const std::vector<uint8_t>& image) {
  absl::Status s = Load(image);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  return std::string(s.message());
}

std::string CorpusFile(const std::string& relative) {
  return (std::filesystem::path(testing::ThirdPartyModelsDir()) / relative)
      .string();
}

std::string Hex(size_t offset) { return absl::StrFormat("0x%x", offset); }

size_t OffsetOf(const std::vector<uint8_t>& image, const void* p) {
  return static_cast<size_t>(static_cast<const uint8_t*>(p) - image.data());
}

void Put32(std::vector<uint8_t>& image, size_t pos, uint32_t v) {
  std::memcpy(image.data() + pos, &v, sizeof(v));
}

TEST(MalformedTest, ValidModelLoads) {
  absl::Status s = Load(Serialize(ValidModel()));
  EXPECT_TRUE(s.ok()) << s;
}

// The corpus' own broken files.

TEST(MalformedTest, CorpusBrokenModel) {
  GRAFT_SKIP_IF_NO_CORPUS();
  std::string path = CorpusFile("LiteRT/tflite/testdata/test_model_broken.bin");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  auto r = LoadModel(path);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(),
                       absl::StrCat(path,
                                    ": not a .tflite model: file "
                                    "identifier is '\\x00\\x00\\x0e\\x00', "
                                    "expected 'TFL3'")));
}

TEST(MalformedTest, CorpusInvalidModel) {
  GRAFT_SKIP_IF_NO_CORPUS();
  std::string path =
      CorpusFile("LiteRT/tflite/java/src/testdata/invalid_model.bin");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  auto r = LoadModel(path);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(),
                       absl::StrCat(path,
                                    ": not a .tflite model: file "
                                    "identifier is ' is ', expected "
                                    "'TFL3'")));
}

// Bytes.

TEST(MalformedTest, EmptyFile) {
  testing::TempDir dir;
  std::string path = dir.Join("empty.tflite");
  ASSERT_TRUE(WriteFileAtomically(path, {}).ok());
  auto r = LoadModel(path);
  EXPECT_EQ(r.status().message(),
            absl::StrCat(path, ": not a .tflite model: the file is empty"));
}

TEST(MalformedTest, WrongIdentifier) {
  std::vector<uint8_t> image = Serialize(ValidModel());
  std::memcpy(image.data() + 4, "TFL2", 4);
  EXPECT_EQ(LoadError(image),
            "case.tflite: not a .tflite model: file identifier is 'TFL2', "
            "expected 'TFL3'");
}

TEST(MalformedTest, EveryTruncationFails) {
  std::vector<uint8_t> image = Serialize(ValidModel());
  for (size_t n = 0; n < image.size(); ++n) {
    std::vector<uint8_t> prefix(image.begin(), image.begin() + n);
    std::string msg = LoadError(prefix);
    if (n < 8) {
      EXPECT_TRUE(Contains(msg, "not a .tflite model")) << "length " << n;
    } else {
      EXPECT_TRUE(Contains(msg, "case.tflite: invalid flatbuffer: "))
          << "length " << n;
    }
  }
}

// Truncated real models must not crash either; most of them fail.
TEST(MalformedTest, CorpusModelTruncationsDoNotCrash) {
  GRAFT_SKIP_IF_NO_CORPUS();
  std::string path = CorpusFile("LiteRT/tflite/testdata/add.bin");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  auto contents = ReadFile(path);
  ASSERT_TRUE(contents.ok());
  std::vector<uint8_t> image(contents->begin(), contents->end());
  int failed = 0;
  for (size_t n = 0; n < image.size(); ++n) {
    std::vector<uint8_t> prefix(image.begin(), image.begin() + n);
    if (!Load(prefix).ok()) ++failed;
  }
  EXPECT_GT(failed, static_cast<int>(image.size()) / 2);
}

TEST(MalformedTest, RootOffsetOutOfBounds) {
  std::vector<uint8_t> image = Serialize(ValidModel());
  Put32(image, 0, 0x7ffffff0);
  EXPECT_EQ(LoadError(image),
            absl::StrCat("case.tflite: invalid flatbuffer: root table offset "
                         "0x7ffffff0 lies outside the file (",
                         image.size(), " bytes)"));
}

TEST(MalformedTest, RootVtableSizeCorrupted) {
  std::vector<uint8_t> image = Serialize(ValidModel());
  const tfl::Model* root = tfl::GetModel(image.data());
  size_t table = OffsetOf(image, root);
  int32_t soffset;
  std::memcpy(&soffset, image.data() + table, 4);
  size_t vtable = table - soffset;
  image[vtable] = 0xff;  // Odd vtable size.
  image[vtable + 1] = 0x7f;
  EXPECT_TRUE(
      Contains(LoadError(image),
               absl::StrCat("invalid flatbuffer: model (table at ", Hex(table),
                            "): vtable at ", Hex(vtable), " has size 32767")));
}

// Each table's vtable offset, corrupted in turn, is reported at that table.
TEST(MalformedTest, CorruptedVtableOffsetNamesTheTable) {
  const std::vector<uint8_t> image = Serialize(ValidModel());
  const tfl::Model* root = tfl::GetModel(image.data());
  std::vector<std::pair<std::string, const void*>> tables;
  for (uint32_t i = 0; i < root->operator_codes()->size(); ++i) {
    tables.push_back({absl::StrCat("operator_codes[", i, "]"),
                      root->operator_codes()->Get(i)});
  }
  for (uint32_t s = 0; s < root->subgraphs()->size(); ++s) {
    const tfl::SubGraph* sg = root->subgraphs()->Get(s);
    tables.push_back({absl::StrCat("subgraphs[", s, "]"), sg});
    for (uint32_t t = 0; t < sg->tensors()->size(); ++t) {
      tables.push_back({absl::StrCat("subgraphs[", s, "].tensors[", t, "]"),
                        sg->tensors()->Get(t)});
    }
    for (uint32_t k = 0; k < sg->operators()->size(); ++k) {
      tables.push_back({absl::StrCat("subgraphs[", s, "].operators[", k, "]"),
                        sg->operators()->Get(k)});
    }
  }
  for (uint32_t i = 0; i < root->buffers()->size(); ++i) {
    tables.push_back(
        {absl::StrCat("buffers[", i, "]"), root->buffers()->Get(i)});
  }
  tables.push_back({"metadata[0]", root->metadata()->Get(0)});
  tables.push_back({"signature_defs[0]", root->signature_defs()->Get(0)});
  tables.push_back({"signature_defs[0].inputs[0]",
                    root->signature_defs()->Get(0)->inputs()->Get(0)});
  tables.push_back(
      {"subgraphs[0].operators[3].builtin_options",
       root->subgraphs()->Get(0)->operators()->Get(3)->builtin_options()});
  for (const auto& [path, table] : tables) {
    std::vector<uint8_t> broken = image;
    size_t pos = OffsetOf(image, table);
    Put32(broken, pos, 0x7fff0000);
    EXPECT_TRUE(
        Contains(LoadError(broken),
                 absl::StrCat("invalid flatbuffer: ", path, " (table at ",
                              Hex(pos), "): vtable out of bounds")));
  }
}

TEST(MalformedTest, VectorLengthOutOfBounds) {
  std::vector<uint8_t> image = Serialize(ValidModel());
  const tfl::Tensor* tensor =
      tfl::GetModel(image.data())->subgraphs()->Get(1)->tensors()->Get(0);
  Put32(image, OffsetOf(image, tensor->shape()), 0x3fffffff);
  EXPECT_TRUE(Contains(LoadError(image),
                       absl::StrCat("subgraphs[1].tensors[0] (table at ",
                                    Hex(OffsetOf(image, tensor)),
                                    "): field 'shape': vector out of bounds")));
}

TEST(MalformedTest, StringNotTerminated) {
  std::vector<uint8_t> image = Serialize(ValidModel());
  const tfl::Tensor* tensor =
      tfl::GetModel(image.data())->subgraphs()->Get(0)->tensors()->Get(4);
  const flatbuffers::String* name = tensor->name();
  image[OffsetOf(image, name->c_str()) + name->size()] = '!';
  EXPECT_TRUE(Contains(LoadError(image),
                       absl::StrCat("subgraphs[0].tensors[4] (table at ",
                                    Hex(OffsetOf(image, tensor)),
                                    "): field 'name': string at ")));
  EXPECT_TRUE(Contains(LoadError(image), "not terminated"));
}

// Regression (found by fuzzing under UBSan): flatbuffers' verifier accepts
// a [long] vector whose elements are not 8-byte aligned, and reading them
// is undefined behaviour.
TEST(MalformedTest, MisalignedLongVector) {
  Model m = ValidModel();
  auto q = std::make_unique<tfl::QuantizationParametersT>();
  q->scale = {0.5f, 0.5f};
  q->zero_point = {1, 7};
  q->quantized_dimension = 0;
  m.subgraphs[0].tensors[2].quantization = std::move(q);
  std::vector<uint8_t> image = Serialize(m);
  ASSERT_TRUE(Load(image).ok());
  const tfl::QuantizationParameters* qp = tfl::GetModel(image.data())
                                              ->subgraphs()
                                              ->Get(0)
                                              ->tensors()
                                              ->Get(2)
                                              ->quantization();
  // Point zero_point 4 bytes further: its "length" is then the low word of
  // element 0 (1), and its element starts 4 bytes off 8-byte alignment.
  size_t vec = OffsetOf(image, qp->zero_point());
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(qp);
  size_t slot =
      OffsetOf(image, qp) +
      table->GetOptionalFieldOffset(tfl::QuantizationParameters::VT_ZERO_POINT);
  Put32(image, slot, static_cast<uint32_t>(vec + 4 - slot));
  EXPECT_TRUE(
      Contains(LoadError(image),
               absl::StrCat("subgraphs[0].tensors[2].quantization (table at ",
                            Hex(OffsetOf(image, qp)),
                            "): field 'zero_point': vector "
                            "at ",
                            Hex(vec + 4), " has misaligned 8-byte elements")));
}

// Seeded random corruption: any error is fine, a crash (or a sanitizer
// report) is not. The seed is printed; GRAFT_FUZZ_SEED replays one.
TEST(MalformedTest, RandomByteFlipsNeverCrash) {
  uint64_t seed = 20240611;
  if (const char* env = std::getenv("GRAFT_FUZZ_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  }
  std::printf("RandomByteFlipsNeverCrash seed: %llu\n",
              static_cast<unsigned long long>(seed));
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::vector<std::vector<uint8_t>> originals = {Serialize(ValidModel())};
  std::string add = CorpusFile("LiteRT/tflite/testdata/add.bin");
  if (auto contents = ReadFile(add); contents.ok()) {
    originals.emplace_back(contents->begin(), contents->end());
  }
  std::mt19937_64 rng(seed);
  int rejected = 0, accepted = 0;
  for (const std::vector<uint8_t>& original : originals) {
    for (int iter = 0; iter < 10000; ++iter) {
      std::vector<uint8_t> image = original;
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        size_t pos = rng() % image.size();
        image[pos] = (rng() % 2) ? static_cast<uint8_t>(rng())
                                 : image[pos] ^ (1u << (rng() % 8));
      }
      absl::StatusOr<Model> m =
          LoadModelFromBytes(Bytes::Copy(absl::MakeConstSpan(image)), "fuzz");
      if (!m.ok()) {
        ++rejected;
        continue;
      }
      ++accepted;
      // What loads must also survive the writer and load again. (Not
      // compared: a flip can make a float NaN, which never equals itself.)
      auto again = SerializeModel(*m);
      ASSERT_TRUE(again.ok()) << again.status();
      auto reloaded =
          LoadModelFromBytes(Bytes::Copy(absl::MakeConstSpan(*again)), "re");
      ASSERT_TRUE(reloaded.ok()) << reloaded.status();
    }
  }
  std::printf("rejected %d, accepted %d\n", rejected, accepted);
  EXPECT_GT(rejected, 0);
}

// External data.

TEST(MalformedTest, ExternalBufferPastEndOfFile) {
  Model m = ValidModel();
  m.buffers[1].external = true;
  std::vector<uint8_t> image = Serialize(m);
  uint64_t offset = tfl::GetModel(image.data())->buffers()->Get(1)->offset();
  image.resize(image.size() - 4);
  EXPECT_EQ(LoadError(image),
            absl::StrCat("case.tflite: buffers[1]: data at offset ", offset,
                         " (", Hex(offset),
                         "), size 16 extends past the end "
                         "of the file (",
                         image.size(), " bytes)"));
}

TEST(MalformedTest, ExternalBufferOffsetOverflows) {
  Model m = ValidModel();
  m.buffers[1].external = true;
  std::vector<uint8_t> image = Serialize(m);
  const tfl::Buffer* buffer = tfl::GetModel(image.data())->buffers()->Get(1);
  // offset + size wraps around 2^64.
  auto* table = reinterpret_cast<flatbuffers::Table*>(image.data() +
                                                      OffsetOf(image, buffer));
  ASSERT_TRUE(
      table->SetField<uint64_t>(tfl::Buffer::VT_OFFSET, ~uint64_t{0} - 4, 0));
  EXPECT_TRUE(Contains(LoadError(image),
                       "buffers[1]: data at offset 18446744073709551611"));
}

TEST(MalformedTest, LargeCustomOptionsPastEndOfFile) {
  Model m = ValidModel();
  m.subgraphs[0].ops[1].custom_options.assign(5000, 1);
  SaveOptions options;
  options.max_flatbuffer_size = 6000;  // Pushes the options outside.
  auto image = SerializeModel(m, options);
  ASSERT_TRUE(image.ok());
  image->resize(image->size() - 100);
  EXPECT_TRUE(Contains(LoadError(*image),
                       "case.tflite: subgraphs[0].operators[1] (large custom "
                       "options): data at offset"));
}

// Semantics: verifier-valid flatbuffers that make no sense.

TEST(MalformedTest, TensorIndexOutOfRangeInOp) {
  Model m = ValidModel();
  m.subgraphs[0].ops[1].inputs[1] = 6;
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 0 (\"main\"), op 1 (MUL): inputs[1] is "
            "tensor 6, out of range (subgraph has 6 tensors)");
}

TEST(MalformedTest, BufferIndexOutOfRange) {
  Model m = ValidModel();
  m.subgraphs[0].tensors[1].buffer = 3;
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 0 (\"main\"), tensor 1 (\"w\"): buffer 3 "
            "out of range (model has 3 buffers)");
}

TEST(MalformedTest, OpcodeIndexOutOfRange) {
  Model m = ValidModel();
  m.subgraphs[0].ops[2].opcode_index = 3;
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 0 (\"main\"), op 2: opcode_index 3 out of "
            "range (model has 3 operator codes)");
}

TEST(MalformedTest, SubgraphInputOutOfRange) {
  Model m = ValidModel();
  m.subgraphs[1].inputs = {1};
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 1 (\"cond\"): inputs[0] is tensor 1, out "
            "of range (subgraph has 1 tensors)");
}

TEST(MalformedTest, ControlFlowSubgraphOutOfRange) {
  Model m = ValidModel();
  m.subgraphs[0].ops[3].builtin_options.AsWhileOptions()->cond_subgraph_index =
      2;
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 0 (\"main\"), op 3 (WHILE): "
            "cond_subgraph_index 2 out of range (model has 2 subgraphs)");
}

TEST(MalformedTest, SignatureTensorOutOfRange) {
  Model m = ValidModel();
  m.signature_defs[0].inputs[0]->tensor_index = 60;
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: signature_defs[0] (\"serving_default\"): inputs[0] "
            "(\"x\") is tensor 60, out of range (subgraph 0 has 6 tensors)");
}

TEST(MalformedTest, ConstantDataSizeMismatch) {
  Model m = ValidModel();
  m.subgraphs[0].tensors[1].shape = {2, 3};
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 0 (\"main\"), tensor 1 (\"w\"): constant "
            "data in buffer 1 is 16 bytes, expected 24 for FLOAT32 [2,3]");
}

TEST(MalformedTest, Cycle) {
  Model m = ValidModel();
  // op 0 reads b (op 1's output); op 1 reads a (op 0's output).
  m.subgraphs[0].ops[0].inputs = {3, 1};
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 0 (\"main\"): ops form a cycle: op 0 (ADD) "
            "-> op 1 (MUL) -> op 0 (ADD) (tensor 3 (\"b\") feeds op 0 but "
            "depends on its output)");
}

TEST(MalformedTest, InputProducedLater) {
  Model m = ValidModel();
  // op 1 reads out, which op 2 writes; op 2 no longer reads op 1's output,
  // so this is an ordering error, not a cycle.
  m.subgraphs[0].ops[2].inputs = {0, 1};
  m.subgraphs[0].ops[1].inputs = {2, 4};
  EXPECT_EQ(LoadError(Serialize(m)),
            "case.tflite: subgraph 0 (\"main\"), op 1 (MUL): input 1 (tensor "
            "4 (\"out\")) is produced by op 2 (ADD), which runs later");
}

}  // namespace
}  // namespace graft
