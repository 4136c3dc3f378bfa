"""clipbridge fleet: results equal to `clipbridge diff` per model, the files and their fields, the cache, --against,
shards and merge, exit codes and progress (docs/fleet.md)."""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from clipbridge.cli.main import main
from clipbridge.fleet import backends, job, runner, slots
from clipbridge.fleet.keys import cache_key
from clipbridge.fleet.progress import Progress
from clipbridge.fleet.sources import discover, file_sha256, in_shard, parse_shard
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import COUNT, answers, config, quiet
from tests.fleet.registry import KINDS, BUILDERS

WARM = job.Warm(("onnxruntime", "openvino"))
FIELDS = {"model", "path", "sha256", "verdict", "first_divergence", "findings", "engines", "cached", "seconds",
          "error", "scan"}
SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("index", [pytest.param(i, id=f"{KINDS[i % len(KINDS)]}-{i}") for i in range(COUNT)])
def test_a_model_answers_as_clipbridge_diff_does(index, registry, baseline, tmp_path):
    """The oracle is the single-model command itself: `clipbridge diff MODEL --format json`, whose edge section is
    the pass a fleet runs (issue 44: the CLI's own verdict is on an ordinary sample)."""
    rec = next(r for r in read_jsonl(baseline[0] / "results.jsonl") if r["model"].endswith(f"_{index:04d}.onnx"))
    report = tmp_path / "diff.json"
    code = main(["diff", rec["model"], "--format", "json", "--output", str(report)])
    body = json.loads(report.read_text())
    edge = body["edge"]
    assert (rec["verdict"], rec["first_divergence"], rec["findings"]) == \
        (edge["verdict"], edge["first_divergence"], edge["nodes"])
    assert rec["engines"] == [{**{k: e[k] for k in ("name", "version", "precision")}, "settings": pinned(e)}
                              for e in body["engines"]]
    assert code == (0 if body["verdict"] == "equal" else 1)


def pinned(engine: dict) -> dict:
    """The diff's settings as a fleet worker runs the engine: one thread, unpinned (app/clipbridge/engines/threads.py)."""
    threads = {"onnxruntime": {"intra_op_num_threads": 1},
               "openvino": {"inference_num_threads": 1, "cpu_pinning": False}}.get(engine["name"], {})
    return {**engine["settings"], **threads}


