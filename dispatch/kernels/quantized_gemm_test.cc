// The int8 GEMM's paths (baseline vector extensions, AVX2, AVX-512 VNNI)
// against a scalar reference over drawn shapes (every row, column and
// reduction tail), bit-exact; the path each test forces is checked to be
// the one taken, and paths the CPU lacks skip saying so. Then INT8 CONV_2D
// and FULLY_CONNECTED through the runtime under each path: identical
// outputs; and INT8 DEPTHWISE_CONV_2D under each path against TFLite's
// reference formula.
#include "dispatch/kernels/quantized_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "dispatch/kernels/quantization_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using kernels::CpuIsa;
using testing::DepthwiseCase;
using testing::DescribeDepthwise;
using testing::IsaCap;
using testing::RandomInt;
using testing::ReferenceDepthwise;
using testing::RunDepthwise;

// Skips the calling test where the CPU lacks `isa`.
#define SKIP_UNLESS_CPU_HAS(isa)                                             \
  if (static_cast<int>(kernels::DetectedCpuIsa()) < static_cast<int>(isa)) { \
    GTEST_SKIP() << "this CPU has no " << kernels::CpuIsaName(isa)           \
                 << " (it has "                                              \
                 << kernels::CpuIsaName(kernels::DetectedCpuIsa())           \
                 << "): that path is tested on a machine that has it";       \
  }

struct Problem {
  int64_t rows, k, n;
  int32_t in_off;
  std::vector<int8_t> a, w;  // [rows][k], [n][k]
  std::vector<kernels::QuantizedMultiplier> mult;
  std::vector<int64_t> bias;
  int32_t out_off, act_min, act_max;
  bool single_rounding;
};

Problem Draw(std::mt19937& rng, int max_n = 80) {
  Problem p;
  p.rows = RandomInt(rng, 1, 40);
  p.k = RandomInt(rng, 1, RandomInt(rng, 0, 3) == 0 ? 600 : 70);
  p.n = RandomInt(rng, 1, max_n);
  p.in_off = RandomInt(rng, -127, 128);
  p.a.resize(p.rows * p.k);
  p.w.resize(p.n * p.k);
  for (auto& v : p.a) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  for (auto& v : p.w) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  for (int64_t c = 0; c < p.n; ++c) {
    p.mult.push_back(kernels::QuantizeMultiplier(std::ldexp(
        RandomInt(rng, 1000, 100000) / 100000.0, -RandomInt(rng, 4, 16))));
    p.bias.push_back(RandomInt(rng, -100000, 100000));
  }
  p.out_off = RandomInt(rng, -128, 127);
  p.act_min = RandomInt(rng, 0, 1) ? -128 : RandomInt(rng, -128, 0);
  p.act_max = RandomInt(rng, 0, 1) ? 127 : RandomInt(rng, p.act_min, 127);
  p.single_rounding = RandomInt(rng, 0, 1) == 1;
  return p;
}

// TFLite's reference: int32 sums of (x + in_off) * w, bias, rescale.
std::vector<int8_t> Reference(const Problem& p) {
  std::vector<int8_t> out(p.rows * p.n);
  for (int64_t r = 0; r < p.rows; ++r) {
    for (int64_t c = 0; c < p.n; ++c) {
      int32_t acc = 0;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        acc += (p.a[r * p.k + kk] + p.in_off) * int32_t{p.w[c * p.k + kk]};
      }
      acc += static_cast<int32_t>(p.bias[c]);
      int32_t v = p.single_rounding
                      ? kernels::MultiplyByQuantizedMultiplierSingleRounding(
                            acc, p.mult[c].multiplier, p.mult[c].shift)
                      : kernels::MultiplyByQuantizedMultiplier(
                            acc, p.mult[c].multiplier, p.mult[c].shift);
      v = std::min(p.act_max, std::max(p.act_min, v + p.out_off));
      out[r * p.n + c] = static_cast<int8_t>(v);
    }
  }
  return out;
}

// The int16 GEMM (QGemm) under whatever KernelIsa() is now.
std::vector<int8_t> RunQGemm(const Problem& p) {
  std::vector<int16_t> packed(kernels::QGemmPackedSize(p.n, p.k));
  kernels::QGemmPackRows(p.w.data(), p.n, p.k, p.k, 0, packed.data());
  std::vector<int16_t> a(p.rows * kernels::QGemmPaddedK(p.k));
  kernels::QGemmWidenRows(p.a.data(), p.rows, p.k, p.k, p.in_off, a.data());
  kernels::QGemmRequant rq;
  kernels::QGemmPrepareRequant(p.mult, p.bias, p.single_rounding, p.out_off,
                               p.act_min, p.act_max, &rq);
  std::vector<int8_t> out(p.rows * p.n);
  kernels::QGemm(a.data(), p.rows, p.k, packed.data(), p.n, 0,
                 kernels::QGemmPanels(p.n), rq, 0, out.data(), p.n);
  return out;
}

