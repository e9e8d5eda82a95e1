#include "tools/check/vendor_runs.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/compiled_format.h"
#include "core/file_util.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/status.h"
#include "dispatch/runtime.h"
#include "dispatch/tolerance.h"
#include "plugins/apply.h"
#include "plugins/child_process.h"
#include "tools/run_cmd.h"

namespace graft::check {
namespace {

// A byte codec for answers crossing the pipe.
class Writer {
 public:
  void U64(uint64_t v) { out_.append(reinterpret_cast<const char*>(&v), 8); }
  void Str(absl::string_view s) {
    U64(s.size());
    out_.append(s.data(), s.size());
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  bool U64(uint64_t* v) {
    if (in_.size() < 8) return false;
    std::memcpy(v, in_.data(), 8);
    in_.remove_prefix(8);
    return true;
  }
  bool Str(std::string* s) {
    uint64_t n;
    if (!U64(&n) || n > in_.size()) return false;
    s->assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }

 private:
  absl::string_view in_;
};

std::string EncodeTensors(const std::vector<TensorValue>& values) {
  Writer w;
  w.U64(values.size());
  for (const TensorValue& v : values) {
    w.U64(static_cast<uint32_t>(v.type));
    w.U64(v.shape.size());
    for (int32_t d : v.shape) w.U64(static_cast<uint32_t>(d));
    w.Str(absl::string_view(reinterpret_cast<const char*>(v.bytes.data()),
                            v.bytes.size()));
  }
  return w.Take();
}

absl::StatusOr<std::vector<TensorValue>> DecodeTensors(absl::string_view in) {
  Reader r(in);
  uint64_t n;
  if (!r.U64(&n)) return absl::InternalError("malformed tensor answer");
  std::vector<TensorValue> out;
  for (uint64_t i = 0; i < n; ++i) {
    TensorValue v;
    uint64_t type, rank, d;
    std::string bytes;
    if (!r.U64(&type) || !r.U64(&rank) || rank > 64) {
      return absl::InternalError("malformed tensor answer");
    }
    v.type = static_cast<int32_t>(type);
    for (uint64_t k = 0; k < rank; ++k) {
      if (!r.U64(&d)) return absl::InternalError("malformed tensor answer");
      v.shape.push_back(static_cast<int32_t>(d));
    }
    if (!r.Str(&bytes)) return absl::InternalError("malformed tensor answer");
    v.bytes.assign(bytes.begin(), bytes.end());
    out.push_back(std::move(v));
  }
  return out;
}

TensorValue ValueOf(const Tensor& t) {
  TensorValue v;
  v.type = t.type;
  v.shape.assign(t.shape.begin(), t.shape.end());
  if (t.bytes > 0 && t.raw_data != nullptr) {
    v.bytes.assign(t.raw_data, t.raw_data + t.bytes);
  }
  return v;
}

absl::Status SetInputs(Runtime& rt, const std::vector<TensorValue>& inputs) {
  if (inputs.size() != rt.num_inputs()) {
    return absl::InternalError(
        absl::StrCat(rt.num_inputs(), " inputs, ", inputs.size(), " values"));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    GRAFT_RETURN_IF_ERROR(rt.SetInputData(i, inputs[i].bytes));
  }
  return absl::OkStatus();
}

std::vector<TensorValue> Outputs(Runtime& rt) {
  std::vector<TensorValue> out;
  for (size_t i = 0; i < rt.num_outputs(); ++i) {
    out.push_back(ValueOf(*rt.output(i)));
  }
  return out;
}

absl::StatusOr<std::vector<uint8_t>> ApplyAndSerialize(
    CompilerPlugin& plugin, const Model& model, const std::string& soc_model,
    ApplyOutcome* outcome) {
  Model copy = model;
  CompilerPlugin* plugins[] = {&plugin};
  ApplyOptions options;
  options.soc_model = soc_model;
  GRAFT_ASSIGN_OR_RETURN(ApplyReport report,
                         ApplyPlugins(copy, plugins, options));
  if (outcome != nullptr) {
    outcome->ops_total = report.ops_total;
    outcome->ops_taken = report.ops_taken;
    for (const OpApplyReport& op : report.ops) {
      if (!op.taken_by.empty()) continue;
      for (const OpApplyReport::Refusal& r : op.refusals) {
        outcome->refusals.push_back(absl::StrCat(
            "op ", op.op, " (", op.name,
            "): ", PartitionReasonName(r.reason_code), ": ", r.reason));
      }
    }
  }
  if (report.ops_taken == 0) return std::vector<uint8_t>{};
  return SerializeModel(copy);
}

}  // namespace

absl::StatusOr<ApplyOutcome> ApplyInChild(CompilerPlugin& plugin,
                                          const Model& model,
                                          const std::string& soc_model,
                                          absl::Duration timeout) {
  GRAFT_ASSIGN_OR_RETURN(
      std::string answer,
      RunInChildProcess(
          [&]() -> absl::StatusOr<std::string> {
            ApplyOutcome o;
            GRAFT_ASSIGN_OR_RETURN(
                std::vector<uint8_t> bytes,
                ApplyAndSerialize(plugin, model, soc_model, &o));
            Writer w;
            w.U64(o.ops_total);
            w.U64(o.ops_taken);
            w.U64(o.refusals.size());
            for (const std::string& r : o.refusals) w.Str(r);
            w.Str(absl::string_view(reinterpret_cast<const char*>(bytes.data()),
                                    bytes.size()));
            return w.Take();
          },
          timeout, absl::StrCat(plugin.label(), ": partition and compile")));
  Reader r(answer);
  ApplyOutcome o;
  uint64_t total, taken, n;
  std::string bytes;
  bool ok = r.U64(&total) && r.U64(&taken) && r.U64(&n);
  for (uint64_t i = 0; ok && i < n; ++i) {
    std::string s;
    ok = r.Str(&s);
    o.refusals.push_back(std::move(s));
  }
  if (!ok || !r.Str(&bytes)) return absl::InternalError("malformed answer");
  o.ops_total = static_cast<int64_t>(total);
  o.ops_taken = static_cast<int64_t>(taken);
  o.compiled.assign(bytes.begin(), bytes.end());
  return o;
}

absl::StatusOr<std::string> CompileTwiceInChild(CompilerPlugin& plugin,
                                                const Model& model,
                                                const std::string& soc_model,
                                                absl::Duration timeout) {
  return RunInChildProcess(
      [&]() -> absl::StatusOr<std::string> {
        GRAFT_ASSIGN_OR_RETURN(
            std::vector<uint8_t> a,
            ApplyAndSerialize(plugin, model, soc_model, nullptr));
        GRAFT_ASSIGN_OR_RETURN(
            std::vector<uint8_t> b,
            ApplyAndSerialize(plugin, model, soc_model, nullptr));
        if (a == b) return std::string();
        if (a.size() != b.size()) {
          return absl::StrCat("the compiled models are ", a.size(), " and ",
                              b.size(), " bytes");
        }
        const size_t at =
            std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin();
        return absl::StrCat("the compiled models first differ at byte ", at,
                            " of ", a.size());
      },
      timeout, absl::StrCat(plugin.label(), ": compile twice"));
}

absl::StatusOr<std::vector<TensorValue>> RandomInputs(const Model& model,
                                                      std::mt19937& rng) {
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> rt,
                         Runtime::LoadModel(Model(model)));
  std::vector<TensorValue> out;
  for (size_t i = 0; i < rt->num_inputs(); ++i) {
    Tensor* t = rt->input(i);
    tools::FillRandom(t, rng);
    out.push_back(ValueOf(*t));
  }
  return out;
}

absl::StatusOr<std::vector<TensorValue>> RunOnCpu(
    const Model& model, const std::vector<TensorValue>& inputs,
    int64_t* max_reduction_length) {
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> rt,
                         Runtime::LoadModel(Model(model)));
  GRAFT_RETURN_IF_ERROR(SetInputs(*rt, inputs));
  GRAFT_RETURN_IF_ERROR(rt->Invoke());
  if (max_reduction_length != nullptr) {
    *max_reduction_length = rt->Report().MaxReductionLength();
  }
  return Outputs(*rt);
}

