#!/usr/bin/env python3
"""Runs .tflite models in TFLite's reference interpreter: the oracle for
Graft's runtime.

Uses ai_edge_litert's Interpreter with the BUILTIN_REF op resolver (TFLite's
reference kernels, not its optimized ones) and numpy. Where the reference
resolver lacks an op (ELU, CEIL, ROUND) or an op form (CONV_2D without
bias), TFLite's builtin kernels without delegates stand in; status.json then
says "resolver": "builtin".

One model:
  run_reference.py MODEL OUT_DIR --random-seed N      # generate inputs
  run_reference.py MODEL OUT_DIR --inputs a.npy b.npy  # given inputs
Many models in one process (much faster than one process per model):
  run_reference.py --manifest manifest.json
where the manifest is a JSON list of {"model": ..., "out_dir": ...,
"random_seed": N} or {..., "inputs": [...]} objects.

For each model, OUT_DIR receives input_<i>.npy (the inputs used, in
subgraph-0 input order), output_<i>.npy (subgraph-0 output order) and
status.json ({"ok": true} or {"ok": false, "error": "..."}). A model that
fails in the reference interpreter is recorded there, not fatal.

Known faults of the reference kernels, where TFLite's builtin kernels are
the oracle instead (status.json says "resolver": "builtin" and why):
  - SUM on INT8/INT16 (ai-edge-litert 2.3.0): the BUILTIN_REF kernel returns
    values unrelated to the sum wherever the result saturates (int8) and for
    most int16 results, while its builtin kernel and its own MEAN (the same
    QuantizedMeanOrSum arithmetic) agree with each other.

Random inputs, by dtype: float uniform in [-1, 1); wider integers uniform
in [1, 3] (small, so index inputs stay in range for typical models, and
nonzero, so integer divisors are valid); bool fair coin; 8-bit types their
full range; strings lowercase words of 0 to 8 letters. String tensors are
saved as numpy fixed-width byte strings (dtype 'S'), which Graft's npy
reader takes.

Exit status: 0 when every model was attempted, 2 on usage errors, 77 when
ai_edge_litert or numpy is not installed (a skip for ctest).
"""

import argparse
import json
import os
import sys
import traceback

try:
  import numpy as np
  from ai_edge_litert.interpreter import Interpreter, OpResolverType
except ImportError as e:  # pragma: no cover - depends on the machine
  print(f"run_reference.py: oracle not installed ({e})", file=sys.stderr)
  sys.exit(77)


def random_input(rng, dtype, shape):
  dtype = np.dtype(dtype)
  if dtype.kind == "f":
    return rng.uniform(-1.0, 1.0, size=shape).astype(dtype)
  if dtype == np.bool_:
    return rng.integers(0, 2, size=shape).astype(np.bool_)
  if dtype.itemsize == 1:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)
  if dtype.kind in "iu":
    return rng.integers(1, 4, size=shape).astype(dtype)
  if dtype.kind == "S":
    words = [bytes(rng.integers(ord("a"), ord("z") + 1, size=rng.integers(0, 9),
                                dtype=np.uint8))
             for _ in range(int(np.prod(shape, dtype=np.int64)))]
    return np.array(words, dtype="S").reshape(shape)
  raise ValueError(f"cannot generate inputs of dtype {dtype}")


def reference_fault(interp):
  """Why the reference kernels cannot be the oracle for this model, or None."""
  tensors = None
  for op in interp._get_ops_details():
    types = [np.dtype(t) for t in op["operand_types"][:1]]
    if op["op_name"] == "SUM" and types and types[0] in (np.int8, np.int16):
      return "the reference SUM kernel is wrong for int8/int16"
    if (op["op_name"] == "FULLY_CONNECTED" and types and
        types[0] == np.float32 and len(op["inputs"]) > 1):
      if tensors is None:
        tensors = {t["index"]: t for t in interp.get_tensor_details()}
      w = tensors.get(int(op["inputs"][1]))
      # Blockwise-quantized weights: scales listed but no zero points
      # (per-channel ones list a zero point per scale), legacy scale 0.
      q = w["quantization_parameters"] if w is not None else None
      if (q is not None and w["quantization"][0] == 0.0 and
          len(q["scales"]) > 0 and len(q["zero_points"]) == 0):
        return ("the reference FULLY_CONNECTED has no blockwise path (it "
                "scales by the legacy per-tensor scale, 0)")
  return None


