#!/usr/bin/env python3
"""Tests of compare_reference.py: how rounds become one row (medians, paired
ratios, errors) and, with --graft, one real interleaved run of the bundled
residual_mlp model.

Usage: bench/compare_reference_test.py [--graft build/graft]
Exit status 77 (a skip for ctest) when numpy or ai_edge_litert is missing.
"""

import importlib.util
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GRAFT = None


def load_script():
    spec = importlib.util.spec_from_file_location(
        "compare_reference", os.path.join(HERE, "compare_reference.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class SummarizeTest(unittest.TestCase):
    def setUp(self):
        self.cr = load_script()

    def test_medians_and_paired_ratios(self):
        rounds = [
            {"graft_ms": 2.0, "vendor_ms": 1.0, "xnnpack_ms": 1.0, "errors": []},
            {"graft_ms": 4.0, "vendor_ms": 3.0, "xnnpack_ms": 2.0, "errors": []},
            {"graft_ms": 9.0, "vendor_ms": 3.0, "xnnpack_ms": 10.0, "errors": []},
        ]
        row = self.cr.summarize("m.tflite", 2, rounds)
        self.assertEqual(row["graft_ms"], 4.0)
        self.assertEqual(row["xnnpack_ms"], 2.0)
        self.assertIsNone(row["reference_ms"])
        # Per-round vendor/xnnpack: 1.0, 1.5, 0.3. The ratio of the medians
        # (3.0 / 2.0) would say 1.5x; the paired median says 1.0x.
        r = row["ratios"]["vendor/xnnpack"]
        self.assertAlmostEqual(r["median"], 1.0)
        self.assertAlmostEqual(r["min"], 0.3)
        self.assertAlmostEqual(r["max"], 1.5)
        self.assertNotIn("graft/reference", row["ratios"])
        self.assertEqual(self.cr.ratio(row, "vendor_ms", "xnnpack_ms"),
                         "1.00x (0.30-1.50)")
        self.assertEqual(self.cr.ratio(row, "graft_ms", "reference_ms"), "-")

    def test_rounds_missing_a_side_are_left_out_of_ratios(self):
        rounds = [
            {"graft_ms": 2.0, "xnnpack_ms": None, "errors": ["xnnpack: boom"]},
            {"graft_ms": 3.0, "xnnpack_ms": 1.0, "errors": ["xnnpack: boom"]},
        ]
        row = self.cr.summarize("m.tflite", 1, rounds)
        self.assertEqual(row["errors"], ["xnnpack: boom"])
        self.assertEqual(row["ratios"]["graft/xnnpack"]["median"], 3.0)
        self.assertEqual(row["graft_ms"], 2.5)

    def test_one_round_prints_a_bare_ratio(self):
        row = self.cr.summarize(
            "m.tflite", 1, [{"graft_ms": 1.0, "xnnpack_ms": 4.0, "errors": []}])
        self.assertEqual(self.cr.ratio(row, "graft_ms", "xnnpack_ms"), "0.25x")


class RunTest(unittest.TestCase):
    def test_interleaved_rounds_of_a_real_model(self):
        if GRAFT is None:
            self.skipTest("no --graft")
        model = os.path.join(os.path.dirname(HERE), "test_models",
                             "residual_mlp.tflite")
        out = subprocess.run(
            [sys.executable, os.path.join(HERE, "compare_reference.py"),
             "--graft", GRAFT, "--threads", "1,2", "--iterations", "2",
             "--warmup", "1", "--rounds", "2", "--no-reference", "--json",
             model, "/nonexistent/model.tflite"],
            capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)
        self.assertEqual(doc["rounds"], 2)
        rows = doc["rows"]
        self.assertEqual([(os.path.basename(r["model"]), r["threads"])
                          for r in rows],
                         [("residual_mlp.tflite", 1), ("residual_mlp.tflite", 2),
                          ("model.tflite", 1), ("model.tflite", 2)])
        for r in rows[:2]:
            self.assertEqual(r["errors"], [])
            self.assertEqual(len(r["rounds"]), 2)
            self.assertGreater(r["graft_ms"], 0)
            self.assertGreater(r["xnnpack_ms"], 0)
            self.assertIsNone(r["reference_ms"])
            self.assertIn("graft/xnnpack", r["ratios"])
        for r in rows[2:]:
            self.assertIsNone(r["graft_ms"])
            self.assertTrue(any(e.startswith("graft: /nonexistent/model.tflite")
                                for e in r["errors"]), r["errors"])


if __name__ == "__main__":
    if "--graft" in sys.argv:
        i = sys.argv.index("--graft")
        GRAFT = sys.argv[i + 1]
        del sys.argv[i:i + 2]
    for module in ("numpy", "ai_edge_litert"):
        if importlib.util.find_spec(module) is None:
            print(f"compare_reference_test: {module} is not installed; skipped")
            sys.exit(77)
    unittest.main()
