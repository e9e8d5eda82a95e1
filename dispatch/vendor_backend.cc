#include "dispatch/vendor_backend.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "dispatch/memory_planner.h"

namespace graft {
namespace {

class VendorExecutable : public DispatchExecutable {
 public:
  explicit VendorExecutable(std::unique_ptr<Invocation> invocation)
      : invocation_(std::move(invocation)) {}

  absl::Status Execute(absl::Span<const Tensor* const> inputs,
                       absl::Span<Tensor* const> outputs) override {
    // Attaching an unchanged pointer costs a comparison (Invocation skips
    // it), so binding every call keeps app-bound buffers correct for free.
    for (size_t i = 0; i < inputs.size(); ++i) {
      GRAFT_RETURN_IF_ERROR(
          invocation_->AttachInput(i, inputs[i]->raw_data, inputs[i]->bytes));
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      GRAFT_RETURN_IF_ERROR(
          invocation_->AttachOutput(i, outputs[i]->raw_data, outputs[i]->bytes));
    }
    return invocation_->Invoke();
  }

  // The span of the last run's profile events (libraries with
  // GRAFT_DISPATCH_CAPABILITY_PROFILING, invocations created profiling).
  int64_t LastVendorTimeNs() const override {
    absl::StatusOr<std::vector<ProfileEvent>> events = invocation_->Profile();
    if (!events.ok() || events->empty()) return -1;
    uint64_t start = UINT64_MAX, end = 0;
    for (const ProfileEvent& e : *events) {
      start = std::min(start, e.start_ns);
      end = std::max(end, e.end_ns);
    }
    return static_cast<int64_t>(end - start);
  }

  bool LastVendorSpans(std::vector<VendorSpan>* out) const override {
    absl::StatusOr<std::vector<ProfileEvent>> events = invocation_->Profile();
    if (!events.ok()) return false;
    out->clear();
    for (ProfileEvent& e : *events) {
      out->push_back(
          {std::move(e.name), e.vendor_location, e.start_ns, e.end_ns});
    }
    return true;
  }

