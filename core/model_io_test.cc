#include "core/model_io.h"

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/file_util.h"
#include "core/model.h"
#include "core/test_support.h"
#include "flatbuffers/flatbuffers.h"
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
::testing::AssertionResult HasPrefix(absl::string_view text,
                                     absl::string_view prefix) {
  if (absl::StartsWith(text, prefix)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not start with \"" << prefix << "\"";
}

Bytes Floats(size_t n, float start) {
  std::vector<uint8_t> bytes(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    float v = start + static_cast<float>(i);
    std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof(float));
  }
  return Bytes::Own(std::move(bytes));
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

// y = relu(x + w); z = MyCustom(y): a builtin op with options, a custom op,
// a constant, quantization, a dynamic dimension, a signature and metadata.
// `weight_sizes` adds one more FLOAT32 constant (added to y via a chain of
// ADDs) per entry, to exercise the placement of buffers.
Model SmallModel(std::vector<size_t> weight_sizes = {}) {
  Model m;
  m.description = "model_io_test";
  m.buffers.emplace_back();                             // 0: the sentinel.
  m.buffers.push_back(Buffer{Floats(4, 1.0f), false});  // 1: w
  m.buffers.push_back(Buffer{Bytes::Copy("1.14.0"), false});  // 2: metadata

  tfl::OperatorCodeT add;
  add.builtin_code = tfl::BuiltinOperator_ADD;
  m.operator_codes.push_back(add);
  tfl::OperatorCodeT custom;
  custom.builtin_code = tfl::BuiltinOperator_CUSTOM;
  custom.deprecated_builtin_code =
      static_cast<int8_t>(tfl::BuiltinOperator_CUSTOM);
  custom.custom_code = "MyCustom";
  custom.version = 2;
  m.operator_codes.push_back(custom);

  Subgraph sg;
  sg.name = "main";
  sg.tensors.push_back(MakeTensor("x", {1, 2, 2}));
  sg.tensors[0].shape_signature = {-1, 2, 2};
  sg.tensors.push_back(MakeTensor("w", {2, 2}, 1));
  sg.tensors.push_back(MakeTensor("y", {1, 2, 2}));
  sg.tensors.push_back(MakeTensor("z", {1, 2, 2}));
  sg.tensors[3].type = tfl::TensorType_INT8;
  sg.tensors[3].quantization = std::make_unique<tfl::QuantizationParametersT>();
  sg.tensors[3].quantization->scale = {0.5f};
  sg.tensors[3].quantization->zero_point = {-3};
  sg.inputs = {0};
  sg.outputs = {3};

  tfl::OperatorT add_op = MakeOp(0, {0, 1}, {2});
  tfl::AddOptionsT add_options;
  add_options.fused_activation_function = tfl::ActivationFunctionType_RELU;
  add_op.builtin_options.Set(add_options);
  sg.ops.push_back(std::move(add_op));

  int32_t last = 2;
  for (size_t n : weight_sizes) {
    m.buffers.push_back(Buffer{Floats(n, 0.5f), false});
    auto w = static_cast<int32_t>(sg.tensors.size());
    sg.tensors.push_back(
        MakeTensor(absl::StrCat("w", n), {static_cast<int32_t>(n)},
                   static_cast<uint32_t>(m.buffers.size() - 1)));
    sg.tensors.push_back(MakeTensor(absl::StrCat("sum", n), {1, 2, 2}));
    sg.ops.push_back(MakeOp(0, {last, w}, {w + 1}));
    last = w + 1;
  }

  tfl::OperatorT custom_op = MakeOp(1, {last}, {3});
  custom_op.custom_options = {1, 2, 3, 4, 5};
  sg.ops.push_back(std::move(custom_op));
  m.subgraphs.push_back(std::move(sg));

  tfl::MetadataT meta;
  meta.name = "min_runtime_version";
  meta.buffer = 2;
  m.metadata.push_back(meta);

  tfl::SignatureDefT sig;
  sig.signature_key = "serving_default";
  auto in = std::make_unique<tfl::TensorMapT>();
  in->name = "x";
  in->tensor_index = 0;
  sig.inputs.push_back(std::move(in));
  auto out = std::make_unique<tfl::TensorMapT>();
  out->name = "z";
  out->tensor_index = 3;
  sig.outputs.push_back(std::move(out));
  m.signature_defs.push_back(std::move(sig));
  return m;
}

Bytes ToBytes(std::vector<uint8_t> image) {
  return Bytes::Own(std::move(image));
}

bool PointsInto(const Bytes& data, const MappedFile& file) {
  return data.data() >= file.data() &&
         data.data() + data.size() <= file.data() + file.size();
}

std::set<std::string> ListDir(const std::string& dir) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.insert(name);
    }
    closedir(d);
  }
  return names;
}

