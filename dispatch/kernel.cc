#include "dispatch/kernel.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dispatch/thread_pool.h"

namespace graft {

void EvalContext::RunConsumer(int64_t begin, int64_t end) {
  consumer_->fn(*consumer_->ctx, begin, end);
  const int slot = ThreadPool::CurrentThreadIndex() % consumer_->num_counters;
  consumer_->counters[slot].elements.fetch_add(end - begin,
                                               std::memory_order_relaxed);
}

absl::Status PrepareContext::SetOutputShape(int i, Shape shape) {
  const size_t elem =
      i >= 0 && i < num_outputs() ? ElementSize(output(i)->type) : 1;
  if (elem == 0) {
    return Unsupported(absl::StrCat(TensorTypeName(output(i)->type), " outputs"));
  }
  absl::StatusOr<int64_t> n = CheckedNumElements(shape);
  if (!n.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("output %d: %s", i, n.status().message()));
  }
  return SetOutputShape(i, shape, static_cast<size_t>(*n) * elem);
}

absl::Status PrepareContext::SetOutputShape(int i, Shape shape, size_t bytes) {
  if (i < 0 || i >= num_outputs()) {
    return absl::InternalError(absl::StrFormat("output %d out of range", i));
  }
  for (int32_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "output %d would get negative shape %s", i, ShapeToString(shape)));
    }
  }
  if (absl::StatusOr<int64_t> n = CheckedNumElements(shape); !n.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("output %d: %s", i, n.status().message()));
  }
  Tensor* t = output(i);
  t->bytes = bytes;
  t->shape = std::move(shape);
  if (i < 64) shapes_set_ |= uint64_t{1} << i;
  return absl::OkStatus();
}

bool PrepareContext::output_shape_set(int i) const {
  return i < 64 && (shapes_set_ >> i) & 1;
}

std::string PrepareContext::DescribeTypes() const {
  std::vector<std::string> ins, outs;
  for (int i = 0; i < num_inputs(); ++i) {
    const Tensor* t = input(i);
    ins.push_back(t ? TensorTypeName(t->type) : "-");
  }
  for (int i = 0; i < num_outputs(); ++i) {
    outs.push_back(TensorTypeName(output(i)->type));
  }
  return absl::StrCat(absl::StrJoin(ins, ", "), " -> ",
                      absl::StrJoin(outs, ", "));
}

absl::Status PrepareContext::Unsupported(absl::string_view detail) const {
  return absl::UnimplementedError(absl::StrCat(
      "no CPU kernel for ",
      detail.empty() ? absl::StrCat("dtypes ", DescribeTypes()) : detail));
}

}  // namespace graft
