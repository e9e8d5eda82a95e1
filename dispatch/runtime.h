// Runtime: load a .tflite model (compiled by Graft or not) and run it.
//
//   graft::RuntimeOptions opts;
//   opts.num_threads = 4;
//   auto rt = graft::Runtime::Load("model.tflite", opts);
//   if (!rt.ok()) { /* rt.status() says which op lacks a kernel, ... */ }
//   float* in = (*rt)->input(0)->data<float>();
//   ... fill in ...
//   absl::Status st = (*rt)->Invoke();
//   const float* out = (*rt)->output(0)->data<float>();
//   std::cout << (*rt)->Report().ToString();
//
// Load memory-maps the file (weights and bytecode stay in the mapping),
// prepares every op of subgraph 0 and of each signature's subgraph (kernel
// selection, shape inference, weight packing), computes ops whose inputs are
// all constant, and plans one arena per subgraph. Everything that can fail
// for a model fails here, with a message naming the subgraph, op index, op
// name and dtypes; Invoke allocates nothing. The exception is an output
// shape that depends on values computed at invoke (TOPK_V2 with k from an
// input, WHERE, RESHAPE to a computed shape): that op and the ops it feeds
// are prepared again at invoke, their buffers grow as needed, and their
// shape errors fail that Invoke; such outputs are read after Invoke and
// cannot be bound.
//
// Dispatch ops (custom code GRAFT_DISPATCH) run on the DispatchBackend of
// the vendor they name (RuntimeOptions::dispatch_backends). Models compiled
// by LiteRT's tools (custom code DISPATCH_OP, metadata LiteRtStamp) run on
// the LiteRT dispatch library of the stamp's SoC manufacturer
// (libLiteRtDispatch_<Vendor>.so in dispatch_dirs; litert_backend.h); their
// ops have no CPU fallback unless Graft wrote one. Without a backend, or
// when the backend refuses the op, they run their fallback subgraph on CPU
// kernels (policy kAllowCpuFallback), or Load fails listing every op that
// would run on CPU (kRequireAccelerator). STABLEHLO_COMPOSITE ops run their
// decomposition subgraph.
//
// Control flow and resource variables follow TFLite: IF runs its then or
// else subgraph, WHILE its cond and body subgraphs, CALL_ONCE its init
// subgraph once per Runtime (at the first Invoke that reaches it, never at
// load). VAR_HANDLE (container, shared_name) names a variable shared by all
// subgraphs and signatures of one Runtime; it keeps its value across Invoke
// calls; READ_VARIABLE before any ASSIGN_VARIABLE fails that Invoke. Shapes
// stay static: a loop body that changes a loop variable's shape, IF branches
// of different shapes, and variables whose dtype and shape are not fixed at
// load are refused at load.
//
// Thread-safety: a Runtime is used by one thread at a time (Invoke, Bind*,
// SetInputData, ResizeInputs, tensor access, of any of its signatures). A
// call of the first four while another runs on a second thread is refused
// with FailedPrecondition (a guard costing one atomic exchange per call),
// rather than corrupting the running one; tensor access cannot be guarded.
// To run one model on several threads, load one Runtime per thread. They
// can share:
// - the mapped file: MappedFile::Open(path) once, then per runtime
//   LoadModelFromBytes(Bytes::View(file->span(), file), path) with
//   model.file = file, and LoadModel: weights and bytecode stay in the one
//   mapping (each runtime parses the flatbuffer, packs weights and plans its
//   own arena);
// - vendor backends: RuntimeOptions::dispatch_backends (a VendorBackend
//   prepares from several loading threads, and the dispatch ABI lets
//   distinct invocations run concurrently); backends the runtime loads
//   itself from dispatch_dirs are its own.
// Runtimes are loaded and destroyed concurrently as well.
#ifndef GRAFT_DISPATCH_RUNTIME_H_
#define GRAFT_DISPATCH_RUNTIME_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/compiled_format.h"
#include "core/model.h"
#include "dispatch/dispatch_backend.h"
#include "dispatch/runtime_report.h"
#include "dispatch/tensor.h"

