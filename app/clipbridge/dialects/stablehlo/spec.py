"""StableHLO clamp's wire spec and target models, and the element type names (MLIR spelling) they take."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, PlainSerializer, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

from clipbridge.core.drift import MAX_TENSOR_BOUND, check_tensor_bound_size
from clipbridge.core.dtypes import (BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32,
                             UINT64, DType)
from clipbridge.core.errors import SpecError
from clipbridge.core.numbers import MAX_NUMBER_STRING, wire_number
from clipbridge.dialects.kit.spec_base import Shape, _parse_wire, _Strict

NAME = "stablehlo"
OP_VERSION = "clamp"  # clamp is unchanged across StableHLO's versioned opset (1.x)
VERSIONS = ("1",)
# StableHLO's element type names (signed integers are written iN in MLIR text, unsigned uiN).
ELEMENT_TYPES: dict[str, DType] = {"f32": FLOAT32, "f16": FLOAT16, "bf16": BFLOAT16, "f64": FLOAT64,
                                   "i8": INT8, "i16": INT16, "i32": INT32, "i64": INT64,
                                   "ui8": UINT8, "ui16": UINT16, "ui32": UINT32, "ui64": UINT64}
NAME_OF = {dt.name: name for name, dt in ELEMENT_TYPES.items()}
KNOWN_UNMODELLED = ("i1",)


def _parse_bound(value: Any) -> Any:
    """A wire number, or a (nested) list of them: at most MAX_TENSOR_BOUND numbers and 64 levels, read iteratively."""
    if not isinstance(value, list):
        return _parse_wire(value)
    count = 0
    out: list = []
    stack: list[tuple[list, list, int]] = [(value, out, 1)]
    while stack:
        src, dst, depth = stack.pop()
        if depth > 64:
            raise PydanticCustomError("bound", "A tensor bound nests at most 64 lists (StableHLO ranks)")
        for item in src:
            if isinstance(item, list):
                sub: list = []
                dst.append(sub)
                stack.append((item, sub, depth + 1))
            else:
                count += 1
                _check_count(count)
                dst.append(_parse_wire(item))
    return out


def _check_count(count: int) -> None:
    """The tensor-bound cap (core's check_tensor_bound_size) while the list is read, as a validation error of the
    field, so that a huge list stops being read at the first element past the cap."""
    try:
        check_tensor_bound_size(count, "bound")
    except SpecError:
        raise PydanticCustomError("bound", "A tensor bound may have at most {n} elements",
                                  {"n": MAX_TENSOR_BOUND}) from None


def _wire_bound(value: Any) -> Any:
    return [_wire_bound(v) for v in value] if isinstance(value, list) else wire_number(value)


_NUMBER_SCHEMA = {"anyOf": [{"type": "number"}, {"type": "string", "maxLength": MAX_NUMBER_STRING}]}
BoundValue = Annotated[
    Any, BeforeValidator(_parse_bound), PlainSerializer(_wire_bound),
    WithJsonSchema({"anyOf": [*_NUMBER_SCHEMA["anyOf"], {"type": "array", "maxItems": MAX_TENSOR_BOUND}],
                    "description": "A number (rank 0), or a list of numbers of the operand's shape, nested for "
                                   "rank > 1 (per-element bound). Numbers as JSON numbers or strings: 'nan', "
                                   "'inf', '-inf', a decimal integer, a float literal."}),
]


class StableHloSpec(_Strict):
    """StableHLO clamp: `element_type` (f32, f16, bf16, f64, i8..i64, ui8..ui64), `shape`, `min`/`max` (a number,
    or a list of the operand's shape)."""

    dialect: Literal["stablehlo"]
    element_type: Annotated[str, StringConstraints(max_length=16)]
    shape: Shape | None = None
    min: BoundValue
    max: BoundValue


class StableHloTarget(_Strict):
    dialect: Literal["stablehlo"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def target(version: str | None) -> StableHloTarget:
    return StableHloTarget(dialect="stablehlo", version=version)  # checked when emitting, located at the target
