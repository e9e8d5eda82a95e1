// core: load + verify of a .tflite file, then the invariants every loadable
// model keeps: it saves, the saved bytes load again to an equal model, and
// the compiled-format readers (manifest, LiteRT stamp, dispatch op options)
// answer with a status, never a crash.
#include <cstdint>

#include "core/compiled_format.h"
#include "core/litert_format.h"
#include "core/model_io.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graft;
  absl::StatusOr<Model> model = fuzz::ModelFromInput(data, size);
  if (!model.ok()) return 0;
  (void)ReadManifest(*model);
  (void)ReadLiteRtStamp(*model);
  for (const Subgraph& sg : model->subgraphs) {
    for (const tfl::OperatorT& op : sg.ops) {
      const auto& options = op.custom_options;
      (void)DecodeDispatchOpOptions(options);
      (void)DecodeLiteRtDispatchOpOptions(options);
    }
  }
  absl::StatusOr<std::vector<uint8_t>> saved = SerializeModel(*model);
  if (!saved.ok()) return 0;  // e.g. over the format's size limits
  absl::StatusOr<Model> again =
      LoadModelFromBytes(Bytes::Own(std::move(*saved)), "saved fuzz input");
  if (!again.ok()) fuzz::Fail("a saved model does not load", again.status());
  absl::Status same = CompareModels(*model, *again);
  if (!same.ok()) fuzz::Fail("load -> save -> load changed the model", same);
  return 0;
}
