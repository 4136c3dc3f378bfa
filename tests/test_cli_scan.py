"""`clipbridge scan`: table and JSON output, exit codes 0 (all exact) / 1 (drift) / 2 (unsupported or error),
IR weights beside the .xml, and --rewrite."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import onnx
import openvino as ov
import openvino.opset13 as ops
import pytest

from clipbridge.cli.main import main
from tests.scan.models import (BF16, F32, I32, clip_model, cyclic_model, external_bound_model, minmax_model,
                               relu6_f32, write)


def scan(argv, capsys):
    code = main(["scan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("build,targets,code", [
    pytest.param(relu6_f32, ["onnx", "openvino"], 0, id="exact-exit-0"),
    pytest.param(relu6_f32, [], 1, id="directml-nan-drift-exit-1"),
    pytest.param(lambda: clip_model(13, BF16, 0, 6, ml_dtypes.bfloat16), ["directml:5_0"], 2,
                 id="unsupported-exit-2"),
    pytest.param(lambda: clip_model(6, I32, 0, 6), ["onnx"], 2, id="error-site-exit-2"),
    # issue 46: a bound in external data is a constant the scan did not read: the clip is unresolved (exit 2)
    # towards every target. (Issue 37 had read it as a run-time bound, kept as an input towards ONNX: exact.)
    pytest.param(lambda: external_bound_model("w.bin"), ["directml:5_0"], 2, id="external-bound-exit-2"),
    pytest.param(lambda: external_bound_model("w.bin"), ["onnx"], 2, id="external-bound-towards-onnx-exit-2"),
    pytest.param(lambda: minmax_model("Min", 0, 6, np.float32, F32), ["onnx", "openvino"], 0,
                 id="min-max-pair-exit-0"),
    pytest.param(lambda: clip_model(13, F32), ["onnx"], 0, id="no-bounds-exact"),
])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_exit_codes_and_formats(tmp_path, capsys, build, targets, code, fmt):
    path = write(tmp_path / "m.onnx", build())
    argv = [str(path), "--format", fmt] + [a for t in targets for a in ("--target", t)]
    got, out, err = scan(argv, capsys)
    assert got == code, (out, err)
    if fmt == "json":
        body = json.loads(out)
        assert body["format"] == "onnx" and body["summary"]["clips"] == 1
        assert [t["label"] for t in body["targets"]] == (targets or ["onnx", "openvino", "directml"])
    else:
        header, row = out.splitlines()[:2]
        assert header.split() == ["#", "clip", "pattern", "dtype", *(targets or ["onnx", "openvino", "directml"])]
        assert row.split()[0] == "0" and row.split()[1] in ("graph/clip", "graph/outer")
        assert "1 clips (" in out


def test_table_rows(tmp_path, capsys):
    path = write(tmp_path / "m.onnx", relu6_f32())
    code, out, _ = scan([str(path), "--target", "onnx", "--target", "openvino"], capsys)
    lines = out.splitlines()
    assert lines[1].split() == ["0", "graph/clip", "Clip-13", "float32", "exact", "exact"]
    assert "1 clips (0 unresolved). onnx: 1 exact, 0 drift, 0 unsupported" in out
    assert code == 0


def test_table_shows_an_error_site(tmp_path, capsys):
    path = write(tmp_path / "m.onnx", clip_model(6, I32, 0, 6))
    code, out, _ = scan([str(path)], capsys)
    assert "error: Clip-6 does not take INT32" in out and "(1 unresolved)" in out and code == 2


@pytest.mark.parametrize("data,message", [
    pytest.param(b"", "empty", id="empty-file"),
    pytest.param(b"\x08\x08\x3a\xff\xff\xff\x0f", "truncated", id="truncated"),
    pytest.param(cyclic_model().SerializeToString(), "cyclic", id="cyclic"),
    pytest.param(b'<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/passwd">]><net/>', "DTDs", id="xxe"),
    pytest.param(external_bound_model("../../etc/passwd").SerializeToString(), "outside the model's directory",
                 id="external-escape"),
])
def test_errors_exit_2_with_a_message(tmp_path, capsys, data, message):
    path = tmp_path / "m.onnx"
    path.write_bytes(data)
    code, out, err = scan([str(path)], capsys)
    assert code == 2 and out == "" and message in err and err.startswith("error: ")


def test_missing_file_and_bad_target(tmp_path, capsys):
    code, _, err = scan([str(tmp_path / "nope.onnx")], capsys)
    assert code == 2 and "error" in err
    path = write(tmp_path / "m.onnx", relu6_f32())
    code, _, err = scan([str(path), "--target", "caffe2"], capsys)
    assert code == 2 and "unknown dialect" in err


@pytest.fixture()
def ir(tmp_path):
    x = ops.parameter([1, 4], np.float32, name="x")
    mx = ops.maximum(ops.clamp(x, 0.0, 6.0, name="relu6"), ops.constant(np.float32(-1.0)), name="mx")
    mn = ops.minimum(mx, ops.constant(np.float32(4.0)), name="mn")
    path = tmp_path / "net.xml"
    ov.save_model(ov.Model([ops.result(mn)], [x], "m"), str(path))
    return path


def test_ir_reads_the_bin_beside_the_xml(ir, capsys):
    code, out, _ = scan([str(ir), "--format", "json", "--target", "onnx"], capsys)
    body = json.loads(out)
    assert body["format"] == "openvino-ir" and body["model"]["weights_bytes"] == ir.with_suffix(".bin").stat().st_size
    assert {c["pattern"] for c in body["clips"]} == {"Clamp-1", "Minimum(Maximum(x, a), b)"}
    assert code == 0


def test_ir_with_weights_elsewhere_and_without(ir, tmp_path, capsys):
    moved = tmp_path / "elsewhere.bin"
    ir.with_suffix(".bin").rename(moved)
    code, out, _ = scan([str(ir), "--format", "json", "--target", "onnx"], capsys)
    assert code == 2 and json.loads(out)["summary"]["unresolved"] == 1  # the pair's bounds are in the .bin
    code, out, _ = scan([str(ir), "--weights", str(moved), "--format", "json", "--target", "onnx"], capsys)
    assert code == 0 and json.loads(out)["summary"]["unresolved"] == 0


def test_ir_with_an_empty_bin(ir, capsys):
    """An empty .bin is read as empty (not a crash): the Clamp needs none, the pair's Consts point past it."""
    ir.with_suffix(".bin").write_bytes(b"")
    code, _, err = scan([str(ir), "--target", "onnx"], capsys)
    assert code == 2 and "points outside the .bin" in err


