"""ONNX Clip-1, -6, -11, -12, -13 as one dialect package; `DIALECT` is its entry in app/clipbridge/dialects/registry.py.

spec.py (wire models), dtypes.py (ONNX's type names and elem_type codes), versions.py (the Clip schemas as
data), meaning.py (spec -> Meaning), emit.py and minmax.py (Meaning -> Clip, or Max/Min for per-element bounds),
model.py (ModelProto built and read), tensor.py (TensorProto values, checked), engine.py (onnxruntime),
catalogue.py (rule texts, examples, the capability row).

The registry imports this package; scan, lint, diff and fix (above the dialects) may import its modules. The
package imports only clipbridge.core, clipbridge.engines, clipbridge.dialects.kit and itself; never core or kernels import it."""

from __future__ import annotations

from clipbridge.dialects.kit.base import Dialect
from clipbridge.dialects.onnx.catalogue import EXAMPLES, RULE_TEXTS, capability
from clipbridge.dialects.onnx.emit import EMIT
from clipbridge.dialects.onnx.engine import bundle, run_onnxruntime
from clipbridge.dialects.onnx.meaning import resolve_source
from clipbridge.dialects.onnx.spec import NAME, OnnxSpec, OnnxTarget
from clipbridge.dialects.onnx.versions import check_version, target

__all__ = ["DIALECT", "NAME"]

DIALECT = Dialect(
    name=NAME, spec_model=OnnxSpec, target_model=OnnxTarget, resolve=resolve_source, emit=EMIT, target=target,
    check_version=check_version, capability=capability, version_example="onnx:13",
    engines={"onnxruntime": run_onnxruntime}, bundle=bundle, artifacts={"onnx_model": "base64 ModelProto"},
    rule_texts=RULE_TEXTS, examples=EXAMPLES)
