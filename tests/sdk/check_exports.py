#!/usr/bin/env python3
"""Checks libgraft.so's dynamic symbols and dependencies.

  check_exports.py LIBGRAFT HEADER [--sanitized]

- The defined dynamic symbols are exactly the functions graft_app.h
  declares with GRAFT_APP_API: no C++, abseil, flatbuffers or libstdc++
  symbol leaks.
- The soname is libgraft.so.<major>.
- NEEDED holds system libraries only: the C and C++ runtimes and Debian's
  shared abseil and flatbuffers (private dependencies: Debian's archives of
  them are not position-independent, so they cannot be linked in), never a
  Graft library. --sanitized (ASan + UBSan builds) also allows their
  runtimes.
"""
import re
import subprocess
import sys


def main():
    lib, header = sys.argv[1], sys.argv[2]
    text = open(header, encoding="utf-8").read()
    declared = set(re.findall(r"GRAFT_APP_API\s[^;{]*?\b(graft_\w+)\s*\(", text))
    if len(declared) < 20:
        sys.exit(f"found only {len(declared)} declarations in {header}")

    nm = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                        capture_output=True, text=True).stdout
    exported = set()
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] == "A":  # version nodes
            continue
        exported.add(parts[2].split("@")[0])
    errors = []
    if exported - declared:
        errors.append("exported but not in the header: " +
                      ", ".join(sorted(exported - declared)[:20]))
    if declared - exported:
        errors.append("declared but not exported: " +
                      ", ".join(sorted(declared - exported)))

    dyn = subprocess.run(["readelf", "-d", lib], check=True,
                         capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn)
    soname = re.findall(r"\(SONAME\)\s+Library soname: \[(.+?)\]", dyn)
    allowed = re.compile(r"^(libc|libm|libdl|libpthread|librt|libstdc\+\+|"
                         r"libgcc_s|ld-linux[\w-]*)\.so\.\d+$"
                         r"|^libabsl_\w+\.so\.\d+$|^libflatbuffers\.so\.\d+$")
    sanitizers = re.compile(r"^lib(asan|ubsan)\.so\.\d+$")
    for n in needed:
        if "--sanitized" in sys.argv[3:] and sanitizers.match(n):
            continue
        if not allowed.match(n):
            errors.append(f"NEEDED {n}: not a system library")
    if not soname or not re.match(r"^libgraft\.so\.\d+$", soname[0]):
        errors.append(f"soname {soname}: expected libgraft.so.<major>")

    print(f"{len(exported)} exported functions, NEEDED {needed}, "
          f"soname {soname}")
    if errors:
        sys.exit("\n".join(errors))


if __name__ == "__main__":
    main()