std::vector<int8_t> RunQGemmVnni(const Problem& p, bool small_sums = false) {
  kernels::QGemmVnniWeights b;
  kernels::QGemmVnniPackRows(p.w.data(), p.n, p.k, p.k, p.in_off - 128, &b);
  std::vector<uint8_t> a(p.rows * kernels::QGemmVnniPaddedK(p.k));
  kernels::QGemmVnniRowsFromInt8(p.a.data(), p.rows, p.k, p.k, a.data());
  kernels::QGemmRequant rq;
  kernels::QGemmPrepareRequant(p.mult, p.bias, p.single_rounding, p.out_off,
                               p.act_min, p.act_max, &rq);
  rq.small_sums = small_sums;
  // Two calls over panel ranges, as a threaded caller splits them.
  std::vector<int8_t> out(p.rows * p.n);
  const int64_t panels = kernels::QGemmPanels(p.n), mid = panels / 2;
  kernels::QGemmVnni(a.data(), p.rows, b, 0, mid, rq, 0, out.data(), p.n);
  kernels::QGemmVnni(a.data(), p.rows, b, mid, panels, rq, 0, out.data(), p.n);
  return out;
}

// QGemmVnni on paired weights (QGemmVnniPackPairedRows), each row stored
// `gap` bytes past the last column's: the rows' outputs, and whether every
// byte between them kept its fill.
struct PairedRun {
  std::vector<int8_t> out;
  bool gaps_kept = true;
};
PairedRun RunQGemmVnniPaired(const Problem& p, bool small_sums, int64_t gap) {
  kernels::QGemmVnniWeights b;
  kernels::QGemmVnniPackPairedRows(p.w.data(), p.n, p.k, p.k, p.in_off - 128,
                                   &b);
  std::vector<uint8_t> a(p.rows * kernels::QGemmVnniPaddedK(p.k));
  kernels::QGemmVnniRowsFromInt8(p.a.data(), p.rows, p.k, p.k, a.data());
  kernels::QGemmRequant rq;
  kernels::QGemmPrepareRequant(p.mult, p.bias, false, p.out_off, p.act_min,
                               p.act_max, &rq);
  EXPECT_TRUE(rq.fast_double);
  rq.small_sums = small_sums;
  const int64_t stride = p.n + gap;
  constexpr int8_t kFill = 0x5A;
  std::vector<int8_t> wide(p.rows * stride, kFill);
  kernels::QGemmVnni(a.data(), p.rows, b, 0, 1, rq, 0, wide.data(), stride);
  PairedRun run;
  for (int64_t r = 0; r < p.rows; ++r) {
    run.out.insert(run.out.end(), wide.begin() + r * stride,
                   wide.begin() + r * stride + p.n);
    for (int64_t i = p.n; i < stride; ++i) {
      run.gaps_kept &= wide[r * stride + i] == kFill;
    }
  }
  return run;
}

// Whether the convolution's prepare would allow the 32-bit finish
// (rq.small_sums): k * 255 * 128 + max |bias| < 2^30.
bool SmallSumsFit(const Problem& p) {
  int64_t max_bias = 0;
  for (int64_t b : p.bias) max_bias = std::max(max_bias, b < 0 ? -b : b);
  return p.k * 255 * 128 + max_bias < (int64_t{1} << 30);
}

void ExpectPathMatchesReference(CpuIsa isa) {
  IsaCap cap(isa);
  ASSERT_EQ(kernels::KernelIsa(), isa);
  std::mt19937 rng = testing::SeededRng(static_cast<uint32_t>(isa));
  const int64_t calls_before = kernels::QGemmCallsForTesting(isa);
  for (int iter = 0; iter < 150; ++iter) {
    const Problem p = Draw(rng);
    const std::vector<int8_t> want = Reference(p);
    const std::vector<int8_t> got =
        isa == CpuIsa::kAvx512Vnni ? RunQGemmVnni(p) : RunQGemm(p);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(int{got[i]}, int{want[i]})
          << kernels::CpuIsaName(isa) << " iteration " << iter << " rows "
          << p.rows << " k " << p.k << " n " << p.n << " in_off " << p.in_off
          << " single_rounding " << p.single_rounding << " at row " << i / p.n
          << " column " << i % p.n;
    }
  }
  EXPECT_GT(kernels::QGemmCallsForTesting(isa), calls_before)
      << "the " << kernels::CpuIsaName(isa) << " GEMM was not the one run";
}

