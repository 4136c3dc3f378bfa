"""A quiet terminal (issue 47): the engines' and converters' own lines go to the log (`clipbridge -v` shows them),
never to the user's terminal by default (clipbridge.engines.quiet). Each case runs the command in a process of
its own and reads its real stderr (file descriptor 2), where the C++ loggers write."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What an engine or a third-party library writes: onnxruntime's and glog-style loggers, Python warnings, logging's
# default format, coremltools' lines, progress bars.
ENGINE_LINE = re.compile(r"\[[EWIV]:onnxruntime|^[EWIF]\d{4} |Warning\b|WARNING|ERROR -|Failed to load|ops/s|"
                         r"torchvision|\[torch\.onnx\]|Traceback")
PROBE = """
import os, sys, warnings
from clipbridge.engines import quiet
quiet.configure({verbose})
with quiet.to_log("probe"):
    os.write(2, b"[E:onnxruntime:, inference_session.cc:2544] Exception during initialization\\n")
    warnings.warn("a third-party FutureWarning", FutureWarning)
    print("Converting PyTorch Frontend ==> MIL Ops:   0%|  | 0/2 [00:00<?, ? ops/s]", file=sys.stderr)
print("error: clipbridge's own line", file=sys.stderr)
"""


def _stderr(args: list[str], cwd: Path = ROOT) -> tuple[int, str]:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
    return done.returncode, done.stderr


@pytest.mark.parametrize(("verbose", "shown"), [pytest.param(False, False, id="default"),
                                                 pytest.param(True, True, id="verbose")])
def test_engine_lines_go_to_the_log(verbose: bool, shown: bool) -> None:
    code, err = _stderr([sys.executable, "-c", PROBE.format(verbose=verbose)])
    assert code == 0 and "error: clipbridge's own line" in err  # clipbridge's own lines always reach it
    assert ("Exception during initialization" in err) is shown
    assert ("a third-party FutureWarning" in err) is shown and ("ops/s" in err) is shown
    if shown:
        assert "clipbridge.engines: probe: [E:onnxruntime:" in err


@pytest.mark.parametrize("args", [
    pytest.param(["diff", "docs/relu6.onnx"], id="readme-diff"),
    pytest.param(["diff", "docs/relu6.onnx", "--fix", "{tmp}/relu6.openvino.onnx"], id="readme-fix"),
])
def test_the_readme_examples_print_no_engine_line(args: list[str], tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "clipbridge.cli.main", *[a.format(tmp=tmp_path) for a in args]]
    code, err = _stderr(cli)
    assert code in (0, 1)
    assert not [ln for ln in err.splitlines() if ENGINE_LINE.search(ln)], err


@pytest.mark.slow
def test_a_chain_keeps_the_converters_lines_in_the_log(tmp_path: Path) -> None:
    """torch's exporter (torchvision registration warnings, FutureWarnings) and coremltools (`Failed to load`,
    its progress bars, its `ERROR - converting` line) write to stderr during a chain: the log only."""
    pytest.importorskip("torch")
    pytest.importorskip("coremltools")
    from tests.chain import models
    pt2 = tmp_path / "m.pt2"
    pt2.write_bytes(models.clamp_min_int())
    cli = [sys.executable, "-m", "clipbridge.cli.main", "chain", str(pt2), "onnx,coreml", "--static"]
    code, err = _stderr(cli)
    assert code == 0 and not [ln for ln in err.splitlines() if not ln.startswith(("note:", "error:"))], err
    code, err = _stderr([*cli[:3], "-v", *cli[3:]])
    assert code == 0 and "clipbridge.engines: chain: " in err


WORKER = """
import os, sys
sys.path.insert(0, {root!r})  # tests.sandbox_tasks, for the worker too (it takes this path, made absolute)
from clipbridge.core.settings import Settings
from clipbridge.engines import quiet
from clipbridge.engines.sandbox import Pool
from tests import sandbox_tasks
quiet.configure({verbose})
pool = Pool(Settings.from_env(), stderr=quiet.sink("fleet worker"))
print(pool.call("probe", sandbox_tasks.write_engine_line, (), {{}}, timeout_s=60, memory_mb=None))
pool.close()
"""


@pytest.mark.parametrize(("verbose", "shown"), [pytest.param(False, False, id="default"),
                                                 pytest.param(True, True, id="verbose")])
def test_a_sandbox_workers_engine_lines_go_to_the_log(verbose: bool, shown: bool) -> None:
    """Fleet's workers (clipbridge.fleet.slots) are sandbox workers whose stderr is quiet.sink: what an engine
    writes there is a DEBUG record, shown with -v only."""
    code, err = _stderr([sys.executable, "-c", WORKER.format(verbose=verbose, root=str(ROOT))])
    assert code == 0, err
    assert ("Exception during initialization" in err) is shown, err
    if shown:
        assert "clipbridge.engines: fleet worker: [E:onnxruntime:" in err


def test_fleet_uses_the_quiet_sink_for_its_workers() -> None:
    from clipbridge.fleet import slots
    assert slots._worker_stderr() == slots._worker_stderr()  # one pipe, shared by every worker
