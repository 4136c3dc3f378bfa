"""What a newcomer meets first on the command line: clear errors, help, tables, exit codes, pipes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clipbridge.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
GOOD = '{"dialect":"onnx","opset":13,"elem_type":"FLOAT","min":0,"max":6}'


def run(argv, stdin, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,stdin,needles", [
    pytest.param(["translate", str(ROOT / "docs/example.onnx")], b"", ["is an ONNX model", "clipbridge scan"],
                 id="onnx-model-file"),
    pytest.param(["translate"], b"", ["stdin is empty", "clipbridge translate"], id="empty-stdin"),
    pytest.param(["translate"], b"  \n", ["stdin is empty"], id="blank-stdin"),
    pytest.param(["translate"], b'{"dialect": "onnx",', ["not valid JSON", '"dialect":"onnx"'], id="broken-json"),
    pytest.param(["translate"], b'<?xml version="1.0"?><net/>', ["XML", "clipbridge scan"], id="ir-xml"),
    pytest.param(["translate"], b'{"dialect": "onnxx"}', ["error: dialect: Unknown dialect. Got: 'onnxx'",
                                                          "Did you mean 'onnx'?"], id="dialect-typo"),
    pytest.param(["translate", "--target", "directml:9_9"], GOOD.encode(), ["Got: '9_9'", "(--target directml:9_9)"],
                 id="target-version-typo"),
    pytest.param(["translate", "--target", "openvin"], GOOD.encode(), ["Did you mean 'openvino'?"], id="target-typo"),
    pytest.param(["translate", "--target", "onnx:x"], GOOD.encode(), ["--target onnx:N takes an opset number"],
                 id="target-opset-not-a-number"),
])
def test_one_clear_error_exit_2(argv, stdin, needles, monkeypatch, capsys):
    code, out, err = run(argv, stdin, monkeypatch, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    for n in needles:
        assert n in err, err
    for internal in ("Input tag", "tagged-union", "UnicodeDecodeError", "utf-8", "Traceback"):
        assert internal not in err


def test_dialects_prints_a_table_and_json_on_request(capsys):
    assert main(["dialects"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["dialect", "version", "selects", "ranks", "dtypes"]
    assert any(line.startswith("directml") and "6_4" in line for line in lines)
    # Wrapped to 100 columns (issue 37: it was 299), so longer than the unwrapped table's 33 lines; runs of
    # versions that differ only in their name share a row.
    assert max(map(len, lines)) <= 100 and len(lines) < 60 and not out.lstrip().startswith("{")


def _parsers(parser, path=()):
    """Every subcommand's parser, however deep (`fleet run`), with its command path."""
    for a in parser._actions:
        if a.__class__.__name__ == "_SubParsersAction":
            for name, p in a.choices.items():
                yield (*path, name), p
                yield from _parsers(p, (*path, name))


def test_every_option_and_positional_has_help():
    missing = [f"{' '.join(path)} {a.dest}" for path, p in _parsers(build_parser()) for a in p._actions
               if a.dest != "help" and not a.help]
    assert not missing, missing


def _env():
    return {**os.environ, "PYTHONPATH": f"{ROOT / 'app'}{os.pathsep}{ROOT}"}


def test_python_dash_m_app_works():
    r = subprocess.run([sys.executable, "-m", "clipbridge", "translate", "--target", "openvino"], input=GOOD, text=True,
                       capture_output=True, cwd=ROOT, env=_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    assert '"status": "exact"' in r.stdout


def test_a_closed_pipe_is_not_a_traceback():
    """`clipbridge dialects --format json | head -1`: the reader leaves early; no BrokenPipeError noise."""
    p = subprocess.Popen([sys.executable, "-m", "clipbridge", "dialects", "--format", "json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=ROOT, env=_env())
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.close()  # as head does after its line
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_rewrite_exit_code_follows_the_rewritten_model(tmp_path, capsys):
    """--rewrite exits as scan does on the result: the README example skips a dynamic clip, so 2."""
    out_path = tmp_path / "fixed.onnx"
    code = main(["scan", str(ROOT / "docs/example.onnx"), "--rewrite", str(out_path), "--target", "openvino"])
    out = capsys.readouterr().out
    assert "skipped graph/clip_dynamic_max" in out and code == 2
