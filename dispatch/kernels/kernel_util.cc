#include "dispatch/kernels/kernel_util.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"

namespace graft::kernels {

absl::Status CheckArity(const PrepareContext& ctx, int min_in, int max_in,
                        int num_out) {
  GRAFT_KERNEL_CHECK(ctx.num_inputs() >= min_in && ctx.num_inputs() <= max_in,
                     "expected %d to %d inputs, got %d", min_in, max_in,
                     ctx.num_inputs());
  GRAFT_KERNEL_CHECK(ctx.num_outputs() == num_out,
                     "expected %d outputs, got %d", num_out,
                     ctx.num_outputs());
  return absl::OkStatus();
}

absl::StatusOr<const Tensor*> RequiredInput(const PrepareContext& ctx, int i) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("input %d is required but absent", i));
  }
  return t;
}

absl::Status ActivationRange(tfl::ActivationFunctionType act, float* lo,
                             float* hi) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (act) {
    case tfl::ActivationFunctionType_NONE:
      *lo = -kInf, *hi = kInf;
      return absl::OkStatus();
    case tfl::ActivationFunctionType_RELU:
      *lo = 0, *hi = kInf;
      return absl::OkStatus();
    case tfl::ActivationFunctionType_RELU_N1_TO_1:
      *lo = -1, *hi = 1;
      return absl::OkStatus();
    case tfl::ActivationFunctionType_RELU6:
      *lo = 0, *hi = 6;
      return absl::OkStatus();
    default:
      return absl::UnimplementedError(absl::StrFormat(
          "no CPU kernel for fused activation %d",
          static_cast<int>(act)));
  }
}

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const int rank = static_cast<int>(std::max(a.size(), b.size()));
  Shape out(rank);
  for (int i = 0; i < rank; ++i) {
    int ai = static_cast<int>(a.size()) - rank + i;
    int bi = static_cast<int>(b.size()) - rank + i;
    int32_t da = ai >= 0 ? a[ai] : 1;
    int32_t db = bi >= 0 ? b[bi] : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", ShapeToString(a), " and ", ShapeToString(b),
                       " do not broadcast"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("axis %d out of range for rank %d", axis, rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::StatusOr<std::vector<int64_t>> ReadIntValues(const Tensor& t) {
  int64_t n = t.num_elements();
  std::vector<int64_t> v(n);
  if (n > 0 && t.raw_data == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name, "' has no data"));
  }
  if (t.type == tfl::TensorType_INT32) {
    for (int64_t i = 0; i < n; ++i) v[i] = t.data<int32_t>()[i];
  } else if (t.type == tfl::TensorType_INT64) {
    for (int64_t i = 0; i < n; ++i) v[i] = t.data<int64_t>()[i];
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", t.name, "' must be INT32 or INT64, is ",
                     TensorTypeName(t.type)));
  }
  return v;
}

bool IsConstant(const Tensor* t) { return t != nullptr && t->constant; }

absl::StatusOr<Shape> FullyConnectedOutputShape(
    const tfl::FullyConnectedOptionsT* o, const Tensor& in, int64_t m,
    int64_t k, int64_t n) {
  if (o == nullptr || !o->keep_num_dims) {
    return Shape{static_cast<int32_t>(m), static_cast<int32_t>(n)};
  }
  GRAFT_KERNEL_CHECK(in.rank() >= 1 && in.shape.back() == k,
                     "keep_num_dims needs the input's last dim to be %d", k);
  Shape out = in.shape;
  out.back() = static_cast<int32_t>(n);
  return out;
}

