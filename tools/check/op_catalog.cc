#include "tools/check/op_catalog.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/model_builder.h"

namespace graft::check {
namespace {

using tfl::ActivationFunctionType;
using tfl::BuiltinOperator;
using tfl::TensorType;

int Int(std::mt19937& rng, int lo, int hi) {  // inclusive
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

std::vector<float> Floats(std::mt19937& rng, int64_t n, float lo = -1,
                          float hi = 1) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

template <typename T>
std::vector<T> Ints(std::mt19937& rng, int64_t n, int lo, int hi) {
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(Int(rng, lo, hi));
  return v;
}

int64_t Count(const std::vector<int32_t>& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

std::string ShapeText(const std::vector<int32_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

std::vector<int32_t> DrawShape(std::mt19937& rng, int rank, int max_dim) {
  std::vector<int32_t> s(rank);
  for (int32_t& d : s) d = Int(rng, 1, max_dim);
  return s;
}

ActivationFunctionType DrawActivation(std::mt19937& rng) {
  static const ActivationFunctionType kActs[] = {
      tfl::ActivationFunctionType_NONE, tfl::ActivationFunctionType_RELU,
      tfl::ActivationFunctionType_RELU6,
      tfl::ActivationFunctionType_RELU_N1_TO_1};
  return kActs[Int(rng, 0, 3)];
}

const char* ActName(ActivationFunctionType a) {
  return tfl::EnumNameActivationFunctionType(a);
}

bool Quantized(const CatalogOp& c) {
  return c.type == tfl::TensorType_INT8 || c.type == tfl::TensorType_UINT8;
}

// A zero point drawn from [lo, hi] around int8's 0, moved to uint8's 128.
int Zp(std::mt19937& rng, const CatalogOp& c, int lo, int hi) {
  return Int(rng, lo, hi) + (c.type == tfl::TensorType_UINT8 ? 128 : 0);
}

// A constant of the op's quantized type, values in [lo, hi] (int8's
// range; uint8's are moved by 128).
TensorId QuantConstant(SubgraphBuilder& g, const std::string& name,
                       const std::vector<int32_t>& shape, const CatalogOp& c,
                       std::mt19937& rng, int lo, int hi) {
  if (c.type == tfl::TensorType_UINT8) {
    return g.Constant<uint8_t>(name, shape,
                               Ints<uint8_t>(rng, Count(shape), lo + 128,
                                             hi + 128));
  }
  return g.Constant<int8_t>(name, shape,
                            Ints<int8_t>(rng, Count(shape), lo, hi));
}

// Weights of a quantized conv or FC: int8 symmetric (zero point 0) per
// tensor or, when `per_channel`, per channel along `axis`; uint8 per tensor
// with zero point 128 (TFLite has no per-channel uint8). Returns the
// weight scale of each of `channels` channels (for the bias).
std::vector<float> QuantizeWeights(SubgraphBuilder& g, TensorId w,
                                   const CatalogOp& c, std::mt19937& rng,
                                   bool per_channel, int channels, int axis) {
  std::vector<float> scales(channels);
  if (per_channel) {
    for (float& sc : scales) sc = 0.005f + 0.005f * Int(rng, 0, 3);
    g.QuantizePerChannel(w, scales, std::vector<int64_t>(channels, 0), axis);
  } else {
    const float sc = 0.005f + 0.005f * Int(rng, 0, 3);
    for (float& x : scales) x = sc;
    g.Quantize(w, sc, c.type == tfl::TensorType_UINT8 ? 128 : 0);
  }
  return scales;
}

// An int32 bias of `n` values, scale input scale x weight scale per
// channel.
TensorId QuantBias(SubgraphBuilder& g, std::mt19937& rng, int n, float sx,
                   const std::vector<float>& wscales, int lo, int hi) {
  TensorId b = g.Constant<int32_t>("b", {n}, Ints<int32_t>(rng, n, lo, hi));
  std::vector<float> bscales(n);
  for (int i = 0; i < n; ++i) bscales[i] = sx * wscales[i];
  bool same = true;
  for (float x : bscales) same &= x == bscales[0];
  if (same) {
    g.Quantize(b, bscales[0], 0);
  } else {
    g.QuantizePerChannel(b, bscales, std::vector<int64_t>(n, 0), 0);
  }
  return b;
}

// A binary elementwise op: y = x op z, z an input or a constant, either
// the same shape or a broadcast of x's trailing dimensions.
void BuildBinary(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                 std::string* what) {
  auto& g = b.Subgraph("main");
  const TensorType t = c.type;
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 1, 4), 5);
  std::vector<int32_t> zs = xs;
  if (Int(rng, 0, 1) == 1) {
    zs.assign(xs.end() - Int(rng, 1, static_cast<int>(xs.size())), xs.end());
    for (int32_t& d : zs) {
      if (Int(rng, 0, 2) == 0) d = 1;
    }
  }
  const bool constant = Int(rng, 0, 2) == 0;
  TensorId x = g.Input("x", t, xs);
  TensorId z;
  if (constant) {
    z = Quantized(c) ? QuantConstant(g, "z", zs, c, rng, -128, 127)
                     : g.Constant<float>("z", zs,
                                         c.op == tfl::BuiltinOperator_DIV
                                             ? Floats(rng, Count(zs), 0.5f, 2.0f)
                                             : Floats(rng, Count(zs)));
  } else {
    z = g.Input("z", t, zs);
  }
  ActivationFunctionType act = tfl::ActivationFunctionType_NONE;
  auto op = g.Op(c.op);
  op.In(x, z);
  switch (c.op) {
    case tfl::BuiltinOperator_ADD: {
      tfl::AddOptionsT o;
      o.fused_activation_function = act = DrawActivation(rng);
      op.Options(o);
      break;
    }
    case tfl::BuiltinOperator_SUB: {
      tfl::SubOptionsT o;
      o.fused_activation_function = act = DrawActivation(rng);
      op.Options(o);
      break;
    }
    case tfl::BuiltinOperator_MUL: {
      tfl::MulOptionsT o;
      o.fused_activation_function = act = DrawActivation(rng);
      op.Options(o);
      break;
    }
    case tfl::BuiltinOperator_DIV: {
      tfl::DivOptionsT o;
      o.fused_activation_function = act = DrawActivation(rng);
      op.Options(o);
      break;
    }
    default:
      break;
  }
  std::vector<int32_t> ys = xs;
  TensorId y = op.Out("y", t, ys);
  if (Quantized(c)) {
    g.Quantize(x, 0.02f, Zp(rng, c, -10, 10));
    g.Quantize(z, 0.03f, Zp(rng, c, -10, 10));
    g.Quantize(y, 0.05f, Zp(rng, c, -10, 10));
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " and ", ShapeText(zs),
                       constant ? " (constant)" : "", ", ", ActName(act));
}

void BuildUnary(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                std::string* what) {
  auto& g = b.Subgraph("main");
  const TensorType t = c.type;
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 1, 4), 6);
  TensorId x = g.Input("x", t, xs);
  auto op = g.Op(c.op);
  op.In(x);
  std::string detail;
  if (c.op == tfl::BuiltinOperator_SOFTMAX) {
    tfl::SoftmaxOptionsT o;
    o.beta = Int(rng, 0, 2) == 0 ? 0.5f : 1.0f;
    detail = absl::StrCat(", beta ", o.beta);
    op.Options(o);
  } else if (c.op == tfl::BuiltinOperator_LEAKY_RELU) {
    tfl::LeakyReluOptionsT o;
    o.alpha = 0.2f;
    op.Options(o);
  }
  TensorId y = op.Out("y", t, xs);
  if (Quantized(c)) {
    const float s = 0.02f;
    const int zp = Zp(rng, c, -10, 10);
    g.Quantize(x, s, zp);
    if (c.op == tfl::BuiltinOperator_LOGISTIC ||
        c.op == tfl::BuiltinOperator_SOFTMAX) {
      // As TFLite requires.
      g.Quantize(y, 1.0f / 256, c.type == tfl::TensorType_UINT8 ? 0 : -128);
    } else {
      g.Quantize(y, s, zp);
    }
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), detail);
}

