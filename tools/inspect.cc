#include "tools/inspect.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/flatbuffer_util.h"
#include "core/model_io.h"
#include "flatbuffers/flexbuffers.h"
#include "tools/flags.h"
#include "tools/json_writer.h"
#include "tools/op_options.h"

namespace graft::tools {
namespace {

// The model was verified on load, but the report must never crash even on
// an IR built in memory without verification, so every index is checked.
const tfl::TensorT* TensorAt(const Subgraph& sg, TensorId id) {
  if (id < 0 || static_cast<size_t>(id) >= sg.tensors.size()) return nullptr;
  return &sg.tensors[id];
}

const Buffer* BufferAt(const Model& model, uint32_t id) {
  if (id >= model.buffers.size()) return nullptr;
  return &model.buffers[id];
}

bool HasData(const Model& model, const tfl::TensorT& t) {
  const Buffer* b = BufferAt(model, t.buffer);
  return t.buffer != 0 && b != nullptr && !b->data.empty();
}

// `s` with bytes outside printable ASCII as \xNN (and backslashes doubled),
// so names and strings from a model cannot garble the terminal.
std::string Printable(absl::string_view s) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      absl::StrAppendFormat(&out, "\\x%02x", u);
    }
  }
  return out;
}

std::string DimsText(const std::vector<int32_t>& dims) {
  if (dims.empty()) return "scalar";
  return absl::StrJoin(dims, "x", [](std::string* out, int32_t d) {
    absl::StrAppend(out, d < 0 ? std::string("?") : absl::StrCat(d));
  });
}

// The shape as the model means it: shape_signature (with dynamic dims as
// "?") when it has the shape's rank, else the static shape.
std::string ShapeText(const tfl::TensorT& t) {
  if (!t.shape_signature.empty() &&
      t.shape_signature.size() == t.shape.size()) {
    return DimsText(t.shape_signature);
  }
  return DimsText(t.shape);
}

// Bytes of the tensor: its constant data, else the size of its static
// shape; -1 when neither is known.
int64_t TensorBytes(const Model& model, const tfl::TensorT& t) {
  if (HasData(model, t)) return model.buffers[t.buffer].data.size();
  int bits = TensorTypeBits(t.type);
  int64_t n = NumElements(t.shape);
  // The bound keeps n * bits from overflowing on absurd shapes.
  if (bits == 0 || n < 0 || n > (int64_t{1} << 55)) return -1;
  return (n * bits + 7) / 8;
}

std::string TensorBrief(const Model& model, const Subgraph& sg, TensorId id) {
  if (id == kNoTensor) return "-";
  const tfl::TensorT* t = TensorAt(sg, id);
  if (t == nullptr) return absl::StrCat("#", id, "(invalid)");
  std::string name =
      t->name.empty() ? absl::StrCat("#", id) : Printable(t->name);
  std::string out =
      absl::StrCat(name, ":", ShapeText(*t), " ", ShortTypeName(t->type));
  if (HasData(model, *t)) absl::StrAppend(&out, " (const)");
  if (t->is_variable) absl::StrAppend(&out, " (var)");
  return out;
}

std::string TensorListBrief(const Model& model, const Subgraph& sg,
                            const std::vector<int32_t>& ids) {
  return absl::StrCat("[",
                      absl::StrJoin(ids, ", ",
                                    [&](std::string* out, int32_t id) {
                                      out->append(TensorBrief(model, sg, id));
                                    }),
                      "]");
}

template <typename T>
std::string FirstFew(const std::vector<T>& v, size_t n = 3) {
  std::string out = "[";
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    if (i > 0) out += ",";
    absl::StrAppend(&out, v[i]);
  }
  if (v.size() > n) out += ",...";
  return out + "]";
}

bool IsQuantized(const tfl::QuantizationParametersT* q) {
  return q != nullptr &&
         (!q->scale.empty() || !q->zero_point.empty() || !q->min.empty() ||
          !q->max.empty() || q->details.type != tfl::QuantizationDetails_NONE);
}

