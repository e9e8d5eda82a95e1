// The xnnpack dispatch library: runs the xnnpack compiler plugin's bytecode
// (BYTECODE.md) with Debian's XNNPACK. invocation_create verifies the
// FlatBuffer, checks every value and node (xnnpack_graph.h CheckNode, data
// flow, constant sizes against the model's buffers), defines the XNNPACK
// subgraph with the weights in place in the mapped model, and creates the
// XNNPACK runtime on the device context's pthreadpool. Attach binds host
// memory as XNNPACK external values; invoke re-runs xnn_setup_runtime only
// when an attachment moved, then xnn_invoke_runtime.
//
// Written against the c_api headers only; links XNNPACK and pthreadpool,
// never a Graft library. Nothing throws (built with -fno-exceptions).
#include <pthreadpool.h>
#include <unistd.h>
#include <xnnpack.h>
#if GRAFT_XNNPACK_HAVE_CPUINFO
#include <cpuinfo.h>
#endif

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "graft_dispatch.h"
#include "xnnpack_graph.h"

using namespace graft_xnnpack;  // NOLINT: one vendor, one namespace.

namespace {

constexpr char kLibraryVersion[] = "1.0.0";

const graft_option_info_t kOptions[] = {
    {"num_threads", "1",
     "threads XNNPACK runs each invocation on (pthreadpool), counting the "
     "invoking thread; also a device-context option, which overrides it"},
};

graft_status_t kNullDispatchStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "xnnpack dispatch: dispatch is NULL");
graft_status_t kNullContextStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "xnnpack dispatch: context is NULL");
graft_status_t kNullInvocationStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "xnnpack dispatch: invocation is NULL");
graft_status_t kNullHostStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT, "xnnpack dispatch: host table is NULL");
graft_status_t kBadHostStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_FAILED_PRECONDITION,
    "xnnpack dispatch: host table is of another ABI major or too small");
graft_status_t kBadCreateArgsStatus = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_INVALID_ARGUMENT,
    "xnnpack dispatch: create needs out_dispatch, and options when "
    "num_options > 0");

const char* XnnStatusName(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid parameter";
    case xnn_status_invalid_state:
      return "invalid state";
    case xnn_status_unsupported_parameter:
      return "unsupported parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported hardware";
    case xnn_status_out_of_memory:
      return "out of memory";
  }
  return "unknown status";
}

std::string Printf(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

// Parses "num_threads" values: 1 to 256.
bool ParseThreads(const char* text, size_t* out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 256) return false;
  *out = static_cast<size_t>(value);
  return true;
}

// Heap memory aligned for XNNPACK, freed with free().
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t, FreeDeleter>;

