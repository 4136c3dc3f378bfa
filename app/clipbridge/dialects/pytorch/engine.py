"""torch itself as PyTorch's engine: the spec's real call on torch CPU (`run_torch`, the "torch" backend) and
torch.onnx.export of it (`export_onnx`). torch and onnx are optional: imported inside the functions that need them.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from clipbridge.engines import extras as engines
from clipbridge.core import exact
from clipbridge.dialects.pytorch.export import DYNAMO_OPSET, TS_OPSET
from clipbridge.dialects.pytorch.spec import PyTorchSpec
from clipbridge.core.dtypes import BFLOAT16, DType
from clipbridge.core.numbers import Number


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
