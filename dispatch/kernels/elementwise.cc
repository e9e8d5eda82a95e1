// Binary elementwise ops with NumPy/TFLite broadcasting: arithmetic (ADD,
// SUB, MUL, DIV, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, POW, FLOOR_DIV,
// FLOOR_MOD, PRELU, ATAN2), comparisons, logical AND/OR, and
// SELECT/SELECT_V2.
//
// Every op shares one evaluator templated on the element op: the broadcast is
// collapsed at prepare time (kernel_util.h) so eval walks contiguous inner
// runs with a scalar-or-vector operand each, which the compiler vectorizes.
// A float op whose inputs have the same shape also runs piecewise
// (EvalBinaryRange), fused into the convolution that writes an input.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/kernel_util.h"

namespace graft {
namespace kernels {
namespace {

struct BinaryState : KernelState {
  BroadcastPlan plan;
  double lo = 0, hi = 0;  // fused activation clamp (converted per T)
};

template <typename T>
inline T Clamp(T v, T lo, T hi) {
  return std::min(std::max(v, lo), hi);
}

// The element ops. Each is a struct with `static Out Apply(In a, In b)`.
struct AddOp {
  template <typename T>
  static T Apply(T a, T b) { return a + b; }
};
struct SubOp {
  template <typename T>
  static T Apply(T a, T b) { return a - b; }
};
struct MulOp {
  template <typename T>
  static T Apply(T a, T b) { return a * b; }
};
struct DivOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return b == 0 ? T{0} : a / b;  // zero divisors are rejected first
    } else {
      return a / b;
    }
  }
};
struct SquaredDifferenceOp {
  template <typename T>
  static T Apply(T a, T b) { return (a - b) * (a - b); }
};
// TFLite's MaximumOp/MinimumOp: `a > b ? a : b` (so a NaN in `a` yields b).
struct MaximumOp {
  template <typename T>
  static T Apply(T a, T b) { return a > b ? a : b; }
};
struct MinimumOp {
  template <typename T>
  static T Apply(T a, T b) { return a < b ? a : b; }
};
struct PowOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      T r = 1;
      for (T i = 0; i < b; ++i) r *= a;
      return r;
    } else {
      return std::pow(a, b);
    }
  }
};
struct Atan2Op {  // atan2(y, x) of inputs (y, x)
  template <typename T>
  static T Apply(T y, T x) {
    return static_cast<T>(std::atan2(y, x));
  }
};
struct FloorDivOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      T q = a / b;
      if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
      return q;
    } else {
      return std::floor(a / b);
    }
  }
};
struct FloorModOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      T r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      T r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
// PRELU(x, alpha), alpha broadcast against x.
struct PreluOp {
  template <typename T>
  static T Apply(T x, T alpha) { return x >= 0 ? x : x * alpha; }
};
struct LessOp {
  template <typename T>
  static bool Apply(T a, T b) { return a < b; }
};
struct LessEqualOp {
  template <typename T>
  static bool Apply(T a, T b) { return a <= b; }
};
struct GreaterOp {
  template <typename T>
  static bool Apply(T a, T b) { return a > b; }
};
struct GreaterEqualOp {
  template <typename T>
  static bool Apply(T a, T b) { return a >= b; }
};
struct EqualOp {
  template <typename T>
  static bool Apply(T a, T b) { return a == b; }
};
struct NotEqualOp {
  template <typename T>
  static bool Apply(T a, T b) { return a != b; }
};
struct LogicalAndOp {
  template <typename T>
  static bool Apply(T a, T b) { return a && b; }
};
struct LogicalOrOp {
  template <typename T>
  static bool Apply(T a, T b) { return a || b; }
};

