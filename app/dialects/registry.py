"""The one list of dialects clipbridge knows. Adding a dialect: its module, its tests, one line here."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field

from app.dialects import coreml, directml, onnx, openvino, pytorch, stablehlo, tensorrt, tflite, tosa, webnn
from app.dialects.kit.base import Dialect
from app.core.errors import UnsupportedTarget
from app.core.suggest import one_of

# Explicit on purpose (no scanning of modules): the order is the order of /v1/dialects, defaults and unions.
DIALECTS: dict[str, Dialect] = {
    "onnx": onnx.DIALECT,
    "openvino": openvino.DIALECT,
    "directml": directml.DIALECT,
    "stablehlo": stablehlo.DIALECT,
    "webnn": webnn.DIALECT,
    "tosa": tosa.DIALECT,
    "tensorrt": tensorrt.DIALECT,
    "tflite": tflite.DIALECT,
    "coreml": coreml.DIALECT,
    "pytorch": pytorch.DIALECT,
}


def names() -> tuple[str, ...]:
    return tuple(DIALECTS)


def default_names() -> tuple[str, ...]:
    """The dialects used when a request names none (translate targets, scan columns, compare, probe)."""
    return tuple(name for name, d in DIALECTS.items() if d.in_defaults)


def get(name: str, loc: str | None = None) -> Dialect:
    """The dialect called `name` (case and spaces ignored), or UnsupportedTarget with a did-you-mean."""
    d = DIALECTS.get(name.strip().lower())
    if d is None:
        raise UnsupportedTarget(one_of("Unknown target dialect", name, names()), loc)
    return d


def engine_owner(backend: str) -> Dialect | None:
    """The dialect whose engine `backend` runs (None for the meaning kernels: numpy, cupy)."""
    return next((d for d in DIALECTS.values() if backend in d.engines), None)


def engine_names() -> tuple[str, ...]:
    return tuple(e for d in DIALECTS.values() for e in d.engines)


def spec_union() -> Any:
    """Every dialect's spec model as one pydantic union, discriminated by `dialect`."""
    return Annotated[Union[tuple(d.spec_model for d in DIALECTS.values())], Field(discriminator="dialect")]


def target_union() -> Any:
    return Annotated[Union[tuple(d.target_model for d in DIALECTS.values())], Field(discriminator="dialect")]


def name_literal() -> Any:
    return Literal[names()]
