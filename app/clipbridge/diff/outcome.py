"""The verdict is about the outputs (issue 44): what a user's model returns decides, not what differs inside it.

- `equal` when every final output agrees within its tolerance; every internal difference then reaches no output
  and is listed under `masked` (with its cause), never red.
- Otherwise `explained` / `unexplained` from the nodes whose difference reaches a differing output (the walk's
  origin of each differing output: the introduced nodes it came from). A node whose difference reaches none
  (a NaN row a Softmax drops, a Cast of -inf that a Where discards) goes under `masked` too.
- `fails`: whether the diff fails, the CLI's exit code 1: the outputs differ, or (`--fail-on masked`) some
  difference is masked, or (`--fail-on edge`) the edge probe's verdict is not `equal`.
"""

from __future__ import annotations

from typing import Any

from clipbridge.core.errors import ClipBridgeError

FAIL_ON = ("masked", "edge")


def reaching(rows: list[dict[str, Any]], origins: set[str] | None) -> tuple[list[dict], list[dict]]:
    """(rows whose difference reaches a differing output, rows it does not reach). `origins` are the introduced
    nodes the differing outputs came from; None when unknown (an output differs but the walk traced no origin
    to it: bounded marking, bisection), and then every row is kept as reaching: nothing is hidden on a guess."""
    if origins is None:
        return rows, []
    keep, masked = [], []
    for r in rows:
        sources = set(r.get("inherited_from") or []) if r.get("origin") == "inherited" else {r["node"]}
        (keep if sources & origins or r.get("origin") is None else masked).append(r)
    return keep, masked


def rounding_only(rows: list[dict[str, Any]]) -> bool:
    """Every reaching row is `accumulation-order` (within its summation bound), or inherited from such only:
    the outputs differ by the order of summation, which counts as agreeing (issue 45)."""
    return bool(rows) and all(r.get("cause") == "accumulation-order" and set(r.get("causes") or {}) <=
                              {"accumulation-order"} for r in rows)


def verdict(outputs_differ: bool, rows: list[dict[str, Any]]) -> str:
    """Issue 44 item 1: `equal` when no final output differs; else explained when every reaching introduced
    difference has a cause other than not-a-clip and every inherited one comes from such, else unexplained."""
    if not outputs_differ:
        return "equal"
    introduced = [n for n in rows if n["origin"] == "introduced"]
    if not introduced or any(n["cause"] in (None, "not-a-clip") for n in rows if n["origin"] != "inherited"):
        return "unexplained"
    return "explained" if all(n["cause"] for n in rows) else "unexplained"


def masked_section(rows: list[dict[str, Any]], rounding: bool = False) -> dict[str, Any]:
    """The nodes that differ inside the model while no differing output shows it, and one line saying so
    (`rounding`: the outputs differ only through accumulation-order nodes, which count as agreeing)."""
    if not rows:
        return {"nodes": [], "summary": None}
    causes: dict[str, int] = {}
    for r in rows:
        causes[r.get("cause") or "unexplained"] = causes.get(r.get("cause") or "unexplained", 0) + 1
    named = ", ".join(f"{k} {v}" for k, v in sorted(causes.items(), key=lambda kv: -kv[1]))
    reach = ("whose differences reach the outputs only within the summation bound, counted as agreeing"
             if rounding else "without reaching a differing output")
    return {"nodes": rows, "summary": f"{len(rows)} node(s) differ inside the model {reach} ({named}); "
                                      "--fail-on masked makes them fail"}


def fails(body: dict[str, Any], fail_on: tuple[str, ...]) -> bool:
    """Whether this diff fails (exit 1): the outputs differ, or a difference the caller asked to fail on."""
    if body["verdict"] != "equal":
        return True
    if "masked" in fail_on and body.get("masked", {}).get("nodes"):
        return True
    edge = body.get("edge")
    return "edge" in fail_on and edge is not None and edge.get("verdict") != "equal"


def check_fail_on(items: tuple[str, ...], loc: str) -> None:
    """Refuse a --fail-on / fail_on value that is not one of FAIL_ON, naming the option."""
    bad = [i for i in items if i not in FAIL_ON]
    if bad:
        raise ClipBridgeError(f"fail-on {bad[0][:40]!r} is not one of {', '.join(FAIL_ON)}", loc)
