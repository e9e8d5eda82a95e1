#include "dispatch/kernels/gemm.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/thread_pool.h"

namespace graft::kernels {
namespace {

static_assert(kGemmNr == 16, "the micro-kernel holds two V8 per row");

CallCounter gemm_calls[3];  // per CpuIsa
CallCounter indirect_calls;
CallCounter row_panels_calls;
CallCounter wide_calls;
CallCounter row_parts_calls;
CallCounter column_parts_calls;

// Rows of a wide tile of two vectors. A range of rows whose last tile
// would have 1 or 2 rows ends on one tile of 7 or 8 instead (49 rows as 7
// x 6 + 7, not 8 x 6 + 1; WideGroup), so no tile is so short that its sums
// wait on the fused multiply-add's latency. (7 or 8 rows fit the 32
// registers too, but GCC 12 then keeps row pointers in vector registers
// and moves them back in the loop: every tile that tall was 5-10% slower
// on Zen 5. Tiles of one vector take 8 rows.)
constexpr int kWideMr = 6;

// Panels of kGemmNr columns that N columns take (the last may be partial).
inline int64_t Panels(int64_t n) { return (n + kGemmNr - 1) / kGemmNr; }

// Where vector v of a tile row's B values for one k starts, relative to
// the first panel's: 8-float vectors split one 16-column panel, 16-float
// ones take a panel each (`panel_stride` floats apart).
template <typename V>
GRAFT_SIMD_INLINE int64_t BOffset(int v, int64_t panel_stride) {
  return v * kLanes<V> / kGemmNr * panel_stride + v * kLanes<V> % kGemmNr;
}

// acc[i][v] += sum over kk < len of a[i][kk] * (B row kk's vector v), in
// order; in the AVX2 and AVX-512 builds each step is one fused
// multiply-add.
template <int MR, int NV, typename V>
GRAFT_SIMD_INLINE void Accumulate(V (&acc)[MR][NV], const float* const* a,
                                  const float* bp, int64_t panel_stride,
                                  int64_t len) {
  for (int64_t kk = 0; kk < len; ++kk) {
    alignas(sizeof(V)) V b[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      b[v] = LoadVec<V>(bp + BOffset<V>(v, panel_stride) + kk * kGemmNr);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const float x = a[i][kk];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] += b[v] * x;
    }
  }
}

// One MR x (NV vectors) tile of C over the whole K, in registers: NV * MR
// accumulators (12 for MR = 6, NV = 2) plus NV B vectors and one broadcast
// fit the 16 AVX registers. With V8, NV = 1 serves a last panel of at most
// 8 columns; with V16 (the AVX-512 build's wide tiles), the two vectors are
// two panels, 32 columns. Each C element is
// bias + sum over k in order, whatever the vector width. The tile always writes
// NV whole vectors at `c` (row stride ldc) starting from the ones at `bias` (or
// zeros): a last panel narrower than that goes through a buffer (TileRows), so
// this epilogue has no branch and no call, and the accumulators stay in
// registers. kClamp: clamp to [lo, hi]; without it (no fused activation:
// lo, hi = -inf, +inf, where the clamp is the identity, NaN included) the
// stores follow the sums directly. Then HARD_SWISH where the runtime fused
// one (g.hard_swish).
template <int MR, int NV, bool kClamp, typename V>
GRAFT_SIMD_INLINE void Tile(const GemmArgs& g, int64_t row0,
                            const float* bias, const float* bp, V lo, V hi,
                            float* c, int64_t ldc) {
  constexpr int W = kLanes<V>;
  const int64_t panel_stride = kGemmNr * g.k;
  alignas(sizeof(V)) V init[NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    init[v] = bias != nullptr ? LoadVec<V>(bias + W * v) : SplatVec<V>(0.0f);
  }
  // alignas: Clang moves vector values with aligned vector loads, but its
  // ASan stack slots honour only the typedef's 4 bytes (a fault on the
  // CI's fuzz build).
  alignas(sizeof(V)) V acc[MR][NV];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[i][v] = init[v];
  }
  const float* a[MR];
  if (g.indirect == nullptr) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) a[i] = g.a + (row0 + i) * g.lda;
    Accumulate<MR, NV>(acc, a, bp, panel_stride, g.k);
  } else {
    const IndirectA& ia = *g.indirect;
    const int32_t* off[MR];
    const float* base[MR];
    const float* edge[MR];
    // One division per tile; the rows after row0 step through the pixels.
    int64_t image = (row0 + ia.first_row) / ia.pixels;
    int64_t pixel = row0 + ia.first_row - image * ia.pixels;
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      if (pixel == ia.pixels) pixel = 0, ++image;
      off[i] = ia.offsets + pixel * ia.taps;
      base[i] = ia.input + image * ia.image_stride + ia.channel_offset;
      edge[i] = ia.edge + image * ia.edge_stride;
      ++pixel;
    }
    for (int t = 0; t < ia.taps; ++t) {
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const int32_t o = off[i][t];
        a[i] = o < 0 ? edge[i] + (-1 - o) : base[i] + o;
      }
      Accumulate<MR, NV>(acc, a, bp, panel_stride, ia.tap_len);
      bp += ia.tap_len * kGemmNr;
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      if (kClamp) acc[i][v] = Clamp(acc[i][v], lo, hi);
    }
  }
  if (g.hard_swish) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[i][v] = HardSwish(acc[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) StoreVec<V>(c + i * ldc + W * v, acc[i][v]);
  }
}

