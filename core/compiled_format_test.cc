#include "core/compiled_format.h"

#include "flatbuffers/flexbuffers.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(CompiledFormatTest, DispatchOptionsRoundTrip) {
  DispatchOpOptions o{"example", 7, "partition_3", 2};
  auto back = DecodeDispatchOpOptions(EncodeDispatchOpOptions(o));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->vendor, "example");
  EXPECT_EQ(back->module_buffer, 7u);
  EXPECT_EQ(back->entry_point, "partition_3");
  EXPECT_EQ(back->fallback_subgraph, 2);
}

TEST(CompiledFormatTest, RejectsGarbageDispatchOptions) {
  std::vector<uint8_t> junk = {1, 2, 3, 4, 5};
  auto back = DecodeDispatchOpOptions(junk);
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("not a valid flexbuffer"),
            std::string::npos);
  EXPECT_FALSE(DecodeDispatchOpOptions({}).ok());
}

TEST(CompiledFormatTest, RejectsDispatchOptionsWithoutVendor) {
  DispatchOpOptions o{"", 7, "main", -1};
  auto back = DecodeDispatchOpOptions(EncodeDispatchOpOptions(o));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("vendor"), std::string::npos);
}

TEST(CompiledFormatTest, UncompiledPartitionNeedsFallbackSubgraph) {
  EXPECT_TRUE(
      DecodeDispatchOpOptions(EncodeDispatchOpOptions({"example", 0, "", 3}))
          .ok());
  EXPECT_FALSE(
      DecodeDispatchOpOptions(EncodeDispatchOpOptions({"example", 0, "", -1}))
          .ok());
}

TEST(CompiledFormatTest, ManifestRoundTripsThroughModelMetadata) {
  Model model;
  Manifest m;
  ManifestVendor v;
  v.vendor = "example";
  v.plugin_name = "example";
  v.plugin_version = "1.0.0";
  v.soc_model = "example-soc-1";
  v.compiler_abi_version = 0x10000;
  v.bytecode_format_version = 1;
  v.modules.push_back({3, 128, 0x1234567890abcdefull});
  m.vendors.push_back(v);
  WriteManifest(model, m);
  WriteManifest(model, m);  // Replaces, does not duplicate.
  ASSERT_EQ(model.metadata.size(), 1u);
  auto back = ReadManifest(model);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_NE(back->Find("example"), nullptr);
  EXPECT_EQ(back->Find("other"), nullptr);
  const ManifestVendor& bv = *back->Find("example");
  EXPECT_EQ(bv.soc_model, "example-soc-1");
  EXPECT_EQ(bv.compiler_abi_version, 0x10000u);
  ASSERT_EQ(bv.modules.size(), 1u);
  EXPECT_EQ(bv.modules[0].hash, 0x1234567890abcdefull);
  EXPECT_EQ(bv.modules[0].size, 128u);
}

TEST(CompiledFormatTest, OpOriginsRoundTripAndAreOptional) {
  Manifest m;
  m.vendors.push_back({});
  m.vendors.back().vendor = "example";
  auto without = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_TRUE(without->op_origins.empty());
  EXPECT_EQ(without->FindOpOrigins(0), nullptr);

  m.op_origins.push_back({0, {{0}, {1, 2, 4}, {3}}});
  m.op_origins.push_back({2, {{5}}});
  auto back = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->op_origins.size(), 2u);
  ASSERT_NE(back->FindOpOrigins(0), nullptr);
  EXPECT_EQ(back->FindOpOrigins(0)->ops,
            (std::vector<std::vector<int32_t>>{{0}, {1, 2, 4}, {3}}));
  ASSERT_NE(back->FindOpOrigins(2), nullptr);
  EXPECT_EQ(back->FindOpOrigins(2)->ops,
            (std::vector<std::vector<int32_t>>{{5}}));
  EXPECT_EQ(back->FindOpOrigins(1), nullptr);
  EXPECT_EQ(back->Find("example")->vendor, "example");
}

// The plugin's debug map (per vendor) and apply's refusal reasons are
// optional keys: a manifest without them reads as before.
TEST(CompiledFormatTest, DebugMapAndRefusalsRoundTripAndAreOptional) {
  Manifest m;
  m.vendors.push_back({});
  m.vendors.back().vendor = "xnnpack";
  auto without = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_TRUE(without->refusals.empty());
  EXPECT_TRUE(without->vendors[0].debug_map.empty());

  m.vendors.back().debug_map = {{3, 0, 0, 7},
                                {3, (uint64_t{1} << 32) | 2, 0, 9}};
  m.refusals = {{0, 4, "xnnpack: UNSUPPORTED_OP: op TANH has no node"},
                {1, 0, ""}};
  auto back = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(back.ok()) << back.status();
  const std::vector<ManifestDebugEntry>& d = back->vendors[0].debug_map;
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[1].buffer, 3u);
  EXPECT_EQ(d[1].vendor_location, (uint64_t{1} << 32) | 2);
  EXPECT_EQ(d[1].subgraph, 0);
  EXPECT_EQ(d[1].op, 9);
  ASSERT_EQ(back->refusals.size(), 2u);
  EXPECT_EQ(back->refusals[0].op, 4);
  EXPECT_EQ(back->refusals[0].reason,
            "xnnpack: UNSUPPORTED_OP: op TANH has no node");
  EXPECT_EQ(back->refusals[1].subgraph, 1);
}

