"""The proof is a diff of two sides (issue 45 item 4): the caller's executor reaches the diff as it is (no
wrapper intercepts the diff's calls), and each engine runs its own side's model in every whole-model run the
diff makes (plain, marked, with replays folded in). The written model here is the original with a marker node
before its output, so that which engine ran which model is read from the models the engines were given, on any
host. (A node replayed alone is one node either way; the replay policy's own tests are the fix tests.)"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper

from clipbridge.diff import engines, run
from clipbridge.fix import proof
from tests.fix import models

pytest.importorskip("onnxruntime")
pytestmark = pytest.mark.engines

MARKER = "written_side_marker"
PAIRS = [pytest.param(("onnx-reference", "onnxruntime"), id="reference->ort"),
         pytest.param(("onnxruntime", "onnx-reference"), id="ort->reference")]


def _marked_copy(m: onnx.ModelProto) -> bytes:
    """The model with an Identity named MARKER before its output: computes the same, and can be told apart."""
    w = onnx.ModelProto()
    w.CopyFrom(m)
    out = w.graph.output[0].name
    for n in w.graph.node:
        n.output[:] = [f"{out}_before_marker" if o == out else o for o in n.output]
    w.graph.node.append(helper.make_node("Identity", [f"{out}_before_marker"], [out], name=MARKER))
    return w.SerializeToString()


def _npz(m: onnx.ModelProto) -> bytes:
    x = np.random.default_rng(5).standard_normal(models.SHAPE).astype(np.float32)
    x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    buf = io.BytesIO()
    np.savez(buf, **{m.graph.input[0].name: x})
    return buf.getvalue()


class Recorder:
    """A plain in-process executor that notes which model each engine run was given."""

    concurrent = True

    def __init__(self) -> None:
        self.ran: list[tuple[str, bool]] = []  # (engine, whether its model holds MARKER)

    def __call__(self, stage: str, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        nodes = onnx.load_from_string(args[1]).graph.node if fn is engines.run else []
        if len(nodes) > 1:  # a whole model, not a node replayed alone
            self.ran.append((args[0], MARKER in {n.name for n in nodes}))
        return fn(*args, **kwargs)


CASES = {"mobilenet-like": models.mobilenet_like, "clip-0-6": lambda: models.clip(0.0, 6.0)}


@pytest.mark.parametrize("pair", PAIRS)
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_each_engine_runs_its_own_side_with_the_callers_executor(case, pair, monkeypatch):
    m = CASES[case]()
    seen: list[Any] = []
    collect = run.collect
    monkeypatch.setattr(run, "collect", lambda execute, *a, **k: (seen.append(execute), collect(execute, *a, **k))[1])
    rec = Recorder()
    body = proof.prove(rec, m.SerializeToString(), _marked_copy(m), _npz(m), pair[0], pair[1], "model")
    assert seen and all(e is rec for e in seen), "the proof must hand the diff the caller's executor unwrapped"
    assert {e for e, _ in rec.ran} == set(pair)
    assert all(marked == (engine == pair[1]) for engine, marked in rec.ran), rec.ran
    assert body["verdict"] in ("equal", "explained", "unexplained")


def test_the_proof_module_defines_no_executor_wrapper():
    assert not hasattr(proof, "swapping")
