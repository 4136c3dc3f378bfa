"""Schemathesis against the app's own /openapi.json, in process (ASGI): no 5xx, every response valid against
the schema, every status declared, every content type declared.

Deterministic: a fixed seed, no example database, no shrinking (a failure is reported with the query and body
of the case that hit it). Every operation runs in positive mode (bodies valid against the schema) and negative
mode (bodies that break it). Random-but-valid JSON rarely makes a spec the service can resolve (an opset
with an unknown elem_type is 422), so positive cases of translate/execute/compare/execute.npy get, three times
in four, a resolvable spec and a matching tensor drawn here, while every other field stays schemathesis's: that is what
gets 200 responses, whose bodies the schema check then covers. At least 1000 cases run in all (asserted).
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.core.parameters import ParameterLocation
from schemathesis.transport.serialization import Binary
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis.checks import CHECKS as REGISTERED
from schemathesis.checks import load_all_checks, not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (content_type_conformance, response_schema_conformance,
                                               status_code_conformance)

from clipbridge.main import create_app
from clipbridge.core.settings import Settings

SEED = 20261122
load_all_checks()
CHECKS = list(REGISTERED.get_all())  # every check schemathesis has, none left out
# Cases per operation and mode (operations not listed get DEFAULT). GETs without parameters have one case.
BUDGET = {
    ("POST /v1/translate", "positive"): 250, ("POST /v1/translate", "negative"): 100,
    ("POST /v1/execute", "positive"): 200, ("POST /v1/execute", "negative"): 80,
    ("POST /v1/compare", "positive"): 120, ("POST /v1/compare", "negative"): 80,
}
DEFAULT = {"positive": 60, "negative": 40}
MIN_TOTAL = 1000
SKIP = {"GET /"}  # the inspector's page (HTML); static files are not in the schema

# application/x-npy bodies are bytes: send schemathesis's binary strings as they are.
schemathesis.serializer.alias("application/x-npy", "application/octet-stream")

# Schema-valid is not always meaningful: a spec can pass the JSON Schema and break its dialect's rules (422), a
# binary body can be any bytes but must be a model or a .npy (400), a tensor can pass the element limit (413),
# an execution can find every slot taken (503), a request without the configured key is 401.
# positive_data_acceptance accepts exactly those, each declared in the operation's responses (status_code_conformance
# fails an undeclared one: a 401 without a key set); anything else (404, 405, 415, 5xx) fails it.
CONFIG = SchemathesisConfig.from_dict({"checks": {"positive_data_acceptance": {
    "expected-statuses": ["2xx", "400", "401", "413", "422", "503"]}}})
APP = create_app(Settings())
SCHEMA = schemathesis.openapi.from_asgi("/openapi.json", APP, config=CONFIG)
OPERATIONS = sorted((op.ok() for op in SCHEMA.get_all_operations()), key=lambda op: op.label)
RUNS = [(op, mode) for op in OPERATIONS if op.label not in SKIP
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)]
TOTAL: dict[str, int] = {}

# --- resolvable specs with a tensor of their dtype ------------------------------------------------------------

INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1),
             "int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1),
             "uint64": (0, 2**64 - 1)}
# (dtype, onnx elem_type, openvino element_type, directml DataType or None)
DTYPES = [("float32", "FLOAT", "f32", "FLOAT32"), ("float16", "FLOAT16", "f16", "FLOAT16"),
          ("float64", "DOUBLE", "f64", None), ("bfloat16", "BFLOAT16", "bf16", None),
          ("int8", "INT8", "i8", "INT8"), ("uint8", "UINT8", "u8", "UINT8"), ("int32", "INT32", "i32", "INT32"),
          ("int64", "INT64", "i64", "INT64"), ("uint64", "UINT64", "u64", "UINT64"),
          ("uint16", "UINT16", "u16", "UINT16")]
SPECIAL = st.sampled_from(["nan", "inf", "-inf", "0x1.8p+1", "9223372036854775807", "-0.0"])


def bound(dtype: str) -> st.SearchStrategy[Any]:
    if dtype in INT_RANGE:
        lo, hi = INT_RANGE[dtype]
        return st.one_of(st.integers(lo, hi), st.integers(lo, hi).map(str), st.floats(-300, 300), SPECIAL)
    return st.one_of(st.floats(allow_nan=False, allow_infinity=False, width=32), st.integers(-1000, 1000),
                     SPECIAL)


def tensor_value(dtype: str) -> st.SearchStrategy[Any]:
    if dtype in INT_RANGE:
        lo, hi = INT_RANGE[dtype]
        return st.integers(lo, hi) | st.integers(lo, hi).map(str)
    return st.floats(width=32, allow_nan=False, allow_infinity=False) | st.sampled_from(["nan", "inf", "-inf"])


@st.composite
def spec_and_input(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    dtype, onnx_t, ov_t, dml_t = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=4))
    dialect = draw(st.sampled_from(["onnx", "openvino", "directml", "stablehlo"] if dml_t
                                   else ["onnx", "openvino", "stablehlo"]))
    lo, hi = draw(bound(dtype)), draw(bound(dtype))
    if dialect == "onnx":
        # Only opsets whose Clip takes the dtype: integers from Clip-12, bfloat16 from Clip-13.
        opsets = [13, 21] if dtype == "bfloat16" else [12, 13, 21] if dtype in INT_RANGE else [1, 6, 11, 12, 13, 21]
        spec: dict[str, Any] = {"dialect": "onnx", "opset": draw(st.sampled_from(opsets)), "elem_type": onnx_t}
        if draw(st.booleans()):
            spec["shape"] = shape
        for key, value in (("min", lo), ("max", hi)):
            if draw(st.integers(0, 3)):
                spec[key] = value
    elif dialect == "stablehlo":  # StableHLO spells unsigned types uiN where OpenVINO writes uN
        if dtype in INT_RANGE:  # its integer bounds are values of the type (a fraction is a 422 by design)
            lo, hi = draw(st.integers(*INT_RANGE[dtype])), draw(st.integers(*INT_RANGE[dtype]))
        spec = {"dialect": "stablehlo", "element_type": "ui" + ov_t[1:] if ov_t.startswith("u") else ov_t,
                "min": lo, "max": hi}
        if draw(st.booleans()):
            spec["shape"] = shape
    elif dialect == "openvino":
        spec = {"dialect": "openvino", "version": draw(st.sampled_from(["opset1", "opset13", "opset16"])),
                "element_type": ov_t, "min": lo, "max": hi}
        if draw(st.booleans()):
            spec["shape"] = shape
    else:
        fl = draw(st.sampled_from(["5_0", "6_4"] if dtype in ("int64", "uint64") else ["2_1", "3_0", "5_0", "6_4"]))
        shape = [1] * (4 - len(shape)) + shape if fl == "2_1" else shape
        t = {"DataType": dml_t, "Sizes": shape}
        spec = {"dialect": "directml", "feature_level": fl, "desc": {"InputTensor": t, "OutputTensor": t,
                                                                     "Min": lo, "Max": hi}}
        if draw(st.integers(0, 4)) == 0:
            spec["desc"]["ScaleBias"] = {"Scale": draw(st.sampled_from([0.5, 2, -1])),
                                         "Bias": draw(bound("float32"))}
    count = 1
    for d in shape:
        count *= d
    data = draw(st.lists(tensor_value(dtype), min_size=count, max_size=count))
    return spec, {"dtype": dtype, "shape": shape, "data": data}


REPAIRED = ("POST /v1/translate", "POST /v1/execute", "POST /v1/compare", "POST /v1/execute.npy")


def npy_of(tensor: dict[str, Any]) -> bytes:
    from clipbridge.core.tensors import parse_json_tensor
    _, x = parse_json_tensor(tensor["dtype"], tensor["shape"], tensor["data"], 10**6)
    if tensor["dtype"] == "bfloat16":
        x = x.view("V2")  # ml_dtypes' bfloat16 travels as raw 2-byte voids
    buf = io.BytesIO()
    np.save(buf, x, allow_pickle=False)
    return buf.getvalue()


def _dialects_of(body: dict[str, Any]) -> list[str]:
    """The dialect names whose semantics a repaired execute/compare body runs (its target(s), else its spec's)."""
    named = body.get("targets") if isinstance(body.get("targets"), list) else [body.get("target")]
    names = [t if isinstance(t, str) else t.get("dialect") if isinstance(t, dict) else None for t in named]
    return [n.partition(":")[0] for n in names if isinstance(n, str)] or [body["spec"]["dialect"]]


def _with_a_taken_reading(body: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """A random `reading` is a 400 unless the body's dialects take it (tests/api covers that refusal): a repaired
    case gets one of the readings they take, or none where they take none."""
    from clipbridge.service.execute import readings_of
    taken = sorted({r for n in _dialects_of(body) for r in readings_of(n.strip().lower())})
    if body["reading"] not in taken:
        body = {k: v for k, v in body.items() if k != "reading"}
        if taken:
            body["reading"] = data.draw(st.sampled_from(taken), label="reading")
    return body


def repaired(case: Any, data: st.DataObject) -> Any:
    """Give a positive case a resolvable spec (and a tensor of its dtype), three times in four."""
    label = case.operation.label
    if label not in REPAIRED or data.draw(st.integers(0, 3), label="repair") == 0:
        return case
    spec, tensor = data.draw(spec_and_input(), label="spec")
    if label == "POST /v1/execute.npy":
        case.query = {**(case.query or {}), "request": json.dumps({"spec": spec})}
        # Binary: schemathesis's wrapper for bytes that are a schema-valid `format: binary` string. Set without
        # its change tracking and re-recorded as validated: schemathesis cannot validate replaced binary bodies
        # and would count this valid .npy as negative data (then flag its 200 as "schema-violating accepted").
        body = Binary(npy_of(tensor))
        object.__setattr__(case, "body", body)
        case._meta.update_validated_hash(ParameterLocation.BODY, case._hash_container(body))
        return case
    if not isinstance(case.body, dict):
        return case
    body = dict(case.body)
    if label == "POST /v1/translate":
        body["spec"] = spec
    else:
        body["spec"], body["input"] = spec, tensor
        if body.get("backend") in ("cupy", "jax"):  # no GPU here; jax runs only stablehlo (not drawn above)
            body["backend"] = "auto"
        if data.draw(st.booleans(), label="own-semantics"):
            # Half of the repaired cases run under the spec's own dialect on the default backend, so that the
            # share reaching the kernels does not hang on how often random semantics/backend pairs happen to fit.
            for key in ("target", "targets", "backend", "reading"):  # reading: DirectML/WebNN's, elsewhere a 422
                body.pop(key, None)
        sem = body.get("target")
        if isinstance(sem, dict) and sem.get("dialect") == "stablehlo":
            body["target"] = "stablehlo"  # its only version field is a free string: random text is a 422
        if "reading" in body:
            body = _with_a_taken_reading(body, data)
    case.body = body
    return case


def describe(case: Any, exc: BaseException) -> str:
    body = case.body.data[:200] if isinstance(case.body, Binary) else \
        case.body if not isinstance(case.body, (bytes, bytearray)) else bytes(case.body[:200])
    try:
        shown = json.dumps(body)[:1500]
    except (TypeError, ValueError):
        shown = repr(body)[:1500]
    return f"{case.operation.label} query={case.query} body={shown}\n{str(exc)[:2000]}"


@pytest.mark.parametrize("op,mode", RUNS, ids=[f"{op.label}-{mode.value}" for op, mode in RUNS])
def test_schemathesis(op, mode):
    budget = BUDGET.get((op.label, mode.value), DEFAULT[mode.value])
    failures: list[str] = []
    statuses: dict[int, int] = {}

    @seed(SEED)
    @settings(max_examples=budget, derandomize=False, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(case=op.as_strategy(generation_mode=mode), data=st.data())
    def run(case: Any, data: st.DataObject) -> None:
        if mode is GenerationMode.POSITIVE:
            case = repaired(case, data)
        try:
            response = case.call_and_validate(checks=CHECKS)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
        except Exception as exc:  # a failed check (a FailureGroup) or a transport error
            if len(failures) < 20:
                failures.append(describe(case, exc))

    try:
        run()
    except Exception as exc:  # an operation whose every input is filtered out (GETs in negative mode)
        if "Unable to satisfy assumptions" not in str(exc) or mode is GenerationMode.POSITIVE:
            raise
    n = sum(statuses.values()) + len(failures)
    TOTAL[f"{op.label}-{mode.value}"] = n
    assert not failures, f"{len(failures)} failing cases (first shown):\n\n" + "\n\n".join(failures[:5])
    assert statuses.get(500, 0) == 0
    if op.method.upper() == "POST":
        assert n >= budget * 0.9, (n, budget)
    if op.label in REPAIRED and mode is GenerationMode.POSITIVE:
        assert statuses.get(200, 0) >= budget // 5, statuses  # the repaired specs do reach the service's core


def test_at_least_1000_cases_in_all():
    planned = sum(BUDGET.get((op.label, mode.value), DEFAULT[mode.value]) for op, mode in RUNS
                  if op.method.upper() == "POST")
    assert planned >= MIN_TOTAL
    if len(TOTAL) == len(RUNS):  # the whole module ran (not a -k selection)
        assert sum(TOTAL.values()) >= MIN_TOTAL, TOTAL


def test_with_the_api_key_every_v1_operation_declares_and_answers_401():
    """With CLIPBRIDGE_API_KEY set the schema declares the key and a 401 on every /v1 operation, and schemathesis
    (sending no key) gets exactly those 401s, conforming; with the key, the checks pass too."""
    keyed = create_app(Settings(api_key="s3cret-key-0123456789"))
    schema = schemathesis.openapi.from_asgi("/openapi.json", keyed, config=CONFIG)
    raw = keyed.openapi()
    assert raw["components"]["securitySchemes"]["ApiKey"] == {"type": "apiKey", "in": "header", "name": "X-API-Key"}
    n = 0
    for op in (o.ok() for o in schema.get_all_operations()):
        if op.label in SKIP:
            continue
        protected = op.path.startswith("/v1")
        assert ("401" in raw["paths"][op.path][op.method.lower()]["responses"]) == protected, op.label

        @seed(SEED)
        @settings(max_examples=8, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck))
        @given(case=op.as_strategy())
        def run(case: Any) -> None:
            nonlocal n
            n += 1
            r = case.call_and_validate(checks=CHECKS)
            assert (r.status_code == 401) == protected, (op.label, r.status_code)
            case.call_and_validate(checks=CHECKS, headers={"X-API-Key": "s3cret-key-0123456789"})

        run()
    assert n >= 20
