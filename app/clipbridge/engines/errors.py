"""An engine's error text, reduced to what a client needs: the engine, the kind of failure, the op and node.

Why: an engine's message can quote what it read (onnxruntime prints a bad Reshape's requested shape, which is
the contents of the shape tensor; a failed external-data read prints a file's size). Such text is a side
channel, so a client gets `public` only: a kind from a fixed vocabulary, and the op and node named only when
they are the model's own (the sender already knows them). The full text travels on the exception as
`engine_text`, which the server logs with the request id (clipbridge.api.model_guard) and never renders.
"""

from __future__ import annotations

import re

# (kind, what in the engine's text says so), first match wins; the kinds are the whole vocabulary.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((k, re.compile(p, re.I)) for k, p in (
    ("out of memory", r"bad_alloc|out of memory|cannot allocate|MemoryError|failed to allocate"),
    ("unsupported operator", r"NOT_IMPLEMENTED|not implemented|unsupported|no op registered|could not find an "
                             r"implementation|not supported|not a registered|is not registered|no conversion rule|"
                             r"cannot create .* layer"),
    ("shape mismatch", r"shape|dimension|broadcast|rank|size mismatch|incompatible dim"),
    ("type mismatch", r"type|dtype|element_type|precision"),
    ("invalid attribute", r"attribute"),
    ("invalid graph", r"INVALID_GRAPH|invalid graph|cycle|topolog|graph"),
    ("invalid model", r"INVALID_PROTOBUF|INVALID_ARGUMENT|protobuf|model"),
))
# Where the engines' messages name the node they failed in (onnxruntime at run and load time, OpenVINO's
# validation): only these slots are read, and a name counts only when it is the model's own.
WHERE: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"running (\w+) node\. Name:'([^']*)'"), "op", "node"),
    (re.compile(r"Node \(([^)]*)\) Op \((\w+)\)"), "node", "op"),
    (re.compile(r"validating node '(?:\w+::)?(\w+) ([^ ']+)"), "op", "node"),
    (re.compile(r"(\S+:\w+)\(-?\d+\) is not a registered()"), "op", "node"),  # onnxruntime: domain:Op(version)
    (re.compile(r"No conversion rule found for operations: ([\w.]+)()"), "op", "node"),  # OpenVINO: domain.Op
)


def kind_of(text: str) -> str:
    """The failure's kind in the fixed vocabulary, from the engine's own words ('engine failure' otherwise)."""
    return next((k for k, pattern in KINDS if pattern.search(text)), "engine failure")


def located(text: str, nodes: set[str], ops: set[str]) -> tuple[str | None, str | None]:
    """(op, node) where the engine's text names them in one of its known slots and they are the model's own."""
    for pattern, first, second in WHERE:
        m = pattern.search(text)
        if m:
            found = {first: m.group(1), second: m.group(2)}
            return (found["op"] if found["op"] in ops else None, found["node"] if found["node"] in nodes else None)
    return None, None


def reduce(engine: str, doing: str, exc: BaseException, nodes: set[str] = frozenset(),
           ops: set[str] = frozenset()) -> tuple[str, str]:
    """(public message, full text) for an engine failure: the message names the engine, what it was doing,
    the kind of failure and, where the text names them, the model's op and node; never the text itself."""
    full = f"{type(exc).__name__}: {' '.join(str(exc).split())[:4000]}"
    parts = [kind_of(full)]
    op, node = located(full, set(nodes), set(ops))
    if op:
        parts.append(f"op {op[:64]}")
    if node:
        parts.append(f"node {node[:80]!r}")
    return f"{engine} {doing}: {', '.join(parts)} (the engine's own text is in the server log)", full


def names_of(model_bytes: bytes) -> tuple[set[str], set[str]]:
    """(node names, op types) of the model's main graph, for `reduce` (empty when the bytes do not parse)."""
    import onnx
    try:
        g = onnx.load_from_string(model_bytes).graph
    except Exception:  # noqa: BLE001 - nothing to name then
        return set(), set()
    ops = {n.op_type for n in g.node} | {f"{n.domain}{sep}{n.op_type}" for n in g.node if n.domain
                                          for sep in (":", ".")}
    return {n.name for n in g.node if n.name}, ops


def reduced(error: type[Exception], engine: str, doing: str, exc: BaseException, model_bytes: bytes,
            loc: str = "model") -> Exception:
    """An `error(message, loc)` carrying the reduced message, with the full text as `engine_text`."""
    public, full = reduce(engine, doing, exc, *names_of(model_bytes))
    out = error(public, loc)  # type: ignore[call-arg]
    out.engine_text = full  # type: ignore[attr-defined]
    return out
