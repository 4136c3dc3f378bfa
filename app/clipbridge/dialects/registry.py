"""The one list of dialects clipbridge knows. Adding a dialect: its module, its tests, one line here.

The default dialects (in_defaults) are imported with this module: every scan, translate and diff uses them. A
dialect used only when named is a module name here, imported on its first use (`Registry`): a scan or diff that
never names one (a fleet worker: docs/performance.md, Fleet) does not pay ~40 ms of imports for seven dialects
it never runs. Listing a dialect by module name is only for one whose in_defaults is False (checked on load)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any, Literal, Union

from pydantic import Field

from clipbridge.dialects import directml, onnx, openvino
from clipbridge.dialects.kit.base import Dialect
from clipbridge.core.errors import UnsupportedTarget
from clipbridge.core.suggest import one_of


class Registry(MutableMapping[str, Dialect]):
    """name -> Dialect, in registration order; an entry given as a module name is imported on first access (its
    package's `DIALECT`). Iterating the names imports nothing; values(), items() and a lookup import what they
    return."""

    def __init__(self, entries: dict[str, Dialect | str]) -> None:
        self._entries = dict(entries)

    def __getitem__(self, name: str) -> Dialect:
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = self._entries[name] = _load(name, entry)
        return entry

    def __setitem__(self, name: str, dialect: Dialect) -> None:
        self._entries[name] = dialect

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def in_defaults(self, name: str) -> bool:
        """Whether `name` is a default dialect, without importing one that is registered by module name (those
        are never defaults: _load checks it)."""
        entry = self._entries[name]
        return not isinstance(entry, str) and entry.in_defaults


def _load(name: str, module: str) -> Dialect:
    """A when-named dialect's DIALECT, imported now; one that says it is a default must be imported eagerly above
    (else default_names() would leave it out until something else imported it)."""
    dialect: Dialect = importlib.import_module(module).DIALECT
    if dialect.name != name or dialect.in_defaults:
        raise RuntimeError(f"{module}: registered as the when-named dialect {name!r}, but its DIALECT is "
                           f"{dialect.name!r} with in_defaults={dialect.in_defaults}")
    return dialect


# Explicit on purpose (no scanning of modules): the order is the order of /v1/dialects, defaults and unions.
DIALECTS = Registry({
    "onnx": onnx.DIALECT,
    "openvino": openvino.DIALECT,
    "directml": directml.DIALECT,
    "stablehlo": "clipbridge.dialects.stablehlo",
    "webnn": "clipbridge.dialects.webnn",
    "tosa": "clipbridge.dialects.tosa",
    "tensorrt": "clipbridge.dialects.tensorrt",
    "tflite": "clipbridge.dialects.tflite",
    "coreml": "clipbridge.dialects.coreml",
    "pytorch": "clipbridge.dialects.pytorch",
})


def names() -> tuple[str, ...]:
    return tuple(DIALECTS)


def default_names() -> tuple[str, ...]:
    """The dialects used when a request names none (translate targets, scan columns, compare, probe)."""
    return tuple(name for name in DIALECTS if DIALECTS.in_defaults(name))


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
