"""Fleet benchmark: `clipbridge fleet` over a generated registry (tests/fleet/registry.py: clean, NaN hazards,
min > max, float16, subgraphs), every ratio against an anchor measured in the same run.

- scaling: models per second with 2 workers / with 1 worker (local backend, fresh cache each; target >= 1.7x on a
  2-CPU machine);
- ray: the Ray backend's rate / the local backend's, 2 workers each (target >= 0.85x; Ray's start is outside the
  timing, as a cluster is up before a nightly run);
- overhead: fleet with 1 worker / app.diff.report.diff in process (warm), over the same models (target <= 1.10:
  fleet adds the scan, the sandbox round-trip, the cache and the reports); also the marginal cost per model
  between a small and a large chunk, without the fixed cost of starting the worker process;
- cached: a fully cached rerun / the first run (target < 5%).
On a shared machine the load moves between minutes, so the registry is split into --rounds chunks and, per chunk,
the in-process diff, fleet with 1 worker and fleet with 2 workers run back to back; the ratios are of the sums
over the chunks, and the median of the per-chunk ratios is printed beside them. Results equal `clipbridge diff`
per model (tests/fleet); here the ratios only.
Run: python bench/fleet.py [--models 200] [--rounds 2] [--skip-ray]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.diff import report, run  # noqa: E402
from app.engines import config as engine_config  # noqa: E402
from app.fleet import runner  # noqa: E402
from app.fleet.backends import Limits  # noqa: E402
from app.fleet.keys import parse_engine  # noqa: E402
from app.fleet.progress import Progress  # noqa: E402
from tests.fleet.registry import write  # noqa: E402


def fleet(sources: list[Path], work: Path, name: str, workers: int, backend: str = "local",
          cache: Path | None = None) -> float:
    cfg = runner.Config([str(p) for p in sources], work / name, [parse_engine("onnxruntime"), parse_engine("openvino")],
                        cache or work / f"cache-{name}", backend=backend, limits=Limits(workers=workers))
    start = time.perf_counter()
    runner.run(cfg, Progress(0, open(os.devnull, "w"), tty=False))
    return time.perf_counter() - start


def in_process(paths: list[Path]) -> float:
    report.diff(run.direct, paths[0].read_bytes(), None, run.Options())  # warm the engines' imports once
    start = time.perf_counter()
    for p in paths:
        report.diff(run.direct, p.read_bytes(), None, run.Options())
    return time.perf_counter() - start


def host() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    return {"cpu": model, "cpus": os.cpu_count(), "isa": engine_config.cpu_isa(), "load": os.getloadavg()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--skip-ray", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="clipbridge-fleet-bench-") as tmp:
        work = Path(tmp)
        paths = write(work / "registry", args.models)
        n, k = len(paths), max(1, args.rounds)
        # Chunk sizes 1, 3, 5, ... parts: two chunk sizes give the marginal cost per model, which the fixed cost of
        # starting a worker process (its engine imports) does not enter.
        parts = [2 * i + 1 for i in range(k)]
        cuts = [round(n * sum(parts[:i]) / sum(parts)) for i in range(k + 1)]
        chunks = [paths[cuts[i]:cuts[i + 1]] for i in range(k)]
        rounds = []
        for i, chunk in enumerate(chunks):  # back to back per chunk: the three see the same load
            rounds.append((in_process(chunk), fleet(chunk, work, f"w1-{i}", 1), fleet(chunk, work, f"w2-{i}", 2,
                                                                                    cache=work / "cache-w2")))
        inproc, one, two = (sum(r[j] for r in rounds) for j in range(3))
        cached = fleet([work / "registry"], work, "again", 2, cache=work / "cache-w2")  # every model a hit
        out = {"models": n, "rounds": k, "host": host(), "in_process_diff_s": round(inproc, 2),
               "fleet_1_worker_s": round(one, 2), "fleet_2_workers_s": round(two, 2),
               "scaling_1_to_2": round(one / two, 2),
               "scaling_per_round": [round(r[1] / r[2], 2) for r in rounds],
               "overhead_1_worker": round(one / inproc, 3),
               "overhead_per_round": [round(r[1] / r[0], 3) for r in rounds],
               "overhead_marginal": round((rounds[-1][1] - rounds[0][1]) / (rounds[-1][0] - rounds[0][0]), 3)
               if k > 1 else None,
               "cached_rerun_s": round(cached, 2), "cached_fraction": round(cached / two, 4)}
        if not args.skip_ray:
            import ray
            root = str(Path(__file__).resolve().parents[1])
            ray.init(num_cpus=2, object_store_memory=100 * 1024 * 1024, include_dashboard=False,
                     log_to_driver=False, configure_logging=False, runtime_env={"env_vars": {"PYTHONPATH": root}})
            try:
                fleet(chunks[0][:10], work, "ray-warm", 2, "ray")  # start Ray's workers (a cluster is up)
                local_s = fleet([work / "registry"], work, "local-vs-ray", 2)
                ray_s = fleet([work / "registry"], work, "ray", 2, "ray")
            finally:
                ray.shutdown()
            out.update({"local_2_workers_s": round(local_s, 2), "ray_2_workers_s": round(ray_s, 2),
                        "ray_vs_local": round(local_s / ray_s, 2)})
        out["load_after"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
