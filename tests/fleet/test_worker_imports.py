"""What a fleet worker imports: the diff, the scan and the default dialects, never a dialect used only when named,
the registry-derived unions or the server's stack. Each of those costs a worker's start time for nothing it runs
(docs/performance.md, Fleet); checked in a fresh interpreter, as a sandbox worker starts, after it ran one model
of each generated kind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clipbridge.dialects import registry
from clipbridge.dialects.kit.base import Dialect

ROOT = Path(__file__).resolve().parents[2]
WHEN_NAMED = [n for n in registry.names() if n not in registry.default_names()]
NEVER = ("clipbridge.service.specs", "clipbridge.api", "clipbridge.server", "clipbridge.cli", "clipbridge.lint", "clipbridge.fix", "fastapi", "starlette",
         "uvicorn", *(f"clipbridge.dialects.{n}" for n in WHEN_NAMED))

WORKER = """
import hashlib, json, sys
from pathlib import Path
from clipbridge.engines import sandbox_child
for name in sandbox_child.PRELOAD:
    __import__(name)
from clipbridge.fleet import job
job.warm(job.Warm(("onnxruntime", "openvino")))
for p in map(Path, sys.argv[1:]):
    task = job.Task(p.name, str(p), hashlib.sha256(p.read_bytes()).hexdigest(), None, ("onnxruntime", "openvino"),
                    "model", 0)
    assert job.run_one(task)["error"] is None, p
print(json.dumps(sorted(sys.modules)))
"""


def _imported(*args: str) -> set[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", WORKER, *args], capture_output=True, text=True, env=env,
                         check=True, cwd=ROOT)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_the_when_named_dialects_are_there_to_be_kept_out():
    assert WHEN_NAMED and set(WHEN_NAMED).isdisjoint(registry.default_names())


def test_a_worker_imports_only_what_it_runs(registry: Path):
    kinds = sorted({p.parent.name: p for p in sorted(registry.rglob("*.onnx"))}.values())
    loaded = _imported(*map(str, kinds))
    assert {"clipbridge.diff.report", "clipbridge.scan.report", "clipbridge.dialects.onnx", "clipbridge.dialects.openvino",
            "clipbridge.dialects.directml"} <= loaded
    assert sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in NEVER)) == []


def test_a_when_named_dialect_loads_on_first_use():
    lazy = registry.Registry({"tosa": "clipbridge.dialects.tosa"})
    assert list(lazy) == ["tosa"] and not lazy.in_defaults("tosa")
    d = lazy["tosa"]
    assert isinstance(d, Dialect) and d.name == "tosa" and not d.in_defaults


@pytest.mark.parametrize("entry", [("onnx", "clipbridge.dialects.onnx"), ("webnn", "clipbridge.dialects.tosa")],
                         ids=["a-default-registered-lazily", "the-wrong-package"])
def test_a_lazy_entry_that_is_a_default_or_another_dialect_is_refused(entry):
    name, module = entry
    with pytest.raises(RuntimeError, match="when-named"):
        registry.Registry({name: module})[name]
