// The float32 GEMM (gemm.h) against a naive double-precision product:
// every row and column remainder of the 6 x 16 tile, K from 0, strided A and
// C, both packings of B, bias or none, clamps, 1 and 2 threads. Elements of
// C outside the M x N result (row padding past N) must stay untouched; a
// third of the cases also run with the HARD_SWISH epilogue, which must give
// HardSwish of the plain result bit for bit. The AVX-512 build's wide tiles
// against the AVX2 build's, bit for bit. And A read through an indirection
// table (IndirectA) against the explicit A.
#include "dispatch/kernels/gemm.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/thread_pool.h"
#include "gtest/gtest.h"

namespace graft::kernels {
namespace {

using testing::RandomInt;

struct Case {
  int64_t m, n, k, lda, ldc;
  bool transposed_b;  // B given as [N, K] (weights) rather than [K, N]
  bool bias;
  float lo, hi;
  bool hard_swish;  // also run with the HARD_SWISH epilogue (bit-exact)
};

// The GemmArgs of case `t` over these operands, writing C at `c`.
GemmArgs ArgsOf(const Case& t, const std::vector<float>& a,
                const std::vector<float>& packed, const std::vector<float>& bias,
                float* c) {
  GemmArgs g;
  g.m = t.m, g.n = t.n, g.k = t.k;
  g.a = a.data(), g.lda = t.lda;
  g.packed_b = packed.data();
  g.bias = t.bias ? bias.data() : nullptr;
  g.lo = t.lo, g.hi = t.hi;
  g.c = c, g.ldc = t.ldc;
  return g;
}

void CheckCase(const Case& t, std::mt19937& rng, ThreadPool* pool,
               const std::string& what) {
  const std::vector<float> a = testing::RandomFloats(rng, t.m * t.lda);
  const std::vector<float> b = testing::RandomFloats(rng, t.k * t.n);
  const std::vector<float> bias = testing::RandomFloats(rng, t.n);
  std::vector<float> packed(PackedRhsSize(t.k, t.n), -7.0f);
  if (t.transposed_b) {
    PackRhs(b.data(), t.k, t.n, /*stride_k=*/1, /*stride_n=*/t.k,
            packed.data());
  } else {
    PackRhs(b.data(), t.k, t.n, /*stride_k=*/t.n, /*stride_n=*/1,
            packed.data());
  }
  constexpr float kSentinel = 12345.0f;
  std::vector<float> c(t.m * t.ldc, kSentinel);
  GemmArgs g = ArgsOf(t, a, packed, bias, c.data());
  Gemm(g, pool);

  std::vector<float> got, want;
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.n; ++j) {
      double acc = t.bias ? bias[j] : 0.0;
      for (int64_t kk = 0; kk < t.k; ++kk) {
        const float bv = t.transposed_b ? b[j * t.k + kk] : b[kk * t.n + j];
        acc += double{a[i * t.lda + kk]} * bv;
      }
      got.push_back(c[i * t.ldc + j]);
      want.push_back(std::min(std::max(static_cast<float>(acc), t.lo), t.hi));
    }
    for (int64_t j = t.n; j < t.ldc; ++j) {
      ASSERT_EQ(c[i * t.ldc + j], kSentinel)
          << what << ": row " << i << " written past N at column " << j;
    }
  }
  testing::ExpectNear(got, want, t.k, what,
                      /*term_scale=*/1.0);  // A, B and bias in [-1, 1]
  if (!t.hard_swish) return;
  // The epilogue is TFLite's HARD_SWISH on the same sums, bit for bit.
  std::vector<float> fused(c.size(), kSentinel);
  g.c = fused.data();
  g.hard_swish = true;
  Gemm(g, pool);
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < t.ldc; ++j) {
      const float plain = c[i * t.ldc + j];
      const float want_hs = j < t.n ? HardSwish(plain) : kSentinel;
      ASSERT_EQ(std::memcmp(&fused[i * t.ldc + j], &want_hs, sizeof(float)), 0)
          << what << ": HARD_SWISH epilogue at (" << i << ", " << j << ") gave "
          << fused[i * t.ldc + j] << ", want " << want_hs;
    }
  }
}

