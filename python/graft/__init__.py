"""Graft from Python: run .tflite models and compile them ahead of time.

A thin ctypes layer over libgraft.so's C API (c_api/graft_app.h, the
reference for every behaviour here); no compiler is needed to install it.

    import graft, numpy as np
    model = graft.Model("model.tflite", num_threads=2)
    print(model.signatures)                     # ["serving_default", ...]
    outputs = model.run({"x": np.zeros((1, 8), np.float32)},
                        signature="encode")     # {"code": array(...)}
    print(model.report()["placement"])          # what ran where
    report = graft.apply("model.tflite", "model.compiled.tflite",
                         vendors=["xnnpack"])   # the per-op report

Errors are GraftError, carrying Graft's message and status code.

libgraft.so is found at $GRAFT_LIBRARY, else in the Graft install this
package was installed into (PREFIX/lib beside PREFIX/lib/python3/...), else
by the system's loader (libgraft.so.0).
"""

import ctypes
import json
import os

import numpy as np

__all__ = ["GraftError", "Model", "Signature", "apply", "inspect",
           "library_path", "version"]

# --------------------------------------------------------------------------
# The C declarations (graft_app.h, app API 0.1).

_c_size = ctypes.c_size_t
_c_str = ctypes.c_char_p
_c_str_array = ctypes.POINTER(ctypes.c_char_p)


class _Status(ctypes.Structure):
    pass


_Status._fields_ = [
    ("struct_size", _c_size),
    ("code", ctypes.c_int32),
    ("message", _c_str),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(_Status))),
]


