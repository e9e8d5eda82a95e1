#include "plugins/isolated_plugin.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "plugins/child_process.h"

namespace graft {
namespace {

// Little-endian-of-the-host records: 64-bit sizes and numbers, then bytes.
// Both ends are the same binary, so no versioning.
class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) {}
  void U64(uint64_t v) { Bytes(&v, sizeof(v)); }
  void Str(absl::string_view s) {
    U64(s.size());
    Bytes(s.data(), s.size());
  }
  void Bytes(const void* data, size_t size) {
    if (fd_ >= 0) {
      ok_ = ok_ && WriteAll(fd_, data, size);
    } else {
      out_.append(static_cast<const char*>(data), size);
    }
  }
  bool ok() const { return ok_; }
  std::string& out() { return out_; }

 private:
  int fd_;  // -1: into out_.
  bool ok_ = true;
  std::string out_;
};

class Reader {
 public:
  explicit Reader(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}
  bool U64(uint64_t* v) {
    if (bytes_.size() - at_ < sizeof(*v)) return ok_ = false;
    std::memcpy(v, bytes_.data() + at_, sizeof(*v));
    at_ += sizeof(*v);
    return true;
  }
  bool Span(absl::Span<const uint8_t>* s) {
    uint64_t size = 0;
    if (!U64(&size) || bytes_.size() - at_ < size) return ok_ = false;
    *s = bytes_.subspan(at_, size);
    at_ += size;
    return true;
  }
  bool Str(std::string* s) {
    absl::Span<const uint8_t> span;
    if (!Span(&span)) return false;
    s->assign(reinterpret_cast<const char*>(span.data()), span.size());
    return true;
  }
  bool done() const { return ok_ && at_ == bytes_.size(); }

 private:
  absl::Span<const uint8_t> bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

void WriteCompiled(Writer& w, const CompiledPartitions& c) {
  w.U64(c.modules.size());
  for (absl::Span<const uint8_t> m : c.modules) {
    w.U64(m.size());
    w.Bytes(m.data(), m.size());
  }
  w.U64(c.calls.size());
  for (const CompiledPartitions::Call& call : c.calls) {
    w.Str(call.entry_point);
    w.U64(call.module_index);
  }
  w.U64(c.debug_map.size());
  for (const CompiledPartitions::DebugEntry& d : c.debug_map) {
    w.U64(d.module_index);
    w.U64(d.vendor_location);
    w.U64(static_cast<uint32_t>(d.original_op_index));
    w.U64(static_cast<uint32_t>(d.partition_index));
  }
  w.Str(c.stamp_vendor);
  w.Str(c.stamp_plugin_version);
  w.Str(c.stamp_soc_model);
  w.U64(c.stamp_abi_version);
  w.U64(c.bytecode_format_version);
}

// Modules are views into `bytes`.
absl::StatusOr<CompiledPartitions> ReadCompiled(
    absl::Span<const uint8_t> bytes) {
  Reader r(bytes);
  CompiledPartitions c;
  uint64_t n = 0, v = 0;
  if (r.U64(&n)) {
    for (uint64_t i = 0; i < n; ++i) {
      absl::Span<const uint8_t> m;
      if (!r.Span(&m)) break;
      c.modules.push_back(m);
    }
  }
  if (r.U64(&n)) {
    for (uint64_t i = 0; i < n; ++i) {
      CompiledPartitions::Call call;
      if (!r.Str(&call.entry_point) || !r.U64(&v)) break;
      call.module_index = v;
      c.calls.push_back(std::move(call));
    }
  }
  if (r.U64(&n)) {
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t module = 0, location = 0, op = 0, partition = 0;
      if (!r.U64(&module) || !r.U64(&location) || !r.U64(&op) ||
          !r.U64(&partition)) {
        break;
      }
      c.debug_map.push_back(
          {module, location, static_cast<int32_t>(static_cast<uint32_t>(op)),
           static_cast<int32_t>(static_cast<uint32_t>(partition))});
    }
  }
  uint64_t abi = 0, format = 0;
  (void)(r.Str(&c.stamp_vendor) && r.Str(&c.stamp_plugin_version) &&
         r.Str(&c.stamp_soc_model) && r.U64(&abi) && r.U64(&format));
  if (!r.done()) {
    return absl::InternalError("the compile child's answer is malformed");
  }
  c.stamp_abi_version = static_cast<uint32_t>(abi);
  c.bytecode_format_version = static_cast<uint32_t>(format);
  return c;
}

class IsolatedPlugin : public CompilerPlugin {
 public:
  IsolatedPlugin(std::unique_ptr<CompilerPlugin> inner, IsolationLimits limits)
      : inner_(std::move(inner)), limits_(limits) {
    info_ = inner_->info();
    label_ = inner_->label();
  }

