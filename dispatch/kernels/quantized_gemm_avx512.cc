// The AVX-512 VNNI int8 GEMM (quantized_gemm.h: QGemmVnni and its
// packing). Every vector function here carries the AVX-512 target
// attribute; the file itself builds for the baseline, and nothing here runs
// unless KernelIsa() says the CPU has AVX-512 VNNI.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dispatch/kernels/quantized_gemm.h"

namespace graft::kernels {
namespace {

// Bytes of one group of four reduction steps of a panel.
constexpr int64_t kQuadBytes = kQGemmNr * 4;

inline int64_t VnniIndex(int64_t kk, int j) {
  return (kk / 4 * kQGemmNr + j) * 4 + kk % 4;
}

#if GRAFT_QGEMM_AVX2
#define GRAFT_VNNI_TARGET GRAFT_AVX512_TARGET
#define GRAFT_VNNI_INLINE GRAFT_AVX512_INLINE

// acc + the four products of x's unsigned bytes and w's signed bytes per
// int32 lane (vpdpbusd). In asm, not _mm512_dpbusd_epi32: GCC 12 gave the
// intrinsic's tied accumulator a fresh register each step and copied it
// back (16 extra moves and 3 spills per step of the 8 x 32 tile).
GRAFT_VNNI_INLINE __m512i Dpbusd(__m512i acc, __m512i x, __m512i w) {
  asm("vpdpbusd %[w], %[x], %[acc]" : [acc] "+v"(acc) : [x] "v"(x), [w] "v"(w));
  return acc;
}

// MR rows x NP panels (starting at panel p) over the whole reduction: one
// 4-byte broadcast of a per row and one 64-byte load of b per panel feed
// MR * NP vpdpbusd per group of four steps. The accumulators are named
// variables, not an array: GCC 12 kept an array of them in memory.
template <int MR, int NP>
GRAFT_VNNI_INLINE void TileVnni(const uint8_t* a, int64_t kp, int64_t row0,
                                const QGemmVnniWeights& b, int64_t p,
                                const QGemmRequant& rq, int64_t channel0,
                                uint8_t* out, int64_t out_stride) {
  static_assert(MR >= 1 && MR <= 8 && NP >= 1 && NP <= 2, "8 x 2 at most");
  const int8_t* b0 = b.packed.data() + p * kQGemmNr * kp;
  const int8_t* b1 = b0 + kQGemmNr * kp;
  const uint8_t* a0 = a + row0 * kp;
  // Rows past MR alias row 0; their sums are dead and dropped.
  const uint8_t* a1 = a0 + (MR > 1 ? kp : 0);
  const uint8_t* a2 = a0 + (MR > 2 ? 2 * kp : 0);
  const uint8_t* a3 = a0 + (MR > 3 ? 3 * kp : 0);
  const uint8_t* a4 = a0 + (MR > 4 ? 4 * kp : 0);
  const uint8_t* a5 = a0 + (MR > 5 ? 5 * kp : 0);
  const uint8_t* a6 = a0 + (MR > 6 ? 6 * kp : 0);
  const uint8_t* a7 = a0 + (MR > 7 ? 7 * kp : 0);
  const __m512i z = _mm512_setzero_si512();
  __m512i c0a = z, c0b = z, c1a = z, c1b = z, c2a = z, c2b = z, c3a = z,
          c3b = z, c4a = z, c4b = z, c5a = z, c5b = z, c6a = z, c6b = z,
          c7a = z, c7b = z;
  for (int64_t off = 0; off < kp; off += 4) {
    const __m512i w0 = _mm512_loadu_si512(b0 + off * kQGemmNr);
    const __m512i w1 = NP > 1 ? _mm512_loadu_si512(b1 + off * kQGemmNr) : w0;
#define GRAFT_VNNI_ROW(i)                                   \
  if constexpr (MR > i) {                                   \
    int32_t quad;                                           \
    std::memcpy(&quad, a##i + off, sizeof(quad));           \
    const __m512i x = _mm512_set1_epi32(quad);              \
    c##i##a = Dpbusd(c##i##a, x, w0);                       \
    if constexpr (NP > 1) c##i##b = Dpbusd(c##i##b, x, w1); \
  }
    GRAFT_VNNI_ROW(0)
    GRAFT_VNNI_ROW(1)
    GRAFT_VNNI_ROW(2)
    GRAFT_VNNI_ROW(3)
    GRAFT_VNNI_ROW(4)
    GRAFT_VNNI_ROW(5)
    GRAFT_VNNI_ROW(6)
    GRAFT_VNNI_ROW(7)
#undef GRAFT_VNNI_ROW
  }
  const __m512i c[8][2] = {{c0a, c0b}, {c1a, c1b}, {c2a, c2b}, {c3a, c3b},
                           {c4a, c4b}, {c5a, c5b}, {c6a, c6b}, {c7a, c7b}};
  const bool single_rounding = rq.single_rounding;
  const bool fast_double = rq.fast_double;
  const bool small_sums = rq.small_sums && fast_double;
  for (int j = 0; j < NP; ++j) {
    const int64_t n0 = (p + j) * kQGemmNr;
    const int cols = static_cast<int>(std::min<int64_t>(kQGemmNr, b.n - n0));
    const Requant16 r =
        LoadRequant16(rq, channel0 + n0, b.col_offset.data() + n0);
    for (int i = 0; i < MR; ++i) {
      uint8_t* op = out + (row0 + i) * out_stride + n0;
      if (small_sums) {
        StoreClampedS8Avx512(r, RequantDoubleSmallAvx512(r, c[i][j]), cols,
                             op);
        continue;
      }
      if (fast_double) {
        StoreClampedS8Avx512(r, RequantDoubleFastAvx512(r, c[i][j]), cols, op);
        continue;
      }
      const __m512i v = single_rounding ? RequantSingleAvx512(r, c[i][j])
                                        : RequantDoubleAvx512(r, c[i][j]);
      StoreBytesAvx512(v, cols, op);
    }
  }
}

template <int NP>
using TileVnniFn = void (*)(const uint8_t*, int64_t, int64_t,
                            const QGemmVnniWeights&, int64_t,
                            const QGemmRequant&, int64_t, uint8_t*, int64_t);

// Whole tiles of kQGemmVnniMr rows inline, then the last rows' tile from a
// table indexed by their count - 1.
template <int NP>
GRAFT_VNNI_INLINE void RowsVnni(const uint8_t* a, int64_t rows, int64_t kp,
                                const QGemmVnniWeights& b, int64_t p,
                                const QGemmRequant& rq, int64_t channel0,
                                uint8_t* out, int64_t out_stride) {
  static_assert(kQGemmVnniMr == 8, "the table below lists 1 to 8 rows");
  static constexpr TileVnniFn<NP> kLastTile[kQGemmVnniMr - 1] = {
      TileVnni<1, NP>, TileVnni<2, NP>, TileVnni<3, NP>, TileVnni<4, NP>,
      TileVnni<5, NP>, TileVnni<6, NP>, TileVnni<7, NP>};
  int64_t row0 = 0;
  for (; row0 + kQGemmVnniMr <= rows; row0 += kQGemmVnniMr) {
    TileVnni<kQGemmVnniMr, NP>(a, kp, row0, b, p, rq, channel0, out,
                               out_stride);
  }
  if (row0 < rows) {
    kLastTile[rows - row0 - 1](a, kp, row0, b, p, rq, channel0, out,
                               out_stride);
  }
}

// Panel pairs outermost, so a pair of panels (32 columns x kp bytes) stays
// in L1 while every row block of a passes over it.
GRAFT_VNNI_TARGET void QGemmVnniImpl(const uint8_t* a, int64_t rows,
                                     const QGemmVnniWeights& b, int64_t p0,
                                     int64_t p1, const QGemmRequant& rq,
                                     int64_t channel0, uint8_t* out,
                                     int64_t out_stride) {
  const int64_t kp = QGemmVnniPaddedK(b.k);
  // Column indices below are the panels' own; shift channels and output
  // back so that column n0 of panel p is channel channel0 + n0.
  int64_t p = p0;
  for (; p + 2 <= p1; p += 2) {
    RowsVnni<2>(a, rows, kp, b, p, rq, channel0, out, out_stride);
  }
  if (p < p1) RowsVnni<1>(a, rows, kp, b, p, rq, channel0, out, out_stride);
}

GRAFT_VNNI_TARGET void FlipImpl(const int8_t* src, int64_t n, uint8_t* dst) {
  FlipToUnsignedAvx512(src, n, dst);
}
#endif  // GRAFT_QGEMM_AVX2

}  // namespace

void QGemmVnniPackRows(const int8_t* w, int64_t n, int64_t k,
                       int64_t row_stride, int32_t a_offset,
                       QGemmVnniWeights* out) {
  const int64_t panels = QGemmPanels(n), kp = QGemmVnniPaddedK(k);
  out->n = n, out->k = k;
  out->packed.assign(static_cast<size_t>(panels * kQGemmNr * kp), 0);
  out->col_offset.assign(static_cast<size_t>((panels + 1) * kQGemmNr), 0);
  for (int64_t c = 0; c < n; ++c) {
    int8_t* panel = out->packed.data() + c / kQGemmNr * kQGemmNr * kp;
    const int j = static_cast<int>(c % kQGemmNr);
    const int8_t* row = w + c * row_stride;
    int64_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) {
      panel[VnniIndex(kk, j)] = row[kk];
      sum += row[kk];
    }
    // Modulo 2^32, as the int32 sums it joins.
    out->col_offset[c] = static_cast<int32_t>(static_cast<uint32_t>(a_offset) *
                                              static_cast<uint32_t>(sum));
  }
}

void QGemmVnniFlip(const int8_t* src, int64_t n, uint8_t* dst) {
#if GRAFT_QGEMM_AVX2
  if (KernelIsaAtLeast(CpuIsa::kAvx512Vnni)) {
    FlipImpl(src, n, dst);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ 0x80);
}

void QGemmVnniRowsFromInt8(const int8_t* src, int64_t rows, int64_t k,
                           int64_t src_stride, uint8_t* dst) {
  const int64_t kp = QGemmVnniPaddedK(k);
  for (int64_t r = 0; r < rows; ++r) {
    QGemmVnniFlip(src + r * src_stride, k, dst + r * kp);
    std::fill(dst + r * kp + k, dst + (r + 1) * kp, uint8_t{0});
  }
}

template <typename T>
void QGemmVnni(const uint8_t* a, int64_t rows, const QGemmVnniWeights& b,
               int64_t p0, int64_t p1, const QGemmRequant& rq, int64_t channel0,
               T* out, int64_t out_stride) {
  static_assert(sizeof(T) == 1, "8-bit outputs only");
#if GRAFT_QGEMM_AVX2
  CountQGemmCall(CpuIsa::kAvx512Vnni);
  QGemmVnniImpl(a, rows, b, p0, p1, rq, channel0,
                reinterpret_cast<uint8_t*>(out), out_stride);
#else
  (void)a, (void)rows, (void)b, (void)p0, (void)p1, (void)rq, (void)channel0,
      (void)out, (void)out_stride;
  std::abort();  // KernelIsa() is never kAvx512Vnni in such a build
#endif
}

template void QGemmVnni<int8_t>(const uint8_t*, int64_t,
                                const QGemmVnniWeights&, int64_t, int64_t,
                                const QGemmRequant&, int64_t, int8_t*, int64_t);
template void QGemmVnni<uint8_t>(const uint8_t*, int64_t,
                                 const QGemmVnniWeights&, int64_t, int64_t,
                                 const QGemmRequant&, int64_t, uint8_t*,
                                 int64_t);

}  // namespace graft::kernels
