"""`--against PREV_DIR`: what changed since a previous run (changes.json, docs/fleet.md).

A model is matched by its path inside the registry (results.jsonl's `path`, relative to its SOURCE: the same
registry in another folder matches; against a run written before that field existed, both runs are matched by
`model`, the path as given). A model found under a new path with the sha256 of a path that is gone is `moved`,
and compared as the same model. The lists name a model by the path as given in its own run (the current run's
for `changed_models`, `new` and `moved.to`; the previous run's for `removed` and `moved.from`).

A model is listed when its verdict, first divergence, causes or findings changed (a new sha256 or engine version
alone, with the same answers, is not a change of answer); each entry is keyed by (cause, engine, model) and
carries both answers and a witness. New and removed models are listed apart; an engine whose version differs
between the runs is named once at the top."""

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


def _field(old: list[dict[str, Any]]) -> str:
    """What both runs are matched by: the path inside the registry, or the path as given when the previous run
    was written before results.jsonl had `path` (the first run after the upgrade, in the same folder)."""
    return "path" if all(r.get("path") for r in old) else "model"


def _moved(old: dict[str, dict], new: dict[str, dict]) -> list[tuple[str, str]]:
    """(old path, new path) of each model found under a new path with an old path's sha256, that path gone: paired
    in path order, each path once."""
    gone: dict[str, list[str]] = {}
    for k in sorted(set(old) - set(new)):
        gone.setdefault(old[k]["sha256"], []).append(k)
    pairs = []
    for k in sorted(set(new) - set(old)):
        left = gone.get(new[k]["sha256"])
        if left:
            pairs.append((left.pop(0), k))
    return pairs


def _versions(pairs: list[tuple[dict, dict]]) -> dict[str, dict[str, str | None]]:
    versions: dict[str, dict[str, str | None]] = {}
    for before, after in pairs:
        for e_old, e_new in zip(before["engines"], after["engines"]):
            if e_old["name"] == e_new["name"] and e_old["version"] != e_new["version"] and e_new["version"]:
                versions[e_new["name"]] = {"before": e_old["version"], "after": e_new["version"]}
    return versions


def compare(prev: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    before = read_jsonl(prev / "results.jsonl")
    by = _field(before)
    old, new = {r[by]: r for r in before}, {r[by]: r for r in records}
    moved = _moved(old, new)
    pairs = [(k, k) for k in sorted(set(old) & set(new))] + moved
    entries = [e for a, b in pairs for e in _entries(new[b]["model"], old[a], new[b])]
    fresh = set(new) - set(old) - {b for _, b in moved}
    gone = set(old) - set(new) - {a for a, _ in moved}
    return {"against": str(prev), "changed_models": sorted({e["key"]["model"] for e in entries}),
            "changes": entries, "new": sorted(new[k]["model"] for k in fresh),
            "removed": sorted(old[k]["model"] for k in gone),
            "moved": sorted(({"from": old[a]["model"], "to": new[b]["model"], "sha256": new[b]["sha256"]}
                             for a, b in moved), key=lambda m: m["to"]),
            "engine_versions": _versions([(old[a], new[b]) for a, b in pairs])}
