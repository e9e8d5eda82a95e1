// The inputs the fuzz targets (tests/fuzz) crashed on, minimised where
// libFuzzer could, kept in fuzz/<target>/ and replayed here under the
// target's own steps: each must now be refused with a message (or, for a
// model, load or fail cleanly), never crash. Run under ASan + UBSan too,
// where the original failures were reports.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compiled_format.h"
#include "core/file_util.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/status.h"
#include "dispatch/runtime.h"
#include "dispatch/tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

std::vector<uint8_t> Input(const std::string& name) {
  absl::StatusOr<std::string> bytes =
      ReadFile(absl::StrCat(GRAFT_FUZZ_REGRESSION_DIR, "/", name));
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (!bytes.ok()) return {};
  return std::vector<uint8_t>(bytes->begin(), bytes->end());
}

// format_fuzzer.cc's steps: the first byte picks the decoder.
absl::Status DecodeFormatInput(absl::Span<const uint8_t> input) {
  if (input.empty()) return absl::InvalidArgumentError("empty input");
  const absl::Span<const uint8_t> in = input.subspan(1);
  switch (input[0] % 4) {
    case 0: return DecodeManifest(in).status();
    case 1: return DecodeDispatchOpOptions(in).status();
    case 2: return DecodeLiteRtDispatchOpOptions(in).status();
    default: return DecodeLiteRtStamp(in).status();
  }
}

TEST(FuzzRegressionTest, ManifestWithAFloatForAnIntegerIsRefused) {
  // flexbuffers' AsUInt64 cast -8.4e22 to uint64_t: undefined (UBSan).
  absl::Status s = DecodeFormatInput(Input("format/manifest_float_version.bin"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("graft manifest: "));
}

TEST(FuzzRegressionTest, DispatchOptionsWithAKeyAsTheVendorAreRefused) {
  // A value typed as a key ran strlen past the buffer's end (ASan): the
  // verifier of flexbuffers 2.0.8 does not look for a key's NUL.
  absl::Status s =
      DecodeFormatInput(Input("format/dispatch_options_key_value.bin"));
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("dispatch op options: "));
}

absl::StatusOr<Model> ModelInput(const std::string& name) {
  return LoadModelFromBytes(Bytes::Own(Input(name)), name);
}

TEST(FuzzRegressionTest, ManifestWithANanModuleBufferIsRefused) {
  // model_load_fuzzer.cc: ReadManifest cast a NaN to uint64_t (UBSan).
  absl::StatusOr<Model> model =
      ModelInput("model_load/manifest_nan_module_buffer.tflite");
  ASSERT_TRUE(model.ok()) << model.status();
  absl::StatusOr<Manifest> manifest = ReadManifest(*model);
  ASSERT_FALSE(manifest.ok());
  EXPECT_THAT(std::string(manifest.status().message()),
              HasSubstr("graft manifest: vendors[0]: modules[0]: buffer is not "
                        "an integer"));
}

TEST(FuzzRegressionTest, FallbackSubgraphWithoutOpsIsRefusedAtLoad) {
  // runtime_fuzzer.cc: the fallback's output, which nothing writes, was
  // copied from a null buffer at invoke (UBSan: memcpy from null).
  absl::StatusOr<Model> model =
      ModelInput("runtime/fallback_without_ops.tflite");
  ASSERT_TRUE(model.ok()) << model.status();
  auto runtime = Runtime::LoadModel(*std::move(model));
  ASSERT_FALSE(runtime.ok());
  EXPECT_THAT(std::string(runtime.status().message()),
              HasSubstr("which no op writes"));
}

// runtime_fuzzer.cc's steps on model `name`: load, fill the main entry
// point's float inputs as fuzz::FillInput does, invoke twice. The first
// failing status, or OK.
absl::Status RunAsTheRuntimeTargetDoes(const std::string& name) {
  absl::StatusOr<Model> model = ModelInput(name);
  if (!model.ok()) return model.status();
  auto runtime = Runtime::LoadModel(*std::move(model));
  if (!runtime.ok()) return runtime.status();
  Signature* sig = (*runtime)->main();
  if (sig == nullptr) return absl::NotFoundError("no main entry point");
  for (size_t k = 0; k < sig->num_inputs(); ++k) {
    Tensor* in = sig->input(k);
    if (in == nullptr || in->type != tfl::TensorType_FLOAT32 ||
        in->raw_data == nullptr) {
      continue;
    }
    for (size_t i = 0; i + sizeof(float) <= in->bytes; i += sizeof(float)) {
      const float v =
          static_cast<float>((i / sizeof(float)) % 17) / 8.0f - 1.0f;
      std::memcpy(in->raw_data + i, &v, sizeof(v));
    }
  }
  GRAFT_RETURN_IF_ERROR(sig->Invoke());
  return sig->Invoke();
}

