// Every real .tflite model of the third-party corpus loads, verifies and
// round-trips through the writer without losing a field: once with its
// buffers inline, once with every buffer stored after the flatbuffer, and
// once with a size limit that forces the largest buffers out. Every vector
// field, nested ones included, keeps its presence: one present but empty
// (`shape: []`) stays `[]`, one absent stays absent (checked on the
// flatbuffers themselves, through the schema's mini-reflection tables).
//
// Models are found by walking the corpus for *.tflite and *.bin files that
// carry the "TFL3" identifier (bytes 4..8); catalog.json lists the same set
// as "status": "ok". One test case per model, named after its path.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "flatbuffers/flatbuffers.h"
#include "flatbuffers/minireflect.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

namespace fs = std::filesystem;

bool HasTfliteIdentifier(const fs::path& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char header[8];
  bool ok = std::fread(header, 1, sizeof(header), f) == sizeof(header) &&
            std::string(header + 4, 4) == "TFL3";
  std::fclose(f);
  return ok;
}

struct CorpusModel {
  std::string path;      // Absolute.
  std::string relative;  // To the corpus root; names the test.
};

std::vector<CorpusModel> FindModels() {
  std::vector<CorpusModel> models;
  fs::path root = testing::ThirdPartyModelsDir();
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return models;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string ext = it->path().extension().string();
    if (ext != ".tflite" && ext != ".bin") continue;
    if (!HasTfliteIdentifier(it->path())) continue;
    models.push_back(
        {it->path().string(), fs::relative(it->path(), root, ec).string()});
  }
  std::sort(models.begin(), models.end(),
            [](const CorpusModel& a, const CorpusModel& b) {
              return a.relative < b.relative;
            });
  return models;
}

// gtest prints parameters on failure; the path says more than bytes.
void PrintTo(const CorpusModel& model, std::ostream* os) {
  *os << model.relative;
}

const std::vector<CorpusModel>& Models() {
  static const std::vector<CorpusModel>* models =
      new std::vector<CorpusModel>(FindModels());
  return *models;
}

// Checks that no vector field of table `a` (type `tt`) at `path` is absent
// where the same field of `b` is present but empty, or the reverse. Data
// may move between a vector and storage after the flatbuffer (buffers,
// large custom options), so absent against non-empty is no error.
void ExpectSameEmptyVectors(const flatbuffers::Table* a,
                            const flatbuffers::Table* b,
                            const flatbuffers::TypeTable* tt,
                            const std::string& path) {
  for (size_t i = 0; i < tt->num_elems; ++i) {
    const flatbuffers::TypeCode tc = tt->type_codes[i];
    const auto vo =
        static_cast<flatbuffers::voffset_t>(flatbuffers::FieldIndexToOffset(
            static_cast<flatbuffers::voffset_t>(i)));
    const flatbuffers::TypeTable* seq =
        tc.sequence_ref >= 0 && tc.base_type == flatbuffers::ET_SEQUENCE
            ? tt->type_refs[tc.sequence_ref]()
            : nullptr;
    const std::string field = absl::StrCat(path, ".", tt->names[i]);
    if (tc.is_repeating) {
      const auto* va = a->GetPointer<const flatbuffers::Vector<uint8_t>*>(vo);
      const auto* vb = b->GetPointer<const flatbuffers::Vector<uint8_t>*>(vo);
      EXPECT_FALSE(va == nullptr && vb != nullptr && vb->size() == 0)
          << field << ": absent, written as []";
      EXPECT_FALSE(vb == nullptr && va != nullptr && va->size() == 0)
          << field << ": [], written as absent";
      if (va == nullptr || vb == nullptr || seq == nullptr ||
          seq->st != flatbuffers::ST_TABLE || va->size() != vb->size()) {
        continue;
      }
      using Tables =
          flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;
      const auto* ta = reinterpret_cast<const Tables*>(va);
      const auto* tb = reinterpret_cast<const Tables*>(vb);
      for (flatbuffers::uoffset_t k = 0; k < ta->size(); ++k) {
        ExpectSameEmptyVectors(ta->Get(k), tb->Get(k), seq,
                               absl::StrCat(field, "[", k, "]"));
      }
    } else if (seq != nullptr && (seq->st == flatbuffers::ST_TABLE ||
                                  seq->st == flatbuffers::ST_UNION)) {
      const auto* sa = a->GetPointer<const flatbuffers::Table*>(vo);
      const auto* sb = b->GetPointer<const flatbuffers::Table*>(vo);
      if (sa == nullptr || sb == nullptr) continue;
      const flatbuffers::TypeTable* sub = seq;
      if (seq->st == flatbuffers::ST_UNION) {
        // The union's type is the field before; same on both sides (the
        // object comparison checks that).
        const auto utype = a->GetField<uint8_t>(vo - 2, 0);
        sub = nullptr;
        for (size_t j = 0; j < seq->num_elems; ++j) {
          const int64_t v = seq->values ? seq->values[j] : int64_t(j);
          if (v == utype && seq->type_codes[j].sequence_ref >= 0) {
            sub = seq->type_refs[seq->type_codes[j].sequence_ref]();
          }
        }
        if (sub == nullptr) continue;
      }
      ExpectSameEmptyVectors(sa, sb, sub, field);
    }
  }
}

