"""PyTorch's spec model, its artifacts (the Python call; what torch.onnx.export writes for it, predicted) and torch
itself as the engine. The predictions are checked against the real exporters of torch 2.13.0 in the tests
(tests/dialects/test_pytorch.py) and by tests/data/torch_exports/make.py; running an export costs about 1 s
(dynamo) plus torch's import, so emit() predicts and `export_onnx` runs the exporter only when asked.
"""

from __future__ import annotations

import io
import math
from fractions import Fraction
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, PlainSerializer, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

from app.engines import extras as engines
from app.core import exact
from app.dialects.kit.spec_base import Shape, _Strict
from app.core.dtypes import (BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, DType,
                        from_onnx_elem_type)
from app.core.errors import SpecError
from app.core.findings import Code, Finding, Severity, Witness
from app.core.evaluate import evaluate
from app.core.meaning import Meaning
from app.core.numbers import MAX_NUMBER_STRING, Number, format_number, parse_number, wire_number

DTYPES: dict[str, DType] = {d.name: d for d in (FLOAT32, FLOAT16, BFLOAT16, FLOAT64, INT8, UINT8, INT16, INT32,
                                                INT64)}
ALIASES = {"float": "float32", "half": "float16", "double": "float64", "short": "int16", "int": "int32",
           "long": "int64"}
UNSUPPORTED_DTYPES = ("uint16", "uint32", "uint64")
OPS = ("clamp", "clamp_min", "clamp_max", "hardtanh", "relu6")
MAX_BOUND_ELEMENTS = 4096
MAX_BOUND_DEPTH = 8
TS_OPSET, DYNAMO_OPSET = 17, 18
EXPORT_ARTIFACTS = {
    "pytorch_python": "the PyTorch call (x is the input tensor)",
    "onnx_torchscript": "the ONNX nodes torch.onnx.export(dynamo=False, opset_version=17) writes, predicted",
    "onnx_dynamo": "the ONNX nodes torch.onnx.export(dynamo=True, opset_version=18) writes, predicted",
}


def _parse_bound(value: Any, depth: int = 0) -> Any:
    """A number (as every wire number) or nested lists of them (a tensor bound)."""
    if isinstance(value, list):
        if depth >= MAX_BOUND_DEPTH:
            raise PydanticCustomError("bound", "A tensor bound has at most {n} dimensions", {"n": MAX_BOUND_DEPTH})
        return [_parse_bound(v, depth + 1) for v in value]
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Fraction)):
        raise PydanticCustomError("number", "Expected a number, a numeric string or nested lists of them; got "
                                            "{kind}", {"kind": type(value).__name__})
    try:
        return parse_number(value)
    except SpecError as exc:
        raise PydanticCustomError("number", "{msg}", {"msg": exc.message}) from None


def _wire_bound(value: Any) -> Any:
    return [_wire_bound(v) for v in value] if isinstance(value, list) else wire_number(value)


_NUM = {"anyOf": [{"type": "number"}, {"type": "string", "maxLength": MAX_NUMBER_STRING}]}
TorchBound = Annotated[
    Any, BeforeValidator(_parse_bound), PlainSerializer(_wire_bound),
    WithJsonSchema({"anyOf": [*_NUM["anyOf"], {"type": "array", "items": {}}],
                    "description": "A Python scalar (a JSON number: an int stays integral, a float is a float "
                                   "Scalar; or 'nan', 'inf', big integers, hex floats) or nested lists of them "
                                   "(a tensor of the input's dtype, broadcast against `shape`)."})]


class PyTorchSpec(_Strict):
    """torch.clamp / clamp_min / clamp_max / F.hardtanh / F.relu6 on a tensor of `dtype` (torch's names)."""

    dialect: Literal["pytorch"]
    op: Annotated[str, StringConstraints(max_length=16)] = "clamp"
    dtype: Annotated[str, StringConstraints(max_length=32)]
    shape: Shape | None = None
    min: TorchBound | None = None
    max: TorchBound | None = None
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