// out[i] = clamp(Op(a[i*sa], b[i*sb])), specialized on the stride pattern
// so the common cases are plain vector loops.
template <typename T, typename Out, typename Op, bool kClamp>
GRAFT_SIMD_INLINE void BinaryRun(const T* a, int64_t sa, const T* b, int64_t sb,
                      Out* out, int64_t n, Out lo, Out hi) {
  auto f = [&](T x, T y) -> Out {
    Out v = Op::Apply(x, y);
    if constexpr (kClamp) v = Clamp(v, lo, hi);
    return v;
  };
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const T y = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], y);
  } else if (sa == 0 && sb == 1) {
    const T x = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = f(x, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i * sa], b[i * sb]);
  }
}

CallCounter g_float_binary_calls[2];

void CountFloatBinaryCall(CpuIsa path) {
  g_float_binary_calls[static_cast<int>(path)].fetch_add(
      1, std::memory_order_relaxed);
}

template <typename T, typename Out, typename Op, bool kClamp>
GRAFT_SIMD_INLINE void BinaryRuns(const BroadcastPlan& plan, int64_t begin,
                                  int64_t end, const T* a, const T* b,
                                  Out* out, Out lo, Out hi) {
  ForEachBroadcastRunIn(plan, begin, end, [&](int64_t o, const int64_t* off,
                                              int64_t n, const int64_t* st) {
    BinaryRun<T, Out, Op, kClamp>(a + off[0], st[0], b + off[1], st[1], out + o,
                                  n, lo, hi);
  });
}

#if GRAFT_HAVE_AVX2_FMA_BUILD
// The float ops compiled for AVX2: each is one IEEE operation per element
// (no multiply and add to contract), so the same results 8 lanes at a time.
// `flatten` inlines the broadcast walk and its callback here, so they are
// compiled for AVX2 too.
template <typename Op, bool kClamp>
GRAFT_AVX2_FMA_TARGET __attribute__((flatten)) void BinaryRunsAvx2(
    const BroadcastPlan& plan, int64_t begin, int64_t end, const float* a,
    const float* b, float* out, float lo, float hi) {
  BinaryRuns<float, float, Op, kClamp>(plan, begin, end, a, b, out, lo, hi);
}
#endif

#if GRAFT_HAVE_AVX2_FMA_BUILD
template <typename Op, bool kClamp>
GRAFT_AVX2_FMA_TARGET __attribute__((flatten)) void BinaryRunAvx2(
    const float* a, const float* b, float* out, int64_t n, float lo,
    float hi) {
  BinaryRun<float, float, Op, kClamp>(a, 1, b, 1, out, n, lo, hi);
}
#endif

// The piecewise form of a float op whose inputs both have the output's
// shape (PrepareContext::SetRangeEval): elements [begin, end), one run.
template <typename Op, bool kClamp>
void EvalBinaryRange(EvalContext& ctx, int64_t begin, int64_t end) {
  const auto* s = ctx.state<BinaryState>();
  const float* a = ctx.input(0)->data<float>() + begin;
  const float* b = ctx.input(1)->data<float>() + begin;
  float* out = ctx.output(0)->data<float>() + begin;
  const float lo = static_cast<float>(s->lo), hi = static_cast<float>(s->hi);
#if GRAFT_HAVE_AVX2_FMA_BUILD
  if (CpuHasAvx2Fma()) {
    BinaryRunAvx2<Op, kClamp>(a, b, out, end - begin, lo, hi);
    return;
  }
#endif
  BinaryRun<float, float, Op, kClamp>(a, 1, b, 1, out, end - begin, lo, hi);
}