std::string QuantizationText(const tfl::QuantizationParametersT* q) {
  if (!IsQuantized(q)) return "-";
  std::vector<std::string> parts;
  if (q->scale.size() > 1 || q->zero_point.size() > 1) {
    parts.push_back(absl::StrCat("per-channel axis=", q->quantized_dimension,
                                 " n=", q->scale.size()));
    parts.push_back(absl::StrCat("scale=", FirstFew(q->scale)));
    parts.push_back(absl::StrCat("zp=", FirstFew(q->zero_point)));
  } else {
    if (!q->scale.empty()) parts.push_back(absl::StrCat("scale=", q->scale[0]));
    if (!q->zero_point.empty()) {
      parts.push_back(absl::StrCat("zp=", q->zero_point[0]));
    }
  }
  if (!q->min.empty()) parts.push_back(absl::StrCat("min=", FirstFew(q->min)));
  if (!q->max.empty()) parts.push_back(absl::StrCat("max=", FirstFew(q->max)));
  if (q->details.type != tfl::QuantizationDetails_NONE) {
    const char* name = tfl::EnumNameQuantizationDetails(q->details.type);
    parts.push_back(
        absl::StrCat("details=", name != nullptr && *name ? name : "?"));
  }
  return absl::StrJoin(parts, " ");
}

std::string HumanBytes(uint64_t n) {
  if (n < 1024) return absl::StrCat(n, " B");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return absl::StrFormat("%.1f %s", v, units[u]);
}

// Where a buffer's bytes lie: "inline @0x..", "external @0x.." (offsets
// from the file start), "memory" for models built in memory, "-" if empty.
std::string BufferLocation(const Model& model, const Buffer& b,
                           std::optional<uint64_t>* offset) {
  *offset = std::nullopt;
  if (b.data.empty()) return "-";
  std::string kind = b.external ? "external" : "inline";
  if (model.file == nullptr) return kind;
  const uint8_t* base = model.file->data();
  if (b.data.data() < base || b.data.data() >= base + model.file->size()) {
    return kind;
  }
  *offset = static_cast<uint64_t>(b.data.data() - base);
  return absl::StrFormat("%s @0x%x", kind, **offset);
}

// A short printable rendering of metadata content, or nullopt for binary
// data. Trailing NULs (min_runtime_version is NUL padded) are ignored.
std::optional<std::string> PrintablePreview(const Bytes& data,
                                            size_t max_chars = 64) {
  absl::string_view s = data.view();
  while (!s.empty() && s.back() == '\0') s.remove_suffix(1);
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (!(u >= 0x20 && u < 0x7f) && c != '\n' && c != '\t' && c != '\r') {
      return std::nullopt;
    }
  }
  if (s.size() > max_chars) return absl::StrCat(s.substr(0, max_chars), "...");
  return std::string(s);
}

