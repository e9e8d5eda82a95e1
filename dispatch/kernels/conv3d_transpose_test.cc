// CONV_3D_TRANSPOSE (conv3d.cc): a hand-checked case, TFLite's reference
// scatter loop over random shapes and options, an output shape computed at
// invoke, and the models TFLite refuses.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dispatch/kernels/kernel_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using testing::RandomInt;
constexpr auto F32 = tfl::TensorType_FLOAT32;
constexpr auto I32 = tfl::TensorType_INT32;

struct Config {
  std::vector<int32_t> in;      // [N, D, H, W, Cin]
  std::vector<int32_t> filter;  // [KD, KH, KW, Cout, Cin]
  std::vector<int32_t> out;     // [N, D, H, W, Cout]
  tfl::Padding padding = tfl::Padding_VALID;
  int stride[3] = {1, 1, 1};
  int dil[3] = {1, 1, 1};
  bool bias = false;
  tfl::ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
};

// The input extent CONV_3D gives for output extent `out` (TFLite's
// ComputeOutSize), and the padding before the first element.
int ForwardSize(tfl::Padding p, int out, int k, int stride, int dil) {
  const int eff = (k - 1) * dil + 1;
  return p == tfl::Padding_SAME ? (out + stride - 1) / stride
                                : (out + stride - eff) / stride;
}
int PadBefore(int out, int in, int k, int stride, int dil) {
  const int eff = (k - 1) * dil + 1;
  return std::max(0, (in - 1) * stride + eff - out) / 2;
}

// TFLite's reference_ops::Conv3DTranspose: every input element scattered
// into the outputs it touches, then bias and the activation.
std::vector<float> Reference(const Config& c, const std::vector<float>& x,
                             const std::vector<float>& f,
                             const std::vector<float>& bias) {
  const int n = c.in[0], ic = c.in[4], oc = c.out[4];
  const int id[3] = {c.in[1], c.in[2], c.in[3]};
  const int od[3] = {c.out[1], c.out[2], c.out[3]};
  const int k[3] = {c.filter[0], c.filter[1], c.filter[2]};
  int pad[3];
  for (int a = 0; a < 3; ++a) {
    pad[a] = PadBefore(od[a], id[a], k[a], c.stride[a], c.dil[a]);
  }
  std::vector<float> y(NumElements(Shape(c.out.begin(), c.out.end())), 0.0f);
  for (int b = 0; b < n; ++b)
    for (int z = 0; z < id[0]; ++z)
      for (int yy = 0; yy < id[1]; ++yy)
        for (int xx = 0; xx < id[2]; ++xx)
          for (int i = 0; i < ic; ++i)
            for (int kz = 0; kz < k[0]; ++kz)
              for (int ky = 0; ky < k[1]; ++ky)
                for (int kx = 0; kx < k[2]; ++kx)
                  for (int o = 0; o < oc; ++o) {
                    const int pz = z * c.stride[0] - pad[0] + kz * c.dil[0];
                    const int py = yy * c.stride[1] - pad[1] + ky * c.dil[1];
                    const int px = xx * c.stride[2] - pad[2] + kx * c.dil[2];
                    if (pz < 0 || pz >= od[0] || py < 0 || py >= od[1] ||
                        px < 0 || px >= od[2]) {
                      continue;
                    }
                    const float xv =
                        x[(((b * id[0] + z) * id[1] + yy) * id[2] + xx) * ic +
                          i];
                    const float fv =
                        f[(((kz * k[1] + ky) * k[2] + kx) * oc + o) * ic + i];
                    y[(((b * od[0] + pz) * od[1] + py) * od[2] + px) * oc +
                      o] += xv * fv;
                  }
  float lo = -1e38f, hi = 1e38f;
  if (c.act == tfl::ActivationFunctionType_RELU) lo = 0;
  if (c.act == tfl::ActivationFunctionType_RELU6) lo = 0, hi = 6;
  if (c.act == tfl::ActivationFunctionType_RELU_N1_TO_1) lo = -1, hi = 1;
  for (size_t i = 0; i < y.size(); ++i) {
    const float v = bias.empty() ? y[i] : y[i] + bias[i % oc];
    y[i] = std::min(std::max(v, lo), hi);
  }
  return y;
}

tfl::Conv3DOptionsT Options(const Config& c) {
  tfl::Conv3DOptionsT o;
  o.padding = c.padding;
  o.stride_d = c.stride[0], o.stride_h = c.stride[1], o.stride_w = c.stride[2];
  o.dilation_d_factor = c.dil[0], o.dilation_h_factor = c.dil[1];
  o.dilation_w_factor = c.dil[2];
  o.fused_activation_function = c.act;
  return o;
}

