#!/usr/bin/env python3
"""Checks core/schema/tflite.fbs for wire compatibility with TFLite's schema.

The oracle is TFLite's own flatc-generated Python schema, shipped in the
ai-edge-litert wheel as ai_edge_litert/schema_py_generated.py. Our schema is
compiled with flatc --python into a temporary directory, and both sides are
introspected the same way:

  * enums/unions: classes whose public attributes are all ints
    (name -> wire value);
  * tables: every `<T>Start` / `<T>Add<Field>` / `<T>Start<Field>Vector`
    function is called with a recording mock builder, which yields the vtable
    size (StartObject), each field's slot, scalar kind (Prepend<Kind>Slot) and
    default value, and each vector's element size;
  * each field's accessor method is run on a recording table, which yields
    its full type ("Int8", "string", "union", "[Float32]", "[table Tensor]").

Going through flatc's Python output on both sides (rather than parsing a
.bfbs) keeps the two descriptions produced by the same rules.

Every enum value, union member, table and field of the oracle must be present
in ours with identical numbers; anything extra in ours is reported too.
Deprecated fields generate no Python code on either side, so their slots show
up as gaps in both (and still count in the compared vtable size).

Usage: python3 core/schema/check_schema.py [--flatc PATH] [--schema FBS]
                                           [--models DIR]
--models additionally converts every TFL3 file under DIR to JSON with our schema
and compares each operator's builtin code and options types with what the
oracle reads from the same file.

Exit status: 0 all match, 1 mismatches, 2 usage/tool error, 77 skipped
(oracle not importable).
"""

import argparse
import glob
import importlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


class RecordingTable:
  """Stands in for flatbuffers.table.Table behind a generated accessor;
  notes how the accessor reads the field, i.e. the field's type."""

  Bytes = bytearray(64)
  Pos = 0

  def __init__(self):
    self.kind = None

  def Offset(self, vtable_offset):
    return 4  # "field present"

  def Vector(self, off):
    return 0

  def VectorLen(self, off):
    return 1

  def Indirect(self, off):
    return 0

  def Get(self, flags, off):
    self.kind = flags.__name__[:-len("Flags")]
    return 0

  def String(self, off):
    self.kind = "string"
    return b""

  def Union(self, t, off):
    self.kind = "union"
    return t


class RecordingBuilder:
  """Stands in for flatbuffers.Builder; records every method call."""

  def __init__(self):
    self.calls = []

  def __getattr__(self, name):
    def record(*args):
      self.calls.append((name, args))
      return 0
    return record


def field_type(cls, accessor):
  """Type of a table field as read by its generated accessor method, e.g.
  "Int32", "string", "table Tensor", "union", "[Float32]", "[table Tensor]"."""
  fn = getattr(cls, accessor, None)
  if not inspect.isfunction(fn):
    return None
  is_vector = len(inspect.signature(fn).parameters) == 2  # (self, j)
  obj = cls.__new__(cls)
  tab = RecordingTable()
  obj._tab = tab
  try:
    result = fn(obj, 0) if is_vector else fn(obj)
  except Exception as e:  # report rather than crash
    return "unreadable (%s)" % e
  kind = tab.kind
  if kind is None and result is not None and hasattr(result, "Init"):
    kind = "table " + type(result).__name__
  return "[%s]" % kind if is_vector else kind


def norm(name):
  """Field-name key that ignores camel-casing differences between flatc
  versions (e.g. quantized_bias_type / QuantizedBiasType)."""
  return name.replace("_", "").lower()


def describe(ns):
  """Extracts enums and tables from a namespace dict of generated code."""
  classes = {k: v for k, v in ns.items() if inspect.isclass(v)}
  funcs = {k: v for k, v in ns.items() if inspect.isfunction(v)}

  enums = {}
  for name, cls in classes.items():
    attrs = {k: v for k, v in vars(cls).items() if not k.startswith("_")}
    if attrs and all(type(v) is int for v in attrs.values()):
      enums[name] = attrs

  table_names = sorted((n for n in classes
                        if n + "Start" in funcs and n + "End" in funcs),
                       key=len, reverse=True)

  def owner(fname, infix):
    for t in table_names:  # longest first, so TensorMap wins over Tensor
      if fname.startswith(t + infix) and len(fname) > len(t + infix):
        return t, fname[len(t + infix):]
    return None, None

  tables = {t: {"num_slots": None, "fields": {}, "vectors": {}}
            for t in table_names}
  for t in table_names:
    b = RecordingBuilder()
    funcs[t + "Start"](b)
    calls = [c for c in b.calls if c[0] == "StartObject"]
    if calls:
      tables[t]["num_slots"] = calls[0][1][0]

  for fname, fn in funcs.items():
    t, rest = owner(fname, "Add")
    if t is not None:
      b = RecordingBuilder()
      fn(b, 0)
      slots = [c for c in b.calls if c[0].startswith("Prepend")]
      if len(slots) != 1:
        continue
      method, args = slots[0]
      kind = method[len("Prepend"):-len("Slot")]
      tables[t]["fields"][norm(rest)] = {
          "name": rest, "slot": args[0], "kind": kind,
          "default": args[2] if len(args) > 2 else None,
          "type": field_type(classes[t], rest)}
      continue
    t, rest = owner(fname, "Start")
    if t is not None and rest.endswith("Vector"):
      b = RecordingBuilder()
      fn(b, 0)
      vec = [c for c in b.calls if c[0] == "StartVector"]
      if vec:
        elem_size, _, alignment = vec[0][1]
        tables[t]["vectors"][norm(rest[:-len("Vector")])] = (
            rest[:-len("Vector")], elem_size, alignment)
  return enums, tables