// The tile of `rows` rows from row0 into c: 1 to kGemmMr, and with V16 up
// to 8 (what 32 registers hold; the wide tiles ask for kWideMr at most).
template <int NV, bool kClamp, typename V = V8>
GRAFT_SIMD_INLINE void TileRowsTo(const GemmArgs& g, int64_t row0, int rows,
                                  const float* bias, const float* bp, V lo,
                                  V hi, float* c, int64_t ldc) {
  static_assert(kGemmMr == 6 && kWideMr <= 8, "the switch lists 1 to 8");
  switch (rows) {
    case 1:
      Tile<1, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
      break;
    case 2:
      Tile<2, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
      break;
    case 3:
      Tile<3, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
      break;
    case 4:
      Tile<4, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
      break;
    case 5:
      Tile<5, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
      break;
    case 6:
      Tile<6, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
      break;
    default:
      // Seven and eight rows only for 16-float vectors (kWideMr above 6).
      if constexpr (kLanes<V> == 16) {
        if (rows == 7) {
          Tile<7, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
        } else {
          Tile<8, NV, kClamp>(g, row0, bias, bp, lo, hi, c, ldc);
        }
      }
      break;
  }
}

// The tile of rows [row0, row0 + 6) (fewer at the end of M) and columns
// [col0, col0 + cols): whole 8 NV columns straight into C; fewer through a
// buffer of 8 NV columns (bias padded with zeros), then copied.
template <int NV, bool kClamp>
GRAFT_SIMD_INLINE void TileRows(const GemmArgs& g, int64_t row0, int64_t col0,
                                int cols, const float* bp, V8 lo, V8 hi) {
  const int rows = static_cast<int>(std::min<int64_t>(kGemmMr, g.m - row0));
  const float* bias = g.bias != nullptr ? g.bias + col0 : nullptr;
  if (cols == 8 * NV) {
    TileRowsTo<NV, kClamp>(g, row0, rows, bias, bp, lo, hi,
                           g.c + row0 * g.ldc + col0, g.ldc);
    return;
  }
  alignas(32) float bias_buf[8 * NV] = {};
  if (bias != nullptr) {
    for (int j = 0; j < cols; ++j) bias_buf[j] = bias[j];
    bias = bias_buf;
  }
  alignas(32) float buf[kGemmMr * 8 * NV];
  TileRowsTo<NV, kClamp>(g, row0, rows, bias, bp, lo, hi, buf, 8 * NV);
  for (int i = 0; i < rows; ++i) {
    std::memcpy(g.c + (row0 + i) * g.ldc + col0, buf + i * 8 * NV,
                sizeof(float) * cols);
  }
}

