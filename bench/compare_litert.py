#!/usr/bin/env python3
"""Graft's host against LiteRT's for LiteRT's Intel OpenVINO vendor, same run.

Both hosts drive the same vendor code from the ai-edge-litert wheel: the
compiler plugin (libLiteRtCompilerPlugin_IntelOpenvino.so, CPU backend) and
the dispatch library (libLiteRtDispatch_IntelOpenvino.so). What differs is
the host around them, and that is what this measures (issue 16, item 7).

Per model, in each round:
  apply    wall time of the whole process, from exec to exit:
             graft    `graft apply MODEL --plugin=<Intel plugin>
                      --soc-model=LNL --plugin-option=
                      intel_openvino_graph_backends=cpu -o OUT`, and
                      again with --cpu-fallback=false (no CPU fallback
                      subgraph: the same content as LiteRT's tool writes)
             litert   `apply_plugin_main --cmd=apply --model=MODEL --o=OUT
                      --soc_manufacturer=IntelOpenVINO --soc_model=LNL
                      --libs=<plugin dir> --intel_openvino_graph_backends=cpu`
           Both include process start, loading the plugin and OpenVINO,
           reading the model and writing the result. Also each process's
           CPU time (user + system, from wait4), which other tenants of
           the machine disturb less than wall time. Graft's in-process
           apply time (what `graft apply` prints: partition, group, outline,
           compile, embed; no process start, model load, plugin load or
           save) is reported beside it, with its phases.
  runtime  the model compiled by `graft apply` (LiteRT's format: DISPATCH_OP
           + LiteRtStamp; both runtimes load it), at each thread count:
             graft    `graft bench FILE --dispatch-dir=<Intel dispatch>
                      --json`: load = Runtime::Load (read the file, open the
                      dispatch library, device and invocation contexts:
                      OpenVINO imports the model there); first = the first
                      Invoke; invoke = median of the timed Invokes, timed in
                      C++ with inputs already in the runtime's tensors.
                      Each invoke copies the input into the library's own
                      buffer type and the output out (lock / unlock).
             litert   a fresh Python process running ai_edge_litert's
                      CompiledModel: load = Environment.create(
                      dispatch_library_path=...) + CompiledModel.from_file
                      with NPU|CPU accelerators and CpuOptions(num_threads);
                      first = the first run; invoke = median of
                      RunByIndex(0, inputs, outputs) on the C++ wrapper with
                      the buffers created and written beforehand (the public
                      run_by_index minus its two list comprehensions), timed
                      with perf_counter_ns.
           Both sides load once per thread count in one process, in the same
           order, so the first thread count's load is each process's first
           (it opens the dispatch library and OpenVINO's CPU plugin) and later
           ones are second loads. LiteRT's invoke times include one Python
           call into pybind11; the script measures that call on the same
           object (GetNumSignatures, timed the same way) and reports it
           ('python call'), so the reader can subtract it. Beside the
           medians, the fastest invoke of each side ('min'), which a
           descheduled OpenVINO thread on a shared machine disturbs least.

Threads: Graft's --threads and LiteRT's CpuOptions(num_threads) size the
hosts' CPU kernels. In a model the plugin takes whole, no op runs on them:
OpenVINO's CPU plugin sizes its own pool (all cores) on both sides, and
neither host passes a thread count to the dispatch library.

Rounds interleave as in compare_reference.py: Graft first in odd rounds,
LiteRT first in even ones; cells are medians over rounds, each ratio
(graft/litert, below 1: Graft's host costs less) the median of the per-round
ratios with the lowest and highest beside it.

Usage:
  bench/compare_litert.py [MODEL...] [--graft build/graft] [--wheel DIR]
                          [--threads 1,2] [--iterations 50] [--warmup 5]
                          [--rounds 1] [--json] [--keep DIR]
Without models, the defaults below (float CNNs of test_models/generated; the
MobileNetV2 is mobilenet_v2_100_224_float: the third-party corpus has none).
Exit status 2 when the wheel, its Intel vendor or OpenVINO is missing.
"""

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = os.path.join(ROOT, "test_models", "generated")
DEFAULT_MODELS = [os.path.join(GENERATED, m + ".tflite") for m in (
    "mobilenet_v2_035_96_float",
    "mobilenet_v2_100_224_float",
    "resnet_cnn_float",
    "efficientnet_block_float",
    "audio_conv1d_float",
)]
PLUGIN = "libLiteRtCompilerPlugin_IntelOpenvino.so"
DISPATCH = "libLiteRtDispatch_IntelOpenvino.so"
SOC_MANUFACTURER = "IntelOpenVINO"
BACKEND = "intel_openvino_graph_backends=cpu"


