"""Issue 46, item 3: a model's external data as form parts. POST /v1/models/diff (and fix, chain) takes the `.onnx` as
`model` and each data file as a part `data` whose filename is the location the model names; they resolve only
against the upload's own parts, in memory (clipbridge.api.model_upload, the zip's resolver). Every attack of the
zip's table that a form can carry is refused the same way, plus the form's own (a filename that is no plain
relative name, a part given twice or named by no tensor, a zip and parts together); each a 4xx problem+json
naming the field, never a 5xx, and the canary beside the server that a location names is never read."""

from __future__ import annotations

import importlib.util
import os
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from clipbridge.api import model_upload
from clipbridge.api.model_form import Upload
from clipbridge.client import Client
from clipbridge.engines.sandbox_wire import MemoryFile

# the zip tests' server (its upload limit) and the canary beside it: the same fixtures for both ways
from tests.api.test_diff_zip import CANARY, LIMIT, WEIGHTS, beside_the_server, client, model, zipped  # noqa: F401

BOUNDARY = "clipbridge-parts-46"
DATA = WEIGHTS.tobytes()
Part = tuple[str, str | None, bytes]  # (field name, filename or None, bytes)


def form(*parts: Part) -> tuple[bytes, dict[str, str]]:
    """A multipart body written byte for byte (a client library would rewrite odd filenames), and its header."""
    out = bytearray()
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename is not None else "")
        out += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data + b"\r\n"
    out += f"--{BOUNDARY}--\r\n".encode()
    return bytes(out), {"content-type": f"multipart/form-data; boundary={BOUNDARY}"}


def parts(data: dict[str, bytes] | None = None, **kw) -> tuple[Part, ...]:
    """The model (kw: its location, offset, length) as 'model' and each of `data` as a 'data' part by filename."""
    data = {"m.onnx.data": DATA} if data is None else data
    return (("model", "m.onnx", model(**kw)), *(("data", name, d) for name, d in data.items()))


def post(client, url: str, body: tuple[Part, ...]):
    content, headers = form(*body)
    return client.post(url, content=content, headers=headers)


DIFF = "/v1/models/diff?engine=onnxruntime,onnx-reference&probe=off"


@pytest.mark.parametrize("body", [
    pytest.param(parts(), id="beside"),
    pytest.param(parts({"weights/m.bin": DATA}, location="weights/m.bin"), id="in-a-folder"),
    pytest.param(parts({"m.onnx.data": bytes(8) + DATA}, offset="8"), id="at-an-offset"),
    pytest.param(parts(offset=None, length=None), id="offset-and-length-absent"),
    pytest.param(parts({"wéights.bin": DATA}, location="wéights.bin"), id="utf8-location"),
    pytest.param(parts(location="./m.onnx.data"), id="location-dot-slash"),
    pytest.param(parts({"./m.onnx.data": DATA}), id="filename-dot-slash"),
    pytest.param((("data", "m.onnx.data", DATA), ("model", "m.onnx", model())), id="data-first"),
])
def test_a_model_and_its_data_parts_diff(client, beside_the_server, body):
    r = post(client, DIFF, body)
    assert r.status_code == 200, r.text[:400]
    assert CANARY[:8] not in r.content


def test_a_client_librarys_form_works_as_curl_sends_it(client, beside_the_server):
    """What `curl -F model=@m.onnx -F data=@m.onnx.data` and requests/httpx send: the file's base name."""
    r = client.post(DIFF, files=[("model", ("m.onnx", model())), ("data", ("m.onnx.data", DATA))])
    assert r.status_code == 200, r.text[:400]


@pytest.mark.parametrize("url", [
    pytest.param("/v1/models/fix?reference=onnxruntime&target=openvino", id="fix"),
    pytest.param("/v1/models/chain?chain=onnx,openvino", id="chain"),
])
def test_fix_and_chain_take_the_parts_too(client, beside_the_server, url):
    r = post(client, url, parts())
    assert r.status_code == 200, r.text[:400]
    assert CANARY[:8] not in r.content
    bad = post(client, url, parts(length="64"))
    assert bad.status_code == 400 and bad.json()["errors"][0]["loc"] == "model", bad.text[:300]


def test_chain_takes_the_zip_of_an_onnx_source(client, beside_the_server):
    """Chain's source may be a .pt2, itself a zip: a zip with a `.onnx` entry is the model and its data."""
    r = client.post("/v1/models/chain?chain=onnx,openvino",
                    files={"model": ("m.zip", zipped({"m.onnx": model(), "m.onnx.data": DATA}))})
    assert r.status_code == 200, r.text[:400]
    assert r.json()["source"] == "onnx" and CANARY[:8] not in r.content


