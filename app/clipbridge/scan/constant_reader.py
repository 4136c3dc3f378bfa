"""The one checked reader of a model's constants (initializers and Constant nodes), for scan, the clip-like
patterns, diff and fix.

Why one reader: a constant is the sender's bytes. Read ad hoc, a STRING bound reached `float('abc')` and a
tensor whose data lives in a file reached numpy_helper (which opens it). Here every value is decoded the same
way: a tensor that keeps its data in a file is never decoded (the service refuses such models before this
runs, clipbridge.scan.wire.refuse_external), one past the size limit is not decoded (weights are not bounds), and one
whose type, size or encoding is wrong is a BadConstant naming it (a 400), raised only when that constant is
used; never an exception from numpy or onnx.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from clipbridge.core.errors import ArtifactError
from clipbridge.dialects.onnx.tensor import element_count, tensor_values, type_name
from clipbridge.scan.wire import is_external

MAX_CONSTANT = 4096  # elements: larger constants are weights, never a clip's bound


class BadConstant(ArtifactError):
    """A constant of the model whose type, size or encoding is not what its use needs."""

    title = "Unreadable constant"


class Constants(dict[str, np.ndarray]):
    """Decoded constants by tensor name; `bad` holds the ones that could not be read, raised when used."""

    def __init__(self) -> None:
        super().__init__()
        self.bad: dict[str, BadConstant] = {}


def _bad(name: str, why: str) -> BadConstant:
    return BadConstant(f"constant {name[:80]!r} {why}", "model")


def read(t: onnx.TensorProto, limit: int | None = MAX_CONSTANT) -> np.ndarray | None:
    """A tensor's value; None when it is not read (its data is in a file, it has more than `limit` elements, or
    it has no data at all, like a wire-walk stub); BadConstant when its type, dims or encoding are wrong
    (clipbridge.dialects.onnx.tensor's checks: dims against the data that arrived, before anything is allocated)."""
    if is_external(t):
        return None
    what = f"constant {t.name[:80]!r}"
    try:
        count = element_count(t, what, "model")
        if (limit is not None and count > limit) or (count and not _has_data(t)):
            return None
        return tensor_values(t, what)
    except ArtifactError as exc:
        raise BadConstant(exc.message, "model") from None
    except Exception:  # noqa: BLE001 - onnx/numpy on the sender's bytes, past the checks: still the model's
        raise _bad(t.name, f"of type {type_name(t.data_type)} with dims {list(t.dims)[:8]} cannot be decoded") \
            from None


DATA_FIELDS = ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data", "uint64_data")


def _has_data(t: onnx.TensorProto) -> bool:
    return any(len(getattr(t, f)) for f in DATA_FIELDS)


def _note(out: Constants, name: str, t: onnx.TensorProto, limit: int | None) -> None:
    try:
        v = read(t, limit)
    except BadConstant as exc:
        out.bad[name] = exc
        return
    if v is not None:
        out[name] = v


def graph_constants(g: onnx.GraphProto, limit: int | None = MAX_CONSTANT) -> Constants:
    """The initializers and Constant-node values of one graph (each value attribute), by tensor name."""
    out = Constants()
    for t in g.initializer:
        _note(out, t.name, t, limit)
    for n in g.node:
        if n.op_type != "Constant" or n.domain not in ("", "ai.onnx") or not n.output:
            continue
        for a in n.attribute:
            if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                _note(out, n.output[0], a.t, limit)
            elif a.name in ("value_float", "value_int", "value_floats", "value_ints"):
                out[n.output[0]] = np.array(helper.get_attribute_value(a))
    return out


def numeric(consts: Constants, name: str, what: str) -> np.ndarray | None:
    """The value of constant `name` (used as `what`), which must be real numbers; None when it is no constant
    this reads; BadConstant when it could not be read or holds strings or complex numbers."""
    if name in consts.bad:
        raise consts.bad[name]
    v = consts.get(name)
    if v is None:
        return None
    if v.dtype.kind in "OSUcM" or v.dtype.names is not None:  # ml_dtypes' bfloat16/float8 are kind "V": real
        raise _bad(name, f"is the {what} but holds {v.dtype.name} values; it must hold real numbers")
    return v


def scalar(consts: Constants, name: str, what: str) -> float | None:
    """A one-element real constant as a float (a clip's bound); None when `name` is no one-element constant."""
    v = numeric(consts, name, what)
    return float(v.reshape(-1)[0]) if v is not None and v.size == 1 else None
