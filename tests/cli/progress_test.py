#!/usr/bin/env python3
"""Progress lines of `graft apply` (one target and several), `graft run` (on-device compile) and
`graft bench`: shown on a terminal (stderr a pty), one self-overwriting line
("\\r" ... erase to end of line) cleared before the report; nothing at all
when stderr is not a terminal.

  progress_test.py --graft BUILD/graft --example-dir DIR --model MODEL
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def run(argv, tty):
  """Runs argv; returns (exit code, stdout, stderr as bytes)."""
  if not tty:
    p = subprocess.run(argv, capture_output=True)
    return p.returncode, p.stdout, p.stderr
  master, slave = os.openpty()
  p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave)
  os.close(slave)
  err = b""
  while True:
    try:
      chunk = os.read(master, 4096)
    except OSError:  # EIO: the child closed its end.
      break
    if not chunk:
      break
    err += chunk
  out = p.stdout.read()
  code = p.wait()
  os.close(master)
  return code, out, err


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--graft", required=True)
  parser.add_argument("--example-dir", required=True)
  parser.add_argument("--model", required=True)
  args = parser.parse_args()
  failures = []

  def expect(cond, what, text):
    if not cond:
      failures.append(f"{what}\n  got: {text!r}")

  scratch = tempfile.mkdtemp(prefix="graft_progress_")
  try:
    out_model = os.path.join(scratch, "out.tflite")
    apply = [args.graft, "apply", args.model, "-o", out_model,
             "--plugin-dir=" + args.example_dir]
    runs = {
        "apply": (apply, b"\rgraft apply: example: compiling 1 partition "
                         b"(5 ops)...\x1b[K"),
        # Several targets: the line names the target it is at.
        "apply --target": (
            [args.graft, "apply", args.model, "--target=example:all",
             "-o", os.path.join(scratch, "targets"),
             "--plugin-dir=" + args.example_dir],
            b"\rgraft apply: [2/2 example:example-soc-2] example: compiling "
            b"1 partition (5 ops)...\x1b[K"),
        "run": ([args.graft, "run", args.model,
                 "--plugin-dir=" + args.example_dir,
                 "--dispatch-dir=" + args.example_dir],
                b"\rgraft run: on-device compile: example: compiling 1 "
                b"partition (5 ops)...\x1b[K"),
        "bench": ([args.graft, "bench", args.model, "--iterations=3",
                   "--warmup=0"],
                  b"\rgraft bench: " + os.path.basename(args.model).encode() +
                  b" (cpu, 1 thread): run 1/3...\x1b[K"),
    }
    for name, (argv, line) in runs.items():
      code, out, err = run(argv, tty=True)
      expect(code == 0, f"{name} on a terminal exits 0", err)
      expect(line in err, f"{name} on a terminal shows {line!r}", err)
      expect(err.endswith(b"\r\x1b[K"),
             f"{name} on a terminal clears the line at the end", err)
      expect(b"\r" not in out, f"{name}: stdout has no progress", out)
      code, out, err = run(argv, tty=False)
      expect(code == 0, f"{name} not on a terminal exits 0", err)
      expect(err == b"", f"{name} not on a terminal writes nothing to stderr",
             err)
    # apply's report times the whole job, load and save included.
    code, out, _ = run(apply, tty=False)
    expect(b"  total " in out and b"load " in out and b"save " in out,
           "apply's report has the whole job's time", out)
  finally:
    shutil.rmtree(scratch, ignore_errors=True)
  for f in failures:
    print("FAILED:", f)
  print(f"{len(runs) * 2 + 1} checks groups, {len(failures)} failures")
  return 1 if failures else 0


if __name__ == "__main__":
  sys.exit(main())
