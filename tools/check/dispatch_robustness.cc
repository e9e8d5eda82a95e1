// dispatch.*: a dispatch library facing bytecode it did not expect
// (truncated, mutated, a missing entry point, wrong input and output
// counts), bad buffer indices and sizes, and several threads: a status or a
// correct result, never a crash or hang. Straight against the exports, each
// probe in a child process.
#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "plugins/child_process.h"
#include "tools/check/checks.h"
#include "tools/check/raw_abi.h"

namespace graft::check {
namespace {

bool Failed(graft_status_t* st) {
  const bool failed = st != nullptr;
  (void)TakeStatus(st, "probe");
  return failed;
}

// One library instance and device context in a child, and invocations of
// `call` (or variants of it) on it.
class Harness {
 public:
  absl::Status Open(const std::string& path) {
    auto raw = LoadRawDispatch(path);
    if (!raw.ok()) return raw.status();
    raw_ = *std::move(raw);
    host_ = std::make_unique<HostApi>("graft check");
    graft_status_t* st = raw_.create(host_->table(), nullptr, 0, &dispatch_);
    if (st != nullptr) return TakeStatus(st, "create");
    st = raw_.device_context_create(dispatch_, nullptr, 0, &context_);
    if (st != nullptr) return TakeStatus(st, "device_context_create");
    return absl::OkStatus();
  }

  graft_dispatch_invocation_desc_t Desc(const DispatchCall& call,
                                        absl::Span<const uint8_t> bytecode) {
    graft_dispatch_invocation_desc_t d{};
    d.struct_size = sizeof(d);
    d.bytecode = {bytecode.data(), bytecode.size()};
    d.entry_point = call.entry_point.c_str();
    d.num_inputs = call.input_bytes.size();
    d.num_outputs = call.output_bytes.size();
    d.model_fd = -1;
    d.model_buffers = call.buffers.data();
    d.num_model_buffers = call.buffers.size();
    return d;
  }

  // Creates an invocation; null when the library refused (a status).
  graft_dispatch_invocation_t* Create(
      const graft_dispatch_invocation_desc_t& d) {
    graft_dispatch_invocation_t* inv = nullptr;
    if (Failed(raw_.invocation_create(context_, &d, &inv))) return nullptr;
    return inv;
  }

  // Attaches zeroed buffers of the sizes the library asks for and runs;
  // any status is fine, only crashes and hangs are not.
  void AttachAndRun(graft_dispatch_invocation_t* inv,
                    const graft_dispatch_invocation_desc_t& d) {
    std::vector<std::vector<uint8_t>> memory;
    for (auto [kind, n] :
         {std::pair{GRAFT_DISPATCH_IO_KIND_INPUT, d.num_inputs},
          std::pair{GRAFT_DISPATCH_IO_KIND_OUTPUT, d.num_outputs}}) {
      for (size_t i = 0; i < n; ++i) {
        graft_dispatch_buffer_requirements_t req{};
        req.struct_size = sizeof(req);
        if (Failed(raw_.get_buffer_requirements(inv, kind, i, &req))) return;
        if (req.size > (size_t{1} << 30)) return;
        memory.emplace_back(req.size + 64, 0);
        if (Failed(raw_.attach_host_memory(inv, kind, i, memory.back().data(),
                                           req.size))) {
          return;
        }
      }
    }
    (void)Failed(raw_.invoke(inv));
  }

  const RawDispatch& raw() const { return raw_; }

