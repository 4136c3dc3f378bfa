"""The clip-like patterns: recognised from the graph alone, and each engine's NaN rule re-measured here."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import helper

from clipbridge.diff import engines
from clipbridge.scan.patterns import ENGINES, PATTERNS, find, nan_value
from tests.diff import models as M

F32_MIN, F32_MAX = float(np.finfo(np.float32).min), float(np.finfo(np.float32).max)
CASES = {  # id -> (nodes, initializers, expected pattern)
    "clip": ([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="n")],
             [M.const("lo", 0.0), M.const("hi", 6.0)], "clip"),
    "clip-max-only": ([helper.make_node("Clip", ["x", "", "hi"], ["y"], name="n")], [M.const("hi", 6.0)], "clip"),
    "clip-min-only": ([helper.make_node("Clip", ["x", "lo"], ["y"], name="n")], [M.const("lo", 0.0)], "clip"),
    "clip-crossed": ([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="n")],
                     [M.const("lo", 6.0), M.const("hi", 0.0)], "clip"),
    "relu": ([helper.make_node("Relu", ["x"], ["y"], name="n")], [], "relu"),
    "leaky-relu-alpha-0": ([helper.make_node("LeakyRelu", ["x"], ["y"], name="n", alpha=0.0)], [], "leaky-relu-0"),
    "hard-sigmoid": ([helper.make_node("HardSigmoid", ["x"], ["y"], name="n", alpha=1 / 6, beta=0.5)], [],
                     "hard-sigmoid"),
    "hard-swish": ([helper.make_node("HardSwish", ["x"], ["y"], name="n")], [], "hard-swish"),
    "max-tensor-first": ([helper.make_node("Max", ["x", "c"], ["y"], name="n")], [M.const("c", 0.0)],
                         "max-constant"),
    "max-constant-first": ([helper.make_node("Max", ["c", "x"], ["y"], name="n")], [M.const("c", 0.0)],
                           "max-constant"),
    "min-tensor-first": ([helper.make_node("Min", ["x", "c"], ["y"], name="n")], [M.const("c", 6.0)],
                         "min-constant"),
    "min-constant-first": ([helper.make_node("Min", ["c", "x"], ["y"], name="n")], [M.const("c", 6.0)],
                           "min-constant"),
}


def _model(case: str) -> bytes:
    nodes, inits, _ = CASES[case]
    return M.graph(nodes, inits, shape=(1,), opset=17)


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_recognised(case):
    [c] = find(onnx.load_from_string(_model(case))).values()
    assert c.pattern == CASES[case][2] and c.x == "x" and c.output == "y"


@pytest.mark.parametrize("nodes, inits", [
    pytest.param([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.1)], [], id="leaky-relu-alpha-0.1"),
    pytest.param([helper.make_node("Max", ["x", "x"], ["y"])], [], id="max-of-two-tensors"),
    pytest.param([helper.make_node("Max", ["x", "c"], ["y"])], [M.const("c", [0.0, 1.0])], id="max-tensor-bound"),
    pytest.param([helper.make_node("Sigmoid", ["x"], ["y"])], [], id="sigmoid"),
])
def test_not_clip_like(nodes, inits):
    shape = (2,) if inits and inits[0].dims == [2] else (1,)
    assert find(onnx.load_from_string(M.graph(nodes, inits, shape=shape, opset=17))) == {}


@pytest.mark.engines
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_nan_rule_measured(case, engine):
    """What each engine gives for a NaN input is what the pattern's rule predicts (None: NaN)."""
    model = _model(case)
    [c] = find(onnx.load_from_string(model)).values()
    got = float(engines.run(engine, model, {"x": np.array([np.nan], np.float32)}, [])["values"]["y"][0])
    want = nan_value(c, engine, F32_MIN, F32_MAX)
    assert (want is None and math.isnan(got)) or got == want, (got, want)


def test_every_pattern_cites_its_sources():
    for p in PATTERNS.values():
        assert p.sources.get("spec") and set(p.nan) == set(ENGINES), p.name


def test_scan_lists_clip_like_ops(client):
    """The scan (and so lint's JSON and the inspector) lists the clip-like ops beside the clips."""
    model = M.graph([helper.make_node("Relu", ["x"], ["r"], name="relu_1"),
                     helper.make_node("HardSigmoid", ["r"], ["h"], name="hsig_1"),
                     helper.make_node("Clip", ["h", "lo", "hi"], ["y"], name="clip_1")],
                    [M.const("lo", 0.0), M.const("hi", 6.0)], shape=(4,), opset=17)
    r = client.post("/v1/models/inspect", files={"model": ("m.onnx", model)})
    assert r.status_code == 200, r.text
    rows = {c["node"]: c for c in r.json()["clip_like"]}
    assert set(rows) == {"relu_1", "hsig_1"}  # the Clip is a clip of the scan, not listed twice
    assert rows["relu_1"]["nan_input"]["openvino"] == "zero" and rows["hsig_1"]["nan_input"]["openvino"] == "one"
    assert [c["node"] for c in r.json()["clips"]] == ["clip_1"]


def test_scan_table_names_the_clip_like_ops(tmp_path, capsys):
    from clipbridge.cli.main import main
    path = tmp_path / "m.onnx"
    path.write_bytes(M.hardsigmoid_chain())
    main(["scan", str(path)])
    out = capsys.readouterr().out
    assert "clip-like ops: 1 (not translated; `clipbridge diff` runs them)\n  hsig_1 (hard-sigmoid): NaN -> " \
           "onnxruntime propagate, openvino one, onnx-reference propagate\n" in out


@pytest.mark.parametrize(("count", "more"), [
    pytest.param(1, None, id="one"),
    pytest.param(20, None, id="exactly-shown"),
    pytest.param(42, "and 22 more (`--format json` lists every one)", id="issue-47-42-ops"),
])
def test_the_clip_like_list_is_one_line_each_and_counts_the_rest(count, more):
    from clipbridge.cli.output import CLIP_LIKE_SHOWN, clip_like_lines
    ops = [{"node": f"relu_{k}", "pattern": "relu", "nan_input": {"onnxruntime": "propagate", "openvino": "zero"}}
           for k in range(count)]
    lines = clip_like_lines(ops)
    assert lines[0].startswith(f"clip-like ops: {count} ")
    listed = [ln for ln in lines[1:] if ln.startswith("  relu_")]
    assert len(listed) == min(count, CLIP_LIKE_SHOWN) and all(len(ln) < 100 for ln in lines)
    assert (lines[-1].strip() if more else None) == more