// One row of A (g.m == 1, read directly) against kRowPanels whole panels
// of B from `panel0`: 2 * kRowPanels independent accumulators, where one
// panel's two leave the FMA latency exposed. Each C element is the same
// bias + sum over k in order as in Tile.
constexpr int kRowPanels = 4;

GRAFT_SIMD_INLINE void RowPanels(const GemmArgs& g, int64_t panel0, V8 lo,
                                 V8 hi) {
  alignas(32) V8 acc[kRowPanels][2];
  const float* bp[kRowPanels];
#pragma GCC unroll 4
  for (int p = 0; p < kRowPanels; ++p) {
    const int64_t col0 = (panel0 + p) * kGemmNr;
    acc[p][0] = g.bias ? LoadV8(g.bias + col0) : Splat(0.0f);
    acc[p][1] = g.bias ? LoadV8(g.bias + col0 + 8) : Splat(0.0f);
    bp[p] = g.packed_b + (panel0 + p) * kGemmNr * g.k;
  }
  const float* a = g.a;
  for (int64_t kk = 0; kk < g.k; ++kk) {
    const float x = a[kk];
#pragma GCC unroll 4
    for (int p = 0; p < kRowPanels; ++p) {
      acc[p][0] += LoadV8(bp[p] + kk * kGemmNr) * x;
      acc[p][1] += LoadV8(bp[p] + kk * kGemmNr + 8) * x;
    }
  }
#pragma GCC unroll 4
  for (int p = 0; p < kRowPanels; ++p) {
    float* c = g.c + (panel0 + p) * kGemmNr;
    V8 c0 = Clamp(acc[p][0], lo, hi), c1 = Clamp(acc[p][1], lo, hi);
    if (g.hard_swish) c0 = HardSwish(c0), c1 = HardSwish(c1);
    StoreV8(c, c0);
    StoreV8(c + 8, c1);
  }
}

// Tiles [t_begin, t_end) of the M-tiles x N-panels grid, panel-major so
// consecutive tiles reuse one panel of B from cache (a single row of A goes
// several whole panels at a time, RowPanels). A last block of fewer
// than kGemmMr rows computes only its rows; a last panel of at most 8
// columns only its first 8.
template <bool kClamp>
GRAFT_SIMD_INLINE void TilesBodyAs(const GemmArgs& g, int64_t m_tiles,
                                   int64_t t_begin, int64_t t_end) {
  const V8 lo = Splat(g.lo), hi = Splat(g.hi);
  int64_t t = t_begin;
  if (g.m == 1 && g.indirect == nullptr) {
    // One row: tile t is panel t; whole panels kRowPanels at a time.
    const int64_t whole = std::min(t_end, g.n / kGemmNr);
    if (t + kRowPanels <= whole) {
      row_panels_calls.fetch_add(1, std::memory_order_relaxed);
    }
    for (; t + kRowPanels <= whole; t += kRowPanels) RowPanels(g, t, lo, hi);
  }
  int64_t panel = t / m_tiles;
  int64_t row0 = t % m_tiles * kGemmMr;
  for (; t < t_end; ++t) {
    const int64_t col0 = panel * kGemmNr;
    const int cols = static_cast<int>(std::min<int64_t>(kGemmNr, g.n - col0));
    const float* bp = g.packed_b + panel * kGemmNr * g.k;
    if (cols > 8) {
      TileRows<2, kClamp>(g, row0, col0, cols, bp, lo, hi);
    } else {
      TileRows<1, kClamp>(g, row0, col0, cols, bp, lo, hi);
    }
    row0 += kGemmMr;
    if (row0 >= g.m) row0 = 0, ++panel;
  }
}

