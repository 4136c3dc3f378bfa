"""The TOSA reference model as clipbridge's TOSA engine ("tosa-reference"): a one-operator CLAMP flatbuffer
(flatbuffer.py) run by the `tosa-tools` wheel's `tosa_reference_model` executable on a .npy input.

The executable runs in a subprocess, not through the in-process `tosa_reference_model.run` binding: on an
ERROR_IF the model aborts a graph and (without TOSA_MODEL_NO_BACKTRACE) attaches gdb to its own process, which a
server must not host. A refused graph (ERROR_IF) exits 2 and names the failing condition; that is a TosaRefused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from clipbridge.core.errors import BackendUnavailable, RejectedSpec
from clipbridge.dialects.tosa.flatbuffer import SERIALIZER_DTYPE, flatbuffer, install_hint, serializer
from clipbridge.dialects.tosa.meaning import nan_mode_of
from clipbridge.dialects.tosa.spec import NAME_OF

ENGINE = "tosa-reference"
TIMEOUT_S = 60
OUTPUT_FILE = "output.npy"


class TosaRefused(RejectedSpec):
    """The reference model refused the graph (an ERROR_IF); `condition` is the line it printed."""

    def __init__(self, message: str, condition: str) -> None:
        super().__init__(message, "spec")
        self.condition = condition


@lru_cache(maxsize=1)
def reference_model_path() -> str | None:
    """The wheel's native `tosa_reference_model` (its internal bin/, not the Python console shim)."""
    try:
        from importlib import metadata
        path = Path(str(metadata.distribution("tosa-tools").locate_file("bin/tosa_reference_model")))
        if path.is_file():
            return str(path)
    except Exception:  # not installed, or an unusual layout
        pass
    return shutil.which("tosa_reference_model")


def available() -> bool:
    try:
        import tosa_serializer  # noqa: F401
    except ImportError:
        return False
    return reference_model_path() is not None


def run_flatbuffer(graph: bytes, x: np.ndarray, dtype: str) -> np.ndarray:
    """The reference model's output for `x` on a one-input, one-output graph (TosaRefused on an ERROR_IF)."""
    ts = serializer()
    from tosa_serializer.numpy_utils import load_npy, save_npy
    exe = reference_model_path()
    if exe is None:
        raise BackendUnavailable(install_hint(), "backend")
    dt = getattr(ts.DType, SERIALIZER_DTYPE[dtype])
    in_name, out_name = _io_names(graph)
    with tempfile.TemporaryDirectory(prefix="clipbridge-tosa-") as d:
        Path(d, "clamp.tosa").write_bytes(graph)
        save_npy(str(Path(d, "input.npy")), np.ascontiguousarray(x), dt)
        env = dict(os.environ, TOSA_MODEL_NO_BACKTRACE="1")
        # Relative names: the model resolves them against --flatbuffer_dir / --output_dir.
        cmd = [exe, "--tosa_file=clamp.tosa", f"--ifm_name={in_name}", "--ifm_file=input.npy",
               f"--ofm_name={out_name}", f"--ofm_file={OUTPUT_FILE}", f"--flatbuffer_dir={d}", f"--output_dir={d}"]
        try:
            p = subprocess.run(cmd, cwd=d, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BackendUnavailable(f"tosa_reference_model ran past {TIMEOUT_S} s", "backend") from None
        text = p.stdout + p.stderr
        result = Path(d, OUTPUT_FILE)
        if p.returncode != 0 or not result.exists():
            cond = refused_condition(text)
            if cond is not None:
                raise TosaRefused(f"the TOSA reference model refuses this CLAMP: {cond}", cond)
            tail = text.strip().splitlines()[-3:]
            raise BackendUnavailable(f"tosa_reference_model failed (exit {p.returncode}): {' | '.join(tail)}",
                                     "backend")
        return np.asarray(load_npy(str(result), dt)).reshape(x.shape)


def _io_names(graph: bytes) -> tuple[str, str]:
    """The main block's one input and one output name (tosa-opt writes TosaInput_0, the serializer result-0).

    Read with the wheel's flatc-generated Python tables: the C++ loader prints a version warning on stdout."""
    from tosa import TosaGraph
    try:
        if not TosaGraph.TosaGraph.TosaGraphBufferHasIdentifier(graph, 0):
            raise ValueError("no TOSA file identifier")
        block = TosaGraph.TosaGraph.GetRootAs(graph, 0).Regions(0).Blocks(0)
        names = ([block.Inputs(i).decode() for i in range(block.InputsLength())],
                 [block.Outputs(i).decode() for i in range(block.OutputsLength())])
    except Exception:  # a truncated or foreign buffer
        raise BackendUnavailable("the graph is not a TOSA flatbuffer", "backend") from None
    if len(names[0]) != 1 or len(names[1]) != 1:
        raise BackendUnavailable("the TOSA graph must have one input and one output", "backend")
    return names[0][0], names[1][0]


def refused_condition(text: str) -> str | None:
    """The reference model's ERROR_IF line (the condition and its message) from its log, or None."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "ERROR_IF() fails" in line:
            cond = line.rsplit(":", 1)[-1].strip()
            msg = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return f"{cond} ({msg})" if msg else cond
    return None


def run_reference(sem: Any, x: Any) -> Any:
    """Backend 'tosa-reference': the meaning's CLAMP on the reference model."""
    m = sem.meaning
    dtype = NAME_OF.get(m.dtype.name)
    if dtype is None:
        raise RejectedSpec(f"TOSA CLAMP has no {m.dtype.name} tensor", "spec")
    mode = nan_mode_of(m)
    graph = flatbuffer(dtype, list(np.shape(x)), m.lo, m.hi, mode)
    return run_flatbuffer(graph, np.asarray(x, dtype=m.dtype.np_dtype), dtype)
