"""The shell examples of the README and of every docs/ page, run for real against a live `clipbridge serve`, their
shown output compared.

Every fenced block that holds shell commands is run (in a scratch folder with `docs/` linked in, the
server on a free port in place of localhost:8000, this checkout's `clipbridge` first on PATH). A command
shown after `$ ` must print what the README shows below it: whitespace aside, and `...` in the README
standing for any text (an abridged part). A command shown without a prompt shows no output: it must exit
0 or 1 (1 is drift) without an error. stderr is shown interleaved with stdout, as in a terminal. Only the
commands in SKIPPED are not run, each for its reason.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sockets import listening_socket, port_of

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages() -> list[Path]:
    """The README, then every page of the documentation site (docs/*.md), in name order."""
    return [README, *sorted((ROOT / "docs").glob("*.md"))]
SKIPPED = {
    "python3 -m venv": "creates a virtualenv and installs (what CI itself does), then serves or runs this suite",
    "clipbridge serve": "the server itself: the test starts one on a free port",
    "pip install .": "installs the package into the running environment (what CI itself does)",
    "clipbridge chain clamps.pt2": "a torch -> ONNX -> OpenVINO -> LiteRT -> Core ML conversion of a model that "
                                  "tests/chain/models.py builds, with the LiteRT converter's own environment (2 GB); "
                                  "tests/chain/test_chain.py and test_litert_chain.py run that chain and check it",
}
SKIPPED.update({
    "clipbridge chain root_clamps.pt2": "a torch model that tests/chain/models.py builds (root_clamps); "
                                        "tests/chain/test_litert_static.py runs its static chain without the converter "
                                        "environment and checks every clamp's prediction",
    "clipbridge diff t5.onnx": "a float16 T5 clamp that tests/diff/models_outputs.py builds, whose answer depends on the "
                               "host (OpenVINO computes float16 in f32 without avx512_fp16); "
                               "tests/diff/test_outputs_verdict.py runs it and derives the expectation from the host",
    "clipbridge diff dyn.onnx": "a dynamic-batch torch export that tests/diff/test_shapes.py builds and diffs at batch 8",
    "clipbridge diff mm.onnx": "a MatMul whose sums cancel, built by tests/diff/test_op_causes.py, which diffs it "
                               "(accumulation-order, equal) with the engines' own difference measured first",
    "clipbridge diff softmax.onnx": "a Softmax over NaN and +inf rows, built by tests/diff/test_op_causes.py, "
                                    "which diffs it where the engines differ on the host",
})
MARK = "@@clipbridge-readme-command-end@@"


@dataclass
class Command:
    text: str
    shown: str | None  # the output the page shows (None: a command shown without a prompt)
    line: int
    page: str = "README.md"


def _complete(text: str) -> bool:
    if text.rstrip().endswith("\\"):
        return False
    try:
        shlex.split(text, comments=True)
    except ValueError:  # an open quote: the command goes on on the next line
        return False
    return True


def all_commands() -> list[Command]:
    """The commands of the README and of every docs/ page, each naming its page."""
    out = []
    for path in pages():
        out += [Command(c.text, c.shown, c.line, str(path.relative_to(ROOT))) for c in commands(path.read_text())]
    return out


def commands(markdown: str) -> list[Command]:
    """The shell commands of every fenced block that is `sh` or that starts with a `$ ` prompt."""
    out: list[Command] = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", markdown, flags=re.S | re.M):
        lang, body = m.group(1), m.group(2)
        first = markdown[:m.start()].count("\n") + 2
        lines = body.splitlines()
        prompted = any(line.startswith("$ ") for line in lines)
        if lang != "sh" and not (lang == "" and prompted):
            continue
        i = 0
        while i < len(lines):
            line = lines[i]
            if prompted and not line.startswith("$ "):
                i += 1  # output of no command: cannot happen in a well-formed block
                continue
            text, start = (line[2:] if prompted else line), i
            while not _complete(text) and i + 1 < len(lines):
                i += 1
                text += "\n" + lines[i]
            i += 1
            shown = None
            if prompted:
                output = []
                while i < len(lines) and not lines[i].startswith("$ "):
                    output.append(lines[i])
                    i += 1
                shown = "\n".join(output)
            if text.strip() and not text.lstrip().startswith("#"):  # a comment line is no command
                out.append(Command(text, shown, first + start))
    return out


def matches(shown: str, actual: str) -> bool:
    """Whitespace aside, `actual` is `shown` with each `...` standing for any text."""
    want = re.sub(r"\s+", "", shown)
    got = re.sub(r"\s+", "", actual)
    pieces = want.split("...")
    if len(pieces) == 1:
        return want == got
    if not (got.startswith(pieces[0]) and got.endswith(pieces[-1])):
        return False
    pos, end = len(pieces[0]), len(got) - len(pieces[-1])
    for piece in pieces[1:-1]:
        found = got.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return pos <= end


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLIPBRIDGE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = f"{ROOT / 'app'}{os.pathsep}{ROOT}"
    return env


@pytest.fixture(scope="module")
def live_server() -> Iterator[int]:
    """`clipbridge serve` (as `python -m clipbridge serve`) on a port the kernel chose, until the module's tests are done."""
    sock = listening_socket()
    port = port_of(sock)
    proc = subprocess.Popen([sys.executable, "-m", "clipbridge", "serve", "--fd", str(sock.fileno())],
                            cwd=ROOT, env={**_env(), "CLIPBRIDGE_ACCESS_LOG": "0"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, pass_fds=(sock.fileno(),))
    sock.close()
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"clipbridge serve did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)
    yield port
    proc.terminate()
    proc.wait(timeout=30)


def test_the_parser_finds_every_block_and_skips_only_what_it_says():
    cmds = all_commands()
    assert len(cmds) >= 15
    assert len(commands(README.read_text())) >= 5  # the front page shows real examples, run here too
    assert {c.page for c in cmds} >= {"README.md", "docs/api.md", "docs/scan.md", "docs/lint.md"}
    for pattern in SKIPPED:
        assert any(pattern in c.text for c in cmds), f"nothing in the README or docs/ matches the skip {pattern!r}"
    assert any(c.shown and "..." in c.shown for c in cmds)


def test_matches_reads_dots_as_an_abridged_part():
    assert matches('{"a": 1, ...}', '{"a":1,"b":2}')
    assert matches('{"a": ..., "c": 3}', '{"a":{"x":1},"c":3}')
    assert not matches('{"a": 1, ...}', '{"a":2,"b":2}')
    assert not matches('{"a": 1}', '{"a":1,"b":2}')
    assert not matches("x ... y ... z", "x y")


def test_readme_commands_run_and_print_what_the_readme_shows(live_server, tmp_path):
    assert shutil.which("curl") and shutil.which("bash"), "the README's examples need bash and curl (.ci/run " \
                                                          "installs curl)"
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    cmds = [c for c in all_commands() if not any(p in c.text for p in SKIPPED)]
    script = []
    for c in cmds:
        text = c.text.replace("localhost:8000", f"127.0.0.1:{live_server}")
        # Each command's exit status survives the marker, so a following `echo $?` sees it.
        script.append(f"{{ {text}\n}} 2>&1\n__rc=$?; printf '\\n%s %s\\n' '{MARK}' \"$__rc\"; (exit $__rc)")
    r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, env=_env(), capture_output=True,
                       text=True, timeout=600)
    parts = r.stdout.split(f"\n{MARK} ")
    assert len(parts) == len(cmds) + 1, (r.stdout[-3000:], r.stderr[-3000:])
    failures = []
    outputs = [parts[0]] + [p.split("\n", 1)[1] if "\n" in p else "" for p in parts[1:-1]]
    codes = [int(p.split("\n", 1)[0]) for p in parts[1:]]
    for c, out, code in zip(cmds, outputs, codes):
        if c.shown is not None:
            if not matches(c.shown, out):
                failures.append(f"{c.page} line {c.line}: {c.text[:80]!r}\n--- shown:\n{c.shown}\n--- got:\n{out}")
        elif code not in (0, 1) or out.lstrip().startswith('{"type":"about:blank"'):
            failures.append(f"{c.page} line {c.line}: {c.text[:80]!r} exited {code}: {out[:500]}")
    assert "Traceback" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]
    assert not failures, "\n\n".join(failures)


def test_install_hints_in_errors_are_the_readmes_commands(monkeypatch, client):
    """The 422 for a missing GPU (or engine) backend gives the install command the README (or, for one engine's
    extra, docs/install.md) gives."""
    import clipbridge.service.execute as execute
    text = README.read_text()
    for extra in ("gpu", "engines"):
        assert f"`{execute.INSTALL_HINT[extra]}`" in text, extra
    install = (ROOT / "docs" / "install.md").read_text()
    for extra, hint in execute.INSTALL_HINT.items():
        assert f"`{hint}`" in install, extra
    monkeypatch.setattr(execute, "cupy_available", lambda: False)
    r = client.post("/v1/execute", json={"spec": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0,
                                                  "max": 6},
                                         "input": {"dtype": "float32", "shape": [1], "data": [1]}, "backend": "cupy"})
    assert r.status_code == 422, r.text
    assert 'pip install -e ".[gpu]"' in r.json()["detail"]
    assert '`pip install -e ".[gpu]"`' in text