TEST(QGemmPathsTest, BaselineMatchesReference) {
  ExpectPathMatchesReference(CpuIsa::kBaseline);
}

TEST(QGemmPathsTest, Avx2MatchesReference) {
  SKIP_UNLESS_CPU_HAS(CpuIsa::kAvx2);
  ExpectPathMatchesReference(CpuIsa::kAvx2);
}

TEST(QGemmPathsTest, Avx512VnniMatchesReference) {
  SKIP_UNLESS_CPU_HAS(CpuIsa::kAvx512Vnni);
  ExpectPathMatchesReference(CpuIsa::kAvx512Vnni);
}

// Eight columns or fewer, two rows per panel: every column count, every
// tail of the 16-row tile (odd row counts leave a pair half empty), rows
// that touch (the 64-byte store) and rows apart, with and without the
// 32-bit finish.
TEST(QGemmPathsTest, Avx512VnniPairedRowsMatchReference) {
  SKIP_UNLESS_CPU_HAS(CpuIsa::kAvx512Vnni);
  IsaCap cap(CpuIsa::kAvx512Vnni);
  std::mt19937 rng = testing::SeededRng(31);
  const int64_t calls_before = kernels::QGemmVnniPairedCallsForTesting();
  for (int iter = 0; iter < 300; ++iter) {
    Problem p = Draw(rng, kernels::kQGemmVnniPairedNr);
    p.single_rounding = false;
    const std::vector<int8_t> want = Reference(p);
    for (bool small_sums : {false, SmallSumsFit(p)}) {
      const int64_t gap = RandomInt(rng, 0, 1) ? 0 : RandomInt(rng, 1, 9);
      const PairedRun run = RunQGemmVnniPaired(p, small_sums, gap);
      ASSERT_EQ(run.out, want)
          << "iteration " << iter << " rows " << p.rows << " k " << p.k << " n "
          << p.n << " gap " << gap << " small_sums " << small_sums;
      ASSERT_TRUE(run.gaps_kept) << "iteration " << iter << " wrote past "
                                 << p.n << " columns (gap " << gap << ")";
    }
  }
  EXPECT_GE(kernels::QGemmVnniPairedCallsForTesting() - calls_before, 600);
}

// Extreme values: every activation and weight at the ends of their range,
// long reductions, so the int32 sums and column terms are as large as the
// shapes allow (vpdpbusd's products of 255 * -128 sum without saturation).
TEST(QGemmPathsTest, Avx512VnniExtremeValuesMatchReference) {
  SKIP_UNLESS_CPU_HAS(CpuIsa::kAvx512Vnni);
  std::mt19937 rng = testing::SeededRng(7);
  for (int iter = 0; iter < 20; ++iter) {
    Problem p = Draw(rng);
    p.k = RandomInt(rng, 1000, 5000);
    p.a.resize(p.rows * p.k);
    p.w.resize(p.n * p.k);
    const int8_t av = RandomInt(rng, 0, 1) ? 127 : -128;
    for (auto& v : p.a) v = RandomInt(rng, 0, 4) ? av : int8_t{0};
    for (auto& v : p.w) v = RandomInt(rng, 0, 1) ? 127 : -128;
    p.in_off = RandomInt(rng, 0, 1) ? 128 : -127;
    const std::vector<int8_t> want = Reference(p);
    ASSERT_EQ(RunQGemmVnni(p), want) << "iteration " << iter;
  }
}

