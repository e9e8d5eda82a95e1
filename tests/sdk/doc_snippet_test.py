#!/usr/bin/env python3
"""Compiles and runs the C or C++ program a guide section shows, as a reader
would.

  doc_snippet_test.py PREFIX WORK_DIR FILE "SECTION HEADING" -- ARGS...

Takes the first ```c (or ```cpp) block under the heading in FILE (up to the
next heading of the same or a higher level), compiles it as strict C99 (or
C++17) against the Graft installed in PREFIX with pkg-config only, and runs
it with ARGS. Fails when the section has no such block, the program does
not compile without warnings, or it exits non-zero; its output is printed.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def code_block(text, heading):
    """(language, source) of the first ```c or ```cpp block of the
    section."""
    lines = text.splitlines()
    start = level = None
    for i, line in enumerate(lines):
        m = re.match(r"^(#+)\s+(.*)$", line)
        if m and m.group(2).strip() == heading:
            start, level = i + 1, len(m.group(1))
            break
    if start is None:
        sys.exit(f"no section '{heading}'")
    in_code, block, language = False, None, None
    for line in lines[start:]:
        if line.startswith("```"):
            if in_code and block is not None:
                return language, "\n".join(block) + "\n"
            in_code = not in_code
            if in_code and line.strip() in ("```c", "```cpp"):
                block, language = [], line.strip()[3:]
            continue
        if not in_code:
            m = re.match(r"^(#+)\s", line)
            if m and len(m.group(1)) <= level:
                break
        elif block is not None:
            block.append(line)
    sys.exit(f"no ```c or ```cpp block in section '{heading}'")


def main():
    prefix, work, path, heading = sys.argv[1:5]
    args = sys.argv[6:] if sys.argv[5:6] == ["--"] else sys.argv[5:]
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        language, source = code_block(f.read(), heading)
    os.makedirs(work, exist_ok=True)
    c_file = os.path.join(work, "snippet." + language)
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
    if language == "c":
        compiler = [env.get("CC", "cc"), "-std=c99"]
    else:
        compiler = [env.get("CXX", "c++"), "-std=c++17"]
    subprocess.run(compiler + ["-Wall", "-Wextra", "-Werror",
                    "-pedantic", c_file, "-o", exe] + flags +
                   [f"-Wl,-rpath,{libdir}"], check=True)
    run = subprocess.run([exe] + args, capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