def machine():
    """CPU model, cores, the vector extensions that decide OpenVINO's CPU
    kernels (avx2, avx512f, avx512_bf16, amx) and the load average."""
    model, flags = "unknown CPU", set()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "Model name":
                model = value.strip()
            elif key.strip() == "Flags":
                flags = set(value.split())
    except OSError:
        pass
    if not flags:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    wanted = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16")
    have = [f for f in wanted if f in flags] or ["no avx2"]
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    return (f"{model} ({os.cpu_count()} cores; {' '.join(have)}), "
            f"load average {load}")


def find_wheel():
    spec = importlib.util.find_spec("ai_edge_litert")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def wheel_paths(wheel):
    """{'plugin_dir', 'plugin', 'dispatch_dir', 'apply_plugin_main'} in the
    wheel, or a message naming what is missing."""
    intel = os.path.join(wheel, "vendors", "intel_openvino")
    paths = {
        "plugin_dir": os.path.join(intel, "compiler"),
        "plugin": os.path.join(intel, "compiler", PLUGIN),
        "dispatch_dir": os.path.join(intel, "dispatch"),
        "apply_plugin_main": os.path.join(wheel, "tools", "apply_plugin_main"),
    }
    for key in ("plugin", "apply_plugin_main"):
        if not os.path.exists(paths[key]):
            return f"{paths[key]} is missing"
    if not os.path.exists(os.path.join(paths["dispatch_dir"], DISPATCH)):
        return f"{paths['dispatch_dir']}/{DISPATCH} is missing"
    if importlib.util.find_spec("openvino") is None:
        return ("openvino is not installed (Intel's plugin and dispatch "
                "library link libopenvino; setup.sh installs openvino==2026.3.1)")
    return paths


def wall(command):
    """(ms from exec to exit, CPU ms (user + system, all its threads),
    completed process). CPU time moves less than wall time when other
    processes share the cores."""
    with tempfile.TemporaryFile("w+") as out, \
            tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter_ns()
        p = subprocess.Popen(command, stdout=out, stderr=err)
        # wait4, not wait: it also gives the child's resource usage.
        _, status, usage = os.wait4(p.pid, 0)
        ms = (time.perf_counter_ns() - start) / 1e6
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        proc = subprocess.CompletedProcess(command, p.returncode, out.read(),
                                           err.read())
    cpu_ms = (usage.ru_utime + usage.ru_stime) * 1e3
    return ms, cpu_ms, proc


APPLY_SUMMARY = re.compile(
    r"([\d.]+) ms \(partition ([\d.]+), group ([\d.]+), outline ([\d.]+), "
    r"compile ([\d.]+), embed ([\d.]+)\)")


def graft_apply(graft, paths, model, out, extra=()):
    """{'wall_ms', 'cpu_ms', 'inproc_ms', 'phases': {name: ms}} of one
    `graft apply`."""
    ms, cpu_ms, proc = wall([graft, "apply", model, f"--plugin={paths['plugin']}",
                     "--soc-model=LNL", f"--plugin-option={BACKEND}",
                     "-o", out, *extra])
    if proc.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(last_line(proc))
    m = APPLY_SUMMARY.search(proc.stdout)
    if not m:
        raise RuntimeError("no timing line in graft apply's output")
    numbers = [float(x) for x in m.groups()]
    names = ("partition", "group", "outline", "compile", "embed")
    return {"wall_ms": ms, "cpu_ms": cpu_ms, "inproc_ms": numbers[0],
            "phases": dict(zip(names, numbers[1:]))}


