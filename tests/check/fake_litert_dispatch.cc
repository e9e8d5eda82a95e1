// A LiteRT dispatch library (libLiteRtDispatch_Fakeco.so) for the modules
// of tests/plugins' fake LiteRT plugin, so tests/check can run graft
// check's LiteRT dispatch probes without the ai-edge-litert wheel and under
// sanitizers. It checks every argument and answers each misuse with a
// status; it computes nothing (outputs are zeroed), so it is for the probes
// only (--only=misuse,dispatch), not the partition promise.
//
// Built twice (tests/check/CMakeLists.txt): correct, and with
// FAKE_TRUNCATED_CRASH, where invocation_context_create trusts a module
// shorter than its magic line and crashes, which `graft check` must fail
// (dispatch.bytecode: LiteRT defines that call for any module a file holds).
//
// Only the header's declarations are used (dispatch/litert_dispatch_abi.h);
// nothing of Graft is linked.
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "dispatch/litert_dispatch_abi.h"

using namespace graft::litert_abi;  // NOLINT: LiteRT's names.

// The library-owned objects behind LiteRT's handles (declared, not
// defined, by the header).
namespace graft::litert_abi {

struct LiteRtDispatchDeviceContextT {
  struct Buffer {
    void* memory = nullptr;
    size_t size = 0;
  };
  std::map<LiteRtTensorBufferHandle, Buffer> buffers;
  LiteRtTensorBufferHandle next = 1;
};

struct LiteRtDispatchInvocationContextT {
  LiteRtDispatchDeviceContextT* device = nullptr;
  std::vector<LiteRtTensorBufferHandle> inputs, outputs;
  std::vector<size_t> input_bytes, output_bytes;
};

}  // namespace graft::litert_abi

