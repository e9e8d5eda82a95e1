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

// A binary elementwise op: y = x op z, z an input or a constant, either
// the same shape or a broadcast of x's trailing dimensions.
void BuildBinary(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                 std::string* what) {
  auto& g = b.Subgraph("main");
  const TensorType t = c.int8 ? tfl::TensorType_INT8 : tfl::TensorType_FLOAT32;
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
    z = c.int8 ? g.Constant<int8_t>("z", zs,
                                    Ints<int8_t>(rng, Count(zs), -128, 127))
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
  if (c.int8) {
    g.Quantize(x, 0.02f, Int(rng, -10, 10));
    g.Quantize(z, 0.03f, Int(rng, -10, 10));
    g.Quantize(y, 0.05f, Int(rng, -10, 10));
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " and ", ShapeText(zs),
                       constant ? " (constant)" : "", ", ", ActName(act));
}

void BuildUnary(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                std::string* what) {
  auto& g = b.Subgraph("main");
  const TensorType t = c.int8 ? tfl::TensorType_INT8 : tfl::TensorType_FLOAT32;
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 1, 4), 6);
  TensorId x = g.Input("x", t, xs);
  auto op = g.Op(c.op);
  op.In(x);
  if (c.op == tfl::BuiltinOperator_SOFTMAX) {
    tfl::SoftmaxOptionsT o;
    o.beta = 1.0f;
    op.Options(o);
  } else if (c.op == tfl::BuiltinOperator_LEAKY_RELU) {
    tfl::LeakyReluOptionsT o;
    o.alpha = 0.2f;
    op.Options(o);
  }
  TensorId y = op.Out("y", t, xs);
  if (c.int8) {
    const float s = 0.02f;
    const int zp = Int(rng, -10, 10);
    g.Quantize(x, s, zp);
    if (c.op == tfl::BuiltinOperator_LOGISTIC ||
        c.op == tfl::BuiltinOperator_SOFTMAX) {
      g.Quantize(y, 1.0f / 256, -128);  // As TFLite requires.
    } else {
      g.Quantize(y, s, zp);
    }
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs));
}

void BuildFullyConnected(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                         std::string* what) {
  auto& g = b.Subgraph("main");
  const int batch = Int(rng, 1, 4), in = Int(rng, 1, 16), out = Int(rng, 1, 16);
  const bool bias = Int(rng, 0, 1) == 1;
  tfl::FullyConnectedOptionsT o;
  o.fused_activation_function = DrawActivation(rng);
  TensorId x, w, bi = kNoTensor, y;
  if (!c.int8) {
    x = g.Input("x", tfl::TensorType_FLOAT32, {batch, in});
    w = g.Constant<float>("w", {out, in}, Floats(rng, int64_t{out} * in));
    if (bias) bi = g.Constant<float>("b", {out}, Floats(rng, out));
    y = g.Op(c.op).In(x, w, bi).Options(o).Out("y", tfl::TensorType_FLOAT32,
                                               {batch, out});
  } else {
    const float sx = 0.05f, sw = 0.01f;
    x = g.Input("x", tfl::TensorType_INT8, {batch, in});
    w = g.Constant<int8_t>("w", {out, in},
                           Ints<int8_t>(rng, int64_t{out} * in, -127, 127));
    g.Quantize(x, sx, Int(rng, -5, 5));
    g.Quantize(w, sw, 0);
    if (bias) {
      bi = g.Constant<int32_t>("b", {out}, Ints<int32_t>(rng, out, -500, 500));
      g.Quantize(bi, sx * sw, 0);
    }
    y = g.Op(c.op).In(x, w, bi).Options(o).Out("y", tfl::TensorType_INT8,
                                               {batch, out});
    g.Quantize(y, 0.1f, Int(rng, -5, 5));
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " [", batch, ",", in, "] x [", out, ",", in, "]",
                       bias ? " + bias" : "", ", ",
                       ActName(o.fused_activation_function));
}

