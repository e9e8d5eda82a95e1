// Op by op: one-op models of every lowering the xnnpack plugin has (and
// the options that change its parameters: padding, strides, dilation,
// broadcasting, resize modes, transposed-convolution padding), each taken
// whole by the plugin, run with the dispatch library, and compared with
// Graft's CPU kernels on seeded random inputs: float32 within
// dispatch/tolerance.h, int8 within kXnnpackInt8OpMaxLsb. The int8 ops
// with scale limits again over drawn quantization parameters, and the
// float window ops, TRANSPOSE_CONV, RESIZE_BILINEAR and binary broadcasts
// over drawn shapes: what the plugin takes must load in XNNPACK and match.
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/model_builder.h"
#include "core/model_io.h"
#include "dispatch/runtime.h"
#include "xnnpack_test_support.h"

namespace graft {
namespace {

using xnnpack_test::kXnnpackInt8OpMaxLsb;
using xnnpack_test::Outcome;
using xnnpack_test::RunModel;
using xnnpack_test::Seed;

constexpr tfl::TensorType F32 = tfl::TensorType_FLOAT32;
constexpr tfl::TensorType I8 = tfl::TensorType_INT8;

using Shape = std::vector<int32_t>;

int64_t Count(const Shape& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

// Seeded constants.
std::vector<float> RandomFloats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}
std::vector<int8_t> RandomInt8(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (int8_t& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

// One case: a name and the builder of its one-op (or few-op) model.
struct OpCase {
  std::string name;
  std::function<void(SubgraphBuilder&)> build;
};

// Float helpers: an input, a constant, an op with one output.
TensorId In(SubgraphBuilder& g, const Shape& shape) {
  return g.Input(
      "x" + std::to_string(shape.size()) + "_" + std::to_string(Count(shape)),
      F32, shape);
}
TensorId Const(SubgraphBuilder& g, const char* name, const Shape& shape,
               uint32_t seed = 7) {
  return g.Constant<float>(name, shape, RandomFloats(Count(shape), seed));
}

// int8 helpers: inputs in [-1, 1) (scale 1/128), weights per channel.
TensorId In8(SubgraphBuilder& g, const Shape& shape) {
  TensorId x = g.Input("q" + std::to_string(Count(shape)), I8, shape);
  g.Quantize(x, 1.0f / 128, 0);
  return x;
}
TensorId Out8(SubgraphBuilder& g, OpBuilder op, const Shape& shape, float scale,
              int64_t zero = 0) {
  TensorId y = op.Out("y", I8, shape);
  g.Quantize(y, scale, zero);
  return y;
}
// Symmetric int8 weights quantized along `axis` (per tensor when
// per_channel is false) and, when bias_channels > 0, an int32 bias with
// scale input x weight scale.
TensorId Weights8(SubgraphBuilder& g, const Shape& shape, int axis,
                  bool per_channel, std::vector<float>* scales) {
  TensorId w = g.Constant<int8_t>("w", shape, RandomInt8(Count(shape), 11));
  const int channels = shape[axis];
  scales->assign(per_channel ? channels : 1, 0.0f);
  for (size_t c = 0; c < scales->size(); ++c) {
    (*scales)[c] = 0.004f + 0.001f * static_cast<float>(c % 5);
  }
  if (per_channel) {
    std::vector<int64_t> zeros(channels, 0);
    g.QuantizePerChannel(w, *scales, zeros, axis);
  } else {
    g.Quantize(w, (*scales)[0], 0);
  }
  return w;
}
TensorId Bias8(SubgraphBuilder& g, int channels,
               const std::vector<float>& weight_scales) {
  std::vector<int32_t> values(channels);
  for (int c = 0; c < channels; ++c) values[c] = (c * 37) % 200 - 100;
  TensorId b = g.Constant<int32_t>("b", {channels}, values);
  std::vector<float> scales(channels);
  for (int c = 0; c < channels; ++c) {
    scales[c] = weight_scales[weight_scales.size() == 1 ? 0 : c] / 128;
  }
  std::vector<int64_t> zeros(channels, 0);
  if (weight_scales.size() == 1) {
    g.Quantize(b, scales[0], 0);
  } else {
    g.QuantizePerChannel(b, scales, zeros, 0);
  }
  return b;
}

tfl::Conv2DOptionsT ConvOptions(tfl::Padding padding, int stride, int dilation,
                                tfl::ActivationFunctionType act) {
  tfl::Conv2DOptionsT o;
  o.padding = padding;
  o.stride_w = o.stride_h = stride;
  o.dilation_w_factor = o.dilation_h_factor = dilation;
  o.fused_activation_function = act;
  return o;
}

tfl::Pool2DOptionsT PoolOptions(tfl::Padding padding, int size, int stride) {
  tfl::Pool2DOptionsT o;
  o.padding = padding;
  o.filter_width = o.filter_height = size;
  o.stride_w = o.stride_h = stride;
  return o;
}

void Unary(SubgraphBuilder& g, tfl::BuiltinOperator op) {
  TensorId x = In(g, {2, 3, 4});
  g.Output(g.Op(op).In(x).Out("y", F32, {2, 3, 4}));
}

template <typename Options>
void Binary(SubgraphBuilder& g, tfl::BuiltinOperator op, const Shape& a,
            const Shape& b, const Shape& out, Options options) {
  TensorId x = In(g, a);
  TensorId c = Const(g, "c", b);
  g.Output(g.Op(op).In(x, c).Options(options).Out("y", F32, out));
}

std::vector<OpCase> FloatCases() {
  using B = tfl::BuiltinOperator;
  using A = tfl::ActivationFunctionType;
  std::vector<OpCase> cases;
  auto conv = [](tfl::Padding padding, int stride, int dilation, bool bias) {
    return [=](SubgraphBuilder& g) {
      TensorId x = In(g, {1, 9, 9, 3});
      TensorId w = Const(g, "w", {4, 3, 3, 3});
      TensorId b = bias ? Const(g, "b", {4}, 3) : kNoTensor;
      const int span = 2 * dilation + 1;
      const int out = padding == tfl::Padding_SAME ? (9 + stride - 1) / stride
                                                   : (9 - span) / stride + 1;
      g.Output(g.Op(B::BuiltinOperator_CONV_2D)
                   .In(x, w, b)
                   .Options(ConvOptions(padding, stride, dilation,
                                        A::ActivationFunctionType_RELU6))
                   .Out("y", F32, {1, out, out, 4}));
    };
  };
  cases.push_back({"CONV_2D same s1", conv(tfl::Padding_SAME, 1, 1, true)});
  cases.push_back({"CONV_2D same s2", conv(tfl::Padding_SAME, 2, 1, true)});
  cases.push_back(
      {"CONV_2D valid s2 no bias", conv(tfl::Padding_VALID, 2, 1, false)});
  // SAME with a window shorter than its stride along one dimension:
  // TensorFlow pads that dimension by max(total, 0) = 0; this XNNPACK's own
  // SAME padding wraps below zero (ExplicitSamePadding, xnnpack_graph.h).
  cases.push_back({"CONV_2D same 1x3 s2x1", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {1, 4, 8, 4});
                     TensorId w = Const(g, "w", {2, 1, 3, 4});
                     tfl::Conv2DOptionsT o =
                         ConvOptions(tfl::Padding_SAME, 1, 1,
                                     A::ActivationFunctionType_NONE);
                     o.stride_h = 2;
                     g.Output(g.Op(B::BuiltinOperator_CONV_2D)
                                  .In(x, w, Const(g, "b", {2}, 3))
                                  .Options(o)
                                  .Out("y", F32, {1, 2, 8, 2}));
                   }});
  cases.push_back({"AVERAGE_POOL_2D same 1x5 s3x2", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {1, 3, 8, 6});
                     tfl::Pool2DOptionsT o =
                         PoolOptions(tfl::Padding_SAME, 5, 2);
                     o.filter_height = 1;
                     o.stride_h = 3;
                     g.Output(g.Op(B::BuiltinOperator_AVERAGE_POOL_2D)
                                  .In(x)
                                  .Options(o)
                                  .Out("y", F32, {1, 1, 4, 6}));
                   }});
  cases.push_back(
      {"CONV_2D valid dilation 2", conv(tfl::Padding_VALID, 1, 2, true)});
  cases.push_back({"DEPTHWISE_CONV_2D x2 same s2", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {1, 8, 8, 3});
                     TensorId w = Const(g, "w", {1, 3, 3, 6});
                     TensorId b = Const(g, "b", {6}, 3);
                     tfl::DepthwiseConv2DOptionsT o;
                     o.padding = tfl::Padding_SAME;
                     o.stride_w = o.stride_h = 2;
                     o.depth_multiplier = 2;
                     g.Output(g.Op(B::BuiltinOperator_DEPTHWISE_CONV_2D)
                                  .In(x, w, b)
                                  .Options(o)
                                  .Out("y", F32, {1, 4, 4, 6}));
                   }});
  auto tconv = [](tfl::Padding padding, int in, int stride, int k, int out,
                  bool bias) {
    return [=](SubgraphBuilder& g) {
      TensorId shape = g.Constant<int32_t>("shape", {4}, {1, out, out, 2});
      TensorId w = Const(g, "w", {2, k, k, 3});
      TensorId x = In(g, {1, in, in, 3});
      TensorId b = bias ? Const(g, "b", {2}, 3) : kNoTensor;
      tfl::TransposeConvOptionsT o;
      o.padding = padding;
      o.stride_w = o.stride_h = stride;
      g.Output(g.Op(B::BuiltinOperator_TRANSPOSE_CONV, bias ? 3 : 1)
                   .In(shape, w, x, b)
                   .Options(o)
                   .Out("y", F32, {1, out, out, 2}));
    };
  };
  cases.push_back({"TRANSPOSE_CONV same s2 k3",
                   tconv(tfl::Padding_SAME, 4, 2, 3, 8, true)});
  cases.push_back({"TRANSPOSE_CONV valid s2 k3",
                   tconv(tfl::Padding_VALID, 4, 2, 3, 9, false)});
  cases.push_back({"TRANSPOSE_CONV same s2 k4",
                   tconv(tfl::Padding_SAME, 3, 2, 4, 6, true)});
  cases.push_back({"FULLY_CONNECTED keep_num_dims", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {2, 3, 5});
                     TensorId w = Const(g, "w", {4, 5});
                     tfl::FullyConnectedOptionsT o;
                     o.keep_num_dims = true;
                     g.Output(g.Op(B::BuiltinOperator_FULLY_CONNECTED)
                                  .In(x, w, kNoTensor)
                                  .Options(o)
                                  .Out("y", F32, {2, 3, 4}));
                   }});
  cases.push_back({"FULLY_CONNECTED flattening", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {2, 2, 6});
                     TensorId w = Const(g, "w", {3, 6});
                     TensorId b = Const(g, "b", {3}, 3);
                     g.Output(g.Op(B::BuiltinOperator_FULLY_CONNECTED)
                                  .In(x, w, b)
                                  .Out("y", F32, {4, 3}));
                   }});
  auto pool = [](B op, tfl::Padding padding, int size, int stride, int out) {
    return [=](SubgraphBuilder& g) {
      TensorId x = In(g, {1, 7, 7, 3});
      g.Output(g.Op(op)
                   .In(x)
                   .Options(PoolOptions(padding, size, stride))
                   .Out("y", F32, {1, out, out, 3}));
    };
  };
  cases.push_back(
      {"AVERAGE_POOL_2D same 3x3 s2",
       pool(B::BuiltinOperator_AVERAGE_POOL_2D, tfl::Padding_SAME, 3, 2, 4)});
  cases.push_back(
      {"MAX_POOL_2D valid 2x2 s2",
       pool(B::BuiltinOperator_MAX_POOL_2D, tfl::Padding_VALID, 2, 2, 3)});
  cases.push_back(
      {"MAX_POOL_2D same 3x3 s1",
       pool(B::BuiltinOperator_MAX_POOL_2D, tfl::Padding_SAME, 3, 1, 7)});
  cases.push_back({"MEAN [1,2] keep_dims=false", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {2, 5, 4, 3});
                     TensorId axes = g.Constant<int32_t>("axes", {2}, {1, 2});
                     tfl::ReducerOptionsT o;
                     o.keep_dims = false;
                     g.Output(g.Op(B::BuiltinOperator_MEAN)
                                  .In(x, axes)
                                  .Options(o)
                                  .Out("y", F32, {2, 3}));
                   }});
  // Other adjacent axes: the input reshaped for global average pooling.
  auto mean = [](const Shape& in, std::vector<int32_t> axes, bool keep_dims,
                 const Shape& out) {
    return [=](SubgraphBuilder& g) {
      TensorId x = In(g, in);
      TensorId a = g.Constant<int32_t>(
          "axes", {static_cast<int32_t>(axes.size())}, axes);
      tfl::ReducerOptionsT o;
      o.keep_dims = keep_dims;
      g.Output(
          g.Op(B::BuiltinOperator_MEAN).In(x, a).Options(o).Out("y", F32, out));
    };
  };
  cases.push_back(
      {"MEAN [-2] keep_dims", mean({2, 3, 8}, {-2}, true, {2, 1, 8})});
  cases.push_back({"MEAN [1,0] of 3D", mean({2, 3, 4}, {1, 0}, false, {4})});
  cases.push_back(
      {"MEAN [1] of 4D", mean({2, 5, 3, 4}, {1}, false, {2, 3, 4})});
  // x^2 + 0.5 keeps RSQRT's input positive.
  cases.push_back(
      {"RSQRT", [](SubgraphBuilder& g) {
         TensorId x = In(g, {2, 3, 5});
         TensorId sq =
             g.Op(B::BuiltinOperator_SQUARE).In(x).Out("sq", F32, {2, 3, 5});
         TensorId half = g.Constant<float>("half", {1}, {0.5f});
         TensorId pos = g.Op(B::BuiltinOperator_ADD)
                            .In(sq, half)
                            .Out("pos", F32, {2, 3, 5});
         g.Output(
             g.Op(B::BuiltinOperator_RSQRT).In(pos).Out("y", F32, {2, 3, 5}));
       }});
  tfl::AddOptionsT add;
  add.fused_activation_function = A::ActivationFunctionType_RELU_N1_TO_1;
  tfl::SubOptionsT sub;
  tfl::MulOptionsT mul;
  mul.fused_activation_function = A::ActivationFunctionType_RELU;
  tfl::DivOptionsT div;
  cases.push_back(
      {"ADD broadcast [3,1,4]+[2,1]", [=](SubgraphBuilder& g) {
         Binary(g, B::BuiltinOperator_ADD, {3, 1, 4}, {2, 1}, {3, 2, 4}, add);
       }});
  cases.push_back(
      {"SUB", [=](SubgraphBuilder& g) {
         Binary(g, B::BuiltinOperator_SUB, {2, 4}, {4}, {2, 4}, sub);
       }});
  cases.push_back(
      {"MUL", [=](SubgraphBuilder& g) {
         Binary(g, B::BuiltinOperator_MUL, {2, 4}, {2, 4}, {2, 4}, mul);
       }});
  cases.push_back(
      {"DIV", [=](SubgraphBuilder& g) {
         Binary(g, B::BuiltinOperator_DIV, {2, 4}, {1}, {2, 4}, div);
       }});
  tfl::MaximumMinimumOptionsT minmax;
  cases.push_back(
      {"MAXIMUM", [=](SubgraphBuilder& g) {
         Binary(g, B::BuiltinOperator_MAXIMUM, {2, 4}, {4}, {2, 4}, minmax);
       }});
  cases.push_back(
      {"MINIMUM", [=](SubgraphBuilder& g) {
         Binary(g, B::BuiltinOperator_MINIMUM, {2, 4}, {4}, {2, 4}, minmax);
       }});
  tfl::SquaredDifferenceOptionsT sqdiff;
  cases.push_back({"SQUARED_DIFFERENCE", [=](SubgraphBuilder& g) {
                     Binary(g, B::BuiltinOperator_SQUARED_DIFFERENCE, {2, 4},
                            {2, 4}, {2, 4}, sqdiff);
                   }});
  for (B op : {B::BuiltinOperator_RELU, B::BuiltinOperator_RELU6,
               B::BuiltinOperator_RELU_N1_TO_1, B::BuiltinOperator_LOGISTIC,
               B::BuiltinOperator_HARD_SWISH, B::BuiltinOperator_ELU,
               B::BuiltinOperator_ABS, B::BuiltinOperator_CEIL,
               B::BuiltinOperator_FLOOR, B::BuiltinOperator_NEG,
               B::BuiltinOperator_SQUARE, B::BuiltinOperator_SQRT,
               B::BuiltinOperator_ROUND}) {
    cases.push_back({tfl::EnumNameBuiltinOperator(op),
                     [=](SubgraphBuilder& g) { Unary(g, op); }});
  }
  cases.push_back({"SOFTMAX", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {3, 10});
                     tfl::SoftmaxOptionsT o;
                     o.beta = 1.0f;
                     g.Output(g.Op(B::BuiltinOperator_SOFTMAX)
                                  .In(x)
                                  .Options(o)
                                  .Out("y", F32, {3, 10}));
                   }});
  cases.push_back({"LEAKY_RELU", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {2, 6});
                     tfl::LeakyReluOptionsT o;
                     o.alpha = 0.3f;
                     g.Output(g.Op(B::BuiltinOperator_LEAKY_RELU)
                                  .In(x)
                                  .Options(o)
                                  .Out("y", F32, {2, 6}));
                   }});
  cases.push_back({"PRELU", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {1, 3, 3, 4});
                     TensorId alpha = Const(g, "alpha", {1, 1, 4});
                     g.Output(g.Op(B::BuiltinOperator_PRELU)
                                  .In(x, alpha)
                                  .Out("y", F32, {1, 3, 3, 4}));
                   }});
  cases.push_back({"RESHAPE + SQUEEZE + EXPAND_DIMS", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {2, 6});
                     TensorId shape = g.Constant<int32_t>("s", {3}, {3, 1, 4});
                     TensorId r = g.Op(B::BuiltinOperator_RESHAPE)
                                      .In(x, shape)
                                      .Out("r", F32, {3, 1, 4});
                     tfl::SqueezeOptionsT so;
                     so.squeeze_dims = {1};
                     TensorId s = g.Op(B::BuiltinOperator_SQUEEZE)
                                      .In(r)
                                      .Options(so)
                                      .Out("s", F32, {3, 4});
                     TensorId axis = g.Constant<int32_t>("a", {}, {0});
                     g.Output(g.Op(B::BuiltinOperator_EXPAND_DIMS)
                                  .In(s, axis)
                                  .Out("y", F32, {1, 3, 4}));
                   }});
  cases.push_back(
      {"PAD", [](SubgraphBuilder& g) {
         TensorId x = In(g, {1, 3, 3, 2});
         TensorId p =
             g.Constant<int32_t>("p", {4, 2}, {0, 0, 1, 2, 2, 1, 0, 0});
         g.Output(
             g.Op(B::BuiltinOperator_PAD).In(x, p).Out("y", F32, {1, 6, 6, 2}));
       }});
  cases.push_back(
      {"PADV2", [](SubgraphBuilder& g) {
         TensorId x = In(g, {2, 3});
         TensorId p = g.Constant<int32_t>("p", {2, 2}, {1, 0, 0, 2});
         TensorId v = g.Constant<float>("v", {}, {0.75f});
         g.Output(
             g.Op(B::BuiltinOperator_PADV2).In(x, p, v).Out("y", F32, {3, 5}));
       }});
  auto resize = [](bool align, bool half) {
    return [=](SubgraphBuilder& g) {
      TensorId x = In(g, {1, 3, 4, 2});
      TensorId size = g.Constant<int32_t>("size", {2}, {7, 5});
      tfl::ResizeBilinearOptionsT o;
      o.align_corners = align;
      o.half_pixel_centers = half;
      g.Output(g.Op(B::BuiltinOperator_RESIZE_BILINEAR, half ? 3 : 1)
                   .In(x, size)
                   .Options(o)
                   .Out("y", F32, {1, 7, 5, 2}));
    };
  };
  cases.push_back({"RESIZE_BILINEAR legacy", resize(false, false)});
  cases.push_back({"RESIZE_BILINEAR align_corners", resize(true, false)});
  cases.push_back({"RESIZE_BILINEAR half_pixel", resize(false, true)});
  cases.push_back({"DEPTH_TO_SPACE", [](SubgraphBuilder& g) {
                     TensorId x = In(g, {1, 2, 3, 8});
                     tfl::DepthToSpaceOptionsT o;
                     o.block_size = 2;
                     g.Output(g.Op(B::BuiltinOperator_DEPTH_TO_SPACE)
                                  .In(x)
                                  .Options(o)
                                  .Out("y", F32, {1, 4, 6, 2}));
                   }});
  return cases;
}