def load_oracle():
  try:
    from ai_edge_litert import schema_py_generated as oracle
  except Exception as e:  # ImportError or a broken install
    return None, "cannot import ai_edge_litert.schema_py_generated (%s)" % e
  return oracle, None


def load_ours(flatc, schema, tmp):
  out = os.path.join(tmp, "py")
  subprocess.run([flatc, "--python", "-o", out, schema], check=True)
  # Import as a package: generated accessors import sibling modules lazily
  # (e.g. `from graft.tfl.Tensor import Tensor`).
  sys.path.insert(0, out)
  ns = {}
  files = sorted(glob.glob(os.path.join(out, "**", "*.py"), recursive=True))
  for path in files:
    if os.path.basename(path) == "__init__.py":
      continue
    rel = os.path.splitext(os.path.relpath(path, out))[0]
    mod_name = rel.replace(os.sep, ".")
    mod = importlib.import_module(mod_name)
    for k, v in vars(mod).items():
      if getattr(v, "__module__", None) == mod_name:
        ns[k] = v
  return ns


def same_value(a, b):
  if isinstance(a, float) or isinstance(b, float):
    return float(a) == float(b)
  return a == b


def compare(oracle_ns, ours_ns, errors):
  o_enums, o_tables = describe(oracle_ns)
  u_enums, u_tables = describe(ours_ns)
  n_fields = 0

  for name in sorted(o_enums):
    if name not in u_enums:
      errors.append("enum %s: missing" % name)
      continue
    o, u = o_enums[name], u_enums[name]
    for v in sorted(o, key=o.get):
      if v not in u:
        errors.append("enum %s: value %s = %d missing" % (name, v, o[v]))
      elif u[v] != o[v]:
        errors.append("enum %s: %s = %d, TFLite has %d" % (name, v, u[v], o[v]))
    for v in sorted(set(u) - set(o)):
      errors.append("enum %s: extra value %s = %d" % (name, v, u[v]))
  for name in sorted(set(u_enums) - set(o_enums)):
    errors.append("enum %s: not in TFLite" % name)

  for name in sorted(o_tables):
    if name not in u_tables:
      errors.append("table %s: missing" % name)
      continue
    o, u = o_tables[name], u_tables[name]
    if o["num_slots"] != u["num_slots"]:
      errors.append("table %s: %s vtable slots, TFLite has %s" %
                    (name, u["num_slots"], o["num_slots"]))
    for key, of in sorted(o["fields"].items(), key=lambda kv: kv[1]["slot"]):
      n_fields += 1
      uf = u["fields"].get(key)
      where = "table %s field %s" % (name, of["name"])
      if uf is None:
        errors.append("%s (slot %d): missing" % (where, of["slot"]))
        continue
      if uf["slot"] != of["slot"]:
        errors.append("%s: slot %d, TFLite has %d" %
                      (where, uf["slot"], of["slot"]))
      if uf["kind"] != of["kind"]:
        errors.append("%s: stored as %s, TFLite has %s" %
                      (where, uf["kind"], of["kind"]))
      if uf["type"] != of["type"]:
        errors.append("%s: type %s, TFLite has %s" %
                      (where, uf["type"], of["type"]))
      if not same_value(uf["default"], of["default"]):
        errors.append("%s: default %r, TFLite has %r" %
                      (where, uf["default"], of["default"]))
    for key in sorted(set(u["fields"]) - set(o["fields"])):
      uf = u["fields"][key]
      errors.append("table %s field %s (slot %d): not in TFLite" %
                    (name, uf["name"], uf["slot"]))
    for key, ov in sorted(o["vectors"].items()):
      uv = u["vectors"].get(key)
      if uv is not None and uv[1] != ov[1]:
        errors.append("table %s vector %s: element size %d, TFLite has %d" %
                      (name, ov[0], uv[1], ov[1]))
      elif uv is None and key in u["fields"]:
        errors.append("table %s field %s: not a vector in ours" %
                      (name, ov[0]))
  for name in sorted(set(u_tables) - set(o_tables)):
    errors.append("table %s: not in TFLite" % name)

  return len(o_enums), len(o_tables), n_fields


