"""The hostile-input corpus's harness: an app client, and an audit of every file the process opens.

`sys.addaudithook` cannot be removed, so the hook is installed once per process and does nothing unless a test
has switched recording on (`opened_files`). It records the `open` events of every thread (execution slots,
the test client's portal), which is what "no file opened outside the request" needs.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import clipbridge as app_package

_RECORDING: list[list[str]] = []  # the active recorder (at most one), shared with the hook
_LOCK = threading.Lock()


def _hook(event: str, args: tuple) -> None:
    if event != "open" or not _RECORDING:
        return
    path = args[0] if args else None
    if isinstance(path, (str, bytes, os.PathLike)):
        with _LOCK:
            if _RECORDING:
                _RECORDING[0].append(os.fsdecode(path))


if not getattr(sys, "_clipbridge_audit_installed", False):
    sys.addaudithook(_hook)
    sys._clipbridge_audit_installed = True  # type: ignore[attr-defined]


def _roots() -> tuple[str, ...]:
    """Where a request may open files: the interpreter and installed packages (lazy imports), the package
    itself, and the temporary directory (spooled uploads)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, tempfile.gettempdir(),
             str(Path(app_package.__file__).resolve().parent)}
    roots.update(p for p in sysconfig.get_paths().values() if p)
    return tuple(os.path.realpath(r) + os.sep for r in roots)


ALLOWED = _roots()


def outside(paths: list[str]) -> list[str]:
    """The opened paths that fall outside every allowed root (relative paths count as outside)."""
    bad = []
    for p in paths:
        real = os.path.realpath(p) if os.path.isabs(p) else p
        if real in ("/dev/null", "/dev/urandom"):
            continue
        if not (os.path.isabs(real) and (real + os.sep).startswith(ALLOWED)):
            bad.append(p)
    return bad


@pytest.fixture
def opened_files() -> Iterator[list[str]]:
    """Record every path opened while the test runs (all threads)."""
    seen: list[str] = []
    with _LOCK:
        _RECORDING[:] = [seen]
    try:
        yield seen
    finally:
        with _LOCK:
            _RECORDING.clear()


@pytest.fixture(scope="package")
def hostile_client():
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        yield c


# The canary: a file in the server's working directory that no upload may ever make anything read
# (test_external_data.py, test_external_uploads.py).
CANARY = b"CANARY34" + bytes(range(100, 130))  # 38 bytes, as in the audit


@pytest.fixture(scope="module")
def canary_dir(tmp_path_factory):
    """The server's working directory: the canary, a symlink to it, a folder."""
    d = tmp_path_factory.mktemp("served")
    (d / "canary.bin").write_bytes(CANARY)
    (d / "link.bin").symlink_to(d / "canary.bin")
    (d / "sub").mkdir()
    return d


@pytest.fixture
def in_canary_dir(canary_dir, monkeypatch):
    monkeypatch.chdir(canary_dir)  # the server's working directory, where a relative location would resolve
    return canary_dir
