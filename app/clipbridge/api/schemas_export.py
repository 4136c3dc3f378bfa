"""JSON Schemas of every request and response body, exported from the pydantic models into schemas/."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, TypeAdapter

from clipbridge.api.models import (CompareRequest, CompareResponse, DialectsResponse, ExecuteOptions, ExecuteRequest,
                            ExecuteResponse, Health, Problem, ScanResponse, TranslateRequest,
                            TranslateResponse)
from clipbridge.api.lint_models import ProbeRequest, ProbeResponse
from clipbridge.chain.models import ChainResponse
from clipbridge.diff.models import DiffResponse
from clipbridge.fix.models import FixResponse
from clipbridge.fleet.models import FleetRecord
from clipbridge.service.specs import Spec

MODELS: dict[str, object] = {
    "TranslateRequest": TranslateRequest,
    "TranslateResponse": TranslateResponse,
    "DialectsResponse": DialectsResponse,
    "Health": Health,
    "Problem": Problem,
    "ExecuteRequest": ExecuteRequest,
    "ExecuteOptions": ExecuteOptions,
    "ExecuteResponse": ExecuteResponse,
    "CompareRequest": CompareRequest,
    "CompareResponse": CompareResponse,
    "ScanResponse": ScanResponse,
    "Spec": Spec,
    "ProbeRequest": ProbeRequest,
    "ProbeResponse": ProbeResponse,
    "DiffResponse": DiffResponse,
    "FixResponse": FixResponse,
    "ChainResponse": ChainResponse,
    "FleetRecord": FleetRecord,  # a line of `clipbridge fleet`'s results.jsonl (no route answers it)
}


def schemas() -> dict[str, dict]:
    out = {}
    for name, model in MODELS.items():
        if isinstance(model, type) and issubclass(model, BaseModel):
            out[name] = model.model_json_schema()
        else:
            out[name] = TypeAdapter(model).json_schema()
    return out


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas().items():
        path = directory / f"{name}.json"
        path.write_text(render(schema))
        written.append(path)
    return written
