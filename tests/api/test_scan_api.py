"""POST /v1/models/inspect and /v1/models/rewrite: uploads (multipart and raw), targets, and the security
cases over HTTP: external data never opened, hostile XML refused, malformed bytes a 400, large bodies a 413
before they are read. No request gets a 5xx."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import sys
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
import pytest
from fastapi.testclient import TestClient

from clipbridge.api.models import ScanResponse
from clipbridge.main import create_app
from clipbridge.core.settings import Settings
from tests.scan.models import (F16, F32, clip_model, cyclic_model, external_bound_model, field, minmax_model,
                               nested_if_model, relu6_f32, varint)

INSPECT, REWRITE = "/v1/models/inspect", "/v1/models/rewrite"
OCTET = {"content-type": "application/octet-stream"}
PROBLEM = "application/problem+json"
REPO = Path(__file__).resolve().parents[2]


# --- a recorder of every file the process opens while a request runs ----------------------------------------
# Audit hooks cannot be removed: this one does nothing unless RECORDING is set.

RECORDING = False
OPENED: list[str] = []


def _audit(event: str, args: tuple) -> None:
    if RECORDING and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)

ALLOWED = tuple(os.path.realpath(p) for p in {
    tempfile.gettempdir(), str(REPO), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
    # The standard library: a lazy import inside a framework is not the upload's doing.
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


def _allowed(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + os.sep) for root in ALLOWED)


def record(fn):
    """Run fn() with every `open` recorded; return (its result, the paths opened)."""
    global RECORDING
    OPENED.clear()
    RECORDING = True
    try:
        result = fn()
    finally:
        RECORDING = False
    return result, list(OPENED)


# --- helpers ---------------------------------------------------------------------------------------------

def raw(client, data: bytes, url: str = INSPECT, params=None, ctype: str = "application/octet-stream"):
    return client.post(url, content=data, headers={"content-type": ctype}, params=params)


def multipart(client, data: bytes, url: str = INSPECT, params=None, name: str = "model.onnx", weights=None):
    files = {"model": (name, data, "application/octet-stream")}
    if weights is not None:
        files["weights"] = ("model.bin", weights, "application/octet-stream")
    return client.post(url, files=files, params=params)


def problem(r, status: int, fragment: str | None = None) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == status and body["title"] and body["detail"]
    if fragment:
        assert fragment in body["detail"], body["detail"]
    return body


@pytest.fixture(scope="module")
def ir_files(tmp_path_factory):
    """An IR written by openvino.save_model: a Clamp and a Minimum(Maximum(x, a), b)."""
    import openvino.opset13 as ops
    x = ops.parameter([1, 4], np.float32, name="x")
    clamp = ops.clamp(x, 0.0, 6.0, name="relu6")
    mx = ops.maximum(clamp, ops.constant(np.float32(-1.0)), name="mx")
    mn = ops.minimum(mx, ops.constant(np.float32(4.0)), name="mn")
    path = tmp_path_factory.mktemp("ir") / "model.xml"
    ov.save_model(ov.Model([ops.result(mn)], [x], "m"), str(path))
    return path.read_bytes(), path.with_suffix(".bin").read_bytes()


# --- uploads and targets -----------------------------------------------------------------------------------

def test_multipart_and_raw_uploads_give_the_same_json(client):
    data = clip_model(13, F16, 0, 6, np.float16).SerializeToString()
    a, b = multipart(client, data), raw(client, data)
    assert a.status_code == b.status_code == 200, a.text
    assert a.headers["content-type"] == "application/json"
    assert a.json() == b.json()
    body = ScanResponse.model_validate(a.json())
    assert body.format == "onnx" and body.summary.clips == 1
    assert [t.label for t in body.targets] == ["onnx", "openvino", "directml"]
    json.loads(a.text, parse_constant=lambda c: pytest.fail(f"bare {c} in the response"))


@pytest.mark.parametrize("ctype", ["application/onnx", "application/x-protobuf"])
def test_other_raw_content_types(client, ctype):
    r = raw(client, relu6_f32().SerializeToString(), ctype=ctype)
    assert r.status_code == 200 and r.json()["summary"]["clips"] == 1


def test_ir_xml_and_bin_via_multipart(client, ir_files):
    xml, weights = ir_files
    r = multipart(client, xml, name="model.xml", weights=weights, params={"target": "onnx"})
    assert r.status_code == 200, r.text
    body = ScanResponse.model_validate(r.json()).model_dump()
    assert body["format"] == "openvino-ir"
    assert {c["pattern"] for c in body["clips"]} == {"Clamp-1", "Minimum(Maximum(x, a), b)"}
    assert all(c["error"] is None for c in body["clips"])
    # The XML alone: the Clamp is read, the pair's bounds are in the .bin: an error site.
    for r in (multipart(client, xml, name="model.xml", params={"target": "onnx"}),
              raw(client, xml, ctype="application/xml", params={"target": "onnx"})):
        assert r.status_code == 200, r.text
        assert r.json()["summary"]["unresolved"] == 1


@pytest.mark.parametrize("params,labels", [
    pytest.param([("target", "onnx:11"), ("target", "directml:5_0")], ["onnx:11", "directml:5_0"], id="two"),
    pytest.param([("target", " OpenVINO:opset13 ")], ["OpenVINO:opset13"], id="case-and-spaces"),
    pytest.param([], ["onnx", "openvino", "directml"], id="default"),
])
def test_target_query(client, params, labels):
    r = raw(client, clip_model(13, F32, 0, 6, np.float32).SerializeToString(), params=params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert [t["label"] for t in body["targets"]] == labels
    assert [t["label"] for t in body["clips"][0]["translations"]] == labels


@pytest.mark.parametrize("params,fragment", [
    pytest.param({"target": "caffe2"}, "unknown dialect", id="unknown-dialect"),
    pytest.param({"target": "onnx:abc"}, "target", id="bad-opset"),
    pytest.param({"target": "x" * 17}, "16", id="too-long"),
    pytest.param({"mode": "sloppy"}, "mode", id="bad-mode"),
])
def test_bad_query_is_a_422_problem(client, params, fragment):
    body = problem(raw(client, relu6_f32().SerializeToString(), params=params), 422)
    assert fragment in json.dumps(body)


def test_mode_literal(client):
    r = raw(client, relu6_f32().SerializeToString(), params={"mode": "literal", "target": "openvino"})
    assert r.status_code == 200 and r.json()["clips"][0]["translations"][0]["status"] == "exact"


# --- security: external data ------------------------------------------------------------------------------

@pytest.fixture()
def warm(client):
    """One request of each kind first, so lazy imports and caches do not show up as opens."""
    data = relu6_f32().SerializeToString()
    assert raw(client, data).status_code == 200 and multipart(client, data).status_code == 200
    assert multipart(client, data, REWRITE, {"target": "openvino"}).status_code == 200
    return client


@pytest.mark.parametrize("location", [
    pytest.param("../../etc/passwd", id="relative-escape"),
    pytest.param("/etc/passwd", id="absolute"),
    pytest.param("SENTINEL", id="absolute-existing-file"),
])
@pytest.mark.parametrize("send", [
    pytest.param(lambda c, d: raw(c, d), id="raw"),
    pytest.param(lambda c, d: multipart(c, d), id="multipart"),
    pytest.param(lambda c, d: multipart(c, d, REWRITE, {"target": "openvino"}), id="rewrite"),
])
def test_external_data_outside_the_upload_is_refused_and_never_opened(warm, tmp_path, location, send):
    sentinel = tmp_path / "secret.bin"
    sentinel.write_bytes(np.float32(-1).tobytes())
    loc = str(sentinel) if location == "SENTINEL" else location
    r, opened = record(lambda: send(warm, external_bound_model(loc).SerializeToString()))
    problem(r, 400, "outside the model's directory")
    outside = [p for p in opened if not _allowed(p)]
    assert outside == [], outside
    assert not any(os.path.realpath(p) in ("/etc/passwd", str(sentinel)) for p in opened), opened


@pytest.mark.parametrize("send,check", [
    pytest.param(lambda c, d: raw(c, d), "scan", id="inspect-raw"),
    pytest.param(lambda c, d: multipart(c, d), "scan", id="inspect-multipart"),
    pytest.param(lambda c, d: multipart(c, d, REWRITE, {"target": "openvino"}), "rewrite", id="rewrite"),
])
def test_external_data_inside_the_directory_is_scanned_without_it_and_never_opened(warm, tmp_path, monkeypatch,
                                                                                  send, check):
    """Issue 46 (was: refused, issue 34): a scan needs no weights. The Clip whose min is external is listed
    unresolved with the reason; rewrite skips it and gives the model back with its location as sent; the file
    next to the server is there and never opened."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights.bin").write_bytes(np.float32(-1).tobytes())  # there, and still never read
    data = external_bound_model("weights.bin").SerializeToString()
    r, opened = record(lambda: send(warm, data))
    assert r.status_code == 200, r.text[:300]
    assert not any(p.endswith("weights.bin") for p in opened), opened
    assert [p for p in opened if not _allowed(p)] == []
    if check == "scan":
        (clip,) = r.json()["clips"]
        assert "'lo' is stored as external data" in clip["error"] and r.json()["summary"]["unresolved"] == 1
        assert r.json()["model"]["external_tensors"] == ["lo"]
    else:
        assert r.headers["x-clipbridge-rewritten"] == "0" and r.headers["x-clipbridge-skipped"] == "1"
        assert onnx.load_from_string(r.content) == onnx.load_from_string(data)


