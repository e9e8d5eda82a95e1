// libgraft: the app C API (c_api/graft_app.h) over graft::Runtime,
// on-device compile and the apply pipeline. The header is the spec; this
// file only converts between its plain C values and the C++ layers, and
// keeps C++ (exceptions included) from crossing the boundary.
#include "graft_app.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/bytes.h"
#include "core/model_io.h"
#include "core/status.h"
#include "dispatch/runtime.h"
#include "plugins/apply.h"
#include "plugins/on_device.h"
#include "tools/apply_cmd.h"
#include "tools/json_writer.h"

#ifndef GRAFT_VERSION
#error "GRAFT_VERSION must be defined by the build"
#endif

namespace {

using graft::tools::JsonWriter;
namespace tfl = ::graft::tfl;

// ---------------------------------------------------------------------------
// Statuses: one allocation holding the struct and its message, freed by its
// own release, as ownership rule 4 asks. The C struct is the base, so the
// pointer the caller holds converts back with a static_cast.

struct OwnedStatus : graft_status_t {
  std::string text;
};

void ReleaseStatus(graft_status_t* status) {
  delete static_cast<OwnedStatus*>(status);
}

graft_status_t kOutOfMemory = GRAFT_STATUS_INITIALIZER(
    GRAFT_STATUS_RESOURCE_EXHAUSTED, "graft: out of memory");

graft_status_t* MakeStatus(const absl::Status& st) {
  if (st.ok()) return nullptr;
  auto* owned = new (std::nothrow) OwnedStatus;
  if (owned == nullptr) return &kOutOfMemory;
  try {
    owned->text = std::string(st.message());
  } catch (...) {
    delete owned;
    return &kOutOfMemory;
  }
  owned->struct_size = sizeof(graft_status_t);
  owned->code = static_cast<graft_status_code_t>(st.code());
  owned->message = owned->text.c_str();
  owned->release = ReleaseStatus;
  return owned;
}

// Runs `body` (returning absl::Status) and converts its result; anything
// thrown (std::bad_alloc from a container) becomes a status too.
template <typename F>
graft_status_t* Guard(F&& body) {
  try {
    return MakeStatus(body());
  } catch (const std::bad_alloc&) {
    return &kOutOfMemory;
  } catch (const std::exception& e) {
    return MakeStatus(absl::InternalError(absl::StrCat("graft: ", e.what())));
  } catch (...) {
    return MakeStatus(absl::InternalError("graft: unknown exception"));
  }
}

absl::Status NullArgument(const char* what) {
  return absl::InvalidArgumentError(absl::StrCat("graft: ", what, " is NULL"));
}

// Copies a caller's extensible struct into a zeroed one of this library's
// size, so members the caller was compiled without read as their defaults.
template <typename T>
absl::Status ReadOptions(const T* in, T* out, const char* what) {
  std::memset(out, 0, sizeof(T));
  out->struct_size = sizeof(T);
  if (in == nullptr) return absl::OkStatus();
  if (in->struct_size < sizeof(size_t)) {
    return absl::InvalidArgumentError(
        absl::StrCat("graft: ", what, ".struct_size is ", in->struct_size,
                     " (set it with ", what, "_init)"));
  }
  std::memcpy(out, in, std::min(in->struct_size, sizeof(T)));
  out->struct_size = sizeof(T);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> Strings(const char* const* items,
                                                 size_t count,
                                                 const char* what) {
  std::vector<std::string> out;
  if (count != 0 && items == nullptr) return NullArgument(what);
  for (size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("graft: ", what, "[", i, "] is NULL"));
    }
    out.emplace_back(items[i]);
  }
  return out;
}

std::string DefaultVendorDirOnce() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&graft_version), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  std::error_code ec;
  std::filesystem::path lib =
      std::filesystem::canonical(info.dli_fname, ec).parent_path();
  if (ec) return "";
  // Installed: <prefix>/lib/libgraft.so and <prefix>/lib/graft/vendors/; a
  // build tree: libgraft.so and vendor_libs/ at the build root.
  for (const char* sub : {"graft/vendors", "vendor_libs"}) {
    if (std::filesystem::is_directory(lib / sub, ec))
      return (lib / sub).string();
  }
  return "";
}

const std::string& DefaultVendorDir() {
  static const std::string* dir = new std::string(DefaultVendorDirOnce());
  return *dir;
}

}  // namespace

// ---------------------------------------------------------------------------
// The opaque objects.

struct graft_signature_t {
  graft_model_t* model = nullptr;
  graft::Signature* sig = nullptr;
  // The model's tensors behind the inputs and outputs, for their declared
  // shapes (shape_signature).
  graft::SubgraphId subgraph = 0;
  std::vector<graft::TensorId> input_tensors, output_tensors;

