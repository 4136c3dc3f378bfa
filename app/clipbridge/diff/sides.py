"""The sides of a diff: each is (model, engine, precision, device), and the diff compares them.

The one-model diff (`clipbridge diff model.onnx --engine a --engine b`) is the case where every side shares one
model. A fix's proof (clipbridge.fix.proof) is two sides, the original on the reference and the written model on
the target; the CLI's `clipbridge diff a.onnx@onnxruntime b.onnx@openvino` is two sides as the user names them.

Why a value and not an executor that swaps models (what the proof did before issue 45): the diff transforms its
model on the way (bodies exposed, tensors marked, clip-like nodes replayed). Here each transform is applied to
each side's own model, and how a side replays a node is the side's own policy (`Replays`), so a refactor of the
diff cannot silently stop giving a side its model.

What each side is compared on: the plan (inputs, node order, clip-like nodes) is read from the first side's
model. Every side is fed the same inputs and marked with the plan's tensors that its own model makes
(`with_outputs`); a tensor one side lacks is not captured there, so the walk treats it as not captured (a
difference may pass through it, none is claimed at it). The final outputs must be the same names on every side.
`unmatched` lists the tensors present on one side only, for the two-model report.

Precision and device: a side carries both so that the value is complete, but today one diff runs one precision
(Options.precision, every side's) on the CPU; `check` refuses anything else, naming the side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx

from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.ondisk import like, same
from clipbridge.diff import child, engines, subgraphs
from clipbridge.diff.child import model_errors

DEVICES = ("cpu",)


@dataclass(frozen=True)
class Replays:
    """How a side's model replays one node: folded into its marked run (`folded(marked, copies)`), alone from the
    main graph or from inside a body (`alone`/`body(model, node, feeds)`). Module-level functions, so that a
    sandbox child runs them. A fixed model replays its nodes as written (clipbridge.fix.replay.AS_WRITTEN)."""

    folded: Callable[..., bytes] = child.with_replays
    alone: Callable[..., bytes] = child.single_node
    body: Callable[..., bytes] = subgraphs.single_node


AS_GIVEN = Replays()


@dataclass(frozen=True)
class Side:
    model: bytes = field(repr=False)
    engine: str
    precision: str = "model"
    device: str = "cpu"
    replays: Replays = AS_GIVEN


@dataclass(frozen=True)
class Models:
    """Each engine's model at one stage of a diff (as given, bodies exposed, marked, with replays): one entry per
    distinct side model, with the engines that run it. The first entry's model is the one the plan reads."""

    groups: tuple[tuple[bytes, Replays, tuple[str, ...]], ...]

    @property
    def first(self) -> bytes:
        return self.groups[0][0]

    @property
    def shared(self) -> bool:
        """Every engine runs one model (the one-model diff)."""
        return len(self.groups) == 1

    def of(self, engine: str) -> bytes:
        return next(m for m, _, names in self.groups if engine in names)

    def map(self, execute: Any, fn: Callable[..., bytes], *args: Any) -> Models:
        """`fn(model, *args)` on each side's model, through `execute` (the sandbox on the server)."""
        return self._each(lambda m, r: execute("diff:prepare", fn, m, *args))

    def marked(self, execute: Any, names: list[str], dtypes: dict[str, str]) -> Models:
        """Each side's model with the marks it makes (one model: all of them, as before sides existed)."""
        fn = engines.with_outputs if self.shared else with_outputs
        return self.map(execute, fn, names, dtypes)

    def folded(self, execute: Any, copies: dict[str, Any]) -> Models:
        """Each side's marked model with the replay copies folded in, as the side replays a node."""
        return self._each(lambda m, r: execute("diff:prepare", r.folded, m, copies))

    def single(self, execute: Any, node: str, feeds: dict[str, np.ndarray], body: bool) -> Models:
        """Each side's model of `node` alone (`body`: the node is inside an If/Loop/Scan body)."""
        return self._each(lambda m, r: execute("diff:prepare", r.body if body else r.alone, m, node, feeds))

    def _each(self, make: Callable[[bytes, Replays], bytes]) -> Models:
        # like(): what a step makes of an OnDisk model names the same weights, in the same folder
        return Models(tuple((like(m, make(m, r)), r, names) for m, r, names in self.groups))