// Without a fused activation ([lo, hi] is everything) the tiles skip the
// clamp.
GRAFT_SIMD_INLINE void TilesBody(const GemmArgs& g, int64_t m_tiles,
                                 int64_t t_begin, int64_t t_end) {
  if (g.lo == -std::numeric_limits<float>::infinity() &&
      g.hi == std::numeric_limits<float>::infinity()) {
    TilesBodyAs<false>(g, m_tiles, t_begin, t_end);
  } else {
    TilesBodyAs<true>(g, m_tiles, t_begin, t_end);
  }
}

// Rows [r0, r1) of the column group at panel p: NV vectors of V (16
// floats, or 8 for a last group of 8 columns at most), the last of which
// may be a partial last panel (`cols` < NV vectors' columns: then through
// a buffer, as in TileRows), in tiles of kWideMr rows (8 for one 16-float
// vector; where the last would be short, 7 or 8 rows or even heights).
template <int NV, bool kClamp, typename V>
GRAFT_SIMD_INLINE void WideGroup(const GemmArgs& g, int64_t p, int cols,
                                 int64_t r0, int64_t r1, V lo, V hi,
                                 const float* next_b, int64_t next_floats) {
  constexpr int kWidth = kLanes<V> * NV;
  // One 16-float vector per row (16 columns): 8 rows, so that 8
  // independent sums cover the multiply-add's latency (two a cycle, four
  // cycles each, on Zen 5); 6 left a quarter idle (efficientnet's first
  // convolution, 3 x 3 x 3 -> 16, 3.7% faster).
  constexpr int kMr = NV == 1 && kLanes<V> == 16 ? 8 : kWideMr;
  const float* bias = g.bias != nullptr ? g.bias + p * kGemmNr : nullptr;
  const float* bp = g.packed_b + p * kGemmNr * g.k;
  alignas(64) float bias_buf[kWidth] = {};
  alignas(64) float buf[8 * kWidth];
  const bool partial = cols < kWidth;
  if (partial && bias != nullptr) {
    for (int j = 0; j < cols; ++j) bias_buf[j] = bias[j];
    bias = bias_buf;
  }
  // Tiles of kMr rows and a shorter last one, unless that one would have
  // fewer than half as many, whose few sums would wait on the multiply-
  // add's latency. Then, with two vectors a row, the last 1 or 2 rows join
  // the tile before as a tile of 7 or 8 (49 x 1280 x 320: 7 x 6 + 7 rows
  // 3.3% faster than 4 x 6 + 5 x 5, whose 5-row tiles run below the 6-row
  // ones' rate); else even heights, the first `taller` tiles one row more
  // than the others.
  int64_t tiles = (r1 - r0 + kMr - 1) / kMr;
  const int64_t rest = (r1 - r0) % kMr;
  const bool merge =
      NV == 2 && kLanes<V> == 16 && (rest == 1 || rest == 2) && tiles >= 2;
  if (merge) --tiles;
  const bool even = !merge && rest != 0 && rest < kMr / 2;
  const int base = even ? static_cast<int>((r1 - r0) / tiles) : kMr;
  const int64_t taller = even ? (r1 - r0) % tiles : 0;
  // The next group's B asked into L2 over this group's tiles after the
  // first, a share of its cache lines before each.
  const int64_t lines = tiles > 1 ? (next_floats + 15) / 16 : 0;
  const int64_t share = (lines + tiles - 2) / std::max<int64_t>(1, tiles - 1);
  for (int64_t t = 0, row0 = r0; t < tiles; ++t) {
    for (int64_t l = (t - 1) * share; t > 0 && l < std::min(lines, t * share);
         ++l) {
      __builtin_prefetch(next_b + 16 * l, 0, 2);
    }
    const int h = even ? base + (t < taller ? 1 : 0)
                  : merge && t == tiles - 1
                      ? static_cast<int>(r1 - row0)
                      : static_cast<int>(std::min<int64_t>(base, r1 - row0));
    float* c = g.c + row0 * g.ldc + p * kGemmNr;
    if (!partial) {
      TileRowsTo<NV, kClamp, V>(g, row0, h, bias, bp, lo, hi, c, g.ldc);
      row0 += h;
      continue;
    }
    TileRowsTo<NV, kClamp, V>(g, row0, h, bias, bp, lo, hi, buf, kWidth);
    for (int i = 0; i < h; ++i) {
      std::memcpy(c + i * g.ldc, buf + i * kWidth, sizeof(float) * cols);
    }
    row0 += h;
  }
}

