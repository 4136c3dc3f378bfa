"""The diff's output formats, Model Explorer node data, the reproducing bundle, and the CLI's exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import jsonschema
import numpy as np
import onnx
import pytest

from clipbridge.cli.main import main
from clipbridge.diff import bundle, formats, report, run
from tests.diff import models as M
from tests.diff.conftest import npz

pytestmark = pytest.mark.engines
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture(scope="module")
def relu_diff():
    model = M.relu_chain()
    body, runs = report.diff(run.direct, model, None, run.Options(sample="edge"))  # NaN, +-inf: issue 44
    return model, body, runs


def test_sarif_is_valid_and_names_the_cause(relu_diff):
    _model, body, _runs = relu_diff
    log = json.loads(formats.render(body, "sarif", "relu.onnx"))
    jsonschema.validate(log, SCHEMA)
    [result] = log["runs"][0]["results"]
    assert result["ruleId"] == "diff/nan-input" and result["locations"][0]["logicalLocations"][0]["name"] == "relu_1"


@pytest.mark.parametrize("fmt, needle", [
    pytest.param("table", "relu_1 (Relu): 1/4 differ, introduced, cause nan-input", id="table"),
    pytest.param("markdown", "| relu_1 | Relu | 1/4 | introduced | nan-input |", id="markdown"),
    pytest.param("github", "::error file=relu.onnx,title=clipbridge diff relu_1::", id="github"),
    pytest.param("json", '"verdict": "explained"', id="json"),
])
def test_text_formats(relu_diff, fmt, needle):
    assert needle in formats.render(relu_diff[1], fmt, "relu.onnx")


def test_junit_parses_and_fails_the_introduced_node(relu_diff):
    root = ET.fromstring(formats.render(relu_diff[1], "junit", "relu.onnx").split("\n", 1)[1])
    failures = [c.get("name") for c in root.iter("testcase") if c.find("failure") is not None]
    assert failures == ["y", "relu_1"]


def test_node_data_loads_in_model_explorer(relu_diff, tmp_path):
    """The file is Model Explorer's node-data format: its node_data_builder rebuilds it exactly."""
    from model_explorer import config, node_data_builder as ndb
    model, body, _runs = relu_diff
    data = formats.node_data(body)
    graphs = {g: ndb.GraphNodeData(results={k: ndb.NodeDataResult(**v) for k, v in d["results"].items()},
                                   thresholds=[ndb.ThresholdItem(**t) for t in d["thresholds"]])
              for g, d in data.items()}
    rebuilt = json.loads(ndb.ModelNodeData(graphsData=graphs).to_json_string())
    assert {k: rebuilt["main_graph"][k] for k in data["main_graph"]} == data["main_graph"]
    names = {n.name for n in onnx.load_from_string(model).graph.node}
    assert set(data["main_graph"]["results"]) <= names and data["main_graph"]["results"]["relu_1"]["value"] == 1
    causes = formats.cause_layer(body)
    assert causes["main_graph"]["results"]["relu_1"]["value"] == "nan-input"
    path = tmp_path / "nd.json"
    path.write_text(json.dumps(data))
    assert config().add_node_data_from_path(str(path)).node_data_sources == [str(path)]


