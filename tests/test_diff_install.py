"""Diff installs in one step (issue 37): the `[diff]` extra holds exactly the diff's engines, the README names it
beside `clipbridge diff`, and every path that needs a missing engine (CLI diff and --fix, /v1/models/diff and
/fix, /v1/execute, the engine runner itself) answers with the install command, never blaming the model."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from clipbridge.cli.main import main
from clipbridge.diff import engines
from clipbridge.engines.extras import DIFF_INSTALL

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RELU6 = (ROOT / "docs" / "relu6.onnx").read_bytes()
ONE_STEP = 'pip install "clipbridge[diff]"'


def _block(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    for name in modules:  # `import name` raises ImportError and find_spec answers None, as when not installed
        monkeypatch.setitem(sys.modules, name, None)


def test_the_diff_extra_is_the_diff_engines_pinned_as_in_dev():
    diff = {r.name: str(r.specifier) for r in map(Requirement, PROJECT["optional-dependencies"]["diff"])}
    dev = {r.name: str(r.specifier) for r in map(Requirement, PROJECT["optional-dependencies"]["dev"])}
    assert set(diff) == {"onnxruntime", "openvino"}
    assert all(diff[n] == dev[n] for n in diff), (diff, dev)
    assert DIFF_INSTALL == ONE_STEP


def test_the_readme_names_the_diff_extra_beside_the_diff_command():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Whole-model diff and fix"):text.index("## Inspector")]
    assert ONE_STEP in section or 'pip install -e ".[diff]"' in section
    assert section.index("[diff]") < section.index("$ clipbridge diff docs/relu6.onnx")


@pytest.mark.parametrize("missing", [pytest.param(["openvino"], id="openvino"),
                                     pytest.param(["onnxruntime"], id="onnxruntime"),
                                     pytest.param(["onnxruntime", "openvino"], id="both")])
@pytest.mark.parametrize("extra", [pytest.param([], id="diff"), pytest.param(["fix", "-o", "OUT.onnx"], id="fix")])
def test_cli_diff_without_an_engine_names_the_install_command(monkeypatch, capsys, tmp_path, missing, extra):
    _block(monkeypatch, *missing)
    command, *extra = extra or ["diff"]
    extra = [str(tmp_path / e) if e.endswith(".onnx") else e for e in extra]
    assert main([command, str(ROOT / "docs" / "relu6.onnx"), *extra]) == 2
    err = capsys.readouterr().err
    assert ONE_STEP in err and all(m in err for m in missing), err
    assert "(model)" not in err and "cannot load the model" not in err


@pytest.mark.parametrize("path,params,loc", [
    pytest.param("/v1/models/diff", {}, "query.engine", id="diff"),
    pytest.param("/v1/models/fix", {"reference": "onnxruntime", "target": "openvino"}, "query.target", id="fix"),
])
def test_api_without_an_engine_answers_the_install_command(client, monkeypatch, path, params, loc):
    _block(monkeypatch, "openvino")
    r = client.post(path, params=params, files={"model": ("relu6.onnx", RELU6)})
    assert 400 <= r.status_code < 500, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body = r.json()
    assert ONE_STEP in body["detail"] and "openvino" in body["detail"]
    assert [e["loc"] for e in body.get("errors", [])] in ([], [loc]) or body["errors"][0]["loc"] == loc
    assert "model" not in [e.get("loc") for e in body.get("errors", [])]


@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_execute_without_a_diff_engine_also_names_the_diff_extra(client, monkeypatch, backend):
    _block(monkeypatch, backend)
    r = client.post("/v1/execute", json={
        "spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6},
        "input": {"dtype": "float32", "shape": [2], "data": [-1, 7]}, "target": "onnx" if backend ==
        "onnxruntime" else "openvino", "backend": backend})
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["loc"] == "backend" and ONE_STEP in r.json()["detail"]


def test_the_engine_runner_refuses_a_missing_engine_with_the_install_command(monkeypatch):
    """What a sandbox child raises, relayed to the parent with its type and loc."""
    _block(monkeypatch, "openvino")
    with pytest.raises(engines.EngineNotInstalled) as e:
        engines.run("openvino", RELU6, {}, [])
    assert e.value.loc == "engine" and ONE_STEP in e.value.message


def test_an_engine_found_but_not_importable_is_the_install_not_the_model(monkeypatch):
    monkeypatch.setattr(engines, "installed", lambda engine: True)  # find_spec saw it; the import then fails
    _block(monkeypatch, "onnxruntime")
    with pytest.raises(engines.EngineNotInstalled) as e:
        engines.run("onnxruntime", RELU6, {}, [])
    assert e.value.loc == "engine" and ONE_STEP in e.value.message


BLOCKED_CHILD = r'''
import sys
sys.modules["openvino"] = None  # as on the core install
from clipbridge.diff import engines
print(engines.installed("onnxruntime"), engines.installed("openvino"), engines.installed("onnx-reference"))
'''


def test_availability_in_a_fresh_interpreter_with_openvino_blocked():
    r = subprocess.run([sys.executable, "-c", BLOCKED_CHILD], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["True", "False", "True"]