// Floats of B from which it counts as large (256 KiB, a quarter of a
// Zen 5 core's L2), in the AVX-512 build: a GEMM with more columns than
// rows then splits its columns over the threads (smaller ones ran 3-8%
// slower so, their output rows then crossing cores); a smaller B is read
// once per block of rows (WideBodyAs).
constexpr int64_t kLargeB = 65536;
// Floats of a column group's B (two panels) that WideBodyAs prefetches for
// the next group where B is large (32 KiB).
constexpr int64_t kPrefetchGroupFloats = 8192;
// Floats of A in a block of rows that every group of columns passes over
// while it stays in L1 (16 KiB, a third of L1), where B is not large:
// 12544 x 96 x 16 went 195 -> 172 us, 784 x 192 x 32 43 -> 40 us (Zen 5,
// one thread), against every row for each group in turn.
constexpr int64_t kBlockAFloats = 4096;
constexpr int64_t kMinBlockRows = 48;

// The AVX-512 build's wide tiles: rows [r0, r1) of C at the panels [q0,
// q1), in groups of two panels as 32-column tiles of 16-float vectors (a
// last odd panel of the range, whole or partial, as one vector; of 8
// columns at most, as one 8-float vector): for the same fused
// multiply-adds in the same order as the 8-float tiles (bit-identical
// results), half the instructions.
template <bool kClamp>
GRAFT_SIMD_INLINE void WideBodyAs(const GemmArgs& g, int64_t r0, int64_t r1,
                                  int64_t q0, int64_t q1) {
  const V16 lo = SplatVec<V16>(g.lo), hi = SplatVec<V16>(g.hi);
  // Blocks of rows of about kBlockAFloats of A, of kMinBlockRows rows at
  // least (each reads B once), where there are two groups or more and B is
  // not large; else one block.
  const int64_t rows = r1 - r0;
  const int64_t blocks =
      q1 - q0 > 2 && g.n * g.k < kLargeB
          ? std::max<int64_t>(1, std::min((rows * std::max<int64_t>(1, g.k) +
                                           kBlockAFloats - 1) /
                                              kBlockAFloats,
                                          rows / kMinBlockRows))
          : 1;
  // Block boundaries at whole tiles of kWideMr rows where the blocks
  // allow (196 rows as 48 + 48 + 48 + 52, not four blocks of 49 rows in
  // tiles of 6 and 5).
  auto boundary = [&](int64_t i) {
    if (i == blocks) return r1;
    const int64_t share = rows * i / blocks;
    const int64_t whole = share / kWideMr * kWideMr;
    return r0 + (rows / blocks >= 4 * kWideMr ? whole : share);
  };
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t b0 = boundary(i), b1 = boundary(i + 1);
    for (int64_t p = q0; p < q1; p += 2) {
      const int cols = static_cast<int>(std::min<int64_t>(
          std::min<int64_t>(32, (q1 - p) * kGemmNr), g.n - p * kGemmNr));
      // A large B comes from memory in the whole model (its layers ran
      // 1.3x as long there as alone): the next group's panels, where a
      // group is kPrefetchGroupFloats at most, are asked into L2 while
      // this group's tiles run (MobileNetV2's 49 x 160 x 960 layers 10%
      // faster in the model; groups of 123 KiB asked for so ran 5-10%
      // slower).
      const float* next_b = g.packed_b + (p + 2) * kGemmNr * g.k;
      const int64_t next_floats =
          g.n * g.k >= kLargeB && 2 * kGemmNr * g.k <= kPrefetchGroupFloats &&
                  p + 2 < q1
              ? std::min<int64_t>(2, q1 - p - 2) * kGemmNr * g.k
              : 0;
      if (cols > 16) {
        WideGroup<2, kClamp>(g, p, cols, b0, b1, lo, hi, next_b, next_floats);
      } else if (cols > 8) {
        WideGroup<1, kClamp>(g, p, cols, b0, b1, lo, hi, next_b, next_floats);
      } else {
        // 8 columns at most: half a vector would be padding.
        WideGroup<1, kClamp>(g, p, cols, b0, b1, SplatVec<V8>(g.lo),
                             SplatVec<V8>(g.hi), next_b, next_floats);
      }
    }
  }
  wide_calls.fetch_add(1, std::memory_order_relaxed);
}