std::vector<OpCase> Int8Cases() {
  using B = tfl::BuiltinOperator;
  using A = tfl::ActivationFunctionType;
  std::vector<OpCase> cases;
  auto conv = [](bool per_channel, bool depthwise) {
    return [=](SubgraphBuilder& g) {
      TensorId x = In8(g, {1, 6, 6, 4});
      std::vector<float> scales;
      const int out_c = 4 * (depthwise ? 2 : 1);
      TensorId w = depthwise
                       ? Weights8(g, {1, 3, 3, out_c}, 3, per_channel, &scales)
                       : Weights8(g, {out_c, 3, 3, 4}, 0, per_channel, &scales);
      TensorId b = Bias8(g, out_c, scales);
      if (depthwise) {
        tfl::DepthwiseConv2DOptionsT o;
        o.padding = tfl::Padding_SAME;
        o.stride_w = o.stride_h = 1;
        o.depth_multiplier = 2;
        g.Output(Out8(g,
                      g.Op(B::BuiltinOperator_DEPTHWISE_CONV_2D, 3)
                          .In(x, w, b)
                          .Options(o),
                      {1, 6, 6, out_c}, 0.02f, -3));
      } else {
        g.Output(Out8(g,
                      g.Op(B::BuiltinOperator_CONV_2D, 3)
                          .In(x, w, b)
                          .Options(ConvOptions(tfl::Padding_VALID, 1, 1,
                                               A::ActivationFunctionType_RELU)),
                      {1, 4, 4, out_c}, 0.05f, -128));
      }
    };
  };
  cases.push_back({"int8 CONV_2D per-channel", conv(true, false)});
  cases.push_back({"int8 CONV_2D per-tensor", conv(false, false)});
  cases.push_back({"int8 DEPTHWISE_CONV_2D per-channel", conv(true, true)});
  // Per-channel weights run as a 1x1 convolution between two reshapes:
  // flattened (3D input, 2D output) and keeping the dimensions.
  auto fully_connected = [](bool per_channel, bool keep_num_dims) {
    return [=](SubgraphBuilder& g) {
      TensorId x = In8(g, {2, 3, 16});
      std::vector<float> scales;
      TensorId w = Weights8(g, {5, 16}, 0, per_channel, &scales);
      TensorId b = Bias8(g, 5, scales);
      tfl::FullyConnectedOptionsT o;
      o.keep_num_dims = keep_num_dims;
      o.fused_activation_function = A::ActivationFunctionType_RELU6;
      const Shape out = keep_num_dims ? Shape{2, 3, 5} : Shape{6, 5};
      g.Output(Out8(
          g, g.Op(B::BuiltinOperator_FULLY_CONNECTED, 4).In(x, w, b).Options(o),
          out, 0.03f, 5));
    };
  };
  cases.push_back({"int8 FULLY_CONNECTED", fully_connected(false, false)});
  cases.push_back(
      {"int8 FULLY_CONNECTED per-channel", fully_connected(true, false)});
  cases.push_back({"int8 FULLY_CONNECTED per-channel keep_num_dims",
                   fully_connected(true, true)});
  cases.push_back(
      {"int8 TRANSPOSE_CONV", [](SubgraphBuilder& g) {
         TensorId shape = g.Constant<int32_t>("shape", {4}, {1, 8, 8, 3});
         std::vector<float> scales;
         TensorId w = Weights8(g, {3, 3, 3, 4}, 0, false, &scales);
         TensorId x = In8(g, {1, 4, 4, 4});
         tfl::TransposeConvOptionsT o;
         o.padding = tfl::Padding_SAME;
         o.stride_w = o.stride_h = 2;
         g.Output(Out8(g,
                       g.Op(B::BuiltinOperator_TRANSPOSE_CONV, 2)
                           .In(shape, w, x)
                           .Options(o),
                       {1, 8, 8, 3}, 0.02f, 0));
       }});
  auto binary = [](B op, const Shape& b_shape, float out_scale) {
    return [=](SubgraphBuilder& g) {
      TensorId a = In8(g, {2, 3, 4});
      TensorId b =
          g.Constant<int8_t>("c", b_shape, RandomInt8(Count(b_shape), 5));
      g.Quantize(b, 1.0f / 64, 3);
      g.Output(Out8(g, g.Op(op, 2).In(a, b), {2, 3, 4}, out_scale, -2));
    };
  };
  cases.push_back({"int8 ADD", binary(B::BuiltinOperator_ADD, {4}, 0.03f)});
  cases.push_back(
      {"int8 SUB", binary(B::BuiltinOperator_SUB, {2, 3, 4}, 0.03f)});
  cases.push_back({"int8 MUL", binary(B::BuiltinOperator_MUL, {3, 1}, 0.02f)});
  cases.push_back(
      {"int8 MAX_POOL_2D", [](SubgraphBuilder& g) {
         TensorId x = In8(g, {1, 6, 6, 3});
         g.Output(Out8(g,
                       g.Op(B::BuiltinOperator_MAX_POOL_2D, 2)
                           .In(x)
                           .Options(PoolOptions(tfl::Padding_SAME, 3, 2)),
                       {1, 3, 3, 3}, 1.0f / 128));
       }});
  cases.push_back(
      {"int8 MEAN", [](SubgraphBuilder& g) {
         TensorId x = In8(g, {1, 5, 5, 6});
         TensorId axes = g.Constant<int32_t>("axes", {2}, {1, 2});
         tfl::ReducerOptionsT o;
         o.keep_dims = true;
         g.Output(Out8(g,
                       g.Op(B::BuiltinOperator_MEAN, 2).In(x, axes).Options(o),
                       {1, 1, 1, 6}, 1.0f / 200, 1));
       }});
  cases.push_back(
      {"int8 MEAN [1] of 3D", [](SubgraphBuilder& g) {
         TensorId x = In8(g, {2, 5, 8});
         TensorId axes = g.Constant<int32_t>("axes", {1}, {1});
         tfl::ReducerOptionsT o;
         o.keep_dims = false;
         g.Output(Out8(g,
                       g.Op(B::BuiltinOperator_MEAN, 2).In(x, axes).Options(o),
                       {2, 8}, 1.0f / 200, 1));
       }});
  for (float in_scale : {1.0f / 128, 1.0f / 16, 0.5f}) {
    cases.push_back(
        {"int8 SOFTMAX", [in_scale](SubgraphBuilder& g) {
           TensorId x = g.Input("x", I8, {3, 40});
           g.Quantize(x, in_scale, 3);
           tfl::SoftmaxOptionsT o;
           o.beta = 1.0f;
           g.Output(Out8(g, g.Op(B::BuiltinOperator_SOFTMAX).In(x).Options(o),
                         {3, 40}, 1.0f / 256, -128));
         }});
  }
  cases.push_back({"int8 LOGISTIC", [](SubgraphBuilder& g) {
                     TensorId x = In8(g, {2, 8});
                     g.Output(Out8(g,
                                   g.Op(B::BuiltinOperator_LOGISTIC, 2).In(x),
                                   {2, 8}, 1.0f / 256, -128));
                   }});
  cases.push_back({"int8 RELU6", [](SubgraphBuilder& g) {
                     TensorId x = In8(g, {2, 8});
                     g.Output(Out8(g, g.Op(B::BuiltinOperator_RELU6, 2).In(x),
                                   {2, 8}, 1.0f / 128));
                   }});
  cases.push_back(
      {"int8 PAD + RESHAPE", [](SubgraphBuilder& g) {
         TensorId x = In8(g, {1, 2, 3, 2});
         TensorId p =
             g.Constant<int32_t>("p", {4, 2}, {0, 0, 1, 1, 0, 1, 0, 0});
         TensorId padded = g.Op(B::BuiltinOperator_PAD, 2)
                               .In(x, p)
                               .Out("p8", I8, {1, 4, 4, 2});
         g.Quantize(padded, 1.0f / 128, 0);
         TensorId s = g.Constant<int32_t>("s", {2}, {4, 8});
         g.Output(Out8(g, g.Op(B::BuiltinOperator_RESHAPE).In(padded, s),
                       {4, 8}, 1.0f / 128));
       }});
  cases.push_back(
      {"int8 RESIZE_BILINEAR", [](SubgraphBuilder& g) {
         TensorId x = In8(g, {1, 3, 3, 2});
         TensorId size = g.Constant<int32_t>("size", {2}, {6, 5});
         tfl::ResizeBilinearOptionsT o;
         o.half_pixel_centers = true;
         g.Output(Out8(
             g,
             g.Op(B::BuiltinOperator_RESIZE_BILINEAR, 3).In(x, size).Options(o),
             {1, 6, 5, 2}, 1.0f / 128));
       }});
  cases.push_back(
      {"QUANTIZE + DEQUANTIZE", [](SubgraphBuilder& g) {
         TensorId x = In(g, {3, 5});
         TensorId q =
             g.Op(B::BuiltinOperator_QUANTIZE).In(x).Out("q", I8, {3, 5});
         g.Quantize(q, 1.0f / 100, 4);
         g.Output(g.Op(B::BuiltinOperator_DEQUANTIZE, 2)
                      .In(q)
                      .Out("y", F32, {3, 5}));
       }});
  return cases;
}