// Columns padded to the widest cell; the last column is not padded.
class TextTable {
 public:
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render(absl::string_view indent) const {
    std::vector<size_t> widths;
    for (const auto& row : rows_) {
      if (row.size() > widths.size()) widths.resize(row.size(), 0);
      for (size_t c = 0; c < row.size(); ++c) {
        widths[c] = std::max(widths[c], row[c].size());
      }
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line(indent);
      for (size_t c = 0; c < row.size(); ++c) {
        line += row[c];
        if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      absl::StrAppend(&out, line, "\n");
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// (op name, count), most frequent first, then by name.
std::vector<std::pair<std::string, int>> OpHistogram(const Model& model) {
  std::map<std::string, int> counts;
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) ++counts[OpName(model, op)];
  }
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(
      sorted.begin(), sorted.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  return sorted;
}

bool IsCustom(const Model& model, const tfl::OperatorT& op) {
  return op.opcode_index < model.operator_codes.size() &&
         EffectiveBuiltinCode(model.operator_codes[op.opcode_index]) ==
             tfl::BuiltinOperator_CUSTOM;
}

const tfl::OperatorCodeT* OpCode(const Model& model, const tfl::OperatorT& op) {
  if (op.opcode_index >= model.operator_codes.size()) return nullptr;
  return &model.operator_codes[op.opcode_index];
}

uint64_t CustomOptionsSize(const tfl::OperatorT& op) {
  return op.large_custom_options_size > 0 ? op.large_custom_options_size
                                          : op.custom_options.size();
}

// custom_options decoded as a flexbuffer ("{ entry_point: \"main\", ... }"),
// or nullopt when they are not one. Large options (inline bytecode) are not
// decoded: a summary line has no use for them.
std::optional<std::string> FlexbufferText(const tfl::OperatorT& op) {
  const std::vector<uint8_t>& data = op.custom_options;
  if (op.custom_options_format != tfl::CustomOptionsFormat_FLEXBUFFERS ||
      data.size() > (1u << 20)) {
    return std::nullopt;
  }
  // ToString reads keys up to their NUL: from a padded copy
  // (core/flatbuffer_util.h).
  std::optional<VerifiedFlexbuffer> buffer = VerifyFlexbuffer(data);
  if (!buffer) return std::nullopt;
  std::string text;
  buffer->root.ToString(/*strings_quoted=*/true, /*keys_quoted=*/false, text);
  return text;
}

std::string Truncate(std::string s, size_t max_chars) {
  if (s.size() > max_chars) {
    s.resize(max_chars);
    s += "...";
  }
  return s;
}

const char* CustomOptionsFormatName(tfl::CustomOptionsFormat f) {
  const char* name = tfl::EnumNameCustomOptionsFormat(f);
  return name != nullptr && *name ? name : "?";
}

uint64_t FileSize(const Model& model) {
  return model.file != nullptr ? model.file->size() : 0;
}

size_t TotalOps(const Model& model) {
  size_t n = 0;
  for (const Subgraph& sg : model.subgraphs) n += sg.ops.size();
  return n;
}

size_t TotalTensors(const Model& model) {
  size_t n = 0;
  for (const Subgraph& sg : model.subgraphs) n += sg.tensors.size();
  return n;
}

// How many tensors (in any subgraph) and metadata entries use each buffer.
std::vector<int> BufferUsers(const Model& model) {
  std::vector<int> users(model.buffers.size(), 0);
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::TensorT& t : sg.tensors) {
      if (t.buffer < users.size()) ++users[t.buffer];
    }
  }
  for (const tfl::MetadataT& m : model.metadata) {
    if (m.buffer < users.size()) ++users[m.buffer];
  }
  return users;
}

// --- Text ---------------------------------------------------------------

void TextSummary(const Model& model, absl::string_view path, std::string& out) {
  TextTable t;
  t.AddRow({"file:", std::string(path)});
  uint64_t size = FileSize(model);
  t.AddRow({"size:", absl::StrCat(size, " bytes (", HumanBytes(size), ")")});
  t.AddRow({"version:", absl::StrCat(model.version)});
  t.AddRow({"description:",
            model.description.empty()
                ? "(none)"
                : absl::StrCat("\"", Printable(model.description), "\"")});
  t.AddRow({"counts:",
            absl::StrCat(model.subgraphs.size(), " subgraphs, ",
                         TotalOps(model), " ops, ", TotalTensors(model),
                         " tensors, ", model.buffers.size(), " buffers, ",
                         model.operator_codes.size(), " operator codes")});
  out += t.Render("");
  auto histogram = OpHistogram(model);
  if (!histogram.empty()) {
    out += "op histogram:\n";
    TextTable h;
    for (const auto& [name, count] : histogram) {
      h.AddRow({name, absl::StrCat(count)});
    }
    out += h.Render("  ");
  }
}

void TextSignatures(const Model& model, std::string& out) {
  if (model.signature_defs.empty()) {
    out += "\nsignatures: none\n";
    return;
  }
  absl::StrAppend(&out, "\nsignatures: ", model.signature_defs.size(), "\n");
  for (const tfl::SignatureDefT& sig : model.signature_defs) {
    absl::StrAppend(&out, "  \"", Printable(sig.signature_key), "\" (subgraph ",
                    sig.subgraph_index, ")\n");
    const Subgraph* sg = sig.subgraph_index < model.subgraphs.size()
                             ? &model.subgraphs[sig.subgraph_index]
                             : nullptr;
    TextTable t;
    auto add = [&](const char* dir,
                   const std::vector<std::unique_ptr<tfl::TensorMapT>>& maps) {
      for (const auto& m : maps) {
        if (m == nullptr) continue;
        auto id = static_cast<TensorId>(m->tensor_index);
        t.AddRow({dir, Printable(m->name), "->",
                  absl::StrCat("#", m->tensor_index, " ",
                               sg != nullptr ? TensorBrief(model, *sg, id)
                                             : "(no such subgraph)")});
      }
    };
    add("in", sig.inputs);
    add("out", sig.outputs);
    out += t.Render("    ");
  }
}

void TextSubgraph(const Model& model, size_t index,
                  const InspectOptions& options, std::string& out) {
  const Subgraph& sg = model.subgraphs[index];
  absl::StrAppend(
      &out, "\nsubgraph ", index,
      sg.name.empty() ? std::string()
                      : absl::StrCat(" \"", Printable(sg.name), "\""),
      ": ", sg.tensors.size(), " tensors, ", sg.ops.size(), " ops\n");
  auto ids_brief = [&](const std::vector<int32_t>& ids) {
    return absl::StrJoin(ids, ", ", [&](std::string* o, int32_t id) {
      absl::StrAppend(o, "#", id, " ", TensorBrief(model, sg, id));
    });
  };
  absl::StrAppend(&out, "  inputs:  ", ids_brief(sg.inputs), "\n");
  absl::StrAppend(&out, "  outputs: ", ids_brief(sg.outputs), "\n");

  TextTable ops;
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const tfl::OperatorT& op = sg.ops[i];
    std::string io = absl::StrCat(TensorListBrief(model, sg, op.inputs), " -> ",
                                  TensorListBrief(model, sg, op.outputs));
    std::string extra =
        FormatOptionFields(OpOptionFields(op, options.all_options));
    if (!op.custom_options.empty() || op.large_custom_options_size > 0) {
      absl::StrAppend(&extra, extra.empty() ? "" : " ",
                      "custom_options=", CustomOptionsSize(op), "B");
    }
    if (!op.intermediates.empty()) {
      absl::StrAppend(&extra, extra.empty() ? "" : " ", "intermediates=",
                      TensorListBrief(model, sg, op.intermediates));
    }
    // Only the index and name are aligned: padding the tensor lists to the
    // widest one would push every op's options far to the right.
    if (!extra.empty()) absl::StrAppend(&io, "  ", extra);
    ops.AddRow({absl::StrCat("#", i), OpName(model, op), std::move(io)});
  }
  if (!sg.ops.empty()) {
    out += "  ops:\n";
    out += ops.Render("    ");
  }

