"""Clip spec objects as they travel on the wire, one pydantic model per dialect (discriminated by `dialect`).

The unions over every registered dialect (app/clipbridge/dialects/registry.py) are built here, on first use (module
__getattr__, below), then kept: Spec/TargetSpec are discriminated by `dialect`; AnySpec/AnyTarget are the same
unions for annotations; DialectName is the Literal of the registered names. Lazily, because a union imports every
dialect, and a scan or a diff that uses only the default dialects (a fleet worker) need not: see
app/clipbridge/dialects/registry.py. The pieces the models are built from live in app/clipbridge/dialects/kit/spec_base.py and are
re-exported here; each dialect's own models live in its package (app/clipbridge/dialects/<name>/spec.py) and are imported
from there. Dialect modules never import this module (the registry
imports them), so there is no import circle; service, scan, lint, api and cli import it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clipbridge.dialects import registry
from clipbridge.dialects.kit.spec_base import (B64, MAX_ELEMENTS, Dim, Shape, WireNumber, XmlText, _parse_wire, _Strict,
                                        spec_json)

__all__ = ["B64", "MAX_ELEMENTS", "AnySpec", "AnyTarget", "DialectName", "Dim", "Shape", "Spec", "TargetSpec",
           "WireNumber", "XmlText", "_Strict", "_parse_wire", "spec_json"]

# The registry-derived names (tests/dialects/test_registry.py builds them before registering a fake dialect), each
# with what builds it. Modules that use them only in annotations import them under TYPE_CHECKING.
_BUILDERS: dict[str, Callable[[], Any]] = {"Spec": registry.spec_union, "AnySpec": registry.spec_union,
                                           "TargetSpec": registry.target_union, "AnyTarget": registry.target_union,
                                           "DialectName": registry.name_literal}
_UNIONS = tuple(_BUILDERS)


def __getattr__(name: str) -> Any:
    """A registry-derived name, built on its first use and kept (as the eager assignment it replaces would be)."""
    build = _BUILDERS.get(name)
    if build is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = build()
    return value
