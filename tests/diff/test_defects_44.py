"""Issue 44, item 6: the defects found on real architectures, each with a regression test that failed before.

Every expectation is read from the real engines (or from numpy), never from a value clipbridge wrote down."""

from __future__ import annotations

import json
import math

import numpy as np
import onnx
import pytest

from clipbridge.cli.main import main
from clipbridge.diff import layout, report, run
from clipbridge.diff.quantized import quantize_rounding, quantize_saturation
from clipbridge.scan.patterns import ClipLike
from tests.diff import models_bounds as B
from tests.diff import models_qdq as Q
from tests.diff import models_subgraphs as S
from tests.diff.conftest import npz
from tests.fix import models as FM

GRID = {"scale": 0.1, "zero_point": 0, "qmin": -128, "qmax": 127, "qtype": "int8"}
QUANT = ClipLike("q", "QuantizeLinear", "quantize-saturate", "x", "y", None, None, params={"grid": GRID})


@pytest.mark.parametrize("v", [
    pytest.param(3.4028235e38, id="float32-max-over-scale-is-inf"),
    pytest.param(-3.4028235e38, id="float32-lowest-over-scale-is-minus-inf"),
    pytest.param(math.inf, id="inf"),
    pytest.param(-math.inf, id="minus-inf"),
    pytest.param(math.nan, id="nan"),
])
def test_quantized_rules_never_raise_on_extremes(v):
    """math.floor(inf) raised OverflowError in quantize_rounding: 3.4e38 / 0.1 is inf in float32."""
    outs = {"onnxruntime": 127.0, "onnx-reference": 0.0}
    assert quantize_rounding(QUANT, v, outs, np.dtype(np.float32)) is None
    quantize_saturation(QUANT, v, outs, np.dtype(np.float32))  # answers, whatever it answers


@pytest.mark.engines
def test_qdq_against_onnx_reference_with_extremes_answers(tmp_path, capsys):
    """A QDQ model diffed against onnx-reference on float32's extremes: a report and exit 0/1, never a crash."""
    m = onnx.load_from_string(Q.qdq_relu6_clip())
    m.opset_import[0].version, m.ir_version = 21, 10  # onnx.reference has DequantizeLinear-19 and later only
    onnx.save(m, tmp_path / "q.onnx")
    x = Q.inputs()
    x[0, -4:] = [3.4028235e38, -3.4028235e38, 1e38, -1e38]
    (tmp_path / "in.npz").write_bytes(npz(x=x))
    code = main(["diff", str(tmp_path / "q.onnx"), "--engine", "onnxruntime,onnx-reference", "--inputs",
                 str(tmp_path / "in.npz"), "--format", "json", "--probe", "off"])
    body = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and body["verdict"] in ("equal", "explained", "unexplained")
    [quant] = [n for n in body["nodes"] if n["node"] == "quant_0"]  # 3.4e38 / 0.1 is inf: saturated, or not
    assert quant["cause"] == "quantize-saturation", quant


def _stacked(x: np.ndarray, trips: int) -> np.ndarray:
    """What ONNX Loop-16 specifies for loop_clip's scan output, computed with numpy: s <- clip(2 s, 0, 6)."""
    out, s = [], x
    for _ in range(trips):
        s = np.clip(s * 2, 0, 6)
        out.append(s)
    return np.stack(out)


@pytest.mark.engines
def test_loop_scan_outputs_are_compared_in_one_layout():
    """onnx.reference concatenates a Loop's scan outputs ((3, 16)) where onnxruntime stacks them ((3, 1, 16)):
    compared as they came, 48/48 differed with a NaN/NaN witness although the outputs are equal."""
    x = np.random.default_rng(3).standard_normal((1, S.N)).astype(np.float32)
    body, runs = report.diff(run.direct, S.loop_clip(), npz(x=x), run.Options(("onnxruntime", "onnx-reference")))
    want = _stacked(x, 3)
    for e in ("onnxruntime", "onnx-reference"):  # both engines, in one layout, hold what the spec says
        np.testing.assert_allclose(runs.values[e]["stacked"], want, rtol=1e-6)
    assert body["verdict"] == "equal", body["outputs"]
    assert {o["name"]: o["differing"] for o in body["outputs"]} == {"final": 0, "stacked": 0}
    assert any(n["tensor"] == "stacked" and n["engine"] == "onnx-reference" for n in body["layout"])
    for row in body["nodes"] + [r for r in body["masked"]["nodes"]]:
        outs = row["witness"]["outputs"] if row.get("witness") else {}
        assert not (outs and all(v == "nan" for v in outs.values())), row


