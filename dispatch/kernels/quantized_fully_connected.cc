// Quantized FULLY_CONNECTED with TFLite's integer semantics
// (reference_integer_ops::FullyConnected / FullyConnectedPerChannel):
//
// - INT8 input, INT8 weights (per-tensor with any zero point, or
//   per-channel symmetric), INT32 bias: int32 sums of
//   (w - w_zero_point) * (x - x_zero_point).
// - UINT8 input with UINT8 weights (per-tensor), INT32 bias: the same.
// - 16x8: INT16 input (zero point 0), INT8 weights, INT64 or INT32 bias:
//   int64 sums, the int64 MultiplyByQuantizedMultiplier.
//
// Rescaling (measured against ai-edge-litert 2.3.0's BUILTIN_REF kernels):
// the 8-bit forms round acc * multiplier once
// (MultiplyByQuantizedMultiplierSingleRounding), not with the double
// rounding of the other quantized kernels; the 16x8 form uses the int64
// MultiplyByQuantizedMultiplier.
//
// The multipliers are input_scale * filter_scale / output_scale in double
// (TFLite's GetQuantizedConvolutionMultipler per tensor,
// PopulateConvolutionQuantizationParams per channel).
//
// The 8-bit forms run the integer GEMM of quantized_gemm.h: weights
// (w - w_zero_point, in int16) packed into column panels at prepare when
// they are constant, else into scratch at every invoke; input rows widened
// to int16 (x - x_zero_point); int32 sums two products at a time (AVX2
// vpmaddwd); vector requantization. The int32 sums are the reference's in
// another order (integer addition is associative), so results are
// bit-exact. Work is split over row blocks and column panels
// across the thread pool. The 16x8 forms (and 8-bit zero points outside
// their type's range) run the reference loops.
//
// Quantized BATCH_MATMUL (reference_ops::BatchMatMul): INT8 x INT8 -> INT8
// with int32 sums of (lhs - lhs_zero_point) * (rhs - rhs_zero_point); INT16
// x INT16 and INT16 x INT8 -> INT16 (zero points 0) with int64 sums and the
// int64 MultiplyByQuantizedMultiplier; one multiplier lhs_scale * rhs_scale
// / output_scale, no activation. Per-channel rhs scales are refused: TFLite
// reads a per-tensor scale there (0 for per-channel tensors, so its output
// would be all zero points).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "dispatch/kernels/quantized_gemm.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

struct QFcState : KernelState {
  int64_t m = 0, n = 0, k = 0;
  int32_t input_offset = 0, filter_offset = 0, output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  std::vector<QuantizedMultiplier> mult;  // size n
  std::vector<int64_t> bias;              // size n
  // 8-bit GEMM path (EvalQFcGemm).
  bool weights_packed = false;  // at prepare, into `packed`
  std::vector<int16_t> packed;  // QGemmPackRows of w + filter_offset
  QGemmRequant rq;
  int64_t panels = 0;
  int64_t chunk_rows = 0;     // rows per task (a multiple of kQGemmMr)
  int64_t row_blocks = 0;     // ceil(m / chunk_rows)
  int64_t panel_groups = 0;   // tasks per row block
  int64_t group_panels = 0;   // panels per task
  size_t packed_scratch = 0;  // bytes of scratch for run-time weights
};

// Rounds bytes up to the scratch alignment.
inline size_t Align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

