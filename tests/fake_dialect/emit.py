"""A Meaning written as a fake.clamp (preserve: the numbers that compute it; literal: the source's numbers)."""

from __future__ import annotations

import math

from clipbridge.core import exact
from clipbridge.core.findings import Code, Finding, Notes, Severity
from clipbridge.core.meaning import Meaning, NanBound, Order, State
from clipbridge.core.numbers import Number
from clipbridge.dialects.kit.common import (Emitted, LazyArtifacts, Mode, TypeWords, default_made_explicit,
                                     literal_integer_cast)
from clipbridge.dialects.kit.crossed import collapse_crossed
from clipbridge.dialects.kit.spec_base import spec_json

from tests.fake_dialect.meaning import NAME_OF, resolve, version_fake
from tests.fake_dialect.spec import NAME, VERSIONS, FakeSpec, FakeTarget

WORDS = TypeWords("an i32 bound", "an i32 bound", "an i32", "i32")


def _unsupported(code: Code, message: str, src: Meaning) -> Emitted:
    return Emitted(None, None, [Finding(code, Severity.ERROR, message, src.describe(), "not expressible")],
                   unsupported=True)


def _literal(src: Meaning, notes: Notes) -> list[Number]:
    """The source's numbers (a default made explicit: fake.clamp has none); into i32, a C cast of each."""
    assert src.lower is not None and src.upper is not None
    out: list[Number] = []
    for b, side in ((src.lower, "lo"), (src.upper, "hi")):
        v = b.value if default_made_explicit(b, side, "fake.clamp", notes) else b.given
        assert v is not None
        out.append(v if src.dtype.is_float else literal_integer_cast(v, src.dtype, side, notes, WORDS))
    return out


def _preserve(src: Meaning, notes: Notes) -> list[Number]:
    """The effective bounds; a NaN bound as the source reads it; max-wins crossing as lo = hi = max."""
    assert src.lower is not None and src.upper is not None
    values: list[Number] = [src.lower.value, src.upper.value]
    for i, side in enumerate(("lo", "hi")):
        if exact.is_nan(values[i]) and src.nan_bound is NanBound.ZERO:
            values[i] = 0.0
        elif exact.is_nan(values[i]) and src.nan_bound is not NanBound.IGNORE:
            notes.add(Code.NAN_BOUND, Severity.WARNING, f"The source's NaN {side} is not ignored there; "
                      "fake.clamp ignores a NaN bound")
    return collapse_crossed(src, values, notes, Order.MIN_WINS, "The source gives max when min > max; fake.clamp "
                            "gives lo: emitted lo = hi = max")


def emit(src: Meaning, target: FakeTarget, mode: Mode, shape: list | None) -> Emitted:
    """A fake.clamp computing `src` (or, literal, carrying its numbers), with its text as the artifact."""
    version = version_fake(target.version or VERSIONS[-1])
    if src.dtype.name not in NAME_OF:
        return _unsupported(Code.DTYPE_UNSUPPORTED, f"fake.clamp takes f32 and i32, not {src.dtype.name}", src)
    if src.scale_bias is not None or src.has_tensor_bounds or src.result_dtype not in (None, src.dtype):
        return _unsupported(Code.TENSOR_BOUNDS if src.has_tensor_bounds else Code.SCALE_BIAS
                            if src.scale_bias is not None else Code.DTYPE_PROMOTION,
                            "fake.clamp has scalar bounds of T and nothing else", src)
    notes = Notes()
    lo, hi = _literal(src, notes) if mode is Mode.LITERAL else _preserve(src, notes)
    spec = FakeSpec(dialect=NAME, version=version, dtype=NAME_OF[src.dtype.name], lo=lo, hi=hi, shape=shape)
    meaning = resolve(spec)
    if meaning.state is State.REJECTED:
        return Emitted(spec_json(spec), meaning, notes.items + [Finding(
            Code.MIN_GREATER_THAN_MAX, Severity.ERROR, f"fake {version} refuses this clamp: {meaning.reason}",
            src.describe(), "rejected")], unsupported=True)
    return Emitted(spec_json(spec), meaning, notes.items, LazyArtifacts(lambda: {"fake_text": text(spec)}))


def text(spec: FakeSpec) -> str:
    """The clamp as one line of the fake language (its artifact)."""
    def num(v: Number) -> str:
        return "nan" if exact.is_nan(v) else ("inf" if v == math.inf else "-inf" if v == -math.inf else str(v))
    return f"y = fake.clamp<{spec.version}, {spec.dtype}>(x, {num(spec.lo)}, {num(spec.hi)})\n"
