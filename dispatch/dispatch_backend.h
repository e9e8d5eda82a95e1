// DispatchBackend: the runtime's seam for running dispatch ops (compiled
// partitions, custom code kDispatchCustomCode) on a vendor's accelerator.
//
// One backend serves one vendor. VendorBackend (vendor_backend.h) wraps a
// vendor dispatch library (c_api/graft_dispatch.h) in a DispatchBackend;
// tests implement it directly. The runtime owns no vendor code: it asks the backend of the
// vendor a dispatch op names (DispatchOpOptions::vendor) to prepare the op at
// load time and to execute it at invoke time.
//
// Lifecycle, all on the thread that loads / invokes the runtime:
//   1. CheckCompatibility(manifest entry) once per vendor, before any op of
//      that vendor is prepared (the manifest is the model's record of what
//      compiled it: plugin, SoC, bytecode format, module hashes).
//   2. Prepare(op) once per dispatch op at load: returns the op's executable
//      (the invocation context, in dispatch-ABI terms).
//   3. Execute(inputs, outputs) per invoke. Buffers may move between invokes
//      (the app may bind its own), so Execute gets the tensors each time;
//      shapes and dtypes are those given to Prepare.
//
// A backend that cannot take an op (CheckCompatibility or Prepare failing,
// e.g. an incompatible SoC or an unsupported entry point) is not fatal: the
// runtime runs the op's fallback subgraph on CPU kernels when the policy
// allows (kAllowCpuFallback), and reports why. Under kRequireAccelerator the
// load fails, listing every op that would run on CPU with its reason.
//
// Thread-safety: the runtime calls one backend from one thread at a time;
// a backend shared by several runtimes must serialize internally.
#ifndef GRAFT_DISPATCH_DISPATCH_BACKEND_H_
#define GRAFT_DISPATCH_DISPATCH_BACKEND_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/bytes.h"
#include "core/compiled_format.h"
#include "core/model.h"
#include "dispatch/tensor.h"

namespace graft {

// Everything known at load time about one dispatch op. Borrowed: valid
// during Prepare only, except `module` and `model`, which live as long as
// the runtime (the executable may keep them).
struct DispatchOpInfo {
  SubgraphId subgraph = 0;
  OpId op_index = 0;
  const DispatchOpOptions* options = nullptr;
  // The bytecode module, 64-byte aligned: zero-copy in the mapped model
  // file (where Graft writes it aligned), or a copy where the file does not
  // align it; as the file stores it for a backend that does not want it
  // aligned (DispatchBackend::wants_aligned_module).
  Bytes module;
  // The vendor's manifest entry; null when the model has no manifest.
  const ManifestVendor* manifest = nullptr;
  // The op's tensors with their dtypes and static shapes; data pointers are
  // not final until Execute.
  absl::Span<const Tensor* const> inputs;
  absl::Span<const Tensor* const> outputs;
  // The whole model (Model::file is the mapping: base, size, descriptor),
  // so bytecode can refer to weights in place by file offset.
  const Model* model = nullptr;
  // Identifies the load (one Runtime) this op belongs to: unique in the
  // process and never reused, unlike `model`'s address, so a backend shared
  // by several runtimes may key per-load tables on it. 0: unknown.
  uint64_t load_id = 0;
  // The runtime is profiling (RuntimeOptions::profiling): record the
  // vendor's own time of each Execute for LastVendorTimeNs, if the backend
  // can.
  bool profiling = false;
};

// One span a vendor timed inside an Execute: an event of its dispatch
// library's profile (graft_dispatch_profile_event_t).
struct VendorSpan {
  std::string name;
  // The instruction in the unit of the plugin's debug map (the manifest's
  // ManifestVendor::debug_map); 0 for a span of no single instruction.
  uint64_t vendor_location = 0;
  // On the library's monotonic clock: only differences mean anything.
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// One prepared dispatch op.
class DispatchExecutable {
 public:
  virtual ~DispatchExecutable() = default;
  // Runs the op: reads `inputs`' data, writes `outputs`' data. Allocates
  // nothing per call in a good backend; returns an error status (never
  // aborts) on failure.
  virtual absl::Status Execute(absl::Span<const Tensor* const> inputs,
                               absl::Span<Tensor* const> outputs) = 0;
  // The vendor's own account of the last Execute, in nanoseconds, for an
  // op prepared with DispatchOpInfo::profiling; -1 when the backend cannot
  // tell (the default). Called after Execute, only while profiling.
  virtual int64_t LastVendorTimeNs() const { return -1; }
  // The vendor's spans of the last Execute, in start order, for an op
  // prepared with DispatchOpInfo::profiling: replaces *out and returns true,
  // or returns false when the backend cannot tell (the default). Called
  // after Execute, only while profiling.
  virtual bool LastVendorSpans(std::vector<VendorSpan>* out) const {
    return false;
  }
};

// Options for vendor dispatch libraries, by vendor name: KEY=VALUE pairs
// the library documents in its info (graft_dispatch_info_t.options).
using VendorOptions =
    std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

class DispatchBackend {
 public:
  virtual ~DispatchBackend() = default;

  // The vendor name dispatch ops use (DispatchOpOptions::vendor).
  virtual absl::string_view vendor() const = 0;

  // Checks the model's manifest entry for this vendor (plugin and bytecode
  // versions, SoC, module hashes) before any op is prepared. The default
  // accepts anything.
  virtual absl::Status CheckCompatibility(const ManifestVendor& manifest) {
    return absl::OkStatus();
  }

  // Prepares one op. An error makes the op fall back (see above).
  virtual absl::StatusOr<std::unique_ptr<DispatchExecutable>> Prepare(
      const DispatchOpInfo& op) = 0;

  // Whether DispatchOpInfo::module must be 64-byte aligned (Graft's ABI
  // promises vendors so; the runtime copies a module the file leaves
  // unaligned). False: the module as the file stores it.
  virtual bool wants_aligned_module() const { return true; }
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_DISPATCH_BACKEND_H_
