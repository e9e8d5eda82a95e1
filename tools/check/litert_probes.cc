// misuse.* and dispatch.bytecode / dispatch.buffers for LiteRT-ABI
// libraries (libLiteRtCompilerPlugin_*.so, libLiteRtDispatch_*.so), each
// probe in its own child process, straight against the exports.
//
// LiteRT's ABI promises less than Graft's: its headers say nothing of NULL
// arguments or calls out of order. So each probe says whether LiteRT
// defines the call (LiteRT's own host makes it, or the ABI has a status for
// it): a crash or hang there fails the check; elsewhere it is warned. An
// answer that is not the one expected (OK where an error was due) is
// warned either way, since LiteRT writes down no status for misuse.
//
// Defined here: unknown SoC models, a NULL SoC model (LiteRT's host passes
// NULL when no SoC model is given), compiler-context tables of the sizes
// LiteRT hosts pass (an older minor's shorter one, a later minor's longer
// one), a runtime API version the library does not speak, out-of-range
// input and output indices (kLiteRtStatusErrorIndexOOB), handles never
// registered, and bytecode that is not what the plugin wrote (it comes
// from a file). Undefined: NULL pointers and handles, calls out of order,
// buffers smaller than the library's own requirements.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/model_builder.h"
#include "dispatch/litert_dispatch_library.h"
#include "plugins/child_process.h"
#include "plugins/litert_compiler_context.h"
#include "plugins/litert_plugin_options.h"
#include "tools/check/checks.h"
#include "tools/check/raw_abi.h"

namespace graft::check {
namespace {

using namespace litert_abi;  // NOLINT: LiteRT's dispatch names.

constexpr char kNoSuchSoc[] = "graft-check-no-such-soc";

// A probe: `run` returns "" or what it answered instead of the expected
// (warned); a crash, hang or exit in it is a finding of `defined`'s weight.
template <typename Env>
struct LiteRtProbe {
  std::string name;
  bool defined;
  std::function<std::string(Env&)> run;
};

template <typename Env>
void RunLiteRtProbes(const Subject& s, const std::string& id,
                     const std::string& what,
                     const std::vector<LiteRtProbe<Env>>& probes,
                     const std::function<absl::Status(Env&)>& setup,
                     CheckReport& report) {
  CheckResult r{id, Outcome::kPass, "", {}};
  int failed = 0, warned = 0;
  for (const LiteRtProbe<Env>& p : probes) {
    absl::StatusOr<std::string> answer = RunInChildProcess(
        [&]() -> absl::StatusOr<std::string> {
          Env env;
          if (absl::Status st = setup(env); !st.ok()) {
            return absl::FailedPreconditionError(
                absl::StrCat(p.name, ": setup (a correct call) failed: ",
                             st.message()));
          }
          return p.run(env);
        },
        absl::Seconds(
            std::min<int64_t>(30, absl::ToInt64Seconds(s.options.timeout))),
        p.name);
    if (!answer.ok()) {
      // A correct call failing in setup (FailedPrecondition) fails the
      // check whatever the probe; a crash or hang (the child's errors)
      // weighs as the probe's call does.
      const bool fail =
          p.defined || absl::IsFailedPrecondition(answer.status());
      (fail ? failed : warned)++;
      r.findings.push_back(absl::StrCat(
          answer.status().message(),
          fail ? "" : " (LiteRT's ABI leaves this call undefined: warned)"));
    } else if (!answer->empty()) {
      ++warned;
      r.findings.push_back(absl::StrCat(p.name, ": ", *answer));
    }
  }
  r.outcome = failed > 0   ? Outcome::kFail
              : warned > 0 ? Outcome::kWarn
                           : Outcome::kPass;
  r.summary = absl::StrCat(
      probes.size(), " ", what,
      r.findings.empty()
          ? ": no crash, no hang, each answered as expected"
          : absl::StrCat(": ", failed, " failed where LiteRT defines the call, ",
                         warned, " warned"));
  if (failed > 0) r.repro = s.Repro(absl::StrCat(" --only=", id));
  report.Add(std::move(r));
}

std::string ExpectError(LiteRtStatus st) {
  return st == kLiteRtStatusOk ? "answered kLiteRtStatusOk; expected an error"
                               : "";
}

// ---------------------------------------------------------------------------
// The compiler plugin.

// The host's compiler context as a host of `size` bytes passes it: cut
// short (the slots past `size` absent) or followed by zeroed slots.
class SizedCompilerContext {
 public:
  SizedCompilerContext(size_t size, uint16_t minor)
      : bytes_((std::max(size, sizeof(LiteRtCompilerContext)) + 7) / 8, 0) {
    std::memcpy(bytes_.data(), LiteRtHostCompilerContext(),
                std::min(size, sizeof(LiteRtCompilerContext)));
    auto* c = reinterpret_cast<LiteRtCompilerContext*>(bytes_.data());
    c->abi_header.struct_size = static_cast<uint16_t>(size);
    c->abi_header.minor_version = minor;
  }
  const LiteRtCompilerContext* get() const {
    return reinterpret_cast<const LiteRtCompilerContext*>(bytes_.data());
  }