// Each build's tiles (a range of the panel-major tile grid of kGemmMr x
// kGemmNr tiles) and, in the AVX-512 build, wide tiles (rows [r0, r1) of C
// at panels [q0, q1); null elsewhere).
using TilesFn = void (*)(const GemmArgs&, int64_t, int64_t, int64_t);
using WideFn = void (*)(const GemmArgs&, int64_t, int64_t, int64_t, int64_t);
struct GemmFns {
  TilesFn tiles;
  WideFn wide = nullptr;
};

void TilesBaseline(const GemmArgs& g, int64_t m_tiles, int64_t t_begin,
                   int64_t t_end) {
  TilesBody(g, m_tiles, t_begin, t_end);
}

#if GRAFT_HAVE_AVX2_FMA_BUILD
GRAFT_AVX2_FMA_TARGET void TilesAvx2Fma(const GemmArgs& g, int64_t m_tiles,
                                        int64_t t_begin, int64_t t_end) {
  TilesBody(g, m_tiles, t_begin, t_end);
}

GRAFT_AVX512VL_TARGET void TilesAvx512Vl(const GemmArgs& g, int64_t m_tiles,
                                         int64_t t_begin, int64_t t_end) {
  TilesBody(g, m_tiles, t_begin, t_end);
}

GRAFT_AVX512VL_TARGET void WideAvx512Vl(const GemmArgs& g, int64_t r0,
                                        int64_t r1, int64_t q0, int64_t q1) {
  if (g.lo == -std::numeric_limits<float>::infinity() &&
      g.hi == std::numeric_limits<float>::infinity()) {
    WideBodyAs<false>(g, r0, r1, q0, q1);
  } else {
    WideBodyAs<true>(g, r0, r1, q0, q1);
  }
}
#endif

GemmFns PickFns(const GemmArgs& g) {
  if (g.indirect != nullptr) indirect_calls.fetch_add(1, std::memory_order_relaxed);
#if GRAFT_HAVE_AVX2_FMA_BUILD
  if (CpuHasAvx512Vl()) {
    gemm_calls[2].fetch_add(1, std::memory_order_relaxed);
    return {TilesAvx512Vl, WideAvx512Vl};
  }
  if (CpuHasAvx2Fma()) {
    gemm_calls[1].fetch_add(1, std::memory_order_relaxed);
    return {TilesAvx2Fma};
  }
#endif
  gemm_calls[0].fetch_add(1, std::memory_order_relaxed);
  return {TilesBaseline};
}

// The GEMM of rows [r0, r1) of g alone (A, its indirection table's first
// row and C moved to r0); `ia` holds the moved table.
GemmArgs RowsOf(const GemmArgs& g, int64_t r0, int64_t r1, IndirectA* ia) {
  GemmArgs rows = g;
  rows.m = r1 - r0;
  rows.c = g.c + r0 * g.ldc;
  if (g.indirect != nullptr) {
    *ia = *g.indirect;
    ia->first_row += r0;
    rows.indirect = ia;
  } else {
    rows.a = g.a + r0 * g.lda;
  }
  return rows;
}

