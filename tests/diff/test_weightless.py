"""Issue 46: `clipbridge diff` runs a model with external data with its weights left in their files (an OnDisk
model, clipbridge.core.ondisk): the engines read them there, the diff's own process holds the graph only, and
the report is the one for the same model with every weight inside it."""

from __future__ import annotations

import json
import pickle
import tracemalloc
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from clipbridge.cli.main import main
from clipbridge.core.ondisk import OnDisk
from clipbridge.diff import child, engines
from clipbridge.scan import external

WIDTH, LAYERS, ROWS = 1024, 5, 64  # 4 MiB of float32 weights a layer: 21 MB in all; 256 KiB activations


def mlp(width: int = WIDTH, layers: int = LAYERS) -> onnx.ModelProto:
    """MatMul + Clip(0, 6) layers, seeded weights, a batch of ROWS rows; the edge probe's NaN reaches the first clip
    (where the engines differ)."""
    rng = np.random.default_rng(0)
    nodes, t = [], "x"
    inits = [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")]
    for k in range(layers):
        inits.append(numpy_helper.from_array(rng.standard_normal((width, width), dtype=np.float32) / 32, f"w{k}"))
        nodes += [helper.make_node("MatMul", [t, f"w{k}"], [f"h{k}"], name=f"fc{k}"),
                  helper.make_node("Clip", [f"h{k}", "lo", "hi"], [f"r{k}"], name=f"relu6_{k}")]
        t = f"r{k}"
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, width])],
                          [helper.make_tensor_value_info(t, TensorProto.FLOAT, [ROWS, width])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, Path]:
    """(the model with its weights in model.onnx.data beside it, the same model with every weight inside)."""
    folder = tmp_path_factory.mktemp("weightless")
    m = mlp()
    inline = folder / "inline.onnx"
    onnx.save_model(m, str(inline))
    (folder / "ext").mkdir()
    path = folder / "ext" / "model.onnx"
    onnx.save_model(m, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="model.onnx.data", size_threshold=0)  # the bounds too: the reader reads them back
    return path, inline


def _report(argv: list[str], capsys) -> tuple[int, dict]:
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return code, json.loads(out)


THREADS = ("thread", "pinning")  # settings that name how the engine's threads ran


def _answer(body: dict) -> dict:
    """The report without what names the file (the sides' models) and the engines' thread settings: a model whose
    weights stay on disk runs one engine session at a time, each with every core (clipbridge.diff.plain.beside),
    where the embedded one runs its plain runs beside the marked ones on half the cores each; the report says so."""
    out = {k: v for k, v in body.items() if k != "sides"}
    out["engines"] = [{**e, "settings": {k: v for k, v in e.get("settings", {}).items()
                                         if not any(w in k for w in THREADS)}} for e in body["engines"]]
    return out


CASES = [  # (name, argv with MODEL standing for the model's path)
    ("default engines", ["diff", "MODEL"]),
    ("onnx.reference reads the weights in", ["diff", "MODEL", "--engine", "onnxruntime,onnx-reference"]),
    ("passes", ["diff", "MODEL", "--memory", "2MiB"]),
    ("sides", ["diff", "MODEL@onnxruntime", "MODEL@openvino"]),
]


