#include "core/compiled_format.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "flatbuffers/flexbuffers.h"

namespace graft {
namespace {

// Reads a flexbuffer map, rejecting anything else with a message naming
// `what`. flexbuffers itself does not bounds-check, so verify first.
absl::StatusOr<flexbuffers::Map> RootMap(absl::Span<const uint8_t> data,
                                         absl::string_view what) {
  if (data.empty() ||
      !flexbuffers::VerifyBuffer(data.data(), data.size(), nullptr)) {
    return absl::DataLossError(absl::StrCat(what, ": not a valid flexbuffer (",
                                            data.size(), " bytes)"));
  }
  flexbuffers::Reference root = flexbuffers::GetRoot(data.data(), data.size());
  if (!root.IsMap()) {
    return absl::DataLossError(absl::StrCat(what, ": expected a map"));
  }
  return root.AsMap();
}

}  // namespace

std::vector<uint8_t> EncodeDispatchOpOptions(const DispatchOpOptions& o) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.String("entry_point", o.entry_point);
    fbb.Int("fallback_subgraph", o.fallback_subgraph);
    fbb.UInt("module_buffer", o.module_buffer);
    fbb.String("vendor", o.vendor);
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

absl::StatusOr<DispatchOpOptions> DecodeDispatchOpOptions(
    absl::Span<const uint8_t> data) {
  auto map = RootMap(data, "dispatch op options");
  if (!map.ok()) return map.status();
  DispatchOpOptions o;
  o.vendor = (*map)["vendor"].AsString().str();
  o.entry_point = (*map)["entry_point"].AsString().str();
  o.module_buffer = static_cast<uint32_t>((*map)["module_buffer"].AsUInt64());
  flexbuffers::Reference fallback = (*map)["fallback_subgraph"];
  o.fallback_subgraph =
      fallback.IsNull() ? -1 : static_cast<int32_t>(fallback.AsInt64());
  const bool compiled = o.module_buffer != 0 && !o.entry_point.empty();
  if (o.vendor.empty() || (!compiled && o.fallback_subgraph < 0)) {
    return absl::DataLossError(
        "dispatch op options: a vendor and either a module with an entry "
        "point or a fallback subgraph are required");
  }
  return o;
}

const ManifestVendor* Manifest::Find(absl::string_view vendor) const {
  for (const ManifestVendor& v : vendors) {
    if (v.vendor == vendor) return &v;
  }
  return nullptr;
}

const ManifestOpOrigins* Manifest::FindOpOrigins(int32_t subgraph) const {
  for (const ManifestOpOrigins& o : op_origins) {
    if (o.subgraph == subgraph) return &o;
  }
  return nullptr;
}

std::vector<uint8_t> EncodeManifest(const Manifest& m) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Int("format_version", m.format_version);
    if (!m.op_origins.empty()) {
      fbb.Vector("op_origins", [&] {
        for (const ManifestOpOrigins& o : m.op_origins) {
          fbb.Map([&] {
            fbb.Vector("ops", [&] {
              for (const std::vector<int32_t>& from : o.ops) {
                fbb.Vector([&] {
                  for (int32_t op : from) fbb.Int(op);
                });
              }
            });
            fbb.Int("subgraph", o.subgraph);
          });
        }
      });
    }
    fbb.Vector("vendors", [&] {
      for (const ManifestVendor& v : m.vendors) {
        fbb.Map([&] {
          if (!v.abi.empty()) fbb.String("abi", v.abi);
          fbb.UInt("bytecode_format_version", v.bytecode_format_version);
          fbb.UInt("compiler_abi_version", v.compiler_abi_version);
          fbb.Vector("modules", [&] {
            for (const ManifestModule& mod : v.modules) {
              fbb.Map([&] {
                fbb.UInt("buffer", mod.buffer);
                fbb.UInt("hash", mod.hash);
                fbb.UInt("size", mod.size);
              });
            }
          });
          fbb.String("plugin_name", v.plugin_name);
          fbb.String("plugin_version", v.plugin_version);
          fbb.String("soc_model", v.soc_model);
          fbb.String("vendor", v.vendor);
        });
      }
    });
  });
  fbb.Finish();
  return fbb.GetBuffer();
}

