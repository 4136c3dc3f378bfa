"""app/clipbridge/diff/graph_view: which nodes the inspector draws for a diff, and the bound on that answer."""

from __future__ import annotations

import numpy as np
import pytest

from clipbridge.diff import graph_view
from clipbridge.diff.child import NodeInfo, Plan


def chain(n: int, branch: bool = False) -> Plan:
    """x -> n0 -> n1 -> ... -> y; with branch, a side node s reading x that reaches no differing node."""
    nodes = [NodeInfo(f"n{i}", "Relu", ["x" if i == 0 else f"t{i - 1}", "w"], [f"t{i}"]) for i in range(n)]
    if branch:
        nodes.append(NodeInfo("s", "Abs", ["x"], ["side"]))
    return Plan(nodes=nodes, clips={}, feeds={"x": np.zeros(1)}, given=False,
                outputs=[f"t{n - 1}", *(["side"] if branch else [])], constants={"w"})


def body(*differing: str) -> dict:
    return {"nodes": [{"node": d} for d in differing],
            "first_divergence": {"node": differing[0], "op": "Relu"} if differing else None}


@pytest.mark.parametrize("plan, diff, scope, drawn", [
    pytest.param(chain(4, branch=True), body("n1"), "paths", ["n0", "n1", "n2", "n3"], id="paths-skip-side-branch"),
    pytest.param(chain(3), body("n0", "n2"), "paths", ["n0", "n1", "n2"], id="several-differing"),
    pytest.param(chain(400), body("n200"), "neighbourhood-3",
                 [f"n{i}" for i in range(197, 204)], id="large-model-neighbourhood"),
])
def test_drawn_nodes(plan, diff, scope, drawn):
    g = graph_view.view(plan, diff)
    assert g["scope"] == scope and [n["name"] for n in g["nodes"]] == drawn
    assert g["total_nodes"] == len(plan.nodes) and not g["truncated"]


def test_constants_are_left_out_and_inputs_outputs_named():
    g = graph_view.view(chain(2), body("n0"))
    assert g["nodes"][0]["inputs"] == ["x"] and g["inputs"] == ["x"] and g["outputs"] == ["t1"]


def test_nothing_differs_nothing_to_draw():
    assert graph_view.view(chain(3), body()) is None


def test_the_answer_is_bounded():
    """Thousands of differing nodes and long names: at most MAX_NODES nodes, names cut, ports capped."""
    n = 3 * graph_view.MAX_NODES
    nodes = [NodeInfo("n" * 500 + str(i), "Concat", [f"x{j}" for j in range(100)], [f"t{i}"]) for i in range(n)]
    plan = Plan(nodes=nodes, clips={}, feeds={}, given=False, outputs=[], constants=set())
    g = graph_view.view(plan, body(*(x.name for x in nodes)))
    assert g["truncated"] and len(g["nodes"]) == graph_view.MAX_NODES
    assert all(len(x["name"]) <= graph_view.MAX_NAME and len(x["inputs"]) <= graph_view.MAX_PORTS for x in g["nodes"])


def test_the_edge_section_is_drawn_from_the_edge_passs_own_plan(monkeypatch):
    """diff_body draws `edge.graph` from the plan the edge pass read, not the ordinary pass's: an If on a graph
    input may take another branch on the edge sample, so its nodes can differ. No edge plan (the probe's own
    error): no edge graph."""
    from clipbridge.diff import isolated, report, run

    ordinary, edge_plan = chain(3), chain(5)
    edge = {"verdict": "explained", "nodes": [{"node": "n4"}], "first_divergence": {"node": "n4", "op": "Relu"}}
    runs = run.Runs(plan=ordinary, values={}, info={}, edge_plan=edge_plan)
    monkeypatch.setattr(report, "diff", lambda *a: ({**body(), "edge": dict(edge)}, runs))
    out = isolated.diff_body(b"", None, run.Options(), graph=True)
    assert out["graph"] is None and out["edge"]["graph"]["total_nodes"] == 5
    assert "n4" in [n["name"] for n in out["edge"]["graph"]["nodes"]]
    runs.edge_plan = None
    assert isolated.diff_body(b"", None, run.Options(), graph=True)["edge"]["graph"] is None
