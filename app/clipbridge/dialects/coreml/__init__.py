"""Core ML MIL `clip` (apple/coremltools, iOS15 and iOS17 definitions): the dialect package. It has no engine here
(coremltools cannot run a program on Linux); its MIL text artifact is built with coremltools when installed.

spec.py (wire models), catalogue.py (rule texts, examples, capability), meaning.py (spec -> Meaning), emit.py
(Meaning -> spec and findings), mil.py (the MIL program). Imported by the registry (which reads DIALECT) and by
scan, lint, diff and fix above it; never by core, kernels or another dialect.
"""

from __future__ import annotations

# The modules, not their functions: a name such as `emit` stays the submodule (clipbridge.dialects.coreml.emit).
from clipbridge.dialects.coreml import catalogue, emit, meaning, spec
from clipbridge.dialects.kit.base import Dialect

DIALECT = Dialect(
    name=spec.NAME, spec_model=spec.CoreMLSpec, target_model=spec.CoreMLTarget, resolve=meaning.resolve_source,
    emit=emit.emit, target=spec.target, check_version=meaning.check_version, capability=catalogue.capability,
    version_example="coreml:iOS17", artifacts=catalogue.ARTIFACTS, in_defaults=False,
    rule_texts=catalogue.RULE_TEXTS, examples=catalogue.EXAMPLES)
