"""/v1/translate's `include` switch and the serving path's cost cuts (issue 28): artifacts built only when the
response carries them, the default response unchanged, finding codes counted without parsing the response."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from clipbridge.core.errors import RejectedSpec
from clipbridge.dialects import registry
from clipbridge.dialects.kit.common import Mode
from clipbridge.dialects.openvino import emit as openvino_emit
from clipbridge.server.observability import finding_codes
from clipbridge.service.specs import Spec
from clipbridge.service.translate import translate_text

ALL = ["openvino", "directml", "stablehlo", "webnn", "tosa", "tensorrt", "tflite", "coreml", "pytorch"]
SOURCE = {"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", "shape": [1, 3, 8, 8], "min": 0, "max": 6.25}


@pytest.mark.parametrize("targets", [None, ALL], ids=["default-targets", "all-nine"])
def test_include_none_drops_only_the_artifacts(client, targets) -> None:
    body = {"source": SOURCE, **({"targets": targets} if targets else {})}
    full = client.post("/v1/translate", json=body)
    bare = client.post("/v1/translate", json={**body, "include": []})
    assert full.status_code == bare.status_code == 200
    f, b = full.json(), bare.json()
    assert any(t["artifacts"] for t in f["translations"])
    assert all(t["artifacts"] == {} for t in b["translations"])
    for t in f["translations"]:
        t["artifacts"] = {}
    assert f == b


def test_default_equals_include_artifacts(client) -> None:
    """The default is ["artifacts"]: clients that never send `include` get the same bytes as before."""
    a = client.post("/v1/translate", json={"source": {**SOURCE, "max": 6.5}})
    b = client.post("/v1/translate", json={"source": {**SOURCE, "max": 6.5}, "include": ["artifacts"]})
    assert a.status_code == 200 and a.content == b.content


def test_artifacts_are_not_built_when_left_out(client, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_a: object, **_k: object) -> None:
        raise AssertionError("build_ir ran for a response without artifacts")

    monkeypatch.setattr(openvino_emit, "build_ir", boom)
    r = client.post("/v1/translate", json={"source": {**SOURCE, "max": 6.75}, "targets": ["openvino"],
                                           "include": []})
    assert r.status_code == 200, r.text
    assert r.json()["translations"][0]["status"] in ("exact", "drift")


def test_unknown_include_names_the_field(client) -> None:
    r = client.post("/v1/translate", json={"source": SOURCE, "include": ["models"]})
    assert r.status_code == 422
    assert [e["loc"] for e in r.json()["errors"]] == ["include[0]"]
    assert "artifacts" in r.json()["errors"][0]["msg"]


def test_finding_codes_count_findings_only() -> None:
    """A "code":" inside a string (an artifact, a message) has escaped quotes and is not counted."""
    text = ('{"translations":[{"findings":[{"code":"bound-rounding","message":"x"},{"code":"nan-input"}],'
            '"artifacts":{"cpp":"s = \\"code\\":\\"fake\\";"}},{"findings":[{"code":"bound-rounding"}]}]}')
    assert finding_codes.__wrapped__(text) == (("bound-rounding", 2), ("nan-input", 1))


def test_answers_carry_the_codes_a_scan_finds() -> None:
    """translate_text's Answer carries its findings' codes; they equal a scan of its text, for every example source
    into every dialect, so the metric counts the same whether the codes are carried or scanned."""
    spec = TypeAdapter(Spec)
    for d in registry.DIALECTS.values():
        for example in d.examples.values():
            for artifacts in (True, False):
                try:
                    text = translate_text(spec.validate_python(example), list(registry.names()), Mode.PRESERVE,
                                          artifacts=artifacts)
                except RejectedSpec:
                    continue  # a refused example (TOSA's min > max) has no answer
                assert text.codes == finding_codes.__wrapped__(text), (d.name, example)  # type: ignore[attr-defined]


def test_client_sends_include_only_when_asked(client) -> None:
    """Client.translate(artifacts=False) sends include=[]; by default the request has no `include` at all."""
    from clipbridge.client import Client

    sent: list[dict] = []

    class Spy:
        def post(self, path: str, json: dict, params: object = None):  # noqa: A002 - httpx's own name
            sent.append(json)
            return client.post(path, json=json, params=params)

    cb = Client(http=Spy())  # type: ignore[arg-type]
    full, bare = cb.translate(SOURCE, ["openvino"]), cb.translate(SOURCE, ["openvino"], artifacts=False)
    assert "include" not in sent[0] and sent[1]["include"] == []
    assert full.translations[0].artifacts.ir_xml and bare.translations[0].artifacts.ir_xml is None