@pytest.mark.parametrize("precision", ["model", "deployed"])
def test_bundle_reproduces_on_the_installed_engines(tmp_path, mnv2, precision):
    body, runs = report.diff(run.direct, mnv2, None, run.Options(precision=precision, sample="edge"))
    with zipfile.ZipFile(__import__("io").BytesIO(bundle.build(body, runs, precision))) as z:
        z.extractall(tmp_path)
    cases = sorted((tmp_path / "cases").iterdir())
    assert len(cases) == sum(1 for n in body["nodes"] if n["origin"] == "introduced" and n["pattern"])
    assert (cases[0] / "test_data_set_0" / "input_0.pb").is_file() and (cases[0] / "model.onnx").is_file()
    out = subprocess.run([sys.executable, "run_bundle.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("reproduced") == 2 * len(cases) and "NOT" not in out.stdout


def test_bundle_detects_a_changed_engine(tmp_path, relu_diff):
    """run_bundle.py fails when an engine no longer gives its recorded output (the check can fail)."""
    _model, body, runs = relu_diff
    with zipfile.ZipFile(__import__("io").BytesIO(bundle.build(body, runs, "model"))) as z:
        z.extractall(tmp_path)
    [case] = (tmp_path / "cases").iterdir()
    swapped = (case / "outputs" / "onnxruntime" / "output_0.pb").read_bytes()
    (case / "outputs" / "openvino" / "output_0.pb").write_bytes(swapped)
    out = subprocess.run([sys.executable, "run_bundle.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "openvino: NOT reproduced" in out.stdout


@pytest.mark.parametrize("build, extra, code, verdict, edge", [
    pytest.param(M.plain_chain, [], 0, "equal", "equal", id="equal-0"),
    # Issue 44: the ordinary sample's outputs agree (exit 0); the NaN is the edge probe's, red with --fail-on edge.
    pytest.param(M.relu_chain, [], 0, "equal", "explained", id="edge-differs-0"),
    pytest.param(M.relu_chain, ["--fail-on", "edge"], 1, "equal", "explained", id="fail-on-edge-1"),
    pytest.param(lambda: b"not a model", [], 2, None, None, id="error-2"),
])
def test_cli_exit_codes(tmp_path, capsys, build, extra, code, verdict, edge):
    path = tmp_path / "m.onnx"
    path.write_bytes(build())
    assert main(["diff", str(path), "--format", "json", *extra]) == code
    if code < 2:
        body = json.loads(capsys.readouterr().out)
        assert (body["verdict"], body["edge"]["verdict"]) == (verdict, edge)


def test_cli_writes_node_data_and_bundle(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(M.hardsigmoid_chain())
    (tmp_path / "in.npz").write_bytes(npz(x=np.array([np.nan, 1.0, -1.0, 0.25], np.float32)))
    args = ["diff", str(path), "--inputs", str(tmp_path / "in.npz"),
            "--node-data", str(tmp_path / "nd.json"), "--bundle", str(tmp_path / "b.zip"),
            "-o", str(tmp_path / "out.md"), "--format", "markdown", "--engine", "onnxruntime,openvino"]
    assert main(args) == 1
    assert json.loads((tmp_path / "nd.json").read_text())["main_graph"]["results"] == {"hsig_1": {"value": 1}}
    assert json.loads((tmp_path / "nd.causes.json").read_text())["main_graph"]["results"]["hsig_1"]["value"] == \
        "nan-input"
    assert zipfile.ZipFile(tmp_path / "b.zip").namelist()[0] == "run_bundle.py"
    assert "hard-sigmoid" in (tmp_path / "out.md").read_text() or "hsig_1" in (tmp_path / "out.md").read_text()


@pytest.fixture(scope="module")
def relu_probed():
    """The default diff (issue 44): an ordinary sample (outputs agree) and the edge probe's pass beside it."""
    model = M.relu_chain()
    plain, _ = report.diff(run.direct, model, None, run.Options(probe="edge"))
    failing, _ = report.diff(run.direct, model, None, run.Options(probe="edge", fail_on=("edge",)))
    return plain, failing


@pytest.mark.parametrize("which, level, failed", [
    pytest.param(0, "note", [], id="edge-is-a-note"),
    pytest.param(1, "error", ["relu_1"], id="fail-on-edge-makes-it-an-error"),
])
def test_ci_formats_carry_the_edge_probe(relu_probed, which, level, failed):
    body = relu_probed[which]
    assert body["verdict"] == "equal" and body["edge"]["verdict"] == "explained", body["edge"]
    log = json.loads(formats.render(body, "sarif", "relu.onnx"))
    jsonschema.validate(log, SCHEMA)
    [result] = log["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("diff/nan-input", level)
    assert result["message"]["text"].startswith("edge: relu_1 (Relu)") and result["properties"]["part"] == "edge"
    root = ET.fromstring(formats.render(body, "junit", "relu.onnx").split("\n", 1)[1])
    edge = next(s for s in root.iter("testsuite") if s.get("name") == "edge")
    assert [c.get("name") for c in edge.iter("testcase") if c.find("failure") is not None] == failed
    assert "edge probe: explained" in formats.render(body, "markdown", "relu.onnx")
    assert ("::error" if failed else "::notice") in formats.render(body, "github", "relu.onnx")
