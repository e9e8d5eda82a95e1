// plugins: graft apply with the example vendor's compiler plugin
// (partition -> group -> outline -> compile -> embed) on any loadable model.
// What apply accepts it turns into a model that saves and loads again with
// a readable manifest.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "core/compiled_format.h"
#include "core/model_io.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace graft;

constexpr int64_t kMaxElements = int64_t{1} << 20;

CompilerPlugin* ExamplePlugin() {
  static CompilerPlugin* plugin = [] {
    absl::StatusOr<std::unique_ptr<CompilerPlugin>> p =
        LoadCompilerPlugin(GRAFT_FUZZ_EXAMPLE_PLUGIN);
    if (!p.ok()) fuzz::Fail("loading the example plugin", p.status());
    return p->release();
  }();
  return plugin;
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
  if (!model.ok() || !fuzz::DeclaredElementsAtMost(*model, kMaxElements)) {
    return 0;
  }
  CompilerPlugin* plugins[] = {ExamplePlugin()};
  absl::StatusOr<ApplyReport> report =
      ApplyPlugins(*model, plugins, ApplyOptions());
  if (!report.ok()) return 0;
  absl::StatusOr<std::vector<uint8_t>> saved = SerializeModel(*model);
  if (!saved.ok()) return 0;
  absl::StatusOr<Model> again =
      LoadModelFromBytes(Bytes::Own(std::move(*saved)), "applied fuzz input");
  if (!again.ok()) fuzz::Fail("an applied model does not load", again.status());
  if (report->ops_taken > 0) {
    absl::StatusOr<Manifest> manifest = ReadManifest(*again);
    if (!manifest.ok()) {
      fuzz::Fail("an applied model's manifest", manifest.status());
    }
  }
  return 0;
}