  if (options.tensors && !sg.tensors.empty()) {
    out += "  tensors:\n";
    TextTable t;
    // The name last: real names run to hundreds of characters and would
    // push every other column off the screen.
    t.AddRow({"id", "type", "shape", "signature", "buffer", "bytes", "flags",
              "quantization", "name"});
    for (size_t i = 0; i < sg.tensors.size(); ++i) {
      const tfl::TensorT& tensor = sg.tensors[i];
      int64_t bytes = TensorBytes(model, tensor);
      std::vector<std::string> flags;
      if (HasData(model, tensor)) flags.push_back("const");
      if (tensor.is_variable) flags.push_back("var");
      if (tensor.sparsity != nullptr) flags.push_back("sparse");
      t.AddRow(
          {absl::StrCat(i), ShortTypeName(tensor.type), DimsText(tensor.shape),
           tensor.shape_signature.empty() ? "-"
                                          : DimsText(tensor.shape_signature),
           absl::StrCat(tensor.buffer), bytes < 0 ? "?" : absl::StrCat(bytes),
           flags.empty() ? "-" : absl::StrJoin(flags, ","),
           QuantizationText(tensor.quantization.get()),
           Printable(tensor.name)});
    }
    out += t.Render("    ");
  }
}

void TextBuffers(const Model& model, std::string& out) {
  absl::StrAppend(&out, "\nbuffers: ", model.buffers.size(), "\n");
  std::vector<int> users = BufferUsers(model);
  TextTable t;
  t.AddRow({"id", "size", "location", "users"});
  for (size_t i = 0; i < model.buffers.size(); ++i) {
    std::optional<uint64_t> offset;
    t.AddRow({absl::StrCat(i), absl::StrCat(model.buffers[i].data.size()),
              BufferLocation(model, model.buffers[i], &offset),
              absl::StrCat(users[i])});
  }
  out += t.Render("  ");
}

