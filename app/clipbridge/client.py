"""A typed Python client of the clipbridge HTTP API (httpx), answering with the API's own pydantic models.

    from clipbridge.client import Client
    with Client("http://127.0.0.1:8000") as cb:
        r = cb.translate({"dialect": "openvino", "element_type": "i8", "min": 0.5, "max": 100.7},
                         targets=[{"dialect": "directml", "feature_level": "2_1"}], mode="literal")
        print(r.translations[0].status, r.translations[0].findings[0].witness)

Requests are validated client-side with the same models the server uses (a bad spec fails before it is
sent, as pydantic.ValidationError); a problem+json answer raises ApiError carrying the Problem.

A fixed model is a file:

    with Client("http://127.0.0.1:8000") as cb:
        fixed = cb.fix("model.onnx", reference="onnxruntime", target="openvino")
        print(fixed.verdict, [r.rule for r in fixed.report.rules_applied])
        fixed.save("model.fixed-for-openvino.onnx")

A model given as a path goes with the external data files beside it that it names (torch's MODEL.onnx.data), each
as a form part 'data' named by its location (issue 46), as `clipbridge fix MODEL` reads them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

try:
    import httpx
except ImportError as exc:  # a core dependency since issue 37; a trimmed environment may still lack it
    raise ImportError("clipbridge.client needs httpx, a core dependency of clipbridge: reinstall it (pip install -e . "
                      "from a checkout, or pip install httpx)") from exc
from pydantic import BaseModel

from clipbridge.fix.models import FixResponse
from clipbridge.scan.external import files_of
from clipbridge.api.lint_models import ProbeRequest, ProbeResponse
from clipbridge.api.models import (CompareRequest, CompareResponse, DialectsResponse, ExecuteRequest, ExecuteResponse,
                            Health, Problem, ScanResponse, TranslateRequest, TranslateResponse)

M = TypeVar("M", bound=BaseModel)
Mode = Literal["preserve", "literal"]


class ApiError(Exception):
    """The service answered an error (4xx/5xx) as application/problem+json."""

    def __init__(self, status: int, problem: Problem) -> None:
        super().__init__(f"{status} {problem.title}: {problem.detail}")
        self.status = status
        self.problem = problem


@dataclass(frozen=True)
class FixedModel:
    """POST /v1/models/fix's answer: the written model's bytes, the proof's verdict, and the whole report
    (None when it was asked for the model only, `report=False`)."""

    model: bytes
    verdict: str
    report: FixResponse | None

    def save(self, path: str | Path) -> Path:
        """Write the model to `path` (an .onnx file); returns the path."""
        out = Path(path)
        out.write_bytes(self.model)
        return out


class Client:
    """Sync client; pass `http` to reuse an httpx.Client (or starlette's TestClient, for an in-process app)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None,
                 timeout: float = 60.0, http: httpx.Client | None = None) -> None:
        headers = {"X-API-Key": api_key} if api_key else {}
        self._own = http is None
        self.http = http if http is not None else httpx.Client(base_url=base_url, timeout=timeout, headers=headers)
        if http is not None and api_key:
            self.http.headers["X-API-Key"] = api_key

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._own:
            self.http.close()

    # --- plumbing -----------------------------------------------------------------------------------------

    def _check(self, r: httpx.Response) -> httpx.Response:
        if r.status_code >= 400:
            try:
                problem = Problem.model_validate(r.json())
            except ValueError:  # not problem+json (a proxy's HTML page): still an ApiError, with the text
                problem = Problem(title=r.reason_phrase or "Error", status=r.status_code, detail=r.text[:500])
            raise ApiError(r.status_code, problem)
        return r

    def _post(self, path: str, body: BaseModel, model: type[M], params: Any = None) -> M:
        r = self._check(self.http.post(path, json=body.model_dump(mode="json", exclude_unset=True), params=params))
        return model.model_validate(r.json())

    # --- endpoints ----------------------------------------------------------------------------------------

    def health(self) -> Health:
        return Health.model_validate(self._check(self.http.get("/healthz")).json())

    def dialects(self) -> DialectsResponse:
        return DialectsResponse.model_validate(self._check(self.http.get("/v1/dialects")).json())

    def translate(self, spec: Any, targets: list[Any] | None = None, mode: Mode = "preserve",
                  artifacts: bool = True) -> TranslateResponse:
        """artifacts=False sends include=[]: the same answer with empty artifacts, several times cheaper (left
        unset otherwise, so the request stays what servers before `include` accept)."""
        extra = {} if artifacts else {"include": []}
        body = TranslateRequest.model_validate({"spec": spec, "targets": targets, "mode": mode, **extra})
        return self._post("/v1/translate", body, TranslateResponse)

    def execute(self, spec: Any, input: dict[str, Any], **options: Any) -> ExecuteResponse:
        """options: target, mode, backend, reading (as ExecuteRequest)."""
        body = ExecuteRequest.model_validate({"spec": spec, "input": input, **options})
        return self._post("/v1/execute", body, ExecuteResponse)

    def compare(self, spec: Any, input: dict[str, Any], **options: Any) -> CompareResponse:
        body = CompareRequest.model_validate({"spec": spec, "input": input, **options})
        return self._post("/v1/compare", body, CompareResponse)

    def probe(self, spec: Any, targets: list[Any] | None = None, mode: Mode = "literal") -> ProbeResponse:
        body = ProbeRequest.model_validate({"spec": spec, "targets": targets, "mode": mode})
        return self._post("/v1/probe", body, ProbeResponse)

    def bundle(self, spec: Any, targets: list[Any] | None = None, mode: Mode = "literal") -> bytes:
        """The repro zip's bytes."""
        body = ProbeRequest.model_validate({"spec": spec, "targets": targets, "mode": mode})
        return self._check(self.http.post("/v1/bundle", json=body.model_dump(mode="json", exclude_unset=True))).content

    def inspect(self, model: bytes | str | Path, weights: bytes | str | Path | None = None,
                targets: list[str] | None = None, mode: Mode = "preserve", select: list[str] | None = None,
                ignore: list[str] | None = None) -> ScanResponse:
        """Scan an .onnx model or an IR .xml (+ .bin); select/ignore filter the finding codes."""
        params: list[tuple[str, str]] = [("mode", mode)]
        params += [("target", t) for t in targets or []] + [("select", c) for c in select or []]
        params += [("ignore", c) for c in ignore or []]
        files = {"model": ("model", _bytes(model))}
        if weights is not None:
            files["weights"] = ("weights", _bytes(weights))
        r = self._check(self.http.post("/v1/models/inspect", params=params, files=files))
        return ScanResponse.model_validate(r.json())

    def rewrite(self, model: bytes | str | Path, target: str, opset: int | None = None) -> bytes:
        params: dict[str, Any] = {"target": target, **({"opset": opset} if opset is not None else {})}
        r = self._check(self.http.post("/v1/models/rewrite", params=params,
                                       files={"model": ("model.onnx", _bytes(model))}))
        return r.content


    def fix(self, model: bytes | str | Path, reference: str, target: str, precision: str = "model",
            inputs: bytes | str | Path | None = None, report: bool = True) -> FixedModel:
        """The model rewritten so that `target` computes what `reference` computes, proved by a diff
        (`inputs`: an optional .npz keyed by graph input name). report=False asks for the model file alone
        (Accept: application/octet-stream: no base64, no report; the verdict comes in a header)."""
        params = {"reference": reference, "target": target, "precision": precision}
        files = _model_parts(model)
        if inputs is not None:
            files.append(("inputs", ("inputs.npz", _bytes(inputs))))
        accept = "application/json" if report else "application/octet-stream"
        r = self._check(self.http.post("/v1/models/fix", params=params, files=files, headers={"Accept": accept}))
        if not report:
            return FixedModel(r.content, r.headers["X-Clipbridge-Verdict"], None)
        body = FixResponse.model_validate(r.json())
        return FixedModel(base64.b64decode(body.model.onnx_base64), body.verdict, body)


def _model_parts(model: bytes | str | Path) -> list[tuple[str, tuple[str, bytes]]]:
    """'model', and for a path each external data file beside it that the model names, as a 'data' part whose
    filename is its location (a file that cannot be named so is left out: the service then says what is missing)."""
    if isinstance(model, bytes):
        return [("model", ("model.onnx", model))]
    path = Path(model)
    parts = [("model", ("model.onnx", path.read_bytes()))]
    parts += [("data", (f.relative_to(path.parent).as_posix(), f.read_bytes())) for f in files_of(path)]
    return parts


def _bytes(x: bytes | str | Path) -> bytes:
    return x if isinstance(x, bytes) else Path(x).read_bytes()
