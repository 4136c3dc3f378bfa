"""Adding an engine is one module and one registry line: tests/fake_engine (a Runtime that computes with
onnx.reference) is added by the one line a plugin needs, CLIPBRIDGE_ENGINES=tests.fake_engine, in child processes
(the registry is read when the API and CLI are built, and the server's sandbox workers inherit the environment),
and then reaches GET /v1/version, `clipbridge --version`, the diff's allowed values (OpenAPI, the report's schema)
and `clipbridge diff` / POST /v1/models/diff beside onnxruntime. No line of app/ names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.scan.models import clip_model, write

ROOT = Path(__file__).resolve().parent.parent
LINE = {"CLIPBRIDGE_ENGINES": "tests.fake_engine"}  # the one registry line


def child(*args: str, env: dict[str, str] = LINE) -> subprocess.CompletedProcess:
    paths = [str(ROOT / "app"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    full = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths)), **env}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=full, timeout=300)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    m = clip_model(13, onnx.TensorProto.FLOAT, 0.0, 6.0, np.float32)
    return write(tmp_path_factory.mktemp("fake") / "clip.onnx", m)


@pytest.fixture(scope="module")
def served(model) -> list:
    p = child("-m", "tests.fake_engine.service", str(model))
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def test_v1_version_lists_it_last(served):
    status, body = served[0]
    assert status == 200
    assert list(body["engines"])[-1] == "fake" and body["engines"]["fake"] == metadata.version("onnx")


def test_the_api_allows_it_as_a_diff_engine(served):
    assert {"fake", "fake@f16"} <= set(served[2]["enum"])


def test_post_diff_runs_it_beside_onnxruntime(served):
    status, body = served[1]
    assert status == 200, body
    engines = {e["name"]: e for e in body["engines"]}
    assert set(engines) == {"fake", "onnxruntime"}
    assert engines["fake"]["settings"] == {"evaluator": "fake (onnx.reference)"}
    assert body["verdict"] == "equal", body["verdict"]


def test_clipbridge_version_prints_it():
    p = child("-m", "clipbridge", "--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1].split() == ["fake", metadata.version("onnx")]


def test_clipbridge_diff_runs_it(model):
    p = child("-m", "clipbridge", "diff", str(model), "--engine", "fake,onnxruntime", "--probe", "off",
              "--format", "json")
    assert p.returncode == 0, p.stderr[-3000:]
    body = json.loads(p.stdout)
    assert [e["name"] for e in body["engines"]] == ["fake", "onnxruntime"] and body["verdict"] == "equal"


def test_without_the_line_it_is_unknown(model):
    p = child("-m", "clipbridge", "diff", str(model), "--engine", "fake,onnxruntime", env={})
    assert p.returncode == 2 and "unknown engine 'fake'" in p.stderr and "--engine" in p.stderr, p.stderr[-2000:]