def check_models(flatc, schema, models_dir, oracle, tmp, errors):
  """Converts each model to JSON with our schema and compares operator codes
  and options union types against the oracle's reading of the same bytes."""
  # Every file carrying the "TFL3" identifier, whatever its extension
  # (test data often uses .bin).
  paths = []
  for path in sorted(glob.glob(os.path.join(models_dir, "**", "*"),
                               recursive=True)):
    if os.path.isfile(path):
      with open(path, "rb") as f:
        if f.read(8)[4:] == b"TFL3":
          paths.append(path)
  op_names = {v: k for k, v in vars(oracle.BuiltinOperator).items()
              if not k.startswith("_")}
  opt_names = {v: k for k, v in vars(oracle.BuiltinOptions).items()
               if not k.startswith("_")}
  opt2_names = {v: k for k, v in vars(oracle.BuiltinOptions2).items()
                if not k.startswith("_")}
  out = os.path.join(tmp, "json")
  n_ok = n_ops = 0
  for path in paths:
    with open(path, "rb") as f:
      buf = f.read()
    try:
      ref = oracle.ModelT.InitFromPackedBuf(buf, 0)
    except Exception:
      continue  # not a readable flatbuffer (e.g. LFS pointer); skip
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([flatc, "--json", "--strict-json", "--raw-binary",
                        "--defaults-json", "-o", out, schema, "--", path],
                       capture_output=True, text=True)
    jpath = os.path.join(out, os.path.splitext(os.path.basename(path))[0]
                         + ".json")
    if r.returncode != 0 or not os.path.exists(jpath):
      errors.append("model %s: flatc --json failed: %s" %
                    (path, (r.stderr or r.stdout).strip()[:300]))
      continue
    with open(jpath) as f:
      model = json.load(f)
    codes = model.get("operator_codes", [])
    bad = False
    for i, (jc, rc) in enumerate(zip(codes, ref.operatorCodes or [])):
      want = op_names.get(rc.builtinCode, rc.builtinCode)
      if jc.get("builtin_code") != want:
        errors.append("model %s: operator_codes[%d] = %s, oracle reads %s" %
                      (path, i, jc.get("builtin_code"), want))
        bad = True
    for si, (jsg, rsg) in enumerate(zip(model.get("subgraphs", []),
                                        ref.subgraphs or [])):
      for oi, (jop, rop) in enumerate(zip(jsg.get("operators", []),
                                          rsg.operators or [])):
        n_ops += 1
        for field, names, rtype in (
            ("builtin_options_type", opt_names, rop.builtinOptionsType),
            ("builtin_options_2_type", opt2_names, rop.builtinOptions2Type)):
          want = names.get(rtype, rtype)
          got = jop.get(field, "NONE")
          if got != want:
            errors.append("model %s: subgraph %d op %d %s = %s, oracle "
                          "reads %s" % (path, si, oi, field, got, want))
            bad = True
    n_ok += not bad
  return len(paths), n_ok, n_ops


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--flatc", default=shutil.which("flatc") or "flatc")
  ap.add_argument("--schema", default=os.path.join(HERE, "tflite.fbs"))
  ap.add_argument("--models", metavar="DIR",
                  help="also check every TFL3 flatbuffer under DIR")
  args = ap.parse_args()

  oracle, why = load_oracle()
  if oracle is None:
    print("skipped: %s; install the ai-edge-litert wheel to run this check"
          % why)
    return SKIP
  if not (os.path.isfile(args.flatc) or shutil.which(args.flatc)):
    print("error: flatc not found (%s); pass --flatc PATH" % args.flatc)
    return 2

  errors = []
  with tempfile.TemporaryDirectory() as tmp:
    try:
      ours = load_ours(args.flatc, args.schema, tmp)
    except subprocess.CalledProcessError as e:
      print("error: flatc failed on %s (exit %d)" % (args.schema,
                                                     e.returncode))
      return 2
    n_enums, n_tables, n_fields = compare(vars(oracle), ours, errors)
    model_summary = ""
    if args.models:
      n_models, n_ok, n_ops = check_models(args.flatc, args.schema,
                                           args.models, oracle, tmp, errors)
      model_summary = "; %d/%d models (%d operators) agree with the oracle" % (
          n_ok, n_models, n_ops)

  for e in errors:
    print("MISMATCH: " + e)
  print("%d enums, %d tables, %d fields checked against %s%s: %s" %
        (n_enums, n_tables, n_fields, os.path.basename(oracle.__file__),
         model_summary, "%d mismatches" % len(errors) if errors else "OK"))
  return 1 if errors else 0


if __name__ == "__main__":
  sys.exit(main())
