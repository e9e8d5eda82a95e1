#include "tools/flags.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Fixture {
  bool json = false;
  bool verbose = true;
  std::string name = "default";
  int64_t count = -1;
  FlagParser parser{"prog [flags] FILE", "Does things."};
  Fixture() {
    parser.AddBool("json", &json, "print JSON");
    parser.AddBool("verbose", &verbose, "talk");
    parser.AddString("name", &name, "a name");
    parser.AddInt("count", &count, "how many");
  }
  absl::StatusOr<std::vector<std::string>> Parse(
      std::vector<std::string> args) {
    return parser.Parse(args);
  }
};

TEST(FlagParserTest, ParsesEqualsAndSeparateValues) {
  Fixture f;
  auto pos = f.Parse({"--name=abc", "--count", "42"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_THAT(*pos, IsEmpty());
  EXPECT_EQ(f.name, "abc");
  EXPECT_EQ(f.count, 42);
}

TEST(FlagParserTest, ParsesBooleans) {
  Fixture f;
  auto pos = f.Parse({"--json", "--verbose=false"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_TRUE(f.json);
  EXPECT_FALSE(f.verbose);
}

TEST(FlagParserTest, BooleanFlagDoesNotConsumeNextArgument) {
  Fixture f;
  auto pos = f.Parse({"--json", "model.tflite"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_THAT(*pos, ElementsAre("model.tflite"));
}

TEST(FlagParserTest, KeepsPositionalsInOrderAnywhere) {
  Fixture f;
  auto pos = f.Parse({"a", "--count=1", "b", "-", "--json", "c"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_THAT(*pos, ElementsAre("a", "b", "-", "c"));
}

TEST(FlagParserTest, DoubleDashEndsFlags) {
  Fixture f;
  auto pos = f.Parse({"--json", "--", "--count=3", "x"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_THAT(*pos, ElementsAre("--count=3", "x"));
  EXPECT_EQ(f.count, -1);
}

TEST(FlagParserTest, AcceptsNegativeIntegerAsSeparateValue) {
  Fixture f;
  auto pos = f.Parse({"--count", "-5"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(f.count, -5);
}

TEST(FlagParserTest, AllowsEmptyStringValue) {
  Fixture f;
  auto pos = f.Parse({"--name="});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(f.name, "");
}

TEST(FlagParserTest, RejectsUnknownFlagByName) {
  Fixture f;
  auto pos = f.Parse({"--jsn"});
  ASSERT_FALSE(pos.ok());
  EXPECT_THAT(pos.status().message(), HasSubstr("unknown flag --jsn"));
}

TEST(FlagParserTest, RejectsUnknownFlagWithValue) {
  Fixture f;
  auto pos = f.Parse({"--colour=red"});
  ASSERT_FALSE(pos.ok());
  EXPECT_THAT(pos.status().message(), HasSubstr("--colour"));
}

TEST(FlagParserTest, RejectsSingleDashFlags) {
  Fixture f;
  auto pos = f.Parse({"-x"});
  ASSERT_FALSE(pos.ok());
  EXPECT_THAT(pos.status().message(), HasSubstr("-x"));
}

TEST(FlagParserTest, RejectsMissingValue) {
  Fixture f;
  auto pos = f.Parse({"--count"});
  ASSERT_FALSE(pos.ok());
  EXPECT_THAT(pos.status().message(), HasSubstr("--count needs a value"));
}

TEST(FlagParserTest, RejectsMalformedInteger) {
  Fixture f;
  auto pos = f.Parse({"--count=12x"});
  ASSERT_FALSE(pos.ok());
  EXPECT_THAT(pos.status().message(), HasSubstr("'12x' is not an integer"));
}

TEST(FlagParserTest, RejectsMalformedBoolean) {
  Fixture f;
  auto pos = f.Parse({"--json=maybe"});
  ASSERT_FALSE(pos.ok());
  EXPECT_THAT(pos.status().message(), HasSubstr("--json"));
}

TEST(FlagParserTest, RecognizesHelpAnywhere) {
  Fixture f;
  auto pos = f.Parse({"file", "--help"});
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_TRUE(f.parser.help_requested());
  Fixture g;
  ASSERT_TRUE(g.Parse({"-h"}).ok());
  EXPECT_TRUE(g.parser.help_requested());
}

TEST(FlagParserTest, HelpListsFlagsAndDefaults) {
  Fixture f;
  std::string help = f.parser.Help();
  EXPECT_THAT(help, HasSubstr("usage: prog [flags] FILE"));
  EXPECT_THAT(help, HasSubstr("Does things."));
  EXPECT_THAT(help, HasSubstr("--json"));
  EXPECT_THAT(help, HasSubstr("--count=N"));
  EXPECT_THAT(help, HasSubstr("(default: -1)"));
  EXPECT_THAT(help, HasSubstr("(default: default)"));
  EXPECT_THAT(help, HasSubstr("--help"));
}

}  // namespace
}  // namespace graft::tools
