"""Model-local functions, inlined for the diff's walk: each call's nodes become main-graph nodes named by their
full path (`act/local.Relu6/clip_in_fn`), its own tensors renamed alike. onnxruntime inlines local
functions itself when it loads a model (OpenVINO 2026.4 refuses them), so the walked model computes what the engine runs; the plain runs
still get the model as it was (the observer check compares the two). A function that reads attributes of its
call, or that calls another local function, is left as it is and reported not walked.

Runs in a sandbox child with clipbridge.diff.subgraphs (it edits the parsed model).
"""

from __future__ import annotations

import onnx

LOCAL = "local function"


def _name(n: onnx.NodeProto) -> str:
    return n.name or (n.output[0] if n.output else n.op_type)


def _inlinable(f: onnx.FunctionProto, local: set[tuple[str, str]]) -> str | None:
    """Why a function cannot be inlined here, or None."""
    if f.attribute or f.attribute_proto:
        return "it reads attributes of its call"
    if any((n.domain, n.op_type) in local for n in f.node):
        return "it calls another local function"
    return None


def _call(n: onnx.NodeProto, f: onnx.FunctionProto) -> list[onnx.NodeProto]:
    path = f"{_name(n)}/{f.domain}.{f.name}/"
    rename = {**dict(zip(f.input, n.input)), **dict(zip(f.output, n.output))}
    out = []
    for p in f.node:
        c = onnx.NodeProto()
        c.CopyFrom(p)
        c.name = path + _name(p)
        c.input[:] = [rename.get(i, path + i) if i else i for i in p.input]
        c.output[:] = [rename.get(o, path + o) if o else o for o in p.output]
        out.append(c)
    return out


def inline(m: onnx.ModelProto) -> list[dict]:
    """Inline every call of an inlinable local function in the main graph (in place); a view per call."""
    if not m.functions:
        return []
    funcs = {(f.domain, f.name): f for f in m.functions}
    have = {o.domain: o.version for o in m.opset_import}
    views, nodes = [], []
    for n in m.graph.node:
        f = funcs.get((n.domain, n.op_type))
        if f is None:
            nodes.append(n)
            continue
        why = _inlinable(f, set(funcs)) or next((f"it imports {o.domain or 'ai.onnx'} {o.version}, the model "
                                                f"{have.get(o.domain)}" for o in f.opset_import
                                                if o.domain in have and have[o.domain] != o.version), None)
        graph = f"{_name(n)}/{f.domain}.{f.name}"
        if why:
            views.append({"node": _name(n), "op": n.op_type, "walked": False, "graph": graph, "view": None,
                          "reason": f"{LOCAL} not inlined: {why}"})
            nodes.append(n)
            continue
        views.append({"node": _name(n), "op": n.op_type, "walked": True, "graph": graph,
                      "view": f"{LOCAL}, inlined (as onnxruntime loads it; OpenVINO 2026.4 refuses local functions)", "reason": None})
        nodes += _call(n, f)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    return views