Case RandomCase(std::mt19937& rng, int64_t max_m, int64_t max_n,
                int64_t max_k) {
  Case t;
  t.m = RandomInt(rng, 1, max_m);
  t.n = RandomInt(rng, 1, max_n);
  t.k = RandomInt(rng, 0, max_k);
  t.lda = t.k + RandomInt(rng, 0, 3);
  t.ldc = t.n + RandomInt(rng, 0, 5);
  t.transposed_b = RandomInt(rng, 0, 1);
  t.bias = RandomInt(rng, 0, 2) != 0;
  t.hard_swish = RandomInt(rng, 0, 2) == 0;
  const float inf = std::numeric_limits<float>::infinity();
  switch (RandomInt(rng, 0, 2)) {
    case 0:
      t.lo = -inf, t.hi = inf;
      break;
    case 1:
      t.lo = 0.0f, t.hi = inf;
      break;  // RELU
    default:
      t.lo = -0.5f, t.hi = 0.5f;
      break;
  }
  return t;
}

TEST(GemmTest, MatchesNaiveProductForEveryTileRemainder) {
  std::mt19937 rng = testing::SeededRng(1);
  // M 1..13 covers a last block of 1 to 6 rows (and whole blocks); N 1..40
  // covers 1 to 16 columns in the last panel.
  for (int iter = 0; iter < 300; ++iter) {
    const Case t = RandomCase(rng, 13, 40, 40);
    CheckCase(
        t, rng, nullptr,
        absl::StrCat("iteration ", iter, ": m=", t.m, " n=", t.n, " k=", t.k));
    if (HasFatalFailure()) return;
  }
}