def test_a_pt2_takes_no_data_parts(client):
    """A .pt2 keeps its weights in its own archive (torch.export.save): a data part with one is a 400 naming it."""
    pt2 = zipped({"archive/archive_format": b"pt2", "archive/data/weights/w": DATA})
    r = post(client, "/v1/models/chain?chain=onnx,openvino", (("model", "m.pt2", pt2), ("data", "m.onnx.data", DATA)))
    assert r.status_code == 400 and r.json()["errors"][0]["loc"] == "data", r.text[:300]
    assert "inside its own archive" in r.json()["detail"]


# (body, status, loc, fragment of the detail)
ATTACKS = [
    # the zip's table, as a form carries it: the model's locations, offsets and lengths
    pytest.param(parts({"other.bin": DATA}), 400, "model", "not in the upload", id="data-missing"),
    pytest.param(parts(location="../m.onnx.data"), 400, "model", "outside the model's directory",
                 id="location-dotdot"),
    pytest.param(parts(location="/etc/passwd"), 400, "model", "outside the model's directory",
                 id="location-absolute"),
    pytest.param(parts(offset="8"), 400, "model", "runs past the end", id="offset-past-the-part"),
    pytest.param(parts(length="64"), 400, "model", "runs past the end", id="length-past-the-part"),
    pytest.param(parts(offset=str(2**62)), 400, "model", "runs past the end", id="offset-huge"),
    pytest.param(parts(offset="-1"), 400, "model", "not a whole number", id="offset-negative"),
    pytest.param(parts(length="x"), 400, "model", "not a whole number", id="length-not-a-number"),
    pytest.param(parts(length="12"), 400, "model", "dims [4] need 16", id="length-not-the-dims"),
    # the parts' names, as the zip's entry names
    pytest.param(parts({"m.onnx.data": DATA, "../evil": b"x"}), 400, "data", "not a plain relative name",
                 id="filename-dotdot"),
    pytest.param(parts({"m.onnx.data": DATA, "/abs": b"x"}), 400, "data", "not a plain relative name",
                 id="filename-absolute"),
    pytest.param(parts({"m.onnx.data": DATA, "a\\b": b"x"}), 400, "data", "not a plain relative name",
                 id="filename-backslash"),
    pytest.param(parts({"m.onnx.data": DATA, "C:evil": b"x"}), 400, "data", "not a plain relative name",
                 id="filename-drive"),
    pytest.param(parts({"m.onnx.data": DATA, "a\0b": b"x"}), 400, "data", "not a plain relative name",
                 id="filename-nul"),
    pytest.param(parts({"../m.onnx.data": DATA}, location="../m.onnx.data"), 400, "data",
                 "not a plain relative name", id="location-and-filename-dotdot"),
    # the form's own
    pytest.param((*parts(), ("data", "m.onnx.data", DATA)), 400, "data", "given twice", id="data-twice"),
    pytest.param((*parts(), ("data", "./m.onnx.data", DATA)), 400, "data", "twice", id="data-twice-by-path"),
    pytest.param(parts({"m.onnx.data": DATA, "junk.bin": b"x"}), 400, "data", "not a location the model names",
                 id="data-unused"),
    pytest.param((*parts(), ("data", None, DATA)), 400, "data", "must be a file", id="data-no-filename"),
    pytest.param((*parts(), ("data", "", DATA)), 400, "data", "must be a file", id="data-empty-filename"),
    pytest.param((("model", "m.zip", zipped({"m.onnx": model(), "m.onnx.data": DATA})), ("data", "m.onnx.data",
                                                                                          DATA)),
                 400, "data", "not both", id="data-with-a-zip"),
    pytest.param((("model", "m.onnx", b"\x08\x07" + bytes(30)), ("data", "m.onnx.data", DATA)), 400, "model", "",
                 id="data-with-no-onnx-model"),
    pytest.param(parts({f"pad{i}": b"" for i in range(70)}), 400, "body", "at most 64", id="too-many-parts"),
    pytest.param(parts({"m.onnx.data": DATA, "big": bytes(LIMIT + 1)}), 413, None, "", id="oversized"),
]


@pytest.mark.parametrize("body,status,loc,fragment", ATTACKS)
def test_every_attack_is_a_4xx_naming_the_field(client, beside_the_server, body, status, loc, fragment):
    r = post(client, DIFF, body)
    assert r.status_code == status, r.text[:400]
    assert r.headers["content-type"].startswith("application/problem+json")
    assert fragment in r.json()["detail"], r.text[:400]
    if loc is not None:
        assert r.json()["errors"][0]["loc"] == loc, r.text[:400]
    assert CANARY[:8] not in r.content


def test_without_data_parts_the_model_is_still_refused(client, beside_the_server):
    r = post(client, DIFF, parts({}))
    assert r.status_code == 400 and "external file" in r.json()["detail"], r.text[:300]


