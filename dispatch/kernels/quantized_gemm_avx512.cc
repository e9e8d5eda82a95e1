// The AVX-512 VNNI int8 GEMM (quantized_gemm.h: QGemmVnni and its
// packing). Every vector function here carries the AVX-512 target
// attribute; the file itself builds for the baseline, and nothing here runs
// unless KernelIsa() says the CPU has AVX-512 VNNI.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "dispatch/kernels/call_counter.h"
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

// How a tile's sums become bytes (EpilogueFor), chosen once per call so
// that each tile's epilogue is straight-line code for one form.
enum class Epilogue {
  // rq.small_sums and act_min >= output_offset (a RELU-like clamp):
  // RequantSmallClampedAvx512, the accumulators started at the offset.
  kSmallClamped,
  // rq.small_sums: RequantSmallAvx512, the accumulators started at the
  // offset.
  kSmall,
  // rq.fast_double: RequantDoubleFastAvx512.
  kFast,
  // Neither: RequantSingleAvx512 or RequantDoubleAvx512, clamped in int32.
  kExact,
};

Epilogue EpilogueFor(const QGemmRequant& rq) {
  if (!rq.fast_double) return Epilogue::kExact;
  if (!rq.small_sums) return Epilogue::kFast;
  return rq.act_min >= rq.output_offset ? Epilogue::kSmallClamped
                                        : Epilogue::kSmall;
}

// Whether the accumulators start at the offset (bias and column term).
template <Epilogue E>
constexpr bool kStartAtOffset =
    E == Epilogue::kSmallClamped || E == Epilogue::kSmall;

// The value before the clamp of a tile's accumulator, for E != kExact.
template <Epilogue E>
GRAFT_VNNI_INLINE __m512i FastValue(const Requant16& r, __m512i acc) {
  static_assert(E != Epilogue::kExact, "kExact clamps in int32");
  if constexpr (E == Epilogue::kSmallClamped) {
    return RequantSmallClampedAvx512(r, acc);
  } else if constexpr (E == Epilogue::kSmall) {
    return RequantSmallAvx512(r, acc);
  } else {
    return RequantDoubleFastAvx512(r, acc);
  }
}

// The 64 lanes of v0..v3 narrowed to bytes with signed saturation,
// clamped to the activation range and their dwords permuted by `order`:
// after the two packs, dword 4k + j holds lanes 4k..4k+3 of vector j.
GRAFT_VNNI_INLINE __m512i ClampedBytes(const Requant16& r, __m512i v0,
                                       __m512i v1, __m512i v2, __m512i v3,
                                       __m512i order) {
  __m512i bytes = _mm512_packs_epi16(_mm512_packs_epi32(v0, v1),
                                     _mm512_packs_epi32(v2, v3));
  bytes = _mm512_max_epi8(bytes, r.act_min8);
  bytes = _mm512_min_epi8(bytes, r.act_max8);
  return _mm512_permutexvar_epi32(order, bytes);
}

// ClampedBytes's order putting vector j's 16 lanes at bytes 16j..16j+15.
GRAFT_VNNI_INLINE __m512i InVectorOrder() {
  return _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11,
                           15);
}

// StoreClampedS8Avx512 on four rows at once (op, op + stride, ...): two
// saturating packs narrow the four vectors to bytes (the same bytes as
// the one-row narrowing: saturation composes), one clamp and one permute
// put them in row order, so a row costs about 2.5 operations instead of
// 5; rows of 16 bytes one after another are one 64-byte store.
GRAFT_VNNI_INLINE void StoreClampedS8x4(const Requant16& r, __m512i v0,
                                        __m512i v1, __m512i v2, __m512i v3,
                                        int cols, uint8_t* op, int64_t stride) {
  const __m512i bytes = ClampedBytes(r, v0, v1, v2, v3, InVectorOrder());
  if (cols == kQGemmNr && stride == kQGemmNr) {
    _mm512_storeu_si512(op, bytes);
    return;
  }
  const __m128i b0 = _mm512_castsi512_si128(bytes);
  const __m128i b1 = _mm512_extracti32x4_epi32(bytes, 1);
  const __m128i b2 = _mm512_extracti32x4_epi32(bytes, 2);
  const __m128i b3 = _mm512_extracti32x4_epi32(bytes, 3);
  if (cols == kQGemmNr) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op), b0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op + stride), b1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op + 2 * stride), b2);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(op + 3 * stride), b3);
  } else {
    const __mmask16 m = static_cast<__mmask16>((1u << cols) - 1);
    _mm_mask_storeu_epi8(op, m, b0);
    _mm_mask_storeu_epi8(op + stride, m, b1);
    _mm_mask_storeu_epi8(op + 2 * stride, m, b2);
    _mm_mask_storeu_epi8(op + 3 * stride, m, b3);
  }
}