#if GRAFT_QGEMM_AVX2
// MultiplyByQuantizedMultiplierAvx2 on 8 lanes (the test's own AVX2
// function; run only where the CPU has AVX2).
__attribute__((target("avx2"))) void MultiplyByQuantizedMultiplierAvx2Into(
    const int32_t* x, int32_t multiplier, int shift, int32_t* out) {
  _mm256_storeu_si256(
      reinterpret_cast<__m256i*>(out),
      kernels::MultiplyByQuantizedMultiplierAvx2(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)), multiplier,
          shift));
}
// RequantDoubleFastAvx512 on 16 lanes of the given sums (the test's own
// AVX-512 function; run only where the CPU has AVX-512 VNNI).
GRAFT_AVX512_TARGET void FastRequant16(const kernels::QGemmRequant& rq,
                                       int64_t channel, const int32_t* acc,
                                       int32_t* out) {
  const kernels::Requant16 r = kernels::LoadRequant16(rq, channel, nullptr);
  _mm512_storeu_si512(out, kernels::RequantDoubleFastAvx512(
                               r, _mm512_loadu_si512(acc)));
}
// RequantDoubleSmallAvx512, the same way.
GRAFT_AVX512_TARGET void SmallRequant16(const kernels::QGemmRequant& rq,
                                        int64_t channel, const int32_t* acc,
                                        int32_t* out) {
  const kernels::Requant16 r = kernels::LoadRequant16(rq, channel, nullptr);
  _mm512_storeu_si512(out, kernels::RequantDoubleSmallAvx512(
                               r, _mm512_loadu_si512(acc)));
}
// RequantSmallClampedAvx512 (no bias: the sums are x), the same way.
GRAFT_AVX512_TARGET void SmallClampedRequant16(const kernels::QGemmRequant& rq,
                                               int64_t channel,
                                               const int32_t* acc,
                                               int32_t* out) {
  const kernels::Requant16 r = kernels::LoadRequant16(rq, channel, nullptr);
  _mm512_storeu_si512(
      out, kernels::RequantSmallClampedAvx512(r, _mm512_loadu_si512(acc)));
}
#endif

// The folded double rounding (RequantDoubleFastAvx512) lane by lane against
// the scalar MultiplyByQuantizedMultiplier plus offset, unclamped, over the
// whole int32 range of sums (ends included, and sums drawn near the ties
// of both roundings), every shift it takes (-1 to -22), multipliers at the
// ends of [2^30, 2^31), output offsets up to +-255; the 32-bit finishes
// for sums inside (-2^30, 2^30), the one without the sign correction
// clamped from below at or above the output offset.
TEST(QGemmPathsTest, FastDoubleRequantMatchesScalar) {
  SKIP_UNLESS_CPU_HAS(CpuIsa::kAvx512Vnni);
#if GRAFT_QGEMM_AVX2
  std::mt19937 rng = testing::SeededRng(21);
  const int32_t ends[] = {INT32_MIN, INT32_MIN + 1, -2, -1, 0, 1, 2,
                          INT32_MAX - 1, INT32_MAX};
  for (int iter = 0; iter < 3000; ++iter) {
    const int channels = RandomInt(rng, 1, 40);
    std::vector<kernels::QuantizedMultiplier> mult(channels);
    for (auto& m : mult) {
      const int pick = RandomInt(rng, 0, 3);
      m.multiplier = pick == 0   ? (1 << 30)
                     : pick == 1 ? INT32_MAX
                                 : static_cast<int32_t>(
                                       (1u << 30) + (static_cast<uint32_t>(
                                                         rng()) >> 2));
      m.shift = RandomInt(rng, 0, 4) == 0 ? (RandomInt(rng, 0, 1) ? -1 : -22)
                                          : -RandomInt(rng, 1, 22);
    }
    const int32_t out_off = RandomInt(rng, 0, 3) == 0
                                ? (RandomInt(rng, 0, 1) ? 255 : -255)
                                : RandomInt(rng, -255, 255);
    kernels::QGemmRequant rq;
    kernels::QGemmPrepareRequant(mult, std::vector<int64_t>(channels, 0),
                                 false, out_off, -128, 127, &rq);
    ASSERT_TRUE(rq.fast_double);
    for (int64_t c0 = 0; c0 < channels; c0 += 16) {
      for (int rep = 0; rep < 20; ++rep) {
        int32_t acc[16], got[16];
        for (int i = 0; i < 16; ++i) {
          const int64_t c = std::min<int64_t>(c0 + i, channels - 1);
          const int kind = RandomInt(rng, 0, 3);
          if (kind == 0) {
            acc[i] = ends[RandomInt(rng, 0, 8)];
          } else if (kind == 1) {
            acc[i] = static_cast<int32_t>(rng());
          } else {
            // Near a tie: x * M close to (j + 1/2) * 2^(31 + s) (second
            // rounding) or to (j + 1/2) * 2^31 (first).
            const int e = 31 + (kind == 2 ? -mult[c].shift : 0);
            const double j = RandomInt(rng, -1000000, 1000000) + 0.5;
            const double x =
                std::ldexp(j, e) / mult[c].multiplier + RandomInt(rng, -2, 2);
            acc[i] = static_cast<int32_t>(
                std::clamp(x, -2147483648.0, 2147483647.0));
          }
        }
        FastRequant16(rq, c0, acc, got);
        for (int i = 0; i < 16 && c0 + i < channels; ++i) {
          const int64_t want =
              int64_t{kernels::MultiplyByQuantizedMultiplier(acc[i],
                                                             mult[c0 + i])} +
              out_off;
          ASSERT_EQ(got[i], want)
              << "acc " << acc[i] << " multiplier " << mult[c0 + i].multiplier
              << " shift " << mult[c0 + i].shift << " offset " << out_off;
        }
        // The 32-bit finish, for sums inside (-2^30, 2^30) (the ends kept:
        // +-(2^30 - 1) for the ones outside).
        for (int i = 0; i < 16; ++i) {
          if (acc[i] >= (1 << 30)) acc[i] = (1 << 30) - 1 - (acc[i] & 7);
          if (acc[i] <= -(1 << 30)) acc[i] = -(1 << 30) + 1 + (acc[i] & 7);
        }
        SmallRequant16(rq, c0, acc, got);
        for (int i = 0; i < 16 && c0 + i < channels; ++i) {
          const int64_t want =
              int64_t{kernels::MultiplyByQuantizedMultiplier(acc[i],
                                                             mult[c0 + i])} +
              out_off;
          ASSERT_EQ(got[i], want)
              << "small: acc " << acc[i] << " multiplier "
              << mult[c0 + i].multiplier << " shift " << mult[c0 + i].shift
              << " offset " << out_off;
        }
        // Without the [h < 0] correction: the same once clamped from
        // below at any act_min >= output_offset.
        SmallClampedRequant16(rq, c0, acc, got);
        const int32_t lowest = std::max(out_off, -128);
        const int64_t act_min = RandomInt(rng, lowest, std::max(lowest, 127));
        for (int i = 0; i < 16 && c0 + i < channels; ++i) {
          const int64_t want = int64_t{kernels::MultiplyByQuantizedMultiplier(
                                   acc[i], mult[c0 + i])} +
                               out_off;
          ASSERT_EQ(std::max<int64_t>(got[i], act_min), std::max(want, act_min))
              << "small, clamped at " << act_min << ": acc " << acc[i]
              << " multiplier " << mult[c0 + i].multiplier << " shift "
              << mult[c0 + i].shift << " offset " << out_off;
        }
      }
    }
  }
#endif
}