void ExpectSameEmptyVectors(absl::Span<const uint8_t> a,
                            absl::Span<const uint8_t> b) {
  ExpectSameEmptyVectors(
      reinterpret_cast<const flatbuffers::Table*>(tfl::GetModel(a.data())),
      reinterpret_cast<const flatbuffers::Table*>(tfl::GetModel(b.data())),
      tfl::ModelTypeTable(), "model");
}

class CorpusRoundTripTest : public ::testing::TestWithParam<CorpusModel> {};

void ExpectRoundTrip(const Model& model, const SaveOptions& options,
                     const std::string& path) {
  ASSERT_TRUE(SaveModel(model, path, options).ok());
  auto reloaded = LoadModel(path);
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  absl::Status same = CompareModels(model, *reloaded);
  EXPECT_TRUE(same.ok()) << same;
  if (model.file != nullptr) {
    ExpectSameEmptyVectors(model.file->span(), reloaded->file->span());
  }
  for (size_t i = 0; i < reloaded->buffers.size(); ++i) {
    const Buffer& b = reloaded->buffers[i];
    if (b.data.empty()) continue;
    // Zero-copy: every buffer is a view into the new file's mapping.
    const uint8_t* begin = reloaded->file->data();
    ASSERT_TRUE(b.data.data() >= begin &&
                b.data.data() + b.data.size() <= begin + reloaded->file->size())
        << "buffers[" << i << "] is not a view into the mapped file";
    size_t alignment = b.external ? kExternalBufferAlignment : 16;
    EXPECT_EQ(static_cast<size_t>(b.data.data() - begin) % alignment, 0u)
        << "buffers[" << i << "]";
  }
}

TEST_P(CorpusRoundTripTest, LoadsAndRoundTrips) {
  const CorpusModel& param = GetParam();
  auto loaded = LoadModel(param.path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Model& model = *loaded;

  // In memory, buffers as they were.
  auto image = SerializeModel(model);
  ASSERT_TRUE(image.ok()) << image.status();
  auto again = SerializeModel(model);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*image == *again) << "serialization is not deterministic";
  auto reloaded =
      LoadModelFromBytes(Bytes::Copy(absl::MakeConstSpan(*image)), "image");
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  absl::Status same = CompareModels(model, *reloaded);
  EXPECT_TRUE(same.ok()) << same;
  ExpectSameEmptyVectors(model.file->span(), *image);
  // A fixed point: what we wrote re-serializes to the same bytes.
  auto image2 = SerializeModel(*reloaded);
  ASSERT_TRUE(image2.ok());
  EXPECT_TRUE(*image == *image2) << "re-serializing a loaded image changes it";

  testing::TempDir dir;
  // Every buffer stored after the flatbuffer.
  Model all_outside = model;
  uint64_t data_cost = 0;
  for (Buffer& b : all_outside.buffers) {
    b.external = true;
    data_cost += b.data.size();
  }
  ExpectRoundTrip(all_outside, {}, dir.Join("outside.tflite"));

  // The size limit forces the largest buffers out: leave room for about
  // half of the data next to the structure.
  auto outside_image = SerializeModel(all_outside);
  ASSERT_TRUE(outside_image.ok());
  uint64_t structure = outside_image->size() - data_cost;
  SaveOptions tight;
  tight.max_flatbuffer_size = structure + data_cost / 2;
  ExpectRoundTrip(model, tight, dir.Join("tight.tflite"));
}

std::string TestName(const ::testing::TestParamInfo<CorpusModel>& info) {
  std::string name;
  for (char c : info.param.relative) {
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  // Distinct paths could sanitize alike; the index keeps names unique.
  return absl::StrCat(name, "_", info.index);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRoundTripTest,
                         ::testing::ValuesIn(Models()), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusRoundTripTest);

TEST(CorpusTest, FindsModels) {
  GRAFT_SKIP_IF_NO_CORPUS();
  std::printf("corpus: %zu models under %s\n", Models().size(),
              testing::ThirdPartyModelsDir().c_str());
  RecordProperty("models", static_cast<int>(Models().size()));
  EXPECT_GT(Models().size(), 0u);
}

}  // namespace
}  // namespace graft