  // One slot per input and output, refilled at each get_*_info.
  struct InfoSlot {
    graft_tensor_info_t info;
    std::vector<int64_t> dims, dims_signature, zero_points;
    graft_quantization_t quantization;
  };
  std::vector<InfoSlot> input_info, output_info;
};

struct graft_model_t {
  std::unique_ptr<graft::Runtime> runtime;
  graft_signature_t main;
  std::vector<std::unique_ptr<graft_signature_t>> signatures;
  bool profiling = false;

  // On-device compile.
  bool compiled_on_device = false;
  bool cache_hit = false;
  std::string cache_path, compile_summary;
  std::vector<std::string> skipped_plugins;

  // What get_report and get_profile lend out.
  graft_model_report_t report;
  std::vector<std::string> warnings;
  std::vector<const char*> warning_ptrs;
  std::string report_json;
  graft_profile_t profile;
  std::string profile_json, profile_text;
};

// graft_apply's report and the storage its pointers point into; the C
// struct is the base, as for statuses.
struct ApplyReportOwner : graft_apply_report_t {
  std::vector<graft_apply_op_t> ops;
  std::vector<std::string> names, taken_by, refusals;
  std::vector<std::string> skipped;
  std::vector<const char*> skipped_ptrs;
  std::string summary, json;
};

