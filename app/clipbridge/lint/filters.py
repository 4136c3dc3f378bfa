"""--select/--ignore on a scan body (the CLI's json output and /v1/models/inspect?select=&ignore=)."""

from __future__ import annotations

from typing import Any

RANK = {"info": 0, "warning": 1, "error": 2}


def wanted(code: str, select: list[str], ignore: list[str]) -> bool:
    return (not select or code in select) and code not in ignore


def status_after_filter(old: str, findings: list[dict[str, Any]]) -> str:
    """The status the remaining findings justify (as drift.status_of): unsupported stays unsupported."""
    if old == "unsupported":
        return old
    drift = any(f["code"] != "engine-behaviour" and f["severity"] != "info" for f in findings)
    return "drift" if drift else "exact"


def filter_scan(body: dict[str, Any], select: list[str], ignore: list[str]) -> dict[str, Any]:
    """The body with unwanted findings dropped; each translation's status, the counts and the worst finding
    recomputed from what remains (ignoring nan-input turns a clip whose only drift is NaN into exact).
    An unresolved clip keeps its `error` (it is not a finding of the body; the linter reports it as
    `unresolved-clip`)."""
    if not select and not ignore:
        return body
    labels = [t["label"] for t in body["targets"]]
    counts = {label: {"exact": 0, "drift": 0, "unsupported": 0} for label in labels}
    worst: tuple[int, dict[str, Any]] | None = None
    for c in body["clips"]:
        c["findings"] = [f for f in c["findings"] if wanted(f["code"], select, ignore)]
        for t in c["translations"]:
            t["findings"] = [f for f in t["findings"] if wanted(f["code"], select, ignore)]
            t["status"] = status_after_filter(t["status"], t["findings"])
            counts[t["label"]][t["status"]] += 1
            for f in t["findings"]:
                if worst is None or RANK[f["severity"]] > worst[0]:
                    worst = (RANK[f["severity"]], {**f, "clip": c["id"], "label": t["label"]})
    body["summary"]["targets"] = [{"label": label, **counts[label]} for label in labels]
    body["summary"]["worst"] = worst[1] if worst else None
    return body
