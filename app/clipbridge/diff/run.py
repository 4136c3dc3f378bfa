"""A whole-model diff: run every engine once with the tensors marked, check the observer effect, then walk.

`execute(stage, fn, *args)` runs a module-level function on the uploaded bytes: the server passes the
sandbox's run_isolated (a crash or hang costs one answer), the CLI and the benchmark run in-process.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clipbridge.diff import child, compare, engines, layout, outcome, passes, probe, quantized, sides, subgraphs
from clipbridge.diff import tolerance
from clipbridge.diff import plain as plain_runs
from clipbridge.diff.plain import concurrent  # noqa: F401 - the executors' flag (tests/diff/test_plain_threads.py)
from clipbridge.diff.inputs import SEED
from clipbridge.core.errors import ClipBridgeError
from clipbridge.engines.runtimes import registry as engine_registry

# Read from the engine registry when this module is imported (an engine registered later is not a diff engine).
ENGINE_NAMES = engine_registry.names("diff")
DEFAULT_ENGINES = engine_registry.DEFAULT_DIFF
Execute = Callable[..., Any]
Memory = tuple[int, str]  # a diff's budget in bytes and the setting that names it (the server's, for its routes)
MAX_FOLDED = 64  # clip-like nodes replayed inside the marked runs (later ones are replayed alone)


def direct(stage: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run in this process (the CLI's, the benchmark's and the server's sandbox child's executor)."""
    return fn(*args, **kwargs)


direct.concurrent = True  # type: ignore[attr-defined]  # callable from two threads at once (clipbridge.diff.plain)


