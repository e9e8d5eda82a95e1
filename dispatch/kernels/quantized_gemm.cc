#include "dispatch/kernels/quantized_gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dispatch/kernels/call_counter.h"

namespace graft::kernels {
namespace {

// An AVX2 kernel beside the baseline (GRAFT_QGEMM_AVX2, quantized_gemm.h),
// picked once.
#if GRAFT_QGEMM_AVX2
#define GRAFT_QGEMM_TARGET_CLONES \
  __attribute__((target_clones("avx2", "default")))
#else
#define GRAFT_QGEMM_TARGET_CLONES
#endif

// The tile's 6 x 16 sums requantized and stored as bytes (an int8 or uint8
// result in range is its low byte either way), rows < nrows, cols < cols.
inline __attribute__((always_inline)) void StoreTile(
    const V8i (&c)[kQGemmMr][2], const QGemmRequant& rq, int64_t channel,
    int64_t nrows, int cols, uint8_t* out, int64_t out_stride) {
  int32_t res[kQGemmMr][kQGemmNr];
#pragma GCC unroll 8
  for (int i = 0; i < kQGemmMr; ++i) {
    RequantizeV8(rq, c[i][0], channel, &res[i][0]);
    RequantizeV8(rq, c[i][1], channel + 8, &res[i][8]);
  }
  typedef uint8_t V8ub __attribute__((vector_size(8), aligned(1)));
  for (int64_t i = 0; i < nrows; ++i) {
    uint8_t* op = out + i * out_stride;
    if (cols == kQGemmNr) {
      V8i lo, hi;
      std::memcpy(&lo, &res[i][0], sizeof(lo));
      std::memcpy(&hi, &res[i][8], sizeof(hi));
      const V8ub lo8 = __builtin_convertvector(lo, V8ub);
      const V8ub hi8 = __builtin_convertvector(hi, V8ub);
      std::memcpy(op, &lo8, sizeof(lo8));
      std::memcpy(op + 8, &hi8, sizeof(hi8));
    } else {
      for (int j = 0; j < cols; ++j) op[j] = static_cast<uint8_t>(res[i][j]);
    }
  }
}

// A tile's epilogue: requantized to bytes (QGemm) ...
struct RequantStore {
  const QGemmRequant& rq;
  int64_t channel0;
  uint8_t* out;
  int64_t out_stride;
  inline __attribute__((always_inline)) void operator()(
      const V8i (&c)[kQGemmMr][2], int64_t row0, int64_t nrows, int64_t n0,
      int cols) const {
    StoreTile(c, rq, channel0 + n0, nrows, cols, out + row0 * out_stride + n0,
              out_stride);
  }
};

// ... or the int32 sums as they are (QGemmSums).
struct SumStore {
  int32_t* out;
  int64_t out_stride;
  inline __attribute__((always_inline)) void operator()(
      const V8i (&c)[kQGemmMr][2], int64_t row0, int64_t nrows, int64_t n0,
      int cols) const {
    for (int64_t i = 0; i < nrows; ++i) {
      int32_t* op = out + (row0 + i) * out_stride + n0;
      if (cols == kQGemmNr) {
        std::memcpy(op, &c[i][0], sizeof(c[i]));
      } else {
        int32_t res[kQGemmNr];
        std::memcpy(res, &c[i][0], sizeof(res));
        std::memcpy(op, res, cols * sizeof(int32_t));
      }
    }
  }
};

// a's rows for the tile at row0; rows past the end repeat the last row
// (their sums are not stored).
inline void TileRows(const int16_t* a, int64_t kp, int64_t row0, int64_t nrows,
                     const int16_t* (&ap)[kQGemmMr]) {
  for (int i = 0; i < kQGemmMr; ++i) {
    ap[i] = a + (row0 + std::min<int64_t>(i, nrows - 1)) * kp;
  }
}

// The baseline: each int32 lane of a packed pair vector holds the column's
// values for reduction steps 2q (low half) and 2q + 1 (high half).
template <typename Store>
void QGemmGeneric(const int16_t* a, int64_t rows, int64_t k,
                  const int16_t* packed, int64_t n, int64_t p0, int64_t p1,
                  const Store& store) {
  const int64_t kp = QGemmPaddedK(k);
  for (int64_t p = p0; p < p1; ++p) {
    const int16_t* bp = packed + p * kQGemmNr * kp;
    const int64_t n0 = p * kQGemmNr;
    const int cols = static_cast<int>(std::min<int64_t>(kQGemmNr, n - n0));
    for (int64_t row0 = 0; row0 < rows; row0 += kQGemmMr) {
      const int64_t nrows = std::min<int64_t>(kQGemmMr, rows - row0);
      const int16_t* ap[kQGemmMr];
      TileRows(a, kp, row0, nrows, ap);
      V8i c[kQGemmMr][2] = {};
      for (int64_t q = 0; q < kp / 2; ++q) {
        V8i w[2];
        std::memcpy(w, bp + q * 2 * kQGemmNr, sizeof(w));
        const V8i lo0 = (w[0] << 16) >> 16, hi0 = w[0] >> 16;
        const V8i lo1 = (w[1] << 16) >> 16, hi1 = w[1] >> 16;
        for (int i = 0; i < kQGemmMr; ++i) {
          const int32_t x0 = ap[i][2 * q], x1 = ap[i][2 * q + 1];
          c[i][0] += lo0 * x0 + hi0 * x1;
          c[i][1] += lo1 * x0 + hi1 * x1;
        }
      }
      store(c, row0, nrows, n0, cols);
    }
  }
}

#if GRAFT_QGEMM_AVX2
// A tile's epilogue from the AVX2 kernel: any Store through its V8i form...
template <int MR, typename Store>
__attribute__((target("avx2"), always_inline)) inline void StoreAvx2(
    const Store& store, const __m256i (&c)[MR][2], int64_t row0, int64_t n0,
    int cols) {
  V8i cv[kQGemmMr][2] = {};
  std::memcpy(cv, c, sizeof(c));
  store(cv, row0, MR, n0, cols);
}

// ... but requantization to bytes in AVX2, for the MR real rows only.
template <int MR>
__attribute__((target("avx2"), always_inline)) inline void StoreAvx2(
    const RequantStore& store, const __m256i (&c)[MR][2], int64_t row0,
    int64_t n0, int cols) {
  if (store.rq.single_rounding) {
    StoreAvx2<MR, RequantStore>(store, c, row0, n0, cols);
    return;
  }
  const int64_t channel = store.channel0 + n0;
  for (int i = 0; i < MR; ++i) {
    StoreBytesAvx2(RequantizeAvx2(store.rq, c[i][0], channel),
                   RequantizeAvx2(store.rq, c[i][1], channel + 8), cols,
                   store.out + (row0 + i) * store.out_stride + n0);
  }
}

// vpmaddwd: one instruction multiplies 16 int16 pairs and adds each pair.
// One tile of MR rows (MR < kQGemmMr for a last, short row block: a
// one-row FULLY_CONNECTED computes one row, not six).
template <int MR, typename Store>
__attribute__((target("avx2"), always_inline)) inline void TileAvx2(
    const int16_t* a, int64_t kp, int64_t row0, const int16_t* bp, int64_t n0,
    int cols, const Store& store) {
  const int16_t* ap[MR];
  for (int i = 0; i < MR; ++i) ap[i] = a + (row0 + i) * kp;
  __m256i c[MR][2];
  for (int i = 0; i < MR; ++i) {
    c[i][0] = _mm256_setzero_si256();
    c[i][1] = _mm256_setzero_si256();
  }
  for (int64_t q = 0; q < kp / 2; ++q) {
    const __m256i b0 = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(bp + q * 2 * kQGemmNr));
    const __m256i b1 = _mm256_loadu_si256(
        reinterpret_cast<const __m256i*>(bp + q * 2 * kQGemmNr + 16));
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t pair;
      std::memcpy(&pair, ap[i] + 2 * q, sizeof(pair));
      const __m256i x = _mm256_set1_epi32(pair);
      c[i][0] = _mm256_add_epi32(c[i][0], _mm256_madd_epi16(b0, x));
      c[i][1] = _mm256_add_epi32(c[i][1], _mm256_madd_epi16(b1, x));
    }
  }
  StoreAvx2<MR>(store, c, row0, n0, cols);
}

