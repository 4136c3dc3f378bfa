"""`pip install` is quiet and ships everything the server serves: packages and package data are declared."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_builds_without_setuptools_warnings_and_carries_the_static_files(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "app", src / "app", ignore=shutil.ignore_patterns("__pycache__"))
    # Build isolation, as `pip install` does: pip fetches setuptools>=77 (pyproject's build-system) from the index.
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-v",
                        "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    log = r.stdout + r.stderr
    assert "absent from" not in log and "BuildBackendWarning" not in log, \
        [line for line in log.splitlines() if "warn" in line.lower()]
    wheel = next((tmp_path / "dist").glob("clipbridge-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"app/static/{p.name}" for p in (ROOT / "app" / "static").iterdir() if p.is_file()}
    assert shipped and shipped <= names, shipped - names
    assert "app/data/runtime_support.json" in names  # the runtime support table translations and /v1/dialects read

