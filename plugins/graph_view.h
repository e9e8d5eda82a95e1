// GraphView: the read-only C view of one IR subgraph that compiler plugins
// receive (graft_graph_view_t, c_api/graft_graph.h), with the storage behind
// it. Tensors' constant data point into the model's buffers (zero-copy);
// everything else is built here.
#ifndef GRAFT_PLUGINS_GRAPH_VIEW_H_
#define GRAFT_PLUGINS_GRAPH_VIEW_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/model.h"
#include "core/op_attributes.h"
#include "graft_graph.h"

namespace graft {

class GraphView {
 public:
  // A view of `model.subgraphs[subgraph]`, which (with the model's buffers)
  // must outlive the view and stay unchanged. `name` overrides the
  // subgraph's name; `original_op_indices` (one per op, or empty for the
  // identity) maps ops back to the subgraph they were outlined from;
  // `tflite_buffer` is passed through (see graft_graph_view_t).
  GraphView(const Model& model, SubgraphId subgraph, std::string name = "",
            std::vector<int32_t> original_op_indices = {},
            int32_t original_subgraph = -1,
            absl::Span<const uint8_t> tflite_buffer = {});
  GraphView(const GraphView&) = delete;
  GraphView& operator=(const GraphView&) = delete;

  const graft_graph_view_t* view() const { return &view_; }

 private:
  const char* Keep(std::string s);

  graft_graph_view_t view_{};
  std::string name_;
  std::vector<graft_tensor_t> tensors_;
  std::vector<const graft_tensor_t*> tensor_ptrs_;
  std::vector<graft_op_t> ops_;
  std::vector<const graft_op_t*> op_ptrs_;
  std::vector<graft_quantization_t> quantizations_;
  // Dims, shape signatures and zero points of all tensors.
  std::vector<int64_t> shapes_;
  std::deque<std::vector<int64_t>> int64_arrays_;
  std::deque<std::vector<double>> double_arrays_;
  std::deque<std::vector<uint8_t>> byte_arrays_;
  std::deque<std::vector<graft_attribute_t>> attributes_;
  std::deque<std::string> strings_;
};

}  // namespace graft

#endif  // GRAFT_PLUGINS_GRAPH_VIEW_H_
