"""TOSA 1.0 `CLAMP` (arm/tosa-specification): the dialect package, with the TOSA reference model as its engine.

spec.py (wire models), catalogue.py (quoted rules, rule texts, examples, capability), meaning.py (spec -> Meaning),
emit.py (Meaning -> spec and findings), mlir.py and flatbuffer.py (the artifacts; patch.py writes the flatbuffer
artifact from a cached graph per layout), engine.py (the reference model, backend "tosa-reference"). Imported by
the registry (which reads DIALECT) and by scan, lint, diff and fix above it; never by core, kernels or another
dialect.
"""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
# The modules, not their functions: a name such as `emit` stays the submodule (clipbridge.dialects.tosa.emit).
from clipbridge.dialects.tosa import catalogue, emit, engine, meaning, spec

DIALECT = Dialect(
    name=spec.NAME, spec_model=spec.TosaSpec, target_model=spec.TosaTarget, resolve=meaning.resolve_source,
    emit=emit.emit, target=spec.target, check_version=meaning.version_tosa, capability=catalogue.capability,
    version_example="tosa:1.0", engines={engine.ENGINE: engine.run_reference}, artifacts=catalogue.ARTIFACTS,
    in_defaults=False, rule_texts=catalogue.RULE_TEXTS, examples=catalogue.EXAMPLES)
