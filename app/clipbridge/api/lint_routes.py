"""Routes for /v1/probe and /v1/bundle: thin, the work is in app/clipbridge/lint/probe.py and app/clipbridge/lint/bundle.py."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request, Response

from clipbridge.api.execute_routes import PROBLEMS, slots
from clipbridge.api.lint_models import ProbeRequest, ProbeResponse
from clipbridge.api.strict import StrictJSONRoute
from clipbridge.dialects.kit.common import Mode
from clipbridge.lint import bundle as bundle_mod
from clipbridge.lint.probe import probe as make_probe

router = APIRouter(route_class=StrictJSONRoute)
ZIP_DOC: dict[int | str, dict[str, Any]] = {
    200: {"description": "A zip: spec.json, manifest.json, inputs.npy, expected/<semantics>.npy, an ONNX model, "
                         "an OpenVINO IR, a DxDispatch model of the DirectML operator, run_bundle.py, README.md",
          "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}}}


@router.post("/v1/probe", response_model=ProbeResponse, responses=PROBLEMS, tags=["lint"])
def probe(body: ProbeRequest, request: Request) -> Response:
    """The inputs that matter for this clip (bounds and neighbours, extremes, +-0, +-inf, NaN, subnormals, the
    float16 overflow threshold, integers past 2^53, ScaleBias pre-images) and each dialect's expected output."""
    def work() -> str:
        p = make_probe(body.spec, body.targets, Mode(body.mode))  # type: ignore[arg-type]
        return json.dumps({**p.to_json(), "precision": body.precision}, allow_nan=False, separators=(",", ":"))
    return Response(slots(request).run(work), media_type="application/json")


NPZ_DOC: dict[int | str, dict[str, Any]] = {
    200: {"description": "An .npz (a zip of .npy files): inputs.npy and expected_<semantics>.npy (bfloat16 as "
                         "uint16 bits); np.load reads it",
          "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}}


@router.post("/v1/probe.npz", responses={**NPZ_DOC, **PROBLEMS}, tags=["lint"], response_class=Response)
def probe_npz(body: ProbeRequest, request: Request) -> Response:
    """The same probes as .npy arrays (in one .npz): for tooling that feeds them to a device."""
    def work() -> bytes:
        p = make_probe(body.spec, body.targets, Mode(body.mode))  # type: ignore[arg-type]
        return bundle_mod.npz(p)
    return Response(slots(request).run(work), media_type="application/octet-stream",
                    headers={"Content-Disposition": 'attachment; filename="probes.npz"'})


@router.post("/v1/bundle", responses={**ZIP_DOC, **PROBLEMS}, tags=["lint"], response_class=Response)
def bundle(body: ProbeRequest, request: Request) -> Response:
    """A repro bundle (zip) whose run_bundle.py checks the expected outputs on the engines installed."""
    def work() -> bytes:
        source = body.spec.model_dump(mode="json", exclude_none=True)
        return bundle_mod.build(body.spec, source, body.targets, Mode(body.mode),  # type: ignore[arg-type]
                                precision=body.precision)
    data = slots(request).run(work)
    return Response(data, media_type="application/zip",
                    headers={"Content-Disposition": 'attachment; filename="clipbridge-bundle.zip"'})
