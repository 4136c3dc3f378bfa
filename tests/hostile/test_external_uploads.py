"""Issue 46, item 3: the external-data attacks of tests/hostile/places.py, sent WITH data, the two ways a model's data
travels (a zip of the model and its files; 'data' form parts named by location), to every route that takes it.

The canary sits in the server's working directory, as in test_external_data.py. Each generated model names it (or a
symlink to it, a system file, a path through '..', absolute, empty), in every place a tensor can live, with every
offset and length. With a decoy data file that no location names, every answer is a 400 naming the model or the
data; with a data file named as the location itself (the sender's own zeros), the answer is whatever those bytes
make of the model, never a 5xx. Never a canary byte in any answer, and no model a sandbox worker gets for the diff
keeps an external tensor (everything it runs came from the upload, inline). The zip reader and the parts get
their own generators too: a good zip's bytes mutated, and a model and its data part mutated under drawn
filenames (CLIPBRIDGE_FUZZ_EXAMPLES=N runs N examples each, same seed).
"""

from __future__ import annotations

import io
import os
import zipfile

import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clipbridge.api import diff_routes
from clipbridge.api.model_form import readable
from clipbridge.scan.wire import _tensors, is_external
from tests.hostile.places import PLACES, external_model, external_models
from tests.hostile.strategies import mutated
from tests.hostile.test_external_data import CANARY, leaked

WAYS = ("zip", "parts")
ROUTES = {"diff": "/v1/models/diff?engine=onnxruntime,onnx-reference&probe=off",
          "fix": "/v1/models/fix?reference=onnxruntime&target=openvino",
          "chain": "/v1/models/chain?chain=onnx,openvino"}
BUDGET = int(os.environ.get("CLIPBRIDGE_FUZZ_EXAMPLES", "0"))  # 0: the default run's small budget
DECOY = "decoy.bin"
ZEROS = bytes(38)  # as long as the canary: a length that fits one fits the other


def _zip(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(zipfile.ZipInfo(name), data)
    return buf.getvalue()


def send(client, route: str, way: str, model: bytes, data: dict[str, bytes]):
    """`model` with `data` (name -> bytes) the `way` given, to `route`."""
    if way == "zip":
        return client.post(ROUTES[route], files={"model": ("m.zip", _zip({"m.onnx": model, **data}))})
    return client.post(ROUTES[route], files=[("model", ("m.onnx", model)),
                                             *(("data", (name, d)) for name, d in data.items())])


def location_of(model: bytes) -> str:
    m = onnx.load_from_string(model)
    return next(e.value for t in _tensors(m) if is_external(t) for e in t.external_data if e.key == "location")


@pytest.fixture
def diff_models(monkeypatch):
    """Every model the diff route hands to its sandbox worker, parsed."""
    seen: list[onnx.ModelProto] = []
    real = diff_routes.isolated

    def spy(stage, fn, model, *args):
        seen.append(onnx.load_from_string(bytes(readable(model))))
        return real(stage, fn, model, *args)
    monkeypatch.setattr(diff_routes, "isolated", spy)
    return seen


def still_external(models: list[onnx.ModelProto]) -> list[str]:
    return [t.name for m in models for t in _tensors(m) if is_external(t)]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("place", PLACES)
def test_a_location_next_to_the_server_with_a_decoy_is_refused(hostile_client, in_canary_dir, route, way, place):
    """The audit's hole, now with data in the upload: the location names the server's file, the upload carries
    another. A 400 naming the model (not in the upload), nothing read."""
    r = send(hostile_client, route, way, external_model(place, "canary.bin"), {DECOY: ZEROS})
    assert r.status_code == 400 and not leaked(r.content), (r.status_code, r.text[:300])
    assert r.json()["errors"][0]["loc"] == "model" and "not in the upload" in r.json()["detail"], r.text[:300]


@settings(max_examples=BUDGET or 40, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), route=st.sampled_from(list(ROUTES)), way=st.sampled_from(WAYS), named=st.booleans())
def test_no_upload_with_data_reads_the_servers_file(hostile_client, in_canary_dir, diff_models, data, route, way,
                                                    named):
    """Every generated location, offset and length, each way, each route: with a decoy every answer is a 400;
    with the location's own name the sender's zeros may run (200) or not (4xx); never a 5xx, never the canary,
    never an external tensor in what the diff's worker gets."""
    model = data.draw(external_models(str(in_canary_dir / "canary.bin")))
    name = location_of(model) if named else DECOY
    r = send(hostile_client, route, way, model, {name: ZEROS})
    assert r.status_code < 500 and not leaked(r.content), (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/problem+json") or r.status_code == 200
    if not named:
        assert r.status_code == 400, r.text[:300]
    assert still_external(diff_models) == []


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("place", PLACES)
def test_the_locations_own_name_runs_the_senders_bytes(hostile_client, in_canary_dir, diff_models, way, place):
    """The canary's own name, with the sender's 16 zero bytes under it: what runs is the sender's bytes, inline
    (200 where the engines take the place; a 4xx where they do not), never the server's file."""
    r = send(hostile_client, "diff", way, external_model(place, "canary.bin"), {"canary.bin": bytes(16)})
    assert r.status_code < 500 and not leaked(r.content), (r.status_code, r.text[:300])
    assert still_external(diff_models) == []
    if place == "initializer":
        assert r.status_code == 200 and diff_models, r.text[:300]


def _stored_or_deflated(method: int) -> bytes:
    """A good zip: a model whose 4 float32 weights are in 'w.bin' beside it."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr("m.onnx", external_model("initializer", "w.bin", "0", "16"))
        zf.writestr("w.bin", bytes(16))
    return buf.getvalue()


GOOD_ZIPS = [_stored_or_deflated(zipfile.ZIP_STORED), _stored_or_deflated(zipfile.ZIP_DEFLATED)]


@settings(max_examples=BUDGET or 60, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data(), which=st.integers(0, len(GOOD_ZIPS) - 1), route=st.sampled_from(["diff", "chain"]))
def test_mutated_zips_are_answered(hostile_client, in_canary_dir, data, which, route):
    """The zip reader (clipbridge.api.model_zip) on a good zip's bytes flipped, cut, grown or swapped: a 2xx or a
    4xx problem+json, never a 5xx, never the canary (chain: a zip that stops parsing is read as a .pt2)."""
    body = data.draw(mutated(GOOD_ZIPS[which]))
    r = hostile_client.post(ROUTES[route], files={"model": ("m.zip", body)})
    assert r.status_code < 500 and not leaked(r.content), (r.status_code, r.text[:300])
    assert r.status_code < 300 or r.headers["content-type"].startswith("application/problem+json")


@settings(max_examples=BUDGET or 40, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_data_parts_are_answered(hostile_client, in_canary_dir, data):
    """The model and its data part each mutated, with a drawn filename: never a 5xx, never the canary."""
    model = data.draw(mutated(external_model("initializer", "w.bin", "0", "16")))
    weights = data.draw(mutated(bytes(16)))
    name = data.draw(st.sampled_from(["w.bin", "./w.bin", "W.BIN", "w.bin/", "", "canary.bin", "link.bin",
                                      "sub/../w.bin", "\\w.bin", "C:\\w.bin", "w.bin\x00"]))
    r = send(hostile_client, "diff", "parts", model, {name: weights})
    assert r.status_code < 500 and not leaked(r.content), (r.status_code, r.text[:300])
    assert r.status_code < 300 or r.headers["content-type"].startswith("application/problem+json")
