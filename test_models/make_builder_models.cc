// Writes the small models of test_models/ that Graft's own builder makes
// (deterministic: seeded weights). Usage: graft_make_builder_models OUT_DIR
//
// residual_mlp.tflite: x[1,16] -> FULLY_CONNECTED -> RELU -> FULLY_CONNECTED
//   -> ADD(x) -> MUL(0.5) -> SOFTMAX -> y[1,16]. Float32, about 2 KB: the
//   README's main job and the vendor guide apply plugins to it.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/model_builder.h"
#include "core/model_io.h"

namespace graft {
namespace {

std::vector<float> Weights(size_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> w(n);
  for (float& v : w) v = dist(rng);
  return w;
}

absl::StatusOr<Model> ResidualMlp() {
  std::mt19937 rng(20261122);
  ModelBuilder b;
  b.Description("graft test_models/residual_mlp: made by make_builder_models.cc");
  auto& g = b.Subgraph("main");
  const tfl::TensorType f32 = tfl::TensorType_FLOAT32;
  TensorId x = g.Input("x", f32, {1, 16});
  TensorId w1 = g.Constant<float>("fc1/weights", {32, 16}, Weights(512, rng, 0.25f));
  TensorId b1 = g.Constant<float>("fc1/bias", {32}, Weights(32, rng, 0.1f));
  TensorId h = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(x, w1, b1)
                   .Options(tfl::FullyConnectedOptionsT{})
                   .Out("fc1", f32, {1, 32});
  TensorId r = g.Op(tfl::BuiltinOperator_RELU).In(h).Out("relu", f32, {1, 32});
  TensorId w2 = g.Constant<float>("fc2/weights", {16, 32}, Weights(512, rng, 0.25f));
  TensorId b2 = g.Constant<float>("fc2/bias", {16}, Weights(16, rng, 0.1f));
  TensorId o = g.Op(tfl::BuiltinOperator_FULLY_CONNECTED).In(r, w2, b2)
                   .Options(tfl::FullyConnectedOptionsT{})
                   .Out("fc2", f32, {1, 16});
  TensorId s = g.Op(tfl::BuiltinOperator_ADD).In(o, x)
                   .Options(tfl::AddOptionsT{})
                   .Out("residual", f32, {1, 16});
  TensorId half = g.Constant<float>("half", {1}, {0.5f});
  TensorId m = g.Op(tfl::BuiltinOperator_MUL).In(s, half)
                   .Options(tfl::MulOptionsT{})
                   .Out("scaled", f32, {1, 16});
  tfl::SoftmaxOptionsT softmax;
  softmax.beta = 1.0f;
  TensorId y = g.Op(tfl::BuiltinOperator_SOFTMAX).In(m).Options(softmax)
                   .Out("y", f32, {1, 16});
  g.Output(y);
  b.Signature("serving_default", {{"x", x}}, {{"y", y}});
  return std::move(b).Build();
}

}  // namespace
}  // namespace graft

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  auto model = graft::ResidualMlp();
  if (!model.ok()) {
    std::fprintf(stderr, "residual_mlp: %s\n", model.status().ToString().c_str());
    return 1;
  }
  std::string path = std::string(argv[1]) + "/residual_mlp.tflite";
  absl::Status s = graft::SaveModel(*model, path);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s\n", path.c_str());
  return 0;
}
