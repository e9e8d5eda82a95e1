// FULLY_CONNECTED and BATCH_MATMUL (float32), on the packed GEMM (gemm.h).
//
// FULLY_CONNECTED: input [..., K] (flattened to rows of K), weights [N, K],
// optional bias [N], keep_num_dims, fused activation. Constant weights are
// packed at prepare time.
// BATCH_MATMUL: lhs [..., M, K] (adj_x: [..., K, M]), rhs [..., K, N]
// (adj_y: [..., N, K]), batch dims broadcast. A constant rhs is packed at
// prepare time; otherwise each batch is packed into per-thread scratch.
#include <algorithm>
#include <utility>
#include <vector>

#include "dispatch/kernels/gemm.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct FullyConnectedState : KernelState {
  int64_t m, n, k;
  float lo, hi;
  PackedVector packed;
  bool pack_at_eval = false;
};

absl::Status EvalFullyConnected(EvalContext& ctx) {
  const FullyConnectedState& s = *ctx.state<FullyConnectedState>();
  const float* packed = s.packed.data();
  if (s.pack_at_eval) {
    PackRhs(ctx.input(1)->data<float>(), s.k, s.n, 1, s.k,
            ctx.scratch_as<float>());
    packed = ctx.scratch_as<float>();
  }
  const Tensor* bias = ctx.input(2);
  GemmArgs g;
  g.m = s.m, g.n = s.n, g.k = s.k;
  g.a = ctx.input(0)->data<float>(), g.lda = s.k;
  g.packed_b = packed;
  g.bias = bias ? bias->data<float>() : nullptr;
  g.lo = s.lo, g.hi = s.hi;
  g.c = ctx.output(0)->data<float>(), g.ldc = s.n;
  Gemm(g, ctx.thread_pool());
  return absl::OkStatus();
}

absl::Status PrepareFullyConnected(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  if (in->type != tfl::TensorType_FLOAT32 ||
      w->type != tfl::TensorType_FLOAT32 ||
      (bias && bias->type != tfl::TensorType_FLOAT32) ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat("%s input with %s weights",
                                           TensorTypeName(in->type),
                                           TensorTypeName(w->type)));
  }
  const auto* o = ctx.op().builtin_options.AsFullyConnectedOptions();
  if (o && o->weights_format !=
               tfl::FullyConnectedOptionsWeightsFormat_DEFAULT) {
    return ctx.Unsupported("shuffled weights");
  }
  GRAFT_KERNEL_CHECK(w->rank() == 2, "weights must be 2-D, got %s",
                     ShapeToString(w->shape));
  auto* s = MakeState<FullyConnectedState>(ctx);
  s->n = w->dim(0), s->k = w->dim(1);
  GRAFT_KERNEL_CHECK(s->k > 0 && in->num_elements() % s->k == 0,
                     "input %s does not split into rows of %d",
                     ShapeToString(in->shape), s->k);
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->n,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->n);
  s->m = in->num_elements() / s->k;
  GRAFT_RETURN_IF_ERROR(ActivationRange(
      o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE,
      &s->lo, &s->hi));
  const size_t packed_floats = PackedRhsSize(s->k, s->n);
  if (w->constant) {
    s->packed.resize(packed_floats);
    PackRhs(w->data<float>(), s->k, s->n, 1, s->k, s->packed.data());
  } else {
    s->pack_at_eval = true;
    ctx.RequestScratch(packed_floats * sizeof(float));
  }
  GRAFT_ASSIGN_OR_RETURN(Shape out,
                         FullyConnectedOutputShape(o, *in, s->m, s->k, s->n));
  ctx.SetEval(EvalFullyConnected);
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, std::move(out));
}

struct BatchMatMulState : KernelState {
  int64_t m, n, k;
  bool adj_x;
  int64_t rhs_stride_k, rhs_stride_n;
  int64_t lhs_batch_elems, rhs_batch_elems;
  // Per output batch: the lhs and rhs batch it reads.
  std::vector<std::pair<int64_t, int64_t>> batches;
  PackedVector packed;  // all rhs batches, when rhs is constant
  size_t packed_floats;       // one rhs batch
  size_t scratch_per_thread;  // floats
};

