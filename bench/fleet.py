"""Fleet benchmark: `clipbridge fleet` over a generated registry (tests/fleet/registry.py: clean, NaN hazards,
min > max, float16, subgraphs), every figure the median of interleaved pairs measured in the same run.

What is measured (docs/fleet.md, Speed; docs/performance.md, Fleet), over the whole registry each time:
- `whole_run_overhead` (the headline; target <= 1.10): one fleet run with 1 worker, wall clock from the call to
  the reports written (worker start, hashing, scan, sandbox round-trips, cache, reports: everything a user waits
  for), over the diff as users run it: clipbridge.diff.report.diff in a warm process, as `clipbridge diff` runs it
  (run.direct: its plain runs on a second thread, the engines' default threads), over the same models.
  `whole_run_overhead_vs_one_thread` divides by the same diff with fleet's engine settings instead (run.serial,
  one unpinned thread per engine), so that what the engine settings cost and what fleet adds can be told apart.
  Nothing is subtracted from either side.
- `scaling` (target >= 1.7 on 2 CPUs): fleet with 1 worker / fleet with 2 workers, fresh caches.
- `two_workers_vs_diff`: fleet at 2 workers / the diff as users run it (what a 2-CPU user sees end to end).
- `cached_fraction` (target < 0.05): a fully cached rerun / the 2-worker run that filled the cache.
- `ray_vs_local` (target >= 0.85): the local backend's time / Ray's, 2 workers each, Ray's start outside the
  timing (a cluster is up before a nightly run); its own pairs.
Each pair runs its members back to back, in an order that alternates between pairs (forward, then reversed), so
that a drift in the machine's speed weighs on both sides; each figure is the median of its per-pair ratios, and
every pair's ratio is printed beside it (`..._each`). The host (CPU model, ISA, load average before and after) is
printed with them. Results equal `clipbridge diff` per model (tests/fleet); here the times only.
Run: python bench/fleet.py [--models 200] [--pairs 5] [--skip-ray]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from clipbridge.diff import report, run  # noqa: E402
from clipbridge.engines import config as engine_config  # noqa: E402
from clipbridge.engines.threads import set_engine_threads  # noqa: E402
from clipbridge.fleet import job, runner  # noqa: E402
from clipbridge.fleet.backends import Limits  # noqa: E402
from clipbridge.fleet.keys import parse_engine  # noqa: E402
from clipbridge.fleet.progress import Progress  # noqa: E402
from tests.fleet.registry import write  # noqa: E402

ENGINES = ("onnxruntime", "openvino")
TARGETS = {"whole_run_overhead": ("<=", 1.10), "scaling": (">=", 1.7), "cached_fraction": ("<", 0.05),
           "ray_vs_local": (">=", 0.85)}


def fleet(registry: Path, out: Path, workers: int, cache: Path, backend: str = "local") -> float:
    cfg = runner.Config([str(registry)], out, [parse_engine(e) for e in ENGINES], cache, backend=backend,
                        limits=Limits(workers=workers))
    start = time.perf_counter()
    runner.run(cfg, Progress(0, open(os.devnull, "w"), tty=False))
    return time.perf_counter() - start


def in_process(paths: list[Path], threads: int | None = None) -> float:
    """The anchor: clipbridge.diff.report.diff in this (warm) process over every model; threads None: as
    `clipbridge diff` runs it (run.direct, the engines' default threads), else fleet's settings (run.serial)."""
    set_engine_threads(threads)
    execute = run.direct if threads is None else run.serial
    try:
        start = time.perf_counter()
        for p in paths:
            report.diff(execute, p.read_bytes(), None, run.Options())
        return time.perf_counter() - start
    finally:
        set_engine_threads(None)


def host() -> dict[str, Any]:
    """The facts the numbers depend on; `app_bytecode`: whether a worker finds clipbridge's modules compiled."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    bytecode = Path(importlib.util.cache_from_source(job.__file__)).is_file()
    return {"cpu": model, "cpus": os.cpu_count(), "isa": engine_config.cpu_isa(), "app_bytecode": bytecode,
            "python": platform.python_version(), "load": os.getloadavg()}


def interleaved(members: dict[str, Callable[[int], float]], pairs: int) -> list[dict[str, float]]:
    """Each pair: every member once, back to back, forward in even pairs and reversed in odd ones."""
    names = list(members)
    out = []
    for i in range(pairs):
        order = names if i % 2 == 0 else names[::-1]
        out.append({n: members[n](i) for n in order})
    return out


def median_of(runs: list[dict[str, float]], num: str, den: str) -> tuple[float, list[float]]:
    each = [r[num] / r[den] for r in runs]
    return round(statistics.median(each), 3), [round(v, 3) for v in each]


def local_pairs(registry: Path, paths: list[Path], work: Path, pairs: int) -> dict[str, Any]:
    members: dict[str, Callable[[int], float]] = {
        "diff": lambda i: in_process(paths),
        "diff_one_thread": lambda i: in_process(paths, threads=1),
        "fleet_1": lambda i: fleet(registry, work / f"w1-{i}", 1, work / f"cache-w1-{i}"),
        "fleet_2": lambda i: fleet(registry, work / f"w2-{i}", 2, work / f"cache-w2-{i}"),
    }
    runs = interleaved(members, pairs)
    for i, r in enumerate(runs):  # after its pair: the 2-worker run's cache holds every model
        r["cached"] = fleet(registry, work / f"again-{i}", 2, work / f"cache-w2-{i}")
    out: dict[str, Any] = {"seconds_each": [{k: round(v, 2) for k, v in r.items()} for r in runs]}
    for name, (num, den) in {"whole_run_overhead": ("fleet_1", "diff"),
                             "whole_run_overhead_vs_one_thread": ("fleet_1", "diff_one_thread"),
                             "scaling": ("fleet_1", "fleet_2"), "two_workers_vs_diff": ("fleet_2", "diff"),
                             "cached_fraction": ("cached", "fleet_2")}.items():
        out[name], out[f"{name}_each"] = median_of(runs, num, den)
    return out


def ray_pairs(registry: Path, work: Path, pairs: int) -> dict[str, Any]:
    import ray
    root = str(Path(__file__).resolve().parents[1])
    ray.init(num_cpus=2, object_store_memory=100 * 1024 * 1024, include_dashboard=False,
             log_to_driver=False, configure_logging=False, runtime_env={"env_vars": {"PYTHONPATH": root}})
    try:
        fleet(registry, work / "ray-warm", 2, work / "cache-ray-warm", "ray")  # start Ray's workers (a cluster is up)
        runs = interleaved({"local": lambda i: fleet(registry, work / f"l-{i}", 2, work / f"cache-l-{i}"),
                            "ray": lambda i: fleet(registry, work / f"r-{i}", 2, work / f"cache-r-{i}", "ray")},
                           pairs)
    finally:
        ray.shutdown()
    value, each = median_of(runs, "local", "ray")
    return {"ray_vs_local": value, "ray_vs_local_each": each}


def targets(out: dict[str, Any]) -> dict[str, Any]:
    checks = {">=": lambda v, t: v >= t, "<=": lambda v, t: v <= t, "<": lambda v, t: v < t}
    return {k: {"value": out[k], "target": f"{op} {t}", "met": checks[op](out[k], t)}
            for k, (op, t) in TARGETS.items() if out.get(k) is not None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=5, help="interleaved pairs per figure (each figure their median)")
    ap.add_argument("--skip-ray", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="clipbridge-fleet-bench-") as tmp:
        work = Path(tmp)
        paths = write(work / "registry", args.models)
        out: dict[str, Any] = {"models": len(paths), "pairs": max(1, args.pairs), "host": host()}
        in_process(paths[:5])  # warm this process's engines and imports once, outside every timing
        out.update(local_pairs(work / "registry", paths, work, max(1, args.pairs)))
        if not args.skip_ray:
            out.update(ray_pairs(work / "registry", work, max(1, args.pairs)))
        out["targets"] = targets(out)
        out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
