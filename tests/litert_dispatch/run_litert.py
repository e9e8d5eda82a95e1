#!/usr/bin/env python3
"""Runs a model compiled by LiteRT's tools in LiteRT's own runtime: the
oracle for Graft's hosting of LiteRT dispatch libraries.

  run_litert.py MODEL DISPATCH_DIR OUT_DIR --inputs a.npy b.npy ...

Loads MODEL with ai_edge_litert's CompiledModel, NPU|CPU accelerators and
the dispatch library in DISPATCH_DIR (Environment.create(
dispatch_library_path=...)), runs signature 0 once on the given inputs (in
signature input order) and writes output_<i>.npy (signature output order)
to OUT_DIR, plus status.json {"ok": true, "fully_accelerated": ...} or
{"ok": false, "error": "..."}.

Exit status: 0 when the model ran, 1 when it failed (status.json says
why), 2 on usage errors, 77 when ai_edge_litert or numpy is missing (a skip
for ctest).
"""

import argparse
import json
import os
import sys
import traceback

try:
  import numpy as np
  from ai_edge_litert.compiled_model import CompiledModel
  from ai_edge_litert.environment import Environment
  from ai_edge_litert.hardware_accelerator import HardwareAccelerator
  from ai_edge_litert.options import Options
except ImportError as e:  # pragma: no cover - depends on the machine
  print(f"run_litert.py: LiteRT runtime not installed ({e})", file=sys.stderr)
  sys.exit(77)


def run(model, dispatch_dir, inputs):
  env = Environment.create(dispatch_library_path=dispatch_dir)
  options = Options(
      hardware_accelerators=HardwareAccelerator.NPU | HardwareAccelerator.CPU)
  cm = CompiledModel.from_file(model, environment=env, options=options)
  in_buffers = cm.create_input_buffers(0)
  out_buffers = cm.create_output_buffers(0)
  if len(inputs) != len(in_buffers):
    raise ValueError(f"{len(inputs)} inputs given, the model has "
                     f"{len(in_buffers)}")
  for buf, arr in zip(in_buffers, inputs):
    buf.write(arr)
  cm.run_by_index(0, in_buffers, out_buffers)
  outputs = []
  for buf in out_buffers:
    d = buf.get_tensor_details()
    shape = tuple(int(x) for x in d["shape"])
    n = int(np.prod(shape, dtype=np.int64))
    outputs.append(np.asarray(buf.read(n, d["dtype"])).reshape(shape))
  return outputs, cm.is_fully_accelerated()


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("model")
  parser.add_argument("dispatch_dir")
  parser.add_argument("out_dir")
  parser.add_argument("--inputs", nargs="*", default=[])
  args = parser.parse_args()
  os.makedirs(args.out_dir, exist_ok=True)
  status = {"ok": False}
  try:
    inputs = [np.load(p) for p in args.inputs]
    outputs, fully = run(args.model, args.dispatch_dir, inputs)
    for i, out in enumerate(outputs):
      np.save(os.path.join(args.out_dir, f"output_{i}.npy"), out)
    status = {"ok": True, "fully_accelerated": bool(fully)}
  except Exception as e:  # reported in status.json, not fatal to the caller
    status = {"ok": False, "error": f"{e}\n{traceback.format_exc()}"}
  with open(os.path.join(args.out_dir, "status.json"), "w") as f:
    json.dump(status, f)
  return 0 if status["ok"] else 1


if __name__ == "__main__":
  sys.exit(main())