 private:
  std::unique_ptr<Invocation> invocation_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<VendorBackend>> VendorBackend::Create(
    std::unique_ptr<DispatchLibrary> library,
    const std::vector<std::pair<std::string, std::string>>& context_options) {
  std::shared_ptr<VendorBackend> backend(new VendorBackend());
  GRAFT_ASSIGN_OR_RETURN(backend->context_,
                         library->CreateDeviceContext(context_options));
  backend->library_ = std::move(library);
  return backend;
}

absl::string_view VendorBackend::vendor() const {
  return library_->info().vendor;
}

absl::Status VendorBackend::CheckCompatibility(const ManifestVendor& manifest) {
  return library_->CheckStamp(manifest);
}

absl::StatusOr<std::unique_ptr<DispatchExecutable>> VendorBackend::Prepare(
    const DispatchOpInfo& op) {
  InvocationSpec spec;
  spec.bytecode = op.module.span();
  spec.entry_point = op.options->entry_point;
  spec.num_inputs = op.inputs.size();
  spec.num_outputs = op.outputs.size();
  spec.profiling = op.profiling;
  if (op.model != nullptr && op.model->file != nullptr) {
    // The mapping goes to the vendor only when the bytecode lies in it: a
    // model compiled at load time holds its modules in memory, while its
    // file is still the original, uncompiled one.
    const absl::Span<const uint8_t> file = op.model->file->span();
    const auto begin = reinterpret_cast<uintptr_t>(file.data());
    const auto at = reinterpret_cast<uintptr_t>(spec.bytecode.data());
    if (at >= begin && at - begin <= file.size() &&
        spec.bytecode.size() <= file.size() - (at - begin)) {
      spec.model = file;
      spec.model_fd = op.model->file->fd();
    }
    spec.keep_alive = op.model->file;
  }
  if (op.model != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    // Without a load id (0), the table is built for this op alone.
    if (op.load_id == 0 || buffers_load_ != op.load_id) {
      auto spans = std::make_shared<std::vector<graft_byte_span_t>>();
      spans->reserve(op.model->buffers.size());
      for (const Buffer& b : op.model->buffers) {
        spans->push_back({b.data.empty() ? nullptr : b.data.data(), b.data.size()});
      }
      buffers_load_ = op.load_id;
      model_buffers_ = std::move(spans);
    }
    spec.model_buffers = model_buffers_;
  }
  GRAFT_ASSIGN_OR_RETURN(std::unique_ptr<Invocation> invocation,
                         context_->CreateInvocation(spec));
  // The vendor's idea of each buffer must match the model's before any run.
  auto check = [&](const char* what, size_t i, const Tensor& t,
                   const BufferRequirements& r) -> absl::Status {
    // The runtime's own buffers are kArenaAlignment-aligned; constants lie
    // where the file puts them. A stricter demand is refused here (the op
    // falls back) rather than failing at invoke.
    if (r.alignment > kArenaAlignment ||
        (t.constant &&
         reinterpret_cast<uintptr_t>(t.raw_data) % r.alignment != 0)) {
      return absl::FailedPreconditionError(absl::StrCat(
          library_->label(), ": entry point '", spec.entry_point, "' ", what,
          " ", i, " needs ", r.alignment, "-byte aligned memory; the runtime ",
          t.constant
              ? "has this constant at a less aligned address in the "
                "model file"
              : absl::StrCat("aligns buffers to ", kArenaAlignment, " bytes")));
    }
    if (r.size != t.bytes ||
        r.element_type != static_cast<int32_t>(t.type)) {
      return absl::FailedPreconditionError(absl::StrCat(
          library_->label(), ": entry point '", spec.entry_point, "' ", what,
          " ", i, " wants ", r.size, " bytes of element type ", r.element_type,
          ", the model has ", t.bytes, " bytes of type ",
          static_cast<int>(t.type)));
    }
    return absl::OkStatus();
  };
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    GRAFT_RETURN_IF_ERROR(
        check("input", i, *op.inputs[i], invocation->input_requirements(i)));
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    GRAFT_RETURN_IF_ERROR(
        check("output", i, *op.outputs[i], invocation->output_requirements(i)));
  }
  return std::unique_ptr<DispatchExecutable>(
      new VendorExecutable(std::move(invocation)));
}

absl::StatusOr<std::vector<std::shared_ptr<DispatchBackend>>>
LoadVendorBackends(const Manifest& manifest, absl::Span<const std::string> dirs,
                   absl::Span<const std::string> paths,
                   const VendorOptions& options, int num_threads,
                   std::vector<std::string>* missing,
                   std::vector<DispatchLoadFailure>* failed) {
  // Records a library that did not load; an error unless `failed` is given.
  auto failure = [&](const std::string& vendor,
                     const absl::Status& st) -> absl::Status {
    if (failed == nullptr) return st;
    failed->push_back({vendor, std::string(st.message())});
    return absl::OkStatus();
  };
  std::vector<std::shared_ptr<DispatchBackend>> out;
  std::vector<std::unique_ptr<DispatchLibrary>> explicit_libraries;
  for (const std::string& path : paths) {
    absl::StatusOr<std::unique_ptr<DispatchLibrary>> library =
        DispatchLibrary::Load(path);
    if (!library.ok()) {
      GRAFT_RETURN_IF_ERROR(failure("", library.status()));
      continue;
    }
    explicit_libraries.push_back(*std::move(library));
  }
  for (const ManifestVendor& v : manifest.vendors) {
    std::unique_ptr<DispatchLibrary> library;
    for (auto& candidate : explicit_libraries) {
      if (candidate != nullptr && candidate->info().vendor == v.vendor) {
        library = std::move(candidate);
        break;
      }
    }
    if (library == nullptr) {
      // Not there is not a failure; there but not loading is (dlopen says
      // NotFound for a file it cannot map, too).
      absl::StatusOr<std::string> path = FindDispatchLibrary(dirs, v.vendor);
      if (absl::IsNotFound(path.status())) {
        if (missing) missing->push_back(std::string(path.status().message()));
        continue;
      }
      absl::StatusOr<std::unique_ptr<DispatchLibrary>> found =
          path.ok()
              ? LoadDispatchLibraryForVendor(dirs, v.vendor)
              : absl::StatusOr<std::unique_ptr<DispatchLibrary>>(path.status());
      if (!found.ok()) {
        GRAFT_RETURN_IF_ERROR(failure(v.vendor, found.status()));
        continue;
      }
      library = std::move(*found);
    }
    std::vector<std::pair<std::string, std::string>> context_options;
    if (auto it = options.find(v.vendor); it != options.end()) {
      context_options = it->second;
    }
    const auto& info_options = library->info().options;
    const bool takes_threads =
        std::any_of(info_options.begin(), info_options.end(),
                    [](const DispatchInfo::Option& o) { return o.name == "num_threads"; });
    const bool threads_given =
        std::any_of(context_options.begin(), context_options.end(),
                    [](const auto& kv) { return kv.first == "num_threads"; });
    if (takes_threads && !threads_given) {
      context_options.emplace_back("num_threads", absl::StrCat(num_threads));
    }
    absl::StatusOr<std::shared_ptr<VendorBackend>> backend =
        VendorBackend::Create(std::move(library), context_options);
    if (!backend.ok()) {
      GRAFT_RETURN_IF_ERROR(failure(v.vendor, backend.status()));
      continue;
    }
    out.push_back(*std::move(backend));
  }
  return out;
}

}  // namespace graft
