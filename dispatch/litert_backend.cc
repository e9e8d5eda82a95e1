#include "dispatch/litert_backend.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status.h"

namespace graft {

using namespace litert_abi;  // NOLINT: the ABI's names are its own prefix

namespace {

constexpr char kLibraryPrefix[] = "libLiteRtDispatch_";
constexpr char kLibrarySuffix[] = ".so";

std::string Normalize(absl::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '_') continue;
    out.push_back(
        static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// The .tflite schema's TensorType to LiteRT's (TFLite's) element type, for
// a tensor a dispatch library reads or writes as a flat buffer.
absl::StatusOr<LiteRtElementType> ElementType(tfl::TensorType t) {
  const LiteRtElementType e = LiteRtElementTypeOf(t);
  if (e == kLiteRtElementTypeNone || e == kLiteRtElementTypeTfString ||
      e == kLiteRtElementTypeTfResource || e == kLiteRtElementTypeTfVariant ||
      e == kLiteRtElementTypeInt4 || e == kLiteRtElementTypeInt2) {
    return absl::UnimplementedError(
        absl::StrCat("tensor type ", tfl::EnumNameTensorType(t),
                     " has no fixed-size LiteRT element type"));
  }
  return e;
}

absl::StatusOr<LiteRtRankedTensorType> RankedType(const Tensor& t) {
  LiteRtRankedTensorType type = {};
  GRAFT_ASSIGN_OR_RETURN(type.element_type, ElementType(t.type));
  if (t.shape.size() > static_cast<size_t>(kLiteRtTensorMaxRank)) {
    return absl::UnimplementedError(absl::StrFormat(
        "rank %d is over LiteRT's %d", t.shape.size(), kLiteRtTensorMaxRank));
  }
  type.layout.rank = static_cast<unsigned int>(t.shape.size());
  type.layout.has_strides = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    type.layout.dimensions[d] = t.shape[d];
  }
  return type;
}

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t, FreeDeleter>;

AlignedBytes AllocateAligned(size_t size, size_t alignment) {
  const size_t a = std::max<size_t>(alignment, sizeof(void*));
  const size_t rounded = (std::max<size_t>(size, 1) + a - 1) / a * a;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(a, rounded));
  if (p != nullptr) std::memset(p, 0, rounded);
  return AlignedBytes(p);
}

}  // namespace

struct LiteRtBackend::Device {
  std::shared_ptr<LiteRtDispatchLibrary> library;
  LiteRtDispatchDeviceContext context = nullptr;
  ~Device() {
    if (context != nullptr) {
      std::lock_guard<std::mutex> lock(library->mutex());
      library->api().device_context_destroy(context);
    }
  }
};

namespace {

class LiteRtExecutable : public DispatchExecutable {
 public:
  struct Io {
    LiteRtRankedTensorType type = {};
    LiteRtBufferRequirements requirements;
    // Stands in for the tensor's memory when that does not meet the
    // requirements.
    AlignedBytes staging;
    // What is attached now.
    const void* attached_memory = nullptr;
    LiteRtTensorBuffer buffer = nullptr;
    LiteRtTensorBufferHandle handle = 0;
    bool registered = false;
    // A buffer of the library's own type (its handlers made it), attached
    // once at load; runs copy through lock / unlock.
    HwMemoryInfoPtr custom = nullptr;
    LiteRtTensorBufferType custom_type = kLiteRtTensorBufferTypeUnknown;
  };

  LiteRtExecutable(std::shared_ptr<LiteRtBackend::Device> device,
                   std::string label)
      : device_(std::move(device)), label_(std::move(label)) {}

  ~LiteRtExecutable() override {
    const LiteRtDispatchInterface& api = device_->library->api();
    std::lock_guard<std::mutex> lock(device_->library->mutex());
    for (bool input : {true, false}) {
      std::vector<Io>& ios = input ? inputs_ : outputs_;
      for (size_t i = 0; i < ios.size(); ++i) Release(api, input, i, ios[i]);
    }
    if (invocation_ != nullptr) api.invocation_context_destroy(invocation_);
    const LiteRtCustomTensorBufferHandlersDef* h = device_->library->handlers();
    for (auto* ios : {&inputs_, &outputs_}) {
      for (Io& io : *ios) {
        if (io.custom != nullptr && h != nullptr) {
          h->destroy_func(io.custom);
        }
      }
    }
  }

