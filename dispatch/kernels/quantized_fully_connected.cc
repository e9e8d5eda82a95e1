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
// rounding of the other quantized kernels; the 16x8 form rounds once too,
// but half away from zero and with the full multiplier
// (MultiplyByQuantizedMultiplierRoundAway), not with the Q15 int64
// MultiplyByQuantizedMultiplier of the other 16x8 kernels.
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
// across the thread pool. On AVX-512 VNNI machines (cpu_features.h), INT8
// with constant weights of zero point 0 takes QGemmVnni instead (weights
// packed at prepare, input rows + 128 as unsigned bytes). The 16x8 forms
// (and 8-bit zero points outside their type's range) run the reference
// loops.
//
// Quantized BATCH_MATMUL (reference_ops::BatchMatMul): INT8 x INT8 -> INT8
// with int32 sums of (lhs - lhs_zero_point) * (rhs - rhs_zero_point); INT16
// x INT16 and INT16 x INT8 -> INT16 (zero points 0) with int64 sums and the
// int64 MultiplyByQuantizedMultiplier; one multiplier, no activation.
// The multiplier is what TFLite's batch_matmul.cc Prepare computes with
// GetQuantizedConvolutionMultipler (kernel_util.cc, the overload without
// bias): lhs_scale * rhs_scale multiplied in float, then / output_scale in
// double (unlike FULLY_CONNECTED above; measured: the double product gives
// off-by-one outputs against ai-edge-litert 2.3.0's BUILTIN_REF). The scales
// are the tensors' legacy per-tensor parameters (TfLiteTensor::params),
// which the interpreter sets to scale 0 for a tensor with several scales
// (GetLegacyQuantization): with a per-channel rhs TFLite's multiplier is 0
// and every output is the output zero point (all zeros for the INT16 x
// per-channel INT8 einsum models of LiteRT's testdata). Graft refuses a
// per-channel rhs at load, saying so, rather than reproduce that.
//
// INT16 x INT8 runs the rhs transposed to rows of k int16 values (at prepare
// when constant), int32 vector sums of at most 2048 products per lane block
// (|int16 * int8| <= 2^22, so 256 per lane cannot overflow) added into
// int64: the reference's int64 sum in another order, hence bit-exact.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/cpu_features.h"
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
  // AVX-512 VNNI (EvalQFcVnni): INT8 with constant weights of zero point 0,
  // packed at prepare; the input rows become x + 128 in scratch.
  bool vnni = false;
  QGemmVnniWeights vnni_w;
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

