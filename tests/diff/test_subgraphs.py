"""The diff and the fix walk If branches and Loop/Scan bodies (app/clipbridge/diff/subgraphs.py, app/clipbridge/fix/scopes.py): body
nodes named by their full path, captured through extra outputs on the real engines, causes attributed inside,
fixes written inside and proven by the re-diff; a body with no view says so instead of blaming its node."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from clipbridge.diff import report, run
from clipbridge.fix import service
from tests.diff import models_subgraphs as S
from tests.diff.conftest import npz

pytestmark = pytest.mark.engines
ROOT = Path(__file__).resolve().parents[2]
X = np.linspace(-4, 4, S.N, dtype=np.float32).reshape(1, S.N)
X[0, 3] = np.nan


def diff(model: bytes, inputs: bytes | None = None) -> dict:
    return report.diff(run.direct, model, inputs, run.Options())[0]


def _rows(body: dict) -> dict[str, dict]:
    return {n["node"]: n for n in body["nodes"]}


def test_docs_example_names_the_clip_in_the_branch_and_the_fix_proves_equal():
    """Issue 44: the ordinary sample's outputs agree (equal); the NaN through the branch's Clip is the edge
    probe's (its own section, explained there)."""
    model = (ROOT / "docs" / "example.onnx").read_bytes()
    whole = report.diff(run.direct, model, None, run.Options(probe="edge"))[0]
    assert whole["verdict"] == "equal" and whole["inputs"]["sample"] == "ordinary"
    body = whole["edge"]
    assert body["verdict"] == "explained" and body["inputs"]["sample"] == "edge"
    row = _rows(body)["gate/then_branch/relu6_then"]
    assert (row["op"], row["origin"], row["cause"]) == ("Clip", "introduced", "nan-input")
    assert "gate" not in _rows(body)
    assert whole["subgraphs"][0]["walked"] and whole["subgraphs"][0]["graph"] == "gate/then_branch"
    fixed = service.fix(model, None, "onnxruntime", "openvino", execute=run.direct, rounds=3)
    assert fixed.body["verdict"] == "equal"
    assert "gate/then_branch/relu6_then" in {r["node"] for r in fixed.body["rules_applied"]}
    assert fixed.body["cost"]["clean_identical"] is True


@pytest.mark.parametrize("flag, walked_graph, differs", [
    pytest.param(True, "gate/then_branch", True, id="then-branch-taken"),
    pytest.param(False, "gate/else_branch", False, id="else-branch-taken"),
])
def test_if_walks_the_branch_taken(flag, walked_graph, differs):
    body = diff(S.if_clip(), npz(x=X, flag=np.array(flag)))
    [view] = body["subgraphs"]
    assert view["walked"] and view["graph"] == walked_graph and str(flag) in view["view"]
    if differs:
        assert body["verdict"] == "explained"
        assert body["first_divergence"] == {"node": "gate/then_branch/relu6_then", "op": "Clip"}
        row = _rows(body)["gate/then_branch/relu6_then"]
        assert (row["origin"], row["cause"], row["witness"]["input"]) == ("introduced", "nan-input", "nan")
    else:
        assert body["verdict"] == "equal"


def test_if_with_a_computed_condition_says_it_was_not_walked():
    body = diff(S.if_clip(computed_cond=True), npz(x=X, k=np.array(1.0, np.float32)))
    [view] = body["subgraphs"]
    assert not view["walked"] and "computed at run time" in view["reason"]
    row = _rows(body)["gate"]
    assert row["cause"] is None and "body not walked" in row["detail"]
    assert body["verdict"] == "unexplained"


@pytest.mark.parametrize("build, feeds, node, holder", [
    pytest.param(S.loop_clip, {"x": X}, "repeat/body/relu6_body", "repeat", id="loop-body"),
    pytest.param(S.scan_clip, {"x": np.repeat(X, 4, axis=0)}, "rows/body/relu6_row", "rows", id="scan-body"),
])
def test_loop_and_scan_bodies_are_walked_each_iteration(build, feeds, node, holder):
    body = diff(build(), npz(**feeds))
    assert body["verdict"] == "explained"
    rows = _rows(body)
    assert (rows[node]["origin"], rows[node]["cause"]) == ("introduced", "nan-input")
    assert holder not in rows  # the Loop/Scan carries its body's difference, it does not introduce one
    assert body["subgraphs"][0]["view"] == "each iteration, stacked on axis 0"


@pytest.mark.parametrize("build, feeds", [
    pytest.param(S.if_clip, {"x": X, "flag": np.array(True)}, id="if"),
    pytest.param(S.loop_clip, {"x": X}, id="loop"),
    pytest.param(S.scan_clip, {"x": np.repeat(X, 4, axis=0)}, id="scan"),
])
def test_fix_rewrites_inside_bodies_and_proves_equal(build, feeds):
    model = build()
    fixed = service.fix(model, npz(**feeds), "onnxruntime", "openvino", execute=run.direct, rounds=3)
    assert fixed.body["verdict"] == "equal", fixed.body["proof"]["nodes"]
    assert all("/" in r["node"] for r in fixed.body["rules_applied"] if r["op"] == "Clip")
    onnx.checker.check_model(onnx.load_from_string(fixed.model), full_check=True)
    assert fixed.body["cost"]["clean_identical"] is True


def test_over_http_the_sandboxed_diff_walks_the_branch(client):
    """The server runs every step in the sandbox: the body is exposed, walked and named there too."""
    from clipbridge.diff.models import DiffResponse
    from tests.diff.test_api_diff import post

    r = post(client, (ROOT / "docs" / "example.onnx").read_bytes())
    assert r.status_code == 200, r.text
    body = r.json()
    DiffResponse.model_validate(body)
    assert body["verdict"] == "equal" and body["fails"] is False  # the ordinary sample (issue 44)
    assert body["edge"]["verdict"] == "explained"  # the edge probe, the API's default
    assert "gate/then_branch/relu6_then" in {n["node"] for n in body["edge"]["nodes"]}


def test_a_local_function_is_inlined_and_its_clip_named():
    """onnxruntime inlines local functions itself; the walk names the function's Clip by its path, and the
    omitted max reads as FLT_MAX there and as an open side on onnx.reference (default-bound)."""
    x = X.copy()
    x[0, 5] = np.inf
    body = report.diff(run.direct, S.function_clip(), npz(x=x), run.Options(("onnxruntime", "onnx-reference")))[0]
    [view] = body["subgraphs"]
    assert view["walked"] and view["graph"] == "act/local.OpenRelu"
    row = _rows(body)["act/local.OpenRelu/clip_in_fn"]
    assert (row["origin"], row["cause"]) == ("introduced", "default-bound")


def test_an_engine_that_refuses_the_exposed_bodies_leaves_them_unwalked(monkeypatch):
    """Exposing a body must never cost the answer: the diff walks the main graph, and says why not the body."""
    from clipbridge.diff import engines

    real = engines.run

    def refusing(engine, model, *rest, **kw):
        if engine == "openvino" and b"clipbridge_empty/" in model:  # the exposed If only
            raise engines.EngineCannotLoad("openvino cannot load the model: refused", "model")
        return real(engine, model, *rest, **kw)
    monkeypatch.setattr(engines, "run", refusing)
    body = diff(S.if_clip(), npz(x=X, flag=np.array(True)))
    [view] = body["subgraphs"]
    assert not view["walked"] and "refused" in view["reason"]
    assert "body not walked" in _rows(body)["gate"]["detail"]
