"""TensorRT `IActivationLayer` kCLIP as a clipbridge dialect: `DIALECT`, its registry entry.

spec.py (models, versions, types, sources), meaning.py (the rules and both readings: header, the default, and observed, the engine's), emit.py (a
Meaning -> a kCLIP layer), network_api.py (the Python and C++ API calls), catalogue.py (readings, rule texts,
examples, capability). No engine: TensorRT does not run here. app/clipbridge/dialects/registry.py imports this package, and
scan/lint/diff/fix and tests may import its modules; clipbridge.core, clipbridge.kernels and clipbridge.engines never do.
"""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
from clipbridge.dialects.tensorrt import catalogue, emit, meaning, spec

# Modules imported whole: `from .emit import emit` would shadow the submodule `emit` with the function.
DIALECT = Dialect(
    name=spec.NAME, spec_model=spec.TensorRtSpec, target_model=spec.TensorRtTarget, resolve=meaning.resolve_source,
    emit=emit.emit, target=emit.target, check_version=meaning.version_tensorrt, capability=catalogue.capability,
    version_example="tensorrt:10", artifacts=catalogue.ARTIFACTS, in_defaults=False,
    rule_texts=catalogue.RULE_TEXTS, examples=catalogue.EXAMPLES, readings=catalogue.READINGS,
    engine_reading=catalogue.ENGINE_READING)

__all__ = ["DIALECT"]