 private:
  std::vector<uint64_t> bytes_;
};

struct PluginEnv {
  RawLiteRtPlugin raw;
  LiteRtHostOptions options;
  LiteRtCompilerPlugin plugin = nullptr;
  Model model;
  std::unique_ptr<LiteRtGraph> graph;
  std::string soc;

  LiteRtStatus Partition(const char* soc_model) {
    return raw.partition(plugin, soc_model, graph->subgraph(0),
                         graph->op_list(0));
  }
  LiteRtStatus Compile(const char* soc_model) {
    LiteRtCompiledResult r = nullptr;
    LiteRtStatus st = raw.compile(plugin, soc_model, graph->model(), &r);
    if (r != nullptr) raw.destroy_result(r);
    return st;
  }
};

void LiteRtPluginMisuse(const Subject& s, CheckReport& report) {
  const Model model = PluginProbeModel(s);
  const std::string soc = s.soc_model;
  const std::string path = s.options.plugin_path;
  auto create = [](PluginEnv& e, const LiteRtCompilerContext* context,
                     LiteRtCompilerPlugin* out) -> LiteRtStatus {
    return e.raw.create(context, out, e.options.environment(),
                        e.options.options());
  };
  auto setup = [&](PluginEnv& e) -> absl::Status {
    auto raw = LoadRawLiteRtPlugin(path);
    if (!raw.ok()) return raw.status();
    e.raw = *std::move(raw);
    const char* manufacturer = e.raw.soc_manufacturer();
    if (absl::Status st =
            SetLiteRtPluginOptions(manufacturer != nullptr ? manufacturer : "",
                                   s.options.plugin_options, e.options);
        !st.ok()) {
      return st;
    }
    if (LiteRtStatus st = create(e, LiteRtHostCompilerContext(), &e.plugin);
        st != kLiteRtStatusOk || e.plugin == nullptr) {
      return absl::InternalError(absl::StrCat("create answered ", st));
    }
    e.soc = soc;
    e.model = model;
    const SubgraphId first = 0;
    e.graph = std::make_unique<LiteRtGraph>(e.model, absl::MakeSpan(&first, 1));
    return absl::OkStatus();
  };
  using P = LiteRtProbe<PluginEnv>;
  std::vector<P> probes = {
      {"partition(an unknown SoC model)", true,
       [](PluginEnv& e) { return ExpectError(e.Partition(kNoSuchSoc)); }},
      {"compile(an unknown SoC model)", true,
       [](PluginEnv& e) { return ExpectError(e.Compile(kNoSuchSoc)); }},
      {"partition(soc_model=NULL, as LiteRT's host passes with no SoC "
       "model)",
       true,
       [](PluginEnv& e) {
         e.Partition(nullptr);
         return std::string();
       }},
      {"compile(soc_model=NULL, as LiteRT's host passes with no SoC model)",
       true,
       [](PluginEnv& e) {
         e.Partition(e.soc.c_str());
         e.Compile(nullptr);
         return std::string();
       }},
      {"create with a version 1.0 compiler context (130 slots, an older "
       "host's), then partition and compile",
       true,
       [create](PluginEnv& e) {
         SizedCompilerContext c(sizeof(::LiteRtAbiHeader) + 130 * sizeof(void*),
                                0);
         LiteRtCompilerPlugin p = nullptr;
         if (create(e, c.get(), &p) != kLiteRtStatusOk || p == nullptr) {
           return std::string();  // Refusing an older host is allowed.
         }
         e.plugin = p;
         e.Partition(e.soc.c_str());
         e.Compile(e.soc.c_str());
         return std::string();
       }},
      {"create with a compiler context 64 bytes longer (a later minor's)",
       true,
       [create](PluginEnv& e) {
         SizedCompilerContext c(sizeof(LiteRtCompilerContext) + 64, 9);
         LiteRtCompilerPlugin p = nullptr;
         return create(e, c.get(), &p) == kLiteRtStatusOk
                    ? std::string()
                    : std::string("refused a longer table; expected OK");
       }},
      {"create(context=NULL)", false,
       [create](PluginEnv& e) {
         LiteRtCompilerPlugin p = nullptr;
         return ExpectError(create(e, nullptr, &p));
       }},
      {"create(plugin=NULL)", false,
       [create](PluginEnv& e) {
         return ExpectError(create(e, LiteRtHostCompilerContext(), nullptr));
       }},
      {"get_supported_hardware(plugin=NULL)", false,
       [](PluginEnv& e) {
         LiteRtHwAcceleratorSet hw = 0;
         return ExpectError(e.raw.supported_hardware(nullptr, &hw));
       }},
      {"get_num_supported_soc_models(num=NULL)", false,
       [](PluginEnv& e) {
         return ExpectError(e.raw.num_soc_models(e.plugin, nullptr));
       }},
      {"get_supported_soc_model(index = the number it reports)", false,
       [](PluginEnv& e) {
         LiteRtParamIndex n = 0;
         e.raw.num_soc_models(e.plugin, &n);
         const char* name = nullptr;
         return ExpectError(e.raw.soc_model(e.plugin, n, &name));
       }},
      {"partition(plugin=NULL)", false,
       [](PluginEnv& e) {
         return ExpectError(e.raw.partition(nullptr, e.soc.c_str(),
                                            e.graph->subgraph(0),
                                            e.graph->op_list(0)));
       }},
      {"partition(subgraph=NULL)", false,
       [](PluginEnv& e) {
         return ExpectError(e.raw.partition(e.plugin, e.soc.c_str(), nullptr,
                                            e.graph->op_list(0)));
       }},
      {"partition(selected_ops=NULL)", false,
       [](PluginEnv& e) {
         return ExpectError(e.raw.partition(e.plugin, e.soc.c_str(),
                                            e.graph->subgraph(0), nullptr));
       }},
      {"compile(plugin=NULL)", false,
       [](PluginEnv& e) {
         LiteRtCompiledResult r = nullptr;
         return ExpectError(
             e.raw.compile(nullptr, e.soc.c_str(), e.graph->model(), &r));
       }},
      {"compile(partitions=NULL)", false,
       [](PluginEnv& e) {
         LiteRtCompiledResult r = nullptr;
         return ExpectError(e.raw.compile(e.plugin, e.soc.c_str(), nullptr, &r));
       }},
      {"compile(compiled_result=NULL)", false,
       [](PluginEnv& e) {
         return ExpectError(e.raw.compile(e.plugin, e.soc.c_str(),
                                          e.graph->model(), nullptr));
       }},
      {"compile before any partition call (out of order)", false,
       [](PluginEnv& e) {
         e.Compile(e.soc.c_str());
         return std::string();
       }},
      {"partition again after a compile, then compile again", false,
       [](PluginEnv& e) {
         e.Partition(e.soc.c_str());
         e.Compile(e.soc.c_str());
         e.Partition(e.soc.c_str());
         e.Compile(e.soc.c_str());
         return std::string();
       }},
      {"compiled result: bytecode and call info at index = their count", false,
       [](PluginEnv& e) {
         e.Partition(e.soc.c_str());
         LiteRtCompiledResult r = nullptr;
         if (e.raw.compile(e.plugin, e.soc.c_str(), e.graph->model(), &r) !=
                 kLiteRtStatusOk ||
             r == nullptr) {
           return std::string();
         }
         LiteRtParamIndex modules = 0, calls = 0;
         e.raw.result_num_bytecode(r, &modules);
         e.raw.result_num_calls(r, &calls);
         const void* data = nullptr;
         size_t size = 0;
         LiteRtParamIndex module = 0;
         std::string a =
             ExpectError(e.raw.result_bytecode(r, modules, &data, &size));
         std::string b = ExpectError(
             e.raw.result_call_info(r, calls, &data, &size, &module));
         if (!a.empty()) a = absl::StrCat("bytecode ", a);
         if (!b.empty()) b = absl::StrCat("call info ", b);
         return absl::StrCat(a, !a.empty() && !b.empty() ? "; " : "", b);
       }},
      {"destroy(NULL), destroy_compiled_result(NULL)", false,
       [](PluginEnv& e) {
         e.raw.destroy_result(nullptr);
         e.raw.destroy(nullptr);
         return std::string();
       }},
  };
  absl::StatusOr<RawLiteRtPlugin> exports = LoadRawLiteRtPlugin(path);
  if (exports.ok() && exports->check_compatibility != nullptr) {
    probes.push_back(
        {"check_compiler_compatibility(an unknown SoC model)", true,
         [](PluginEnv& e) {
           return ExpectError(e.raw.check_compatibility(
               {LITERT_HOST_API_VERSION_MAJOR, LITERT_HOST_API_VERSION_MINOR,
                LITERT_HOST_API_VERSION_PATCH},
               e.plugin, e.options.environment(), e.options.options(),
               kNoSuchSoc));
         }});
    probes.push_back(
        {"check_compiler_compatibility(LiteRT API 99.0.0)", true,
         [](PluginEnv& e) {
           return ExpectError(e.raw.check_compatibility(
               {99, 0, 0}, e.plugin, e.options.environment(),
               e.options.options(), e.soc.c_str()));
         }});
  }
  RunLiteRtProbes<PluginEnv>(s, "misuse.plugin",
                             "probes of the LiteRT plugin ABI, each in a "
                             "child process",
                             probes, setup, report);
}

// ---------------------------------------------------------------------------
// The dispatch library.

// Memory whose last byte is followed by an inaccessible page, so a write
// past `size` crashes instead of passing unseen. `aligned`: the start is
// 64-byte aligned (as LiteRT's host aligns buffers), leaving up to 63
// bytes before the guard; otherwise the end touches it.
class GuardedBytes {
 public:
  GuardedBytes(size_t size, bool aligned) : size_(size) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pages_ = (std::max<size_t>(size, 1) + page - 1) / page * page + page;
    void* m = mmap(nullptr, pages_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<uint8_t*>(m);
    mprotect(base_ + pages_ - page, page, PROT_NONE);
    size_t at = pages_ - page - size;
    if (aligned) at = at / 64 * 64;
    data_ = base_ + at;
  }
  ~GuardedBytes() {
    if (base_ != nullptr) munmap(base_, pages_);
  }
  uint8_t* data() const { return data_; }

