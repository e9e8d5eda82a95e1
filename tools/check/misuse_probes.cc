// misuse.*: the ABI's rule that every fallible function answers NULL
// pointers, wrong struct sizes, unknown SoC models and calls out of order
// with a status, never a crash. Each probe runs in its own child process,
// straight against the library's exports (raw_abi.h).
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "core/model_builder.h"
#include "plugins/child_process.h"
#include "plugins/graph_view.h"
#include "tools/check/checks.h"
#include "tools/check/raw_abi.h"

namespace graft::check {
namespace {

constexpr char kNoSuchSoc[] = "graft-check-no-such-soc";

enum class Expect {
  kStatus,   // a non-NULL status
  kOk,       // NULL (OK)
  kNoCrash,  // either, as long as it returns
};

// What a probe saw: true when a status came back. Statuses are released
// through the vendor's own release (TakeStatus), which a malformed status
// would also fail.
bool Saw(graft_status_t* st) {
  const bool failed = st != nullptr;
  (void)TakeStatus(st, "probe");
  return failed;
}

template <typename Env>
struct Probe {
  std::string name;
  Expect expect;
  std::function<bool(Env&)> run;
};

template <typename Env>
void RunProbes(const Subject& s, const std::string& id,
               const std::vector<Probe<Env>>& probes,
               const std::function<absl::Status(Env&)>& setup,
               CheckReport& report) {
  CheckResult r{id, Outcome::kPass, "", {}};
  for (const Probe<Env>& p : probes) {
    absl::StatusOr<std::string> answer = RunInChildProcess(
        [&]() -> absl::StatusOr<std::string> {
          Env env;
          if (absl::Status st = setup(env); !st.ok()) return st;
          return std::string(p.run(env) ? "status" : "ok");
        },
        absl::Seconds(
            std::min<int64_t>(30, absl::ToInt64Seconds(s.options.timeout))),
        p.name);
    if (!answer.ok()) {
      r.findings.push_back(std::string(answer.status().message()));
    } else if (p.expect == Expect::kStatus && *answer == "ok") {
      r.findings.push_back(absl::StrCat(
          p.name, ": answered OK (a NULL status); expected an error status"));
    } else if (p.expect == Expect::kOk && *answer == "status") {
      r.findings.push_back(
          absl::StrCat(p.name, ": answered an error status; expected OK"));
    }
  }
  r.outcome = r.findings.empty() ? Outcome::kPass : Outcome::kFail;
  r.summary =
      absl::StrCat(probes.size(), " probes, each in a child process",
                   r.findings.empty()
                       ? ": each answered as the ABI says, no crash"
                       : absl::StrCat(": ", r.findings.size(), " misanswered"));
  report.Add(std::move(r));
}


struct PluginEnv {
  RawPlugin raw;
  std::unique_ptr<HostApi> host;
  graft_compiler_plugin_t* plugin = nullptr;
  std::unique_ptr<GraphView> view;
  std::unique_ptr<GraphView> partition;
  std::vector<graft_op_decision_t> decisions;
  graft_partition_result_t result{};
  std::string soc;
};

void PluginMisuse(const Subject& s, CheckReport& report) {
  const Model model = PluginProbeModel(s);
  const std::string soc = s.soc_model;
  const std::string path = s.options.plugin_path;
  auto setup = [&](PluginEnv& e) -> absl::Status {
    auto raw = LoadRawPlugin(path);
    if (!raw.ok()) return raw.status();
    e.raw = *std::move(raw);
    e.host = std::make_unique<HostApi>("graft check");
    e.soc = soc;
    std::vector<graft_key_value_t> kv;
    for (const auto& [k, v] : s.options.plugin_options) {
      kv.push_back({k.c_str(), v.c_str()});
    }
    graft_status_t* st =
        e.raw.create(e.host->table(), kv.data(), kv.size(), &e.plugin);
    if (st != nullptr || e.plugin == nullptr) {
      return TakeStatus(st, "create with a correct host table");
    }
    e.view = std::make_unique<GraphView>(model, 0);
    std::vector<int32_t> ops(model.subgraphs[0].ops.size());
    for (size_t i = 0; i < ops.size(); ++i) ops[i] = static_cast<int32_t>(i);
    e.partition = std::make_unique<GraphView>(model, 0, "partition_0", ops, 0);
    e.decisions.assign(e.view->view()->num_ops, graft_op_decision_t{});
    e.result.struct_size = sizeof(e.result);
    e.result.decisions = e.decisions.data();
    e.result.num_decisions = e.decisions.size();
    return absl::OkStatus();
  };
  using P = Probe<PluginEnv>;
  auto compile = [](PluginEnv& e, const char* soc,
                    const graft_graph_view_t* view, size_t n,
                    bool out) -> bool {
    graft_compiled_result_t* r = nullptr;
    graft_status_t* st =
        e.raw.compile(e.plugin, soc, &view, n, out ? &r : nullptr);
    if (r != nullptr) e.raw.compiled_result_destroy(r);
    return Saw(st);
  };
  std::vector<P> probes = {
      {"create(host=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         graft_compiler_plugin_t* p = nullptr;
         return Saw(e.raw.create(nullptr, nullptr, 0, &p));
       }},
      {"create(host with struct_size 8, short)", Expect::kStatus,
       [](PluginEnv& e) {
         SizedHostTable t(*e.host, 8);
         graft_compiler_plugin_t* p = nullptr;
         return Saw(e.raw.create(t.table(), nullptr, 0, &p));
       }},
      {"create(host table 64 bytes longer, as a later minor passes)",
       Expect::kOk,
       [](PluginEnv& e) {
         SizedHostTable t(*e.host, sizeof(graft_host_api_t) + 64);
         graft_compiler_plugin_t* p = nullptr;
         return Saw(e.raw.create(t.table(), nullptr, 0, &p));
       }},
      {"create(an unknown option key)", Expect::kStatus,
       [](PluginEnv& e) {
         graft_key_value_t kv{"graft_check_no_such_option", "1"};
         graft_compiler_plugin_t* p = nullptr;
         return Saw(e.raw.create(e.host->table(), &kv, 1, &p));
       }},
      {"create(out_plugin=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         return Saw(e.raw.create(e.host->table(), nullptr, 0, nullptr));
       }},
      {"get_info(plugin=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         const graft_compiler_plugin_info_t* info = nullptr;
         return Saw(e.raw.get_info(nullptr, &info));
       }},
      {"get_info(out_info=NULL)", Expect::kStatus,
       [](PluginEnv& e) { return Saw(e.raw.get_info(e.plugin, nullptr)); }},
      {"partition(plugin=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         return Saw(e.raw.partition(nullptr, e.view->view(), e.soc.c_str(),
                                    &e.result));
       }},
      {"partition(graph=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         return Saw(
             e.raw.partition(e.plugin, nullptr, e.soc.c_str(), &e.result));
       }},
      {"partition(soc_model=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         return Saw(
             e.raw.partition(e.plugin, e.view->view(), nullptr, &e.result));
       }},
      {"partition(an unknown SoC model)", Expect::kStatus,
       [](PluginEnv& e) {
         return Saw(
             e.raw.partition(e.plugin, e.view->view(), kNoSuchSoc, &e.result));
       }},
      {"partition(out_result=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         return Saw(
             e.raw.partition(e.plugin, e.view->view(), e.soc.c_str(), nullptr));
       }},
      {"partition(num_decisions one more than the graph's ops)",
       Expect::kStatus,
       [](PluginEnv& e) {
         std::vector<graft_op_decision_t> d(e.decisions.size() + 1);
         graft_partition_result_t r = e.result;
         r.decisions = d.data();
         r.num_decisions = d.size();
         return Saw(
             e.raw.partition(e.plugin, e.view->view(), e.soc.c_str(), &r));
       }},
      {"partition(result with struct_size 4, short)", Expect::kStatus,
       [](PluginEnv& e) {
         graft_partition_result_t r = e.result;
         r.struct_size = 4;
         return Saw(
             e.raw.partition(e.plugin, e.view->view(), e.soc.c_str(), &r));
       }},
      {"partition(result 64 bytes longer, as a later minor passes)",
       Expect::kOk,
       [](PluginEnv& e) {
         struct {
           graft_partition_result_t r;
           uint8_t more[64];
         } longer{};
         longer.r = e.result;
         longer.r.struct_size = sizeof(longer);
         return Saw(e.raw.partition(e.plugin, e.view->view(), e.soc.c_str(),
                                    &longer.r));
       }},
      {"compile(plugin=NULL)", Expect::kStatus,
       [](PluginEnv& e) {
         const graft_graph_view_t* v = e.partition->view();
         graft_compiled_result_t* r = nullptr;
         return Saw(e.raw.compile(nullptr, e.soc.c_str(), &v, 1, &r));
       }},
      {"compile(partitions=NULL, 0)", Expect::kStatus,
       [](PluginEnv& e) {
         graft_compiled_result_t* r = nullptr;
         return Saw(e.raw.compile(e.plugin, e.soc.c_str(), nullptr, 0, &r));
       }},
      {"compile(out_result=NULL)", Expect::kStatus,
       [&compile](PluginEnv& e) {
         return compile(e, e.soc.c_str(), e.partition->view(), 1, false);
       }},
      {"compile(an unknown SoC model)", Expect::kStatus,
       [&compile](PluginEnv& e) {
         return compile(e, kNoSuchSoc, e.partition->view(), 1, true);
       }},
      {"compile(soc_model=NULL)", Expect::kStatus,
       [&compile](PluginEnv& e) {
         return compile(e, nullptr, e.partition->view(), 1, true);
       }},
      {"compile before any partition call (out of order)", Expect::kNoCrash,
       [&compile](PluginEnv& e) {
         return compile(e, e.soc.c_str(), e.partition->view(), 1, true);
       }},
      {"partition after a compile, then compile again", Expect::kNoCrash,
       [&compile](PluginEnv& e) {
         compile(e, e.soc.c_str(), e.partition->view(), 1, true);
         Saw(e.raw.partition(e.plugin, e.view->view(), e.soc.c_str(),
                             &e.result));
         return compile(e, e.soc.c_str(), e.partition->view(), 1, true);
       }},
      {"destroy(NULL) and compiled_result_destroy(NULL)", Expect::kOk,
       [](PluginEnv& e) {
         e.raw.destroy(nullptr);
         e.raw.compiled_result_destroy(nullptr);
         return false;
       }},
  };
  // Optional: probed only where exported.
  absl::StatusOr<RawPlugin> exports = LoadRawPlugin(path);
  if (exports.ok() && exports->check_compatibility != nullptr) {
    probes.push_back({"check_compatibility(soc_model=NULL)", Expect::kStatus,
                      [](PluginEnv& e) {
                        return Saw(
                            e.raw.check_compatibility(e.plugin, nullptr));
                      }});
    probes.push_back({"check_compatibility(an unknown SoC model)",
                      Expect::kStatus, [](PluginEnv& e) {
                        return Saw(
                            e.raw.check_compatibility(e.plugin, kNoSuchSoc));
                      }});
  }
  RunProbes<PluginEnv>(s, "misuse.plugin", probes, setup, report);
}

