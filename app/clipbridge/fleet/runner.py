"""A fleet run: find the models, take each result from the cache or compute it on a backend, journal it, write
the reports (and changes.json with --against); `merge` joins the outputs of shards into one report."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clipbridge.core.errors import ClipBridgeError
from clipbridge.core.settings import Settings
from clipbridge.diff.inputs import SEED
from clipbridge.fleet import backends, envs, local, reports
from clipbridge.fleet.changes import compare
from clipbridge.fleet.job import Task, Warm
from clipbridge.fleet.keys import EngineSpec, cache_key
from clipbridge.fleet.progress import Progress
from clipbridge.fleet.sources import Found, Model, describe, in_shard, walk
from clipbridge.fleet.store import JOURNAL, Cache, Journal, atomic_write, read_jsonl


@dataclass
class Config:
    sources: list[str]
    out: Path
    engines: list[EngineSpec]
    cache: Path
    precision: str = "model"
    inputs_dir: str | None = None
    backend: str = "local"
    ray_address: str | None = None
    shard: tuple[int, int] | None = None
    against: Path | None = None
    seed: int = SEED
    limits: backends.Limits = field(default_factory=backends.Limits)


def _pins(cfg: Config) -> dict[str, str]:
    return {e.name: e.pinned for e in cfg.engines if e.pinned}


def _tasks(cfg: Config, todo: list[Model]) -> list[Task]:
    """Locally a pinned engine's calls go to its built environment; with Ray the task's runtime_env is it."""
    here = cfg.backend == "local"
    pythons = {e.name: envs.build(cfg.cache, e) for e in cfg.engines if e.pinned and here}
    names = tuple(e.name for e in cfg.engines)
    memory = cfg.limits.memory_mb or Settings.from_env().sandbox_memory_mb  # the local workers' cap, Ray's too
    return [Task(m.name, m.path, m.sha256, m.inputs, names, cfg.precision, cfg.seed, pythons, memory_mb=memory)
            for m in todo]


Hit = tuple[Model, dict[str, Any], float]  # the model, its cached record, the seconds the lookup took


def _lookup(cfg: Config, found: list[Found], cache: Cache, workers: local.Workers | None,
            keys: dict[str, str]) -> tuple[list[Hit], list[Model]]:
    """Hash each model in turn and take its answer from the cache, or queue it: each model queued starts a worker
    (up to --workers), whose start then overlaps the hashing of the rest."""
    hits: list[Hit] = []
    todo: list[Model] = []
    for f in found:
        m = describe(f, cfg.inputs_dir)
        if not in_shard(m.sha256, cfg.shard):
            continue
        keys[m.name] = cache_key(m.sha256, m.inputs_sha256, cfg.seed, cfg.engines, cfg.precision)
        start = time.perf_counter()
        hit = cache.get(keys[m.name])
        if hit is None or hit.get("sha256") != m.sha256:
            todo.append(m)
            if workers is not None:
                workers.start(len(todo))
        else:
            hits.append((m, hit, time.perf_counter() - start))
    return hits, todo


def named(r: dict[str, Any], name: str, key: str) -> dict[str, Any]:
    """The line under this run's names: the path as given, then the path inside the registry (a cached line, or
    one computed in another folder, carries the names of the run that computed it)."""
    return {"model": name, "path": key, **{k: v for k, v in r.items() if k not in ("model", "path")}}


def run(cfg: Config, progress: Progress | None = None) -> int:
    if len({e.name for e in cfg.engines}) < 2:
        raise ClipBridgeError("a fleet run needs at least two different engines", "--engine")
    found = walk(cfg.sources)  # a missing SOURCE is refused before anything starts
    cfg.out.mkdir(parents=True, exist_ok=True)
    cache = Cache(cfg.cache / "results")
    keys: dict[str, str] = {}
    # A pinned engine runs in its own environment's interpreter: the worker need not import the installed one.
    warm = Warm(tuple(e.name for e in cfg.engines if not e.pinned))
    workers = local.Workers(cfg.limits, warm) if cfg.backend == "local" else None
    journal = Journal(cfg.out / JOURNAL)
    records: list[dict[str, Any]] = []
    counted = progress is None  # ours: its total is known once the models are hashed
    bar = progress or Progress(0)

    where = {f.name: f.key for f in found}

    def finished(r: dict[str, Any], cacheable: bool = True) -> None:
        r = named(r, r["model"], where[r["model"]])
        if cacheable and not r["cached"]:
            cache.put(keys[r["model"]], {**r, "seconds": r["seconds"]})  # before the journal line: resume sees it
        journal.append(r)
        records.append(r)
        bar.update(r)

    try:
        hits, todo = _lookup(cfg, found, cache, workers, keys)
        if counted:
            bar.total = len(hits) + len(todo)
        for m, hit, seconds in hits:
            finished({**named(hit, m.name, m.key), "cached": True, "seconds": round(seconds, 4)})
        tasks = _tasks(cfg, todo)
        if cfg.backend == "ray":
            backends.run_ray(tasks, cfg.limits, finished, cfg.ray_address, _pins(cfg))
        elif workers is not None and tasks:
            workers.run(tasks, finished)
    finally:
        if workers is not None:
            workers.close()
        journal.close()
        cache.sync()  # every entry of this run on the disk before its reports (store.py: durability)
        bar.finish()
    return _write(cfg, records)


def _write(cfg: Config, records: list[dict[str, Any]]) -> int:
    reports.write_all(cfg.out, records)
    if cfg.against is not None:
        atomic_write(cfg.out / "changes.json", json.dumps(compare(cfg.against, records), indent=2,
                                                          allow_nan=False) + "\n")
    (cfg.out / JOURNAL).unlink(missing_ok=True)  # the reports now hold every line
    return reports.exit_code(records)


def merge(dirs: list[Path], out: Path, against: Path | None = None) -> int:
    """Shard outputs joined: the same files as one run over the whole registry."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for d in dirs:
        if not (d / "results.jsonl").is_file():
            raise ClipBridgeError(f"{d} has no results.jsonl (is it a fleet output?)", "DIR")
        for r in read_jsonl(d / "results.jsonl"):
            seen.setdefault((r["model"], r["sha256"]), r)
    out.mkdir(parents=True, exist_ok=True)
    cfg = Config([], out, [], Path(os.devnull), against=against)
    return _write(cfg, list(seen.values()))
