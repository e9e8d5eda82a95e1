#include "xnnpack_graph.h"

#include <cstdio>

namespace graft_xnnpack {
namespace {

// XNN_FLAG_TENSORFLOW_SAME_PADDING, XNN_FLAG_TENSORFLOW_RESHAPE_2D,
// XNN_FLAG_TENSORFLOW_LEGACY_MODE and XNN_FLAG_ALIGN_CORNERS (xnnpack.h),
// repeated so the plugin needs no XNNPACK header.
constexpr uint32_t kSamePadding = 0x4;
constexpr uint32_t kReshape2d = 0x4;
constexpr uint32_t kLegacyResize = 0x4;
constexpr uint32_t kAlignCorners = 0x8;

std::string DimsString(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// Formats one line into a std::string.
template <typename... Args>
std::string Format(const char* format, Args... args) {
  char buffer[320];
  std::snprintf(buffer, sizeof(buffer), format, args...);
  return buffer;
}

class Checker {
 public:
  Checker(const NodeSpec& node, const std::vector<ValueSpec>& values)
      : node_(node), values_(values) {}

  std::string Run();

 private:
  // Operand counts; optional inputs (at `optional`, or none when -1) may be
  // kNoValue. Every other id must name a value.
  bool Operands(size_t inputs, size_t outputs, int optional = -1) {
    if (node_.inputs.size() != inputs || node_.outputs.size() != outputs) {
      return Fail(Format("takes %zu inputs and %zu outputs, has %zu and %zu",
                         inputs, outputs, node_.inputs.size(),
                         node_.outputs.size()));
    }
    for (size_t i = 0; i < inputs; ++i) {
      if (node_.inputs[i] == kNoValue && static_cast<int>(i) == optional) {
        continue;
      }
      if (node_.inputs[i] >= values_.size()) {
        return Fail(Format("input %zu is value %u, out of range [0, %zu)", i,
                           node_.inputs[i], values_.size()));
      }
    }
    if (outputs > 0 && node_.outputs[0] >= values_.size()) {
      return Fail(Format("output is value %u, out of range [0, %zu)",
                         node_.outputs[0], values_.size()));
    }
    return true;
  }
  bool Length(const char* field, size_t have, size_t want) {
    if (have == want) return true;
    return Fail(Format("%s has %zu entries, expected %zu", field, have, want));
  }
  bool Window(bool with_padding, bool with_dilation) {
    return (!with_padding || Length("padding", node_.padding.size(), 4)) &&
           Length("kernel", node_.kernel.size(), 2) &&
           Length("stride", node_.stride.size(), 2) &&
           (!with_dilation || Length("dilation", node_.dilation.size(), 2));
  }
  const std::vector<uint64_t>& In(size_t i) const {
    return values_[node_.inputs[i]].dims;
  }
  const std::vector<uint64_t>& Out() const {
    return values_[node_.outputs[0]].dims;
  }
  bool Rank(const char* what, const std::vector<uint64_t>& dims, size_t rank) {
    if (dims.size() == rank) return true;
    return Fail(Format("%s %s must have rank %zu", what,
                       DimsString(dims).c_str(), rank));
  }
  bool OutputIs(const std::vector<uint64_t>& want) {
    if (Out() == want) return true;
    return Fail(Format("output shape %s, expected %s",
                       DimsString(Out()).c_str(), DimsString(want).c_str()));
  }
  // The optional bias (input 2): absent, or [channels].
  bool Bias(uint64_t channels) {
    if (node_.inputs[2] == kNoValue ||
        In(2) == std::vector<uint64_t>{channels}) {
      return true;
    }
    return Fail(Format("bias shape %s, expected [%llu]",
                       DimsString(In(2)).c_str(),
                       (unsigned long long)channels));
  }
  bool Fail(std::string message) {
    error_ = std::move(message);
    return false;
  }
  bool Binary();
  bool Unary();
  bool Convolution();
  bool DepthwiseConvolution();
  bool Deconvolution();
  bool FullyConnected();
  bool Pooling(bool with_dilation);
  bool Prelu();
  bool Pad();
  bool Resize();
  bool DepthToSpace();
  // The 2D output size of a convolution or pooling node, checked > 0.
  bool WindowOutput(const std::vector<uint64_t>& in, uint64_t* out_h,
                    uint64_t* out_w);

  const NodeSpec& node_;
  const std::vector<ValueSpec>& values_;
  std::string error_;
};

bool Checker::Binary() {
  if (!Operands(2, 1)) return false;
  const std::vector<uint64_t>& a = In(0);
  const std::vector<uint64_t>& b = In(1);
  std::vector<uint64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t da =
        i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    uint64_t db =
        i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1) {
      return Fail(Format("input shapes %s and %s do not broadcast",
                         DimsString(a).c_str(), DimsString(b).c_str()));
    }
    out[i] = da == 1 ? db : da;
  }
  return OutputIs(out);
}

bool Checker::Unary() {
  if (!Operands(1, 1)) return false;
  if (node_.kind == NodeKind::SOFTMAX && In(0).empty()) {
    return Fail("SOFTMAX input must have rank >= 1");
  }
  return OutputIs(In(0));
}

bool Checker::WindowOutput(const std::vector<uint64_t>& in, uint64_t* out_h,
                           uint64_t* out_w) {
  const bool same = (node_.flags & kSamePadding) != 0;
  const bool dilated = !node_.dilation.empty();
  if (same && !node_.padding.empty() &&
      (node_.padding[0] | node_.padding[1] | node_.padding[2] |
       node_.padding[3]) != 0) {
    return Fail("explicit padding together with SAME padding");
  }
  if (node_.kernel[0] == 0 || node_.kernel[1] == 0 || node_.stride[0] == 0 ||
      node_.stride[1] == 0 ||
      (dilated && (node_.dilation[0] == 0 || node_.dilation[1] == 0))) {
    return Fail("kernel, stride and dilation must be positive");
  }
  uint64_t pad_h =
      node_.padding.empty() ? 0 : uint64_t{node_.padding[0]} + node_.padding[2];
  uint64_t pad_w =
      node_.padding.empty() ? 0 : uint64_t{node_.padding[1]} + node_.padding[3];
  *out_h = WindowOutputSize(in[1], pad_h, node_.kernel[0], node_.stride[0],
                            dilated ? node_.dilation[0] : 1, same);
  *out_w = WindowOutputSize(in[2], pad_w, node_.kernel[1], node_.stride[1],
                            dilated ? node_.dilation[1] : 1, same);
  if (*out_h == 0 || *out_w == 0) {
    return Fail(Format("window %ux%u does not fit input %s", node_.kernel[0],
                       node_.kernel[1], DimsString(in).c_str()));
  }
  return true;
}

bool Checker::Convolution() {
  if (!Operands(3, 1, 2) || !Window(true, true)) return false;
  const std::vector<uint64_t>& in = In(0);
  const std::vector<uint64_t>& filter = In(1);
  const uint64_t groups = node_.groups;
  const uint64_t out_c = groups * node_.group_output_channels;
  if (!Rank("input", in, 4) || !Rank("filter", filter, 4)) return false;
  if (groups == 0 || node_.group_input_channels == 0 ||
      node_.group_output_channels == 0 ||
      in[3] != groups * node_.group_input_channels) {
    return Fail(Format("input channels %llu != groups %llu x %llu",
                       (unsigned long long)in[3], (unsigned long long)groups,
                       (unsigned long long)node_.group_input_channels));
  }
  std::vector<uint64_t> want_filter = {out_c, node_.kernel[0], node_.kernel[1],
                                       node_.group_input_channels};
  if (filter != want_filter) {
    return Fail(Format("filter shape %s, expected %s",
                       DimsString(filter).c_str(),
                       DimsString(want_filter).c_str()));
  }
  if (!Bias(out_c)) return false;
  uint64_t h, w;
  if (!WindowOutput(in, &h, &w)) return false;
  return OutputIs({in[0], h, w, out_c});
}

bool Checker::DepthwiseConvolution() {
  if (!Operands(3, 1, 2) || !Window(true, true)) return false;
  const std::vector<uint64_t>& in = In(0);
  if (!Rank("input", in, 4)) return false;
  const uint64_t out_c = node_.input_channels * node_.depth_multiplier;
  if (in[3] != node_.input_channels || out_c == 0) {
    return Fail(Format("input channels %llu != input_channels %llu",
                       (unsigned long long)in[3],
                       (unsigned long long)node_.input_channels));
  }
  std::vector<uint64_t> want_filter = {1, node_.kernel[0], node_.kernel[1],
                                       out_c};
  if (In(1) != want_filter) {
    return Fail(Format("filter shape %s, expected %s",
                       DimsString(In(1)).c_str(),
                       DimsString(want_filter).c_str()));
  }
  if (!Bias(out_c)) return false;
  uint64_t h, w;
  if (!WindowOutput(in, &h, &w)) return false;
  return OutputIs({in[0], h, w, out_c});
}

bool Checker::Deconvolution() {
  if (!Operands(3, 1, 2) || !Window(true, true) ||
      !Length("adjustment", node_.adjustment.size(), 2)) {
    return false;
  }
  const std::vector<uint64_t>& in = In(0);
  const uint64_t groups = node_.groups;
  const uint64_t out_c = groups * node_.group_output_channels;
  if (!Rank("input", in, 4)) return false;
  if (groups == 0 || node_.group_output_channels == 0 ||
      in[3] != groups * node_.group_input_channels || in[1] == 0 ||
      in[2] == 0) {
    return Fail("input channels do not match groups x group_input_channels");
  }
  std::vector<uint64_t> want_filter = {out_c, node_.kernel[0], node_.kernel[1],
                                       node_.group_input_channels};
  if (In(1) != want_filter) {
    return Fail(Format("filter shape %s, expected %s",
                       DimsString(In(1)).c_str(),
                       DimsString(want_filter).c_str()));
  }
  if (!Bias(out_c)) return false;
  uint64_t size[2];
  for (int d = 0; d < 2; ++d) {
    if (node_.kernel[d] == 0 || node_.stride[d] == 0 ||
        node_.dilation[d] == 0 || node_.adjustment[d] >= node_.stride[d]) {
      return Fail(
          "kernel, stride and dilation must be positive and the "
          "adjustment smaller than the stride");
    }
    uint64_t full = node_.stride[d] * (in[1 + d] - 1) + node_.adjustment[d] +
                    (uint64_t{node_.kernel[d]} - 1) * node_.dilation[d] + 1;
    uint64_t pad = d == 0 ? uint64_t{node_.padding[0]} + node_.padding[2]
                          : uint64_t{node_.padding[1]} + node_.padding[3];
    if (pad >= full) return Fail("padding removes the whole output");
    size[d] = full - pad;
    // This XNNPACK splits a strided deconvolution into one convolution per
    // output phase; with fewer output pixels than the stride some phase has
    // none, and its setup then reads out of bounds (crashes, or wrong
    // outputs: found by the drawn-shapes op test).
    if (node_.stride[d] > 1 && size[d] < node_.stride[d]) {
      return Fail(Format("output %s %llu is smaller than the stride %u, "
                         "where this XNNPACK's deconvolution breaks",
                         d == 0 ? "height" : "width",
                         (unsigned long long)size[d], node_.stride[d]));
    }
  }
  return OutputIs({in[0], size[0], size[1], out_c});
}

bool Checker::FullyConnected() {
  if (!Operands(3, 1, 2)) return false;
  const std::vector<uint64_t>& in = In(0);
  const std::vector<uint64_t>& filter = In(1);
  if (!Rank("filter", filter, 2)) return false;
  const uint64_t units = filter[0], depth = filter[1];
  if (units == 0 || depth == 0) return Fail("empty filter");
  if (!Bias(units)) return false;
  if ((node_.flags & kReshape2d) != 0) {
    uint64_t n = NumElements(in);
    if (n == UINT64_MAX || n % depth != 0 || n == 0) {
      return Fail(Format("input %s is not a whole number of rows of %llu",
                         DimsString(in).c_str(), (unsigned long long)depth));
    }
    return OutputIs({n / depth, units});
  }
  if (in.empty() || in.back() != depth) {
    return Fail(Format("input %s does not end in depth %llu",
                       DimsString(in).c_str(), (unsigned long long)depth));
  }
  std::vector<uint64_t> out = in;
  out.back() = units;
  return OutputIs(out);
}

bool Checker::Pooling(bool with_dilation) {
  if (!Operands(1, 1) || !Window(true, with_dilation)) return false;
  const std::vector<uint64_t>& in = In(0);
  if (!Rank("input", in, 4)) return false;
  if (uint64_t{node_.kernel[0]} * node_.kernel[1] <= 1) {
    return Fail("XNNPACK refuses 1x1 pooling");
  }
  uint64_t h, w;
  if (!WindowOutput(in, &h, &w)) return false;
  return OutputIs({in[0], h, w, in[3]});
}

bool Checker::Prelu() {
  if (!Operands(2, 1)) return false;
  const std::vector<uint64_t>& in = In(0);
  if (!Rank("input", in, 4)) return false;
  if (In(1) != std::vector<uint64_t>{in[3]}) {
    return Fail(Format("slope shape %s, expected [%llu]",
                       DimsString(In(1)).c_str(), (unsigned long long)in[3]));
  }
  return OutputIs(in);
}

bool Checker::Pad() {
  if (!Operands(1, 1)) return false;
  const std::vector<uint64_t>& in = In(0);
  if (!Length("pre_paddings", node_.pre_paddings.size(), in.size()) ||
      !Length("post_paddings", node_.post_paddings.size(), in.size())) {
    return false;
  }
  std::vector<uint64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (node_.pre_paddings[i] > (1u << 30) ||
        node_.post_paddings[i] > (1u << 30)) {
      return Fail("padding too large");
    }
    out[i] = in[i] + node_.pre_paddings[i] + node_.post_paddings[i];
  }
  return OutputIs(out);
}

