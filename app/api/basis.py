"""What an output shows (issue 37): the specification, an observed engine modelled on NumPy, or an engine run.

/v1/execute and /v1/compare take `basis`: "specification" computes each dialect's documents (TensorRT: the
header reading, NaN undocumented, executed as propagate); "engine" computes what the dialect's engine was
observed to do, where clipbridge records it (TensorRT: NaN -> alpha, the observed reading; OpenVINO's CPU
plugin: NaN -> min, the engine note in app/dialects/openvino/notes.py, which is what `clipbridge diff`
measures on a model), and the specification elsewhere. Without `basis` each dialect runs its default reading,
the one /v1/translate's findings and witnesses are computed under (so a witness reproduces on /v1/compare);
for TensorRT that is the observed engine. A `reading` named in the request wins for its dialect. Each output
says in `shows` which it is; an engine backend's output is always "engine".
Imported by app/api/execute_routes.py. The tables name dialects, so they live here, above the service (which
never names one); their natural home is the registry (a Dialect field each), a follow-up.
"""

from __future__ import annotations

from typing import Literal

from app.core.meaning import NanInput, evolve
from app.service.execute import Semantics, readings_of

Basis = Literal["specification", "engine"]
Shows = Literal["specification", "observed-engine", "engine"]
MEANING_BACKENDS = ("numpy", "cupy")  # the kernels of a meaning; every other backend runs the engine itself

# dialect -> its reading that is the documents, and the one that models an observed engine (Dialect.readings)
SPEC_READING = {"tensorrt": "header"}
ENGINE_READING = {"tensorrt": "observed"}
# Readings that are an implementation's observed behaviour rather than a document
OBSERVED_READINGS = {("tensorrt", "observed"), ("webnn", "chromium")}
# dialect -> the NaN-input rule its engine was observed to follow where the spec says propagate (float tensors)
ENGINE_NAN_INPUT = {"openvino": NanInput.TO_LOWER}  # CPU plugin: NaN -> min (openvino 2026.4; docs/diff.md)


def reading_for_basis(dialect: str, basis: Basis | None, asked: str | None, strict: bool = True) -> str | None:
    """The reading to run `dialect` under: the request's (strict: whenever given, so that one the dialect does
    not take is refused; else when the dialect takes it), else the basis's."""
    if basis is None or (asked is not None and (strict or asked in readings_of(dialect))):
        return asked
    return (ENGINE_READING if basis == "engine" else SPEC_READING).get(dialect, asked)


def under_basis(sem: Semantics, basis: Basis | None) -> tuple[Semantics, bool]:
    """`sem` with an observed engine's NaN rule when the basis is the engine and one is recorded; whether it
    was applied."""
    rule = ENGINE_NAN_INPUT.get(sem.dialect)
    if basis != "engine" or rule is None or not sem.meaning.dtype.is_float:
        return sem, False
    return Semantics(sem.dialect, evolve(sem.meaning, nan_input=rule), sem.spec, sem.reading, sem.precision), True


def shows(dialect: str, reading: str | None, backend: str, observed: bool) -> Shows:
    """What the output is: an engine run, a model of an observed engine, or the specification."""
    if backend not in MEANING_BACKENDS:
        return "engine"
    if observed or (dialect, reading) in OBSERVED_READINGS:
        return "observed-engine"
    return "specification"
