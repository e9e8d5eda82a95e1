// The compiled-model format: what Graft adds to a .tflite when it embeds a
// vendor's bytecode, read back by the dispatch runtime.
//
// - Each compiled partition is a custom op with custom code
//   kDispatchCustomCode whose custom_options (a flexbuffer map, see
//   DispatchOpOptions) name the vendor, the bytecode module and the entry
//   point.
// - Each bytecode module is a model buffer stored after the flatbuffer,
//   64-byte aligned, once however many ops use it (Buffer::external).
// - A manifest (a flexbuffer map, see Manifest) in the model's metadata under
//   kManifestMetadataName records, per vendor, what the runtime must check
//   before creating any vendor context.
//
// Readers ignore map keys they do not know, so fields may be added; a change
// that old readers must not ignore bumps kCompiledFormatVersion.
#ifndef GRAFT_CORE_COMPILED_FORMAT_H_
#define GRAFT_CORE_COMPILED_FORMAT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/model.h"

namespace graft {

inline constexpr char kDispatchCustomCode[] = "GRAFT_DISPATCH";
inline constexpr char kManifestMetadataName[] = "graft_manifest";
// 2: module hashes are ModuleHash (1: Fingerprint64, still read).
inline constexpr int32_t kCompiledFormatVersion = 2;

// custom_options of a dispatch op.
struct DispatchOpOptions {
  std::string vendor;
  // Model buffer holding the bytecode module; 0 for an uncompiled partition.
  uint32_t module_buffer = 0;
  // Entry point inside the module.
  std::string entry_point;
  // Subgraph holding the partition's original ops (runs on CPU kernels when
  // the vendor cannot), or -1 when it was stripped.
  int32_t fallback_subgraph = -1;
};

std::vector<uint8_t> EncodeDispatchOpOptions(const DispatchOpOptions& options);
absl::StatusOr<DispatchOpOptions> DecodeDispatchOpOptions(
    absl::Span<const uint8_t> data);

struct ManifestModule {
  uint32_t buffer = 0;
  uint64_t size = 0;
  // The module's bytes hashed as Manifest::HashModule says.
  uint64_t hash = 0;
};

// One entry of a compiler plugin's debug map (graft_debug_map_entry_t):
// location `vendor_location` (in the vendor's own unit) of the module in
// model buffer `buffer` implements op `op` of subgraph `subgraph` of the
// model apply was given (the numbering of op_origins). Lets tools name the
// model op of each span a dispatch library profiles.
struct ManifestDebugEntry {
  uint32_t buffer = 0;
  uint64_t vendor_location = 0;
  int32_t subgraph = 0;
  int32_t op = 0;
};

struct ManifestVendor {
  std::string vendor;
  // The vendor ABI its plugin speaks: "" for Graft's own (dispatch ops
  // GRAFT_DISPATCH, served by libgraft_dispatch_<vendor>.so), "litert" for
  // LiteRT's (DISPATCH_OP, served by a LiteRT dispatch library).
  std::string abi;
  std::string plugin_name;
  std::string plugin_version;
  std::string soc_model;
  // The plugin ABI version it was compiled with (packed major/minor).
  uint32_t compiler_abi_version = 0;
  // The vendor's bytecode format version, checked by its dispatch library.
  uint32_t bytecode_format_version = 0;
  std::vector<ManifestModule> modules;
  // The plugin's debug map, when it gave one (key "debug_map", optional:
  // older readers ignore it); ordered by (buffer, vendor_location).
  std::vector<ManifestDebugEntry> debug_map;
};

// Where the ops of one subgraph came from: op i of subgraph `subgraph` in
// the compiled model stands for ops `ops[i]` of the same subgraph in the
// model apply was given (after composites were inlined): several for a
// dispatch op (ascending, the order of its fallback subgraph's ops), one
// for an op no vendor took. Lets tools map a dispatch op's time back to the
// model's ops (graft run --profile's placement map).
struct ManifestOpOrigins {
  int32_t subgraph = 0;
  std::vector<std::vector<int32_t>> ops;
};

// Why no vendor took op `op` of subgraph `subgraph` (numbered as
// op_origins): each plugin's refusal, "vendor: CODE: reason" joined by
// "; ", cut to kMaxRefusalBytes with control characters replaced, for
// reports of the compiled model (graft run --report-html).
struct ManifestRefusal {
  int32_t subgraph = 0;
  int32_t op = 0;
  std::string reason;
};
// Caps on what a manifest records of refusals: bytes per op, ops in all
// (a model with more records the first ones).
inline constexpr size_t kMaxRefusalBytes = 400;
inline constexpr size_t kMaxRefusals = 20000;

struct Manifest {
  int32_t format_version = kCompiledFormatVersion;
  std::vector<ManifestVendor> vendors;
  // One entry per subgraph apply outlined; empty in models compiled before
  // Graft recorded it (older readers ignore the key).
  std::vector<ManifestOpOrigins> op_origins;
  // Ops of the outlined subgraphs that no vendor took, and why (key
  // "refusals", optional: older readers ignore it; empty in models compiled
  // before Graft recorded them). Ordered by (subgraph, op).
  std::vector<ManifestRefusal> refusals;

  // The entry for `vendor`, or null.
  const ManifestVendor* Find(absl::string_view vendor) const;
  // The origins of `subgraph`'s ops, or null when not recorded.
  const ManifestOpOrigins* FindOpOrigins(int32_t subgraph) const;

  // A module's hash as this manifest's format version records it:
  // ModuleHash from version 2, Fingerprint64 before.
  uint64_t HashModule(absl::Span<const uint8_t> module) const;
};

std::vector<uint8_t> EncodeManifest(const Manifest& manifest);
absl::StatusOr<Manifest> DecodeManifest(absl::Span<const uint8_t> data);

// The model's manifest; NotFound when the model was not compiled by Graft.
absl::StatusOr<Manifest> ReadManifest(const Model& model);
// Stores `manifest` in the model's metadata (replacing an earlier one).
void WriteManifest(Model& model, const Manifest& manifest);

// True for an op whose operator code is kDispatchCustomCode.
bool IsDispatchOp(const Model& model, const tfl::OperatorT& op);

// FNV-1a, 64 bits: a stable fingerprint for cache keys and small data (not
// a cryptographic hash). One byte at a time: ~1.5 ns/byte.

uint64_t Fingerprint64(absl::Span<const uint8_t> data,
                       uint64_t seed = 0xcbf29ce484222325ull);

// The hash of bytecode modules in manifests of format version 2: four
// independent 64-bit multiply-rotate lanes over 32-byte blocks (words read
// little-endian), the tail bytes, the length, and a final avalanche. Stable
// across builds and machines; about ten times Fingerprint64's speed, which
// matters for modules of tens of MiB checked at every load. Not
// cryptographic: it detects corruption, not tampering.
uint64_t ModuleHash(absl::Span<const uint8_t> data);

}  // namespace graft

#endif  // GRAFT_CORE_COMPILED_FORMAT_H_
