// Writes the fuzz targets' seed corpora, at build time, from Graft's own
// test models: usage make_fuzz_seeds SOURCE_DIR OUT_DIR EXAMPLE_PLUGIN
// [XNNPACK_PLUGIN]. OUT_DIR/models gets test_models/'s models of at most
// kMaxSeedBytes (the builder-made and converter-made ones; nothing
// downloaded), a few builder-made single-op models for the kernels the
// corpus lacks, and the models compiled below; OUT_DIR/example and
// OUT_DIR/xnnpack the models those vendors' plugins compile (their
// bytecode); OUT_DIR/format the manifests and dispatch op options of the
// compiled models and LiteRT-format options and stamps, each behind the
// byte format_fuzzer.cc reads to pick its decoder.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compiled_format.h"
#include "core/file_util.h"
#include "core/litert_format.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "plugins/apply.h"
#include "plugins/compiler_plugin.h"

namespace {

using namespace graft;
namespace fs = std::filesystem;

// Seeds far beyond libFuzzer's -max_len would only be truncated.
constexpr uintmax_t kMaxSeedBytes = 64 * 1024;
constexpr tfl::TensorType F32 = tfl::TensorType_FLOAT32;

std::vector<float> Ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 7) / 7 - 0.5f;
  return v;
}

// The builder-made models: kernels with window arithmetic (3-D and
// transposed convolutions, pooling), shape computations and control flow.
std::vector<std::pair<std::string, Model>> BuilderModels() {
  std::vector<std::pair<std::string, Model>> out;
  auto add = [&](const std::string& name, ModelBuilder& b) {
    absl::StatusOr<Model> m = std::move(b).Build();
    if (!m.ok()) {
      std::fprintf(stderr, "make_fuzz_seeds: %s: %s\n", name.c_str(),
                   std::string(m.status().message()).c_str());
      std::exit(1);
    }
    out.emplace_back(name, std::move(*m));
  };
  {
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", F32, {1, 4, 5, 5, 2});
    TensorId w = g.Constant<float>("w", {2, 3, 3, 2, 3}, Ramp(108));
    tfl::Conv3DOptionsT o;
    o.padding = tfl::Padding_SAME;
    o.stride_d = 1, o.stride_h = 2, o.stride_w = 1;
    o.dilation_d_factor = o.dilation_h_factor = o.dilation_w_factor = 1;
    g.Output(g.Op(tfl::BuiltinOperator_CONV_3D).In(x, w).Options(o).Out(
        "y", F32, {1, 4, 3, 5, 3}));
    add("conv3d", b);
  }
  {
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", F32, {1, 2, 3, 3, 2});
    TensorId shape = g.Constant<int32_t>("shape", {5}, {1, 3, 6, 6, 3});
    TensorId w = g.Constant<float>("w", {2, 2, 2, 3, 2}, Ramp(48));
    tfl::Conv3DOptionsT o;
    o.padding = tfl::Padding_VALID;
    o.stride_d = 1, o.stride_h = 2, o.stride_w = 2;
    o.dilation_d_factor = o.dilation_h_factor = o.dilation_w_factor = 1;
    g.Output(g.Op(tfl::BuiltinOperator_CONV_3D_TRANSPOSE)
                 .In(shape, w, x)
                 .Options(o)
                 .Out("y", F32, {1, 3, 6, 6, 3}));
    add("conv3d_transpose", b);
  }
  {
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId shape = g.Constant<int32_t>("shape", {4}, {1, 8, 8, 3});
    TensorId w = g.Constant<float>("w", {3, 3, 3, 2}, Ramp(54));
    TensorId x = g.Input("x", F32, {1, 4, 4, 2});
    TensorId bias = g.Constant<float>("b", {3}, {0.1f, -0.2f, 0.3f});
    tfl::TransposeConvOptionsT o;
    o.padding = tfl::Padding_SAME;
    o.stride_h = o.stride_w = 2;
    g.Output(g.Op(tfl::BuiltinOperator_TRANSPOSE_CONV)
                 .In(shape, w, x, bias)
                 .Options(o)
                 .Out("y", F32, {1, 8, 8, 3}));
    add("transpose_conv", b);
  }
  {
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", F32, {1, 6, 6, 4});
    TensorId w = g.Constant<float>("w", {1, 3, 3, 4}, Ramp(36));
    tfl::DepthwiseConv2DOptionsT d;
    d.padding = tfl::Padding_SAME;
    d.stride_h = d.stride_w = 1;
    d.depth_multiplier = 1;
    d.dilation_h_factor = d.dilation_w_factor = 2;
    TensorId y = g.Op(tfl::BuiltinOperator_DEPTHWISE_CONV_2D)
                     .In(x, w, kNoTensor)
                     .Options(d)
                     .Out("y", F32, {1, 6, 6, 4});
    tfl::Pool2DOptionsT p;
    p.padding = tfl::Padding_VALID;
    p.stride_h = p.stride_w = 2;
    p.filter_height = p.filter_width = 2;
    TensorId z = g.Op(tfl::BuiltinOperator_AVERAGE_POOL_2D)
                     .In(y)
                     .Options(p)
                     .Out("z", F32, {1, 3, 3, 4});
    TensorId new_shape = g.Constant<int32_t>("new_shape", {2}, {1, 36});
    tfl::ReshapeOptionsT r;
    r.new_shape = {1, 36};
    TensorId flat = g.Op(tfl::BuiltinOperator_RESHAPE)
                        .In(z, new_shape)
                        .Options(r)
                        .Out("flat", F32, {1, 36});
    TensorId begin = g.Constant<int32_t>("begin", {2}, {0, 4});
    TensorId end = g.Constant<int32_t>("end", {2}, {1, 30});
    TensorId strides = g.Constant<int32_t>("strides", {2}, {1, 3});
    tfl::StridedSliceOptionsT s;
    g.Output(g.Op(tfl::BuiltinOperator_STRIDED_SLICE)
                 .In(flat, begin, end, strides)
                 .Options(s)
                 .Out("sliced", F32, {1, 9}));
    add("depthwise_pool_reshape_slice", b);
  }
  {
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", F32, {2, 3});
    TensorId idx = g.Constant<int32_t>("idx", {4}, {2, 0, 1, 2});
    tfl::GatherOptionsT go;
    go.axis = 1;
    TensorId y = g.Op(tfl::BuiltinOperator_GATHER)
                     .In(x, idx)
                     .Options(go)
                     .Out("y", F32, {2, 4});
    tfl::ConcatenationOptionsT c;
    c.axis = 0;
    TensorId z = g.Op(tfl::BuiltinOperator_CONCATENATION)
                     .In(y, y)
                     .Options(c)
                     .Out("z", F32, {4, 4});
    TensorId pads = g.Constant<int32_t>("pads", {2, 2}, {1, 0, 0, 2});
    g.Output(g.Op(tfl::BuiltinOperator_PAD).In(z, pads).Out("p", F32, {5, 6}));
    add("gather_concat_pad", b);
  }
  return out;
}

