"""OpenVINO Clamp-1 (every opsetN), one package: spec.py (the wire models), dtypes.py (OpenVINO's element type
and precision names), meaning.py (spec -> Meaning), notes.py (the CPU plugin's observed deviations), emit.py
(Meaning -> Clamp-1), ir.py (the IR v11 XML, written and read), minmax.py (per-element bounds as
Maximum/Minimum), engine.py (the CPU plugin runner and repro bundle), catalogue.py (capability, rule texts,
examples).

`DIALECT` is what app/clipbridge/dialects/registry.py registers. The registry and the layers above the dialects (service,
scan, lint, diff, fix) may import this package and its modules; core, kernels, engines and other dialects never
do."""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
from clipbridge.dialects.openvino.catalogue import ARTIFACTS, EXAMPLES, RULE_TEXTS, capability
from clipbridge.dialects.openvino.emit import EMIT
from clipbridge.dialects.openvino.engine import bundle, run_openvino
from clipbridge.dialects.openvino.meaning import resolve_source, version_openvino
from clipbridge.dialects.openvino.notes import BF16_NOTES, ENGINE_NAN_INPUT
from clipbridge.dialects.openvino.spec import NAME, OpenVinoSpec, OpenVinoTarget, target

__all__ = ["DIALECT", "NAME"]

DIALECT = Dialect(
    name=NAME, spec_model=OpenVinoSpec, target_model=OpenVinoTarget, resolve=resolve_source, emit=EMIT,
    target=target, check_version=version_openvino, capability=capability,
    version_example="openvino:opset16", engines={"openvino": run_openvino},
    bundle=bundle, artifacts=ARTIFACTS, rule_texts=RULE_TEXTS, examples=EXAMPLES,
    host_notes={"openvino_bf16_variant": BF16_NOTES},
    engine_nan_input=ENGINE_NAN_INPUT)
