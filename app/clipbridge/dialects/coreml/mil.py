"""The Core ML artifact: the MIL program coremltools builds (mb.program / mb.clip), printed as MIL text.

coremltools (optional: imported inside functions) builds it on Linux but cannot run it there (libcoremlpython is
macOS only); const inputs fold through value_inference, which the tests compare with evaluate().
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from clipbridge.core.dtypes import FLOAT16
from clipbridge.dialects.coreml.meaning import dtype_coreml, opset_coreml
from clipbridge.dialects.coreml.spec import CoreMLSpec


@cache
def _import_coremltools() -> Any:
    """coremltools, imported with its logger at ERROR: on Linux its import warns about every macOS-only proxy it
    cannot load (and an untested torch), which is noise for a translation that only builds the program. Cached:
    setting a logger's level clears every logger's cache, which cost more than the whole clip's translation."""
    import logging
    log = logging.getLogger("coremltools")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        import coremltools
    finally:
        log.setLevel(level)
    return coremltools


def build_program(spec: CoreMLSpec, x: np.ndarray | None = None) -> Any:
    """mb.program with one mb.clip. With `x`, the clip's input is that const array (coremltools folds it: the
    clip's output .val is value_inference's); else a tensor input of `shape` (unknown sizes as symbols)."""
    ct = _import_coremltools()
    from coremltools.converters.mil import Builder as mb
    from coremltools.converters.mil.mil import get_new_symbol, types
    dt = dtype_coreml(spec.dtype)
    np_t = dt.np_dtype
    mil_t = types.fp16 if dt is FLOAT16 else types.fp32
    target = getattr(ct.target, opset_coreml(spec.opset))
    alpha, beta = np_t.type(dt.round(spec.alpha)), np_t.type(dt.round(spec.beta))
    if x is not None:
        @mb.program(input_specs=[mb.TensorSpec(shape=(1,), dtype=mil_t)], opset_version=target)
        def folded(inp: Any) -> Any:
            y = mb.clip(x=mb.const(val=np.asarray(x, dtype=np_t)), alpha=alpha, beta=beta, name="clip")
            return mb.add(x=inp, y=mb.reduce_sum(x=y, axes=[0]))
        return folded
    dims = spec.shape if spec.shape is not None else [None]
    shape = tuple(d if isinstance(d, int) else get_new_symbol() for d in dims)

    @mb.program(input_specs=[mb.TensorSpec(shape=shape, dtype=mil_t)], opset_version=target)
    def prog(inp: Any) -> Any:
        return mb.clip(x=inp, alpha=alpha, beta=beta, name="clip")
    return prog


def mil_text(spec: CoreMLSpec) -> str | None:
    """The MIL program's text as coremltools prints it; None when coremltools is not installed."""
    try:
        _import_coremltools()
    except ImportError:
        return None
    fast = _printed_program(spec)
    return fast if fast is not None else str(build_program(spec)).strip() + "\n"


@cache
def _opset_name(opset: str) -> str:
    """The function's spec version as the printer writes it (iOS17: CoreML7), from coremltools' own table."""
    ct = _import_coremltools()
    return ct._OPSET[getattr(ct.target, opset)]


def _printed_program(spec: CoreMLSpec) -> str | None:
    """What str(build_program(spec)) prints, written directly (Program/Function/Block/Operation/Var.__str__ of
    coremltools 9.0), advancing the two process-wide counters the text shows (Block.counter: `blockN`;
    k_num_internal_syms: `isN`) as building would. None where alpha >= beta (iOS17+ builders raise there): the
    caller builds, and raises, as before. tests/dialects/test_coreml_mil_text.py compares both on many specs."""
    from coremltools.converters.mil.mil import program as mil_program
    from coremltools.converters.mil.mil.block import Block
    dt = dtype_coreml(spec.dtype)
    np_t = dt.np_dtype
    alpha, beta = np_t.type(dt.round(spec.alpha)), np_t.type(dt.round(spec.beta))
    if alpha >= beta:
        return None
    dims = []
    for d in spec.shape if spec.shape is not None else [None]:
        if isinstance(d, int):
            dims.append(repr(d))
        else:  # get_new_symbol(): "is" + the counter
            dims.append(f"is{mil_program.k_num_internal_syms}")
            mil_program.k_num_internal_syms += 1
    block = Block._get_new_name()
    mil_t = "fp16" if dt is FLOAT16 else "fp32"
    ty = "(" + ", ".join(dims) + (", " if len(dims) > 1 else ",") + mil_t + ")(Tensor)"
    return (f"main[{_opset_name(spec.opset)}](%inp: {ty}) {{\n  {block}() {{\n    %clip: {ty} = clip(x=%inp, "
            f"alpha={float(alpha)!r}, beta={float(beta)!r}, name=\"clip\")\n  }} -> (%clip)\n}}\n")


def value_inference_coreml(spec: CoreMLSpec, x: np.ndarray) -> np.ndarray:
    """coremltools' own evaluation of the clip on a const input (its value_inference, run while building)."""
    prog = build_program(spec, np.asarray(x).reshape(-1))
    op = next(o for o in prog.functions["main"].operations if o.op_type == "clip")
    return np.asarray(op.outputs[0].val).reshape(np.shape(x))