// FULLY_CONNECTED: [batch, in] or, with keep_num_dims drawn, [batch, t,
// in]; float32, int8 (weights per tensor or per channel) or uint8.
void BuildFullyConnected(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                         std::string* what) {
  auto& g = b.Subgraph("main");
  const int batch = Int(rng, 1, 4), in = Int(rng, 1, 16), out = Int(rng, 1, 16);
  const bool rank3 = Int(rng, 0, 2) == 0;
  const int steps = rank3 ? Int(rng, 1, 3) : 1;
  const bool bias = Int(rng, 0, 1) == 1;
  tfl::FullyConnectedOptionsT o;
  o.fused_activation_function = DrawActivation(rng);
  o.keep_num_dims = rank3 && Int(rng, 0, 1) == 1;
  const std::vector<int32_t> xs =
      rank3 ? std::vector<int32_t>{batch, steps, in}
            : std::vector<int32_t>{batch, in};
  const std::vector<int32_t> ys =
      o.keep_num_dims ? std::vector<int32_t>{batch, steps, out}
                      : std::vector<int32_t>{batch * steps, out};
  const bool per_channel =
      c.type == tfl::TensorType_INT8 && Int(rng, 0, 1) == 1;
  TensorId x = g.Input("x", c.type, xs), w, bi = kNoTensor;
  if (!Quantized(c)) {
    w = g.Constant<float>("w", {out, in}, Floats(rng, int64_t{out} * in));
    if (bias) bi = g.Constant<float>("b", {out}, Floats(rng, out));
  } else {
    const float sx = 0.05f;
    w = QuantConstant(g, "w", {out, in}, c, rng, -127, 127);
    g.Quantize(x, sx, Zp(rng, c, -5, 5));
    std::vector<float> ws =
        QuantizeWeights(g, w, c, rng, per_channel, out, /*axis=*/0);
    if (bias) bi = QuantBias(g, rng, out, sx, ws, -500, 500);
  }
  TensorId y = g.Op(c.op).In(x, w, bi).Options(o).Out("y", c.type, ys);
  if (Quantized(c)) g.Quantize(y, 0.1f, Zp(rng, c, -5, 5));
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " x [", out, ",", in, "]",
                       per_channel ? " per-channel" : "", bias ? " + bias" : "",
                       o.keep_num_dims ? ", keep_num_dims" : "", ", ",
                       ActName(o.fused_activation_function));
}

