"""The model-side subcommands (issue 43): `diff`, `trace`, `fix`, `chain`, `fleet run`, `fleet merge`, each with
--help; `clipbridge --version`; and the old spellings, which keep working until 0.2.0 with one deprecation line
on stderr naming the new one, however often they are typed."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clipbridge import __version__
from clipbridge.api.model_base import OLD_NAMES_UNTIL
from clipbridge.cli.main import main
from clipbridge.engines.extras import DISTRIBUTIONS

ROOT = Path(__file__).resolve().parents[1]
RELU6 = str(ROOT / "docs" / "relu6.onnx")
EXAMPLE = str(ROOT / "docs" / "example.onnx")
SPEC = '{"dialect":"onnx","opset":13,"elem_type":"FLOAT","min":0,"max":6}'


def _run(argv: list[str], capsys, monkeypatch, stdin: str | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's --help and --version
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _deprecations(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("clipbridge: deprecated: ")]


@pytest.mark.parametrize("command", ["diff", "trace", "fix", "chain", "fleet", "fleet run", "fleet merge"])
def test_every_model_subcommand_has_help(command, capsys, monkeypatch):
    code, out, _ = _run([*command.split(), "--help"], capsys, monkeypatch)
    assert code == 0 and out.startswith(f"usage: clipbridge {command}")


def test_version_names_the_package_and_each_engine(capsys, monkeypatch):
    code, out, _ = _run(["--version"], capsys, monkeypatch)
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"clipbridge {__version__}"
    assert [line.split()[0] for line in lines[1:]] == list(DISTRIBUTIONS)
    assert f"onnx-reference  {onnx.__version__}" in out  # the core's onnx is always there


# (old argv, new argv, the new spelling each deprecation line names: one line per old spelling, however often it
# is typed); {tmp} is a fresh folder, stdin the spec
SAME_ANSWER = [
    pytest.param(["translate", "--to", "openvino", "--to", "directml"], ["translate", "--target", "openvino",
                 "--target", "directml"], "--target", id="translate-to-twice"),
    pytest.param(["probe", "--semantics", "openvino"], ["probe", "--target", "openvino"], "--target",
                 id="probe-semantics"),
    pytest.param(["scan", EXAMPLE, "--rewrite", "{tmp}/r.onnx", "--for", "openvino"],
                 ["scan", EXAMPLE, "--rewrite", "{tmp}/r.onnx", "--target", "openvino"], "--target TARGET",
                 id="scan-rewrite-for"),
    pytest.param(["schemas", "--out", "{tmp}"], ["schemas", "-o", "{tmp}"], "--output", id="schemas-out"),
    pytest.param(["fleet", "{tmp}/nowhere", "--out", "{tmp}/o"], ["fleet", "run", "{tmp}/nowhere", "-o", "{tmp}/o"],
                 ("fleet run", "--output"), id="fleet-sources-out"),
    pytest.param(["fleet", "merge", "{tmp}/nowhere", "--out", "{tmp}/o"],
                 ["fleet", "merge", "{tmp}/nowhere", "--output", "{tmp}/o"], "--output", id="fleet-merge-out"),
    pytest.param(["diff", RELU6, "--chain", "onnx,openvino", "--static"], ["chain", RELU6, "onnx", "openvino",
                 "--static"], "clipbridge chain MODEL STAGES", id="diff-chain-static"),
    pytest.param(["diff", RELU6, "--engine", "onnx-reference", "--engine", "onnx-reference@f16", "--format", "json"],
                 ["trace", RELU6, "--engine", "onnx-reference", "--format", "json"], "clipbridge trace",
                 id="diff-f16"),
]


@pytest.mark.parametrize("old,new,names", SAME_ANSWER)
def test_an_old_spelling_answers_as_the_new_one_with_one_deprecation_line(old, new, names, tmp_path, capsys,
                                                                            monkeypatch):
    def run(argv: list[str], where: Path) -> tuple[int, str, str]:
        where.mkdir()
        argv = [a.replace("{tmp}", str(where)) for a in argv]
        code, out, err = _run(argv, capsys, monkeypatch, stdin=SPEC)
        return code, out.replace(str(where), "TMP"), err.replace(str(where), "TMP")

    old_code, old_out, old_err = run(old, tmp_path / "old")
    new_code, new_out, new_err = run(new, tmp_path / "new")
    assert (old_code, old_out) == (new_code, new_out)
    lines = _deprecations(old_err)
    names = (names,) if isinstance(names, str) else names
    assert len(lines) == len(names) and all(n in line for n, line in zip(names, lines)), lines
    assert all(f"works until {OLD_NAMES_UNTIL}" in line for line in lines)
    assert _deprecations(new_err) == []
    assert "".join(line for line in old_err.splitlines(True) if line.rstrip("\n") not in lines) == new_err


def test_a_spec_file_with_source_is_read_with_a_deprecation_line(tmp_path, capsys, monkeypatch):
    old = tmp_path / "old.json"
    old.write_text(f'{{"source": {SPEC}}}')
    new = tmp_path / "new.json"
    new.write_text(f'{{"spec": {SPEC}}}')
    assert _run(["translate", str(old), "--target", "openvino"], capsys, monkeypatch)[:2] == \
        _run(["translate", str(new), "--target", "openvino"], capsys, monkeypatch)[:2]
    _run(["translate", str(old), "--target", "openvino"], capsys, monkeypatch)
    assert _run(["probe", str(old)], capsys, monkeypatch)[2].count('"source" is now "spec"') == 1


def test_probe_output_writes_the_folder_the_old_npy_wrote(tmp_path, capsys, monkeypatch):
    assert _run(["probe", "-o", str(tmp_path / "new")], capsys, monkeypatch, stdin=SPEC)[0] == 0
    assert _run(["probe", "--npy", str(tmp_path / "old")], capsys, monkeypatch, stdin=SPEC)[0] == 0
    names = sorted(p.name for p in (tmp_path / "new").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "old").iterdir()) and "probes.json" in names


@pytest.mark.parametrize("argv,says", [
    pytest.param(["trace", RELU6, "--engine", "onnxruntime@f16"], "trace takes one or two engines", id="trace-f16"),
    pytest.param(["trace", RELU6, "--engine", "onnxruntime,openvino,onnx-reference"],
                 "trace takes one or two engines", id="trace-three"),
    pytest.param(["fix", RELU6, "--engine", "onnxruntime", "-o", "OUT.onnx"], "fix needs exactly two engines",
                 id="fix-one-engine"),
    pytest.param(["diff", RELU6, "--static"], "use `clipbridge chain MODEL STAGES --static`", id="static-alone"),
])
def test_usage_errors_exit_2_with_one_line(argv, says, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(argv, capsys, monkeypatch)
    assert code == 2 and says in err and not list(tmp_path.iterdir())


def test_an_error_names_the_old_flag_as_typed(capsys, monkeypatch):
    code, out, err = _run(["translate", "--to", "directml:9_9"], capsys, monkeypatch, stdin=SPEC)
    deprecation, error = err.splitlines()
    assert code == 2 and out == "" and "--to is now --target" in deprecation
    assert error.startswith("error: ") and error.endswith("(--to directml:9_9)")


def test_fix_writes_the_model_to_output_and_the_report_to_report(tmp_path, capsys, monkeypatch):
    """`fix -o OUT.onnx --report R` as the old `diff --fix OUT.onnx --output R`: the same model, the same
    verdict, in the diff's words."""
    new = ["fix", RELU6, "--engine", "onnx-reference,openvino", "-o", str(tmp_path / "new.onnx"), "--format", "json",
           "--report", str(tmp_path / "new.json")]
    old = ["diff", RELU6, "--engine", "onnx-reference,openvino", "--fix", str(tmp_path / "old.onnx"), "--format",
           "json", "--output", str(tmp_path / "old.json")]
    codes = [_run(new, capsys, monkeypatch), _run(old, capsys, monkeypatch)]
    assert [c[0] for c in codes] == [0, 0] and _deprecations(codes[1][2]) and not _deprecations(codes[0][2])
    bodies = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("new", "old")]
    assert [b["verdict"] for b in bodies] == ["equal", "equal"]
    assert (tmp_path / "new.onnx").read_bytes() == (tmp_path / "old.onnx").read_bytes()
    onnx.checker.check_model(onnx.load(str(tmp_path / "new.onnx")))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.lists(st.tuples(st.sampled_from(["--target", "--to", "--semantics"]),
                          st.sampled_from(["onnx", "openvino", "directml:5_0", "default", "onnx:11,webnn"])),
                min_size=1, max_size=6))
def test_any_mix_of_target_names_reads_as_target_with_one_line_per_old_name(flags, capsys):
    """However the names are mixed and repeated, the targets are what --target alone gives, and each old name
    used says so once."""
    from clipbridge.cli.main import build_parser

    ns = build_parser().parse_args(["probe", *[a for pair in flags for a in pair]])
    assert ns.target == [value for _, value in flags]
    old = {name for name, _ in flags if name != "--target"}
    lines = _deprecations(capsys.readouterr().err)
    assert sorted(lines) == sorted(f"clipbridge: deprecated: {n} is now --target (the old spelling works until "
                                   f"{OLD_NAMES_UNTIL})" for n in old)