absl::StatusOr<std::vector<TensorValue>> RunWithDispatchInChild(
    const std::string& path, const std::string& dispatch_path,
    const std::vector<TensorValue>& inputs, absl::Duration timeout) {
  GRAFT_ASSIGN_OR_RETURN(
      std::string answer,
      RunInChildProcess(
          [&]() -> absl::StatusOr<std::string> {
            RuntimeOptions options;
            options.policy = AcceleratorPolicy::kRequireVendorOps;
            // A LiteRT dispatch library is found by the stamp's
            // manufacturer in its directory; a Graft one is named.
            const std::filesystem::path file(dispatch_path);
            if (absl::StartsWith(file.filename().string(),
                                 "libLiteRtDispatch")) {
              options.dispatch_dirs = {file.parent_path().string()};
            } else {
              options.dispatch_paths = {dispatch_path};
            }
            GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<Runtime> rt,
                                   Runtime::Load(path, options));
            GRAFT_RETURN_IF_ERROR(SetInputs(*rt, inputs));
            GRAFT_RETURN_IF_ERROR(rt->Invoke());
            return EncodeTensors(Outputs(*rt));
          },
          timeout,
          absl::StrCat(std::filesystem::path(dispatch_path).filename().string(),
                       ": load and run")));
  return DecodeTensors(answer);
}