// CONV_2D and DEPTHWISE_CONV_2D, NHWC: strides (each axis its own),
// dilations, SAME/VALID, depth multiplier, fused activation; int8 weights
// per tensor or per channel, uint8 per tensor.
void BuildConv(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
               std::string* what) {
  auto& g = b.Subgraph("main");
  const bool depthwise = c.op == tfl::BuiltinOperator_DEPTHWISE_CONV_2D;
  const int kh = Int(rng, 1, 3), kw = Int(rng, 1, 3);
  const int dh = Int(rng, 0, 2) == 0 ? 2 : 1, dw = Int(rng, 0, 2) == 0 ? 2 : 1;
  const int ekh = (kh - 1) * dh + 1, ekw = (kw - 1) * dw + 1;
  const int h = Int(rng, std::max(3, ekh), 9), w = Int(rng, std::max(3, ekw), 9);
  const int cin = Int(rng, 1, 6);
  const int multiplier = depthwise ? Int(rng, 1, 2) : 1;
  const int cout = depthwise ? cin * multiplier : Int(rng, 1, 8);
  const int sh = Int(rng, 1, 2), sw = Int(rng, 1, 2);
  const bool same = Int(rng, 0, 1) == 1;
  const auto act = DrawActivation(rng);
  const int oh = same ? (h + sh - 1) / sh : (h - ekh) / sh + 1;
  const int ow = same ? (w + sw - 1) / sw : (w - ekw) / sw + 1;
  const std::vector<int32_t> fshape =
      depthwise ? std::vector<int32_t>{1, kh, kw, cout}
                : std::vector<int32_t>{cout, kh, kw, cin};
  const bool per_channel =
      c.type == tfl::TensorType_INT8 && Int(rng, 0, 3) != 0;
  TensorId x = g.Input("x", c.type, {1, h, w, cin});
  TensorId f, bias;
  const float sx = 0.05f;
  if (!Quantized(c)) {
    f = g.Constant<float>("f", fshape, Floats(rng, Count(fshape)));
    bias = g.Constant<float>("b", {cout}, Floats(rng, cout));
  } else {
    f = QuantConstant(g, "f", fshape, c, rng, -127, 127);
    std::vector<float> ws = QuantizeWeights(g, f, c, rng, per_channel, cout,
                                            depthwise ? 3 : 0);
    bias = QuantBias(g, rng, cout, sx, ws, -300, 300);
    g.Quantize(x, sx, Zp(rng, c, -5, 5));
  }
  auto op = g.Op(c.op);
  op.In(x, f, bias);
  if (depthwise) {
    tfl::DepthwiseConv2DOptionsT o;
    o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_w = sw;
    o.stride_h = sh;
    o.dilation_w_factor = dw;
    o.dilation_h_factor = dh;
    o.depth_multiplier = multiplier;
    o.fused_activation_function = act;
    op.Options(o);
  } else {
    tfl::Conv2DOptionsT o;
    o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_w = sw;
    o.stride_h = sh;
    o.dilation_w_factor = dw;
    o.dilation_h_factor = dh;
    o.fused_activation_function = act;
    op.Options(o);
  }
  TensorId y = op.Out("y", c.type, {1, oh, ow, cout});
  if (Quantized(c)) g.Quantize(y, 0.1f, Zp(rng, c, -5, 5));
  g.Output(y);
  *what = absl::StrCat(
      c.name, " [1,", h, ",", w, ",", cin, "] filter ", ShapeText(fshape),
      per_channel ? " per-channel" : "", " stride ", sh, "x", sw,
      " dilation ", dh, "x", dw, same ? " SAME" : " VALID", ", ", ActName(act));
}