template <typename Store>
__attribute__((target("avx2"))) void QGemmAvx2(
    const int16_t* a, int64_t rows, int64_t k, const int16_t* packed, int64_t n,
    int64_t p0, int64_t p1, const Store& store) {
  static_assert(kQGemmMr == 6, "the row-count switch below lists 1 to 6");
  const int64_t kp = QGemmPaddedK(k);
  for (int64_t p = p0; p < p1; ++p) {
    const int16_t* bp = packed + p * kQGemmNr * kp;
    const int64_t n0 = p * kQGemmNr;
    const int cols = static_cast<int>(std::min<int64_t>(kQGemmNr, n - n0));
    for (int64_t row0 = 0; row0 < rows; row0 += kQGemmMr) {
      switch (std::min<int64_t>(kQGemmMr, rows - row0)) {
        case 1: TileAvx2<1>(a, kp, row0, bp, n0, cols, store); break;
        case 2: TileAvx2<2>(a, kp, row0, bp, n0, cols, store); break;
        case 3: TileAvx2<3>(a, kp, row0, bp, n0, cols, store); break;
        case 4: TileAvx2<4>(a, kp, row0, bp, n0, cols, store); break;
        case 5: TileAvx2<5>(a, kp, row0, bp, n0, cols, store); break;
        default: TileAvx2<6>(a, kp, row0, bp, n0, cols, store); break;
      }
    }
  }
}
#endif

