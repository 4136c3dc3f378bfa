"""`pip install` is quiet and ships everything the server serves: packages and package data are declared."""

from __future__ import annotations

import os
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
    shipped = {f"clipbridge/static/{p.name}" for p in (ROOT / "app" / "clipbridge" / "static").iterdir() if p.is_file()}
    assert shipped and shipped <= names, shipped - names
    assert "clipbridge/data/runtime_support.json" in names  # the runtime support table translations and /v1/dialects read
    # The one import package is clipbridge: nothing named `app` (a name a user's FastAPI project owns) is installed.
    assert not [n for n in names if n.split("/")[0] in ("app", "app.py")], sorted(names)[:5]
    top_level = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
    assert zipfile.ZipFile(wheel).read(top_level).decode().split() == ["clipbridge"]



def test_a_users_own_app_package_does_not_shadow_clipbridge(tmp_path):
    """A FastAPI project has its own `app/`: there clipbridge's client still imports, and `app` stays the user's."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "__init__.py").write_text("MINE = True\n")
    (tmp_path / "app" / "client.py").write_text("raise ImportError('the user app.client was imported')\n")
    code = ("import app, clipbridge, clipbridge.client, clipbridge.main\n"
            "assert app.MINE and clipbridge.client.Client\n"
            "print(clipbridge.__name__, clipbridge.client.__name__)")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["clipbridge", "clipbridge.client"]
