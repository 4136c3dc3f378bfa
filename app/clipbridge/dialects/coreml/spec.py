"""Core ML MIL clip's wire spec and target models, the opsets and the dtypes (T) it takes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from clipbridge.core.dtypes import FLOAT16, FLOAT32, DType
from clipbridge.dialects.kit.spec_base import Shape, WireNumber, _Strict

NAME = "coreml"
OPSETS = ("iOS13", "iOS14", "iOS15", "iOS16", "iOS17", "iOS18")
DEFINITIONS = ("iOS15", "iOS17")  # the opsets that (re)define clip
DTYPES: dict[str, DType] = {"fp16": FLOAT16, "fp32": FLOAT32}
NAME_OF = {dt.name: n for n, dt in DTYPES.items()}


class CoreMLSpec(_Strict):
    """Core ML MIL clip: `opset` (iOS13..iOS18), `dtype` (fp16, fp32), const scalars `alpha` and `beta`, `shape`."""

    dialect: Literal["coreml"]
    opset: Annotated[str, StringConstraints(max_length=16)] = "iOS17"
    dtype: Annotated[str, StringConstraints(max_length=16)] = "fp32"
    alpha: WireNumber
    beta: WireNumber
    shape: Shape | None = None


class CoreMLTarget(_Strict):
    dialect: Literal["coreml"]
    version: Annotated[str, StringConstraints(max_length=16)] | None = None


def target(version: str | None) -> CoreMLTarget:
    return CoreMLTarget(dialect=NAME, version=version)