// Where buffer `i`'s bytes lie in a serialized image, read back through the
// flatbuffer.
uint64_t BufferOffset(const std::vector<uint8_t>& image, size_t i) {
  return tfl::GetModel(image.data())->buffers()->Get(i)->offset();
}

TEST(ModelIoTest, HandBuiltModelVerifies) {
  EXPECT_TRUE(VerifyModel(SmallModel()).ok()) << VerifyModel(SmallModel());
}

TEST(ModelIoTest, RoundTripsThroughBytes) {
  Model m = SmallModel();
  auto image = SerializeModel(m);
  ASSERT_TRUE(image.ok()) << image.status();
  auto loaded = LoadModelFromBytes(ToBytes(*image), "mem");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(CompareModels(m, *loaded).ok()) << CompareModels(m, *loaded);
  EXPECT_EQ(loaded->file, nullptr);
  EXPECT_FALSE(loaded->buffers[1].external);
}

TEST(ModelIoTest, RoundTripsThroughFile) {
  testing::TempDir dir;
  std::string path = dir.Join("small.tflite");
  Model m = SmallModel({100, 7});
  ASSERT_TRUE(SaveModel(m, path).ok());
  auto loaded = LoadModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(CompareModels(m, *loaded).ok()) << CompareModels(m, *loaded);
  ASSERT_NE(loaded->file, nullptr);
  EXPECT_EQ(loaded->file->path(), path);
  // Saving the loaded model again gives the same bytes.
  std::string again = dir.Join("again.tflite");
  ASSERT_TRUE(SaveModel(*loaded, again).ok());
  EXPECT_EQ(*ReadFile(path), *ReadFile(again));
}

TEST(ModelIoTest, SerializationIsDeterministic) {
  auto a = SerializeModel(SmallModel({64, 3}));
  auto b = SerializeModel(SmallModel({64, 3}));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  // And a fixed point: loading and re-serializing changes nothing.
  auto loaded = LoadModelFromBytes(ToBytes(*a), "mem");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  auto c = SerializeModel(*loaded);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*a, *c);
}

TEST(ModelIoTest, SaveModelWritesSerializeModelBytes) {
  testing::TempDir dir;
  Model m = SmallModel({300, 20});
  m.buffers[1].external = true;
  SaveOptions options;
  options.max_flatbuffer_size = 1500;
  auto image = SerializeModel(m, options);
  ASSERT_TRUE(image.ok()) << image.status();
  std::string path = dir.Join("m.tflite");
  ASSERT_TRUE(SaveModel(m, path, options).ok());
  auto file = ReadFile(path);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(*file, std::string(image->begin(), image->end()));
}