  absl::Status Execute(absl::Span<const Tensor* const> inputs,
                       absl::Span<Tensor* const> outputs) override {
    const LiteRtDispatchLibrary& lib = *device_->library;
    std::lock_guard<std::mutex> lock(lib.mutex());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];
      Io& io = inputs_[i];
      if (io.custom != nullptr) {
        GRAFT_RETURN_IF_ERROR(CopyCustom(io, "input", i, t.raw_data, t.bytes,
                                         /*to_vendor=*/true));
        continue;
      }
      const uint8_t* memory = t.raw_data;
      if (!Fits(io, memory, t.bytes)) {
        GRAFT_RETURN_IF_ERROR(EnsureStaging(io, "input", i));
        std::memcpy(io.staging.get(), t.raw_data, t.bytes);
        memory = io.staging.get();
      }
      GRAFT_RETURN_IF_ERROR(Attach(true, i, io, memory));
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor& t = *outputs[i];
      Io& io = outputs_[i];
      if (io.custom != nullptr) continue;
      uint8_t* memory = t.raw_data;
      if (!Fits(io, memory, t.bytes)) {
        GRAFT_RETURN_IF_ERROR(EnsureStaging(io, "output", i));
        memory = io.staging.get();
      }
      GRAFT_RETURN_IF_ERROR(Attach(false, i, io, memory));
    }
    GRAFT_RETURN_IF_ERROR(
        lib.Check(lib.api().invoke(invocation_), "invoke", label_));
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor& t = *outputs[i];
      Io& io = outputs_[i];
      if (io.custom != nullptr) {
        GRAFT_RETURN_IF_ERROR(CopyCustom(io, "output", i, t.raw_data, t.bytes,
                                         /*to_vendor=*/false));
      } else if (io.attached_memory != t.raw_data) {
        std::memcpy(t.raw_data, io.staging.get(), t.bytes);
      }
    }
    return absl::OkStatus();
  }

  LiteRtDispatchInvocationContext invocation_ = nullptr;
  std::vector<Io> inputs_, outputs_;

  // Makes `io`'s buffer of the library's type `type` and attaches it for
  // good (at load).
  absl::Status AttachCustom(bool input, size_t i, Io& io,
                            LiteRtTensorBufferType type) {
    const LiteRtDispatchLibrary& lib = *device_->library;
    const LiteRtCustomTensorBufferHandlersDef* h = lib.handlers();
    std::lock_guard<std::mutex> lock(lib.mutex());
    GRAFT_RETURN_IF_ERROR(lib.Check(
        h->create_func(nullptr, nullptr, &io.type, type, io.requirements.size,
                       io.requirements.size, &io.custom),
        "create_func (custom tensor buffer)",
        absl::StrCat("for ", input ? "input " : "output ", i, " of ", label_)));
    if (io.custom == nullptr) {
      return absl::InternalError(absl::StrCat(
          lib.label(), ": create_func gave no buffer for ", label_));
    }
    io.buffer = NewHostTensorBuffer(io.type, nullptr, io.requirements.size);
    io.buffer->buffer_type = type;
    io.buffer->hw_memory = io.custom;
    const LiteRtDispatchInterface& api = lib.api();
    GRAFT_RETURN_IF_ERROR(lib.Check(
        api.register_tensor_buffer(device_->context, io.buffer, &io.handle),
        "register_tensor_buffer",
        absl::StrCat("for ", input ? "input " : "output ", i, " of ", label_)));
    io.registered = true;
    const int index = static_cast<int>(i);
    GRAFT_RETURN_IF_ERROR(
        input ? lib.Check(api.attach_input(invocation_, index, io.handle),
                          "attach_input",
                          absl::StrCat("for input ", i, " of ", label_))
              : lib.Check(api.attach_output(invocation_, index, io.handle),
                          "attach_output",
                          absl::StrCat("for output ", i, " of ", label_)));
    io.attached_memory = io.custom;
    return absl::OkStatus();
  }

 private:
  // Copies a tensor into (or out of) `io`'s custom buffer through the
  // library's lock / unlock.
  absl::Status CopyCustom(Io& io, const char* what, size_t i, uint8_t* data,
                          size_t bytes, bool to_vendor) {
    const LiteRtDispatchLibrary& lib = *device_->library;
    const LiteRtCustomTensorBufferHandlersDef* h = lib.handlers();
    void* mapped = nullptr;
    GRAFT_RETURN_IF_ERROR(
        lib.Check(h->lock_func(io.custom,
                               to_vendor ? kLiteRtTensorBufferLockModeWrite
                                         : kLiteRtTensorBufferLockModeRead,
                               &mapped),
                  "lock_func (custom tensor buffer)",
                  absl::StrCat("for ", what, " ", i, " of ", label_)));
    if (mapped == nullptr) {
      h->unlock_func(io.custom);
      return absl::InternalError(
          absl::StrCat(lib.label(), ": lock_func mapped no memory for ", what,
                       " ", i, " of ", label_));
    }
    if (to_vendor) {
      std::memcpy(mapped, data, bytes);
    } else {
      std::memcpy(data, mapped, bytes);
    }
    return lib.Check(h->unlock_func(io.custom),
                     "unlock_func (custom tensor buffer)",
                     absl::StrCat("for ", what, " ", i, " of ", label_));
  }

  static bool Fits(const Io& io, const void* memory, size_t bytes) {
    return io.requirements.size == bytes &&
           reinterpret_cast<uintptr_t>(memory) % io.requirements.alignment == 0;
  }

  absl::Status EnsureStaging(Io& io, const char* what, size_t i) {
    if (io.staging != nullptr) return absl::OkStatus();
    io.staging =
        AllocateAligned(io.requirements.size, io.requirements.alignment);
    if (io.staging == nullptr) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s: cannot allocate the %d-byte staging buffer of %s %d", label_,
          io.requirements.size, what, i));
    }
    return absl::OkStatus();
  }

  // Attaches `memory` to input/output `i` unless it is attached already.
  absl::Status Attach(bool input, size_t i, Io& io, const void* memory) {
    if (io.registered && io.attached_memory == memory) return absl::OkStatus();
    const LiteRtDispatchLibrary& lib = *device_->library;
    const LiteRtDispatchInterface& api = lib.api();
    Release(api, input, i, io);
    io.buffer = NewHostTensorBuffer(io.type, const_cast<void*>(memory),
                                    io.requirements.size);
    absl::Status st = lib.Check(
        api.register_tensor_buffer(device_->context, io.buffer, &io.handle),
        "register_tensor_buffer",
        absl::StrCat("for ", input ? "input " : "output ", i, " of ", label_));
    if (!st.ok()) {
      DeleteTensorBuffer(io.buffer);
      io.buffer = nullptr;
      return st;
    }
    io.registered = true;
    const int index = static_cast<int>(i);
    st = input ? lib.Check(api.attach_input(invocation_, index, io.handle),
                           "attach_input",
                           absl::StrCat("for input ", i, " of ", label_))
               : lib.Check(api.attach_output(invocation_, index, io.handle),
                           "attach_output",
                           absl::StrCat("for output ", i, " of ", label_));
    if (!st.ok()) {
      Release(api, input, i, io);
      return st;
    }
    io.attached_memory = memory;
    return absl::OkStatus();
  }

  // Detaches and unregisters what `io` holds (statuses ignored: this only
  // gives things back).
  void Release(const LiteRtDispatchInterface& api, bool input, size_t i,
               Io& io) {
    if (io.registered) {
      const int index = static_cast<int>(i);
      if (io.attached_memory != nullptr) {
        if (input && api.detach_input != nullptr) {
          api.detach_input(invocation_, index, io.handle);
        } else if (!input && api.detach_output != nullptr) {
          api.detach_output(invocation_, index, io.handle);
        }
      }
      api.unregister_tensor_buffer(device_->context, io.handle);
      io.registered = false;
    }
    DeleteTensorBuffer(io.buffer);
    io.buffer = nullptr;
    io.attached_memory = nullptr;
  }

  std::shared_ptr<LiteRtBackend::Device> device_;
  std::string label_;
};

}  // namespace