std::string CompareOutputs(const Model& model,
                           const std::vector<TensorValue>& got,
                           const std::vector<TensorValue>& want,
                           int64_t max_reduction_length, int quantized_lsb,
                           FloatPrecision precision) {
  if (got.size() != want.size()) {
    return absl::StrCat(got.size(), " outputs, expected ", want.size());
  }
  const Subgraph& sg = model.subgraphs[0];
  for (size_t i = 0; i < got.size(); ++i) {
    const TensorValue& g = got[i];
    const TensorValue& w = want[i];
    const std::string name =
        i < sg.outputs.size() ? sg.tensors[sg.outputs[i]].name : "?";
    if (g.type != w.type || g.shape != w.shape ||
        g.bytes.size() != w.bytes.size()) {
      return absl::StrCat(
          "output ", i, " ('", name, "') is ",
          tfl::EnumNameTensorType(static_cast<tfl::TensorType>(g.type)), " [",
          absl::StrJoin(g.shape, ","), "], expected ",
          tfl::EnumNameTensorType(static_cast<tfl::TensorType>(w.type)), " [",
          absl::StrJoin(w.shape, ","), "]");
    }
    const tfl::TensorT& tensor = sg.tensors[sg.outputs[i]];
    const bool quantized =
        tensor.quantization != nullptr && !tensor.quantization->scale.empty();
    size_t bad = 0;
    std::string first;
    auto note = [&](size_t k, double gv, double wv) {
      if (bad++ == 0) {
        first = absl::StrCat("element ", k, ": ", gv, ", expected ", wv);
      }
    };
    switch (g.type) {
      case tfl::TensorType_FLOAT32: {
        const size_t n = g.bytes.size() / 4;
        std::vector<float> gv(n), wv(n);
        std::memcpy(gv.data(), g.bytes.data(), n * 4);
        std::memcpy(wv.data(), w.bytes.data(), n * 4);
        double max_abs = 0;
        for (float v : wv) {
          if (std::isfinite(v))
            max_abs = std::max(max_abs, double{std::fabs(v)});
        }
        const FloatTolerance tol =
            FloatToleranceFor(precision, max_reduction_length, max_abs);
        for (size_t k = 0; k < n; ++k) {
          if (!tol.Accepts(gv[k], wv[k])) note(k, gv[k], wv[k]);
        }
        break;
      }
      case tfl::TensorType_INT8:
      case tfl::TensorType_UINT8:
      case tfl::TensorType_INT16: {
        const int lsb = quantized ? quantized_lsb : 0;
        const size_t size = g.type == tfl::TensorType_INT16 ? 2 : 1;
        const size_t n = g.bytes.size() / size;
        for (size_t k = 0; k < n; ++k) {
          int64_t a, b;
          if (g.type == tfl::TensorType_INT8) {
            a = static_cast<int8_t>(g.bytes[k]);
            b = static_cast<int8_t>(w.bytes[k]);
          } else if (g.type == tfl::TensorType_UINT8) {
            a = g.bytes[k];
            b = w.bytes[k];
          } else {
            int16_t x, y;
            std::memcpy(&x, &g.bytes[2 * k], 2);
            std::memcpy(&y, &w.bytes[2 * k], 2);
            a = x;
            b = y;
          }
          if (std::llabs(a - b) > lsb) note(k, a, b);
        }
        break;
      }
      default:
        if (g.bytes != w.bytes) {
          const size_t at =
              std::mismatch(g.bytes.begin(), g.bytes.end(), w.bytes.begin())
                  .first -
              g.bytes.begin();
          bad = 1;
          first = absl::StrCat("byte ", at, " differs");
        }
        break;
    }
    if (bad > 0) {
      return absl::StrCat("output ", i, " ('", name, "'): ", bad,
                          " element(s) outside the tolerance, first ", first);
    }
  }
  return "";
}

