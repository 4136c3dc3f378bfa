"""`clipbridge dialects`: the capability matrix (GET /v1/dialects) as JSON, or as a table with the defaults and
this host's facts. Imported by app/clipbridge/cli/main.py."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from clipbridge.cli import output as cli_output
from clipbridge.service.capabilities import capabilities


def cmd_dialects(args: argparse.Namespace) -> int:
    body = capabilities()
    if args.format == "json":
        json.dump(body, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    rows = [["dialect", "version", "selects", "ranks", "dtypes"]]
    for d in body["dialects"]:
        rows += _version_rows(d["dialect"], d["versions"])
    cli_output.print_wrapped(rows)
    host = body["host"]
    ov = host.get("openvino") or {}
    named = [d["dialect"] for d in body["dialects"] if not d.get("in_defaults", True)]
    notes = ["Defaults: " + ", ".join(":".join(str(v) for v in d["default_target"].values())
                                      for d in body["dialects"])]
    if named:
        notes.append(f"Used when named (--target {named[0]}), not by default: {', '.join(named)}")
    notes.append("Rules per version and the finding codes: clipbridge dialects --format json (or GET /v1/dialects)")
    notes.append(f"This host: {host['machine']}, ISA {host['cpu_isa'] or 'unknown'}, OpenVINO bf16 variant "
                 f"{host['openvino_bf16_variant']}, default inference precision "
                 f"{ov.get('default_inference_precision', 'n/a (openvino not installed)')} "
                 "(docs/host-differences.md)")
    print()
    for line in notes:  # wrapped like the table, to the same width
        print(textwrap.fill(line, cli_output.TABLE_WIDTH, break_on_hyphens=False, subsequent_indent="  "))
    return 0


def _version_rows(dialect: str, versions: list[dict]) -> list[list[str]]:
    """One row per run of consecutive versions that differ only in their name ("directml 3_0 to 4_1"), so
    that the table stays short once it wraps to 100 columns."""
    out: list[list[str]] = []
    run: list[dict] = []

    def key(v: dict) -> tuple:
        return v["ranks"], tuple(v["dtypes"]), str(v["selects"]).replace(str(v["version"]), "{}")

    def flush() -> None:
        if run:
            first, last = run[0], run[-1]
            name = str(first["version"]) if len(run) == 1 else f"{first['version']} to {last['version']}"
            selects = str(first["selects"]) if len(run) == 1 else \
                str(first["selects"]).replace(str(first["version"]), name)
            out.append([dialect, name, selects, str(first["ranks"]), " ".join(first["dtypes"])])
            run.clear()
    for v in versions:
        if run and key(v) != key(run[-1]):
            flush()
        run.append(v)
    flush()
    return out