TEST(ModelIoTest, LoadedWeightsAreNotCopied) {
  testing::TempDir dir;
  std::string path = dir.Join("m.tflite");
  ASSERT_TRUE(SaveModel(SmallModel({1000}), path).ok());
  auto loaded = LoadModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_NE(loaded->file, nullptr);
  int checked = 0;
  for (const Buffer& b : loaded->buffers) {
    if (b.data.empty()) continue;
    EXPECT_TRUE(PointsInto(b.data, *loaded->file));
    // Inline buffers are 16-byte aligned in the file (and so in memory).
    EXPECT_EQ((b.data.data() - loaded->file->data()) % 16, 0);
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(ModelIoTest, BuffersMarkedExternalAreStoredAfterTheFlatbuffer) {
  Model m = SmallModel();
  m.buffers[1].external = true;
  auto image = SerializeModel(m);
  ASSERT_TRUE(image.ok()) << image.status();
  uint64_t offset = BufferOffset(*image, 1);
  EXPECT_GT(offset, 1u);
  EXPECT_EQ(offset % kExternalBufferAlignment, 0u);
  EXPECT_EQ(offset + 16, image->size());
  EXPECT_EQ(BufferOffset(*image, 2), 0u);  // Still inline.
  auto loaded = LoadModelFromBytes(ToBytes(*image), "mem");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->buffers[1].external);
  EXPECT_FALSE(loaded->buffers[2].external);
  EXPECT_TRUE(CompareModels(m, *loaded).ok()) << CompareModels(m, *loaded);
}

TEST(ModelIoTest, SizeLimitMovesLargestBuffersOutFirst) {
  // Buffers 3, 4, 5 hold 1000, 40 and 600 floats. A limit that fits all
  // but the largest must move exactly that one.
  Model m = SmallModel({1000, 40, 600});
  auto inline_image = SerializeModel(m);
  ASSERT_TRUE(inline_image.ok());
  SaveOptions options;
  options.max_flatbuffer_size = inline_image->size() - 3000;
  auto image = SerializeModel(m, options);
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_GT(BufferOffset(*image, 3), 1u);
  EXPECT_EQ(BufferOffset(*image, 4), 0u);
  EXPECT_EQ(BufferOffset(*image, 5), 0u);
}

TEST(ModelIoTest, TinyLimitPutsEveryBufferOutsideAligned) {
  testing::TempDir dir;
  std::string path = dir.Join("external.tflite");
  Model m = SmallModel({1000, 40, 600});
  SaveOptions options;
  options.max_flatbuffer_size = 1;  // Smaller than any structure...
  EXPECT_EQ(SaveModel(m, path, options).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(ListDir(dir.path()).empty());
  // ...so measure the structure and leave room for nothing else.
  Model skeleton = SmallModel({1000, 40, 600});
  for (Buffer& b : skeleton.buffers) b.external = true;
  auto skeleton_image = SerializeModel(skeleton);
  ASSERT_TRUE(skeleton_image.ok());
  options.max_flatbuffer_size =
      BufferOffset(*skeleton_image, 1);  // The flatbuffer's size, padded.
  ASSERT_TRUE(SaveModel(m, path, options).ok());

  auto loaded = LoadModel(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(CompareModels(m, *loaded).ok()) << CompareModels(m, *loaded);
  // Every weight buffer (not necessarily the 6-byte metadata buffer 2,
  // which may fit in the alignment slack) went outside.
  for (size_t i : {1, 3, 4, 5}) {
    const Buffer& b = loaded->buffers[i];
    ASSERT_FALSE(b.data.empty());
    EXPECT_TRUE(b.external) << "buffer " << i;
    EXPECT_TRUE(PointsInto(b.data, *loaded->file)) << "buffer " << i;
    EXPECT_EQ((b.data.data() - loaded->file->data()) % kExternalBufferAlignment,
              0)
        << "buffer " << i;
  }
  // Deterministic on this path too, and stable through a reload.
  auto a = SerializeModel(m, options);
  auto b = SerializeModel(*loaded, options);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(ModelIoTest, HugeCustomOptionsMoveOutAndComeBackInline) {
  Model m = SmallModel();
  m.subgraphs[0].ops.back().custom_options.assign(3000, 0xab);
  SaveOptions options;
  options.max_flatbuffer_size = 4000;
  auto image = SerializeModel(m, options);
  ASSERT_TRUE(image.ok()) << image.status();
  const tfl::Operator* op =
      tfl::GetModel(image->data())->subgraphs()->Get(0)->operators()->Get(1);
  EXPECT_EQ(op->custom_options(), nullptr);
  EXPECT_EQ(op->large_custom_options_size(), 3000u);
  EXPECT_EQ(op->large_custom_options_offset() % kExternalBufferAlignment, 0u);
  auto loaded = LoadModelFromBytes(ToBytes(*image), "mem");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  // The IR always holds the options inline; offsets never leak into it.
  EXPECT_EQ(loaded->subgraphs[0].ops.back().custom_options.size(), 3000u);
  EXPECT_EQ(loaded->subgraphs[0].ops.back().large_custom_options_offset, 0u);
  EXPECT_TRUE(CompareModels(m, *loaded).ok()) << CompareModels(m, *loaded);
}

TEST(ModelIoTest, SavingOverTheLoadedFileIsSafe) {
  testing::TempDir dir;
  std::string path = dir.Join("m.tflite");
  Model m = SmallModel({500});
  m.buffers[3].external = true;
  ASSERT_TRUE(SaveModel(m, path).ok());
  auto loaded = LoadModel(path);
  ASSERT_TRUE(loaded.ok());
  // The views point into the old file's mapping, which outlives the rename.
  loaded->description = "rewritten";
  ASSERT_TRUE(SaveModel(*loaded, path).ok());
  auto reloaded = LoadModel(path);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_TRUE(CompareModels(*loaded, *reloaded).ok());
  EXPECT_EQ(reloaded->description, "rewritten");
}

TEST(ModelIoTest, SaveIntoMissingDirectoryFailsAndCreatesNothing) {
  testing::TempDir dir;
  std::string path = dir.Join("no/such/dir/m.tflite");
  absl::Status status = SaveModel(SmallModel(), path);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_TRUE(Contains(status.message(), path));
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

TEST(ModelIoTest, FailedSaveLeavesExistingFileUntouched) {
  testing::TempDir dir;
  std::string path = dir.Join("m.tflite");
  ASSERT_TRUE(
      WriteFileAtomically(
          path, {absl::Span<const uint8_t>(
                    reinterpret_cast<const uint8_t*>("old contents"), 12)})
          .ok());
  SaveOptions options;
  options.max_flatbuffer_size = 16;  // The structure cannot fit.
  absl::Status status = SaveModel(SmallModel(), path, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_TRUE(HasPrefix(status.message(), path));
  EXPECT_EQ(*ReadFile(path), "old contents");
  EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"m.tflite"});
}

// A write failing half way (here: the file size limit, which even root
// cannot bypass) must remove the temporary and keep the old file, flushed
// to disk or not.
class FileUtilDurabilityTest : public ::testing::TestWithParam<Durability> {};

TEST_P(FileUtilDurabilityTest, WriteFailureLeavesTargetAndNoTemporary) {
  testing::TempDir dir;
  std::string path = dir.Join("target.bin");
  std::string old_contents = "old";
  ASSERT_TRUE(
      WriteFileAtomically(
          path, {absl::Span<const uint8_t>(
                    reinterpret_cast<const uint8_t*>(old_contents.data()),
                    old_contents.size())})
          .ok());
  std::vector<uint8_t> big(64 * 1024, 7);
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  absl::Span<const uint8_t> piece(big.data(), big.size());
  absl::Status status = WriteFileAtomically(path, {piece, piece}, GetParam());
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message(), path));
  EXPECT_EQ(*ReadFile(path), old_contents);
  EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"target.bin"});
  // And a write that succeeds replaces it whole.
  ASSERT_TRUE(WriteFileAtomically(path, {piece}, GetParam()).ok());
  EXPECT_EQ(ReadFile(path)->size(), big.size());
  EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"target.bin"});
}