// EvalQFcGemm's tasks on the VNNI GEMM; scratch: per thread chunk_rows
// unsigned-byte input rows.
absl::Status EvalQFcVnni(EvalContext& ctx) {
  const auto& s = *ctx.state<QFcState>();
  const int8_t* in = ctx.input(0)->data<int8_t>();
  int8_t* out = ctx.output(0)->data<int8_t>();
  const int64_t kp = QGemmVnniPaddedK(s.k);
  auto body = [&](int thread, int64_t begin, int64_t end) {
    uint8_t* a = ctx.scratch_as<uint8_t>() + thread * s.chunk_rows * kp;
    int64_t converted = -1;  // the row block now in `a`
    for (int64_t t = begin; t < end; ++t) {
      const int64_t rb = t / s.panel_groups, pg = t % s.panel_groups;
      const int64_t r0 = rb * s.chunk_rows;
      const int64_t rows = std::min(s.m - r0, s.chunk_rows);
      const int64_t p0 = pg * s.group_panels;
      const int64_t p1 = std::min(s.panels, p0 + s.group_panels);
      if (p0 >= p1) continue;
      if (converted != rb) {
        QGemmVnniRowsFromInt8(in + r0 * s.k, rows, s.k, s.k, a);
        converted = rb;
      }
      QGemmVnni(a, rows, s.vnni_w, p0, p1, s.rq, 0, out + r0 * s.n, s.n);
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
  s->vnni = w.constant && w.type == tfl::TensorType_INT8 &&
            s->filter_offset == 0 && KernelIsaAtLeast(CpuIsa::kAvx512Vnni) &&
            s->input_offset >= -127 && s->input_offset <= 128;
  const int64_t mr = s->vnni ? kQGemmVnniMr : kQGemmMr;
  const int64_t per_thread = (s->m + threads - 1) / threads;
  s->chunk_rows =
      std::clamp<int64_t>((per_thread + mr - 1) / mr * mr, mr, 48);
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
  if (s->vnni) {
    QGemmVnniPackRows(w.data<int8_t>(), s->n, s->k, s->k,
                      s->input_offset - 128, &s->vnni_w);
    ctx.RequestScratch(static_cast<size_t>(threads * s->chunk_rows *
                                           QGemmVnniPaddedK(s->k)));
    return;
  }
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
          // 16x8: rounded once, half away from zero (see the top).
          v = MultiplyByQuantizedMultiplierRoundAway(acc, s.mult[j].multiplier,
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
  GRAFT_ASSIGN_OR_RETURN(Shape shape,
                         FullyConnectedOutputShape(o, *in, s->m, s->k, s->n));
  if (i8) ctx.SetEval(EvalQFc<int8_t, int8_t, int32_t>);
  if (u8) ctx.SetEval(EvalQFc<uint8_t, uint8_t, int32_t>);
  if ((i8 || u8) && QGemmOffsetFits(s->input_offset) &&
      QGemmOffsetFits(s->filter_offset)) {
    PrepareQFcGemm(ctx, *w, s);
    ctx.SetEval(s->vnni ? EvalQFcVnni
                : i8    ? EvalQFcGemm<int8_t>
                        : EvalQFcGemm<uint8_t>);
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
  // The INT16 x INT8 path (EvalQBatchMatMul16x8) uses the same stride: an
  // rhs transposed per invoke (when not constant), then the lhs block's
  // rows (when adj_x).
  QGemmRequant rq;
  size_t packed_bytes = 0, thread_bytes = 0;
  // INT16 x INT8: the constant rhs as [rhs_batches][n][k] int16 (else
  // empty), and each output batch split into row_blocks of chunk_rows.
  std::vector<int16_t> rhs_rows;
  int64_t chunk_rows = 0, row_blocks = 0;
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

// The reference loops (INT8 with zero points outside the GEMM's range,
// INT16 x INT16).
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

// The rhs matrix at w as n rows of k int16 values:
// dst[j * k + kk] = w[kk * stride_k + j * stride_n].
void PackRhsRows16(const int8_t* w, const MatMulGeometry& g, int16_t* dst) {
  for (int64_t kk = 0; kk < g.k; ++kk) {
    for (int64_t j = 0; j < g.n; ++j) {
      dst[j * g.k + kk] = w[kk * g.rhs_stride_k + j * g.rhs_stride_n];
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
#define GRAFT_QBMM_TARGET_CLONES \
  __attribute__((target_clones("avx2", "default")))
#else
#define GRAFT_QBMM_TARGET_CLONES
#endif

// out[r * n + j] = requantize(sum_kk x[r * x_stride + kk] * w[j * k + kk])
// for r < rows: four columns at a time, in int32 lanes over blocks of
// kLaneBlock steps (256 products of at most 2^22 per lane), then in int64.
GRAFT_QBMM_TARGET_CLONES void Rows16x8(const int16_t* x, int64_t x_stride,
                                       int64_t rows, const int16_t* w,
                                       const QBatchMatMulState& s,
                                       int16_t* out) {
  constexpr int kCols = 4;
  constexpr int64_t kLaneBlock = 2048;
  const int64_t n = s.g.n, k = s.g.k;
  for (int64_t r = 0; r < rows; ++r) {
    const int16_t* a = x + r * x_stride;
    for (int64_t j0 = 0; j0 < n; j0 += kCols) {
      const int16_t* b[kCols];
      for (int c = 0; c < kCols; ++c) {
        b[c] = w + std::min<int64_t>(j0 + c, n - 1) * k;
      }
      int64_t sum[kCols] = {};
      int64_t kk = 0;
      while (kk + 8 <= k) {
        const int64_t end =
            kk + std::min<int64_t>((k - kk) / 8 * 8, kLaneBlock);
        V8i acc[kCols] = {};
        for (; kk < end; kk += 8) {
          V8s av;
          std::memcpy(&av, a + kk, sizeof(av));
          const V8i ai = __builtin_convertvector(av, V8i);
#pragma GCC unroll 4
          for (int c = 0; c < kCols; ++c) {
            V8s bv;
            std::memcpy(&bv, b[c] + kk, sizeof(bv));
            acc[c] += ai * __builtin_convertvector(bv, V8i);
          }
        }
        for (int c = 0; c < kCols; ++c) {
          for (int l = 0; l < 8; ++l) sum[c] += acc[c][l];
        }
      }
      for (; kk < k; ++kk) {
        for (int c = 0; c < kCols; ++c) sum[c] += int64_t{a[kk]} * b[c][kk];
      }
      const int cols = static_cast<int>(std::min<int64_t>(kCols, n - j0));
      for (int c = 0; c < cols; ++c) {
        const int32_t v = MultiplyByQuantizedMultiplier(
                              sum[c], s.mult.multiplier, s.mult.shift) +
                          s.output_offset;
        out[r * n + j0 + c] =
            static_cast<int16_t>(std::min(s.out_max, std::max(s.out_min, v)));
      }
    }
  }
}

// INT16 x INT8: tasks of chunk_rows rows of one output batch.
absl::Status EvalQBatchMatMul16x8(EvalContext& ctx) {
  const auto& s = *ctx.state<QBatchMatMulState>();
  const MatMulGeometry& g = s.g;
  const int16_t* lhs = ctx.input(0)->data<int16_t>();
  const int8_t* rhs = ctx.input(1)->data<int8_t>();
  int16_t* out = ctx.output(0)->data<int16_t>();
  auto body = [&](int thread, int64_t t0, int64_t t1) {
    uint8_t* base = ctx.scratch() + thread * s.thread_bytes;
    int16_t* packed = reinterpret_cast<int16_t*>(base);
    int16_t* rows = reinterpret_cast<int16_t*>(base + s.packed_bytes);
    int64_t packed_rhs = -1;  // the rhs matrix now in `packed`
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / s.row_blocks;
      const int64_t r0 = t % s.row_blocks * s.chunk_rows;
      const int64_t nr = std::min(s.chunk_rows, g.m - r0);
      const int64_t rb = g.batches[b].second;
      const int16_t* w = packed;
      if (!s.rhs_rows.empty()) {
        w = s.rhs_rows.data() + rb * g.n * g.k;
      } else if (rb != packed_rhs) {
        PackRhsRows16(rhs + rb * g.rhs_batch_elems, g, packed);
        packed_rhs = rb;
      }
      const int16_t* x =
          lhs + g.batches[b].first * g.lhs_batch_elems + r0 * g.lhs_stride_m;
      int64_t x_stride = g.lhs_stride_m;
      if (g.lhs_stride_k != 1) {  // adj_x: gather the block's rows
        for (int64_t i = 0; i < nr; ++i) {
          for (int64_t kk = 0; kk < g.k; ++kk) {
            rows[i * g.k + kk] = x[i * g.lhs_stride_m + kk * g.lhs_stride_k];
          }
        }
        x = rows;
        x_stride = g.k;
      }
      Rows16x8(x, x_stride, nr, w, s, out + (b * g.m + r0) * g.n);
    }
  };
  const int64_t tasks = static_cast<int64_t>(g.batches.size()) * s.row_blocks;
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelForWithThreadIndex(tasks, 1, body);
  } else {
    body(0, 0, tasks);
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
        "a per-channel quantized rhs: TFLite's BATCH_MATMUL reads its legacy "
        "per-tensor scale, 0, so its output is the zero point everywhere");
  }
  if (lhs->quantization->scale.size() > 1 ||
      out.quantization->scale.size() > 1) {
    return ctx.Unsupported("per-channel quantized lhs or output");
  }
  if (t == tfl::TensorType_INT16) {
    GRAFT_KERNEL_CHECK(
        ZeroPoint(*lhs) == 0 && ZeroPoint(*rhs) == 0 && ZeroPoint(out) == 0,
        "INT16 operands and output need zero points of 0");
  }
  auto* s = MakeState<QBatchMatMulState>(ctx);
  GRAFT_ASSIGN_OR_RETURN(s->g, ResolveBatchMatMul(ctx, *lhs, *rhs));
  const MatMulGeometry& g = s->g;
  s->lhs_offset = -ZeroPoint(*lhs);
  s->rhs_offset = -ZeroPoint(*rhs);
  s->output_offset = ZeroPoint(out);
  // The scales' product in float, as TFLite's GetQuantizedConvolutionMultipler.
  s->mult = QuantizeMultiplier(static_cast<double>(Scale(*lhs) * Scale(*rhs)) /
                               static_cast<double>(Scale(out)));
  TypeRange(t, &s->out_min, &s->out_max);
  const int threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
  if (i8 && QGemmOffsetFits(s->lhs_offset) &&
             QGemmOffsetFits(s->rhs_offset)) {
    QGemmPrepareRequant(std::vector<QuantizedMultiplier>(g.n, s->mult),
                        std::vector<int64_t>(g.n, 0),
                        /*single_rounding=*/false, s->output_offset, s->out_min,
                        s->out_max, &s->rq);
    s->packed_bytes = Align64(static_cast<size_t>(QGemmPackedSize(g.n, g.k)) *
                              sizeof(int16_t));
    s->thread_bytes =
        s->packed_bytes +
        Align64(static_cast<size_t>(g.m * QGemmPaddedK(g.k)) * sizeof(int16_t));
    ctx.RequestScratch(threads * s->thread_bytes);
    ctx.SetEval(EvalQBatchMatMulGemm);
  } else if (i8) {
    ctx.SetEval(EvalQBatchMatMul<int8_t, int8_t, int32_t>);
  } else if (i16) {
    ctx.SetEval(EvalQBatchMatMul<int16_t, int16_t, int64_t>);
  } else {
    // Row blocks of at most 32 rows, enough of them to spread the threads.
    s->chunk_rows = std::clamp<int64_t>((g.m + threads - 1) / threads, 1, 32);
    s->row_blocks = (g.m + s->chunk_rows - 1) / s->chunk_rows;
    const size_t matrix = static_cast<size_t>(g.n * g.k);
    if (rhs->constant) {
      s->rhs_rows.resize(static_cast<size_t>(g.rhs_batches) * matrix);
      for (int64_t rb = 0; rb < g.rhs_batches; ++rb) {
        PackRhsRows16(rhs->data<int8_t>() + rb * g.rhs_batch_elems, g,
                      s->rhs_rows.data() + rb * matrix);
      }
    } else {
      s->packed_bytes = Align64(matrix * sizeof(int16_t));
    }
    s->thread_bytes = s->packed_bytes +
                      (g.lhs_stride_k != 1
                           ? Align64(static_cast<size_t>(s->chunk_rows * g.k) *
                                     sizeof(int16_t))
                           : 0);
    ctx.RequestScratch(threads * s->thread_bytes);
    ctx.SetEval(EvalQBatchMatMul16x8);
  }
  ctx.SetReductionLength(g.k);
  return ctx.SetOutputShape(0, g.out);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(FullyConnectedQuantized);
GRAFT_DEFINE_KERNEL(BatchMatMulQuantized);

}  // namespace graft
