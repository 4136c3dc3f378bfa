"""app/clipbridge/engines/config.py: host detection, pinned engine precision, and every surface that reports them."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from clipbridge.engines import config as ec

F32_OV = {"dialect": "openvino", "version": "opset16", "element_type": "f32", "min": 0.0, "max": 6.0}
F32_ONNX = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0.0, "max": 6.0}
X = {"dtype": "float32", "shape": [3], "data": [1.001, 2.7, 7.5]}


def _flags_from_cpuinfo() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            return next((set(ln.split(":", 1)[1].split()) for ln in fh if ln.startswith("flags")), set())
    except OSError:
        return set()


def test_cpu_flags_are_read_from_the_cpu():
    have = _flags_from_cpuinfo()
    if not have:
        pytest.skip("no /proc/cpuinfo flags line on this host")
    assert ec.cpu_flags() == {f: f in have for f in ec.CPU_FLAGS}


@pytest.mark.parametrize("flags, cap, isa, variant", [
    pytest.param({"avx512_bf16"}, None, "AVX512_CORE_BF16", ec.BF16_NATIVE, id="bf16-cpu"),
    pytest.param({"avx512_bf16", "avx512_fp16"}, None, "AVX512_CORE_FP16", ec.BF16_NATIVE, id="fp16-cpu"),
    pytest.param({"amx_tile", "amx_bf16"}, None, "AVX512_CORE_AMX", ec.BF16_NATIVE, id="amx-cpu"),
    pytest.param(set(), None, "AVX512_CORE", ec.BF16_AVX512, id="skylake-class"),
    pytest.param({"avx512_bf16"}, "AVX512_CORE", "AVX512_CORE", ec.BF16_AVX512, id="bf16-cpu-capped"),
    pytest.param({"avx512_bf16"}, "avx2", "AVX2", ec.BF16_AVX2, id="bf16-cpu-capped-avx2"),
    pytest.param({"avx512_bf16"}, "AVX10_1_512", "AVX512_CORE_BF16", ec.BF16_NATIVE, id="cap-above-cpu"),
])
def test_isa_and_bf16_variant(monkeypatch, flags, cap, isa, variant):
    base = {"avx2", "avx512f", "avx512bw", "avx512vl", "avx512dq", "f16c"}
    fake = tuple((f, f in base | flags) for f in ec.CPU_FLAGS)
    monkeypatch.setattr(ec, "_cpu_flags", lambda: fake)
    monkeypatch.setattr(ec.platform, "machine", lambda: "x86_64")
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    if cap is None:
        monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    else:
        monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", cap)
    assert (ec.cpu_isa(), ec.openvino_bf16_variant()) == (isa, variant)


def test_avx2_only_cpu(monkeypatch):
    monkeypatch.setattr(ec, "_cpu_flags", lambda: tuple((f, f in ("avx2", "f16c")) for f in ec.CPU_FLAGS))
    monkeypatch.setattr(ec.platform, "machine", lambda: "x86_64")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    assert (ec.cpu_isa(), ec.openvino_bf16_variant()) == ("AVX2", ec.BF16_AVX2)


def test_unreadable_flags_are_no_measured_variant(monkeypatch):
    monkeypatch.setattr(ec, "_cpu_flags", lambda: ())
    assert (ec.cpu_isa(), ec.openvino_bf16_variant()) == (None, ec.BF16_UNKNOWN)


def test_capabilities_drop_bf16_only_under_a_cap_below_it(monkeypatch):
    raw = ["BF16", "FP32", "FP16", "INT8"]
    monkeypatch.setattr(ec, "isa_capped", lambda: True)
    monkeypatch.setattr(ec, "cpu_isa", lambda: "AVX2")
    assert ec.openvino_capabilities(raw) == ["FP32", "FP16", "INT8"]
    monkeypatch.setattr(ec, "isa_capped", lambda: False)
    assert ec.openvino_capabilities(raw) == raw


# --- OpenVINO --------------------------------------------------------------------------------------------------

def _ov_model(et: str):
    ov = pytest.importorskip("openvino")
    import openvino.opset13 as ops
    p = ops.parameter([3], getattr(ov.Type, et))
    return ov.Model([ops.clamp(p, -1.0, 2.7)], [p])


def test_host_facts_report_what_the_plugin_says():
    ov = pytest.importorskip("openvino")
    facts = ec.host_facts()
    core = ov.Core()
    raw = list(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    assert facts["openvino"]["optimization_capabilities"] == ec.openvino_capabilities(raw)
    assert facts["engines"]["openvino"] == ov.__version__.split("-")[0]
    assert facts["openvino_bf16_variant"] == ec.openvino_bf16_variant()
    if not ec.isa_capped():
        default = core.get_property("CPU", "INFERENCE_PRECISION_HINT").get_type_name()
        assert facts["openvino"]["default_inference_precision"] == default


@pytest.mark.parametrize("et, half", [("f32", None), ("f64", None), ("i32", None), ("f16", "FP16"),
                                      ("bf16", "BF16")])
def test_model_precision_is_the_models_own_type(et, half):
    """f32 (and f64, integers) pin f32; a half model pins its type where the plugin offers it, else f32."""
    _, ran = ec.openvino_compile(_ov_model(et), "model")
    caps = ec.host_facts()["openvino"]["optimization_capabilities"]
    assert ran == ({"FP16": "f16", "BF16": "bf16"}[half] if half in caps else "f32")


def test_deployed_precision_is_the_plugins_default():
    _, ran = ec.openvino_compile(_ov_model("f32"), "deployed")
    assert ran == ec.host_facts()["openvino"]["default_inference_precision"]


def test_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="precision"):
        ec.openvino_compile(_ov_model("f32"), "fast")  # type: ignore[arg-type]


# --- onnxruntime -----------------------------------------------------------------------------------------------

def test_onnxruntime_knobs_are_pinned_in_model_precision():
    pytest.importorskip("onnxruntime")
    from clipbridge.dialects.onnx.model import build_model
    from clipbridge.dialects.onnx.spec import OnnxSpec
    raw = build_model(OnnxSpec.model_validate({**F32_ONNX, "shape": [3]})).SerializeToString()
    _, model = ec.onnxruntime_session(raw, "model")
    _, deployed = ec.onnxruntime_session(raw, "deployed")
    assert (model["graph_optimization_level"], model["deterministic_compute"], model["providers"]) == \
        ("ORT_DISABLE_ALL", True, ["CPUExecutionProvider"])
    assert deployed["graph_optimization_level"] == "ORT_ENABLE_ALL"


# --- the API and the bundle say which precision ran ------------------------------------------------------------

@pytest.mark.parametrize("precision", ["model", "deployed"])
def test_execute_reports_the_precision_that_ran(client, precision):
    pytest.importorskip("openvino")
    r = client.post("/v1/execute", json={"spec": F32_OV, "input": X, "backend": "openvino", "precision": precision})
    assert r.status_code == 200, r.text
    body = r.json()
    want = "f32" if precision == "model" else ec.host_facts()["openvino"]["default_inference_precision"]
    assert (body["precision"], body["engine"]["precision"], body["engine"]["inference_precision"]) == \
        (precision, precision, want)
    assert body["output"]["data"][2] == 6.0


def test_numpy_backend_reports_no_engine(client):
    r = client.post("/v1/execute", json={"spec": F32_OV, "input": X})
    assert r.status_code == 200 and r.json()["precision"] == "model" and r.json()["engine"] is None


def test_compare_reports_jax_flush_to_zero(client):
    pytest.importorskip("jax")
    r = client.post("/v1/compare", json={"spec": F32_ONNX, "input": {"dtype": "float32", "shape": [1],
                                                                      "data": [1e-40]},
                                         "semantics": ["stablehlo"], "backend": "jax"})
    out = r.json()["outputs"][0]
    assert r.status_code == 200 and out["engine"]["engine"] == "jax"
    # What the engine did, and what it reports, agree: a kept subnormal means no flush-to-zero.
    assert out["engine"]["flush_to_zero"] == (out["output"]["data"][0] == 0.0)


def test_unknown_precision_names_the_field(client):
    r = client.post("/v1/execute", json={"spec": F32_OV, "input": X, "precision": "fast"})
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == "precision"


def test_dialects_report_the_host(client):
    host = client.get("/v1/dialects").json()["host"]
    assert host["openvino_bf16_variant"] == ec.openvino_bf16_variant()
    assert host["cpu_flags"] == ec.cpu_flags()
    here = [n for n in host["host_dependent_notes"] if n["applies_here"]]
    assert all(ec.openvino_bf16_variant() in n["variants"] for n in here)


def test_bundle_states_precision_and_host(client):
    r = client.post("/v1/bundle", json={"spec": F32_OV, "precision": "deployed"})
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(r.content)).read("manifest.json"))
    assert manifest["precision"] == "deployed"
    assert manifest["host"]["cpu_flags"] == ec.cpu_flags()


def _conv_clip_model():
    """A MobileNet-shaped block: a float32 3x3 convolution (padding 1) with a Clamp(0, 6) fused after it."""
    import numpy as np
    ov = pytest.importorskip("openvino")
    import openvino.opset13 as ops
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 16, 12, 12)).astype(np.float32)
    w = (rng.standard_normal((24, 16, 3, 3)) * 0.3).astype(np.float32)
    p = ops.parameter(list(x.shape), ov.Type.f32)
    conv = ops.convolution(p, ops.constant(w), [1, 1], [1, 1], [1, 1], [1, 1])
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # (1, C, H, W, 3, 3)
    ref = np.clip(np.einsum("nchwij,ocij->nohw", win, w.astype(np.float64)), 0.0, 6.0)
    return ov.Model([ops.clamp(conv, 0.0, 6.0)], [p]), x, ref


def _worst_relative_error(compiled, x, ref) -> float:
    import numpy as np
    y = np.asarray(compiled(x)[0], dtype=np.float64)
    inside = (ref > 0.1) & (ref < 5.9)  # away from the clip, where a rounding shows
    return float((np.abs(y - ref)[inside] / ref[inside]).max())


def test_model_precision_keeps_a_float32_convolution_and_its_clip_in_float32():
    model, x, ref = _conv_clip_model()
    compiled, ran = ec.openvino_compile(model, "model")
    assert ran == "f32" and _worst_relative_error(compiled, x, ref) < 1e-4


def test_deployed_precision_is_what_this_host_runs():
    """On a host whose plugin defaults to bf16 the deployed run loses float32 precision (bf16 keeps 8 bits);
    elsewhere it stays float32. The expectation comes from the detected default, never from one machine."""
    model, x, ref = _conv_clip_model()
    compiled, ran = ec.openvino_compile(model, "deployed")
    assert ran == ec.host_facts()["openvino"]["default_inference_precision"]
    err = _worst_relative_error(compiled, x, ref)
    assert (err > 1e-3) if ran == "bf16" else (err < 1e-4), (ran, err)


def test_non_x86_host_is_no_measured_variant(monkeypatch):
    """An Arm host (flags read from 'Features') has no oneDNN x86 tier: both bf16 notes may apply there."""
    monkeypatch.setattr(ec, "_cpu_flags", lambda: tuple((f, False) for f in ec.CPU_FLAGS))
    monkeypatch.setattr(ec.platform, "machine", lambda: "aarch64")
    assert (ec.cpu_isa(), ec.openvino_bf16_variant()) == (None, ec.BF16_UNKNOWN)
    from clipbridge.dialects.openvino import notes as d_ov
    from clipbridge.core.dtypes import BFLOAT16
    assert set(d_ov.cpu_notes_openvino(BFLOAT16, -1.25, 2.7)) == {d_ov.NOTE_BF16_FLUSH, d_ov.NOTE_BF16_TRUNC}


def test_execute_npy_headers_say_which_precision_ran(client):
    import urllib.parse

    import numpy as np
    pytest.importorskip("openvino")
    buf = io.BytesIO()
    np.save(buf, np.array([1.5, 7.0], dtype=np.float32), allow_pickle=False)
    q = urllib.parse.quote(json.dumps({"spec": F32_OV, "backend": "openvino"}))
    r = client.post(f"/v1/execute.npy?request={q}", content=buf.getvalue(),
                    headers={"content-type": "application/x-npy"})
    assert r.status_code == 200, r.text
    assert (r.headers["x-clipbridge-precision"], r.headers["x-clipbridge-inference-precision"]) == ("model", "f32")