// StoreClampedS8x4's narrowing for two rows of two panels: v00, v01 row
// 0's panels, v10, v11 row 1's, so that each row's 16 + cols1 bytes leave
// as one 32-byte store (one 64-byte store where the rows touch), where
// four rows of one panel took four 16-byte ones and three extracts.
GRAFT_VNNI_INLINE void StoreClampedS8x2x2(const Requant16& r, __m512i v00,
                                          __m512i v01, __m512i v10, __m512i v11,
                                          int cols1, uint8_t* op,
                                          int64_t stride) {
  const __m512i bytes = ClampedBytes(r, v00, v01, v10, v11, InVectorOrder());
  if (cols1 == kQGemmNr && stride == 2 * kQGemmNr) {
    _mm512_storeu_si512(op, bytes);
    return;
  }
  const __m256i row0 = _mm512_castsi512_si256(bytes);
  const __m256i row1 = _mm512_extracti64x4_epi64(bytes, 1);
  if (cols1 == kQGemmNr) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(op), row0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(op + stride), row1);
  } else {
    const __mmask32 m =
        static_cast<__mmask32>((uint64_t{1} << (16 + cols1)) - 1);
    _mm256_mask_storeu_epi8(op, m, row0);
    _mm256_mask_storeu_epi8(op + stride, m, row1);
  }
}

// Requantizes and stores the MR x NP tile `c` (row i, panel j: c[i][j])
// at rows [0, MR) of `out` (row stride out_stride), panels p and p + 1,
// with their requantization constants rr[0] and rr[1].
template <int MR, int NP, Epilogue E>
GRAFT_VNNI_INLINE void StoreTileVnni(const __m512i (&c)[8][2],
                                     const QGemmVnniWeights& b, int64_t p,
                                     const QGemmRequant& rq,
                                     const Requant16* rr, uint8_t* out,
                                     int64_t out_stride) {
  if constexpr (NP == 2 && E != Epilogue::kExact) {
    // Two rows of both panels at a time (the first panel is whole).
    const int64_t n0 = p * kQGemmNr;
    const int cols1 =
        static_cast<int>(std::min<int64_t>(kQGemmNr, b.n - n0 - kQGemmNr));
    int i = 0;
    for (; i + 2 <= MR; i += 2) {
      StoreClampedS8x2x2(
          rr[0], FastValue<E>(rr[0], c[i][0]), FastValue<E>(rr[1], c[i][1]),
          FastValue<E>(rr[0], c[i + 1][0]), FastValue<E>(rr[1], c[i + 1][1]),
          cols1, out + i * out_stride + n0, out_stride);
    }
    if (i < MR) {
      uint8_t* op = out + i * out_stride + n0;
      StoreClampedS8Avx512(rr[0], FastValue<E>(rr[0], c[i][0]), kQGemmNr, op);
      StoreClampedS8Avx512(rr[1], FastValue<E>(rr[1], c[i][1]), cols1,
                           op + kQGemmNr);
    }
    return;
  }
  for (int j = 0; j < NP; ++j) {
    const int64_t n0 = (p + j) * kQGemmNr;
    const int cols = static_cast<int>(std::min<int64_t>(kQGemmNr, b.n - n0));
    const Requant16& r = rr[j];
    if constexpr (E == Epilogue::kExact) {
      for (int i = 0; i < MR; ++i) {
        const __m512i v = rq.single_rounding ? RequantSingleAvx512(r, c[i][j])
                                             : RequantDoubleAvx512(r, c[i][j]);
        StoreBytesAvx512(v, cols, out + i * out_stride + n0);
      }
    } else {
      int i = 0;
      for (; i + 4 <= MR; i += 4) {
        StoreClampedS8x4(
            r, FastValue<E>(r, c[i][j]), FastValue<E>(r, c[i + 1][j]),
            FastValue<E>(r, c[i + 2][j]), FastValue<E>(r, c[i + 3][j]), cols,
            out + i * out_stride + n0, out_stride);
      }
      for (; i < MR; ++i) {
        StoreClampedS8Avx512(r, FastValue<E>(r, c[i][j]), cols,
                             out + i * out_stride + n0);
      }
    }
  }
}

// The four bytes at p in every int32 lane.
GRAFT_VNNI_INLINE __m512i Broadcast4(const uint8_t* p) {
  int32_t quad;
  std::memcpy(&quad, p, sizeof(quad));
  return _mm512_set1_epi32(quad);
}