void TextMetadata(const Model& model, std::string& out) {
  if (model.metadata.empty()) return;
  absl::StrAppend(&out, "\nmetadata: ", model.metadata.size(), "\n");
  TextTable t;
  for (const tfl::MetadataT& m : model.metadata) {
    const Buffer* b = BufferAt(model, m.buffer);
    std::string content = "(no such buffer)";
    if (b != nullptr) {
      std::optional<std::string> text = PrintablePreview(b->data);
      content = text ? absl::StrCat("\"", Printable(*text), "\"")
                     : (b->data.empty() ? "(empty)" : "(binary)");
    }
    t.AddRow({Printable(m.name), absl::StrCat("buffer ", m.buffer),
              b != nullptr ? HumanBytes(b->data.size()) : "?", content});
  }
  out += t.Render("  ");
}

void TextCustomOps(const Model& model, const std::vector<size_t>& subgraphs,
                   std::string& out) {
  TextTable t;
  for (size_t s : subgraphs) {
    const Subgraph& sg = model.subgraphs[s];
    for (size_t i = 0; i < sg.ops.size(); ++i) {
      const tfl::OperatorT& op = sg.ops[i];
      if (!IsCustom(model, op)) continue;
      t.AddRow(
          {absl::StrCat("subgraph ", s, " op #", i),
           absl::StrCat("\"", Printable(OpCode(model, op)->custom_code), "\""),
           absl::StrCat("custom_options ", CustomOptionsSize(op), " B"),
           CustomOptionsFormatName(op.custom_options_format),
           op.large_custom_options_size > 0
               ? "(stored after the model)"
               : Printable(Truncate(FlexbufferText(op).value_or(""), 100))});
    }
  }
  std::string rows = t.Render("  ");
  if (rows.empty()) return;
  absl::StrAppend(&out, "\ncustom ops:\n", rows);
}

// --- JSON ---------------------------------------------------------------

void JsonIntArray(JsonWriter& j, const std::vector<int32_t>& v) {
  j.BeginArray();
  for (int32_t x : v) j.Int(x);
  j.EndArray();
}

void JsonQuantization(JsonWriter& j, const tfl::QuantizationParametersT* q) {
  if (!IsQuantized(q)) {
    j.Null();
    return;
  }
  j.BeginObject();
  j.Key("scale").BeginArray();
  for (float s : q->scale) j.Float(s);
  j.EndArray();
  j.Key("zero_point").BeginArray();
  for (int64_t z : q->zero_point) j.Int(z);
  j.EndArray();
  j.Key("quantized_dimension").Int(q->quantized_dimension);
  j.Key("min").BeginArray();
  for (float m : q->min) j.Float(m);
  j.EndArray();
  j.Key("max").BeginArray();
  for (float m : q->max) j.Float(m);
  j.EndArray();
  j.Key("details");
  if (q->details.type == tfl::QuantizationDetails_NONE) {
    j.Null();
  } else {
    const char* name = tfl::EnumNameQuantizationDetails(q->details.type);
    j.String(name != nullptr ? name : "?");
  }
  j.EndObject();
}