// CONV_2D and DEPTHWISE_CONV_2D, NHWC.
void BuildConv(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
               std::string* what) {
  auto& g = b.Subgraph("main");
  const bool depthwise = c.op == tfl::BuiltinOperator_DEPTHWISE_CONV_2D;
  const int h = Int(rng, 3, 9), w = Int(rng, 3, 9), cin = Int(rng, 1, 6);
  const int cout = depthwise ? cin : Int(rng, 1, 8);
  const int kh = Int(rng, 1, 3), kw = Int(rng, 1, 3);
  const int stride = Int(rng, 1, 2);
  const bool same = Int(rng, 0, 1) == 1;
  const auto act = DrawActivation(rng);
  const int oh = same ? (h + stride - 1) / stride : (h - kh) / stride + 1;
  const int ow = same ? (w + stride - 1) / stride : (w - kw) / stride + 1;
  const std::vector<int32_t> fshape =
      depthwise ? std::vector<int32_t>{1, kh, kw, cout}
                : std::vector<int32_t>{cout, kh, kw, cin};
  const TensorType t = c.int8 ? tfl::TensorType_INT8 : tfl::TensorType_FLOAT32;
  TensorId x = g.Input("x", t, {1, h, w, cin});
  TensorId f, bias;
  std::vector<float> fscales(cout);
  const float sx = 0.05f;
  if (!c.int8) {
    f = g.Constant<float>("f", fshape, Floats(rng, Count(fshape)));
    bias = g.Constant<float>("b", {cout}, Floats(rng, cout));
  } else {
    f = g.Constant<int8_t>("f", fshape,
                           Ints<int8_t>(rng, Count(fshape), -127, 127));
    for (float& s : fscales) s = 0.005f + 0.005f * Int(rng, 0, 3);
    g.QuantizePerChannel(f, fscales, std::vector<int64_t>(cout, 0),
                         depthwise ? 3 : 0);
    bias =
        g.Constant<int32_t>("b", {cout}, Ints<int32_t>(rng, cout, -300, 300));
    std::vector<float> bscales(cout);
    for (int i = 0; i < cout; ++i) bscales[i] = sx * fscales[i];
    g.QuantizePerChannel(bias, bscales, std::vector<int64_t>(cout, 0), 0);
    g.Quantize(x, sx, Int(rng, -5, 5));
  }
  auto op = g.Op(c.op);
  op.In(x, f, bias);
  if (depthwise) {
    tfl::DepthwiseConv2DOptionsT o;
    o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_w = o.stride_h = stride;
    o.depth_multiplier = 1;
    o.fused_activation_function = act;
    op.Options(o);
  } else {
    tfl::Conv2DOptionsT o;
    o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
    o.stride_w = o.stride_h = stride;
    o.fused_activation_function = act;
    op.Options(o);
  }
  TensorId y = op.Out("y", t, {1, oh, ow, cout});
  if (c.int8) g.Quantize(y, 0.1f, Int(rng, -5, 5));
  g.Output(y);
  *what = absl::StrCat(c.name, " [1,", h, ",", w, ",", cin, "] filter ",
                       ShapeText(fshape), " stride ", stride,
                       same ? " SAME" : " VALID", ", ", ActName(act));
}

void BuildPool(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
               std::string* what) {
  auto& g = b.Subgraph("main");
  const int h = Int(rng, 2, 9), w = Int(rng, 2, 9), ch = Int(rng, 1, 6);
  const int k = Int(rng, 2, std::min(3, std::min(h, w)));
  const int stride = Int(rng, 1, 2);
  const bool same = Int(rng, 0, 1) == 1;
  const int oh = same ? (h + stride - 1) / stride : (h - k) / stride + 1;
  const int ow = same ? (w + stride - 1) / stride : (w - k) / stride + 1;
  const TensorType t = c.int8 ? tfl::TensorType_INT8 : tfl::TensorType_FLOAT32;
  TensorId x = g.Input("x", t, {1, h, w, ch});
  tfl::Pool2DOptionsT o;
  o.padding = same ? tfl::Padding_SAME : tfl::Padding_VALID;
  o.stride_w = o.stride_h = stride;
  o.filter_width = o.filter_height = k;
  TensorId y = g.Op(c.op).In(x).Options(o).Out("y", t, {1, oh, ow, ch});
  if (c.int8) {
    const int zp = Int(rng, -5, 5);
    g.Quantize(x, 0.05f, zp);
    g.Quantize(y, 0.05f, zp);
  }
  g.Output(y);
  *what = absl::StrCat(c.name, " [1,", h, ",", w, ",", ch, "] ", k, "x", k,
                       " stride ", stride, same ? " SAME" : " VALID");
}

void BuildMean(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
               std::string* what) {
  auto& g = b.Subgraph("main");
  const int h = Int(rng, 1, 6), w = Int(rng, 1, 6), ch = Int(rng, 1, 8);
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, {1, h, w, ch});
  TensorId axes = g.Constant<int32_t>("axes", {2}, {1, 2});
  tfl::ReducerOptionsT o;
  o.keep_dims = true;
  TensorId y = g.Op(c.op).In(x, axes).Options(o).Out(
      "y", tfl::TensorType_FLOAT32, {1, 1, 1, ch});
  g.Output(y);
  *what = absl::StrCat(c.name, " [1,", h, ",", w, ",", ch, "] over [1,2]");
}