INSTANTIATE_TEST_SUITE_P(Both, FileUtilDurabilityTest,
                         ::testing::Values(Durability::kAtomic,
                                           Durability::kDurable));

TEST(FileUtilTest, WritesPiecesInOrderAndReplaces) {
  testing::TempDir dir;
  std::string path = dir.Join("f");
  std::string a = "hello ", b = "", c = "world";
  auto span = [](const std::string& s) {
    return absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()),
                                     s.size());
  };
  ASSERT_TRUE(WriteFileAtomically(path, {span(a), span(b), span(c)}).ok());
  EXPECT_EQ(*ReadFile(path), "hello world");
  ASSERT_TRUE(WriteFileAtomically(path, {span(c)}).ok());
  EXPECT_EQ(*ReadFile(path), "world");
  EXPECT_EQ(ListDir(dir.path()), std::set<std::string>{"f"});
}

TEST(FileUtilTest, ReadMissingFileNamesIt) {
  auto r = ReadFile("/nonexistent/graft/file");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "/nonexistent/graft/file"));
}

TEST(ModelIoTest, LoadMissingFileNamesPath) {
  auto r = LoadModel("/nonexistent/dir/model.tflite");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "/nonexistent/dir/model.tflite"));
}

TEST(ModelIoTest, LoadErrorsStartWithTheName) {
  std::vector<uint8_t> junk(64, 'x');
  auto r = LoadModelFromBytes(Bytes::Copy(absl::Span<const uint8_t>(junk)),
                              "junk.tflite");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasPrefix(r.status().message(),
                        "junk.tflite: not a .tflite model: file identifier is "
                        "'xxxx', expected 'TFL3'"));
}

