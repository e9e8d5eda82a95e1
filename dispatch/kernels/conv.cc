// CONV_2D (float32): NHWC input, OHWI filter [Cout, KH, KW, Cin/groups],
// optional bias, SAME/VALID padding, strides, dilations, groups and a fused
// activation, as TFLite; and a HARD_SWISH the runtime fuses into it
// (EpilogueOp), applied in the GEMM tile's registers.
//
// Lowered to GEMM: the filter of each group is packed at prepare time (when
// constant). A 1x1, stride-1, unpadded convolution needs no im2col: the input
// is the GEMM's A. Any other reads the input in place through an
// indirection table built at prepare (IndirectA, gemm.h: per output pixel and
// filter tap, the offset of the input pixel, or -1 for padding), so nothing
// is copied; the K order (tap, channel) is the im2col row's, so the sums are
// the same. With one group and no horizontal dilation, a filter row's taps
// read consecutive input pixels, so a "tap" is the whole filter row (k_w *
// in_c floats; fewer, longer runs for the micro-kernel): where the row
// crosses the left or right edge, the tap reads a copy of that window with
// its outside pixels zero, made at each eval into scratch (FillEdges: a
// few windows per input row, where a copy of the whole input with zero
// columns on both sides cost a serial pass over it; rows above and below
// the input read as zero taps). Only an input too large for 32-bit offsets
// falls back to chunks of output pixels expanded into an im2col buffer (one
// per thread, from scratch). A direct convolution with constant weights
// also takes a per-channel MUL before it (a squeeze-and-excite scale;
// AbsorbInputScale): each eval packs the weights with row k times the
// scale's element k into scratch and reads the MUL's input, so the product
// is never written. With one group, constant weights and batch 1 (read
// directly or through the offset table) it computes any band of output
// rows on its own, the same GEMM on those rows (EvalRowBand), for a row
// pipeline (dispatch/row_pipeline.cc).
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "dispatch/kernels/gemm.h"
#include "dispatch/kernels/kernel_util.h"
#include "dispatch/thread_pool.h"

namespace graft {
namespace kernels {
namespace {

// Output pixels per im2col chunk: large enough to amortize B-panel loads,
// small enough for the chunk to stay in L2 for typical K.
constexpr int64_t kRowsPerChunk = 96;

struct ConvState : KernelState {
  int batch, in_h, in_w, in_c, out_h, out_w, out_c;
  int k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;
  int groups, group_in_c, group_out_c;
  int64_t k;  // GEMM K = k_h * k_w * group_in_c
  bool direct = false;  // 1x1, stride 1, no padding, one group: no im2col
  // [out_h * out_w, k_h * k_w] input offsets (-1: padding), when not direct
  // and the input fits 32-bit offsets; empty otherwise.
  std::vector<int32_t> offsets;
  std::vector<float> zeros;  // tap_len zeros, for padding taps
  // Taps of the offset table: k_h (whole filter rows, tap_len k_w * in_c)
  // or k_h * k_w (tap_len group_in_c).
  int taps = 0;
  int64_t tap_len = 0;
  // Whole-row taps that cross the input's left or right edge: the input
  // row and first column (negative left of the input) of each window,
  // copied per image into scratch after tap_len zeros (IndirectA's edge
  // buffer, edge_floats each).
  struct EdgeWindow {
    int iy, ix;
  };
  std::vector<EdgeWindow> edge_windows;
  int64_t edge_floats = 0;
  float lo, hi;
  PackedVector packed;    // per group, PackedRhsSize(k, group_out_c)
  bool pack_at_eval = false;    // filter is not constant: pack into scratch
  size_t packed_floats = 0;     // per group
  size_t im2col_floats = 0;     // per thread
  int threads = 1;
  bool hard_swish = false;  // a fused HARD_SWISH after the activation

  bool AppendEpilogue(EpilogueOp op) override {
    if (op != EpilogueOp::kHardSwish || hard_swish) return false;
    hard_swish = true;
    return true;
  }

