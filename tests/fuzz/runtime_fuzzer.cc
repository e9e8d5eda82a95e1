// dispatch: the runtime's load (verify, graph check, prepare of every
// subgraph it would execute) and invoke of every entry point on the CPU
// kernels, twice, with small deterministic inputs. Models whose declared
// tensors hold more than kMaxElements elements in all are skipped (see
// fuzz::DeclaredElementsAtMost).
#include <cstdint>
#include <string>
#include <vector>

#include "dispatch/runtime.h"
#include "dispatch/string_tensor.h"
#include "dispatch/tensor.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace graft;

constexpr int64_t kMaxElements = int64_t{1} << 20;

void Run(Signature* sig) {
  if (sig == nullptr) return;
  for (size_t i = 0; i < sig->num_inputs(); ++i) {
    Tensor* in = sig->input(i);
    if (in == nullptr) continue;
    if (in->type == tfl::TensorType_STRING) {
      const int64_t n = in->num_elements();
      if (n < 0 || n > 1024) return;
      std::vector<std::string> strings(static_cast<size_t>(n), "fuzz");
      if (!sig->SetInputData(i, PackStrings(strings)).ok()) return;
    } else if (in->raw_data != nullptr) {
      fuzz::FillInput(in->type, in->raw_data, in->bytes);
    }
  }
  for (int run = 0; run < 2; ++run) {
    if (!sig->Invoke().ok()) return;
  }
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
  RuntimeOptions options;
  options.num_threads = 1;
  absl::StatusOr<std::unique_ptr<Runtime>> runtime =
      Runtime::LoadModel(std::move(*model), options);
  if (!runtime.ok()) return 0;
  Run((*runtime)->main());
  for (size_t s = 0; s < (*runtime)->num_signatures(); ++s) {
    Run((*runtime)->signature(s));
  }
  return 0;
}
