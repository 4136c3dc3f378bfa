"""PyTorch's spec and target models (torch.clamp / clamp_min / clamp_max / F.hardtanh / F.relu6 on a tensor of a
torch dtype), the names and ops it accepts, the sources it follows and its bounds on the wire (scalars or nested
lists, a tensor bound)."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BeforeValidator, PlainSerializer, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

from clipbridge.dialects.kit.spec_base import Shape, _Strict
from clipbridge.core.dtypes import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, DType
from clipbridge.core.errors import SpecError
from clipbridge.core.numbers import MAX_NUMBER_STRING, Number, parse_number, wire_number

NAME = "pytorch"
VERSIONS = ("2.13",)  # the releases modelled; a newer one resolves to the highest at or below it
SRC_META = "pytorch/pytorch aten/src/ATen/native/TensorCompare.cpp (clamp meta/impl), torch 2.13.0"
SRC_HARDTANH = "pytorch/pytorch aten/src/ATen/native/Activation.cpp hardtanh_out; torch/nn/functional.py hardtanh"
SRC_C10 = "c10/util/TypeCast.h checked_convert (Scalar::to<T>), observed on torch 2.13.0"
DTYPES: dict[str, DType] = {d.name: d for d in (FLOAT32, FLOAT16, BFLOAT16, FLOAT64, INT8, UINT8, INT16, INT32,
                                                INT64)}
ALIASES = {"float": "float32", "half": "float16", "double": "float64", "short": "int16", "int": "int32",
           "long": "int64"}
UNSUPPORTED_DTYPES = ("uint16", "uint32", "uint64")
OPS = ("clamp", "clamp_min", "clamp_max", "hardtanh", "relu6")
MAX_BOUND_ELEMENTS = 4096
MAX_BOUND_DEPTH = 8
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
