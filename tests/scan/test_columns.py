"""Scan columns: the defaults stay the in_defaults dialects (stable CI output); any registered dialect is a column
when asked for (`--to default,stablehlo`, `target=` on /v1/models/inspect), and every report format and the
baseline work with any number of columns."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest

from clipbridge.cli.main import main
from clipbridge.dialects import registry
from clipbridge.core.errors import UnsupportedTarget
from clipbridge.lint.report import fingerprint
from clipbridge.scan.report import expand_targets
from tests.scan.models import F16, clip_model, write

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "docs" / "example.onnx")
DEFAULTS = ["onnx", "openvino", "directml"]


@pytest.mark.parametrize("texts, expected", [
    pytest.param(None, DEFAULTS, id="none-defaults"),
    pytest.param([], DEFAULTS, id="empty-defaults"),
    pytest.param(["default"], DEFAULTS, id="default-group"),
    pytest.param(["default,stablehlo"], [*DEFAULTS, "stablehlo"], id="default-plus-one"),
    pytest.param(["stablehlo", "default"], ["stablehlo", *DEFAULTS], id="order-as-asked"),
    pytest.param(["all"], list(registry.names()), id="all"),
    pytest.param(["onnx:11, stablehlo:1"], ["onnx:11", "stablehlo:1"], id="comma-with-versions"),
    pytest.param(["onnx", "onnx,"], ["onnx", "onnx"], id="repeats-kept-empty-items-dropped"),
])
def test_expand_targets(texts, expected):
    assert expand_targets(texts) == expected


def test_defaults_are_the_in_defaults_dialects():
    """The decision (README, Default columns): a new dialect is opt-in, so existing reports keep three columns."""
    assert list(registry.default_names()) == DEFAULTS
    assert "stablehlo" in registry.names() and not registry.DIALECTS["stablehlo"].in_defaults


def scan(argv, capsys):
    code = main(["scan", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_and_json_take_a_fourth_column(capsys):
    code, out, _ = scan([EXAMPLE, "--to", "default,stablehlo"], capsys)
    assert out.splitlines()[0].split() == ["#", "clip", "pattern", "dtype", *DEFAULTS, "stablehlo"]
    assert "stablehlo: 4 exact, 0 drift, 1 unsupported" in out and code == 2
    _, out, _ = scan([EXAMPLE, "--to", "all", "--format", "json"], capsys)
    body = json.loads(out)
    assert [t["label"] for t in body["targets"]] == list(registry.names())
    assert all(len(c["translations"]) == len(registry.names()) for c in body["clips"] if not c["error"])


def test_unknown_column_names_every_dialect(capsys):
    code, _, err = scan([EXAMPLE, "--to", "default,stablehl"], capsys)
    assert code == 2 and "stablehlo" in err and "did you mean" in err.lower()
    with pytest.raises(UnsupportedTarget, match="stablehlo:1"):
        from clipbridge.scan.report import target_from_text
        target_from_text("nope")


@pytest.mark.parametrize("fmt, check", [
    pytest.param("markdown", lambda out: "| # | clip | pattern | onnx | openvino | directml | stablehlo |" in out,
                 id="markdown"),
    pytest.param("github", lambda out: "clipbridge dynamic-bounds (stablehlo) at graph/clip_dynamic_max" in out,
                 id="github"),
    pytest.param("junit", lambda out: [s.get("name") for s in ElementTree.fromstring(out).iter("testsuite")]
                 == [*DEFAULTS, "stablehlo"], id="junit"),
    pytest.param("sarif", lambda out: any(r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
                                          == "graph/clip_dynamic_max" and "(stablehlo)" in r["message"]["text"]
                                          for r in json.loads(out)["runs"][0]["results"]), id="sarif"),
])
def test_report_formats_with_a_fourth_column(capsys, fmt, check):
    _, out, _ = scan([EXAMPLE, "--to", "default,stablehlo", "--format", fmt], capsys)
    assert check(out), out[:2000]


def test_a_baseline_of_the_default_columns_still_holds_with_more(tmp_path, capsys):
    """Fingerprints are per target label: adding a column leaves the old ones alone; only its findings are new."""
    base = tmp_path / "baseline.json"
    assert scan([EXAMPLE, "--write-baseline", str(base)], capsys)[0] == 0
    old = json.loads(base.read_text())["findings"]
    assert {e["target"] for e in old} <= {"", *DEFAULTS}
    code, out, _ = scan([EXAMPLE, "--to", "default,stablehlo", "--baseline", str(base), "--format", "json"],
                        capsys)
    body = json.loads(out)
    stablehlo = [f for c in body["clips"] for t in c["translations"] if t["label"] == "stablehlo"
                 for f in t["findings"] if f["severity"] != "info"]
    assert code == (1 if stablehlo else 0)
    assert scan([EXAMPLE, "--baseline", str(base)], capsys)[0] == 0  # the default columns: nothing new
    both = tmp_path / "both.json"
    scan([EXAMPLE, "--to", "default,stablehlo", "--write-baseline", str(both)], capsys)
    new = json.loads(both.read_text())["findings"]
    assert {e["fingerprint"] for e in old} <= {e["fingerprint"] for e in new}
    extra = [e for e in new if e["fingerprint"] not in {o["fingerprint"] for o in old}]
    assert extra and {e["target"] for e in extra} == {"stablehlo"}
    assert all(e["fingerprint"] == fingerprint(e["clip"], "stablehlo", e["code"]) for e in extra)


def test_inspect_route_takes_columns_by_name_and_group(client):
    data = clip_model(13, F16, 0, 6, np.float16).SerializeToString()
    r = client.post("/v1/models/inspect", content=data, params=[("target", "default"), ("target", "stablehlo")],
                    headers={"content-type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    assert [t["label"] for t in r.json()["targets"]] == [*DEFAULTS, "stablehlo"]
    assert r.json()["clips"][0]["translations"][3]["status"] == "exact"
    r = client.post("/v1/models/inspect", content=data, params={"target": "onnx,stablehlo:1"},
                    headers={"content-type": "application/octet-stream"})
    assert [t["label"] for t in r.json()["targets"]] == ["onnx", "stablehlo:1"]
    doc = client.get("/openapi.json").json()
    param = next(p for p in doc["paths"]["/v1/models/inspect"]["post"]["parameters"] if p["name"] == "target")
    assert all(d.version_example in param["description"] for d in registry.DIALECTS.values())


def test_lint_command_takes_columns_too(tmp_path, capsys):
    path = write(tmp_path / "m.onnx", clip_model(13, F16, 0, 6, np.float16))
    assert main(["lint", str(path), "--to", "onnx,stablehlo"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].split()[4:] == ["onnx", "stablehlo"]
