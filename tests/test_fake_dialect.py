"""Adding a dialect is one folder and one registry line: tests/fake_dialect (a dialect package with a spec model,
resolve, emit, an engine, rule texts and examples) is registered by tests/fake_dialect/registered.py's one line in
a child process, before the service is imported (the spec unions are built from the registry at import), and then
reaches translate (as source and as target), execute and compare (its engine), /v1/dialects (the inspector's
examples), the CLI (translate, dialects, explain), scan columns and the lint catalogue. No line of app/ names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fake_dialect import catalogue
from tests.scan.models import I32, clip_model, write

ROOT = Path(__file__).resolve().parents[1]
START = catalogue.EXAMPLES["start"]
CROSSED = catalogue.EXAMPLES["crossed-gives-lo"]  # i32, lo 5 > hi 2: fake v2 gives 5 everywhere
ONNX_CROSSED = {"dialect": "onnx", "opset": 13, "elem_type": "INT32", "min": 5, "max": 2}  # Clip-13 gives 2
SAMPLE = {"dtype": "int32", "shape": [3], "data": [0, 3, 9]}


def child(module: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", module, *args], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)


def cli(*args: str, stdin: str = "", ok: tuple[int, ...] = (0,)) -> str:
    """`clipbridge ARGS` with the fake dialect registered: its stdout (the exit status must be one of `ok`)."""
    p = child("tests.fake_dialect", *args, stdin=stdin)
    assert p.returncode in ok, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return p.stdout


REQUESTS: list[list[Any]] = [
    ["GET", "/v1/dialects", None],
    ["POST", "/v1/translate", {"spec": START, "targets": ["onnx", {"dialect": "fake", "version": "v1"}]}],
    ["POST", "/v1/translate", {"spec": ONNX_CROSSED, "targets": ["fake"], "mode": "literal"}],
    ["POST", "/v1/translate", {"spec": ONNX_CROSSED, "targets": ["fake"], "mode": "preserve"}],
    ["POST", "/v1/execute", {"spec": CROSSED, "backend": "fake-ref", "input": SAMPLE}],
    ["POST", "/v1/execute", {"spec": CROSSED, "backend": "numpy", "input": SAMPLE}],
    ["POST", "/v1/compare", {"spec": ONNX_CROSSED, "targets": ["onnx", "fake"], "input": SAMPLE}],
    ["POST", "/v1/translate", {"spec": {**CROSSED, "version": "v1"}, "targets": ["onnx"]}],
    ["GET", "/", None],
]


@pytest.fixture(scope="module")
def answers() -> list[tuple[int, Any]]:
    p = child("tests.fake_dialect.service", stdin=json.dumps(REQUESTS))
    assert p.returncode == 0, p.stderr[-3000:]
    return [tuple(a) for a in json.loads(p.stdout)]


def test_v1_dialects_carries_its_row_examples_and_rule_texts(answers):
    status, body = answers[0]
    assert status == 200
    row = body["dialects"][-1]  # the registry's order: its line comes last
    assert row["dialect"] == "fake" and row["in_defaults"] is False and row["version_field"] == "version"
    assert row["target_versions"] == ["v1", "v2"] and row["version_example"] == "fake:v2"
    assert row["examples"] == catalogue.EXAMPLES  # what the inspector's menu and starting spec read
    assert next(iter(row["examples"])) == "start"
    assert row["rule_texts"]["min-greater-than-max"]["rule"] == catalogue.RULE_TEXTS["min-greater-than-max"][0]
    assert row["spec_schema"]["properties"]["dialect"]["const"] == "fake"
    assert answers[8][0] == 200 and 'src="/static/main.js"' in answers[8][1]  # the inspector that reads it


def test_translate_from_it_and_into_it(answers):
    status, body = answers[1]
    assert status == 200, body
    assert body["source"] == START and body["meaning"]["summary"] == "float32: clip to [0.0, 6.0]"
    onnx, fake_v1 = body["translations"]
    assert onnx["status"] == "exact" and onnx["target"]["elem_type"] == "FLOAT"
    assert fake_v1["status"] == "exact" and fake_v1["target"]["version"] == "v1"
    assert fake_v1["artifacts"] == {"fake_text": "y = fake.clamp<v1, f32>(x, 0.0, 6.0)\n"}

    status, body = answers[2]  # literal: the numbers copied; Clip-13 gives max, fake.clamp gives lo
    assert status == 200, body
    (tr,) = body["translations"]
    assert tr["status"] == "drift" and tr["target"] == {"dialect": "fake", "version": "v2", "dtype": "i32",
                                                        "lo": 5, "hi": 2}
    finding = next(f for f in tr["findings"] if f["code"] == "min-greater-than-max")
    assert finding["witness"]["source_output"] != finding["witness"]["target_output"]

    status, body = answers[3]  # preserve: lo = hi = max computes what the source computes
    (tr,) = body["translations"]
    assert status == 200 and tr["status"] == "exact" and (tr["target"]["lo"], tr["target"]["hi"]) == (2, 2)

    status, body = answers[7]  # v1 refuses lo > hi: a source it rejects
    assert status == 422 and "v1 refuses lo > hi" in json.dumps(body), body


def test_execute_on_its_engine_and_compare(answers):
    for status, body in answers[4:6]:
        assert status == 200, body
        assert body["output"]["data"] == [5, 5, 5] and body["semantics"] == "fake"
    assert answers[4][1]["backend"] == "fake-ref"
    status, body = answers[6]
    assert status == 200, body
    assert [o["output"]["data"] for o in body["outputs"]] == [[2, 2, 2], [5, 5, 5]]
    assert body["pairs"][0]["differing"] == 3


def test_the_cli_translates_lists_and_explains_it():
    out = json.loads(cli("translate", "--target", "fake:v1,onnx", "-", stdin=json.dumps(START)))
    assert [t["target"]["dialect"] for t in out["translations"]] == ["fake", "onnx"]
    assert out["source"]["dialect"] == "fake"
    assert "fake" in cli("dialects")
    explained = cli("explain", "min-greater-than-max")
    assert f"fake {catalogue.RULE_TEXTS['min-greater-than-max'][0]}" in " ".join(explained.split())


def test_scan_and_lint_take_it_as_a_column(tmp_path):
    path = write(tmp_path / "crossed.onnx", clip_model(13, I32, 5, 2, np.int32))
    head, row = cli("scan", str(path), "--target", "onnx,fake", "--mode", "literal", ok=(1,)).splitlines()[:2]
    assert head.split()[-2:] == ["onnx", "fake"] and row.split()[-2:] == ["exact", "drift"]
    lint = cli("lint", str(path), "--target", "fake", "--mode", "literal", ok=(1,))
    assert "min-greater-than-max" in lint and "(fake)" in lint
    sarif = json.loads(cli("scan", str(path), "--target", "fake", "--mode", "literal", "--format", "sarif", ok=(1,)))
    rule = next(r for r in sarif["runs"][0]["tool"]["driver"]["rules"] if r["id"] == "min-greater-than-max")
    assert rule["properties"]["dialects"]["fake"]["rule"] == catalogue.RULE_TEXTS["min-greater-than-max"][0]
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "min-greater-than-max" and "fake" in json.dumps(result)


def test_it_is_a_full_dialect_and_app_never_names_it():
    from clipbridge.dialects.kit.base import missing_interface
    from tests.fake_dialect import DIALECT
    assert missing_interface(DIALECT) == [] and DIALECT.name == "fake"
    named = [p for p in (ROOT / "app" / "clipbridge").rglob("*.py") if "fake_dialect" in p.read_text()]
    assert named == []
