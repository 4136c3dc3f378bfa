"""The diff, fix and chain reports are the routes' response models, so /openapi.json describes their bodies; fleet's
results.jsonl line is a model too, checked before it is written."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from clipbridge.cli.main import main
from clipbridge.core.settings import Settings
from clipbridge.fleet.models import FleetRecord
from clipbridge.main import create_app

OPENAPI = create_app(Settings()).openapi()
RECORD = {"model": "m.onnx", "path": "m.onnx", "sha256": "0" * 64, "verdict": "equal", "first_divergence": None, "findings": [],
          "engines": [{"name": "onnxruntime", "version": "1.0", "precision": "f32", "settings": {}}],
          "scan": {"format": "onnx", "clips": 0, "status": "exact", "clip_like": 0}, "cached": False,
          "seconds": 0.1, "error": None}


@pytest.mark.parametrize("path,model", [
    pytest.param("/v1/models/diff", "DiffResponse", id="diff"),
    pytest.param("/v1/models/fix", "FixResponse", id="fix"),
    pytest.param("/v1/models/chain", "ChainResponse", id="chain"),
])
def test_a_route_declares_its_report(path, model):
    content = OPENAPI["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]
    assert content["schema"] == {"$ref": f"#/components/schemas/{model}"}
    assert model in OPENAPI["components"]["schemas"]


def test_a_fleet_line_is_a_fleet_record():
    assert FleetRecord.model_validate(RECORD).model_dump(mode="json") == RECORD


def test_a_line_written_before_registry_paths_is_still_a_fleet_record():
    """`--against` reads last night's results.jsonl, which may predate `path`: it validates, with path null."""
    old = {k: v for k, v in RECORD.items() if k != "path"}
    assert FleetRecord.model_validate(old).path is None


@pytest.mark.parametrize("change", [
    pytest.param({"verdict": "differs"}, id="unknown-verdict"),
    pytest.param({"extra": 1}, id="unknown-key"),
    pytest.param({"findings": [{"node": "n"}]}, id="a-finding-without-its-fields"),
])
def test_a_line_the_model_does_not_describe_is_refused(change):
    with pytest.raises(ValidationError):
        FleetRecord.model_validate({**RECORD, **change})


def test_a_shard_of_another_version_is_named_not_a_traceback(tmp_path, capsys):
    """`fleet merge` of a results.jsonl whose lines are not FleetRecords: exit 2 with the model and the field."""
    shard = tmp_path / "shard"
    shard.mkdir()
    (shard / "results.jsonl").write_text(json.dumps({**RECORD, "verdict": "differs"}) + "\n")
    assert main(["fleet", "merge", str(shard), "--out", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out" / "report.sarif").exists()
    assert "'m.onnx' is not a fleet result: verdict" in capsys.readouterr().err


def _verdict_words(schema: dict) -> set:
    """Every value a `verdict` property of the schema (or of any model it defines) may take."""
    words: set = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "verdict" and isinstance(value, dict):
                    words.update(_enum(value))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
    walk(schema)
    return words


def _enum(prop: dict) -> set:
    if "enum" in prop:
        return set(prop["enum"])
    if "const" in prop:
        return {prop["const"]}
    if prop.get("type") == "null":
        return {None}
    return set().union(*(_enum(p) for p in prop.get("anyOf", []) + prop.get("oneOf", []))) if \
        ("anyOf" in prop or "oneOf" in prop) else {"<free text>"}


@pytest.mark.parametrize("name", ["DiffResponse", "FixResponse", "ChainResponse", "FleetRecord"])
def test_every_verdict_is_one_of_the_one_vocabulary(name):
    """Issue 43: a verdict is equal, explained, unexplained (or error), in diff, fix, chain and fleet alike; null
    where nothing was compared (chain --static, an IR in a fleet)."""
    from clipbridge.api.schemas_export import schemas
    words = _verdict_words(schemas()[name])
    assert words and words <= {"equal", "explained", "unexplained", "error", None}, words