class PyTorchTarget(_Strict):
    dialect: Literal["pytorch"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def shape_of(nested: list, side: str) -> tuple[tuple[int, ...], list[Number]]:
    """The shape and row-major values of rectangular nested lists."""
    arr = np.empty(0)
    try:
        arr = np.array(nested, dtype=object)
    except ValueError:
        pass
    if arr.size and any(isinstance(v, list) for v in arr.reshape(-1)) or (arr.size == 0 and nested):
        raise SpecError(f"A tensor {side} must be rectangular nested lists. Got: {str(nested)[:60]}", side)
    if arr.size > MAX_BOUND_ELEMENTS:
        raise SpecError(f"A tensor {side} has at most {MAX_BOUND_ELEMENTS} elements. Got: {arr.size}", side)
    return tuple(arr.shape), list(arr.reshape(-1))


# --- the Python line ----------------------------------------------------------------------------------------------

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


# --- predicted ONNX exports -----------------------------------------------------------------------------------

def _typed(v: Number, dt: DType) -> str:
    return f"{dt.name}:{format_number(dt.to_python(dt.array([v])[0]))}"


def _ts_cast(v: Number, dt: DType) -> str:
    """The TorchScript exporter's constant: the bound cast to the input dtype (truncation on integers)."""
    if dt.is_float:
        return _typed(v, dt)
    if exact.is_nan(v) or exact.is_inf(v):
        return f"{dt.name}:<{format_number(v)} cast: implementation-defined>"
    return f"{dt.name}:{dt.saturate(exact.trunc_exact(v))}"


def predict_export(m: Meaning, dynamo: bool) -> str:
    """The node list torch 2.13's exporter writes for this clamp (one line per node; 'elem' is the output)."""
    dt, out_dt = m.dtype, m.out_dtype
    if m.has_tensor_bounds:
        nodes, cur = [], "x"
        if m.lower_tensor is not None:
            nodes.append(f"Max({cur}, {dt.name}{list(m.lower_tensor.shape)})")
            cur = "max_out"
        if m.upper_tensor is not None:
            nodes.append(f"Min({cur}, {dt.name}{list(m.upper_tensor.shape)})")
        return "\n".join(nodes) + f"\n-> {dt.name}"
    assert m.lower is not None and m.upper is not None
    sides = [None if b.default else b.value for b in (m.lower, m.upper)]
    if not dynamo:
        ins = ["''" if v is None else _ts_cast(v, dt) for v in sides]
        return f"Clip(x, {ins[0]}, {ins[1]})\n-> {dt.name}"
    nodes, cur = [], "x"
    if out_dt != dt:
        nodes.append("Cast(x, to=FLOAT)")
        cur = "x_float"
    ins = ["''" if v is None else _typed(v, out_dt) for v in sides]
    if not out_dt.is_float and (sides[0] is None or sides[1] is None):
        nodes.append(f"Max({cur}, {ins[0]})" if sides[1] is None else f"Min({cur}, {ins[1]})")
    elif sides[1] is None:
        nodes.append(f"Clip({cur}, {ins[0]})")
    else:
        nodes.append(f"Clip({cur}, {ins[0]}, {ins[1]})")
    return "\n".join(nodes) + f"\n-> {out_dt.name}"


def artifacts_pytorch(spec: PyTorchSpec, m: Meaning) -> dict[str, str]:
    return {"pytorch_python": python_line(spec, m), "onnx_torchscript": predict_export(m, False),
            "onnx_dynamo": predict_export(m, True)}


def export_notes(m: Meaning) -> list[Finding]:
    """What torch.onnx.export changes (emit findings about the artifact, INFO: the call itself is exact): the
    TorchScript exporter drops the promotion; the witness is the exported Clip's output on an int input."""
    if m.result_dtype is None or m.result_dtype == m.dtype or m.lower is None or m.upper is None:
        return []
    given = [b.value for b in (m.lower, m.upper) if not b.default]
    if any(exact.is_nan(v) or exact.is_inf(v) for v in given):
        return [Finding(Code.DTYPE_PROMOTION, Severity.INFO, "torch.onnx.export(dynamo=False) casts a "
                        f"non-finite float bound to {m.dtype.name} (implementation-defined; torch 2.13 wrote "
                        "INT_MIN for NaN on int32); torch.clamp returns float32. dynamo=True keeps the promotion")]
    trunc = [None if b.default else exact.trunc_exact(b.value) for b in (m.lower, m.upper)]
    x = _witness_input(m, trunc)
    y = float(evaluate(m, m.dtype.array([x]))[0])
    lo_t = m.dtype.lowest() if trunc[0] is None else trunc[0]
    hi_t = m.dtype.highest() if trunc[1] is None else trunc[1]
    yt = min(max(x, lo_t), hi_t)
    return [Finding(Code.DTYPE_PROMOTION, Severity.INFO, f"torch.onnx.export(dynamo=False) casts the bounds to "
                    f"{m.dtype.name} (truncation) and keeps the {m.dtype.name} output; torch.clamp returns "
                    f"{m.out_dtype.name}. dynamo=True writes Cast(x, to=FLOAT) then Clip: the promotion is kept",
                    f"torch.clamp: {m.describe()}", f"exported Clip on {m.dtype.name} to [{lo_t}, {hi_t}]",
                    Witness(x, y, yt))]


def _witness_input(m: Meaning, trunc: list[Number | None]) -> int:
    """An input where the truncated bounds give another output: at a bound (its fraction lost)."""
    for b, t in zip((m.lower, m.upper), trunc):
        if b is not None and t is not None and b.value != t:
            return int(m.dtype.saturate(int(t)))
    return 0


def onnx_summary(model_bytes: bytes) -> str:
    """The real exported model in predict_export's notation (constants inlined with their dtype)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load_from_string(model_bytes)
    vals = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    lines, renames = [], {m.graph.input[0].name: "x"}
    for n in m.graph.node:
        if n.op_type == "Constant":
            vals[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
            continue
        ins = []
        for i in n.input:
            if i in vals:
                a = vals[i]
                dt = from_onnx_elem_type(onnx.helper.np_dtype_to_tensor_dtype(a.dtype))
                ins.append(f"{dt.name}{list(a.shape)}" if a.ndim else _typed(a.item(), dt))
            else:
                ins.append(renames.get(i, "''" if not i else i))
        if n.op_type == "Cast":
            lines.append(f"Cast({ins[0]}, to=FLOAT)")
            renames[n.output[0]] = "x_float"
            continue
        renames[n.output[0]] = "max_out" if n.op_type == "Max" else n.output[0]
        lines.append(f"{n.op_type}({', '.join(ins)})")
    out_dt = from_onnx_elem_type(m.graph.output[0].type.tensor_type.elem_type)
    return "\n".join(lines) + f"\n-> {out_dt.name}"


# --- torch as the engine --------------------------------------------------------------------------------------

def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise engines.missing("torch") from None
    return torch


def _scalar(v: Number) -> Number:
    return v if isinstance(v, int) else exact.to_double(v)


def torch_call(spec: PyTorchSpec, dt: DType) -> Any:
    """The spec as a Python function of a torch tensor (the real call, with the spec's own numbers)."""
    torch = _torch()
    F = torch.nn.functional

    def bound(v: Any) -> Any:
        if isinstance(v, list):
            flat = dt.array([_scalar(e) if not exact.is_nan(e) else e for e in np.asarray(v, dtype=object).ravel()])
            return _from_numpy(flat.reshape(np.asarray(v, dtype=object).shape), dt)
        return None if v is None else _scalar(v)

    op, mn, mx = spec.op.strip().lower(), bound(spec.min), bound(spec.max)
    calls = {"clamp": lambda x: torch.clamp(x, min=mn, max=mx), "clamp_min": lambda x: torch.clamp_min(x, mn),
             "clamp_max": lambda x: torch.clamp_max(x, mx), "relu6": F.relu6,
             "hardtanh": lambda x: F.hardtanh(x, -1.0 if mn is None else mn, 1.0 if mx is None else mx)}
    return calls[op]


def _from_numpy(a: np.ndarray, dt: DType) -> Any:
    torch = _torch()
    if dt is BFLOAT16:  # torch.from_numpy has no ml_dtypes bfloat16: reinterpret the bits
        return torch.from_numpy(np.ascontiguousarray(a).view(np.uint16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a).copy())


def to_numpy(t: Any) -> np.ndarray:
    torch = _torch()
    if t.dtype == torch.bfloat16:
        return t.view(torch.uint16).numpy().view(BFLOAT16.np_dtype)
    return t.numpy()


def run_torch(sem: Any, x: np.ndarray) -> np.ndarray:
    """The spec's call on torch CPU; x is an array of the meaning's dtype (shaped as the spec's shape if given)."""
    spec = PyTorchSpec.model_validate(sem.spec)
    dt = sem.meaning.dtype
    xt = _from_numpy(np.asarray(x, dtype=dt.np_dtype), dt)
    return to_numpy(torch_call(spec, dt)(xt))


def export_onnx(spec: PyTorchSpec, dt: DType, dynamo: bool, shape: tuple[int, ...] = (4,)) -> bytes:
    """torch.onnx.export of the spec's call (opset 18 for dynamo, 17 for TorchScript): the model bytes."""
    torch = _torch()
    fn = torch_call(spec, dt)

    class Clamp(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return fn(x)

    x = _from_numpy(np.zeros(shape, dtype=dt.np_dtype), dt)
    if dynamo:
        prog = torch.onnx.export(Clamp().eval(), (x,), dynamo=True, opset_version=DYNAMO_OPSET, verbose=False)
        return prog.model_proto.SerializeToString()
    buf = io.BytesIO()
    torch.onnx.export(Clamp().eval(), (x,), buf, dynamo=False, opset_version=TS_OPSET, input_names=["x"],
                      output_names=["y"])
    return buf.getvalue()
