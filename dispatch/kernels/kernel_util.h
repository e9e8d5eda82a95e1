// Helpers shared by the CPU kernels: argument checks, fused activations,
// broadcasting, axis normalization, padding arithmetic. Internal to
// dispatch/kernels/.
#ifndef GRAFT_DISPATCH_KERNELS_KERNEL_UTIL_H_
#define GRAFT_DISPATCH_KERNELS_KERNEL_UTIL_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "core/model.h"
#include "core/status.h"
#include "dispatch/kernel.h"
#include "dispatch/tensor.h"
#include "dispatch/thread_pool.h"

namespace graft::kernels {

// Returns InvalidArgument(StrFormat(...)) from the enclosing function when
// `cond` is false: for malformed models (wrong arity, bad shapes).
#define GRAFT_KERNEL_CHECK(cond, ...)                             \
  do {                                                            \
    if (!(cond)) {                                                \
      return ::absl::InvalidArgumentError(                        \
          ::absl::StrFormat(__VA_ARGS__));                        \
    }                                                             \
  } while (0)

// Checks the op's input and output counts: inputs in [min_in, max_in].
absl::Status CheckArity(const PrepareContext& ctx, int min_in, int max_in,
                        int num_out);

// Input i, which must be present.
absl::StatusOr<const Tensor*> RequiredInput(const PrepareContext& ctx, int i);

// The clamp bounds of a fused activation (NONE: +-inf). InvalidArgument for
// TANH and SIGN_BIT, which TFLite never fuses into these ops.
absl::Status ActivationRange(tfl::ActivationFunctionType act, float* lo,
                             float* hi);
template <typename T>
void ActivationRangeInt(tfl::ActivationFunctionType act, T* lo, T* hi) {
  *lo = std::numeric_limits<T>::lowest();
  *hi = std::numeric_limits<T>::max();
  if (act == tfl::ActivationFunctionType_RELU) *lo = 0;
  if (act == tfl::ActivationFunctionType_RELU6) *lo = 0, *hi = 6;
  if (act == tfl::ActivationFunctionType_RELU_N1_TO_1) *lo = -1, *hi = 1;
}

// NumPy/TFLite broadcasting of two shapes (aligned at the innermost dim).
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);

// axis in [-rank, rank) -> [0, rank).
absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank);

// The values of an integer tensor (INT32 or INT64). Its data must be
// available: a constant, or read at eval time.
absl::StatusOr<std::vector<int64_t>> ReadIntValues(const Tensor& t);

// Prepares a data-dependent output shape: when `values` (e.g. the shape
// input of RESHAPE) is constant, the caller computes the shape from it;
// otherwise the shape is taken from the model's declared output shape, which
// must then be fully static. Returns whether the values are constant.
bool IsConstant(const Tensor* t);

// FULLY_CONNECTED's output shape for m rows of k inputs and n outputs:
// [m, n], or with keep_num_dims the input's shape with its last dim (which
// must be k) replaced by n.
absl::StatusOr<Shape> FullyConnectedOutputShape(
    const tfl::FullyConnectedOptionsT* o, const Tensor& in, int64_t m,
    int64_t k, int64_t n);

// IEEE 754 binary16 -> binary32; exact for every input (NaN payloads kept).
float HalfToFloat(uint16_t h);

// Whether `t` is a STRING tensor whose bytes are known only at invoke: a
// kernel computing STRING outputs from it defers (DeferToRun).
inline bool StringBytesUnknown(const PrepareContext& ctx, const Tensor& t) {
  return t.type == tfl::TensorType_STRING && !ctx.ValuesKnown(&t);
}

// The model's declared shape of output i when fully static (no -1 in its
// shape or shape signature): what kernels whose output shape depends on an
// input computed at run time use at load. Otherwise nullopt, and such a
// kernel defers its prepare to invoke (PrepareContext::DeferToRun).
std::optional<Shape> StaticDeclaredOutputShape(const PrepareContext& ctx,
                                               int i);

