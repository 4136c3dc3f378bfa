"""Byte-identity check for POST /v1/translate: record every response of a fixed request set, compare later.

A speed change to the translate path must not move one byte of what clients get. The request set: every
dialect's named examples, the registry test's example per dialect and a few hand cases (crossed bounds, NaN,
16-bit and integer rounding, one-sided), each into the default targets, into all ten dialects and into explicit
target versions, in both modes, with artifacts and with include=[]; plus requests that must fail (4xx).

    python bench/translate_identical.py record /tmp/before.json   # on the commit before the change
    python bench/translate_identical.py compare /tmp/before.json  # after it: exit 1 on any difference
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repo's tests package

from fastapi.testclient import TestClient  # noqa: E402

from clipbridge.dialects import registry
from clipbridge.main import create_app
from tests.api.test_all_pairs import HAND
from tests.dialects.test_registry import EXAMPLES

EXTRA = {
    "onnx-bench": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "shape": [1, 3, 224, 224], "min": 0,
                   "max": 6 + 3 / 1048576},
    "onnx-bf16": {"dialect": "onnx", "opset": 22, "elem_type": "BFLOAT16", "min": -0.3, "max": 1e30},
    "onnx-nan-max": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": "nan"},
    "onnx-inf": {"dialect": "onnx", "opset": 13, "elem_type": "DOUBLE", "min": "-inf", "max": "inf"},
    "onnx-uint8": {"dialect": "onnx", "opset": 13, "elem_type": "UINT8", "min": 3, "max": 250},
    "onnx-no-bounds": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT"},
    "webnn-f16": {"dialect": "webnn", "dataType": "float16", "minValue": -65504, "maxValue": 0.1},
    "pytorch-int-float": {"dialect": "pytorch", "op": "clamp", "dtype": "int32", "min": 0.5, "max": 6.5},
    "tosa-int8": {"dialect": "tosa", "dtype": "int8", "min_val": -5, "max_val": 100},
    "onnx-tiny": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 1e-07, "max": 0.00005},
    "onnx-subnormal": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT16", "min": -1e-40, "max": 3e-8},
}
BAD = [
    {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}, "targets": ["nope"]},
    {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6},
     "targets": [{"dialect": "openvino", "version": "opset999"}]},
    {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}, "include": ["x"]},
    {"source": {"dialect": "onnx", "opset": 13, "elem_type": "NOPE"}},
    {"source": {"dialect": "tosa", "dtype": "fp32", "min_val": 6, "max_val": 0}},
    {"source": {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "min": 0, "max": 6}, "mode": "fast"},
]


def sources() -> dict[str, dict]:
    out: dict[str, dict] = {}
    for name, d in registry.DIALECTS.items():
        for ex_name, spec in d.examples.items():
            out[f"{name}:{ex_name}"] = spec
        out[f"{name}:registry-example"] = EXAMPLES[name][0]
    return {**out, **HAND, **EXTRA}


def requests() -> dict[str, dict]:
    versioned = [registry.DIALECTS[name].target(version).model_dump(mode="json", exclude_none=True)
                 for name, (_, version) in EXAMPLES.items()]
    out: dict[str, dict] = {}
    for sid, spec in sources().items():
        for tname, targets in (("default", None), ("all", list(registry.names())), ("versions", versioned)):
            for mode in ("preserve", "literal"):
                for inc in ("artifacts", "none"):
                    req: dict[str, Any] = {"source": spec, "mode": mode}
                    if targets is not None:
                        req["targets"] = targets
                    if inc == "none":
                        req["include"] = []
                    out[f"{sid}|{tname}|{mode}|{inc}"] = req
    for i, req in enumerate(BAD):
        out[f"bad-{i}"] = req
    return out


def responses() -> dict[str, str]:
    """Each request's status, content type and body, as one string (the body verbatim)."""
    out = {}
    with TestClient(create_app()) as client:
        for rid, req in requests().items():
            r = client.post("/v1/translate", json=req)
            out[rid] = f"{r.status_code} {r.headers.get('content-type')}\n{r.text}"
    return out


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("record", "compare"):
        raise SystemExit(__doc__)
    got = responses()
    if sys.argv[1] == "record":
        with open(sys.argv[2], "w") as f:
            json.dump(got, f)
        digest = hashlib.sha256(json.dumps(got, sort_keys=True).encode()).hexdigest()[:16]
        print(f"recorded {len(got)} responses ({digest}) to {sys.argv[2]}")
        return
    with open(sys.argv[2]) as f:
        want = json.load(f)
    bad = [rid for rid in want if got.get(rid) != want[rid]]
    missing = set(want) ^ set(got)
    for rid in bad[:10]:
        print(f"DIFFERS: {rid}\n  before: {want[rid][:300]}\n  after:  {str(got.get(rid))[:300]}")
    print(f"{len(want) - len(bad)}/{len(want)} identical; {len(missing)} request ids differ between the sets")
    if bad or missing:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
