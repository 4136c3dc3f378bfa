"""The LiteRT converter's environment of its own (docs/chain.md, "The converter environment").

litert-torch 0.10.0 cannot live in clipbridge's environment: through ai-edge-litert[model-utils] -> xdsl 0.28.0 it
pins typing_extensions 4.12.2, which holds pydantic at 2.11 (clipbridge runs on pydantic 2.14). So the torch ->
.tflite conversion runs in a venv clipbridge builds once under its cache (clipbridge.engines.venvs: a lock, a marker
written last), with the same torch==2.13.0 as clipbridge's, and nothing of clipbridge installed: the converter
script (litert_convert.py) is run by path with `-I`, in an empty temporary directory, with a time and an address
space limit. The converted file is then read and run by ai-edge-litert in clipbridge's own environment.

Building is explicit (`clipbridge chain-env build`) or the CLI's first chain run with a LiteRT stage; the server
never builds: it answers 422 with the command."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clipbridge.engines import venvs

NAME = "litert-torch-0.10.0"
# torch is the one clipbridge pins (pyproject), so the .pt2 is read by the torch that wrote and ran it.
REQUIREMENTS = ["torch==2.13.0", "litert-torch==0.10.0", "ai-edge-litert==2.3.0"]
BUILD_COMMAND = "clipbridge chain-env build"
SCRIPT = Path(__file__).with_name("litert_convert.py")
TIMEOUT_S = 150.0  # below the server's per-call chain limit (180 s), so the converter is stopped before its worker
MEMORY_MB = 8192  # the converter child's address space (measured peak: docs/chain.md)


class ConverterError(Exception):
    """The converter process failed, ran out of time or memory: its reduced message."""


def env_dir() -> Path:
    return venvs.cache_root() / "converters" / NAME


def python() -> str | None:
    """The environment's interpreter when it is built, else None (no build, no lock: the server's question)."""
    venv = env_dir()
    return str(venvs.python_of(venv)) if venvs.ready(venv) else None


def missing_hint() -> str:
    return f"the LiteRT converter environment ({NAME}, about 2 GB installed) is not built: {BUILD_COMMAND}"


def build(log: Callable[[str], None] = print) -> str:
    """Build the environment once (about 0.5 GB of downloads, 2 GB installed) and return its interpreter."""
    return venvs.ensure(env_dir(), REQUIREMENTS, "chain-env", shared=False, log=log)


def convert(pt2: bytes, shapes: list[dict[str, Any]], timeout_s: float = TIMEOUT_S,
            memory_mb: int = MEMORY_MB) -> bytes:
    """The .tflite litert-torch writes for the ExportedProgram, converted by the environment's interpreter."""
    py = python()
    if py is None:
        raise ConverterError(missing_hint())
    with tempfile.TemporaryDirectory(prefix="clipbridge-litert-") as cwd:
        src, dst = os.path.join(cwd, "in.pt2"), os.path.join(cwd, "out.tflite")
        with open(src, "wb") as f:
            f.write(pt2)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": cwd, "TMPDIR": cwd,
               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
               "CLIPBRIDGE_CONVERTER_MEMORY_MB": str(memory_mb)}  # the script caps itself (litert_convert.py)
        try:
            done = subprocess.run([py, "-I", str(SCRIPT), src, dst, json.dumps(shapes)], cwd=cwd, env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise ConverterError(f"litert-torch ran out of time ({timeout_s:g} s)") from None
        if done.returncode != 0:
            raise ConverterError(_reduced(done.returncode, done.stderr))
        with open(dst, "rb") as f:
            return f.read()


def _reduced(code: int, stderr: str) -> str:
    """The script's one-line error (its last stderr line); a signal or a crash says so, never a traceback."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    if code == 3 and lines:
        return lines[-1][:300]
    if code < 0:
        return f"litert-torch was killed by signal {-code}"
    if lines and "MemoryError" in lines[-1]:
        return "litert-torch ran out of memory"
    return f"litert-torch exited with status {code}"
