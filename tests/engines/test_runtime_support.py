"""The packaged runtime support table agrees with the installed engines, and translations say what it says."""

from __future__ import annotations

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("openvino")

from clipbridge.dialects.kit import runtime_support  # noqa: E402
from clipbridge.dialects.onnx.meaning import resolve  # noqa: E402
from clipbridge.dialects.openvino import meaning as d_ov  # noqa: E402
from clipbridge.dialects.kit.common import Mode  # noqa: E402
from clipbridge.dialects.onnx.spec import OnnxSpec, OnnxTarget  # noqa: E402
from clipbridge.dialects.openvino.spec import OpenVinoSpec, OpenVinoTarget  # noqa: E402
from clipbridge.service.translate import translate  # noqa: E402
from tests.engines import sweep  # noqa: E402

pytestmark = pytest.mark.engines
REGENERATE = "re-derive it: python -m tests.engines.sweep --write"


def test_table_names_the_installed_engine_versions():
    installed = sweep.engine_versions()
    listed = {r["runtime"]: r["version"] for r in runtime_support.table()["runtimes"]}
    assert listed == installed, f"the table was derived with {listed}, installed: {installed}; {REGENERATE}"


def test_installed_engines_agree_with_the_table():
    """Every artifact the sweep visits (each Clip version's first and last opset) runs exactly where the table
    says it does, and fails where the table says it does not."""
    disagree = []
    for a in sweep.support_artifacts(full=False):
        reason = sweep.try_artifact(a)
        listed = runtime_support.cannot_run(a.runtime, a.op_version, a.dtype.name, a.bounds)
        if (reason is None) != (listed is None):
            disagree.append(f"{a.runtime} {a.op_version} (opset {a.opset}) {a.dtype.name} bounds={a.bounds}: "
                            f"engine {'runs it' if reason is None else 'fails: ' + reason}, table says "
                            f"{'runs' if listed is None else 'cannot run'}")
    assert not disagree, "\n".join(disagree) + f"\n{REGENERATE}"


@pytest.mark.parametrize("opset, elem_type, lo, hi, fragment", [
    pytest.param(6, "DOUBLE", 0.0, 6.0, "Clip-6 (opset 6..10) with float64", id="clip6-float64"),
    pytest.param(11, "DOUBLE", 0.0, 6.0, "Clip-11 (opset 11) with float64", id="clip11-float64"),
    pytest.param(1, "FLOAT16", 0.0, 6.0, "Clip-1 (opset 1..5) with float16", id="clip1-float16"),
    pytest.param(12, "INT16", 0, 6, "Clip-12 (opset 12) with int16", id="clip12-int16"),
    pytest.param(13, "UINT16", 0, 6, "Clip-13 (opset 13..", id="clip13-uint16"),
])
def test_translation_into_an_unrunnable_artifact_says_so(opset, elem_type, lo, hi, fragment):
    src = OnnxSpec(dialect="onnx", opset=13, elem_type=elem_type, min=lo, max=hi)
    out = translate(src, [OnnxTarget(dialect="onnx", opset=opset)]).to_json()["translations"][0]
    notes = [f for f in out["findings"] if f["code"] == "engine-behaviour" and "cannot run this artifact" in f["message"]]
    assert notes and fragment in notes[0]["message"], out["findings"]
    # The meaning is exact, but the engine refuses the file: never `exact` without a warning.
    assert notes[0]["severity"] == "warning" and notes[0]["target_behaviour"].startswith("onnxruntime 1.")
    assert out["status"] == "exact"


def test_runnable_artifact_has_no_runtime_note():
    out = translate(OnnxSpec(dialect="onnx", opset=13, elem_type="INT16", min=0, max=6),
                    [OnnxTarget(dialect="onnx", opset=13), OpenVinoTarget(dialect="openvino")]).to_json()["translations"]
    assert any("cannot run this artifact" in f["message"] for f in out[0]["findings"])
    assert not any("cannot run this artifact" in f["message"] for f in out[1]["findings"])
    src = OpenVinoSpec(dialect="openvino", element_type="f64", min=0, max=6)
    out = translate(src, [OnnxTarget(dialect="onnx", opset=12)]).to_json()["translations"][0]
    assert not any("cannot run this artifact" in f["message"] for f in out["findings"])