TEST(ModelIoTest, LoadEmptyFile) {
  testing::TempDir dir;
  std::string path = dir.Join("empty.tflite");
  ASSERT_TRUE(WriteFileAtomically(path, {}).ok());
  auto r = LoadModel(path);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), path));
  EXPECT_TRUE(Contains(r.status().message(), "empty"));
}

TEST(ModelIoTest, EmptyModelRoundTrips) {
  Model m;
  auto image = SerializeModel(m);
  ASSERT_TRUE(image.ok());
  auto loaded = LoadModelFromBytes(ToBytes(*image), "mem");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(CompareModels(m, *loaded).ok());
}

TEST(ModelIoTest, CompareNamesTheDifference) {
  Model a = SmallModel();
  Model b = SmallModel();
  b.subgraphs[0].tensors[3].quantization->scale = {0.25f};
  absl::Status s = CompareModels(a, b);
  EXPECT_TRUE(Contains(
      s.message(), "subgraphs[0].tensors[3] (\"z\"): quantization differs"));

  Model c = SmallModel();
  c.subgraphs[0].tensors[1].shape = {4};
  EXPECT_TRUE(Contains(CompareModels(a, c).message(),
                       "subgraphs[0].tensors[1] (\"w\"): shape differs: "
                       "[2,2] vs [4]"));

  Model d = SmallModel();
  d.subgraphs[0].ops[0].builtin_options.Reset();
  EXPECT_TRUE(Contains(CompareModels(a, d).message(),
                       "subgraphs[0].operators[0]: builtin_options type "
                       "differs"));

  Model e = SmallModel();
  e.buffers[1].data = Floats(4, 2.0f);
  EXPECT_TRUE(Contains(CompareModels(a, e).message(),
                       "buffers[1]: contents differ from byte 2"));

  // Where a buffer is stored is not a difference.
  Model f = SmallModel();
  f.buffers[1].external = true;
  EXPECT_TRUE(CompareModels(a, f).ok());
}

// A NaN is the same NaN in both models (found by tests/fuzz: a model with
// a NaN scale compared unequal to itself), and still differs from a number.
TEST(ModelIoTest, CompareTakesANanAsItself) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Model a = SmallModel();
  Model b = SmallModel();
  a.subgraphs[0].tensors[3].quantization->scale = {nan};
  b.subgraphs[0].tensors[3].quantization->scale = {nan};
  EXPECT_TRUE(CompareModels(a, b).ok()) << CompareModels(a, b);

  Model c = SmallModel();
  EXPECT_TRUE(Contains(CompareModels(a, c).message(),
                       "tensors[3] (\"z\"): quantization differs"));
}