AlignedBytes AllocateAligned(size_t size) {
  const size_t rounded = (size + 63) / 64 * 64;
  return AlignedBytes(static_cast<uint8_t*>(
      std::aligned_alloc(64, rounded == 0 ? 64 : rounded)));
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

struct graft_dispatch_t {
  const graft_host_api_t* host;
  size_t num_threads;
  graft_dispatch_info_t info;
};

struct graft_dispatch_device_context_t {
  graft_dispatch_t* dispatch;
  // NULL for one thread: XNNPACK then runs on the caller's thread.
  pthreadpool_t pool;
};

namespace {

// One attached input or output.
struct Io {
  uint32_t value = 0;
  size_t bytes = 0;
  graft_element_type_t element_type = GRAFT_ELEMENT_TYPE_FLOAT32;
  // Host memory as attached; NULL until attached.
  void* host = nullptr;
  // Inputs: XNNPACK may read up to XNN_EXTRA_BYTES past the end of an
  // input, so memory attached without that slack, whose last byte is so
  // close to the end of its page that the over-read could reach the next
  // (maybe unmapped) page, is copied here at invoke.
  AlignedBytes staging;
  bool staged = false;
};

}  // namespace

struct graft_dispatch_invocation_t {
  graft_dispatch_device_context_t* context = nullptr;
  const graft_host_api_t* host = nullptr;
  std::string entry;
  // Kept for the runtime's lifetime: XNNPACK keeps pointers to channelwise
  // scales.
  std::vector<ValueSpec> values;
  std::vector<Io> inputs, outputs;
  std::vector<xnn_external_value> externals;
  xnn_runtime_t runtime = nullptr;
  // The attachments changed since the last xnn_setup_runtime.
  bool needs_setup = true;
  // A run started with invoke_async that wait has not collected yet (the
  // run itself happens at start: XNNPACK runs synchronously).
  bool in_flight = false;
  // GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING. This XNNPACK has no
  // per-operator profiling, so a profiled run runs each node on an XNNPACK
  // runtime of its own (`nodes`, in bytecode order, intermediate values in
  // `scratch`) and times it: events[0] spans the run (location 0), events[1
  // + n] node n with vendor_location (entry index << 32) | (n + 1), as the
  // plugin's debug map.
  bool profiling = false;
  struct NodeRuntime {
    xnn_runtime_t runtime = nullptr;
    std::vector<uint32_t> values;  // its external values
    std::vector<xnn_external_value> externals;
    std::string name;
  };
  std::vector<NodeRuntime> nodes;
  uint32_t entry_index = 0;
  std::vector<AlignedBytes> scratch;  // by value id; empty for the rest
  bool nodes_need_setup = true;
  std::string profile_name;
  std::vector<graft_dispatch_profile_event_t> events;
  size_t num_profile_events = 0;

  ~graft_dispatch_invocation_t() {
    if (runtime != nullptr) xnn_delete_runtime(runtime);
    for (NodeRuntime& n : nodes) {
      if (n.runtime != nullptr) xnn_delete_runtime(n.runtime);
    }
  }
};

namespace {

graft_status_t* Error(const graft_host_api_t* host, graft_status_code_t code,
                      const std::string& message) {
  return host->status_create(host, code, message.c_str());
}

// ---- XNNPACK initialization and its f32 GEMM kernel choice ----
//
// xnn_initialize picks the f32 GEMM/IGEMM microkernels (every CONV_2D,
// 1x1 convolution and FULLY_CONNECTED) once per process. On FMA3 CPUs
// without AVX-512 this XNNPACK takes the 5x16 "fma3_broadcast" kernels,
// except on AMD Zen 1 (and Hygon Dhyana), where it takes the 4x16s4 ones;
// cpuinfo_get_core(0)->uarch is the only thing it asks, and that is the
// library's only call of cpuinfo_get_core. Debian builds the library with
// GCC, which spills one of the 5x16 kernel's ten accumulators to the stack
// inside its inner loop (a store and a load-FMA on the same stack slot every
// k step), so the loop runs at the store-forwarding latency instead of the
// FMA throughput: 1x1 convolutions run at 20-40 GFLOP/s on Zen 3 against
// 50-90 with the 4x16s4 kernels, which have no spill (bench/README.md).
//
// So on Zen 2/3, during xnn_initialize only, core 0's uarch in cpuinfo's
// table (struct cpuinfo_core from cpuinfo.h, the libcpuinfo XNNPACK itself
// links) reads Zen: XNNPACK then takes the 4x16s4 kernels; the value is put
// back right after. With GRAFT_XNNPACK_F32_GEMM=library in the environment,
// on any other CPU, or in a build without cpuinfo.h (libcpuinfo-dev), the
// library's own choice stands; build_id says which. No effect when XNNPACK
// was already initialized in this process.

// graft_dispatch_info_t::build_id, with what InitializeXnnpack decided.
char g_build_id[160] = "XNNPACK 0.0~git20220216 (Debian)";

// Core 0's record in cpuinfo's table when it may be presented as Zen, or
// nullptr (and why in *why).
#if GRAFT_XNNPACK_HAVE_CPUINFO
cpuinfo_core* ZenCoreToRewrite(const char** why) {
  const char* env = std::getenv("GRAFT_XNNPACK_F32_GEMM");
  if (env != nullptr && std::strcmp(env, "library") == 0) {
    *why = "GRAFT_XNNPACK_F32_GEMM=library";
    return nullptr;
  }
  if (!cpuinfo_initialize() || cpuinfo_get_cores_count() == 0 ||
      cpuinfo_get_core(0) == nullptr) {
    *why = "cpuinfo unavailable";
    return nullptr;
  }
  const cpuinfo_core* core = cpuinfo_get_core(0);
  if (core->vendor != cpuinfo_vendor_amd ||
      (core->uarch != cpuinfo_uarch_zen2 && core->uarch != cpuinfo_uarch_zen3)) {
    *why = "not AMD Zen 2/3";
    return nullptr;
  }
  // The table is cpuinfo's heap memory, written once by its initialization.
  return const_cast<cpuinfo_core*>(core);
}
#endif

xnn_status InitializeXnnpack() {
  // Once per process (XNNPACK's own init is pthread_once too).
  static const xnn_status status = [] {
    const char* why = "built without cpuinfo.h";
#if GRAFT_XNNPACK_HAVE_CPUINFO
    if (cpuinfo_core* core = ZenCoreToRewrite(&why)) {
      const cpuinfo_uarch saved = core->uarch;
      core->uarch = cpuinfo_uarch_zen;
      const xnn_status st = xnn_initialize(nullptr);
      core->uarch = saved;
      std::snprintf(g_build_id, sizeof(g_build_id),
                    "XNNPACK 0.0~git20220216 (Debian); f32 GEMM 4x16s4 "
                    "(Zen 2/3)");
      return st;
    }
#endif
    std::snprintf(g_build_id, sizeof(g_build_id),
                  "XNNPACK 0.0~git20220216 (Debian); f32 GEMM: the "
                  "library's choice (%s)",
                  why);
    return xnn_initialize(nullptr);
  }();
  return status;
}

// Whether reading XNN_EXTRA_BYTES past the `bytes` at `data` leaves the
// page that holds their last byte.
bool OverreadCrossesPage(const void* data, size_t bytes) {
  static const uintptr_t page = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<uintptr_t>(p) : uintptr_t{4096};
  }();
  const uintptr_t last = reinterpret_cast<uintptr_t>(data) + bytes - 1;
  return last / page != (last + XNN_EXTRA_BYTES) / page;
}

xnn_datatype XnnDatatype(DataType type) {
  switch (type) {
    case DataType::FP32:
      return xnn_datatype_fp32;
    case DataType::QINT8:
      return xnn_datatype_qint8;
    case DataType::QCINT8:
      return xnn_datatype_qcint8;
    case DataType::QINT32:
      return xnn_datatype_qint32;
    case DataType::QCINT32:
      return xnn_datatype_qcint32;
  }
  return xnn_datatype_invalid;
}

// Element by element through memcpy: FlatBuffers' verifier aligns a
// vector only to 4 bytes (its length), so a module may place [ulong] 4 bytes
// off and flatbuffers' own accessors would load them misaligned (undefined;
// found by tests/fuzz).
template <typename T, typename V>
std::vector<T> ToVector(const flatbuffers::Vector<V>* v) {
  std::vector<T> out;
  if (v == nullptr) return out;
  out.resize(v->size());
  const uint8_t* at = v->Data();
  for (size_t i = 0; i < out.size(); ++i) {
    V e;
    std::memcpy(&e, at + i * sizeof(V), sizeof(V));
    out[i] = static_cast<T>(flatbuffers::EndianScalar(e));
  }
  return out;
}

// A bytecode problem: a status code and the message after the prefix.
struct Problem {
  graft_status_code_t code = GRAFT_STATUS_OK;
  std::string message;
};

bool Fail(Problem* p, graft_status_code_t code, std::string message) {
  p->code = code;
  p->message = std::move(message);
  return false;
}

// Everything invocation_create learns from the bytecode before touching
// XNNPACK.
struct Program {
  // The entry's index in the module (the high half of its nodes'
  // vendor_location in the plugin's debug map).
  uint32_t entry_index = 0;
  std::vector<ValueSpec> values;
  // Constant data of each value (NULL for non-constants), in place in the
  // model's buffers or in the bytecode.
  std::vector<const void*> data;
  std::vector<NodeSpec> nodes;
  std::vector<uint32_t> inputs, outputs;
};

bool ReadValues(const Entry* entry,
                const graft_dispatch_invocation_desc_t* desc, Program* prog,
                Problem* p) {
  const auto* values = entry->values();
  const size_t count = values == nullptr ? 0 : values->size();
  const bool have_buffers = GRAFT_STRUCT_HAS_MEMBER(
      desc, graft_dispatch_invocation_desc_t, num_model_buffers);
  for (size_t i = 0; i < count; ++i) {
    const Value* v = values->Get(static_cast<flatbuffers::uoffset_t>(i));
    ValueSpec s;
    s.datatype = v->datatype();
    s.dims = ToVector<uint64_t>(v->dims());
    s.scales = ToVector<float>(v->scales());
    s.zero_point = v->zero_point();
    s.channel_dim = v->channel_dim();
    s.buffer_id = v->buffer_id();
    s.buffer_size = v->buffer_size();
    s.input_index = v->input_index();
    s.output_index = v->output_index();
    const std::string where = Printf("value %zu", i);
    const size_t element_size = DataTypeSize(s.datatype);
    if (element_size == 0) {
      return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                  where + Printf(": unknown datatype %u",
                                 static_cast<unsigned>(s.datatype)));
    }
    if (s.dims.size() > kMaxRank) {
      return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                  where + Printf(": rank %zu exceeds XNNPACK's %zu",
                                 s.dims.size(), kMaxRank));
    }
    const uint64_t elements = NumElements(s.dims);
    if (elements > (uint64_t{1} << 31)) {
      return Fail(p, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                  where + ": more than 2^31 elements");
    }
    const uint64_t bytes = elements * element_size;
    // Quantization parameters the datatype needs.
    size_t want_scales = 0;
    if (s.datatype == DataType::QINT8 || s.datatype == DataType::QINT32) {
      want_scales = 1;
    } else if (s.datatype == DataType::QCINT8 ||
               s.datatype == DataType::QCINT32) {
      if (s.channel_dim >= s.dims.size()) {
        return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                    where + Printf(": channel_dim %u out of rank %zu",
                                   s.channel_dim, s.dims.size()));
      }
      want_scales = s.dims[s.channel_dim];
    }
    if (s.scales.size() != want_scales) {
      return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                  where + Printf(": %zu scales, %s needs %zu", s.scales.size(),
                                 EnumNameDataType(s.datatype), want_scales));
    }
    const void* data = nullptr;
    if (s.buffer_id >= 0) {
      if (!have_buffers || desc->model_buffers == nullptr) {
        return Fail(p, GRAFT_STATUS_FAILED_PRECONDITION,
                    where + Printf(": the bytecode uses model buffer %" PRId64
                                   " in place, but the host passes no model "
                                   "buffers (it needs Graft ABI 1.1 or later)",
                                   s.buffer_id));
      }
      if (static_cast<uint64_t>(s.buffer_id) >= desc->num_model_buffers) {
        return Fail(p, GRAFT_STATUS_FAILED_PRECONDITION,
                    where + Printf(": model buffer %" PRId64
                                   " does not exist (the model has %zu)",
                                   s.buffer_id, desc->num_model_buffers));
      }
      const graft_byte_span_t span = desc->model_buffers[s.buffer_id];
      if (s.buffer_size != bytes || span.size != bytes ||
          span.data == nullptr) {
        return Fail(
            p, GRAFT_STATUS_FAILED_PRECONDITION,
            where + Printf(": model buffer %" PRId64
                           " holds %zu bytes, the bytecode expects "
                           "%" PRIu64 " (%" PRIu64 " bytes for its "
                           "shape)",
                           s.buffer_id, span.size, s.buffer_size, bytes));
      }
      data = span.data;
    } else if (v->data() != nullptr) {
      if (v->data()->size() != bytes) {
        return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                    where + Printf(": embedded data of %u bytes, expected "
                                   "%" PRIu64,
                                   v->data()->size(), bytes));
      }
      data = v->data()->data();
    }
    s.is_constant = data != nullptr;
    if (s.is_constant && (s.input_index >= 0 || s.output_index >= 0)) {
      return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                  where + ": a constant cannot be an input or output");
    }
    prog->values.push_back(std::move(s));
    prog->data.push_back(data);
  }
  return true;
}

