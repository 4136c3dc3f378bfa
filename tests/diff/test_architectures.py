"""Issue 44's done-when on real architectures (small configurations written in torch, seeded weights: ResNet-18,
ConvNeXt, EfficientNet-lite, GhostNet, PP-LCNet, ViT, a 2-layer BERT, GPT-2, MobileNetV2 and V3, ResNet-18 in
float16 and transformers' float16 T5 clamp; twelve): on the
ordinary sample the verdict is `equal` exactly when the engines' own outputs agree, computed here with
onnxruntime and OpenVINO directly and compared with numpy (the independent oracle), internal differences go
under `masked`, and the edge probe is its own section."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from clipbridge.diff import inputs, report, run
from clipbridge.scan.patterns import find
from clipbridge.diff import trace
from tests.diff import models as M
from tests.diff import models_arch as A
from tests.diff import models_outputs as MO

pytestmark = pytest.mark.engines
BUILD = {**{name: (lambda n=name: A.export(n)) for name in A.ARCHITECTURES},
         "mobilenet-v2": M.mobilenet_v2, "mobilenet-v3": M.mobilenet_v3,
         # float16 as an fp16 export writes it (every float32 tensor and Cast made float16, clipbridge.diff.trace)
         "resnet18-f16": lambda: trace.float16_copy(A.export("resnet18")), "t5-clamp-f16": MO.t5_clamp_f16}
TOLERANCE = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-3)}  # docs/diff.md's defaults, written here


def _engines_agree(model: bytes, feeds: dict[str, np.ndarray]) -> bool:
    """onnxruntime and OpenVINO (pinned to the model's float type), run here directly; outputs compared with numpy
    at the dtype's default tolerance, symmetric (rtol times the larger magnitude), NaN equal to NaN."""
    import onnxruntime as ort
    import openvino as ov
    a = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    f16 = any(v.dtype == np.float16 for v in a)
    core = ov.Core()
    hint = "f16" if f16 and "FP16" in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES") else "f32"
    compiled = core.compile_model(core.read_model(model, b""), "CPU", {"INFERENCE_PRECISION_HINT": hint})
    result = compiled(feeds)
    b = [result[p] for p in compiled.outputs]
    for x, y in zip(a, b):
        rtol, atol = TOLERANCE[x.dtype.name]
        xd, yd = x.astype(np.float64), y.astype(np.float64)
        with np.errstate(invalid="ignore"):
            close = np.abs(xd - yd) <= atol + rtol * np.maximum(np.abs(xd), np.abs(yd))
        if not ((np.isnan(xd) & np.isnan(yd)) | (xd == yd) | close).all():
            return False
    return True


@pytest.mark.parametrize("name", sorted(BUILD))
def test_ordinary_inputs_decide_and_the_edge_probe_is_apart(name):
    model = BUILD[name]()
    body = report.diff(run.direct, model, None, run.Options(probe="edge"))[0]
    m = onnx.load_from_string(model)
    feeds = inputs.generate(m, list(find(m).values()))  # the ordinary sample the diff ran on (same seed)
    assert all(np.isfinite(v).all() for v in feeds.values() if v.dtype.kind == "f")
    agree = _engines_agree(model, feeds)
    # On a host where the outputs differ only by summation order (inside the γ_n bound, which
    # tests/diff/test_op_causes.py checks against a float64 recomputation), `equal` is right though the plain
    # tolerance above says they differ: each such output says so (agrees_by).
    differing = [o for o in body["outputs"] if o["differing"]]
    by_order = not agree and bool(differing) and all(o.get("agrees_by") == "accumulation-order" for o in differing)
    assert (body["verdict"] == "equal") is (agree or by_order), body["outputs"]
    assert body["fails"] is not (agree or by_order)
    assert body["inputs"]["sample"] == "ordinary" and body["inputs"]["seed"] == 20240
    reaching = {r["node"] for r in body["nodes"]}
    assert not reaching & {r["node"] for r in body["masked"]["nodes"]}
    if agree or by_order:
        assert body["nodes"] == [] and body["first_divergence"] is None
    edge = body["edge"]
    assert edge["inputs"]["sample"] == "edge" and edge["verdict"] in ("equal", "explained", "unexplained")
    assert (edge["verdict"] == "equal") is not any(o["differing"] for o in edge["outputs"])