namespace {

void InitSignature(graft_model_t* model, graft::Signature* sig,
                   graft::SubgraphId subgraph,
                   std::vector<graft::TensorId> inputs,
                   std::vector<graft::TensorId> outputs,
                   graft_signature_t* out) {
  out->model = model;
  out->sig = sig;
  out->subgraph = subgraph;
  out->input_tensors = std::move(inputs);
  out->output_tensors = std::move(outputs);
  out->input_info.resize(sig->num_inputs());
  out->output_info.resize(sig->num_outputs());
}

// Wires the C objects to the loaded runtime.
void BuildSignatures(graft_model_t* m) {
  const graft::Model& model = m->runtime->model();
  const graft::Subgraph& sg0 = model.subgraphs[0];
  InitSignature(m, m->runtime->main(), 0, sg0.inputs, sg0.outputs, &m->main);
  for (size_t i = 0; i < m->runtime->num_signatures(); ++i) {
    const tfl::SignatureDefT& def = model.signature_defs[i];
    std::vector<graft::TensorId> in, out;
    for (const auto& t : def.inputs) in.push_back(t->tensor_index);
    for (const auto& t : def.outputs) out.push_back(t->tensor_index);
    auto s = std::make_unique<graft_signature_t>();
    InitSignature(m, m->runtime->signature(i), def.subgraph_index,
                  std::move(in), std::move(out), s.get());
    m->signatures.push_back(std::move(s));
  }
}

void FillInfo(graft_signature_t* s, const std::string& name,
              const graft::Tensor& t, graft::TensorId id,
              graft_signature_t::InfoSlot* slot) {
  slot->dims.assign(t.shape.begin(), t.shape.end());
  slot->dims_signature = slot->dims;
  const graft::Model& model = s->model->runtime->model();
  const auto& tensors = model.subgraphs[s->subgraph].tensors;
  if (id >= 0 && static_cast<size_t>(id) < tensors.size() &&
      tensors[id].shape_signature.size() == slot->dims.size()) {
    slot->dims_signature.assign(tensors[id].shape_signature.begin(),
                                tensors[id].shape_signature.end());
  }
  graft_tensor_info_t& info = slot->info;
  std::memset(&info, 0, sizeof(info));
  info.struct_size = sizeof(info);
  info.name = name.c_str();
  info.element_type = static_cast<graft_element_type_t>(t.type);
  info.dims = slot->dims.data();
  info.num_dims = slot->dims.size();
  info.dims_signature = slot->dims_signature.data();
  info.byte_size = t.bytes;
  const tfl::QuantizationParametersT* q = t.quantization;
  if (q != nullptr &&
      (!q->scale.empty() || q->details.type != tfl::QuantizationDetails_NONE)) {
    graft_quantization_t& qv = slot->quantization;
    std::memset(&qv, 0, sizeof(qv));
    qv.struct_size = sizeof(qv);
    qv.blockwise_scales_tensor = -1;
    qv.blockwise_zero_points_tensor = -1;
    if (q->details.type != tfl::QuantizationDetails_NONE) {
      // Blockwise and custom schemes refer to other tensors of the model;
      // apps see them as "other".
      qv.kind = GRAFT_QUANTIZATION_KIND_OTHER;
    } else {
      qv.kind = q->scale.size() == 1 ? GRAFT_QUANTIZATION_KIND_PER_TENSOR
                                     : GRAFT_QUANTIZATION_KIND_PER_CHANNEL;
      if (qv.kind == GRAFT_QUANTIZATION_KIND_PER_CHANNEL) {
        qv.quantized_dimension = q->quantized_dimension;
      }
      slot->zero_points.assign(q->scale.size(), 0);
      for (size_t i = 0; i < q->zero_point.size() && i < q->scale.size(); ++i) {
        slot->zero_points[i] = q->zero_point[i];
      }
      qv.scales = q->scale.data();
      qv.num_scales = q->scale.size();
      qv.zero_points = slot->zero_points.data();
      qv.num_zero_points = slot->zero_points.size();
    }
    info.quantization = &qv;
  }
}

absl::Status OutOfRange(const char* what, size_t index, size_t count) {
  return absl::OutOfRangeError(absl::StrCat(
      "graft: ", what, " ", index, " out of range (", count, " ", what, "s)"));
}

void OpsJson(const graft::SubgraphReport& r, JsonWriter& j) {
  j.BeginObject().Key("subgraph").Int(r.subgraph).Key("name").String(r.name);
  j.Key("arena_bytes").UInt(r.arena_bytes).Key("ops").BeginArray();
  for (const graft::OpReport& o : r.ops) {
    j.BeginObject().Key("op").Int(o.op_index).Key("name").String(o.op_name);
    j.Key("where").String(graft::WhereName(o.where));
    j.Key("detail").String(o.detail);
    if (!o.callee.empty()) {
      j.Key("callee").BeginArray();
      for (const graft::SubgraphReport& c : o.callee) OpsJson(c, j);
      j.EndArray();
    }
    j.EndObject();
  }
  j.EndArray().EndObject();
}

absl::Status LoadInto(graft_model_t* m, const char* path, graft::Model* memory,
                      const graft_model_options_t* options_in) {
  graft_model_options_t o;
  GRAFT_RETURN_IF_ERROR(ReadOptions(options_in, &o, "graft_model_options"));
  graft::RuntimeOptions ro;
  ro.num_threads = o.num_threads > 0 ? o.num_threads : 1;
  switch (o.fallback_policy) {
    case GRAFT_FALLBACK_POLICY_ALLOW_CPU:
      ro.policy = graft::AcceleratorPolicy::kAllowCpuFallback;
      break;
    case GRAFT_FALLBACK_POLICY_REQUIRE_VENDOR_OPS:
      ro.policy = graft::AcceleratorPolicy::kRequireVendorOps;
      break;
    case GRAFT_FALLBACK_POLICY_REQUIRE_ACCELERATOR:
      ro.policy = graft::AcceleratorPolicy::kRequireAccelerator;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("graft: unknown fallback_policy ", o.fallback_policy));
  }
  ro.profiling = (o.flags & GRAFT_MODEL_FLAG_PROFILING) != 0;
  m->profiling = ro.profiling;
  GRAFT_ASSIGN_OR_RETURN(
      ro.dispatch_dirs,
      Strings(o.dispatch_dirs, o.num_dispatch_dirs, "dispatch_dirs"));
  for (const std::string& dir : ro.dispatch_dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      // A mistyped directory would otherwise run everything on the CPU.
      return absl::NotFoundError(absl::StrCat("graft: dispatch directory ", dir,
                                              ": no such directory"));
    }
  }
  if (ro.dispatch_dirs.empty() &&
      (o.flags & GRAFT_MODEL_FLAG_NO_DEFAULT_DISPATCH_DIR) == 0 &&
      !DefaultVendorDir().empty()) {
    ro.dispatch_dirs.push_back(DefaultVendorDir());
  }
  GRAFT_ASSIGN_OR_RETURN(
      ro.dispatch_paths,
      Strings(o.dispatch_paths, o.num_dispatch_paths, "dispatch_paths"));
  GRAFT_ASSIGN_OR_RETURN(std::vector<std::string> vendors,
                         Strings(o.vendors, o.num_vendors, "vendors"));
  ro.vendor_priority = vendors;
  GRAFT_ASSIGN_OR_RETURN(
      std::vector<std::string> plugin_options,
      Strings(o.plugin_options, o.num_plugin_options, "plugin_options"));

  absl::StatusOr<std::unique_ptr<graft::Runtime>> runtime;
  if (o.plugin_dir != nullptr) {
    if (path == nullptr) {
      return absl::InvalidArgumentError(
          "graft: on-device compile (plugin_dir) needs a model file; "
          "graft_model_create_from_memory cannot compile");
    }
    graft::OnDeviceOptions od;
    od.plugin_dir = o.plugin_dir;
    if (o.cache_dir != nullptr) od.cache_dir = o.cache_dir;
    if (o.soc_model != nullptr) od.soc_model = o.soc_model;
    od.vendors = vendors;
    for (const std::string& kv : plugin_options) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("graft: plugin option '", kv, "' is not KEY=VALUE"));
      }
      od.plugin_options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    GRAFT_ASSIGN_OR_RETURN(graft::OnDeviceResult compiled,
                           graft::CompileOnDevice(path, od));
    m->compiled_on_device = true;
    m->cache_hit = compiled.cache_hit;
    m->cache_path = compiled.cache_path;
    m->compile_summary = compiled.summary;
    m->skipped_plugins = compiled.skipped;
    runtime = graft::Runtime::LoadModel(std::move(compiled.model), ro);
  } else if (path != nullptr) {
    runtime = graft::Runtime::Load(path, ro);
  } else {
    runtime = graft::Runtime::LoadModel(std::move(*memory), ro);
  }
  if (!runtime.ok()) return runtime.status();
  m->runtime = *std::move(runtime);
  BuildSignatures(m);
  return absl::OkStatus();
}

