"""Core ML MIL `clip` (apple/coremltools, iOS15 and iOS17 definitions): the dialect package. It has no engine here
(coremltools cannot run a program on Linux); its MIL text artifact is built with coremltools when installed.

spec.py (wire models), catalogue.py (rule texts, examples, capability), meaning.py (spec -> Meaning), emit.py
(Meaning -> spec and findings), mil.py (the MIL program). Imported by the registry (which reads DIALECT) and by
scan, lint, diff and fix above it; never by core, kernels or another dialect.
"""

from __future__ import annotations

from app.dialects.coreml.catalogue import ARTIFACTS, EXAMPLES, RULE_TEXTS, capability
from app.dialects.coreml.emit import emit
from app.dialects.coreml.meaning import check_version, resolve_source
from app.dialects.coreml.spec import NAME, CoreMLSpec, CoreMLTarget, target
from app.dialects.kit.base import Dialect

DIALECT = Dialect(
    name=NAME, spec_model=CoreMLSpec, target_model=CoreMLTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=check_version, capability=capability, version_example="coreml:iOS17",
    artifacts=ARTIFACTS, in_defaults=False, rule_texts=RULE_TEXTS, examples=EXAMPLES)