// One row of A (FULLY_CONNECTED on one vector) goes several whole panels of
// B at a time: N up to 200 covers runs of 4 panels and every remainder,
// each float build forced in turn, 1 and 2 threads.
TEST(GemmTest, OneRowMatchesNaiveProductOnEveryPath) {
  testing::ForEachForcedIsa({CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}, [&](CpuIsa isa) {
    const int64_t calls = GemmCallsForTesting(isa);
    const int64_t row_panels = GemmRowPanelsCallsForTesting();
    std::mt19937 rng = testing::SeededRng(5 + static_cast<int>(isa));
    ThreadPool pool(2);
    for (int iter = 0; iter < 100; ++iter) {
      Case t = RandomCase(rng, 1, 200, iter % 4 ? 64 : 700);
      if (iter % 5 == 0) t.n = 64 + RandomInt(rng, 0, 3) * 16;  // whole panels
      t.ldc = t.n + RandomInt(rng, 0, 5);
      CheckCase(t, rng, iter % 2 ? &pool : nullptr,
                absl::StrCat(CpuIsaName(isa), " iteration ", iter, ": n=", t.n,
                             " k=", t.k));
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(GemmCallsForTesting(isa), calls) << CpuIsaName(isa);
    EXPECT_GT(GemmRowPanelsCallsForTesting(), row_panels) << CpuIsaName(isa);
  });
}

TEST(GemmTest, SplitOverThreadsMatchesNaiveProduct) {
  std::mt19937 rng = testing::SeededRng(2);
  ThreadPool pool(2);
  // Large enough (hundreds of tiles) for the pool to split the work.
  for (int iter = 0; iter < 10; ++iter) {
    Case t = RandomCase(rng, 400, 100, 64);
    t.m = std::max<int64_t>(t.m, 200);
    CheckCase(
        t, rng, &pool,
        absl::StrCat("iteration ", iter, ": m=", t.m, " n=", t.n, " k=", t.k));
    if (HasFatalFailure()) return;
  }
}

// Fewer rows than four row tiles per thread (32 in the AVX-512 VL build),
// but two or more per thread: each thread takes an even share of the rows
// (not whole tiles), as a GEMM of its own. K is large enough for the work
// to be split. Each float build forced in turn, 2 and 3 threads.
TEST(GemmTest, FewRowsSplitEvenlyOverThreadsMatchesNaiveProduct) {
  testing::ForEachForcedIsa(
      {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}, [&](CpuIsa isa) {
        const int64_t parts = GemmRowPartsCallsForTesting();
        std::mt19937 rng = testing::SeededRng(7 + static_cast<int>(isa));
        ThreadPool two(2), three(3);
        for (int iter = 0; iter < 40; ++iter) {
          ThreadPool& pool = iter % 2 ? three : two;
          Case t = RandomCase(rng, 1, 80, 1);
          const int tiles_per_thread = isa == CpuIsa::kAvx512Vnni ? 32 : 4;
          t.m = RandomInt(rng, 2 * pool.num_threads(),
                          6 * tiles_per_thread * pool.num_threads() - 1);
          t.k = RandomInt(rng, 100, 300);
          t.lda = t.k + RandomInt(rng, 0, 3);
          CheckCase(t, rng, &pool,
                    absl::StrCat(CpuIsaName(isa), " iteration ", iter,
                                 ": m=", t.m, " n=", t.n, " k=", t.k,
                                 " threads ", pool.num_threads()));
          if (HasFatalFailure()) return;
        }
        EXPECT_GT(GemmRowPartsCallsForTesting(), parts) << CpuIsaName(isa);
      });
}

TEST(GemmTest, ClampKeepsNaN) {
  // std::max(NaN, lo) and std::min(NaN, hi) are NaN, as in TFLite's
  // activation functions; the vector clamp must agree.
  const std::vector<float> a = {std::nanf(""), 1.0f};  // two rows, K = 1
  const std::vector<float> b = {2.0f};
  std::vector<float> packed(PackedRhsSize(1, 1));
  PackRhs(b.data(), 1, 1, 1, 1, packed.data());
  std::vector<float> c(2);
  GemmArgs g;
  g.m = 2, g.n = 1, g.k = 1;
  g.a = a.data(), g.lda = 1;
  g.packed_b = packed.data();
  g.lo = 0.0f, g.hi = 6.0f;
  g.c = c.data(), g.ldc = 1;
  Gemm(g, nullptr);
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ(c[1], 2.0f);
}

// The AVX-512 build's wide tiles of 16-float vectors (two panels at a
// time, a last odd one alone, whole or partial; rows cut into tiles of
// even heights; over threads the rows split evenly, or the columns where
// there are more of them) against the AVX2+FMA build's
// 6 x 16 tiles of 8-float ones: the same fused multiply-adds in the same
// order, so bit-identical results, for every row count and remainder, odd
// and partial last panels, clamps and the HARD_SWISH epilogue, 1 and 2
// threads.
TEST(GemmTest, WideTilesMatchEightFloatTilesBitForBit) {
  testing::ForEachForcedIsa({CpuIsa::kAvx512Vnni}, [&](CpuIsa) {
    const int64_t wide = GemmWideTilesCallsForTesting();
    const int64_t column_parts = GemmColumnPartsCallsForTesting();
    std::mt19937 rng = testing::SeededRng(7);
    ThreadPool pool(2);
    for (int iter = 0; iter < 150; ++iter) {
      Case t = RandomCase(rng, iter % 2 ? 13 : 80, 110, 48);
      if (iter % 10 == 9) {
        // A B of 64K floats or more, with more columns than rows: split
        // over the threads by columns.
        t.m = RandomInt(rng, 2, 40);
        t.n = RandomInt(rng, 260, 400);
        t.k = RandomInt(rng, 256, 300);
        t.lda = t.k + RandomInt(rng, 0, 3);
        t.ldc = t.n + RandomInt(rng, 0, 5);
      }
      const std::vector<float> a = testing::RandomFloats(rng, t.m * t.lda);
      const std::vector<float> b = testing::RandomFloats(rng, t.k * t.n);
      const std::vector<float> bias = testing::RandomFloats(rng, t.n);
      std::vector<float> packed(PackedRhsSize(t.k, t.n));
      PackRhs(b.data(), t.k, t.n, /*stride_k=*/t.n, /*stride_n=*/1, packed.data());
      std::vector<float> narrow(t.m * t.ldc, 3.0f), wide_c(t.m * t.ldc, 3.0f);
      GemmArgs g = ArgsOf(t, a, packed, bias, wide_c.data());
      g.hard_swish = t.hard_swish;
      ThreadPool* p = iter % 3 == 0 || iter % 10 == 9 ? &pool : nullptr;
      Gemm(g, p);
      {
        testing::IsaCap cap(CpuIsa::kAvx2);
        g.c = narrow.data();
        Gemm(g, p);
      }
      ASSERT_EQ(std::memcmp(narrow.data(), wide_c.data(), narrow.size() * sizeof(float)), 0)
          << "iteration " << iter << ": m=" << t.m << " n=" << t.n << " k=" << t.k;
    }
    EXPECT_GT(GemmWideTilesCallsForTesting(), wide);
    EXPECT_GT(GemmColumnPartsCallsForTesting(), column_parts);
    // One panel (N = 16, no pair): the wide build's tiles of one 16-float
    // vector per row take it.
    const int64_t before = GemmWideTilesCallsForTesting();
    std::vector<float> packed(PackedRhsSize(5, 16), 0.5f), a(7 * 5, 1.0f),
        c(7 * 16);
    GemmArgs g;
    g.m = 7, g.n = 16, g.k = 5;
    g.a = a.data(), g.lda = 5;
    g.packed_b = packed.data();
    g.c = c.data(), g.ldc = 16;
    Gemm(g, nullptr);
    EXPECT_EQ(GemmWideTilesCallsForTesting(), before + 1);
    EXPECT_EQ(c[7 * 16 - 1], 2.5f);
  });
}

// Reads A through an IndirectA (random offsets, padding taps and edge
// windows, several images, a channel offset) and compares with the same
// product on the explicit A the table describes: the sums run in the same
// order, so the results are bit-identical. Each float build forced in
// turn, 1 and 2 threads.
TEST(GemmTest, IndirectAMatchesExplicitA) {
  testing::ForEachForcedIsa({CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}, [&](CpuIsa isa) {
    const int64_t calls = GemmCallsForTesting(isa);
    const int64_t indirect = IndirectGemmCallsForTesting();
    std::mt19937 rng = testing::SeededRng(3 + static_cast<int>(isa));
    ThreadPool pool(2);
    for (int iter = 0; iter < 200; ++iter) {
      const int64_t images = RandomInt(rng, 1, 3);
      const int64_t pixels = RandomInt(rng, 1, iter % 10 == 0 ? 300 : 13);
      const int taps = RandomInt(rng, 1, 9);
      const int64_t tap_len = RandomInt(rng, 1, 20);
      const int64_t channels = tap_len + RandomInt(rng, 0, 5);
      const int64_t channel_offset = RandomInt(rng, 0, channels - tap_len);
      const int64_t in_pixels = RandomInt(rng, 1, 30);
      const int64_t image_stride = in_pixels * channels;
      const int64_t windows = RandomInt(rng, 0, 4);
      const int64_t edge_stride = (windows + 1) * tap_len;
      const int64_t m = images * pixels, n = RandomInt(rng, 1, iter % 3 ? 40 : 80);
      const int64_t k = taps * tap_len;
      const std::vector<float> input = testing::RandomFloats(rng, images * image_stride);
      // Each image's edge buffer: tap_len zeros, then its windows.
      std::vector<float> edge =
          testing::RandomFloats(rng, images * edge_stride);
      for (int64_t i = 0; i < images; ++i) {
        std::fill_n(edge.begin() + i * edge_stride, tap_len, 0.0f);
      }
      std::vector<int32_t> offsets(pixels * taps);
      for (auto& o : offsets) {
        const int kind = RandomInt(rng, 0, 5);
        if (kind == 0) {
          o = -1;
        } else if (kind == 1 && windows > 0) {
          o = static_cast<int32_t>(-1 - tap_len * RandomInt(rng, 1, windows));
        } else {
          o = static_cast<int32_t>(RandomInt(rng, 0, in_pixels - 1) * channels);
        }
      }
      std::vector<float> a(m * k);
      for (int64_t r = 0; r < m; ++r) {
        for (int t = 0; t < taps; ++t) {
          const int32_t o = offsets[(r % pixels) * taps + t];
          for (int64_t c = 0; c < tap_len; ++c) {
            a[r * k + t * tap_len + c] =
                o < 0
                    ? edge[r / pixels * edge_stride + (-1 - o) + c]
                    : input[r / pixels * image_stride + o + channel_offset + c];
          }
        }
      }
      const std::vector<float> b = testing::RandomFloats(rng, k * n);
      const std::vector<float> bias = testing::RandomFloats(rng, n);
      std::vector<float> packed(PackedRhsSize(k, n));
      PackRhs(b.data(), k, n, /*stride_k=*/n, /*stride_n=*/1, packed.data());
      IndirectA ia;
      ia.input = input.data(), ia.offsets = offsets.data();
      ia.pixels = pixels, ia.image_stride = image_stride;
      ia.channel_offset = channel_offset;
      ia.taps = taps, ia.tap_len = tap_len;
      ia.edge = edge.data(), ia.edge_stride = edge_stride;
      const int64_t ldc = n + RandomInt(rng, 0, 3);
      std::vector<float> want(m * ldc, 7.0f), got(m * ldc, 7.0f);
      GemmArgs g;
      g.m = m, g.n = n, g.k = k;
      g.a = a.data(), g.lda = k;
      g.packed_b = packed.data();
      g.bias = iter % 3 ? bias.data() : nullptr;
      if (iter % 2) g.lo = -0.5f, g.hi = 0.5f;
      g.c = want.data(), g.ldc = ldc;
      Gemm(g, nullptr);
      g.a = nullptr, g.lda = 0, g.indirect = &ia, g.c = got.data();
      Gemm(g, iter % 2 ? &pool : nullptr);
      ASSERT_EQ(got, want) << CpuIsaName(isa) << " iteration " << iter << ": m=" << m
                           << " n=" << n << " taps=" << taps << " tap_len=" << tap_len;
    }
    EXPECT_GT(GemmCallsForTesting(isa), calls) << CpuIsaName(isa);
    EXPECT_GE(IndirectGemmCallsForTesting(), indirect + 200) << CpuIsaName(isa);
  });
}

}  // namespace
}  // namespace graft::kernels
