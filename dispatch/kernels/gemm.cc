#include "dispatch/kernels/gemm.h"

#include <algorithm>
#include <cstring>

#include "dispatch/kernels/float_simd.h"
#include "dispatch/thread_pool.h"

namespace graft::kernels {
namespace {

static_assert(kGemmNr == 16, "the micro-kernel holds two V8 per row");

// One MR x kGemmNr tile of C over the whole K, in registers: 2 * MR
// accumulators (12 for MR = 6) plus two B vectors and one broadcast fit
// the 16 AVX registers. Each C element is bias + sum over k in order; in
// the AVX2 build each step is one fused multiply-add.
template <int MR>
GRAFT_SIMD_INLINE void Tile(const GemmArgs& g, int64_t row0, int64_t col0,
                            int cols, const float* bp) {
  const float* a[MR];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) a[i] = g.a + (row0 + i) * g.lda;
  V8 init0 = {}, init1 = {};
  if (g.bias != nullptr && cols == kGemmNr) {
    init0 = LoadV8(g.bias + col0);
    init1 = LoadV8(g.bias + col0 + 8);
  } else if (g.bias != nullptr) {
    float tmp[kGemmNr] = {};
    for (int j = 0; j < cols; ++j) tmp[j] = g.bias[col0 + j];
    init0 = LoadV8(tmp);
    init1 = LoadV8(tmp + 8);
  }
  V8 acc[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) acc[i][0] = init0, acc[i][1] = init1;
  for (int64_t kk = 0; kk < g.k; ++kk) {
    const V8 b0 = LoadV8(bp + kk * kGemmNr);
    const V8 b1 = LoadV8(bp + kk * kGemmNr + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; ++i) {
      const float x = a[i][kk];
      acc[i][0] += b0 * x;
      acc[i][1] += b1 * x;
    }
  }
  const V8 lo = Splat(g.lo), hi = Splat(g.hi);
#pragma GCC unroll 6
  for (int i = 0; i < MR; ++i) {
    const V8 r[2] = {Clamp(acc[i][0], lo, hi), Clamp(acc[i][1], lo, hi)};
    float* c = g.c + (row0 + i) * g.ldc + col0;
    if (cols == kGemmNr) {
      std::memcpy(c, r, sizeof(r));
    } else {
      float tmp[kGemmNr];
      std::memcpy(tmp, r, sizeof(r));
      std::memcpy(c, tmp, sizeof(float) * cols);
    }
  }
}

// Tiles [t_begin, t_end) of the M-tiles x N-panels grid, panel-major so
// consecutive tiles reuse one panel of B from cache. A last block of fewer
// than kGemmMr rows computes only its rows.
GRAFT_SIMD_INLINE void TilesBody(const GemmArgs& g, int64_t m_tiles,
                                 int64_t t_begin, int64_t t_end) {
  static_assert(kGemmMr == 6, "the row-count switch below lists 1 to 6");
  int64_t panel = t_begin / m_tiles;
  int64_t row0 = t_begin % m_tiles * kGemmMr;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t col0 = panel * kGemmNr;
    const int cols = static_cast<int>(std::min<int64_t>(kGemmNr, g.n - col0));
    const float* bp = g.packed_b + panel * kGemmNr * g.k;
    switch (std::min<int64_t>(kGemmMr, g.m - row0)) {
      case 1:
        Tile<1>(g, row0, col0, cols, bp);
        break;
      case 2:
        Tile<2>(g, row0, col0, cols, bp);
        break;
      case 3:
        Tile<3>(g, row0, col0, cols, bp);
        break;
      case 4:
        Tile<4>(g, row0, col0, cols, bp);
        break;
      case 5:
        Tile<5>(g, row0, col0, cols, bp);
        break;
      default:
        Tile<6>(g, row0, col0, cols, bp);
        break;
    }
    row0 += kGemmMr;
    if (row0 >= g.m) row0 = 0, ++panel;
  }
}

using TilesFn = void (*)(const GemmArgs&, int64_t, int64_t, int64_t);

void TilesBaseline(const GemmArgs& g, int64_t m_tiles, int64_t t_begin,
                   int64_t t_end) {
  TilesBody(g, m_tiles, t_begin, t_end);
}

#if GRAFT_HAVE_AVX2_FMA_BUILD
GRAFT_AVX2_FMA_TARGET void TilesAvx2Fma(const GemmArgs& g, int64_t m_tiles,
                                        int64_t t_begin, int64_t t_end) {
  TilesBody(g, m_tiles, t_begin, t_end);
}
#endif

TilesFn PickTiles() {
#if GRAFT_HAVE_AVX2_FMA_BUILD
  if (CpuHasAvx2Fma()) return TilesAvx2Fma;
#endif
  return TilesBaseline;
}

}  // namespace

void PackRhs(const float* b, int64_t k, int64_t n, int64_t stride_k,
             int64_t stride_n, float* packed) {
  const int64_t panels = (n + kGemmNr - 1) / kGemmNr;
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

void Gemm(const GemmArgs& g, ThreadPool* pool) {
  if (g.m <= 0 || g.n <= 0) return;
  const TilesFn tiles_fn = PickTiles();
  const int64_t m_tiles = (g.m + kGemmMr - 1) / kGemmMr;
  const int64_t panels = (g.n + kGemmNr - 1) / kGemmNr;
  const int64_t tiles = m_tiles * panels;
  // About 64K multiply-adds per chunk: smaller chunks cost more to hand out
  // than they save.
  const int64_t per_tile = std::max<int64_t>(1, kGemmMr * kGemmNr * g.k);
  const int64_t min_chunk = std::max<int64_t>(1, 65536 / per_tile);
  if (pool == nullptr || pool->num_threads() == 1 || tiles <= min_chunk) {
    tiles_fn(g, m_tiles, 0, tiles);
    return;
  }
  pool->ParallelFor(tiles, min_chunk, [&](int64_t begin, int64_t end) {
    tiles_fn(g, m_tiles, begin, end);
  });
}

}  // namespace graft::kernels