// One row of a tile's reduction step: row i's four bytes at a##i + off
// broadcast and multiplied into its accumulators c##i##a (panel w0) and
// c##i##b (w1), for rows below MR. Shared by the tiles below (TileVnni,
// TileVnniTaps), which name their locals to match.
#define GRAFT_VNNI_ROW(i)                                   \
  if constexpr (MR > i) {                                   \
    const __m512i x = Broadcast4(a##i + off);               \
    c##i##a = Dpbusd(c##i##a, x, w0);                       \
    if constexpr (NP > 1) c##i##b = Dpbusd(c##i##b, x, w1); \
  }

// MR rows x NP panels (starting at panel p) over the whole reduction: one
// 4-byte broadcast of a per row and one 64-byte load of b per panel feed
// MR * NP vpdpbusd per group of four steps. The accumulators are named
// variables, not an array: GCC 12 kept an array of them in memory.
template <int MR, int NP, Epilogue E>
GRAFT_VNNI_INLINE void TileVnni(const uint8_t* a, int64_t kp, int64_t row0,
                                const QGemmVnniWeights& b, int64_t p,
                                const QGemmRequant& rq, const Requant16* rr,
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
  const __m512i za = kStartAtOffset<E> ? rr[0].offset : z;
  const __m512i zb = NP > 1 && kStartAtOffset<E> ? rr[1].offset : z;
  __m512i c0a = za, c0b = zb, c1a = za, c1b = zb, c2a = za, c2b = zb, c3a = za,
          c3b = zb, c4a = za, c4b = zb, c5a = za, c5b = zb, c6a = za, c6b = zb,
          c7a = za, c7b = zb;
  int64_t off = 0;
  if constexpr (MR == 1) {
    // One row (a FULLY_CONNECTED's): its steps go round four pairs of
    // accumulators, summed at the end (integers, so in any order the same
    // sums), where one pair's chains waited on vpdpbusd's latency at every
    // step (int8 MobileNetV2 0.35's 1280 -> 1000, 11% of its time).
    __m512i s1a = z, s1b = z, s2a = z, s2b = z, s3a = z, s3b = z;
    for (; off + 16 <= kp; off += 16) {
      const uint8_t* x = a0 + off;
      const int8_t* w = b0 + off * kQGemmNr;
      const int8_t* v = b1 + off * kQGemmNr;
      c0a = Dpbusd(c0a, Broadcast4(x), _mm512_loadu_si512(w));
      s1a = Dpbusd(s1a, Broadcast4(x + 4), _mm512_loadu_si512(w + 64));
      s2a = Dpbusd(s2a, Broadcast4(x + 8), _mm512_loadu_si512(w + 128));
      s3a = Dpbusd(s3a, Broadcast4(x + 12), _mm512_loadu_si512(w + 192));
      if constexpr (NP > 1) {
        c0b = Dpbusd(c0b, Broadcast4(x), _mm512_loadu_si512(v));
        s1b = Dpbusd(s1b, Broadcast4(x + 4), _mm512_loadu_si512(v + 64));
        s2b = Dpbusd(s2b, Broadcast4(x + 8), _mm512_loadu_si512(v + 128));
        s3b = Dpbusd(s3b, Broadcast4(x + 12), _mm512_loadu_si512(v + 192));
      }
    }
    c0a = _mm512_add_epi32(_mm512_add_epi32(c0a, s1a),
                           _mm512_add_epi32(s2a, s3a));
    c0b = _mm512_add_epi32(_mm512_add_epi32(c0b, s1b),
                           _mm512_add_epi32(s2b, s3b));
  }
  for (; off < kp; off += 4) {
    const __m512i w0 = _mm512_loadu_si512(b0 + off * kQGemmNr);
    const __m512i w1 = NP > 1 ? _mm512_loadu_si512(b1 + off * kQGemmNr) : w0;
    GRAFT_VNNI_ROW(0)
    GRAFT_VNNI_ROW(1)
    GRAFT_VNNI_ROW(2)
    GRAFT_VNNI_ROW(3)
    GRAFT_VNNI_ROW(4)
    GRAFT_VNNI_ROW(5)
    GRAFT_VNNI_ROW(6)
    GRAFT_VNNI_ROW(7)
  }
  const __m512i c[8][2] = {{c0a, c0b}, {c1a, c1b}, {c2a, c2b}, {c3a, c3b},
                           {c4a, c4b}, {c5a, c5b}, {c6a, c6b}, {c7a, c7b}};
  StoreTileVnni<MR, NP, E>(c, b, p, rq, rr, out + row0 * out_stride,
                           out_stride);
}

using TileVnniFn = void (*)(const uint8_t*, int64_t, int64_t,
                            const QGemmVnniWeights&, int64_t,
                            const QGemmRequant&, const Requant16*, uint8_t*,
                            int64_t);

// Whole tiles of kQGemmVnniMr rows inline, then the last rows' tile from a
// table indexed by their count - 1.
template <int NP, Epilogue E>
GRAFT_VNNI_INLINE void RowsVnni(const uint8_t* a, int64_t rows, int64_t kp,
                                const QGemmVnniWeights& b, int64_t p,
                                const QGemmRequant& rq, int64_t channel0,
                                uint8_t* out, int64_t out_stride) {
  static_assert(kQGemmVnniMr == 8, "the table below lists 1 to 8 rows");
  static constexpr TileVnniFn kLastTile[kQGemmVnniMr - 1] = {
      TileVnni<1, NP, E>, TileVnni<2, NP, E>, TileVnni<3, NP, E>,
      TileVnni<4, NP, E>, TileVnni<5, NP, E>, TileVnni<6, NP, E>,
      TileVnni<7, NP, E>};
  // The panels' requantization constants, once for all row tiles.
  alignas(64) Requant16 rr[2];
  for (int j = 0; j < NP; ++j) {
    const int64_t n0 = (p + j) * kQGemmNr;
    rr[j] = LoadRequant16(rq, channel0 + n0, b.col_offset.data() + n0);
  }
  int64_t row0 = 0;
  for (; row0 + kQGemmVnniMr <= rows; row0 += kQGemmVnniMr) {
    TileVnni<kQGemmVnniMr, NP, E>(a, kp, row0, b, p, rq, rr, out, out_stride);
  }
  if (row0 < rows) {
    kLastTile[rows - row0 - 1](a, kp, row0, b, p, rq, rr, out, out_stride);
  }
}

// Panel pairs outermost, so a pair of panels (32 columns x kp bytes) stays
// in L1 while every row block of a passes over it.
template <Epilogue E>
GRAFT_VNNI_INLINE void PanelsVnni(const uint8_t* a, int64_t rows,
                                  const QGemmVnniWeights& b, int64_t p0,
                                  int64_t p1, const QGemmRequant& rq,
                                  int64_t channel0, uint8_t* out,
                                  int64_t out_stride) {
  const int64_t kp = QGemmVnniPaddedK(b.k);
  int64_t p = p0;
  for (; p + 2 <= p1; p += 2) {
    RowsVnni<2, E>(a, rows, kp, b, p, rq, channel0, out, out_stride);
  }
  if (p < p1) RowsVnni<1, E>(a, rows, kp, b, p, rq, channel0, out, out_stride);
}

GRAFT_VNNI_TARGET void QGemmVnniImpl(const uint8_t* a, int64_t rows,
                                     const QGemmVnniWeights& b, int64_t p0,
                                     int64_t p1, const QGemmRequant& rq,
                                     int64_t channel0, uint8_t* out,
                                     int64_t out_stride) {
  switch (EpilogueFor(rq)) {
    case Epilogue::kSmallClamped:
      return PanelsVnni<Epilogue::kSmallClamped>(a, rows, b, p0, p1, rq,
                                                 channel0, out, out_stride);
    case Epilogue::kSmall:
      return PanelsVnni<Epilogue::kSmall>(a, rows, b, p0, p1, rq, channel0, out,
                                          out_stride);
    case Epilogue::kFast:
      return PanelsVnni<Epilogue::kFast>(a, rows, b, p0, p1, rq, channel0, out,
                                         out_stride);
    case Epilogue::kExact:
      return PanelsVnni<Epilogue::kExact>(a, rows, b, p0, p1, rq, channel0, out,
                                          out_stride);
  }
}

// Paired panels (QGemmVnniPackPairedRows): the lanes of a pair's second
// row.
constexpr __mmask16 kPairedSecondRow = 0xF0F0;

// Row p's four bytes in the first row's lanes, row q's in the second's.
GRAFT_VNNI_INLINE __m512i BroadcastPair(const uint8_t* p, const uint8_t* q) {
  int32_t quad;
  std::memcpy(&quad, q, sizeof(quad));
  return _mm512_mask_set1_epi32(Broadcast4(p), kPairedSecondRow, quad);
}

// A paired panel's lanes (LoadRequant16Lanes): lane l channel
// 4 * (l / 8) + l % 4 of the first `cols`.
struct PairedLanes {
  __mmask16 cols_mask;
  GRAFT_VNNI_INLINE __m512i operator()(const int32_t* p) const {
    const __m512i column =
        _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 6, 7, 4, 5, 6, 7);
    return _mm512_permutexvar_epi32(column,
                                    _mm512_maskz_loadu_epi32(cols_mask, p));
  }
};

