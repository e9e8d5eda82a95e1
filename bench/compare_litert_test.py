#!/usr/bin/env python3
"""Tests of compare_litert.py: how rounds become rows (medians, paired
ratios, errors) and, with --graft, one quick real run (1 round, 1 small
model, a few invokes) whose JSON has every field.

Usage: bench/compare_litert_test.py [--graft build/graft]
Runs under pytest too. Exit status 77 (a skip for ctest) when numpy,
ai_edge_litert, its Intel OpenVINO vendor or openvino is missing.
"""

import importlib.util
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GRAFT = os.environ.get("GRAFT_BINARY")
MODEL = os.path.join(os.path.dirname(HERE), "test_models", "generated",
                     "audio_conv1d_float.tflite")


def load_script():
    spec = importlib.util.spec_from_file_location(
        "compare_litert", os.path.join(HERE, "compare_litert.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def missing():
    """Why the real run cannot happen here, or None."""
    for module in ("numpy", "ai_edge_litert"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    cl = load_script()
    paths = cl.wheel_paths(cl.find_wheel())
    return paths if isinstance(paths, str) else None


class SummarizeTest(unittest.TestCase):
    def setUp(self):
        self.cl = load_script()

    def test_runtime_medians_and_paired_ratios(self):
        rounds = [
            {"graft": {"load_ms": 10, "first_ms": 1, "invoke_ms": 1.0},
             "litert": {"load_ms": 20, "first_ms": 1, "invoke_ms": 1.0,
                        "python_call_us": 0.2}, "errors": []},
            {"graft": {"load_ms": 30, "first_ms": 1, "invoke_ms": 3.0},
             "litert": {"load_ms": 20, "first_ms": 2, "invoke_ms": 2.0,
                        "python_call_us": 0.4}, "errors": []},
            {"graft": {"load_ms": 20, "first_ms": 1, "invoke_ms": 3.0},
             "litert": {"load_ms": 40, "first_ms": 1, "invoke_ms": 10.0,
                        "python_call_us": 0.3}, "errors": []},
        ]
        row = self.cl.summarize_runtime("m.tflite", 2, rounds)
        self.assertEqual(row["graft_invoke_ms"], 3.0)
        self.assertEqual(row["litert_invoke_ms"], 2.0)
        self.assertEqual(row["litert_python_call_us"], 0.3)
        # Per-round invoke ratios 1.0, 1.5, 0.3: the paired median is 1.0x,
        # where the ratio of the medians (3.0 / 2.0) would say 1.5x.
        r = row["ratios"]["invoke"]
        self.assertAlmostEqual(r["median"], 1.0)
        self.assertAlmostEqual(r["min"], 0.3)
        self.assertAlmostEqual(r["max"], 1.5)
        self.assertEqual(self.cl.ratio(row, "invoke", False),
                         "1.00x (0.30-1.50)")
        self.assertAlmostEqual(row["ratios"]["load"]["median"], 0.5)
        # Rounds without a column (here every one) leave its ratio out.
        self.assertIsNone(row["ratios"]["invoke_min"])
        self.assertIsNone(row["graft_invoke_min_ms"])

    def test_rounds_missing_a_side_are_left_out_of_ratios(self):
        rounds = [
            {"graft": {"wall_ms": 50, "inproc_ms": 10,
                       "phases": {"compile": 9, "embed": 1}},
             "litert": None, "errors": ["apply_plugin_main: boom"]},
            {"graft": {"wall_ms": 100, "cpu_ms": 40, "inproc_ms": 20,
                       "phases": {"compile": 18, "embed": 2}},
             "litert": {"wall_ms": 200, "cpu_ms": 50}, "errors": []},
        ]
        row = self.cl.summarize_apply("m.tflite", rounds)
        self.assertEqual(row["errors"], ["apply_plugin_main: boom"])
        self.assertEqual(row["ratios"]["wall"]["median"], 0.5)
        self.assertEqual(row["ratios"]["cpu"]["median"], 0.8)
        self.assertEqual(row["graft_wall_ms"], 75)
        self.assertEqual(row["graft_phases_ms"]["compile"], 13.5)
        self.assertIsNone(row["graft_phases_ms"]["partition"])
        self.assertEqual(self.cl.ratio(row, "wall", True), "0.50x")

    def test_apply_summary_line_is_parsed(self):
        m = self.cl.APPLY_SUMMARY.search(
            "  64/64 ops taken (100%) in 1 partition; 1 module, 6.5 MiB of "
            "bytecode; 235.9 ms (partition 0.1, group 0.0, outline 0.1, "
            "compile 223.7, embed 12.0)\n")
        self.assertEqual(m.group(1), "235.9")
        self.assertEqual(m.group(6), "12.0")


class RunTest(unittest.TestCase):
    def test_one_quick_round(self):
        if GRAFT is None:
            self.skipTest("no --graft (or GRAFT_BINARY)")
        why = missing()
        if why:
            self.skipTest(why)
        out = subprocess.run(
            [sys.executable, os.path.join(HERE, "compare_litert.py"),
             "--graft", GRAFT, "--threads", "1,2", "--iterations", "3",
             "--warmup", "1", "--rounds", "1", "--json", MODEL],
            capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)
        for key in ("machine", "commit", "wheel", "iterations", "warmup",
                    "rounds", "threads", "apply", "runtime"):
            self.assertIn(key, doc)
        self.assertIn("cores", doc["machine"])
        [apply] = doc["apply"]
        self.assertEqual(apply["errors"], [])
        for key in ("graft_wall_ms", "litert_wall_ms", "graft_cpu_ms",
                    "litert_cpu_ms", "graft_inproc_ms"):
            self.assertGreater(apply[key], 0, key)
        self.assertGreater(apply["graft_phases_ms"]["compile"], 0)
        # The whole process costs more than the apply inside it.
        self.assertGreater(apply["graft_wall_ms"], apply["graft_inproc_ms"])
        self.assertIsNotNone(apply["ratios"]["wall"])
        self.assertIsNotNone(apply["ratios"]["cpu"])
        self.assertEqual([r["threads"] for r in doc["runtime"]], [1, 2])
        for r in doc["runtime"]:
            self.assertEqual(r["errors"], [])
            for side in ("graft", "litert"):
                for key in ("load_ms", "first_ms", "invoke_ms",
                            "invoke_min_ms"):
                    self.assertGreater(r[f"{side}_{key}"], 0, (side, key))
            self.assertGreater(r["litert_python_call_us"], 0)
            self.assertLessEqual(r["graft_invoke_min_ms"], r["graft_invoke_ms"])
            for key in ("load", "first", "invoke", "invoke_min"):
                self.assertIsNotNone(r["ratios"][key], key)


if __name__ == "__main__":
    if "--graft" in sys.argv:
        i = sys.argv.index("--graft")
        GRAFT = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    why = missing()
    if why:
        print(f"compare_litert_test: {why}; skipped")
        sys.exit(77)
    unittest.main()