def litert_apply(paths, model, out):
    """{'wall_ms', 'cpu_ms'} of one apply_plugin_main run."""
    ms, cpu_ms, proc = wall([paths["apply_plugin_main"], "--cmd=apply",
                     f"--model={model}", f"--o={out}",
                     f"--soc_manufacturer={SOC_MANUFACTURER}",
                     "--soc_model=LNL", f"--libs={paths['plugin_dir']}",
                     "--" + BACKEND])
    if proc.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(last_line(proc))
    return {"wall_ms": ms, "cpu_ms": cpu_ms}


def last_line(proc):
    text = (proc.stderr.strip() or proc.stdout.strip() or
            f"exit status {proc.returncode}")
    lines = [l for l in text.splitlines() if "error" in l.lower()] or \
        text.splitlines()
    return lines[-1][:200]


def graft_runtime(graft, paths, compiled, threads, iterations, warmup):
    """{threads: {'load_ms', 'first_ms', 'invoke_ms'}} from one `graft
    bench` process."""
    proc = subprocess.run(
        [graft, "bench", compiled, "--json",
         f"--dispatch-dir={paths['dispatch_dir']}",
         "--threads=" + ",".join(map(str, threads)),
         f"--iterations={iterations}", f"--warmup={warmup}"],
        capture_output=True, text=True)
    try:
        model = json.loads(proc.stdout)["models"][0]
    except (ValueError, LookupError):
        raise RuntimeError(last_line(proc))
    if "error" in model:
        raise RuntimeError(model["error"])
    out = {}
    for c in model["configs"]:
        if not c["ok"]:
            raise RuntimeError(c["error"])
        if c["cpu_ops"] or c["fallback_ops"]:
            raise RuntimeError(f"{c['cpu_ops']} ops on Graft's CPU kernels, "
                               f"{c['fallback_ops']} fell back: not all "
                               "on the vendor")
        out[c["threads"]] = {"load_ms": c["load_ms"],
                             "first_ms": c["first_run_ms"],
                             "invoke_ms": c["median_ms"],
                             "invoke_min_ms": c["min_ms"]}
    return out


def litert_runtime(paths, compiled, threads, iterations, warmup):
    """The same from a fresh Python process running litert_worker()."""
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--litert-worker",
         compiled, "--dispatch-dir", paths["dispatch_dir"],
         "--threads", ",".join(map(str, threads)),
         "--iterations", str(iterations), "--warmup", str(warmup)],
        capture_output=True, text=True)
    try:
        doc = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise RuntimeError(last_line(proc))
    if "error" in doc:
        raise RuntimeError(doc["error"])
    return {int(t): v for t, v in doc["threads"].items()}


def litert_worker(compiled, dispatch_dir, threads, iterations, warmup):
    """Runs in its own process; prints one JSON line. Imports come first,
    outside every timing (Graft's process start is not timed either)."""
    import numpy as np
    from ai_edge_litert.compiled_model import CompiledModel
    from ai_edge_litert.environment import Environment
    from ai_edge_litert.hardware_accelerator import HardwareAccelerator
    from ai_edge_litert.options import CpuOptions, Options
    rng = np.random.default_rng(1)
    result = {}
    for t in threads:
        options = Options(
            hardware_accelerators=HardwareAccelerator.NPU
            | HardwareAccelerator.CPU,
            cpu_options=CpuOptions(num_threads=t))
        start = time.perf_counter_ns()
        env = Environment.create(dispatch_library_path=dispatch_dir)
        env_ns = time.perf_counter_ns()
        cm = CompiledModel.from_file(compiled, environment=env,
                                     options=options)
        load_ms = (time.perf_counter_ns() - start) / 1e6
        if not cm.is_fully_accelerated():
            raise RuntimeError("LiteRT runs part of the model on its CPU "
                               "accelerator: not all on the vendor")
        inputs = cm.create_input_buffers(0)
        outputs = cm.create_output_buffers(0)
        for buf in inputs:
            d = buf.get_tensor_details()
            shape = tuple(int(x) for x in d["shape"])
            buf.write(rng.uniform(-1, 1, size=shape).astype(d["dtype"]))
        run = cm._model.RunByIndex
        in_caps = [b.capsule for b in inputs]
        out_caps = [b.capsule for b in outputs]
        times = []
        for i in range(-1 - warmup, iterations):
            s = time.perf_counter_ns()
            run(0, in_caps, out_caps)
            elapsed = (time.perf_counter_ns() - s) / 1e6
            if i == -1 - warmup:
                first_ms = elapsed
            elif i >= 0:
                times.append(elapsed)
        probe = cm._model.GetNumSignatures
        calls = []
        for _ in range(1000):
            s = time.perf_counter_ns()
            probe()
            calls.append(time.perf_counter_ns() - s)
        result[t] = {"load_ms": load_ms,
                     "environment_ms": (env_ns - start) / 1e6,
                     "first_ms": first_ms,
                     "invoke_ms": statistics.median(times),
                     "invoke_min_ms": min(times),
                     "python_call_us": statistics.median(calls) / 1e3}
        del inputs, outputs, in_caps, out_caps, run, probe, cm, env
    return {"threads": result}