bool Checker::Resize() {
  if (!Operands(1, 1) || !Length("shape", node_.shape.size(), 2)) return false;
  const std::vector<uint64_t>& in = In(0);
  if (!Rank("input", in, 4)) return false;
  if (node_.shape[0] == 0 || node_.shape[1] == 0) {
    return Fail("empty resize target");
  }
  return OutputIs({in[0], node_.shape[0], node_.shape[1], in[3]});
}

bool Checker::DepthToSpace() {
  if (!Operands(1, 1)) return false;
  const std::vector<uint64_t>& in = In(0);
  const uint64_t b = node_.block_size;
  if (!Rank("input", in, 4)) return false;
  if (b < 2 || in[3] % (b * b) != 0) {
    return Fail(Format("block size %llu does not divide %llu channels",
                       (unsigned long long)b, (unsigned long long)in[3]));
  }
  return OutputIs({in[0], in[1] * b, in[2] * b, in[3] / (b * b)});
}

std::string Checker::Run() {
  // The XNN_FLAG_* bits each kind accepts.
  uint32_t allowed_flags = 0;
  switch (node_.kind) {
    case NodeKind::CONVOLUTION_2D:
    case NodeKind::DEPTHWISE_CONVOLUTION_2D:
    case NodeKind::AVERAGE_POOLING_2D:
    case NodeKind::MAX_POOLING_2D:
      allowed_flags = kSamePadding;
      break;
    case NodeKind::FULLY_CONNECTED:
      allowed_flags = kReshape2d;
      break;
    case NodeKind::STATIC_RESIZE_BILINEAR_2D:
      allowed_flags =
          node_.flags == kAlignCorners ? kAlignCorners : kLegacyResize;
      break;
    default:
      break;
  }
  if ((node_.flags & ~allowed_flags) != 0) {
    return Format("flags 0x%x not accepted by %s", node_.flags,
                  NodeKindName(node_.kind));
  }
  bool ok = false;
  switch (node_.kind) {
    case NodeKind::ADD:
    case NodeKind::SUBTRACT:
    case NodeKind::MULTIPLY:
    case NodeKind::DIVIDE:
    case NodeKind::MAXIMUM:
    case NodeKind::MINIMUM:
    case NodeKind::SQUARED_DIFFERENCE:
      ok = Binary();
      break;
    case NodeKind::CONVOLUTION_2D:
      ok = Convolution();
      break;
    case NodeKind::DEPTHWISE_CONVOLUTION_2D:
      ok = DepthwiseConvolution();
      break;
    case NodeKind::DECONVOLUTION_2D:
      ok = Deconvolution();
      break;
    case NodeKind::FULLY_CONNECTED:
      ok = FullyConnected();
      break;
    case NodeKind::AVERAGE_POOLING_2D:
      ok = Pooling(false);
      break;
    case NodeKind::MAX_POOLING_2D:
      ok = Pooling(true);
      break;
    case NodeKind::GLOBAL_AVERAGE_POOLING_2D:
      ok = Operands(1, 1) && Rank("input", In(0), 4) &&
           OutputIs({In(0)[0], 1, 1, In(0)[3]});
      break;
    case NodeKind::CLAMP:
    case NodeKind::SIGMOID:
    case NodeKind::SOFTMAX:
    case NodeKind::HARDSWISH:
    case NodeKind::LEAKY_RELU:
    case NodeKind::ELU:
    case NodeKind::ABS:
    case NodeKind::CEILING:
    case NodeKind::FLOOR:
    case NodeKind::NEGATE:
    case NodeKind::SQUARE:
    case NodeKind::SQUARE_ROOT:
    case NodeKind::BANKERS_ROUNDING:
    case NodeKind::CONVERT:
      ok = Unary();
      break;
    case NodeKind::PRELU:
      ok = Prelu();
      break;
    case NodeKind::STATIC_RESHAPE:
      ok = Operands(1, 1) && OutputIs(node_.shape) &&
           (NumElements(In(0)) == NumElements(Out()) ||
            Fail("reshape changes the element count"));
      break;
    case NodeKind::STATIC_CONSTANT_PAD:
      ok = Pad();
      break;
    case NodeKind::STATIC_RESIZE_BILINEAR_2D:
      ok = Resize();
      break;
    case NodeKind::DEPTH_TO_SPACE:
      ok = DepthToSpace();
      break;
    default:
      return Format("unknown node kind %u", static_cast<unsigned>(node_.kind));
  }
  return ok ? std::string() : error_;
}

}  // namespace

