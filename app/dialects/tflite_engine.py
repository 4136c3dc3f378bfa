"""The .tflite artifact of a TFLite clip and its engine: ai-edge-litert's Interpreter ("litert").

The model is written by tflite_flatbuffer.build_model (the `tflite` package's generated schema builders). The
engine runs it with the interpreter's default op resolver, which applies the XNNPACK delegate (the reading
"xnnpack", the default); the reading "builtin" (a request's `reading`, carried on Semantics.reading) or
`resolver="builtin"` runs the builtin kernels without default delegates.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from app import engine_config
from app.dialects.tflite_flatbuffer import Graph, build_model
from app.errors import BackendUnavailable, RejectedSpec
from app.meaning import Meaning, State


def graph_of(spec: Any, m: Meaning, shape: list | tuple | None) -> Graph:
    """What build_model writes for a resolved spec: the op, the stored bounds, quantization, and the shape (an
    unknown size is -1: written 1 with shape_signature -1)."""
    from app.dialects.tflite import MINMAX, scale_tflite
    dims = tuple(d if isinstance(d, int) and d <= 2**31 - 1 else -1 for d in (shape if shape is not None else [None]))
    q = None
    if spec.quantization is not None:
        q = (scale_tflite(spec.quantization), spec.quantization.zero_point)
    lo = hi = None
    if spec.op.strip().upper() == MINMAX:
        lo, hi = m.lo, m.hi
    return Graph(spec.op.strip().upper(), m.dtype.name, dims, lo, hi, q)


def model_bytes(spec: Any, m: Meaning, shape: list | tuple | None = None) -> bytes:
    return build_model(graph_of(spec, m, spec.shape if shape is None else shape))


def model_base64(spec: Any, m: Meaning) -> str:
    """The emitted artifact: the flatbuffer as base64 (binary artifacts travel as base64 strings in JSON)."""
    return base64.b64encode(model_bytes(spec, m)).decode()


def invoke(data: bytes, x: np.ndarray, resolver: str = "default") -> np.ndarray:
    """Run a one-input model on `x` with ai-edge-litert's Interpreter; `resolver` "builtin" skips the delegate."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        from app.execute import INSTALL_HINT
        raise BackendUnavailable(f"backend 'litert' needs ai-edge-litert ({INSTALL_HINT['engines']})",
                                 "backend") from None
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
    from app.dialects.tflite import READING_BUILTIN
    return "builtin" if reading == READING_BUILTIN else "default"


def run_litert(sem: Any, x: np.ndarray, resolver: str | None = None) -> np.ndarray:
    """The semantics' own model (built for x's shape) on the LiteRT interpreter, with the op resolver of the
    chosen reading (`sem.reading`) unless `resolver` names one."""
    from app.dialects.tflite import TfliteSpec, resolve
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