bool SameLiteRtVendor(absl::string_view a, absl::string_view b) {
  return !a.empty() && Normalize(a) == Normalize(b);
}

std::vector<std::string> FindLiteRtDispatchLibraries(
    absl::Span<const std::string> dirs, absl::string_view manufacturer) {
  std::vector<std::string> found;
  for (const std::string& dir : dirs) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      absl::string_view name = e->d_name;
      if (!absl::StartsWith(name, kLibraryPrefix) ||
          !absl::EndsWith(name, kLibrarySuffix)) {
        continue;
      }
      absl::string_view suffix = name.substr(
          strlen(kLibraryPrefix),
          name.size() - strlen(kLibraryPrefix) - strlen(kLibrarySuffix));
      if (SameLiteRtVendor(suffix, manufacturer)) names.emplace_back(name);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) found.push_back(dir + "/" + n);
  }
  return found;
}

std::string LiteRtPrecisionWarning(absl::string_view vendor_id,
                                   absl::string_view cpu_flags) {
  if (!absl::StrContains(Normalize(vendor_id), "openvino")) return "";
  std::vector<std::string> causes;
  for (const char* flag : {"avx512_bf16", "amx_bf16"}) {
    for (absl::string_view f : absl::StrSplit(cpu_flags, ' ')) {
      if (f == flag) {
        causes.push_back(flag);
        break;
      }
    }
  }
  if (causes.empty()) return "";
  return absl::StrCat(
      "LiteRT dispatch ", vendor_id,
      " may compute below the model's float32 precision: the library loads "
      "its OpenVINO model with no precision hint, and on a CPU with ",
      absl::StrJoin(causes, " and "),
      " OpenVINO's CPU plugin then runs in bf16 (about 3 significant digits; "
      "outputs can differ from float32 by a few percent, and an argmax can "
      "change)");
}