graft_status_t* CreateModel(const char* path, graft::Model* memory,
                            const graft_model_options_t* options,
                            graft_model_t** out_model) {
  return Guard([&]() -> absl::Status {
    if (out_model == nullptr) return NullArgument("out_model");
    auto m = std::make_unique<graft_model_t>();
    GRAFT_RETURN_IF_ERROR(LoadInto(m.get(), path, memory, options));
    *out_model = m.release();
    return absl::OkStatus();
  });
}

graft_status_t* TensorInfo(graft_signature_t* sig, size_t index, bool input,
                           const graft_tensor_info_t** out_info) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    if (out_info == nullptr) return NullArgument("out_info");
    const size_t count =
        input ? sig->sig->num_inputs() : sig->sig->num_outputs();
    if (index >= count) {
      return OutOfRange(input ? "input" : "output", index, count);
    }
    graft::Tensor* t = input ? sig->sig->input(index) : sig->sig->output(index);
    auto& slot = input ? sig->input_info[index] : sig->output_info[index];
    FillInfo(sig,
             input ? sig->sig->input_name(index) : sig->sig->output_name(index),
             *t, input ? sig->input_tensors[index] : sig->output_tensors[index],
             &slot);
    *out_info = &slot.info;
    return absl::OkStatus();
  });
}

graft_status_t* FindName(const graft_signature_t* sig, const char* name,
                         bool input, size_t* out_index) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    if (name == nullptr) return NullArgument("name");
    if (out_index == nullptr) return NullArgument("out_index");
    const size_t count =
        input ? sig->sig->num_inputs() : sig->sig->num_outputs();
    std::vector<std::string> names;
    for (size_t i = 0; i < count; ++i) {
      const std::string& n =
          input ? sig->sig->input_name(i) : sig->sig->output_name(i);
      if (n == name) {
        *out_index = i;
        return absl::OkStatus();
      }
      names.push_back(absl::StrCat("'", n, "'"));
    }
    return absl::NotFoundError(absl::StrCat(
        "graft: ", graft_signature_key(sig)[0] ? "signature '" : "",
        graft_signature_key(sig),
        graft_signature_key(sig)[0] ? "'" : "subgraph 0", " has no ",
        input ? "input" : "output", " '", name, "'; its ",
        input ? "inputs" : "outputs", ": ", absl::StrJoin(names, ", ")));
  });
}

graft_status_t* Bind(graft_signature_t* sig, size_t index, void* data,
                     size_t size, bool input) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    return input ? sig->sig->BindInput(index, data, size)
                 : sig->sig->BindOutput(index, data, size);
  });
}

}  // namespace

// ---------------------------------------------------------------------------
// The exported functions, in header order.

extern "C" {

uint32_t graft_app_api_version(void) { return GRAFT_APP_API_VERSION; }

const char* graft_version(void) { return GRAFT_VERSION; }

const char* graft_default_vendor_dir(void) {
  try {
    return DefaultVendorDir().c_str();
  } catch (...) {
    return "";
  }
}

graft_status_t* graft_model_create_from_file(
    const char* path, const graft_model_options_t* options,
    graft_model_t** out_model) {
  if (path == nullptr) return MakeStatus(NullArgument("path"));
  return CreateModel(path, nullptr, options, out_model);
}

graft_status_t* graft_model_create_from_memory(
    const void* data, size_t size, const char* name,
    const graft_model_options_t* options, graft_model_t** out_model) {
  return Guard([&]() -> absl::Status {
    if (data == nullptr) return NullArgument("data");
    graft_model_options_t o;
    GRAFT_RETURN_IF_ERROR(ReadOptions(options, &o, "graft_model_options"));
    if (o.plugin_dir != nullptr) {
      // Checked before copying and parsing what may be a large model.
      return absl::InvalidArgumentError(
          "graft: on-device compile (plugin_dir) needs a model file; "
          "graft_model_create_from_memory cannot compile");
    }
    // 64-byte aligned, as bytecode and external buffers are in a file.
    void* copy = std::aligned_alloc(64, (size + 63) / 64 * 64);
    if (copy == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("graft: cannot allocate ", size, " bytes"));
    }
    std::memcpy(copy, data, size);
    std::shared_ptr<const void> owner(copy, std::free);
    graft::Bytes bytes = graft::Bytes::View(
        {static_cast<const uint8_t*>(copy), size}, std::move(owner));
    GRAFT_ASSIGN_OR_RETURN(
        graft::Model model,
        graft::LoadModelFromBytes(std::move(bytes),
                                  name != nullptr ? name : "<memory>"));
    graft_status_t* st = CreateModel(nullptr, &model, options, out_model);
    if (st == nullptr) return absl::OkStatus();
    absl::Status converted(static_cast<absl::StatusCode>(st->code),
                           st->message);
    graft_status_release(st);
    return converted;
  });
}