void JsonSubgraph(const Model& model, size_t index,
                  const InspectOptions& options, JsonWriter& j) {
  const Subgraph& sg = model.subgraphs[index];
  j.BeginObject();
  j.Key("index").UInt(index);
  j.Key("name").String(sg.name);
  j.Key("inputs");
  JsonIntArray(j, sg.inputs);
  j.Key("outputs");
  JsonIntArray(j, sg.outputs);
  j.Key("ops").BeginArray();
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const tfl::OperatorT& op = sg.ops[i];
    const tfl::OperatorCodeT* code = OpCode(model, op);
    j.BeginObject();
    j.Key("index").UInt(i);
    j.Key("op").String(OpName(model, op));
    j.Key("opcode_index").UInt(op.opcode_index);
    j.Key("version").Int(code != nullptr ? code->version : 0);
    j.Key("inputs");
    JsonIntArray(j, op.inputs);
    j.Key("outputs");
    JsonIntArray(j, op.outputs);
    if (!op.intermediates.empty()) {
      j.Key("intermediates");
      JsonIntArray(j, op.intermediates);
    }
    j.Key("options");
    WriteOptionFieldsJson(OpOptionFields(op, options.all_options), j);
    if (IsCustom(model, op)) {
      j.Key("custom_code").String(code->custom_code);
    }
    if (!op.custom_options.empty() || op.large_custom_options_size > 0) {
      j.Key("custom_options_size").UInt(CustomOptionsSize(op));
      j.Key("custom_options_format")
          .String(CustomOptionsFormatName(op.custom_options_format));
    }
    j.EndObject();
  }
  j.EndArray();
  j.Key("tensors").BeginArray();
  for (size_t i = 0; i < sg.tensors.size(); ++i) {
    const tfl::TensorT& t = sg.tensors[i];
    j.BeginObject();
    j.Key("id").UInt(i);
    j.Key("name").String(t.name);
    j.Key("type").String(TensorTypeName(t.type));
    j.Key("shape");
    JsonIntArray(j, t.shape);
    j.Key("shape_signature");
    JsonIntArray(j, t.shape_signature);
    j.Key("buffer").UInt(t.buffer);
    int64_t bytes = TensorBytes(model, t);
    j.Key("bytes");
    if (bytes < 0) {
      j.Null();
    } else {
      j.Int(bytes);
    }
    j.Key("const").Bool(HasData(model, t));
    j.Key("variable").Bool(t.is_variable);
    j.Key("sparse").Bool(t.sparsity != nullptr);
    j.Key("quantization");
    JsonQuantization(j, t.quantization.get());
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
}

