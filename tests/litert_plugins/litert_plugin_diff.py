#!/usr/bin/env python3
"""Differential test of Graft's LiteRT compiler-plugin host against LiteRT's
own apply_plugin_main, both driving the real Intel OpenVINO plugin from the
ai-edge-litert 2.3.0 wheel (CPU backend), and of Graft's runtime against
LiteRT's runtime on the files either tool compiled.

  litert_plugin_diff.py --graft BUILD/tools/graft --source-dir ROOT
      [--third-party DIR] [--subset] [--jobs N] [--keep DIR] [--verbose]

Part 1 (apply), every model of test_models/generated and the third-party
corpus ($GRAFT_THIRD_PARTY_MODELS, else --third-party), each compiled by both
tools into a temp dir:
  - every model LiteRT's tool compiles, Graft compiles too; where LiteRT's
    tool crashes (a signal), Graft exits with a status and a message, never a
    signal;
  - Graft takes the same ops: in each of the model's original subgraphs, the
    ops left outside DISPATCH_OPs (keyed by opcode and input/output tensor
    names) are the same multiset in both outputs;
  - in no more partitions (DISPATCH_OPs);
  - where the same partitions reached the plugin (DISPATCH_OPs with the same
    input and output tensors), the bytecode modules (Intel's 20-byte LRTOVHDR
    and OpenVINO's export) are byte-identical, compared as the multiset of
    distinct module byte ranges (weight sharing can make ops share one).
  Differences listed in EXCEPTIONS below are expected, with their reason,
  and asserted to still happen (a fixed exception fails the test until it is
  removed from the list).

Part 2 (run), the generated float models and a few third-party ones: the
LiteRT-compiled and the Graft-compiled file each run in Graft's runtime
(`graft run --dispatch-dir`) and in LiteRT's runtime (run_litert.py), on the
same seeded inputs: outputs are bit-identical between the runtimes on each
file, and within a stated tolerance of the reference interpreter
(tests/reference/run_reference.py) on the original model. The tolerance is
bf16's: Intel's dispatch library imports the OpenVINO model with no
properties, so on a CPU with avx512_bf16/amx_bf16 OpenVINO infers in bf16
(8-bit mantissa, ~2^-8 relative error per op, growing with depth).

--subset runs a handful of models only (a quick local check); --sanitized
(set by sanitizer builds) skips, since OpenVINO cannot run under ASan.
Prints one summary line per part. Exit status: 0 pass, 1 fail, 77 skip (the
wheel, its tool, the Intel plugin or openvino absent).
"""

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77

try:
  import numpy as np
  import ai_edge_litert
  from ai_edge_litert import schema_py_generated as schema
  from flatbuffers import flexbuffers
except ImportError as e:  # depends on the machine
  print(f"SKIP: the ai-edge-litert wheel (2.3.0) or numpy/flatbuffers is not "
        f"installed ({e}): pip install ai-edge-litert==2.3.0 "
        f"openvino==2026.3.1")
  sys.exit(SKIP)

WHEEL = os.path.dirname(ai_edge_litert.__file__)
APPLY_PLUGIN = os.path.join(WHEEL, "tools", "apply_plugin_main")
INTEL_COMPILER_DIR = os.path.join(WHEEL, "vendors", "intel_openvino",
                                  "compiler")
INTEL_PLUGIN = os.path.join(INTEL_COMPILER_DIR,
                            "libLiteRtCompilerPlugin_IntelOpenvino.so")
INTEL_DISPATCH_DIR = os.path.join(WHEEL, "vendors", "intel_openvino",
                                  "dispatch")
COMPILE_TIMEOUT_S = 300

# Models (paths relative to their corpus root) where Graft's output differs
# from LiteRT's tool's, each with the kind of difference and why. Every entry
# is asserted: the difference must still be there.
#   "graft_compiles_litert_fails": LiteRT's tool fails (not a crash) where
#   Graft compiles.
EXCEPTIONS = {
    "LiteRT/litert/test/testdata/"
    "shared_input_cpu_npu_google_tensor_precompiled.tflite": (
        "litert_only",
        "the model is already compiled (DISPATCH_OPs for Google Tensor); "
        "LiteRT's tool passes it through, Graft refuses to apply plugins to a "
        "compiled model, by design, with a message saying so"),
}

