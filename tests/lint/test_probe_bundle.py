"""Probes (/v1/probe, `clipbridge probe`) and repro bundles (/v1/bundle, `clipbridge bundle`): the inputs that
matter, each dialect's expected output (cross-checked against the meaning's own evaluate), and run_bundle.py
reproducing the expectations on onnxruntime and openvino here, in a subprocess."""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter

from clipbridge.api.lint_models import ProbeResponse
from clipbridge.cli.main import main
from clipbridge.dialects.kit.common import Mode
from clipbridge.service.execute import semantics_for
from clipbridge.lint.probe import probe
from clipbridge.core.evaluate import evaluate
from clipbridge.core.meaning import same_outputs
from clipbridge.service.specs import Spec
from clipbridge.service.translate import resolve_spec

F32 = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}
I16 = {"dialect": "onnx", "opset": 13, "elem_type": "INT16", "min": -3, "max": 5}
I32 = {"dialect": "onnx", "opset": 13, "elem_type": "INT32", "min": -3, "max": 5}
I64 = {"dialect": "openvino", "element_type": "i64", "min": -3, "max": 9007199254740993}
CROSSED = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 5, "max": 2}
SB = {"dialect": "directml", "feature_level": "2_1",
      "desc": {"InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
               "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
               "ScaleBias": {"Scale": 0.5, "Bias": 1.0}, "Min": 0, "Max": 6}}


def spec(d):
    return TypeAdapter(Spec).validate_python(d)


def whys(p) -> set[str]:
    return {w for ws in p.why for w in ws}


@pytest.mark.parametrize("source,expected", [
    pytest.param(F32, {"+0", "-0", "+inf", "-inf", "NaN", "smallest subnormal", "-smallest subnormal",
                       "smallest normal", "type lowest", "type max", "float16 max", "float16 overflow threshold",
                       "min of onnx", "min of onnx + 1 ulp", "max of onnx - 1 ulp", "max of directml + 1 ulp"},
                 id="float32"),
    pytest.param(I64, {"beyond 2^53 (a double bound cannot hold it)", "beyond -2^53", "2^53",
                       "beyond 2^24 (a FLOAT bound cannot hold it)", "type lowest", "type max", "0",
                       "max of openvino", "max of onnx + 1 unit"}, id="int64-beyond-2^53"),
    pytest.param(SB, {"ScaleBias pre-image of max of directml", "ScaleBias pre-image of min of directml"},
                 id="scale-bias-pre-images"),
])
def test_probe_inputs_cover_what_matters(source, expected):
    p = probe(spec(source))
    assert expected <= whys(p), expected - whys(p)
    if p.dtype.is_float:
        vals = [float(v) for v in p.inputs]
        assert sum(math.isnan(v) for v in vals) == 1
        assert 65520.0 in vals and 65504.0 in vals
    else:
        assert len({int(v) for v in p.inputs}) == len(p.inputs)


@pytest.mark.parametrize("source", [F32, I16, I64, CROSSED, SB], ids=["f32", "i16", "i64", "crossed", "sb"])
def test_expected_outputs_are_each_meanings_evaluate(source):
    """Each output is what the dialect's meaning computes (clipbridge.core.evaluate.evaluate), not a second implementation."""
    p = probe(spec(source))
    src = resolve_spec(spec(source))
    for s in p.semantics:
        if s.outputs is None:
            assert s.error
            continue
        m = semantics_for(src, s.label, Mode.LITERAL).meaning
        assert same_outputs(evaluate(m, p.inputs), s.outputs).all(), s.label
    for i in p.differing():
        outs = [s.outputs[i] for s in p.semantics if s.outputs is not None]
        assert not all(same_outputs(np.array([outs[0]]), np.array([o]))[0] for o in outs[1:])


def test_crossed_bounds_differ_and_openvino_refuses():
    p = probe(spec(CROSSED), ["onnx", "openvino", "directml:5_0"])
    by = {s.label: s for s in p.semantics}
    assert by["openvino"].error and "refuses" in by["openvino"].error and by["openvino"].outputs is None
    assert set(by["onnx"].outputs.tolist()) == {2} and set(by["directml:5_0"].outputs.tolist()) == {5}
    assert p.differing() == list(range(len(p.inputs)))


def test_probe_api(client):
    r = client.post("/v1/probe", json={"spec": F32, "targets": ["onnx", {"dialect": "directml",
                                                                           "feature_level": "5_0"}]})
    assert r.status_code == 200, r.text
    body = ProbeResponse.model_validate(r.json())
    assert [s.label for s in body.semantics] == ["onnx", "directml:5_0"]
    assert body.inputs[-1].value == "nan" and body.semantics[0].outputs[-1] == "nan"
    assert body.differing == []