template <typename T, typename Out, typename Op, bool kClamp>
absl::Status EvalBinary(EvalContext& ctx) {
  const auto* s = ctx.state<BinaryState>();
  const T* a = ctx.input(0)->data<T>();
  const T* b = ctx.input(1)->data<T>();
  Out* out = ctx.output(0)->data<Out>();
  if constexpr (std::is_integral_v<T> &&
                (std::is_same_v<Op, DivOp> || std::is_same_v<Op, FloorDivOp> ||
                 std::is_same_v<Op, FloorModOp>)) {
    // TFLite fails integer division by zero instead of returning garbage.
    const Tensor* divisor = ctx.input(1);
    for (int64_t i = 0; i < divisor->num_elements(); ++i) {
      if (b[i] == 0) return absl::InvalidArgumentError("division by zero");
    }
  }
  const Out lo = static_cast<Out>(s->lo), hi = static_cast<Out>(s->hi);
  auto runs = [&](int64_t begin, int64_t end) {
    if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float>) {
#if GRAFT_HAVE_AVX2_FMA_BUILD
      if (CpuHasAvx2Fma()) {
        BinaryRunsAvx2<Op, kClamp>(s->plan, begin, end, a, b, out, lo, hi);
        return;
      }
#endif
    }
    BinaryRuns<T, Out, Op, kClamp>(s->plan, begin, end, a, b, out, lo, hi);
  };
  if constexpr (std::is_same_v<T, float> && std::is_same_v<Out, float>) {
    CountFloatBinaryCall(CpuHasAvx2Fma() ? CpuIsa::kAvx2 : CpuIsa::kBaseline);
  }
  ParallelForBroadcastRuns(ctx.thread_pool(), s->plan, runs);
  return absl::OkStatus();
}

// Which dtypes an op accepts and whether it has a fused activation.
enum TypeSet : unsigned {
  kFloat = 1,
  kInt32 = 2,
  kInt64 = 4,
  kBool = 8,
  kNumeric = kFloat | kInt32 | kInt64,
};

tfl::ActivationFunctionType FusedActivation(const tfl::OperatorT& op) {
  const auto& o = op.builtin_options;
  if (auto* x = o.AsAddOptions()) return x->fused_activation_function;
  if (auto* x = o.AsSubOptions()) return x->fused_activation_function;
  if (auto* x = o.AsMulOptions()) return x->fused_activation_function;
  if (auto* x = o.AsDivOptions()) return x->fused_activation_function;
  return tfl::ActivationFunctionType_NONE;
}

// Shared prepare: arity, same dtypes, broadcast shape and plan, activation.
// `Out` says whether the output is bool (comparisons) or the input type.
template <typename Op, bool kBoolOut>
absl::Status PrepareBinary(PrepareContext& ctx, unsigned types) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 2, 2, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1));
  Tensor* out = ctx.output(0);
  const tfl::TensorType t = a->type;
  if (b->type != t || IsQuantized(*a)) {
    return ctx.Unsupported();
  }
  unsigned bit = 0;
  if (t == tfl::TensorType_FLOAT32) bit = kFloat;
  if (t == tfl::TensorType_INT32) bit = kInt32;
  if (t == tfl::TensorType_INT64) bit = kInt64;
  if (t == tfl::TensorType_BOOL) bit = kBool;
  tfl::TensorType want_out = kBoolOut ? tfl::TensorType_BOOL : t;
  if ((types & bit) == 0 || out->type != want_out) return ctx.Unsupported();

  GRAFT_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape, b->shape));
  auto* s = MakeState<BinaryState>(ctx);
  const Shape* operands[] = {&a->shape, &b->shape};
  GRAFT_ASSIGN_OR_RETURN(s->plan, MakeBroadcastPlan(shape, operands));
  SplitLongRuns(&s->plan);
  GRAFT_RETURN_IF_ERROR(ctx.SetOutputShape(0, std::move(shape)));

  tfl::ActivationFunctionType act = FusedActivation(ctx.op());
  const bool clamp = act != tfl::ActivationFunctionType_NONE;
  if (t == tfl::TensorType_FLOAT32) {
    float lo, hi;
    GRAFT_RETURN_IF_ERROR(ActivationRange(act, &lo, &hi));
    s->lo = lo, s->hi = hi;
  } else if (t == tfl::TensorType_INT32) {
    int32_t lo, hi;
    ActivationRangeInt(act, &lo, &hi);
    s->lo = lo, s->hi = hi;
  } else if (clamp) {
    return ctx.Unsupported("a fused activation on INT64");
  }

  if constexpr (kBoolOut) {
    switch (t) {
      case tfl::TensorType_FLOAT32:
        ctx.SetEval(EvalBinary<float, bool, Op, false>);
        break;
      case tfl::TensorType_INT32:
        ctx.SetEval(EvalBinary<int32_t, bool, Op, false>);
        break;
      case tfl::TensorType_INT64:
        ctx.SetEval(EvalBinary<int64_t, bool, Op, false>);
        break;
      default:
        ctx.SetEval(EvalBinary<bool, bool, Op, false>);
        break;
    }
  } else {
    switch (t) {
      case tfl::TensorType_FLOAT32:
        ctx.SetEval(clamp ? EvalBinary<float, float, Op, true>
                          : EvalBinary<float, float, Op, false>);
        if (a->shape == b->shape) {
          ctx.SetRangeEval(clamp ? EvalBinaryRange<Op, true>
                                 : EvalBinaryRange<Op, false>);
        }
        break;
      case tfl::TensorType_INT32:
        ctx.SetEval(clamp ? EvalBinary<int32_t, int32_t, Op, true>
                          : EvalBinary<int32_t, int32_t, Op, false>);
        break;
      case tfl::TensorType_INT64:
        ctx.SetEval(EvalBinary<int64_t, int64_t, Op, false>);
        break;
      default:
        return ctx.Unsupported();
    }
  }
  return absl::OkStatus();
}

