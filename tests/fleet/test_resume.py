"""Kill and resume: a run killed with SIGKILL (its worker processes too) and started again computes only the
models it had not finished, and the files it left are whole (no half line, no corrupt cache entry)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from clipbridge.fleet import runner
from clipbridge.fleet.store import JOURNAL, read_jsonl
from tests.fleet.conftest import answers, config, quiet

ROOT = Path(__file__).resolve().parents[2]


def test_a_killed_run_resumes_where_it_stopped(registry, baseline, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    cmd = [sys.executable, "-m", "clipbridge.cli.main", "fleet", "run", str(registry), "--output", str(out),
           "--cache", str(cache), "--workers", "1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(read_jsonl(out / JOURNAL)) < 3 and proc.poll() is None:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its sandbox workers, mid-model
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    journal = (out / JOURNAL).read_bytes()
    lines = journal.split(b"\n")
    # A line is one write: the file ends with a newline and every line is a whole record (no half of one).
    assert journal.endswith(b"\n") and lines[-1] == b""
    assert len(lines) - 1 >= 3 and all(json.loads(line)["model"] for line in lines[:-1])
    entries = list((cache / "results").rglob("*.json"))
    assert all(json.loads(p.read_text()) for p in entries)  # every cache entry is whole
    done = len(entries)
    assert 3 <= done < len(read_jsonl(baseline[0] / "results.jsonl"))
    assert not (out / "results.jsonl").exists()

    code = runner.run(config([str(registry)], out, cache), quiet())
    records = read_jsonl(out / "results.jsonl")
    assert sum(r["cached"] for r in records) == done  # what was finished before the kill is not computed again
    assert answers(records) == answers(read_jsonl(baseline[0] / "results.jsonl")) and code == baseline[2]
