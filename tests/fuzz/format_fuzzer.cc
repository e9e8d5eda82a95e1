// core/compiled_format and core/litert_format: the readers of Graft's
// manifest and dispatch op options, and of LiteRT's DISPATCH_OP options and
// stamp, on raw bytes (the first byte picks the reader). Whatever decodes
// encodes to bytes that decode to the same value.
#include <cstdint>

#include "core/compiled_format.h"
#include "core/litert_format.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace graft;

void DecodeManifestBytes(absl::Span<const uint8_t> in) {
  absl::StatusOr<Manifest> m = DecodeManifest(in);
  if (!m.ok()) return;
  const std::vector<uint8_t> bytes = EncodeManifest(*m);
  absl::StatusOr<Manifest> again = DecodeManifest(bytes);
  if (!again.ok()) fuzz::Fail("an encoded manifest does not decode", again.status());
  if (EncodeManifest(*again) != bytes) {
    fuzz::Fail("manifest decode -> encode is not stable", absl::OkStatus());
  }
}

void DecodeDispatchOptionsBytes(absl::Span<const uint8_t> in) {
  absl::StatusOr<DispatchOpOptions> o = DecodeDispatchOpOptions(in);
  if (!o.ok()) return;
  const std::vector<uint8_t> bytes = EncodeDispatchOpOptions(*o);
  absl::StatusOr<DispatchOpOptions> again = DecodeDispatchOpOptions(bytes);
  if (!again.ok()) fuzz::Fail("encoded dispatch options do not decode", again.status());
  if (EncodeDispatchOpOptions(*again) != bytes) {
    fuzz::Fail("dispatch options decode -> encode is not stable", absl::OkStatus());
  }
}

void DecodeLiteRtOptionsBytes(absl::Span<const uint8_t> in) {
  absl::StatusOr<LiteRtDispatchOpOptions> o = DecodeLiteRtDispatchOpOptions(in);
  if (!o.ok()) return;
  const std::vector<uint8_t> bytes = EncodeLiteRtDispatchOpOptions(*o);
  absl::StatusOr<LiteRtDispatchOpOptions> again =
      DecodeLiteRtDispatchOpOptions(bytes);
  if (!again.ok()) fuzz::Fail("encoded LiteRT options do not decode", again.status());
  if (EncodeLiteRtDispatchOpOptions(*again) != bytes) {
    fuzz::Fail("LiteRT options decode -> encode is not stable", absl::OkStatus());
  }
}

void DecodeLiteRtStampBytes(absl::Span<const uint8_t> in) {
  absl::StatusOr<LiteRtStamp> s = DecodeLiteRtStamp(in);
  if (!s.ok()) return;
  absl::StatusOr<std::vector<uint8_t>> bytes = EncodeLiteRtStamp(*s);
  if (!bytes.ok()) fuzz::Fail("a decoded stamp does not encode", bytes.status());
  if (*bytes != std::vector<uint8_t>(in.begin(), in.end()) &&
      !DecodeLiteRtStamp(*bytes).ok()) {
    fuzz::Fail("an encoded stamp does not decode", absl::OkStatus());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::Span<const uint8_t> in(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: DecodeManifestBytes(in); break;
    case 1: DecodeDispatchOptionsBytes(in); break;
    case 2: DecodeLiteRtOptionsBytes(in); break;
    case 3: DecodeLiteRtStampBytes(in); break;
  }
  return 0;
}
