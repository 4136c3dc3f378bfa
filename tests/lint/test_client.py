"""app/clipbridge/client.py against the in-process app: typed answers (the API's own models), problems as ApiError,
client-side validation, and the README's examples in their Python form."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pydantic
import pytest

from clipbridge.api.lint_models import ProbeResponse
from clipbridge.api.models import ScanResponse, TranslateResponse
from clipbridge.client import ApiError, Client

ROOT = Path(__file__).resolve().parents[2]
I8 = {"dialect": "openvino", "element_type": "i8", "min": 0.5, "max": 100.7}


@pytest.fixture()
def cb(client):
    return Client(http=client)


def test_health_and_dialects(cb):
    assert cb.health().status == "ok"
    codes = {c.code.value for c in cb.dialects().finding_codes}
    assert "bound-rounding" in codes


def test_translate_readme_example(cb):
    r = cb.translate(I8, targets=[{"dialect": "directml", "feature_level": "2_1"}], mode="literal")
    assert isinstance(r, TranslateResponse)
    t = r.translations[0]
    f = next(f for f in t.findings if f.code.value == "bound-rounding")
    assert t.status == "drift" and (f.witness.input, f.witness.source_output, f.witness.target_output) == (0, 1, 0)
    assert cb.translate(I8, targets=[{"dialect": "directml", "feature_level": "2_1"}]).translations[0].status == "exact"


def test_big_integers_and_nan_round_trip(cb):
    r = cb.translate({"dialect": "onnx", "opset": 13, "elem_type": "INT64", "min": "-9223372036854775808",
                      "max": 9007199254740993}, targets=["openvino"], mode="literal")
    assert r.meaning.upper.value == "9007199254740993"
    r = cb.translate({"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": "nan", "max": 6},
                     targets=["directml"], mode="literal")
    assert r.meaning.lower.value == "nan"


def test_execute_and_compare(cb):
    spec = {"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 5, "max": 2}
    x = {"dtype": "int8", "shape": [3], "data": [-128, 3, 127]}
    assert cb.execute(spec, x, target="directml").output.data == [5, 5, 5]
    pairs = cb.compare(spec, x).pairs
    assert {(p.a, p.b) for p in pairs} == {("onnx", "directml")}  # openvino refuses min > max


def test_inspect_with_filters(cb):
    model = ROOT / "docs" / "example.onnx"
    r = cb.inspect(model, targets=["directml:5_0"], ignore=["nan-input"])
    assert isinstance(r, ScanResponse) and len(r.clips) == 5
    assert all(f.code.value != "nan-input" for c in r.clips for t in c.translations for f in t.findings)
    fixed = cb.rewrite(model.read_bytes(), "directml:5_0", opset=13)
    assert fixed[:2] and cb.inspect(fixed, targets=["onnx"]).format == "onnx"


def test_probe_and_bundle(cb):
    p = cb.probe(I8, targets=["onnx", "openvino"])
    assert isinstance(p, ProbeResponse) and p.dtype == "int8" and p.differing
    z = zipfile.ZipFile(io.BytesIO(cb.bundle(I8, targets=["openvino"])))
    assert "run_bundle.py" in z.namelist() and "openvino.xml" in z.namelist()


@pytest.mark.parametrize("call,status,loc", [
    pytest.param(lambda cb: cb.translate({"dialect": "onnx", "opset": 13, "elem_type": "INT8", "min": 500}), 422,
                 "spec.min", id="bound-outside-dtype"),
    pytest.param(lambda cb: cb.inspect(b"\x08\x08\x3a\xff\xff\xff\x0f"), 400, None, id="truncated-model"),
    pytest.param(lambda cb: cb.inspect(ROOT / "docs" / "example.onnx", select=["bogus"]), 422, "select[0]",
                 id="unknown-code"),
])
def test_problems_raise_api_error(cb, call, status, loc):
    with pytest.raises(ApiError) as info:
        call(cb)
    assert info.value.status == status and info.value.problem.status == status
    if loc:
        assert info.value.problem.errors[0].loc == loc


def test_bad_request_fails_before_sending(cb):
    with pytest.raises(pydantic.ValidationError):
        cb.translate({"dialect": "onnx", "opset": 13, "elem_type": "INT8"}, mode="exact")


def test_api_key_header(client):
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    from clipbridge.core.settings import Settings
    with TestClient(create_app(Settings(api_key="s3cret-key-0123456789"))) as http:
        with pytest.raises(ApiError) as info:
            Client(http=http).dialects()
        assert info.value.status == 401
        assert Client(http=http, api_key="s3cret-key-0123456789").dialects().finding_codes
