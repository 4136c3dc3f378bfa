"""The device entries (onnxruntime:cuda, onnxruntime:tensorrt, openvino:GPU) refuse before any work, with a 422 / exit
2 that names the option and why, where the provider, the plugin or the GPU is absent; where they are present they run
a diff beside the CPU. CI has no GPU: the absent cases are made so here, the present ones skip with the reason."""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from clipbridge.cli.main import main
from clipbridge.diff import engines
from clipbridge.engines import config
from clipbridge.engines.runtimes import gpu, openvino_gpu, registry
from clipbridge.engines.runtimes.gpu import DeviceUnavailable
from tests.scan.models import clip_model, write

CPU_ONLY = ("AzureExecutionProvider", "CPUExecutionProvider")
WITH_GPU = ("TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider")


class _Core:
    available_devices = ["CPU"]


def _absent(monkeypatch, providers: tuple[str, ...], gpus: int) -> None:
    monkeypatch.setattr(gpu, "ort_providers", lambda: providers)
    monkeypatch.setattr(gpu, "nvidia_gpus", lambda: gpus)
    monkeypatch.setattr(config, "ov_core", lambda: _Core())
    openvino_gpu._missing.cache_clear()


CASES = [
    pytest.param("onnxruntime:cuda", CPU_ONLY, 1, "needs onnxruntime's CUDAExecutionProvider", id="cuda-no-provider"),
    pytest.param("onnxruntime:cuda", WITH_GPU, 0, "needs an NVIDIA GPU, and the driver lists none", id="cuda-no-gpu"),
    pytest.param("onnxruntime:tensorrt", CPU_ONLY, 1, "needs onnxruntime's TensorrtExecutionProvider",
                 id="tensorrt-no-provider"),
    pytest.param("onnxruntime:tensorrt", WITH_GPU, 0, "needs an NVIDIA GPU", id="tensorrt-no-gpu"),
    pytest.param("openvino:GPU", CPU_ONLY, 0, "OpenVINO sees only CPU here", id="openvino-no-gpu"),
]


@pytest.mark.parametrize("engine, providers, gpus, why", CASES)
def test_require_refuses_naming_the_option(monkeypatch, engine, providers, gpus, why):
    _absent(monkeypatch, providers, gpus)
    with pytest.raises(DeviceUnavailable) as e:
        engines.require(["onnxruntime", engine], "query.engine")
    assert why in e.value.message and e.value.loc == "query.engine" and e.value.status == 422
    if "Provider" in why:
        assert "onnxruntime-gpu" in e.value.message  # the swap that installs it


@pytest.mark.parametrize("engine, providers, gpus, why", CASES)
def test_the_api_answers_422(monkeypatch, client, engine, providers, gpus, why):
    _absent(monkeypatch, providers, gpus)
    r = client.post(f"/v1/models/diff?engine=onnxruntime,{engine}", files={"model": ("m.onnx", b"x")})
    assert r.status_code == 422 and why in r.text and "query.engine" in r.text, r.text


@pytest.mark.parametrize("engine, providers, gpus, why", CASES)
def test_the_cli_exits_2(monkeypatch, capsys, tmp_path, engine, providers, gpus, why):
    _absent(monkeypatch, providers, gpus)
    model = write(tmp_path / "m.onnx", clip_model(13, onnx.TensorProto.FLOAT, 0.0, 6.0, np.float32))
    assert main(["diff", str(model), "--engine", f"onnxruntime,{engine}"]) == 2
    err = capsys.readouterr().err
    assert why in err and "--engine" in err


def _why(engine: str) -> str | None:
    rt = registry.get(engine)
    return "not installed" if rt is None or not rt.installed() else rt.unavailable()


@pytest.mark.parametrize("engine", [
    pytest.param(e, marks=pytest.mark.skipif(_why(e) is not None, reason=f"{e} cannot run here: {_why(e)}"), id=e)
    for e in ("onnxruntime:cuda", "onnxruntime:tensorrt", "openvino:GPU")])
def test_a_device_diffs_beside_the_cpu(tmp_path, capsys, engine):
    model = write(tmp_path / "m.onnx", clip_model(13, onnx.TensorProto.FLOAT, 0.0, 6.0, np.float32))
    assert main(["diff", str(model), "--engine", f"onnxruntime,{engine}", "--probe", "off"]) == 0
    assert "equal" in capsys.readouterr().out
