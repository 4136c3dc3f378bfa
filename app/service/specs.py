"""Clip spec objects as they travel on the wire, one pydantic model per dialect (discriminated by `dialect`).

The unions over every registered dialect (app/dialects/registry.py) are built here, eagerly, when this module is
imported: Spec/TargetSpec are discriminated by `dialect`; AnySpec/AnyTarget are the same unions for annotations;
DialectName is the Literal of the registered names. The pieces the models are built from live in
app/dialects/kit/spec_base.py and are re-exported here; each dialect's own models live in its package
(app/dialects/<name>/spec.py) and are imported from there. Dialect modules never import this module (the registry
imports them), so there is no import circle; service, scan, lint, api and cli import it."""

from __future__ import annotations

from typing import Any

from app.dialects import registry
from app.dialects.kit.spec_base import (B64, MAX_ELEMENTS, Dim, Shape, WireNumber, XmlText, _parse_wire, _Strict,
                                        spec_json)

__all__ = ["B64", "MAX_ELEMENTS", "AnySpec", "AnyTarget", "DialectName", "Dim", "Shape", "Spec", "TargetSpec",
           "WireNumber", "XmlText", "_Strict", "_parse_wire", "spec_json"]

Spec: Any = registry.spec_union()
AnySpec: Any = registry.spec_union()
TargetSpec: Any = registry.target_union()
AnyTarget: Any = registry.target_union()
DialectName: Any = registry.name_literal()

# The registry-derived names (tests/dialects/test_registry.py builds them before registering a fake dialect).
_UNIONS = ("Spec", "AnySpec", "TargetSpec", "AnyTarget", "DialectName")