@pytest.mark.parametrize("shape, stacked, want", [
    pytest.param((3, 16), (3, 1, 16), True, id="loop-rows"),
    pytest.param((12, 5), (3, 4, 5), True, id="merged-first-axes"),
    pytest.param((48,), (3, 16), True, id="vector-per-iteration"),
    pytest.param((3, 16), (3, 16), False, id="same"),
    pytest.param((16, 3), (3, 1, 16), False, id="transposed-is-not-concatenated"),
])
def test_concatenated_layout(shape, stacked, want):
    assert layout.concatenated(shape, stacked) is want


@pytest.mark.engines
@pytest.mark.parametrize("model", [
    pytest.param(lambda: B.clip6_f16(-7e4), id="clip6-min-only"),
    pytest.param(lambda: B.clip6_f16(-7e4, 6.0), id="clip6-min-and-max"),
])
def test_float16_clip_nan_is_nan_input(model):
    """A float16 Clip-6 whose only differing element is a NaN input was blamed on float16-bound-overflow."""
    with np.errstate(over="ignore"):
        x = np.array([[np.nan, 1, -8e4, 7e4, -1, 2, np.inf, -np.inf]], np.float16)
    body = report.diff(run.direct, model(), npz(x=x), run.Options())[0]
    rows = body["nodes"] + body["masked"]["nodes"]
    [row] = [r for r in rows if r["node"] == "clip_f16"]
    assert row["witness"]["input"] == "nan"
    assert (row["origin"], row["cause"]) == ("introduced", "nan-input")
    assert row["causes"] == {"nan-input": 1}


@pytest.mark.engines
def test_fix_exits_0_exactly_when_the_proof_is_equal(tmp_path, capsys):
    """A Clip-6 with min > max: the target (onnxruntime) cannot run the original, the proof is equal, and the
    fix exited 1 (clean outputs could not be compared)."""
    onnx.save(FM.clip(6.0, 0.0, opset=6), tmp_path / "m.onnx")
    code = main(["diff", str(tmp_path / "m.onnx"), "--engine", "onnx-reference", "--engine", "onnxruntime",
                 "--fix", str(tmp_path / "out.onnx"), "--format", "json"])
    body = json.loads(capsys.readouterr().out)
    assert body["proof"]["verdict"] == "equal"
    assert code == 0


def _native_float16_cpu() -> bool:
    """Whether this x86 CPU computes float16 natively (avx512_fp16 or AMX-FP16), from /proc/cpuinfo."""
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return "avx512_fp16" in flags or "amx_fp16" in flags


@pytest.mark.engines
def test_float16_graph_run_in_float32_is_inference_precision():
    """transformers' T5 clamp in float16: OpenVINO on a CPU without native float16 computes it in f32, so
    isinf(h).any() differs and the clamp's run-time bound with it (64512 against 65504). The clamp was called
    'introduced, the node alone agrees'; it is inherited, cause inference-precision, naming both precisions.
    The expectation is derived from the precision OpenVINO reports on this host, never written down."""
    from tests.diff import models_outputs as MO
    body, runs = report.diff(run.direct, MO.t5_clamp_f16(), npz(x=MO.t5_inputs()), run.Options())
    ov = runs.info["openvino"]["precision"]
    if ov == "f16":  # this host computes float16 natively: both engines overflow alike
        assert _native_float16_cpu() or ov == runs.info["onnxruntime"]["precision"]
        assert body["verdict"] == "equal", body["nodes"]
        return
    assert not _native_float16_cpu() or ov != "f16"
    rows = {r["node"]: r for r in body["nodes"]}
    assert (rows["isinf"]["origin"], rows["isinf"]["cause"]) == ("introduced", "inference-precision")
    clamp = rows["clamp"]
    assert (clamp["origin"], clamp["cause"], clamp["inherited_from"]) == ("inherited", "inference-precision",
                                                                          ["isinf"])
    assert f"openvino ran it in {ov}" in clamp["detail"] and "float16" in clamp["detail"]
    assert "onnxruntime ran f16" in clamp["detail"]
    assert body["verdict"] == "explained"


def test_a_fault_of_the_diff_is_exit_2_with_json(tmp_path, capsys, monkeypatch):
    """Before: an exception inside the cause rules escaped as a traceback with exit 1 ("the engines differ") and
    no JSON. Any fault of the diff's own is now an error: exit 2, and a JSON body under --format json."""
    from tests.diff import models as M

    def broken(*a, **k):
        raise OverflowError("cannot convert float infinity to integer")
    monkeypatch.setattr(report, "sample", broken)
    (tmp_path / "m.onnx").write_bytes(M.relu_chain())
    assert main(["diff", str(tmp_path / "m.onnx"), "--format", "json"]) == 2
    out = capsys.readouterr()
    body = json.loads(out.out)
    assert body["verdict"] == "error" and "OverflowError" in body["error"]["message"]
    assert "OverflowError" in out.err
