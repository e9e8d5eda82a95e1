// The shared machinery of unary elementwise kernels (activations.cc,
// unary_math.cc): same-shape map with an optional per-op parameter, split
// over the thread pool when the tensor is large. Internal to kernels/.
#ifndef GRAFT_DISPATCH_KERNELS_UNARY_H_
#define GRAFT_DISPATCH_KERNELS_UNARY_H_

#include <cstdint>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft::kernels {

struct UnaryState : KernelState {
  float alpha = 0;  // LEAKY_RELU's alpha
};

// out[i] = Op::Apply(in[i], state).
template <typename T, typename Op>
absl::Status EvalUnary(EvalContext& ctx) {
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const UnaryState* s = ctx.state<UnaryState>();
  const int64_t n = ctx.output(0)->num_elements();
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = Op::Apply(in[i], *s);
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(n, kElementwiseChunk, body);
  } else {
    body(0, n);
  }
  return absl::OkStatus();
}

// How many FLOAT32 HARD_SWISH evaluations ran each build (kBaseline, or
// kAvx2 for the AVX2+FMA one; activations.cc): tests check with it that the
// path they force is taken.
int64_t HardSwishCallsForTesting(CpuIsa path);

// Prepare for a same-type, same-shape unary op over the dtypes whose Op
// instantiations are given: float always, int32/int64 when enabled.
template <typename Op, bool kInt32 = false, bool kInt64 = false>
absl::Status PrepareUnary(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  if (in->type != ctx.output(0)->type ||
      IsQuantized(*in)) {
    return ctx.Unsupported();
  }
  MakeState<UnaryState>(ctx);
  if (in->type == tfl::TensorType_FLOAT32) {
    ctx.SetEval(EvalUnary<float, Op>);
  } else if (kInt32 && in->type == tfl::TensorType_INT32) {
    if constexpr (kInt32) ctx.SetEval(EvalUnary<int32_t, Op>);
  } else if (kInt64 && in->type == tfl::TensorType_INT64) {
    if constexpr (kInt64) ctx.SetEval(EvalUnary<int64_t, Op>);
  } else {
    return ctx.Unsupported();
  }
  return ctx.SetOutputShape(0, in->shape);
}

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_UNARY_H_