def test_rewrite_writes_a_checked_model(tmp_path, capsys):
    src = write(tmp_path / "m.onnx", clip_model(6, F32, 0, 6))
    out_path = tmp_path / "out.onnx"
    code, out, err = scan([str(src), "--rewrite", str(out_path), "--target", "openvino", "--opset", "13"], capsys)
    assert code == 0, err
    assert out.splitlines() == ["rewrote graph/clip: bounds [0.0, 6.0], openvino: exact -> exact",
                                f"wrote {out_path} (opset 13)"]
    m = onnx.load(str(out_path))
    onnx.checker.check_model(m, full_check=True)
    assert m.opset_import[0].version == 13
    # The rewritten model scans exact for the target.
    code, out, _ = scan([str(out_path), "--target", "openvino", "--target", "onnx"], capsys)
    assert code == 0 and "Clip-13" in out


def test_rewrite_reports_skipped_clips(tmp_path, capsys):
    src = write(tmp_path / "m.onnx", clip_model(6, I32, 0, 6))
    out_path = tmp_path / "out.onnx"
    code, out, _ = scan([str(src), "--rewrite", str(out_path), "--target", "onnx"], capsys)
    # A skipped clip leaves the written model with a clip that is not exact for the target: exit 2, as scan.
    assert code == 2 and "skipped graph/clip: Clip-6 does not take INT32" in out and out_path.exists()


@pytest.mark.parametrize("argv,message", [
    pytest.param(["--rewrite", "OUT"], "--rewrite needs exactly one --target", id="no-target"),
    pytest.param(["--rewrite", "OUT", "--target", "onnx,openvino"], "--rewrite needs exactly one --target",
                 id="two-targets"),
    pytest.param(["--rewrite", "OUT", "--target", "onnx", "--opset", "9"], "opset >= 11", id="opset-9"),
    pytest.param(["--rewrite", "OUT", "--target", "bogus"], "unknown dialect", id="bad-target"),
])
def test_rewrite_errors(tmp_path, capsys, argv, message):
    src = write(tmp_path / "m.onnx", relu6_f32())
    argv = [str(tmp_path / "out.onnx") if a == "OUT" else a for a in argv]
    code, _, err = scan([str(src), *argv], capsys)
    assert code == 2 and message in err
    assert not (tmp_path / "out.onnx").exists()


def test_rewrite_keeps_external_data_as_it_is(tmp_path, capsys):
    """Issue 46 (was: refused): the model is rewritten without its data, the Clip whose bound is external is
    skipped with the reason, and the written model names the same data file, which is never read."""
    src = write(tmp_path / "m.onnx", external_bound_model("w.bin"))
    (tmp_path / "w.bin").write_bytes(np.float32(-1).tobytes())
    code, out, _ = scan([str(src), "--rewrite", str(tmp_path / "out.onnx"), "--target", "onnx"], capsys)
    assert code == 2 and "skipped graph/clip" in out and "stored as external data" in out
    assert onnx.load(str(tmp_path / "out.onnx"), load_external_data=False) == external_bound_model("w.bin")
