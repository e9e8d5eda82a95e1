// VendorBackend: a vendor dispatch library (vendor_dispatch.h) serving the
// runtime as a DispatchBackend. One device context per backend; one
// invocation per dispatch op, created at load; Execute attaches the op's
// current buffers (a no-op when they did not move) and invokes.
#ifndef GRAFT_DISPATCH_VENDOR_BACKEND_H_
#define GRAFT_DISPATCH_VENDOR_BACKEND_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/compiled_format.h"
#include "dispatch/dispatch_backend.h"
#include "dispatch/vendor_dispatch.h"

namespace graft {

class VendorBackend : public DispatchBackend {
 public:
  // Wraps `library` with a fresh device context made with
  // `context_options`.
  static absl::StatusOr<std::shared_ptr<VendorBackend>> Create(
      std::unique_ptr<DispatchLibrary> library,
      const std::vector<std::pair<std::string, std::string>>& context_options = {});

  absl::string_view vendor() const override;
  absl::Status CheckCompatibility(const ManifestVendor& manifest) override;
  absl::StatusOr<std::unique_ptr<DispatchExecutable>> Prepare(
      const DispatchOpInfo& op) override;

 private:
  VendorBackend() = default;
  std::unique_ptr<DispatchLibrary> library_;
  std::unique_ptr<DeviceContext> context_;
  // The buffers of the model last prepared, by buffer id (InvocationSpec::
  // model_buffers), built once per load (DispatchOpInfo::load_id) and
  // shared by its invocations.
  // Guarded by mu_: runtimes sharing this backend may load concurrently.
  std::mutex mu_;
  uint64_t buffers_load_ = 0;
  std::shared_ptr<const std::vector<graft_byte_span_t>> model_buffers_;
};

// A dispatch library that was there but did not load: its vendor (empty
// for an explicit path that failed before saying it) and why (dlopen's
// message, an ABI mismatch, a failing create).
struct DispatchLoadFailure {
  std::string vendor;
  std::string message;
};

// Loads a backend for each vendor the model's manifest names, from `dirs`
// (libgraft_dispatch_<vendor>.so) or `paths` (explicit libraries, matched by
// the vendor they report). A vendor with no library is left out, so its ops
// fall back to CPU (or fail under kRequireAccelerator); `missing` receives
// one line per such vendor saying what to do. A library that exists but
// fails to load (not an ELF object, a missing dependency, another ABI, a
// failing create or device context) is an error, unless `failed` is given:
// it is then recorded there and its vendor left out like a missing one, so
// the runtime can warn or, under a policy requiring vendors, fail. Each
// library's device context gets `options[vendor]`, plus num_threads =
// `num_threads` when the library lists a "num_threads" option and
// `options` does not set it.
absl::StatusOr<std::vector<std::shared_ptr<DispatchBackend>>>
LoadVendorBackends(const Manifest& manifest, absl::Span<const std::string> dirs,
                   absl::Span<const std::string> paths,
                   const VendorOptions& options, int num_threads,
                   std::vector<std::string>* missing,
                   std::vector<DispatchLoadFailure>* failed = nullptr);

}  // namespace graft

#endif  // GRAFT_DISPATCH_VENDOR_BACKEND_H_