bool ReadNodes(const Entry* entry, Program* prog, Problem* p) {
  const auto* nodes = entry->nodes();
  const size_t count = nodes == nullptr ? 0 : nodes->size();
  // Data flow: values are written once, by a node, before they are read.
  std::vector<bool> ready(prog->values.size());
  for (size_t i = 0; i < prog->values.size(); ++i) {
    ready[i] = prog->values[i].is_constant || prog->values[i].input_index >= 0;
  }
  for (size_t i = 0; i < count; ++i) {
    const Node* n = nodes->Get(static_cast<flatbuffers::uoffset_t>(i));
    NodeSpec s;
    s.kind = n->kind();
    s.inputs = ToVector<uint32_t>(n->inputs());
    s.outputs = ToVector<uint32_t>(n->outputs());
    s.original_op_index = n->original_op_index();
    s.output_min = n->output_min();
    s.output_max = n->output_max();
    s.padding = ToVector<uint32_t>(n->padding());
    s.kernel = ToVector<uint32_t>(n->kernel());
    s.stride = ToVector<uint32_t>(n->stride());
    s.dilation = ToVector<uint32_t>(n->dilation());
    s.adjustment = ToVector<uint32_t>(n->adjustment());
    s.groups = n->groups();
    s.group_input_channels = n->group_input_channels();
    s.group_output_channels = n->group_output_channels();
    s.depth_multiplier = n->depth_multiplier();
    s.input_channels = n->input_channels();
    s.alpha = n->alpha();
    s.shape = ToVector<uint64_t>(n->shape());
    s.pre_paddings = ToVector<uint64_t>(n->pre_paddings());
    s.post_paddings = ToVector<uint64_t>(n->post_paddings());
    s.block_size = n->block_size();
    s.flags = n->flags();
    const std::string where = Printf("node %zu (%s, model op %d)", i,
                                     NodeKindName(s.kind), s.original_op_index);
    std::string problem = CheckNode(s, prog->values);
    if (!problem.empty()) {
      return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT, where + ": " + problem);
    }
    for (uint32_t id : s.inputs) {
      if (id != kNoValue && !ready[id]) {
        return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                    where + Printf(": reads value %u before anything writes "
                                   "it",
                                   id));
      }
    }
    for (uint32_t id : s.outputs) {
      if (ready[id]) {
        return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                    where + Printf(": writes value %u, which is an input, a "
                                   "constant or already written",
                                   id));
      }
      ready[id] = true;
    }
    ExplicitSamePadding(prog->values[s.inputs[0]].dims, &s);
    prog->nodes.push_back(std::move(s));
  }
  for (size_t i = 0; i < prog->values.size(); ++i) {
    if (prog->values[i].output_index >= 0 && !ready[i]) {
      return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                  Printf("output value %zu is never written", i));
    }
  }
  return true;
}

// The entry's inputs and outputs: each listed value carries its own index,
// and no other value is external.
bool ReadInterface(const Entry* entry,
                   const graft_dispatch_invocation_desc_t* desc, Program* prog,
                   Problem* p) {
  prog->inputs = ToVector<uint32_t>(entry->inputs());
  prog->outputs = ToVector<uint32_t>(entry->outputs());
  if (prog->inputs.size() != desc->num_inputs ||
      prog->outputs.size() != desc->num_outputs) {
    return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                Printf("the entry has %zu inputs and %zu outputs, the host "
                       "attaches %zu and %zu",
                       prog->inputs.size(), prog->outputs.size(),
                       desc->num_inputs, desc->num_outputs));
  }
  size_t externals = 0;
  for (const ValueSpec& v : prog->values) {
    externals += (v.input_index >= 0) + (v.output_index >= 0);
    if (v.input_index >= 0 && v.output_index >= 0) {
      return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                  "a value is both an input and an output");
    }
  }
  for (int kind = 0; kind < 2; ++kind) {
    const std::vector<uint32_t>& ids = kind == 0 ? prog->inputs : prog->outputs;
    for (size_t k = 0; k < ids.size(); ++k) {
      if (ids[k] >= prog->values.size() ||
          (kind == 0 ? prog->values[ids[k]].input_index
                     : prog->values[ids[k]].output_index) !=
              static_cast<int32_t>(k)) {
        return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                    Printf("%s %zu names value %u, which is not marked as "
                           "that %s",
                           kind == 0 ? "input" : "output", k, ids[k],
                           kind == 0 ? "input" : "output"));
      }
      const DataType t = prog->values[ids[k]].datatype;
      if (t != DataType::FP32 && t != DataType::QINT8) {
        return Fail(
            p, GRAFT_STATUS_INVALID_ARGUMENT,
            Printf("%s %zu has datatype %s; inputs and outputs are "
                   "FP32 or QINT8",
                   kind == 0 ? "input" : "output", k, EnumNameDataType(t)));
      }
    }
  }
  if (externals != prog->inputs.size() + prog->outputs.size()) {
    return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                "values marked as inputs or outputs are not all listed by "
                "the entry");
  }
  return true;
}

