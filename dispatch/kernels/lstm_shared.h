// What the float, integer and hybrid LSTM kernels (lstm.cc,
// quantized_lstm.cc, hybrid_lstm.cc) share: TFLite's input order and gate
// order, and the end of their prepare. Internal to kernels/.
#ifndef GRAFT_DISPATCH_KERNELS_LSTM_SHARED_H_
#define GRAFT_DISPATCH_KERNELS_LSTM_SHARED_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "dispatch/kernel.h"

namespace graft {
namespace kernels {

// Input indices of LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM.
enum LstmInput {
  kInput = 0,
  kInputToGate = 1,      // 1..4: input, forget, cell, output
  kRecurrentToGate = 5,  // 5..8
  kCellToGate = 9,       // 9..11: input, forget, output (peephole)
  kGateBias = 12,        // 12..15
  kProjectionWeights = 16,
  kProjectionBias = 17,
  kOutputState = 18,
  kCellState = 19,
  kLayerNorm = 20,  // 20..23
};

// Gates in TFLite's order; packed weights hold them side by side.
enum Gate { kI = 0, kF = 1, kZ = 2, kO = 3 };

// The end of an LSTM kernel's prepare: its state and eval, and the output
// shape, the input's with the last dimension `n_output`.
inline absl::Status FinishLstmPrepare(PrepareContext& ctx, const Tensor& in,
                                      int64_t n_output,
                                      std::unique_ptr<KernelState> state,
                                      EvalFn eval) {
  Shape out_shape = in.shape;
  out_shape.back() = static_cast<int32_t>(n_output);
  ctx.SetState(std::move(state));
  ctx.SetEval(eval);
  return ctx.SetOutputShape(0, std::move(out_shape));
}

}  // namespace kernels
}  // namespace graft

#endif  // GRAFT_DISPATCH_KERNELS_LSTM_SHARED_H_