// out = requantize(x * w^T) by the GEMM; scratch: the packed weights when
// they are not constant, then per thread chunk_rows int16 input rows.
template <typename T>
absl::Status EvalQFcGemm(EvalContext& ctx) {
  const auto& s = *ctx.state<QFcState>();
  const T* in = ctx.input(0)->data<T>();
  T* out = ctx.output(0)->data<T>();
  const int16_t* packed = s.packed.data();
  if (!s.weights_packed) {
    int16_t* dst = ctx.scratch_as<int16_t>();
    QGemmPackRows(ctx.input(1)->data<T>(), s.n, s.k, s.k, s.filter_offset, dst);
    packed = dst;
  }
  int16_t* rows_scratch =
      reinterpret_cast<int16_t*>(ctx.scratch() + s.packed_scratch);
  auto body = [&](int thread, int64_t begin, int64_t end) {
    int16_t* a = rows_scratch + thread * s.chunk_rows * QGemmPaddedK(s.k);
    int64_t widened = -1;  // the row block now in `a`
    for (int64_t t = begin; t < end; ++t) {
      const int64_t rb = t / s.panel_groups, pg = t % s.panel_groups;
      const int64_t r0 = rb * s.chunk_rows;
      const int64_t rows = std::min(s.m - r0, s.chunk_rows);
      const int64_t p0 = pg * s.group_panels;
      const int64_t p1 = std::min(s.panels, p0 + s.group_panels);
      if (p0 >= p1) continue;
      if (widened != rb) {
        QGemmWidenRows(in + r0 * s.k, rows, s.k, s.k, s.input_offset, a);
        widened = rb;
      }
      QGemm(a, rows, s.k, packed, s.n, p0, p1, s.rq, 0, out + r0 * s.n, s.n);
    }
  };
  const int64_t tasks = s.row_blocks * s.panel_groups;
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelForWithThreadIndex(tasks, 1, body);
  } else {
    body(0, 0, tasks);
  }
  return absl::OkStatus();
}

// Sets up the 8-bit GEMM path of `s` (prepared quantization parameters).
void PrepareQFcGemm(PrepareContext& ctx, const Tensor& w, QFcState* s) {
  const int threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
  QGemmPrepareRequant(s->mult, s->bias, /*single_rounding=*/true,
                      s->output_offset, s->act_min, s->act_max, &s->rq);
  s->panels = QGemmPanels(s->n);
  // Row blocks of at most 48 rows (their int16 copy stays in L1/L2), then
  // enough panel groups that every thread gets about two tasks.
  const int64_t per_thread = (s->m + threads - 1) / threads;
  s->chunk_rows = std::clamp<int64_t>(
      (per_thread + kQGemmMr - 1) / kQGemmMr * kQGemmMr, kQGemmMr, 48);
  s->row_blocks = (s->m + s->chunk_rows - 1) / s->chunk_rows;
  const int64_t want = threads > 1 ? 2 * threads : 1;
  s->panel_groups = std::max<int64_t>(
      1, std::min<int64_t>(s->panels,
                           (want + std::max<int64_t>(s->row_blocks, 1) - 1) /
                               std::max<int64_t>(s->row_blocks, 1)));
  s->group_panels =
      std::max<int64_t>(1, (s->panels + s->panel_groups - 1) / s->panel_groups);
  s->panel_groups =
      std::max<int64_t>(1, (s->panels + s->group_panels - 1) / s->group_panels);
  const size_t packed_values = static_cast<size_t>(QGemmPackedSize(s->n, s->k));
  s->weights_packed = w.constant;
  if (w.constant) {
    s->packed.resize(packed_values);
    if (w.type == tfl::TensorType_INT8) {
      QGemmPackRows(w.data<int8_t>(), s->n, s->k, s->k, s->filter_offset,
                    s->packed.data());
    } else {
      QGemmPackRows(w.data<uint8_t>(), s->n, s->k, s->k, s->filter_offset,
                    s->packed.data());
    }
    s->packed_scratch = 0;
  } else {
    s->packed_scratch = Align64(packed_values * sizeof(int16_t));
  }
  ctx.RequestScratch(
      s->packed_scratch +
      static_cast<size_t>(threads * s->chunk_rows * QGemmPaddedK(s->k)) *
          sizeof(int16_t));
}

// The reference loops: the 16x8 form, and the 8-bit forms with zero points
// out of their type's range (else EvalQFcGemm).
template <typename T, typename W, typename Acc>
absl::Status EvalQFc(EvalContext& ctx) {
  const auto& s = *ctx.state<QFcState>();
  const T* in = ctx.input(0)->data<T>();
  const W* w = ctx.input(1)->data<W>();
  T* out = ctx.output(0)->data<T>();
  auto body = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = in + r * s.k;
      for (int64_t j = 0; j < s.n; ++j) {
        const W* wr = w + j * s.k;
        Acc acc = 0;
        for (int64_t i = 0; i < s.k; ++i) {
          acc += static_cast<Acc>(wr[i] + s.filter_offset) *
                 static_cast<Acc>(x[i] + s.input_offset);
        }
        acc += static_cast<Acc>(s.bias[j]);
        int32_t v;
        if constexpr (std::is_same_v<Acc, int32_t>) {
          // 8-bit: the reference FULLY_CONNECTED rounds the rescale once.
          v = MultiplyByQuantizedMultiplierSingleRounding(
              acc, s.mult[j].multiplier, s.mult[j].shift);
        } else {
          v = MultiplyByQuantizedMultiplier(acc, s.mult[j].multiplier,
                                            s.mult[j].shift);
        }
        v += s.output_offset;
        out[r * s.n + j] =
            static_cast<T>(std::min(s.act_max, std::max(s.act_min, v)));
      }
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(s.m, 1, body);
  } else {
    body(0, s.m);
  }
  return absl::OkStatus();
}