// TRANSPOSE_CONV: inputs (output shape, weights [O,kh,kw,I], x, bias);
// int8 weights per tensor.
void BuildTransposeConv(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                        std::string* what) {
  auto& g = b.Subgraph("main");
  const int h = Int(rng, 1, 5), w = Int(rng, 1, 5), cin = Int(rng, 1, 4);
  const int cout = Int(rng, 1, 4), k = Int(rng, 1, 3), s = Int(rng, 1, 2);
  const bool same = Int(rng, 0, 1) == 1;
  const int oh = same ? h * s : (h - 1) * s + k;
  const int ow = same ? w * s : (w - 1) * s + k;
  TensorId shape = g.Constant<int32_t>("shape", {4}, {1, oh, ow, cout});
  const std::vector<int32_t> fshape = {cout, k, k, cin};
  TensorId x = g.Input("x", c.type, {1, h, w, cin});
  TensorId f, bias;
  const float sx = 0.05f;
  if (!Quantized(c)) {
    f = g.Constant<float>("f", fshape, Floats(rng, Count(fshape)));
    bias = g.Constant<float>("b", {cout}, Floats(rng, cout));
  } else {
    f = QuantConstant(g, "f", fshape, c, rng, -127, 127);
    std::vector<float> ws = QuantizeWeights(g, f, c, rng, false, cout, 0);
    bias = QuantBias(g, rng, cout, sx, ws, -300, 300);
    g.Quantize(x, sx, Zp(rng, c, -5, 5));
  }
  tfl::TransposeConvOptionsT o;
  o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
  o.stride_w = o.stride_h = s;
  TensorId y = g.Op(c.op).In(shape, f, x, bias).Options(o).Out(
      "y", c.type, {1, oh, ow, cout});
  if (Quantized(c)) g.Quantize(y, 0.1f, Zp(rng, c, -5, 5));
  g.Output(y);
  *what = absl::StrCat(c.name, " [1,", h, ",", w, ",", cin, "] filter ",
                       ShapeText(fshape), " stride ", s,
                       same ? " SAME" : " VALID");
}

void BuildPool(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
               std::string* what) {
  auto& g = b.Subgraph("main");
  const int h = Int(rng, 2, 9), w = Int(rng, 2, 9), ch = Int(rng, 1, 6);
  const int kh = Int(rng, 1, std::min(3, h)), kw = Int(rng, 2, std::min(3, w));
  const int sh = Int(rng, 1, 2), sw = Int(rng, 1, 2);
  const bool same = Int(rng, 0, 1) == 1;
  const auto act = DrawActivation(rng);
  const int oh = same ? (h + sh - 1) / sh : (h - kh) / sh + 1;
  const int ow = same ? (w + sw - 1) / sw : (w - kw) / sw + 1;
  TensorId x = g.Input("x", c.type, {1, h, w, ch});
  tfl::Pool2DOptionsT o;
  o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
  o.stride_w = sw;
  o.stride_h = sh;
  o.filter_width = kw;
  o.filter_height = kh;
  o.fused_activation_function = act;
  TensorId y = g.Op(c.op).In(x).Options(o).Out("y", c.type, {1, oh, ow, ch});
  if (Quantized(c)) {
    const int zp = Zp(rng, c, -5, 5);
    g.Quantize(x, 0.05f, zp);
    g.Quantize(y, 0.05f, zp);
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " [1,", h, ",", w, ",", ch, "] ", kh, "x", kw,
                       " stride ", sh, "x", sw, same ? " SAME" : " VALID", ", ",
                       ActName(act));
}

// MEAN of a 4D tensor over drawn axes (adjacent runs, the last axis
// included), keep_dims either way.
void BuildMean(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
               std::string* what) {
  auto& g = b.Subgraph("main");
  const std::vector<int32_t> xs = {Int(rng, 1, 2), Int(rng, 1, 6),
                                   Int(rng, 1, 6), Int(rng, 1, 8)};
  static const std::vector<std::vector<int32_t>> kAxes = {
      {1, 2}, {1, 2}, {1}, {2}, {3}, {2, 3}, {1, 2, 3}, {-3, -2}};
  const std::vector<int32_t> axes = kAxes[Int(rng, 0, 7)];
  tfl::ReducerOptionsT o;
  o.keep_dims = Int(rng, 0, 2) != 0;
  std::vector<int32_t> ys;
  for (int d = 0; d < 4; ++d) {
    bool reduced = false;
    for (int32_t a : axes) reduced |= (a + 4) % 4 == d;
    if (!reduced) {
      ys.push_back(xs[d]);
    } else if (o.keep_dims) {
      ys.push_back(1);
    }
  }
  TensorId x = g.Input("x", c.type, xs);
  TensorId ax = g.Constant<int32_t>("axes", {static_cast<int32_t>(axes.size())},
                                    axes);
  TensorId y = g.Op(c.op).In(x, ax).Options(o).Out("y", c.type, ys);
  if (Quantized(c)) {
    g.Quantize(x, 0.05f, Zp(rng, c, -5, 5));
    g.Quantize(y, 0.05f, Zp(rng, c, -5, 5));
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " over ", ShapeText(axes),
                       o.keep_dims ? ", keep_dims" : "");
}

