"""The chain end to end on the test models (tests/chain/models.py): converters and engines as installed.

Counts are checked against the converters and engines called directly here (torch eager, torch.onnx.export +
onnxruntime, openvino.convert_model + OpenVINO pinned to f32), never against clipbridge itself."""

from __future__ import annotations

import io
import os
import tempfile

import numpy as np
import onnxruntime as ort
import openvino as ov
import pytest
import torch

from clipbridge.chain import child_torch, report
from clipbridge.chain.models import ChainResponse
from clipbridge.diff import compare
from clipbridge.diff.run import direct
from tests.chain import models
from tests.chain.conftest import HOSTILE, npz

pytestmark = pytest.mark.slow


def hop(body: dict, to: str) -> dict:
    return next(h for h in body["hops"] if h["to"] == to)


def node(cmp: dict, name: str) -> dict:
    return next(n for n in cmp["nodes"] if n["node"] == name)


@pytest.fixture(scope="module")
def direct_runs(clamps_pt2: bytes) -> dict[str, list[np.ndarray]]:
    """torch eager, onnxruntime and OpenVINO (f32) outputs on HOSTILE, each converter and engine called here."""
    ep = torch.export.load(io.BytesIO(clamps_pt2))
    with torch.no_grad():
        eager = [t.numpy() for t in ep.module()(torch.from_numpy(HOSTILE))]
    proto = torch.onnx.export(ep, dynamo=True).model_proto.SerializeToString()
    sess = ort.InferenceSession(proto, providers=["CPUExecutionProvider"])
    onnx_out = sess.run(None, {sess.get_inputs()[0].name: HOSTILE})
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        with open(path, "wb") as f:
            f.write(proto)
        compiled = ov.Core().compile_model(ov.convert_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        ov_out = [np.asarray(v) for v in compiled([HOSTILE]).values()]
    return {"torch": eager, "onnx": onnx_out, "openvino": ov_out}


@pytest.mark.parametrize("to", ["onnx", "openvino"])
def test_each_hop_counts_what_the_engines_show(clamps_body: dict, direct_runs: dict, to: str) -> None:
    cmp = hop(clamps_body, to)["against_source"]
    want = [compare.count(a, b) for a, b in zip(direct_runs["torch"], direct_runs[to])]
    assert [o["differing"] for o in cmp["outputs"]] == want
    assert any(want) and cmp["first_divergence"] is not None


def test_against_previous_is_openvino_against_onnx(clamps_body: dict, direct_runs: dict) -> None:
    cmp = hop(clamps_body, "openvino")["against_previous"]
    assert cmp["reference"] == "onnx"
    assert [o["differing"] for o in cmp["outputs"]] == \
        [compare.count(a, b) for a, b in zip(direct_runs["onnx"], direct_runs["openvino"])]


@pytest.mark.parametrize(("to", "name", "cause"), [
    pytest.param("onnx", "clamp_2", "omitted-bound-lowest", id="onnx-clamp-min-float-omits-max"),
    pytest.param("onnx", "clamp_4", "omitted-bound-lowest", id="onnx-clamp-max-float-omits-min"),
    pytest.param("onnx", "hardswish", "torch-hardswish-overflow", id="onnx-hardswish-torch-overflows"),
    pytest.param("openvino", "clamp", "nan-to-lower-bound", id="openvino-clamp-nan-to-min"),
    pytest.param("openvino", "clamp_3", "nan-to-bound-by-operand-order", id="openvino-max-tensor-first"),
    pytest.param("openvino", "clamp_2", "omitted-bound-lowest", id="openvino-minimum-flt-max"),
    pytest.param("openvino", "clamp_4", "nan-to-omitted-min-lowest", id="openvino-omitted-min-nan-to-lowest"),
])
def test_causes_name_the_converter_rule(clamps_body: dict, to: str, name: str, cause: str) -> None:
    row = node(hop(clamps_body, to)["against_source"], name)
    assert row["origin"] == "introduced" and cause in row["causes"]
    assert row["witness"]["input"] is not None and len(row["witness"]["outputs"]) == 2


def test_an_omitted_min_names_the_lowest_float_nan_became(clamps_body: dict) -> None:
    """clamp(x, max=6.0) through ONNX (Clip with min omitted) to OpenVINO: NaN becomes the lowest float, and the
    cause says the omitted min became it (issue 47)."""
    row = node(hop(clamps_body, "openvino")["against_source"], "clamp_4")
    assert row["cause"] == "nan-to-omitted-min-lowest" and row["witness"]["input"] == "nan"
    assert row["witness"]["outputs"]["openvino"] == -float(np.finfo(np.float32).max)
    assert "omitted min became the lowest float" in clamps_body["rules"]["nan-to-omitted-min-lowest"]


@pytest.mark.parametrize("to", ["onnx", "openvino"])
def test_every_measured_cause_is_predicted_and_every_prediction_confirmed(clamps_body: dict, to: str) -> None:
    h = hop(clamps_body, to)
    assert h["unpredicted"] == [] and h["not_reached"] == []
    assert h["confirmed"] and h["against_source"]["verdict"] == "explained"


@pytest.mark.parametrize(("to", "name", "became"), [
    pytest.param("onnx", "clamp_3", "Max(x, 0.0)", id="onnx-int-min-is-max"),
    pytest.param("onnx", "clamp_5", "Min(x, 6.0)", id="onnx-int-max-is-min"),
    pytest.param("onnx", "clamp_4", "Clip(x, '', 6.0)", id="onnx-float-max-omits-min"),
    pytest.param("openvino", "clamp_4", "Clamp(-FLT_MAX, 6.0)", id="openvino-from-onnx-flt-max"),
    pytest.param("coreml", "clamp_6", "const (folded)", id="coreml-min-gt-max-folded"),
    pytest.param("coreml", "clamp_2", "clip(0.0, FLT_MAX)", id="coreml-omitted-is-flt-max"),
])
def test_lowering_reads_what_the_converter_wrote(clamps_body: dict, to: str, name: str, became: str) -> None:
    row = next(r for r in hop(clamps_body, to)["lowering"] if r["node"] == name)
    assert row["became"] == became and row["pairing"] != "unpaired"


def test_coreml_is_static_on_linux_with_its_predictions(clamps_body: dict) -> None:
    h = hop(clamps_body, "coreml")
    assert h["status"] == "static" and "static only" in h["note"]
    assert {"node": "clamp_6", "rule": "min-ge-max-fill"} in h["predicted"]


def test_a_coreml_conversion_failure_is_a_hop(clamp_min_int_body: dict) -> None:
    h = hop(clamp_min_int_body, "coreml")
    assert h["status"] == "failed" and h["error"].startswith("conversion: AssertionError")
    assert {"node": "clamp_min", "rule": "int-literal-refused"} in h["predicted"]
    assert h["cause"] == {"rule": "int-literal-refused", "nodes": ["clamp_min"]}
    assert hop(clamp_min_int_body, "openvino")["against_source"] is not None  # the other hops went on


def test_a_missing_converter_is_a_hop_naming_its_build(tmp_path, monkeypatch: pytest.MonkeyPatch  # noqa: ANN001
                                                       ) -> None:
    monkeypatch.setenv("CLIPBRIDGE_CACHE", str(tmp_path))  # a cache without the LiteRT converter environment
    body = report.chain(direct, models.clamp_min_int(), None, "torch,tflite,tflite:builtin")
    for to in ("tflite", "tflite:builtin"):
        h = hop(body, to)
        assert h["status"] == "not-installed" and "clipbridge chain-env build" in h["error"]
    assert not (tmp_path / "converters").exists()  # the library never builds: the CLI or chain-env does


def test_static_runs_nothing_and_predicts_what_the_run_predicts(clamps_pt2: bytes, clamps_body: dict) -> None:
    body = report.chain(direct, clamps_pt2, None, "torch,onnx", static=True)
    h = hop(body, "onnx")
    assert body["verdict"] is None and body["static"] and "against_source" not in h
    assert h["predicted"] == hop(clamps_body, "onnx")["predicted"]


def test_mobilenet_clean_input_is_equal_on_every_running_hop(mobilenet_pt2: bytes) -> None:
    clean = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    body = report.chain(direct, mobilenet_pt2, npz(x=clean), "torch,onnx,openvino")
    assert body["verdict"] == "equal"
    assert all(h["against_source"]["verdict"] == "equal" for h in body["hops"])


def test_mobilenet_hostile_input_differs_with_a_first_divergence(mobilenet_pt2: bytes) -> None:
    body = report.chain(direct, mobilenet_pt2, None, "torch,onnx,openvino")
    cmp = hop(body, "openvino")["against_source"]
    assert cmp["outputs"][0]["differing"] > 0 and cmp["first_divergence"]["node"] == "hardtanh"
    assert node(cmp, "hardtanh")["cause"] == "nan-to-lower-bound"


def test_an_onnx_model_starts_the_chain_at_onnx(clamps_pt2: bytes) -> None:
    body = report.chain(direct, child_torch.to_onnx(clamps_pt2), npz(x=HOSTILE), "onnx,openvino")
    h = hop(body, "openvino")
    assert body["source"] == "onnx" and h["from"] == "onnx" and h["against_source"]["reference"] == "onnx"
    assert h["against_source"]["verdict"] == "explained"
    assert h["unpredicted"] == [] and h["not_reached"] == []


def test_a_static_chain_needs_no_inputs_for_a_bool_input():
    """--static runs nothing, so a model whose bool input is never generated still gets its lowering table."""
    from pathlib import Path

    from clipbridge.chain import report
    from clipbridge.diff.run import direct
    body = report.chain(direct, (Path(__file__).parents[2] / "docs" / "example.onnx").read_bytes(), None,
                        "onnx,openvino", static=True)
    assert body["verdict"] is None and body["static"] and body["inputs"]["source"] == "none", body["inputs"]
    assert [h["to"] for h in body["hops"]] == ["openvino"]


@pytest.mark.parametrize("fixture", [pytest.param("clamps_body", id="linux-chain"),
                                     pytest.param("clamp_min_int_body", id="with-coreml")])
def test_the_body_is_a_chain_response(request: pytest.FixtureRequest, fixture: str) -> None:
    """schemas/ChainResponse.json describes the body as written: every key, none added or left out."""
    body = request.getfixturevalue(fixture)
    model = ChainResponse.model_validate(body)
    assert model.model_dump(mode="json", by_alias=True, exclude_unset=True) == body