def test_probe_npz(client):
    r = client.post("/v1/probe.npz", json={"spec": CROSSED, "targets": [
        "onnx", {"dialect": "directml", "feature_level": "5_0"}]})
    assert r.status_code == 200, r.text
    arrays = np.load(io.BytesIO(r.content), allow_pickle=False)
    assert sorted(arrays.files) == ["expected_directml_5_0", "expected_onnx", "inputs"]
    assert arrays["inputs"].dtype == np.int8 and set(arrays["expected_onnx"].tolist()) == {2}
    assert len(arrays["inputs"]) == len(client.post("/v1/probe", json={"spec": CROSSED}).json()["inputs"])


@pytest.mark.parametrize("payload,status,loc", [
    pytest.param({"spec": {**F32, "min": "zero"}}, 422, "spec.min", id="bad-bound"),
    pytest.param({"spec": {**I16, "min": 40000}}, 422, "spec.min", id="bound-outside-dtype"),
    pytest.param({"spec": F32, "targets": []}, 422, "targets", id="empty-targets"),
    pytest.param({"spec": F32, "mode": "exact"}, 422, "mode", id="bad-mode"),
])
def test_probe_api_errors(client, payload, status, loc):
    r = client.post("/v1/probe", json=payload)
    assert r.status_code == status and r.headers["content-type"] == "application/problem+json"
    assert r.json()["errors"][0]["loc"].startswith(loc), r.json()


def test_probe_cli_npy(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(CROSSED)))
    # literal named: the same numbers under each dialect's rules (the CLI's default mode is preserve, issue 37)
    rc = main(["probe", "--output", str(tmp_path), "--target", "onnx", "--target", "directml:5_0",
               "--mode", "literal"])
    assert rc == 1  # the dialects disagree on some input
    x = np.load(tmp_path / "inputs.npy")
    assert x.dtype == np.int8 and -128 in x and 127 in x
    assert set(np.load(tmp_path / "expected_directml_5_0.npy").tolist()) == {5}
    assert json.loads((tmp_path / "probes.json").read_text())["dtype"] == "int8"


# --- bundles --------------------------------------------------------------------------------------------------

def unpack(client, payload, dest: Path) -> Path:
    r = client.post("/v1/bundle", json=payload)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/zip"
    zipfile.ZipFile(io.BytesIO(r.content)).extractall(dest)
    return dest


def run_bundle(path: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "run_bundle.py"], cwd=path, capture_output=True, text=True, timeout=120,
                          env=env)


def test_bundle_contents(client, tmp_path):
    d = unpack(client, {"spec": F32}, tmp_path)
    names = {str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()}
    assert names == {"spec.json", "manifest.json", "inputs.npy", "run_bundle.py", "README.md", "onnx.onnx",
                     "openvino.xml", "directml.dxdispatch.json", "expected/onnx.npy", "expected/openvino.npy",
                     "expected/directml.npy"}
    import onnx
    onnx.checker.check_model(onnx.load(d / "onnx.onnx"), full_check=True)
    dx = json.loads((d / "directml.dxdispatch.json").read_text())
    assert dx["dispatchables"]["clip"]["type"] == "DML_OPERATOR_ELEMENT_WISE_CLIP"
    n = len(np.load(d / "inputs.npy"))
    assert dx["dispatchables"]["clip"]["desc"]["InputTensor"] == {"DataType": "FLOAT32", "Sizes": [1, 1, 1, n]}
    values = dx["resources"]["input"]["initialValues"]
    assert len(values) == n and {"nan", "inf", "-inf"} <= set(v for v in values if isinstance(v, str))
    assert dx["commands"][-1] == {"type": "print", "resource": "output"}
    assert json.loads((d / "spec.json").read_text())["elem_type"] == "FLOAT"


@pytest.mark.engines
def test_runner_reproduces_expectations_on_both_engines(client, tmp_path):
    d = unpack(client, {"spec": I32}, tmp_path)
    r = run_bundle(d)
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(np.load(d / "inputs.npy"))
    assert f": {n}/{n} match" in r.stdout.splitlines()[0] and r.stdout.startswith("onnx (onnxruntime ")
    assert any(ln.startswith("openvino (openvino ") and ln.endswith(f"{n}/{n} match") for ln in r.stdout.splitlines())
    assert "directml: skipped (no engine here" in r.stdout