// Requantizes and stores the accumulators of MR pairs of rows (c[i]: rows
// 2i and 2i + 1), `rows` of them, `cols` columns each: four pairs at a
// time narrowed to bytes by two packs (128-bit lane k then holds the
// pairs' lanes 4k..4k+3, dword j pair j's), clamped, and one permute puts
// the eight rows in order, eight bytes each.
template <int MR, Epilogue E>
GRAFT_VNNI_INLINE void StoreTilePaired(const __m512i (&c)[8],
                                       const Requant16& r, int rows, int cols,
                                       uint8_t* out, int64_t out_stride) {
  // Row 2j + p, columns 4h..4h+3: lane k = 2h + p, dword j.
  const __m512i order =
      _mm512_setr_epi32(0, 8, 4, 12, 1, 9, 5, 13, 2, 10, 6, 14, 3, 11, 7, 15);
  for (int g = 0; g < MR; g += 4) {
    __m512i v[4];
    for (int i = 0; i < 4; ++i) {
      v[i] = g + i < MR ? FastValue<E>(r, c[g + i]) : _mm512_setzero_si512();
    }
    const __m512i bytes = ClampedBytes(r, v[0], v[1], v[2], v[3], order);
    uint8_t* op = out + 2 * g * out_stride;
    const int n = std::min(8, rows - 2 * g);
    if (n == 8 && cols == kQGemmVnniPairedNr && out_stride == cols) {
      _mm512_storeu_si512(op, bytes);
      continue;
    }
    const __mmask16 m = static_cast<__mmask16>((1u << cols) - 1);
    const __m128i lane[4] = {_mm512_castsi512_si128(bytes),
                             _mm512_extracti32x4_epi32(bytes, 1),
                             _mm512_extracti32x4_epi32(bytes, 2),
                             _mm512_extracti32x4_epi32(bytes, 3)};
    for (int i = 0; i < n; ++i) {
      const __m128i row = i % 2 == 0
                              ? lane[i / 2]
                              : _mm_unpackhi_epi64(lane[i / 2], lane[i / 2]);
      _mm_mask_storeu_epi8(op + i * out_stride, m, row);
    }
  }
}

