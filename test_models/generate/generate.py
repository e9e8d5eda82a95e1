#!/usr/bin/env python3
"""Makes Graft's generated model corpus with the TensorFlow Lite converter.

Real converter output of small real networks with seeded random weights
(nothing is downloaded): Keras (tf_keras, the Keras 2 that the converter's
LSTM fusion recognizes) models or tf.Modules, converted as float32 and, for
some, as full-integer int8 (per-channel weights, int8 inputs and outputs,
calibrated on seeded random data).

Run through generate.sh, which makes the virtualenv and then computes the
reference outputs with the system python's ai-edge-litert. This script
writes, under OUT_DIR:
  <name>.tflite                  the model
  <name>/input_<i>.npy           the fixed seeded input (subgraph-0 order)
  <name>/<signature>/input_<name>.npy   inputs per signature (multi-signature
                                 models only)
and a manifest (--manifest) in run_reference.py's format, plus the README
table rows (--table).
"""

import argparse
import json
import os
import shutil
import tempfile
import warnings
import zlib

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np
import tensorflow as tf
import tf_keras as keras
from tensorflow.lite.python import schema_py_generated as schema

layers = keras.layers
# tf.lite.Interpreter only reads input details here; the reference outputs
# come from ai-edge-litert (generate.sh).
warnings.filterwarnings("ignore", message=".*tf.lite.Interpreter is deprecated")


def seed_everything(seed):
  # A fresh session per model: layer names (and so tensor names) then do not
  # depend on which models were built before in the same process.
  keras.backend.clear_session()
  keras.utils.set_random_seed(seed)
  tf.config.experimental.enable_op_determinism()


def calibrate_batch_norm(model, x, rng):
  """Gives every BatchNormalization layer the statistics of its input on
  `x` (so activations stay in a realistic range through a deep untrained
  network) and random gamma/beta (so folding them is not an identity).
  Layers are visited in graph order, each seeing the calibrated earlier
  ones."""
  for layer in model.layers:
    if not isinstance(layer, layers.BatchNormalization):
      continue
    probe = keras.Model(model.inputs, layer.input)
    h = probe(x, training=False).numpy()
    axes = tuple(range(h.ndim - 1))
    mean, var = h.mean(axis=axes), h.var(axis=axes)
    c = mean.shape[0]
    gamma = rng.uniform(0.5, 1.5, c).astype(np.float32)
    beta = rng.uniform(-0.2, 0.2, c).astype(np.float32)
    layer.set_weights([gamma, beta, mean.astype(np.float32),
                       var.astype(np.float32)])


def convert(model_or_fn, int8_data=None, saved_model_dir=None,
            signature_keys=None, dynamic_range=False):
  if saved_model_dir is not None:
    conv = tf.lite.TFLiteConverter.from_saved_model(
        saved_model_dir, signature_keys=signature_keys)
  else:
    conv = tf.lite.TFLiteConverter.from_keras_model(model_or_fn)
  if dynamic_range:
    # Post-training dynamic-range quantization: int8 weights, float
    # activations (no representative dataset).
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
  elif int8_data is not None:
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([d] for d in int8_data)
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    conv.inference_input_type = tf.int8
    conv.inference_output_type = tf.int8
  return conv.convert()


OP_NAMES = {v: k for k, v in vars(schema.BuiltinOperator).items()
            if not k.startswith("_")}
TYPE_NAMES = {v: k for k, v in vars(schema.TensorType).items()
              if not k.startswith("_")}


def op_summary(flatbuffer):
  """'CONV_2D ×52, ADD ×10, ...' in order of first use."""
  m = schema.ModelT.InitFromObj(schema.Model.GetRootAsModel(flatbuffer, 0))
  codes = [OP_NAMES[max(c.builtinCode, c.deprecatedBuiltinCode)]
           for c in m.operatorCodes]
  counts = {}
  for sg in m.subgraphs:
    for op in sg.operators or []:
      counts[codes[op.opcodeIndex]] = counts.get(codes[op.opcodeIndex], 0) + 1
  return ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in counts.items())


def io_details(flatbuffer):
  interp = tf.lite.Interpreter(model_content=flatbuffer)
  return interp.get_input_details(), interp.get_signature_list()