namespace {

std::string CpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, "flags")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return " " + line.substr(colon + 1) + " ";
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::shared_ptr<LiteRtBackend>> LiteRtBackend::Create(
    std::shared_ptr<LiteRtDispatchLibrary> library, const LiteRtStamp& stamp) {
  std::shared_ptr<LiteRtBackend> backend(new LiteRtBackend());
  auto device = std::make_shared<Device>();
  device->library = library;
  {
    std::lock_guard<std::mutex> lock(library->mutex());
    GRAFT_RETURN_IF_ERROR(library->Check(
        library->api().device_context_create(
            library->runtime_context(), library->options(), &device->context),
        "device_context_create", ""));
  }
  if (device->context == nullptr) {
    return absl::InternalError(absl::StrCat(
        library->label(), ": device_context_create gave no context"));
  }
  backend->library_ = std::move(library);
  backend->device_ = std::move(device);
  backend->stamp_ = stamp;
  std::string flags = CpuFlags();
  for (char& c : flags) {
    if (c == '\t') c = ' ';
  }
  backend->precision_warning_ =
      LiteRtPrecisionWarning(backend->library_->vendor_id(), flags);
  return backend;
}

LiteRtBackend::~LiteRtBackend() = default;

absl::StatusOr<std::unique_ptr<DispatchExecutable>> LiteRtBackend::Prepare(
    const DispatchOpInfo& op) {
  const LiteRtDispatchLibrary& lib = *library_;
  const LiteRtDispatchInterface& api = lib.api();
  const std::string& entry = op.options->entry_point;
  const std::string label = absl::StrCat("entry point '", entry, "'");
  auto exec = std::make_unique<LiteRtExecutable>(device_, label);
  // The module as a range of the mapped file, the way LiteRT's runtime hands
  // it over; a module outside any file is passed as its own base.
  LiteRtMemBuffer bytecode = {};
  bytecode.fd = -1;
  bytecode.base_addr = op.module.data();
  bytecode.offset = 0;
  bytecode.size = op.module.size();
  if (op.model != nullptr && op.model->file != nullptr) {
    const absl::Span<const uint8_t> file = op.model->file->span();
    const auto begin = reinterpret_cast<uintptr_t>(file.data());
    const auto at = reinterpret_cast<uintptr_t>(op.module.data());
    if (at >= begin && at - begin <= file.size() &&
        op.module.size() <= file.size() - (at - begin)) {
      bytecode.base_addr = file.data();
      bytecode.offset = at - begin;
    }
  }
  {
    std::lock_guard<std::mutex> lock(lib.mutex());
    GRAFT_RETURN_IF_ERROR(lib.Check(
        api.invocation_context_create(
            lib.runtime_context(), device_->context,
            kLiteRtDispatchExecutableTypeMlModel, &bytecode, entry.c_str(),
            static_cast<int>(op.inputs.size()),
            static_cast<int>(op.outputs.size()), &exec->invocation_),
        "invocation_context_create",
        absl::StrFormat("for %s (%d-byte module, %d inputs, %d outputs)", label,
                        op.module.size(), op.inputs.size(),
                        op.outputs.size())));
  }
  if (exec->invocation_ == nullptr) {
    return absl::InternalError(absl::StrCat(
        lib.label(), ": invocation_context_create gave no context for ",
        label));
  }
  auto requirements =
      [&](bool input, size_t i,
          const Tensor& t) -> absl::StatusOr<LiteRtExecutable::Io> {
    const char* what = input ? "input" : "output";
    LiteRtExecutable::Io io;
    absl::StatusOr<LiteRtRankedTensorType> type = RankedType(t);
    if (!type.ok()) {
      return absl::UnimplementedError(absl::StrFormat("%s %d ('%s') of %s: %s",
                                                      what, i, t.name, label,
                                                      type.status().message()));
    }
    io.type = *type;
    LiteRtTensorBufferRequirements r = nullptr;
    {
      std::lock_guard<std::mutex> lock(lib.mutex());
      const int index = static_cast<int>(i);
      GRAFT_RETURN_IF_ERROR(lib.Check(
          input ? api.get_input_requirements(exec->invocation_, index, &io.type,
                                             &r)
                : api.get_output_requirements(exec->invocation_, index,
                                              &io.type, &r),
          input ? "get_input_requirements" : "get_output_requirements",
          absl::StrFormat("for %s %d of %s", what, i, label)));
    }
    absl::StatusOr<LiteRtBufferRequirements> got = TakeRequirements(r);
    if (!got.ok()) {
      return absl::InternalError(absl::StrFormat("%s: %s %d of %s: %s",
                                                 lib.label(), what, i, label,
                                                 got.status().message()));
    }
    io.requirements = *std::move(got);
    const LiteRtBufferRequirements& req = io.requirements;
    io.custom_type = kLiteRtTensorBufferTypeUnknown;
    if (!req.SupportsHostMemory() && lib.handlers() != nullptr) {
      const LiteRtCustomTensorBufferHandlersDef* h = lib.handlers();
      for (LiteRtTensorBufferType want : req.supported_types) {
        for (size_t k = 0; k < h->num_supported_buffer_types; ++k) {
          if (h->supported_buffer_types[k] == want &&
              io.custom_type == kLiteRtTensorBufferTypeUnknown) {
            io.custom_type = want;
          }
        }
      }
    }
    if (!req.SupportsHostMemory() &&
        io.custom_type == kLiteRtTensorBufferTypeUnknown) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s wants buffers of types {%s} (LiteRtTensorBufferType) for %s "
          "%d of %s; Graft attaches host memory (type 1) or the library's "
          "own custom types only",
          lib.label(), absl::StrJoin(req.supported_types, ","), what, i,
          label));
    }
    if (!req.strides.empty()) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s wants a strided layout for %s %d of %s; Graft's tensors are "
          "dense",
          lib.label(), what, i, label));
    }
    if (req.size < t.bytes) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: %s %d of %s holds %d bytes, the model's tensor '%s' %d (%s "
          "%s)",
          lib.label(), what, i, label, req.size, t.name, t.bytes,
          tfl::EnumNameTensorType(t.type),
          absl::StrCat("[", absl::StrJoin(t.shape, ","), "]")));
    }
    if (req.alignment == 0 || (req.alignment & (req.alignment - 1)) != 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s: alignment %d of %s %d of %s is not a power of two", lib.label(),
          req.alignment, what, i, label));
    }
    if (req.size != t.bytes &&
        io.custom_type == kLiteRtTensorBufferTypeUnknown) {
      // The vendor wants more than the tensor holds: known now, so stage
      // from the start rather than at the first run.
      io.staging = AllocateAligned(req.size, req.alignment);
      if (io.staging == nullptr) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "cannot allocate the %d-byte staging buffer of %s %d of %s",
            req.size, what, i, label));
      }
    }
    return io;
  };
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    GRAFT_ASSIGN_OR_RETURN(LiteRtExecutable::Io io,
                           requirements(true, i, *op.inputs[i]));
    exec->inputs_.push_back(std::move(io));
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    GRAFT_ASSIGN_OR_RETURN(LiteRtExecutable::Io io,
                           requirements(false, i, *op.outputs[i]));
    exec->outputs_.push_back(std::move(io));
  }
  for (bool input : {true, false}) {
    auto& ios = input ? exec->inputs_ : exec->outputs_;
    for (size_t i = 0; i < ios.size(); ++i) {
      if (ios[i].custom_type != kLiteRtTensorBufferTypeUnknown) {
        GRAFT_RETURN_IF_ERROR(
            exec->AttachCustom(input, i, ios[i], ios[i].custom_type));
      }
    }
  }
  return std::unique_ptr<DispatchExecutable>(std::move(exec));
}

