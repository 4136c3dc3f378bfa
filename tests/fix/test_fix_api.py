"""POST /v1/models/fix over HTTP: the body, every user error a 4xx naming its field, and a bounded, seeded
generator of clip-like chains (tests/fix/chains.py) that always gets a 200 and a proof without a clip difference."""

from __future__ import annotations

import base64
import io

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, assume, example, given, seed, settings
from hypothesis import strategies as st

from clipbridge.fix.models import FixResponse
from tests.fix import chains, models

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

FIX = "/v1/models/fix"
PROBLEM = "application/problem+json"


def _post(client, model: bytes, query: str = "reference=onnxruntime&target=openvino", inputs: bytes | None = None,
          extra: dict | None = None):
    files = {"model": ("m.onnx", model, "application/octet-stream")}
    if inputs is not None:
        files["inputs"] = ("x.npz", inputs, "application/octet-stream")
    files.update(extra or {})
    return client.post(f"{FIX}?{query}", files=files)


def _nan_pixel() -> bytes:
    x = np.random.default_rng(3).standard_normal(models.SHAPE).astype(np.float32)
    x[0, 0, 2, 5] = np.nan
    return _npz(x=x)


def test_body_has_rules_proof_cost_and_the_model(client):
    r = _post(client, models.mobilenet_like().SerializeToString(), inputs=_nan_pixel())
    assert r.status_code == 200, r.text
    body = FixResponse.model_validate(r.json())
    assert body.proof.verdict == "equal" and body.proof.inputs.source == "given"
    assert body.compared == {"onnxruntime": "the original model", "openvino": "the written model"}
    # Generated +-inf through the Conv: only the Conv may still differ (inf - inf summed in another order).
    assert all(not n.pattern for n in body.proof_generated.nodes if n.origin == "introduced")
    assert {x.node for x in body.rules_applied} == {"n4", "n5", "n6", "n8", "n9"}
    assert all(x.rule == "nan-guard" and x.cause == "nan-input" for x in body.rules_applied)
    assert body.cost.original_ms and body.cost.written_ms and body.cost.clean_identical
    written = onnx.load_from_string(base64.b64decode(body.model.onnx_base64))
    onnx.checker.check_model(written, full_check=True)


def test_deployed_precision_names_the_setting(client):
    """On a CPU where OpenVINO defaults to a half type, the response names the setting that removes it."""
    r = _post(client, models.clip(0.0, 6.0, conv=True).SerializeToString(),
              "reference=onnxruntime&target=openvino&precision=deployed")
    assert r.status_code == 200, r.text
    body = r.json()
    ran = body["proof"]["engines"][1]["precision"]
    advice = [a for a in body["advice"] if a["code"] == "inference-precision"]
    if ran in ("bf16", "f16"):
        assert advice and advice[0]["setting"] == {"INFERENCE_PRECISION_HINT": "f32"}
        assert advice[0]["alternative"] == {"EXECUTION_MODE_HINT": "ACCURACY"}
    else:
        assert advice == []


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


BAD = [
    ("unknown-engine", dict(query="reference=tensorrt&target=openvino"), "reference"),
    ("same-engine", dict(query="reference=openvino&target=openvino"), "target"),
    ("bad-precision", dict(query="reference=onnxruntime&target=openvino&precision=fast"), "precision"),
    ("garbage-model", dict(model=b"not a model"), "model"),
    ("empty-model", dict(model=b""), "model"),
    ("npz-not-zip", dict(inputs=b"nope"), "inputs"),
    ("npz-wrong-name", dict(inputs=_npz(z=np.zeros(models.SHAPE, np.float32))), "inputs"),
    ("npz-wrong-dtype", dict(inputs=_npz(x=np.zeros(models.SHAPE, np.float64))), "inputs"),
    ("unknown-field", dict(extra={"weights": ("w.bin", b"0", "application/octet-stream")}), "weights"),
    ("reference-refuses", dict(model=models.clip(6.0, 0.0, opset=6).SerializeToString()), "model"),
]


@pytest.mark.parametrize("kw,loc", [(c[1], c[2]) for c in BAD], ids=[c[0] for c in BAD])
def test_user_errors_are_4xx_naming_the_field(client, kw, loc):
    model = kw.pop("model", models.clip(0.0, 6.0).SerializeToString())
    r = _post(client, model, **kw)
    assert 400 <= r.status_code < 500, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    assert loc in [e["loc"] if isinstance(e["loc"], str) else e["loc"][-1] for e in r.json().get("errors", [])] \
        or loc in r.text, r.text


def test_raw_body_is_415(client):
    r = client.post(f"{FIX}?reference=onnxruntime&target=openvino", content=b"x",
                    headers={"content-type": "application/octet-stream"})
    assert r.status_code == 415


MAX_FIRST, MIN_FIRST = ("max", -1.0, True), ("min", 2.0, True)
SETTINGS = dict(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _proven(client, ops: list, opset: int, pair: tuple[str, str]) -> None:
    """The property: a 200 (a 4xx is a failure too: every generated chain is a valid model), and a proof that is
    `equal` with no clip-like node left introducing a difference."""
    r = _post(client, chains.chain(ops, opset).SerializeToString(), f"reference={pair[0]}&target={pair[1]}")
    assert r.status_code == 200, r.text
    proof = r.json()["proof"]
    left = proof["nodes"] + proof["masked"]["nodes"]  # a clip difference that reaches no output counts too
    assert [n for n in left if n["origin"] == "introduced" and n["pattern"]] == [], left
    assert proof["verdict"] == "equal", proof


@seed(25)
@settings(max_examples=12, **SETTINGS)
@given(ops=st.lists(chains.OPS, min_size=1, max_size=4), opset=st.sampled_from([13, 17, 21]), pair=chains.PAIRS)
@example(ops=[MAX_FIRST, ("neg",), MIN_FIRST], opset=17, pair=("onnxruntime", "openvino"))
@example(ops=[("min", 2.0, True), ("max", -1.0, False), ("clip",)], opset=17, pair=("onnxruntime", "openvino"))
@example(ops=[("max", -1.0, False), MIN_FIRST], opset=13, pair=("openvino", "onnxruntime"))
def test_generated_models_are_fixed_and_proven(client, ops, opset, pair):
    assume(not chains.fused_pair(ops, pair))  # the known gap: the strict xfail below
    _proven(client, ops, opset, pair)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="known gap (docs/testing.md): a Max next to a Min, "
                   "both with the constant first, fused by OpenVINO into a Clamp: the diff blames the output's "
                   "Identity (not-a-clip), the fix writes no rule for the pair, the proof differs")
@seed(25)
@settings(max_examples=4, **SETTINGS)
@given(before=st.lists(chains.OPS, max_size=1), after=st.lists(chains.OPS, max_size=1),
       order=st.sampled_from([(MAX_FIRST, MIN_FIRST), (MIN_FIRST, MAX_FIRST)]), pair=chains.PAIRS)
@example(before=[], after=[], order=(MAX_FIRST, MIN_FIRST), pair=("onnxruntime", "openvino"))
def test_generated_models_with_a_fused_pair_are_fixed_and_proven(client, before, after, order, pair):
    assume("openvino" in pair)
    _proven(client, [*before, *order, *after], 17, pair)