// Verifies the FlatBuffer and finds the entry; then reads and checks it.
bool ReadProgram(const graft_dispatch_invocation_desc_t* desc, Program* prog,
                 Problem* p) {
  const uint8_t* bytes = desc->bytecode.data;
  const size_t size = desc->bytecode.size;
  if (size < 8 || !ModuleBufferHasIdentifier(bytes)) {
    return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                Printf("bytecode of %zu bytes is not an xnnpack module (no "
                       "'%s' identifier)",
                       size, ModuleIdentifier()));
  }
  flatbuffers::Verifier verifier(bytes, size);
  if (!VerifyModuleBuffer(verifier)) {
    return Fail(p, GRAFT_STATUS_INVALID_ARGUMENT,
                Printf("bytecode of %zu bytes fails FlatBuffer verification "
                       "(truncated or corrupted)",
                       size));
  }
  const Module* module = GetModule(bytes);
  if (module->format_version() != kBytecodeFormatVersion) {
    return Fail(p, GRAFT_STATUS_FAILED_PRECONDITION,
                Printf("bytecode format version %u, this library runs %u",
                       module->format_version(), kBytecodeFormatVersion));
  }
  const Entry* entry = nullptr;
  std::string names;
  if (module->entries() != nullptr) {
    for (uint32_t k = 0; k < module->entries()->size(); ++k) {
      const Entry* e = module->entries()->Get(k);
      names += (names.empty() ? "" : ", ") + e->name()->str();
      if (entry == nullptr && e->name()->str() == desc->entry_point) {
        entry = e;
        prog->entry_index = k;
      }
    }
  }
  if (entry == nullptr) {
    return Fail(p, GRAFT_STATUS_NOT_FOUND,
                Printf("the module has no entry point '%s' (it has: %s)",
                       desc->entry_point, names.c_str()));
  }
  return ReadValues(entry, desc, prog, p) && ReadNodes(entry, prog, p) &&
         ReadInterface(entry, desc, prog, p);
}

xnn_status DefineNode(xnn_subgraph_t sg, const NodeSpec& n) {
  const uint32_t* in = n.inputs.data();
  const uint32_t out = n.outputs[0];
  const float lo = n.output_min, hi = n.output_max;
  switch (n.kind) {
    case NodeKind::ADD:
      return xnn_define_add2(sg, lo, hi, in[0], in[1], out, 0);
    case NodeKind::SUBTRACT:
      return xnn_define_subtract(sg, lo, hi, in[0], in[1], out, 0);
    case NodeKind::MULTIPLY:
      return xnn_define_multiply2(sg, lo, hi, in[0], in[1], out, 0);
    case NodeKind::DIVIDE:
      return xnn_define_divide(sg, lo, hi, in[0], in[1], out, 0);
    case NodeKind::MAXIMUM:
      return xnn_define_maximum2(sg, in[0], in[1], out, 0);
    case NodeKind::MINIMUM:
      return xnn_define_minimum2(sg, in[0], in[1], out, 0);
    case NodeKind::SQUARED_DIFFERENCE:
      return xnn_define_squared_difference(sg, in[0], in[1], out, 0);
    case NodeKind::CONVOLUTION_2D:
      return xnn_define_convolution_2d(
          sg, n.padding[0], n.padding[1], n.padding[2], n.padding[3],
          n.kernel[0], n.kernel[1], n.stride[0], n.stride[1], n.dilation[0],
          n.dilation[1], n.groups, n.group_input_channels,
          n.group_output_channels, lo, hi, in[0], in[1], in[2], out, n.flags);
    case NodeKind::DEPTHWISE_CONVOLUTION_2D:
      return xnn_define_depthwise_convolution_2d(
          sg, n.padding[0], n.padding[1], n.padding[2], n.padding[3],
          n.kernel[0], n.kernel[1], n.stride[0], n.stride[1], n.dilation[0],
          n.dilation[1], n.depth_multiplier, n.input_channels, lo, hi, in[0],
          in[1], in[2], out, n.flags);
    case NodeKind::DECONVOLUTION_2D:
      return xnn_define_deconvolution_2d(
          sg, n.padding[0], n.padding[1], n.padding[2], n.padding[3],
          n.adjustment[0], n.adjustment[1], n.kernel[0], n.kernel[1],
          n.stride[0], n.stride[1], n.dilation[0], n.dilation[1], n.groups,
          n.group_input_channels, n.group_output_channels, lo, hi, in[0], in[1],
          in[2], out, n.flags);
    case NodeKind::FULLY_CONNECTED:
      return xnn_define_fully_connected(sg, lo, hi, in[0], in[1], in[2], out,
                                        n.flags);
    case NodeKind::AVERAGE_POOLING_2D:
      return xnn_define_average_pooling_2d(
          sg, n.padding[0], n.padding[1], n.padding[2], n.padding[3],
          n.kernel[0], n.kernel[1], n.stride[0], n.stride[1], lo, hi, in[0],
          out, n.flags);
    case NodeKind::MAX_POOLING_2D:
      return xnn_define_max_pooling_2d(
          sg, n.padding[0], n.padding[1], n.padding[2], n.padding[3],
          n.kernel[0], n.kernel[1], n.stride[0], n.stride[1], n.dilation[0],
          n.dilation[1], lo, hi, in[0], out, n.flags);
    case NodeKind::GLOBAL_AVERAGE_POOLING_2D:
      return xnn_define_global_average_pooling_2d(sg, lo, hi, in[0], out, 0);
    case NodeKind::CLAMP:
      return xnn_define_clamp(sg, lo, hi, in[0], out, 0);
    case NodeKind::SIGMOID:
      return xnn_define_sigmoid(sg, in[0], out, 0);
    case NodeKind::SOFTMAX:
      return xnn_define_softmax(sg, in[0], out, 0);
    case NodeKind::HARDSWISH:
      return xnn_define_hardswish(sg, in[0], out, 0);
    case NodeKind::LEAKY_RELU:
      return xnn_define_leaky_relu(sg, n.alpha, in[0], out, 0);
    case NodeKind::ELU:
      return xnn_define_elu(sg, n.alpha, in[0], out, 0);
    case NodeKind::PRELU:
      return xnn_define_prelu(sg, in[0], in[1], out, 0);
    case NodeKind::ABS:
      return xnn_define_abs(sg, in[0], out, 0);
    case NodeKind::CEILING:
      return xnn_define_ceiling(sg, in[0], out, 0);
    case NodeKind::FLOOR:
      return xnn_define_floor(sg, in[0], out, 0);
    case NodeKind::NEGATE:
      return xnn_define_negate(sg, in[0], out, 0);
    case NodeKind::SQUARE:
      return xnn_define_square(sg, in[0], out, 0);
    case NodeKind::SQUARE_ROOT:
      return xnn_define_square_root(sg, in[0], out, 0);
    case NodeKind::BANKERS_ROUNDING:
      return xnn_define_bankers_rounding(sg, in[0], out, 0);
    case NodeKind::STATIC_RESHAPE: {
      std::vector<size_t> shape(n.shape.begin(), n.shape.end());
      return xnn_define_static_reshape(sg, shape.size(), shape.data(), in[0],
                                       out, 0);
    }
    case NodeKind::STATIC_CONSTANT_PAD: {
      std::vector<size_t> pre(n.pre_paddings.begin(), n.pre_paddings.end());
      std::vector<size_t> post(n.post_paddings.begin(), n.post_paddings.end());
      return xnn_define_static_constant_pad(sg, pre.data(), post.data(),
                                            n.alpha, in[0], out, 0);
    }
    case NodeKind::STATIC_RESIZE_BILINEAR_2D:
      return xnn_define_static_resize_bilinear_2d(sg, n.shape[0], n.shape[1],
                                                  in[0], out, n.flags);
    case NodeKind::DEPTH_TO_SPACE:
      return xnn_define_depth_to_space(sg, in[0], out, n.block_size, 0);
    case NodeKind::CONVERT:
      return xnn_define_convert(sg, in[0], out, 0);
  }
  return xnn_status_invalid_parameter;
}

