"""TensorFlow Lite / LiteRT clips (RELU6, RELU_N1_TO_1, RELU_0_TO_1, RELU, or MINIMUM then MAXIMUM): the dialect
package, with ai-edge-litert's Interpreter as its engine and two measured readings (xnnpack, builtin).

spec.py (wire models, ops, dtypes), catalogue.py (readings, rule texts, examples, capability), meaning.py (spec ->
Meaning), quant.py (quantized bounds), emit.py (Meaning -> spec and findings), flatbuffer.py (the .tflite model),
engine.py (backend "litert"). Imported by the registry (which reads DIALECT) and by scan, lint, diff and fix above
it; never by core, kernels or another dialect.
"""

from __future__ import annotations

from app.dialects.kit.base import Dialect
from app.dialects.tflite.catalogue import ARTIFACTS, EXAMPLES, READINGS, RULE_TEXTS, capability
from app.dialects.tflite.emit import emit
from app.dialects.tflite.engine import litert_backend
from app.dialects.tflite.meaning import resolve_source, version_tflite
from app.dialects.tflite.spec import NAME, TfliteSpec, TfliteTarget, target

DIALECT = Dialect(
    name=NAME, spec_model=TfliteSpec, target_model=TfliteTarget, resolve=resolve_source, emit=emit,
    target=target, check_version=version_tflite, capability=capability, version_example="tflite:2.18",
    engines={"litert": litert_backend}, artifacts=ARTIFACTS, in_defaults=False, rule_texts=RULE_TEXTS,
    examples=EXAMPLES, readings=READINGS)