const char* NodeKindName(NodeKind kind) {
  const char* name = EnumNameNodeKind(kind);
  return name != nullptr && *name != '\0' ? name : "UNKNOWN";
}

uint64_t NumElements(const std::vector<uint64_t>& dims) {
  uint64_t n = 1;
  for (uint64_t d : dims) {
    if (d != 0 && n > UINT64_MAX / 2 / d) return UINT64_MAX;
    n *= d;
  }
  return n;
}

uint64_t WindowOutputSize(uint64_t in, uint64_t padding, uint64_t kernel,
                          uint64_t stride, uint64_t dilation, bool same) {
  if (stride == 0) return 0;
  if (same) return (in + stride - 1) / stride;
  const uint64_t dilated = (kernel - 1) * dilation + 1;
  if (in + padding < dilated) return 0;
  return (in + padding - dilated) / stride + 1;
}

void ExplicitSamePadding(const std::vector<uint64_t>& input_dims,
                         NodeSpec* node) {
  const bool window = node->kind == NodeKind::CONVOLUTION_2D ||
                      node->kind == NodeKind::DEPTHWISE_CONVOLUTION_2D ||
                      node->kind == NodeKind::AVERAGE_POOLING_2D ||
                      node->kind == NodeKind::MAX_POOLING_2D;
  if (!window || (node->flags & kSamePadding) == 0 || input_dims.size() != 4) {
    return;
  }
  uint32_t before[2], after[2];
  for (int d = 0; d < 2; ++d) {
    const uint64_t in = input_dims[1 + d], stride = node->stride[d];
    const uint64_t dilation = node->dilation.empty() ? 1 : node->dilation[d];
    const uint64_t span = (node->kernel[d] - 1) * dilation + 1;
    const uint64_t out =
        WindowOutputSize(in, 0, node->kernel[d], stride, dilation, true);
    const uint64_t reach = (out - 1) * stride + span;
    const uint64_t total = reach > in ? reach - in : 0;
    before[d] = static_cast<uint32_t>(total / 2);
    after[d] = static_cast<uint32_t>(total - total / 2);
  }
  // XNNPACK's order: top, right, bottom, left.
  node->padding = {before[0], after[1], after[0], before[1]};
  node->flags &= ~kSamePadding;
}

std::string CheckNode(const NodeSpec& node,
                      const std::vector<ValueSpec>& values) {
  return Checker(node, values).Run();
}

}  // namespace graft_xnnpack
