"""The walk: nodes in topological order, each differing node introduced or inherited, with its cause."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from clipbridge.diff import causes, op_causes, outcome, passes, precision, probe, quantized, run, sides, tolerance
from clipbridge.diff import trace
from clipbridge.diff import plain as plain_runs
from clipbridge.engines import threads
from clipbridge.diff.child import NodeInfo
from clipbridge.diff.sites import Graph
from clipbridge.scan.patterns import PATTERNS
from clipbridge.core.numbers import wire_number

MAX_REPLAYS = 64  # clip-like nodes replayed per diff; later ones are reported without a cause


def _num(v: Any) -> Any:
    x = np.asarray(v).reshape(()).item()
    return wire_number(float(x)) if isinstance(x, float) else wire_number(x)


def _index(shape: tuple[int, ...], flat: int) -> list[int]:
    return [int(i) for i in np.unravel_index(flat, shape)] if shape else []


class Walk:
    def __init__(self, execute: run.Execute, model: bytes, runs: run.Runs, opts: run.Options) -> None:
        self.execute, self.model, self.runs, self.opts = execute, model, runs, opts
        self.origin: dict[str, list[str]] = {}  # differing tensor -> the introduced nodes it came from
        self.cause_of: dict[str, str | None] = {}
        self.nodes: list[dict[str, Any]] = []
        self.first: dict[str, str] | None = None
        self.replays = 0
        self.graph = Graph(runs.model or model)  # attributes and constants, read when a rule beyond clips needs them
        if quantized.has_qdq([n.op for n in runs.plan.nodes]):  # each clip-like node's int8 grid, if any
            quantized.attach(runs.plan.clips, execute("diff:prepare", quantized.grids, runs.model or model))

    def _topological(self, names: list[str]) -> list[str]:
        order = {n.name: i for i, n in enumerate(self.runs.plan.nodes)}
        return sorted(names, key=lambda n: order.get(n, len(order)))

    def _precisions(self) -> dict[str, str]:
        return {e: str(self.runs.info[e]["precision"]) for e in self.opts.engines}

    def _kernels(self) -> dict[str, dict]:
        return {e: self.runs.info[e]["kernels"] for e in self.opts.engines}

    def _dtype(self, tensor: str) -> str:
        a = self.runs.values[self.opts.engines[0]].get(tensor)
        return a.dtype.name if a is not None else self.runs.plan.dtypes.get(tensor, "float32")

    def node(self, n: NodeInfo) -> None:
        masks = {o: run.differs(self.runs, o, self.opts) for o in n.outputs if o}
        out = n.outputs[0] if n.outputs else ""
        mask = masks.get(out)
        ins = [i for i in n.inputs if i and i not in self.runs.plan.constants]
        upstream = sorted({o for i in ins for o in self.origin.get(i, [])} | self._from_body(n))
        if mask is None:  # not captured (bounded marking, bisection): a difference may pass through it
            self.origin.update({o: upstream for o in n.outputs if o and upstream})
            return
        if not mask.any():
            return
        if self.first is None:
            self.first = {"node": n.name, "op": n.op}
        clip = self.runs.plan.clips.get(n.name)
        if clip is not None:
            row = self._clip(n, clip, mask, upstream)
        elif not upstream and not any(self._input_differs(i) for i in ins):
            row = self._not_a_clip(n, mask)
        else:
            row = None
        introduced = row is not None and row["origin"] == "introduced"
        for o, m in masks.items():
            if m is not None and m.any():
                self.origin[o] = sorted(set(upstream) | ({n.name} if introduced else set()))
        if row is not None:
            self.cause_of[n.name] = row["cause"]
            self.nodes.append(row)

    def _from_body(self, n: NodeInfo) -> set[str]:
        """A walked Loop/Scan's own outputs carry what its body's nodes introduced (clipbridge.diff.subgraphs)."""
        if not any(v["node"] == n.name and v["walked"] for v in self.runs.views):
            return set()
        return {o for t, origins in self.origin.items() if t.startswith(n.name + "/") for o in origins}

    def _input_differs(self, tensor: str) -> bool:
        if tensor in self.runs.plan.feeds:
            return False  # every engine is fed the same graph inputs
        m = run.differs(self.runs, tensor, self.opts)
        return m is None or bool(m.any())

    def _row(self, n: NodeInfo, mask: np.ndarray, **kw: Any) -> dict[str, Any]:
        return {"node": n.name, "op": n.op, "pattern": None, "differing": int(mask.sum()), "total": int(mask.size),
                **kw}

    def _not_a_clip(self, n: NodeInfo, mask: np.ndarray) -> dict[str, Any]:
        """Inputs equal, output differs, and the node is no clip: clipbridge names no clip rule for it; OpenVINO's
        runtime model may still say the kernel ran narrower (inference-precision)."""
        body = next((v for v in self.runs.views if v["node"] == n.name and not v["walked"]), None)
        if body is not None:  # the difference arose inside a body no engine lets us read: say so, guess nothing
            return self._row(n, mask, origin="introduced", cause=None, witness=None,
                             detail=f"{n.op} body not walked ({body['graph']}): {body['reason']}")
        out = n.outputs[0]
        beyond = self._beyond_clips(n, mask)
        if beyond is not None:
            return beyond
        note = causes.narrower(self._kernels(), self._precisions(), n.name, self._dtype(out)) or \
            precision.other(self._precisions(), precision.float_type(self._dtype(t) for t in [*n.inputs, out] if t))
        flat = int(np.flatnonzero(mask.reshape(-1))[0])
        witness = self._captured_witness(n, out, flat)
        return self._row(n, mask, origin="introduced", cause="inference-precision" if note else "not-a-clip",
                         detail=note, witness=witness)

    def _beyond_clips(self, n: NodeInfo, mask: np.ndarray) -> dict[str, Any] | None:
        """A rule beyond clips (clipbridge.diff.op_causes) that explains every differing element, witnessed."""
        if n.op not in op_causes.OPS and self._dtype(n.outputs[0]) != "int64":  # int64: int64_as_int32, any op
            return None
        site = self.graph.site(n, {e: {**self.runs.plan.feeds, **self.runs.values[e]} for e in self.opts.engines})
        found = op_causes.node_cause(site, mask) if site is not None else None
        if found is None:
            return None
        cause, flat, detail, counts = found
        return self._row(n, mask, origin="introduced", cause=cause, causes=counts, detail=detail,
                         witness=self._captured_witness(n, n.outputs[0], flat))

    def _captured_witness(self, n: NodeInfo, out: str, flat: int) -> dict[str, Any]:
        x = next((i for i in n.inputs if i and i not in self.runs.plan.constants), None)
        vals = {e: self.runs.values[e] for e in self.opts.engines}
        same_shape = x is not None and all(x in v and v[x].shape == v[out].shape for v in vals.values())
        return {"index": _index(vals[self.opts.engines[0]][out].shape, flat),
                "input": {e: _num(v[x].reshape(-1)[flat]) for e, v in vals.items()} if same_shape else None,
                "outputs": {e: _num(v[out].reshape(-1)[flat]) for e, v in vals.items()}}

    def _clip(self, n: NodeInfo, clip: Any, mask: np.ndarray, upstream: list[str]) -> dict[str, Any]:
        if self.replays >= MAX_REPLAYS:
            return self._row(n, mask, pattern=clip.pattern, origin=None, cause=None,
                             detail=f"not replayed: more than {MAX_REPLAYS} clip-like nodes differ", witness=None)
        bounds = [i for i in n.inputs[1:] if i and i != clip.x and i not in self.runs.plan.constants]
        if upstream and any(self._input_differs(b) for b in bounds):
            # A bound computed at run time differs (T5's clamp_value): every element may have come in with it.
            return self._inherited(n, clip, mask, upstream)
        x_mask = run.differs(self.runs, clip.x, self.opts) if clip.x not in self.runs.plan.feeds else None
        if x_mask is not None and x_mask.shape == mask.shape and not (mask & ~x_mask).any():
            # Clip-like ops are element-wise: where the inputs agree, a replay on the same input gives what
            # the marked run gave; every differing element has differing inputs, so nothing is introduced.
            return self._inherited(n, clip, mask, upstream)
        self.replays += 1
        r = run.replay(self.execute, self.runs.models, self.runs, n, self.opts)  # each side's model
        outs = r["outputs"]
        first = outs[self.opts.engines[0]]
        rmask = np.zeros(first.shape, dtype=bool)
        for e in self.opts.engines[1:]:
            rmask |= run.compare.differing(first, outs[e], self.opts.rtol, self.opts.atol)
        x = r["feeds"][clip.x]
        if x_mask is not None and x_mask.shape == rmask.shape:
            rmask &= ~x_mask  # where the engines' inputs differ, the output's difference came in with them
        if not rmask.any():
            in_model = mask & ~x_mask if x_mask is not None and x_mask.shape == mask.shape else None
            if in_model is not None and in_model.any():  # alone it agrees, in the model it does not
                return self._in_model(n, clip, mask, in_model)
            return self._inherited(n, clip, mask, upstream)
        dtype = x.dtype.name
        note = causes.narrower(r["kernels"], self._precisions(), n.name, dtype) or \
            causes.narrower(self._kernels(), self._precisions(), n.name, dtype)
        cause, flat, counts = causes.node_cause(clip, x, outs, rmask, note)
        witness = {"index": _index(x.shape, flat), "input": _num(x.reshape(-1)[flat]),
                   "outputs": {e: _num(o.reshape(-1)[flat]) for e, o in outs.items()}}
        return self._row(n, mask, pattern=clip.pattern, origin="introduced", cause=cause, causes=counts,
                         replay_differing=int(rmask.sum()), detail=note if cause == "inference-precision" else None,
                         witness=witness)

    def _in_model(self, n: NodeInfo, clip: Any, mask: np.ndarray, where: np.ndarray) -> dict[str, Any]:
        """Its own inputs, captured in the same run, agree and its output does not, though the node alone agrees:
        the engine computed it with its neighbours (a QDQ clip run as an integer kernel). Introduced here; the
        cause comes from the captured tensors."""
        vals = {e: self.runs.values[e] for e in self.opts.engines}
        x = vals[self.opts.engines[0]][clip.x]
        outs = {e: v[n.outputs[0]] for e, v in vals.items()}
        cause, flat, counts = causes.node_cause(clip, x, outs, where, None)
        return self._row(n, mask, pattern=clip.pattern, origin="introduced", cause=cause, causes=counts,
                         replay_differing=0, witness=self._captured_witness(n, n.outputs[0], flat),
                         detail="the node alone agrees on these inputs; in the model the engine computed it "
                                "with its neighbours" + (" (a quantized kernel)" if clip.params.get("grid") else ""))

    def _inherited(self, n: NodeInfo, clip: Any, mask: np.ndarray, upstream: list[str]) -> dict[str, Any]:
        """Alone, on the same input, the engines agree: the difference came in with the input."""
        found = [self.cause_of.get(u) for u in self._topological(upstream)]
        # Every origin's own cause is known: the first origin's is the node's, all are listed in `causes`.
        cause = found[0] if found and all(found) else None
        counts = {c or "unexplained": found.count(c) for c in dict.fromkeys(found)}
        flat = int(np.flatnonzero(mask.reshape(-1))[0])
        detail = next((r.get("detail") for r in self.nodes if cause == "inference-precision"
                       and r["node"] == self._topological(upstream)[0]), None)  # both precisions, named
        return self._row(n, mask, pattern=clip.pattern, origin="inherited", cause=cause, causes=counts,
                         inherited_from=self._topological(upstream)[:8], detail=detail,
                         witness=self._captured_witness(n, n.outputs[0], flat))


def verdict(outputs: list[dict], nodes: list[dict], first: dict | None) -> str:
    if first is None and not any(o["differing"] for o in outputs):
        return "equal"
    introduced = [n for n in nodes if n["origin"] == "introduced"]
    if not introduced or any(n["cause"] in (None, "not-a-clip") for n in nodes if n["origin"] != "inherited"):
        return "unexplained"
    return "explained" if all(n["cause"] for n in nodes) else "unexplained"


def diff(execute: run.Execute, model: bytes | sides.Models, npz: bytes | None,
         opts: run.Options) -> tuple[dict, run.Runs]:
    """The response body of a diff, and the runs it was read from (for --bundle and --node-data); with
    opts.probe == "edge", the edge probe's own pass beside it (clipbridge.diff.probe). `model`: one model for
    every engine, or each side's (diff_sides)."""
    body, runs = sample(execute, model, npz, opts)
    if opts.probe == "edge" and body["method"] != "precision-trace":
        # At the shapes the ordinary pass ran (an .npz's own: a batch of 8 is probed at batch 8).
        shaped = tuple((k, tuple(v.shape)) for k, v in runs.plan.feeds.items()) if runs.plan.given else opts.shapes
        body["edge"], runs.edge_plan = probe.edge(sample, execute, model, dataclasses.replace(opts, shapes=shaped))
    body["fail_on"] = list(opts.fail_on)
    body["fails"] = outcome.fails(body, tuple(opts.fail_on))
    return body, runs


