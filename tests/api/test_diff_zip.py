"""Issue 46, item 3: a model's external data travels with it. POST /v1/models/diff takes a zip of the `.onnx` and
the files it names; they resolve only against the zip's own entries, in memory. Every attack is a 4xx
problem+json naming `model`, never a 5xx, and nothing of the server's disk is read (a canary beside the server
that a location names is never in an answer)."""

from __future__ import annotations

import io
import stat
import zipfile

import numpy as np
import pytest
from fastapi.testclient import TestClient
from onnx import TensorProto, helper

from clipbridge.core.settings import Settings
from clipbridge.main import create_app

LIMIT = 4 * 1024 * 1024  # CLIPBRIDGE_MAX_MODEL_BYTES for these tests
CANARY = b"CANARY46" + bytes(range(100, 132))
WEIGHTS = np.arange(4, dtype=np.float32) - 1.5  # [-1.5, -0.5, 0.5, 1.5]


def model(location: str = "m.onnx.data", offset: str | None = "0", length: str | None = "16",
          dims: tuple[int, ...] = (4,)) -> bytes:
    """y = Clip(x + w, 0, 6) with w's 4 float32 values stored externally at `location`."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=list(dims), data_location=TensorProto.EXTERNAL)
    w.external_data.add(key="location", value=location)
    for key, value in (("offset", offset), ("length", length)):
        if value is not None:
            w.external_data.add(key=key, value=value)
    lo = helper.make_tensor("lo", TensorProto.FLOAT, [], [0.0])
    hi = helper.make_tensor("hi", TensorProto.FLOAT, [], [6.0])
    g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["s"]), helper.make_node("Clip", ["s", "lo", "hi"],
                                                                                         ["y"], name="clip")],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w, lo, hi])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def zipped(entries: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED, tweak=None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            if tweak:
                tweak(info)
            zf.writestr(info, data)
    return buf.getvalue()


def good(**kw) -> dict[str, bytes]:
    return {"m.onnx": model(**kw), "m.onnx.data": WEIGHTS.tobytes()}


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings(max_model_bytes=LIMIT)), raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def beside_the_server(tmp_path, monkeypatch):
    (tmp_path / "m.onnx.data").write_bytes(CANARY)  # where a location would resolve on the server: never read
    monkeypatch.chdir(tmp_path)


def diff(client, body: bytes):
    return client.post("/v1/models/diff?engine=onnxruntime,onnx-reference&probe=off",
                       files={"model": ("m.zip", body)})


@pytest.mark.parametrize("entries", [
    pytest.param(good(), id="beside"),
    pytest.param({"sub/m.onnx": model(), "sub/m.onnx.data": WEIGHTS.tobytes()}, id="in-a-folder"),
    pytest.param({"m.onnx": model(offset="8", length="16"), "m.onnx.data": bytes(8) + WEIGHTS.tobytes()},
                 id="at-an-offset"),
    pytest.param({"m.onnx": model(offset=None, length=None), "m.onnx.data": WEIGHTS.tobytes()},
                 id="offset-and-length-absent"),
    pytest.param({"sub/m.onnx": model(location="./m.onnx.data"), "sub/m.onnx.data": WEIGHTS.tobytes()},
                 id="location-dot-slash"),
])
def test_a_zip_of_the_model_and_its_data_diffs(client, beside_the_server, entries):
    r = diff(client, zipped(entries))
    assert r.status_code == 200, r.text[:400]
    assert CANARY[:8] not in r.content


@pytest.mark.parametrize("url", [
    pytest.param("/v1/models/fix?reference=onnxruntime&target=openvino", id="fix"),
])
def test_fix_takes_the_zip_too(client, beside_the_server, url):
    r = client.post(url, files={"model": ("m.zip", zipped(good()))})
    assert r.status_code == 200, r.text[:400]
    assert CANARY[:8] not in r.content
    bad = client.post(url, files={"model": ("m.zip", zipped(good(length="64")))})
    assert bad.status_code == 400 and bad.json()["errors"][0]["loc"] == "model", bad.text[:300]


def test_the_same_model_without_its_data_is_still_refused(client, beside_the_server):
    r = client.post("/v1/models/diff", files={"model": ("m.onnx", model())})
    assert r.status_code == 400 and "external file" in r.json()["detail"], r.text[:300]


def _symlink(info: zipfile.ZipInfo) -> None:
    info.external_attr = (stat.S_IFLNK | 0o777) << 16


def encrypted() -> bytes:
    """good() with the encrypted flag set in the data entry's central directory header (zipfile writes none)."""
    data = bytearray(zipped(good()))
    central = data.rfind(b"PK\x01\x02")
    data[central + 8] |= 0x1
    return bytes(data)