namespace {

constexpr char kMagic[] = "fakeco bytecode v1\n";
const LiteRtRuntimeContext* g_runtime = nullptr;

size_t Bytes(const LiteRtRankedTensorType& t) {
  size_t n = 1;
  for (unsigned d = 0; d < t.layout.rank && d < 8; ++d) {
    n *= static_cast<size_t>(t.layout.dimensions[d]);
  }
  switch (t.element_type) {
    case kLiteRtElementTypeInt8:
    case kLiteRtElementTypeUInt8:
    case kLiteRtElementTypeBool:
      return n;
    case kLiteRtElementTypeInt16:
    case kLiteRtElementTypeFloat16:
      return 2 * n;
    default:
      return 4 * n;
  }
}

LiteRtStatus Initialize(const LiteRtRuntimeContext* runtime, LiteRtEnvironment,
                        LiteRtOptions) {
  if (runtime == nullptr) return kLiteRtStatusErrorInvalidArgument;
  g_runtime = runtime;
  return kLiteRtStatusOk;
}

LiteRtStatus GetVendorId(const char** out) {
  if (out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = "Fakeco";
  return kLiteRtStatusOk;
}

LiteRtStatus GetBuildId(const char** out) {
  if (out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = "fakeco-dispatch 1";
  return kLiteRtStatusOk;
}

LiteRtStatus GetCapabilities(int* out) {
  if (out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = kLiteRtDispatchCapabilitiesBasic;
  return kLiteRtStatusOk;
}

LiteRtStatus DeviceCreate(const LiteRtRuntimeContext*, LiteRtOptions,
                          LiteRtDispatchDeviceContext* out) {
  if (out == nullptr) return kLiteRtStatusErrorInvalidArgument;
  *out = new LiteRtDispatchDeviceContextT;
  return kLiteRtStatusOk;
}

LiteRtStatus DeviceDestroy(LiteRtDispatchDeviceContext device) {
  if (device == nullptr) return kLiteRtStatusErrorInvalidArgument;
  delete device;
  return kLiteRtStatusOk;
}

LiteRtStatus Requirements(LiteRtDispatchInvocationContext inv, bool input,
                          int index, const LiteRtRankedTensorType* type,
                          LiteRtTensorBufferRequirements* out) {
  if (inv == nullptr || type == nullptr || out == nullptr ||
      g_runtime == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  std::vector<size_t>& bytes = input ? inv->input_bytes : inv->output_bytes;
  if (index < 0 || static_cast<size_t>(index) >= bytes.size()) {
    return kLiteRtStatusErrorIndexOOB;
  }
  bytes[index] = Bytes(*type);
  const LiteRtTensorBufferType host = kLiteRtTensorBufferTypeHostMemory;
  return g_runtime->create_tensor_buffer_requirements(1, &host, bytes[index],
                                                      0, nullptr, out);
}

LiteRtStatus InputRequirements(LiteRtDispatchInvocationContext inv, int index,
                               const LiteRtRankedTensorType* type,
                               LiteRtTensorBufferRequirements* out) {
  return Requirements(inv, true, index, type, out);
}

LiteRtStatus OutputRequirements(LiteRtDispatchInvocationContext inv, int index,
                                const LiteRtRankedTensorType* type,
                                LiteRtTensorBufferRequirements* out) {
  return Requirements(inv, false, index, type, out);
}

LiteRtStatus Register(LiteRtDispatchDeviceContext device,
                      LiteRtTensorBuffer buffer,
                      LiteRtTensorBufferHandle* out) {
  if (device == nullptr || buffer == nullptr || out == nullptr ||
      g_runtime == nullptr) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  LiteRtDispatchDeviceContextT::Buffer b;
  if (g_runtime->get_tensor_buffer_host_memory(buffer, &b.memory) !=
          kLiteRtStatusOk ||
      b.memory == nullptr ||
      g_runtime->get_tensor_buffer_size(buffer, &b.size) != kLiteRtStatusOk) {
    return kLiteRtStatusErrorUnsupported;
  }
  *out = device->next++;
  device->buffers[*out] = b;
  return kLiteRtStatusOk;
}

LiteRtStatus Unregister(LiteRtDispatchDeviceContext device,
                        LiteRtTensorBufferHandle handle) {
  if (device == nullptr) return kLiteRtStatusErrorInvalidArgument;
  return device->buffers.erase(handle) == 1 ? kLiteRtStatusOk
                                            : kLiteRtStatusErrorNotFound;
}

LiteRtStatus InvocationCreate(const LiteRtRuntimeContext*,
                              LiteRtDispatchDeviceContext device,
                              LiteRtDispatchExecutableType type,
                              const LiteRtMemBuffer* code, const char* function,
                              int num_inputs, int num_outputs,
                              LiteRtDispatchInvocationContext* out) {
  if (device == nullptr || code == nullptr || function == nullptr ||
      out == nullptr || (code->base_addr == nullptr && code->size > 0)) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  if (type != kLiteRtDispatchExecutableTypeMlModel || num_inputs <= 0 ||
      num_outputs <= 0) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  const char* bytes = static_cast<const char*>(code->base_addr) + code->offset;
#ifdef FAKE_TRUNCATED_CRASH
  // The fault: a module shorter than the magic line is read past its end,
  // here made certain.
  if (code->size < sizeof(kMagic) - 1) abort();
#else
  if (code->size < sizeof(kMagic) - 1) return kLiteRtStatusErrorInvalidArgument;
#endif
  if (std::memcmp(bytes, kMagic, sizeof(kMagic) - 1) != 0) {
    return kLiteRtStatusErrorInvalidArgument;
  }
  // The function's line: "\n<name> <n> ops".
  const std::string text(bytes, code->size);
  if (text.find(std::string("\n") + function + " ") == std::string::npos) {
    return kLiteRtStatusErrorNotFound;
  }
  auto* inv = new LiteRtDispatchInvocationContextT;
  inv->device = device;
  inv->inputs.assign(num_inputs, 0);
  inv->outputs.assign(num_outputs, 0);
  inv->input_bytes.assign(num_inputs, 0);
  inv->output_bytes.assign(num_outputs, 0);
  *out = inv;
  return kLiteRtStatusOk;
}

LiteRtStatus InvocationDestroy(LiteRtDispatchInvocationContext inv) {
  if (inv == nullptr) return kLiteRtStatusErrorInvalidArgument;
  delete inv;
  return kLiteRtStatusOk;
}

LiteRtStatus Attach(LiteRtDispatchInvocationContext inv, bool input, int index,
                    LiteRtTensorBufferHandle handle) {
  if (inv == nullptr) return kLiteRtStatusErrorInvalidArgument;
  std::vector<LiteRtTensorBufferHandle>& slots =
      input ? inv->inputs : inv->outputs;
  if (index < 0 || static_cast<size_t>(index) >= slots.size()) {
    return kLiteRtStatusErrorIndexOOB;
  }
  if (inv->device->buffers.count(handle) == 0) {
    return kLiteRtStatusErrorNotFound;
  }
  slots[index] = handle;
  return kLiteRtStatusOk;
}

LiteRtStatus AttachInput(LiteRtDispatchInvocationContext inv, int index,
                         LiteRtTensorBufferHandle handle) {
  return Attach(inv, true, index, handle);
}

LiteRtStatus AttachOutput(LiteRtDispatchInvocationContext inv, int index,
                          LiteRtTensorBufferHandle handle) {
  return Attach(inv, false, index, handle);
}

LiteRtStatus Invoke(LiteRtDispatchInvocationContext inv) {
  if (inv == nullptr) return kLiteRtStatusErrorInvalidArgument;
  for (bool input : {true, false}) {
    const auto& slots = input ? inv->inputs : inv->outputs;
    const auto& bytes = input ? inv->input_bytes : inv->output_bytes;
    for (size_t i = 0; i < slots.size(); ++i) {
      auto it = inv->device->buffers.find(slots[i]);
      if (it == inv->device->buffers.end()) {
        return kLiteRtStatusErrorInvalidArgument;  // Nothing attached.
      }
      if (it->second.size < bytes[i]) {
        return kLiteRtStatusErrorInvalidArgument;  // Too small.
      }
      if (!input) std::memset(it->second.memory, 0, it->second.size);
    }
  }
  return kLiteRtStatusOk;
}

LiteRtStatus CheckRuntime(LiteRtApiVersion version, LiteRtEnvironmentOptions,
                          LiteRtOptions) {
  return version.major == kLiteRtApiVersion.major &&
                 version.minor == kLiteRtApiVersion.minor
             ? kLiteRtStatusOk
             : kLiteRtStatusErrorWrongVersion;
}

LiteRtDispatchInterface MakeInterface() {
  LiteRtDispatchInterface i = {};
  i.initialize = Initialize;
  i.get_vendor_id = GetVendorId;
  i.get_build_id = GetBuildId;
  i.get_capabilities = GetCapabilities;
  i.device_context_create = DeviceCreate;
  i.device_context_destroy = DeviceDestroy;
  i.get_input_requirements = InputRequirements;
  i.get_output_requirements = OutputRequirements;
  i.register_tensor_buffer = Register;
  i.unregister_tensor_buffer = Unregister;
  i.invocation_context_create = InvocationCreate;
  i.invocation_context_destroy = InvocationDestroy;
  i.attach_input = AttachInput;
  i.attach_output = AttachOutput;
  i.invoke = Invoke;
  i.check_runtime_compatibility = CheckRuntime;
  return i;
}

LiteRtDispatchInterface g_interface = MakeInterface();

}  // namespace

extern "C" __attribute__((visibility("default"))) LiteRtStatus
LiteRtDispatchGetApi(LiteRtDispatchApi* api) {
  if (api == nullptr) return kLiteRtStatusErrorInvalidArgument;
  std::memset(api, 0, sizeof(*api));
  api->version = kLiteRtApiVersion;
  api->interface = &g_interface;
  return kLiteRtStatusOk;
}