// MR pairs of rows from row0 on, `rows` of them (the last pair's second
// row may be missing: its lanes then repeat the first row, unstored).
template <int MR, Epilogue E>
GRAFT_VNNI_INLINE void TileVnniPaired(const uint8_t* a, int64_t kp,
                                      int64_t row0, int rows,
                                      const QGemmVnniWeights& b,
                                      const Requant16& r, uint8_t* out,
                                      int64_t out_stride) {
  static_assert(MR >= 1 && MR <= 8, "8 pairs at most");
  const uint8_t* a0 = a + row0 * kp;
  // Pairs past MR alias pair 0; their sums are dead and dropped.
  auto first = [&](int i) { return a0 + (MR > i ? 2 * i * kp : 0); };
  auto second = [&](int i) {
    return first(i) + (MR > i && 2 * i + 1 < rows ? kp : 0);
  };
  const uint8_t *a1 = first(1), *a2 = first(2), *a3 = first(3), *a4 = first(4),
                *a5 = first(5), *a6 = first(6), *a7 = first(7);
  const uint8_t *q0 = second(0), *q1 = second(1), *q2 = second(2),
                *q3 = second(3), *q4 = second(4), *q5 = second(5),
                *q6 = second(6), *q7 = second(7);
  const __m512i z = kStartAtOffset<E> ? r.offset : _mm512_setzero_si512();
  __m512i c0 = z, c1 = z, c2 = z, c3 = z, c4 = z, c5 = z, c6 = z, c7 = z;
  for (int64_t off = 0; off < kp; off += 4) {
    const __m512i w = _mm512_loadu_si512(b.packed.data() + off * kQGemmNr);
#define GRAFT_VNNI_PAIR(i) \
  if constexpr (MR > i)    \
    c##i = Dpbusd(c##i, BroadcastPair(a##i + off, q##i + off), w);
    GRAFT_VNNI_PAIR(0)
    GRAFT_VNNI_PAIR(1)
    GRAFT_VNNI_PAIR(2)
    GRAFT_VNNI_PAIR(3)
    GRAFT_VNNI_PAIR(4)
    GRAFT_VNNI_PAIR(5)
    GRAFT_VNNI_PAIR(6)
    GRAFT_VNNI_PAIR(7)
#undef GRAFT_VNNI_PAIR
  }
  const __m512i c[8] = {c0, c1, c2, c3, c4, c5, c6, c7};
  StoreTilePaired<MR, E>(c, r, rows, static_cast<int>(b.n),
                         out + row0 * out_stride, out_stride);
}

using TileVnniPairedFn = void (*)(const uint8_t*, int64_t, int64_t, int,
                                  const QGemmVnniWeights&, const Requant16&,
                                  uint8_t*, int64_t);

// QGemmVnni for paired weights: whole tiles of kQGemmVnniMr pairs inline,
// then the last rows' tile (up to 2 * kQGemmVnniMr - 1 rows) from a table
// indexed by their pairs - 1.
template <Epilogue E>
GRAFT_VNNI_INLINE void PairedVnni(const uint8_t* a, int64_t rows,
                                  const QGemmVnniWeights& b,
                                  const QGemmRequant& rq, int64_t channel0,
                                  uint8_t* out, int64_t out_stride) {
  static_assert(kQGemmVnniMr == 8, "the table below lists 1 to 8 pairs");
  static constexpr TileVnniPairedFn kLastTile[kQGemmVnniMr] = {
      TileVnniPaired<1, E>, TileVnniPaired<2, E>, TileVnniPaired<3, E>,
      TileVnniPaired<4, E>, TileVnniPaired<5, E>, TileVnniPaired<6, E>,
      TileVnniPaired<7, E>, TileVnniPaired<8, E>};
  const int64_t kp = QGemmVnniPaddedK(b.k);
  const Requant16 r =
      LoadRequant16Lanes(rq, channel0, b.col_offset.data(),
                         PairedLanes{static_cast<__mmask16>((1u << b.n) - 1)});
  constexpr int kTileRows = 2 * kQGemmVnniMr;
  int64_t row0 = 0;
  for (; row0 + kTileRows <= rows; row0 += kTileRows) {
    TileVnniPaired<kQGemmVnniMr, E>(a, kp, row0, kTileRows, b, r, out,
                                    out_stride);
  }
  if (row0 < rows) {
    const int left = static_cast<int>(rows - row0);
    kLastTile[(left + 1) / 2 - 1](a, kp, row0, left, b, r, out, out_stride);
  }
}

