"""Issue 44, item 3: an input set (several .npz, or a folder), each engine compiled once for every sample, the
statistics per output checked against numpy computed here, independently, on the engines' own outputs."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from clipbridge.cli.main import main
from clipbridge.diff import samples, statistics
from tests.diff.conftest import npz


def _ulp_oracle(a: float, b: float) -> int:
    """Steps of np.nextafter from a to b (float32): the definition of the distance, counted."""
    x, y, n = np.float32(a), np.float32(b), 0
    while x != y:
        x = np.nextafter(x, y)
        n += 1
    return n


@pytest.mark.parametrize("a, b", [
    pytest.param(1.0, 1.0000002, id="positive"), pytest.param(-1.0, -1.0000005, id="negative"),
    pytest.param(-1e-45, 1e-45, id="across-zero"), pytest.param(0.0, -0.0, id="signed-zeros"),
    pytest.param(3.0, 3.0, id="same"),
])
def test_ulp_distance(a, b):
    got = statistics.ulp_distance(np.array([a], np.float32), np.array([b], np.float32))[0]
    assert got == _ulp_oracle(a, b) or (a == b == 0 and got in (0, 1))


def test_statistics_match_numpy():
    rng = np.random.default_rng(0)
    a = [rng.standard_normal((2, 10)).astype(np.float32) for _ in range(3)]
    b = [v + rng.standard_normal(v.shape).astype(np.float32) * 1e-3 for v in a]
    b[1][0, 0] = np.nan  # a non-finite pair is left out of the error statistics
    masks = [np.abs(x - y) > 1e-3 for x, y in zip(a, b)]
    got = statistics.pair(a, b, masks, classes=1)
    x = np.concatenate([v.ravel() for v in a]).astype(np.float64)
    y = np.concatenate([v.ravel() for v in b]).astype(np.float64)
    keep = np.isfinite(y)
    x, y = x[keep], y[keep]
    assert got["max_abs"] == pytest.approx(np.max(np.abs(x - y)))
    assert got["max_rel"] == pytest.approx(np.max(np.abs(x - y) / np.maximum(np.abs(x), np.abs(y))))
    assert got["cosine"] == pytest.approx(x @ y / np.linalg.norm(x) / np.linalg.norm(y))
    assert got["sqnr_db"] == pytest.approx(10 * math.log10(np.sum(x ** 2) / np.sum((x - y) ** 2)))
    rows_a = np.concatenate(a)
    rows_b = np.concatenate(b)
    top1 = np.mean([np.argmax(p) == np.argmax(q) for p, q in zip(rows_a, rows_b)])
    top5 = np.mean([np.argmax(p) in sorted(range(10), key=lambda k: -q[k])[:5] for p, q in zip(rows_a, rows_b)])
    assert (got["top1"], got["top5"]) == (pytest.approx(top1), pytest.approx(top5))
    assert got["samples_differing"] == sum(bool(m.any()) for m in masks)
    assert got["elements_differing"] == sum(int(m.sum()) for m in masks)


@pytest.mark.engines
def test_a_folder_of_samples(tmp_path, capsys, monkeypatch):
    """Each engine compiled once for the set; the statistics from the engines' own outputs (run here directly)."""
    import onnxruntime as ort
    import openvino as ov

    from tests.diff import models as M
    model = M.mobilenet_v2()
    (tmp_path / "m.onnx").write_bytes(model)
    folder = tmp_path / "set"
    folder.mkdir()
    xs = [np.random.default_rng(k).standard_normal((1, 3, 32, 32)).astype(np.float32) for k in range(8)]
    xs[5][0, 0, 3, 3] = np.nan
    for k, x in enumerate(xs):
        (folder / f"img{k:02d}.npz").write_bytes(npz(image=x))
    compiled: list[str] = []
    real = samples._runner
    monkeypatch.setattr(samples, "_runner", lambda e, m, p: compiled.append(e) or real(e, m, p))
    code = main(["diff", str(tmp_path / "m.onnx"), "--inputs", str(folder), "--format", "json", "--probe", "off",
                 "--classes", "1"])
    body = json.loads(capsys.readouterr().out)
    assert sorted(compiled) == ["onnxruntime", "openvino"]  # once per engine for the 8 samples
    s = body["samples"]
    a = [ort.InferenceSession(model).run(None, {"image": x})[0] for x in xs]
    c = ov.Core().compile_model(ov.Core().read_model(model, b""), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    b = [c({"image": x})[c.outputs[0]] for x in xs]
    differ = [k for k in range(8) if not np.allclose(a[k], b[k], rtol=1e-4, atol=1e-5, equal_nan=True)]
    assert s["count"] == 8 and s["first_differing"] == (f"img{differ[0]:02d}.npz" if differ else None)
    st = s["statistics"][0]["engines"]["openvino"]
    assert st["samples_differing"] == len(differ)
    x = np.concatenate([v.ravel() for v in a]).astype(np.float64)
    y = np.concatenate([v.ravel() for v in b]).astype(np.float64)
    f = np.isfinite(x) & np.isfinite(y)
    assert st["max_abs"] == pytest.approx(np.max(np.abs(x[f] - y[f])), rel=1e-3, abs=1e-7)
    assert st["cosine"] == pytest.approx(x[f] @ y[f] / np.linalg.norm(x[f]) / np.linalg.norm(y[f]), abs=1e-6)
    assert code == (1 if differ else 0) and (body["verdict"] == "equal") is (not differ)
    if differ:
        assert body["inputs"]["source"] == "given" and s["walked"] == f"img{differ[0]:02d}.npz"


def test_several_samples_are_refused_by_fix(tmp_path, capsys):
    for k in range(2):
        (tmp_path / f"s{k}.npz").write_bytes(npz(x=np.zeros(2, np.float32)))
    (tmp_path / "m.onnx").write_bytes(b"")
    assert main(["diff", str(tmp_path / "m.onnx"), "--inputs", str(tmp_path / "s0.npz"), str(tmp_path / "s1.npz"),
                 "--fix", str(tmp_path / "o.onnx")]) == 2
    assert "one .npz" in capsys.readouterr().err


@pytest.mark.engines
def test_a_zip_of_samples_over_http(client):
    """The API's `inputs` part as a zip of .npz files: each one sample, as the CLI's folder."""
    import io
    import zipfile

    from tests.diff import models as M
    from tests.diff.test_api_diff import post
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for k, v in enumerate([1.0, np.nan, 2.0]):
            zf.writestr(f"s{k}.npz", npz(x=np.array([v, -1.0, 0.5, 3.0], np.float32)))
    r = post(client, M.relu_chain(), buf.getvalue(), "?probe=off&classes=0")
    assert r.status_code == 200, r.text
    s = r.json()["samples"]
    assert (s["count"], s["walked"], s["first_differing"]) == (3, "s1.npz", "s1.npz")
    st = s["statistics"][0]["engines"]["openvino"]
    assert st["samples_differing"] == 1 and st["elements_differing"] == 1 and "top1" in st
    assert r.json()["verdict"] == "explained" and r.json()["nodes"][0]["cause"] == "nan-input"