namespace graft {

class Runtime;
class SubgraphExecutor;
class ThreadPool;
struct LoadEnv;

enum class AcceleratorPolicy {
  // Ops no accelerator takes run on Graft's CPU kernels.
  kAllowCpuFallback,
  // Load fails unless every op runs on a vendor backend (ops computed once
  // at load from constants do not count).
  kRequireAccelerator,
  // Load fails if a dispatch op (compiled for a vendor) would run its
  // fallback on the CPU; ops no vendor took run on the CPU as usual.
  kRequireVendorOps,
};

struct RuntimeOptions {
  // Threads for CPU kernels, counting the invoking thread (1 = no threads).
  int num_threads = 1;
  AcceleratorPolicy policy = AcceleratorPolicy::kAllowCpuFallback;
  // Vendor dispatch backends, at most one per vendor name. Shared so one
  // backend (one loaded vendor library) can serve several runtimes.
  std::vector<std::shared_ptr<DispatchBackend>> dispatch_backends;
  // Where to find vendor dispatch libraries (libgraft_dispatch_<vendor>.so)
  // for the vendors the model's manifest names, and LiteRT dispatch
  // libraries (libLiteRtDispatch_<Vendor>.so, the suffix matched to the
  // LiteRtStamp's manufacturer ignoring case and '_'), and explicit library
  // files.
  std::vector<std::string> dispatch_dirs;
  std::vector<std::string> dispatch_paths;
  // The vendor priority list, highest first ("qualcomm", "xnnpack"; names as
  // the vendors' plugins and dispatch libraries report them). One list for
  // the whole app: on-device compile takes it as OnDeviceOptions::vendors
  // (plugins/on_device.h), where an op several plugins take goes to the
  // vendor named first and vendors not named are not used; here, dispatch
  // libraries of vendors not named are not loaded from dispatch_dirs or
  // dispatch_paths, so a model's dispatch ops compiled for them run their
  // fallback on the CPU (one warning per such vendor, and the per-op
  // fallback warnings; kRequireVendorOps fails the load instead). Backends
  // given in dispatch_backends are used whatever the list says. Names no
  // library or model has are ignored, so one list can serve many devices.
  // Empty (the default): every vendor the model names whose library is found.
  std::vector<std::string> vendor_priority;
  // Device-context options for the libraries found there, by vendor. A
  // library whose info lists a "num_threads" option also gets num_threads
  // set to `num_threads` above unless given here.
  VendorOptions dispatch_options;
  // Time every op of every Invoke (Runtime::Profile). Off, it costs nothing
  // per op (one branch per Invoke); on, two clock reads per op and one
  // stored sample per op and run.
  bool profiling = false;
};

// The inputs and outputs of one entry point: a signature of the model, or
// subgraph 0's own inputs and outputs. Owned by the Runtime.
class Signature {
 public:
  const std::string& key() const { return key_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const std::string& input_name(size_t i) const { return input_names_[i]; }
  const std::string& output_name(size_t i) const { return output_names_[i]; }

  // Null when out of range / unknown. The tensor's data is valid until the
  // next Bind* of it; output data after Invoke returns OK.
  Tensor* input(size_t i);
  Tensor* output(size_t i);
  Tensor* input(absl::string_view name);
  Tensor* output(absl::string_view name);

  // Zero-copy I/O: the runtime reads input i from / writes output i to the
  // caller's buffer, which must hold exactly the tensor's bytes, be aligned
  // to its element size and stay valid across Invoke calls until rebound.
  // Null restores the runtime's own buffer.
  absl::Status BindInput(size_t i, void* data, size_t bytes);
  absl::Status BindOutput(size_t i, void* data, size_t bytes);

  // Copies `bytes` into input i: exactly its size, or for a STRING input
  // (sized by its values, so never bound) a buffer in string_tensor.h's
  // layout (PackStrings) with one string per element of its shape. STRING
  // outputs are read after Invoke (UnpackStrings on the tensor's bytes).
  absl::Status SetInputData(size_t i, absl::Span<const uint8_t> bytes);

  absl::Status Invoke();

  // Re-prepares this entry point for new input shapes, one per input in
  // signature order (TFLite's ResizeInputTensor + AllocateTensors): kernels
  // are prepared again, constants refolded and the arena re-planned. A
  // dimension the model declares fixed (its shape_signature is not -1)
  // must keep its size; the rank must stay. On success every tensor pointer
  // and binding of this entry point (and of others on the same subgraph) is
  // reset: bind or fetch them again. On failure nothing changes. A dispatch
  // op whose vendor cannot take the new shapes runs its fallback on CPU
  // (kAllowCpuFallback) or the resize fails (kRequireAccelerator).
  // Allocates: not for the invoke path.
  absl::Status ResizeInputs(const std::vector<Shape>& shapes);

 private:
  friend class Runtime;
  Runtime* runtime_ = nullptr;
  std::string key_;
  SubgraphExecutor* executor_ = nullptr;
  std::vector<TensorId> inputs_, outputs_;
  std::vector<std::string> input_names_, output_names_;
};

class Runtime {
 public:
  // Loads and prepares the model at `path`.
  static absl::StatusOr<std::unique_ptr<Runtime>> Load(
      const std::string& path, const RuntimeOptions& options = {});
  // As Load, for a model already in memory (built by a test, or produced by
  // on-device compilation). Takes ownership.
  static absl::StatusOr<std::unique_ptr<Runtime>> LoadModel(
      Model model, const RuntimeOptions& options = {});

  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Subgraph 0's inputs and outputs (its tensor names are the I/O names).
  Signature* main() { return &main_; }
  size_t num_inputs() const { return main_.num_inputs(); }
  size_t num_outputs() const { return main_.num_outputs(); }
  Tensor* input(size_t i) { return main_.input(i); }
  Tensor* output(size_t i) { return main_.output(i); }
  absl::Status BindInput(size_t i, void* data, size_t bytes) {
    return main_.BindInput(i, data, bytes);
  }
  absl::Status BindOutput(size_t i, void* data, size_t bytes) {
    return main_.BindOutput(i, data, bytes);
  }
  absl::Status SetInputData(size_t i, absl::Span<const uint8_t> bytes) {
    return main_.SetInputData(i, bytes);
  }
  absl::Status Invoke() { return main_.Invoke(); }
  absl::Status ResizeInputs(const std::vector<Shape>& shapes) {
    return main_.ResizeInputs(shapes);
  }