void RunCases(const std::vector<OpCase>& cases) {
  const uint32_t seed = Seed();
  std::printf("[ seed     ] GRAFT_TEST_SEED=%u\n", seed);
  testing::TempDir dir;
  for (const OpCase& c : cases) {
    SCOPED_TRACE(c.name);
    ModelBuilder b;
    c.build(b.Subgraph("main"));
    absl::StatusOr<Model> model = std::move(b).Build();
    ASSERT_TRUE(model.ok()) << model.status();
    const std::string path = dir.Join("op.tflite");
    ASSERT_TRUE(SaveModel(*model, path).ok());
    Outcome o = RunModel(path, seed, kXnnpackInt8OpMaxLsb);
    std::printf("  %-36s %lld/%lld ops taken", c.name.c_str(),
                static_cast<long long>(o.ops_taken),
                static_cast<long long>(o.ops_total));
    if (o.max_lsb >= 0) std::printf(", int8 max %d LSB", o.max_lsb);
    std::printf(", float max |diff| %.3g %s\n", o.max_float_diff,
                o.skipped.empty() ? "" : o.skipped.c_str());
    if (!o.skipped.empty()) continue;  // No CPU kernel to compare with.
    EXPECT_EQ(o.ops_taken, o.ops_total) << "the plugin refused an op";
    EXPECT_EQ(o.partitions, 1u);
    EXPECT_TRUE(o.mismatch.empty()) << o.mismatch;
  }
}

