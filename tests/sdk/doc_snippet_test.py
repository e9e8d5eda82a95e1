#!/usr/bin/env python3
"""Compiles and runs the C program a guide section shows, as a reader would.

  doc_snippet_test.py PREFIX WORK_DIR FILE "SECTION HEADING" -- ARGS...

Takes the first ```c block under the heading in FILE (up to the next heading
of the same or a higher level), compiles it as strict C99 against the Graft
installed in PREFIX with pkg-config only, and runs it with ARGS. Fails when
the section has no C block, the program does not compile without warnings,
or it exits non-zero; its output is printed.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def c_block(text, heading):
    lines = text.splitlines()
    start = level = None
    for i, line in enumerate(lines):
        m = re.match(r"^(#+)\s+(.*)$", line)
        if m and m.group(2).strip() == heading:
            start, level = i + 1, len(m.group(1))
            break
    if start is None:
        sys.exit(f"no section '{heading}'")
    in_code, block = False, None
    for line in lines[start:]:
        if line.startswith("```"):
            if in_code and block is not None:
                return "\n".join(block) + "\n"
            in_code = not in_code
            if in_code and line.strip() == "```c":
                block = []
            continue
        if not in_code:
            m = re.match(r"^(#+)\s", line)
            if m and len(m.group(1)) <= level:
                break
        elif block is not None:
            block.append(line)
    sys.exit(f"no ```c block in section '{heading}'")


def main():
    prefix, work, path, heading = sys.argv[1:5]
    args = sys.argv[6:] if sys.argv[5:6] == ["--"] else sys.argv[5:]
    source = c_block(open(os.path.join(ROOT, path), encoding="utf-8").read(),
                     heading)
    os.makedirs(work, exist_ok=True)
    c_file = os.path.join(work, "snippet.c")
    exe = os.path.join(work, "snippet")
    with open(c_file, "w", encoding="utf-8") as f:
        f.write(source)
    env = dict(os.environ)
    # Only the prefix may answer for graft.
    env["PKG_CONFIG_PATH"] = env["PKG_CONFIG_LIBDIR"] = os.path.join(
        prefix, "lib", "pkgconfig")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "graft"],
                           env=env, check=True, capture_output=True,
                           text=True).stdout.split()
    libdir = subprocess.run(["pkg-config", "--variable=libdir", "graft"],
                            env=env, check=True, capture_output=True,
                            text=True).stdout.strip()
    cc = env.get("CC", "cc")
    subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror",
                    "-pedantic", c_file, "-o", exe] + flags +
                   [f"-Wl,-rpath,{libdir}"], check=True)
    run = subprocess.run([exe] + args, capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
