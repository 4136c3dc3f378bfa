"""schemathesis against `clipbridge serve` over real sockets: what the in-process run cannot see (transport
errors, connections closed mid-request, the server's own framing of streamed and early answers). Same checks,
seed and case repair as tests/api/test_schemathesis.py, a smaller budget per operation and mode."""

from __future__ import annotations

import os
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis.generation.modes import GenerationMode

from tests.api.test_schemathesis import CHECKS, CONFIG, SEED, SKIP, describe, repaired
from tests.server.conftest import start_server, stop_server

CASES = int(os.environ.get("CLIPBRIDGE_LIVE_CASES", "25"))  # per operation, positive; 60% of it negative
BUDGET = {"positive": CASES, "negative": CASES * 3 // 5}
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


@pytest.fixture(scope="module")
def live():
    proc, port = start_server({})
    base = f"http://127.0.0.1:{port}"
    yield base, schemathesis.openapi.from_url(base + "/openapi.json", config=CONFIG)
    stop_server(proc)


def test_every_operation_over_real_sockets(live):
    base, schema = live
    failures: list[str] = []
    total = 0
    session = requests.Session()  # kept-alive connections, as real clients use them
    ops = [op.ok() for op in schema.get_all_operations() if op.ok().label not in SKIP]
    assert len(ops) >= 7
    for op in ops:
        for mode in MODES:
            @seed(SEED)
            @settings(max_examples=BUDGET[mode.value], database=None, deadline=None, phases=[Phase.generate],
                      suppress_health_check=list(HealthCheck), print_blob=False)
            @given(case=op.as_strategy(generation_mode=mode), data=st.data())
            def run(case: Any, data: st.DataObject) -> None:
                nonlocal total
                if mode is GenerationMode.POSITIVE:
                    case = repaired(case, data)
                total += 1
                try:
                    case.call_and_validate(base_url=base, session=session, checks=CHECKS, timeout=60)
                except Exception as exc:  # a failed check, or a transport error (reset, closed mid-request)
                    if len(failures) < 20:
                        failures.append(describe(case, exc))

            try:
                run()
            except Exception as exc:  # GETs without parameters have no negative cases
                if "Unable to satisfy assumptions" not in str(exc) or mode is GenerationMode.POSITIVE:
                    raise
    assert not failures, f"{len(failures)} failing cases (first shown):\n\n" + "\n\n".join(failures[:5])
    assert total >= 200, total
