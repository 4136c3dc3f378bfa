"""translate_text's memo key (app/clipbridge/service/translate.py _memo_key): equal requests give one key, different ones
different keys, whatever their numbers or strings."""

from __future__ import annotations

from pydantic import BaseModel, TypeAdapter

from clipbridge.dialects.kit.common import Mode
from clipbridge.service.specs import Spec
from clipbridge.service.translate import _memo_key

SPEC = TypeAdapter(Spec)


def _onnx(**bounds: object) -> BaseModel:
    return SPEC.validate_python({"dialect": "onnx", "opset": 13, "elem_type": "FLOAT", **bounds})


def test_keys_tell_every_bound_apart() -> None:
    values = [None, 0, -0.0, 0.0, "nan", "inf", "-inf", 6, 6.5, "1e400", 2**70, "0.1"]
    keys = {_memo_key(_onnx(max=v), None, Mode.PRESERVE, True) for v in values}
    assert len(keys) == len(values) - 1  # 0 and 0.0 normalize to one value
    assert _memo_key(_onnx(max=6), None, Mode.PRESERVE, True) == _memo_key(_onnx(max=6), None, Mode.PRESERVE, True)


def test_keys_tell_targets_mode_and_artifacts_apart() -> None:
    s = _onnx(min=0, max=6)
    keys = {_memo_key(s, t, m, a) for t in (None, ["openvino"], ["directml"]) for m in Mode for a in (True, False)}
    assert len(keys) == 3 * len(Mode) * 2


class _Text(BaseModel):
    text: str


def test_a_string_the_encoder_refuses_still_has_its_own_key() -> None:
    """A lone surrogate (valid in a JSON string escape) makes the key json.dumps' text: distinct from every other."""
    a, b = _memo_key(_Text(text="\ud800"), None, Mode.PRESERVE, True), _memo_key(_Text(text="\ud801"), None,
                                                                                  Mode.PRESERVE, True)
    assert a != b and a != _memo_key(_Text(text="x"), None, Mode.PRESERVE, True)
