"""The dialect registry: every entry is a full dialect, and one registry line is all a new dialect needs."""

from __future__ import annotations

import io
import json
import sys
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, TypeAdapter

from clipbridge.dialects import registry
from clipbridge.dialects.kit.base import Dialect, Resolved, missing_interface
from clipbridge.dialects.kit.common import Emitted, Mode
from clipbridge.core.errors import ClipBridgeError, UnsupportedTarget
from clipbridge.core.meaning import Meaning

# One compact spec per registered dialect, and a version its targets accept.
EXAMPLES = {
    "onnx": ({"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}, "11"),
    "openvino": ({"dialect": "openvino", "element_type": "f32", "min": 0, "max": 6}, "opset13"),
    "directml": ({"dialect": "directml", "feature_level": "5_0", "desc": {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 4]}, "Min": 0, "Max": 6}}, "5_0"),
    "stablehlo": ({"dialect": "stablehlo", "element_type": "f32", "min": 0, "max": 6}, "1"),
    "webnn": ({"dialect": "webnn", "dataType": "float32", "minValue": 0, "maxValue": 6}, "1"),
    "tosa": ({"dialect": "tosa", "dtype": "fp32", "min_val": 0, "max_val": 6}, "1.0"),
    "tensorrt": ({"dialect": "tensorrt", "dtype": "float32", "alpha": 0, "beta": 6}, "10"),
    "tflite": ({"dialect": "tflite", "op": "RELU6", "dtype": "float32"}, "2.10"),
    "coreml": ({"dialect": "coreml", "opset": "iOS17", "dtype": "fp32", "alpha": 0, "beta": 6}, "iOS15"),
    "pytorch": ({"dialect": "pytorch", "op": "clamp", "dtype": "float32", "min": 0, "max": 6}, "2.13"),
}


NAMES = list(registry.DIALECTS)


def test_every_registered_dialect_has_an_example():
    assert set(EXAMPLES) == set(registry.DIALECTS), "add the new dialect's example to EXAMPLES"


@pytest.mark.parametrize("name", list(registry.DIALECTS))
def test_registered_dialect_provides_the_interface(name):
    d = registry.DIALECTS[name]
    assert isinstance(d, Dialect) and d.name == name and missing_interface(d) == []
    spec, version = EXAMPLES[name]
    parsed = TypeAdapter(registry.spec_union()).validate_python(spec)
    assert type(parsed) is d.spec_model
    src = d.resolve(parsed)
    assert isinstance(src, Resolved) and src.dialect == name and isinstance(src.meaning, Meaning)
    assert src.normalized["dialect"] == name
    newest = d.target(None)
    assert type(newest) is d.target_model and newest.dialect == name
    assert d.check_version(version)
    assert d.target(version).dialect == name
    row = d.capability()
    assert row["dialect"] == name and row["default_target"]["dialect"] == name and row["versions"]
    for v in row["versions"]:
        assert v["dtypes"] and v["rules"]
    e = d.emit(src.meaning, newest, Mode.PRESERVE, src.shape)  # its own meaning round-trips exactly
    assert isinstance(e, Emitted) and e.meaning is not None and e.spec["dialect"] == name


def test_engines_are_backends():
    from clipbridge.service.execute import BACKENDS
    for d in registry.DIALECTS.values():
        for engine in d.engines:
            assert engine in BACKENDS and registry.engine_owner(engine) is d


def test_unions_follow_the_registry():
    from clipbridge.service.specs import DialectName, Spec, TargetSpec
    assert TypeAdapter(DialectName).validate_python("openvino") == "openvino"
    assert TypeAdapter(TargetSpec).validate_python({"dialect": "onnx", "opset": 11}).opset == 11
    assert type(TypeAdapter(Spec).validate_python(EXAMPLES["onnx"][0])).__name__ == "OnnxSpec"


# --- A fake dialect registered with one line (monkeypatched): the product picks it up. ---

class FakeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dialect: Literal["fake"]