// Defines the checked program as an XNNPACK subgraph (value id = index)
// and creates its runtime.
graft_status_t* BuildRuntime(graft_dispatch_invocation_t* inv,
                             const Program& prog) {
  const graft_host_api_t* host = inv->host;
  xnn_subgraph_t sg = nullptr;
  const uint32_t num_values = static_cast<uint32_t>(prog.values.size());
  xnn_status st = xnn_create_subgraph(num_values, 0, &sg);
  if (st != xnn_status_success) {
    return Error(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                 Printf("xnnpack dispatch: xnn_create_subgraph failed: %s",
                        XnnStatusName(st)));
  }
  std::unique_ptr<xnn_subgraph, xnn_status (*)(xnn_subgraph_t)> owner(
      sg, xnn_delete_subgraph);
  for (uint32_t i = 0; i < num_values && st == xnn_status_success; ++i) {
    const ValueSpec& v = inv->values[i];
    std::vector<size_t> dims(v.dims.begin(), v.dims.end());
    const uint32_t flags =
        (v.input_index >= 0 ? XNN_VALUE_FLAG_EXTERNAL_INPUT : 0) |
        (v.output_index >= 0 ? XNN_VALUE_FLAG_EXTERNAL_OUTPUT : 0);
    uint32_t id = 0;
    switch (v.datatype) {
      case DataType::FP32:
        st = xnn_define_tensor_value(sg, xnn_datatype_fp32, dims.size(),
                                     dims.data(), prog.data[i], i, flags, &id);
        break;
      case DataType::QINT8:
      case DataType::QINT32:
        st = xnn_define_quantized_tensor_value(
            sg, XnnDatatype(v.datatype), v.zero_point, v.scales[0], dims.size(),
            dims.data(), prog.data[i], i, flags, &id);
        break;
      case DataType::QCINT8:
      case DataType::QCINT32:
        st = xnn_define_channelwise_quantized_tensor_value(
            sg, XnnDatatype(v.datatype), v.scales.data(), dims.size(),
            v.channel_dim, dims.data(), prog.data[i], i, flags, &id);
        break;
    }
    if (st != xnn_status_success) {
      return Error(host, GRAFT_STATUS_INVALID_ARGUMENT,
                   Printf("xnnpack dispatch: entry '%s': XNNPACK refused value "
                          "%u (%s): %s",
                          inv->entry.c_str(), i, EnumNameDataType(v.datatype),
                          XnnStatusName(st)));
    }
  }
  for (size_t i = 0; i < prog.nodes.size(); ++i) {
    const NodeSpec& n = prog.nodes[i];
    st = DefineNode(sg, n);
    if (st != xnn_status_success) {
      return Error(host, GRAFT_STATUS_INVALID_ARGUMENT,
                   Printf("xnnpack dispatch: entry '%s': XNNPACK refused node "
                          "%zu (%s, model op %d): %s",
                          inv->entry.c_str(), i, NodeKindName(n.kind),
                          n.original_op_index, XnnStatusName(st)));
    }
  }
  st = xnn_create_runtime_v2(sg, inv->context->pool, 0, &inv->runtime);
  if (st != xnn_status_success) {
    inv->runtime = nullptr;
    return Error(host,
                 st == xnn_status_out_of_memory
                     ? GRAFT_STATUS_RESOURCE_EXHAUSTED
                     : GRAFT_STATUS_INVALID_ARGUMENT,
                 Printf("xnnpack dispatch: entry '%s': xnn_create_runtime_v2 "
                        "failed: %s",
                        inv->entry.c_str(), XnnStatusName(st)));
  }
  return nullptr;
}

// Defines value `i` of `prog` in `sg` as BuildRuntime does, with `flags`.
xnn_status DefineValue(xnn_subgraph_t sg, const Program& prog, uint32_t i,
                       uint32_t flags, const std::vector<ValueSpec>& values) {
  const ValueSpec& v = values[i];
  std::vector<size_t> dims(v.dims.begin(), v.dims.end());
  uint32_t id = 0;
  switch (v.datatype) {
    case DataType::FP32:
      return xnn_define_tensor_value(sg, xnn_datatype_fp32, dims.size(),
                                     dims.data(), prog.data[i], i, flags, &id);
    case DataType::QINT8:
    case DataType::QINT32:
      return xnn_define_quantized_tensor_value(
          sg, XnnDatatype(v.datatype), v.zero_point, v.scales[0], dims.size(),
          dims.data(), prog.data[i], i, flags, &id);
    case DataType::QCINT8:
    case DataType::QCINT32:
      return xnn_define_channelwise_quantized_tensor_value(
          sg, XnnDatatype(v.datatype), v.scales.data(), dims.size(),
          v.channel_dim, dims.data(), prog.data[i], i, flags, &id);
  }
  return xnn_status_invalid_parameter;
}

