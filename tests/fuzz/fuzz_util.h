// Helpers shared by the libFuzzer targets of tests/fuzz.
#ifndef GRAFT_TESTS_FUZZ_FUZZ_UTIL_H_
#define GRAFT_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/bytes.h"
#include "core/model.h"
#include "core/model_io.h"

namespace graft {
namespace fuzz {

// The input as a model. The bytes are copied: libFuzzer's buffer does not
// outlive the call, and a model keeps views of its file.
inline absl::StatusOr<Model> ModelFromInput(const uint8_t* data, size_t size) {
  return LoadModelFromBytes(Bytes::Copy(absl::MakeConstSpan(data, size)),
                            "fuzz input");
}

// Whether the tensors `model` declares hold at most `max_elements` elements
// in all (unknown dimensions count as 1). Keeps the targets that run models
// from spending their time, or libFuzzer's memory limit, on huge but valid
// tensors: absurd sizes are the graph check's business, tested on their own.
inline bool DeclaredElementsAtMost(const Model& model, int64_t max_elements) {
  int64_t total = 0;
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::TensorT& t : sg.tensors) {
      int64_t n = 1;
      for (int32_t d : t.shape) {
        n *= d > 1 ? d : 1;
        if (n > max_elements) return false;
      }
      total += n;
      if (total > max_elements) return false;
    }
  }
  return true;
}

// A broken invariant: the target reports it as a crash, with the reason.
[[noreturn]] inline void Fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "fuzz invariant broken: %s: %s\n", what,
               std::string(status.message()).c_str());
  std::abort();
}

// Deterministic input values: small numbers for float tensors (so kernels
// see realistic activations), a fixed byte pattern otherwise.
void FillInput(int32_t element_type_tflite, uint8_t* data, size_t bytes);

}  // namespace fuzz
}  // namespace graft

#endif  // GRAFT_TESTS_FUZZ_FUZZ_UTIL_H_
