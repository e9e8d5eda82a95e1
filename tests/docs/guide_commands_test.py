#!/usr/bin/env python3
"""Runs the shell commands of a guide section, as a reader would.

  guide_commands_test.py --build BUILD_DIR [--litert] FILE "SECTION HEADING" ...

For each (FILE, SECTION) pair, takes every ```sh block under that heading
(up to the next heading of the same or a higher level), rewrites the
`build/` prefix of paths (after a space or an `=`) to BUILD_DIR, and runs
the block with bash -e from the repository root. A block fails the test when it exits non-zero;
its output is printed. With --litert (sections that drive LiteRT's vendor
libraries), exit 77 (ctest's skip) when the ai-edge-litert wheel or
openvino is not installed, or in a sanitizer build.
"""

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def section_blocks(text, heading):
  lines = text.splitlines()
  start = None
  level = 0
  for i, line in enumerate(lines):
    m = re.match(r"^(#+)\s+(.*)$", line)
    if m and m.group(2).strip() == heading:
      start, level = i + 1, len(m.group(1))
      break
  if start is None:
    raise SystemExit(f"no section '{heading}'")
  end = len(lines)
  in_code = False
  for i in range(start, len(lines)):
    if lines[i].startswith("```"):
      in_code = not in_code
    m = re.match(r"^(#+)\s", lines[i])
    if m and not in_code and len(m.group(1)) <= level:
      end = i
      break
  blocks, current = [], None
  for line in lines[start:end]:
    if current is None and line.strip() == "```sh":
      current = []
    elif current is not None and line.strip() == "```":
      blocks.append("\n".join(current))
      current = None
    elif current is not None:
      current.append(line)
  return blocks


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--build", required=True)
  parser.add_argument("pairs", nargs="+")
  parser.add_argument("--sanitized", action="store_true",
                      help="a sanitizer build: skip LiteRT sections (below)")
  parser.add_argument("--litert", action="store_true",
                      help="the sections drive LiteRT's vendor libraries: "
                           "they need the ai-edge-litert wheel and openvino")
  args = parser.parse_args()
  if args.litert and args.sanitized:
    print("skipped in sanitizer builds: OpenVINO, under Intel's LiteRT "
          "libraries, dlopens with RTLD_DEEPBIND, which AddressSanitizer "
          "refuses (google/sanitizers#611); the normal build runs this test")
    return 77

  if len(args.pairs) % 2:
    raise SystemExit("FILE SECTION pairs expected")
  try:
    if args.litert:
      import ai_edge_litert  # noqa: F401
      import openvino  # noqa: F401
  except ImportError as e:
    print(f"skipped: the guides' LiteRT commands need ai-edge-litert and "
          f"openvino (tools/scripts/setup.sh installs them): {e}")
    return 77
  build = os.path.abspath(args.build)
  failed = 0
  ran = 0
  for path, heading in zip(args.pairs[0::2], args.pairs[1::2]):
    text = open(os.path.join(ROOT, path)).read()
    blocks = section_blocks(text, heading)
    if not blocks:
      print(f"FAIL {path} '{heading}': no sh block")
      failed += 1
    for block in blocks:
      script = re.sub(r"(^|[\s=])build/", lambda m: m.group(1) + build + "/",
                      block, flags=re.M)
      ran += 1
      r = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
      status = "ok" if r.returncode == 0 else f"FAIL (exit {r.returncode})"
      print(f"{status}: {path} '{heading}'\n{block}\n")
      if r.returncode != 0:
        failed += 1
        print(r.stdout[-4000:])
        print(r.stderr[-4000:])
  print(f"{ran - failed} passed, {failed} failed")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