std::string JsonReport(const Model& model, absl::string_view path,
                       const std::vector<size_t>& subgraphs,
                       const InspectOptions& options) {
  JsonWriter j(/*indent=*/2);
  j.BeginObject();
  j.Key("file").String(path);
  j.Key("size").UInt(FileSize(model));
  j.Key("version").UInt(model.version);
  j.Key("description").String(model.description);
  j.Key("counts").BeginObject();
  j.Key("subgraphs").UInt(model.subgraphs.size());
  j.Key("ops").UInt(TotalOps(model));
  j.Key("tensors").UInt(TotalTensors(model));
  j.Key("buffers").UInt(model.buffers.size());
  j.Key("operator_codes").UInt(model.operator_codes.size());
  j.EndObject();
  j.Key("op_histogram").BeginArray();
  for (const auto& [name, count] : OpHistogram(model)) {
    j.BeginObject().Key("op").String(name).Key("count").Int(count).EndObject();
  }
  j.EndArray();

  j.Key("signatures").BeginArray();
  for (const tfl::SignatureDefT& sig : model.signature_defs) {
    j.BeginObject();
    j.Key("key").String(sig.signature_key);
    j.Key("subgraph").UInt(sig.subgraph_index);
    const Subgraph* sg = sig.subgraph_index < model.subgraphs.size()
                             ? &model.subgraphs[sig.subgraph_index]
                             : nullptr;
    auto maps = [&](const char* key,
                    const std::vector<std::unique_ptr<tfl::TensorMapT>>& v) {
      j.Key(key).BeginArray();
      for (const auto& m : v) {
        if (m == nullptr) continue;
        j.BeginObject();
        j.Key("name").String(m->name);
        j.Key("tensor").UInt(m->tensor_index);
        const tfl::TensorT* t =
            sg != nullptr
                ? TensorAt(*sg, static_cast<TensorId>(m->tensor_index))
                : nullptr;
        j.Key("tensor_name");
        if (t != nullptr) {
          j.String(t->name);
        } else {
          j.Null();
        }
        j.EndObject();
      }
      j.EndArray();
    };
    maps("inputs", sig.inputs);
    maps("outputs", sig.outputs);
    j.EndObject();
  }
  j.EndArray();

  j.Key("subgraphs").BeginArray();
  for (size_t s : subgraphs) JsonSubgraph(model, s, options, j);
  j.EndArray();

  if (options.buffers) {
    std::vector<int> users = BufferUsers(model);
    j.Key("buffers").BeginArray();
    for (size_t i = 0; i < model.buffers.size(); ++i) {
      const Buffer& b = model.buffers[i];
      std::optional<uint64_t> offset;
      BufferLocation(model, b, &offset);
      j.BeginObject();
      j.Key("id").UInt(i);
      j.Key("size").UInt(b.data.size());
      j.Key("external").Bool(b.external);
      j.Key("offset");
      if (offset) {
        j.UInt(*offset);
      } else {
        j.Null();
      }
      j.Key("users").Int(users[i]);
      j.EndObject();
    }
    j.EndArray();
  }

  j.Key("metadata").BeginArray();
  for (const tfl::MetadataT& m : model.metadata) {
    const Buffer* b = BufferAt(model, m.buffer);
    j.BeginObject();
    j.Key("name").String(m.name);
    j.Key("buffer").UInt(m.buffer);
    j.Key("size").UInt(b != nullptr ? b->data.size() : 0);
    std::optional<std::string> text =
        b != nullptr ? PrintablePreview(b->data) : std::nullopt;
    j.Key("text");
    if (text) {
      j.String(*text);
    } else {
      j.Null();
    }
    j.EndObject();
  }
  j.EndArray();

  j.Key("custom_ops").BeginArray();
  for (size_t s : subgraphs) {
    const Subgraph& sg = model.subgraphs[s];
    for (size_t i = 0; i < sg.ops.size(); ++i) {
      const tfl::OperatorT& op = sg.ops[i];
      if (!IsCustom(model, op)) continue;
      j.BeginObject();
      j.Key("subgraph").UInt(s);
      j.Key("op").UInt(i);
      j.Key("custom_code").String(OpCode(model, op)->custom_code);
      j.Key("custom_options_size").UInt(CustomOptionsSize(op));
      j.Key("custom_options_format")
          .String(CustomOptionsFormatName(op.custom_options_format));
      j.Key("large_custom_options").Bool(op.large_custom_options_size > 0);
      std::optional<std::string> flex = FlexbufferText(op);
      j.Key("flexbuffer");
      if (flex) {
        j.String(Truncate(*std::move(flex), 4096));
      } else {
        j.Null();
      }
      j.EndObject();
    }
  }
  j.EndArray();
  j.EndObject();
  return j.TakeOutput() + "\n";
}

}  // namespace

