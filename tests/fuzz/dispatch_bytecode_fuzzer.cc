// A vendor dispatch library's bytecode: for every dispatch op of a model
// compiled for the vendor (GRAFT_FUZZ_VENDOR), invocation create with the
// op's module, entry point, input/output counts and the model's buffers,
// then buffer requirements, attach and invoke, as the runtime drives it.
// The library's sources are compiled into the target (instrumented), so
// malformed bytecode that crashes, hangs or leaks in the library is found
// here. Module hashes are not checked: this is what a vendor sees when the
// bytes reach it. Built once per in-tree vendor (tests/fuzz/CMakeLists.txt).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "c_api/graft_dispatch.h"
#include "core/compiled_format.h"
#include "core/vendor_library.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace graft;

// Bigger buffers are not attached (the op is skipped).
constexpr size_t kMaxBufferBytes = size_t{16} << 20;

struct Library {
  HostApi host{"fuzz dispatch"};
  graft_dispatch_t* dispatch = nullptr;
  graft_dispatch_device_context_t* context = nullptr;
};

Library& TheLibrary() {
  static Library* library = [] {
    auto* lib = new Library();
    absl::Status s = TakeStatus(
        graft_dispatch_create(lib->host.table(), nullptr, 0, &lib->dispatch),
        "create");
    if (s.ok()) {
      s = TakeStatus(graft_dispatch_device_context_create(lib->dispatch, nullptr,
                                                          0, &lib->context),
                     "device context");
    }
    if (!s.ok()) fuzz::Fail("the dispatch library", s);
    return lib;
  }();
  return *library;
}

struct Memory {
  void* data = nullptr;
  ~Memory() { std::free(data); }
};

void RunOp(const Model& model, const tfl::OperatorT& op,
           const DispatchOpOptions& options,
           const std::vector<graft_byte_span_t>& buffers) {
  if (options.module_buffer == 0 ||
      options.module_buffer >= model.buffers.size()) {
    return;
  }
  const Bytes& stored = model.buffers[options.module_buffer].data;
  if (stored.empty()) return;
  // 64-byte aligned, as the runtime hands modules over (subgraph_executor's
  // AlignedModule): a module inside the flatbuffer is not.
  std::unique_ptr<uint8_t, decltype(&std::free)> aligned(
      static_cast<uint8_t*>(
          std::aligned_alloc(64, (stored.size() + 63) / 64 * 64)),
      &std::free);
  std::memcpy(aligned.get(), stored.data(), stored.size());
  const absl::Span<const uint8_t> module(aligned.get(), stored.size());
  graft_dispatch_invocation_desc_t desc;
  std::memset(&desc, 0, sizeof(desc));
  desc.struct_size = sizeof(desc);
  desc.bytecode = {module.data(), module.size()};
  desc.entry_point = options.entry_point.c_str();
  desc.num_inputs = op.inputs.size();
  desc.num_outputs = op.outputs.size();
  desc.model_fd = -1;
  desc.model_buffers = buffers.data();
  desc.num_model_buffers = buffers.size();
  graft_dispatch_invocation_t* invocation = nullptr;
  if (!TakeStatus(graft_dispatch_invocation_create(TheLibrary().context, &desc,
                                                   &invocation),
                  "invocation create")
           .ok()) {
    return;
  }
  std::vector<Memory> memory(desc.num_inputs + desc.num_outputs);
  bool attached = true;
  for (size_t k = 0; k < memory.size() && attached; ++k) {
    const bool input = k < desc.num_inputs;
    const graft_dispatch_io_kind_t kind =
        input ? GRAFT_DISPATCH_IO_KIND_INPUT : GRAFT_DISPATCH_IO_KIND_OUTPUT;
    const size_t index = input ? k : k - desc.num_inputs;
    graft_dispatch_buffer_requirements_t r;
    std::memset(&r, 0, sizeof(r));
    r.struct_size = sizeof(r);
    if (!TakeStatus(graft_dispatch_invocation_get_buffer_requirements(
                        invocation, kind, index, &r),
                    "requirements")
             .ok() ||
        r.size > kMaxBufferBytes || r.alignment == 0 || r.alignment > 4096 ||
        (r.alignment & (r.alignment - 1)) != 0) {
      attached = false;
      break;
    }
    // aligned_alloc wants a multiple of the alignment; never 0 bytes.
    const size_t alignment = r.alignment < 64 ? 64 : r.alignment;
    const size_t bytes = (r.size + alignment) / alignment * alignment;
    memory[k].data = std::aligned_alloc(alignment, bytes);
    if (input) {
      fuzz::FillInput(r.element_type, static_cast<uint8_t*>(memory[k].data),
                      r.size);
    }
    attached = TakeStatus(graft_dispatch_invocation_attach_host_memory(
                              invocation, kind, index, memory[k].data, r.size),
                          "attach")
                   .ok();
  }
  if (attached) {
    for (int run = 0; run < 2; ++run) {
      if (!TakeStatus(graft_dispatch_invocation_invoke(invocation), "invoke")
               .ok()) {
        break;
      }
    }
  }
  graft_dispatch_invocation_destroy(invocation);
}

}  // namespace

// Allocations beyond 2 GiB fail (return null) instead of ending the run: a
// valid model may ask for a huge arena, and the runtime's answer to a
// failed allocation (an error) is what is tested then.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1:max_allocation_size_mb=2048";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<Model> model = fuzz::ModelFromInput(data, size);
  if (!model.ok()) return 0;
  std::vector<graft_byte_span_t> buffers;
  buffers.reserve(model->buffers.size());
  for (const Buffer& b : model->buffers) {
    buffers.push_back({b.data.empty() ? nullptr : b.data.data(), b.data.size()});
  }
  for (const Subgraph& sg : model->subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      if (op.opcode_index >= model->operator_codes.size() ||
          model->operator_codes[op.opcode_index].custom_code !=
              kDispatchCustomCode) {
        continue;
      }
      absl::StatusOr<DispatchOpOptions> options =
          DecodeDispatchOpOptions(op.custom_options);
      if (!options.ok() || options->vendor != GRAFT_FUZZ_VENDOR) continue;
      RunOp(*model, op, *options, buffers);
    }
  }
  return 0;
}