 private:
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t size_ = 0, pages_ = 0;
};

struct DispatchEnv {
  std::shared_ptr<LiteRtDispatchLibrary> lib;
  const LiteRtDispatchInterface* api = nullptr;
  LiteRtDispatchDeviceContext context = nullptr;
  LiteRtMemBuffer bytecode = {};
  const LiteRtDispatchCall* call = nullptr;
  std::vector<uint8_t> file;  // the (maybe mutated) copy `bytecode` points in
  std::vector<std::unique_ptr<GuardedBytes>> memory;

  LiteRtStatus Create(const LiteRtMemBuffer& code, const char* entry,
                      int inputs, int outputs,
                      LiteRtDispatchInvocationContext* out) {
    return api->invocation_context_create(
        lib->runtime_context(), context, kLiteRtDispatchExecutableTypeMlModel,
        &code, entry, inputs, outputs, out);
  }
  LiteRtDispatchInvocationContext Create() {
    LiteRtDispatchInvocationContext inv = nullptr;
    if (Create(bytecode, call->entry_point.c_str(),
               static_cast<int>(call->input_types.size()),
               static_cast<int>(call->output_types.size()),
               &inv) != kLiteRtStatusOk) {
      return nullptr;
    }
    return inv;
  }

  // A tensor buffer for input/output `i` as its requirements ask (host
  // memory, or the library's own custom type through its handlers), of
  // `shrink` bytes fewer; registered. Returns the status of the first call
  // that refused, and the handle.
  LiteRtStatus Buffer(LiteRtDispatchInvocationContext inv, bool input, int i,
                      size_t shrink, LiteRtTensorBufferHandle* handle) {
    const LiteRtRankedTensorType& type =
        input ? call->input_types[i] : call->output_types[i];
    LiteRtTensorBufferRequirements r = nullptr;
    LiteRtStatus st =
        input ? api->get_input_requirements(inv, i, &type, &r)
              : api->get_output_requirements(inv, i, &type, &r);
    if (st != kLiteRtStatusOk) return st;
    absl::StatusOr<LiteRtBufferRequirements> req = TakeRequirements(r);
    if (!req.ok()) return kLiteRtStatusErrorInvalidArgument;
    const size_t size = req->size > shrink ? req->size - shrink : 0;
    LiteRtTensorBuffer buffer = nullptr;
    if (req->SupportsHostMemory()) {
      memory.push_back(std::make_unique<GuardedBytes>(size, shrink == 0));
      buffer = NewHostTensorBuffer(type, memory.back()->data(), size);
    } else if (const LiteRtCustomTensorBufferHandlersDef* h = lib->handlers();
               h != nullptr && !req->supported_types.empty()) {
      HwMemoryInfoPtr hw = nullptr;
      st = h->create_func(nullptr, nullptr, &type, req->supported_types[0],
                          size, size, &hw);
      if (st != kLiteRtStatusOk) return st;
      buffer = NewHostTensorBuffer(type, nullptr, size);
      buffer->buffer_type = req->supported_types[0];
      buffer->hw_memory = hw;
    } else {
      return kLiteRtStatusErrorUnsupported;
    }
    return api->register_tensor_buffer(context, buffer, handle);
  }

