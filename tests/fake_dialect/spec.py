"""The fake dialect's wire models: a source spec and a target (`fake:v1`, `fake:v2`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from clipbridge.dialects.kit.spec_base import Shape, WireNumber, _Strict

NAME = "fake"
VERSIONS = ("v1", "v2")
Short = Annotated[str, StringConstraints(max_length=16)]


class FakeSpec(_Strict):
    """fake.clamp: `version` (v1, v2), `dtype` (f32, i32), scalar bounds `lo` and `hi`, optional `shape`."""

    dialect: Literal["fake"]
    version: Short = "v2"
    dtype: Short = "f32"
    lo: WireNumber
    hi: WireNumber
    shape: Shape | None = None


class FakeTarget(_Strict):
    dialect: Literal["fake"]
    version: Short | None = None
