// The models `graft check` offers a plugin: one-op models drawn at random
// (shapes, dtypes, attributes, quantization) for each op of a fixed
// catalogue, and a few small built-in multi-op models. Every model is one
// Graft's CPU kernels run, so a vendor's output always has a reference.
#ifndef GRAFT_TOOLS_CHECK_OP_CATALOG_H_
#define GRAFT_TOOLS_CHECK_OP_CATALOG_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/model.h"

namespace graft::check {

// One entry of the catalogue: an op in one element type, e.g. "ADD" float32
// or "CONV_2D" int8. `name` ("ADD", "CONV_2D/int8", "CONV_2D/uint8") is
// what --ops names. QUANTIZE and DEQUANTIZE are listed as float32 (their
// float side) and convert to and from int8.
struct CatalogOp {
  std::string name;
  tfl::BuiltinOperator op;
  tfl::TensorType type = tfl::TensorType_FLOAT32;
};

// Every op the catalogue draws, in a fixed order.
const std::vector<CatalogOp>& Catalog();

// A drawn model and a one-line account of the draw ("ADD [2,3,4] + [4]
// (constant), RELU").
struct DrawnModel {
  Model model;
  std::string description;
};

// Draws one model of `op` from `rng`. The same op and generator state give
// the same model.
absl::StatusOr<DrawnModel> DrawOneOpModel(const CatalogOp& op,
                                          std::mt19937& rng);

// The built-in multi-op models (a float MLP, a small CNN), used when
// `graft check` is given no --models directory; fixed weights from `seed`.
struct NamedModel {
  std::string name;
  Model model;
};
absl::StatusOr<std::vector<NamedModel>> BuiltinModels(uint32_t seed);

}  // namespace graft::check

#endif  // GRAFT_TOOLS_CHECK_OP_CATALOG_H_
