#!/usr/bin/env python3
"""Graft's CPU kernels against TFLite's interpreter, same models, same run.

For each model and each thread count (seeded random inputs, warm-up first):
  graft      `graft bench MODEL --json` (its 'cpu' configuration: Graft's CPU
             kernels; Invoke timed in C++)
  vendor     with --plugin-dir: the same run's configuration compiled on the
             fly with the plugins there (e.g. the XNNPACK vendor), run
             through their dispatch libraries
  reference  ai-edge-litert's interpreter with the BUILTIN_REF op resolver
             (TFLite's reference kernels)
  xnnpack    ai-edge-litert's interpreter with its default resolver (the
             XNNPACK delegate where it applies), at the same thread count
and prints the medians and the ratios graft/reference, graft/xnnpack and
vendor/xnnpack (below 1: Graft is faster), with the machine and its load.

On a shared machine one pass can swing by a third. --rounds N repeats the
whole pass N times, the columns of a model timed back to back in each round
(Graft first in odd rounds, the interpreter first in even ones, so that a
drift in load favours neither). Each cell is then the median over rounds of
the per-round medians, and each ratio the median of the per-round ratios
(paired: both sides of a ratio ran minutes apart at most), with the lowest
and highest per-round ratio beside it.

The interpreter is timed from Python around invoke() only, so its times
include about a microsecond of Python call overhead that Graft's do not:
ratios for models that run in a few microseconds understate Graft's time.

Usage:
  bench/compare_reference.py [MODEL...] [--graft build/graft]
                             [--plugin-dir DIR] [--threads 1,2]
                             [--iterations 50] [--warmup 5] [--rounds 1]
                             [--no-reference] [--json]
Models are read where they are (never copied); without any, the defaults
below (test_models/residual_mlp.tflite and the larger float and int8 models
of ../shared/third_party_models that Graft runs).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THIRD_PARTY = os.environ.get(
    "GRAFT_THIRD_PARTY_MODELS",
    os.path.join(os.path.dirname(ROOT), "shared", "third_party_models"))
DEFAULT_MODELS = [os.path.join(ROOT, "test_models", "residual_mlp.tflite")] + [
    os.path.join(THIRD_PARTY, p) for p in (
        "LiteRT/litert/test/testdata/ff.tflite",
        "LiteRT/litert/test/testdata/q_einsum.tflite",
        "LiteRT/litert/test/testdata/attn_vec_einsum.tflite",
        "LiteRT/litert/test/testdata/rope.tflite",
        "tflite-micro/tensorflow/lite/micro/examples/mnist_lstm/"
        "trained_lstm.tflite",
        "tflite-micro/tensorflow/lite/micro/integration_tests/seanet/conv/"
        "conv10.tflite",
    )
]


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    return f"{model} ({os.cpu_count()} cores), load average {load}"


def random_input(detail, rng):
    shape, dtype = detail["shape"], detail["dtype"]
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-1, 1, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(dtype)
    info = np.iinfo(dtype)
    # Small non-negative values: valid indices for GATHER-like inputs.
    lo, hi = 0, min(info.max, 15)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def time_interpreter(path, resolver, threads, iterations, warmup):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    interpreter = Interpreter(
        model_path=path, num_threads=threads,
        experimental_op_resolver_type=getattr(OpResolverType, resolver))
    interpreter.allocate_tensors()
    rng = np.random.default_rng(1)
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], random_input(detail, rng))
    for _ in range(warmup):
        interpreter.invoke()
    times = []
    for _ in range(iterations):
        start = time.perf_counter_ns()
        interpreter.invoke()
        times.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(times)


def time_graft(graft, path, threads, plugin_dir, iterations, warmup):
    """{(config, threads): median ms} from one `graft bench` run; config is
    'graft' (CPU kernels) or 'vendor' (compiled with plugin_dir)."""
    command = [graft, "bench", path, "--json",
               "--threads=" + ",".join(map(str, threads)),
               f"--iterations={iterations}", f"--warmup={warmup}"]
    if plugin_dir:
        command.append(f"--plugin-dir={plugin_dir}")
    proc = subprocess.run(command, capture_output=True, text=True)
    try:
        model = json.loads(proc.stdout)["models"][0]
    except (ValueError, LookupError):
        raise RuntimeError(proc.stderr.strip() or "no output")
    if "error" in model:
        raise RuntimeError(model["error"])
    configs = model["configs"]
    out = {}
    for c in configs:
        if not c["ok"]:
            raise RuntimeError(c["error"])
        kind = "graft" if c["name"] == "cpu" else "vendor"
        out[(kind, c["threads"])] = c["median_ms"]
    return out


def measure(label, fn):
    try:
        return fn(), None
    except Exception as e:  # A model one side cannot run is reported, not fatal.
        return None, f"{label}: {str(e).splitlines()[0][:160]}"


RATIOS = (("graft_ms", "reference_ms"), ("graft_ms", "xnnpack_ms"),
          ("vendor_ms", "xnnpack_ms"))


def ratio_name(a, b):
    """'graft/xnnpack' for ('graft_ms', 'xnnpack_ms')."""
    return f"{a[:-3]}/{b[:-3]}"


def measure_round(args, path, threads, interpreters, graft_first):
    """One round of `path`: {threads: cell}, a cell holding each column's
    median ms (None where it failed) and the errors. `graft bench` and the
    interpreter run back to back, in the order given."""
    cells = {t: {"errors": []} for t in threads}

    def run_graft():
        graft, error = measure("graft", lambda: time_graft(
            args.graft, path, threads, args.plugin_dir, args.iterations,
            args.warmup))
        for t in threads:
            cells[t]["graft_ms"] = (graft or {}).get(("graft", t))
            cells[t]["vendor_ms"] = (graft or {}).get(("vendor", t))
            if error:
                cells[t]["errors"].append(error)

    def run_interpreter():
        for t in threads:
            for key, resolver in interpreters:
                cells[t][key], e = measure(key[:-3], lambda: time_interpreter(
                    path, resolver, t, args.iterations, args.warmup))
                if e:
                    cells[t]["errors"].append(e)

    steps = (run_graft, run_interpreter)
    for step in steps if graft_first else reversed(steps):
        step()
    return cells


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(path, threads, rounds):
    """One row from a cell's rounds: median time per column; per ratio the
    median, lowest and highest of the per-round ratios."""
    row = {"model": path, "threads": threads, "rounds": rounds,
           "errors": sorted({e for r in rounds for e in r["errors"]})}
    for key in ("graft_ms", "vendor_ms", "reference_ms", "xnnpack_ms"):
        row[key] = median_or_none([r.get(key) for r in rounds])
    row["ratios"] = {}
    for a, b in RATIOS:
        paired = [r[a] / r[b] for r in rounds if r.get(a) is not None and r.get(b)]
        if paired:
            row["ratios"][ratio_name(a, b)] = {
                "median": statistics.median(paired),
                "min": min(paired), "max": max(paired)}
    return row


def ratio(row, a, b):
    r = row["ratios"].get(ratio_name(a, b))
    if r is None:
        return "-"
    if len(row["rounds"]) == 1:
        return f"{r['median']:.2f}x"
    return f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"


def ms(v):
    return f"{v:.4f}" if v is not None else "-"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", default=DEFAULT_MODELS)
    parser.add_argument("--graft", default=os.path.join(ROOT, "build", "graft"),
                        help="the graft binary (default: build/graft)")
    parser.add_argument("--plugin-dir", default="",
                        help="also time the models compiled with the plugins "
                             "in this directory (the 'vendor' column)")
    parser.add_argument("--threads", default="1",
                        help="comma-separated thread counts (default: 1)")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat every measurement this many times, "
                             "interleaved; report medians over rounds")
    parser.add_argument("--no-reference", action="store_true",
                        help="skip the slow BUILTIN_REF column")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document instead of a table")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    if args.rounds < 1:
        sys.exit("compare_reference: --rounds must be at least 1")
    interpreters = [("xnnpack_ms", "AUTO")]
    if not args.no_reference:
        interpreters.insert(0, ("reference_ms", "BUILTIN_REF"))
    if not os.access(args.graft, os.X_OK):
        sys.exit(f"compare_reference: no graft binary at {args.graft} "
                 "(build it or pass --graft)")

    rows = []
    for path in args.models:
        rounds = [measure_round(args, path, threads, interpreters,
                                graft_first=n % 2 == 0)
                  for n in range(args.rounds)]
        rows += [summarize(path, t, [r[t] for r in rounds]) for t in threads]

    if args.json:
        json.dump({"machine": machine(), "iterations": args.iterations,
                   "warmup": args.warmup, "rounds": args.rounds,
                   "plugin_dir": args.plugin_dir,
                   "rows": rows}, sys.stdout, indent=2)
        print()
        return
    print(f"machine: {machine()}")
    over_rounds = (f"; median over {args.rounds} interleaved rounds, ratios as "
                   "median (lowest-highest) of the per-round ratios"
                   if args.rounds > 1 else "")
    print(f"{args.warmup} warm-up runs, median of {args.iterations} timed runs,"
          f" in ms{over_rounds}; vendor = compiled with "
          + (args.plugin_dir or "(none)"))
    width = 9 if args.rounds == 1 else 20
    print(f"{'model':<34} {'thr':>3} {'graft':>9} {'vendor':>9} {'reference':>10}"
          f" {'xnnpack':>9} {'graft/ref':>{width}} {'graft/xnn':>{width}}"
          f" {'vendor/xnn':>{width}}")
    for r in rows:
        name = os.path.basename(r["model"])[:34]
        print(f"{name:<34} {r['threads']:>3} {ms(r['graft_ms']):>9}"
              f" {ms(r['vendor_ms']):>9} {ms(r['reference_ms']):>10}"
              f" {ms(r['xnnpack_ms']):>9}"
              + "".join(f" {ratio(r, a, b):>{width}}" for a, b in RATIOS))
        for e in r["errors"]:
            print(f"  {e}")


if __name__ == "__main__":
    main()