def measure(label, fn):
    try:
        return fn(), None
    except Exception as e:  # One side failing a model is reported, not fatal.
        return None, f"{label}: {str(e).splitlines()[0][:200]}"


def measure_round(args, paths, model, compiled, workdir, graft_first):
    """One round of `model`: ({apply columns}, {threads: {runtime columns}}),
    each with its errors. Each pair of columns runs back to back."""
    base = os.path.splitext(os.path.basename(model))[0]
    apply, runtime = {"errors": []}, {t: {"errors": []} for t in args.threads}

    def apply_graft():
        r, e = measure("graft apply", lambda: graft_apply(
            args.graft, paths, model,
            os.path.join(workdir, base + ".graft.tflite")))
        apply["graft"] = r
        if e:
            apply["errors"].append(e)

    def apply_graft_bytecode_only():
        # The same output as LiteRT's tool: no CPU fallback subgraph.
        r, e = measure("graft apply --cpu-fallback=false", lambda: graft_apply(
            args.graft, paths, model,
            os.path.join(workdir, base + ".graft_nofb.tflite"),
            ["--cpu-fallback=false"]))
        apply["graft_nofb"] = r
        if e:
            apply["errors"].append(e)

    def apply_litert():
        r, e = measure("apply_plugin_main", lambda: litert_apply(
            paths, model, os.path.join(workdir, base + ".litert.tflite")))
        apply["litert"] = r
        if e:
            apply["errors"].append(e)

    def run(side, fn):
        def step():
            if compiled is None:
                return
            r, e = measure(side, fn)
            for t in args.threads:
                runtime[t][side] = (r or {}).get(t)
                if e:
                    runtime[t]["errors"].append(e)
        return step

    run_graft = run("graft", lambda: graft_runtime(
        args.graft, paths, compiled, args.threads, args.iterations,
        args.warmup))
    run_litert = run("litert", lambda: litert_runtime(
        paths, compiled, args.threads, args.iterations, args.warmup))
    for pair in ((apply_graft, apply_graft_bytecode_only, apply_litert),
                 (run_graft, run_litert)):
        for step in pair if graft_first else reversed(pair):
            step()
    return apply, runtime


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def paired(rounds, a, b):
    """Median, lowest and highest of the per-round ratios a/b, where a and b
    are (side, key) pairs; None without a complete round."""
    ratios = []
    for r in rounds:
        x = (r.get(a[0]) or {}).get(a[1])
        y = (r.get(b[0]) or {}).get(b[1])
        if x is not None and y:
            ratios.append(x / y)
    if not ratios:
        return None
    return {"median": statistics.median(ratios), "min": min(ratios),
            "max": max(ratios)}


def column(rounds, side, key):
    return median_or_none([(r.get(side) or {}).get(key) for r in rounds])