# --- security: XML ---------------------------------------------------------------------------------------

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE net [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<net name="&xxe;" version="11"><layers/><edges/></net>"""
LAUGHS = (b'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY lol "lol">'
          + b"".join(f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'.encode()
                     for i in range(1, 10))
          + b']>\n<net name="&lol9;" version="11"><layers/></net>')
PARAM_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE net [<!ENTITY % ext SYSTEM "http://127.0.0.1:9/evil.dtd"> %ext;]><net version="11"/>"""


@pytest.mark.parametrize("xml", [pytest.param(XXE, id="xxe"), pytest.param(LAUGHS, id="billion-laughs"),
                                 pytest.param(PARAM_ENTITY, id="parameter-entity")])
@pytest.mark.parametrize("send", [
    pytest.param(lambda c, x: multipart(c, x, name="m.xml"), id="multipart"),
    pytest.param(lambda c, x: raw(c, x, ctype="application/xml"), id="raw-xml"),
    pytest.param(lambda c, x: raw(c, x), id="raw-octet"),
])
def test_hostile_xml_is_a_400(warm, xml, send):
    r, opened = record(lambda: send(warm, xml))
    problem(r, 400, "DTDs and entities are not allowed")
    assert "/etc/passwd" not in opened and [p for p in opened if not _allowed(p)] == []


# --- malformed bytes -----------------------------------------------------------------------------------------

def _truncated() -> bytes:
    data = relu6_f32().SerializeToString()
    return data[:len(data) // 2]


def _huge_size() -> bytes:
    data = relu6_f32().SerializeToString()
    return data[:data.index(b"\x3a") + 1] + varint(1 << 60)


BAD = [
    pytest.param(_truncated(), "truncated", id="truncated-protobuf"),
    pytest.param(random.Random(0).randbytes(4096), None, id="random-bytes"),
    pytest.param(b"\x00" * 64, "field number 0", id="zeros"),
    pytest.param(_huge_size(), "declares a size past its end", id="huge-declared-size"),
    pytest.param(field(7, field(5, varint(1 << 3 | 2) + varint(1 << 62))), "past its end",
                 id="huge-tensor-size"),
    pytest.param(cyclic_model().SerializeToString(), "cyclic", id="cyclic-graph"),
    pytest.param(nested_if_model(200), None, id="deep-nesting"),
    pytest.param(b'{"not": "a model"}', None, id="json"),
    pytest.param(b"<net version='11'><layers>", "not well-formed", id="truncated-xml"),
]


@pytest.mark.parametrize("url", [INSPECT, REWRITE])
@pytest.mark.parametrize("data,fragment", BAD)
def test_malformed_uploads_are_400_problems(client, url, data, fragment):
    params = {"target": "openvino"}
    if url == REWRITE and data.startswith(b"<"):
        fragment = "rewrite takes an ONNX model"  # refused before the XML is parsed
    for r in (raw(client, data, url, params), multipart(client, data, url, params)):
        problem(r, 400, fragment)


@pytest.mark.parametrize("send,status,fragment", [
    pytest.param(lambda c: raw(c, b""), 400, "empty", id="empty-raw-body"),
    pytest.param(lambda c: multipart(c, b""), 400, "empty", id="empty-model-file"),
    pytest.param(lambda c: raw(c, relu6_f32().SerializeToString(), ctype="text/plain"), 415, "multipart",
                 id="text-plain"),
    pytest.param(lambda c: c.post(INSPECT, json={"model": "AAAA"}), 415, "application/json", id="json-body"),
    pytest.param(lambda c: c.post(INSPECT, content=relu6_f32().SerializeToString()), 415, "no content type",
                 id="no-content-type"),
    pytest.param(lambda c: c.post(INSPECT, files={"weights": ("w.bin", b"\x00", "application/octet-stream")}),
                 400, "'model'", id="multipart-without-model"),
    pytest.param(lambda c: c.post(INSPECT, data={"model": "not a file"},
                                  files={"x": ("x", b"", "application/octet-stream")}),
                 400, None, id="multipart-model-not-a-file"),
    pytest.param(lambda c: c.post(INSPECT, files={"model": ("m.onnx", relu6_f32().SerializeToString(),
                                                            "application/octet-stream"),
                                                  "extra": ("e", b"1", "application/octet-stream")}),
                 400, "unknown form field", id="multipart-extra-field"),
    pytest.param(lambda c: multipart(c, relu6_f32().SerializeToString(), weights=b"\x00" * 4), 400,
                 "'weights' is for an OpenVINO IR", id="weights-with-onnx"),
])
def test_bad_uploads(client, send, status, fragment):
    problem(send(client), status, fragment)


# --- upload size limit -----------------------------------------------------------------------------------------

LIMIT = 4096


@pytest.fixture(scope="module")
def small_client():
    names = {f.name for f in dataclasses.fields(Settings)}
    kw = {"max_model_bytes": LIMIT} if "max_model_bytes" in names else {"max_body_bytes": LIMIT}
    with TestClient(create_app(Settings(**kw))) as c:
        yield c


def _big_model() -> bytes:
    m = clip_model(13, F32, 0, 6, np.float32)
    m.doc_string = "x" * (LIMIT + 1)
    return m.SerializeToString()


@pytest.mark.parametrize("send", [
    pytest.param(lambda c, d: raw(c, d), id="raw"),
    pytest.param(lambda c, d: multipart(c, d), id="multipart"),
    pytest.param(lambda c, d: c.post(INSPECT, content=iter([d[:1000], d[1000:]]), headers=OCTET), id="chunked"),
    pytest.param(lambda c, d: multipart(c, d, REWRITE, {"target": "openvino"}), id="rewrite"),
])
def test_oversized_upload_is_a_413(small_client, send):
    problem(send(small_client, _big_model()), 413, str(LIMIT))


def test_413_comes_before_the_body_is_read(small_client):
    """A Content-Length over the limit is answered without reading: the body here is not even a model."""
    r = small_client.post(INSPECT, content=b"\xff" * (LIMIT + 1), headers=OCTET)
    problem(r, 413)


def test_under_the_limit_is_scanned(small_client):
    r = raw(small_client, relu6_f32().SerializeToString())
    assert r.status_code == 200 and r.json()["summary"]["clips"] == 1


def test_the_model_limit_does_not_apply_elsewhere():
    """max_model_bytes (when the setting exists) limits /v1/models/ only; JSON routes keep max_body_bytes."""
    if "max_model_bytes" not in {f.name for f in dataclasses.fields(Settings)}:
        pytest.skip("no max_model_bytes setting")
    with TestClient(create_app(Settings(max_model_bytes=64, max_body_bytes=1 << 20))) as c:
        spec = {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6,
                           "shape": [1] * 8}}
        assert c.post("/v1/translate", json=spec).status_code == 200
        problem(raw(c, relu6_f32().SerializeToString()), 413)


# --- /v1/models/rewrite -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("send", [
    pytest.param(lambda c, d, p: multipart(c, d, REWRITE, p), id="multipart"),
    pytest.param(lambda c, d, p: raw(c, d, REWRITE, p), id="raw"),
])
def test_rewrite_returns_a_model_onnx_parses(client, send):
    data = clip_model(6, F16, 0, 6, shape=[None]).SerializeToString()
    r = send(client, data, {"target": "openvino", "opset": 13})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["x-clipbridge-opset"] == "13" and r.headers["x-clipbridge-rewritten"] == "1"
    assert r.headers["x-clipbridge-skipped"] == "0"
    assert "rewritten.onnx" in r.headers["content-disposition"]
    m = onnx.load_from_string(r.content)
    onnx.checker.check_model(m, full_check=True)
    clip = next(n for n in m.graph.node if n.op_type == "Clip")
    assert len(clip.input) == 3 and not clip.attribute
    # The rewritten model scans to the same clip, now with explicit bounds.
    again = raw(client, r.content, params={"target": "openvino"}).json()["clips"][0]
    assert again["pattern"] == "Clip-13" and again["spec"]["min"] == 0.0 and again["spec"]["max"] == 6.0


