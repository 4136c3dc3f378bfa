"""Issue 46, fix: `clipbridge fix` on a model with external data reads it weightless (an OnDisk model), keeps the
folder on the written model, and writes OUT.onnx with its weights as external data beside it (the data files
copied by streaming into OUT's folder; none copied into the source's own folder; a different file of the same
name refused). The fix and its proof are those of the same model with every weight inside (the embedded way)."""

from __future__ import annotations

import dataclasses
import filecmp
import json
import tracemalloc
import weakref
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from clipbridge.cli import fix as cli_fix
from clipbridge.cli.main import main
from clipbridge.core.ondisk import OnDisk
from clipbridge.scan import external
from clipbridge.scan.external_out import write_model
from tests.diff.test_weightless import ROWS, mlp

ort = pytest.importorskip("onnxruntime")
ov = pytest.importorskip("openvino")
pytestmark = pytest.mark.engines

WIDTH, LAYERS = 128, 2  # 16384 elements a weight: past MAX_CONSTANT, so each stays a stub in its file
DATA = "model.onnx.data"


@pytest.fixture(scope="module")
def src(tmp_path_factory) -> Path:
    """ext/model.onnx with every tensor in model.onnx.data (the bounds too: read back in), inline.onnx the same
    model with every tensor inside, x.npz a batch with a NaN (so a guard is written)."""
    root = tmp_path_factory.mktemp("fix_weightless")
    m = mlp(WIDTH, LAYERS)
    onnx.save_model(m, str(root / "inline.onnx"))  # first: saving as external data changes `m`
    (root / "ext").mkdir()
    onnx.save_model(m, str(root / "ext" / "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=DATA, size_threshold=0)
    x = np.random.default_rng(4).standard_normal((ROWS, WIDTH)).astype(np.float32)
    x[0, :3] = np.nan
    np.savez(root / "x.npz", x=x)
    return root


def _fix(model: Path, out: Path, npz: Path) -> tuple[int, dict]:
    """(exit code, the JSON body): the report goes to a file beside OUT's folder, never into it."""
    report = out.parent.parent / f"{out.parent.name}-{out.stem}.json"
    code = main(["fix", str(model), "--engine", "onnxruntime", "--engine", "openvino", "--inputs", str(npz),
                 "--output", str(out), "--format", "json", "--report", str(report)])
    assert code in (0, 1)
    return code, json.loads(report.read_text())


PROOF = ("verdict", "first_divergence", "nodes", "outputs")


@pytest.fixture(scope="module")
def fixed(src, tmp_path_factory) -> dict:
    """Each way fixed once, into a folder of its own: {'ext'|'inline': (exit code, body, OUT)}."""
    out = {}
    for name, model in (("ext", src / "ext" / "model.onnx"), ("inline", src / "inline.onnx")):
        path = tmp_path_factory.mktemp(f"out_{name}") / "fixed.onnx"
        out[name] = (*_fix(model, path, src / "x.npz"), path)
    return out


def test_the_fix_and_its_proof_are_those_of_the_embedded_model(fixed):
    (code, body, _), (inline_code, inline_body, _) = fixed["ext"], fixed["inline"]
    assert body["rules_applied"] and body["verdict"] == "equal" and code == 0
    for key in ("verdict", "rules_applied", "skipped", "advice"):
        assert body[key] == inline_body[key], key
    for proof in ("proof", "proof_generated"):
        assert (body[proof] is None) == (inline_body[proof] is None)
        if body[proof] is not None:
            assert {k: body[proof][k] for k in PROOF} == {k: inline_body[proof][k] for k in PROOF}
    assert code == inline_code and body["cost"]["clean_identical"] == inline_body["cost"]["clean_identical"]


def test_out_has_its_weights_beside_it_and_loads_as_the_embedded_fix(src, fixed):
    out, inline_out = fixed["ext"][2], fixed["inline"][2]
    assert sorted(p.name for p in out.parent.iterdir()) == ["fixed.onnx", DATA]
    assert filecmp.cmp(src / "ext" / DATA, out.parent / DATA, shallow=False)
    assert sorted(p.name for p in inline_out.parent.iterdir()) == ["fixed.onnx"]  # every tensor inside, as before
    assert out.stat().st_size < 10_000 < inline_out.stat().st_size
    got, want = onnx.load(str(out)), onnx.load(str(inline_out))  # onnx's reader, the data from beside OUT
    onnx.checker.check_model(str(out), full_check=True)
    assert [n.SerializeToString() for n in got.graph.node] == [n.SerializeToString() for n in want.graph.node]
    arrays = {t.name: numpy_helper.to_array(t) for t in want.graph.initializer}
    assert {t.name for t in got.graph.initializer} == set(arrays)
    for t in got.graph.initializer:
        np.testing.assert_array_equal(numpy_helper.to_array(t), arrays[t.name])


def test_out_run_from_its_path_on_b_gives_what_a_gives_on_the_original(src, fixed):
    """The independent check: each engine reads the written file itself, the weights from beside it."""
    out = fixed["ext"][2]
    x = np.load(src / "x.npz")["x"]
    reference = ort.InferenceSession(str(src / "ext" / "model.onnx")).run(None, {"x": x})[0]
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(out)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    target = compiled({"x": x})[compiled.output(0)]
    assert np.isnan(reference).any()  # the NaN reached the output: the guard is what keeps it there on B
    np.testing.assert_array_equal(target, reference)
    np.testing.assert_array_equal(ort.InferenceSession(str(out)).run(None, {"x": x})[0], reference)


def test_into_the_sources_own_folder_nothing_is_copied(src, tmp_path):
    folder = tmp_path / "ext"
    folder.mkdir()
    for name in ("model.onnx", DATA):
        (folder / name).write_bytes((src / "ext" / name).read_bytes())
    before = (folder / DATA).stat()
    code, _ = _fix(folder / "model.onnx", folder / "fixed.onnx", src / "x.npz")
    assert code == 0 and sorted(p.name for p in folder.iterdir()) == ["fixed.onnx", "model.onnx", DATA]
    assert (folder / DATA).stat().st_mtime_ns == before.st_mtime_ns
    onnx.checker.check_model(str(folder / "fixed.onnx"), full_check=True)


def test_a_data_file_of_the_same_name_is_kept_when_equal_and_refused_when_not(src, tmp_path, monkeypatch, capsys):
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "fixed.onnx"
    (out.parent / DATA).write_bytes((src / "ext" / DATA).read_bytes())
    assert _fix(src / "ext" / "model.onnx", out, src / "x.npz")[0] == 0  # the same content: kept
    out.unlink()
    other = bytearray((src / "ext" / DATA).read_bytes())
    other[-1] ^= 1  # another model's weights, one bit apart
    (out.parent / DATA).write_bytes(bytes(other))
    monkeypatch.setattr(cli_fix, "fix", _never)  # refused before the fix runs, not after
    code = main(["fix", str(src / "ext" / "model.onnx"), "--engine", "onnxruntime", "--engine", "openvino",
                 "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "--output" in err and "other content" in err
    assert (out.parent / DATA).read_bytes() == bytes(other) and not out.exists()  # nothing overwritten or written


def _never(*args, **kwargs):
    raise AssertionError("the fix ran")


def test_a_missing_output_folder_is_refused_as_for_a_model_with_every_tensor_inside(src, tmp_path, monkeypatch,
                                                                                     capsys):
    monkeypatch.setattr(cli_fix, "fix", _never)
    code = main(["fix", str(src / "ext" / "model.onnx"), "--engine", "onnxruntime", "--engine", "openvino",
                 "--output", str(tmp_path / "missing" / "fixed.onnx")])
    assert code == 2 and "--output" in capsys.readouterr().err and not (tmp_path / "missing").exists()


def test_a_model_past_protobufs_limit_with_its_data_is_fixed(src, tmp_path, monkeypatch):
    """The weights never pass through the fix's process: the embedding limit (2 GiB; 16 bytes here) never applies."""
    monkeypatch.setattr(external, "EMBED_LIMIT", 16)
    (tmp_path / "out").mkdir()
    code, body = _fix(src / "ext" / "model.onnx", tmp_path / "out" / "fixed.onnx", src / "x.npz")
    assert code == 0 and body["rules_applied"]


def test_the_data_files_are_streamed_never_read_whole(tmp_path):
    """write_model copies a 21 MB data file with this process's own allocations far below its size."""
    m = mlp()
    (tmp_path / "src").mkdir()
    onnx.save_model(m, str(tmp_path / "src" / "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=DATA, size_threshold=1024)
    model = external.weightless(tmp_path / "src" / "model.onnx")
    assert isinstance(model, OnDisk)
    (tmp_path / "out").mkdir()
    size = (tmp_path / "src" / DATA).stat().st_size
    tracemalloc.start()
    try:
        write_model(model, tmp_path / "out" / "model.onnx")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < size / 16 and filecmp.cmp(tmp_path / "src" / DATA, tmp_path / "out" / DATA, shallow=False)


def test_out_named_as_its_data_file_or_a_symlink_there_is_refused(src, tmp_path):
    """The data file cannot be OUT itself, and a symlink under its name is never written through."""
    from clipbridge.core.errors import ClipBridgeError
    from clipbridge.scan.external_out import plan
    model = external.weightless(src / "ext" / "model.onnx")
    with pytest.raises(ClipBridgeError, match="choose another --output"):
        plan(model, tmp_path / DATA)
    (tmp_path / "elsewhere").write_bytes(b"")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / DATA).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ClipBridgeError, match="--output"):
        plan(model, tmp_path / "out" / "fixed.onnx")
    assert plan(model, src / "ext" / "fixed.onnx") == [] and plan(b"plain", tmp_path / "x.onnx") == []


class Live:
    """How many engine sessions are alive at once (weakref.finalize on each one the registry loads)."""

    def __init__(self, monkeypatch):
        self.now = self.most = 0
        from clipbridge.fix import engines as fix_engines
        real = fix_engines.registry.get

        def get(name):
            rt = real(name)
            def load(model_bytes, precision):
                session = rt.load(model_bytes, precision)
                self.now += 1
                self.most = max(self.most, self.now)
                weakref.finalize(session, self._gone)
                return session
            return dataclasses.replace(rt, load=load)
        monkeypatch.setattr(fix_engines.registry, "get", get)

    def _gone(self):
        self.now -= 1


@pytest.mark.parametrize("kind, most, note", [
    pytest.param("ondisk", 1, "timed one after the other", id="weights-on-disk-one-session-at-a-time"),
    pytest.param("inline", 2, None, id="every-weight-inside-interleaved"),
])
def test_the_cost_holds_one_session_at_a_time_where_the_weights_stay_on_disk(src, monkeypatch, kind, most, note):
    """The fix's cost timing (fix.engines.time_pair) held the original's and the written model's sessions at once:
    4.1 GB peak on a 1 GB model. With the weights on disk it times them one after the other."""
    from clipbridge.fix import engines as fix_engines
    model = external.weightless(src / "ext" / "model.onnx") if kind == "ondisk" else (src / "inline.onnx").read_bytes()
    assert isinstance(model, OnDisk) == (kind == "ondisk")
    feeds = {"x": np.load(src / "x.npz")["x"]}
    live = Live(monkeypatch)
    cost = fix_engines.time_pair("openvino", model, model, feeds, rounds=3, warmup=1, budget_s=None)
    assert live.most == most
    assert cost["original_ms"] > 0 and cost["written_ms"] > 0 and cost["clean_identical"] is True
    assert (note is None and cost["note"] is None) or note in cost["note"]