absl::StatusOr<Manifest> DecodeManifest(absl::Span<const uint8_t> data) {
  auto map = RootMap(data, "graft manifest");
  if (!map.ok()) return map.status();
  Manifest m;
  m.format_version = static_cast<int32_t>((*map)["format_version"].AsInt64());
  if (m.format_version > kCompiledFormatVersion || m.format_version < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "graft manifest: format version ", m.format_version,
        " is not supported (this Graft reads up to ", kCompiledFormatVersion,
        "); recompile the model with this Graft"));
  }
  flexbuffers::Vector vendors = (*map)["vendors"].AsVector();
  for (size_t i = 0; i < vendors.size(); ++i) {
    flexbuffers::Map v = vendors[i].AsMap();
    ManifestVendor out;
    out.vendor = v["vendor"].AsString().str();
    out.abi = v["abi"].AsString().str();
    out.plugin_name = v["plugin_name"].AsString().str();
    out.plugin_version = v["plugin_version"].AsString().str();
    out.soc_model = v["soc_model"].AsString().str();
    out.compiler_abi_version =
        static_cast<uint32_t>(v["compiler_abi_version"].AsUInt64());
    out.bytecode_format_version =
        static_cast<uint32_t>(v["bytecode_format_version"].AsUInt64());
    flexbuffers::Vector modules = v["modules"].AsVector();
    for (size_t j = 0; j < modules.size(); ++j) {
      flexbuffers::Map mod = modules[j].AsMap();
      out.modules.push_back({static_cast<uint32_t>(mod["buffer"].AsUInt64()),
                             mod["size"].AsUInt64(), mod["hash"].AsUInt64()});
    }
    if (out.vendor.empty()) {
      return absl::DataLossError(
          absl::StrCat("graft manifest: vendors[", i, "] has no vendor name"));
    }
    m.vendors.push_back(std::move(out));
  }
  flexbuffers::Vector origins = (*map)["op_origins"].AsVector();
  for (size_t i = 0; i < origins.size(); ++i) {
    flexbuffers::Map o = origins[i].AsMap();
    ManifestOpOrigins out;
    out.subgraph = static_cast<int32_t>(o["subgraph"].AsInt64());
    flexbuffers::Vector ops = o["ops"].AsVector();
    for (size_t j = 0; j < ops.size(); ++j) {
      flexbuffers::Vector from = ops[j].AsVector();
      std::vector<int32_t> ids;
      for (size_t k = 0; k < from.size(); ++k) {
        ids.push_back(static_cast<int32_t>(from[k].AsInt64()));
      }
      out.ops.push_back(std::move(ids));
    }
    m.op_origins.push_back(std::move(out));
  }
  return m;
}

absl::StatusOr<Manifest> ReadManifest(const Model& model) {
  for (const tfl::MetadataT& md : model.metadata) {
    if (md.name != kManifestMetadataName) continue;
    if (md.buffer >= model.buffers.size()) {
      return absl::DataLossError(absl::StrCat(
          "graft manifest: metadata buffer ", md.buffer, " out of range"));
    }
    return DecodeManifest(model.buffers[md.buffer].data.span());
  }
  return absl::NotFoundError(
      "the model has no graft manifest: it was not compiled by graft apply");
}

void WriteManifest(Model& model, const Manifest& manifest) {
  Bytes data = Bytes::Own(EncodeManifest(manifest));
  for (tfl::MetadataT& md : model.metadata) {
    if (md.name == kManifestMetadataName && md.buffer != 0 &&
        md.buffer < model.buffers.size()) {
      model.buffers[md.buffer].data = std::move(data);
      return;
    }
  }
  tfl::MetadataT md;
  md.name = kManifestMetadataName;
  md.buffer = AddBuffer(model, std::move(data));
  model.metadata.push_back(std::move(md));
}

bool IsDispatchOp(const Model& model, const tfl::OperatorT& op) {
  if (op.opcode_index >= model.operator_codes.size()) return false;
  const tfl::OperatorCodeT& code = model.operator_codes[op.opcode_index];
  return EffectiveBuiltinCode(code) == tfl::BuiltinOperator_CUSTOM &&
         code.custom_code == kDispatchCustomCode;
}

uint64_t Manifest::HashModule(absl::Span<const uint8_t> module) const {
  return format_version >= 2 ? ModuleHash(module) : Fingerprint64(module);
}

namespace {

constexpr uint64_t kPrime1 = 0x9e3779b185ebca87ull;
constexpr uint64_t kPrime2 = 0xc2b2ae3d27d4eb4full;
constexpr uint64_t kPrime3 = 0x165667b19e3779f9ull;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline uint64_t Round(uint64_t lane, uint64_t word) {
  return Rotl(lane ^ (word * kPrime2), 31) * kPrime1;
}

}  // namespace

uint64_t ModuleHash(absl::Span<const uint8_t> data) {
  const uint8_t* p = data.data();
  size_t n = data.size();
  uint64_t lane[4] = {kPrime1, kPrime2, kPrime3, kPrime1 ^ kPrime2};
  for (; n >= 32; n -= 32, p += 32) {
    for (int i = 0; i < 4; ++i)
      lane[i] = Round(lane[i], LoadLittleEndian64(p + 8 * i));
  }
  uint64_t h = Rotl(lane[0], 1) + Rotl(lane[1], 7) + Rotl(lane[2], 12) +
               Rotl(lane[3], 18);
  for (; n >= 8; n -= 8, p += 8) h = Round(h, LoadLittleEndian64(p));
  for (; n > 0; --n, ++p) h = (h ^ *p) * kPrime3;
  h ^= static_cast<uint64_t>(data.size()) * kPrime1;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

uint64_t Fingerprint64(absl::Span<const uint8_t> data, uint64_t seed) {
  uint64_t h = seed;
  for (uint8_t b : data) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace graft
