// Activation functions (float32): RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1,
// LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH, GELU (tanh approximation and
// exact erf form), ELU. Formulas follow TFLite's reference kernels; GELU's
// exact form runs 8 lanes at a time with vector_math.h's own erf (within a
// few float epsilons of |x|, not bit for bit with libm's erf).
#include <algorithm>
#include <cmath>

#include "dispatch/kernels/call_counter.h"
#include "dispatch/kernels/float_simd.h"
#include "dispatch/kernels/unary.h"
#include "dispatch/kernels/vector_math.h"

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
  static float Apply(float x, const UnaryState&) { return HardSwish(x); }
};
// HARD_SWISH 8 floats at a time (HardSwishRun, float_simd.h): per lane the
// operations of the scalar form in the same order, so the same results.
// Scalar, the division made it a quarter of efficientnet_block_float's run.
// In the two builds of float_simd.h, picked per call and counted.
CallCounter g_hard_swish_calls[2];

void HardSwishBaseline(const float* in, float* out, int64_t n) {
  HardSwishRun(in, out, n);
}
#if GRAFT_HAVE_AVX2_FMA_BUILD
GRAFT_AVX2_FMA_TARGET void HardSwishAvx2(const float* in, float* out,
                                         int64_t n) {
  HardSwishRun(in, out, n);
}
#endif

absl::Status EvalHardSwish(EvalContext& ctx) {
  const float* in = ctx.input(0)->data<float>();
  float* out = ctx.output(0)->data<float>();
  const int64_t n = ctx.output(0)->num_elements();
  void (*run)(const float*, float*, int64_t) = HardSwishBaseline;
  CpuIsa path = CpuIsa::kBaseline;
#if GRAFT_HAVE_AVX2_FMA_BUILD
  if (CpuHasAvx2Fma()) run = HardSwishAvx2, path = CpuIsa::kAvx2;
#endif
  g_hard_swish_calls[static_cast<int>(path)].fetch_add(
      1, std::memory_order_relaxed);
  auto body = [&](int64_t begin, int64_t end) {
    run(in + begin, out + begin, end - begin);
  };
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(n, kElementwiseChunk, body);
  } else {
    body(0, n);
  }
  return absl::OkStatus();
}

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
  GRAFT_RETURN_IF_ERROR(PrepareUnary<HardSwishOp>(ctx));
  ctx.SetEval(EvalHardSwish);  // PrepareUnary accepts FLOAT32 only here
  return absl::OkStatus();
}
// GELU's exact form through GeluErfVector (vector_math.h: 8 lanes on
// AVX2, its own erf), split over the pool.
absl::Status EvalGeluErf(EvalContext& ctx) {
  const float* in = ctx.input(0)->data<float>();
  float* out = ctx.output(0)->data<float>();
  auto body = [&](int64_t begin, int64_t end) {
    GeluErfVector(in + begin, out + begin, end - begin);
  };
  const int64_t n = ctx.output(0)->num_elements();
  if (ctx.thread_pool() != nullptr) {
    ctx.thread_pool()->ParallelFor(n, kElementwiseChunk, body);
  } else {
    body(0, n);
  }
  return absl::OkStatus();
}

absl::Status PrepareGelu(PrepareContext& ctx) {
  const auto* o = ctx.op().builtin_options.AsGeluOptions();
  if (o && o->approximate) return PrepareUnary<GeluTanhOp>(ctx);
  GRAFT_RETURN_IF_ERROR(PrepareUnary<GeluErfOp>(ctx));
  ctx.SetEval(EvalGeluErf);  // PrepareUnary accepts FLOAT32 only here
  return absl::OkStatus();
}
absl::Status PrepareElu(PrepareContext& ctx) {
  return PrepareUnary<EluOp>(ctx);
}

}  // namespace

int64_t HardSwishCallsForTesting(CpuIsa path) {
  return g_hard_swish_calls[static_cast<int>(path)].load(
      std::memory_order_relaxed);
}

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