void graft_model_destroy(graft_model_t* model) { delete model; }

size_t graft_model_signature_count(const graft_model_t* model) {
  return model == nullptr ? 0 : model->signatures.size();
}

graft_status_t* graft_model_get_signature(graft_model_t* model, size_t index,
                                          graft_signature_t** out_signature) {
  return Guard([&]() -> absl::Status {
    if (model == nullptr) return NullArgument("model");
    if (out_signature == nullptr) return NullArgument("out_signature");
    if (index >= model->signatures.size()) {
      return OutOfRange("signature", index, model->signatures.size());
    }
    *out_signature = model->signatures[index].get();
    return absl::OkStatus();
  });
}

graft_status_t* graft_model_find_signature(graft_model_t* model,
                                           const char* key,
                                           graft_signature_t** out_signature) {
  return Guard([&]() -> absl::Status {
    if (model == nullptr) return NullArgument("model");
    if (out_signature == nullptr) return NullArgument("out_signature");
    if (key == nullptr || key[0] == '\0') {
      *out_signature = &model->main;
      return absl::OkStatus();
    }
    std::vector<std::string> keys;
    for (auto& s : model->signatures) {
      if (s->sig->key() == key) {
        *out_signature = s.get();
        return absl::OkStatus();
      }
      keys.push_back(absl::StrCat("'", s->sig->key(), "'"));
    }
    return absl::NotFoundError(absl::StrCat(
        "graft: the model has no signature '", key, "'; ",
        keys.empty()
            ? "it has none (use NULL for subgraph 0)"
            : absl::StrCat("its signatures: ", absl::StrJoin(keys, ", "))));
  });
}

const char* graft_signature_key(const graft_signature_t* sig) {
  return sig == nullptr ? "" : sig->sig->key().c_str();
}

size_t graft_signature_input_count(const graft_signature_t* sig) {
  return sig == nullptr ? 0 : sig->sig->num_inputs();
}

size_t graft_signature_output_count(const graft_signature_t* sig) {
  return sig == nullptr ? 0 : sig->sig->num_outputs();
}

graft_status_t* graft_signature_find_input(const graft_signature_t* sig,
                                           const char* name,
                                           size_t* out_index) {
  return FindName(sig, name, /*input=*/true, out_index);
}

graft_status_t* graft_signature_find_output(const graft_signature_t* sig,
                                            const char* name,
                                            size_t* out_index) {
  return FindName(sig, name, /*input=*/false, out_index);
}

graft_status_t* graft_signature_get_input_info(
    graft_signature_t* sig, size_t index,
    const graft_tensor_info_t** out_info) {
  return TensorInfo(sig, index, /*input=*/true, out_info);
}

graft_status_t* graft_signature_get_output_info(
    graft_signature_t* sig, size_t index,
    const graft_tensor_info_t** out_info) {
  return TensorInfo(sig, index, /*input=*/false, out_info);
}

graft_status_t* graft_signature_resize_input(graft_signature_t* sig,
                                             size_t index, const int64_t* dims,
                                             size_t num_dims) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    if (num_dims != 0 && dims == nullptr) return NullArgument("dims");
    const size_t count = sig->sig->num_inputs();
    if (index >= count) return OutOfRange("input", index, count);
    std::vector<graft::Shape> shapes;
    for (size_t i = 0; i < count; ++i)
      shapes.push_back(sig->sig->input(i)->shape);
    graft::Shape wanted;
    for (size_t d = 0; d < num_dims; ++d) {
      if (dims[d] < 0 || dims[d] > INT32_MAX) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graft: input ", index, " ('", sig->sig->input_name(index),
            "'): dimension ", d, " is ", dims[d]));
      }
      wanted.push_back(static_cast<int32_t>(dims[d]));
    }
    shapes[index] = wanted;
    return sig->sig->ResizeInputs(shapes);
  });
}