template <typename Store>
using QGemmFn = void (*)(const int16_t*, int64_t, int64_t, const int16_t*,
                         int64_t, int64_t, int64_t, const Store&);

CallCounter g_calls[3];

}  // namespace

void CountQGemmCall(CpuIsa path) {
  g_calls[static_cast<int>(path)].fetch_add(1, std::memory_order_relaxed);
}

namespace {

// The kernel for KernelIsa(), asked at each call so that a test's cap
// applies at once (one relaxed load); counted.
template <typename Store>
QGemmFn<Store> PickQGemm() {
#if GRAFT_QGEMM_AVX2
  if (KernelIsaAtLeast(CpuIsa::kAvx2)) {
    CountQGemmCall(CpuIsa::kAvx2);
    return QGemmAvx2<Store>;
  }
#endif
  CountQGemmCall(CpuIsa::kBaseline);
  return QGemmGeneric<Store>;
}

template <typename S, typename VS>
void WidenRows(const S* src, int64_t rows, int64_t k, int64_t src_stride,
               int32_t off, int16_t* dst) {
  const int64_t kp = QGemmPaddedK(k);
  for (int64_t r = 0; r < rows; ++r) {
    WidenWithOffsetInline<S, VS>(src + r * src_stride, k, off, dst + r * kp);
    if (kp != k) dst[r * kp + k] = 0;
  }
}

}  // namespace

int64_t QGemmCallsForTesting(CpuIsa path) {
  return g_calls[static_cast<int>(path)].load(std::memory_order_relaxed);
}

// b's value for column j of a panel and reduction step kk.
inline int64_t PackedIndex(int64_t kk, int j) {
  return (kk / 2 * kQGemmNr + j) * 2 + kk % 2;
}

template <typename W>
void QGemmPackRows(const W* w, int64_t n, int64_t k, int64_t row_stride,
                   int32_t w_offset, int16_t* dst) {
  const int64_t panels = QGemmPanels(n), kp = QGemmPaddedK(k);
  std::fill(dst, dst + panels * kQGemmNr * kp, int16_t{0});
  for (int64_t p = 0; p < panels; ++p) {
    int16_t* panel = dst + p * kQGemmNr * kp;
    const int cols =
        static_cast<int>(std::min<int64_t>(kQGemmNr, n - p * kQGemmNr));
    for (int j = 0; j < cols; ++j) {
      const W* row = w + (p * kQGemmNr + j) * row_stride;
      for (int64_t kk = 0; kk < k; ++kk) {
        panel[PackedIndex(kk, j)] = static_cast<int16_t>(row[kk] + w_offset);
      }
    }
  }
}

template <typename W>
void QGemmPackStrided(const W* w, int64_t n, int64_t k, int64_t stride_k,
                      int64_t stride_n, int32_t w_offset, int16_t* dst) {
  const int64_t panels = QGemmPanels(n), kp = QGemmPaddedK(k);
  std::fill(dst, dst + panels * kQGemmNr * kp, int16_t{0});
  for (int64_t p = 0; p < panels; ++p) {
    int16_t* panel = dst + p * kQGemmNr * kp;
    const int cols =
        static_cast<int>(std::min<int64_t>(kQGemmNr, n - p * kQGemmNr));
    for (int64_t kk = 0; kk < k; ++kk) {
      const W* src = w + kk * stride_k + p * kQGemmNr * stride_n;
      for (int j = 0; j < cols; ++j) {
        panel[PackedIndex(kk, j)] =
            static_cast<int16_t>(src[j * stride_n] + w_offset);
      }
    }
  }
}