bool Write(const fs::path& path, absl::Span<const uint8_t> bytes) {
  const absl::Span<const uint8_t> pieces[] = {bytes};
  absl::Status s =
      WriteFileAtomically(path.string(), pieces, Durability::kAtomic);
  if (!s.ok()) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", std::string(s.message()).c_str());
  }
  return s.ok();
}

bool WriteModel(const fs::path& path, const Model& model) {
  absl::StatusOr<std::vector<uint8_t>> bytes = SerializeModel(model);
  if (!bytes.ok()) {
    std::fprintf(stderr, "make_fuzz_seeds: %s: %s\n", path.c_str(),
                 std::string(bytes.status().message()).c_str());
    return false;
  }
  if (bytes->size() > kMaxSeedBytes) return true;  // not a useful seed
  return Write(path, *bytes);
}

std::vector<uint8_t> Tagged(uint8_t tag, absl::Span<const uint8_t> bytes) {
  std::vector<uint8_t> out{tag};
  out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr,
                 "usage: make_fuzz_seeds SOURCE_DIR OUT_DIR EXAMPLE_PLUGIN "
                 "[XNNPACK_PLUGIN]\n");
    return 2;
  }
  const fs::path source = argv[1], out = argv[2];
  std::vector<std::pair<std::string, std::string>> vendors = {{"example", argv[3]}};
  if (argc == 5) vendors.emplace_back("xnnpack", argv[4]);
  for (const char* dir : {"models", "format", "example", "xnnpack"}) {
    std::error_code ec;
    fs::remove_all(out / dir, ec);
    fs::create_directories(out / dir);
  }

  std::vector<std::pair<std::string, Model>> models = BuilderModels();
  std::vector<fs::path> files;
  for (const fs::path dir : {source / "test_models", source / "test_models/generated"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".tflite" &&
          entry.file_size() <= kMaxSeedBytes) {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    absl::StatusOr<Model> m = LoadModel(file.string());
    if (!m.ok()) {
      std::fprintf(stderr, "make_fuzz_seeds: %s\n",
                   std::string(m.status().message()).c_str());
      return 1;
    }
    models.emplace_back(file.stem().string(), std::move(*m));
  }
  int written = 0;
  for (const auto& [name, model] : models) {
    if (!WriteModel(out / "models" / (name + ".tflite"), model)) return 1;
    ++written;
  }

  int format = 0;
  auto add_format = [&](uint8_t tag, absl::Span<const uint8_t> bytes) {
    return Write(out / "format" / absl::StrCat("seed_", format++), Tagged(tag, bytes));
  };
  for (const auto& [vendor, path] : vendors) {
    absl::StatusOr<std::unique_ptr<CompilerPlugin>> plugin = LoadCompilerPlugin(path);
    if (!plugin.ok()) {
      std::fprintf(stderr, "make_fuzz_seeds: %s\n",
                   std::string(plugin.status().message()).c_str());
      return 1;
    }
    CompilerPlugin* plugins[] = {plugin->get()};
    for (const auto& [name, original] : models) {
      absl::StatusOr<std::vector<uint8_t>> bytes = SerializeModel(original);
      if (!bytes.ok()) return 1;
      absl::StatusOr<Model> model =
          LoadModelFromBytes(Bytes::Own(std::move(*bytes)), name);
      if (!model.ok()) return 1;
      absl::StatusOr<ApplyReport> report =
          ApplyPlugins(*model, plugins, ApplyOptions());
      if (!report.ok() || report->ops_taken == 0) continue;
      const std::string file = absl::StrCat(name, "_", vendor, ".tflite");
      if (!WriteModel(out / vendor / file, *model) ||
          !WriteModel(out / "models" / file, *model)) {
        return 1;
      }
      absl::StatusOr<Manifest> manifest = ReadManifest(*model);
      if (manifest.ok() && !add_format(0, EncodeManifest(*manifest))) return 1;
      for (const tfl::OperatorT& op : model->subgraphs[0].ops) {
        if (IsDispatchOp(*model, op) && !add_format(1, op.custom_options)) {
          return 1;
        }
      }
    }
  }
  LiteRtDispatchOpOptions litert;
  litert.bytecode_offset = 4096;
  litert.bytecode_size = 1234;
  litert.name = "partition_0";
  if (!add_format(2, EncodeLiteRtDispatchOpOptions(litert))) return 1;
  litert.fallback_subgraph = 1;
  litert.module_buffer = 3;
  if (!add_format(2, EncodeLiteRtDispatchOpOptions(litert))) return 1;
  absl::StatusOr<std::vector<uint8_t>> stamp =
      EncodeLiteRtStamp({"IntelOpenVINO", "LNL"});
  if (!stamp.ok() || !add_format(3, *stamp)) return 1;
  std::printf("make_fuzz_seeds: %d models, %d format seeds in %s\n", written,
              format, out.c_str());
  return 0;
}