struct DispatchEnv {
  RawDispatch raw;
  std::unique_ptr<HostApi> host;
  graft_dispatch_t* dispatch = nullptr;
  graft_dispatch_device_context_t* context = nullptr;
  graft_dispatch_invocation_desc_t desc{};
  graft_compatibility_stamp_t stamp{};
  std::string vendor;
  uint32_t max_format = 0;
};

void DispatchMisuse(const Subject& s, CheckReport& report) {
  // A real module where the plugin compiled one; the probes that need a
  // valid invocation are skipped without.
  absl::StatusOr<DispatchCall> call =
      s.taken.empty() ? absl::NotFoundError("nothing compiled")
                      : FirstDispatchCall(s.taken[0].compiled_path);
  const std::string path = s.options.dispatch_path;
  const uint32_t format =
      s.plugin != nullptr ? s.plugin->info().bytecode_format_version : 0;
  auto setup = [&](DispatchEnv& e) -> absl::Status {
    auto raw = LoadRawDispatch(path);
    if (!raw.ok()) return raw.status();
    e.raw = *std::move(raw);
    e.host = std::make_unique<HostApi>("graft check");
    graft_status_t* st = e.raw.create(e.host->table(), nullptr, 0, &e.dispatch);
    if (st != nullptr || e.dispatch == nullptr) {
      return TakeStatus(st, "create with a correct host table");
    }
    const graft_dispatch_info_t* info = nullptr;
    if (Saw(e.raw.get_info(e.dispatch, &info)) || info == nullptr) {
      return absl::InternalError("get_info failed");
    }
    e.vendor = info->vendor != nullptr ? info->vendor : "";
    e.max_format = info->max_bytecode_format_version;
    e.stamp.struct_size = sizeof(e.stamp);
    e.stamp.abi_version = GRAFT_ABI_VERSION;
    e.stamp.bytecode_format_version =
        format != 0 ? format : info->min_bytecode_format_version;
    e.stamp.vendor = e.vendor.c_str();
    e.stamp.plugin_version = "graft-check";
    e.stamp.soc_model = "graft-check";
    st = e.raw.device_context_create(e.dispatch, nullptr, 0, &e.context);
    if (st != nullptr || e.context == nullptr) {
      return TakeStatus(st, "device_context_create");
    }
    e.desc.struct_size = sizeof(e.desc);
    e.desc.model_fd = -1;
    if (call.ok()) {
      e.desc.bytecode = {call->bytecode.data(), call->bytecode.size()};
      e.desc.entry_point = call->entry_point.c_str();
      e.desc.num_inputs = call->input_bytes.size();
      e.desc.num_outputs = call->output_bytes.size();
      e.desc.model_buffers = call->buffers.data();
      e.desc.num_model_buffers = call->buffers.size();
    } else {
      static const char kJunk[] = "graft check: not bytecode";
      e.desc.bytecode = {reinterpret_cast<const uint8_t*>(kJunk),
                         sizeof(kJunk)};
      e.desc.entry_point = "partition_0";
      e.desc.num_inputs = e.desc.num_outputs = 1;
    }
    return absl::OkStatus();
  };
  auto invocation_with = [](DispatchEnv& e,
                            const graft_dispatch_invocation_desc_t& d) {
    graft_dispatch_invocation_t* inv = nullptr;
    graft_status_t* st = e.raw.invocation_create(e.context, &d, &inv);
    if (inv != nullptr) e.raw.invocation_destroy(inv);
    return Saw(st);
  };
  using P = Probe<DispatchEnv>;
  std::vector<P> probes = {
      {"create(host=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_dispatch_t* d = nullptr;
         return Saw(e.raw.create(nullptr, nullptr, 0, &d));
       }},
      {"create(host with struct_size 8, short)", Expect::kStatus,
       [](DispatchEnv& e) {
         SizedHostTable t(*e.host, 8);
         graft_dispatch_t* d = nullptr;
         return Saw(e.raw.create(t.table(), nullptr, 0, &d));
       }},
      {"create(host table 64 bytes longer, as a later minor passes)",
       Expect::kOk,
       [](DispatchEnv& e) {
         SizedHostTable t(*e.host, sizeof(graft_host_api_t) + 64);
         graft_dispatch_t* d = nullptr;
         return Saw(e.raw.create(t.table(), nullptr, 0, &d));
       }},
      {"create(an unknown option key)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_key_value_t kv{"graft_check_no_such_option", "1"};
         graft_dispatch_t* d = nullptr;
         return Saw(e.raw.create(e.host->table(), &kv, 1, &d));
       }},
      {"create(out_dispatch=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         return Saw(e.raw.create(e.host->table(), nullptr, 0, nullptr));
       }},
      {"get_info(dispatch=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         const graft_dispatch_info_t* info = nullptr;
         return Saw(e.raw.get_info(nullptr, &info));
       }},
      {"get_info(out_info=NULL)", Expect::kStatus,
       [](DispatchEnv& e) { return Saw(e.raw.get_info(e.dispatch, nullptr)); }},
      {"check_compatibility(stamp=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         return Saw(e.raw.check_compatibility(e.dispatch, nullptr));
       }},
      {"check_compatibility(stamp with struct_size 8, short)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_compatibility_stamp_t st = e.stamp;
         st.struct_size = 8;
         return Saw(e.raw.check_compatibility(e.dispatch, &st));
       }},
      {"check_compatibility(stamp of another vendor)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_compatibility_stamp_t st = e.stamp;
         st.vendor = "graft_check_other_vendor";
         return Saw(e.raw.check_compatibility(e.dispatch, &st));
       }},
      {"check_compatibility(stamp vendor=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_compatibility_stamp_t st = e.stamp;
         st.vendor = nullptr;
         return Saw(e.raw.check_compatibility(e.dispatch, &st));
       }},
      {"check_compatibility(bytecode format above its maximum)",
       Expect::kStatus,
       [](DispatchEnv& e) {
         graft_compatibility_stamp_t st = e.stamp;
         st.bytecode_format_version = e.max_format + 1;
         return Saw(e.raw.check_compatibility(e.dispatch, &st));
       }},
      {"check_compatibility(stamp of another ABI major)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_compatibility_stamp_t st = e.stamp;
         st.abi_version =
             GRAFT_ABI_VERSION_PACK(GRAFT_ABI_VERSION_MAJOR + 1, 0);
         return Saw(e.raw.check_compatibility(e.dispatch, &st));
       }},
      {"device_context_create(dispatch=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_dispatch_device_context_t* c = nullptr;
         return Saw(e.raw.device_context_create(nullptr, nullptr, 0, &c));
       }},
      {"device_context_create(out_context=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         return Saw(
             e.raw.device_context_create(e.dispatch, nullptr, 0, nullptr));
       }},
      {"device_context_create(an unknown option key)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_key_value_t kv{"graft_check_no_such_option", "1"};
         graft_dispatch_device_context_t* c = nullptr;
         return Saw(e.raw.device_context_create(e.dispatch, &kv, 1, &c));
       }},
      {"invocation_create(context=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_dispatch_invocation_t* inv = nullptr;
         return Saw(e.raw.invocation_create(nullptr, &e.desc, &inv));
       }},
      {"invocation_create(desc=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_dispatch_invocation_t* inv = nullptr;
         return Saw(e.raw.invocation_create(e.context, nullptr, &inv));
       }},
      {"invocation_create(out_invocation=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         return Saw(e.raw.invocation_create(e.context, &e.desc, nullptr));
       }},
      {"invocation_create(desc with struct_size 8, short)", Expect::kStatus,
       [invocation_with](DispatchEnv& e) {
         graft_dispatch_invocation_desc_t d = e.desc;
         d.struct_size = 8;
         return invocation_with(e, d);
       }},
      {"invocation_create(empty bytecode)", Expect::kStatus,
       [invocation_with](DispatchEnv& e) {
         graft_dispatch_invocation_desc_t d = e.desc;
         d.bytecode = {nullptr, 0};
         return invocation_with(e, d);
       }},
      {"invocation_create(entry_point=NULL)", Expect::kStatus,
       [invocation_with](DispatchEnv& e) {
         graft_dispatch_invocation_desc_t d = e.desc;
         d.entry_point = nullptr;
         return invocation_with(e, d);
       }},
      {"get_buffer_requirements(invocation=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         graft_dispatch_buffer_requirements_t req{};
         req.struct_size = sizeof(req);
         return Saw(e.raw.get_buffer_requirements(
             nullptr, GRAFT_DISPATCH_IO_KIND_INPUT, 0, &req));
       }},
      {"attach_host_memory(invocation=NULL)", Expect::kStatus,
       [](DispatchEnv& e) {
         float x = 0;
         return Saw(e.raw.attach_host_memory(
             nullptr, GRAFT_DISPATCH_IO_KIND_INPUT, 0, &x, sizeof(x)));
       }},
      {"invoke(invocation=NULL)", Expect::kStatus,
       [](DispatchEnv& e) { return Saw(e.raw.invoke(nullptr)); }},
      {"destroy, device_context_destroy, invocation_destroy (NULL)",
       Expect::kOk,
       [](DispatchEnv& e) {
         e.raw.invocation_destroy(nullptr);
         e.raw.device_context_destroy(nullptr);
         e.raw.destroy(nullptr);
         return false;
       }},
  };
  if (call.ok()) {
    probes.push_back(
        {"invoke before anything is attached (out of order)", Expect::kStatus,
         [](DispatchEnv& e) {
           graft_dispatch_invocation_t* inv = nullptr;
           if (Saw(e.raw.invocation_create(e.context, &e.desc, &inv))) {
             return true;
           }
           return Saw(e.raw.invoke(inv));
         }});
  }
  RunProbes<DispatchEnv>(s, "misuse.dispatch", probes, setup, report);
}

}  // namespace

Model PluginProbeModel(const Subject& s) {
  if (!s.taken.empty()) return s.taken[0].model;
  ModelBuilder b;
  auto& g = b.Subgraph("main");
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 4});
  TensorId y = g.Input("y", tfl::TensorType_FLOAT32, {1, 4});
  TensorId z = g.Op(tfl::BuiltinOperator_ADD)
                   .In(x, y)
                   .Options(tfl::AddOptionsT{})
                   .Out("z", tfl::TensorType_FLOAT32, {1, 4});
  g.Output(z);
  return std::move(b).BuildUnverified();
}

void RunMisuseChecks(Subject& s, CheckReport& report) {
  // LiteRT-ABI libraries: litert_probes.cc.
  RunLiteRtMisuseChecks(s, report);
  if (s.Wants("misuse.plugin") && !s.litert_plugin) {
    if (s.plugin == nullptr) {
      report.Add(
          {"misuse.plugin", Outcome::kSkip, "the plugin did not load", {}});
    } else {
      PluginMisuse(s, report);
    }
  }
  if (!s.options.dispatch_path.empty() && !s.litert_dispatch &&
      s.Wants("misuse.dispatch")) {
    DispatchMisuse(s, report);
  }
}

}  // namespace graft::check