absl::StatusOr<std::shared_ptr<LiteRtBackend>> LoadLiteRtBackend(
    absl::Span<const std::string> dirs, absl::Span<const std::string> paths,
    const LiteRtStamp& stamp) {
  std::vector<std::string> candidates;
  for (const std::string& p : paths) {
    const size_t slash = p.rfind('/');
    absl::string_view name = slash == std::string::npos
                                 ? absl::string_view(p)
                                 : absl::string_view(p).substr(slash + 1);
    if (absl::StartsWith(name, kLibraryPrefix)) candidates.push_back(p);
  }
  for (std::string& p :
       FindLiteRtDispatchLibraries(dirs, stamp.soc_manufacturer)) {
    candidates.push_back(std::move(p));
  }
  std::vector<std::string> refusals;
  for (const std::string& path : candidates) {
    absl::StatusOr<std::shared_ptr<LiteRtDispatchLibrary>> lib =
        LiteRtDispatchLibrary::Load(path);
    if (!lib.ok()) {
      refusals.push_back(std::string(lib.status().message()));
      continue;
    }
    if (!SameLiteRtVendor((*lib)->vendor_id(), stamp.soc_manufacturer)) {
      refusals.push_back(absl::StrCat((*lib)->label(), " reports vendor id '",
                                      (*lib)->vendor_id(), "', not ",
                                      stamp.soc_manufacturer));
      continue;
    }
    return LiteRtBackend::Create(*std::move(lib), stamp);
  }
  if (!refusals.empty()) {
    return absl::FailedPreconditionError(absl::StrJoin(refusals, "; "));
  }
  return absl::NotFoundError(absl::StrCat(
      "no LiteRT dispatch library for ", stamp.soc_manufacturer, " in ",
      dirs.empty() ? std::string("(no directories given)")
                   : absl::StrJoin(dirs, ", "),
      "; pass --dispatch-dir DIR holding ",
      SameLiteRtVendor(stamp.soc_manufacturer, "IntelOpenvino")
          ? std::string("libLiteRtDispatch_IntelOpenvino.so (in the "
                        "ai-edge-litert wheel: "
                        "ai_edge_litert/vendors/intel_openvino/dispatch/)")
          : absl::StrCat("libLiteRtDispatch_<name>.so, <name> matching '",
                         stamp.soc_manufacturer, "' ignoring case and '_'")));
}

}  // namespace graft
