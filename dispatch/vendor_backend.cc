#include "dispatch/vendor_backend.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"

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
LoadVendorBackends(const Manifest& manifest,
                   absl::Span<const std::string> dirs,
                   absl::Span<const std::string> paths,
                   const VendorOptions& options, int num_threads,
                   std::vector<std::string>* missing) {
  std::vector<std::shared_ptr<DispatchBackend>> out;
  std::vector<std::unique_ptr<DispatchLibrary>> explicit_libraries;
  for (const std::string& path : paths) {
    GRAFT_ASSIGN_OR_RETURN(auto library, DispatchLibrary::Load(path));
    explicit_libraries.push_back(std::move(library));
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
      auto found = LoadDispatchLibraryForVendor(dirs, v.vendor);
      if (!found.ok()) {
        if (absl::IsNotFound(found.status())) {
          if (missing) missing->push_back(std::string(found.status().message()));
          continue;
        }
        return found.status();
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
    GRAFT_ASSIGN_OR_RETURN(auto backend, VendorBackend::Create(std::move(library),
                                                              context_options));
    out.push_back(std::move(backend));
  }
  return out;
}

}  // namespace graft