@pytest.mark.engines
def test_runner_reports_an_engine_deviation(client, tmp_path):
    """The OpenVINO CPU plugin clamps NaN to min (a pinned engine note): the runner shows it and exits 1."""
    d = unpack(client, {"spec": F32, "targets": ["onnx", "openvino"]}, tmp_path)
    r = run_bundle(d)
    assert r.returncode == 1, r.stdout
    n = len(np.load(d / "inputs.npy"))
    assert f"onnx (onnxruntime" in r.stdout and f"{n}/{n} match" in r.stdout
    assert f"{n - 1}/{n} match" in r.stdout and "(NaN): expected np.float32(nan), got np.float32(0.0)" in r.stdout
    assert "known: openvino CPU plugin: A NaN input is clamped to min" in r.stdout


@pytest.mark.engines
def test_runner_compares_a_device_output(client, tmp_path):
    d = unpack(client, {"spec": I32, "targets": ["directml"]}, tmp_path)
    assert run_bundle(d).returncode == 2  # nothing could run yet
    expected = np.load(d / "expected" / "directml.npy")

    def printed(values) -> str:  # what `dxdispatch directml.dxdispatch.json > directml.dxdispatch.txt` leaves
        return "Running on 'Some GPU'\nResource 'output': " + ", ".join(str(v) for v in values) + "\n"
    (d / "directml.dxdispatch.txt").write_text(printed(expected.tolist()))
    r = run_bundle(d)
    assert r.returncode == 0 and "directml (device output directml.dxdispatch.txt)" in r.stdout, r.stdout
    (d / "directml.dxdispatch.txt").write_text(printed([v + 1 for v in expected.tolist()]))
    assert run_bundle(d).returncode == 1
    (d / "directml.dxdispatch.txt").write_text("ERROR: failed to execute the model.\n")
    r = run_bundle(d)
    assert r.returncode == 1 and "no \"Resource 'output':\" line" in r.stdout


def test_runner_reads_printed_floats(client, tmp_path):
    d = unpack(client, {"spec": F32, "targets": ["directml"]}, tmp_path)
    expected = np.load(d / "expected" / "directml.npy")
    spelled = {"nan": "-nan(ind)", "inf": "inf", "-inf": "-inf"}
    text = ", ".join(spelled.get(repr(float(v)), repr(float(v))) for v in expected)
    (d / "directml.dxdispatch.txt").write_text(f"Resource 'output': {text}\n")
    r = run_bundle(d)
    assert r.returncode == 0, r.stdout


def test_runner_without_engines_exits_2(client, tmp_path):
    d = unpack(client, {"spec": I32, "targets": ["onnx", "openvino"]}, tmp_path / "b")
    block = tmp_path / "block"
    block.mkdir()
    for mod in ("onnxruntime", "openvino"):
        (block / f"{mod}.py").write_text("raise ImportError('blocked for the test')\n")
    import os
    r = run_bundle(d, env={**os.environ, "PYTHONPATH": str(block)})
    assert r.returncode == 2 and "onnxruntime is not installed" in r.stdout and "no engine could run" in r.stdout


def test_bundle_cli(tmp_path, capsys):
    src = tmp_path / "spec.json"
    src.write_text(json.dumps({"source": I16}))
    out = tmp_path / "b.zip"
    assert main(["bundle", str(src), "-o", str(out), "--target", "onnx:12"]) == 0
    with zipfile.ZipFile(out) as z:
        manifest = json.loads(z.read("manifest.json"))
    assert [s["label"] for s in manifest["semantics"]] == ["onnx:12"] and manifest["dtype"] == "int16"


@pytest.mark.engines
def test_runner_fails_when_an_engine_cannot_run_the_model(client, tmp_path):
    """onnxruntime 1.32 has no int16 kernel for the Where the Clip-13 model needs: not a silent skip."""
    d = unpack(client, {"spec": I16, "targets": ["onnx"]}, tmp_path)
    r = run_bundle(d)
    assert r.returncode == 1 and "onnx: onnxruntime failed: " in r.stdout


def test_probe_refuses_per_element_bounds_with_the_way_to_check_them(client):
    spec = {"dialect": "stablehlo", "element_type": "i32", "shape": [3], "min": [5, 10, 15], "max": [10, 15, 20]}
    r = client.post("/v1/probe", json={"spec": spec})
    assert r.status_code == 400, r.text  # a valid spec the probe cannot take: 400, not a validation 422
    err = r.json()["errors"][0]
    assert err["loc"] == "spec" and "per-element" in err["msg"] and "/v1/compare" in err["msg"], err
