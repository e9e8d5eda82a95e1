#include "dispatch/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "core/status.h"
#include "dispatch/litert_backend.h"
#include "dispatch/subgraph_executor.h"
#include "dispatch/thread_pool.h"
#include "dispatch/vendor_backend.h"

namespace graft {

// Marks the runtime in use for one call; a call that finds it in use by
// another thread fails instead. One atomic exchange: the single-thread path
// pays nothing measurable.
class Runtime::InUse {
 public:
  explicit InUse(Runtime* rt)
      : flag_(rt->in_use_),
        owned_(!flag_.exchange(true, std::memory_order_acquire)) {}
  ~InUse() {
    if (owned_) flag_.store(false, std::memory_order_release);
  }
  InUse(const InUse&) = delete;
  InUse& operator=(const InUse&) = delete;

  absl::Status status(absl::string_view call) const {
    if (owned_) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        call,
        " refused: another thread is using this Runtime (Invoke, Bind*, "
        "SetInputData or ResizeInputs of one of its signatures); a Runtime "
        "serves one thread at a time, so load one Runtime per thread "
        "(dispatch/runtime.h, Thread-safety)"));
  }

 private:
  std::atomic<bool>& flag_;
  const bool owned_;
};

Tensor* Signature::input(size_t i) {
  return i < inputs_.size() ? executor_->tensor(inputs_[i]) : nullptr;
}
Tensor* Signature::output(size_t i) {
  return i < outputs_.size() ? executor_->tensor(outputs_[i]) : nullptr;
}
Tensor* Signature::input(absl::string_view name) {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (input_names_[i] == name) return input(i);
  }
  return nullptr;
}
Tensor* Signature::output(absl::string_view name) {
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (output_names_[i] == name) return output(i);
  }
  return nullptr;
}

absl::Status Signature::BindInput(size_t i, void* data, size_t bytes) {
  Runtime::InUse in_use(runtime_);
  GRAFT_RETURN_IF_ERROR(in_use.status("BindInput"));
  if (i >= inputs_.size()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "input %d out of range (%d inputs)", i, inputs_.size()));
  }
  return executor_->BindInput(inputs_[i], data, bytes);
}

absl::Status Signature::SetInputData(size_t i,
                                     absl::Span<const uint8_t> bytes) {
  Runtime::InUse in_use(runtime_);
  GRAFT_RETURN_IF_ERROR(in_use.status("SetInputData"));
  if (i >= inputs_.size()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "input %d out of range (%d inputs)", i, inputs_.size()));
  }
  return executor_->SetInput(inputs_[i], bytes);
}

absl::Status Signature::BindOutput(size_t i, void* data, size_t bytes) {
  Runtime::InUse in_use(runtime_);
  GRAFT_RETURN_IF_ERROR(in_use.status("BindOutput"));
  if (i >= outputs_.size()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "output %d out of range (%d outputs)", i, outputs_.size()));
  }
  return executor_->BindOutput(outputs_[i], data, bytes);
}

absl::Status Signature::Invoke() {
  Runtime::InUse in_use(runtime_);
  GRAFT_RETURN_IF_ERROR(in_use.status("Invoke"));
  return executor_->Run();
}

absl::Status Signature::ResizeInputs(const std::vector<Shape>& shapes) {
  Runtime::InUse in_use(runtime_);
  GRAFT_RETURN_IF_ERROR(in_use.status("ResizeInputs"));
  return runtime_->Resize(*this, shapes);
}

Runtime::Runtime() = default;
Runtime::~Runtime() = default;

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Load(
    const std::string& path, const RuntimeOptions& options) {
  GRAFT_ASSIGN_OR_RETURN(Model model, graft::LoadModel(path));
  absl::StatusOr<std::unique_ptr<Runtime>> rt =
      LoadModel(std::move(model), options);
  if (!rt.ok()) {
    return absl::Status(rt.status().code(),
                        absl::StrCat(path, ": ", rt.status().message()));
  }
  return rt;
}

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::LoadModel(
    Model model, const RuntimeOptions& options) {
  std::unique_ptr<Runtime> rt(new Runtime());
  rt->model_ = std::make_unique<Model>(std::move(model));
  GRAFT_RETURN_IF_ERROR(rt->Init(options));
  return rt;
}

