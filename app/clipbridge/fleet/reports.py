"""The run's files: results.jsonl (one line per model, sorted by model), and from one findings view written by
clipbridge.reports: report.sarif (2.1.0, one result per finding with the model as its artifact), junit.xml (one test
case per model) and summary.md."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from clipbridge.diff.formats import CAUSES
from clipbridge.fleet import models
from clipbridge.fleet.store import atomic_write, dumps
from clipbridge.reports import junit, markdown, sarif
from clipbridge.reports import view as v



def passes(r: dict[str, Any]) -> bool:
    """Nothing differs: the diff's verdict is equal, or the model is an IR, scanned and not diffed (verdict null:
    the diff's engines run ONNX; docs/fleet.md)."""
    return not r["error"] and r["verdict"] in (None, "equal")


def state(r: dict[str, Any]) -> str:
    """A model's one word in the summary and the progress lines: its verdict, `error`, or `not diffed` (an IR)."""
    return "error" if r["error"] else r["verdict"] or "not diffed"


def exit_code(records: list[dict[str, Any]]) -> int:
    """0 every model equal, 1 any differs, 2 any failed to run."""
    if any(r["error"] for r in records):
        return 2
    return 0 if all(map(passes, records)) else 1


def _finding_text(f: dict[str, Any]) -> str:
    w = f.get("witness") or {}
    outs = ", ".join(f"{e} {v}" for e, v in (w.get("outputs") or {}).items())
    return (f"{f['node']} ({f['op']}): {f['differing']}/{f['total']} differ, {f['origin'] or 'not replayed'}, "
            f"cause {f['cause'] or 'unexplained'}" + (f"; witness at {w.get('index')}: {outs}" if w else ""))


def _findings(r: dict[str, Any]) -> list[v.Finding]:
    """A model that failed is one fleet/error; each node the diff reported is a diff/<cause> finding at its node."""
    out = [v.Finding("fleet/error", "error", r["error"], v.Location(r["model"]))] if r["error"] else []
    return out + [v.Finding(f"diff/{f['cause'] or 'unexplained'}", "warning" if f["origin"] == "inherited" else "error",
                            _finding_text(f), v.Location(r["model"], f["node"]), None,
                            {"op": f["op"], "origin": f["origin"], "witness": f.get("witness")},
                            ("clipbridgeFleet/v1", f"{r['sha256']}|{f['node']}|{f['cause']}"))
                  for f in r["findings"]]


def _rules(records: list[dict[str, Any]]) -> list[v.Rule]:
    used = {"error"} if any(r["error"] for r in records) else set()
    used |= {f["cause"] or "unexplained" for r in records for f in r["findings"]}
    described = {**CAUSES, "error": "The model could not be scanned or diffed (the error says why)."}
    return [v.Rule(f"{'fleet' if x == 'error' else 'diff'}/{x}", described.get(x, x)) for x in sorted(used)]


def _case(r: dict[str, Any]) -> v.Case:
    failing = not r["error"] and not passes(r)
    return v.Case(r["model"], "fleet", [v.Failure(f"verdict {r['verdict']}", "\n".join(
        _finding_text(f) for f in r["findings"]))] if failing else [],
                  error=v.Failure(r["error"][:200], r["error"]) if r["error"] else None, seconds=r["seconds"])


def _introduced(r: dict[str, Any]) -> int:
    return sum(1 for f in r["findings"] if f["origin"] == "introduced")


def _blocks(records: list[dict[str, Any]], top: int) -> list[v.Block]:
    """summary.md: the counts, the worst models (errors, then the most introduced differences), the slowest."""
    verdicts = Counter(map(state, records))
    out: list[v.Block] = [v.Heading(1, "clipbridge fleet"), v.Paragraph((
        f"{len(records)} models; " + ", ".join(f"{n} {k}" for k, n in sorted(verdicts.items())),
        f"{sum(r['cached'] for r in records)} from the cache; exit code {exit_code(records)}"))]
    worst = sorted((r for r in records if not passes(r)),
                   key=lambda r: (not r["error"], -_introduced(r), r["model"]))[:top]
    if worst:
        out += [v.Heading(2, "The worst models"), v.Table(
            ("model", "verdict", "introduced", "first divergence", "error"),
            tuple((r["model"], state(r), str(_introduced(r)), _first(r["first_divergence"]),
                   (r["error"] or "-")[:120]) for r in worst))]
    slowest = sorted(records, key=lambda r: -r["seconds"])[:top]
    return out + [v.Heading(2, "The slowest models"), v.Table(("model", "seconds", "cached"), tuple(
        (r["model"], f"{r['seconds']:.3f}", str(r["cached"])) for r in slowest))]


def _first(fd: dict[str, Any] | None) -> str:
    return f"{fd['node']} ({fd['op']})" if fd else "-"


def view(records: list[dict[str, Any]], top: int = 10) -> v.Report:
    """The run as one findings view: every model an artifact of one SARIF run, a JUnit case per model."""
    return v.Report("", [f for r in records for f in _findings(r)], _rules(records),
                    artifacts=[r["model"] for r in records], junit_name="clipbridge fleet",
                    suites=[v.Suite("models", [_case(r) for r in records],
                                    sum(r["seconds"] for r in records))],
                    markdown=_blocks(records, top))


def write_all(out: Path, records: list[dict[str, Any]]) -> None:
    """Every report, each written atomically; results.jsonl sorted by model (then sha256) so that two backends
    or a merge of shards give the same file."""
    records = sorted(records, key=lambda r: (r["model"], r["sha256"]))
    for r in records:  # every line is what schemas/FleetRecord.json says, whichever worker, cache or shard wrote it
        models.check(r)
    report = view(records)
    atomic_write(out / "results.jsonl", "".join(dumps(r) + "\n" for r in records))
    atomic_write(out / "report.sarif", sarif.render([report]))
    atomic_write(out / "junit.xml", junit.render(report.junit_name, report.suites))
    atomic_write(out / "summary.md", markdown.render(report.markdown))
