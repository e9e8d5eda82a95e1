// Activation functions (float32): RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1,
// LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH, GELU (tanh approximation and
// exact erf form), ELU. Formulas follow TFLite's reference kernels.
#include <algorithm>
#include <cmath>

#include "dispatch/kernels/unary.h"

namespace graft {
namespace kernels {
namespace {

struct ReluOp {
  template <typename T>
  static T Apply(T x, const UnaryState&) { return std::max(x, T{0}); }
};
struct Relu6Op {
  static float Apply(float x, const UnaryState&) {
    return std::min(std::max(x, 0.0f), 6.0f);
  }
};
struct ReluN1To1Op {
  static float Apply(float x, const UnaryState&) {
    return std::min(std::max(x, -1.0f), 1.0f);
  }
};
struct Relu0To1Op {
  static float Apply(float x, const UnaryState&) {
    return std::min(std::max(x, 0.0f), 1.0f);
  }
};
struct LeakyReluOp {
  static float Apply(float x, const UnaryState& s) {
    return x > 0 ? x : x * s.alpha;
  }
};
struct LogisticOp {
  static float Apply(float x, const UnaryState&) {
    return 1.0f / (1.0f + std::exp(-x));
  }
};
struct TanhOp {
  static float Apply(float x, const UnaryState&) { return std::tanh(x); }
};
struct HardSwishOp {
  static float Apply(float x, const UnaryState&) {
    return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f;
  }
};
struct GeluTanhOp {
  static float Apply(float x, const UnaryState&) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x *
           (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
  }
};
struct GeluErfOp {
  static float Apply(float x, const UnaryState&) {
    constexpr float kSqrtHalf = 0.7071067811865476f;
    return 0.5f * x * (1.0f + std::erf(x * kSqrtHalf));
  }
};
struct EluOp {
  static float Apply(float x, const UnaryState&) {
    return x < 0 ? std::expm1(x) : x;
  }
};

absl::Status PrepareRelu(PrepareContext& ctx) {
  return PrepareUnary<ReluOp, /*kInt32=*/true>(ctx);
}
absl::Status PrepareRelu6(PrepareContext& ctx) {
  return PrepareUnary<Relu6Op>(ctx);
}
absl::Status PrepareReluN1To1(PrepareContext& ctx) {
  return PrepareUnary<ReluN1To1Op>(ctx);
}
absl::Status PrepareRelu0To1(PrepareContext& ctx) {
  return PrepareUnary<Relu0To1Op>(ctx);
}
absl::Status PrepareLeakyRelu(PrepareContext& ctx) {
  GRAFT_RETURN_IF_ERROR(PrepareUnary<LeakyReluOp>(ctx));
  const auto* o = ctx.op().builtin_options.AsLeakyReluOptions();
  ctx.state<UnaryState>()->alpha = o ? o->alpha : 0.0f;
  return absl::OkStatus();
}
absl::Status PrepareLogistic(PrepareContext& ctx) {
  return PrepareUnary<LogisticOp>(ctx);
}
absl::Status PrepareTanh(PrepareContext& ctx) {
  return PrepareUnary<TanhOp>(ctx);
}
absl::Status PrepareHardSwish(PrepareContext& ctx) {
  return PrepareUnary<HardSwishOp>(ctx);
}
absl::Status PrepareGelu(PrepareContext& ctx) {
  const auto* o = ctx.op().builtin_options.AsGeluOptions();
  return o && o->approximate ? PrepareUnary<GeluTanhOp>(ctx)
                             : PrepareUnary<GeluErfOp>(ctx);
}
absl::Status PrepareElu(PrepareContext& ctx) {
  return PrepareUnary<EluOp>(ctx);
}

}  // namespace
}  // namespace kernels

GRAFT_DEFINE_KERNEL(Relu);
GRAFT_DEFINE_KERNEL(Relu6);
GRAFT_DEFINE_KERNEL(ReluN1To1);
GRAFT_DEFINE_KERNEL(Relu0To1);
GRAFT_DEFINE_KERNEL(LeakyRelu);
GRAFT_DEFINE_KERNEL(Logistic);
GRAFT_DEFINE_KERNEL(Tanh);
GRAFT_DEFINE_KERNEL(HardSwish);
GRAFT_DEFINE_KERNEL(Gelu);
GRAFT_DEFINE_KERNEL(Elu);

}  // namespace graft