// One draw of int8 quantization parameters for the sweep below: scales
// spread over powers of two, zero points over much of the range.
struct QDraw {
  float in_scale, in2_scale, weight_scale, out_scale;
  int in_zero, in2_zero, out_zero;
};

QDraw DrawQuantization(std::mt19937& rng) {
  std::uniform_real_distribution<double> exponent(-16, 0);
  std::uniform_int_distribution<int> zero(-100, 100);
  auto scale = [&](double shift) {
    return static_cast<float>(std::exp2(exponent(rng) + shift));
  };
  QDraw q;
  q.in_scale = scale(0), q.in2_scale = scale(0);
  q.weight_scale = scale(-2), q.out_scale = scale(0);
  q.in_zero = zero(rng), q.in2_zero = zero(rng), q.out_zero = zero(rng);
  return q;
}

using SweepBuild = std::function<void(SubgraphBuilder&, const QDraw&)>;

TensorId SweepInput(SubgraphBuilder& g, const char* name, const Shape& shape,
                    float scale, int zero) {
  TensorId x = g.Input(name, I8, shape);
  g.Quantize(x, scale, zero);
  return x;
}

// Weights [channels, ...] (axis 0) or [..., channels] (axis 3), per tensor
// or per channel, and an int32 bias with scale input x weight, as TFLite
// requires.
std::pair<TensorId, TensorId> SweepWeights(SubgraphBuilder& g,
                                           const Shape& shape, int axis,
                                           bool per_channel, const QDraw& q) {
  const int channels = shape[axis];
  TensorId w = g.Constant<int8_t>("w", shape, RandomInt8(Count(shape), 3));
  std::vector<float> ws(channels), bs(channels);
  for (int c = 0; c < channels; ++c) {
    ws[c] = q.weight_scale * (per_channel ? 1.0f + 0.25f * (c % 3) : 1.0f);
    bs[c] = q.in_scale * ws[c];
  }
  const std::vector<int64_t> zeros(channels, 0);
  if (per_channel) {
    g.QuantizePerChannel(w, ws, zeros, axis);
  } else {
    g.Quantize(w, ws[0], 0);
  }
  std::vector<int32_t> bv(channels);
  for (int c = 0; c < channels; ++c) bv[c] = (c * 37) % 200 - 100;
  TensorId b = g.Constant<int32_t>("b", {channels}, bv);
  if (per_channel) {
    g.QuantizePerChannel(b, bs, zeros, 0);
  } else {
    g.Quantize(b, bs[0], 0);
  }
  return {w, b};
}