def summarize_apply(model, rounds):
    row = {"model": model, "rounds": rounds,
           "errors": sorted({e for r in rounds for e in r["errors"]}),
           "graft_wall_ms": column(rounds, "graft", "wall_ms"),
           "litert_wall_ms": column(rounds, "litert", "wall_ms"),
           "graft_cpu_ms": column(rounds, "graft", "cpu_ms"),
           "litert_cpu_ms": column(rounds, "litert", "cpu_ms"),
           "graft_inproc_ms": column(rounds, "graft", "inproc_ms"),
           "graft_phases_ms": {}}
    for phase in ("partition", "group", "outline", "compile", "embed"):
        row["graft_phases_ms"][phase] = median_or_none(
            [((r.get("graft") or {}).get("phases") or {}).get(phase)
             for r in rounds])
    row["ratios"] = {key[:-3]: paired(rounds, ("graft", key), ("litert", key))
                     for key in ("wall_ms", "cpu_ms")}
    # graft apply --cpu-fallback=false, whose output is LiteRT's tool's.
    for key in ("wall_ms", "cpu_ms"):
        row[f"graft_nofb_{key}"] = column(rounds, "graft_nofb", key)
        row["ratios"][f"nofb_{key[:-3]}"] = paired(
            rounds, ("graft_nofb", key), ("litert", key))
    return row


RUNTIME_KEYS = ("load_ms", "first_ms", "invoke_ms", "invoke_min_ms")


def summarize_runtime(model, threads, rounds):
    row = {"model": model, "threads": threads, "rounds": rounds,
           "errors": sorted({e for r in rounds for e in r["errors"]})}
    for side in ("graft", "litert"):
        for key in RUNTIME_KEYS:
            row[f"{side}_{key}"] = column(rounds, side, key)
    row["litert_python_call_us"] = column(rounds, "litert", "python_call_us")
    row["ratios"] = {key[:-3]: paired(rounds, ("graft", key), ("litert", key))
                     for key in RUNTIME_KEYS}
    return row


def ratio(row, name, one_round):
    r = row["ratios"].get(name)
    if r is None:
        return "-"
    if one_round:
        return f"{r['median']:.2f}x"
    return f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})"


def ms(v, digits=3):
    return f"{v:.{digits}f}" if v is not None else "-"


def print_tables(doc):
    one = doc["rounds"] == 1
    width = 9 if one else 20
    print(f"machine: {doc['machine']}")
    print(f"commit: {doc['commit']}; {doc['rounds']} round(s), interleaved; "
          "cells are medians over rounds in ms; ratios graft/litert "
          "(below 1: Graft's host costs less)"
          + ("" if one else ", median (lowest-highest) of per-round ratios"))
    print("\napply, whole process (exec to exit; plugin + OpenVINO load, "
          "model read, compile, write): wall and CPU (user + system) ms;"
          " Graft's in-process apply and two of its phases:")
    print(f"{'model':<28} {'wall g':>8} {'wall l':>8} {'wall g/l':>{width}}"
          f" {'cpu g':>8} {'cpu l':>8} {'cpu g/l':>{width}}"
          f" {'g in-proc':>9}  (compile, embed)")
    for r in doc["apply"]:
        p = r["graft_phases_ms"]
        print(f"{os.path.basename(r['model'])[:28]:<28}"
              f" {ms(r['graft_wall_ms'], 1):>8} {ms(r['litert_wall_ms'], 1):>8}"
              f" {ratio(r, 'wall', one):>{width}}"
              f" {ms(r['graft_cpu_ms'], 1):>8} {ms(r['litert_cpu_ms'], 1):>8}"
              f" {ratio(r, 'cpu', one):>{width}}"
              f" {ms(r['graft_inproc_ms'], 1):>9}"
              f"  ({ms(p['compile'], 1)}, {ms(p['embed'], 1)})")
        print(f"{'  --cpu-fallback=false':<28}"
              f" {ms(r['graft_nofb_wall_ms'], 1):>8} {'':>8}"
              f" {ratio(r, 'nofb_wall', one):>{width}}"
              f" {ms(r['graft_nofb_cpu_ms'], 1):>8} {'':>8}"
              f" {ratio(r, 'nofb_cpu', one):>{width}}")
        for e in r["errors"]:
            print(f"  {e}")
    print(f"\nruntime, the model compiled by graft apply; {doc['warmup']} "
          f"warm-up runs, median of {doc['iterations']} timed invokes (min "
          "g/l: the same ratio of the fastest invokes, which other tenants'"
          " load disturbs least):")
    print(f"{'model':<28} {'thr':>3} {'load g':>8} {'load l':>8}"
          f" {'load g/l':>{width}} {'first g':>8} {'first l':>8}"
          f" {'invoke g':>9} {'invoke l':>9} {'invoke g/l':>{width}}"
          f" {'min g/l':>{width}} {'py call':>8}")
    for r in doc["runtime"]:
        call = r["litert_python_call_us"]
        print(f"{os.path.basename(r['model'])[:28]:<28} {r['threads']:>3}"
              f" {ms(r['graft_load_ms'], 1):>8} {ms(r['litert_load_ms'], 1):>8}"
              f" {ratio(r, 'load', one):>{width}}"
              f" {ms(r['graft_first_ms'], 2):>8}"
              f" {ms(r['litert_first_ms'], 2):>8}"
              f" {ms(r['graft_invoke_ms'], 4):>9}"
              f" {ms(r['litert_invoke_ms'], 4):>9}"
              f" {ratio(r, 'invoke', one):>{width}}"
              f" {ratio(r, 'invoke_min', one):>{width}}"
              f" {(f'{call:.2f}us' if call is not None else '-'):>8}")
        for e in r["errors"]:
            print(f"  {e}")


