"""`--against PREV_DIR`: what changed since a previous run (changes.json, docs/fleet.md).

A model is compared by its name (the path as given). It is listed when its verdict, first divergence, causes or
findings changed (a new sha256 or engine version alone, with the same answers, is not a change of answer); each
entry is keyed by (cause, engine, model) and carries both answers and a witness. New and removed models are
listed apart; an engine whose version differs between the runs is named once at the top."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from clipbridge.fleet.store import read_jsonl

ANSWER = ("verdict", "first_divergence", "error")


def _fkey(f: dict[str, Any]) -> tuple[str, str | None, str | None]:
    return f["node"], f["cause"], f["origin"]


def _answer(r: dict[str, Any]) -> dict[str, Any]:
    return {"verdict": r["verdict"], "first_divergence": r["first_divergence"], "error": r["error"],
            "sha256": r["sha256"], "engines": r["engines"], "findings": r["findings"]}


def _engines_apart(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The engines whose version differs between the two answers."""
    old = {e["name"]: e["version"] for e in before["engines"]}
    return [e["name"] for e in after["engines"] if e["name"] in old and old[e["name"]] != e["version"]]


def _disagreeing(f: dict[str, Any]) -> list[str]:
    """The engines whose witness output differs from the first engine's (the first engine is the reference)."""
    outs = list(((f.get("witness") or {}).get("outputs") or {}).items())
    return [e for e, v in outs[1:] if v != outs[0][1]] if outs else []


def _entries(name: str, before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    old = {_fkey(f): f for f in before["findings"]}
    new = {_fkey(f): f for f in after["findings"]}
    changed = [k for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    answers_moved = any(before[k] != after[k] for k in ANSWER)
    if not changed and not answers_moved:
        return []
    versions = _engines_apart(before, after)
    both = {"before": _answer(before), "after": _answer(after)}
    if not changed:
        return [{"key": {"cause": "verdict", "engine": ",".join(versions) or None, "model": name}, **both,
                 "witness": None}]
    out = []
    for k in changed:
        f = new.get(k) or old[k]
        engine = ",".join(versions) or ",".join(_disagreeing(f)) or None
        out.append({"key": {"cause": k[1] or "unexplained", "engine": engine, "model": name}, "node": k[0],
                    "finding": {"before": old.get(k), "after": new.get(k)}, **both, "witness": f.get("witness")})
    return out


def compare(prev: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    old = {r["model"]: r for r in read_jsonl(prev / "results.jsonl")}
    new = {r["model"]: r for r in records}
    entries = [e for name in sorted(set(old) & set(new)) for e in _entries(name, old[name], new[name])]
    versions: dict[str, dict[str, str | None]] = {}
    for name in set(old) & set(new):
        for e_old, e_new in zip(old[name]["engines"], new[name]["engines"]):
            if e_old["name"] == e_new["name"] and e_old["version"] != e_new["version"] and e_new["version"]:
                versions[e_new["name"]] = {"before": e_old["version"], "after": e_new["version"]}
    return {"against": str(prev), "changed_models": sorted({e["key"]["model"] for e in entries}),
            "changes": entries, "new": sorted(set(new) - set(old)), "removed": sorted(set(old) - set(new)),
            "engine_versions": versions}
