"""Run a spec under a dialect's semantics on a backend: NumPy, CuPy (GPU), onnxruntime or OpenVINO.

`semantics` names whose rules apply. The spec's own dialect uses its meaning directly; another dialect
uses the translation of the spec into it (default mode `literal`: the same numbers under that dialect's
rules, which is what "how would X compute this" means; `preserve` gives the equivalent op).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np

from clipbridge.engines import config as engine_config
from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.dialects.kit.tensor_bounds import check_bounds_fit
from clipbridge.engines.extras import INSTALL_HINT
from clipbridge.core.errors import BackendUnavailable, Busy, ClipBridgeError, RejectedSpec, TimedOut, located
from clipbridge.kernels.array_api import clip_xp
from clipbridge.kernels.cupy import clip_cupy_half
from clipbridge.kernels.half import HALF
from clipbridge.kernels.numpy import clip_numpy
from clipbridge.kernels.plan import reference_only
from clipbridge.core.meaning import Meaning, State, same_outputs
from clipbridge.service.specs import AnyTarget
from clipbridge.core.suggest import one_of
from clipbridge.service.translate import Resolved, target_from, translate_one

BACKENDS = ("numpy", "cupy", *registry.engine_names(), "auto")  # the meaning kernels, then each dialect's engines
T = TypeVar("T")


@dataclass(frozen=True)
class Semantics:
    """A meaning to execute, which dialect it is, and the spec (as JSON) an engine backend would build.

    `reading`: the dialect reading the request chose (a name in Dialect.readings), set by with_reading; an engine
    that can run several setups (TFLite's litert: XNNPACK delegate or builtin kernels) reads it. None: the default.
    """

    dialect: str
    meaning: Meaning
    spec: dict[str, Any] | None
    reading: str | None = None
    precision: str = "model"  # engine_config.Precision: pinned to the model's own types, or the engine's defaults


def with_precision(sem: Semantics, precision: str) -> Semantics:
    """`sem` run at `precision` ("model" or "deployed": app/clipbridge/engines/config.py) by an engine backend."""
    return sem if sem.precision == precision else replace(sem, precision=precision)


def run_reported(sem: Semantics, x: np.ndarray, backend: str, reading: str | None,
                 inplace: bool = False) -> tuple[np.ndarray, dict[str, Any] | None]:
    """run(), and the settings the engine ran with (precision, inference precision, flush-to-zero, versions);
    None for the meaning kernels (numpy, cupy), which compute the spec exactly."""
    engine_config.take_run()
    y = run(sem, x, backend, reading, inplace)
    return y, engine_config.take_run()


def semantics_for(src: Resolved, semantics: str | AnyTarget | None, mode: Mode) -> Semantics:
    """The meaning whose rules apply: the source's own, or its translation into another dialect."""
    if semantics is None or (isinstance(semantics, str) and semantics == src.dialect):
        return Semantics(src.dialect, src.meaning, src.normalized)
    with located("target"):
        target = target_from(semantics)
    if src.meaning.state is State.REJECTED:
        raise RejectedSpec(f"{src.dialect} refuses to build this clip: {src.meaning.reason}", "spec")
    with located("target"):
        tr = translate_one(src, target, mode)
    if tr.meaning is None or tr.status == "unsupported":
        reason = "; ".join(f.message for f in tr.findings if f.severity.value == "error") or "unsupported"
        raise RejectedSpec(f"{target.dialect} cannot compute this clip: {reason}", "target")
    if tr.meaning.state is State.REJECTED:
        raise RejectedSpec(f"{target.dialect} refuses to build this clip: {tr.meaning.reason}", "target")
    return Semantics(target.dialect, tr.meaning, tr.target)


def reading_for(m: Meaning, reading: str | None) -> str | None:
    """The reading `m` runs under, as reported: the name of a dialect reading whose meaning differs (WebNN: spec,
    chromium; TensorRT: observed, header; TFLite: xnnpack, builtin; DirectML CLIP min > max: current-doc,
    2022-doc); None when no reading applies."""
    if m.alternates:
        names = readings_of(m.dialect)
        return reading if reading in names else default_reading_of(m, names)
    return None


def default_reading_of(m: Meaning, names: tuple[str, ...]) -> str | None:
    """The reading `m` itself is: the dialect's first reading not held in its alternates (a spec may pin another
    reading as its meaning's default: TensorRT `reading`)."""
    others = {name for name, _ in m.alternates}
    return next((n for n in names if n not in others), None)


def readings_of(dialect: str) -> tuple[str, ...]:
    """The reading names a dialect's semantics take (Dialect.readings; the first is the default)."""
    d = registry.DIALECTS.get(dialect)
    return tuple(d.readings) if d is not None else ()


def check_reading(reading: str | None, dialects: list[str]) -> None:
    """A 400 naming `reading` unless one of the dialects (names as requested) takes it."""
    if reading is None:
        return
    names = [n.strip().lower() for n in dialects]
    valid = list(dict.fromkeys(r for n in names for r in readings_of(n)))
    if reading not in valid:
        whose = ", ".join(dict.fromkeys(names)) or "these"
        if not valid:
            having = ", ".join(n for n, d in registry.DIALECTS.items() if d.readings)
            raise ClipBridgeError(f"`reading` applies to the semantics of {having}; {whose} semantics take "
                                  f"none. Got: {reading!r}", "reading")
        raise ClipBridgeError(one_of(f"Unknown reading for {whose} semantics", reading, valid), "reading")


def with_reading(sem: Semantics, reading: str | None, strict: bool = True) -> tuple[Semantics, str | None]:
    """`sem` under the chosen reading (its meaning swapped for that reading's) and the reading to report.
    strict: a reading `sem`'s dialect does not take is a 400; else it falls back to the default reading."""
    if reading is not None and reading not in readings_of(sem.dialect):
        if strict:
            check_reading(reading, [sem.dialect])
        reading = None
    label = reading_for(sem.meaning, reading)  # read off the default meaning, which holds the alternates
    m = sem.meaning.under(reading)
    if m is sem.meaning and reading is None:
        return sem, label
    return Semantics(sem.dialect, m, sem.spec, reading, sem.precision), label


class Slots:
    """A cap on concurrent executions: past it, 503 with Retry-After instead of running out of memory.

    `with slots:` holds a slot around work in the calling thread. `slots.run(fn)` also bounds the time: `fn`
    runs on the slots' own thread, and the caller gets TimedOut (503) after `timeout` seconds. A thread cannot
    be killed, so the slot is released only when `fn` really ends: a timed-out execution still counts against
    the cap, and memory is never oversubscribed.
    """

    def __init__(self, size: int, timeout: float | None = None) -> None:
        self.size = max(1, size)
        self.timeout = timeout if timeout and timeout > 0 else None
        self._sem = threading.BoundedSemaphore(self.size)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> "Slots":
        if not self._sem.acquire(blocking=False):
            raise Busy("every execution slot is busy; retry shortly")
        return self

    def __exit__(self, *exc: object) -> None:
        self._sem.release()

    def run(self, fn: Callable[[], T]) -> T:
        """fn() in a slot, waited for at most `timeout` seconds (Busy when no slot is free, TimedOut past it)."""
        if self.timeout is None:
            with self:
                return fn()
        self.__enter__()
        try:
            future = self._executor().submit(self._guarded, fn)
        except BaseException:
            self._sem.release()
            raise
        try:
            return future.result(timeout=self.timeout)
        except FutureTimeout:
            raise TimedOut(f"the execution ran past {self.timeout:g} s (CLIPBRIDGE_MAX_EXECUTION_SECONDS); "
                           "it is abandoned, and its slot is freed when it ends") from None

    def _guarded(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        finally:
            self._sem.release()

    def _executor(self) -> ThreadPoolExecutor:
        # One thread per slot: a task holds its slot for as long as it runs, so the pool never queues.
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.size, thread_name_prefix="clipbridge-exec")
            return self._pool


@lru_cache(maxsize=1)
def cupy_available() -> bool:
    """CuPy importable and a CUDA device present (checked once per process)."""
    try:
        import cupy  # type: ignore[import-not-found]
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # not installed, no driver, no device
        return False


def pick_backend(backend: str) -> str:
    if backend == "auto":
        return "cupy" if cupy_available() else "numpy"
    return backend


def run(sem: Semantics, x: np.ndarray, backend: str, reading: str | None, inplace: bool = False) -> np.ndarray:
    """The output of `sem` on `x` on `backend` (which must be able to compute that dialect)."""
    m = sem.meaning
    if m.has_tensor_bounds:
        check_bounds_fit(m, x.shape)
    if backend == "numpy":
        return clip_numpy(m, x, out=x if inplace and x.flags.writeable else None)
    if backend == "cupy":
        if not cupy_available():
            raise BackendUnavailable(f"backend 'cupy' needs CuPy and a CUDA device ({INSTALL_HINT['gpu']}); "
                                     "none is available here", "backend")
        import cupy
        if reference_only(m):
            raise BackendUnavailable("backend 'cupy' does not run this meaning (a ScaleBias together with "
                                     "per-element bounds or promotion); use backend 'numpy'", "backend")
        if m.dtype.np_dtype in HALF:  # on the uint16 patterns: bit-exact, and bfloat16 needs no CuPy dtype
            y = clip_cupy_half(m, cupy.asarray(np.ascontiguousarray(x).view(np.uint16)))
            return cupy.asnumpy(y).view(m.dtype.np_dtype)
        return cupy.asnumpy(clip_xp(cupy, m, cupy.asarray(x)))
    owner = registry.engine_owner(backend)
    if owner is not None:
        if sem.dialect != owner.name:
            raise BackendUnavailable(f"backend '{backend}' runs {owner.name} semantics; this request asks for "
                                     f"{sem.dialect}", "backend")
        assert sem.spec is not None
        return owner.engines[backend](sem, x)
    raise BackendUnavailable(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}", "backend")


def compare_outputs(x: np.ndarray, outs: dict[str, np.ndarray], limit: int = 10) -> list[dict[str, Any]]:
    """Per pair of semantics: how many elements differ (NaN equals NaN) and the first differing indices."""
    names = list(outs)
    pairs = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            diff = ~same_outputs(outs[a], outs[b])
            idx = np.argwhere(diff)[:limit]
            pairs.append({"a": a, "b": b, "differing": int(diff.sum()),
                          "first": [{"index": [int(k) for k in ix], "input": x[tuple(ix)],
                                     "a_output": outs[a][tuple(ix)], "b_output": outs[b][tuple(ix)]}
                                    for ix in idx]})
    return pairs
