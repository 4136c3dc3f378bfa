"""TOSA 1.0 CLAMP's wire spec and target models, and the TOSA type names they take."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from clipbridge.core.dtypes import BFLOAT16, FLOAT16, FLOAT32, FLOAT64, INT8, INT16, INT32, INT64, DType
from clipbridge.dialects.kit.spec_base import Shape, WireNumber, _Strict

NAME = "tosa"
VERSIONS = ("1.0",)
OP_VERSION = "CLAMP (TOSA 1.0)"
# CLAMP's typesupport in tosa.xml (all version_added="1.0"), by the profile or extension that brings each.
DTYPES: dict[str, DType] = {"int8": INT8, "int16": INT16, "fp16": FLOAT16, "bf16": BFLOAT16, "fp32": FLOAT32}
PROFILES = {"int8": "PRO-INT", "int16": "EXT-INT16", "fp16": "PRO-FP", "bf16": "EXT-BF16", "fp32": "PRO-FP"}
NAME_OF = {dt.name: name for name, dt in DTYPES.items()}
# Types a TOSA graph or the reference model knows that CLAMP's typesupport lacks: a rejected CLAMP, not a typo.
# fp64 exists only inside the reference model's precise mode (-p computes fp32 graphs in double), never as a tensor.
OUTSIDE_TYPESUPPORT: dict[str, DType] = {"int32": INT32, "int64": INT64, "fp64": FLOAT64}
UNMODELLED = ("bool", "int4", "int48", "fp8e4m3", "fp8e5m2")  # TOSA types clipbridge has no dtype for
NAN_MODES = ("PROPAGATE", "IGNORE")
TOSA_SPELLING = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64"}  # clipbridge's names


class TosaSpec(_Strict):
    """TOSA CLAMP: `dtype` (int8, int16, fp16, bf16, fp32), `shape`, `min_val`/`max_val`, `nan_mode`."""

    dialect: Literal["tosa"]
    version: Annotated[str, StringConstraints(max_length=16)] = "1.0"
    dtype: Annotated[str, StringConstraints(max_length=16)]
    shape: Shape | None = None
    min_val: WireNumber
    max_val: WireNumber
    nan_mode: Annotated[str, StringConstraints(max_length=16)] = "PROPAGATE"


class TosaTarget(_Strict):
    dialect: Literal["tosa"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def target(version: str | None) -> TosaTarget:
    return TosaTarget(dialect="tosa", version=version)