// The int8 lowerings whose XNNPACK operators limit their scales.
std::vector<std::pair<std::string, SweepBuild>> SweepOps() {
  using B = tfl::BuiltinOperator;
  using A = tfl::ActivationFunctionType;
  std::vector<std::pair<std::string, SweepBuild>> ops;
  auto output = [](SubgraphBuilder& g, OpBuilder op, const Shape& shape,
                   const QDraw& q) {
    TensorId y = op.Out("y", I8, shape);
    g.Quantize(y, q.out_scale, q.out_zero).Output(y);
  };
  for (bool per_channel : {false, true}) {
    ops.push_back(
        {per_channel ? "CONV_2D per-channel" : "CONV_2D",
         [=](SubgraphBuilder& g, const QDraw& q) {
           TensorId x = SweepInput(g, "x", {1, 5, 5, 3}, q.in_scale, q.in_zero);
           auto [w, b] = SweepWeights(g, {4, 3, 3, 3}, 0, per_channel, q);
           output(g,
                  g.Op(B::BuiltinOperator_CONV_2D, 3)
                      .In(x, w, b)
                      .Options(ConvOptions(tfl::Padding_SAME, 1, 1,
                                           A::ActivationFunctionType_RELU)),
                  {1, 5, 5, 4}, q);
         }});
    ops.push_back(
        {per_channel ? "FULLY_CONNECTED per-channel" : "FULLY_CONNECTED",
         [=](SubgraphBuilder& g, const QDraw& q) {
           TensorId x = SweepInput(g, "x", {2, 24}, q.in_scale, q.in_zero);
           auto [w, b] = SweepWeights(g, {5, 24}, 0, per_channel, q);
           output(g, g.Op(B::BuiltinOperator_FULLY_CONNECTED, 4).In(x, w, b),
                  {2, 5}, q);
         }});
  }
  ops.push_back(
      {"DEPTHWISE_CONV_2D per-channel",
       [=](SubgraphBuilder& g, const QDraw& q) {
         TensorId x = SweepInput(g, "x", {1, 5, 5, 4}, q.in_scale, q.in_zero);
         auto [w, b] = SweepWeights(g, {1, 3, 3, 4}, 3, true, q);
         tfl::DepthwiseConv2DOptionsT o;
         o.padding = tfl::Padding_SAME;
         o.stride_w = o.stride_h = 1;
         o.depth_multiplier = 1;
         output(g,
                g.Op(B::BuiltinOperator_DEPTHWISE_CONV_2D, 3)
                    .In(x, w, b)
                    .Options(o),
                {1, 5, 5, 4}, q);
       }});
  for (B op : {B::BuiltinOperator_ADD, B::BuiltinOperator_SUB,
               B::BuiltinOperator_MUL}) {
    ops.push_back(
        {B::BuiltinOperator_ADD == op   ? "ADD"
         : B::BuiltinOperator_SUB == op ? "SUB"
                                        : "MUL",
         [=](SubgraphBuilder& g, const QDraw& q) {
           TensorId a = SweepInput(g, "a", {2, 3, 8}, q.in_scale, q.in_zero);
           TensorId c = SweepInput(g, "c", {2, 3, 8}, q.in2_scale, q.in2_zero);
           output(g, g.Op(op).In(a, c), {2, 3, 8}, q);
         }});
  }
  ops.push_back(
      {"TRANSPOSE_CONV", [=](SubgraphBuilder& g, const QDraw& q) {
         TensorId shape = g.Constant<int32_t>("shape", {4}, {1, 8, 8, 3});
         auto [w, b] = SweepWeights(g, {3, 3, 3, 4}, 0, false, q);
         TensorId x = SweepInput(g, "x", {1, 4, 4, 4}, q.in_scale, q.in_zero);
         tfl::TransposeConvOptionsT o;
         o.padding = tfl::Padding_SAME;
         o.stride_w = o.stride_h = 2;
         output(g,
                g.Op(B::BuiltinOperator_TRANSPOSE_CONV, 3)
                    .In(shape, w, x, b)
                    .Options(o),
                {1, 8, 8, 3}, q);
       }});
  ops.push_back(
      {"SOFTMAX", [=](SubgraphBuilder& g, const QDraw& q) {
         TensorId x = SweepInput(g, "x", {3, 40}, q.in_scale, q.in_zero);
         tfl::SoftmaxOptionsT o;
         o.beta = 1.0f;
         TensorId y = g.Op(B::BuiltinOperator_SOFTMAX)
                          .In(x)
                          .Options(o)
                          .Out("y", I8, {3, 40});
         g.Quantize(y, 1.0f / 256, -128).Output(y);
       }});
  ops.push_back(
      {"MEAN", [=](SubgraphBuilder& g, const QDraw& q) {
         TensorId x = SweepInput(g, "x", {1, 4, 5, 6}, q.in_scale, q.in_zero);
         TensorId axes = g.Constant<int32_t>("axes", {2}, {1, 2});
         tfl::ReducerOptionsT o;
         o.keep_dims = false;
         output(g, g.Op(B::BuiltinOperator_MEAN, 2).In(x, axes).Options(o),
                {1, 6}, q);
       }});
  return ops;
}

