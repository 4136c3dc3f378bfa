"""A small generated registry (two models of each kind) and one baseline fleet run over it, shared by the tests."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from clipbridge.fleet import runner
from clipbridge.fleet.backends import Limits
from clipbridge.fleet.keys import parse_engine
from clipbridge.fleet.progress import Progress
from tests.fleet.registry import write

COUNT = 10


@pytest.fixture(scope="session", autouse=True)
def ray_temp_dir():
    """Ray's session folders in a folder removed after the tests: each local Ray start left about 3 GB (its logs
    and runtime environments) in /tmp/ray, and three runs filled this machine's disk. The folder's name is short:
    Ray's socket paths under it must stay below 107 bytes."""
    folder = tempfile.mkdtemp(prefix="cbray", dir="/tmp")
    before = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = folder
    yield folder
    try:
        import ray
        if ray.is_initialized():
            ray.shutdown()
    except ImportError:
        pass
    if before is None:
        os.environ.pop("RAY_TMPDIR", None)
    else:
        os.environ["RAY_TMPDIR"] = before
    shutil.rmtree(folder, ignore_errors=True)


def config(sources: list[str], out: Path, cache: Path, **kw) -> runner.Config:
    engines = [parse_engine(e) for e in kw.pop("engines", ("onnxruntime", "openvino"))]
    limits = Limits(workers=kw.pop("workers", 2), recycle=kw.pop("recycle", 50))
    return runner.Config(sources, out, engines, cache, limits=limits, **kw)


def quiet(total: int = 0) -> Progress:
    return Progress(total, stream=open("/dev/null", "w"), tty=False)


def answers(records: list[dict]) -> list[dict]:
    """Records without what may differ between equal runs (timing, and whether the cache answered)."""
    return [{k: v for k, v in r.items() if k not in ("seconds", "cached")} for r in records]


@pytest.fixture(scope="session")
def registry(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("registry")
    write(root, COUNT)
    return root


@pytest.fixture(scope="session")
def baseline(registry, tmp_path_factory) -> tuple[Path, Path, int]:
    """(out, cache, exit code) of one local run over the registry."""
    base = tmp_path_factory.mktemp("baseline")
    out, cache = base / "out", base / "cache"
    code = runner.run(config([str(registry)], out, cache), quiet())
    return out, cache, code


@pytest.fixture()
def cache_copy(baseline, tmp_path) -> Path:
    dst = tmp_path / "cache"
    shutil.copytree(baseline[1], dst)
    return dst