absl::Status PrepareFullyConnectedQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* w, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  const Tensor* out = ctx.output(0);
  const tfl::TensorType t = in->type;
  const bool i8 = t == tfl::TensorType_INT8 && w->type == t;
  const bool u8 = t == tfl::TensorType_UINT8 && w->type == t;
  const bool i16 = t == tfl::TensorType_INT16 &&
                   w->type == tfl::TensorType_INT8;
  const bool bias_ok = bias == nullptr ||
                       bias->type == tfl::TensorType_INT32 ||
                       (i16 && bias->type == tfl::TensorType_INT64);
  if (!(i8 || u8 || i16) || out->type != t || !bias_ok || !IsQuantized(*in) ||
      !IsQuantized(*w) || !IsQuantized(*out)) {
    return ctx.Unsupported(absl::StrFormat("%s input with %s weights",
                                           TensorTypeName(t),
                                           TensorTypeName(w->type)));
  }
  const auto* o = ctx.op().builtin_options.AsFullyConnectedOptions();
  if (o && o->weights_format !=
               tfl::FullyConnectedOptionsWeightsFormat_DEFAULT) {
    return ctx.Unsupported("shuffled weights");
  }
  GRAFT_KERNEL_CHECK(w->rank() == 2, "weights must be 2-D, got %s",
                     ShapeToString(w->shape));
  auto* s = MakeState<QFcState>(ctx);
  s->n = w->dim(0), s->k = w->dim(1);
  GRAFT_KERNEL_CHECK(s->k > 0 && in->num_elements() % s->k == 0,
                     "input %s does not split into rows of %d",
                     ShapeToString(in->shape), s->k);
  s->m = in->num_elements() / s->k;
  GRAFT_KERNEL_CHECK(HasPerChannelScales(*w, static_cast<int>(s->n), 0),
                     "weights need one positive scale or one per output");
  const auto& wscales = w->quantization->scale;
  const bool per_channel = wscales.size() > 1;
  if (per_channel) {
    for (int64_t zp : w->quantization->zero_point) {
      if (zp != 0)
        return ctx.Unsupported("per-channel weights with a zero point");
    }
    s->mult = PerChannelMultipliers(*in, *w, *out, static_cast<int>(s->n));
  } else {
    const double product =
        static_cast<double>(Scale(*in)) * static_cast<double>(Scale(*w));
    s->mult.assign(
        s->n, QuantizeMultiplier(product / static_cast<double>(Scale(*out))));
    s->filter_offset = -ZeroPoint(*w);
  }
  s->input_offset = -ZeroPoint(*in);
  s->output_offset = ZeroPoint(*out);
  GRAFT_RETURN_IF_ERROR(ActivationRangeQuantized(
      o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE, t,
      Scale(*out), s->output_offset, &s->act_min, &s->act_max));
  s->bias.assign(s->n, 0);
  if (bias != nullptr) {
    GRAFT_KERNEL_CHECK(bias->num_elements() == s->n,
                       "bias has %d elements, expected %d",
                       bias->num_elements(), s->n);
    if (!bias->constant) return ctx.Unsupported("a bias computed at run time");
    for (int64_t j = 0; j < s->n; ++j) {
      s->bias[j] = bias->type == tfl::TensorType_INT64
                       ? bias->data<int64_t>()[j]
                       : bias->data<int32_t>()[j];
    }
  }
  Shape shape;
  if (o && o->keep_num_dims) {
    GRAFT_KERNEL_CHECK(in->rank() >= 1 && in->shape.back() == s->k,
                       "keep_num_dims needs the input's last dim to be %d",
                       s->k);
    shape = in->shape;
    shape.back() = static_cast<int32_t>(s->n);
  } else {
    shape = {static_cast<int32_t>(s->m), static_cast<int32_t>(s->n)};
  }
  if (i8) ctx.SetEval(EvalQFc<int8_t, int8_t, int32_t>);
  if (u8) ctx.SetEval(EvalQFc<uint8_t, uint8_t, int32_t>);
  if ((i8 || u8) && QGemmOffsetFits(s->input_offset) &&
      QGemmOffsetFits(s->filter_offset)) {
    PrepareQFcGemm(ctx, *w, s);
    ctx.SetEval(i8 ? EvalQFcGemm<int8_t> : EvalQFcGemm<uint8_t>);
  }
  if (i16) ctx.SetEval(EvalQFc<int16_t, int8_t, int64_t>);
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, std::move(shape));
}

