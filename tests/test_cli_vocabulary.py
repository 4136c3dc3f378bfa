"""One CLI vocabulary (issues 37 and 43): every flag of every subcommand is in the table of docs/cli.md (the parser is
walked against it), one target flag (`--target`, the older `--to` and `--semantics` read as it until 0.2.0),
`--output/-o` for what a command writes, one default mode (preserve), `lint` in every format `scan` has, help
examples that are the real defaults, tables that fit 100 columns with message and witness, a stdin hint, the serve
start line and a busy port naming --port, and the client importable on the core install."""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from clipbridge.api.model_base import OLD_NAMES_UNTIL
from clipbridge.cli.deprecated import Append, OldSpelling, is_old
from clipbridge.cli.main import build_parser, main
from clipbridge.cli.output import FORMATS
from clipbridge.dialects import registry
from clipbridge.service.capabilities import default_version
from tests.sockets import listening_socket, port_of

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "example.onnx"
RELU6 = ROOT / "docs" / "relu6.onnx"
GOOD = '{"dialect":"onnx","opset":13,"elem_type":"FLOAT","min":0,"max":6}'
TARGET_COMMANDS = ("translate", "scan", "lint", "probe", "bundle")


def _sub(name: str):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices[name]


def _action(command: str, dest: str):
    return next(a for a in _sub(command)._actions if a.dest == dest)


@pytest.mark.parametrize("command", TARGET_COMMANDS)
def test_one_target_flag_with_the_old_names_as_aliases(command):
    action = _action(command, "target")
    assert action.option_strings == ["--target", "--to", "--semantics"]
    assert action.default is None and isinstance(action, Append)
    assert [o for o in action.option_strings if is_old(action, o)] == ["--to", "--semantics"]
    assert f"read until {OLD_NAMES_UNTIL}" in action.help


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, action) for every option of every subcommand, however deep (`fleet run`)."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _walk(sub, (*path, name))
        elif a.option_strings and not isinstance(a, argparse._HelpAction):
            yield " ".join(path) or "clipbridge", a


def _table(heading: str) -> list[list[str]]:
    """The rows of the first table under `heading` in docs/cli.md, each a list of its cells."""
    section = (ROOT / "docs" / "cli.md").read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    lines = section.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[start + 2:end]]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def vocabulary() -> dict[str, tuple[set[str], set[str]]]:
    """docs/cli.md's vocabulary: flag -> (the commands it is on, its old names); `--output -o` is one row."""
    out = {}
    for flag, _, commands, old in _table("The vocabulary"):
        for name in _names(flag):
            out[name] = ({c.strip() for c in commands.split(",")}, set(_names(old)))
    return out


def test_every_flag_of_every_subcommand_is_in_the_vocabulary_table():
    table = vocabulary()
    seen: dict[str, set[str]] = {}
    for command, action in _walk(build_parser()):
        if isinstance(action, OldSpelling):  # an old command spelling as a whole: in the old spellings table
            continue
        new = [o for o in action.option_strings if not is_old(action, o)]
        for name in new:
            assert name in table, f"{command}: {name} is not in docs/cli.md's vocabulary table"
            assert command in table[name][0], f"{command}: {name}'s row in docs/cli.md does not list {command}"
            seen.setdefault(name, set()).add(command)
        for old in (o for o in action.option_strings if is_old(action, o)):
            assert old in table[new[0]][1], f"{command}: {old}, an old name of {new[0]}, is not in its row"
    assert {n: cmds for n, (cmds, _) in table.items()} == seen  # no row or command the parser does not have


def test_every_old_command_spelling_is_in_the_old_spellings_table():
    rows = " ".join(old for old, _ in _table("Old spellings"))
    olds = [(c, o) for c, a in _walk(build_parser()) if isinstance(a, OldSpelling) for o in a.option_strings]
    assert olds
    for command, option in olds:
        assert re.search(rf"`{command} [^`]*{option}\b", rows), f"{command} {option} is not in the old spellings"


@pytest.mark.parametrize("flag,first", [pytest.param("output", ["--output", "-o"], id="output"),
                                        pytest.param("target", ["--target"], id="target"),
                                        pytest.param("engine", ["--engine"], id="engine"),
                                        pytest.param("format", ["--format"], id="format")])
def test_one_name_for_each_idea(flag, first):
    """What a command writes is --output/-o, what it targets --target, its engines --engine, its format --format:
    no command spells one of them otherwise (an old name after the first is read, with its deprecation line)."""
    actions = [(c, a) for c, a in _walk(build_parser()) if a.dest == flag]
    assert actions
    for command, action in actions:
        assert action.option_strings[:len(first)] == first, command
        assert all(is_old(action, o) for o in action.option_strings[len(first):]), command


@pytest.mark.parametrize("flag", ["--target", "--to", "--semantics"])
def test_every_name_of_the_target_flag_reads_the_same(flag):
    args = build_parser().parse_args(["probe", "spec.json", flag, "onnx", flag, "directml:5_0"])
    assert args.target == ["onnx", "directml:5_0"]


@pytest.mark.parametrize("command", TARGET_COMMANDS)
def test_one_default_mode_everywhere(command):
    action = _action(command, "mode")
    assert action.default == "preserve" and action.choices == ("preserve", "literal")