// Builds the op with the input as model input 0; the output shape and the
// filter are constants unless `*_as_input` (then the next model inputs).
absl::StatusOr<std::unique_ptr<Runtime>> Load(
    const Config& c, const std::vector<float>& filter,
    const std::vector<float>& bias, bool shape_as_input, bool filter_as_input,
    int threads = 1, tfl::TensorType shape_type = I32,
    tfl::TensorType in_type = F32) {
  ModelBuilder mb;
  auto& g = mb.Subgraph("main");
  TensorId x = g.Input("x", in_type, c.in);
  TensorId shape;
  if (shape_as_input) {
    shape = g.Input("shape", shape_type, {5});
  } else if (shape_type == I32) {
    shape = g.Constant<int32_t>("shape", {5}, c.out);
  } else {
    shape = g.Constant<int64_t>(
        "shape", {5}, std::vector<int64_t>(c.out.begin(), c.out.end()));
  }
  TensorId f = filter_as_input ? g.Input("f", F32, c.filter)
                               : g.Constant<float>("f", c.filter, filter);
  auto b = g.Op(tfl::BuiltinOperator_CONV_3D_TRANSPOSE);
  if (c.bias) {
    b.In(shape, f, x,
         g.Constant<float>("b", {static_cast<int32_t>(bias.size())}, bias));
  } else {
    b.In(shape, f, x);
  }
  std::vector<int32_t> out = c.out;
  if (shape_as_input) out = {-1, -1, -1, -1, -1};
  g.Output(b.Options(Options(c)).Out("y", in_type, out));
  RuntimeOptions opts;
  opts.num_threads = threads;
  return Runtime::LoadModel(std::move(mb).BuildUnverified(), opts);
}

// Runs a loaded model: input, then the optional shape and filter inputs.
absl::Status RunOp(Runtime& rt, const Config& c, const std::vector<float>& x,
                   const std::vector<float>& filter, bool shape_as_input,
                   bool filter_as_input) {
  testing::SetInput(rt, 0, x);
  size_t next = 1;
  if (shape_as_input) testing::SetInput(rt, next++, c.out);
  if (filter_as_input) testing::SetInput(rt, next++, filter);
  return rt.Invoke();
}

TEST(Conv3DTransposeTest, ScattersEachInputThroughTheFilter) {
  // W: input [1 2], filter [1 10]. Stride 1: [1, 1*10 + 2*1, 2*10].
  // Stride 2 into width 4: [1, 10, 2, 20]; into width 5 the last is 0.
  Config c;
  c.in = {1, 1, 1, 2, 1};
  c.filter = {1, 1, 2, 1, 1};
  for (auto [stride, width, want] :
       {std::tuple<int, int, std::vector<float>>{1, 3, {1, 12, 20}},
        {2, 4, {1, 10, 2, 20}},
        {2, 5, {1, 10, 2, 20, 0}}}) {
    c.stride[2] = stride;
    c.out = {1, 1, 1, width, 1};
    auto rt = Load(c, {1, 10}, {}, false, false);
    ASSERT_TRUE(rt.ok()) << rt.status();
    ASSERT_TRUE(RunOp(**rt, c, {1, 2}, {}, false, false).ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), c.out);
    EXPECT_EQ(testing::GetOutput<float>(**rt, 0), want);
  }
}

TEST(Conv3DTransposeTest, MatchesReferenceOverRandomShapes) {
  std::mt19937 rng = testing::SeededRng();
  const tfl::ActivationFunctionType acts[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  for (int iter = 0; iter < 40; ++iter) {
    Config c;
    c.padding = RandomInt(rng, 0, 1) ? tfl::Padding_SAME : tfl::Padding_VALID;
    const int n = RandomInt(rng, 1, 2), ic = RandomInt(rng, 1, 4),
              oc = RandomInt(rng, 1, 5);
    c.in = {n, 0, 0, 0, ic};
    c.out = {n, 0, 0, 0, oc};
    c.filter = {0, 0, 0, oc, ic};
    for (int a = 0; a < 3; ++a) {
      c.filter[a] = RandomInt(rng, 1, 3);
      c.stride[a] = RandomInt(rng, 1, 3);
      c.dil[a] = RandomInt(rng, 0, 3) == 0 ? 2 : 1;
      const int eff = (c.filter[a] - 1) * c.dil[a] + 1;
      c.out[a + 1] = RandomInt(rng, eff, eff + 6);
      c.in[a + 1] = ForwardSize(c.padding, c.out[a + 1], c.filter[a],
                                c.stride[a], c.dil[a]);
    }
    c.bias = RandomInt(rng, 0, 1);
    c.act = acts[RandomInt(rng, 0, 3)];
    const auto x = testing::RandomFloats(
        rng, NumElements(Shape(c.in.begin(), c.in.end())));
    const auto f = testing::RandomFloats(
        rng, NumElements(Shape(c.filter.begin(), c.filter.end())));
    const auto bias =
        c.bias ? testing::RandomFloats(rng, oc) : std::vector<float>{};
    const std::vector<float> want = Reference(c, x, f, bias);
    const int64_t terms = int64_t{c.filter[0]} * c.filter[1] * c.filter[2] * ic;
    // Constant filter and shape; the filter as an input; the shape as an
    // input (prepared at invoke); with threads.
    for (int variant = 0; variant < 4; ++variant) {
      const bool shape_in = variant == 2, filter_in = variant == 1;
      const int threads = variant == 3 ? 3 : 1;
      const std::string what =
          absl::StrCat("iteration ", iter, " variant ", variant, " in ",
                       ShapeToString(Shape(c.in.begin(), c.in.end())), " out ",
                       ShapeToString(Shape(c.out.begin(), c.out.end())));
      auto rt = Load(c, f, bias, shape_in, filter_in, threads);
      ASSERT_TRUE(rt.ok()) << what << ": " << rt.status();
      ASSERT_TRUE(RunOp(**rt, c, x, f, shape_in, filter_in).ok()) << what;
      EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), c.out) << what;
      testing::ExpectNear(testing::GetOutput<float>(**rt, 0), want, terms,
                          what);
    }
  }
}