absl::StatusOr<DispatchCall> FirstDispatchCall(const std::string& path) {
  DispatchCall call;
  GRAFT_ASSIGN_OR_RETURN(call.model, LoadModel(path));
  for (const Buffer& b : call.model.buffers) {
    call.buffers.push_back({b.data.data(), b.data.size()});
  }
  for (const Subgraph& sg : call.model.subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      if (!IsDispatchOp(call.model, op)) continue;
      GRAFT_ASSIGN_OR_RETURN(DispatchOpOptions o,
                             DecodeDispatchOpOptions(op.custom_options));
      if (o.module_buffer >= call.model.buffers.size()) {
        return absl::InternalError("dispatch op names no module");
      }
      absl::Span<const uint8_t> module =
          call.model.buffers[o.module_buffer].data.span();
      call.bytecode.assign(module.begin(), module.end());
      call.entry_point = o.entry_point;
      for (const auto& [ids, sizes] :
           {std::pair{&op.inputs, &call.input_bytes},
            std::pair{&op.outputs, &call.output_bytes}}) {
        for (int32_t t : *ids) {
          if (t < 0) continue;
          const tfl::TensorT& tensor = sg.tensors[t];
          GRAFT_ASSIGN_OR_RETURN(size_t bytes,
                                 CheckedTensorBytes(tensor.type, tensor.shape));
          sizes->push_back(bytes);
        }
      }
      return call;
    }
  }
  return absl::NotFoundError(
      absl::StrCat(path, ": no dispatch op in Graft's format"));
}

absl::StatusOr<LiteRtDispatchCall> FirstLiteRtDispatchCall(
    const std::string& path) {
  GRAFT_ASSIGN_OR_RETURN(Model model, LoadModel(path));
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      if (!IsLiteRtDispatchOp(model, op)) continue;
      GRAFT_ASSIGN_OR_RETURN(LiteRtDispatchOpOptions o,
                             DecodeLiteRtDispatchOpOptions(op.custom_options));
      LiteRtDispatchCall call;
      GRAFT_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
      call.file.assign(bytes.begin(), bytes.end());
      if (o.bytecode_offset > call.file.size() ||
          o.bytecode_size > call.file.size() - o.bytecode_offset) {
        return absl::DataLossError(
            absl::StrCat(path, ": the DISPATCH_OP's module is outside the "
                               "file"));
      }
      call.offset = o.bytecode_offset;
      call.size = o.bytecode_size;
      call.entry_point = o.name;
      for (const auto& [ids, types, sizes] :
           {std::tuple{&op.inputs, &call.input_types, &call.input_bytes},
            std::tuple{&op.outputs, &call.output_types, &call.output_bytes}}) {
        for (int32_t t : *ids) {
          if (t < 0) continue;
          const tfl::TensorT& tensor = sg.tensors[t];
          LiteRtRankedTensorType type = {};
          type.element_type = LiteRtElementTypeOf(tensor.type);
          if (tensor.shape.size() > LITERT_TENSOR_MAX_RANK) {
            return absl::UnimplementedError("rank over LiteRT's maximum");
          }
          type.layout.rank = static_cast<unsigned int>(tensor.shape.size());
          for (size_t d = 0; d < tensor.shape.size(); ++d) {
            type.layout.dimensions[d] = tensor.shape[d];
          }
          types->push_back(type);
          GRAFT_ASSIGN_OR_RETURN(size_t bytes,
                                 CheckedTensorBytes(tensor.type, tensor.shape));
          sizes->push_back(bytes);
        }
      }
      return call;
    }
  }
  return absl::NotFoundError(
      absl::StrCat(path, ": no DISPATCH_OP (LiteRT's format)"));
}

ScratchDir::ScratchDir() {
  const char* tmp = getenv("TMPDIR");
  std::string tmpl = absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp",
                                  "/graft_check.XXXXXX");
  if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::Join(const std::string& name) const {
  return absl::StrCat(path_, "/", name);
}

}  // namespace graft::check
