// Normalizations over the innermost dim (float32): SOFTMAX (with beta),
// LOG_SOFTMAX, L2_NORMALIZATION. Max-subtracted for stability, as TFLite's
// reference kernels. SOFTMAX takes its exponentials for a whole block of
// rows at once from ExpVector (vector_math.h: 8 lanes on AVX2, within 1 ulp)
// and sums each row in four chains: the same values to within float
// rounding (tolerance.h), not bit for bit.
#include <algorithm>
#include <cmath>

#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/vector_math.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct RowState : KernelState {
  int64_t rows = 0, depth = 0;
  float beta = 1.0f;
  float lo = 0, hi = 0;  // L2_NORMALIZATION's fused activation
};

enum class RowOp { kSoftmax, kLogSoftmax, kL2Norm };

template <RowOp kOp>
void Row(const RowState& s, const float* in, float* out) {
  const int64_t n = s.depth;
  if constexpr (kOp == RowOp::kL2Norm) {
    float sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += in[i] * in[i];
    const float norm = std::max(std::sqrt(sum), 1e-6f);
    for (int64_t i = 0; i < n; ++i) {
      out[i] = std::min(std::max(in[i] / norm, s.lo), s.hi);
    }
    return;
  }
  float max = in[0];
  for (int64_t i = 1; i < n; ++i) max = std::max(max, in[i]);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(in[i] - max);
  const float log_sum = std::log(sum);
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] - max - log_sum;
}

// The largest of x[0, n), n >= 1, and the sum of x[0, n): four
// independent chains, so the adds and compares overlap (a NaN may or may
// not win the max; SOFTMAX's outputs are NaN either way).
float Max(const float* x, int64_t n) {
  float m[4] = {x[0], x[0], x[0], x[0]};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) m[j] = std::max(m[j], x[i + j]);
  }
  for (; i < n; ++i) m[0] = std::max(m[0], x[i]);
  return std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
}

float Sum(const float* x, int64_t n) {
  float acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) acc[j] += x[i + j];
  }
  for (; i < n; ++i) acc[0] += x[i];
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// SOFTMAX on `rows` rows: (x - the row's max) * beta into out, one
// ExpVector over all of them, then each row scaled by 1 / its sum.
void SoftmaxRows(const RowState& s, const float* in, float* out,
                 int64_t rows) {
  const int64_t n = s.depth;
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * n;
    float* y = out + r * n;
    const float max = Max(x, n);
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - max) * s.beta;
  }
  ExpVector(out, out, rows * n);
  for (int64_t r = 0; r < rows; ++r) {
    float* y = out + r * n;
    const float inv = 1.0f / Sum(y, n);
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <RowOp kOp>
absl::Status EvalRows(EvalContext& ctx) {
  const RowState& s = *ctx.state<RowState>();
  const float* in = ctx.input(0)->data<float>();
  float* out = ctx.output(0)->data<float>();
  if (s.depth == 0) return absl::OkStatus();
  auto body = [&](int64_t begin, int64_t end) {
    if constexpr (kOp == RowOp::kSoftmax) {
      SoftmaxRows(s, in + begin * s.depth, out + begin * s.depth, end - begin);
    } else {
      for (int64_t r = begin; r < end; ++r) {
        Row<kOp>(s, in + r * s.depth, out + r * s.depth);
      }
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(
        s.rows, std::max<int64_t>(1, 16384 / s.depth), body);
  } else {
    body(0, s.rows);
  }
  return absl::OkStatus();
}

template <RowOp kOp>
absl::Status PrepareRows(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 1, 1, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  if (in->type != tfl::TensorType_FLOAT32 ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported();
  }
  GRAFT_KERNEL_CHECK(in->rank() >= 1, "input must be at least 1-D");
  auto* s = MakeState<RowState>(ctx);
  s->depth = in->shape.back();
  s->rows = s->depth > 0 ? in->num_elements() / s->depth : 0;
  if constexpr (kOp == RowOp::kSoftmax) {
    const auto* o = ctx.op().builtin_options.AsSoftmaxOptions();
    s->beta = o ? o->beta : 1.0f;
  }
  if constexpr (kOp == RowOp::kL2Norm) {
    const auto* o = ctx.op().builtin_options.AsL2NormOptions();
    GRAFT_RETURN_IF_ERROR(ActivationRange(
        o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE,
        &s->lo, &s->hi));
  }
  ctx.SetEval(EvalRows<kOp>);
  ctx.SetReductionLength(s->depth);
  return ctx.SetOutputShape(0, in->shape);
}

absl::Status PrepareSoftmax(PrepareContext& ctx) {
  return PrepareRows<RowOp::kSoftmax>(ctx);
}
absl::Status PrepareLogSoftmax(PrepareContext& ctx) {
  return PrepareRows<RowOp::kLogSoftmax>(ctx);
}
absl::Status PrepareL2Normalization(PrepareContext& ctx) {
  return PrepareRows<RowOp::kL2Norm>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Softmax);
GRAFT_DEFINE_KERNEL(LogSoftmax);
GRAFT_DEFINE_KERNEL(L2Normalization);

}  // namespace graft