// For profiled invocations: one XNNPACK runtime per node, whose
// non-constant operands are external values (the entry's inputs and outputs
// where they are those, else scratch memory of the invocation's own).
graft_status_t* BuildNodeRuntimes(graft_dispatch_invocation_t* inv,
                                  const Program& prog) {
  const graft_host_api_t* host = inv->host;
  const uint32_t num_values = static_cast<uint32_t>(prog.values.size());
  inv->scratch.resize(num_values);
  for (uint32_t i = 0; i < num_values; ++i) {
    const ValueSpec& v = prog.values[i];
    if (prog.data[i] != nullptr || v.input_index >= 0 || v.output_index >= 0) {
      continue;
    }
    inv->scratch[i] = AllocateAligned(
        NumElements(v.dims) * DataTypeSize(v.datatype) + XNN_EXTRA_BYTES);
    if (inv->scratch[i] == nullptr) {
      return Error(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                   "xnnpack dispatch: out of memory");
    }
  }
  for (size_t n = 0; n < prog.nodes.size(); ++n) {
    const NodeSpec& node = prog.nodes[n];
    graft_dispatch_invocation_t::NodeRuntime nr;
    nr.name = Printf("%s (model op %d)", NodeKindName(node.kind),
                     node.original_op_index);
    xnn_subgraph_t sg = nullptr;
    xnn_status st = xnn_create_subgraph(num_values, 0, &sg);
    if (st != xnn_status_success) {
      return Error(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                   Printf("xnnpack dispatch: xnn_create_subgraph failed: %s",
                          XnnStatusName(st)));
    }
    std::unique_ptr<xnn_subgraph, xnn_status (*)(xnn_subgraph_t)> owner(
        sg, xnn_delete_subgraph);
    std::vector<bool> defined(num_values, false);
    for (int side = 0; side < 2 && st == xnn_status_success; ++side) {
      for (uint32_t id : side == 0 ? node.inputs : node.outputs) {
        // XNN_INVALID_VALUE_ID: an operand left out (a convolution's bias).
        if (id >= num_values || defined[id]) continue;
        defined[id] = true;
        const bool constant = prog.data[id] != nullptr;
        const uint32_t flags = constant    ? 0
                               : side == 0 ? XNN_VALUE_FLAG_EXTERNAL_INPUT
                                           : XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
        st = DefineValue(sg, prog, id, flags, inv->values);
        if (!constant) nr.values.push_back(id);
      }
    }
    if (st == xnn_status_success) st = DefineNode(sg, node);
    if (st == xnn_status_success) {
      st = xnn_create_runtime_v2(sg, inv->context->pool, 0, &nr.runtime);
      if (st != xnn_status_success) nr.runtime = nullptr;
    }
    if (st != xnn_status_success) {
      return Error(host, GRAFT_STATUS_INVALID_ARGUMENT,
                   Printf("xnnpack dispatch: entry '%s': node %zu (%s) on a "
                          "runtime of its own, for profiling: %s",
                          inv->entry.c_str(), n, NodeKindName(node.kind),
                          XnnStatusName(st)));
    }
    nr.externals.resize(nr.values.size());
    inv->nodes.push_back(std::move(nr));
  }
  inv->events.resize(1 + inv->nodes.size());
  return nullptr;
}

// Runs a profiled invocation node by node, timing each (see `nodes`).
graft_status_t* InvokeNodes(graft_dispatch_invocation_t* inv,
                            uint64_t entry_index) {
  const graft_host_api_t* host = inv->host;
  if (inv->nodes_need_setup) {
    // The memory of each value: an entry input's or output's as attached
    // (or staged), else scratch.
    const size_t num_inputs = inv->inputs.size();
    for (auto& nr : inv->nodes) {
      for (size_t k = 0; k < nr.values.size(); ++k) {
        const uint32_t id = nr.values[k];
        void* data = inv->scratch[id].get();
        const ValueSpec& v = inv->values[id];
        if (v.input_index >= 0) {
          data = inv->externals[v.input_index].data;
        } else if (v.output_index >= 0) {
          data = inv->externals[num_inputs + v.output_index].data;
        }
        nr.externals[k] = {id, data};
      }
      const xnn_status st = xnn_setup_runtime(nr.runtime, nr.externals.size(),
                                              nr.externals.data());
      if (st != xnn_status_success) {
        return host->status_create_formatted(
            host, GRAFT_STATUS_INTERNAL,
            "xnnpack dispatch: entry '%s': xnn_setup_runtime of %s failed: "
            "%s",
            inv->entry.c_str(), nr.name.c_str(), XnnStatusName(st));
      }
    }
    inv->nodes_need_setup = false;
  }
  const uint64_t run_start = NowNs();
  for (size_t n = 0; n < inv->nodes.size(); ++n) {
    const uint64_t start = NowNs();
    const xnn_status st = xnn_invoke_runtime(inv->nodes[n].runtime);
    inv->events[1 + n] = {inv->nodes[n].name.c_str(), start, NowNs(),
                          (entry_index << 32) | (n + 1)};
    if (st != xnn_status_success) {
      inv->num_profile_events = 0;
      return host->status_create_formatted(
          host, GRAFT_STATUS_INTERNAL,
          "xnnpack dispatch: entry '%s': xnn_invoke_runtime of %s failed: %s",
          inv->entry.c_str(), inv->nodes[n].name.c_str(), XnnStatusName(st));
    }
  }
  inv->events[0] = {inv->profile_name.c_str(), run_start, NowNs(), 0};
  inv->num_profile_events = inv->events.size();
  return nullptr;
}

}  // namespace

GRAFT_EXPORT uint32_t graft_dispatch_abi_version(void) {
  return GRAFT_ABI_VERSION;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_create(
    const graft_host_api_t* host, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_t** out_dispatch) {
  if (host == nullptr) return &kNullHostStatus;
  if (GRAFT_ABI_VERSION_GET_MAJOR(host->abi_version) !=
          GRAFT_ABI_VERSION_MAJOR ||
      host->struct_size < sizeof(graft_host_api_t)) {
    return &kBadHostStatus;
  }
  if (out_dispatch == nullptr || (options == nullptr && num_options > 0)) {
    return &kBadCreateArgsStatus;
  }
  size_t threads = 1;
  for (size_t i = 0; i < num_options; ++i) {
    const char* key = options[i].key;
    const char* value = options[i].value;
    if (key == nullptr || value == nullptr) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "xnnpack dispatch: option %zu has a NULL key or value", i);
    }
    if (std::strcmp(key, "num_threads") != 0) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "xnnpack dispatch: unknown option '%s' (known: num_threads)", key);
    }
    if (!ParseThreads(value, &threads)) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "xnnpack dispatch: option num_threads must be 1 to 256, got '%s'",
          value);
    }
  }
  const xnn_status st = InitializeXnnpack();
  if (st != xnn_status_success) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_UNAVAILABLE,
        "xnnpack dispatch: xnn_initialize failed: %s", XnnStatusName(st));
  }
  auto* dispatch = new graft_dispatch_t();
  dispatch->host = host;
  dispatch->num_threads = threads;
  graft_dispatch_info_t& info = dispatch->info;
  info.struct_size = sizeof(info);
  info.abi_version = GRAFT_ABI_VERSION;
  info.capabilities =
      GRAFT_DISPATCH_CAPABILITY_ASYNC | GRAFT_DISPATCH_CAPABILITY_PROFILING;
  info.vendor = kVendor;
  info.library_version = kLibraryVersion;
  info.build_id = g_build_id;
  info.description = "runs xnnpack bytecode as XNNPACK subgraphs on the CPU";
  info.hardware_kinds = GRAFT_HARDWARE_KIND_CPU;
  info.min_bytecode_format_version = kBytecodeFormatVersion;
  info.max_bytecode_format_version = kBytecodeFormatVersion;
  info.options = kOptions;
  info.num_options = sizeof(kOptions) / sizeof(kOptions[0]);
  *out_dispatch = dispatch;
  return nullptr;
}

