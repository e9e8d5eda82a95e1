"""Tests of the graft package (unittest; pytest runs them too).

Environment: GRAFT_LIBRARY (libgraft.so; unset to use the package's own
search, as for an installed prefix), GRAFT_TEST_MODELS (test_models/generated)
and GRAFT_TEST_EXAMPLE_VENDOR_DIR (the example vendor's libraries; the
apply and on-device tests skip without it).
"""
import os
import tempfile
import unittest

import numpy as np

import graft

MODELS = os.environ.get(
    "GRAFT_TEST_MODELS",
    os.path.join(os.path.dirname(__file__), "..", "..", "test_models",
                 "generated"))
EXAMPLE = os.environ.get("GRAFT_TEST_EXAMPLE_VENDOR_DIR")


def model_path(name):
    return os.path.join(MODELS, name)


def reference(*parts):
    return np.load(os.path.join(MODELS, *parts))


class ModelTest(unittest.TestCase):

    def test_runs_a_signature_against_the_reference(self):
        model = graft.Model(model_path("two_signatures_float.tflite"),
                            num_threads=2)
        self.assertEqual(model.signatures, ["decode", "encode"])
        encode = model.signature("encode")
        self.assertEqual([i["name"] for i in encode.inputs], ["x"])
        self.assertEqual(encode.inputs[0]["shape"], (1, 8))
        self.assertEqual(encode.inputs[0]["dtype"], np.float32)
        x = reference("two_signatures_float", "encode", "input_x.npy")
        out = model.run({"x": x}, signature="encode")
        np.testing.assert_allclose(
            out["code"],
            reference("two_signatures_float", "encode", "output_code.npy"),
            rtol=1e-4, atol=1e-4)
        # LiteRT's SignatureRunner spelling.
        runner = model.get_signature_runner("encode")
        np.testing.assert_allclose(runner(x=x)["code"], out["code"])

    def test_loads_from_bytes_and_converts_dtypes(self):
        with open(model_path("two_signatures_float.tflite"), "rb") as f:
            model = graft.Model(f.read())
        x = reference("two_signatures_float", "encode", "input_x.npy")
        out = model.run({"x": x.astype(np.float64)}, signature="encode")
        self.assertEqual(out["code"].dtype, np.float32)
        self.assertEqual(out["code"].shape, (1, 4))

    def test_resizes_a_dynamic_batch(self):
        model = graft.Model(model_path("dynamic_batch_float.tflite"))
        sig = model.signature()
        self.assertEqual(sig.inputs[0]["shape_signature"][0], -1)
        one = reference("dynamic_batch_float", "input_0.npy")
        want = reference("dynamic_batch_float", "output_0.npy")
        name = sig.inputs[0]["name"]
        out = sig.run({name: np.concatenate([one, one, one])})
        (result,) = out.values()
        self.assertEqual(result.shape[0], 3)
        for row in result:
            np.testing.assert_allclose(row, want[0], rtol=1e-4, atol=1e-4)

    def test_errors_carry_grafts_message(self):
        with self.assertRaises(graft.GraftError) as e:
            graft.Model("/nonexistent/model.tflite")
        self.assertIn("/nonexistent/model.tflite", str(e.exception))
        model = graft.Model(model_path("two_signatures_float.tflite"))
        with self.assertRaises(graft.GraftError) as e:
            model.signature("nope")
        self.assertEqual(e.exception.code_name, "NOT_FOUND")
        self.assertIn("'decode', 'encode'", e.exception.message)
        with self.assertRaises(graft.GraftError) as e:
            model.run({"y": np.zeros((1, 8), np.float32)}, signature="encode")
        self.assertIn("its inputs: 'x'", str(e.exception))
        with self.assertRaises(graft.GraftError) as e:
            model.run({"x": np.zeros((1, 9), np.float32)}, signature="encode")
        self.assertEqual(e.exception.code_name, "INVALID_ARGUMENT")

    def test_reports_placement_and_profile(self):
        model = graft.Model(model_path("two_signatures_float.tflite"),
                            profiling=True)
        report = model.report()
        self.assertGreater(report["counts"]["cpu"], 0)
        self.assertEqual(report["counts"]["vendor"], 0)
        self.assertIn("subgraphs", report)
        model.run({"x": np.zeros((1, 8), np.float32)}, signature="encode")
        profile = model.profile(reset=True)
        self.assertEqual(profile["runs"], 1)
        self.assertEqual(model.profile()["runs"], 0)

    def test_inspect(self):
        info = graft.inspect(model_path("two_signatures_float.tflite"))
        self.assertEqual(set(info["signatures"]), {"", "decode", "encode"})
        self.assertEqual(info["signatures"]["encode"]["outputs"][0]["name"],
                         "code")


@unittest.skipUnless(EXAMPLE, "GRAFT_TEST_EXAMPLE_VENDOR_DIR not set")
class VendorTest(unittest.TestCase):

    def test_applies_and_runs_on_the_vendor(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "compiled.tflite")
            report = graft.apply(model_path("two_signatures_float.tflite"),
                                 out, plugin_dir=EXAMPLE, vendors=["example"])
            self.assertGreater(report["ops_taken"], 0)
            self.assertIn("ops taken", report["summary"])
            self.assertTrue(any(op["taken_by"] == "example"
                                for op in report["ops"]))
            model = graft.Model(out, dispatch_dirs=[EXAMPLE],
                                policy="require_vendor_ops")
            self.assertGreater(model.report()["counts"]["vendor"], 0)
            x = reference("two_signatures_float", "encode", "input_x.npy")
            np.testing.assert_allclose(
                model.run({"x": x}, signature="encode")["code"],
                reference("two_signatures_float", "encode",
                          "output_code.npy"),
                rtol=1e-4, atol=1e-4)
            with self.assertRaises(graft.GraftError) as e:
                graft.apply(out, os.path.join(tmp, "again.tflite"),
                            plugin_dir=EXAMPLE)
            self.assertFalse(os.path.exists(os.path.join(tmp,
                                                         "again.tflite")))
            del e

    def test_compiles_on_the_device(self):
        with tempfile.TemporaryDirectory() as tmp:
            model = graft.Model(model_path("two_signatures_float.tflite"),
                                plugin_dir=EXAMPLE, cache_dir=tmp,
                                dispatch_dirs=[EXAMPLE])
            report = model.report()
            self.assertIsNotNone(report["on_device_compile"])
            self.assertGreater(report["counts"]["vendor"], 0)


if __name__ == "__main__":
    unittest.main()
