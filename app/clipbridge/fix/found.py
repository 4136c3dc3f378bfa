"""Which causes the diff of the original finds at each node: a fix rule is written only where its cause was
found (a NaN guard only where a NaN reaches the node on these inputs, or on the generated ones), never from the
engines' facts alone. On a QDQ model a guard where no NaN differs pushes OpenVINO onto its integer clip path
and makes the model worse (docs/diff.md, "Fix")."""

from __future__ import annotations

from clipbridge.core.errors import ClipBridgeError
from clipbridge import behaviour
from clipbridge.diff import report, run
from clipbridge.fix.rules import RULES


def _cause(rule: object) -> str:
    """The diff cause a rule answers: that of the first of its behaviour rows that names one."""
    return next(c for c in (behaviour.row(i).cause for i in rule.rows) if c)  # type: ignore[attr-defined]


RULE_CAUSE = {r.__name__: _cause(r) for r in RULES}


def causes_found(execute: run.Execute, model: bytes, npz: bytes | None, reference: str, target: str,
                 precision: str, memory: run.Memory | None = None) -> dict[str, list[str]] | None:
    """Node (full path) -> the causes the diff of the original found there (introduced or inherited), on the
    given inputs and on the generated ones; None when the target cannot run the original (a Clip-6 with
    min > max that only onnx.reference loads): then the measured facts alone decide."""
    opts = run.Options((reference, target), precision, sample="edge",  # generated: NaN, +-inf and the bounds
                       **run.Options.budget_fields(memory))
    found: dict[str, set[str]] = {}
    try:
        for inputs in ([npz, None] if npz is not None else [None]):
            body, _ = report.diff(execute, model, inputs, opts)
            for n in body["nodes"] + body["masked"]["nodes"]:  # a cause found anywhere, reaching an output or not
                keys = set(n.get("causes") or {}) | ({n["cause"]} if n["cause"] else set())
                found.setdefault(n["node"], set()).update(k for k in keys if k != "unexplained")
    except ClipBridgeError:
        return None
    return {k: sorted(v) for k, v in found.items()}


def allows(allowed: dict[str, list[str]] | None, node: str, rule: str) -> bool:
    """Whether `rule` may be written at `node`: its cause was found there (or nothing was measured)."""
    return allowed is None or RULE_CAUSE.get(rule, "") in allowed.get(node, ())
