"""The lean install (issue 27): the core holds no engine, each engine backend is its own extra, a backend whose
extra is missing answers 422 naming it, /v1/dialects says which are installed, and every requirement resolves from the public registry alone (issue 37:
no local version label; torch is exactly 2.13.0, PyTorch's CPU index an option)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from clipbridge.engines import extras as engines
from clipbridge.dialects import registry

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS = PROJECT["optional-dependencies"]
ENGINE_PACKAGES = {"onnxruntime", "openvino", "jax", "jaxlib", "tosa-tools", "ai-edge-litert", "coremltools", "torch",
                   "numba", "cupy-cuda12x", "onnxscript"}
LINUX_X86 = {"sys_platform": "linux", "platform_machine": "x86_64"}
MAC_ARM = {"sys_platform": "darwin", "platform_machine": "arm64"}


def _requirements(items: list[str]) -> list[Requirement]:
    return [Requirement(r) for r in items]


def _active(reqs: list[Requirement], env: dict[str, str]) -> list[Requirement]:
    return [r for r in reqs if r.marker is None or r.marker.evaluate({**env, "extra": ""})]


def test_the_core_installs_no_engine():
    names = {r.name for r in _requirements(PROJECT["dependencies"])}
    assert not names & ENGINE_PACKAGES, names & ENGINE_PACKAGES


def test_every_engine_backend_has_its_own_extra_and_engines_is_all_of_them():
    assert set(engines.ENGINES) == set(registry.engine_names()), "a registered engine without an extra, or back"
    extras = {extra for extra, _ in engines.ENGINES.values()}
    assert extras <= set(EXTRAS), extras - set(EXTRAS)
    (everything,) = _requirements(EXTRAS["engines"])
    assert everything.name == PROJECT["name"] and everything.extras == extras | {"coreml"}


def _every_requirement() -> list[pytest.param]:
    groups = {"dependencies": PROJECT["dependencies"], **EXTRAS}
    return [pytest.param(r, id=f"{group}:{Requirement(r).name}") for group, items in groups.items() for r in items]


@pytest.mark.parametrize("requirement", _every_requirement())
def test_no_requirement_carries_a_local_version_label(requirement):
    """A `+local` label (`+cpu`) exists only on the index that built it: PyPI alone could not resolve it."""
    req = Requirement(requirement)
    assert all("+" not in s.version for s in req.specifier), str(req)


@pytest.mark.parametrize("extra", ["torch", "dev"])
@pytest.mark.parametrize("env", [pytest.param(LINUX_X86, id="linux-x86_64"), pytest.param(MAC_ARM, id="macos-arm64")])
def test_torch_is_exactly_2_13_0_everywhere(extra, env):
    pins = [str(r.specifier) for r in _active(_requirements(EXTRAS[extra]), env) if r.name == "torch"]
    assert pins == ["==2.13.0"]


@pytest.mark.parametrize("extra", sorted({e for e, _ in engines.ENGINES.values()} | {"engines", "gpu", "coreml",
                                                                                     "diff"}))
def test_install_hint_names_the_extra_and_needs_no_other_index(extra):
    hint = engines.INSTALL_HINT[extra]
    assert hint == f'pip install -e ".[{extra}]"' and extra in EXTRAS
    assert engines.TORCH_INDEX not in hint  # the CPU index is an option (docs/install.md), never required


def test_the_torch_hint_offers_the_cpu_index_as_an_option(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    message = engines.missing("torch").message
    assert message.index(engines.INSTALL_HINT["torch"]) < message.index(engines.TORCH_INDEX)
    assert "several GB smaller" in message


# backend -> (the dialect it runs, the modules that make it importable)
MISSING = {
    "onnxruntime": ("onnx", ["onnxruntime"]),
    "openvino": ("openvino", ["openvino"]),
    "jax": ("stablehlo", ["jax"]),
    "tosa-reference": ("tosa", ["tosa_serializer"]),
    "litert": ("tflite", ["ai_edge_litert", "ai_edge_litert.interpreter"]),
    "torch": ("pytorch", ["torch"]),
}


@pytest.mark.parametrize("backend", list(MISSING), ids=list(MISSING))
def test_a_backend_whose_extra_is_missing_answers_422_naming_it(client, monkeypatch, backend):
    dialect, modules = MISSING[backend]
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)  # `import name` raises ImportError, as when not installed
    r = client.post("/v1/execute", json={
        "spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6},
        "input": {"dtype": "float32", "shape": [2], "data": [-1, 7]}, "target": dialect, "backend": backend})
    assert r.status_code == 422, r.text
    body = r.json()
    extra = engines.ENGINES[backend][0]
    assert body["errors"][0]["loc"] == "backend"
    assert engines.INSTALL_HINT[extra] in body["detail"], body["detail"]


def test_dialects_lists_which_engines_are_installed(client, monkeypatch):
    rows = client.get("/v1/dialects").json()["engines"]
    assert [e["backend"] for e in rows] == list(engines.ENGINES)
    assert all(e["install"] == engines.INSTALL_HINT[e["extra"]] for e in rows)
    for row in rows:  # this environment is the test command's: every engine is installed
        assert row["installed"] is True, row
    monkeypatch.setattr(engines, "find_spec", lambda name: None if name == "torch" else object())
    rows = {e["backend"]: e["installed"] for e in client.get("/v1/dialects").json()["engines"]}
    assert rows["torch"] is False and rows["onnxruntime"] is True


# Run in a fresh interpreter where every engine (and numba) fails to import, as in the core install.
WITHOUT_ENGINES = r'''
import importlib.abc, json, sys
BLOCKED = {"onnxruntime", "openvino", "torch", "jax", "jaxlib", "tosa_serializer", "tosa_reference_model",
           "ai_edge_litert", "coremltools", "numba", "llvmlite", "cupy", "onnxscript"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: the core install)")
        return None
sys.meta_path.insert(0, Block())
from fastapi.testclient import TestClient
from clipbridge.main import app
c = TestClient(app)
caps = c.get("/v1/dialects").json()
names = [d["dialect"] for d in caps["dialects"]]
out = {"installed": [e["backend"] for e in caps["engines"] if e["installed"]], "answers": [], "loaded": []}
for d in caps["dialects"]:
    for name, spec in d["examples"].items():
        r = c.post("/v1/translate", json={"spec": spec, "targets": [n for n in names if n != d["dialect"]]})
        out["answers"].append([d["dialect"], name, "translate", r.status_code, r.json().get("detail", "")[:200]])
        m = (r.json().get("meaning") or {}) if r.status_code == 200 else {}
        if r.status_code == 200 and m.get("dtype") in ("float32", "int8", "int32") and "shape" not in spec:
            x = {"dtype": m["dtype"], "shape": [3], "data": [-1, 0, 7]}
            r = c.post("/v1/compare", json={"spec": spec, "input": x, "targets": names[:8]})
            out["answers"].append([d["dialect"], name, "compare", r.status_code, r.json().get("detail", "")[:200]])
out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps(out))
'''


def test_the_core_serves_every_dialect_with_no_engine_importable():
    """Every registered example translates into every other dialect and compares on NumPy, in an interpreter
    where no engine can be imported: what the README's start command installs is enough to serve them."""
    import json
    import subprocess
    r = subprocess.run([sys.executable, "-c", WITHOUT_ENGINES], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["installed"] == [] and out["loaded"] == []
    answers = out["answers"]
    assert sum(a[2] == "translate" for a in answers) >= 20 and sum(a[2] == "compare" for a in answers) >= 5
    # An example may be refused by its own framework (a 422 saying so); nothing else may fail.
    bad = [a for a in answers if a[3] != 200 and not (a[3] == 422 and "refuses to build" in a[4])]
    assert not bad, bad
