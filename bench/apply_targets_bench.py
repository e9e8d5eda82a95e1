#!/usr/bin/env python3
"""`graft apply --target` (several targets in one run) against one
`graft apply` per target, wall time of the whole command(s).

  apply_targets_bench.py --graft BUILD/graft --model M.tflite
      --targets T1,T2,... [--plugin-dir DIR | --plugin LIB]
      [--plugin-option K=V]... [--rounds N]

Each round runs both forms, in alternating order (interleaved, so drift in
the machine's load hits both alike), into a fresh temporary directory; the
outputs of the two forms are checked byte-identical once. Prints the
machine line (lscpu model name, cores, load average before and after), the
median, min and max of each form and the ratio of the medians (separate /
one pass).
"""

import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile
import time


def machine():
  model = ""
  for line in subprocess.run(["lscpu"], capture_output=True,
                             text=True).stdout.splitlines():
    if line.startswith("Model name:"):
      model = line.split(":", 1)[1].strip()
  return f"{model}, {os.cpu_count()} cores, load average " + " ".join(
      f"{x:.2f}" for x in os.getloadavg())


def run(cmd):
  start = time.perf_counter()
  p = subprocess.run(cmd, capture_output=True, text=True)
  elapsed = time.perf_counter() - start
  if p.returncode != 0:
    sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
  return elapsed


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--graft", required=True)
  ap.add_argument("--model", required=True)
  ap.add_argument("--targets", required=True)
  ap.add_argument("--plugin-dir")
  ap.add_argument("--plugin")
  ap.add_argument("--plugin-option", action="append", default=[])
  ap.add_argument("--rounds", type=int, default=5)
  a = ap.parse_args()
  common = [a.model]
  if a.plugin_dir:
    common.append(f"--plugin-dir={a.plugin_dir}")
  if a.plugin:
    common.append(f"--plugin={a.plugin}")
  common += [f"--plugin-option={o}" for o in a.plugin_option]
  targets = a.targets.split(",")
  print("machine:", machine())
  one_pass, separate = [], []
  with tempfile.TemporaryDirectory() as tmp:
    for r in range(a.rounds):
      def one(out):
        return run([a.graft, "apply"] + common +
                   [f"--target={a.targets}", "-o", out])

      def each(out):
        os.makedirs(out, exist_ok=True)
        total = 0.0
        for t in targets:
          vendor, _, soc = t.partition(":")
          cmd = [a.graft, "apply"] + common + [f"--vendor={vendor}", "-o",
                                               os.path.join(out, t + ".tflite")]
          if soc:
            cmd.append(f"--soc-model={soc}")
          total += run(cmd)
        return total

      out1, out2 = os.path.join(tmp, f"one{r}"), os.path.join(tmp, f"sep{r}")
      if r % 2 == 0:
        one_pass.append(one(out1))
        separate.append(each(out2))
      else:
        separate.append(each(out2))
        one_pass.append(one(out1))
      if r == 0:
        # Same bytes either way (targets named with their SoC model).
        names = sorted(os.listdir(out1))
        singles = sorted(os.listdir(out2))
        assert len(names) == len(singles) == len(targets), (names, singles)
        for t, s in zip(targets, [os.path.join(out2, t + ".tflite")
                                  for t in targets]):
          vendor, _, soc = t.partition(":")
          match = [n for n in names if f"_{vendor}_{soc}." in n]
          assert len(match) == 1, (t, names)
          assert filecmp.cmp(os.path.join(out1, match[0]), s, shallow=False), t
  print("machine after:", machine())
  for name, xs in (("one pass", one_pass), ("separate", separate)):
    print(f"{name:9s} median {statistics.median(xs)*1e3:8.1f} ms  "
          f"min {min(xs)*1e3:8.1f}  max {max(xs)*1e3:8.1f}  ({len(xs)} rounds)")
  print(f"ratio separate/one pass (medians): "
        f"{statistics.median(separate)/statistics.median(one_pass):.2f}x")


if __name__ == "__main__":
  main()
