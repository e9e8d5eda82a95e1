// LiteRtBackend: a LiteRT dispatch library (litert_dispatch_library.h)
// serving the runtime as a DispatchBackend, so a model compiled by LiteRT's
// tools (custom ops DISPATCH_OP, metadata LiteRtStamp; core/litert_format.h)
// runs its partitions on the vendor's library exactly as a Graft-compiled
// model runs on a Graft vendor's.
//
// One device context per backend. Per dispatch op, at load: an invocation
// context from (the module's bytes in the mapped file, the entry point, the
// op's input and output counts), then the library's buffer requirements
// for each input and output, given the tensor's type and shape. Per run:
// each tensor's memory is attached as a host-memory tensor buffer
// (registered once and re-registered only when the memory moves), unless
// it does not meet the requirements (alignment, size), in which case an
// aligned staging buffer made at load (or at the first run that needs it)
// stands in, copied in before the invoke and out after.
#ifndef GRAFT_DISPATCH_LITERT_BACKEND_H_
#define GRAFT_DISPATCH_LITERT_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/litert_format.h"
#include "dispatch/dispatch_backend.h"
#include "dispatch/litert_dispatch_library.h"

namespace graft {

class LiteRtBackend : public DispatchBackend {
 public:
  // Opens a device context of `library` for the models whose stamp names
  // `stamp`'s SoC manufacturer (vendor()).
  static absl::StatusOr<std::shared_ptr<LiteRtBackend>> Create(
      std::shared_ptr<LiteRtDispatchLibrary> library, const LiteRtStamp& stamp);
  ~LiteRtBackend() override;

  // The SoC manufacturer as the model's stamp spells it ("IntelOpenVINO").
  absl::string_view vendor() const override { return stamp_.soc_manufacturer; }
  // LiteRT's dispatch libraries take the module as a range of the mapped
  // file, as LiteRT's runtime hands it over (LiteRtMemBuffer's base and
  // offset); LiteRT's tools write modules unaligned, and Intel's library
  // refuses a copy handed over as a buffer of its own.
  bool wants_aligned_module() const override { return false; }
  absl::StatusOr<std::unique_ptr<DispatchExecutable>> Prepare(
      const DispatchOpInfo& op) override;

  const LiteRtDispatchLibrary& library() const { return *library_; }
  // Why this library may compute below the model's precision on this
  // machine (one line naming the cause), or empty when nothing is known.
  const std::string& precision_warning() const { return precision_warning_; }

  struct Device;  // the device context, shared with the executables

 private:
  LiteRtBackend() = default;
  std::shared_ptr<LiteRtDispatchLibrary> library_;
  std::shared_ptr<Device> device_;
  LiteRtStamp stamp_;
  std::string precision_warning_;
};

// True when `a` and `b` name the same LiteRT vendor: equal ignoring case
// and '_' ("IntelOpenVINO", "Intel_Openvino", "IntelOpenvino").
bool SameLiteRtVendor(absl::string_view a, absl::string_view b);

// "libLiteRtDispatch_<suffix>.so" files of `dirs` whose suffix names
// `manufacturer` (SameLiteRtVendor), in directory order.
std::vector<std::string> FindLiteRtDispatchLibraries(
    absl::Span<const std::string> dirs, absl::string_view manufacturer);

// The backend for a model compiled by LiteRT for `stamp`: the library among
// `paths` (explicit files) or found in `dirs`, loaded and confirmed by its
// own vendor id. NotFound says where it looked and what to do; other errors
// say why the library found cannot serve (its refusal, a wrong vendor id).
absl::StatusOr<std::shared_ptr<LiteRtBackend>> LoadLiteRtBackend(
    absl::Span<const std::string> dirs, absl::Span<const std::string> paths,
    const LiteRtStamp& stamp);

// The precision note for a library with vendor id `vendor_id` on a CPU
// whose /proc/cpuinfo flags are `cpu_flags` (exposed for tests).
std::string LiteRtPrecisionWarning(absl::string_view vendor_id,
                                   absl::string_view cpu_flags);

}  // namespace graft

#endif  // GRAFT_DISPATCH_LITERT_BACKEND_H_
