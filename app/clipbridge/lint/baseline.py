"""Baseline files: the findings a project has accepted. Findings in it do not fail the run; new ones do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clipbridge import __version__
from clipbridge.core.errors import ClipBridgeError
from clipbridge.lint.report import LintReport

FORMAT = "clipbridge-baseline/1"


def to_json(report: LintReport) -> dict[str, Any]:
    """Every current finding (after --select/--ignore), sorted so the file diffs well in review."""
    entries = [{"fingerprint": i.fingerprint, "clip": i.where, "target": i.target, "code": i.code,
                "severity": i.severity, "message": i.message} for i in report.items]
    entries.sort(key=lambda e: (e["clip"], e["target"], e["code"], e["fingerprint"]))
    return {"format": FORMAT, "tool": f"clipbridge {__version__}", "artifact": report.artifact,
            "findings": entries}


def write(report: LintReport, path: Path) -> int:
    body = to_json(report)
    path.write_text(json.dumps(body, indent=2) + "\n")
    return len(body["findings"])


def load(path: Path) -> dict[str, Any]:
    """A baseline file, checked enough that a wrong file is an error rather than 'nothing suppressed'."""
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ClipBridgeError(f"cannot read baseline {path}: {exc}", "--baseline") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT or not isinstance(body.get("findings"), list) \
            or not all(isinstance(e, dict) and isinstance(e.get("fingerprint"), str) for e in body["findings"]):
        raise ClipBridgeError(f"{path} is not a clipbridge baseline (format {FORMAT!r}, findings with "
                              "fingerprints); write one with --write-baseline", "--baseline")
    return body
