"""WebNN `clamp` (W3C WebNN API, MLGraphBuilder.clamp) as a clipbridge dialect: `DIALECT`, its registry entry.

spec.py (models, MLNumber wire numbers), meaning.py (the casts and both readings: spec, chromium), emit.py (a
Meaning -> a WebNN spec), js.py (the JavaScript builder calls), catalogue.py (readings, rule texts, examples,
capability). app/clipbridge/dialects/registry.py imports this package, and scan/lint/diff/fix and tests may import its
modules; clipbridge.core, clipbridge.kernels and clipbridge.engines never do.
"""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
from clipbridge.dialects.webnn import catalogue, emit, meaning, spec

# Modules imported whole: `from .emit import emit` would shadow the submodule `emit` with the function.
DIALECT = Dialect(
    name=spec.NAME, spec_model=spec.WebNNSpec, target_model=spec.WebNNTarget, resolve=meaning.resolve_source,
    emit=emit.emit, target=emit.target, check_version=meaning.version_webnn, capability=catalogue.capability,
    version_example="webnn:1", artifacts=catalogue.ARTIFACTS, in_defaults=False, rule_texts=catalogue.RULE_TEXTS,
    examples=catalogue.EXAMPLES, readings=catalogue.READINGS,
    engine_reading=catalogue.CHROMIUM)  # what Chromium ships: the engine's reading for `basis: engine`

__all__ = ["DIALECT"]