// Paired weights need rq.fast_double (QGemmVnniPackPairedRows).
GRAFT_VNNI_TARGET void QGemmVnniPairedImpl(const uint8_t* a, int64_t rows,
                                           const QGemmVnniWeights& b,
                                           const QGemmRequant& rq,
                                           int64_t channel0, uint8_t* out,
                                           int64_t out_stride) {
  switch (EpilogueFor(rq)) {
    case Epilogue::kSmallClamped:
      return PairedVnni<Epilogue::kSmallClamped>(a, rows, b, rq, channel0, out,
                                                 out_stride);
    case Epilogue::kSmall:
      return PairedVnni<Epilogue::kSmall>(a, rows, b, rq, channel0, out,
                                          out_stride);
    case Epilogue::kFast:
    case Epilogue::kExact:
      return PairedVnni<Epilogue::kFast>(a, rows, b, rq, channel0, out,
                                         out_stride);
  }
}

// TileVnni with indirect rows: row i of a is the concatenation over taps
// t of the t.kp bytes at base + rows[i] + t.delta[t] (QGemmTaps), the
// weights packed for the reduction t.count * t.kp.
template <int MR, int NP, Epilogue E>
GRAFT_VNNI_INLINE void TileVnniTaps(const uint8_t* base, const int64_t* rows,
                                    const QGemmTaps& t,
                                    const QGemmVnniWeights& b, int64_t p,
                                    const QGemmRequant& rq, const Requant16* rr,
                                    uint8_t* out, int64_t out_stride) {
  static_assert(MR >= 1 && MR <= 8 && NP >= 1 && NP <= 2, "8 x 2 at most");
  const int64_t kp = t.count * t.kp;
  const int8_t* b0 = b.packed.data() + p * kQGemmNr * kp;
  const int8_t* b1 = b0 + kQGemmNr * kp;
  // Rows past MR alias row 0; their sums are dead and dropped.
  const uint8_t* r0 = base + rows[0];
  const uint8_t* r1 = base + rows[MR > 1 ? 1 : 0];
  const uint8_t* r2 = base + rows[MR > 2 ? 2 : 0];
  const uint8_t* r3 = base + rows[MR > 3 ? 3 : 0];
  const uint8_t* r4 = base + rows[MR > 4 ? 4 : 0];
  const uint8_t* r5 = base + rows[MR > 5 ? 5 : 0];
  const uint8_t* r6 = base + rows[MR > 6 ? 6 : 0];
  const uint8_t* r7 = base + rows[MR > 7 ? 7 : 0];
  const __m512i z = _mm512_setzero_si512();
  const __m512i za = kStartAtOffset<E> ? rr[0].offset : z;
  const __m512i zb = NP > 1 && kStartAtOffset<E> ? rr[1].offset : z;
  __m512i c0a = za, c0b = zb, c1a = za, c1b = zb, c2a = za, c2b = zb, c3a = za,
          c3b = zb, c4a = za, c4b = zb, c5a = za, c5b = zb, c6a = za, c6b = zb,
          c7a = za, c7b = zb;
  for (int tap = 0; tap < t.count; ++tap) {
    const int64_t d = t.delta[tap];
    const uint8_t* a0 = r0 + d;
    const uint8_t* a1 = r1 + d;
    const uint8_t* a2 = r2 + d;
    const uint8_t* a3 = r3 + d;
    const uint8_t* a4 = r4 + d;
    const uint8_t* a5 = r5 + d;
    const uint8_t* a6 = r6 + d;
    const uint8_t* a7 = r7 + d;
    for (int64_t off = 0; off < t.kp; off += 4) {
      const __m512i w0 = _mm512_loadu_si512(b0);
      const __m512i w1 = NP > 1 ? _mm512_loadu_si512(b1) : w0;
      b0 += kQuadBytes;
      if constexpr (NP > 1) b1 += kQuadBytes;
      GRAFT_VNNI_ROW(0)
      GRAFT_VNNI_ROW(1)
      GRAFT_VNNI_ROW(2)
      GRAFT_VNNI_ROW(3)
      GRAFT_VNNI_ROW(4)
      GRAFT_VNNI_ROW(5)
      GRAFT_VNNI_ROW(6)
      GRAFT_VNNI_ROW(7)
    }
  }
  const __m512i c[8][2] = {{c0a, c0b}, {c1a, c1b}, {c2a, c2b}, {c3a, c3b},
                           {c4a, c4b}, {c5a, c5b}, {c6a, c6b}, {c7a, c7b}};
  StoreTileVnni<MR, NP, E>(c, b, p, rq, rr, out, out_stride);
}

