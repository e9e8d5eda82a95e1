#!/usr/bin/env python3
"""`graft run --report-html` as users see it: the page rendered by headless
Chromium (Debian's `chromium`), and the files `--trace` and `--node-data`
write beside it.

MODEL (every op on VENDOR): its outputs are the same profiled (the vendor
then runs node by node) as not; the DOM Chromium built has one table row and
one graph box (SVG, class "op place-v-VENDOR", filled with the vendor's
colour by the page's style) per original op, the graph's edges, and every
op's time measured by the vendor (bold, not an even split); in a 1200x900
screenshot the vendor's colour covers the graph and the "where" column.
The trace is Chrome trace JSON: complete events with their fields, ts never
decreasing, one op event per op per run inside its run, the vendor's spans
inside their dispatch op's event. The node data is Model Explorer's
ModelNodeData (graph id -> results -> node key -> value, bgColor).
MIXED_MODEL (some ops refused by VENDOR): the graph has a CPU box for every
refused op and the page lists why each was refused.
The screenshots are kept as SCREENSHOT and SCREENSHOT with "_mixed" for
people to look at. Exit 77 (skip) without chromium.

  report_html_test.py --graft BUILD/graft --plugin-dir DIR --model MODEL
      --ops N --vendor V --colour RRGGBB --screenshot OUT.png
      --mixed-model MODEL2
"""

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def png_pixels(path):
  """(width, height, rows of bytes, bytes per pixel) of an 8-bit RGB(A) PNG."""
  data = open(path, "rb").read()
  assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
  pos, idat, width = 8, b"", 0
  while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
      width, height, depth, colour = struct.unpack(">IIBB", body[:10])
      assert depth == 8 and colour in (2, 6), (depth, colour)
      bpp = 3 if colour == 2 else 4
    elif kind == b"IDAT":
      idat += body
    pos += 12 + length
  raw = zlib.decompress(idat)
  stride = width * bpp
  rows, prev = [], bytearray(stride)
  for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for x in range(stride):
      a = line[x - bpp] if x >= bpp else 0
      b = prev[x]
      c = prev[x - bpp] if x >= bpp else 0
      if f == 1:
        line[x] = (line[x] + a) & 255
      elif f == 2:
        line[x] = (line[x] + b) & 255
      elif f == 3:
        line[x] = (line[x] + (a + b) // 2) & 255
      elif f == 4:
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        line[x] = (line[x] + pred) & 255
    rows.append(bytes(line))
    prev = line
  return width, height, rows, bpp


def check_trace(path, ops, runs, failures):
  """Checks a Chrome trace of `runs` runs of a model whose `ops` original
  ops all ran on one dispatch op that reports its own spans."""
  trace = json.load(open(path))
  events = trace.get("traceEvents")
  if not isinstance(events, list) or not events:
    failures.append("trace: no traceEvents")
    return
  complete = [e for e in events if e.get("ph") == "X"]
  for e in complete:
    for field, kind in (("name", str), ("cat", str), ("ts", (int, float)),
                        ("dur", (int, float)), ("pid", int), ("tid", int),
                        ("args", dict)):
      if not isinstance(e.get(field), kind):
        failures.append(f"trace: event {e} has no {field} of {kind}")
        return
    if e["dur"] < 0:
      failures.append(f"trace: negative dur in {e}")
  ts = [e["ts"] for e in complete]
  if ts != sorted(ts):
    failures.append("trace: ts decreases")
  eps = 1e-3  # microseconds, for the ns -> us rounding
  def inside(inner, outer):
    return (outer["ts"] - eps <= inner["ts"] and
            inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + eps)
  run_events = [e for e in complete if e["cat"] == "run"]
  op_events = [e for e in complete if e["cat"] not in ("run", "vendor span")]
  spans = [e for e in complete if e["cat"] == "vendor span"]
  if len(run_events) != runs:
    failures.append(f"trace: {len(run_events)} run events, expected {runs}")
  for e in op_events:
    if sum(inside(e, r) for r in run_events) != 1:
      failures.append(f"trace: op event {e} is not inside exactly one run")
      break
  dispatch = [e for e in op_events if e["cat"] == "vendor"]
  if len(dispatch) != runs:
    failures.append(f"trace: {len(dispatch)} dispatch op events, expected "
                    f"one per run ({runs})")
  for s in spans:
    if not any(inside(s, d) for d in dispatch):
      failures.append(f"trace: vendor span {s} is outside its dispatch op")
      break
  # One span per XNNPACK node (at least one per op) and one for the whole
  # run, per run; each node's names the model op.
  node_spans = [s for s in spans if "model_ops" in s["args"]]
  if len(node_spans) < ops * runs:
    failures.append(f"trace: {len(node_spans)} vendor spans naming model "
                    f"ops, expected at least {ops * runs}")


def check_node_data(path, ops, colour, failures):
  data = json.load(open(path))
  if not isinstance(data, dict) or len(data) != 1:
    failures.append("node data: not one graph id -> graph node data")
    return
  (graph_id, graph), = data.items()
  results = graph.get("results") if isinstance(graph, dict) else None
  if not isinstance(results, dict) or not 0 < len(results) <= ops:
    failures.append(f"node data: {graph_id}: results is not a map of at "
                    f"most {ops} nodes")
    return
  for key, r in results.items():
    if (not isinstance(key, str) or not key or not isinstance(r, dict) or
        not isinstance(r.get("value"), (int, float)) or
        r.get("bgColor") != "#" + colour):
      failures.append(f"node data: result {key}: {r}")
      break


def render(browser, page, screenshot):
  dom = subprocess.run(browser + ["--dump-dom", "file://" + page],
                       capture_output=True, text=True, timeout=120).stdout
  subprocess.run(browser + ["--window-size=1200,900",
                            "--screenshot=" + screenshot, "file://" + page],
                 capture_output=True, timeout=120, check=True)
  return dom


def main():
  parser = argparse.ArgumentParser()
  for flag in ("--graft", "--plugin-dir", "--model", "--vendor", "--colour",
               "--screenshot", "--mixed-model"):
    parser.add_argument(flag, required=True)
  parser.add_argument("--ops", type=int, required=True)
  args = parser.parse_args()
  chromium = shutil.which("chromium") or shutil.which("chromium-browser")
  if chromium is None:
    print("skipped: no chromium (Debian's package 'chromium')")
    return 77
  scratch = tempfile.mkdtemp(prefix="graft_report_html_")
  try:
    compiled = os.path.join(scratch, "compiled.tflite")
    page = os.path.join(scratch, "map.html")
    trace = os.path.join(scratch, "trace.json")
    node_data = os.path.join(scratch, "node_data.json")
    subprocess.run([args.graft, "apply", args.model, "-o", compiled,
                    "--plugin-dir=" + args.plugin_dir], check=True,
                   capture_output=True)
    subprocess.run([args.graft, "run", compiled,
                    "--dispatch-dir=" + args.plugin_dir, "--iterations=2",
                    "--profile", "--report-html=" + page, "--trace=" + trace,
                    "--node-data=" + node_data,
                    "--output-dir=" + os.path.join(scratch, "profiled")],
                   check=True, capture_output=True)
    subprocess.run([args.graft, "run", compiled,
                    "--dispatch-dir=" + args.plugin_dir,
                    "--output-dir=" + os.path.join(scratch, "plain")],
                   check=True, capture_output=True)
    browser = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
               "--hide-scrollbars", "--user-data-dir=" +
               os.path.join(scratch, "profile")]
    dom = render(browser, page, args.screenshot)
    failures = []
    # Profiled, the vendor runs node by node; the outputs are the same.
    outputs = sorted(os.listdir(os.path.join(scratch, "plain")))
    for name in outputs:
      a = open(os.path.join(scratch, "plain", name), "rb").read()
      b = open(os.path.join(scratch, "profiled", name), "rb").read()
      if a != b:
        failures.append(f"output {name} differs when profiled")
    if not outputs:
      failures.append("no outputs written")
    rows = re.findall(r'<tr data-where="([^"]*)">', dom)
    if len(rows) != args.ops:
      failures.append(f"{len(rows)} op rows in the DOM, expected {args.ops}")
    if set(rows) != {args.vendor}:
      failures.append(f"rows placed at {sorted(set(rows))}, expected "
                      f"only {args.vendor}")
    boxes = re.findall(
        r'<g class="op place-([a-z0-9_-]+)[^"]*" data-op="(\d+)"', dom)
    if sorted(int(op) for _, op in boxes) != list(range(args.ops)):
      failures.append(f"{len(boxes)} graph boxes, expected one per op "
                      f"0..{args.ops - 1}")
    if {c for c, _ in boxes} != {"v-" + args.vendor}:
      failures.append(f"graph boxes of classes {sorted({c for c, _ in boxes})}")
    rule = f".place-v-{args.vendor} rect{{fill:#{args.colour}}}"
    if rule not in dom:
      failures.append(f"no style rule {rule}")
    edges = len(re.findall(r"<path d=", dom))
    if edges < args.ops - 1:
      failures.append(f"{edges} edges for {args.ops} connected ops")
    measured = len(re.findall(r'<td class="num measured">', dom))
    if measured != 2 * args.ops:  # time and share per op
      failures.append(f"{measured // 2} ops with the vendor's measured time, "
                      f"expected all {args.ops}")
    width, height, pixels, bpp = png_pixels(args.screenshot)
    want = bytes.fromhex(args.colour)
    coloured = sum(
        1 for line in pixels for x in range(0, width * bpp, bpp)
        if line[x:x + 3] == want)
    # The totals' swatch alone is 144 pixels; the graph's boxes add
    # thousands more.
    if coloured < 144 * 30:
      failures.append(f"{coloured} pixels of #{args.colour} in the "
                      f"{width}x{height} screenshot: the graph is not drawn "
                      f"in the vendor's colour")
    check_trace(trace, args.ops, 2, failures)
    check_node_data(node_data, args.ops, args.colour, failures)

    # Some ops refused: CPU boxes, and why.
    mixed = os.path.join(scratch, "mixed.tflite")
    mixed_page = os.path.join(scratch, "mixed.html")
    subprocess.run([args.graft, "apply", args.mixed_model, "-o", mixed,
                    "--plugin-dir=" + args.plugin_dir], check=True,
                   capture_output=True)
    subprocess.run([args.graft, "run", mixed,
                    "--dispatch-dir=" + args.plugin_dir, "--iterations=1",
                    "--profile", "--report-html=" + mixed_page], check=True,
                   capture_output=True)
    base, ext = os.path.splitext(args.screenshot)
    mixed_dom = render(browser, mixed_page, base + "_mixed" + ext)
    cpu_boxes = {int(op) for op in re.findall(
        r'<g class="op place-cpu" data-op="(\d+)"', mixed_dom)}
    vendor_boxes = re.findall(
        rf'<g class="op place-v-{args.vendor} part-\d+" data-op="(\d+)"',
        mixed_dom)
    refused = re.findall(
        r'<tr data-op="(\d+)"><td class="num">\d+</td><td>[^<]*</td>'
        r'<td class="why">([^<]*)</td></tr>', mixed_dom)
    if not cpu_boxes or not vendor_boxes:
      failures.append(f"mixed model: {len(cpu_boxes)} CPU and "
                      f"{len(vendor_boxes)} {args.vendor} boxes, expected both")
    if {int(op) for op, _ in refused} != cpu_boxes:
      failures.append(f"mixed model: reasons for ops "
                      f"{sorted(int(op) for op, _ in refused)}, expected the "
                      f"CPU ops {sorted(cpu_boxes)}")
    if not all(why.startswith(args.vendor + ": ") for _, why in refused):
      failures.append(f"mixed model: reasons not naming {args.vendor}: "
                      f"{[w for _, w in refused][:3]}")
    for f in failures:
      print("FAILED:", f)
    print(f"{len(rows)} rows, {len(boxes)} graph boxes, {edges} edges, "
          f"{coloured} pixels of the vendor's colour; mixed model: "
          f"{len(cpu_boxes)} refused ops with reasons, e.g. "
          f"{refused[0][1] if refused else None!r}; screenshots: "
          f"{args.screenshot}, {base}_mixed{ext}")
    return 1 if failures else 0
  finally:
    shutil.rmtree(scratch, ignore_errors=True)

if __name__ == "__main__":
  sys.exit(main())