GRAFT_EXPORT void graft_dispatch_destroy(graft_dispatch_t* dispatch) {
  // XNNPACK stays initialized: xnn_deinitialize is a no-op in this version
  // and other instances may still use it.
  delete dispatch;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_get_info(
    const graft_dispatch_t* dispatch, const graft_dispatch_info_t** out_info) {
  if (dispatch == nullptr) return &kNullDispatchStatus;
  if (out_info == nullptr) {
    return Error(dispatch->host, GRAFT_STATUS_INVALID_ARGUMENT,
                 "xnnpack dispatch: out_info is NULL");
  }
  *out_info = &dispatch->info;
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_check_compatibility(
    graft_dispatch_t* dispatch, const graft_compatibility_stamp_t* stamp) {
  if (dispatch == nullptr) return &kNullDispatchStatus;
  const graft_host_api_t* host = dispatch->host;
  if (stamp == nullptr ||
      !GRAFT_STRUCT_HAS_MEMBER(stamp, graft_compatibility_stamp_t, soc_model) ||
      stamp->vendor == nullptr || stamp->plugin_version == nullptr ||
      stamp->soc_model == nullptr) {
    return Error(host, GRAFT_STATUS_INVALID_ARGUMENT,
                 "xnnpack dispatch: the stamp is NULL, truncated or has NULL "
                 "strings");
  }
  if (std::strcmp(stamp->vendor, kVendor) != 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "xnnpack dispatch: bytecode of vendor '%s' cannot run here (this "
        "library runs vendor '%s'; use libgraft_dispatch_%s.so)",
        stamp->vendor, kVendor, stamp->vendor);
  }
  if (GRAFT_ABI_VERSION_GET_MAJOR(stamp->abi_version) !=
      GRAFT_ABI_VERSION_MAJOR) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "xnnpack dispatch: bytecode from a plugin of ABI major %u (this "
        "library is ABI major %u)",
        GRAFT_ABI_VERSION_GET_MAJOR(stamp->abi_version),
        GRAFT_ABI_VERSION_MAJOR);
  }
  if (stamp->bytecode_format_version != kBytecodeFormatVersion) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "xnnpack dispatch: bytecode format version %u from plugin %s not "
        "supported (this library runs %u to %u); recompile the model with "
        "a matching xnnpack plugin",
        stamp->bytecode_format_version, stamp->plugin_version,
        kBytecodeFormatVersion, kBytecodeFormatVersion);
  }
  if (std::strncmp(stamp->plugin_version, "1.", 2) != 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "xnnpack dispatch: plugin version %s not supported (this library %s "
        "runs plugin versions 1.x)",
        stamp->plugin_version, kLibraryVersion);
  }
  if (std::strcmp(stamp->soc_model, kSocModel) != 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_FAILED_PRECONDITION,
        "xnnpack dispatch: bytecode for SoC model '%s' (this library runs "
        "'%s')",
        stamp->soc_model, kSocModel);
  }
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_device_context_create(
    graft_dispatch_t* dispatch, const graft_key_value_t* options,
    size_t num_options, graft_dispatch_device_context_t** out_context) {
  if (dispatch == nullptr) return &kNullDispatchStatus;
  const graft_host_api_t* host = dispatch->host;
  if (out_context == nullptr || (options == nullptr && num_options > 0)) {
    return Error(host, GRAFT_STATUS_INVALID_ARGUMENT,
                 "xnnpack dispatch: device_context_create needs out_context, "
                 "and options when num_options > 0");
  }
  size_t threads = dispatch->num_threads;
  for (size_t i = 0; i < num_options; ++i) {
    const char* key = options[i].key;
    const char* value = options[i].value;
    if (key == nullptr || value == nullptr ||
        std::strcmp(key, "num_threads") != 0) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "xnnpack dispatch: unknown device context option '%s' (known: "
          "num_threads)",
          key != nullptr ? key : "(null)");
    }
    if (!ParseThreads(value, &threads)) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INVALID_ARGUMENT,
          "xnnpack dispatch: option num_threads must be 1 to 256, got '%s'",
          value);
    }
  }
  pthreadpool_t pool = nullptr;
  if (threads > 1) {
    pool = pthreadpool_create(threads);
    if (pool == nullptr) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
          "xnnpack dispatch: cannot start a pool of %zu threads", threads);
    }
  }
  auto* context = new graft_dispatch_device_context_t();
  context->dispatch = dispatch;
  context->pool = pool;
  *out_context = context;
  return nullptr;
}