graft_status_t* graft_signature_set_input(graft_signature_t* sig, size_t index,
                                          const void* data, size_t size) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    if (data == nullptr && size != 0) return NullArgument("data");
    return sig->sig->SetInputData(index,
                                  {static_cast<const uint8_t*>(data), size});
  });
}

graft_status_t* graft_signature_get_input_buffer(graft_signature_t* sig,
                                                 size_t index, void** out_data,
                                                 size_t* out_size) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    if (out_data == nullptr || out_size == nullptr) {
      return NullArgument("out_data or out_size");
    }
    graft::Tensor* t = sig->sig->input(index);
    if (t == nullptr) return OutOfRange("input", index, sig->sig->num_inputs());
    *out_data = t->raw_data;
    *out_size = t->bytes;
    return absl::OkStatus();
  });
}

graft_status_t* graft_signature_get_output_buffer(graft_signature_t* sig,
                                                  size_t index,
                                                  const void** out_data,
                                                  size_t* out_size) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    if (out_data == nullptr || out_size == nullptr) {
      return NullArgument("out_data or out_size");
    }
    graft::Tensor* t = sig->sig->output(index);
    if (t == nullptr) {
      return OutOfRange("output", index, sig->sig->num_outputs());
    }
    *out_data = t->raw_data;
    *out_size = t->bytes;
    return absl::OkStatus();
  });
}

graft_status_t* graft_signature_bind_input(graft_signature_t* sig, size_t index,
                                           void* data, size_t size) {
  return Bind(sig, index, data, size, /*input=*/true);
}

graft_status_t* graft_signature_bind_output(graft_signature_t* sig,
                                            size_t index, void* data,
                                            size_t size) {
  return Bind(sig, index, data, size, /*input=*/false);
}

graft_status_t* graft_signature_invoke(graft_signature_t* sig) {
  return Guard([&]() -> absl::Status {
    if (sig == nullptr) return NullArgument("signature");
    return sig->sig->Invoke();
  });
}

graft_status_t* graft_model_get_report(
    graft_model_t* model, const graft_model_report_t** out_report) {
  return Guard([&]() -> absl::Status {
    if (model == nullptr) return NullArgument("model");
    if (out_report == nullptr) return NullArgument("out_report");
    using Where = graft::OpReport::Where;
    const graft::RuntimeReport r = model->runtime->Report();
    model->warnings = r.warnings;
    for (const std::string& s : model->skipped_plugins) {
      model->warnings.push_back(absl::StrCat("plugin skipped: ", s));
    }
    model->warning_ptrs.clear();
    for (const std::string& w : model->warnings) {
      model->warning_ptrs.push_back(w.c_str());
    }
    JsonWriter j(0);
    j.BeginObject().Key("placement").BeginObject();
    for (Where w : {Where::kCpu, Where::kFolded, Where::kVendor, Where::kCall,
                    Where::kFallback}) {
      j.Key(graft::WhereName(w)).Int(r.CountOps(w));
    }
    j.EndObject().Key("subgraphs").BeginArray();
    for (const graft::SubgraphReport& s : r.subgraphs) OpsJson(s, j);
    j.EndArray().Key("warnings").BeginArray();
    for (const std::string& w : model->warnings) j.String(w);
    j.EndArray().Key("on_device_compile");
    if (model->compiled_on_device) {
      j.BeginObject().Key("cache_hit").Bool(model->cache_hit);
      j.Key("cache_path").String(model->cache_path);
      j.Key("summary").String(model->compile_summary).EndObject();
    } else {
      j.Null();
    }
    j.EndObject();
    model->report_json = j.TakeOutput();

    graft_model_report_t& out = model->report;
    std::memset(&out, 0, sizeof(out));
    out.struct_size = sizeof(out);
    out.ops_cpu = r.CountOps(Where::kCpu);
    out.ops_folded = r.CountOps(Where::kFolded);
    out.ops_vendor = r.CountOps(Where::kVendor);
    out.ops_fallback = r.CountOps(Where::kFallback);
    out.ops_call = r.CountOps(Where::kCall);
    out.compiled_on_device = model->compiled_on_device;
    out.compile_cache_hit = model->cache_hit;
    out.warnings = model->warning_ptrs.data();
    out.num_warnings = model->warning_ptrs.size();
    out.json = model->report_json.c_str();
    *out_report = &out;
    return absl::OkStatus();
  });
}