def test_every_line_has_the_fields_and_the_run_its_files(registry, baseline):
    out, _, code = baseline
    records = read_jsonl(out / "results.jsonl")
    assert len(records) == len(discover([str(registry)])) and all(set(r) == FIELDS for r in records)
    assert [r["model"] for r in records] == sorted(r["model"] for r in records)
    assert all(not r["cached"] and r["error"] is None for r in records)
    assert code == 1 and {r["verdict"] for r in records} >= {"equal", "explained"}
    sarif = json.loads((out / "report.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert len(sarif["runs"][0]["results"]) == sum(len(r["findings"]) for r in records)
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert suite is not None and int(suite.get("tests")) == len(records)
    assert "## The slowest models" in (out / "summary.md").read_text()
    assert not (out / "results.partial.jsonl").exists()


def test_the_sarif_report_is_valid_2_1_0(baseline):
    schema = next(SARIF_SCHEMA.glob("sarif*.json"), None)
    if schema is None:
        pytest.skip("no SARIF schema in tests/data")
    jsonschema.validate(json.loads((baseline[0] / "report.sarif").read_text()), json.loads(schema.read_text()))


def test_a_cached_rerun_recomputes_nothing(registry, baseline, cache_copy, tmp_path):
    code = runner.run(config([str(registry)], tmp_path / "again", cache_copy), quiet())
    again = read_jsonl(tmp_path / "again" / "results.jsonl")
    assert all(r["cached"] for r in again) and code == baseline[2]
    assert answers(again) == answers(read_jsonl(baseline[0] / "results.jsonl"))


def test_against_names_exactly_the_changed_model(registry, baseline, cache_copy, tmp_path):
    """One model's bytes changed (a clean model becomes a NaN-hazard clip), one added, one removed."""
    reg = tmp_path / "registry"
    shutil.copytree(registry, reg)
    models = sorted(reg.rglob("*.onnx"))
    changed = next(p for p in models if "/clean/" in str(p))
    changed.write_bytes(BUILDERS["nan"](3.5))
    removed = next(p for p in models if "/minmax/" in str(p))
    removed.unlink()
    (reg / "clean" / "added.onnx").write_bytes(BUILDERS["clean"](7.0))
    prev = tmp_path / "prev"  # the baseline's records, renamed to this registry's paths
    prev.mkdir()
    lines = (baseline[0] / "results.jsonl").read_text().replace(str(registry), str(reg))
    (prev / "results.jsonl").write_text(lines)
    runner.run(config([str(reg)], tmp_path / "now", cache_copy, against=prev), quiet())
    changes = json.loads((tmp_path / "now" / "changes.json").read_text())
    assert changes["changed_models"] == [str(changed)]
    assert changes["new"] == [str(reg / "clean" / "added.onnx")] and changes["removed"] == [str(removed)]
    entry = changes["changes"][0]
    assert entry["key"] == {"cause": "nan-input", "engine": "openvino", "model": str(changed)}
    assert entry["before"]["verdict"] == "equal" and entry["after"]["verdict"] == "explained"
    assert entry["witness"]["input"] == "nan" and changes["engine_versions"] == {}


def test_an_engine_version_change_names_the_engine(registry, baseline, cache_copy, tmp_path):
    """The previous run as if OpenVINO had been another version, one model answering differently then."""
    prev = tmp_path / "prev"
    prev.mkdir()
    records = read_jsonl(baseline[0] / "results.jsonl")
    planted = next(r for r in records if r["verdict"] == "explained")
    for r in records:
        r["engines"][1]["version"] = "2025.4.0"
        if r is planted:
            r.update(verdict="equal", first_divergence=None, findings=[])
    (prev / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    runner.run(config([str(registry)], tmp_path / "now", cache_copy, against=prev), quiet())
    changes = json.loads((tmp_path / "now" / "changes.json").read_text())
    assert changes["changed_models"] == [planted["model"]]
    assert changes["changes"][0]["key"]["engine"] == "openvino"
    assert changes["engine_versions"]["openvino"]["before"] == "2025.4.0"


def test_shards_cover_the_registry_once_and_merge_to_one_run(registry, baseline, cache_copy, tmp_path):
    outs = []
    for i in range(3):
        out = tmp_path / f"shard{i}"
        runner.run(config([str(registry)], out, cache_copy, shard=(i, 3)), quiet())
        outs.append(out)
    names = [[r["model"] for r in read_jsonl(o / "results.jsonl")] for o in outs]
    assert sum(len(n) for n in names) == len(set().union(*map(set, names))) == len(discover([str(registry)]))
    code = main(["fleet", "merge", *map(str, outs), "--output", str(tmp_path / "merged")])
    assert code == baseline[2]
    assert answers(read_jsonl(tmp_path / "merged" / "results.jsonl")) == \
        answers(read_jsonl(baseline[0] / "results.jsonl"))
    for name in ("report.sarif", "junit.xml", "summary.md"):
        assert (tmp_path / "merged" / name).is_file()


@pytest.mark.parametrize("text,expected", [
    pytest.param("0/1", (0, 1), id="whole"), pytest.param("3/4", (3, 4), id="last"),
    pytest.param(None, None, id="none"),
])
def test_shard_parses(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", [pytest.param(t, id=t) for t in ("4/4", "1", "a/2", "-1/2", "1/0")])
def test_a_bad_shard_is_refused_with_exit_2(text, registry, tmp_path, capsys):
    assert main(["fleet", "run", str(registry), "--output", str(tmp_path), f"--shard={text}"]) == 2
    assert "--shard" in capsys.readouterr().err


def test_shards_partition_by_sha256():
    shas = [f"{i:064x}" for i in range(50)]
    assert all(sum(in_shard(s, (i, 4)) for i in range(4)) == 1 for s in shas)


def test_a_model_that_cannot_run_is_an_error_line_and_exit_2(registry, cache_copy, tmp_path):
    reg = tmp_path / "reg"
    shutil.copytree(registry / "clean", reg / "clean")
    (reg / "broken.onnx").write_bytes(b"\x08\x07not a model")
    code = runner.run(config([str(reg)], tmp_path / "out", cache_copy), quiet())
    records = {Path(r["model"]).name: r for r in read_jsonl(tmp_path / "out" / "results.jsonl")}
    assert code == 2 and records["broken.onnx"]["verdict"] == "error" and records["broken.onnx"]["error"]
    assert all(r["error"] is None for n, r in records.items() if n != "broken.onnx")


@pytest.mark.parametrize("argv,fragment", [
    pytest.param(["--engine", "tensorrt"], "unknown engine", id="unknown-engine"),
    pytest.param(["--engine", "openvino=="], "NAME==VERSION", id="empty-version"),
    pytest.param(["--engine", "onnxruntime"], "two different engines", id="one-engine"),
    pytest.param(["--workers", "0"], "--workers", id="no-workers"),
])
def test_usage_errors_exit_2(argv, fragment, registry, tmp_path, capsys):
    assert main(["fleet", "run", str(registry), "--output", str(tmp_path), "--cache", str(tmp_path / "c"), *argv]) == 2
    assert fragment in capsys.readouterr().err


def test_a_missing_source_exits_2(tmp_path, capsys):
    assert main(["fleet", "run", str(tmp_path / "nowhere"), "--output", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("tty,expect", [pytest.param(True, "\r[", id="terminal"),
                                        pytest.param(False, "[1/2] m.onnx: explained (cached)", id="plain")])
def test_progress_is_a_bar_on_a_terminal_and_lines_otherwise(tty, expect):
    stream = io.StringIO()
    p = Progress(2, stream, tty=tty)
    p.update({"model": "m.onnx", "verdict": "explained", "error": None, "cached": True, "seconds": 0.1})
    assert stream.getvalue().startswith(expect)
    if tty:
        assert "cached 1 differ 1 failed 0" in stream.getvalue() and "ETA" in stream.getvalue()


def test_a_worker_process_is_replaced_after_recycle_models(registry):
    """--recycle 2: the third model runs in a fresh sandbox worker, and answers the same."""
    model = sorted(registry.rglob("*.onnx"))[0]
    task = job.Task(str(model), str(model), file_sha256(model), None, ("onnxruntime", "openvino"), "model", 20240)
    slot = slots.Slot(backends.Limits(workers=1, recycle=2), WARM)
    try:
        first, pools = [], []
        for _ in range(3):
            record, cacheable = slot.run(task)
            first.append({**record, "seconds": 0})
            pools.append(slot.current.pool)
    finally:
        slot.close()
    assert pools[0] is pools[1] and pools[1] is not pools[2] and first[0] == first[1] == first[2] and cacheable


def test_inputs_dir_gives_a_models_inputs_as_diff_inputs_does(registry, tmp_path):
    """NAME.npz in --inputs-dir feeds the model: finite inputs, so the NaN-hazard model is equal (as
    `clipbridge diff --inputs` says), and the cache key moves with the inputs' bytes."""
    import numpy as np
    model = next(p for p in sorted(registry.rglob("*.onnx")) if "/nan/" in str(p))
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    np.savez(inputs / f"{model.stem}.npz", x=np.linspace(-8, 8, 16, dtype=np.float32))
    runner.run(config([str(model)], tmp_path / "out", tmp_path / "cache", inputs_dir=str(inputs)), quiet())
    (rec,) = read_jsonl(tmp_path / "out" / "results.jsonl")
    report = tmp_path / "diff.json"
    main(["diff", str(model), "--inputs", str(inputs / f"{model.stem}.npz"), "--format", "json", "-o", str(report)])
    body = json.loads(report.read_text())
    assert (rec["verdict"], rec["findings"]) == (body["verdict"], body["nodes"]) == ("equal", [])
    given, generated = discover([str(model)], str(inputs))[0], discover([str(model)])[0]
    engines = config([], tmp_path, tmp_path).engines
    assert cache_key(given.sha256, given.inputs_sha256, 1, engines, "model") != \
        cache_key(generated.sha256, generated.inputs_sha256, 1, engines, "model")


def test_an_openvino_ir_is_scanned_as_clipbridge_scan_does(registry, tmp_path, capsys):
    """An IR is scanned, not diffed (the diff's engines run ONNX): verdict null (nothing was compared), which counts as equal."""
    ov = pytest.importorskip("openvino")
    onnx_path = next(p for p in sorted(registry.rglob("*.onnx")) if "/nan/" in str(p))
    xml = tmp_path / "reg" / "nan_ir.xml"
    xml.parent.mkdir()
    ov.save_model(ov.convert_model(str(onnx_path)), str(xml))
    code = runner.run(config([str(tmp_path / "reg")], tmp_path / "out", tmp_path / "cache"), quiet())
    (rec,) = read_jsonl(tmp_path / "out" / "results.jsonl")
    main(["scan", str(xml), "--format", "json"])
    body = json.loads(capsys.readouterr().out)
    assert code == 0 and rec["verdict"] is None and rec["findings"] == [] and rec["error"] is None
    assert rec["scan"]["format"] == body["format"] == "openvino-ir"
    assert rec["scan"]["clips"] == body["summary"]["clips"] >= 1