def make_input(rng, detail):
  """A seeded input for one model input: float32 uniform in [-1, 1); int8
  the quantized value of such a float (so it is in the calibrated range);
  int32 token ids uniform over the vocabulary."""
  shape = tuple(detail["shape"])
  if detail["dtype"] == np.int32:
    return rng.integers(0, VOCAB, shape).astype(np.int32)
  if detail["dtype"] == np.float32:
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)
  if detail["dtype"] == np.int8:
    scale, zero_point = detail["quantization"]
    f = rng.uniform(-1.0, 1.0, shape)
    return np.clip(np.round(f / scale) + zero_point, -128, 127).astype(np.int8)
  raise ValueError(f"no input recipe for {detail['dtype']}")


# Model builders: each takes the model's numpy generator and returns a Keras
# model with batch 1 (except dynamic_batch).


def mobilenet_v2(alpha, size, rng):
  model = keras.applications.MobileNetV2(
      input_shape=(size, size, 3), alpha=alpha, weights=None,
      include_top=True, classes=1000, classifier_activation=None)
  x = rng.uniform(-1, 1, (8, size, size, 3)).astype(np.float32)
  calibrate_batch_norm(model, x, rng)
  # Re-wrap with a fixed batch of 1: an ordinary inference model. Its output
  # is the 1000 logits: after a softmax over 1000 classes of an untrained
  # network every int8 probability rounds to 0 or 1 LSB, which would test
  # nothing.
  inp = keras.Input((size, size, 3), batch_size=1, name="image")
  return keras.Model(inp, model(inp))


def resnet_cnn(rng):
  def block(x, filters, stride):
    shortcut = x
    y = layers.Conv2D(filters, 3, strides=stride, padding="same",
                      use_bias=False)(x)
    y = layers.BatchNormalization()(y)
    y = layers.ReLU()(y)
    y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    if stride != 1 or shortcut.shape[-1] != filters:
      shortcut = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(x)
      shortcut = layers.BatchNormalization()(shortcut)
    return layers.ReLU()(layers.Add()([y, shortcut]))

  inp = keras.Input((64, 64, 3), batch_size=1, name="image")
  x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(inp)
  x = layers.BatchNormalization()(x)
  x = layers.ReLU()(x)
  x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
  for filters, stride in ((16, 1), (16, 1), (32, 2), (32, 1), (64, 2),
                          (64, 1)):
    x = block(x, filters, stride)
  x = layers.GlobalAveragePooling2D()(x)
  out = layers.Dense(10, activation="softmax")(x)
  model = keras.Model(inp, out)
  calibrate_batch_norm(model, rng.uniform(-1, 1, (8, 64, 64, 3))
                       .astype(np.float32), rng)
  return model


def hard_swish(x):
  # The expression MobileNetV3 uses; the converter fuses it to HARD_SWISH.
  return layers.Multiply()([x, layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)])


