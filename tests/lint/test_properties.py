"""Properties over random specs: every report format stays valid (SARIF against the 2.1.0 schema, JUnit
parses with one failure element per failing finding, one GitHub command per line), and every probe visits
each dialect's effective bounds. CLIPBRIDGE_LINT_EXAMPLES raises the budget (default 30)."""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from clipbridge.dialects.kit.common import Mode
from clipbridge.core.errors import ClipBridgeError
from clipbridge.lint.probe import probe
from clipbridge.lint.report import apply_filters, from_translate
from clipbridge.lint.view import view
from clipbridge.reports import formats, sarif
from clipbridge.scan.report import target_from_text
from clipbridge.service.specs import Spec
from clipbridge.service.translate import translate

EXAMPLES = int(os.environ.get("CLIPBRIDGE_LINT_EXAMPLES", "30"))
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)
INT = {"INT8": (-128, 127), "UINT8": (0, 255), "INT32": (-2**31, 2**31 - 1), "INT64": (-2**63, 2**63 - 1)}
TARGETS = ["onnx:6", "onnx:11", "onnx:13", "openvino", "directml:2_1", "directml:5_0"]


@st.composite
def specs(draw: st.DrawFn) -> dict:
    elem = draw(st.sampled_from(["FLOAT", "FLOAT16", *INT]))
    if elem in INT:
        lo, hi = INT[elem]
        bound = st.integers(lo, hi).map(lambda v: v if abs(v) < 2**53 else str(v))
    else:
        bound = st.one_of(st.floats(-6e4, 6e4, allow_nan=False, width=16 if elem == "FLOAT16" else 32),
                          st.sampled_from(["nan", "inf", "-inf"]))
    spec = {"dialect": "onnx", "opset": 13, "elem_type": elem}
    for side in ("min", "max"):
        if draw(st.booleans()) or side == "min":
            spec[side] = draw(bound)
    return spec


SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(spec=specs(), target=st.sampled_from(TARGETS), mode=st.sampled_from(list(Mode)),
       fail_on=st.sampled_from(["info", "warning", "error"]))
def test_every_format_stays_valid(spec, target, mode, fail_on):
    try:
        body = translate(TypeAdapter(Spec).validate_python(spec), [target_from_text(target)], mode).to_json()
    except ClipBridgeError:
        return  # a spec ONNX itself refuses: nothing to report
    body = json.loads(json.dumps(body, allow_nan=False))  # what the CLI reads: the wire form
    report = apply_filters(from_translate(body, "spec.json", [target]), [], [], fail_on, None)
    log = sarif.log([view(report)])
    VALIDATOR.validate(log)
    assert len(log["runs"][0]["results"]) == sum(len(t["findings"]) for t in body["translations"])
    root = ET.fromstring(formats.render(view(report), "junit"))
    assert len(root.findall(".//failure")) == len(report.failing())
    lines = formats.render(view(report), "github").splitlines()
    assert len(lines) == len(report.items) + 1 and all(ln.startswith("::") for ln in lines)


@SETTINGS
@given(spec=specs())
def test_probes_visit_every_effective_bound(spec):
    try:
        p = probe(TypeAdapter(Spec).validate_python(spec), ["onnx", "openvino", "directml:5_0"])
    except ClipBridgeError:
        return
    values = {repr(float(v)) for v in p.inputs} if p.dtype.is_float else {int(v) for v in p.inputs}
    for s in p.semantics:
        if s.sem is None:
            continue
        for b in (s.sem.meaning.lower, s.sem.meaning.upper):
            if b is None or (isinstance(b.value, float) and math.isnan(b.value)):
                continue
            key = repr(float(b.value)) if p.dtype.is_float else int(b.value)
            assert key in values, (s.label, b.value)
        assert s.outputs is None or len(s.outputs) == len(p.inputs)