// RESHAPE, SQUEEZE, EXPAND_DIMS: the same elements in another shape (the
// same quantization in and out).
void BuildReshape(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                  std::string* what) {
  auto& g = b.Subgraph("main");
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 2, 4), 5);
  std::vector<int32_t> ys;
  TensorId second = kNoTensor;
  std::string how;
  if (c.op == tfl::BuiltinOperator_SQUEEZE) {
    xs.insert(xs.begin() + Int(rng, 0, static_cast<int>(xs.size())), 1);
    // Every 1 goes (all of them: a scalar).
    for (int32_t d : xs) {
      if (d != 1) ys.push_back(d);
    }
  } else if (c.op == tfl::BuiltinOperator_EXPAND_DIMS) {
    const int axis = Int(rng, 0, static_cast<int>(xs.size()));
    ys = xs;
    ys.insert(ys.begin() + axis, 1);
    second = g.Constant<int32_t>("axis", {}, {axis});
    how = absl::StrCat(" at axis ", axis);
  } else {
    const int32_t n = static_cast<int32_t>(Count(xs));
    ys = {1, n};
    second = g.Constant<int32_t>("shape", {2}, {1, n});
  }
  TensorId x = g.Input("x", c.type, xs);
  auto op = g.Op(c.op);
  if (second != kNoTensor) {
    op.In(x, second);
  } else {
    op.In(x);
  }
  if (c.op == tfl::BuiltinOperator_RESHAPE) {
    tfl::ReshapeOptionsT o;
    o.new_shape = ys;
    op.Options(o);
  } else if (c.op == tfl::BuiltinOperator_SQUEEZE) {
    op.Options(tfl::SqueezeOptionsT{});
  } else {
    op.Options(tfl::ExpandDimsOptionsT{});
  }
  TensorId y = op.Out("y", c.type, ys);
  if (Quantized(c)) {
    const int zp = Zp(rng, c, -5, 5);
    g.Quantize(x, 0.05f, zp);
    g.Quantize(y, 0.05f, zp);
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " to ", ShapeText(ys), how);
}

void BuildConcat(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                 std::string* what) {
  auto& g = b.Subgraph("main");
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 1, 4), 4);
  const int rank = static_cast<int>(xs.size());
  const int axis = Int(rng, 0, rank - 1);
  std::vector<int32_t> zs = xs, ys = xs;
  zs[axis] = Int(rng, 1, 4);
  ys[axis] = xs[axis] + zs[axis];
  TensorId x = g.Input("x", c.type, xs);
  TensorId z = g.Input("z", c.type, zs);
  tfl::ConcatenationOptionsT o;
  // A negative axis counts from the end.
  o.axis = Int(rng, 0, 2) == 0 ? axis - rank : axis;
  TensorId y = g.Op(c.op).In(x, z).Options(o).Out("y", c.type, ys);
  if (Quantized(c)) {
    const int zp = Zp(rng, c, -5, 5);
    g.Quantize(x, 0.05f, zp);
    g.Quantize(z, 0.05f, zp);
    g.Quantize(y, 0.05f, zp);
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " and ", ShapeText(zs),
                       " on axis ", o.axis);
}

// PAD and PADV2 (with a constant pad value), non-negative paddings.
void BuildPad(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
              std::string* what) {
  auto& g = b.Subgraph("main");
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 1, 4), 5);
  std::vector<int32_t> pads, ys = xs;
  for (size_t d = 0; d < xs.size(); ++d) {
    const int before = Int(rng, 0, 2), after = Int(rng, 0, 2);
    pads.push_back(before);
    pads.push_back(after);
    ys[d] += before + after;
  }
  TensorId x = g.Input("x", c.type, xs);
  TensorId p = g.Constant<int32_t>(
      "paddings", {static_cast<int32_t>(xs.size()), 2}, pads);
  auto op = g.Op(c.op);
  const int zp = Quantized(c) ? Zp(rng, c, -5, 5) : 0;
  if (c.op == tfl::BuiltinOperator_PADV2) {
    TensorId v = Quantized(c) ? QuantConstant(g, "value", {}, c, rng, -20, 20)
                              : g.Constant<float>("value", {}, Floats(rng, 1));
    if (Quantized(c)) g.Quantize(v, 0.05f, zp);
    op.In(x, p, v).Options(tfl::PadV2OptionsT{});
  } else {
    op.In(x, p).Options(tfl::PadOptionsT{});
  }
  TensorId y = op.Out("y", c.type, ys);
  if (Quantized(c)) {
    g.Quantize(x, 0.05f, zp);
    g.Quantize(y, 0.05f, zp);
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " by ", ShapeText(pads));
}