GRAFT_EXPORT void graft_dispatch_device_context_destroy(
    graft_dispatch_device_context_t* context) {
  if (context == nullptr) return;
  if (context->pool != nullptr) pthreadpool_destroy(context->pool);
  delete context;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_create(
    graft_dispatch_device_context_t* context,
    const graft_dispatch_invocation_desc_t* desc,
    graft_dispatch_invocation_t** out_invocation) {
  if (context == nullptr) return &kNullContextStatus;
  const graft_host_api_t* host = context->dispatch->host;
  if (desc == nullptr || out_invocation == nullptr ||
      !GRAFT_STRUCT_HAS_MEMBER(desc, graft_dispatch_invocation_desc_t, flags) ||
      desc->entry_point == nullptr || desc->bytecode.data == nullptr) {
    return Error(host, GRAFT_STATUS_INVALID_ARGUMENT,
                 "xnnpack dispatch: invocation_create needs a desc (not "
                 "truncated) with bytecode and an entry point, and "
                 "out_invocation");
  }
  Program prog;
  Problem problem;
  if (!ReadProgram(desc, &prog, &problem)) {
    return host->status_create_formatted(
        host, problem.code, "xnnpack dispatch: entry '%s': %s",
        desc->entry_point, problem.message.c_str());
  }
  auto inv = std::make_unique<graft_dispatch_invocation_t>();
  inv->context = context;
  inv->host = host;
  inv->entry = desc->entry_point;
  inv->values = prog.values;
  inv->profiling =
      (desc->flags & GRAFT_DISPATCH_INVOCATION_FLAG_PROFILING) != 0;
  inv->profile_name = "xnnpack runtime " + inv->entry;
  inv->entry_index = prog.entry_index;
  graft_status_t* status = BuildRuntime(inv.get(), prog);
  if (status != nullptr) return status;
  if (inv->profiling) {
    status = BuildNodeRuntimes(inv.get(), prog);
    if (status != nullptr) return status;
  }
  for (int kind = 0; kind < 2; ++kind) {
    const std::vector<uint32_t>& ids = kind == 0 ? prog.inputs : prog.outputs;
    std::vector<Io>& ios = kind == 0 ? inv->inputs : inv->outputs;
    ios.resize(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) {
      const ValueSpec& v = prog.values[ids[k]];
      Io& io = ios[k];
      io.value = ids[k];
      io.bytes = NumElements(v.dims) * DataTypeSize(v.datatype);
      io.element_type = v.datatype == DataType::FP32
                            ? GRAFT_ELEMENT_TYPE_FLOAT32
                            : GRAFT_ELEMENT_TYPE_INT8;
      if (kind == 0) {
        io.staging = AllocateAligned(io.bytes + XNN_EXTRA_BYTES);
        if (io.staging == nullptr) {
          return Error(host, GRAFT_STATUS_RESOURCE_EXHAUSTED,
                       "xnnpack dispatch: out of memory");
        }
      }
      inv->externals.push_back({ids[k], nullptr});
    }
  }
  *out_invocation = inv.release();
  return nullptr;
}

GRAFT_EXPORT void graft_dispatch_invocation_destroy(
    graft_dispatch_invocation_t* invocation) {
  delete invocation;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_buffer_requirements(
    const graft_dispatch_invocation_t* invocation,
    graft_dispatch_io_kind_t kind, size_t index,
    graft_dispatch_buffer_requirements_t* out_requirements) {
  if (invocation == nullptr) return &kNullInvocationStatus;
  const graft_host_api_t* host = invocation->host;
  const std::vector<Io>* ios =
      kind == GRAFT_DISPATCH_IO_KIND_INPUT    ? &invocation->inputs
      : kind == GRAFT_DISPATCH_IO_KIND_OUTPUT ? &invocation->outputs
                                              : nullptr;
  if (ios == nullptr || index >= ios->size() || out_requirements == nullptr ||
      !GRAFT_STRUCT_HAS_MEMBER(out_requirements,
                               graft_dispatch_buffer_requirements_t,
                               element_type)) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "xnnpack dispatch: get_buffer_requirements: bad kind %d, index %zu "
        "or requirements struct",
        static_cast<int>(kind), index);
  }
  const Io& io = (*ios)[index];
  out_requirements->size = io.bytes;
  out_requirements->alignment =
      io.element_type == GRAFT_ELEMENT_TYPE_INT8 ? 1 : 4;
  out_requirements->element_type = io.element_type;
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_attach_host_memory(
    graft_dispatch_invocation_t* invocation, graft_dispatch_io_kind_t kind,
    size_t index, void* data, size_t size) {
  if (invocation == nullptr) return &kNullInvocationStatus;
  const graft_host_api_t* host = invocation->host;
  const bool input = kind == GRAFT_DISPATCH_IO_KIND_INPUT;
  std::vector<Io>* ios = input ? &invocation->inputs
                         : kind == GRAFT_DISPATCH_IO_KIND_OUTPUT
                             ? &invocation->outputs
                             : nullptr;
  if (ios == nullptr || index >= ios->size()) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "xnnpack dispatch: attach: bad kind %d or index %zu",
        static_cast<int>(kind), index);
  }
  if (invocation->in_flight) {
    return Error(host, GRAFT_STATUS_FAILED_PRECONDITION,
                 "xnnpack dispatch: attach during a run started with "
                 "invoke_async; wait for it first");
  }
  Io& io = (*ios)[index];
  const size_t alignment = io.element_type == GRAFT_ELEMENT_TYPE_INT8 ? 1 : 4;
  if ((data == nullptr && size > 0) || size < io.bytes ||
      reinterpret_cast<uintptr_t>(data) % alignment != 0) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INVALID_ARGUMENT,
        "xnnpack dispatch: attach %s %zu: %zu bytes at %p; it needs %zu "
        "bytes aligned to %zu",
        input ? "input" : "output", index, size, data, io.bytes, alignment);
  }
  io.host = data;
  // XNNPACK may read XNN_EXTRA_BYTES past an input (and never uses what it
  // reads there). Without that slack in the attachment the input goes
  // through the staging copy, unless those bytes lie in the page of the
  // input's last byte: mapped, so the read cannot fault. That spares the
  // copy (tens to hundreds of microseconds for a MobileNet-sized input) in
  // all but XNN_EXTRA_BYTES / page size of attachments.
  io.staged = input && size < io.bytes + XNN_EXTRA_BYTES &&
              OverreadCrossesPage(data, io.bytes);
  void* effective = io.staged ? io.staging.get() : data;
  const size_t slot = input ? index : invocation->inputs.size() + index;
  if (invocation->externals[slot].data != effective) {
    invocation->externals[slot].data = effective;
    invocation->needs_setup = true;
    invocation->nodes_need_setup = true;
  }
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke(
    graft_dispatch_invocation_t* invocation) {
  if (invocation == nullptr) return &kNullInvocationStatus;
  const graft_host_api_t* host = invocation->host;
  if (invocation->in_flight) {
    return Error(host, GRAFT_STATUS_FAILED_PRECONDITION,
                 "xnnpack dispatch: a run started with invoke_async has not "
                 "been waited for");
  }
  for (int kind = 0; kind < 2; ++kind) {
    const std::vector<Io>& ios =
        kind == 0 ? invocation->inputs : invocation->outputs;
    for (size_t i = 0; i < ios.size(); ++i) {
      if (ios[i].host == nullptr && ios[i].bytes > 0) {
        return host->status_create_formatted(
            host, GRAFT_STATUS_FAILED_PRECONDITION,
            "xnnpack dispatch: entry '%s': %s %zu is not attached",
            invocation->entry.c_str(), kind == 0 ? "input" : "output", i);
      }
    }
  }
  for (Io& io : invocation->inputs) {
    if (io.staged) std::memcpy(io.staging.get(), io.host, io.bytes);
  }
  if (invocation->profiling) {
    return InvokeNodes(invocation, invocation->entry_index);
  }
  if (invocation->needs_setup) {
    const xnn_status st =
        xnn_setup_runtime(invocation->runtime, invocation->externals.size(),
                          invocation->externals.data());
    if (st != xnn_status_success) {
      return host->status_create_formatted(
          host, GRAFT_STATUS_INTERNAL,
          "xnnpack dispatch: entry '%s': xnn_setup_runtime failed: %s",
          invocation->entry.c_str(), XnnStatusName(st));
    }
    invocation->needs_setup = false;
  }
  const xnn_status st = xnn_invoke_runtime(invocation->runtime);
  if (st != xnn_status_success) {
    return host->status_create_formatted(
        host, GRAFT_STATUS_INTERNAL,
        "xnnpack dispatch: entry '%s': xnn_invoke_runtime failed: %s",
        invocation->entry.c_str(), XnnStatusName(st));
  }
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_invoke_async(
    graft_dispatch_invocation_t* invocation) {
  // XNNPACK runs synchronously: the run happens here and wait collects it.
  graft_status_t* status = graft_dispatch_invocation_invoke(invocation);
  if (status == nullptr) invocation->in_flight = true;
  return status;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_wait(
    graft_dispatch_invocation_t* invocation, uint64_t timeout_ns) {
  (void)timeout_ns;
  if (invocation == nullptr) return &kNullInvocationStatus;
  if (!invocation->in_flight) {
    return Error(invocation->host, GRAFT_STATUS_FAILED_PRECONDITION,
                 "xnnpack dispatch: wait without a run in flight");
  }
  invocation->in_flight = false;
  return nullptr;
}

GRAFT_EXPORT graft_status_t* graft_dispatch_invocation_get_profile(
    const graft_dispatch_invocation_t* invocation,
    const graft_dispatch_profile_event_t** out_events, size_t* out_num_events) {
  if (invocation == nullptr) return &kNullInvocationStatus;
  const graft_host_api_t* host = invocation->host;
  if (out_events == nullptr || out_num_events == nullptr) {
    return Error(host, GRAFT_STATUS_INVALID_ARGUMENT,
                 "xnnpack dispatch: get_profile needs out_events and "
                 "out_num_events");
  }
  if (!invocation->profiling || invocation->in_flight) {
    return Error(host, GRAFT_STATUS_FAILED_PRECONDITION,
                 "xnnpack dispatch: no profile: the invocation was created "
                 "without the profiling flag, or a run is in flight");
  }
  *out_events =
      invocation->num_profile_events > 0 ? invocation->events.data() : nullptr;
  *out_num_events = invocation->num_profile_events;
  return nullptr;
}