  // Attaches buffers of the sizes the library asks for and invokes; any
  // status is fine, only crashes and hangs are not.
  void AttachAndRun(LiteRtDispatchInvocationContext inv, int inputs,
                    int outputs) {
    for (int i = 0; i < inputs + outputs; ++i) {
      const bool input = i < inputs;
      const int k = input ? i : i - inputs;
      if (static_cast<size_t>(k) >=
          (input ? call->input_types : call->output_types).size()) {
        return;
      }
      LiteRtTensorBufferHandle h = 0;
      if (Buffer(inv, input, k, 0, &h) != kLiteRtStatusOk) return;
      if ((input ? api->attach_input(inv, k, h)
                 : api->attach_output(inv, k, h)) != kLiteRtStatusOk) {
        return;
      }
    }
    api->invoke(inv);
  }
};

std::function<absl::Status(DispatchEnv&)> DispatchSetup(
    const std::string& path, const LiteRtDispatchCall& call) {
  return [&path, &call](DispatchEnv& e) -> absl::Status {
    absl::StatusOr<std::shared_ptr<LiteRtDispatchLibrary>> lib =
        LiteRtDispatchLibrary::Load(path);
    if (!lib.ok()) return lib.status();
    e.lib = *std::move(lib);
    e.api = &e.lib->api();
    if (LiteRtStatus st = e.api->device_context_create(
            e.lib->runtime_context(), e.lib->options(), &e.context);
        st != kLiteRtStatusOk || e.context == nullptr) {
      return absl::InternalError(
          absl::StrCat("device_context_create answered ", st));
    }
    e.call = &call;
    e.file = call.file;
    e.bytecode = {-1, e.file.data(), call.offset, call.size};
    return absl::OkStatus();
  };
}

void LiteRtDispatchMisuse(const Subject& s, const LiteRtDispatchCall& call,
                          CheckReport& report) {
  using P = LiteRtProbe<DispatchEnv>;
  std::vector<P> probes = {
      {"invocation_context_create(exec type DspLibrary for an ML model)", true,
       [](DispatchEnv& e) {
         LiteRtDispatchInvocationContext inv = nullptr;
         return ExpectError(e.api->invocation_context_create(
             e.lib->runtime_context(), e.context,
             kLiteRtDispatchExecutableTypeDspLibrary, &e.bytecode,
             e.call->entry_point.c_str(),
             static_cast<int>(e.call->input_types.size()),
             static_cast<int>(e.call->output_types.size()), &inv));
       }},
      {"unregister_tensor_buffer(a handle never registered)", true,
       [](DispatchEnv& e) {
         return ExpectError(
             e.api->unregister_tensor_buffer(e.context, 0x6772616674));
       }},
      {"device_context_create(device_context=NULL)", false,
       [](DispatchEnv& e) {
         return ExpectError(e.api->device_context_create(
             e.lib->runtime_context(), e.lib->options(), nullptr));
       }},
      {"invocation_context_create(device_context=NULL)", false,
       [](DispatchEnv& e) {
         LiteRtDispatchInvocationContext inv = nullptr;
         return ExpectError(e.api->invocation_context_create(
             e.lib->runtime_context(), nullptr,
             kLiteRtDispatchExecutableTypeMlModel, &e.bytecode,
             e.call->entry_point.c_str(), 1, 1, &inv));
       }},
      {"invocation_context_create(exec_bytecode_buffer=NULL)", false,
       [](DispatchEnv& e) {
         LiteRtDispatchInvocationContext inv = nullptr;
         return ExpectError(e.api->invocation_context_create(
             e.lib->runtime_context(), e.context,
             kLiteRtDispatchExecutableTypeMlModel, nullptr,
             e.call->entry_point.c_str(), 1, 1, &inv));
       }},
      {"invocation_context_create(function_name=NULL)", false,
       [](DispatchEnv& e) {
         LiteRtDispatchInvocationContext inv = nullptr;
         LiteRtStatus st = e.Create(
             e.bytecode, nullptr, static_cast<int>(e.call->input_types.size()),
             static_cast<int>(e.call->output_types.size()), &inv);
         (void)st;  // A module with one function may ignore the name.
         return std::string();
       }},
      {"invocation_context_create(invocation_context=NULL)", false,
       [](DispatchEnv& e) {
         return ExpectError(
             e.Create(e.bytecode, e.call->entry_point.c_str(),
                      static_cast<int>(e.call->input_types.size()),
                      static_cast<int>(e.call->output_types.size()), nullptr));
       }},
      {"get_input_requirements(tensor_type=NULL)", false,
       [](DispatchEnv& e) {
         LiteRtDispatchInvocationContext inv = e.Create();
         if (inv == nullptr) return std::string("refused the plugin's module");
         LiteRtTensorBufferRequirements r = nullptr;
         return ExpectError(e.api->get_input_requirements(inv, 0, nullptr, &r));
       }},
      {"register_tensor_buffer(tensor_buffer=NULL)", false,
       [](DispatchEnv& e) {
         LiteRtTensorBufferHandle h = 0;
         return ExpectError(
             e.api->register_tensor_buffer(e.context, nullptr, &h));
       }},
      {"invoke(invocation_context=NULL)", false,
       [](DispatchEnv& e) { return ExpectError(e.api->invoke(nullptr)); }},
      {"invoke before anything is attached (out of order)", false,
       [](DispatchEnv& e) {
         LiteRtDispatchInvocationContext inv = e.Create();
         if (inv == nullptr) return std::string("refused the plugin's module");
         return ExpectError(e.api->invoke(inv));
       }},
      {"invocation_context_destroy(NULL), device_context_destroy(NULL)", false,
       [](DispatchEnv& e) {
         e.api->invocation_context_destroy(nullptr);
         e.api->device_context_destroy(nullptr);
         return std::string();
       }},
  };
  const std::string& path = s.options.dispatch_path;
  probes.push_back(
      {"check_runtime_compatibility(LiteRT API 99.0.0), where the library "
       "has it",
       true, [](DispatchEnv& e) {
         if (e.api->check_runtime_compatibility == nullptr) return std::string();
         return ExpectError(e.api->check_runtime_compatibility(
             {99, 0, 0}, nullptr, e.lib->options()));
       }});
  RunLiteRtProbes<DispatchEnv>(s, "misuse.dispatch",
                               "probes of the LiteRT dispatch ABI, each in a "
                               "child process",
                               probes, DispatchSetup(path, call), report);
}

std::vector<LiteRtProbe<DispatchEnv>> BytecodeProbes(uint32_t seed,
                                                     size_t size) {
  using P = LiteRtProbe<DispatchEnv>;
  std::vector<P> probes;
  auto run = [](DispatchEnv& e, const LiteRtMemBuffer& code) {
    LiteRtDispatchInvocationContext inv = nullptr;
    const int in = static_cast<int>(e.call->input_types.size());
    const int out = static_cast<int>(e.call->output_types.size());
    if (e.Create(code, e.call->entry_point.c_str(), in, out, &inv) ==
            kLiteRtStatusOk &&
        inv != nullptr) {
      e.AttachAndRun(inv, in, out);
    }
  };
  for (size_t cut : {size_t{1}, size_t{8}, size_t{20}, size / 2, size - 1}) {
    if (cut == 0 || cut >= size) continue;
    probes.push_back(
        {absl::StrCat("module truncated to ", cut, " of ", size, " bytes"),
         true, [cut, run](DispatchEnv& e) {
           LiteRtMemBuffer code = e.bytecode;
           code.size = cut;
           // Only the cut bytes exist: the copy ends there.
           e.file.resize(code.offset + cut);
           e.file.shrink_to_fit();
           code.base_addr = e.file.data();
           run(e, code);
           return std::string();
         }});
  }
  for (int m = 0; m < 8; ++m) {
    const uint32_t case_seed = seed * 1000003u + static_cast<uint32_t>(m);
    probes.push_back(
        {absl::StrCat("module with 1-4 random bytes changed (seed ", case_seed,
                      m < 4 ? ", in its first 64 bytes)" : ")"),
         true, [case_seed, m, run](DispatchEnv& e) {
           std::mt19937 rng(case_seed);
           const size_t span =
               m < 4 ? std::min<size_t>(64, e.bytecode.size) : e.bytecode.size;
           const int n = 1 + static_cast<int>(rng() % 4);
           for (int i = 0; i < n; ++i) {
             e.file[e.bytecode.offset + rng() % span] =
                 static_cast<uint8_t>(rng());
           }
           run(e, e.bytecode);
           return std::string();
         }});
  }
  auto accepted = [](DispatchEnv& e, const char* entry, int in, int out) {
    LiteRtDispatchInvocationContext inv = nullptr;
    if (e.Create(e.bytecode, entry, in, out, &inv) != kLiteRtStatusOk ||
        inv == nullptr) {
      return std::string();
    }
    e.AttachAndRun(inv, in, out);
    return std::string("accepted; expected an error");
  };
  probes.push_back({"a function name the module lacks", false,
                    [accepted](DispatchEnv& e) {
                      return accepted(
                          e, "graft_check_no_such_function",
                          static_cast<int>(e.call->input_types.size()),
                          static_cast<int>(e.call->output_types.size()));
                    }});
  probes.push_back(
      {"one input more than the function has", true,
       [accepted](DispatchEnv& e) {
         return accepted(e, e.call->entry_point.c_str(),
                         static_cast<int>(e.call->input_types.size()) + 1,
                         static_cast<int>(e.call->output_types.size()));
       }});
  probes.push_back({"no outputs", true, [accepted](DispatchEnv& e) {
                      return accepted(
                          e, e.call->entry_point.c_str(),
                          static_cast<int>(e.call->input_types.size()), 0);
                    }});
  return probes;
}

std::vector<LiteRtProbe<DispatchEnv>> BufferProbes() {
  using P = LiteRtProbe<DispatchEnv>;
  // A valid invocation, then one bad call that must fail.
  auto with = [](std::function<LiteRtStatus(
                     DispatchEnv&, LiteRtDispatchInvocationContext)>
                     bad) {
    return [bad](DispatchEnv& e) -> std::string {
      LiteRtDispatchInvocationContext inv = e.Create();
      if (inv == nullptr) return "refused the plugin's own module";
      return ExpectError(bad(e, inv));
    };
  };
  auto n_in = [](DispatchEnv& e) {
    return static_cast<int>(e.call->input_types.size());
  };
  auto n_out = [](DispatchEnv& e) {
    return static_cast<int>(e.call->output_types.size());
  };
  return {
      {"get_input_requirements(index = num_inputs)", true,
       with([n_in](DispatchEnv& e, LiteRtDispatchInvocationContext inv) {
         LiteRtTensorBufferRequirements r = nullptr;
         return e.api->get_input_requirements(inv, n_in(e),
                                              &e.call->input_types[0], &r);
       })},
      {"get_output_requirements(index = num_outputs)", true,
       with([n_out](DispatchEnv& e, LiteRtDispatchInvocationContext inv) {
         LiteRtTensorBufferRequirements r = nullptr;
         return e.api->get_output_requirements(inv, n_out(e),
                                               &e.call->output_types[0], &r);
       })},
      {"get_input_requirements(index = -1)", true,
       with([](DispatchEnv& e, LiteRtDispatchInvocationContext inv) {
         LiteRtTensorBufferRequirements r = nullptr;
         return e.api->get_input_requirements(inv, -1, &e.call->input_types[0],
                                              &r);
       })},
      {"attach_input(index = num_inputs, a registered buffer)", true,
       with([n_in](DispatchEnv& e, LiteRtDispatchInvocationContext inv) {
         LiteRtTensorBufferHandle h = 0;
         if (e.Buffer(inv, true, 0, 0, &h) != kLiteRtStatusOk) {
           return kLiteRtStatusErrorUnsupported;  // Nothing to attach.
         }
         return e.api->attach_input(inv, n_in(e), h);
       })},
      {"attach_output(index = -1, a registered buffer)", true,
       with([](DispatchEnv& e, LiteRtDispatchInvocationContext inv) {
         LiteRtTensorBufferHandle h = 0;
         if (e.Buffer(inv, false, 0, 0, &h) != kLiteRtStatusOk) {
           return kLiteRtStatusErrorUnsupported;
         }
         return e.api->attach_output(inv, -1, h);
       })},
      {"attach_input(a handle never registered)", true,
       with([](DispatchEnv& e, LiteRtDispatchInvocationContext inv) {
         return e.api->attach_input(inv, 0, 0x6772616674);
       })},
      {"an input buffer one byte smaller than its requirements, then invoke",
       false,
       with([n_in, n_out](DispatchEnv& e,
                          LiteRtDispatchInvocationContext inv) {
         for (int i = 0; i < n_in(e) + n_out(e); ++i) {
           const bool input = i < n_in(e);
           const int k = input ? i : i - n_in(e);
           LiteRtTensorBufferHandle h = 0;
           LiteRtStatus st = e.Buffer(inv, input, k, i == 0 ? 1 : 0, &h);
           if (st != kLiteRtStatusOk) return st;
           st = input ? e.api->attach_input(inv, k, h)
                      : e.api->attach_output(inv, k, h);
           if (st != kLiteRtStatusOk) return st;
         }
         return e.api->invoke(inv);
       })},
  };
}

}  // namespace

void RunLiteRtMisuseChecks(Subject& s, CheckReport& report) {
  if (s.Wants("misuse.plugin") && s.litert_plugin) {
    if (s.plugin == nullptr) {
      report.Add(
          {"misuse.plugin", Outcome::kSkip, "the plugin did not load", {}});
    } else {
      LiteRtPluginMisuse(s, report);
    }
  }
  if (s.options.dispatch_path.empty() || !s.litert_dispatch ||
      !s.Wants("misuse.dispatch")) {
    return;
  }
  absl::StatusOr<LiteRtDispatchCall> call =
      s.taken.empty() ? absl::NotFoundError("the plugin took nothing")
                      : FirstLiteRtDispatchCall(s.taken[0].compiled_path);
  if (!call.ok() || call->input_types.empty() || call->output_types.empty()) {
    report.Add({"misuse.dispatch",
                Outcome::kSkip,
                absl::StrCat("no LiteRT-format module to probe with: ",
                             call.ok() ? "no inputs or outputs"
                                       : call.status().message()),
                {}});
    return;
  }
  LiteRtDispatchMisuse(s, *call, report);
}

void RunLiteRtDispatchRobustnessChecks(Subject& s, CheckReport& report) {
  absl::StatusOr<LiteRtDispatchCall> call =
      s.taken.empty() ? absl::NotFoundError("the plugin took nothing")
                      : FirstLiteRtDispatchCall(s.taken[0].compiled_path);
  std::string skip;
  if (!call.ok()) {
    skip = absl::StrCat("no LiteRT-format module to probe with: ",
                        call.status().message());
  } else if (call->input_types.empty() || call->output_types.empty()) {
    skip = "the compiled call has no inputs or outputs";
  }
  for (const char* id : {"dispatch.bytecode", "dispatch.buffers"}) {
    if (s.Wants(id) && !skip.empty()) {
      report.Add({id, Outcome::kSkip, skip, {}});
    }
  }
  if (!skip.empty()) {
    return;
  }
  const std::string& path = s.options.dispatch_path;
  if (s.Wants("dispatch.bytecode")) {
    RunLiteRtProbes<DispatchEnv>(
        s, "dispatch.bytecode",
        absl::StrCat("truncated, mutated and misdescribed variants of the "
                     "module of '",
                     s.taken[0].name, "'"),
        BytecodeProbes(s.options.seed, call->size), DispatchSetup(path, *call),
        report);
  }
  if (s.Wants("dispatch.buffers")) {
    RunLiteRtProbes<DispatchEnv>(s, "dispatch.buffers",
                                 "bad indices, handles and sizes",
                                 BufferProbes(), DispatchSetup(path, *call),
                                 report);
  }
  if (s.Wants("dispatch.threads")) {
    report.Add({"dispatch.threads",
                Outcome::kSkip,
                "LiteRT-ABI dispatch library: LiteRT's runtime serializes "
                "the calls into one library, so its ABI promises nothing of "
                "concurrent invocations",
                {}});
  }
}

}  // namespace graft::check
