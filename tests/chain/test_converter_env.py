"""The LiteRT converter's environment of its own (app/clipbridge/chain/converter_env.py, app/clipbridge/engines/venvs.py), without
building it: where it lives, what a missing or half-built one answers, and the converter process's plumbing
(isolation, reduced errors, the time limit) run with this interpreter standing in for the environment's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clipbridge.chain import child_torch, converter_env, litert_convert, stages
from clipbridge.cli.main import main as cli
from clipbridge.core.errors import ClipBridgeError
from clipbridge.engines import venvs
from tests.chain import models


@pytest.fixture()
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLIPBRIDGE_CACHE", str(tmp_path))
    return tmp_path


def _stand_in(cache: Path) -> Path:
    """A 'built' environment whose interpreter is this one: the plumbing runs, litert_torch is absent."""
    venv = converter_env.env_dir()
    (venv / "bin").mkdir(parents=True)
    py = venv / "bin" / "python"
    py.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")  # this venv's interpreter: torch, no litert_torch
    py.chmod(0o755)
    (venv / venvs.READY).write_text("stand-in\n")
    return venv


@pytest.mark.parametrize(("env", "want"), [
    pytest.param({"CLIPBRIDGE_CACHE": "/c"}, "/c", id="explicit"),
    pytest.param({"XDG_CACHE_HOME": "/x"}, "/x/clipbridge", id="xdg"),
    pytest.param({"HOME": "/h"}, "/h/.cache/clipbridge", id="home"),
])
def test_the_cache_root(monkeypatch: pytest.MonkeyPatch, env: dict, want: str) -> None:
    for k in ("CLIPBRIDGE_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert venvs.cache_root() == Path(want)


def test_an_unbuilt_environment_is_not_installed_with_the_build_command(cache: Path) -> None:
    assert converter_env.env_dir() == cache / "converters" / "litert-torch-0.10.0"
    for stage in stages.LITERT_STAGES:
        assert "clipbridge chain-env build" in stages.missing_converter(stage)
    assert stages.missing_converter("openvino") is None


def test_a_build_cut_short_is_not_ready(cache: Path) -> None:
    """A venv without the marker (the build was killed before its last step) is built again, never used."""
    venv = converter_env.env_dir()
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    assert converter_env.python() is None and stages.missing_converter("tflite")
    (venv / venvs.READY).write_text("x\n")
    assert converter_env.python() == str(venv / "bin" / "python") and stages.missing_converter("tflite") is None


def test_a_failing_converter_is_one_reduced_line(cache: Path) -> None:
    """The script runs isolated (-I, an empty cwd, no PYTHONPATH): here litert_torch is absent, which is the
    converter's failure, reduced to its type and first line, as a failed hop quotes it."""
    _stand_in(cache)
    with pytest.raises(child_torch.ConversionFailed) as err:
        child_torch.to_tflite(models.clamp_min_int(), [{"name": "x", "shape": [1, 4], "dtype": "float32"}])
    assert err.value.message == "ModuleNotFoundError: No module named 'litert_torch'"


def test_a_converter_past_its_time_is_stopped(cache: Path) -> None:
    _stand_in(cache)
    with pytest.raises(converter_env.ConverterError, match="ran out of time"):
        converter_env.convert(b"PK", [], timeout_s=0.01)


@pytest.mark.parametrize(("code", "stderr", "want"), [
    pytest.param(3, "warning\nValueError: bad shape\n", "ValueError: bad shape", id="script-error"),
    pytest.param(-9, "", "killed by signal 9", id="killed"),
    pytest.param(1, "Traceback (most recent call last):\n  File x\nMemoryError\n", "ran out of memory", id="oom"),
    pytest.param(1, "Traceback (most recent call last):\n  File secret/path\nKeyError: 1\n", "exited with status 1",
                 id="no-traceback"),
])
def test_reduced_errors(code: int, stderr: str, want: str) -> None:
    assert want in converter_env._reduced(code, stderr) and "File" not in converter_env._reduced(code, stderr)


def test_the_script_imports_no_clipbridge_module() -> None:
    """It runs in an environment without clipbridge's dependencies: the standard library, torch, litert_torch."""
    text = Path(litert_convert.__file__).read_text()
    assert "import clipbridge" not in text and "from clipbridge" not in text
    assert litert_convert.main(["only-one"]) == 2


def test_chain_env_status_says_where(cache: Path, capsys: pytest.CaptureFixture) -> None:
    assert cli(["chain-env", "status"]) == 1
    assert str(converter_env.env_dir()) in capsys.readouterr().out
    _stand_in(cache)
    assert cli(["chain-env", "status"]) == 0


def test_the_cli_without_a_build_names_the_command(cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLIPBRIDGE_CHAIN_BUILD", "0")
    pt2 = tmp_path / "m.pt2"
    pt2.write_bytes(models.clamp_min_int())
    assert cli(["chain", str(pt2), "tflite", "--static"]) == 0
    assert "tflite: the LiteRT converter environment" in capsys.readouterr().err
    assert not converter_env.env_dir().exists()


def test_the_converter_child_is_limited(cache: Path) -> None:
    """The script caps its own address space before importing anything: under 200 MB, importing torch (which
    this stand-in interpreter has, without the cap it fails on litert_torch) fails first; this process keeps its
    limit."""
    import resource
    before = resource.getrlimit(resource.RLIMIT_AS)
    _stand_in(cache)
    with pytest.raises(converter_env.ConverterError) as err:
        converter_env.convert(b"PK", [], memory_mb=200)
    assert "litert_torch" not in str(err.value) and "Traceback" not in str(err.value)
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_the_cli_builds_on_first_use_and_a_failed_build_leaves_the_hop_not_installed(
        cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's first chain run with a LiteRT stage builds the environment; a build that fails (no index
    reachable) is a note, and the chain still answers with the hop not-installed."""
    calls: list[str] = []

    def failing(log=print) -> str:  # noqa: ANN001
        calls.append("build")
        raise ClipBridgeError("could not install litert-torch==0.10.0: no index reachable", "chain-env")

    monkeypatch.delenv("CLIPBRIDGE_CHAIN_BUILD", raising=False)
    monkeypatch.setattr(converter_env, "build", failing)
    pt2 = tmp_path / "m.pt2"
    pt2.write_bytes(models.clamp_min_int())
    code = cli(["chain", str(pt2), "tflite"])  # --static never builds (chain/litert_static.py predicts instead)
    err = capsys.readouterr().err
    assert calls == ["build"] and "building the LiteRT converter environment once" in err
    assert "no index reachable" in err and "clipbridge chain-env build" in err
    assert code == 0  # the hop that could not run is a note, not a difference