@pytest.mark.parametrize("argv", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_the_report_is_the_one_with_every_weight_inside(saved, argv, tmp_path, monkeypatch, capsys):
    path, inline = saved
    monkeypatch.chdir(tmp_path)  # not the model's folder: the data is found beside the model, not here
    code, body = _report([a.replace("MODEL", str(path)) for a in argv], capsys)
    inline_code, inline_body = _report([a.replace("MODEL", str(inline)) for a in argv], capsys)
    assert _answer(body) == _answer(inline_body)
    assert code == inline_code


def test_the_diff_never_embeds_the_weights(saved, monkeypatch, capsys):
    """Neither onnx's loader of a whole model's data nor the embedding reader runs; and the diff's own Python
    allocations (the engines' are outside tracemalloc; these are mostly the captured tensors, 5 MiB here) stay
    below half of the 21 MB of weights, which embedding alone would hold whole."""
    path, _ = saved

    def refused(*args, **kwargs):
        raise AssertionError("the weights were read into the diff's process")
    monkeypatch.setattr(external, "embedded_from_file", refused)
    monkeypatch.setattr(external, "read_model", refused)
    monkeypatch.setattr(onnx, "load_external_data_for_model", refused)
    tracemalloc.start()
    try:
        code = main(["diff", str(path), "--format", "json", "--probe", "off"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    capsys.readouterr()
    data = (path.parent / "model.onnx.data").stat().st_size
    assert code in (0, 1)
    assert peak < data / 2, f"the diff's own allocations peaked at {peak} bytes, against {data} bytes of weights"


def test_the_reader_keeps_large_tensors_in_their_file(saved):
    path, _ = saved
    model = external.weightless(path)
    assert isinstance(model, OnDisk) and model.folder == str(path.parent.resolve())
    m = onnx.load_from_string(model)
    where = {t.name: t.data_location for t in m.graph.initializer}
    assert where == {"lo": TensorProto.DEFAULT, "hi": TensorProto.DEFAULT,
                     **{f"w{k}": TensorProto.EXTERNAL for k in range(LAYERS)}}
    assert len(model) < 10_000


def test_a_model_with_every_tensor_inside_is_read_as_it_is(saved):
    _, inline = saved
    model = external.weightless(inline)
    assert type(model) is bytes and model == inline.read_bytes()


@pytest.mark.parametrize("engine", ["onnxruntime", "openvino", "onnx-reference"])
def test_one_node_cut_out_reads_its_weight_from_the_file(saved, engine):
    """A replay of a node whose weight stays in its file (child.single_node keeps the stub): the engine reads it."""
    path, _ = saved
    model = external.weightless(path)
    x = np.random.default_rng(1).standard_normal((ROWS, WIDTH)).astype(np.float32)
    single = child.single_node(model, "fc0", {"x": x})
    got = engines.run(engine, OnDisk(single, model.folder), {"x": x}, [])["values"]["h0"]
    want = x @ numpy_helper.to_array(onnx.load(str(path)).graph.initializer[2])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


BESIDE = [  # (name, model, executor, whether the plain runs go beside the marked ones)
    ("bytes, a concurrent executor", b"m", "direct", True),
    ("weights on disk: one session at a time", OnDisk(b"m", "/models"), "direct", False),
    ("bytes, the serial executor", b"m", "serial", False),
    ("no model named: the executor decides", None, "direct", True),
]


@pytest.mark.parametrize("model,executor,expected", [c[1:] for c in BESIDE], ids=[c[0] for c in BESIDE])
def test_the_plain_runs_go_beside_only_for_a_model_in_memory(model, executor, expected):
    from clipbridge.diff import plain, run
    assert plain.beside(getattr(run, executor), model) is expected
    assert (plain.side_threads(getattr(run, executor), model) is None) is not expected


def test_a_transformed_model_keeps_its_folder():
    from clipbridge.core.ondisk import like, same
    model = OnDisk(b"graph", "/models")
    assert like(model, b"marked").folder == "/models" and type(like(b"plain", b"marked")) is bytes
    assert same(model, OnDisk(b"graph", "/models")) and not same(model, OnDisk(b"graph", "/other"))
    assert not same(model, b"graph")
    copied = pickle.loads(pickle.dumps(model))  # an executor that pickles (a sandbox, a pool) keeps the folder
    assert isinstance(copied, OnDisk) and copied.folder == "/models" and copied == model


def test_openvino_reads_in_the_folder_and_comes_back(tmp_path, monkeypatch):
    """The working directory moves to the model's folder for OpenVINO's read only, and back, on failure too."""
    from clipbridge.engines.runtimes import openvino
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    with openvino.in_folder(None):
        assert Path.cwd() == tmp_path
    with pytest.raises(RuntimeError), openvino.in_folder(str(tmp_path / "models")):
        assert Path.cwd() == tmp_path / "models"
        raise RuntimeError("the engine refused")
    assert Path.cwd() == tmp_path
