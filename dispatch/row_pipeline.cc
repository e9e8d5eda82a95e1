// SubgraphExecutor's row pipelines: a chain of ops that compute their
// output rows a band at a time (KernelState::DescribeRowBands), run band
// by band, so the chain's intermediate tensors are never written whole.
//
// MobileNetV2's blocks are such chains: a 1x1 convolution expands 16 or
// 24 channels to 96 or 144, a 3x3 depthwise convolution filters them, a
// 1x1 convolution projects them back. At 112 x 112 and 56 x 56 the
// expanded tensors take 1.2 to 4.8 MB, more than a core's L2, and ops run
// one after the other write them to L3 or memory and read them back: in
// the model, MobileNetV2 1.0's first nine ops took 40% longer than the
// same ops timed alone. Run as a pipeline, a band of the last stage's
// rows needs a few rows of each intermediate, held in buffers in the
// core's cache: each stage computes the rows its next stage needs and has
// not got yet, and keeps those the next band reads again (a 3x3 filter at
// stride 1 reads two rows of the band before).
//
// The last stage's rows are split evenly over the threads (one range
// each); a thread's first band computes the rows above its range that the
// thread before it computed too. Every stage writes the values its own
// eval would (the same sums in the same order: EvalRowBand's contract),
// so a pipeline's output is bit for bit the unfused ops'.
#include "dispatch/row_pipeline.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status.h"
#include "dispatch/prepared_op.h"
#include "dispatch/subgraph_executor.h"