class _Quantization(ctypes.Structure):
    _fields_ = [
        ("struct_size", _c_size),
        ("kind", ctypes.c_int32),
        ("quantized_dimension", ctypes.c_int32),
        ("scales", ctypes.POINTER(ctypes.c_float)),
        ("num_scales", _c_size),
        ("zero_points", ctypes.POINTER(ctypes.c_int64)),
        ("num_zero_points", _c_size),
        ("block_size", ctypes.c_int32),
        ("blockwise_scales_tensor", ctypes.c_int32),
        ("blockwise_zero_points_tensor", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
    ]


class _ModelOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", _c_size),
        ("num_threads", ctypes.c_int32),
        ("fallback_policy", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
        ("reserved0", ctypes.c_uint32),
        ("dispatch_dirs", _c_str_array),
        ("num_dispatch_dirs", _c_size),
        ("dispatch_paths", _c_str_array),
        ("num_dispatch_paths", _c_size),
        ("plugin_dir", _c_str),
        ("cache_dir", _c_str),
        ("soc_model", _c_str),
        ("plugin_options", _c_str_array),
        ("num_plugin_options", _c_size),
        ("vendors", _c_str_array),
        ("num_vendors", _c_size),
    ]


class _TensorInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", _c_size),
        ("name", _c_str),
        ("element_type", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
        ("dims", ctypes.POINTER(ctypes.c_int64)),
        ("num_dims", _c_size),
        ("dims_signature", ctypes.POINTER(ctypes.c_int64)),
        ("byte_size", _c_size),
        ("quantization", ctypes.POINTER(_Quantization)),
    ]


class _ModelReport(ctypes.Structure):
    _fields_ = [
        ("struct_size", _c_size),
        ("ops_cpu", ctypes.c_int64),
        ("ops_folded", ctypes.c_int64),
        ("ops_vendor", ctypes.c_int64),
        ("ops_fallback", ctypes.c_int64),
        ("ops_call", ctypes.c_int64),
        ("compiled_on_device", ctypes.c_int32),
        ("compile_cache_hit", ctypes.c_int32),
        ("warnings", _c_str_array),
        ("num_warnings", _c_size),
        ("json", _c_str),
    ]


class _Profile(ctypes.Structure):
    _fields_ = [
        ("struct_size", _c_size),
        ("runs", ctypes.c_int64),
        ("total_ns", ctypes.c_int64),
        ("json", _c_str),
        ("text", _c_str),
    ]


class _ApplyOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", _c_size),
        ("mode", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
        ("plugin_paths", _c_str_array),
        ("num_plugin_paths", _c_size),
        ("plugin_dir", _c_str),
        ("vendors", _c_str_array),
        ("num_vendors", _c_size),
        ("plugin_options", _c_str_array),
        ("num_plugin_options", _c_size),
        ("soc_model", _c_str),
    ]


class _ApplyReport(ctypes.Structure):
    _fields_ = [
        ("struct_size", _c_size),
        ("ops_total", ctypes.c_int64),
        ("ops_taken", ctypes.c_int64),
        ("num_partitions", ctypes.c_int64),
        ("num_modules", ctypes.c_int64),
        ("bytecode_bytes", ctypes.c_int64),
        ("seconds", ctypes.c_double),
        ("ops", ctypes.c_void_p),
        ("num_ops", _c_size),
        ("skipped_plugins", _c_str_array),
        ("num_skipped_plugins", _c_size),
        ("summary", _c_str),
        ("json", _c_str),
    ]


_STATUS_NAMES = {
    1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND", 6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
    10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL",
    14: "UNAVAILABLE", 15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}

# Graft element types (TFLite's numbers) as numpy dtypes; STRING and the
# sub-byte types have none.
_DTYPES = {
    0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64,
    6: np.bool_, 7: np.int16, 8: np.complex64, 9: np.int8, 10: np.float64,
    11: np.complex128, 12: np.uint64, 15: np.uint32, 16: np.uint16,
}

_POLICIES = {"allow_cpu": 0, "require_vendor_ops": 1,
             "require_accelerator": 2}
_FLAG_PROFILING = 1
_FLAG_NO_DEFAULT_DISPATCH_DIR = 2
_MODES = {"apply": 0, "partition": 1}


class GraftError(Exception):
    """A failed Graft call: Graft's message, and its status code.

    code is the number (absl's / graft_status_code_t's), code_name its name
    ("NOT_FOUND").
    """

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.code_name = _STATUS_NAMES.get(code, str(code))
        self.message = message


def _find_library():
    env = os.environ.get("GRAFT_LIBRARY")
    if env:
        return env
    # PREFIX/lib/python3/site-packages/graft/__init__.py -> PREFIX/lib.
    here = os.path.dirname(os.path.abspath(__file__))
    lib_dir = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    candidate = os.path.join(lib_dir, "libgraft.so.0")
    if os.path.exists(candidate):
        return candidate
    return "libgraft.so.0"


def _declare(lib):
    p = ctypes.POINTER
    st = p(_Status)
    v = ctypes.c_void_p
    sigs = {
        "graft_app_api_version": (ctypes.c_uint32, []),
        "graft_version": (_c_str, []),
        "graft_default_vendor_dir": (_c_str, []),
        "graft_model_create_from_file": (st, [_c_str, p(_ModelOptions),
                                              p(v)]),
        "graft_model_create_from_memory": (st, [v, _c_size, _c_str,
                                                p(_ModelOptions), p(v)]),
        "graft_model_destroy": (None, [v]),
        "graft_model_signature_count": (_c_size, [v]),
        "graft_model_get_signature": (st, [v, _c_size, p(v)]),
        "graft_model_find_signature": (st, [v, _c_str, p(v)]),
        "graft_signature_key": (_c_str, [v]),
        "graft_signature_input_count": (_c_size, [v]),
        "graft_signature_output_count": (_c_size, [v]),
        "graft_signature_find_input": (st, [v, _c_str, p(_c_size)]),
        "graft_signature_find_output": (st, [v, _c_str, p(_c_size)]),
        "graft_signature_get_input_info": (st, [v, _c_size,
                                                p(p(_TensorInfo))]),
        "graft_signature_get_output_info": (st, [v, _c_size,
                                                 p(p(_TensorInfo))]),
        "graft_signature_resize_input": (st, [v, _c_size, p(ctypes.c_int64),
                                              _c_size]),
        "graft_signature_set_input": (st, [v, _c_size, v, _c_size]),
        "graft_signature_get_input_buffer": (st, [v, _c_size, p(v),
                                                  p(_c_size)]),
        "graft_signature_get_output_buffer": (st, [v, _c_size, p(v),
                                                   p(_c_size)]),
        "graft_signature_invoke": (st, [v]),
        "graft_model_get_report": (st, [v, p(p(_ModelReport))]),
        "graft_model_get_profile": (st, [v, p(p(_Profile))]),
        "graft_model_reset_profile": (None, [v]),
        "graft_apply": (st, [_c_str, _c_str, p(_ApplyOptions),
                             p(p(_ApplyReport))]),
        "graft_apply_report_destroy": (None, [p(_ApplyReport)]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


_lib = None


def _c():
    """libgraft, loaded and declared on first use."""
    global _lib
    if _lib is None:
        path = _find_library()
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise GraftError(5, f"cannot load libgraft ({path}): {e}; set "
                             "GRAFT_LIBRARY to its path") from None
        major = lib.graft_app_api_version() >> 16
        if major != 0:
            raise GraftError(9, f"{path} speaks app API {major}.x; this "
                             "package speaks 0.x")
        _lib = _declare(lib)
    return _lib


def _check(status):
    """Raises GraftError for a non-NULL status, releasing it."""
    if not status:
        return
    code = status.contents.code
    message = status.contents.message.decode("utf-8", "replace")
    release = status.contents.release
    if release:
        release(status)
    raise GraftError(code, message)


def _strings(items):
    """A C array of UTF-8 strings and its count; keeps the bytes alive."""
    items = [os.fspath(s).encode() for s in (items or [])]
    array = (ctypes.c_char_p * max(len(items), 1))(*items)
    return array, len(items)


def _bytes(text):
    return None if text is None else os.fspath(text).encode()


def library_path():
    """The libgraft.so this package loads."""
    return _find_library()


def version():
    """libgraft's release ("0.1.0")."""
    return _c().graft_version().decode()


class Signature:
    """One entry point of a Model: a signature, or subgraph 0's own inputs
    and outputs (key ""). Valid while its Model is open."""

    def __init__(self, model, handle):
        self._model = model
        self._h = handle

    @property
    def key(self):
        return _c().graft_signature_key(self._h).decode()

    def _info(self, index, output):
        info = ctypes.POINTER(_TensorInfo)()
        fn = (_c().graft_signature_get_output_info if output
              else _c().graft_signature_get_input_info)
        _check(fn(self._h, index, ctypes.byref(info)))
        i = info.contents
        q = None
        if i.quantization:
            qc = i.quantization.contents
            q = {"kind": qc.kind,
                 "scales": [qc.scales[k] for k in range(qc.num_scales)],
                 "zero_points": [qc.zero_points[k]
                                 for k in range(qc.num_zero_points)],
                 "quantized_dimension": qc.quantized_dimension}
        dtype = _DTYPES.get(i.element_type)
        return {"name": i.name.decode(),
                "index": index,
                "shape": tuple(i.dims[k] for k in range(i.num_dims)),
                "shape_signature": tuple(i.dims_signature[k]
                                         for k in range(i.num_dims)),
                "dtype": None if dtype is None else np.dtype(dtype),
                "element_type": i.element_type,
                "byte_size": i.byte_size,
                "quantization": q}

    @property
    def inputs(self):
        """[{name, index, shape, shape_signature, dtype, quantization}]."""
        n = _c().graft_signature_input_count(self._h)
        return [self._info(k, False) for k in range(n)]

    @property
    def outputs(self):
        n = _c().graft_signature_output_count(self._h)
        return [self._info(k, True) for k in range(n)]

    def _index(self, name, output):
        index = ctypes.c_size_t()
        fn = (_c().graft_signature_find_output if output
              else _c().graft_signature_find_input)
        _check(fn(self._h, name.encode(), ctypes.byref(index)))
        return index.value

    def run(self, inputs):
        """Runs once: {input name: array} -> {output name: array}.

        Arrays are converted to each input's dtype. An array of another
        shape resizes that input where the model allows it (dimensions it
        declares -1). Outputs are copies, owned by the caller.
        """
        c = _c()
        for name, value in inputs.items():
            index = self._index(name, output=False)
            info = self._info(index, False)
            if info["dtype"] is None:
                raise GraftError(12, f"input '{name}': element type "
                                 f"{info['element_type']} has no numpy "
                                 "dtype here")
            array = np.ascontiguousarray(value, dtype=info["dtype"])
            if tuple(array.shape) != info["shape"]:
                dims = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
                _check(c.graft_signature_resize_input(self._h, index, dims,
                                                      array.ndim))
            _check(c.graft_signature_set_input(
                self._h, index, array.ctypes.data_as(ctypes.c_void_p),
                array.nbytes))
        _check(c.graft_signature_invoke(self._h))
        result = {}
        for info in self.outputs:
            data = ctypes.c_void_p()
            size = ctypes.c_size_t()
            _check(c.graft_signature_get_output_buffer(
                self._h, info["index"], ctypes.byref(data),
                ctypes.byref(size)))
            if info["dtype"] is None:
                raise GraftError(12, f"output '{info['name']}': element type "
                                 f"{info['element_type']} has no numpy dtype "
                                 "here")
            raw = ctypes.string_at(data.value, size.value) if size.value else b""
            result[info["name"]] = np.frombuffer(
                raw, dtype=info["dtype"]).reshape(info["shape"]).copy()
        return result

    def __call__(self, **inputs):
        """As run, with inputs as keywords (LiteRT's SignatureRunner)."""
        return self.run(inputs)


class Model:
    """A loaded, prepared model (graft_model_create_from_file / _memory).

    model     a path, or the model's bytes.
    num_threads, dispatch_dirs, dispatch_paths, plugin_dir (compile on the
    device at load), cache_dir, soc_model, plugin_options ("KEY=VALUE"),
    vendors (priority, highest first), profiling: as graft_model_options_t.
    policy    "allow_cpu" (default), "require_vendor_ops" or
              "require_accelerator".
    default_dispatch_dir  False: do not search the installed vendors when
              dispatch_dirs is empty.
    """

    def __init__(self, model, num_threads=1, dispatch_dirs=None,
                 dispatch_paths=None, plugin_dir=None, cache_dir=None,
                 soc_model=None, plugin_options=None, vendors=None,
                 policy="allow_cpu", profiling=False,
                 default_dispatch_dir=True):
        c = _c()
        if policy not in _POLICIES:
            raise GraftError(3, f"unknown policy '{policy}' (expected "
                             f"{', '.join(_POLICIES)})")
        opts = _ModelOptions()
        opts.struct_size = ctypes.sizeof(_ModelOptions)
        opts.num_threads = num_threads
        opts.fallback_policy = _POLICIES[policy]
        opts.flags = ((_FLAG_PROFILING if profiling else 0) |
                      (0 if default_dispatch_dir
                       else _FLAG_NO_DEFAULT_DISPATCH_DIR))
        keep = []
        for field, items in (("dispatch_dirs", dispatch_dirs),
                             ("dispatch_paths", dispatch_paths),
                             ("plugin_options", plugin_options),
                             ("vendors", vendors)):
            array, n = _strings(items)
            keep.append(array)
            setattr(opts, field, ctypes.cast(array, _c_str_array))
            setattr(opts, "num_" + field, n)
        opts.plugin_dir = _bytes(plugin_dir)
        opts.cache_dir = _bytes(cache_dir)
        opts.soc_model = _bytes(soc_model)
        handle = ctypes.c_void_p()
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
            _check(c.graft_model_create_from_memory(
                data, len(data), b"<python bytes>", ctypes.byref(opts),
                ctypes.byref(handle)))
        else:
            _check(c.graft_model_create_from_file(
                os.fspath(model).encode(), ctypes.byref(opts),
                ctypes.byref(handle)))
        self._h = handle

    def close(self):
        """Releases the model now (also done when it is collected)."""
        if getattr(self, "_h", None):
            _c().graft_model_destroy(self._h)
            self._h = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise GraftError(9, "the model is closed")
        return self._h

    @property
    def signatures(self):
        """The model's signature keys, in model order."""
        c = _c()
        out = []
        for k in range(c.graft_model_signature_count(self._handle())):
            h = ctypes.c_void_p()
            _check(c.graft_model_get_signature(self._h, k, ctypes.byref(h)))
            out.append(c.graft_signature_key(h).decode())
        return out

    def signature(self, key=None):
        """The Signature `key`; None for subgraph 0's own entry point."""
        h = ctypes.c_void_p()
        _check(_c().graft_model_find_signature(
            self._handle(), None if key is None else key.encode(),
            ctypes.byref(h)))
        return Signature(self, h)

    def get_signature_runner(self, key=None):
        """LiteRT's name for signature(): runner(**inputs) -> outputs."""
        return self.signature(key)

    def run(self, inputs, signature=None):
        """Runs `signature` once: {name: array} -> {name: array}."""
        return self.signature(signature).run(inputs)

    def report(self):
        """What ran where: the report's JSON as a dict, with "counts"."""
        r = ctypes.POINTER(_ModelReport)()
        _check(_c().graft_model_get_report(self._handle(), ctypes.byref(r)))
        out = json.loads(r.contents.json.decode())
        c = r.contents
        out["counts"] = {"cpu": c.ops_cpu, "folded": c.ops_folded,
                         "vendor": c.ops_vendor, "fallback": c.ops_fallback,
                         "call": c.ops_call}
        return out

    def profile(self, reset=False):
        """Per-op timings since load or the last reset, as a dict (needs
        profiling=True); reset=True then drops them."""
        p = ctypes.POINTER(_Profile)()
        _check(_c().graft_model_get_profile(self._handle(), ctypes.byref(p)))
        out = json.loads(p.contents.json.decode())
        out["runs"] = p.contents.runs
        out["total_ns"] = p.contents.total_ns
        out["text"] = p.contents.text.decode()
        if reset:
            _c().graft_model_reset_profile(self._h)
        return out


def apply(model_path, output_path, plugin_dir=None, plugins=None,
          vendors=None, plugin_options=None, soc_model=None, mode="apply"):
    """Compiles model_path with vendor compiler plugins into output_path
    (graft_apply; nothing is written on error) and returns the report: the
    per-op JSON as a dict, with "summary" and "skipped_plugins".

    plugin_dir  default: the installed vendors; plugins: files instead.
    vendors     priority, highest first (only these vendors' plugins).
    plugin_options  "[VENDOR:]KEY=VALUE" strings.  mode: "apply" or
    "partition".
    """
    c = _c()
    if mode not in _MODES:
        raise GraftError(3, f"unknown mode '{mode}' (expected apply or "
                         "partition)")
    opts = _ApplyOptions()
    opts.struct_size = ctypes.sizeof(_ApplyOptions)
    opts.mode = _MODES[mode]
    keep = []
    for field, items in (("plugin_paths", plugins), ("vendors", vendors),
                         ("plugin_options", plugin_options)):
        array, n = _strings(items)
        keep.append(array)
        setattr(opts, field, ctypes.cast(array, _c_str_array))
        setattr(opts, "num_" + field, n)
    opts.plugin_dir = _bytes(plugin_dir)
    opts.soc_model = _bytes(soc_model)
    report = ctypes.POINTER(_ApplyReport)()
    _check(c.graft_apply(os.fspath(model_path).encode(),
                         os.fspath(output_path).encode(), ctypes.byref(opts),
                         ctypes.byref(report)))
    try:
        r = report.contents
        out = json.loads(r.json.decode())
        out["summary"] = r.summary.decode()
        out["skipped_plugins"] = [r.skipped_plugins[k].decode()
                                  for k in range(r.num_skipped_plugins)]
        return out
    finally:
        c.graft_apply_report_destroy(report)


def inspect(model):
    """Signatures of a model, with their inputs and outputs:
    {"signatures": {key: {"inputs": [...], "outputs": [...]}}}, where key ""
    is subgraph 0's own entry point. Loads the model on the CPU only."""
    with Model(model, default_dispatch_dir=False) as m:
        keys = [""] + m.signatures
        return {"signatures": {
            k: {"inputs": m.signature(k or None).inputs,
                "outputs": m.signature(k or None).outputs}
            for k in keys}}