void BuildReshape(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                  std::string* what) {
  auto& g = b.Subgraph("main");
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 2, 4), 5);
  const int32_t n = static_cast<int32_t>(Count(xs));
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, xs);
  TensorId shape = g.Constant<int32_t>("shape", {2}, {1, n});
  tfl::ReshapeOptionsT o;
  o.new_shape = {1, n};
  TensorId y = g.Op(c.op).In(x, shape).Options(o).Out(
      "y", tfl::TensorType_FLOAT32, {1, n});
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " to [1,", n, "]");
}

void BuildConcat(const CatalogOp& c, std::mt19937& rng, ModelBuilder& b,
                 std::string* what) {
  auto& g = b.Subgraph("main");
  std::vector<int32_t> xs = DrawShape(rng, Int(rng, 1, 4), 4);
  const int axis = Int(rng, 0, static_cast<int>(xs.size()) - 1);
  std::vector<int32_t> zs = xs, ys = xs;
  zs[axis] = Int(rng, 1, 4);
  ys[axis] = xs[axis] + zs[axis];
  TensorId x = g.Input("x", tfl::TensorType_FLOAT32, xs);
  TensorId z = g.Input("z", tfl::TensorType_FLOAT32, zs);
  tfl::ConcatenationOptionsT o;
  o.axis = axis;
  TensorId y =
      g.Op(c.op).In(x, z).Options(o).Out("y", tfl::TensorType_FLOAT32, ys);
  g.Output(y);
  *what = absl::StrCat(c.name, " ", ShapeText(xs), " and ", ShapeText(zs),
                       " on axis ", axis);
}

}  // namespace

const std::vector<CatalogOp>& Catalog() {
  static const std::vector<CatalogOp>* kCatalog = [] {
    auto* v = new std::vector<CatalogOp>;
    auto add = [&](tfl::BuiltinOperator op, bool int8) {
      std::string name = tfl::EnumNameBuiltinOperator(op);
      if (int8) name += "/int8";
      v->push_back({name, op, int8});
    };
    for (auto op : {tfl::BuiltinOperator_ADD, tfl::BuiltinOperator_SUB,
                    tfl::BuiltinOperator_MUL, tfl::BuiltinOperator_DIV,
                    tfl::BuiltinOperator_MAXIMUM, tfl::BuiltinOperator_MINIMUM,
                    tfl::BuiltinOperator_SQUARED_DIFFERENCE}) {
      add(op, false);
    }
    for (auto op :
         {tfl::BuiltinOperator_RELU, tfl::BuiltinOperator_RELU6,
          tfl::BuiltinOperator_RELU_N1_TO_1, tfl::BuiltinOperator_LOGISTIC,
          tfl::BuiltinOperator_TANH, tfl::BuiltinOperator_ABS,
          tfl::BuiltinOperator_NEG, tfl::BuiltinOperator_SQUARE,
          tfl::BuiltinOperator_FLOOR, tfl::BuiltinOperator_CEIL,
          tfl::BuiltinOperator_HARD_SWISH, tfl::BuiltinOperator_ELU,
          tfl::BuiltinOperator_LEAKY_RELU, tfl::BuiltinOperator_SOFTMAX}) {
      add(op, false);
    }
    for (auto op :
         {tfl::BuiltinOperator_FULLY_CONNECTED, tfl::BuiltinOperator_CONV_2D,
          tfl::BuiltinOperator_DEPTHWISE_CONV_2D,
          tfl::BuiltinOperator_AVERAGE_POOL_2D,
          tfl::BuiltinOperator_MAX_POOL_2D, tfl::BuiltinOperator_MEAN,
          tfl::BuiltinOperator_RESHAPE, tfl::BuiltinOperator_CONCATENATION}) {
      add(op, false);
    }
    // Int8 only where Graft's CPU kernels have an int8 kernel to compare
    // with (RELU has none).
    for (auto op :
         {tfl::BuiltinOperator_ADD, tfl::BuiltinOperator_SUB,
          tfl::BuiltinOperator_MUL, tfl::BuiltinOperator_LOGISTIC,
          tfl::BuiltinOperator_FULLY_CONNECTED, tfl::BuiltinOperator_CONV_2D,
          tfl::BuiltinOperator_DEPTHWISE_CONV_2D,
          tfl::BuiltinOperator_MAX_POOL_2D}) {
      add(op, true);
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
    case tfl::BuiltinOperator_AVERAGE_POOL_2D:
    case tfl::BuiltinOperator_MAX_POOL_2D:
      BuildPool(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_MEAN:
      BuildMean(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_RESHAPE:
      BuildReshape(op, rng, b, &out.description);
      break;
    case tfl::BuiltinOperator_CONCATENATION:
      BuildConcat(op, rng, b, &out.description);
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