TEST(FuzzRegressionTest, LstmWithANanWeightRunsWithoutUndefinedBehaviour) {
  // A NaN among a float LSTM's weights reached the logistic's float-to-int
  // cast (UBSan).
  absl::Status s = RunAsTheRuntimeTargetDoes("runtime/hybrid_lstm_nan_gate.tflite");
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzRegressionTest, ConcatenationOfAnEmptyPieceRunsWithoutUndefinedBehaviour) {
  // A zero-sized piece has no buffer: CONCATENATION passed its null data
  // to memcpy for 0 bytes (UBSan). The concatenation runs; the model then
  // fails cleanly at its STRIDED_SLICE, which has float indices.
  absl::Status s = RunAsTheRuntimeTargetDoes("runtime/concat_empty_piece.tflite");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("op 3 (STRIDED_SLICE): tensor '' must be INT32 or INT64"));
}

TEST(FuzzRegressionTest, GatherOfEmptySlicesRunsWithoutUndefinedBehaviour) {
  // Params of shape [770, 0]: every slice is empty and has no buffer, and
  // GATHER passed the null pointers to memcpy for 0 bytes (UBSan).
  absl::Status s = RunAsTheRuntimeTargetDoes("runtime/gather_empty_slice.tflite");
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzRegressionTest, AnAxisOfAScalarIsRefused) {
  // GATHER with scalar params: the axis check let axis 0 through for rank
  // 0 and the kernel read the params' dim 0 (a hardened-container abort in
  // the fuzz build, out of bounds elsewhere). SPLIT, UNPACK,
  // CONCATENATION, ARG_MAX, SQUEEZE, TRANSPOSE and REVERSE took the same
  // check; the reductions now skip a scalar's axes as TFLite does.
  absl::Status s = RunAsTheRuntimeTargetDoes("runtime/gather_scalar_params.tflite");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("op 0 (GATHER): axis 0 out of range for rank 0"));
}

TEST(FuzzRegressionTest, HybridConvOfOnePanelRunsWithoutUndefinedBehaviour) {
  // A hybrid CONV_2D with one 16-channel panel: the VNNI tile advanced its
  // null second-panel pointer after every tap (UBSan: offset on null).
  absl::Status s =
      RunAsTheRuntimeTargetDoes("runtime/hybrid_conv_one_panel.tflite");
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzRegressionTest, ConvWhoseRescaleMeetsTheInt32LimitRunsWithoutUndefinedBehaviour) {
  // An int8 CONV_2D whose scales rescale a sum to -2^31 + 1: adding the
  // output zero point (-128) overflowed int32 in the reference path's
  // Finish (UBSan); it now adds in 64 bits and clamps.
  absl::Status s =
      RunAsTheRuntimeTargetDoes("runtime/conv_requant_offset_overflow.tflite");
  EXPECT_TRUE(s.ok()) << s;
}

TEST(FuzzRegressionTest, ConvWithAnOutOfRangeZeroPointIsRefusedAtLoad) {
  // An INT8 CONV_2D whose input zero point (1993549157) is no INT8 value:
  // the reference path's int32 sum overflowed multiplying by the offset
  // (UBSan). Such a zero point is now a load error naming the op.
  absl::Status s = RunAsTheRuntimeTargetDoes(
      "runtime/conv_input_zero_point_out_of_range.tflite");
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("op 1 (CONV_2D): input zero point 1993549157 is "
                        "outside the INT8 range [-128, 127]"));
}

TEST(FuzzRegressionTest, EveryFormatInputReplaysWithoutCrashing) {
  for (const auto& entry :
       fs::directory_iterator(absl::StrCat(GRAFT_FUZZ_REGRESSION_DIR, "/format"))) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(DecodeFormatInput(Input("format/" + name)).ok()) << name;
  }
}

}  // namespace
}  // namespace graft
