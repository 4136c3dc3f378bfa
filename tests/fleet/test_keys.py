"""fleet's cache key follows the code that computes an answer, not only the version number, and fleet's cache lives
where $CLIPBRIDGE_CACHE says, as the rest of clipbridge's cache does."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clipbridge.cli import fleet as fleet_cli
from clipbridge.fleet import keys
from clipbridge.fleet.keys import cache_key, code_digest, digest_tree, parse_engine

ENGINES = [parse_engine("onnxruntime"), parse_engine("openvino")]


@pytest.fixture()
def package(tmp_path) -> Path:
    """A copy of the installed package's files, to edit."""
    dst = tmp_path / "clipbridge"
    shutil.copytree(keys.PACKAGE, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


EDITS = [
    pytest.param("diff/causes.py", True, id="a cause rule"),
    pytest.param("engines/threads.py", True, id="an engine setting"),
    pytest.param("fleet/job.py", True, id="fleet's own job"),
    pytest.param("data/new-table.json", True, id="a data file"),
    pytest.param("static/index.html", False, id="the browser page"),
    pytest.param("diff/__pycache__/causes.cpython-311.pyc", False, id="bytecode"),
]


@pytest.mark.parametrize(("rel", "changes"), EDITS)
def test_the_code_digest_follows_every_file_that_computes_an_answer(package, rel, changes):
    before = digest_tree(package)
    path = package / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write("\n# an edit\n")
    assert (digest_tree(package) != before) is changes


def test_a_code_change_without_a_version_bump_is_a_new_key(monkeypatch):
    before = cache_key("a" * 64, None, 1, ENGINES, "model")
    monkeypatch.setattr(keys, "code_digest", lambda: "0" * 64)  # the same __version__, other code
    assert cache_key("a" * 64, None, 1, ENGINES, "model") != before


def test_the_installed_package_is_what_is_digested():
    assert code_digest() == digest_tree(keys.PACKAGE) and (keys.PACKAGE / "fleet" / "keys.py").is_file()


HOMES = [
    pytest.param({"CLIPBRIDGE_CACHE": "/c", "XDG_CACHE_HOME": "/x"}, "/c/fleet", id="CLIPBRIDGE_CACHE first"),
    pytest.param({"XDG_CACHE_HOME": "/x"}, "/x/clipbridge/fleet", id="XDG_CACHE_HOME"),
    pytest.param({"HOME": "/h"}, "/h/.cache/clipbridge/fleet", id="the home directory"),
]


@pytest.mark.parametrize(("env", "expected"), HOMES)
def test_fleet_s_default_cache_honours_clipbridge_cache(monkeypatch, env, expected):
    for k in ("CLIPBRIDGE_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert fleet_cli.default_cache() == Path(expected)