template void QGemmPackRows<int8_t>(const int8_t*, int64_t, int64_t, int64_t,
                                    int32_t, int16_t*);
template void QGemmPackRows<uint8_t>(const uint8_t*, int64_t, int64_t, int64_t,
                                     int32_t, int16_t*);
template void QGemmPackStrided<int8_t>(const int8_t*, int64_t, int64_t, int64_t,
                                       int64_t, int32_t, int16_t*);

void QGemmPrepareRequant(const std::vector<QuantizedMultiplier>& mult,
                         const std::vector<int64_t>& bias, bool single_rounding,
                         int32_t output_offset, int32_t act_min,
                         int32_t act_max, QGemmRequant* rq) {
  const size_t channels = mult.size();
  const size_t n = channels + kQGemmNr;
  rq->single_rounding = single_rounding;
  rq->output_offset = output_offset;
  rq->act_min = act_min, rq->act_max = act_max;
  rq->bias.assign(n, 0), rq->mult.assign(n, 0);
  rq->lshift.assign(n, 0), rq->mask.assign(n, 0);
  // Padding lanes must shift by a valid amount (their values are unused).
  rq->rshift.assign(n, single_rounding ? 31 : 0);
  for (size_t c = 0; c < channels; ++c) {
    const int shift = mult[c].shift;
    rq->bias[c] = static_cast<int32_t>(bias[c]);
    rq->mult[c] = mult[c].multiplier;
    if (single_rounding) {
      rq->rshift[c] = 31 - shift;
    } else {
      rq->lshift[c] = shift > 0 ? shift : 0;
      rq->rshift[c] = shift > 0 ? 0 : -shift;
      rq->mask[c] = static_cast<int32_t>((int64_t{1} << rq->rshift[c]) - 1);
    }
  }
  // RequantDoubleFastAvx512's conditions (quantized_gemm.h).
  rq->fast_double = !single_rounding && output_offset >= -255 &&
                    output_offset <= 255 && act_min >= -128 && act_max <= 127;
  for (size_t c = 0; c < channels; ++c) {
    if (mult[c].shift > -1 || mult[c].shift < -22) rq->fast_double = false;
  }
}

GRAFT_QGEMM_TARGET_CLONES
void QGemmWidenRows(const int8_t* src, int64_t rows, int64_t k,
                    int64_t src_stride, int32_t off, int16_t* dst) {
  WidenRows<int8_t, V16b>(src, rows, k, src_stride, off, dst);
}
GRAFT_QGEMM_TARGET_CLONES
void QGemmWidenRows(const uint8_t* src, int64_t rows, int64_t k,
                    int64_t src_stride, int32_t off, int16_t* dst) {
  WidenRows<uint8_t, V16ub>(src, rows, k, src_stride, off, dst);
}

template <typename T>
void QGemm(const int16_t* a, int64_t rows, int64_t k, const int16_t* packed,
           int64_t n, int64_t p0, int64_t p1, const QGemmRequant& rq,
           int64_t channel0, T* out, int64_t out_stride) {
  static_assert(sizeof(T) == 1, "8-bit outputs only");
  PickQGemm<RequantStore>()(a, rows, k, packed, n, p0, p1,
       RequantStore{rq, channel0, reinterpret_cast<uint8_t*>(out), out_stride});
}

void QGemmSums(const int16_t* a, int64_t rows, int64_t k,
               const int16_t* packed, int64_t n, int64_t p0, int64_t p1,
               int32_t* out, int64_t out_stride) {
  PickQGemm<SumStore>()(a, rows, k, packed, n, p0, p1, SumStore{out, out_stride});
}

template void QGemm<int8_t>(const int16_t*, int64_t, int64_t, const int16_t*,
                            int64_t, int64_t, int64_t, const QGemmRequant&,
                            int64_t, int8_t*, int64_t);
template void QGemm<uint8_t>(const int16_t*, int64_t, int64_t, const int16_t*,
                             int64_t, int64_t, int64_t, const QGemmRequant&,
                             int64_t, uint8_t*, int64_t);

}  // namespace graft::kernels
