// The hybrid kernels' row quantizers and TFLite-quirked dot product
// (hybrid_util.h): their AVX-512 code against their scalar code, bit for
// bit, over drawn rows (every length up to a few vectors, so every tail),
// with NaNs, infinities, signed zeros, values at the rounding ties and
// weights of -128. The scalar code is what the kernel tests compare with
// TFLite's arithmetic.
#include "dispatch/kernels/hybrid_util.h"

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "dispatch/kernels/cpu_features.h"
#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using kernels::CpuIsa;
using testing::RandomInt;

using testing::IsaCap;

bool HasAvx512() {
  return kernels::DetectedCpuIsa() == CpuIsa::kAvx512Vnni;
}

// A row of k floats: mostly uniform in a drawn range, with specials mixed
// in by `kind`.
std::vector<float> DrawRow(std::mt19937& rng, int64_t k, int kind) {
  const float lo = -3.0f + RandomInt(rng, 0, 4), hi = lo + 0.1f * RandomInt(rng, 1, 40);
  std::vector<float> x = testing::RandomFloats(rng, k, lo, hi);
  for (float& v : x) {
    const int r = RandomInt(rng, 0, 99);
    if (kind == 1 && r < 5) v = -0.0f;
    if (kind == 1 && r >= 5 && r < 10) v = 0.0f;
    if (kind == 2 && r < 3) v = std::numeric_limits<float>::quiet_NaN();
    if (kind == 3 && r < 2) v = std::numeric_limits<float>::infinity();
    if (kind == 3 && r >= 2 && r < 4) v = -std::numeric_limits<float>::infinity();
    if (kind == 4) v = std::round(v * 8) / 8;  // ties at the rounding
    if (kind == 5) v = 0.0f;
  }
  if (kind == 6) {  // x * inv lands next to .5: 0.49999997 and friends
    for (int64_t i = 0; i < k; ++i) {
      x[i] = (i % 3 == 0) ? 127.0f : std::nextafter(0.5f, 0.0f) * (i % 2 ? 1 : -1);
    }
  }
  if (kind == 7 && k > 0) x[0] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

struct Quantized {
  std::vector<int16_t> q;
  std::vector<uint8_t> u;
  float scale = 0;
  int32_t zp = 0;
};

Quantized Quantize(const std::vector<float>& x, bool asymmetric) {
  Quantized r;
  const int64_t k = static_cast<int64_t>(x.size());
  r.q.assign(k, 0);
  r.u.assign(k, 0);
  float scale_u = 0;
  int32_t zp_u = 0;
  if (asymmetric) {
    kernels::AsymmetricQuantizeRow(x.data(), k, r.q.data(), &r.scale, &r.zp);
    kernels::AsymmetricQuantizeRowU8(x.data(), k, r.u.data(), &scale_u, &zp_u);
  } else {
    kernels::SymmetricQuantizeRow(x.data(), k, r.q.data(), &r.scale);
    kernels::SymmetricQuantizeRowU8(x.data(), k, r.u.data(), &scale_u);
  }
  // The unsigned form is the signed one plus 128, same scale.
  EXPECT_EQ(std::memcmp(&scale_u, &r.scale, sizeof(float)), 0);
  EXPECT_EQ(zp_u, r.zp);
  for (int64_t i = 0; i < k; ++i) EXPECT_EQ(r.u[i], r.q[i] + 128) << i;
  return r;
}

TEST(HybridUtilTest, VectorQuantizersMatchScalar) {
  if (!HasAvx512()) GTEST_SKIP() << "no AVX-512 VNNI on this machine";
  std::mt19937 rng = testing::SeededRng();
  const int64_t calls0 = kernels::HybridVectorQuantizeCallsForTesting();
  for (int iter = 0; iter < 600; ++iter) {
    const int64_t k = iter < 80 ? iter + 1 : RandomInt(rng, 1, 300);
    const int kind = iter % 8;
    const bool asymmetric = (iter / 8) % 2 == 0;
    const std::vector<float> x = DrawRow(rng, k, kind);
    Quantized scalar, vector;
    {
      IsaCap cap(CpuIsa::kBaseline);
      scalar = Quantize(x, asymmetric);
    }
    {
      IsaCap cap(CpuIsa::kAvx512Vnni);
      vector = Quantize(x, asymmetric);
    }
    ASSERT_EQ(std::memcmp(&scalar.scale, &vector.scale, sizeof(float)), 0)
        << "iteration " << iter << " k " << k;
    ASSERT_EQ(scalar.zp, vector.zp) << "iteration " << iter;
    ASSERT_EQ(scalar.q, vector.q) << "iteration " << iter << " k " << k
                                  << " kind " << kind;
  }
  EXPECT_GT(kernels::HybridVectorQuantizeCallsForTesting(), calls0);
}

TEST(HybridUtilTest, VectorDotMatchesScalar) {
  if (!HasAvx512()) GTEST_SKIP() << "no AVX-512 VNNI on this machine";
  std::mt19937 rng = testing::SeededRng(1);
  const int64_t calls0 = kernels::HybridVectorDotCallsForTesting();
  for (int iter = 0; iter < 2000; ++iter) {
    const int64_t k = iter < 100 ? iter + 1 : RandomInt(rng, 1, 400);
    std::vector<int16_t> a(k), b(k);
    const int minus128 = iter % 3 == 0 ? 0 : RandomInt(rng, 1, 50);
    for (int64_t i = 0; i < k; ++i) {
      a[i] = static_cast<int16_t>(RandomInt(rng, -128, 127));
      b[i] = static_cast<int16_t>(RandomInt(rng, 0, 99) < minus128
                                      ? -128
                                      : RandomInt(rng, -128, 127));
    }
    int32_t scalar, vector;
    {
      IsaCap cap(CpuIsa::kBaseline);
      scalar = kernels::HybridDot(a.data(), b.data(), k);
    }
    {
      IsaCap cap(CpuIsa::kAvx512Vnni);
      vector = kernels::HybridDot(a.data(), b.data(), k);
    }
    ASSERT_EQ(scalar, vector) << "iteration " << iter << " k " << k;
    // HybridDotRows: b as n rows of k / n (whole), each against a.
    const int64_t n = (iter % 4) + 1, kr = k / n;
    if (kr == 0) continue;
    std::vector<int32_t> rows_scalar(n), rows_vector(n);
    {
      IsaCap cap(CpuIsa::kBaseline);
      kernels::HybridDotRows(a.data(), b.data(), n, kr, rows_scalar.data());
    }
    {
      IsaCap cap(CpuIsa::kAvx512Vnni);
      kernels::HybridDotRows(a.data(), b.data(), n, kr, rows_vector.data());
    }
    for (int64_t j = 0; j < n; ++j) {
      ASSERT_EQ(rows_scalar[j],
                kernels::HybridDot(a.data(), b.data() + j * kr, kr));
    }
    ASSERT_EQ(rows_scalar, rows_vector) << "iteration " << iter;
  }
  EXPECT_GT(kernels::HybridVectorDotCallsForTesting(), calls0);
}

// The quirk itself, on the vector path: a weight of -128 times a negative
// input in a whole block of 16 counts as +128; in the tail it is exact.
TEST(HybridUtilTest, VectorDotKeepsTheMinus128Quirk) {
  IsaCap cap(CpuIsa::kAvx512Vnni);
  std::vector<int16_t> a(17, 0), b(17, 0);
  a[3] = -2, b[3] = -128;    // in the block: -2 * 128
  a[16] = -1, b[16] = -128;  // in the tail: -1 * -128
  EXPECT_EQ(kernels::HybridDot(a.data(), b.data(), 17), -256 + 128);
}

// The LSTM's Eigen activations: vector against scalar, bitwise, over wide
// ranges, the clamps' and cut-offs' edges, NaN, infinities and subnormals.
TEST(HybridUtilTest, VectorActivationsMatchScalar) {
  if (!HasAvx512()) GTEST_SKIP() << "no AVX-512 VNNI on this machine";
  std::mt19937 rng = testing::SeededRng(2);
  const int64_t calls0 = kernels::HybridVectorActivationCallsForTesting();
  std::vector<float> x;
  for (float v : {0.0f, -0.0f, 1e-40f, -1e-40f, -104.0f,
                  std::nextafter(-104.0f, 0.0f), std::nextafter(-104.0f, -200.0f),
                  16.6355324f, 7.90738964f, -7.90738964f, 1e30f, -1e30f,
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(),
                  -std::numeric_limits<float>::quiet_NaN()}) {
    x.push_back(v);
  }
  for (float range : {1.0f, 10.0f, 120.0f}) {
    for (float v : testing::RandomFloats(rng, 20000, -range, range)) {
      x.push_back(v);
    }
  }
  for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{17},
                    static_cast<int64_t>(x.size())}) {
    std::vector<float> tanh_s(n), tanh_v(n), sig_s(x.begin(), x.begin() + n),
        sig_v(x.begin(), x.begin() + n);
    {
      IsaCap cap(CpuIsa::kBaseline);
      kernels::EigenTanhVector(x.data(), tanh_s.data(), n);
      kernels::EigenLogisticPacketVector(sig_s.data(), n);
    }
    {
      IsaCap cap(CpuIsa::kAvx512Vnni);
      kernels::EigenTanhVector(x.data(), tanh_v.data(), n);
      kernels::EigenLogisticPacketVector(sig_v.data(), n);
    }
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(std::memcmp(&tanh_s[i], &tanh_v[i], 4), 0)
          << "tanh(" << x[i] << "): " << tanh_s[i] << " vs " << tanh_v[i];
      ASSERT_EQ(std::memcmp(&sig_s[i], &sig_v[i], 4), 0)
          << "logistic(" << x[i] << "): " << sig_s[i] << " vs " << sig_v[i];
      ASSERT_EQ(std::memcmp(&tanh_s[i], &tanh_s[i], 4), 0);
    }
    for (int64_t i = 0; i < n; ++i) {
      const float t = kernels::EigenTanh(x[i]);
      const float l = kernels::EigenLogisticPacket(x[i]);
      ASSERT_EQ(std::memcmp(&t, &tanh_s[i], 4), 0);
      ASSERT_EQ(std::memcmp(&l, &sig_s[i], 4), 0);
    }
  }
  EXPECT_GT(kernels::HybridVectorActivationCallsForTesting(), calls0);
}

}  // namespace
}  // namespace graft
