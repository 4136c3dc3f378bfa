"""Issue 34: a diff's memory is bounded in bytes before an engine computes (shape inference) and by the child's
own count after; an uploaded .npz is checked from its headers before anything is decompressed."""

from __future__ import annotations

import argparse
import io
import zipfile

import numpy as np
import onnx
import pytest

from clipbridge.core.errors import ClipBridgeError
from clipbridge.cli import diff as cli_diff
from clipbridge.diff import child, engines, inputs, isolated, passes, run
from tests.diff import models as M
from tests.diff.conftest import npz
from tests.hostile.places import amplifying_model


class Ran(Exception):
    """An engine was asked to run: the footprint check let the model through."""


def _no_engine(*args, **kwargs):
    raise Ran()


@pytest.mark.parametrize("budget, option", [
    pytest.param(512 << 20, "--memory", id="cli"),
    pytest.param(512 << 20, "CLIPBRIDGE_DIFF_MEMORY_MB", id="server"),
])
def test_a_tensor_past_the_budgets_share_is_refused_before_any_engine_runs(monkeypatch, budget, option):
    monkeypatch.setattr(engines, "run", _no_engine)
    opts = run.Options(memory=budget, memory_option=option)  # 256 MiB per engine against a 1 GiB tensor
    with pytest.raises(child.BudgetTooSmall, match=r"tensor 'big' would hold 1073741824 bytes \(134217728 x float64"
                       r".* at most 268435456 bytes .*raise " + option) as err:
        run.collect(run.direct, amplifying_model("constant-of-shape", 27), None, opts)
    assert err.value.loc == option and err.value.status == 422


def test_a_diff_given_no_budget_keeps_the_fixed_cap(monkeypatch):
    """fix's proof and the server's fix route give no budget: the quarter of the machine their passes default to
    must not become the largest tensor they run (tests/test_memory_bounds.py: the server's growth)."""
    monkeypatch.setattr(engines, "run", _no_engine)
    with pytest.raises(child.TensorTooLarge, match="at most 134217728 bytes") as err:
        run.collect(run.direct, amplifying_model("constant-of-shape", 27), None, run.Options())
    assert err.value.loc == "model" and not isinstance(err.value, child.BudgetTooSmall)


def test_the_clis_default_budget_is_given_explicitly():
    """`clipbridge diff` without --memory: the quarter of the machine, so the largest tensor follows it too."""
    assert cli_diff._memory(argparse.Namespace(memory=None)) == passes.default_budget()
    assert cli_diff._memory(argparse.Namespace(memory="2GiB")) == 2 << 30


def test_a_budget_that_holds_the_tensor_lets_the_model_through(monkeypatch):
    """Issue 46: no fixed cap answers a model the machine can run: 2 GiB per engine holds the 1 GiB tensor."""
    monkeypatch.setattr(engines, "run", _no_engine)
    with pytest.raises(Ran):
        run.collect(run.direct, amplifying_model("constant-of-shape", 27), None, run.Options(memory=4 << 30))


def test_without_a_budget_the_fixed_default_holds():
    """clipbridge.diff.child.prepare's own default (a caller that gives no budget): 128 MiB, naming the model."""
    with pytest.raises(child.TensorTooLarge, match="at most 134217728 bytes") as err:
        child.prepare(amplifying_model("constant-of-shape", 27), None)
    assert err.value.loc == "model" and "raise" not in err.value.message


def test_the_childs_own_count_stops_results_past_the_limit(monkeypatch):
    """Where inference cannot know (a shape read from the input), the engine's results are counted in bytes."""
    model = amplifying_model("data-dependent", 0)
    with pytest.raises(engines.ResultTooLarge, match=r"bytes per engine run.*raise --memory") as err:
        run.collect(run.direct, model, npz(x=np.array([2.0**18], np.float32)), run.Options(memory=2 << 20))
    assert err.value.loc == "--memory" and err.value.status == 422


def test_the_body_is_what_crosses_and_it_is_bounded(monkeypatch):
    body = isolated.diff_body(M.relu_chain(), None, run.Options(sample="edge"))
    assert body["verdict"] == "explained"
    monkeypatch.setattr(isolated, "MAX_BODY_BYTES", 100)
    with pytest.raises(isolated.BodyTooLarge):
        isolated.diff_body(M.relu_chain(), None, run.Options())


def _model(shape=(2, 3)):
    return onnx.load_from_string(M.graph([onnx.helper.make_node("Relu", ["x"], ["y"])], shape=shape, opset=17))


def _forged_npz(header: bytes, name: str = "x.npy", declared: int | None = None) -> bytes:
    """An .npz whose member is `header` only (the data is missing): only the header may be read."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, header)
    data = buf.getvalue()
    if declared is not None:  # lie about the uncompressed size in both headers (local and central)
        data = data.replace(len(header).to_bytes(4, "little"), declared.to_bytes(4, "little"))
    return data


def _npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False, "shape": shape})
    return out.getvalue()  # magic, version and header, as numpy writes them


@pytest.mark.parametrize("data,message", [
    pytest.param(lambda: npz(x=np.zeros((2, 4), np.float32)), "dimension 1 = 4, the graph input declares 3",
                 id="fixed-dim"),
    pytest.param(lambda: _forged_npz(_npy_header((2, 2**40))), "dimension 1", id="huge-declared-dims"),
    pytest.param(lambda: _forged_npz(b"\x00" * 64, declared=2**31), "declares 2147483648 bytes", id="zip-bomb-size"),
    pytest.param(lambda: _forged_npz(_npy_header((2, 3)), name="x.txt"), "not an .npy", id="not-npy"),
])
def test_npz_headers_are_checked_before_decompressing(data, message):
    with pytest.raises(ClipBridgeError, match=message):
        inputs.read_npz(data(), _model())


def test_npz_bytes_are_checked_from_the_headers(monkeypatch):
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 16)
    with pytest.raises(ClipBridgeError, match=r"hold 24 bytes \(limit 16\)"):
        inputs.read_npz(_forged_npz(_npy_header((2, 3))), _model())
