#include "dispatch/resource_variables.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dispatch/memory_planner.h"

namespace graft {

void ResourceVariables::FreeDeleter::operator()(uint8_t* p) const {
  std::free(p);
}

ResourceVariables::ResourceVariables() = default;
ResourceVariables::~ResourceVariables() = default;

int32_t ResourceVariables::Handle(absl::string_view container,
                                  absl::string_view shared_name) {
  for (size_t i = 0; i < variables_.size(); ++i) {
    const ResourceVariable& v = *variables_[i];
    if (v.container == container && v.shared_name == shared_name) {
      return static_cast<int32_t>(i);
    }
  }
  auto v = std::make_unique<ResourceVariable>();
  v->container = std::string(container);
  v->shared_name = std::string(shared_name);
  variables_.push_back(std::move(v));
  return static_cast<int32_t>(variables_.size() - 1);
}

ResourceVariable* ResourceVariables::Get(int32_t id) {
  if (id < 0 || static_cast<size_t>(id) >= variables_.size()) return nullptr;
  return variables_[id].get();
}

std::string ResourceVariables::Name(const ResourceVariable& v) {
  return v.container.empty()
             ? absl::StrCat("'", v.shared_name, "'")
             : absl::StrCat("'", v.container, "/", v.shared_name, "'");
}

absl::Status ResourceVariables::Declare(int32_t id, tfl::TensorType type,
                                        const Shape& shape,
                                        absl::string_view by) {
  ResourceVariable* v = Get(id);
  if (v == nullptr) {
    return absl::InternalError(absl::StrFormat("no resource variable %d", id));
  }
  if (v->declared) {
    if (v->type == type && v->shape == shape) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrFormat(
        "variable %s would become %s %s here, but it is %s %s (fixed by %s); "
        "variables that change dtype or shape are not supported yet",
        Name(*v), TensorTypeName(type), ShapeToString(shape),
        TensorTypeName(v->type), ShapeToString(v->shape), v->declared_by));
  }
  const size_t elem = ElementSize(type);
  if (elem == 0) {
    return absl::UnimplementedError(
        absl::StrFormat("variable %s: %s variables are not supported", Name(*v),
                        TensorTypeName(type)));
  }
  const size_t bytes = static_cast<size_t>(NumElements(shape)) * elem;
  const size_t alloc = (std::max<size_t>(bytes, 1) + kArenaAlignment - 1) /
                       kArenaAlignment * kArenaAlignment;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kArenaAlignment, alloc));
  if (p == nullptr) return absl::ResourceExhaustedError("out of memory");
  std::memset(p, 0, alloc);
  storage_.emplace_back(p);
  v->declared = true;
  v->type = type;
  v->shape = shape;
  v->bytes = bytes;
  v->data = p;
  v->declared_by = std::string(by);
  return absl::OkStatus();
}

bool FindDeclaredAssignment(const Model& model, absl::string_view container,
                            absl::string_view shared_name,
                            tfl::TensorType* out_type, Shape* out_shape) {
  for (const Subgraph& sg : model.subgraphs) {
    // Per tensor: the VAR_HANDLE op that produces it, if any.
    std::vector<const tfl::VarHandleOptionsT*> handle(sg.tensors.size(),
                                                      nullptr);
    for (const tfl::OperatorT& op : sg.ops) {
      if (op.opcode_index >= model.operator_codes.size()) continue;
      const tfl::BuiltinOperator code =
          EffectiveBuiltinCode(model.operator_codes[op.opcode_index]);
      if (code == tfl::BuiltinOperator_VAR_HANDLE && op.outputs.size() == 1 &&
          op.outputs[0] >= 0 &&
          static_cast<size_t>(op.outputs[0]) < sg.tensors.size()) {
        static const tfl::VarHandleOptionsT kNone;
        const tfl::VarHandleOptionsT* o =
            op.builtin_options.AsVarHandleOptions();
        handle[op.outputs[0]] = o != nullptr ? o : &kNone;
        continue;
      }
      if (code != tfl::BuiltinOperator_ASSIGN_VARIABLE ||
          op.inputs.size() != 2) {
        continue;
      }
      const int32_t res = op.inputs[0], value = op.inputs[1];
      if (res < 0 || value < 0 ||
          static_cast<size_t>(res) >= sg.tensors.size() ||
          static_cast<size_t>(value) >= sg.tensors.size()) {
        continue;
      }
      const tfl::VarHandleOptionsT* o = handle[res];
      if (o == nullptr || o->container != container ||
          o->shared_name != shared_name) {
        continue;
      }
      const tfl::TensorT& t = sg.tensors[value];
      bool is_static = true;
      for (int32_t d : t.shape) is_static &= d >= 0;
      for (int32_t d : t.shape_signature) is_static &= d >= 0;
      if (!is_static) continue;
      *out_type = t.type;
      out_shape->assign(t.shape.begin(), t.shape.end());
      return true;
    }
  }
  return false;
}

}  // namespace graft