#define GRAFT_BINARY_PREPARE(Name, Op, types, bool_out)  \
  absl::Status Prepare##Name(PrepareContext& ctx) {      \
    return PrepareBinary<Op, bool_out>(ctx, types);      \
  }
GRAFT_BINARY_PREPARE(Add, AddOp, kNumeric, false)
GRAFT_BINARY_PREPARE(Sub, SubOp, kNumeric, false)
GRAFT_BINARY_PREPARE(Mul, MulOp, kNumeric, false)
GRAFT_BINARY_PREPARE(Div, DivOp, kFloat | kInt32, false)
GRAFT_BINARY_PREPARE(SquaredDifference, SquaredDifferenceOp,
                     kFloat | kInt32, false)
GRAFT_BINARY_PREPARE(Maximum, MaximumOp, kNumeric, false)
GRAFT_BINARY_PREPARE(Minimum, MinimumOp, kNumeric, false)
GRAFT_BINARY_PREPARE(Pow, PowOp, kFloat | kInt32, false)
GRAFT_BINARY_PREPARE(FloorDiv, FloorDivOp, kNumeric, false)
GRAFT_BINARY_PREPARE(FloorMod, FloorModOp, kNumeric, false)
GRAFT_BINARY_PREPARE(Atan2, Atan2Op, kFloat, false)
GRAFT_BINARY_PREPARE(Prelu, PreluOp, kFloat, false)
GRAFT_BINARY_PREPARE(Less, LessOp, kNumeric, true)
GRAFT_BINARY_PREPARE(LessEqual, LessEqualOp, kNumeric, true)
GRAFT_BINARY_PREPARE(Greater, GreaterOp, kNumeric, true)
GRAFT_BINARY_PREPARE(GreaterEqual, GreaterEqualOp, kNumeric, true)
GRAFT_BINARY_PREPARE(Equal, EqualOp, kNumeric | kBool, true)
GRAFT_BINARY_PREPARE(NotEqual, NotEqualOp, kNumeric | kBool, true)
GRAFT_BINARY_PREPARE(LogicalAnd, LogicalAndOp, kBool, true)
GRAFT_BINARY_PREPARE(LogicalOr, LogicalOrOp, kBool, true)
#undef GRAFT_BINARY_PREPARE

// SELECT_V2(cond, x, y): out = cond ? x : y with three-way broadcasting.
// SELECT (v1) is the same when the shapes agree, which is all it allows
// besides a rank-1 condition over the first dim (handled as a broadcast of
// the condition reshaped to [d0, 1, ..., 1]).
struct SelectState : KernelState {
  BroadcastPlan plan;
};

