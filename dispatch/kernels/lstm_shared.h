// The tensor layout shared by the float and integer LSTM kernels (lstm.cc,
// quantized_lstm.cc): TFLite's input order (lstm_shared.h) and gate order.
// Internal to kernels/.
#ifndef GRAFT_DISPATCH_KERNELS_LSTM_SHARED_H_
#define GRAFT_DISPATCH_KERNELS_LSTM_SHARED_H_

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

}  // namespace kernels
}  // namespace graft

#endif  // GRAFT_DISPATCH_KERNELS_LSTM_SHARED_H_
