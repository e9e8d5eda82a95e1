#include "core/compiled_format.h"

#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/flatbuffer_util.h"
#include "core/status.h"
#include "flatbuffers/flexbuffers.h"

namespace graft {
namespace {

// Reads a flexbuffer map, rejecting anything else with a message naming
// `what` (VerifyFlexbuffer: verified, and safe to look keys up in).
absl::StatusOr<VerifiedFlexbuffer> RootMap(absl::Span<const uint8_t> data,
                                           absl::string_view what) {
  std::optional<VerifiedFlexbuffer> buffer = VerifyFlexbuffer(data);
  if (!buffer) {
    return absl::DataLossError(absl::StrCat(what, ": not a valid flexbuffer (",
                                            data.size(), " bytes)"));
  }
  if (!buffer->root.IsMap()) {
    return absl::DataLossError(absl::StrCat(what, ": expected a map"));
  }
  return *std::move(buffer);
}

// Typed reads of one key of `map`: absent, the default; present with
// another type, an error naming `what` and the key. (flexbuffers' own
// conversions would cast a float to an integer unchecked, which is
// undefined out of range, or read a key's bytes as a string.)
absl::Status ReadString(const flexbuffers::Map& map, const char* key,
                        absl::string_view what, std::string* out) {
  flexbuffers::Reference r = map[key];
  if (r.IsNull()) return absl::OkStatus();
  if (!r.IsString()) {
    return absl::DataLossError(
        absl::StrCat(what, ": ", key, " is not a string"));
  }
  *out = r.AsString().str();
  return absl::OkStatus();
}

// An integer in [min, max].
absl::Status ReadInt(const flexbuffers::Map& map, const char* key,
                     absl::string_view what, int64_t min, uint64_t max,
                     int64_t* out_signed, uint64_t* out_unsigned) {
  flexbuffers::Reference r = map[key];
  if (r.IsNull()) return absl::OkStatus();
  bool in_range = false;
  uint64_t u = 0;
  int64_t i = 0;
  if (r.IsUInt()) {
    u = r.AsUInt64();
    i = static_cast<int64_t>(u);
    in_range = u <= max && (min < 0 || u >= static_cast<uint64_t>(min));
  } else if (r.IsInt()) {
    i = r.AsInt64();
    u = static_cast<uint64_t>(i);
    in_range = i >= min && (i < 0 || static_cast<uint64_t>(i) <= max);
  } else {
    return absl::DataLossError(
        absl::StrCat(what, ": ", key, " is not an integer"));
  }
  if (!in_range) {
    return absl::DataLossError(absl::StrCat(what, ": ", key, " ",
                                            r.IsUInt() ? absl::StrCat(u)
                                                       : absl::StrCat(i),
                                            " is out of range"));
  }
  if (out_signed != nullptr) *out_signed = i;
  if (out_unsigned != nullptr) *out_unsigned = u;
  return absl::OkStatus();
}

template <typename T>
absl::Status ReadNumber(const flexbuffers::Map& map, const char* key,
                        absl::string_view what, T* out) {
  static_assert(std::is_integral_v<T>);
  int64_t i = 0;
  uint64_t u = 0;
  GRAFT_RETURN_IF_ERROR(ReadInt(map, key, what,
                                static_cast<int64_t>(std::numeric_limits<T>::min()),
                                static_cast<uint64_t>(std::numeric_limits<T>::max()),
                                &i, &u));
  if (!map[key].IsNull()) {
    *out = std::is_signed_v<T> ? static_cast<T>(i) : static_cast<T>(u);
  }
  return absl::OkStatus();
}

// A vector (absent: empty) or a map.
absl::StatusOr<flexbuffers::Vector> ReadVector(const flexbuffers::Reference& r,
                                               absl::string_view what,
                                               absl::string_view name) {
  if (r.IsNull()) return flexbuffers::Vector::EmptyVector();
  if (!r.IsVector() || r.IsMap()) {
    return absl::DataLossError(absl::StrCat(what, ": ", name, " is not a vector"));
  }
  return r.AsVector();
}

absl::StatusOr<flexbuffers::Map> ReadMap(const flexbuffers::Reference& r,
                                         absl::string_view what) {
  if (!r.IsMap()) return absl::DataLossError(absl::StrCat(what, " is not a map"));
  return r.AsMap();
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
  constexpr absl::string_view kWhat = "dispatch op options";
  GRAFT_ASSIGN_OR_RETURN(VerifiedFlexbuffer buffer, RootMap(data, kWhat));
  const flexbuffers::Map map = buffer.root.AsMap();
  DispatchOpOptions o;
  GRAFT_RETURN_IF_ERROR(ReadString(map, "vendor", kWhat, &o.vendor));
  GRAFT_RETURN_IF_ERROR(ReadString(map, "entry_point", kWhat, &o.entry_point));
  GRAFT_RETURN_IF_ERROR(
      ReadNumber(map, "module_buffer", kWhat, &o.module_buffer));
  GRAFT_RETURN_IF_ERROR(
      ReadNumber(map, "fallback_subgraph", kWhat, &o.fallback_subgraph));
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
    if (!m.refusals.empty()) {
      // [subgraph, op, reason] each.
      fbb.Vector("refusals", [&] {
        for (const ManifestRefusal& r : m.refusals) {
          fbb.Vector([&] {
            fbb.Int(r.subgraph);
            fbb.Int(r.op);
            fbb.String(r.reason);
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
          if (!v.debug_map.empty()) {
            // [buffer, vendor_location, subgraph, op] each.
            fbb.Vector("debug_map", [&] {
              for (const ManifestDebugEntry& d : v.debug_map) {
                fbb.Vector([&] {
                  fbb.UInt(d.buffer);
                  fbb.UInt(d.vendor_location);
                  fbb.Int(d.subgraph);
                  fbb.Int(d.op);
                });
              }
            });
          }
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
  constexpr absl::string_view kWhat = "graft manifest";
  GRAFT_ASSIGN_OR_RETURN(VerifiedFlexbuffer buffer, RootMap(data, kWhat));
  const flexbuffers::Map map = buffer.root.AsMap();
  Manifest m;
  m.format_version = 0;
  GRAFT_RETURN_IF_ERROR(
      ReadNumber(map, "format_version", kWhat, &m.format_version));
  if (m.format_version > kCompiledFormatVersion || m.format_version < 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "graft manifest: format version ", m.format_version,
        " is not supported (this Graft reads up to ", kCompiledFormatVersion,
        "); recompile the model with this Graft"));
  }
  GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector vendors,
                         ReadVector(map["vendors"], kWhat, "vendors"));
  for (size_t i = 0; i < vendors.size(); ++i) {
    const std::string where = absl::StrCat(kWhat, ": vendors[", i, "]");
    GRAFT_ASSIGN_OR_RETURN(flexbuffers::Map v, ReadMap(vendors[i], where));
    ManifestVendor out;
    GRAFT_RETURN_IF_ERROR(ReadString(v, "vendor", where, &out.vendor));
    GRAFT_RETURN_IF_ERROR(ReadString(v, "abi", where, &out.abi));
    GRAFT_RETURN_IF_ERROR(
        ReadString(v, "plugin_name", where, &out.plugin_name));
    GRAFT_RETURN_IF_ERROR(
        ReadString(v, "plugin_version", where, &out.plugin_version));
    GRAFT_RETURN_IF_ERROR(ReadString(v, "soc_model", where, &out.soc_model));
    GRAFT_RETURN_IF_ERROR(ReadNumber(v, "compiler_abi_version", where,
                                     &out.compiler_abi_version));
    GRAFT_RETURN_IF_ERROR(ReadNumber(v, "bytecode_format_version", where,
                                     &out.bytecode_format_version));
    GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector modules,
                           ReadVector(v["modules"], where, "modules"));
    for (size_t j = 0; j < modules.size(); ++j) {
      const std::string at = absl::StrCat(where, ": modules[", j, "]");
      GRAFT_ASSIGN_OR_RETURN(flexbuffers::Map mod, ReadMap(modules[j], at));
      ManifestModule module;
      GRAFT_RETURN_IF_ERROR(ReadNumber(mod, "buffer", at, &module.buffer));
      GRAFT_RETURN_IF_ERROR(ReadNumber(mod, "size", at, &module.size));
      GRAFT_RETURN_IF_ERROR(ReadNumber(mod, "hash", at, &module.hash));
      out.modules.push_back(module);
    }
    GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector debug_map,
                           ReadVector(v["debug_map"], where, "debug_map"));
    for (size_t j = 0; j < debug_map.size(); ++j) {
      const std::string at = absl::StrCat(where, ": debug_map[", j, "]");
      GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector e,
                             ReadVector(debug_map[j], at, "entry"));
      if (e.size() != 4 || !e[0].IsUInt() || !e[1].IsUInt() ||
          !(e[2].IsInt() || e[2].IsUInt()) ||
          !(e[3].IsInt() || e[3].IsUInt()) ||
          e[0].AsUInt64() > std::numeric_limits<uint32_t>::max() ||
          e[2].AsInt64() < 0 ||
          e[2].AsInt64() > std::numeric_limits<int32_t>::max() ||
          e[3].AsInt64() < 0 ||
          e[3].AsInt64() > std::numeric_limits<int32_t>::max()) {
        return absl::DataLossError(absl::StrCat(
            at, " is not [buffer, vendor_location, subgraph, op]"));
      }
      out.debug_map.push_back({static_cast<uint32_t>(e[0].AsUInt64()),
                               e[1].AsUInt64(),
                               static_cast<int32_t>(e[2].AsInt64()),
                               static_cast<int32_t>(e[3].AsInt64())});
    }
    if (out.vendor.empty()) {
      return absl::DataLossError(
          absl::StrCat("graft manifest: vendors[", i, "] has no vendor name"));
    }
    m.vendors.push_back(std::move(out));
  }
  GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector origins,
                         ReadVector(map["op_origins"], kWhat, "op_origins"));
  for (size_t i = 0; i < origins.size(); ++i) {
    const std::string where = absl::StrCat(kWhat, ": op_origins[", i, "]");
    GRAFT_ASSIGN_OR_RETURN(flexbuffers::Map o, ReadMap(origins[i], where));
    ManifestOpOrigins out;
    GRAFT_RETURN_IF_ERROR(ReadNumber(o, "subgraph", where, &out.subgraph));
    GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector ops,
                           ReadVector(o["ops"], where, "ops"));
    for (size_t j = 0; j < ops.size(); ++j) {
      GRAFT_ASSIGN_OR_RETURN(
          flexbuffers::Vector from,
          ReadVector(ops[j], where, absl::StrCat("ops[", j, "]")));
      std::vector<int32_t> ids;
      for (size_t k = 0; k < from.size(); ++k) {
        flexbuffers::Reference id = from[k];
        if (!id.IsInt() && !id.IsUInt()) {
          return absl::DataLossError(absl::StrCat(where, ": ops[", j, "][", k,
                                                  "] is not an integer"));
        }
        const int64_t v = id.AsInt64();
        if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
          return absl::DataLossError(absl::StrCat(where, ": ops[", j, "][", k,
                                                  "] ", v, " is out of range"));
        }
        ids.push_back(static_cast<int32_t>(v));
      }
      out.ops.push_back(std::move(ids));
    }
    m.op_origins.push_back(std::move(out));
  }
  GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector refusals,
                         ReadVector(map["refusals"], kWhat, "refusals"));
  for (size_t i = 0; i < refusals.size(); ++i) {
    const std::string where = absl::StrCat(kWhat, ": refusals[", i, "]");
    GRAFT_ASSIGN_OR_RETURN(flexbuffers::Vector r,
                           ReadVector(refusals[i], where, "entry"));
    if (r.size() != 3 || !(r[0].IsInt() || r[0].IsUInt()) ||
        !(r[1].IsInt() || r[1].IsUInt()) || !r[2].IsString() ||
        r[0].AsInt64() < 0 ||
        r[0].AsInt64() > std::numeric_limits<int32_t>::max() ||
        r[1].AsInt64() < 0 ||
        r[1].AsInt64() > std::numeric_limits<int32_t>::max()) {
      return absl::DataLossError(
          absl::StrCat(where, " is not [subgraph, op, reason]"));
    }
    m.refusals.push_back({static_cast<int32_t>(r[0].AsInt64()),
                          static_cast<int32_t>(r[1].AsInt64()),
                          r[2].AsString().str()});
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

namespace {

// True when anything but the metadata entry `self` reads buffer `buffer`:
// a tensor, another metadata entry, the model's metadata_buffer list, a
// module `manifest` lists or a dispatch op's module. Overwriting such a
// buffer with the manifest would change that data (a model from elsewhere
// may point its manifest entry at a weight).
bool BufferSharedElsewhere(const Model& model, uint32_t buffer,
                           const tfl::MetadataT* self,
                           const Manifest& manifest) {
  for (const Subgraph& sg : model.subgraphs) {
    for (const tfl::TensorT& t : sg.tensors) {
      if (t.buffer == buffer) return true;
    }
    for (const tfl::OperatorT& op : sg.ops) {
      if (!IsDispatchOp(model, op)) continue;
      absl::StatusOr<DispatchOpOptions> o =
          DecodeDispatchOpOptions(op.custom_options);
      if (o.ok() && o->module_buffer == buffer) return true;
    }
  }
  for (const tfl::MetadataT& md : model.metadata) {
    if (&md != self && md.buffer == buffer) return true;
  }
  for (int32_t b : model.metadata_buffer) {
    if (b >= 0 && static_cast<uint32_t>(b) == buffer) return true;
  }
  for (const ManifestVendor& v : manifest.vendors) {
    for (const ManifestModule& m : v.modules) {
      if (m.buffer == buffer) return true;
    }
  }
  return false;
}

}  // namespace

void WriteManifest(Model& model, const Manifest& manifest) {
  Bytes data = Bytes::Own(EncodeManifest(manifest));
  // Readers take the first entry of this name, so exactly one is kept: an
  // earlier entry without a usable buffer, or a second one, would hide the
  // manifest written here (found by tests/fuzz, apply). An earlier entry's
  // buffer is reused only when nothing else reads it.
  bool written = false;
  for (auto it = model.metadata.begin(); it != model.metadata.end();) {
    if (it->name != kManifestMetadataName) {
      ++it;
    } else if (!written && it->buffer != 0 &&
               it->buffer < model.buffers.size() &&
               !BufferSharedElsewhere(model, it->buffer, &*it, manifest)) {
      model.buffers[it->buffer].data = std::move(data);
      written = true;
      ++it;
    } else {
      it = model.metadata.erase(it);
    }
  }
  if (written) return;
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
