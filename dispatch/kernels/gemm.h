// Float32 matrix multiply for FULLY_CONNECTED, BATCH_MATMUL, CONV_2D
// (im2col) and TRANSPOSE_CONV: C[M, N] = clamp(A[M, K] * B[K, N] + bias).
//
// B is packed once (at prepare time for constant weights) into column panels
// of kGemmNr: panel p holds, for each k, the kGemmNr values B[k, p*kGemmNr +
// j], zero-padded past N. The micro-kernel computes a kGemmMr x kGemmNr tile
// of C in registers over the whole K with GCC/Clang vector extensions, so it
// is vectorized without intrinsics (and compiled for AVX2+FMA, and for
// AVX2+FMA with AVX-512 VL's 32 vector registers, as well as the baseline
// where the compiler supports function multi-versioning). The AVX-512 build
// computes two panels at once as tiles of up to 6 x 32 of 16-float
// vectors, and an odd last panel as up to 6 x 16 of one vector per row
// (half the instructions for the same sums in the same order), a range of
// rows cut into tiles of even heights (49 rows as 4 x 6 + 5 x 5, not
// 8 x 6 + 1: a short tile's sums wait on the multiply-add's latency). The
// tile's epilogue stores straight from the accumulators (a last panel
// narrower than the tile goes through a buffer) and skips the clamp where
// there is no fused activation.
// Internal to kernels/.
#ifndef GRAFT_DISPATCH_KERNELS_GEMM_H_
#define GRAFT_DISPATCH_KERNELS_GEMM_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "absl/functional/function_ref.h"
#include "dispatch/kernels/cpu_features.h"

namespace graft {
class ThreadPool;
}

namespace graft::kernels {

inline constexpr int kGemmMr = 6;
inline constexpr int kGemmNr = 16;

// Memory for packed B: 64-byte aligned, so each row of a 16-column panel
// is one cache line and a 16-float load never straddles two.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};
using PackedVector = std::vector<float, CacheLineAllocator<float>>;

// Floats a packed B of K x N takes.
inline size_t PackedRhsSize(int64_t k, int64_t n) {
  return static_cast<size_t>((n + kGemmNr - 1) / kGemmNr * kGemmNr * k);
}

// Packs B where element (k, n) is b[k * stride_k + n * stride_n]: a [K, N]
// row-major matrix has (N, 1), a [N, K] one (weights of FULLY_CONNECTED,
// CONV_2D) has (1, K).
void PackRhs(const float* b, int64_t k, int64_t n, int64_t stride_k,
             int64_t stride_n, float* packed);

// A packed B of K x N (PackRhs's layout) with row k times scale[k], into
// `scaled` (PackedRhsSize(k, n) floats): B scaled by input channel, for a
// per-channel scale of A folded into the weights.
void ScalePackedRhsRows(const float* packed, int64_t k, int64_t n,
                        const float* scale, float* scaled);

// An A read in place through an indirection table (an "indirect GEMM", for
// convolutions without an im2col copy): row r of A is the concatenation,
// over taps t < `taps`, of the `tap_len` floats at
//   input + (q / pixels) * image_stride + offsets[(q % pixels) * taps + t]
//         + channel_offset
// (q = first_row + r) where that offset o is not negative, and else at
//   edge + (q / pixels) * edge_stride + (-o - 1),
// a tap built elsewhere: -1 is the buffer's head, tap_len zeros for a
// padding tap, and a lower offset a copy of a window that crosses the
// input's edge, its outside part zero. K must be taps * tap_len. The sum
// over K runs in the same order as over the matching im2col row.
struct IndirectA {
  const float* input = nullptr;
  const int32_t* offsets = nullptr;  // [pixels, taps]
  int64_t pixels = 1;                // rows of A per image
  int64_t image_stride = 0;          // floats between images
  int64_t channel_offset = 0;
  int taps = 1;
  int64_t tap_len = 0;
  const float* edge = nullptr;  // tap_len zeros, then any edge windows
  int64_t edge_stride = 0;      // floats between images' edge buffers
  int64_t first_row = 0;        // the table's row that is A's row 0
};

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;  // row i at a + i * lda, contiguous over k
  int64_t lda = 0;
  const IndirectA* indirect = nullptr;  // when set, A is read through it
  const float* packed_b = nullptr;
  const float* bias = nullptr;  // [N] or null
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  float* c = nullptr;  // row i at c + i * ldc
  int64_t ldc = 0;
  // Then HardSwish (float_simd.h) on each value, in the tile's registers:
  // a HARD_SWISH op fused into the convolution (EpilogueOp::kHardSwish).
  bool hard_swish = false;
  // When set, called with [r0, r1) once those rows of C are final in every
  // column, on the thread that wrote them; each row once, in blocks of a
  // few row tiles (EvalContext::OutputReady's feed).
  const absl::FunctionRef<void(int64_t, int64_t)>* rows_done = nullptr;
};

// Runs the GEMM, split over `pool` (may be null) when the work is large.
void Gemm(const GemmArgs& args, ThreadPool* pool);

// How many Gemm calls ran each build (kBaseline, kAvx2 for the AVX2+FMA one,
// kAvx512Vnni for the AVX-512 VL one), and how many of them read A indirectly: tests check with them that
// the path they force is taken.
int64_t GemmCallsForTesting(CpuIsa path);
int64_t IndirectGemmCallsForTesting();
// How many runs of tiles computed a one-row A against several whole panels
// of B at once (any build).
int64_t GemmRowPanelsCallsForTesting();
// How many ranges of rows went through every column as tiles of 16-float
// vectors (32 columns for two panels, 16 for an odd last one; the AVX-512
// VL build).
int64_t GemmWideTilesCallsForTesting();
// How many GEMMs split their rows evenly over the threads (not in whole
// row tiles: fewer than 4 row tiles per thread, 32 in the AVX-512 VL
// build).
int64_t GemmRowPartsCallsForTesting();
// How many GEMMs split their columns over the threads, every row in each
// part (more columns than rows; the AVX-512 VL build).
int64_t GemmColumnPartsCallsForTesting();

}  // namespace graft::kernels

#endif  // GRAFT_DISPATCH_KERNELS_GEMM_H_
