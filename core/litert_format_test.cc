#include "core/litert_format.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/model.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "flatbuffers/flexbuffers.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

std::string TestData(const std::string& name) {
  return testing::ThirdPartyModelsDir() + "/LiteRT/litert/test/testdata/" +
         name;
}

TEST(LiteRtFormatTest, DispatchOptionsRoundTrip) {
  LiteRtDispatchOpOptions o;
  o.bytecode_offset = 0x123456789abcull;
  o.bytecode_size = 4096;
  o.name = "qnn_partition_0";
  o.fallback_subgraph = 3;
  auto d = DecodeLiteRtDispatchOpOptions(EncodeLiteRtDispatchOpOptions(o));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->bytecode_offset, o.bytecode_offset);
  EXPECT_EQ(d->bytecode_size, o.bytecode_size);
  EXPECT_EQ(d->name, "qnn_partition_0");
  EXPECT_EQ(d->fallback_subgraph, 3);

  o.fallback_subgraph = -1;
  d = DecodeLiteRtDispatchOpOptions(EncodeLiteRtDispatchOpOptions(o));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->fallback_subgraph, -1);
}

// Offsets are patched in place once the file layout is known: the encoding
// must not shrink for small values.
TEST(LiteRtFormatTest, DispatchOptionsSizeDoesNotDependOnTheValues) {
  LiteRtDispatchOpOptions small, large;
  small.name = large.name = "p";
  small.bytecode_offset = 1;
  small.bytecode_size = 1;
  large.bytecode_offset = UINT64_MAX;
  large.bytecode_size = UINT64_MAX - 1;
  EXPECT_EQ(EncodeLiteRtDispatchOpOptions(small).size(),
            EncodeLiteRtDispatchOpOptions(large).size());
  auto d = DecodeLiteRtDispatchOpOptions(EncodeLiteRtDispatchOpOptions(large));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->bytecode_offset, UINT64_MAX);
  EXPECT_EQ(d->bytecode_size, UINT64_MAX - 1);
}

