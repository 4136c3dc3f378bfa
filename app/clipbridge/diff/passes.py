"""Bounded-memory capture (issue 46, item 1): the diff holds at most a memory budget of captured tensors.

Why: capturing every tensor of a model at once is what made a ResNet-50 at 224x224 undiffable (77 MB of marked
results against a fixed 64 MiB cap); its size never was the problem. Where every marked tensor fits the budget the
diff is one pass, exactly as before. Past it the graph is cut, in topological order, into regions whose tensors
fit: each pass is one marked run per engine of one region's tensors (its nodes' outputs and the inputs the walk
reads for them: witnesses, replay feeds, a clip's input mask), the walk reads that region's nodes, and the tensors
are freed before the next pass. What the walk keeps between passes is what it always kept per node (rows, origins,
counts, witnesses); the final outputs come from the plain runs and are held throughout.

The budget counts every engine's copy of a pass's tensors (they are compared side by side), from shape
inference; a tensor inference cannot size counts 0 here and is counted by the engine run itself after it
(clipbridge.diff.engines.run's `limit`, the budget's share per engine). A budget too small for one node's own
tensors is refused before any run, naming the setting (`--memory` on the CLI, CLIPBRIDGE_DIFF_MEMORY_MB on the
server).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from clipbridge.core.errors import ClipBridgeError
from clipbridge.diff import engines as engine_runs
from clipbridge.diff import compare, layout
from clipbridge.diff.child import BudgetTooSmall, NodeInfo, Plan  # noqa: F401 - BudgetTooSmall: raised here too

UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2, "mib": 1 << 20,
         "g": 1000**3, "gb": 1000**3, "gib": 1 << 30, "t": 1000**4, "tb": 1000**4, "tib": 1 << 40}
SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*")
MIN_BYTES = 1 << 20  # below a MiB no model of note fits: a smaller value is a typo (2K for 2G)




def parse_size(text: str, option: str = "--memory") -> int:
    """Bytes from `2GiB`, `512MiB`, `1.5G`, `800MB` or a plain byte count; ClipBridgeError naming `option`."""
    m = SIZE.fullmatch(text or "")
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in UNITS:
        raise ClipBridgeError(f"{option} takes a size such as 2GiB, 512MiB or 800MB (units: B, KiB, MiB, GiB, TiB "
                              f"and KB, MB, GB, TB), got {str(text)[:40]!r}", option)
    size = int(float(m.group(1)) * UNITS[unit])
    if size < MIN_BYTES:
        raise ClipBridgeError(f"{option} must be at least 1MiB, got {str(text)[:40]!r} ({size} bytes)", option)
    return size


def default_budget() -> int:
    """A quarter of this machine's memory: the CLI's default (the server's comes from its settings)."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # a platform without sysconf: 8 GiB machines are common
        total = 8 << 30
    return max(MIN_BYTES, total // 4)


def human(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.4g} {unit}"
    return f"{size} B"


@dataclass
class Region:
    """Nodes in topological order and the tensors one pass captures for them."""

    nodes: list[NodeInfo]
    tensors: list[str]


def node_tensors(plan: Plan, node: NodeInfo) -> list[str]:
    """What the walk reads for `node`: its outputs and its non-constant inputs (not the graph's own inputs: every
    engine gets the same)."""
    ins = [i for i in node.inputs if i and i not in plan.constants]
    return [t for t in dict.fromkeys(node.outputs + ins) if t and t not in plan.feeds]


def regions(plan: Plan, budget: int, engines: int, option: str) -> list[Region]:
    """The plan's nodes cut into regions whose captured tensors (x `engines` copies) fit `budget`, in order."""
    out: list[Region] = []
    # Every marked run also returns the graph's outputs: each pass holds them beside its region's tensors.
    finals = {t: engines * plan.nbytes(t) for t in plan.outputs}
    held: dict[str, int] = dict(finals)
    nodes: list[NodeInfo] = []
    for node in plan.nodes:
        own = {t: engines * plan.nbytes(t) for t in node_tensors(plan, node)}
        if sum({**finals, **own}.values()) > budget:
            raise BudgetTooSmall(f"node {node.name[:80]!r} ({node.op}) alone needs {human(sum(own.values()))} of "
                                 f"captured tensors over {engines} engines, past the diff's memory budget of "
                                 f"{human(budget)}: raise {option}", option)
        if nodes and sum({**held, **own}.values()) > budget:
            out.append(Region(nodes, [t for t in held if t not in finals]))
            held, nodes = dict(finals), []
        held.update(own)
        nodes.append(node)
    if nodes or not out:
        out.append(Region(nodes, [t for t in held if t not in finals]))
    return out


def plan_regions(plan: Plan, every: list[str], budget: int, engines: int, option: str) -> list[Region]:
    """One region of `every` mark when they fit the budget (the diff as it always ran), else the graph's cut."""
    if engines * sum(plan.nbytes(t) for t in dict.fromkeys(every)) <= budget:
        return [Region(plan.nodes, every)]
    return regions(plan, budget, engines, option)


def walked(execute: Any, opts: Any, runs: Any) -> Iterator[NodeInfo]:
    """The plan's nodes for the walk; before the first node of each later region its tensors are captured in
    place of the previous pass's (`capture`). The first region was captured by the marked runs themselves."""
    if len(runs.regions) <= 1 or runs.method != "mark-all":  # one pass, or bisection's own captures
        yield from runs.plan.nodes
        return
    for k, region in enumerate(runs.regions):
        if k:
            capture(execute, opts, runs, region)
        yield from region.nodes


def observer_tolerance(info: dict[str, Any], dtype: str) -> tuple[float, float]:
    """Marking may move fusion boundaries; at a narrowed precision that moves roundings too, so the plain and
    marked runs are compared at the precision the engine really ran at."""
    narrowed = {"bf16": "bfloat16", "f16": "float16"}.get(str(info.get("precision")))
    return compare.tolerance(narrowed or dtype)


def observed(plain: dict[str, Any], marked: dict[str, Any], plan: Plan) -> list[str]:
    """The final outputs whose marked value differs from the plain one (marking moved a fusion boundary)."""
    changed = []
    for name in plan.outputs:
        rtol, atol = observer_tolerance(marked, plan.dtypes.get(name, "float32"))
        if name not in marked["values"] or compare.count(plain["values"][name], marked["values"][name], rtol, atol):
            changed.append(name)
    return changed


def capture(execute: Any, opts: Any, runs: Any, region: Region) -> None:
    """A later pass: free the previous pass's tensors (the final outputs stay: the plain runs'), capture
    `region`'s on every engine, and align their layouts. Replays of this region's clips run alone."""
    keep = set(runs.plan.outputs)
    for engine in opts.engines:
        runs.values[engine] = {k: v for k, v in runs.values[engine].items() if k in keep}
    runs.masks.clear()
    marked = runs.models.marked(execute, region.tensors, runs.plan.dtypes)  # each side's own model (diff.sides)
    limit = (opts.budget() // len(opts.engines), opts.memory_option)
    wanted = set(region.tensors) - keep
    for engine in opts.engines:
        r = execute(f"diff:{engine}", engine_runs.run, engine, marked.of(engine), runs.plan.feeds, [], opts.precision,
                    limit=limit)
        runs.values[engine].update({t: v for t, v in r["values"].items() if t in wanted})
        # Marking moved a fusion boundary in this pass: said in engines[].observer_effect. The walk goes on with
        # this pass's values (bisection, which trusts no marked run, is decided on the first pass only).
        plain = {"values": {n: runs.values[engine][n] for n in runs.plan.outputs}}
        effect = runs.info[engine]["observer_effect"]
        effect += [n for n in observed(plain, {**r, "precision": runs.info[engine]["precision"]}, runs.plan)
                   if n not in effect]
        runs.info[engine]["kernels"].update({n.name: r["kernels"][n.name] for n in region.nodes
                                             if n.name in r["kernels"]})
        del r  # this engine's copy of the pass's other outputs, before the next engine runs
    runs.layout += layout.align(runs.plan, runs.values, opts.engines)
    runs.passes += 1
