"""How many threads an engine run may use in this process, and what OpenVINO's compiled model really used.

By default (None) each engine takes its own defaults: onnxruntime one intra-op thread per core, OpenVINO's CPU
plugin its stream threads, pinned to cores (ENABLE_CPU_PINNING). That suits one process on a machine. Several
processes running engines at once (fleet's workers, app/clipbridge/fleet) collide there: every OpenVINO process pins its
threads to the same first cores, and each engine's helper threads wait for a core the other processes hold;
measured on a 2-core host, two concurrent diffs took 55 ms a model each instead of 36 ms (docs/performance.md,
Fleet). `set_engine_threads(n)` makes every later run of this process use n threads, unpinned.

A thread count never enters the answer of the runs clipbridge makes on the registry tests/fleet generates: the
diff with the defaults and with one thread give the same bytes in every captured tensor and the same report
(tests/fleet/test_engine_threads.py, for both precisions). The settings that ran are reported with each run
(onnxruntime's `intra_op_num_threads`, OpenVINO's `inference_num_threads` and `cpu_pinning`, read back from the
compiled model).

`scoped(n)` sets a count for the calling thread only, for a diff that runs two sides at once in one process
(clipbridge.diff.plain: the plain runs beside the marked ones): each side then gets half the cores instead of both
sides' engines contending for all of them (docs/diff.md, Speed). A count set for the process comes first.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

_THREADS: int | None = None
_COMPILED = threading.local()  # OpenVINO's thread settings as the last compile on this thread read them back
_SCOPED = threading.local()  # a count for this thread only (scoped)


def set_engine_threads(n: int | None) -> None:
    """Every later engine run of this process uses `n` threads, OpenVINO's unpinned (None: the engines' defaults)."""
    global _THREADS
    if n is not None and n < 1:
        raise ValueError(f"engine threads must be at least 1, got {n}")
    _THREADS = n


def engine_threads() -> int | None:
    """The count engine runs on this thread use: the process's, else this thread's scoped one (None: the
    engines' defaults)."""
    return _THREADS if _THREADS is not None else getattr(_SCOPED, "n", None)


def set_thread_count(n: int | None) -> None:
    """This thread's own count (a pool's initializer: the thread then runs engines as its starter asked)."""
    _SCOPED.n = n


@contextlib.contextmanager
def scoped(n: int | None) -> Iterator[None]:
    """Engine runs on this thread use `n` threads, unpinned, inside the block (None: no change)."""
    before = getattr(_SCOPED, "n", None)
    _SCOPED.n = n if n is not None else before
    try:
        yield
    finally:
        _SCOPED.n = before


def share_of_cores(ways: int) -> int:
    """The cores this process may run on, split `ways` ways (at least one thread each)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux: every core the OS reports
        cores = os.cpu_count() or 1
    return max(1, cores // ways)


def onnxruntime_threads(opts: Any) -> None:
    """Pin the session's intra-op threads when a count is set (reported as `intra_op_num_threads`)."""
    if (n := engine_threads()) is not None:
        opts.intra_op_num_threads = n


def openvino_config(config: dict[str, Any], device: str) -> None:
    """Add the CPU plugin's thread settings to a compile config when a count is set: unpinned, so that processes
    (or a diff's two sides) running side by side do not all pin their threads to the same cores."""
    if (n := engine_threads()) is not None and device == "CPU":
        config.update({"INFERENCE_NUM_THREADS": n, "ENABLE_CPU_PINNING": False})


def record_openvino(compiled: Any) -> None:
    """Read back the compiled model's threads and pinning (what ran, defaults included) for openvino_settings."""
    try:
        _COMPILED.value = {"inference_num_threads": int(compiled.get_property("INFERENCE_NUM_THREADS")),
                           "cpu_pinning": bool(compiled.get_property("ENABLE_CPU_PINNING"))}
    except Exception:  # a device without these properties: nothing to report
        _COMPILED.value = {}


def openvino_reported() -> dict[str, Any]:
    """The thread settings of this thread's last OpenVINO compile (empty before any)."""
    return dict(getattr(_COMPILED, "value", {}))