using TileVnniTapsFn = void (*)(const uint8_t*, const int64_t*,
                                const QGemmTaps&, const QGemmVnniWeights&,
                                int64_t, const QGemmRequant&, const Requant16*,
                                uint8_t*, int64_t);

template <int NP, Epilogue E>
GRAFT_VNNI_INLINE void RowsVnniTaps(const uint8_t* base, const int64_t* rows,
                                    int64_t n_rows, const QGemmTaps& t,
                                    const QGemmVnniWeights& b, int64_t p,
                                    const QGemmRequant& rq, int64_t channel0,
                                    uint8_t* out, int64_t out_stride) {
  static_assert(kQGemmVnniMr == 8, "the table below lists 1 to 8 rows");
  static constexpr TileVnniTapsFn kLastTile[kQGemmVnniMr - 1] = {
      TileVnniTaps<1, NP, E>, TileVnniTaps<2, NP, E>, TileVnniTaps<3, NP, E>,
      TileVnniTaps<4, NP, E>, TileVnniTaps<5, NP, E>, TileVnniTaps<6, NP, E>,
      TileVnniTaps<7, NP, E>};
  // The panels' requantization constants, once for all row tiles.
  alignas(64) Requant16 rr[2];
  for (int j = 0; j < NP; ++j) {
    const int64_t n0 = (p + j) * kQGemmNr;
    rr[j] = LoadRequant16(rq, channel0 + n0, b.col_offset.data() + n0);
  }
  int64_t row0 = 0;
  for (; row0 + kQGemmVnniMr <= n_rows; row0 += kQGemmVnniMr) {
    TileVnniTaps<kQGemmVnniMr, NP, E>(base, rows + row0, t, b, p, rq, rr,
                                      out + row0 * out_stride, out_stride);
  }
  if (row0 < n_rows) {
    kLastTile[n_rows - row0 - 1](base, rows + row0, t, b, p, rq, rr,
                                 out + row0 * out_stride, out_stride);
  }
}

template <Epilogue E>
GRAFT_VNNI_INLINE void PanelsVnniTaps(const uint8_t* base, const int64_t* rows,
                                      int64_t n_rows, const QGemmTaps& t,
                                      const QGemmVnniWeights& b, int64_t p0,
                                      int64_t p1, const QGemmRequant& rq,
                                      int64_t channel0, uint8_t* out,
                                      int64_t out_stride) {
  int64_t p = p0;
  for (; p + 2 <= p1; p += 2) {
    RowsVnniTaps<2, E>(base, rows, n_rows, t, b, p, rq, channel0, out,
                       out_stride);
  }
  if (p < p1) {
    RowsVnniTaps<1, E>(base, rows, n_rows, t, b, p, rq, channel0, out,
                       out_stride);
  }
}

GRAFT_VNNI_TARGET void QGemmVnniTapsImpl(const uint8_t* base,
                                         const int64_t* rows, int64_t n_rows,
                                         const QGemmTaps& t,
                                         const QGemmVnniWeights& b, int64_t p0,
                                         int64_t p1, const QGemmRequant& rq,
                                         int64_t channel0, uint8_t* out,
                                         int64_t out_stride) {
  switch (EpilogueFor(rq)) {
    case Epilogue::kSmallClamped:
      return PanelsVnniTaps<Epilogue::kSmallClamped>(
          base, rows, n_rows, t, b, p0, p1, rq, channel0, out, out_stride);
    case Epilogue::kSmall:
      return PanelsVnniTaps<Epilogue::kSmall>(base, rows, n_rows, t, b, p0, p1,
                                              rq, channel0, out, out_stride);
    case Epilogue::kFast:
      return PanelsVnniTaps<Epilogue::kFast>(base, rows, n_rows, t, b, p0, p1,
                                             rq, channel0, out, out_stride);
    case Epilogue::kExact:
      return PanelsVnniTaps<Epilogue::kExact>(base, rows, n_rows, t, b, p0, p1,
                                              rq, channel0, out, out_stride);
  }
}

GRAFT_VNNI_TARGET void FlipImpl(const int8_t* src, int64_t n, uint8_t* dst) {
  FlipToUnsignedAvx512(src, n, dst);
}
#undef GRAFT_VNNI_ROW
#endif  // GRAFT_QGEMM_AVX2

CallCounter g_paired_calls;

}  // namespace