void BuildResizeBilinear(const CatalogOp& c, std::mt19937& rng,
                         ModelBuilder& b, std::string* what) {
  auto& g = b.Subgraph("main");
  const int h = Int(rng, 1, 6), w = Int(rng, 1, 6), ch = Int(rng, 1, 4);
  const int oh = Int(rng, 1, 10), ow = Int(rng, 1, 10);
  tfl::ResizeBilinearOptionsT o;
  const int mode = Int(rng, 0, 2);
  o.align_corners = mode == 1;
  o.half_pixel_centers = mode == 2;
  TensorId x = g.Input("x", c.type, {1, h, w, ch});
  TensorId size = g.Constant<int32_t>("size", {2}, {oh, ow});
  TensorId y = g.Op(c.op).In(x, size).Options(o).Out("y", c.type,
                                                      {1, oh, ow, ch});
  if (Quantized(c)) {
    const int zp = Zp(rng, c, -5, 5);
    g.Quantize(x, 0.05f, zp);
    g.Quantize(y, 0.05f, zp);
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " [1,", h, ",", w, ",", ch, "] to ", oh, "x",
                       ow, o.align_corners ? ", align_corners" : "",
                       o.half_pixel_centers ? ", half_pixel_centers" : "");
}

void BuildDepthToSpace(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                       std::string* what) {
  auto& g = b.Subgraph("main");
  const int bs = Int(rng, 2, 3), h = Int(rng, 1, 4), w = Int(rng, 1, 4);
  const int ch = Int(rng, 1, 3);
  TensorId x = g.Input("x", c.type, {1, h, w, ch * bs * bs});
  tfl::DepthToSpaceOptionsT o;
  o.block_size = bs;
  TensorId y = g.Op(c.op).In(x).Options(o).Out("y", c.type,
                                                {1, h * bs, w * bs, ch});
  g.Output(y);
  *what = absl::StrCat(c.name, " [1,", h, ",", w, ",", ch * bs * bs,
                       "] block ", bs);
}

// PRELU: a 4D input, one constant alpha per channel.
void BuildPrelu(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                std::string* what) {
  auto& g = b.Subgraph("main");
  const std::vector<int32_t> xs = {1, Int(rng, 1, 5), Int(rng, 1, 5),
                                   Int(rng, 1, 6)};
  TensorId x = g.Input("x", c.type, xs);
  TensorId alpha = g.Constant<float>("alpha", {1, 1, xs[3]},
                                     Floats(rng, xs[3], 0.0f, 0.5f));
  TensorId y = g.Op(c.op).In(x, alpha).Out("y", c.type, xs);
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs));
}

// QUANTIZE (float32 to int8) and DEQUANTIZE (int8 to float32), per tensor.
void BuildConvert(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                  std::string* what) {
  auto& g = b.Subgraph("main");
  const std::vector<int32_t> xs = DrawShape(rng, Int(rng, 1, 4), 5);
  const bool quantize = c.op == tfl::BuiltinOperator_QUANTIZE;
  const float scale = 0.01f * Int(rng, 1, 5);
  const int zp = Int(rng, -10, 10);
  TensorId x = g.Input(
      "x", quantize ? tfl::TensorType_FLOAT32 : tfl::TensorType_INT8, xs);
  TensorId y = g.Op(c.op).In(x).Out(
      "y", quantize ? tfl::TensorType_INT8 : tfl::TensorType_FLOAT32, xs);
  g.Quantize(quantize ? y : x, scale, zp);
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " scale ", scale,
                       " zero point ", zp);
}

}  // namespace