  // The model's signatures, in model order.
  size_t num_signatures() const { return signatures_.size(); }
  Signature* signature(size_t index);
  // NotFound (listing the keys there are) for an unknown key.
  absl::StatusOr<Signature*> signature(absl::string_view key);

  RuntimeReport Report() const;
  // With RuntimeOptions::profiling: per-op timings of every Invoke (of any
  // signature) since load or the last ResetProfile(); empty otherwise.
  RuntimeProfile Profile() const;
  // Drops the timings recorded so far (e.g. after warm-up runs).
  void ResetProfile();
  const Model& model() const { return *model_; }

 private:
  friend class Signature;
  Runtime();
  absl::Status Init(const RuntimeOptions& options);
  absl::Status Resize(Signature& sig, const std::vector<Shape>& shapes);

  std::unique_ptr<Model> model_;
  std::unique_ptr<Manifest> manifest_;
  std::vector<std::shared_ptr<DispatchBackend>> backends_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<LoadEnv> env_;
  AcceleratorPolicy policy_ = AcceleratorPolicy::kAllowCpuFallback;
  // Held by the thread running Invoke, Bind*, SetInputData or ResizeInputs
  // (runtime.cc's InUse): a second thread's call is refused.
  class InUse;
  std::atomic<bool> in_use_{false};
  // One executor per entry subgraph, in subgraph order.
  std::vector<std::unique_ptr<SubgraphExecutor>> executors_;
  Signature main_;
  std::vector<Signature> signatures_;
  // Said at load (and on stderr): e.g. a vendor computing below the model's
  // precision.
  std::vector<std::string> warnings_;
};

}  // namespace graft

#endif  // GRAFT_DISPATCH_RUNTIME_H_