class FakeTarget(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dialect: Literal["fake"]
    version: str | None = None


def _fake_emit(src: Meaning, target: FakeTarget, mode: Mode, shape: list | None) -> Emitted:
    """An identity dialect: it computes exactly what the source computes."""
    return Emitted({"dialect": "fake", "version": target.version or "v2"}, src, artifacts={"fake": "clamp()"})


def _fake_version(v: str) -> str:
    if v not in ("v1", "v2"):
        raise ClipBridgeError(f"fake versions are v1, v2. Got: {v!r}")
    return v


FAKE = Dialect(
    name="fake", spec_model=FakeSpec, target_model=FakeTarget, resolve=lambda s: None, emit=_fake_emit,
    target=lambda v: FakeTarget(dialect="fake", version=v), check_version=_fake_version,
    capability=lambda: {"dialect": "fake", "default_target": {"dialect": "fake", "version": "v2"},
                        "versions": [{"version": "v2", "selects": "v1..v2", "dtypes": ["f32"], "ranks": "any",
                                      "rules": ["clamp"]}]},
    version_example="fake:v2")


@pytest.fixture(autouse=True)
def _unions_built_without_fakes():
    """Build the registry-derived unions and the API models before a fake dialect is registered: they are built
    once, on first use, so a first use while `fake` is registered would keep it for the rest of the session."""
    import clipbridge.api.models  # noqa: F401
    import clipbridge.service.specs as specs
    for name in specs._UNIONS:
        getattr(specs, name)


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setitem(registry.DIALECTS, "fake", FAKE)  # the one registry line
    return FAKE


def test_fake_dialect_is_a_full_dialect(fake):
    assert missing_interface(fake) == []


def test_translate_target_parsing_picks_it_up(fake):
    from clipbridge.dialects.onnx.spec import OnnxSpec
    from clipbridge.service.translate import default_targets, target_from, translate
    assert target_from("Fake") == FakeTarget(dialect="fake")
    assert [t.dialect for t in default_targets("onnx")] == [n for n in registry.default_names() if n != "onnx"]
    assert registry.default_names()[-1] == "fake"
    tr = translate(OnnxSpec.model_validate(EXAMPLES["onnx"][0]), ["fake"]).translations[0]
    assert tr.status == "exact" and tr.target == {"dialect": "fake", "version": "v2"}
    assert tr.artifacts == {"fake": "clamp()"}


def test_a_dialect_out_of_the_defaults_is_still_a_target(monkeypatch):
    from dataclasses import replace

    from clipbridge.service.translate import default_targets, target_from
    monkeypatch.setitem(registry.DIALECTS, "fake", replace(FAKE, in_defaults=False))
    assert "fake" not in [t.dialect for t in default_targets("onnx")] and "fake" not in registry.default_names()
    assert target_from("fake") == FakeTarget(dialect="fake")


def test_unknown_name_still_refused(fake):
    from clipbridge.service.translate import target_from
    with pytest.raises(UnsupportedTarget, match="fake"):  # did-you-mean lists the registered names
        target_from("faek")


def test_dialects_route_and_command_pick_it_up(fake, monkeypatch, capsys):
    from clipbridge.api.routes import dialects
    from clipbridge.cli.main import main
    assert [d["dialect"] for d in dialects()["dialects"]] == [*NAMES, "fake"]
    assert main(["dialects"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["fake", "v2", "v1..v2", "any", "f32"] in rows  # its own row in the 100-column table (issue 37)


def test_cli_to_parser_picks_it_up(fake, monkeypatch, capsys):
    from clipbridge.cli.main import _target, main
    assert _target("fake:v1") == FakeTarget(dialect="fake", version="v1")
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(EXAMPLES["onnx"][0])))
    assert main(["translate", "--target", "fake:v1", "--target", "openvino"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [t["target"]["dialect"] for t in body["translations"]] == ["fake", "openvino"]
    assert body["translations"][0]["target"]["version"] == "v1"


def test_scan_target_text_checks_its_version(fake):
    from clipbridge.scan.report import target_from_text
    assert target_from_text("fake:v1") == FakeTarget(dialect="fake", version="v1")
    with pytest.raises(UnsupportedTarget, match="fake versions are v1, v2"):
        target_from_text("fake:v9")
    with pytest.raises(UnsupportedTarget, match="fake:v2"):  # the examples name every registered dialect
        target_from_text("nope")
