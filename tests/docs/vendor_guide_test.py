#!/usr/bin/env python3
"""Runs docs/vendor_guide.md as a reader would, so the guide cannot rot.

  vendor_guide_test.py --build BUILD_DIR --work WORK_DIR [--sanitized]

WORK_DIR is emptied. BUILD_DIR is installed into WORK_DIR/prefix by the
guide's own first command (`cmake --install build --prefix "$GRAFT"`, with
`build` rewritten to BUILD_DIR), so everything after it runs against a fresh
install only, in the empty directory WORK_DIR/vendor, with GRAFT set to the
prefix and nothing from the source tree on any path. Then, in page order:

- every ```sh block runs with bash -e -o pipefail, in that one directory,
  so files flow from block to block as they do for a reader; a block that
  exits non-zero fails the test;
- every ```text block must directly follow a ```sh block: each of its
  lines must appear in that block's output (stdout and stderr), where
  `...` stands for anything (timings);
- every line of a ```c block must be a line of the guide's sources
  (docs/vendor_guide/*.c), and every line of a ```cmake block a line of
  docs/vendor_guide/CMakeLists.txt (whitespace at the ends ignored), so the
  excerpts the guide shows are the code that runs.

"Already have a LiteRT plugin?" needs the ai-edge-litert wheel and
openvino, and cannot run under AddressSanitizer (OpenVINO dlopens with
RTLD_DEEPBIND): without them, or with --sanitized, its blocks are skipped,
saying so, and the rest still runs.

Last, the skeleton recipe (section 12) runs again inside a copy of Graft's
tree layout: its cp/mv/sed lines applied to the source tree's vendors/null
in WORK_DIR/intree/vendors/, then a parent project that defines graft_c_api
as Graft's top-level CMakeLists.txt does and add_subdirectory()s the
renamed folder must configure and build both libraries (the old recipe left
CMakeLists.txt naming a file that did not exist). vendors/null/README.md's
own recipe runs too, out of tree.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
GUIDE = os.path.join(ROOT, "docs", "vendor_guide.md")
SOURCES = os.path.join(ROOT, "docs", "vendor_guide")
LITERT_SECTION = "Already have a LiteRT plugin?"
SKELETON_SECTION = "12. Your own vendor: start from the skeleton"


def blocks(text):
  """(section heading, language, body) of every fenced block, in order."""
  out, section, lang, body = [], "", None, []
  for line in text.splitlines():
    if lang is None:
      m = re.match(r"^#+\s+(.*)$", line)
      if m:
        section = m.group(1).strip()
      m = re.match(r"^```(\w*)\s*$", line)
      if m:
        lang, body = m.group(1), []
    elif line.strip() == "```":
      out.append((section, lang, "\n".join(body)))
      lang = None
    else:
      body.append(line)
  return out


def expected_line_found(expected, output_lines):
  pattern = "^" + ".*".join(re.escape(p) for p in expected.split("...")) + "$"
  return any(re.match(pattern, line.rstrip()) for line in output_lines)


def litert_available():
  try:
    import ai_edge_litert  # noqa: F401
    import openvino  # noqa: F401
  except ImportError as e:
    return str(e)
  return None


def run(script, cwd, env):
  return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script],
                        cwd=cwd, env=env, capture_output=True, text=True,
                        timeout=600)


def source_lines(paths):
  lines = set()
  for path in paths:
    with open(path, encoding="utf-8") as f:
      lines.update(line.strip() for line in f)
  return lines


def check_skeleton_in_tree(skeleton_block, work, env):
  """The recipe's copy-and-rename lines on vendors/null inside a tree laid
  out like Graft's; a parent project must configure and build it."""
  failures = 0
  lines = [l for l in skeleton_block.splitlines()
           if re.match(r"^(cp|mv|sed) ", l)]
  if len(lines) < 4:
    print("FAIL: the skeleton section has no cp/mv/sed recipe")
    return 1
  vendor = re.search(r"cp -r \S+ (\w+)$", lines[0]).group(1)
  script = "\n".join(lines).replace('"$GRAFT/share/graft/skeleton"',
                                    os.path.join(ROOT, "vendors", "null"))
  tree = os.path.join(work, "intree")
  os.makedirs(os.path.join(tree, "vendors"))
  r = run(script, os.path.join(tree, "vendors"), env)
  if r.returncode != 0:
    print(f"FAIL: the recipe in Graft's tree layout:\n{r.stdout}{r.stderr}")
    return 1
  with open(os.path.join(tree, "CMakeLists.txt"), "w") as f:
    f.write(f"""cmake_minimum_required(VERSION 3.22)
project(graft_tree_layout C)
# As Graft's c_api/CMakeLists.txt and vendors/CMakeLists.txt do.
add_library(graft_c_api INTERFACE)
target_include_directories(graft_c_api INTERFACE {ROOT}/c_api)
add_subdirectory(vendors/{vendor})
""")
  build = os.path.join(tree, "build")
  r = run(f"cmake -S {tree} -B {build} && cmake --build {build}", tree, env)
  if r.returncode != 0:
    print(f"FAIL: vendors/{vendor} does not configure or build in Graft's "
          f"tree layout:\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return 1
  for name in (f"libgraft_compiler_plugin_{vendor}.so",
               f"libgraft_dispatch_{vendor}.so"):
    path = os.path.join(build, "vendor_libs", "skeleton", name)
    if not os.path.exists(path):
      print(f"FAIL: the in-tree build made no {path}")
      failures += 1
  if not failures:
    print(f"ok: the skeleton recipe as vendors/{vendor} in Graft's tree "
          f"layout builds both libraries")
  return failures


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--build", required=True)
  parser.add_argument("--work", required=True)
  parser.add_argument("--sanitized", action="store_true")
  args = parser.parse_args()
  build = os.path.abspath(args.build)
  work = os.path.abspath(args.work)
  shutil.rmtree(work, ignore_errors=True)
  vendor_dir = os.path.join(work, "vendor")
  os.makedirs(vendor_dir)
  env = dict(os.environ)
  env["GRAFT"] = os.path.join(work, "prefix")
  # Only the prefix may answer find_package(graft).
  env.pop("CMAKE_PREFIX_PATH", None)
  env["CMAKE_FIND_USE_PACKAGE_REGISTRY"] = "OFF"

  litert_missing = litert_available()
  if args.sanitized:
    litert_missing = ("a sanitizer build (OpenVINO dlopens with "
                      "RTLD_DEEPBIND, which AddressSanitizer refuses)")

  c_lines = source_lines(os.path.join(SOURCES, f)
                         for f in sorted(os.listdir(SOURCES))
                         if f.endswith(".c"))
  cmake_lines = source_lines([os.path.join(SOURCES, "CMakeLists.txt")])

  with open(GUIDE, encoding="utf-8") as f:
    guide = blocks(f.read())
  failed = ran = 0
  last_output = None  # the output of the sh block just before, if any
  skeleton_block = None
  for section, lang, body in guide:
    where = f"'{section}'"
    if lang == "sh":
      if section == LITERT_SECTION and litert_missing:
        print(f"skipped {where}: {litert_missing}\n{body}\n")
        last_output = None
        continue
      if section == SKELETON_SECTION:
        skeleton_block = body
      script = re.sub(r"cmake --install build\b",
                      f"cmake --install {build}", body)
      r = run(script, vendor_dir, env)
      ran += 1
      last_output = (r.stdout + r.stderr).splitlines()
      ok = r.returncode == 0
      print(f"{'ok' if ok else f'FAIL (exit {r.returncode})'}: {where}\n"
            f"{body}\n")
      if not ok:
        failed += 1
        print(r.stdout[-4000:] + r.stderr[-4000:])
        last_output = None
      continue
    if lang == "text":
      if last_output is None:
        if section == LITERT_SECTION and litert_missing:
          continue
        print(f"FAIL: a text block in {where} follows no sh block that "
              f"ran:\n{body}\n")
        failed += 1
        continue
      missing = [l for l in body.splitlines()
                 if l.strip() and not expected_line_found(l, last_output)]
      if missing:
        failed += 1
        print(f"FAIL: output in {where} lacks:\n" + "\n".join(missing) +
              "\n--- the output was:\n" + "\n".join(last_output) + "\n")
      else:
        print(f"ok: the output in {where} shows the guide's text\n")
      last_output = None
      continue
    last_output = None
    if lang in ("c", "cmake"):
      known = c_lines if lang == "c" else cmake_lines
      missing = [l for l in body.splitlines()
                 if l.strip() and l.strip() not in known]
      if missing:
        failed += 1
        print(f"FAIL: the {lang} excerpt in {where} is not in the guide's "
              f"sources:\n" + "\n".join(missing) + "\n")

  if skeleton_block is None:
    print(f"FAIL: no sh block in '{SKELETON_SECTION}'")
    failed += 1
  else:
    failed += check_skeleton_in_tree(skeleton_block, work, env)

  # vendors/null/README.md's recipe, out of tree against the same install.
  with open(os.path.join(ROOT, "vendors", "null", "README.md"),
            encoding="utf-8") as f:
    readme = [b for s, l, b in blocks(f.read()) if l == "sh"]
  readme_dir = os.path.join(work, "readme")
  os.makedirs(readme_dir)
  for body in readme:
    r = run(body, readme_dir, env)
    ran += 1
    if r.returncode != 0:
      failed += 1
      print(f"FAIL: vendors/null/README.md's recipe:\n{body}\n"
            f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    else:
      print(f"ok: vendors/null/README.md's recipe\n{body}\n")

  print(f"{ran} blocks ran, {failed} failures")
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