namespace graft {
namespace {

// A chain is worth a pipeline when one of its intermediates is at least
// this large: smaller ones stay in L2 between the ops anyway, and the
// rows two threads both compute cost more than the pipeline saves
// (MobileNetV2's 14 x 14 layers). One thread's band buffers take at most
// band_buffer_bytes (bands of fewer rows when they would take more, down
// to one row): 256 KB gave MobileNetV2 1.0 float's 56 x 56 blocks bands
// of 2 rows, 512 KB of 4, 3% faster at 2 threads.
std::atomic<int64_t> min_intermediate_bytes{1 << 20};
std::atomic<int64_t> band_buffer_bytes{512 * 1024};
constexpr size_t kBufferAlignment = 64;
// At most this many stages (RunRowPipeline's buffers are on its stack).
constexpr size_t kMaxStages = 16;

size_t AlignUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Rows of intermediate i each buffer holds at most, for bands of `band`
// rows of the last stage: the rows the next stage's largest band reads.
std::vector<int64_t> BufferRows(const std::vector<RowBandShape>& shapes,
                                int64_t band) {
  std::vector<int64_t> rows(shapes.size() - 1);
  int64_t out = band;
  for (size_t s = shapes.size() - 1; s > 0; --s) {
    const RowBandShape& next = shapes[s];
    out = std::min(next.in_h, (out - 1) * next.stride + next.extent);
    rows[s - 1] = out;
  }
  return rows;
}

}  // namespace

RowPipelineLimits SetRowPipelineLimitsForTesting(RowPipelineLimits limits) {
  RowPipelineLimits old;
  old.min_intermediate_bytes =
      min_intermediate_bytes.exchange(limits.min_intermediate_bytes);
  old.band_buffer_bytes = band_buffer_bytes.exchange(limits.band_buffer_bytes);
  return old;
}

void SubgraphExecutor::FuseRowPipelines() {
  const Subgraph& sg = subgraph();
  const size_t n = tensors_.size();
  std::vector<int32_t> reads(n, 0);
  for (const PreparedOp& p : ops_) {
    for (TensorId t : p.op->inputs) {
      if (t >= 0) ++reads[t];
    }
  }
  auto is_output = [&](TensorId t) {
    return std::find(sg.outputs.begin(), sg.outputs.end(), t) !=
           sg.outputs.end();
  };
  // Whether op p can be a stage, and its shape.
  auto stage = [&](const PreparedOp& p, RowBandShape* shape) {
    if (p.kind != PreparedOp::Kind::kKernel || p.dynamic ||
        p.state == nullptr || p.scaled_input >= 0 || p.op->inputs.empty() ||
        p.op->outputs.size() != 1 || p.op->inputs[0] < 0 ||
        !p.state->DescribeRowBands(shape)) {
      return false;
    }
    // Every input but the first is a constant (weights, bias).
    for (size_t i = 1; i < p.op->inputs.size(); ++i) {
      const TensorId t = p.op->inputs[i];
      if (t >= 0 && !tensors_[t].constant) return false;
    }
    return tensors_[p.op->outputs[0]].type == tfl::TensorType_FLOAT32;
  };
  const int threads = env_->pool != nullptr ? env_->pool->num_threads() : 1;
  for (size_t h = 0; h < ops_.size(); ++h) {
    PreparedOp& head = ops_[h];
    RowBandShape head_shape;
    if (head.fused_consumer >= 0 || !stage(head, &head_shape)) continue;
    std::vector<OpId> chain{static_cast<OpId>(h)};
    std::vector<RowBandShape> shapes{head_shape};
    int64_t largest = 0;
    // Extend while the last stage's output is read by the next op alone,
    // as its input 0, and is no subgraph output; a stage with a fused
    // consumer ends the chain (it writes its output whole).
    while (chain.size() < kMaxStages &&
           chain.back() + 1 < static_cast<OpId>(ops_.size())) {
      const PreparedOp& last = ops_[chain.back()];
      const TensorId out = last.op->outputs[0];
      PreparedOp& next = ops_[chain.back() + 1];
      RowBandShape shape;
      if (last.fused_consumer >= 0 || reads[out] != 1 || is_output(out) ||
          dynamic_[out] || tensors_[out].raw_data != nullptr ||
          !stage(next, &shape) || shape.reads_whole_input ||
          next.op->inputs[0] != out || shape.in_h != shapes.back().out_h ||
          shape.in_row_floats != shapes.back().out_row_floats) {
        break;
      }
      largest = std::max<int64_t>(largest, tensors_[out].bytes);
      chain.push_back(next.index);
      shapes.push_back(shape);
    }
    if (chain.size() < 2 || largest < min_intermediate_bytes.load()) continue;
    // Bands of the last stage's rows: halved until the buffers fit.
    int64_t band = std::max<int64_t>(1, shapes.back().out_h / threads);
    std::vector<int64_t> rows = BufferRows(shapes, band);
    auto thread_bytes = [&](const std::vector<int64_t>& r) {
      size_t bytes = 0;
      for (size_t i = 0; i < r.size(); ++i) {
        bytes += AlignUp(sizeof(float) * r[i] * shapes[i].out_row_floats,
                         kBufferAlignment);
      }
      return bytes;
    };
    const auto budget = static_cast<size_t>(band_buffer_bytes.load());
    while (band > 1 && thread_bytes(rows) > budget) {
      band = (band + 1) / 2;
      rows = BufferRows(shapes, band);
    }
    head.pipeline.assign(chain.begin() + 1, chain.end());
    head.pipeline_shapes = shapes;
    head.pipeline_band_rows = band;
    head.pipeline_buffer_rows = rows;
    head.pipeline_thread_bytes = thread_bytes(rows);
    head.pipeline_scratch_offset =
        AlignUp(head.scratch_bytes, kBufferAlignment);
    head.scratch_bytes =
        head.pipeline_scratch_offset + threads * head.pipeline_thread_bytes;
    for (size_t s = 1; s < chain.size(); ++s) {
      PreparedOp& p = ops_[chain[s]];
      p.kind = PreparedOp::Kind::kFused;
      p.fused_input = -1;
      p.pipeline_head = head.index;
      p.detail =
          absl::StrFormat("fused into op %d (%s), run on bands of its rows",
                          head.index, head.name);
      absl::StrAppend(&head.detail,
                      absl::StrFormat(" + %s of op %d", p.name, p.index));
      absl::StrAppend(&head.profile_name, "+", p.name);
    }
    absl::StrAppend(&head.detail,
                    absl::StrFormat(", in bands of %d rows", band));
    h = chain.back();
  }
}

absl::Status SubgraphExecutor::RunRowPipeline(PreparedOp& head) {
  const size_t stages = head.pipeline.size() + 1;
  // On the stack: a run allocates nothing.
  PreparedOp* ops[kMaxStages] = {&head};
  for (size_t s = 1; s < stages; ++s) ops[s] = &ops_[head.pipeline[s - 1]];
  // Each stage's context: the first has the op's scratch; none the pool.
  absl::InlinedVector<EvalContext, kMaxStages> ctx;
  for (size_t s = 0; s < stages; ++s) {
    ctx.emplace_back(*ops[s]->op, absl::MakeSpan(tensors_), ops[s]->state.get(),
                     s == 0 ? head.scratch : nullptr, nullptr);
  }
  ops[0]->state->BeginRowBands(ctx[0]);
  const std::vector<RowBandShape>& shapes = head.pipeline_shapes;
  const float* input = tensors_[head.op->inputs[0]].data<float>();
  PreparedOp& last = *ops[stages - 1];
  float* output = tensors_[last.op->outputs[0]].data<float>();
  const int64_t rows = shapes.back().out_h;
  const int64_t band = head.pipeline_band_rows;
  // One thread's range [begin, end) of the last stage's rows.
  auto body = [&](int thread, int64_t begin, int64_t end) {
    // Intermediate i's buffer holds its rows [lo, hi).
    struct Buffer {
      float* data;
      int64_t lo = 0, hi = 0;
    };
    Buffer buffers[kMaxStages - 1];
    uint8_t* mem = head.scratch + head.pipeline_scratch_offset +
                   thread * head.pipeline_thread_bytes;
    for (size_t i = 0; i + 1 < stages; ++i) {
      buffers[i].data = reinterpret_cast<float*>(mem);
      mem += AlignUp(sizeof(float) * head.pipeline_buffer_rows[i] *
                         shapes[i].out_row_floats,
                     kBufferAlignment);
    }
    // Stage s computes its rows [begin, end) into `out` (holding rows from
    // out_row0), from what the stage before it holds.
    auto run_stage = [&](size_t s, int64_t rb, int64_t re, float* out,
                         int64_t out_row0) {
      RowBand b;
      if (s == 0) {
        b.input = input, b.input_row0 = 0, b.input_rows = shapes[0].in_h;
      } else {
        const Buffer& in = buffers[s - 1];
        b.input = in.data, b.input_row0 = in.lo, b.input_rows = in.hi - in.lo;
      }
      b.output = out, b.output_row0 = out_row0;
      b.begin = rb, b.end = re;
      ops[s]->state->EvalRowBand(ctx[s], b);
    };
    // Makes intermediate i hold rows [lo, hi): keeps the held rows from
    // lo (moved to the front), computes the rest.
    auto ensure = [&](auto& self, size_t i, int64_t lo, int64_t hi) -> void {
      Buffer& buf = buffers[i];
      const int64_t row = shapes[i].out_row_floats;
      if (lo >= buf.lo && lo < buf.hi) {
        if (lo > buf.lo) {
          std::memmove(buf.data, buf.data + (lo - buf.lo) * row,
                       sizeof(float) * (buf.hi - lo) * row);
        }
      } else {
        buf.hi = lo;
      }
      buf.lo = lo;
      if (hi <= buf.hi) return;
      if (i > 0) {
        int64_t in_lo, in_hi;
        shapes[i].InputRows(buf.hi, hi, &in_lo, &in_hi);
        self(self, i - 1, in_lo, in_hi);
      }
      run_stage(i, buf.hi, hi, buf.data, buf.lo);
      buf.hi = hi;
    };
    for (int64_t b0 = begin; b0 < end; b0 += band) {
      const int64_t b1 = std::min(end, b0 + band);
      int64_t in_lo, in_hi;
      shapes.back().InputRows(b0, b1, &in_lo, &in_hi);
      ensure(ensure, stages - 2, in_lo, in_hi);
      run_stage(stages - 1, b0, b1, output, 0);
    }
  };
  auto run = [&]() -> absl::Status {
    ThreadPool* pool = env_->pool;
    const int threads = pool != nullptr ? pool->num_threads() : 1;
    if (threads > 1 && rows >= 2) {
      pool->ParallelForWithThreadIndex(
          rows, std::max<int64_t>(1, rows / threads), body);
    } else {
      body(0, 0, rows);
    }
    return absl::OkStatus();
  };
  return last.fused_consumer >= 0 ? RunWithConsumer(last, ctx.back(), run)
                                  : run();
}

}  // namespace graft