def test_the_inspect_route_takes_no_data_parts(client):
    """Only the engine routes read 'data' parts; a scan needs no weights (issue 46) and its form is as it was."""
    r = post(client, "/v1/models/inspect", parts())
    assert 400 <= r.status_code < 500, r.text[:300]


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not MemoryFile.available(), reason="memory files are Linux's memfd_create")
def test_no_memory_file_stays_open(client):
    """The diff route reads each part into a memory file and passes the built model in another: none stays open,
    whether the data resolves or is refused, from parts or a zip."""
    bodies = [parts(), parts(length="64"), parts({"other.bin": DATA}),
              (("model", "m.zip", zipped({"m.onnx": model(), "m.onnx.data": DATA})),),
              (("model", "m.zip", zipped({"m.onnx": model(length="64"), "m.onnx.data": DATA})),)]
    post(client, DIFF, bodies[0])
    before = _fds()
    for body in bodies * 2:
        assert post(client, DIFF, body).status_code in (200, 400)
    assert _fds() == before


def test_the_built_model_goes_in_bytes_where_no_memory_file_can_be_made(client, monkeypatch):
    """The memory file for the built model is an optimisation: where it cannot be made, the same answer."""
    expected = post(client, DIFF, parts()).json()

    def refuse(*a, **k):
        raise OSError(24, "Too many open files")
    monkeypatch.setattr(model_upload, "MemoryFile", type("Refused", (MemoryFile,), {"__init__": refuse}))
    r = post(client, DIFF, parts())
    assert r.status_code == 200 and r.json()["verdict"] == expected["verdict"], r.text[:300]


@pytest.mark.parametrize("url", [pytest.param(DIFF, id="diff"),
                                 pytest.param("/v1/models/chain?chain=onnx,openvino", id="chain")])
def test_a_torch_export_with_its_data_part_diffs_and_chains(client, tmp_path, url):
    """torch's default output (`block.onnx` + `block.onnx.data`) sent as curl sends two files."""
    torch = pytest.importorskip("torch")
    from tests.api.test_scan_without_weights import MobileBlock
    torch.manual_seed(46)
    path = tmp_path / "block.onnx"
    torch.onnx.export(MobileBlock().eval(), (torch.randn(1, 3, 16, 16),), str(path), dynamo=True,
                      external_data=True, verbose=False)
    r = post(client, url, (("model", "block.onnx", path.read_bytes()),
                           ("data", "block.onnx.data", path.with_name("block.onnx.data").read_bytes())))
    assert r.status_code == 200, r.text[:400]


def test_the_docs_example_is_what_its_script_builds():
    """docs/relu6_external.onnx and its .onnx.data, which docs/api.md's upload examples send, are
    `python docs/relu6_external_model.py`'s output, byte for byte."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    spec = importlib.util.spec_from_file_location("docs_relu6_external_model", docs / "relu6_external_model.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    built = script.build()
    assert built == ((docs / "relu6_external.onnx").read_bytes(), (docs / "relu6_external.onnx.data").read_bytes())


@pytest.mark.parametrize("way", ["zip", "parts"])
def test_building_the_model_holds_a_bounded_multiple_of_it(way):
    """docs/isolation.md: building the model with its data holds at most about five times the model limit (a zip),
    three times (parts), the upload included. tracemalloc sees Python's own allocations past the upload (the
    inflated entries, the copies, the serialization: measured 2.0x for a zip, 1.0x for parts, on 4 MiB of
    weights), not protobuf's parsed model (its own arena: at most the model once more)."""
    n = 1 << 20
    weights = bytes(range(256)) * (4 * n // 256)
    big = model(length=str(4 * n), dims=(n,))
    if way == "zip":
        upload = Upload(zipped({"m.onnx": big, "m.onnx.data": weights}, method=zipfile.ZIP_STORED))
    else:
        upload = Upload(big, data={"m.onnx.data": weights})
    tracemalloc.start()
    try:
        out = model_upload.resolve(upload, 64 * n)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(out) > 4 * n
    assert peak < (3 if way == "zip" else 2) * 4 * n, peak / (4 * n)


@pytest.mark.parametrize("location", [pytest.param("m.onnx.data", id="beside"),
                                      pytest.param("weights/m.bin", id="in-a-folder")])
def test_the_python_client_sends_the_data_beside_a_model_file(client, tmp_path, location):
    """Client.fix(path) sends each data file the model names beside it, as a 'data' part named by its location."""
    (tmp_path / location).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / location).write_bytes(DATA)
    (tmp_path / "m.onnx").write_bytes(model(location=location))
    fixed = Client(http=client).fix(tmp_path / "m.onnx", reference="onnxruntime", target="openvino")
    assert fixed.verdict == "equal" and fixed.model
