"""StableHLO `clamp` (openxla/stablehlo docs/spec.md): the dialect package, with jax (XLA CPU) as its engine.

spec.py (wire models), catalogue.py (rule texts, examples, capability), meaning.py (spec -> Meaning), emit.py
(Meaning -> spec and findings), mlir.py (the MLIR text artifact), engine.py (jax). Imported by the registry (which
reads DIALECT) and by scan, lint, diff and fix above it; never by core, kernels or another dialect.
"""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
# The modules, not their functions: a name such as `emit` stays the submodule (clipbridge.dialects.stablehlo.emit).
from clipbridge.dialects.stablehlo import catalogue, emit, engine, meaning, spec

DIALECT = Dialect(
    name=spec.NAME, spec_model=spec.StableHloSpec, target_model=spec.StableHloTarget, resolve=meaning.resolve_source,
    emit=emit.emit, target=spec.target, check_version=meaning.version_stablehlo, capability=catalogue.capability,
    version_example="stablehlo:1", engines={"jax": engine.run_jax}, artifacts=catalogue.ARTIFACTS,
    rule_texts=catalogue.RULE_TEXTS, examples=catalogue.EXAMPLES,
    in_defaults=False)  # named targets only until the default-target golden tests take a fourth column