@pytest.mark.parametrize("command", TARGET_COMMANDS)
def test_help_examples_are_the_real_defaults(command):
    text = _action(command, "target").help
    for d in registry.DIALECTS.values():
        version = default_version(d)
        assert (f"{d.name}[:{version}]" if version else d.name) in text
    assert "directml[:6_4]" in text and "coreml[:iOS18]" in text
    assert "directml[:5_0]" not in text and "coreml[:iOS17]" not in text


def test_lint_takes_every_format_scan_takes():
    assert set(_action("lint", "format").choices) == set(_action("scan", "format").choices) == set(FORMATS)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "table"])
def test_lint_over_two_models_is_one_report(fmt, capsys):
    code = main(["lint", str(EXAMPLE), str(RELU6), "--target", "directml", "--format", fmt])
    out = capsys.readouterr().out
    single = main(["scan", str(EXAMPLE), "--target", "directml", "--format", "json"])
    capsys.readouterr()
    assert code == single  # the worst of the models (example.onnx has an unsupported clip)
    if fmt == "sarif":
        from tests.lint.test_formats import validate_sarif
        log = json.loads(out)
        validate_sarif(log)
        assert [r["artifacts"][0]["location"]["uri"] for r in log["runs"]] == [str(EXAMPLE), str(RELU6)]
    elif fmt == "junit":
        root = ET.fromstring(out.split("?>", 1)[1])
        names = [s.get("name") for s in root.iter("testsuite")]
        assert names == [f"{EXAMPLE}: directml", f"{RELU6}: directml"]
        assert int(root.get("tests")) == sum(int(s.get("tests")) for s in root.iter("testsuite")) == 6
    elif fmt == "json":
        assert [b["file"] for b in json.loads(out)] == [str(EXAMPLE), str(RELU6)]
    else:
        assert str(EXAMPLE) in out and str(RELU6) in out


def test_dialects_fits_100_columns(capsys):
    assert main(["dialects"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 100
    assert any(line.startswith("directml") and "5_0 to 6_4" in line for line in lines)


def test_translate_table_fits_100_columns_with_message_and_witness(monkeypatch, capsys):
    spec = '{"dialect":"onnx","opset":13,"elem_type":"INT8","min":5,"max":2}'
    monkeypatch.setattr(sys, "stdin", io.StringIO(spec))
    assert main(["translate", "--target", "directml:5_0", "--mode", "literal", "--format", "table"]) == 1
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 100
    assert "min > max is computed differently" in out and "witness: input -128" in out


class _Tty(io.BytesIO):
    def isatty(self) -> bool:
        return True

    @property
    def buffer(self) -> io.BytesIO:
        return self


@pytest.mark.parametrize("stdin,hint", [pytest.param(_Tty(GOOD.encode()), True, id="terminal"),
                                        pytest.param(io.TextIOWrapper(io.BytesIO(GOOD.encode())), False, id="pipe")])
def test_translate_hints_when_it_waits_on_a_terminal(monkeypatch, capsys, stdin, hint):
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["translate", "--target", "openvino"]) == 0
    err = capsys.readouterr().err
    assert ("reading a JSON clip spec from stdin (end with Ctrl-D" in err) is hint


def test_serve_on_a_busy_port_names_the_port_option(capsys):
    holder = listening_socket()
    port = port_of(holder)
    try:
        assert main(["serve", "--port", str(port)]) == 3
    finally:
        holder.close()
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err


def test_serve_prints_a_start_line_with_the_url():
    sock = listening_socket()
    port = port_of(sock)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'app'}{os.pathsep}{ROOT}"}
    proc = subprocess.Popen([sys.executable, "-m", "clipbridge", "serve", "--fd", str(sock.fileno()), "--log-level",
                             "warning"], pass_fds=(sock.fileno(),), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env=env, cwd=ROOT)
    try:
        line = proc.stderr.readline().decode()  # the first line, before any worker starts
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        sock.close()
    assert line.startswith(f"clipbridge serving on http://127.0.0.1:{port}/"), line


CLIENT_ON_THE_CORE = r'''
import importlib.abc, sys
BLOCKED = {"onnxruntime", "openvino", "torch", "jax", "pytest", "hypothesis"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Block())
from clipbridge.client import Client
print(Client.__name__)
'''


def test_the_client_imports_on_the_core_install():
    """httpx is a core dependency (pyproject), so the README's start command is enough for clipbridge.client."""
    import tomllib
    from packaging.requirements import Requirement
    core = {Requirement(r).name for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
            ["dependencies"]}
    assert "httpx" in core
    r = subprocess.run([sys.executable, "-c", CLIENT_ON_THE_CORE], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "Client", r.stderr[-2000:]


def test_the_client_without_httpx_says_what_to_install():
    r = subprocess.run([sys.executable, "-c", "import sys; sys.modules['httpx'] = None\nimport clipbridge.client"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and 'pip install -e .' in r.stderr and "httpx" in r.stderr, r.stderr[-2000:]


def test_mode_and_target_defaults_are_written_down():
    api = (ROOT / "docs" / "api.md").read_text()
    api = api.replace("**", "")
    assert "preserve" in api and "--target" in api and f"until {OLD_NAMES_UNTIL}" in api


def test_fix_says_its_verdict_in_the_diffs_words():
    """One set of verdict words (docs/cli.md): fix's are the diff's, never a fourth word such as `differs`."""
    from typing import get_args

    from clipbridge.diff.models import DiffResponse
    from clipbridge.fix.models import FixResponse
    words = [get_args(m.model_fields["verdict"].annotation) for m in (DiffResponse, FixResponse)]
    assert words[0] == words[1] == ("equal", "explained", "unexplained")
