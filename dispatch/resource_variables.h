// ResourceVariables: the resource variables of one Runtime — what
// VAR_HANDLE names and ASSIGN_VARIABLE / READ_VARIABLE write and read.
//
// TFLite semantics: VAR_HANDLE (container, shared_name) yields a resource
// id; every VAR_HANDLE with the same pair, in any subgraph or signature of
// one runtime, names the same variable. A variable holds no value until its
// first ASSIGN_VARIABLE; it keeps its value across Invoke calls for the
// lifetime of the runtime.
//
// Graft keeps variables static: each variable's dtype and shape are fixed
// at load (by the first ASSIGN_VARIABLE prepared, or, for a read prepared
// before any assignment, by an assignment found in the model) and its
// storage is allocated then, so READ/ASSIGN at invoke are plain copies. An
// assignment of another dtype or shape is refused at load.
//
// Ids are indices into the store, handed out in order of first VAR_HANDLE.
//
// Thread-safety: none; owned by one Runtime (its LoadEnv), used by the
// thread that loads or invokes it.
#ifndef GRAFT_DISPATCH_RESOURCE_VARIABLES_H_
#define GRAFT_DISPATCH_RESOURCE_VARIABLES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/model.h"
#include "dispatch/tensor.h"

namespace graft {

struct ResourceVariable {
  std::string container;
  std::string shared_name;
  // Set once the dtype and shape are fixed (Declare); `data` then holds
  // `bytes` bytes (64-byte aligned, zeroed until the first assignment).
  bool declared = false;
  tfl::TensorType type = tfl::TensorType_FLOAT32;
  Shape shape;
  size_t bytes = 0;
  uint8_t* data = nullptr;
  // Who fixed dtype and shape ("subgraph 1 op 1 (ASSIGN_VARIABLE)").
  std::string declared_by;
  // Whether an ASSIGN_VARIABLE has run (a read before that fails).
  bool assigned = false;
};

class ResourceVariables {
 public:
  ResourceVariables();
  ~ResourceVariables();
  ResourceVariables(const ResourceVariables&) = delete;
  ResourceVariables& operator=(const ResourceVariables&) = delete;

  // The id of variable (container, shared_name), created undeclared on
  // first use.
  int32_t Handle(absl::string_view container, absl::string_view shared_name);

  // Null for an id Handle() never returned.
  ResourceVariable* Get(int32_t id);
  size_t size() const { return variables_.size(); }

  // Fixes variable `id`'s dtype and shape and allocates its storage. Again
  // with the same dtype and shape: OK, nothing changes. With another:
  // Unimplemented, naming both and `by` (the op asking) and who declared it
  // first. ResourceExhausted when the storage cannot be allocated.
  absl::Status Declare(int32_t id, tfl::TensorType type, const Shape& shape,
                       absl::string_view by);

  // "'name'" or "'container/name'", for messages.
  static std::string Name(const ResourceVariable& v);

 private:
  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::unique_ptr<ResourceVariable>> variables_;
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> storage_;
};

// Looks through every subgraph of `model` for an ASSIGN_VARIABLE whose
// resource comes straight from a VAR_HANDLE of (container, shared_name) and
// whose value tensor has a static declared shape. Returns the value's dtype
// and shape of the first such assignment in *out_type / *out_shape and true;
// false when there is none. Assignments reached only through subgraph
// inputs (a handle passed into a loop body) are not seen.
bool FindDeclaredAssignment(const Model& model, absl::string_view container,
                            absl::string_view shared_name,
                            tfl::TensorType* out_type, Shape* out_shape);

}  // namespace graft

#endif  // GRAFT_DISPATCH_RESOURCE_VARIABLES_H_