struct QBatchMatMulState : KernelState {
  MatMulGeometry g;
  int32_t lhs_offset = 0, rhs_offset = 0, output_offset = 0;
  QuantizedMultiplier mult;
  int32_t out_min = 0, out_max = 0;
  // INT8 GEMM path (EvalQBatchMatMulGemm): requantization of the n columns
  // and the per-thread scratch stride (packed rhs, then the int16 lhs rows).
  QGemmRequant rq;
  size_t packed_bytes = 0, thread_bytes = 0;
};

// INT8 x INT8: per output batch, the rhs packed and the lhs widened into
// the thread's scratch, then the GEMM.
absl::Status EvalQBatchMatMulGemm(EvalContext& ctx) {
  const auto& s = *ctx.state<QBatchMatMulState>();
  const MatMulGeometry& g = s.g;
  const int8_t* lhs = ctx.input(0)->data<int8_t>();
  const int8_t* rhs = ctx.input(1)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  auto body = [&](int thread, int64_t b0, int64_t b1) {
    uint8_t* base = ctx.scratch() + thread * s.thread_bytes;
    int16_t* packed = reinterpret_cast<int16_t*>(base);
    int16_t* a = reinterpret_cast<int16_t*>(base + s.packed_bytes);
    const int64_t kp = QGemmPaddedK(g.k);
    int64_t packed_rhs = -1;  // the rhs matrix now in `packed`
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t rb = g.batches[b].second;
      if (rb != packed_rhs) {
        QGemmPackStrided(rhs + rb * g.rhs_batch_elems, g.n, g.k, g.rhs_stride_k,
                         g.rhs_stride_n, s.rhs_offset, packed);
        packed_rhs = rb;
      }
      const int8_t* x = lhs + g.batches[b].first * g.lhs_batch_elems;
      if (g.lhs_stride_k == 1) {
        QGemmWidenRows(x, g.m, g.k, g.lhs_stride_m, s.lhs_offset, a);
      } else {
        for (int64_t i = 0; i < g.m; ++i) {
          for (int64_t k = 0; k < g.k; ++k) {
            a[i * kp + k] = static_cast<int16_t>(
                x[i * g.lhs_stride_m + k * g.lhs_stride_k] + s.lhs_offset);
          }
          if (kp != g.k) a[i * kp + g.k] = 0;
        }
      }
      QGemm(a, g.m, g.k, packed, g.n, 0, QGemmPanels(g.n), s.rq, 0,
            out + b * g.m * g.n, g.n);
    }
  };
  const int64_t nb = static_cast<int64_t>(g.batches.size());
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelForWithThreadIndex(nb, 1, body);
  } else {
    body(0, 0, nb);
  }
  return absl::OkStatus();
}

