"""Issue 34: the CLI reads a user's own model with its external data next to it, as onnx.load does (the service
refuses external data: tests/hostile/test_external_data.py)."""

from __future__ import annotations

import json

import onnx
import pytest

from clipbridge.cli.main import main
from tests.diff import models as M


def _saved_with_external_data(tmp_path) -> str:
    m = onnx.load_from_string(M.clip_chain(0.0, 6.0))
    path = tmp_path / "model" / "m.onnx"
    path.parent.mkdir()
    onnx.save_model(m, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="m.data", size_threshold=0)
    assert (path.parent / "m.data").exists()
    return str(path)


def _diff(path: str, capsys) -> tuple[int, dict]:
    code = main(["diff", path, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


ANSWER = ("verdict", "first_divergence", "nodes", "outputs")


def test_diff_reads_external_data_next_to_the_model(tmp_path, monkeypatch, capsys):
    path = _saved_with_external_data(tmp_path)
    inline = tmp_path / "inline.onnx"
    inline.write_bytes(M.clip_chain(0.0, 6.0))
    monkeypatch.chdir(tmp_path)  # not the model's directory: the data is found next to the model
    code, body = _diff(path, capsys)
    # The answer is the one for the same model with its bounds stored inline (the bounds were read, not lost),
    # whatever this host's engines answer; the exit code follows that verdict.
    inline_code, inline_body = _diff(str(inline), capsys)
    assert {k: body[k] for k in ANSWER} == {k: inline_body[k] for k in ANSWER}
    assert code == inline_code == (0 if body["verdict"] == "equal" else 1)


def test_missing_external_data_is_an_error_naming_the_model(tmp_path, capsys):
    path = _saved_with_external_data(tmp_path)
    (tmp_path / "model" / "m.data").unlink()
    assert main(["diff", path, "--format", "json"]) == 2
    assert "external data cannot be read" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["diff", "--help"]])
def test_help_says_external_data_is_read_by_the_cli_only(args, capsys):
    with pytest.raises(SystemExit):
        main(args)
    out = " ".join(capsys.readouterr().out.split())
    assert "external files next to it is read" in out and "the service never reads external data" in out


def test_a_model_past_protobufs_limit_with_its_data_is_exit_2_saying_why(tmp_path, monkeypatch, capsys):
    """Issue 46: the precision trace writes a float16 copy of every weight, so it still embeds the data: a model
    above 2 GiB with external data is refused from the file sizes, exit 2 (the diff runs it: below)."""
    from clipbridge.scan import external
    path = _saved_with_external_data(tmp_path)
    monkeypatch.setattr(external, "EMBED_LIMIT", 16)
    assert main(["trace", path, "--probe", "off"]) == 2
    err = capsys.readouterr().err
    assert "past the 16 bytes one ONNX protobuf holds" in err and "(model)" in err


def test_the_diff_runs_a_model_past_protobufs_limit_with_its_data(tmp_path, monkeypatch, capsys):
    """Issue 46: the diff keeps the weights in their files, so the embedding limit never applies to it."""
    from clipbridge.scan import external
    path = _saved_with_external_data(tmp_path)
    monkeypatch.setattr(external, "EMBED_LIMIT", 16)
    code, body = _diff(path, capsys)
    assert code == (0 if body["verdict"] == "equal" else 1)