// Present-but-empty vectors against absent ones. PresenceModel writes, with
// the flatbuffers builder directly, a model whose every empty vector field
// of interest is present (`[]`) or, with present = false, absent: a scalar
// tensor, an op with builtin options, a signature, a data-less buffer.
std::vector<uint8_t> PresenceModel(bool present, bool with_signature) {
  flatbuffers::FlatBufferBuilder fbb;
  auto ints = [&]() -> flatbuffers::Offset<flatbuffers::Vector<int32_t>> {
    return present ? fbb.CreateVector(std::vector<int32_t>{}) : 0;
  };
  auto bytes = [&]() -> flatbuffers::Offset<flatbuffers::Vector<uint8_t>> {
    return present ? fbb.CreateVector(std::vector<uint8_t>{}) : 0;
  };
  auto floats = [&]() -> flatbuffers::Offset<flatbuffers::Vector<float>> {
    return present ? fbb.CreateVector(std::vector<float>{}) : 0;
  };
  std::vector<flatbuffers::Offset<tfl::Buffer>> buffers = {
      tfl::CreateBuffer(fbb), tfl::CreateBuffer(fbb, bytes())};
  auto quant = tfl::CreateQuantizationParameters(fbb, floats(), floats());
  std::vector<flatbuffers::Offset<tfl::Tensor>> tensors = {
      tfl::CreateTensor(fbb, ints(), tfl::TensorType_FLOAT32, 0,
                        fbb.CreateString("s"), quant, false, 0, ints())};
  auto reshape = tfl::CreateReshapeOptions(fbb, ints());
  std::vector<flatbuffers::Offset<tfl::Operator>> ops = {tfl::CreateOperator(
      fbb, 0, ints(), ints(), tfl::BuiltinOptions_ReshapeOptions,
      reshape.Union(), bytes(), tfl::CustomOptionsFormat_FLEXBUFFERS,
      present ? fbb.CreateVector(std::vector<uint8_t>{}) : 0, ints())};
  std::vector<flatbuffers::Offset<tfl::SubGraph>> subgraphs = {
      tfl::CreateSubGraph(fbb, fbb.CreateVector(tensors), ints(), ints(),
                          fbb.CreateVector(ops))};
  std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes = {
      tfl::CreateOperatorCode(fbb, tfl::BuiltinOperator_RESHAPE, 0, 1,
                              tfl::BuiltinOperator_RESHAPE)};
  flatbuffers::Offset<
      flatbuffers::Vector<flatbuffers::Offset<tfl::SignatureDef>>>
      signatures = 0;
  if (with_signature) {
    std::vector<flatbuffers::Offset<tfl::SignatureDef>> sigs = {
        tfl::CreateSignatureDef(
            fbb,
            present ? fbb.CreateVector(
                          std::vector<flatbuffers::Offset<tfl::TensorMap>>{})
                    : 0,
            present ? fbb.CreateVector(
                          std::vector<flatbuffers::Offset<tfl::TensorMap>>{})
                    : 0,
            fbb.CreateString("serving_default"), 0)};
    signatures = fbb.CreateVector(sigs);
  } else if (present) {
    signatures =
        fbb.CreateVector(std::vector<flatbuffers::Offset<tfl::SignatureDef>>{});
  }
  auto metadata =
      present
          ? fbb.CreateVector(std::vector<flatbuffers::Offset<tfl::Metadata>>{})
          : 0;
  fbb.Finish(tfl::CreateModel(
                 fbb, 3, fbb.CreateVector(codes), fbb.CreateVector(subgraphs),
                 0, fbb.CreateVector(buffers), ints(), metadata, signatures),
             tfl::ModelIdentifier());
  return std::vector<uint8_t>(fbb.GetBufferPointer(),
                              fbb.GetBufferPointer() + fbb.GetSize());
}

// Loads `image`, serializes the IR and returns the new image.
std::vector<uint8_t> Resave(const std::vector<uint8_t>& image) {
  auto loaded = LoadModelFromBytes(Bytes::Copy(absl::MakeConstSpan(image)),
                                   "presence.tflite");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return {};
  auto out = SerializeModel(*loaded);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<uint8_t>{};
}