// Rows [r0, r1) of C, every column: wide tiles where the build has them,
// else the rows' GEMM as row tiles, panel by panel.
void Rows(const GemmFns& fns, const GemmArgs& g, int64_t r0, int64_t r1) {
  if (fns.wide != nullptr) {
    fns.wide(g, r0, r1, 0, Panels(g.n));
    return;
  }
  IndirectA ia;
  const GemmArgs rows = r0 == 0 && r1 == g.m ? g : RowsOf(g, r0, r1, &ia);
  const int64_t m_tiles = (rows.m + kGemmMr - 1) / kGemmMr;
  const int64_t panels = Panels(g.n);
  for (int64_t p = 0; p < panels; ++p) {
    fns.tiles(rows, m_tiles, p * m_tiles, (p + 1) * m_tiles);
  }
}

}  // namespace

void PackRhs(const float* b, int64_t k, int64_t n, int64_t stride_k,
             int64_t stride_n, float* packed) {
  const int64_t panels = Panels(n);
  for (int64_t p = 0; p < panels; ++p) {
    float* dst = packed + p * kGemmNr * k;
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t j = 0; j < kGemmNr; ++j) {
        int64_t col = p * kGemmNr + j;
        dst[kk * kGemmNr + j] =
            col < n ? b[kk * stride_k + col * stride_n] : 0.0f;
      }
    }
  }
}

void ScalePackedRhsRows(const float* packed, int64_t k, int64_t n,
                        const float* scale, float* scaled) {
  static_assert(kGemmNr == 16, "a panel row is two V8");
  const int64_t rows = Panels(n) * k;
  for (int64_t r = 0; r < rows; ++r) {
    const V8 x = Splat(scale[r % k]);
    StoreV8(scaled + r * kGemmNr, LoadV8(packed + r * kGemmNr) * x);
    StoreV8(scaled + r * kGemmNr + 8, LoadV8(packed + r * kGemmNr + 8) * x);
  }
}

// Row tiles per thread from which a split over threads goes by whole row
// tiles instead of by an even share of rows: a thread's share is then
// within a tile of the others'. The AVX-512 build's wide tiles cut an even
// share into tiles of even heights, so it keeps even shares for more rows
// (49 rows went as 30 + 19 in whole tiles; MobileNetV2's 14 x 14 layers,
// 33 tiles, as 17 + 16: 2.5-3.5% slower each than 98 + 98 rows, and the
// model at 2 threads 0.989-0.995x with 32 against 16 here, resnet_cnn and
// efficientnet_block float 0.972x and 0.987x; 80 took its 28 x 28
// layers, 131 tiles, to even shares too, 5% slower each).
constexpr int64_t kRowSplitTilesPerThread = 4;
constexpr int64_t kWideRowSplitTilesPerThread = 32;
// Rows per thread from which a GEMM with fewer rows than that split (see
// kRowSplitTilesPerThread) still goes by rows, split evenly: two rows of
// a 32-column wide tile keep its four accumulators' fused multiply-adds
// back to back on AVX-512 (one a cycle, four cycles' latency).
constexpr int64_t kMinRowsPerPart = 2;
// Rows per block reported to GemmArgs::rows_done on one thread (a few KiB
// of C, still in L1 when the consumer reads it).
constexpr int64_t kRowsDoneRows = 48;

