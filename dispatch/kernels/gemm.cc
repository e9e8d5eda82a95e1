#include "dispatch/kernels/gemm.h"

#include <algorithm>
#include <cstring>

#include "dispatch/thread_pool.h"

namespace graft::kernels {
namespace {

// 8 floats; aligned(4) so loads from any float* are legal (unaligned moves).
typedef float V8 __attribute__((vector_size(32), aligned(4)));
static_assert(kGemmNr == 8, "the micro-kernel holds one V8 per row");

// Multi-versioning: an AVX2 clone beside the baseline, picked at load time
// by the dynamic loader (ifunc). Off where unsupported.
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && \
    !defined(GRAFT_NO_MULTIVERSIONING)
#define GRAFT_TARGET_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GRAFT_TARGET_CLONES
#endif

// Tiles [t_begin, t_end) of the M-tiles x N-panels grid, panel-major so
// consecutive tiles reuse one panel of B from cache.
GRAFT_TARGET_CLONES
void GemmTiles(const GemmArgs& g, int64_t m_tiles, int64_t t_begin,
               int64_t t_end) {
  const int64_t k_len = g.k;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t panel = t / m_tiles;
    const int64_t row0 = (t % m_tiles) * kGemmMr;
    const int64_t col0 = panel * kGemmNr;
    const int64_t rows = std::min<int64_t>(kGemmMr, g.m - row0);
    const int64_t cols = std::min<int64_t>(kGemmNr, g.n - col0);
    // Rows past M repeat the last row; their results are not stored.
    const float* a[kGemmMr];
    for (int i = 0; i < kGemmMr; ++i) {
      a[i] = g.a + (row0 + std::min<int64_t>(i, rows - 1)) * g.lda;
    }
    const float* bp = g.packed_b + panel * kGemmNr * k_len;
    V8 init = {};
    if (g.bias != nullptr) {
      float tmp[kGemmNr] = {};
      for (int64_t j = 0; j < cols; ++j) tmp[j] = g.bias[col0 + j];
      std::memcpy(&init, tmp, sizeof(init));
    }
    V8 acc0 = init, acc1 = init, acc2 = init, acc3 = init, acc4 = init,
       acc5 = init;
    for (int64_t kk = 0; kk < k_len; ++kk) {
      V8 b;
      std::memcpy(&b, bp + kk * kGemmNr, sizeof(b));
      acc0 += b * a[0][kk];
      acc1 += b * a[1][kk];
      acc2 += b * a[2][kk];
      acc3 += b * a[3][kk];
      acc4 += b * a[4][kk];
      acc5 += b * a[5][kk];
    }
    const V8 accs[kGemmMr] = {acc0, acc1, acc2, acc3, acc4, acc5};
    for (int64_t i = 0; i < rows; ++i) {
      float out[kGemmNr];
      std::memcpy(out, &accs[i], sizeof(out));
      float* c = g.c + (row0 + i) * g.ldc + col0;
      for (int64_t j = 0; j < cols; ++j) {
        c[j] = std::min(std::max(out[j], g.lo), g.hi);
      }
    }
  }
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
  const int64_t m_tiles = (g.m + kGemmMr - 1) / kGemmMr;
  const int64_t panels = (g.n + kGemmNr - 1) / kGemmNr;
  const int64_t tiles = m_tiles * panels;
  // About 64K multiply-adds per chunk: smaller chunks cost more to hand out
  // than they save.
  const int64_t per_tile = std::max<int64_t>(1, kGemmMr * kGemmNr * g.k);
  const int64_t min_chunk = std::max<int64_t>(1, 65536 / per_tile);
  if (pool == nullptr || pool->num_threads() == 1 || tiles <= min_chunk) {
    GemmTiles(g, m_tiles, 0, tiles);
    return;
  }
  pool->ParallelFor(tiles, min_chunk, [&](int64_t begin, int64_t end) {
    GemmTiles(g, m_tiles, begin, end);
  });
}

}  // namespace graft::kernels