namespace {

// "subgraph S op N (NAME) was compiled for a vendor but runs on the CPU:
// WHY" for every dispatch op of `r` (callees included) that runs its
// fallback subgraph.
bool VendorListed(const std::vector<std::string>& list,
                  const std::string& vendor) {
  return std::find(list.begin(), list.end(), vendor) != list.end();
}

void CollectFallbacks(const SubgraphReport& r, std::vector<std::string>* out) {
  for (const OpReport& o : r.ops) {
    if (o.where == OpReport::Where::kFallback) {
      out->push_back(absl::StrFormat(
          "subgraph %d op %d (%s) was compiled for a vendor but runs on the "
          "CPU: %s",
          r.subgraph, o.op_index, o.op_name, o.detail));
    }
    for (const SubgraphReport& c : o.callee) CollectFallbacks(c, out);
  }
}

}  // namespace

absl::Status Runtime::Init(const RuntimeOptions& options) {
  const Model& model = *model_;
  if (model.subgraphs.empty()) {
    return absl::InvalidArgumentError("the model has no subgraphs");
  }
  pool_ = std::make_unique<ThreadPool>(options.num_threads);
  env_ = std::make_unique<LoadEnv>();
  env_->model = model_.get();
  env_->pool = pool_.get();
  env_->profiling = options.profiling;
  policy_ = options.policy;
  static std::atomic<uint64_t> next_load_id{1};
  env_->load_id = next_load_id.fetch_add(1, std::memory_order_relaxed);
  env_->call_once_done.assign(model.subgraphs.size(), false);
  backends_ = options.dispatch_backends;
  // Dispatch libraries found but not loaded (vendor_backend.h).
  std::vector<DispatchLoadFailure> load_failures;
  std::vector<std::string> unlisted_vendors;
  // Vendor dispatch libraries for the vendors the manifest names, unless the
  // caller passed a backend for that vendor. A vendor with no library falls
  // back to CPU (or fails under kRequireAccelerator, listing the ops).
  if (!options.dispatch_dirs.empty() || !options.dispatch_paths.empty()) {
    absl::StatusOr<Manifest> wanted = ReadManifest(model);
    if (wanted.ok()) {
      // LiteRT vendors are found through the model's LiteRtStamp, below.
      wanted->vendors.erase(
          std::remove_if(
              wanted->vendors.begin(), wanted->vendors.end(),
              [](const ManifestVendor& v) { return v.abi == "litert"; }),
          wanted->vendors.end());
      // Vendors the caller's priority list leaves out get no library.
      if (!options.vendor_priority.empty()) {
        auto& vs = wanted->vendors;
        for (const ManifestVendor& v : vs) {
          if (!VendorListed(options.vendor_priority, v.vendor)) {
            unlisted_vendors.push_back(v.vendor);
          }
        }
        vs.erase(std::remove_if(vs.begin(), vs.end(),
                                [&](const ManifestVendor& v) {
                                  return !VendorListed(options.vendor_priority,
                                                       v.vendor);
                                }),
                 vs.end());
      }
      for (const auto& given : options.dispatch_backends) {
        if (given == nullptr) continue;
        auto& vs = wanted->vendors;
        vs.erase(std::remove_if(vs.begin(), vs.end(),
                                [&](const ManifestVendor& v) {
                                  return v.vendor == given->vendor();
                                }),
                 vs.end());
      }
      std::vector<std::string> missing;
      GRAFT_ASSIGN_OR_RETURN(
          std::vector<std::shared_ptr<DispatchBackend>> loaded,
          LoadVendorBackends(*wanted, options.dispatch_dirs,
                             options.dispatch_paths, options.dispatch_options,
                             options.num_threads, &missing, &load_failures));
      for (auto& b : loaded) backends_.push_back(std::move(b));
    }
  }
  // A model compiled by LiteRT's tools: the vendor is the stamp's SoC
  // manufacturer, served by a LiteRT dispatch library (litert_backend.h)
  // unless the caller passed a backend for it.
  const bool has_litert_ops =
      std::any_of(model.operator_codes.begin(), model.operator_codes.end(),
                  [](const tfl::OperatorCodeT& c) {
                    return c.custom_code == kLiteRtDispatchCustomCode;
                  });
  if (has_litert_ops) {
    absl::StatusOr<LiteRtStamp> stamp = ReadLiteRtStamp(model);
    if (absl::IsUnimplemented(stamp.status())) return stamp.status();
    if (!stamp.ok() && !absl::IsNotFound(stamp.status())) {
      return absl::DataLossError(
          absl::StrCat("the model's LiteRtStamp metadata is unreadable: ",
                       stamp.status().message()));
    }
    if (stamp.ok()) {
      env_->has_litert_stamp = true;
      env_->litert_vendor = stamp->soc_manufacturer;
      env_->litert_soc_model = stamp->soc_model;
      const bool given =
          std::any_of(backends_.begin(), backends_.end(), [&](const auto& b) {
            return b != nullptr &&
                   SameLiteRtVendor(b->vendor(), stamp->soc_manufacturer);
          });
      const bool listed =
          options.vendor_priority.empty() ||
          std::any_of(options.vendor_priority.begin(),
                      options.vendor_priority.end(), [&](const std::string& v) {
                        return SameLiteRtVendor(v, stamp->soc_manufacturer);
                      });
      if (!listed) unlisted_vendors.push_back(stamp->soc_manufacturer);
      if (!given && listed) {
        absl::StatusOr<std::shared_ptr<LiteRtBackend>> litert =
            LoadLiteRtBackend(options.dispatch_dirs, options.dispatch_paths,
                              *stamp);
        if (litert.ok()) {
          backends_.push_back(*litert);
        } else {
          env_->litert_missing = std::string(litert.status().message());
          // Libraries there that would not load (or serve another vendor).
          if (!absl::IsNotFound(litert.status())) {
            load_failures.push_back(
                {stamp->soc_manufacturer, env_->litert_missing});
          }
        }
      }
    }
  }
  // A dispatch library that is there but does not load is never skipped
  // silently: a warning (its ops fall back to the CPU), or the end of the
  // load under a policy that requires vendors.
  if (!load_failures.empty()) {
    std::vector<std::string> lines;
    for (const DispatchLoadFailure& f : load_failures) {
      lines.push_back(f.vendor.empty() ? f.message
                                       : absl::StrCat("vendor '", f.vendor,
                                                      "': ", f.message));
      if (!f.vendor.empty()) env_->backend_failures[f.vendor] = f.message;
    }
    if (options.policy != AcceleratorPolicy::kAllowCpuFallback) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "policy %s: %d dispatch librar%s did not load:\n  %s",
          options.policy == AcceleratorPolicy::kRequireAccelerator
              ? "kRequireAccelerator"
              : "kRequireVendorOps",
          lines.size(), lines.size() == 1 ? "y" : "ies",
          absl::StrJoin(lines, "\n  ")));
    }
    for (const std::string& line : lines) {
      std::string w = absl::StrCat(
          "a dispatch library did not load, so its vendor's ops run on the "
          "CPU: ",
          line);
      std::fprintf(stderr, "graft: warning: %s\n", w.c_str());
      warnings_.push_back(std::move(w));
    }
  }
  for (const auto& backend : backends_) {
    if (backend == nullptr) {
      return absl::InvalidArgumentError("null dispatch backend");
    }
    std::string vendor(backend->vendor());
    if (!env_->backends.emplace(vendor, backend.get()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two dispatch backends for vendor '", vendor, "'"));
    }
  }
  absl::StatusOr<Manifest> manifest = ReadManifest(model);
  if (manifest.ok()) {
    if (manifest->format_version > kCompiledFormatVersion) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the model was compiled in format version %d; this runtime reads "
          "up to %d",
          manifest->format_version, kCompiledFormatVersion));
    }
    manifest_ = std::make_unique<Manifest>(*std::move(manifest));
    env_->manifest = manifest_.get();
    // Bytecode integrity, before any vendor sees a module (they get theirs
    // when ops are prepared, below): each module the manifest lists must
    // have the size and hash recorded at compile time.
    for (const ManifestVendor& v : manifest_->vendors) {
      for (size_t i = 0; i < v.modules.size(); ++i) {
        const ManifestModule& m = v.modules[i];
        if (m.buffer >= model.buffers.size()) {
          return absl::DataLossError(absl::StrFormat(
              "vendor '%s' module %d: the manifest names buffer %d, which "
              "does not exist (the model has %d buffers)",
              v.vendor, i, m.buffer, model.buffers.size()));
        }
        const Bytes& data = model.buffers[m.buffer].data;
        if (data.size() != m.size ||
            manifest_->HashModule(data.span()) != m.hash) {
          return absl::DataLossError(absl::StrFormat(
              "vendor '%s' module %d (buffer %d, %d bytes): its bytes do not "
              "match the size (%d) and hash the manifest recorded at "
              "compilation: the bytecode changed since (a corrupted or "
              "edited file); compile the model again",
              v.vendor, i, m.buffer, data.size(), m.size));
        }
      }
    }
  } else if (!absl::IsNotFound(manifest.status())) {
    return manifest.status();
  }

  // Entry subgraphs: subgraph 0 and every signature's.
  std::set<SubgraphId> entries = {0};
  for (const tfl::SignatureDefT& sig : model.signature_defs) {
    entries.insert(static_cast<SubgraphId>(sig.subgraph_index));
  }
  std::vector<SubgraphExecutor*> by_subgraph(model.subgraphs.size(), nullptr);
  for (SubgraphId id : entries) {
    GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<SubgraphExecutor> e,
                           SubgraphExecutor::Create(env_.get(), id, nullptr,
                                                    /*external_io=*/false,
                                                    /*count_cpu_ops=*/true));
    if (id >= 0 && id < static_cast<SubgraphId>(by_subgraph.size())) {
      by_subgraph[id] = e.get();
    }
    executors_.push_back(std::move(e));
  }
  if (!env_->missing.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        env_->missing.size() == 1
            ? std::string("1 op cannot run: ")
            : absl::StrFormat("%d ops cannot run:\n  ", env_->missing.size()),
        absl::StrJoin(env_->missing, "\n  ")));
  }
  if (options.policy == AcceleratorPolicy::kRequireAccelerator &&
      !env_->cpu_ops.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "policy kRequireAccelerator: %d ops would run on CPU:\n  %s",
        env_->cpu_ops.size(), absl::StrJoin(env_->cpu_ops, "\n  ")));
  }

  // No silent fallback: every dispatch op that runs its fallback subgraph on
  // CPU instead of on the vendor it was compiled for is said so, on stderr
  // and in the report, with why and what to do; under kRequireVendorOps the
  // load fails instead.
  // The executors' reports, built once for the checks below.
  std::vector<SubgraphReport> reports;
  for (const auto& e : executors_) reports.push_back(e->Report());
  std::vector<std::string> fallbacks;
  for (const SubgraphReport& r : reports) CollectFallbacks(r, &fallbacks);
  if (options.policy == AcceleratorPolicy::kRequireVendorOps &&
      !fallbacks.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "policy kRequireVendorOps: %d dispatch op(s) would run on the CPU "
        "instead of the vendor they were compiled for:\n  %s",
        fallbacks.size(), absl::StrJoin(fallbacks, "\n  ")));
  }
  for (const std::string& f : fallbacks) {
    std::string w = absl::StrCat(
        f,
        "; pass the directory of the vendor's dispatch library (graft run "
        "--dispatch-dir, RuntimeOptions::dispatch_dirs), or require it "
        "(AcceleratorPolicy::kRequireVendorOps) to fail instead");
    std::fprintf(stderr, "graft: warning: %s\n", w.c_str());
    warnings_.push_back(std::move(w));
  }

  for (const std::string& v : unlisted_vendors) {
    std::string w = absl::StrCat(
        "the model has ops compiled for vendor '", v,
        "', which is not in the vendor priority list (",
        absl::StrJoin(options.vendor_priority, ", "),
        "; RuntimeOptions::vendor_priority, graft run --vendor): its "
        "dispatch library is not used");
    std::fprintf(stderr, "graft: warning: %s\n", w.c_str());
    warnings_.push_back(std::move(w));
  }

  // A LiteRT vendor that may compute below the model's precision is said
  // so, on stderr and in the report, when any op runs on it.
  for (const auto& backend : backends_) {
    const auto* litert = dynamic_cast<const LiteRtBackend*>(backend.get());
    if (litert == nullptr || litert->precision_warning().empty()) continue;
    bool used = false;
    std::function<void(const SubgraphReport&)> visit =
        [&](const SubgraphReport& r) {
          for (const OpReport& o : r.ops) {
            used |= o.where == OpReport::Where::kVendor &&
                    absl::StrContains(o.detail, litert->library().label());
            for (const SubgraphReport& c : o.callee) visit(c);
          }
        };
    for (const SubgraphReport& r : reports) visit(r);
    if (used) {
      warnings_.push_back(litert->precision_warning());
      std::fprintf(stderr, "graft: warning: %s\n",
                   litert->precision_warning().c_str());
    }
  }

  const Subgraph& main_sg = model.subgraphs[0];
  main_.runtime_ = this;
  main_.executor_ = by_subgraph[0];
  main_.inputs_ = main_sg.inputs;
  main_.outputs_ = main_sg.outputs;
  for (TensorId t : main_sg.inputs) {
    main_.input_names_.push_back(main_sg.tensors[t].name);
  }
  for (TensorId t : main_sg.outputs) {
    main_.output_names_.push_back(main_sg.tensors[t].name);
  }
  for (const tfl::SignatureDefT& def : model.signature_defs) {
    Signature sig;
    sig.runtime_ = this;
    sig.key_ = def.signature_key;
    sig.executor_ = by_subgraph[def.subgraph_index];
    for (const auto& m : def.inputs) {
      sig.inputs_.push_back(static_cast<TensorId>(m->tensor_index));
      sig.input_names_.push_back(m->name);
    }
    for (const auto& m : def.outputs) {
      sig.outputs_.push_back(static_cast<TensorId>(m->tensor_index));
      sig.output_names_.push_back(m->name);
    }
    signatures_.push_back(std::move(sig));
  }
  return absl::OkStatus();
}

