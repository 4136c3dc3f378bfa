"""TensorFlow Lite / LiteRT clips (RELU6, RELU_N1_TO_1, RELU_0_TO_1, RELU, or MINIMUM then MAXIMUM): the dialect
package, with ai-edge-litert's Interpreter as its engine and two measured readings (xnnpack, builtin).

spec.py (wire models, ops, dtypes), catalogue.py (readings, rule texts, examples, capability), meaning.py (spec ->
Meaning), quant.py (quantized bounds), emit.py (Meaning -> spec and findings), flatbuffer.py (the .tflite model),
engine.py (backend "litert"). Imported by the registry (which reads DIALECT) and by scan, lint, diff and fix above
it; never by core, kernels or another dialect.
"""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
# The modules, not their functions: a name such as `emit` stays the submodule (clipbridge.dialects.tflite.emit).
from clipbridge.dialects.tflite import catalogue, emit, engine, meaning, spec

DIALECT = Dialect(
    name=spec.NAME, spec_model=spec.TfliteSpec, target_model=spec.TfliteTarget, resolve=meaning.resolve_source,
    emit=emit.emit, target=spec.target, check_version=meaning.version_tflite, capability=catalogue.capability,
    version_example="tflite:2.18", engines={"litert": engine.litert_backend}, artifacts=catalogue.ARTIFACTS,
    in_defaults=False, rule_texts=catalogue.RULE_TEXTS, examples=catalogue.EXAMPLES, readings=catalogue.READINGS)
