"""The TFLite engine: ai-edge-litert's Interpreter ("litert") on a .tflite model's bytes.

The model is written by flatbuffer.py (build_model, from a resolved spec: graph_of, model_bytes); run_litert runs
a semantics' own model. The interpreter's default op resolver applies the XNNPACK delegate (the reading "xnnpack",
the default); the reading "builtin" (a request's `reading`, carried on Semantics.reading) or `resolver="builtin"`
runs the builtin kernels without default delegates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from clipbridge.core.errors import RejectedSpec
from clipbridge.core.meaning import State
from clipbridge.dialects.tflite.catalogue import READING_BUILTIN
from clipbridge.dialects.tflite.flatbuffer import model_bytes
from clipbridge.dialects.tflite.meaning import resolve
from clipbridge.dialects.tflite.spec import TfliteSpec
from clipbridge.engines import config as engine_config, extras as engines


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


def resolver_of(reading: str | None) -> str:
    """The op resolver that runs a reading: builtin -> the builtin kernels; xnnpack or none -> the default."""
    return "builtin" if reading == READING_BUILTIN else "default"


def run_litert(sem: Any, x: np.ndarray, resolver: str | None = None) -> np.ndarray:
    """The semantics' own model (built for x's shape) on the LiteRT interpreter, with the op resolver of the
    chosen reading (`sem.reading`) unless `resolver` names one."""
    if sem.meaning.state is State.REJECTED:
        raise RejectedSpec(sem.meaning.reason or "rejected by TFLite", "spec")
    spec = TfliteSpec.model_validate(sem.spec)
    x = np.asarray(x, dtype=sem.meaning.dtype.np_dtype)
    # The model holds the spec's constants (the default meaning's): a reading changes how it runs, not what it is.
    data = model_bytes(spec, resolve(spec), list(x.shape) or [1])
    chosen = resolver or resolver_of(getattr(sem, "reading", None))
    y = invoke(data, x, chosen)
    engine_config.record_run(engine_config.litert_settings(getattr(sem, "precision", "model"), chosen))
    return y


def litert_backend(sem: Any, x: Any) -> Any:
    """Backend "litert" (an engine takes the semantics and the input only): run_litert with the reading's resolver."""
    return run_litert(sem, x)