const std::vector<CatalogOp>& Catalog() {
  static const std::vector<CatalogOp>* kCatalog = [] {
    auto* v = new std::vector<CatalogOp>;
    auto add = [&](tfl::BuiltinOperator op, TensorType type) {
      std::string name = tfl::EnumNameBuiltinOperator(op);
      if (type == tfl::TensorType_INT8) name += "/int8";
      if (type == tfl::TensorType_UINT8) name += "/uint8";
      v->push_back({name, op, type});
    };
    using O = tfl::BuiltinOperator;
    // Every op the in-tree plugins (example, xnnpack) claim, in float32.
    for (O op :
         {O::BuiltinOperator_ADD, O::BuiltinOperator_SUB,
          O::BuiltinOperator_MUL, O::BuiltinOperator_DIV,
          O::BuiltinOperator_MAXIMUM, O::BuiltinOperator_MINIMUM,
          O::BuiltinOperator_SQUARED_DIFFERENCE, O::BuiltinOperator_RELU,
          O::BuiltinOperator_RELU6, O::BuiltinOperator_RELU_N1_TO_1,
          O::BuiltinOperator_LOGISTIC, O::BuiltinOperator_TANH,
          O::BuiltinOperator_ABS, O::BuiltinOperator_NEG,
          O::BuiltinOperator_SQUARE, O::BuiltinOperator_FLOOR,
          O::BuiltinOperator_CEIL, O::BuiltinOperator_ROUND,
          O::BuiltinOperator_SQRT, O::BuiltinOperator_RSQRT,
          O::BuiltinOperator_HARD_SWISH, O::BuiltinOperator_ELU,
          O::BuiltinOperator_LEAKY_RELU, O::BuiltinOperator_PRELU,
          O::BuiltinOperator_SOFTMAX, O::BuiltinOperator_FULLY_CONNECTED,
          O::BuiltinOperator_CONV_2D, O::BuiltinOperator_DEPTHWISE_CONV_2D,
          O::BuiltinOperator_TRANSPOSE_CONV,
          O::BuiltinOperator_AVERAGE_POOL_2D, O::BuiltinOperator_MAX_POOL_2D,
          O::BuiltinOperator_MEAN, O::BuiltinOperator_RESHAPE,
          O::BuiltinOperator_SQUEEZE, O::BuiltinOperator_EXPAND_DIMS,
          O::BuiltinOperator_CONCATENATION, O::BuiltinOperator_PAD,
          O::BuiltinOperator_PADV2, O::BuiltinOperator_RESIZE_BILINEAR,
          O::BuiltinOperator_DEPTH_TO_SPACE, O::BuiltinOperator_QUANTIZE,
          O::BuiltinOperator_DEQUANTIZE}) {
      add(op, tfl::TensorType_FLOAT32);
    }
    // Int8 where Graft's CPU kernels have an int8 kernel to compare with
    // (the RELU family has none).
    for (O op :
         {O::BuiltinOperator_ADD, O::BuiltinOperator_SUB,
          O::BuiltinOperator_MUL, O::BuiltinOperator_LOGISTIC,
          O::BuiltinOperator_SOFTMAX, O::BuiltinOperator_FULLY_CONNECTED,
          O::BuiltinOperator_CONV_2D, O::BuiltinOperator_DEPTHWISE_CONV_2D,
          O::BuiltinOperator_TRANSPOSE_CONV,
          O::BuiltinOperator_AVERAGE_POOL_2D, O::BuiltinOperator_MAX_POOL_2D,
          O::BuiltinOperator_MEAN, O::BuiltinOperator_RESHAPE,
          O::BuiltinOperator_CONCATENATION, O::BuiltinOperator_PAD,
          O::BuiltinOperator_PADV2, O::BuiltinOperator_SQUEEZE,
          O::BuiltinOperator_EXPAND_DIMS,
          O::BuiltinOperator_RESIZE_BILINEAR}) {
      add(op, tfl::TensorType_INT8);
    }
    // Uint8 (TFLite's older quantization: asymmetric, weights per tensor),
    // where Graft's CPU kernels have one (no uint8 convolutions).
    for (O op :
         {O::BuiltinOperator_ADD, O::BuiltinOperator_SUB,
          O::BuiltinOperator_MUL, O::BuiltinOperator_LOGISTIC,
          O::BuiltinOperator_SOFTMAX, O::BuiltinOperator_FULLY_CONNECTED,
          O::BuiltinOperator_AVERAGE_POOL_2D,
          O::BuiltinOperator_MAX_POOL_2D}) {
      add(op, tfl::TensorType_UINT8);
    }
    return v;
  }();
  return *kCatalog;
}

