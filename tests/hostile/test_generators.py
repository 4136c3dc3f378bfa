"""Generated hostile inputs against the ASGI app: every answer is 2xx, or 4xx application/problem+json.

Each test draws structurally valid artifacts (tests/hostile/strategies.py) and often mutates them. The seed
is fixed (derandomize) and the budget small in the default run; CLIPBRIDGE_FUZZ_EXAMPLES=N runs N examples per
test (with the same fixed seed, so a failure reproduces). Whatever these find is fixed at the decoder and kept
as a named case in test_regressions.py.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile.strategies import (dialect_specs, ir_models, multipart_bodies, mutated, npy_bodies, npy_url,
                                      onnx_models, translate_bodies)
from tests.scan.models import nested_if_model

BUDGET = int(os.environ.get("CLIPBRIDGE_FUZZ_EXAMPLES", "0"))


def budget(default: int):
    return settings(max_examples=BUDGET or default, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large, HealthCheck.large_base_example])


def answered(r, what) -> None:
    """The property: 2xx, or 4xx with an RFC 9457 body; never 5xx."""
    assert r.status_code < 500, (what, r.status_code, r.text[:400])
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/problem+json"), (what, r.headers)
        assert r.json()["status"] == r.status_code


OCTET = {"content-type": "application/octet-stream"}


@budget(60)
@given(model=onnx_models(), target=st.sampled_from([None, "openvino", "directml"]))
def test_generated_onnx_models_inspect_and_rewrite(hostile_client, model, target):
    answered(hostile_client.post("/v1/models/inspect", content=model, headers=OCTET), model)
    if target is not None:
        answered(hostile_client.post("/v1/models/rewrite", content=model, headers=OCTET,
                                     params={"target": target}), model)


@budget(60)
@given(body=translate_bodies())
def test_generated_translate_bodies(hostile_client, body):
    answered(hostile_client.post("/v1/translate", json=body), body)


@budget(50)
@given(ir=ir_models(), as_multipart=st.booleans())
def test_generated_ir_inspect(hostile_client, ir, as_multipart):
    xml, weights = ir
    if as_multipart:
        files = {"model": ("m.xml", xml, "text/xml")}
        if weights is not None:
            files["weights"] = ("m.bin", weights, "application/octet-stream")
        r = hostile_client.post("/v1/models/inspect", files=files)
    else:
        r = hostile_client.post("/v1/models/inspect", content=xml, headers={"content-type": "application/xml"})
    answered(r, ir)


@budget(80)
@given(npy=npy_bodies())
def test_generated_npy_bodies(hostile_client, npy):
    elem_type, body = npy
    answered(hostile_client.post(npy_url(elem_type), content=body,
                                 headers={"content-type": "application/x-npy"}), npy)


@budget(40)
@given(mp=multipart_bodies())
def test_generated_multipart_bodies(hostile_client, mp):
    body, ctype = mp
    answered(hostile_client.post("/v1/models/inspect", content=body, headers={"content-type": ctype}), mp)


# --- class 6: mutations of real models (docs/example.onnx, with large initializers) ---------------------------

REAL = [(Path(__file__).resolve().parents[2] / "docs" / "example.onnx").read_bytes(),
        nested_if_model(3, pad=2048)]


@budget(60)
@given(data=st.data(), which=st.integers(0, len(REAL) - 1),
       route=st.sampled_from(["inspect", "rewrite", "translate"]))
def test_mutated_real_models(hostile_client, data, which, route):
    model = data.draw(mutated(REAL[which]))
    if route == "translate":
        r = hostile_client.post("/v1/translate", json={"source": {"dialect": "onnx", "model":
                                                                  base64.b64encode(model).decode()},
                                                       "targets": ["openvino"]})
    else:
        r = hostile_client.post(f"/v1/models/{route}", content=model, headers=OCTET,
                                params={"target": "openvino"} if route == "rewrite" else None)
    answered(r, (which, route, model[:80]))


@budget(60)
@given(spec=dialect_specs(), mode=st.sampled_from(["preserve", "literal"]), data=st.data())
def test_generated_specs_of_every_dialect(hostile_client, spec, mode, data):
    """Every registered dialect's spec, mutated: translate into every dialect, execute and compare on a small
    input, each answered without a 5xx (what the per-dialect example tests cannot reach)."""
    from clipbridge.dialects import registry
    names = list(registry.names())
    answered(hostile_client.post("/v1/translate", json={"source": spec, "targets": names, "mode": mode}), spec)
    x = {"dtype": data.draw(st.sampled_from(["float32", "float16", "int8", "int32", "bfloat16", "uint64"])),
         "shape": [3], "data": [0, 1, "nan"]}
    semantics = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    answered(hostile_client.post("/v1/compare", json={"spec": spec, "input": x, "semantics": semantics,
                                                      "mode": mode}), (spec, semantics))
    answered(hostile_client.post("/v1/execute", json={"spec": spec, "input": x, "semantics": semantics[0],
                                                      "mode": mode}), (spec, semantics[0]))