// MultiplyByQuantizedMultiplierAvx2 (quantized MEAN and SUM's rescale) is
// the scalar MultiplyByQuantizedMultiplier lane by lane: over the int32
// ends and drawn values (some small, where the rounding ties lie),
// multipliers 0 and at the ends of [2^30, 2^31), shifts from -31 (MEAN's
// folded 1/count) to +30.
TEST(QGemmPathsTest, MultiplyByQuantizedMultiplierAvx2MatchesScalar) {
  SKIP_UNLESS_CPU_HAS(CpuIsa::kAvx2);
#if GRAFT_QGEMM_AVX2
  std::mt19937 rng = testing::SeededRng(22);
  const int32_t ends[] = {INT32_MIN, INT32_MIN + 1, -2,       -1, 0, 1,
                          2,         INT32_MAX - 1, INT32_MAX};
  for (int iter = 0; iter < 20000; ++iter) {
    const int pick = RandomInt(rng, 0, 4);
    const int32_t m = pick == 0   ? 0
                      : pick == 1 ? (1 << 30)
                      : pick == 2 ? INT32_MAX
                                  : static_cast<int32_t>(rng() >> 1);
    const int shift = RandomInt(rng, 0, 3) == 0 ? RandomInt(rng, 0, 30)
                                                : -RandomInt(rng, 0, 31);
    alignas(32) int32_t x[8], got[8];
    for (int j = 0; j < 8; ++j) {
      const int kind = RandomInt(rng, 0, 2);
      x[j] = kind == 0   ? ends[RandomInt(rng, 0, 8)]
             : kind == 1 ? static_cast<int32_t>(rng()) >> RandomInt(rng, 0, 31)
                         : static_cast<int32_t>(rng());
    }
    MultiplyByQuantizedMultiplierAvx2Into(x, m, shift, got);
    for (int j = 0; j < 8; ++j) {
      ASSERT_EQ(got[j], kernels::MultiplyByQuantizedMultiplier(x[j], m, shift))
          << "x=" << x[j] << " multiplier=" << m << " shift=" << shift;
    }
  }
#endif
}

