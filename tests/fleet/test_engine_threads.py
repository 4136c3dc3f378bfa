"""Fleet's workers run every engine on one unpinned thread (app/clipbridge/engines/threads.py). That must not change an answer:
on every model of the generated registry, for both precisions, the diff with the engines' defaults and with one
thread capture the same bytes in every tensor and write the same report; only the settings that say so differ."""

from __future__ import annotations

import numpy as np
import pytest

from clipbridge.diff import report, run
from clipbridge.engines import threads
from tests.fleet.conftest import COUNT
from tests.fleet.registry import BUILDERS, KINDS

THREAD_KEYS = {"intra_op_num_threads", "inference_num_threads", "cpu_pinning"}


def _diff(model: bytes, precision: str, n: int | None) -> tuple[dict, run.Runs]:
    threads.set_engine_threads(n)
    try:
        return report.diff(run.direct, model, None, run.Options(precision=precision))
    finally:
        threads.set_engine_threads(None)


def _without_threads(body: dict) -> dict:
    engines = [{**e, "settings": {k: v for k, v in e["settings"].items() if k not in THREAD_KEYS}}
               for e in body["engines"]]
    return {**body, "engines": engines}


def _same_bytes(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and
                                        a[k].tobytes() == b[k].tobytes() for k in a)


@pytest.mark.parametrize("precision", ["model", "deployed"])
@pytest.mark.parametrize("index", [pytest.param(i, id=f"{KINDS[i % len(KINDS)]}-{i}") for i in range(COUNT)])
def test_one_thread_gives_the_same_answer_as_the_defaults(index, precision):
    model = BUILDERS[KINDS[index % len(KINDS)]](1.0 + index / 1000)
    default_body, default_runs = _diff(model, precision, None)
    pinned_body, pinned_runs = _diff(model, precision, 1)
    assert _without_threads(pinned_body) == _without_threads(default_body)
    for engine in default_runs.values:
        assert _same_bytes(pinned_runs.values[engine], default_runs.values[engine]), engine
    settings = {e["name"]: e["settings"] for e in pinned_body["engines"]}
    assert settings["onnxruntime"]["intra_op_num_threads"] == 1
    assert (settings["openvino"]["inference_num_threads"], settings["openvino"]["cpu_pinning"]) == (1, False)


@pytest.mark.parametrize("n", [0, -1])
def test_a_thread_count_below_one_is_refused(n):
    with pytest.raises(ValueError, match="at least 1"):
        threads.set_engine_threads(n)