def serial(stage: str, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Run in this process, every engine run of a diff on the calling thread, one after the other: for a caller
    that runs several diffs side by side (fleet's workers, one per core), where a diff's own threads would only
    take a core from another diff."""
    return fn(*args, **kwargs)


@dataclass
class Options:
    engines: tuple[str, ...] = DEFAULT_ENGINES
    precision: str = "model"
    rtol: float | None = None
    atol: float | None = None
    seed: int = SEED
    sample: str = "ordinary"  # generated inputs: ordinary values, or the edge probe's (clipbridge.diff.inputs)
    probe: str = "off"  # "edge": a second pass on the edge sample, its own section (clipbridge.diff.probe)
    fail_on: tuple[str, ...] = ()  # "masked", "edge": what else fails the diff (clipbridge.diff.outcome)
    tolerances: tuple[tuple[str, float, float], ...] = ()  # per output (clipbridge.diff.tolerance)
    shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # per generated input (clipbridge.diff.shapes)
    classes: int | None = None  # an input set's class axis, for top-1/top-5 (clipbridge.diff.statistics)
    memory: int | None = None  # bytes of captured tensors held at once (clipbridge.diff.passes); None: a quarter
    memory_option: str = "--memory"  # the setting that names the budget in a refusal (the server: its variable)

    def budget(self) -> int:
        return self.memory if self.memory is not None else passes.default_budget()

    @staticmethod
    def budget_fields(memory: Memory | None) -> dict[str, Any]:
        """The memory fields from (bytes, the setting naming them); none: the defaults."""
        return {} if memory is None else {"memory": memory[0], "memory_option": memory[1]}

    def tensor_limit(self) -> child.Limit:
        """The largest tensor: the given budget's share per engine (issue 46); with no budget given (the CLI fix's
        proof, a library call) the fixed default, since a quarter of the machine bounds no server."""
        if self.memory is None:
            return child.MAX_TENSOR_BYTES, "model"
        return self.memory // max(1, len(self.engines)), self.memory_option

    def check(self, prefix: str = "") -> None:
        """Refuse what a run cannot do, naming the option (`prefix` "query." on the API)."""
        probe.check(self.probe, self.sample, prefix)
        outcome.check_fail_on(tuple(self.fail_on), "--fail-on" if prefix == "--" else f"{prefix}fail_on")
        engines.check_names(self.engines, ENGINE_NAMES, f"{prefix}engine")
        if len(set(self.engines)) < 2:
            raise ClipBridgeError("a diff needs at least two different engines", f"{prefix}engine")
        if self.precision not in ("model", "deployed"):
            raise ClipBridgeError("precision is 'model' or 'deployed'", f"{prefix}precision")
        for name in ("rtol", "atol"):
            v = getattr(self, name)
            if v is not None and not (np.isfinite(v) and v >= 0):
                raise ClipBridgeError(f"{name} must be a finite number >= 0", f"{prefix}{name}")


@dataclass
class Runs:
    """Everything the walk reads: the plan, each engine's marked values, and how each engine ran."""

    plan: child.Plan
    values: dict[str, dict[str, np.ndarray]]  # engine -> tensor -> array
    info: dict[str, dict[str, Any]]  # engine -> {version, precision, kernels, observer_effect}
    method: str = "mark-all"
    masks: dict[str, np.ndarray | None] = field(default_factory=dict)  # tensor -> differs(), computed once
    folded: dict[str, dict] = field(default_factory=dict)  # node -> replay outputs computed in the marked runs
    replays: dict[str, dict] = field(default_factory=dict)  # node -> {model, feeds, outputs}
    model: bytes | None = None  # the first side's model the marked runs, bisection and replays read (subgraphs)
    models: sides.Models | None = None  # every side's (clipbridge.diff.sides): what each engine runs
    views: list[dict] = field(default_factory=list)  # each If/Loop/Scan: walked or not, and why
    layout: list[dict] = field(default_factory=list)  # scan outputs reshaped to one layout (clipbridge.diff.layout)
    # The edge probe's plan (clipbridge.diff.probe), kept for the inspector's graph of the edge section: its
    # values are not kept, so the edge pass's tensors are freed as soon as it is compared.
    edge_plan: child.Plan | None = None
    regions: list[passes.Region] = field(default_factory=list)  # the graph's regions, one capture pass each
    passes: int = 1  # how many marked passes the walk read (clipbridge.diff.passes)


def marks(plan: child.Plan) -> list[str]:
    """Every node output, and every non-constant input of a clip-like node (to replay it): one pass's marks when
    they fit the memory budget (clipbridge.diff.passes cuts the graph into regions when they do not)."""
    clip_tensors: list[str] = []
    for c in plan.clips.values():
        node = next((n for n in plan.nodes if n.name == c.node), None)
        clip_tensors += [i for i in (node.inputs if node else []) if i and i not in plan.constants]
        clip_tensors += [o for o in (node.outputs if node else []) if o]
    every = [o for n in plan.nodes for o in n.outputs if o] + clip_tensors
    return [n for n in dict.fromkeys(every) if n not in plan.feeds]


def run_engines(execute: Execute, model: sides.Models, plan: child.Plan, opts: Options,
                walked: sides.Models | None = None) -> Runs:
    """Each engine plain and with the first region's marks (every mark when they fit the budget: one pass); the
    observer check compares their final outputs. The marks go into `walked` (the model with its bodies made
    visible, clipbridge.diff.subgraphs) where there is one; each side's into its own model (clipbridge.diff.sides)."""
    regions = passes.plan_regions(plan, marks(plan), opts.budget(), len(opts.engines), opts.memory_option)
    limit = opts.budget() // len(opts.engines)  # each engine's share, checked by the run on its real results
    values: dict[str, dict[str, np.ndarray]] = {}
    info: dict[str, dict[str, Any]] = {}
    marked_runs: dict[str, dict[str, Any]] = {}
    marked_model = (walked or model).marked(execute, regions[0].tensors, plan.dtypes)  # once a side, typed
    replays: dict[str, dict[str, Any]] = {}
    feeds, copies = plan.feeds, {}
    with plain_runs.Plain(execute, model, plan.feeds, opts.engines, opts.precision) as plains:
        for n, engine in enumerate(opts.engines):
            if n == 1:  # the first engine's tensors are known: the others replay every clip-like node in this run
                marked_model, feeds, copies = _fold_replays(execute, marked_model, plan, values[opts.engines[0]],
                                                            limit)
            marked = plains.after(engine, functools.partial(execute, f"diff:{engine}", engines.run, engine,
                                                            marked_model.of(engine), feeds, [], opts.precision,
                                                            limit=(limit, opts.memory_option)))
            _take_replays(marked, copies, engine, replays)
            values[engine], marked_runs[engine] = marked["values"], marked
        # The observer check waits for the plain runs only now: the marked runs went on beside them.
        for engine in opts.engines:
            plain, marked = plains.result(engine), marked_runs[engine]
            info[engine] = _info(marked, passes.observed(plain, marked, plan))
            for name in plan.outputs:  # the final outputs reported are always the unmarked run's
                values[engine][name] = plain["values"][name]
    return Runs(plan, values, info, folded=replays, regions=regions, passes=1)


def _info(marked: dict[str, Any], changed: list[str]) -> dict[str, Any]:
    return {"version": marked["version"], "precision": marked["precision"], "settings": marked.get("settings", {}),
            "kernels": marked["kernels"], "observer_effect": changed}


def _fold_replays(execute: Execute, marked_model: sides.Models, plan: child.Plan, first: dict[str, np.ndarray],
                  limit: int) -> tuple[sides.Models, dict[str, np.ndarray], dict[str, list[str]]]:
    """The marked model with a replay copy of each clip-like node fed the first engine's captured inputs, the
    feeds for it, and node -> its outputs. An engine's compile costs more than the copies (OpenVINO: ~50 ms)."""
    copies: dict[str, dict[str, tuple[str, list[int]]]] = {}
    feeds = dict(plan.feeds)
    outs: dict[str, list[str]] = {}
    used = sum(int(v.nbytes) for v in first.values())  # the marked run's own bytes, within the bound
    for node in plan.nodes:
        if node.name not in plan.clips or len(copies) >= MAX_FOLDED or subgraphs.is_body_node(plan, node.name):
            continue
        ins = [i for i in node.inputs if i and i not in plan.constants]
        values = {i: first[i] if i in first else plan.feeds.get(i) for i in ins}
        if any(v is None for v in values.values()):
            continue
        used += 2 * sum(int(v.nbytes) for v in values.values())  # the copy's inputs, and its output
        if used > limit:
            break  # past the bound the rest are replayed alone, when they differ
        k = len(copies)
        copies[node.name] = {i: (v.dtype.name, list(v.shape)) for i, v in values.items()}
        feeds.update({child.replay_name(k, i): v for i, v in values.items()})
        outs[node.name] = [child.replay_name(k, o) for o in node.outputs if o]
    if not copies:
        return marked_model, plan.feeds, {}
    return marked_model.folded(execute, copies), feeds, outs  # as each side replays a node


def _take_replays(marked: dict[str, Any], copies: dict[str, list[str]], engine: str,
                  replays: dict[str, dict[str, Any]]) -> None:
    """Move the replay copies' outputs (and kernels) out of the marked run's values."""
    for k, (node, outs) in enumerate(copies.items()):
        record = replays.setdefault(node, {"outputs": {}, "kernels": {}})
        record["outputs"][engine] = marked["values"].get(outs[0])
        copy = child.replay_name(k, node)
        record["kernels"][engine] = {node: v for n, v in marked["kernels"].items() if n == copy}
    for name in [v for v in marked["values"] if v.startswith("clipbridge_replay_")]:
        del marked["values"][name]


def differs(runs: Runs, tensor: str, opts: Options) -> np.ndarray | None:
    """The mask of elements where any engine differs from the first engine, or None if not captured."""
    if tensor not in runs.masks:
        runs.masks[tensor] = _differs(runs, tensor, opts)
    return runs.masks[tensor]


def _differs(runs: Runs, tensor: str, opts: Options) -> np.ndarray | None:
    first = runs.values[opts.engines[0]].get(tensor)
    if first is None:
        return None
    mask = np.zeros(first.shape, dtype=bool)
    for engine in opts.engines[1:]:
        other = runs.values[engine].get(tensor)
        if other is None:
            return None
        m = compare.differing(first, other, *tolerance.for_tensor(opts, tensor, runs.plan.outputs))
        if m.shape != mask.shape:
            return np.ones(first.shape, dtype=bool)
        mask |= m
    return mask


def bisect(execute: Execute, model: sides.Models, runs: Runs, opts: Options) -> None:
    """When marking changed the final outputs: find the first differing node output by marking one tensor per
    run, O(log N) runs per engine (this assumes that once a tensor differs, later ones do too)."""
    order = [o for n in runs.plan.nodes for o in n.outputs if o and o not in runs.plan.feeds]
    lo, hi = 0, len(order) - 1
    found: dict[str, dict[str, np.ndarray]] = {e: {} for e in opts.engines}

    def probe(k: int) -> bool:
        for engine in opts.engines:
            r = execute(f"diff:{engine}", engines.run, engine, model.of(engine), runs.plan.feeds, [order[k]],
                        opts.precision)
            found[engine][order[k]] = r["values"][order[k]]
        a = found[opts.engines[0]][order[k]]
        return any(compare.count(a, found[e][order[k]], opts.rtol, opts.atol) for e in opts.engines[1:])

    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if probe(mid) else (mid + 1, hi)
    node = next((n for n in runs.plan.nodes if order and order[lo] in n.outputs), None)
    if node is not None and probe(lo):  # capture that node's inputs too, so that it can be replayed
        tensors = [t for t in node.inputs + node.outputs if t and t not in runs.plan.constants]
        for engine in opts.engines:
            r = execute(f"diff:{engine}", engines.run, engine, model.of(engine), runs.plan.feeds, tensors,
                        opts.precision)
            found[engine].update({t: r["values"][t] for t in tensors if t in r["values"]})
    for engine in opts.engines:  # only the bisection's own probes are kept: the marked run is not trusted
        finals = {n: runs.values[engine][n] for n in runs.plan.outputs}
        runs.values[engine] = {**found[engine], **finals}
    runs.method = "bisection"
    runs.masks.clear()
    runs.folded.clear()  # computed from the marked run's tensors, which bisection does not trust


def replay(execute: Execute, model: sides.Models, runs: Runs, node: child.NodeInfo, opts: Options) -> dict[str, Any]:
    """The node alone on each engine, fed the first engine's captured inputs (the same for every engine), as each
    side replays it (clipbridge.diff.sides.Replays)."""
    a = runs.values[opts.engines[0]]
    feeds = {i: a[i] for i in node.inputs if i and i not in runs.plan.constants and i in a}
    feeds.update({i: runs.plan.feeds[i] for i in node.inputs if i in runs.plan.feeds})
    singles = model.single(execute, node.name, feeds, subgraphs.is_body_node(runs.plan, node.name))
    outputs, kernels = {}, {}
    folded = runs.folded.get(node.name, {"outputs": {}, "kernels": {}})
    for engine in opts.engines:
        if folded["outputs"].get(engine) is not None:  # replayed inside this engine's marked run
            outputs[engine], kernels[engine] = folded["outputs"][engine], folded["kernels"][engine]
            continue
        r = execute(f"diff:{engine}", engines.run, engine, singles.of(engine), feeds, [], opts.precision)
        outputs[engine] = r["values"][node.outputs[0]]
        kernels[engine] = r["kernels"]
    record = {"model": singles.first, "feeds": feeds, "outputs": outputs, "kernels": kernels}
    runs.replays[node.name] = record
    return record


def collect(execute: Execute, given: bytes | sides.Models, npz: bytes | None, opts: Options) -> Runs:
    """Prepare, run every engine, and fall back to bisection when marking changed the final outputs. `given`: one
    model for every engine, or each side's (clipbridge.diff.sides); the plan is read from the first side's."""
    opts.check()
    model = sides.given(given, opts.engines)
    plan = execute("diff:prepare", child.prepare, model.first, npz, opts.seed, opts.sample, opts.shapes,
                   opts.tensor_limit())
    tolerance.check_names(opts.tolerances, plan.outputs)
    walked, walked_plan, views = subgraphs.walkable(execute, model, plan)  # If/Loop/Scan bodies made readable
    try:
        runs = run_engines(execute, model, walked_plan, opts, walked)
    except engines.EngineCannotLoad as exc:  # an engine refuses the exposed bodies: walk the main graph only
        if walked is None:
            raise
        walked, views = None, subgraphs.refused(views, exc.message)
        runs = run_engines(execute, model, plan, opts)
    runs.models, runs.views = walked or model, views
    runs.model = runs.models.first
    if any(i["observer_effect"] for i in runs.info.values()):
        bisect(execute, runs.models, runs, opts)
        quantized.capture_clip_likes(execute, runs.models, runs, opts)  # every clip-like node, one at a time
    runs.layout = layout.align(runs.plan, runs.values, opts.engines)  # before any mask is computed
    return runs