// TFLite's convolution/pooling size arithmetic, in 64 bits: the filter,
// stride and dilation come from the file, and their products overflow 32.
inline int64_t EffectiveFilter(int64_t filter, int64_t dilation) {
  return (filter - 1) * dilation + 1;
}
// The output size; negative (refused when set as a shape) when the window
// does not fit, and never beyond int's range.
inline int ComputeOutSize(tfl::Padding padding, int64_t image, int64_t filter,
                          int64_t stride, int64_t dilation = 1) {
  const int64_t eff = EffectiveFilter(filter, dilation);
  if (stride <= 0) return 0;
  const int64_t out = padding == tfl::Padding_SAME
                          ? (image + stride - 1) / stride
                          : (image + stride - eff) / stride;  // VALID
  return static_cast<int>(
      std::clamp<int64_t>(out, -1, std::numeric_limits<int32_t>::max()));
}
// Padding before the first element (TFLite's ComputePaddingWithOffset; the
// odd extra pixel of SAME padding goes after).
inline int ComputePadding(int64_t stride, int64_t dilation, int64_t in,
                          int64_t filter, int64_t out) {
  const int64_t eff = EffectiveFilter(filter, dilation);
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + eff - in);
  return static_cast<int>(
      std::min<int64_t>(total / 2, std::numeric_limits<int32_t>::max()));
}
// Kernels index a window in int: `in` plus the dilated filter and a stride
// must stay below 2^31 (a file can ask for far more).
inline bool WindowFitsInt(int64_t in, int64_t filter, int64_t stride,
                          int64_t dilation) {
  return in >= 0 && filter > 0 && stride > 0 && dilation > 0 &&
         in + EffectiveFilter(filter, dilation) + stride <=
             std::numeric_limits<int32_t>::max();
}

// A transposed convolution scatters input index i to the output indices
// i * stride - pad + tap, computed in int: the input extent times the
// stride, plus the filter, must stay below 2^31.
inline bool TransposeWindowFitsInt(int64_t in, int64_t filter,
                                   int64_t stride) {
  return in >= 0 && filter >= 0 && stride > 0 &&
         in * stride + filter <= std::numeric_limits<int32_t>::max();
}

// TRANSPOSE_CONV's output_shape values as a shape: four dimensions, each in
// [0, 2^31) (a wider value is not cut to 32 bits).
inline absl::StatusOr<Shape> TransposeConvOutputShape(
    absl::Span<const int64_t> values) {
  GRAFT_KERNEL_CHECK(values.size() == 4, "output_shape must have 4 values");
  Shape shape;
  for (int64_t d : values) {
    GRAFT_KERNEL_CHECK(d >= 0 && d <= std::numeric_limits<int32_t>::max(),
                       "output_shape dimension %d is out of range", d);
    shape.push_back(static_cast<int32_t>(d));
  }
  return shape;
}

// A 2-D convolution's window (CONV_2D, DEPTHWISE_CONV_2D; Options is their
// options table): the strides and dilations, which must be positive, the
// output size and the padding before the first element, set in kernel
// state `s`, whose in_h, in_w, k_h and k_w are set.
template <typename Options, typename State>
absl::Status PrepareConvWindow(const Options& o, State* s) {
  s->stride_h = o.stride_h, s->stride_w = o.stride_w;
  s->dil_h = o.dilation_h_factor, s->dil_w = o.dilation_w_factor;
  GRAFT_KERNEL_CHECK(
      s->stride_h > 0 && s->stride_w > 0 && s->dil_h > 0 && s->dil_w > 0,
      "strides and dilations must be positive");
  GRAFT_KERNEL_CHECK(
      WindowFitsInt(s->in_h, s->k_h, s->stride_h, s->dil_h) &&
          WindowFitsInt(s->in_w, s->k_w, s->stride_w, s->dil_w),
      "the window (input %dx%d, filter %dx%d, strides %d,%d, dilations "
      "%d,%d) exceeds 32-bit index arithmetic",
      s->in_h, s->in_w, s->k_h, s->k_w, s->stride_h, s->stride_w, s->dil_h,
      s->dil_w);
  s->out_h = ComputeOutSize(o.padding, s->in_h, s->k_h, s->stride_h, s->dil_h);
  s->out_w = ComputeOutSize(o.padding, s->in_w, s->k_w, s->stride_w, s->dil_w);
  s->pad_h = ComputePadding(s->stride_h, s->dil_h, s->in_h, s->k_h, s->out_h);
  s->pad_w = ComputePadding(s->stride_w, s->dil_w, s->in_w, s->k_w, s->out_w);
  return absl::OkStatus();
}