graft_status_t* graft_model_get_profile(graft_model_t* model,
                                        const graft_profile_t** out_profile) {
  return Guard([&]() -> absl::Status {
    if (model == nullptr) return NullArgument("model");
    if (out_profile == nullptr) return NullArgument("out_profile");
    if (!model->profiling) {
      return absl::FailedPreconditionError(
          "graft: the model was loaded without GRAFT_MODEL_FLAG_PROFILING");
    }
    const graft::RuntimeProfile p = model->runtime->Profile();
    graft_profile_t& out = model->profile;
    std::memset(&out, 0, sizeof(out));
    out.struct_size = sizeof(out);
    JsonWriter j(0);
    j.BeginObject().Key("subgraphs").BeginArray();
    for (const graft::SubgraphProfile& s : p.subgraphs) {
      out.runs += s.runs;
      out.total_ns += s.total_ns;
      j.BeginObject()
          .Key("subgraph")
          .Int(s.subgraph)
          .Key("name")
          .String(s.name);
      j.Key("runs").Int(s.runs).Key("total_ns").Int(s.total_ns);
      j.Key("median_ns").Int(s.median_ns).Key("ops").BeginArray();
      for (const graft::OpProfile& o : s.ops) {
        j.BeginObject()
            .Key("subgraph")
            .Int(o.subgraph)
            .Key("op")
            .Int(o.op_index);
        j.Key("name").String(o.name).Key("where").String(
            graft::WhereName(o.where));
        j.Key("detail").String(o.detail).Key("depth").Int(o.depth);
        j.Key("calls").Int(o.calls).Key("total_ns").Int(o.total_ns);
        j.Key("median_ns").Int(o.median_ns);
        j.Key("vendor_total_ns").Int(o.vendor_total_ns).EndObject();
      }
      j.EndArray().EndObject();
    }
    j.EndArray().EndObject();
    model->profile_json = j.TakeOutput();
    model->profile_text = p.ToString();
    out.json = model->profile_json.c_str();
    out.text = model->profile_text.c_str();
    *out_profile = &out;
    return absl::OkStatus();
  });
}

void graft_model_reset_profile(graft_model_t* model) {
  if (model != nullptr) model->runtime->ResetProfile();
}

