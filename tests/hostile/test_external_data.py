"""Issue 34: no model endpoint reads a file that is not part of the upload, in any place a tensor can live.

A canary file sits in the server's working directory (and a symlink to it next to it); every model endpoint
gets models whose tensors name it as external data, relative, absolute, through '..', through the symlink,
with huge offsets and lengths. No answer is a 5xx, and no answer carries the canary's bytes in any encoding an
engine or a JSON body would print them in (raw, decimal lists as onnxruntime prints a shape, hex, base64).

Issue 46: the routes that run engines (diff, fix, chain) refuse external data; the scan routes (inspect,
rewrite) need no weights and scan such a model without them, a location outside the folder still refused,
and no location of the upload ever reaches native code (clipbridge.scan.detach).
"""

from __future__ import annotations

import base64
import json

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clipbridge.core.errors import ArtifactError
from clipbridge.engines import native
from clipbridge.scan.detach import PREFIX
from clipbridge.scan.wire import ExternalDataRefused, _tensors, is_external, load_light, refuse_external
from tests.hostile.places import PLACES, external_locations, external_model, external_models

from tests.hostile.conftest import CANARY
ENDPOINTS = ("inspect", "rewrite", "diff", "fix", "chain", "translate")
SCAN_ENDPOINTS = ("inspect", "rewrite")  # issue 46: need no weights, scan without them
ENGINE_ENDPOINTS = ("diff", "fix", "chain")  # run engines, which would open the file: refuse it


def signatures(data: bytes) -> list[bytes]:
    """How the canary's first bytes could appear in an answer: raw, as byte lists, hex, base64, and read as the
    int64 or float32 values an engine would print (a Reshape's requested shape, a witness)."""
    head = data[:8]
    as_i64 = str(int(np.frombuffer(data[:8], "<i8")[0])).encode()
    as_f32 = [repr(float(v)).encode()[:9] for v in np.frombuffer(data[:8], "<f4")]
    return [head, ",".join(str(b) for b in head[:5]).encode(), ", ".join(str(b) for b in head[:5]).encode(),
            head.hex().encode(), base64.b64encode(data[:9]), head.decode("latin-1").encode("unicode_escape"),
            as_i64, *as_f32]


def leaked(body: bytes) -> list[bytes]:
    return [s for s in signatures(CANARY) if s in body]


def send(client, endpoint: str, model: bytes):
    files = {"model": ("m.onnx", model)}
    if endpoint == "inspect":
        return client.post("/v1/models/inspect", content=model, headers={"content-type": "application/octet-stream"})
    if endpoint == "rewrite":
        return client.post("/v1/models/rewrite?target=openvino", content=model,
                           headers={"content-type": "application/octet-stream"})
    if endpoint == "diff":
        return client.post("/v1/models/diff", files=files)
    if endpoint == "fix":
        return client.post("/v1/models/fix?reference=onnxruntime&target=openvino", files=files)
    if endpoint == "chain":
        return client.post("/v1/models/chain?chain=onnx,openvino", files=files)
    source = {"dialect": "onnx", "model": base64.b64encode(model).decode(), "node": "max"}
    return client.post("/v1/translate", content=json.dumps({"source": source}),
                       headers={"content-type": "application/json"})


@pytest.mark.parametrize("place", PLACES)
def test_every_place_a_tensor_lives_is_walked(place, canary_dir):
    """The one walk (clipbridge.scan.wire.refuse_external) finds the external tensor wherever it lives, wherever it
    points."""
    for location in external_locations(str(canary_dir / "canary.bin")):
        with pytest.raises(ExternalDataRefused, match="save_as_external_data=False"):
            refuse_external(external_model(place, location, "0", str(2**63)))


@pytest.fixture
def native_models(monkeypatch):
    """Every model the server hands to native code (checker, converter, shape inference), parsed: what the
    sandbox workers would see."""
    seen: list[onnx.ModelProto] = []
    real = native.run_isolated

    def spy(stage, fn, *args, **kw):
        seen.extend(onnx.load_from_string(a) for a in args if isinstance(a, bytes))
        return real(stage, fn, *args, **kw)
    monkeypatch.setattr(native, "run_isolated", spy)
    return seen