// Such a window's rows as a row pipeline's stage (KernelState::
// DescribeRowBands) sees them, from a state PrepareConvWindow set whose
// in_w, in_c, out_c are set too.
template <typename State>
RowBandShape ConvWindowRows(const State& s) {
  RowBandShape shape;
  shape.in_h = s.in_h, shape.out_h = s.out_h;
  shape.in_row_floats = int64_t{s.in_w} * s.in_c;
  shape.out_row_floats = int64_t{s.out_w} * s.out_c;
  shape.stride = s.stride_h, shape.pad = s.pad_h;
  shape.extent = int64_t{s.k_h - 1} * s.dil_h + 1;
  return shape;
}

// The window geometry of AVERAGE_POOL_2D / MAX_POOL_2D on a 4-D NHWC input,
// shared by the float and quantized pooling kernels.
struct PoolGeometry {
  int batch = 0, in_h = 0, in_w = 0, c = 0, out_h = 0, out_w = 0;
  int k_h = 0, k_w = 0, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};

// Fills `g` from `in` and `o`; a load-time error names what is wrong.
inline absl::Status PreparePoolGeometry(const Tensor& in,
                                        const tfl::Pool2DOptionsT* o,
                                        PoolGeometry* g) {
  GRAFT_KERNEL_CHECK(in.rank() == 4, "input must be 4-D, got %s",
                     ShapeToString(in.shape));
  GRAFT_KERNEL_CHECK(o != nullptr, "missing Pool2DOptions");
  g->batch = in.dim(0), g->in_h = in.dim(1), g->in_w = in.dim(2);
  g->c = in.dim(3);
  g->k_h = o->filter_height, g->k_w = o->filter_width;
  g->stride_h = o->stride_h, g->stride_w = o->stride_w;
  GRAFT_KERNEL_CHECK(g->k_h > 0 && g->k_w > 0 && g->stride_h > 0 &&
                         g->stride_w > 0,
                     "filter and strides must be positive");
  GRAFT_KERNEL_CHECK(WindowFitsInt(g->in_h, g->k_h, g->stride_h, 1) &&
                         WindowFitsInt(g->in_w, g->k_w, g->stride_w, 1),
                     "the window (input %dx%d, filter %dx%d, strides %d,%d) "
                     "exceeds 32-bit index arithmetic",
                     g->in_h, g->in_w, g->k_h, g->k_w, g->stride_h,
                     g->stride_w);
  g->out_h = ComputeOutSize(o->padding, g->in_h, g->k_h, g->stride_h);
  g->out_w = ComputeOutSize(o->padding, g->in_w, g->k_w, g->stride_w);
  g->pad_h = ComputePadding(g->stride_h, 1, g->in_h, g->k_h, g->out_h);
  g->pad_w = ComputePadding(g->stride_w, 1, g->in_w, g->k_w, g->out_w);
  return absl::OkStatus();
}

// The geometry a pooling kernel walks. A pool over a single input column
// (in_w == out_w == 1: a 1-D pool along H, as converters emit MaxPool1D)
// reads the same taps in the same order as the pool of the input viewed as
// one row of pixels ([b][1][h][c], the same bytes) with the window's H and
// W parameters swapped; the kernels go along a row faster than down rows
// of one pixel each. The output's shape stays the original one.
inline PoolGeometry RowMajorPoolGeometry(PoolGeometry g) {
  if (g.in_w == 1 && g.out_w == 1 && g.in_h > 1) {
    std::swap(g.in_h, g.in_w);
    std::swap(g.out_h, g.out_w);
    std::swap(g.k_h, g.k_w);
    std::swap(g.stride_h, g.stride_w);
    std::swap(g.pad_h, g.pad_w);
  }
  return g;
}

// The output columns [*begin, *end) whose windows lie inside the input's
// columns (no padding tap, so the same tap count): the pooling kernels run
// four neighbouring ones together.
inline void InteriorPoolColumns(const PoolGeometry& g, int* begin, int* end) {
  *begin = std::min(g.out_w, (g.pad_w + g.stride_w - 1) / g.stride_w);
  const int last_start = g.in_w + g.pad_w - g.k_w;  // of a window inside
  *end = std::max(
      *begin,
      std::min(g.out_w, last_start >= 0 ? last_start / g.stride_w + 1 : 0));
}