graft_status_t* graft_apply(const char* model_path, const char* output_path,
                            const graft_apply_options_t* options_in,
                            graft_apply_report_t** out_report) {
  return Guard([&]() -> absl::Status {
    if (model_path == nullptr) return NullArgument("model_path");
    if (output_path == nullptr) return NullArgument("output_path");
    graft_apply_options_t o;
    GRAFT_RETURN_IF_ERROR(ReadOptions(options_in, &o, "graft_apply_options"));
    graft::ApplyOptions apply;
    switch (o.mode) {
      case GRAFT_APPLY_MODE_APPLY:
        apply.mode = graft::ApplyMode::kApply;
        break;
      case GRAFT_APPLY_MODE_PARTITION:
        apply.mode = graft::ApplyMode::kPartition;
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("graft: unknown apply mode ", o.mode));
    }
    if (o.soc_model != nullptr) apply.soc_model = o.soc_model;

    graft::tools::PluginSelection sel;
    sel.plugin_dir =
        o.plugin_dir != nullptr ? o.plugin_dir : DefaultVendorDir();
    GRAFT_ASSIGN_OR_RETURN(
        std::vector<std::string> paths,
        Strings(o.plugin_paths, o.num_plugin_paths, "plugin_paths"));
    GRAFT_ASSIGN_OR_RETURN(std::vector<std::string> vendors,
                           Strings(o.vendors, o.num_vendors, "vendors"));
    for (const std::string& s : paths) {
      if (s.find(',') != std::string::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("graft: plugin path '", s, "' holds a ','"));
      }
    }
    sel.plugin_paths = absl::StrJoin(paths, ",");
    sel.vendors = absl::StrJoin(vendors, ",");
    GRAFT_ASSIGN_OR_RETURN(
        sel.plugin_options,
        Strings(o.plugin_options, o.num_plugin_options, "plugin_options"));
    if (paths.empty() && sel.plugin_dir.empty()) {
      return absl::NotFoundError(
          "graft: no plugin directory: set plugin_dir or plugin_paths (this "
          "libgraft has no installed vendor directory)");
    }

    GRAFT_ASSIGN_OR_RETURN(graft::Model model, graft::LoadModel(model_path));
    GRAFT_ASSIGN_OR_RETURN(graft::tools::LoadedPlugins loaded,
                           graft::tools::LoadPlugins(sel));
    if (loaded.plugins.empty()) {
      return absl::NotFoundError(
          absl::StrCat("graft: no usable compiler plugin in ",
                       paths.empty() ? sel.plugin_dir : sel.plugin_paths,
                       loaded.skipped.empty() ? "" : " (skipped: ",
                       absl::StrJoin(loaded.skipped, "; "),
                       loaded.skipped.empty() ? "" : ")"));
    }
    std::vector<graft::CompilerPlugin*> raw;
    for (auto& p : loaded.plugins) raw.push_back(p.get());
    absl::StatusOr<graft::ApplyReport> report =
        graft::ApplyPlugins(model, raw, apply);
    if (!report.ok()) {
      return absl::Status(
          report.status().code(),
          absl::StrCat(model_path, ": ", report.status().message()));
    }
    GRAFT_RETURN_IF_ERROR(graft::SaveModel(model, output_path));
    if (out_report == nullptr) return absl::OkStatus();

    auto owner = std::make_unique<ApplyReportOwner>();
    const graft::ApplyReport& r = *report;
    const size_t n = r.ops.size();
    owner->names.reserve(n);
    owner->taken_by.reserve(n);
    owner->refusals.reserve(n);
    JsonWriter j(0);
    j.BeginObject().Key("model").String(model_path);
    j.Key("output").String(output_path).Key("plugins").BeginArray();
    for (const auto& p : r.plugins) {
      j.BeginObject().Key("vendor").String(p.vendor);
      j.Key("plugin_version").String(p.plugin_version);
      j.Key("soc_model").String(p.soc_model).Key("path").String(p.path);
      j.EndObject();
    }
    j.EndArray().Key("ops_total").Int(r.ops_total);
    j.Key("ops_taken").Int(r.ops_taken);
    j.Key("bytecode_bytes").Int(r.bytecode_bytes);
    j.Key("seconds").Double(r.seconds).Key("partitions").BeginArray();
    for (const graft::PartitionReport& p : r.partitions) {
      j.BeginObject().Key("vendor").String(p.vendor);
      j.Key("source_subgraph").Int(p.source_subgraph).Key("ops").BeginArray();
      for (graft::OpId op : p.ops) j.Int(op);
      j.EndArray();
      if (!p.entry_point.empty()) {
        j.Key("entry_point").String(p.entry_point).Key("module").Int(p.module);
      }
      j.EndObject();
    }
    j.EndArray().Key("ops").BeginArray();
    for (const graft::OpApplyReport& op : r.ops) {
      std::vector<std::string> why;
      j.BeginObject().Key("subgraph").Int(op.subgraph).Key("op").Int(op.op);
      j.Key("name").String(op.name).Key("taken_by");
      if (op.taken_by.empty()) {
        j.Null();
      } else {
        j.String(op.taken_by).Key("partition").Int(op.partition);
      }
      j.Key("refusals").BeginArray();
      for (const auto& f : op.refusals) {
        const char* code = graft::PartitionReasonName(f.reason_code);
        j.BeginObject().Key("vendor").String(f.vendor);
        j.Key("reason_code").String(code).Key("reason").String(f.reason);
        j.EndObject();
        why.push_back(absl::StrCat(f.vendor, ": ", code,
                                   f.reason.empty() ? "" : ": ", f.reason));
      }
      j.EndArray().EndObject();
      owner->names.push_back(op.name);
      owner->taken_by.push_back(op.taken_by);
      owner->refusals.push_back(absl::StrJoin(why, "; "));
      graft_apply_op_t rec;
      std::memset(&rec, 0, sizeof(rec));
      rec.subgraph = op.subgraph;
      rec.op = op.op;
      rec.name = owner->names.back().c_str();
      rec.taken_by = owner->taken_by.back().c_str();
      rec.partition = op.partition;
      rec.refusals = owner->refusals.back().c_str();
      owner->ops.push_back(rec);
    }
    j.EndArray().EndObject();
    owner->json = j.TakeOutput();
    owner->summary = r.Summary();
    owner->skipped = loaded.skipped;
    for (const std::string& s : owner->skipped) {
      owner->skipped_ptrs.push_back(s.c_str());
    }
    graft_apply_report_t& out = *owner;
    std::memset(&out, 0, sizeof(out));
    out.struct_size = sizeof(out);
    out.ops_total = r.ops_total;
    out.ops_taken = r.ops_taken;
    out.num_partitions = static_cast<int64_t>(r.partitions.size());
    out.num_modules = static_cast<int64_t>(r.modules.size());
    out.bytecode_bytes = r.bytecode_bytes;
    out.seconds = r.seconds;
    out.ops = owner->ops.data();
    out.num_ops = owner->ops.size();
    out.skipped_plugins = owner->skipped_ptrs.data();
    out.num_skipped_plugins = owner->skipped_ptrs.size();
    out.summary = owner->summary.c_str();
    out.json = owner->json.c_str();
    *out_report = owner.release();
    return absl::OkStatus();
  });
}

void graft_apply_report_destroy(graft_apply_report_t* report) {
  delete static_cast<ApplyReportOwner*>(report);
}

}  // extern "C"
