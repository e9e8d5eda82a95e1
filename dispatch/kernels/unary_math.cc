// Unary math (float32, some integer): EXP, LOG, SQRT, RSQRT, SIN, COS, ABS,
// NEG, FLOOR, CEIL, ROUND (half to even, as TFLite), SIGN, SQUARE.
#include <cmath>
#include <type_traits>

#include "dispatch/kernels/unary.h"

namespace graft {
namespace kernels {
namespace {

#define GRAFT_FLOAT_UNARY(Name, expr)                          \
  struct Name##Op {                                            \
    static float Apply(float x, const UnaryState&) { return expr; } \
  };                                                           \
  absl::Status Prepare##Name(PrepareContext& ctx) {            \
    return PrepareUnary<Name##Op>(ctx);                        \
  }
GRAFT_FLOAT_UNARY(Exp, std::exp(x))
GRAFT_FLOAT_UNARY(Log, std::log(x))
GRAFT_FLOAT_UNARY(Sqrt, std::sqrt(x))
GRAFT_FLOAT_UNARY(Rsqrt, 1.0f / std::sqrt(x))
GRAFT_FLOAT_UNARY(Sin, std::sin(x))
GRAFT_FLOAT_UNARY(Cos, std::cos(x))
GRAFT_FLOAT_UNARY(Floor, std::floor(x))
GRAFT_FLOAT_UNARY(Ceil, std::ceil(x))
#undef GRAFT_FLOAT_UNARY

struct RoundOp {
  // TFLite's RoundToNearest: ties go to the even neighbour.
  static float Apply(float x, const UnaryState&) {
    float floor_val = std::floor(x);
    float diff = x - floor_val;
    if (diff < 0.5f || (diff == 0.5f && std::fmod(floor_val, 2.0f) == 0)) {
      return floor_val;
    }
    return floor_val + 1.0f;
  }
};
struct AbsOp {
  template <typename T>
  static T Apply(T x, const UnaryState&) { return x < 0 ? -x : x; }
};
struct NegOp {
  template <typename T>
  static T Apply(T x, const UnaryState&) { return -x; }
};
struct SignOp {
  template <typename T>
  static T Apply(T x, const UnaryState&) {
    return static_cast<T>((T{0} < x) - (x < T{0}));
  }
};
struct SquareOp {
  template <typename T>
  static T Apply(T x, const UnaryState&) { return x * x; }
};

absl::Status PrepareRound(PrepareContext& ctx) {
  return PrepareUnary<RoundOp>(ctx);
}
absl::Status PrepareAbs(PrepareContext& ctx) {
  return PrepareUnary<AbsOp, true, true>(ctx);
}
absl::Status PrepareNeg(PrepareContext& ctx) {
  return PrepareUnary<NegOp, true, true>(ctx);
}
absl::Status PrepareSign(PrepareContext& ctx) {
  return PrepareUnary<SignOp, true>(ctx);
}
absl::Status PrepareSquare(PrepareContext& ctx) {
  return PrepareUnary<SquareOp, true, true>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Exp);
GRAFT_DEFINE_KERNEL(Log);
GRAFT_DEFINE_KERNEL(Sqrt);
GRAFT_DEFINE_KERNEL(Rsqrt);
GRAFT_DEFINE_KERNEL(Sin);
GRAFT_DEFINE_KERNEL(Cos);
GRAFT_DEFINE_KERNEL(Floor);
GRAFT_DEFINE_KERNEL(Ceil);
GRAFT_DEFINE_KERNEL(Round);
GRAFT_DEFINE_KERNEL(Abs);
GRAFT_DEFINE_KERNEL(Neg);
GRAFT_DEFINE_KERNEL(Sign);
GRAFT_DEFINE_KERNEL(Square);

}  // namespace graft