// QGemmPrepareRequant takes the folded form only inside its conditions;
// the GEMM on either side of them matches the reference.
TEST(QGemmPathsTest, FastDoubleRequantChosenOnlyWhereExact) {
  auto fast = [](int shift, int32_t out_off) {
    kernels::QGemmRequant rq;
    kernels::QGemmPrepareRequant({{1 << 30, -8}, {1 << 30, shift}}, {0, 0},
                                 false, out_off, -128, 127, &rq);
    return rq.fast_double;
  };
  EXPECT_TRUE(fast(-1, 0));
  EXPECT_TRUE(fast(-22, -255));
  EXPECT_FALSE(fast(0, 0));
  EXPECT_FALSE(fast(3, 0));
  EXPECT_FALSE(fast(-23, 0));
  EXPECT_FALSE(fast(-8, 256));
  kernels::QGemmRequant wide;  // a UINT8 output's range
  kernels::QGemmPrepareRequant({{1 << 30, -8}}, {0}, false, 0, 0, 255, &wide);
  EXPECT_FALSE(wide.fast_double);
  kernels::QGemmRequant single;
  kernels::QGemmPrepareRequant({{1 << 30, -8}}, {0}, true, 0, -128, 127,
                               &single);
  EXPECT_FALSE(single.fast_double);
  SKIP_UNLESS_CPU_HAS(CpuIsa::kAvx512Vnni);
  IsaCap cap(CpuIsa::kAvx512Vnni);
  std::mt19937 rng = testing::SeededRng(22);
  for (int iter = 0; iter < 300; ++iter) {
    Problem p = Draw(rng);
    p.single_rounding = false;
    // Shifts around the conditions' edges, multipliers at their ends,
    // large biases.
    for (int64_t c = 0; c < p.n; ++c) {
      p.mult[c].shift = RandomInt(rng, -24, 2);
      const int pick = RandomInt(rng, 0, 2);
      if (pick == 0) p.mult[c].multiplier = 1 << 30;
      if (pick == 1) p.mult[c].multiplier = INT32_MAX;
      p.bias[c] = RandomInt(rng, 0, 3) == 0
                      ? RandomInt(rng, -2000000000, 2000000000)
                      : RandomInt(rng, -100000, 100000);
    }
    if (RandomInt(rng, 0, 1)) {
      for (auto& m : p.mult) m.shift = RandomInt(rng, -22, -1);
    }
    const std::vector<int8_t> want = Reference(p);
    ASSERT_EQ(RunQGemmVnni(p), want) << "iteration " << iter;
    // The 32-bit finish where the sums allow it.
    if (SmallSumsFit(p)) {
      ASSERT_EQ(RunQGemmVnni(p, /*small_sums=*/true), want)
          << "iteration " << iter;
    }
  }
}

TEST(CpuFeaturesTest, CapsAndNames) {
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512Vnni}) {
    EXPECT_EQ(kernels::ParseCpuIsa(kernels::CpuIsaName(isa)), isa);
    IsaCap cap(isa);
    EXPECT_LE(static_cast<int>(kernels::KernelIsa()), static_cast<int>(isa));
    EXPECT_LE(static_cast<int>(kernels::KernelIsa()),
              static_cast<int>(kernels::DetectedCpuIsa()));
  }
  EXPECT_FALSE(kernels::ParseCpuIsa("sse9").has_value());
  std::printf("this CPU: %s\n", kernels::CpuIsaName(kernels::DetectedCpuIsa()));
}