void Gemm(const GemmArgs& g, ThreadPool* pool) {
  if (g.m <= 0 || g.n <= 0) return;
  const GemmFns fns = PickFns(g);
  const int64_t m_tiles = (g.m + kGemmMr - 1) / kGemmMr;
  const int64_t panels = Panels(g.n);
  const int64_t tiles = m_tiles * panels;
  // About 64K multiply-adds per chunk: smaller chunks cost more to hand out
  // than they save.
  const int64_t per_tile = std::max<int64_t>(1, kGemmMr * kGemmNr * g.k);
  const int64_t min_chunk = std::max<int64_t>(1, 65536 / per_tile);
  auto rows_done = [&](int64_t r0, int64_t r1) {
    if (g.rows_done != nullptr) (*g.rows_done)(r0, r1);
  };
  if (pool == nullptr || pool->num_threads() == 1 || tiles <= min_chunk) {
    if (g.m == 1 && g.indirect == nullptr) {
      // One row of A read directly goes several panels at a time (the
      // tiles' RowPanels).
      fns.tiles(g, m_tiles, 0, tiles);
    } else if (g.rows_done == nullptr) {
      Rows(fns, g, 0, g.m);
    } else {
      // Blocks of rows, each reported while it is in the cache.
      for (int64_t r = 0; r < g.m; r += kRowsDoneRows) {
        const int64_t end = std::min(g.m, r + kRowsDoneRows);
        Rows(fns, g, r, end);
        rows_done(r, end);
      }
      return;
    }
    rows_done(0, g.m);
    return;
  }
  // Otherwise split by rows, so each thread writes whole output rows: the
  // ones the next op, split the same way, reads on the same core (a split
  // by panels would leave half of every row in the other core's cache).
  const int threads = pool->num_threads();
  if (fns.wide != nullptr && g.n > g.m && g.n * g.k >= kLargeB &&
      panels >= 2 * threads) {
    // More columns than rows and a B too large to read twice from L3 at
    // little cost: each thread takes a share of B's columns over every row
    // instead of reading all of it (MobileNetV2's last 1x1 convolution,
    // 49 x 1280 x 320: a 1.6 MB B). A row is final only at the end. The
    // panels split evenly (49 x 960 x 160's 10 panels as 5 + 5, not as
    // groups of two, 3 + 2: 1.16 -> 1.0x LiteRT's time at 2 threads).
    column_parts_calls.fetch_add(1, std::memory_order_relaxed);
    pool->ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        fns.wide(g, 0, g.m, panels * part / threads,
                 panels * (part + 1) / threads);
      }
    });
    rows_done(0, g.m);
    return;
  }
  const int64_t split_tiles = (fns.wide != nullptr ? kWideRowSplitTilesPerThread
                                                   : kRowSplitTilesPerThread) *
                              threads;
  if (m_tiles >= split_tiles) {
    // Enough rows: each thread takes blocks of whole row tiles.
    const int64_t min_tiles = std::max<int64_t>(1, min_chunk / panels);
    pool->ParallelFor(m_tiles, min_tiles, [&](int64_t begin, int64_t end) {
      const int64_t r0 = begin * kGemmMr, r1 = std::min(g.m, end * kGemmMr);
      Rows(fns, g, r0, r1);
      rows_done(r0, r1);
    });
    return;
  }
  if (g.m >= kMinRowsPerPart * threads) {
    // Few rows, but some for each thread: rows split evenly, not at tile
    // boundaries (16 rows go as 6 + 2 twice, not 12 + 4).
    row_parts_calls.fetch_add(1, std::memory_order_relaxed);
    pool->ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t r0 = g.m * part / threads;
        const int64_t r1 = g.m * (part + 1) / threads;
        Rows(fns, g, r0, r1);
        rows_done(r0, r1);
      }
    });
    return;
  }
  // Fewer rows still: split by tiles, so a row is final only at the end.
  pool->ParallelFor(tiles, min_chunk, [&](int64_t begin, int64_t end) {
    fns.tiles(g, m_tiles, begin, end);
  });
  rows_done(0, g.m);
}

int64_t GemmCallsForTesting(CpuIsa path) {
  return gemm_calls[static_cast<int>(path)].load();
}

int64_t IndirectGemmCallsForTesting() { return indirect_calls.load(); }

int64_t GemmRowPanelsCallsForTesting() { return row_panels_calls.load(); }

int64_t GemmWideTilesCallsForTesting() { return wide_calls.load(); }

int64_t GemmRowPartsCallsForTesting() { return row_parts_calls.load(); }

int64_t GemmColumnPartsCallsForTesting() { return column_parts_calls.load(); }

}  // namespace graft::kernels