// A drawn one-op model: built into `g` from `rng` and described in `what`
// (for the trace); false when the draw makes no valid model.
using DrawnModel = std::function<bool(SubgraphBuilder& g, std::mt19937& rng,
                                      std::string* what)>;

// `draws` models of one op from `draw`: each the plugin takes must load in
// XNNPACK (no CPU fallback: the plugin must refuse what XNNPACK would) and
// match the CPU kernels.
void CheckDrawn(const std::string& name, int draws, std::mt19937& rng,
                const DrawnModel& draw) {
  testing::TempDir dir;
  const std::string path = dir.Join("op.tflite");
  int taken = 0, refused = 0;
  for (int i = 0; i < draws; ++i) {
    ModelBuilder b;
    std::string what;
    if (!draw(b.Subgraph("main"), rng, &what)) continue;
    SCOPED_TRACE(name + ": " + what);
    absl::StatusOr<Model> model = std::move(b).Build();
    ASSERT_TRUE(model.ok()) << model.status();
    ASSERT_TRUE(SaveModel(*model, path).ok());
    Outcome o = RunModel(path, rng(), kXnnpackInt8OpMaxLsb);
    if (!o.skipped.empty()) continue;
    if (o.ops_taken == 0) {
      ++refused;
      continue;
    }
    ++taken;
    EXPECT_TRUE(o.mismatch.empty()) << o.mismatch;
  }
  std::printf("  %-30s taken for %d draws, refused for %d\n", name.c_str(),
              taken, refused);
  EXPECT_GT(taken, 0) << name;
}

