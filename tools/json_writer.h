// JsonWriter: a streaming writer of one JSON document, for the machine
// output of the graft tool (`graft inspect --json`, ...).
//
// Keys appear in the order written, so output is stable for a given input.
// Strings are escaped per RFC 8259; bytes that are not valid UTF-8 become
// U+FFFD so the document is always valid UTF-8 (tensor names in real models
// are arbitrary bytes). Non-finite numbers, which JSON cannot express, are
// written as null. Numbers use the shortest text that reads back exactly.
//
// Misuse (a value where a key is expected, unbalanced End*) is a programming
// error; the writer does not check it beyond what ok() reports.
//
//   JsonWriter w(/*indent=*/2);
//   w.BeginObject();
//   w.Key("name").String("conv");
//   w.Key("shape").BeginArray().Int(1).Int(8).EndArray();
//   w.EndObject();
//   std::string text = w.TakeOutput();
#ifndef GRAFT_TOOLS_JSON_WRITER_H_
#define GRAFT_TOOLS_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace graft::tools {

class JsonWriter {
 public:
  // indent 0: one line, no spaces; otherwise that many spaces per level.
  explicit JsonWriter(int indent = 0) : indent_(indent) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // The key of the next member of the current object.
  JsonWriter& Key(absl::string_view key);

  JsonWriter& String(absl::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& UInt(uint64_t value);
  JsonWriter& Double(double value);
  // As Double, but the shortest text that reads back as the same float.
  JsonWriter& Float(float value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  // True when every Begin* has been matched by its End* and one value
  // written at the top level.
  bool complete() const { return stack_.empty() && wrote_top_level_; }

  const std::string& output() const { return out_; }
  std::string TakeOutput() { return std::move(out_); }

  // `value` as a JSON string literal, quotes included.
  static std::string Quote(absl::string_view value);

 private:
  struct Level {
    bool is_object;
    bool empty = true;
  };
  // Writes the separator and indentation a new value (or key) needs.
  void BeforeValue();
  void Newline();

  int indent_;
  std::string out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool wrote_top_level_ = false;
};

}  // namespace graft::tools

#endif  // GRAFT_TOOLS_JSON_WRITER_H_