// "[]" for a present empty vector, "absent", or "n elements".
template <typename V>
std::string State(const V* v) {
  if (v == nullptr) return "absent";
  return v->size() == 0 ? "[]" : absl::StrCat(v->size(), " elements");
}

const tfl::SubGraph* FirstSubgraph(const std::vector<uint8_t>& image) {
  return tfl::GetModel(image.data())->subgraphs()->Get(0);
}

TEST(EmptyVectorsTest, TensorFieldsKeepPresence) {
  for (bool present : {true, false}) {
    SCOPED_TRACE(present ? "present" : "absent");
    const std::string want = present ? "[]" : "absent";
    std::vector<uint8_t> out = Resave(PresenceModel(present, false));
    ASSERT_FALSE(out.empty());
    const tfl::Tensor* t = FirstSubgraph(out)->tensors()->Get(0);
    EXPECT_EQ(State(t->shape()), want);
    EXPECT_EQ(State(t->shape_signature()), want);
    ASSERT_NE(t->quantization(), nullptr);
    EXPECT_EQ(State(t->quantization()->min()), want);
    EXPECT_EQ(State(t->quantization()->max()), want);
    EXPECT_EQ(State(t->quantization()->scale()), "absent");
  }
}

TEST(EmptyVectorsTest, OperatorFieldsKeepPresence) {
  for (bool present : {true, false}) {
    SCOPED_TRACE(present ? "present" : "absent");
    const std::string want = present ? "[]" : "absent";
    std::vector<uint8_t> out = Resave(PresenceModel(present, false));
    ASSERT_FALSE(out.empty());
    const tfl::Operator* op = FirstSubgraph(out)->operators()->Get(0);
    EXPECT_EQ(State(op->inputs()), want);
    EXPECT_EQ(State(op->outputs()), want);
    EXPECT_EQ(State(op->custom_options()), want);
    EXPECT_EQ(State(op->mutating_variable_inputs()), want);
    EXPECT_EQ(State(op->intermediates()), want);
    ASSERT_NE(op->builtin_options_as_ReshapeOptions(), nullptr);
    EXPECT_EQ(State(op->builtin_options_as_ReshapeOptions()->new_shape()),
              want);
  }
}

TEST(EmptyVectorsTest, ModelSubgraphAndBufferFieldsKeepPresence) {
  for (bool present : {true, false}) {
    SCOPED_TRACE(present ? "present" : "absent");
    const std::string want = present ? "[]" : "absent";
    std::vector<uint8_t> out = Resave(PresenceModel(present, false));
    ASSERT_FALSE(out.empty());
    const tfl::Model* m = tfl::GetModel(out.data());
    EXPECT_EQ(State(m->signature_defs()), want);
    EXPECT_EQ(State(m->metadata()), want);
    EXPECT_EQ(State(m->metadata_buffer()), want);
    EXPECT_EQ(State(m->buffers()->Get(1)->data()), want);
    EXPECT_EQ(State(m->buffers()->Get(0)->data()), "absent");
    EXPECT_EQ(State(FirstSubgraph(out)->inputs()), want);
    EXPECT_EQ(State(FirstSubgraph(out)->outputs()), want);
  }
}

TEST(EmptyVectorsTest, SignatureFieldsKeepPresence) {
  for (bool present : {true, false}) {
    SCOPED_TRACE(present ? "present" : "absent");
    const std::string want = present ? "[]" : "absent";
    std::vector<uint8_t> out = Resave(PresenceModel(present, true));
    ASSERT_FALSE(out.empty());
    const tfl::SignatureDef* sig =
        tfl::GetModel(out.data())->signature_defs()->Get(0);
    EXPECT_EQ(State(sig->inputs()), want);
    EXPECT_EQ(State(sig->outputs()), want);
    EXPECT_EQ(sig->signature_key()->str(), "serving_default");
  }
}

TEST(EmptyVectorsTest, ResavingIsAFixedPoint) {
  for (bool present : {true, false}) {
    std::vector<uint8_t> once = Resave(PresenceModel(present, true));
    EXPECT_EQ(Resave(once), once);
  }
}

