"""The TFLite engine: ai-edge-litert's Interpreter ("litert") on a .tflite model's bytes.

The model is written by tflite_flatbuffer.build_model (the `tflite` package's generated schema builders), from
app/dialects/tflite.py (graph_of, model_bytes, run_litert), which imports this module; this module imports
nothing of tflite.py. The interpreter's default op resolver applies the XNNPACK delegate (the reading "xnnpack",
the default); the reading "builtin" (a request's `reading`, carried on Semantics.reading) or `resolver="builtin"`
runs the builtin kernels without default delegates.
"""

from __future__ import annotations

import numpy as np

from app.engines import extras as engines
from app.core.errors import RejectedSpec


def invoke(data: bytes, x: np.ndarray, resolver: str = "default") -> np.ndarray:
    """Run a one-input model on `x` with ai-edge-litert's Interpreter; `resolver` "builtin" skips the delegate."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        raise engines.missing("litert", "ai-edge-litert") from None
    kind = {"default": OpResolverType.AUTO, "builtin": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
            "reference": OpResolverType.BUILTIN_REF}[resolver]
    flat = np.ascontiguousarray(x).reshape(-1) if x.ndim == 0 else np.ascontiguousarray(x)
    try:
        it = Interpreter(model_content=data, experimental_op_resolver_type=kind)
        inp = it.get_input_details()[0]["index"]
        it.resize_tensor_input(inp, list(flat.shape), strict=False)
        it.allocate_tensors()
        it.set_tensor(inp, flat)
        it.invoke()
    except (RuntimeError, ValueError) as exc:  # a kernel's Prepare/Eval check: the interpreter refuses the model
        raise RejectedSpec(f"the LiteRT interpreter refuses this model: {str(exc).strip()[:300]}", "backend") from None
    return np.array(it.get_tensor(it.get_output_details()[0]["index"])).reshape(x.shape)