TEST(Conv3DTransposeTest, OutputShapeComputedAtInvokeReshapesTheOutput) {
  // SAME, stride 2 in depth and width: output extents 3 and 4 both give
  // input extent 2.
  Config c;
  c.padding = tfl::Padding_SAME;
  c.stride[0] = 2, c.stride[2] = 2;
  c.in = {1, 2, 2, 2, 2};
  c.filter = {2, 2, 3, 2, 2};
  c.out = {1, 3, 2, 4, 2};
  std::mt19937 rng = testing::SeededRng(1);
  const auto x = testing::RandomFloats(rng, 16);
  const auto f = testing::RandomFloats(rng, 48);
  auto rt = Load(c, f, {}, /*shape_as_input=*/true, false);
  ASSERT_TRUE(rt.ok()) << rt.status();
  for (std::vector<int32_t> out : {std::vector<int32_t>{1, 3, 2, 4, 2},
                                   std::vector<int32_t>{1, 4, 2, 3, 2}}) {
    c.out = out;
    ASSERT_TRUE(RunOp(**rt, c, x, f, true, false).ok());
    EXPECT_EQ(testing::ToVec((*rt)->output(0)->shape), out);
    testing::ExpectNear(testing::GetOutput<float>(**rt, 0),
                        Reference(c, x, f, {}), 12);
  }
  // An output shape CONV_3D would not map back onto the input fails the
  // invoke, naming the dimension.
  c.out = {1, 5, 2, 4, 2};
  absl::Status st = RunOp(**rt, c, x, f, true, false);
  EXPECT_THAT(std::string(st.message()),
              ::testing::HasSubstr("output depth 5 gives input depth 3"));
}

TEST(Conv3DTransposeTest, RefusesInconsistentModels) {
  Config c;
  c.in = {1, 2, 2, 2, 3};
  c.filter = {2, 2, 2, 4, 3};
  c.out = {1, 3, 3, 3, 4};
  const std::vector<float> f(96, 0.5f);
  ASSERT_TRUE(Load(c, f, {}, false, false).ok());
  auto message = [&](const Config& bad) {
    auto rt = Load(bad, f, {}, false, false);
    return rt.ok() ? std::string("loaded") : std::string(rt.status().message());
  };
  Config wrong_w = c;
  wrong_w.out[3] = 4;
  EXPECT_THAT(message(wrong_w),
              ::testing::HasSubstr("output width 4 gives input width 3"));
  Config wrong_batch = c;
  wrong_batch.out[0] = 2;
  EXPECT_THAT(message(wrong_batch), ::testing::HasSubstr("batch 2"));
  Config wrong_c = c;
  wrong_c.out[4] = 8;  // TFLite takes multiples, then reads past the filter
  EXPECT_THAT(message(wrong_c), ::testing::HasSubstr("channels 8"));
  Config wrong_in_c = c;
  wrong_in_c.in[4] = 2;
  EXPECT_THAT(message(wrong_in_c), ::testing::HasSubstr("input channels"));
  auto i64 = Load(c, f, {}, false, false, 1, tfl::TensorType_INT64);
  EXPECT_THAT(std::string(i64.status().message()),
              ::testing::HasSubstr("output_shape must be INT32"));
  auto int8 = Load(c, f, {}, false, false, 1, I32, tfl::TensorType_INT8);
  EXPECT_TRUE(absl::IsUnimplemented(int8.status())) << int8.status();
}

}  // namespace
}  // namespace graft