absl::StatusOr<DrawnModel> DrawOneOpModel(const CatalogOp& op,
                                          std::mt19937& rng) {
  ModelBuilder b;
  DrawnModel out;
  switch (op.op) {
    case tfl::BuiltinOperator_ADD:
    case tfl::BuiltinOperator_SUB:
    case tfl::BuiltinOperator_MUL:
    case tfl::BuiltinOperator_DIV:
    case tfl::BuiltinOperator_MAXIMUM:
    case tfl::BuiltinOperator_MINIMUM:
    case tfl::BuiltinOperator_SQUARED_DIFFERENCE:
      BuildBinary(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_FULLY_CONNECTED:
      BuildFullyConnected(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_CONV_2D:
    case tfl::BuiltinOperator_DEPTHWISE_CONV_2D:
      BuildConv(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_TRANSPOSE_CONV:
      BuildTransposeConv(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_AVERAGE_POOL_2D:
    case tfl::BuiltinOperator_MAX_POOL_2D:
      BuildPool(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_MEAN:
      BuildMean(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_RESHAPE:
    case tfl::BuiltinOperator_SQUEEZE:
    case tfl::BuiltinOperator_EXPAND_DIMS:
      BuildReshape(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_CONCATENATION:
      BuildConcat(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_PAD:
    case tfl::BuiltinOperator_PADV2:
      BuildPad(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_RESIZE_BILINEAR:
      BuildResizeBilinear(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_DEPTH_TO_SPACE:
      BuildDepthToSpace(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_PRELU:
      BuildPrelu(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_QUANTIZE:
    case tfl::BuiltinOperator_DEQUANTIZE:
      BuildConvert(op, rng, b, &out.description);
      break;
    default:
      BuildUnary(op, rng, b, &out.description);
      break;
  }
  auto model = std::move(b).Build();
  if (!model.ok()) {
    return absl::InternalError(absl::StrCat("drawing ", out.description, ": ",
                                            model.status().message()));
  }
  out.model = *std::move(model);
  return out;
}

absl::StatusOr<std::vector<NamedModel>> BuiltinModels(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<NamedModel> out;
  {
    // x -> FC(16) RELU -> FC(8) -> ADD(x2) -> LOGISTIC.
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {2, 12});
    TensorId x2 = g.Input("x2", tfl::TensorType_FLOAT32, {2, 8});
    tfl::FullyConnectedOptionsT relu;
    relu.fused_activation_function = tfl::ActivationFunctionType_RELU;
    TensorId w1 = g.Constant<float>("w1", {16, 12}, Floats(rng, 16 * 12));
    TensorId b1 = g.Constant<float>("b1", {16}, Floats(rng, 16));
    TensorId h = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                     .In(x, w1, b1)
                     .Options(relu)
                     .Out("h", tfl::TensorType_FLOAT32, {2, 16});
    TensorId w2 = g.Constant<float>("w2", {8, 16}, Floats(rng, 8 * 16));
    TensorId h2 = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                      .In(h, w2, kNoTensor)
                      .Options(tfl::FullyConnectedOptionsT{})
                      .Out("h2", tfl::TensorType_FLOAT32, {2, 8});
    TensorId s = g.Op(tfl::BuiltinOperator_ADD)
                     .In(h2, x2)
                     .Options(tfl::AddOptionsT{})
                     .Out("s", tfl::TensorType_FLOAT32, {2, 8});
    TensorId y = g.Op(tfl::BuiltinOperator_LOGISTIC)
                     .In(s)
                     .Out("y", tfl::TensorType_FLOAT32, {2, 8});
    g.Output(y);
    auto m = std::move(b).Build();
    if (!m.ok()) return m.status();
    out.push_back({"builtin:mlp", *std::move(m)});
  }
  {
    // CONV_2D RELU -> MAX_POOL_2D -> RESHAPE -> FC -> SOFTMAX.
    ModelBuilder b;
    auto& g = b.Subgraph("main");
    TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, 8, 8, 3});
    TensorId f = g.Constant<float>("f", {4, 3, 3, 3}, Floats(rng, 4 * 27));
    TensorId fb = g.Constant<float>("fb", {4}, Floats(rng, 4));
    tfl::Conv2DOptionsT co;
    co.padding = tfl::Padding_SAME;
    co.stride_w = co.stride_h = 1;
    co.fused_activation_function = tfl::ActivationFunctionType_RELU;
    TensorId c = g.Op(tfl::BuiltinOperator_CONV_2D)
                     .In(x, f, fb)
                     .Options(co)
                     .Out("c", tfl::TensorType_FLOAT32, {1, 8, 8, 4});
    tfl::Pool2DOptionsT po;
    po.padding = tfl::Padding_VALID;
    po.stride_w = po.stride_h = 2;
    po.filter_width = po.filter_height = 2;
    TensorId p = g.Op(tfl::BuiltinOperator_MAX_POOL_2D)
                     .In(c)
                     .Options(po)
                     .Out("p", tfl::TensorType_FLOAT32, {1, 4, 4, 4});
    TensorId shape = g.Constant<int32_t>("shape", {2}, {1, 64});
    tfl::ReshapeOptionsT ro;
    ro.new_shape = {1, 64};
    TensorId r = g.Op(tfl::BuiltinOperator_RESHAPE)
                     .In(p, shape)
                     .Options(ro)
                     .Out("r", tfl::TensorType_FLOAT32, {1, 64});
    TensorId w = g.Constant<float>("w", {10, 64}, Floats(rng, 640));
    TensorId l = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED)
                     .In(r, w, kNoTensor)
                     .Options(tfl::FullyConnectedOptionsT{})
                     .Out("l", tfl::TensorType_FLOAT32, {1, 10});
    tfl::SoftmaxOptionsT so;
    so.beta = 1;
    TensorId y = g.Op(tfl::BuiltinOperator_SOFTMAX)
                     .In(l)
                     .Options(so)
                     .Out("y", tfl::TensorType_FLOAT32, {1, 10});
    g.Output(y);
    auto m = std::move(b).Build();
    if (!m.ok()) return m.status();
    out.push_back({"builtin:cnn", *std::move(m)});
  }
  return out;
}

}  // namespace graft::check
