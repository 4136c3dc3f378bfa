"""GET /v1/version and `clipbridge --version`: the package and each engine's installed version, checked against the
engines' own modules (an independent oracle: what each imported engine says its version is)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import clipbridge

# The engine name on the wire -> the module whose __version__ is the installed release (imported only here).
MODULES = [
    pytest.param("onnx-reference", "onnx", id="onnx"),
    pytest.param("onnxruntime", "onnxruntime", id="onnxruntime"),
    pytest.param("openvino", "openvino", id="openvino"),
    pytest.param("torch", "torch", id="torch"),
]


def _module_version(module: str) -> str:
    found = importlib.import_module(module)
    text = getattr(found, "__version__", None) or found.get_version()  # openvino: get_version() '2026.4.1-...'
    return str(text).split("+")[0].split("-")[0]


@pytest.mark.parametrize("engine, module", MODULES)
def test_each_engine_reports_the_version_its_module_says(client, engine, module):
    body = client.get("/v1/version").json()
    assert body["package"] == "clipbridge" and body["version"] == clipbridge.__version__
    assert body["engines"][engine] is not None
    assert body["engines"][engine].split("+")[0] == _module_version(module)


def test_an_engine_not_installed_is_null(client, monkeypatch):
    from clipbridge.engines import extras
    monkeypatch.setitem(extras.DISTRIBUTIONS, "imaginary", "clipbridge-no-such-distribution")
    assert client.get("/v1/version").json()["engines"]["imaginary"] is None


def test_the_cli_prints_the_same_facts(client):
    body = client.get("/v1/version").json()
    r = subprocess.run([sys.executable, "-m", "clipbridge", "--version"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"clipbridge {body['version']}"
    shown = dict(line.split(None, 1) for line in lines[1:])
    assert shown == {e: v or "not installed" for e, v in body["engines"].items()}


def test_an_unknown_query_parameter_is_refused(client):
    r = client.get("/v1/version?verbose=1")
    assert r.status_code == 400 and "query.verbose" in r.text
