// core: load + verify of a .tflite file, then the invariants every loadable
// model keeps: it saves, the saved bytes load and save again to the same
// bytes, and
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
  // Saving is stable: what a load of the saved bytes saves again is the
  // same bytes (byte equality, stricter than CompareModels' structure).
  absl::StatusOr<std::vector<uint8_t>> saved = SerializeModel(*model);
  if (!saved.ok()) return 0;  // e.g. over the format's size limits
  const std::vector<uint8_t> first = *saved;
  absl::StatusOr<Model> again =
      LoadModelFromBytes(Bytes::Own(std::move(*saved)), "saved fuzz input");
  if (!again.ok()) fuzz::Fail("a saved model does not load", again.status());
  absl::StatusOr<std::vector<uint8_t>> resaved = SerializeModel(*again);
  if (!resaved.ok()) fuzz::Fail("a loaded saved model does not save", resaved.status());
  if (*resaved != first) {
    fuzz::Fail("load -> save -> load -> save changed the bytes",
               CompareModels(*model, *again));
  }
  return 0;
}