@pytest.mark.parametrize("params,status,fragment", [
    pytest.param({}, 422, "target", id="target-required"),
    pytest.param({"target": "caffe2"}, 422, "unknown dialect", id="bad-target"),
    pytest.param({"target": "openvino", "opset": 10}, 422, "opset", id="opset-below-11"),
    pytest.param({"target": "openvino", "opset": 500}, 422, "newer than this onnx package knows",
                 id="opset-unknown"),
    pytest.param({"target": "openvino", "opset": "x"}, 422, "opset", id="opset-not-a-number"),
])
def test_rewrite_query_errors(client, params, status, fragment):
    body = problem(multipart(client, relu6_f32().SerializeToString(), REWRITE, params), status)
    assert fragment in json.dumps(body)


def test_rewrite_refuses_ir_and_weights(client, ir_files):
    xml, weights = ir_files
    problem(multipart(client, xml, REWRITE, {"target": "onnx"}, name="m.xml"), 400, "rewrite takes an ONNX model")
    problem(multipart(client, relu6_f32().SerializeToString(), REWRITE, {"target": "onnx"}, weights=weights), 400,
            "ONNX model only")


def test_rewrite_of_a_min_max_model_changes_nothing(client):
    data = minmax_model("Min", 0, 6, np.float32, F32).SerializeToString()
    r = raw(client, data, REWRITE, {"target": "openvino"})
    assert r.status_code == 200 and r.headers["x-clipbridge-rewritten"] == "0"
    assert onnx.load_from_string(r.content) == onnx.load_from_string(data)


def test_the_recorder_sees_an_open_outside_the_allowed_roots():
    """The guard of the external-data tests is live: an open of a file outside the roots is recorded."""
    _, opened = record(lambda: open(os.devnull, "rb").close())
    assert opened == [os.devnull] and not _allowed(os.devnull)
    assert _allowed(tempfile.gettempdir() + "/x") and _allowed(str(REPO / "app"))