def upload_locations(models: list[onnx.ModelProto]) -> list[str]:
    """The external data locations in `models` that are not clipbridge's own detached sentinels."""
    return [e.value for m in models for t in _tensors(m) if is_external(t) for e in t.external_data
            if e.key == "location" and not e.value.startswith(PREFIX)]


def leaves_the_folder(model: bytes) -> bool:
    """Whether the wire walk refuses the model's location (absolute, '..', a drive, empty): then a 400."""
    try:
        load_light(model)
    except ArtifactError:
        return True
    return False


@pytest.mark.parametrize("endpoint", (*ENGINE_ENDPOINTS, "translate"))
@pytest.mark.parametrize("place", PLACES)
def test_a_relative_location_next_to_the_server_is_refused(hostile_client, in_canary_dir, endpoint, place):
    """The audit's hole: a relative location resolved in the server's directory. Refused (400 naming the tensor)
    on every endpoint that runs engines; translate reads only a node's bounds and never opens it either. (Issue
    46 moved inspect and rewrite to the next test: they scan such a model without its data.)"""
    r = send(hostile_client, endpoint, external_model(place, "canary.bin"))
    assert r.status_code < 500 and not leaked(r.content), (r.status_code, r.text[:300])
    if endpoint != "translate":
        assert r.status_code == 400 and "external file" in r.json()["detail"], r.text[:300]
        assert "save_as_external_data=False" in r.json()["detail"]


@pytest.mark.parametrize("endpoint", SCAN_ENDPOINTS)
@pytest.mark.parametrize("place", PLACES)
def test_the_scan_routes_scan_it_without_the_data(hostile_client, in_canary_dir, native_models, endpoint, place):
    """Issue 46: inspect and rewrite answer 200 on a relative location next to the server, list the tensor as
    external (inspect) or give the model back with the location as sent (rewrite), carry no canary byte, and
    no native code sees the upload's location (each is detached to clipbridge's own '#' sentinel)."""
    r = send(hostile_client, endpoint, external_model(place, "canary.bin"))
    assert r.status_code == 200 and not leaked(r.content), (r.status_code, r.text[:300])
    assert upload_locations(native_models) == []
    if endpoint == "inspect":
        assert r.json()["model"]["external_tensors"] in (["w"], ["w_idx"])
    else:
        assert native_models, "the spy is live: rewrite runs onnx.checker in a worker"
        assert any(is_external(t) for m in native_models for t in _tensors(m))  # detached, not dropped
        assert upload_locations([onnx.load_from_string(r.content)]) == ["canary.bin"]


@settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), endpoint=st.sampled_from(ENDPOINTS))
def test_no_answer_carries_the_canary(hostile_client, in_canary_dir, data, endpoint):
    """Every location (relative, './', '..', absolute, symlink, a system file), offset and length, in every place:
    no 5xx, no canary byte in the answer. Engine routes refuse every one; the scan routes (issue 46) refuse a
    location outside the folder and scan the rest without opening it."""
    model = data.draw(external_models(str(in_canary_dir / "canary.bin")))
    r = send(hostile_client, endpoint, model)
    assert r.status_code < 500, (r.status_code, r.text[:300])
    assert not leaked(r.content), r.text[:300]
    if endpoint in ENGINE_ENDPOINTS:
        assert r.status_code == 400, r.text[:300]
    elif endpoint in SCAN_ENDPOINTS:
        assert r.status_code == (400 if leaves_the_folder(model) else 200), r.text[:300]


@pytest.mark.parametrize("endpoint", ENDPOINTS[:5])
def test_bytes_the_walk_cannot_read_are_refused_too(hostile_client, in_canary_dir, endpoint):
    """Fail closed: protobuf accepts an unknown group field that the wire walk refuses, so an external tensor
    behind one would reach the engines if the guard let unreadable bytes through."""
    from clipbridge.scan.wire import encode_varint
    group = encode_varint(100 << 3 | 3) + encode_varint(100 << 3 | 4)
    r = send(hostile_client, endpoint, external_model("initializer", "canary.bin") + group)
    assert r.status_code == 400 and not leaked(r.content), r.text[:300]
