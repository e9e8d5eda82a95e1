#include "tools/json_writer.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace graft::tools {
namespace {

TEST(JsonWriterTest, WritesCompactDocument) {
  JsonWriter w;
  w.BeginObject();
  w.Key("name").String("conv");
  w.Key("shape").BeginArray().Int(1).Int(-8).EndArray();
  w.Key("ok").Bool(true);
  w.Key("none").Null();
  w.Key("big").UInt(18446744073709551615u);
  w.Key("empty_obj").BeginObject().EndObject();
  w.Key("empty_arr").BeginArray().EndArray();
  w.EndObject();
  EXPECT_TRUE(w.complete());
  EXPECT_EQ(w.output(),
            R"({"name":"conv","shape":[1,-8],"ok":true,"none":null,)"
            R"("big":18446744073709551615,"empty_obj":{},"empty_arr":[]})");
}

TEST(JsonWriterTest, IndentsNestedValues) {
  JsonWriter w(2);
  w.BeginObject();
  w.Key("a").BeginArray().Int(1).BeginObject().Key("b").Int(2).EndObject();
  w.EndArray();
  w.Key("c").BeginArray().EndArray();
  w.EndObject();
  EXPECT_EQ(w.output(),
            "{\n"
            "  \"a\": [\n"
            "    1,\n"
            "    {\n"
            "      \"b\": 2\n"
            "    }\n"
            "  ],\n"
            "  \"c\": []\n"
            "}");
}

TEST(JsonWriterTest, KeepsKeyOrderAsWritten) {
  JsonWriter w;
  w.BeginObject().Key("z").Int(1).Key("a").Int(2).EndObject();
  EXPECT_EQ(w.output(), R"({"z":1,"a":2})");
}

TEST(JsonWriterTest, EscapesSpecialCharacters) {
  EXPECT_EQ(JsonWriter::Quote("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(JsonWriter::Quote("\n\r\t\b\f"), R"("\n\r\t\b\f")");
  EXPECT_EQ(JsonWriter::Quote(std::string("\x01\x1f\x7f", 3)),
            R"("\u0001\u001f\u007f")");
  EXPECT_EQ(JsonWriter::Quote(std::string("a\0b", 3)), R"("a\u0000b")");
}

TEST(JsonWriterTest, KeepsValidUtf8) {
  // "é", "€", "😀".
  std::string s = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  EXPECT_EQ(JsonWriter::Quote(s), "\"" + s + "\"");
}

TEST(JsonWriterTest, ReplacesInvalidUtf8) {
  // A lone continuation byte, a truncated sequence, an overlong encoding
  // and an encoded surrogate.
  EXPECT_EQ(JsonWriter::Quote("\x80"), R"("\ufffd")");
  EXPECT_EQ(JsonWriter::Quote("a\xE2\x82"), R"("a\ufffd\ufffd")");
  EXPECT_EQ(JsonWriter::Quote("\xC0\xAF"), R"("\ufffd\ufffd")");
  EXPECT_EQ(JsonWriter::Quote("\xED\xA0\x80"), R"("\ufffd\ufffd\ufffd")");
}

TEST(JsonWriterTest, WritesShortestRoundTripNumbers) {
  JsonWriter w;
  w.BeginArray()
      .Float(0.1f)
      .Double(0.1)
      .Float(1.0f)
      .Double(1e300)
      .Float(-2.5f)
      .Double(0.0)
      .EndArray();
  EXPECT_EQ(w.output(), "[0.1,0.1,1,1e+300,-2.5,0]");
}

TEST(JsonWriterTest, WritesNonFiniteAsNull) {
  JsonWriter w;
  w.BeginArray()
      .Double(std::numeric_limits<double>::quiet_NaN())
      .Float(std::numeric_limits<float>::infinity())
      .EndArray();
  EXPECT_EQ(w.output(), "[null,null]");
}

TEST(JsonWriterTest, ReportsIncompleteDocument) {
  JsonWriter w;
  EXPECT_FALSE(w.complete());
  w.BeginObject();
  EXPECT_FALSE(w.complete());
  w.EndObject();
  EXPECT_TRUE(w.complete());
}

}  // namespace
}  // namespace graft::tools