def run_one(model, out_dir, random_seed=None, inputs=None):
  os.makedirs(out_dir, exist_ok=True)
  status = {"ok": True}
  try:
    try:
      interp = Interpreter(
          model_path=model,
          experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
          num_threads=1)
      interp.allocate_tensors()
      fault = reference_fault(interp)
      if fault:
        raise RuntimeError(f"Reference fault: {fault}")
    except (ValueError, RuntimeError) as e:
      # The reference resolver lacks a few ops (ELU, CEIL, ROUND) and
      # requires CONV_2D's optional bias; TFLite's builtin kernels (without
      # delegates) are the next best oracle. Recorded in status.json.
      msg = str(e)
      if ("Didn't find op" not in msg and
          "optional but was expected" not in msg and
          "Reference fault" not in msg):
        raise
      interp = Interpreter(
          model_path=model,
          experimental_op_resolver_type=(
              OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
          num_threads=1)
      interp.allocate_tensors()
      status["resolver"] = "builtin"
      status["why"] = msg.splitlines()[0]
    details = interp.get_input_details()
    if inputs is not None and len(inputs) != len(details):
      raise ValueError(f"{len(inputs)} inputs given, model takes {len(details)}")
    rng = np.random.default_rng(random_seed if random_seed is not None else 0)
    for i, d in enumerate(details):
      if inputs is not None:
        value = np.load(inputs[i])
      else:
        value = random_input(rng, d["dtype"], tuple(d["shape"]))
      np.save(os.path.join(out_dir, f"input_{i}.npy"), value)
      interp.set_tensor(d["index"], value)
    interp.invoke()
    for i, d in enumerate(interp.get_output_details()):
      try:
        value = np.array(interp.get_tensor(d["index"]), order="C")
      except ValueError:  # get_tensor refuses tensors of 0 elements
        shape = d["shape"]
        if np.prod(shape) != 0:
          raise
        value = np.zeros(shape, dtype=d["dtype"])
      if value.dtype == np.object_:  # strings come back as objects
        value = np.array(value.tolist(), dtype="S").reshape(value.shape)
      np.save(os.path.join(out_dir, f"output_{i}.npy"), value)
  except Exception as e:  # the interpreter raises RuntimeError/ValueError
    status = {"ok": False,
              "error": f"{type(e).__name__}: {e}".strip().splitlines()[0]}
    if os.environ.get("GRAFT_REFERENCE_VERBOSE"):
      traceback.print_exc()
  with open(os.path.join(out_dir, "status.json"), "w") as f:
    json.dump(status, f)
  return status["ok"]


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("model", nargs="?")
  parser.add_argument("out_dir", nargs="?")
  parser.add_argument("--inputs", nargs="*")
  parser.add_argument("--random-seed", type=int)
  parser.add_argument("--manifest")
  args = parser.parse_args()
  if args.manifest:
    with open(args.manifest) as f:
      entries = json.load(f)
    ok = 0
    for e in entries:
      ok += run_one(e["model"], e["out_dir"], e.get("random_seed"),
                    e.get("inputs"))
    print(f"run_reference.py: {ok} of {len(entries)} models ran")
    return 0
  if not args.model or not args.out_dir:
    parser.print_usage(sys.stderr)
    return 2
  if args.inputs is None and args.random_seed is None:
    args.random_seed = 0
  ok = run_one(args.model, args.out_dir, args.random_seed, args.inputs)
  if not ok:
    with open(os.path.join(args.out_dir, "status.json")) as f:
      print(json.load(f)["error"], file=sys.stderr)
  return 0 if ok else 1


if __name__ == "__main__":
  sys.exit(main())
