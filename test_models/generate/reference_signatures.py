#!/usr/bin/env python3
"""Reference outputs per signature, for models with more than one.

run_reference.py (tests/reference/) runs subgraph 0 only; this runs every
signature of MODEL in the same oracle (ai-edge-litert, BUILTIN_REF resolver)
on the inputs generate.py left in REF_DIR/<signature>/input_<name>.npy and
writes REF_DIR/<signature>/output_<name>.npy beside them.

  reference_signatures.py MODEL REF_DIR
"""

import os
import sys

import numpy as np
from ai_edge_litert.interpreter import Interpreter, OpResolverType


def main():
  if len(sys.argv) != 3:
    print(__doc__, file=sys.stderr)
    return 2
  model, ref_dir = sys.argv[1:]
  interp = Interpreter(model_path=model,
                       experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                       num_threads=1)
  for key in interp.get_signature_list():
    sig_dir = os.path.join(ref_dir, key)
    runner = interp.get_signature_runner(key)
    inputs = {name: np.load(os.path.join(sig_dir, f"input_{name}.npy"))
              for name in runner.get_input_details()}
    for name, value in runner(**inputs).items():
      np.save(os.path.join(sig_dir, f"output_{name}.npy"),
              np.array(value, order="C"))
  return 0


if __name__ == "__main__":
  sys.exit(main())
