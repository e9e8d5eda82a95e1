#!/usr/bin/env python3
"""`graft run --report-html` as users see it: the page rendered by headless
Chromium (Debian's `chromium`). Checks the DOM Chromium built (one row per
original op, each placed where it ran) and, in a 1200x900 screenshot, that
the "where" column is on screen (the vendor's colour fills its swatches and
bars: converter tensor names are hundreds of characters long and once pushed
it off). The screenshot is kept as SCREENSHOT for people to look at.
Exit 77 (skip) without chromium.

  report_html_test.py --graft BUILD/graft --plugin-dir DIR --model MODEL
      --ops N --vendor V --colour RRGGBB --screenshot OUT.png
"""

import argparse
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


def main():
  parser = argparse.ArgumentParser()
  for flag in ("--graft", "--plugin-dir", "--model", "--vendor", "--colour",
               "--screenshot"):
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
    subprocess.run([args.graft, "apply", args.model, "-o", compiled,
                    "--plugin-dir=" + args.plugin_dir], check=True,
                   capture_output=True)
    subprocess.run([args.graft, "run", compiled,
                    "--dispatch-dir=" + args.plugin_dir, "--iterations=2",
                    "--profile", "--report-html=" + page], check=True,
                   capture_output=True)
    browser = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
               "--hide-scrollbars", "--user-data-dir=" +
               os.path.join(scratch, "profile")]
    dom = subprocess.run(browser + ["--dump-dom", "file://" + page],
                         capture_output=True, text=True, timeout=120).stdout
    failures = []
    rows = re.findall(r'<tr data-where="([^"]*)">', dom)
    if len(rows) != args.ops:
      failures.append(f"{len(rows)} op rows in the DOM, expected {args.ops}")
    if set(rows) != {args.vendor}:
      failures.append(f"rows placed at {sorted(set(rows))}, expected "
                      f"only {args.vendor}")
    subprocess.run(browser + ["--window-size=1200,900",
                              "--screenshot=" + args.screenshot,
                              "file://" + page],
                   capture_output=True, timeout=120, check=True)
    width, height, pixels, bpp = png_pixels(args.screenshot)
    want = bytes.fromhex(args.colour)
    coloured = sum(
        1 for line in pixels for x in range(0, width * bpp, bpp)
        if line[x:x + 3] == want)
    # The totals' swatch alone is 144 pixels; the op rows' swatches and
    # bars add hundreds more when the where column is on screen.
    if coloured < 144 * 8:
      failures.append(f"{coloured} pixels of #{args.colour} in the "
                      f"{width}x{height} screenshot: the where column is "
                      f"off screen")
    for f in failures:
      print("FAILED:", f)
    print(f"{len(rows)} rows, {coloured} pixels of the vendor's colour; "
          f"screenshot: {args.screenshot}")
    return 1 if failures else 0
  finally:
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
  sys.exit(main())
