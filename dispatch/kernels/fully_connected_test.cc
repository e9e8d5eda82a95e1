// FULLY_CONNECTED and BATCH_MATMUL against naive reference loops: sizes
// around the GEMM tile edges, keep_num_dims, bias, activations, computed
// weights, adj_x/adj_y, batch broadcasting, threads.
#include <algorithm>

#include "dispatch/kernels/kernel_test_util.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;

TEST(FullyConnectedTest, MatchesReference) {
  std::mt19937 rng = testing::SeededRng();
  for (int iter = 0; iter < 40; ++iter) {
    const int batch = RandomInt(rng, 1, 3), rows = RandomInt(rng, 1, 20);
    const int k = RandomInt(rng, 1, 70), n = RandomInt(rng, 1, 40);
    const bool keep = iter % 2, has_bias = iter % 3 != 0, const_w = iter % 4 != 1;
    const auto act = iter % 5 == 0 ? tfl::ActivationFunctionType_RELU
                                   : tfl::ActivationFunctionType_NONE;
    auto in = testing::RandomFloats(rng, int64_t(batch) * rows * k);
    auto w = testing::RandomFloats(rng, int64_t(n) * k);
    auto b = testing::RandomFloats(rng, n);
    const int m = batch * rows;
    std::vector<float> want(size_t(m) * n);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = has_bias ? b[j] : 0;
        for (int kk = 0; kk < k; ++kk) acc += in[size_t(i) * k + kk] * w[size_t(j) * k + kk];
        want[size_t(i) * n + j] = act == tfl::ActivationFunctionType_RELU
                                      ? std::max(float(acc), 0.f) : float(acc);
      }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId x = g.Input("x", F32, {batch, rows, k});
    TensorId tw = const_w ? g.Constant<float>("w", {n, k}, w) : g.Input("w", F32, {n, k});
    TensorId tb = has_bias ? g.Constant<float>("b", {n}, b) : kNoTensor;
    tfl::FullyConnectedOptionsT o;
    o.keep_num_dims = keep, o.fused_activation_function = act;
    std::vector<int32_t> out_shape = keep ? std::vector<int32_t>{batch, rows, n}
                                          : std::vector<int32_t>{m, n};
    g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, tw, tb).Options(o).Out(
        "y", F32, out_shape));
    auto rt = testing::LoadBuilt(mb, RandomInt(rng, 1, 3));
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, in);
    if (!const_w) testing::SetInput(**rt, 1, w);
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), out_shape);
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want, k,
                        absl::StrCat("iteration ", iter));
  }
}

TEST(BatchMatMulTest, MatchesReferenceWithAdjointsAndBroadcast) {
  std::mt19937 rng = testing::SeededRng(1);
  for (int iter = 0; iter < 40; ++iter) {
    const int m = RandomInt(rng, 1, 15), k = RandomInt(rng, 1, 30), n = RandomInt(rng, 1, 20);
    const bool adj_x = RandomInt(rng, 0, 1), adj_y = RandomInt(rng, 0, 1);
    const bool const_rhs = iter % 3 == 0;
    // Batch dims: lhs [b0, b1], rhs [b0 or 1, b1] or fewer dims.
    const int b0 = RandomInt(rng, 1, 3), b1 = RandomInt(rng, 1, 3);
    std::vector<int32_t> lb = {b0, b1}, rb = {RandomInt(rng, 0, 1) ? b0 : 1, b1};
    if (iter % 4 == 3) rb = {b1};
    std::vector<int32_t> lshape = lb, rshape = rb;
    lshape.push_back(adj_x ? k : m), lshape.push_back(adj_x ? m : k);
    rshape.push_back(adj_y ? n : k), rshape.push_back(adj_y ? k : n);
    int64_t lcount = int64_t(b0) * b1 * m * k, rcount = k * n;
    for (int32_t d : rb) rcount *= d;
    auto lhs = testing::RandomFloats(rng, lcount), rhs = testing::RandomFloats(rng, rcount);
    std::vector<float> want(size_t(b0) * b1 * m * n);
    for (int i0 = 0; i0 < b0; ++i0)
      for (int i1 = 0; i1 < b1; ++i1) {
        const float* a = lhs.data() + (size_t(i0) * b1 + i1) * m * k;
        size_t rb_index = rb.size() == 1 ? i1 : (size_t(rb[0] == 1 ? 0 : i0) * b1 + i1);
        const float* bm = rhs.data() + rb_index * k * n;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            double acc = 0;
            for (int kk = 0; kk < k; ++kk)
              acc += (adj_x ? a[size_t(kk) * m + i] : a[size_t(i) * k + kk]) *
                     (adj_y ? bm[size_t(j) * k + kk] : bm[size_t(kk) * n + j]);
            want[((size_t(i0) * b1 + i1) * m + i) * n + j] = float(acc);
          }
      }
    ModelBuilder mb;
    auto& g = mb.Subgraph("main");
    TensorId a = g.Input("a", F32, lshape);
    TensorId b = const_rhs ? g.Constant<float>("b", rshape, rhs) : g.Input("b", F32, rshape);
    tfl::BatchMatMulOptionsT o;
    o.adj_x = adj_x, o.adj_y = adj_y;
    g.Output(g.Op(tfl::BuiltinOperator_BATCH_MATMUL).In(a, b).Options(o).Out(
        "y", F32, {b0, b1, m, n}));
    auto rt = testing::LoadBuilt(mb, RandomInt(rng, 1, 3));
    ASSERT_TRUE(rt.ok()) << rt.status();
    testing::SetInput(**rt, 0, lhs);
    if (!const_rhs) testing::SetInput(**rt, 1, rhs);
    ASSERT_TRUE((*rt)->Invoke().ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), (std::vector<int32_t>{b0, b1, m, n}));
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want, k,
                        absl::StrCat("iteration ", iter));
  }
}

TEST(FullyConnectedTest, RefusesFloatInputWithInt8Weights) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", F32, {1, 2});
  TensorId w = g.Constant<int8_t>("w", {1, 2}, {1, 2});
  g.Output(g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, w).Out("y", F32, {1, 1}));
  auto rt = testing::LoadBuilt(mb);
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("FLOAT32 input with INT8 weights"),
            absl::string_view::npos) << rt.status();
}

}  // namespace
}  // namespace graft