 private:
  RawDispatch raw_;
  std::unique_ptr<HostApi> host_;
  graft_dispatch_t* dispatch_ = nullptr;
  graft_dispatch_device_context_t* context_ = nullptr;
};

struct Case {
  std::string name;
  // Runs in the child; returns "" or a finding (not a crash).
  std::function<std::string(Harness&, const DispatchCall&)> run;
};

void RunCases(const Subject& s, const std::string& id,
              const std::string& summary, const DispatchCall& call,
              const std::vector<Case>& cases, CheckReport& report) {
  CheckResult r{id, Outcome::kPass, "", {}};
  for (const Case& c : cases) {
    absl::StatusOr<std::string> answer = RunInChildProcess(
        [&]() -> absl::StatusOr<std::string> {
          Harness h;
          if (absl::Status st = h.Open(s.options.dispatch_path); !st.ok()) {
            return st;
          }
          return c.run(h, call);
        },
        absl::Seconds(
            std::min<int64_t>(30, absl::ToInt64Seconds(s.options.timeout))),
        c.name);
    if (!answer.ok()) {
      r.findings.push_back(std::string(answer.status().message()));
    } else if (!answer->empty()) {
      r.findings.push_back(absl::StrCat(c.name, ": ", *answer));
    }
  }
  r.outcome = r.findings.empty() ? Outcome::kPass : Outcome::kFail;
  r.summary = absl::StrCat(
      cases.size(), " ", summary,
      r.findings.empty() ? ": no crash, no hang, as the ABI says" : "");
  report.Add(std::move(r));
}

std::vector<Case> BytecodeCases(uint32_t seed, size_t size) {
  std::vector<Case> cases;
  std::vector<size_t> cuts = {1, 8, size / 2, size - 1};
  for (size_t cut : cuts) {
    if (cut == 0 || cut >= size) continue;
    cases.push_back(
        {absl::StrCat("bytecode truncated to ", cut, " of ", size, " bytes"),
         [cut](Harness& h, const DispatchCall& call) {
           graft_dispatch_invocation_desc_t d =
               h.Desc(call, absl::MakeConstSpan(call.bytecode).first(cut));
           if (graft_dispatch_invocation_t* inv = h.Create(d)) {
             h.AttachAndRun(inv, d);
           }
           return std::string();
         }});
  }
  for (int m = 0; m < 8; ++m) {
    const uint32_t case_seed = seed * 1000003u + static_cast<uint32_t>(m);
    cases.push_back(
        {absl::StrCat("bytecode with 1-4 random bytes changed (seed ",
                      case_seed, ")"),
         [case_seed](Harness& h, const DispatchCall& call) {
           std::mt19937 rng(case_seed);
           std::vector<uint8_t> bytes = call.bytecode;
           const int n = 1 + static_cast<int>(rng() % 4);
           for (int i = 0; i < n; ++i) {
             bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
           }
           graft_dispatch_invocation_desc_t d = h.Desc(call, bytes);
           if (graft_dispatch_invocation_t* inv = h.Create(d)) {
             h.AttachAndRun(inv, d);
           }
           return std::string();
         }});
  }
  cases.push_back({"an entry point the module lacks",
                   [](Harness& h, const DispatchCall& call) {
                     graft_dispatch_invocation_desc_t d =
                         h.Desc(call, call.bytecode);
                     d.entry_point = "graft_check_no_such_entry";
                     if (h.Create(d) != nullptr) {
                       return std::string("accepted (the ABI says NOT_FOUND)");
                     }
                     return std::string();
                   }});
  cases.push_back(
      {"one input more than the entry point has",
       [](Harness& h, const DispatchCall& call) {
         graft_dispatch_invocation_desc_t d = h.Desc(call, call.bytecode);
         ++d.num_inputs;
         if (h.Create(d) != nullptr) {
           return std::string("accepted (the ABI says INVALID_ARGUMENT)");
         }
         return std::string();
       }});
  cases.push_back(
      {"no outputs", [](Harness& h, const DispatchCall& call) {
         graft_dispatch_invocation_desc_t d = h.Desc(call, call.bytecode);
         d.num_outputs = 0;
         if (h.Create(d) != nullptr) {
           return std::string("accepted (the ABI says INVALID_ARGUMENT)");
         }
         return std::string();
       }});
  return cases;
}

std::vector<Case> BufferCases() {
  // Each case: a valid invocation, then one bad call that must fail.
  auto with = [](std::function<bool(Harness&, graft_dispatch_invocation_t*,
                                    const DispatchCall&)>
                     bad) {
    return [bad](Harness& h, const DispatchCall& call) -> std::string {
      graft_dispatch_invocation_desc_t d = h.Desc(call, call.bytecode);
      graft_dispatch_invocation_t* inv = h.Create(d);
      if (inv == nullptr) return "refused the plugin's own bytecode";
      return bad(h, inv, call) ? "" : "answered OK; expected an error status";
    };
  };
  return {
      {"get_buffer_requirements(input index = num_inputs)",
       with([](Harness& h, graft_dispatch_invocation_t* inv,
               const DispatchCall& call) {
         graft_dispatch_buffer_requirements_t req{};
         req.struct_size = sizeof(req);
         return Failed(h.raw().get_buffer_requirements(
             inv, GRAFT_DISPATCH_IO_KIND_INPUT, call.input_bytes.size(), &req));
       })},
      {"get_buffer_requirements(an unknown io kind)",
       with([](Harness& h, graft_dispatch_invocation_t* inv,
               const DispatchCall&) {
         graft_dispatch_buffer_requirements_t req{};
         req.struct_size = sizeof(req);
         return Failed(h.raw().get_buffer_requirements(inv, 7, 0, &req));
       })},
      {"get_buffer_requirements(requirements with struct_size 4)",
       with([](Harness& h, graft_dispatch_invocation_t* inv,
               const DispatchCall&) {
         graft_dispatch_buffer_requirements_t req{};
         req.struct_size = 4;
         return Failed(h.raw().get_buffer_requirements(
             inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0, &req));
       })},
      {"attach_host_memory(output index = num_outputs)",
       with([](Harness& h, graft_dispatch_invocation_t* inv,
               const DispatchCall& call) {
         std::vector<uint8_t> m(call.output_bytes[0] + 64);
         return Failed(h.raw().attach_host_memory(
             inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, call.output_bytes.size(),
             m.data(), call.output_bytes[0]));
       })},
      {"attach_host_memory(an input one byte too small)",
       with([](Harness& h, graft_dispatch_invocation_t* inv,
               const DispatchCall& call) {
         if (call.input_bytes[0] == 0) return true;
         std::vector<uint8_t> m(call.input_bytes[0]);
         return Failed(
             h.raw().attach_host_memory(inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0,
                                        m.data(), call.input_bytes[0] - 1));
       })},
      {"attach_host_memory(data=NULL)",
       with([](Harness& h, graft_dispatch_invocation_t* inv,
               const DispatchCall& call) {
         return Failed(
             h.raw().attach_host_memory(inv, GRAFT_DISPATCH_IO_KIND_INPUT, 0,
                                        nullptr, call.input_bytes[0]));
       })},
  };
}

// dispatch.threads: one invocation per thread, created from the same
// bytecode in one device context, run concurrently; every output must be
// the single-threaded one, bit for bit.
Case ThreadsCase(uint32_t seed) {
  return {"4 threads x 25 invokes, one invocation each",
          [seed](Harness& h, const DispatchCall& call) -> std::string {
            constexpr int kThreads = 4, kRuns = 25;
            graft_dispatch_invocation_desc_t d = h.Desc(call, call.bytecode);
            std::mt19937 rng(seed);
            std::vector<std::vector<uint8_t>> inputs;
            for (size_t bytes : call.input_bytes) {
              // Values of a float's sign and exponent range only: whatever
              // the element type, no NaN or infinity.
              std::vector<uint8_t> v(bytes);
              for (size_t i = 0; i < bytes; ++i) {
                v[i] = i % 4 == 3 ? static_cast<uint8_t>(0x3e + rng() % 2)
                                  : static_cast<uint8_t>(rng());
              }
              inputs.push_back(std::move(v));
            }
            auto run = [&](graft_dispatch_invocation_t* inv,
                           std::vector<std::vector<uint8_t>>& outputs) {
              for (size_t i = 0; i < inputs.size(); ++i) {
                if (Failed(h.raw().attach_host_memory(
                        inv, GRAFT_DISPATCH_IO_KIND_INPUT, i, inputs[i].data(),
                        inputs[i].size()))) {
                  return false;
                }
              }
              for (size_t i = 0; i < outputs.size(); ++i) {
                if (Failed(h.raw().attach_host_memory(
                        inv, GRAFT_DISPATCH_IO_KIND_OUTPUT, i,
                        outputs[i].data(), outputs[i].size()))) {
                  return false;
                }
              }
              return !Failed(h.raw().invoke(inv));
            };
            auto fresh = [&] {
              std::vector<std::vector<uint8_t>> o;
              for (size_t bytes : call.output_bytes) o.emplace_back(bytes, 0);
              return o;
            };
            std::vector<graft_dispatch_invocation_t*> invs;
            for (int t = 0; t < kThreads; ++t) {
              invs.push_back(h.Create(d));
              if (invs.back() == nullptr) {
                return "refused the plugin's own bytecode";
              }
            }
            std::vector<std::vector<uint8_t>> want = fresh();
            if (!run(invs[0], want)) return "a single-threaded run failed";
            std::atomic<int> failures{0}, mismatches{0};
            std::vector<std::thread> threads;
            for (int t = 0; t < kThreads; ++t) {
              threads.emplace_back([&, t] {
                std::vector<std::vector<uint8_t>> got = fresh();
                for (int k = 0; k < kRuns; ++k) {
                  if (!run(invs[t], got)) {
                    ++failures;
                    return;
                  }
                  if (got != want) ++mismatches;
                }
              });
            }
            for (std::thread& th : threads) th.join();
            if (failures > 0) {
              return absl::StrCat(failures.load(), " thread(s) saw a run fail");
            }
            if (mismatches > 0) {
              return absl::StrCat(mismatches.load(), " of ", kThreads * kRuns,
                                  " concurrent runs gave other outputs than "
                                  "a single-threaded run");
            }
            return std::string();
          }};
}

}  // namespace

void RunDispatchRobustnessChecks(Subject& s, CheckReport& report) {
  const char* const kIds[] = {"dispatch.bytecode", "dispatch.buffers",
                              "dispatch.threads"};
  if (s.options.dispatch_path.empty()) return;
  if (s.litert_dispatch) {
    RunLiteRtDispatchRobustnessChecks(s, report);
    return;
  }
  std::string skip;
  if (s.taken.empty()) {
    skip = "no compiled bytecode to probe with (the plugin took nothing)";
  }
  absl::StatusOr<DispatchCall> call =
      skip.empty() ? FirstDispatchCall(s.taken[0].compiled_path)
                   : absl::NotFoundError(skip);
  if (skip.empty() && !call.ok()) skip = std::string(call.status().message());
  if (skip.empty() &&
      (call->input_bytes.empty() || call->output_bytes.empty())) {
    skip = "the compiled call has no inputs or outputs";
  }
  if (!skip.empty()) {
    for (const char* id : kIds) {
      if (s.Wants(id)) report.Add({id, Outcome::kSkip, skip, {}});
    }
    return;
  }
  if (s.Wants("dispatch.bytecode")) {
    RunCases(s, "dispatch.bytecode",
             absl::StrCat("truncated, mutated and misdescribed variants of "
                          "the bytecode of '",
                          s.taken[0].name, "'"),
             *call, BytecodeCases(s.options.seed, call->bytecode.size()),
             report);
  }
  if (s.Wants("dispatch.buffers")) {
    RunCases(s, "dispatch.buffers", "bad indices, kinds and sizes", *call,
             BufferCases(), report);
  }
  if (s.Wants("dispatch.threads")) {
    RunCases(s, "dispatch.threads",
             "run of 4 threads x 25 invokes, one invocation each, against a "
             "single-threaded run",
             *call, {ThreadsCase(s.options.seed)}, report);
  }
}

}  // namespace graft::check