TEST(EmptyVectorsTest, CompareTellsEmptyFromAbsent) {
  auto with = LoadModelFromBytes(Bytes::Own(PresenceModel(true, true)), "with");
  auto without =
      LoadModelFromBytes(Bytes::Own(PresenceModel(false, true)), "without");
  ASSERT_TRUE(with.ok() && without.ok());
  absl::Status s = CompareModels(*with, *without);
  EXPECT_TRUE(Contains(s.message(), "present empty vectors differ")) << s;

  // Field by field: one difference at a time is found and located.
  Model a = *LoadModelFromBytes(Bytes::Own(PresenceModel(true, true)), "a");
  Model b = *LoadModelFromBytes(Bytes::Own(PresenceModel(true, true)), "b");
  ASSERT_TRUE(CompareModels(a, b).ok()) << CompareModels(a, b);
  b.subgraphs[0].tensor_empty_vectors[0].present = {"quantization.max",
                                                    "quantization.min"};
  EXPECT_TRUE(Contains(CompareModels(a, b).message(),
                       "subgraphs[0].tensors[0] (\"s\"): present empty "
                       "vectors differ: [quantization.max,quantization.min,"
                       "shape,shape_signature] vs "
                       "[quantization.max,quantization.min]"));
  b = *LoadModelFromBytes(Bytes::Own(PresenceModel(true, true)), "b");
  b.buffers[1].empty_data_present = false;
  EXPECT_TRUE(Contains(CompareModels(a, b).message(),
                       "buffers[1]: data is [] vs absent"));
}

// Records Graft makes get what TFLite's converter writes: a scalar's
// `shape: []`, the model's `signature_defs: []`; other empty vectors absent.
TEST(EmptyVectorsTest, NewRecordsGetTheConvertersPresence) {
  Model m = SmallModel();
  m.signature_defs.clear();
  m.subgraphs[0].tensors[1].shape.clear();
  m.subgraphs[0].tensors[1].buffer = 0;
  auto image = SerializeModel(m);
  ASSERT_TRUE(image.ok()) << image.status();
  const tfl::Model* fb = tfl::GetModel(image->data());
  EXPECT_EQ(State(fb->signature_defs()), "[]");
  EXPECT_EQ(State(fb->metadata_buffer()), "absent");
  const tfl::Tensor* w = fb->subgraphs()->Get(0)->tensors()->Get(1);
  EXPECT_EQ(State(w->shape()), "[]");
  EXPECT_EQ(State(w->shape_signature()), "absent");
  EXPECT_EQ(
      State(fb->subgraphs()->Get(0)->operators()->Get(0)->intermediates()),
      "absent");
  auto loaded = LoadModelFromBytes(ToBytes(*image), "mem");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(CompareModels(m, *loaded).ok()) << CompareModels(m, *loaded);
}

// Fields of the Model, SubGraph and Buffer tables the IR has no place for
// must not be dropped silently.
TEST(ModelIoTest, RefusesModelFieldsTheIrCannotCarry) {
  flatbuffers::FlatBufferBuilder fbb;
  auto group_name = fbb.CreateString("weights.bin");
  std::vector<flatbuffers::Offset<tfl::ExternalBufferGroup>> groups = {
      tfl::CreateExternalBufferGroup(fbb, group_name)};
  auto groups_vec = fbb.CreateVector(groups);
  auto subgraphs =
      fbb.CreateVector(std::vector<flatbuffers::Offset<tfl::SubGraph>>{});
  tfl::ModelBuilder mb(fbb);
  mb.add_version(3);
  mb.add_subgraphs(subgraphs);
  mb.add_external_buffer_groups(groups_vec);
  fbb.Finish(mb.Finish(), tfl::ModelIdentifier());
  auto r = LoadModelFromBytes(Bytes::Copy(absl::Span<const uint8_t>(
                                  fbb.GetBufferPointer(), fbb.GetSize())),
                              "ext.tflite");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(Contains(r.status().message(), "external_buffer_groups"));
}

}  // namespace
}  // namespace graft
