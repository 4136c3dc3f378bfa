"""Convert each stage of a chain and run it, through `execute(stage, fn, *args)` (the sandbox's run_isolated on the
server, in-process for the CLI and the bench, as clipbridge.diff.run's executors). A converter or engine that fails makes
that stage `failed` with a reduced error; the other stages go on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from clipbridge.chain import child_engines, child_torch, litert_table, lowering, stages
from clipbridge.chain.hops import Ran
from clipbridge.core.errors import ClipBridgeError

Execute = Callable[..., Any]


@dataclass
class Stage:
    name: str
    source: str | None = None  # the stage it is converted from
    status: str = "ok"  # ok | failed | not-installed | static (converted, not run: Core ML off Apple)
    error: str | None = None
    artifact: Any = None
    graph: dict[str, Any] | None = None
    lowering: list[dict[str, Any]] = field(default_factory=list)
    ran: Ran | None = None
    engine: dict[str, Any] = field(default_factory=dict)


def dist_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _fail(st: Stage, exc: BaseException, phase: str) -> None:
    st.status = "failed"
    text = exc.message if isinstance(exc, ClipBridgeError) else child_torch.reduce_error(exc)
    st.error = f"{phase}: {text}"[:400]


def convert(execute: Execute, st: Stage, chain: dict[str, Stage], model: bytes, inputs: list[dict]) -> None:
    """Make the stage's artifact and read its graph (static: nothing runs on inputs here)."""
    hint = stages.missing_converter(st.name)
    if hint:
        st.status, st.error = "not-installed", hint
        return
    prev = chain.get(st.source or "")
    try:
        if st.name == "onnx":
            st.artifact = model if st.source is None else execute("chain:onnx", child_torch.to_onnx, model)
            st.graph = execute("chain:onnx", child_engines.onnx_graph, st.artifact)
        elif st.name == "openvino":
            if st.source == "onnx" and prev is not None and prev.artifact:
                kind, data = "onnx", prev.artifact
            else:  # the nearest earlier readable stage: the ExportedProgram when onnx failed or is absent
                kind, data, st.source = "torch", model, "torch"
            st.artifact = execute("chain:openvino", child_torch.to_openvino, kind, data)
            st.graph = execute("chain:openvino", child_engines.ov_graph, *st.artifact)
        elif st.name in ("tflite", "tflite:builtin"):
            st.artifact = prev.artifact if prev is not None and prev.name == "tflite" and prev.artifact else \
                execute("chain:tflite", child_torch.to_tflite, model, inputs)
            st.graph = execute("chain:tflite", child_engines.tflite_graph, st.artifact)
        elif st.name == "coreml":
            st.graph = {"ops": execute("chain:coreml", child_torch.to_coreml, model)}
            st.status = "static"
    except Exception as exc:  # a converter's failure is a hop's result, never the whole answer's
        _fail(st, exc, "conversion")


def _ov_capture(group: list[dict]) -> list[str]:
    return [group[0]["input"], group[-1]["tensor"]] if group else []


def run_stage(execute: Execute, st: Stage, clips: list[dict], model: bytes, feeds: list[np.ndarray]) -> None:
    """Run the stage with its paired ops' inputs and outputs captured; fill st.ran and st.engine."""
    if st.status != "ok":
        return
    groups = {r["node"]: r.get("group", []) for r in st.lowering}
    try:
        if st.name == "torch":
            want = [c["node"] for c in clips] + [c["input"] for c in clips if c.get("input")]
            r = execute("chain:torch", child_torch.run_eager, model, feeds, want)
            st.ran = Ran("torch", r["outputs"], {c["node"]: (r["values"].get(c["input"]), r["values"].get(c["node"]))
                                                 for c in clips})
            st.engine.update(version=r["version"], precision="model")
            return
        capture = list(dict.fromkeys(t for g in groups.values() for t in _ov_capture(g) if t not in ("", None)))
        if st.name == "onnx":
            graph_in = dict(zip(st.graph["inputs"], feeds))
            r = execute("chain:onnx", child_engines.run_onnx, st.artifact, feeds,
                        [t for t in capture if t not in graph_in])
            r["values"].update(graph_in)
        elif st.name == "openvino":
            r = execute("chain:openvino", child_engines.run_openvino, *st.artifact, feeds, capture)
        else:
            r = execute(f"chain:{st.name}", child_engines.run_tflite, st.artifact, feeds,
                        st.name == "tflite:builtin", [int(t) for t in capture])
        tensors = {n: (r["values"].get(g[0]["input"]), r["values"].get(g[-1]["tensor"]))
                   for n, g in groups.items() if g}
        written = lowering.writers(st.graph) if st.name in stages.LITERT_STAGES and st.graph else []
        st.ran = Ran(st.name, r["outputs"], tensors, {n: g for n, g in groups.items() if g}, written)
        st.engine.update(version=str(r["version"]), precision=r["precision"])
    except Exception as exc:
        _fail(st, exc, "engine")


def read_lowering(st: Stage, clips: list[dict]) -> None:
    """The stage's static lowering table (and the pairing the run captures through)."""
    if st.name == "torch":
        st.lowering = [{"node": c["node"], "op": c["op"], "became": c["op"], "pairing": "source", "findings": [],
                        "group": []} for c in clips]
        return
    if st.status == "failed" and st.name == "coreml":
        st.lowering = lowering.table(clips, st.name, None)
        return
    if st.name in stages.LITERT_STAGES:  # read, or without a file predicted from the source (litert_static.py)
        st.lowering = litert_table.table(clips, st.name, st.graph)
        return
    st.lowering = lowering.table(clips, st.name, st.graph)