int64_t QGemmVnniPairedCallsForTesting() {
  return g_paired_calls.load(std::memory_order_relaxed);
}

namespace {

// out's shape and column terms (a_offset times each column's weight sum,
// modulo 2^32, as the int32 sums they join), unpaired, its packed bytes
// zeroed to hold `lanes` lanes of width kp: what both packings share.
void PackColumnTerms(const int8_t* w, int64_t n, int64_t k, int64_t row_stride,
                     int32_t a_offset, int64_t lanes, QGemmVnniWeights* out) {
  out->n = n, out->k = k;
  out->paired = false;
  out->packed.assign(static_cast<size_t>(lanes * QGemmVnniPaddedK(k)), 0);
  out->col_offset.assign(static_cast<size_t>((QGemmPanels(n) + 1) * kQGemmNr),
                         0);
  for (int64_t c = 0; c < n; ++c) {
    int64_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) sum += w[c * row_stride + kk];
    out->col_offset[c] = static_cast<int32_t>(static_cast<uint32_t>(a_offset) *
                                              static_cast<uint32_t>(sum));
  }
}

}  // namespace

void QGemmVnniPackRows(const int8_t* w, int64_t n, int64_t k,
                       int64_t row_stride, int32_t a_offset,
                       QGemmVnniWeights* out) {
  const int64_t kp = QGemmVnniPaddedK(k);
  PackColumnTerms(w, n, k, row_stride, a_offset, QGemmPanels(n) * kQGemmNr,
                  out);
  for (int64_t c = 0; c < n; ++c) {
    int8_t* panel = out->packed.data() + c / kQGemmNr * kQGemmNr * kp;
    const int j = static_cast<int>(c % kQGemmNr);
    for (int64_t kk = 0; kk < k; ++kk) {
      panel[VnniIndex(kk, j)] = w[c * row_stride + kk];
    }
  }
}

void QGemmVnniPackPairedRows(const int8_t* w, int64_t n, int64_t k,
                             int64_t row_stride, int32_t a_offset,
                             QGemmVnniWeights* out) {
  PackColumnTerms(w, n, k, row_stride, a_offset, kQGemmNr, out);
  out->paired = true;
  for (int l = 0; l < kQGemmNr; ++l) {
    const int64_t c = 4 * (l / 8) + l % 4;
    if (c >= n) continue;
    for (int64_t kk = 0; kk < k; ++kk) {
      out->packed[VnniIndex(kk, l)] = w[c * row_stride + kk];
    }
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
  if (b.paired) {
    g_paired_calls.fetch_add(1, std::memory_order_relaxed);
    if (p0 >= p1) return;  // the one panel, or none
    QGemmVnniPairedImpl(a, rows, b, rq, channel0,
                        reinterpret_cast<uint8_t*>(out), out_stride);
    return;
  }
  QGemmVnniImpl(a, rows, b, p0, p1, rq, channel0,
                reinterpret_cast<uint8_t*>(out), out_stride);
#else
  (void)a, (void)rows, (void)b, (void)p0, (void)p1, (void)rq, (void)channel0,
      (void)out, (void)out_stride;
  std::abort();  // KernelIsa() is never kAvx512Vnni in such a build
#endif
}

template <typename T>
void QGemmVnniTaps(const uint8_t* base, const int64_t* rows, int64_t n_rows,
                   const QGemmTaps& taps, const QGemmVnniWeights& b, int64_t p0,
                   int64_t p1, const QGemmRequant& rq, int64_t channel0, T* out,
                   int64_t out_stride) {
  static_assert(sizeof(T) == 1, "8-bit outputs only");
#if GRAFT_QGEMM_AVX2
  CountQGemmCall(CpuIsa::kAvx512Vnni);
  QGemmVnniTapsImpl(base, rows, n_rows, taps, b, p0, p1, rq, channel0,
                    reinterpret_cast<uint8_t*>(out), out_stride);
#else
  (void)base, (void)rows, (void)n_rows, (void)taps, (void)b, (void)p0, (void)p1,
      (void)rq, (void)channel0, (void)out, (void)out_stride;
  std::abort();  // KernelIsa() is never kAvx512Vnni in such a build
#endif
}

template void QGemmVnniTaps<int8_t>(const uint8_t*, const int64_t*, int64_t,
                                    const QGemmTaps&, const QGemmVnniWeights&,
                                    int64_t, int64_t, const QGemmRequant&,
                                    int64_t, int8_t*, int64_t);

template void QGemmVnni<int8_t>(const uint8_t*, int64_t,
                                const QGemmVnniWeights&, int64_t, int64_t,
                                const QGemmRequant&, int64_t, int8_t*, int64_t);
template void QGemmVnni<uint8_t>(const uint8_t*, int64_t,
                                 const QGemmVnniWeights&, int64_t, int64_t,
                                 const QGemmRequant&, int64_t, uint8_t*,
                                 int64_t);

}  // namespace graft::kernels
