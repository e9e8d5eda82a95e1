#!/usr/bin/env python3
"""Generates c_api/graft_schema_constants.h from core/schema/tflite.fbs.

  gen_schema_constants.py SCHEMA OUT      write the header
  gen_schema_constants.py SCHEMA --check HEADER
                                          exit 1 (with a diff) when HEADER is
                                          not what SCHEMA generates

The header gives vendors the schema's names as C constants, so a misspelt
op code, attribute name or enumerator fails to compile instead of silently
matching nothing (graft_op_find_attribute returns NULL, the default is read):

  GRAFT_OP_<OPERATOR>          TFLite BuiltinOperator numbers (graft_op_t
                               .builtin_code)
  GRAFT_ATTR_<FIELD>           the name of every field of every builtin
                               options table, as graft_attribute_t.name
                               spells it (core/op_attributes.h: scalars,
                               enums, strings and vectors; deprecated fields
                               and nested tables or unions are not
                               attributes)
  GRAFT_<ENUM>_<ENUMERATOR>    the numbers of the schema enums options fields
                               use (graft_attribute_t.int_value of an ENUM
                               attribute), e.g. GRAFT_ACTIVATION_FUNCTION_TYPE_RELU6

Output is deterministic (schema order, one name once), so a test regenerates
it and compares (tests/abi, abi_schema_constants_test).
"""
import difflib
import re
import sys

SCALARS = {
    "bool", "byte", "ubyte", "short", "ushort", "int", "uint", "long",
    "ulong", "float", "double", "int8", "uint8", "int16", "uint16", "int32",
    "uint32", "int64", "uint64", "float32", "float64", "string"
}


def strip_comments(text):
  return re.sub(r"//[^\n]*", "", text)


def upper_snake(name):
  """ActivationFunctionType -> ACTIVATION_FUNCTION_TYPE; Conv2D -> CONV2_D
  is avoided by splitting only before an upper-case letter that follows a
  lower-case one or a digit-free run."""
  s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
  s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s)
  return s.upper()


def parse(text):
  text = strip_comments(text)
  enums = {}  # name -> [(enumerator, value)]
  enum_order = []
  for m in re.finditer(r"\benum\s+(\w+)\s*:\s*\w+\s*\{([^}]*)\}", text):
    name, body = m.group(1), m.group(2)
    values, next_value = [], 0
    for item in body.split(","):
      item = item.strip()
      if not item:
        continue
      em = re.match(r"^(\w+)\s*(?:=\s*(-?\w+))?$", item)
      if not em:
        raise SystemExit(f"cannot parse enumerator '{item}' of {name}")
      value = int(em.group(2), 0) if em.group(2) else next_value
      values.append((em.group(1), value))
      next_value = value + 1
    enums[name] = values
    enum_order.append(name)
  unions = {}
  for m in re.finditer(r"\bunion\s+(\w+)\s*\{([^}]*)\}", text):
    unions[m.group(1)] = [x.strip() for x in m.group(2).split(",") if x.strip()]
  tables = {}
  for m in re.finditer(r"\b(?:table|struct)\s+(\w+)\s*\{([^}]*)\}", text):
    fields = []
    for decl in m.group(2).split(";"):
      decl = decl.strip()
      if not decl:
        continue
      fm = re.match(r"^(\w+)\s*:\s*(\[?\s*[\w.]+\s*\]?)(.*)$", decl, re.S)
      if not fm:
        raise SystemExit(f"cannot parse field '{decl}' of {m.group(1)}")
      fields.append((fm.group(1), fm.group(2).replace(" ", ""),
                     "deprecated" in fm.group(3)))
    tables[m.group(1)] = fields
  return enums, enum_order, unions, tables


def generate(schema_text, schema_name):
  enums, enum_order, unions, tables = parse(schema_text)
  options_tables = unions["BuiltinOptions"] + unions["BuiltinOptions2"]
  attrs, attr_seen, used_enums = [], set(), set()
  for table in options_tables:
    if table not in tables:
      raise SystemExit(f"options table {table} is not in the schema")
    for field, ftype, deprecated in tables[table]:
      base = ftype.strip("[]")
      is_vector = ftype.startswith("[")
      if deprecated:
        continue
      if base not in SCALARS and base not in enums:
        continue  # nested tables and unions are not attributes
      if is_vector and base == "string":
        continue  # no attribute type holds a vector of strings
      if base in enums:
        used_enums.add(base)
      if field not in attr_seen:
        attr_seen.add(field)
        attrs.append(field)

  out = []
  w = out.append
  w("/* Graft C ABI: the op schema's names as constants, for vendor code.")
  w(" *")
  w(f" * GENERATED from {schema_name} by c_api/gen_schema_constants.py; do not")
  w(" * edit. tests/abi (abi_schema_constants_test) regenerates it and fails")
  w(" * when it and the schema differ.")
  w(" *")
  w(" *   GRAFT_OP_<OPERATOR>        graft_op_t.builtin_code values (TFLite's")
  w(" *                              BuiltinOperator numbers)")
  w(" *   GRAFT_ATTR_<FIELD>         graft_attribute_t.name of every options")
  w(" *                              field, for graft_op_find_attribute(), so a")
  w(" *                              misspelt name fails to compile")
  w(" *   GRAFT_<ENUM>_<ENUMERATOR>  the int_value of ENUM attributes")
  w(" *")
  w(" * Macros only: no types, no symbols; C99 and C++. */")
  w("#ifndef GRAFT_C_API_GRAFT_SCHEMA_CONSTANTS_H_")
  w("#define GRAFT_C_API_GRAFT_SCHEMA_CONSTANTS_H_")
  w("")
  w("/* BuiltinOperator */")
  for name, value in enums["BuiltinOperator"]:
    w(f"#define GRAFT_OP_{name} {value}")
  w("")
  w("/* Attribute names (fields of the builtin options tables) */")
  for field in attrs:
    w(f"#define GRAFT_ATTR_{field.upper()} \"{field}\"")
  for enum in enum_order:
    if enum not in used_enums:
      continue
    w("")
    w(f"/* {enum} */")
    prefix = upper_snake(enum)
    for name, value in enums[enum]:
      w(f"#define GRAFT_{prefix}_{name.upper()} {value}")
  w("")
  w("#endif /* GRAFT_C_API_GRAFT_SCHEMA_CONSTANTS_H_ */")
  return "\n".join(out) + "\n"


def main():
  args = sys.argv[1:]
  if len(args) == 2:
    schema, out = args
    text = generate(open(schema, encoding="utf-8").read(),
                    "core/schema/tflite.fbs")
    with open(out, "w", encoding="utf-8") as f:
      f.write(text)
    return 0
  if len(args) == 3 and args[1] == "--check":
    schema, _, header = args
    want = generate(open(schema, encoding="utf-8").read(),
                    "core/schema/tflite.fbs")
    have = open(header, encoding="utf-8").read()
    if want == have:
      print(f"{header} matches {schema}")
      return 0
    sys.stdout.writelines(difflib.unified_diff(
        have.splitlines(True), want.splitlines(True), header,
        "generated from " + schema))
    print(f"\n{header} is stale: run c_api/gen_schema_constants.py "
          f"core/schema/tflite.fbs c_api/graft_schema_constants.h")
    return 1
  print(__doc__)
  return 2


if __name__ == "__main__":
  sys.exit(main())