// IEEE 754 binary16 -> binary32; exact for every input.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {  // infinity or NaN: keep the payload
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {  // normal
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {  // signed zero
    bits = sign;
  } else {  // subnormal: normalize into a binary32 normal
    int e = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (static_cast<uint32_t>(e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::optional<Shape> StaticDeclaredOutputShape(const PrepareContext& ctx,
                                               int i) {
  const tfl::TensorT& spec = ctx.model_output(i);
  for (int32_t d : spec.shape) {
    if (d < 0) return std::nullopt;
  }
  for (int32_t d : spec.shape_signature) {
    if (d < 0) return std::nullopt;
  }
  return Shape(spec.shape.begin(), spec.shape.end());
}

absl::StatusOr<BroadcastPlan> MakeBroadcastPlan(
    const Shape& out, absl::Span<const Shape* const> operands) {
  BroadcastPlan p;
  p.num_operands = static_cast<int>(operands.size());
  const int rank = static_cast<int>(out.size());
  // Per original dim: size and each operand's stride (0 if broadcast).
  std::vector<int64_t> dims;
  std::vector<std::array<int64_t, 3>> strides;
  std::array<int64_t, 3> running = {1, 1, 1};
  std::vector<std::array<int64_t, 3>> raw(rank);
  for (int d = rank - 1; d >= 0; --d) {
    for (int k = 0; k < p.num_operands; ++k) {
      const Shape& s = *operands[k];
      int sd = static_cast<int>(s.size()) - rank + d;
      int64_t size = sd >= 0 ? s[sd] : 1;
      raw[d][k] = (size == 1 && out[d] != 1) ? 0 : running[k];
      running[k] *= size;
    }
  }
  // Drop size-1 dims, then merge neighbours whose strides chain.
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    if (!dims.empty()) {
      bool mergeable = true;
      for (int k = 0; k < p.num_operands; ++k) {
        if (strides.back()[k] != raw[d][k] * out[d]) mergeable = false;
      }
      if (mergeable) {
        dims.back() *= out[d];
        strides.back() = raw[d];
        continue;
      }
    }
    dims.push_back(out[d]);
    strides.push_back(raw[d]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    strides.push_back({0, 0, 0});
  }
  if (static_cast<int>(dims.size()) > kMaxBroadcastDims) {
    return absl::UnimplementedError(absl::StrFormat(
        "no CPU kernel for broadcasting over %d dims", dims.size()));
  }
  p.rank = static_cast<int>(dims.size());
  for (int d = 0; d < p.rank; ++d) {
    p.out_dims[d] = dims[d];
    for (int k = 0; k < p.num_operands; ++k) p.strides[k][d] = strides[d][k];
  }
  return p;
}

void SplitLongRuns(BroadcastPlan* p) {
  const int64_t n = p->out_dims[p->rank - 1];
  if (p->rank == kMaxBroadcastDims || n <= 2 * kMaxRunPiece) return;
  int64_t piece = 0;
  for (const int64_t step : {int64_t{64}, int64_t{1}}) {
    for (int64_t l = kMinRunPiece; piece == 0 && l <= kMaxRunPiece; l += step) {
      if (n % l == 0) piece = l;
    }
  }
  if (piece == 0) return;
  const int r = p->rank - 1;
  p->out_dims[r] = n / piece;
  p->out_dims[r + 1] = piece;
  for (int k = 0; k < p->num_operands; ++k) {
    p->strides[k][r + 1] = p->strides[k][r];
    p->strides[k][r] *= piece;
  }
  ++p->rank;
}

absl::StatusOr<MatMulGeometry> ResolveBatchMatMul(const PrepareContext& ctx,
                                                  const Tensor& lhs,
                                                  const Tensor& rhs) {
  GRAFT_KERNEL_CHECK(lhs.rank() >= 2 && rhs.rank() >= 2,
                     "operands must be at least 2-D, got %s and %s",
                     ShapeToString(lhs.shape), ShapeToString(rhs.shape));
  const auto* o = ctx.op().builtin_options.AsBatchMatMulOptions();
  MatMulGeometry g;
  g.adj_x = o && o->adj_x, g.adj_y = o && o->adj_y;
  const int lr = lhs.rank(), rr = rhs.rank();
  g.m = g.adj_x ? lhs.dim(lr - 1) : lhs.dim(lr - 2);
  g.k = g.adj_x ? lhs.dim(lr - 2) : lhs.dim(lr - 1);
  const int64_t rk = g.adj_y ? rhs.dim(rr - 1) : rhs.dim(rr - 2);
  g.n = g.adj_y ? rhs.dim(rr - 2) : rhs.dim(rr - 1);
  GRAFT_KERNEL_CHECK(rk == g.k,
                     "contracting dims differ: lhs %s, rhs %s (adj_x %d, "
                     "adj_y %d)",
                     ShapeToString(lhs.shape), ShapeToString(rhs.shape),
                     g.adj_x, g.adj_y);
  g.lhs_stride_m = g.adj_x ? 1 : g.k;
  g.lhs_stride_k = g.adj_x ? g.m : 1;
  g.rhs_stride_k = g.adj_y ? 1 : g.n;
  g.rhs_stride_n = g.adj_y ? g.k : 1;
  g.lhs_batch_elems = g.m * g.k;
  g.rhs_batch_elems = g.k * g.n;
  Shape lb(lhs.shape.begin(), lhs.shape.end() - 2);
  Shape rb(rhs.shape.begin(), rhs.shape.end() - 2);
  GRAFT_ASSIGN_OR_RETURN(Shape ob, BroadcastShapes(lb, rb));
  const int br = static_cast<int>(ob.size());
  lb.insert(lb.begin(), br - lb.size(), 1);
  rb.insert(rb.begin(), br - rb.size(), 1);
  g.rhs_batches = NumElements(rb);
  const int64_t nb = NumElements(ob);
  g.batches.resize(nb);
  for (int64_t b = 0; b < nb; ++b) {
    int64_t rem = b, li = 0, ri = 0, lstride = 1, rstride = 1;
    for (int d = br - 1; d >= 0; --d) {
      const int64_t idx = rem % ob[d];
      rem /= ob[d];
      li += (lb[d] == 1 ? 0 : idx) * lstride;
      ri += (rb[d] == 1 ? 0 : idx) * rstride;
      lstride *= lb[d];
      rstride *= rb[d];
    }
    g.batches[b] = {li, ri};
  }
  g.out = ob;
  g.out.push_back(static_cast<int32_t>(g.m));
  g.out.push_back(static_cast<int32_t>(g.n));
  return g;
}

}  // namespace graft::kernels
