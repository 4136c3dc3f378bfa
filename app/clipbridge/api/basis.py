"""What an output shows (issue 37): the specification, an observed engine modelled on NumPy, or an engine run.

Every dialect's default reading is its specification (its documented operator; TensorRT: the header, NaN
undocumented, executed as propagate), so without `basis` every dialect answers the same question, the one
/v1/translate's default findings and witnesses are computed under. What an engine was observed to do is a reading
one asks for: `basis: "engine"` runs each dialect's Dialect.engine_reading (TensorRT: observed, NaN -> alpha;
WebNN: chromium) and applies its Dialect.engine_nan_input (OpenVINO's CPU plugin: NaN -> min, the engine note
`clipbridge diff` measures on a model); a dialect with neither recorded shows its specification. A `reading`
named in the request wins for its dialect. Each output says in `shows` which it is; an engine backend's output is
always "engine". The per-dialect facts live in the dialect packages (Dialect fields), read here through the
registry, so this module names no dialect. Imported by app/clipbridge/api/execute_routes.py.
"""

from __future__ import annotations

from typing import Literal

from clipbridge.core.meaning import evolve
from clipbridge.dialects import registry
from clipbridge.service.execute import Semantics, readings_of

Basis = Literal["specification", "engine"]
Shows = Literal["specification", "observed-engine", "engine"]
MEANING_BACKENDS = ("numpy", "cupy")  # the kernels of a meaning; every other backend runs the engine itself


def engine_reading(dialect: str) -> str | None:
    """The reading that models `dialect`'s engine as observed (Dialect.engine_reading), if one is recorded."""
    d = registry.DIALECTS.get(dialect)
    return d.engine_reading if d is not None else None


def reading_for_basis(dialect: str, basis: Basis | None, asked: str | None, strict: bool = True) -> str | None:
    """The reading to run `dialect` under: the request's (strict: whenever given, so that one the dialect does
    not take is refused; else when the dialect takes it), else the basis's: the engine's reading for "engine",
    the default (the specification, None) otherwise."""
    if basis is None or (asked is not None and (strict or asked in readings_of(dialect))):
        return asked
    if basis == "engine":
        return engine_reading(dialect)
    return next(iter(readings_of(dialect)), None)


def under_basis(sem: Semantics, basis: Basis | None) -> tuple[Semantics, bool]:
    """`sem` with its engine's observed NaN rule when the basis is the engine and one is recorded
    (Dialect.engine_nan_input, float tensors); whether it was applied."""
    d = registry.DIALECTS.get(sem.dialect)
    rule = d.engine_nan_input if d is not None else None
    if basis != "engine" or rule is None or not sem.meaning.dtype.is_float:
        return sem, False
    return Semantics(sem.dialect, evolve(sem.meaning, nan_input=rule), sem.spec, sem.reading, sem.precision), True


def shows(dialect: str, reading: str | None, backend: str, observed: bool) -> Shows:
    """What the output is: an engine run, a model of an observed engine, or the specification."""
    if backend not in MEANING_BACKENDS:
        return "engine"
    if observed or (reading is not None and reading == engine_reading(dialect)):
        return "observed-engine"
    return "specification"
