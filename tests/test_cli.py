"""The clipbridge command: exit codes usable in CI pipelines, JSON on stdout."""

from __future__ import annotations

import io
import json
import sys

import pytest

from clipbridge.cli.main import main


def run(argv, stdin_text, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin_text))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("spec,argv,code", [
    pytest.param({"dialect": "onnx", "opset": 13, "elem_type": "FLOAT16", "min": 0, "max": 6},
                 ["--target", "openvino"], 0, id="exact-exit-0"),
    pytest.param({"dialect": "directml", "feature_level": "2_1", "desc": {
        "InputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 4]},
        "OutputTensor": {"DataType": "INT8", "Sizes": [1, 1, 1, 4]}, "Min": 0.5, "Max": 2.5}},
        ["--target", "openvino", "--mode", "literal"], 1, id="drift-exit-1"),
    pytest.param({"dialect": "onnx", "opset": 13, "elem_type": "BFLOAT16", "min": 0, "max": 6},
                 ["--target", "directml:5_0"], 2, id="unsupported-exit-2"),
    pytest.param({"dialect": "onnx", "opset": 12, "elem_type": "INT8", "min": 1.5}, [], 2, id="error-exit-2"),
])
def test_translate_exit_codes(spec, argv, code, monkeypatch, capsys):
    got, out, err = run(["translate", *argv], json.dumps(spec), monkeypatch, capsys)
    assert got == code, err
    if code != 2 or out:
        body = json.loads(out)
        assert body["translations"]
    if spec.get("min") == 1.5:
        assert "1.5 is not a value of INT8" in err


def test_translate_reads_a_file_and_versioned_targets(tmp_path, capsys):
    f = tmp_path / "spec.json"
    f.write_text(json.dumps({"dialect": "openvino", "element_type": "i8", "min": -1, "max": 5}))
    code = main(["translate", str(f), "--target", "onnx:11", "--target", "onnx:12", "--target", "directml:2_1"])
    body = json.loads(capsys.readouterr().out)
    assert [t["status"] for t in body["translations"]] == ["unsupported", "exact", "exact"]
    assert code == 2


def test_bad_target_and_missing_file(capsys, tmp_path):
    assert main(["translate", str(tmp_path / "nope.json")]) == 2
    assert "error" in capsys.readouterr().err


def test_dialects_and_schemas(tmp_path, capsys):
    assert main(["dialects", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["dialects"][0]["dialect"] == "onnx"
    assert main(["schemas", "--output", str(tmp_path)]) == 0
    assert (tmp_path / "TranslateRequest.json").exists()


def test_dialects_table_lists_every_registered_dialect(capsys):
    from clipbridge.dialects import registry
    assert main(["dialects"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0] for line in out.splitlines()[1:] if line and not line.startswith(("Defaults", "Used",
                                                                                               "Rules"))}
    assert set(registry.names()) <= rows
    named = [n for n in registry.names() if n not in registry.default_names()]
    # the notes wrap to the table's width (issue 37): read them with the line breaks undone
    assert f"Used when named (--target {named[0]}), not by default: {', '.join(named)}" in " ".join(out.split())


@pytest.mark.parametrize("to, expected", [
    pytest.param(["default,stablehlo:1"], ["openvino:opset16", "directml:6_4", "stablehlo:1"], id="default-plus-one"),
    pytest.param(["stablehlo", "openvino:opset13"], ["stablehlo", "openvino:opset13"], id="repeated"),
    pytest.param(["onnx:11,all"], None, id="all-without-the-source"),
])
def test_translate_to_takes_lists_and_groups(monkeypatch, capsys, to, expected):
    from clipbridge.dialects import registry
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"dialect":"onnx","opset":13,"elem_type":"FLOAT","min":0,"max":6}'))
    assert main(["translate", *[a for t in to for a in ("--target", t)], "--format", "table"]) in (0, 1)
    # a row per finding, wrapped: a target's first row starts at the margin, the rest are indented
    rows = [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:] if line and not line[0].isspace()]
    if expected is None:
        expected = ["onnx:11", *[n for n in registry.names() if n != "onnx"]]
        rows = [r if r == "onnx:11" else r.split(":")[0] for r in rows]
    assert rows == expected