template <typename T>
absl::Status EvalSelect(EvalContext& ctx) {
  const auto* s = ctx.state<SelectState>();
  const bool* c = ctx.input(0)->data<bool>();
  const T* x = ctx.input(1)->data<T>();
  const T* y = ctx.input(2)->data<T>();
  T* out = ctx.output(0)->data<T>();
  ForEachBroadcastRun(s->plan, [&](int64_t o, const int64_t* off, int64_t n,
                                   const int64_t* st) {
    const bool* pc = c + off[0];
    const T* px = x + off[1];
    const T* py = y + off[2];
    for (int64_t i = 0; i < n; ++i) {
      out[o + i] = pc[i * st[0]] ? px[i * st[1]] : py[i * st[2]];
    }
  });
  return absl::OkStatus();
}

absl::Status PrepareSelect(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(CheckArity(ctx, 3, 3, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* c, RequiredInput(ctx, 0));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 1));
  GRAFT_ASSIGN_OR_RETURN(const Tensor* y, RequiredInput(ctx, 2));
  if (c->type != tfl::TensorType_BOOL || x->type != y->type ||
      ctx.output(0)->type != x->type) {
    return ctx.Unsupported();
  }
  Shape cond_shape = c->shape;
  if (c->rank() == 1 && x->rank() > 1 && c->dim(0) == x->dim(0) &&
      c->shape != x->shape) {
    cond_shape.resize(x->rank(), 1);  // SELECT v1's rank-1 condition
  }
  GRAFT_ASSIGN_OR_RETURN(Shape xy, BroadcastShapes(x->shape, y->shape));
  GRAFT_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(cond_shape, xy));
  auto* s = MakeState<SelectState>(ctx);
  const Shape* operands[] = {&cond_shape, &x->shape, &y->shape};
  GRAFT_ASSIGN_OR_RETURN(s->plan, MakeBroadcastPlan(shape, operands));
  GRAFT_RETURN_IF_ERROR(ctx.SetOutputShape(0, std::move(shape)));
  switch (ElementSize(x->type)) {
    case 1:
      ctx.SetEval(EvalSelect<uint8_t>);
      break;
    case 2:
      ctx.SetEval(EvalSelect<uint16_t>);
      break;
    case 4:
      ctx.SetEval(EvalSelect<uint32_t>);
      break;
    case 8:
      ctx.SetEval(EvalSelect<uint64_t>);
      break;
    default:
      return ctx.Unsupported();
  }
  return absl::OkStatus();
}

}  // namespace

int64_t FloatBinaryCallsForTesting(CpuIsa path) {
  const int i = static_cast<int>(path);
  return i < 2 ? g_float_binary_calls[i].load(std::memory_order_relaxed) : 0;
}

}  // namespace kernels

GRAFT_DEFINE_KERNEL(Add);
GRAFT_DEFINE_KERNEL(Sub);
GRAFT_DEFINE_KERNEL(Mul);
GRAFT_DEFINE_KERNEL(Div);
GRAFT_DEFINE_KERNEL(SquaredDifference);
GRAFT_DEFINE_KERNEL(Maximum);
GRAFT_DEFINE_KERNEL(Minimum);
GRAFT_DEFINE_KERNEL(Pow);
GRAFT_DEFINE_KERNEL(FloorDiv);
GRAFT_DEFINE_KERNEL(FloorMod);
GRAFT_DEFINE_KERNEL(Atan2);
GRAFT_DEFINE_KERNEL(Prelu);
GRAFT_DEFINE_KERNEL(Less);
GRAFT_DEFINE_KERNEL(LessEqual);
GRAFT_DEFINE_KERNEL(Greater);
GRAFT_DEFINE_KERNEL(GreaterEqual);
GRAFT_DEFINE_KERNEL(Equal);
GRAFT_DEFINE_KERNEL(NotEqual);
GRAFT_DEFINE_KERNEL(LogicalAnd);
GRAFT_DEFINE_KERNEL(LogicalOr);
GRAFT_DEFINE_KERNEL(Select);

}  // namespace graft