def commit():
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                              "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + ("+dirty" if dirty else "") or "unknown"
    except OSError:
        return "unknown"


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*")
    parser.add_argument("--graft", default=os.path.join(ROOT, "build", "graft"),
                        help="the graft binary (default: build/graft)")
    parser.add_argument("--wheel", default=None,
                        help="the ai_edge_litert package directory (default: "
                             "the installed one)")
    parser.add_argument("--threads", default="1,2",
                        help="comma-separated thread counts (default: 1,2)")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document instead of tables")
    parser.add_argument("--keep", default="",
                        help="write the compiled models here and keep them")
    parser.add_argument("--litert-worker", metavar="COMPILED",
                        help=argparse.SUPPRESS)
    parser.add_argument("--dispatch-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]

    if args.litert_worker:
        try:
            doc = litert_worker(args.litert_worker, args.dispatch_dir,
                                args.threads, args.iterations, args.warmup)
        except Exception as e:  # Reported to the parent as JSON.
            doc = {"error": str(e).splitlines()[0] if str(e) else repr(e)}
        print(json.dumps(doc))
        return 0

    if args.rounds < 1:
        sys.exit("compare_litert: --rounds must be at least 1")
    if not os.access(args.graft, os.X_OK):
        sys.exit(f"compare_litert: no graft binary at {args.graft} "
                 "(build it or pass --graft)")
    wheel = args.wheel or find_wheel()
    if wheel is None:
        print("compare_litert: ai_edge_litert is not installed", file=sys.stderr)
        return 2
    paths = wheel_paths(wheel)
    if isinstance(paths, str):
        print(f"compare_litert: {paths}", file=sys.stderr)
        return 2
    models = args.models or DEFAULT_MODELS

    with tempfile.TemporaryDirectory(prefix="compare_litert_") as tmp:
        workdir = args.keep or tmp
        os.makedirs(workdir, exist_ok=True)
        # One compiled file per model for both runtimes, written before the
        # rounds (the rounds' own applies overwrite theirs, not this one).
        compiled = {}
        setup_errors = {}
        for model in models:
            base = os.path.splitext(os.path.basename(model))[0]
            out = os.path.join(workdir, base + ".run.tflite")
            _, e = measure("graft apply", lambda: graft_apply(
                args.graft, paths, model, out))
            compiled[model] = None if e else out
            if e:
                setup_errors[model] = e
        apply_rows, runtime_rows = [], []
        for model in models:
            rounds = [measure_round(args, paths, model, compiled[model],
                                    workdir, graft_first=n % 2 == 0)
                      for n in range(args.rounds)]
            apply_rows.append(summarize_apply(model, [a for a, _ in rounds]))
            for t in args.threads:
                row = summarize_runtime(model, t, [r[t] for _, r in rounds])
                if model in setup_errors:
                    row["errors"].insert(0, setup_errors[model])
                runtime_rows.append(row)

    doc = {"machine": machine(), "commit": commit(), "wheel": wheel,
           "iterations": args.iterations, "warmup": args.warmup,
           "rounds": args.rounds, "threads": args.threads,
           "apply": apply_rows, "runtime": runtime_rows}
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        print()
    else:
        print_tables(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
