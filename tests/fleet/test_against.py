"""`--against` across folders (issue 47): a model is matched by its path inside the registry (relative to its
SOURCE), and a model found under a new path with the same bytes is `moved` (docs/fleet.md, What changed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clipbridge.core.errors import ClipBridgeError
from clipbridge.fleet import runner
from clipbridge.fleet.changes import compare
from clipbridge.fleet.sources import walk
from clipbridge.fleet.store import read_jsonl
from tests.fleet.conftest import config, quiet
from tests.fleet.registry import BUILDERS


def _model(kind: str, registry: Path) -> Path:
    return sorted(registry.rglob(f"{kind}/*.onnx"))[0]


def test_a_registry_in_another_folder_names_exactly_the_changed_models(registry, baseline, cache_copy, tmp_path):
    """Last night's registry copied elsewhere (nothing rewritten in the previous results); three models change their
    answer, one changes its bytes but not its answer, one moves, one is added and one removed."""
    reg = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(registry, reg)
    changed = {"clean": BUILDERS["nan"](3.5), "nan": BUILDERS["clean"](3.25), "float16": BUILDERS["clean"](3.75)}
    paths = {kind: _model(kind, reg) for kind in changed}
    for kind, data in changed.items():
        paths[kind].write_bytes(data)
    same_answer = sorted(reg.rglob("clean/*.onnx"))[1]
    same_answer.write_bytes(BUILDERS["clean"](9.5))  # new bytes, the same answer: not a change of answer
    moved_from = _model("subgraph", reg)
    moved_to = reg / "archive" / moved_from.name
    moved_to.parent.mkdir()
    moved_from.rename(moved_to)
    removed = _model("minmax", reg)
    removed.unlink()
    added = reg / "clean" / "added.onnx"
    added.write_bytes(BUILDERS["clean"](7.0))
    runner.run(config([str(reg)], tmp_path / "now", cache_copy, against=baseline[0]), quiet())
    changes = json.loads((tmp_path / "now" / "changes.json").read_text())
    assert changes["changed_models"] == sorted(str(p) for p in paths.values())
    assert changes["new"] == [str(added)]
    assert changes["removed"] == [str(removed).replace(str(reg), str(registry))]
    assert changes["moved"] == [{"from": str(moved_from).replace(str(reg), str(registry)), "to": str(moved_to),
                                 "sha256": changes["moved"][0]["sha256"]}]
    assert changes["engine_versions"] == {}
    now = {r["model"]: r for r in read_jsonl(tmp_path / "now" / "results.jsonl")}
    assert now[str(moved_to)]["path"] == f"archive/{moved_to.name}"


@pytest.mark.parametrize("layout, sources, want", [
    pytest.param({"r/a/m.onnx": "x"}, ["r"], ["a/m.onnx"], id="inside-a-folder"),
    pytest.param({"r/a/m.onnx": "x"}, ["r/a/m.onnx"], ["m.onnx"], id="a-file-as-source"),
    pytest.param({"one/m.onnx": "x", "two/m.onnx": "y"}, ["one", "two"], ["one/m.onnx", "two/m.onnx"],
                 id="two-sources-sharing-a-path"),
    pytest.param({"one/m.onnx": "x", "one/sub/n.onnx": "y"}, ["one", "one/sub"], ["sub/n.onnx", "m.onnx"],
                 id="a-model-under-two-sources-once"),
], )
def test_a_models_path_inside_the_registry(layout, sources, want, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for rel, text in layout.items():
        Path(rel).parent.mkdir(parents=True, exist_ok=True)
        Path(rel).write_text(text)
    assert sorted(f.key for f in walk(sources)) == sorted(want)


def test_two_models_sharing_a_path_inside_the_registry_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for rel in ("a/r/m.onnx", "b/r/m.onnx"):
        Path(rel).parent.mkdir(parents=True)
        Path(rel).write_text("x")
    with pytest.raises(ClipBridgeError) as err:
        walk(["a/r", "b/r"])
    assert err.value.loc == "SOURCE" and "'r/m.onnx'" in err.value.message


def _line(model: str, sha: str, verdict: str = "equal", path: str | None = None) -> dict:
    line = {"model": model, "sha256": sha, "verdict": verdict, "first_divergence": None, "error": None,
            "findings": [], "engines": [{"name": "onnxruntime", "version": "1"}]}
    return {**line, "path": path} if path else line


@pytest.mark.parametrize("before, after, want", [
    pytest.param([_line("/x/r/a.onnx", "1", path="a.onnx")], [_line("/y/r/a.onnx", "1", "explained", "a.onnx")],
                 {"changed_models": ["/y/r/a.onnx"], "new": [], "removed": [], "moved": []}, id="across-folders"),
    pytest.param([_line("r/a.onnx", "1")], [_line("r/a.onnx", "1", path="a.onnx")],
                 {"changed_models": [], "new": [], "removed": [], "moved": []},
                 id="a-run-without-paths-matches-by-the-name-given"),
    pytest.param([_line("r/a.onnx", "1")], [_line("r/a.onnx", "1", "explained", "a.onnx")],
                 {"changed_models": ["r/a.onnx"], "new": [], "removed": [], "moved": []},
                 id="a-run-without-paths-names-a-change"),
    pytest.param([_line("r/a.onnx", "1", path="a.onnx")], [_line("r/b/a.onnx", "1", "explained", "b/a.onnx")],
                 {"changed_models": ["r/b/a.onnx"], "new": [], "removed": [],
                  "moved": [{"from": "r/a.onnx", "to": "r/b/a.onnx", "sha256": "1"}]}, id="moved-and-changed"),
    pytest.param([_line("r/a.onnx", "1", path="a.onnx"), _line("r/b.onnx", "1", path="b.onnx")],
                 [_line("r/c.onnx", "1", path="c.onnx")],
                 {"changed_models": [], "new": [], "removed": ["r/b.onnx"],
                  "moved": [{"from": "r/a.onnx", "to": "r/c.onnx", "sha256": "1"}]}, id="two-copies-one-moved"),
])
def test_compare_matches_by_path_then_by_content(before, after, want, tmp_path):
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in before))
    got = compare(tmp_path, after)
    assert {k: got[k] for k in want} == want