@pytest.mark.parametrize("body,status,fragment", [
    pytest.param(lambda: zipped({"m.onnx": model()}), 400, "not in the upload", id="data-missing-from-zip"),
    pytest.param(lambda: zipped(good(location="../m.onnx.data")), 400, "outside the model's directory",
                 id="location-dotdot"),
    pytest.param(lambda: zipped(good(location="/etc/passwd")), 400, "outside the model's directory",
                 id="location-absolute"),
    pytest.param(lambda: zipped(good(offset="8")), 400, "runs past the end", id="offset-past-the-part"),
    pytest.param(lambda: zipped(good(length="64")), 400, "runs past the end", id="length-past-the-part"),
    pytest.param(lambda: zipped(good(offset=str(2**62))), 400, "runs past the end", id="offset-huge"),
    pytest.param(lambda: zipped(good(offset="-1")), 400, "not a whole number", id="offset-negative"),
    pytest.param(lambda: zipped(good(length="x")), 400, "not a whole number", id="length-not-a-number"),
    pytest.param(lambda: zipped(good(length="12")), 400, "dims [4] need 16", id="length-not-the-dims"),
    pytest.param(lambda: zipped({**good(), "../evil": b"x"}), 400, "not a plain relative name",
                 id="entry-dotdot"),
    pytest.param(lambda: zipped({**good(), "/abs": b"x"}), 400, "not a plain relative name", id="entry-absolute"),
    # found by tests/hostile/test_external_uploads.py: zipfile's is_dir indexed an empty name (a 500)
    pytest.param(lambda: zipped({"m.onnx": model(location=""), "": b"x"}), 400, "not a plain relative name",
                 id="entry-empty-name"),
    pytest.param(lambda: zipped(good(), tweak=_symlink), 400, "is a symlink", id="entry-symlink"),
    pytest.param(encrypted, 400, "encrypted", id="entry-encrypted"),
    pytest.param(lambda: zipped({**good(), "b.onnx": model()}), 400, "2 .onnx entries", id="two-models"),
    pytest.param(lambda: zipped({"m.onnx.data": WEIGHTS.tobytes()}), 400, "0 .onnx entries", id="no-model"),
    pytest.param(lambda: zipped({**good(), **{f"pad/{i}": b"" for i in range(70)}}), 400, "at most 64",
                 id="too-many-entries"),
    pytest.param(lambda: zipped({**good(), "big": bytes(LIMIT + 1)}), 413,
                 "CLIPBRIDGE_MAX_MODEL_BYTES", id="oversized-entry"),
    pytest.param(lambda: zipped({**good(), "bomb": bytes(3 * 1024 * 1024)}), 413, "zip bomb", id="zip-bomb"),
    pytest.param(lambda: b"PK\x03\x04" + bytes(60), 400, "not a readable zip", id="not-a-zip"),
])
def test_every_attack_is_a_4xx_naming_the_model(client, beside_the_server, body, status, fragment):
    r = diff(client, body())
    assert r.status_code == status, r.text[:400]
    assert r.headers["content-type"].startswith("application/problem+json")
    assert fragment in r.json()["detail"] and r.json()["errors"][0]["loc"] == "model", r.text[:400]
    assert CANARY[:8] not in r.content


def test_a_lying_header_stops_at_what_it_declared(client):
    """An entry whose central directory declares 16 bytes but inflates to 1 MiB: inflating stops at its word
    (zipfile's own size check or ours), a 4xx naming the model, never the whole stream in memory."""
    data = bytearray(zipped({"m.onnx": model(), "m.onnx.data": bytes(1024 * 1024)}))
    central = data.rfind(b"PK\x01\x02")  # the last entry's central directory header: m.onnx.data
    data[central + 24:central + 28] = (16).to_bytes(4, "little")  # its uncompressed size
    r = diff(client, bytes(data))
    assert 400 <= r.status_code < 500 and r.json()["errors"][0]["loc"] == "model", r.text[:400]


def test_a_torch_export_zipped_with_its_data_diffs(client, tmp_path):
    """torch's default output (`block.onnx` + `block.onnx.data`), zipped as it lies, diffs over HTTP."""
    torch = pytest.importorskip("torch")
    from tests.api.test_scan_without_weights import MobileBlock
    torch.manual_seed(46)
    path = tmp_path / "block.onnx"
    torch.onnx.export(MobileBlock().eval(), (torch.randn(1, 3, 16, 16),), str(path), dynamo=True,
                      external_data=True, verbose=False)
    body = zipped({"block.onnx": path.read_bytes(), "block.onnx.data": path.with_name("block.onnx.data").read_bytes()})
    r = diff(client, body)
    assert r.status_code == 200, r.text[:400]
    assert {e["name"] for e in r.json()["engines"]} == {"onnxruntime", "onnx-reference"}