std::string ShortTypeName(tfl::TensorType type) {
  switch (type) {
    case tfl::TensorType_FLOAT32:
      return "f32";
    case tfl::TensorType_FLOAT16:
      return "f16";
    case tfl::TensorType_BFLOAT16:
      return "bf16";
    case tfl::TensorType_FLOAT64:
      return "f64";
    case tfl::TensorType_INT2:
      return "i2";
    case tfl::TensorType_INT4:
      return "i4";
    case tfl::TensorType_UINT4:
      return "u4";
    case tfl::TensorType_INT8:
      return "i8";
    case tfl::TensorType_UINT8:
      return "u8";
    case tfl::TensorType_INT16:
      return "i16";
    case tfl::TensorType_UINT16:
      return "u16";
    case tfl::TensorType_INT32:
      return "i32";
    case tfl::TensorType_UINT32:
      return "u32";
    case tfl::TensorType_INT64:
      return "i64";
    case tfl::TensorType_UINT64:
      return "u64";
    case tfl::TensorType_BOOL:
      return "bool";
    case tfl::TensorType_STRING:
      return "str";
    case tfl::TensorType_COMPLEX64:
      return "c64";
    case tfl::TensorType_COMPLEX128:
      return "c128";
    case tfl::TensorType_RESOURCE:
      return "resource";
    case tfl::TensorType_VARIANT:
      return "variant";
    case tfl::TensorType_FLOAT8_E4M3FN:
      return "f8e4m3fn";
    case tfl::TensorType_FLOAT8_E5M2:
      return "f8e5m2";
    default:
      // Types added to the schema later print by their schema name.
      return absl::AsciiStrToLower(TensorTypeName(type));
  }
}

absl::StatusOr<std::string> InspectModel(const Model& model,
                                         absl::string_view path,
                                         const InspectOptions& options) {
  std::vector<size_t> subgraphs;
  if (options.subgraph >= 0) {
    if (static_cast<uint64_t>(options.subgraph) >= model.subgraphs.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--subgraph ", options.subgraph, " is out of range: the model has ",
          model.subgraphs.size(), " subgraph(s)"));
    }
    subgraphs.push_back(static_cast<size_t>(options.subgraph));
  } else {
    for (size_t s = 0; s < model.subgraphs.size(); ++s) subgraphs.push_back(s);
  }
  if (options.json) return JsonReport(model, path, subgraphs, options);

  std::string out;
  TextSummary(model, path, out);
  TextSignatures(model, out);
  for (size_t s : subgraphs) TextSubgraph(model, s, options, out);
  if (options.buffers) TextBuffers(model, out);
  TextMetadata(model, out);
  TextCustomOps(model, subgraphs, out);
  return out;
}

int RunInspectCommand(absl::Span<const std::string> args, std::ostream& out,
                      std::ostream& err) {
  constexpr char kPrefix[] = "graft inspect: error: ";
  InspectOptions options;
  FlagParser flags(
      "graft inspect MODEL [flags]",
      "Loads MODEL (a .tflite file), verifies it and prints a summary, the\n"
      "signatures, each subgraph's ops with their tensors and non-default\n"
      "options, metadata and custom ops.\n"
      "Exit status: 0 ok, 1 unreadable or invalid model, 2 bad command line.");
  flags.AddBool("json", &options.json,
                "print one JSON document instead of text");
  flags.AddBool("tensors", &options.tensors, "print each subgraph's tensors");
  flags.AddBool("buffers", &options.buffers, "print the buffer table");
  flags.AddBool("all-options", &options.all_options,
                "print op options equal to their default too");
  flags.AddInt("subgraph", &options.subgraph,
               "print only this subgraph (-1: all)");
  absl::StatusOr<std::vector<std::string>> positional = flags.Parse(args);
  if (flags.help_requested()) {
    out << flags.Help();
    return 0;
  }
  if (!positional.ok()) {
    err << kPrefix << positional.status().message() << "\n"
        << "run 'graft help inspect' for usage\n";
    return 2;
  }
  if (positional->size() != 1) {
    err << kPrefix
        << (positional->empty() ? "missing MODEL argument"
                                : "expected one MODEL argument")
        << "\nusage: graft inspect MODEL [flags]; run 'graft help inspect' "
           "for the flags\n";
    return 2;
  }
  const std::string& path = (*positional)[0];
  absl::StatusOr<Model> model = LoadModel(path);
  if (!model.ok()) {
    err << kPrefix << model.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::string> report = InspectModel(*model, path, options);
  if (!report.ok()) {
    err << kPrefix << report.status().message() << "\n";
    return 2;
  }
  out << *report;
  out.flush();
  return out.good() ? 0 : 1;
}

}  // namespace graft::tools
