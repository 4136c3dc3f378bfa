"""A fake engine, as a new engine module is written (app/clipbridge/engines/runtimes/*.py): one RUNTIME. It computes
with onnx.reference under the hood and says so in its settings. tests/test_fake_engine.py adds it with the one
registry line a plugin needs, CLIPBRIDGE_ENGINES=tests.fake_engine, and finds it in GET /v1/version,
`clipbridge --version`, `clipbridge diff` and POST /v1/models/diff. No line of app/ names it."""

from __future__ import annotations

from typing import Any

from clipbridge.engines.runtimes import onnx_reference
from clipbridge.engines.runtimes.base import Feeds, Runtime


class FakeSession:
    def __init__(self, model_bytes: bytes, precision: str) -> None:
        self.inner = onnx_reference.load(model_bytes, precision)

    def run(self, feeds: Feeds, kernels: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
        values, info = self.inner.run(feeds, kernels)
        return values, {**info, "settings": {"evaluator": "fake (onnx.reference)"}}


RUNTIME = Runtime("fake", "onnx", ("onnx",), "", frozenset({"diff"}), load=FakeSession)