TEST(CompiledFormatTest, RejectsMalformedDebugMapAndRefusals) {
  flexbuffers::Builder fbb;
  fbb.Map([&] {
    fbb.Int("format_version", kCompiledFormatVersion);
    fbb.Vector("refusals", [&] {
      fbb.Vector([&] {
        fbb.Int(-1);
        fbb.Int(0);
        fbb.String("x");
      });
    });
    fbb.Vector("vendors", [] {});
  });
  fbb.Finish();
  auto bad = DecodeManifest(fbb.GetBuffer());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss) << bad.status();
  EXPECT_NE(bad.status().message().find("refusals[0]"),
            absl::string_view::npos);

  flexbuffers::Builder b2;
  b2.Map([&] {
    b2.Int("format_version", kCompiledFormatVersion);
    b2.Vector("vendors", [&] {
      b2.Map([&] {
        b2.String("vendor", "xnnpack");
        b2.Vector("debug_map", [&] {
          b2.Vector([&] {
            b2.UInt(1);
            b2.UInt(2);
          });
        });
      });
    });
  });
  b2.Finish();
  auto short_entry = DecodeManifest(b2.GetBuffer());
  EXPECT_EQ(short_entry.status().code(), absl::StatusCode::kDataLoss)
      << short_entry.status();
  EXPECT_NE(short_entry.status().message().find("debug_map[0]"),
            absl::string_view::npos);
}

TEST(CompiledFormatTest, ModelWithoutManifestIsNotFound) {
  Model model;
  EXPECT_EQ(ReadManifest(model).status().code(), absl::StatusCode::kNotFound);
}

TEST(CompiledFormatTest, RejectsNewerManifestFormat) {
  Manifest m;
  m.format_version = kCompiledFormatVersion + 1;
  auto back = DecodeManifest(EncodeManifest(m));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("recompile"), std::string::npos);
}

// Manifests of format version 2 record ModuleHash, of version 1
// Fingerprint64; both are read.
TEST(CompiledFormatTest, ModuleHashIsStableAndSeesEveryByte) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<uint8_t>(i * 7);
  const uint64_t h = ModuleHash(data);
  EXPECT_EQ(h, ModuleHash(data));
  // Every byte position, in the blocks, the words and the tail, counts.
  for (size_t i :
       {size_t{0}, size_t{31}, size_t{32}, size_t{990}, size_t{999}}) {
    std::vector<uint8_t> flipped = data;
    flipped[i] ^= 1;
    EXPECT_NE(ModuleHash(flipped), h) << "byte " << i;
  }
  // Length counts (a zero-padded copy differs).
  std::vector<uint8_t> longer = data;
  longer.push_back(0);
  EXPECT_NE(ModuleHash(longer), h);
  // Fixed values: the hash is part of the file format.
  EXPECT_EQ(ModuleHash({}), ModuleHash({}));
  Manifest v1;
  v1.format_version = 1;
  EXPECT_EQ(v1.HashModule(data), Fingerprint64(data));
  Manifest v2;
  EXPECT_EQ(v2.HashModule(data), ModuleHash(data));
}

TEST(CompiledFormatTest, FingerprintIsStableFnv1a) {
  // FNV-1a 64 test vectors.
  EXPECT_EQ(Fingerprint64({}), 0xcbf29ce484222325ull);
  const uint8_t a[] = {'a'};
  EXPECT_EQ(Fingerprint64(a), 0xaf63dc4c8601ec8cull);
}

// Found by tests/fuzz (apply): a model carrying a graft_manifest entry
// without data (buffer 0) kept it ahead of the one apply wrote, so the
// compiled model's manifest read as "not a valid flexbuffer (0 bytes)".
TEST(CompiledFormatTest, WriteManifestReplacesABrokenEntry) {
  Model model;
  model.buffers.resize(1);
  tfl::MetadataT broken;
  broken.name = kManifestMetadataName;
  broken.buffer = 0;
  model.metadata.push_back(broken);
  model.metadata.push_back(broken);
  Manifest m;
  ManifestVendor v;
  v.vendor = "example";
  m.vendors.push_back(v);
  WriteManifest(model, m);
  absl::StatusOr<Manifest> read = ReadManifest(model);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->vendors.size(), 1u);
  EXPECT_EQ(read->vendors[0].vendor, "example");
  EXPECT_EQ(model.metadata.size(), 1u);
}

// A model from elsewhere may point its manifest entry at a buffer that
// something else reads: rewriting the manifest must leave that data alone.
TEST(CompiledFormatTest, WriteManifestLeavesASharedBufferAlone) {
  Model model;
  model.buffers.resize(2);
  const std::vector<uint8_t> weights = {1, 2, 3, 4};
  model.buffers[1].data = Bytes::Own(std::vector<uint8_t>(weights));
  model.subgraphs.emplace_back();
  tfl::TensorT t;
  t.name = "weights";
  t.buffer = 1;
  model.subgraphs[0].tensors.push_back(t);
  tfl::MetadataT entry;
  entry.name = kManifestMetadataName;
  entry.buffer = 1;
  model.metadata.push_back(entry);
  Manifest m;
  ManifestVendor v;
  v.vendor = "example";
  m.vendors.push_back(v);
  WriteManifest(model, m);
  const Bytes& kept = model.buffers[1].data;
  EXPECT_EQ(std::vector<uint8_t>(kept.data(), kept.data() + kept.size()),
            weights);
  ASSERT_EQ(model.metadata.size(), 1u);
  EXPECT_NE(model.metadata[0].buffer, 1u);
  absl::StatusOr<Manifest> read = ReadManifest(model);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->vendors[0].vendor, "example");

  // Its own buffer, read by nothing else, is reused: no buffer is added.
  const size_t buffers = model.buffers.size();
  WriteManifest(model, m);
  EXPECT_EQ(model.buffers.size(), buffers);
}

}  // namespace
}  // namespace graft