// INT8 CONV_2D (drawn kernel sizes, strides, dilations, padding, channel
// counts) or FULLY_CONNECTED, built once, run under each path the CPU has:
// every path's output equals the baseline's.
std::vector<int8_t> RunOp(bool fc, uint32_t seed, CpuIsa isa, int threads) {
  IsaCap cap(isa);
  std::mt19937 rng(seed);
  const int h = RandomInt(rng, 1, 12), w = RandomInt(rng, 1, 12);
  const int cin = RandomInt(rng, 1, 40), cout = RandomInt(rng, 1, 70);
  const int kh = fc ? 1 : RandomInt(rng, 1, 4),
            kw = fc ? 1 : RandomInt(rng, 1, 4);
  const int stride = RandomInt(rng, 1, 2), dil = RandomInt(rng, 1, 2);
  const bool same = RandomInt(rng, 0, 1) == 1;
  const int in_zp = RandomInt(rng, -128, 127),
            out_zp = RandomInt(rng, -128, 127);
  const int batch = fc ? RandomInt(rng, 1, 30) : RandomInt(rng, 1, 3);
  std::vector<float> ws(cout);
  for (auto& s : ws)
    s = std::uniform_real_distribution<float>(0.001f, 0.01f)(rng);
  std::vector<int8_t> wv(int64_t{cout} * kh * kw * cin);
  for (auto& v : wv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  std::vector<int32_t> bv(cout);
  for (auto& v : bv) v = RandomInt(rng, -5000, 5000);
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  const std::vector<int32_t> xs = fc ? std::vector<int32_t>{batch, cin}
                                     : std::vector<int32_t>{batch, h, w, cin};
  TensorId x = g.Input("x", tfl::TensorType_INT8, xs);
  TensorId tw = fc ? g.Constant<int8_t>("w", {cout, cin}, wv)
                   : g.Constant<int8_t>("w", {cout, kh, kw, cin}, wv);
  TensorId tb = g.Constant<int32_t>("b", {cout}, bv);
  const float in_s = 0.05f;
  g.Quantize(x, in_s, in_zp);
  std::vector<float> bs(cout);
  for (int c = 0; c < cout; ++c) bs[c] = in_s * ws[c];
  std::vector<int64_t> zeros(cout, 0);
  g.QuantizePerChannel(tw, ws, zeros, 0).QuantizePerChannel(tb, bs, zeros, 0);
  TensorId y;
  std::vector<int32_t> ys;
  if (fc) {
    ys = {batch, cout};
    tfl::FullyConnectedOptionsT o;
    o.fused_activation_function = tfl::ActivationFunctionType_RELU;
    y = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
            .In(x, tw, tb)
            .Options(o)
            .Out("y", tfl::TensorType_INT8, ys);
  } else {
    const int ekh = (kh - 1) * dil + 1, ekw = (kw - 1) * dil + 1;
    const int oh = same ? (h + stride - 1) / stride : (h - ekh) / stride + 1;
    const int ow = same ? (w + stride - 1) / stride : (w - ekw) / stride + 1;
    if (oh <= 0 || ow <= 0) return {};
    ys = {batch, oh, ow, cout};
    tfl::Conv2DOptionsT o;
    o.stride_h = o.stride_w = stride;
    o.dilation_h_factor = o.dilation_w_factor = dil;
    o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.fused_activation_function = RandomInt(rng, 0, 1)
                                      ? tfl::ActivationFunctionType_RELU6
                                      : tfl::ActivationFunctionType_NONE;
    y = g.Op(tfl::BuiltinOperator_CONV_2D)
            .In(x, tw, tb)
            .Options(o)
            .Out("y", tfl::TensorType_INT8, ys);
  }
  g.Quantize(y, 0.1f, out_zp).Output(y);
  auto rt = testing::LoadBuilt(mb, threads);
  EXPECT_TRUE(rt.ok()) << rt.status();
  if (!rt.ok()) return {};
  int64_t nx = 1;
  for (int32_t d : xs) nx *= d;
  std::vector<int8_t> xv(nx);
  for (auto& v : xv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  testing::SetInput(**rt, 0, xv);
  EXPECT_TRUE((*rt)->Invoke().ok());
  return testing::GetOutput<int8_t>(**rt, 0);
}

void ExpectOpPathsAgree(bool fc) {
  const uint32_t seed = testing::TestSeed() + (fc ? 1000 : 0);
  std::vector<CpuIsa> paths = {CpuIsa::kAvx2, CpuIsa::kAvx512Vnni};
  for (CpuIsa isa : paths) {
    if (static_cast<int>(kernels::DetectedCpuIsa()) < static_cast<int>(isa)) {
      std::printf("skipping the %s path: this CPU has %s\n",
                  kernels::CpuIsaName(isa),
                  kernels::CpuIsaName(kernels::DetectedCpuIsa()));
    }
  }
  for (int iter = 0; iter < 60; ++iter) {
    const std::vector<int8_t> base =
        RunOp(fc, seed + iter, CpuIsa::kBaseline, 1);
    for (CpuIsa isa : paths) {
      if (static_cast<int>(kernels::DetectedCpuIsa()) < static_cast<int>(isa)) {
        continue;
      }
      const int64_t before = kernels::QGemmCallsForTesting(isa);
      for (int threads : {1, 2}) {
        ASSERT_EQ(RunOp(fc, seed + iter, isa, threads), base)
            << kernels::CpuIsaName(isa) << " " << threads << " threads, seed "
            << seed + iter;
      }
      if (!base.empty()) {
        EXPECT_GT(kernels::QGemmCallsForTesting(isa), before)
            << kernels::CpuIsaName(isa) << " not taken, seed " << seed + iter;
      }
    }
  }
}

// INT8 DEPTHWISE_CONV_2D, depth multiplier 1 (the blocked paths), on
// drawn shapes: channel counts that leave every tail of the 32-, 16- and
// 1-channel blocks, filters up to 5x5 (not square), strides up to 3,
// dilation, SAME and VALID padding, batch 2; against TFLite's reference
// formula (testing::ReferenceDepthwise).
DepthwiseCase DrawDepthwise(uint32_t seed) {
  std::mt19937 rng(seed);
  DepthwiseCase d;
  do {
    d.batch = RandomInt(rng, 1, 2);
    d.h = RandomInt(rng, 1, 12), d.w = RandomInt(rng, 1, 12);
    d.c = RandomInt(rng, 0, 3) == 0 ? RandomInt(rng, 1, 100)
                                    : 32 * RandomInt(rng, 0, 2) +
                                          RandomInt(rng, 1, 32);
    d.kh = RandomInt(rng, 1, 5), d.kw = RandomInt(rng, 1, 5);
    d.stride_h = RandomInt(rng, 1, 3), d.stride_w = RandomInt(rng, 1, 3);
    d.dil_h = RandomInt(rng, 0, 3) == 0 ? 2 : 1;
    d.dil_w = RandomInt(rng, 0, 3) == 0 ? 2 : 1;
    d.same = RandomInt(rng, 0, 1) == 1;
    const int eh = (d.kh - 1) * d.dil_h + 1, ew = (d.kw - 1) * d.dil_w + 1;
    d.oh = d.same ? (d.h + d.stride_h - 1) / d.stride_h
                  : (d.h - eh + d.stride_h) / d.stride_h;
    d.ow = d.same ? (d.w + d.stride_w - 1) / d.stride_w
                  : (d.w - ew + d.stride_w) / d.stride_w;
  } while (d.oh <= 0 || d.ow <= 0);
  d.in_zp = RandomInt(rng, -128, 127), d.out_zp = RandomInt(rng, -128, 127);
  d.ws.resize(d.c);
  for (auto& s : d.ws)
    s = std::uniform_real_distribution<float>(0.001f, 0.02f)(rng);
  d.wv.resize(int64_t{d.kh} * d.kw * d.c);
  for (auto& v : d.wv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  d.bv.resize(d.c);
  for (auto& v : d.bv) v = RandomInt(rng, -5000, 5000);
  d.xv.resize(int64_t{d.batch} * d.h * d.w * d.c);
  for (auto& v : d.xv) v = static_cast<int8_t>(RandomInt(rng, -128, 127));
  return d;
}

void ExpectDepthwisePathMatchesReference(CpuIsa isa) {
  SKIP_UNLESS_CPU_HAS(isa);
  IsaCap cap(isa);
  const uint32_t seed = testing::TestSeed() + 2000;
  std::printf("[ seed     ] GRAFT_TEST_SEED=%u (cases from seed %u on)\n",
              testing::TestSeed(), seed);
  const int64_t calls_before = kernels::QDepthwiseCallsForTesting(isa);
  for (int iter = 0; iter < 150; ++iter) {
    const DepthwiseCase d = DrawDepthwise(seed + iter);
    const std::vector<int8_t> want = ReferenceDepthwise(d);
    for (int threads : {1, 2}) {
      ASSERT_EQ(RunDepthwise(d, threads), want)
          << kernels::CpuIsaName(isa) << " " << threads
          << " threads, case seed " << seed + iter << ": "
          << DescribeDepthwise(d);
    }
  }
  EXPECT_GT(kernels::QDepthwiseCallsForTesting(isa), calls_before)
      << kernels::CpuIsaName(isa) << " depthwise path not taken";
}

TEST(QGemmPathsTest, DepthwiseBaselineMatchesReference) {
  ExpectDepthwisePathMatchesReference(CpuIsa::kBaseline);
}
TEST(QGemmPathsTest, DepthwiseAvx2MatchesReference) {
  ExpectDepthwisePathMatchesReference(CpuIsa::kAvx2);
}
TEST(QGemmPathsTest, DepthwiseAvx512VnniMatchesReference) {
  ExpectDepthwisePathMatchesReference(CpuIsa::kAvx512Vnni);
}

TEST(QGemmPathsTest, Conv2DAgreesOnEveryPath) { ExpectOpPathsAgree(false); }
TEST(QGemmPathsTest, FullyConnectedAgreesOnEveryPath) {
  ExpectOpPathsAgree(true);
}

}  // namespace
}  // namespace graft