  // A per-channel MUL before a direct convolution with constant weights
  // goes into the weights: row k of B (input channel k) times scale[k],
  // packed anew into scratch at each eval (k * out_c multiplies, against
  // the MUL's pixels * k), and the GEMM reads x.
  bool AbsorbInputScale(const Tensor* x, const Tensor* scale,
                        size_t* extra_scratch_bytes) override {
    if (!direct || pack_at_eval || scaled_input != nullptr ||
        scale->num_elements() != in_c ||
        x->num_elements() != int64_t{batch} * in_h * in_w * in_c) {
      return false;
    }
    scaled_input = x;
    input_scale = scale;
    // A direct convolution with constant weights requests no scratch at
    // prepare: the scaled weights are all of it.
    *extra_scratch_bytes = packed_floats * sizeof(float);
    return true;
  }

  // Set by AbsorbInputScale: eval reads these instead of input 0.
  const Tensor* scaled_input = nullptr;
  const Tensor* input_scale = nullptr;

  // One group of constant weights, batch 1, read directly or through the
  // offset table (the first stage of a pipeline then).
  bool DescribeRowBands(RowBandShape* shape) const override {
    if (batch != 1 || groups != 1 || pack_at_eval || scaled_input != nullptr ||
        (!direct && offsets.empty())) {
      return false;
    }
    *shape = ConvWindowRows(*this);
    shape->reads_whole_input = !direct;
    return true;
  }
  void BeginRowBands(EvalContext& ctx) const override;
  void EvalRowBand(EvalContext& ctx, const RowBand& band) const override;
};

void PackFilter(const ConvState& s, const float* filter, float* packed) {
  for (int g = 0; g < s.groups; ++g) {
    // Filter rows of group g: [group_out_c, k] row-major, i.e. B = W^T.
    PackRhs(filter + static_cast<int64_t>(g) * s.group_out_c * s.k, s.k,
            s.group_out_c, /*stride_k=*/1, /*stride_n=*/s.k,
            packed + g * s.packed_floats);
  }
}

void BuildOffsets(ConvState& s) {
  const bool rows = s.groups == 1 && s.dil_w == 1 && s.k_w > 1;
  s.taps = rows ? s.k_h : s.k_h * s.k_w;
  s.tap_len = rows ? int64_t{s.k_w} * s.in_c : s.group_in_c;
  // Edge window index of (input row, output column), made on first use.
  std::vector<int32_t> window(rows ? size_t{1} * s.in_h * s.out_w : 0, -1);
  s.offsets.resize(static_cast<size_t>(s.out_h) * s.out_w * s.taps);
  int32_t* o = s.offsets.data();
  for (int oy = 0; oy < s.out_h; ++oy) {
    for (int ox = 0; ox < s.out_w; ++ox) {
      const int ix0 = ox * s.stride_w - s.pad_w;
      for (int ky = 0; ky < s.k_h; ++ky) {
        const int iy = oy * s.stride_h - s.pad_h + ky * s.dil_h;
        const bool row_in = iy >= 0 && iy < s.in_h;
        if (!rows) {
          for (int kx = 0; kx < s.k_w; ++kx) {
            const int ix = ix0 + kx * s.dil_w;
            *o++ = !row_in || ix < 0 || ix >= s.in_w
                       ? -1
                       : (iy * s.in_w + ix) * s.in_c;
          }
        } else if (!row_in) {
          *o++ = -1;
        } else if (ix0 >= 0 && ix0 + s.k_w <= s.in_w) {
          *o++ = (iy * s.in_w + ix0) * s.in_c;
        } else {
          int32_t& w = window[size_t{1} * iy * s.out_w + ox];
          if (w < 0) {
            w = static_cast<int32_t>(s.edge_windows.size());
            s.edge_windows.push_back({iy, ix0});
          }
          // Window w starts tap_len * (w + 1) floats into the edge buffer.
          *o++ = static_cast<int32_t>(-1 - s.tap_len * (w + 1));
        }
      }
    }
  }
  s.zeros.assign(s.tap_len, 0.0f);
  s.edge_floats = s.tap_len * static_cast<int64_t>(s.edge_windows.size() + 1);
}

// Each image's edge buffer (edge_floats apart): tap_len zeros, then each
// edge window's k_w pixels, zero where outside the input.
void FillEdges(const ConvState& s, const float* input, float* edge) {
  const int64_t c = s.in_c;
  for (int b = 0; b < s.batch; ++b) {
    const float* image = input + int64_t{b} * s.in_h * s.in_w * c;
    float* dst = edge + b * s.edge_floats;
    std::fill(dst, dst + s.tap_len, 0.0f);
    dst += s.tap_len;
    for (const ConvState::EdgeWindow& w : s.edge_windows) {
      // Pixels [x0, x1) of the window are inside the input, one run.
      const int x0 = std::min(s.k_w, std::max(0, -w.ix));
      const int x1 = std::max(x0, std::min(s.k_w, s.in_w - w.ix));
      std::fill(dst, dst + x0 * c, 0.0f);
      std::memcpy(dst + x0 * c,
                  image + (int64_t{w.iy} * s.in_w + w.ix + x0) * c,
                  sizeof(float) * (x1 - x0) * c);
      std::fill(dst + x1 * c, dst + s.k_w * c, 0.0f);
      dst += s.k_w * c;
    }
  }
}

void ConvState::BeginRowBands(EvalContext& ctx) const {
  if (!direct && !edge_windows.empty()) {
    FillEdges(*this, ctx.input(0)->data<float>(), ctx.scratch_as<float>());
  }
}

void ConvState::EvalRowBand(EvalContext& ctx, const RowBand& band) const {
  const Tensor* bias_t = ctx.input(2);
  // The band's first output pixel.
  const int64_t first = band.begin * out_w;
  auto report_rows = [&](int64_t r0, int64_t r1) {
    ctx.OutputReady((first + r0) * out_c, (first + r1) * out_c);
  };
  const absl::FunctionRef<void(int64_t, int64_t)> rows_done = report_rows;
  GemmArgs g;
  g.m = (band.end - band.begin) * out_w, g.n = out_c, g.k = k;
  g.packed_b = packed.data();
  g.bias = bias_t ? bias_t->data<float>() : nullptr;
  g.lo = lo, g.hi = hi, g.hard_swish = hard_swish;
  g.c = band.output + (band.begin - band.output_row0) * out_w * out_c;
  g.ldc = out_c;
  g.rows_done = ctx.has_consumer() ? &rows_done : nullptr;
  IndirectA ia;
  if (direct) {
    g.a = band.input + (band.begin - band.input_row0) * in_w * in_c;
    g.lda = in_c;
  } else {
    ia.input = band.input;
    ia.offsets = offsets.data();
    ia.pixels = int64_t{out_h} * out_w;
    ia.taps = taps;
    ia.tap_len = tap_len;
    ia.edge = edge_windows.empty() ? zeros.data() : ctx.scratch_as<float>();
    ia.edge_stride = edge_floats;
    ia.first_row = first;
    g.indirect = &ia;
  }
  Gemm(g, nullptr);
}

void Im2Col(const ConvState& s, const float* input, int g, int64_t row_begin,
            int64_t row_end, float* col) {
  const int64_t c0 = static_cast<int64_t>(g) * s.group_in_c;
  const size_t copy_bytes = sizeof(float) * s.group_in_c;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t b = r / (int64_t{s.out_h} * s.out_w);
    const int oy = static_cast<int>(r / s.out_w % s.out_h);
    const int ox = static_cast<int>(r % s.out_w);
    float* dst = col + (r - row_begin) * s.k;
    const int ix0 = ox * s.stride_w - s.pad_w;
    for (int ky = 0; ky < s.k_h; ++ky) {
      const int iy = oy * s.stride_h - s.pad_h + ky * s.dil_h;
      // One group, dilation 1 and the filter row inside the input: its taps
      // read consecutive whole pixels, one run of k_w * in_c floats.
      if (s.groups == 1 && s.dil_w == 1 && iy >= 0 && iy < s.in_h &&
          ix0 >= 0 && ix0 + s.k_w <= s.in_w) {
        std::memcpy(dst, input + ((b * s.in_h + iy) * s.in_w + ix0) * s.in_c,
                    sizeof(float) * s.k_w * s.in_c);
        dst += int64_t{s.k_w} * s.in_c;
        continue;
      }
      for (int kx = 0; kx < s.k_w; ++kx) {
        const int ix = ix0 + kx * s.dil_w;
        if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) {
          std::memset(dst, 0, copy_bytes);
        } else {
          const float* src =
              input + ((b * s.in_h + iy) * s.in_w + ix) * s.in_c + c0;
          if (s.group_in_c < 8) {
            // A few channels (an RGB input): a call to memcpy per tap
            // costs more than the copy.
            for (int c = 0; c < s.group_in_c; ++c) dst[c] = src[c];
          } else {
            std::memcpy(dst, src, copy_bytes);
          }
        }
        dst += s.group_in_c;
      }
    }
  }
}

absl::Status EvalConv(EvalContext& ctx) {
  const ConvState& s = *ctx.state<ConvState>();
  const float* input = ctx.input(0)->data<float>();
  const Tensor* bias_t = ctx.input(2);
  const float* bias = bias_t ? bias_t->data<float>() : nullptr;
  float* output = ctx.output(0)->data<float>();
  float* scratch = ctx.scratch_as<float>();
  const float* packed = s.packed.data();
  if (s.pack_at_eval) {
    PackFilter(s, ctx.input(1)->data<float>(), scratch);
    packed = scratch;
    scratch += s.packed_floats * s.groups;
  }
  const int64_t rows = int64_t{s.batch} * s.out_h * s.out_w;
  // Output rows (pixels) [r0, r1) are final: a fused consumer runs on them.
  auto report_rows = [&](int64_t r0, int64_t r1) {
    ctx.OutputReady(r0 * s.out_c, r1 * s.out_c);
  };
  const absl::FunctionRef<void(int64_t, int64_t)> rows_done = report_rows;
  const auto* gemm_rows_done = ctx.has_consumer() ? &rows_done : nullptr;
  if (s.direct) {
    if (s.scaled_input != nullptr) {
      ScalePackedRhsRows(packed, s.k, s.out_c, s.input_scale->data<float>(),
                         scratch);
      packed = scratch;
      input = s.scaled_input->data<float>();
    }
    GemmArgs g;
    g.m = rows, g.n = s.out_c, g.k = s.k;
    g.a = input, g.lda = s.in_c;
    g.packed_b = packed, g.bias = bias, g.lo = s.lo, g.hi = s.hi;
    g.hard_swish = s.hard_swish;
    g.c = output, g.ldc = s.out_c;
    g.rows_done = gemm_rows_done;
    Gemm(g, ctx.thread_pool());
    return absl::OkStatus();
  }
  if (!s.offsets.empty()) {
    IndirectA ia;
    ia.input = input;
    ia.offsets = s.offsets.data();
    ia.pixels = int64_t{s.out_h} * s.out_w;
    ia.image_stride = int64_t{s.in_h} * s.in_w * s.in_c;
    ia.taps = s.taps;
    ia.tap_len = s.tap_len;
    ia.edge = s.zeros.data();
    if (!s.edge_windows.empty()) {
      FillEdges(s, input, scratch);
      ia.edge = scratch;
      ia.edge_stride = s.edge_floats;
    }
    for (int g = 0; g < s.groups; ++g) {
      ia.channel_offset = int64_t{g} * s.group_in_c;
      GemmArgs ga;
      ga.m = rows, ga.n = s.group_out_c, ga.k = s.k;
      ga.indirect = &ia;
      ga.packed_b = packed + g * s.packed_floats;
      ga.bias = bias ? bias + g * s.group_out_c : nullptr;
      ga.lo = s.lo, ga.hi = s.hi, ga.hard_swish = s.hard_swish;
      ga.c = output + g * s.group_out_c;
      ga.ldc = s.out_c;
      // A row is final after its last group's columns.
      if (s.groups == 1) ga.rows_done = gemm_rows_done;
      Gemm(ga, ctx.thread_pool());
    }
    if (s.groups != 1) rows_done(0, rows);
    return absl::OkStatus();
  }
  const int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
  auto body = [&](int thread, int64_t begin, int64_t end) {
    float* col = scratch + thread * s.im2col_floats;
    for (int64_t c = begin; c < end; ++c) {
      const int64_t r0 = c * kRowsPerChunk;
      const int64_t r1 = std::min(rows, r0 + kRowsPerChunk);
      for (int g = 0; g < s.groups; ++g) {
        Im2Col(s, input, g, r0, r1, col);
        GemmArgs ga;
        ga.m = r1 - r0, ga.n = s.group_out_c, ga.k = s.k;
        ga.a = col, ga.lda = s.k;
        ga.packed_b = packed + g * s.packed_floats;
        ga.bias = bias ? bias + g * s.group_out_c : nullptr;
        ga.lo = s.lo, ga.hi = s.hi, ga.hard_swish = s.hard_swish;
        ga.c = output + r0 * s.out_c + g * s.group_out_c;
        ga.ldc = s.out_c;
        Gemm(ga, nullptr);
      }
      rows_done(r0, r1);
    }
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelForWithThreadIndex(chunks, 1, body);
  } else {
    body(0, 0, chunks);
  }
  return absl::OkStatus();
}

absl::Status PrepareConv2D(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* in, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* filter, RequiredInput(ctx, 1));
  const Tensor* bias = ctx.input(2);
  if (in->type != tfl::TensorType_FLOAT32 ||
      filter->type != tfl::TensorType_FLOAT32 ||
      (bias && bias->type != tfl::TensorType_FLOAT32) ||
      ctx.output(0)->type != tfl::TensorType_FLOAT32) {
    return ctx.Unsupported(absl::StrFormat(
        "%s input with %s weights", TensorTypeName(in->type),
        TensorTypeName(filter->type)));
  }
  GRAFT_KERNEL_CHECK(in->rank() == 4 && filter->rank() == 4,
                     "input and filter must be 4-D, got %s and %s",
                     ShapeToString(in->shape), ShapeToString(filter->shape));
  const auto* o = ctx.op().builtin_options.AsConv2DOptions();
  GRAFT_KERNEL_CHECK(o != nullptr, "missing Conv2DOptions");
  auto* s = MakeState<ConvState>(ctx);
  s->batch = in->dim(0), s->in_h = in->dim(1), s->in_w = in->dim(2);
  s->in_c = in->dim(3);
  s->out_c = filter->dim(0), s->k_h = filter->dim(1), s->k_w = filter->dim(2);
  s->group_in_c = filter->dim(3);
  GRAFT_KERNEL_CHECK(s->group_in_c > 0 && s->in_c % s->group_in_c == 0,
                     "input depth %d is not a multiple of filter depth %d",
                     s->in_c, s->group_in_c);
  s->groups = s->in_c / s->group_in_c;
  GRAFT_KERNEL_CHECK(s->out_c % s->groups == 0,
                     "%d output channels do not split into %d groups",
                     s->out_c, s->groups);
  s->group_out_c = s->out_c / s->groups;
  GRAFT_KERNEL_CHECK(!bias || bias->num_elements() == s->out_c,
                     "bias has %d elements, expected %d",
                     bias ? bias->num_elements() : 0, s->out_c);
  GRAFT_RETURN_IF_ERROR(PrepareConvWindow(*o, s));
  GRAFT_RETURN_IF_ERROR(
      ActivationRange(o->fused_activation_function, &s->lo, &s->hi));
  s->k = int64_t{s->k_h} * s->k_w * s->group_in_c;
  s->direct = s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 &&
              s->stride_w == 1 && s->pad_h == 0 && s->pad_w == 0 &&
              s->groups == 1;
  s->packed_floats = PackedRhsSize(s->k, s->group_out_c);
  size_t scratch_floats = 0;
  if (filter->constant) {
    s->packed.resize(s->packed_floats * s->groups);
    PackFilter(*s, filter->data<float>(), s->packed.data());
  } else {
    s->pack_at_eval = true;
    scratch_floats += s->packed_floats * s->groups;
  }
  // Offsets into the input, and edge windows' (at most one per input row
  // and output column) into their buffer, as int32.
  const int64_t kMaxOffset = std::numeric_limits<int32_t>::max();
  const bool offsets_fit =
      int64_t{s->in_h} * s->in_w * s->in_c < kMaxOffset &&
      (int64_t{s->in_h} * s->out_w + 1) * s->k_w * s->in_c < kMaxOffset;
  if (!s->direct && offsets_fit) {
    BuildOffsets(*s);
    if (!s->edge_windows.empty()) {
      scratch_floats += static_cast<size_t>(s->batch * s->edge_floats);
    }
  } else if (!s->direct) {
    s->threads = ctx.thread_pool() ? ctx.thread_pool()->num_threads() : 1;
    s->im2col_floats = kRowsPerChunk * s->k;
    scratch_floats += s->im2col_floats * s->threads;
  }
  ctx.RequestScratch(scratch_floats * sizeof(float));
  ctx.SetEval(EvalConv);
  ctx.MarkReportsOutputReady();
  ctx.SetReductionLength(s->k);
  return ctx.SetOutputShape(0, {s->batch, s->out_h, s->out_w, s->out_c});
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Conv2D);

}  // namespace graft