def test_dialects_endpoint_lists_the_table():
    from fastapi.testclient import TestClient

    from clipbridge.main import create_app
    body = TestClient(create_app()).get("/v1/dialects").json()
    rs = body["runtime_support"]
    assert {r["runtime"] for r in rs["runtimes"]} == {"onnxruntime", "openvino"}
    assert any(r["op_version"] == "Clip-6" and r["dtype"] == "float64" for r in rs["cannot_run"])


# --- non-finite bounds: value-dependent refusals ----------------------------------------------------------------

def _refusal_noted(a: sweep.Artifact) -> bool:
    m = resolve(a.spec) if a.runtime == "onnxruntime" else d_ov.resolve(a.spec)
    return any(n.refuses for n in m.engine_notes)


def test_non_finite_table_agrees_with_the_installed_engines():
    """The packaged table's refusals of non-finite bounds are what the engines do (first and last opsets)."""
    got = {(r["runtime"], r["op_version"], r["dtype"]): r["values"] for r in sweep.sweep_values(full=False)}
    listed = {(r["runtime"], r["op_version"], r["dtype"]): r["values"]
              for r in runtime_support.table().get("refuses_non_finite", [])}
    assert got == listed, REGENERATE


@pytest.mark.parametrize("runtime", ["onnxruntime", "openvino"])
def test_every_refused_non_finite_artifact_says_so(runtime):
    """Every opset x dtype x non-finite bound class: the meaning carries a refusal note exactly where the engine
    refuses the artifact (the rule that once missed NaN/inf bounds)."""
    wrong = []
    for a in sweep.value_artifacts(full=True):
        if a.runtime != runtime:
            continue
        reason = sweep.try_artifact(a)
        if (reason is not None) != _refusal_noted(a):
            wrong.append(f"{a.op_version} (opset {a.opset}) {a.dtype.name} {a.bounds}: engine "
                         f"{'refuses: ' + reason if reason else 'runs it'}, meaning "
                         f"{'notes' if _refusal_noted(a) else 'does not note'} a refusal")
    assert not wrong, "\n".join(wrong)


SOURCES = [OnnxSpec(dialect="onnx", opset=op, elem_type=et, min=lo, max=hi)
           for op, et in ((13, "FLOAT"), (13, "FLOAT16"), (13, "DOUBLE"), (1, "DOUBLE"), (6, "FLOAT16"))
           for lo, hi in sweep.NON_FINITE.values()]
TARGETS = [OnnxTarget(dialect="onnx", opset=op) for op in (1, 6, 11, 12, 13)] + [OpenVinoTarget(dialect="openvino")]


def _warns_refusal(tr: dict) -> bool:
    return any(f["code"] == "engine-behaviour" and f["severity"] == "warning" for f in tr["findings"])


def _engine_refuses(tr: dict) -> str | None:
    t = tr["target"]
    try:
        if t["dialect"] == "onnx":
            sweep.run_onnx(OnnxSpec.model_validate(t), None)
        else:
            sweep.run_openvino(OpenVinoSpec.model_validate(t), None)
    except Exception as exc:  # the engine refuses the artifact: what is being checked
        return sweep._reason(exc)
    return None


@pytest.mark.parametrize("mode", [Mode.PRESERVE, Mode.LITERAL], ids=lambda m: m.value)
def test_translation_into_a_refused_artifact_is_never_silently_exact(mode):
    """Each translation of a non-finite source: its artifact is run in the engine; where the engine refuses it,
    the translation carries a warning (it may stay `exact` in meaning, never without one); where it runs, no
    refusal warning."""
    wrong = []
    for src in SOURCES:
        for tr in translate(src, TARGETS, mode).to_json()["translations"]:
            if tr["status"] == "unsupported" or not tr.get("target") or "model" in tr["target"]:
                continue
            reason = _engine_refuses(tr)
            if (reason is not None) != _warns_refusal(tr):
                wrong.append(f"{src.model_dump(exclude_none=True)} -> {tr['target']}: engine "
                             f"{'refuses: ' + reason if reason else 'runs it'}, status {tr['status']}, findings "
                             f"{[(f['severity'], f['message'][:60]) for f in tr['findings']]}")
    assert not wrong, "\n".join(wrong[:20])
