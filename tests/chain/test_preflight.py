"""A chain is validated before anything is built, read or converted (issue 47, clipbridge.chain.preflight): a wrong
chain or a missing extra fails in under 2 s with the command to run. The missing extra is simulated by patching the
extras check (stages.installed), never by uninstalling."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path

import pytest

from clipbridge.chain import converter_env, preflight, report, stagerun, stages
from clipbridge.cli.main import main
from clipbridge.core.errors import BackendUnavailable
from clipbridge.diff import run
from tests.chain import models
from tests.fleet.registry import BUILDERS

CHAIN_EXTRA = 'pip install "clipbridge[chain]"'
LIMIT_S = 2.0


def _pt2() -> bytes:
    """A zip as torch.export.save writes one (the check reads only its first bytes: torch never imports)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/version", "1")
    return buf.getvalue()


@pytest.fixture()
def nothing_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Any build, model reading or conversion past the check fails the test."""
    monkeypatch.setenv("CLIPBRIDGE_CACHE", str(tmp_path / "cache"))  # no converter environment built
    monkeypatch.delenv("CLIPBRIDGE_CHAIN_BUILD", raising=False)
    for owner, name in ((converter_env, "build"), (report, "chain"), (stagerun, "convert")):
        monkeypatch.setattr(owner, name, lambda *a, **k: pytest.fail(f"{name} ran before the chain was checked"))


def _absent(*modules: str):
    real = stages.installed
    return lambda module: module not in modules and real(module)


@pytest.mark.parametrize(("kind", "chain", "absent", "says"), [
    pytest.param("onnx", "onnx,openvino,tflite", (), "'tflite' needs a .pt2", id="onnx-to-tflite"),
    pytest.param("onnx", "onnx,bogus", (), "unknown stage 'bogus'", id="unknown-stage"),
    pytest.param("torch", "onnx,onnx", (), "a stage is named twice", id="repeated-stage"),
    pytest.param("torch", " , ", (), "the chain is empty", id="empty-chain"),
    pytest.param("torch", "onnx,tflite", ("torch",), f"torch is not installed: {CHAIN_EXTRA}", id="pt2-without-torch"),
    pytest.param("torch", "onnx,openvino,coreml", ("onnxscript", "coremltools"),
                 f"onnxscript, coremltools are not installed: {CHAIN_EXTRA}", id="two-missing-converters"),
    pytest.param("onnx", "onnx,openvino", ("openvino",), f"openvino is not installed: {CHAIN_EXTRA}",
                 id="onnx-without-openvino"),
    pytest.param("torch", "tflite", ("ai_edge_litert",), f"ai-edge-litert is not installed: {CHAIN_EXTRA}",
                 id="tflite-without-its-runtime"),
])
def test_a_wrong_chain_or_a_missing_extra_fails_fast_with_the_command(
        kind: str, chain: str, absent: tuple[str, ...], says: str, nothing_runs: None, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    model = tmp_path / ("m.pt2" if kind == "torch" else "m.onnx")
    model.write_bytes(_pt2() if kind == "torch" else BUILDERS["clean"](1.0))
    monkeypatch.setattr(stages, "installed", _absent(*absent))
    start = time.perf_counter()
    code = main(["diff", str(model), "--chain", chain])
    seconds = time.perf_counter() - start
    err = capsys.readouterr().err
    assert code == 2 and says in err and "(--chain)" in err, err
    assert seconds < LIMIT_S
    assert "not a readable" not in err  # a missing reader is never blamed on the model


def test_the_server_also_needs_the_converter_environment(nothing_runs: None) -> None:
    with pytest.raises(BackendUnavailable) as err:
        preflight.check("tflite,tflite:builtin", _pt2(), "query.chain", server=True)
    assert err.value.loc == "query.chain" and converter_env.BUILD_COMMAND in err.value.message
    assert preflight.check("tflite", _pt2(), "--chain") == ["torch", "tflite"]  # the CLI builds it itself


def test_the_library_names_torch_for_a_pt2_instead_of_blaming_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stages, "installed", _absent("torch"))
    with pytest.raises(BackendUnavailable) as err:
        report.chain(run.direct, _pt2(), None, "torch,onnx")
    assert err.value.loc == "model" and CHAIN_EXTRA in err.value.message
    assert "not a readable" not in err.value.message


@pytest.mark.parametrize(("stage", "source", "want"), [
    pytest.param("onnx", "onnx", ("onnxruntime",), id="onnx-source-only-runs"),
    pytest.param("onnx", "torch", ("torch", "onnxscript", "onnxruntime"), id="onnx-from-torch"),
    pytest.param("tflite:builtin", "torch", ("ai_edge_litert",), id="tflite-builtin"),
])
def test_what_each_stage_needs(stage: str, source: str, want: tuple[str, ...]) -> None:
    assert preflight.needs(stage, source) == want


def test_a_static_chain_needs_no_converter_environment(nothing_runs: None) -> None:
    """`static` predicts LiteRT's lowering from the source (chain/litert_static.py): the server does not refuse it
    for want of the environment it never builds."""
    assert preflight.check("tflite,tflite:builtin", _pt2(), "query.chain", server=True, static=True) == \
        ["torch", "tflite", "tflite:builtin"]


@pytest.mark.slow
def test_the_cli_static_chain_predicts_without_building(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    """`clipbridge chain M.pt2 torch tflite --static` where no environment is built: predicted, nothing built."""
    monkeypatch.setenv("CLIPBRIDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CLIPBRIDGE_CHAIN_BUILD", raising=False)
    monkeypatch.setattr(converter_env, "build", lambda *a, **k: pytest.fail("--static built the environment"))
    model = tmp_path / "m.pt2"
    model.write_bytes(models.MODELS["clamps"]())
    assert main(["chain", str(model), "torch", "tflite", "--static", "--format", "json"]) == 0
    hop = next(h for h in json.loads(capsys.readouterr().out)["hops"] if h["to"] == "tflite")
    assert hop["status"] == "not-installed" and all(r["became"] for r in hop["lowering"])