  ~IsolatedPlugin() override {
    if (absl::Status s = Close(); !s.ok()) {
      std::fprintf(stderr, "graft: warning: %s\n",
                   std::string(s.message()).c_str());
    }
  }

  absl::Status Close() override {
    if (inner_ == nullptr) return absl::OkStatus();
    absl::Status status =
        RunInChildProcess(
            [&]() -> absl::StatusOr<std::string> {
              inner_.reset();
              return std::string();
            },
            limits_.partition, absl::StrCat(label_, ": destroy"))
            .status();
    // The child destroyed its copy; this one stays, reachable (not a leak
    // to LeakSanitizer), so the vendor's destroy never runs here.
    static auto* kept = new std::vector<std::unique_ptr<CompilerPlugin>>();
    kept->push_back(std::move(inner_));
    return status;
  }

  absl::Status CheckCompatibility(const std::string& soc_model) override {
    return RunInChildProcess(
               [&]() -> absl::StatusOr<std::string> {
                 GRAFT_RETURN_IF_ERROR(inner_->CheckCompatibility(soc_model));
                 return std::string();
               },
               limits_.partition, absl::StrCat(label_, ": compatibility check"))
        .status();
  }

  absl::StatusOr<std::vector<OpDecision>> Partition(
      const Model& model, SubgraphId subgraph, const std::string& soc_model,
      absl::Span<const uint8_t> original_tflite) override {
    GRAFT_ASSIGN_OR_RETURN(
        std::string answer,
        RunInChildProcess(
            [&]() -> absl::StatusOr<std::string> {
              GRAFT_ASSIGN_OR_RETURN(
                  std::vector<OpDecision> decisions,
                  inner_->Partition(model, subgraph, soc_model,
                                    original_tflite));
              Writer w(-1);
              w.U64(decisions.size());
              for (const OpDecision& d : decisions) {
                w.U64(d.taken);
                w.U64(static_cast<uint32_t>(d.group_id));
                w.U64(static_cast<uint32_t>(d.reason_code));
                w.Str(d.reason);
              }
              return std::move(w.out());
            },
            limits_.partition,
            absl::StrCat(label_, ": partition of subgraph ", subgraph)));
    Reader r({reinterpret_cast<const uint8_t*>(answer.data()), answer.size()});
    uint64_t n = 0;
    std::vector<OpDecision> out;
    if (r.U64(&n) && n == model.subgraphs[subgraph].ops.size()) {
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t taken = 0, group = 0, code = 0;
        OpDecision d;
        if (!r.U64(&taken) || !r.U64(&group) || !r.U64(&code) ||
            !r.Str(&d.reason)) {
          break;
        }
        d.taken = taken != 0;
        d.group_id = static_cast<int32_t>(static_cast<uint32_t>(group));
        d.reason_code = static_cast<int32_t>(static_cast<uint32_t>(code));
        out.push_back(std::move(d));
      }
    }
    if (!r.done() || out.size() != model.subgraphs[subgraph].ops.size()) {
      return absl::InternalError(
          absl::StrCat(label_, ": the partition child's answer is malformed"));
    }
    return out;
  }

  absl::StatusOr<CompiledPartitions> Compile(
      const Model& model, absl::Span<const PartitionToCompile> partitions,
      const std::string& soc_model) override {
    GRAFT_ASSIGN_OR_RETURN(
        Bytes answer,
        RunInChildProcessMapped(
            [&](int fd) -> absl::Status {
              GRAFT_ASSIGN_OR_RETURN(
                  CompiledPartitions compiled,
                  inner_->Compile(model, partitions, soc_model));
              Writer w(fd);
              WriteCompiled(w, compiled);
              return w.ok() ? absl::OkStatus()
                            : absl::InternalError(
                                  "writing the compiled result failed");
            },
            limits_.compile,
            absl::StrCat(label_, ": compile of ", partitions.size(),
                         " partition(s)")));
    absl::StatusOr<CompiledPartitions> out = ReadCompiled(answer.span());
    if (!out.ok()) {
      return absl::InternalError(
          absl::StrCat(label_, ": ", out.status().message()));
    }
    out->owner = std::make_shared<const Bytes>(std::move(answer));
    out->owner_is_plain_memory = true;
    return out;
  }

 private:
  std::unique_ptr<CompilerPlugin> inner_;
  IsolationLimits limits_;
};

}  // namespace

std::unique_ptr<CompilerPlugin> IsolatePlugin(
    std::unique_ptr<CompilerPlugin> plugin, IsolationLimits limits) {
  return std::make_unique<IsolatedPlugin>(std::move(plugin), limits);
}

}  // namespace graft