TEST(LiteRtFormatTest, MalformedDispatchOptionsAreDataLoss) {
  EXPECT_EQ(DecodeLiteRtDispatchOpOptions({}).status().code(),
            absl::StatusCode::kDataLoss);
  std::vector<uint8_t> junk = {1, 2, 3, 4, 5};
  EXPECT_EQ(DecodeLiteRtDispatchOpOptions(junk).status().code(),
            absl::StatusCode::kDataLoss);
  // A map without bytecode_offset.
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.UInt("bytecode_size", 4);
    fbb.String("name", "x");
  });
  fbb.Finish();
  EXPECT_EQ(DecodeLiteRtDispatchOpOptions(fbb.GetBuffer()).status().code(),
            absl::StatusCode::kDataLoss);
  // A vector, not a map.
  flexbuffers::Builder vec;
  vec.Vector([&] { vec.Int(1); });
  vec.Finish();
  EXPECT_EQ(DecodeLiteRtDispatchOpOptions(vec.GetBuffer()).status().code(),
            absl::StatusCode::kDataLoss);
  // Wrong type for the name.
  flexbuffers::Builder wrong;
  wrong.Map([&] {
    wrong.UInt("bytecode_size", 4);
    wrong.UInt("bytecode_offset", 4);
    wrong.Int("name", 7);
  });
  wrong.Finish();
  EXPECT_EQ(DecodeLiteRtDispatchOpOptions(wrong.GetBuffer()).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(LiteRtFormatTest, StampRoundTrips) {
  auto encoded = EncodeLiteRtStamp({"Qualcomm", "SM8650"});
  ASSERT_TRUE(encoded.ok()) << encoded.status();
  ASSERT_EQ(encoded->size(), kLiteRtStampSize);
  EXPECT_EQ(std::string(encoded->begin(), encoded->begin() + 9),
            std::string("Qualcomm\0", 9));
  EXPECT_EQ((*encoded)[kLiteRtStampFieldSize], 'S');
  auto decoded = DecodeLiteRtStamp(*encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->soc_manufacturer, "Qualcomm");
  EXPECT_EQ(decoded->soc_model, "SM8650");
}

TEST(LiteRtFormatTest, StampRejectsOversizeAndNonPrintableFields) {
  EXPECT_EQ(EncodeLiteRtStamp({std::string(kLiteRtStampFieldSize, 'a'), "x"})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      EncodeLiteRtStamp({std::string(kLiteRtStampFieldSize - 1, 'a'), "x"})
          .ok());
  EXPECT_EQ(EncodeLiteRtStamp({"Qual\ncomm", "x"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeLiteRtStamp({"a", std::string("b\0c", 3)}).status().code(),
            absl::StatusCode::kInvalidArgument);

  auto good = *EncodeLiteRtStamp({"Qualcomm", "SM8650"});
  EXPECT_EQ(
      DecodeLiteRtStamp(absl::MakeConstSpan(good).subspan(1)).status().code(),
      absl::StatusCode::kDataLoss);
  std::vector<uint8_t> unprintable = good;
  unprintable[2] = 0x01;
  EXPECT_EQ(DecodeLiteRtStamp(unprintable).status().code(),
            absl::StatusCode::kDataLoss);
  std::vector<uint8_t> junk_after_nul = good;
  junk_after_nul[kLiteRtStampFieldSize - 1] = 'x';  // Field 0 not padded.
  EXPECT_EQ(DecodeLiteRtStamp(junk_after_nul).status().code(),
            absl::StatusCode::kDataLoss);
  // Found by tests/fuzz (format): a field of 125 printable bytes has no
  // NUL, so LiteRT reads it on into the next field; Graft decoded it (and
  // could not encode it again).
  std::vector<uint8_t> unterminated = good;
  std::fill(unterminated.begin(),
            unterminated.begin() + kLiteRtStampFieldSize, 'a');
  EXPECT_EQ(DecodeLiteRtStamp(unterminated).status().code(),
            absl::StatusCode::kDataLoss);
}

// LiteRT's first compiled format (precompiled_mediatek_model.tflite): a
// 251-byte stamp, bytecode in NPU_BYTE_CODE metadata. Refused as a format
// Graft does not read, not as corruption.
TEST(LiteRtFormatTest, FirstFormatStampIsUnimplementedWithAWayOut) {
  std::vector<uint8_t> old(kLiteRtStampSize + 1, 0);
  old.back() = 1;
  absl::StatusOr<LiteRtStamp> s = DecodeLiteRtStamp(old);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(s.status().message().find("recompile"), std::string::npos)
      << s.status();
}

TEST(LiteRtFormatTest, WriteThenReadStamp) {
  Model m;
  EXPECT_EQ(ReadLiteRtStamp(m).status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(WriteLiteRtStamp(m, {"IntelOpenVINO", "LNL"}).ok());
  ASSERT_TRUE(WriteLiteRtStamp(m, {"IntelOpenVINO", "PTL"}).ok());
  EXPECT_EQ(m.metadata.size(), 1u);  // Replaced, not added.
  auto s = ReadLiteRtStamp(m);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->soc_model, "PTL");
}

TEST(LiteRtFormatTest, ReadsTheQualcommPrecompiledModel) {
  GRAFT_SKIP_IF_NO_CORPUS();
  const std::string path =
      TestData("simple_model_qualcomm_sm8650_precompiled.tflite");
  auto model = LoadModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  auto stamp = ReadLiteRtStamp(*model);
  ASSERT_TRUE(stamp.ok()) << stamp.status();
  EXPECT_EQ(stamp->soc_manufacturer, "Qualcomm");
  EXPECT_EQ(stamp->soc_model, "SM8650");
  int dispatch_ops = 0;
  for (const Subgraph& sg : model->subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      if (!IsLiteRtDispatchOp(*model, op)) continue;
      ++dispatch_ops;
      auto o = DecodeLiteRtDispatchOpOptions(op.custom_options);
      ASSERT_TRUE(o.ok()) << o.status();
      EXPECT_EQ(o->name, "qnn_partition_0");
      EXPECT_EQ(o->fallback_subgraph, -1);
      EXPECT_GT(o->bytecode_size, 0u);
      EXPECT_LE(o->bytecode_offset + o->bytecode_size, model->file->size());
    }
  }
  EXPECT_EQ(dispatch_ops, 1);
}

// Every precompiled model's DISPATCH_OP options decode, and the bytecode
// lies inside the file (Google Tensor models have an empty name); except
// precompiled_mediatek_model.tflite, whose options are 250 zero bytes (an
// unfilled placeholder of older LiteRT tools), which must be refused as
// DataLoss, not misread.
TEST(LiteRtFormatTest, DecodesEveryPrecompiledModelsOptions) {
  GRAFT_SKIP_IF_NO_CORPUS();
  for (const char* name :
       {"precompiled_mediatek_model.tflite",
        "shared_input_cpu_npu_google_tensor_precompiled.tflite",
        "simple_add_op_google_tensor_p25_precompiled.tflite",
        "simple_add_op_qc_v75_precompiled.tflite",
        "simple_model_npu_google_tensor_precompiled.tflite",
        "simple_model_npu_mediatek_mt6989_precompiled.tflite",
        "simple_model_qualcomm_sm8650_precompiled.tflite"}) {
    SCOPED_TRACE(name);
    auto model = LoadModel(TestData(name));
    ASSERT_TRUE(model.ok()) << model.status();
    int dispatch_ops = 0;
    for (const Subgraph& sg : model->subgraphs) {
      for (const tfl::OperatorT& op : sg.ops) {
        if (!IsLiteRtDispatchOp(*model, op)) continue;
        ++dispatch_ops;
        auto o = DecodeLiteRtDispatchOpOptions(op.custom_options);
        if (std::string(name) == "precompiled_mediatek_model.tflite") {
          EXPECT_EQ(o.status().code(), absl::StatusCode::kDataLoss);
          continue;
        }
        ASSERT_TRUE(o.ok()) << o.status();
        EXPECT_GT(o->bytecode_size, 0u);
        EXPECT_LE(o->bytecode_offset + o->bytecode_size, model->file->size());
      }
    }
    EXPECT_GT(dispatch_ops, 0);
  }
}

}  // namespace
}  // namespace graft