absl::Status Runtime::Resize(Signature& sig, const std::vector<Shape>& shapes) {
  const SubgraphId id = sig.executor_->id();
  const Subgraph& sg = model_->subgraphs[id];
  const std::string where = sig.key_.empty()
                                ? std::string("subgraph 0")
                                : absl::StrCat("signature '", sig.key_, "'");
  if (shapes.size() != sig.inputs_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has %d inputs, %d shapes given", where,
                        sig.inputs_.size(), shapes.size()));
  }
  // The new shapes in the subgraph's input order; inputs the signature does
  // not name keep theirs.
  CalleeInputs inputs;
  for (TensorId t : sg.inputs) {
    inputs.shapes.push_back(sig.executor_->tensor(t)->shape);
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const TensorId t = sig.inputs_[i];
    const tfl::TensorT& declared = sg.tensors[t];
    const Shape& want = shapes[i];
    const std::string label =
        absl::StrCat(where, " input ", i, " ('", sig.input_names_[i], "')");
    if (want.size() != declared.shape.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: rank %d given, the model's is %d (%s)", label, want.size(),
          declared.shape.size(), ShapeToString(declared.shape)));
    }
    for (size_t d = 0; d < want.size(); ++d) {
      if (want[d] < 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: dimension %d is %d", label, d, want[d]));
      }
      const bool fixed = d < declared.shape_signature.size() &&
                         declared.shape_signature[d] >= 0;
      if (fixed && want[d] != declared.shape_signature[d]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: dimension %d is fixed at %d by the model (shape signature "
            "%s), %d given",
            label, d, declared.shape_signature[d],
            ShapeToString(declared.shape_signature), want[d]));
      }
    }
    const auto pos = std::find(sg.inputs.begin(), sg.inputs.end(), t);
    if (pos == sg.inputs.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": not an input of subgraph ", id));
    }
    inputs.shapes[pos - sg.inputs.begin()] = want;
  }
  env_->missing.clear();
  env_->cpu_ops.clear();
  GRAFT_ASSIGN_OR_RETURN(
      std::unique_ptr<SubgraphExecutor> fresh,
      SubgraphExecutor::Create(env_.get(), id, &inputs, /*external_io=*/false,
                               /*count_cpu_ops=*/true));
  if (!env_->missing.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        where, " at the new shapes: ", absl::StrJoin(env_->missing, "; ")));
  }
  if (policy_ == AcceleratorPolicy::kRequireAccelerator &&
      !env_->cpu_ops.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "policy kRequireAccelerator: at the new shapes %d ops of %s would "
        "run on CPU:\n  %s",
        env_->cpu_ops.size(), where, absl::StrJoin(env_->cpu_ops, "\n  ")));
  }
  if (policy_ == AcceleratorPolicy::kRequireVendorOps) {
    std::vector<std::string> fallbacks;
    CollectFallbacks(fresh->Report(), &fallbacks);
    if (!fallbacks.empty()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "policy kRequireVendorOps: at the new shapes of %s:\n  %s", where,
          absl::StrJoin(fallbacks, "\n  ")));
    }
  }
  SubgraphExecutor* old = sig.executor_;
  for (auto& e : executors_) {
    if (e.get() == old) e = std::move(fresh);
  }
  SubgraphExecutor* now = nullptr;
  for (auto& e : executors_) {
    if (e->id() == id) now = e.get();
  }
  if (main_.executor_ == old) main_.executor_ = now;
  for (Signature& s : signatures_) {
    if (s.executor_ == old) s.executor_ = now;
  }
  return absl::OkStatus();
}

Signature* Runtime::signature(size_t index) {
  return index < signatures_.size() ? &signatures_[index] : nullptr;
}

absl::StatusOr<Signature*> Runtime::signature(absl::string_view key) {
  std::vector<std::string> keys;
  for (Signature& s : signatures_) {
    if (s.key() == key) return &s;
    keys.push_back(s.key());
  }
  return absl::NotFoundError(absl::StrCat(
      "no signature '", key, "'; the model has ",
      keys.empty() ? std::string("none") : absl::StrJoin(keys, ", ")));
}

RuntimeReport Runtime::Report() const {
  RuntimeReport r;
  r.warnings = warnings_;
  for (const auto& e : executors_) r.subgraphs.push_back(e->Report());
  return r;
}

RuntimeProfile Runtime::Profile() const {
  RuntimeProfile p;
  for (const auto& e : executors_) {
    SubgraphProfile s = e->Profile();
    if (s.runs > 0) p.subgraphs.push_back(std::move(s));
  }
  return p;
}

void Runtime::ResetProfile() {
  for (const auto& e : executors_) e->ResetProfile();
}

}  // namespace graft