// Collapsed N-D broadcast of up to kMaxBroadcastDims dims for binary and
// ternary elementwise ops (and TILE, which views rank r as 2r dims).
// Adjacent dims with the same broadcast pattern are merged, so the common
// cases (same shape, scalar, bias over channels) are one or two dims and
// the innermost loop is contiguous.
inline constexpr int kMaxBroadcastDims = 12;
struct BroadcastPlan {
  int rank = 0;  // collapsed rank (>= 1)
  int64_t out_dims[kMaxBroadcastDims] = {};
  // Element strides of each operand per collapsed output dim (0 when the
  // operand is broadcast along it).
  int64_t strides[3][kMaxBroadcastDims] = {};
  int num_operands = 0;
};
absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(
    const Shape& out, absl::Span<const Shape* const> operands);

// Calls fn(out_offset, offsets[0..n), count, inner_strides[0..n)) for each
// innermost run of the plan with index in [run_begin, run_end) (runs are
// numbered in output order; BroadcastRuns counts them); count elements are
// contiguous in the output.
template <typename Fn>
void ForEachBroadcastRunIn(const BroadcastPlan& p, int64_t run_begin,
                           int64_t run_end, Fn&& fn) {
  // An empty range (an output with a zero outer dim has no runs) must not
  // divide by that dim below.
  if (run_begin >= run_end) return;
  const int r = p.rank;
  const int64_t inner = p.out_dims[r - 1];
  int64_t idx[kMaxBroadcastDims] = {};
  int64_t off[3] = {0, 0, 0};
  // The multi-index and offsets of run_begin.
  for (int64_t rest = run_begin, d = r - 2; d >= 0; --d) {
    idx[d] = rest % p.out_dims[d];
    rest /= p.out_dims[d];
    for (int k = 0; k < p.num_operands; ++k) off[k] += idx[d] * p.strides[k][d];
  }
  int64_t out_off = run_begin * inner;
  const int64_t inner_stride[3] = {p.strides[0][r - 1], p.strides[1][r - 1],
                                   p.strides[2][r - 1]};
  for (int64_t o = run_begin; o < run_end; ++o) {
    fn(out_off, off, inner, inner_stride);
    out_off += inner;
    // Increment the multi-index over the outer dims.
    for (int d = r - 2; d >= 0; --d) {
      for (int k = 0; k < p.num_operands; ++k) off[k] += p.strides[k][d];
      if (++idx[d] < p.out_dims[d]) break;
      for (int k = 0; k < p.num_operands; ++k) {
        off[k] -= p.strides[k][d] * p.out_dims[d];
      }
      idx[d] = 0;
    }
  }
}

// How many innermost runs the plan has.
inline int64_t BroadcastRuns(const BroadcastPlan& p) {
  int64_t outer = 1;
  for (int d = 0; d < p.rank - 1; ++d) outer *= p.out_dims[d];
  return outer;
}

template <typename Fn>
void ForEachBroadcastRun(const BroadcastPlan& p, Fn&& fn) {
  ForEachBroadcastRunIn(p, 0, BroadcastRuns(p), std::forward<Fn>(fn));
}

// Elements per piece when an elementwise op is split over the thread pool:
// smaller pieces cost more to hand out than they save.
inline constexpr int64_t kElementwiseChunk = 16384;

// Splits a plan's innermost dim of more than 2 * kMaxRunPiece elements into
// two, [n / L, L], with L the piece length that divides n: a multiple of 64
// elements in [kMinRunPiece, kMaxRunPiece] if n has one, else any divisor
// there (the plan is unchanged if n has none, or has no dim to spare). The
// same elements in the same order, so the same results; a same-shape op
// (one run) then has runs to split over threads. For the elementwise ops
// that ParallelForBroadcastRuns splits; apply at prepare.
inline constexpr int64_t kMinRunPiece = 1024;
inline constexpr int64_t kMaxRunPiece = 4096;
void SplitLongRuns(BroadcastPlan* p);

// Calls fn(run_begin, run_end) over ranges covering the plan's runs: all of
// them at once when the output has at most kElementwiseChunk elements,
// else split over `pool` (may be null) in pieces of at least a quarter of
// that (finer pieces even out the threads' shares). fn walks its runs with
// ForEachBroadcastRunIn.
template <typename Fn>
void ParallelForBroadcastRuns(ThreadPool* pool, const BroadcastPlan& p,
                              Fn&& fn) {
  const int64_t runs = BroadcastRuns(p);
  const int64_t inner = std::max<int64_t>(1, p.out_dims[p.rank - 1]);
  if (pool != nullptr && runs > 1 && runs * inner > kElementwiseChunk) {
    pool->ParallelFor(runs, std::max<int64_t>(1, kElementwiseChunk / 4 / inner),
                      fn);
  } else {
    fn(int64_t{0}, runs);
  }
}