int Pick(std::mt19937& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// Int8 lowerings over drawn scales and zero points (XNNPACK refuses, at
// runtime creation, scales its operators cannot requantize).
TEST(XnnpackOpsTest, Int8OpsTakenOverDrawnScalesLoadAndMatch) {
  const uint32_t seed = Seed();
  std::printf("[ seed     ] GRAFT_TEST_SEED=%u\n", seed);
  std::mt19937 rng(seed);
  for (const auto& [name, build] : SweepOps()) {
    CheckDrawn(name, 24, rng,
               [&, &build = build](SubgraphBuilder& g, std::mt19937& r,
                                   std::string* what) {
                 const QDraw q = DrawQuantization(r);
                 *what = absl::StrFormat(
                     "input %g/%d, second input %g/%d, weights %g, output "
                     "%g/%d",
                     q.in_scale, q.in_zero, q.in2_scale, q.in2_zero,
                     q.weight_scale, q.out_scale, q.out_zero);
                 build(g, q);
                 return true;
               });
  }
}

// Output size of a TFLite window along one dimension (0: no output).
int WindowOut(int in, int k, int stride, int dilation, bool same) {
  if (same) return (in + stride - 1) / stride;
  const int span = (k - 1) * dilation + 1;
  return in < span ? 0 : (in - span) / stride + 1;
}

const tfl::ActivationFunctionType kClampActivations[] = {
    tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
    tfl::ActivationFunctionType_RELU6,
    tfl::ActivationFunctionType_RELU_N1_TO_1};

// Float window ops over drawn shapes, kernels, strides, dilations and
// paddings (inputs smaller than the kernel included).
TEST(XnnpackOpsTest, WindowOpsTakenOverDrawnShapesLoadAndMatch) {
  using B = tfl::BuiltinOperator;
  const uint32_t seed = Seed();
  std::printf("[ seed     ] GRAFT_TEST_SEED=%u\n", seed);
  std::mt19937 rng(seed);
  for (B kind :
       {B::BuiltinOperator_CONV_2D, B::BuiltinOperator_DEPTHWISE_CONV_2D,
        B::BuiltinOperator_MAX_POOL_2D, B::BuiltinOperator_AVERAGE_POOL_2D}) {
    CheckDrawn(
        tfl::EnumNameBuiltinOperator(kind), 40, rng,
        [kind](SubgraphBuilder& g, std::mt19937& r, std::string* what) {
          const int h = Pick(r, 1, 9), w = Pick(r, 1, 9), cin = Pick(r, 1, 6);
          const int kh = Pick(r, 1, 5), kw = Pick(r, 1, 5);
          const int sh = Pick(r, 1, 3), sw = Pick(r, 1, 3);
          const bool pool = kind == B::BuiltinOperator_MAX_POOL_2D ||
                            kind == B::BuiltinOperator_AVERAGE_POOL_2D;
          const int dh = pool ? 1 : Pick(r, 1, 3),
                    dw = pool ? 1 : Pick(r, 1, 3);
          const bool same = Pick(r, 0, 1) == 1;
          const int mult =
              kind == B::BuiltinOperator_DEPTHWISE_CONV_2D ? Pick(r, 1, 2) : 1;
          const int cout =
              kind == B::BuiltinOperator_CONV_2D ? Pick(r, 1, 6) : cin * mult;
          const auto act = kClampActivations[Pick(r, 0, 3)];
          const int oh = WindowOut(h, kh, sh, dh, same);
          const int ow = WindowOut(w, kw, sw, dw, same);
          if (oh == 0 || ow == 0) return false;
          *what = absl::StrFormat(
              "input %dx%dx%d, kernel %dx%d, stride %dx%d, dilation %dx%d, %s, "
              "%d output channels",
              h, w, cin, kh, kw, sh, sw, dh, dw, same ? "SAME" : "VALID", cout);
          TensorId x = In(g, {1, h, w, cin});
          const tfl::Padding padding =
              same ? tfl::Padding_SAME : tfl::Padding_VALID;
          const Shape out = {1, oh, ow, cout};
          if (pool) {
            tfl::Pool2DOptionsT o;
            o.padding = padding;
            o.filter_height = kh, o.filter_width = kw;
            o.stride_h = sh, o.stride_w = sw;
            o.fused_activation_function = act;
            g.Output(g.Op(kind).In(x).Options(o).Out("y", F32, out));
          } else if (kind == B::BuiltinOperator_CONV_2D) {
            tfl::Conv2DOptionsT o = ConvOptions(padding, 1, 1, act);
            o.stride_h = sh, o.stride_w = sw;
            o.dilation_h_factor = dh, o.dilation_w_factor = dw;
            TensorId f = Const(g, "w", {cout, kh, kw, cin});
            TensorId bias = Const(g, "b", {cout}, 3);
            g.Output(g.Op(kind).In(x, f, bias).Options(o).Out("y", F32, out));
          } else {
            tfl::DepthwiseConv2DOptionsT o;
            o.padding = padding;
            o.stride_h = sh, o.stride_w = sw;
            o.dilation_h_factor = dh, o.dilation_w_factor = dw;
            o.depth_multiplier = mult;
            o.fused_activation_function = act;
            TensorId f = Const(g, "w", {1, kh, kw, cout});
            TensorId bias = Const(g, "b", {cout}, 3);
            g.Output(
                g.Op(kind, 2).In(x, f, bias).Options(o).Out("y", F32, out));
          }
          return true;
        });
  }
}

// Float TRANSPOSE_CONV over drawn shapes, kernels, strides, paddings and
// every output size TFLite accepts for them (the plugin's padding and
// adjustment arithmetic).
TEST(XnnpackOpsTest, TransposeConvTakenOverDrawnShapesLoadsAndMatches) {
  std::mt19937 rng(Seed());
  CheckDrawn(
      "TRANSPOSE_CONV", 40, rng,
      [](SubgraphBuilder& g, std::mt19937& r, std::string* what) {
        const int h = Pick(r, 1, 6), w = Pick(r, 1, 6);
        const int cin = Pick(r, 1, 4), cout = Pick(r, 1, 4);
        const int kh = Pick(r, 1, 5), kw = Pick(r, 1, 5);
        const int sh = Pick(r, 1, 3), sw = Pick(r, 1, 3);
        const bool same = Pick(r, 0, 1) == 1, bias = Pick(r, 0, 1) == 1;
        // Sizes whose convolution back gives the input: SAME ceil(out / s) =
        // in, VALID (out - k) / s + 1 = in.
        auto out_size = [&](int in, int k, int s) {
          const int lo = same ? (in - 1) * s + 1 : (in - 1) * s + k;
          return lo + Pick(r, 0, s - 1);
        };
        const int oh = out_size(h, kh, sh), ow = out_size(w, kw, sw);
        *what = absl::StrFormat(
            "input %dx%dx%d, kernel %dx%d, stride %dx%d, %s, output %dx%dx%d%s",
            h, w, cin, kh, kw, sh, sw, same ? "SAME" : "VALID", oh, ow, cout,
            bias ? ", bias" : "");
        TensorId shape = g.Constant<int32_t>("shape", {4}, {1, oh, ow, cout});
        TensorId f = Const(g, "w", {cout, kh, kw, cin});
        TensorId x = In(g, {1, h, w, cin});
        TensorId b = bias ? Const(g, "b", {cout}, 3) : kNoTensor;
        tfl::TransposeConvOptionsT o;
        o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
        o.stride_h = sh, o.stride_w = sw;
        g.Output(g.Op(tfl::BuiltinOperator_TRANSPOSE_CONV, bias ? 3 : 1)
                     .In(shape, f, x, b)
                     .Options(o)
                     .Out("y", F32, {1, oh, ow, cout}));
        return true;
      });
}

// Float RESIZE_BILINEAR over drawn input and output sizes (1 included,
// downscaling included) in its three modes.
TEST(XnnpackOpsTest, ResizeTakenOverDrawnSizesLoadsAndMatches) {
  std::mt19937 rng(Seed());
  CheckDrawn(
      "RESIZE_BILINEAR", 40, rng,
      [](SubgraphBuilder& g, std::mt19937& r, std::string* what) {
        const int h = Pick(r, 1, 6), w = Pick(r, 1, 6), c = Pick(r, 1, 3);
        const int oh = Pick(r, 1, 12), ow = Pick(r, 1, 12);
        const int mode = Pick(r, 0, 2);
        *what = absl::StrFormat("%dx%dx%d to %dx%d, %s", h, w, c, oh, ow,
                                mode == 0   ? "legacy"
                                : mode == 1 ? "align_corners"
                                            : "half_pixel_centers");
        TensorId x = In(g, {1, h, w, c});
        TensorId size = g.Constant<int32_t>("size", {2}, {oh, ow});
        tfl::ResizeBilinearOptionsT o;
        o.align_corners = mode == 1;
        o.half_pixel_centers = mode == 2;
        g.Output(g.Op(tfl::BuiltinOperator_RESIZE_BILINEAR, mode == 2 ? 3 : 1)
                     .In(x, size)
                     .Options(o)
                     .Out("y", F32, {1, oh, ow, c}));
        return true;
      });
}

// Float binary ops over drawn broadcasts: output ranks 1 to 6, each operand
// of any lower rank with any of its dimensions 1.
TEST(XnnpackOpsTest, BinaryOpsTakenOverDrawnBroadcastsLoadAndMatch) {
  using B = tfl::BuiltinOperator;
  std::mt19937 rng(Seed());
  for (B kind :
       {B::BuiltinOperator_ADD, B::BuiltinOperator_SUB, B::BuiltinOperator_MUL,
        B::BuiltinOperator_DIV, B::BuiltinOperator_MAXIMUM,
        B::BuiltinOperator_MINIMUM, B::BuiltinOperator_SQUARED_DIFFERENCE}) {
    CheckDrawn(tfl::EnumNameBuiltinOperator(kind), 24, rng,
               [kind](SubgraphBuilder& g, std::mt19937& r, std::string* what) {
                 const int rank = Pick(r, 1, 6);
                 Shape out(rank);
                 for (int32_t& d : out) d = Pick(r, 1, 4);
                 auto operand = [&] {
                   Shape s(out.begin() + Pick(r, 0, rank - 1), out.end());
                   for (int32_t& d : s) {
                     if (Pick(r, 0, 2) == 0) d = 1;
                   }
                   return s;
                 };
                 const Shape a = operand(), c = operand();
                 // Their broadcast: the longer rank, each dimension the larger.
                 const int ry = static_cast<int>(std::max(a.size(), c.size()));
                 Shape y(ry, 1);
                 for (int i = 0; i < ry; ++i) {
                   const int ia = i - (ry - static_cast<int>(a.size()));
                   const int ic = i - (ry - static_cast<int>(c.size()));
                   if (ia >= 0) y[i] = std::max(y[i], a[ia]);
                   if (ic >= 0) y[i] = std::max(y[i], c[ic]);
                 }
                 auto dims = [](const Shape& s) {
                   std::string t;
                   for (int32_t d : s)
                     t += (t.empty() ? "" : "x") + std::to_string(d);
                   return "[" + t + "]";
                 };
                 *what = dims(a) + " and " + dims(c);
                 TensorId ta = g.Input("a", F32, a);
                 TensorId tc = g.Input("c", F32, c);
                 g.Output(g.Op(kind).In(ta, tc).Out("y", F32, y));
                 return true;
               });
  }
}

// Regression: RSQRT of x < 0 (and of NaN) was -inf compiled by xnnpack,
// NaN on the CPU kernel (XNNPACK's divide clamps a NaN quotient to its
// output_min on x86). Every class of float but subnormals, which XNNPACK
// flushes to zero on entry to every operator, must give the CPU kernel's
// float: the same bits, or NaN for NaN.
TEST(XnnpackOpsTest, RsqrtOfNegativeZeroInfAndNanIsTheCpuKernelsFloat) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {-FLT_MAX, -4.0f, -1.0f, -FLT_MIN, -0.0f,   0.0f,
                                FLT_MIN,  0.25f, 1.0f,  4.0f,     FLT_MAX, kInf,
                                -kInf,    kNan,  -kNan, -1e-3f};
  const int32_t n = static_cast<int32_t>(x.size());
  ModelBuilder b;
  SubgraphBuilder& g = b.Subgraph("main");
  g.Output(g.Op(tfl::BuiltinOperator_RSQRT)
               .In(g.Input("x", F32, {n}))
               .Out("y", F32, {n}));
  absl::StatusOr<Model> model = std::move(b).Build();
  ASSERT_TRUE(model.ok()) << model.status();
  testing::TempDir dir;
  const std::string path = dir.Join("rsqrt.tflite");
  ASSERT_TRUE(SaveModel(*model, path).ok());
  absl::StatusOr<ApplyReport> report = xnnpack_test::ApplyXnnpack(*model);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->ops_taken, 1) << "the plugin refused RSQRT";
  const std::string compiled = dir.Join("compiled.tflite");
  ASSERT_TRUE(SaveModel(*model, compiled).ok());

  auto cpu = Runtime::Load(path);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  RuntimeOptions options;
  options.dispatch_dirs = {xnnpack_test::VendorLibDir()};
  auto npu = Runtime::Load(compiled, options);
  ASSERT_TRUE(npu.ok()) << npu.status();
  ASSERT_EQ((*npu)->Report().CountOps(OpReport::Where::kFallback), 0);
  for (auto* rt : {cpu->get(), npu->get()}) {
    ASSERT_EQ(rt->input(0)->bytes, x.size() * sizeof(float));
    std::memcpy(rt->input(0)->raw_data, x.data(), rt->input(0)->bytes);
    ASSERT_TRUE(rt->Invoke().ok());
  }
  const float* want = (*cpu)->output(0)->data<float>();
  const float* got = (*npu)->output(0)->data<float>();
  for (int32_t i = 0; i < n; ++i) {
    SCOPED_TRACE(absl::StrFormat("RSQRT(%a)", x[i]));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "got " << got[i];
      continue;
    }
    uint32_t want_bits, got_bits;
    std::memcpy(&want_bits, &want[i], sizeof(float));
    std::memcpy(&got_bits, &got[i], sizeof(float));
    EXPECT_EQ(got_bits, want_bits) << "got " << got[i] << ", want " << want[i];
  }
}

TEST(XnnpackOpsTest, FloatOpsMatchCpuKernels) { RunCases(FloatCases()); }

TEST(XnnpackOpsTest, Int8OpsMatchCpuKernels) { RunCases(Int8Cases()); }

}  // namespace
}  // namespace graft