# Part 2's models: the float models of the generated corpus both tools
# compile (the LSTMs have variable tensors, which LiteRT's loader refuses),
# plus these third-party ones.
RUN_GENERATED = [
    "audio_conv1d_float", "dynamic_batch_float", "efficientnet_block_float",
    "mobilenet_v2_035_96_float", "mobilenet_v2_100_224_float",
    "resnet_cnn_float", "transformer_encoder_float", "two_signatures_float",
]
RUN_THIRD_PARTY = [
    # Inputs in another order in LiteRT's partition than in Graft's.
    "LiteRT/litert/test/testdata/rope.tflite",
    "LiteRT/litert/js/packages/core/testdata/multi_signature_model.tflite",
    # A composite no plugin takes, inlined into its caller by both hosts.
    "LiteRT/litert/test/testdata/l2_norm_composite.tflite",
]

# --subset: a few models of each corpus, for a quick check.
SUBSET_GENERATED = ["audio_conv1d_float", "resnet_cnn_float"]
SUBSET_THIRD_PARTY = [
    "LiteRT/litert/test/testdata/mul_quant.tflite",
    "LiteRT/litert/test/testdata/l2_norm_composite.tflite",
]
SUBSET_RUN = ["audio_conv1d_float"]

_BUILTIN_NAMES = {v: k for k, v in vars(schema.BuiltinOperator).items()
                  if not k.startswith("_")}


def opcode_name(model, op):
  code = model.OperatorCodes(op.OpcodeIndex())
  builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
  if builtin == schema.BuiltinOperator.CUSTOM:
    return "CUSTOM:" + (code.CustomCode() or b"").decode()
  return _BUILTIN_NAMES.get(builtin, str(builtin))


def tensor_names(sg, indices):
  return tuple(
      sg.Tensors(int(i)).Name().decode(errors="replace") if i >= 0 else ""
      for i in indices)


class Parsed:
  """A .tflite file: per subgraph, its DISPATCH_OPs and its other ops."""

  def __init__(self, path):
    with open(path, "rb") as f:
      self.data = f.read()
    model = schema.Model.GetRootAs(self.data, 0)
    self.num_subgraphs = model.SubgraphsLength()
    # [subgraph] -> Counter of (opcode, inputs, outputs)
    self.other_ops = []
    # [(subgraph, inputs, outputs, options dict)]
    self.dispatch = []
    self.inputs = []  # [subgraph] -> input tensor names
    for s in range(self.num_subgraphs):
      sg = model.Subgraphs(s)
      self.inputs.append(
          tensor_names(sg, sg.InputsAsNumpy() if sg.InputsLength() else []))
      others = collections.Counter()
      for o in range(sg.OperatorsLength()):
        op = sg.Operators(o)
        name = opcode_name(model, op)
        ins = tensor_names(sg, op.InputsAsNumpy() if op.InputsLength() else [])
        outs = tensor_names(sg,
                            op.OutputsAsNumpy() if op.OutputsLength() else [])
        if name == "CUSTOM:DISPATCH_OP":
          opts = flexbuffers.Loads(bytes(op.CustomOptionsAsNumpy()))
          self.dispatch.append((s, ins, outs, opts))
        else:
          others[(name, ins, outs)] += 1
      self.other_ops.append(others)

  def module(self, opts):
    off, size = int(opts["bytecode_offset"]), int(opts["bytecode_size"])
    return self.data[off:off + size]

  def modules(self):
    """Multiset of sha256 of the distinct (offset, size) module ranges."""
    ranges = {(int(o["bytecode_offset"]), int(o["bytecode_size"]))
              for _, _, _, o in self.dispatch}
    return collections.Counter(
        hashlib.sha256(self.data[a:a + n]).hexdigest() for a, n in ranges)

  def partition_keys(self):
    return collections.Counter(
        (s, tuple(sorted(i)), tuple(sorted(o))) for s, i, o, _ in self.dispatch)


