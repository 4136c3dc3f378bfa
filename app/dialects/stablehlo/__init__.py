"""StableHLO `clamp` (openxla/stablehlo docs/spec.md): the dialect package, with jax (XLA CPU) as its engine.

spec.py (wire models), catalogue.py (rule texts, examples, capability), meaning.py (spec -> Meaning), emit.py
(Meaning -> spec and findings), mlir.py (the MLIR text artifact), engine.py (jax). Imported by the registry (which
reads DIALECT) and by scan, lint, diff and fix above it; never by core, kernels or another dialect.
"""

from __future__ import annotations

from app.dialects.kit.base import Dialect
from app.dialects.stablehlo.catalogue import ARTIFACTS, EXAMPLES, RULE_TEXTS, capability
from app.dialects.stablehlo.emit import emit
from app.dialects.stablehlo.engine import run_jax
from app.dialects.stablehlo.meaning import resolve_source, version_stablehlo
from app.dialects.stablehlo.spec import NAME, StableHloSpec, StableHloTarget, target

DIALECT = Dialect(
    name=NAME, spec_model=StableHloSpec, target_model=StableHloTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=version_stablehlo, capability=capability, version_example="stablehlo:1",
    engines={"jax": run_jax}, artifacts=ARTIFACTS, rule_texts=RULE_TEXTS, examples=EXAMPLES,
    in_defaults=False)  # named targets only until the default-target golden tests take a fourth column