def given(model: bytes | Models, names: Sequence[str]) -> Models:
    """`model` as Models: a bare model is the one-model diff, every engine on it as given."""
    return model if isinstance(model, Models) else Models(((model, AS_GIVEN, tuple(names)),))


def only(model: bytes | Models, loc: str = "sides") -> bytes:
    """The one model every engine runs; refused where the sides run different models (the precision trace writes
    its own float16 side, clipbridge.diff.trace)."""
    if isinstance(model, bytes):
        return model
    if not model.shared:
        raise ClipBridgeError("the precision trace (engine@f16) runs one model on both engines; give one model", loc)
    return model.first


def of_sides(sides: Sequence[Side]) -> Models:
    """The sides' models, one entry per distinct (model, replay policy), in the sides' order."""
    groups: list[tuple[bytes, Replays, tuple[str, ...]]] = []
    for s in sides:
        k = next((i for i, (m, r, _) in enumerate(groups) if r == s.replays and same(m, s.model)), None)
        if k is None:
            groups.append((s.model, s.replays, (s.engine,)))
        else:
            m, r, names = groups[k]
            groups[k] = (m, r, (*names, s.engine))
    return Models(tuple(groups))


def check(sides: Sequence[Side], precision: str, loc: str = "sides") -> None:
    """Refuse what a diff of these sides cannot do yet, naming the side (`loc`: the option or field)."""
    if len(sides) < 2:
        raise ClipBridgeError("a diff of sides needs at least two sides (model@engine)", loc)
    seen: set[str] = set()
    for k, s in enumerate(sides):
        where = f"{loc}[{k}]"
        if s.engine in seen:
            raise ClipBridgeError(f"engine {s.engine!r} is named by two sides; a diff compares each engine once "
                                  "(two models on one engine is not supported yet)", where)
        seen.add(s.engine)
        if s.device not in DEVICES:
            raise ClipBridgeError(f"device {s.device!r} is not supported; choose from {', '.join(DEVICES)}", where)
        if s.precision != precision:
            raise ClipBridgeError(f"every side runs at one precision ({precision!r}); this side asks {s.precision!r}",
                                  where)


def run(execute: Any, side: Side, feeds: dict[str, np.ndarray], marks: list[str]) -> dict[str, Any]:
    """One run of a side's model on its engine, `marks` added as outputs (clipbridge.diff.engines.run)."""
    return execute(f"diff:{side.engine}", engines.run, side.engine, side.model, feeds, marks, side.precision)


def _made(m: onnx.ModelProto) -> set[str]:
    """The tensors a model makes or is given at its top level: node outputs, graph inputs and outputs."""
    g = m.graph
    return {o for n in g.node for o in n.output if o} | {v.name for v in g.input} | {v.name for v in g.output}


@model_errors
def with_outputs(model_bytes: bytes, names: list[str], dtypes: dict[str, str] | None = None) -> bytes:
    """engines.with_outputs with only the names this side's model makes (see the module's docstring)."""
    made = _made(onnx.load_from_string(model_bytes))
    return engines.with_outputs(model_bytes, [n for n in names if n in made], dtypes)


def _load(model: bytes, k: int) -> onnx.ModelProto:
    try:
        return onnx.load_from_string(model)
    except Exception as exc:  # protobuf's DecodeError and the like: the side's file is no ONNX model
        raise ClipBridgeError(f"the model cannot be read: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}",
                              f"sides[{k}]") from None


def unmatched(first: bytes, other: bytes) -> dict[str, list[str]]:
    """The named tensors each of two models makes and the other lacks; their graph inputs and outputs must have
    the same names, else the diff has nothing to feed or compare alike and says so (a 4xx naming `sides`; an
    unreadable model names its side, `sides[0]` or `sides[1]`)."""
    a, b = _load(first, 0), _load(other, 1)
    for what in ("input", "output"):  # every side is fed the same inputs and compared on the same outputs
        ta, tb = (sorted(v.name for v in getattr(m.graph, what)) for m in (a, b))
        if ta != tb:
            raise ClipBridgeError(f"the sides' graph {what}s differ: {ta[:8]} against {tb[:8]}; a diff of two "
                                  f"models needs graph {what}s of the same names", "sides")
    made_a, made_b = _made(a), _made(b)
    return {"only_first": sorted(made_a - made_b), "only_second": sorted(made_b - made_a)}