def diff_sides(execute: run.Execute, given: list[sides.Side], npz: bytes | None,
               opts: run.Options) -> tuple[dict, run.Runs]:
    """A diff of explicit sides (clipbridge.diff.sides): each engine runs its own side's model; opts.engines are
    the sides' engines, in order (the first side is the reference the plan and the walk read)."""
    sides.check(given, opts.precision)
    opts = dataclasses.replace(opts, engines=tuple(s.engine for s in given))
    return diff(execute, sides.of_sides(given), npz, opts)


def sample(execute: run.Execute, model: bytes | sides.Models, npz: bytes | None,
           opts: run.Options) -> tuple[dict, run.Runs]:
    """One pass: the given inputs, or one generated sample (opts.sample: ordinary or edge)."""
    if trace.is_trace(tuple(opts.engines)):  # `engine@f16`: where float16 first overflows (app/clipbridge/diff/trace.py)
        return trace.diff(execute, sides.only(model, "engine"), npz, opts)
    with threads.scoped(plain_runs.side_threads(execute, model)):  # every run of this diff, replays included
        runs = run.collect(execute, model, npz, opts)
        walk = Walk(execute, runs.model or sides.only(model), runs, opts)
        for n in passes.walked(execute, opts, runs):  # a region's tensors at a time (bounded memory)
            walk.node(n)
    outputs = []
    for name in runs.plan.outputs:
        m = run.differs(runs, name, opts)
        total = int(runs.values[opts.engines[0]][name].size)
        outputs.append({"name": name, "differing": total if m is None else int(m.sum()), "total": total,
                        "tolerance": tolerance.used(opts, name, runs.plan.outputs, walk._dtype(name))})
    differing = [o["name"] for o in outputs if o["differing"]]
    origins = None if any(not walk.origin.get(o) for o in differing) else \
        {n for o in differing for n in walk.origin[o]}
    rows, masked = outcome.reaching(walk.nodes, origins) if differing else ([], walk.nodes)
    rounding = outcome.rounding_only(rows)
    if rounding:  # the outputs differ by summation order only: they agree (issue 45)
        rows, masked, differing = [], walk.nodes, []
        for o in outputs:
            o["agrees_by"] = "accumulation-order" if o["differing"] else None
    body = {
        "verdict": outcome.verdict(bool(differing), rows),
        "engines": [{"name": e, "version": runs.info[e]["version"], "precision": runs.info[e]["precision"],
                     "observer_effect": runs.info[e]["observer_effect"], "settings": runs.info[e]["settings"]}
                    for e in opts.engines],
        "inputs": {"source": "given" if runs.plan.given else "generated",
                   "seed": None if runs.plan.given else opts.seed,
                   "sample": None if runs.plan.given else opts.sample,
                   "symbolic": runs.plan.symbolic,
                   "tensors": [{"name": k, "dtype": v.dtype.name, "shape": list(v.shape)}
                               for k, v in runs.plan.feeds.items()]},
        "method": runs.method,
        "passes": runs.passes,
        "tolerance": {"rtol": opts.rtol, "atol": opts.atol, "defaults": "per dtype (docs/diff.md)"},
        "outputs": outputs,
        # The first node reaching a differing output; the walk's first differing node where no row says more.
        "first_divergence": {"node": rows[0]["node"], "op": rows[0]["op"]} if rows else
        (walk.first if differing else None),
        "nodes": rows,
        "masked": outcome.masked_section(masked, rounding),
        "layout": runs.layout,
        "subgraphs": runs.views,
        "patterns": {p: PATTERNS[p].summary for p in sorted({n["pattern"] for n in walk.nodes if n["pattern"]})},
    }
    return body, runs
