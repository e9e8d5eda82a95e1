// The state the quantized convolutions share (quantized_conv.cc: CONV_2D,
// DEPTHWISE_CONV_2D, TRANSPOSE_CONV) and the INT8 DEPTHWISE_CONV_2D fast
// paths kept in quantized_depthwise.cc. Internal to dispatch/kernels.
#ifndef GRAFT_DISPATCH_KERNELS_QUANTIZED_CONV_H_
#define GRAFT_DISPATCH_KERNELS_QUANTIZED_CONV_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "dispatch/kernel.h"
#include "dispatch/kernels/quantization_util.h"
#include "dispatch/kernels/quantized_gemm.h"

namespace graft::kernels {

// The most taps (7 x 7) the int8 depthwise fast path lists per pixel.
inline constexpr int kDwMaxTaps = 49;

struct QConvState : KernelState {
  int batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int out_h = 0, out_w = 0, out_c = 0;
  int k_h = 0, k_w = 0;
  int stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int pad_h = 0, pad_w = 0;
  int group_in_c = 0, group_out_c = 0;  // CONV_2D groups
  int depth_multiplier = 1;             // DEPTHWISE_CONV_2D
  int32_t input_offset = 0, output_offset = 0;
  int32_t act_min = 0, act_max = 0;
  std::vector<QuantizedMultiplier> mult;  // per output channel
  std::vector<int64_t> bias;              // per output channel (0 if none)
  // INT8 CONV_2D GEMM path (EvalQConvGemm).
  int64_t k = 0;           // k_h * k_w * group_in_c
  int panels = 0;          // per group, ceil(group_out_c / kQGemmNr)
  int64_t chunk_rows = 0;  // output pixels per im2col chunk
  int threads = 1;
  // The VNNI paths' split over threads (SetColumnSplit): each thread takes
  // an even share of the panels over every output pixel, instead of shares
  // of the pixels over every panel.
  bool column_split = false;
  // Per group, `panels` panels of [k][kQGemmNr] filter values (QGemmPackRows).
  std::vector<int16_t> packed;
  // Or, on AVX-512 VNNI (one group): the filter packed for QGemmVnni, a
  // holding input + 128 as unsigned bytes (EvalQConvVnni).
  QGemmVnniWeights vnni;
  // The VNNI path without im2col (EvalQConvVnniTaps): the input flipped
  // (+ 128) into a copy padded by pad_h rows above and pad_w pixels left
  // (tap_h x tap_w pixels per image in all; the border holds the zero
  // point + 128), and per output pixel the taps of vnni_taps: with
  // dilation 1 in width, one per filter row (k_w * in_c contiguous bytes),
  // else one per filter tap (in_c bytes), each padded to a multiple of 4.
  bool vnni_taps = false;
  int tap_h = 0, tap_w = 0;
  int64_t tap_bytes = 0;           // bytes of the padded copy
  std::vector<int64_t> tap_delta;  // per tap, from the pixel's corner
  QGemmTaps taps;                  // points into tap_delta
  // Per output pixel, its window's corner in the padded copy (the rows
  // QGemmVnniTaps reads, from the copy's start).
  std::vector<int64_t> corner_offset;
  // INT8 DEPTHWISE_CONV_2D channel-innermost path.
  bool dw_fast = false;
  // Its AVX-512 VNNI form (DepthwiseRowsInt8Vnni), chosen at prepare: the
  // filter packed by PackDwVnni, rq in the kernel's lane order with
  // input_offset times the sum of each channel's taps added to the bias,
  // and a pixel of input zero points for the taps that fall outside the
  // input.
  bool dw_vnni = false;
  std::vector<int32_t> dw_packed;
  QGemmRequant dw_rq;
  std::vector<int8_t> dw_pad;
  // Vector requantization of the GEMM and depthwise paths.
  QGemmRequant rq;
};

// TFLite's double-rounding rescale of one sum.
template <typename Acc>
inline int32_t Requantize(Acc acc, const QuantizedMultiplier& m) {
  return MultiplyByQuantizedMultiplier(acc, m.multiplier, m.shift);
}

// One output from its sum: bias, rescale, output offset, clamp. The bias
// is added with wrap-around and the offset in 64 bits, so sums and scales
// no real model has (TFLite's int32 arithmetic would overflow there) give
// a defined, clamped result instead of undefined behaviour.
template <typename T, typename Acc>
inline T Finish(const QConvState& s, Acc acc, int oc) {
  using U = std::make_unsigned_t<Acc>;
  acc = static_cast<Acc>(static_cast<U>(acc) +
                         static_cast<U>(static_cast<Acc>(s.bias[oc])));
  const int64_t v =
      int64_t{Requantize(acc, s.mult[oc])} + int64_t{s.output_offset};
  return static_cast<T>(
      std::clamp<int64_t>(v, int64_t{s.act_min}, int64_t{s.act_max}));
}

// INT8 DEPTHWISE_CONV_2D with depth multiplier 1 and up to kDwMaxTaps
// taps (s.dw_fast), output rows [r0, r1) (batch * out_h of them): the
// AVX-512 VNNI kernel where prepare chose it (s.dw_vnni, PackDwVnni), else
// the AVX2 or baseline build for KernelIsa(); counted per call for
// QDepthwiseCallsForTesting (quantized_gemm.h). `w` is the filter as the
// model holds it.
void DepthwiseRowsInt8Fast(const QConvState& s, const int8_t* in,
                           const int8_t* w, int8_t* out, int64_t r0,
                           int64_t r1);

// Fills s.dw_packed, s.dw_rq and s.dw_pad for the VNNI kernel from the
// filter `w` ([1, k_h, k_w, out_c]) and s's window, channels and
// quantization (s.rq prepared).
void PackDwVnni(const int8_t* w, QConvState* s);

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_QUANTIZED_CONV_H_
