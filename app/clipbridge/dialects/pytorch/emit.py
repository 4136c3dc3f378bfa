"""PyTorch's emit: a Meaning -> a torch.clamp call computing it (spec, findings), with the Python line and the
predicted ONNX exports (export.py) as lazy artifacts."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from clipbridge.core import exact
from clipbridge.dialects.kit.common import Emitted, LazyArtifacts, Mode
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.kit.spec_base import spec_json
from clipbridge.dialects.pytorch.export import export_notes, predict_export
from clipbridge.dialects.pytorch.meaning import normalize, resolve, version_pytorch
from clipbridge.dialects.pytorch.spec import DTYPES, NAME, VERSIONS, PyTorchSpec, PyTorchTarget
from clipbridge.core.dtypes import DType
from clipbridge.core.errors import SpecError
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Meaning, NanBound, Order, State
from clipbridge.core.numbers import Number, format_number


def py_number(v: Number) -> str:
    """A Python literal torch reads as exactly this scalar (ints stay ints: an int bound never promotes)."""
    if isinstance(v, int):
        return str(v)
    f = exact.to_double(v)
    if math.isnan(f):
        return 'float("nan")'
    if math.isinf(f):
        return 'float("inf")' if f > 0 else '-float("inf")'
    return repr(f)


def _py_bound(v: Any, dt: DType) -> str:
    if isinstance(v, list):
        def rec(x: Any) -> str:
            return "[" + ", ".join(rec(e) for e in x) + "]" if isinstance(x, list) else py_number(x)
        return f"torch.tensor({rec(v)}, dtype=torch.{dt.name})"
    return py_number(v)


def python_line(spec: PyTorchSpec, m: Meaning) -> str:
    op = spec.op.strip().lower()
    if op == "relu6":
        return "y = torch.nn.functional.relu6(x)"
    args = [f"{k}={_py_bound(v, m.dtype)}" for k, v in (("min", spec.min), ("max", spec.max)) if v is not None]
    if op == "hardtanh":
        args = [a.replace("min=", "min_val=").replace("max=", "max_val=") for a in args]
        return f"y = torch.nn.functional.hardtanh(x{''.join(', ' + a for a in args)})"
    if op in ("clamp_min", "clamp_max"):
        args = [a.split("=", 1)[1] for a in args]
    return f"y = torch.{op}(x, {', '.join(args)})"


def artifacts_pytorch(spec: PyTorchSpec, m: Meaning) -> dict[str, str]:
    return {"pytorch_python": python_line(spec, m), "onnx_torchscript": predict_export(m, False),
            "onnx_dynamo": predict_export(m, True)}



def _open(side: str, dt: DType, value: Number) -> bool:
    """True when a bound leaves its side open (the same function as None)."""
    if dt.is_float:
        return value == (-math.inf if side == "min" else math.inf)
    return value == (dt.lowest() if side == "min" else dt.highest())


def _as_scalar(value: Number, promote: bool) -> Number:
    """A bound as the Python scalar torch reads back to it (a float where the source promotes)."""
    if promote or isinstance(value, float):
        return float(value)
    return int(value)


def _preserve(src: Meaning, dt: DType, notes: Notes) -> list[Any]:
    """Preserve mode: the source's effective bounds, NaN and order rules expressed with torch's."""
    promote = src.result_dtype is not None and src.result_dtype != dt
    ct = src.out_dtype
    out: list[Any] = []
    for side, b, t in (("min", src.lower, src.lower_tensor), ("max", src.upper, src.upper_tensor)):
        if t is not None:
            out.append(np.asarray(t.values, dtype=object).reshape(t.shape).tolist())
            continue
        assert b is not None
        v = b.value
        if b.is_nan and src.nan_bound is not NanBound.PROPAGATE:
            v = {NanBound.ZERO: 0.0}.get(src.nan_bound, -math.inf if side == "min" else math.inf)
            notes.add(Code.NAN_BOUND, Severity.INFO if src.nan_bound is not NanBound.UNDOCUMENTED else
                      Severity.WARNING, f"The source reads a NaN {side} as {src.nan_bound.value}; torch would make "
                      f"every output NaN: wrote {format_number(v)}")
        out.append(None if not exact.is_nan(v) and _open(side, ct, v) else _as_scalar(v, promote))
    out = collapse_crossed(src, out, notes, Order.MAX_WINS, "The source gives min when min > max; torch.clamp "
                           "gives max: wrote max = min")
    if out[0] is None and out[1] is None:
        out[0] = _as_scalar(-math.inf if ct.is_float else ct.lowest(), promote)  # clamp needs one bound
    if src.has_tensor_bounds:  # torch takes two scalars or two tensors: a scalar beside a tensor becomes [v]
        out = [[v] if v is not None and not isinstance(v, list) else v for v in out]
    return out


def _literal(src: Meaning, notes: Notes) -> list[Any]:
    """Literal mode: the source's numbers as written (None where a default applied), torch's rules on them."""
    out: list[Any] = []
    for b, t in ((src.lower, src.lower_tensor), (src.upper, src.upper_tensor)):
        if t is not None:
            out.append(np.asarray(t.given or t.values, dtype=object).reshape(t.shape).tolist())
        elif b is None or b.default or b.given is None:
            out.append(None)
        else:
            out.append(b.given)
    return out


def emit(src: Meaning, target: PyTorchTarget, mode: Mode, shape: list | None) -> Emitted:
    """A torch.clamp call (spec, Python line, predicted ONNX exports) computing `src`."""
    version = version_pytorch(target.version or VERSIONS[-1])
    dt = src.dtype
    if dt.name not in DTYPES:
        return Emitted(None, None, [Finding(Code.DTYPE_UNSUPPORTED, Severity.ERROR, f"torch {version} CPU has no "
                                            f"clamp for {dt.name} (NotImplementedError)")], unsupported=True)
    if src.scale_bias is not None:
        return Emitted(None, None, [Finding(Code.SCALE_BIAS, Severity.ERROR, "ScaleBias is not expressed by "
                                            "torch.clamp (x * scale + bias would be a separate op)",
                                            "x*Scale+Bias before clipping", "not expressible")], unsupported=True)
    notes = Notes()
    mn, mx = _literal(src, notes) if mode is Mode.LITERAL else _preserve(src, dt, notes)
    spec = PyTorchSpec(dialect=NAME, op="clamp", dtype=dt.name, shape=shape, min=mn, max=mx, version=version)
    try:
        meaning = resolve(spec)
    except SpecError as exc:
        return Emitted(spec_json(spec), None, notes.items + [Finding(
            Code.TENSOR_BOUNDS if src.has_tensor_bounds else Code.BOUND_SATURATION, Severity.ERROR,
            f"torch.clamp cannot take these bounds: {exc.message}")], unsupported=True)
    if meaning.state is State.REJECTED:
        return Emitted(spec_json(spec), meaning, notes.items + [Finding(
            _refusal_code(meaning.reason or ""), Severity.ERROR,
            f"torch {version} raises: {meaning.reason}", src.describe(), "rejected")], unsupported=True)
    items = notes.items + export_notes(meaning)
    return Emitted(normalize(spec), meaning, items, LazyArtifacts(lambda: artifacts_pytorch(spec, meaning)))


def _refusal_code(reason: str) -> Code:
    if "At least one" in reason:
        return Code.DEFAULT_BOUND
    return Code.BOUND_SATURATION


def target(version: str | None) -> PyTorchTarget:
    return PyTorchTarget(dialect=NAME, version=version)
