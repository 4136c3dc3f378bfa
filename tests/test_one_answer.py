"""One answer per question (issue 37): the same bound change has one severity whichever target emits it, and an
ONNX Clip whose bounds are computed at run time is exact towards ONNX itself (the same op or a newer Clip)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OV_I8 = {"dialect": "openvino", "element_type": "i8", "min": 0.5, "max": 100.7}  # the README's example


@pytest.mark.parametrize("target", [{"dialect": "directml", "feature_level": "2_1"}, "onnx", "tflite", "stablehlo",
                                    "tosa", "webnn"], ids=lambda t: t if isinstance(t, str) else "directml")
def test_one_bound_change_has_one_severity(client, target):
    """OpenVINO ceils min 0.5 to 1; a literal translation truncates it to 0: outputs change at input 0, an error
    (Severity.ERROR: outputs change) towards every target, with the witness that shows it."""
    r = client.post("/v1/translate", json={"spec": OV_I8, "targets": [target], "mode": "literal", "include": []})
    assert r.status_code == 200, r.text
    tr = r.json()["translations"][0]
    witnessed = [f for f in tr["findings"] if f["code"] == "bound-rounding" and f["witness"]]
    assert witnessed, tr["findings"]
    w = witnessed[0]
    assert (w["severity"], w["witness"]["input"], w["witness"]["source_output"], w["witness"]["target_output"]) \
        == ("error", 0, 1, 0)


@pytest.mark.parametrize("target,status", [
    pytest.param("onnx", "exact", id="onnx-newest"),
    pytest.param("onnx:13", "exact", id="clip-13"),
    pytest.param("onnx:11", "exact", id="clip-11-itself"),
    pytest.param("onnx:6", "unsupported", id="clip-6-has-attribute-bounds"),
    pytest.param("openvino", "unsupported", id="openvino-attributes"),
    pytest.param("directml:5_0", "unsupported", id="directml-desc-fields"),
])
def test_an_onnx_clip_with_a_run_time_bound(client, target, status):
    with open(ROOT / "docs" / "example.onnx", "rb") as f:
        r = client.post("/v1/models/inspect", params={"target": target}, files={"model": ("example.onnx", f)})
    assert r.status_code == 200, r.text
    clip = next(c for c in r.json()["clips"] if c["node"] == "clip_dynamic_max")
    t = clip["translations"][0]
    assert t["status"] == status, t
    if status == "exact":
        assert [f["severity"] for f in t["findings"]] == ["info"] and t["findings"][0]["code"] == "dynamic-bounds"
