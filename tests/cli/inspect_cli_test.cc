// Runs the built `graft` binary as a user would and checks exit statuses,
// stdout and stderr.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "core/model_io.h"
#include "core/test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/cli_test_util.h"

namespace graft {
namespace {

using ::graft::testing::Balanced;
using ::graft::testing::HavePython;
using ::graft::testing::ParsesAsJson;
using ::graft::testing::ReadFile;
using ::graft::testing::Result;
using ::graft::testing::RunGraft;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Model SmallModel() {
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 8});
  TensorId w = g.Constant<float>("w", {4, 8}, std::vector<float>(32, 0.25f));
  tfl::FullyConnectedOptionsT fc;
  fc.fused_activation_function = tfl::ActivationFunctionType_RELU;
  TensorId y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                   .In(x, w, kNoTensor)
                   .Options(fc)
                   .Out("y", tfl::TensorType_FLOAT32, {1, 4});
  g.Output(y);
  b.Signature("serving_default", {{"x", x}}, {{"y", y}});
  b.Metadata("note", "made by inspect_cli_test \"quoted\"\n");
  absl::StatusOr<Model> m = std::move(b).Build();
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : Model{};
}

class InspectCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.Join("small.tflite");
    absl::Status s = SaveModel(SmallModel(), path_);
    ASSERT_TRUE(s.ok()) << s;
  }
  testing::TempDir dir_;
  std::string path_;
};

TEST_F(InspectCliTest, PrintsBuiltModel) {
  Result r = RunGraft({"inspect", path_, "--tensors", "--buffers"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("FULLY_CONNECTED"));
  EXPECT_THAT(r.out,
              HasSubstr("[x:1x8 f32, w:4x8 f32 (const), -] -> [y:1x4 f32]"));
  EXPECT_THAT(r.out, HasSubstr("fused_activation_function=RELU"));
  EXPECT_THAT(r.out, HasSubstr("serving_default"));
  EXPECT_THAT(r.out, HasSubstr("buffers:"));
  EXPECT_THAT(r.out, HasSubstr("note"));
}

TEST_F(InspectCliTest, JsonOutputParses) {
  Result r = RunGraft({"inspect", "--json", "--buffers", path_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Balanced(r.out)) << r.out;
  for (const char* key :
       {"\"file\"", "\"size\"", "\"version\"", "\"counts\"", "\"op_histogram\"",
        "\"signatures\"", "\"subgraphs\"", "\"ops\"", "\"tensors\"",
        "\"buffers\"", "\"metadata\"", "\"custom_ops\""}) {
    EXPECT_THAT(r.out, HasSubstr(key));
  }
  if (HavePython()) {
    EXPECT_TRUE(ParsesAsJson(r.out)) << r.out;
  }
}

TEST_F(InspectCliTest, TruncatedFileFailsWithExit1) {
  std::string bytes = ReadFile(path_);
  ASSERT_GT(bytes.size(), 64u);
  std::string truncated = dir_.Join("truncated.tflite");
  {
    std::ofstream f(truncated, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  Result r = RunGraft({"inspect", truncated});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("graft inspect: error: "));
  EXPECT_EQ(r.out, "");
}

TEST_F(InspectCliTest, GarbageFileFailsWithExit1) {
  std::string garbage = dir_.Join("garbage.tflite");
  {
    std::ofstream f(garbage, std::ios::binary);
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>(i * 7919 % 251));
  }
  Result r = RunGraft({"inspect", garbage});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("graft inspect: error: "));
}

TEST_F(InspectCliTest, EmptyFileFailsWithExit1) {
  std::string empty = dir_.Join("empty.tflite");
  { std::ofstream f(empty, std::ios::binary); }
  Result r = RunGraft({"inspect", empty});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("graft inspect: error: "));
}

TEST(InspectCli, MissingFileFailsWithExit1NamingPath) {
  const std::string path = "/nonexistent/graft/model.tflite";
  Result r = RunGraft({"inspect", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("graft inspect: error: "));
  EXPECT_THAT(r.err, HasSubstr(path));
}

TEST(InspectCli, UnknownFlagIsUsageError) {
  Result r = RunGraft({"inspect", "--frobnicate", "x.tflite"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --frobnicate"));
}

TEST(InspectCli, RealConvModelFromCorpus) {
  GRAFT_SKIP_IF_NO_CORPUS();
  std::string path =
      testing::ThirdPartyModelsDir() +
      "/tflite-micro/tensorflow/lite/micro/integration_tests/seanet/conv/"
      "conv1.tflite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not found";
  Result r = RunGraft({"inspect", path, "--tensors"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CONV_2D"));
  EXPECT_THAT(r.out, HasSubstr("(const)"));
  EXPECT_THAT(r.out, HasSubstr("stride_w="));
  EXPECT_THAT(r.out, HasSubstr("scale="));
  Result j = RunGraft({"inspect", "--json", path});
  EXPECT_EQ(j.exit_code, 0) << j.err;
  EXPECT_TRUE(Balanced(j.out));
  if (HavePython()) {
    EXPECT_TRUE(ParsesAsJson(j.out)) << j.out;
  }
}

TEST(InspectCli, EveryCorpusModelInspectsWithoutCrashing) {
  GRAFT_SKIP_IF_NO_CORPUS();
  int inspected = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           testing::ThirdPartyModelsDir())) {
    if (entry.path().extension() != ".tflite") continue;
    if (inspected >= 40) break;  // Enough to exercise variety, quickly.
    Result r =
        RunGraft({"inspect", "--json", "--buffers", entry.path().string()});
    // 1 is a clean rejection by the loader; anything else is a crash.
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1)
        << entry.path() << " exit " << r.exit_code << "\n"
        << r.err;
    if (r.exit_code == 0) {
      EXPECT_TRUE(Balanced(r.out)) << entry.path();
    } else {
      EXPECT_THAT(r.err, StartsWith("graft inspect: error: ")) << entry.path();
    }
    ++inspected;
  }
}

TEST(GraftCli, HelpAndVersionExit0) {
  Result help = RunGraft({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("usage: graft"));
  EXPECT_THAT(help.out, HasSubstr("inspect"));

  Result sub = RunGraft({"help", "inspect"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_THAT(sub.out, HasSubstr("usage: graft inspect MODEL"));

  Result flag = RunGraft({"inspect", "--help"});
  EXPECT_EQ(flag.exit_code, 0);
  EXPECT_EQ(flag.out, sub.out);

  Result version = RunGraft({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, StartsWith("graft "));
}

TEST(GraftCli, UnknownCommandPrintsUsageAndExits2) {
  Result r = RunGraft({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown command 'frobnicate'"));
  EXPECT_THAT(r.err, HasSubstr("usage: graft"));

  Result none = RunGraft({});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("usage: graft"));
}

}  // namespace
}  // namespace graft
