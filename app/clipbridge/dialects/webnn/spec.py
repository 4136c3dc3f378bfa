"""WebNN `clamp`'s spec and target models, the names it accepts, and its wire numbers (MLNumber).

Wire numbers: a bound is a JS Number unless written as a BigInt string `"123n"`. A JSON number or a numeric
string ('nan', '-inf', '0.1', '9007199254740993') is what the same JavaScript Number literal is: its exact value
rounded once to a double, so an integer above 2^53 can change (9007199254740993 -> 9007199254740992; the spec's
MLNumber note: "Specifying the option as double would lose accuracy when passing values over 2^53"). `"123n"` is
a bigint: exact at any size (int64/uint64 bounds beyond 2^53 need it).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import BeforeValidator, PlainSerializer, StringConstraints, WithJsonSchema

from clipbridge.dialects.kit.spec_base import Shape, _parse_wire, _Strict
from clipbridge.core.dtypes import FLOAT16, FLOAT32, INT8, INT32, INT64, UINT8, UINT32, UINT64, DType
from clipbridge.core.numbers import MAX_NUMBER_STRING, Number, wire_number

NAME = "webnn"
OP_VERSION = "clamp"
VERSIONS = ("1",)
VERSION_ALIASES = {"1": "1", "v1": "1", "1.0": "1", "cr": "1", "latest": "1", "2026-06-26": "1"}
SPEC_SRC = "W3C WebNN API, MLGraphBuilder.clamp (webmachinelearning/webnn index.bs @c515210, 2026-06-26)"
CHROMIUM_SRC = "chromium services/webnn/public/cpp/ml_number.cc @019c50cf and web-platform-tests webnn/"
ISSUE_874 = "webmachinelearning/webnn#874 (open)"
# enum MLOperandDataType (index.bs line 1650).
DATA_TYPES: dict[str, DType] = {"float32": FLOAT32, "float16": FLOAT16, "int32": INT32, "uint32": UINT32,
                                "int64": INT64, "uint64": UINT64, "int8": INT8, "uint8": UINT8}
NAME_OF = {dt.name: name for name, dt in DATA_TYPES.items()}
NOT_IN_WEBNN = ("bfloat16", "float64", "int16", "uint16")
REQUIRED_RANKS = (0, 5)


# --- wire numbers: JS Number or BigInt -------------------------------------------------------------------------

class BigInt(int):
    """A JS BigInt (`"123n"` on the wire): MLNumber's bigint arm, an exact integer."""


_BIGINT_RE = re.compile(r"\s*([+-]?\d+)n\s*")


def _parse_ml_number(value: Any) -> Number:
    """'123n' is a BigInt; anything else is a wire number, read as a JS Number later (resolve)."""
    if isinstance(value, str) and len(value) <= MAX_NUMBER_STRING:
        m = _BIGINT_RE.fullmatch(value)
        if m:
            return BigInt(int(m.group(1)))
    return _parse_wire(value)


def ml_number_wire(value: Number | None) -> int | float | str | None:
    """A bound as JSON: BigInts as '123n', JS Numbers as wire numbers."""
    if isinstance(value, BigInt):
        return f"{int(value)}n"
    return wire_number(value)


MLNumber = Annotated[
    Any,
    BeforeValidator(_parse_ml_number),
    PlainSerializer(ml_number_wire, return_type=Union[int, float, str, None]),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "string", "maxLength": MAX_NUMBER_STRING}],
                    "description": "MLNumber: a JSON number or numeric string is a JS Number (rounded to a double: "
                                   "integers above 2^53 can change); a string like '9007199254740993n' is a "
                                   "BigInt (exact)."}),
]


class WebNNSpec(_Strict):
    """WebNN clamp: `dataType` (MLOperandDataType), `shape`, optional `minValue`/`maxValue` (MLNumber)."""

    dialect: Literal["webnn"]
    dataType: Annotated[str, StringConstraints(max_length=16)]
    shape: Shape | None = None
    minValue: MLNumber | None = None
    maxValue: MLNumber | None = None


class WebNNTarget(_Strict):
    dialect: Literal["webnn"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None