// BATCH_MATMUL's geometry: lhs [..., M, K] ([..., K, M] with adj_x) times
// rhs [..., K, N] ([..., N, K] with adj_y), batch dims broadcast as NumPy.
// Element (i, k) of lhs matrix b is at b * lhs_batch_elems + i *
// lhs_stride_m + k * lhs_stride_k; element (k, j) of rhs likewise.
struct MatMulGeometry {
  int64_t m = 0, k = 0, n = 0;
  bool adj_x = false, adj_y = false;
  int64_t lhs_stride_m = 0, lhs_stride_k = 0;
  int64_t rhs_stride_k = 0, rhs_stride_n = 0;
  int64_t lhs_batch_elems = 0, rhs_batch_elems = 0;
  int64_t rhs_batches = 0;  // distinct rhs matrices
  // Per output batch: the lhs and rhs matrix it reads.
  std::vector<std::pair<int64_t, int64_t>> batches;
  Shape out;  // [batch..., M, N]
};
absl::StatusOr<MatMulGeometry> ResolveBatchMatMul(const PrepareContext& ctx,
                                                  const Tensor& lhs,
                                                  const Tensor& rhs);

// Row-major strides of a shape, in elements.
inline std::vector<int64_t> Strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    s[i] = s[i + 1] * shape[i + 1];
  }
  return s;
}

// Product of shape[begin, end).
inline int64_t DimProduct(const Shape& shape, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= shape[i];
  return n;
}

// True for a tensor of a quantized integer type (INT8, UINT8, INT16) with
// quantization scales: its values are real = scale * (q - zero_point), so
// a plain integer kernel would be wrong. (Float tensors may carry
// quantization parameters from calibration; they mean nothing at run time.)
inline bool IsQuantized(const Tensor& t) {
  return (t.type == tfl::TensorType_INT8 || t.type == tfl::TensorType_UINT8 ||
          t.type == tfl::TensorType_INT16) &&
         t.quantization != nullptr && !t.quantization->scale.empty();
}

// True when both tensors read their integers the same way (no quantization
// on either, or equal scales and zero points), so moving bytes between them
// is exact.
inline bool SameQuantization(const Tensor& a, const Tensor& b) {
  if (!IsQuantized(a) && !IsQuantized(b)) return true;
  if (!IsQuantized(a) || !IsQuantized(b)) return false;
  return a.quantization->scale == b.quantization->scale &&
         a.quantization->zero_point == b.quantization->zero_point;
}

inline bool IsIntegerIndexType(tfl::TensorType t) {
  return t == tfl::TensorType_INT32 || t == tfl::TensorType_INT64;
}

// Calls fn(T{}) with the unsigned integer type T of `size` bytes (1, 2, 4,
// 8), for kernels that only move elements: the dtype does not matter, only
// its size. Returns false for other sizes.
template <typename Fn>
bool DispatchByElementSize(size_t size, Fn&& fn) {
  switch (size) {
    case 1: fn(uint8_t{}); return true;
    case 2: fn(uint16_t{}); return true;
    case 4: fn(uint32_t{}); return true;
    case 8: fn(uint64_t{}); return true;
    default: return false;
  }
}

// Makes a state of type S, hands it to ctx and returns it.
template <typename S>
S* MakeState(PrepareContext& ctx) {
  auto state = std::make_unique<S>();
  S* raw = state.get();
  ctx.SetState(std::move(state));
  return raw;
}

}  // namespace graft::kernels

// Defines the Kernel object kernel_list.inc names `Name`, from
// kernels::Prepare##Name (which picks the eval with SetEval). Use at
// namespace graft scope.
#define GRAFT_DEFINE_KERNEL(Name)                         \
  extern const Kernel k##Name##Kernel = {#Name,           \
                                         kernels::Prepare##Name, nullptr}

#endif  // GRAFT_DISPATCH_KERNELS_KERNEL_UTIL_H_