void RunBatch(const BatchMatMulState& s, const float* lhs, const float* rhs,
              float* out, int64_t batch, float* scratch, ThreadPool* pool) {
  const auto [lb, rb] = s.batches[batch];
  const float* a = lhs + lb * s.lhs_batch_elems;
  const float* packed;
  if (!s.packed.empty()) {
    packed = s.packed.data() + rb * s.packed_floats;
  } else {
    PackRhs(rhs + rb * s.rhs_batch_elems, s.k, s.n, s.rhs_stride_k,
            s.rhs_stride_n, scratch);
    packed = scratch;
    scratch += s.packed_floats;
  }
  if (s.adj_x) {  // a is [K, M]: transpose into [M, K]
    for (int64_t i = 0; i < s.m; ++i) {
      for (int64_t kk = 0; kk < s.k; ++kk) scratch[i * s.k + kk] = a[kk * s.m + i];
    }
    a = scratch;
  }
  GemmArgs g;
  g.m = s.m, g.n = s.n, g.k = s.k;
  g.a = a, g.lda = s.k;
  g.packed_b = packed;
  g.c = out + batch * s.m * s.n, g.ldc = s.n;
  Gemm(g, pool);
}

absl::Status EvalBatchMatMul(EvalContext& ctx) {
  const BatchMatMulState& s = *ctx.state<BatchMatMulState>();
  const float* lhs = ctx.input(0)->data<float>();
  const float* rhs = ctx.input(1)->data<float>();
  float* out = ctx.output(0)->data<float>();
  float* scratch = ctx.scratch_as<float>();
  const int64_t nb = static_cast<int64_t>(s.batches.size());
  ThreadPool* pool = ctx.thread_pool();
  if (nb == 1 || pool == nullptr) {
    for (int64_t b = 0; b < nb; ++b) {
      RunBatch(s, lhs, rhs, out, b, scratch, pool);
    }
    return absl::OkStatus();
  }
  // Many batches (attention heads): one batch per task, each thread with
  // its own scratch slice.
  pool->ParallelForWithThreadIndex(
      nb, 1, [&](int thread, int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          RunBatch(s, lhs, rhs, out, b,
                   scratch + thread * s.scratch_per_thread, nullptr);
        }
      });
  return absl::OkStatus();
}

absl::Status PrepareBatchMatMul(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* lhs, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* rhs, RequiredInput(ctx, 1));
  if (lhs->type != tfl::TensorType_FLOAT32 ||
      rhs->type != tfl::TensorType_FLOAT32 ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat(
        "a float BATCH_MATMUL of %s lhs and %s rhs", TensorTypeName(lhs->type),
        TensorTypeName(rhs->type)));
  }
  GRAFT_ASSIGN_OR_RETURN(MatMulGeometry g, ResolveBatchMatMul(ctx, *lhs, *rhs));
  auto* s = MakeState<BatchMatMulState>(ctx);
  s->adj_x = g.adj_x;
  s->m = g.m, s->k = g.k, s->n = g.n;
  s->rhs_stride_k = g.rhs_stride_k;
  s->rhs_stride_n = g.rhs_stride_n;
  s->lhs_batch_elems = g.lhs_batch_elems;
  s->rhs_batch_elems = g.rhs_batch_elems;
  s->batches = std::move(g.batches);
  const int64_t nb = static_cast<int64_t>(s->batches.size());
  s->packed_floats = PackedRhsSize(s->k, s->n);
  s->scratch_per_thread = s->adj_x ? static_cast<size_t>(s->m * s->k) : 0;
  if (rhs->constant) {
    const int64_t rhs_batches = g.rhs_batches;
    s->packed.resize(s->packed_floats * rhs_batches);
    for (int64_t i = 0; i < rhs_batches; ++i) {
      PackRhs(rhs->data<float>() + i * s->rhs_batch_elems, s->k, s->n,
              s->rhs_stride_k, s->rhs_stride_n,
              s->packed.data() + i * s->packed_floats);
    }
  } else {
    s->scratch_per_thread += s->packed_floats;
  }
  const int threads =
      ctx.thread_pool() && nb > 1 ? ctx.thread_pool()->num_threads() : 1;
  ctx.RequestScratch(s->scratch_per_thread * threads * sizeof(float));
  ctx.SetEval(EvalBatchMatMul);
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, std::move(g.out));
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(FullyConnected);
GRAFT_DEFINE_KERNEL(BatchMatMul);

}  // namespace graft
