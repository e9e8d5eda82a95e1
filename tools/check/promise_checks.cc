// promise.*: every op the plugin takes compiles, loads in the dispatch
// library with no CPU fallback, and computes what Graft's CPU kernels do.
#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/compiled_format.h"
#include "core/file_util.h"
#include "core/model_io.h"
#include "tools/check/checks.h"
#include "tools/check/op_catalog.h"

namespace graft::check {
namespace {

// How one model fared.
struct Evaluation {
  bool taken = false;
  int64_t ops_taken = 0;
  // "" when it passed (or was not taken); otherwise what went wrong.
  std::string failure;
  // Graft itself could not run the model on the CPU (not the vendor's
  // fault): reported as a note.
  std::string note;
};

Evaluation Evaluate(Subject& s, const std::string& name, const Model& model,
                    const std::string& catalog_op, uint32_t seed,
                    bool run_dispatch) {
  Evaluation e;
  absl::StatusOr<ApplyOutcome> applied =
      ApplyInChild(*s.plugin, model, s.soc_model, s.options.timeout);
  if (!applied.ok()) {
    const std::string msg(applied.status().message());
    if (absl::StrContains(msg, "compatibility stamp")) {
      s.stamp_errors.push_back(absl::StrCat(name, ": ", msg));
    }
    e.failure = absl::StrCat("compiling failed: ", msg);
    return e;
  }
  if (applied->ops_taken == 0) return e;
  e.taken = true;
  e.ops_taken = applied->ops_taken;
  TakenModel t{
      name, catalog_op, seed, model,
      s.scratch.Join(absl::StrCat("taken_", s.taken.size(), ".tflite"))};
  const absl::Span<const uint8_t> pieces[] = {applied->compiled};
  if (absl::Status st =
          WriteFileAtomically(t.compiled_path, pieces, Durability::kAtomic);
      !st.ok()) {
    e.note = std::string(st.message());
    return e;
  }
  s.taken.push_back(std::move(t));
  if (!run_dispatch || s.options.dispatch_path.empty()) return e;
  std::mt19937 rng(seed);
  absl::StatusOr<std::vector<TensorValue>> inputs = RandomInputs(model, rng);
  int64_t k = 0;
  absl::StatusOr<std::vector<TensorValue>> want =
      inputs.ok() ? RunOnCpu(model, *inputs, &k) : inputs.status();
  if (!want.ok()) {
    e.note = absl::StrCat(
        "Graft's CPU kernels cannot run it, so it is not "
        "compared: ",
        want.status().message());
    return e;
  }
  absl::StatusOr<std::vector<TensorValue>> got = RunWithDispatchInChild(
      s.taken.back().compiled_path, s.options.dispatch_path, *inputs,
      s.options.timeout);
  if (!got.ok()) {
    e.failure = absl::StrCat(
        "taken and compiled, but the dispatch library "
        "does not run it: ",
        got.status().message());
    return e;
  }
  const std::string diff =
      CompareOutputs(model, *got, *want, k, s.options.quantized_lsb,
                     s.options.precision);
  if (!diff.empty()) {
    e.failure = absl::StrCat(
        "taken, but the vendor's result differs from "
        "Graft's CPU kernels: ",
        diff);
  }
  return e;
}

absl::StatusOr<std::vector<NamedModel>> GivenModels(const Subject& s) {
  if (s.options.model_dirs.empty()) return BuiltinModels(s.options.seed);
  std::vector<std::string> paths;
  for (const std::string& dir : s.options.model_dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".tflite") {
        paths.push_back(entry.path().string());
      }
    }
    if (ec) {
      return absl::NotFoundError(
          absl::StrCat("--models ", dir, ": ", ec.message()));
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<NamedModel> out;
  for (const std::string& path : paths) {
    absl::StatusOr<Model> m = LoadModel(path);
    if (!m.ok()) return m.status();
    out.push_back({path, *std::move(m)});
  }
  return out;
}

uint32_t Mix(uint32_t seed, const std::string& name) {
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return seed * 2654435761u ^ h;
}

}  // namespace

void RunPromiseChecks(Subject& s, CheckReport& report) {
  const bool want_models = s.Wants("promise.models");
  const bool want_ops = s.Wants("promise.ops");
  // Later checks need compiled models even when the promise is not
  // reported (--only=determinism): then one draw per op, no dispatch run.
  const bool need_taken =
      s.Wants("identity.stamp") || s.Wants("identity.dispatch") ||
      s.Wants("determinism") || s.Wants("misuse") || s.Wants("dispatch");
  if (!want_models && !want_ops && !need_taken) return;
  if (s.plugin == nullptr) {
    for (const char* id : {"promise.models", "promise.ops"}) {
      if (s.Wants(id)) {
        report.Add({id, Outcome::kSkip, "the plugin did not load", {}});
      }
    }
    return;
  }
  const std::string ran =
      s.options.dispatch_path.empty()
          ? " (compiled only: pass --dispatch to run them)"
          : ", ran on the dispatch library with no CPU fallback and matched "
            "Graft's CPU kernels";

  if (want_models || (need_taken && !want_ops)) {
    CheckResult r{"promise.models", Outcome::kPass, "", {}};
    absl::StatusOr<std::vector<NamedModel>> models = GivenModels(s);
    if (!models.ok()) {
      r.outcome = Outcome::kFail;
      r.summary = "cannot read the models";
      r.findings.push_back(std::string(models.status().message()));
    } else {
      int taken = 0;
      std::vector<std::string> notes;
      for (const NamedModel& m : *models) {
        if (ReadManifest(m.model).ok()) {
          notes.push_back(absl::StrCat(m.name, ": already compiled; skipped"));
          continue;
        }
        Evaluation e =
            Evaluate(s, m.name, m.model, "", s.options.seed, want_models);
        taken += e.taken;
        if (!e.failure.empty()) {
          r.findings.push_back(absl::StrCat(m.name, ": ", e.failure));
        }
        if (!e.note.empty())
          notes.push_back(absl::StrCat(m.name, ": ", e.note));
      }
      r.outcome = r.findings.empty() ? Outcome::kPass : Outcome::kFail;
      r.summary =
          absl::StrCat(models->size(), " model(s)",
                       s.options.model_dirs.empty() ? " (built-in)" : "", ", ",
                       taken, " with ops the plugin took",
                       r.findings.empty() ? ": every one compiled" : "",
                       r.findings.empty() ? ran : "");
      r.findings.insert(r.findings.end(), notes.begin(), notes.end());
    }
    if (want_models) report.Add(std::move(r));
  }

  if (!want_ops && !need_taken) return;
  const int draws = want_ops ? std::max(1, s.options.draws) : 1;
  CheckResult r{"promise.ops", Outcome::kPass, "", {}};
  std::map<std::string, int> taken_ops;
  std::vector<std::string> notes;
  int offered = 0, ops = 0;
  for (const CatalogOp& op : Catalog()) {
    if (!s.options.ops.empty() &&
        std::find(s.options.ops.begin(), s.options.ops.end(), op.name) ==
            s.options.ops.end()) {
      continue;
    }
    ++ops;
    for (int k = 0; k < draws; ++k) {
      const uint32_t seed = s.options.seed + static_cast<uint32_t>(k);
      std::mt19937 rng(Mix(seed, op.name));
      absl::StatusOr<DrawnModel> drawn = DrawOneOpModel(op, rng);
      if (!drawn.ok()) {
        notes.push_back(std::string(drawn.status().message()));
        continue;
      }
      ++offered;
      Evaluation e = Evaluate(s, drawn->description, drawn->model, op.name,
                              seed, want_ops);
      if (e.taken) ++taken_ops[op.name];
      if (!e.note.empty()) {
        notes.push_back(absl::StrCat(drawn->description, ": ", e.note));
      }
      if (e.failure.empty()) continue;
      const std::string repro =
          s.Repro(absl::StrCat(" --only=promise.ops --ops=", op.name,
                               " --seed=", seed, " --draws=1"));
      if (r.repro.empty()) r.repro = repro;
      r.findings.push_back(absl::StrCat(drawn->description, " (seed ", seed,
                                        "): ", e.failure,
                                        " [reproduce: ", repro, "]"));
      // One failing draw per op is enough to say the op is broken.
      break;
    }
  }
  std::vector<std::string> names;
  for (const auto& [name, n] : taken_ops) names.push_back(name);
  r.outcome = r.findings.empty() ? Outcome::kPass : Outcome::kFail;
  r.summary = absl::StrCat(offered, " drawn one-op model(s) of ", ops,
                           " catalogue op(s); the plugin "
                           "took ",
                           names.size(), names.empty() ? "" : " (",
                           absl::StrJoin(names, ", "), names.empty() ? "" : ")",
                           r.findings.empty() ? ": every one compiled" : "",
                           r.findings.empty() ? ran : "");
  r.findings.insert(r.findings.end(), notes.begin(), notes.end());
  if (want_ops) report.Add(std::move(r));
}

}  // namespace graft::check
