"""TOSA 1.0 `CLAMP` (arm/tosa-specification): the dialect package, with the TOSA reference model as its engine.

spec.py (wire models), catalogue.py (quoted rules, rule texts, examples, capability), meaning.py (spec -> Meaning),
emit.py (Meaning -> spec and findings), mlir.py and flatbuffer.py (the artifacts), engine.py (the reference model,
backend "tosa-reference"). Imported by the registry (which reads DIALECT) and by scan, lint, diff and fix above it;
never by core, kernels or another dialect.
"""

from __future__ import annotations

from app.dialects.kit.base import Dialect
from app.dialects.tosa.catalogue import ARTIFACTS, EXAMPLES, RULE_TEXTS, capability
from app.dialects.tosa.emit import emit
from app.dialects.tosa.engine import ENGINE, run_reference
from app.dialects.tosa.meaning import resolve_source, version_tosa
from app.dialects.tosa.spec import NAME, TosaSpec, TosaTarget, target

DIALECT = Dialect(
    name=NAME, spec_model=TosaSpec, target_model=TosaTarget, resolve=resolve_source, emit=emit, target=target,
    check_version=version_tosa, capability=capability, version_example="tosa:1.0", engines={ENGINE: run_reference},
    artifacts=ARTIFACTS, in_defaults=False, rule_texts=RULE_TEXTS, examples=EXAMPLES)