template <typename L, typename R, typename Acc>
absl::Status EvalQBatchMatMul(EvalContext& ctx) {
  const auto& s = *ctx.state<QBatchMatMulState>();
  const MatMulGeometry& g = s.g;
  const L* lhs = ctx.input(0)->data<L>();
  const R* rhs = ctx.input(1)->data<R>();
  L* out = ctx.output(0)->data<L>();
  auto body = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const L* a = lhs + g.batches[b].first * g.lhs_batch_elems;
      const R* w = rhs + g.batches[b].second * g.rhs_batch_elems;
      L* o = out + b * g.m * g.n;
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.n; ++j) {
          Acc acc = 0;
          for (int64_t k = 0; k < g.k; ++k) {
            acc += static_cast<Acc>(a[i * g.lhs_stride_m + k * g.lhs_stride_k] +
                                    s.lhs_offset) *
                   static_cast<Acc>(w[k * g.rhs_stride_k + j * g.rhs_stride_n] +
                                    s.rhs_offset);
          }
          const int32_t v = MultiplyByQuantizedMultiplier(
                                acc, s.mult.multiplier, s.mult.shift) +
                            s.output_offset;
          o[i * g.n + j] =
              static_cast<L>(std::min(s.out_max, std::max(s.out_min, v)));
        }
      }
    }
  };
  const int64_t nb = static_cast<int64_t>(g.batches.size());
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(nb, 1, body);
  } else {
    body(0, nb);
  }
  return absl::OkStatus();
}

absl::Status PrepareBatchMatMulQuantized(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* lhs, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* rhs, RequiredInput(ctx, 1));
  const Tensor& out = *ctx.output(0);
  const tfl::TensorType t = lhs->type;
  const bool i8 = t == tfl::TensorType_INT8 && rhs->type == t;
  const bool i16 = t == tfl::TensorType_INT16 && rhs->type == t;
  const bool i16x8 =
      t == tfl::TensorType_INT16 && rhs->type == tfl::TensorType_INT8;
  if (!(i8 || i16 || i16x8) || out.type != t || !IsQuantized(*lhs) ||
      !IsQuantized(*rhs) || !IsQuantized(out)) {
    return ctx.Unsupported(absl::StrFormat(
        "%s lhs with %s rhs", TensorTypeName(t), TensorTypeName(rhs->type)));
  }
  if (rhs->quantization->scale.size() > 1) {
    return ctx.Unsupported(
        "per-channel quantized rhs (TFLite's BATCH_MATMUL reads one scale)");
  }
  if (t == tfl::TensorType_INT16) {
    GRAFT_KERNEL_CHECK(
        ZeroPoint(*lhs) == 0 && ZeroPoint(*rhs) == 0 && ZeroPoint(out) == 0,
        "INT16 operands and output need zero points of 0");
  }
  auto* s = MakeState<QBatchMatMulState>(ctx);
  GRAFT_ASSIGN_OR_RETURN(s->g, ResolveBatchMatMul(ctx, *lhs, *rhs));
  s->lhs_offset = -ZeroPoint(*lhs);
  s->rhs_offset = -ZeroPoint(*rhs);
  s->output_offset = ZeroPoint(out);
  s->mult = QuantizeMultiplier(static_cast<double>(Scale(*lhs)) *
                               static_cast<double>(Scale(*rhs)) /
                               static_cast<double>(Scale(out)));
  TypeRange(t, &s->out_min, &s->out_max);
  if (i8) ctx.SetEval(EvalQBatchMatMul<int8_t, int8_t, int32_t>);
  if (i8 && QGemmOffsetFits(s->lhs_offset) && QGemmOffsetFits(s->rhs_offset)) {
    QGemmPrepareRequant(std::vector<QuantizedMultiplier>(s->g.n, s->mult),
                        std::vector<int64_t>(s->g.n, 0),
                        /*single_rounding=*/false, s->output_offset, s->out_min,
                        s->out_max, &s->rq);
    const int threads =
        ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
    s->packed_bytes = Align64(
        static_cast<size_t>(QGemmPackedSize(s->g.n, s->g.k)) * sizeof(int16_t));
    s->thread_bytes =
        s->packed_bytes +
        Align64(static_cast<size_t>(s->g.m * QGemmPaddedK(s->g.k)) *
                sizeof(int16_t));
    ctx.RequestScratch(threads * s->thread_bytes);
    ctx.SetEval(EvalQBatchMatMulGemm);
  }
  if (i16) ctx.SetEval(EvalQBatchMatMul<int16_t, int16_t, int64_t>);
  if (i16x8) ctx.SetEval(EvalQBatchMatMul<int16_t, int8_t, int64_t>);
  ctx.SetReductionLength(s->g.k);
  return ctx.SetOutputShape(0, s->g.out);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(FullyConnectedQuantized);
GRAFT_DEFINE_KERNEL(BatchMatMulQuantized);

}  // namespace graft