def efficientnet_block(rng):
  def mbconv(x, expand, out_filters, stride):
    cin = x.shape[-1]
    y = layers.Conv2D(cin * expand, 1, use_bias=False)(x)
    y = hard_swish(layers.BatchNormalization()(y))
    y = layers.DepthwiseConv2D(3, strides=stride, padding="same",
                               use_bias=False)(y)
    y = hard_swish(layers.BatchNormalization()(y))
    # Squeeze and excite.
    se = layers.GlobalAveragePooling2D(keepdims=True)(y)
    se = layers.Conv2D(max(8, cin // 4), 1, activation="relu")(se)
    se = layers.Conv2D(cin * expand, 1, activation="sigmoid")(se)
    y = layers.Multiply()([y, se])
    y = layers.Conv2D(out_filters, 1, use_bias=False)(y)
    y = layers.BatchNormalization()(y)
    if stride == 1 and cin == out_filters:
      y = layers.Add()([y, x])
    return y

  inp = keras.Input((64, 64, 3), batch_size=1, name="image")
  x = layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False)(inp)
  x = hard_swish(layers.BatchNormalization()(x))
  x = mbconv(x, 4, 24, 2)
  x = mbconv(x, 4, 24, 1)
  x = mbconv(x, 6, 40, 2)
  x = layers.GlobalAveragePooling2D()(x)
  out = layers.Dense(10, activation="softmax")(x)
  model = keras.Model(inp, out)
  calibrate_batch_norm(model, rng.uniform(-1, 1, (8, 64, 64, 3))
                       .astype(np.float32), rng)
  return model


VOCAB, SEQ, DIM, HEADS, FFN, LAYERS = 1000, 32, 64, 4, 128, 2


class SelfAttention(layers.Layer):
  """Multi-head self-attention written out so the converter emits
  BATCH_MATMUL and SOFTMAX (not einsum lowerings)."""

  def __init__(self, dim, heads, **kwargs):
    super().__init__(**kwargs)
    self.dim, self.heads = dim, heads
    self.qkv = layers.Dense(3 * dim)
    self.out = layers.Dense(dim)

  def call(self, x):
    seq = x.shape[1]
    head = self.dim // self.heads
    qkv = tf.reshape(self.qkv(x), (-1, seq, 3, self.heads, head))
    qkv = tf.transpose(qkv, (2, 0, 3, 1, 4))  # 3, batch, heads, seq, head
    q, k, v = qkv[0], qkv[1], qkv[2]
    scores = tf.matmul(q, k, transpose_b=True) * (1.0 / np.sqrt(head))
    ctx = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
    ctx = tf.reshape(tf.transpose(ctx, (0, 2, 1, 3)), (-1, seq, self.dim))
    return self.out(ctx)


class PositionEmbedding(layers.Layer):
  def build(self, input_shape):
    self.table = self.add_weight(
        "positions", shape=(input_shape[1], input_shape[2]),
        initializer=keras.initializers.RandomNormal(stddev=0.5))

  def call(self, x):
    return x + self.table


def transformer_encoder(rng):
  del rng  # Weights come from the seeded Keras initializers.
  inp = keras.Input((SEQ,), batch_size=1, dtype="int32", name="tokens")
  x = layers.Embedding(VOCAB, DIM,
                       embeddings_initializer=keras.initializers.RandomNormal(
                           stddev=1.0))(inp)
  x = PositionEmbedding()(x)
  for _ in range(LAYERS):
    h = layers.LayerNormalization(epsilon=1e-5)(x)
    x = x + SelfAttention(DIM, HEADS)(h)
    h = layers.LayerNormalization(epsilon=1e-5)(x)
    h = layers.Dense(FFN, activation=lambda t: tf.nn.gelu(t,
                                                          approximate=False))(h)
    x = x + layers.Dense(DIM)(h)
  out = layers.LayerNormalization(epsilon=1e-5)(x)
  return keras.Model(inp, out)


def lstm_model(rng):
  del rng
  inp = keras.Input((20, 16), batch_size=1, name="sequence")
  x = layers.LSTM(32, return_sequences=True)(inp)
  x = layers.LSTM(32)(x)
  out = layers.Dense(10)(x)
  return keras.Model(inp, out)


def audio_conv1d(rng):
  inp = keras.Input((4000, 1), batch_size=1, name="waveform")
  x = layers.Conv1D(16, 9, strides=4, padding="same", use_bias=False)(inp)
  x = layers.ReLU()(layers.BatchNormalization()(x))
  x = layers.Conv1D(32, 9, strides=4, padding="same", use_bias=False)(x)
  x = layers.ReLU()(layers.BatchNormalization()(x))
  x = layers.MaxPooling1D(2)(x)
  x = layers.Conv1D(64, 3, padding="same", use_bias=False)(x)
  x = layers.ReLU()(layers.BatchNormalization()(x))
  x = layers.GlobalAveragePooling1D()(x)
  out = layers.Dense(12, activation="softmax")(x)
  model = keras.Model(inp, out)
  calibrate_batch_norm(model, rng.uniform(-1, 1, (8, 4000, 1))
                       .astype(np.float32), rng)
  return model


def dynamic_batch(rng):
  del rng
  inp = keras.Input((16, 16, 3), name="image")  # Batch left unknown.
  x = layers.Conv2D(8, 3, padding="same", activation="relu")(inp)
  x = layers.MaxPooling2D(2)(x)
  x = layers.Flatten()(x)
  out = layers.Dense(10, activation="softmax")(x)
  return keras.Model(inp, out)


class TwoSignatures(tf.Module):
  """An autoencoder with its halves exported as the signatures 'encode'
  and 'decode' (sharing nothing)."""

  def __init__(self):
    super().__init__()
    self.enc = layers.Dense(4, activation="tanh")
    self.dec = layers.Dense(8)
    self.enc.build((1, 8))
    self.dec.build((1, 4))

  @tf.function(input_signature=[tf.TensorSpec((1, 8), tf.float32, name="x")])
  def encode(self, x):
    return {"code": self.enc(x)}

  @tf.function(input_signature=[tf.TensorSpec((1, 4), tf.float32,
                                              name="code")])
  def decode(self, code):
    return {"y": self.dec(code)}


def with_seeded_biases(model, rng):
  """Gives every layer after the input nonzero biases (Keras starts them at
  zero, and the converter would drop them), drawn from `rng`."""
  for layer in model.layers[1:]:
    kernel, bias = layer.get_weights()
    layer.set_weights([kernel, rng.uniform(-0.2, 0.2, bias.shape)
                       .astype(np.float32)])
  return model


def mlp(rng):
  """A Keras MLP over 8 rows of 64 features: Dense layers, so the dynamic-range
  conversion gives hybrid FULLY_CONNECTED ops (float input, int8 weights)."""
  x = inp = keras.Input((8, 64), batch_size=1)
  x = keras.layers.Dense(256, activation="relu")(x)
  x = keras.layers.Dense(128, activation="relu")(x)
  x = keras.layers.Dense(10)(x)
  return with_seeded_biases(keras.Model(inp, x), rng)


def cnn(rng):
  """A small Keras CNN over a 16x16x8 image: Conv2D layers with 1024 or more
  weights each (the converter leaves smaller filters float), so the
  dynamic-range conversion gives hybrid CONV_2D ops (per-channel int8
  weights, float activations)."""
  x = inp = keras.Input((16, 16, 8), batch_size=1)
  x = keras.layers.Conv2D(16, 3, padding="same", activation="relu")(x)
  x = keras.layers.Conv2D(16, 3, strides=2, padding="valid")(x)
  x = keras.layers.Conv2D(32, 2, dilation_rate=2, padding="same",
                          activation="relu6")(x)
  return with_seeded_biases(keras.Model(inp, x), rng)


# Marks a model converted with dynamic-range quantization (MODELS' third
# field, instead of int8 calibration data).
DYNAMIC_RANGE = "dynamic_range"


# Calibration data for the int8 conversions.
def image_data(size):
  return lambda rng: [rng.uniform(-1, 1, (1, size, size, 3))
                      .astype(np.float32) for _ in range(16)]


def token_data(rng):
  return [rng.integers(0, VOCAB, (1, SEQ)).astype(np.int32)
          for _ in range(16)]


def audio_data(rng):
  return [rng.uniform(-1, 1, (1, 4000, 1)).astype(np.float32)
          for _ in range(16)]


MODELS = [
    # name, builder, int8 calibration data (None: float32), description
    ("mobilenet_v2_035_96_float", lambda r: mobilenet_v2(0.35, 96, r), None,
     "keras.applications.MobileNetV2(alpha=0.35, 96×96, weights=None), logits"),
    ("mobilenet_v2_035_96_int8", lambda r: mobilenet_v2(0.35, 96, r),
     image_data(96), "the same, full-integer int8"),
    ("mobilenet_v2_100_224_float", lambda r: mobilenet_v2(1.0, 224, r), None,
     "keras.applications.MobileNetV2(alpha=1.0, 224×224, weights=None), logits"),
    ("mobilenet_v2_100_224_int8", lambda r: mobilenet_v2(1.0, 224, r),
     image_data(224), "the same, full-integer int8"),
    ("resnet_cnn_float", resnet_cnn, None,
     "ResNet-style CNN, 6 residual blocks, 64×64"),
    ("resnet_cnn_int8", resnet_cnn, image_data(64),
     "the same, full-integer int8"),
    ("efficientnet_block_float", efficientnet_block, None,
     "EfficientNet-lite-style MBConv blocks with hard_swish and "
     "squeeze-and-excite, 64×64"),
    ("transformer_encoder_float", transformer_encoder, None,
     f"{LAYERS}-layer pre-norm encoder: vocab {VOCAB}, {SEQ} tokens, width "
     f"{DIM}, {HEADS} heads, GELU FFN {FFN}"),
    ("transformer_encoder_int8", transformer_encoder, token_data,
     "the same, full-integer int8 (int32 token input)"),
    ("lstm_sequence_float", lstm_model, None,
     "two stacked Keras LSTMs (20 steps × 16 features) and a dense head"),
    ("audio_conv1d_float", audio_conv1d, None,
     "1-D conv audio classifier on 4000 samples"),
    ("audio_conv1d_int8", audio_conv1d, audio_data,
     "the same, full-integer int8"),
    ("two_signatures_float", None, None,
     "tf.Module saved with signatures 'encode' and 'decode'"),
    ("dynamic_batch_float", dynamic_batch, None,
     "small CNN whose batch dimension is unknown (-1 in shape_signature)"),
    ("cnn_dynamic_range", cnn, DYNAMIC_RANGE,
     "Keras CNN (Conv2D 8->16 3x3 SAME ReLU, 16->16 3x3 stride 2 VALID, "
     "16->32 2x2 dilation 2 SAME ReLU6) on 16x16x8, dynamic-range quantized "
     "(per-channel int8 conv weights, float activations)"),
    ("mobilenet_v2_035_96_dynamic_range", lambda r: mobilenet_v2(0.35, 96, r),
     DYNAMIC_RANGE,
     "keras.applications.MobileNetV2(alpha=0.35, 96×96, weights=None), "
     "dynamic-range quantized: hybrid CONV_2D, DEPTHWISE_CONV_2D and "
     "FULLY_CONNECTED where a filter has 1024 or more weights"),
    ("lstm_sequence_dynamic_range", lstm_model, DYNAMIC_RANGE,
     "the two stacked Keras LSTMs of lstm_sequence_float, dynamic-range "
     "quantized: hybrid UNIDIRECTIONAL_SEQUENCE_LSTM (int8 weights, float "
     "activations and state)"),
    ("mlp_dynamic_range", mlp, DYNAMIC_RANGE,
     "Keras MLP (Dense 64→256→128→10, ReLU, seeded biases) over 8 rows, "
     "dynamic-range quantized (Optimize.DEFAULT, no representative dataset: "
     "per-channel int8 weights, asymmetric input quantization)"),
]


def build(name, builder, data_maker, seed, tmp):
  rng = np.random.default_rng(seed)
  seed_everything(seed)
  if name == "two_signatures_float":
    module = TwoSignatures()
    path = os.path.join(tmp, name)
    tf.saved_model.save(module, path, signatures={
        "encode": module.encode, "decode": module.decode})
    return convert(None, saved_model_dir=path,
                   signature_keys=["encode", "decode"])
  model = builder(rng)
  if data_maker == DYNAMIC_RANGE:
    return convert(model, dynamic_range=True)
  data = data_maker(rng) if data_maker else None
  return convert(model, int8_data=data)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("out_dir")
  parser.add_argument("--seed", type=int, default=5)
  parser.add_argument("--manifest", required=True,
                      help="run_reference.py manifest to write")
  parser.add_argument("--table", help="README table rows to write")
  parser.add_argument("--only", nargs="*", help="model names to make")
  args = parser.parse_args()
  os.makedirs(args.out_dir, exist_ok=True)
  manifest, rows = [], []
  with tempfile.TemporaryDirectory() as tmp:
    for name, builder, data_maker, how in MODELS:
      if args.only and name not in args.only:
        continue
      # One seed per model, stable under adding or reordering models.
      seed = args.seed * 1000003 + zlib.crc32(name.encode())
      flatbuffer = build(name, builder, data_maker, seed, tmp)
      path = os.path.join(args.out_dir, name + ".tflite")
      with open(path, "wb") as f:
        f.write(flatbuffer)
      ref_dir = os.path.join(args.out_dir, name)
      shutil.rmtree(ref_dir, ignore_errors=True)
      os.makedirs(ref_dir)
      rng = np.random.default_rng(seed + 1)
      details, signatures = io_details(flatbuffer)
      inputs = []
      for i, d in enumerate(details):
        value = make_input(rng, d)
        inputs.append(os.path.abspath(os.path.join(ref_dir,
                                                   f"input_{i}.npy")))
        np.save(inputs[-1], value)
      manifest.append({"model": os.path.abspath(path),
                       "out_dir": os.path.abspath(ref_dir),
                       "inputs": inputs})
      if len(signatures) > 1:
        interp = tf.lite.Interpreter(model_content=flatbuffer)
        for key in signatures:
          sig_dir = os.path.join(ref_dir, key)
          os.makedirs(sig_dir)
          for in_name, d in interp.get_signature_runner(key) \
                                  .get_input_details().items():
            np.save(os.path.join(sig_dir, f"input_{in_name}.npy"),
                    make_input(rng, d))
      dtype = ("float32, int8 weights" if data_maker == DYNAMIC_RANGE else
               "int8" if data_maker else "float32")
      rows.append(f"| `generated/{name}.tflite` | {op_summary(flatbuffer)} | "
                  f"{len(flatbuffer) / 1024:.1f} KB | {dtype} | {how} |")
      print(f"{name}: {len(flatbuffer)} bytes", flush=True)
  with open(args.manifest, "w") as f:
    json.dump(manifest, f, indent=1)
  if args.table:
    with open(args.table, "w") as f:
      f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
  main()