def run_cmd(cmd, log_path, timeout, stdout_path=None):
  """(returncode, log text); a negative code is a signal, None a timeout.
  stdout goes to `stdout_path` when given, else into the log with stderr."""
  with open(log_path, "wb") as log, open(stdout_path or os.devnull,
                                         "wb") as out:
    try:
      rc = subprocess.run(cmd, stdout=out if stdout_path else log,
                          stderr=log, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
      rc = None
  with open(log_path, "rb") as f:
    return rc, f.read().decode(errors="replace")


def describe_rc(rc):
  if rc is None:
    return "timed out"
  if rc < 0:
    try:
      return f"killed by {signal.Signals(-rc).name}"
    except ValueError:
      return f"killed by signal {-rc}"
  return f"exit {rc}"


def last_lines(text, n=3):
  lines = [l for l in text.strip().splitlines() if l.strip()]
  return " | ".join(lines[-n:])


def compare_model(args):
  """Compiles one model with both tools and compares; returns a dict."""
  key, path, graft, work = args
  tag = key.replace("/", "__")
  d = os.path.join(work, tag)
  os.makedirs(d, exist_ok=True)
  r = {"key": key, "path": path}
  lit_out = os.path.join(d, "litert.tflite")
  gr_out = os.path.join(d, "graft.tflite")
  t0 = time.time()
  lrc, llog = run_cmd([
      APPLY_PLUGIN, "--cmd=apply", f"--model={path}", f"--o={lit_out}",
      "--soc_manufacturer=IntelOpenVINO", "--soc_model=LNL",
      f"--libs={INTEL_COMPILER_DIR}", "--intel_openvino_graph_backends=cpu"
  ], os.path.join(d, "litert.log"), COMPILE_TIMEOUT_S)
  t1 = time.time()
  grc, glog = run_cmd([
      graft, "apply", path, f"--plugin={INTEL_PLUGIN}", "--soc-model=LNL",
      "--plugin-option=intel_openvino_graph_backends=cpu", "-o", gr_out,
      "--json"
  ], os.path.join(d, "graft.log"), COMPILE_TIMEOUT_S,
                      os.path.join(d, "graft.json"))
  t2 = time.time()
  r["litert_seconds"], r["graft_seconds"] = t1 - t0, t2 - t1
  r["litert_rc"], r["graft_rc"] = lrc, grc
  r["litert_ok"] = lrc == 0 and os.path.exists(lit_out)
  r["graft_ok"] = grc == 0 and os.path.exists(gr_out)
  r["litert_log"], r["graft_log"] = last_lines(llog), last_lines(glog, 2)
  r["litert_out"], r["graft_out"] = lit_out, gr_out
  if not (r["litert_ok"] and r["graft_ok"]):
    return r
  try:
    orig, lit, gr = Parsed(path), Parsed(lit_out), Parsed(gr_out)
  except Exception as e:  # a file either tool wrote that does not parse
    r["parse_error"] = repr(e)
    return r
  n = orig.num_subgraphs
  r["litert_partitions"] = len(lit.dispatch)
  r["graft_partitions"] = len(gr.dispatch)
  # Ops left outside DISPATCH_OPs, in the model's own subgraphs: all of
  # LiteRT's output (its partitions live in the bytecode), Graft's first ones
  # (it keeps each partition's original ops as a fallback subgraph after
  # them). Both drop the decomposition subgraphs of inlined composites.
  own = gr.num_subgraphs - len(gr.dispatch)
  r["same_cpu_ops"] = (own == lit.num_subgraphs and
                       all(lit.other_ops[s] == gr.other_ops[s]
                           for s in range(own)))
  if not r["same_cpu_ops"]:
    diffs = []
    if own != lit.num_subgraphs:
      diffs.append(f"LiteRT keeps {lit.num_subgraphs} of the model's "
                   f"subgraphs, Graft {own}")
    for s in range(max(own, lit.num_subgraphs)):
      lo = lit.other_ops[s] if s < lit.num_subgraphs else collections.Counter()
      go = gr.other_ops[s] if s < own else collections.Counter()
      only_l = sorted(k[0] for k in (lo - go).elements())
      only_g = sorted(k[0] for k in (go - lo).elements())
      if only_l or only_g:
        diffs.append(f"subgraph {s}: on CPU only in LiteRT's {only_l}, only "
                     f"in Graft's {only_g}")
    r["cpu_ops_diff"] = "; ".join(diffs)
  r["taken_ops"] = sum(sum(c.values()) for c in orig.other_ops[:n]) - sum(
      sum(c.values()) for c in lit.other_ops[:n])
  r["same_partitions"] = lit.partition_keys() == gr.partition_keys()
  if r["same_partitions"] and lit.dispatch:
    # Graft orders a partition's inputs as LiteRT does (core/outline.h), so
    # the same partitions must give the same bytecode.
    r["identical_bytecode"] = lit.modules() == gr.modules()
    if not r["identical_bytecode"]:
      sizes = lambda p: sorted(int(o["bytecode_size"]) for *_, o in p.dispatch)
      r["bytecode_diff"] = (f"module sizes LiteRT {sizes(lit)}, Graft "
                            f"{sizes(gr)}")
  return r


def check_apply(r, failures, exceptions_seen):
  """Appends to `failures` what `r` breaks; exceptions are checked instead."""
  key = r["key"]
  exc = EXCEPTIONS.get(key)
  kind = None
  if r["litert_rc"] is not None and r["litert_rc"] < 0:
    # LiteRT's tool crashed: Graft must not (or it is a listed exception).
    graft_crashed = r["graft_rc"] is None or r["graft_rc"] < 0
    if exc is not None:
      exceptions_seen.append(key)
      if exc[0] != ("plugin_crash" if graft_crashed else None):
        failures.append(f"{key}: listed as exception {exc[0]!r} but Graft "
                        f"{describe_rc(r['graft_rc'])}: update EXCEPTIONS")
    elif graft_crashed:
      failures.append(f"{key}: LiteRT's tool {describe_rc(r['litert_rc'])} "
                      f"and Graft {describe_rc(r['graft_rc'])}: "
                      f"{r['graft_log']}")
    elif not r["graft_ok"] and not r["graft_log"]:
      failures.append(f"{key}: Graft failed without a message")
    return "litert_crash"
  if r["graft_rc"] is None or (r["graft_rc"] is not None and r["graft_rc"] < 0):
    failures.append(f"{key}: Graft {describe_rc(r['graft_rc'])}: "
                    f"{r['graft_log']}")
    return None
  if r["litert_ok"] and not r["graft_ok"]:
    kind = "litert_only"
  elif r["graft_ok"] and not r["litert_ok"]:
    kind = "graft_only"
  elif r["litert_ok"] and r["graft_ok"]:
    if "parse_error" in r:
      kind = "parse_error"
    elif not r["same_cpu_ops"]:
      kind = "different_ops"
    elif r["graft_partitions"] > r["litert_partitions"]:
      kind = "more_partitions"
    elif r.get("identical_bytecode") is False:
      kind = "different_bytecode"
  if exc is not None:
    exceptions_seen.append(key)
    if kind != exc[0]:
      failures.append(f"{key}: listed as exception {exc[0]!r} ({exc[1]}) but "
                      f"the difference is now {kind!r}: update EXCEPTIONS")
    return kind
  if kind in (None, "graft_only"):
    # graft_only is fine for the assertion "Graft compiles at least what
    # LiteRT compiles", but it is reported.
    return kind
  detail = {
      "litert_only": lambda: f"LiteRT's tool compiles it, Graft "
                             f"{describe_rc(r['graft_rc'])}: {r['graft_log']}",
      "parse_error": lambda: f"an output does not parse: {r.get('parse_error')}",
      "different_ops": lambda: f"different ops taken: {r.get('cpu_ops_diff')}",
      "more_partitions": lambda: f"Graft {r['graft_partitions']} partitions, "
                                 f"LiteRT {r['litert_partitions']}",
      "different_bytecode": lambda: f"same partitions, different bytecode: "
                                    f"{r.get('bytecode_diff')}",
  }[kind]()
  failures.append(f"{key}: {detail}")
  return kind


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--graft", required=True)
  p.add_argument("--source-dir", required=True)
  p.add_argument("--third-party", default="")
  p.add_argument("--subset", action="store_true")
  p.add_argument("--jobs", type=int, default=2)
  p.add_argument("--keep", default="")
  p.add_argument("--verbose", action="store_true")
  p.add_argument("--only", default="", help="substring filter on model keys")
  p.add_argument("--no-run", action="store_true")
  p.add_argument("--sanitized", action="store_true",
                 help="a sanitizer build: skip (see below)")
  args = p.parse_args()
  if args.sanitized:
    print("SKIP in sanitizer builds: OpenVINO, under Intel's LiteRT plugin "
          "and dispatch library, dlopens with RTLD_DEEPBIND, which "
          "AddressSanitizer refuses (google/sanitizers#611); the normal build "
          "runs this test")
    return SKIP

  for need in (APPLY_PLUGIN, INTEL_PLUGIN,
               os.path.join(INTEL_DISPATCH_DIR,
                            "libLiteRtDispatch_IntelOpenvino.so")):
    if not os.path.exists(need):
      print(f"SKIP: {need} is missing: the ai-edge-litert 2.3.0 wheel with "
            f"Intel's plugin is needed (pip install ai-edge-litert==2.3.0)")
      return SKIP
  try:
    import openvino  # noqa: F401  (the Intel plugin and library link it)
  except ImportError:
    print("SKIP: openvino is not installed; Intel's LiteRT plugin and "
          "dispatch library link it: pip install openvino==2026.3.1")
    return SKIP

  third_party = (os.environ.get("GRAFT_THIRD_PARTY_MODELS") or
                 args.third_party)
  models = []  # (key, path)
  gen_dir = os.path.join(args.source_dir, "test_models", "generated")
  for f in sorted(os.listdir(gen_dir)):
    if f.endswith(".tflite"):
      models.append(("generated/" + f[:-len(".tflite")], os.path.join(gen_dir, f)))
  have_third_party = bool(third_party) and os.path.isdir(third_party)
  if have_third_party:
    for root, _, files in os.walk(third_party):
      for f in files:
        if f.endswith(".tflite"):
          full = os.path.join(root, f)
          models.append((os.path.relpath(full, third_party), full))
  else:
    print(f"note: third-party corpus absent ({third_party!r}; set "
          f"GRAFT_THIRD_PARTY_MODELS): generated corpus only")
  models.sort()
  if args.subset:
    keep = {"generated/" + m for m in SUBSET_GENERATED} | set(
        SUBSET_THIRD_PARTY)
    models = [m for m in models if m[0] in keep]
  if args.only:
    models = [m for m in models if args.only in m[0]]

  work = args.keep or tempfile.mkdtemp(prefix="graft_litert_plugins_")
  os.makedirs(work, exist_ok=True)
  t0 = time.time()
  try:
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
      results = list(pool.map(compare_model,
                              [(k, p, args.graft, work) for k, p in models]))
    failures, exceptions_seen = [], []
    kinds = {}
    for r in results:
      kinds[r["key"]] = check_apply(r, failures, exceptions_seen)
      if args.verbose:
        print(json.dumps({k: v for k, v in r.items()
                          if k not in ("litert_out", "graft_out")}))
    # A stale entry is one whose corpus was read and did not have it: the
    # third-party keys are only checked where that corpus is present.
    for key in EXCEPTIONS:
      read = have_third_party or key.startswith("generated/")
      if (key not in exceptions_seen and read and not args.subset and
          not args.only):
        failures.append(f"{key}: listed in EXCEPTIONS but not in the corpus")
    litert_n = sum(r["litert_ok"] for r in results)
    graft_n = sum(r["graft_ok"] for r in results)
    both = [r for r in results if r["litert_ok"] and r["graft_ok"]]
    same_ops = sum(bool(r.get("same_cpu_ops")) for r in both)
    same_parts = sum(bool(r.get("same_partitions")) and
                     r.get("litert_partitions", 0) > 0 for r in both)
    identical = sum(bool(r.get("identical_bytecode")) for r in both)
    crashes = [r["key"] for r in results
               if r["litert_rc"] is not None and r["litert_rc"] < 0]
    print(f"apply: {len(results)} models; LiteRT's tool compiled {litert_n}, "
          f"Graft {graft_n}; both {len(both)}: same ops taken {same_ops}, "
          f"same partitions {same_parts}, identical bytecode {identical}; "
          f"LiteRT's tool crashed on {len(crashes)}; exceptions "
          f"{len(exceptions_seen)}; {time.time() - t0:.0f} s")
    for key in exceptions_seen:
      print(f"  exception {key}: {EXCEPTIONS[key][0]}: {EXCEPTIONS[key][1]}")
    for r in results:
      if r["litert_rc"] is not None and r["litert_rc"] < 0:
        print(f"  LiteRT's tool {describe_rc(r['litert_rc'])} on {r['key']}; "
              f"Graft: {'compiled' if r['graft_ok'] else r['graft_log']}")
    if not args.no_run:
      run_part(results, args, work, failures)
    for f in failures:
      print("FAIL " + f)
    return 1 if failures else 0
  finally:
    if not args.keep:
      shutil.rmtree(work, ignore_errors=True)


def cpu_has_bf16():
  try:
    with open("/proc/cpuinfo") as f:
      flags = f.read()
  except OSError:
    return False
  return " avx512_bf16" in flags or " amx_bf16" in flags


def signature_io(path):
  """Subgraph-0 input indices in signature-0 order and output tensor names
  in signature-0 order (run_litert.py's orders), or None."""
  with open(path, "rb") as f:
    data = f.read()
  model = schema.Model.GetRootAs(data, 0)
  sg = model.Subgraphs(0)
  sg_inputs = list(sg.InputsAsNumpy()) if sg.InputsLength() else []
  if model.SignatureDefsLength() == 0:
    return list(range(len(sg_inputs))), [
        sg.Tensors(int(t)).Name().decode() for t in sg.OutputsAsNumpy()]
  sig = model.SignatureDefs(0)
  if sig.SubgraphIndex() != 0:
    return None
  ins = [sg_inputs.index(sig.Inputs(i).TensorIndex())
         for i in range(sig.InputsLength())]
  outs = [sg.Tensors(sig.Outputs(i).TensorIndex()).Name().decode()
          for i in range(sig.OutputsLength())]
  return ins, outs


def run_one(args):
  """Runs one model's compiled files in both runtimes; returns messages."""
  r, graft, source_dir, work = args
  key = r["key"]
  d = os.path.join(work, key.replace("/", "__"), "run")
  os.makedirs(d, exist_ok=True)
  msgs, fails = [], []
  io = signature_io(r["path"])
  if io is None:
    return [f"{key}: skipped (signature 0 is not on subgraph 0)"], []
  sig_inputs, sig_outputs = io
  # Inputs and outputs of the reference interpreter on the original model
  # (subgraph-0 order; seeded).
  ref = os.path.join(d, "reference")
  rc, log = run_cmd([
      sys.executable,
      os.path.join(source_dir, "tests", "reference", "run_reference.py"),
      r["path"], ref, "--random-seed", "7"
  ], os.path.join(d, "reference.log"), COMPILE_TIMEOUT_S)
  if rc != 0 or not json.load(open(os.path.join(ref, "status.json")))["ok"]:
    return [], [f"{key}: the reference interpreter failed: {last_lines(log)}"]
  inputs = [os.path.join(ref, f"input_{i}.npy") for i in sig_inputs]
  with open(r["path"], "rb") as f:
    m = schema.Model.GetRootAs(f.read(), 0)
  sg = m.Subgraphs(0)
  sg_out_names = [sg.Tensors(int(t)).Name().decode()
                  for t in sg.OutputsAsNumpy()]
  reference = [np.load(os.path.join(ref, f"output_{sg_out_names.index(n)}.npy"))
               for n in sig_outputs]
  bf16 = cpu_has_bf16()
  # bf16 keeps 8 bits of mantissa: ~2^-8 relative per op, growing with
  # depth (MobileNetV2 0.35, ~50 layers: 0.53 on logits up to 2.1 here).
  rel = 0.3 if bf16 else 1e-3
  for which in ("litert", "graft"):
    compiled = r[f"{which}_out"]
    # Graft's runtime.
    gdir = os.path.join(d, which + "_graft_run")
    cmd = [graft, "run", compiled, f"--dispatch-dir={INTEL_DISPATCH_DIR}",
           f"--output-dir={gdir}"]
    if inputs:
      cmd.append("--input=" + ",".join(
          f"{sig_inputs[k]}={p}" for k, p in enumerate(inputs)))
    rc, log = run_cmd(cmd, os.path.join(d, which + "_graft_run.log"),
                      COMPILE_TIMEOUT_S)
    if rc != 0:
      fails.append(f"{key} ({which}-compiled): Graft's runtime "
                   f"{describe_rc(rc)}: {last_lines(log)}")
      continue
    # LiteRT's runtime.
    ldir = os.path.join(d, which + "_litert_run")
    rc, log = run_cmd([
        sys.executable,
        os.path.join(source_dir, "tests", "litert_dispatch", "run_litert.py"),
        compiled, INTEL_DISPATCH_DIR, ldir, "--inputs"
    ] + inputs, os.path.join(d, which + "_litert_run.log"), COMPILE_TIMEOUT_S)
    if rc != 0:
      status = {}
      try:
        status = json.load(open(os.path.join(ldir, "status.json")))
      except (OSError, ValueError):
        pass
      fails.append(f"{key} ({which}-compiled): LiteRT's runtime "
                   f"{describe_rc(rc)}: "
                   f"{str(status.get('error', last_lines(log)))[:300]}")
      continue
    for i, name in enumerate(sig_outputs):
      lit = np.load(os.path.join(ldir, f"output_{i}.npy"))
      gpath = graft_output_path(gdir, name, sg_out_names.index(name))
      if gpath is None:
        fails.append(f"{key} ({which}-compiled): Graft wrote no output "
                     f"{name!r} in {gdir}")
        continue
      gr = np.load(gpath)
      if gr.shape != lit.shape or gr.tobytes() != lit.tobytes():
        fails.append(f"{key} ({which}-compiled) output {name}: Graft's "
                     f"runtime differs from LiteRT's on the same file and "
                     f"inputs (max |diff| "
                     f"{np.max(np.abs(gr.astype(np.float64) - lit)):.3g})")
        continue
      refo = reference[i].astype(np.float64)
      diff = float(np.max(np.abs(gr.astype(np.float64) - refo))) if refo.size else 0.0
      tol = rel * max(1.0, float(np.max(np.abs(refo))) if refo.size else 1.0)
      msgs.append(f"{key} ({which}-compiled) output {name}: identical in both "
                  f"runtimes; max |diff| vs reference {diff:.3g} (tolerance "
                  f"{tol:.3g}{', bf16' if bf16 else ''})")
      if not diff <= tol:
        fails.append(f"{key} ({which}-compiled) output {name}: max |diff| "
                     f"{diff:.3g} vs the reference interpreter exceeds "
                     f"{tol:.3g} ({'bf16: ' if bf16 else ''}relative "
                     f"{rel} of max(1, max |reference|))")
  return msgs, fails


def graft_output_path(gdir, name, index):
  """graft run writes NAME.npy (name made file-safe) or output_<i>.npy."""
  candidates = [name, "".join(c if c.isalnum() or c in "._-" else "_"
                              for c in name), f"output_{index}"]
  for c in candidates:
    p = os.path.join(gdir, c + ".npy")
    if os.path.exists(p):
      return p
  files = sorted(f for f in os.listdir(gdir) if f.endswith(".npy")) if (
      os.path.isdir(gdir)) else []
  return os.path.join(gdir, files[index]) if index < len(files) else None


def run_part(results, args, work, failures):
  """Part 2: both compiled files of the chosen models, in both runtimes."""
  chosen = set(SUBSET_RUN if args.subset else RUN_GENERATED) 
  chosen = {"generated/" + m for m in chosen} | (
      set() if args.subset else set(RUN_THIRD_PARTY))
  todo = [r for r in results
          if r["key"] in chosen and r["litert_ok"] and r["graft_ok"]]
  t0 = time.time()
  with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
    outs = list(pool.map(run_one, [(r, args.graft, args.source_dir, work)
                                   for r in todo]))
  n_fail = 0
  for msgs, fails in outs:
    for m in msgs:
      print("  " + m)
    failures.extend(fails)
    n_fail += bool(fails)
  print(f"run: {len(todo)} models, each compiled by both tools and run in "
        f"both runtimes: {len(todo) - n_fail} identical across runtimes and "
        f"within tolerance of the reference"
        f"{' (bf16 on this CPU)' if cpu_has_bf16() else ''}; {n_fail} failed; "
        f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
  sys.exit(main())
